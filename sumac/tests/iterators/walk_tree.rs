//! `walk_tree_prefix`, `walk_tree_postfix`, `walk_tree`: the walk's order equals the
//! sequential depth-first order, on a 1 µs heartbeat with forced splits; deep trees walk
//! without recursion; the pieces' forks stay shallow.
use crate::common;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use sumac::iter::{walk_tree, walk_tree_postfix, walk_tree_prefix};
use sumac::prelude::*;

fn pool() -> &'static sumac::ThreadPool {
    common::forced_split_pool()
}

/// A random tree over nodes `0..n`: node `i > 0` hangs under a random earlier node.
fn random_tree(parents: &[usize]) -> Vec<Vec<usize>> {
    let mut children = vec![Vec::new(); parents.len() + 1];
    for (i, &p) in parents.iter().enumerate() {
        children[p % (i + 1)].push(i + 1);
    }
    children
}

fn prefix(children: &[Vec<usize>], node: usize, out: &mut Vec<usize>) {
    out.push(node);
    for &c in &children[node] {
        prefix(children, c, out);
    }
}

fn postfix(children: &[Vec<usize>], node: usize, out: &mut Vec<usize>) {
    for &c in &children[node] {
        postfix(children, c, out);
    }
    out.push(node);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn walks_equal_sequential_depth_first_order(parents in prop::collection::vec(any::<usize>(), 0..400), m in 2usize..20) {
        let children = random_tree(&parents);
        let kids = |&n: &usize| children[n].clone();
        let (mut pre, mut post) = (Vec::new(), Vec::new());
        prefix(&children, 0, &mut pre);
        postfix(&children, 0, &mut post);
        pool().install(|| {
            prop_assert_eq!(walk_tree_prefix(0, kids).collect::<Vec<_>>(), pre.clone());
            prop_assert_eq!(walk_tree_postfix(0, kids).collect::<Vec<_>>(), post.clone());
            prop_assert_eq!(walk_tree(0, kids).collect::<HashSet<_>>(), pre.iter().copied().collect::<HashSet<_>>());
            let hit = |n: &usize| n % m == 1;
            prop_assert_eq!(walk_tree_prefix(0, kids).find_first(hit), pre.iter().copied().find(hit));
            prop_assert_eq!(walk_tree_postfix(0, kids).find_last(hit), post.iter().copied().rfind(hit));
            prop_assert_eq!(walk_tree_prefix(0, kids).any(|n| hit(&n)), pre.iter().any(hit));
            Ok(())
        })?;
    }
}

/// Trees far deeper than any stack (a chain of 300,000 nodes, and a "caterpillar": a
/// spine of 100,000 nodes with a leaf on each), walked on workers with 96 KiB stacks,
/// with items that run parallel loops of their own: the walk recurses on nothing, and
/// its forks stay few.
#[test]
fn deep_trees_walk_on_small_stacks() {
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(4)
        .force_splits(3)
        .heartbeat_interval(Duration::from_micros(1))
        .stack_size(96 * 1024)
        .build()
        .unwrap();
    let n = 300_000u64;
    let chain = |&i: &u64| if i + 1 < n { vec![i + 1] } else { vec![] };
    let count = pool.install(|| walk_tree_postfix(0u64, chain).count());
    assert_eq!(count as u64, n);
    let order: Vec<u64> = pool.install(|| walk_tree_prefix(0u64, chain).collect());
    assert!(order.iter().copied().eq(0..n));
    // Node 2k is on the spine, 2k + 1 is its leaf.
    let spine = 100_000u64;
    let caterpillar = |&i: &u64| {
        if i % 2 == 0 && i / 2 + 1 < spine {
            vec![i + 1, i + 2]
        } else {
            vec![]
        }
    };
    let total: u64 = pool.install(|| {
        walk_tree_prefix(0u64, caterpillar)
            .map(|i| i + (0..i % 5).into_par_iter().filter(|&j| j > 5).count() as u64)
            .sum()
    });
    let nodes = 2 * spine - 1;
    assert_eq!(total, nodes * (nodes - 1) / 2);
}

/// A wide tree of items of about 5 µs spreads over the workers (retried a few times:
/// on a loaded machine the other workers may not run during one 8 ms walk).
#[test]
fn a_wide_tree_spreads_over_workers() {
    let pool = common::stress_pool(4);
    let children = |&i: &u32| {
        if i < 40 {
            (1..=40).map(|k| i * 40 + k).filter(|&c| c < 1600).collect()
        } else {
            vec![]
        }
    };
    let mut seen = HashSet::new();
    for _attempt in 0..20 {
        seen = pool.install(|| {
            walk_tree_prefix(0u32, children)
                .map(|_| {
                    let start = Instant::now();
                    while start.elapsed() < Duration::from_micros(5) {
                        std::hint::spin_loop();
                    }
                    sumac::current_thread_index()
                })
                .collect::<HashSet<Option<usize>>>()
        });
        if seen.len() > 1 {
            return;
        }
    }
    panic!("only {seen:?} walked the tree, in 20 attempts");
}
