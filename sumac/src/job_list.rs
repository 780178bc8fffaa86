//! `JobList`: a worker's private list of forks that nobody has run yet.
//!
//! An intrusive doubly linked list threaded through the [`JobHeader`]s of the jobs,
//! which mostly live in `join` stack frames. Only the owning worker ever touches it, so
//! every operation is a handful of plain loads and stores: this is what makes a fork
//! cheap. `join` pushes its frame at the newest end and (almost always) removes it from
//! the newest end again; the heartbeat handler removes jobs from the *oldest* end to
//! share them, because the oldest fork is the biggest piece of work.

use std::cell::Cell;
use std::ptr::NonNull;

use crate::job::JobHeader;

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

    /// Removes and returns the oldest job.
    pub(crate) fn pop_oldest(&self) -> Option<NonNull<JobHeader>> {
        let oldest = self.oldest.get()?;
        // SAFETY: `oldest` is on this list.
        unsafe { self.remove(oldest) };
        Some(oldest)
    }

    /// Removes and returns the newest job.
    pub(crate) fn pop_newest(&self) -> Option<NonNull<JobHeader>> {
        let newest = self.newest.get()?;
        // SAFETY: `newest` is on this list.
        unsafe { self.remove(newest) };
        Some(newest)
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
