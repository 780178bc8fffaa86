//! # sumac: heartbeat-scheduled parallelism for Rust
//!
//! sumac runs fork-join code (`join`, `scope`, parallel iterators) on a pool of worker
//! threads, with Rayon's names and signatures. Unlike a work-stealing runtime, a fork
//! costs a few plain stores: the forked closure is recorded in the caller's stack frame
//! on a list that no other thread reads, and runs inline as an ordinary call unless a
//! *heartbeat* (every 100 µs by default) handed it to an idle worker. So you never tune
//! a sequential cutoff: parallel code on a tiny input runs about as fast as sequential
//! code, and on a large one it scales across the pool.
//!
//! ```
//! fn sum(values: &[u64]) -> u64 {
//!     if values.len() <= 1 {
//!         return values.iter().sum();
//!     }
//!     let (left, right) = values.split_at(values.len() / 2);
//!     let (a, b) = sumac::join(|| sum(left), || sum(right));
//!     a + b
//! }
//!
//! let values: Vec<u64> = (1..=1000).collect();
//! let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
//! assert_eq!(pool.install(|| sum(&values)), 500_500);
//! ```
//!
//! The scheduler's design is described at the top of the `registry` module's source
//! (`src/registry.rs`) and in `src/SCHEDULER.md`.
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

mod broadcast;
mod clock;
mod configuration;
mod heartbeat;
mod job;
mod job_list;
mod join;
mod latch;
mod park;
mod policy;
mod pool;
mod queues;
mod registration;
mod registry;
mod scope;
mod sleep;
mod spawn;
mod stats;
mod sync;
mod task;
mod thread_builder;
mod worker;
mod yielding;

pub mod channel;
pub mod graph;
pub mod iter;
pub mod prelude;
pub mod slice;
pub mod trace;

/// Parallel iterators over the parts of strings (`par_chars`, `par_lines`,
/// `par_split`, ...): the [`ParallelString`](str::ParallelString) trait, which the
/// prelude brings in, and the iterator types.
pub mod str {
    pub use crate::iter::string::{
        Bytes, CharIndices, Chars, EncodeUtf16, Lines, MatchIndices, Matches, ParallelString,
        Pattern, Split, SplitAsciiWhitespace, SplitInclusive, SplitTerminator, SplitWhitespace,
    };
}

/// Rayon's module paths for iterator types, so that code naming them (for example
/// `rayon::vec::IntoIter`) switches by changing the crate name. Each module re-exports
/// the type from [`iter`]; several of Rayon's distinct types are one sumac type here.
pub mod vec {
    pub use crate::iter::vec::{Drain, IntoIter, ParallelDrainRange};
}

/// Rayon's `rayon::array` path: arrays by value run through a `Vec`.
pub mod array {
    /// The iterator over an array of `N` items by value (`N` as in Rayon's type; the
    /// items run through a `Vec`).
    pub type IntoIter<T, const N: usize> = crate::iter::vec::IntoIter<T>;
}

/// Rayon's `rayon::option` path.
pub mod option {
    pub use crate::iter::option::IntoIter;
    /// The iterator over a reference to the value of an `Option`.
    pub type Iter<'a, T> = IntoIter<&'a T>;
    /// The iterator over a mutable reference to the value of an `Option`.
    pub type IterMut<'a, T> = IntoIter<&'a mut T>;
}

pub use crate::iter::{range, range_inclusive, result};

/// Rayon's `rayon::string` path.
pub mod string {
    pub use crate::iter::string::Drain;
}

/// Rayon's `rayon::collections` paths: each standard collection's iterator types. The
/// collections that cannot be split without walking them gather their items into a
/// `Vec` first, so their iterators are [`vec::IntoIter`]; the drains of a `VecDeque` and
/// of a `BinaryHeap` work in place.
pub mod collections {
    use crate::iter::vec::IntoIter as Gathered;
    use crate::iter::Chain;
    use crate::slice::{Iter as SliceIter, IterMut as SliceIterMut};

