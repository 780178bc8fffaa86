//! A lock-free stack of free indices, linked through an index array that lives beside
//! the slots (`next[i]` is the index after `i`), so that it never allocates, and the
//! chains of indices that threads collect privately before pushing them in one go.
//!
//! [`FreeStack`] holds free slots (or free dependency links). Allocation pops a run of up
//! to `n` with one compare-and-swap on a head tagged with a pop counter, so a head that
//! was popped and pushed again between a reader's load and its swap (ABA) fails the
//! swap. The links a popper walks before its swap may be rewritten under it by a
//! concurrent pop and push: they are atomics, each read is bounds-checked, and the
//! tagged swap then fails, so a torn walk is retried, never trusted.
//!
//! Invariant: an index is on at most one stack or chain at a time, and only the thread
//! that removed it from a stack writes its link before pushing it again.

use std::sync::atomic::Ordering;

use crate::sync::{AtomicU32, AtomicU64};

/// The end of a chain (no index).
pub(crate) const NIL: u32 = u32::MAX;

/// A chain of indices linked through `next`: `first`, then `next[first]`, ... `count`
/// of them, ending at `last`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Chain {
    pub(crate) first: u32,
    pub(crate) last: u32,
    pub(crate) count: u32,
}

impl Chain {
    pub(crate) const EMPTY: Chain = Chain {
        first: NIL,
        last: NIL,
        count: 0,
    };

    pub(crate) fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Appends `index` (which is on no stack and no other chain) at the end.
    #[inline]
    pub(crate) fn push_back(&mut self, next: &[AtomicU32], index: u32) {
        next[index as usize].store(NIL, Ordering::Relaxed);
        if self.count == 0 {
            self.first = index;
        } else {
            next[self.last as usize].store(index, Ordering::Relaxed);
        }
        self.last = index;
        self.count += 1;
    }

    /// Prepends `index` (which is on no stack and no other chain).
    #[inline]
    pub(crate) fn push_front(&mut self, next: &[AtomicU32], index: u32) {
        if self.count == 0 {
            next[index as usize].store(NIL, Ordering::Relaxed);
            self.last = index;
        } else {
            next[index as usize].store(self.first, Ordering::Relaxed);
        }
        self.first = index;
        self.count += 1;
    }
}

/// A stack of free indices with a pop-tagged head (see the module documentation).
pub(crate) struct FreeStack {
    /// `tag << 32 | top index` (`NIL` when empty); `tag` counts successful pops.
    head: AtomicU64,
}

const INDEX_MASK: u64 = 0xFFFF_FFFF;

impl FreeStack {
    pub(crate) fn new() -> FreeStack {
        FreeStack {
            head: AtomicU64::new(NIL as u64),
        }
    }

    /// Empties the stack (its indices are then on no stack). Only when no other thread
    /// uses it.
    pub(crate) fn clear(&self) {
        let head = self.head.load(Ordering::Relaxed);
        self.head
            .store((head & !INDEX_MASK) | NIL as u64, Ordering::Release);
    }

    /// Pushes `chain` (non-empty, owned by the caller). Release: the next owner of an
    /// index sees what the pusher wrote before.
    pub(crate) fn push(&self, next: &[AtomicU32], chain: Chain) {
        debug_assert!(!chain.is_empty());
        let last = &next[chain.last as usize];
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            last.store((head & INDEX_MASK) as u32, Ordering::Relaxed);
            let new = (head & !INDEX_MASK) | chain.first as u64;
            match self
                .head
                .compare_exchange_weak(head, new, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(actual) => head = actual,
            }
        }
    }

    /// Pops up to `n` (at least 1) indices with one successful compare-and-swap; returns
    /// them as a chain (empty if the stack is). The chain's links are the caller's.
    pub(crate) fn pop(&self, next: &[AtomicU32], n: u32) -> Chain {
        debug_assert!(n >= 1);
        let mut head = self.head.load(Ordering::Acquire);
        'retry: loop {
            let top = (head & INDEX_MASK) as u32;
            if top == NIL {
                return Chain::EMPTY;
            }
            let mut last = top;
            let mut count = 1;
            let mut after;
            loop {
                after = next[last as usize].load(Ordering::Relaxed);
                if after != NIL && after as usize >= next.len() {
                    // A torn walk (the stack changed under us): the swap would fail.
                    head = self.head.load(Ordering::Acquire);
                    continue 'retry;
                }
                if count == n || after == NIL {
                    break;
                }
                last = after;
                count += 1;
            }
            let tag = (head >> 32).wrapping_add(1);
            let new = (tag << 32) | after as u64;
            match self
                .head
                .compare_exchange_weak(head, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    return Chain {
                        first: top,
                        last,
                        count,
                    }
                }
                Err(actual) => head = actual,
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn links(n: usize) -> Vec<AtomicU32> {
        (0..n).map(|_| AtomicU32::new(NIL)).collect()
    }

    fn walk(next: &[AtomicU32], mut at: u32, limit: usize) -> Vec<u32> {
        let mut out = Vec::new();
        while at != NIL && out.len() < limit {
            out.push(at);
            at = next[at as usize].load(Ordering::Relaxed);
        }
        out
    }

    #[test]
    fn a_free_stack_pops_what_was_pushed_in_runs_of_at_most_n() {
        let next = links(8);
        let stack = FreeStack::new();
        let mut chain = Chain::EMPTY;
        for i in 0..5 {
            chain.push_back(&next, i);
        }
        stack.push(&next, chain);
        let first = stack.pop(&next, 3);
        assert_eq!(first.count, 3);
        assert_eq!(walk(&next, first.first, 3), [0, 1, 2]);
        assert_eq!(first.last, 2);
        let second = stack.pop(&next, 3);
        assert_eq!(second.count, 2);
        assert_eq!(walk(&next, second.first, 2), [3, 4]);
        assert!(stack.pop(&next, 1).is_empty());
    }

    #[test]
    fn chains_link_in_order_from_either_end() {
        let next = links(4);
        let mut chain = Chain::EMPTY;
        chain.push_front(&next, 2);
        chain.push_front(&next, 1);
        chain.push_back(&next, 3);
        assert_eq!(walk(&next, chain.first, 4), [1, 2, 3]);
        assert_eq!((chain.last, chain.count), (3, 3));
    }
}
