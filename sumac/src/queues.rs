//! `Queues`: every place where a pool's jobs wait for a member to take them, and the
//! pool's [`Sleep`] state.
//!
//! - **Spawned jobs** (heap jobs of `spawn`, `Scope::spawn` and their FIFO kinds) go on
//!   the spawning member's own deques (a LIFO one and a FIFO one: crossbeam's
//!   work-stealing deques), or into the pool-wide **injector** when spawned from outside
//!   the pool. Pushing is lock-free; idle members steal from the injector and from each
//!   other's deques, also lock-free.
//! - **Shared forks** (forks a worker promoted at a heartbeat, or that the heartbeat
//!   thread rescued) wait in a mutex-protected FIFO, because their owner may take one
//!   back before anyone started it (`reclaim`), which a deque cannot do. A worker shares
//!   at most a few forks per heartbeat interval, so this lock is never hot.
//! - **Inboxes**: jobs addressed to one member (a `broadcast` puts one in every inbox),
//!   under one lock; rare.
//!
//! After publishing a job, the producer tells [`Sleep`] ([`Sleep::new_work`], or
//! [`Sleep::wake`] for an inbox), whose protocol guarantees the job is never left while
//! every member sleeps; [`has_work`](Queues::has_work) is what a member about to sleep
//! re-checks.

use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::ptr::NonNull;

use crate::job::{JobRef, QUEUED, RECLAIMED, TAKEN};
use crate::sleep::Sleep;
use crate::sync::deque::{Injector, Steal, Stealer, Worker};
use crate::sync::{self, fence, AtomicBool, AtomicUsize, Mutex, Ordering};

/// A member's two deques of spawned jobs, owner's end (see [`Queues::deques_for`]).
pub(crate) struct SpawnDeques {
    /// `spawn` and `Scope::spawn`: the owner runs its newest first.
    pub(crate) lifo: Worker<JobRef>,
    /// `spawn_fifo` and `ScopeFifo::spawn_fifo`: the owner runs its oldest first.
    pub(crate) fifo: Worker<JobRef>,
}

impl SpawnDeques {
    /// The owner's next spawned job: its newest LIFO job, else its oldest FIFO one.
    #[inline]
    pub(crate) fn pop(&self) -> Option<JobRef> {
        self.lifo.pop().or_else(|| self.fifo.pop())
    }

    /// Whether both are empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.lifo.is_empty() && self.fifo.is_empty()
    }
}

struct MemberStealers {
    lifo: Stealer<JobRef>,
    fifo: Stealer<JobRef>,
    /// The member keeps its spawned jobs to itself for now (a caller taking part in a
    /// one-thread pool, which is that pool's one thread while it runs): no one steals
    /// them, and they are not work for anyone else.
    private: AtomicBool,
    /// Thieves that found `private` false and have not finished their steal yet
    /// (counted only where members may keep their jobs private): a member making its
    /// jobs private waits until none is left, so that no steal that saw its deques open
    /// takes a job it pushes after closing them.
    thieves: AtomicUsize,
}

impl MemberStealers {
    /// Whether this member has spawned jobs others may take.
    fn has_public_jobs(&self) -> bool {
        !self.private.load(Ordering::SeqCst) && (!self.lifo.is_empty() || !self.fifo.is_empty())
    }

