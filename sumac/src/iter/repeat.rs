//! Sources that are not collections: [`empty`], [`once`], [`repeat`] and [`repeat_n`].
//!
//! ```
//! use sumac::iter::{once, repeat, repeat_n};
//! use sumac::prelude::*;
//!
//! let v: Vec<i32> = once(1).chain(repeat_n(7, 3)).collect();
//! assert_eq!(v, [1, 7, 7, 7]);
//! let pairs: Vec<(char, i32)> = repeat('x').zip(vec![1, 2]).collect();
//! assert_eq!(pairs, [('x', 1), ('x', 2)]);
//! ```

use super::plumbing::{bridge, Producer, ProducerCallback, UnindexedConsumer};
use super::{option, IndexedParallelIterator, IntoParallelIterator, ParallelIterator, Zip};

/// The iterator returned by [`empty`]: an `Option` iterator that holds nothing.
pub type Empty<T> = option::IntoIter<T>;

/// The iterator returned by [`once`]: an `Option` iterator that holds the item.
pub type Once<T> = option::IntoIter<T>;

/// A parallel iterator with no item.
///
/// ```
/// use sumac::prelude::*;
/// assert_eq!(sumac::iter::empty::<u8>().count(), 0);
/// ```
pub fn empty<T: Send>() -> Empty<T> {
    None.into_par_iter()
}

/// A parallel iterator with exactly one item.
///
/// ```
/// use sumac::prelude::*;
/// assert_eq!(sumac::iter::once(5).sum::<i32>(), 5);
/// ```
pub fn once<T: Send>(item: T) -> Once<T> {
    Some(item).into_par_iter()
}

/// An endless parallel iterator of clones of `element`: limit it with
/// [`take`](Repeat::take) or [`zip`](Repeat::zip), or stop it with a search.
///
/// ```
/// use sumac::prelude::*;
/// let found = sumac::iter::repeat(3).find_any(|&x| x == 3);
/// assert_eq!(found, Some(3));
/// ```
pub fn repeat<T: Clone + Send>(element: T) -> Repeat<T> {
    Repeat { element }
}

/// A parallel iterator of `n` clones of `element` (an indexed iterator).
///
/// ```
/// use sumac::prelude::*;
/// let v: Vec<String> = sumac::iter::repeat_n(String::from("ab"), 3).collect();
/// assert_eq!(v, ["ab", "ab", "ab"]);
/// ```
pub fn repeat_n<T: Clone + Send>(element: T, n: usize) -> RepeatN<T> {
    RepeatN { element, count: n }
}

/// The former name of [`repeat_n`] in Rayon.
pub fn repeatn<T: Clone + Send>(element: T, n: usize) -> RepeatN<T> {
    repeat_n(element, n)
}

/// The iterator returned by [`repeat`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Repeat<T> {
    element: T,
}

impl<T: Clone + Send> Repeat<T> {
    /// The first `n` clones only.
    pub fn take(self, n: usize) -> RepeatN<T> {
        repeat_n(self.element, n)
    }

    /// Pairs a clone with every item of `zip_op`.
    pub fn zip<Z>(self, zip_op: Z) -> Zip<RepeatN<T>, Z::Iter>
    where
        Z: IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        let other = zip_op.into_par_iter();
        let n = other.len();
        self.take(n).zip(other)
    }
}

impl<T: Clone + Send> ParallelIterator for Repeat<T> {
    type Item = T;
    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        // As good as endless: the loop splits it like any other index range.
        self.take(usize::MAX).drive_unindexed(consumer)
    }
    fn index_span(&self) -> usize {
        usize::MAX
    }
}

/// The iterator returned by [`repeat_n`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct RepeatN<T> {
    element: T,
    count: usize,
}

impl<T: Clone + Send> ParallelIterator for RepeatN<T> {
    type Item = T;
    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        bridge(self, consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.count)
    }
}

impl<T: Clone + Send> IndexedParallelIterator for RepeatN<T> {
    fn len(&self) -> usize {
        self.count
    }
    fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
        callback.callback(self)
    }
}

impl<T: Clone + Send> Producer for RepeatN<T> {
    type Item = T;
    type IntoIter = std::iter::RepeatN<T>;
    fn into_iter(self) -> Self::IntoIter {
        std::iter::repeat_n(self.element, self.count)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let left = RepeatN {
            element: self.element.clone(),
            count: index,
        };
        let right = RepeatN {
            element: self.element,
            count: self.count - index,
        };
        (left, right)
    }
}
