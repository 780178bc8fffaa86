//! Adaptors that change the number of items: `filter`, `filter_map`, `flat_map_iter`.
//! They act on the consumer side, so the loop still splits the underlying indexed source.

use super::plumbing::{Consumer, Folder, UnindexedConsumer};
use super::ParallelIterator;

/// How a consumer-side adaptor turns the items of a block into the items it passes on.
pub(crate) trait BlockOp<T>: Copy + Send + Sync {
    type Output;
    fn apply<I, F>(self, base: F, iter: I) -> F
    where
        I: Iterator<Item = T>,
        F: Folder<Self::Output>;
}

closure_ops! {
    /// `filter`.
    FilterOp;
    /// `filter_map`.
    FilterMapOp;
    /// `flat_map_iter` and `flatten_iter`.
    FlatMapIterOp;
}

impl<T, P: Fn(&T) -> bool + Sync> BlockOp<T> for FilterOp<'_, P> {
    type Output = T;
    #[inline]
    fn apply<I: Iterator<Item = T>, F: Folder<T>>(self, base: F, iter: I) -> F {
        base.consume_iter(iter.filter(|x| (self.0)(x)))
    }
}

impl<T, R, P: Fn(T) -> Option<R> + Sync> BlockOp<T> for FilterMapOp<'_, P> {
    type Output = R;
    #[inline]
    fn apply<I: Iterator<Item = T>, F: Folder<R>>(self, base: F, iter: I) -> F {
        base.consume_iter(iter.filter_map(self.0))
    }
}

impl<T, SI: IntoIterator, P: Fn(T) -> SI + Sync> BlockOp<T> for FlatMapIterOp<'_, P> {
    type Output = SI::Item;
    #[inline]
    fn apply<I: Iterator<Item = T>, F: Folder<SI::Item>>(self, base: F, iter: I) -> F {
        base.consume_iter(iter.flat_map(self.0))
    }
}

struct BlockConsumer<C, O> {
    base: C,
    op: O,
}

struct BlockFolder<F, O> {
    base: F,
    op: O,
}

impl<T, C, O> Consumer<T> for BlockConsumer<C, O>
where
    O: BlockOp<T>,
    C: Consumer<O::Output>,
{
    type Folder = BlockFolder<C::Folder, O>;
    type Reducer = C::Reducer;
    type Result = C::Result;
    const DETACHES: bool = C::DETACHES;
    fn split_at(self, index: usize) -> (Self, Self, C::Reducer) {
        let (l, r, reducer) = self.base.split_at(index);
        (
            BlockConsumer {
                base: l,
                op: self.op,
            },
            BlockConsumer {
                base: r,
                op: self.op,
            },
            reducer,
        )
    }
    fn into_folder(self) -> Self::Folder {
        BlockFolder {
            base: self.base.into_folder(),
            op: self.op,
        }
    }
    fn detach(folder: Self::Folder, consumed: usize) -> (C::Result, Self, C::Reducer) {
        let (result, base, reducer) = C::detach(folder.base, consumed);
        (
            result,
            BlockConsumer {
                base,
                op: folder.op,
            },
            reducer,
        )
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

impl<T, C, O> UnindexedConsumer<T> for BlockConsumer<C, O>
where
    O: BlockOp<T>,
    C: UnindexedConsumer<O::Output>,
{
    fn split_off_left(&self) -> Self {
        BlockConsumer {
            base: self.base.split_off_left(),
            op: self.op,
        }
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
}

impl<T, F, O> Folder<T> for BlockFolder<F, O>
where
    O: BlockOp<T>,
    F: Folder<O::Output>,
{
    type Result = F::Result;
    fn consume(self, item: T) -> Self {
        self.consume_iter(std::iter::once(item))
    }
    #[inline]
    fn consume_iter<I: IntoIterator<Item = T>>(self, iter: I) -> Self {
        BlockFolder {
            base: self.op.apply(self.base, iter.into_iter()),
            op: self.op,
        }
    }
    fn complete(self) -> F::Result {
        self.base.complete()
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

/// The iterator returned by [`ParallelIterator::filter`].
#[derive(Clone)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Filter<I, P> {
    base: I,
    filter_op: P,
}

/// Shows the base iterator only: the closure is left out.
impl<I: std::fmt::Debug, P> std::fmt::Debug for Filter<I, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filter").field("base", &self.base).finish()
    }
}

impl<I, P> Filter<I, P> {
    pub(super) fn new(base: I, filter_op: P) -> Self {
        Filter { base, filter_op }
    }
}

impl<I, P> ParallelIterator for Filter<I, P>
where
    I: ParallelIterator,
    P: Fn(&I::Item) -> bool + Sync + Send,
{
    type Item = I::Item;
    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        self.base.drive_unindexed(BlockConsumer {
            base: consumer,
            op: FilterOp(&self.filter_op),
        })
    }
    fn index_span(&self) -> usize {
        self.base.index_span()
    }
}

/// The iterator returned by [`ParallelIterator::filter_map`].
#[derive(Clone)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct FilterMap<I, P> {
    base: I,
    filter_op: P,
}