    /// Steals a batch of this member's jobs into `own` (LIFO jobs, then FIFO ones), unless
    /// it keeps them private. `counted`: the pool has members that may make their jobs
    /// private, so a steal from a member whose jobs are public is announced in `thieves`
    /// first.
    ///
    /// The announcement and the member's closing ([`close`](Self::close)) are the two
    /// sides of a store-buffering pattern, each a write, a `SeqCst` fence and a read:
    /// either the thief reads `private` as true and steals nothing, or the member reads
    /// the thief's announcement and waits for the steal to end before it pushes a private
    /// job.
    fn steal_into(&self, own: &SpawnDeques, counted: bool) -> Option<JobRef> {
        if self.private.load(Ordering::SeqCst) {
            return None;
        }
        if counted {
            self.thieves.fetch_add(1, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            if self.private.load(Ordering::Relaxed) {
                self.thieves.fetch_sub(1, Ordering::Release);
                return None;
            }
        }
        let job = steal_from(|| self.lifo.steal_batch_and_pop(&own.lifo))
            .or_else(|| steal_from(|| self.fifo.steal_batch_and_pop(&own.fifo)));
        if counted {
            // Release: the member that waits for this steal to end sees its effects.
            self.thieves.fetch_sub(1, Ordering::Release);
        }
        job
    }

    /// Makes this member's jobs private: returns once no thief that may have seen them
    /// public is still stealing (see [`steal_into`](Self::steal_into)).
    fn close(&self) {
        self.private.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        while self.thieves.load(Ordering::Acquire) != 0 {
            // A steal is a few dozen instructions: a thief still counted was preempted.
            sync::thread::yield_now();
        }
    }
}

/// The queues and sleep state of a pool.
pub(crate) struct Queues {
    pub(crate) sleep: Sleep,
    /// Shared forks, oldest first.
    shared: Mutex<VecDeque<JobRef>>,
    /// `shared.len()`, readable without the lock.
    queued: AtomicUsize,
    /// Jobs addressed to one member each (`inboxes[index]`).
    inboxes: Mutex<Vec<VecDeque<JobRef>>>,
    /// `inboxes[index].len()` for each member, readable without the lock.
    addressed: Box<[AtomicUsize]>,
    /// Spawned jobs from threads outside the pool.
    injector: Injector<JobRef>,
    /// The thieves' ends of every member's deques.
    stealers: Box<[MemberStealers]>,
    /// The owners' ends, per member (see `deques_for`).
    owned: Box<[OwnersDeques]>,
    /// Members may keep their spawned jobs private (see
    /// [`keep_private`](Self::keep_private)): thieves announce their steals.
    private_members: bool,
}

/// A member's deques, owner's end, in place for the pool's life.
///
/// Only the thread that is member `index` touches slot `index`: a worker for its life;
/// a caller taking part between claiming seat `index` and freeing it, and the seat's
/// claim (acquire) and release (release) order one holder's accesses before the next
/// holder's.
struct OwnersDeques(UnsafeCell<SpawnDeques>);

// SAFETY: see the type's documentation: one thread at a time accesses the cell, with a
// happens-before edge between successive threads; `SpawnDeques` is `Send`.
unsafe impl Sync for OwnersDeques {}

impl Queues {
    /// Queues for `members` members; the members from `first_private` on (the seats of
    /// a one-thread pool's callers) may keep their spawned jobs private, and start so:
    /// nothing is theirs to share until a caller lends its jobs.
    pub(crate) fn new(members: usize, first_private: Option<usize>) -> Self {
        let deques: Vec<SpawnDeques> = (0..members)
            .map(|_| SpawnDeques {
                lifo: Worker::new_lifo(),
                fifo: Worker::new_fifo(),
            })
            .collect();
        let stealers = deques
            .iter()
            .enumerate()
            .map(|(index, deques)| MemberStealers {
                lifo: deques.lifo.stealer(),
                fifo: deques.fifo.stealer(),
                private: AtomicBool::new(first_private.is_some_and(|first| index >= first)),
                thieves: AtomicUsize::new(0),
            })
            .collect();
        Queues {
            sleep: Sleep::new(members),
            shared: Mutex::new(VecDeque::new()),
            queued: AtomicUsize::new(0),
            inboxes: Mutex::new((0..members).map(|_| VecDeque::new()).collect()),
            addressed: (0..members).map(|_| AtomicUsize::new(0)).collect(),
            injector: Injector::new(),
            stealers,
            owned: deques
                .into_iter()
                .map(|deques| OwnersDeques(UnsafeCell::new(deques)))
                .collect(),
            private_members: first_private.is_some(),
        }
    }

