//! Loom models of the hand-off protocol, on the production queues, sleep state, jobs and
//! latches.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p sumac --lib --release loom_ -- --test-threads=1`.
//!
//! # Driven as in production
//! Every piece that hands a job or a wake-up from one thread to another is built only from
//! `crate::sync` types, and the models call it directly:
//! - [`Queues`]: shared forks (`push`, `take`, `reclaim`), inboxes (`push_to`,
//!   `take_addressed`), the injector (`inject`), each member's [`SpawnDeques`]
//!   (`push_spawned`, the owner's `pop`, `steal`), `has_work`, `glance` and `hand_off`.
//!   Under loom, `crate::sync::deque` replaces crossbeam's deques by a lock-based stand-in
//!   with the same interface: crossbeam checks its deque, these models check what sumac
//!   builds on it;
//! - [`Sleep`](crate::sleep::Sleep): `start_searching`, `sleep`, `sleep_private`,
//!   `stop_searching`, `new_work`, `hand_off`, `wake` and `wake_all`;
//! - the jobs ([`JoinFrame`], [`StackJob`], [`HeapJob`]), their `share` state machine,
//!   `JobHeader::execute` and the completion's wake-up of the owner;
//! - a member's fork list ([`JobList`]), rescue offers ([`RescueSlot`]) and the slot of
//!   the task it woke last ([`NextTask`], with the claim of `release_waiting_tasks`);
//! - the latches ([`LockLatch`], a thread-owned [`CountLatch`], [`FinishCount`]) and the
//!   ordered searches' published best position (`iter::find::Best`).
//!
//! # Mirrored, and why
//! Whole pools run under loom in `loom_pool.rs` (`crate::sync` supplies loom's threads,
//! thread-locals and a model clock), but a whole pool's models grow fast with every
//! member and step, so the finer interleavings below (several forks, promotions,
//! rescues, two searching workers) are still explored on small mirrors: the steps of
//! `WorkerThread` and `Registry` that call the pieces above are mirrored here, in the
//! same order, on a [`Member`] (a worker's or a guest's own state: its index,
//! fork list, spawn deques and rescue offers) of a [`Pool`] (the registry's queues, rescue
//! slots, `terminating` flag and live count):
//! - [`Member::wait_until`], [`Member::run_pending_job`], [`Member::idle_until`] and
//!   [`Member::spin_for_work`] mirror the `WorkerThread` functions of those names
//!   (`idle_until` without a deadline: loom has no clock). The spin is its first look,
//!   one `Queues::glance`: it only decides whether to call `Sleep::sleep`, whose own
//!   re-checks (the wait's condition under the lock, `has_work` after registering) see
//!   everything a glance sees, so more looks add interleavings but no outcome; its time
//!   limit, work requests and yields hand nothing off. `enter_idle`/`leave_idle` (the
//!   heartbeat thread's count of idle workers, a scheduling hint) are left out;
//! - [`Member::wait_as_guest_until`] mirrors the `WorkerThread` function of that name,
//!   the wait of a thread outside the pool taking part in a call (`wait_blocked` passes
//!   `runs_jobs` false);
//! - [`Member::push_fork`], [`Member::withdraw_offer`] and [`Member::remove_claimed`]
//!   mirror the `WorkerThread` functions of those names; [`Member::promote`] mirrors
//!   `on_heartbeat` once the policy decided how many forks to share (every fork in these
//!   models is old enough);
//! - [`Member::join`] mirrors `join_recorded` (without its `catch_unwind`: no closure
//!   here panics) and [`Member::join_shared`] mirrors `join_shared`;
//! - [`spawn`] mirrors `spawn_in` with `Registry::push_spawned`, [`spawn_in_scope`]
//!   mirrors `scope.rs`'s `spawn_into`, and [`WorkerCount`] a `CountLatch` owned by a
//!   worker (which holds an `Arc<Registry>`);
//! - [`rescue_tick`] mirrors the claim in the heartbeat thread's `rescue_quiet_workers`;
//! - [`worker_main`] mirrors `worker_main` (no start or exit handler), and [`Pool`]'s
//!   methods the `Registry` methods of the same names.
//!
//! A change to one of these production functions must be made to its mirror too.
//!
//! # What a failure looks like
//! The closures write into a [`Slot`] (a loom `UnsafeCell`), and the thread that waited
//! for them reads it afterwards: if the waiter could return before the runner published
//! completion with a happens-before edge, loom reports the unsynchronised access. A lost
//! wake-up leaves a thread blocked forever, which loom reports as a deadlock; a job left
//! in a queue leaks the loom objects it holds, which loom reports too.
//!
//! Every model records its steps with [`note`]; when a model fails, the steps of the
//! failing execution are printed (set `SUMAC_LOOM_PRINT_STEPS=1` to print them all as
//! they happen).

use std::cell::Cell;
use std::mem::ManuallyDrop;
use std::panic;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicUsize};
use loom::sync::Arc;
use loom::thread;

use crate::job::{HeapJob, JobHeader, JobRef, JoinFrame, StackJob, DONE, LOCAL, QUEUED, TAKEN};
use crate::job_list::{JobList, NextTask, RescueSlot};
use crate::latch::{CountLatch, FinishCount, Latch, LockLatch};
use crate::queues::{Queues, SpawnDeques};

// ---------------------------------------------------------------------------------------
// Model plumbing
// ---------------------------------------------------------------------------------------

/// Explores the interleavings of `f`: all of them if `preemption_bound` is `None`, else
/// those with at most that many preemptions (`LOOM_MAX_PREEMPTIONS` overrides it). The
/// bounds below keep each model within half a minute on two cores; a model whose
/// interleavings grow fastest gets the lowest bound, never below the one its documented
/// failure needs. Prints how many executions it explored (see `--nocapture`); if one
/// fails, prints the steps it took (see [`note`]).
pub(crate) fn model(preemption_bound: Option<usize>, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = preemption_bound;
    }
    let bound = builder.preemption_bound;
    let executions = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&executions);
    let _print_trace_on_failure = PrintTraceOnPanic;
    builder.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        TRACE.lock().unwrap().clear();
        f();
    });
    let name = std::thread::current().name().unwrap_or("?").to_owned();
    println!(
        "{name}: {} executions (preemption bound {bound:?})",
        executions.load(Ordering::Relaxed)
    );
}

/// The steps of the current execution, as recorded by [`note`]; printed if it fails.
static TRACE: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Records a step in the current execution's trace (and prints it at once if
/// `SUMAC_LOOM_PRINT_STEPS` is set). Loom runs all the model's threads on one OS thread,
/// one at a time, so a std mutex is fine.
pub(crate) fn note(event: std::fmt::Arguments<'_>) {
    let thread = format!("{:?}", thread::current().id());
    if std::env::var_os("SUMAC_LOOM_PRINT_STEPS").is_some() {
        eprintln!("step {thread}: {event}");
    }
    if let Ok(mut trace) = TRACE.lock() {
        trace.push(format!("{thread}: {event}"));
    }
}

/// Prints the failing execution's trace when a model fails.
struct PrintTraceOnPanic;

