//! Parallel iterators over integer ranges (`start..end`) of every primitive integer type.
//!
//! Ranges whose length always fits in a `usize` (`u8` to `u32`, `i8` to `i32`, `usize`,
//! `isize`, and `u64`/`i64` on 64-bit targets) are indexed; `u128`/`i128` ranges (and
//! `u64`/`i64` on smaller targets) are not, and a range longer than `usize::MAX` is
//! split in halves before it is driven.
//!
//! `char` ranges are indexed too; they skip the surrogate code points, as sequential
//! `char` ranges do (`('a'..'e').into_par_iter()` gives `'a'`, `'b'`, `'c'`, `'d'`).
//!
//! ```
//! use sumac::prelude::*;
//! let r = (0..100u8).into_par_iter();
//! assert_eq!(r.len(), 100);
//! assert_eq!(r.map(u32::from).sum::<u32>(), 4950);
//! let big = (0..1u128 << 100).into_par_iter();
//! assert_eq!(big.find_first(|&x| x > 5), Some(6));
//! assert_eq!(('a'..'e').into_par_iter().collect::<String>(), "abcd");
//! ```

use std::ops::Range;

use super::plumbing::{
    bridge_producer_consumer, Consumer, Producer, ProducerCallback, Reducer as _, UnindexedConsumer,
};
use super::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

/// The primitive integer types, which can be iterated over in parallel ranges (sealed:
/// implemented for `u8` to `u128`, `i8` to `i128`, `usize` and `isize`).
pub trait RangeInteger: sealed::Sealed + Copy + Send + Sync + Ord + 'static {
    /// `self + n`, wrapping (the result is always in range where it is used).
    #[doc(hidden)]
    fn add_usize(self, n: usize) -> Self;
    /// `self + n`, wrapping.
    #[doc(hidden)]
    fn add_u128(self, n: u128) -> Self;
    /// `end - start` for `start <= end`.
    #[doc(hidden)]
    fn diff(start: Self, end: Self) -> u128;
}

/// Integer types whose `start..end` ranges are indexed (their length always fits in a
/// `usize`).
pub trait IndexedRangeInteger: RangeInteger {}

pub(crate) mod sealed {
    /// Prevents implementations outside this crate.
    pub trait Sealed {}
}

macro_rules! impl_int {
    ($($t:ty)*) => {$(
        impl sealed::Sealed for $t {}

        impl RangeInteger for $t {
            #[inline(always)]
            fn add_usize(self, n: usize) -> Self {
                self.wrapping_add(n as $t)
            }
            #[inline(always)]
            fn add_u128(self, n: u128) -> Self {
                self.wrapping_add(n as $t)
            }
            #[inline(always)]
            fn diff(start: Self, end: Self) -> u128 {
                (end as u128).wrapping_sub(start as u128)
            }
        }
    )*};
}

impl_int!(u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize);

/// `len` consecutive integers from `start`.
pub(crate) struct RangeProducer<T> {
    pub(crate) start: T,
    pub(crate) len: usize,
}

impl<T: RangeInteger> Producer for RangeProducer<T> {
    type Item = T;
    type IntoIter = RangeSeq<T>;
    #[inline]
    fn into_iter(self) -> RangeSeq<T> {
        RangeSeq {
            start: self.start,
            offsets: 0..self.len,
        }
    }
    #[inline]
    fn split_at(self, index: usize) -> (Self, Self) {
        debug_assert!(index <= self.len);
        (
            RangeProducer {
                start: self.start,
                len: index,
            },
            RangeProducer {
                start: self.start.add_usize(index),
                len: self.len - index,
            },
        )
    }
}

/// The sequential iterator of a range producer: `start + i` for the offsets `i`.
#[derive(Clone, Debug)]
pub struct RangeSeq<T> {
    start: T,
    offsets: Range<usize>,
}

