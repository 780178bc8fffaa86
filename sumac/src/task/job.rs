//! `TaskJob`: an async task's place in the pool's job queues, without an allocation per
//! wake-up.
//!
//! Every job in sumac starts with a [`JobHeader`]. An async task (an `async-task`
//! allocation) carries one in its *metadata*, which lives inside the task's own
//! allocation for the task's whole life, next to a cell for the task's `Runnable` while
//! it is queued. Scheduling the task stores the `Runnable` in that cell and queues the
//! header; the worker that takes the job takes the `Runnable` back out and runs it.
//!
//! # Invariants
//! - At most one `Runnable` of a task exists at a time (async-task's guarantee), so the
//!   header is on at most one list or queue at a time, and the cell holds at most one.
//! - A task is scheduled again only after the worker running it took the `Runnable`
//!   out of the cell and moved the header out of every list and queue (`TAKEN`); its
//!   run function does not touch the header or the cell after `Runnable::run` starts
//!   (the same run may already schedule the task again, and another worker start it).
//! - The `Runnable` keeps the task's allocation, and so the header, alive while queued.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::NonNull;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use async_task::{Runnable, ScheduleInfo};

use crate::job::{JobHeader, JobRef, LOCAL};
use crate::policy::Stamp;
use crate::registry::{self, Registry};
use crate::sync::FreedUnseen;
use crate::worker::WorkerThread;

/// The metadata of a sumac async task: its job header and the pool it runs on.
#[repr(C)]
pub(crate) struct TaskJob {
    /// First, so that a pointer to the whole `TaskJob` is also one to its header. Freed
    /// by async-task's reference count (see [`FreedUnseen`]).
    header: FreedUnseen<JobHeader>,
    /// The task's `Runnable` (from `Runnable::into_raw`) while its job is queued.
    runnable: Cell<Option<NonNull<()>>>,
    registry: Arc<Registry>,
}

// SAFETY: the header and the cell are touched only by whoever holds the task's job at
// the time (see the module invariants), with the queues' hand-off edges in between, as
// for every `JobRef`; `registry` is `Sync`.
unsafe impl Send for TaskJob {}
// SAFETY: as above.
unsafe impl Sync for TaskJob {}

impl TaskJob {
    pub(crate) fn new(registry: Arc<Registry>) -> TaskJob {
        TaskJob {
            header: FreedUnseen::new(JobHeader::for_external_job(run_task_job)),
            runnable: Cell::new(None),
            registry,
        }
    }
}

/// async-task's schedule function of every sumac task: queues its job on its pool.
///
/// A task woken on a worker of its pool is kept by that worker to run next (its
/// [`NextTask`](crate::job_list::NextTask): no lock, no system call, nobody woken to
/// steal it); a task that woke itself while running (a yield) goes to the pool's
/// injector, behind the pool's other jobs; a wake-up from elsewhere goes to the
/// injector too (or, on a caller taking part, to its deque). A task scheduled once its
/// pool has finished (every worker gone) is dropped, which cancels it.
pub(crate) fn schedule(runnable: Runnable<TaskJob>, info: ScheduleInfo) {
    let job: *const TaskJob = runnable.metadata();
    // SAFETY: the metadata lives in the task's allocation, which the runnable (and,
    // below, its raw form, until a worker runs it) keeps alive.
    let job = unsafe { &*job };
    if !job.registry.spawn_started(None) {
        return; // dropping the runnable cancels the task
    }
    // The header is out of every list and queue (see the module invariants): reset it
    // for a new round.
    job.header.share.store(LOCAL, Ordering::Relaxed);
    job.header.recorded_at.set(Stamp::NOT_A_FORK);
    let job_ref = JobRef(NonNull::from(job).cast::<JobHeader>());
    // Once queued, the task may run, finish and free its metadata before the push
    // returns: push through a registry that something else keeps alive (the calling
    // worker's own, or a clone).
    // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
    let member = unsafe { WorkerThread::current().as_ref() }
        .filter(|worker| Arc::ptr_eq(worker.registry(), &job.registry));
    let clone;
    let registry: &Registry = match member {
        Some(member) => member.registry(),
        None => {
            clone = Arc::clone(&job.registry);
            &clone
        }
    };
    job.runnable.set(Some(runnable.into_raw()));
    if info.woken_while_running {
        // A task that woke itself (a yield) goes behind every job of the pool: on this
        // worker's own deques it would run again before anything from elsewhere.
        registry.queues.inject(job_ref);
    } else if let Some(worker) = member.filter(|member| !member.guest) {
        // SAFETY: the job is queued (counted, holding its runnable, `LOCAL`), and this
        // is the worker's own thread.
        unsafe { worker.keep_next_task(job_ref) };
    } else {
        registry.push_spawned_by(member, job_ref, false);
    }
}

/// The run function of a task's job.
///
/// # Safety
/// As every job's: `header` is the header of a live `TaskJob` whose job this thread
/// took, with the provenance of the whole `TaskJob`.
unsafe fn run_task_job(header: NonNull<JobHeader>) {
    crate::worker::settle_current_scope_debt();
    let job: *const TaskJob = header.as_ptr().cast::<TaskJob>();
    // SAFETY: the caller took the job, so the cell is ours; it holds the runnable
    // (stored before the job was queued).
    let raw = unsafe { (*job).runnable.take() }.expect("a queued task holds its runnable");
    // SAFETY: `raw` came from `Runnable::into_raw` of this task, and is used once.
    let runnable = unsafe { Runnable::<TaskJob>::from_raw(raw) };
    // The task's own panics are caught inside its future (see `task`); this catches
    // a panic of a destructor run while cancelling it.
    let panicked = panic::catch_unwind(AssertUnwindSafe(|| runnable.run())).err();
    // The header may be queued again already: touch nothing of the job from here on.
    registry::finish_spawned_job(panicked, true);
    // Let an idle worker's request share a task this one woke onto our list.
    // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
    if let Some(worker) = unsafe { WorkerThread::current().as_ref() } {
        worker.poll_heartbeat();
    }
}
