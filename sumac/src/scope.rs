//! `scope` and `Scope::spawn`: fork work that may borrow from the enclosing stack frame.
//!
//! A spawned closure is boxed into a heap job and pushed on the spawning worker's own
//! deque, from which any idle worker may steal it at once (see [`crate::queues`]). The scope
//! counts its outstanding jobs, plus one for its body while that runs; when the body
//! returns, the scope's owner keeps running jobs (its own first) until the count is
//! zero, and only then returns or re-raises a panic. Whoever brings the count to zero
//! wakes the owner.
//!
//! The owner is usually a worker of the scope's pool. [`in_place_scope`] may also have a
//! worker of another pool as its owner (it works through its own pool's jobs while it
//! waits), or a thread outside every pool (it blocks on a latch).
//!
//! [`Scope::spawn_future`] spawns an async task that may borrow in the same way: the
//! task holds one unit of the count, given back once its future has been dropped.
//!
//! A [`ScopeFifo`] is the same scope whose `spawn_fifo` puts jobs on the spawning
//! worker's FIFO deque instead, so the jobs one thread spawns start in the order they
//! were spawned.

use std::future::Future;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use crate::broadcast::BroadcastContext;
use crate::job::{HeapJob, PanicPayload};
use crate::latch::CountLatch;
use crate::registry::{self, Registry};
use crate::worker::WorkerThread;

/// A scope in which closures borrowing from outside may be spawned; see [`scope`].
///
/// A function that spawns into a scope takes `&Scope<'scope>`, where `'scope` bounds
/// what the spawned closures may borrow:
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// /// Adds up `values`, spawning one job per half until the pieces are small.
/// fn spawn_sums<'scope>(
///     s: &sumac::Scope<'scope>,
///     values: &'scope [u64],
///     total: &'scope AtomicU64,
/// ) {
///     if values.len() <= 4 {
///         total.fetch_add(values.iter().sum(), Ordering::Relaxed);
///         return;
///     }
///     let (left, right) = values.split_at(values.len() / 2);
///     s.spawn(move |s| spawn_sums(s, left, total));
///     s.spawn(move |s| spawn_sums(s, right, total));
/// }
///
/// let values: Vec<u64> = (1..=100).collect();
/// let total = AtomicU64::new(0);
/// sumac::scope(|s| spawn_sums(s, &values, &total));
/// assert_eq!(total.into_inner(), 5050);
/// ```
pub struct Scope<'scope> {
    /// The pool the scope's jobs run on.
    registry: Arc<Registry>,
    /// Spawned jobs that have not finished, plus one while the body runs; the owner
    /// (the thread that ran the body) waits on it.
    jobs: CountLatch,
    /// The first panic of a spawned job.
    panic: Mutex<Option<PanicPayload>>,
    /// Invariant in `'scope`, as in Rayon.
    marker: PhantomData<ScopeBody<'scope>>,
}

/// What a scope's spawned closures look like (for the lifetime marker).
type ScopeBody<'scope> = Box<dyn FnOnce(&Scope<'scope>) + Send + Sync + 'scope>;

/// A raw pointer to a scope (or a [`ScopeFifo`]) that may travel with its jobs.
struct ScopePtr<S>(*const S);

// SAFETY: scopes are `Sync`, and a scope outlives all of its jobs (its owner waits for
// `jobs` to reach zero), so sending a pointer to it is like sending a reference.
unsafe impl<S: Sync> Send for ScopePtr<S> {}

/// What a spawned closure receives: a [`Scope`] or a [`ScopeFifo`].
trait ScopeHandle<'scope>: Sync {
    fn scope(&self) -> &Scope<'scope>;
}

impl<'scope> ScopeHandle<'scope> for Scope<'scope> {
    fn scope(&self) -> &Scope<'scope> {
        self
    }
}

