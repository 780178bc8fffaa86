//! The scheduler: worker threads, the heartbeat, promotion, sleeping and waking.
//!
//! # How sumac schedules (the whole story)
//!
//! A pool has `n` worker threads, one [`SharedQueue`] and, when `n > 1`, one heartbeat
//! thread.
//!
//! **Forks are private.** `join(a, b)` on a worker builds a [`JoinFrame`] for `b` in its
//! own stack frame and pushes it on the worker's [`JobList`]: a few plain stores, no
//! atomic read-modify-write, no allocation, no lock. It then polls the worker's
//! heartbeat flag (one relaxed load and a cold branch), runs `a`, and if the frame is
//! still on the list, unlinks it and calls `b` inline as an ordinary, inlinable call.
//! Nobody but the owner ever looks at the list. Since heartbeats share the *oldest*
//! forks, a worker records a fork only while fewer than `recorded_forks_limit` wait on
//! its list (3, or log2 of the pool's size above 8 threads; `MAX_RECORDED_BIG_FORKS`, 8,
//! for a loop half known to be big); other forks, and every fork of a one-thread pool,
//! are two direct calls.
//! Until a heartbeat arrives, a fork joined off the list also gives up its slot, so a
//! computation shorter than an interval (whose forks could never be shared) records
//! only the top three (or so) forks of each subtree it enters with an empty list.
//!
//! **Heartbeats share the oldest fork.** The heartbeat thread sets every busy worker's
//! flag once per interval (default 100 µs) — but only while some worker is idle and some
//! is busy; otherwise it parks, so an idle pool burns no CPU. A worker that sees its flag
//! hands the *oldest* jobs of its list (the biggest pieces of work) to the shared queue,
//! as many as there are idle workers without a queued job, and wakes a sleeper. The
//! promotion costs a lock and maybe a system call, paid at most about once per interval.
//!
//! **Idle workers ask.** A worker that runs out of work raises the heartbeat flag of
//! every worker at once instead of waiting for the next tick, spins for up to one
//! interval watching the queue (renewing the request every eighth of an interval, once
//! for the whole pool), then sleeps.
//!
//! **Only old (or known-big) forks are shared.** Every fork is stamped with the pool's
//! heartbeat tick count; a fork is shared only after two ticks, i.e. after it waited
//! through a whole interval, so work shorter than a heartbeat is never split (a stolen
//! piece of a tiny, cache-hot input costs more than it saves). A parallel loop that has
//! timed its iterations marks a half worth sharing at once (`SHARE_AT_ONCE`). A worker
//! that runs a promoted job stamps the first forks it records there as old (`LONG_AGO`):
//! they are the top of a piece that was itself big enough to wait a whole interval, so
//! they may be passed on at the next request. Spawned jobs are old from the start. Sharing
//! forks of unknown size is also rate-limited: once per ¾ interval per worker and once
//! per `interval / busy workers` per pool.
//!
//! **Forks behind long leaves are rescued.** Polls happen only at forks and between loop
//! blocks, so a fork made before code that runs long without forking would wait on the
//! list. Every recorded fork is therefore also offered in one of the worker's
//! [`RescueSlot`]s; when the worker's counts of forks and handled heartbeats and its
//! offers have not changed for a tick and workers are idle, the heartbeat thread claims
//! the offered forks (one per idle worker) and queues them. The owner withdraws an offer
//! before it removes the fork; whichever swap comes first gets it. Spawned jobs go straight
//! to the shared queue (except in a one-thread pool), since a claimed job must outlive its
//! place on the owner's list.
//!
//! **Joins whose fork was shared.** If `b` was promoted, the owner first tries to take it
//! back out of the queue (nobody started it: run it inline). Otherwise it waits for the
//! taker to finish, running its own older jobs and queued jobs meanwhile, and sleeping if
//! there are none; the taker wakes it. The owner never returns or unwinds before the
//! taker has let go of the frame (see the state machine in [`crate::job`]).
//!
//! **Idle accounting.** `idle` counts the workers in [`WorkerThread::wait_until`]'s idle
//! phase (spinning or asleep). Promotion only happens when `idle` exceeds the number of
//! queued jobs, so a fully busy pool never pays for sharing.

use std::cell::Cell;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use crate::job::{
    waited_long_enough, JobHeader, JobRef, PanicPayload, StackJob, LONG_AGO, NOT_A_FORK,
    SHARE_AT_ONCE, TAKEN,
};
use crate::job_list::{JobList, RescueSlot};
use crate::join::{recorded_forks_limit, MAX_RECORDED_BIG_FORKS};
use crate::latch::{FinishCount, LockLatch, WorkerLatch};
use crate::pool::{PanicHandler, ThreadHandler, ThreadPoolBuildError, ThreadPoolBuilder};
use crate::shared_queue::SharedQueue;
use crate::stats::{bump, PoolStats, WorkerCounters};
use crate::thread_builder::{ThreadBuilder, ThreadSpawn};

/// Rescue slots per worker: one for each fork it can have recorded at once (a list in a
/// pool of several workers holds only recorded join forks, at most
/// `MAX_RECORDED_BIG_FORKS`), so that every recorded fork is on offer.
const RESCUE_SLOTS: usize = MAX_RECORDED_BIG_FORKS;

/// Spin rounds between two clock reads while an idle worker watches the queue.
const SPIN_ROUNDS: u32 = 64;

/// The part of a worker that other threads touch: its heartbeat flag and its counters,
/// on a cache line of their own.
pub(crate) struct WorkerShared {
    pub(crate) heartbeat: AtomicBool,
    /// The forks this worker offers to the heartbeat thread in case it stops polling:
    /// one slot per fork it can have recorded at once, so every recorded fork is on
    /// offer.
    pub(crate) rescue: [RescueSlot; RESCUE_SLOTS],
    pub(crate) counters: WorkerCounters,
    #[cfg(feature = "trace")]
    pub(crate) trace: crate::trace::TraceBuffer,
}

/// The heartbeat thread's parking spot.
struct HeartbeatPark {
    parked: AtomicBool,
    lock: Mutex<()>,
    signal: Condvar,
}

impl HeartbeatPark {
    /// Wakes the heartbeat thread if it waits (taking the lock it checks its condition
    /// under, so that the wake-up cannot fall between its check and its wait).
    fn notify(&self) {
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        self.signal.notify_all();
    }
}

/// A pool's shared state.
pub(crate) struct Registry {
    pub(crate) queue: SharedQueue,
    workers: Box<[CachePadded<WorkerShared>]>,
    /// Workers in the idle phase (spinning or asleep).
    idle: CachePadded<AtomicUsize>,
    /// When an idle worker last raised the others' flags (ns since `epoch`).
    last_request_ns: CachePadded<AtomicU64>,
    /// When a worker last promoted jobs (ns since `epoch`).
    last_promotion_ns: CachePadded<AtomicU64>,
    /// Heartbeat ticks so far (written by the heartbeat thread only).
    epoch_ticks: CachePadded<AtomicU64>,
    epoch: Instant,
    terminating: AtomicBool,
    heartbeat_interval: Duration,
    heartbeat_park: HeartbeatPark,
    panic_handler: Option<Box<PanicHandler>>,
    start_handler: Option<Box<ThreadHandler>>,
    exit_handler: Option<Box<ThreadHandler>>,
    /// The threads the pool joins when dropped: workers it started itself
    /// ([`DefaultSpawn`](crate::DefaultSpawn)) and the heartbeat thread.
    threads: Mutex<Vec<JoinHandle<()>>>,
    /// [`ThreadBuilder`]s handed out and not yet dropped: workers that have not yet
    /// returned (or never will start); dropping the pool waits for zero.
    unfinished_workers: FinishCount,
    /// One for the pool itself until [`terminate`](Self::terminate), plus one for each
    /// spawned job (`spawn`, `spawn_fifo`, `spawn_broadcast`) not yet finished. The
    /// workers exit only once it is zero: a spawned job still running after the pool was
    /// dropped may queue work, or address a (`spawn_`)`broadcast` job to every worker.
    /// Whoever takes it to zero wakes every worker. Counting the pool itself (as Rayon's
    /// terminate count does) means one variable decides, with no second flag to read
    /// in the right order.
    live_spawns: CachePadded<AtomicUsize>,
    /// Per worker: whether jobs addressed to it are left out of `live_spawns`, because
    /// it may never run them. Set from the start for a worker 0 registered by
    /// `use_current_thread` (it runs no worker loop, and never runs them if the pool is
    /// dropped on another thread), and for a worker whose `ThreadBuilder` was dropped
    /// without running.
    inbox_uncounted: Box<[AtomicBool]>,
}

thread_local! {
    static WORKER_THREAD: Cell<*const WorkerThread> = const { Cell::new(ptr::null()) };
}

