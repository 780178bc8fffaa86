//! The machinery behind every parallel iterator: splittable [`Producer`]s, splittable
//! [`Consumer`]s with their sequential [`Folder`]s and ordered [`Reducer`]s, and
//! [`bridge_producer_consumer`], the heartbeat-driven loop that connects a producer to a
//! consumer.
//!
//! # Writing your own parallel iterator (as with Rayon)
//!
//! Every trait and function here has Rayon's name and shape, so a parallel iterator or
//! adaptor written against `rayon::iter::plumbing` compiles unchanged once its imports
//! name `sumac`:
//!
//! - an indexed source implements [`ParallelIterator`](super::ParallelIterator) and
//!   [`IndexedParallelIterator`](super::IndexedParallelIterator), hands a [`Producer`]
//!   to [`ProducerCallback::callback`] in `with_producer`, and drives consumers with
//!   [`bridge`] (or [`bridge_producer_consumer`]); see [`bridge`] for a complete example;
//! - an unindexed source implements [`UnindexedProducer`] and drives consumers with
//!   [`bridge_unindexed`];
//! - an adaptor wraps the [`Consumer`] / [`UnindexedConsumer`] it is given in its own,
//!   with its own [`Folder`] (and, if indexed, wraps producers the same way);
//! - a consumer of your own (a [`Consumer`] with a [`Folder`] and a [`Reducer`]) can be
//!   handed to any iterator's `drive_unindexed`, or `drive` when it is indexed.
//!
//! sumac adds one optional piece to [`Consumer`]: to split a loop *while it runs* (at a
//! heartbeat, in the middle of the items a folder is consuming), a consumer that sets
//! [`DETACHES`](Consumer::DETACHES) can [`detach`](Consumer::detach) a partly used folder
//! into the result so far and a consumer for the rest. sumac's own consumers all do. A
//! consumer written for Rayon does not, and is split before each block of items instead
//! (see [`Consumer`]).
//!
//! # How a loop runs
//!
//! [`bridge_producer_consumer`] runs the producer's items sequentially on the current
//! worker, in blocks.
//! Between two blocks it polls the worker's heartbeat flag (one relaxed load). When the
//! flag is up, an idle worker wants work: the loop finishes the prefix it has already
//! folded, splits its *remaining* items at their midpoint and hands the two halves to
//! [`crate::join()`], which promotes the worker's oldest pending fork. The halves run the
//! same loop again, and the results are combined in iteration order:
//! `reduce(prefix, reduce(left, right))`.
//!
//! The block size adapts to the loop body, measured with a cheap clock (the time-stamp
//! counter on x86_64): the first block is a single item (after a cheap one, the second
//! block takes up to 1,024 items); blocks then grow (by the factor that brings them to
//! about 2.5 µs, at most 64x) while they take less than that, and
//! shrink when they take more than about 20 µs, up to 65,536 items. So polling costs well
//! under 1% even for a body of one store, while a loop whose every item takes a long time
//! is still polled after each item. There is no up-front split and
//! no length-based cutoff.
//!
//! In a one-thread pool, where nothing could ever be shared, a loop runs as one block.
//!
//! When single items are expensive (more than about 10 µs each), the loop goes one step
//! further: after each item it splits its remaining items at once, so that their upper
//! half waits as a pending fork (a few stores) while the lower half runs. The pending
//! forks of such a loop are older than anything the inner parallel loops of its items
//! fork, so a heartbeat, which promotes the oldest pending fork, splits the outermost
//! loop that still has iterations left.

use super::driver;

/// A splittable source of items with a known length: the parallel counterpart of an
/// [`ExactSizeIterator`], with Rayon's shape.
///
/// Every indexed parallel iterator is driven through a producer. As in Rayon, a producer
/// does not report its length: whoever drives it knows it (from
/// [`IndexedParallelIterator::len`](super::IndexedParallelIterator::len), or the `len`
/// argument of [`bridge_producer_consumer`]) and keeps count across splits.
pub trait Producer: Send + Sized {
    /// The items produced.
    type Item;
    /// The sequential iterator over this producer's items.
    type IntoIter: Iterator<Item = Self::Item> + DoubleEndedIterator + ExactSizeIterator;

    /// Turns the producer into a sequential iterator over its items, in order.
    fn into_iter(self) -> Self::IntoIter;

