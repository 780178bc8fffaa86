//! `JobList`: a worker's private list of forks that nobody has run yet.
//!
//! An intrusive doubly linked list threaded through the [`JobHeader`]s of the jobs,
//! which mostly live in `join` stack frames. Only the owning worker ever touches it, so
//! every operation is a handful of plain loads and stores: this is what makes a fork
//! cheap. `join` pushes its frame at the newest end and (almost always) removes it from
//! the newest end again; the heartbeat handler removes jobs from the *oldest* end to
//! share them, because the oldest fork is the biggest piece of work.

use std::cell::Cell;
use std::ptr::{self, NonNull};
use std::sync::atomic::Ordering;

use crate::job::{JobHeader, JobRef};
use crate::sync::AtomicPtr;

/// A worker-local list of un-run jobs, oldest to newest.
pub(crate) struct JobList {
    oldest: Cell<Option<NonNull<JobHeader>>>,
    newest: Cell<Option<NonNull<JobHeader>>>,
    len: Cell<usize>,
}

impl JobList {
    pub(crate) const fn new() -> Self {
        JobList {
            oldest: Cell::new(None),
            newest: Cell::new(None),
            len: Cell::new(0),
        }
    }

    /// The number of jobs on the list.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len.get()
    }

    /// True when no job is on the list.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.newest.get().is_none()
    }

    /// Appends `job` at the newest end and returns the job that was newest before, which
    /// [`pop_pushed`](Self::pop_pushed) takes back.
    ///
    /// # Safety
    /// `job` is live, not on any list, and stays live until it is removed.
    #[inline(always)]
    pub(crate) unsafe fn push(&self, job: NonNull<JobHeader>) -> Option<NonNull<JobHeader>> {
        let newest = self.newest.get();
        // SAFETY: the caller guarantees `job` is live; list members are live by invariant.
        unsafe {
            // `newer` is only meaningful below the newest job, so it is not written here.
            job.as_ref().older.set(newest);
            match newest {
                Some(newest) => newest.as_ref().newer.set(Some(job)),
                None => self.oldest.set(Some(job)),
            }
        }
        self.newest.set(Some(job));
        self.len.set(self.len.get() + 1);
        newest
    }

    /// Unlinks `job`, which [`push`](Self::push) returned `older_at_push` for.
    ///
    /// In the common case `job` is still the newest job and its older neighbour is the
    /// same as when it was pushed; then the list is mended from the values the caller
    /// kept in registers (no load feeds a store, so consecutive forks form no
    /// store-to-load dependency chain through the list). Otherwise this falls back to
    /// [`remove`](Self::remove).
    ///
    /// # Safety
    /// `job` is on this list.
    #[inline(always)]
    pub(crate) unsafe fn pop_pushed(
        &self,
        job: NonNull<JobHeader>,
        older_at_push: Option<NonNull<JobHeader>>,
    ) {
        // SAFETY: `job` is on the list, hence live.
        let header = unsafe { job.as_ref() };
        if self.newest.get() == Some(job) && header.older.get() == older_at_push {
            self.len.set(self.len.get() - 1);
            self.newest.set(older_at_push);
            match older_at_push {
                // SAFETY: the older neighbour is on the list, hence live.
                Some(older) => unsafe { older.as_ref() }.newer.set(None),
                None => self.oldest.set(None),
            }
        } else {
            // SAFETY: `job` is on this list.
            unsafe { self.remove(job) };
        }
    }

    /// Unlinks `job`, which must be on this list.
    ///
    /// # Safety
    /// `job` is on this list.
    #[inline(always)]
    pub(crate) unsafe fn remove(&self, job: NonNull<JobHeader>) {
        // SAFETY: `job` and its neighbours are list members, hence live.
        unsafe {
            let header = job.as_ref();
            let older = header.older.get();
            // The newest job's `newer` field is stale; everyone else's is exact.
            let newer = if self.newest.get() == Some(job) {
                None
            } else {
                header.newer.get()
            };
            match older {
                Some(older) => older.as_ref().newer.set(newer),
                None => self.oldest.set(newer),
            }
            match newer {
                Some(newer) => newer.as_ref().older.set(older),
                None => self.newest.set(older),
            }
        }
        self.len.set(self.len.get() - 1);
    }

    /// The oldest job, left on the list.
    pub(crate) fn oldest(&self) -> Option<NonNull<JobHeader>> {
        self.oldest.get()
    }

    /// The newest job, left on the list.
    pub(crate) fn newest(&self) -> Option<NonNull<JobHeader>> {
        self.newest.get()
    }

    /// The job pushed right after `job`, if `job` is not the newest.
    ///
    /// # Safety
    /// `job` is on this list.
    pub(crate) unsafe fn newer(&self, job: NonNull<JobHeader>) -> Option<NonNull<JobHeader>> {
        if self.newest.get() == Some(job) {
            // The newest job's `newer` field is stale.
            return None;
        }
        // SAFETY: `job` is on this list, hence live.
        unsafe { job.as_ref() }.newer.get()
    }

    /// The job pushed right before `job`, if `job` is not the oldest.
    ///
    /// # Safety
    /// `job` is on this list.
    pub(crate) unsafe fn older(&self, job: NonNull<JobHeader>) -> Option<NonNull<JobHeader>> {
        // SAFETY: `job` is on this list, hence live.
        unsafe { job.as_ref() }.older.get()
    }

    /// Removes and returns the oldest job (the unit tests use it).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn pop_oldest(&self) -> Option<NonNull<JobHeader>> {
        let oldest = self.oldest.get()?;
        // SAFETY: `oldest` is on this list.
        unsafe { self.remove(oldest) };
        Some(oldest)
    }

    /// Removes and returns the newest job (the unit tests use it).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn pop_newest(&self) -> Option<NonNull<JobHeader>> {
        let newest = self.newest.get()?;
        // SAFETY: `newest` is on this list.
        unsafe { self.remove(newest) };
        Some(newest)
    }
}

