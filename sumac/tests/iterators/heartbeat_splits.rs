//! Parallel loops split on real heartbeats (these pools force no splits): work spreads
//! over the pool's workers, and results stay in order.

use std::collections::HashSet;
use std::hint::black_box;
use std::time::{Duration, Instant};

use sumac::prelude::*;

fn pool(threads: usize) -> sumac::ThreadPool {
    sumac::ThreadPoolBuilder::new()
        .num_threads(threads)
        .heartbeat_interval(Duration::from_micros(1))
        .build()
        .unwrap()
}

/// Busy work for about `micros` microseconds.
fn spin(micros: u64) -> u64 {
    let start = Instant::now();
    let mut x = 0u64;
    while start.elapsed() < Duration::from_micros(micros) {
        x = black_box(x.wrapping_add(1));
    }
    x
}

/// A 20 ms loop reaches other workers. Up to 20 attempts, as a woken worker may not get
/// a core in time on a loaded machine; a loop that never shares fails all 20.
#[test]
fn a_long_loop_spreads_over_workers() {
    let pool = pool(4);
    let mut threads = HashSet::new();
    for _attempt in 0..20 {
        threads = pool.install(|| {
            (0..4000)
                .into_par_iter()
                .map(|_| {
                    spin(5);
                    sumac::current_thread_index()
                })
                .collect::<HashSet<Option<usize>>>()
        });
        if threads.len() > 1 {
            assert!(pool.stats().total().promotions > 0);
            return;
        }
    }
    panic!("only {threads:?} ran the loop, in 20 attempts");
}

/// With a 10-second heartbeat no fork ever ages into being shared during this test, so
/// the loop can only spread because it timed its iterations and marked its upper halves
/// as worth sharing at once, when the idle workers asked for work.
///
/// An idle worker asks only while it spins, for up to 200 µs (then it sleeps, and with
/// this heartbeat nothing raises flags for it), so each attempt first runs a broadcast:
/// both workers then start the attempt in their spin. (Without it only the first attempt
/// could succeed, and on a loaded machine the spinning worker, which yields its core
/// between looks, was sometimes descheduled past its spin before the loop split: 2 runs
/// in 60 failed.)
#[test]
fn a_timed_loop_is_shared_without_waiting_for_the_heartbeat() {
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(2)
        .heartbeat_interval(Duration::from_secs(10))
        .build()
        .unwrap();
    for _attempt in 0..20 {
        pool.broadcast(|_| ());
        let threads: HashSet<Option<usize>> = pool.install(|| {
            (0..200)
                .into_par_iter()
                .map(|_| {
                    spin(50);
                    sumac::current_thread_index()
                })
                .collect()
        });
        if threads.len() > 1 {
            assert!(pool.stats().total().promotions > 0);
            return;
        }
    }
    panic!("a 10 ms loop never reached the idle worker in 20 attempts");
}

/// A loop that starts while a worker spins for work splits after its first timed block
/// and hands its upper half over at once (`next-phase-split`), although nobody asks:
/// here idle workers raise no requests and ticks are an hour apart. Each attempt first
/// runs a broadcast, so that the workers start it in their spin; up to 20 attempts. The
/// loop lasts 10 ms, so that on a loaded machine the worker gets a core before the
/// caller would take the queued half back. Switched off, nothing ever shares the loop:
/// no flag is raised, which a split of `eager-split` would need, and no tick or request
/// comes, which a rescue would, so all 20 attempts run it on the caller alone.
#[test]
fn a_loop_started_beside_a_spinning_worker_splits_without_being_asked() {
    use std::thread::ThreadId;
    use sumac::Mechanism;
    fn spreads(on: bool) -> bool {
        let pool = crate::common::two_worker_pool_with(
            Duration::from_secs(3600),
            &[
                (Mechanism::Requests, false),
                (Mechanism::NextPhaseSplit, on),
            ],
        );
        (0..20).any(|_| {
            pool.broadcast(|_| ());
            let threads: HashSet<ThreadId> = pool.install(|| {
                (0..2_000)
                    .into_par_iter()
                    .map(|_| {
                        spin(5);
                        std::thread::current().id()
                    })
                    .collect()
            });
            threads.len() > 1
        })
    }
    assert!(
        spreads(true),
        "no loop reached the spinning worker in 20 attempts"
    );
    assert!(!spreads(false), "something else shared the loop");
}

#[test]
fn order_is_kept_under_heartbeat_splits() {
    let pool = pool(4);
    for _ in 0..20 {
        let v: Vec<u32> = pool.install(|| {
            (0..20_000u32)
                .into_par_iter()
                .map(|x| x.wrapping_mul(2_654_435_761))
                .collect()
        });
        let expected: Vec<u32> = (0..20_000u32)
            .map(|x| x.wrapping_mul(2_654_435_761))
            .collect();
        assert_eq!(v, expected);
        let s: String = pool.install(|| {
            (0..3000)
                .into_par_iter()
                .map(|d| char::from(b'a' + (d % 26) as u8))
                .collect()
        });
        assert_eq!(
            s,
            (0..3000)
                .map(|d| char::from(b'a' + (d % 26) as u8))
                .collect::<String>()
        );
        let first = pool.install(|| {
            (0..100_000u64)
                .into_par_iter()
                .find_first(|x| x % 9973 == 9972)
        });
        assert_eq!(first, Some(9972));
    }
}