/// Shows the base iterator only: the closure is left out.
impl<I: std::fmt::Debug, P> std::fmt::Debug for FilterMap<I, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilterMap")
            .field("base", &self.base)
            .finish()
    }
}

impl<I, P> FilterMap<I, P> {
    pub(super) fn new(base: I, filter_op: P) -> Self {
        FilterMap { base, filter_op }
    }
}

impl<I, P, R> ParallelIterator for FilterMap<I, P>
where
    I: ParallelIterator,
    P: Fn(I::Item) -> Option<R> + Sync + Send,
    R: Send,
{
    type Item = R;
    fn drive_unindexed<C: UnindexedConsumer<R>>(self, consumer: C) -> C::Result {
        self.base.drive_unindexed(BlockConsumer {
            base: consumer,
            op: FilterMapOp(&self.filter_op),
        })
    }
    fn index_span(&self) -> usize {
        self.base.index_span()
    }
}

/// The iterator returned by [`ParallelIterator::flat_map_iter`].
#[derive(Clone)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct FlatMapIter<I, F> {
    base: I,
    map_op: F,
}

/// Shows the base iterator only: the closure is left out.
impl<I: std::fmt::Debug, F> std::fmt::Debug for FlatMapIter<I, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlatMapIter")
            .field("base", &self.base)
            .finish()
    }
}

impl<I, F> FlatMapIter<I, F> {
    pub(super) fn new(base: I, map_op: F) -> Self {
        FlatMapIter { base, map_op }
    }
}

impl<I, F, SI> ParallelIterator for FlatMapIter<I, F>
where
    I: ParallelIterator,
    F: Fn(I::Item) -> SI + Sync + Send,
    SI: IntoIterator,
    SI::Item: Send,
{
    type Item = SI::Item;
    fn drive_unindexed<C: UnindexedConsumer<SI::Item>>(self, consumer: C) -> C::Result {
        self.base.drive_unindexed(BlockConsumer {
            base: consumer,
            op: FlatMapIterOp(&self.map_op),
        })
    }
    fn index_span(&self) -> usize {
        self.base.index_span()
    }
}

/// The iterator returned by [`ParallelIterator::flatten_iter`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct FlattenIter<I> {
    base: I,
}

impl<I> FlattenIter<I> {
    pub(super) fn new(base: I) -> Self {
        FlattenIter { base }
    }
}

impl<I> ParallelIterator for FlattenIter<I>
where
    I: ParallelIterator,
    I::Item: IntoIterator,
    <I::Item as IntoIterator>::Item: Send,
{
    type Item = <I::Item as IntoIterator>::Item;
    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        let identity = |item: I::Item| item;
        self.base.drive_unindexed(BlockConsumer {
            base: consumer,
            op: FlatMapIterOp(&identity),
        })
    }
    fn index_span(&self) -> usize {
        self.base.index_span()
    }
}
