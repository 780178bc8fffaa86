//! `join`: results, panics in every closure position, and nesting.
mod common;

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use common::{fib, fib_seq, stress_pool, DropCounter};

#[test]
fn join_returns_both_results_on_every_pool_size() {
    for threads in [1, 2, 3, 4, 8] {
        let pool = stress_pool(threads);
        assert_eq!(pool.install(|| fib(22)), fib_seq(22), "{threads} threads");
        assert_eq!(pool.join(|| 1, || "two"), (1, "two"));
    }
}

#[test]
fn join_outside_any_pool_runs_on_the_caller_as_part_of_the_global_pool() {
    assert_eq!(fib(18), fib_seq(18));
    let caller = std::thread::current().id();
    let (a, _) = sumac::join(|| std::thread::current().id(), || ());
    assert_eq!(a, caller, "the first closure runs on the calling thread");
    assert_eq!(sumac::join(sumac::current_thread_index, || 0).0, None);
    assert_eq!(
        sumac::join(sumac::current_num_threads, || 0).0,
        sumac::ThreadPoolBuilder::new()
            .build()
            .unwrap()
            .current_num_threads(),
        "the global pool's size, one thread per core"
    );
}

#[test]
fn join_borrows_mutably_disjoint_data() {
    let mut left = vec![0; 100];
    let mut right = vec![0; 100];
    let pool = stress_pool(4);
    pool.install(|| {
        sumac::join(
            || left.iter_mut().for_each(|x| *x = 1),
            || right.iter_mut().for_each(|x| *x = 2),
        )
    });
    assert!(left.iter().all(|&x| x == 1) && right.iter().all(|&x| x == 2));
}

#[test]
fn panic_in_first_closure_still_runs_second() {
    let pool = stress_pool(4);
    for _ in 0..100 {
        let ran_b = AtomicBool::new(false);
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| sumac::join(|| panic!("a"), || ran_b.store(true, Ordering::SeqCst)))
        }));
        assert_eq!(common::panic_message(&*result.unwrap_err()), "a");
        assert!(
            ran_b.load(Ordering::SeqCst),
            "b must run to completion before join unwinds"
        );
    }
}

#[test]
fn panic_in_second_closure_is_propagated_after_first_finished() {
    let pool = stress_pool(4);
    for _ in 0..100 {
        let ran_a = AtomicBool::new(false);
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| {
                sumac::join(
                    || {
                        fib(10);
                        ran_a.store(true, Ordering::SeqCst)
                    },
                    || panic!("b"),
                )
            })
        }));
        assert_eq!(common::panic_message(&*result.unwrap_err()), "b");
        assert!(ran_a.load(Ordering::SeqCst));
    }
}

#[test]
fn first_closure_panic_wins_when_both_panic() {
    let pool = stress_pool(4);
    for _ in 0..100 {
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| sumac::join(|| panic!("a"), || panic!("b")))
        }));
        assert_eq!(common::panic_message(&*result.unwrap_err()), "a");
    }
    assert_eq!(
        pool.install(|| fib(15)),
        fib_seq(15),
        "the pool stays usable"
    );
}

/// The Chili use-after-free: the inline closure panics while the other one was handed to
/// another thread. `join` must wait until the thief is done with the stack frame. The
/// thief writes to data on the joining frame's stack, and checks it is still intact.
#[test]
fn inline_panic_waits_for_stolen_closure() {
    let pool = stress_pool(4);
    let stolen_runs = AtomicUsize::new(0);
    let before = pool.stats();
    // At least 300 rounds, and more until some closures were shared: on a loaded machine
    // (a CI run once had 0 promotions in 300 rounds) the heartbeat thread may barely run.
    for round in 0.. {
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| {
                nested_panicking_join(6, round, &stolen_runs);
            })
        }));
        assert!(result.is_err());
        let delta = pool.stats().since(&before).total();
        if round >= 299 && delta.promotions > 0 {
            break;
        }
        assert!(
            round < 30_000,
            "the test must exercise shared closures: {delta:?}"
        );
    }
    assert_eq!(
        pool.install(|| fib(18)),
        fib_seq(18),
        "the pool stays usable"
    );
}

fn nested_panicking_join(depth: u32, round: usize, counter: &AtomicUsize) -> u64 {
    let guard = [round as u64; 16]; // lives in this frame; the second closure reads it
    let (a, b) = sumac::join(
        || {
            if depth == 0 {
                // Fork for a while (many 1 µs heartbeats, each polled by a fork) so that
                // the older siblings, waiting all along, get shared before the panic.
                std::hint::black_box(fib(20));
                panic!("inline closure panics");
            }
            nested_panicking_join(depth - 1, round, counter)
        },
        || {
            let before = guard;
            std::hint::black_box(fib_seq(14));
            assert_eq!(before, guard, "the joining frame must stay alive");
            counter.fetch_add(1, Ordering::Relaxed);
            guard.iter().sum::<u64>()
        },
    );
    a + b
}