/// A worker thread's own state; lives on the worker's stack, reachable through a
/// thread-local pointer.
pub(crate) struct WorkerThread {
    /// The pool has a single worker: nobody could ever take a fork, so `join` calls both
    /// closures directly.
    pub(crate) solo: bool,
    /// How many forks of unknown or measured size may wait on `jobs`
    /// ([`recorded_forks_limit`] of the pool's size: 0 in a one-thread pool).
    fork_limit: usize,
    /// `join` records a fork only while fewer jobs than this wait on `jobs`: at most
    /// `fork_limit` (hence always 0 in a one-thread pool), so that the fork path tests
    /// one number for every reason to call the closures directly. Between heartbeats it also
    /// shrinks as recorded forks are joined (see [`WorkerThread::joined_recorded_fork`]).
    record_limit: Cell<usize>,
    /// A heartbeat (or request) arrived since this worker's list was last emptied by a
    /// join: the work under way has lasted, and every joined fork's slot is refilled.
    recording_lasts: Cell<bool>,
    pub(crate) jobs: JobList,
    /// The jobs offered in `WorkerShared::rescue`, slot by slot (as this worker last
    /// left them: the heartbeat thread may have claimed some since).
    offered: [Cell<Option<NonNull<JobHeader>>>; RESCUE_SLOTS],
    /// How many more forks get an old stamp (the top of a promoted job, see `run_shared`).
    old_forks_left: Cell<u8>,
    /// `join`s run on this worker, published through `WorkerCounters::forks` (see
    /// `ForkCounter` for why the count lives here, in a cache line of its own).
    forks: CachePadded<AtomicU64>,
    shared: NonNull<WorkerShared>,
    index: usize,
    registry: Arc<Registry>,
    last_promotion: Cell<Instant>,
    promotion_gap: Duration,
}

