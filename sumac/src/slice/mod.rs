//! Parallel methods on slices: [`ParallelSlice`] (`par_chunks`, `par_windows`) and
//! [`ParallelSliceMut`] (`par_chunks_mut` and the parallel sorts).
//!
//! The sorts give the same result as [`slice::sort`] / [`slice::sort_unstable`]: a stable
//! parallel merge sort and an unstable parallel quicksort. Both are panic-safe: if the
//! comparator panics, every element is still in the slice exactly once (in an
//! unspecified order), and the panic propagates.
//!
//! ```
//! use sumac::prelude::*;
//! let mut v: Vec<u32> = (0..10_000).map(|i| (i * 7919) % 10_007).collect();
//! let mut expected = v.clone();
//! expected.sort();
//! v.par_sort_unstable();
//! assert_eq!(v, expected);
//! ```

use std::cmp::Ordering;

use crate::iter::{IndexedParallelIterator, IntoParallelRefMutIterator, ParallelIterator};
use crate::join::ForkSize;
use crate::policy::LARGE_SORT_PIECE;

mod mergesort;
mod quicksort;

pub use crate::iter::slice::{
    ArrayWindows, ChunkBy, ChunkByMut, Chunks, ChunksExact, ChunksExactMut, ChunksMut, Iter,
    IterMut, RChunks, RChunksExact, RChunksExactMut, RChunksMut, Split, SplitInclusive,
    SplitInclusiveMut, SplitMut, Windows,
};

/// Parallel methods on shared slices.
///
/// ```
/// use sumac::prelude::*;
/// let v = [1, 2, 3, 4, 5];
/// let firsts: Vec<i32> = v.par_chunks(2).map(|c| c[0]).collect();
/// assert_eq!(firsts, [1, 3, 5]);
/// let diffs: Vec<i32> = v.par_windows(2).map(|w| w[1] - w[0]).collect();
/// assert_eq!(diffs, [1, 1, 1, 1]);
/// ```
pub trait ParallelSlice<T: Sync> {
    /// The slice the methods work on. Implement it to give your own type the parallel
    /// slice methods (slices already have them):
    ///
    /// ```
    /// use sumac::prelude::*;
    /// use sumac::slice::ParallelSlice;
    ///
    /// struct Readings {
    ///     values: Vec<u32>,
    /// }
    ///
    /// impl ParallelSlice<u32> for Readings {
    ///     fn as_parallel_slice(&self) -> &[u32] {
    ///         &self.values
    ///     }
    /// }
    ///
    /// let readings = Readings { values: vec![3, 9, 4, 1, 8] };
    /// assert_eq!(readings.as_parallel_slice().len(), 5);
    /// let peaks: Vec<u32> = readings.par_chunks(2).map(|c| *c.iter().max().unwrap()).collect();
    /// assert_eq!(peaks, [9, 4, 8]);
    /// ```
    fn as_parallel_slice(&self) -> &[T];