/// One of a worker's *rescue offers*: a fork on its list, which the heartbeat thread
/// may take from it if the worker stops polling its heartbeat flag.
///
/// Polls happen at forks and between the blocks of parallel loops. Code that runs for a
/// long time without either (a long sequential leaf under `join`, or a spawned job, or
/// the body of a scope) would otherwise keep every job older than it on the list, where
/// no other thread may look, while idle workers wait: `join(leaf, leaf)` would run its
/// two leaves one after the other. So every fork a worker records is also published in
/// one of its slots (one per fork its list can hold), and the heartbeat thread *claims*
/// it when its worker has not polled for a whole interval while another worker is
/// idle, and shares it through the queue like a promotion.
///
/// The protocol, for each slot (one offer at a time in it):
/// * the owner [`offer`](Self::offer)s a job it keeps live (a release store: the job's
///   fields, written before, reach whoever claims it);
/// * before the owner removes that job from its list (to join, promote or run it), it
///   [`withdraw`](Self::withdraw)s the offer with a swap. Getting the job back means
///   nobody else has it; getting null means the heartbeat thread claimed it: the job is
///   shared, and stays on the list until its join unlinks it and waits for it like a
///   promoted fork (nothing else may unlink it: the join could not tell);
/// * the heartbeat thread [`claim_if`](Self::claim_if)s it with a compare-and-swap, so
///   exactly one of the two gets the job. A claimed job's frame stays live: its owner
///   cannot leave the join before the job is reclaimed or done. The slot stays empty
///   until then, so it cannot be offered again meanwhile.
///
/// Only join frames are offered: a claimed job stays linked in its owner's list until
/// the owner removes it, and a frame outlives that (its `join` waits for it), whereas a
/// spawned heap job is freed by whoever runs it. (Spawned jobs go to the shared queue
/// at once when a worker waits for work, see `Registry::push_spawned`.)
///
/// The owner pays a store when it records a fork and a swap when it removes it; forks
/// that run as direct calls pay nothing.
pub(crate) struct RescueSlot(AtomicPtr<JobHeader>);