    /// The owner's end of member `index`'s deques, where they stay: a caller taking part
    /// uses its seat's in place (nothing is moved as it comes and goes), and jobs it
    /// leaves on them stay there, where the other members steal them.
    ///
    /// The pointer may be dereferenced only by the thread that is member `index`, while
    /// it is (see [`OwnersDeques`]), and while these queues live.
    pub(crate) fn deques_for(&self, index: usize) -> NonNull<SpawnDeques> {
        // The cell's pointer, not a reference: creating one is no access.
        NonNull::new(self.owned[index].0.get()).expect("a cell's pointer is not null")
    }

    /// How many shared forks wait (a hint: it may change at any time).
    #[inline]
    pub(crate) fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// How many jobs wait in member `index`'s inbox (a hint, like [`queued`](Self::queued)).
    #[inline]
    pub(crate) fn addressed(&self, index: usize) -> usize {
        self.addressed[index].load(Ordering::Relaxed)
    }

    /// Whether member `index` could find a job to take: a shared fork, a job in its
    /// inbox, in the injector, or on any member's deques. Exact once the sleep protocol's
    /// fence is passed (see [`Sleep`]); a hint otherwise.
    pub(crate) fn has_work(&self, index: usize) -> bool {
        self.queued.load(Ordering::SeqCst) > 0
            || self.addressed[index].load(Ordering::SeqCst) > 0
            || self.has_spawned_work()
    }

    /// Whether a job waits that member `index` leaving its place lets a worker take:
    /// a shared fork, a job in the injector, or one on `index`'s own deques. (The other
    /// members' deques are left to their owners: looking at every seat's would cost a
    /// guest more than the short call it made.)
    pub(crate) fn has_work_for_a_freed_place(&self, index: usize) -> bool {
        self.queued.load(Ordering::SeqCst) > 0
            || !self.injector.is_empty()
            || self.stealers[index].has_public_jobs()
    }

    /// Whether a spawned job waits in the injector or on any member's deques.
    pub(crate) fn has_spawned_work(&self) -> bool {
        !self.injector.is_empty() || self.stealers.iter().any(MemberStealers::has_public_jobs)
    }

    /// A cheap look for work while spinning: shared forks, member `index`'s inbox, the
    /// injector, and the deques of member `cursor` (the caller moves it round).
    #[inline]
    pub(crate) fn glance(&self, index: usize, cursor: usize) -> bool {
        self.queued() > 0
            || self.addressed(index) > 0
            || !self.injector.is_empty()
            || self
                .stealers
                .get(cursor)
                .is_some_and(MemberStealers::has_public_jobs)
    }

    /// The number of members (workers, and seats for threads outside the pool).
    pub(crate) fn members(&self) -> usize {
        self.stealers.len()
    }

    /// Pushes a spawned job on the calling member's own deque (`fifo`: the FIFO one);
    /// `private`: the member keeps its jobs to itself now (see
    /// [`keep_private`](Self::keep_private)), so nobody is told.
    pub(crate) fn push_spawned(&self, own: &SpawnDeques, job: JobRef, fifo: bool, private: bool) {
        if fifo {
            own.fifo.push(job);
        } else {
            own.lifo.push(job);
        }
        if !private {
            self.sleep.new_work();
        }
    }

    /// Member `index` keeps its spawned jobs to itself (`true`) or lends them to the
    /// others (`false`: jobs already there become work for them, and a sleeper is woken
    /// for them). Only member `index` itself calls this, so the flag is what it last
    /// made it (a seat's next holder sees its last holder's write through the seat's
    /// claim): a call that changes nothing writes nothing.
    pub(crate) fn keep_private(&self, index: usize, private: bool) {
        let member = &self.stealers[index];
        if member.private.load(Ordering::Relaxed) == private {
            return;
        }
        if private {
            member.close();
            return;
        }
        member.private.store(false, Ordering::SeqCst);
        if member.has_public_jobs() {
            self.sleep.new_work();
        }
    }