impl Registry {
    /// Builds the registry and starts its threads.
    pub(crate) fn new<S: ThreadSpawn>(
        builder: ThreadPoolBuilder<S>,
    ) -> Result<Arc<Registry>, ThreadPoolBuildError> {
        let (config, mut spawner) = builder.into_config()?;
        let num_threads = config.num_threads;
        let workers = (0..num_threads)
            .map(|_| {
                CachePadded::new(WorkerShared {
                    heartbeat: AtomicBool::new(false),
                    rescue: std::array::from_fn(|_| RescueSlot::new()),
                    counters: WorkerCounters::default(),
                    #[cfg(feature = "trace")]
                    trace: crate::trace::TraceBuffer::new(),
                })
            })
            .collect();
        let registry = Arc::new(Registry {
            queue: SharedQueue::new(num_threads),
            workers,
            idle: CachePadded::new(AtomicUsize::new(0)),
            last_request_ns: CachePadded::new(AtomicU64::new(0)),
            last_promotion_ns: CachePadded::new(AtomicU64::new(0)),
            epoch_ticks: CachePadded::new(AtomicU64::new(0)),
            epoch: Instant::now(),
            terminating: AtomicBool::new(false),
            heartbeat_interval: config.heartbeat_interval,
            heartbeat_park: HeartbeatPark {
                parked: AtomicBool::new(false),
                lock: Mutex::new(()),
                signal: Condvar::new(),
            },
            panic_handler: config.panic_handler,
            start_handler: config.start_handler,
            exit_handler: config.exit_handler,
            threads: Mutex::new(Vec::with_capacity(num_threads + 1)),
            unfinished_workers: FinishCount::new(),
            live_spawns: CachePadded::new(AtomicUsize::new(1)),
            inbox_uncounted: (0..num_threads)
                .map(|index| AtomicBool::new(index == 0 && config.use_current_thread))
                .collect(),
        });
        let mut thread_name = config.thread_name;
        let mut handles = Vec::with_capacity(num_threads + 1);
        let first_spawned = if config.use_current_thread {
            register_current_thread(&registry)?;
            1
        } else {
            0
        };
        // A panicking `thread_name` or spawn handler unwinds out of here: the workers
        // started so far must then be stopped as on an error, not left running forever.
        let spawned = panic::catch_unwind(AssertUnwindSafe(|| -> io::Result<()> {
            for index in first_spawned..num_threads {
                let thread = ThreadBuilder::new(
                    Arc::clone(&registry),
                    index,
                    thread_name(index),
                    config.stack_size,
                );
                handles.extend(spawner.spawn(thread)?);
            }
            if num_threads > 1 {
                let registry = Arc::clone(&registry);
                let heartbeat = thread::Builder::new()
                    .name("sumac-heartbeat".to_owned())
                    .spawn(move || heartbeat_main(&registry))?;
                handles.push(heartbeat);
            }
            Ok(())
        }));
        *registry
            .threads
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = handles;
        let abandon = || {
            registry.terminate();
            unregister_current_thread(&registry);
            registry.join_threads();
        };
        match spawned {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                abandon();
                return Err(ThreadPoolBuildError::spawn(error));
            }
            Err(payload) => {
                abandon();
                panic::resume_unwind(payload);
            }
        }
        Ok(registry)
    }

    /// Number of worker threads.
    pub(crate) fn num_threads(&self) -> usize {
        self.workers.len()
    }

    /// Per-worker counters.
    pub(crate) fn stats(&self) -> PoolStats {
        PoolStats {
            workers: self.workers.iter().map(|w| w.counters.snapshot()).collect(),
        }
    }

    /// Drains every worker's trace events, sorted by time.
    #[cfg(feature = "trace")]
    pub(crate) fn take_trace(&self) -> Vec<crate::trace::Event> {
        let mut events: Vec<_> = self.workers.iter().flat_map(|w| w.trace.take()).collect();
        events.sort_by_key(|event| event.time_ns);
        events
    }

    /// Runs `op` on a worker of this registry and returns its result, blocking (or, on a
    /// worker of another pool, working) until it is done.
    pub(crate) fn in_worker<OP, R>(self: &Arc<Self>, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread) -> R + Send,
        R: Send,
    {
        let current = WorkerThread::current();
        if current.is_null() {
            // A thread registered by `use_current_thread` acts as its pool's worker 0:
            // into another pool it waits as that worker, running its own pool's jobs.
            with_registered_worker(None, |registered| match registered {
                Some(worker) if ptr::eq(Arc::as_ptr(&worker.registry), Arc::as_ptr(self)) => {
                    op(worker)
                }
                Some(worker) => self.in_worker_cross(worker, op),
                None => self.in_worker_cold(op),
            })
        } else {
            // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
            let current = unsafe { &*current };
            if ptr::eq(Arc::as_ptr(&current.registry), Arc::as_ptr(self)) {
                op(current)
            } else {
                self.in_worker_cross(current, op)
            }
        }
    }

    #[cold]
    fn in_worker_cold<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread) -> R + Send,
        R: Send,
    {
        let job = StackJob::new(LockLatch::new(), move || {
            // SAFETY: injected jobs only run on workers of this registry.
            op(unsafe { &*WorkerThread::current() })
        });
        self.queue.push([job.job_ref()]);
        job.latch.wait();
        // SAFETY: the latch is set.
        unsafe { job.into_result() }
    }

    #[cold]
    fn in_worker_cross<OP, R>(&self, current: &WorkerThread, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread) -> R + Send,
        R: Send,
    {
        let latch = WorkerLatch::new(&current.registry, current.index);
        let job = StackJob::new(latch, move || {
            // SAFETY: injected jobs only run on workers of this registry.
            op(unsafe { &*WorkerThread::current() })
        });
        self.queue.push([job.job_ref()]);
        current.wait_until(|| job.latch.probe());
        // SAFETY: the latch is set.
        unsafe { job.into_result() }
    }

    /// Queues a heap job: on the calling worker's own list in a one-thread pool (plain
    /// stores: nobody else could run it), else in the shared queue, where any idle
    /// worker can take it at once.
    ///
    /// A spawned job does not wait on its worker's list for a heartbeat to share it, as a
    /// fork does: the spawning worker may go on to run code that makes no forks (the
    /// rest of a scope's body, or another spawned job), and would not poll its heartbeat
    /// until that ends, so spawned jobs would run one after the other. A spawn already
    /// allocates, so the queue's lock costs it little. (Forks still waiting when their
    /// worker stops polling are shared through the rescue offer instead, see
    /// [`RescueSlot`]; a spawned job cannot be offered, because whoever runs it frees it,
    /// while it would still be linked in its owner's list.)
    pub(crate) fn push_job(&self, job: JobRef) {
        let current = WorkerThread::current();
        // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
        if let Some(worker) = unsafe { current.as_ref() } {
            if worker.solo && ptr::eq(Arc::as_ptr(&worker.registry), self) {
                // SAFETY: a fresh heap job is live until it runs and is on no list.
                unsafe {
                    job.header().recorded_at.set(LONG_AGO);
                    worker.jobs.push(job.0);
                }
                return;
            }
        }
        self.queue.push([job]);
    }

    /// Queues a heap job that continues what the calling worker is doing (an async task
    /// it just woke): on that worker's own list if it is a worker of this pool and its
    /// list is empty (the job runs next, with no lock and no wake-up; a heartbeat
    /// shares it like a spawned job), else as [`push_job`](Self::push_job) does.
    pub(crate) fn push_job_local(&self, job: JobRef) {
        let current = WorkerThread::current();
        // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
        if let Some(worker) = unsafe { current.as_ref() } {
            if ptr::eq(Arc::as_ptr(&worker.registry), self)
                && (worker.solo || worker.jobs.is_empty())
            {
                // SAFETY: a fresh heap job is live until it runs and is on no list.
                unsafe {
                    job.header().recorded_at.set(LONG_AGO);
                    worker.jobs.push(job.0);
                }
                return;
            }
        }
        self.queue.push([job]);
    }

    /// Wakes worker `index` if it sleeps (see [`crate::park`]).
    pub(crate) fn wake_worker(&self, index: usize) {
        self.queue.wake(index);
    }

    /// Reports a panic from a `spawn`ed job: the pool's panic handler, or abort.
    pub(crate) fn handle_panic(&self, payload: PanicPayload) {
        match &self.panic_handler {
            Some(handler) => {
                let handled =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(payload)));
                if handled.is_err() {
                    eprintln!("sumac: the panic handler panicked; aborting");
                    std::process::abort();
                }
            }
            None => {
                eprintln!(
                    "sumac: a spawned job or a start/exit handler panicked and the pool has no panic handler; aborting"
                );
                std::process::abort();
            }
        }
    }

    /// Runs a start or exit handler on worker `index`; its panic goes to the panic handler.
    fn call_thread_handler(&self, handler: Option<&ThreadHandler>, index: usize) {
        if let Some(handler) = handler {
            if let Err(payload) =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(index)))
            {
                self.handle_panic(payload);
            }
        }
    }

    /// A spawned job is about to be queued (for worker `index` only, if given); if it
    /// was counted, its worker gives the unit back after it ran ([`finish_spawned_job`]).
    /// Returns whether it was counted: a job addressed to a worker that may never
    /// run it is not (see `inbox_uncounted`: the other workers must not wait for it);
    /// nor is a job spawned once the count reached zero (by an exit handler).
    pub(crate) fn spawn_started(&self, index: Option<usize>) -> bool {
        if index.is_some_and(|index| self.inbox_uncounted[index].load(Ordering::Relaxed)) {
            return false;
        }
        // Usually the caller holds a unit already (through the pool, or as a running
        // spawned job), so the count is not zero. It is when an exit handler spawns:
        // then some workers may have exited already, and a job addressed to one of them
        // never runs, so the workers still running must not wait for it. Zero stays
        // zero; the exiting worker runs what its handler queued (see `worker_main`).
        let mut count = self.live_spawns.load(Ordering::Relaxed);
        loop {
            if count == 0 {
                return false;
            }
            match self.live_spawns.compare_exchange_weak(
                count,
                count + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(actual) => count = actual,
            }
        }
    }

    /// Gives back one unit of [`live_spawns`](Self::live_spawns); the last one lets the
    /// workers exit: wake them all (their wait re-checks the count under the queue lock,
    /// which `wake_all` takes after the decrement, so none can miss it).
    pub(crate) fn release_live_unit(&self) {
        if self.live_spawns.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.queue.wake_all();
        }
    }

    /// Whether the workers may exit as far as spawned jobs go: the pool was dropped and
    /// every spawned job finished.
    fn spawns_finished(&self) -> bool {
        self.live_spawns.load(Ordering::Acquire) == 0
    }

    /// Asks the workers to exit once all queued work and every spawned job is done.
    /// Only the first call counts.
    pub(crate) fn terminate(&self) {
        if self.terminating.swap(true, Ordering::SeqCst) {
            return;
        }
        self.release_live_unit();
        self.queue.wake_all();
        self.heartbeat_park.notify();
    }

    /// Joins the pool's threads, unless called on a worker of any pool (then they are
    /// detached, and exit on their own once the live count is 0).
    ///
    /// A worker never blocks here: waiting for this pool's workers from one of them
    /// would wait for itself, and from a worker of another pool it could wait forever,
    /// for example when two pools are each dropped on a worker of the other (each drop
    /// would wait for a thread that is itself blocked in the other drop), or when this
    /// pool's jobs need the other pool's worker that is blocked here. A thread that
    /// `use_current_thread` registered as worker 0 of another (live) pool counts as a
    /// worker too: it is the only one to run that pool's worker-0 jobs (a `broadcast`'s
    /// part, and every job of a one-worker pool), which this pool's jobs may wait for.
    pub(crate) fn join_threads(&self) {
        if !WorkerThread::current().is_null() || registered_with_a_live_pool() {
            return;
        }
        let handles =
            std::mem::take(&mut *self.threads.lock().unwrap_or_else(PoisonError::into_inner));
        for handle in handles {
            let _ = handle.join();
        }
        // Workers started by a spawn handler have no handle here: wait until each
        // returned from `ThreadBuilder::run` (or its builder was dropped unused).
        self.unfinished_workers.wait_for_zero();
    }

    /// A [`ThreadBuilder`] for one of this pool's workers was created.
    pub(crate) fn worker_handed_out(&self) {
        self.unfinished_workers.add();
    }

    /// Worker `index` will never run: its `ThreadBuilder` was dropped unused. Jobs
    /// addressed to it from now on are not counted in `live_spawns` (they could never
    /// finish, and the other workers would wait for them forever). A spawn handler drops
    /// its builder while the pool is built, before anyone can address a job to it; a
    /// builder kept and dropped later leaves any job counted before that to hang the
    /// pool's drop.
    pub(crate) fn worker_never_runs(&self, index: usize) {
        self.inbox_uncounted[index].store(true, Ordering::Relaxed);
    }

    /// A [`ThreadBuilder`] was dropped: its worker returned, or never ran.
    pub(crate) fn worker_finished(&self) {
        self.unfinished_workers.finish();
    }

    fn is_terminating(&self) -> bool {
        self.terminating.load(Ordering::SeqCst)
    }

    /// A worker entered its idle phase: ask everyone for work and keep the heartbeat
    /// thread's parking decision up to date.
    fn enter_idle(&self, me: usize) {
        self.count_idle();
        self.raise_heartbeats(me);
    }

    /// One more worker is idle (or, for a thread registered by `use_current_thread`, not
    /// acting as a worker): the heartbeat thread may now have to tick, or to park.
    fn count_idle(&self) {
        let before = self.idle.fetch_add(1, Ordering::SeqCst);
        if before == 0 || before + 1 == self.num_threads() {
            self.unpark_heartbeat();
        }
    }

    /// The number of heartbeat ticks so far.
    #[inline]
    pub(crate) fn heartbeat_epoch(&self) -> u64 {
        self.epoch_ticks.load(Ordering::Relaxed)
    }

    /// How many workers wait for work: idle, with no queued job to take (a hint).
    fn workers_waiting(&self) -> usize {
        self.idle
            .load(Ordering::Relaxed)
            .saturating_sub(self.queue.queued())
    }

    /// Claims the pool-wide right to promote now: at most one promotion per
    /// `interval / busy workers` across the pool. A lone busy worker with a tiny input
    /// therefore shares at most once per heartbeat interval however many idle workers
    /// ask (a stolen piece of a tiny, cache-hot input costs its owner far more than it
    /// saves), while a pool whose workers are all busy with large inputs may promote
    /// once per interval per worker.
    fn claim_promotion(&self) -> bool {
        let now = u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let busy = self
            .num_threads()
            .saturating_sub(self.idle.load(Ordering::Relaxed))
            .max(1);
        let interval = u64::try_from(self.heartbeat_interval.as_nanos()).unwrap_or(u64::MAX);
        let spacing = interval / busy as u64;
        let last = self.last_promotion_ns.load(Ordering::Relaxed);
        now.saturating_sub(last) >= spacing
            && self
                .last_promotion_ns
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }

    /// An idle worker renews its request for work, at most once per `period` for the
    /// whole pool (so that many spinning workers do not keep invalidating the busy
    /// workers' flag lines).
    fn request_work(&self, me: usize, period: Duration) {
        let now = u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let last = self.last_request_ns.load(Ordering::Relaxed);
        let period = u64::try_from(period.as_nanos()).unwrap_or(u64::MAX);
        if now.saturating_sub(last) >= period
            && self
                .last_request_ns
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            self.raise_heartbeats(me);
        }
    }

    /// Sets every other worker's heartbeat flag (reading it first, to leave set flags'
    /// cache lines alone).
    fn raise_heartbeats(&self, me: usize) {
        for (index, worker) in self.workers.iter().enumerate() {
            if index != me && !worker.heartbeat.load(Ordering::Relaxed) {
                worker.heartbeat.store(true, Ordering::Relaxed);
            }
        }
    }

    fn leave_idle(&self) {
        let before = self.idle.fetch_sub(1, Ordering::SeqCst);
        if before == self.num_threads() || before == 1 {
            self.unpark_heartbeat();
        }
    }

    /// Whether ticking makes sense: someone is busy and someone could take work.
    fn heartbeat_useful(&self) -> bool {
        let idle = self.idle.load(Ordering::SeqCst);
        idle > 0 && idle < self.num_threads()
    }

    fn unpark_heartbeat(&self) {
        if self.heartbeat_park.parked.load(Ordering::SeqCst) {
            self.heartbeat_park.notify();
        }
    }
}

