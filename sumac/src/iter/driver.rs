//! The loop driver behind every indexed parallel loop: runs a producer's items in blocks
//! on the current worker, timing them, and splits the remaining items when an idle worker
//! asks (see `SCHEDULER.md`, "Parallel loops").

use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};

use super::plumbing::{Consumer, Folder, Producer, Reducer};
use crate::clock;
use crate::join::{join_hinted, ForkSize};
use crate::policy::{
    Mechanism, Mechanisms, ALIGNED_ITEMS, ALIGNED_SPLIT_MIN_ITEMS, LONG_ITEM_LEVELS,
};
use crate::registry;
use crate::worker::WorkerThread;

/// Runs `producer`, which yields `len` items, into `consumer` on the current pool (see
/// [`bridge_producer_consumer`](super::plumbing::bridge_producer_consumer)).
pub(crate) fn run<P, C>(len: usize, producer: P, consumer: C) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    registry::in_worker(move |worker| {
        let next_phase = worker.mechanisms.has(Mechanism::NextPhaseSplit);
        let came_back = worker.take_fork_came_back() && next_phase;
        if worker.solo && worker.registry().forced_splits == 0 && len <= producer.max_len() {
            run_as_one_block(producer, consumer)
        } else if len >= 2
            && producer.min_len() <= 1
            && len <= producer.max_len()
            && worker.mechanisms.has(Mechanism::FirstItemSplit)
            && (came_back || worker.registry().workers_waiting() > 0)
        {
            let part =
                if next_phase && (came_back || worker.registry().queues.sleep.anyone_searching()) {
                    Part::NextPhase
                } else {
                    Part::Whole
                };
            split_off_first_item(producer, len, consumer, part)
        } else {
            drive(producer, len, consumer, 1, 0, Part::Whole, 0)
        }
    })
}

/// What part of its loop a piece is, for the rules of the loop's first split.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The loop itself, or all of it but a first item split off.
    Whole,
    /// [`Whole`](Self::Whole), started while a member spun for work or just after a
    /// shared fork of this member's came back (within
    /// [`BACK_TO_BACK_NS`](crate::policy::BACK_TO_BACK_NS)), whose runner is about to
    /// spin (`next-phase-split`): its first split comes after its first block that a
    /// rough rate can tell of, if its upper half is worth a first split, without waiting
    /// for a request. Back-to-back phases (sweeps, pivot steps) otherwise lose their
    /// hand-off: the request of the member that ran the last phase's upper half is
    /// served by that phase's tail or arrives after this phase's first block, and a
    /// cheap first item (a boundary row) makes the second block span the phase.
    NextPhase,
    /// A piece split off a loop.
    Piece,
}

/// A loop that starts while a worker of its pool waits for work: its first item runs as
/// the first closure of a `join` whose second closure is the rest of the loop. A loop
/// times its first block (one item) before it may split, so without this, a first item
/// that runs long without forks would keep the rest of the loop from everyone. Here the
/// rest is a recorded fork, which a heartbeat shares once it has waited an interval, or,
/// if the item makes no forks, the heartbeat thread hands to an idle worker through the
/// rescue offer (see `RescueSlot`). If the item is quick, the rest runs inline as a loop
/// of its own, at the cost of one fork and one consumer split. Loops under
/// `with_min_len` keep their first block whole and skip this.
///
/// If another worker took the rest, the first item had run for at least a heartbeat
/// interval by then: the rest's items are taken to be long too, and it is halved down to
/// single items before any of them runs (see [`LONG_ITEM_LEVELS`]).
fn split_off_first_item<P, C>(producer: P, len: usize, consumer: C, part: Part) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    let (first_p, rest_p) = producer.split_at(1);
    let (first_c, rest_c, reducer) = consumer.split_at(1);
    let caller = crate::current_thread_index();
    let (first, rest) = join_hinted(
        // One item needs no block loop, clock or polls (the rest times its own first
        // block).
        move || run_as_one_block(first_p, first_c),
        move || {
            let migrated = crate::current_thread_index() != caller;
            let long_items = if migrated && LoopPoll::current().has(Mechanism::LongItemHalving) {
                LONG_ITEM_LEVELS
            } else {
                0
            };
            drive(rest_p, len - 1, rest_c, 1, long_items, part, 1)
        },
        ForkSize::RestOfLoop,
    );
    reducer.reduce(first, rest)
}

