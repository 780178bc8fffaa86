//! Loops over the *parts* of a sequence whose parts cannot be counted without reading
//! it: the chars, lines, words and split pieces of a string. (The pieces of a split
//! slice have a loop of their own, in `slice.rs`, which runs each predicate test once.)
//!
//! The loop runs over the sequence's *positions* (byte offsets), which split anywhere at
//! no cost like any other index range. A [`PartKind`]
//! says where parts start and what they are. A block of positions `lo..hi` finds its
//! first part start with a search that stays inside the block, then runs the sequence's
//! own iterator (`str::lines`, `str::split`, ...) from there until a part starts at
//! `hi` or later. So a piece of the loop yields exactly the parts that start inside it,
//! however the positions were split, and the parts come out in order, equal to what the
//! sequential method yields.
//!
//! The positions are an indexed producer whose items are `Option<part>` (a part where
//! one starts, else `None`), which the public iterators filter; its
//! [`fold_with`](super::plumbing::Producer::fold_with) skips the `None`s, so the loop
//! never visits positions one by one.

use std::ops::Range;

use super::plumbing::{Folder, Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};

/// A sequence whose parts a loop can run over: a `&str`.
pub(crate) trait Hay: Copy + Send + Sync {
    /// The number of positions (bytes, elements).
    fn len(self) -> usize;
}

impl Hay for &str {
    fn len(self) -> usize {
        str::len(self)
    }
}

/// A kind of part of the sequence `H`: where parts start, and what they are.
pub(crate) trait PartKind<H: Hay>: Copy + Send + Sync {
    type Part: Send;
    /// The number of positions a part may start at (the length, or one more where an
    /// empty part may start at the very end).
    fn positions(hay: H) -> usize {
        hay.len()
    }
    /// The first position in `lo..hi` (`lo < hi <= positions`) where a part starts; the
    /// search stays within that range.
    fn first_start(self, hay: H, lo: usize, hi: usize) -> Option<usize>;
    /// The parts from the one that starts at `from` on, each with its start: the
    /// sequence's own iterator, run on the rest of it.
    fn parts_from(self, hay: H, from: usize) -> impl Iterator<Item = (usize, Self::Part)>;
    /// The parts that start in `lo..hi`, in order.
    fn parts_in(self, hay: H, lo: usize, hi: usize) -> impl Iterator<Item = Self::Part> {
        let first = self.first_start(hay, lo, hi);
        first
            .into_iter()
            .flat_map(move |first| self.parts_from(hay, first))
            .take_while(move |&(start, _)| start < hi)
            .map(|(_, part)| part)
    }
}

/// The positions `range` of `hay`: for each, the part of kind `K` that starts there, if
/// any.
struct PartsProducer<H, K> {
    hay: H,
    range: Range<usize>,
    kind: K,
}

impl<H: Hay, K: PartKind<H>> Producer for PartsProducer<H, K> {
    type Item = Option<K::Part>;
    type IntoIter = PartsIter<H, K>;
    fn into_iter(self) -> PartsIter<H, K> {
        PartsIter {
            hay: self.hay,
            range: self.range,
            kind: self.kind,
        }
    }
    /// Jumps from part to part instead of visiting every position: only the parts are
    /// passed on (the `None`s of the other positions would be dropped by the `filter_map`
    /// that every public iterator of parts puts on top of this producer).
    fn fold_with<F>(self, folder: F) -> F
    where
        F: Folder<Self::Item>,
    {
        let Range { start: lo, end: hi } = self.range;
        if lo == hi {
            return folder;
        }
        folder.consume_iter(self.kind.parts_in(self.hay, lo, hi).map(Some))
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let mid = self.range.start + index;
        let piece = |range| PartsProducer {
            hay: self.hay,
            range,
            kind: self.kind,
        };
        (piece(self.range.start..mid), piece(mid..self.range.end))
    }
}

struct PartsIter<H, K> {
    hay: H,
    range: Range<usize>,
    kind: K,
}

impl<H: Hay, K: PartKind<H>> Iterator for PartsIter<H, K> {
    type Item = Option<K::Part>;
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let pos = self.range.next()?;
        Some(self.kind.parts_in(self.hay, pos, pos + 1).next())
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.range.size_hint()
    }
}

impl<H: Hay, K: PartKind<H>> DoubleEndedIterator for PartsIter<H, K> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let pos = self.range.next_back()?;
        Some(self.kind.parts_in(self.hay, pos, pos + 1).next())
    }
}

impl<H: Hay, K: PartKind<H>> ExactSizeIterator for PartsIter<H, K> {}

/// Every position of `hay` with the part that starts there, if any: an indexed
/// iterator, which the public iterators filter.
pub(crate) struct Positions<H, K> {
    pub(crate) hay: H,
    pub(crate) kind: K,
}

impl<H: Hay, K: PartKind<H>> ParallelIterator for Positions<H, K> {
    type Item = Option<K::Part>;
    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        super::drive_indexed(self, consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(K::positions(self.hay))
    }
}

impl<H: Hay, K: PartKind<H>> IndexedParallelIterator for Positions<H, K> {
    fn len(&self) -> usize {
        K::positions(self.hay)
    }
    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        callback.callback(PartsProducer {
            hay: self.hay,
            range: 0..K::positions(self.hay),
            kind: self.kind,
        })
    }
}

/// Declares a public iterator over the parts of a sequence: the struct (the sequence in
/// field `$hay`, and `$field`s), and its `ParallelIterator` impl, which keeps the parts
/// found at the positions.
macro_rules! parts_iterator {
    ($(#[$doc:meta])* $name:ident<'a $(, $p:ident $(: $bound:path)?)*> { $hay:ident: $hay_ty:ty $(, $field:ident: $ty:ty)* }
     where [$($bounds:tt)*] => $item:ty, |$this:ident| $kind:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $name<'a $(, $p)*> {
            $hay: $hay_ty,
            $($field: $ty),*
        }

        impl<'a $(, $p $(: $bound)?)*> ParallelIterator for $name<'a $(, $p)*>
        where
            $($bounds)*
        {
            type Item = $item;
            fn drive_unindexed<C: UnindexedConsumer<$item>>(self, consumer: C) -> C::Result {
                let $this = &self;
                let kind = $kind;
                $crate::iter::parts::Positions { hay: self.$hay, kind }
                    .filter_map(|part| part)
                    .drive_unindexed(consumer)
            }
            fn index_span(&self) -> usize {
                let $this = self;
                let kind = $kind;
                IndexedParallelIterator::len(&$crate::iter::parts::Positions { hay: self.$hay, kind })
            }
        }
    };
}
pub(crate) use parts_iterator;