/// The heartbeat thread: ticks while some workers are busy and some idle, parks otherwise.
///
/// Ticks are at least one interval apart, counted from the previous tick, not from the
/// end of a park: after a park of a whole interval or more (every worker was busy), the
/// first tick comes at once. A fork recorded during the park carries the epoch of the
/// last tick before it, so this immediate tick still happens after the fork was
/// recorded, and the fork is shared at the tick after it, one whole interval later: the
/// rule "shared only after waiting through a whole interval" holds, and a worker that
/// runs out of work after a busy phase waits one interval for a fork instead of two.
fn heartbeat_main(registry: &Registry) {
    wake_on_time();
    let park = &registry.heartbeat_park;
    let mut last_tick = Instant::now();
    let mut quiet = vec![QuietWorker::default(); registry.workers.len()];
    loop {
        {
            let mut guard = park.lock.lock().unwrap_or_else(PoisonError::into_inner);
            loop {
                if registry.is_terminating() {
                    return;
                }
                if registry.heartbeat_useful() {
                    break;
                }
                park.parked.store(true, Ordering::SeqCst);
                // Re-check after announcing we park: `enter_idle`/`leave_idle` change the
                // idle count first and then look at `parked` (both sequentially consistent).
                if registry.heartbeat_useful() || registry.is_terminating() {
                    park.parked.store(false, Ordering::SeqCst);
                    continue;
                }
                guard = park
                    .signal
                    .wait(guard)
                    .unwrap_or_else(PoisonError::into_inner);
                park.parked.store(false, Ordering::SeqCst);
                // Workers polled unflagged meanwhile: count quiet ticks afresh.
                quiet.fill(QuietWorker::default());
            }
        }
        pause_until(registry, last_tick.checked_add(registry.heartbeat_interval));
        if registry.is_terminating() {
            return;
        }
        last_tick = Instant::now();
        let ticks = registry.epoch_ticks.load(Ordering::Relaxed);
        registry.epoch_ticks.store(ticks + 1, Ordering::Relaxed);
        rescue_quiet_workers(registry, &mut quiet);
        for worker in registry.workers.iter() {
            if !worker.heartbeat.load(Ordering::Relaxed) {
                worker.heartbeat.store(true, Ordering::Relaxed);
            }
        }
    }
}

/// Asks the OS to end the calling thread's timed waits within a microsecond of their
/// deadline. Linux lets a timed wait overrun by the thread's *timer slack*, 50 µs by
/// default, so that it can batch wake-ups: with it, the heartbeat thread of a pool with
/// one busy and one idle worker ticked every 172-186 µs for the default 100 µs interval;
/// with a slack of 1 µs, every 121-124 µs (2-core VM). Rescues of the forks behind long
/// leaves, which wait for ticks, came 2-6% sooner in join trees of sleeping 1 ms leaves
/// on 8 and 16 threads (median of 100 runs); tree-sum and fib at 1 and 2 threads did not
/// move beyond noise. More ticks cost more: with one worker busy and one idle, the
/// heartbeat thread used 11-13% of a core before and 16-18% after. The thread waits on a
/// timer only while some workers are busy and some idle; otherwise it parks without a
/// timeout, so an idle pool still never wakes.
fn wake_on_time() {
    #[cfg(all(target_os = "linux", not(miri), not(loom)))]
    {
        // SAFETY: PR_SET_TIMERSLACK takes one unsigned long (the slack in nanoseconds)
        // and changes only the calling thread's timer slack; it reads and writes no
        // memory of ours. A failure (an old kernel) leaves the default slack, which is
        // only slower.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, HEARTBEAT_TIMER_SLACK_NS);
        }
    }
}

/// The heartbeat thread's timer slack (see [`wake_on_time`]).
#[cfg(all(target_os = "linux", not(miri), not(loom)))]
const HEARTBEAT_TIMER_SLACK_NS: libc::c_ulong = 1_000;

/// Ticks without a poll after which the heartbeat thread claims a worker's rescue offers:
/// one. Its flag was raised (if it was not up already) right after the snapshot of the
/// tick before, and only handling it clears it; so if the count of handled heartbeats
/// has not moved by the next tick, the worker has not polled, hence not forked, for a
/// whole interval while the same forks sat in its offers, which are then as old as a
/// fork a heartbeat would promote. (It was two ticks until the offers covered every
/// recorded fork: then each level of a tree of long leaves waited for its taker to go
/// quiet in turn, and with 1 ms leaves a 3-level join tree took 2.3-2.4 ms on 8
/// threads, against 1.9-2.2 ms with one tick and 1.1 ms for Rayon; `long_leaves` with
/// sleeping leaves, 2-core VM.)
const RESCUE_AFTER_TICKS: u32 = 1;

/// What the heartbeat thread saw of a worker at the previous tick.
#[derive(Clone, Copy, Default)]
struct QuietWorker {
    /// The worker's counts of handled heartbeats and of forks (`None` after a park, when
    /// they are not yet known).
    handled: Option<(u64, u64)>,
    /// The jobs in its rescue slots (compared by address only, never dereferenced; 0
    /// for an empty slot).
    offered: [usize; RESCUE_SLOTS],
    /// Consecutive ticks at which none of these had changed, with a job on offer.
    ticks: u32,
}

/// The heartbeat thread's side of the rescue protocol (see [`RescueSlot`]): a worker
/// whose counts of handled heartbeats and of forks have not moved for
/// [`RESCUE_AFTER_TICKS`] ticks, while the same forks sat in its offer, has neither
/// polled its (raised) flag nor forked since: it is deep in code that makes no forks.
/// (The fork count also tells a fork offered again at the same stack address, by a
/// worker that forks without handling a heartbeat, from one that sat there.) While some
/// workers wait for work, its offered forks are claimed and shared through the queue,
/// one per waiting worker, as its own heartbeat would have promoted them. Slots are
/// taken in order, which is the order the forks were recorded in unless a promotion
/// freed a slot below a younger fork.
fn rescue_quiet_workers(registry: &Registry, quiet: &mut [QuietWorker]) {
    for (worker, quiet) in registry.workers.iter().zip(quiet) {
        let offered = worker.rescue.each_ref().map(RescueSlot::offered_addr);
        let handled = (
            worker.counters.heartbeats.load(Ordering::Relaxed),
            worker.counters.forks.total(),
        );
        if offered == [0; RESCUE_SLOTS]
            || quiet.handled != Some(handled)
            || quiet.offered != offered
        {
            *quiet = QuietWorker {
                handled: Some(handled),
                offered,
                ticks: 0,
            };
            continue;
        }
        quiet.ticks = quiet.ticks.saturating_add(1);
        if quiet.ticks < RESCUE_AFTER_TICKS {
            continue;
        }
        for (slot, seen) in worker.rescue.iter().zip(&mut quiet.offered) {
            if *seen == 0 {
                continue;
            }
            if registry.workers_waiting() == 0 {
                break;
            }
            // Only the fork seen at the previous ticks: if the worker moved on meanwhile
            // and offered another, it forked, and the new one is young.
            if let Some(job) = slot.claim_if(*seen) {
                // Counted before the push, so that whoever sees the job done sees the
                // count.
                bump(&worker.counters.rescues, 1);
                registry.queue.push([job]);
            }
            // Claimed now, or withdrawn (or replaced) meanwhile: the next tick compares
            // the slot afresh.
            *seen = 0;
        }
    }
}

