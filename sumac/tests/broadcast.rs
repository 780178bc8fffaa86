//! `broadcast` and `spawn_broadcast`: once on every worker, from every kind of caller,
//! with panics, concurrency and shutdown.
mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

use common::{fib, fib_seq, stress_pool};

#[test]
fn runs_once_on_every_worker_from_outside() {
    for threads in 1..=5 {
        let pool = stress_pool(threads);
        let seen: Vec<(usize, Option<usize>, usize)> = pool.broadcast(|ctx| {
            (
                ctx.index(),
                sumac::current_thread_index(),
                ctx.num_threads(),
            )
        });
        let expected: Vec<_> = (0..threads).map(|i| (i, Some(i), threads)).collect();
        assert_eq!(seen, expected);
    }
}

#[test]
fn from_inside_the_pool_while_other_workers_are_busy() {
    let pool = stress_pool(4);
    for _ in 0..20 {
        let (indices, f) =
            pool.install(|| sumac::join(|| sumac::broadcast(|ctx| ctx.index()), || fib(20)));
        assert_eq!(indices, [0, 1, 2, 3]);
        assert_eq!(f, fib_seq(20));
    }
}

#[test]
fn from_a_worker_of_another_pool() {
    let outer = stress_pool(2);
    let inner = stress_pool(3);
    for _ in 0..20 {
        let sums = outer.install(|| {
            let (a, b) = sumac::join(
                || inner.broadcast(|ctx| ctx.index() + fib(10) as usize),
                || inner.broadcast(|ctx| ctx.index()),
            );
            (a.iter().sum::<usize>(), b.iter().sum::<usize>())
        });
        assert_eq!(sums, (3 + 3 * fib_seq(10) as usize, 3));
    }
}

#[test]
fn many_callers_at_once() {
    let pool = stress_pool(3);
    let runs = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..50 {
                    let indices = pool.broadcast(|ctx| {
                        runs.fetch_add(1, Ordering::Relaxed);
                        ctx.index()
                    });
                    assert_eq!(indices, [0, 1, 2]);
                }
            });
        }
    });
    assert_eq!(runs.load(Ordering::Relaxed), 4 * 50 * 3);
}

#[test]
fn a_panic_is_propagated_after_every_worker_ran() {
    let pool = stress_pool(4);
    let ran = AtomicUsize::new(0);
    let r = catch_unwind(AssertUnwindSafe(|| {
        pool.broadcast(|ctx| {
            ran.fetch_add(1, Ordering::SeqCst);
            if ctx.index() >= 2 {
                panic!("worker {}", ctx.index());
            }
        })
    }));
    let payload = r.unwrap_err();
    assert_eq!(
        payload.downcast_ref::<String>().map(String::as_str),
        Some("worker 2")
    );
    assert_eq!(ran.load(Ordering::SeqCst), 4);
    assert_eq!(pool.install(|| fib(15)), fib_seq(15));
}

#[test]
fn spawn_broadcast_runs_everywhere_and_finishes_before_the_pool_is_gone() {
    let (sender, receiver) = mpsc::channel();
    let sender = Mutex::new(sender);
    let pool = stress_pool(4);
    pool.spawn_broadcast(move |ctx| {
        fib(12);
        sender.lock().unwrap().send(ctx.index()).unwrap();
    });
    drop(pool);
    // Dropping the pool joined its threads: every job has run (or was dropped, which
    // drops the sender, so the channel ends early rather than blocking).
    let mut got: Vec<usize> = receiver.try_iter().collect();
    got.sort();
    assert_eq!(got, [0, 1, 2, 3]);
}

#[test]
fn on_the_global_pool() {
    let n = sumac::current_num_threads();
    assert_eq!(
        sumac::broadcast(|ctx| ctx.index()),
        (0..n).collect::<Vec<_>>()
    );
}
