//! `oneshot`: one message from one sender to one receiver, in one allocation and one
//! atomic state word.
//!
//! # The state machine
//! ```text
//!   EMPTY ──receiver registers its waker (CAS)──▶ WAITING ──receiver takes it back (CAS)──▶ EMPTY
//!     │ │                                           │ │
//!     │ └──────────── send (swap) ─────────────────▶ SENT ◀──── send (swap) ─┘ │
//!     └────────────── either end dropped (swap) ──▶ CLOSED ◀── drop (swap) ────┘
//! ```
//! - The value is written by the sender before its swap to `SENT` (release), and read
//!   by the receiver only after seeing `SENT` (acquire).
//! - The waker cell belongs to the receiver while the state is `EMPTY` (it writes it
//!   then moves to `WAITING`), and to whoever moves the state away from `WAITING` with a
//!   swap (the sender or a dropped sender, which then wakes it). A receiver that wants
//!   to change its waker first takes the cell back with a CAS `WAITING → EMPTY`; if that
//!   fails, the cell is no longer its to touch. Whatever is left in the cell goes with
//!   the allocation.
//! - A sender that finds `CLOSED` (the receiver is gone) takes its value back.

use std::cell::UnsafeCell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use super::error::{RecvError, RecvTimeoutError, SendError, TryRecvError};
use super::waiters::{self, ThreadSignal};
use crate::sync::AtomicU8;

const EMPTY: u8 = 0;
const WAITING: u8 = 1;
const SENT: u8 = 2;
const CLOSED: u8 = 3;

struct Inner<T> {
    state: AtomicU8,
    value: UnsafeCell<Option<T>>,
    waker: UnsafeCell<Option<Waker>>,
}

// SAFETY: the cells are handed between the two ends by the state machine above (one
// owner at a time, with release/acquire edges at every hand-over); the value moves
// between threads, so `T: Send`.
unsafe impl<T: Send> Send for Inner<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Inner<T> {}

/// A channel for exactly one message: [`OneshotSender::send`] consumes the sender, and
/// the receiver is a future (or [`OneshotReceiver::recv`] blocks).
///
/// ```
/// let (sender, receiver) = sumac::channel::oneshot();
/// let task = sumac::spawn_future(async move { receiver.await.unwrap() + 1 });
/// sender.send(41).unwrap();
/// assert_eq!(task.join(), 42);
/// ```
pub fn oneshot<T>() -> (OneshotSender<T>, OneshotReceiver<T>) {
    let inner = Arc::new(Inner {
        state: AtomicU8::new(EMPTY),
        value: UnsafeCell::new(None),
        waker: UnsafeCell::new(None),
    });
    (
        OneshotSender {
            inner: Some(Arc::clone(&inner)),
        },
        OneshotReceiver { inner, done: false },
    )
}

/// The sending end of a [`oneshot`]. Dropping it unsent disconnects the receiver.
pub struct OneshotSender<T> {
    inner: Option<Arc<Inner<T>>>,
}

/// The receiving end of a [`oneshot`]: a future of the message, or
/// [`RecvError`] if the sender was dropped unsent.
pub struct OneshotReceiver<T> {
    inner: Arc<Inner<T>>,
    /// The outcome was handed out already.
    done: bool,
}

impl<T> OneshotSender<T> {
    /// Sends the message; fails, handing it back, if the receiver is gone.
    ///
    /// ```
    /// let (sender, receiver) = sumac::channel::oneshot();
    /// drop(receiver);
    /// assert_eq!(sender.send(1), Err(sumac::channel::SendError(1)));
    /// ```
    pub fn send(mut self, msg: T) -> Result<(), SendError<T>> {
        let inner = self.inner.take().expect("a sender sends once");
        // SAFETY: only the sender writes the value, and the receiver reads it only after
        // seeing SENT, which comes after this write.
        unsafe { *inner.value.get() = Some(msg) };
        match inner.state.swap(SENT, Ordering::AcqRel) {
            WAITING => {
                // SAFETY: our swap moved the state away from WAITING: the cell is ours.
                let waker = unsafe { (*inner.waker.get()).take() };
                if let Some(waker) = waker {
                    waker.wake();
                }
                Ok(())
            }
            CLOSED => {
                // SAFETY: the receiver is gone and read nothing: the value is ours again.
                let msg = unsafe { (*inner.value.get()).take() };
                Err(SendError(msg.expect("the value was just written")))
            }
            _ => Ok(()),
        }
    }

    /// Whether the receiver is gone.
    pub fn is_closed(&self) -> bool {
        self.inner
            .as_ref()
            .is_some_and(|inner| inner.state.load(Ordering::Acquire) == CLOSED)
    }
}