impl Drop for PrintTraceOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            if let Ok(trace) = TRACE.lock() {
                eprintln!("steps of the failing execution:\n  {}", trace.join("\n  "));
            }
        }
    }
}

/// Data that a job writes and its waiter reads, with loom checking that the two
/// accesses are ordered by happens-before.
pub(crate) struct Slot(UnsafeCell<usize>);

// SAFETY: every access goes through loom's `UnsafeCell`, which fails the model on any
// pair of accesses not ordered by happens-before: unsynchronised sharing is exactly
// what the models look for, and it never goes unnoticed.
unsafe impl Sync for Slot {}

impl Slot {
    pub(crate) fn new() -> Arc<Slot> {
        Arc::new(Slot(UnsafeCell::new(0)))
    }

    pub(crate) fn write(&self, value: usize) {
        // SAFETY: loom checks that no other access to the cell is concurrent with this one.
        self.0.with_mut(|p| unsafe { *p = value });
    }

    pub(crate) fn read(&self) -> usize {
        // SAFETY: loom checks that no write to the cell is concurrent with this read.
        self.0.with(|p| unsafe { *p })
    }
}

/// A closure for `b` that counts its runs, writes `value` into a fresh slot and returns
/// `value`; and the counter and slot, to check on it afterwards.
#[allow(clippy::type_complexity)]
fn checked_closure(value: usize) -> (impl FnOnce() -> usize + Send, Arc<AtomicUsize>, Arc<Slot>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let slot = Slot::new();
    let closure = {
        let (runs, slot) = (Arc::clone(&runs), Arc::clone(&slot));
        move || {
            runs.fetch_add(1, Ordering::Relaxed);
            slot.write(value);
            value
        }
    };
    (closure, runs, slot)
}

/// Checks, once the wait for `checked_closure(value)` returned `result`, that the
/// closure ran exactly once and that its run happened before the wait returned.
fn check_ran_once(value: usize, result: usize, runs: &AtomicUsize, slot: &Slot) {
    assert_eq!(result, value, "the wait returned the closure's result");
    // Relaxed on purpose: only the hand-off's happens-before edge makes the run visible.
    assert_eq!(
        runs.load(Ordering::Relaxed),
        1,
        "the closure ran exactly once"
    );
    assert_eq!(
        slot.read(),
        value,
        "the closure's write happened before its wait returned"
    );
}

// ---------------------------------------------------------------------------------------
// The pool and its members (mirrors of `Registry` and `WorkerThread`)
// ---------------------------------------------------------------------------------------

/// Rescue slots per member. Production has `worker::RESCUE_SLOTS` (one per fork a worker
/// may have recorded); the models record at most two forks at once.
const RESCUE_SLOTS: usize = 2;

/// The parts of a `Registry` that take part in hand-offs: its queues and sleep state,
/// each member's rescue slots (`WorkerShared::rescue`), `terminating`, and `live_spawns`
/// (one unit for the pool itself until it terminates, plus one per unfinished spawned
/// job).
struct Pool {
    queues: Queues,
    rescue: Box<[[RescueSlot; RESCUE_SLOTS]]>,
    terminating: AtomicBool,
    live_spawns: AtomicUsize,
}

/// A pool shared by the model's threads. A std `Arc`: its count plays no part in any
/// hand-off, and loom would make every clone a scheduling point.
type PoolRef = std::sync::Arc<Pool>;

impl Pool {
    fn new(members: usize) -> PoolRef {
        std::sync::Arc::new(Pool {
            queues: Queues::new(members),
            rescue: (0..members)
                .map(|_| std::array::from_fn(|_| RescueSlot::new()))
                .collect(),
            terminating: AtomicBool::new(false),
            live_spawns: AtomicUsize::new(1),
        })
    }

    /// Mirrors `Registry::spawn_started(None)`: counts a spawned job unless the count is
    /// zero already, and says whether it did.
    fn spawn_started(&self) -> bool {
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

    /// Mirrors `Registry::release_live_unit` (`finish_spawned_job` and `terminate` call
    /// it).
    fn release_live_unit(&self) {
        if self.live_spawns.fetch_sub(1, Ordering::AcqRel) == 1 {
            note(format_args!("the last live unit wakes the workers"));
            self.queues.wake_all();
        }
    }

    /// Mirrors `Registry::spawns_finished`.
    fn spawns_finished(&self) -> bool {
        self.live_spawns.load(Ordering::Acquire) == 0
    }

    /// Mirrors `Registry::terminate` (without the heartbeat thread's notification).
    fn terminate(&self) {
        if self.terminating.swap(true, Ordering::SeqCst) {
            return;
        }
        note(format_args!("terminate"));
        self.release_live_unit();
        self.queues.wake_all();
    }

    /// Mirrors `Registry::push_spawned`: on the calling member's own deque, else (a
    /// thread outside the pool) into the injector.
    fn push_spawned(&self, member: Option<&Member>, job: JobRef, fifo: bool) {
        match member {
            Some(member) => self.queues.push_spawned(&member.spawned, job, fifo, false),
            None => self.queues.inject(job),
        }
    }
}

/// A heap job counted in the pool's live count, as `spawn_in` and a task's `schedule`
/// count theirs: it runs `func`, then gives its unit back (`finish_spawned_job`).
fn counted_job(pool: &PoolRef, func: impl FnOnce() + Send + 'static) -> JobRef {
    let counted = pool.spawn_started();
    let pool = PoolRef::clone(pool);
    HeapJob::into_job_ref(move || {
        func();
        if counted {
            pool.release_live_unit();
        }
    })
}

/// Mirrors `spawn_in`: counts the job in the pool's live count, and pushes it on
/// `member`'s deque (the calling member's, or `None` for a thread outside the pool). The
/// job runs `func`, then gives its unit back (`finish_spawned_job`).
fn spawn(pool: &PoolRef, member: Option<&Member>, func: impl FnOnce() + Send + 'static) {
    let job = counted_job(pool, func);
    pool.push_spawned(member, job, false);
    note(format_args!(
        "spawned {job:?} {}",
        match member {
            Some(member) => format!("on member {}'s deque", member.index),
            None => "into the injector".to_owned(),
        }
    ));
}

/// Mirrors a `CountLatch` owned by a worker (a scope's count of unfinished jobs, plus one
/// for its body): the decrement that reaches zero wakes the owner through the pool.
struct WorkerCount {
    pending: AtomicUsize,
    pool: PoolRef,
    index: usize,
}

impl WorkerCount {
    fn new(owner: &Member) -> Arc<WorkerCount> {
        Arc::new(WorkerCount {
            pending: AtomicUsize::new(1),
            pool: PoolRef::clone(&owner.pool),
            index: owner.index,
        })
    }

    fn increment(&self) {
        self.pending.fetch_add(1, Ordering::Relaxed);
    }

    fn decrement(&self) {
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.pool.queues.wake(self.index);
        }
    }

    /// The owner drops its share and waits until the count is zero.
    fn release_and_wait(&self, owner: &Member) {
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            return;
        }
        owner.wait_until(|| self.pending.load(Ordering::Acquire) == 0);
    }
}

