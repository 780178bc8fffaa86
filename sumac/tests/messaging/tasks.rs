//! Async tasks on the pool: `spawn_future`, `Task` (await, join, detach, cancel),
//! `block_on`, panics, and wake-ups under 1 µs heartbeats.
use crate::common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use common::{finishes, panic_message, DropCounter};
use sumac::channel::{bounded, oneshot, unbounded};
use sumac::prelude::*;

/// A future that is pending once (waking itself), then ready: a yield.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

#[test]
fn a_task_returns_its_output_to_join_and_to_await() {
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    assert_eq!(pool.spawn_future(async { 6 * 7 }).join(), 42);
    let outer = pool.spawn_future(async {
        let inner = sumac::spawn_future(async { String::from("inner") });
        inner.await + " and outer"
    });
    assert_eq!(outer.join(), "inner and outer");
}

#[test]
fn tasks_run_on_the_workers_of_their_pool() {
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name(|i| format!("tasks-{i}"))
        .build()
        .unwrap();
    let name = pool
        .spawn_future(async { std::thread::current().name().map(str::to_owned) })
        .join();
    assert!(name.unwrap().starts_with("tasks-"));
    // Spawned inside `install`, a task goes to that pool (its caller, taking part in
    // the pool, may run it itself while it joins it).
    let threads =
        pool.install(|| sumac::spawn_future(async { sumac::current_num_threads() }).join());
    assert_eq!(threads, 2);
    // Spawned from a worker, it runs on a worker.
    let index = pool.install(|| {
        sumac::spawn(|| ());
        let (sender, receiver) = std::sync::mpsc::channel();
        sumac::spawn(move || {
            let index = sumac::spawn_future(async { sumac::current_thread_index() }).join();
            sender.send(index).unwrap();
        });
        receiver
    });
    assert!(index.recv().unwrap().is_some());
}

#[test]
fn join_and_parallel_iterators_work_inside_a_task() {
    for threads in [1, 2, 4] {
        let pool = common::stress_pool(threads);
        let (fib, sum) = pool
            .spawn_future(async {
                let fib = common::fib(20);
                YieldOnce(false).await;
                let sum: u64 = (0..10_000u64).into_par_iter().map(|x| x * 2).sum();
                (fib, sum)
            })
            .join();
        assert_eq!(fib, common::fib_seq(20));
        assert_eq!(sum, 99_990_000);
    }
}

#[test]
fn a_yielding_task_lets_the_other_tasks_of_a_one_thread_pool_run() {
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let flag = Arc::new(AtomicBool::new(false));
    let spinner = {
        let flag = Arc::clone(&flag);
        pool.spawn_future(async move {
            while !flag.load(Ordering::SeqCst) {
                YieldOnce(false).await;
            }
        })
    };
    let setter = {
        let flag = Arc::clone(&flag);
        pool.spawn_future(async move { flag.store(true, Ordering::SeqCst) })
    };
    finishes("yielding task", move || {
        setter.join();
        spinner.join();
    });
}

/// A task woken by a worker waits in that worker's next-task slot, to run when the
/// worker's job returns; if the job runs on without forking, the heartbeat hands the
/// task to the idle worker.
#[test]
fn a_task_woken_by_a_worker_that_then_runs_long_is_run_by_the_idle_worker() {
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let (sender, receiver) = oneshot::<()>();
    let waiting = Arc::new(AtomicBool::new(false));
    let woken = Arc::new(AtomicBool::new(false));
    let waiter = {
        let (waiting, woken) = (Arc::clone(&waiting), Arc::clone(&woken));
        pool.spawn_future(async move {
            waiting.store(true, Ordering::SeqCst);
            receiver.await.unwrap();
            woken.store(true, Ordering::SeqCst);
            sumac::current_thread_index()
        })
    };
    while !waiting.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    // Let the waiter reach its await (it registers there), so that the send wakes it.
    std::thread::sleep(Duration::from_millis(20));
    let busy = pool.spawn_future(async move {
        sender.send(()).unwrap();
        // A long job that never forks: the woken task must not wait for its end.
        let start = std::time::Instant::now();
        while !woken.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(10) {
            std::hint::spin_loop();
        }
        (sumac::current_thread_index(), woken.load(Ordering::SeqCst))
    });
    let (busy_worker, woken_meanwhile) = busy.join();
    assert!(
        woken_meanwhile,
        "the woken task waited for the long job of the worker that woke it"
    );
    assert_ne!(waiter.join(), busy_worker);
}