/// The loop of a one-thread pool, where no piece could ever be shared: all items in one
/// block, with no clock reads and no heartbeat polls (so a loop there costs what the
/// sequential loop costs, plus finding the worker). A `with_max_len` shorter than the
/// loop still splits it.
fn run_as_one_block<P, C>(producer: P, consumer: C) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    if consumer.full() {
        // Drop the items first (see `drive_blocks`).
        drop(producer);
        return consumer.into_folder().complete();
    }
    producer.fold_with(consumer.into_folder()).complete()
}

/// The sequential loop of one piece of `len` items; `block` is the starting block size.
/// A piece whose items are known to be long is halved `long_items` more times before it
/// runs any (see [`LONG_ITEM_LEVELS`]). `part`: the piece is the loop itself (or all of
/// it but a first item split off), so that its first split is the loop's. `phase`: the
/// index of the piece's first item in the loop, modulo [`ALIGNED_ITEMS`].
fn drive<P, C>(
    producer: P,
    len: usize,
    consumer: C,
    block: usize,
    long_items: u32,
    part: Part,
    phase: usize,
) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    let min = producer.min_len().max(1);
    // A piece that is to stop (a search found its answer elsewhere) does not split down
    // to `with_max_len` pieces first.
    if len > producer.max_len() && len / 2 >= min && !consumer.full() {
        return split_join(producer, len, consumer, block, false, long_items, phase);
    }
    if long_items > 0 && len >= 2 && len / 2 >= min && !consumer.full() {
        return split_join(producer, len, consumer, block, true, long_items - 1, phase);
    }
    if consumer.full() || len == 0 {
        // Drop the items first (see `drive_blocks`).
        drop(producer);
        return consumer.into_folder().complete();
    }
    // `DETACHES` is a constant: only one of the two loops is compiled in for a consumer.
    if C::DETACHES {
        drive_blocks::<P, C, DetachingFold<P::Item, C>>(
            producer, len, min, consumer, block, part, phase,
        )
    } else {
        drive_blocks::<P, C, SplittingFold<P::Item, C>>(
            producer, len, min, consumer, block, part, phase,
        )
    }
}

/// A result so far, with the reducer that appends the next result to it.
type Appendable<T, C> = (<C as Consumer<T>>::Result, <C as Consumer<T>>::Reducer);

/// What a loop has folded so far, and how it splits off the rest at a heartbeat.
trait LoopFold<T, C: Consumer<T>>: Sized {
    fn start(consumer: C) -> Self;
    /// Folds the next `n` items, those of `head` (`last`: no items follow them).
    fn fold_block<P: Producer<Item = T>>(self, head: P, n: usize, last: bool) -> Self;
    fn full(&self) -> bool;
    fn complete(self) -> C::Result;
    /// The result so far (with the reducer that appends the rest's result to it) and a
    /// consumer for the items not folded yet.
    fn detach(self) -> (Option<Appendable<T, C>>, C);
    /// Whether what was folded so far may close as a piece of its own: it holds at least
    /// `min` items (`with_min_len`). With no minimum (1), a split may also come before
    /// the first block (only the test hook `force_splits` makes one there).
    fn may_detach(&self, min: usize) -> bool;
}

/// One folder for all the blocks, detached at a split (consumers that set `DETACHES`).
struct DetachingFold<T, C: Consumer<T>> {
    folder: C::Folder,
    consumed: usize,
}

impl<T, C: Consumer<T>> LoopFold<T, C> for DetachingFold<T, C> {
    #[inline]
    fn start(consumer: C) -> Self {
        DetachingFold {
            folder: consumer.into_folder(),
            consumed: 0,
        }
    }
    #[inline]
    fn fold_block<P: Producer<Item = T>>(self, head: P, n: usize, _last: bool) -> Self {
        DetachingFold {
            folder: head.fold_with(self.folder),
            consumed: self.consumed + n,
        }
    }
    #[inline]
    fn full(&self) -> bool {
        self.folder.full()
    }
    #[inline]
    fn complete(self) -> C::Result {
        self.folder.complete()
    }
    fn detach(self) -> (Option<Appendable<T, C>>, C) {
        let (result, rest, reducer) = C::detach(self.folder, self.consumed);
        (Some((result, reducer)), rest)
    }
    #[inline]
    fn may_detach(&self, min: usize) -> bool {
        min == 1 || self.consumed >= min
    }
}