    /// Feeds the producer's items to `folder`, in order, stopping early once it is
    /// [`full`](Folder::full). This is how the loop driver consumes a block; a producer
    /// can override it with a faster loop than its iterator's.
    fn fold_with<F>(self, folder: F) -> F
    where
        F: Folder<Self::Item>,
    {
        folder.consume_iter(self.into_iter())
    }

    /// Splits into the first `index` items and the rest (`index` is at most the number of
    /// items).
    fn split_at(self, index: usize) -> (Self, Self);

    /// The fewest items a piece may be split down to (see
    /// [`with_min_len`](super::IndexedParallelIterator::with_min_len)).
    fn min_len(&self) -> usize {
        1
    }

    /// The most items a piece may hold before it is split eagerly (see
    /// [`with_max_len`](super::IndexedParallelIterator::with_max_len)).
    fn max_len(&self) -> usize {
        usize::MAX
    }
}

/// Receives the output of a [`Producer`] (Rayon's `Consumer`, with one optional
/// extension): a consumer can be split at an index (in the producer's index space),
/// folded sequentially, and its partial results reduced in order.
///
/// # Splitting a loop while it runs
///
/// A heartbeat may ask a loop for work in the middle of a block of items it is folding.
/// A consumer that sets [`DETACHES`](Consumer::DETACHES) lets the loop keep one folder
/// for all its blocks and, at a heartbeat, [`detach`](Consumer::detach) the folder into
/// the result so far and a consumer for the rest; every consumer of sumac's own
/// adaptors does. A consumer that does not (one written for Rayon) is split before each
/// block instead, which costs a `split_at` and a `reduce` per block (blocks are sized to
/// take microseconds, so this is small; see `bench/DECISIONS.md`).
///
/// # Example
///
/// A consumer of one's own, written as for Rayon: it counts the items and keeps the
/// largest, and can be handed to any parallel iterator.
///
/// ```
/// use sumac::iter::plumbing::{Consumer, Folder, Reducer, UnindexedConsumer};
/// use sumac::prelude::*;
///
/// /// Counts items and keeps the largest.
/// struct CountMax;
/// struct CountMaxFolder(usize, Option<u32>);
/// struct CountMaxReducer;
///
/// impl Consumer<u32> for CountMax {
///     type Folder = CountMaxFolder;
///     type Reducer = CountMaxReducer;
///     type Result = (usize, Option<u32>);
///     fn split_at(self, _index: usize) -> (Self, Self, CountMaxReducer) {
///         (CountMax, CountMax, CountMaxReducer)
///     }
///     fn into_folder(self) -> CountMaxFolder {
///         CountMaxFolder(0, None)
///     }
///     fn full(&self) -> bool {
///         false
///     }
/// }
///
/// impl UnindexedConsumer<u32> for CountMax {
///     fn split_off_left(&self) -> Self {
///         CountMax
///     }
///     fn to_reducer(&self) -> CountMaxReducer {
///         CountMaxReducer
///     }
/// }
///
/// impl Folder<u32> for CountMaxFolder {
///     type Result = (usize, Option<u32>);
///     fn consume(self, item: u32) -> Self {
///         CountMaxFolder(self.0 + 1, self.1.max(Some(item)))
///     }
///     fn complete(self) -> (usize, Option<u32>) {
///         (self.0, self.1)
///     }
///     fn full(&self) -> bool {
///         false
///     }
/// }
///
/// impl Reducer<(usize, Option<u32>)> for CountMaxReducer {
///     fn reduce(self, l: (usize, Option<u32>), r: (usize, Option<u32>)) -> (usize, Option<u32>) {
///         (l.0 + r.0, l.1.max(r.1))
///     }
/// }
///
/// let v: Vec<u32> = (0..10_000).map(|i| i * 7 % 1000).collect();
/// let (count, max) = v.par_iter().copied().filter(|x| x % 2 == 0).drive_unindexed(CountMax);
/// assert_eq!((count, max), (5000, Some(998)));
/// ```
pub trait Consumer<Item>: Send + Sized {
    /// The sequential folder that consumes items.
    type Folder: Folder<Item, Result = Self::Result>;
    /// Combines the results of two adjacent pieces.
    type Reducer: Reducer<Self::Result>;
    /// The result of consuming a piece.
    type Result: Send;

    /// Whether [`detach`](Consumer::detach) is implemented (a consumer that wraps another
    /// one detaches when the inner one does).
    const DETACHES: bool = false;