    /// Queues a job from a thread outside the pool (a spawned job or an injected
    /// closure).
    pub(crate) fn inject(&self, job: JobRef) {
        self.injector.push(job);
        self.sleep.new_work();
    }

    /// Steals spawned jobs for member `me`, whose deques are `own`: from the injector,
    /// then from the other members' deques, starting after `me`. Takes a batch (up to
    /// half of the source) in one go: the first job is returned, the rest go on `own`
    /// (LIFO jobs on its LIFO deque, FIFO and injected ones on its FIFO deque), where
    /// others may steal them in turn. Wakes another sleeper if jobs are left and nobody
    /// else searches (the caller is not counted as searching any more).
    pub(crate) fn steal(&self, me: usize, own: &SpawnDeques) -> Option<JobRef> {
        let job = steal_from(|| self.injector.steal_batch_and_pop(&own.fifo)).or_else(|| {
            let members = self.stealers.len();
            (1..members).find_map(|offset| {
                self.stealers[(me + offset) % members].steal_into(own, self.private_members)
            })
        })?;
        self.sleep.hand_off(|| self.has_spawned_work());
        Some(job)
    }

    /// Puts `job` (in state `LOCAL`, not a fork) in member `index`'s inbox, and wakes that
    /// member if it is asleep.
    pub(crate) fn push_to(&self, index: usize, job: JobRef) {
        {
            let mut inboxes = sync::lock(&self.inboxes);
            // SAFETY: the job is live until it runs, which needs it to be in the inbox
            // first.
            unsafe { job.header() }
                .share
                .store(QUEUED, Ordering::Relaxed);
            inboxes[index].push_back(job);
            self.addressed[index].store(inboxes[index].len(), Ordering::SeqCst);
        }
        self.sleep.wake(index);
    }

    /// Takes the oldest job of member `index`'s inbox, moving it to `TAKEN`: the caller
    /// (that member) must run it.
    pub(crate) fn take_addressed(&self, index: usize) -> Option<JobRef> {
        if self.addressed(index) == 0 {
            return None;
        }
        let mut inboxes = sync::lock(&self.inboxes);
        let job = inboxes[index].pop_front()?;
        // SAFETY: a job in an inbox is live (see `push_to`).
        let header = unsafe { job.header() };
        debug_assert_eq!(header.share.load(Ordering::Relaxed), QUEUED);
        header.share.store(TAKEN, Ordering::Relaxed);
        self.addressed[index].store(inboxes[index].len(), Ordering::SeqCst);
        Some(job)
    }

    /// Shares forks: each must be in state `LOCAL`, with its owner recorded. Wakes a
    /// sleeper for them only if `place_free()` (read after the push) says an idle worker
    /// could take one: a worker without a place sleeps (see `SCHEDULER.md`, guests). A
    /// guest that frees its place later wakes a sleeper for the forks that wait then
    /// (`Registry::guest_frees_place`); a busy worker that turns idle finds them itself.
    pub(crate) fn push(
        &self,
        jobs: impl IntoIterator<Item = JobRef>,
        place_free: impl Fn() -> bool,
    ) {
        {
            let mut shared = sync::lock(&self.shared);
            for job in jobs {
                // SAFETY: the job is live: its owner keeps it alive until it is DONE or
                // RECLAIMED, and neither can happen before it is in the queue.
                unsafe { job.header() }
                    .share
                    .store(QUEUED, Ordering::Relaxed);
                shared.push_back(job);
            }
            self.queued.store(shared.len(), Ordering::SeqCst);
        }
        self.sleep.hand_off(place_free);
    }

