//! Drop accounting when closures panic midway (every item dropped exactly once: no leak,
//! no double drop), and panic propagation from `for_each`, `map`, `reduce` and the inner
//! loops of `flat_map`.
mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{IdLedger, Tracked};
use sumac::prelude::*;

fn pool() -> &'static sumac::ThreadPool {
    common::forced_split_pool()
}

const N: usize = 500;

fn quiet<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    catch_unwind(AssertUnwindSafe(f))
}

#[test]
fn vec_source_with_panicking_for_each() {
    for k in [0, 1, 17, 250, N - 1] {
        let ledger = IdLedger::new(N);
        let v: Vec<Tracked> = (0..N).map(|i| ledger.make(i)).collect();
        let r = quiet(|| {
            pool().install(|| {
                v.into_par_iter().for_each(|t| {
                    if t.id == k {
                        panic!("boom at {k}");
                    }
                })
            })
        });
        assert!(r.is_err());
        ledger.assert_balanced();
        assert_eq!(ledger.created(), N);
    }
}

#[test]
fn vec_source_with_panicking_map_into_collect() {
    for k in [0, 3, 123, N - 1] {
        let ledger = IdLedger::new(N);
        let v: Vec<Tracked> = (0..N).map(|i| ledger.make(i)).collect();
        let r = quiet(|| {
            pool().install(|| {
                v.into_par_iter()
                    .map(|t| if t.id == k { panic!("boom") } else { t })
                    .collect::<Vec<_>>()
            })
        });
        assert!(r.is_err());
        ledger.assert_balanced();
    }
}

#[test]
fn indexed_collect_with_panicking_map() {
    for k in [0, 9, 300, N - 1] {
        let ledger = IdLedger::new(N);
        let r = quiet(|| {
            pool().install(|| {
                (0..N)
                    .into_par_iter()
                    .map(|i| {
                        if i == k {
                            panic!("boom");
                        }
                        ledger.make(i)
                    })
                    .collect::<Vec<_>>()
            })
        });
        assert!(r.is_err());
        ledger.assert_balanced();
    }
}

#[test]
fn unindexed_collect_with_panicking_filter() {
    let ledger = IdLedger::new(N);
    let r = quiet(|| {
        pool().install(|| {
            (0..N)
                .into_par_iter()
                .filter(|i| {
                    if *i == 400 {
                        panic!("boom");
                    }
                    i % 2 == 0
                })
                .map(|i| ledger.make(i))
                .collect::<Vec<_>>()
        })
    });
    assert!(r.is_err());
    ledger.assert_balanced();
}

#[test]
fn flat_map_collect_with_a_panicking_inner_loop() {
    let ledger = IdLedger::new(N * 4);
    let r = quiet(|| {
        pool().install(|| {
            (0..N)
                .into_par_iter()
                .flat_map(|i| {
                    let ledger = &ledger;
                    (0..4).into_par_iter().map(move |j| {
                        if i == 300 && j == 2 {
                            panic!("inner boom");
                        }
                        ledger.make(4 * i + j)
                    })
                })
                .collect::<Vec<_>>()
        })
    });
    match r {
        Ok(_) => panic!("the inner panic was lost"),
        Err(e) => assert_eq!(common::panic_message(&*e), "inner boom"),
    }
    ledger.assert_balanced();
}

#[test]
fn zip_eq_panics_on_different_lengths() {
    let r = quiet(|| (0..3).into_par_iter().zip_eq(0..4).count());
    assert!(common::panic_message(&*r.unwrap_err()).contains("different lengths"));
}

#[test]
fn arrays_and_drained_ranges_drop_every_item_once() {
    let ledger = IdLedger::new(40);
    let array: [Tracked; 8] = std::array::from_fn(|i| ledger.make(i));
    let ids: Vec<usize> = pool().install(|| array.into_par_iter().map(|t| t.id).collect());
    assert_eq!(ids, (0..8).collect::<Vec<_>>());
    let mut v: Vec<Tracked> = (8..40).map(|i| ledger.make(i)).collect();
    let first = pool().install(|| {
        v.par_drain(4..20)
            .find_first(|t| t.id % 5 == 0)
            .map(|t| t.id)
    });
    assert_eq!(first, Some(15));
    assert!(v.iter().map(|t| t.id).eq((8..12).chain(28..40)));
    drop(v);
    ledger.assert_balanced();
}

