//! The zero-capacity (rendezvous) channel: a message passes directly from a sender to a
//! receiver, and each waits for the other.
//!
//! # Algorithm
//! One lock guards two queues of *hooks*, waiting senders (each holding its message)
//! and waiting receivers (each with an empty slot), and the disconnected flag. An
//! operation that finds a counterpart waiting completes the hand-over under the lock:
//! it moves the message into (or out of) the counterpart's hook, marks the hook `DONE`
//! and wakes its waker after unlocking. An operation that finds none queues its own
//! hook and waits until the hook leaves `WAITING`; disconnection marks every queued
//! hook `DISCONNECTED`.
//!
//! # Invariants
//! - A hook's message and waker are touched only under the lock.
//! - A hook leaves `WAITING` only under the lock, and only while it is queued; it is
//!   unqueued at that moment. So the owner, under the lock, either finds it `WAITING`
//!   (still queued: it may take it out, on a timeout or a dropped future) or finds the
//!   hand-over complete.
//! - A waiting operation allocates its hook (one `Arc`) when it has to wait; a
//!   hand-over to an operation already waiting allocates nothing.

use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::Waker;

use crate::sync::{self, AtomicU8, Mutex, MutexGuard};

/// The hook waits for a counterpart.
pub(crate) const WAITING: u8 = 0;
/// The hand-over happened: a sender's message was taken, a receiver's slot was filled.
pub(crate) const DONE: u8 = 1;
/// The channel disconnected while the hook waited.
pub(crate) const DISCONNECTED: u8 = 2;

/// A waiting operation of a zero-capacity channel.
pub(crate) struct Hook<T> {
    state: AtomicU8,
    /// A sender's message until taken; a receiver's once given (under the lock).
    msg: UnsafeCell<Option<T>>,
    /// Whom to wake (under the lock).
    waker: UnsafeCell<Waker>,
}

// SAFETY: `msg` and `waker` are only touched under the channel's lock (see the module
// invariants); `state` is atomic. A message moves between threads, so `T: Send`.
unsafe impl<T: Send> Send for Hook<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Hook<T> {}

impl<T> Hook<T> {
    fn new(msg: Option<T>, waker: Waker) -> Arc<Hook<T>> {
        Arc::new(Hook {
            state: AtomicU8::new(WAITING),
            msg: UnsafeCell::new(msg),
            waker: UnsafeCell::new(waker),
        })
    }

    /// The hook's state, without the lock (for a waiter's wake-up condition).
    pub(crate) fn state(&self) -> u8 {
        self.state.load(Ordering::Acquire)
    }
}

struct Inner<T> {
    senders: VecDeque<Arc<Hook<T>>>,
    receivers: VecDeque<Arc<Hook<T>>>,
    disconnected: bool,
}

/// The lock-protected state of a zero-capacity channel.
pub(crate) struct Zero<T> {
    inner: Mutex<Inner<T>>,
}

/// Proof of holding the lock, for the hook accessors.
pub(crate) struct Locked<'a, T>(MutexGuard<'a, Inner<T>>);

/// What a send attempt did.
pub(crate) enum SendAttempt<T> {
    /// Handed to a waiting receiver.
    Sent,
    /// The channel is disconnected; the message is back.
    Disconnected(T),
    /// Nobody waits: the message is back, the lock still held (to queue a hook).
    NoReceiver(T),
}

/// What a receive attempt did.
pub(crate) enum RecvAttempt<T> {
    Received(T),
    Disconnected,
    /// No sender waits; the lock is still held (to queue a hook).
    NoSender,
}

impl<T> Zero<T> {
    pub(crate) fn new() -> Zero<T> {
        Zero {
            inner: Mutex::new(Inner {
                senders: VecDeque::new(),
                receivers: VecDeque::new(),
                disconnected: false,
            }),
        }
    }

    pub(crate) fn lock(&self) -> Locked<'_, T> {
        Locked(sync::lock(&self.inner))
    }

    /// Whether a sender waits (a receive would succeed) or the channel is disconnected.
    pub(crate) fn recv_ready(&self) -> bool {
        let locked = self.lock();
        !locked.0.senders.is_empty() || locked.0.disconnected
    }

    /// Marks every waiting hook disconnected and wakes it.
    pub(crate) fn disconnect(&self) {
        let mut wakers = Vec::new();
        {
            let mut locked = self.lock();
            locked.0.disconnected = true;
            let inner = &mut *locked.0;
            let hooks: Vec<Arc<Hook<T>>> = inner
                .senders
                .drain(..)
                .chain(inner.receivers.drain(..))
                .collect();
            for hook in hooks {
                wakers.push(locked.finish(&hook, DISCONNECTED));
            }
        }
        for waker in wakers {
            waker.wake();
        }
    }
}

