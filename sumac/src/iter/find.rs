//! Short-circuiting searches: `find_any`, `find_first`, `find_last` (and, built on them,
//! `any`, `all`, `position_*`, `try_for_each`).
//!
//! Pieces of the loop are identified by their start and end positions, 128-bit numbers
//! that grow with the items' sequential order. A piece that finds a match publishes its
//! start (see [`Best`]); a piece that lies entirely after (for `find_first`) or before
//! (for `find_last`) a piece with a match stops at its next block boundary.
//!
//! Where the producer has positions (an index span that fits a `usize`), item `i` of the
//! root sits at `i << shift`, the shift chosen so that the whole span fits below 2^127;
//! the `shift` low bits are a made-up sub-range inside each item. A split at an index
//! inside the piece's range cuts it at that item. A split at an index the range has no
//! room for (the inner loops of `flat_map`, driven into the consumer of one outer
//! position; a range longer than `usize::MAX`, halved by the range driver; a split at the
//! very end of a piece) halves the range instead, whatever position it asks for, as
//! Rayon does with its whole range (single items split off one after another get a
//! shrinking share instead of half, see `split_point`): a left piece always holds
//! earlier items, which is all the stopping rule needs. So pieces inside one position
//! still order themselves, down to `shift` (63 or more) nested splits.
//!
//! Iterators whose items have no positions (`par_bridge`, `walk_tree`, `iter::split`)
//! have an index span of 0, and a span of `usize::MAX` may be a longer range's,
//! saturated: for them the root covers `0..2^127` and every split halves. A piece that
//! hands its rest on (`detach`) where the position of the rest is unknown gives the rest
//! its whole range: the folded part has stopped, so sharing its start costs nothing.
//! Once a range is down to one position, pieces with the same start never stop each
//! other: the answer is still right, only found later.

use std::sync::atomic::Ordering;

use crate::sync::{lock, AtomicU64, Mutex};

use super::plumbing::{Consumer, Folder, Reducer, UnindexedConsumer};
use super::ParallelIterator;

/// The end of the root range: positions (and the high half of a position) stay below
/// 2^127 (2^63), so `u64::MAX` is never the high half of a position.
const ROOT_END: u128 = 1 << 127;

/// The `shift` of pieces whose positions are made up (every split halves): real shifts
/// are at least 63.
const MADE_UP: u32 = 0;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Mode {
    Any,
    First,
    Last,
}

pub(super) fn find<I, P>(iter: I, predicate: &P, mode: Mode) -> Option<I::Item>
where
    I: ParallelIterator,
    P: Fn(&I::Item) -> bool + Sync,
{
    let span = iter.index_span();
    let (end, shift) = if span == 0 || span == usize::MAX {
        (ROOT_END, MADE_UP)
    } else {
        // `span < 2^(64 - zeros)`, so `span << shift < 2^127`.
        let shift = 63 + (span as u64).leading_zeros();
        ((span as u128) << shift, shift)
    };
    let best = Best::new(mode);
    iter.drive_unindexed(FindConsumer {
        predicate,
        best: &best,
        mode,
        start: 0,
        end,
        shift,
        peels: 0,
    })
}

/// The best position published so far: for `find_first` the smallest start of a piece
/// with a match (`u128::MAX`: none), for `find_last` the largest (0: none, which stops no
/// piece either), for `find_any` only whether one was found (`hi` is no longer
/// `u64::MAX`).
///
/// Stable Rust has no 128-bit atomic: the two halves are stored apart, and written only
/// under `write` (once per piece that finds a match). A reader loads `hi` first; mostly
/// that alone decides, as a piece whose start has another high half is then entirely
/// before or after the best. Readers may see the halves of two different writes, so a
/// writer that changes `hi` first sets `lo` to the bound that makes every mix of old and
/// new halves a position no better than one actually published (at most `u64::MAX` for
/// `find_first`, at least 0 for `find_last`), then `hi` (release), then `lo`. A reader
/// that sees the new `hi` (acquire) sees that bound or the new `lo`; one that sees an
/// older `hi` pairs it with a later `lo`, a position beyond which a published one lies
/// in the better direction. So a piece never stops unless a match was published that
/// comes before (after) all of its items.
pub(crate) struct Best {
    hi: AtomicU64,
    lo: AtomicU64,
    write: Mutex<()>,
}

