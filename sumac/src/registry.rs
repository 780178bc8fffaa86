//! `Registry`: a pool's shared state, its build, calls into it from any thread, the
//! live count that keeps its workers, and its shutdown. Scheduling decisions are not
//! made here: see `policy.rs` for them and `SCHEDULER.md` for the design.
//!
//! Invariant: the pool's workers exit only once the live count (one for the pool, one
//! per spawned job not yet run) is zero and nothing is left for them in the queues;
//! whoever takes the count to zero wakes every member.

use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crossbeam_utils::CachePadded;

use crate::job::{JobRef, PanicPayload, StackJob};
use crate::job_list::{NextTask, RescueSlot};
use crate::latch::{FinishCount, LockLatch, WorkerLatch};
use crate::policy::{self, Mechanism, Mechanisms, GUEST_SEATS};
use crate::pool::{PanicHandler, ThreadHandler, ThreadPoolBuildError, ThreadPoolBuilder};
use crate::queues::Queues;
use crate::stats::{MeasuredCall, PoolStats, WorkerCounters, WorkerStats};
use crate::sync::thread::{self, JoinHandle};
use crate::sync::time::{self, Duration, Instant};
use crate::sync::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use crate::thread_builder::{ThreadBuilder, ThreadSpawn};

use crate::heartbeat::{self, heartbeat_main, HeartbeatPark, QuietWorker};
use crate::registration::GuestSeats;
use crate::registration::{
    self, register_current_thread, registered_with_a_live_pool, unregister_current_thread,
    with_registered_worker,
};
use crate::worker::{WorkerShared, WorkerThread};

/// A pool's shared state.
pub(crate) struct Registry {
    pub(crate) queues: Queues,
    /// The shared part of every member: the workers (`0..num_threads`), then the seats
    /// of threads outside the pool taking part in one call each ([`GuestSeats`]).
    pub(crate) workers: Box<[CachePadded<WorkerShared>]>,
    /// How many of `workers` are worker threads.
    num_workers: usize,
    /// Which guest seats are free.
    pub(crate) seats: GuestSeats,
    /// Workers in the idle phase (spinning or asleep).
    pub(crate) idle: CachePadded<AtomicUsize>,
    /// The pool's places the guests hold (`GuestPlace`; see
    /// [`Registry::leave_idle_for_shared_work`]).
    guest_places: CachePadded<AtomicUsize>,
    /// Guests spinning in a join for work others took from them, ready to run a shared
    /// fork meanwhile (`GuestTakesForks`): each counts as waiting for work.
    guests_wanting_forks: CachePadded<AtomicUsize>,
    /// When an idle worker last raised the others' flags (ns since `epoch`).
    pub(crate) last_request_ns: CachePadded<AtomicU64>,
    /// When a worker last promoted jobs (ns since `epoch`).
    pub(crate) last_promotion_ns: CachePadded<AtomicU64>,
    /// Heartbeat ticks so far (written only by whoever ticks, under `quiet`'s lock).
    pub(crate) epoch_ticks: CachePadded<AtomicU64>,
    /// When the last tick was claimed (ns since `epoch`): ticks are at least one interval
    /// apart, whoever makes them.
    last_tick_ns: CachePadded<AtomicU64>,
    /// When a spinner last looked for forks to rescue (`SpinnersRescue`; ns since
    /// `epoch`).
    last_rescue_ns: CachePadded<AtomicU64>,
    /// Members spinning for work that tick in the heartbeat thread's stead
    /// (`SpinnersTick`): while there are any, the heartbeat thread sleeps.
    tickers: CachePadded<AtomicUsize>,
    /// What the ticks remember of each member (the rescue's state); held while ticking.
    quiet: Mutex<Vec<QuietWorker>>,
    pub(crate) epoch: Instant,
    pub(crate) terminating: AtomicBool,
    pub(crate) heartbeat_interval: Duration,
    /// The heuristics this pool uses (see [`crate::policy`]).
    pub(crate) mechanisms: Mechanisms,
    /// Forced loop splits (a testing aid): every this many blocks on average, 0 for none.
    pub(crate) forced_splits: u32,
    pub(crate) heartbeat_park: HeartbeatPark,
    pub(crate) panic_handler: Option<Box<PanicHandler>>,
    pub(crate) start_handler: Option<Box<ThreadHandler>>,
    pub(crate) exit_handler: Option<Box<ThreadHandler>>,
    /// The threads the pool joins when dropped: workers it started itself
    /// ([`DefaultSpawn`](crate::DefaultSpawn)) and the heartbeat thread.
    pub(crate) threads: Mutex<Vec<JoinHandle<()>>>,
    /// [`ThreadBuilder`]s handed out and not yet dropped: workers that have not yet
    /// returned (or never will start); dropping the pool waits for zero.
    pub(crate) unfinished_workers: FinishCount,
    /// One for the pool itself until [`terminate`](Self::terminate), plus one for each
    /// spawned job (`spawn`, `spawn_fifo`, `spawn_broadcast`) not yet finished. The
    /// workers exit only once it is zero: a spawned job still running after the pool was
    /// dropped may queue work, or address a (`spawn_`)`broadcast` job to every worker.
    /// Whoever takes it to zero wakes every worker. Counting the pool itself (as Rayon's
    /// terminate count does) means one variable decides, with no second flag to read
    /// in the right order.
    pub(crate) live_spawns: CachePadded<AtomicUsize>,
    /// Per worker: whether jobs addressed to it are left out of `live_spawns`, because
    /// it may never run them. Set from the start for a worker 0 registered by
    /// `use_current_thread` (it runs no worker loop, and never runs them if the pool is
    /// dropped on another thread), and for a worker whose `ThreadBuilder` was dropped
    /// without running.
    pub(crate) inbox_uncounted: Box<[AtomicBool]>,
    /// The measured call running, if any (see [`crate::RampUp`]).
    pub(crate) measured_call: CachePadded<MeasuredCall>,
}

