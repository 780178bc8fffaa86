//! Loom models of the hand-off protocol.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p sumac --lib --release loom_ -- --test-threads=1`.
//!
//! `Registry` and `WorkerThread` use std threads and thread-locals, so they cannot run
//! under loom. The protocol pieces they drive — [`SharedQueue`], [`JoinFrame`],
//! [`StackJob`], [`HeapJob`], [`LockLatch`], [`CountLatch`] and the `share` state machine — are built
//! only from `crate::sync` types, so the models below drive those pieces directly, with
//! small functions that mirror, step by step, what the production callers do:
//!
//! * [`promote`] mirrors `WorkerThread::on_heartbeat` (pop the oldest job of the
//!   worker's list, record its owner, push it into the shared queue);
//! * [`join_tail`] mirrors `join_on_worker` after `a` returned, and [`join_shared`]
//!   mirrors `join_shared`;
//! * [`owner_join_offered`] mirrors `join_recorded` for a fork offered for rescue (see
//!   `RescueSlot`), and [`rescue_tick`] the heartbeat thread's `rescue_quiet_workers`;
//! * [`wait_until`] / [`idle_until`] mirror `WorkerThread::wait_until` / `idle_until`
//!   (with one spin round instead of `SPIN_ROUNDS`, and without the heartbeat-thread
//!   bookkeeping of `enter_idle` / `leave_idle`, which plays no part in hand-offs);
//! * [`worker_main`] / [`terminate`] mirror `worker_main` and `Registry::terminate`.
//!
//! The ordered searches' published best position (`iter::find::Best`) is driven
//! directly: its `publish` and `stops` are the production functions.
//!
//! The closures write into a [`Slot`] (a loom `UnsafeCell`), and the thread that waited
//! for them reads it afterwards: if the waiter could return before the runner published
//! completion with a happens-before edge, loom reports the unsynchronised access. A lost
//! wake-up leaves a thread blocked forever, which loom reports as a deadlock.
//!
//! Every mirror records its steps with [`note`]; when a model fails, the steps of the
//! failing execution are printed (set `SUMAC_LOOM_PRINT_STEPS=1` to print them all as
//! they happen). Any change to the production functions mirrored here must be reflected
//! in the mirror.

use std::cell::Cell;
use std::panic;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicUsize};
use loom::sync::Arc;
use loom::thread;

use crate::job::{HeapJob, JobHeader, JobRef, JoinFrame, StackJob, DONE, LOCAL, QUEUED, TAKEN};
use crate::job_list::{JobList, RescueSlot};
use crate::latch::{CountLatch, FinishCount, Latch, LockLatch};
use crate::shared_queue::SharedQueue;

// ---------------------------------------------------------------------------------------
// Model plumbing
// ---------------------------------------------------------------------------------------

