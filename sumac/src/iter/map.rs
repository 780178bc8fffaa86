//! One-to-one adaptors: `map`, `copied`, `cloned`, `inspect`, `update`, `map_with`,
//! `map_init`.
//!
//! `map`, `copied`, `cloned`, `inspect` and `update` share one producer and one consumer,
//! parameterised by a small [`MapOp`].

use super::plumbing::{Consumer, Folder, Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};

/// A function applied to every item (a closure reference or a marker type).
pub(crate) trait MapOp<T>: Copy + Send + Sync {
    type Output: Send;
    fn call(&self, item: T) -> Self::Output;
}

closure_ops! {
    /// `map`.
    FnOp;
    /// `inspect`.
    InspectOp;
    /// `update`.
    UpdateOp;
}

impl<T, R: Send, F: Fn(T) -> R + Sync> MapOp<T> for FnOp<'_, F> {
    type Output = R;
    #[inline(always)]
    fn call(&self, item: T) -> R {
        (self.0)(item)
    }
}

/// `copied`.
#[derive(Clone, Copy)]
pub(crate) struct CopyOp;
impl<'a, T: Copy + Send + 'a> MapOp<&'a T> for CopyOp {
    type Output = T;
    #[inline(always)]
    fn call(&self, item: &'a T) -> T {
        *item
    }
}

/// `cloned`.
#[derive(Clone, Copy)]
pub(crate) struct CloneOp;
impl<'a, T: Clone + Send + 'a> MapOp<&'a T> for CloneOp {
    type Output = T;
    #[inline(always)]
    fn call(&self, item: &'a T) -> T {
        item.clone()
    }
}

impl<T: Send, F: Fn(&T) + Sync> MapOp<T> for InspectOp<'_, F> {
    type Output = T;
    #[inline(always)]
    fn call(&self, item: T) -> T {
        (self.0)(&item);
        item
    }
}

impl<T: Send, F: Fn(&mut T) + Sync> MapOp<T> for UpdateOp<'_, F> {
    type Output = T;
    #[inline(always)]
    fn call(&self, mut item: T) -> T {
        (self.0)(&mut item);
        item
    }
}

// ---------------------------------------------------------------- producer side

struct MapProducer<P, O> {
    base: P,
    op: O,
}