/// Waits until `deadline` (the next tick). OS sleeps are only accurate to tens of
/// microseconds, so with very short intervals (used by stress tests) this yields in a
/// loop instead. Longer waits happen on the parking condition variable, so that dropping
/// the pool does not wait out a long interval (other notifications on it do not shorten
/// the wait). No deadline (an interval too long to add to the clock, `Duration::MAX`)
/// waits until the pool ends.
fn pause_until(registry: &Registry, deadline: Option<Instant>) {
    if registry.heartbeat_interval < Duration::from_micros(50) {
        while deadline.is_some_and(|deadline| Instant::now() < deadline) {
            thread::yield_now();
        }
        return;
    }
    let park = &registry.heartbeat_park;
    let mut guard = park.lock.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        if registry.is_terminating() {
            return;
        }
        guard = match deadline {
            Some(deadline) => {
                let now = Instant::now();
                if now >= deadline {
                    return;
                }
                park.signal
                    .wait_timeout(guard, deadline - now)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0
            }
            None => park
                .signal
                .wait(guard)
                .unwrap_or_else(PoisonError::into_inner),
        };
    }
}

/// The end of a spawned job (`spawn`, `spawn_fifo`, `spawn_broadcast`), on the worker
/// that ran it: hands the panics the job caught to the pool's panic handler, then gives
/// back the job's unit of the live count if [`Registry::spawn_started`] counted it.
pub(crate) fn finish_spawned_job(panics: impl IntoIterator<Item = PanicPayload>, counted: bool) {
    // SAFETY: heap jobs only run on workers of the pool they were pushed to, whose
    // thread-local pointer is set.
    let registry = unsafe { &*WorkerThread::current() }.registry();
    for payload in panics {
        registry.handle_panic(payload);
    }
    if counted {
        registry.release_live_unit();
    }
}

/// The body of worker `index`: runs jobs until the pool terminates (see
/// [`ThreadBuilder::run`]).
pub(crate) fn worker_main(registry: Arc<Registry>, index: usize) {
    let worker = WorkerThread::new(registry, index);
    let fork_count = worker.shared().counters.forks.attach(&worker.forks);
    WORKER_THREAD.with(|current| current.set(&worker));
    let registry = &worker.registry;
    registry.call_thread_handler(registry.start_handler.as_deref(), index);
    worker.wait_until(|| {
        registry.spawns_finished()
            && worker.jobs.is_empty()
            && registry.queue.queued() == 0
            && registry.queue.addressed(index) == 0
    });
    registry.call_thread_handler(registry.exit_handler.as_deref(), index);
    // Jobs the exit handler spawned (on this list, or with `spawn_fifo` in the shared
    // queue): run them here, with whatever they queue in turn. Handing them to the
    // workers still running is not enough: there may be none left (a one-worker pool,
    // or the last worker to exit), and the jobs would be lost. Nobody else queues work
    // now without also running this loop, so whoever exits last empties the queue.
    while worker.run_pending_job(true) {}
    WORKER_THREAD.with(|current| current.set(ptr::null()));
    drop(fork_count);
}

// ------------------------------------------------------------------ use_current_thread
//
// A pool built with `use_current_thread` makes the building thread its worker 0 without
// running the worker loop there: the thread keeps doing its own work, and acts as worker
// 0 only while it is inside a call into the pool (`install`, `join`, `scope`, a parallel
// iterator, `broadcast`, `yield_now`, ...). Its `WorkerThread` lives on the heap,
// registered in `REGISTERED_WORKER`; `WORKER_THREAD` points to it only while the thread
// acts as the worker ("active"). While inactive, worker 0 counts as idle (so the
// heartbeat thread parks when the other workers are idle too), and its own list is empty:
// deactivating hands any job left on it (a `spawn`) to the shared queue, since nobody
// else may look at a worker's list. The registration ends when the pool is dropped on
// this thread, when the thread notices its pool was dropped elsewhere, or at thread exit.

/// The heap-allocated worker of a thread registered with `use_current_thread` (null if
/// none); freed when the registration ends.
struct RegisteredWorker(Cell<*mut WorkerThread>);

impl Drop for RegisteredWorker {
    fn drop(&mut self) {
        let worker = self.0.replace(ptr::null_mut());
        if !worker.is_null() {
            // SAFETY: the pointer came from `Box::into_raw` in `register_current_thread`
            // and is owned by this registration; the thread is exiting, so it is not
            // active (`WORKER_THREAD` never outlives a call into the pool).
            drop(unsafe { Box::from_raw(worker) });
        }
    }
}

thread_local! {
    static REGISTERED_WORKER: RegisteredWorker = const { RegisteredWorker(Cell::new(ptr::null_mut())) };
}

/// Whether some worker of the calling worker's pool waits for work: idle, with no queued
/// job to take (a hint; false outside a pool).
pub(crate) fn a_worker_waits() -> bool {
    // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
    unsafe { WorkerThread::current().as_ref() }
        .is_some_and(|worker| worker.registry.workers_waiting() > 0)
}

/// Makes the calling thread worker 0 of `registry` (see above). Fails if it already is
/// a worker of a pool, or registered with one.
fn register_current_thread(registry: &Arc<Registry>) -> Result<(), ThreadPoolBuildError> {
    if !WorkerThread::current().is_null() || !registered_worker().is_null() {
        return Err(ThreadPoolBuildError::current_thread_already_in_pool());
    }
    let worker = Box::into_raw(Box::new(WorkerThread::new(Arc::clone(registry), 0)));
    REGISTERED_WORKER.with(|registered| registered.0.set(worker));
    // Inactive: idle for the heartbeat thread's and the promoters' accounting.
    registry.count_idle();
    Ok(())
}

fn registered_worker() -> *mut WorkerThread {
    REGISTERED_WORKER
        .try_with(|registered| registered.0.get())
        .unwrap_or(ptr::null_mut())
}

/// Whether the calling thread is registered as worker 0 of a pool that was not dropped
/// (see `with_registered_worker`: it acts as that worker inside calls into a pool).
fn registered_with_a_live_pool() -> bool {
    let worker = registered_worker();
    // SAFETY: a registered worker is live until its registration ends, which happens
    // only on this thread.
    !worker.is_null() && !unsafe { &*worker }.registry.is_terminating()
}

/// Ends the calling thread's registration as worker 0 of `registry`, if it has one (the
/// pool is being dropped, or failed to build: it was terminated). First acts as worker 0
/// as long as the other workers stay: runs its inbox and queued jobs (helping the other
/// workers empty the queue; in a one-worker pool nobody else would run them) until
/// every spawned job finished.
pub(crate) fn unregister_current_thread(registry: &Registry) {
    debug_assert!(registry.is_terminating(), "unregistering from a live pool");
    let worker = registered_worker();
    if worker.is_null() || !WorkerThread::current().is_null() {
        return;
    }
    // SAFETY: a registered worker is live until its registration ends, below.
    if !ptr::eq(Arc::as_ptr(unsafe { &(*worker).registry }), registry) {
        return;
    }
    // SAFETY: as above; the thread is not active.
    let registered = unsafe { &*worker };
    // Act as worker 0 until the other workers may exit too (the pool was terminated):
    // a spawned job still running may address a (`spawn_`)`broadcast` job to worker 0,
    // which nobody else would run (a lost closure, or a `broadcast` that never returns).
    activate(registered, |worker| {
        worker.wait_until(|| {
            registry.spawns_finished()
                && worker.jobs.is_empty()
                && registry.queue.queued() == 0
                && registry.queue.addressed(0) == 0
        });
    });
    end_registration(worker);
}

/// Frees the registered `worker` of this thread (which is not active).
fn end_registration(worker: *mut WorkerThread) {
    REGISTERED_WORKER.with(|registered| registered.0.set(ptr::null_mut()));
    // SAFETY: the registration owned the box (from `Box::into_raw`), nothing else refers
    // to it once the registration is cleared, and the thread is not acting as it.
    drop(unsafe { Box::from_raw(worker) });
}

/// The address of the worker the calling thread runs as: the one it is, or else the one
/// `use_current_thread` registered for it (which it acts as inside calls into its pool);
/// 0 for other threads. For comparisons only (`join_context`): never made a pointer again.
pub(crate) fn calling_worker_addr() -> usize {
    let current = WorkerThread::current();
    if current.is_null() {
        registered_worker().addr()
    } else {
        current.addr()
    }
}

/// Runs `f` on a thread registered with `use_current_thread` as its pool's worker 0 (if
/// the thread is registered, not already acting as a worker, and registered with
/// `registry` when one is given), passing that worker; otherwise runs `f(None)`.
pub(crate) fn with_registered_worker<R>(
    registry: Option<&Registry>,
    f: impl FnOnce(Option<&WorkerThread>) -> R,
) -> R {
    let registered = registered_worker();
    if registered.is_null() || !WorkerThread::current().is_null() {
        return f(None);
    }
    // SAFETY: a registered worker is live until its registration ends, which happens
    // only on this thread and never while it is active.
    let worker = unsafe { &*registered };
    if registry.is_some_and(|registry| !ptr::eq(Arc::as_ptr(&worker.registry), registry)) {
        return f(None);
    }
    if worker.registry.is_terminating() {
        // The pool was dropped on another thread: end the registration.
        end_registration(registered);
        return f(None);
    }
    activate(worker, |worker| f(Some(worker)))
}