impl RescueSlot {
    pub(crate) fn new() -> Self {
        RescueSlot(AtomicPtr::new(ptr::null_mut()))
    }

    /// The owner offers `job` (the slot must be empty).
    ///
    /// # Safety
    /// `job` is live, in state `LOCAL`, with its owner recorded, and stays live until the
    /// offer is withdrawn or, once claimed, until the job is reclaimed or done.
    #[inline(always)]
    pub(crate) unsafe fn offer(&self, job: NonNull<JobHeader>) {
        debug_assert!(
            self.0.load(Ordering::Relaxed).is_null(),
            "one offer at a time"
        );
        // Under loom, a swap: loom lets a plain store fall between the read and the write
        // of a concurrent swap (tokio-rs/loom#254), which the memory model forbids, and
        // the model then loses the offer.
        #[cfg(loom)]
        let _ = self.0.swap(job.as_ptr(), Ordering::Release);
        #[cfg(not(loom))]
        self.0.store(job.as_ptr(), Ordering::Release);
    }

    /// The owner takes back its offer of `job`. Returns false if the heartbeat thread
    /// claimed the job first.
    #[inline(always)]
    pub(crate) fn withdraw(&self, job: NonNull<JobHeader>) -> bool {
        let offered = self.0.swap(ptr::null_mut(), Ordering::AcqRel);
        debug_assert!(
            offered.is_null() || offered == job.as_ptr(),
            "withdrew a job that was not offered"
        );
        !offered.is_null()
    }

    /// The address of the offered job (0 if none), to compare with later: a hint, never
    /// to be turned back into a pointer.
    pub(crate) fn offered_addr(&self) -> usize {
        self.0.load(Ordering::Relaxed).addr()
    }

    /// The heartbeat thread claims the offered job if it is still the one at address
    /// `addr` (from [`offered_addr`](Self::offered_addr)); it must then share it (push it
    /// into the shared queue).
    pub(crate) fn claim_if(&self, addr: usize) -> Option<JobRef> {
        claim_if(&self.0, addr)
    }
}

/// Takes the job out of `slot` if it is still the one at address `addr`, with a
/// compare-and-swap: of everyone taking it, exactly one gets it.
fn claim_if(slot: &AtomicPtr<JobHeader>, addr: usize) -> Option<JobRef> {
    let current = slot.load(Ordering::Relaxed);
    if current.is_null() || current.addr() != addr {
        return None;
    }
    slot.compare_exchange(
        current,
        ptr::null_mut(),
        Ordering::AcqRel,
        Ordering::Relaxed,
    )
    .ok()
    .and_then(NonNull::new)
    .map(JobRef)
}

/// The async task a worker woke last, which it runs as soon as its current job returns
/// (tokio's "LIFO slot", with a heartbeat rule for when to let go of it).
///
/// A task woken by a worker of its pool is kept here instead of going on the worker's
/// deque: it runs next, on a warm cache, and no idle worker is woken to steal it. (A
/// ring of tasks passing a token, or a request and its reply, would otherwise move
/// between workers at every hop, each move a steal and often a wake-up.) It is work
/// that only its owner sees, like a recorded fork, so the same rule shares it: the
/// heartbeat thread takes a task that sat here through a whole interval (its owner is
/// deep in a long job) and queues it for every worker.
///
/// The protocol:
/// * only the owner puts a task in ([`replace`](Self::replace), a swap that hands back
///   the task it displaces, which the owner then queues for everyone);
/// * the owner takes it out with a swap ([`take`](Self::take)); the heartbeat thread
///   with a compare-and-swap ([`claim_if`](Self::claim_if)), then queues it: exactly one
///   of them gets each task, and whoever gets it alone may run or queue it. Nothing
///   else touches a task while it is here, and the owner does not touch a task after
///   putting it in, since it may be claimed, run and freed at once;
/// * a task here counts as queued work of the pool (`Registry::spawn_started`), so a
///   pool does not finish while one waits; a worker looks here before it idles, and
///   empties the slot before it stops being a worker.
pub(crate) struct NextTask(AtomicPtr<JobHeader>);

