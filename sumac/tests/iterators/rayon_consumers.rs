//! User-written *consumers* and *adaptors*, coded against `rayon::iter::plumbing` exactly
//! as the Rayon docs teach (only the import changed from `rayon` to `sumac`), compile and
//! run unchanged on sumac:
//!
//! 1. an indicatif-style counting adaptor, [`Counted`], that wraps the consumer it is
//!    given (`CountConsumer` / `CountFolder`) and, over an indexed base, the producer
//!    (`CountProducer`), used before and after sumac's own adaptors and consumers;
//! 2. leaf consumers of one's own handed straight to `drive_unindexed`, `drive` and
//!    `bridge`: an order-free one (`MaxSumConsumer`), Rayon's `ListVecConsumer`, and one
//!    that checks the positions it is split at against the items it receives
//!    (`PosConsumer`, the contract Rayon's in-place `collect` relies on);
//! 3. unindexed drivers of one's own that call `split_off_left` / `to_reducer` themselves
//!    (`TwoHalves`, and the recursive `Thirds`, whose pieces may be empty), under sumac's
//!    consumers, `intersperse` included;
//! 4. drop accounting when a closure panics under a user consumer;
//! 5. a user consumer whose `full()` stops the loop early.
//!
//! None of these consumers sets sumac's `DETACHES`, so sumac drives them by splitting
//! them before each block of items: that is the path exercised here. Every consumer and
//! folder defines `full`, which Rayon requires (sumac gives it a default). With
//! `sumac` replaced by `rayon` (and the pools of `tests/common` built with Rayon's
//! builder, without the heartbeat setting), this file also builds
//! and passes against Rayon 1.12, except the `intersperse` checks under `TwoHalves` and
//! `Thirds`: Rayon's own `intersperse` puts a separator before the first item when a
//! left piece split off with `split_off_left` turns out empty. Every result is
//! compared with a sequential `std` computation, on pools of 1, 2 and 4 threads with a
//! 1 µs heartbeat (so loops split all the time).

use std::collections::LinkedList;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use proptest::prelude::*;
use sumac::iter::plumbing::{
    bridge, Consumer, Folder, Producer, ProducerCallback, Reducer, UnindexedConsumer,
};
use sumac::prelude::*;

use crate::common;
use common::{on_each, stress_pools as pools};

// ------------------------------------------------------------------------- pools

fn config() -> ProptestConfig {
    ProptestConfig::with_cases(32)
}

/// Reads a counter and resets it to 0.
fn take(counter: &AtomicUsize) -> usize {
    counter.swap(0, Ordering::Relaxed)
}

// ------------------------------------------------------------- sequential helpers

/// `items` with a clone of `sep` between every two adjacent ones (std's `intersperse`
/// is unstable).
fn intersperse_seq<T: Clone>(items: impl IntoIterator<Item = T>, sep: T) -> Vec<T> {
    let mut out = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(sep.clone());
        }
        out.push(item);
    }
    out
}

/// The affine map `x -> a * x + b` on wrapping `u64`, as `(a, b)`: composing such maps
/// is associative but not commutative, so a reduction in the wrong order shows.
type Affine = (u64, u64);

const IDENTITY: Affine = (1, 0);

/// An affine map made from `i` (`a` is odd, so no composition degenerates).
fn affine(i: usize) -> Affine {
    let i = i as u64;
    (i.wrapping_mul(2).wrapping_add(3), i ^ 0x5bd1_e995)
}

/// `f`, then `g`.
fn then(f: Affine, g: Affine) -> Affine {
    (
        g.0.wrapping_mul(f.0),
        g.0.wrapping_mul(f.1).wrapping_add(g.1),
    )
}

/// The nodes `1..=m` of a binary heap in prefix order (node `i` has children `2i` and
/// `2i + 1`).
fn heap_prefix(i: usize, m: usize, out: &mut Vec<usize>) {
    if i <= m {
        out.push(i);
        heap_prefix(2 * i, m, out);
        heap_prefix(2 * i + 1, m, out);
    }
}

// ===================================================== 1. a counting adaptor

/// Counts the items that flow through it, like indicatif's `ProgressBarIter`.
#[derive(Clone, Debug)]
struct Counted<'c, I> {
    base: I,
    counter: &'c AtomicUsize,
}

/// Adds `.counted(&counter)` to every parallel iterator.
trait CountedExt: ParallelIterator {
    fn counted(self, counter: &AtomicUsize) -> Counted<'_, Self> {
        Counted {
            base: self,
            counter,
        }
    }
}

impl<I: ParallelIterator> CountedExt for I {}

impl<'c, I: ParallelIterator> ParallelIterator for Counted<'c, I> {
    type Item = I::Item;

    fn drive_unindexed<C>(self, consumer: C) -> C::Result
    where
        C: UnindexedConsumer<Self::Item>,
    {
        self.base.drive_unindexed(CountConsumer {
            base: consumer,
            counter: self.counter,
        })
    }

    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len()
    }
}

impl<'c, I: IndexedParallelIterator> IndexedParallelIterator for Counted<'c, I> {
    fn len(&self) -> usize {
        self.base.len()
    }

    fn drive<C: Consumer<Self::Item>>(self, consumer: C) -> C::Result {
        bridge(self, consumer)
    }

    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        return self.base.with_producer(Callback {
            callback,
            counter: self.counter,
        });

        struct Callback<'c, CB> {
            callback: CB,
            counter: &'c AtomicUsize,
        }

        impl<'c, T, CB: ProducerCallback<T>> ProducerCallback<T> for Callback<'c, CB> {
            type Output = CB::Output;

            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                self.callback.callback(CountProducer {
                    base,
                    counter: self.counter,
                })
            }
        }
    }
}

/// The producer of [`Counted`] over an indexed base.
struct CountProducer<'c, P> {
    base: P,
    counter: &'c AtomicUsize,
}

impl<'c, P: Producer> Producer for CountProducer<'c, P> {
    type Item = P::Item;
    type IntoIter = CountIter<'c, P::IntoIter>;

    fn into_iter(self) -> Self::IntoIter {
        CountIter {
            base: self.base.into_iter(),
            counter: self.counter,
        }
    }

    fn min_len(&self) -> usize {
        self.base.min_len()
    }

    fn max_len(&self) -> usize {
        self.base.max_len()
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        let (left, right) = self.base.split_at(index);
        (
            CountProducer {
                base: left,
                counter: self.counter,
            },
            CountProducer {
                base: right,
                counter: self.counter,
            },
        )
    }

    fn fold_with<F: Folder<Self::Item>>(self, folder: F) -> F {
        let folder = CountFolder {
            base: folder,
            counter: self.counter,
        };
        self.base.fold_with(folder).base
    }
}

/// The sequential iterator of a [`CountProducer`].
struct CountIter<'c, I> {
    base: I,
    counter: &'c AtomicUsize,
}

impl<I: Iterator> Iterator for CountIter<'_, I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        let item = self.base.next();
        if item.is_some() {
            self.counter.fetch_add(1, Ordering::Relaxed);
        }
        item
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.base.size_hint()
    }
}

impl<I: DoubleEndedIterator> DoubleEndedIterator for CountIter<'_, I> {
    fn next_back(&mut self) -> Option<I::Item> {
        let item = self.base.next_back();
        if item.is_some() {
            self.counter.fetch_add(1, Ordering::Relaxed);
        }
        item
    }
}

impl<I: ExactSizeIterator> ExactSizeIterator for CountIter<'_, I> {}

