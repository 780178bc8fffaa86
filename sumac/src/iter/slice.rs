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

use super::parts::{parts_iterator, PartKind};
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

// ------------------------------------------------------------- split, chunk_by

/// `par_split` (`INCLUSIVE == false`) and `par_split_inclusive`: the pieces between
/// elements that satisfy the predicate.
struct SplitKind<'p, P, const INCLUSIVE: bool>(&'p P);
impl<P, const INCLUSIVE: bool> Clone for SplitKind<'_, P, INCLUSIVE> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P, const INCLUSIVE: bool> Copy for SplitKind<'_, P, INCLUSIVE> {}

impl<'a, T, P, const INCLUSIVE: bool> PartKind<&'a [T]> for SplitKind<'_, P, INCLUSIVE>
where
    T: Sync,
    P: Fn(&T) -> bool + Sync,
{
    type Part = &'a [T];
    fn positions(slice: &'a [T]) -> usize {
        <Self as SlicePieceKind<T>>::positions_for(slice.len())
    }
    fn first_start(self, slice: &'a [T], lo: usize, hi: usize) -> Option<usize> {
        self.piece_start(slice, lo, hi)
    }
    fn parts_from(self, slice: &'a [T], from: usize) -> impl Iterator<Item = (usize, &'a [T])> {
        let separator = self.0;
        let rest = &slice[from..];
        let pieces = if INCLUSIVE {
            either::Either::Left(rest.split_inclusive(separator))
        } else {
            either::Either::Right(rest.split(separator))
        };
        // Each piece but the last is followed by its separator (inside the piece for
        // `split_inclusive`).
        let gap = usize::from(!INCLUSIVE);
        pieces.scan(from, move |start, piece| {
            let here = *start;
            *start += piece.len() + gap;
            Some((here, piece))
        })
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

impl<'a, T, P> PartKind<&'a [T]> for ChunkByKind<'_, P>
where
    T: Sync,
    P: Fn(&T, &T) -> bool + Sync,
{
    type Part = &'a [T];
    fn first_start(self, slice: &'a [T], lo: usize, hi: usize) -> Option<usize> {
        self.piece_start(slice, lo, hi)
    }
    fn parts_from(self, slice: &'a [T], from: usize) -> impl Iterator<Item = (usize, &'a [T])> {
        let same = self.0;
        slice[from..]
            .chunk_by(move |a, b| same(a, b))
            .scan(from, |start, run| {
                let here = *start;
                *start += run.len();
                Some((here, run))
            })
    }
}

parts_iterator!(
    /// The iterator returned by
    /// [`par_split`](crate::slice::ParallelSlice::par_split).
    Split<'a, T, P> { slice: &'a [T], separator: P }
    where [T: Sync, P: Fn(&T) -> bool + Sync + Send] => &'a [T],
    |this| SplitKind::<P, false>(&this.separator)
);

parts_iterator!(
    /// The iterator returned by
    /// [`par_split_inclusive`](crate::slice::ParallelSlice::par_split_inclusive).
    SplitInclusive<'a, T, P> { slice: &'a [T], separator: P }
    where [T: Sync, P: Fn(&T) -> bool + Sync + Send] => &'a [T],
    |this| SplitKind::<P, true>(&this.separator)
);

parts_iterator!(
    /// The iterator returned by
    /// [`par_chunk_by`](crate::slice::ParallelSlice::par_chunk_by).
    ChunkBy<'a, T, P> { slice: &'a [T], same: P }
    where [T: Sync, P: Fn(&T, &T) -> bool + Sync + Send] => &'a [T],
    |this| ChunkByKind(&this.same)
);

impl<'a, T, P> Split<'a, T, P> {
    pub(crate) fn new(slice: &'a [T], separator: P) -> Self {
        Split { slice, separator }
    }
}

