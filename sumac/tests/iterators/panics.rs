//! Panics in parallel loops: drop accounting when closures (or items' destructors, or
//! producers) panic midway, every item dropped exactly once (no leak, no double drop),
//! collections extended or collected into left valid; panic propagation from
//! `for_each`, `map`, `reduce` and the inner loops of `flat_map`; and `panic_fuse`, which
//! halts the other pieces of a loop after a panic.
use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

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

// ---------------------------------------------------------------------------------------
// Items whose destructor panics, and collections whose producer panics.

/// Counts, per id, how many times an item was dropped; the item `panic_on` panics in its
/// `drop` (after counting).
struct Ledger {
    drops: Vec<AtomicUsize>,
    panic_on: usize,
}

impl Ledger {
    fn new(n: usize, panic_on: usize) -> Self {
        Ledger {
            drops: (0..n).map(|_| AtomicUsize::new(0)).collect(),
            panic_on,
        }
    }
    fn items(&self, ids: std::ops::Range<usize>) -> Vec<LedgerItem<'_>> {
        ids.map(|id| LedgerItem { id, ledger: self }).collect()
    }
    /// Every item of `ids` was dropped exactly once, the others never.
    fn assert_dropped_once(&self, ids: std::ops::Range<usize>, what: &str) {
        for (id, d) in self.drops.iter().enumerate() {
            let expected = usize::from(ids.contains(&id));
            let d = d.load(Ordering::SeqCst);
            assert_eq!(d, expected, "{what}: item {id} dropped {d} times");
        }
    }
}

struct LedgerItem<'a> {
    id: usize,
    ledger: &'a Ledger,
}

impl Drop for LedgerItem<'_> {
    fn drop(&mut self) {
        self.ledger.drops[self.id].fetch_add(1, Ordering::SeqCst);
        if self.id == self.ledger.panic_on {
            panic!("drop of {} panicked", self.id);
        }
    }
}

/// An item whose `Drop` panics, dropped by the loop body, by `skip`, by `take` (the items
/// not taken) or by `find_first` (the items after the match): the panic propagates and
/// every other item is still dropped exactly once.
#[test]
fn an_item_whose_drop_panics() {
    const N: usize = 600;
    type Run = for<'a> fn(Vec<LedgerItem<'a>>) -> usize;
    let runs: [(&str, Run); 5] = [
        ("for_each", |v| {
            v.into_par_iter().for_each(drop);
            0
        }),
        ("map collect", |v| {
            v.into_par_iter().map(|t| t.id).collect::<Vec<_>>().len()
        }),
        ("skip", |v| v.into_par_iter().skip(N / 2).count()),
        ("take", |v| v.into_par_iter().take(N / 4).count()),
        ("find_first", |v| {
            v.into_par_iter()
                .find_first(|t| t.id == 5)
                .map_or(0, |t| t.id)
        }),
    ];
    for (name, run) in runs {
        for panic_on in [0, 3, N / 2 + 1, N - 1] {
            let ledger = Ledger::new(N, panic_on);
            let v = ledger.items(0..N);
            let r = quiet(|| pool().install(|| run(v)));
            assert!(r.is_err(), "{name}: the panic of drop {panic_on} was lost");
            ledger.assert_dropped_once(0..N, &format!("{name}, drop of {panic_on} panics"));
        }
    }
}

/// `par_extend` of a non-empty `Vec` (in place, and through per-piece vectors),
/// `VecDeque` and `String` whose producer panics: the collection keeps its old contents
/// and every new item is dropped exactly once.
#[test]
fn par_extend_with_a_panicking_producer_keeps_the_old_contents() {
    const N: usize = 500;
    for k in [0, 1, 250, N - 1] {
        let ledger = Ledger::new(N + 3, usize::MAX);
        let mut v = ledger.items(N..N + 3);
        let r = quiet(|| {
            pool().install(|| {
                v.par_extend(ledger.items(0..N).into_par_iter().map(|t| {
                    if t.id == k {
                        panic!("producer");
                    }
                    t
                }))
            })
        });
        assert!(r.is_err());
        assert!(v.iter().map(|t| t.id).eq(N..N + 3));
        ledger.assert_dropped_once(0..N, "par_extend");
        let r = quiet(|| {
            pool().install(|| {
                v.par_extend(ledger.items(0..N).into_par_iter().filter(|t| {
                    if t.id == k {
                        panic!("producer");
                    }
                    t.id % 2 == 0
                }))
            })
        });
        assert!(r.is_err());
        assert!(v.iter().map(|t| t.id).eq(N..N + 3));
        drop(v);
        for d in &ledger.drops[..N] {
            assert_eq!(d.swap(0, Ordering::SeqCst), 2);
        }
        ledger.assert_dropped_once(N..N + 3, "par_extend");

        let mut q: std::collections::VecDeque<usize> = (0..5).collect();
        let r = quiet(|| {
            pool().install(|| {
                q.par_extend((0..N).into_par_iter().map(|i| {
                    if i == k {
                        panic!("producer");
                    }
                    i
                }))
            })
        });
        assert!(r.is_err());
        assert!(q.iter().copied().eq(0..5));

        let mut s = String::from("keep");
        let r = quiet(|| {
            pool().install(|| {
                s.par_extend((0..N).into_par_iter().map(|i| {
                    if i == k {
                        panic!("producer");
                    }
                    String::from("x")
                }))
            })
        });
        assert!(r.is_err());
        assert_eq!(s, "keep");
    }
}

