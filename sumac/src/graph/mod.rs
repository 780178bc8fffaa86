//! Task graphs with dependencies on the heartbeat pool: a fixed-capacity graph with batch
//! creation, batch readying, dependencies, affinity channels, waiting, cancellation and
//! re-runnable graphs (Bikeshed's model with Taskflow's conveniences).
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//!
//! let sum = AtomicU64::new(0);
//! sumac::graph::scope(|g| {
//!     let sum = &sum;
//!     // Two leaves, then a task that needs both, then one that continues it.
//!     let left = g.create(move |_| { sum.fetch_add(1, Ordering::Relaxed); }).unwrap();
//!     let right = g.create(move |_| { sum.fetch_add(2, Ordering::Relaxed); }).unwrap();
//!     let join = g
//!         .create(move |task| {
//!             assert_eq!(sum.load(Ordering::Relaxed), 3);
//!             // A running task may create, connect and ready new tasks.
//!             let g = task.graph();
//!             let more = g.create(move |_| { sum.fetch_add(10, Ordering::Relaxed); }).unwrap();
//!             g.ready(&[more]).unwrap();
//!         })
//!         .unwrap();
//!     g.add_dependencies(join, &[left, right]).unwrap();
//!     g.ready(&[left, right, join]).unwrap();
//! })
//! .unwrap(); // waits for every task, the one made inside `join` included
//! assert_eq!(sum.into_inner(), 13);
//! ```
//!
//! # Model
//! A graph has a fixed number of task slots, dependency links and channels, set when it
//! is built ([`TaskGraph::builder`]); nothing is allocated per task afterwards (closures
//! of up to 32 bytes live in their slot; bigger ones are boxed). A task is created (its
//! closure stored), optionally given dependencies, and *readied*; it runs once it was
//! readied and every dependency finished. One-shot tasks ([`Graph::create`]) give their
//! slot back when they finish, so a graph of 65,536 slots can run millions of tasks;
//! their [`TaskId`] then goes stale (a generation counter tells). Reusable tasks
//! ([`Graph::create_reusable`]) stay and run again with [`Graph::rerun`].
//!
//! A batch can be made with its dependencies and readied in one call
//! ([`Graph::create_linked_batch`]): dependencies on earlier tasks of the batch are named
//! by position ([`Before::InBatch`]) and linked before any other thread can see the
//! batch, so they cost no synchronisation; only dependencies on older tasks
//! ([`Before::Task`]) are pushed one by one, as [`Graph::add_dependencies`] does.
//!
//! Ready tasks of *pool channels* run on the pool's workers: a few runner jobs per burst
//! of work take them in batches (a task costs a few atomic operations, not a pool job),
//! and inside a task `join`, `scope` and parallel iterators work on the same pool. Each
//! pool channel is a separate ready queue, oldest chain of tasks first (producers on
//! separate channels do not contend; runners take from their own channel first and from
//! the others when it is empty). A caller inside one of the pool's calls (`install`,
//! say) that waits for the graph runs its ready tasks meanwhile, as a worker would. Tasks
//! of *dedicated channels* run only on threads that ask for them
//! ([`Graph::execute_one`], [`Graph::run_channel`], [`Graph::wait_all_serving`]): for
//! example, work that must stay on the main thread.
//!
//! # Lifetimes
//! [`scope`] gives a graph whose tasks may borrow from the enclosing stack frame: it
//! returns only after every task finished or was dropped. A [`TaskGraph`] built with
//! [`TaskGraphBuilder::build`] and kept around takes `'static` tasks; dropping it cancels
//! what did not start, waits for running tasks and drops the closures left.
//!
//! # Failure
//! A task that panics is finished as failed: its dependents (transitively) do not run
//! and are reported as cancelled; independent tasks still run. [`Graph::wait_all`]
//! *returns* the first panic (with the cancelled tasks) as [`WaitError::Failed`] once
//! every task finished, and the graph stays usable. [`Graph::cancel`] stops what has not
//! started. Bad ids, full graphs, dependencies added to readied tasks and graphs that
//! can never finish (cycles, tasks never readied) are typed errors, never hangs.
//!
//! # Blocking inside a task
//! The thread that runs a task keeps some of the tasks it releases and runs them next,
//! unseen by other threads. A task that waits through sumac ([`Graph::wait`], a
//! [`channel`](crate::channel) or oneshot receive, [`block_on`](crate::block_on)) first
//! hands those kept tasks to the other runners, so it may wait for a task it released.
//! A task that blocks in anything else (a `std::sync::Mutex`, `std::sync::mpsc`, a
//! `Condvar`, I/O) cannot be seen doing so: if what it waits for comes from a task that
//! its own thread kept, it waits forever. Wait through sumac's primitives, or make the
//! waiting task depend on the producing one (then it starts only after the other
//! finished).

