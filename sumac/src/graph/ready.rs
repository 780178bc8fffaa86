//! The ready tasks of one channel: a ring of entries, each the first slot index of a
//! chain of ready tasks (linked through the graph's `next` array, ending at `NIL`), that
//! pushers append to and takers claim, oldest first.
//!
//! # Algorithm
//! Position `p` (counted from 0 for ever) lives in cell `p % capacity`, in lap
//! `p / capacity`. A pusher writes `FULL | parity(lap) << 30 | SINGLE | first index`
//! there, with `SINGLE` if the chain is one task (its taker need not read its link,
//! which the pusher's core wrote).
//!
//! * A pusher reserves a position with one `fetch_add` on `tail`, then stores the cell
//!   (release: the taker sees the chain's links and slots). It never checks for room and
//!   never waits (see below).
//! * A taker loads `head` (acquire), reads its cell, and if the cell is full for its lap
//!   (acquire) claims it with a compare-and-swap of `head`. If the swap succeeds, nobody
//!   claimed the position in between, so nobody pushed over it either (below): what it
//!   read is what was pushed there. If it fails, it starts again from the new `head`. A
//!   taker reads a cell before it claims it, so a claimed cell is free at once. It walks
//!   the chain for the tasks it wants and pushes the rest back as a new entry.
//! * A taker that finds a single task at `head` also reads the cells after it while they
//!   hold single tasks of their positions (fewer than `capacity` cells, as many as it
//!   wants), and claims them all with the same swap: a producer that readies tasks one
//!   at a time costs a consumer that fell behind one swap per run of them, not per task.
//!
//! `head` and `tail` only grow (64 bits: they never wrap), so a stale read fails the
//! swap rather than claiming twice. A cell's content of the previous lap has the other
//! parity, so a taker never mistakes it for the push it looks for.
//!
//! # Why a push never overwrites a cell nobody took
//! The positions reserved and not yet claimed (`head..tail`) carry disjoint, non-empty
//! chains: a slot index is in at most one chain of one channel at a time, and leaves it
//! (its entry is claimed) before its task runs or before it is pushed back in the rest
//! of a chain. A ring has at least as many cells as the graph has slots, so when a
//! pusher reserves position `p`, the chains of two of the positions `p - capacity ..= p`
//! share an index, and the older of the two was claimed before that index was pushed
//! again: position `p - capacity` was claimed before that (claims are ordered
//! read-modify-writes of `head`), and that push's reservation came before this one
//! (reservations are acquire-release read-modify-writes of `tail`). So the claim of the
//! cell's previous lap, and its taker's read, happen before this push's store.
//!
//! The same order makes a look that follows a pusher's wake-up (the runner protocol in
//! `engine`) see every claim made before that push: it finds the pushed chain, or
//! somebody claimed it.

use std::sync::atomic::Ordering;

use crossbeam_utils::CachePadded;

use super::stack::{Chain, NIL};
use crate::sync::{AtomicU32, AtomicU64};

/// The cell carries a chain.
const FULL: u32 = 1 << 31;
/// The parity of the lap the cell was last written for.
const PARITY: u32 = 1 << 30;
/// The chain is one task: its link need not be read.
const SINGLE: u32 = 1 << 29;
/// The first slot index of the chain in a full cell (slot indices stay below `2^29`).
const INDEX: u32 = SINGLE - 1;
const _: () = assert!(super::MAX_TASKS <= INDEX as usize);

/// What one claim took.
enum Claimed {
    /// This many single tasks, written to the front of the taker's room.
    Singles(usize),
    /// The chain that starts at this index.
    Chain(u32),
}

/// The ready tasks of one channel (see the module documentation).
pub(crate) struct ReadyQueue {
    /// The next position to claim; only takers write it.
    head: CachePadded<AtomicU64>,
    /// The next position to reserve; only pushers write it.
    tail: CachePadded<AtomicU64>,
    /// `capacity` cells, a power of two.
    cells: Box<[AtomicU32]>,
}

impl ReadyQueue {
    /// A queue over `cells`: a power of two, at least as many as the graph has slots
    /// ([`ring_cells`]), zeroed (a zero cell is not full), so that their memory can be
    /// mapped as the positions first reach it.
    pub(crate) fn new(cells: Box<[AtomicU32]>) -> ReadyQueue {
        assert!(cells.len().is_power_of_two());
        ReadyQueue {
            head: CachePadded::new(AtomicU64::new(0)),
            tail: CachePadded::new(AtomicU64::new(0)),
            cells,
        }
    }

