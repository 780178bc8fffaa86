//! `par_drain` on a `VecDeque<T>`: drains a range in place, as Rayon's does.
//!
//! A deque's buffer may wrap around, so its items are not one slice. When the drain runs,
//! it takes the deque's contents as a `Vec` (`Vec::from(VecDeque)` never reallocates; it
//! moves the items to the start of the buffer if they are not there already), drains the
//! range of that `Vec` in place through [`vec::Drain`](crate::vec::Drain), and puts the
//! `Vec` back into the deque (`VecDeque::from(Vec)`, again without reallocating), also
//! when a closure panics.
//!
//! ```
//! use std::collections::VecDeque;
//! use sumac::prelude::*;
//!
//! let mut queue: VecDeque<u32> = (1..=8).collect();
//! queue.push_front(0); // the buffer now wraps around
//! let odd: Vec<u32> = queue.par_drain(1..6).filter(|x| x % 2 == 1).collect();
//! assert_eq!(odd, [1, 3, 5]);
//! assert_eq!(queue, [0, 6, 7, 8]);
//! ```

use std::collections::VecDeque;
use std::ops::{Range, RangeBounds};

use super::plumbing::{ProducerCallback, UnindexedConsumer};
use super::vec::{resolve_range, AsVec, ParallelDrainRange};
use super::{drive_indexed, IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

impl<'a, T: Send> ParallelDrainRange<usize> for &'a mut VecDeque<T> {
    type Iter = Drain<'a, T>;
    type Item = T;
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> Drain<'a, T> {
        let orig_len = self.len();
        let range = resolve_range(range, orig_len, "deque");
        Drain {
            deque: self,
            range,
            orig_len,
        }
    }
}

/// A parallel iterator that moves the items of a range out of a `VecDeque` in place
/// (from [`par_drain`](crate::iter::ParallelDrainRange::par_drain) on a deque), as
/// Rayon's does: an indexed iterator, split anywhere at no cost.
///
/// When it runs over at least a quarter of the deque, the deque's items are first made
/// contiguous at the start of its buffer (a move of the items in place, only if they are
/// not there already); then the range's items move straight from the buffer into the
/// loop, and when the iterator is done (or dropped unused, or a closure panicked) the
/// items after the range move down to close the gap. A smaller range is moved out into a
/// `Vec` first (as `VecDeque::drain` moves it, shifting the shorter side of the deque),
/// so that draining a long queue a small batch at a time does not move the whole queue
/// each time. If the iterator is leaked (`mem::forget`) before it ran, the deque keeps
/// all its items.
///
/// ```
/// use std::collections::VecDeque;
/// use sumac::prelude::*;
///
/// let mut queue: VecDeque<String> = (0..6).map(|i| i.to_string()).collect();
/// queue.push_front("front".to_string());
/// let drain: sumac::collections::vec_deque::Drain<'_, String> = queue.par_drain(..3);
/// assert_eq!(drain.len(), 3);
/// assert_eq!(drain.rev().collect::<Vec<_>>(), ["1", "0", "front"]);
/// assert_eq!(queue, ["2", "3", "4", "5"]);
/// ```
#[derive(Debug)]
pub struct Drain<'a, T: Send> {
    deque: &'a mut VecDeque<T>,
    range: Range<usize>,
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
        let range = self.range.clone();
        // Divided rather than multiplied: a deque of zero-sized items may hold up to
        // `usize::MAX` of them.
        if range.len() < self.orig_len / IN_PLACE_SHARE {
            // A small range: moving the whole deque for it would cost more than the
            // drain itself (a queue drained a batch at a time from the front would pay
            // O(len) per batch), so move just the range out, the way `VecDeque::drain`
            // does (it shifts the shorter side), and run over those items.
            let items: Vec<T> = self.deque.drain(range).collect();
            return items.into_par_iter().with_producer(callback);
        }
        let mut contents = AsVec::take(&mut *self.deque);
        // The `Vec` drain closes the gap when it returns or unwinds; then `contents` puts
        // the `Vec` back into the deque, and `self`'s drop sees the range gone.
        contents.vec.par_drain(range).with_producer(callback)
    }
}

/// A range drains in place when it holds at least this fraction (1 / `IN_PLACE_SHARE`)
/// of the deque: then the moves of the whole deque that the in-place drain makes (to
/// make it contiguous, and of the items after the range) are within a small factor of
/// the range's own. Below it, the range's items are moved out into a `Vec` first.
const IN_PLACE_SHARE: usize = 4;

impl<T: Send> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        if self.deque.len() == self.orig_len {
            // Never run (or an empty range): drop the range's items the way
            // `VecDeque::drain` does.
            self.deque.drain(self.range.clone());
        } else {
            debug_assert_eq!(self.deque.len(), self.orig_len - self.range.len());
        }
    }
}