/// Each block folded by a consumer split off for it, its result reduced into the result
/// so far (consumers that cannot detach, such as those written for Rayon). The reducer
/// of the latest split is kept to append whatever comes next. The last block folds with
/// the remaining consumer itself, so the pieces are exactly the blocks.
enum SplittingFold<T, C: Consumer<T>> {
    Folding {
        done: Option<Appendable<T, C>>,
        rest: C,
    },
    /// The last block was folded: the whole result.
    Finished(C::Result),
}

impl<T, C: Consumer<T>> LoopFold<T, C> for SplittingFold<T, C> {
    fn start(consumer: C) -> Self {
        SplittingFold::Folding {
            done: None,
            rest: consumer,
        }
    }
    fn fold_block<P: Producer<Item = T>>(self, head: P, n: usize, last: bool) -> Self {
        let SplittingFold::Folding { done, rest } = self else {
            unreachable!("a block after the last one");
        };
        let append = |result| match done {
            Some((before, append)) => append.reduce(before, result),
            None => result,
        };
        if last {
            return SplittingFold::Finished(append(head.fold_with(rest.into_folder()).complete()));
        }
        let (here, rest, reducer) = rest.split_at(n);
        let result = append(head.fold_with(here.into_folder()).complete());
        SplittingFold::Folding {
            done: Some((result, reducer)),
            rest,
        }
    }
    fn full(&self) -> bool {
        match self {
            SplittingFold::Folding { rest, .. } => rest.full(),
            SplittingFold::Finished(_) => true,
        }
    }
    fn complete(self) -> C::Result {
        match self {
            SplittingFold::Folding { done, rest } => {
                let last = rest.into_folder().complete();
                match done {
                    Some((before, append)) => append.reduce(before, last),
                    None => last,
                }
            }
            SplittingFold::Finished(result) => result,
        }
    }
    fn detach(self) -> (Option<Appendable<T, C>>, C) {
        match self {
            SplittingFold::Folding { done, rest } => (done, rest),
            SplittingFold::Finished(_) => unreachable!("a split after the last block"),
        }
    }
    /// Every block already holds at least `min` items (see [`block_items`]).
    fn may_detach(&self, _min: usize) -> bool {
        true
    }
}

/// How many of the `len` items left the next block folds, for a loop whose last block
/// had `block` items and whose pieces hold at least `min` items (`with_min_len`; 1
/// without it).
///
/// A block holds at least `min` items: no split can come before `min` items were folded
/// (the folded prefix closes as a piece of its own), and where each block is a fold
/// piece of its own, a smaller one would break the minimum. And a block that would
/// leave too few items for a later split (whose halves must hold `min` each) takes them
/// all: they would be folded here anyway, and every further block would cost a
/// `split_at`, which may clone (as `repeat_n`'s does). For a piece-per-block fold this
/// also keeps the last block from holding fewer than `min` items.
///
/// Without a minimum, the block is what the timing asked for (a single item left after
/// it is folded as a block of its own), extended to end at a multiple of
/// [`ALIGNED_ITEMS`] from the loop's first item if it holds that many (`at`: the index
/// of its first item in the loop, modulo [`ALIGNED_ITEMS`]).
#[inline(always)]
fn block_items(poll: &LoopPoll, block: usize, len: usize, min: usize, at: usize) -> usize {
    let n = aligned_block(at, poll.block_size(block)).min(len);
    if min == 1 {
        return n;
    }
    let n = n.max(min).min(len);
    if (len - n) / 2 < min {
        len
    } else {
        n
    }
}

/// `n` items from index `at` of the loop (modulo [`ALIGNED_ITEMS`]), or, if `n` is at
/// least [`ALIGNED_ITEMS`], the few more that end them at a multiple of it.
#[inline(always)]
fn aligned_block(at: usize, n: usize) -> usize {
    if n < ALIGNED_ITEMS {
        n
    } else {
        n + (ALIGNED_ITEMS - (at + n) % ALIGNED_ITEMS) % ALIGNED_ITEMS
    }
}