    /// `HashMap` iterators.
    pub mod hash_map {
        /// The iterator over the map by value (and of `par_drain`).
        pub type IntoIter<K, V> = super::Gathered<(K, V)>;
        /// The iterator over references to the entries.
        pub type Iter<'a, K, V> = super::Gathered<(&'a K, &'a V)>;
        /// The iterator over the entries with mutable references to the values.
        pub type IterMut<'a, K, V> = super::Gathered<(&'a K, &'a mut V)>;
        /// The iterator of `par_drain` (the lifetime, Rayon's borrow of the map, is
        /// unused: the items were gathered).
        pub type Drain<'a, K, V> = super::Gathered<(K, V)>;
    }

    /// `HashSet` iterators.
    pub mod hash_set {
        /// The iterator over the set by value.
        pub type IntoIter<T> = super::Gathered<T>;
        /// The iterator over references to the items.
        pub type Iter<'a, T> = super::Gathered<&'a T>;
        /// The iterator of `par_drain` (the lifetime, Rayon's borrow of the set, is
        /// unused: the items were gathered).
        pub type Drain<'a, T> = super::Gathered<T>;
    }

    /// `BTreeMap` iterators.
    pub mod btree_map {
        /// The iterator over the map by value.
        pub type IntoIter<K, V> = super::Gathered<(K, V)>;
        /// The iterator over references to the entries.
        pub type Iter<'a, K, V> = super::Gathered<(&'a K, &'a V)>;
        /// The iterator over the entries with mutable references to the values.
        pub type IterMut<'a, K, V> = super::Gathered<(&'a K, &'a mut V)>;
    }

    /// `BTreeSet` iterators.
    pub mod btree_set {
        /// The iterator over the set by value.
        pub type IntoIter<T> = super::Gathered<T>;
        /// The iterator over references to the items.
        pub type Iter<'a, T> = super::Gathered<&'a T>;
    }

    /// `BinaryHeap` iterators: by value the heap's buffer is iterated as a `Vec`, and
    /// `par_drain` drains it in place.
    pub mod binary_heap {
        /// The iterator over the heap by value.
        pub type IntoIter<T> = super::Gathered<T>;
        /// The iterator over references to the items.
        pub type Iter<'a, T> = super::Gathered<&'a T>;
        pub use crate::iter::binary_heap::Drain;
    }

    /// `LinkedList` iterators.
    pub mod linked_list {
        /// The iterator over the list by value.
        pub type IntoIter<T> = super::Gathered<T>;
        /// The iterator over references to the items.
        pub type Iter<'a, T> = super::Gathered<&'a T>;
        /// The iterator over mutable references to the items.
        pub type IterMut<'a, T> = super::Gathered<&'a mut T>;
    }

    /// `VecDeque` iterators: the reference iterators chain the deque's two slices, and
    /// `par_drain` drains a range in place.
    pub mod vec_deque {
        /// The iterator over the deque by value.
        pub type IntoIter<T> = super::Gathered<T>;
        /// The iterator over references to the items.
        pub type Iter<'a, T> = super::Chain<super::SliceIter<'a, T>, super::SliceIter<'a, T>>;
        /// The iterator over mutable references to the items.
        pub type IterMut<'a, T> =
            super::Chain<super::SliceIterMut<'a, T>, super::SliceIterMut<'a, T>>;
        pub use crate::iter::vec_deque::Drain;
    }
}

#[cfg(all(test, loom))]
mod loom_pool;
#[cfg(all(test, loom))]
mod loom_tests;

pub use crate::broadcast::{broadcast, spawn_broadcast, BroadcastContext};
#[allow(deprecated)]
pub use crate::configuration::{initialize, Configuration};
pub use crate::join::{join, join_context, FnContext};
#[doc(hidden)]
pub use crate::policy::Mechanism;
pub use crate::pool::{
    ThreadPool, ThreadPoolBuildError, ThreadPoolBuildErrorKind, ThreadPoolBuilder,
    DEFAULT_HEARTBEAT_INTERVAL,
};
pub use crate::scope::{in_place_scope, in_place_scope_fifo, scope, scope_fifo, Scope, ScopeFifo};
pub use crate::spawn::{spawn, spawn_fifo};
pub use crate::stats::{PoolStats, RampUp, WorkerStats};
pub use crate::task::{block_on, spawn_future, Task};
pub use crate::thread_builder::{CustomSpawn, DefaultSpawn, ThreadBuilder, ThreadSpawn};
pub use crate::yielding::{yield_local, yield_now, Yield};

