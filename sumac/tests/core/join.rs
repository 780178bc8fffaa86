//! `join`: results, panics in every closure position (a destructor's panic included),
//! and nesting; random fork trees against their sequential value and drop counting
//! across the sharing paths, under 1 µs heartbeats.
use crate::common;

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use common::{
    fib, fib_seq, finishes, panic_message, pool_with_heartbeat, stress_pool, Bomb, DropCounter,
};
use proptest::prelude::*;

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

// ---------------------------------------------------------------------------------------
// A panic that escapes a job from a destructor (see `broadcast.rs`) while its worker waits
// at a join must not unwind that join.

/// The second closure of a join runs on another worker while the owner, waiting at the
/// join, runs a `spawn_broadcast` job whose closure's destructor panics. That panic
/// must go to the panic handler; the join must not return (or unwind) before its second
/// closure finished with the join's stack frame.
#[test]
fn a_panicking_destructor_in_a_job_run_at_a_join_does_not_unwind_the_join() {
    let release_b = Arc::new(AtomicBool::new(false));
    let handled = Arc::new(AtomicUsize::new(0));
    let pool = {
        let release_b = Arc::clone(&release_b);
        let handled = Arc::clone(&handled);
        // The join's owner must be a worker, busy in the first closure until the bomb is
        // armed: a caller taking part would own the join instead, and both workers could
        // then run their copies of the broadcast (the last one dropping the bomb unarmed)
        // before it is armed.
        sumac::ThreadPoolBuilder::new()
            .num_threads(2)
            .callers_take_part(false)
            .heartbeat_interval(Duration::from_micros(1))
            .panic_handler(move |_| {
                handled.fetch_add(1, Ordering::SeqCst);
                // Only a handled panic lets `b` finish: if the panic unwound the join
                // instead, `b` never touches the (gone) frame.
                release_b.store(true, Ordering::SeqCst);
            })
            .build()
            .unwrap()
    };
    // Never dropped: on failure a worker is left blocked in `b`.
    let pool: &'static sumac::ThreadPool = Box::leak(Box::new(pool));
    let b_started = Arc::new(AtomicBool::new(false));
    let b_finished = Arc::new(AtomicBool::new(false));
    let op_ran_on_b_worker = Arc::new(AtomicBool::new(false));
    let b_worker = Arc::new(AtomicUsize::new(usize::MAX));
    let verdict = finishes("the join", {
        let (release_b, b_started, b_finished) = (release_b, b_started, b_finished);
        move || {
            pool.install(move || {
                let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
                    sumac::join(
                        || {
                            // `b` gets stolen: the heartbeat thread hands it over (the
                            // rescue offer) while this closure waits without forking.
                            // (Forking here, this worker could itself run `b` from the
                            // queue while it waited at one of those joins, nested below
                            // this closure, and `b` would then wait for this closure
                            // forever.)
                            while !b_started.load(Ordering::SeqCst) {
                                thread::yield_now();
                            }
                            let armed = Arc::new(AtomicBool::new(false));
                            let bomb = Bomb {
                                armed: Arc::clone(&armed),
                            };
                            let ran_on_b = Arc::clone(&op_ran_on_b_worker);
                            let b_index = Arc::clone(&b_worker);
                            sumac::spawn_broadcast(move |ctx| {
                                let _keep = &bomb;
                                if ctx.index() == b_index.load(Ordering::SeqCst) {
                                    ran_on_b.store(true, Ordering::SeqCst);
                                }
                            });
                            armed.store(true, Ordering::SeqCst);
                            // `b`'s worker runs its copy first (from `yield_now`), so
                            // the last reference to the closure goes with this worker's
                            // copy, which it runs while it waits at the join.
                            while !op_ran_on_b_worker.load(Ordering::SeqCst) {
                                thread::sleep(Duration::from_micros(50));
                            }
                        },
                        || {
                            b_worker
                                .store(sumac::current_thread_index().unwrap(), Ordering::SeqCst);
                            b_started.store(true, Ordering::SeqCst);
                            while !release_b.load(Ordering::SeqCst) {
                                sumac::yield_now();
                                thread::sleep(Duration::from_micros(50));
                            }
                            b_finished.store(true, Ordering::SeqCst);
                        },
                    )
                }));
                match outcome {
                    Ok(_) if b_finished.load(Ordering::SeqCst) => Ok(()),
                    Ok(_) => Err("join returned before its second closure finished".to_owned()),
                    Err(payload) if !b_finished.load(Ordering::SeqCst) => Err(format!(
                        "join unwound ({}) while its second closure still ran on its frame",
                        panic_message(&*payload)
                    )),
                    Err(payload) => Err(format!("join panicked: {}", panic_message(&*payload))),
                }
            })
        }
    });
    verdict.unwrap();
    assert_eq!(handled.load(Ordering::SeqCst), 1);
}

// ---------------------------------------------------------------------------------------
// Random fork trees against their sequential value, and drop counting across the sharing
// paths, with a 1 µs heartbeat. One more property runs the random trees at a 20 µs
// heartbeat, where many joins finish before any heartbeat: a worker then switches between
// recording only the top forks of its work (before a heartbeat) and recording as usual
// (after one) in the middle of a tree, with spawned jobs on its list. Balanced trees run
// on pools of more than 8 workers, which record more forks each.

/// A random fork tree: leaves carry values, inner nodes join their children.
#[derive(Clone, Debug)]
enum Tree {
    Leaf(u64),
    Join(Box<Tree>, Box<Tree>),
    Scope(Vec<Tree>),
}

