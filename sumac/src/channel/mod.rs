//! Channels for threads, pool workers and async tasks alike, with crossbeam-channel's
//! names and semantics (so code switches by changing the import), plus async ends.
//!
//! - [`bounded`]`(cap)`: at most `cap` messages wait; `bounded(0)` is a rendezvous, where
//!   a send waits for a receive.
//! - [`unbounded`]: sends never wait.
//! - [`oneshot()`]: one message, one sender, one receiver (also a future).
//!
//! [`Sender`] and [`Receiver`] are `Clone` (many producers, many consumers), `Send` and
//! `Sync`. The channel disconnects when every sender or every receiver is gone: receives
//! then drain what is left and report [`RecvError`]; sends fail with the message.
//!
//! **Blocking on a pool worker does not block the worker.** While `recv`, `send`,
//! [`Select::select`] or a oneshot waits on a worker of a sumac pool, that worker runs
//! its pool's other jobs, so a one-thread pool whose scope spawns a producer and a
//! consumer finishes (Rayon #835). Each wait returns only once its own condition holds,
//! so a job that waits for something only a job *below* it on the same worker's stack
//! can provide still deadlocks, as nested `join`s do; async tasks ([`crate::spawn_future`])
//! suspend instead of waiting on the stack, and never do.
//!
//! **Async:** [`Sender::send_async`] and [`Receiver::recv_async`] are futures on the same
//! channel, so one end can be a thread and the other a task; [`Receiver::into_stream`]
//! gives a `futures_core::Stream`.
//!
//! **Cost:** an uncontended send or receive on a buffered channel is a lock-free queue
//! operation plus one load of the other side's waiting count; nothing is locked unless
//! someone waits, and a bounded channel allocates nothing per message. A blocked thread
//! spins and yields briefly before it parks.
//!
//! ```
//! use sumac::channel;
//!
//! let (sender, receiver) = channel::unbounded();
//! let pool = sumac::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
//! let total = pool.scope(|s| {
//!     s.spawn(move |_| {
//!         for i in 0..100 {
//!             sender.send(i).unwrap();
//!         }
//!     });
//!     // Runs on the pool's only worker: while it waits for a message, it runs the
//!     // producer. (With `bounded(4)` the producer, run on top of this wait, would
//!     // itself wait for room that only this frame below it makes: a deadlock. Async
//!     // tasks have no such limit.)
//!     receiver.iter().sum::<i32>()
//! });
//! assert_eq!(total, 4950);
//! ```

mod chan;
mod error;
#[cfg(all(loom, test))]
mod loom_models;
mod oneshot;
mod queue;
mod select;
pub(crate) mod waiters;
mod zero;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use chan::{Chan, Wait};

pub use error::{
    RecvError, RecvTimeoutError, SelectTimeoutError, SendError, SendTimeoutError, TryRecvError,
    TrySelectError, TrySendError,
};
pub use oneshot::{oneshot, OneshotReceiver, OneshotSender};
pub use select::{Select, SelectedOperation};

/// A channel of capacity `cap`: sends wait while `cap` messages are queued. With
/// `cap == 0`, each send waits for a receive (a rendezvous).
///
/// The queue's slots are allocated here, once.
///
/// ```
/// let (sender, receiver) = sumac::channel::bounded(1);
/// sender.send(1).unwrap();
/// assert!(sender.try_send(2).unwrap_err().is_full());
/// assert_eq!(receiver.recv(), Ok(1));
/// ```
///
/// A rendezvous:
///
/// ```
/// let (sender, receiver) = sumac::channel::bounded(0);
/// assert!(sender.try_send(1).is_err()); // nobody is receiving
/// std::thread::scope(|s| {
///     s.spawn(|| sender.send(7).unwrap());
///     assert_eq!(receiver.recv(), Ok(7));
/// });
/// ```
pub fn bounded<T>(cap: usize) -> (Sender<T>, Receiver<T>) {
    let chan = Chan::new(Some(cap));
    (
        Sender {
            chan: Arc::clone(&chan),
        },
        Receiver { chan },
    )
}

/// A channel without a capacity limit: sends never wait.
///
/// ```
/// let (sender, receiver) = sumac::channel::unbounded();
/// for i in 0..1000 {
///     sender.send(i).unwrap();
/// }
/// drop(sender);
/// assert_eq!(receiver.iter().count(), 1000);
/// ```
pub fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
    let chan = Chan::new(None);
    (
        Sender {
            chan: Arc::clone(&chan),
        },
        Receiver { chan },
    )
}

/// The sending end of a channel; clone it for more producers.
pub struct Sender<T> {
    chan: Arc<Chan<T>>,
}

/// The receiving end of a channel; clone it for more consumers (each message goes to
/// one of them).
pub struct Receiver<T> {
    chan: Arc<Chan<T>>,
}

fn deadline_after(timeout: Duration) -> Option<Instant> {
    // A timeout too long to represent waits forever.
    Instant::now().checked_add(timeout)
}

