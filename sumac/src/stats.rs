//! Per-worker counters, readable from any thread while the pool runs.
//!
//! Each counter is written only by its own worker, with a relaxed load and a relaxed
//! store (no read-modify-write, so no locked instruction on the fork path). The fork
//! count lives in the worker's `WorkerThread`, the others in the worker's own cache line
//! of the registry.

use std::ops::Sub;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

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
    /// Times this worker went to sleep for lack of work (counted as the sleep starts).
    pub sleeps: u64,
    /// Times this worker was woken up (counted as the sleep ends): one less than
    /// `sleeps` while the worker is asleep, else equal.
    pub wakeups: u64,
    /// Tasks of [task graphs](crate::graph) this worker ran (counted when its runner job
    /// ends; tasks run outside the pool with `execute_one` are not counted here).
    pub graph_tasks: u64,
    /// Heartbeat ticks this member made while it spun for work, in the heartbeat
    /// thread's stead (the heartbeat thread's own ticks are not counted).
    pub ticks: u64,
}

impl Sub for WorkerStats {
    type Output = WorkerStats;

    /// The counts between two snapshots (`later - earlier`), saturating at zero.
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// let before = pool.stats().total();
    /// pool.install(|| sumac::join(|| (), || ()));
    /// let after = pool.stats().total();
    /// assert_eq!((after - before).forks, 1);
    /// assert_eq!((before - after).forks, 0); // the wrong way round: zero, no overflow
    /// ```
    fn sub(self, earlier: WorkerStats) -> WorkerStats {
        WorkerStats {
            forks: self.forks.saturating_sub(earlier.forks),
            heartbeats: self.heartbeats.saturating_sub(earlier.heartbeats),
            promotions: self.promotions.saturating_sub(earlier.promotions),
            shared_jobs_run: self.shared_jobs_run.saturating_sub(earlier.shared_jobs_run),
            sleeps: self.sleeps.saturating_sub(earlier.sleeps),
            wakeups: self.wakeups.saturating_sub(earlier.wakeups),
            graph_tasks: self.graph_tasks.saturating_sub(earlier.graph_tasks),
            ticks: self.ticks.saturating_sub(earlier.ticks),
        }
    }
}

impl std::ops::Add for WorkerStats {
    type Output = WorkerStats;

    /// The counts of both (wrapping on overflow).
    fn add(self, other: WorkerStats) -> WorkerStats {
        WorkerStats {
            forks: self.forks.wrapping_add(other.forks),
            heartbeats: self.heartbeats.wrapping_add(other.heartbeats),
            promotions: self.promotions.wrapping_add(other.promotions),
            shared_jobs_run: self.shared_jobs_run.wrapping_add(other.shared_jobs_run),
            sleeps: self.sleeps.wrapping_add(other.sleeps),
            wakeups: self.wakeups.wrapping_add(other.wakeups),
            graph_tasks: self.graph_tasks.wrapping_add(other.graph_tasks),
            ticks: self.ticks.wrapping_add(other.ticks),
        }
    }
}

/// A snapshot of every worker's counters, indexed by worker, and of the threads outside
/// the pool that took part in calls into it (each runs its call on its own stack, as a
/// member of the pool: see `ThreadPool::install`).
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
    /// The sum over the calls made from threads outside the pool.
    pub callers: WorkerStats,
}

impl PoolStats {
    /// The sum over all workers and outside callers.
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// // One `join` on each worker.
    /// pool.broadcast(|_| sumac::join(|| (), || ()));
    /// let stats = pool.stats();
    /// let forks: Vec<u64> = stats.workers.iter().map(|w| w.forks).collect();
    /// assert_eq!(forks, [1, 1]);
    /// assert_eq!(stats.total().forks, 2);
    /// ```
    pub fn total(&self) -> WorkerStats {
        self.workers
            .iter()
            .fold(self.callers, |sum, worker| sum + *worker)
    }

    /// The counts between `earlier` and this snapshot, per worker. Both should come from
    /// the same pool (whose number of workers never changes); given snapshots of
    /// different lengths, the result covers only the workers both have.
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// pool.install(|| sumac::join(|| (), || ()));
    /// let before = pool.stats();
    /// pool.install(|| {
    ///     sumac::join(|| (), || ());
    ///     sumac::join(|| (), || ());
    /// });
    /// let after = pool.stats();
    /// assert_eq!(after.total().forks, 3);
    /// let delta = after.since(&before);
    /// assert_eq!(delta.total().forks, 2);
    /// // The second `install` ran on this thread, which took part in the pool.
    /// assert_eq!(delta.callers.forks, 2);
    /// assert_eq!(delta.total().shared_jobs_run, 0);
    /// ```
    pub fn since(&self, earlier: &PoolStats) -> PoolStats {
        let workers = self
            .workers
            .iter()
            .zip(&earlier.workers)
            .map(|(now, then)| *now - *then);
        PoolStats {
            workers: workers.collect(),
            callers: self.callers - earlier.callers,
        }
    }
}