impl<'a, T, P> SplitInclusive<'a, T, P> {
    pub(crate) fn new(slice: &'a [T], separator: P) -> Self {
        SplitInclusive { slice, separator }
    }
}

impl<'a, T, P> ChunkBy<'a, T, P> {
    pub(crate) fn new(slice: &'a [T], same: P) -> Self {
        ChunkBy { slice, same }
    }
}

// ------------------------------------------------- split_mut, chunk_by_mut

/// Where the pieces of a slice start, and how to cut a mutable slice into them: the
/// part of the slice kinds that needs no shared access across threads (so the `_mut`
/// iterators ask only `T: Send`).
trait SlicePieceKind<T>: Copy + Send + Sync {
    /// Elements between two pieces (a separator, or none).
    const GAP: usize;
    /// The positions of a slice of `len` elements.
    fn positions_for(len: usize) -> usize;
    /// The first position in `lo..hi` (`lo < hi <= positions`) where a piece starts; the
    /// search stays within that range.
    fn piece_start(self, slice: &[T], lo: usize, hi: usize) -> Option<usize>;
    /// The pieces of `data`, which starts at a piece start.
    fn pieces_mut(self, data: &mut [T]) -> impl Iterator<Item = &mut [T]>;
}

impl<T, P, const INCLUSIVE: bool> SlicePieceKind<T> for SplitKind<'_, P, INCLUSIVE>
where
    P: Fn(&T) -> bool + Sync,
{
    const GAP: usize = if INCLUSIVE { 0 } else { 1 };
    fn positions_for(len: usize) -> usize {
        // `split` has a (possibly empty) piece after the last separator;
        // `split_inclusive` has none.
        if INCLUSIVE {
            len
        } else {
            len + 1
        }
    }
    fn piece_start(self, slice: &[T], lo: usize, hi: usize) -> Option<usize> {
        if lo == 0 {
            return Some(0);
        }
        // A piece starts right after each separator.
        let i = slice[lo - 1..hi - 1].iter().position(self.0)?;
        Some(lo + i)
    }
    fn pieces_mut(self, data: &mut [T]) -> impl Iterator<Item = &mut [T]> {
        let separator = self.0;
        if INCLUSIVE {
            either::Either::Left(data.split_inclusive_mut(separator))
        } else {
            either::Either::Right(data.split_mut(separator))
        }
    }
}

impl<T, P> SlicePieceKind<T> for ChunkByKind<'_, P>
where
    P: Fn(&T, &T) -> bool + Sync,
{
    const GAP: usize = 0;
    fn positions_for(len: usize) -> usize {
        len
    }
    fn piece_start(self, slice: &[T], lo: usize, hi: usize) -> Option<usize> {
        if lo == 0 {
            return Some(0);
        }
        // A run starts where a neighbour pair does not satisfy the predicate.
        let i = slice[lo - 1..hi]
            .windows(2)
            .position(|pair| !(self.0)(&pair[0], &pair[1]))?;
        Some(lo + i)
    }
    fn pieces_mut(self, data: &mut [T]) -> impl Iterator<Item = &mut [T]> {
        let same = self.0;
        data.chunk_by_mut(move |a, b| same(a, b))
    }
}

/// The positions `range` of a mutable slice, owning the part `data` of it (from
/// position `start`, a piece start) that holds exactly the pieces starting in `range`
/// (`None`: no piece starts there). Splitting cuts `data` at a piece boundary, so the
/// two halves own disjoint pieces.
struct MutPartsProducer<'a, T, K> {
    data: Option<&'a mut [T]>,
    start: usize,
    range: Range<usize>,
    kind: K,
}

