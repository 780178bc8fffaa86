//! A worker thread: its private state, its loop, and what it does when it runs out of
//! work (see `SCHEDULER.md`).

use std::cell::Cell;
use std::mem::ManuallyDrop;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crossbeam_utils::CachePadded;

use crate::clock;
use crate::job::{JobHeader, JobRef, TAKEN};
use crate::job_list::{JobList, NextTask, RescueSlot};
use crate::latch::CountDebt;
use crate::policy::{
    self, recorded_forks_limit, ForkBudget, Mechanism, Mechanisms, ShareRequest, Stamp,
    MAX_RECORDED_FORKS, REQUESTS_PER_SPIN, SPIN_ROUNDS,
};
use crate::queues::SpawnDeques;
use crate::stats::{bump, WorkerCounters};

use crate::registry::Registry;
use crate::sync::thread;
use crate::sync::time::{self, Duration, Instant};

/// Rescue slots per worker: one for each fork it can have recorded at once (a list in a
/// pool of several workers holds only recorded join forks), so that every recorded fork
/// is on offer.
pub(crate) const RESCUE_SLOTS: usize = MAX_RECORDED_FORKS;

/// The part of a worker that other threads touch: its heartbeat flag and its counters,
/// on a cache line of their own.
pub(crate) struct WorkerShared {
    pub(crate) heartbeat: AtomicBool,
    /// The forks this worker offers to the heartbeat thread in case it stops polling:
    /// one slot per fork it can have recorded at once, so every recorded fork is on
    /// offer.
    pub(crate) rescue: [RescueSlot; RESCUE_SLOTS],
    /// The async task this worker woke last, which it runs next (see [`NextTask`]).
    pub(crate) next_task: NextTask,
    pub(crate) counters: WorkerCounters,
    #[cfg(feature = "trace")]
    pub(crate) trace: crate::trace::TraceBuffer,
}

crate::sync::thread_local! {
    pub(crate) static WORKER_THREAD: Cell<*const WorkerThread> = const { Cell::new(ptr::null()) };
}

/// A guest counted as waiting for shared forks (`guest-takes-forks`) until dropped.
struct WantingForks<'r>(&'r Registry);

impl<'r> WantingForks<'r> {
    fn start(registry: &'r Registry) -> Self {
        registry.guest_wants_forks();
        WantingForks(registry)
    }
}

impl Drop for WantingForks<'_> {
    fn drop(&mut self) {
        self.0.guest_stops_wanting_forks();
    }
}

/// A member spinning for work that ticks in the heartbeat thread's stead
/// (`spinners-tick`) while registered: from `start` until `pause` or drop.
struct Ticking<'r> {
    registry: &'r Registry,
    /// Whether this member ticks at all (the pool's `spinners-tick`).
    enabled: bool,
    on: bool,
}

impl<'r> Ticking<'r> {
    /// Registers the caller as a ticker if `ticks` (see [`WorkerThread::ticks`]).
    fn start(registry: &'r Registry, ticks: bool) -> Self {
        let mut ticking = Ticking {
            registry,
            enabled: ticks,
            on: false,
        };
        ticking.resume();
        ticking
    }

    /// Stops ticking (before a sleep): the heartbeat thread takes over if it must.
    fn pause(&mut self) {
        if self.on {
            self.on = false;
            self.registry.stop_ticking();
        }
    }

    /// Ticks again (after a sleep), if this member ticks at all.
    fn resume(&mut self) {
        if self.enabled && !self.on {
            self.on = true;
            self.registry.start_ticking();
        }
    }
}

impl Drop for Ticking<'_> {
    fn drop(&mut self) {
        self.pause();
    }
}

