//! Async tasks on the pool: [`spawn_future`], [`Task`], [`block_on`], and the tasks of
//! [`Scope::spawn_future`](crate::Scope::spawn_future), which may borrow.
//!
//! A task is an `async-task` allocation whose metadata holds a sumac job header
//! (`job::TaskJob`): scheduling it queues that header on the pool like any spawned job,
//! so tasks run on the same workers as forks, spawns and parallel loops, and `join` and
//! parallel iterators work inside them. A task woken by a worker of its pool is kept by
//! that worker to run next (no lock, no system call, and no idle worker woken to steal
//! it; the heartbeat lets others take it if it waits a whole interval); an idle pool
//! has nothing to poll and burns no CPU.
//!
//! # Panics
//! A task's future runs inside `catch_unwind`. Its panic is re-raised where the task is
//! awaited or joined; if nobody can see it any more (the [`Task`] was detached or
//! dropped), it goes to the pool's panic handler, as a `spawn`'s panic does.
//!
//! # Shutdown
//! A task waiting for a wake-up does not keep its pool alive: dropping the pool lets the
//! workers exit once every *queued* job (a task ready to run counts as one) has run. A
//! task woken after that is dropped (cancelled); awaiting its [`Task`] then panics.

mod job;

use std::fmt;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use async_task::{Builder, FallibleTask, WithInfo};

use crate::channel::waiters::ThreadSignal;
use crate::job::PanicPayload;
use crate::registry::{self, Registry};
use job::TaskJob;

/// Spawns `future` as an async task on the current pool (the calling worker's, or the
/// global pool outside any pool) and returns its handle.
///
/// The task starts at once on an idle worker, or, when spawned on a worker of the pool,
/// when that worker next looks for work (for example when the spawning task awaits).
/// Await the [`Task`] for its output, [`join`](Task::join) it from synchronous code,
/// [`detach`](Task::detach) it, or drop it to cancel the task.
///
/// ```
/// let task = sumac::spawn_future(async {
///     // Fork-join code works inside a task.
///     let (a, b) = sumac::join(|| 20, || 22);
///     a + b
/// });
/// assert_eq!(task.join(), 42);
/// ```
pub fn spawn_future<F>(future: F) -> Task<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    registry::with_current_registry(|registry| spawn_future_in(registry, future))
}

/// Spawns `future` on the pool of `registry`.
pub(crate) fn spawn_future_in<F>(registry: &Arc<Registry>, future: F) -> Task<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let (runnable, task) = Builder::new()
        .metadata(TaskJob::new(Arc::clone(registry)))
        .spawn(|_| CatchPanic { future }, WithInfo(job::schedule));
    runnable.schedule();
    Task {
        task: Some(task.fallible()),
    }
}

/// Spawns `future`, which may borrow, as a detached task on the pool of `registry`.
///
/// # Safety
/// What `future` borrows outlives the future: the caller waits until it was dropped
/// (completed or cancelled), which async-task does before it lets go of the task's
/// last `Runnable`, and nothing of the future is touched after its drop.
pub(crate) unsafe fn spawn_borrowing_future_in<F>(registry: &Arc<Registry>, future: F)
where
    F: Future<Output = ()> + Send,
{
    // SAFETY: `future` is `Send`, and `schedule` is `Send`, `Sync` and `'static`; what
    // `future` borrows outlives every use of it (our caller's contract).
    let (runnable, task) = unsafe {
        Builder::new()
            .metadata(TaskJob::new(Arc::clone(registry)))
            .spawn_unchecked(|_| future, WithInfo(job::schedule))
    };
    task.detach();
    runnable.schedule();
}

impl crate::ThreadPool {
    /// Spawns `future` as an async task on this pool (see [`spawn_future`]).
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let task = pool.spawn_future(async { sumac::current_thread_index().is_some() });
    /// assert!(task.join());
    /// ```
    pub fn spawn_future<F>(&self, future: F) -> Task<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        spawn_future_in(self.registry(), future)
    }
}