impl<T> Sender<T> {
    /// Sends `msg`, waiting while the channel is full (on a pool worker, running the
    /// pool's jobs meanwhile). Fails, handing the message back, if every receiver is gone.
    ///
    /// ```
    /// let (sender, receiver) = sumac::channel::unbounded();
    /// sender.send(1).unwrap();
    /// drop(receiver);
    /// assert_eq!(sender.send(2), Err(sumac::channel::SendError(2)));
    /// ```
    pub fn send(&self, msg: T) -> Result<(), SendError<T>> {
        self.chan.send(msg, None).map_err(|error| match error {
            SendTimeoutError::Disconnected(msg) | SendTimeoutError::Timeout(msg) => SendError(msg),
        })
    }

    /// Sends `msg` if that needs no waiting.
    pub fn try_send(&self, msg: T) -> Result<(), TrySendError<T>> {
        self.chan.try_send(msg)
    }

    /// [`send`](Self::send), giving up after `timeout`.
    ///
    /// ```
    /// use std::time::Duration;
    /// let (sender, _receiver) = sumac::channel::bounded(0);
    /// let error = sender.send_timeout(5, Duration::from_millis(10)).unwrap_err();
    /// assert!(error.is_timeout());
    /// ```
    pub fn send_timeout(&self, msg: T, timeout: Duration) -> Result<(), SendTimeoutError<T>> {
        self.chan.send(msg, deadline_after(timeout))
    }

    /// [`send`](Self::send), giving up at `deadline`.
    pub fn send_deadline(&self, msg: T, deadline: Instant) -> Result<(), SendTimeoutError<T>> {
        self.chan.send(msg, Some(deadline))
    }

    /// A future that sends `msg`, suspending while the channel is full.
    ///
    /// ```
    /// let (sender, receiver) = sumac::channel::bounded(1);
    /// let task = sumac::spawn_future(async move {
    ///     for i in 0..10 {
    ///         sender.send_async(i).await.unwrap();
    ///     }
    /// });
    /// let received: Vec<i32> = receiver.iter().collect();
    /// task.join();
    /// assert_eq!(received, (0..10).collect::<Vec<_>>());
    /// ```
    pub fn send_async(&self, msg: T) -> SendFuture<'_, T> {
        SendFuture {
            chan: &self.chan,
            msg: Some(msg),
            wait: Wait::Idle,
        }
    }

    /// Whether no message is queued (always true for a zero-capacity channel).
    pub fn is_empty(&self) -> bool {
        self.chan.is_empty()
    }

    /// Whether a send would wait (always true for a zero-capacity channel).
    pub fn is_full(&self) -> bool {
        self.chan.is_full()
    }

    /// How many messages are queued.
    pub fn len(&self) -> usize {
        self.chan.len()
    }

    /// The capacity: `None` for an unbounded channel.
    pub fn capacity(&self) -> Option<usize> {
        self.chan.capacity()
    }

    /// Whether both ends belong to the same channel.
    pub fn same_channel(&self, other: &Sender<T>) -> bool {
        Arc::ptr_eq(&self.chan, &other.chan)
    }
}

impl<T> Receiver<T> {
    /// Receives a message, waiting while the channel is empty (on a pool worker, running
    /// the pool's jobs meanwhile). Fails once the channel is empty and every sender gone.
    ///
    /// ```
    /// let (sender, receiver) = sumac::channel::unbounded();
    /// sender.send(1).unwrap();
    /// drop(sender);
    /// assert_eq!(receiver.recv(), Ok(1));
    /// assert_eq!(receiver.recv(), Err(sumac::channel::RecvError));
    /// ```
    pub fn recv(&self) -> Result<T, RecvError> {
        self.chan.recv(None).map_err(|_| RecvError)
    }

    /// Receives a message if one is waiting.
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        self.chan.try_recv()
    }

    /// [`recv`](Self::recv), giving up after `timeout`.
    ///
    /// ```
    /// use std::time::Duration;
    /// let (_sender, receiver) = sumac::channel::unbounded::<i32>();
    /// let error = receiver.recv_timeout(Duration::from_millis(10)).unwrap_err();
    /// assert!(error.is_timeout());
    /// ```
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.chan.recv(deadline_after(timeout))
    }

    /// [`recv`](Self::recv), giving up at `deadline`.
    pub fn recv_deadline(&self, deadline: Instant) -> Result<T, RecvTimeoutError> {
        self.chan.recv(Some(deadline))
    }

    /// A future that receives a message, suspending while the channel is empty.
    ///
    /// ```
    /// let (sender, receiver) = sumac::channel::unbounded();
    /// let task = sumac::spawn_future(async move { receiver.recv_async().await.unwrap() * 2 });
    /// sender.send(21).unwrap();
    /// assert_eq!(task.join(), 42);
    /// ```
    pub fn recv_async(&self) -> RecvFuture<'_, T> {
        RecvFuture {
            chan: &self.chan,
            wait: Wait::Idle,
        }
    }

    /// This receiver as a `futures_core::Stream` of the messages, ending when the
    /// channel is empty and disconnected.
    pub fn into_stream(self) -> RecvStream<T> {
        RecvStream {
            receiver: self,
            wait: Wait::Idle,
        }
    }

    /// A blocking iterator over the messages, ending when the channel is empty and
    /// disconnected.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter { receiver: self }
    }

    /// An iterator over the messages waiting now.
    pub fn try_iter(&self) -> TryIter<'_, T> {
        TryIter { receiver: self }
    }

    /// Whether no message is queued (always true for a zero-capacity channel).
    pub fn is_empty(&self) -> bool {
        self.chan.is_empty()
    }

    /// Whether a send would wait (always true for a zero-capacity channel).
    pub fn is_full(&self) -> bool {
        self.chan.is_full()
    }

    /// How many messages are queued.
    pub fn len(&self) -> usize {
        self.chan.len()
    }

    /// The capacity: `None` for an unbounded channel.
    pub fn capacity(&self) -> Option<usize> {
        self.chan.capacity()
    }

    /// Whether both ends belong to the same channel.
    pub fn same_channel(&self, other: &Receiver<T>) -> bool {
        Arc::ptr_eq(&self.chan, &other.chan)
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.chan.add_sender();
        Sender {
            chan: Arc::clone(&self.chan),
        }
    }
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Self {
        self.chan.add_receiver();
        Receiver {
            chan: Arc::clone(&self.chan),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.chan.drop_sender();
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.chan.drop_receiver();
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Sender { .. }")
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Receiver { .. }")
    }
}

