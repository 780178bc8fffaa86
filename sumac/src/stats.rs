//! Per-worker counters, readable from any thread while the pool runs.
//!
//! Each counter is written only by its own worker, with a relaxed load and a relaxed
//! store (no read-modify-write, so no locked instruction on the fork path), and lives in
//! the worker's own cache line.

use std::ops::Sub;
use std::sync::atomic::{AtomicU64, Ordering};

/// What one worker did since its pool started.
///
/// ```
/// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// pool.install(|| sumac::join(|| 1, || 2));
/// let total = pool.stats().total();
/// assert!(total.forks >= 1);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct WorkerStats {
    /// `join`s executed on this worker (each pushes one fork).
    pub forks: u64,
    /// Heartbeats (timer ticks or idle workers' requests) this worker answered.
    pub heartbeats: u64,
    /// Forks and spawned jobs this worker handed to the shared queue.
    pub promotions: u64,
    /// Jobs this worker ran that came from the shared queue (promoted by another worker,
    /// or injected from outside the pool).
    pub shared_jobs_run: u64,
    /// Times this worker went to sleep for lack of work.
    pub sleeps: u64,
    /// Times this worker was woken up.
    pub wakeups: u64,
}

impl Sub for WorkerStats {
    type Output = WorkerStats;

    /// The counts between two snapshots (`later - earlier`), saturating at zero.
    fn sub(self, earlier: WorkerStats) -> WorkerStats {
        WorkerStats {
            forks: self.forks.saturating_sub(earlier.forks),
            heartbeats: self.heartbeats.saturating_sub(earlier.heartbeats),
            promotions: self.promotions.saturating_sub(earlier.promotions),
            shared_jobs_run: self.shared_jobs_run.saturating_sub(earlier.shared_jobs_run),
            sleeps: self.sleeps.saturating_sub(earlier.sleeps),
            wakeups: self.wakeups.saturating_sub(earlier.wakeups),
        }
    }
}

impl WorkerStats {
    fn add(self, other: WorkerStats) -> WorkerStats {
        WorkerStats {
            forks: self.forks + other.forks,
            heartbeats: self.heartbeats + other.heartbeats,
            promotions: self.promotions + other.promotions,
            shared_jobs_run: self.shared_jobs_run + other.shared_jobs_run,
            sleeps: self.sleeps + other.sleeps,
            wakeups: self.wakeups + other.wakeups,
        }
    }
}

/// A snapshot of every worker's counters, indexed by worker.
///
/// ```
/// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// let before = pool.stats();
/// pool.install(|| sumac::join(|| (), || ()));
/// let delta = pool.stats().since(&before);
/// assert_eq!(delta.workers.len(), 2);
/// assert_eq!(delta.total().forks, 1);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// One entry per worker, in worker-index order.
    pub workers: Vec<WorkerStats>,
}

impl PoolStats {
    /// The sum over all workers.
    pub fn total(&self) -> WorkerStats {
        self.workers
            .iter()
            .fold(WorkerStats::default(), |sum, worker| sum.add(*worker))
    }

    /// The counts between `earlier` and this snapshot, per worker.
    pub fn since(&self, earlier: &PoolStats) -> PoolStats {
        let workers = self
            .workers
            .iter()
            .zip(&earlier.workers)
            .map(|(now, then)| *now - *then);
        PoolStats {
            workers: workers.collect(),
        }
    }
}

/// Number of fork counters per worker (a power of two).
const FORK_STRIPES: usize = 16;

/// A worker's fork count, striped over several counters chosen by stack depth.
///
/// Incrementing one memory counter on every fork would chain every fork to the previous
/// one through store-to-load forwarding (about five cycles each), which is most of the
/// cost of a fork when the forked work is a few instructions. Forks at different stack
/// depths bump different counters, so consecutive forks rarely touch the same one.
#[derive(Default)]
pub(crate) struct ForkCounter {
    stripes: [AtomicU64; FORK_STRIPES],
}

impl ForkCounter {
    /// Counts one fork whose frame is at address `frame` (only the address is used).
    #[inline(always)]
    pub(crate) fn count(&self, frame: usize) {
        // Frames of nested joins are at least a few dozen bytes apart.
        bump(&self.stripes[(frame >> 6) % FORK_STRIPES], 1);
    }

    fn total(&self) -> u64 {
        self.stripes
            .iter()
            .map(|stripe| stripe.load(Ordering::Relaxed))
            .fold(0, u64::wrapping_add)
    }
}

/// The live counters of one worker.
#[derive(Default)]
pub(crate) struct WorkerCounters {
    pub(crate) forks: ForkCounter,
    pub(crate) heartbeats: AtomicU64,
    pub(crate) promotions: AtomicU64,
    pub(crate) shared_jobs_run: AtomicU64,
    pub(crate) sleeps: AtomicU64,
    pub(crate) wakeups: AtomicU64,
}

/// Adds `n` to a counter that only the calling worker writes.
#[inline(always)]
pub(crate) fn bump(counter: &AtomicU64, n: u64) {
    counter.store(
        counter.load(Ordering::Relaxed).wrapping_add(n),
        Ordering::Relaxed,
    );
}

impl WorkerCounters {
    pub(crate) fn snapshot(&self) -> WorkerStats {
        WorkerStats {
            forks: self.forks.total(),
            heartbeats: self.heartbeats.load(Ordering::Relaxed),
            promotions: self.promotions.load(Ordering::Relaxed),
            shared_jobs_run: self.shared_jobs_run.load(Ordering::Relaxed),
            sleeps: self.sleeps.load(Ordering::Relaxed),
            wakeups: self.wakeups.load(Ordering::Relaxed),
        }
    }
}
