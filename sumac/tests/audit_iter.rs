//! Adversarial tests from an audit of the parallel iterators and sorts: interior
//! mutability seen by comparators, panics in drops and closures, zero-sized types and
//! lengths at the edge of `usize`.
mod common;

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use sumac::prelude::*;

fn pool() -> &'static sumac::ThreadPool {
    common::forced_split_pool()
}

fn quiet<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    catch_unwind(AssertUnwindSafe(f))
}

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
        pool().install(|| {
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

// ------------------------------------------------------------------ probes

/// A zero-sized item that counts its drops.
static ZST_DROPS: AtomicUsize = AtomicUsize::new(0);
struct Zst;
impl Drop for Zst {
    fn drop(&mut self) {
        ZST_DROPS.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn zero_sized_items_through_collect_drain_and_sort() {
    // Only this test touches ZST_DROPS.
    let n = 10_000;
    let out: Vec<Zst> = pool().install(|| (0..n).into_par_iter().map(|_| Zst).collect());
    assert_eq!(out.len(), n);
    assert_eq!(ZST_DROPS.load(Ordering::SeqCst), 0);
    let kept: Vec<Zst> = pool().install(|| out.into_par_iter().skip(10).take(100).collect());
    assert_eq!(kept.len(), 100);
    assert_eq!(ZST_DROPS.load(Ordering::SeqCst), n - 100);
    drop(kept);
    ZST_DROPS.store(0, Ordering::SeqCst);
    // A panicking closure mid-collect: every item built is dropped once.
    let built = AtomicUsize::new(0);
    let r = quiet(|| {
        pool().install(|| {
            (0..n)
                .into_par_iter()
                .map(|i| {
                    if i == 7777 {
                        panic!("zst")
                    }
                    built.fetch_add(1, Ordering::SeqCst);
                    Zst
                })
                .collect::<Vec<_>>()
        })
    });
    assert!(r.is_err());
    assert_eq!(
        ZST_DROPS.load(Ordering::SeqCst),
        built.load(Ordering::SeqCst)
    );
    ZST_DROPS.store(0, Ordering::SeqCst);
    let mut v: Vec<Zst> = (0..n).map(|_| Zst).collect();
    let drained = pool().install(|| v.par_drain(100..200).count());
    assert_eq!((drained, v.len()), (100, n - 100));
    assert_eq!(ZST_DROPS.load(Ordering::SeqCst), 100);
    pool().install(|| v.par_sort_by(|_, _| std::cmp::Ordering::Equal));
    pool().install(|| v.par_sort_unstable_by(|_, _| std::cmp::Ordering::Less));
    assert_eq!(v.len(), n - 100);
    assert_eq!(ZST_DROPS.load(Ordering::SeqCst), 100);
    let chunks = pool().install(|| v.par_chunks_mut(7).map(|c| c.len()).sum::<usize>());
    assert_eq!(chunks, n - 100);
    drop(v);
    assert_eq!(ZST_DROPS.load(Ordering::SeqCst), n);
}

#[test]
fn huge_zero_sized_vectors() {
    let v: Vec<()> = vec![(); usize::MAX];
    let tail = pool().install(|| v.into_par_iter().rev().take(5).count());
    assert_eq!(tail, 5);
    let v: Vec<()> = vec![(); usize::MAX];
    let c = pool().install(|| v.par_chunks(usize::MAX / 2).count());
    assert_eq!(c, 3);
    let c = pool().install(|| {
        v.par_rchunks(usize::MAX / 2)
            .map(|c| c.len())
            .collect::<Vec<_>>()
    });
    assert_eq!(c, vec![usize::MAX / 2, usize::MAX / 2, 1]);
    let c = pool().install(|| {
        v.par_windows(usize::MAX - 2)
            .map(|w| w.len())
            .collect::<Vec<_>>()
    });
    assert_eq!(c, vec![usize::MAX - 2; 3]);
    // Splitting windows at their end (`take` of all of them) must not overflow
    // computing the end of the last window.
    let c = (1..=3).map(|n| v.par_windows(usize::MAX - 2).take(n).count());
    assert!(c.eq(1..=3));
    let c = v
        .par_windows(usize::MAX)
        .take(1)
        .map(|w| w.len())
        .collect::<Vec<_>>();
    assert_eq!(c, [usize::MAX]);
    let c = v.par_array_windows::<3>().rev().take(2).count();
    assert_eq!(c, 2);
    let c = pool().install(|| v.par_iter().step_by(usize::MAX / 3).count());
    assert_eq!(c, 3);
    let c = pool().install(|| v.par_iter().step_by(usize::MAX / 3 - 1).count());
    assert_eq!(c, 4);
    let c = pool().install(|| {
        v.par_iter()
            .enumerate()
            .zip(v.par_iter().rev())
            .rev()
            .take(2)
            .map(|((i, _), _)| i)
            .collect::<Vec<_>>()
    });
    assert_eq!(c, vec![usize::MAX - 1, usize::MAX - 2]);
}

/// `step_by` skips through the sequential iterator's `nth`; a range's must not walk the
/// skipped integers (the loop below would then take `usize::MAX` steps).
#[test]
fn step_by_skips_over_huge_ranges_in_constant_time() {
    let out = common::finishes(
        "a step_by over a huge range (walking the items it skips?)",
        || {
            pool().install(|| {
                let r = (0..usize::MAX).into_par_iter();
                (
                    r.clone().step_by(usize::MAX).collect::<Vec<_>>(),
                    r.clone().step_by(usize::MAX / 2).collect::<Vec<_>>(),
                    r.clone().rev().step_by(usize::MAX / 2).collect::<Vec<_>>(),
                    (i64::MIN..i64::MAX)
                        .into_par_iter()
                        .step_by(1 << 62)
                        .count(),
                )
            })
        },
    );
    assert_eq!(out.0, [0]);
    assert_eq!(out.1, [0, usize::MAX / 2, usize::MAX - 1]);
    assert_eq!(out.2, [usize::MAX - 1, usize::MAX - 1 - usize::MAX / 2, 0]);
    assert_eq!(out.3, 4);
}

/// Lengths at the edge of `usize`: zip, rev, chunks and searches of `0..usize::MAX`, and
/// chains longer than `usize::MAX` (not indexed, still searchable).
#[test]
fn huge_range_lengths() {
    pool().install(|| {
        let r = (0..usize::MAX).into_par_iter();
        assert_eq!(r.clone().chunks(usize::MAX).len(), 1);
        assert_eq!(r.clone().chunks(usize::MAX / 2).len(), 3);
        assert_eq!(
            r.clone()
                .zip(0..usize::MAX)
                .rev()
                .take(2)
                .collect::<Vec<_>>(),
            [
                (usize::MAX - 1, usize::MAX - 1),
                (usize::MAX - 2, usize::MAX - 2)
            ]
        );
        assert_eq!(r.clone().find_last(|_| true), Some(usize::MAX - 1));
        assert_eq!(
            r.clone().position_last(|x| x % 3 == 0),
            Some(usize::MAX - 1 - (usize::MAX - 1) % 3)
        );
        assert_eq!(r.clone().chain(0..10).opt_len(), None);
        assert_eq!(r.clone().chain(0..10).find_first(|&x| x == 5), Some(5));
        assert_eq!(r.clone().chain(0..10).find_last(|&x| x == 5), Some(5));
        assert_eq!(
            (0..=usize::MAX)
                .into_par_iter()
                .chain(0..10usize)
                .find_first(|&x| x > 3),
            Some(4)
        );
    });
}

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
    fn items(&self, ids: std::ops::Range<usize>) -> Vec<Tracked<'_>> {
        ids.map(|id| Tracked { id, ledger: self }).collect()
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

struct Tracked<'a> {
    id: usize,
    ledger: &'a Ledger,
}

impl Drop for Tracked<'_> {
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
    type Run = for<'a> fn(Vec<Tracked<'a>>) -> usize;
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
