//! `sumac::channel`: crossbeam-channel's semantics (disconnection, timeouts, zero-capacity
//! hand-over, drops, exactly-once delivery), async ends, `Select`, oneshots, and waiting
//! on pool workers (Rayon #835).
use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::{finishes, DropCounter};
use proptest::prelude::*;
use sumac::channel::{
    bounded, oneshot, unbounded, Receiver, RecvError, RecvTimeoutError, Select, SendError,
    SendTimeoutError, Sender, TryRecvError, TrySendError,
};

/// The capacities every semantic test runs with (`None` = unbounded).
const CAPACITIES: [Option<usize>; 4] = [None, Some(0), Some(1), Some(3)];

fn channel<T>(capacity: Option<usize>) -> (Sender<T>, Receiver<T>) {
    match capacity {
        None => unbounded(),
        Some(cap) => bounded(cap),
    }
}

const SHORT: Duration = Duration::from_millis(20);

// ------------------------------------------------------------------ basics

#[test]
fn a_message_sent_is_received_on_every_capacity() {
    for capacity in CAPACITIES {
        let (sender, receiver) = channel(capacity);
        thread::scope(|s| {
            s.spawn(|| sender.send(7).unwrap());
            assert_eq!(receiver.recv(), Ok(7), "capacity {capacity:?}");
        });
    }
}

#[test]
fn messages_arrive_in_the_order_one_sender_sent_them() {
    for capacity in CAPACITIES {
        let (sender, receiver) = channel(capacity);
        thread::scope(|s| {
            s.spawn(move || {
                for i in 0..1000 {
                    sender.send(i).unwrap();
                }
            });
            let received: Vec<i32> = receiver.iter().collect();
            assert_eq!(received, (0..1000).collect::<Vec<_>>(), "{capacity:?}");
        });
    }
}

#[test]
fn len_capacity_empty_and_full_match_crossbeam() {
    let (sender, receiver) = bounded(2);
    assert_eq!(sender.capacity(), Some(2));
    assert!(sender.is_empty() && !sender.is_full());
    sender.send(1).unwrap();
    sender.send(2).unwrap();
    assert_eq!(receiver.len(), 2);
    assert!(receiver.is_full() && !receiver.is_empty());

    let (sender, receiver) = bounded::<i32>(0);
    assert_eq!(receiver.capacity(), Some(0));
    assert!(sender.is_empty() && sender.is_full());
    assert_eq!(sender.len(), 0);

    let (sender, receiver) = unbounded();
    assert_eq!(sender.capacity(), None);
    for i in 0..100 {
        sender.send(i).unwrap();
    }
    assert_eq!(receiver.len(), 100);
    assert!(!receiver.is_full());
    assert!(sender.same_channel(&sender.clone()));
    assert!(receiver.same_channel(&receiver.clone()));
}

#[test]
fn try_send_reports_full_and_disconnected() {
    let (sender, receiver) = bounded(1);
    assert_eq!(sender.try_send(1), Ok(()));
    assert_eq!(sender.try_send(2), Err(TrySendError::Full(2)));
    drop(receiver);
    assert_eq!(sender.try_send(3), Err(TrySendError::Disconnected(3)));

    let (sender, receiver) = bounded(0);
    assert_eq!(sender.try_send(1), Err(TrySendError::Full(1)));
    drop(receiver);
    assert_eq!(sender.try_send(1), Err(TrySendError::Disconnected(1)));
}

#[test]
fn try_recv_reports_empty_then_disconnected() {
    for capacity in CAPACITIES {
        let (sender, receiver) = channel::<i32>(capacity);
        assert_eq!(receiver.try_recv(), Err(TryRecvError::Empty));
        drop(sender);
        assert_eq!(receiver.try_recv(), Err(TryRecvError::Disconnected));
    }
}

// ------------------------------------------------------------------ disconnection

#[test]
fn a_dropped_sender_disconnects_the_receiver_after_the_queued_messages() {
    for capacity in [None, Some(1), Some(3)] {
        let (sender, receiver) = channel(capacity);
        sender.send(1).unwrap();
        let second = sender.clone();
        drop(sender);
        assert_eq!(receiver.try_recv(), Ok(1));
        assert_eq!(receiver.try_recv(), Err(TryRecvError::Empty));
        drop(second);
        assert_eq!(receiver.recv(), Err(RecvError));
        assert_eq!(receiver.iter().count(), 0);
    }
}

