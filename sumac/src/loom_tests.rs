//! Loom plumbing shared by every model (`model`, `note`, [`Slot`]), and models of the
//! pieces that two threads use without a pool: a scope's count latch owned by a thread
//! outside every pool, with the debts of the members that run its jobs, the published
//! best position of ordered searches, and the heartbeat thread's park. Whole pools are
//! modelled in `loom_pool.rs`, on the production code; `SCHEDULER.md` ("What checks
//! this") lists every model by subject.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p sumac --lib --profile release-test loom_ -- --test-threads=1`.
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

use std::sync::atomic::Ordering;

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;

use crate::latch::CountLatch;

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

// ---------------------------------------------------------------------------------------
// 1. A scope's count latch owned by a thread outside every pool
// ---------------------------------------------------------------------------------------

/// As in an `in_place_scope` owned by a thread outside every pool: the body spawned two
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

// ---------------------------------------------------------------------------------------
// 2. The published best position of ordered searches
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

// ---------------------------------------------------------------------------------------
// 3. The heartbeat thread's park
// ---------------------------------------------------------------------------------------

/// Drives `HeartbeatPark` (production): the heartbeat thread parks until two events have
/// happened, re-parking after a wake-up that came too early; each of two wakers records
/// its event (sequentially consistent, as the registry's counts are) and then calls
/// `wake_if_parked`. A wake-up lost between the thread's check and its wait, or skipped
/// because an earlier waker's wake-up was taken for this one's, leaves the thread
/// waiting forever: a deadlock.
#[test]
fn loom_heartbeat_park_loses_no_wake_up() {
    use crate::heartbeat::HeartbeatPark;
    use crate::sync::AtomicUsize;
    model(Some(3), || {
        let park = Arc::new(HeartbeatPark::new());
        let events = Arc::new(AtomicUsize::new(0));
        let wakers: Vec<_> = (0..2)
            .map(|i| {
                let (park, events) = (Arc::clone(&park), Arc::clone(&events));
                thread::spawn(move || {
                    events.fetch_add(1, Ordering::SeqCst);
                    let woke = park.wake_if_parked();
                    note(format_args!("waker {i} recorded its event, woke: {woke}"));
                })
            })
            .collect();
        let mut guard = park.lock();
        while events.load(Ordering::SeqCst) < 2 {
            let (relocked, waited) = park.park(guard, || events.load(Ordering::SeqCst) == 2);
            note(format_args!("heartbeat thread back, waited: {waited}"));
            guard = relocked;
        }
        drop(guard);
        for waker in wakers {
            waker.join().unwrap();
        }
    });
}
