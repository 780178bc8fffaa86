//! User-written parallel iterators, coded against `rayon::iter::plumbing` exactly as the
//! Rayon docs teach (only the import changed from `rayon` to `sumac`), compile and run
//! unchanged on sumac: indexed sources (`Producer` + `bridge` / `with_producer`), a
//! producer over a borrowed slice with `fold_with`, `min_len` and `max_len` overridden,
//! unindexed sources (`UnindexedProducer` + `bridge_unindexed`), a direct call of
//! `bridge_producer_consumer`, drop accounting when a closure panics midway, and custom
//! iterators zipped with sumac's own, inside `join` and nested in other parallel loops.
//!
//! Every result is compared with the sequential `std` iterator, on pools of 1, 2 and 4
//! threads with a 1 µs heartbeat (so loops split all the time), which force no splits.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use sumac::iter::plumbing::{
    bridge, bridge_producer_consumer, bridge_unindexed, Consumer, Folder, Producer,
    ProducerCallback, Reducer, UnindexedConsumer, UnindexedProducer,
};
use sumac::prelude::*;

use crate::common;
use common::{on_each, stress_pools as pools, IdLedger, Tracked};

/// The two trait impls that every hand-written indexed source below repeats, written as
/// Rayon's documentation shows them (`Evens` and `Squares` spell them out in full):
/// both drives go through `bridge`, the length is `$len` and the producer `$make`.
macro_rules! indexed_source {
    (impl[$($gen:tt)*] $ty:ty, item = $item:ty, len = |$s:ident| $len:expr,
     producer = |$p:ident| $make:expr) => {
        impl<$($gen)*> ParallelIterator for $ty {
            type Item = $item;

            fn drive_unindexed<C>(self, consumer: C) -> C::Result
            where
                C: UnindexedConsumer<Self::Item>,
            {
                bridge(self, consumer)
            }

            fn opt_len(&self) -> Option<usize> {
                Some(IndexedParallelIterator::len(self))
            }
        }

        impl<$($gen)*> IndexedParallelIterator for $ty {
            fn len(&self) -> usize {
                let $s = self;
                $len
            }

            fn drive<C: Consumer<Self::Item>>(self, consumer: C) -> C::Result {
                bridge(self, consumer)
            }

            fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
                let $p = self;
                callback.callback($make)
            }
        }
    };
}

// ------------------------------------------------------------------------- pools

/// The pools that really run in parallel (2 and 4 threads).
fn parallel_pools() -> &'static [sumac::ThreadPool] {
    &pools()[1..]
}

fn config() -> ProptestConfig {
    ProptestConfig::with_cases(32)
}

// ------------------------------------------------ 1. an indexed source: Evens

/// The first `n` even numbers: 0, 2, 4, ...
#[derive(Clone, Copy, Debug)]
struct Evens {
    n: usize,
}

impl ParallelIterator for Evens {
    type Item = usize;

    fn drive_unindexed<C>(self, consumer: C) -> C::Result
    where
        C: UnindexedConsumer<Self::Item>,
    {
        bridge(self, consumer)
    }

    fn opt_len(&self) -> Option<usize> {
        Some(self.n)
    }
}

impl IndexedParallelIterator for Evens {
    fn len(&self) -> usize {
        self.n
    }

    fn drive<C: Consumer<Self::Item>>(self, consumer: C) -> C::Result {
        bridge(self, consumer)
    }

    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        callback.callback(EvensProducer {
            start: 0,
            end: self.n,
        })
    }
}

/// The even numbers `2 * i` for `i` in `start..end`.
struct EvensProducer {
    start: usize,
    end: usize,
}

fn double(i: usize) -> usize {
    2 * i
}

impl Producer for EvensProducer {
    type Item = usize;
    type IntoIter = std::iter::Map<std::ops::Range<usize>, fn(usize) -> usize>;

    fn into_iter(self) -> Self::IntoIter {
        (self.start..self.end).map(double as fn(usize) -> usize)
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        assert!(index <= self.end - self.start, "split past the end");
        let mid = self.start + index;
        (
            EvensProducer {
                start: self.start,
                end: mid,
            },
            EvensProducer {
                start: mid,
                end: self.end,
            },
        )
    }
}

