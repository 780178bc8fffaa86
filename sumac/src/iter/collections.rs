//! Parallel iterators over the standard collections: `HashMap`, `HashSet`, `BTreeMap`,
//! `BTreeSet`, `BinaryHeap`, `LinkedList` and `VecDeque`, by value, by reference and
//! (where the collection allows it) by mutable reference; and `par_drain()` of all of a
//! `HashMap`, `HashSet` or `BinaryHeap` (a `BinaryHeap` drains its buffer in place, see
//! [`binary_heap::Drain`](crate::collections::binary_heap::Drain); a `VecDeque` drains a
//! range, in place: see [`vec_deque::Drain`](crate::collections::vec_deque::Drain)).
//!
//! A `VecDeque` is two slices, so its reference iterators are a chain of two slice
//! iterators: indexed, split anywhere at no cost. The other collections cannot be split
//! without walking them, so their items (or references to them) are first gathered into
//! a `Vec` in the collection's own order, in one sequential pass, and the loop runs over
//! that `Vec` (Rayon does the same). Ordered collections therefore keep their order in
//! `collect`, `find_first` and `reduce`.
//!
//! ```
//! use std::collections::{BTreeMap, HashMap, VecDeque};
//! use sumac::prelude::*;
//!
//! let ages: HashMap<&str, u32> = [("ann", 31), ("bob", 27)].into_iter().collect();
//! assert_eq!(ages.par_iter().map(|(_, &age)| age).sum::<u32>(), 58);
//!
//! let mut scores: BTreeMap<u32, u32> = (0..10).map(|i| (i, i)).collect();
//! scores.par_iter_mut().for_each(|(_, v)| *v *= 10);
//! let keys: Vec<u32> = scores.into_par_iter().map(|(k, _)| k).collect();
//! assert_eq!(keys, (0..10).collect::<Vec<_>>());
//!
//! let mut queue: VecDeque<i32> = (1..=3).collect();
//! queue.push_front(0);
//! assert_eq!(queue.par_iter().rev().copied().collect::<Vec<_>>(), [3, 2, 1, 0]);
//! ```

use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};

use super::chain::Chain;
use super::{slice, vec, IntoParallelIterator, ParallelIterator};

/// Implements `IntoParallelIterator` for collections whose items are gathered into a
/// `Vec` first.
macro_rules! via_vec {
    ($(impl[$($g:tt)*] $coll:ty => $item:ty;)*) => {$(
        impl<$($g)*> IntoParallelIterator for $coll {
            type Iter = vec::IntoIter<$item>;
            type Item = $item;
            fn into_par_iter(self) -> Self::Iter {
                self.into_iter().collect::<Vec<_>>().into_par_iter()
            }
        }
    )*};
}

via_vec! {
    impl[K: Send, V: Send, S] HashMap<K, V, S> => (K, V);
    impl['a, K: Sync, V: Sync, S] &'a HashMap<K, V, S> => (&'a K, &'a V);
    impl['a, K: Sync, V: Send, S] &'a mut HashMap<K, V, S> => (&'a K, &'a mut V);
    impl[T: Send, S] HashSet<T, S> => T;
    impl['a, T: Sync, S] &'a HashSet<T, S> => &'a T;
    impl[K: Send, V: Send] BTreeMap<K, V> => (K, V);
    impl['a, K: Sync, V: Sync] &'a BTreeMap<K, V> => (&'a K, &'a V);
    impl['a, K: Sync, V: Send] &'a mut BTreeMap<K, V> => (&'a K, &'a mut V);
    impl[T: Send] BTreeSet<T> => T;
    impl['a, T: Sync] &'a BTreeSet<T> => &'a T;
    impl['a, T: Sync] &'a BinaryHeap<T> => &'a T;
    impl[T: Send] LinkedList<T> => T;
    impl['a, T: Sync] &'a LinkedList<T> => &'a T;
    impl['a, T: Send] &'a mut LinkedList<T> => &'a mut T;
}

/// The heap's items in its internal (unspecified) order, without gathering: the heap
/// already is a `Vec`.
impl<T: Send> IntoParallelIterator for BinaryHeap<T> {
    type Iter = vec::IntoIter<T>;
    type Item = T;
    fn into_par_iter(self) -> Self::Iter {
        self.into_vec().into_par_iter()
    }
}

/// The deque's items front to back (turning it into a `Vec` moves the items into one
/// contiguous run, in place).
impl<T: Send> IntoParallelIterator for VecDeque<T> {
    type Iter = vec::IntoIter<T>;
    type Item = T;
    fn into_par_iter(self) -> Self::Iter {
        Vec::from(self).into_par_iter()
    }
}

impl<'a, T: Sync> IntoParallelIterator for &'a VecDeque<T> {
    type Iter = Chain<slice::Iter<'a, T>, slice::Iter<'a, T>>;
    type Item = &'a T;
    fn into_par_iter(self) -> Self::Iter {
        let (front, back) = self.as_slices();
        Chain::new(front.into_par_iter(), back.into_par_iter())
    }
}

impl<'a, T: Send> IntoParallelIterator for &'a mut VecDeque<T> {
    type Iter = Chain<slice::IterMut<'a, T>, slice::IterMut<'a, T>>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> Self::Iter {
        let (front, back) = self.as_mut_slices();
        Chain::new(front.into_par_iter(), back.into_par_iter())
    }
}

/// `par_drain()` on the collections that can only be drained whole: removes every item
/// at once and returns a parallel iterator that owns them (items it does not yield are
/// dropped with it). A hash map's or set's items are gathered into a `Vec` first, in the
/// collection's own order; a heap's buffer is drained in place.
///
/// ```
/// use std::collections::HashMap;
/// use sumac::prelude::*;
/// let mut ages: HashMap<&str, u32> = [("ann", 31), ("bob", 27)].into_iter().collect();
/// let total: u32 = ages.par_drain().map(|(_, age)| age).sum();
/// assert_eq!((total, ages.len()), (58, 0));
/// ```
pub trait ParallelDrainFull {
    /// The parallel iterator over the removed items.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// The removed items.
    type Item: Send;
    /// Removes every item and iterates over them in parallel.
    ///
    /// ```
    /// use std::collections::{BinaryHeap, HashSet};
    /// use sumac::prelude::*;
    ///
    /// let mut heap: BinaryHeap<u32> = [5, 1, 9, 3].into_iter().collect();
    /// let mut drained: Vec<u32> = heap.par_drain().collect();
    /// drained.sort();
    /// assert_eq!(drained, [1, 3, 5, 9]);
    /// assert!(heap.is_empty());
    ///
    /// // Items the loop does not use are dropped, not put back.
    /// let mut seen: HashSet<u32> = (0..50).collect();
    /// assert!(seen.par_drain().any(|x| x == 7));
    /// assert!(seen.is_empty());
    /// ```
    fn par_drain(self) -> Self::Iter;
}

/// Implements [`ParallelDrainFull`] by gathering the drained items into a `Vec`.
macro_rules! drain_full_via_vec {
    ($(impl[$($g:tt)*] $coll:ty => $item:ty;)*) => {$(
        impl<$($g)*> ParallelDrainFull for $coll {
            type Iter = vec::IntoIter<$item>;
            type Item = $item;
            fn par_drain(self) -> Self::Iter {
                self.drain().collect::<Vec<_>>().into_par_iter()
            }
        }
    )*};
}

drain_full_via_vec! {
    impl['a, K: Send, V: Send, S] &'a mut HashMap<K, V, S> => (K, V);
    impl['a, T: Send, S] &'a mut HashSet<T, S> => T;
}