#[test]
fn a_dropped_receiver_disconnects_the_sender_which_gets_its_message_back() {
    for capacity in CAPACITIES {
        let (sender, receiver) = channel(capacity);
        let second = receiver.clone();
        drop(receiver);
        if capacity != Some(0) {
            assert_eq!(sender.send(1), Ok(()), "one receiver is still there");
        }
        drop(second);
        assert_eq!(sender.send(2), Err(SendError(2)));
        assert_eq!(
            sender.send_timeout(3, SHORT),
            Err(SendTimeoutError::Disconnected(3))
        );
    }
}

#[test]
fn a_receiver_blocked_on_an_empty_channel_wakes_when_the_last_sender_goes() {
    for capacity in CAPACITIES {
        let (sender, receiver) = channel::<i32>(capacity);
        thread::scope(|s| {
            s.spawn(move || {
                thread::sleep(SHORT);
                drop(sender);
            });
            assert_eq!(receiver.recv(), Err(RecvError), "{capacity:?}");
        });
    }
}

#[test]
fn a_sender_blocked_on_a_full_channel_wakes_when_the_last_receiver_goes() {
    for capacity in [Some(0), Some(1)] {
        let (sender, receiver) = channel(capacity);
        if capacity == Some(1) {
            sender.send(0).unwrap();
        }
        thread::scope(|s| {
            s.spawn(move || {
                thread::sleep(SHORT);
                drop(receiver);
            });
            assert_eq!(sender.send(1), Err(SendError(1)), "{capacity:?}");
        });
    }
}

// ------------------------------------------------------------------ timeouts

#[test]
fn recv_timeout_times_out_on_an_empty_channel_and_still_receives_later() {
    for capacity in CAPACITIES {
        let (sender, receiver) = channel(capacity);
        let start = Instant::now();
        assert_eq!(receiver.recv_timeout(SHORT), Err(RecvTimeoutError::Timeout));
        assert!(start.elapsed() >= SHORT);
        thread::scope(|s| {
            s.spawn(|| {
                thread::sleep(SHORT);
                sender.send(5).unwrap();
            });
            assert_eq!(receiver.recv_timeout(Duration::from_secs(60)), Ok(5));
        });
    }
}

#[test]
fn send_timeout_times_out_on_a_full_channel_and_keeps_the_message() {
    for capacity in [Some(0), Some(1)] {
        let (sender, receiver) = channel(capacity);
        if capacity == Some(1) {
            sender.send(0).unwrap();
        }
        assert_eq!(
            sender.send_timeout(9, SHORT),
            Err(SendTimeoutError::Timeout(9))
        );
        // A later receive does not see the withdrawn message.
        if capacity == Some(1) {
            assert_eq!(receiver.try_recv(), Ok(0));
        }
        assert_eq!(receiver.try_recv(), Err(TryRecvError::Empty));
    }
}

#[test]
fn a_huge_timeout_waits_like_a_plain_recv() {
    let (sender, receiver) = unbounded();
    thread::scope(|s| {
        s.spawn(|| {
            thread::sleep(SHORT);
            sender.send(1).unwrap();
        });
        assert_eq!(receiver.recv_timeout(Duration::MAX), Ok(1));
    });
}

// ------------------------------------------------------------------ zero capacity

#[test]
fn a_zero_capacity_send_waits_for_a_receiver_and_hands_over_directly() {
    let (sender, receiver) = bounded(0);
    let sent = std::sync::atomic::AtomicBool::new(false);
    thread::scope(|s| {
        s.spawn(|| {
            sender.send(1).unwrap();
            sent.store(true, Ordering::SeqCst);
        });
        thread::sleep(SHORT);
        // Nobody has received: the send cannot have returned, whatever the timing.
        assert!(!sent.load(Ordering::SeqCst));
        // The sender waits: a try_recv takes its message.
        let start = Instant::now();
        loop {
            match receiver.try_recv() {
                Ok(v) => break assert_eq!(v, 1),
                Err(TryRecvError::Empty) => {
                    assert!(start.elapsed() < Duration::from_secs(60), "hung");
                    thread::yield_now();
                }
                Err(e) => panic!("{e:?}"),
            }
        }
    });
    assert!(sent.load(Ordering::SeqCst));
    assert_eq!(receiver.try_recv(), Err(TryRecvError::Empty));
}