#[test]
fn join_closures_are_dropped_exactly_once() {
    let pool = stress_pool(4);
    let counter = DropCounter::new();
    fn tree(depth: u32, counter: &DropCounter) -> u64 {
        if depth == 0 {
            return 1;
        }
        let left = counter.token();
        let right = counter.token();
        let (a, b) = sumac::join(
            move || {
                let _token = left;
                tree(depth - 1, counter)
            },
            move || {
                let _token = right;
                tree(depth - 1, counter)
            },
        );
        a + b
    }
    for _ in 0..20 {
        assert_eq!(pool.install(|| tree(10, &counter)), 1024);
    }
    assert_eq!(counter.created(), counter.dropped());
    assert_eq!(counter.created(), 20 * 2 * 1023);
}

#[test]
fn deep_recursion_with_large_stacks() {
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(2)
        .stack_size(512 << 20)
        .heartbeat_interval(std::time::Duration::from_micros(20))
        .build()
        .unwrap();
    fn chain(depth: u64) -> u64 {
        if depth == 0 {
            return 0;
        }
        let (a, b) = sumac::join(|| chain(depth - 1), || 1);
        a + b
    }
    assert_eq!(pool.install(|| chain(100_000)), 100_000);
}

#[test]
fn stats_count_forks_and_sharing() {
    let pool = stress_pool(4);
    let before = pool.stats();
    pool.install(|| fib(20));
    let delta = pool.stats().since(&before);
    assert_eq!(delta.workers.len(), 4);
    let total = delta.total();
    // fib(20) with a join above 1 performs fib(21) - 1 joins.
    assert_eq!(total.forks, fib_seq(21) - 1);
    assert!(
        delta.callers.forks >= 1,
        "the installed closure ran on the caller, taking part in the pool"
    );
    // Handed to a worker instead, the installed job comes from the queue.
    let handing = sumac::ThreadPoolBuilder::new()
        .num_threads(2)
        .callers_take_part(false)
        .build()
        .unwrap();
    let before = handing.stats();
    handing.install(|| fib(10));
    let delta = handing.stats().since(&before);
    assert_eq!(delta.callers, sumac::WorkerStats::default());
    assert!(delta.total().shared_jobs_run >= 1);
}

#[test]
fn stats_count_every_fork_of_a_one_thread_pool() {
    // A one-thread pool runs every fork as two direct calls; they are counted all the same.
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let before = pool.stats();
    pool.install(|| fib(15));
    pool.install(|| fib(15));
    let total = pool.stats().since(&before).total();
    assert_eq!(total.forks, 2 * (fib_seq(16) - 1));
}

/// A fork tree whose every closure checks that `migrated()` tells exactly whether it runs
/// on another thread than its `join_context` caller; returns how many migrated.
fn context_tree(depth: u32, mismatches: &AtomicUsize) -> usize {
    if depth == 0 {
        // Leaves of a few microseconds: a tree lasts milliseconds, many heartbeats, even
        // on a loaded machine.
        std::hint::black_box(fib(12));
        return 0;
    }
    let caller = std::thread::current().id();
    let check = |ctx: sumac::FnContext| {
        let moved = std::thread::current().id() != caller;
        if ctx.migrated() != moved {
            mismatches.fetch_add(1, Ordering::Relaxed);
        }
        usize::from(ctx.migrated())
    };
    let (a, b) = sumac::join_context(
        |ctx| check(ctx) + context_tree(depth - 1, mismatches),
        |ctx| check(ctx) + context_tree(depth - 1, mismatches),
    );
    a + b
}

#[test]
fn join_context_reports_migration_exactly() {
    let pool = stress_pool(4);
    let mismatches = AtomicUsize::new(0);
    let mut migrated = 0;
    for _ in 0..200 {
        migrated += pool.install(|| context_tree(10, &mismatches));
        if migrated > 0 {
            break;
        }
    }
    assert_eq!(mismatches.load(Ordering::Relaxed), 0);
    assert!(migrated > 0, "no closure ever migrated on a 1 µs heartbeat");
    // From outside any pool, the caller runs the first closure itself.
    let (a, _) = sumac::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated());
    assert!(!a);
    // Handed to a worker, both closures run elsewhere.
    let handing = sumac::ThreadPoolBuilder::new()
        .num_threads(2)
        .callers_take_part(false)
        .build()
        .unwrap();
    let caller = std::thread::current().id();
    let (a, b) = handing.install(|| {
        let here = std::thread::current().id();
        assert_ne!(here, caller);
        sumac::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated())
    });
    assert!(!a, "relative to the worker that called join_context");
    let _ = b;
}