/// A member's own state: a worker thread's, or that of a thread outside the pool taking
/// part in one call (a *guest*, see `registration::as_guest`). Lives on that thread's
/// stack (on the heap for a `use_current_thread` registration), reachable through a
/// thread-local pointer.
pub(crate) struct WorkerThread {
    /// The pool has a single worker and this is it: nobody could ever take a fork, so
    /// `join` calls both closures directly.
    pub(crate) solo: bool,
    /// A thread outside the pool taking part in one call: it runs only its own work
    /// (its forks and spawned jobs), never shared jobs, and waits without counting as
    /// an idle worker.
    pub(crate) guest: bool,
    /// A guest holds one of the pool's places (see `SCHEDULER.md`, guests): from when it
    /// first gives work away or waits until it sleeps in a wait or leaves.
    holds_place: Cell<bool>,
    /// Which forks `join` records and how it stamps them: always 0 forks in a
    /// one-thread pool, so that the fork path tests one number for every reason to call
    /// the closures directly.
    pub(crate) budget: ForkBudget,
    /// The pool's mechanisms (see [`crate::policy::Mechanism`]).
    pub(crate) mechanisms: Mechanisms,
    /// Recorded forks not yet joined (join frames on this thread's stack), oldest first.
    pub(crate) jobs: JobList,
    /// Spawned jobs, stealable by every other member (see [`crate::queues`]): the
    /// member's deques, in place in the pool's queues (see `Queues::deques_for`), which
    /// only this thread uses while it is this member.
    spawned: NonNull<SpawnDeques>,
    /// The jobs offered in `WorkerShared::rescue`, slot by slot (as this worker last
    /// left them: the heartbeat thread may have claimed some since).
    pub(crate) offered: [Cell<Option<NonNull<JobHeader>>>; RESCUE_SLOTS],
    /// `join`s run on this worker, published through `WorkerCounters::forks` (see
    /// `ForkCounter` for why the count lives here, in a cache line of its own).
    pub(crate) forks: CachePadded<AtomicU64>,
    pub(crate) shared: NonNull<WorkerShared>,
    pub(crate) index: usize,
    /// A worker's own reference; a guest's borrows the caller's without counting it
    /// (see [`new_guest`](WorkerThread::new_guest)), so it is never dropped.
    pub(crate) registry: ManuallyDrop<Arc<Registry>>,
    /// When this member last shared forks of unknown size (`None`: never).
    pub(crate) last_promotion: Cell<Option<Instant>>,
    /// When (in [`clock`] ticks; 0: not since the last parallel loop started here) a
    /// fork of this member's that was shared came back done: whoever ran it is about to
    /// look for work again (`next-phase-split`, see `iter/driver.rs`).
    fork_came_back_at: Cell<u64>,
    /// Decrements this member owes to the count of the scope whose jobs it runs (see
    /// [`CountDebt`]).
    pub(crate) scope_debt: CountDebt,
    pub(crate) promotion_gap: Duration,
}

/// The body of worker `index`: runs jobs until the pool terminates (see
/// [`ThreadBuilder::run`](crate::ThreadBuilder::run)).
pub(crate) fn worker_main(registry: Arc<Registry>, index: usize) {
    // SAFETY: this is worker `index`'s thread, started once for it.
    let worker = unsafe { WorkerThread::new(registry, index) };
    let fork_count = worker.shared().counters.forks.attach(&worker.forks);
    WORKER_THREAD.with(|current| current.set(&worker));
    let registry = &worker.registry;
    registry.call_thread_handler(registry.start_handler.as_deref(), index);
    worker.wait_until(|| {
        registry.spawns_finished() && worker.jobs.is_empty() && !registry.queues.has_work(index)
    });
    registry.call_thread_handler(registry.exit_handler.as_deref(), index);
    // Jobs the exit handler spawned (on this worker's deques): run them here, with whatever they queue in turn. Handing them to the
    // workers still running is not enough: there may be none left (a one-worker pool,
    // or the last worker to exit), and the jobs would be lost. Nobody else queues work
    // now without also running this loop, so whoever exits last empties the queue.
    while worker.run_pending_job(true) {}
    WORKER_THREAD.with(|current| current.set(ptr::null()));
    drop(fork_count);
}

/// Settles the calling member's scope debt (see [`WorkerThread::settle_scope_debt`]): a
/// spawned job that is not a scope job calls it as it starts.
#[inline]
pub(crate) fn settle_current_scope_debt() {
    // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
    if let Some(worker) = unsafe { WorkerThread::current().as_ref() } {
        worker.settle_scope_debt();
    }
}

impl WorkerThread {
    /// The state of member `index` of `registry`, before it starts.
    ///
    /// # Safety
    /// The calling thread is the one that becomes member `index`, and no other thread is
    /// that member until this state is dropped (it owns the member's spawn deques).
    pub(crate) unsafe fn new(registry: Arc<Registry>, index: usize) -> WorkerThread {
        debug_assert!(
            !registry.seats.is_seat(index),
            "a guest is made by new_guest"
        );
        // SAFETY: the caller's contract.
        unsafe { Self::with_registry(ManuallyDrop::new(registry), index, false) }
    }