    /// A parallel iterator over non-overlapping chunks of `chunk_size` items (the last one
    /// may be shorter).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let bytes = b"abcdefg";
    /// let rows: Vec<String> = bytes
    ///     .par_chunks(3)
    ///     .map(|row| String::from_utf8_lossy(row).into_owned())
    ///     .collect();
    /// assert_eq!(rows, ["abc", "def", "g"]);
    /// ```
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn par_chunks(&self, chunk_size: usize) -> Chunks<'_, T> {
        Chunks::new(self.as_parallel_slice(), chunk_size)
    }

    /// A parallel iterator over all overlapping windows of `window_size` items.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let temperatures = [12, 14, 13, 17, 16];
    /// // Is any three-day stretch rising all the way?
    /// let rising = temperatures.par_windows(3).any(|w| w[0] < w[1] && w[1] < w[2]);
    /// assert!(!rising);
    /// // A window longer than the slice gives no windows at all.
    /// assert_eq!(temperatures.par_windows(6).count(), 0);
    /// ```
    ///
    /// # Panics
    /// If `window_size` is 0.
    fn par_windows(&self, window_size: usize) -> Windows<'_, T> {
        Windows::new(self.as_parallel_slice(), window_size)
    }

    /// A parallel iterator over all overlapping windows of `N` items, as arrays.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v = [1, 2, 4, 8];
    /// let steps: Vec<i32> = v.par_array_windows().map(|&[a, b]| b - a).collect();
    /// assert_eq!(steps, [1, 2, 4]);
    /// ```
    ///
    /// # Panics
    /// If `N` is 0.
    fn par_array_windows<const N: usize>(&self) -> ArrayWindows<'_, T, N> {
        ArrayWindows::new(self.as_parallel_slice())
    }

    /// A parallel iterator over non-overlapping chunks of exactly `chunk_size` items,
    /// from the front; the items left over at the end are the iterator's
    /// [`remainder`](ChunksExact::remainder).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v = [1, 2, 3, 4, 5];
    /// let sums: Vec<i32> = v.par_chunks_exact(2).map(|c| c.iter().sum()).collect();
    /// assert_eq!(sums, [3, 7]);
    /// ```
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn par_chunks_exact(&self, chunk_size: usize) -> ChunksExact<'_, T> {
        ChunksExact::new(self.as_parallel_slice(), chunk_size)
    }

    /// A parallel iterator over non-overlapping chunks of `chunk_size` items from the
    /// back (the last one, at the start of the slice, may be shorter).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v = [1, 2, 3, 4, 5];
    /// let chunks: Vec<&[i32]> = v.par_rchunks(2).collect();
    /// assert_eq!(chunks, [&[4, 5][..], &[2, 3], &[1]]);
    /// ```
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn par_rchunks(&self, chunk_size: usize) -> RChunks<'_, T> {
        RChunks::new(self.as_parallel_slice(), chunk_size)
    }

    /// A parallel iterator over non-overlapping chunks of exactly `chunk_size` items from
    /// the back; the items left over at the start are the iterator's
    /// [`remainder`](RChunksExact::remainder).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v = [1, 2, 3, 4, 5, 6, 7];
    /// let chunks = v.par_rchunks_exact(3);
    /// assert_eq!(chunks.remainder(), [1]);
    /// let firsts: Vec<i32> = chunks.map(|c| c[0]).collect();
    /// assert_eq!(firsts, [5, 2]);
    /// ```
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn par_rchunks_exact(&self, chunk_size: usize) -> RChunksExact<'_, T> {
        RChunksExact::new(self.as_parallel_slice(), chunk_size)
    }

    /// The pieces between the elements that satisfy `separator`, like `slice::split`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v = [1, 0, 2, 3, 0, 0, 4];
    /// let pieces: Vec<&[i32]> = v.par_split(|&x| x == 0).collect();
    /// assert_eq!(pieces, [&[1][..], &[2, 3], &[], &[4]]);
    /// ```
    fn par_split<P>(&self, separator: P) -> Split<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        Split::new(self.as_parallel_slice(), separator)
    }

    /// The pieces ended by the elements that satisfy `separator`, each with its
    /// separator, like `slice::split_inclusive`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v = [1, 0, 2, 3, 0, 4];
    /// let pieces: Vec<&[i32]> = v.par_split_inclusive(|&x| x == 0).collect();
    /// assert_eq!(pieces, [&[1, 0][..], &[2, 3, 0], &[4]]);
    /// ```
    fn par_split_inclusive<P>(&self, separator: P) -> SplitInclusive<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        SplitInclusive::new(self.as_parallel_slice(), separator)
    }

    /// The runs of elements in which every neighbour pair satisfies `same`, like
    /// `slice::chunk_by`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v = [1, 1, 2, 3, 3, 3];
    /// let runs: Vec<&[i32]> = v.par_chunk_by(|a, b| a == b).collect();
    /// assert_eq!(runs, [&[1, 1][..], &[2], &[3, 3, 3]]);
    /// ```
    fn par_chunk_by<F>(&self, same: F) -> ChunkBy<'_, T, F>
    where
        F: Fn(&T, &T) -> bool + Sync + Send,
    {
        ChunkBy::new(self.as_parallel_slice(), same)
    }
}

