//! `Sleep`: where a pool's idle members sleep, and how they are woken without a lost
//! wake-up.
//!
//! A member (a worker, or a thread taking part in the pool for one call) that found
//! nothing to do first *searches* (spins, watching for work), then sleeps. Three verbs
//! cover the protocol: [`start_searching`](Sleep::start_searching) as it runs out of
//! work, [`sleep`](Sleep::sleep) when the search found nothing, and, on the producer's
//! side, [`new_work`](Sleep::new_work) after publishing a job anyone may take, or
//! [`wake`](Sleep::wake) after making one member's wait condition true.
//!
//! # Invariants
//! - A member registers as asleep *under the lock*, then re-checks its own wait condition
//!   there: whoever makes that condition true (a finished stolen fork, a latch, a job in
//!   its inbox) changes the state first and takes the lock second to wake it. Either the
//!   re-check sees the change, or the waker finds it registered.
//! - Jobs anyone may take are published without this lock (a worker's own deque, the
//!   injector). For them the sleeper, after registering (a sequentially consistent
//!   increment of `sleeping`), and the producer, after publishing, each issue a
//!   sequentially consistent fence and then read the other side: the producer
//!   `sleeping`/`searching`, the sleeper every source of work. At least one of the two
//!   sees the other (Dekker's argument), so a published job is never left while every
//!   member sleeps.
//! - `searching` counts members awake without work. A producer wakes a sleeper only when
//!   nobody searches: a searcher will find the job, or, if it goes to sleep instead, its
//!   own re-check after registering sees the job. A searcher that leaves its wait without
//!   taking a job ([`hand_off`](Sleep::hand_off)), and a taker that leaves jobs behind,
//!   wake the next sleeper (a wake-up chain), so a burst of jobs costs one system call at
//!   a time and wakes as many members as there are jobs.
//!
//! See `SCHEDULER.md`, "Sleeping without lost wake-ups", for the full argument; the loom
//! models in `loom_tests.rs` check it.

use crate::sync::time::{self, Instant};

use crossbeam_utils::CachePadded;

use crate::sync::{self, fence, AtomicUsize, Condvar, Mutex, MutexGuard, Ordering};

struct SleepState {
    /// Per member: registered as asleep (only a waker clears it).
    asleep: Vec<Option<Sleeper>>,
    /// The searchers asleep, most recent last (the next to wake for new work).
    sleepers: Vec<usize>,
}

/// What kind of sleeper a member is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Sleeper {
    /// A searcher: it takes any job, so new work may wake it, and it counts as
    /// searching again once woken.
    Searcher,
    /// A member waiting only for its own condition (a thread outside the pool taking
    /// part in one call): only [`Sleep::wake`] wakes it.
    Private,
}

/// The sleep state of a pool's members.
pub(crate) struct Sleep {
    state: Mutex<SleepState>,
    signals: Box<[Condvar]>,
    /// `sleepers.len()`, readable without the lock.
    sleeping: CachePadded<AtomicUsize>,
    /// Members awake without work (see the module documentation).
    searching: CachePadded<AtomicUsize>,
}

impl Sleep {
    pub(crate) fn new(members: usize) -> Sleep {
        Sleep {
            state: Mutex::new(SleepState {
                asleep: vec![None; members],
                sleepers: Vec::with_capacity(members),
            }),
            signals: (0..members).map(|_| Condvar::new()).collect(),
            sleeping: CachePadded::new(AtomicUsize::new(0)),
            searching: CachePadded::new(AtomicUsize::new(0)),
        }
    }

    /// The calling member ran out of work and starts searching.
    pub(crate) fn start_searching(&self) {
        self.searching.fetch_add(1, Ordering::SeqCst);
    }

    /// The calling member stopped searching (it found work or its wait is over).
    pub(crate) fn stop_searching(&self) {
        let previous = self.searching.fetch_sub(1, Ordering::SeqCst);
        debug_assert!(previous > 0, "searching count underflow");
    }

