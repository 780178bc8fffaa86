//! Jobs: closures that one worker may hand to another thread.
//!
//! Every job starts with a [`JobHeader`], so that the worker-local [`JobList`] and the
//! shared queue can hold jobs of any closure type as `NonNull<JobHeader>`. Three kinds
//! of job exist:
//!
//! * [`JoinFrame`]: the second closure of a `join`, living in the joining function's
//!   stack frame. It is pushed on its worker's list with plain stores and, in the common
//!   case, popped again by the same worker and run inline.
//! * [`StackJob`]: a closure injected into a pool from outside (or from another pool) by
//!   a thread that blocks on a latch until it has run.
//! * [`HeapJob`]: a boxed closure from `spawn`, run by whichever worker gets it.
//!
//! # The hand-off state machine (`JobHeader::share`)
//!
//! ```text
//!   LOCAL ──promote──▶ QUEUED ──take (queue lock)──▶ TAKEN ──run, write result──▶ DONE
//!     │ │                ▲ │
//!     │ └─claim (rescue)─┘ └──reclaim by owner (queue lock)──▶ RECLAIMED (owner runs it inline)
//!     └──popped by its own worker while waiting──▶ TAKEN ──▶ DONE
//! ```
//!
//! Only the owning worker moves a job out of `LOCAL`, except the heartbeat thread, which
//! queues a fork it claimed from its owner's rescue offer (see
//! [`RescueSlot`](crate::job_list::RescueSlot)); the owner withdraws that offer, or finds
//! it claimed, before it looks at the state. `QUEUED → TAKEN` and
//! `QUEUED → RECLAIMED` both happen under the shared queue's lock, so exactly one of the
//! taker and the owner wins. After a taker stores `DONE` it never touches the job again:
//! the owner may return and pop the stack frame the moment it sees `DONE`.
//!
//! [`JobList`]: crate::job_list::JobList

use std::any::Any;
use std::cell::{Cell, UnsafeCell};
use std::mem::{ManuallyDrop, MaybeUninit};
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};

use crate::latch::Latch;
use crate::policy::Stamp;
use crate::queues::Queues;
use crate::sync::AtomicU8;
use std::sync::atomic::Ordering;

/// The job sits on its owner's [`JobList`](crate::job_list::JobList) (or was never shared).
pub(crate) const LOCAL: u8 = 0;
/// The job was promoted into the shared queue and nobody has started it.
pub(crate) const QUEUED: u8 = 1;
/// A thread took the job and is running it.
pub(crate) const TAKEN: u8 = 2;
/// The job finished; its result is written and its runner has let go of it.
pub(crate) const DONE: u8 = 3;
/// The owner took the job back out of the queue before anyone started it.
pub(crate) const RECLAIMED: u8 = 4;

/// A panic payload, as carried from the thread that caught it to the one that re-raises it.
pub(crate) type PanicPayload = Box<dyn Any + Send + 'static>;

/// The part every job starts with.
pub(crate) struct JobHeader {
    /// Runs the job on a thread that got it from the shared queue or from its own list.
    ///
    /// Safety: called at most once per job, with a pointer to this header that carries
    /// the provenance of the whole job.
    run: unsafe fn(NonNull<JobHeader>),
    /// The next older job on the owner's list (owner thread only).
    pub(crate) older: Cell<Option<NonNull<JobHeader>>>,
    /// The next newer job on the owner's list (owner thread only; stale on the newest).
    pub(crate) newer: Cell<Option<NonNull<JobHeader>>>,
    /// The hand-off state (see the module documentation).
    pub(crate) share: AtomicU8,
    /// The heartbeat epoch when the job was recorded: only jobs that have waited through
    /// a whole heartbeat interval are shared (owner thread only).
    pub(crate) recorded_at: Cell<Stamp>,
    /// Where the owner of a [`JoinFrame`] waits: written by the owner whenever the job
    /// leaves `LOCAL` (and not before, to keep the fork path short), read by its runner.
    owner: Cell<MaybeUninit<(NonNull<Queues>, usize)>>,
}

impl JobHeader {
    #[inline(always)]
    fn new(run: unsafe fn(NonNull<JobHeader>)) -> JobHeader {
        JobHeader {
            run,
            older: Cell::new(None),
            newer: Cell::new(None),
            share: AtomicU8::new(LOCAL),
            recorded_at: Cell::new(Stamp::NOT_A_FORK),
            owner: Cell::new(MaybeUninit::uninit()),
        }
    }

    /// The header of a job kind defined outside this module (an async task's, see
    /// `task::job`), which runs `run` when a worker takes it.
    pub(crate) fn for_external_job(run: unsafe fn(NonNull<JobHeader>)) -> JobHeader {
        JobHeader::new(run)
    }

    /// Records whom to wake when this job is done. The owner calls this before the job
    /// leaves `LOCAL` (to be promoted, or run by the owner itself while it waits).
    pub(crate) fn set_owner(&self, queue: &Queues, index: usize) {
        self.owner
            .set(MaybeUninit::new((NonNull::from(queue), index)));
    }

