//! `chunks`, `fold_chunks` and `fold_chunks_with` (the items of an indexed iterator in
//! groups of a fixed size, gathered into vectors or folded), and `positions` (the
//! indices of the items that satisfy a predicate).

use super::plumbing::{Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};

/// What becomes of the items of one chunk.
trait ChunkOp<T>: Send + Sized {
    type Output: Send;
    /// A copy for the other half of a split.
    fn split(&self) -> Self;
    fn apply<I: Iterator<Item = T>>(&self, items: I) -> Self::Output;
}

/// `chunks`: a vector of the items.
struct CollectChunk;

impl<T: Send> ChunkOp<T> for CollectChunk {
    type Output = Vec<T>;
    fn split(&self) -> Self {
        CollectChunk
    }
    fn apply<I: Iterator<Item = T>>(&self, items: I) -> Vec<T> {
        items.collect()
    }
}

/// `fold_chunks`: the items folded from `identity()`.
struct FoldChunk<'f, ID, F> {
    identity: &'f ID,
    fold_op: &'f F,
}

impl<T, U, ID, F> ChunkOp<T> for FoldChunk<'_, ID, F>
where
    ID: Fn() -> U + Sync,
    F: Fn(U, T) -> U + Sync,
    U: Send,
{
    type Output = U;
    fn split(&self) -> Self {
        FoldChunk { ..*self }
    }
    fn apply<I: Iterator<Item = T>>(&self, items: I) -> U {
        items.fold((self.identity)(), self.fold_op)
    }
}

/// `fold_chunks_with`: the items folded from a clone of `init`.
struct FoldChunkWith<'f, U, F> {
    init: U,
    fold_op: &'f F,
}

impl<T, U, F> ChunkOp<T> for FoldChunkWith<'_, U, F>
where
    F: Fn(U, T) -> U + Sync,
    U: Clone + Send,
{
    type Output = U;
    fn split(&self) -> Self {
        FoldChunkWith {
            init: self.init.clone(),
            fold_op: self.fold_op,
        }
    }
    fn apply<I: Iterator<Item = T>>(&self, items: I) -> U {
        items.fold(self.init.clone(), self.fold_op)
    }
}

/// Implements the iterator traits of a chunk adaptor with fields `size`, `base` and
/// `$field`s, whose per-chunk op `$op` is built from those fields.
macro_rules! chunk_adaptor {
    (impl[$($extra:ident),*] $name:ident<I $(, $g:ident)*> { $($field:ident),* } => $item:ty,
     where [$($bounds:tt)*], op = $op:expr) => {
        impl<I: IndexedParallelIterator $(, $g)* $(, $extra)*> ParallelIterator for $name<I $(, $g)*>
        where
            $($bounds)*
        {
            type Item = $item;
            fn drive_unindexed<C: UnindexedConsumer<$item>>(self, consumer: C) -> C::Result {
                super::drive_indexed(self, consumer)
            }
            fn opt_len(&self) -> Option<usize> {
                Some(IndexedParallelIterator::len(self))
            }
        }

        impl<I: IndexedParallelIterator $(, $g)* $(, $extra)*> IndexedParallelIterator
            for $name<I $(, $g)*>
        where
            $($bounds)*
        {
            fn len(&self) -> usize {
                self.base.len().div_ceil(self.size)
            }
            fn with_producer<CB: ProducerCallback<$item>>(self, callback: CB) -> CB::Output {
                let $name { size, base $(, $field)* } = self;
                let op = $op;
                let base_len = base.len();
                base.with_producer(ChunkCallback { size, base_len, op, callback })
            }
        }
    };
}

/// The iterator returned by [`IndexedParallelIterator::chunks`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Chunks<I> {
    size: usize,
    base: I,
}

impl<I> Chunks<I> {
    pub(super) fn new(base: I, size: usize) -> Self {
        assert!(size != 0, "chunk_size must not be zero");
        Chunks { size, base }
    }
}

chunk_adaptor!(impl[] Chunks<I> {} => Vec<I::Item>, where [], op = CollectChunk);

/// The iterator returned by [`IndexedParallelIterator::fold_chunks`].
#[derive(Clone)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct FoldChunks<I, ID, F> {
    size: usize,
    base: I,
    identity: ID,
    fold_op: F,
}

/// Shows the base iterator and the chunk size: the identity and the closure are left out.
impl<I: std::fmt::Debug, ID, F> std::fmt::Debug for FoldChunks<I, ID, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FoldChunks")
            .field("base", &self.base)
            .field("chunk_size", &self.size)
            .finish()
    }
}

impl<I, ID, F> FoldChunks<I, ID, F> {
    pub(super) fn new(base: I, size: usize, identity: ID, fold_op: F) -> Self {
        assert!(size != 0, "chunk_size must not be zero");
        FoldChunks {
            size,
            base,
            identity,
            fold_op,
        }
    }
}

chunk_adaptor!(impl[U] FoldChunks<I, ID, F> { identity, fold_op } => U,
    where [ID: Fn() -> U + Sync + Send, F: Fn(U, I::Item) -> U + Sync + Send, U: Send],
    op = FoldChunk { identity: &identity, fold_op: &fold_op });