impl Best {
    pub(crate) fn new(mode: Mode) -> Self {
        let none = match mode {
            Mode::Any | Mode::First => u64::MAX,
            Mode::Last => 0,
        };
        Best {
            hi: AtomicU64::new(none),
            lo: AtomicU64::new(none),
            write: Mutex::new(()),
        }
    }

    /// Whether a published match comes before (`find_first`) or after (`find_last`) a
    /// piece starting at `start`, hence all of its items (or any was found, for
    /// `find_any`). One load, two when the high halves are equal.
    #[inline]
    pub(crate) fn stops(&self, mode: Mode, start: u128) -> bool {
        let hi = self.hi.load(Ordering::Acquire);
        let (start_hi, start_lo) = ((start >> 64) as u64, start as u64);
        match mode {
            Mode::Any => hi != u64::MAX,
            Mode::First => {
                hi < start_hi || (hi == start_hi && self.lo.load(Ordering::Relaxed) < start_lo)
            }
            Mode::Last => {
                hi > start_hi || (hi == start_hi && self.lo.load(Ordering::Relaxed) > start_lo)
            }
        }
    }

    /// Publishes `start`, the start of a piece with a match, if it is better than the
    /// best so far (see the type's comment for the order of the stores).
    pub(crate) fn publish(&self, mode: Mode, start: u128) {
        if mode == Mode::Any {
            self.hi.store(0, Ordering::Relaxed);
            return;
        }
        let _write = lock(&self.write);
        // Exact: every write happened under the lock.
        let (hi, lo) = (
            self.hi.load(Ordering::Relaxed),
            self.lo.load(Ordering::Relaxed),
        );
        let current = (hi as u128) << 64 | lo as u128;
        let (better, bound) = match mode {
            Mode::First => (start < current, u64::MAX),
            _ => (start > current, 0),
        };
        if !better {
            return;
        }
        let (start_hi, start_lo) = ((start >> 64) as u64, start as u64);
        if start_hi != hi {
            self.lo.store(bound, Ordering::Relaxed);
            self.hi.store(start_hi, Ordering::Release);
        }
        self.lo.store(start_lo, Ordering::Release);
    }
}

struct FindConsumer<'f, P> {
    predicate: &'f P,
    best: &'f Best,
    mode: Mode,
    /// This piece's positions (`start <= end <= ROOT_END`).
    start: u128,
    end: u128,
    /// Item `i` of the piece sits at `start + (i << shift)` while that is below `end`;
    /// [`MADE_UP`]: every split halves.
    shift: u32,
    /// How many single items were split off the front of this piece's made-up range in
    /// a row (see [`split_point`](Self::split_point)).
    peels: u32,
}

impl<P> FindConsumer<'_, P> {
    fn copy_with(&self, start: u128, end: u128, peels: u32) -> Self {
        FindConsumer {
            predicate: self.predicate,
            best: self.best,
            mode: self.mode,
            start,
            end,
            shift: self.shift,
            peels,
        }
    }

    /// The position of item `index` of this piece, if it lies inside the range.
    #[inline]
    fn position(&self, index: usize) -> Option<u128> {
        let room = self.end - self.start;
        // `index << shift < room`, without overflow (`room <= 2^127`).
        if self.shift == MADE_UP || room == 0 || index as u128 > (room - 1) >> self.shift {
            return None;
        }
        Some(self.start + ((index as u128) << self.shift))
    }

    /// Where a split `index` items in divides this piece's range, and the `peels` of the
    /// right piece: at that item, or, where the range has no room for it, in the middle,
    /// except for a split after one item. A loop that takes its items one at a time off
    /// the front (`flat_map`'s folder, one outer item for each inner loop, inside an
    /// outer `flat_map`) would halve what is left at every item, and the items after the
    /// first 127 or so would get no room, so that none of the pieces of their inner loops
    /// could stop another. The `k`-th single item in a row (from 1) gets
    /// `2^-(1 + floor(log2(k)))` of what is left instead: each doubling of `k` then leaves
    /// about `e^(-1/2)` of the range to the rest, and the `k`-th item still gets about
    /// `2^-(1 + 1.7 log2(k))` of it (18 bits for the 1000th, 35 for the millionth). A
    /// loop's first item, split off alone, still gets half.
    #[inline]
    fn split_point(&self, index: usize) -> (u128, u32) {
        if let Some(mid) = self.position(index) {
            return (mid, 0);
        }
        let room = self.end - self.start;
        if index != 1 {
            return (self.start + room / 2, 0);
        }
        let left = match room >> (1 + (self.peels + 1).ilog2()) {
            0 => room / 2,
            left => left,
        };
        (
            self.start + left,
            self.peels.saturating_add(1).min(u32::MAX - 1),
        )
    }

    /// Whether a published match comes before (`find_first`) or after (`find_last`) all
    /// of this piece's items (or any was found, for `find_any`). Runs at every block
    /// boundary.
    #[inline]
    fn stop(&self) -> bool {
        self.best.stops(self.mode, self.start)
    }

    /// Publishes this piece's start as a match position (once per piece: kept out of
    /// line, away from the search loop).
    #[cold]
    #[inline(never)]
    fn publish(&self) {
        self.best.publish(self.mode, self.start);
    }
}