/// Spawns `body` into the scope of `handle`: on the spawning worker's LIFO deque, or with
/// `fifo` its FIFO one (see [`Registry::push_spawned`]).
fn spawn_into<'scope, S, BODY>(handle: &S, body: BODY, fifo: bool)
where
    S: ScopeHandle<'scope>,
    BODY: FnOnce(&S) + Send + 'scope,
{
    let scope = handle.scope();
    // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
    let current = unsafe { WorkerThread::current().as_ref() };
    match current {
        Some(member) => member.scope_debt.count_job(&scope.jobs),
        None => scope.jobs.increment(),
    }
    let handle = ScopePtr(handle);
    let job = HeapJob::into_job_ref(move || {
        let handle = handle;
        // SAFETY: the scope is alive until `jobs` reaches zero, which happens only once
        // this job's unit left it (below).
        let this = unsafe { &*handle.0 };
        let jobs: *const CountLatch = &this.scope().jobs;
        // SAFETY: as above (the thread-local pointer).
        if let Some(member) = unsafe { WorkerThread::current().as_ref() } {
            member.scope_debt.settle_unless_owed_to(jobs);
        }
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| body(this))) {
            this.scope().record_panic(payload);
        }
        // SAFETY: as above (the thread-local pointer).
        match unsafe { WorkerThread::current().as_ref() } {
            // SAFETY: the scope is live and this job's unit is still in its count.
            Some(member) => unsafe { member.scope_debt.job_finished(jobs) },
            // SAFETY: `jobs` is live, and `decrement` does not touch it after the
            // decrement that may free it.
            None => unsafe { CountLatch::decrement(jobs) },
        }
    });
    scope.registry.push_spawned_by(current, job, fifo);
}

/// Spawns one job per worker of the scope's pool into the scope of `handle`: each runs
/// `body` on its own worker (addressed to it, as [`broadcast`](crate::broadcast()) jobs
/// are), with that worker's [`BroadcastContext`].
fn spawn_broadcast_into<'scope, S, BODY>(handle: &S, body: BODY)
where
    S: ScopeHandle<'scope>,
    BODY: Fn(&S, BroadcastContext<'_>) + Send + Sync + 'scope,
{
    let scope = handle.scope();
    let num_threads = scope.registry.num_threads();
    let body = Arc::new(body);
    for index in 0..num_threads {
        scope.jobs.increment();
        let body = Arc::clone(&body);
        let handle = ScopePtr(handle);
        let job = HeapJob::into_job_ref(move || {
            let handle = handle;
            // SAFETY: the scope is alive until `jobs` reaches zero, which happens only in
            // `job_finished` below.
            let this = unsafe { &*handle.0 };
            let context = BroadcastContext::new(index, num_threads);
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| body(this, context))) {
                this.scope().record_panic(payload);
            }
            // The body may borrow from the scope's caller: drop it while that is alive.
            // Its destructor (run here if this is the last reference) may panic: that
            // panic belongs to the scope, it must not unwind the worker.
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(move || drop(body))) {
                this.scope().record_panic(payload);
            }
            let scope: *const Scope<'scope> = this.scope();
            // SAFETY: `scope` is live, and `job_finished` does not touch it after the
            // decrement that may free it.
            unsafe { Scope::job_finished(scope) };
        });
        scope.registry.queues.push_to(index, job);
    }
}

/// A scope's future: its panics go to the scope, and its unit of the scope's count is
/// given back once the future itself has been dropped (fields drop in declaration
/// order, also while unwinding from a panicking destructor of the future).
struct ScopedFuture<'scope, F> {
    future: F,
    unit: ScopeUnit<'scope>,
}

/// One unit of a scope's count of jobs, released when dropped.
struct ScopeUnit<'scope>(ScopePtr<Scope<'scope>>);

impl Drop for ScopeUnit<'_> {
    fn drop(&mut self) {
        // SAFETY: the scope is alive while this unit is in its count; `job_finished` does
        // not touch it after the decrement that may free it.
        unsafe { Scope::job_finished(self.0 .0) };
    }
}

impl<F: Future<Output = ()>> Future for ScopedFuture<'_, F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: `future` is structurally pinned: it is never moved out of `self`, and
        // `ScopedFuture` has no `Drop` of its own and is `Unpin` only if `F` is.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above: `future` stays where it is until it is dropped in place.
        let future = unsafe { Pin::new_unchecked(&mut this.future) };
        match panic::catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
            Ok(poll) => poll,
            Err(payload) => {
                // SAFETY: the scope is alive while our unit is in its count.
                unsafe { &*this.unit.0 .0 }.record_panic(payload);
                Poll::Ready(())
            }
        }
    }
}

/// Runs `op` on the calling thread as the body of the scope `handle`, then completes it.
fn run_scope<'scope, S, OP, R>(handle: S, op: OP) -> R
where
    S: ScopeHandle<'scope>,
    OP: FnOnce(&S) -> R,
{
    let result = panic::catch_unwind(AssertUnwindSafe(|| op(&handle)));
    handle.scope().complete(result)
}