/// The consumer of [`Counted`]: counts the items on their way to `base`.
struct CountConsumer<'c, C> {
    base: C,
    counter: &'c AtomicUsize,
}

impl<'c, T, C: Consumer<T>> Consumer<T> for CountConsumer<'c, C> {
    type Folder = CountFolder<'c, C::Folder>;
    type Reducer = C::Reducer;
    type Result = C::Result;

    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer) {
        let (left, right, reducer) = self.base.split_at(index);
        (
            CountConsumer {
                base: left,
                counter: self.counter,
            },
            CountConsumer {
                base: right,
                counter: self.counter,
            },
            reducer,
        )
    }

    fn into_folder(self) -> Self::Folder {
        CountFolder {
            base: self.base.into_folder(),
            counter: self.counter,
        }
    }

    fn full(&self) -> bool {
        self.base.full()
    }
}

impl<'c, T, C: UnindexedConsumer<T>> UnindexedConsumer<T> for CountConsumer<'c, C> {
    fn split_off_left(&self) -> Self {
        CountConsumer {
            base: self.base.split_off_left(),
            counter: self.counter,
        }
    }

    fn to_reducer(&self) -> Self::Reducer {
        self.base.to_reducer()
    }
}

struct CountFolder<'c, F> {
    base: F,
    counter: &'c AtomicUsize,
}

impl<T, F: Folder<T>> Folder<T> for CountFolder<'_, F> {
    type Result = F::Result;

    fn consume(self, item: T) -> Self {
        self.counter.fetch_add(1, Ordering::Relaxed);
        CountFolder {
            base: self.base.consume(item),
            counter: self.counter,
        }
    }

    fn complete(self) -> F::Result {
        self.base.complete()
    }

    fn full(&self) -> bool {
        self.base.full()
    }
}

fn mix(x: usize) -> usize {
    x.wrapping_mul(2_654_435_761) % 1_000_003
}

