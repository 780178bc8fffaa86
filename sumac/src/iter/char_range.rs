//! Parallel iterators over `char` ranges (`'a'..'z'` and `'a'..='z'`), indexed, as in
//! Rayon.
//!
//! A `char` range skips the surrogate code points `U+D800..=U+DFFF`, which are not
//! `char`s. The producer therefore counts in a *gapless* index space: code points below
//! the gap keep their value, those above it move down by the gap's width. Splitting and
//! indexing work on that space, so a range that straddles the gap splits evenly by the
//! number of `char`s on each side, not by code point.
//!
//! ```
//! use sumac::prelude::*;
//! let letters: String = ('a'..='e').into_par_iter().collect();
//! assert_eq!(letters, "abcde");
//! // The surrogates are skipped: U+D7FF is followed by U+E000.
//! let around_gap: Vec<char> = ('\u{D7FE}'..'\u{E002}').into_par_iter().collect();
//! assert_eq!(around_gap, ['\u{D7FE}', '\u{D7FF}', '\u{E000}', '\u{E001}']);
//! assert_eq!(('\0'..=char::MAX).into_par_iter().len(), 0x11_0000 - 0x800);
//! ```

use std::ops::Range;

use super::plumbing::{Producer, ProducerCallback, UnindexedConsumer};
use super::{drive_indexed, range, range_inclusive, IndexedParallelIterator, ParallelIterator};

/// The first surrogate code point.
const GAP_START: u32 = 0xD800;
/// How many surrogate code points there are (`U+D800..=U+DFFF`).
const GAP_LEN: u32 = 0x800;

/// A `char`'s position in the gapless index space.
#[inline]
fn index_of(c: char) -> u32 {
    let code = u32::from(c);
    if code < GAP_START {
        code
    } else {
        code - GAP_LEN
    }
}

/// The `char` at a position of the gapless index space.
#[inline]
fn char_at(index: u32) -> char {
    let code = if index < GAP_START {
        index
    } else {
        index + GAP_LEN
    };
    // Every index below `index_of(char::MAX) + 1` maps to a scalar value; the producers
    // only hand out indices of chars inside their range.
    char::from_u32(code).expect("a char range index maps to a scalar value")
}

/// The chars at the gapless indices `indices`.
pub(crate) struct CharProducer {
    indices: Range<u32>,
}

impl CharProducer {
    fn new(indices: Range<u32>) -> Self {
        debug_assert!(indices.start <= indices.end);
        debug_assert!(indices.end <= index_of(char::MAX) + 1);
        CharProducer { indices }
    }

    fn len(&self) -> usize {
        self.indices.len()
    }
}

impl Producer for CharProducer {
    type Item = char;
    type IntoIter = CharSeq;
    #[inline]
    fn into_iter(self) -> CharSeq {
        CharSeq {
            indices: self.indices,
        }
    }
    #[inline]
    fn split_at(self, index: usize) -> (Self, Self) {
        debug_assert!(index <= self.len());
        // `index <= len <= 0x10F800`, so it fits in a `u32`.
        let mid = self.indices.start + index as u32;
        (
            CharProducer::new(self.indices.start..mid),
            CharProducer::new(mid..self.indices.end),
        )
    }
}

/// The sequential iterator of a `char` range producer.
#[derive(Clone, Debug)]
pub struct CharSeq {
    indices: Range<u32>,
}

impl Iterator for CharSeq {
    type Item = char;
    #[inline]
    fn next(&mut self) -> Option<char> {
        self.indices.next().map(char_at)
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.indices.size_hint()
    }
    /// In constant time (`step_by` and `skip` go through it).
    #[inline]
    fn nth(&mut self, n: usize) -> Option<char> {
        self.indices.nth(n).map(char_at)
    }
    #[inline]
    fn fold<B, F: FnMut(B, char) -> B>(self, init: B, mut f: F) -> B {
        self.indices.fold(init, move |acc, i| f(acc, char_at(i)))
    }
}

impl DoubleEndedIterator for CharSeq {
    #[inline]
    fn next_back(&mut self) -> Option<char> {
        self.indices.next_back().map(char_at)
    }
    #[inline]
    fn nth_back(&mut self, n: usize) -> Option<char> {
        self.indices.nth_back(n).map(char_at)
    }
}

impl ExactSizeIterator for CharSeq {}

/// The gapless indices of `start..end` (empty when `end <= start`).
fn half_open_indices(range: &Range<char>) -> Range<u32> {
    let start = index_of(range.start);
    start..index_of(range.end).max(start)
}

/// The gapless indices of `start..=end` (empty when `end < start`, or when the range
/// was exhausted by sequential iteration).
fn inclusive_indices(range: &std::ops::RangeInclusive<char>) -> Range<u32> {
    if range.is_empty() {
        return 0..0;
    }
    index_of(*range.start())..index_of(*range.end()) + 1
}

macro_rules! char_range_iter {
    ($module:ident, $indices:ident) => {
        impl ParallelIterator for $module::Iter<char> {
            type Item = char;
            fn drive_unindexed<C: UnindexedConsumer<char>>(self, consumer: C) -> C::Result {
                drive_indexed(self, consumer)
            }
            fn opt_len(&self) -> Option<usize> {
                Some(IndexedParallelIterator::len(self))
            }
        }

        impl IndexedParallelIterator for $module::Iter<char> {
            fn len(&self) -> usize {
                $indices(&self.range).len()
            }
            fn with_producer<CB: ProducerCallback<char>>(self, callback: CB) -> CB::Output {
                #[allow(clippy::redundant_closure_call)]
                callback.callback(CharProducer::new($indices(&self.range)))
            }
        }
    };
}

char_range_iter!(range, half_open_indices);
char_range_iter!(range_inclusive, inclusive_indices);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_space_has_no_gap_and_round_trips() {
        assert_eq!(index_of('\u{D7FF}') + 1, index_of('\u{E000}'));
        assert_eq!(index_of(char::MAX), 0x10_FFFF - GAP_LEN);
        for code in (0..=0x10_FFFFu32)
            .step_by(97)
            .chain([0xD7FF, 0xE000, 0x10_FFFF])
        {
            if let Some(c) = char::from_u32(code) {
                assert_eq!(char_at(index_of(c)), c);
            }
        }
    }

    #[test]
    fn a_split_across_the_gap_counts_chars() {
        let producer = CharProducer::new(half_open_indices(&('\u{D7FE}'..'\u{E002}')));
        assert_eq!(producer.len(), 4);
        let (left, right) = producer.split_at(2);
        assert_eq!(left.into_iter().collect::<String>(), "\u{D7FE}\u{D7FF}");
        assert_eq!(
            right.into_iter().rev().collect::<String>(),
            "\u{E001}\u{E000}"
        );
    }
}