    /// The state of guest seat `index` of `registry` (see `registration::as_guest`). Its
    /// `registry` is the caller's reference, not counted again: entering and leaving a
    /// call then costs two atomic read-modify-writes fewer.
    ///
    /// # Safety
    /// As for [`new`](Self::new), and the state is dropped before `registry` is (the
    /// guest lives in the frame of the call that borrows it).
    pub(crate) unsafe fn new_guest(registry: &Arc<Registry>, index: usize) -> WorkerThread {
        debug_assert!(registry.seats.is_seat(index));
        // SAFETY: a pointer from `Arc::as_ptr` of a live `Arc`; the extra handle is never
        // dropped (a guest's `registry` is left alone in `drop`), so the count stays
        // that of the handles really held, and the caller keeps `registry` alive for
        // as long as the handle is used (our contract).
        let borrowed = unsafe { Arc::from_raw(Arc::as_ptr(registry)) };
        // SAFETY: the caller's contract.
        unsafe { Self::with_registry(ManuallyDrop::new(borrowed), index, true) }
    }

    /// `guest`: made by [`new_guest`](Self::new_guest), whose `registry` handle `drop`
    /// must leave alone (so ownership follows the constructor, not the index).
    ///
    /// # Safety
    /// As for [`new`](Self::new).
    unsafe fn with_registry(
        registry: ManuallyDrop<Arc<Registry>>,
        index: usize,
        guest: bool,
    ) -> WorkerThread {
        let promotion_gap = policy::worker_share_gap(registry.heartbeat_interval);
        // A caller taking part in a one-thread pool is that pool's one thread while it
        // runs: it records nothing, and keeps its spawned jobs to itself until it blocks
        // or leaves (see `wait_blocked`, `registration::as_guest`).
        let solo = registry.num_threads() == 1;
        let mechanisms = registry.mechanisms;
        // A guest can hand its forks to every worker.
        let sharers = registry.num_threads() + usize::from(guest);
        let fork_limit = if solo {
            0
        } else {
            recorded_forks_limit(sharers, mechanisms)
        };
        WorkerThread {
            solo,
            guest,
            holds_place: Cell::new(false),
            budget: ForkBudget::new(fork_limit, mechanisms),
            mechanisms,
            jobs: JobList::new(),
            // Used only by the calling thread, which becomes member `index` (our
            // contract), through `spawned()`.
            spawned: registry.queues.deques_for(index),
            offered: std::array::from_fn(|_| Cell::new(None)),
            forks: CachePadded::new(AtomicU64::new(0)),
            shared: NonNull::from(&*registry.workers[index]),
            index,
            last_promotion: Cell::new(None),
            fork_came_back_at: Cell::new(0),
            scope_debt: CountDebt::new(),
            promotion_gap,
            registry,
        }
    }

    /// The calling thread's worker (or guest seat), or null outside any pool.
    #[inline(always)]
    pub(crate) fn current() -> *const WorkerThread {
        WORKER_THREAD.with(Cell::get)
    }

