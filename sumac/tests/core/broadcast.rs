//! `broadcast` and `spawn_broadcast`: once on every worker, from every kind of caller,
//! with panics, concurrency and shutdown.
use crate::common;

use std::panic::{self, catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;

use common::{
    assert_both_workers_serve, fib, fib_seq, finishes, panic_message, stress_pool, two_worker_pool,
    Bomb, HANG,
};

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

// ---------------------------------------------------------------------------------------
// Panics that escape a job from a destructor.
//
// Every job catches the panic of the user's closure, but some drop user values after
// (outside) that `catch_unwind`: the shared closure of a broadcast job, and the surplus
// payload of a scope's second panic (`scope.rs`). A panic from such a destructor unwinds
// the worker that runs the job: through whatever it was waiting in (a join whose second
// closure another worker is running on this stack frame: a use-after-free, `join.rs`), or
// out of the worker thread, which dies and leaves its scope uncounted (a hang).

/// `Scope::spawn_broadcast` whose closure's destructor panics (the last reference is
/// dropped in a job): the scope must complete and re-raise that panic.
#[test]
fn scope_spawn_broadcast_closure_whose_destructor_panics_is_reraised() {
    let pool = two_worker_pool();
    let in_pool = Arc::clone(&pool);
    let outcome = finishes("the scope", move || {
        let armed = Arc::new(AtomicBool::new(true));
        let released = AtomicBool::new(false);
        let bomb = Bomb { armed };
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            in_pool.in_place_scope(|s| {
                let released = &released;
                s.spawn_broadcast(move |_, _| {
                    let _keep = &bomb;
                    // Hold on until the scope body dropped its own reference.
                    while !released.load(Ordering::SeqCst) {
                        thread::yield_now();
                    }
                });
                released.store(true, Ordering::SeqCst);
            })
        }));
        result.map_err(|payload| panic_message(&*payload))
    });
    assert_eq!(outcome, Err("bomb destructor".to_owned()));
    assert_both_workers_serve(pool);
}

/// `ThreadPool::spawn_broadcast` whose closure's destructor panics: the panic goes to
/// the panic handler, and the worker that dropped the closure keeps working.
#[test]
fn spawn_broadcast_closure_whose_destructor_panics_goes_to_the_handler() {
    let (handled, panics) = mpsc::channel();
    let handled = Mutex::new(handled);
    let pool = Arc::new(
        sumac::ThreadPoolBuilder::new()
            .num_threads(2)
            .panic_handler(move |payload| {
                let _ = handled.lock().unwrap().send(panic_message(&*payload));
            })
            .build()
            .unwrap(),
    );
    let armed = Arc::new(AtomicBool::new(false));
    let bomb = Bomb {
        armed: Arc::clone(&armed),
    };
    let ran = Arc::new(AtomicUsize::new(0));
    let job_ran = Arc::clone(&ran);
    let go = Arc::new(AtomicBool::new(false));
    let job_go = Arc::clone(&go);
    pool.spawn_broadcast(move |_| {
        let _keep = &bomb;
        while !job_go.load(Ordering::SeqCst) {
            thread::yield_now();
        }
        job_ran.fetch_add(1, Ordering::SeqCst);
    });
    armed.store(true, Ordering::SeqCst);
    go.store(true, Ordering::SeqCst);
    assert_eq!(
        panics.recv_timeout(HANG).as_deref(),
        Ok("bomb destructor"),
        "the destructor's panic did not reach the panic handler"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 2);
    assert_both_workers_serve(pool);
}
