//! `fold` and `fold_with`: one accumulated value per sequential piece of the loop.

use std::marker::PhantomData;

use super::plumbing::{Consumer, Folder, UnindexedConsumer};
use super::private::Try;
use super::ParallelIterator;

/// Where a piece's starting accumulator comes from.
trait AccSource: Send {
    type Acc;
    fn split(&self) -> Self;
    fn make(&self) -> Self::Acc;
}

struct IdentitySource<'f, ID>(&'f ID);

impl<T, ID: Fn() -> T + Sync> AccSource for IdentitySource<'_, ID> {
    type Acc = T;
    fn split(&self) -> Self {
        IdentitySource(self.0)
    }
    fn make(&self) -> T {
        (self.0)()
    }
}

struct CloneSource<T>(T);

impl<T: Clone + Send> AccSource for CloneSource<T> {
    type Acc = T;
    fn split(&self) -> Self {
        CloneSource(self.0.clone())
    }
    fn make(&self) -> T {
        self.0.clone()
    }
}

/// `try_fold_with`'s source: clones of the initial success, wrapped as a success.
struct TryCloneSource<T, R>(T, PhantomData<fn() -> R>);

impl<T: Clone + Send, R: Try<Output = T>> AccSource for TryCloneSource<T, R> {
    type Acc = R;
    fn split(&self) -> Self {
        TryCloneSource(self.0.clone(), PhantomData)
    }
    fn make(&self) -> R {
        R::from_output(self.0.clone())
    }
}

struct FoldConsumer<'f, C, S, F> {
    base: C,
    source: S,
    fold_op: &'f F,
}

struct FoldFolder<'f, B, S, T, F> {
    base: B,
    source: S,
    acc: T,
    fold_op: &'f F,
}

impl<'f, U, T, C, S, F> Consumer<U> for FoldConsumer<'f, C, S, F>
where
    C: Consumer<T>,
    S: AccSource<Acc = T>,
    F: Fn(T, U) -> T + Sync,
    T: Send,
{
    type Folder = FoldFolder<'f, C::Folder, S, T, F>;
    type Reducer = C::Reducer;
    type Result = C::Result;
    const DETACHES: bool = C::DETACHES;
    fn split_at(self, index: usize) -> (Self, Self, C::Reducer) {
        let (l, r, reducer) = self.base.split_at(index);
        (
            FoldConsumer {
                base: l,
                source: self.source.split(),
                fold_op: self.fold_op,
            },
            FoldConsumer {
                base: r,
                source: self.source,
                fold_op: self.fold_op,
            },
            reducer,
        )
    }
    fn into_folder(self) -> Self::Folder {
        FoldFolder {
            base: self.base.into_folder(),
            acc: self.source.make(),
            source: self.source,
            fold_op: self.fold_op,
        }
    }
    fn detach(folder: Self::Folder, consumed: usize) -> (C::Result, Self, C::Reducer) {
        let base = folder.base.consume(folder.acc);
        let (result, base, reducer) = C::detach(base, consumed);
        (
            result,
            FoldConsumer {
                base,
                source: folder.source,
                fold_op: folder.fold_op,
            },
            reducer,
        )
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

impl<'f, U, T, C, S, F> UnindexedConsumer<U> for FoldConsumer<'f, C, S, F>
where
    C: UnindexedConsumer<T>,
    S: AccSource<Acc = T>,
    F: Fn(T, U) -> T + Sync,
    T: Send,
{
    fn split_off_left(&self) -> Self {
        FoldConsumer {
            base: self.base.split_off_left(),
            source: self.source.split(),
            fold_op: self.fold_op,
        }
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
}

impl<'f, U, T, B, S, F> Folder<U> for FoldFolder<'f, B, S, T, F>
where
    B: Folder<T>,
    F: Fn(T, U) -> T,
{
    type Result = B::Result;
    fn consume(mut self, item: U) -> Self {
        self.acc = (self.fold_op)(self.acc, item);
        self
    }
    #[inline]
    fn consume_iter<I: IntoIterator<Item = U>>(mut self, iter: I) -> Self {
        self.acc = iter.into_iter().fold(self.acc, self.fold_op);
        self
    }
    fn complete(self) -> B::Result {
        self.base.consume(self.acc).complete()
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

/// The iterator returned by [`ParallelIterator::fold`].
#[derive(Clone)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Fold<I, ID, F> {
    base: I,
    identity: ID,
    fold_op: F,
}

/// Shows the base iterator only: the identity and the closure are left out.
impl<I: std::fmt::Debug, ID, F> std::fmt::Debug for Fold<I, ID, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fold").field("base", &self.base).finish()
    }
}

impl<I, ID, F> Fold<I, ID, F> {
    pub(super) fn new(base: I, identity: ID, fold_op: F) -> Self {
        Fold {
            base,
            identity,
            fold_op,
        }
    }
}

impl<I, ID, F, T> ParallelIterator for Fold<I, ID, F>
where
    I: ParallelIterator,
    F: Fn(T, I::Item) -> T + Sync + Send,
    ID: Fn() -> T + Sync + Send,
    T: Send,
{
    type Item = T;
    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        self.base.drive_unindexed(FoldConsumer {
            base: consumer,
            source: IdentitySource(&self.identity),
            fold_op: &self.fold_op,
        })
    }
    fn index_span(&self) -> usize {
        self.base.index_span()
    }
}

/// The iterator returned by [`ParallelIterator::fold_with`].
#[derive(Clone)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct FoldWith<I, T, F> {
    base: I,
    item: T,
    fold_op: F,
}