    /// This member's own deques of spawned jobs, owner's end.
    #[inline(always)]
    pub(crate) fn spawned(&self) -> &SpawnDeques {
        // SAFETY: this thread is member `self.index` while `self` lives (a worker for its
        // life, a guest while it holds its seat), and `self.registry` keeps the queues
        // alive.
        unsafe { self.spawned.as_ref() }
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

    /// The index a user sees: a worker's, or `None` for a guest (a thread outside the
    /// pool taking part in a call is not one of the pool's threads).
    pub(crate) fn public_index(&self) -> Option<usize> {
        (!self.guest).then_some(self.index)
    }

    /// Whether jobs of this worker wait: its own list's, or ones addressed to it.
    pub(crate) fn has_pending_jobs(&self) -> bool {
        !self.jobs.is_empty()
            || self.has_own_spawned_jobs()
            || self.registry.queues.addressed(self.index) > 0
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
                job.as_ref().set_owner(&self.registry.queues, self.index);
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

    /// Whether `join` records a plain fork (rather than calling both closures
    /// directly): fewer jobs wait on the list than the budget allows.
    #[inline(always)]
    pub(crate) fn records_fork(&self) -> bool {
        self.budget.records(self.jobs.len())
    }

    /// Whether a fork whose size a parallel loop measured is recorded: up to the full
    /// budget, however much of it plain forks used up. A loop splits only to share the
    /// upper half (at a heartbeat, or at once when one item is expensive), so the half
    /// must be on the list.
    #[inline(always)]
    pub(crate) fn records_measured_fork(&self) -> bool {
        self.jobs.len() < self.budget.full()
    }

    /// Whether a fork known to be big (a loop half whose items were timed) is recorded:
    /// up to `MAX_RECORDED_FORKS`.
    #[inline(always)]
    pub(crate) fn records_big_fork(&self) -> bool {
        !self.solo && self.jobs.len() < MAX_RECORDED_FORKS
    }

    /// `join` took a recorded fork back off the list to run it inline (see
    /// [`ForkBudget::joined`]).
    #[inline(always)]
    pub(crate) fn joined_recorded_fork(&self) {
        debug_assert!(!self.solo, "a one-thread pool never records forks");
        self.budget.joined(self.jobs.is_empty());
    }

    /// A guest takes one of the pool's places, unless it holds one (a worker holds its
    /// place by its idle count: nothing to do). A guest takes it only once it gives work
    /// away or waits, so a call that ends before that costs no read-modify-write on the
    /// pool's counts (see `SCHEDULER.md`, guests).
    #[inline]
    pub(crate) fn take_place(&self) {
        if self.guest && !self.holds_place.replace(true) {
            self.registry.guest_takes_place();
        }
    }

    /// A guest frees the place it holds, if it holds one (waking a worker kept out of
    /// shared jobs that wait).
    #[inline]
    pub(crate) fn free_place(&self) {
        if self.holds_place.replace(false) {
            self.registry.guest_frees_place(self.index);
        }
    }

    /// A shared fork of this member's came back done (see `fork_came_back_at`).
    #[inline]
    pub(crate) fn fork_came_back(&self) {
        if self.mechanisms.has(Mechanism::NextPhaseSplit) {
            self.fork_came_back_at.set(clock::ticks().max(1));
        }
    }

    /// Whether a shared fork came back since the last call (which forgets it) and just
    /// now, so that the loop starting here is the next of back-to-back phases (see
    /// [`LoopTicks::is_back_to_back`](policy::LoopTicks::is_back_to_back)); one that came
    /// back earlier tells nothing of where its thief is now.
    #[inline]
    pub(crate) fn take_fork_came_back(&self) -> bool {
        let at = self.fork_came_back_at.replace(0);
        at != 0 && clock::loop_ticks().is_back_to_back(clock::ticks().wrapping_sub(at))
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
        self.budget.heartbeat();
        self.share_oldest();
    }

    /// A fork worth waking a sleeping member for was just recorded (`large-forks-at-once`):
    /// if members wait for work, share the oldest forks now, as a heartbeat would, instead
    /// of leaving them until a waiting member's request or a tick reaches this worker. A
    /// member asleep sends no requests, and the code after the fork (a sort's next
    /// partition) may not poll for a while.
    #[inline]
    pub(crate) fn share_large_fork(&self) {
        if self.mechanisms.has(Mechanism::LargeForksAtOnce) && self.registry.workers_waiting() > 0 {
            self.share_oldest();
        }
    }

    /// Moves this worker's oldest eligible forks to the shared queue, as many as members
    /// wait for work, if the sharing rules allow it now (`policy::share_now`).
    #[cold]
    #[inline(never)]
    fn share_oldest(&self) {
        let shared = self.shared();
        let registry = &*self.registry;
        let epoch = registry.heartbeat_epoch();
        let mechanisms = self.mechanisms;
        let old_enough = |job: NonNull<JobHeader>| {
            // SAFETY: jobs on our list are live.
            unsafe { job.as_ref() }
                .recorded_at
                .get()
                .old_enough(epoch, mechanisms)
        };
        let Some(oldest) = self.jobs.oldest() else {
            return;
        };
        let now = time::now();
        let request = ShareRequest {
            // SAFETY: `oldest` is on our list, hence live.
            oldest: unsafe { oldest.as_ref() }.recorded_at.get(),
            epoch,
            waiting: registry.workers_waiting(),
        };
        let wanted = policy::share_now(
            &request,
            mechanisms,
            || {
                self.last_promotion
                    .get()
                    .is_none_or(|last| now.duration_since(last) >= self.promotion_gap)
            },
            || registry.claim_promotion(),
        );
        if wanted == 0 {
            return;
        }
        self.last_promotion.set(Some(now));
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
            unsafe { job.as_ref() }.set_owner(&registry.queues, self.index);
            promoted += 1;
            return Some(JobRef(job));
        });
        registry.share_forks(oldest_jobs.take(wanted));
        if promoted > 0 {
            // A guest gives work away: it now runs as one of the pool's busy members.
            self.take_place();
        }
        bump(&shared.counters.promotions, promoted);
        #[cfg(feature = "trace")]
        shared
            .trace
            .record(self.index, crate::trace::EventKind::Promotion);
    }

