//! `join`: the fork-join primitive, and the heart of the fork path.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering;

use crate::job::{JoinFrame, PanicPayload, DONE, LOCAL, QUEUED};
use crate::policy::Stamp;
use crate::registry;
use crate::worker::WorkerThread;

/// Runs `a` and `b`, potentially in parallel, and returns both results.
///
/// On a worker of a pool, `b` is recorded in a frame on the caller's stack and `a` runs
/// at once; unless a heartbeat handed `b` to an idle worker meanwhile, `b` then runs
/// inline on the same thread, at the cost of a few plain stores. Called from a thread
/// outside any pool, `join` runs on the global pool and blocks the caller until both
/// closures are done.
///
/// Heartbeats are seen at forks, so `b` moves while `a` forks on. If `a` is one long
/// sequential leaf, the heartbeat thread itself hands the worker's waiting forks (`b`
/// and the forks of up to two enclosing joins, more in pools of over 8 threads, one per
/// idle worker) to idle workers after one or two heartbeat intervals (100-200 µs by
/// default), so `join(leaf, leaf)`, and a tree of joins over long leaves as deep as log2
/// of the pool's size (at least three levels), still run their leaves side by side.
///
/// ```
/// fn fib(n: u64) -> u64 {
///     if n < 2 {
///         return n;
///     }
///     let (a, b) = sumac::join(|| fib(n - 1), || fib(n - 2));
///     a + b
/// }
/// assert_eq!(fib(20), 6765);
/// ```
///
/// The closures must be `Send`, so they cannot capture an `Rc`:
///
/// ```compile_fail
/// let shared = std::rc::Rc::new(1);
/// let other = shared.clone();
/// sumac::join(move || *shared, move || *other);
/// ```
///
/// and they cannot both borrow the same data mutably:
///
/// ```compile_fail
/// let mut value = 0;
/// sumac::join(|| value += 1, || value += 1);
/// ```
///
/// # Panics
/// If `a` or `b` panics, the panic is propagated after *both* closures have finished
/// (and nothing is running on the caller's stack frame any more). If both panic, the
/// panic of `a` wins and the other payload is dropped.
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    join_hinted(a, b, ForkSize::Unknown)
}

/// What a closure run by [`join_context`] learns about where it runs.
///
/// ```
/// // From outside any pool, the calling thread runs the first closure itself (taking
/// // part in the global pool); the second migrated only if a worker took it.
/// let (a, _b) = sumac::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated());
/// assert!(!a);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct FnContext {
    migrated: bool,
}

impl FnContext {
    /// True when the closure runs on another thread than the one that called
    /// [`join_context`]: the second closure after another member of the pool took it,
    /// or both closures when the call was handed to a worker of the pool.
    ///
    /// ```
    /// // In a one-thread pool whose calls run on its worker, nobody can take the second
    /// // closure.
    /// let pool = sumac::ThreadPoolBuilder::new()
    ///     .num_threads(1)
    ///     .callers_take_part(false)
    ///     .build()
    ///     .unwrap();
    /// let flags = pool.install(|| {
    ///     sumac::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated())
    /// });
    /// assert_eq!(flags, (false, false));
    /// ```
    #[inline]
    pub fn migrated(&self) -> bool {
        self.migrated
    }
}

/// [`join`], with each closure told whether it migrated to another thread (for example
/// to pick a larger piece of work, or to allocate a thread-local buffer, only then).
///
/// ```
/// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// let (a, b) = pool.install(|| {
///     sumac::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated())
/// });
/// assert!(!a); // the first closure always runs on the calling worker
/// let _ = b; // the second one migrated only if an idle worker took it
/// ```
///
/// # Panics
/// As [`join`].
pub fn join_context<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    // The calling thread, compared with the thread that runs each closure. A thread
    // outside every pool runs `a` itself (as a guest of the pool, when a seat is free).
    let caller = crate::registration::calling_thread_id();
    let migrated = move || crate::registration::calling_thread_id() != caller;
    join(
        move || {
            a(FnContext {
                migrated: migrated(),
            })
        },
        move || {
            b(FnContext {
                migrated: migrated(),
            })
        },
    )
}

