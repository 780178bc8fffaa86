//! Loom models of the channels' wait/notify protocols, on the production code: the
//! channel, its wait lists, the zero-capacity hooks and the oneshot run as they are;
//! only the lock-free queues are replaced by a lock-protected stand-in (see `queue`),
//! and a blocked thread parks through `crate::park` on loom's threads.
//!
//! Async operations are driven by `crate::block_on` (the production one: a waker that
//! sets a flag and unparks through `crate::park`).
//!
//! A lost wake-up leaves a thread parked forever, which loom reports as a deadlock; a
//! wrong delivery fails an assertion.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p sumac --lib --profile release-test loom_ -- --test-threads=1`.

use std::sync::atomic::Ordering;

use loom::sync::atomic::AtomicBool;
use loom::sync::Arc;
use loom::thread;

use super::{bounded, oneshot, unbounded, RecvError, SendError};

/// Explores the interleavings of `f` with at most `bound` preemptions
/// (`LOOM_MAX_PREEMPTIONS` overrides it).
fn model(bound: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(bound);
    }
    let executions = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&executions);
    builder.check(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f();
    });
    println!(
        "{}: {} executions",
        std::thread::current().name().unwrap_or("?"),
        executions.load(std::sync::atomic::Ordering::Relaxed)
    );
}

/// Joins `thread` once it has set `finished` (its last step), yielding until then
/// instead of blocking in `join`: loom's `unpark` makes a thread blocked in `join`
/// runnable as if the joined thread had ended (it fails its own assertion then), and
/// a notifier's unpark may reach the waiter after the wait it was for returned.
fn join_finished<T>(thread: thread::JoinHandle<T>, finished: &AtomicBool) -> T {
    while !finished.load(Ordering::Acquire) {
        thread::yield_now();
    }
    thread.join().unwrap()
}

/// A receiver blocked on an empty buffered channel is woken by a send.
#[test]
fn loom_channel_blocked_recv_is_woken_by_send() {
    for capacity in [None, Some(1)] {
        model(3, move || {
            let (sender, receiver) = match capacity {
                None => unbounded::<u32>(),
                Some(cap) => bounded(cap),
            };
            // Kept alive, so that only the send's notification can wake the receiver.
            let _keep = sender.clone();
            let producer = thread::spawn(move || sender.send(7).unwrap());
            assert_eq!(receiver.recv(), Ok(7));
            producer.join().unwrap();
        });
    }
}

/// A sender blocked on a full bounded channel is woken by a receive.
#[test]
fn loom_channel_blocked_send_is_woken_by_recv() {
    model(3, || {
        let (sender, receiver) = bounded::<u32>(1);
        sender.send(1).unwrap();
        let producer = thread::spawn(move || sender.send(2).unwrap());
        let _keep = receiver.clone();
        assert_eq!(receiver.recv(), Ok(1));
        assert_eq!(receiver.recv(), Ok(2));
        producer.join().unwrap();
    });
}

/// The last sender's drop wakes a blocked receiver, which sees every message sent
/// before it.
#[test]
fn loom_channel_disconnection_wakes_a_blocked_receiver() {
    model(3, || {
        let (sender, receiver) = bounded::<u32>(1);
        let producer = thread::spawn(move || {
            sender.send(1).unwrap();
            drop(sender);
        });
        assert_eq!(receiver.recv(), Ok(1));
        assert_eq!(receiver.recv(), Err(RecvError));
        producer.join().unwrap();
    });
}

/// A rendezvous: the send and the receive meet, whichever comes first.
#[test]
fn loom_zero_capacity_hand_over() {
    model(3, || {
        let (sender, receiver) = bounded::<u32>(0);
        let producer = thread::spawn(move || sender.send(5).unwrap());
        assert_eq!(receiver.recv(), Ok(5));
        producer.join().unwrap();
    });
}

/// An async receive (the waker path a task uses) is woken by a send from a thread.
#[test]
fn loom_channel_async_recv_is_woken_by_send() {
    for capacity in [None, Some(0), Some(1)] {
        model(3, move || {
            let (sender, receiver) = match capacity {
                None => unbounded::<u32>(),
                Some(cap) => bounded(cap),
            };
            let _keep = sender.clone();
            let finished = Arc::new(AtomicBool::new(false));
            let producer = {
                let finished = Arc::clone(&finished);
                thread::spawn(move || {
                    sender.send(3).unwrap();
                    finished.store(true, Ordering::Release);
                })
            };
            let got = crate::block_on(receiver.recv_async());
            assert_eq!(got, Ok(3));
            join_finished(producer, &finished);
        });
    }
}

