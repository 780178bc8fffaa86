//! `par_drain` on a `BinaryHeap<T>`: moves every item out in place, as Rayon's does.
//!
//! A heap already is a `Vec` in a particular order. When the drain runs, it takes the
//! heap's buffer as a `Vec` (`BinaryHeap::into_vec`, no copy), drains all of it through
//! the in-place [`vec::Drain`](crate::vec::Drain), and puts the emptied buffer back into
//! the heap, capacity and all, also when a closure panics. Before, the items were first
//! gathered into a new `Vec` one by one, on one thread.
//!
//! ```
//! use std::collections::BinaryHeap;
//! use sumac::prelude::*;
//!
//! let mut heap: BinaryHeap<u64> = (1..=1000).collect();
//! let capacity = heap.capacity();
//! let sum: u64 = heap.par_drain().sum();
//! assert_eq!(sum, 500_500);
//! assert!(heap.is_empty());
//! assert_eq!(heap.capacity(), capacity);
//! ```

use std::collections::BinaryHeap;

use super::plumbing::{ProducerCallback, UnindexedConsumer};
use super::vec::AsVec;
use super::{
    drive_indexed, IndexedParallelIterator, ParallelDrainFull, ParallelDrainRange, ParallelIterator,
};

impl<'a, T: Ord + Send> ParallelDrainFull for &'a mut BinaryHeap<T> {
    type Iter = Drain<'a, T>;
    type Item = T;
    fn par_drain(self) -> Drain<'a, T> {
        Drain { heap: self }
    }
}

/// A parallel iterator that moves every item out of a `BinaryHeap`, in the heap's
/// internal (unspecified) order (from
/// [`par_drain`](crate::iter::ParallelDrainFull::par_drain) on a heap), as Rayon's does:
/// an indexed iterator, split anywhere at no cost, that leaves the heap empty with its
/// capacity. Items the loop does not use are dropped; if the iterator is leaked
/// (`mem::forget`) before it ran, the heap keeps all its items.
///
/// ```
/// use std::collections::BinaryHeap;
/// use sumac::prelude::*;
///
/// let mut heap: BinaryHeap<u32> = [4, 8, 15, 16, 23, 42].into_iter().collect();
/// let drain: sumac::collections::binary_heap::Drain<'_, u32> = heap.par_drain();
/// assert_eq!(drain.len(), 6);
/// let mut items: Vec<u32> = drain.with_max_len(1).collect();
/// items.sort();
/// assert_eq!(items, [4, 8, 15, 16, 23, 42]);
/// assert!(heap.is_empty());
/// ```
#[derive(Debug)]
pub struct Drain<'a, T: Ord + Send> {
    heap: &'a mut BinaryHeap<T>,
}

impl<T: Ord + Send> ParallelIterator for Drain<'_, T> {
    type Item = T;
    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        drive_indexed(self, consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.heap.len())
    }
}

impl<T: Ord + Send> IndexedParallelIterator for Drain<'_, T> {
    fn len(&self) -> usize {
        self.heap.len()
    }
    fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
        let mut contents = AsVec::take(&mut *self.heap);
        // The `Vec` drain removes every item when it returns or unwinds; then `contents`
        // puts the empty buffer back into the heap (rebuilding the heap order of no
        // items), and `self`'s drop finds it empty.
        contents.vec.par_drain(..).with_producer(callback)
    }
}

impl<T: Ord + Send> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        // Never run: drop the items, as `BinaryHeap::drain` does (a no-op once run).
        self.heap.clear();
    }
}