/// Calls `f` with the calling thread's worker, if it is one of `registry`'s (of any
/// pool's when `None`): the worker it runs as, or, for a thread registered by
/// `use_current_thread` and not inside a call into its pool, its worker 0 (made active
/// for the call). `None` for other threads.
pub(crate) fn with_current_worker<R>(
    registry: Option<&Registry>,
    f: impl FnOnce(&WorkerThread) -> R,
) -> Option<R> {
    // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
    match unsafe { WorkerThread::current().as_ref() } {
        Some(worker) => registry
            .is_none_or(|registry| ptr::eq(Arc::as_ptr(&worker.registry), registry))
            .then(|| f(worker)),
        None => with_registered_worker(registry, |registered| registered.map(f)),
    }
}

/// Runs `f` with the registered, inactive `worker` active on this thread.
fn activate<R>(worker: &WorkerThread, f: impl FnOnce(&WorkerThread) -> R) -> R {
    /// Makes the worker inactive again when `f` returns or unwinds.
    struct Deactivate<'a>(&'a WorkerThread);
    impl Drop for Deactivate<'_> {
        fn drop(&mut self) {
            let worker = self.0;
            let registry = &worker.registry;
            // Only spawned heap jobs can be left (every recorded fork was joined before
            // its call returned), and those are never offered for rescue.
            debug_assert!(
                worker.offered.iter().all(|slot| slot.get().is_none()),
                "a fork outlived its join"
            );
            let leftover: Vec<JobRef> = std::iter::from_fn(|| {
                let job = worker.jobs.pop_oldest()?;
                // SAFETY: a job on our list is live; we own it.
                unsafe { job.as_ref() }.set_owner(&registry.queue, worker.index);
                Some(JobRef(job))
            })
            .collect();
            if !leftover.is_empty() {
                registry.queue.push(leftover);
            }
            WORKER_THREAD.with(|current| current.set(ptr::null()));
            registry.count_idle();
        }
    }
    let _fork_count = worker.shared().counters.forks.attach(&worker.forks);
    WORKER_THREAD.with(|current| current.set(worker));
    worker.registry.leave_idle();
    let _active = Deactivate(worker);
    f(worker)
}

impl WorkerThread {
    /// The state of worker `index` of `registry`, before it starts.
    fn new(registry: Arc<Registry>, index: usize) -> WorkerThread {
        // Divided first, so that a huge interval (`Duration::MAX`) cannot overflow.
        let promotion_gap = registry.heartbeat_interval / 4 * 3;
        let solo = registry.num_threads() == 1;
        let fork_limit = recorded_forks_limit(registry.num_threads());
        WorkerThread {
            solo,
            fork_limit,
            record_limit: Cell::new(fork_limit),
            recording_lasts: Cell::new(false),
            jobs: JobList::new(),
            offered: std::array::from_fn(|_| Cell::new(None)),
            old_forks_left: Cell::new(0),
            forks: CachePadded::new(AtomicU64::new(0)),
            shared: NonNull::from(&*registry.workers[index]),
            index,
            last_promotion: Cell::new(
                Instant::now()
                    .checked_sub(promotion_gap)
                    .unwrap_or_else(Instant::now),
            ),
            promotion_gap,
            registry,
        }
    }

    /// The calling thread's worker, or null outside any pool.
    #[inline(always)]
    pub(crate) fn current() -> *const WorkerThread {
        WORKER_THREAD.with(Cell::get)
    }

