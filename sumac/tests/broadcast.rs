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

/// `Scope::spawn_broadcast` runs once on every worker, borrows from outside the scope,
/// and the scope waits for all of those jobs (and what they spawn); a panic of one is
/// re-raised by the scope after all ran.
#[test]
fn scope_spawn_broadcast_runs_on_every_worker_and_is_awaited() {
    let pool = stress_pool(4);
    let per_worker: Vec<AtomicUsize> = (0..4).map(|_| AtomicUsize::new(0)).collect();
    let nested = AtomicUsize::new(0);
    pool.scope(|s| {
        s.spawn_broadcast(|s, ctx| {
            assert_eq!(ctx.num_threads(), 4);
            assert_eq!(sumac::current_thread_index(), Some(ctx.index()));
            per_worker[ctx.index()].fetch_add(1, Ordering::SeqCst);
            s.spawn(|_| {
                nested.fetch_add(fib(12) as usize, Ordering::SeqCst);
            });
        });
    });
    assert!(per_worker.iter().all(|c| c.load(Ordering::SeqCst) == 1));
    assert_eq!(nested.load(Ordering::SeqCst), 4 * fib_seq(12) as usize);

    let ran = AtomicUsize::new(0);
    let caught = catch_unwind(AssertUnwindSafe(|| {
        pool.scope_fifo(|s| {
            s.spawn_broadcast(|_, ctx| {
                ran.fetch_add(1, Ordering::SeqCst);
                if ctx.index() == 2 {
                    panic!("worker two");
                }
            });
        })
    }));
    assert_eq!(
        caught.unwrap_err().downcast_ref::<&str>(),
        Some(&"worker two")
    );
    assert_eq!(ran.load(Ordering::SeqCst), 4);
}

/// From a thread outside the pool, an `in_place_scope` owned by that thread still gets
/// one broadcast job per worker of the pool.
#[test]
fn in_place_scope_spawn_broadcast_from_outside() {
    let pool = stress_pool(3);
    let seen = Mutex::new(Vec::new());
    pool.in_place_scope(|s| s.spawn_broadcast(|_, ctx| seen.lock().unwrap().push(ctx.index())));
    let mut seen = seen.into_inner().unwrap();
    seen.sort();
    assert_eq!(seen, [0, 1, 2]);
}