    /// Takes the oldest shared fork, moving it to `TAKEN`: the caller must run it. Wakes
    /// another sleeper if forks are left and nobody else searches.
    pub(crate) fn take(&self) -> Option<JobRef> {
        if self.queued() == 0 {
            return None;
        }
        let job = {
            let mut shared = sync::lock(&self.shared);
            let job = shared.pop_front()?;
            // SAFETY: a queued job is live (see `push`).
            let header = unsafe { job.header() };
            debug_assert_eq!(header.share.load(Ordering::Relaxed), QUEUED);
            header.share.store(TAKEN, Ordering::Relaxed);
            self.queued.store(shared.len(), Ordering::SeqCst);
            job
        };
        self.sleep.hand_off(|| self.queued() > 0);
        Some(job)
    }

    /// Takes `job` back out of the shared queue if nobody has started it
    /// (`QUEUED → RECLAIMED`). Returns false if another thread took it.
    pub(crate) fn reclaim(&self, job: JobRef) -> bool {
        let mut shared = sync::lock(&self.shared);
        // SAFETY: the caller owns the job, which is alive until it returns.
        let header = unsafe { job.header() };
        if header.share.load(Ordering::Relaxed) != QUEUED {
            return false;
        }
        let position = shared.iter().position(|&queued| queued == job);
        let position = position.expect("a QUEUED job must be in the queue");
        shared.remove(position);
        header.share.store(RECLAIMED, Ordering::Relaxed);
        self.queued.store(shared.len(), Ordering::SeqCst);
        true
    }

    /// Wakes member `index` if it is asleep (after making its wait condition true).
    pub(crate) fn wake(&self, index: usize) {
        self.sleep.wake(index);
    }

    /// Wakes every sleeping member (termination).
    pub(crate) fn wake_all(&self) {
        self.sleep.wake_all();
    }

    /// Called by a member that searched for work during a wait and leaves the wait
    /// without taking a job: a producer may have counted on it and woken nobody.
    pub(crate) fn hand_off(&self, index: usize) {
        self.sleep.hand_off(|| self.has_work(index));
    }
}

/// The job of a steal, retrying while the deque asks to.
fn steal_from(steal: impl Fn() -> Steal<JobRef>) -> Option<JobRef> {
    loop {
        match steal() {
            Steal::Success(job) => return Some(job),
            Steal::Empty => return None,
            Steal::Retry => std::hint::spin_loop(),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::Arc;

    use super::Queues;
    use crate::job::JoinFrame;

    /// Member 1 of `queues`, asleep as a searcher until woken (it counts no queued job
    /// as its work); the thread returns whether it slept.
    fn sleeping_searcher(queues: &Arc<Queues>) -> std::thread::JoinHandle<bool> {
        let sleeper = Arc::clone(queues);
        let thread = std::thread::spawn(move || {
            let sleep = &sleeper.sleep;
            sleep.start_searching();
            let slept = sleep.sleep(1, || true, || false, || {}, None);
            sleep.stop_searching();
            slept
        });
        while queues.sleep.searchers_asleep() == 0 {
            std::thread::yield_now();
        }
        thread
    }

    #[test]
    fn a_shared_fork_wakes_a_sleeper_only_if_a_place_is_free_for_it() {
        let queues = Arc::new(Queues::new(2, None));
        let sleeper = sleeping_searcher(&queues);
        let first = JoinFrame::new(|| ());
        first.header().set_owner(&queues, 0);
        queues.push([first.job_ref()], || false);
        // A wake-up takes the sleeper off the list before `push` returns.
        assert_eq!(
            queues.sleep.searchers_asleep(),
            1,
            "no place free: nobody woken"
        );
        let second = JoinFrame::new(|| ());
        second.header().set_owner(&queues, 0);
        queues.push([second.job_ref()], || true);
        assert_eq!(queues.sleep.searchers_asleep(), 0, "a place free: woken");
        assert!(sleeper.join().unwrap(), "the member slept until then");
        // Nobody ran them: take both back out before their frames go.
        assert!(queues.take().is_some() && queues.take().is_some());
        assert!(queues.take().is_none());
    }
}
