//! How a pool's worker threads are started: by sumac itself ([`DefaultSpawn`]), or by a
//! handler the user gives [`ThreadPoolBuilder::spawn_handler`](crate::ThreadPoolBuilder::spawn_handler)
//! ([`CustomSpawn`]), which receives one [`ThreadBuilder`] per worker and must run it on
//! a thread of its choosing.
//!
//! Either way the pool counts the `ThreadBuilder`s it handed out that have not yet been
//! dropped (`Registry::unfinished_workers`): a builder is dropped when its worker
//! returns from [`ThreadBuilder::run`], or unused by a handler. Dropping the pool waits
//! for that count to reach zero, so it waits for custom-spawned workers as it joins its
//! own threads, without holding their join handles.

use std::fmt;
use std::io;
use std::sync::Arc;

use crate::registry::Registry;
use crate::sync::thread::JoinHandle;
use crate::worker::worker_main;

/// The state a worker thread needs to run: handed to a
/// [`spawn_handler`](crate::ThreadPoolBuilder::spawn_handler), which must call
/// [`run`](ThreadBuilder::run) on a thread of its own.
///
/// # Example
///
/// ```
/// let pool = sumac::ThreadPoolBuilder::new()
///     .num_threads(2)
///     .spawn_handler(|thread| {
///         std::thread::Builder::new()
///             .name(format!("my-{}", thread.index()))
///             .spawn(|| thread.run())?;
///         Ok(())
///     })
///     .build()
///     .unwrap();
/// let names = pool.broadcast(|_| std::thread::current().name().map(str::to_owned));
/// assert!(names.iter().all(|name| name.as_deref().unwrap().starts_with("my-")));
/// ```
///
/// What the handler learns from the pool's builder:
///
/// ```
/// use std::sync::{Arc, Mutex};
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let record = Arc::clone(&seen);
/// let pool = sumac::ThreadPoolBuilder::new()
///     .num_threads(2)
///     .thread_name(|i| format!("cruncher-{i}"))
///     .stack_size(4 * 1024 * 1024)
///     .spawn_handler(move |thread| {
///         let entry = (thread.index(), thread.name().map(str::to_owned), thread.stack_size());
///         record.lock().unwrap().push(entry);
///         std::thread::spawn(|| thread.run());
///         Ok(())
///     })
///     .build()
///     .unwrap();
/// let mut seen = seen.lock().unwrap().clone();
/// seen.sort();
/// let name = |i| Some(format!("cruncher-{i}"));
/// let stack = Some(4 * 1024 * 1024);
/// assert_eq!(seen, [(0, name(0), stack), (1, name(1), stack)]);
/// // The handler is free to ignore the name and the stack size: this one did.
/// assert_eq!(pool.broadcast(|_| std::thread::current().name().is_none()), [true, true]);
/// ```
pub struct ThreadBuilder {
    registry: Arc<Registry>,
    index: usize,
    name: String,
    stack_size: Option<usize>,
    /// Whether [`run`](Self::run) was called; a builder dropped without running tells
    /// the registry that its worker will never run anything.
    ran: bool,
}

impl ThreadBuilder {
    /// A builder for worker `index` of `registry`, counted as unfinished until dropped.
    pub(crate) fn new(
        registry: Arc<Registry>,
        index: usize,
        name: String,
        stack_size: Option<usize>,
    ) -> ThreadBuilder {
        registry.worker_handed_out();
        ThreadBuilder {
            registry,
            index,
            name,
            stack_size,
            ran: false,
        }
    }

    /// The index of this worker in its pool (`0..num_threads`). See the
    /// [type's example](ThreadBuilder#example), which also shows [`name`](Self::name)
    /// and [`stack_size`](Self::stack_size).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The name the pool gives this thread: from
    /// [`thread_name`](crate::ThreadPoolBuilder::thread_name), else `sumac-worker-{index}`.
    /// (Always `Some`: sumac names every worker; the `Option` is Rayon's signature.) See
    /// the [type's example](ThreadBuilder#example).
    pub fn name(&self) -> Option<&str> {
        Some(&self.name)
    }

    /// The stack size set with [`stack_size`](crate::ThreadPoolBuilder::stack_size), if
    /// any. See the [type's example](ThreadBuilder#example).
    pub fn stack_size(&self) -> Option<usize> {
        self.stack_size
    }

