//! The parallel sorts against `slice::sort` / `sort_unstable`: random, sorted, reversed,
//! all-equal, few-distinct and tiny inputs, stability, panicking comparators, and
//! comparators that mutate the elements they compare.
use crate::common;

use std::cell::Cell;
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread::ThreadId;
use std::time::Duration;

use proptest::prelude::*;
use sumac::prelude::*;

fn pool() -> &'static sumac::ThreadPool {
    static POOL: OnceLock<sumac::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        sumac::ThreadPoolBuilder::new()
            .num_threads(4)
            .heartbeat_interval(Duration::from_micros(1))
            .build()
            .unwrap()
    })
}

/// A deterministic pseudo-random sequence.
fn random(n: usize, seed: u64, modulo: u64) -> Vec<u64> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % modulo
        })
        .collect()
}

fn inputs() -> Vec<(String, Vec<u64>)> {
    let mut out = Vec::new();
    for n in [0, 1, 2, 3, 10, 2047, 2048, 2049, 5000, 40_000] {
        out.push((format!("random {n}"), random(n, 42 + n as u64, u64::MAX)));
        out.push((format!("few distinct {n}"), random(n, 7, 4)));
        out.push((format!("sorted {n}"), (0..n as u64).collect()));
        out.push((format!("reversed {n}"), (0..n as u64).rev().collect()));
        out.push((format!("all equal {n}"), vec![5; n]));
        let mut saw: Vec<u64> = (0..n as u64)
            .map(|i| if i % 2 == 0 { i } else { n as u64 - i })
            .collect();
        out.push((format!("sawtooth {n}"), saw.clone()));
        saw.sort();
        saw.rotate_left(n / 3);
        out.push((format!("rotated {n}"), saw));
    }
    out
}

#[test]
fn sorts_equal_std() {
    for (name, v) in inputs() {
        let mut expected = v.clone();
        expected.sort();
        for threads_pool in [true, false] {
            let run = |f: &(dyn Fn(&mut Vec<u64>) + Sync)| {
                let mut w = v.clone();
                if threads_pool {
                    pool().install(|| f(&mut w));
                } else {
                    f(&mut w);
                }
                w
            };
            assert_eq!(run(&|w| w.par_sort()), expected, "par_sort {name}");
            assert_eq!(
                run(&|w| w.par_sort_unstable()),
                expected,
                "par_sort_unstable {name}"
            );
            let mut desc = expected.clone();
            desc.reverse();
            assert_eq!(
                run(&|w| w.par_sort_by(|a, b| b.cmp(a))),
                desc,
                "par_sort_by {name}"
            );
            assert_eq!(
                run(&|w| w.par_sort_unstable_by(|a, b| b.cmp(a))),
                desc,
                "par_sort_unstable_by {name}"
            );
            let mut by_key = v.clone();
            by_key.sort_by_key(|x| x % 1000);
            assert_eq!(
                run(&|w| w.par_sort_by_key(|x| x % 1000)),
                by_key,
                "par_sort_by_key {name}"
            );
            let mut unstable_key = run(&|w| w.par_sort_unstable_by_key(|x| x % 1000));
            assert!(
                unstable_key.windows(2).all(|p| p[0] % 1000 <= p[1] % 1000),
                "{name}"
            );
            unstable_key.sort();
            assert_eq!(unstable_key, expected, "par_sort_unstable_by_key {name}");
        }
    }
}

#[test]
fn stable_sort_is_stable() {
    for n in [100, 3000, 50_000] {
        for distinct in [2, 10, 1000] {
            let keys = random(n, n as u64 + distinct, distinct);
            let pairs: Vec<(u64, usize)> =
                keys.into_iter().enumerate().map(|(i, k)| (k, i)).collect();
            let mut expected = pairs.clone();
            expected.sort_by_key(|p| p.0);
            let mut got = pairs.clone();
            pool().install(|| got.par_sort_by_key(|p| p.0));
            assert_eq!(got, expected);
            let mut got = pairs.clone();
            pool().install(|| got.par_sort_by(|a, b| a.0.cmp(&b.0)));
            assert_eq!(got, expected);
            let mut got = pairs.clone();
            pool().install(|| got.par_sort_by_cached_key(|p| p.0));
            assert_eq!(got, expected);
        }
    }
}

#[test]
fn sorts_strings() {
    let v: Vec<String> = random(30_000, 3, 100_000)
        .iter()
        .map(|x| format!("{x:x}"))
        .collect();
    let mut expected = v.clone();
    expected.sort();
    let mut a = v.clone();
    pool().install(|| a.par_sort());
    assert_eq!(a, expected);
    let mut b = v;
    pool().install(|| b.par_sort_unstable());
    assert_eq!(b, expected);
}