/// How many of the first items of a block of `n` items from index `at` of the loop
/// (modulo [`ALIGNED_ITEMS`]) to fold on their own, before the rest of the block: those
/// before the block's first multiple of [`ALIGNED_ITEMS`], so that the rest, if it holds
/// at least that many items, runs aligned. 0 if the block starts aligned, is too short,
/// or those items could not be a piece of their own (fewer than `min`, `with_min_len`).
#[inline(always)]
fn misaligned_head(at: usize, n: usize, min: usize) -> usize {
    let head = (ALIGNED_ITEMS - at) % ALIGNED_ITEMS;
    if head == 0 || head < min || n < head + ALIGNED_ITEMS {
        0
    } else {
        head
    }
}

/// The block loop of [`drive`] over a non-empty piece, folding with `F`; `min` is the
/// producer's smallest piece (at least 1); `part` and `phase` as for [`drive`].
fn drive_blocks<P, C, F>(
    mut producer: P,
    mut len: usize,
    min: usize,
    consumer: C,
    mut block: usize,
    part: Part,
    phase: usize,
) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
    F: LoopFold<P::Item, C>,
{
    let mut folded = F::start(consumer);
    // The index of the next item in the loop, modulo `ALIGNED_ITEMS`.
    let mut at = phase % ALIGNED_ITEMS;
    let poll = LoopPoll::current();
    let thresholds = clock::loop_ticks();
    let first_split_is_small = part != Part::Piece && poll.has(Mechanism::SmallFirstSplit);
    // The loop's first split hands half of a phase to whoever asked: worth it from less
    // work than a later split's (`small-first-split`).
    let upper_half_big = |len: usize, rate| {
        if first_split_is_small {
            thresholds.is_big_at_first_split(len / 2, rate)
        } else {
            thresholds.is_big(len / 2, rate)
        }
    };
    // A member is there or on its way to take a half (`Part::NextPhase`): the loop splits
    // after its first block that a rough rate can tell of, if worth it.
    let mut taker_expected = part == Part::NextPhase;
    let mut rough_rate = None;
    let timed_growth = poll.has(Mechanism::TimedGrowth);
    let mut last = clock::ticks();
    // A guest's piece asks for the heartbeat once, when it has lasted.
    let mut guest_start = poll.guest.then_some(last);
    // The items' cost as the last block long enough to tell timed it.
    let mut rate = None;
    loop {
        // A heartbeat that arrives before a block rated the items (`LoopTicks::rate`: the
        // first, if it outlasted the clock's jitter) waits for one that does: split now
        // and the upper half's size would be unknown, so the scheduler
        // could share it only after a whole interval (LU's pivot steps, each shorter
        // than an interval, were then never shared on time). A split leaves the items
        // folded so far as one piece and halves the rest, so under `with_min_len` all
        // three must hold at least `min` items.
        let heartbeat = rate.is_some() && poll.pending();
        if (heartbeat || poll.force_split()) && len / 2 >= min && folded.may_detach(min) {
            let big = rate.is_some_and(|rate| upper_half_big(len, rate));
            return split_rest(folded, producer, len, block, big, 0, at);
        }
        if let Some(rough) = rough_rate {
            // Once only: a member not answered now finds other work or asks.
            rough_rate = None;
            taker_expected = false;
            if len / 2 >= min && folded.may_detach(min) && upper_half_big(len, rough) {
                // The split's join polls the flag raised here and shares the upper half.
                poll.ask();
                return split_rest(folded, producer, len, block, true, 0, at);
            }
        }
        let block_len = block_items(&poll, block, len, min, at);
        let head_items = misaligned_head(at, block_len, min);
        at = (at + block_len) % ALIGNED_ITEMS;
        if head_items > 0 {
            let (head, tail) = producer.split_at(head_items);
            producer = tail;
            len -= head_items;
            folded = folded.fold_block(head, head_items, false);
            if folded.full() {
                drop(producer);
                return folded.complete();
            }
        }
        let n = block_len - head_items;
        if n == len {
            // The last block: fold the producer itself rather than split off an empty
            // rest (a split may cost a clone, as `repeat_n`'s does).
            return folded.fold_block(producer, n, true).complete();
        }
        let (head, tail) = producer.split_at(n);
        producer = tail;
        len -= n;
        folded = folded.fold_block(head, n, len == 0);
        if len == 0 || folded.full() {
            // The items not reached are dropped before the result is made: if one of
            // their drops panics, `folded` (the items found so far) is then dropped while
            // unwinding, whereas a return value already made would leak
            // (rust-lang/rust#47949).
            drop(producer);
            return folded.complete();
        }
        let now = clock::ticks();
        let ticks = now.wrapping_sub(last);
        rate = thresholds.rate(ticks, block_len).or(rate);
        if taker_expected {
            rough_rate = thresholds.rough_rate(ticks, block_len);
        }
        if block_len == 1
            && thresholds.is_long_item(ticks)
            && poll.has(Mechanism::EagerSplit)
            && len / 2 >= min
            && folded.may_detach(min)
        {
            // Every item is expensive: split the rest now, so that its upper half waits as
            // a pending fork while the lower half runs. A heartbeat then promotes that
            // fork (the oldest one of this worker) even while an inner parallel loop of
            // an item is running: nested loops split the outermost loop first. A fork
            // costs a few stores, nothing next to an item of this size. Both halves are
            // halved further before their next item runs (`LONG_ITEM_LEVELS`), so that
            // the items of the half kept here are not hidden behind its first one.
            let big = rate.is_some_and(|rate| thresholds.is_big(len / 2, rate));
            let levels = if poll.has(Mechanism::LongItemHalving) {
                LONG_ITEM_LEVELS
            } else {
                0
            };
            return split_rest(folded, producer, len, 1, big, levels, at);
        }
        if guest_start.is_some_and(|start| thresholds.is_long_item(now.wrapping_sub(start))) {
            guest_start = None;
            poll.guest_lasts();
        }
        block = thresholds.next_block(block, ticks, timed_growth);
        last = now;
    }
}