    #[inline]
    fn cell(&self, position: u64) -> &AtomicU32 {
        // The length is a power of two: the mask keeps the index in bounds.
        &self.cells[(position & (self.cells.len() as u64 - 1)) as usize]
    }

    #[inline]
    fn parity(&self, position: u64) -> u32 {
        if (position >> self.cells.len().trailing_zeros()) & 1 == 1 {
            PARITY
        } else {
            0
        }
    }

    /// The content of a cell that carries `index` pushed at `position`.
    #[inline]
    fn full(&self, position: u64, index: u32, single: bool) -> u32 {
        FULL | self.parity(position) | if single { SINGLE } else { 0 } | index
    }

    /// Whether the queue looks empty (a hint: it may change at once).
    #[inline]
    pub(crate) fn looks_empty(&self) -> bool {
        let head = self.head.load(Ordering::Acquire);
        !self.holds_push(self.cell(head).load(Ordering::Acquire), head)
    }

    /// Whether `content`, read from the cell of `position`, is the push at `position`
    /// (not one of the cell's previous lap).
    #[inline]
    fn holds_push(&self, content: u32, position: u64) -> bool {
        content & (FULL | PARITY) == FULL | self.parity(position)
    }

    /// Appends `chain` (non-empty, owned by the caller, linked through `next` and ending
    /// at `NIL`) as one entry; returns its position, for
    /// [`held_before`](Self::held_before). Release: whoever takes the chain sees its
    /// links and what the pusher wrote into its slots.
    pub(crate) fn push(&self, next: &[AtomicU32], chain: Chain) -> u64 {
        debug_assert!(!chain.is_empty());
        debug_assert_eq!(next[chain.last as usize].load(Ordering::Relaxed), NIL);
        self.push_first(chain.first, chain.count == 1)
    }

    /// Appends the chain that starts at `first` and follows `next` to `NIL` (`single`:
    /// it is only `first`).
    #[inline]
    fn push_first(&self, first: u32, single: bool) -> u64 {
        debug_assert!(first <= INDEX);
        let position = self.tail.fetch_add(1, Ordering::AcqRel);
        self.cell(position)
            .store(self.full(position, first, single), Ordering::Release);
        position
    }

    /// Whether chains pushed before `position` (returned by [`push`](Self::push)) were
    /// not all claimed yet (a hint).
    #[inline]
    pub(crate) fn held_before(&self, position: u64) -> bool {
        self.head.load(Ordering::Relaxed) < position
    }

    /// Takes up to `batch.len()` (at least 1) of the oldest ready indices into `batch`,
    /// chain after chain; the rest of a chain that does not fit goes back as a new entry.
    /// Returns how many it took, and whether more were ready behind them (a hint).
    pub(crate) fn take(&self, next: &[AtomicU32], batch: &mut [u32]) -> (usize, bool) {
        debug_assert!(!batch.is_empty());
        let mut taken = 0;
        while let Some(claimed) = self.claim(&mut batch[taken..]) {
            match claimed {
                Claimed::Singles(count) => taken += count,
                Claimed::Chain(first) => {
                    let mut at = first;
                    while at != NIL && taken < batch.len() {
                        batch[taken] = at;
                        taken += 1;
                        at = next[at as usize].load(Ordering::Relaxed);
                    }
                    if at != NIL {
                        self.push_first(at, false);
                        return (taken, true);
                    }
                }
            }
            if taken == batch.len() {
                return (taken, !self.looks_empty());
            }
        }
        (taken, false)
    }

    /// Claims the oldest entry, and the single tasks right after it if it is one (as
    /// many as `room` holds); single tasks go into `room`.
    #[inline]
    fn claim(&self, room: &mut [u32]) -> Option<Claimed> {
        // Positions read past `head` stay below `head + capacity`: their previous lap
        // was claimed, so a cell of the right parity holds their own push.
        let most = room.len().min(self.cells.len()) as u64;
        let mut head = self.head.load(Ordering::Acquire);
        loop {
            let content = self.cell(head).load(Ordering::Acquire);
            if !self.holds_push(content, head) {
                return None;
            }
            let single = content & SINGLE != 0;
            let mut claimed = 1;
            if single {
                room[0] = content & INDEX;
                while claimed < most {
                    let position = head + claimed;
                    let after = self.cell(position).load(Ordering::Acquire);
                    if !self.holds_push(after, position) || after & SINGLE == 0 {
                        break;
                    }
                    room[claimed as usize] = after & INDEX;
                    claimed += 1;
                }
            }
            match self.head.compare_exchange_weak(
                head,
                head + claimed,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) if single => return Some(Claimed::Singles(claimed as usize)),
                Ok(_) => return Some(Claimed::Chain(content & INDEX)),
                Err(actual) => head = actual,
            }
        }
    }
}

