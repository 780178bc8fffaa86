//! Consumers that fold every item: `for_each`, `reduce`, `sum`, `product`.

use std::iter::{Product, Sum};
use std::marker::PhantomData;

use super::plumbing::{
    bridge_producer_consumer, Consumer, Folder, NoopReducer, Producer, Reducer, UnindexedConsumer,
};
use super::ParallelIterator;

// ---------------------------------------------------------------------- for_each

pub(super) fn for_each<I, F>(iter: I, op: &F)
where
    I: ParallelIterator,
    F: Fn(I::Item) + Sync,
{
    iter.drive_unindexed(ForEachConsumer { op })
}

/// Runs the `len` items of `producer` only for what producing them does (the closures of
/// `map`, `inspect` and the like before a `skip`, and their panics), dropping each.
pub(super) fn drain_producer<P: Producer>(producer: P, len: usize) {
    bridge_producer_consumer(
        len,
        producer,
        ForEachConsumer {
            op: &drop::<P::Item>,
        },
    );
}

struct ForEachConsumer<'f, F> {
    op: &'f F,
}

impl<'f, T, F: Fn(T) + Sync> Consumer<T> for ForEachConsumer<'f, F> {
    type Folder = Self;
    type Reducer = NoopReducer;
    type Result = ();
    const DETACHES: bool = true;
    fn split_at(self, _index: usize) -> (Self, Self, NoopReducer) {
        (ForEachConsumer { op: self.op }, self, NoopReducer)
    }
    fn into_folder(self) -> Self {
        self
    }
    fn detach(folder: Self, _consumed: usize) -> ((), Self, NoopReducer) {
        ((), folder, NoopReducer)
    }
}

impl<'f, T, F: Fn(T) + Sync> UnindexedConsumer<T> for ForEachConsumer<'f, F> {
    fn split_off_left(&self) -> Self {
        ForEachConsumer { op: self.op }
    }
    fn to_reducer(&self) -> NoopReducer {
        NoopReducer
    }
}

impl<'f, T, F: Fn(T) + Sync> Folder<T> for ForEachConsumer<'f, F> {
    type Result = ();
    #[inline]
    fn consume(self, item: T) -> Self {
        (self.op)(item);
        self
    }
    #[inline]
    fn consume_iter<I: IntoIterator<Item = T>>(self, iter: I) -> Self {
        iter.into_iter().for_each(self.op);
        self
    }
    fn complete(self) {}
}

// ------------------------------------------------------------------------ reduce

pub(super) fn reduce<I, ID, OP>(iter: I, identity: &ID, op: &OP) -> I::Item
where
    I: ParallelIterator,
    ID: Fn() -> I::Item + Sync,
    OP: Fn(I::Item, I::Item) -> I::Item + Sync,
{
    iter.drive_unindexed(ReduceConsumer { identity, op })
}

struct ReduceConsumer<'r, ID, OP> {
    identity: &'r ID,
    op: &'r OP,
}

impl<'r, ID, OP> Clone for ReduceConsumer<'r, ID, OP> {
    fn clone(&self) -> Self {
        ReduceConsumer {
            identity: self.identity,
            op: self.op,
        }
    }
}

struct ReduceFolder<'r, T, ID, OP> {
    consumer: ReduceConsumer<'r, ID, OP>,
    acc: T,
}

impl<'r, T, ID, OP> Consumer<T> for ReduceConsumer<'r, ID, OP>
where
    T: Send,
    ID: Fn() -> T + Sync,
    OP: Fn(T, T) -> T + Sync,
{
    type Folder = ReduceFolder<'r, T, ID, OP>;
    type Reducer = Self;
    type Result = T;
    const DETACHES: bool = true;
    fn split_at(self, _index: usize) -> (Self, Self, Self) {
        (self.clone(), self.clone(), self)
    }
    fn into_folder(self) -> Self::Folder {
        ReduceFolder {
            acc: (self.identity)(),
            consumer: self,
        }
    }
    fn detach(folder: Self::Folder, _consumed: usize) -> (T, Self, Self) {
        (folder.acc, folder.consumer.clone(), folder.consumer)
    }
}

