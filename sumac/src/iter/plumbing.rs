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
//! [`crate::join`], which promotes the worker's oldest pending fork. The halves run the
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

use crate::join::{join_hinted, ForkSize};
use crate::HeartbeatPoll;

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
/// take microseconds, so this is small: summing 10 million numbers through such a
/// consumer took 0.94-1.02x the time of sumac's own `sum`, on 1 and 2 threads of the
/// 2-core development VM).
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
/// work (as [`split`](super::split) cuts its data), and each uncut piece folds its own
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
    crate::in_worker_single_aware(move |single_thread| {
        if single_thread && len <= producer.max_len() && !hooks::forcing() {
            run_as_one_block(producer, consumer)
        } else if len >= 2
            && producer.min_len() <= 1
            && len <= producer.max_len()
            && crate::registry::a_worker_waits()
        {
            split_off_first_item(producer, len, consumer)
        } else {
            drive(producer, len, consumer, 1, 0)
        }
    })
}

/// A loop that starts while a worker of its pool waits for work: its first item runs as
/// the first closure of a `join` whose second closure is the rest of the loop. A loop
/// times its first block (one item) before it may split, so without this, a first item
/// that runs long without forks would keep the rest of the loop from everyone. Here the
/// rest is a recorded fork, which a heartbeat shares once it has waited an interval, or,
/// if the item makes no forks, the heartbeat thread hands to an idle worker through the
/// rescue offer (see `RescueSlot`). If the item is quick, the rest runs inline as a loop
/// of its own, at the cost of one fork and one consumer split. Loops under
/// `with_min_len` keep their first block whole and skip this.
///
/// If another worker took the rest, the first item had run for at least a heartbeat
/// interval by then: the rest's items are taken to be long too, and it is halved down to
/// single items before any of them runs (see [`LONG_ITEM_LEVELS`]).
fn split_off_first_item<P, C>(producer: P, len: usize, consumer: C) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    let (first_p, rest_p) = producer.split_at(1);
    let (first_c, rest_c, reducer) = consumer.split_at(1);
    let caller = crate::current_thread_index();
    let (first, rest) = join_hinted(
        // One item needs no block loop, clock or polls (the rest times its own first
        // block).
        move || run_as_one_block(first_p, first_c),
        move || {
            let migrated = crate::current_thread_index() != caller;
            let long_items = if migrated { LONG_ITEM_LEVELS } else { 0 };
            drive(rest_p, len - 1, rest_c, 1, long_items)
        },
        ForkSize::RestOfLoop,
    );
    reducer.reduce(first, rest)
}

/// The loop of a one-thread pool, where no piece could ever be shared: all items in one
/// block, with no clock reads and no heartbeat polls (so a loop there costs what the
/// sequential loop costs, plus finding the worker). sum-squares of 1,000 elements at one
/// thread went from 1.08-1.20x to 0.99-1.03x the sequential time (2-core VM,
/// interleaved pairs). A `with_max_len` shorter than the loop still splits it.
fn run_as_one_block<P, C>(producer: P, consumer: C) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    if consumer.full() {
        // Drop the items first (see `drive_blocks`).
        drop(producer);
        return consumer.into_folder().complete();
    }
    producer.fold_with(consumer.into_folder()).complete()
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

/// A block grows while it takes fewer ticks than this (about 2.5 µs at 2.4 GHz): by the
/// factor that would bring it to this duration, between 2 and [`MAX_GROWTH`].
const GROW_BELOW: u64 = 6_000;
/// A block shrinks (/2) when it takes more ticks than this.
const SHRINK_ABOVE: u64 = 48_000;
/// When a single item takes more ticks than this (about 10 µs), the loop keeps the rest
/// of its items as a pending fork while it runs the next ones (see [`drive`]).
const EAGER_ABOVE: u64 = 4 * GROW_BELOW;
/// How many times a piece whose items are known to be long (each took more than
/// [`EAGER_ABOVE`] ticks) is halved before any of its items runs: its halves are recorded
/// forks, known big, so every idle worker can get one at once (or through the rescue
/// offer, while this worker runs an item and makes no forks), instead of waiting for
/// this worker to time one more item first. Six levels split up to 64 items down to
/// single ones; larger pieces time their first item again. Bounded, so that a loop
/// whose first items were long but whose others are cheap pays at most 63 extra forks
/// for each long item it timed.
const LONG_ITEM_LEVELS: u32 = 6;

