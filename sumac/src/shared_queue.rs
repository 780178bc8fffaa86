//! `SharedQueue`: the pool's queue of promoted jobs, and where idle workers sleep.
//!
//! This is the only place where workers meet. Busy workers push the forks they promote
//! at a heartbeat; idle workers take them. Promotions are rare (at most a few per
//! heartbeat interval per worker), so a mutex-protected FIFO is plenty: the fork path
//! never comes here.
//!
//! # Sleeping without lost wake-ups
//! A worker that found nothing to do registers itself as asleep *under the queue lock*,
//! after re-checking the queue and its own wait condition under that lock, then waits on
//! its own condition variable. Whoever makes progress possible (a push, a finished
//! stolen job, a finished scope, termination) changes the shared state first and then
//! takes the lock to wake the sleeper. Either the sleeper's re-check sees the change, or
//! the waker finds it registered as asleep.
//!
//! # Addressed jobs
//! Besides the shared FIFO, each worker has an inbox of jobs that only it may run (a
//! `broadcast` puts one job in every inbox). A push to an inbox wakes its worker if it is
//! asleep, and a worker counts its inbox as work when it decides to sleep, under the
//! same lock, so an addressed job is never left waiting for a sleeper.
//!
//! # Searching workers
//! `searching` counts workers that are awake without work: spinning briefly before they
//! sleep, or just woken. A push wakes a sleeper only when nobody is searching, so a
//! burst of promotions costs at most one system call, and a woken worker that finds more
//! jobs queued wakes the next one (a wake-up chain).

use std::collections::VecDeque;
use std::sync::atomic::Ordering;

use crate::job::{JobRef, QUEUED, RECLAIMED, TAKEN};
use crate::sync::{self, AtomicUsize, Condvar, Mutex, MutexGuard};

struct QueueState {
    jobs: VecDeque<JobRef>,
    /// Jobs addressed to one worker each (`inboxes[index]`).
    inboxes: Vec<VecDeque<JobRef>>,
    asleep: Vec<bool>,
    sleepers: Vec<usize>,
}

/// The shared queue of promoted jobs and the sleep state of a pool's workers.
pub(crate) struct SharedQueue {
    state: Mutex<QueueState>,
    wake_signals: Box<[Condvar]>,
    /// `jobs.len()`, readable without the lock.
    queued: AtomicUsize,
    /// `inboxes[index].len()` for each worker, readable without the lock.
    addressed: Box<[AtomicUsize]>,
    /// Workers awake without work (see the module documentation).
    searching: AtomicUsize,
}

impl SharedQueue {
    pub(crate) fn new(num_workers: usize) -> Self {
        SharedQueue {
            state: Mutex::new(QueueState {
                jobs: VecDeque::new(),
                inboxes: (0..num_workers).map(|_| VecDeque::new()).collect(),
                asleep: vec![false; num_workers],
                sleepers: Vec::with_capacity(num_workers),
            }),
            wake_signals: (0..num_workers).map(|_| Condvar::new()).collect(),
            queued: AtomicUsize::new(0),
            addressed: (0..num_workers).map(|_| AtomicUsize::new(0)).collect(),
            searching: AtomicUsize::new(0),
        }
    }

    /// How many jobs wait in the queue (a hint: it may change at any time).
    #[inline]
    pub(crate) fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// How many jobs wait in worker `index`'s inbox (a hint, like [`queued`](Self::queued)).
    #[inline]
    pub(crate) fn addressed(&self, index: usize) -> usize {
        self.addressed[index].load(Ordering::Relaxed)
    }

    /// Puts `job` (in state `LOCAL`, not a fork) in worker `index`'s inbox, and wakes
    /// that worker if it is asleep.
    pub(crate) fn push_to(&self, index: usize, job: JobRef) {
        let mut state = sync::lock(&self.state);
        // SAFETY: the job is live until it runs, which needs it to be in the inbox first.
        unsafe { job.header() }
            .share
            .store(QUEUED, Ordering::Relaxed);
        state.inboxes[index].push_back(job);
        self.addressed[index].store(state.inboxes[index].len(), Ordering::Relaxed);
        self.wake_locked_if_asleep(&mut state, index);
    }