proptest! {
    #![proptest_config(config())]

    /// `counted` over indexed bases, before indexed adaptors (producer path) and before
    /// consumers (consumer path, split at positions).
    #[test]
    fn counted_indexed(
        n in 0usize..5000,
        m in 0usize..5000,
        k in 0usize..5200,
        target in 0usize..1_100_000,
    ) {
        let seq: Vec<usize> = (0..n).map(mix).collect();
        let other: Vec<u32> = (0..m as u32).map(|x| x ^ 0xa5a5).collect();
        on_each(pools(), || {
            let c = AtomicUsize::new(0);

            // Producer path: `map` and `collect` are indexed.
            prop_assert_eq!(
                (0..n).into_par_iter().counted(&c).map(mix).collect::<Vec<_>>(),
                seq.clone()
            );
            prop_assert_eq!(take(&c), n);

            // Consumer path: an indexed collect in place, driven through `CountConsumer`.
            prop_assert_eq!(
                (0..n).into_par_iter().map(mix).counted(&c).collect::<Vec<_>>(),
                seq.clone()
            );
            prop_assert_eq!(take(&c), n);
            prop_assert_eq!(
                (0..n).into_par_iter().counted(&c).sum::<usize>(),
                (0..n).sum::<usize>()
            );
            prop_assert_eq!(take(&c), n);
            prop_assert_eq!((0..n).into_par_iter().counted(&c).count(), n);
            prop_assert_eq!(take(&c), n);
            prop_assert_eq!(
                seq.par_iter().counted(&c).max(),
                seq.iter().max()
            );
            prop_assert_eq!(take(&c), n);

            // Through a filter before `counted`.
            prop_assert_eq!(
                (0..n).into_par_iter().map(mix).filter(|x| x % 3 == 0).counted(&c).sum::<usize>(),
                seq.iter().filter(|&&x| x % 3 == 0).sum::<usize>()
            );
            prop_assert_eq!(take(&c), seq.iter().filter(|&&x| x % 3 == 0).count());

            // zip, with `counted` on either side.
            let zipped: Vec<(usize, u32)> =
                seq.iter().copied().zip(other.iter().copied()).collect();
            prop_assert_eq!(
                seq.par_iter().counted(&c).zip(other.par_iter())
                    .map(|(&a, &b)| (a, b)).collect::<Vec<_>>(),
                zipped.clone()
            );
            let counted = take(&c);
            prop_assert!(
                counted >= n.min(m) && counted <= n,
                "zip: {} items counted, {} and {} items", counted, n, m
            );
            prop_assert_eq!(
                other.par_iter().copied().zip(seq.par_iter().copied().counted(&c))
                    .map(|(b, a)| (a, b)).collect::<Vec<_>>(),
                zipped
            );
            let counted = take(&c);
            prop_assert!(counted >= n.min(m) && counted <= n);

            // rev, enumerate, skip after `counted`.
            prop_assert_eq!(
                seq.par_iter().counted(&c).rev().copied().collect::<Vec<_>>(),
                seq.iter().rev().copied().collect::<Vec<_>>()
            );
            prop_assert_eq!(take(&c), n);
            prop_assert_eq!(
                (0..n).into_par_iter().counted(&c).map(mix).enumerate().collect::<Vec<_>>(),
                seq.iter().copied().enumerate().collect::<Vec<_>>()
            );
            prop_assert_eq!(take(&c), n);
            prop_assert_eq!(
                (0..n).into_par_iter().counted(&c).enumerate()
                    .filter(|(i, x)| (i + x) % 4 == 0).map(|(i, _)| i).collect::<Vec<_>>(),
                (0..n).filter(|i| (2 * i) % 4 == 0).collect::<Vec<_>>()
            );
            prop_assert_eq!(take(&c), n);
            prop_assert_eq!(
                seq.par_iter().counted(&c).skip(k).copied().collect::<Vec<_>>(),
                seq.iter().skip(k).copied().collect::<Vec<_>>()
            );
            let counted = take(&c);
            prop_assert!(counted >= n.saturating_sub(k) && counted <= n);
            prop_assert_eq!(
                seq.par_iter().copied().counted(&c).rev().skip(k).map(|x| x + 1).sum::<usize>(),
                seq.iter().rev().skip(k).map(|x| x + 1).sum::<usize>()
            );
            let counted = take(&c);
            prop_assert!(counted >= n.saturating_sub(k) && counted <= n);

            // find_first: the right answer; maybe not every item looked at.
            prop_assert_eq!(
                (0..n).into_par_iter().map(mix).counted(&c).find_first(|&x| x >= target),
                seq.iter().copied().find(|&x| x >= target)
            );
            prop_assert!(take(&c) <= n);
            prop_assert_eq!(
                (0..n).into_par_iter().counted(&c).map(mix).find_first(|&x| x >= target),
                seq.iter().copied().find(|&x| x >= target)
            );
            prop_assert!(take(&c) <= n);
            prop_assert_eq!(
                seq.par_iter().counted(&c).position_first(|&x| x % 97 == target % 97),
                seq.iter().position(|&x| x % 97 == target % 97)
            );
            prop_assert!(take(&c) <= n);
            prop_assert_eq!(
                seq.par_iter().counted(&c).find_last(|&&x| x % 97 == target % 97),
                seq.iter().rfind(|&&x| x % 97 == target % 97)
            );
            prop_assert!(take(&c) <= n);
            Ok(())
        })?;
    }

    /// `counted` over unindexed bases (`filter`, `flat_map`, `par_bridge`, `walk_tree`,
    /// `split`), collected in order.
    #[test]
    fn counted_unindexed(n in 0usize..5000, m in 0usize..3000, target in 0usize..1_100_000) {
        let seq: Vec<usize> = (0..n).map(mix).collect();
        let kept: Vec<usize> = seq.iter().copied().filter(|x| x % 3 != 1).collect();
        on_each(pools(), || {
            let c = AtomicUsize::new(0);

            prop_assert_eq!(
                seq.par_iter().copied().filter(|x| x % 3 != 1).counted(&c).collect::<Vec<_>>(),
                kept.clone()
            );
            prop_assert_eq!(take(&c), kept.len());
            prop_assert_eq!(
                (0..n).into_par_iter().filter(|x| x % 5 != 2).counted(&c).map(mix)
                    .collect::<Vec<_>>(),
                (0..n).filter(|x| x % 5 != 2).map(mix).collect::<Vec<_>>()
            );
            prop_assert_eq!(take(&c), (0..n).filter(|x| x % 5 != 2).count());
            prop_assert_eq!(
                seq.par_iter().copied().filter(|x| x % 3 != 1).counted(&c)
                    .find_first(|&x| x >= target),
                kept.iter().copied().find(|&x| x >= target)
            );
            prop_assert!(take(&c) <= kept.len());
            prop_assert_eq!(
                seq.par_iter().copied().filter(|x| x % 3 != 1).counted(&c)
                    .find_last(|&x| x >= target),
                kept.iter().copied().rfind(|&x| x >= target)
            );
            prop_assert!(take(&c) <= kept.len());

            // A chain of two counted unindexed iterators.
            let c2 = AtomicUsize::new(0);
            let tail: Vec<usize> = (0..m).filter(|x| x % 4 == 1).collect();
            let chained: Vec<usize> = kept.iter().copied().chain(tail.iter().copied()).collect();
            let chain = || {
                seq.par_iter().copied().filter(|x| x % 3 != 1).counted(&c)
                    .chain((0..m).into_par_iter().filter(|x| x % 4 == 1).counted(&c2))
            };
            prop_assert_eq!(chain().collect::<Vec<_>>(), chained.clone());
            prop_assert_eq!((take(&c), take(&c2)), (kept.len(), tail.len()));
            prop_assert_eq!(
                chain().find_first(|&x| x % 89 == target % 89),
                chained.iter().copied().find(|&x| x % 89 == target % 89)
            );
            prop_assert_eq!(
                chain().find_last(|&x| x % 89 == target % 89),
                chained.iter().copied().rfind(|&x| x % 89 == target % 89)
            );
            take(&c);
            take(&c2);

            // flat_map, order preserved.
            let flat: Vec<usize> = (0..n).flat_map(|i| 0..i % 7).collect();
            prop_assert_eq!(
                (0..n).into_par_iter().flat_map(|i| (0..i % 7).into_par_iter()).counted(&c)
                    .collect::<Vec<_>>(),
                flat.clone()
            );
            prop_assert_eq!(take(&c), flat.len());
            prop_assert_eq!(
                (0..n).into_par_iter().counted(&c).flat_map_iter(|i| 0..i % 7)
                    .collect::<Vec<_>>(),
                flat
            );
            prop_assert_eq!(take(&c), n);

            // par_bridge: the order is unspecified.
            let mut bridged: Vec<usize> =
                seq.iter().copied().par_bridge().counted(&c).collect();
            bridged.sort_unstable();
            let mut sorted = seq.clone();
            sorted.sort_unstable();
            prop_assert_eq!(bridged, sorted);
            prop_assert_eq!(take(&c), n);
            prop_assert_eq!(
                (0..n).par_bridge().counted(&c).map(mix).sum::<usize>(),
                seq.iter().sum::<usize>()
            );
            prop_assert_eq!(take(&c), n);

            // walk_tree_prefix: prefix order.
            let nodes = n.max(1);
            let mut prefix = Vec::new();
            heap_prefix(1, nodes, &mut prefix);
            prop_assert_eq!(
                sumac::iter::walk_tree_prefix(1usize, |&i| {
                    (2 * i..=2 * i + 1).filter(move |&j| j <= nodes)
                })
                .counted(&c)
                .collect::<Vec<_>>(),
                prefix
            );
            prop_assert_eq!(take(&c), nodes);

            // split: ranges cut in halves.
            prop_assert_eq!(
                sumac::iter::split(0..n, |r| {
                    if r.len() > 1 {
                        let mid = r.start + r.len() / 2;
                        (r.start..mid, Some(mid..r.end))
                    } else {
                        (r, None)
                    }
                })
                .flat_map_iter(|r| r)
                .counted(&c)
                .map(mix)
                .collect::<Vec<_>>(),
                seq.clone()
            );
            prop_assert_eq!(take(&c), n);
            Ok(())
        })?;
    }

    /// `fold` and `reduce` around `counted`, with an associative but not commutative
    /// operation: the pieces must be combined in order.
    #[test]
    fn counted_fold_and_reduce_keep_order(n in 0usize..5000) {
        let composed = (0..n).map(affine).fold(IDENTITY, then);
        let text: String = (0..n.min(1500)).map(|i| format!("{i},")).collect();
        on_each(pools(), || {
            let c = AtomicUsize::new(0);
            prop_assert_eq!(
                (0..n).into_par_iter().map(affine).counted(&c).reduce(|| IDENTITY, then),
                composed
            );
            prop_assert_eq!(take(&c), n);
            prop_assert_eq!(
                (0..n).into_par_iter().counted(&c).map(affine).reduce(|| IDENTITY, then),
                composed
            );
            prop_assert_eq!(take(&c), n);
            prop_assert_eq!(
                (0..n).into_par_iter().filter(|i| i % 4 != 3).map(affine).counted(&c)
                    .reduce(|| IDENTITY, then),
                (0..n).filter(|i| i % 4 != 3).map(affine).fold(IDENTITY, then)
            );
            take(&c);
            prop_assert_eq!(
                (0..n).into_par_iter().map(affine).counted(&c).reduce_with(then),
                (0..n).map(affine).reduce(then)
            );
            prop_assert_eq!(take(&c), n);

            // One accumulator per piece of the fold, each counted once.
            prop_assert_eq!(
                (0..n).into_par_iter()
                    .fold(|| IDENTITY, |acc, i| then(acc, affine(i)))
                    .counted(&c)
                    .reduce(|| IDENTITY, then),
                composed
            );
            let pieces = take(&c);
            prop_assert!(pieces >= usize::from(n > 0), "{} fold pieces for {} items", pieces, n);
            prop_assert_eq!(
                (0..n).into_par_iter().counted(&c)
                    .fold(|| IDENTITY, |acc, i| then(acc, affine(i)))
                    .reduce(|| IDENTITY, then),
                composed
            );
            prop_assert_eq!(take(&c), n);

            // Strings: concatenation.
            prop_assert_eq!(
                (0..n.min(1500)).into_par_iter()
                    .fold(String::new, |s, i| s + &format!("{i},"))
                    .counted(&c)
                    .reduce(String::new, |a, b| a + &b),
                text.clone()
            );
            take(&c);
            prop_assert_eq!(
                (0..n.min(1500)).into_par_iter().map(|i| format!("{i},")).counted(&c)
                    .reduce(String::new, |a, b| a + &b),
                text.clone()
            );
            prop_assert_eq!(take(&c), n.min(1500));
            prop_assert_eq!(
                (0..n.min(1500)).into_par_iter().counted(&c).map(|i| format!("{i},"))
                    .collect::<String>(),
                text.clone()
            );
            prop_assert_eq!(take(&c), n.min(1500));
            Ok(())
        })?;
    }

    /// `intersperse` after `counted`: every separator exactly once between two items.
    #[test]
    fn counted_intersperse(n in 0usize..5000, keep in 1usize..9) {
        let seq: Vec<usize> = (0..n).map(mix).collect();
        let kept: Vec<usize> = (0..n).filter(|i| i % keep == 0).map(mix).collect();
        on_each(pools(), || {
            let c = AtomicUsize::new(0);
            prop_assert_eq!(
                (0..n).into_par_iter().map(mix).counted(&c).intersperse(usize::MAX)
                    .collect::<Vec<_>>(),
                intersperse_seq(seq.iter().copied(), usize::MAX)
            );
            prop_assert_eq!(take(&c), n);
            prop_assert_eq!(
                (0..n).into_par_iter().counted(&c).map(mix).intersperse(usize::MAX).rev()
                    .collect::<Vec<_>>(),
                intersperse_seq(seq.iter().rev().copied(), usize::MAX)
            );
            prop_assert_eq!(take(&c), n);
            // An unindexed base: `counted` has no exact length.
            prop_assert_eq!(
                (0..n).into_par_iter().filter(|i| i % keep == 0).map(mix).counted(&c)
                    .intersperse(usize::MAX).collect::<Vec<_>>(),
                intersperse_seq(kept.iter().copied(), usize::MAX)
            );
            prop_assert_eq!(take(&c), kept.len());
            prop_assert_eq!(
                (0..n).into_par_iter().filter(|i| i % keep == 0).counted(&c).map(mix)
                    .intersperse(1).sum::<usize>(),
                kept.iter().sum::<usize>() + kept.len().saturating_sub(1)
            );
            prop_assert_eq!(take(&c), kept.len());
            prop_assert_eq!(
                (0..n).into_par_iter().filter(|i| i % keep == 0).counted(&c)
                    .intersperse(usize::MAX).counted(&c).count(),
                (2 * kept.len()).saturating_sub(1)
            );
            prop_assert_eq!(take(&c), kept.len() + (2 * kept.len()).saturating_sub(1));
            Ok(())
        })?;
    }
}