    /// Splits into a consumer of the first `index` producer items, one for the rest, and
    /// the reducer that combines their results.
    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer);

    /// Starts consuming items sequentially.
    fn into_folder(self) -> Self::Folder;

    /// True when no more item is needed (a short-circuiting search has its answer).
    fn full(&self) -> bool {
        false
    }

    /// Finishes a folder that has consumed the first `consumed` producer items of its
    /// piece: returns the result for those items, a consumer for the items that remain,
    /// and the reducer that combines the two results. Only called when
    /// [`DETACHES`](Consumer::DETACHES) is true.
    ///
    /// # Panics
    /// The default implementation panics: a consumer that sets `DETACHES` must provide
    /// this method.
    fn detach(folder: Self::Folder, consumed: usize) -> (Self::Result, Self, Self::Reducer) {
        let _ = (folder, consumed);
        panic!("Consumer::detach called on a consumer whose DETACHES is false")
    }
}

/// A consumer that unindexed parallel iterators can drive (Rayon's `UnindexedConsumer`):
/// it can also be split where no position is known, and is the bound of
/// [`ParallelIterator::drive_unindexed`](super::ParallelIterator::drive_unindexed).
/// See [`Consumer`] for an example that implements both traits.
pub trait UnindexedConsumer<Item>: Consumer<Item> {
    /// A consumer for items that come before all of this consumer's (this one keeps the
    /// items after them).
    fn split_off_left(&self) -> Self;

    /// A reducer that combines the result of a left piece with that of the adjacent
    /// right one.
    fn to_reducer(&self) -> Self::Reducer;
}

/// Splits the consumer of items without positions into a consumer for earlier items, one
/// for later items and the reducer that combines their results. sumac's unindexed
/// drivers split at position 0, as all their pieces cover the empty range at 0 (see
/// [`ParallelIterator::index_span`](super::ParallelIterator::index_span)); for a
/// consumer that wraps one of sumac's, that is what `split_off_left` does.
pub(crate) fn split_unindexed<T, C: Consumer<T>>(consumer: C) -> (C, C, C::Reducer) {
    consumer.split_at(0)
}

/// The folder of a loop over items without positions (`par_bridge`, `walk_tree`), which
/// may hand the rest of its work to another piece at any point: one folder that is
/// detached then when the consumer [`DETACHES`](Consumer::DETACHES), otherwise the
/// folder of a consumer split off to the left, with the consumer of the rest and the
/// reducer of the split beside it.
pub(crate) struct UnindexedFold<T, C: Consumer<T>> {
    folder: C::Folder,
    rest: Option<(C, C::Reducer)>,
}

impl<T, C: Consumer<T>> UnindexedFold<T, C> {
    pub(crate) fn new(consumer: C) -> Self {
        if C::DETACHES {
            UnindexedFold {
                folder: consumer.into_folder(),
                rest: None,
            }
        } else {
            let (left, rest, reducer) = split_unindexed(consumer);
            UnindexedFold {
                folder: left.into_folder(),
                rest: Some((rest, reducer)),
            }
        }
    }

    pub(crate) fn full(&self) -> bool {
        self.folder.full()
    }

    pub(crate) fn consume(self, item: T) -> Self {
        UnindexedFold {
            folder: self.folder.consume(item),
            rest: self.rest,
        }
    }

    pub(crate) fn consume_iter<I: IntoIterator<Item = T>>(self, items: I) -> Self {
        UnindexedFold {
            folder: self.folder.consume_iter(items),
            rest: self.rest,
        }
    }

    pub(crate) fn complete(self) -> C::Result {
        let result = self.folder.complete();
        match self.rest {
            Some((rest, reducer)) => reducer.reduce(result, rest.into_folder().complete()),
            None => result,
        }
    }

    /// The result so far, a consumer for the rest and the reducer that combines them.
    pub(crate) fn detach(self) -> (C::Result, C, C::Reducer) {
        match self.rest {
            Some((rest, reducer)) => (self.folder.complete(), rest, reducer),
            None => C::detach(self.folder, 0),
        }
    }
}

/// A source of items that can be cut in two, where neither half knows how many items it
/// holds (Rayon's `UnindexedProducer`), for example a tree or a hash table's buckets.
/// [`bridge_unindexed`] runs it; its documentation has an example.
pub trait UnindexedProducer: Send + Sized {
    /// The items produced.
    type Item;