impl<'a, T: Send, K: SlicePieceKind<T>> Producer for MutPartsProducer<'a, T, K> {
    type Item = Option<&'a mut [T]>;
    type IntoIter = MutPartsIter<'a, T>;
    fn into_iter(self) -> MutPartsIter<'a, T> {
        // Only reached when something iterates positions one by one (the loop driver
        // uses `fold_with`): list the pieces with their positions.
        let mut pieces = VecDeque::new();
        if let Some(data) = self.data {
            let mut at = self.start;
            for piece in self.kind.pieces_mut(data) {
                let len = piece.len();
                pieces.push_back((at, piece));
                at += len + K::GAP;
            }
        }
        MutPartsIter {
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
                folder.consume_iter(self.kind.pieces_mut(data).map(Some))
            }
            _ => folder,
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let MutPartsProducer {
            data,
            start,
            range,
            kind,
        } = self;
        let mid = range.start + index;
        let piece = |data, start, range| MutPartsProducer {
            data,
            start,
            range,
            kind,
        };
        let cut = data.as_deref().and_then(|data| {
            if mid <= start {
                return Some(0);
            }
            // The first piece start at or after `mid`, relative to `data`.
            let hi = (range.end - start).min(K::positions_for(data.len()));
            (mid - start < hi).then(|| kind.piece_start(data, mid - start, hi))?
        });
        match (data, cut) {
            (Some(data), Some(0)) => (
                piece(None, start, range.start..mid),
                piece(Some(data), start, mid..range.end),
            ),
            (Some(data), Some(q)) => {
                let (left, rest) = data.split_at_mut(q - K::GAP);
                let right = &mut rest[K::GAP..];
                (
                    piece(Some(left), start, range.start..mid),
                    piece(Some(right), start + q, mid..range.end),
                )
            }
            (data, _) => (
                piece(data, start, range.start..mid),
                piece(None, mid, mid..range.end),
            ),
        }
    }
}

struct MutPartsIter<'a, T> {
    range: Range<usize>,
    pieces: VecDeque<(usize, &'a mut [T])>,
}

impl<'a, T> Iterator for MutPartsIter<'a, T> {
    type Item = Option<&'a mut [T]>;
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

impl<T> DoubleEndedIterator for MutPartsIter<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let pos = self.range.next_back()?;
        if self.pieces.back().is_some_and(|&(at, _)| at == pos) {
            return Some(self.pieces.pop_back().map(|(_, piece)| piece));
        }
        Some(None)
    }
}

impl<T> ExactSizeIterator for MutPartsIter<'_, T> {}

/// Every position of a mutable slice with the piece that starts there, if any.
struct MutPositions<'a, T, K> {
    slice: &'a mut [T],
    kind: K,
}

impl<'a, T: Send, K: SlicePieceKind<T>> ParallelIterator for MutPositions<'a, T, K> {
    type Item = Option<&'a mut [T]>;
    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        super::drive_indexed(self, consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(IndexedParallelIterator::len(self))
    }
}

impl<'a, T: Send, K: SlicePieceKind<T>> IndexedParallelIterator for MutPositions<'a, T, K> {
    fn len(&self) -> usize {
        K::positions_for(self.slice.len())
    }
    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        let positions = K::positions_for(self.slice.len());
        callback.callback(MutPartsProducer {
            data: Some(self.slice),
            start: 0,
            range: 0..positions,
            kind: self.kind,
        })
    }
}