fn evens_seq(n: usize) -> Vec<usize> {
    (0..n).map(|i| 2 * i).collect()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn indexed_source_consumers(n in 0usize..5000, target in 0usize..10_000) {
        let seq = evens_seq(n);
        on_each(pools(), || {
            prop_assert_eq!(Evens { n }.opt_len(), Some(n));
            prop_assert_eq!(Evens { n }.len(), n);
            prop_assert_eq!(Evens { n }.sum::<usize>(), seq.iter().sum::<usize>());
            prop_assert_eq!(Evens { n }.count(), n);
            prop_assert_eq!(Evens { n }.collect::<Vec<_>>(), seq.clone());
            prop_assert_eq!(Evens { n }.min(), seq.iter().copied().min());
            prop_assert_eq!(Evens { n }.max(), seq.iter().copied().max());
            prop_assert_eq!(
                Evens { n }.find_first(|&x| x >= target),
                seq.iter().copied().find(|&x| x >= target)
            );
            prop_assert_eq!(
                Evens { n }.find_first(|&x| x % 14 == 6),
                seq.iter().copied().find(|&x| x % 14 == 6)
            );
            prop_assert_eq!(
                Evens { n }.find_last(|&x| x % 14 == 6),
                seq.iter().copied().rfind(|&x| x % 14 == 6)
            );
            prop_assert_eq!(
                Evens { n }.position_first(|x| x == target),
                seq.iter().position(|&x| x == target)
            );
            prop_assert_eq!(Evens { n }.any(|x| x == target), seq.contains(&target));
            let all_even = Evens { n }.all(|x| x % 2 == 0);
            prop_assert!(all_even);
            let mut out = vec![7usize; 3];
            Evens { n }.collect_into_vec(&mut out);
            prop_assert_eq!(&out, &seq);
            let hits = AtomicUsize::new(0);
            Evens { n }.for_each(|x| {
                assert_eq!(x % 2, 0);
                hits.fetch_add(1, Ordering::Relaxed);
            });
            prop_assert_eq!(hits.load(Ordering::Relaxed), n);
            Ok(())
        })?;
    }

    #[test]
    fn indexed_source_adaptors(
        n in 0usize..5000,
        m in 0usize..5000,
        k in 0usize..5200,
        take in 0usize..5200,
        step in 1usize..9,
    ) {
        let seq = evens_seq(n);
        let other: Vec<u32> = (0..m as u32).map(|x| x.wrapping_mul(2_654_435_761)).collect();
        on_each(pools(), || {
            prop_assert_eq!(
                Evens { n }.rev().collect::<Vec<_>>(),
                seq.iter().rev().copied().collect::<Vec<_>>()
            );
            prop_assert_eq!(
                Evens { n }.zip(other.par_iter()).collect::<Vec<_>>(),
                seq.iter().copied().zip(other.iter()).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                Evens { n }.enumerate().collect::<Vec<_>>(),
                seq.iter().copied().enumerate().collect::<Vec<_>>()
            );
            prop_assert_eq!(
                Evens { n }.skip(k).take(take).collect::<Vec<_>>(),
                seq.iter().copied().skip(k).take(take).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                Evens { n }.map(|x| x * 3 + 1).filter(|x| x % 4 == 1).count(),
                seq.iter().map(|x| x * 3 + 1).filter(|x| x % 4 == 1).count()
            );
            prop_assert_eq!(
                Evens { n }.chunks(3).collect::<Vec<Vec<usize>>>(),
                seq.chunks(3).map(|c| c.to_vec()).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                Evens { n }.with_min_len(7).collect::<Vec<_>>(),
                seq.clone()
            );
            prop_assert_eq!(
                Evens { n }.with_min_len(7).map(|x| x as u64).sum::<u64>(),
                seq.iter().map(|&x| x as u64).sum::<u64>()
            );
            prop_assert_eq!(
                Evens { n }.with_max_len(5).collect::<Vec<_>>(),
                seq.clone()
            );
            prop_assert_eq!(
                Evens { n }.step_by(step).collect::<Vec<_>>(),
                seq.iter().copied().step_by(step).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                Evens { n }.step_by(3).rev().collect::<Vec<_>>(),
                seq.iter().copied().step_by(3).rev().collect::<Vec<_>>()
            );
            let mut out = Vec::new();
            Evens { n }.rev().skip(k).map(|x| x + 1).collect_into_vec(&mut out);
            prop_assert_eq!(
                out,
                seq.iter().rev().skip(k).map(|x| x + 1).collect::<Vec<_>>()
            );
            Ok(())
        })?;
    }
}

// --------------------------------- 2. a producer over a borrowed slice: MySlice

/// What the producer pieces of one loop were asked to do.
#[derive(Default)]
struct SliceStats {
    /// Calls of the overridden `fold_with`.
    folds: AtomicUsize,
    /// Calls of `into_iter`.
    iters: AtomicUsize,
    /// Items handed out through `fold_with` or `into_iter`, in total.
    items: AtomicUsize,
    /// The longest piece handed out through `fold_with` or `into_iter`.
    longest: AtomicUsize,
}

impl SliceStats {
    fn record(&self, len: usize) {
        self.items.fetch_add(len, Ordering::Relaxed);
        self.longest.fetch_max(len, Ordering::Relaxed);
    }
}