    /// Takes the oldest job of worker `index`'s inbox, moving it to `TAKEN`: the caller
    /// (that worker) must run it.
    pub(crate) fn take_addressed(&self, index: usize) -> Option<JobRef> {
        if self.addressed(index) == 0 {
            return None;
        }
        let mut state = sync::lock(&self.state);
        let job = state.inboxes[index].pop_front()?;
        // SAFETY: a job in an inbox is live (see `push_to`).
        let header = unsafe { job.header() };
        debug_assert_eq!(header.share.load(Ordering::Relaxed), QUEUED);
        header.share.store(TAKEN, Ordering::Relaxed);
        self.addressed[index].store(state.inboxes[index].len(), Ordering::Relaxed);
        Some(job)
    }

    /// Marks the calling worker as searching (awake without work).
    pub(crate) fn start_searching(&self) {
        self.searching.fetch_add(1, Ordering::SeqCst);
    }

    /// The calling worker stopped searching (it found work or its wait is over).
    pub(crate) fn stop_searching(&self) {
        let previous = self.searching.fetch_sub(1, Ordering::SeqCst);
        debug_assert!(previous > 0, "searching count underflow");
    }

    /// Shares jobs: each must be in state `LOCAL`, with its owner recorded if it is a
    /// `JoinFrame`. Wakes a sleeping worker if nobody is searching.
    pub(crate) fn push(&self, jobs: impl IntoIterator<Item = JobRef>) {
        let mut state = sync::lock(&self.state);
        for job in jobs {
            // SAFETY: the job is live: its owner keeps it alive until it is DONE or
            // RECLAIMED, and neither can happen before it is in the queue.
            unsafe { job.header() }
                .share
                .store(QUEUED, Ordering::Relaxed);
            state.jobs.push_back(job);
        }
        self.queued.store(state.jobs.len(), Ordering::Relaxed);
        if self.searching.load(Ordering::SeqCst) == 0 {
            self.wake_one(&mut state);
        }
    }

    /// Takes the oldest queued job, moving it to `TAKEN`: the caller must run it.
    /// `caller_searching` says whether the caller is counted in `searching`.
    pub(crate) fn take(&self, caller_searching: bool) -> Option<JobRef> {
        if self.queued() == 0 {
            return None;
        }
        let mut state = sync::lock(&self.state);
        let job = state.jobs.pop_front()?;
        // SAFETY: a queued job is live (see `push`).
        let header = unsafe { job.header() };
        debug_assert_eq!(header.share.load(Ordering::Relaxed), QUEUED);
        header.share.store(TAKEN, Ordering::Relaxed);
        self.queued.store(state.jobs.len(), Ordering::Relaxed);
        let others_searching =
            self.searching.load(Ordering::SeqCst) - usize::from(caller_searching);
        if !state.jobs.is_empty() && others_searching == 0 {
            self.wake_one(&mut state);
        }
        Some(job)
    }

    /// Takes `job` back out of the queue if nobody has started it (`QUEUED → RECLAIMED`).
    /// Returns false if another thread took it.
    pub(crate) fn reclaim(&self, job: JobRef) -> bool {
        let mut state = sync::lock(&self.state);
        // SAFETY: the caller owns the job, which is alive until it returns.
        let header = unsafe { job.header() };
        if header.share.load(Ordering::Relaxed) != QUEUED {
            return false;
        }
        let position = state.jobs.iter().position(|&queued| queued == job);
        let position = position.expect("a QUEUED job must be in the queue");
        state.jobs.remove(position);
        header.share.store(RECLAIMED, Ordering::Relaxed);
        self.queued.store(state.jobs.len(), Ordering::Relaxed);
        true
    }

