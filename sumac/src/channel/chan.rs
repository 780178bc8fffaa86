//! `Chan`: the state one channel's senders and receivers share, and every operation on
//! it (blocking, non-blocking and async).
//!
//! # Fast path
//! A buffered send is a push on the lock-free queue plus one load of the receivers'
//! waiting count (and of the disconnected flag); a receive is a pop plus, on a bounded
//! channel, one load of the senders' waiting count. No lock is taken unless somebody
//! waits, and a bounded channel allocates nothing per message.
//!
//! # Waiting
//! A blocked operation registers in its side's [`WaitList`], retries, then waits (see
//! `waiters` for why no wake-up is lost). A thread spins and yields briefly first; a
//! worker instead runs its pool's jobs while it waits (`crate::park`), so a pool never
//! deadlocks because one of its workers waits for a message another of its jobs sends.
//! Zero-capacity channels wait on hooks instead (see `zero`).
//!
//! # Disconnection
//! One flag, set (sequentially consistent) when the last sender or the last receiver
//! goes: a live sender seeing it knows the receivers are gone, and a receiver that
//! finds the queue empty and the flag set pops once more (the senders' last pushes
//! happen before the flag) before reporting `Disconnected`. The last receiver also
//! drops the messages still queued; the rest go with the channel.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use super::error::{
    RecvError, RecvTimeoutError, SendError, SendTimeoutError, TryRecvError, TrySendError,
};
use super::queue::{BoundedQueue, UnboundedQueue};
use super::waiters::{Key, ThreadSignal, WaitList};
use super::zero::{self, Hook, RecvAttempt, SendAttempt, Zero};
use crate::sync::{AtomicBool, AtomicUsize};

pub(crate) enum Flavor<T> {
    Array(BoundedQueue<T>),
    List(UnboundedQueue<T>),
    Zero(Zero<T>),
}

pub(crate) struct Chan<T> {
    flavor: Flavor<T>,
    /// Receivers waiting for a message (and `Select`s watching this channel).
    pub(crate) receivers_waiting: WaitList,
    /// Senders waiting for room (bounded channels).
    senders_waiting: WaitList,
    senders: AtomicUsize,
    receivers: AtomicUsize,
    disconnected: AtomicBool,
}

impl<T> Chan<T> {
    pub(crate) fn new(capacity: Option<usize>) -> Arc<Chan<T>> {
        let flavor = match capacity {
            None => Flavor::List(UnboundedQueue::new()),
            Some(0) => Flavor::Zero(Zero::new()),
            Some(capacity) => Flavor::Array(BoundedQueue::new(capacity)),
        };
        Arc::new(Chan {
            flavor,
            receivers_waiting: WaitList::new(),
            senders_waiting: WaitList::new(),
            senders: AtomicUsize::new(1),
            receivers: AtomicUsize::new(1),
            disconnected: AtomicBool::new(false),
        })
    }

    // ------------------------------------------------------------------ ends

    pub(crate) fn add_sender(&self) {
        self.senders.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn add_receiver(&self) {
        self.receivers.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn drop_sender(&self) {
        if self.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.disconnect();
        }
    }

    pub(crate) fn drop_receiver(&self) {
        if self.receivers.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.disconnect();
            self.discard_messages();
        }
    }

    fn disconnect(&self) {
        self.disconnected.store(true, Ordering::SeqCst);
        // The flag before the waiters' count (see `waiters`).
        crate::sync::fence(Ordering::SeqCst);
        if let Flavor::Zero(zero) = &self.flavor {
            zero.disconnect();
        }
        self.receivers_waiting.notify_all();
        self.senders_waiting.notify_all();
    }

    pub(crate) fn is_disconnected(&self) -> bool {
        self.disconnected.load(Ordering::SeqCst)
    }

    /// Drops the queued messages (every receiver is gone).
    fn discard_messages(&self) {
        match &self.flavor {
            Flavor::Array(queue) => while queue.pop().is_some() {},
            Flavor::List(queue) => while queue.pop().is_some() {},
            Flavor::Zero(_) => {}
        }
    }

    // ------------------------------------------------------------------ queries

