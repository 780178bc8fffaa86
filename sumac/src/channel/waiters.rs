//! `WaitList`: the operations blocked on one side of a channel (receivers waiting for a
//! message, or senders waiting for room), and how a thread or a worker blocks.
//!
//! # The protocol (no lost wake-ups)
//! A waiter is a [`Waker`]: an async task's own, or, for a blocking call, one that sets
//! a flag and unparks the thread through [`crate::park`] (a worker runs its pool's jobs
//! while it waits). An operation that must wait
//! 1. registers its waker (under the list's lock, then a sequentially consistent store
//!    of the number of entries),
//! 2. tries its operation again, and only then
//! 3. waits for its waker to be called.
//!
//! The other side first makes progress possible (a push or pop on the queue, whose
//! index update is a sequentially consistent read-modify-write; or the disconnected
//! flag, a store followed by a sequentially consistent fence), then loads the number
//! of entries with a sequentially consistent load and, if it is not zero, takes an
//! entry out under the lock and wakes it. The registration is followed by a
//! sequentially consistent fence too. Either the notifier sees the entry, or the
//! waiter's retry in step 2 sees the progress: both sides order a store before a load
//! through one total order (the queues' empty and full checks end with a sequentially
//! consistent fence).
//!
//! # Notifications are handed on, never dropped
//! `notify_one` wakes the oldest *regular* entry (a `recv` or `send`), and every
//! *observer* (a `Select` waiting on several channels, which takes no message itself).
//! A woken regular entry owns one notification: it retries its operation, and if it
//! gives up without completing it (a timeout, a dropped future), it passes the
//! notification on with another `notify_one`, so that a message is never left in the
//! queue while a receiver sleeps. [`WaitList::unregister`] tells the waiter which case
//! it is in: `false` means the entry was already taken out by a notifier.
//!
//! # The seat: one async waiter without the lock
//! One regular async operation at a time waits in the list's *seat* instead of its
//! entries (a receiving task of a channel with one consumer, the common case, never
//! takes the lock). The seat is a state word, `generation << 2 | tag`, and a cell for
//! the waker:
//! - `EMPTY` (no waker in the cell) → `BUSY` → `WAITING`: a waiter registers (a
//!   compare-and-swap claims the seat, the waker goes in, then a sequentially consistent
//!   store publishes it, as a registration in the entries does);
//! - `WAITING` → `BUSY` → `EMPTY` of the next generation: a notifier takes the waker out
//!   (and wakes it after freeing the seat), or the waiter itself unregisters;
//! - `WAITING` → `BUSY` → `WAITING`: the waiter replaces its waker.
//!
//! Whoever moves the seat to `BUSY` alone touches the cell until it moves it on, and
//! never runs code of a waker meanwhile (an old waker is dropped afterwards). A
//! notifier that finds the seat `BUSY` waits for it to move on, so a registration is
//! never skipped while it is being made or updated; the generation tells a waiter
//! whether the seat it unregisters from is still its own. Keys of the seat have
//! [`SEAT_KEY`] set.

use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Wake, Waker};
use std::time::Instant;

use crossbeam_utils::CachePadded;

use crate::park::{self, Unparker};
use crate::sync::{self, AtomicBool, AtomicU64, AtomicUsize, Mutex};

/// The identity of one registration in a [`WaitList`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Key(u64);

struct Entry {
    key: Key,
    waker: Waker,
    /// The thread of a blocking operation (`None` for an async task's waker).
    thread: Option<Unparker>,
    /// A `Select` watching several channels: woken by every notification, and owning
    /// none of them.
    observer: bool,
}

struct Entries {
    entries: VecDeque<Entry>,
    next_key: u64,
}

/// The bit that marks a [`Key`] of the seat (the rest is the seat's generation).
const SEAT_KEY: u64 = 1 << 63;
/// Tags of the seat's state word (see the module documentation).
const EMPTY: u64 = 0;
const BUSY: u64 = 1;
const WAITING: u64 = 2;
const TAG: u64 = 3;

/// What a notifier reads first, on one cache line.
struct Counts {
    /// `entries.len()`, so that a notifier with nobody to wake touches no lock.
    waiting: AtomicUsize,
    /// The seat's state: `generation << 2 | tag`.
    seat: AtomicU64,
}

