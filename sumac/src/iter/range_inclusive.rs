//! Parallel iterators over inclusive integer ranges (`start..=end`) of every primitive
//! integer type.
//!
//! Inclusive ranges of `u8`, `u16`, `i8`, `i16` (and `u32`, `i32` on 64-bit targets) are
//! indexed; the others are not, since `0..=MAX` has one more item than the type has
//! values below `MAX`. Inclusive `char` ranges are indexed and skip the surrogate code
//! points.
//!
//! ```
//! use sumac::prelude::*;
//! assert_eq!((0..=u8::MAX).into_par_iter().len(), 256);
//! assert_eq!((1..=100u64).into_par_iter().sum::<u64>(), 5050);
//! assert_eq!(('\u{D7FF}'..='\u{E000}').into_par_iter().len(), 2);
//! ```

use std::ops::RangeInclusive;

use super::plumbing::{
    bridge_producer_consumer, Consumer, ProducerCallback, Reducer, UnindexedConsumer,
};
use super::range::{drive_long, RangeInteger, RangeProducer};
use super::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

/// A parallel iterator over `start..=end` (from [`IntoParallelIterator`] on an inclusive
/// range).
#[derive(Clone, Debug)]
pub struct Iter<T> {
    pub(crate) range: RangeInclusive<T>,
}

/// `end - start` (one less than the length) for a non-empty range.
fn last_offset<T: RangeInteger>(range: &RangeInclusive<T>) -> Option<u128> {
    if range.is_empty() {
        None
    } else {
        Some(T::diff(*range.start(), *range.end()))
    }
}

fn opt_len<T: RangeInteger>(range: &RangeInclusive<T>) -> Option<usize> {
    match last_offset(range) {
        None => Some(0),
        Some(n) => usize::try_from(n).ok()?.checked_add(1),
    }
}

fn drive<T: RangeInteger, C: Consumer<T>>(range: RangeInclusive<T>, consumer: C) -> C::Result {
    let start = *range.start();
    match last_offset(&range) {
        None => bridge_producer_consumer(0, RangeProducer { start, len: 0 }, consumer),
        Some(n) if n < u128::MAX => drive_long(start, n + 1, consumer),
        Some(n) => {
            // The whole 128-bit range: `start..end` then `end`.
            let end = *range.end();
            let (left, right, reducer) = consumer.split_at(usize::MAX - 1);
            let (l, r) = crate::join(
                move || drive_long(start, n, left),
                move || bridge_producer_consumer(1, RangeProducer { start: end, len: 1 }, right),
            );
            reducer.reduce(l, r)
        }
    }
}

/// One generic impl, so that unsuffixed literal ranges fall back to `i32`.
impl<T> IntoParallelIterator for RangeInclusive<T>
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
        drive(self.range, consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        opt_len(&self.range)
    }
    fn index_span(&self) -> usize {
        opt_len(&self.range).unwrap_or(usize::MAX)
    }
}

impl<T: IndexedInclusiveInteger> IndexedParallelIterator for Iter<T> {
    fn len(&self) -> usize {
        opt_len(&self.range).expect("range length fits in usize")
    }
    fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
        let len = IndexedParallelIterator::len(&self);
        callback.callback(RangeProducer {
            start: *self.range.start(),
            len,
        })
    }
}

/// Integer types whose `start..=end` ranges are indexed (their length always fits in a
/// `usize`, even for `0..=MAX`).
pub trait IndexedInclusiveInteger: RangeInteger {}

impl IndexedInclusiveInteger for u8 {}
impl IndexedInclusiveInteger for u16 {}
impl IndexedInclusiveInteger for i8 {}
impl IndexedInclusiveInteger for i16 {}
#[cfg(target_pointer_width = "64")]
impl IndexedInclusiveInteger for u32 {}
#[cfg(target_pointer_width = "64")]
impl IndexedInclusiveInteger for i32 {}