/// Mirrors `scope.rs`'s `spawn_into`: `func` as a job of the scope counted by `count`,
/// on the owner's deque (its FIFO one with `fifo`).
fn spawn_in_scope(
    owner: &Member,
    count: &Arc<WorkerCount>,
    func: impl FnOnce() + Send + 'static,
    fifo: bool,
) {
    count.increment();
    let job = {
        let count = Arc::clone(count);
        HeapJob::into_job_ref(move || {
            func();
            count.decrement();
        })
    };
    owner.pool.push_spawned(Some(owner), job, fifo);
    note(format_args!(
        "member {} spawned {job:?} in its scope",
        owner.index
    ));
}

/// A member's own state (`WorkerThread`): a worker's, or a guest's (a thread outside the
/// pool taking part in one call).
struct Member {
    pool: PoolRef,
    index: usize,
    guest: bool,
    /// Recorded forks not yet joined, oldest first.
    jobs: JobList,
    spawned: ManuallyDrop<SpawnDeques>,
    /// The jobs offered in `pool.rescue[index]`, as this member last left them.
    offered: [Cell<Option<NonNull<JobHeader>>>; RESCUE_SLOTS],
}

impl Member {
    /// Mirrors `WorkerThread::new` (the thread becomes member `index`).
    fn new(pool: &PoolRef, index: usize, guest: bool) -> Member {
        Member {
            pool: PoolRef::clone(pool),
            index,
            guest,
            jobs: JobList::new(),
            // SAFETY: each model makes member `index` on one thread only, and a guest's
            // drop returns its deques before another thread becomes that member.
            spawned: ManuallyDrop::new(unsafe { pool.queues.deques_for(index) }),
            offered: std::array::from_fn(|_| Cell::new(None)),
        }
    }

    fn queues(&self) -> &Queues {
        &self.pool.queues
    }

    /// Mirrors `WorkerThread::push_fork`.
    ///
    /// # Safety
    /// As `WorkerThread::push_fork`.
    unsafe fn push_fork(&self, job: NonNull<JobHeader>) -> Option<NonNull<JobHeader>> {
        // SAFETY: forwarded from the caller.
        let older = unsafe { self.jobs.push(job) };
        let free = self.offered.iter().position(|slot| slot.get().is_none());
        let slot = free.expect("more recorded forks than rescue slots");
        // SAFETY: the caller keeps the job live as `RescueSlot::offer` requires, and it is
        // LOCAL with its owner recorded just before.
        unsafe {
            job.as_ref().set_owner(self.queues(), self.index);
            self.pool.rescue[self.index][slot].offer(job);
        }
        self.offered[slot].set(Some(job));
        note(format_args!(
            "member {} recorded {job:?}, offered in slot {slot}",
            self.index
        ));
        older
    }

    /// Mirrors `WorkerThread::withdraw_offer`.
    fn withdraw_offer(&self, job: NonNull<JobHeader>) -> bool {
        let Some(slot) = self.offer_slot(job) else {
            return true;
        };
        let withdrawn = self.pool.rescue[self.index][slot].withdraw(job);
        note(format_args!(
            "member {} withdrew slot {slot}: {withdrawn}",
            self.index
        ));
        if withdrawn {
            self.offered[slot].set(None);
        }
        withdrawn
    }

    fn offer_slot(&self, job: NonNull<JobHeader>) -> Option<usize> {
        self.offered.iter().position(|slot| slot.get() == Some(job))
    }

    /// Mirrors `WorkerThread::remove_claimed`.
    ///
    /// # Safety
    /// `job` is an offered fork, claimed, and still on this member's list.
    unsafe fn remove_claimed(&self, job: NonNull<JobHeader>) {
        let slot = self.offer_slot(job).expect("an offered fork");
        self.offered[slot].set(None);
        // SAFETY: the caller guarantees `job` is on our list.
        unsafe { self.jobs.remove(job) };
    }

    /// Mirrors `WorkerThread::on_heartbeat` once the policy asked for `wanted` forks:
    /// shares the oldest ones whose offers it withdraws.
    fn promote(&self, wanted: usize) {
        let mut next = self.jobs.oldest();
        let oldest_jobs = std::iter::from_fn(|| loop {
            // Every fork of the models is old enough.
            let job = next?;
            // SAFETY: `job` is on our list.
            next = unsafe { self.jobs.newer(job) };
            if !self.withdraw_offer(job) {
                // The heartbeat thread claimed it and shares it; its join unlinks it.
                continue;
            }
            // SAFETY: `job` is on our list.
            unsafe { self.jobs.remove(job) };
            // SAFETY: a job on our list is live; we own it.
            unsafe { job.as_ref() }.set_owner(self.queues(), self.index);
            return Some(JobRef(job));
        });
        self.queues().push(oldest_jobs.take(wanted));
        note(format_args!(
            "member {} promoted up to {wanted} fork(s)",
            self.index
        ));
    }

    /// Mirrors `join_recorded` (`join` of a fork that goes on the list): `b` is recorded
    /// and offered, `a` runs (it may call [`promote`](Self::promote), as a heartbeat seen
    /// inside it does), then `b` runs inline or is waited for.
    fn join<RA, RB>(&self, a: impl FnOnce() -> RA, b: impl FnOnce() -> RB + Send) -> (RA, RB)
    where
        RB: Send,
    {
        let frame = JoinFrame::new(b);
        let job = frame.job_ref();
        // SAFETY: the frame is live until this function returns, and we withdraw its
        // rescue offer and remove it from the list (or wait for whoever took it) first.
        let older = unsafe { self.push_fork(job.0) };
        let result_a = a();
        if !self.withdraw_offer(job.0) {
            // SAFETY: a claimed frame stays on our list until its join removes it, here.
            unsafe { self.remove_claimed(job.0) };
            return (result_a, self.join_shared(&frame));
        }
        // Only this thread moves the frame out of LOCAL, so a relaxed load suffices.
        if frame.header().share.load(Ordering::Relaxed) == LOCAL {
            // SAFETY: LOCAL means the frame is still on our list, where `push` put it.
            unsafe { self.jobs.pop_pushed(job.0, older) };
            // SAFETY: the frame was on our list, so nobody else ran or will run it.
            let b = unsafe { frame.take_func() };
            return (result_a, b());
        }
        (result_a, self.join_shared(&frame))
    }

    /// Mirrors `join_shared`: `b` left the list (promoted, claimed, or run by this member
    /// while it waited inside `a`); take it back if nobody started it, else wait until
    /// its runner is done.
    fn join_shared<B, RB>(&self, frame: &JoinFrame<B, RB>) -> RB
    where
        B: FnOnce() -> RB + Send,
        RB: Send,
    {
        let header = frame.header();
        if header.share.load(Ordering::Relaxed) == QUEUED && self.queues().reclaim(frame.job_ref())
        {
            note(format_args!(
                "member {} reclaimed {:?}",
                self.index,
                frame.job_ref()
            ));
            // SAFETY: RECLAIMED: nobody started the job and nobody will.
            let b = unsafe { frame.take_func() };
            return b();
        }
        note(format_args!(
            "member {} waits for {:?}",
            self.index,
            frame.job_ref()
        ));
        self.wait_until(|| header.share.load(Ordering::Acquire) == DONE);
        // SAFETY: DONE was observed with acquire ordering; the result is taken once.
        match unsafe { frame.take_result() } {
            Ok(value) => value,
            Err(payload) => panic::resume_unwind(payload),
        }
    }

