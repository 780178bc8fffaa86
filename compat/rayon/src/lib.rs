//! # Rayon on sumac
//!
//! A stand-in for [Rayon](https://docs.rs/rayon/1.12.0) 1.12: the same public paths
//! (`rayon::prelude`, `rayon::iter`, `rayon::iter::plumbing`, `rayon::slice`,
//! `rayon::str`, `rayon::collections::*`, `rayon::ThreadPoolBuilder`, ...), each a
//! re-export of [sumac]'s item, so that crates written against Rayon run on sumac
//! unchanged. Patch it in together with the `rayon-core` stand-in, and every crate of
//! the program shares sumac's one global pool:
//!
//! ```toml
//! [patch.crates-io]
//! rayon = { path = "/path/to/sumac/compat/rayon" }
//! rayon-core = { path = "/path/to/sumac/compat/rayon-core" }
//! ```
//!
//! ```
//! use rayon::prelude::*;
//!
//! let squares: Vec<u64> = (0..1000u64).into_par_iter().map(|x| x * x).collect();
//! assert_eq!(squares[999], 998_001);
//! // One pool, whichever crate name the code uses.
//! assert_eq!(rayon::current_num_threads(), rayon_core::current_num_threads());
//! assert_eq!(rayon::current_num_threads(), sumac::current_num_threads());
//! ```
//!
//! The crate has no code of its own: an item of Rayon that sumac did not have would be
//! missing here too, so using it fails to compile, naming the item. As in Rayon, the
//! pool API is rayon-core's, re-exported. The crate root holds Rayon's names only, so
//! sumac's additions there are not reachable through it:
//!
//! ```compile_fail,E0425
//! let stats = rayon::global_stats(); // error: cannot find function `global_stats`
//! ```

pub use sumac::array;
pub use sumac::collections;
pub use sumac::iter;
pub use sumac::option;
pub use sumac::prelude;
pub use sumac::range;
pub use sumac::range_inclusive;
pub use sumac::result;
pub use sumac::slice;
pub use sumac::str;
pub use sumac::string;
pub use sumac::vec;

pub use rayon_core::FnContext;
pub use rayon_core::ThreadBuilder;
pub use rayon_core::ThreadPool;
pub use rayon_core::ThreadPoolBuildError;
pub use rayon_core::ThreadPoolBuilder;
pub use rayon_core::{broadcast, spawn_broadcast, BroadcastContext};
pub use rayon_core::{current_num_threads, current_thread_index, max_num_threads};
pub use rayon_core::{in_place_scope, scope, Scope};
pub use rayon_core::{in_place_scope_fifo, scope_fifo, ScopeFifo};
pub use rayon_core::{join, join_context};
pub use rayon_core::{spawn, spawn_fifo};
pub use rayon_core::{yield_local, yield_now, Yield};