/// Ends the sequential loop: splits the `len` items not folded yet (`producer`, from
/// index `phase` of the loop modulo [`ALIGNED_ITEMS`]) at their midpoint, runs the halves
/// with [`split_join`] and appends their result to what was folded.
fn split_rest<P, C, F>(
    folded: F,
    producer: P,
    len: usize,
    block: usize,
    big: bool,
    long_items: u32,
    phase: usize,
) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
    F: LoopFold<P::Item, C>,
{
    let (prefix, rest) = folded.detach();
    let rest = split_join(producer, len, rest, block, big, long_items, phase);
    match prefix {
        Some((prefix, append)) => append.reduce(prefix, rest),
        None => rest,
    }
}

/// Splits the remaining `len` items (from index `phase` of the loop, modulo
/// [`ALIGNED_ITEMS`]) at their midpoint and runs both halves with [`crate::join()`]
/// (telling it whether the upper half is big enough to share at once); `long_items` is
/// passed on to both halves.
fn split_join<P, C>(
    producer: P,
    len: usize,
    consumer: C,
    block: usize,
    upper_is_big: bool,
    long_items: u32,
    phase: usize,
) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    let mid = aligned_midpoint(len, phase, producer.min_len().max(1));
    let upper_phase = (phase + mid) % ALIGNED_ITEMS;
    let (left_p, right_p) = producer.split_at(mid);
    let (left_c, right_c, reducer) = consumer.split_at(mid);
    let (left, right) = join_hinted(
        move || drive(left_p, mid, left_c, block, long_items, Part::Piece, phase),
        move || {
            drive(
                right_p,
                len - mid,
                right_c,
                block,
                long_items,
                Part::Piece,
                upper_phase,
            )
        },
        if upper_is_big {
            ForkSize::Big
        } else {
            ForkSize::Small
        },
    );
    reducer.reduce(left, right)
}

/// Where to split `len` items from index `phase` of the loop (modulo [`ALIGNED_ITEMS`]):
/// their midpoint, moved down to a multiple of [`ALIGNED_ITEMS`] if there are at least
/// [`ALIGNED_SPLIT_MIN_ITEMS`] and both halves still hold `min` items.
#[inline]
fn aligned_midpoint(len: usize, phase: usize, min: usize) -> usize {
    let mid = len / 2;
    if len < ALIGNED_SPLIT_MIN_ITEMS {
        return mid;
    }
    let aligned = mid - (phase + mid) % ALIGNED_ITEMS;
    if aligned >= min && len - aligned >= min {
        aligned
    } else {
        mid
    }
}