impl<T: Sync> ParallelSlice<T> for [T] {
    fn as_parallel_slice(&self) -> &[T] {
        self
    }
}

/// Parallel methods on mutable slices.
///
/// ```
/// use sumac::prelude::*;
/// let mut v = vec![(2, 'a'), (1, 'b'), (2, 'c'), (1, 'd')];
/// v.par_sort_by_key(|p| p.0);
/// assert_eq!(v, [(1, 'b'), (1, 'd'), (2, 'a'), (2, 'c')]);
/// v.par_chunks_mut(2).for_each(|c| c.reverse());
/// assert_eq!(v, [(1, 'd'), (1, 'b'), (2, 'c'), (2, 'a')]);
/// ```
pub trait ParallelSliceMut<T: Send> {
    /// The slice the methods work on. Implement it to give your own type the parallel
    /// mutable slice methods (slices already have them):
    ///
    /// ```
    /// use sumac::prelude::*;
    /// use sumac::slice::ParallelSliceMut;
    ///
    /// struct Image {
    ///     width: usize,
    ///     pixels: Vec<u8>,
    /// }
    ///
    /// impl ParallelSliceMut<u8> for Image {
    ///     fn as_parallel_slice_mut(&mut self) -> &mut [u8] {
    ///         &mut self.pixels
    ///     }
    /// }
    ///
    /// let mut image = Image { width: 3, pixels: vec![9, 0, 5, 7, 7, 1] };
    /// let width = image.width;
    /// image.par_chunks_mut(width).for_each(|row| row.sort_unstable());
    /// assert_eq!(image.pixels, [0, 5, 9, 1, 7, 7]);
    /// image.as_parallel_slice_mut()[0] = 255;
    /// assert_eq!(image.pixels[0], 255);
    /// ```
    fn as_parallel_slice_mut(&mut self) -> &mut [T];

