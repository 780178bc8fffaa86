//! Collecting into vectors: in place for iterators of known length, through a list of
//! per-piece vectors otherwise.

use std::collections::LinkedList;
use std::marker::PhantomData;
use std::mem;
use std::ptr;

use super::plumbing::{Consumer, Folder, Reducer, UnindexedConsumer};
use super::ParallelIterator;

/// Collects exactly `len` items of `iter` (whose `opt_len` is `Some(len)`) into the spare
/// capacity of `vec`, in order, and appends them.
///
/// # Panics
/// If the iterator does not produce exactly `len` items, or a closure panics; in both
/// cases the items written so far are dropped and `vec` keeps its old contents.
pub(crate) fn collect_with_len<I>(iter: I, len: usize, vec: &mut Vec<I::Item>)
where
    I: ParallelIterator,
{
    vec.reserve(len);
    let old_len = vec.len();
    // SAFETY: `reserve` made room for `len` more items, so `old_len` is within (or one past)
    // the allocation; the pointer keeps the provenance of the whole buffer.
    let start = unsafe { vec.as_mut_ptr().add(old_len) };
    let consumer = CollectConsumer::<I::Item> {
        start: SendPtr(start),
        len,
        marker: PhantomData,
    };
    let result = iter.drive_unindexed(consumer);
    let written = result.initialized;
    assert!(
        written == len,
        "parallel iterator promised {len} items but produced {written}"
    );
    // The items now belong to the vector.
    mem::forget(result);
    // SAFETY: the `len` slots after `old_len` were all initialised, in order (`written ==
    // len` and the pieces were contiguous, see `CollectReducer`), within the capacity.
    unsafe { vec.set_len(old_len + len) };
}

/// A raw pointer that may cross threads: each piece writes a disjoint window.
struct SendPtr<T>(*mut T);

impl<T> Clone for SendPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SendPtr<T> {}

// SAFETY: the pointer is only used to write items of type `T` (moved from the piece that
// produced them) into a window owned by exactly one piece; that is sound when `T: Send`.
unsafe impl<T: Send> Send for SendPtr<T> {}

/// A consumer owning a window of `len` uninitialised slots starting at `start`.
struct CollectConsumer<'c, T> {
    start: SendPtr<T>,
    len: usize,
    marker: PhantomData<&'c mut [T]>,
}

/// The folder and result of a [`CollectConsumer`]: the first `initialized` slots of the
/// window hold items, owned by this value (dropped with it unless merged or forgotten).
pub(crate) struct CollectResult<'c, T> {
    start: SendPtr<T>,
    total: usize,
    initialized: usize,
    marker: PhantomData<&'c mut [T]>,
}

impl<T> Drop for CollectResult<'_, T> {
    fn drop(&mut self) {
        let items = ptr::slice_from_raw_parts_mut(self.start.0, self.initialized);
        // SAFETY: the first `initialized` slots of the window were written by this piece and
        // are owned by this value alone (merging or handing them on forgets the value).
        unsafe { ptr::drop_in_place(items) };
    }
}

impl<'c, T: Send> Consumer<T> for CollectConsumer<'c, T> {
    type Folder = CollectResult<'c, T>;
    type Reducer = CollectReducer;
    type Result = CollectResult<'c, T>;
    const DETACHES: bool = true;

    fn split_at(self, index: usize) -> (Self, Self, CollectReducer) {
        assert!(index <= self.len, "collect window split out of bounds");
        // SAFETY: `index <= len`, so the result stays within (or one past) the window.
        let right = unsafe { self.start.0.add(index) };
        (
            CollectConsumer {
                start: self.start,
                len: index,
                marker: PhantomData,
            },
            CollectConsumer {
                start: SendPtr(right),
                len: self.len - index,
                marker: PhantomData,
            },
            CollectReducer,
        )
    }

    fn into_folder(self) -> Self::Folder {
        CollectResult {
            start: self.start,
            total: self.len,
            initialized: 0,
            marker: PhantomData,
        }
    }

    fn detach(folder: Self::Folder, _consumed: usize) -> (Self::Result, Self, CollectReducer) {
        let done = folder.initialized;
        // SAFETY: `done <= total`, so the pointer stays within (or one past) the window.
        let rest_start = unsafe { folder.start.0.add(done) };
        let rest = CollectConsumer {
            start: SendPtr(rest_start),
            len: folder.total - done,
            marker: PhantomData,
        };
        // The prefix result keeps the written items and gives up the unwritten slots.
        let prefix = CollectResult {
            start: folder.start,
            total: done,
            initialized: done,
            marker: PhantomData,
        };
        mem::forget(folder);
        (prefix, rest, CollectReducer)
    }
}