impl<'scope> Scope<'scope> {
    /// A scope whose jobs run on `registry`, owned by the calling thread.
    fn new(registry: &Arc<Registry>) -> Self {
        Scope {
            registry: Arc::clone(registry),
            jobs: CountLatch::for_current_thread(),
            panic: Mutex::new(None),
            marker: PhantomData,
        }
    }

    /// Spawns `body` into the scope. It may run on any worker of the pool, and may
    /// borrow anything that outlives the scope. It receives the scope, so it can spawn
    /// more work.
    ///
    /// ```
    /// let mut words = vec!["b", "a"];
    /// let mut numbers = vec![2, 1];
    /// sumac::scope(|s| {
    ///     s.spawn(|_| words.sort());
    ///     s.spawn(|s| {
    ///         numbers.sort();
    ///         s.spawn(|_| println!("nested spawn"));
    ///     });
    /// });
    /// assert_eq!((words, numbers), (vec!["a", "b"], vec![1, 2]));
    /// ```
    ///
    /// A spawned closure must be `Send`:
    ///
    /// ```compile_fail
    /// let shared = std::rc::Rc::new(1);
    /// sumac::scope(|s| s.spawn(move |_| drop(shared)));
    /// ```
    ///
    /// # Panics
    /// A panic in `body` does not stop the scope's other jobs; it is re-raised by
    /// [`scope`] once every job has finished.
    pub fn spawn<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        spawn_into(self, body, false);
    }

    /// Spawns `body` once on every worker of the scope's pool, like
    /// [`spawn_broadcast`](crate::spawn_broadcast()) but inside the scope: the jobs may
    /// borrow from outside it, and the scope waits for all of them.
    ///
    /// ```
    /// use std::sync::Mutex;
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// let seen = Mutex::new(Vec::new());
    /// pool.scope(|s| {
    ///     s.spawn_broadcast(|_, ctx| seen.lock().unwrap().push(ctx.index()));
    /// });
    /// let mut seen = seen.into_inner().unwrap();
    /// seen.sort();
    /// assert_eq!(seen, [0, 1, 2]);
    /// ```
    ///
    /// # Panics
    /// As [`Scope::spawn`]: a panic of `body` on any worker is re-raised by the scope.
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&Scope<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        spawn_broadcast_into(self, body);
    }

    /// Spawns `future` into the scope as an async task (see
    /// [`spawn_future`](crate::spawn_future())): it runs on the scope's pool, may borrow
    /// anything that outlives the scope, and the scope waits until it has completed.
    /// Inside it, `join`, parallel iterators and channel operations work as in any task.
    ///
    /// ```
    /// let mut doubled = vec![0; 4];
    /// let (sender, receiver) = sumac::channel::unbounded();
    /// sumac::scope(|s| {
    ///     for (i, slot) in doubled.iter_mut().enumerate() {
    ///         let receiver = receiver.clone();
    ///         s.spawn_future(async move {
    ///             let value: usize = receiver.recv_async().await.unwrap();
    ///             *slot = value * 2;
    ///         });
    ///     }
    ///     for i in 0..4 {
    ///         sender.send(i).unwrap();
    ///     }
    /// });
    /// doubled.sort();
    /// assert_eq!(doubled, [0, 2, 4, 6]);
    /// ```
    ///
    /// A scoped future must be `Send`, and may borrow only what outlives the scope:
    ///
    /// ```compile_fail
    /// let mut total = 0;
    /// sumac::scope(|s| {
    ///     let local = 5;
    ///     s.spawn_future(async { total += local });
    /// });
    /// ```
    ///
    /// # Panics
    /// As [`Scope::spawn`]: a panic in `future` is re-raised by the scope once every job
    /// and future of it has finished.
    ///
    /// A future that never completes (it waits for a wake-up that never comes) keeps
    /// the scope waiting, as a spawned closure that never returns would.
    pub fn spawn_future<F>(&self, future: F)
    where
        F: Future<Output = ()> + Send + 'scope,
    {
        self.jobs.increment();
        let future = ScopedFuture {
            future,
            unit: ScopeUnit(ScopePtr(self)),
        };
        // SAFETY: what `future` borrows outlives `'scope`, and so the scope; the scope
        // waits for `unit`, which is dropped after the future (field order), and nothing
        // touches the future after its drop.
        unsafe { crate::task::spawn_borrowing_future_in(&self.registry, future) };
    }

    fn record_panic(&self, payload: PanicPayload) {
        let surplus = {
            let mut slot = self.panic.lock().unwrap_or_else(PoisonError::into_inner);
            match *slot {
                None => {
                    *slot = Some(payload);
                    None
                }
                Some(_) => Some(payload),
            }
        };
        if let Some(payload) = surplus {
            // A payload's destructor may panic too. Keep that inside the job: a panic that
            // escapes a job unwinds its worker, maybe through a join whose frame another
            // worker still uses, and skips the job's count in the scope. Its own payload
            // is leaked rather than dropped (that drop could panic again).
            if let Err(nested) = panic::catch_unwind(AssertUnwindSafe(move || drop(payload))) {
                std::mem::forget(nested);
            }
        }
    }

    /// A spawned job finished: count it, waking the owner if it was the last.
    ///
    /// # Safety
    /// `this` is live; it may be freed once the count reached zero.
    unsafe fn job_finished(this: *const Self) {
        // SAFETY: live until the count reaches zero, which `decrement` handles.
        unsafe { CountLatch::decrement(&raw const (*this).jobs) };
    }

    /// Called by the owner once the body returned: drops the body's count, waits for the
    /// spawned jobs, and returns the body's result or re-raises the first panic.
    fn complete<R>(&self, result: Result<R, PanicPayload>) -> R {
        self.jobs.release_and_wait();
        let spawned_panic = self
            .panic
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match (result, spawned_panic) {
            (Err(payload), _) | (Ok(_), Some(payload)) => panic::resume_unwind(payload),
            (Ok(value), None) => value,
        }
    }
}