impl Registry {
    /// Builds the registry and starts its threads.
    pub(crate) fn new<S: ThreadSpawn>(
        builder: ThreadPoolBuilder<S>,
    ) -> Result<Arc<Registry>, ThreadPoolBuildError> {
        let (config, mut spawner) = builder.into_config()?;
        let num_threads = config.num_threads;
        // A pool built with a stack size of its own runs every call on its workers: the
        // caller's own stack may not be what the work needs (deep recursion).
        let seats = if config.mechanisms.has(Mechanism::Guests) && config.stack_size.is_none() {
            GUEST_SEATS
        } else {
            0
        };
        let members = num_threads + seats;
        let workers = (0..members)
            .map(|_| {
                CachePadded::new(WorkerShared {
                    heartbeat: std::sync::atomic::AtomicBool::new(false),
                    rescue: std::array::from_fn(|_| RescueSlot::new()),
                    next_task: NextTask::new(),
                    counters: WorkerCounters::default(),
                    #[cfg(feature = "trace")]
                    trace: crate::trace::TraceBuffer::new(),
                })
            })
            .collect();
        let registry = Arc::new(Registry {
            // A caller taking part in a one-thread pool keeps its spawned jobs private.
            queues: Queues::new(members, (num_threads == 1).then_some(num_threads)),
            workers,
            num_workers: num_threads,
            seats: GuestSeats::new(num_threads, seats),
            idle: CachePadded::new(AtomicUsize::new(0)),
            guest_places: CachePadded::new(AtomicUsize::new(0)),
            guests_wanting_forks: CachePadded::new(AtomicUsize::new(0)),
            last_request_ns: CachePadded::new(AtomicU64::new(0)),
            last_promotion_ns: CachePadded::new(AtomicU64::new(0)),
            epoch_ticks: CachePadded::new(AtomicU64::new(0)),
            last_tick_ns: CachePadded::new(AtomicU64::new(0)),
            last_rescue_ns: CachePadded::new(AtomicU64::new(0)),
            tickers: CachePadded::new(AtomicUsize::new(0)),
            quiet: Mutex::new(heartbeat::quiet_members(members)),
            epoch: time::now(),
            terminating: AtomicBool::new(false),
            heartbeat_interval: config.heartbeat_interval,
            mechanisms: config.mechanisms,
            forced_splits: config.forced_splits,
            heartbeat_park: HeartbeatPark::new(),
            panic_handler: config.panic_handler,
            start_handler: config.start_handler,
            exit_handler: config.exit_handler,
            threads: Mutex::new(Vec::with_capacity(num_threads + 1)),
            unfinished_workers: FinishCount::new(),
            live_spawns: CachePadded::new(AtomicUsize::new(1)),
            inbox_uncounted: (0..num_threads)
                .map(|index| AtomicBool::new(index == 0 && config.use_current_thread))
                .collect(),
            measured_call: CachePadded::new(MeasuredCall::new()),
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
            // Under loom the models tick themselves (`heartbeat::tick`): the heartbeat
            // thread's timed loop has no place in a model.
            if num_threads > 1 && !cfg!(loom) {
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
    #[inline]
    pub(crate) fn num_threads(&self) -> usize {
        self.num_workers
    }

    /// Per-worker counters, and those of the calls from outside the pool.
    pub(crate) fn stats(&self) -> PoolStats {
        let (workers, seats) = self.workers.split_at(self.num_workers);
        PoolStats {
            workers: workers.iter().map(|w| w.counters.snapshot()).collect(),
            callers: seats
                .iter()
                .map(|seat| seat.counters.snapshot())
                .fold(WorkerStats::default(), |sum, seat| sum + seat),
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
                None => self.in_worker_outside(op),
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

    /// Runs `op` for a thread outside every pool: on that thread, as a guest of this
    /// pool (see [`registration::as_guest`]), if a seat is free; else on a worker,
    /// blocking until it is done.
    fn in_worker_outside<OP, R>(self: &Arc<Self>, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread) -> R + Send,
        R: Send,
    {
        match self.seats.claim() {
            Some(index) => registration::as_guest(self, index, op),
            None => self.in_worker_cold(op),
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
        self.queues.inject(job.job_ref());
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
        self.queues.inject(job.job_ref());
        current.wait_until(|| job.latch.probe());
        // SAFETY: the latch is set.
        unsafe { job.into_result() }
    }

    /// Queues a spawned (heap) job: on the calling member's own deque if it is a member
    /// of this pool (its FIFO one with `fifo`), else in the pool's injector. Either way
    /// any idle member can take it at once.
    ///
    /// A spawned job does not wait on its worker's private list for a heartbeat to share
    /// it, as a fork does: the spawning worker may go on to run code that makes no forks
    /// (the rest of a scope's body, or another spawned job), and would not poll its
    /// heartbeat until that ends. A spawn allocates anyway, so a deque push (a few
    /// stores and a fence) costs it little.
    pub(crate) fn push_spawned(&self, job: JobRef, fifo: bool) {
        // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
        self.push_spawned_by(unsafe { WorkerThread::current().as_ref() }, job, fifo);
    }

    /// [`push_spawned`](Self::push_spawned) from `current`, the calling thread's member
    /// state (`None` outside every pool).
    #[inline]
    pub(crate) fn push_spawned_by(&self, current: Option<&WorkerThread>, job: JobRef, fifo: bool) {
        match current {
            Some(worker) if ptr::eq(Arc::as_ptr(&worker.registry), self) => {
                let private = worker.solo && worker.guest;
                self.queues
                    .push_spawned(worker.spawned(), job, fifo, private);
                if !private {
                    // A guest gives work away: it runs as one of the pool's busy members.
                    worker.take_place();
                }
            }
            _ => self.queues.inject(job),
        }
    }

    /// Wakes worker `index` if it sleeps (see [`crate::park`]).
    pub(crate) fn wake_worker(&self, index: usize) {
        self.queues.wake(index);
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
    pub(crate) fn call_thread_handler(&self, handler: Option<&ThreadHandler>, index: usize) {
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
            self.queues.wake_all();
        }
    }

    /// Whether the workers may exit as far as spawned jobs go: the pool was dropped and
    /// every spawned job finished.
    pub(crate) fn spawns_finished(&self) -> bool {
        self.live_spawns.load(Ordering::Acquire) == 0
    }

    /// Asks the workers to exit once all queued work and every spawned job is done.
    /// Only the first call counts.
    pub(crate) fn terminate(&self) {
        if self.terminating.swap(true, Ordering::SeqCst) {
            return;
        }
        self.release_live_unit();
        self.queues.wake_all();
        self.heartbeat_park.wake();
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

    pub(crate) fn is_terminating(&self) -> bool {
        self.terminating.load(Ordering::SeqCst)
    }

    /// A worker entered its idle phase: ask everyone for work and keep the heartbeat
    /// thread's parking decision up to date.
    pub(crate) fn enter_idle(&self, me: usize) {
        self.count_idle();
        if self.mechanisms.has(Mechanism::Requests) && self.place_free_for_idle() {
            self.raise_heartbeats(me);
        }
    }

    /// One more worker is idle (or, for a thread registered by `use_current_thread`, not
    /// acting as a worker): the heartbeat thread may now have to tick, or to park.
    pub(crate) fn count_idle(&self) {
        let before = self.idle.fetch_add(1, Ordering::SeqCst);
        let guests = self.places_held_by_guests();
        if before + 1 == self.num_threads() && !self.seats.any_claimed() {
            // The pool went idle: a parked heartbeat thread wakes to linger.
            self.heartbeat_park.wake_if_parked();
        } else if before == 0 || before == guests {
            self.unpark_heartbeat();
        }
    }

    /// The number of heartbeat ticks so far.
    #[inline]
    pub(crate) fn heartbeat_epoch(&self) -> u64 {
        self.epoch_ticks.load(Ordering::Relaxed)
    }

    /// How many members wait for work: idle workers with a place, and guests spinning
    /// for shared forks, less the queued jobs they could take (a hint).
    pub(crate) fn workers_waiting(&self) -> usize {
        (self
            .idle
            .load(Ordering::Relaxed)
            .saturating_sub(self.places_held_by_guests())
            + self.guests_wanting_forks.load(Ordering::Relaxed))
        .saturating_sub(self.queues.queued())
    }

    // Places (see `SCHEDULER.md`, guests): a pool of `num_threads` has that many; a
    // worker running work (not idle) holds one, and so does a guest from when its call
    // first gives work away or waits until it sleeps in a wait or leaves. A worker
    // takes a shared job only with a place; one is free while the idle workers
    // outnumber the places the guests hold.

    /// Whether a thread outside the pool that calls into it takes part, holding a place
    /// once its call's work spreads (unless every seat is taken).
    pub(crate) fn callers_hold_places(&self) -> bool {
        self.mechanisms.has(Mechanism::GuestPlace) && self.seats.exist()
    }

    /// How many places the guests hold (none without `GuestPlace`).
    #[inline]
    fn places_held_by_guests(&self) -> usize {
        if self.mechanisms.has(Mechanism::GuestPlace) {
            self.guest_places.load(Ordering::SeqCst)
        } else {
            0
        }
    }

    /// Shares forks (see [`Queues::push`]), waking a sleeper for them only if an idle
    /// worker would find a place free to take one.
    ///
    /// [`Queues::push`]: crate::queues::Queues::push
    #[inline]
    pub(crate) fn share_forks(&self, jobs: impl IntoIterator<Item = JobRef>) {
        self.queues.push(jobs, || self.place_free_for_idle());
    }

    /// Whether an idle worker would find a place free.
    #[inline]
    pub(crate) fn place_free_for_idle(&self) -> bool {
        let guests = self.places_held_by_guests();
        guests == 0 || guests < self.idle.load(Ordering::SeqCst) || self.is_terminating()
    }

    /// Whether a busy worker (one holding a place) may take another shared job: the
    /// guests holding places have not pushed the members running work past `num_threads`.
    #[inline]
    pub(crate) fn busy_worker_keeps_place(&self) -> bool {
        let guests = self.places_held_by_guests();
        guests == 0 || guests <= self.idle.load(Ordering::SeqCst) || self.is_terminating()
    }

    /// An idle worker that saw shared work leaves its idle phase if it can take a place:
    /// one compare-and-swap on `idle`, so that two idle workers never take the same place.
    /// Returns whether it left (otherwise it is still idle).
    pub(crate) fn leave_idle_for_shared_work(&self) -> bool {
        let guests = self.places_held_by_guests();
        if guests == 0 || self.is_terminating() {
            self.leave_idle();
            return true;
        }
        let mut idle = self.idle.load(Ordering::SeqCst);
        loop {
            if idle <= guests {
                return false;
            }
            match self.idle.compare_exchange_weak(
                idle,
                idle - 1,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => {
                    self.after_leaving_idle(idle);
                    return true;
                }
                Err(actual) => idle = actual,
            }
        }
    }

    /// A guest takes a place (see `WorkerThread::take_place`).
    #[inline]
    pub(crate) fn guest_takes_place(&self) {
        if self.mechanisms.has(Mechanism::GuestPlace) {
            self.guest_places.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Guest `index`, holding a place, sleeps in a wait or leaves its call: its place is
    /// free, and a worker kept out of the shared jobs that wait is woken for them.
    #[inline]
    pub(crate) fn guest_frees_place(&self, index: usize) {
        if self.mechanisms.has(Mechanism::GuestPlace) {
            self.guest_places.fetch_sub(1, Ordering::SeqCst);
            self.unpark_heartbeat();
            self.queues
                .sleep
                .hand_off(|| self.queues.has_work_for_a_freed_place(index));
        }
    }

    /// Claims the pool-wide right to share a fork of unknown size now (see
    /// [`policy::pool_share_spacing`]).
    pub(crate) fn claim_promotion(&self) -> bool {
        let busy = self
            .num_threads()
            .saturating_sub(self.idle.load(Ordering::Relaxed));
        let spacing = policy::pool_share_spacing(self.heartbeat_interval, busy);
        self.claim_period(&self.last_promotion_ns, spacing)
    }

    /// Claims the right to act now, for the whole pool, if `period` has passed since the
    /// last claim recorded in `last` (ns since `epoch`): exactly one of the callers that
    /// find it due wins.
    fn claim_period(&self, last: &AtomicU64, period: Duration) -> bool {
        let now = u64::try_from(time::since(self.epoch).as_nanos()).unwrap_or(u64::MAX);
        let period = u64::try_from(period.as_nanos()).unwrap_or(u64::MAX);
        let before = last.load(Ordering::Relaxed);
        now.saturating_sub(before) >= period
            && last
                .compare_exchange(before, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }

    /// An idle worker renews its request for work, at most once per `period` for the
    /// whole pool (so that many spinning workers do not keep invalidating the busy
    /// workers' flag lines).
    pub(crate) fn request_work(&self, me: usize, period: Duration) {
        if self.claim_period(&self.last_request_ns, period) {
            self.raise_heartbeats(me);
        }
    }

    /// Sets every other worker's heartbeat flag (reading it first, to leave set flags'
    /// cache lines alone).
    pub(crate) fn raise_heartbeats(&self, me: usize) {
        for (index, worker) in self.workers.iter().enumerate() {
            if index != me && !worker.heartbeat.load(Ordering::Relaxed) {
                worker.heartbeat.store(true, Ordering::Relaxed);
            }
        }
    }

    pub(crate) fn leave_idle(&self) {
        let before = self.idle.fetch_sub(1, Ordering::SeqCst);
        self.after_leaving_idle(before);
    }

    /// A worker left the idle phase, `before` workers having been idle.
    fn after_leaving_idle(&self, before: usize) {
        if before == self.num_threads() || before == 1 {
            self.unpark_heartbeat();
        }
    }

    /// Whether nobody is busy: no worker runs work and no guest is in a call (the
    /// heartbeat thread lingers then, see `heartbeat_main`).
    pub(crate) fn pool_idle(&self) -> bool {
        self.idle.load(Ordering::SeqCst) >= self.num_threads() && !self.seats.any_claimed()
    }

    /// Whether the heartbeat thread must tick: ticking makes sense and no spinning member
    /// ticks in its stead.
    pub(crate) fn heartbeat_thread_needed(&self) -> bool {
        self.tickers.load(Ordering::SeqCst) == 0 && self.heartbeat_useful()
    }

    /// Whether ticking makes sense: someone is busy (a worker, or a guest) and someone
    /// could take work (an idle worker with a place, or a guest spinning for forks).
    pub(crate) fn heartbeat_useful(&self) -> bool {
        let idle = self.idle.load(Ordering::SeqCst);
        (idle > self.places_held_by_guests()
            && (idle < self.num_threads() || self.seats.any_claimed()))
            || self.guests_wanting_forks.load(Ordering::SeqCst) > 0
    }

    /// A guest starts waiting in a join for work others took from it and will run a
    /// shared fork meanwhile: it counts as waiting for work, and the heartbeat must tick
    /// for the members running that work to share.
    pub(crate) fn guest_wants_forks(&self) {
        self.guests_wanting_forks.fetch_add(1, Ordering::SeqCst);
        self.unpark_heartbeat();
    }

    /// The guest stopped spinning for forks (its wait ended, it took work, or it sleeps).
    pub(crate) fn guest_stops_wanting_forks(&self) {
        self.guests_wanting_forks.fetch_sub(1, Ordering::SeqCst);
    }

    /// A guest has work that others could take (a recorded fork, or a loop that
    /// lasted): if the heartbeat thread has parked for good, wake it, so that it ticks
    /// for the guest (and rescues its forks). While it lingers it notices by itself.
    #[inline]
    pub(crate) fn guest_needs_heartbeat(&self) {
        self.unpark_heartbeat();
    }

    /// Wakes the heartbeat thread if it parked and must tick now. Whoever changes a
    /// count that [`heartbeat_thread_needed`](Self::heartbeat_thread_needed) reads calls
    /// this afterwards: every access is sequentially consistent, and the heartbeat
    /// thread sets `parked` before it reads the counts (see [`HeartbeatPark`]), so
    /// either it sees the change or the last thread to change a count sees it parked,
    /// and sees every count as it is.
    #[inline]
    pub(crate) fn unpark_heartbeat(&self) {
        if self.heartbeat_park.is_parked() && self.heartbeat_thread_needed() {
            self.heartbeat_park.wake_if_parked();
        }
    }

    /// The calling member starts spinning for work and ticks meanwhile
    /// ([`tick_if_due`](Self::tick_if_due)); it calls
    /// [`stop_ticking`](Self::stop_ticking) before it sleeps, runs work or leaves.
    pub(crate) fn start_ticking(&self) {
        self.tickers.fetch_add(1, Ordering::SeqCst);
    }

    /// The calling member stops ticking: the heartbeat thread takes over if it must.
    pub(crate) fn stop_ticking(&self) {
        self.tickers.fetch_sub(1, Ordering::SeqCst);
        self.unpark_heartbeat();
    }

    /// When the next tick is due: one interval after the last (`None` if that is beyond
    /// the clock's range).
    pub(crate) fn next_tick_due(&self) -> Option<Instant> {
        let last = Duration::from_nanos(self.last_tick_ns.load(Ordering::Relaxed));
        self.epoch
            .checked_add(last)?
            .checked_add(self.heartbeat_interval)
    }

    /// Ticks (see [`heartbeat::tick`]) if an interval has passed since the last tick,
    /// ticking makes sense (`heartbeat_useful`) and nobody else claims this one: called
    /// by the heartbeat thread when a tick is due, and by ticking spinners as they spin.
    /// Returns whether it ticked.
    pub(crate) fn tick_if_due(&self) -> bool {
        if !self.heartbeat_useful()
            || !self.claim_period(&self.last_tick_ns, self.heartbeat_interval)
        {
            return false;
        }
        // A tick still running (claimed an interval ago, on a thread that was
        // descheduled) makes this one lapse: the next is an interval away.
        match self.quiet.try_lock() {
            Ok(mut quiet) => {
                heartbeat::tick(self, &mut quiet);
                true
            }
            Err(_) => false,
        }
    }

    /// Rescues the offered forks of members that stopped polling (see
    /// `heartbeat::rescue_quiet_workers`) if `period` has passed since the last such look
    /// by a spinner: a worker spinning for work calls it at each renewal of its request
    /// (`spinners-rescue`), so that a fork waiting behind a long leaf reaches it within
    /// two renewals instead of two ticks. Never blocks: a tick or look already running
    /// makes this one lapse.
    pub(crate) fn rescue_if_due(&self, period: Duration) {
        if !self.mechanisms.has(Mechanism::Rescue)
            || !self.claim_period(&self.last_rescue_ns, period)
        {
            return;
        }
        if let Ok(mut quiet) = self.quiet.try_lock() {
            heartbeat::rescue_quiet_workers(self, &mut quiet);
        }
    }

    /// After the heartbeat thread parked, the members polled unflagged meanwhile: the
    /// rescue counts quiet ticks afresh.
    pub(crate) fn forget_quiet_members(&self) {
        self.quiet
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .fill(QuietWorker::default());
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
            None => global_registry().in_worker_outside(op),
        })
    } else {
        // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
        op(unsafe { &*current })
    }
}