/// The waiters of one side of a channel.
pub(crate) struct WaitList {
    counts: CachePadded<Counts>,
    /// The seat's waker: `Some` exactly while the seat is `WAITING` (or `BUSY` between
    /// two states that have one); touched only by whoever made the seat `BUSY`.
    seat_waker: UnsafeCell<Option<Waker>>,
    state: Mutex<Entries>,
}

// SAFETY: `seat_waker` is accessed only by the thread that moved the seat to `BUSY`,
// with acquire and release on the state word ordering successive holders (see the
// module documentation); `Waker` is `Send` and `Sync`; the rest is `Sync`.
unsafe impl Sync for WaitList {}
// SAFETY: as above.
unsafe impl Send for WaitList {}

impl WaitList {
    pub(crate) fn new() -> WaitList {
        WaitList {
            counts: CachePadded::new(Counts {
                waiting: AtomicUsize::new(0),
                seat: AtomicU64::new(EMPTY),
            }),
            seat_waker: UnsafeCell::new(None),
            state: Mutex::new(Entries {
                entries: VecDeque::new(),
                next_key: 0,
            }),
        }
    }

    /// Registers `waker`; the caller must retry its operation afterwards (see the module
    /// documentation).
    pub(crate) fn register(&self, waker: Waker, observer: bool) -> Key {
        self.register_entry(waker, None, observer)
    }

    /// Registers the blocking operation of the thread `signal` wakes; the caller must
    /// retry its operation afterwards.
    pub(crate) fn register_blocking(&self, signal: &Arc<ThreadSignal>) -> Key {
        let waker = Waker::from(Arc::clone(signal));
        self.register_entry(waker, Some(signal.unparker.clone()), false)
    }

    fn register_entry(&self, waker: Waker, thread: Option<Unparker>, observer: bool) -> Key {
        let waker = if thread.is_none() && !observer {
            match self.take_seat(waker) {
                Ok(key) => return key,
                Err(waker) => waker,
            }
        } else {
            waker
        };
        let mut state = sync::lock(&self.state);
        let key = Key(state.next_key);
        state.next_key += 1;
        state.entries.push_back(Entry {
            key,
            waker,
            thread,
            observer,
        });
        self.counts
            .waiting
            .store(state.entries.len(), Ordering::SeqCst);
        drop(state);
        // Orders the store above before the caller's retry (its loads of the queue and
        // of the disconnected flag), against the notifier's change-then-load.
        sync::fence(Ordering::SeqCst);
        key
    }