// ============================================== 2. leaf consumers of one's own

/// The sum and the largest of the items: an order-free leaf consumer.
#[derive(Clone, Copy, Debug)]
struct MaxSumConsumer;

struct MaxSumFolder {
    sum: u64,
    max: Option<u64>,
}

struct MaxSumReducer;

impl Consumer<u64> for MaxSumConsumer {
    type Folder = MaxSumFolder;
    type Reducer = MaxSumReducer;
    type Result = (u64, Option<u64>);

    fn split_at(self, _index: usize) -> (Self, Self, Self::Reducer) {
        (MaxSumConsumer, MaxSumConsumer, MaxSumReducer)
    }

    fn into_folder(self) -> Self::Folder {
        MaxSumFolder { sum: 0, max: None }
    }

    fn full(&self) -> bool {
        false
    }
}

impl UnindexedConsumer<u64> for MaxSumConsumer {
    fn split_off_left(&self) -> Self {
        MaxSumConsumer
    }

    fn to_reducer(&self) -> Self::Reducer {
        MaxSumReducer
    }
}

impl Folder<u64> for MaxSumFolder {
    type Result = (u64, Option<u64>);

    fn consume(self, item: u64) -> Self {
        MaxSumFolder {
            sum: self.sum.wrapping_add(item),
            max: self.max.max(Some(item)),
        }
    }

    fn complete(self) -> Self::Result {
        (self.sum, self.max)
    }

    fn full(&self) -> bool {
        false
    }
}

impl Reducer<(u64, Option<u64>)> for MaxSumReducer {
    fn reduce(self, left: (u64, Option<u64>), right: (u64, Option<u64>)) -> (u64, Option<u64>) {
        (left.0.wrapping_add(right.0), left.1.max(right.1))
    }
}

fn max_sum_seq(items: impl IntoIterator<Item = u64>) -> (u64, Option<u64>) {
    items
        .into_iter()
        .fold((0, None), |(s, m), x| (s.wrapping_add(x), m.max(Some(x))))
}

/// Rayon's `ListVecConsumer`: a vector per piece, the pieces listed in order.
#[derive(Clone, Copy, Debug)]
struct ListVecConsumer;

struct ListVecFolder<T> {
    vec: Vec<T>,
}

struct ListReducer;

impl<T: Send> Consumer<T> for ListVecConsumer {
    type Folder = ListVecFolder<T>;
    type Reducer = ListReducer;
    type Result = LinkedList<Vec<T>>;

    fn split_at(self, _index: usize) -> (Self, Self, Self::Reducer) {
        (ListVecConsumer, ListVecConsumer, ListReducer)
    }

    fn into_folder(self) -> Self::Folder {
        ListVecFolder { vec: Vec::new() }
    }

    fn full(&self) -> bool {
        false
    }
}

impl<T: Send> UnindexedConsumer<T> for ListVecConsumer {
    fn split_off_left(&self) -> Self {
        ListVecConsumer
    }

    fn to_reducer(&self) -> Self::Reducer {
        ListReducer
    }
}

impl<T> Folder<T> for ListVecFolder<T> {
    type Result = LinkedList<Vec<T>>;

    fn consume(mut self, item: T) -> Self {
        self.vec.push(item);
        self
    }

    fn consume_iter<I: IntoIterator<Item = T>>(mut self, iter: I) -> Self {
        self.vec.extend(iter);
        self
    }

    fn complete(self) -> Self::Result {
        let mut list = LinkedList::new();
        if !self.vec.is_empty() {
            list.push_back(self.vec);
        }
        list
    }

    fn full(&self) -> bool {
        false
    }
}

impl<T> Reducer<LinkedList<T>> for ListReducer {
    fn reduce(self, mut left: LinkedList<T>, mut right: LinkedList<T>) -> LinkedList<T> {
        left.append(&mut right);
        left
    }
}

fn flatten<T>(list: LinkedList<Vec<T>>) -> Vec<T> {
    list.into_iter().flatten().collect()
}

/// A consumer of the positions `start..end`, which checks that each piece receives
/// exactly as many items as the positions it was split at give it, and that pieces are
/// reduced with their neighbours (what Rayon's in-place `collect` relies on).
#[derive(Debug)]
struct PosConsumer {
    start: usize,
    end: usize,
}

impl PosConsumer {
    fn new(len: usize) -> Self {
        PosConsumer { start: 0, end: len }
    }
}

struct PosFolder<T> {
    start: usize,
    end: usize,
    items: Vec<T>,
}

/// The items of the positions `start..end`, in order.
struct Positioned<T> {
    start: usize,
    end: usize,
    items: Vec<T>,
}

struct PosReducer;

impl<T: Send> Consumer<T> for PosConsumer {
    type Folder = PosFolder<T>;
    type Reducer = PosReducer;
    type Result = Positioned<T>;

    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer) {
        assert!(
            index <= self.end - self.start,
            "split_at({index}) on the positions {}..{}",
            self.start,
            self.end
        );
        let mid = self.start + index;
        (
            PosConsumer {
                start: self.start,
                end: mid,
            },
            PosConsumer {
                start: mid,
                end: self.end,
            },
            PosReducer,
        )
    }

    fn into_folder(self) -> Self::Folder {
        PosFolder {
            start: self.start,
            end: self.end,
            items: Vec::new(),
        }
    }

    fn full(&self) -> bool {
        false
    }
}