/// A parallel iterator over `&T`, written by hand.
struct MySlice<'a, T> {
    slice: &'a [T],
    stats: &'a SliceStats,
}

indexed_source! {
    impl['a, T: Sync + 'a] MySlice<'a, T>, item = &'a T,
    len = |s| s.slice.len(),
    producer = |s| MyChunks {
        slice: s.slice,
        stats: s.stats,
    }
}

/// The producer of [`MySlice`]: a piece of the borrowed slice.
struct MyChunks<'a, T> {
    slice: &'a [T],
    stats: &'a SliceStats,
}

impl<'a, T: Sync + 'a> Producer for MyChunks<'a, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.stats.iters.fetch_add(1, Ordering::Relaxed);
        self.stats.record(self.slice.len());
        self.slice.iter()
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        let (left, right) = self.slice.split_at(index);
        (
            MyChunks {
                slice: left,
                stats: self.stats,
            },
            MyChunks {
                slice: right,
                stats: self.stats,
            },
        )
    }

    fn fold_with<F>(self, folder: F) -> F
    where
        F: Folder<Self::Item>,
    {
        self.stats.folds.fetch_add(1, Ordering::Relaxed);
        self.stats.record(self.slice.len());
        folder.consume_iter(self.slice.iter())
    }
}

/// A hand-written parallel iterator over `&T` whose producer asks for pieces of
/// `min..=max` items.
struct Bounded<'a, T> {
    slice: &'a [T],
    min: usize,
    max: usize,
    stats: &'a SliceStats,
}

indexed_source! {
    impl['a, T: Sync + 'a] Bounded<'a, T>, item = &'a T,
    len = |s| s.slice.len(),
    producer = |s| BoundedProducer {
        slice: s.slice,
        min: s.min,
        max: s.max,
        stats: s.stats,
    }
}

struct BoundedProducer<'a, T> {
    slice: &'a [T],
    min: usize,
    max: usize,
    stats: &'a SliceStats,
}

impl<'a, T: Sync + 'a> Producer for BoundedProducer<'a, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.stats.iters.fetch_add(1, Ordering::Relaxed);
        self.stats.record(self.slice.len());
        self.slice.iter()
    }

    fn min_len(&self) -> usize {
        self.min
    }

    fn max_len(&self) -> usize {
        self.max
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        let (left, right) = self.slice.split_at(index);
        let piece = |slice| BoundedProducer {
            slice,
            min: self.min,
            max: self.max,
            stats: self.stats,
        };
        (piece(left), piece(right))
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn slice_producer_with_fold_with(
        v in prop::collection::vec(any::<i32>(), 0..5000),
        target in any::<i32>(),
    ) {
        let seq_sum: i64 = v.iter().map(|&x| x as i64).sum();
        on_each(pools(), || {
            // A plain reduction: every item goes through the producer exactly once, and
            // the leaves are consumed through the overridden `fold_with`.
            let stats = SliceStats::default();
            let sum: i64 = MySlice { slice: &v, stats: &stats }.map(|&x| x as i64).sum();
            prop_assert_eq!(sum, seq_sum);
            prop_assert_eq!(stats.items.load(Ordering::Relaxed), v.len());
            if !v.is_empty() {
                prop_assert!(stats.folds.load(Ordering::Relaxed) >= 1);
            }

            let stats = SliceStats::default();
            let out: Vec<&i32> = MySlice { slice: &v, stats: &stats }.collect();
            prop_assert_eq!(out, v.iter().collect::<Vec<_>>());
            prop_assert_eq!(stats.items.load(Ordering::Relaxed), v.len());

            let stats = SliceStats::default();
            prop_assert_eq!(
                MySlice { slice: &v, stats: &stats }.rev().copied().collect::<Vec<_>>(),
                v.iter().rev().copied().collect::<Vec<_>>()
            );
            prop_assert_eq!(
                MySlice { slice: &v, stats: &stats }.position_first(|&x| x == target),
                v.iter().position(|&x| x == target)
            );
            prop_assert_eq!(
                MySlice { slice: &v, stats: &stats }.find_first(|&&x| x > target),
                v.iter().find(|&&x| x > target)
            );
            prop_assert_eq!(
                MySlice { slice: &v, stats: &stats }.max(),
                v.iter().max()
            );
            prop_assert_eq!(
                MySlice { slice: &v, stats: &stats }
                    .zip(MySlice { slice: &v[v.len() / 3..], stats: &stats })
                    .map(|(a, b)| a.wrapping_sub(*b))
                    .collect::<Vec<_>>(),
                v.iter().zip(&v[v.len() / 3..]).map(|(a, b)| a.wrapping_sub(*b)).collect::<Vec<_>>()
            );
            Ok(())
        })?;
    }

    #[test]
    fn slice_producer_with_min_and_max_len(
        v in prop::collection::vec(any::<u16>(), 0..3000),
        min in 1usize..=4,
        max in 8usize..=32,
    ) {
        let seq_sum: u64 = v.iter().map(|&x| x as u64).sum();
        on_each(pools(), || {
            let stats = SliceStats::default();
            let sum: u64 = Bounded { slice: &v, min, max, stats: &stats }
                .map(|&x| x as u64)
                .sum();
            prop_assert_eq!(sum, seq_sum);
            prop_assert_eq!(stats.items.load(Ordering::Relaxed), v.len());
            // With `max >= 2 * min`, a piece longer than `max` can always be split, and
            // sumac documents `max_len` as the most items a piece may hold.
            let longest = stats.longest.load(Ordering::Relaxed);
            prop_assert!(longest <= max, "a piece of {} items, max_len {}", longest, max);

            let stats = SliceStats::default();
            prop_assert_eq!(
                Bounded { slice: &v, min, max, stats: &stats }.collect::<Vec<_>>(),
                v.iter().collect::<Vec<_>>()
            );
            prop_assert_eq!(stats.items.load(Ordering::Relaxed), v.len());

            let stats = SliceStats::default();
            prop_assert_eq!(
                Bounded { slice: &v, min, max, stats: &stats }
                    .enumerate()
                    .filter(|(i, _)| i % 3 == 0)
                    .map(|(_, &x)| x)
                    .collect::<Vec<_>>(),
                v.iter().enumerate().filter(|(i, _)| i % 3 == 0).map(|(_, &x)| x).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                Bounded { slice: &v, min, max, stats: &stats }.rev().with_max_len(3).copied().collect::<Vec<_>>(),
                v.iter().rev().copied().collect::<Vec<_>>()
            );
            Ok(())
        })?;
    }
}