/// The number of cells of a channel of a graph of `slots` slots.
pub(crate) fn ring_cells(slots: usize) -> usize {
    slots.max(MIN_CELLS).next_power_of_two()
}

/// The fewest cells a ring has.
#[cfg(not(loom))]
const MIN_CELLS: usize = 64;
/// Loom models use rings as small as their graphs, so that their laps wrap.
#[cfg(loom)]
const MIN_CELLS: usize = 1;

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn links(n: usize) -> Vec<AtomicU32> {
        (0..n).map(|_| AtomicU32::new(NIL)).collect()
    }

    fn queue(cells: usize) -> ReadyQueue {
        ReadyQueue::new((0..cells).map(|_| AtomicU32::new(0)).collect())
    }

    fn chain_of(next: &[AtomicU32], indices: &[u32]) -> Chain {
        let mut chain = Chain::EMPTY;
        for &index in indices {
            chain.push_back(next, index);
        }
        chain
    }

    #[test]
    fn a_queue_hands_out_chains_oldest_first_and_puts_back_what_does_not_fit() {
        let next = links(8);
        let queue = queue(8);
        assert!(queue.looks_empty());
        assert_eq!(queue.push(&next, chain_of(&next, &[5, 2, 7])), 0);
        assert_eq!(queue.push(&next, chain_of(&next, &[1])), 1);
        assert!(!queue.looks_empty());
        let mut batch = [NIL; 2];
        assert_eq!(queue.take(&next, &mut batch), (2, true));
        assert_eq!(batch, [5, 2]);
        assert!(queue.held_before(2));
        // The rest of the first chain went back behind the second.
        assert_eq!(queue.take(&next, &mut batch), (2, false));
        assert_eq!(batch, [1, 7]);
        assert!(!queue.held_before(3));
        assert_eq!(queue.take(&next, &mut batch), (0, false));
        assert!(queue.looks_empty());
    }

    #[test]
    fn a_taker_takes_runs_of_single_tasks_and_chains_in_order_up_to_its_room() {
        let next = links(8);
        let queue = queue(8);
        for index in [3, 1, 4] {
            queue.push(&next, chain_of(&next, &[index]));
        }
        queue.push(&next, chain_of(&next, &[5, 6]));
        queue.push(&next, chain_of(&next, &[7]));
        let mut batch = [NIL; 2];
        assert_eq!(queue.take(&next, &mut batch), (2, true));
        assert_eq!(batch, [3, 1]);
        assert_eq!(queue.head.load(Ordering::Relaxed), 2);
        // A run of singles ends at a chain, which follows whole.
        let mut batch = [NIL; 8];
        assert_eq!(queue.take(&next, &mut batch), (4, false));
        assert_eq!(batch[..4], [4, 5, 6, 7]);
        assert_eq!(queue.head.load(Ordering::Relaxed), 5);
    }

    #[test]
    fn a_single_task_is_taken_without_reading_its_link() {
        let next = links(8);
        let queue = queue(8);
        queue.push(&next, chain_of(&next, &[2]));
        // A link the taker must not follow (the slot's stale link, as far as it knows).
        next[2].store(6, Ordering::Relaxed);
        let mut batch = [NIL; 4];
        assert_eq!(queue.take(&next, &mut batch), (1, false));
        assert_eq!(batch[0], 2);
    }

    #[test]
    fn a_queue_reuses_its_cells_lap_after_lap() {
        let next = links(4);
        let queue = queue(4);
        let mut batch = [NIL; 3];
        for round in 0..20u32 {
            let indices = [round % 4, (round + 1) % 4, (round + 2) % 4];
            for &index in &indices {
                queue.push(&next, chain_of(&next, &[index]));
            }
            assert_eq!(queue.take(&next, &mut batch), (3, false), "round {round}");
            assert_eq!(batch, indices, "round {round}");
            assert!(queue.looks_empty(), "round {round}");
        }
    }

    #[test]
    fn rings_have_at_least_as_many_cells_as_slots_and_a_power_of_two() {
        for slots in [1, 63, 64, 65, 1000, 1 << 20] {
            let cells = ring_cells(slots);
            assert!(
                cells >= slots && cells.is_power_of_two(),
                "{slots} slots: {cells}"
            );
        }
    }
}
