//! `par_bridge`: a sequential iterator feeding a parallel loop. Items arrive in no
//! particular order, so results are compared as multisets; the pool has a 1 µs heartbeat
//! and forced splits, so pullers fork all the time.
use crate::common;

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use sumac::prelude::*;

fn pool() -> &'static sumac::ThreadPool {
    common::forced_split_pool()
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn bridge_equals_sequential_as_a_multiset(v in prop::collection::vec(-1000i32..1000, 0..400), m in 2i32..40) {
        pool().install(|| {
            prop_assert_eq!(
                sorted(v.iter().par_bridge().map(|&x| x * 2).collect::<Vec<_>>()),
                sorted(v.iter().map(|&x| x * 2).collect::<Vec<_>>())
            );
            prop_assert_eq!(v.iter().par_bridge().copied().sum::<i32>(), v.iter().sum::<i32>());
            prop_assert_eq!(v.iter().par_bridge().count(), v.len());
            prop_assert_eq!(
                v.iter().par_bridge().filter(|&&x| x % m == 0).count(),
                v.iter().filter(|&&x| x % m == 0).count()
            );
            prop_assert_eq!(v.iter().par_bridge().copied().max(), v.iter().copied().max());
            prop_assert_eq!(
                v.iter().par_bridge().any(|&x| x % m == 1),
                v.iter().any(|&x| x % m == 1)
            );
            let found = v.iter().par_bridge().find_any(|&&x| x % m == 1);
            prop_assert_eq!(found.is_some(), v.iter().any(|&x| x % m == 1));
            prop_assert!(found.is_none_or(|&x| x % m == 1));
            // A bridge feeding parallel inner loops.
            prop_assert_eq!(
                v.iter().par_bridge().flat_map(|&x| (0..x.rem_euclid(5)).into_par_iter()).count(),
                v.iter().map(|&x| x.rem_euclid(5) as usize).sum::<usize>()
            );
            Ok(())
        })?;
    }
}

/// A 10 ms bridge reaches another worker. Up to 20 attempts: on a loaded machine (the
/// test binaries of CI run beside each other on 2 cores) a woken worker may not get a
/// core before one attempt ends; a bridge that never shares fails all 20.
#[test]
fn a_slow_source_spreads_over_workers() {
    let pool = common::stress_pool(4);
    let mut threads = HashSet::new();
    for _attempt in 0..20 {
        threads = pool.install(|| {
            (0..2000)
                .par_bridge()
                .map(|_| {
                    let start = std::time::Instant::now();
                    while start.elapsed() < std::time::Duration::from_micros(5) {
                        std::hint::spin_loop();
                    }
                    sumac::current_thread_index()
                })
                .collect::<HashSet<Option<usize>>>()
        });
        if threads.len() > 1 {
            return;
        }
    }
    panic!("only {threads:?} ran the loop, in 20 attempts");
}

/// Bridges under a 1 µs heartbeat and forced splits, on workers with 96 KiB stacks,
/// whose items run parallel loops of their own (so workers wait inside items and take
/// pullers meanwhile): a long one, and many short ones that end while idle workers ask
/// for work. Pullers are capped in number and fold a block between forks, so the stack
/// does not grow with the number of heartbeats; with only the started-sibling rule, the
/// short bridges overflowed these stacks in four runs out of four.
#[test]
fn a_long_bridge_keeps_its_nesting_bounded() {
    // The same forcing as the shared pool (`common::forced_split_pool`).
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(4)
        .force_splits(3)
        .heartbeat_interval(std::time::Duration::from_micros(1))
        .stack_size(STACK)
        .build()
        .unwrap();
    let n = 200_000u64;
    let sum: u64 = pool.install(|| {
        (0..n)
            .par_bridge()
            .map(|i| i + (0..i % 7).into_par_iter().filter(|&j| j > 7).count() as u64)
            .sum()
    });
    assert_eq!(sum, n * (n - 1) / 2);
    // Many short bridges whose items run inner loops.
    let v: Vec<u32> = (0..300).collect();
    for round in 0..300u32 {
        let count = pool.install(|| {
            v.iter()
                .par_bridge()
                .flat_map(|&x| (0..(x + round) % 5).into_par_iter())
                .count()
        });
        assert_eq!(
            count,
            v.iter().map(|&x| ((x + round) % 5) as usize).sum::<usize>()
        );
    }
}

/// The workers' stack size for the nesting test.
const STACK: usize = 96 * 1024;

#[test]
fn a_one_thread_pool_runs_the_source_in_order() {
    let pool = common::stress_pool(1);
    let v: Vec<u32> = pool.install(|| (0..1000u32).par_bridge().collect());
    assert!(v.iter().copied().eq(0..1000));
}

#[test]
fn a_panicking_loop_drops_every_item_once() {
    let counter = common::DropCounter::new();
    let tokens: Vec<_> = (0..1000).map(|_| counter.token()).collect();
    let seen = AtomicUsize::new(0);
    let r = catch_unwind(AssertUnwindSafe(|| {
        pool().install(|| {
            tokens.into_iter().par_bridge().for_each(|token| {
                if seen.fetch_add(1, Ordering::Relaxed) == 300 {
                    panic!("item panicked");
                }
                drop(token);
            })
        })
    }));
    assert!(r.is_err());
    assert_eq!(counter.created(), 1000);
    assert_eq!(counter.dropped(), 1000);
}

/// A source whose `next()` panics: the panic reaches the caller and the other pullers
/// stop at the poisoned lock instead of hanging.
#[test]
fn a_panicking_source_propagates() {
    let mut next = 0u32;
    let source = std::iter::from_fn(move || {
        next += 1;
        if next == 500 {
            panic!("source panicked");
        }
        Some(next)
    });
    let e = catch_unwind(AssertUnwindSafe(|| {
        pool().install(|| source.par_bridge().map(u64::from).sum::<u64>())
    }))
    .unwrap_err();
    assert_eq!(e.downcast_ref::<&str>(), Some(&"source panicked"));
    assert_eq!(pool().install(|| (0..10).par_bridge().sum::<i32>()), 45);
}
