//! Parallel iterators over slices: shared and mutable items, chunks and windows.
//!
//! ```
//! use sumac::prelude::*;
//! let mut v = vec![1, 2, 3, 4, 5];
//! v.par_iter_mut().for_each(|x| *x += 1);
//! let sums: Vec<i32> = v.par_chunks(2).map(|c| c.iter().sum()).collect();
//! assert_eq!(sums, [5, 9, 6]);
//! ```

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::ops::Range;

use super::plumbing::{bridge, Folder, Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

/// Implements `ParallelIterator` + `IndexedParallelIterator` for a slice iterator whose
/// producer is built by `$make` from `self`.
macro_rules! slice_iterator {
    (impl<$lt:lifetime, T: $bound:ident> $ty:ty, item = $item:ty, len = |$s:ident| $len:expr,
     producer = |$p:ident| $make:expr) => {
        slice_iterator!(impl<$lt, T: $bound> $ty, const, item = $item, len = |$s| $len,
            producer = |$p| $make);
    };
    (impl<$lt:lifetime, T: $bound:ident> $ty:ty, const $($n:ident)?, item = $item:ty,
     len = |$s:ident| $len:expr, producer = |$p:ident| $make:expr) => {
        impl<$lt, T: $bound + $lt $(, const $n: usize)?> ParallelIterator for $ty {
            type Item = $item;
            fn drive_unindexed<C: UnindexedConsumer<$item>>(self, consumer: C) -> C::Result {
                bridge(self, consumer)
            }
            fn opt_len(&self) -> Option<usize> {
                Some(IndexedParallelIterator::len(self))
            }
        }

        impl<$lt, T: $bound + $lt $(, const $n: usize)?> IndexedParallelIterator for $ty {
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

impl<'data, T: Sync + 'data> IntoParallelIterator for &'data Box<[T]> {
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

impl<'data, T: Send + 'data> IntoParallelIterator for &'data mut Box<[T]> {
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

/// A shared or mutable slice, as the chunk producers need it.
trait SliceRef: Send + Sized {
    type Chunks: DoubleEndedIterator<Item = Self> + ExactSizeIterator;
    type RChunks: DoubleEndedIterator<Item = Self> + ExactSizeIterator;
    fn len(&self) -> usize;
    fn split_at(self, at: usize) -> (Self, Self);
    fn chunks(self, size: usize) -> Self::Chunks;
    fn rchunks(self, size: usize) -> Self::RChunks;
}

impl<'data, T: Sync> SliceRef for &'data [T] {
    type Chunks = std::slice::Chunks<'data, T>;
    type RChunks = std::slice::RChunks<'data, T>;
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
    fn split_at(self, at: usize) -> (Self, Self) {
        <[T]>::split_at(self, at)
    }
    fn chunks(self, size: usize) -> Self::Chunks {
        <[T]>::chunks(self, size)
    }
    fn rchunks(self, size: usize) -> Self::RChunks {
        <[T]>::rchunks(self, size)
    }
}

impl<'data, T: Send> SliceRef for &'data mut [T] {
    type Chunks = std::slice::ChunksMut<'data, T>;
    type RChunks = std::slice::RChunksMut<'data, T>;
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
    fn split_at(self, at: usize) -> (Self, Self) {
        <[T]>::split_at_mut(self, at)
    }
    fn chunks(self, size: usize) -> Self::Chunks {
        <[T]>::chunks_mut(self, size)
    }
    fn rchunks(self, size: usize) -> Self::RChunks {
        <[T]>::rchunks_mut(self, size)
    }
}

/// Which end of the slice chunks are taken from.
trait ChunkOrder<S: SliceRef>: Send {
    const FROM_BACK: bool;
    type Iter: DoubleEndedIterator<Item = S> + ExactSizeIterator;
    fn chunks(slice: S, size: usize) -> Self::Iter;
}

/// Chunks from the front (`chunks`).
struct Front;
/// Chunks from the back (`rchunks`).
struct Back;

impl Front {
    const AT_BACK: bool = false;
}

impl Back {
    const AT_BACK: bool = true;
}

impl<S: SliceRef> ChunkOrder<S> for Front {
    const FROM_BACK: bool = Front::AT_BACK;
    type Iter = S::Chunks;
    fn chunks(slice: S, size: usize) -> S::Chunks {
        slice.chunks(size)
    }
}

impl<S: SliceRef> ChunkOrder<S> for Back {
    const FROM_BACK: bool = Back::AT_BACK;
    type Iter = S::RChunks;
    fn chunks(slice: S, size: usize) -> S::RChunks {
        slice.rchunks(size)
    }
}

/// Chunks of `size` items taken from the end of the slice that `D` says; the last chunk
/// may be shorter.
struct ChunksProducer<S, D> {
    size: usize,
    slice: S,
    order: PhantomData<D>,
}

impl<S: SliceRef, D: ChunkOrder<S>> Producer for ChunksProducer<S, D> {
    type Item = S;
    type IntoIter = D::Iter;
    fn into_iter(self) -> D::Iter {
        D::chunks(self.slice, self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let len = self.slice.len();
        let taken = index.saturating_mul(self.size).min(len);
        let size = self.size;
        let piece = |slice| ChunksProducer {
            size,
            slice,
            order: PhantomData,
        };
        if D::FROM_BACK {
            // The first `index` chunks are the end of the slice.
            let (rest, first) = self.slice.split_at(len - taken);
            (piece(first), piece(rest))
        } else {
            let (first, rest) = self.slice.split_at(taken);
            (piece(first), piece(rest))
        }
    }
}

/// Declares a public chunk iterator: its struct (the slice, trimmed to whole chunks for
/// the exact kinds, which also keep the remainder), its constructor, and its parallel
/// iterator impls.
macro_rules! chunk_iterator {
    ($(#[$doc:meta])* $name:ident, $slice:ty, $bound:ident, $order:ident, exact, $split:ident) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<'data, T> {
            size: usize,
            slice: $slice,
            rem: $slice,
        }

        impl<'data, T> $name<'data, T> {
            pub(crate) fn new(slice: $slice, size: usize) -> Self {
                assert!(size != 0, "chunk_size must not be zero");
                let len = slice.len();
                let (slice, rem) = if $order::AT_BACK {
                    let (rem, slice) = slice.$split(len % size);
                    (slice, rem)
                } else {
                    slice.$split(len - len % size)
                };
                $name { size, slice, rem }
            }
        }

        chunk_iterator!(@impls $name, $slice, $bound, $order);
    };
    ($(#[$doc:meta])* $name:ident, $slice:ty, $bound:ident, $order:ident) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<'data, T> {
            size: usize,
            slice: $slice,
        }

        impl<'data, T> $name<'data, T> {
            pub(crate) fn new(slice: $slice, size: usize) -> Self {
                assert!(size != 0, "chunk_size must not be zero");
                $name { size, slice }
            }
        }

        chunk_iterator!(@impls $name, $slice, $bound, $order);
    };
    (@impls $name:ident, $slice:ty, $bound:ident, $order:ident) => {
        slice_iterator!(impl<'data, T: $bound> $name<'data, T>, item = $slice,
            len = |s| s.slice.len().div_ceil(s.size),
            producer = |p| ChunksProducer::<$slice, $order> {
                size: p.size,
                slice: p.slice,
                order: PhantomData,
            });
    };
}

chunk_iterator!(
    /// A parallel iterator over non-overlapping `&[T]` chunks from the front (from
    /// [`par_chunks`](crate::slice::ParallelSlice::par_chunks)); the last one may be
    /// shorter.
    Chunks, &'data [T], Sync, Front);
chunk_iterator!(
    /// A parallel iterator over non-overlapping `&mut [T]` chunks from the front (from
    /// [`par_chunks_mut`](crate::slice::ParallelSliceMut::par_chunks_mut)); the last one
    /// may be shorter.
    ChunksMut, &'data mut [T], Send, Front);
chunk_iterator!(
    /// A parallel iterator over `&[T]` chunks of exactly the chunk size, from the front
    /// (from [`par_chunks_exact`](crate::slice::ParallelSlice::par_chunks_exact)); the
    /// items left over are the [`remainder`](ChunksExact::remainder).
    ChunksExact, &'data [T], Sync, Front, exact, split_at);
chunk_iterator!(
    /// A parallel iterator over `&mut [T]` chunks of exactly the chunk size, from the
    /// front (from
    /// [`par_chunks_exact_mut`](crate::slice::ParallelSliceMut::par_chunks_exact_mut));
    /// the items left over are the [`remainder`](ChunksExactMut::into_remainder).
    ChunksExactMut, &'data mut [T], Send, Front, exact, split_at_mut);
chunk_iterator!(
    /// A parallel iterator over non-overlapping `&[T]` chunks from the back (from
    /// [`par_rchunks`](crate::slice::ParallelSlice::par_rchunks)); the last one (the
    /// start of the slice) may be shorter.
    RChunks, &'data [T], Sync, Back);
chunk_iterator!(
    /// A parallel iterator over non-overlapping `&mut [T]` chunks from the back (from
    /// [`par_rchunks_mut`](crate::slice::ParallelSliceMut::par_rchunks_mut)); the last
    /// one (the start of the slice) may be shorter.
    RChunksMut, &'data mut [T], Send, Back);
chunk_iterator!(
    /// A parallel iterator over `&[T]` chunks of exactly the chunk size, from the back
    /// (from [`par_rchunks_exact`](crate::slice::ParallelSlice::par_rchunks_exact)); the
    /// items left over at the start are the [`remainder`](RChunksExact::remainder).
    RChunksExact, &'data [T], Sync, Back, exact, split_at);
chunk_iterator!(
    /// A parallel iterator over `&mut [T]` chunks of exactly the chunk size, from the
    /// back (from
    /// [`par_rchunks_exact_mut`](crate::slice::ParallelSliceMut::par_rchunks_exact_mut));
    /// the items left over at the start are the
    /// [`remainder`](RChunksExactMut::into_remainder).
    RChunksExactMut, &'data mut [T], Send, Back, exact, split_at_mut);

/// Shared chunk iterators are cheap to clone.
macro_rules! clone_chunks {
    ($($name:ident { $($field:ident),* }),*) => {$(
        impl<T> Clone for $name<'_, T> {
            fn clone(&self) -> Self {
                $name { $($field: self.$field),* }
            }
        }
    )*};
}
clone_chunks!(
    Chunks { size, slice },
    ChunksExact { size, slice, rem },
    RChunks { size, slice },
    RChunksExact { size, slice, rem }
);

impl<'data, T> ChunksExact<'data, T> {
    /// The items that do not fill a whole chunk (at the end of the slice).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v = [1, 2, 3, 4, 5];
    /// let chunks = v.par_chunks_exact(2);
    /// assert_eq!(chunks.remainder(), [5]);
    /// assert_eq!(chunks.map(|c| c[0] + c[1]).collect::<Vec<_>>(), [3, 7]);
    /// ```
    pub fn remainder(&self) -> &'data [T] {
        self.rem
    }
}

impl<'data, T> RChunksExact<'data, T> {
    /// The items that do not fill a whole chunk (at the start of the slice).
    pub fn remainder(&self) -> &'data [T] {
        self.rem
    }
}

/// The remainder accessors of the mutable exact chunk iterators.
macro_rules! mut_remainder {
    ($($name:ident: $where:literal),*) => {$(
        impl<'data, T> $name<'data, T> {
            #[doc = concat!("The items that do not fill a whole chunk (at the ", $where, " of the slice).")]
            pub fn remainder(&mut self) -> &mut [T] {
                self.rem
            }
            #[doc = concat!("The items that do not fill a whole chunk (at the ", $where, " of the slice), for the slice's whole lifetime.")]
            pub fn into_remainder(self) -> &'data mut [T] {
                self.rem
            }
            /// Takes the remainder out, leaving an empty one: the chunks can then still be
            /// iterated.
            pub fn take_remainder(&mut self) -> &'data mut [T] {
                std::mem::take(&mut self.rem)
            }
        }
    )*};
}
mut_remainder!(ChunksExactMut: "end", RChunksExactMut: "start");

// ------------------------------------------------------------------------ windows

/// A parallel iterator over overlapping windows of `size` items (from
/// [`par_windows`](crate::slice::ParallelSlice::par_windows)).
#[derive(Debug)]
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
    fn into_iter(self) -> Self::IntoIter {
        self.slice.windows(self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        // `index + (size - 1)`: `index + size` alone may overflow when the last window
        // ends at `usize::MAX` (a slice of zero-sized items).
        let left_end = index.saturating_add(self.size - 1).min(self.slice.len());
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

/// The iterator returned by [`par_array_windows`](crate::slice::ParallelSlice::par_array_windows):
/// [`Windows`] of `N` items, as arrays.
#[derive(Debug)]
pub struct ArrayWindows<'data, T, const N: usize> {
    slice: &'data [T],
}

impl<T, const N: usize> Clone for ArrayWindows<'_, T, N> {
    fn clone(&self) -> Self {
        ArrayWindows { slice: self.slice }
    }
}

impl<'data, T, const N: usize> ArrayWindows<'data, T, N> {
    pub(crate) fn new(slice: &'data [T]) -> Self {
        assert!(N != 0, "window size must not be zero");
        ArrayWindows { slice }
    }
}

slice_iterator!(impl<'data, T: Sync> ArrayWindows<'data, T, N>, const N, item = &'data [T; N],
    len = |s| s.slice.len().saturating_sub(N - 1),
    producer = |p| ArrayWindowsProducer::<T, N>(WindowsProducer { size: N, slice: p.slice }));

/// [`WindowsProducer`] whose windows are seen as arrays.
struct ArrayWindowsProducer<'data, T, const N: usize>(WindowsProducer<'data, T>);

/// A window of `N` items as an array (every window of an [`ArrayWindowsProducer`] has `N`).
fn as_array<T, const N: usize>(window: &[T]) -> &[T; N] {
    window
        .try_into()
        .expect("every window holds exactly N items")
}

impl<'data, T: Sync, const N: usize> Producer for ArrayWindowsProducer<'data, T, N> {
    type Item = &'data [T; N];
    type IntoIter = std::iter::Map<std::slice::Windows<'data, T>, fn(&'data [T]) -> &'data [T; N]>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter().map(as_array::<T, N>)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (left, right) = self.0.split_at(index);
        (ArrayWindowsProducer(left), ArrayWindowsProducer(right))
    }
}

// ---------------------------------- split, chunk_by (shared and mutable slices)
//
// A slice's pieces are found by *tests*: test `i` of a slice `s` is, for `par_split*`,
// whether `s[i]` is a separator (tests `0..len`), and for `par_chunk_by`, whether
// `s[i - 1]` and `s[i]` fall in different runs (tests `1..len`). Every test runs exactly
// once in a whole loop, however it splits, as in a sequential loop: a split searches for
// the first piece start after the split point and cuts the slice there, and the half on
// the left keeps a record (`tail`) of the tests that search ran, so its own loop does
// not run them again.

/// A slice cut into pieces: `&[T]` or `&mut [T]`.
trait PieceSlice: Sized + Send {
    type Elem;
    fn elements(&self) -> &[Self::Elem];
    /// The elements before `at`, and those from `at` on.
    fn cut(self, at: usize) -> (Self, Self);
}

impl<T: Sync> PieceSlice for &[T] {
    type Elem = T;
    fn elements(&self) -> &[T] {
        self
    }
    fn cut(self, at: usize) -> (Self, Self) {
        self.split_at(at)
    }
}

impl<T: Send> PieceSlice for &mut [T] {
    type Elem = T;
    fn elements(&self) -> &[T] {
        self
    }
    fn cut(self, at: usize) -> (Self, Self) {
        self.split_at_mut(at)
    }
}

/// A way to cut a slice into pieces: its tests, and where a piece starts and ends
/// around a test that finds a boundary.
trait PieceKind<T>: Copy + Send + Sync {
    /// The first test of a slice (the tests run from it up to the slice's length).
    const FIRST_TEST: usize;
    /// A boundary found by test `i` starts a piece at `i + AFTER`...
    const AFTER: usize;
    /// ... and ends the piece before it at `i + AFTER - GAP` (a separator between them).
    const GAP: usize;
    /// Whether a boundary found by the last test starts a piece (`split`: an empty one
    /// after a trailing separator; `split_inclusive`: none).
    const PIECE_AFTER_LAST: bool;
    /// The positions of a slice of `len` elements: where its pieces may start.
    fn positions_for(len: usize) -> usize;
    /// Runs the tests `from..end` of `slice` in order (`FIRST_TEST <= from < end <=
    /// slice.len()`) until one finds a boundary, and returns that one.
    fn find_boundary(self, slice: &[T], from: usize, end: usize) -> Option<usize>;
}

/// `par_split` (`INCLUSIVE == false`) and `par_split_inclusive`: the pieces between
/// elements that satisfy the predicate.
struct SplitKind<'p, P, const INCLUSIVE: bool>(&'p P);
impl<P, const INCLUSIVE: bool> Clone for SplitKind<'_, P, INCLUSIVE> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P, const INCLUSIVE: bool> Copy for SplitKind<'_, P, INCLUSIVE> {}

impl<T, P, const INCLUSIVE: bool> PieceKind<T> for SplitKind<'_, P, INCLUSIVE>
where
    P: Fn(&T) -> bool + Sync,
{
    const FIRST_TEST: usize = 0;
    const AFTER: usize = 1;
    const GAP: usize = if INCLUSIVE { 0 } else { 1 };
    const PIECE_AFTER_LAST: bool = !INCLUSIVE;
    fn positions_for(len: usize) -> usize {
        // `split` has a (possibly empty) piece after the last separator;
        // `split_inclusive` has none.
        if INCLUSIVE {
            len
        } else {
            len + 1
        }
    }
    fn find_boundary(self, slice: &[T], from: usize, end: usize) -> Option<usize> {
        let i = slice[from..end].iter().position(self.0)?;
        Some(from + i)
    }
}

/// `par_chunk_by`: the runs of elements in which each neighbour pair satisfies the
/// predicate.
struct ChunkByKind<'p, P>(&'p P);
impl<P> Clone for ChunkByKind<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P> Copy for ChunkByKind<'_, P> {}

impl<T, P> PieceKind<T> for ChunkByKind<'_, P>
where
    P: Fn(&T, &T) -> bool + Sync,
{
    const FIRST_TEST: usize = 1;
    const AFTER: usize = 0;
    const GAP: usize = 0;
    const PIECE_AFTER_LAST: bool = false;
    fn positions_for(len: usize) -> usize {
        len
    }
    fn find_boundary(self, slice: &[T], from: usize, end: usize) -> Option<usize> {
        let i = slice[from - 1..end]
            .windows(2)
            .position(|pair| !(self.0)(&pair[0], &pair[1]))?;
        Some(from + i)
    }
}

/// Runs the tests `from..end` of `slice` (none if the range is empty); the boundary
/// found, if it starts a piece.
fn piece_boundary<T, K: PieceKind<T>>(kind: K, slice: &[T], from: usize, end: usize) -> Found {
    if from >= end {
        return Found::Nothing;
    }
    match kind.find_boundary(slice, from, end) {
        Some(i) if i + K::AFTER < slice.len() || K::PIECE_AFTER_LAST => Found::Boundary(i),
        _ => Found::Nothing,
    }
}

/// What a search for a boundary found.
enum Found {
    /// The test that found a boundary starting a piece.
    Boundary(usize),
    /// No piece starts after the tests searched.
    Nothing,
}

/// Cuts `data` around the boundary found by test `i`: the piece before it, and the rest
/// from the next piece's start on (with that start).
fn cut_at<S: PieceSlice, K: PieceKind<S::Elem>>(data: S, i: usize) -> (S, S, usize) {
    let next = i + K::AFTER;
    let (left, right) = data.cut(next);
    let (left, _separator) = left.cut(next - K::GAP);
    (left, right, next)
}

/// The pieces of a slice, in order, whose tests from `tail` on have run already and
/// found no boundary (the last element of a `split_inclusive` slice may be a
/// separator); runs each other test once.
struct Pieces<S, K> {
    rest: Option<S>,
    tail: usize,
    kind: K,
}

impl<S: PieceSlice, K: PieceKind<S::Elem>> Iterator for Pieces<S, K> {
    type Item = S;
    fn next(&mut self) -> Option<S> {
        let rest = self.rest.take()?;
        let slice = rest.elements();
        let end = self.tail.min(slice.len());
        match piece_boundary(self.kind, slice, K::FIRST_TEST, end) {
            Found::Boundary(i) => {
                let (piece, rest, next) = cut_at::<S, K>(rest, i);
                self.rest = Some(rest);
                self.tail -= next;
                Some(piece)
            }
            Found::Nothing => Some(rest),
        }
    }
}

/// The positions `range` of a slice cut into pieces of kind `K`, owning the part `data`
/// of the slice (from position `start`, a piece start) that holds exactly the pieces
/// starting in `range` (`None`: no piece starts there). The tests of `data` from `tail`
/// on have run already and found no boundary. Splitting cuts `data` at a piece
/// boundary, so the two halves own disjoint pieces, and runs each test at most once.
struct PiecesProducer<S, K> {
    data: Option<S>,
    start: usize,
    tail: usize,
    range: Range<usize>,
    kind: K,
}

impl<S: PieceSlice, K: PieceKind<S::Elem>> PiecesProducer<S, K> {
    fn pieces(data: S, tail: usize, kind: K) -> Pieces<S, K> {
        Pieces {
            rest: Some(data),
            tail,
            kind,
        }
    }
}

impl<S: PieceSlice, K: PieceKind<S::Elem>> Producer for PiecesProducer<S, K> {
    type Item = Option<S>;
    type IntoIter = PiecesAt<S>;
    fn into_iter(self) -> PiecesAt<S> {
        // Only reached when something iterates positions one by one (the loop driver
        // uses `fold_with`): list the pieces with their positions.
        let mut pieces = VecDeque::new();
        if let Some(data) = self.data {
            let mut at = self.start;
            for piece in Self::pieces(data, self.tail, self.kind) {
                let len = piece.elements().len();
                pieces.push_back((at, piece));
                at += len + K::GAP;
            }
        }
        PiecesAt {
            range: self.range,
            pieces,
        }
    }
    fn fold_with<F>(self, folder: F) -> F
    where
        F: Folder<Self::Item>,
    {
        match self.data {
            Some(data) if !self.range.is_empty() => {
                folder.consume_iter(Self::pieces(data, self.tail, self.kind).map(Some))
            }
            _ => folder,
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let PiecesProducer {
            data,
            start,
            tail,
            range,
            kind,
        } = self;
        let mid = range.start + index;
        let part = |data, start, tail, range| PiecesProducer {
            data,
            start,
            tail,
            range,
            kind,
        };
        let data = match data {
            Some(data) if mid > start => data,
            // Every piece (if any) starts at `mid` or later.
            data => {
                return (
                    part(None, start, 0, range.start..mid),
                    part(data, start, tail, mid..range.end),
                )
            }
        };
        // The first test whose boundary would start a piece at `mid` or later.
        let from = mid - start - K::AFTER;
        let slice = data.elements();
        match piece_boundary(kind, slice, from, tail.min(slice.len())) {
            Found::Boundary(i) => {
                // The left half's tests from `from` on ran in this search.
                let (left, right, next) = cut_at::<S, K>(data, i);
                (
                    part(Some(left), start, from, range.start..mid),
                    part(Some(right), start + next, tail - next, mid..range.end),
                )
            }
            Found::Nothing => (
                part(Some(data), start, tail.min(from), range.start..mid),
                part(None, mid, 0, mid..range.end),
            ),
        }
    }
}

/// The positions `range`, each with the piece that starts there, if any.
struct PiecesAt<S> {
    range: Range<usize>,
    pieces: VecDeque<(usize, S)>,
}

impl<S> Iterator for PiecesAt<S> {
    type Item = Option<S>;
    fn next(&mut self) -> Option<Self::Item> {
        let pos = self.range.next()?;
        if self.pieces.front().is_some_and(|&(at, _)| at == pos) {
            return Some(self.pieces.pop_front().map(|(_, piece)| piece));
        }
        Some(None)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.range.size_hint()
    }
}

impl<S> DoubleEndedIterator for PiecesAt<S> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let pos = self.range.next_back()?;
        if self.pieces.back().is_some_and(|&(at, _)| at == pos) {
            return Some(self.pieces.pop_back().map(|(_, piece)| piece));
        }
        Some(None)
    }
}

impl<S> ExactSizeIterator for PiecesAt<S> {}

/// Every position of a slice with the piece that starts there, if any.
struct PiecePositions<S, K> {
    slice: S,
    kind: K,
}

impl<S: PieceSlice, K: PieceKind<S::Elem>> ParallelIterator for PiecePositions<S, K> {
    type Item = Option<S>;
    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        super::drive_indexed(self, consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(IndexedParallelIterator::len(self))
    }
}

impl<S: PieceSlice, K: PieceKind<S::Elem>> IndexedParallelIterator for PiecePositions<S, K> {
    fn len(&self) -> usize {
        K::positions_for(self.slice.elements().len())
    }
    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        let len = self.slice.elements().len();
        callback.callback(PiecesProducer {
            data: Some(self.slice),
            start: 0,
            tail: len,
            range: 0..K::positions_for(len),
            kind: self.kind,
        })
    }
}

/// Declares a public iterator over the pieces of a slice of type `$slice` (shared or
/// mutable), whose closure is in field `$field`. Its `Debug` shows the slice only.
macro_rules! pieces_iterator {
    ($(#[$doc:meta])* $name:ident<'a, T: $elem:ident, P> of $slice:ty
     where [$($bound:tt)*] { $field:ident } => |$p:ident| $kind:expr) => {
        $(#[$doc])*
        pub struct $name<'a, T, P> {
            slice: $slice,
            $field: P,
        }

        impl<'a, T, P> $name<'a, T, P> {
            pub(crate) fn new(slice: $slice, $field: P) -> Self {
                $name { slice, $field }
            }
        }

        impl<T: std::fmt::Debug, P> std::fmt::Debug for $name<'_, T, P> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).field("slice", &self.slice).finish()
            }
        }

        impl<'a, T: $elem, P> ParallelIterator for $name<'a, T, P>
        where
            $($bound)*
        {
            type Item = $slice;
            fn drive_unindexed<C: UnindexedConsumer<$slice>>(self, consumer: C) -> C::Result {
                let $p = &self.$field;
                PiecePositions { slice: self.slice, kind: $kind }
                    .filter_map(|piece| piece)
                    .drive_unindexed(consumer)
            }
            fn index_span(&self) -> usize {
                let $p = &self.$field;
                positions_of(&$kind, &*self.slice)
            }
        }
    };
}

