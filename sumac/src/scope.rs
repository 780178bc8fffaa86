//! `scope` and `Scope::spawn`: fork work that may borrow from the enclosing stack frame.
//!
//! A spawned closure is boxed into a heap job and pushed on the spawning worker's own
//! list (plain stores, like a fork); heartbeats share it like any other job. The scope
//! counts its outstanding jobs; when the scope's body returns, its worker keeps running
//! jobs (its own first) until the count is zero, and only then returns or re-raises a
//! panic. The job that brings the count to zero wakes the scope's worker.

use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::job::{HeapJob, PanicPayload};
use crate::registry::{self, Registry, WorkerThread};

/// A scope in which closures borrowing from outside may be spawned; see [`scope`].
pub struct Scope<'scope> {
    registry: Arc<Registry>,
    /// The worker that waits for the scope's jobs.
    owner: usize,
    /// Spawned jobs that have not finished.
    pending: AtomicUsize,
    /// The first panic of a spawned job.
    panic: Mutex<Option<PanicPayload>>,
    /// Invariant in `'scope`, as in Rayon.
    marker: PhantomData<ScopeBody<'scope>>,
}

/// What a scope's spawned closures look like (for the lifetime marker).
type ScopeBody<'scope> = Box<dyn FnOnce(&Scope<'scope>) + Send + Sync + 'scope>;

/// A raw pointer to a scope that may travel with its jobs.
struct ScopePtr<'scope>(*const Scope<'scope>);

// SAFETY: `Scope` is `Sync`, and the scope outlives all of its jobs (its owner waits for
// `pending` to reach zero), so sending a pointer to it is like sending a `&Scope`.
unsafe impl Send for ScopePtr<'_> {}

impl<'scope> Scope<'scope> {
    fn new(worker: &WorkerThread) -> Self {
        Scope {
            registry: Arc::clone(worker.registry()),
            owner: worker.index(),
            pending: AtomicUsize::new(0),
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
        self.pending.fetch_add(1, Ordering::Relaxed);
        let scope = ScopePtr(self);
        let job = HeapJob::into_job_ref(move || {
            let scope = scope;
            // SAFETY: the scope is alive until `pending` reaches zero, which happens only
            // in `job_finished` below.
            let this = unsafe { &*scope.0 };
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| body(this))) {
                this.record_panic(payload);
            }
            // SAFETY: `scope.0` is live, and `job_finished` does not touch it after the
            // decrement that may free it.
            unsafe { Scope::job_finished(scope.0) };
        });
        self.registry.push_job(job);
    }

    fn record_panic(&self, payload: PanicPayload) {
        let mut slot = self.panic.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(payload);
        }
    }

    /// A spawned job finished: decrement the count and wake the owner at zero.
    ///
    /// # Safety
    /// `this` is live; it may be freed by its owner right after the decrement.
    unsafe fn job_finished(this: *const Self) {
        // SAFETY: live until the decrement; the registry is reached through an `Arc` that
        // this worker also holds (jobs of a scope only run on its pool's workers), so it
        // outlives the scope.
        let (registry, owner) = unsafe { (Arc::clone(&(*this).registry), (*this).owner) };
        // SAFETY: as above.
        if unsafe { (*this).pending.fetch_sub(1, Ordering::AcqRel) } == 1 {
            registry.queue.wake(owner);
        }
    }

    fn complete<R>(&self, worker: &WorkerThread, result: Result<R, PanicPayload>) -> R {
        worker.wait_until(|| self.pending.load(Ordering::Acquire) == 0);
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
    registry::in_worker(|worker| scope_on_worker(worker, op))
}

pub(crate) fn scope_on_worker<'scope, OP, R>(worker: &WorkerThread, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    let scope = Scope::new(worker);
    let result = panic::catch_unwind(AssertUnwindSafe(|| op(&scope)));
    scope.complete(worker, result)
}