/// Creates a scope in which `op` may spawn closures that borrow from the caller; returns
/// once `op` and every spawned closure (transitively) finished.
///
/// Runs on the current pool, or on the global pool (blocking the caller) outside any.
///
/// ```
/// let data = vec![1, 2, 3];
/// let total = std::sync::atomic::AtomicI32::new(0);
/// sumac::scope(|s| {
///     for x in &data {
///         let total = &total;
///         s.spawn(move |_| {
///             total.fetch_add(*x, std::sync::atomic::Ordering::Relaxed);
///         });
///     }
/// });
/// assert_eq!(total.into_inner(), 6);
/// ```
///
/// # Panics
/// If `op` or a spawned closure panics, the panic is re-raised after all spawned work
/// finished; `op`'s own panic wins over those of spawned closures, and among spawned
/// closures the first to panic wins.
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    registry::in_worker(|worker| in_place_scope_in(worker.registry(), op))
}

/// Creates a scope like [`scope`], but runs `op` on the calling thread instead of moving
/// it into a pool; its spawned closures run on the current pool (the global pool when
/// called from outside any pool). So `op` need not be `Send`, and a thread outside the
/// pools keeps its own thread-local state while it spawns.
///
/// ```
/// use std::cell::Cell;
/// let local = Cell::new(0); // not `Sync`: `op` could not borrow it with `scope`
/// let mut results = vec![0; 4];
/// sumac::in_place_scope(|s| {
///     for (i, slot) in results.iter_mut().enumerate() {
///         s.spawn(move |_| *slot = i * i);
///         local.set(local.get() + 1);
///     }
/// });
/// assert_eq!((local.get(), results), (4, vec![0, 1, 4, 9]));
/// ```
///
/// # Panics
/// As [`scope`].
pub fn in_place_scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    registry::with_current_registry(|registry| in_place_scope_in(registry, op))
}

/// Runs `op` on the calling thread as the body of a scope whose jobs run on `registry`.
pub(crate) fn in_place_scope_in<'scope, OP, R>(registry: &Arc<Registry>, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    run_scope(Scope::new(registry), op)
}

/// A scope whose closures are spawned with [`spawn_fifo`](ScopeFifo::spawn_fifo): they
/// start in the order they were spawned; see [`scope_fifo`].
///
/// ```
/// use std::sync::Mutex;
///
/// /// Visits a complete binary tree of `depth` levels (nodes numbered from 1 as in a
/// /// heap), one job per node.
/// fn visit<'scope>(
///     s: &sumac::ScopeFifo<'scope>,
///     node: u32,
///     depth: u32,
///     seen: &'scope Mutex<Vec<u32>>,
/// ) {
///     seen.lock().unwrap().push(node);
///     if depth > 1 {
///         for child in [2 * node, 2 * node + 1] {
///             s.spawn_fifo(move |s| visit(s, child, depth - 1, seen));
///         }
///     }
/// }
///
/// // On one worker the jobs run in spawn order: level by level.
/// let pool = sumac::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// let seen = Mutex::new(Vec::new());
/// pool.scope_fifo(|s| visit(s, 1, 3, &seen));
/// assert_eq!(seen.into_inner().unwrap(), [1, 2, 3, 4, 5, 6, 7]);
/// ```
pub struct ScopeFifo<'scope> {
    scope: Scope<'scope>,
}