/// Explores the interleavings of `f`: all of them if `preemption_bound` is `None`, else
/// those with at most that many preemptions (`LOOM_MAX_PREEMPTIONS` overrides it). The
/// bounds below keep each model within seconds (the largest, about 30 s) on two cores.
/// Prints how many executions it explored (see `--nocapture`); if one fails, prints the
/// steps it took (see [`note`]).
fn model(preemption_bound: Option<usize>, f: impl Fn() + Sync + Send + 'static) {
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

/// Records a step of the mirrored protocol in the current execution's trace (and prints
/// it at once if `SUMAC_LOOM_PRINT_STEPS` is set). Loom runs all the model's threads on
/// one OS thread, one at a time, so a std mutex is fine.
fn note(event: std::fmt::Arguments<'_>) {
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
struct Slot(UnsafeCell<usize>);

// SAFETY: every access goes through loom's `UnsafeCell`, which fails the model on any
// pair of accesses not ordered by happens-before: unsynchronised sharing is exactly
// what the models look for, and it never goes unnoticed.
unsafe impl Sync for Slot {}

impl Slot {
    fn new() -> Arc<Slot> {
        Arc::new(Slot(UnsafeCell::new(0)))
    }

    fn write(&self, value: usize) {
        // SAFETY: loom checks that no other access to the cell is concurrent with this one.
        self.0.with_mut(|p| unsafe { *p = value });
    }

    fn read(&self) -> usize {
        // SAFETY: loom checks that no write to the cell is concurrent with this read.
        self.0.with(|p| unsafe { *p })
    }
}

// ---------------------------------------------------------------------------------------
// Mirrors of the production callers
// ---------------------------------------------------------------------------------------

/// Mirrors `WorkerThread::on_heartbeat`: shares up to `wanted` of the oldest jobs of
/// worker `index`'s list.
fn promote(queue: &SharedQueue, index: usize, jobs: &JobList, wanted: usize) {
    let oldest_jobs = std::iter::from_fn(|| {
        let job = jobs.pop_oldest()?;
        // SAFETY: a job on our list is live; we own it.
        unsafe { job.as_ref() }.set_owner(queue, index);
        Some(JobRef(job))
    });
    queue.push(oldest_jobs.take(wanted));
    note(format_args!("worker {index} promoted {wanted} job(s)"));
}

/// Mirrors `WorkerThread::withdraw_offer` for the worker's own jobs: false if the
/// heartbeat thread claimed the job (it is shared; its join unlinks it).
type Withdraw<'a> = &'a dyn Fn(NonNull<JobHeader>) -> bool;

/// A [`Withdraw`] for a worker that offered nothing.
fn no_offers(_: NonNull<JobHeader>) -> bool {
    true
}

/// Mirrors `WorkerThread::wait_until`; `withdraw` mirrors the worker's `withdraw_offer`.
fn wait_until(
    queue: &SharedQueue,
    index: usize,
    jobs: &JobList,
    withdraw: Withdraw<'_>,
    done: impl Fn() -> bool,
) {
    let mut idled = false;
    loop {
        if done() {
            note(format_args!("worker {index}: wait over"));
            if idled {
                queue.hand_off();
            }
            return;
        }
        // Mirrors `run_pending_job`: the newest own job not claimed by the heartbeat
        // thread.
        let mut next = jobs.newest();
        let mut ran = false;
        while let Some(job) = next {
            // SAFETY: `job` is on our list.
            next = unsafe { jobs.older(job) };
            if !withdraw(job) {
                continue;
            }
            note(format_args!("worker {index} runs its own {job:?}"));
            // SAFETY: a job removed from our own list is live and LOCAL; marking it
            // TAKEN gives us the right to run it.
            unsafe {
                jobs.remove(job);
                let header = job.as_ref();
                header.set_owner(queue, index);
                header.share.store(TAKEN, Ordering::Relaxed);
                JobHeader::execute(job);
            }
            ran = true;
            break;
        }
        if ran {
            continue;
        }
        if let Some(job) = queue.take_addressed(index) {
            note(format_args!("worker {index} took {job:?} from its inbox"));
            // SAFETY: `take_addressed` moved the job to TAKEN for us.
            unsafe { JobHeader::execute(job.0) };
            continue;
        }
        if let Some(job) = queue.take(false) {
            note(format_args!("worker {index} took {job:?} from the queue"));
            // SAFETY: `take` moved the job to TAKEN for us (`WorkerThread::run_shared`).
            unsafe { JobHeader::execute(job.0) };
            note(format_args!("worker {index} finished {job:?}"));
            continue;
        }
        idle_until(queue, index, &done);
        idled = true;
    }
}

/// Mirrors `WorkerThread::idle_until` with a single spin round instead of `SPIN_ROUNDS`
/// (more rounds only repeat the same relaxed loads) and without `enter_idle` /
/// `leave_idle`.
fn idle_until(queue: &SharedQueue, index: usize, done: &impl Fn() -> bool) {
    queue.start_searching();
    note(format_args!("worker {index}: idle, searching"));
    if !(queue.queued() > 0 || queue.addressed(index) > 0 || done()) {
        note(format_args!(
            "worker {index}: spin saw nothing, going to sleep"
        ));
        let slept = queue.sleep(index, || !done(), || {});
        note(format_args!(
            "worker {index}: {}",
            if slept { "woken" } else { "did not sleep" }
        ));
    } else {
        note(format_args!(
            "worker {index}: spin saw a queued job or the end of its wait"
        ));
    }
    queue.stop_searching();
}

/// Mirrors `join_on_worker` once `a` has returned (`older` is what `JobList::push`
/// returned for the frame), and `join_shared`.
fn join_tail<B, RB>(
    queue: &SharedQueue,
    index: usize,
    jobs: &JobList,
    withdraw: Withdraw<'_>,
    frame: &JoinFrame<B, RB>,
    older: Option<NonNull<JobHeader>>,
) -> RB
where
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    let header = frame.header();
    // Only this thread moves the frame out of LOCAL, so a relaxed load suffices.
    if header.share.load(Ordering::Relaxed) == LOCAL {
        // SAFETY: LOCAL means the frame is still on our list, where `push` put it.
        unsafe { jobs.pop_pushed(frame.job_ref().0, older) };
        // SAFETY: the frame was on our list, so nobody else ran or will run it.
        let b = unsafe { frame.take_func() };
        return b();
    }
    join_shared(queue, index, jobs, withdraw, frame)
}

/// Mirrors `join_shared`: the frame left the list (promoted, or claimed by the heartbeat
/// thread); take it back if nobody started it, else wait until its runner is done.
fn join_shared<B, RB>(
    queue: &SharedQueue,
    index: usize,
    jobs: &JobList,
    withdraw: Withdraw<'_>,
    frame: &JoinFrame<B, RB>,
) -> RB
where
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    let header = frame.header();
    if header.share.load(Ordering::Relaxed) == QUEUED && queue.reclaim(frame.job_ref()) {
        note(format_args!(
            "worker {index} reclaimed {:?}",
            frame.job_ref()
        ));
        // SAFETY: RECLAIMED: nobody started the job and nobody will.
        let b = unsafe { frame.take_func() };
        return b();
    }
    note(format_args!(
        "worker {index} waits for {:?}",
        frame.job_ref()
    ));
    wait_until(queue, index, jobs, withdraw, || {
        header.share.load(Ordering::Acquire) == DONE
    });
    // SAFETY: DONE was observed with acquire ordering; the result is taken once.
    match unsafe { frame.take_result() } {
        Ok(value) => value,
        Err(payload) => panic::resume_unwind(payload),
    }
}