/// The number of positions of `slice` for pieces of kind `K`.
fn positions_of<T, K: PieceKind<T>>(_kind: &K, slice: &[T]) -> usize {
    K::positions_for(slice.len())
}

/// Implements `Clone` for iterators over shared pieces, when their closure is `Clone`.
macro_rules! clone_shared_pieces {
    ($($name:ident { $field:ident }),*) => {$(
        impl<T, P: Clone> Clone for $name<'_, T, P> {
            fn clone(&self) -> Self {
                $name {
                    slice: self.slice,
                    $field: self.$field.clone(),
                }
            }
        }
    )*};
}

pieces_iterator!(
    /// The iterator returned by
    /// [`par_split`](crate::slice::ParallelSlice::par_split).
    Split<'a, T: Sync, P> of &'a [T] where [P: Fn(&T) -> bool + Sync + Send] { separator }
    => |p| SplitKind::<P, false>(p)
);

pieces_iterator!(
    /// The iterator returned by
    /// [`par_split_inclusive`](crate::slice::ParallelSlice::par_split_inclusive).
    SplitInclusive<'a, T: Sync, P> of &'a [T] where [P: Fn(&T) -> bool + Sync + Send]
    { separator } => |p| SplitKind::<P, true>(p)
);

pieces_iterator!(
    /// The iterator returned by
    /// [`par_chunk_by`](crate::slice::ParallelSlice::par_chunk_by).
    ChunkBy<'a, T: Sync, P> of &'a [T] where [P: Fn(&T, &T) -> bool + Sync + Send] { same }
    => |p| ChunkByKind(p)
);