impl<'c, T: Send> UnindexedConsumer<T> for CollectConsumer<'c, T> {
    /// # Panics
    /// Always: collecting in place needs positions, so it is only handed to iterators
    /// whose [`opt_len`](ParallelIterator::opt_len) is `Some`, which must split it by
    /// position (Rayon's contract, which panics the same way).
    fn split_off_left(&self) -> Self {
        panic!("collect into a Vec: an iterator with an exact length split its consumer without a position")
    }

    fn to_reducer(&self) -> CollectReducer {
        CollectReducer
    }
}

impl<T> Folder<T> for CollectResult<'_, T> {
    type Result = Self;

    #[inline]
    fn consume(mut self, item: T) -> Self {
        assert!(
            self.initialized < self.total,
            "parallel iterator produced more items than it promised"
        );
        // SAFETY: `initialized < total`: the slot is inside this piece's window and not yet
        // written; writing it does not drop anything.
        unsafe { self.start.0.add(self.initialized).write(item) };
        self.initialized += 1;
        self
    }

    #[inline]
    fn consume_iter<I: IntoIterator<Item = T>>(mut self, iter: I) -> Self {
        for item in iter {
            self = self.consume(item);
        }
        self
    }

    fn complete(self) -> Self {
        self
    }
}

/// Merges the results of adjacent windows.
pub(crate) struct CollectReducer;

impl<'c, T> Reducer<CollectResult<'c, T>> for CollectReducer {
    fn reduce(
        self,
        mut left: CollectResult<'c, T>,
        right: CollectResult<'c, T>,
    ) -> CollectResult<'c, T> {
        // The items are contiguous only if the left window was filled completely and the
        // right window starts where it ends. sumac's own drivers reduce adjacent pieces in
        // order, but a hand-written iterator (`iter::plumbing`) may reduce them out of
        // order or leave one out, and a merged result would then claim, and drop, slots
        // that another piece owns: checked in every build. (Zero-sized items all share
        // one address and have no slots to claim.)
        if left.initialized == left.total && left.start.0.wrapping_add(left.total) == right.start.0
        {
            left.total += right.total;
            left.initialized += right.initialized;
            mem::forget(right);
        }
        // Otherwise `right` is dropped here (its items with it) and the count check of
        // `collect_with_len` fails.
        left
    }
}

// ---------------------------------------------------------------- unindexed collect

/// Collects every piece into its own `Vec`, returned as an ordered list.
pub(crate) fn collect_list<I>(iter: I) -> LinkedList<Vec<I::Item>>
where
    I: ParallelIterator,
{
    iter.drive_unindexed(ListConsumer(PhantomData))
}

/// Concatenates a list of vectors (without copying when there is only one).
pub(crate) fn concat<T>(mut list: LinkedList<Vec<T>>) -> Vec<T> {
    if list.len() == 1 {
        return list.pop_front().unwrap_or_default();
    }
    let total = list.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(total);
    for mut v in list {
        out.append(&mut v);
    }
    out
}

pub(crate) struct ListConsumer<T>(PhantomData<fn() -> T>);

pub(crate) struct ListFolder<T>(Vec<T>);

pub(crate) struct ListReducer;

impl<T> Reducer<LinkedList<T>> for ListReducer {
    fn reduce(self, mut left: LinkedList<T>, mut right: LinkedList<T>) -> LinkedList<T> {
        left.append(&mut right);
        left
    }
}

impl<T: Send> Consumer<T> for ListConsumer<T> {
    type Folder = ListFolder<T>;
    type Reducer = ListReducer;
    type Result = LinkedList<Vec<T>>;
    const DETACHES: bool = true;
    fn split_at(self, _index: usize) -> (Self, Self, ListReducer) {
        (ListConsumer(PhantomData), self, ListReducer)
    }
    fn into_folder(self) -> ListFolder<T> {
        ListFolder(Vec::new())
    }
    fn detach(folder: ListFolder<T>, _consumed: usize) -> (Self::Result, Self, ListReducer) {
        (folder.complete(), ListConsumer(PhantomData), ListReducer)
    }
}

impl<T: Send> UnindexedConsumer<T> for ListConsumer<T> {
    fn split_off_left(&self) -> Self {
        ListConsumer(PhantomData)
    }
    fn to_reducer(&self) -> ListReducer {
        ListReducer
    }
}

impl<T> Folder<T> for ListFolder<T> {
    type Result = LinkedList<Vec<T>>;
    fn consume(mut self, item: T) -> Self {
        self.0.push(item);
        self
    }
    #[inline]
    fn consume_iter<I: IntoIterator<Item = T>>(mut self, iter: I) -> Self {
        self.0.extend(iter);
        self
    }
    fn complete(self) -> LinkedList<Vec<T>> {
        let mut list = LinkedList::new();
        if !self.0.is_empty() {
            list.push_back(self.0);
        }
        list
    }
}