/// The pool's `terminating` flag and its count of live units (the pool itself plus each
/// unfinished spawned job): fields of `Registry` in production.
struct PoolState {
    terminating: AtomicBool,
    live_spawns: AtomicUsize,
}

impl PoolState {
    fn new() -> Terminating {
        Arc::new(PoolState {
            terminating: AtomicBool::new(false),
            live_spawns: AtomicUsize::new(1),
        })
    }
}

/// The pool state the workers share.
type Terminating = Arc<PoolState>;

/// Mirrors `worker_main` for worker `index` (whose own list starts and stays empty; no
/// exit handler, so the loop that runs what one queued finds nothing).
fn worker_main(queue: &SharedQueue, index: usize, pool: &PoolState) {
    let jobs = JobList::new();
    wait_until(queue, index, &jobs, &no_offers, || {
        pool.live_spawns.load(Ordering::Acquire) == 0
            && jobs.is_empty()
            && queue.queued() == 0
            && queue.addressed(index) == 0
    });
    note(format_args!("worker {index} exits"));
}

/// Mirrors `Registry::terminate` (without the heartbeat thread).
fn terminate(queue: &SharedQueue, pool: &PoolState) {
    if pool.terminating.swap(true, Ordering::SeqCst) {
        return;
    }
    note(format_args!("terminate"));
    release_live_unit(queue, pool);
    queue.wake_all();
}