/// What a piece of a loop reads of the worker it runs on, once per piece: the worker's
/// heartbeat flag (polled between blocks), the pool's mechanisms and its forced splits.
/// Tied to its thread.
pub(crate) struct LoopPoll {
    flag: NonNull<AtomicBool>,
    mechanisms: Mechanisms,
    forced_splits: u32,
    /// The loop runs on a guest (a thread outside the pool taking part in one call).
    guest: bool,
    _not_send: PhantomData<*const ()>,
}

impl LoopPoll {
    /// The handle for the calling thread (it never fires outside a pool).
    pub(crate) fn current() -> LoopPoll {
        static NEVER: AtomicBool = AtomicBool::new(false);
        // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
        match unsafe { WorkerThread::current().as_ref() } {
            Some(worker) => LoopPoll {
                flag: NonNull::from(&worker.shared().heartbeat),
                mechanisms: worker.mechanisms,
                forced_splits: worker.registry().forced_splits,
                guest: worker.guest,
                _not_send: PhantomData,
            },
            None => LoopPoll {
                flag: NonNull::from(&NEVER),
                mechanisms: Mechanisms::default(),
                forced_splits: 0,
                guest: false,
                _not_send: PhantomData,
            },
        }
    }

    /// True when a heartbeat (or an idle worker's request) is pending: the caller should
    /// fork part of its remaining work with [`join`](crate::join()) now; the join's own
    /// poll then promotes the oldest pending fork of this worker.
    #[inline(always)]
    pub(crate) fn pending(&self) -> bool {
        // SAFETY: the flag lives in the registry of this thread's worker (kept alive by
        // the worker for the life of the thread) or is a static; the handle is `!Send`.
        unsafe { self.flag.as_ref() }.load(Ordering::Relaxed)
    }

    /// Raises this worker's own flag, as a request would: the next poll shares its oldest
    /// eligible forks with whoever waits.
    pub(crate) fn ask(&self) {
        // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
        if let Some(worker) = unsafe { WorkerThread::current().as_ref() } {
            worker.shared().heartbeat.store(true, Ordering::Relaxed);
        }
    }

    /// [`pending`](Self::pending), or a split forced by the pool's testing aid.
    #[inline(always)]
    pub(crate) fn asked(&self) -> bool {
        self.pending() || self.force_split()
    }

    /// Handles a pending heartbeat without forking: the worker shares its oldest pending
    /// forks if anyone waits for work (for a loop that has nothing new to fork).
    pub(crate) fn serve(&self) {
        // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
        if let Some(worker) = unsafe { WorkerThread::current().as_ref() } {
            worker.poll_heartbeat();
        }
    }

    /// A loop on a guest has lasted: the guest takes its place, as a busy member, and
    /// the heartbeat thread must run for the loop's pieces to be shared (see
    /// `Registry::guest_needs_heartbeat`).
    #[cold]
    fn guest_lasts(&self) {
        // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
        if let Some(worker) = unsafe { WorkerThread::current().as_ref() } {
            worker.take_place();
            worker.registry().guest_needs_heartbeat();
        }
    }

    /// Whether the pool uses `mechanism`.
    #[inline(always)]
    pub(crate) fn has(&self, mechanism: Mechanism) -> bool {
        self.mechanisms.has(mechanism)
    }

    /// Whether the pool's testing aid splits the loop now, although nobody asked.
    #[inline(always)]
    pub(crate) fn force_split(&self) -> bool {
        self.forced_splits != 0 && next_random() % u64::from(self.forced_splits) == 0
    }

    /// The block size to use: `block`, or small random blocks while splits are forced.
    #[inline(always)]
    fn block_size(&self, block: usize) -> usize {
        if self.forced_splits != 0 {
            1 + (next_random() % 3) as usize
        } else {
            block
        }
    }
}

thread_local! {
    /// The state of the forced splits' random choices, per thread.
    static RANDOM: Cell<u64> = const { Cell::new(0x9E37_79B9_7F4A_7C15) };
}

/// The next value of a xorshift generator (forced splits only).
fn next_random() -> u64 {
    RANDOM.with(|state| {
        let mut x = state.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        state.set(x);
        x
    })
}