    /// Registers `waker` in the seat if it is empty; gives the waker back otherwise.
    fn take_seat(&self, waker: Waker) -> Result<Key, Waker> {
        let seat = &self.counts.seat;
        let state = seat.load(Ordering::Relaxed);
        if state & TAG != EMPTY
            || seat
                .compare_exchange(state, state | BUSY, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
        {
            return Err(waker);
        }
        // SAFETY: the seat is ours while BUSY; an empty seat holds no waker.
        unsafe { *self.seat_waker.get() = Some(waker) };
        seat.store(state | WAITING, Ordering::SeqCst);
        // As for an entry: the store before the caller's retry.
        sync::fence(Ordering::SeqCst);
        Ok(Key(SEAT_KEY | state >> 2))
    }

    /// Moves the seat from `state` (`WAITING`) to `BUSY`: true if it was still there.
    fn hold_seat(&self, state: u64) -> bool {
        self.counts
            .seat
            .compare_exchange(
                state,
                state & !TAG | BUSY,
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .is_ok()
    }

    /// Frees the seat held (`BUSY`) at `state`'s generation, giving back its waker.
    fn free_seat(&self, state: u64) -> Option<Waker> {
        // SAFETY: the seat is ours while BUSY.
        let waker = unsafe { (*self.seat_waker.get()).take() };
        let next = ((state >> 2) + 1) << 2 | EMPTY;
        self.counts.seat.store(next, Ordering::Release);
        waker
    }

    /// Takes the seat's waiter out and wakes it; false if the seat is empty. Waits out a
    /// seat that is `BUSY` (being registered, updated, left or notified: a few stores).
    #[cold]
    fn notify_seat(&self) -> bool {
        let mut round = 0;
        loop {
            let state = self.counts.seat.load(Ordering::SeqCst);
            match state & TAG {
                EMPTY => return false,
                WAITING => {
                    if self.hold_seat(state) {
                        if let Some(waker) = self.free_seat(state) {
                            waker.wake();
                        }
                        return true;
                    }
                }
                _ => {
                    backoff(round);
                    round = round.saturating_add(1);
                }
            }
        }
    }

    /// Whether the seat holds (or is about to hold, or give up) a waiter.
    #[inline]
    fn seat_taken(&self) -> bool {
        self.counts.seat.load(Ordering::SeqCst) & TAG != EMPTY
    }

    /// Takes the registration `key` out. Returns false if a notifier took it out first
    /// (its waker was or is being called: a regular waiter then owns a notification).
    pub(crate) fn unregister(&self, key: Key) -> bool {
        if key.0 & SEAT_KEY != 0 {
            // Our seat, unless a notifier took it (moving it on from our state).
            let ours = (key.0 & !SEAT_KEY) << 2 | WAITING;
            if self.counts.seat.load(Ordering::Relaxed) != ours || !self.hold_seat(ours) {
                return false;
            }
            drop(self.free_seat(ours));
            return true;
        }
        // The caller's own registration stored a count of at least one; a count of zero
        // seen since means a notifier emptied the list, taking the entry out.
        if self.counts.waiting.load(Ordering::SeqCst) == 0 {
            return false;
        }
        let mut state = sync::lock(&self.state);
        match state.entries.iter().position(|entry| entry.key == key) {
            Some(position) => {
                state.entries.remove(position);
                self.counts
                    .waiting
                    .store(state.entries.len(), Ordering::SeqCst);
                true
            }
            None => false,
        }
    }

    /// Replaces the waker of registration `key` (an async operation polled again with
    /// another waker). Returns false if a notifier took the registration out.
    pub(crate) fn update(&self, key: Key, waker: &Waker) -> bool {
        if key.0 & SEAT_KEY != 0 {
            let ours = (key.0 & !SEAT_KEY) << 2 | WAITING;
            if !self.hold_seat(ours) {
                return false;
            }
            // SAFETY: the seat is ours while BUSY.
            let cell = unsafe { &mut *self.seat_waker.get() };
            let old = match cell {
                Some(current) if current.will_wake(waker) => None,
                _ => cell.replace(waker.clone()),
            };
            self.counts.seat.store(ours, Ordering::Release);
            drop(old);
            return true;
        }
        let mut state = sync::lock(&self.state);
        match state.entries.iter_mut().find(|entry| entry.key == key) {
            Some(entry) => {
                if !entry.waker.will_wake(waker) {
                    entry.waker = waker.clone();
                }
                true
            }
            None => false,
        }
    }

    /// Wakes the oldest regular waiter and every observer, if anyone waits. Call it after
    /// making progress possible for one waiter.
    #[inline]
    pub(crate) fn notify_one(&self) {
        let regular = if self.seat_taken() && self.notify_seat() {
            0
        } else {
            1
        };
        if self.counts.waiting.load(Ordering::SeqCst) != 0 {
            self.notify_slow(Some(regular));
        }
    }

    /// Wakes every observer (a waiting sender of a zero-capacity channel appeared, which
    /// only a `Select` can take: a waiting receiver would have taken the message).
    pub(crate) fn notify_observers(&self) {
        if self.counts.waiting.load(Ordering::SeqCst) != 0 {
            self.notify_slow(Some(0));
        }
    }

    /// Wakes everybody (disconnection).
    pub(crate) fn notify_all(&self) {
        if self.seat_taken() {
            self.notify_seat();
        }
        if self.counts.waiting.load(Ordering::SeqCst) != 0 {
            self.notify_slow(None);
        }
    }

    /// Takes out up to `regular` regular entries (all with `None`) and every observer,
    /// then wakes them outside the lock.
    #[cold]
    fn notify_slow(&self, regular: Option<usize>) {
        let mut first: Option<Waker> = None;
        let mut more: Vec<Waker> = Vec::new();
        {
            let mut state = sync::lock(&self.state);
            let mut regular_left = regular.unwrap_or(usize::MAX);
            let mut index = 0;
            while index < state.entries.len() {
                let entry = &state.entries[index];
                if entry.observer || regular_left > 0 {
                    let mut taken = index;
                    if !entry.observer {
                        regular_left -= 1;
                        taken = newest_of_same_thread(&state.entries, index);
                    }
                    let entry = state.entries.remove(taken).expect("index is in range");
                    if first.is_none() {
                        first = Some(entry.waker);
                    } else {
                        more.push(entry.waker);
                    }
                } else {
                    index += 1;
                }
            }
            self.counts
                .waiting
                .store(state.entries.len(), Ordering::SeqCst);
        }
        if let Some(waker) = first {
            waker.wake();
        }
        for waker in more {
            waker.wake();
        }
    }
}

/// The entry to notify in place of the regular entry at `index`: the newest regular
/// entry of the same thread. A worker's blocking waits nest (it runs jobs while it
/// waits, and they may block too), so of its entries only the newest belongs to an
/// operation able to retry now; one below it would own the notification while buried.
fn newest_of_same_thread(entries: &VecDeque<Entry>, index: usize) -> usize {
    let Some(thread) = &entries[index].thread else {
        return index;
    };
    (index + 1..entries.len())
        .rev()
        .find(|&at| {
            let entry = &entries[at];
            !entry.observer && entry.thread.as_ref().is_some_and(|t| t.same_waiter(thread))
        })
        .unwrap_or(index)
}

/// The waker of a blocked thread or worker: sets `notified`, then unparks it.
pub(crate) struct ThreadSignal {
    notified: AtomicBool,
    unparker: Unparker,
}

impl ThreadSignal {
    /// A signal that wakes the calling thread (or worker).
    pub(crate) fn for_current_thread() -> Arc<ThreadSignal> {
        Arc::new(ThreadSignal {
            notified: AtomicBool::new(false),
            unparker: Unparker::for_current_thread(),
        })
    }

    pub(crate) fn is_notified(&self) -> bool {
        self.notified.load(Ordering::Acquire)
    }

    /// Forgets a notification that was seen (before retrying the operation).
    pub(crate) fn reset(&self) {
        self.notified.store(false, Ordering::Relaxed);
    }

    /// Waits until notified, or until `deadline`: returns whether it was notified. On a
    /// worker, runs the pool's jobs meanwhile; a plain thread spins briefly first (a
    /// futex wake-up on a VM takes tens of microseconds).
    pub(crate) fn wait(&self, deadline: Option<Instant>) -> bool {
        wait_until(|| self.is_notified(), deadline)
    }
}

impl Wake for ThreadSignal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // The condition first, then the unpark (see `crate::park`).
        self.notified.store(true, Ordering::Release);
        self.unparker.unpark();
    }
}