impl<P, O> Producer for MapProducer<P, O>
where
    P: Producer,
    O: MapOp<P::Item>,
{
    type Item = O::Output;
    type IntoIter = MapIter<P::IntoIter, O>;
    fn into_iter(self) -> Self::IntoIter {
        MapIter {
            base: self.base.into_iter(),
            op: self.op,
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        (
            MapProducer {
                base: l,
                op: self.op,
            },
            MapProducer {
                base: r,
                op: self.op,
            },
        )
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
}

/// The sequential iterator of a mapped producer.
pub(crate) struct MapIter<I, O> {
    base: I,
    op: O,
}

impl<I: Iterator, O: MapOp<I::Item>> Iterator for MapIter<I, O> {
    type Item = O::Output;
    #[inline]
    fn next(&mut self) -> Option<O::Output> {
        self.base.next().map(|x| self.op.call(x))
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.base.size_hint()
    }
    #[inline]
    fn fold<B, G>(self, init: B, mut g: G) -> B
    where
        G: FnMut(B, Self::Item) -> B,
    {
        let op = self.op;
        self.base.fold(init, move |acc, x| g(acc, op.call(x)))
    }
}

impl<I: DoubleEndedIterator, O: MapOp<I::Item>> DoubleEndedIterator for MapIter<I, O> {
    #[inline]
    fn next_back(&mut self) -> Option<O::Output> {
        self.base.next_back().map(|x| self.op.call(x))
    }
}

impl<I: ExactSizeIterator, O: MapOp<I::Item>> ExactSizeIterator for MapIter<I, O> {}

struct MapCallback<CB, O> {
    callback: CB,
    op: O,
}

impl<T, CB, O> ProducerCallback<T> for MapCallback<CB, O>
where
    O: MapOp<T>,
    CB: ProducerCallback<O::Output>,
{
    type Output = CB::Output;
    fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
        self.callback.callback(MapProducer { base, op: self.op })
    }
}

// ---------------------------------------------------------------- consumer side

struct MapConsumer<C, O> {
    base: C,
    op: O,
}

struct MapFolder<F, O> {
    base: F,
    op: O,
}

impl<T, C, O> Consumer<T> for MapConsumer<C, O>
where
    O: MapOp<T>,
    C: Consumer<O::Output>,
{
    type Folder = MapFolder<C::Folder, O>;
    type Reducer = C::Reducer;
    type Result = C::Result;
    const DETACHES: bool = C::DETACHES;
    fn split_at(self, index: usize) -> (Self, Self, C::Reducer) {
        let (l, r, reducer) = self.base.split_at(index);
        (
            MapConsumer {
                base: l,
                op: self.op,
            },
            MapConsumer {
                base: r,
                op: self.op,
            },
            reducer,
        )
    }
    fn into_folder(self) -> Self::Folder {
        MapFolder {
            base: self.base.into_folder(),
            op: self.op,
        }
    }
    fn detach(folder: Self::Folder, consumed: usize) -> (C::Result, Self, C::Reducer) {
        let (result, base, reducer) = C::detach(folder.base, consumed);
        (
            result,
            MapConsumer {
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

impl<T, C, O> UnindexedConsumer<T> for MapConsumer<C, O>
where
    O: MapOp<T>,
    C: UnindexedConsumer<O::Output>,
{
    fn split_off_left(&self) -> Self {
        MapConsumer {
            base: self.base.split_off_left(),
            op: self.op,
        }
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
}

impl<T, F, O> Folder<T> for MapFolder<F, O>
where
    O: MapOp<T>,
    F: Folder<O::Output>,
{
    type Result = F::Result;
    #[inline]
    fn consume(self, item: T) -> Self {
        MapFolder {
            base: self.base.consume(self.op.call(item)),
            op: self.op,
        }
    }
    #[inline]
    fn consume_iter<I: IntoIterator<Item = T>>(self, iter: I) -> Self {
        let op = self.op;
        MapFolder {
            base: self
                .base
                .consume_iter(iter.into_iter().map(move |x| op.call(x))),
            op,
        }
    }
    fn complete(self) -> F::Result {
        self.base.complete()
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

fn drive_mapped<I, O, C>(base: I, op: O, consumer: C) -> C::Result
where
    I: ParallelIterator,
    O: MapOp<I::Item>,
    C: UnindexedConsumer<O::Output>,
{
    base.drive_unindexed(MapConsumer { base: consumer, op })
}

fn with_mapped_producer<I, O, CB>(base: I, op: O, callback: CB) -> CB::Output
where
    I: IndexedParallelIterator,
    O: MapOp<I::Item>,
    CB: ProducerCallback<O::Output>,
{
    base.with_producer(MapCallback { callback, op })
}

// ---------------------------------------------------------------- public types

/// Defines a one-to-one adaptor that holds a closure (`Map`, `Inspect`, `Update`): the
/// struct, its constructor, and both iterator impls, driving the base through the
/// [`MapOp`] `$op` that wraps a reference to the closure.
macro_rules! closure_adaptor {
    ($(#[$attr:meta])* $name:ident { $field:ident } via $op:ident,
     impl<$($g:ident),*> Item = $item:ty, where $($bounds:tt)*) => {
        $(#[$attr])*
        #[derive(Clone)]
        #[must_use = "parallel iterators are lazy and do nothing unless consumed"]
        pub struct $name<I, F> {
            base: I,
            $field: F,
        }

        /// Shows the base iterator only: the closure is left out, so the adaptor is
        /// `Debug` whatever the closure is.
        impl<I: std::fmt::Debug, F> std::fmt::Debug for $name<I, F> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).field("base", &self.base).finish()
            }
        }

        impl<I, F> $name<I, F> {
            pub(super) fn new(base: I, $field: F) -> Self {
                $name { base, $field }
            }
        }

        impl<I, F, $($g),*> ParallelIterator for $name<I, F>
        where
            I: ParallelIterator,
            $($bounds)*
        {
            type Item = $item;
            fn drive_unindexed<C: UnindexedConsumer<$item>>(self, consumer: C) -> C::Result {
                drive_mapped(self.base, $op(&self.$field), consumer)
            }
            fn opt_len(&self) -> Option<usize> {
                self.base.opt_len()
            }
            fn index_span(&self) -> usize {
                self.base.index_span()
            }
        }

        impl<I, F, $($g),*> IndexedParallelIterator for $name<I, F>
        where
            I: IndexedParallelIterator,
            $($bounds)*
        {
            fn len(&self) -> usize {
                self.base.len()
            }
            fn with_producer<CB: ProducerCallback<$item>>(self, callback: CB) -> CB::Output {
                with_mapped_producer(self.base, $op(&self.$field), callback)
            }
        }
    };
}

closure_adaptor!(
    /// The iterator returned by [`ParallelIterator::map`].
    Map { map_op } via FnOp,
    impl<R> Item = R, where F: Fn(I::Item) -> R + Sync + Send, R: Send,
);

closure_adaptor!(
    /// The iterator returned by [`ParallelIterator::inspect`].
    Inspect { inspect_op } via InspectOp,
    impl<> Item = I::Item, where F: Fn(&I::Item) + Sync + Send,
);

closure_adaptor!(
    /// The iterator returned by [`ParallelIterator::update`].
    Update { update_op } via UpdateOp,
    impl<> Item = I::Item, where F: Fn(&mut I::Item) + Sync + Send,
);

/// Defines `Copied` and `Cloned`: one adaptor over `&T` items that differs only in the
/// bound on `T` and the [`MapOp`] applied.
macro_rules! ref_item_adaptor {
    ($(#[$attr:meta])* $name:ident, $bound:path, $op:expr) => {
        $(#[$attr])*
        #[derive(Clone, Debug)]
        #[must_use = "parallel iterators are lazy and do nothing unless consumed"]
        pub struct $name<I> {
            base: I,
        }

        impl<I> $name<I> {
            pub(super) fn new(base: I) -> Self {
                $name { base }
            }
        }

        impl<'a, T, I> ParallelIterator for $name<I>
        where
            I: ParallelIterator<Item = &'a T>,
            T: 'a + $bound + Send,
        {
            type Item = T;
            fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
                drive_mapped(self.base, $op, consumer)
            }
            fn opt_len(&self) -> Option<usize> {
                self.base.opt_len()
            }
            fn index_span(&self) -> usize {
                self.base.index_span()
            }
        }

        impl<'a, T, I> IndexedParallelIterator for $name<I>
        where
            I: IndexedParallelIterator<Item = &'a T>,
            T: 'a + $bound + Send,
        {
            fn len(&self) -> usize {
                self.base.len()
            }
            fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
                with_mapped_producer(self.base, $op, callback)
            }
        }
    };
}

ref_item_adaptor!(
    /// The iterator returned by [`ParallelIterator::copied`].
    Copied,
    Copy,
    CopyOp
);

ref_item_adaptor!(
    /// The iterator returned by [`ParallelIterator::cloned`].
    Cloned,
    Clone,
    CloneOp
);

// ------------------------------------------------------------- map_with, map_init

/// Where the per-piece state of `map_with` / `map_init` comes from.
pub(crate) trait StateSource: Send {
    type State;
    /// A source for a new piece (clones the value for `map_with`).
    fn split(&self) -> Self;
    /// The state of a sequential run (moves the value out for `map_with`).
    fn take(&mut self) -> Self::State;
    /// Hands the state of a finished run back (so `map_with` needs no new clone).
    fn give_back(&mut self, state: Self::State);
}

/// `map_with`: clones of a value.
pub(crate) struct WithState<T>(Option<T>);

impl<T: Clone + Send> StateSource for WithState<T> {
    type State = T;
    fn split(&self) -> Self {
        WithState(self.0.clone())
    }
    fn take(&mut self) -> T {
        self.0.take().expect("map_with state already taken")
    }
    fn give_back(&mut self, state: T) {
        self.0 = Some(state);
    }
}

/// `map_init`: calls to an init closure.
pub(crate) struct InitState<'f, F>(&'f F);

impl<T, F: Fn() -> T + Sync> StateSource for InitState<'_, F> {
    type State = T;
    fn split(&self) -> Self {
        InitState(self.0)
    }
    fn take(&mut self) -> T {
        (self.0)()
    }
    fn give_back(&mut self, _state: T) {}
}

struct StateConsumer<'f, C, S, F> {
    base: C,
    source: S,
    map_op: &'f F,
}

struct StateFolder<'f, B, S: StateSource, F> {
    base: B,
    source: S,
    state: S::State,
    map_op: &'f F,
}

impl<'f, T, R, C, S, F> Consumer<T> for StateConsumer<'f, C, S, F>
where
    C: Consumer<R>,
    S: StateSource,
    F: Fn(&mut S::State, T) -> R + Sync,
    R: Send,
{
    type Folder = StateFolder<'f, C::Folder, S, F>;
    type Reducer = C::Reducer;
    type Result = C::Result;
    const DETACHES: bool = C::DETACHES;
    fn split_at(self, index: usize) -> (Self, Self, C::Reducer) {
        let (l, r, reducer) = self.base.split_at(index);
        (
            StateConsumer {
                base: l,
                source: self.source.split(),
                map_op: self.map_op,
            },
            StateConsumer {
                base: r,
                source: self.source,
                map_op: self.map_op,
            },
            reducer,
        )
    }
    fn into_folder(self) -> Self::Folder {
        let mut source = self.source;
        let state = source.take();
        StateFolder {
            base: self.base.into_folder(),
            source,
            state,
            map_op: self.map_op,
        }
    }
    fn detach(folder: Self::Folder, consumed: usize) -> (C::Result, Self, C::Reducer) {
        let (result, base, reducer) = C::detach(folder.base, consumed);
        let mut source = folder.source;
        source.give_back(folder.state);
        (
            result,
            StateConsumer {
                base,
                source,
                map_op: folder.map_op,
            },
            reducer,
        )
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

impl<'f, T, R, C, S, F> UnindexedConsumer<T> for StateConsumer<'f, C, S, F>
where
    C: UnindexedConsumer<R>,
    S: StateSource,
    F: Fn(&mut S::State, T) -> R + Sync,
    R: Send,
{
    fn split_off_left(&self) -> Self {
        StateConsumer {
            base: self.base.split_off_left(),
            source: self.source.split(),
            map_op: self.map_op,
        }
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
}

impl<'f, T, R, B, S, F> Folder<T> for StateFolder<'f, B, S, F>
where
    B: Folder<R>,
    S: StateSource,
    F: Fn(&mut S::State, T) -> R,
{
    type Result = B::Result;
    fn consume(mut self, item: T) -> Self {
        let r = (self.map_op)(&mut self.state, item);
        self.base = self.base.consume(r);
        self
    }
    #[inline]
    fn consume_iter<I: IntoIterator<Item = T>>(mut self, iter: I) -> Self {
        let map_op = self.map_op;
        let state = &mut self.state;
        self.base = self
            .base
            .consume_iter(iter.into_iter().map(|x| map_op(state, x)));
        self
    }
    fn complete(self) -> B::Result {
        self.base.complete()
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

struct StateProducer<'f, P, S, F> {
    base: P,
    source: S,
    map_op: &'f F,
}

impl<'f, R, P, S, F> Producer for StateProducer<'f, P, S, F>
where
    P: Producer,
    S: StateSource,
    F: Fn(&mut S::State, P::Item) -> R + Sync,
{
    type Item = R;
    type IntoIter = StateIter<'f, P::IntoIter, S::State, F>;
    fn into_iter(mut self) -> Self::IntoIter {
        StateIter {
            base: self.base.into_iter(),
            state: self.source.take(),
            map_op: self.map_op,
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        (
            StateProducer {
                base: l,
                source: self.source.split(),
                map_op: self.map_op,
            },
            StateProducer {
                base: r,
                source: self.source,
                map_op: self.map_op,
            },
        )
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
}

/// The sequential iterator of a `map_with` / `map_init` producer.
pub(crate) struct StateIter<'f, I, T, F> {
    base: I,
    state: T,
    map_op: &'f F,
}

impl<I: Iterator, T, R, F: Fn(&mut T, I::Item) -> R> Iterator for StateIter<'_, I, T, F> {
    type Item = R;
    fn next(&mut self) -> Option<R> {
        let x = self.base.next()?;
        Some((self.map_op)(&mut self.state, x))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.base.size_hint()
    }
}

impl<I: DoubleEndedIterator, T, R, F: Fn(&mut T, I::Item) -> R> DoubleEndedIterator
    for StateIter<'_, I, T, F>
{
    fn next_back(&mut self) -> Option<R> {
        let x = self.base.next_back()?;
        Some((self.map_op)(&mut self.state, x))
    }
}

impl<I: ExactSizeIterator, T, R, F: Fn(&mut T, I::Item) -> R> ExactSizeIterator
    for StateIter<'_, I, T, F>
{
}

struct StateCallback<'f, CB, S, F> {
    callback: CB,
    source: S,
    map_op: &'f F,
}

impl<'f, T, R, CB, S, F> ProducerCallback<T> for StateCallback<'f, CB, S, F>
where
    CB: ProducerCallback<R>,
    S: StateSource,
    F: Fn(&mut S::State, T) -> R + Sync,
{
    type Output = CB::Output;
    fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
        self.callback.callback(StateProducer {
            base,
            source: self.source,
            map_op: self.map_op,
        })
    }
}

/// The iterator returned by [`ParallelIterator::map_with`].
#[derive(Clone)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct MapWith<I, T, F> {
    base: I,
    item: T,
    map_op: F,
}

/// Shows the base iterator and the value; the closure is left out.
impl<I: std::fmt::Debug, T: std::fmt::Debug, F> std::fmt::Debug for MapWith<I, T, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MapWith")
            .field("base", &self.base)
            .field("item", &self.item)
            .finish()
    }
}

impl<I, T, F> MapWith<I, T, F> {
    pub(super) fn new(base: I, item: T, map_op: F) -> Self {
        MapWith { base, item, map_op }
    }
}

impl<I, T, F, R> ParallelIterator for MapWith<I, T, F>
where
    I: ParallelIterator,
    T: Send + Clone,
    F: Fn(&mut T, I::Item) -> R + Sync + Send,
    R: Send,
{
    type Item = R;
    fn drive_unindexed<C: UnindexedConsumer<R>>(self, consumer: C) -> C::Result {
        self.base.drive_unindexed(StateConsumer {
            base: consumer,
            source: WithState(Some(self.item)),
            map_op: &self.map_op,
        })
    }
    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len()
    }
    fn index_span(&self) -> usize {
        self.base.index_span()
    }
}

/// Indexed `map_with`: through a producer, every sequential run of the loop starts from
/// its own clone of the value.
impl<I, T, F, R> IndexedParallelIterator for MapWith<I, T, F>
where
    I: IndexedParallelIterator,
    T: Send + Clone,
    F: Fn(&mut T, I::Item) -> R + Sync + Send,
    R: Send,
{
    fn len(&self) -> usize {
        self.base.len()
    }
    fn with_producer<CB: ProducerCallback<R>>(self, callback: CB) -> CB::Output {
        self.base.with_producer(StateCallback {
            callback,
            source: WithState(Some(self.item)),
            map_op: &self.map_op,
        })
    }
}

/// The iterator returned by [`ParallelIterator::map_init`].
#[derive(Clone)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct MapInit<I, INIT, F> {
    base: I,
    init: INIT,
    map_op: F,
}