/// What the caller of [`join_hinted`] knows about the size of `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ForkSize {
    /// A plain `join`: nothing. The fork is shared once it has waited through a whole
    /// interval, or at the next request if it is among the first forks of a promoted
    /// job (see `WorkerThread::fork_stamp`).
    Unknown,
    /// A parallel loop timed it as worth sharing at the next heartbeat.
    Big,
    /// Worth waking a sleeping member for (a big piece of a parallel sort): shared like
    /// [`Big`](Self::Big), and also as soon as it is recorded if members wait for work
    /// (`large-forks-at-once`).
    Large,
    /// A parallel loop timed it as too small to share before it waited through a whole
    /// interval.
    Small,
    /// The rest of a parallel loop split off before its first item (see
    /// `split_off_first_item`): of unknown size, so stamped like [`Small`](Self::Small),
    /// and recorded without polling the heartbeat flag, which the loop's own driver
    /// polls once it has timed that item (a request consumed here would make the loop
    /// wait for the next one before it splits).
    RestOfLoop,
}

/// [`join`] for a caller that knows how big `b` is (a parallel loop splitting off half of
/// its remaining iterations, whose cost it measured): a big `b` may be shared at the next
/// heartbeat instead of only after it waited through a whole interval.
#[inline(always)]
pub(crate) fn join_hinted<A, B, RA, RB>(a: A, b: B, size: ForkSize) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let current = WorkerThread::current();
    if current.is_null() {
        return join_outside_pool(a, b, size);
    }
    // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
    join_on_worker(unsafe { &*current }, a, b, size)
}

/// `join` called from a thread outside any pool: run it on the global pool.
///
/// Kept out of line, with everything moved into it, so that the fork path prepares
/// nothing for it: when the closure passed to `in_worker` borrowed the size hint from the
/// fork path, the compiler stored that flag to the stack on every fork (see
/// `bench/DECISIONS.md`).
#[cold]
#[inline(never)]
fn join_outside_pool<A, B, RA, RB>(a: A, b: B, size: ForkSize) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    registry::in_worker(move |worker| join_on_worker(worker, a, b, size))
}

/// The fork path: `b` goes on this worker's private list, `a` runs, and `b` runs inline
/// unless it was shared.
#[inline(always)]
pub(crate) fn join_on_worker<A, B, RA, RB>(
    worker: &WorkerThread,
    a: A,
    b: B,
    size: ForkSize,
) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    worker.count_fork();
    let record = match size {
        ForkSize::Unknown => worker.records_fork(),
        ForkSize::Big | ForkSize::Large => worker.records_big_fork(),
        ForkSize::Small | ForkSize::RestOfLoop => worker.records_measured_fork(),
    };
    if record {
        // Laid out away from the direct calls below: in a one-thread pool they are the
        // only path, and elsewhere most forks take them too (see `recorded_forks_limit`).
        cold_path();
        return join_recorded(worker, a, b, size);
    }
    // Nobody could take `b` (one thread), or older forks are already recorded and a
    // heartbeat shares the oldest first: call both closures directly. (Nothing ever
    // raises a one-thread pool's flag, so polling there costs one load.)
    worker.poll_heartbeat();
    match panic::catch_unwind(AssertUnwindSafe(a)) {
        Ok(ra) => (ra, b()),
        Err(payload) => run_after_panic(b, payload),
    }
}

/// Marks the branch that calls it as the unlikely one, so that the compiler lays the other
/// branch out as the straight-line path (what `std::hint::cold_path` does from Rust 1.95
/// on; the crate supports older compilers). It puts the direct calls of the fork path
/// straight after the test instead of behind two taken jumps.
#[cold]
#[inline(always)]
fn cold_path() {}