    /// A parallel iterator over non-overlapping mutable chunks of `chunk_size` items (the
    /// last one may be shorter).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let mut counts = [0u32; 10];
    /// counts
    ///     .par_chunks_mut(4)
    ///     .enumerate()
    ///     .for_each(|(block, chunk)| chunk.fill(block as u32));
    /// assert_eq!(counts, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]);
    /// ```
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn par_chunks_mut(&mut self, chunk_size: usize) -> ChunksMut<'_, T> {
        ChunksMut::new(self.as_parallel_slice_mut(), chunk_size)
    }

    /// A parallel iterator over non-overlapping mutable chunks of exactly `chunk_size`
    /// items, from the front; the items left over at the end are the iterator's
    /// [`remainder`](ChunksExactMut::into_remainder).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let mut v = [1, 2, 3, 4, 5];
    /// let mut chunks = v.par_chunks_exact_mut(2);
    /// chunks.take_remainder()[0] = 50;
    /// chunks.for_each(|c| c.swap(0, 1));
    /// assert_eq!(v, [2, 1, 4, 3, 50]);
    /// ```
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn par_chunks_exact_mut(&mut self, chunk_size: usize) -> ChunksExactMut<'_, T> {
        ChunksExactMut::new(self.as_parallel_slice_mut(), chunk_size)
    }

    /// A parallel iterator over non-overlapping mutable chunks of `chunk_size` items from
    /// the back (the last one, at the start of the slice, may be shorter).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let mut v = [1, 2, 3, 4, 5, 6, 7];
    /// // Each chunk is summed into its first slot; the short chunk is `[1]`.
    /// v.par_rchunks_mut(3).for_each(|c| {
    ///     let sum: i32 = c.iter().sum();
    ///     c[0] = sum;
    /// });
    /// assert_eq!(v, [1, 9, 3, 4, 18, 6, 7]);
    /// ```
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn par_rchunks_mut(&mut self, chunk_size: usize) -> RChunksMut<'_, T> {
        RChunksMut::new(self.as_parallel_slice_mut(), chunk_size)
    }

    /// A parallel iterator over non-overlapping mutable chunks of exactly `chunk_size`
    /// items from the back; the items left over at the start are the iterator's
    /// [`remainder`](RChunksExactMut::into_remainder).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let mut v = [10, 1, 2, 3, 4];
    /// let mut chunks = v.par_rchunks_exact_mut(2);
    /// assert_eq!(chunks.remainder(), [10]);
    /// chunks.for_each(|pair| pair.swap(0, 1));
    /// assert_eq!(v, [10, 2, 1, 4, 3]);
    /// ```
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn par_rchunks_exact_mut(&mut self, chunk_size: usize) -> RChunksExactMut<'_, T> {
        RChunksExactMut::new(self.as_parallel_slice_mut(), chunk_size)
    }

    /// The mutable pieces between the elements that satisfy `separator`, like
    /// `slice::split_mut`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let mut v = [3, 1, 0, 2, 5, 4, 0, 9];
    /// v.par_split_mut(|&x| x == 0).for_each(|piece| piece.sort());
    /// assert_eq!(v, [1, 3, 0, 2, 4, 5, 0, 9]);
    /// ```
    fn par_split_mut<P>(&mut self, separator: P) -> SplitMut<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        SplitMut::new(self.as_parallel_slice_mut(), separator)
    }

    /// The mutable pieces ended by the elements that satisfy `separator`, each with its
    /// separator, like `slice::split_inclusive_mut`. The elements need only be `Send`:
    ///
    /// ```
    /// use std::cell::Cell;
    /// use sumac::prelude::*;
    /// let mut v: Vec<Cell<u32>> = [1, 0, 2, 3, 0].into_iter().map(Cell::new).collect();
    /// v.par_split_inclusive_mut(|c| c.get() == 0)
    ///     .for_each(|piece| piece.iter().for_each(|c| c.set(c.get() + piece.len() as u32)));
    /// assert_eq!(v.iter().map(Cell::get).collect::<Vec<_>>(), [3, 2, 5, 6, 3]);
    /// ```
    fn par_split_inclusive_mut<P>(&mut self, separator: P) -> SplitInclusiveMut<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        SplitInclusiveMut::new(self.as_parallel_slice_mut(), separator)
    }

    /// The mutable runs of elements in which every neighbour pair satisfies `same`, like
    /// `slice::chunk_by_mut`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let mut v = [1, 1, 2, 3, 3, 3];
    /// v.par_chunk_by_mut(|a, b| a == b).for_each(|run| {
    ///     let n = run.len() as i32;
    ///     run.iter_mut().for_each(|x| *x *= n);
    /// });
    /// assert_eq!(v, [2, 2, 2, 9, 9, 9]);
    /// ```
    fn par_chunk_by_mut<F>(&mut self, same: F) -> ChunkByMut<'_, T, F>
    where
        F: Fn(&T, &T) -> bool + Sync + Send,
    {
        ChunkByMut::new(self.as_parallel_slice_mut(), same)
    }

    /// Sorts the slice, stably (equal elements keep their order), in parallel.
    ///
    /// Uses a scratch buffer of the slice's size.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let mut v = [5, 4, 1, 3, 2];
    /// v.par_sort();
    /// assert_eq!(v, [1, 2, 3, 4, 5]);
    /// ```
    ///
    /// # Panics
    /// May panic if `T`'s `Ord` is not a total order, as the standard library's sorts
    /// may (Rust 1.81 and later), whose code sorts the pieces; every element is still in
    /// the slice exactly once. This differs from Rayon, whose sorts then return in an
    /// unspecified order.
    fn par_sort(&mut self)
    where
        T: Ord,
    {
        mergesort::sort(self.as_parallel_slice_mut(), &T::cmp);
    }

    /// Sorts the slice stably with a comparator, in parallel.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let mut scores = [("ana", 7), ("bo", 9), ("cy", 7), ("di", 3)];
    /// // Highest score first; the two 7s keep their order.
    /// scores.par_sort_by(|a, b| b.1.cmp(&a.1));
    /// assert_eq!(scores, [("bo", 9), ("ana", 7), ("cy", 7), ("di", 3)]);
    /// ```
    ///
    /// # Panics
    /// If `compare` panics (the panic propagates; every element is still in the slice
    /// exactly once).
    /// May also panic if `compare` is not a total order, as the standard library's sorts
    /// may (Rust 1.81 and later), whose code sorts the pieces; every element is still in
    /// the slice exactly once. This differs from Rayon, whose sorts then return in an
    /// unspecified order.
    fn par_sort_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> Ordering + Sync,
    {
        mergesort::sort(self.as_parallel_slice_mut(), &compare);
    }

    /// Sorts the slice stably by a key that is computed once per element, in parallel
    /// (like `slice::sort_by_cached_key`): for keys that are expensive to compute. Uses a
    /// buffer of one `(key, index)` pair per element.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let mut words = ["sumac", "is", "a", "runtime"];
    /// words.par_sort_by_cached_key(|w| w.len());
    /// assert_eq!(words, ["a", "is", "sumac", "runtime"]);
    /// ```
    ///
    /// # Panics
    /// If `f` panics (the panic propagates and the slice is unchanged).
    fn par_sort_by_cached_key<K, F>(&mut self, f: F)
    where
        F: Fn(&T) -> K + Sync,
        K: Ord + Send,
    {
        let slice = self.as_parallel_slice_mut();
        if slice.len() < 2 {
            return;
        }
        // Each element is borrowed by exactly one worker (through `&mut`), so `T` need
        // not be `Sync`. Ties between keys are broken by the index: the sort is stable.
        let mut keys: Vec<(K, usize)> = slice
            .par_iter_mut()
            .enumerate()
            .map(|(i, x)| (f(x), i))
            .collect();
        keys.par_sort_unstable();
        // Apply the permutation in place: position `i` receives the element that was at
        // `keys[i].1`. Earlier swaps moved an element from a position `< i`; follow the
        // chain of recorded moves to where it is now.
        for i in 0..slice.len() {
            let mut from = keys[i].1;
            while from < i {
                from = keys[from].1;
            }
            keys[i].1 = from;
            slice.swap(i, from);
        }
    }

    /// Sorts the slice stably by a key, in parallel (the key is computed for every
    /// comparison, so it should be cheap; see
    /// [`par_sort_by_cached_key`](Self::par_sort_by_cached_key) otherwise).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let mut offsets = [-4i32, 3, -1, 4, 1];
    /// offsets.par_sort_by_key(|x| x.abs());
    /// // -4 came before 4, and -1 before 1: equal keys keep their order.
    /// assert_eq!(offsets, [-1, 1, 3, -4, 4]);
    ///
    /// // Long enough to be split: stability holds across the pieces too.
    /// let mut tagged: Vec<(u8, usize)> = (0..10_000).map(|i| ((i * 37 % 5) as u8, i)).collect();
    /// tagged.par_sort_by_key(|&(key, _)| key);
    /// assert!(tagged.windows(2).all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1)));
    /// ```
    ///
    /// # Panics
    /// If `f` panics (the panic propagates; every element is still in the slice exactly
    /// once).
    /// May also panic if `K`'s `Ord` is not a total order, as the standard library's sorts
    /// may (Rust 1.81 and later), whose code sorts the pieces; every element is still in
    /// the slice exactly once. This differs from Rayon, whose sorts then return in an
    /// unspecified order.
    fn par_sort_by_key<K, F>(&mut self, f: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync,
    {
        mergesort::sort(self.as_parallel_slice_mut(), &|a: &T, b: &T| {
            f(a).cmp(&f(b))
        });
    }

    /// Sorts the slice without keeping the order of equal elements (in place, no
    /// allocation), in parallel.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let mut v = [5, 4, 1, 3, 2];
    /// v.par_sort_unstable();
    /// assert_eq!(v, [1, 2, 3, 4, 5]);
    /// ```
    ///
    /// # Panics
    /// May panic if `T`'s `Ord` is not a total order, as the standard library's sorts
    /// may (Rust 1.81 and later), whose code sorts the pieces; every element is still in
    /// the slice exactly once. This differs from Rayon, whose sorts then return in an
    /// unspecified order.
    fn par_sort_unstable(&mut self)
    where
        T: Ord,
    {
        quicksort::sort(self.as_parallel_slice_mut(), &T::cmp);
    }

    /// Sorts the slice with a comparator, without keeping the order of equal elements.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let mut v: Vec<f64> = vec![2.5, -1.0, 0.25, 10.0, 0.0];
    /// // `f64` is not `Ord`; `total_cmp` is a total order.
    /// v.par_sort_unstable_by(|a, b| b.total_cmp(a));
    /// assert_eq!(v, [10.0, 2.5, 0.25, 0.0, -1.0]);
    /// ```
    ///
    /// # Panics
    /// If `compare` panics (the panic propagates; every element is still in the slice
    /// exactly once).
    /// May also panic if `compare` is not a total order, as the standard library's sorts
    /// may (Rust 1.81 and later), whose code sorts the pieces; every element is still in
    /// the slice exactly once. This differs from Rayon, whose sorts then return in an
    /// unspecified order.
    fn par_sort_unstable_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> Ordering + Sync,
    {
        quicksort::sort(self.as_parallel_slice_mut(), &compare);
    }

    /// Sorts the slice by a key, without keeping the order of equal elements.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let mut names = ["carol", "al", "bea", "dominic"];
    /// names.par_sort_unstable_by_key(|name| name.len());
    /// assert_eq!(names, ["al", "bea", "carol", "dominic"]);
    /// ```
    ///
    /// # Panics
    /// If `f` panics (the panic propagates; every element is still in the slice exactly
    /// once).
    /// May also panic if `K`'s `Ord` is not a total order, as the standard library's sorts
    /// may (Rust 1.81 and later), whose code sorts the pieces; every element is still in
    /// the slice exactly once. This differs from Rayon, whose sorts then return in an
    /// unspecified order.
    fn par_sort_unstable_by_key<K, F>(&mut self, f: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync,
    {
        quicksort::sort(self.as_parallel_slice_mut(), &|a: &T, b: &T| {
            f(a).cmp(&f(b))
        });
    }
}

impl<T: Send> ParallelSliceMut<T> for [T] {
    fn as_parallel_slice_mut(&mut self) -> &mut [T] {
        self
    }
}

/// Slices of at most this many elements are sorted sequentially by the standard library
/// (an algorithmic base case: below it, splitting the sort would not pay off; far fewer
/// under Miri, so that its small inputs reach the parallel partitions).
const SEQUENTIAL_SORT: usize = if cfg!(miri) { 48 } else { 2048 };

/// What `join` is told about a piece of a parallel sort of `len` elements (a range to
/// sort, or runs to merge): large from [`LARGE_SORT_PIECE`] elements on.
fn piece_size(len: usize) -> ForkSize {
    if len >= LARGE_SORT_PIECE {
        ForkSize::Large
    } else {
        ForkSize::Unknown
    }
}