    /// Cuts the producer in two, the first half's items coming first; `(self, None)`
    /// when it cannot or should not be cut further.
    fn split(self) -> (Self, Option<Self>);

    /// Feeds the producer's items to `folder`, in order (stopping early once it is
    /// [`full`](Folder::full)).
    fn fold_with<F>(self, folder: F) -> F
    where
        F: Folder<Self::Item>;
}

/// Runs an [`UnindexedProducer`] into `consumer` on the current pool: the producer is
/// cut eagerly into about one piece per worker and then whenever an idle worker asks for
/// work (as [`split`](super::split()) cuts its data), and each uncut piece folds its own
/// items; the results are combined in order.
///
/// As in Rayon, an iterator driven this way must leave
/// [`opt_len`](super::ParallelIterator::opt_len) at `None`: its pieces carry no
/// positions.
///
/// ```
/// use sumac::iter::plumbing::{bridge_unindexed, Folder, UnindexedConsumer, UnindexedProducer};
/// use sumac::prelude::*;
///
/// /// The numbers of a range, cut in halves down to 1,000 numbers.
/// struct Numbers(std::ops::Range<u64>);
///
/// impl UnindexedProducer for Numbers {
///     type Item = u64;
///     fn split(self) -> (Self, Option<Self>) {
///         let r = self.0;
///         if r.end - r.start <= 1000 {
///             return (Numbers(r), None);
///         }
///         let mid = r.start + (r.end - r.start) / 2;
///         (Numbers(r.start..mid), Some(Numbers(mid..r.end)))
///     }
///     fn fold_with<F: Folder<u64>>(self, folder: F) -> F {
///         folder.consume_iter(self.0)
///     }
/// }
///
/// impl ParallelIterator for Numbers {
///     type Item = u64;
///     fn drive_unindexed<C: UnindexedConsumer<u64>>(self, consumer: C) -> C::Result {
///         bridge_unindexed(self, consumer)
///     }
/// }
///
/// assert_eq!(Numbers(0..100_000).sum::<u64>(), 4_999_950_000);
/// let v: Vec<u64> = Numbers(0..5000).filter(|x| x % 1000 == 0).collect();
/// assert_eq!(v, [0, 1000, 2000, 3000, 4000]);
/// ```
pub fn bridge_unindexed<P, C>(producer: P, consumer: C) -> C::Result
where
    P: UnindexedProducer,
    C: UnindexedConsumer<P::Item>,
{
    super::split::bridge_unindexed(producer, consumer)
}

/// The sequential side of a [`Consumer`]: consumes items one after another.
pub trait Folder<Item>: Sized {
    /// What the folder produces once complete.
    type Result;

    /// Consumes one item.
    fn consume(self, item: Item) -> Self;

    /// Consumes every item of `iter` (stopping early when [`full`](Folder::full)).
    fn consume_iter<I>(mut self, iter: I) -> Self
    where
        I: IntoIterator<Item = Item>,
    {
        for item in iter {
            self = self.consume(item);
            if self.full() {
                break;
            }
        }
        self
    }

    /// Finishes folding.
    fn complete(self) -> Self::Result;

    /// True when no more item is needed.
    fn full(&self) -> bool {
        false
    }
}

/// Combines the results of two adjacent pieces, the left one first.
pub trait Reducer<Result> {
    /// Combines `left` (earlier items) with `right` (later items).
    fn reduce(self, left: Result, right: Result) -> Result;
}

/// Receives the producer of an indexed parallel iterator (producers of adaptors borrow
/// their closures, so they are handed to a callback rather than returned).
pub trait ProducerCallback<Item> {
    /// What the callback returns.
    type Output;
    /// Called with the producer.
    fn callback<P>(self, producer: P) -> Self::Output
    where
        P: Producer<Item = Item>;
}

/// A reducer that ignores both results (for consumers whose result is `()`).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoopReducer;

impl Reducer<()> for NoopReducer {
    #[inline]
    fn reduce(self, _left: (), _right: ()) {}
}