/// The fastest growth from one block to the next.
const MAX_GROWTH: u64 = 64;
/// The largest block.
const MAX_BLOCK: usize = 1 << 16;

/// After a first block (a single item) that took less than `GROW_BELOW / 16` ticks, the
/// second block aims at `16 * GROW_BELOW` ticks (about 40 µs), up to this many items: a
/// 1,000-item loop of cheap items thus runs in two blocks and reads the clock twice.
const MAX_FIRST_GROWTH: u64 = 1024;

/// The next block size after a block of `block` items took `ticks` clock ticks.
#[inline]
pub(crate) fn adapt(block: usize, ticks: u64) -> usize {
    let ticks = ticks.max(1);
    if block == 1 && ticks < GROW_BELOW / 16 {
        (16 * GROW_BELOW / ticks).clamp(2, MAX_FIRST_GROWTH) as usize
    } else if ticks < GROW_BELOW {
        let factor = (GROW_BELOW / ticks).clamp(2, MAX_GROWTH) as usize;
        block.saturating_mul(factor).min(MAX_BLOCK)
    } else if ticks > SHRINK_ABOVE {
        (block / 2).max(1)
    } else {
        block
    }
}

/// The sequential loop of one piece of `len` items; `block` is the starting block size.
/// A piece whose items are known to be long is halved `long_items` more times before it
/// runs any (see [`LONG_ITEM_LEVELS`]).
fn drive<P, C>(producer: P, len: usize, consumer: C, block: usize, long_items: u32) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    let min = producer.min_len().max(1);
    // A piece that is to stop (a search found its answer elsewhere) does not split down
    // to `with_max_len` pieces first.
    if len > producer.max_len() && len / 2 >= min && !consumer.full() {
        return split_join(producer, len, consumer, block, false, long_items);
    }
    if long_items > 0 && len >= 2 && len / 2 >= min && !consumer.full() {
        return split_join(producer, len, consumer, block, true, long_items - 1);
    }
    if consumer.full() || len == 0 {
        // Drop the items first (see `drive_blocks`).
        drop(producer);
        return consumer.into_folder().complete();
    }
    // `DETACHES` is a constant: only one of the two loops is compiled in for a consumer.
    if C::DETACHES {
        drive_blocks::<P, C, DetachingFold<P::Item, C>>(producer, len, min, consumer, block)
    } else {
        drive_blocks::<P, C, SplittingFold<P::Item, C>>(producer, len, min, consumer, block)
    }
}

/// A result so far, with the reducer that appends the next result to it.
type Appendable<T, C> = (<C as Consumer<T>>::Result, <C as Consumer<T>>::Reducer);

/// What a loop has folded so far, and how it splits off the rest at a heartbeat.
trait LoopFold<T, C: Consumer<T>>: Sized {
    fn start(consumer: C) -> Self;
    /// Folds the next `n` items, those of `head` (`last`: no items follow them).
    fn fold_block<P: Producer<Item = T>>(self, head: P, n: usize, last: bool) -> Self;
    fn full(&self) -> bool;
    fn complete(self) -> C::Result;
    /// The result so far (with the reducer that appends the rest's result to it) and a
    /// consumer for the items not folded yet.
    fn detach(self) -> (Option<Appendable<T, C>>, C);
    /// Whether what was folded so far may close as a piece of its own: it holds at least
    /// `min` items (`with_min_len`). With no minimum (1), a split may also come before
    /// the first block (only the test hook `force_splits` makes one there).
    fn may_detach(&self, min: usize) -> bool;
}

/// One folder for all the blocks, detached at a split (consumers that set `DETACHES`).
struct DetachingFold<T, C: Consumer<T>> {
    folder: C::Folder,
    consumed: usize,
}