#[test]
fn vec_source_partially_consumed_drops_the_rest() {
    let ledger = IdLedger::new(N);
    let v: Vec<Tracked> = (0..N).map(|i| ledger.make(i)).collect();
    let found = pool().install(|| v.into_par_iter().find_first(|t| t.id == 10).map(|t| t.id));
    assert_eq!(found, Some(10));
    ledger.assert_balanced();

    let ledger = IdLedger::new(N + N / 2);
    let v: Vec<Tracked> = (0..N).map(|i| ledger.make(i)).collect();
    let w: Vec<Tracked> = (0..N / 2).map(|i| ledger.make(N + i)).collect();
    let pairs = pool().install(|| {
        w.into_par_iter()
            .zip(v.into_par_iter().skip(3).take(100))
            .count()
    });
    assert_eq!(pairs, 100);
    ledger.assert_balanced();
}

#[test]
fn successful_collect_keeps_every_item_once() {
    let ledger = IdLedger::new(N);
    let v: Vec<Tracked> = (0..N).map(|i| ledger.make(i)).collect();
    let out: Vec<Tracked> = pool().install(|| v.into_par_iter().rev().collect());
    assert!(out.iter().rev().map(|t| t.id).eq(0..N));
    assert!(ledger.drops().iter().all(|&d| d == 0));
    drop(out);
    ledger.assert_balanced();
}

#[test]
fn panics_propagate() {
    let e = quiet(|| {
        pool().install(|| {
            (0..1000).into_par_iter().for_each(|i| {
                if i == 777 {
                    panic!("for_each panicked");
                }
            })
        })
    })
    .unwrap_err();
    assert_eq!(common::panic_message(&*e), "for_each panicked");

    let e = quiet(|| {
        pool().install(|| {
            (0..1000i32)
                .into_par_iter()
                .map(|i| if i == 5 { panic!("map panicked") } else { i })
                .sum::<i32>()
        })
    })
    .unwrap_err();
    assert_eq!(common::panic_message(&*e), "map panicked");

    let e = quiet(|| {
        pool().install(|| {
            (0..1000).into_par_iter().reduce(
                || 0,
                |a, b| {
                    if a + b > 10_000 {
                        panic!("reduce panicked");
                    }
                    a + b
                },
            )
        })
    })
    .unwrap_err();
    assert_eq!(common::panic_message(&*e), "reduce panicked");

    // From outside any pool too.
    let e = quiet(|| (0..100).into_par_iter().for_each(|_| panic!("outside"))).unwrap_err();
    assert_eq!(common::panic_message(&*e), "outside");

    // The pool is still usable afterwards.
    assert_eq!(
        pool().install(|| (0..100).into_par_iter().sum::<i32>()),
        4950
    );
}

/// `skip` produces the items it skips (as `std` and Rayon do): the closures before it run
/// for every item, a panic in a skipped item propagates, and skipped owned items are
/// dropped exactly once. Under forced splits and 1 µs heartbeats, so the skipped part's
/// own loop splits too.
#[test]
fn skip_produces_and_drops_the_skipped_items() {
    let pool = pool();
    for (len, n) in [
        (0, 0),
        (10, 0),
        (10, 3),
        (10, 10),
        (10, 20),
        (1000, 999),
        (5000, 1234),
    ] {
        let calls = AtomicUsize::new(0);
        let kept: Vec<usize> = pool.install(|| {
            (0..len)
                .into_par_iter()
                .map(|x| {
                    calls.fetch_add(1, Ordering::Relaxed);
                    x
                })
                .skip(n)
                .collect()
        });
        assert_eq!(kept, (n.min(len)..len).collect::<Vec<_>>());
        assert_eq!(calls.into_inner(), len, "len {len}, skip {n}");
    }
    // A panic in a skipped item propagates.
    let result = catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| {
            (0..100)
                .into_par_iter()
                .map(|x| if x == 1 { panic!("skipped item") } else { x })
                .skip(50)
                .sum::<i32>()
        })
    }));
    assert!(result.is_err());
    // Owned items from a `Vec`: skipped ones are dropped once, none leaks.
    let ledger = IdLedger::new(N);
    let items: Vec<Tracked<'_>> = (0..N).map(|id| ledger.make(id)).collect();
    let kept = pool.install(|| items.into_par_iter().skip(123).count());
    assert_eq!(kept, N - 123);
    ledger.assert_balanced();
    assert_eq!(ledger.created(), N);
}