/// Shows the base iterator and the value: the closure is left out.
impl<I: std::fmt::Debug, T: std::fmt::Debug, F> std::fmt::Debug for FoldWith<I, T, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FoldWith")
            .field("base", &self.base)
            .field("item", &self.item)
            .finish()
    }
}

impl<I, T, F> FoldWith<I, T, F> {
    pub(super) fn new(base: I, item: T, fold_op: F) -> Self {
        FoldWith {
            base,
            item,
            fold_op,
        }
    }
}

impl<I, T, F> ParallelIterator for FoldWith<I, T, F>
where
    I: ParallelIterator,
    F: Fn(T, I::Item) -> T + Sync + Send,
    T: Send + Clone,
{
    type Item = T;
    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        self.base.drive_unindexed(FoldConsumer {
            base: consumer,
            source: CloneSource(self.item),
            fold_op: &self.fold_op,
        })
    }
    fn index_span(&self) -> usize {
        self.base.index_span()
    }
}

/// The fold op of `try_fold`: `fold_op` on the success so far, or the failure kept as it
/// is (so a failed piece skips its remaining items).
fn try_fold_op<'a, T, U, R, F>(fold_op: &'a F) -> impl Fn(R, U) -> R + Sync + 'a
where
    R: Try<Output = T>,
    F: Fn(T, U) -> R + Sync,
{
    move |acc, item| match acc.into_result() {
        Ok(acc) => fold_op(acc, item),
        Err(failure) => failure,
    }
}

/// The iterator returned by [`ParallelIterator::try_fold`]; `R` is the type `fold_op`
/// returns (a parameter of Rayon's type too, so code naming the type names four).
#[derive(Clone)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct TryFold<I, R, ID, F> {
    base: I,
    identity: ID,
    fold_op: F,
    marker: std::marker::PhantomData<R>,
}

/// Shows the base iterator only: the identity and the closure are left out.
impl<I: std::fmt::Debug, R, ID, F> std::fmt::Debug for TryFold<I, R, ID, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TryFold").field("base", &self.base).finish()
    }
}

impl<I, R, ID, F> TryFold<I, R, ID, F> {
    pub(super) fn new(base: I, identity: ID, fold_op: F) -> Self {
        TryFold {
            base,
            identity,
            fold_op,
            marker: std::marker::PhantomData,
        }
    }
}

impl<I, ID, F, T, R> ParallelIterator for TryFold<I, R, ID, F>
where
    I: ParallelIterator,
    F: Fn(T, I::Item) -> R + Sync + Send,
    ID: Fn() -> T + Sync + Send,
    R: Try<Output = T> + Send,
{
    type Item = R;
    fn drive_unindexed<C: UnindexedConsumer<R>>(self, consumer: C) -> C::Result {
        let identity = || R::from_output((self.identity)());
        self.base.drive_unindexed(FoldConsumer {
            base: consumer,
            source: IdentitySource(&identity),
            fold_op: &try_fold_op(&self.fold_op),
        })
    }
    fn index_span(&self) -> usize {
        self.base.index_span()
    }
}

/// The iterator returned by [`ParallelIterator::try_fold_with`].
#[derive(Clone)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct TryFoldWith<I, T, F> {
    base: I,
    init: T,
    fold_op: F,
}

/// Shows the base iterator and the value: the closure is left out.
impl<I: std::fmt::Debug, T: std::fmt::Debug, F> std::fmt::Debug for TryFoldWith<I, T, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TryFoldWith")
            .field("base", &self.base)
            .field("item", &self.init)
            .finish()
    }
}

impl<I, T, F> TryFoldWith<I, T, F> {
    pub(super) fn new(base: I, init: T, fold_op: F) -> Self {
        TryFoldWith {
            base,
            init,
            fold_op,
        }
    }
}

impl<I, T, F, R> ParallelIterator for TryFoldWith<I, T, F>
where
    I: ParallelIterator,
    F: Fn(T, I::Item) -> R + Sync + Send,
    T: Clone + Send,
    R: Try<Output = T> + Send,
{
    type Item = R;
    fn drive_unindexed<C: UnindexedConsumer<R>>(self, consumer: C) -> C::Result {
        self.base.drive_unindexed(FoldConsumer {
            base: consumer,
            source: TryCloneSource(self.init, PhantomData),
            fold_op: &try_fold_op(&self.fold_op),
        })
    }
    fn index_span(&self) -> usize {
        self.base.index_span()
    }
}