fn tree_strategy() -> impl Strategy<Value = Tree> {
    let leaf = (0u64..1000).prop_map(Tree::Leaf);
    leaf.prop_recursive(8, 256, 6, |inner| {
        prop_oneof![
            3 => (inner.clone(), inner.clone()).prop_map(|(a, b)| Tree::Join(Box::new(a), Box::new(b))),
            1 => prop::collection::vec(inner, 0..6).prop_map(Tree::Scope),
        ]
    })
}

fn eval_seq(tree: &Tree) -> u64 {
    match tree {
        Tree::Leaf(v) => busy(*v),
        Tree::Join(a, b) => eval_seq(a).wrapping_mul(31).wrapping_add(eval_seq(b)),
        Tree::Scope(children) => children.iter().map(eval_seq).fold(0, u64::wrapping_add),
    }
}

fn eval_par(tree: &Tree) -> u64 {
    match tree {
        Tree::Leaf(v) => busy(*v),
        Tree::Join(a, b) => {
            let (x, y) = sumac::join(|| eval_par(a), || eval_par(b));
            x.wrapping_mul(31).wrapping_add(y)
        }
        Tree::Scope(children) => {
            let total = AtomicUsize::new(0);
            sumac::scope(|s| {
                for child in children {
                    let total = &total;
                    s.spawn(move |_| {
                        total.fetch_add(eval_par(child) as usize, Ordering::Relaxed);
                    });
                }
            });
            total.into_inner() as u64
        }
    }
}

/// A little work so that heartbeats fire in the middle of the tree.
fn busy(v: u64) -> u64 {
    let mut x = v;
    for _ in 0..(v % 64) {
        x = std::hint::black_box(
            x.wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407),
        );
    }
    x
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_fork_trees_match_sequential(tree in tree_strategy(), threads in 1usize..5) {
        let pool = stress_pool(threads);
        let expected = eval_seq(&tree);
        for _ in 0..4 {
            prop_assert_eq!(pool.install(|| eval_par(&tree)), expected);
        }
    }
}

/// A balanced tree of joins, `depth` levels above its leaves, with leaf values drawn
/// from `seed` (deep enough that every worker's list fills up).
fn balanced_tree(depth: u32, seed: u64) -> Tree {
    if depth == 0 {
        return Tree::Leaf(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54);
    }
    let child = |n: u64| balanced_tree(depth - 1, seed.wrapping_mul(6_364_136_223_846_793_005) ^ n);
    Tree::Join(Box::new(child(1)), Box::new(child(2)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Pools of more than 8 workers record more forks per worker (4 at 9 or 16 workers,
    /// 5 at 17, 6 at 33: `recorded_forks_limit`), so more of them are offered, claimed,
    /// promoted and withdrawn at once.
    #[test]
    fn balanced_fork_trees_match_sequential_on_wide_pools(
        depth in 4u32..12,
        seed in any::<u64>(),
        threads in prop::sample::select(&[9usize, 17, 33][..]),
    ) {
        let tree = balanced_tree(depth, seed);
        let pool = stress_pool(threads);
        let expected = eval_seq(&tree);
        for _ in 0..8 {
            prop_assert_eq!(pool.install(|| eval_par(&tree)), expected);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn random_fork_trees_match_sequential_at_a_20us_heartbeat(
        tree in tree_strategy(),
        threads in 2usize..5,
    ) {
        let pool = pool_with_heartbeat(threads, Duration::from_micros(20));
        let expected = eval_seq(&tree);
        for _ in 0..8 {
            prop_assert_eq!(pool.install(|| eval_par(&tree)), expected);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// The test's own thread as worker 0 (`use_current_thread`): the trees run from this
    /// thread directly (each `join` and `scope` makes it act as worker 0) and through
    /// `install`, with a 1 µs heartbeat sharing its work with the other workers.
    #[test]
    fn random_fork_trees_match_sequential_with_the_current_thread_as_worker(
        tree in tree_strategy(),
        threads in 1usize..4,
    ) {
        let pool = common::current_thread_stress_pool(threads);
        let expected = eval_seq(&tree);
        for _ in 0..4 {
            prop_assert_eq!(eval_par(&tree), expected);
            prop_assert_eq!(pool.install(|| eval_par(&tree)), expected);
        }
        drop(pool);
        prop_assert_eq!(sumac::current_thread_index(), None);
    }
}

#[test]
fn many_rounds_share_work_and_match() {
    let pool = stress_pool(4);
    let before = pool.stats();
    fn sum(lo: u64, hi: u64) -> u64 {
        if hi - lo <= 1 {
            return busy(lo);
        }
        let mid = lo + (hi - lo) / 2;
        let (a, b) = sumac::join(|| sum(lo, mid), || sum(mid, hi));
        a.wrapping_add(b)
    }
    let expected = (0..20_000).map(busy).fold(0u64, u64::wrapping_add);
    for _ in 0..50 {
        assert_eq!(pool.install(|| sum(0, 20_000)), expected);
    }
    let delta = pool.stats().since(&before).total();
    assert!(
        delta.promotions > 0 && delta.shared_jobs_run > 0,
        "sharing paths must run: {delta:?}"
    );
}

#[test]
fn drop_counts_balance_under_constant_sharing() {
    let pool = stress_pool(4);
    let counter = DropCounter::new();
    fn fork(depth: u32, counter: &DropCounter) {
        if depth == 0 {
            return;
        }
        let (left, right) = (counter.token(), counter.token());
        let (returned_a, returned_b) = sumac::join(
            move || {
                fork(depth - 1, counter);
                left
            },
            move || {
                fork(depth - 1, counter);
                right
            },
        );
        drop((returned_a, returned_b));
    }
    for _ in 0..30 {
        pool.install(|| fork(9, &counter));
    }
    assert_eq!(
        counter.created(),
        counter.dropped(),
        "no closure or result leaked or dropped twice"
    );
}