    #[inline(always)]
    pub(crate) fn shared(&self) -> &WorkerShared {
        // SAFETY: points into the registry's worker array, kept alive by `self.registry`.
        unsafe { self.shared.as_ref() }
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    pub(crate) fn index(&self) -> usize {
        self.index
    }

    /// Whether jobs of this worker wait: its own list's, or ones addressed to it.
    pub(crate) fn has_pending_jobs(&self) -> bool {
        !self.jobs.is_empty() || self.registry.queue.addressed(self.index) > 0
    }

    /// Counts a fork (a plain per-worker counter, in a cache line of its own).
    #[inline(always)]
    pub(crate) fn count_fork(&self) {
        bump(&self.forks, 1);
    }

    /// Pushes the fork `job` (a [`JoinFrame`](crate::job::JoinFrame)) on this worker's
    /// list and offers it for rescue in a free slot (see [`RescueSlot`]). Returns the job
    /// that was newest before, as [`JobList::push`] does.
    ///
    /// # Safety
    /// As [`JobList::push`]; in addition, `job` must be removed from the list only after
    /// [`withdraw_offer`](Self::withdraw_offer), and must stay live, even once claimed,
    /// until its owner removed it from the list and saw it reclaimed or done (a join
    /// frame does: its `join` cannot return before). A heap job cannot promise that.
    #[inline(always)]
    pub(crate) unsafe fn push_fork(&self, job: NonNull<JobHeader>) -> Option<NonNull<JobHeader>> {
        // SAFETY: forwarded from the caller.
        let older = unsafe { self.jobs.push(job) };
        // Every offered job is on the list, which held fewer than `RESCUE_SLOTS` jobs
        // (the fork path records only then), so a slot is free.
        let free = self.offered.iter().position(|slot| slot.get().is_none());
        debug_assert!(free.is_some(), "more recorded forks than rescue slots");
        if let Some(slot) = free {
            // SAFETY: the caller keeps the job live as `RescueSlot::offer` requires, and
            // it is LOCAL with its owner recorded just before.
            unsafe {
                job.as_ref().set_owner(&self.registry.queue, self.index);
                self.shared().rescue[slot].offer(job);
            }
            self.offered[slot].set(Some(job));
        }
        older
    }

    /// Call before removing `job` from this worker's list: if it is offered for rescue,
    /// takes the offer back. Returns false if the heartbeat thread claimed it: it is then
    /// shared, and must stay on the list (with this worker still marking its slot as
    /// taken) until its join removes it with [`remove_claimed`](Self::remove_claimed);
    /// every later call for it returns false too. For a job not on offer this is a few
    /// comparisons.
    #[inline(always)]
    pub(crate) fn withdraw_offer(&self, job: NonNull<JobHeader>) -> bool {
        let Some(slot) = self.offer_slot(job) else {
            return true;
        };
        let withdrawn = self.shared().rescue[slot].withdraw(job);
        if withdrawn {
            self.offered[slot].set(None);
        }
        withdrawn
    }

    /// The rescue slot in which this worker offered `job`, if it did.
    #[inline(always)]
    fn offer_slot(&self, job: NonNull<JobHeader>) -> Option<usize> {
        self.offered.iter().position(|slot| slot.get() == Some(job))
    }

    /// The join of a fork whose offer was claimed (see [`withdraw_offer`]) unlinks it.
    ///
    /// # Safety
    /// `job` is an offered fork, claimed, and still on this worker's list.
    ///
    /// [`withdraw_offer`]: Self::withdraw_offer
    pub(crate) unsafe fn remove_claimed(&self, job: NonNull<JobHeader>) {
        let slot = self.offer_slot(job);
        debug_assert!(slot.is_some(), "not an offered fork");
        if let Some(slot) = slot {
            self.offered[slot].set(None);
        }
        // SAFETY: the caller guarantees `job` is on our list.
        unsafe { self.jobs.remove(job) };
    }

    /// Whether `join` should record its fork (rather than call both closures directly):
    /// fewer jobs wait on the list than the current limit.
    #[inline(always)]
    pub(crate) fn should_record(&self) -> bool {
        self.jobs.len() < self.record_limit.get()
    }

    /// Whether a fork whose size a parallel loop measured should be recorded: up to
    /// `fork_limit` whatever the budget of plain forks. A loop splits only to
    /// share the upper half (at a heartbeat, or at once when one item is expensive), so
    /// the half must be on the list.
    #[inline(always)]
    pub(crate) fn should_record_measured(&self) -> bool {
        self.jobs.len() < self.fork_limit
    }

    /// Whether a fork known to be big (a loop half whose items were timed) should be
    /// recorded: up to `MAX_RECORDED_BIG_FORKS`.
    #[inline(always)]
    pub(crate) fn should_record_big(&self) -> bool {
        !self.solo && self.jobs.len() < MAX_RECORDED_BIG_FORKS
    }

    /// `join` took a recorded fork back off the list to run it inline.
    ///
    /// Work that has not lasted through a heartbeat records only the first
    /// `fork_limit` forks since the list was last empty: each fork joined before
    /// a heartbeat gives up its slot instead of letting the next fork be recorded. A fork
    /// is shared only after it waited through a whole interval, so the forks of a
    /// computation shorter than that are never shared, and recording them all (about a
    /// quarter of the forks of a 1,000-node tree) only costs time. The first heartbeat
    /// restores every slot; so does an empty list.
    #[inline(always)]
    pub(crate) fn joined_recorded_fork(&self) {
        if self.jobs.is_empty() {
            self.restore_recording(false);
        } else if !self.recording_lasts.get() {
            self.record_limit
                .set(self.record_limit.get().saturating_sub(1));
        }
    }

    /// Gives the fork path all `fork_limit` slots again; `lasting` says whether
    /// joined forks keep their slots from now on (after a heartbeat) or give them up.
    /// Never reached in a one-thread pool, which records nothing and has neither a
    /// heartbeat thread nor another worker to raise its flag.
    #[inline]
    fn restore_recording(&self, lasting: bool) {
        debug_assert!(!self.solo, "a one-thread pool never records forks");
        self.recording_lasts.set(lasting);
        self.record_limit.set(self.fork_limit);
    }

    /// The fork path's heartbeat check: one relaxed load and a cold branch.
    #[inline(always)]
    pub(crate) fn poll_heartbeat(&self) {
        if self.shared().heartbeat.load(Ordering::Relaxed) {
            self.on_heartbeat();
        }
    }

    /// The heartbeat fired (or an idle worker asked): promote the oldest forks if anyone
    /// is waiting for work.
    #[cold]
    #[inline(never)]
    fn on_heartbeat(&self) {
        let shared = self.shared();
        shared.heartbeat.store(false, Ordering::Relaxed);
        bump(&shared.counters.heartbeats, 1);
        self.restore_recording(true);
        let registry = &*self.registry;
        let epoch = registry.heartbeat_epoch();
        // Only jobs that waited through a whole interval (two ticks) are worth sharing:
        // a fork younger than that belongs to work that may finish before a thief could
        // even start (and a stolen piece of a small, cache-hot input costs its owner
        // more than it saves).
        let old_enough = |job: NonNull<JobHeader>| {
            // SAFETY: jobs on our list are live.
            waited_long_enough(unsafe { job.as_ref() }.recorded_at.get(), epoch)
        };
        let Some(oldest) = self.jobs.oldest().filter(|&job| old_enough(job)) else {
            return;
        };
        let wanted = registry.workers_waiting();
        if wanted == 0 {
            return;
        }
        // Forks of unknown size are shared at most once per ¾ interval per worker and
        // once per `interval / busy` per pool; a fork known to be big (a loop's measured
        // half) goes at once.
        // SAFETY: `oldest` is on our list, hence live.
        let known_big = unsafe { oldest.as_ref() }.recorded_at.get() == SHARE_AT_ONCE;
        let now = Instant::now();
        if !known_big
            && (now.duration_since(self.last_promotion.get()) < self.promotion_gap
                || !registry.claim_promotion())
        {
            return;
        }
        self.last_promotion.set(now);
        let mut promoted = 0;
        let mut next = self.jobs.oldest();
        let oldest_jobs = std::iter::from_fn(|| loop {
            let job = next.filter(|&job| old_enough(job))?;
            // SAFETY: `job` is on our list.
            next = unsafe { self.jobs.newer(job) };
            if !self.withdraw_offer(job) {
                // The heartbeat thread claimed it and shares it; its join unlinks it.
                continue;
            }
            // SAFETY: `job` is on our list.
            unsafe { self.jobs.remove(job) };
            // SAFETY: a job on our list is live; we own it.
            unsafe { job.as_ref() }.set_owner(&registry.queue, self.index);
            promoted += 1;
            return Some(JobRef(job));
        });
        registry.queue.push(oldest_jobs.take(wanted));
        bump(&shared.counters.promotions, promoted);
        #[cfg(feature = "trace")]
        shared
            .trace
            .record(self.index, crate::trace::EventKind::Promotion);
    }

    /// Runs jobs — this worker's own, then shared ones — until `done()` holds, sleeping
    /// when there are none. `done` must become true only through another thread's action
    /// that is followed by a [`SharedQueue::wake`] of this worker (or by termination).
    pub(crate) fn wait_until(&self, done: impl Fn() -> bool) {
        let mut idled = false;
        loop {
            if done() {
                if idled {
                    // Pushes that saw us searching woke nobody: pass their jobs on.
                    self.registry.queue.hand_off();
                }
                return;
            }
            if self.run_pending_job(true) {
                continue;
            }
            self.idle_until(&done);
            idled = true;
        }
    }

    /// [`wait_until`](Self::wait_until), but gives up at `deadline`: returns whether
    /// `done()` held.
    pub(crate) fn wait_until_deadline(&self, done: impl Fn() -> bool, deadline: Instant) -> bool {
        let mut idled = false;
        let finished = loop {
            if done() {
                break true;
            }
            if Instant::now() >= deadline {
                break done();
            }
            if self.run_pending_job(true) {
                continue;
            }
            self.idle_until_deadline(&done, deadline);
            idled = true;
        };
        if idled {
            self.registry.queue.hand_off();
        }
        finished
    }

    /// Runs one pending job, if there is one: this worker's newest own job (a fork not
    /// yet joined, or a spawned job), else the oldest job addressed to this worker, else,
    /// if `shared`, the oldest job of the shared queue. Returns whether it ran one.
    ///
    /// Running an own fork early is sound wherever this worker is: its join then finds
    /// the fork no longer LOCAL and waits for DONE, which it already is.
    pub(crate) fn run_pending_job(&self, shared: bool) -> bool {
        // Jobs whose offer the heartbeat thread claimed are shared (their joins unlink
        // them): run the newest of the others.
        let mut next = self.jobs.newest();
        while let Some(job) = next {
            // SAFETY: `job` is on our list.
            next = unsafe { self.jobs.older(job) };
            if !self.withdraw_offer(job) {
                continue;
            }
            // SAFETY: `job` is on our list.
            unsafe { self.jobs.remove(job) };
            // SAFETY: a job popped from our own list is live and LOCAL; marking it
            // TAKEN gives us the right to run it.
            unsafe {
                let header = job.as_ref();
                header.set_owner(&self.registry.queue, self.index);
                header.share.store(TAKEN, Ordering::Relaxed);
                JobHeader::execute(job);
            }
            return true;
        }
        if let Some(job) = self.registry.queue.take_addressed(self.index) {
            self.run_shared(job);
            return true;
        }
        if shared {
            if let Some(job) = self.registry.queue.take(false) {
                self.run_shared(job);
                return true;
            }
        }
        false
    }

    /// Spins for at most one heartbeat interval, watching the queue length (a read-only
    /// load of a line that only changes when jobs are queued or taken) and `done`, and
    /// renewing the pool's request for work every eighth of an interval. Returns true if
    /// work appeared or the wait is over.
    ///
    /// Why spin at all: on a VM a futex wake-up takes tens of microseconds, longer than
    /// many parallel loops last (an LU pivot step is under 100 µs), so a worker that
    /// went to sleep between two loops would miss the next one entirely.
    ///
    /// After the first eighth of the spin, each round of looks ends with a
    /// `thread::yield_now`, which returns at once unless another thread waits for this
    /// core: with more threads than cores, a worker just woken to finish its join would
    /// otherwise wait until this spin ended (see `SCHEDULER.md`).
    fn spin_for_work(&self, done: &impl Fn() -> bool) -> bool {
        let registry = &*self.registry;
        let work_or_done =
            || registry.queue.queued() > 0 || registry.queue.addressed(self.index) > 0 || done();
        let start = Instant::now();
        let spin_limit = registry
            .heartbeat_interval
            .clamp(Duration::from_micros(5), Duration::from_micros(200));
        let request_period = spin_limit / 8;
        let mut next_request = start + request_period;
        loop {
            for _ in 0..SPIN_ROUNDS {
                if work_or_done() {
                    return true;
                }
                std::hint::spin_loop();
            }
            let now = Instant::now();
            if now.duration_since(start) >= spin_limit {
                return work_or_done();
            }
            if now >= next_request {
                registry.request_work(self.index, request_period);
                next_request = now + request_period;
            }
            if now.duration_since(start) >= request_period {
                thread::yield_now();
            }
        }
    }

    /// Runs a job taken from the shared queue.
    ///
    /// A job that was promoted from another worker's list had waited through a whole
    /// interval there (or was a loop half known to be big): the first forks this worker
    /// records while running it, the top of a big piece of work, are stamped as old, so
    /// that they can be passed on at the next request instead of after two more ticks.
    fn run_shared(&self, job: JobRef) {
        let shared = self.shared();
        bump(&shared.counters.shared_jobs_run, 1);
        // SAFETY: the job is live until we run it (`take` moved it to TAKEN for us).
        let promoted = unsafe { job.header() }.recorded_at.get() != NOT_A_FORK;
        let inherit = if promoted { self.fork_limit as u8 } else { 0 };
        let outer = self.old_forks_left.replace(inherit);
        #[cfg(feature = "trace")]
        shared
            .trace
            .record(self.index, crate::trace::EventKind::JobStart);
        // SAFETY: `take` moved the job to TAKEN for us.
        unsafe { JobHeader::execute(job.0) };
        self.old_forks_left.set(outer);
        #[cfg(feature = "trace")]
        shared
            .trace
            .record(self.index, crate::trace::EventKind::JobEnd);
    }

    /// The stamp of a fork being recorded: old for the first forks of a promoted job
    /// (see `run_shared`), else the current heartbeat epoch.
    #[inline(always)]
    pub(crate) fn fork_stamp(&self) -> u64 {
        let left = self.old_forks_left.get();
        if left > 0 {
            self.old_forks_left.set(left - 1);
            LONG_AGO
        } else {
            self.registry.heartbeat_epoch()
        }
    }

    /// The idle phase: ask for work, spin briefly, sleep; returns when a job is queued,
    /// `done()` holds, or this worker was woken.
    fn idle_until(&self, done: &impl Fn() -> bool) {
        self.idle_until_deadline(done, None::<Instant>);
    }

    /// [`idle_until`](Self::idle_until), sleeping at most until `deadline`.
    fn idle_until_deadline(&self, done: &impl Fn() -> bool, deadline: impl Into<Option<Instant>>) {
        let deadline = deadline.into();
        let registry = &*self.registry;
        let queue = &registry.queue;
        registry.enter_idle(self.index);
        queue.start_searching();
        if !self.spin_for_work(done) {
            #[cfg(feature = "trace")]
            self.shared()
                .trace
                .record(self.index, crate::trace::EventKind::Sleep);
            // Sleeps unless a job is queued or the wait is over (checked under the lock).
            // Sleeps are counted as they start, wake-ups as they end: a worker asleep
            // right now shows one sleep more than wake-ups.
            let counters = &self.shared().counters;
            let slept = match deadline {
                None => queue.sleep(self.index, || !done(), || bump(&counters.sleeps, 1)),
                Some(deadline) => queue.sleep_until(
                    self.index,
                    || !done(),
                    || bump(&counters.sleeps, 1),
                    deadline,
                ),
            };
            if slept {
                bump(&counters.wakeups, 1);
                #[cfg(feature = "trace")]
                self.shared()
                    .trace
                    .record(self.index, crate::trace::EventKind::Wake);
            }
        }
        // Woken, or work appeared: the caller looks at everything again.
        queue.stop_searching();
        registry.leave_idle();
    }
}

/// The global pool, built on first use with default settings unless
/// [`ThreadPoolBuilder::build_global`] built it first.
pub(crate) fn global_registry() -> &'static Arc<Registry> {
    GLOBAL_REGISTRY.get_or_init(|| {
        Registry::new(ThreadPoolBuilder::new())
            .expect("sumac: failed to start the global thread pool")
    })
}

