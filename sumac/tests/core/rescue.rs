//! Jobs waiting behind code that makes no forks are still shared (the rescue offers, see
//! `RescueSlot`): the second closure of a `join` whose first closure is one long
//! sequential leaf, every level of a tree of such joins, a scope's spawned jobs while
//! another spawned job or the scope's body runs, the items of a loop whose items run
//! long, and panics and drops in every position while the heartbeat thread claims jobs.
//!
//! A worker polls its heartbeat flag only at forks and between loop blocks, so without
//! the rescue each test below waits for a partner that can only start after it finished:
//! the meeting then fails after `MEET_LIMIT` (a hang check, not a timing assertion).
use crate::common;

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{panic_message, pool_with_heartbeat, stress_pool, DropCounter};

/// How long a closure waits for its partners before it reports that they never ran
/// beside it. Nothing that works comes anywhere near it.
const MEET_LIMIT: Duration = Duration::from_secs(20);

/// Spins, without forking, until `n` callers arrived at `count` (false after
/// `MEET_LIMIT`).
fn meet(count: &AtomicUsize, n: usize) -> bool {
    common::meet(count, n, MEET_LIMIT)
}

/// Two-thread pools with the default interval and with a 1 µs heartbeat.
fn pools() -> [sumac::ThreadPool; 2] {
    [
        pool_with_heartbeat(2, Duration::from_micros(100)),
        stress_pool(2),
    ]
}

#[test]
fn join_shares_b_while_a_runs_without_forks() {
    for pool in pools() {
        let before = pool.stats();
        for round in 0..10 {
            let count = AtomicUsize::new(0);
            let (a, b) = pool.install(|| sumac::join(|| meet(&count, 2), || meet(&count, 2)));
            assert!(a && b, "round {round}: b never ran while a did");
        }
        let promotions = pool.stats().since(&before).total().promotions;
        assert!(
            promotions >= 10,
            "each rescue counts as a promotion: {promotions}"
        );
    }
}

/// A worker spinning for work rescues a fork waiting behind a leaf at the renewals of its
/// request (`spinners-rescue`), without waiting for a tick: with ticks an hour apart, the
/// second closure of a `join` whose first closure spins without forks still runs beside
/// it. The first closure spawns an empty job now and then, which wakes a worker that then
/// spins (a spawn records no fork and polls no flag). Switched off, nothing takes the
/// second closure before the first gives up.
#[test]
fn a_spinning_worker_rescues_a_fork_behind_a_leaf_without_waiting_for_a_tick() {
    use sumac::Mechanism;
    /// How long the first closure waits for the second.
    const WAIT: Duration = Duration::from_secs(2);
    /// How often it spawns a job to wake a worker.
    const WAKE_EVERY: Duration = Duration::from_millis(2);
    fn met(on: bool) -> bool {
        let pool = common::two_worker_pool_with(
            Duration::from_secs(3600),
            &[(Mechanism::SpinnersRescue, on)],
        );
        let arrived = AtomicBool::new(false);
        let (a, ()) = pool.install(|| {
            sumac::join(
                || {
                    let start = Instant::now();
                    while start.elapsed() < WAIT {
                        sumac::spawn(|| ());
                        let wake = Instant::now();
                        while wake.elapsed() < WAKE_EVERY {
                            if arrived.load(Ordering::SeqCst) {
                                return true;
                            }
                            std::hint::spin_loop();
                        }
                    }
                    false
                },
                || arrived.store(true, Ordering::SeqCst),
            )
        });
        a
    }
    assert!(
        met(true),
        "no spinning worker took the fork behind the leaf"
    );
    assert!(!met(false), "something else rescued the fork");
}

#[test]
fn join_from_outside_the_pool_shares_b_too() {
    for pool in pools() {
        let count = AtomicUsize::new(0);
        let (a, b) = pool.join(|| meet(&count, 2), || meet(&count, 2));
        assert!(a && b);
    }
}

#[test]
fn scope_spawns_run_beside_each_other_and_beside_the_body() {
    for pool in pools() {
        for _ in 0..5 {
            let count = AtomicUsize::new(0);
            let met = AtomicUsize::new(0);
            pool.scope(|s| {
                for _ in 0..2 {
                    s.spawn(|_| {
                        if meet(&count, 2) {
                            met.fetch_add(1, Ordering::SeqCst);
                        }
                    });
                }
            });
            assert_eq!(
                met.load(Ordering::SeqCst),
                2,
                "the spawned jobs ran one by one"
            );

            let count = AtomicUsize::new(0);
            let (mut job_met, mut body_met) = (false, false);
            pool.scope(|s| {
                s.spawn(|_| job_met = meet(&count, 2));
                body_met = meet(&count, 2);
            });
            assert!(job_met && body_met, "the spawned job waited for the body");
        }
    }
}