// --------------------------------- 3. drop accounting under a panicking closure

/// Counts the values made and dropped.
#[derive(Default)]
struct Ledger {
    created: AtomicUsize,
    dropped: AtomicUsize,
}

impl Ledger {
    fn make(&self, index: usize) -> Droppy<'_> {
        self.created.fetch_add(1, Ordering::Relaxed);
        Droppy {
            index,
            ledger: self,
        }
    }
    fn created(&self) -> usize {
        self.created.load(Ordering::Relaxed)
    }
    fn dropped(&self) -> usize {
        self.dropped.load(Ordering::Relaxed)
    }
}

struct Droppy<'a> {
    index: usize,
    ledger: &'a Ledger,
}

impl Drop for Droppy<'_> {
    fn drop(&mut self) {
        self.ledger.dropped.fetch_add(1, Ordering::Relaxed);
    }
}

/// A parallel iterator that makes a fresh [`Droppy`] for each index of `0..n`.
struct MakeDroppies<'a> {
    n: usize,
    ledger: &'a Ledger,
}

indexed_source! {
    impl['a] MakeDroppies<'a>, item = Droppy<'a>,
    len = |s| s.n,
    producer = |s| DroppyProducer {
        range: 0..s.n,
        ledger: s.ledger,
    }
}

struct DroppyProducer<'a> {
    range: std::ops::Range<usize>,
    ledger: &'a Ledger,
}

/// The sequential iterator of a [`DroppyProducer`] (a hand-written double-ended,
/// exact-size iterator).
struct DroppyIter<'a> {
    range: std::ops::Range<usize>,
    ledger: &'a Ledger,
}

impl<'a> Iterator for DroppyIter<'a> {
    type Item = Droppy<'a>;

    fn next(&mut self) -> Option<Droppy<'a>> {
        self.range.next().map(|i| self.ledger.make(i))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.range.size_hint()
    }
}

impl DoubleEndedIterator for DroppyIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.range.next_back().map(|i| self.ledger.make(i))
    }
}

impl ExactSizeIterator for DroppyIter<'_> {}

impl<'a> Producer for DroppyProducer<'a> {
    type Item = Droppy<'a>;
    type IntoIter = DroppyIter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        DroppyIter {
            range: self.range,
            ledger: self.ledger,
        }
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        let mid = self.range.start + index;
        assert!(mid <= self.range.end, "split past the end");
        (
            DroppyProducer {
                range: self.range.start..mid,
                ledger: self.ledger,
            },
            DroppyProducer {
                range: mid..self.range.end,
                ledger: self.ledger,
            },
        )
    }
}

/// A parallel iterator that owns its items: a `Vec` split with `split_off`.
struct OwnedDroppies<'a> {
    items: Vec<Droppy<'a>>,
}

indexed_source! {
    impl['a] OwnedDroppies<'a>, item = Droppy<'a>,
    len = |s| s.items.len(),
    producer = |s| OwnedProducer { items: s.items }
}

struct OwnedProducer<'a> {
    items: Vec<Droppy<'a>>,
}