/// Mirrors `Registry::spawn_started` (for a job not addressed to a registered worker
/// 0): counts the job unless the count is zero already, and says whether it did.
fn spawn_started(pool: &PoolState) -> bool {
    let mut count = pool.live_spawns.load(Ordering::Relaxed);
    loop {
        if count == 0 {
            return false;
        }
        match pool.live_spawns.compare_exchange_weak(
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

/// Mirrors `Registry::release_live_unit` (`finish_spawned_job` and `terminate` call it).
fn release_live_unit(queue: &SharedQueue, pool: &PoolState) {
    if pool.live_spawns.fetch_sub(1, Ordering::AcqRel) == 1 {
        note(format_args!("the last live unit wakes the workers"));
        queue.wake_all();
    }
}

/// Spawns worker `index` of `queue`'s pool.
fn spawn_worker(
    queue: &Arc<SharedQueue>,
    index: usize,
    terminating: &Terminating,
) -> thread::JoinHandle<()> {
    let queue = Arc::clone(queue);
    let terminating = Arc::clone(terminating);
    thread::spawn(move || worker_main(&queue, index, &terminating))
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

/// Checks, once the join that owned `checked_closure(value)` returned `result`, that the
/// closure ran exactly once and that its run happened before the join returned.
fn check_ran_once(value: usize, result: usize, runs: &AtomicUsize, slot: &Slot) {
    assert_eq!(result, value, "the join returned b's result");
    // Relaxed on purpose: only the hand-off's happens-before edge makes the run visible.
    assert_eq!(runs.load(Ordering::Relaxed), 1, "b ran exactly once");
    assert_eq!(
        slot.read(),
        value,
        "b's write happened before its join returned"
    );
}

/// Worker `index` runs `join(a, b)`; a heartbeat fires inside `a` and promotes `b`.
/// Returns `b`'s result, after checking that `b` ran exactly once, before the join returned.
fn owner_join(queue: &SharedQueue, index: usize, value: usize) -> usize {
    let jobs = JobList::new();
    let (b, runs, slot) = checked_closure(value);
    let result = {
        // `join_on_worker`: the frame lives in this stack frame.
        let frame = JoinFrame::new(b);
        // SAFETY: the frame is live until this block ends, and `join_tail` only returns
        // once the frame is off the list and was reclaimed or its runner published DONE.
        let older = unsafe { jobs.push(frame.job_ref().0) };
        // `a` runs; the heartbeat fires inside it.
        promote(queue, index, &jobs, 1);
        join_tail(queue, index, &jobs, &no_offers, &frame, older)
        // The frame is popped here.
    };
    check_ran_once(value, result, &runs, &slot);
    result
}

/// Worker `index` runs `join(a1, b1)` where `a1` runs `join(a2, b2)`; a heartbeat fires
/// inside `a2` and promotes the `wanted` oldest frames (b1 first).
fn owner_nested_join(queue: &SharedQueue, index: usize, wanted: usize) {
    let jobs = JobList::new();
    let (b1, runs1, slot1) = checked_closure(1);
    let (b2, runs2, slot2) = checked_closure(2);
    let (r1, r2) = {
        let frame1 = JoinFrame::new(b1);
        // SAFETY: as in `owner_join`.
        let older1 = unsafe { jobs.push(frame1.job_ref().0) };
        let r2 = {
            let frame2 = JoinFrame::new(b2);
            // SAFETY: as in `owner_join`.
            let older2 = unsafe { jobs.push(frame2.job_ref().0) };
            promote(queue, index, &jobs, wanted);
            join_tail(queue, index, &jobs, &no_offers, &frame2, older2)
        };
        let r1 = join_tail(queue, index, &jobs, &no_offers, &frame1, older1);
        (r1, r2)
    };
    check_ran_once(1, r1, &runs1, &slot1);
    check_ran_once(2, r2, &runs2, &slot2);
    assert!(jobs.is_empty());
}

// ---------------------------------------------------------------------------------------
// 1. promote / take / complete / join pops-or-waits
// ---------------------------------------------------------------------------------------

/// The owner promotes `b` and joins; a thief takes from the queue once. Either the owner
/// reclaims `b` and runs it inline, or the thief runs it and the owner waits (possibly
/// asleep) until DONE. Covers reclaim racing take.
#[test]
fn loom_join_promote_take_once() {
    model(None, || {
        let queue = Arc::new(SharedQueue::new(2));
        let thief = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                if let Some(job) = queue.take(false) {
                    note(format_args!("thief took {job:?}"));
                    // SAFETY: `take` moved the job to TAKEN for us.
                    unsafe { JobHeader::execute(job.0) };
                    note(format_args!("thief finished {job:?}"));
                }
            })
        };
        owner_join(&queue, 0, 7);
        thief.join().unwrap();
    });
}

/// As above, but the thief is a full idle worker (`worker_main`): it may go to sleep
/// before the promotion, so the push must wake it, and the owner's completion wake-up
/// and termination must reach the right sleepers.
#[test]
fn loom_join_promote_idle_worker() {
    model(Some(4), || {
        let queue = Arc::new(SharedQueue::new(2));
        let terminating = PoolState::new();
        let thief = spawn_worker(&queue, 1, &terminating);
        owner_join(&queue, 0, 7);
        terminate(&queue, &terminating);
        thief.join().unwrap();
    });
}

// ---------------------------------------------------------------------------------------
// 2. sleep / push wake-up
// ---------------------------------------------------------------------------------------

/// Pushes a heap job that counts its runs and sets a lock latch, as `spawn` from outside
/// a pool does, and returns the latch and the counter.
fn push_counting_job(queue: &SharedQueue) -> (Arc<LockLatch>, Arc<AtomicUsize>) {
    let latch = Arc::new(LockLatch::new());
    let runs = Arc::new(AtomicUsize::new(0));
    let job = {
        let (latch, runs) = (Arc::clone(&latch), Arc::clone(&runs));
        HeapJob::into_job_ref(move || {
            runs.fetch_add(1, Ordering::Relaxed);
            // SAFETY: the latch is live: this closure holds an `Arc` of it.
            unsafe { LockLatch::set(&*latch) };
        })
    };
    queue.push([job]);
    note(format_args!("pushed {job:?}"));
    (latch, runs)
}

/// An idle worker goes to sleep while an outside thread pushes a job and waits for it
/// (without terminating the pool, which would wake everyone): the push must wake the
/// worker, and the job runs exactly once.
#[test]
fn loom_sleep_push_wakeup() {
    model(None, || {
        let queue = Arc::new(SharedQueue::new(1));
        let terminating = PoolState::new();
        let worker = spawn_worker(&queue, 0, &terminating);
        let (latch, runs) = push_counting_job(&queue);
        latch.wait();
        assert_eq!(runs.load(Ordering::Relaxed), 1);
        terminate(&queue, &terminating);
        worker.join().unwrap();
        assert_eq!(runs.load(Ordering::Relaxed), 1);
    });
}

/// Two idle workers, two jobs pushed one at a time by an outside thread that waits for
/// both before terminating: the push wake-ups, the `searching` count and the wake-up
/// chain in `take` must get both jobs run (each exactly once).
#[test]
fn loom_sleep_push_wakeup_two_workers() {
    model(Some(2), || {
        let queue = Arc::new(SharedQueue::new(2));
        let terminating = PoolState::new();
        let workers = [
            spawn_worker(&queue, 0, &terminating),
            spawn_worker(&queue, 1, &terminating),
        ];
        let (latch_a, runs_a) = push_counting_job(&queue);
        let (latch_b, runs_b) = push_counting_job(&queue);
        latch_a.wait();
        latch_b.wait();
        assert_eq!(runs_a.load(Ordering::Relaxed), 1);
        assert_eq!(runs_b.load(Ordering::Relaxed), 1);
        terminate(&queue, &terminating);
        for worker in workers {
            worker.join().unwrap();
        }
    });
}

// ---------------------------------------------------------------------------------------
// 3. LockLatch hand-off of a StackJob
// ---------------------------------------------------------------------------------------

/// Mirrors `Registry::in_worker_cold`: an outside thread injects a `StackJob` with a
/// `LockLatch`, blocks on the latch, and reads the result; a worker takes and runs it.
#[test]
fn loom_stack_job_lock_latch() {
    model(None, || {
        let queue = Arc::new(SharedQueue::new(1));
        let terminating = PoolState::new();
        let worker = spawn_worker(&queue, 0, &terminating);
        let slot = Slot::new();
        let result = {
            let slot_in_job = Arc::clone(&slot);
            let job = StackJob::new(LockLatch::new(), move || {
                slot_in_job.write(11);
                13usize
            });
            queue.push([job.job_ref()]);
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
        terminate(&queue, &terminating);
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
        latch.release_and_wait();
        note(format_args!("owner returned"));
        assert_eq!(
            (slots[0].read(), slots[1].read()),
            (1, 2),
            "every job's write happened before the owner returned"
        );
        for job in jobs {
            job.join().unwrap();
        }
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
        let queue = Arc::new(SharedQueue::new(1));
        let terminating = PoolState::new();
        let worker = spawn_worker(&queue, 0, &terminating);
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
            queue.push_to(0, job);
            note(format_args!("broadcaster pushed into the inbox"));
            latch.release_and_wait();
        }
        assert_eq!(
            slot.read(),
            3,
            "the job's write is visible to the broadcaster"
        );
        terminate(&queue, &terminating);
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
        let queue = Arc::new(SharedQueue::new(3));
        let terminating = PoolState::new();
        let thief = spawn_worker(&queue, 2, &terminating);
        let other = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || owner_join(&queue, 1, 5))
        };
        assert_eq!(owner_join(&queue, 0, 7), 7);
        assert_eq!(other.join().unwrap(), 5);
        terminate(&queue, &terminating);
        thief.join().unwrap();
    });
}

