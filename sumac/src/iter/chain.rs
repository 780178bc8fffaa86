//! `chain`: the items of one parallel iterator followed by those of another.

use super::indexed::{total_len, with_joined_producers, JoinProducers};
use super::plumbing::{Producer, ProducerCallback, Reducer, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};

/// The iterator returned by [`ParallelIterator::chain`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Chain<A, B> {
    a: A,
    b: B,
}

impl<A, B> Chain<A, B> {
    pub(super) fn new(a: A, b: B) -> Self {
        Chain { a, b }
    }
}

impl<A, B> ParallelIterator for Chain<A, B>
where
    A: ParallelIterator,
    B: ParallelIterator<Item = A::Item>,
{
    type Item = A::Item;

    fn drive_unindexed<C: UnindexedConsumer<A::Item>>(self, consumer: C) -> C::Result {
        let Chain { a, b } = self;
        let (left, right, reducer) = consumer.split_at(a.index_span());
        // Both parts run as a fork pair: `b` is the pending fork while `a` runs.
        let (ra, rb) = crate::join(
            move || a.drive_unindexed(left),
            move || b.drive_unindexed(right),
        );
        reducer.reduce(ra, rb)
    }

    fn opt_len(&self) -> Option<usize> {
        self.a.opt_len()?.checked_add(self.b.opt_len()?)
    }

    fn index_span(&self) -> usize {
        self.a.index_span().saturating_add(self.b.index_span())
    }
}

impl<A, B> IndexedParallelIterator for Chain<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
{
    fn len(&self) -> usize {
        total_len(self.a.len(), self.b.len(), "chained")
    }

    fn with_producer<CB: ProducerCallback<A::Item>>(self, callback: CB) -> CB::Output {
        with_joined_producers::<Self, A, B, CB>(self.a, self.b, callback)
    }
}

impl<A, B> JoinProducers for Chain<A, B> {
    fn join<PA, PB>(a: PA, a_len: usize, b: PB, _b_len: usize) -> impl Producer<Item = PA::Item>
    where
        PA: Producer,
        PB: Producer<Item = PA::Item>,
    {
        ChainProducer { a, b, a_len }
    }
}

/// The items of `a` (`a_len` of them), then those of `b`.
struct ChainProducer<PA, PB> {
    a: PA,
    b: PB,
    a_len: usize,
}

impl<PA, PB> Producer for ChainProducer<PA, PB>
where
    PA: Producer,
    PB: Producer<Item = PA::Item>,
{
    type Item = PA::Item;
    type IntoIter = ChainIter<PA::IntoIter, PB::IntoIter>;

    fn into_iter(self) -> Self::IntoIter {
        ChainIter {
            a: self.a.into_iter(),
            b: self.b.into_iter(),
        }
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        let a_len = self.a_len;
        if index <= a_len {
            let (a_left, a_right) = self.a.split_at(index);
            let (b_none, b) = self.b.split_at(0);
            (
                ChainProducer {
                    a: a_left,
                    b: b_none,
                    a_len: index,
                },
                ChainProducer {
                    a: a_right,
                    b,
                    a_len: a_len - index,
                },
            )
        } else {
            let (b_left, b_right) = self.b.split_at(index - a_len);
            let (a, a_none) = self.a.split_at(a_len);
            (
                ChainProducer {
                    a,
                    b: b_left,
                    a_len,
                },
                ChainProducer {
                    a: a_none,
                    b: b_right,
                    a_len: 0,
                },
            )
        }
    }

    fn min_len(&self) -> usize {
        self.a.min_len().max(self.b.min_len())
    }

    fn max_len(&self) -> usize {
        self.a.max_len().min(self.b.max_len())
    }
}

/// The sequential iterator of a chained producer (exact-size, unlike `std`'s `Chain`).
pub(crate) struct ChainIter<A, B> {
    a: A,
    b: B,
}

impl<A, B> Iterator for ChainIter<A, B>
where
    A: ExactSizeIterator,
    B: ExactSizeIterator<Item = A::Item>,
{
    type Item = A::Item;
    #[inline]
    fn next(&mut self) -> Option<A::Item> {
        match self.a.next() {
            Some(x) => Some(x),
            None => self.b.next(),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.a.len() + self.b.len();
        (n, Some(n))
    }
    #[inline]
    fn fold<Acc, G>(self, init: Acc, mut g: G) -> Acc
    where
        G: FnMut(Acc, Self::Item) -> Acc,
    {
        let acc = self.a.fold(init, &mut g);
        self.b.fold(acc, g)
    }
}

impl<A, B> DoubleEndedIterator for ChainIter<A, B>
where
    A: ExactSizeIterator + DoubleEndedIterator,
    B: ExactSizeIterator<Item = A::Item> + DoubleEndedIterator,
{
    #[inline]
    fn next_back(&mut self) -> Option<A::Item> {
        match self.b.next_back() {
            Some(x) => Some(x),
            None => self.a.next_back(),
        }
    }
}

impl<A, B> ExactSizeIterator for ChainIter<A, B>
where
    A: ExactSizeIterator,
    B: ExactSizeIterator<Item = A::Item>,
{
}