/// A fork that goes on the worker's list (kept out of line so that the direct path above
/// stays a small function with a short prologue).
#[inline(never)]
fn join_recorded<A, B, RA, RB>(worker: &WorkerThread, a: A, b: B, size: ForkSize) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let frame = JoinFrame::new(b);
    // A big `b` may be shared at the next heartbeat (see `WorkerThread::on_heartbeat`).
    let recorded_at = match size {
        ForkSize::Big | ForkSize::Large => Stamp::KNOWN_BIG,
        ForkSize::Small | ForkSize::RestOfLoop => {
            Stamp::at_tick(worker.registry().heartbeat_epoch())
        }
        ForkSize::Unknown => worker.fork_stamp(),
    };
    frame.header().recorded_at.set(recorded_at);
    let job = frame.job_ref();
    // SAFETY: the frame is live until this function returns, and we withdraw its rescue
    // offer and remove it from the list (or wait for whoever took it) before returning
    // or unwinding.
    let older = unsafe { worker.push_fork(job.0) };
    if worker.guest {
        // Only ticks share the fork, or rescue it from behind a long leaf (the first
        // item of a loop, say): the heartbeat thread may have parked for good.
        worker.registry().guest_needs_heartbeat();
    }
    if size != ForkSize::RestOfLoop {
        worker.poll_heartbeat();
    }
    if size == ForkSize::Large {
        worker.share_large_fork();
    }
    let result_a = panic::catch_unwind(AssertUnwindSafe(a));
    if !worker.withdraw_offer(job.0) {
        // The heartbeat thread claimed the frame while `a` ran without polling: it is
        // shared, but still on our list, which only we may change.
        // SAFETY: a claimed frame stays on our list until its join removes it, here.
        unsafe { worker.remove_claimed(job.0) };
        return join_shared(worker, &frame, result_a);
    }
    // Only this thread moves the frame out of LOCAL (the heartbeat thread claims it only
    // through the rescue offer, withdrawn above), so a relaxed load suffices.
    if frame.header().share.load(Ordering::Relaxed) == LOCAL {
        // SAFETY: LOCAL means the frame is still on our list, where `push` put it.
        unsafe { worker.jobs.pop_pushed(job.0, older) };
        worker.joined_recorded_fork();
        // SAFETY: the frame was on our list, so nobody else ran or will run it.
        let b = unsafe { frame.take_func() };
        return match result_a {
            Ok(ra) => (ra, b()),
            Err(payload) => run_after_panic(b, payload),
        };
    }
    join_shared(worker, &frame, result_a)
}

/// `b` was promoted (or run by this worker while it waited inside `a`).
#[cold]
#[inline(never)]
fn join_shared<B, RA, RB>(
    worker: &WorkerThread,
    frame: &JoinFrame<B, RB>,
    result_a: Result<RA, PanicPayload>,
) -> (RA, RB)
where
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    let header = frame.header();
    if header.share.load(Ordering::Relaxed) == QUEUED
        && worker.registry().queues.reclaim(frame.job_ref())
    {
        // SAFETY: RECLAIMED: nobody started the job and nobody will.
        let b = unsafe { frame.take_func() };
        return match result_a {
            Ok(ra) => (ra, b()),
            Err(payload) => run_after_panic(b, payload),
        };
    }
    // Someone is running `b` on our stack frame: wait until they let go of it.
    worker.wait_until(|| header.share.load(Ordering::Acquire) == DONE);
    worker.fork_came_back();
    // SAFETY: DONE was observed with acquire ordering; the result is taken once.
    let result_b = unsafe { frame.take_result() };
    match (result_a, result_b) {
        (Ok(ra), Ok(rb)) => (ra, rb),
        (Err(payload), _) | (Ok(_), Err(payload)) => panic::resume_unwind(payload),
    }
}

/// `a` panicked and `b` is ours to run: run it to completion, then re-raise `a`'s panic
/// (a panic of `b` is dropped: the first closure's panic wins).
#[cold]
fn run_after_panic<B, RA, RB>(b: B, payload: PanicPayload) -> (RA, RB)
where
    B: FnOnce() -> RB,
{
    drop(panic::catch_unwind(AssertUnwindSafe(b)));
    panic::resume_unwind(payload)
}
