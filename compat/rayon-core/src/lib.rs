//! # rayon-core on sumac
//!
//! A stand-in for [rayon-core](https://docs.rs/rayon-core/1.13.0) 1.13: the same public
//! paths, each a re-export of [sumac]'s item, so that a crate written against rayon-core
//! (`exr`, pulled in by `image`, is one) runs on sumac's pool. Patch it in together
//! with the `rayon` stand-in, and every crate of the program shares sumac's one global
//! pool:
//!
//! ```toml
//! [patch.crates-io]
//! rayon = { path = "/path/to/sumac/compat/rayon" }
//! rayon-core = { path = "/path/to/sumac/compat/rayon-core" }
//! ```
//!
//! ```
//! let (a, b) = rayon_core::join(|| 1 + 1, || 2 + 2);
//! assert_eq!((a, b), (2, 4));
//! // The same pool as sumac's own functions.
//! assert_eq!(rayon_core::current_num_threads(), sumac::current_num_threads());
//! ```
//!
//! The crate has no code of its own: an item of rayon-core that sumac did not have would
//! be missing here too, so using it fails to compile, naming the item. Pools built with
//! the default thread count read `SUMAC_NUM_THREADS`, then `RAYON_NUM_THREADS` (and
//! rayon-core's deprecated `RAYON_RS_NUM_CPUS`), then take one thread per core. What
//! sumac does differently from Rayon is listed in sumac's README.

pub use sumac::{broadcast, spawn_broadcast, BroadcastContext};
pub use sumac::{current_num_threads, max_num_threads};
pub use sumac::{current_thread_has_pending_tasks, current_thread_index};
pub use sumac::{in_place_scope, scope, Scope};
pub use sumac::{in_place_scope_fifo, scope_fifo, ScopeFifo};
pub use sumac::{join, join_context, FnContext};
pub use sumac::{spawn, spawn_fifo};
pub use sumac::{yield_local, yield_now, Yield};
pub use sumac::{ThreadBuilder, ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder};

// rayon-core's pre-1.0 configuration API, deprecated there as here.
#[allow(deprecated)]
pub use sumac::{initialize, Configuration};