impl NextTask {
    pub(crate) fn new() -> Self {
        NextTask(AtomicPtr::new(ptr::null_mut()))
    }

    /// The owner puts `job` here; returns the task it displaced, which the owner must
    /// queue.
    ///
    /// # Safety
    /// `job` is a queued task's job (live until it runs, in state `LOCAL`), put here by
    /// the slot's owner only.
    #[inline]
    pub(crate) unsafe fn replace(&self, job: JobRef) -> Option<JobRef> {
        NonNull::new(self.0.swap(job.0.as_ptr(), Ordering::AcqRel)).map(JobRef)
    }

    /// The owner takes the task out, if one is here (the caller must run or queue it).
    #[inline(always)]
    pub(crate) fn take(&self) -> Option<JobRef> {
        if self.0.load(Ordering::Relaxed).is_null() {
            return None;
        }
        NonNull::new(self.0.swap(ptr::null_mut(), Ordering::AcqRel)).map(JobRef)
    }

    /// Whether no task is here (a hint for anyone but the owner).
    pub(crate) fn is_empty(&self) -> bool {
        self.0.load(Ordering::Relaxed).is_null()
    }

    /// The address of the task here (0 if none), to compare with later: a hint, never
    /// to be turned back into a pointer.
    pub(crate) fn waiting_addr(&self) -> usize {
        self.0.load(Ordering::Relaxed).addr()
    }

    /// The heartbeat thread takes the task if it is still the one at `addr` (from
    /// [`waiting_addr`](Self::waiting_addr)); it must then queue it.
    pub(crate) fn claim_if(&self, addr: usize) -> Option<JobRef> {
        claim_if(&self.0, addr)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::job::JoinFrame;

    fn frames(n: usize) -> Vec<JoinFrame<impl FnOnce() -> usize + Send, usize>> {
        (0..n).map(|i| JoinFrame::new(move || i)).collect()
    }

    #[test]
    fn push_and_pop_from_both_ends() {
        let frames = frames(4);
        let list = JobList::new();
        assert!(list.is_empty());
        for frame in &frames {
            // SAFETY: frames outlive the list operations and are pushed once.
            unsafe { list.push(frame.job_ref().0) };
        }
        assert_eq!(list.len(), 4);
        assert_eq!(list.pop_oldest(), Some(frames[0].job_ref().0));
        assert_eq!(list.pop_newest(), Some(frames[3].job_ref().0));
        assert_eq!(list.pop_oldest(), Some(frames[1].job_ref().0));
        assert_eq!(list.pop_newest(), Some(frames[2].job_ref().0));
        assert_eq!(list.pop_newest(), None);
        assert_eq!(list.pop_oldest(), None);
        assert!(list.is_empty());
    }

    #[test]
    fn remove_from_the_middle_keeps_order() {
        let frames = frames(5);
        let list = JobList::new();
        for frame in &frames {
            // SAFETY: as above.
            unsafe { list.push(frame.job_ref().0) };
        }
        // SAFETY: frames[2] is on the list.
        unsafe { list.remove(frames[2].job_ref().0) };
        let order: Vec<_> = std::iter::from_fn(|| list.pop_oldest()).collect();
        let expected: Vec<_> = [0, 1, 3, 4]
            .iter()
            .map(|&i| frames[i].job_ref().0)
            .collect();
        assert_eq!(order, expected);
    }
}