#[test]
fn fifo_scopes_and_installed_scopes_share_their_spawns() {
    for pool in pools() {
        let count = AtomicUsize::new(0);
        let (mut job_met, mut body_met) = (false, false);
        pool.install(|| {
            sumac::scope_fifo(|s| {
                s.spawn_fifo(|_| job_met = meet(&count, 2));
                body_met = meet(&count, 2);
            })
        });
        assert!(job_met && body_met);
    }
}

/// How many leaves of a balanced tree of `join`s, `depth` levels above its leaves, met
/// `n` others at `count` (each leaf waits with `meet`).
fn join_tree_meets_with(
    depth: u32,
    count: &AtomicUsize,
    n: usize,
    meet: fn(&AtomicUsize, usize) -> bool,
) -> usize {
    if depth == 0 {
        return usize::from(meet(count, n));
    }
    let (a, b) = sumac::join(
        || join_tree_meets_with(depth - 1, count, n, meet),
        || join_tree_meets_with(depth - 1, count, n, meet),
    );
    a + b
}

/// [`join_tree_meets_with`] whose leaves spin while they wait.
fn join_tree_meets(depth: u32, count: &AtomicUsize, n: usize) -> usize {
    join_tree_meets_with(depth, count, n, meet)
}

#[test]
fn every_recorded_fork_of_a_join_tree_is_offered() {
    // Worker 0 records (and offers) one fork per level on its way down to its first
    // leaf, and so does every worker that takes one of them: with one worker per leaf,
    // all the leaves of trees of up to three levels meet (`recorded_forks_limit`). With one
    // offer per worker only, the depth-2 tree ran three of its leaves at once.
    for (threads, depth) in [(4, 2), (8, 3)] {
        let pools = [
            pool_with_heartbeat(threads, Duration::from_micros(100)),
            stress_pool(threads),
        ];
        for pool in pools {
            for round in 0..3 {
                let leaves = 1 << depth;
                let count = AtomicUsize::new(0);
                let met = pool.install(|| join_tree_meets(depth, &count, leaves));
                assert_eq!(met, leaves, "depth {depth}, round {round}");
            }
        }
    }
}

#[test]
fn a_panic_in_a_waits_for_the_rescued_b() {
    for pool in pools() {
        for panics_in_a in [true, false] {
            let count = AtomicUsize::new(0);
            let finished = AtomicUsize::new(0);
            let result = panic::catch_unwind(AssertUnwindSafe(|| {
                pool.install(|| {
                    sumac::join(
                        || {
                            let met = meet(&count, 2);
                            finished.fetch_add(1, Ordering::SeqCst);
                            assert!(met, "never met");
                            assert!(!panics_in_a, "a");
                        },
                        || {
                            let met = meet(&count, 2);
                            // Outlast `a`, so that its panic must wait for this closure.
                            std::thread::sleep(Duration::from_millis(5));
                            finished.fetch_add(1, Ordering::SeqCst);
                            assert!(met, "never met");
                            assert!(panics_in_a, "b");
                        },
                    )
                })
            }));
            let expected = if panics_in_a { "a" } else { "b" };
            assert_eq!(panic_message(&*result.unwrap_err()), expected);
            assert_eq!(finished.load(Ordering::SeqCst), 2, "both closures finished");
        }
    }
}