#[test]
fn zero_sized_elements() {
    let mut v = [(); 10_000];
    v.par_sort();
    v.par_sort_unstable();
    assert_eq!(v.len(), 10_000);
}

/// Sorts with a comparator that panics after `budget` comparisons; afterwards the slice
/// must hold every element exactly once.
fn check_panicking_comparator(n: usize, budget: usize, stable: bool) {
    let count = AtomicUsize::new(0);
    let panicked = check_keeps_every_element(n, n as u64 + budget as u64, stable, |a, b| {
        if count.fetch_add(1, Ordering::Relaxed) == budget {
            panic!("comparator gave up");
        }
        a.0.cmp(&b.0)
    });
    assert!(panicked || count.load(Ordering::Relaxed) <= budget);
}

#[test]
fn panicking_comparator_keeps_every_element() {
    for n in [0, 1, 2, 100, 3000, 20_000] {
        for budget in [0, 1, 50, 1000, 5000, 30_000, 200_000] {
            check_panicking_comparator(n, budget, true);
            check_panicking_comparator(n, budget, false);
        }
    }
}

/// Sorts boxed copies of `random(n, seed, 1000)` tagged with their original index, with
/// `compare`, catching a panic (the standard library's sorts may panic on a comparator
/// that is not a total order; so may ours). Afterwards the slice must hold every element
/// exactly once, in any order: a duplicated or lost element shows in the multiset (and a
/// double drop aborts the test). Returns whether the sort panicked.
fn check_keeps_every_element<F>(n: usize, seed: u64, stable: bool, compare: F) -> bool
where
    F: Fn(&(Box<u64>, usize), &(Box<u64>, usize)) -> std::cmp::Ordering + Sync,
{
    let v: Vec<(Box<u64>, usize)> = random(n, seed, 1000)
        .into_iter()
        .enumerate()
        .map(|(i, x)| (Box::new(x), i))
        .collect();
    let mut w = v.clone();
    let result = catch_unwind(AssertUnwindSafe(|| {
        pool().install(|| {
            if stable {
                w.par_sort_by(&compare)
            } else {
                w.par_sort_unstable_by(&compare)
            }
        })
    }));
    let mut before: Vec<(u64, usize)> = v.iter().map(|(b, i)| (**b, *i)).collect();
    let mut after: Vec<(u64, usize)> = w.iter().map(|(b, i)| (**b, *i)).collect();
    before.sort_unstable();
    after.sort_unstable();
    assert_eq!(before, after, "n {n}, stable {stable}");
    result.is_err()
}

/// A pseudo-random answer, from a shared counter.
fn coin(state: &AtomicUsize) -> std::cmp::Ordering {
    let x = state.fetch_add(0x9E37_79B9, Ordering::Relaxed);
    [
        std::cmp::Ordering::Less,
        std::cmp::Ordering::Equal,
        std::cmp::Ordering::Greater,
    ][(x >> 7) % 3]
}