struct FindFolder<'f, P, T> {
    consumer: FindConsumer<'f, P>,
    item: Option<T>,
}

struct FindReducer(Mode);

impl<T> Reducer<Option<T>> for FindReducer {
    fn reduce(self, left: Option<T>, right: Option<T>) -> Option<T> {
        match self.0 {
            Mode::Any | Mode::First => left.or(right),
            Mode::Last => right.or(left),
        }
    }
}

impl<'f, T, P> Consumer<T> for FindConsumer<'f, P>
where
    T: Send,
    P: Fn(&T) -> bool + Sync,
{
    type Folder = FindFolder<'f, P, T>;
    type Reducer = FindReducer;
    type Result = Option<T>;
    const DETACHES: bool = true;
    fn split_at(self, index: usize) -> (Self, Self, FindReducer) {
        let (mid, peels) = self.split_point(index);
        (
            self.copy_with(self.start, mid, 0),
            self.copy_with(mid, self.end, peels),
            FindReducer(self.mode),
        )
    }
    fn into_folder(self) -> Self::Folder {
        FindFolder {
            consumer: self,
            item: None,
        }
    }
    fn detach(folder: Self::Folder, consumed: usize) -> (Option<T>, Self, FindReducer) {
        let c = &folder.consumer;
        // Where the rest's position is unknown it keeps the whole range: the folded part
        // needs no room, as it has stopped (and published its match, if any).
        let rest = c.copy_with(c.position(consumed).unwrap_or(c.start), c.end, 0);
        (folder.item, rest, FindReducer(c.mode))
    }
    fn full(&self) -> bool {
        self.stop()
    }
}

impl<'f, T, P> UnindexedConsumer<T> for FindConsumer<'f, P>
where
    T: Send,
    P: Fn(&T) -> bool + Sync,
{
    /// The empty range at this consumer's start: the left piece comes first, and its start
    /// is no later than this one's.
    fn split_off_left(&self) -> Self {
        self.copy_with(self.start, self.start, 0)
    }
    fn to_reducer(&self) -> FindReducer {
        FindReducer(self.mode)
    }
}

impl<T, P> Folder<T> for FindFolder<'_, P, T>
where
    P: Fn(&T) -> bool,
{
    type Result = Option<T>;
    fn consume(self, item: T) -> Self {
        self.consume_iter(std::iter::once(item))
    }
    fn consume_iter<I: IntoIterator<Item = T>>(mut self, iter: I) -> Self {
        let predicate = self.consumer.predicate;
        match self.consumer.mode {
            Mode::Any | Mode::First => {
                if self.item.is_none() {
                    if let Some(x) = iter.into_iter().find(|x| predicate(x)) {
                        self.item = Some(x);
                        self.consumer.publish();
                    }
                }
            }
            Mode::Last => {
                if let Some(x) = iter.into_iter().filter(|x| predicate(x)).last() {
                    // A piece publishes its start once.
                    if self.item.replace(x).is_none() {
                        self.consumer.publish();
                    }
                }
            }
        }
        self
    }
    fn complete(self) -> Option<T> {
        self.item
    }
    fn full(&self) -> bool {
        match self.consumer.mode {
            Mode::Any | Mode::First => self.item.is_some() || self.consumer.stop(),
            Mode::Last => self.consumer.stop(),
        }
    }
}
