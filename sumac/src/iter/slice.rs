//! Parallel iterators over slices: shared and mutable items, chunks and windows.
//!
//! ```
//! use sumac::prelude::*;
//! let mut v = vec![1, 2, 3, 4, 5];
//! v.par_iter_mut().for_each(|x| *x += 1);
//! let sums: Vec<i32> = v.par_chunks(2).map(|c| c.iter().sum()).collect();
//! assert_eq!(sums, [5, 9, 6]);
//! ```

use super::plumbing::{bridge, Consumer, Producer, ProducerCallback};
use super::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

/// Implements `ParallelIterator` + `IndexedParallelIterator` for a slice iterator whose
/// producer is built by `$make` from `self`.
macro_rules! slice_iterator {
    (impl<$lt:lifetime, T: $bound:ident> $ty:ty, item = $item:ty, len = |$s:ident| $len:expr,
     producer = |$p:ident| $make:expr) => {
        impl<$lt, T: $bound + $lt> ParallelIterator for $ty {
            type Item = $item;
            fn drive_unindexed<C: Consumer<$item>>(self, consumer: C) -> C::Result {
                let $p = self;
                bridge($make, consumer)
            }
            fn opt_len(&self) -> Option<usize> {
                Some(IndexedParallelIterator::len(self))
            }
        }

        impl<$lt, T: $bound + $lt> IndexedParallelIterator for $ty {
            fn len(&self) -> usize {
                let $s = self;
                $len
            }
            fn with_producer<CB: ProducerCallback<$item>>(self, callback: CB) -> CB::Output {
                let $p = self;
                callback.callback($make)
            }
        }
    };
}

// --------------------------------------------------------------------------- &[T]

/// A parallel iterator over `&T` (from `par_iter()` on a slice or vector).
#[derive(Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Iter<'data, T> {
    slice: &'data [T],
}

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter { slice: self.slice }
    }
}

slice_iterator!(impl<'data, T: Sync> Iter<'data, T>, item = &'data T,
    len = |s| s.slice.len(), producer = |p| SliceProducer { slice: p.slice });

struct SliceProducer<'data, T> {
    slice: &'data [T],
}

impl<'data, T: Sync> Producer for SliceProducer<'data, T> {
    type Item = &'data T;
    type IntoIter = std::slice::Iter<'data, T>;
    #[inline]
    fn len(&self) -> usize {
        self.slice.len()
    }
    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        self.slice.iter()
    }
    #[inline]
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.slice.split_at(index);
        (SliceProducer { slice: l }, SliceProducer { slice: r })
    }
}

impl<'data, T: Sync + 'data> IntoParallelIterator for &'data [T] {
    type Iter = Iter<'data, T>;
    type Item = &'data T;
    fn into_par_iter(self) -> Iter<'data, T> {
        Iter { slice: self }
    }
}

impl<'data, T: Sync + 'data> IntoParallelIterator for &'data Vec<T> {
    type Iter = Iter<'data, T>;
    type Item = &'data T;
    fn into_par_iter(self) -> Iter<'data, T> {
        Iter { slice: self }
    }
}

impl<'data, T: Sync + 'data, const N: usize> IntoParallelIterator for &'data [T; N] {
    type Iter = Iter<'data, T>;
    type Item = &'data T;
    fn into_par_iter(self) -> Iter<'data, T> {
        Iter { slice: self }
    }
}

// ----------------------------------------------------------------------- &mut [T]

/// A parallel iterator over `&mut T` (from `par_iter_mut()` on a slice or vector).
#[derive(Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct IterMut<'data, T> {
    slice: &'data mut [T],
}

slice_iterator!(impl<'data, T: Send> IterMut<'data, T>, item = &'data mut T,
    len = |s| s.slice.len(), producer = |p| SliceMutProducer { slice: p.slice });

struct SliceMutProducer<'data, T> {
    slice: &'data mut [T],
}

impl<'data, T: Send> Producer for SliceMutProducer<'data, T> {
    type Item = &'data mut T;
    type IntoIter = std::slice::IterMut<'data, T>;
    #[inline]
    fn len(&self) -> usize {
        self.slice.len()
    }
    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        self.slice.iter_mut()
    }
    #[inline]
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.slice.split_at_mut(index);
        (SliceMutProducer { slice: l }, SliceMutProducer { slice: r })
    }
}

impl<'data, T: Send + 'data> IntoParallelIterator for &'data mut [T] {
    type Iter = IterMut<'data, T>;
    type Item = &'data mut T;
    fn into_par_iter(self) -> IterMut<'data, T> {
        IterMut { slice: self }
    }
}

impl<'data, T: Send + 'data> IntoParallelIterator for &'data mut Vec<T> {
    type Iter = IterMut<'data, T>;
    type Item = &'data mut T;
    fn into_par_iter(self) -> IterMut<'data, T> {
        IterMut { slice: self }
    }
}