    /// Puts worker `index` to sleep unless a job is queued (shared or in its inbox) or
    /// `keep_waiting` (evaluated under the lock) says the wait is over. The caller must
    /// be searching; it is still counted as searching when this returns. Calls
    /// `falling_asleep` (under the lock) just before it sleeps. Returns whether it slept.
    pub(crate) fn sleep(
        &self,
        index: usize,
        keep_waiting: impl Fn() -> bool,
        falling_asleep: impl FnOnce(),
    ) -> bool {
        let mut state = sync::lock(&self.state);
        if !state.jobs.is_empty() || !state.inboxes[index].is_empty() || !keep_waiting() {
            return false;
        }
        falling_asleep();
        debug_assert!(!state.asleep[index]);
        state.asleep[index] = true;
        state.sleepers.push(index);
        self.stop_searching();
        while state.asleep[index] {
            state = sync::wait(&self.wake_signals[index], state);
        }
        // The waker counted us as searching again.
        true
    }

    /// [`sleep`](Self::sleep), but wakes up by itself at `deadline` at the latest.
    /// Returns whether it slept. On return the caller is counted as searching, as after
    /// `sleep`.
    pub(crate) fn sleep_until(
        &self,
        index: usize,
        keep_waiting: impl Fn() -> bool,
        falling_asleep: impl FnOnce(),
        deadline: std::time::Instant,
    ) -> bool {
        let mut state = sync::lock(&self.state);
        if !state.jobs.is_empty() || !state.inboxes[index].is_empty() || !keep_waiting() {
            return false;
        }
        falling_asleep();
        debug_assert!(!state.asleep[index]);
        state.asleep[index] = true;
        state.sleepers.push(index);
        self.stop_searching();
        while state.asleep[index] {
            let now = std::time::Instant::now();
            if now >= deadline {
                // Nobody woke us: leave the sleepers as a waker would have taken us out.
                self.wake_locked_if_asleep(&mut state, index);
                break;
            }
            state = sync::wait_timeout(&self.wake_signals[index], state, deadline - now);
        }
        true
    }

    /// Called by a worker that searched for work during a wait and leaves the wait
    /// without taking a job (its own fork finished meanwhile): a push may have counted on
    /// it and woken nobody, so wake a sleeper if jobs are queued and nobody else searches.
    /// Checked under the lock, where pushes decide whom to wake.
    pub(crate) fn hand_off(&self) {
        let mut state = sync::lock(&self.state);
        if !state.jobs.is_empty() && self.searching.load(Ordering::SeqCst) == 0 {
            self.wake_one(&mut state);
        }
    }

    /// Wakes worker `index` if it is asleep.
    pub(crate) fn wake(&self, index: usize) {
        let mut state = sync::lock(&self.state);
        self.wake_locked_if_asleep(&mut state, index);
    }

    fn wake_locked_if_asleep(&self, state: &mut MutexGuard<'_, QueueState>, index: usize) {
        if state.asleep[index] {
            let position = state.sleepers.iter().rposition(|&sleeper| sleeper == index);
            state
                .sleepers
                .swap_remove(position.expect("an asleep worker is a sleeper"));
            self.wake_locked(state, index);
        }
    }

    /// Wakes every sleeping worker (termination).
    pub(crate) fn wake_all(&self) {
        let mut state = sync::lock(&self.state);
        while let Some(index) = state.sleepers.pop() {
            self.wake_locked(&mut state, index);
        }
    }

    fn wake_one(&self, state: &mut MutexGuard<'_, QueueState>) {
        if let Some(index) = state.sleepers.pop() {
            self.wake_locked(state, index);
        }
    }

    fn wake_locked(&self, state: &mut MutexGuard<'_, QueueState>, index: usize) {
        debug_assert!(state.asleep[index]);
        state.asleep[index] = false;
        self.start_searching();
        self.wake_signals[index].notify_one();
    }
}