/// Waits until every worker of `pool` sleeps (a sleeping worker has counted one more
/// sleep than wake-ups), so that the next call into the pool finds the others idle.
fn wait_until_all_asleep(pool: &sumac::ThreadPool) {
    let start = Instant::now();
    while !pool
        .stats()
        .workers
        .iter()
        .all(|w| w.sleeps == w.wakeups + 1)
    {
        assert!(start.elapsed() < MEET_LIMIT, "the workers never all slept");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_loop_whose_first_item_runs_long_shares_the_rest() {
    use sumac::prelude::*;
    for pool in pools() {
        for items in [2usize, 3, 5] {
            wait_until_all_asleep(&pool);
            // The first item to start waits for a second one: only a loop whose rest was
            // handed to another worker while its first item ran lets them meet.
            let count = AtomicUsize::new(0);
            let met: Vec<bool> = pool.install(|| {
                (0..items)
                    .into_par_iter()
                    .map(|_| meet(&count, 2))
                    .collect()
            });
            assert!(met.iter().all(|&m| m), "{items} items: {met:?}");
        }
    }
}

#[test]
fn a_loop_of_long_items_runs_one_per_worker() {
    use sumac::prelude::*;
    // Every item waits for all the others: the rest of the loop, handed to another
    // worker while the first item ran, is halved down to single items before any of
    // them runs, so no item hides behind another one on the same worker.
    for threads in [4, 8] {
        let pool = pool_with_heartbeat(threads, Duration::from_micros(100));
        for round in 0..3 {
            wait_until_all_asleep(&pool);
            let count = AtomicUsize::new(0);
            let items: Vec<(usize, bool)> = pool.install(|| {
                (0..threads)
                    .into_par_iter()
                    .map(|i| (i, meet(&count, threads)))
                    .collect()
            });
            let expected: Vec<(usize, bool)> = (0..threads).map(|i| (i, true)).collect();
            assert_eq!(items, expected, "{threads} threads, round {round}");
        }
    }
}

/// [`meet`], sleeping between looks rather than spinning, so that many more workers
/// than the machine has cores can wait at once and leave the cores to the heartbeat
/// thread.
fn meet_sleeping(count: &AtomicUsize, n: usize) -> bool {
    count.fetch_add(1, Ordering::SeqCst);
    let start = Instant::now();
    while count.load(Ordering::SeqCst) < n {
        if start.elapsed() > MEET_LIMIT {
            return false;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    true
}

#[test]
fn a_loop_of_long_items_runs_one_per_worker_on_a_wide_pool() {
    use sumac::prelude::*;
    // 32 items on 32 workers, each waiting for all the others: the rest of the loop is
    // halved five times before any item runs, and every half must reach a worker of its
    // own (shared at once as known-big work, or rescued while its worker waits).
    let threads = 32;
    let pool = pool_with_heartbeat(threads, Duration::from_micros(100));
    for round in 0..2 {
        wait_until_all_asleep(&pool);
        let count = AtomicUsize::new(0);
        let met: Vec<bool> = pool.install(|| {
            (0..threads)
                .into_par_iter()
                .map(|_| meet_sleeping(&count, threads))
                .collect()
        });
        assert!(met.iter().all(|&m| m), "round {round}: {met:?}");
    }
}

#[test]
fn a_join_tree_as_deep_as_a_wide_pool_runs_one_leaf_per_worker() {
    // 16 leaves on 16 workers and 32 on 32, each waiting for all the others: worker 0
    // records one fork per level on its way down to its first leaf, so it must record
    // log2(threads) of them. With three, its bottom join was two direct calls and its
    // first two leaves ran one after the other (15 of 16 leaves met at most).
    for (threads, depth) in [(16, 4), (32, 5)] {
        let pool = pool_with_heartbeat(threads, Duration::from_micros(100));
        for round in 0..2 {
            wait_until_all_asleep(&pool);
            let leaves = 1 << depth;
            let count = AtomicUsize::new(0);
            let met = pool.install(|| join_tree_meets_with(depth, &count, leaves, meet_sleeping));
            assert_eq!(met, leaves, "{threads} threads, round {round}");
        }
    }
}

#[test]
fn the_items_after_a_long_one_are_split_apart_before_any_runs() {
    use std::sync::atomic::AtomicBool;
    use sumac::prelude::*;
    // The loop starts while every other worker is busy, so it times its first item
    // (which runs long, and lets the others go) before it splits. Then its other items
    // wait for each other: they meet only if the rest was halved down to single items
    // at once, rather than each half running its own first item before splitting on.
    let threads = 4;
    // `install` on a worker, so that the pool has exactly `threads` members.
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(threads)
        .heartbeat_interval(Duration::from_micros(100))
        .callers_take_part(false)
        .build()
        .unwrap();
    for round in 0..3 {
        let started = AtomicUsize::new(0);
        let release = AtomicBool::new(false);
        let count = AtomicUsize::new(0);
        let met: Vec<bool> = pool.install(|| {
            sumac::scope(|s| {
                for _ in 1..threads {
                    s.spawn(|_| {
                        started.fetch_add(1, Ordering::SeqCst);
                        while !release.load(Ordering::SeqCst) {
                            std::hint::spin_loop();
                        }
                    });
                }
                while started.load(Ordering::SeqCst) < threads - 1 {
                    std::thread::yield_now();
                }
                (0..=threads)
                    .into_par_iter()
                    .map(|i| {
                        if i == 0 {
                            release.store(true, Ordering::SeqCst);
                            let start = Instant::now();
                            while start.elapsed() < Duration::from_micros(200) {
                                std::hint::spin_loop();
                            }
                            true
                        } else {
                            meet(&count, threads)
                        }
                    })
                    .collect()
            })
        });
        assert!(met.iter().all(|&m| m), "round {round}: {met:?}");
    }
}

/// Busy work of about `units` microseconds' worth of loop iterations, with no forks.
fn busy(units: u64) -> u64 {
    (0..units * 200).fold(0u64, |acc, i| std::hint::black_box(acc.wrapping_add(i)))
}

#[test]
fn claims_racing_withdrawals_run_every_closure_once() {
    // Leaves of 0-20 µs under a 1 µs heartbeat: the heartbeat thread claims offers just
    // as their owners withdraw them, over and over. Every closure must run and be
    // dropped exactly once, and the sums must match.
    let pool = stress_pool(3);
    let counter = DropCounter::new();
    let runs = AtomicUsize::new(0);
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..2_000 {
        let (a_units, b_units, nested) = (next() % 20, next() % 20, next() % 4 == 0);
        let (ta, tb) = (counter.token(), counter.token());
        let (runs, counter) = (&runs, &counter);
        let (x, y) = pool.install(|| {
            sumac::join(
                move || {
                    let _ta = ta;
                    runs.fetch_add(1, Ordering::Relaxed);
                    if nested {
                        let tc = counter.token();
                        let (p, q) = sumac::join(
                            || busy(a_units),
                            move || {
                                let _tc = tc;
                                busy(b_units)
                            },
                        );
                        p.wrapping_add(q)
                    } else {
                        busy(a_units)
                    }
                },
                move || {
                    let _tb = tb;
                    runs.fetch_add(1, Ordering::Relaxed);
                    busy(b_units)
                },
            )
        });
        let expected_a = if nested {
            busy(a_units).wrapping_add(busy(b_units))
        } else {
            busy(a_units)
        };
        assert_eq!((x, y), (expected_a, busy(b_units)));
    }
    assert_eq!(runs.load(Ordering::Relaxed), 4_000);
    assert_eq!(counter.created(), counter.dropped());
}

/// A tree of `join`s, `depth` levels above leaves of 0-19 µs of busy work drawn from
/// `seed`; every closure holds a drop token and counts its run. Returns the leaves' sum.
fn token_tree(depth: u32, seed: u64, counter: &DropCounter, runs: &AtomicUsize) -> u64 {
    runs.fetch_add(1, Ordering::Relaxed);
    if depth == 0 {
        return busy(seed % 20);
    }
    let (ta, tb) = (counter.token(), counter.token());
    let (a, b) = sumac::join(
        move || {
            let _ta = ta;
            token_tree(depth - 1, mix(seed, 1), counter, runs)
        },
        move || {
            let _tb = tb;
            token_tree(depth - 1, mix(seed, 2), counter, runs)
        },
    );
    a.wrapping_add(b)
}

/// [`token_tree`]'s sum, computed sequentially.
fn token_tree_sum(depth: u32, seed: u64) -> u64 {
    if depth == 0 {
        return busy(seed % 20);
    }
    token_tree_sum(depth - 1, mix(seed, 1)).wrapping_add(token_tree_sum(depth - 1, mix(seed, 2)))
}

/// A child seed.
fn mix(seed: u64, child: u64) -> u64 {
    (seed ^ child.wrapping_mul(0x9e37_79b9_7f4a_7c15)).wrapping_mul(0xbf58_476d_1ce4_e5b9) >> 7
}

#[test]
fn claims_from_several_slots_run_every_closure_once() {
    // Trees of one to three levels of joins under a 1 µs heartbeat: a worker has up to
    // three forks on offer, and the heartbeat thread claims them in any order while
    // their owner withdraws, promotes or runs the others.
    let pool = stress_pool(3);
    let counter = DropCounter::new();
    let runs = AtomicUsize::new(0);
    let mut expected_runs = 0;
    for round in 0..1_000u64 {
        let depth = 1 + (round % 3) as u32;
        let seed = mix(round, 3);
        let sum = pool.install(|| token_tree(depth, seed, &counter, &runs));
        assert_eq!(sum, token_tree_sum(depth, seed), "round {round}");
        expected_runs += (2 << depth) - 1;
    }
    assert_eq!(runs.load(Ordering::Relaxed), expected_runs);
    assert_eq!(counter.created(), counter.dropped());
}
