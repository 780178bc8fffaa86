//! A parallel iterator that moves the items out of a `Vec<T>`.
//!
//! Every item is moved out exactly once; if a closure panics, the items not yet moved
//! out are dropped exactly once and the buffer is freed.
//!
//! ```
//! use sumac::prelude::*;
//! let v = vec![String::from("a"), String::from("bb")];
//! let lens: Vec<usize> = v.into_par_iter().map(|s| s.len()).collect();
//! assert_eq!(lens, [1, 2]);
//! ```

use std::mem;
use std::ptr;

use super::plumbing::{Producer, ProducerCallback, UnindexedConsumer};
use super::{drive_indexed, IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

/// A parallel iterator over the items of a `Vec<T>`, by value.
#[derive(Clone, Debug)]
pub struct IntoIter<T> {
    vec: Vec<T>,
}

impl<T: Send> IntoParallelIterator for Vec<T> {
    type Iter = IntoIter<T>;
    type Item = T;
    fn into_par_iter(self) -> IntoIter<T> {
        IntoIter { vec: self }
    }
}

/// A boxed slice by value (it becomes a `Vec` without copying).
impl<T: Send> IntoParallelIterator for Box<[T]> {
    type Iter = IntoIter<T>;
    type Item = T;
    fn into_par_iter(self) -> IntoIter<T> {
        IntoIter { vec: self.into() }
    }
}

/// An array by value: its items are moved into a `Vec` first.
impl<T: Send, const N: usize> IntoParallelIterator for [T; N] {
    type Iter = IntoIter<T>;
    type Item = T;
    fn into_par_iter(self) -> IntoIter<T> {
        IntoIter {
            vec: Vec::from(self),
        }
    }
}

/// `par_drain`: removes a range of items from a vector and iterates over them in parallel.
///
/// ```
/// use sumac::prelude::*;
/// let mut v: Vec<u32> = (0..10).collect();
/// let drained: Vec<u32> = v.par_drain(2..5).map(|x| x * 10).collect();
/// assert_eq!(drained, [20, 30, 40]);
/// assert_eq!(v, [0, 1, 5, 6, 7, 8, 9]);
/// ```
pub trait ParallelDrainRange<Idx = usize> {
    /// The parallel iterator over the removed items.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// The removed items.
    type Item: Send;
    /// Removes the items in `range` (the items after it move down to close the gap, as
    /// with `Vec::drain`) and returns a parallel iterator over them: items it does not
    /// yield are dropped with it. Every collection is drained in place, as in Rayon: the
    /// items go straight from the collection into the loop, and the gap closes when the
    /// iterator is done or dropped (see [`Drain`],
    /// [`vec_deque::Drain`](crate::collections::vec_deque::Drain) and
    /// [`string::Drain`](crate::string::Drain)). A drain leaked with `mem::forget` before
    /// it ran leaves the collection as it was.
    ///
    /// ```
    /// use std::collections::VecDeque;
    /// use sumac::prelude::*;
    ///
    /// let mut letters: Vec<char> = "abcdef".chars().collect();
    /// let tail: String = letters.par_drain(4..).collect();
    /// assert_eq!(tail, "ef");
    /// assert_eq!(letters, ['a', 'b', 'c', 'd']);
    ///
    /// let mut line = String::from("key=value");
    /// let key: String = line.par_drain(..=3).filter(|&c| c != '=').collect();
    /// assert_eq!((key.as_str(), line.as_str()), ("key", "value"));
    ///
    /// let mut queue: VecDeque<u32> = (1..=6).collect();
    /// let sum: u32 = queue.par_drain(1..3).sum();
    /// assert_eq!(sum, 2 + 3);
    /// assert_eq!(queue, [1, 4, 5, 6]);
    /// ```
    ///
    /// # Panics
    /// If the range is out of bounds or its start is past its end (for a `String`, also
    /// if an end of the range is not on a char boundary).
    fn par_drain<R: std::ops::RangeBounds<Idx>>(self, range: R) -> Self::Iter;
}

impl<'data, T: Send> ParallelDrainRange<usize> for &'data mut Vec<T> {
    type Iter = Drain<'data, T>;
    type Item = T;
    fn par_drain<R: std::ops::RangeBounds<usize>>(self, range: R) -> Drain<'data, T> {
        let orig_len = self.len();
        let range = resolve_range(range, orig_len, "vector");
        Drain {
            vec: self,
            range,
            orig_len,
        }
    }
}