/// Nested joins on one worker, with the outer fork (or both) promoted, and an idle worker:
/// while waiting for the inner fork, the owner may take its own outer fork back through
/// the queue (`take`, not `reclaim`) and run it, completing it to itself.
#[test]
fn loom_nested_joins_promoted() {
    for wanted in [1, 2] {
        model(Some(3), move || {
            let queue = Arc::new(SharedQueue::new(2));
            let terminating = PoolState::new();
            let thief = spawn_worker(&queue, 1, &terminating);
            owner_nested_join(&queue, 0, wanted);
            terminate(&queue, &terminating);
            thief.join().unwrap();
        });
    }
}

// ---------------------------------------------------------------------------------------
// 5. A searching worker that leaves without taking the job it was counted for
// ---------------------------------------------------------------------------------------

/// A push wakes a sleeper only if no worker is searching, counting on the searcher to
/// take the job. But a searcher that is an owner waiting for its fork (in `wait_until`)
/// re-checks `done()` before `take`, and when its fork completed meanwhile it returns to
/// its own work without taking the job and without waking anyone. Loom's interleaving:
///
/// 1. worker 2 (this thread) finds nothing and sleeps;
/// 2. worker 0 promotes its fork F; the push wakes worker 2, which takes and runs F
///    (DONE; `wake(0)` finds worker 0 awake) and goes back to sleep;
/// 3. worker 0 fails to reclaim F and enters `wait_until`: its first `done()` still
///    reads TAKEN (no happens-before with worker 2 yet), the queue is empty, so it goes
///    idle (`searching` = 1) and its spin then sees DONE;
/// 4. the outside thread pushes job S: `searching` is 1, so nobody is woken;
/// 5. worker 0 stops searching, sees `done()` and returns to its own work.
///
/// S stays queued while worker 2 sleeps. Workers 0 and 1 going back to long-running
/// work is modelled by their threads ending, so loom reports a deadlock. In production S
/// waits until worker 0 or 1 next reaches `wait_until` — and heartbeats do not help: with
/// one idle worker and one queued job, `wanted = idle - queued = 0`, so nobody promotes,
/// pushes, or wakes worker 2. (The same happens when the push itself wakes worker 0 —
/// sleepers are woken last-in first-out — and worker 0's fork completes before it runs.)
///
/// The fix, which this model checks: a worker that idled during a `wait_until` and then
/// leaves it because `done()` holds calls `SharedQueue::hand_off`, which under the queue
/// lock wakes one sleeper if jobs are queued and `searching == 0`.
#[test]
fn loom_stranded_job_after_searcher_leaves() {
    model(Some(2), || {
        let queue = Arc::new(SharedQueue::new(3));
        let terminating = PoolState::new();
        let owner = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                owner_join(&queue, 0, 7);
            })
        };
        let thief = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                if let Some(job) = queue.take(false) {
                    note(format_args!("thief took {job:?}"));
                    // SAFETY: `take` moved the job to TAKEN for us.
                    unsafe { JobHeader::execute(job.0) };
                    note(format_args!("thief finished {job:?}"));
                }
            })
        };
        let injector = {
            let queue = Arc::clone(&queue);
            let terminating = Arc::clone(&terminating);
            thread::spawn(move || {
                let (latch, runs) = push_counting_job(&queue);
                latch.wait();
                assert_eq!(runs.load(Ordering::Relaxed), 1);
                terminate(&queue, &terminating);
            })
        };
        // This thread is worker 2, idle from the start.
        worker_main(&queue, 2, &terminating);
        owner.join().unwrap();
        thief.join().unwrap();
        injector.join().unwrap();
    });
}