impl<'r, T, ID, OP> UnindexedConsumer<T> for ReduceConsumer<'r, ID, OP>
where
    T: Send,
    ID: Fn() -> T + Sync,
    OP: Fn(T, T) -> T + Sync,
{
    fn split_off_left(&self) -> Self {
        self.clone()
    }
    fn to_reducer(&self) -> Self {
        self.clone()
    }
}

impl<'r, T, ID, OP> Reducer<T> for ReduceConsumer<'r, ID, OP>
where
    OP: Fn(T, T) -> T,
{
    fn reduce(self, left: T, right: T) -> T {
        (self.op)(left, right)
    }
}

impl<'r, T, ID, OP> Folder<T> for ReduceFolder<'r, T, ID, OP>
where
    OP: Fn(T, T) -> T,
{
    type Result = T;
    #[inline]
    fn consume(mut self, item: T) -> Self {
        self.acc = (self.consumer.op)(self.acc, item);
        self
    }
    #[inline]
    fn consume_iter<I: IntoIterator<Item = T>>(mut self, iter: I) -> Self {
        self.acc = iter.into_iter().fold(self.acc, self.consumer.op);
        self
    }
    fn complete(self) -> T {
        self.acc
    }
}

// ------------------------------------------------------------------ sum, product

pub(super) fn sum<I, S>(iter: I) -> S
where
    I: ParallelIterator,
    S: Send + Sum<I::Item> + Sum<S>,
{
    iter.drive_unindexed(SumConsumer(PhantomData))
}

pub(super) fn product<I, P>(iter: I) -> P
where
    I: ParallelIterator,
    P: Send + Product<I::Item> + Product<P>,
{
    iter.drive_unindexed(ProductConsumer(PhantomData))
}

macro_rules! arith_consumer {
    ($consumer:ident, $folder:ident, $trait:ident, $method:ident) => {
        struct $consumer<S>(PhantomData<fn() -> S>);

        struct $folder<S>(S);

        impl<T, S> Consumer<T> for $consumer<S>
        where
            S: Send + $trait<T> + $trait<S>,
        {
            type Folder = $folder<S>;
            type Reducer = Self;
            type Result = S;
            const DETACHES: bool = true;
            fn split_at(self, _index: usize) -> (Self, Self, Self) {
                ($consumer(PhantomData), self, $consumer(PhantomData))
            }
            fn into_folder(self) -> $folder<S> {
                $folder(std::iter::empty::<T>().$method())
            }
            fn detach(folder: $folder<S>, _consumed: usize) -> (S, Self, Self) {
                (folder.0, $consumer(PhantomData), $consumer(PhantomData))
            }
        }

        impl<T, S> UnindexedConsumer<T> for $consumer<S>
        where
            S: Send + $trait<T> + $trait<S>,
        {
            fn split_off_left(&self) -> Self {
                $consumer(PhantomData)
            }
            fn to_reducer(&self) -> Self {
                $consumer(PhantomData)
            }
        }

        impl<S: $trait<S>> Reducer<S> for $consumer<S> {
            fn reduce(self, left: S, right: S) -> S {
                [left, right].into_iter().$method()
            }
        }

        impl<T, S> Folder<T> for $folder<S>
        where
            S: $trait<T> + $trait<S>,
        {
            type Result = S;
            fn consume(self, item: T) -> Self {
                let one: S = std::iter::once(item).$method();
                $folder([self.0, one].into_iter().$method())
            }
            #[inline]
            fn consume_iter<I: IntoIterator<Item = T>>(self, iter: I) -> Self {
                let block: S = iter.into_iter().$method();
                $folder([self.0, block].into_iter().$method())
            }
            fn complete(self) -> S {
                self.0
            }
        }
    };
}

arith_consumer!(SumConsumer, SumFolder, Sum, sum);
arith_consumer!(ProductConsumer, ProductFolder, Product, product);