/// The handle of an async task ([`spawn_future`]): a future of the task's output.
///
/// Dropping it cancels the task (at its next suspension point, if it is running);
/// [`detach`](Self::detach) lets it run to completion unobserved. If the task panicked,
/// awaiting or joining the handle re-raises the panic.
#[must_use = "dropping a Task cancels it; call `detach` to let it run"]
pub struct Task<T> {
    task: Option<FallibleTask<Outcome<T>, TaskJob>>,
}

impl<T> Task<T> {
    /// Waits for the task's output from synchronous code (see [`block_on`]: on a worker
    /// this runs the pool's jobs, the task itself perhaps, while it waits).
    ///
    /// # Panics
    /// Re-raises the task's panic.
    pub fn join(self) -> T {
        block_on(self)
    }

    /// Lets the task run to completion without a handle; a panic in it goes to the
    /// pool's panic handler.
    pub fn detach(mut self) {
        if let Some(task) = self.task.take() {
            task.detach();
        }
    }

    /// Cancels the task and waits until it stopped; returns its output if it had
    /// finished already.
    ///
    /// # Panics
    /// Re-raises the task's panic if it had finished by panicking.
    pub async fn cancel(mut self) -> Option<T> {
        let task = self.task.take()?;
        task.cancel().await.map(Outcome::into_output)
    }

    /// Whether the task finished (or was cancelled).
    pub fn is_finished(&self) -> bool {
        self.task.as_ref().is_none_or(FallibleTask::is_finished)
    }
}

impl<T> Future for Task<T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let task = self
            .task
            .as_mut()
            .expect("a Task polled after it completed");
        match Pin::new(task).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(outcome) => {
                self.task = None;
                match outcome {
                    Some(outcome) => Poll::Ready(outcome.into_output()),
                    None => panic!("sumac: the task was cancelled: its pool shut down"),
                }
            }
        }
    }
}

impl<T> fmt::Debug for Task<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Task")
            .field("finished", &self.is_finished())
            .finish()
    }
}

/// Runs `future` to completion on the calling thread and returns its output.
///
/// On a worker of a sumac pool, the worker runs its pool's other jobs (tasks among
/// them) while the future is pending; elsewhere the thread parks until the future's
/// waker is called.
///
/// ```
/// let (sender, receiver) = sumac::channel::oneshot();
/// let task = sumac::spawn_future(async move { sender.send(5).unwrap() });
/// assert_eq!(sumac::block_on(receiver), Ok(5));
/// sumac::block_on(task);
/// ```
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let signal = ThreadSignal::for_current_thread();
    let waker = Waker::from(Arc::clone(&signal));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        signal.wait(None);
        signal.reset();
    }
}

/// A task's output: its future's, or the panic it raised.
enum Outcome<T> {
    Finished(T),
    Panicked(UnseenPanic),
}

impl<T> Outcome<T> {
    /// The output, or the panic re-raised.
    fn into_output(self) -> T {
        match self {
            Outcome::Finished(output) => output,
            Outcome::Panicked(mut panic) => {
                let payload = panic.payload.take().expect("a panic is re-raised once");
                panic::resume_unwind(payload)
            }
        }
    }
}

/// A task's panic, with the pool whose panic handler gets it if nobody re-raises it (the
/// task was detached, or its handle dropped after it ended).
struct UnseenPanic {
    payload: Option<PanicPayload>,
    registry: Arc<Registry>,
}

impl Drop for UnseenPanic {
    fn drop(&mut self) {
        if let Some(payload) = self.payload.take() {
            self.registry.handle_panic(payload);
        }
    }
}

/// A task's future, with its panics caught.
struct CatchPanic<F> {
    future: F,
}

impl<F: Future> Future for CatchPanic<F> {
    type Output = Outcome<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `future` is structurally pinned: it is never moved out of `self`, and
        // `CatchPanic` has no `Drop` and is `Unpin` only if `F` is.
        let future = unsafe { self.map_unchecked_mut(|this| &mut this.future) };
        match panic::catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Outcome::Finished(output)),
            Err(payload) => {
                // Tasks are polled on workers of their pool.
                let registry = registry::with_current_registry(Arc::clone);
                Poll::Ready(Outcome::Panicked(UnseenPanic {
                    payload: Some(payload),
                    registry,
                }))
            }
        }
    }
}
