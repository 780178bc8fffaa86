//! [`Either`] and parallel iterators, as in Rayon: an `Either` of two parallel iterators
//! with the same items is itself one (indexed when both sides are), an `Either` of two
//! collections extends the one it holds, and a pair of collections collects the two
//! sides of `Either` items (as [`partition_map`](ParallelIterator::partition_map) does).
//!
//! ```
//! use sumac::iter::Either;
//! use sumac::prelude::*;
//! let v: Vec<u32> = (0..10).collect();
//! let evens_or_all = |only_evens: bool| {
//!     if only_evens {
//!         Either::Left(v.par_iter().filter(|&&x| x % 2 == 0))
//!     } else {
//!         Either::Right(v.par_iter())
//!     }
//! };
//! assert_eq!(evens_or_all(true).count(), 5);
//! assert_eq!(evens_or_all(false).count(), 10);
//! ```

use super::plumbing::{Consumer, ProducerCallback, UnindexedConsumer};
use super::{
    Either, FromParallelIterator, IndexedParallelIterator, IntoParallelIterator, ParallelExtend,
    ParallelIterator,
};

impl<L, R> ParallelIterator for Either<L, R>
where
    L: ParallelIterator,
    R: ParallelIterator<Item = L::Item>,
{
    type Item = L::Item;

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        match self {
            Either::Left(left) => left.drive_unindexed(consumer),
            Either::Right(right) => right.drive_unindexed(consumer),
        }
    }

    fn opt_len(&self) -> Option<usize> {
        self.as_ref().either(L::opt_len, R::opt_len)
    }

    fn index_span(&self) -> usize {
        self.as_ref().either(L::index_span, R::index_span)
    }
}

/// Indexed when both sides are.
///
/// ```
/// use sumac::iter::Either;
/// use sumac::prelude::*;
/// let numbers = |backwards: bool| {
///     if backwards {
///         Either::Left((0..4).into_par_iter().rev())
///     } else {
///         Either::Right((0..4).into_par_iter())
///     }
/// };
/// let v: Vec<i32> = numbers(true).enumerate().map(|(i, x)| i as i32 * 10 + x).collect();
/// assert_eq!(v, [3, 12, 21, 30]);
/// assert_eq!(numbers(false).len(), 4);
/// ```
impl<L, R> IndexedParallelIterator for Either<L, R>
where
    L: IndexedParallelIterator,
    R: IndexedParallelIterator<Item = L::Item>,
{
    fn len(&self) -> usize {
        self.as_ref().either(L::len, R::len)
    }

    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        match self {
            Either::Left(left) => left.with_producer(callback),
            Either::Right(right) => right.with_producer(callback),
        }
    }

    fn drive<C: Consumer<Self::Item>>(self, consumer: C) -> C::Result {
        match self {
            Either::Left(left) => left.drive(consumer),
            Either::Right(right) => right.drive(consumer),
        }
    }
}

/// Extends whichever collection the `Either` holds.
impl<L, R, T> ParallelExtend<T> for Either<L, R>
where
    L: ParallelExtend<T>,
    R: ParallelExtend<T>,
    T: Send,
{
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = T>,
    {
        match self {
            Either::Left(left) => left.par_extend(par_iter),
            Either::Right(right) => right.par_extend(par_iter),
        }
    }
}

/// Collects the `Left` items into the first collection and the `Right` items into the
/// second, each in order.
///
/// ```
/// use sumac::iter::Either;
/// use sumac::prelude::*;
/// let (small, big): (Vec<u32>, Vec<u32>) = (0..6u32)
///     .into_par_iter()
///     .map(|x| if x < 3 { Either::Left(x) } else { Either::Right(x * 10) })
///     .collect();
/// assert_eq!((small, big), (vec![0, 1, 2], vec![30, 40, 50]));
/// ```
impl<L, R, A, B> FromParallelIterator<Either<L, R>> for (A, B)
where
    L: Send,
    R: Send,
    A: Default + Send + ParallelExtend<L>,
    B: Default + Send + ParallelExtend<R>,
{
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = Either<L, R>>,
    {
        par_iter.into_par_iter().partition_map(|either| either)
    }
}

/// Extends the first collection with the `Left` items and the second with the `Right`
/// items, each in order.
impl<L, R, A, B> ParallelExtend<Either<L, R>> for (A, B)
where
    L: Send,
    R: Send,
    A: Send + ParallelExtend<L>,
    B: Send + ParallelExtend<R>,
{
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = Either<L, R>>,
    {
        let (left, right): (Vec<L>, Vec<R>) = par_iter.into_par_iter().partition_map(|e| e);
        let (a, b) = self;
        crate::join(|| a.par_extend(left), || b.par_extend(right));
    }
}