// ---------------------------------------------------------------------------------------
// 5. Pool drop while a spawned job still runs
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
        let queue = Arc::new(SharedQueue::new(2));
        let pool = PoolState::new();
        let workers = [
            spawn_worker(&queue, 0, &pool),
            spawn_worker(&queue, 1, &pool),
        ];
        let runs = Arc::new(AtomicUsize::new(0));
        assert!(spawn_started(&pool), "the pool holds a unit");
        let job = {
            let (queue_in_job, pool_in_job) = (Arc::clone(&queue), Arc::clone(&pool));
            let runs = Arc::clone(&runs);
            HeapJob::into_job_ref(move || {
                assert!(spawn_started(&pool_in_job), "the running job holds a unit");
                let addressed = {
                    let (queue, pool) = (Arc::clone(&queue_in_job), Arc::clone(&pool_in_job));
                    HeapJob::into_job_ref(move || {
                        runs.fetch_add(1, Ordering::Relaxed);
                        release_live_unit(&queue, &pool);
                    })
                };
                queue_in_job.push_to(1, addressed);
                note(format_args!(
                    "spawned job addressed {addressed:?} to worker 1"
                ));
                release_live_unit(&queue_in_job, &pool_in_job);
            })
        };
        queue.push([job]);
        note(format_args!(
            "pushed the spawned job {job:?}, then terminate"
        ));
        terminate(&queue, &pool);
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
// Rescue: the heartbeat thread claims the offered fork of a worker that stopped polling
// ---------------------------------------------------------------------------------------