impl<T: Send> UnindexedConsumer<T> for PosConsumer {
    fn split_off_left(&self) -> Self {
        panic!("PosConsumer needs positions: split_off_left is not supported");
    }

    fn to_reducer(&self) -> Self::Reducer {
        PosReducer
    }
}

impl<T> Folder<T> for PosFolder<T> {
    type Result = Positioned<T>;

    fn consume(mut self, item: T) -> Self {
        assert!(
            self.items.len() < self.end - self.start,
            "more items than the positions {}..{}",
            self.start,
            self.end
        );
        self.items.push(item);
        self
    }

    fn complete(self) -> Self::Result {
        assert_eq!(
            self.items.len(),
            self.end - self.start,
            "the positions {}..{} received {} items",
            self.start,
            self.end,
            self.items.len()
        );
        Positioned {
            start: self.start,
            end: self.end,
            items: self.items,
        }
    }

    fn full(&self) -> bool {
        false
    }
}

impl<T> Reducer<Positioned<T>> for PosReducer {
    fn reduce(self, mut left: Positioned<T>, mut right: Positioned<T>) -> Positioned<T> {
        assert_eq!(
            left.end, right.start,
            "reduced {}..{} with {}..{}",
            left.start, left.end, right.start, right.end
        );
        left.items.append(&mut right.items);
        Positioned {
            start: left.start,
            end: right.end,
            items: left.items,
        }
    }
}

/// The items of a [`PosConsumer`] run over all of `0..len`.
fn positioned<T>(result: Positioned<T>, len: usize) -> Vec<T> {
    assert_eq!((result.start, result.end), (0, len), "the whole range");
    result.items
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn max_sum_consumer(v in prop::collection::vec(any::<u32>(), 0..5000), n in 0u64..5000) {
        let wide = || v.iter().map(|&x| u64::from(x) * 1_000_003);
        on_each(pools(), || {
            prop_assert_eq!(
                (0..n).into_par_iter().drive_unindexed(MaxSumConsumer),
                max_sum_seq(0..n)
            );
            prop_assert_eq!(
                v.par_iter().map(|&x| u64::from(x) * 1_000_003).drive_unindexed(MaxSumConsumer),
                max_sum_seq(wide())
            );
            prop_assert_eq!(
                v.par_iter().map(|&x| u64::from(x)).filter(|x| x % 3 == 0)
                    .drive_unindexed(MaxSumConsumer),
                max_sum_seq(v.iter().map(|&x| u64::from(x)).filter(|x| x % 3 == 0))
            );
            prop_assert_eq!(
                wide().par_bridge().drive_unindexed(MaxSumConsumer),
                max_sum_seq(wide())
            );
            prop_assert_eq!(
                bridge((0..n as u32).into_par_iter().map(u64::from), MaxSumConsumer),
                max_sum_seq(0..n)
            );
            prop_assert_eq!(
                bridge(v.par_iter().rev().map(|&x| u64::from(x) * 1_000_003), MaxSumConsumer),
                max_sum_seq(wide())
            );
            prop_assert_eq!(
                (0..n as u32).into_par_iter().map(u64::from).drive(MaxSumConsumer),
                max_sum_seq(0..n)
            );
            prop_assert_eq!(
                (0..n).into_par_iter().flat_map_iter(|i| 0..i % 5).drive_unindexed(MaxSumConsumer),
                max_sum_seq((0..n).flat_map(|i| 0..i % 5))
            );
            let c = AtomicUsize::new(0);
            prop_assert_eq!(
                v.par_iter().map(|&x| u64::from(x)).counted(&c).drive_unindexed(MaxSumConsumer),
                max_sum_seq(v.iter().map(|&x| u64::from(x)))
            );
            prop_assert_eq!(take(&c), v.len());
            prop_assert_eq!(
                bridge(v.par_iter().map(|&x| u64::from(x)).counted(&c), MaxSumConsumer),
                max_sum_seq(v.iter().map(|&x| u64::from(x)))
            );
            prop_assert_eq!(take(&c), v.len());
            Ok(())
        })?;
    }

    #[test]
    fn list_vec_consumer_keeps_order(
        v in prop::collection::vec(any::<u16>(), 0..5000),
        n in 0usize..5000,
        k in 0usize..5200,
    ) {
        on_each(pools(), || {
            prop_assert_eq!(
                flatten((0..n).into_par_iter().drive_unindexed(ListVecConsumer)),
                (0..n).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                flatten(v.par_iter().drive_unindexed(ListVecConsumer)),
                v.iter().collect::<Vec<_>>()
            );
            prop_assert_eq!(
                flatten(v.par_iter().copied().drive(ListVecConsumer)),
                v.clone()
            );
            prop_assert_eq!(
                flatten(bridge(v.par_iter().copied().rev(), ListVecConsumer)),
                v.iter().rev().copied().collect::<Vec<_>>()
            );
            prop_assert_eq!(
                flatten(v.par_iter().copied().filter(|x| x % 3 == 0).drive_unindexed(ListVecConsumer)),
                v.iter().copied().filter(|x| x % 3 == 0).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                flatten((0..n).into_par_iter().map(mix).skip(k).drive_unindexed(ListVecConsumer)),
                (0..n).map(mix).skip(k).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                flatten(
                    (0..n).into_par_iter().flat_map(|i| (0..i % 6).into_par_iter())
                        .drive_unindexed(ListVecConsumer)
                ),
                (0..n).flat_map(|i| 0..i % 6).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                flatten(
                    v.par_iter().copied().filter(|x| x % 2 == 0)
                        .chain(v.par_iter().copied().filter(|x| x % 2 == 1))
                        .drive_unindexed(ListVecConsumer)
                ),
                v.iter().copied().filter(|x| x % 2 == 0)
                    .chain(v.iter().copied().filter(|x| x % 2 == 1))
                    .collect::<Vec<_>>()
            );
            prop_assert_eq!(
                flatten(v.par_iter().zip(0..n).drive_unindexed(ListVecConsumer)),
                v.iter().zip(0..n).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                flatten(v.par_iter().chunks(7).drive(ListVecConsumer)),
                v.chunks(7).map(|c| c.iter().collect::<Vec<_>>()).collect::<Vec<_>>()
            );
            let c = AtomicUsize::new(0);
            prop_assert_eq!(
                flatten(v.par_iter().counted(&c).enumerate().drive_unindexed(ListVecConsumer)),
                v.iter().enumerate().collect::<Vec<_>>()
            );
            prop_assert_eq!(take(&c), v.len());
            Ok(())
        })?;
    }

    /// Indexed iterators split a consumer at exactly the positions of the items its
    /// pieces then receive.
    #[test]
    fn positions_match_items(
        v in prop::collection::vec(any::<u16>(), 0..5000),
        n in 0usize..5000,
        k in 0usize..5200,
    ) {
        let len_zip = v.len().min(n);
        on_each(pools(), || {
            prop_assert_eq!(
                positioned((0..n).into_par_iter().drive(PosConsumer::new(n)), n),
                (0..n).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                positioned((0..n).into_par_iter().drive_unindexed(PosConsumer::new(n)), n),
                (0..n).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                positioned(bridge(v.par_iter().rev(), PosConsumer::new(v.len())), v.len()),
                v.iter().rev().collect::<Vec<_>>()
            );
            prop_assert_eq!(
                positioned(
                    v.par_iter().zip(0..n).map(|(&a, b)| (a, b))
                        .drive_unindexed(PosConsumer::new(len_zip)),
                    len_zip
                ),
                v.iter().zip(0..n).map(|(&a, b)| (a, b)).collect::<Vec<_>>()
            );
            let skipped = v.len().saturating_sub(k);
            prop_assert_eq!(
                positioned(v.par_iter().skip(k).enumerate().drive(PosConsumer::new(skipped)), skipped),
                v.iter().skip(k).enumerate().collect::<Vec<_>>()
            );
            let chunked = v.len().div_ceil(5);
            prop_assert_eq!(
                positioned(v.par_iter().chunks(5).drive_unindexed(PosConsumer::new(chunked)), chunked),
                v.chunks(5).map(|c| c.iter().collect::<Vec<_>>()).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                positioned(
                    v.par_iter().copied().chain((0..n).into_par_iter().map(|x| x as u16))
                        .drive_unindexed(PosConsumer::new(v.len() + n)),
                    v.len() + n
                ),
                v.iter().copied().chain((0..n).map(|x| x as u16)).collect::<Vec<_>>()
            );
            let c = AtomicUsize::new(0);
            prop_assert_eq!(
                positioned(v.par_iter().counted(&c).drive_unindexed(PosConsumer::new(v.len())), v.len()),
                v.iter().collect::<Vec<_>>()
            );
            prop_assert_eq!(take(&c), v.len());
            prop_assert_eq!(
                positioned(v.par_iter().counted(&c).rev().drive(PosConsumer::new(v.len())), v.len()),
                v.iter().rev().collect::<Vec<_>>()
            );
            prop_assert_eq!(take(&c), v.len());
            Ok(())
        })?;
    }

    /// A user consumer under sumac's indexed `intersperse`.
    #[test]
    fn leaf_consumers_under_intersperse(n in 0usize..5000) {
        let len = (2 * n).saturating_sub(1);
        let expected = intersperse_seq(0..n, usize::MAX);
        on_each(pools(), || {
            prop_assert_eq!(
                positioned(
                    (0..n).into_par_iter().intersperse(usize::MAX)
                        .drive_unindexed(PosConsumer::new(len)),
                    len
                ),
                expected.clone()
            );
            prop_assert_eq!(
                flatten((0..n).into_par_iter().intersperse(usize::MAX).drive(ListVecConsumer)),
                expected.clone()
            );
            prop_assert_eq!(
                flatten(
                    (0..n).into_par_iter().filter(|i| i % 3 == 0).intersperse(usize::MAX)
                        .drive_unindexed(ListVecConsumer)
                ),
                intersperse_seq((0..n).filter(|i| i % 3 == 0), usize::MAX)
            );
            Ok(())
        })?;
    }
}