    /// Runs the job.
    ///
    /// # Safety
    /// `job` points to a live job that no other thread runs, and the caller moved its
    /// state out of `LOCAL`/`QUEUED` (to `TAKEN`), so that nobody else will run it.
    pub(crate) unsafe fn execute(job: NonNull<JobHeader>) {
        // SAFETY: the caller guarantees `job` is live; `run` is read before the job runs.
        let run = unsafe { (*job.as_ptr()).run };
        // Every kind of job catches the panics of the code it runs. Should one ever
        // escape anyway, unwinding on would skip the job's completion and could leave a
        // join frame on a stack that is about to be popped: abort instead (as Rayon's
        // workers do).
        let guard = AbortIfUnwinding;
        // SAFETY: `job` carries the whole job's provenance (it was made from a pointer
        // to the job, see `JobRef`), and the caller gave us the exclusive right to run it.
        unsafe { run(job) };
        std::mem::forget(guard);
    }

    /// Marks a [`JoinFrame`] as finished and wakes its owner.
    ///
    /// # Safety
    /// `this` points to a live header whose job this thread ran. After this call the
    /// job may be freed at any moment, so it must not be touched again.
    unsafe fn complete(this: *const JobHeader) {
        // Read everything we need before publishing DONE: afterwards the frame may be gone.
        // SAFETY: the frame is live until the store below, and its owner set `owner`
        // before the job left LOCAL (which it did: this thread runs it).
        let (queue, index) = unsafe { (*this).owner.get().assume_init() };
        // SAFETY: as above; after this store the owner may pop the frame.
        unsafe { (*this).share.store(DONE, Ordering::Release) };
        // SAFETY: the queue belongs to the owner's registry. Join frames are only run by
        // workers of that registry, and this thread is one: its `WorkerThread` holds an
        // `Arc` of the registry, so the queue outlives this call.
        unsafe { queue.as_ref() }.wake(index);
    }
}

/// A pointer to a job that may travel between threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct JobRef(pub(crate) NonNull<JobHeader>);

// SAFETY: a `JobRef` is a handle on a job whose closure and result are `Send`; the
// hand-off state machine makes sure exactly one thread runs it.
unsafe impl Send for JobRef {}

impl JobRef {
    /// The header of the job.
    ///
    /// # Safety
    /// The job must still be alive.
    pub(crate) unsafe fn header<'a>(self) -> &'a JobHeader {
        // SAFETY: the caller guarantees the job is alive for the returned lifetime.
        unsafe { self.0.as_ref() }
    }
}

/// The second closure of a `join`, in the joining function's stack frame.
#[repr(C)]
pub(crate) struct JoinFrame<B, RB> {
    header: JobHeader,
    func: UnsafeCell<ManuallyDrop<B>>,
    result: UnsafeCell<MaybeUninit<Result<RB, PanicPayload>>>,
}