/// Shows the base iterator only: `init` and the closure are left out.
impl<I: std::fmt::Debug, INIT, F> std::fmt::Debug for MapInit<I, INIT, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MapInit").field("base", &self.base).finish()
    }
}

impl<I, INIT, F> MapInit<I, INIT, F> {
    pub(super) fn new(base: I, init: INIT, map_op: F) -> Self {
        MapInit { base, init, map_op }
    }
}

impl<I, INIT, T, F, R> ParallelIterator for MapInit<I, INIT, F>
where
    I: ParallelIterator,
    INIT: Fn() -> T + Sync + Send,
    F: Fn(&mut T, I::Item) -> R + Sync + Send,
    R: Send,
{
    type Item = R;
    fn drive_unindexed<C: UnindexedConsumer<R>>(self, consumer: C) -> C::Result {
        self.base.drive_unindexed(StateConsumer {
            base: consumer,
            source: InitState(&self.init),
            map_op: &self.map_op,
        })
    }
    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len()
    }
    fn index_span(&self) -> usize {
        self.base.index_span()
    }
}

/// Indexed `map_init`: through a producer, `init` runs once per sequential run of the loop.
impl<I, INIT, T, F, R> IndexedParallelIterator for MapInit<I, INIT, F>
where
    I: IndexedParallelIterator,
    INIT: Fn() -> T + Sync + Send,
    F: Fn(&mut T, I::Item) -> R + Sync + Send,
    R: Send,
{
    fn len(&self) -> usize {
        self.base.len()
    }
    fn with_producer<CB: ProducerCallback<R>>(self, callback: CB) -> CB::Output {
        self.base.with_producer(StateCallback {
            callback,
            source: InitState(&self.init),
            map_op: &self.map_op,
        })
    }
}