/// `collect_into_vec` and `unzip_into_vecs` whose closure panics; `par_drain` of a
/// sub-range whose iterator is forgotten, or whose loop panics.
#[test]
fn collect_into_vec_unzip_and_drain_with_panics() {
    const N: usize = 400;
    let ledger = Ledger::new(2 * N, usize::MAX);
    let mut target = ledger.items(N..N + 10);
    let r = quiet(|| {
        pool().install(|| {
            ledger
                .items(0..N)
                .into_par_iter()
                .map(|t| {
                    if t.id == 123 {
                        panic!("collect_into_vec")
                    } else {
                        t
                    }
                })
                .collect_into_vec(&mut target)
        })
    });
    assert!(r.is_err());
    // The old contents were cleared first (as Rayon does); none is dropped twice.
    assert!(target.is_empty());
    ledger.assert_dropped_once(0..N + 10, "collect_into_vec");
    for d in &ledger.drops {
        d.store(0, Ordering::SeqCst);
    }

    let (mut left, mut right) = (vec![1u32, 2], vec![String::from("b")]);
    let r = quiet(|| {
        pool().install(|| {
            (0..N as u32)
                .into_par_iter()
                .map(|i| {
                    if i == 300 {
                        panic!("unzip")
                    } else {
                        (i, i.to_string())
                    }
                })
                .unzip_into_vecs(&mut left, &mut right)
        })
    });
    assert!(r.is_err());
    assert_eq!((left, right), (vec![1, 2], vec![String::from("b")]));

    // A drain forgotten before it ran leaves the vector as it was (as in Rayon).
    let mut v = ledger.items(0..N);
    std::mem::forget(v.par_drain(10..20));
    assert_eq!(v.len(), N);
    assert!(v.iter().map(|t| t.id).eq(0..N));
    // One dropped unused drops the range's items and closes the gap.
    drop(v.par_drain(10..20));
    assert!(v.iter().map(|t| t.id).eq((0..10).chain(20..N)));
    // A drain whose loop panics drops every drained item once.
    let r = quiet(|| {
        pool().install(|| {
            v.par_drain(100..300).for_each(|t| {
                if t.id == 222 {
                    panic!("drain");
                }
            })
        })
    });
    assert!(r.is_err());
    assert!(v
        .iter()
        .map(|t| t.id)
        .eq((0..10).chain(20..110).chain(310..N)));
    drop(v);
    for (id, d) in ledger.drops.iter().enumerate() {
        let expected = usize::from(id < N);
        assert_eq!(d.load(Ordering::SeqCst), expected, "item {id}");
    }
}

/// A search that stops at its match drops the items it did not reach; when one of those
/// drops panics, the match it already holds must still be dropped (not leaked: Rust
/// skips the drop of a function's return value when a local's drop panics after it was
/// computed, rust-lang/rust#47949).
#[test]
fn a_found_item_is_not_leaked_when_dropping_the_rest_panics() {
    const N: usize = 600;
    for round in 0..60 {
        let ledger = Ledger::new(N, 6);
        let v = ledger.items(0..N);
        let r =
            quiet(|| pool().install(|| v.into_par_iter().find_first(|t| t.id == 5).map(|t| t.id)));
        assert!(r.is_err(), "round {round}: the panic of drop 6 was lost");
        ledger.assert_dropped_once(0..N, &format!("round {round}"));
    }
    // Block by block: the blocks after the match are dropped unrun.
    let ledger = Ledger::new(N, 100);
    let v = ledger.items(0..N);
    let r = quiet(|| {
        pool().install(|| {
            v.into_par_iter()
                .by_uniform_blocks(50)
                .find_first(|t| t.id == 5)
                .map(|t| t.id)
        })
    });
    assert!(r.is_err(), "blocks: the panic of drop 100 was lost");
    ledger.assert_dropped_once(0..N, "blocks");
}

