//! The typed errors of task graphs: every bad input gets one of these, never a hang, an
//! abort or undefined behaviour.

use std::any::Any;
use std::fmt;

use super::TaskId;

/// Which fixed capacity of a graph ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Capacity {
    /// Task slots ([`TaskGraphBuilder::max_tasks`](super::TaskGraphBuilder::max_tasks)).
    Tasks,
    /// Dependency links
    /// ([`TaskGraphBuilder::max_dependencies`](super::TaskGraphBuilder::max_dependencies)).
    Dependencies,
}

/// A graph had no room for the tasks or dependencies asked for; nothing was made.
///
/// Slots of finished one-shot tasks come back as their runners finish (in batches), so a
/// producer that outpaces its consumers can run a task itself or yield, and try again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GraphFull {
    /// What ran out.
    pub capacity: Capacity,
    /// How many were asked for.
    pub requested: usize,
}

impl fmt::Display for GraphFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.capacity {
            Capacity::Tasks => "task slots",
            Capacity::Dependencies => "dependency links",
        };
        write!(
            f,
            "the task graph has no room for {} {what}",
            self.requested
        )
    }
}

impl std::error::Error for GraphFull {}

/// Why an operation on a task (or a channel) was refused. Nothing was changed, except
/// where a variant says otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskError {
    /// No room for the tasks or dependencies asked for.
    Full(GraphFull),
    /// The id (or channel) belongs to another graph.
    ForeignGraph,
    /// The id names no slot of this graph.
    OutOfRange,
    /// The task finished already (a one-shot task's id goes stale once it finished).
    Finished,
    /// The task was readied already: it can take no new dependency and cannot be readied
    /// again.
    AlreadyReadied,
    /// A task may not depend on itself (it could never run).
    SelfDependency,
    /// A reusable task and a one-shot task cannot depend on each other: a reusable graph
    /// is run again as a whole, and one-shot tasks are gone after their run.
    ReuseMismatch,
    /// More unfinished dependencies than one task can count (2^30 - 1).
    TooManyDependencies,
    /// The channel index is not one of the graph's channels.
    NoSuchChannel,
    /// A task of a linked batch named a dependency by its position in the batch that is
    /// not an earlier task of the batch ([`Before::InBatch`](super::Before::InBatch)).
    NotEarlierInBatch,
}

impl From<GraphFull> for TaskError {
    fn from(full: GraphFull) -> Self {
        TaskError::Full(full)
    }
}

impl fmt::Display for TaskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaskError::Full(full) => full.fmt(f),
            TaskError::ForeignGraph => f.write_str("the id belongs to another task graph"),
            TaskError::OutOfRange => f.write_str("the id names no task of this graph"),
            TaskError::Finished => f.write_str("the task finished already"),
            TaskError::AlreadyReadied => f.write_str("the task was readied already"),
            TaskError::SelfDependency => f.write_str("a task cannot depend on itself"),
            TaskError::ReuseMismatch => {
                f.write_str("reusable and one-shot tasks cannot depend on each other")
            }
            TaskError::TooManyDependencies => f.write_str("too many dependencies for one task"),
            TaskError::NoSuchChannel => f.write_str("no such channel in this graph"),
            TaskError::NotEarlierInBatch => {
                f.write_str("a task of a batch can depend only on earlier tasks of the batch")
            }
        }
    }
}

impl std::error::Error for TaskError {}

/// What went wrong in the tasks that finished since the last report: the first panic
/// (the others are counted) and the tasks that were cancelled, because a dependency of
/// theirs panicked or was cancelled, or by [`Graph::cancel`](super::Graph::cancel).
pub struct Failure {
    /// The first task that panicked, and its panic payload (`None`: no task panicked,
    /// tasks were cancelled).
    pub panic: Option<(TaskId, Box<dyn Any + Send + 'static>)>,
    /// How many more tasks panicked.
    pub other_panics: usize,
    /// How many tasks were cancelled (finished without running).
    pub cancelled: usize,
    /// The ids of the first cancelled tasks, in the order they finished (at most
    /// [`Failure::MAX_IDS`]).
    pub cancelled_ids: Vec<TaskId>,
}

impl Failure {
    /// At most this many cancelled tasks are listed by id.
    pub const MAX_IDS: usize = 1 << 16;

