//! Ordered searches (`find_first`, `find_last`, `position_*`, `find_map_*`) over ranges
//! longer than `usize::MAX` and through `flat_map`, where many pieces of the loop cover
//! the same position of the producer: they must still stop each other once a match
//! decides the answer (Rayon's tests/octillion.rs answers these in milliseconds), and
//! the answer must stay the sequential one.
use crate::common;

use std::time::Duration;

use proptest::prelude::*;
use sumac::prelude::*;

const OCTILLION: u128 = 1_000_000_000_000_000_000_000_000_000;

/// How long a search may run before the test calls it hung (each one here takes
/// milliseconds; a search whose pieces do not stop each other takes years).
const HANG: Duration = Duration::from_secs(20);

/// Runs `f` in a pool of `threads` workers on a thread of its own; panics if it has not
/// answered within [`HANG`] (the thread is then left behind).
fn within<R: Send + 'static>(
    what: &str,
    threads: usize,
    f: impl FnOnce() -> R + Send + 'static,
) -> R {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let pool = sumac::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("build pool");
        let _ = sender.send(pool.install(f));
    });
    match receiver.recv_timeout(HANG) {
        Ok(result) => result,
        Err(_) => panic!("{what} on {threads} threads: no answer within {HANG:?}"),
    }
}

fn long_range() -> sumac::range::Iter<u128> {
    (0..1u128 << 70).into_par_iter()
}

fn octillion_inclusive() -> sumac::range_inclusive::Iter<u128> {
    (0..=OCTILLION).into_par_iter()
}

/// 2^40 items, all from the inner loop of the outer range's one item.
fn flat() -> impl ParallelIterator<Item = u64> {
    (0u32..1)
        .into_par_iter()
        .flat_map(|_| (0u64..1 << 40).into_par_iter())
}

/// 2^40 items from two levels of `flat_map` (2 * 2 outer items, 2^38 inner ones each).
fn nested_flat() -> impl ParallelIterator<Item = u64> {
    (0u64..2).into_par_iter().flat_map(|a| {
        (0u64..2).into_par_iter().flat_map(move |b| {
            (0u64..1 << 38)
                .into_par_iter()
                .map(move |c| a << 39 | b << 38 | c)
        })
    })
}

// ------------------------------------------------------------------ find_last (2 threads)
//
// On one thread a search visits the pieces in order, so `find_last` reaches the last
// item only after all the others (2^40 to 2^90 of them): like Rayon's tests, these use
// two threads, where the second worker takes the upper halves of the loop.

#[test]
fn find_last_beyond_usize_max() {
    let last = within("find_last over 0..2^70", 2, || {
        long_range().find_last(|_| true)
    });
    assert_eq!(last, Some((1 << 70) - 1));
}

#[test]
fn find_last_octillion_inclusive() {
    let last = within("find_last over 0..=10^27", 2, || {
        octillion_inclusive().find_last(|_| true)
    });
    assert_eq!(last, Some(OCTILLION));
}

#[test]
fn find_last_whole_u128_inclusive() {
    let last = within("find_last over 0..=u128::MAX", 2, || {
        (0..=u128::MAX).into_par_iter().find_last(|_| true)
    });
    assert_eq!(last, Some(u128::MAX));
}

#[test]
fn find_last_through_flat_map() {
    let last = within("find_last through flat_map", 2, || {
        flat().find_last(|_| true)
    });
    assert_eq!(last, Some((1 << 40) - 1));
}

#[test]
fn find_last_through_nested_flat_map() {
    let last = within("find_last through nested flat_map", 2, || {
        nested_flat().find_last(|_| true)
    });
    assert_eq!(last, Some((1 << 40) - 1));
}

#[test]
fn find_map_last_beyond_usize_max() {
    let last = within("find_map_last over 0..2^70", 2, || {
        long_range().find_map_last(|x| (x % 7 == 3).then_some(x / 7))
    });
    assert_eq!(last, Some(((1 << 70) - 1 - 3) / 7));
    let last = within("find_map_last through flat_map", 2, || {
        flat().find_map_last(|x| (x % 5 == 1).then(|| x.to_string()))
    });
    let expected = ((1u64 << 40) - 1 - 1) / 5 * 5 + 1;
    assert_eq!(last, Some(expected.to_string()));
}