impl<'scope> ScopeHandle<'scope> for ScopeFifo<'scope> {
    fn scope(&self) -> &Scope<'scope> {
        &self.scope
    }
}

impl<'scope> ScopeFifo<'scope> {
    /// Spawns `body` into the scope, behind every job this thread spawned before it with
    /// `spawn_fifo`: the job goes on the spawning worker's own FIFO deque (or, outside the
    /// pool, into its injector), where jobs are taken in order. Otherwise as
    /// [`Scope::spawn`].
    ///
    /// ```
    /// use std::sync::Mutex;
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// let order = Mutex::new(Vec::new());
    /// pool.scope_fifo(|s| {
    ///     for i in 0..4 {
    ///         let order = &order;
    ///         s.spawn_fifo(move |_| order.lock().unwrap().push(i));
    ///     }
    /// });
    /// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3]);
    /// ```
    ///
    /// # Panics
    /// As [`Scope::spawn`].
    pub fn spawn_fifo<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&ScopeFifo<'scope>) + Send + 'scope,
    {
        spawn_into(self, body, true);
    }

    /// [`Scope::spawn_broadcast`] in a FIFO scope: `body` runs once on every worker.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let runs = AtomicUsize::new(0);
    /// pool.scope_fifo(|s| s.spawn_broadcast(|_, _| {
    ///     runs.fetch_add(1, Ordering::SeqCst);
    /// }));
    /// assert_eq!(runs.into_inner(), 2);
    /// ```
    ///
    /// # Panics
    /// As [`Scope::spawn`].
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&ScopeFifo<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        spawn_broadcast_into(self, body);
    }
}

/// [`scope`] whose closures are spawned in FIFO order: jobs spawned with
/// [`ScopeFifo::spawn_fifo`] start in the order they were spawned (with one worker,
/// that is the order they run in).
///
/// ```
/// let total = std::sync::atomic::AtomicUsize::new(0);
/// sumac::scope_fifo(|s| {
///     for i in 1..=4 {
///         let total = &total;
///         s.spawn_fifo(move |_| {
///             total.fetch_add(i, std::sync::atomic::Ordering::Relaxed);
///         });
///     }
/// });
/// assert_eq!(total.into_inner(), 10);
/// ```
///
/// # Panics
/// As [`scope`].
pub fn scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
    R: Send,
{
    registry::in_worker(|worker| in_place_scope_fifo_in(worker.registry(), op))
}

/// [`in_place_scope`] whose closures are spawned in FIFO order (see [`scope_fifo`]).
///
/// ```
/// use std::cell::RefCell;
/// let spawned = RefCell::new(Vec::new()); // not `Sync`: `op` may use it all the same
/// let mut squares = [0; 5];
/// sumac::in_place_scope_fifo(|s| {
///     for (i, square) in squares.iter_mut().enumerate() {
///         s.spawn_fifo(move |_| *square = i * i);
///         spawned.borrow_mut().push(i);
///     }
/// });
/// assert_eq!(squares, [0, 1, 4, 9, 16]);
/// assert_eq!(spawned.into_inner(), [0, 1, 2, 3, 4]);
/// ```
///
/// # Panics
/// As [`scope`].
pub fn in_place_scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    registry::with_current_registry(|registry| in_place_scope_fifo_in(registry, op))
}

/// [`in_place_scope_in`] for a FIFO scope.
pub(crate) fn in_place_scope_fifo_in<'scope, OP, R>(registry: &Arc<Registry>, op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    run_scope(
        ScopeFifo {
            scope: Scope::new(registry),
        },
        op,
    )
}

/// Shows the pool's size: the jobs and the closures are left out (Rayon's scopes are
/// `Debug` too).
impl std::fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("num_threads", &self.registry.num_threads())
            .finish_non_exhaustive()
    }
}

/// As for [`Scope`].
impl std::fmt::Debug for ScopeFifo<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopeFifo")
            .field("num_threads", &self.scope.registry.num_threads())
            .finish_non_exhaustive()
    }
}