/// Waits until `done()` or `deadline`; returns whether `done()` held. `done` must become
/// true only through an action followed by an unpark of this thread (see
/// [`crate::park`]).
pub(crate) fn wait_until(done: impl Fn() -> bool, deadline: Option<Instant>) -> bool {
    if attempt_with_backoff(|| done().then_some(())).is_some() {
        return true;
    }
    // A task of a task graph that blocks lets other threads run the tasks its thread kept
    // to run next: the one it waits for may be among them.
    let _blocked = crate::graph::BlockedTask::enter();
    match deadline {
        None => {
            park::park_until(done);
            true
        }
        Some(deadline) => park::park_until_deadline(done, deadline),
    }
}

/// Rounds of exponential spinning (`2^round` pause instructions) before a blocked thread
/// yields its core: a futex wake-up on a VM costs tens of microseconds.
const SPIN_ROUNDS: u32 = 6;
/// Rounds of `yield_now` after spinning, before a blocked thread parks: with more
/// threads than cores, the thread that unblocks us may be waiting for this core.
const YIELD_ROUNDS: u32 = 4;
/// Whether a thread spins and yields before it blocks. Loom models explore every
/// interleaving (and a yield there would let the other threads run to completion first,
/// hiding the waits): they block at once.
const BACKS_OFF: bool = cfg!(not(loom));

/// Tries `attempt()`, then, off the pool's workers (which go straight to running their
/// pool's jobs), again after each step of a backoff; `None` if every try failed, and the
/// caller then blocks.
pub(crate) fn attempt_with_backoff<R>(mut attempt: impl FnMut() -> Option<R>) -> Option<R> {
    if let Some(answer) = attempt() {
        return Some(answer);
    }
    if BACKS_OFF && !park::on_worker() {
        for round in 0..SPIN_ROUNDS + YIELD_ROUNDS {
            backoff(round);
            if let Some(answer) = attempt() {
                return Some(answer);
            }
        }
    }
    None
}

/// One step of a backoff: spin `2^round` times while `round < SPIN_ROUNDS`, else yield.
#[inline]
fn backoff(round: u32) {
    if round < SPIN_ROUNDS {
        for _ in 0..1u32 << round {
            std::hint::spin_loop();
        }
    } else {
        #[cfg(not(loom))]
        std::thread::yield_now();
        #[cfg(loom)]
        loom::thread::yield_now();
    }
}