clone_shared_pieces!(
    Split { separator },
    SplitInclusive { separator },
    ChunkBy { same }
);

pieces_iterator!(
    /// The iterator returned by
    /// [`par_split_mut`](crate::slice::ParallelSliceMut::par_split_mut).
    SplitMut<'a, T: Send, P> of &'a mut [T] where [P: Fn(&T) -> bool + Sync + Send]
    { separator } => |p| SplitKind::<P, false>(p)
);

pieces_iterator!(
    /// The iterator returned by
    /// [`par_split_inclusive_mut`](crate::slice::ParallelSliceMut::par_split_inclusive_mut).
    SplitInclusiveMut<'a, T: Send, P> of &'a mut [T] where [P: Fn(&T) -> bool + Sync + Send]
    { separator } => |p| SplitKind::<P, true>(p)
);

pieces_iterator!(
    /// The iterator returned by
    /// [`par_chunk_by_mut`](crate::slice::ParallelSliceMut::par_chunk_by_mut).
    ChunkByMut<'a, T: Send, P> of &'a mut [T] where [P: Fn(&T, &T) -> bool + Sync + Send]
    { same } => |p| ChunkByKind(p)
);

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

    use super::*;

    /// Collects the pieces a producer folds.
    struct Collect(Vec<Vec<u8>>);

    impl Folder<Option<&mut [u8]>> for Collect {
        type Result = Vec<Vec<u8>>;
        fn consume(mut self, item: Option<&mut [u8]>) -> Self {
            self.0.extend(item.map(|piece| piece.to_vec()));
            self
        }
        fn complete(self) -> Vec<Vec<u8>> {
            self.0
        }
    }

    /// The pieces by position (once per way of iterating them), and the pieces folded.
    type Collected = (Vec<Vec<Option<Vec<u8>>>>, Vec<Vec<u8>>);

    /// The pieces of `data` after splitting its producer at `at` and its right half at
    /// `at2` (`at <= at2`): by position, through `into_iter` forwards and backwards, and
    /// as `fold_with` folds them (without positions).
    fn pieces_after_splits<K: PieceKind<u8>>(
        data: &[u8],
        kind: K,
        at: usize,
        at2: usize,
    ) -> Collected {
        /// The producer of `data`'s pieces, split at `at` and `at2`.
        fn thirds<K: PieceKind<u8>>(
            data: &mut [u8],
            kind: K,
            at: usize,
            at2: usize,
        ) -> [PiecesProducer<&mut [u8], K>; 3] {
            let producer = PiecesProducer {
                start: 0,
                tail: data.len(),
                range: 0..K::positions_for(data.len()),
                data: Some(data),
                kind,
            };
            let (left, rest) = producer.split_at(at);
            let (middle, right) = rest.split_at(at2 - at);
            [left, middle, right]
        }
        let mut copy = data.to_vec();
        let forwards: Vec<Option<Vec<u8>>> = thirds(&mut copy, kind, at, at2)
            .into_iter()
            .flat_map(|part| part.into_iter())
            .map(|p| p.map(|p| p.to_vec()))
            .collect();
        let mut copy = data.to_vec();
        let mut backwards: Vec<Option<Vec<u8>>> = thirds(&mut copy, kind, at, at2)
            .into_iter()
            .rev()
            .flat_map(|part| part.into_iter().rev())
            .map(|p| p.map(|p| p.to_vec()))
            .collect();
        backwards.reverse();
        let mut copy = data.to_vec();
        let folded = thirds(&mut copy, kind, at, at2)
            .into_iter()
            .fold(Collect(Vec::new()), |folder, part| part.fold_with(folder))
            .complete();
        (vec![forwards, backwards], folded)
    }

    /// Every pair of split points of every short slice of 0s and 1s: the pieces, by
    /// position, are std's pieces at their start positions, in both directions and when
    /// folded, and each test ran exactly once each time.
    #[test]
    fn pieces_split_at_every_pair_of_positions() {
        let tests = AtomicUsize::new(0);
        let sep = |x: &u8| {
            tests.fetch_add(1, Relaxed);
            *x == 0
        };
        let same = |a: &u8, b: &u8| {
            tests.fetch_add(1, Relaxed);
            a == b
        };
        // Each of the three collections runs every test once.
        let ran_each_test_once = |what: &str, expected: usize| {
            assert_eq!(tests.swap(0, Relaxed), 3 * expected, "{what}");
        };
        // Slices of up to 7 items (4 under Miri, which interprets every step).
        for n in 0..=if cfg!(miri) { 4 } else { 7usize } {
            for bits in 0..1u32 << n {
                let data: Vec<u8> = (0..n).map(|i| ((bits >> i) & 1) as u8).collect();
                // Std's pieces, placed at their start positions.
                let place = |pieces: Vec<&[u8]>, gap: usize, positions: usize| {
                    let mut out = vec![None; positions];
                    let mut at = 0;
                    for piece in pieces {
                        out[at] = Some(piece.to_vec());
                        at += piece.len() + gap;
                    }
                    out
                };
                let plain_sep = |x: &u8| *x == 0;
                let plain_same = |a: &u8, b: &u8| a == b;
                let split = place(data.split(plain_sep).collect(), 1, n + 1);
                let inclusive = place(data.split_inclusive(plain_sep).collect(), 0, n);
                let runs = place(data.chunk_by(plain_same).collect(), 0, n);
                let check = |got: Collected, expected: &Vec<Option<Vec<u8>>>, what: &str| {
                    for got in got.0 {
                        assert_eq!(&got, expected, "{what}");
                    }
                    let pieces: Vec<Vec<u8>> = expected.iter().flatten().cloned().collect();
                    assert_eq!(got.1, pieces, "{what} (folded)");
                };
                for at2 in 0..=n + 1 {
                    for at in 0..=at2 {
                        let what = format!("{data:?} at {at} and {at2}");
                        let got = pieces_after_splits(&data, SplitKind::<_, false>(&sep), at, at2);
                        ran_each_test_once(&format!("split {what}"), n);
                        check(got, &split, &format!("split {what}"));
                        if at2 > n {
                            continue;
                        }
                        let got = pieces_after_splits(&data, SplitKind::<_, true>(&sep), at, at2);
                        ran_each_test_once(&format!("split_inclusive {what}"), n);
                        check(got, &inclusive, &format!("split_inclusive {what}"));
                        let got = pieces_after_splits(&data, ChunkByKind(&same), at, at2);
                        ran_each_test_once(&format!("chunk_by {what}"), n.saturating_sub(1));
                        check(got, &runs, &format!("chunk_by {what}"));
                    }
                }
            }
        }
    }
}