impl<'a> Producer for OwnedProducer<'a> {
    type Item = Droppy<'a>;
    type IntoIter = std::vec::IntoIter<Droppy<'a>>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }

    fn split_at(mut self, index: usize) -> (Self, Self) {
        let right = self.items.split_off(index);
        (self, OwnedProducer { items: right })
    }
}

/// Runs `f`, returning whether it panicked (the panic is caught).
fn panics<R>(f: impl FnOnce() -> R) -> bool {
    catch_unwind(AssertUnwindSafe(f)).is_err()
}

const DROP_N: usize = 2000;

#[test]
fn drops_without_panic() {
    for pool in pools() {
        let ledger = Ledger::default();
        let out: Vec<Droppy> = pool.install(|| {
            MakeDroppies {
                n: DROP_N,
                ledger: &ledger,
            }
            .collect()
        });
        assert_eq!(
            out.iter().map(|d| d.index).collect::<Vec<_>>(),
            (0..DROP_N).collect::<Vec<_>>()
        );
        assert_eq!(ledger.created(), DROP_N);
        drop(out);
        assert_eq!(ledger.dropped(), DROP_N);

        let ledger = Ledger::default();
        let items: Vec<Droppy> = (0..DROP_N).map(|i| ledger.make(i)).collect();
        let total: usize = pool.install(|| {
            OwnedDroppies { items }
                .rev()
                .filter(|d| d.index % 3 != 0)
                .map(|d| d.index)
                .sum()
        });
        assert_eq!(total, (0..DROP_N).filter(|i| i % 3 != 0).sum::<usize>());
        assert_eq!(ledger.created(), DROP_N);
        assert_eq!(ledger.dropped(), DROP_N);
    }
}

#[test]
fn drops_when_a_map_panics_midway() {
    for pool in pools() {
        for k in [0, 1, 17, DROP_N / 2, DROP_N - 1] {
            // Items made on the fly by the producer's iterator, collected.
            let ledger = Ledger::default();
            let panicked = panics(|| {
                pool.install(|| {
                    MakeDroppies {
                        n: DROP_N,
                        ledger: &ledger,
                    }
                    .map(|d| {
                        if d.index == k {
                            panic!("boom at {k}");
                        }
                        d
                    })
                    .collect::<Vec<_>>()
                })
            });
            assert!(panicked, "no panic at {k}");
            assert!(ledger.created() <= DROP_N);
            assert_eq!(
                ledger.created(),
                ledger.dropped(),
                "made on the fly, panic at {k}: {} created, {} dropped",
                ledger.created(),
                ledger.dropped()
            );

            // Items owned by the producer (the unconsumed pieces must drop theirs).
            let ledger = Ledger::default();
            let items: Vec<Droppy> = (0..DROP_N).map(|i| ledger.make(i)).collect();
            let panicked = panics(|| {
                pool.install(|| {
                    OwnedDroppies { items }
                        .map(|d| {
                            if d.index == k {
                                panic!("boom at {k}");
                            }
                            d
                        })
                        .collect::<Vec<_>>()
                })
            });
            assert!(panicked, "no panic at {k}");
            assert_eq!(ledger.created(), DROP_N);
            assert_eq!(
                ledger.dropped(),
                DROP_N,
                "owned, panic at {k}: {} dropped of {DROP_N}",
                ledger.dropped()
            );

            // A panic in a `for_each` over owned items.
            let ledger = Ledger::default();
            let items: Vec<Droppy> = (0..DROP_N).map(|i| ledger.make(i)).collect();
            let panicked = panics(|| {
                pool.install(|| {
                    OwnedDroppies { items }.for_each(|d| {
                        if d.index == k {
                            panic!("boom at {k}");
                        }
                    })
                })
            });
            assert!(panicked, "no panic at {k}");
            assert_eq!(ledger.dropped(), DROP_N, "for_each, panic at {k}");
        }
        // The pool still works.
        let sum: usize = pool.install(|| Evens { n: 1000 }.sum());
        assert_eq!(sum, (0..1000).map(|i| 2 * i).sum::<usize>());
    }
}

/// A hand-written iterator that misuses the consumer it is given: it splits the consumer
/// and then reduces the pieces' results in the wrong order, or leaves one out. Collecting
/// it must panic (the count check), and every item must still be dropped exactly once:
/// the collect reducer may merge two pieces only when the left one is full and the right
/// one starts where it ends, or a merged result would claim slots that another piece
/// owns. (That was a `debug_assert!`: in release builds, dropping the middle piece made
/// collect drop its items twice and leak the last piece's; `cargo test --release` of
/// this test caught it.)
struct Misreduced<'a> {
    n: usize,
    misuse: Misuse,
    ledger: &'a IdLedger,
}