pub(crate) static GLOBAL_REGISTRY: OnceLock<Arc<Registry>> = OnceLock::new();

/// Sets the global registry; fails if it already exists.
pub(crate) fn set_global_registry<S: ThreadSpawn>(
    builder: ThreadPoolBuilder<S>,
) -> Result<(), ThreadPoolBuildError> {
    if GLOBAL_REGISTRY.get().is_some() {
        return Err(ThreadPoolBuildError::global_already_initialized());
    }
    let registry = Registry::new(builder)?;
    GLOBAL_REGISTRY.set(registry).map_err(|registry| {
        // Another thread initialised it first: shut ours down again.
        registry.terminate();
        unregister_current_thread(&registry);
        registry.join_threads();
        ThreadPoolBuildError::global_already_initialized()
    })
}

/// Calls `f` with the registry of the current pool: the calling worker's, or the global
/// pool's from outside any pool.
pub(crate) fn with_current_registry<R>(f: impl FnOnce(&Arc<Registry>) -> R) -> R {
    // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
    match unsafe { WorkerThread::current().as_ref() } {
        Some(worker) => f(worker.registry()),
        None => with_registered_worker(None, |registered| match registered {
            Some(worker) => f(worker.registry()),
            None => f(global_registry()),
        }),
    }
}

/// Runs `op` on a worker: the current one, or one of the global pool.
pub(crate) fn in_worker<OP, R>(op: OP) -> R
where
    OP: FnOnce(&WorkerThread) -> R + Send,
    R: Send,
{
    let current = WorkerThread::current();
    if current.is_null() {
        with_registered_worker(None, |registered| match registered {
            Some(worker) => op(worker),
            None => global_registry().in_worker_cold(op),
        })
    } else {
        // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
        op(unsafe { &*current })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::join::MIN_RECORDED_FORKS;

    /// The first forks recorded while running a promoted job count as old; later ones,
    /// and every fork outside such a job, carry the current epoch.
    #[test]
    fn only_the_first_forks_of_a_promoted_job_are_stamped_old() {
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let stamps = pool.install(|| {
            // SAFETY: `install` runs this on a worker of the pool.
            let worker = unsafe { &*WorkerThread::current() };
            let before = worker.fork_stamp();
            worker.old_forks_left.set(MIN_RECORDED_FORKS as u8);
            let inherited: Vec<u64> = (0..=MIN_RECORDED_FORKS)
                .map(|_| worker.fork_stamp())
                .collect();
            (before, inherited)
        });
        assert_ne!(stamps.0, LONG_AGO);
        assert_eq!(
            &stamps.1[..MIN_RECORDED_FORKS],
            &[LONG_AGO; MIN_RECORDED_FORKS]
        );
        assert_ne!(stamps.1[MIN_RECORDED_FORKS], LONG_AGO);
    }

    /// `wake_on_time` sets the calling thread's timer slack (the heartbeat thread calls
    /// it first thing).
    #[cfg(all(target_os = "linux", not(miri)))]
    #[test]
    fn the_heartbeat_thread_asks_for_a_tight_timer_slack() {
        let slack = std::thread::spawn(|| {
            wake_on_time();
            // SAFETY: PR_GET_TIMERSLACK takes no argument and returns the calling
            // thread's slack; it touches no memory of ours.
            unsafe { libc::prctl(libc::PR_GET_TIMERSLACK) }
        })
        .join()
        .unwrap();
        assert_eq!(
            libc::c_ulong::try_from(slack).ok(),
            Some(HEARTBEAT_TIMER_SLACK_NS)
        );
    }

    /// The length of the calling worker's list.
    fn list_len() -> usize {
        // SAFETY: only called on workers, whose thread-local pointer is live.
        unsafe { &*WorkerThread::current() }.jobs.len()
    }

    /// Runs `levels` levels of nested joins (2^levels - 1 forks) on a worker and returns
    /// how many of those forks were recorded on its list. (With no heartbeat ticking,
    /// no fork is old enough to be shared, so everything runs on the calling worker.)
    fn recorded_forks(levels: u32) -> usize {
        if levels == 0 {
            return 0;
        }
        let before = list_len();
        let (a, b) = crate::join(
            || usize::from(list_len() > before) + recorded_forks(levels - 1),
            || recorded_forks(levels - 1),
        );
        a + b
    }

    /// A computation that no heartbeat interrupted records only the top
    /// `MIN_RECORDED_FORKS` forks of each subtree it enters with an empty list (3 per
    /// level of a balanced tree's right spine); once a heartbeat arrived, every joined
    /// fork's slot is refilled.
    #[test]
    fn only_work_that_lasts_through_a_heartbeat_keeps_recording_forks() {
        const LEVELS: u32 = 9;
        let bound = MIN_RECORDED_FORKS * LEVELS as usize;
        let pool = ThreadPoolBuilder::new()
            .num_threads(2)
            .heartbeat_interval(Duration::from_secs(3600))
            .build()
            .unwrap();
        let lasting = pool.install(|| {
            // SAFETY: `install` runs this on a worker of the pool.
            let worker = unsafe { &*WorkerThread::current() };
            worker.shared().heartbeat.store(true, Ordering::Relaxed);
            recorded_forks(LEVELS)
        });
        assert!(
            lasting > bound,
            "{lasting} forks recorded after a heartbeat"
        );
        // The idle worker may ask for work (raising our flag) while it spins after the
        // pool starts; retry until a run saw no heartbeat or request at all.
        let quiet = (0..1000).find_map(|_| {
            let before = pool.stats().total().heartbeats;
            let recorded = pool.install(|| recorded_forks(LEVELS));
            (pool.stats().total().heartbeats == before).then_some(recorded)
        });
        let quiet = quiet.expect("some run saw no heartbeat");
        assert!(
            (MIN_RECORDED_FORKS..=bound).contains(&quiet),
            "{quiet} forks recorded without a heartbeat"
        );
    }
}