mod engine;
mod error;
mod ready;
mod slot;
mod stack;

#[cfg(all(test, loom))]
mod loom_model;

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

pub use self::engine::Graph;
pub use self::error::{
    Capacity, Failure, GraphBuildError, GraphBusy, GraphFull, TaskError, WaitError,
};

pub(crate) use self::engine::BlockedTask;
use self::engine::{Config, Executor};

/// The most task slots a graph may have (indices fit 29 bits: a cell of a channel's
/// ready queue holds one beside three flags).
pub const MAX_TASKS: usize = (1 << 29) - 2;
/// The most dependency links a graph may have.
pub const MAX_DEPENDENCIES: usize = (1 << 30) - 2;
/// The most channels (pool and dedicated together) a graph may have.
pub const MAX_CHANNELS: usize = 1 << 16;

/// Default task slots of a graph ([`TaskGraphBuilder::max_tasks`]).
pub const DEFAULT_MAX_TASKS: usize = 1 << 16;
/// Default dependency links of a graph ([`TaskGraphBuilder::max_dependencies`]).
pub const DEFAULT_MAX_DEPENDENCIES: usize = 1 << 17;

/// Names a task of one graph. Cheap to copy; stale once a one-shot task finished (its
/// slot then holds another task, with another generation).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TaskId {
    pub(crate) graph: u32,
    pub(crate) index: u32,
    pub(crate) generation: u32,
}

impl TaskId {
    /// The task's slot in its graph (`0..max_tasks`); slots are reused, ids are not.
    pub fn slot(&self) -> usize {
        self.index as usize
    }
}

impl fmt::Debug for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "TaskId({}#{}@{})",
            self.index, self.generation, self.graph
        )
    }
}

/// A dependency of a task made by [`Graph::create_linked_batch_into`]: what it runs
/// after.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Before {
    /// A task made before the batch (one that finished already counts as done).
    Task(TaskId),
    /// The task at this position of the same batch (0 for its first task), which must
    /// come before the task that names it.
    InBatch(usize),
}

impl From<TaskId> for Before {
    fn from(id: TaskId) -> Self {
        Before::Task(id)
    }
}

/// A channel of one graph: where its ready tasks wait and who may run them (see the
/// [module documentation](self)). Get one from [`Graph::channel`] or
/// [`Graph::dedicated_channel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Channel {
    pub(crate) graph: u32,
    pub(crate) index: u16,
}

/// What a running task gets: its graph (to create, connect and ready more tasks) and its
/// own id (to make continuations of itself).
pub struct Task<'g, 'a> {
    pub(crate) graph: &'g Graph<'a>,
    pub(crate) id: TaskId,
}

impl<'g, 'a> Task<'g, 'a> {
    /// The graph the task belongs to.
    pub fn graph(&self) -> &'g Graph<'a> {
        self.graph
    }

    /// The running task's id: a dependency on it is satisfied when it finishes.
    pub fn id(&self) -> TaskId {
        self.id
    }
}

impl fmt::Debug for Task<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Task")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// Configures a [`TaskGraph`]: capacities, channels and pool.
///
/// ```
/// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// let graph = sumac::graph::TaskGraph::builder()
///     .max_tasks(1 << 20)
///     .max_dependencies(1 << 21)
///     .channels(4)
///     .dedicated_channels(1)
///     .pool(&pool)
///     .build()
///     .unwrap();
/// assert_eq!(graph.max_tasks(), 1 << 20);
/// assert!(graph.channel(3).is_some() && graph.channel(4).is_none());
///
/// let error = sumac::graph::TaskGraph::builder().max_tasks(0).build().unwrap_err();
/// assert_eq!(error, sumac::graph::GraphBuildError::BadTaskCapacity(0));
/// ```
#[derive(Clone, Copy)]
pub struct TaskGraphBuilder<'p> {
    max_tasks: usize,
    max_dependencies: usize,
    channels: usize,
    dedicated_channels: usize,
    pool: Option<&'p crate::ThreadPool>,
}

impl fmt::Debug for TaskGraphBuilder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskGraphBuilder")
            .field("max_tasks", &self.max_tasks)
            .field("max_dependencies", &self.max_dependencies)
            .field("channels", &self.channels)
            .field("dedicated_channels", &self.dedicated_channels)
            .field("pool", &self.pool.is_some())
            .finish()
    }
}

