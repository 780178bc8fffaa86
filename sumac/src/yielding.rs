//! `yield_now` and `yield_local`: a worker blocked on something outside the pool (a
//! lock, a channel, a flag set by another job) lets the pool's pending work run on its
//! thread meanwhile.

use crate::registry::Registry;

/// What a call to [`yield_now`] or [`yield_local`] did.
///
/// ```
/// use sumac::Yield;
/// let pool = sumac::ThreadPoolBuilder::new()
///     .num_threads(1)
///     .callers_take_part(false) // `install` on the worker: nobody else runs its job
///     .build()
///     .unwrap();
/// let (first, second) = pool.install(|| {
///     sumac::spawn(|| ());
///     (sumac::yield_now(), sumac::yield_now())
/// });
/// assert_eq!(first, Some(Yield::Executed)); // ran the spawned job
/// assert_eq!(second, Some(Yield::Idle)); // nothing left to run
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Yield {
    /// A pending job ran on this thread.
    Executed,
    /// There was no pending job to run.
    Idle,
}

/// Runs one pending job of the current pool on this thread, if there is one: this
/// worker's newest pending fork or spawned job, else a job addressed to this worker (a
/// broadcast), else the oldest job shared with the pool. A caller taking part in a call
/// into the pool ([`callers_take_part`](crate::ThreadPoolBuilder::callers_take_part))
/// yields as the worker whose place it holds would, shared jobs included. Returns `None`
/// when called from outside any pool.
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// let pool = sumac::ThreadPoolBuilder::new()
///     .num_threads(1)
///     .callers_take_part(false)
///     .build()
///     .unwrap();
/// let ran = AtomicBool::new(false);
/// pool.scope(|s| {
///     s.spawn(|_| ran.store(true, Ordering::Relaxed));
///     // The one worker waits for `ran` without blocking the spawned job.
///     while !ran.load(Ordering::Relaxed) {
///         assert_eq!(sumac::yield_now(), Some(sumac::Yield::Executed));
///     }
///     assert_eq!(sumac::yield_now(), Some(sumac::Yield::Idle));
/// });
/// assert_eq!(sumac::yield_now(), None);
/// ```
pub fn yield_now() -> Option<Yield> {
    yield_on(None, true)
}

/// Like [`yield_now`], but runs only this worker's own pending jobs (its forks, the jobs
/// it spawned, and jobs addressed to it, such as a broadcast's), never one from another
/// worker or from outside the pool.
///
/// ```
/// use sumac::Yield;
/// // (Calls handed to the one worker: nobody else takes its jobs.)
/// let pool = sumac::ThreadPoolBuilder::new()
///     .num_threads(1)
///     .callers_take_part(false)
///     .build()
///     .unwrap();
/// let (sender, receiver) = std::sync::mpsc::channel();
/// let outside = sender.clone();
/// let pool = &pool;
/// pool.install(move || {
///     // A job spawned from outside the pool waits in its injector: not this worker's.
///     std::thread::scope(|s| {
///         s.spawn(|| pool.spawn(move || outside.send("outside").unwrap()));
///     });
///     assert_eq!(sumac::yield_local(), Some(Yield::Idle));
///     // Jobs spawned here go on this worker's own deques: the newest `spawn` first.
///     let fifo_sender = sender.clone();
///     sumac::spawn_fifo(move || fifo_sender.send("fifo").unwrap());
///     sumac::spawn(move || sender.send("lifo").unwrap());
///     assert_eq!(sumac::yield_local(), Some(Yield::Executed));
///     assert_eq!(receiver.try_recv(), Ok("lifo"));
///     assert_eq!(sumac::yield_local(), Some(Yield::Executed));
///     assert_eq!(receiver.try_recv(), Ok("fifo"));
///     // `yield_now` also takes the job from outside.
///     assert_eq!(sumac::yield_now(), Some(Yield::Executed));
///     assert_eq!(receiver.try_recv(), Ok("outside"));
/// });
/// assert_eq!(sumac::yield_local(), None); // outside any pool
/// ```
pub fn yield_local() -> Option<Yield> {
    yield_on(None, false)
}

/// Runs one pending job on the calling worker, if it belongs to `pool` (any pool when
/// `None`).
pub(crate) fn yield_on(pool: Option<&Registry>, shared: bool) -> Option<Yield> {
    // A thread made worker 0 by `use_current_thread` yields as that worker.
    crate::registration::with_current_worker(pool, |worker| {
        if worker.yield_pending_job(shared) {
            Yield::Executed
        } else {
            Yield::Idle
        }
    })
}
