//! `Select`: waiting on several receivers at once.
//!
//! # Algorithm
//! A selection looks at its receivers in turn, starting one further each time (so a
//! busy channel cannot starve the others), and picks the first that is *ready*: a
//! message is queued (or a sender waits, at capacity 0), or the channel is
//! disconnected. If none is, it registers one waker as an *observer* on every
//! receiver's wait list (observers are woken by every notification and own none, see
//! `waiters`), looks again, and waits. The looks are sequentially consistent, like a
//! receive's, so a message sent after the registration either wakes the observer or is
//! seen by the second look.
//!
//! # Difference from crossbeam-channel
//! The selection reserves nothing: [`SelectedOperation::recv`] receives from the chosen
//! receiver, which never waits when that receiver has a single consumer (the selecting
//! thread); with other consumers on the same channel, one of them may take the message
//! first, and `recv` then waits for the next one.

use std::fmt;
use std::sync::Arc;
use std::task::Waker;
use std::time::{Duration, Instant};

use super::chan::Chan;
use super::error::{RecvError, SelectTimeoutError, TrySelectError};
use super::waiters::{self, Key, ThreadSignal};
use super::Receiver;

/// What a selection needs from a receiver, whatever its message type.
trait Selectable {
    fn ready(&self) -> bool;
    fn observe(&self, waker: Waker) -> Key;
    fn stop_observing(&self, key: Key);
    fn address(&self) -> *const ();
}

impl<T> Selectable for Chan<T> {
    fn ready(&self) -> bool {
        self.recv_ready()
    }

    fn observe(&self, waker: Waker) -> Key {
        self.receivers_waiting.register(waker, true)
    }

    fn stop_observing(&self, key: Key) {
        self.receivers_waiting.unregister(key);
    }

    fn address(&self) -> *const () {
        std::ptr::from_ref(self).cast()
    }
}

/// Waits until one of several receivers can receive, crossbeam-channel's `Select` for
/// receive operations.
///
/// ```
/// use sumac::channel::{unbounded, Select};
///
/// let (s1, r1) = unbounded::<i32>();
/// let (s2, r2) = unbounded::<i32>();
/// s2.send(2).unwrap();
/// let mut select = Select::new();
/// let first = select.recv(&r1);
/// let second = select.recv(&r2);
/// let operation = select.select();
/// assert_eq!(operation.index(), second);
/// assert_ne!(first, second);
/// assert_eq!(operation.recv(&r2), Ok(2));
/// # drop(s1);
/// ```
pub struct Select<'a> {
    receivers: Vec<&'a dyn Selectable>,
    /// Where the next look starts.
    next: usize,
}

/// The operation a [`Select`] chose: complete it with [`recv`](Self::recv) on the
/// receiver it was chosen for.
#[must_use = "a selected operation should be completed with `recv`"]
pub struct SelectedOperation<'a> {
    index: usize,
    address: *const (),
    _select: std::marker::PhantomData<&'a ()>,
}