/// Runs the indexed parallel iterator `par_iter` into `consumer` (Rayon's `bridge`): asks
/// the iterator for its producer and drives it with [`bridge_producer_consumer`]. This
/// is how a hand-written indexed iterator implements
/// [`drive_unindexed`](super::ParallelIterator::drive_unindexed) and
/// [`drive`](super::IndexedParallelIterator::drive).
///
/// ```
/// use sumac::iter::plumbing::{bridge, Consumer, Producer, ProducerCallback, UnindexedConsumer};
/// use sumac::prelude::*;
///
/// /// The first `n` multiples of three.
/// struct Threes { n: usize }
/// struct ThreesProducer { range: std::ops::Range<usize> }
///
/// impl ParallelIterator for Threes {
///     type Item = usize;
///     fn drive_unindexed<C: UnindexedConsumer<usize>>(self, consumer: C) -> C::Result {
///         bridge(self, consumer)
///     }
///     fn opt_len(&self) -> Option<usize> {
///         Some(self.n)
///     }
/// }
/// impl IndexedParallelIterator for Threes {
///     fn len(&self) -> usize {
///         self.n
///     }
///     fn drive<C: Consumer<usize>>(self, consumer: C) -> C::Result {
///         bridge(self, consumer)
///     }
///     fn with_producer<CB: ProducerCallback<usize>>(self, callback: CB) -> CB::Output {
///         callback.callback(ThreesProducer { range: 0..self.n })
///     }
/// }
/// impl Producer for ThreesProducer {
///     type Item = usize;
///     type IntoIter = std::iter::Map<std::ops::Range<usize>, fn(usize) -> usize>;
///     fn into_iter(self) -> Self::IntoIter {
///         self.range.map(|i| 3 * i)
///     }
///     fn split_at(self, index: usize) -> (Self, Self) {
///         let mid = self.range.start + index;
///         (
///             ThreesProducer { range: self.range.start..mid },
///             ThreesProducer { range: mid..self.range.end },
///         )
///     }
/// }
///
/// let v: Vec<usize> = Threes { n: 1000 }.rev().take(3).collect();
/// assert_eq!(v, [2997, 2994, 2991]);
/// assert_eq!(Threes { n: 1000 }.sum::<usize>(), 3 * 999 * 1000 / 2);
/// ```
pub fn bridge<I, C>(par_iter: I, consumer: C) -> C::Result
where
    I: super::IndexedParallelIterator,
    C: Consumer<I::Item>,
{
    let len = par_iter.len();
    par_iter.with_producer(BridgeCallback { len, consumer })
}

/// Runs `producer`, which yields `len` items, into `consumer` on the current pool (the
/// global pool when called from outside any pool), splitting on heartbeats. This is the
/// single entry point of every indexed parallel loop.
///
/// ```
/// use sumac::iter::plumbing::{bridge_producer_consumer, Producer};
/// use sumac::prelude::*;
///
/// // A producer over 0..n; `collect` hands `bridge_producer_consumer` its consumer.
/// struct Upto(std::ops::Range<u32>);
/// impl Producer for Upto {
///     type Item = u32;
///     type IntoIter = std::ops::Range<u32>;
///     fn into_iter(self) -> std::ops::Range<u32> {
///         self.0
///     }
///     fn split_at(self, index: usize) -> (Self, Self) {
///         let mid = self.0.start + index as u32;
///         (Upto(self.0.start..mid), Upto(mid..self.0.end))
///     }
/// }
/// # use sumac::iter::plumbing::{Consumer, ProducerCallback, UnindexedConsumer};
/// # struct Iter(u32);
/// # impl ParallelIterator for Iter {
/// #     type Item = u32;
/// #     fn drive_unindexed<C: UnindexedConsumer<u32>>(self, c: C) -> C::Result {
/// #         bridge_producer_consumer(self.0 as usize, Upto(0..self.0), c)
/// #     }
/// # }
/// let total: u32 = Iter(100).sum();
/// assert_eq!(total, 4950);
/// ```
pub fn bridge_producer_consumer<P, C>(len: usize, producer: P, consumer: C) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    driver::run(len, producer, consumer)
}

/// A [`ProducerCallback`] that bridges the producer, of `len` items, into a consumer.
pub(crate) struct BridgeCallback<C> {
    pub(crate) len: usize,
    pub(crate) consumer: C,
}

impl<T, C: Consumer<T>> ProducerCallback<T> for BridgeCallback<C> {
    type Output = C::Result;
    fn callback<P>(self, producer: P) -> C::Result
    where
        P: Producer<Item = T>,
    {
        bridge_producer_consumer(self.len, producer, self.consumer)
    }
}