    /// Re-raises the first panic on this thread (as `std::panic::resume_unwind`), or
    /// panics with a message when tasks were only cancelled.
    pub fn resume_unwind(self) -> ! {
        match self.panic {
            Some((_, payload)) => std::panic::resume_unwind(payload),
            None => panic!("{} task(s) of the graph were cancelled", self.cancelled),
        }
    }
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Failure")
            .field("panicked", &self.panic.as_ref().map(|(id, _)| *id))
            .field("other_panics", &self.other_panics)
            .field("cancelled", &self.cancelled)
            .finish_non_exhaustive()
    }
}

/// Why a wait ended without every task finishing normally.
#[derive(Debug)]
#[non_exhaustive]
pub enum WaitError {
    /// Every task finished, but some panicked or were cancelled.
    Failed(Failure),
    /// Tasks remain that can never run: none is ready or running, and the rest wait for
    /// dependencies that will never finish (a cycle, or tasks never readied) or were
    /// never readied themselves. `unfinished` counts them. Readying them now (from this
    /// thread) resumes the graph.
    Stalled {
        /// How many tasks are not finished.
        unfinished: usize,
    },
    /// `wait_all` was called from inside a task of the same graph, which could never
    /// see every task finish (its own task is one of them).
    InsideTask,
    /// The id or channel was refused.
    Task(TaskError),
}

impl From<TaskError> for WaitError {
    fn from(error: TaskError) -> Self {
        WaitError::Task(error)
    }
}

impl fmt::Display for WaitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaitError::Failed(failure) => match &failure.panic {
                Some((id, _)) => write!(
                    f,
                    "task {id:?} panicked ({} more panicked, {} cancelled)",
                    failure.other_panics, failure.cancelled
                ),
                None => write!(f, "{} task(s) were cancelled", failure.cancelled),
            },
            WaitError::Stalled { unfinished } => write!(
                f,
                "{unfinished} task(s) can never run (a cycle, or tasks never readied)"
            ),
            WaitError::InsideTask => f.write_str("wait_all was called from a task of its graph"),
            WaitError::Task(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for WaitError {}

/// Why [`Graph::rerun`](super::Graph::rerun) refused: tasks of the graph are not finished
/// yet (or still running).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GraphBusy {
    /// How many tasks are not finished.
    pub unfinished: usize,
}

impl fmt::Display for GraphBusy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the graph is busy: {} task(s) unfinished",
            self.unfinished
        )
    }
}

impl std::error::Error for GraphBusy {}

/// Why a [`TaskGraphBuilder`](super::TaskGraphBuilder) could not build a graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GraphBuildError {
    /// `max_tasks` is zero or above [`MAX_TASKS`](super::MAX_TASKS).
    BadTaskCapacity(usize),
    /// `max_dependencies` is above [`MAX_DEPENDENCIES`](super::MAX_DEPENDENCIES).
    BadDependencyCapacity(usize),
    /// No pool channel (at least one is needed), or more channels than
    /// [`MAX_CHANNELS`](super::MAX_CHANNELS) in all.
    BadChannels {
        /// Channels served by the pool.
        pool: usize,
        /// Channels served only by threads that ask for them.
        dedicated: usize,
    },
}

impl fmt::Display for GraphBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphBuildError::BadTaskCapacity(n) => write!(
                f,
                "max_tasks must be between 1 and {}, not {n}",
                super::MAX_TASKS
            ),
            GraphBuildError::BadDependencyCapacity(n) => write!(
                f,
                "max_dependencies must be at most {}, not {n}",
                super::MAX_DEPENDENCIES
            ),
            GraphBuildError::BadChannels { pool, dedicated } => write!(
                f,
                "a graph needs 1 or more pool channels and at most {} channels in all, not {pool} + {dedicated}",
                super::MAX_CHANNELS
            ),
        }
    }
}

impl std::error::Error for GraphBuildError {}