/// The iterator returned by [`IndexedParallelIterator::fold_chunks_with`].
#[derive(Clone)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct FoldChunksWith<I, U, F> {
    size: usize,
    base: I,
    init: U,
    fold_op: F,
}

/// Shows the base iterator, the chunk size and the value: the closure is left out.
impl<I: std::fmt::Debug, U: std::fmt::Debug, F> std::fmt::Debug for FoldChunksWith<I, U, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FoldChunksWith")
            .field("base", &self.base)
            .field("chunk_size", &self.size)
            .field("item", &self.init)
            .finish()
    }
}

impl<I, U, F> FoldChunksWith<I, U, F> {
    pub(super) fn new(base: I, size: usize, init: U, fold_op: F) -> Self {
        assert!(size != 0, "chunk_size must not be zero");
        FoldChunksWith {
            size,
            base,
            init,
            fold_op,
        }
    }
}

chunk_adaptor!(impl[] FoldChunksWith<I, U, F> { init, fold_op } => U,
    where [F: Fn(U, I::Item) -> U + Sync + Send, U: Clone + Send],
    op = FoldChunkWith { init, fold_op: &fold_op });

/// Receives the base producer (of `base_len` items) and hands the chunk producer on.
struct ChunkCallback<G, CB> {
    size: usize,
    base_len: usize,
    op: G,
    callback: CB,
}

impl<T, G, CB> ProducerCallback<T> for ChunkCallback<G, CB>
where
    G: ChunkOp<T>,
    CB: ProducerCallback<G::Output>,
{
    type Output = CB::Output;
    fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
        self.callback.callback(ChunkProducer {
            size: self.size,
            base,
            base_len: self.base_len,
            op: self.op,
        })
    }
}

/// Chunks of `size` items of the base producer (of `base_len` items), each turned into
/// one item by `op`; the last chunk may be shorter.
struct ChunkProducer<P, G> {
    size: usize,
    base: P,
    base_len: usize,
    op: G,
}

impl<P: Producer, G: ChunkOp<P::Item>> Producer for ChunkProducer<P, G> {
    type Item = G::Output;
    type IntoIter = ChunkIter<P, G>;
    fn into_iter(self) -> ChunkIter<P, G> {
        ChunkIter {
            size: self.size,
            rest: Some(self.base),
            left: self.base_len,
            op: self.op,
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = index.saturating_mul(self.size).min(self.base_len);
        let (left, right) = self.base.split_at(at);
        let size = self.size;
        let left = ChunkProducer {
            size,
            base: left,
            base_len: at,
            op: self.op.split(),
        };
        (
            left,
            ChunkProducer {
                size,
                base: right,
                base_len: self.base_len - at,
                op: self.op,
            },
        )
    }
}

/// The sequential side of [`ChunkProducer`]: splits a chunk off either end of what is
/// left (`left` items of the base producer) and applies the op to its items.
struct ChunkIter<P, G> {
    size: usize,
    rest: Option<P>,
    left: usize,
    op: G,
}

impl<P: Producer, G: ChunkOp<P::Item>> Iterator for ChunkIter<P, G> {
    type Item = G::Output;
    fn next(&mut self) -> Option<G::Output> {
        let left = self.left;
        if left == 0 {
            return None;
        }
        let n = self.size.min(left);
        let (chunk, rest) = self.rest.take()?.split_at(n);
        self.rest = Some(rest);
        self.left -= n;
        Some(self.op.apply(chunk.into_iter()))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.left.div_ceil(self.size);
        (n, Some(n))
    }
}

impl<P: Producer, G: ChunkOp<P::Item>> DoubleEndedIterator for ChunkIter<P, G> {
    fn next_back(&mut self) -> Option<G::Output> {
        let left = self.left;
        if left == 0 {
            return None;
        }
        // The last chunk holds what is left over after the whole chunks before it.
        let last = left - (left - 1) / self.size * self.size;
        let (rest, chunk) = self.rest.take()?.split_at(left - last);
        self.rest = Some(rest);
        self.left -= last;
        Some(self.op.apply(chunk.into_iter()))
    }
}

impl<P: Producer, G: ChunkOp<P::Item>> ExactSizeIterator for ChunkIter<P, G> {}

/// The iterator returned by [`IndexedParallelIterator::positions`].
#[derive(Clone)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Positions<I, P> {
    base: I,
    predicate: P,
}

/// Shows the base iterator only: the predicate is left out.
impl<I: std::fmt::Debug, P> std::fmt::Debug for Positions<I, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Positions")
            .field("base", &self.base)
            .finish()
    }
}

impl<I, P> Positions<I, P> {
    pub(super) fn new(base: I, predicate: P) -> Self {
        Positions { base, predicate }
    }
}

impl<I, P> ParallelIterator for Positions<I, P>
where
    I: IndexedParallelIterator,
    P: Fn(I::Item) -> bool + Sync + Send,
{
    type Item = usize;
    fn drive_unindexed<C: UnindexedConsumer<usize>>(self, consumer: C) -> C::Result {
        let predicate = &self.predicate;
        self.base
            .enumerate()
            .filter_map(|(i, item)| predicate(item).then_some(i))
            .drive_unindexed(consumer)
    }
    fn index_span(&self) -> usize {
        self.base.len()
    }
}