    pub(crate) fn len(&self) -> usize {
        match &self.flavor {
            Flavor::Array(queue) => queue.len(),
            Flavor::List(queue) => queue.len(),
            Flavor::Zero(_) => 0,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        match &self.flavor {
            Flavor::Array(queue) => queue.is_empty(),
            Flavor::List(queue) => queue.is_empty(),
            Flavor::Zero(_) => true,
        }
    }

    pub(crate) fn is_full(&self) -> bool {
        match &self.flavor {
            Flavor::Array(queue) => queue.is_full(),
            Flavor::List(_) => false,
            Flavor::Zero(_) => true,
        }
    }

    pub(crate) fn capacity(&self) -> Option<usize> {
        match &self.flavor {
            Flavor::Array(queue) => Some(queue.capacity()),
            Flavor::List(_) => None,
            Flavor::Zero(_) => Some(0),
        }
    }

    /// Whether a receive would not block now (a message, a waiting sender on a
    /// zero-capacity channel, or disconnection). Sequentially consistent, for `Select`.
    pub(crate) fn recv_ready(&self) -> bool {
        match &self.flavor {
            Flavor::Array(queue) => !queue.is_empty() || self.is_disconnected(),
            Flavor::List(queue) => !queue.is_empty() || self.is_disconnected(),
            Flavor::Zero(zero) => zero.recv_ready(),
        }
    }

    // ------------------------------------------------------------------ non-blocking

    #[inline]
    pub(crate) fn try_send(&self, msg: T) -> Result<(), TrySendError<T>> {
        if self.disconnected.load(Ordering::Relaxed) {
            return Err(TrySendError::Disconnected(msg));
        }
        match &self.flavor {
            Flavor::Array(queue) => match queue.push(msg) {
                Ok(()) => self.sent(),
                Err(msg) => Err(TrySendError::Full(msg)),
            },
            Flavor::List(queue) => {
                queue.push(msg);
                self.sent()
            }
            Flavor::Zero(zero) => match zero.lock().try_send(msg).0 {
                SendAttempt::Sent => Ok(()),
                SendAttempt::Disconnected(msg) => Err(TrySendError::Disconnected(msg)),
                SendAttempt::NoReceiver(msg) => Err(TrySendError::Full(msg)),
            },
        }
    }

    /// After a push: wake a receiver if one waits; if the receivers went away meanwhile,
    /// drop what they left (this message included).
    #[inline]
    fn sent(&self) -> Result<(), TrySendError<T>> {
        self.receivers_waiting.notify_one();
        if self.disconnected.load(Ordering::Relaxed) {
            self.discard_messages();
        }
        Ok(())
    }

    #[inline]
    pub(crate) fn try_recv(&self) -> Result<T, TryRecvError> {
        match &self.flavor {
            Flavor::Array(queue) => match queue.pop() {
                Some(msg) => {
                    self.senders_waiting.notify_one();
                    Ok(msg)
                }
                None => self.empty(|| queue.pop()),
            },
            Flavor::List(queue) => match queue.pop() {
                Some(msg) => Ok(msg),
                None => self.empty(|| queue.pop()),
            },
            Flavor::Zero(zero) => match zero.lock().try_recv().0 {
                RecvAttempt::Received(msg) => Ok(msg),
                RecvAttempt::Disconnected => Err(TryRecvError::Disconnected),
                RecvAttempt::NoSender => Err(TryRecvError::Empty),
            },
        }
    }

    /// The queue looked empty: `Disconnected` if it still is after the flag was seen
    /// (the senders' last pushes happen before it), else `Empty`.
    #[cold]
    fn empty(&self, pop: impl FnOnce() -> Option<T>) -> Result<T, TryRecvError> {
        if !self.is_disconnected() {
            return Err(TryRecvError::Empty);
        }
        match pop() {
            Some(msg) => {
                self.senders_waiting.notify_one();
                Ok(msg)
            }
            None => Err(TryRecvError::Disconnected),
        }
    }

    // ------------------------------------------------------------------ blocking

    pub(crate) fn send(
        &self,
        msg: T,
        deadline: Option<Instant>,
    ) -> Result<(), SendTimeoutError<T>> {
        if let Flavor::Zero(zero) = &self.flavor {
            return self.send_zero(zero, msg, deadline);
        }
        let mut slot = Some(msg);
        let outcome = self.block_on_list(&self.senders_waiting, deadline, || {
            match self.try_send(slot.take().expect("the message is here")) {
                Ok(()) => Some(Ok(())),
                Err(TrySendError::Disconnected(msg)) => Some(Err(msg)),
                Err(TrySendError::Full(msg)) => {
                    slot = Some(msg);
                    None
                }
            }
        });
        match outcome {
            Some(Ok(())) => Ok(()),
            Some(Err(msg)) => Err(SendTimeoutError::Disconnected(msg)),
            None => Err(SendTimeoutError::Timeout(
                slot.take().expect("a timed-out send keeps its message"),
            )),
        }
    }

    pub(crate) fn recv(&self, deadline: Option<Instant>) -> Result<T, RecvTimeoutError> {
        if let Flavor::Zero(zero) = &self.flavor {
            return self.recv_zero(zero, deadline);
        }
        let outcome = self.block_on_list(&self.receivers_waiting, deadline, || {
            match self.try_recv() {
                Ok(msg) => Some(Ok(msg)),
                Err(TryRecvError::Disconnected) => Some(Err(RecvTimeoutError::Disconnected)),
                Err(TryRecvError::Empty) => None,
            }
        });
        outcome.unwrap_or(Err(RecvTimeoutError::Timeout))
    }

    /// Retries `attempt` until it gives an answer, waiting on `list` between tries;
    /// `None` if `deadline` passed first.
    fn block_on_list<R>(
        &self,
        list: &WaitList,
        deadline: Option<Instant>,
        mut attempt: impl FnMut() -> Option<R>,
    ) -> Option<R> {
        // A thread spins and yields before it registers.
        if let Some(answer) = super::waiters::attempt_with_backoff(&mut attempt) {
            return Some(answer);
        }
        let signal = ThreadSignal::for_current_thread();
        loop {
            let key = list.register_blocking(&signal);
            if let Some(answer) = attempt() {
                // Done; a notification that reached us meanwhile was for the progress
                // we just consumed, or for one another waiter also got.
                list.unregister(key);
                return Some(answer);
            }
            if !signal.wait(deadline) {
                if list.unregister(key) {
                    return None;
                }
                // A notifier chose us as we gave up: use the notification or hand it on.
                let answer = attempt();
                if answer.is_none() {
                    list.notify_one();
                }
                return answer;
            }
            signal.reset();
            if let Some(answer) = attempt() {
                return Some(answer);
            }
        }
    }

    fn send_zero(
        &self,
        zero: &Zero<T>,
        msg: T,
        deadline: Option<Instant>,
    ) -> Result<(), SendTimeoutError<T>> {
        let (locked, msg) = match zero.lock().try_send(msg) {
            (SendAttempt::Sent, _) => return Ok(()),
            (SendAttempt::Disconnected(msg), _) => return Err(SendTimeoutError::Disconnected(msg)),
            (SendAttempt::NoReceiver(msg), locked) => (locked.expect("still locked"), msg),
        };
        let signal = ThreadSignal::for_current_thread();
        let hook = locked.queue_sender(msg, Waker::from(Arc::clone(&signal)));
        // Only a `Select` can take a message from a waiting sender.
        self.receivers_waiting.notify_observers();
        super::waiters::wait_until(|| hook.state() != zero::WAITING, deadline);
        let mut locked = zero.lock();
        match locked.state_of(&hook) {
            zero::DONE => Ok(()),
            zero::DISCONNECTED => Err(SendTimeoutError::Disconnected(
                locked
                    .take_msg(&hook)
                    .expect("an unsent message is in its hook"),
            )),
            _ => {
                locked.withdraw(&hook);
                Err(SendTimeoutError::Timeout(
                    locked
                        .take_msg(&hook)
                        .expect("an unsent message is in its hook"),
                ))
            }
        }
    }

    fn recv_zero(&self, zero: &Zero<T>, deadline: Option<Instant>) -> Result<T, RecvTimeoutError> {
        let locked = match zero.lock().try_recv() {
            (RecvAttempt::Received(msg), _) => return Ok(msg),
            (RecvAttempt::Disconnected, _) => return Err(RecvTimeoutError::Disconnected),
            (RecvAttempt::NoSender, locked) => locked.expect("still locked"),
        };
        let signal = ThreadSignal::for_current_thread();
        let hook = locked.queue_receiver(Waker::from(Arc::clone(&signal)));
        super::waiters::wait_until(|| hook.state() != zero::WAITING, deadline);
        let mut locked = zero.lock();
        match locked.state_of(&hook) {
            zero::DONE => Ok(locked
                .take_msg(&hook)
                .expect("a served receiver has its message")),
            zero::DISCONNECTED => Err(RecvTimeoutError::Disconnected),
            _ => {
                locked.withdraw(&hook);
                Err(RecvTimeoutError::Timeout)
            }
        }
    }

    // ------------------------------------------------------------------ async

    /// Polls an async receive whose registration is `wait`.
    pub(crate) fn poll_recv(
        &self,
        wait: &mut Wait<T>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<T, RecvError>> {
        if let Flavor::Zero(zero) = &self.flavor {
            return self.poll_recv_zero(zero, wait, cx);
        }
        loop {
            match self.try_recv() {
                Ok(msg) => {
                    wait.finish(&self.receivers_waiting);
                    return Poll::Ready(Ok(msg));
                }
                Err(TryRecvError::Disconnected) => {
                    wait.finish(&self.receivers_waiting);
                    return Poll::Ready(Err(RecvError));
                }
                Err(TryRecvError::Empty) => {}
            }
            if wait.keep_waiting(&self.receivers_waiting, cx.waker()) {
                return Poll::Pending;
            }
            if wait.just_registered() {
                // Registered: one more try, then wait for the notification.
                return match self.try_recv() {
                    Ok(msg) => {
                        wait.finish(&self.receivers_waiting);
                        Poll::Ready(Ok(msg))
                    }
                    Err(TryRecvError::Disconnected) => {
                        wait.finish(&self.receivers_waiting);
                        Poll::Ready(Err(RecvError))
                    }
                    Err(TryRecvError::Empty) => Poll::Pending,
                };
            }
        }
    }

    fn poll_recv_zero(
        &self,
        zero: &Zero<T>,
        wait: &mut Wait<T>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<T, RecvError>> {
        if let Wait::Hook(hook) = wait {
            let mut locked = zero.lock();
            return match locked.state_of(hook) {
                zero::WAITING => {
                    locked.set_waker(hook, cx.waker());
                    Poll::Pending
                }
                zero::DONE => {
                    let msg = locked
                        .take_msg(hook)
                        .expect("a served receiver has its message");
                    drop(locked);
                    *wait = Wait::Idle;
                    Poll::Ready(Ok(msg))
                }
                _ => {
                    drop(locked);
                    *wait = Wait::Idle;
                    Poll::Ready(Err(RecvError))
                }
            };
        }
        match zero.lock().try_recv() {
            (RecvAttempt::Received(msg), _) => Poll::Ready(Ok(msg)),
            (RecvAttempt::Disconnected, _) => Poll::Ready(Err(RecvError)),
            (RecvAttempt::NoSender, locked) => {
                let locked = locked.expect("still locked");
                *wait = Wait::Hook(locked.queue_receiver(cx.waker().clone()));
                Poll::Pending
            }
        }
    }

    /// Polls an async send of `*msg` whose registration is `wait`.
    pub(crate) fn poll_send(
        &self,
        msg: &mut Option<T>,
        wait: &mut Wait<T>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), SendError<T>>> {
        if let Flavor::Zero(zero) = &self.flavor {
            return self.poll_send_zero(zero, msg, wait, cx);
        }
        loop {
            let value = msg.take().expect("a send future polled after it completed");
            match self.try_send(value) {
                Ok(()) => {
                    wait.finish(&self.senders_waiting);
                    return Poll::Ready(Ok(()));
                }
                Err(TrySendError::Disconnected(value)) => {
                    wait.finish(&self.senders_waiting);
                    return Poll::Ready(Err(SendError(value)));
                }
                Err(TrySendError::Full(value)) => *msg = Some(value),
            }
            if wait.keep_waiting(&self.senders_waiting, cx.waker()) {
                return Poll::Pending;
            }
            if wait.just_registered() {
                // Registered: one more try, then wait for the notification.
                let value = msg.take().expect("the message is here");
                return match self.try_send(value) {
                    Ok(()) => {
                        wait.finish(&self.senders_waiting);
                        Poll::Ready(Ok(()))
                    }
                    Err(TrySendError::Disconnected(value)) => {
                        wait.finish(&self.senders_waiting);
                        Poll::Ready(Err(SendError(value)))
                    }
                    Err(TrySendError::Full(value)) => {
                        *msg = Some(value);
                        Poll::Pending
                    }
                };
            }
        }
    }

    fn poll_send_zero(
        &self,
        zero: &Zero<T>,
        msg: &mut Option<T>,
        wait: &mut Wait<T>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), SendError<T>>> {
        if let Wait::Hook(hook) = wait {
            let mut locked = zero.lock();
            return match locked.state_of(hook) {
                zero::WAITING => {
                    locked.set_waker(hook, cx.waker());
                    Poll::Pending
                }
                zero::DONE => {
                    drop(locked);
                    *wait = Wait::Idle;
                    Poll::Ready(Ok(()))
                }
                _ => {
                    let value = locked
                        .take_msg(hook)
                        .expect("an unsent message is in its hook");
                    drop(locked);
                    *wait = Wait::Idle;
                    Poll::Ready(Err(SendError(value)))
                }
            };
        }
        let value = msg.take().expect("a send future polled after it completed");
        match zero.lock().try_send(value) {
            (SendAttempt::Sent, _) => Poll::Ready(Ok(())),
            (SendAttempt::Disconnected(value), _) => Poll::Ready(Err(SendError(value))),
            (SendAttempt::NoReceiver(value), locked) => {
                let locked = locked.expect("still locked");
                *wait = Wait::Hook(locked.queue_sender(value, cx.waker().clone()));
                self.receivers_waiting.notify_observers();
                Poll::Pending
            }
        }
    }

    /// Ends an async operation that did not complete (its future was dropped).
    pub(crate) fn abandon_recv(&self, wait: &mut Wait<T>) {
        self.abandon(wait, &self.receivers_waiting);
    }

    pub(crate) fn abandon_send(&self, wait: &mut Wait<T>) {
        self.abandon(wait, &self.senders_waiting);
    }

    fn abandon(&self, wait: &mut Wait<T>, list: &WaitList) {
        match std::mem::replace(wait, Wait::Idle) {
            Wait::Idle => {}
            Wait::Listed(key) | Wait::Registered(key) => {
                if !list.unregister(key) {
                    // Notified but never retried: hand the notification on.
                    list.notify_one();
                }
            }
            Wait::Hook(hook) => {
                let Flavor::Zero(zero) = &self.flavor else {
                    unreachable!("hooks belong to zero-capacity channels")
                };
                let mut locked = zero.lock();
                match locked.state_of(&hook) {
                    zero::WAITING => locked.withdraw(&hook),
                    zero::DONE => {
                        // A receiver's message arrived but nobody takes it: it goes with
                        // the hook (a rendezvous already happened).
                    }
                    _ => {}
                }
                // The message, if any, is dropped with the hook.
                let msg = locked.take_msg(&hook);
                drop(locked);
                drop(msg);
            }
        }
    }
}

/// The registration of an async operation between polls.
pub(crate) enum Wait<T> {
    /// Not registered.
    Idle,
    /// Registered in a [`WaitList`].
    Listed(Key),
    /// Registered in a [`WaitList`] by the current poll (a transient state).
    Registered(Key),
    /// Queued as a hook of a zero-capacity channel.
    Hook(Arc<Hook<T>>),
}

impl<T> Wait<T> {
    /// The operation completed: drop a registration (a notification that reached it was
    /// for the progress just consumed).
    fn finish(&mut self, list: &WaitList) {
        if let Wait::Listed(key) | Wait::Registered(key) = std::mem::replace(self, Wait::Idle) {
            list.unregister(key);
        }
    }

    /// The operation must wait: register `waker` (or keep the registration up to date).
    /// Returns false if the caller must retry first: it just registered (then
    /// [`just_registered`](Self::just_registered) holds), or it was notified since the
    /// last poll.
    fn keep_waiting(&mut self, list: &WaitList, waker: &Waker) -> bool {
        match self {
            Wait::Listed(key) | Wait::Registered(key) => {
                if list.update(*key, waker) {
                    *self = Wait::Listed(*key);
                    true
                } else {
                    *self = Wait::Idle;
                    false
                }
            }
            _ => {
                *self = Wait::Registered(list.register(waker.clone(), false));
                false
            }
        }
    }

    /// Whether the last [`keep_waiting`](Self::keep_waiting) registered anew (the
    /// registration then holds the current waker: no update is needed before waiting).
    fn just_registered(&mut self) -> bool {
        match *self {
            Wait::Registered(key) => {
                *self = Wait::Listed(key);
                true
            }
            _ => false,
        }
    }
}