#[test]
fn position_last_over_usize_max_items() {
    // `0..usize::MAX` is indexed: its index span saturates like a longer range's.
    let last = within("position_last over 0..usize::MAX", 2, || {
        (0..usize::MAX).into_par_iter().position_last(|_| true)
    });
    assert_eq!(last, Some(usize::MAX - 1));
    let last = within("position_last over 0..2^40", 2, || {
        (0..1u64 << 40)
            .into_par_iter()
            .position_last(|x| x % 3 == 0)
    });
    assert_eq!(last, Some(((1 << 40) - 1) / 3 * 3));
}

/// Inner loops of 2^40 items for the outer items from 900 on, of one item before: the
/// 901st item of a two-level `flat_map` whose middle loop is one piece (`with_min_len`),
/// so that one folder takes its items one at a time off the front of its range.
fn after_many_items(middle: u32) -> impl ParallelIterator<Item = (u32, u64)> {
    (0u32..1).into_par_iter().flat_map(move |_| {
        (0..middle)
            .into_par_iter()
            .with_min_len(1000)
            .flat_map(|m| {
                let len = if m < 900 { 1 } else { 1 << 40 };
                (0..len).into_par_iter().map(move |x| (m, x))
            })
    })
}

#[test]
fn searches_after_many_flat_map_items() {
    for threads in [1, 2] {
        let first = within("find_first after 900 flat_map items", threads, || {
            after_many_items(1000).find_first(|&(m, x)| m >= 900 && x == 1000)
        });
        assert_eq!(first, Some((900, 1000)));
    }
    let last = within("find_last after 900 flat_map items", 2, || {
        after_many_items(901).find_last(|&(m, x)| m == 900 && x < (1 << 40) - 1000)
    });
    assert_eq!(last, Some((900, (1 << 40) - 1001)));
}

// ------------------------------------------------------ find_first (1 and 2 threads)

#[test]
fn find_first_counterparts() {
    for threads in [1, 2] {
        let first = within("find_first over 0..2^70", threads, || {
            long_range().find_first(|&x| x >= 3)
        });
        assert_eq!(first, Some(3));
        let first = within("find_first over 0..=10^27", threads, || {
            octillion_inclusive().find_first(|_| true)
        });
        assert_eq!(first, Some(0));
        let first = within("find_first through flat_map", threads, || {
            flat().find_first(|&x| x % 1000 == 999)
        });
        assert_eq!(first, Some(999));
        let first = within("find_first through nested flat_map", threads, || {
            nested_flat().find_first(|&x| x > 5)
        });
        assert_eq!(first, Some(6));
        let first = within("find_map_first over 0..2^70", threads, || {
            long_range().find_map_first(|x| (x % 11 == 10).then_some(x * 2))
        });
        assert_eq!(first, Some(20));
        let first = within("find_map_first through flat_map", threads, || {
            flat().find_map_first(|x| (x >= 7).then_some(x))
        });
        assert_eq!(first, Some(7));
        let first = within("position_first over 0..usize::MAX", threads, || {
            (0..usize::MAX).into_par_iter().position_first(|x| x >= 12)
        });
        assert_eq!(first, Some(12));
        let first = within("position_first over 0..2^40", threads, || {
            (0..1u64 << 40).into_par_iter().position_first(|x| x > 1)
        });
        assert_eq!(first, Some(2));
    }
}

#[test]
fn find_any_counterparts() {
    for threads in [1, 2] {
        let any = within("find_any over 0..2^70", threads, || {
            long_range().find_any(|&x| x % 2 == 1)
        });
        assert!(matches!(any, Some(x) if x % 2 == 1));
        let any = within("any through flat_map", threads, || flat().any(|x| x > 0));
        assert!(any);
    }
}

// --------------------------------------- ordered searches against the sequential answer

/// Outer items (each the lengths and contents of its inner sequences) for the
/// `flat_map` properties.
fn nested_data() -> impl Strategy<Value = Vec<Vec<Vec<u8>>>> {
    prop::collection::vec(
        prop::collection::vec(prop::collection::vec(0u8..8, 0..40), 0..8),
        0..40,
    )
}