/// The future of [`Sender::send_async`]. Dropping it before it completes withdraws the
/// send (the message is dropped with it).
#[must_use = "futures do nothing unless awaited"]
pub struct SendFuture<'a, T> {
    chan: &'a Chan<T>,
    msg: Option<T>,
    wait: Wait<T>,
}

// The message is never pinned: it is moved in and out freely.
impl<T> Unpin for SendFuture<'_, T> {}

impl<T> Future for SendFuture<'_, T> {
    type Output = Result<(), SendError<T>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        this.chan.poll_send(&mut this.msg, &mut this.wait, cx)
    }
}

impl<T> Drop for SendFuture<'_, T> {
    fn drop(&mut self) {
        self.chan.abandon_send(&mut self.wait);
    }
}

impl<T> fmt::Debug for SendFuture<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("SendFuture { .. }")
    }
}

/// The future of [`Receiver::recv_async`]. Dropping it before it completes withdraws the
/// receive; no message is lost.
#[must_use = "futures do nothing unless awaited"]
pub struct RecvFuture<'a, T> {
    chan: &'a Chan<T>,
    wait: Wait<T>,
}

impl<T> Unpin for RecvFuture<'_, T> {}

impl<T> Future for RecvFuture<'_, T> {
    type Output = Result<T, RecvError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        this.chan.poll_recv(&mut this.wait, cx)
    }
}

impl<T> Drop for RecvFuture<'_, T> {
    fn drop(&mut self) {
        self.chan.abandon_recv(&mut self.wait);
    }
}

impl<T> fmt::Debug for RecvFuture<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("RecvFuture { .. }")
    }
}

/// A receiver as a `futures_core::Stream` (see [`Receiver::into_stream`]).
pub struct RecvStream<T> {
    receiver: Receiver<T>,
    wait: Wait<T>,
}

impl<T> Unpin for RecvStream<T> {}

impl<T> futures_core::Stream for RecvStream<T> {
    type Item = T;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let this = self.get_mut();
        this.receiver
            .chan
            .poll_recv(&mut this.wait, cx)
            .map(Result::ok)
    }
}

impl<T> Drop for RecvStream<T> {
    fn drop(&mut self) {
        self.receiver.chan.abandon_recv(&mut self.wait);
    }
}

impl<T> fmt::Debug for RecvStream<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("RecvStream { .. }")
    }
}

/// A blocking iterator over a receiver's messages ([`Receiver::iter`]).
pub struct Iter<'a, T> {
    receiver: &'a Receiver<T>,
}

impl<T> Iterator for Iter<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.receiver.recv().ok()
    }
}

impl<T> std::iter::FusedIterator for Iter<'_, T> {}

impl<T> fmt::Debug for Iter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Iter { .. }")
    }
}

/// An iterator over the messages waiting now ([`Receiver::try_iter`]).
pub struct TryIter<'a, T> {
    receiver: &'a Receiver<T>,
}

impl<T> Iterator for TryIter<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.receiver.try_recv().ok()
    }
}

impl<T> fmt::Debug for TryIter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("TryIter { .. }")
    }
}

/// A blocking iterator owning its receiver.
pub struct IntoIter<T> {
    receiver: Receiver<T>,
}

impl<T> Iterator for IntoIter<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.receiver.recv().ok()
    }
}

impl<T> std::iter::FusedIterator for IntoIter<T> {}

impl<T> fmt::Debug for IntoIter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("IntoIter { .. }")
    }
}

impl<'a, T> IntoIterator for &'a Receiver<T> {
    type Item = T;
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<T> IntoIterator for Receiver<T> {
    type Item = T;
    type IntoIter = IntoIter<T>;

    fn into_iter(self) -> IntoIter<T> {
        IntoIter { receiver: self }
    }
}

impl<T> Receiver<T> {
    pub(crate) fn chan(&self) -> &Chan<T> {
        &self.chan
    }
}