/// Where a worker's fork count lives, so that any thread can read it.
///
/// The count itself is a field of the worker's `WorkerThread`, on the worker thread's
/// own stack beside the fields every fork reads anyway, in a cache line of its own (a
/// store there right before the fork path loads the worker's other fields from the same
/// line measured slower). Counting in the registry's per-worker block instead would cost
/// a dependent pointer load and a store to another cache line on every fork (see
/// `bench/DECISIONS.md`). While the worker runs, this holds a pointer to its counter;
/// when it exits, the final count is folded into `retired`.
#[derive(Default)]
pub(crate) struct ForkCounter {
    site: Mutex<ForkCounterSite>,
    /// Forks counted by members no longer running: added by a caller leaving its call
    /// (a seat's counter), or under the lock by a worker unpublishing its counter (so
    /// that [`total`](ForkCounter::total) never sees a count both live and retired).
    retired: AtomicU64,
}

#[derive(Default)]
struct ForkCounterSite {
    /// The running worker's counter, if it is running.
    live: Option<NonNull<AtomicU64>>,
}

// SAFETY: `live` is only dereferenced while the lock is held, and the worker removes it
// (under the same lock) before its counter goes away; the counter is an atomic, so
// reading it from another thread is sound.
unsafe impl Send for ForkCounterSite {}

impl ForkCounter {
    /// Publishes the running worker's counter until the returned guard is dropped. The
    /// guard must be dropped before `counter` is.
    pub(crate) fn attach<'a>(&'a self, counter: &'a AtomicU64) -> ForkCounterAttachment<'a> {
        let mut site = self.lock();
        debug_assert!(
            site.live.is_none(),
            "a worker's fork counter attached twice"
        );
        site.live = Some(NonNull::from(counter));
        ForkCounterAttachment {
            home: self,
            counter,
        }
    }

    /// Adds `forks` counted by a member that never published its counter (a caller
    /// taking part in one call). Only the seat's holder calls it, one at a time (the
    /// seat's claim orders them), and no worker's counter lives here: a plain add.
    pub(crate) fn retire(&self, forks: u64) {
        let retired = self.retired.load(Ordering::Relaxed);
        self.retired
            .store(retired.wrapping_add(forks), Ordering::Relaxed);
    }

    /// Forks counted so far (by the running worker and before it exited).
    pub(crate) fn total(&self) -> u64 {
        let site = self.lock();
        // SAFETY: a published counter stays alive until its attachment is dropped, which
        // needs this lock to unpublish it first.
        let live = site
            .live
            .map_or(0, |c| unsafe { c.as_ref() }.load(Ordering::Relaxed));
        self.retired.load(Ordering::Relaxed).wrapping_add(live)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ForkCounterSite> {
        self.site.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Keeps a worker's fork counter published (see [`ForkCounter::attach`]).
pub(crate) struct ForkCounterAttachment<'a> {
    home: &'a ForkCounter,
    counter: &'a AtomicU64,
}

impl Drop for ForkCounterAttachment<'_> {
    fn drop(&mut self) {
        let mut site = self.home.lock();
        self.home
            .retired
            .fetch_add(self.counter.load(Ordering::Relaxed), Ordering::Relaxed);
        site.live = None;
    }
}

/// The live counters of one worker.
#[derive(Default)]
pub(crate) struct WorkerCounters {
    pub(crate) forks: ForkCounter,
    pub(crate) heartbeats: AtomicU64,
    pub(crate) promotions: AtomicU64,
    /// Jobs the heartbeat thread took from the worker's rescue offer (written by the
    /// heartbeat thread only; reported as promotions).
    pub(crate) rescues: AtomicU64,
    pub(crate) shared_jobs_run: AtomicU64,
    pub(crate) sleeps: AtomicU64,
    pub(crate) wakeups: AtomicU64,
    /// Task-graph tasks run by this worker's runner jobs.
    pub(crate) graph_tasks: AtomicU64,
    /// Ticks made while spinning for work.
    pub(crate) ticks: AtomicU64,
    /// When this worker first started work handed to it during the measured call (see
    /// [`MeasuredCall`]): a [`MeasuredCall`] reading, or an older one (or 0) if it has
    /// not started any since the call began.
    pub(crate) first_work: AtomicU64,
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
            promotions: self
                .promotions
                .load(Ordering::Relaxed)
                .wrapping_add(self.rescues.load(Ordering::Relaxed)),
            shared_jobs_run: self.shared_jobs_run.load(Ordering::Relaxed),
            sleeps: self.sleeps.load(Ordering::Relaxed),
            wakeups: self.wakeups.load(Ordering::Relaxed),
            graph_tasks: self.graph_tasks.load(Ordering::Relaxed),
            ticks: self.ticks.load(Ordering::Relaxed),
        }
    }
}