impl<T> Locked<'_, T> {
    /// Marks `hook` (just unqueued) finished with `state`, returning its waker to call
    /// after unlocking.
    fn finish(&mut self, hook: &Hook<T>, state: u8) -> Waker {
        // SAFETY: we hold the lock, which guards the waker.
        let waker = unsafe { std::mem::replace(&mut *hook.waker.get(), Waker::noop().clone()) };
        hook.state.store(state, Ordering::Release);
        waker
    }

    /// Hands `msg` to the oldest waiting receiver, if any; unlocks on `Sent` and
    /// `Disconnected`.
    pub(crate) fn try_send(mut self, msg: T) -> (SendAttempt<T>, Option<Self>) {
        if self.0.disconnected {
            return (SendAttempt::Disconnected(msg), None);
        }
        match self.0.receivers.pop_front() {
            Some(receiver) => {
                // SAFETY: we hold the lock, which guards the slot.
                unsafe { *receiver.msg.get() = Some(msg) };
                let waker = self.finish(&receiver, DONE);
                drop(self);
                waker.wake();
                (SendAttempt::Sent, None)
            }
            None => (SendAttempt::NoReceiver(msg), Some(self)),
        }
    }

    /// Takes the message of the oldest waiting sender, if any; unlocks unless it
    /// returns `NoSender`.
    pub(crate) fn try_recv(mut self) -> (RecvAttempt<T>, Option<Self>) {
        match self.0.senders.pop_front() {
            Some(sender) => {
                // SAFETY: we hold the lock, which guards the message.
                let msg = unsafe { (*sender.msg.get()).take() }
                    .expect("a waiting sender has its message");
                let waker = self.finish(&sender, DONE);
                drop(self);
                waker.wake();
                (RecvAttempt::Received(msg), None)
            }
            None if self.0.disconnected => (RecvAttempt::Disconnected, None),
            None => (RecvAttempt::NoSender, Some(self)),
        }
    }

    /// Queues a waiting sender holding `msg`; unlocks.
    pub(crate) fn queue_sender(mut self, msg: T, waker: Waker) -> Arc<Hook<T>> {
        let hook = Hook::new(Some(msg), waker);
        self.0.senders.push_back(Arc::clone(&hook));
        hook
    }

    /// Queues a waiting receiver; unlocks.
    pub(crate) fn queue_receiver(mut self, waker: Waker) -> Arc<Hook<T>> {
        let hook = Hook::new(None, waker);
        self.0.receivers.push_back(Arc::clone(&hook));
        hook
    }

    /// The state of `hook` (one of this channel's), read under the lock.
    pub(crate) fn state_of(&self, hook: &Hook<T>) -> u8 {
        hook.state.load(Ordering::Relaxed)
    }

    /// Replaces the waker of a hook still `WAITING`.
    pub(crate) fn set_waker(&mut self, hook: &Hook<T>, waker: &Waker) {
        debug_assert_eq!(self.state_of(hook), WAITING);
        // SAFETY: we hold the lock, which guards the waker.
        let current = unsafe { &mut *hook.waker.get() };
        if !current.will_wake(waker) {
            *current = waker.clone();
        }
    }

    /// Takes a hook that is still `WAITING` out of its queue (its owner gives up).
    pub(crate) fn withdraw(&mut self, hook: &Arc<Hook<T>>) {
        debug_assert_eq!(self.state_of(hook), WAITING);
        let Inner {
            senders, receivers, ..
        } = &mut *self.0;
        for queue in [senders, receivers] {
            if let Some(position) = queue.iter().position(|h| Arc::ptr_eq(h, hook)) {
                queue.remove(position);
                return;
            }
        }
        debug_assert!(false, "a waiting hook is queued");
    }

    /// Takes the message out of a hook that its owner holds and that left the queue
    /// (a sender's message back, or a receiver's message).
    pub(crate) fn take_msg(&mut self, hook: &Hook<T>) -> Option<T> {
        // SAFETY: we hold the lock, which guards the message.
        unsafe { (*hook.msg.get()).take() }
    }
}