impl<T> Drop for OneshotSender<T> {
    fn drop(&mut self) {
        let Some(inner) = self.inner.take() else {
            return;
        };
        if inner.state.swap(CLOSED, Ordering::AcqRel) == WAITING {
            // SAFETY: our swap moved the state away from WAITING: the cell is ours.
            let waker = unsafe { (*inner.waker.get()).take() };
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }
}

impl<T> OneshotReceiver<T> {
    /// The outcome, once the state left `EMPTY`/`WAITING` (seen with acquire ordering).
    fn finish(&mut self, state: u8) -> Result<T, RecvError> {
        self.done = true;
        if state == SENT {
            // SAFETY: SENT was published after the value was written, and the sender
            // touches the value no more.
            let msg = unsafe { (*self.inner.value.get()).take() };
            msg.ok_or(RecvError)
        } else {
            Err(RecvError)
        }
    }

    /// Receives the message if it was sent.
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        if self.done {
            return Err(TryRecvError::Disconnected);
        }
        match self.inner.state.load(Ordering::Acquire) {
            EMPTY | WAITING => Err(TryRecvError::Empty),
            state => self.finish(state).map_err(|_| TryRecvError::Disconnected),
        }
    }

    /// Registers `waker` to be woken by the sender (replacing an earlier one). Returns
    /// the final state instead if the sender already finished.
    fn register(&mut self, waker: &Waker) -> Result<(), u8> {
        let state = &self.inner.state;
        let mut current = state.load(Ordering::Acquire);
        if current == WAITING {
            // SAFETY (read below): reading the cell needs ownership; take it back first.
            match state.compare_exchange(WAITING, EMPTY, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => current = EMPTY,
                Err(actual) => return Err(actual),
            }
        }
        if current != EMPTY {
            return Err(current);
        }
        // SAFETY: while the state is EMPTY the cell belongs to the receiver (we are it).
        let cell = unsafe { &mut *self.inner.waker.get() };
        match cell {
            Some(current) if current.will_wake(waker) => {}
            _ => *cell = Some(waker.clone()),
        }
        state
            .compare_exchange(EMPTY, WAITING, Ordering::AcqRel, Ordering::Acquire)
            .map(|_| ())
    }

    /// Waits for the message (on a pool worker, running the pool's jobs meanwhile).
    ///
    /// ```
    /// let (sender, receiver) = sumac::channel::oneshot();
    /// std::thread::spawn(move || sender.send("hi").unwrap());
    /// assert_eq!(receiver.recv(), Ok("hi"));
    /// ```
    pub fn recv(mut self) -> Result<T, RecvError> {
        self.wait(None).map_err(|_| RecvError)
    }

    /// [`recv`](Self::recv), giving up after `timeout`.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.wait(Instant::now().checked_add(timeout))
    }

    fn wait(&mut self, deadline: Option<Instant>) -> Result<T, RecvTimeoutError> {
        if self.done {
            return Err(RecvTimeoutError::Disconnected);
        }
        let finished = |state: u8| state == SENT || state == CLOSED;
        let state = &self.inner.state;
        // A thread spins and yields before it registers.
        let _ =
            waiters::attempt_with_backoff(|| finished(state.load(Ordering::Acquire)).then_some(()));
        let signal = ThreadSignal::for_current_thread();
        let waker = Waker::from(Arc::clone(&signal));
        loop {
            if let Err(state) = self.register(&waker) {
                return self
                    .finish(state)
                    .map_err(|_| RecvTimeoutError::Disconnected);
            }
            let state = &self.inner.state;
            let arrived = waiters::wait_until(|| finished(state.load(Ordering::Acquire)), deadline);
            let now = state.load(Ordering::Acquire);
            if finished(now) {
                return self.finish(now).map_err(|_| RecvTimeoutError::Disconnected);
            }
            if !arrived {
                // Take the registration back (the waker goes with the allocation).
                return match state.compare_exchange(
                    WAITING,
                    EMPTY,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => Err(RecvTimeoutError::Timeout),
                    Err(state) => self
                        .finish(state)
                        .map_err(|_| RecvTimeoutError::Disconnected),
                };
            }
        }
    }

    /// Whether the sender is gone without sending.
    pub fn is_closed(&self) -> bool {
        self.inner.state.load(Ordering::Acquire) == CLOSED
    }
}

impl<T> Future for OneshotReceiver<T> {
    type Output = Result<T, RecvError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(Err(RecvError));
        }
        let state = this.inner.state.load(Ordering::Acquire);
        if state != SENT && state != CLOSED && this.register(cx.waker()).is_ok() {
            return Poll::Pending;
        }
        let state = this.inner.state.load(Ordering::Acquire);
        Poll::Ready(this.finish(state))
    }
}

impl<T> Drop for OneshotReceiver<T> {
    fn drop(&mut self) {
        if self.inner.state.swap(CLOSED, Ordering::AcqRel) == SENT {
            // SAFETY: SENT was published after the value was written; the sender is done.
            drop(unsafe { (*self.inner.value.get()).take() });
        }
    }
}

impl<T> fmt::Debug for OneshotSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("OneshotSender { .. }")
    }
}

impl<T> fmt::Debug for OneshotReceiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("OneshotReceiver { .. }")
    }
}
