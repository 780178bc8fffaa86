//! `iter::split`: data of any kind, cut in two by the caller's splitter whenever the
//! scheduler wants more pieces; the uncut pieces are the iterator's items, in order.
//!
//! A piece is consumed whole (it is opaque), so unlike a loop over a range, a piece
//! cannot be split once it is being worked on: the decision is made just before a piece
//! is handed on as an item. Two rules make it:
//!
//! - **Eagerly, down to one piece per worker.** A split budget starts at the pool's
//!   number of workers and is halved between the two halves of every split; a piece
//!   that another worker took (it *migrated*) starts again with the full budget, as the
//!   work is evidently wanted there (Rayon's adaptive rule). A one-thread pool never
//!   splits: the data comes out as a single item.
//! - **At heartbeats.** With its budget spent, a piece is still split when an idle
//!   worker is asking for work (the worker's heartbeat flag is up), provided fewer
//!   pieces are under way than the pool has workers and the last half this piece handed
//!   out has started (as in `par_bridge` and `walk_tree`). Each cut nests the second
//!   half one `join` deeper when it runs where it was cut, so without these limits a
//!   splitter that peels off one element at a time, on a pool whose heartbeats keep
//!   coming, would nest as deep as the data is long and overflow the stack.
//!
//! The second half of every split is forked as known-big work, so an idle worker can
//! take it at once; the halves' results are reduced in order, so `collect`,
//! `find_first` and non-commutative reductions see the pieces in the data's order.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::driver::LoopPoll;
use super::plumbing::{self, Consumer, Folder, Reducer, UnindexedConsumer};
use super::ParallelIterator;
use crate::join::{join_hinted, ForkSize};

/// A parallel iterator over the pieces of `data`: the scheduler calls `splitter` on a
/// piece when it wants more parallelism; `splitter` returns the two halves, in order, or
/// the piece itself and `None` when it cannot (or should not) be cut further. Each piece
/// that is not cut again is an item.
///
/// How many pieces there are depends on the pool (a one-thread pool makes a single
/// piece) and on timing; their order, and everything they contain, does not.
///
/// ```
/// use sumac::prelude::*;
/// use std::ops::Range;
///
/// fn halve(r: Range<usize>) -> (Range<usize>, Option<Range<usize>>) {
///     if r.len() <= 1000 {
///         return (r, None); // small enough: don't cut
///     }
///     let mid = r.start + r.len() / 2;
///     (r.start..mid, Some(mid..r.end))
/// }
///
/// let pieces: Vec<Range<usize>> = sumac::iter::split(0..100_000, halve).collect();
/// // The pieces tile the range, in order.
/// assert_eq!(pieces.first().unwrap().start, 0);
/// assert_eq!(pieces.last().unwrap().end, 100_000);
/// assert!(pieces.windows(2).all(|w| w[0].end == w[1].start));
/// let sum: usize = sumac::iter::split(0..100_000, halve).map(|r| r.sum::<usize>()).sum();
/// assert_eq!(sum, (0..100_000).sum());
/// ```
///
/// # Panics
/// A panic in `splitter` (or in what consumes the items) propagates to the caller, after
/// the other running pieces finished.
pub fn split<D, S>(data: D, splitter: S) -> Split<D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync,
{
    Split { data, splitter }
}

/// The iterator returned by [`split`].
#[derive(Clone)]
pub struct Split<D, S> {
    data: D,
    splitter: S,
}

/// Shows the data only: the splitter closure is left out.
impl<D: std::fmt::Debug, S> std::fmt::Debug for Split<D, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Split").field("data", &self.data).finish()
    }
}

impl<D, S> ParallelIterator for Split<D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync + Send,
{
    type Item = D;

    fn drive_unindexed<C: UnindexedConsumer<D>>(self, consumer: C) -> C::Result {
        let Split { data, splitter } = self;
        crate::in_worker_single_aware(move |single_thread| {
            let workers = if single_thread {
                1
            } else {
                crate::current_num_threads()
            };
            let shared = Shared {
                splitter: &splitter,
                leaf: &|piece, folder: C::Folder| folder.consume(piece),
                workers,
                pieces: AtomicUsize::new(1),
            };
            split_piece(&shared, data, consumer, workers, None)
        })
    }

    /// The pieces have no positions: every piece covers the empty range.
    fn index_span(&self) -> usize {
        0
    }
}

/// Runs an [`UnindexedProducer`](plumbing::UnindexedProducer) into `consumer`: the
/// producer is cut as `split` cuts its data, and each uncut piece folds its own items.
pub(super) fn bridge_unindexed<P, C>(producer: P, consumer: C) -> C::Result
where
    P: plumbing::UnindexedProducer,
    C: Consumer<P::Item>,
{
    crate::in_worker_single_aware(move |single_thread| {
        let workers = if single_thread {
            1
        } else {
            crate::current_num_threads()
        };
        let shared = Shared {
            splitter: &P::split,
            leaf: &|piece: P, folder: C::Folder| piece.fold_with(folder),
            workers,
            pieces: AtomicUsize::new(1),
        };
        split_piece(&shared, producer, consumer, workers, None)
    })
}

/// What the pieces of one `split` share.
struct Shared<'s, S, L> {
    splitter: &'s S,
    /// Feeds an uncut piece to a folder.
    leaf: &'s L,
    /// The pool's number of workers (1: never split).
    workers: usize,
    /// Pieces under way: the first one, plus every second half forked and not finished.
    pieces: AtomicUsize,
}

/// Handles one piece: cuts it while the rules of the module documentation say so, then
/// hands it on as an item. `budget` is the number of pieces it may still be cut into
/// eagerly; `last_fork_started` is the flag of the last half this chain of cuts forked.
fn split_piece<D, T, S, L, C>(
    shared: &Shared<'_, S, L>,
    data: D,
    consumer: C,
    budget: usize,
    last_fork_started: Option<&AtomicBool>,
) -> C::Result
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync,
    L: Fn(D, C::Folder) -> C::Folder + Sync,
    C: Consumer<T>,
{
    if consumer.full() {
        return consumer.into_folder().complete();
    }
    let eager = budget > 1;
    let wanted = !eager && shared.workers > 1 && {
        let poll = LoopPoll::current();
        let asked = poll.asked();
        let free = last_fork_started.is_none_or(|started| started.load(Ordering::Relaxed))
            && shared.pieces.load(Ordering::Relaxed) < shared.workers;
        if asked && !free {
            // Cannot cut now: share older pending work with whoever asks instead.
            poll.serve();
        }
        asked && free
    };
    if !(eager || wanted) {
        return (shared.leaf)(data, consumer.into_folder()).complete();
    }
    match (shared.splitter)(data) {
        (whole, None) => (shared.leaf)(whole, consumer.into_folder()).complete(),
        (first, Some(second)) => {
            let half = (budget / 2).max(1);
            let (first_consumer, second_consumer, reducer) = plumbing::split_unindexed(consumer);
            let started = AtomicBool::new(false);
            let caller = crate::current_thread_index();
            shared.pieces.fetch_add(1, Ordering::Relaxed);
            let (a, b) = join_hinted(
                || split_piece(shared, first, first_consumer, half, Some(&started)),
                || {
                    started.store(true, Ordering::Relaxed);
                    let migrated = crate::current_thread_index() != caller;
                    let budget = if migrated { shared.workers } else { half };
                    let result = split_piece(shared, second, second_consumer, budget, None);
                    shared.pieces.fetch_sub(1, Ordering::Relaxed);
                    result
                },
                ForkSize::Big,
            );
            reducer.reduce(a, b)
        }
    }
}