#[derive(Clone, Copy, Debug)]
enum Misuse {
    /// Three pieces; the first and the last are reduced, the middle one is dropped.
    DropTheMiddle,
    /// Two pieces, reduced right before left.
    Swap,
}

/// Runs a piece of the consumer over the items `ids`.
fn fill<'a, C: Consumer<Tracked<'a>>>(
    consumer: C,
    ids: std::ops::Range<usize>,
    ledger: &'a IdLedger,
) -> C::Result {
    consumer
        .into_folder()
        .consume_iter(ids.map(|id| ledger.make(id)))
        .complete()
}

impl<'a> ParallelIterator for Misreduced<'a> {
    type Item = Tracked<'a>;

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        let (n, ledger) = (self.n, self.ledger);
        match self.misuse {
            Misuse::DropTheMiddle => {
                let third = n / 3;
                let (first, rest, reducer) = consumer.split_at(third);
                let (middle, last, _) = rest.split_at(third);
                let first = fill(first, 0..third, ledger);
                drop(fill(middle, third..2 * third, ledger));
                let last = fill(last, 2 * third..n, ledger);
                reducer.reduce(first, last)
            }
            Misuse::Swap => {
                let half = n / 2;
                let (left, right, reducer) = consumer.split_at(half);
                let left = fill(left, 0..half, ledger);
                let right = fill(right, half..n, ledger);
                reducer.reduce(right, left)
            }
        }
    }

    fn opt_len(&self) -> Option<usize> {
        Some(self.n)
    }
}

#[test]
fn collecting_misreduced_pieces_panics_and_drops_every_item_once() {
    const N: usize = 30;
    for misuse in [Misuse::DropTheMiddle, Misuse::Swap] {
        let ledger = IdLedger::new(N);
        let panicked = panics(|| {
            Misreduced {
                n: N,
                misuse,
                ledger: &ledger,
            }
            .collect::<Vec<_>>()
        });
        assert!(panicked, "{misuse:?}: collected without a panic");
        assert_eq!(ledger.drops(), [1; N], "{misuse:?}: drops per item");
    }
}

// ----------------------------------- 4. unindexed sources: Halves and Buckets

/// The numbers `lo..hi`, split in halves: an unindexed parallel iterator.
#[derive(Clone, Copy, Debug)]
struct HalvesIter {
    lo: u64,
    hi: u64,
}

impl ParallelIterator for HalvesIter {
    type Item = u64;

    fn drive_unindexed<C>(self, consumer: C) -> C::Result
    where
        C: UnindexedConsumer<Self::Item>,
    {
        bridge_unindexed(
            Halves {
                lo: self.lo,
                hi: self.hi,
            },
            consumer,
        )
    }
}

struct Halves {
    lo: u64,
    hi: u64,
}

impl UnindexedProducer for Halves {
    type Item = u64;

    fn split(self) -> (Self, Option<Self>) {
        if self.hi - self.lo > 1 {
            let mid = self.lo + (self.hi - self.lo) / 2;
            (
                Halves {
                    lo: self.lo,
                    hi: mid,
                },
                Some(Halves {
                    lo: mid,
                    hi: self.hi,
                }),
            )
        } else {
            (self, None)
        }
    }

    fn fold_with<F>(self, folder: F) -> F
    where
        F: Folder<Self::Item>,
    {
        folder.consume_iter(self.lo..self.hi)
    }
}

/// The items of a list of buckets, in order: an unindexed parallel iterator that splits
/// the list of buckets like a tree.
struct BucketsIter<'a> {
    buckets: &'a [Vec<u32>],
}

impl<'a> ParallelIterator for BucketsIter<'a> {
    type Item = u32;

    fn drive_unindexed<C>(self, consumer: C) -> C::Result
    where
        C: UnindexedConsumer<Self::Item>,
    {
        bridge_unindexed(
            Buckets {
                buckets: self.buckets,
            },
            consumer,
        )
    }
}

struct Buckets<'a> {
    buckets: &'a [Vec<u32>],
}