#[test]
fn dropping_a_task_cancels_it_and_drops_its_future() {
    let counter = DropCounter::new();
    let token = counter.token();
    let (_sender, receiver) = unbounded::<()>();
    let started = Arc::new(AtomicBool::new(false));
    let task = {
        let started = Arc::clone(&started);
        sumac::spawn_future(async move {
            let _token = token;
            started.store(true, Ordering::SeqCst);
            let _ = receiver.recv_async().await;
            unreachable!("cancelled while waiting");
        })
    };
    while !started.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    drop(task);
    finishes("cancel", move || {
        while counter.dropped() < 1 {
            std::thread::yield_now();
        }
    });
}

#[test]
fn cancel_returns_the_output_of_a_finished_task() {
    let task = sumac::spawn_future(async { 5 });
    while !task.is_finished() {
        std::thread::yield_now();
    }
    assert_eq!(sumac::block_on(task.cancel()), Some(5));
    let (_sender, receiver) = unbounded::<()>();
    let pending = sumac::spawn_future(async move {
        let _ = receiver.recv_async().await;
    });
    assert_eq!(sumac::block_on(pending.cancel()), None);
}

#[test]
fn a_detached_task_runs_to_completion() {
    let (sender, receiver) = oneshot();
    sumac::spawn_future(async move {
        YieldOnce(false).await;
        sender.send(1).unwrap();
    })
    .detach();
    assert_eq!(receiver.recv(), Ok(1));
}

#[test]
fn a_task_panic_is_raised_where_it_is_joined_and_where_it_is_awaited() {
    let task = sumac::spawn_future(async {
        YieldOnce(false).await;
        panic!("task boom");
    });
    let payload =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| task.join())).unwrap_err();
    assert_eq!(panic_message(&*payload), "task boom");

    let outer = sumac::spawn_future(async {
        let inner = sumac::spawn_future(async { panic!("inner boom") });
        let caught = std::panic::AssertUnwindSafe(inner);
        // Await inside catch_unwind by polling manually.
        let mut caught = Box::pin(caught.0);
        std::future::poll_fn(move |cx| {
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                caught.as_mut().poll(cx)
            })) {
                Ok(Poll::Pending) => Poll::Pending,
                Ok(Poll::Ready(())) => Poll::Ready(String::new()),
                Err(payload) => Poll::Ready(panic_message(&*payload)),
            }
        })
        .await
    });
    assert_eq!(outer.join(), "inner boom");
}

#[test]
fn a_detached_task_panic_goes_to_the_pool_panic_handler() {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let pool = {
        let seen = Arc::clone(&seen);
        sumac::ThreadPoolBuilder::new()
            .num_threads(2)
            .panic_handler(move |payload| seen.lock().unwrap().push(panic_message(&*payload)))
            .build()
            .unwrap()
    };
    pool.spawn_future(async { panic!("detached boom") })
        .detach();
    finishes("panic handler", move || {
        while seen.lock().unwrap().is_empty() {
            std::thread::yield_now();
        }
        assert_eq!(seen.lock().unwrap()[0], "detached boom");
    });
}

#[test]
fn block_on_runs_pool_jobs_on_a_worker_and_parks_elsewhere() {
    // Outside any pool: parks until a thread wakes it.
    let (sender, receiver) = oneshot();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(10));
        sender.send(3).unwrap();
    });
    assert_eq!(sumac::block_on(receiver), Ok(3));
    // On the only worker of a pool: the awaited task runs on the waiting worker.
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let got = finishes("block_on on a worker", move || {
        pool.install(|| {
            let (sender, receiver) = oneshot();
            sumac::spawn_future(async move { sender.send(4).unwrap() }).detach();
            sumac::block_on(receiver)
        })
    });
    assert_eq!(got, Ok(4));
}

/// `threads` tasks in a ring pass a token `laps` times round; returns the hops made.
fn ring(pool: &sumac::ThreadPool, tasks: usize, laps: usize, capacity: Option<usize>) -> usize {
    let hops = tasks * laps;
    let links: Vec<_> = (0..tasks)
        .map(|_| match capacity {
            None => unbounded::<usize>(),
            Some(cap) => bounded(cap),
        })
        .collect();
    let mut handles = Vec::new();
    for i in 0..tasks {
        let receiver = links[i].1.clone();
        let sender = links[(i + 1) % tasks].0.clone();
        handles.push(pool.spawn_future(async move {
            let mut passed = 0;
            while let Ok(token) = receiver.recv_async().await {
                if token == hops {
                    break;
                }
                passed += 1;
                if sender.send_async(token + 1).await.is_err() {
                    break;
                }
                if token + 1 == hops {
                    break;
                }
            }
            passed
        }));
    }
    links[0].0.send(0).unwrap();
    drop(links);
    handles.into_iter().map(sumac::Task::join).sum()
}