impl<T, C: Consumer<T>> LoopFold<T, C> for DetachingFold<T, C> {
    #[inline]
    fn start(consumer: C) -> Self {
        DetachingFold {
            folder: consumer.into_folder(),
            consumed: 0,
        }
    }
    #[inline]
    fn fold_block<P: Producer<Item = T>>(self, head: P, n: usize, _last: bool) -> Self {
        DetachingFold {
            folder: head.fold_with(self.folder),
            consumed: self.consumed + n,
        }
    }
    #[inline]
    fn full(&self) -> bool {
        self.folder.full()
    }
    #[inline]
    fn complete(self) -> C::Result {
        self.folder.complete()
    }
    fn detach(self) -> (Option<Appendable<T, C>>, C) {
        let (result, rest, reducer) = C::detach(self.folder, self.consumed);
        (Some((result, reducer)), rest)
    }
    #[inline]
    fn may_detach(&self, min: usize) -> bool {
        min == 1 || self.consumed >= min
    }
}

/// Each block folded by a consumer split off for it, its result reduced into the result
/// so far (consumers that cannot detach, such as those written for Rayon). The reducer
/// of the latest split is kept to append whatever comes next. The last block folds with
/// the remaining consumer itself, so the pieces are exactly the blocks.
enum SplittingFold<T, C: Consumer<T>> {
    Folding {
        done: Option<Appendable<T, C>>,
        rest: C,
    },
    /// The last block was folded: the whole result.
    Finished(C::Result),
}

impl<T, C: Consumer<T>> LoopFold<T, C> for SplittingFold<T, C> {
    fn start(consumer: C) -> Self {
        SplittingFold::Folding {
            done: None,
            rest: consumer,
        }
    }
    fn fold_block<P: Producer<Item = T>>(self, head: P, n: usize, last: bool) -> Self {
        let SplittingFold::Folding { done, rest } = self else {
            unreachable!("a block after the last one");
        };
        let append = |result| match done {
            Some((before, append)) => append.reduce(before, result),
            None => result,
        };
        if last {
            return SplittingFold::Finished(append(head.fold_with(rest.into_folder()).complete()));
        }
        let (here, rest, reducer) = rest.split_at(n);
        let result = append(head.fold_with(here.into_folder()).complete());
        SplittingFold::Folding {
            done: Some((result, reducer)),
            rest,
        }
    }
    fn full(&self) -> bool {
        match self {
            SplittingFold::Folding { rest, .. } => rest.full(),
            SplittingFold::Finished(_) => true,
        }
    }
    fn complete(self) -> C::Result {
        match self {
            SplittingFold::Folding { done, rest } => {
                let last = rest.into_folder().complete();
                match done {
                    Some((before, append)) => append.reduce(before, last),
                    None => last,
                }
            }
            SplittingFold::Finished(result) => result,
        }
    }
    fn detach(self) -> (Option<Appendable<T, C>>, C) {
        match self {
            SplittingFold::Folding { done, rest } => (done, rest),
            SplittingFold::Finished(_) => unreachable!("a split after the last block"),
        }
    }
    /// Every block already holds at least `min` items (see [`block_items`]).
    fn may_detach(&self, _min: usize) -> bool {
        true
    }
}

/// How many of the `len` items left the next block folds, for a loop whose last block
/// had `block` items and whose pieces hold at least `min` items (`with_min_len`; 1
/// without it).
///
/// A block holds at least `min` items: no split can come before `min` items were folded
/// (the folded prefix closes as a piece of its own), and where each block is a fold
/// piece of its own, a smaller one would break the minimum. And a block that would
/// leave too few items for a later split (whose halves must hold `min` each) takes them
/// all: they would be folded here anyway, and every further block would cost a
/// `split_at`, which may clone (as `repeat_n`'s does). For a piece-per-block fold this
/// also keeps the last block from holding fewer than `min` items.
///
/// Without a minimum, the block is what the timing asked for (a single item left after
/// it is folded as a block of its own).
#[inline(always)]
fn block_items(block: usize, len: usize, min: usize) -> usize {
    let n = hooks::block_size(block).min(len);
    if min == 1 {
        return n;
    }
    let n = n.max(min).min(len);
    if (len - n) / 2 < min {
        len
    } else {
        n
    }
}