impl<'data, T: Send + 'data, const N: usize> IntoParallelIterator for &'data mut [T; N] {
    type Iter = IterMut<'data, T>;
    type Item = &'data mut T;
    fn into_par_iter(self) -> IterMut<'data, T> {
        IterMut { slice: self }
    }
}

// ------------------------------------------------------------------------- chunks

/// A parallel iterator over non-overlapping `&[T]` chunks (from
/// [`par_chunks`](crate::slice::ParallelSlice::par_chunks)); the last one may be shorter.
#[derive(Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Chunks<'data, T> {
    size: usize,
    slice: &'data [T],
}

impl<T> Clone for Chunks<'_, T> {
    fn clone(&self) -> Self {
        Chunks {
            size: self.size,
            slice: self.slice,
        }
    }
}

impl<'data, T> Chunks<'data, T> {
    pub(crate) fn new(slice: &'data [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must not be zero");
        Chunks { size, slice }
    }
}

slice_iterator!(impl<'data, T: Sync> Chunks<'data, T>, item = &'data [T],
    len = |s| s.slice.len().div_ceil(s.size),
    producer = |p| ChunksProducer { size: p.size, slice: p.slice });

struct ChunksProducer<'data, T> {
    size: usize,
    slice: &'data [T],
}

impl<'data, T: Sync> Producer for ChunksProducer<'data, T> {
    type Item = &'data [T];
    type IntoIter = std::slice::Chunks<'data, T>;
    fn len(&self) -> usize {
        self.slice.len().div_ceil(self.size)
    }
    fn into_iter(self) -> Self::IntoIter {
        self.slice.chunks(self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = index.saturating_mul(self.size).min(self.slice.len());
        let (l, r) = self.slice.split_at(at);
        (
            ChunksProducer {
                size: self.size,
                slice: l,
            },
            ChunksProducer {
                size: self.size,
                slice: r,
            },
        )
    }
}

/// A parallel iterator over non-overlapping `&mut [T]` chunks (from
/// [`par_chunks_mut`](crate::slice::ParallelSliceMut::par_chunks_mut)); the last one may
/// be shorter.
#[derive(Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct ChunksMut<'data, T> {
    size: usize,
    slice: &'data mut [T],
}

impl<'data, T> ChunksMut<'data, T> {
    pub(crate) fn new(slice: &'data mut [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must not be zero");
        ChunksMut { size, slice }
    }
}

slice_iterator!(impl<'data, T: Send> ChunksMut<'data, T>, item = &'data mut [T],
    len = |s| s.slice.len().div_ceil(s.size),
    producer = |p| ChunksMutProducer { size: p.size, slice: p.slice });

struct ChunksMutProducer<'data, T> {
    size: usize,
    slice: &'data mut [T],
}

impl<'data, T: Send> Producer for ChunksMutProducer<'data, T> {
    type Item = &'data mut [T];
    type IntoIter = std::slice::ChunksMut<'data, T>;
    fn len(&self) -> usize {
        self.slice.len().div_ceil(self.size)
    }
    fn into_iter(self) -> Self::IntoIter {
        self.slice.chunks_mut(self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = index.saturating_mul(self.size).min(self.slice.len());
        let (l, r) = self.slice.split_at_mut(at);
        (
            ChunksMutProducer {
                size: self.size,
                slice: l,
            },
            ChunksMutProducer {
                size: self.size,
                slice: r,
            },
        )
    }
}

// ------------------------------------------------------------------------ windows

/// A parallel iterator over overlapping windows of `size` items (from
/// [`par_windows`](crate::slice::ParallelSlice::par_windows)).
#[derive(Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Windows<'data, T> {
    size: usize,
    slice: &'data [T],
}

impl<T> Clone for Windows<'_, T> {
    fn clone(&self) -> Self {
        Windows {
            size: self.size,
            slice: self.slice,
        }
    }
}

impl<'data, T> Windows<'data, T> {
    pub(crate) fn new(slice: &'data [T], size: usize) -> Self {
        assert!(size != 0, "window size must not be zero");
        Windows { size, slice }
    }
}

slice_iterator!(impl<'data, T: Sync> Windows<'data, T>, item = &'data [T],
    len = |s| s.slice.len().saturating_sub(s.size - 1),
    producer = |p| WindowsProducer { size: p.size, slice: p.slice });

struct WindowsProducer<'data, T> {
    size: usize,
    slice: &'data [T],
}

impl<'data, T: Sync> Producer for WindowsProducer<'data, T> {
    type Item = &'data [T];
    type IntoIter = std::slice::Windows<'data, T>;
    fn len(&self) -> usize {
        self.slice.len().saturating_sub(self.size - 1)
    }
    fn into_iter(self) -> Self::IntoIter {
        self.slice.windows(self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let left_end = (index + self.size - 1).min(self.slice.len());
        let right_start = index.min(self.slice.len());
        (
            WindowsProducer {
                size: self.size,
                slice: &self.slice[..left_end],
            },
            WindowsProducer {
                size: self.size,
                slice: &self.slice[right_start..],
            },
        )
    }
}