// ---------------------------------------------------------------------------------------
// `panic_fuse`. The tests keep the panic hook quiet about their own panic, because the
// reaction time of a fuse is the time the hook takes (the fuse trips when unwinding
// starts, after the hook), and the test harness's own hook takes milliseconds the first
// time.

/// Busy work for about `micros` microseconds.
fn spin(micros: u64) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_micros(micros) {
        std::hint::spin_loop();
    }
}

/// Runs `run_loop` (a loop over 200,000 items whose body is `item`) five times in a
/// 4-thread pool; the panic is at the 10,000th item to arrive (when the loop has spread
/// over the workers) and items take about a microsecond; with the fuse the others stop
/// within a few items, without it they run on to the end of the 200,000.
fn check_halts(run_loop: impl Fn(&(dyn Fn() + Sync)) + Sync) {
    common::quiet_planned_panics("the 10,000th item");
    let pool = common::stress_pool(4);
    for _ in 0..5 {
        let seen = AtomicUsize::new(0);
        let item = || {
            let k = seen.fetch_add(1, Ordering::Relaxed);
            assert!(k != 10_000, "the 10,000th item");
            spin(1);
        };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.install(|| run_loop(&item))
        }));
        assert!(r.is_err());
        let looked = seen.load(Ordering::Relaxed);
        assert!(
            looked < 100_000,
            "looked at {looked} items after a panic at the 10,000th"
        );
    }
}

#[test]
fn panic_fuse_halts_the_loop() {
    check_halts(|item| {
        (0..200_000u32)
            .into_par_iter()
            .panic_fuse()
            .for_each(|_| item())
    });
}

/// Over an indexed base `panic_fuse` is indexed, as in Rayon: it has a length, and
/// indexed adaptors after it (here `enumerate`, which only an indexed iterator has)
/// still halt at a panic.
#[test]
fn an_indexed_panic_fuse_halts_the_loop() {
    let v: Vec<u32> = (0..1000).collect();
    assert_eq!(v.par_iter().panic_fuse().len(), 1000);
    let pairs: Vec<(usize, u32)> = v
        .par_iter()
        .copied()
        .panic_fuse()
        .enumerate()
        .rev()
        .collect();
    let expected: Vec<(usize, u32)> = v.iter().copied().enumerate().rev().collect();
    assert_eq!(pairs, expected);
    check_halts(|item| {
        (0..200_000u32)
            .into_par_iter()
            .panic_fuse()
            .enumerate()
            .for_each(|_| item())
    });
}

/// A panic in a closure *before* the fuse in the chain halts the loop too (as in Rayon):
/// it drops the piece's folder (or, when indexed, the fuse's iterator) on its way out.
#[test]
fn a_panic_before_the_fuse_halts_the_loop() {
    check_halts(|item| {
        (0..200_000u32)
            .into_par_iter()
            .inspect(|_| item())
            .panic_fuse()
            .for_each(|_| ())
    });
    check_halts(|item| {
        (0..200_000u32)
            .into_par_iter()
            .inspect(|_| item())
            .panic_fuse()
            .enumerate()
            .for_each(|_| ())
    });
}

/// Runs a fused loop in its destructor and records the loop's sum.
struct SumOnDrop<'a>(&'a AtomicUsize);

impl Drop for SumOnDrop<'_> {
    fn drop(&mut self) {
        let sum: usize = (0..10_000usize)
            .into_par_iter()
            .panic_fuse()
            .map(|x| x % 7)
            .sum();
        let indexed: usize = (0..10_000usize)
            .into_par_iter()
            .panic_fuse()
            .enumerate()
            .map(|(i, x)| (i + x) % 7)
            .sum();
        self.0.store(sum + indexed, Ordering::SeqCst);
    }
}

/// A fused loop run by a destructor while another panic unwinds is not halted by that
/// panic: it runs to its end.
#[test]
fn a_loop_run_during_an_unwind_is_not_halted_by_it() {
    let expected: usize = (0..10_000usize).map(|x| x % 7).sum::<usize>()
        + (0..10_000usize).map(|x| (2 * x) % 7).sum::<usize>();
    let pool = common::stress_pool(2);
    for _ in 0..20 {
        let sum = AtomicUsize::new(0);
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.install(|| {
                let _guard = SumOnDrop(&sum);
                std::panic::resume_unwind(Box::new("unwinding"));
            })
        }));
        assert!(unwound.is_err());
        assert_eq!(sum.load(Ordering::SeqCst), expected);
    }
}