/// The block loop of [`drive`] over a non-empty piece, folding with `F`; `min` is the
/// producer's smallest piece (at least 1).
fn drive_blocks<P, C, F>(
    mut producer: P,
    mut len: usize,
    min: usize,
    consumer: C,
    mut block: usize,
) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
    F: LoopFold<P::Item, C>,
{
    let mut folded = F::start(consumer);
    let poll = HeartbeatPoll::current();
    let mut last = clock::ticks();
    // Clock ticks per item of the last block, in 1/1024ths (0 until a block was timed).
    let mut ticks_per_item_1024 = 0u64;
    let mut timed_a_block = false;
    loop {
        // A heartbeat that arrives before the first block was timed waits for that
        // block: split now and the upper half's size would be unknown, so the scheduler
        // could share it only after a whole interval (LU's pivot steps, each shorter
        // than an interval, were then never shared on time). A split leaves the items
        // folded so far as one piece and halves the rest, so under `with_min_len` all
        // three must hold at least `min` items.
        let heartbeat = timed_a_block && poll.pending();
        if (heartbeat || hooks::force_split()) && len / 2 >= min && folded.may_detach(min) {
            let big = upper_half_is_big(len, ticks_per_item_1024);
            return split_rest(folded, producer, len, block, big, 0);
        }
        let n = block_items(block, len, min);
        if n == len {
            // The last block: fold the producer itself rather than split off an empty
            // rest (a split may cost a clone, as `repeat_n`'s does).
            return folded.fold_block(producer, n, true).complete();
        }
        let (head, tail) = producer.split_at(n);
        producer = tail;
        len -= n;
        folded = folded.fold_block(head, n, len == 0);
        if len == 0 || folded.full() {
            // The items not reached are dropped before the result is made: if one of
            // their drops panics, `folded` (the items found so far) is then dropped while
            // unwinding, whereas a return value already made would leak
            // (rust-lang/rust#47949).
            drop(producer);
            return folded.complete();
        }
        let now = clock::ticks();
        let ticks = now.wrapping_sub(last);
        ticks_per_item_1024 = ticks.saturating_mul(1024) / n as u64;
        timed_a_block = true;
        if n == 1 && ticks > EAGER_ABOVE && len / 2 >= min && folded.may_detach(min) {
            // Every item is expensive: split the rest now, so that its upper half waits as
            // a pending fork while the lower half runs. A heartbeat then promotes that
            // fork (the oldest one of this worker) even while an inner parallel loop of
            // an item is running: nested loops split the outermost loop first. A fork
            // costs a few stores, nothing next to an item of this size. Both halves are
            // halved further before their next item runs (`LONG_ITEM_LEVELS`), so that
            // the items of the half kept here are not hidden behind its first one.
            let big = upper_half_is_big(len, ticks_per_item_1024);
            return split_rest(folded, producer, len, 1, big, LONG_ITEM_LEVELS);
        }
        block = adapt(block, ticks);
        last = now;
    }
}

/// Ends the sequential loop: splits the `len` items not folded yet (`producer`) at their
/// midpoint, runs the halves with [`split_join`] and appends their result to what was
/// folded.
fn split_rest<P, C, F>(
    folded: F,
    producer: P,
    len: usize,
    block: usize,
    big: bool,
    long_items: u32,
) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
    F: LoopFold<P::Item, C>,
{
    let (prefix, rest) = folded.detach();
    let rest = split_join(producer, len, rest, block, big, long_items);
    match prefix {
        Some((prefix, append)) => append.reduce(prefix, rest),
        None => rest,
    }
}

/// Clock ticks of work (about 10 µs on a 2.5 GHz time-stamp counter) above which the
/// upper half of a split is worth handing to an idle worker at the very next heartbeat,
/// rather than only after it waited through a whole heartbeat interval (the scheduler's
/// rule for forks whose size it cannot know). An idle worker that asked for work is
/// usually still spinning and starts such a half within a microsecond or two; if it
/// does not, the owner takes the half back. On the 2-core VM, LU 700 (pivot steps of
/// 3-150 µs) went from 0.9-1.0x to 0.7x the sequential time at 2 threads when this
/// dropped from 40 µs to 10 µs and a loop timed its first block before splitting.
const SHARE_AT_ONCE_ABOVE: u64 = 25_000;

/// Whether the upper half of `len` remaining items, at the measured cost per item, is
/// worth sharing at once.
fn upper_half_is_big(len: usize, ticks_per_item_1024: u64) -> bool {
    (len as u64 / 2).saturating_mul(ticks_per_item_1024) / 1024 >= SHARE_AT_ONCE_ABOVE
}