#[test]
fn nested_loops_split_and_stay_correct() {
    let pool = pool(4);
    let sums: Vec<u64> = pool.install(|| {
        (0..8u64)
            .into_par_iter()
            .map(|i| {
                (0..500u64)
                    .into_par_iter()
                    .map(|j| {
                        spin(2);
                        i * j
                    })
                    .sum()
            })
            .collect()
    });
    let expected: Vec<u64> = (0..8u64)
        .map(|i| (0..500u64).map(|j| i * j).sum())
        .collect();
    assert_eq!(sums, expected);
}

/// A single outer item whose inner loop is long: the inner loop of `flat_map` splits at
/// heartbeats like any other, so its items spread over the workers (up to 20 attempts,
/// as on a loaded machine a woken worker may not get a core in time).
#[test]
fn the_inner_loop_of_flat_map_spreads_over_workers() {
    let pool = pool(4);
    let mut distinct = HashSet::new();
    for _attempt in 0..20 {
        let threads: Vec<Option<usize>> = pool.install(|| {
            (0..1u32)
                .into_par_iter()
                .flat_map(|_| {
                    (0..4000).into_par_iter().map(|_| {
                        spin(5);
                        sumac::current_thread_index()
                    })
                })
                .collect()
        });
        assert_eq!(threads.len(), 4000);
        distinct = threads.into_iter().collect();
        if distinct.len() > 1 {
            return;
        }
    }
    panic!("only {distinct:?} ran the inner loop, in 20 attempts");
}

/// A halting loop stops every piece soon after the halting item: with the `None` first,
/// far fewer than all million items are looked at.
#[test]
fn while_some_and_try_reduce_halt_the_whole_loop() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let pool = pool(4);
    let seen = AtomicUsize::new(0);
    let look = |x: u32| {
        seen.fetch_add(1, Ordering::Relaxed);
        if x == 0 {
            None
        } else {
            Some(x)
        }
    };
    let kept = pool.install(|| {
        (0..1_000_000u32)
            .into_par_iter()
            .map(look)
            .while_some()
            .count()
    });
    let looked = seen.swap(0, Ordering::Relaxed);
    assert!(looked > kept, "the None was looked at too");
    assert!(
        looked < 500_000,
        "looked at {looked} items after a halt at the first"
    );
    let sum = pool.install(|| {
        (0..1_000_000u32)
            .into_par_iter()
            .map(look)
            .try_reduce(|| 0, |a, b| Some(a + b))
    });
    assert_eq!(sum, None);
    let looked = seen.load(Ordering::Relaxed);
    assert!(
        looked < 500_000,
        "looked at {looked} items after a failure at the first"
    );
}

#[test]
fn an_expensive_body_is_split_after_the_first_item() {
    // Two items of ~20 ms each: the second must run on another worker while the first
    // runs, so the whole loop takes well under the sequential 40 ms... unless the
    // machine is too loaded to start another thread; only check it completes in order.
    let pool = pool(2);
    let t = Instant::now();
    let v: Vec<usize> = pool.install(|| {
        (0..2usize)
            .into_par_iter()
            .map(|i| {
                spin(20_000);
                i
            })
            .collect()
    });
    assert_eq!(v, [0, 1]);
    eprintln!("two 20 ms items on 2 threads took {:?}", t.elapsed());
}

#[test]
fn a_one_thread_pool_runs_a_loop_as_one_piece_unless_max_len_says_otherwise() {
    // On its worker: a caller taking part would be a second member to split for.
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(1)
        .heartbeat_interval(Duration::from_micros(1))
        .callers_take_part(false)
        .build()
        .unwrap();
    // Items this expensive make the driver of a bigger pool split after the first item.
    let pieces: Vec<usize> = pool.install(|| {
        (0..50)
            .into_par_iter()
            .fold(
                || 0usize,
                |n, _| {
                    // (`spin` may return 0 if the thread was descheduled right away.)
                    black_box(spin(20));
                    n + 1
                },
            )
            .collect()
    });
    assert_eq!(pieces, vec![50]);
    let pieces: Vec<usize> = pool.install(|| {
        (0..1000)
            .into_par_iter()
            .with_max_len(10)
            .fold(|| 0usize, |n, _| n + 1)
            .collect()
    });
    assert!(
        pieces.len() >= 100 && pieces.iter().all(|&n| n <= 10),
        "{pieces:?}"
    );
    assert_eq!(pieces.iter().sum::<usize>(), 1000);
}