    /// Mirrors `WorkerThread::wait_until`.
    fn wait_until(&self, done: impl Fn() -> bool) {
        if self.guest {
            return self.wait_as_guest_until(&done, true);
        }
        let mut idled = false;
        loop {
            if done() {
                note(format_args!("member {}: wait over", self.index));
                if idled {
                    self.queues().hand_off(self.index);
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

    /// Mirrors `WorkerThread::wait_as_guest_until` without a deadline (loom has no clock).
    /// The spin before the sleep looks at the same conditions as the check after it, so
    /// the check stands for both.
    fn wait_as_guest_until(&self, done: &impl Fn() -> bool, runs_jobs: bool) {
        let has_work = || runs_jobs && !self.spawned.is_empty();
        loop {
            if done() {
                note(format_args!("guest {}: wait over", self.index));
                return;
            }
            if runs_jobs && self.run_pending_job(false) {
                continue;
            }
            if done() || has_work() {
                continue;
            }
            note(format_args!("guest {}: going to sleep", self.index));
            let slept =
                self.queues()
                    .sleep
                    .sleep_private(self.index, || !done() && !has_work(), None);
            note(format_args!(
                "guest {}: {}",
                self.index,
                if slept { "woken" } else { "did not sleep" }
            ));
        }
    }

    /// Mirrors `WorkerThread::run_pending_job`.
    fn run_pending_job(&self, shared: bool) -> bool {
        let shared = shared && !self.guest;
        let mut next = self.jobs.newest();
        while let Some(job) = next {
            // SAFETY: `job` is on our list.
            next = unsafe { self.jobs.older(job) };
            if !self.withdraw_offer(job) {
                continue;
            }
            note(format_args!(
                "member {} runs its own fork {job:?}",
                self.index
            ));
            // SAFETY: `job` is on our list.
            unsafe { self.jobs.remove(job) };
            // SAFETY: a job removed from our own list is live and LOCAL; marking it
            // TAKEN gives us the right to run it.
            unsafe {
                let header = job.as_ref();
                header.set_owner(self.queues(), self.index);
                header.share.store(TAKEN, Ordering::Relaxed);
                JobHeader::execute(job);
            }
            return true;
        }
        let queues = self.queues();
        if let Some(job) = self.spawned.pop() {
            note(format_args!(
                "member {} runs its own spawned {job:?}",
                self.index
            ));
            // SAFETY: a job popped from our own deque is live, and only we have it.
            unsafe { job.header() }
                .share
                .store(TAKEN, Ordering::Relaxed);
            // SAFETY: as above.
            unsafe { JobHeader::execute(job.0) };
            return true;
        }
        if let Some(job) = queues.take_addressed(self.index) {
            note(format_args!(
                "member {} took {job:?} from its inbox",
                self.index
            ));
            // SAFETY: `take_addressed` moved the job to TAKEN for us (`run_shared`).
            unsafe { JobHeader::execute(job.0) };
            return true;
        }
        if shared {
            if let Some(job) = queues.take() {
                note(format_args!("member {} took the fork {job:?}", self.index));
                // SAFETY: `take` moved the job to TAKEN for us (`run_shared`).
                unsafe { JobHeader::execute(job.0) };
                note(format_args!("member {} finished {job:?}", self.index));
                return true;
            }
            if let Some(job) = queues.steal(self.index, &self.spawned) {
                note(format_args!("member {} stole {job:?}", self.index));
                run_stolen(job);
                return true;
            }
        }
        false
    }

    /// Mirrors `WorkerThread::spin_for_work`: its first look (see the module
    /// documentation).
    fn spin_for_work(&self, done: &impl Fn() -> bool) -> bool {
        let queues = self.queues();
        let members = queues.members();
        queues.glance(self.index, (self.index + 1) % members) || done()
    }

    /// Mirrors `WorkerThread::idle_until_deadline` without a deadline.
    fn idle_until(&self, done: &impl Fn() -> bool) {
        let queues = self.queues();
        queues.sleep.start_searching();
        note(format_args!("member {}: idle, searching", self.index));
        if !self.spin_for_work(done) {
            let slept = queues.sleep.sleep(
                self.index,
                || !done(),
                || !self.spawned.is_empty() || queues.has_work(self.index),
                || note(format_args!("member {}: falls asleep", self.index)),
                None,
            );
            note(format_args!(
                "member {}: {}",
                self.index,
                if slept { "woken" } else { "did not sleep" }
            ));
        } else {
            note(format_args!(
                "member {}: the spin saw work or the end of its wait",
                self.index
            ));
        }
        queues.sleep.stop_searching();
    }
}

impl Drop for Member {
    /// Mirrors `WorkerThread`'s drop: a guest gives its seat's deques back.
    fn drop(&mut self) {
        // SAFETY: `spawned` is not used again.
        let deques = unsafe { ManuallyDrop::take(&mut self.spawned) };
        if self.guest {
            // SAFETY: this thread is member `self.index` until this drop returns.
            unsafe { self.pool.queues.return_deques(self.index, deques) };
        }
    }
}

/// Runs a job stolen from a deque or the injector, as `run_pending_job` does.
fn run_stolen(job: JobRef) {
    // SAFETY: a stolen job is live, and only we have it.
    unsafe { job.header() }
        .share
        .store(TAKEN, Ordering::Relaxed);
    // SAFETY: as above.
    unsafe { JobHeader::execute(job.0) };
    note(format_args!("finished the stolen {job:?}"));
}

/// Takes one shared fork, if there is one, and runs it (a thief that is no full worker).
fn take_once(pool: &Pool) {
    if let Some(job) = pool.queues.take() {
        note(format_args!("thief took {job:?}"));
        // SAFETY: `take` moved the job to TAKEN for us.
        unsafe { JobHeader::execute(job.0) };
        note(format_args!("thief finished {job:?}"));
    }
}

/// Mirrors `worker_main` for worker `index`, with no start or exit handler (so the loop
/// that runs what an exit handler queued finds nothing, and is left out).
fn worker_main(pool: &PoolRef, index: usize) {
    let worker = Member::new(pool, index, false);
    worker.wait_until(|| {
        pool.spawns_finished() && worker.jobs.is_empty() && !pool.queues.has_work(index)
    });
    note(format_args!("worker {index} exits"));
}

/// Starts worker `index` of `pool`.
fn spawn_worker(pool: &PoolRef, index: usize) -> thread::JoinHandle<()> {
    let pool = PoolRef::clone(pool);
    thread::spawn(move || worker_main(&pool, index))
}

/// Mirrors the claim in `rescue_quiet_workers`: the heartbeat thread found member
/// `index` quiet for long enough, with the fork in `slot` on offer, while another worker
/// waits for work.
fn rescue_tick(pool: &Pool, index: usize, slot: usize) {
    let slot = &pool.rescue[index][slot];
    let seen = slot.offered_addr();
    if seen == 0 {
        note(format_args!("the heartbeat thread found no offer"));
        return;
    }
    match slot.claim_if(seen) {
        Some(job) => {
            note(format_args!("the heartbeat thread claimed {job:?}"));
            pool.queues.push([job]);
        }
        None => note(format_args!("the offer was withdrawn meanwhile")),
    }
}

/// Member `index` runs `join(a, b)`; a heartbeat fires inside `a` and promotes `b`.
/// Returns `b`'s result, after checking that `b` ran exactly once, before the join
/// returned.
fn owner_join(pool: &PoolRef, index: usize, value: usize) -> usize {
    let owner = Member::new(pool, index, false);
    let (b, runs, slot) = checked_closure(value);
    let ((), result) = owner.join(|| owner.promote(1), b);
    check_ran_once(value, result, &runs, &slot);
    assert!(owner.jobs.is_empty());
    result
}

/// A spawned job from outside the pool (`spawn_in` from a plain thread, into the
/// injector) that counts its runs and sets a lock latch; returns the latch and the
/// counter.
fn spawn_counting_job(pool: &PoolRef) -> (Arc<LockLatch>, Arc<AtomicUsize>) {
    let latch = Arc::new(LockLatch::new());
    let runs = Arc::new(AtomicUsize::new(0));
    {
        let (latch, runs) = (Arc::clone(&latch), Arc::clone(&runs));
        spawn(pool, None, move || {
            runs.fetch_add(1, Ordering::Relaxed);
            // SAFETY: the latch is live: this closure holds an `Arc` of it.
            unsafe { LockLatch::set(&*latch) };
        });
    }
    (latch, runs)
}

// ---------------------------------------------------------------------------------------
// 1. promote / take / complete / join reclaims or waits
// ---------------------------------------------------------------------------------------

/// The owner promotes `b` and joins; a thief takes from the queue once. Either the owner
/// reclaims `b` and runs it inline, or the thief runs it and the owner waits (possibly
/// asleep) until DONE. Covers reclaim racing take.
#[test]
fn loom_join_promote_take_once() {
    model(None, || {
        let pool = Pool::new(2);
        let thief = {
            let pool = PoolRef::clone(&pool);
            thread::spawn(move || take_once(&pool))
        };
        owner_join(&pool, 0, 7);
        thief.join().unwrap();
    });
}

/// As above, but the thief is a full idle worker: it may go to sleep before the
/// promotion, so the push must wake it, and the owner's completion wake-up and
/// termination must reach the right sleepers.
#[test]
fn loom_join_promote_idle_worker() {
    model(Some(4), || {
        let pool = Pool::new(2);
        let thief = spawn_worker(&pool, 1);
        owner_join(&pool, 0, 7);
        pool.terminate();
        thief.join().unwrap();
    });
}

// ---------------------------------------------------------------------------------------
// 2. Spawned jobs: injector, own deques, steals, sleep and wake-up
// ---------------------------------------------------------------------------------------

/// An idle worker goes to sleep while a thread outside the pool spawns a job (into the
/// injector) and waits for it, without terminating the pool (which would wake everyone):
/// the injection must wake the worker, and the job runs exactly once.
#[test]
fn loom_injected_job_wakes_a_sleeping_worker() {
    model(Some(5), || {
        let pool = Pool::new(1);
        let worker = spawn_worker(&pool, 0);
        let (latch, runs) = spawn_counting_job(&pool);
        latch.wait();
        assert_eq!(runs.load(Ordering::Relaxed), 1);
        pool.terminate();
        worker.join().unwrap();
        assert_eq!(runs.load(Ordering::Relaxed), 1);
    });
}

/// One job injected from outside while two workers search and go to sleep: whichever
/// of them counts as searching when the job arrives, or sees it in its re-check after
/// registering as a sleeper, the job runs exactly once and nobody is left asleep with it
/// queued.
#[test]
fn loom_injected_job_with_two_searching_workers() {
    model(Some(2), || {
        let pool = Pool::new(2);
        let workers = [spawn_worker(&pool, 0), spawn_worker(&pool, 1)];
        let (latch, runs) = spawn_counting_job(&pool);
        latch.wait();
        assert_eq!(runs.load(Ordering::Relaxed), 1);
        pool.terminate();
        for worker in workers {
            worker.join().unwrap();
        }
    });
}

/// Two idle workers, two jobs injected one at a time by an outside thread that waits for
/// both before terminating: the wake-ups, the `searching` count and the wake-up chain in
/// `steal` must get both jobs run (each exactly once).
#[test]
fn loom_two_injected_jobs_two_workers() {
    model(Some(2), || {
        let pool = Pool::new(2);
        let workers = [spawn_worker(&pool, 0), spawn_worker(&pool, 1)];
        let (latch_a, runs_a) = spawn_counting_job(&pool);
        let (latch_b, runs_b) = spawn_counting_job(&pool);
        latch_a.wait();
        latch_b.wait();
        assert_eq!(runs_a.load(Ordering::Relaxed), 1);
        assert_eq!(runs_b.load(Ordering::Relaxed), 1);
        pool.terminate();
        for worker in workers {
            worker.join().unwrap();
        }
    });
}

/// A guest (member 0, a thread outside the pool taking part in a call) spawns a job on
/// its own deque (`push_spawned`) and then waits in a blocking primitive, where it runs
/// no jobs (`wait_blocked`), until the job has run; worker 1 meanwhile searches and goes
/// to sleep, re-checking `Queues::has_work` after registering. The job's producer and the
/// sleeper must see each other (no lost wake-up: loom reports a deadlock otherwise), the
/// worker steals and runs the job exactly once, and the job's wake-up of the guest (a
/// private sleeper) is not lost either.
#[test]
fn loom_spawned_job_reaches_a_worker_going_to_sleep() {
    model(Some(4), || {
        let pool = Pool::new(2);
        let worker = spawn_worker(&pool, 1);
        let guest = Member::new(&pool, 0, true);
        let done = Arc::new(AtomicBool::new(false));
        let (func, runs, slot) = checked_closure(5);
        {
            let (done, pool_in_job) = (Arc::clone(&done), PoolRef::clone(&pool));
            spawn(&pool, Some(&guest), move || {
                func();
                // As `park`'s `Unparker::unpark` for a member: the condition first, then
                // the wake-up.
                done.store(true, Ordering::Release);
                pool_in_job.queues.wake(0);
            });
        }
        guest.wait_as_guest_until(&|| done.load(Ordering::Acquire), false);
        check_ran_once(5, 5, &runs, &slot);
        drop(guest);
        pool.terminate();
        worker.join().unwrap();
    });
}

/// Worker 0 spawns a job in its scope (on its own deque, LIFO or FIFO) and completes the
/// scope, where its wait pops its own job, while member 1 steals once: the job runs
/// exactly once, by either, and the scope's wait returns only after it ran (when the
/// thief runs it, the decrement to zero wakes the owner, which may be asleep).
#[test]
fn loom_steal_races_the_owners_pop_of_a_spawned_job() {
    for fifo in [false, true] {
        model(Some(6), move || {
            let pool = Pool::new(2);
            let thief = {
                let pool = PoolRef::clone(&pool);
                thread::spawn(move || {
                    // SAFETY: this thread is member 1 of the pool, and the only one.
                    let own = unsafe { pool.queues.deques_for(1) };
                    if let Some(job) = pool.queues.steal(1, &own) {
                        note(format_args!("thief stole {job:?}"));
                        run_stolen(job);
                    }
                    // SAFETY: as above.
                    unsafe { pool.queues.return_deques(1, own) };
                })
            };
            let owner = Member::new(&pool, 0, false);
            let count = WorkerCount::new(&owner);
            let (func, runs, slot) = checked_closure(3);
            spawn_in_scope(
                &owner,
                &count,
                move || {
                    func();
                },
                fifo,
            );
            count.release_and_wait(&owner);
            check_ran_once(3, 3, &runs, &slot);
            thief.join().unwrap();
        });
    }
}

// ---------------------------------------------------------------------------------------
// 3. Latches
// ---------------------------------------------------------------------------------------

/// Mirrors `Registry::in_worker_cold`: an outside thread injects a `StackJob` with a
/// `LockLatch`, blocks on the latch, and reads the result; a worker takes and runs it.
#[test]
fn loom_stack_job_lock_latch() {
    model(None, || {
        let pool = Pool::new(1);
        let worker = spawn_worker(&pool, 0);
        let slot = Slot::new();
        let result = {
            let slot_in_job = Arc::clone(&slot);
            let job = StackJob::new(LockLatch::new(), move || {
                slot_in_job.write(11);
                13usize
            });
            pool.queues.inject(job.job_ref());
            job.latch.wait();
            // SAFETY: the latch is set.
            unsafe { job.into_result() }
        };
        assert_eq!(result, 13);
        assert_eq!(
            slot.read(),
            11,
            "the job's write is visible to the injector"
        );
        pool.terminate();
        worker.join().unwrap();
    });
}

/// Mirrors an `in_place_scope` owned by a thread outside every pool: the body spawned two
/// jobs (`increment`), which finish on two other threads (`decrement`, as in
/// `Scope::job_finished`) while the owner drops its own share and waits
/// (`release_and_wait`, as in `Scope::complete`). The owner returns only after both jobs'
/// writes, whichever decrement reaches zero, and no wake-up is lost.
#[test]
fn loom_scope_count_latch_thread_owner() {
    model(None, || {
        let latch = Arc::new(CountLatch::for_thread());
        let slots = [Slot::new(), Slot::new()];
        let jobs: Vec<_> = slots
            .iter()
            .enumerate()
            .map(|(i, slot)| {
                latch.increment();
                let (latch, slot) = (Arc::clone(&latch), Arc::clone(slot));
                thread::spawn(move || {
                    slot.write(i + 1);
                    note(format_args!("job {i} finished"));
                    // SAFETY: the latch is live (the `Arc` holds it).
                    unsafe { CountLatch::decrement(Arc::as_ptr(&latch)) };
                })
            })
            .collect();
        wait_for_both_jobs(&latch, &slots);
        for job in jobs {
            job.join().unwrap();
        }
    });
}

/// The owner's side of the two scope-count models: drops its share, waits, and checks
/// that both jobs' writes (1 and 2) happened before it returned.
fn wait_for_both_jobs(latch: &CountLatch, slots: &[Arc<Slot>; 2]) {
    latch.release_and_wait();
    note(format_args!("owner returned"));
    assert_eq!(
        (slots[0].read(), slots[1].read()),
        (1, 2),
        "every job's write happened before the owner returned"
    );
}

/// Drives `CountDebt` (production) on a thread-owned `CountLatch`: job 1 runs on thread
/// A and finishes owing its decrement; A then spawns job 2 into the same scope, which
/// takes the owed unit over (no increment), and hands it to thread B, which finishes it
/// owing too and then settles. The owner must return only after both jobs' writes: a
/// unit taken over while also paid, or paid before its job finished, would let it
/// return early.
#[test]
fn loom_scope_debt_takes_over_an_owed_unit() {
    use crate::latch::CountDebt;
    model(None, || {
        let latch = Arc::new(CountLatch::for_thread());
        let slots = [Slot::new(), Slot::new()];
        latch.increment();
        let runner_a = {
            let (latch, slots) = (Arc::clone(&latch), slots.clone());
            thread::spawn(move || {
                let debt = CountDebt::new();
                let jobs = Arc::as_ptr(&latch);
                slots[0].write(1);
                // SAFETY: job 1's unit is in the count, which keeps the latch alive.
                unsafe { debt.job_finished(jobs) };
                debt.count_job(&latch);
                note(format_args!("job 1 finished; job 2 counted"));
                let (latch, slot) = (Arc::clone(&latch), Arc::clone(&slots[1]));
                let runner_b = thread::spawn(move || {
                    let debt = CountDebt::new();
                    slot.write(2);
                    // SAFETY: job 2's unit is in the count.
                    unsafe { debt.job_finished(Arc::as_ptr(&latch)) };
                    debt.settle();
                    note(format_args!("job 2 finished and settled"));
                });
                debt.settle();
                runner_b
            })
        };
        wait_for_both_jobs(&latch, &slots);
        runner_a.join().unwrap().join().unwrap();
    });
}

/// Mirrors dropping a pool whose workers a spawn handler started: the pool counts two
/// handed-out builders (`FinishCount::add`), two threads finish them (`finish`, as a
/// `ThreadBuilder`'s drop does after `run` returns) while the dropping thread waits
/// (`wait_for_zero`, in `Registry::join_threads`). The wait must end (no lost wake-up)
/// and only after both workers' last writes.
#[test]
fn loom_pool_drop_waits_for_custom_spawned_workers() {
    model(None, || {
        let count = Arc::new(FinishCount::new());
        let slots = [Slot::new(), Slot::new()];
        let workers: Vec<_> = slots
            .iter()
            .enumerate()
            .map(|(i, slot)| {
                count.add();
                let (count, slot) = (Arc::clone(&count), Arc::clone(slot));
                thread::spawn(move || {
                    slot.write(i + 1);
                    note(format_args!("worker {i} returned"));
                    count.finish();
                })
            })
            .collect();
        count.wait_for_zero();
        note(format_args!("drop returned"));
        assert_eq!(
            (slots[0].read(), slots[1].read()),
            (1, 2),
            "both workers finished before the drop returned"
        );
        for worker in workers {
            worker.join().unwrap();
        }
    });
}

/// Mirrors `broadcast` from a thread outside the pool to a pool of one worker: the job
/// goes into the worker's inbox (`push_to`) while the worker may be spinning, deciding
/// to sleep, or asleep; the caller waits on a thread-owned `CountLatch`. The worker must
/// run the job (no lost wake-up: loom reports a deadlock otherwise), and the job's
/// write must happen before the caller returns.
#[test]
fn loom_broadcast_job_reaches_a_sleeping_worker() {
    model(None, || {
        let pool = Pool::new(1);
        let worker = spawn_worker(&pool, 0);
        let slot = Slot::new();
        {
            let latch = CountLatch::for_thread();
            latch.increment();
            let latch_ptr = LatchPtr(&latch);
            let slot_in_job = Arc::clone(&slot);
            let job = HeapJob::into_job_ref(move || {
                let latch_ptr = latch_ptr;
                slot_in_job.write(3);
                // SAFETY: the latch is live until its count reaches zero.
                unsafe { CountLatch::decrement(latch_ptr.0) };
            });
            pool.queues.push_to(0, job);
            note(format_args!("broadcaster pushed into the inbox"));
            latch.release_and_wait();
        }
        assert_eq!(
            slot.read(),
            3,
            "the job's write is visible to the broadcaster"
        );
        pool.terminate();
        worker.join().unwrap();
    });
}

/// A pointer to a latch that a job may carry (as in `broadcast`).
struct LatchPtr(*const CountLatch);

// SAFETY: `CountLatch` is `Sync` and outlives the job (its owner waits for the job).
unsafe impl Send for LatchPtr {}

// ---------------------------------------------------------------------------------------
// 4. Several owners, one queue
// ---------------------------------------------------------------------------------------

/// Two owners promote into one queue while an idle worker takes: each owner may reclaim
/// its frame, see it run by the idle worker, or see it run by the *other owner* while
/// that one waits for its own frame (and then be woken by it). Every frame runs exactly
/// once and every owner returns only after its frame is done.
#[test]
fn loom_two_owners_one_thief() {
    model(Some(2), || {
        let pool = Pool::new(3);
        let thief = spawn_worker(&pool, 2);
        let other = {
            let pool = PoolRef::clone(&pool);
            thread::spawn(move || owner_join(&pool, 1, 5))
        };
        assert_eq!(owner_join(&pool, 0, 7), 7);
        assert_eq!(other.join().unwrap(), 5);
        pool.terminate();
        thief.join().unwrap();
    });
}

/// Nested joins on one worker, with the outer fork (or both) promoted, and an idle
/// worker: while waiting for the inner fork, the owner may take its own outer fork back
/// through the queue (`take`, not `reclaim`) and run it, completing it to itself.
#[test]
fn loom_nested_joins_promoted() {
    for wanted in [1, 2] {
        model(Some(3), move || {
            let pool = Pool::new(2);
            let thief = spawn_worker(&pool, 1);
            let owner = Member::new(&pool, 0, false);
            let (b1, runs1, slot1) = checked_closure(1);
            let (b2, runs2, slot2) = checked_closure(2);
            let ((), r1) = owner.join(
                || {
                    let ((), r2) = owner.join(|| owner.promote(wanted), b2);
                    check_ran_once(2, r2, &runs2, &slot2);
                },
                b1,
            );
            check_ran_once(1, r1, &runs1, &slot1);
            assert!(owner.jobs.is_empty());
            drop(owner);
            pool.terminate();
            thief.join().unwrap();
        });
    }
}

// ---------------------------------------------------------------------------------------
// 5. A searching worker that leaves without taking the job it was counted for
// ---------------------------------------------------------------------------------------

/// A producer wakes a sleeper only if no member is searching, counting on the searcher
/// to take the job. But a searcher that is an owner waiting for its fork (in
/// `wait_until`) re-checks `done()` before taking anything, and when its fork completed
/// meanwhile it returns to its own work without taking the job. An interleaving:
///
/// 1. worker 1 (this thread) finds nothing and sleeps;
/// 2. worker 0 promotes its fork F; the push wakes worker 1, which takes and runs F
///    (DONE; `wake(0)` finds worker 0 awake) and goes back to sleep;
/// 3. worker 0 fails to reclaim F and enters `wait_until`: its first `done()` still
///    reads TAKEN (no happens-before with worker 1 yet), nothing is queued, so it goes
///    idle (`searching` = 1) and its spin then sees DONE;
/// 4. the outside thread injects job S: `searching` is 1, so nobody is woken;
/// 5. worker 0 stops searching, sees `done()` and returns to its own work.
///
/// S would stay queued while worker 1 sleeps (worker 0 going back to long-running work
/// is modelled by its thread ending, so loom would report a deadlock). The rule this
/// model checks: a member that idled during a `wait_until` and leaves it because
/// `done()` holds calls `Queues::hand_off`, which wakes a sleeper if work is left and
/// nobody searches.
#[test]
fn loom_stranded_job_after_searcher_leaves() {
    model(Some(2), || {
        let pool = Pool::new(2);
        let owner = {
            let pool = PoolRef::clone(&pool);
            thread::spawn(move || {
                owner_join(&pool, 0, 7);
            })
        };
        let outsider = {
            let pool = PoolRef::clone(&pool);
            thread::spawn(move || {
                let (latch, runs) = spawn_counting_job(&pool);
                latch.wait();
                assert_eq!(runs.load(Ordering::Relaxed), 1);
                pool.terminate();
            })
        };
        // This thread is worker 1, idle from the start.
        worker_main(&pool, 1);
        owner.join().unwrap();
        outsider.join().unwrap();
    });
}

// ---------------------------------------------------------------------------------------
// 6. Pool drop while a spawned job still runs
// ---------------------------------------------------------------------------------------

/// Mirrors `spawn` from outside a pool of two workers, then dropping the pool at once
/// (`terminate`), while the spawned job itself addresses a job to worker 1 (as
/// `spawn_broadcast` from inside a spawned job does). Worker 1 may see `terminating`
/// with nothing queued before the spawned job has run: it must not exit then, since
/// the job about to be addressed to it would never run. The count of unfinished spawned
/// jobs (plus one for the pool, given back by `terminate`) keeps both workers; whoever
/// takes it to zero wakes them (loom reports a deadlock if that wake-up can be lost).
#[test]
fn loom_pool_drop_waits_for_a_running_spawned_job() {
    model(Some(2), || {
        let pool = Pool::new(2);
        let workers = [spawn_worker(&pool, 0), spawn_worker(&pool, 1)];
        let runs = Arc::new(AtomicUsize::new(0));
        {
            let pool_in_job = PoolRef::clone(&pool);
            let runs = Arc::clone(&runs);
            spawn(&pool, None, move || {
                // Mirrors `spawn_broadcast_in` for worker 1.
                assert!(pool_in_job.spawn_started(), "the running job holds a unit");
                let addressed = {
                    let pool = PoolRef::clone(&pool_in_job);
                    HeapJob::into_job_ref(move || {
                        runs.fetch_add(1, Ordering::Relaxed);
                        pool.release_live_unit();
                    })
                };
                pool_in_job.queues.push_to(1, addressed);
                note(format_args!(
                    "spawned job addressed {addressed:?} to worker 1"
                ));
            });
        }
        pool.terminate();
        for worker in workers {
            worker.join().unwrap();
        }
        assert_eq!(
            runs.load(Ordering::Relaxed),
            1,
            "the job addressed to worker 1 ran before it exited"
        );
    });
}

// ---------------------------------------------------------------------------------------
// 7. Rescue: the heartbeat thread claims the offered fork of a worker that stopped
//    polling
// ---------------------------------------------------------------------------------------

/// Worker 0 runs `join(a, b)`, so `b` is offered for rescue; `a` runs without polling,
/// and the owner withdraws the offer when it returns. The owner's withdrawal races the
/// heartbeat thread's claim, and a claimed frame races the owner's reclaim against an
/// idle worker (asleep or not) that must be woken to take it: `b` runs exactly once,
/// before the join returns, whoever wins each race.
#[test]
fn loom_rescue_claim_races_withdraw() {
    model(Some(3), || {
        let pool = Pool::new(2);
        let thief = spawn_worker(&pool, 1);
        let heartbeat = {
            let pool = PoolRef::clone(&pool);
            thread::spawn(move || rescue_tick(&pool, 0, 0))
        };
        {
            let owner = Member::new(&pool, 0, false);
            let (b, runs, slot) = checked_closure(7);
            // `a` runs without polling.
            let ((), result) = owner.join(|| {}, b);
            check_ran_once(7, result, &runs, &slot);
            assert!(owner.jobs.is_empty());
        }
        heartbeat.join().unwrap();
        pool.terminate();
        thief.join().unwrap();
    });
}

/// Worker 0 runs `join(a1, b1)` and, inside `a1`, `join(a2, b2)`: both forks are offered,
/// each in a slot of its own. The heartbeat thread claims them in slot order (as
/// `rescue_quiet_workers` does) while the owner withdraws them innermost first: each
/// fork runs exactly once, and a claimed outer fork stays linked below the inner one
/// until its own join unlinks it.
#[test]
fn loom_rescue_claims_from_two_slots() {
    model(Some(2), || {
        let pool = Pool::new(2);
        let thief = spawn_worker(&pool, 1);
        let heartbeat = {
            let pool = PoolRef::clone(&pool);
            thread::spawn(move || {
                for slot in 0..RESCUE_SLOTS {
                    rescue_tick(&pool, 0, slot);
                }
            })
        };
        {
            let owner = Member::new(&pool, 0, false);
            let (b1, runs1, slot1) = checked_closure(11);
            let (b2, runs2, slot2) = checked_closure(22);
            let ((), r1) = owner.join(
                || {
                    // `a2` runs without polling.
                    let ((), r2) = owner.join(|| {}, b2);
                    check_ran_once(22, r2, &runs2, &slot2);
                },
                b1,
            );
            check_ran_once(11, r1, &runs1, &slot1);
            assert!(owner.jobs.is_empty());
        }
        heartbeat.join().unwrap();
        pool.terminate();
        thief.join().unwrap();
    });
}

/// A worker keeps the tasks it wakes in its production [`NextTask`] slot: it puts task
/// `a` there, then `b`, which displaces `a` to the pool, then takes what is left, while
/// the heartbeat thread claims whatever it finds there and injects it, and a worker runs
/// what reaches the pool: each task runs exactly once, whoever gets it.
#[test]
fn loom_next_task_runs_once_whether_its_owner_or_the_heartbeat_takes_it() {
    model(Some(3), || {
        let pool = Pool::new(2);
        let worker = spawn_worker(&pool, 1);
        let next = Arc::new(NextTask::new());
        let runs: [Arc<AtomicUsize>; 2] = std::array::from_fn(|_| Arc::new(AtomicUsize::new(0)));
        let [a, b] = runs.each_ref().map(|runs| {
            let runs = Arc::clone(runs);
            counted_job(&pool, move || {
                runs.fetch_add(1, Ordering::Relaxed);
            })
        });
        let heartbeat = {
            let (pool, next) = (PoolRef::clone(&pool), Arc::clone(&next));
            thread::spawn(move || {
                let seen = next.waiting_addr();
                if let Some(task) = (seen != 0).then(|| next.claim_if(seen)).flatten() {
                    note(format_args!("the heartbeat thread claimed {task:?}"));
                    pool.queues.inject(task);
                }
            })
        };
        // SAFETY: `a` and `b` are live queued jobs, put in by the slot's one owner.
        unsafe {
            assert!(next.replace(a).is_none());
            if let Some(displaced) = next.replace(b) {
                note(format_args!("{displaced:?} displaced"));
                pool.queues.inject(displaced);
            }
        }
        if let Some(task) = next.take() {
            note(format_args!("the owner runs {task:?}"));
            // SAFETY: taken from the slot, the job is ours to run.
            unsafe { JobHeader::execute(task.0) };
        }
        heartbeat.join().unwrap();
        pool.terminate();
        worker.join().unwrap();
        for runs in &runs {
            assert_eq!(
                runs.load(Ordering::Relaxed),
                1,
                "each task ran exactly once"
            );
        }
    });
}

// ---------------------------------------------------------------------------------------
// 8. The published best position of ordered searches (production code, no mirror)
// ---------------------------------------------------------------------------------------

/// The published best position of an ordered search (`iter::find::Best`), written as two
/// 64-bit halves: a reader that mixes the halves of two writes must never see a position
/// better than every one published, or it would stop a piece that may hold the answer.
/// A finder publishes `first`, then a better `second` (for `find_first`: a smaller high
/// half with a larger low half, so that the new high half with the old low half would
/// be better than both), while a piece starting at `piece` reads: it may stop only if a
/// published position is better than its start.
fn best_is_never_mixed(mode: crate::iter::find::Mode, first: u128, second: u128, piece: u128) {
    use crate::iter::find::{Best, Mode};
    let better = |published: u128| match mode {
        Mode::First => published < piece,
        _ => published > piece,
    };
    let may_stop = better(first) || better(second);
    model(Some(3), move || {
        let best = Arc::new(Best::new(mode));
        let reader = {
            let best = Arc::clone(&best);
            thread::spawn(move || best.stops(mode, piece))
        };
        best.publish(mode, first);
        best.publish(mode, second);
        let stopped = reader.join().unwrap();
        assert!(
            may_stop || !stopped,
            "a piece starting at {piece:#x} stopped, but only {first:#x} and {second:#x} \
             were published"
        );
        // Once both are published, the answer is exact.
        assert_eq!(best.stops(mode, piece), may_stop);
    });
}

#[test]
fn loom_find_first_best_is_never_mixed() {
    // first = (1, 0), second = (0, 9): the mix (0, 0) would stop a piece at (0, 5).
    best_is_never_mixed(crate::iter::find::Mode::First, 1 << 64, 9, 5);
}

#[test]
fn loom_find_last_best_is_never_mixed() {
    // first = (0, MAX), second = (1, 2): the mix (1, MAX) would stop a piece at (1, 5).
    best_is_never_mixed(
        crate::iter::find::Mode::Last,
        u64::MAX as u128,
        (1 << 64) + 2,
        (1 << 64) + 5,
    );
}
