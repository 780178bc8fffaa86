//! Stress tests with a 1 µs heartbeat: random fork trees against their sequential value,
//! and drop counting across the sharing paths. One more property runs the random trees
//! at a 20 µs heartbeat, where many joins finish before any heartbeat: a worker then
//! switches between recording only the top forks of its work (before a heartbeat) and
//! recording as usual (after one) in the middle of a tree, with spawned jobs on its list.
//! Balanced trees run on pools of more than 8 workers, which record more forks each.
mod common;

use std::sync::atomic::{AtomicUsize, Ordering};

use std::time::Duration;

use common::{pool_with_heartbeat, stress_pool, DropCounter};
use proptest::prelude::*;

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
        delta.promotions > 0 && delta.shared_jobs_run > 50,
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