impl UnindexedProducer for Buckets<'_> {
    type Item = u32;

    fn split(self) -> (Self, Option<Self>) {
        if self.buckets.len() > 1 {
            let (left, right) = self.buckets.split_at(self.buckets.len() / 2);
            (Buckets { buckets: left }, Some(Buckets { buckets: right }))
        } else {
            (self, None)
        }
    }

    fn fold_with<F>(self, folder: F) -> F
    where
        F: Folder<Self::Item>,
    {
        folder.consume_iter(self.buckets.iter().flatten().copied())
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn unindexed_range_source(lo in 0u64..1000, len in 0u64..5000, target in 0u64..7000) {
        let hi = lo + len;
        let seq: Vec<u64> = (lo..hi).collect();
        on_each(parallel_pools(), || {
            let it = HalvesIter { lo, hi };
            prop_assert_eq!(it.opt_len(), None);
            prop_assert_eq!(it.sum::<u64>(), seq.iter().sum::<u64>());
            prop_assert_eq!(it.count(), seq.len());
            prop_assert_eq!(it.collect::<Vec<_>>(), seq.clone());
            prop_assert_eq!(it.min(), seq.iter().copied().min());
            prop_assert_eq!(it.max(), seq.iter().copied().max());
            prop_assert_eq!(
                it.find_first(|&x| x >= target),
                seq.iter().copied().find(|&x| x >= target)
            );
            prop_assert_eq!(
                it.find_first(|&x| x % 13 == target % 13),
                seq.iter().copied().find(|&x| x % 13 == target % 13)
            );
            prop_assert_eq!(
                it.find_last(|&x| x % 13 == target % 13),
                seq.iter().copied().rfind(|&x| x % 13 == target % 13)
            );
            prop_assert_eq!(it.any(|x| x == target), seq.contains(&target));
            prop_assert_eq!(it.all(|x| x < target), seq.iter().all(|&x| x < target));
            prop_assert_eq!(
                it.map(|x| x * x).filter(|x| x % 3 == 1).collect::<Vec<_>>(),
                seq.iter().map(|x| x * x).filter(|x| x % 3 == 1).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                it.chain(HalvesIter { lo: 0, hi: lo }).collect::<Vec<_>>(),
                seq.iter().copied().chain(0..lo).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                it.fold(|| 0u64, |a, x| a + x).collect::<Vec<_>>().iter().sum::<u64>(),
                seq.iter().sum::<u64>()
            );
            Ok(())
        })?;
    }

    #[test]
    fn unindexed_tree_source(
        buckets in prop::collection::vec(prop::collection::vec(any::<u32>(), 0..40), 0..200),
        target in any::<u32>(),
    ) {
        let seq: Vec<u32> = buckets.iter().flatten().copied().collect();
        on_each(parallel_pools(), || {
            let it = || BucketsIter { buckets: &buckets };
            prop_assert_eq!(it().collect::<Vec<_>>(), seq.clone());
            prop_assert_eq!(it().count(), seq.len());
            prop_assert_eq!(
                it().map(|x| x as u64).sum::<u64>(),
                seq.iter().map(|&x| x as u64).sum::<u64>()
            );
            prop_assert_eq!(it().min(), seq.iter().copied().min());
            prop_assert_eq!(
                it().find_first(|&x| x > target),
                seq.iter().copied().find(|&x| x > target)
            );
            prop_assert_eq!(it().any(|x| x == target), seq.contains(&target));
            Ok(())
        })?;
    }
}

// ------------------------- 5. bridge_producer_consumer called from drive_unindexed

/// The squares `i * i` for `i` in `0..n`, driven by `bridge_producer_consumer`.
#[derive(Clone, Copy, Debug)]
struct Squares {
    n: usize,
}

struct SquaresProducer {
    range: std::ops::Range<usize>,
}

fn square(i: usize) -> u64 {
    (i as u64) * (i as u64)
}

impl Producer for SquaresProducer {
    type Item = u64;
    type IntoIter = std::iter::Map<std::ops::Range<usize>, fn(usize) -> u64>;

    fn into_iter(self) -> Self::IntoIter {
        self.range.map(square as fn(usize) -> u64)
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        let mid = self.range.start + index;
        assert!(mid <= self.range.end, "split past the end");
        (
            SquaresProducer {
                range: self.range.start..mid,
            },
            SquaresProducer {
                range: mid..self.range.end,
            },
        )
    }
}

impl ParallelIterator for Squares {
    type Item = u64;

    fn drive_unindexed<C>(self, consumer: C) -> C::Result
    where
        C: UnindexedConsumer<Self::Item>,
    {
        bridge_producer_consumer(self.n, SquaresProducer { range: 0..self.n }, consumer)
    }

    fn opt_len(&self) -> Option<usize> {
        Some(self.n)
    }
}

impl IndexedParallelIterator for Squares {
    fn len(&self) -> usize {
        self.n
    }