// ============================================ 3. unindexed drivers of one's own

/// Splits its items in two halves by hand, with `split_off_left` and `to_reducer`.
struct TwoHalves(Vec<u32>);

impl ParallelIterator for TwoHalves {
    type Item = u32;

    fn drive_unindexed<C>(self, consumer: C) -> C::Result
    where
        C: UnindexedConsumer<Self::Item>,
    {
        let mut first_half = self.0;
        let second_half = first_half.split_off(first_half.len() / 2);
        let left = consumer.split_off_left();
        let reducer = consumer.to_reducer();
        let (a, b) = sumac::join(
            || left.into_folder().consume_iter(first_half).complete(),
            || consumer.into_folder().consume_iter(second_half).complete(),
        );
        reducer.reduce(a, b)
    }
}

/// Splits its items recursively, a third to the left, `depth` times (so short pieces
/// split into empty ones), splitting the consumer of each right part again: the way
/// Rayon's `bridge_unindexed` uses `split_off_left`.
struct Thirds {
    items: Vec<u32>,
    depth: u32,
}

fn drive_thirds<C>(mut items: Vec<u32>, depth: u32, consumer: C) -> C::Result
where
    C: UnindexedConsumer<u32>,
{
    if depth == 0 || consumer.full() {
        return consumer.into_folder().consume_iter(items).complete();
    }
    let right_items = items.split_off(items.len() / 3);
    let left = consumer.split_off_left();
    let reducer = consumer.to_reducer();
    let (a, b) = sumac::join(
        || drive_thirds(items, depth - 1, left),
        || drive_thirds(right_items, depth - 1, consumer),
    );
    reducer.reduce(a, b)
}

impl ParallelIterator for Thirds {
    type Item = u32;

    fn drive_unindexed<C>(self, consumer: C) -> C::Result
    where
        C: UnindexedConsumer<Self::Item>,
    {
        drive_thirds(self.items, self.depth, consumer)
    }
}

/// Checks sumac's consumers (and ours) under an unindexed driver of one's own, made by
/// `make`, over the items `v`.
fn check_driver<I, M>(v: &[u32], w: &[u32], target: u32, make: M) -> Result<(), TestCaseError>
where
    I: ParallelIterator<Item = u32>,
    M: Fn() -> I + Sync,
{
    prop_assert_eq!(make().opt_len(), None);
    prop_assert_eq!(make().collect::<Vec<_>>(), v.to_vec());
    prop_assert_eq!(make().count(), v.len());
    prop_assert_eq!(
        make().map(u64::from).sum::<u64>(),
        v.iter().map(|&x| u64::from(x)).sum::<u64>()
    );
    prop_assert_eq!(make().min(), v.iter().copied().min());
    prop_assert_eq!(
        make().find_first(|&x| x >= target),
        v.iter().copied().find(|&x| x >= target)
    );
    prop_assert_eq!(
        make().find_first(|&x| x % 7 == target % 7),
        v.iter().copied().find(|&x| x % 7 == target % 7)
    );
    prop_assert_eq!(
        make().find_last(|&x| x % 7 == target % 7),
        v.iter().copied().rfind(|&x| x % 7 == target % 7)
    );
    prop_assert_eq!(make().any(|x| x == target), v.contains(&target));
    prop_assert_eq!(
        make()
            .map(|x| x.wrapping_mul(3))
            .filter(|x| x % 2 == 0)
            .collect::<Vec<_>>(),
        v.iter()
            .map(|x| x.wrapping_mul(3))
            .filter(|x| x % 2 == 0)
            .collect::<Vec<_>>()
    );
    prop_assert_eq!(
        make()
            .fold(|| IDENTITY, |acc, x| then(acc, affine(x as usize)))
            .reduce(|| IDENTITY, then),
        v.iter().map(|&x| affine(x as usize)).fold(IDENTITY, then)
    );
    prop_assert_eq!(
        make().map(|x| affine(x as usize)).reduce(|| IDENTITY, then),
        v.iter().map(|&x| affine(x as usize)).fold(IDENTITY, then)
    );
    prop_assert_eq!(
        make().flat_map_iter(|x| 0..x % 4).collect::<Vec<_>>(),
        v.iter().flat_map(|&x| 0..x % 4).collect::<Vec<_>>()
    );
    prop_assert_eq!(
        make()
            .flat_map(|x| vec![x; (x % 3) as usize])
            .collect::<Vec<_>>(),
        v.iter()
            .flat_map(|&x| vec![x; (x % 3) as usize])
            .collect::<Vec<_>>()
    );
    prop_assert_eq!(
        make().chain(w.par_iter().copied()).collect::<Vec<_>>(),
        v.iter().chain(w).copied().collect::<Vec<_>>()
    );
    prop_assert_eq!(
        w.par_iter().copied().chain(make()).collect::<Vec<_>>(),
        w.iter().chain(v).copied().collect::<Vec<_>>()
    );
    prop_assert_eq!(
        make().chain(make()).find_last(|&x| x % 5 == target % 5),
        v.iter().chain(v).copied().rfind(|&x| x % 5 == target % 5)
    );
    prop_assert_eq!(flatten(make().drive_unindexed(ListVecConsumer)), v.to_vec());
    prop_assert_eq!(
        make().map(u64::from).drive_unindexed(MaxSumConsumer),
        max_sum_seq(v.iter().map(|&x| u64::from(x)))
    );
    let c = AtomicUsize::new(0);
    prop_assert_eq!(
        make()
            .counted(&c)
            .filter(|x| x % 3 != 0)
            .collect::<Vec<_>>(),
        v.iter().copied().filter(|x| x % 3 != 0).collect::<Vec<_>>()
    );
    prop_assert_eq!(take(&c), v.len());
    Ok(())
}