/// Worker `index` runs `join(a, b)` on an empty list, so `b` is offered for rescue
/// (`WorkerThread::push_fork`); `a` runs without polling, and the owner withdraws the
/// offer when it returns (`join_recorded`). If the heartbeat thread claimed the frame
/// first, the owner unlinks it and joins it as a shared fork. Returns `b`'s result,
/// after checking that `b` ran exactly once, before the join returned.
fn owner_join_offered(
    queue: &SharedQueue,
    rescue: &RescueSlot,
    index: usize,
    value: usize,
) -> usize {
    let jobs = JobList::new();
    let (b, runs, slot) = checked_closure(value);
    let result = {
        let frame = JoinFrame::new(b);
        let job = frame.job_ref();
        // SAFETY: as in `owner_join`; the frame stays live until its offer is withdrawn
        // or, once claimed, until `join_shared` saw it reclaimed or done.
        let older = unsafe { jobs.push(job.0) };
        assert!(older.is_none(), "the list was empty");
        frame.header().set_owner(queue, index);
        // SAFETY: as above; the frame is LOCAL with its owner recorded.
        unsafe { rescue.offer(job.0) };
        note(format_args!("worker {index} offered {job:?}"));
        // `a` runs here, without polling.
        if rescue.withdraw(job.0) {
            note(format_args!("worker {index} withdrew its offer"));
            join_tail(queue, index, &jobs, &no_offers, &frame, older)
        } else {
            note(format_args!("worker {index} found {job:?} claimed"));
            // SAFETY: a claimed frame stays on the owner's list until the owner removes it.
            unsafe { jobs.remove(job.0) };
            join_shared(queue, index, &jobs, &no_offers, &frame)
        }
    };
    check_ran_once(value, result, &runs, &slot);
    assert!(jobs.is_empty());
    result
}

/// Mirrors the claim in `rescue_quiet_workers`: the heartbeat thread found the worker
/// quiet for long enough while another worker waits for work.
fn rescue_tick(queue: &SharedQueue, rescue: &RescueSlot) {
    match rescue.claim_if(rescue.offered_addr()) {
        Some(job) => {
            note(format_args!("the heartbeat thread claimed {job:?}"));
            queue.push([job]);
        }
        None => note(format_args!("the heartbeat thread found no offer")),
    }
}

/// The owner's withdrawal races the heartbeat thread's claim, and a claimed frame races
/// the owner's reclaim against an idle worker (asleep or not) that must be woken to take
/// it: `b` runs exactly once, before the join returns, whoever wins each race.
#[test]
fn loom_rescue_claim_races_withdraw() {
    model(Some(3), || {
        let queue = Arc::new(SharedQueue::new(2));
        let rescue = Arc::new(RescueSlot::new());
        let terminating = PoolState::new();
        let thief = spawn_worker(&queue, 1, &terminating);
        let heartbeat = {
            let (queue, rescue) = (Arc::clone(&queue), Arc::clone(&rescue));
            thread::spawn(move || rescue_tick(&queue, &rescue))
        };
        owner_join_offered(&queue, &rescue, 0, 7);
        heartbeat.join().unwrap();
        terminate(&queue, &terminating);
        thief.join().unwrap();
    });
}

