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

/// A parallel iterator of `n` clones of `element` (an indexed iterator). The last item is
/// `element` itself, so `n` items cost `n - 1` clones, and `repeat_n(element, 0)` drops
/// `element` at once.
///
/// ```
/// use sumac::prelude::*;
/// let v: Vec<String> = sumac::iter::repeat_n(String::from("ab"), 3).collect();
/// assert_eq!(v, ["ab", "ab", "ab"]);
/// ```
pub fn repeat_n<T: Clone + Send>(element: T, n: usize) -> RepeatN<T> {
    RepeatN {
        element: (n > 0).then_some(element),
        count: n,
    }
}

/// The former name of [`repeat_n`] in Rayon.
pub fn repeatn<T: Clone + Send>(element: T, n: usize) -> RepeatN<T> {
    repeat_n(element, n)
}

/// The iterator returned by [`repeat`].
#[derive(Clone, Debug)]
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
///
/// An empty one holds no element, so cloning or splitting off an empty part clones
/// nothing (as in Rayon).
#[derive(Clone, Debug)]
pub struct RepeatN<T> {
    /// `None` exactly when `count` is 0.
    element: Option<T>,
    count: usize,
}

impl<T> RepeatN<T> {
    fn empty() -> Self {
        RepeatN {
            element: None,
            count: 0,
        }
    }
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
    type IntoIter = RepeatNIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        debug_assert_eq!(self.element.is_some(), self.count > 0);
        RepeatNIter {
            inner: self
                .element
                .map(|element| std::iter::repeat_n(element, self.count)),
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        debug_assert!(index <= self.count);
        if index == 0 {
            (RepeatN::empty(), self)
        } else if index == self.count {
            (self, RepeatN::empty())
        } else {
            let element = self.element.expect("a nonempty RepeatN holds its element");
            let left = RepeatN {
                element: Some(element.clone()),
                count: index,
            };
            let right = RepeatN {
                element: Some(element),
                count: self.count - index,
            };
            (left, right)
        }
    }
}

/// The sequential iterator of a [`RepeatN`] piece: the standard library's `repeat_n`
/// (which skips items without cloning them and moves the element out as the last item),
/// or nothing for an empty piece.
#[derive(Debug)]
pub struct RepeatNIter<T> {
    inner: Option<std::iter::RepeatN<T>>,
}

impl<T: Clone> Iterator for RepeatNIter<T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        self.inner.as_mut()?.next()
    }
    fn nth(&mut self, n: usize) -> Option<T> {
        self.inner.as_mut()?.nth(n)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.len();
        (len, Some(len))
    }
}

impl<T: Clone> DoubleEndedIterator for RepeatNIter<T> {
    fn next_back(&mut self) -> Option<T> {
        self.inner.as_mut()?.next_back()
    }
    fn nth_back(&mut self, n: usize) -> Option<T> {
        self.inner.as_mut()?.nth_back(n)
    }
}

impl<T: Clone> ExactSizeIterator for RepeatNIter<T> {
    fn len(&self) -> usize {
        self.inner.as_ref().map_or(0, ExactSizeIterator::len)
    }
}