impl Default for TaskGraphBuilder<'_> {
    fn default() -> Self {
        TaskGraphBuilder {
            max_tasks: DEFAULT_MAX_TASKS,
            max_dependencies: DEFAULT_MAX_DEPENDENCIES,
            channels: 1,
            dedicated_channels: 0,
            pool: None,
        }
    }
}

impl<'p> TaskGraphBuilder<'p> {
    /// Task slots (default [`DEFAULT_MAX_TASKS`]; 1 to [`MAX_TASKS`]). The memory is
    /// reserved at build time (about 76 bytes per slot, and up to 8 more per slot for each
    /// channel's ready queue) and touched only as slots are used (every slot in turn after
    /// [`TaskGraph::compact`]).
    pub fn max_tasks(mut self, n: usize) -> Self {
        self.max_tasks = n;
        self
    }

    /// Dependency links (default [`DEFAULT_MAX_DEPENDENCIES`]; up to
    /// [`MAX_DEPENDENCIES`]): one per dependency not yet released (8 bytes each), beyond
    /// each task's first. A task's first dependency uses a link of the task's own, so a
    /// chain or a tree needs none of these (8 more bytes per task slot; when
    /// `max_tasks + max_dependencies` exceeds 2^30 - 1, tasks have no link of their own
    /// and every dependency takes one of these).
    pub fn max_dependencies(mut self, n: usize) -> Self {
        self.max_dependencies = n;
        self
    }

    /// Pool channels (default 1): ready tasks of every pool channel run on the pool's
    /// workers; separate channels keep producers from contending on one ready queue.
    pub fn channels(mut self, n: usize) -> Self {
        self.channels = n;
        self
    }

    /// Dedicated channels (default 0): their tasks run only where a thread serves them.
    pub fn dedicated_channels(mut self, n: usize) -> Self {
        self.dedicated_channels = n;
        self
    }

    /// The pool whose workers run the tasks (default: the current pool, as for
    /// [`spawn`](crate::spawn()): the calling worker's pool, or the global pool when built
    /// outside any pool).
    pub fn pool(mut self, pool: &'p crate::ThreadPool) -> Self {
        self.pool = Some(pool);
        self
    }

    /// Builds the graph.
    ///
    /// # Errors
    /// A [`GraphBuildError`] for a capacity out of range or no pool channel.
    pub fn build<'a>(self) -> Result<TaskGraph<'a>, GraphBuildError> {
        if self.max_tasks == 0 || self.max_tasks > MAX_TASKS {
            return Err(GraphBuildError::BadTaskCapacity(self.max_tasks));
        }
        if self.max_dependencies > MAX_DEPENDENCIES {
            return Err(GraphBuildError::BadDependencyCapacity(
                self.max_dependencies,
            ));
        }
        let channels = self.channels.checked_add(self.dedicated_channels);
        if self.channels == 0 || channels.is_none_or(|all| all > MAX_CHANNELS) {
            return Err(GraphBuildError::BadChannels {
                pool: self.channels,
                dedicated: self.dedicated_channels,
            });
        }
        let registry = match self.pool {
            Some(pool) => Arc::clone(pool.registry()),
            None => crate::registry::with_current_registry(Arc::clone),
        };
        let graph = Graph::new(Config {
            max_tasks: self.max_tasks,
            max_dependencies: self.max_dependencies,
            pool_channels: self.channels,
            dedicated_channels: self.dedicated_channels,
            max_runners: registry.num_threads(),
            executor: Executor::Pool(registry),
        });
        Ok(TaskGraph { graph })
    }

    /// Builds a graph whose tasks may borrow from the caller's stack, runs `f` with it,
    /// waits for every task, and drops the graph. See [`scope`].
    ///
    /// # Errors
    /// The build error, if any (then `f` does not run).
    pub fn scope<'scope, F, R>(self, f: F) -> Result<Result<R, WaitError>, GraphBuildError>
    where
        F: FnOnce(&Graph<'scope>) -> R,
    {
        let graph: TaskGraph<'scope> = self.build()?;
        let result = f(&graph);
        let waited = graph.wait_all();
        drop(graph);
        Ok(waited.map(|()| result))
    }
}

/// A task graph that owns its tasks: built by [`TaskGraph::builder`], used through
/// [`Graph`]'s methods (it dereferences to it).
///
/// Dropping it cancels the tasks that have not started, waits for the running ones, and
/// drops every closure left (so tasks that borrow never outlive their borrows).
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
///
/// let graph = sumac::graph::TaskGraph::builder().build().unwrap();
/// let count = Arc::new(AtomicUsize::new(0));
/// for _ in 0..10 {
///     let count = Arc::clone(&count);
///     let id = graph.create(move |_| { count.fetch_add(1, Ordering::Relaxed); }).unwrap();
///     graph.ready(&[id]).unwrap();
/// }
/// graph.wait_all().unwrap();
/// assert_eq!(count.load(Ordering::Relaxed), 10);
/// ```
pub struct TaskGraph<'a> {
    graph: Arc<Graph<'a>>,
}