/// An async send on a full channel is woken by a receive from a thread.
#[test]
fn loom_channel_async_send_is_woken_by_recv() {
    model(3, || {
        let (sender, receiver) = bounded::<u32>(1);
        sender.send(1).unwrap();
        let finished = Arc::new(AtomicBool::new(false));
        let consumer = {
            let finished = Arc::clone(&finished);
            thread::spawn(move || {
                let got = (receiver.recv(), receiver.recv());
                finished.store(true, Ordering::Release);
                got
            })
        };
        crate::block_on(sender.send_async(2)).unwrap();
        drop(sender);
        assert_eq!(join_finished(consumer, &finished), (Ok(1), Ok(2)));
    });
}

/// The oneshot's state machine: a blocking and an async receiver are woken by the send,
/// or by the sender's drop; a send to a dropped receiver gets its message back.
#[test]
fn loom_oneshot_send_and_drop_wake_the_receiver() {
    model(3, || {
        let (sender, receiver) = oneshot::<u32>();
        let producer = thread::spawn(move || sender.send(9).unwrap());
        assert_eq!(receiver.recv(), Ok(9));
        producer.join().unwrap();
    });
    model(3, || {
        let (sender, receiver) = oneshot::<u32>();
        let producer = thread::spawn(move || drop(sender));
        assert_eq!(crate::block_on(receiver), Err(RecvError));
        producer.join().unwrap();
    });
    model(3, || {
        let (sender, receiver) = oneshot::<Arc<u32>>();
        let consumer = thread::spawn(move || drop(receiver));
        let value = Arc::new(1);
        match sender.send(Arc::clone(&value)) {
            Ok(()) => {}
            Err(SendError(back)) => assert!(Arc::ptr_eq(&back, &value)),
        }
        consumer.join().unwrap();
    });
}

/// Two async receivers wait at once, so one waits in the wait list's seat and the other
/// in its entries (or both retry in turn): two sends wake both, and each message is
/// received exactly once.
#[test]
fn loom_channel_seat_and_entry_receivers_each_get_a_message() {
    model(2, || {
        let (sender, receiver) = unbounded::<u32>();
        let finished = Arc::new(AtomicBool::new(false));
        let other = {
            let (receiver, finished) = (receiver.clone(), Arc::clone(&finished));
            thread::spawn(move || {
                let got = crate::block_on(receiver.recv_async());
                finished.store(true, Ordering::Release);
                got
            })
        };
        let producer = thread::spawn(move || {
            sender.send(1).unwrap();
            sender.send(2).unwrap();
        });
        let mine = crate::block_on(receiver.recv_async()).unwrap();
        let theirs = join_finished(other, &finished).unwrap();
        assert_eq!(mine + theirs, 3, "each message received once");
        producer.join().unwrap();
    });
}

/// An async receive that registered (in the seat) and is then dropped races a send: if
/// the send's notification reached it, its drop hands the notification on, so a blocked
/// receiver gets the message.
#[test]
fn loom_channel_dropped_async_recv_hands_its_notification_on() {
    use std::future::Future;
    use std::task::{Context, Waker};

    model(3, || {
        let (sender, receiver) = bounded::<u32>(1);
        // Kept alive, so that only the notification handed on can wake the receiver.
        let keep = sender.clone();
        let finished = Arc::new(AtomicBool::new(false));
        let blocked = {
            let (receiver, finished) = (receiver.clone(), Arc::clone(&finished));
            thread::spawn(move || {
                let got = receiver.recv();
                finished.store(true, Ordering::Release);
                got
            })
        };
        let producer = thread::spawn(move || sender.send(5).unwrap());
        let polled = {
            let mut recv = std::pin::pin!(receiver.recv_async());
            let mut cx = Context::from_waker(Waker::noop());
            recv.as_mut().poll(&mut cx)
        };
        producer.join().unwrap();
        drop(receiver);
        if matches!(polled, std::task::Poll::Ready(Ok(_))) {
            // The blocked receiver waits for another message: close the channel.
            drop(keep);
        }
        let theirs = join_finished(blocked, &finished);
        match polled {
            // It took the message: the blocked receiver sees the channel close.
            std::task::Poll::Ready(Ok(mine)) => {
                assert_eq!(mine, 5);
                assert!(theirs.is_err());
            }
            // Pending and dropped, or closed after the other took the message.
            _ => assert_eq!(theirs, Ok(5)),
        }
    });
}