/// Worker 0 runs `join(a1, b1)` and, inside `a1`, `join(a2, b2)`: both forks are
/// recorded and each is offered in a slot of its own (`WorkerThread::push_fork`). The
/// owner withdraws the inner offer, then the outer one, as the two joins end; whichever
/// of them the heartbeat thread claimed first is joined as a shared fork. Returns both
/// results after checking each ran exactly once, before its join returned.
fn owner_nested_joins_offered(queue: &SharedQueue, rescue: &[RescueSlot; 2]) -> (usize, usize) {
    let jobs = JobList::new();
    let (b1, runs1, slot1) = checked_closure(11);
    let (b2, runs2, slot2) = checked_closure(22);
    let outer = JoinFrame::new(b1);
    let inner = JoinFrame::new(b2);
    let frames = [outer.job_ref(), inner.job_ref()];
    let mut older = [None; 2];
    // Mirrors `WorkerThread::offered`: the job each slot holds, as the owner left it.
    let offered = [Cell::new(None), Cell::new(None)];
    for (i, job) in frames.iter().enumerate() {
        // SAFETY: as in `owner_join_offered`; both frames outlive their joins below.
        older[i] = unsafe { jobs.push(job.0) };
        [outer.header(), inner.header()][i].set_owner(queue, 0);
        // SAFETY: as above; the frame is LOCAL with its owner recorded.
        unsafe { rescue[i].offer(job.0) };
        offered[i].set(Some(job.0));
        note(format_args!("worker 0 offered {job:?} in slot {i}"));
    }
    let withdraw = |job: NonNull<JobHeader>| -> bool {
        let Some(i) = offered.iter().position(|slot| slot.get() == Some(job)) else {
            return true;
        };
        let withdrawn = rescue[i].withdraw(job);
        note(format_args!("worker 0 withdrew slot {i}: {withdrawn}"));
        if withdrawn {
            offered[i].set(None);
        }
        withdrawn
    };
    // `a2` runs here, without polling; then the inner join, then the outer one.
    let join_offered = |i: usize| -> usize {
        let job = frames[i];
        let withdrawn = withdraw(job.0);
        if !withdrawn {
            // Mirrors `remove_claimed`.
            offered[i].set(None);
            // SAFETY: a claimed frame stays on the owner's list until the owner removes it.
            unsafe { jobs.remove(job.0) };
        }
        match (i, withdrawn) {
            (0, true) => join_tail(queue, 0, &jobs, &withdraw, &outer, older[0]),
            (0, false) => join_shared(queue, 0, &jobs, &withdraw, &outer),
            (_, true) => join_tail(queue, 0, &jobs, &withdraw, &inner, older[1]),
            (_, false) => join_shared(queue, 0, &jobs, &withdraw, &inner),
        }
    };
    let second = join_offered(1);
    check_ran_once(22, second, &runs2, &slot2);
    let first = join_offered(0);
    check_ran_once(11, first, &runs1, &slot1);
    assert!(jobs.is_empty());
    (first, second)
}

/// Two offers of one worker, claimed by the heartbeat thread in slot order (as
/// `rescue_quiet_workers` does) while the owner withdraws them innermost first: each
/// fork runs exactly once, and a claimed outer fork stays linked below the inner one
/// until its own join unlinks it.
#[test]
fn loom_rescue_claims_from_two_slots() {
    model(Some(3), || {
        let queue = Arc::new(SharedQueue::new(2));
        let rescue = Arc::new([RescueSlot::new(), RescueSlot::new()]);
        let terminating = PoolState::new();
        let thief = spawn_worker(&queue, 1, &terminating);
        let heartbeat = {
            let (queue, rescue) = (Arc::clone(&queue), Arc::clone(&rescue));
            thread::spawn(move || {
                for slot in rescue.iter() {
                    rescue_tick(&queue, slot);
                }
            })
        };
        assert_eq!(owner_nested_joins_offered(&queue, &rescue), (11, 22));
        heartbeat.join().unwrap();
        terminate(&queue, &terminating);
        thief.join().unwrap();
    });
}

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