#[test]
fn a_zero_capacity_try_send_succeeds_only_while_a_receiver_waits() {
    let (sender, receiver) = bounded(0);
    thread::scope(|s| {
        let waiting = s.spawn(|| receiver.recv());
        let start = Instant::now();
        // Keep trying until the receiver is waiting.
        loop {
            match sender.try_send(3) {
                Ok(()) => break,
                Err(TrySendError::Full(_)) => {
                    assert!(start.elapsed() < Duration::from_secs(60), "hung");
                    thread::yield_now();
                }
                Err(e) => panic!("{e:?}"),
            }
        }
        assert_eq!(waiting.join().unwrap(), Ok(3));
    });
}

// ------------------------------------------------------------------ drops

#[test]
fn unreceived_messages_are_dropped_with_the_last_receiver_exactly_once() {
    for capacity in [None, Some(10)] {
        let counter = DropCounter::new();
        let (sender, receiver) = channel(capacity);
        for _ in 0..10 {
            sender.send(counter.token()).unwrap();
        }
        drop(receiver.recv().unwrap());
        assert_eq!(counter.dropped(), 1);
        drop(receiver);
        assert_eq!(counter.dropped(), 10, "dropped with the last receiver");
        // A send after disconnection hands the message back: dropped here, once.
        drop(sender.send(counter.token()));
        drop(sender);
        assert_eq!(counter.dropped(), counter.created());
    }
}

#[test]
fn messages_left_when_everything_is_dropped_are_dropped_once() {
    for capacity in [None, Some(5)] {
        let counter = DropCounter::new();
        let (sender, receiver) = channel(capacity);
        for _ in 0..5 {
            sender.send(counter.token()).unwrap();
        }
        drop(sender);
        drop(receiver);
        assert_eq!(counter.dropped(), 5);
    }
}

#[test]
fn a_timed_out_zero_capacity_send_drops_nothing_and_returns_its_message() {
    let counter = DropCounter::new();
    let (sender, receiver) = bounded(0);
    let back = sender.send_timeout(counter.token(), SHORT).unwrap_err();
    assert_eq!(counter.dropped(), 0);
    drop(back);
    drop((sender, receiver));
    assert_eq!(counter.dropped(), 1);
}

// ------------------------------------------------------------------ MPMC