#[test]
fn a_ring_of_tasks_passes_its_token_round_with_every_capacity_and_pool_size() {
    for threads in [1, 2, 4] {
        let pool = Arc::new(common::stress_pool(threads));
        for capacity in [None, Some(0), Some(1)] {
            let pool = Arc::clone(&pool);
            let hops = finishes("ring", move || ring(&pool, 10, 50, capacity));
            assert_eq!(hops, 500, "{threads} threads, {capacity:?}");
        }
    }
}

#[test]
fn tasks_woken_from_plain_threads_all_complete_under_one_microsecond_heartbeats() {
    let pool = Arc::new(common::stress_pool(4));
    let done = Arc::new(AtomicUsize::new(0));
    let total = finishes("wakes from threads", {
        let pool = Arc::clone(&pool);
        let done = Arc::clone(&done);
        move || {
            let mut senders = Vec::new();
            let mut tasks = Vec::new();
            for _ in 0..50 {
                let (sender, receiver) = oneshot::<usize>();
                senders.push(sender);
                let done = Arc::clone(&done);
                tasks.push(pool.spawn_future(async move {
                    let v = receiver.await.unwrap();
                    done.fetch_add(1, Ordering::SeqCst);
                    v
                }));
            }
            std::thread::scope(|s| {
                for (i, sender) in senders.into_iter().enumerate() {
                    s.spawn(move || sender.send(i).unwrap());
                }
            });
            tasks.into_iter().map(sumac::Task::join).sum::<usize>()
        }
    });
    assert_eq!(total, (0..50).sum());
    assert_eq!(done.load(Ordering::SeqCst), 50);
}

#[test]
fn a_pool_dropped_with_a_waiting_task_shuts_down() {
    let (sender, receiver) = unbounded::<()>();
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let task = pool.spawn_future(async move {
        let _ = receiver.recv_async().await;
    });
    finishes("drop a pool with a waiting task", move || drop(pool));
    // Waking it now finds no pool: the task is cancelled.
    drop(sender);
    let payload =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| task.join())).unwrap_err();
    assert!(panic_message(&*payload).contains("cancelled"));
}

// ------------------------------------------------------------------ scoped futures

#[test]
fn scoped_futures_borrow_from_the_stack_and_the_scope_waits_for_them() {
    for threads in [1, 2, 4] {
        let pool = common::stress_pool(threads);
        let mut slots = vec![0usize; 64];
        let (sender, receiver) = unbounded::<usize>();
        pool.scope(|s| {
            for slot in slots.iter_mut() {
                let receiver = receiver.clone();
                s.spawn_future(async move {
                    // Each waits for a message a job of the same scope sends later.
                    let value = receiver.recv_async().await.unwrap();
                    let (a, b) = sumac::join(|| value, || value);
                    *slot = a + b + 1;
                });
            }
            s.spawn(move |_| {
                for i in 0..64 {
                    sender.send(i).unwrap();
                }
            });
        });
        slots.sort_unstable();
        let expected: Vec<usize> = (0..64).map(|i| 2 * i + 1).collect();
        assert_eq!(slots, expected, "{threads} threads");
    }
}

#[test]
fn a_scoped_future_panic_is_raised_by_the_scope_after_everything_finished() {
    let pool = common::stress_pool(2);
    let finished = AtomicUsize::new(0);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.scope(|s| {
            s.spawn_future(async { panic!("scoped future") });
            for _ in 0..8 {
                s.spawn_future(async {
                    YieldOnce(false).await;
                    finished.fetch_add(1, Ordering::SeqCst);
                });
            }
        })
    }));
    let payload = result.expect_err("the scope re-raises the future's panic");
    assert_eq!(panic_message(&*payload), "scoped future");
    assert_eq!(finished.load(Ordering::SeqCst), 8);
}

#[test]
fn scoped_futures_are_dropped_once_whether_they_complete_or_their_channel_closes() {
    let counter = DropCounter::new();
    let pool = common::stress_pool(2);
    let dropped_when_the_scope_returned = finishes("a scope with futures", move || {
        scoped_futures_with_tokens(&pool, &counter);
        (counter.created(), counter.dropped())
    });
    assert_eq!(dropped_when_the_scope_returned, (32, 32));
}

fn scoped_futures_with_tokens(pool: &sumac::ThreadPool, counter: &DropCounter) {
    let mut senders = Vec::new();
    pool.scope(|s| {
        for _ in 0..32 {
            let token = counter.token();
            let (sender, receiver) = oneshot::<()>();
            s.spawn_future(async move {
                let _token = token;
                let _ = receiver.await;
            });
            senders.push(sender);
        }
        // A thread outside the pool answers later: half get their message, the other
        // half see their sender dropped.
        let senders = std::mem::take(&mut senders);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            for (i, sender) in senders.into_iter().enumerate() {
                if i % 2 == 0 {
                    sender.send(()).unwrap();
                }
            }
        });
    });
}