    /// How many members sleep as searchers right now.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn searchers_asleep(&self) -> usize {
        self.sleeping.load(Ordering::SeqCst)
    }

    /// Whether some member is awake without work right now (a hint: it may find work or
    /// fall asleep at once).
    pub(crate) fn anyone_searching(&self) -> bool {
        self.searching.load(Ordering::Relaxed) > 0
    }

    /// Puts member `index` to sleep unless `keep_waiting()` (evaluated under the lock)
    /// says its wait is over or `has_work()` (evaluated after registering, see the module
    /// documentation) finds a job it could take. The caller must be searching; it is
    /// counted as searching again when this returns. Calls `falling_asleep` just before
    /// it sleeps. With a `deadline`, wakes up by itself then at the latest. Returns
    /// whether it slept.
    pub(crate) fn sleep(
        &self,
        index: usize,
        keep_waiting: impl Fn() -> bool,
        has_work: impl Fn() -> bool,
        falling_asleep: impl FnOnce(),
        deadline: Option<Instant>,
    ) -> bool {
        let mut state = sync::lock(&self.state);
        if !keep_waiting() {
            return false;
        }
        debug_assert!(state.asleep[index].is_none());
        state.asleep[index] = Some(Sleeper::Searcher);
        state.sleepers.push(index);
        self.sleeping.fetch_add(1, Ordering::SeqCst);
        self.stop_searching();
        fence(Ordering::SeqCst);
        if has_work() {
            // A job was published before our registration became visible to its
            // producer: take it instead of sleeping.
            self.wake_locked_if_asleep(&mut state, index);
            return false;
        }
        falling_asleep();
        while state.asleep[index].is_some() {
            state = match deadline {
                None => sync::wait(&self.signals[index], state),
                Some(deadline) => {
                    let now = time::now();
                    if now >= deadline {
                        // Nobody woke us: leave the sleepers as a waker would take us out.
                        self.wake_locked_if_asleep(&mut state, index);
                        break;
                    }
                    sync::wait_timeout(&self.signals[index], state, deadline - now)
                }
            };
        }
        true
    }

    /// Puts member `index`, which takes no shared work (see [`Sleeper::Private`]), to
    /// sleep until [`wake`](Self::wake) wakes it (or `deadline` passes), unless
    /// `keep_waiting()` (evaluated under the lock) says its wait is over. It does not
    /// count as searching before or after. Returns whether it slept.
    pub(crate) fn sleep_private(
        &self,
        index: usize,
        keep_waiting: impl Fn() -> bool,
        deadline: Option<Instant>,
    ) -> bool {
        let mut state = sync::lock(&self.state);
        if !keep_waiting() {
            return false;
        }
        debug_assert!(state.asleep[index].is_none());
        state.asleep[index] = Some(Sleeper::Private);
        while state.asleep[index].is_some() {
            state = match deadline {
                None => sync::wait(&self.signals[index], state),
                Some(deadline) => {
                    let now = time::now();
                    if now >= deadline {
                        state.asleep[index] = None;
                        break;
                    }
                    sync::wait_timeout(&self.signals[index], state, deadline - now)
                }
            };
        }
        true
    }

    /// A job that any member may take was just published (without the lock): wakes a
    /// sleeper if nobody searches.
    #[inline]
    pub(crate) fn new_work(&self) {
        fence(Ordering::SeqCst);
        if self.sleeping.load(Ordering::SeqCst) > 0 && self.searching.load(Ordering::SeqCst) == 0 {
            self.wake_one();
        }
    }

    /// Called by a member that leaves a wait (or takes a job) while jobs may be left
    /// that others could take, or by a producer of a job that a woken sleeper may take
    /// only under a condition: if `has_work()` (read after the fence) and nobody
    /// searches, wakes a sleeper.
    pub(crate) fn hand_off(&self, has_work: impl Fn() -> bool) {
        fence(Ordering::SeqCst);
        if self.sleeping.load(Ordering::SeqCst) > 0
            && self.searching.load(Ordering::SeqCst) == 0
            && has_work()
        {
            self.wake_one();
        }
    }

    /// Wakes member `index` if it is asleep (call it after making its condition true).
    pub(crate) fn wake(&self, index: usize) {
        let mut state = sync::lock(&self.state);
        self.wake_locked_if_asleep(&mut state, index);
    }

    /// Wakes every sleeping member (termination).
    pub(crate) fn wake_all(&self) {
        let mut state = sync::lock(&self.state);
        while let Some(index) = state.sleepers.pop() {
            self.wake_locked(&mut state, index);
        }
    }

    /// Wakes the most recent sleeper, if any.
    fn wake_one(&self) {
        let mut state = sync::lock(&self.state);
        if let Some(index) = state.sleepers.pop() {
            self.wake_locked(&mut state, index);
        }
    }

    fn wake_locked_if_asleep(&self, state: &mut MutexGuard<'_, SleepState>, index: usize) {
        match state.asleep[index] {
            Some(Sleeper::Searcher) => {
                let position = state.sleepers.iter().rposition(|&sleeper| sleeper == index);
                state
                    .sleepers
                    .swap_remove(position.expect("an asleep searcher is a sleeper"));
                self.wake_locked(state, index);
            }
            Some(Sleeper::Private) => {
                state.asleep[index] = None;
                self.signals[index].notify_one();
            }
            None => {}
        }
    }

    /// Wakes searcher `index`, already taken off `sleepers`: it counts as searching
    /// from now on.
    fn wake_locked(&self, state: &mut MutexGuard<'_, SleepState>, index: usize) {
        debug_assert_eq!(state.asleep[index], Some(Sleeper::Searcher));
        state.asleep[index] = None;
        self.sleeping.fetch_sub(1, Ordering::SeqCst);
        self.start_searching();
        self.signals[index].notify_one();
    }
}