/// Sends `0..messages` from `producers` threads (or pool jobs) and receives them on
/// `consumers`; returns how many times each message arrived.
fn deliver(
    capacity: Option<usize>,
    producers: usize,
    consumers: usize,
    messages: usize,
    pool: Option<&sumac::ThreadPool>,
) -> Vec<usize> {
    let (sender, receiver) = channel::<usize>(capacity);
    let seen: Arc<Vec<AtomicUsize>> =
        Arc::new((0..messages).map(|_| AtomicUsize::new(0)).collect());
    let mut jobs: Vec<Box<dyn FnOnce() + Send>> = Vec::new();
    for p in 0..producers {
        let sender = sender.clone();
        jobs.push(Box::new(move || {
            for m in (p..messages).step_by(producers) {
                sender.send(m).unwrap();
            }
        }));
    }
    for _ in 0..consumers {
        let receiver = receiver.clone();
        let seen = Arc::clone(&seen);
        jobs.push(Box::new(move || {
            for m in receiver.iter() {
                seen[m].fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    drop((sender, receiver));
    match pool {
        None => thread::scope(|scope| {
            for job in jobs {
                scope.spawn(job);
            }
        }),
        Some(pool) => pool.scope(|scope| {
            for job in jobs {
                scope.spawn(move |_| job());
            }
        }),
    }
    seen.iter()
        .map(|count| count.load(Ordering::Relaxed))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Every message is delivered exactly once, whatever the capacity and the numbers
    /// of producers and consumers (threads).
    #[test]
    fn every_message_is_delivered_exactly_once_between_threads(
        capacity in prop_oneof![Just(None), (0usize..4).prop_map(Some)],
        producers in 1usize..4,
        consumers in 1usize..4,
        messages in 0usize..300,
    ) {
        let counts = finishes("mpmc", move || deliver(capacity, producers, consumers, messages, None));
        prop_assert!(counts.iter().all(|&c| c == 1), "{counts:?}");
    }
}

/// The same between jobs of a pool whose heartbeat fires every microsecond: a waiting
/// worker runs the other producers and consumers.
#[test]
fn every_message_is_delivered_exactly_once_between_pool_jobs() {
    for threads in [1, 2, 4] {
        let pool = Arc::new(common::stress_pool(threads));
        // Unbounded and large capacities only: with small ones a one-thread pool's
        // producer can wait for a consumer below it on the same stack.
        for capacity in [None, Some(2000)] {
            for (producers, consumers) in [(1, 1), (3, 2), (2, 3)] {
                let pool = Arc::clone(&pool);
                let counts = finishes("mpmc on a pool", move || {
                    deliver(capacity, producers, consumers, 2000, Some(&pool))
                });
                assert!(
                    counts.iter().all(|&c| c == 1),
                    "{threads} threads {capacity:?}"
                );
            }
        }
    }
}

// ------------------------------------------------------------------ pools (Rayon #835)

/// Rayon #835, example 2: on a one-thread pool, a scope spawns producers and its body
/// receives their results; the body's wait runs the producers.
#[test]
fn a_one_thread_scope_body_receives_from_the_jobs_it_spawned() {
    for capacity in CAPACITIES {
        let pool = sumac::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let sum = finishes("rayon #835 body", move || {
            let (sender, receiver) = channel::<usize>(capacity);
            pool.scope(|s| {
                for i in 0..10 {
                    let sender = sender.clone();
                    s.spawn(move |_| sender.send(i).unwrap());
                }
                drop(sender);
                receiver.iter().sum::<usize>()
            })
        });
        assert_eq!(sum, 45, "{capacity:?}");
    }
}

/// A worker blocked in a send runs other senders meanwhile, whose sends block above it
/// on the same stack, while the caller (a guest, running no jobs in its wait) receives:
/// each notification must go to the newest of the worker's senders (the only one able
/// to retry), never to one buried below it.
#[test]
fn nested_blocked_senders_on_one_worker_are_woken_newest_first() {
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let sum = finishes("nested senders", move || {
        let mut total = 0;
        for _ in 0..50 {
            let (sender, receiver) = channel::<usize>(Some(1));
            total += pool.scope(|s| {
                for i in 0..20 {
                    let sender = sender.clone();
                    s.spawn(move |_| sender.send(i).unwrap());
                }
                drop(sender);
                receiver.iter().sum::<usize>()
            });
        }
        total
    });
    assert_eq!(sum, 50 * 190);
}

/// A one-thread pool whose scope spawns a producer and a consumer finishes: the
/// consumer (run first) waits, and its worker runs the producer meanwhile.
#[test]
fn a_one_thread_scope_with_a_spawned_producer_and_consumer_finishes() {
    for capacity in [None, Some(1000)] {
        let pool = sumac::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let sum = finishes("rayon #835 jobs", move || {
            let (sender, receiver) = channel::<usize>(capacity);
            let total = AtomicUsize::new(0);
            pool.scope(|s| {
                s.spawn(move |_| {
                    for i in 0..1000 {
                        sender.send(i).unwrap();
                    }
                });
                s.spawn(|_| {
                    for i in receiver.iter() {
                        total.fetch_add(i, Ordering::Relaxed);
                    }
                });
            });
            total.into_inner()
        });
        assert_eq!(sum, 499_500, "{capacity:?}");
    }
}

/// With async tasks the capacity does not matter: a task that must wait suspends.
#[test]
fn a_one_thread_pool_runs_an_async_producer_and_consumer_through_a_rendezvous() {
    for capacity in CAPACITIES {
        let pool = sumac::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let sum = finishes("async #835", move || {
            let (sender, receiver) = channel::<usize>(capacity);
            let consumer = pool.spawn_future(async move {
                let mut total = 0;
                while let Ok(i) = receiver.recv_async().await {
                    total += i;
                }
                total
            });
            let producer = pool.spawn_future(async move {
                for i in 0..1000 {
                    sender.send_async(i).await.unwrap();
                }
            });
            producer.join();
            consumer.join()
        });
        assert_eq!(sum, 499_500, "{capacity:?}");
    }
}

// ------------------------------------------------------------------ async

#[test]
fn a_thread_and_a_task_talk_through_both_ends_of_every_capacity() {
    for capacity in CAPACITIES {
        let (to_task, task_in) = channel::<u32>(capacity);
        let (task_out, from_task) = channel::<u32>(capacity);
        let task = sumac::spawn_future(async move {
            while let Ok(v) = task_in.recv_async().await {
                task_out.send_async(v * 2).await.unwrap();
            }
        });
        let answers = finishes("thread and task", move || {
            (0..200)
                .map(|i| {
                    to_task.send(i).unwrap();
                    from_task.recv().unwrap()
                })
                .collect::<Vec<_>>()
        });
        assert_eq!(answers, (0..200).map(|i| i * 2).collect::<Vec<_>>());
        task.join();
    }
}

#[test]
fn a_dropped_recv_future_hands_its_wake_up_on_and_loses_no_message() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};
    let (sender, receiver) = unbounded::<i32>();
    let waker = Waker::noop();
    let mut cx = Context::from_waker(waker);
    // Two pending receives; the first is woken by the send, then dropped unpolled.
    let mut first = Box::pin(receiver.recv_async());
    let mut second = Box::pin(receiver.recv_async());
    assert!(first.as_mut().poll(&mut cx).is_pending());
    assert!(second.as_mut().poll(&mut cx).is_pending());
    sender.send(1).unwrap();
    drop(first);
    assert_eq!(second.as_mut().poll(&mut cx), Poll::Ready(Ok(1)));
}

#[test]
fn a_receiver_stream_yields_every_message_then_ends() {
    let (sender, receiver) = bounded(2);
    let task = sumac::spawn_future(async move {
        let mut stream = receiver.into_stream();
        let mut got = Vec::new();
        while let Some(v) = std::future::poll_fn(|cx| {
            futures_core::Stream::poll_next(std::pin::Pin::new(&mut stream), cx)
        })
        .await
        {
            got.push(v);
        }
        got
    });
    for i in 0..50 {
        sender.send(i).unwrap();
    }
    drop(sender);
    assert_eq!(task.join(), (0..50).collect::<Vec<_>>());
}

#[test]
fn a_dropped_zero_capacity_send_future_withdraws_its_message() {
    use std::future::Future;
    use std::task::{Context, Waker};
    let counter = DropCounter::new();
    let (sender, receiver) = bounded(0);
    let mut cx = Context::from_waker(Waker::noop());
    let mut send = Box::pin(sender.send_async(counter.token()));
    assert!(send.as_mut().poll(&mut cx).is_pending());
    drop(send);
    assert_eq!(counter.dropped(), 1);
    assert_eq!(receiver.try_recv().err(), Some(TryRecvError::Empty));
}

// ------------------------------------------------------------------ select

#[test]
fn select_picks_a_ready_receiver_and_waits_for_one() {
    let (s1, r1) = unbounded::<i32>();
    let (s2, r2) = bounded::<i32>(0);
    let mut select = Select::new();
    let i1 = select.recv(&r1);
    let i2 = select.recv(&r2);
    assert!(select.try_select().is_err());
    assert!(select.select_timeout(SHORT).is_err());
    thread::scope(|s| {
        s.spawn(|| {
            thread::sleep(SHORT);
            s2.send(2).unwrap();
        });
        let operation = select.select();
        assert_eq!(operation.index(), i2);
        assert_eq!(operation.recv(&r2), Ok(2));
    });
    s1.send(1).unwrap();
    let operation = select.select();
    assert_eq!(operation.index(), i1);
    assert_eq!(operation.recv(&r1), Ok(1));
    drop(s1);
    // A disconnected receiver is ready (its receive fails).
    let operation = select.select();
    assert_eq!(operation.index(), i1);
    assert_eq!(operation.recv(&r1), Err(RecvError));
}

#[test]
#[should_panic(expected = "passed a receiver that wasn't selected")]
fn a_selected_operation_completed_on_another_receiver_panics() {
    let (s1, r1) = unbounded::<i32>();
    let (_s2, r2) = unbounded::<i32>();
    s1.send(1).unwrap();
    let mut select = Select::new();
    select.recv(&r1);
    select.recv(&r2);
    let operation = select.select();
    let _ = operation.recv(&r2);
}

#[test]
fn select_receives_every_message_of_several_senders() {
    for capacity in CAPACITIES {
        let channels: Vec<_> = (0..4).map(|_| channel::<usize>(capacity)).collect();
        let total = finishes("select_rx", move || {
            thread::scope(|s| {
                for (sender, _) in &channels {
                    let sender = sender.clone();
                    s.spawn(move || {
                        for i in 0..500 {
                            sender.send(i).unwrap();
                        }
                    });
                }
                let mut total = 0;
                for _ in 0..2000 {
                    let mut select = Select::new();
                    for (_, receiver) in &channels {
                        select.recv(receiver);
                    }
                    let operation = select.select();
                    let index = operation.index();
                    total += operation.recv(&channels[index].1).unwrap();
                }
                total
            })
        });
        assert_eq!(total, 4 * 124_750, "{capacity:?}");
    }
}

// ------------------------------------------------------------------ oneshot

#[test]
fn a_oneshot_delivers_its_message_to_a_thread_and_to_a_task() {
    let (sender, receiver) = oneshot();
    thread::scope(|s| {
        s.spawn(|| sender.send(1).unwrap());
        assert_eq!(receiver.recv(), Ok(1));
    });
    let (sender, receiver) = oneshot();
    let task = sumac::spawn_future(receiver);
    sender.send(String::from("x")).unwrap();
    assert_eq!(task.join(), Ok(String::from("x")));
}

#[test]
fn a_oneshot_disconnects_when_either_end_goes() {
    let (sender, receiver) = oneshot::<i32>();
    drop(sender);
    assert_eq!(receiver.recv(), Err(RecvError));
    let (sender, receiver) = oneshot::<i32>();
    assert!(!sender.is_closed());
    drop(receiver);
    assert!(sender.is_closed());
    assert_eq!(sender.send(3), Err(SendError(3)));
    let (sender, mut receiver) = oneshot::<i32>();
    assert_eq!(receiver.try_recv(), Err(TryRecvError::Empty));
    assert_eq!(receiver.recv_timeout(SHORT), Err(RecvTimeoutError::Timeout));
    thread::scope(|s| {
        s.spawn(|| {
            thread::sleep(SHORT);
            drop(sender);
        });
        assert_eq!(
            receiver.recv_timeout(Duration::from_secs(60)),
            Err(RecvTimeoutError::Disconnected)
        );
    });
}

#[test]
fn a_oneshot_message_nobody_received_is_dropped_once() {
    let counter = DropCounter::new();
    let (sender, receiver) = oneshot();
    sender.send(counter.token()).unwrap();
    drop(receiver);
    assert_eq!(counter.dropped(), 1);
    let (sender, receiver) = oneshot();
    drop(receiver);
    drop(sender.send(counter.token()));
    assert_eq!(counter.dropped(), 2);
}

#[test]
fn a_oneshot_received_on_a_worker_runs_the_job_that_sends_it() {
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let got = finishes("oneshot on one worker", move || {
        pool.install(|| {
            let (sender, receiver) = oneshot();
            sumac::spawn(move || sender.send(9).unwrap());
            receiver.recv()
        })
    });
    assert_eq!(got, Ok(9));
}

// ------------------------------------------------------------------ stress

/// Producers and consumers as jobs and tasks on pools whose heartbeat fires every
/// microsecond, with every capacity; counts must balance.
#[test]
fn stress_mixed_jobs_and_tasks_on_one_microsecond_heartbeats() {
    for threads in [2, 4] {
        let pool = Arc::new(common::stress_pool(threads));
        for capacity in CAPACITIES {
            let pool = Arc::clone(&pool);
            let total = finishes("stress", move || {
                let (sender, receiver) = channel::<usize>(capacity);
                let sum = Arc::new(AtomicUsize::new(0));
                let tasks: Vec<_> = (0..2)
                    .map(|_| {
                        let receiver = receiver.clone();
                        let sum = Arc::clone(&sum);
                        pool.spawn_future(async move {
                            while let Ok(v) = receiver.recv_async().await {
                                sum.fetch_add(v, Ordering::Relaxed);
                            }
                        })
                    })
                    .collect();
                let senders: Vec<_> = (0..2)
                    .map(|p| {
                        let sender = sender.clone();
                        pool.spawn_future(async move {
                            for i in (p..2000).step_by(2) {
                                sender.send_async(i).await.unwrap();
                            }
                        })
                    })
                    .collect();
                drop(sender);
                // A thread consumer too.
                let thread_sum: usize = receiver.iter().sum();
                for task in senders.into_iter().chain(tasks) {
                    task.join();
                }
                thread_sum + sum.load(Ordering::Relaxed)
            });
            assert_eq!(total, 1_999_000, "{threads} threads {capacity:?}");
        }
    }
}