/// A 2-thread pool with a 1 µs heartbeat (which forces no splits).
fn two_threads() -> &'static sumac::ThreadPool {
    static POOL: std::sync::OnceLock<sumac::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| common::stress_pool(2))
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 64,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// `find_first` / `find_last` through `flat_map` and through two levels of it; every
    /// item carries its sequential position, so the answer tells which match was taken.
    #[test]
    fn ordered_searches_through_flat_map(data in nested_data(), want in 0u8..8) {
        let flat: Vec<Vec<(usize, u8)>> = {
            let mut n = 0;
            data.iter()
                .map(|outer| {
                    outer.iter().flatten().map(|&x| { n += 1; (n - 1, x) }).collect()
                })
                .collect()
        };
        let nested: Vec<Vec<Vec<(usize, u8)>>> = {
            let mut n = 0;
            data.iter()
                .map(|outer| {
                    outer.iter()
                        .map(|inner| inner.iter().map(|&x| { n += 1; (n - 1, x) }).collect())
                        .collect()
                })
                .collect()
        };
        let seq: Vec<(usize, u8)> = flat.iter().flatten().copied().collect();
        let hit = |&(_, x): &(usize, u8)| x == want;
        let first = seq.iter().copied().find(hit);
        let last = seq.iter().copied().rfind(hit);
        common::forced_split_pool().install(|| {
            let one = || flat.par_iter().flat_map(|v| v.par_iter().copied());
            prop_assert_eq!(one().find_first(hit), first);
            prop_assert_eq!(one().find_last(hit), last);
            prop_assert_eq!(one().find_map_first(|p| hit(&p).then_some(p.0)), first.map(|p| p.0));
            prop_assert_eq!(one().find_map_last(|p| hit(&p).then_some(p.0)), last.map(|p| p.0));
            let two = || {
                nested.par_iter().flat_map(|o| o.par_iter().flat_map(|v| v.par_iter().copied()))
            };
            prop_assert_eq!(two().find_first(hit), first);
            prop_assert_eq!(two().find_last(hit), last);
            prop_assert_eq!(two().find_any(hit).is_some(), first.is_some());
            Ok(())
        })?;
    }

    /// `position_first` / `position_last` over outer items whose predicate searches
    /// their inner sequences through `flat_map` (nested ordered searches).
    #[test]
    fn positions_of_flat_map_searches(data in nested_data(), want in 0u8..8) {
        let has = |outer: &Vec<Vec<u8>>| outer.iter().flatten().any(|&x| x == want);
        let first = data.iter().position(has);
        let last = data.iter().rposition(has);
        common::forced_split_pool().install(|| {
            let par_has = |outer: &Vec<Vec<u8>>| {
                outer.par_iter().flat_map(|v| v.par_iter()).find_first(|&&x| x == want).is_some()
            };
            prop_assert_eq!(data.par_iter().position_first(par_has), first);
            prop_assert_eq!(data.par_iter().position_last(par_has), last);
            let par_has_last = |outer: &Vec<Vec<u8>>| {
                outer.par_iter().flat_map(|v| v.par_iter()).find_last(|&&x| x == want).is_some()
            };
            prop_assert_eq!(data.par_iter().position_first(par_has_last), first);
            prop_assert_eq!(data.par_iter().position_last(par_has_last), last);
            Ok(())
        })?;
    }

}

proptest! {
    // Each case searches ranges of 2^66 items, which takes 0.1-0.2 s in a debug build.
    #![proptest_config(ProptestConfig { cases: 16, ..config() })]

    /// Searches over long ranges (made-up positions) against the arithmetic answer,
    /// with forced splits (`find_last` on two threads: with four on this 2-core machine,
    /// the worker holding the pieces near the end is often descheduled, and the others
    /// keep searching earlier pieces meanwhile, which makes a case take seconds).
    #[test]
    fn long_range_searches(start in 0u128..1 << 100, lo in 0u128..5000, len in 1u128..5000) {
        let end = start + (1 << 66);
        let (a, b) = (start + lo, start + lo + len);
        common::forced_split_pool().install(|| {
            let inside = |x: &u128| (a..b).contains(x);
            prop_assert_eq!((start..end).into_par_iter().find_first(inside), Some(a));
            prop_assert_eq!((start..=end).into_par_iter().find_first(|&x| x >= b), Some(b));
            Ok(())
        })?;
        two_threads().install(|| {
            prop_assert_eq!(
                (start..end).into_par_iter().find_last(|&x| x < end - lo),
                Some(end - lo - 1)
            );
            prop_assert_eq!(
                (start..=end).into_par_iter().find_map_last(|x| (x <= end - lo).then_some(x)),
                Some(end - lo)
            );
            Ok(())
        })?;
    }
}