impl<T: RangeInteger> Iterator for RangeSeq<T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        self.offsets.next().map(|i| self.start.add_usize(i))
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.offsets.size_hint()
    }
    /// In constant time (`step_by` skips through `nth`: without it, `step_by(k)` walked
    /// every skipped integer, and `(0..usize::MAX).into_par_iter().step_by(usize::MAX)`
    /// never finished).
    #[inline]
    fn nth(&mut self, n: usize) -> Option<T> {
        self.offsets.nth(n).map(|i| self.start.add_usize(i))
    }
    #[inline]
    fn fold<B, F: FnMut(B, T) -> B>(self, init: B, mut f: F) -> B {
        let start = self.start;
        self.offsets
            .fold(init, move |acc, i| f(acc, start.add_usize(i)))
    }
}

impl<T: RangeInteger> DoubleEndedIterator for RangeSeq<T> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        self.offsets.next_back().map(|i| self.start.add_usize(i))
    }
    #[inline]
    fn nth_back(&mut self, n: usize) -> Option<T> {
        self.offsets.nth_back(n).map(|i| self.start.add_usize(i))
    }
}

impl<T: RangeInteger> ExactSizeIterator for RangeSeq<T> {}

/// Drives `len` integers from `start`, splitting lengths beyond `usize::MAX` in halves.
/// Such a split asks the consumer for position `usize::MAX / 2`, which is not the
/// half's: positions beyond `usize::MAX` cannot be named, and the iterator's index span
/// saturates at `usize::MAX`. A consumer that orders pieces by position treats that span
/// as having no positions (`find_first`/`find_last` halve a made-up range at every
/// split, see `iter::find`).
pub(crate) fn drive_long<T: RangeInteger, C: Consumer<T>>(
    start: T,
    len: u128,
    consumer: C,
) -> C::Result {
    if let Ok(len) = usize::try_from(len) {
        return bridge_producer_consumer(len, RangeProducer { start, len }, consumer);
    }
    if consumer.full() {
        return super::plumbing::Folder::complete(consumer.into_folder());
    }
    let half = len / 2;
    let (left, right, reducer) = consumer.split_at(usize::try_from(half).unwrap_or(usize::MAX / 2));
    let (l, r) = crate::join(
        move || drive_long(start, half, left),
        move || drive_long(start.add_u128(half), len - half, right),
    );
    reducer.reduce(l, r)
}

/// A parallel iterator over `start..end` (from [`IntoParallelIterator`] on a range).
#[derive(Clone, Debug)]
pub struct Iter<T> {
    pub(crate) range: Range<T>,
}

/// The length of `start..end` as a `u128`.
fn long_len<T: RangeInteger>(range: &Range<T>) -> u128 {
    if range.start < range.end {
        T::diff(range.start, range.end)
    } else {
        0
    }
}

/// One generic impl (rather than one per integer type), so that an unsuffixed literal
/// range like `(0..10).into_par_iter()` falls back to `i32` as with sequential ranges.
impl<T> IntoParallelIterator for Range<T>
where
    Iter<T>: ParallelIterator,
{
    type Iter = Iter<T>;
    type Item = <Iter<T> as ParallelIterator>::Item;
    fn into_par_iter(self) -> Iter<T> {
        Iter { range: self }
    }
}

impl<T: RangeInteger> ParallelIterator for Iter<T> {
    type Item = T;
    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        drive_long(self.range.start, long_len(&self.range), consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        usize::try_from(long_len(&self.range)).ok()
    }
    fn index_span(&self) -> usize {
        self.opt_len().unwrap_or(usize::MAX)
    }
}

impl<T: IndexedRangeInteger> IndexedParallelIterator for Iter<T> {
    fn len(&self) -> usize {
        long_len(&self.range) as usize
    }
    fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
        let len = IndexedParallelIterator::len(&self);
        callback.callback(RangeProducer {
            start: self.range.start,
            len,
        })
    }
}

impl IndexedRangeInteger for u8 {}
impl IndexedRangeInteger for u16 {}
impl IndexedRangeInteger for u32 {}
impl IndexedRangeInteger for usize {}
impl IndexedRangeInteger for i8 {}
impl IndexedRangeInteger for i16 {}
impl IndexedRangeInteger for i32 {}
impl IndexedRangeInteger for isize {}
#[cfg(target_pointer_width = "64")]
impl IndexedRangeInteger for u64 {}
#[cfg(target_pointer_width = "64")]
impl IndexedRangeInteger for i64 {}