/// How one measured call spread over its pool's workers (see
/// [`ThreadPool::measure_ramp_up`](crate::ThreadPool::measure_ramp_up)).
///
/// ```
/// let pool = sumac::ThreadPoolBuilder::new()
///     .num_threads(1)
///     .callers_take_part(false)
///     .build()
///     .unwrap();
/// let (sum, ramp_up) = pool.measure_ramp_up(|| pool.install(|| (0..100u64).sum::<u64>()));
/// assert_eq!(sum, 4950);
/// // A one-thread pool never cuts work; its worker took the call from this thread.
/// assert_eq!(ramp_up.pieces, 1);
/// assert_eq!(ramp_up.busy_workers(), 1);
/// assert!(ramp_up.all_busy_after().unwrap() <= ramp_up.duration);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RampUp {
    /// How long the call took.
    pub duration: Duration,
    /// Per worker, in worker-index order: how long after the call started the worker
    /// first started work handed to it during the call (a fork or loop piece shared with
    /// it, the call itself injected from outside the pool), `Duration::ZERO` for the
    /// worker that made the call, and `None` for a worker that ran no part of it. (A
    /// thread outside the pool that runs its call on its own stack is not a worker and
    /// has no entry.)
    pub first_work: Vec<Option<Duration>>,
    /// How many pieces the call was cut into: one, plus the jobs its members handed to
    /// the shared queue during the call (forks and loop pieces shared at a heartbeat or
    /// rescued, spawned jobs).
    pub pieces: u64,
    /// Whether the calling thread, outside the pool, took part in the call on its own
    /// stack, holding one of the pool's places once the call's work spread (see
    /// [`ThreadPoolBuilder::callers_take_part`](crate::ThreadPoolBuilder::callers_take_part)):
    /// then every place is busy once all workers but one are.
    pub caller_held_a_place: bool,
}

impl RampUp {
    /// How many workers ran part of the call.
    pub fn busy_workers(&self) -> usize {
        self.first_work.iter().flatten().count()
    }

    /// How long after the call started every place of the pool was busy, if it was:
    /// when the last worker got its first work, or, if the caller held a place, the
    /// last but one.
    pub fn all_busy_after(&self) -> Option<Duration> {
        let needed = self.first_work.len() - usize::from(self.caller_held_a_place);
        let mut firsts: Vec<Duration> = self.first_work.iter().flatten().copied().collect();
        if firsts.len() < needed {
            return None;
        }
        firsts.sort_unstable();
        Some(
            needed
                .checked_sub(1)
                .map_or(Duration::ZERO, |last| firsts[last]),
        )
    }
}

/// The pool's measured call, if one runs (see [`RampUp`]): when it started, which the
/// workers compare with when they last noted starting handed work. One measured call
/// at a time: work of other calls running meanwhile counts as the measured call's.
pub(crate) struct MeasuredCall {
    origin: Instant,
    /// When the running measured call started (a reading of [`Self::now`]); 0: none.
    started: AtomicU64,
}

impl MeasuredCall {
    pub(crate) fn new() -> MeasuredCall {
        MeasuredCall {
            origin: Instant::now(),
            started: AtomicU64::new(0),
        }
    }

    /// Nanoseconds since `origin`, plus one (so that no reading is 0).
    fn now(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_nanos())
            .unwrap_or(u64::MAX - 1)
            .saturating_add(1)
    }

    /// Starts a measured call: returns its start, to pass to [`Self::first_work`].
    pub(crate) fn start(&self) -> u64 {
        let started = self.now();
        self.started.store(started, Ordering::Relaxed);
        started
    }

    /// Ends the measured call.
    pub(crate) fn end(&self) {
        self.started.store(0, Ordering::Relaxed);
    }

    /// A worker starts work handed to it: notes when, if a measured call runs and the
    /// worker noted nothing since it started (`first_work` is the worker's own
    /// [`WorkerCounters::first_work`]).
    #[inline]
    pub(crate) fn note_work_started(&self, first_work: &AtomicU64) {
        let started = self.started.load(Ordering::Relaxed);
        if started != 0 && first_work.load(Ordering::Relaxed) < started {
            first_work.store(self.now().max(started), Ordering::Relaxed);
        }
    }

    /// How long after the call that started at `started` a worker whose
    /// [`WorkerCounters::first_work`] is `first_work` first started handed work, if it
    /// did. Read once the call returned: its work happened before.
    pub(crate) fn first_work(&self, started: u64, first_work: &AtomicU64) -> Option<Duration> {
        let at = first_work.load(Ordering::Relaxed);
        (at >= started).then(|| Duration::from_nanos(at - started))
    }
}