impl TaskGraph<'_> {
    /// A builder with the defaults: [`DEFAULT_MAX_TASKS`] slots,
    /// [`DEFAULT_MAX_DEPENDENCIES`] links, one pool channel, no dedicated channel, the
    /// current pool.
    pub fn builder<'p>() -> TaskGraphBuilder<'p> {
        TaskGraphBuilder::default()
    }
}

impl TaskGraph<'_> {
    /// Lets new tasks take slots in creation order again. Finished tasks give their slots
    /// back in whatever order they finish, so after a big graph ran, a new one gets its
    /// slots scattered over memory (each task then costs cache misses where neighbours
    /// shared lines, and the misses of a slot freed on another core). After `compact`,
    /// new tasks take the slots (and dependency links) in index order, all of them before
    /// any freed meanwhile, so the graph's whole reserved memory is touched once it made
    /// [`max_tasks`](Graph::max_tasks) tasks. Call this between runs of big graphs; it is
    /// cheap. Failures not yet reported are still reported by [`Graph::wait_all`], but the
    /// failed tasks' slots go to new tasks like any other (see
    /// [`Graph::add_dependencies`]).
    ///
    /// ```
    /// let mut graph = sumac::graph::TaskGraph::builder().build().unwrap();
    /// let ids = graph.create_batch((0..100).map(|_| |_: &sumac::graph::Task<'_, '_>| ())).unwrap();
    /// graph.ready(&ids).unwrap();
    /// graph.wait_all().unwrap();
    /// graph.compact().unwrap();
    /// assert_eq!(graph.create(|_| ()).unwrap().slot(), 0);
    /// ```
    ///
    /// # Errors
    /// [`GraphBusy`] if the graph holds tasks (unfinished ones, or reusable ones).
    pub fn compact(&mut self) -> Result<(), GraphBusy> {
        // SAFETY: `&mut self` means no other thread holds this handle, and tasks (the
        // only other users of the graph) exist only while `compact` refuses.
        unsafe { self.graph.compact() }
    }
}

impl<'a> Deref for TaskGraph<'a> {
    type Target = Graph<'a>;

    fn deref(&self) -> &Graph<'a> {
        &self.graph
    }
}

impl Drop for TaskGraph<'_> {
    fn drop(&mut self) {
        self.graph.shut_down();
    }
}

impl fmt::Debug for TaskGraph<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.graph.fmt(f)
    }
}

/// Runs `f` with a new graph (default capacities, the current pool) whose tasks may borrow
/// from the caller's stack; returns `f`'s result once every task finished. Use
/// [`TaskGraphBuilder::scope`] for other capacities or a pool.
///
/// ```
/// let mut results = vec![0; 4];
/// sumac::graph::scope(|g| {
///     let mut previous = None;
///     for (i, r) in results.iter_mut().enumerate() {
///         let id = g.create(move |_| *r = i * i).unwrap();
///         if let Some(p) = previous {
///             g.add_dependencies(id, &[p]).unwrap(); // a chain, for show
///         }
///         g.ready(&[id]).unwrap();
///         previous = Some(id);
///     }
/// })
/// .unwrap();
/// assert_eq!(results, [0, 1, 4, 9]);
/// ```
///
/// Tasks cannot borrow what does not outlive the scope:
///
/// ```compile_fail
/// sumac::graph::scope(|g| {
///     let local = 5;
///     g.create(|_| println!("{local}")).unwrap();
/// });
/// ```
///
/// # Errors
/// What [`Graph::wait_all`] reports at the end: a panic (returned, not re-raised; see
/// [`Failure::resume_unwind`]) or tasks that could never run (never readied, or in a
/// cycle), which are dropped unrun. If `f` itself panics, the graph is torn down (what
/// did not start is dropped) and the panic goes on.
pub fn scope<'scope, F, R>(f: F) -> Result<R, WaitError>
where
    F: FnOnce(&Graph<'scope>) -> R,
{
    match TaskGraph::builder().scope(f) {
        Ok(result) => result,
        Err(error) => unreachable!("the default graph is valid: {error}"),
    }
}
