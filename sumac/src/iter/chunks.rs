//! `chunks` (the items of an indexed iterator gathered into vectors of a fixed size) and
//! `positions` (the indices of the items that satisfy a predicate).

use super::plumbing::{Consumer, Producer, ProducerCallback};
use super::{IndexedParallelIterator, ParallelIterator};

/// The iterator returned by [`IndexedParallelIterator::chunks`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Chunks<I> {
    size: usize,
    base: I,
}

impl<I> Chunks<I> {
    pub(super) fn new(base: I, size: usize) -> Self {
        assert!(size != 0, "chunk size must not be zero");
        Chunks { size, base }
    }
}

impl<I: IndexedParallelIterator> ParallelIterator for Chunks<I> {
    type Item = Vec<I::Item>;
    fn drive_unindexed<C: Consumer<Self::Item>>(self, consumer: C) -> C::Result {
        super::drive_indexed(self, consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(IndexedParallelIterator::len(self))
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for Chunks<I> {
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.size)
    }
    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        let size = self.size;
        return self.base.with_producer(Callback { size, callback });

        struct Callback<CB> {
            size: usize,
            callback: CB,
        }

        impl<T, CB: ProducerCallback<Vec<T>>> ProducerCallback<T> for Callback<CB> {
            type Output = CB::Output;
            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                self.callback.callback(ChunkProducer {
                    size: self.size,
                    base,
                })
            }
        }
    }
}

/// Chunks of `size` items of the base producer; the last one may be shorter.
struct ChunkProducer<P> {
    size: usize,
    base: P,
}

impl<P: Producer> Producer for ChunkProducer<P> {
    type Item = Vec<P::Item>;
    type IntoIter = ChunkIter<P>;
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.size)
    }
    fn into_iter(self) -> ChunkIter<P> {
        ChunkIter {
            size: self.size,
            rest: Some(self.base),
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = index.saturating_mul(self.size).min(self.base.len());
        let (left, right) = self.base.split_at(at);
        let size = self.size;
        (
            ChunkProducer { size, base: left },
            ChunkProducer { size, base: right },
        )
    }
}

/// The sequential side of [`ChunkProducer`]: splits a chunk off either end of what is
/// left and collects it.
struct ChunkIter<P> {
    size: usize,
    rest: Option<P>,
}

impl<P: Producer> ChunkIter<P> {
    fn items_left(&self) -> usize {
        self.rest.as_ref().map_or(0, P::len)
    }
}

impl<P: Producer> Iterator for ChunkIter<P> {
    type Item = Vec<P::Item>;
    fn next(&mut self) -> Option<Vec<P::Item>> {
        let left = self.items_left();
        if left == 0 {
            return None;
        }
        let (chunk, rest) = self.rest.take()?.split_at(self.size.min(left));
        self.rest = Some(rest);
        Some(chunk.into_iter().collect())
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.items_left().div_ceil(self.size);
        (n, Some(n))
    }
}

impl<P: Producer> DoubleEndedIterator for ChunkIter<P> {
    fn next_back(&mut self) -> Option<Vec<P::Item>> {
        let left = self.items_left();
        if left == 0 {
            return None;
        }
        // The last chunk holds what is left over after the whole chunks before it.
        let last = left - (left - 1) / self.size * self.size;
        let (rest, chunk) = self.rest.take()?.split_at(left - last);
        self.rest = Some(rest);
        Some(chunk.into_iter().collect())
    }
}

impl<P: Producer> ExactSizeIterator for ChunkIter<P> {}

/// The iterator returned by [`IndexedParallelIterator::positions`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Positions<I, P> {
    base: I,
    predicate: P,
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
    fn drive_unindexed<C: Consumer<usize>>(self, consumer: C) -> C::Result {
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