    fn drive<C: Consumer<Self::Item>>(self, consumer: C) -> C::Result {
        bridge_producer_consumer(self.n, SquaresProducer { range: 0..self.n }, consumer)
    }

    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        callback.callback(SquaresProducer { range: 0..self.n })
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn bridge_producer_consumer_source(n in 0usize..5000, k in 0usize..5200, target in 0u64..30_000_000) {
        let seq: Vec<u64> = (0..n).map(square).collect();
        on_each(pools(), || {
            prop_assert_eq!(Squares { n }.sum::<u64>(), seq.iter().sum::<u64>());
            prop_assert_eq!(Squares { n }.collect::<Vec<_>>(), seq.clone());
            prop_assert_eq!(
                Squares { n }.filter(|x| x % 3 == 0).collect::<Vec<_>>(),
                seq.iter().copied().filter(|x| x % 3 == 0).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                Squares { n }.find_first(|&x| x >= target),
                seq.iter().copied().find(|&x| x >= target)
            );
            prop_assert_eq!(
                Squares { n }.position_first(|x| x >= target),
                seq.iter().position(|&x| x >= target)
            );
            prop_assert_eq!(
                Squares { n }.rev().skip(k).collect::<Vec<_>>(),
                seq.iter().rev().skip(k).copied().collect::<Vec<_>>()
            );
            prop_assert_eq!(
                Squares { n }.zip(Evens { n: n / 2 }).map(|(s, e)| s + e as u64).collect::<Vec<_>>(),
                seq.iter().zip(evens_seq(n / 2)).map(|(s, e)| s + e as u64).collect::<Vec<_>>()
            );
            let mut out = Vec::new();
            Squares { n }.collect_into_vec(&mut out);
            prop_assert_eq!(out, seq.clone());
            Ok(())
        })?;
    }
}

// ------------------------- 6. custom iterators zipped, in join, and nested

proptest! {
    #![proptest_config(config())]

    #[test]
    fn custom_iterator_as_zip_partner(
        v in prop::collection::vec(any::<u32>(), 0..3000),
        m in 0usize..3000,
    ) {
        let evens = evens_seq(m);
        on_each(pools(), || {
            prop_assert_eq!(
                v.par_iter().zip(Evens { n: m }).map(|(&a, b)| a as u64 * b as u64).collect::<Vec<_>>(),
                v.iter().zip(&evens).map(|(&a, &b)| a as u64 * b as u64).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                v.par_iter().zip(Evens { n: m }).rev().map(|(&a, b)| (a, b)).collect::<Vec<_>>(),
                v.iter().copied().zip(evens.iter().copied()).rev().collect::<Vec<_>>()
            );
            prop_assert_eq!(
                v.par_iter().zip_eq(Squares { n: v.len() }).map(|(&a, s)| a as u64 ^ s).collect::<Vec<_>>(),
                v.iter().zip((0..v.len()).map(square)).map(|(&a, s)| a as u64 ^ s).collect::<Vec<_>>()
            );
            let stats = SliceStats::default();
            prop_assert_eq!(
                v.clone().into_par_iter().zip(MySlice { slice: &v, stats: &stats }).filter(|(a, b)| a == *b).count(),
                v.len()
            );
            Ok(())
        })?;
    }

    #[test]
    fn custom_iterators_in_join_and_nested(outer in 0usize..120, lo in 0u64..100, len in 0u64..2000) {
        let hi = lo + len;
        on_each(parallel_pools(), || {
            let (a, (b, c)) = sumac::join(
                || Evens { n: outer * 10 }.sum::<usize>(),
                || {
                    sumac::join(
                        || HalvesIter { lo, hi }.collect::<Vec<_>>(),
                        || Squares { n: outer }.collect::<Vec<_>>(),
                    )
                },
            );
            prop_assert_eq!(a, evens_seq(outer * 10).iter().sum::<usize>());
            prop_assert_eq!(b, (lo..hi).collect::<Vec<_>>());
            prop_assert_eq!(c, (0..outer).map(square).collect::<Vec<_>>());

            // A custom parallel loop inside a custom parallel loop.
            prop_assert_eq!(
                Evens { n: outer }.map(|i| Squares { n: i }.sum::<u64>()).collect::<Vec<_>>(),
                (0..outer).map(|i| (0..2 * i).map(square).sum::<u64>()).collect::<Vec<_>>()
            );
            // A custom unindexed loop inside a sumac range loop.
            prop_assert_eq!(
                (0..outer as u64)
                    .into_par_iter()
                    .map(|i| HalvesIter { lo: i, hi: i + lo }.sum::<u64>())
                    .collect::<Vec<_>>(),
                (0..outer as u64).map(|i| (i..i + lo).sum::<u64>()).collect::<Vec<_>>()
            );
            // A sumac slice loop inside a custom loop, zipped with a custom iterator.
            let data: Vec<u64> = (0..len).collect();
            prop_assert_eq!(
                HalvesIter { lo: 0, hi: outer as u64 }
                    .map(|i| {
                        data.par_iter()
                            .zip(Evens { n: i as usize * 7 })
                            .map(|(&d, e)| d * e as u64)
                            .sum::<u64>()
                    })
                    .collect::<Vec<_>>(),
                (0..outer as u64)
                    .map(|i| {
                        data.iter()
                            .zip(evens_seq(i as usize * 7))
                            .map(|(&d, e)| d * e as u64)
                            .sum::<u64>()
                    })
                    .collect::<Vec<_>>()
            );
            Ok(())
        })?;
    }
}