/// The bounds of `range` within `0..len`, where `len` is the length of the `what`
/// (named in the panic message) being drained.
///
/// # Panics
/// As `Vec::drain`: if the start is past the end or the end past `len`.
pub(crate) fn resolve_range(
    range: impl std::ops::RangeBounds<usize>,
    len: usize,
    what: &str,
) -> std::ops::Range<usize> {
    use std::ops::Bound;
    let start = match range.start_bound() {
        Bound::Included(&n) => n,
        Bound::Excluded(&n) => n.checked_add(1).expect("range start overflows usize"),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&n) => n.checked_add(1).expect("range end overflows usize"),
        Bound::Excluded(&n) => n,
        Bound::Unbounded => len,
    };
    assert!(start <= end, "range start {start} is past its end {end}");
    assert!(
        end <= len,
        "range end {end} is past the {what}'s length {len}"
    );
    start..end
}

/// A parallel iterator that moves the items of a range out of a vector in place
/// (from [`par_drain`](ParallelDrainRange::par_drain) on a `Vec`), as Rayon's does: the
/// items move straight from the vector's buffer into the loop, and when the iterator is
/// done (or dropped unused, or a closure panicked) the items after the range move down
/// to close the gap.
///
/// If the iterator is leaked (`mem::forget`) before it ran, the vector keeps all its
/// items.
///
/// ```
/// use sumac::prelude::*;
/// let mut v: Vec<String> = (0..6).map(|i| i.to_string()).collect();
/// let drain: sumac::vec::Drain<'_, String> = v.par_drain(1..4);
/// assert_eq!(drain.len(), 3);
/// assert_eq!(drain.map(|s| s.len()).sum::<usize>(), 3);
/// assert_eq!(v, ["0", "4", "5"]);
/// ```
#[derive(Debug)]
pub struct Drain<'data, T: Send> {
    vec: &'data mut Vec<T>,
    range: std::ops::Range<usize>,
    orig_len: usize,
}

impl<T: Send> ParallelIterator for Drain<'_, T> {
    type Item = T;
    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        drive_indexed(self, consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.range.len())
    }
}

impl<T: Send> IndexedParallelIterator for Drain<'_, T> {
    fn len(&self) -> usize {
        self.range.len()
    }
    fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
        let std::ops::Range { start, end } = self.range;
        // SAFETY: `resolve_range` checked `start <= end <= orig_len == vec.len()`. The
        // length is set to `start` first, so the vector no longer owns the items from
        // `start` on: those in the range belong to the producer, which moves each out
        // or drops it exactly once; those after it are moved down by `Drain::drop`,
        // which runs when this function returns or unwinds (the producer, which borrows
        // the range's slots, is gone by then).
        let items = unsafe {
            self.vec.set_len(start);
            std::slice::from_raw_parts_mut(self.vec.as_mut_ptr().add(start), end - start)
        };
        callback.callback(DrainProducer { items })
    }
}

impl<T: Send> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        let std::ops::Range { start, end } = self.range;
        if self.vec.len() == self.orig_len {
            // Never run (or an empty range at the end): drop the range's items the way
            // `Vec::drain` does.
            self.vec.drain(start..end);
            return;
        }
        debug_assert_eq!(self.vec.len(), start, "the producer owned the range");
        let tail = self.orig_len - end;
        // SAFETY: the vector counts only `..start`; the range's slots were emptied by
        // the producer (every item moved out or dropped), and `end..orig_len` still
        // holds the tail, which moves down to `start` (`ptr::copy` allows the overlap)
        // and is counted again.
        unsafe {
            let base = self.vec.as_mut_ptr();
            ptr::copy(base.add(end), base.add(start), tail);
            self.vec.set_len(start + tail);
        }
    }
}