/// Declares a public iterator over the pieces of a mutable slice.
macro_rules! mut_pieces_iterator {
    ($(#[$doc:meta])* $name:ident<'a, T, P> where [$($bound:tt)*] { $field:ident } => |$p:ident| $kind:expr) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<'a, T, P> {
            slice: &'a mut [T],
            $field: P,
        }

        impl<'a, T, P> $name<'a, T, P> {
            pub(crate) fn new(slice: &'a mut [T], $field: P) -> Self {
                $name { slice, $field }
            }
        }

        impl<'a, T: Send, P> ParallelIterator for $name<'a, T, P>
        where
            $($bound)*
        {
            type Item = &'a mut [T];
            fn drive_unindexed<C: UnindexedConsumer<&'a mut [T]>>(self, consumer: C) -> C::Result {
                let $p = &self.$field;
                MutPositions { slice: self.slice, kind: $kind }
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
fn positions_of<T, K: SlicePieceKind<T>>(_kind: &K, slice: &[T]) -> usize {
    K::positions_for(slice.len())
}

mut_pieces_iterator!(
    /// The iterator returned by
    /// [`par_split_mut`](crate::slice::ParallelSliceMut::par_split_mut).
    SplitMut<'a, T, P> where [P: Fn(&T) -> bool + Sync + Send] { separator }
    => |p| SplitKind::<P, false>(p)
);

mut_pieces_iterator!(
    /// The iterator returned by
    /// [`par_split_inclusive_mut`](crate::slice::ParallelSliceMut::par_split_inclusive_mut).
    SplitInclusiveMut<'a, T, P> where [P: Fn(&T) -> bool + Sync + Send] { separator }
    => |p| SplitKind::<P, true>(p)
);

mut_pieces_iterator!(
    /// The iterator returned by
    /// [`par_chunk_by_mut`](crate::slice::ParallelSliceMut::par_chunk_by_mut).
    ChunkByMut<'a, T, P> where [P: Fn(&T, &T) -> bool + Sync + Send] { same }
    => |p| ChunkByKind(p)
);

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// The pieces a `MutPartsProducer` yields, by position, through `into_iter`
    /// (forwards or backwards) or `fold_with`, after splitting at `at`.
    fn pieces_after_split<K: SlicePieceKind<u8>>(
        data: &mut [u8],
        kind: K,
        at: usize,
    ) -> Vec<Vec<Option<Vec<u8>>>> {
        let positions = K::positions_for(data.len());
        let make = |data| MutPartsProducer {
            data: Some(data),
            start: 0,
            range: 0..positions,
            kind,
        };
        let mut copy = data.to_vec();
        let (left, right) = make(data).split_at(at);
        let forwards: Vec<Option<Vec<u8>>> = left
            .into_iter()
            .chain(right.into_iter())
            .map(|p| p.map(|p| p.to_vec()))
            .collect();
        let (left, right) = make(&mut copy).split_at(at);
        let mut backwards: Vec<Option<Vec<u8>>> = right
            .into_iter()
            .rev()
            .chain(left.into_iter().rev())
            .map(|p| p.map(|p| p.to_vec()))
            .collect();
        backwards.reverse();
        vec![forwards, backwards]
    }

    /// Every split point of every short slice of 0s and 1s: the pieces, by position, are
    /// std's pieces at their start positions, in both directions.
    #[test]
    fn mutable_pieces_split_at_every_position() {
        let sep = |x: &u8| *x == 0;
        let same = |a: &u8, b: &u8| a == b;
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
                let split = place(data.split(sep).collect(), 1, n + 1);
                let inclusive = place(data.split_inclusive(sep).collect(), 0, n);
                let runs = place(data.chunk_by(same).collect(), 0, n);
                for at in 0..=n {
                    let mut d = data.clone();
                    for got in pieces_after_split(&mut d, SplitKind::<_, false>(&sep), at) {
                        assert_eq!(got, split, "split {data:?} at {at}");
                    }
                    for got in pieces_after_split(&mut d, SplitKind::<_, true>(&sep), at.min(n)) {
                        assert_eq!(got, inclusive, "split_inclusive {data:?} at {at}");
                    }
                    for got in pieces_after_split(&mut d, ChunkByKind(&same), at.min(n)) {
                        assert_eq!(got, runs, "chunk_by {data:?} at {at}");
                    }
                }
                // The split positions run to n + 1 for `split`.
                let mut d = data.clone();
                for got in pieces_after_split(&mut d, SplitKind::<_, false>(&sep), n + 1) {
                    assert_eq!(got, split, "split {data:?} at {}", n + 1);
                }
            }
        }
    }
}
