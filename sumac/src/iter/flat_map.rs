//! `flat_map` and `flatten`: every item becomes a parallel iterator of its own.
//!
//! The outer loop runs like any other (sequential blocks, split at heartbeats). Its
//! folder keeps the consumer of the items it has not reached yet; for each item it splits
//! off the consumer of that one outer position and drives the item's inner parallel
//! iterator into it, so the inner loop too splits at heartbeats, and then reduces the
//! inner result onto what the folder has so far, in order. An inner loop may split its
//! one-position consumer at inner indices beyond that position: every consumer of an
//! unindexed iterator accepts that (the searches of `iter::find` then halve a made-up
//! range inside the position, so the inner pieces still stop each other), and the
//! pieces still reduce left to right, so `collect` and `find_first` keep the sequential
//! order.

use super::plumbing::{Consumer, Folder, Reducer, UnindexedConsumer};
use super::{IntoParallelIterator, ParallelIterator};

/// The iterator returned by [`ParallelIterator::flat_map`].
#[derive(Clone)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct FlatMap<I, F> {
    base: I,
    map_op: F,
}

/// Shows the base iterator only: the closure is left out.
impl<I: std::fmt::Debug, F> std::fmt::Debug for FlatMap<I, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlatMap").field("base", &self.base).finish()
    }
}

impl<I, F> FlatMap<I, F> {
    pub(super) fn new(base: I, map_op: F) -> Self {
        FlatMap { base, map_op }
    }
}

impl<I, F, PI> ParallelIterator for FlatMap<I, F>
where
    I: ParallelIterator,
    F: Fn(I::Item) -> PI + Sync + Send,
    PI: IntoParallelIterator,
{
    type Item = PI::Item;
    fn drive_unindexed<C: UnindexedConsumer<PI::Item>>(self, consumer: C) -> C::Result {
        self.base.drive_unindexed(FlatMapConsumer {
            base: consumer,
            map_op: &self.map_op,
        })
    }
    fn index_span(&self) -> usize {
        self.base.index_span()
    }
}

/// The iterator returned by [`ParallelIterator::flatten`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Flatten<I> {
    base: I,
}

impl<I> Flatten<I> {
    pub(super) fn new(base: I) -> Self {
        Flatten { base }
    }
}

impl<I> ParallelIterator for Flatten<I>
where
    I: ParallelIterator,
    I::Item: IntoParallelIterator,
{
    type Item = <I::Item as IntoParallelIterator>::Item;
    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        let identity = |item: I::Item| item;
        self.base.drive_unindexed(FlatMapConsumer {
            base: consumer,
            map_op: &identity,
        })
    }
    fn index_span(&self) -> usize {
        self.base.index_span()
    }
}

struct FlatMapConsumer<'f, C, F> {
    base: C,
    map_op: &'f F,
}

/// Folds outer items: `rest` is the consumer of the outer positions not reached yet,
/// `result` the reduced result of those already consumed (`None` before the first),
/// with the reducer that appends `rest`'s result to it.
struct FlatMapFolder<'f, C: Consumer<T>, F, T> {
    rest: C,
    map_op: &'f F,
    result: Option<(C::Result, C::Reducer)>,
}

impl<'f, T, C, F, PI> Consumer<T> for FlatMapConsumer<'f, C, F>
where
    C: UnindexedConsumer<PI::Item>,
    F: Fn(T) -> PI + Sync,
    PI: IntoParallelIterator,
{
    type Folder = FlatMapFolder<'f, C, F, PI::Item>;
    type Reducer = C::Reducer;
    type Result = C::Result;
    /// The folder only ever splits the base consumer, so any consumer detaches.
    const DETACHES: bool = true;
    fn split_at(self, index: usize) -> (Self, Self, C::Reducer) {
        let (left, right, reducer) = self.base.split_at(index);
        (
            FlatMapConsumer {
                base: left,
                map_op: self.map_op,
            },
            FlatMapConsumer {
                base: right,
                map_op: self.map_op,
            },
            reducer,
        )
    }
    fn into_folder(self) -> Self::Folder {
        FlatMapFolder {
            rest: self.base,
            map_op: self.map_op,
            result: None,
        }
    }
    fn detach(folder: Self::Folder, _consumed: usize) -> (C::Result, Self, C::Reducer) {
        // The folder split one position off `rest` per item, so `rest` already starts
        // after the `_consumed` items.
        let FlatMapFolder {
            rest,
            map_op,
            result,
        } = folder;
        let (result, rest, reducer) = match result {
            Some((result, reducer)) => (result, rest, reducer),
            None => {
                let (empty, rest, reducer) = rest.split_at(0);
                (empty.into_folder().complete(), rest, reducer)
            }
        };
        (result, FlatMapConsumer { base: rest, map_op }, reducer)
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

impl<'f, T, C, F, PI> UnindexedConsumer<T> for FlatMapConsumer<'f, C, F>
where
    C: UnindexedConsumer<PI::Item>,
    F: Fn(T) -> PI + Sync,
    PI: IntoParallelIterator,
{
    fn split_off_left(&self) -> Self {
        FlatMapConsumer {
            base: self.base.split_off_left(),
            map_op: self.map_op,
        }
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
}

impl<T, C, F, PI> Folder<T> for FlatMapFolder<'_, C, F, PI::Item>
where
    C: UnindexedConsumer<PI::Item>,
    F: Fn(T) -> PI + Sync,
    PI: IntoParallelIterator,
{
    type Result = C::Result;
    fn consume(self, item: T) -> Self {
        let (here, rest, reducer) = self.rest.split_at(1);
        let inner = (self.map_op)(item).into_par_iter().drive_unindexed(here);
        let result = match self.result {
            Some((before, append)) => append.reduce(before, inner),
            None => inner,
        };
        FlatMapFolder {
            rest,
            map_op: self.map_op,
            result: Some((result, reducer)),
        }
    }
    fn complete(self) -> C::Result {
        match self.result {
            Some((result, _)) => result,
            None => self.rest.into_folder().complete(),
        }
    }
    fn full(&self) -> bool {
        self.rest.full()
    }
}