/// Checks `intersperse` under an unindexed driver of one's own: one separator between
/// every two items, however many pieces turn out empty.
fn check_driver_intersperse<I, M>(v: &[u32], make: M) -> Result<(), TestCaseError>
where
    I: ParallelIterator<Item = u32>,
    M: Fn() -> I + Sync,
{
    prop_assert_eq!(
        make().intersperse(0).collect::<Vec<_>>(),
        intersperse_seq(v.iter().copied(), 0)
    );
    prop_assert_eq!(
        make().intersperse(u32::MAX).collect::<Vec<_>>(),
        intersperse_seq(v.iter().copied(), u32::MAX)
    );
    prop_assert_eq!(
        make().intersperse(1).map(u64::from).sum::<u64>(),
        v.iter().map(|&x| u64::from(x)).sum::<u64>() + v.len().saturating_sub(1) as u64
    );
    prop_assert_eq!(
        make().intersperse(u32::MAX).count(),
        (2 * v.len()).saturating_sub(1)
    );
    prop_assert_eq!(
        make()
            .filter(|x| x % 4 == 0)
            .intersperse(u32::MAX)
            .collect::<Vec<_>>(),
        intersperse_seq(v.iter().copied().filter(|x| x % 4 == 0), u32::MAX)
    );
    prop_assert_eq!(
        flatten(
            make()
                .intersperse(u32::MAX)
                .drive_unindexed(ListVecConsumer)
        ),
        intersperse_seq(v.iter().copied(), u32::MAX)
    );
    prop_assert_eq!(
        make().intersperse(u32::MAX).find_first(|&x| x == u32::MAX),
        (v.len() >= 2).then_some(u32::MAX)
    );
    let c = AtomicUsize::new(0);
    prop_assert_eq!(
        make().counted(&c).intersperse(u32::MAX).collect::<Vec<_>>(),
        intersperse_seq(v.iter().copied(), u32::MAX)
    );
    prop_assert_eq!(take(&c), v.len());
    prop_assert_eq!(
        make()
            .intersperse(u32::MAX)
            .chain(make().intersperse(7))
            .collect::<Vec<_>>(),
        intersperse_seq(v.iter().copied(), u32::MAX)
            .into_iter()
            .chain(intersperse_seq(v.iter().copied(), 7))
            .collect::<Vec<_>>()
    );
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn two_halves_driver(
        v in prop::collection::vec(0u32..1000, 0..3000),
        w in prop::collection::vec(0u32..1000, 0..100),
        target in 0u32..1100,
    ) {
        on_each(pools(), || check_driver(&v, &w, target, || TwoHalves(v.clone())))?;
    }

    #[test]
    fn thirds_driver(
        v in prop::collection::vec(0u32..1000, 0..3000),
        w in prop::collection::vec(0u32..1000, 0..100),
        target in 0u32..1100,
        depth in 0u32..8,
    ) {
        on_each(pools(), || check_driver(&v, &w, target, || Thirds { items: v.clone(), depth }))?;
    }

    #[test]
    fn two_halves_intersperse(v in prop::collection::vec(0u32..1000, 0..3000)) {
        on_each(pools(), || check_driver_intersperse(&v, || TwoHalves(v.clone())))?;
    }

    #[test]
    fn thirds_intersperse(v in prop::collection::vec(0u32..1000, 0..3000), depth in 0u32..8) {
        on_each(pools(), || check_driver_intersperse(&v, || Thirds { items: v.clone(), depth }))?;
    }
}

