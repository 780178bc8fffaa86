//! `par_bridge`: a parallel iterator fed by a sequential [`Iterator`].
//!
//! The source sits behind a mutex. A *puller* takes a block of items under the lock,
//! folds them outside it, and repeats until the source is exhausted. There is one puller
//! at the start; when a heartbeat (or an idle worker's request) reaches a puller, it
//! forks a second puller with [`join`](crate::join()), marked as worth sharing at once
//! since the source's length is unknown. Both then pull from the same source, and their
//! results are reduced left then right.
//!
//! Three rules keep the pullers few, so that forks cannot pile up on a worker's stack
//! however long the source runs (each fork nests the forking puller's continuation one
//! level deeper):
//! * at most one puller per worker exists at a time (counting forks not yet started);
//! * a puller forks again only after its last forked sibling has started (unstolen, the
//!   sibling could only start after this puller returned, with nothing left to pull);
//! * between two forks, a puller folds at least one block.
//!
//! Without the last rule, a puller near the end of its source, with idle workers asking
//! for work, forked again and again: each new sibling started at once, found the source
//! empty and ended, and the forking puller never pulled the block that would have told
//! it the same (a stress test reached a nesting of 48 forks and overflowed a small
//! stack).
//!
//! Blocks start at one item and grow while a block is quick to fold, up to
//! [`MAX_PULL_BLOCK`] items, so the lock is taken rarely for cheap items and an expensive
//! item never holds others back.

use std::iter::Fuse;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use super::driver::LoopPoll;
use super::plumbing::{self, Folder, Reducer, UnindexedConsumer, UnindexedFold};
use super::ParallelIterator;
use crate::join::{join_hinted, ForkSize};
use crate::policy::{Mechanism, MAX_PULL_BLOCK};

/// Conversion of a sequential iterator into a parallel one: `iter.par_bridge()`.
///
/// Items are handed to the workers as they come out of the iterator, so their order is
/// *not* kept: `collect` gathers them in some order, and `find_first`/`find_last` return
/// some match (prefer `find_any`). Use an indexed source (a range, a slice, a `Vec`)
/// where there is one; a bridge serialises every `next()` call behind a lock.
///
/// ```
/// use std::sync::mpsc::channel;
/// use sumac::prelude::*;
///
/// let (sender, receiver) = channel();
/// for i in 0..100u64 {
///     sender.send(i).unwrap();
/// }
/// drop(sender);
/// let mut squares: Vec<u64> = receiver.into_iter().par_bridge().map(|i| i * i).collect();
/// squares.sort();
/// assert_eq!(squares, (0..100u64).map(|i| i * i).collect::<Vec<_>>());
/// ```
pub trait ParallelBridge: Sized {
    /// Turns `self` into a parallel iterator.
    ///
    /// ```
    /// use sumac::prelude::*;
    ///
    /// // A sequential source with no parallel version of its own: the lines of a text.
    /// let text = "3\n1\n4\n1\n5\n9\n2\n6";
    /// let total: u32 = text.lines().par_bridge().map(|l| l.parse::<u32>().unwrap()).sum();
    /// assert_eq!(total, 31);
    ///
    /// // The order is not kept: sort what was collected when it matters.
    /// let mut digits: Vec<u32> = text.lines().par_bridge().map(|l| l.parse().unwrap()).collect();
    /// digits.sort();
    /// assert_eq!(digits, [1, 1, 2, 3, 4, 5, 6, 9]);
    /// ```
    fn par_bridge(self) -> IterBridge<Self>;
}

impl<T> ParallelBridge for T
where
    T: Iterator + Send,
    T::Item: Send,
{
    fn par_bridge(self) -> IterBridge<Self> {
        IterBridge { iter: self }
    }
}

/// The iterator returned by [`ParallelBridge::par_bridge`].
#[derive(Clone, Debug)]
pub struct IterBridge<I> {
    iter: I,
}

impl<I> ParallelIterator for IterBridge<I>
where
    I: Iterator + Send,
    I::Item: Send,
{
    type Item = I::Item;
    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        let iter = self.iter;
        crate::in_worker_single_aware(move |single_thread| {
            if single_thread {
                // Nothing could run beside us: fold the source directly, with no lock.
                return consumer.into_folder().consume_iter(iter).complete();
            }
            let source = Source {
                items: Mutex::new(iter.fuse()),
                pullers: AtomicUsize::new(1),
                max_pullers: crate::current_num_threads(),
            };
            pull(&source, consumer, None)
        })
    }
    /// The items have no positions: every piece of the loop covers the empty range.
    fn index_span(&self) -> usize {
        0
    }
}

/// The shared state of a bridge's pullers.
struct Source<I> {
    items: Mutex<Fuse<I>>,
    /// Pullers that exist (running, or forked and not yet started).
    pullers: AtomicUsize,
    /// The pool's number of workers.
    max_pullers: usize,
}

/// One puller: folds blocks taken from `source` until it is exhausted (or the consumer
/// needs no more). `sibling_started` is the flag of the last puller this one forked.
fn pull<I, C>(source: &Source<I>, consumer: C, sibling_started: Option<&AtomicBool>) -> C::Result
where
    I: Iterator + Send,
    I::Item: Send,
    C: UnindexedConsumer<I::Item>,
{
    let poll = LoopPoll::current();
    let mut folder = UnindexedFold::new(consumer);
    let mut block = 1usize;
    let mut items = Vec::new();
    let mut folded_a_block = false;
    loop {
        if folder.full() {
            return folder.complete();
        }
        if poll.asked() {
            let sibling_running =
                sibling_started.is_none_or(|started| started.load(Ordering::Relaxed));
            if sibling_running
                && folded_a_block
                && source.pullers.load(Ordering::Relaxed) < source.max_pullers
            {
                let (prefix, rest, reducer) = folder.detach();
                return reducer.reduce(prefix, fork_puller(source, rest));
            }
            // Our last fork still waits: let the heartbeat share it (or older forks).
            poll.serve();
        }
        // A poisoned lock means the source panicked in `next()`: that panic is on its way
        // up through a `join`, and the source's state is unknown, so stop pulling.
        let Ok(mut guard) = source.items.lock() else {
            return folder.complete();
        };
        items.extend(guard.by_ref().take(block));
        drop(guard);
        if items.is_empty() {
            return folder.complete();
        }
        let start = crate::clock::ticks();
        folder = folder.consume_iter(items.drain(..));
        folded_a_block = true;
        let ticks = crate::clock::ticks().wrapping_sub(start);
        block = crate::clock::loop_ticks()
            .next_block(block, ticks, poll.has(Mechanism::TimedGrowth))
            .min(MAX_PULL_BLOCK);
    }
}

/// Splits `consumer` into this puller's continuation and a new puller, forked so that an
/// idle worker can take it at once.
fn fork_puller<I, C>(source: &Source<I>, consumer: C) -> C::Result
where
    I: Iterator + Send,
    I::Item: Send,
    C: UnindexedConsumer<I::Item>,
{
    let (left, right, reducer) = plumbing::split_unindexed(consumer);
    let started = AtomicBool::new(false);
    source.pullers.fetch_add(1, Ordering::Relaxed);
    let (left, right) = join_hinted(
        || pull(source, left, Some(&started)),
        || {
            started.store(true, Ordering::Relaxed);
            let result = pull(source, right, None);
            source.pullers.fetch_sub(1, Ordering::Relaxed);
            result
        },
        ForkSize::Big,
    );
    reducer.reduce(left, right)
}