    /// Runs jobs — this worker's own, then shared ones — until `done()` holds, sleeping
    /// when there are none. `done` must become true only through another thread's action
    /// that is followed by a [`Sleep::wake`](crate::sleep::Sleep::wake) of this worker (or by termination).
    pub(crate) fn wait_until(&self, done: impl Fn() -> bool) {
        if self.guest {
            return self.wait_as_guest(&done);
        }
        let mut idled = false;
        loop {
            if done() {
                if idled {
                    // Pushes that saw us searching woke nobody: pass their jobs on.
                    self.registry.queues.hand_off(self.index);
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

    /// A guest's wait: it runs its own pending work (its older forks, its spawned
    /// jobs), then shared forks (`guest-takes-forks`: pieces of the work others took
    /// from it, or of other parallel calls; never spawned jobs), then spins on `done`
    /// briefly and sleeps until whoever makes `done` true wakes it. While it spins it
    /// counts as waiting for work, so that the members running what it waits for share
    /// their forks with it; asleep, it frees its place instead (a worker may take them).
    fn wait_as_guest(&self, done: &impl Fn() -> bool) {
        self.wait_as_guest_until(done, None, true);
    }

    /// [`wait_as_guest`](Self::wait_as_guest), giving up at `deadline`: returns whether
    /// `done()` held. With `runs_jobs` false the guest runs nothing meanwhile (the
    /// workers take its spawned jobs from its deques).
    fn wait_as_guest_until(
        &self,
        done: &impl Fn() -> bool,
        deadline: Option<Instant>,
        runs_jobs: bool,
    ) -> bool {
        self.settle_scope_debt();
        // A waiting guest holds a place (freed while it sleeps), as a busy worker does.
        self.take_place();
        // The guest waits for someone: the heartbeat must run for them to share.
        self.registry.guest_needs_heartbeat();
        let ticks = self.ticks();
        let has_work = || runs_jobs && !self.spawned().is_empty();
        let takes_forks =
            runs_jobs && !self.solo && self.mechanisms.has(Mechanism::GuestTakesForks);
        let queues = &self.registry.queues;
        let fork_waits = || takes_forks && queues.queued() > 0;
        loop {
            if done() {
                return true;
            }
            if deadline.is_some_and(|deadline| time::now() >= deadline) {
                return false;
            }
            if runs_jobs && self.run_pending_job(false) {
                continue;
            }
            if fork_waits() {
                if let Some(job) = queues.take() {
                    self.run_shared(job);
                    continue;
                }
            }
            // Ticks while it spins; counted as waiting for work while it spins only (not
            // while it runs a job). Registered as a ticker first, so that starting to want
            // forks does not wake the heartbeat thread.
            let ticking = Ticking::start(&self.registry, ticks);
            let wanting = takes_forks.then(|| WantingForks::start(&self.registry));
            let start = time::now();
            let spin = policy::spin_limit(self.registry.heartbeat_interval, self.mechanisms);
            let request_period = spin / REQUESTS_PER_SPIN;
            let requests = takes_forks && self.mechanisms.has(Mechanism::Requests);
            // With `next-phase-split`, `done()` is looked at in every round, as an idle
            // worker looks at its queues: a guest waiting for the thief of its loop's
            // upper half goes on within a round of the thief's end, not SPIN_ROUNDS
            // pauses later (a phase's whole margin on a VM).
            let looks_each_round = self.mechanisms.has(Mechanism::NextPhaseSplit);
            let mut next_request = start;
            'spin: while !done() && !has_work() && !fork_waits() {
                let now = time::now();
                if now.duration_since(start) >= spin {
                    break;
                }
                if now >= next_request {
                    if requests {
                        // As an idle worker does: the members running work share at
                        // their next fork, without waiting for a tick.
                        self.registry.request_work(self.index, request_period);
                    }
                    if ticks {
                        self.tick_if_due();
                    }
                    next_request = now + request_period;
                }
                for _ in 0..SPIN_ROUNDS {
                    if looks_each_round && done() {
                        break 'spin;
                    }
                    std::hint::spin_loop();
                }
            }
            // No longer wanting forks before the heartbeat thread may take over ticking.
            drop(wanting);
            drop(ticking);
            if done() || has_work() || fork_waits() {
                continue;
            }
            // Asleep, the guest runs nothing: a worker may have its place meanwhile. (A
            // spinning guest keeps it: a wait that short is not worth a worker's wake-up.)
            self.free_place();
            self.registry.queues.sleep.sleep_private(
                self.index,
                || !done() && !has_work(),
                deadline,
            );
            self.take_place();
        }
    }

    /// A wait in a blocking primitive (a channel, a oneshot, `block_on`, a task graph's
    /// wait), until `done()` holds or `deadline` passes: returns whether `done()` held.
    ///
    /// A worker runs the pool's jobs meanwhile, as in [`wait_until`](Self::wait_until),
    /// so that a pool never deadlocks on a wait that only its own jobs can end. A guest
    /// runs none: a job it ran could end the wait's condition for another thread and
    /// then wait itself for this frame, which it buries (a rendezvous receiver with a
    /// sender nested above it); the pool's workers run the guest's spawned jobs instead.
    pub(crate) fn wait_blocked(&self, done: impl Fn() -> bool, deadline: Option<Instant>) -> bool {
        self.settle_scope_debt();
        match (self.guest, deadline) {
            (true, _) if self.solo => {
                // Blocked, a one-thread pool's caller lends its spawned jobs to the worker
                // (they may be what ends the wait).
                let queues = &self.registry.queues;
                queues.keep_private(self.index, false);
                let done = self.wait_as_guest_until(&done, deadline, false);
                queues.keep_private(self.index, true);
                done
            }
            (true, _) => self.wait_as_guest_until(&done, deadline, false),
            (false, Some(deadline)) => self.wait_until_deadline(done, deadline),
            (false, None) => {
                self.wait_until(done);
                true
            }
        }
    }

    /// [`wait_until`](Self::wait_until), but gives up at `deadline`: returns whether
    /// `done()` held.
    pub(crate) fn wait_until_deadline(&self, done: impl Fn() -> bool, deadline: Instant) -> bool {
        if self.guest {
            return self.wait_as_guest_until(&done, Some(deadline), true);
        }
        let mut idled = false;
        let finished = loop {
            if done() {
                break true;
            }
            if time::now() >= deadline {
                break done();
            }
            if self.run_pending_job(true) {
                continue;
            }
            self.idle_until_deadline(&done, deadline);
            idled = true;
        };
        if idled {
            self.registry.queues.hand_off(self.index);
        }
        finished
    }

    /// Runs one pending job, if there is one: this worker's newest own job (a fork not
    /// yet joined, or a spawned job), else the oldest job addressed to this worker, else,
    /// if `shared`, the oldest job of the shared queue. Returns whether it ran one.
    ///
    /// Running an own fork early is sound wherever this worker is: its join then finds
    /// the fork no longer LOCAL and waits for DONE, which it already is.
    ///
    /// A guest waiting in a call takes no shared job (see `SCHEDULER.md`, guests).
    #[inline]
    pub(crate) fn run_pending_job(&self, shared: bool) -> bool {
        self.run_pending(shared && !self.guest)
    }

    /// [`run_pending_job`](Self::run_pending_job) for `yield_now`: a guest, too, takes
    /// jobs shared with the pool if `shared`, in the place it holds, as the worker whose
    /// place it took would (in a one-thread pool nobody else may run them meanwhile).
    #[inline]
    pub(crate) fn yield_pending_job(&self, shared: bool) -> bool {
        self.run_pending(shared)
    }

    #[inline]
    fn run_pending(&self, shared: bool) -> bool {
        // The common case first, in a small frame: no fork of ours waits, and a spawned
        // job of ours does.
        if self.jobs.is_empty() {
            if let Some(job) = self.pop_own_spawned() {
                self.run_own_spawned(job);
                return true;
            }
            return self.run_other_pending_job(shared, false);
        }
        self.run_other_pending_job(shared, true)
    }

    /// Runs a spawned job popped from this member's own deques.
    #[inline]
    fn run_own_spawned(&self, job: JobRef) {
        // SAFETY: a job popped from our own deque is live, and only we have it.
        unsafe { job.header() }
            .share
            .store(TAKEN, Ordering::Relaxed);
        // A scope job keeps a debt to its own scope; every other kind of spawned job
        // settles it as it starts.
        // SAFETY: as above.
        unsafe { JobHeader::execute(job.0) };
    }

    /// The rest of [`run_pending_job`](Self::run_pending_job): our forks (if `forks`),
    /// then our spawned jobs (if `forks`: otherwise we found none already), then jobs of
    /// others.
    #[inline(never)]
    fn run_other_pending_job(&self, shared: bool, forks: bool) -> bool {
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
            self.settle_scope_debt();
            // SAFETY: a job popped from our own list is live and LOCAL; marking it
            // TAKEN gives us the right to run it.
            unsafe {
                let header = job.as_ref();
                header.set_owner(&self.registry.queues, self.index);
                header.share.store(TAKEN, Ordering::Relaxed);
                JobHeader::execute(job);
            }
            return true;
        }
        let queues = &self.registry.queues;
        if forks {
            if let Some(job) = self.pop_own_spawned() {
                self.run_own_spawned(job);
                return true;
            }
        }
        // Leaving our own spawned jobs: whatever we owe must not wait behind other work.
        self.settle_scope_debt();
        if let Some(job) = queues.take_addressed(self.index) {
            self.run_shared(job);
            return true;
        }
        // A guest holds its own place.
        if shared && (self.guest || self.registry.busy_worker_keeps_place()) {
            if let Some(job) = queues.take() {
                self.run_shared(job);
                return true;
            }
            if let Some(job) = queues.steal(self.index, self.spawned()) {
                // SAFETY: a stolen job is live, and only we have it.
                unsafe { job.header() }
                    .share
                    .store(TAKEN, Ordering::Relaxed);
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
    fn spin_for_work(&self, done: &impl Fn() -> bool, ticks: bool) -> bool {
        let registry = &*self.registry;
        let members = registry.queues.members();
        let cursor = Cell::new(self.index);
        let work_or_done = || {
            let next = (cursor.get() + 1) % members;
            cursor.set(next);
            (registry.queues.glance(self.index, next) && self.may_take_what_it_glanced()) || done()
        };
        let start = time::now();
        let spin_limit = policy::spin_limit(registry.heartbeat_interval, self.mechanisms);
        let request_period = spin_limit / REQUESTS_PER_SPIN;
        let mut next_request = start + request_period;
        if ticks {
            self.tick_if_due();
        }
        loop {
            for _ in 0..SPIN_ROUNDS {
                if work_or_done() {
                    return true;
                }
                std::hint::spin_loop();
            }
            let now = time::now();
            if now.duration_since(start) >= spin_limit {
                return work_or_done();
            }
            if now >= next_request {
                // Looked at once per request period, not every round: a guest writes the
                // count of places at every call.
                if !registry.place_free_for_idle() {
                    // Without a place a spin would only take a core from the members that
                    // hold one: sleep until a place is freed (`guest_frees_place`).
                    return work_or_done();
                }
                if ticks {
                    self.tick_if_due();
                }
                if self.mechanisms.has(Mechanism::Requests) {
                    registry.request_work(self.index, request_period);
                    // After the tick, which a look holding the rescue state would make
                    // lapse; only with requests, which every member that polls answers.
                    if self.mechanisms.has(Mechanism::SpinnersRescue) {
                        registry.rescue_if_due(request_period);
                    }
                }
                next_request = now + request_period;
            }
            if now.duration_since(start) >= request_period {
                thread::yield_now();
            }
        }
    }

    /// Runs a job taken from the shared queue, the first forks it records stamped old
    /// if it was a shared fork (see [`ForkBudget::running_shared`]).
    fn run_shared(&self, job: JobRef) {
        let shared = self.shared();
        bump(&shared.counters.shared_jobs_run, 1);
        self.registry
            .measured_call
            .note_work_started(&shared.counters.first_work);
        // SAFETY: the job is live until we run it (`take` moved it to TAKEN for us).
        let stamp = unsafe { job.header() }.recorded_at.get();
        #[cfg(feature = "trace")]
        shared
            .trace
            .record(self.index, crate::trace::EventKind::JobStart);
        self.budget.running_shared(stamp, self.mechanisms, || {
            // SAFETY: `take` moved the job to TAKEN for us.
            unsafe { JobHeader::execute(job.0) };
        });
        #[cfg(feature = "trace")]
        shared
            .trace
            .record(self.index, crate::trace::EventKind::JobEnd);
    }

    /// Keeps `job`, an async task this worker woke, to run next (see [`NextTask`]); a
    /// task kept before goes on this worker's deque, where others may take it.
    ///
    /// # Safety
    /// As [`NextTask::replace`]; the caller is this worker's thread.
    pub(crate) unsafe fn keep_next_task(&self, job: JobRef) {
        // SAFETY: forwarded from the caller; this thread owns the slot.
        if let Some(displaced) = unsafe { self.shared().next_task.replace(job) } {
            self.registry.push_spawned_by(Some(self), displaced, false);
        }
    }

    /// This worker's next spawned job: the task it kept to run next, else the next job
    /// of its deques (see [`SpawnDeques::pop`]).
    #[inline(always)]
    fn pop_own_spawned(&self) -> Option<JobRef> {
        self.shared()
            .next_task
            .take()
            .or_else(|| self.spawned().pop())
    }

    /// Whether spawned jobs of this worker wait: a kept task, or jobs on its deques.
    fn has_own_spawned_jobs(&self) -> bool {
        !self.shared().next_task.is_empty() || !self.spawned().is_empty()
    }

    /// Pays the decrements this member owes to a scope's count (see [`CountDebt`]):
    /// before it runs anything but that scope's jobs from its own deque, and before it
    /// waits, sleeps or stops being a member.
    #[inline]
    pub(crate) fn settle_scope_debt(&self) {
        self.scope_debt.settle();
    }

    /// The stamp of a plain fork being recorded (see [`ForkBudget::stamp`]).
    #[inline(always)]
    pub(crate) fn fork_stamp(&self) -> Stamp {
        self.budget.stamp(self.registry.heartbeat_epoch())
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
        let queues = &registry.queues;
        self.settle_scope_debt();
        // A ticker before it counts as idle, so that its idling wakes no heartbeat thread;
        // it stops ticking only once it left the idle count, or before it sleeps.
        let mut ticking = Ticking::start(registry, self.ticks());
        registry.enter_idle(self.index);
        queues.sleep.start_searching();
        let left_idle = loop {
            if !self.spin_for_work(done, ticking.on) {
                ticking.pause();
                #[cfg(feature = "trace")]
                self.shared()
                    .trace
                    .record(self.index, crate::trace::EventKind::Sleep);
                // Sleeps unless a job it may take is queued or the wait is over (checked
                // under the lock). Sleeps are counted as they start, wake-ups as they
                // end: a worker asleep right now shows one sleep more than wake-ups.
                let counters = &self.shared().counters;
                let slept = queues.sleep.sleep(
                    self.index,
                    || !done(),
                    || {
                        self.has_own_spawned_jobs()
                            || (queues.has_work(self.index) && self.may_take_what_it_glanced())
                    },
                    || bump(&counters.sleeps, 1),
                    deadline,
                );
                if slept {
                    bump(&counters.wakeups, 1);
                    #[cfg(feature = "trace")]
                    self.shared()
                        .trace
                        .record(self.index, crate::trace::EventKind::Wake);
                }
                ticking.resume();
            }
            // Woken, or work appeared: the caller looks at everything again, holding a
            // place if the work is shared; without one the worker stays idle.
            if done()
                || self.has_own_spawned_jobs()
                || queues.addressed(self.index) > 0
                || !queues.has_work(self.index)
                || deadline.is_some_and(|deadline| time::now() >= deadline)
            {
                break false;
            }
            if registry.leave_idle_for_shared_work() {
                break true;
            }
        };
        queues.sleep.stop_searching();
        if !left_idle {
            registry.leave_idle();
        }
        drop(ticking);
    }

    /// Ticks if a tick is due (see `Registry::tick_if_due`), counting it.
    fn tick_if_due(&self) {
        if self.registry.tick_if_due() {
            bump(&self.shared().counters.ticks, 1);
        }
    }

    /// Whether this member ticks while it spins for work (`spinners-tick`; never in the
    /// loom models, which tick on a model thread of their own).
    fn ticks(&self) -> bool {
        !cfg!(loom) && self.mechanisms.has(Mechanism::SpinnersTick)
    }

    /// Whether this idle worker may take the work a glance found: a job addressed to it
    /// needs no place, a shared one does (see `Registry::leave_idle_for_shared_work`).
    #[inline]
    fn may_take_what_it_glanced(&self) -> bool {
        self.registry.queues.addressed(self.index) > 0 || self.registry.place_free_for_idle()
    }
}

impl Drop for WorkerThread {
    fn drop(&mut self) {
        self.settle_scope_debt();
        if let Some(task) = self.shared().next_task.take() {
            // Not this thread's to run any more (a `use_current_thread` registration
            // ending): every member may take it.
            self.registry.queues.inject(task);
        }
        if self.guest {
            // The seat's deques stay where they are, with any jobs left on them.
            if self.solo && !self.spawned().is_empty() {
                // Jobs the caller leaves behind are the worker's now. (Without any, the
                // seat may stay private: nobody pushes to it before its next caller,
                // which keeps its jobs private too.)
                self.registry.queues.keep_private(self.index, false);
            }
        } else {
            // SAFETY: a worker's own reference, not used again.
            unsafe { ManuallyDrop::drop(&mut self.registry) };
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::policy::MIN_RECORDED_FORKS;
    use crate::ThreadPoolBuilder;

    /// The first forks recorded while running a promoted job count as old; later ones,
    /// and every fork outside such a job, carry the current epoch.
    #[test]
    fn only_the_first_forks_of_a_promoted_job_are_stamped_old() {
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let stamps = pool.install(|| {
            // SAFETY: `install` runs this on a worker of the pool.
            let worker = unsafe { &*WorkerThread::current() };
            let before = worker.fork_stamp();
            worker.budget.set_old_left(MIN_RECORDED_FORKS as u8);
            let inherited: Vec<Stamp> = (0..=MIN_RECORDED_FORKS)
                .map(|_| worker.fork_stamp())
                .collect();
            (before, inherited)
        });
        assert_ne!(stamps.0, Stamp::LONG_AGO);
        assert_eq!(
            &stamps.1[..MIN_RECORDED_FORKS],
            &[Stamp::LONG_AGO; MIN_RECORDED_FORKS]
        );
        assert_ne!(stamps.1[MIN_RECORDED_FORKS], Stamp::LONG_AGO);
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