impl<'a> Select<'a> {
    /// An empty selection.
    pub fn new() -> Select<'a> {
        Select {
            receivers: Vec::new(),
            next: 0,
        }
    }

    /// Adds a receive operation on `receiver`; returns its index.
    pub fn recv<T>(&mut self, receiver: &'a Receiver<T>) -> usize {
        self.receivers.push(receiver.chan());
        self.receivers.len() - 1
    }

    /// Removes the operation with index `index` (the others keep their indices).
    ///
    /// # Panics
    /// If there is no such operation.
    pub fn remove(&mut self, index: usize) {
        struct Removed;
        impl Selectable for Removed {
            fn ready(&self) -> bool {
                false
            }
            fn observe(&self, _waker: Waker) -> Key {
                unreachable!("removed operations are skipped")
            }
            fn stop_observing(&self, _key: Key) {}
            fn address(&self) -> *const () {
                std::ptr::null()
            }
        }
        static REMOVED: Removed = Removed;
        assert!(
            index < self.receivers.len() && !self.receivers[index].address().is_null(),
            "no operation with index {index}"
        );
        self.receivers[index] = &REMOVED;
    }

    /// Waits until an operation is ready and returns it.
    ///
    /// # Panics
    /// If the selection has no operation (it would wait forever).
    pub fn select(&mut self) -> SelectedOperation<'a> {
        self.wait(None)
            .expect("a selection without a deadline returns an operation")
    }

    /// Returns a ready operation, if there is one now.
    pub fn try_select(&mut self) -> Result<SelectedOperation<'a>, TrySelectError> {
        self.look().ok_or(TrySelectError)
    }

    /// [`select`](Self::select), giving up after `timeout`.
    pub fn select_timeout(
        &mut self,
        timeout: Duration,
    ) -> Result<SelectedOperation<'a>, SelectTimeoutError> {
        match Instant::now().checked_add(timeout) {
            Some(deadline) => self.select_deadline(deadline),
            None => Ok(self.select()),
        }
    }

    /// [`select`](Self::select), giving up at `deadline`.
    pub fn select_deadline(
        &mut self,
        deadline: Instant,
    ) -> Result<SelectedOperation<'a>, SelectTimeoutError> {
        self.wait(Some(deadline)).ok_or(SelectTimeoutError)
    }

    fn live(&self) -> impl Iterator<Item = &'a dyn Selectable> + '_ {
        self.receivers
            .iter()
            .copied()
            .filter(|receiver| !receiver.address().is_null())
    }

    /// One look at every receiver, from `next` on.
    fn look(&mut self) -> Option<SelectedOperation<'a>> {
        let count = self.receivers.len();
        if count == 0 {
            return None;
        }
        let start = self.next;
        self.next = (start + 1) % count;
        (0..count)
            .map(|offset| (start + offset) % count)
            .find(|&index| self.receivers[index].ready())
            .map(|index| SelectedOperation {
                index,
                address: self.receivers[index].address(),
                _select: std::marker::PhantomData,
            })
    }

    fn wait(&mut self, deadline: Option<Instant>) -> Option<SelectedOperation<'a>> {
        assert!(
            self.live().next().is_some() || deadline.is_some(),
            "Select::select on a selection without operations would wait forever"
        );
        if let Some(operation) = waiters::attempt_with_backoff(|| self.look()) {
            return Some(operation);
        }
        let signal = ThreadSignal::for_current_thread();
        let waker = Waker::from(Arc::clone(&signal));
        loop {
            let keys: Vec<(&'a dyn Selectable, Key)> = self
                .live()
                .map(|receiver| (receiver, receiver.observe(waker.clone())))
                .collect();
            let found = self.look();
            let notified = found.is_some() || signal.wait(deadline);
            for (receiver, key) in keys {
                receiver.stop_observing(key);
            }
            if found.is_some() {
                return found;
            }
            signal.reset();
            let found = self.look();
            if found.is_some() || !notified {
                return found;
            }
        }
    }
}

impl Default for Select<'_> {
    fn default() -> Self {
        Select::new()
    }
}

impl fmt::Debug for Select<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Select")
            .field("operations", &self.receivers.len())
            .finish()
    }
}

impl SelectedOperation<'_> {
    /// The index [`Select::recv`] gave the chosen operation.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Completes the chosen receive on `receiver` (see the module notes: with a single
    /// consumer it never waits).
    ///
    /// # Panics
    /// If `receiver` is not the one the operation was chosen for.
    pub fn recv<T>(self, receiver: &Receiver<T>) -> Result<T, RecvError> {
        let chan: &dyn Selectable = receiver.chan();
        assert!(
            std::ptr::eq(chan.address(), self.address),
            "passed a receiver that wasn't selected"
        );
        receiver.recv()
    }
}

impl fmt::Debug for SelectedOperation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SelectedOperation")
            .field("index", &self.index)
            .finish()
    }
}