/// Comparators that are not a total order may leave any order but must keep every
/// element exactly once: one that answers at random throughout, and one that is a total
/// order within each half of the input (so the stable sort's two leaves, sorted by the
/// standard library, come out sorted) but random between elements of different halves,
/// so that the merge itself sees the inconsistent answers.
#[test]
fn inconsistent_comparator_keeps_every_element() {
    for n in [2, 3, 100, 5000, 9000, 16_000, 40_000] {
        for stable in [true, false] {
            let state = AtomicUsize::new(n);
            let _ = check_keeps_every_element(n, n as u64 + 5, stable, |_, _| coin(&state));
            let _ = check_keeps_every_element(n, n as u64 + 6, stable, |a, b| {
                if (a.1 < n / 2) == (b.1 < n / 2) {
                    a.0.cmp(&b.0)
                } else {
                    coin(&state)
                }
            });
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_inputs(v in prop::collection::vec(any::<i32>(), 0..12_000), modulo in 1i32..100_000) {
        let v: Vec<i32> = v.into_iter().map(|x| x % modulo).collect();
        let mut expected = v.clone();
        expected.sort();
        let mut a = v.clone();
        pool().install(|| a.par_sort());
        prop_assert_eq!(&a, &expected);
        let mut b = v.clone();
        pool().install(|| b.par_sort_unstable());
        prop_assert_eq!(&b, &expected);
        let pairs: Vec<(i32, usize)> = v.iter().enumerate().map(|(i, &x)| (x % 17, i)).collect();
        let mut expected = pairs.clone();
        expected.sort_by_key(|p| p.0);
        let mut got = pairs.clone();
        pool().install(|| got.par_sort_by_key(|p| p.0));
        prop_assert_eq!(got, expected);
        let mut got = pairs;
        pool().install(|| got.par_sort_by_cached_key(|p| p.0.to_string()));
        let mut expected_by_string = got.clone();
        expected_by_string.sort_by_cached_key(|p| p.0.to_string());
        prop_assert_eq!(got, expected_by_string);
    }
}

/// A one-thread pool hands the sorts to the standard library: same results, and the
/// stable sort stays stable.
#[test]
fn one_thread_pools_sort_like_the_standard_library() {
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let keys = random(40_000, 9, 50);
    let mut pairs: Vec<(u64, usize)> = keys.iter().copied().zip(0..).collect();
    let mut expected = pairs.clone();
    expected.sort_by_key(|&(key, _)| key);
    pool.install(|| pairs.par_sort_by_key(|&(key, _)| key));
    assert_eq!(pairs, expected);

    let mut values = random(40_000, 11, u64::MAX);
    let mut expected = values.clone();
    expected.sort_unstable();
    pool.install(|| values.par_sort_unstable());
    assert_eq!(values, expected);
}

// ---------------------------------------------------------------------------------------
// Comparators with interior mutability (on the forced-split pool).

/// An element whose comparisons are counted inside it, through a `Cell` (interior
/// mutability, as a comparator may legally use).
struct Counted {
    key: u32,
    seen: Cell<u64>,
}

/// Every comparison the comparator makes mutates the two elements; the standard library
/// guarantees that such mutations are observed in the sorted slice. A sort that compares
/// an element after it made a bitwise copy of it loses the mutation (and, for an element
/// that owns heap memory it replaces, keeps a dangling copy: a double free).
#[test]
fn stable_sort_keeps_mutations_made_through_the_comparator() {
    for n in [9_000, 20_000, 50_000] {
        let mut v: Vec<Counted> = (0..n)
            .map(|i| Counted {
                key: (i as u32).wrapping_mul(2_654_435_761) % 1000,
                seen: Cell::new(0),
            })
            .collect();
        let calls = AtomicU64::new(0);
        common::forced_split_pool().install(|| {
            v.par_sort_by(|a, b| {
                a.seen.set(a.seen.get() + 1);
                b.seen.set(b.seen.get() + 1);
                calls.fetch_add(2, Ordering::Relaxed);
                a.key.cmp(&b.key)
            })
        });
        assert!(v.windows(2).all(|w| w[0].key <= w[1].key));
        let observed: u64 = v.iter().map(|c| c.seen.get()).sum();
        assert_eq!(
            observed,
            calls.load(Ordering::Relaxed),
            "n {n}: comparator mutations lost"
        );
    }
}

/// Sorts `input` `attempts` times on `pool` (stably or not) and tells whether any attempt
/// compared elements on more than one thread.
fn sort_spreads(pool: &sumac::ThreadPool, input: &[u64], stable: bool, attempts: usize) -> bool {
    static ATTEMPT: AtomicUsize = AtomicUsize::new(1);
    thread_local! {
        static SEEN_IN: Cell<usize> = const { Cell::new(0) };
    }
    (0..attempts).any(|_| {
        let attempt = ATTEMPT.fetch_add(1, Ordering::Relaxed);
        let threads = Mutex::new(HashSet::<ThreadId>::new());
        let compare = |a: &u64, b: &u64| {
            if SEEN_IN.with(|seen| seen.replace(attempt)) != attempt {
                threads.lock().unwrap().insert(std::thread::current().id());
            }
            a.cmp(b)
        };
        let mut v = input.to_vec();
        pool.install(|| {
            if stable {
                v.par_sort_by(compare);
            } else {
                v.par_sort_unstable_by(compare);
            }
        });
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
        let spread = threads.lock().unwrap().len() > 1;
        spread
    })
}

/// A piece of a sort of at least `LARGE_SORT_PIECE` elements is a large fork, which a
/// waiting worker gets as soon as it is recorded (`large-forks-at-once`), although
/// here no tick comes (they are an hour apart) and no request (switched off), and the
/// rescue, which runs at ticks, cannot take it either. Switched off, every attempt sorts
/// on the calling thread alone. Up to 5 attempts, as a woken worker may not get a core
/// in time on a loaded machine.
#[test]
fn a_big_piece_of_a_sort_reaches_a_waiting_worker_without_a_tick_or_request() {
    use sumac::Mechanism;
    let input = random(1 << 18, 11, u64::MAX);
    for stable in [false, true] {
        let pool = |on| {
            common::two_worker_pool_with(
                Duration::from_secs(3600),
                &[
                    (Mechanism::Requests, false),
                    (Mechanism::LargeForksAtOnce, on),
                ],
            )
        };
        assert!(
            sort_spreads(&pool(true), &input, stable, 5),
            "no sort reached a waiting worker (stable: {stable})"
        );
        assert!(
            !sort_spreads(&pool(false), &input, stable, 5),
            "something else shared the sort (stable: {stable})"
        );
    }
}