/// Small inputs, where halves and thirds are empty, every size and depth.
#[test]
fn small_drivers_every_size() {
    for len in 0..12u32 {
        let v: Vec<u32> = (0..len).map(|x| x * 10 + 1).collect();
        let w = [5, 6];
        on_each(pools(), || {
            check_driver(&v, &w, 31, || TwoHalves(v.clone()))?;
            check_driver_intersperse(&v, || TwoHalves(v.clone()))?;
            for depth in 0..6 {
                check_driver(&v, &w, 31, || Thirds {
                    items: v.clone(),
                    depth,
                })?;
                check_driver_intersperse(&v, || Thirds {
                    items: v.clone(),
                    depth,
                })?;
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("len {len}: {e}"));
    }
}

// ================================================== 4. panics and drops

/// Counts the values made and dropped.
#[derive(Default)]
struct Ledger {
    made: AtomicUsize,
    dropped: AtomicUsize,
}

impl Ledger {
    fn items(&self, n: usize) -> Vec<Droppy<'_>> {
        self.made.fetch_add(n, Ordering::Relaxed);
        (0..n)
            .map(|index| Droppy {
                index,
                ledger: self,
            })
            .collect()
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

const DROP_N: usize = 2000;

/// A loop over owned items that panics midway (its counter is for `counted`).
type DropRun<'f> = dyn Fn(Vec<Droppy<'_>>, &AtomicUsize) + Sync + 'f;

/// Runs `f`, returning whether it panicked (the panic is caught).
fn panics<R>(f: impl FnOnce() -> R) -> bool {
    catch_unwind(AssertUnwindSafe(f)).is_err()
}

/// Passes `d` on, panicking at index `k`.
fn boom(d: Droppy<'_>, k: usize) -> Droppy<'_> {
    if d.index == k {
        panic!("boom at {k}");
    }
    d
}

#[test]
fn panic_under_a_user_consumer_drops_everything_once() {
    for (p, pool) in pools().iter().enumerate() {
        for k in [0, 1, 17, DROP_N / 2, DROP_N - 1] {
            let runs: [(&str, &DropRun<'_>); 5] = [
                ("map, counted, collect in place", &|items, c| {
                    let out: Vec<Droppy> = items
                        .into_par_iter()
                        .map(|d| boom(d, k))
                        .counted(c)
                        .collect();
                    drop(out);
                }),
                ("map, counted, filter, collect", &|items, c| {
                    let out: Vec<Droppy> = items
                        .into_par_iter()
                        .map(|d| boom(d, k))
                        .counted(c)
                        .filter(|d| d.index % 2 == 0)
                        .collect();
                    drop(out);
                }),
                ("counted, map, sum", &|items, c| {
                    let _: usize = items
                        .into_par_iter()
                        .counted(c)
                        .map(|d| boom(d, k).index)
                        .sum();
                }),
                ("map, counted, ListVecConsumer", &|items, c| {
                    let out = items
                        .into_par_iter()
                        .map(|d| boom(d, k))
                        .counted(c)
                        .drive_unindexed(ListVecConsumer);
                    drop(out);
                }),
                ("map, PosConsumer", &|items, _| {
                    let len = items.len();
                    let out = items
                        .into_par_iter()
                        .map(|d| boom(d, k))
                        .drive(PosConsumer::new(len));
                    drop(out);
                }),
            ];
            for (name, run) in runs {
                let ledger = Ledger::default();
                let items = ledger.items(DROP_N);
                let c = AtomicUsize::new(0);
                let panicked = panics(|| pool.install(|| run(items, &c)));
                assert!(panicked, "pool {p}, {name}: no panic at {k}");
                assert!(c.load(Ordering::Relaxed) <= DROP_N);
                assert_eq!(
                    ledger.dropped.load(Ordering::Relaxed),
                    DROP_N,
                    "pool {p}, {name}, panic at {k}: {} of {DROP_N} dropped",
                    ledger.dropped.load(Ordering::Relaxed)
                );
            }
        }
        // The pool still works, custom consumers included.
        let c = AtomicUsize::new(0);
        let sum: usize = pool.install(|| (0..1000usize).into_par_iter().counted(&c).sum());
        assert_eq!(sum, 999 * 1000 / 2);
        assert_eq!(take(&c), 1000);
        let list = pool.install(|| (0..1000).into_par_iter().drive_unindexed(ListVecConsumer));
        assert_eq!(flatten(list), (0..1000).collect::<Vec<_>>());
    }
}

// ================================================== 5. full() stops the loop

/// Finds some item that satisfies `pred` (like `find_any`), and is `full` as soon as
/// any piece found one. Counts the items it consumes.
struct FirstMatch<'a, P> {
    pred: &'a P,
    found: &'a AtomicBool,
    consumed: &'a AtomicUsize,
}

impl<P> FirstMatch<'_, P> {
    fn copy(&self) -> Self {
        FirstMatch {
            pred: self.pred,
            found: self.found,
            consumed: self.consumed,
        }
    }
}

struct FirstMatchFolder<'a, P, T> {
    consumer: FirstMatch<'a, P>,
    item: Option<T>,
}

struct OrReducer;

impl<'a, T, P> Consumer<T> for FirstMatch<'a, P>
where
    T: Send,
    P: Fn(&T) -> bool + Sync,
{
    type Folder = FirstMatchFolder<'a, P, T>;
    type Reducer = OrReducer;
    type Result = Option<T>;

    fn split_at(self, _index: usize) -> (Self, Self, Self::Reducer) {
        (self.copy(), self, OrReducer)
    }

    fn into_folder(self) -> Self::Folder {
        FirstMatchFolder {
            consumer: self,
            item: None,
        }
    }

    fn full(&self) -> bool {
        self.found.load(Ordering::Relaxed)
    }
}

impl<T, P> UnindexedConsumer<T> for FirstMatch<'_, P>
where
    T: Send,
    P: Fn(&T) -> bool + Sync,
{
    fn split_off_left(&self) -> Self {
        self.copy()
    }

    fn to_reducer(&self) -> Self::Reducer {
        OrReducer
    }
}

impl<T, P> Folder<T> for FirstMatchFolder<'_, P, T>
where
    P: Fn(&T) -> bool,
{
    type Result = Option<T>;

    fn consume(mut self, item: T) -> Self {
        self.consumer.consumed.fetch_add(1, Ordering::Relaxed);
        if self.item.is_none() && (self.consumer.pred)(&item) {
            self.item = Some(item);
            self.consumer.found.store(true, Ordering::Relaxed);
        }
        self
    }

    fn complete(self) -> Option<T> {
        self.item
    }

    fn full(&self) -> bool {
        self.item.is_some() || self.consumer.found.load(Ordering::Relaxed)
    }
}

impl<T> Reducer<Option<T>> for OrReducer {
    fn reduce(self, left: Option<T>, right: Option<T>) -> Option<T> {
        left.or(right)
    }
}

/// Runs `drive` with a fresh [`FirstMatch`] for `pred`: its result and the number of
/// items it consumed.
fn first_match<T, P, D>(pred: P, drive: D) -> (Option<T>, usize)
where
    P: Fn(&T) -> bool + Sync,
    D: FnOnce(FirstMatch<'_, P>) -> Option<T>,
{
    let found = AtomicBool::new(false);
    let consumed = AtomicUsize::new(0);
    let result = drive(FirstMatch {
        pred: &pred,
        found: &found,
        consumed: &consumed,
    });
    (result, consumed.into_inner())
}

#[test]
fn full_consumer_stops_early() {
    const N: usize = 1_000_000;
    for (p, pool) in pools().iter().enumerate() {
        let one_thread = p == 0;
        pool.install(|| {
            // The first item matches: the loop stops at once.
            let pred = |x: &usize| x % 1000 == 0;
            let (found, consumed) =
                first_match(pred, |c| (0..N).into_par_iter().drive_unindexed(c));
            assert!(found.is_some_and(|x| x % 1000 == 0), "pool {p}: {found:?}");
            if one_thread {
                assert_eq!(found, Some(0));
                assert!(consumed < 100, "pool {p}: consumed {consumed} of {N}");
            } else {
                assert!(consumed < N / 10, "pool {p}: consumed {consumed} of {N}");
            }

            // Through adaptors and `counted`, which pass `full` on.
            let c = AtomicUsize::new(0);
            let (found, consumed) = first_match(pred, |f| {
                (0..N)
                    .into_par_iter()
                    .counted(&c)
                    .map(|x| x * 3)
                    .filter(|x| x % 2 == 0)
                    .drive_unindexed(f)
            });
            let counted = take(&c);
            assert!(found.is_some_and(|x| x % 1000 == 0), "pool {p}: {found:?}");
            if one_thread {
                assert_eq!(found, Some(0));
                assert!(
                    consumed < 100 && counted < 100,
                    "pool {p}: {consumed}, {counted}"
                );
            } else {
                assert!(
                    consumed < N / 10 && counted < N / 10,
                    "pool {p}: {consumed}, {counted}"
                );
            }
            let (found, consumed) = first_match(pred, |f| bridge((0..N).into_par_iter(), f));
            assert!(found.is_some_and(|x| x % 1000 == 0), "pool {p}: {found:?}");
            assert!(consumed < N / 10, "pool {p}: consumed {consumed} of {N}");

            // sumac's own `find_first` through `counted`. Every piece has a match within
            // its first 1,000 items, so the bound holds however long the piece holding the
            // first item waits to run (a single match at 0 would leave a thief to run on
            // until a preempted owner gets its core back).
            let found = (0..N).into_par_iter().counted(&c).find_first(pred);
            assert_eq!(found, Some(0));
            let counted = take(&c);
            assert!(counted < N / 10, "pool {p}: counted {counted} of {N}");
            if one_thread {
                assert!(counted < 100, "pool {p}: counted {counted} of {N}");
            }

            // A single match in the middle: found; on one thread, nothing after it is
            // consumed.
            let k = N / 2 + 123;
            let (found, consumed) = first_match(
                |&x: &usize| x == k,
                |f| (0..N).into_par_iter().drive_unindexed(f),
            );
            assert_eq!(found, Some(k), "pool {p}");
            assert!(
                consumed > 0 && consumed <= N,
                "pool {p}: consumed {consumed}"
            );
            if one_thread {
                assert_eq!(consumed, k + 1, "pool {p}");
            }

            // No match: every item is consumed.
            let (found, consumed) = first_match(
                |&x: &usize| x == N,
                |f| (0..N).into_par_iter().drive_unindexed(f),
            );
            assert_eq!((found, consumed), (None, N), "pool {p}");
        });
    }
}
