//! Short-circuiting searches: `find_any`, `find_first`, `find_last` (and, built on them,
//! `any`, `all`, `position_*`, `try_for_each`).
//!
//! Pieces of the loop are identified by their start and end positions in the producer's
//! index space. A piece that finds a match publishes its start in a shared atomic; a
//! piece that lies entirely after (for `find_first`) or before (for `find_last`) a
//! piece with a match stops at its next block boundary.
//!
//! Iterators whose items have no positions (`par_bridge`, `walk_tree`, `iter::split`)
//! have an index span of 0. For them the consumer makes positions up, as Rayon does:
//! the root covers `0..usize::MAX` and every split gives the left piece the lower half
//! of the range and the right piece the upper half, whatever position the split asks
//! for (a left piece always holds earlier items, which is all the stopping rule needs).
//! After 64 nested splits the ranges are empty; pieces with the same start never stop
//! each other, so the answer is still right, only found later.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::plumbing::{Consumer, Folder, Reducer, UnindexedConsumer};
use super::ParallelIterator;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Mode {
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
    let positional = span > 0;
    let end = if positional { span } else { usize::MAX };
    let best = AtomicUsize::new(match mode {
        Mode::Any | Mode::First => usize::MAX,
        Mode::Last => 0,
    });
    iter.drive_unindexed(FindConsumer {
        predicate,
        best: &best,
        mode,
        start: 0,
        end,
        positional,
    })
}

struct FindConsumer<'f, P> {
    predicate: &'f P,
    /// Any: `usize::MAX` until found. First: the smallest start of a piece with a match.
    /// Last: one more than the largest start of a piece with a match (0: none).
    best: &'f AtomicUsize,
    mode: Mode,
    start: usize,
    end: usize,
    /// Whether the pieces have positions (a nonzero index span); if not, `start..end`
    /// is a made-up range, halved at every split.
    positional: bool,
}

impl<P> FindConsumer<'_, P> {
    fn copy_with(&self, start: usize, end: usize) -> Self {
        FindConsumer {
            predicate: self.predicate,
            best: self.best,
            mode: self.mode,
            start,
            end,
            positional: self.positional,
        }
    }

    /// Where a split `index` items in divides this piece's range: at that position, or,
    /// for made-up positions, in the middle.
    fn split_point(&self, index: usize) -> usize {
        if self.positional {
            self.start
                .saturating_add(index)
                .min(self.end.max(self.start))
        } else {
            self.start + (self.end - self.start) / 2
        }
    }

    fn stop(&self) -> bool {
        let best = self.best.load(Ordering::Relaxed);
        match self.mode {
            Mode::Any => best != usize::MAX,
            Mode::First => best < self.start,
            // A piece that starts after this one's start comes after it. (Comparing
            // with this piece's end instead is wrong for empty pieces: every piece
            // `split_off_left` or a clamped `split_at` makes at one position covers the
            // same empty range, so one of them with a match stopped the later ones, and
            // itself after its first match.)
            Mode::Last => best > self.start.saturating_add(1),
        }
    }

    fn publish(&self) {
        match self.mode {
            Mode::Any => self.best.store(0, Ordering::Relaxed),
            Mode::First => {
                self.best.fetch_min(self.start, Ordering::Relaxed);
            }
            Mode::Last => {
                self.best
                    .fetch_max(self.start.saturating_add(1), Ordering::Relaxed);
            }
        }
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
        let mid = self.split_point(index);
        (
            self.copy_with(self.start, mid),
            self.copy_with(mid, self.end),
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
        let rest = c.copy_with(c.split_point(consumed), c.end);
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
    /// The empty range at this consumer's start (what `split_at(0)` gives on the left).
    fn split_off_left(&self) -> Self {
        self.copy_with(self.start, self.start)
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
                    self.item = Some(x);
                    self.consumer.publish();
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