impl<B, RB> JoinFrame<B, RB>
where
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    #[inline(always)]
    pub(crate) fn new(func: B) -> Self {
        JoinFrame {
            header: JobHeader::new(Self::run),
            func: UnsafeCell::new(ManuallyDrop::new(func)),
            result: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// A pointer to the header that carries the provenance of the whole frame.
    #[inline(always)]
    pub(crate) fn job_ref(&self) -> JobRef {
        let frame: *const Self = self;
        // SAFETY: `frame` comes from a reference, so it is non-null; the header is the
        // first field of a `repr(C)` struct, so the cast keeps the whole frame's provenance.
        JobRef(unsafe { NonNull::new_unchecked(frame.cast_mut().cast::<JobHeader>()) })
    }

    #[inline(always)]
    pub(crate) fn header(&self) -> &JobHeader {
        &self.header
    }

    /// Takes the closure out to run it inline.
    ///
    /// # Safety
    /// Called once, by the owner, and only when no other thread has run or will run the job
    /// (its state is `LOCAL` after unlinking it, or `RECLAIMED`).
    #[inline(always)]
    pub(crate) unsafe fn take_func(&self) -> B {
        // SAFETY: the caller guarantees exclusive access and that the closure is still there.
        unsafe { ManuallyDrop::take(&mut *self.func.get()) }
    }

    /// Takes the result written by the thread that ran the job.
    ///
    /// # Safety
    /// The state must be `DONE` (observed with acquire ordering) and the result not yet taken.
    pub(crate) unsafe fn take_result(&self) -> Result<RB, PanicPayload> {
        debug_assert_eq!(self.header.share.load(Ordering::Relaxed), DONE);
        // SAFETY: the runner wrote the result before publishing DONE (release), and the
        // caller observed DONE with acquire ordering.
        unsafe { (*self.result.get()).assume_init_read() }
    }

    unsafe fn run(job: NonNull<JobHeader>) {
        let frame: *const Self = job.as_ptr().cast::<Self>();
        // SAFETY: the state is TAKEN, so this thread is the only one to touch `func`.
        let func = unsafe { ManuallyDrop::take(&mut *(*frame).func.get()) };
        let result = panic::catch_unwind(AssertUnwindSafe(func));
        // SAFETY: only the runner writes the result, before it publishes DONE.
        unsafe { (*(*frame).result.get()).write(result) };
        // SAFETY: the header is live until `complete` publishes DONE; we do not touch the
        // frame afterwards.
        unsafe { JobHeader::complete(ptr::addr_of!((*frame).header)) };
    }
}

/// A closure injected into a pool by a thread that waits on `latch` until it ran.
#[repr(C)]
pub(crate) struct StackJob<L, F, R> {
    header: JobHeader,
    pub(crate) latch: L,
    func: UnsafeCell<Option<F>>,
    result: UnsafeCell<Option<Result<R, PanicPayload>>>,
}

impl<L, F, R> StackJob<L, F, R>
where
    L: Latch,
    F: FnOnce() -> R + Send,
    R: Send,
{
    pub(crate) fn new(latch: L, func: F) -> Self {
        StackJob {
            header: JobHeader::new(Self::run),
            latch,
            func: UnsafeCell::new(Some(func)),
            result: UnsafeCell::new(None),
        }
    }

    pub(crate) fn job_ref(&self) -> JobRef {
        let job: *const Self = self;
        // SAFETY: non-null (from a reference); the header is the first field of a
        // `repr(C)` struct, so the pointer keeps the provenance of the whole job.
        JobRef(unsafe { NonNull::new_unchecked(job.cast_mut().cast::<JobHeader>()) })
    }

    /// The result, once the latch is set; re-raises the closure's panic.
    ///
    /// # Safety
    /// The latch must have been observed set.
    pub(crate) unsafe fn into_result(self) -> R {
        match self.result.into_inner() {
            Some(Ok(value)) => value,
            Some(Err(payload)) => panic::resume_unwind(payload),
            None => unreachable!("StackJob result read before the job ran"),
        }
    }

    unsafe fn run(job: NonNull<JobHeader>) {
        let this: *const Self = job.as_ptr().cast::<Self>();
        // SAFETY: the job is TAKEN by this thread, which alone touches `func`/`result`
        // until the latch is set.
        let func = unsafe { (*(*this).func.get()).take() }.expect("StackJob run twice");
        let result = panic::catch_unwind(AssertUnwindSafe(func));
        // SAFETY: as above.
        unsafe { *(*this).result.get() = Some(result) };
        // SAFETY: the latch is live until set; `set` does not touch it afterwards, and
        // neither do we.
        unsafe { L::set(ptr::addr_of!((*this).latch)) };
    }
}

/// Aborts the process if dropped: [`JobHeader::execute`] forgets it once the job
/// returned, so it is only dropped by a panic unwinding out of a job.
struct AbortIfUnwinding;

impl Drop for AbortIfUnwinding {
    fn drop(&mut self) {
        eprintln!("sumac: a panic escaped a job; aborting the process");
        std::process::abort();
    }
}

/// A boxed closure from `spawn`.
#[repr(C)]
pub(crate) struct HeapJob<F> {
    header: JobHeader,
    func: F,
}

impl<F> HeapJob<F>
where
    F: FnOnce() + Send,
{
    /// Boxes `func` and leaks it as a job; running the job frees it.
    ///
    /// The closure may borrow data that outlives the job (a scope's data): the caller
    /// guarantees that the job runs before that data is gone.
    pub(crate) fn into_job_ref(func: F) -> JobRef {
        let boxed = Box::new(HeapJob {
            header: JobHeader::new(Self::run),
            func,
        });
        let raw: *mut Self = Box::into_raw(boxed);
        // SAFETY: `Box::into_raw` never returns null; the header is the first field of a
        // `repr(C)` struct, so the cast keeps the provenance of the whole allocation.
        JobRef(unsafe { NonNull::new_unchecked(raw.cast::<JobHeader>()) })
    }

    unsafe fn run(job: NonNull<JobHeader>) {
        // SAFETY: the pointer came from `Box::into_raw` in `into_job_ref` and the job
        // runs exactly once, so we own the box again.
        let boxed = unsafe { Box::from_raw(job.as_ptr().cast::<Self>()) };
        (boxed.func)();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A panic that escapes a job aborts the process rather than unwinding on. The job
    /// runs in a child process (this test binary again, filtered to this test, with an
    /// environment variable telling it to be the child).
    #[test]
    #[cfg_attr(miri, ignore = "Miri cannot start a child process")]
    fn a_panic_escaping_a_job_aborts_the_process() {
        const CHILD: &str = "SUMAC_TEST_ESCAPING_PANIC_CHILD";
        if std::env::var_os(CHILD).is_some() {
            let job = HeapJob::into_job_ref(|| panic!("escaping on purpose"));
            // SAFETY: the job is live (it runs only below), TAKEN and run by nobody else.
            unsafe {
                job.header().share.store(TAKEN, Ordering::Relaxed);
                JobHeader::execute(job.0);
            }
            return; // not reached if the guard works; the parent then sees a success
        }
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "job::tests::a_panic_escaping_a_job_aborts_the_process",
                "--test-threads=1",
                "--nocapture",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "the child finished normally");
        assert!(
            stderr.contains("sumac: a panic escaped a job; aborting the process"),
            "the child's stderr: {stderr}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(output.status.signal(), Some(6), "killed by SIGABRT");
        }
    }
}
