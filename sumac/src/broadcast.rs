//! `broadcast` and `spawn_broadcast`: run an operation once on every worker of a pool.
//!
//! Each worker gets one job in its own inbox of the shared queue (see
//! `Queues::push_to`), which only it may run: it does so the next time it looks
//! for work (when it waits, or is idle; an asleep worker is woken). A worker that is
//! busy with a long job runs its broadcast job after that job, as in Rayon. `broadcast`
//! counts the jobs with a [`CountLatch`] owned by the caller and waits for all of them.

use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex, PoisonError};

use crate::job::HeapJob;
use crate::latch::CountLatch;
use crate::registry::{self, Registry};

/// What an operation run by [`broadcast`] (or [`spawn_broadcast`]) learns about the
/// worker it runs on.
///
/// ```
/// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// let seen = pool.broadcast(|ctx| (ctx.index(), ctx.num_threads()));
/// assert_eq!(seen, [(0, 2), (1, 2)]);
/// ```
#[derive(Debug)]
pub struct BroadcastContext<'a> {
    index: usize,
    num_threads: usize,
    /// Tied to the broadcast call.
    _call: PhantomData<&'a ()>,
}

impl BroadcastContext<'_> {
    /// The context of worker `index` of a pool of `num_threads`.
    pub(crate) fn new(index: usize, num_threads: usize) -> Self {
        BroadcastContext {
            index,
            num_threads,
            _call: PhantomData,
        }
    }

    /// The index of this worker in its pool (the same as
    /// [`current_thread_index`](crate::current_thread_index)).
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// let agree = pool.broadcast(|ctx| Some(ctx.index()) == sumac::current_thread_index());
    /// assert_eq!(agree, [true, true, true]);
    /// ```
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of workers in the pool: the operation runs once on each.
    ///
    /// With [`index`](Self::index), it lets each worker pick its own share of the work:
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// let partial_sums = pool.broadcast(|ctx| {
    ///     (ctx.index()..100).step_by(ctx.num_threads()).sum::<usize>()
    /// });
    /// assert_eq!(partial_sums.len(), 3);
    /// assert_eq!(partial_sums.iter().sum::<usize>(), 4950);
    /// ```
    pub fn num_threads(&self) -> usize {
        self.num_threads
    }
}

/// Runs `op` once on every worker of the current pool (the global pool when called from
/// outside any pool) and returns the results, in worker order. For per-thread setup,
/// such as thread-local state.
///
/// ```
/// let pool = sumac::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
/// let indices = pool.install(|| sumac::broadcast(|ctx| ctx.index()));
/// assert_eq!(indices, [0, 1, 2]);
/// ```
///
/// # Panics
/// If `op` panics on any worker, the panic is propagated once every worker has run it
/// (the first worker's panic in index order wins).
pub fn broadcast<OP, R>(op: OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    registry::with_current_registry(|registry| broadcast_in(registry, &op))
}

/// Like [`broadcast`], without waiting: `op` runs once on every worker of the current
/// pool (the global pool from outside any pool) when that worker next looks for work.
///
/// ```
/// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// let (sender, receiver) = std::sync::mpsc::channel();
/// let sender = std::sync::Mutex::new(sender);
/// pool.spawn_broadcast(move |ctx| sender.lock().unwrap().send(ctx.index()).unwrap());
/// let mut got: Vec<usize> = receiver.iter().take(2).collect();
/// got.sort();
/// assert_eq!(got, [0, 1]);
/// ```
///
/// # Panics
/// A panic in `op` goes to the pool's panic handler, as for [`spawn`](crate::spawn()).
pub fn spawn_broadcast<OP>(op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    registry::with_current_registry(|registry| spawn_broadcast_in(registry, op));
}

/// A pointer to the broadcast's latch that may travel with its jobs.
struct LatchPtr(*const CountLatch);

// SAFETY: `CountLatch` is `Sync`, and the latch outlives every job that holds this
// pointer (its owner waits for all of them), so sending it is like sending a reference.
unsafe impl Send for LatchPtr {}

/// [`broadcast`] on the pool of `registry`.
pub(crate) fn broadcast_in<OP, R>(registry: &Arc<Registry>, op: &OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    let num_threads = registry.num_threads();
    let results: Vec<Mutex<Option<std::thread::Result<R>>>> =
        (0..num_threads).map(|_| Mutex::new(None)).collect();
    let latch = CountLatch::for_current_thread();
    for (index, slot) in results.iter().enumerate() {
        latch.increment();
        let latch = LatchPtr(&latch);
        let job = HeapJob::into_job_ref(move || {
            let latch = latch;
            let context = BroadcastContext::new(index, num_threads);
            let result = panic::catch_unwind(AssertUnwindSafe(|| op(context)));
            *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
            // SAFETY: the latch is live until its count reaches zero, and this job does
            // not touch it (or anything of the broadcast's) after this decrement.
            unsafe { CountLatch::decrement(latch.0) };
        });
        registry.queues.push_to(index, job);
    }
    latch.release_and_wait();
    let mut values = Vec::with_capacity(num_threads);
    let mut first_panic = None;
    for slot in results {
        let result = slot.into_inner().unwrap_or_else(PoisonError::into_inner);
        match result.expect("every broadcast job ran before the latch opened") {
            Ok(value) => values.push(value),
            Err(payload) => {
                first_panic.get_or_insert(payload);
            }
        }
    }
    if let Some(payload) = first_panic {
        panic::resume_unwind(payload);
    }
    values
}

/// [`spawn_broadcast`] on the pool of `registry`.
pub(crate) fn spawn_broadcast_in<OP>(registry: &Arc<Registry>, op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    let num_threads = registry.num_threads();
    let op = Arc::new(op);
    for index in 0..num_threads {
        let op = Arc::clone(&op);
        let counted = registry.spawn_started(Some(index));
        let job = HeapJob::into_job_ref(move || {
            let context = BroadcastContext::new(index, num_threads);
            let ran = panic::catch_unwind(AssertUnwindSafe(|| op(context)));
            // Dropping the last reference runs the closure's destructor, which may panic:
            // that panic must not escape the job and unwind the worker.
            let dropped = panic::catch_unwind(AssertUnwindSafe(move || drop(op)));
            registry::finish_spawned_job([ran.err(), dropped.err()].into_iter().flatten(), counted);
        });
        registry.queues.push_to(index, job);
    }
}