    /// Runs the worker on the calling thread until the pool shuts down (after the pool
    /// is dropped and its queued work is done).
    ///
    /// A handler must call this on a *new* thread: calling it inside the handler
    /// itself would block `build` until the pool is dropped, which never happens.
    ///
    /// ```
    /// let (sender, receiver) = std::sync::mpsc::channel();
    /// let pool = sumac::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .spawn_handler(move |thread| {
    ///         let sender = sender.clone();
    ///         std::thread::spawn(move || {
    ///             let index = thread.index();
    ///             thread.run(); // returns once the pool is dropped and its work is done
    ///             sender.send(index).unwrap();
    ///         });
    ///         Ok(())
    ///     })
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(pool.join(|| 2, || 3), (2, 3));
    /// assert!(receiver.try_recv().is_err()); // both workers are still in `run`
    /// drop(pool);
    /// let mut returned: Vec<usize> = receiver.iter().take(2).collect();
    /// returned.sort();
    /// assert_eq!(returned, [0, 1]);
    /// ```
    pub fn run(mut self) {
        self.ran = true;
        worker_main(Arc::clone(&self.registry), self.index);
    }
}

impl Drop for ThreadBuilder {
    fn drop(&mut self) {
        if !self.ran {
            self.registry.worker_never_runs(self.index);
        }
        self.registry.worker_finished();
    }
}

impl fmt::Debug for ThreadBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadBuilder")
            .field("index", &self.index)
            .field("name", &self.name)
            .field("stack_size", &self.stack_size)
            .finish()
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::DefaultSpawn {}
    impl<F> Sealed for super::CustomSpawn<F> {}
}

/// How a [`ThreadPoolBuilder`](crate::ThreadPoolBuilder) starts worker threads: the
/// builder's type parameter, either [`DefaultSpawn`] or [`CustomSpawn`] (sealed).
///
/// Name it to accept any builder:
///
/// ```
/// use sumac::{ThreadPool, ThreadPoolBuilder, ThreadSpawn};
///
/// fn two_threads<S: ThreadSpawn>(builder: ThreadPoolBuilder<S>) -> ThreadPool {
///     builder.num_threads(2).build().unwrap()
/// }
///
/// let plain = two_threads(ThreadPoolBuilder::new());
/// let custom = two_threads(ThreadPoolBuilder::new().spawn_handler(|thread| {
///     std::thread::spawn(|| thread.run());
///     Ok(())
/// }));
/// assert_eq!(plain.current_num_threads(), custom.current_num_threads());
/// ```
pub trait ThreadSpawn: sealed::Sealed {
    /// Starts `thread` (which must eventually [`run`](ThreadBuilder::run)); returns a
    /// handle when the pool itself should join the thread.
    #[doc(hidden)]
    fn spawn(&mut self, thread: ThreadBuilder) -> io::Result<Option<JoinHandle<()>>>;
}

/// sumac starts each worker with [`std::thread::Builder`] and joins it when the pool is
/// dropped (the default).
///
/// It is the type parameter of a builder without a
/// [`spawn_handler`](crate::ThreadPoolBuilder::spawn_handler):
///
/// ```
/// use sumac::{DefaultSpawn, ThreadPoolBuilder};
/// let builder: ThreadPoolBuilder<DefaultSpawn> = ThreadPoolBuilder::new().num_threads(2);
/// let pool = builder.build().unwrap();
/// assert_eq!(pool.current_num_threads(), 2);
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct DefaultSpawn;

impl ThreadSpawn for DefaultSpawn {
    fn spawn(&mut self, thread: ThreadBuilder) -> io::Result<Option<JoinHandle<()>>> {
        let mut builder = crate::sync::thread::Builder::new().name(thread.name.clone());
        if let Some(stack_size) = thread.stack_size {
            builder = builder.stack_size(stack_size);
        }
        builder.spawn(move || thread.run()).map(Some)
    }
}

/// A user's [`spawn_handler`](crate::ThreadPoolBuilder::spawn_handler) starts each worker.
///
/// It is the type parameter of a builder after `spawn_handler`, so a function can
/// return such a builder for its caller to finish configuring:
///
/// ```
/// use std::io;
/// use sumac::{CustomSpawn, ThreadBuilder, ThreadPoolBuilder};
///
/// type Handler = CustomSpawn<fn(ThreadBuilder) -> io::Result<()>>;
///
/// fn plain_threads() -> ThreadPoolBuilder<Handler> {
///     ThreadPoolBuilder::new().spawn_handler(|thread| {
///         std::thread::Builder::new().spawn(|| thread.run())?;
///         Ok(())
///     })
/// }
///
/// let pool = plain_threads().num_threads(2).build().unwrap();
/// assert_eq!(pool.install(|| sumac::join(|| 'a', || 'b')), ('a', 'b'));
/// ```
pub struct CustomSpawn<F>(F);

impl<F> CustomSpawn<F> {
    pub(crate) fn new(spawn: F) -> Self {
        CustomSpawn(spawn)
    }
}

impl<F> fmt::Debug for CustomSpawn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CustomSpawn(..)")
    }
}

impl<F> ThreadSpawn for CustomSpawn<F>
where
    F: FnMut(ThreadBuilder) -> io::Result<()>,
{
    fn spawn(&mut self, thread: ThreadBuilder) -> io::Result<Option<JoinHandle<()>>> {
        (self.0)(thread).map(|()| None)
    }
}