use crate::worker::WorkerThread;

/// The number of worker threads of the current pool: the pool of the calling worker, or
/// the global pool when called from outside any pool.
///
/// ```
/// let pool = sumac::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
/// assert_eq!(pool.install(sumac::current_num_threads), 3);
/// ```
pub fn current_num_threads() -> usize {
    registry::with_current_registry(|registry| registry.num_threads())
}

/// The index of the calling thread in its pool (`0..current_num_threads()`), or `None`
/// on a thread that is not one of a pool's workers.
///
/// A thread outside every pool that calls into one (`install`, `join`, `scope`, a
/// parallel iterator) runs the call itself, taking part in the pool for its duration
/// (see [`ThreadPoolBuilder::callers_take_part`]); it is still not one of the pool's
/// threads, so this is `None` there, also inside `install`, while closures that other
/// workers run see their own index. Code that indexes per-thread state with this should
/// handle `None` (for example with a slot of its own for callers), or build its pool
/// with `callers_take_part(false)`.
///
/// ```
/// assert_eq!(sumac::current_thread_index(), None);
/// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// // `install` runs on the calling thread, which is not a worker.
/// assert_eq!(pool.install(sumac::current_thread_index), None);
/// // A spawned job runs on a worker.
/// let (sender, receiver) = std::sync::mpsc::channel();
/// pool.spawn(move || sender.send(sumac::current_thread_index()).unwrap());
/// assert!(receiver.recv().unwrap().is_some_and(|index| index < 2));
/// ```
pub fn current_thread_index() -> Option<usize> {
    // A thread made worker 0 by `use_current_thread` is worker 0 throughout.
    registration::with_current_worker(None, WorkerThread::public_index).flatten()
}

/// The most worker threads a sumac pool may have: a larger
/// [`num_threads`](ThreadPoolBuilder::num_threads) (or `SUMAC_NUM_THREADS`) is reduced to
/// this, as in Rayon. sumac's own structures set no tighter limit; the operating system's
/// limit on threads usually comes first.
///
/// ```
/// let pool = sumac::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
/// assert!(pool.current_num_threads() <= sumac::max_num_threads());
/// ```
pub fn max_num_threads() -> usize {
    MAX_NUM_THREADS
}

/// See [`max_num_threads`] (the same limit as Rayon's on 64-bit targets).
const MAX_NUM_THREADS: usize = 0xFFFF;

/// Whether the calling worker has jobs of its own waiting (recorded forks not yet
/// joined, spawned jobs, or a broadcast job addressed to it); `None` outside any pool.
/// See [`ThreadPool::current_thread_has_pending_tasks`].
///
/// ```
/// assert_eq!(sumac::current_thread_has_pending_tasks(), None);
/// let pool = sumac::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// pool.scope(|s| {
///     assert_eq!(sumac::current_thread_has_pending_tasks(), Some(false));
///     s.spawn(|_| {});
///     assert_eq!(sumac::current_thread_has_pending_tasks(), Some(true));
/// });
/// ```
pub fn current_thread_has_pending_tasks() -> Option<bool> {
    registration::with_current_worker(None, WorkerThread::has_pending_jobs)
}

/// The counters of the global pool (starting it if needed); see [`ThreadPool::stats`].
///
/// ```
/// sumac::join(|| (), || ());
/// assert!(sumac::global_stats().total().forks >= 1);
/// ```
pub fn global_stats() -> PoolStats {
    registry::global_registry().stats()
}

/// Runs `op` on a worker of the current pool (the global pool from outside any) for an
/// algorithm with a better sequential version: `op` learns whether the worker's pool has
/// a single thread, where nothing could ever run in parallel (unless the pool forces
/// splits, a testing aid).
pub(crate) fn in_worker_single_aware<OP, R>(op: OP) -> R
where
    OP: FnOnce(bool) -> R + Send,
    R: Send,
{
    registry::in_worker(|worker| op(worker.solo && worker.registry().forced_splits == 0))
}