/// Splits the remaining `len` items at their midpoint and runs both halves with
/// [`crate::join`] (telling it whether the upper half is big enough to share at once);
/// `long_items` is passed on to both halves.
fn split_join<P, C>(
    producer: P,
    len: usize,
    consumer: C,
    block: usize,
    upper_is_big: bool,
    long_items: u32,
) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    let mid = len / 2;
    let (left_p, right_p) = producer.split_at(mid);
    let (left_c, right_c, reducer) = consumer.split_at(mid);
    let (left, right) = join_hinted(
        move || drive(left_p, mid, left_c, block, long_items),
        move || drive(right_p, len - mid, right_c, block, long_items),
        if upper_is_big {
            ForkSize::Big
        } else {
            ForkSize::Small
        },
    );
    reducer.reduce(left, right)
}

/// A cheap monotonic tick counter for sizing blocks.
pub(crate) mod clock {
    /// The time-stamp counter (cycles at a constant rate).
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    #[inline(always)]
    pub(crate) fn ticks() -> u64 {
        // SAFETY: `rdtsc` exists on every x86_64 processor, takes no operand and touches
        // no memory; the value is only used as a hint for block sizes.
        unsafe { core::arch::x86_64::_rdtsc() }
    }

    /// Nanoseconds since the first call (fallback for other architectures, and for Miri,
    /// which has no time-stamp counter).
    #[cfg(any(not(target_arch = "x86_64"), miri))]
    #[inline]
    pub(crate) fn ticks() -> u64 {
        use std::sync::OnceLock;
        use std::time::Instant;
        static EPOCH: OnceLock<Instant> = OnceLock::new();
        EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

/// Test support: force the loop driver to split often, so the splitting logic is exercised
/// even where no heartbeat fires (single-threaded pools, a sequential scheduler).
///
/// Only active in builds with debug assertions (the usual `cargo test` profile); in
/// release builds the hook compiles to constants and the calls do nothing.
#[doc(hidden)]
pub mod hooks {
    #[cfg(debug_assertions)]
    use std::cell::Cell;
    #[cfg(debug_assertions)]
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[cfg(debug_assertions)]
    static FORCE_EVERY: AtomicUsize = AtomicUsize::new(0);

    #[cfg(debug_assertions)]
    thread_local! {
        static RNG: Cell<u64> = const { Cell::new(0x9E37_79B9_7F4A_7C15) };
    }

    #[cfg(debug_assertions)]
    fn next_random() -> u64 {
        RNG.with(|r| {
            let mut x = r.get();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            r.set(x);
            x
        })
    }

    /// Makes every parallel loop of the process split, on average, once every `every`
    /// blocks of at most three items (0 turns forcing off). No effect without debug
    /// assertions.
    pub fn force_splits(every: usize) {
        #[cfg(debug_assertions)]
        FORCE_EVERY.store(every, Ordering::Relaxed);
        #[cfg(not(debug_assertions))]
        let _ = every;
    }

    /// Whether splits are being forced (then even a one-thread pool's loops go through
    /// the splitting driver).
    #[inline(always)]
    pub(crate) fn forcing() -> bool {
        #[cfg(debug_assertions)]
        {
            FORCE_EVERY.load(Ordering::Relaxed) != 0
        }
        #[cfg(not(debug_assertions))]
        {
            false
        }
    }

    /// Whether the driver should split now although no heartbeat is pending.
    #[inline(always)]
    pub(crate) fn force_split() -> bool {
        #[cfg(debug_assertions)]
        {
            let every = FORCE_EVERY.load(Ordering::Relaxed);
            every != 0 && next_random() % every as u64 == 0
        }
        #[cfg(not(debug_assertions))]
        {
            false
        }
    }

    /// The block size to use (small random blocks while forcing).
    #[inline(always)]
    pub(crate) fn block_size(block: usize) -> usize {
        #[cfg(debug_assertions)]
        {
            if FORCE_EVERY.load(Ordering::Relaxed) != 0 {
                return 1 + (next_random() % 3) as usize;
            }
        }
        block
    }
}