impl<T: Send> ParallelIterator for IntoIter<T> {
    type Item = T;
    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        drive_indexed(self, consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.vec.len())
    }
}

impl<T: Send> IndexedParallelIterator for IntoIter<T> {
    fn len(&self) -> usize {
        self.vec.len()
    }
    fn with_producer<CB: ProducerCallback<T>>(mut self, callback: CB) -> CB::Output {
        // Drain every item in place; the vector (now empty) frees its buffer afterwards.
        self.vec.par_drain(..).with_producer(callback)
    }
}

/// Owns the items in `items` (the slice memory belongs to a vector that no longer
/// counts them): each is moved out by the iterator or dropped with the producer.
pub(crate) struct DrainProducer<'data, T> {
    items: &'data mut [T],
}

impl<T> Drop for DrainProducer<'_, T> {
    fn drop(&mut self) {
        let items: *mut [T] = mem::take::<&mut [T]>(&mut self.items);
        // SAFETY: the producer owns these items and none was moved out yet (moving out
        // goes through `into_iter`, which takes the slice away first).
        unsafe { ptr::drop_in_place(items) };
    }
}

impl<'data, T: Send> Producer for DrainProducer<'data, T> {
    type Item = T;
    type IntoIter = SliceDrain<'data, T>;
    fn into_iter(mut self) -> SliceDrain<'data, T> {
        let items = mem::take(&mut self.items);
        SliceDrain {
            iter: items.iter_mut(),
        }
    }
    fn split_at(mut self, index: usize) -> (Self, Self) {
        let items = mem::take(&mut self.items);
        let (l, r) = items.split_at_mut(index);
        (DrainProducer { items: l }, DrainProducer { items: r })
    }
}

/// Moves the items out of an owned slice; the ones never reached are dropped with it.
pub(crate) struct SliceDrain<'data, T> {
    iter: std::slice::IterMut<'data, T>,
}

impl<T> Iterator for SliceDrain<'_, T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        let slot: *mut T = self.iter.next()?;
        // SAFETY: each slot is visited once; the iterator owns the item and, having moved
        // past it, never reads or drops it again.
        Some(unsafe { slot.read() })
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.iter.size_hint()
    }
}

impl<T> DoubleEndedIterator for SliceDrain<'_, T> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        let slot: *mut T = self.iter.next_back()?;
        // SAFETY: as in `next`, each slot is visited once.
        Some(unsafe { slot.read() })
    }
}

impl<T> ExactSizeIterator for SliceDrain<'_, T> {}

impl<T> Drop for SliceDrain<'_, T> {
    fn drop(&mut self) {
        let rest: *mut [T] = mem::take(&mut self.iter).into_slice();
        // SAFETY: the slots not yet visited still hold items owned by this iterator.
        unsafe { ptr::drop_in_place(rest) };
    }
}

/// The contents of a collection that is a `Vec` inside (a `VecDeque`, a `BinaryHeap`),
/// taken out as that `Vec` without copying; dropping it (also while unwinding) puts the
/// `Vec`, with whatever is left in it, back into the collection.
pub(super) struct AsVec<'a, C, T>
where
    C: Default + From<Vec<T>>,
    Vec<T>: From<C>,
{
    collection: &'a mut C,
    pub(super) vec: Vec<T>,
}

impl<'a, C, T> AsVec<'a, C, T>
where
    C: Default + From<Vec<T>>,
    Vec<T>: From<C>,
{
    pub(super) fn take(collection: &'a mut C) -> Self {
        let vec = Vec::from(mem::take(collection));
        AsVec { collection, vec }
    }
}

impl<C, T> Drop for AsVec<'_, C, T>
where
    C: Default + From<Vec<T>>,
    Vec<T>: From<C>,
{
    fn drop(&mut self) {
        *self.collection = C::from(mem::take(&mut self.vec));
    }
}
