//! Parallel unstable sort: quicksort with a median-of-three / ninther pivot, the two
//! partitions sorted with `join`, equal-to-pivot runs peeled off, and the standard
//! library's `sort_unstable_by` for small pieces and for pieces that partition badly too
//! often. The slice is only ever rearranged by swaps, so it always holds every element
//! exactly once, even when the comparator panics.
//!
//! A partition makes no forks, and the first ones take milliseconds: it polls the
//! heartbeat flag as a loop does between blocks, so that a worker asking for work gets
//! the pieces waiting on this worker's list at once; and a piece of at least
//! [`LARGE_SORT_PIECE`](crate::policy::LARGE_SORT_PIECE) elements is a large fork, shared
//! as soon as it is recorded if members wait, even asleep (see `SCHEDULER.md`).

use std::cmp::Ordering;

use super::{piece_size, SEQUENTIAL_SORT};
use crate::iter::LoopPoll;
use crate::join::join_hinted;
use crate::policy::PARTITION_POLL_ELEMENTS;

pub(super) fn sort<T, F>(v: &mut [T], compare: &F)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if v.len() <= SEQUENTIAL_SORT {
        v.sort_unstable_by(compare);
        return;
    }
    let limit = usize::BITS - v.len().leading_zeros();
    // A one-thread pool runs the standard library's sort: the parallel algorithm's extra
    // partitioning work could never pay off there.
    crate::in_worker_single_aware(|single_thread| {
        if single_thread {
            v.sort_unstable_by(compare);
        } else {
            recurse(v, compare, limit);
        }
    });
}

fn recurse<T, F>(v: &mut [T], compare: &F, mut limit: u32)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let len = v.len();
    if len <= SEQUENTIAL_SORT || limit == 0 {
        v.sort_unstable_by(compare);
        return;
    }
    let is_less = |a: &T, b: &T| compare(a, b) == Ordering::Less;
    let poll = LoopPoll::current();

    let p = choose_pivot(v, &is_less);
    v.swap(0, p);
    let (head, rest) = v.split_at_mut(1);
    let pivot = &head[0];
    let mid = partition(rest, |x| is_less(x, pivot), &poll);
    if mid == 0 {
        // The pivot is a minimum: gather the elements equal to it, which are then in
        // their final place, and sort the rest.
        let equal = partition(rest, |x| !is_less(pivot, x), &poll);
        if equal < len / 8 {
            limit -= 1;
        }
        recurse(&mut rest[equal..], compare, limit);
        return;
    }
    // v[1..=mid] < pivot <= v[mid+1..]: put the pivot between them.
    v.swap(0, mid);
    if mid.min(len - mid - 1) < len / 8 {
        limit -= 1;
    }
    let (left, right) = v.split_at_mut(mid);
    let right = &mut right[1..];
    let size = piece_size(right.len());
    join_hinted(
        || recurse(left, compare, limit),
        || recurse(right, compare, limit),
        size,
    );
}

/// Moves the elements satisfying `pred` to the front; returns how many there are.
///
/// Branch-free Lomuto scheme: every element is swapped with the first one not known to
/// satisfy `pred`, and the boundary advances when it did. Only swaps, so a panic in
/// `pred` leaves a permutation. Polls `poll` once per [`PARTITION_POLL_ELEMENTS`].
fn partition<T>(v: &mut [T], pred: impl Fn(&T) -> bool, poll: &LoopPoll) -> usize {
    let len = v.len();
    let base = v.as_mut_ptr();
    let mut store = 0;
    let mut start = 0;
    while start < len {
        let end = len.min(start + PARTITION_POLL_ELEMENTS);
        for i in start..end {
            // SAFETY: `store <= i < len`, so both pointers are in bounds of `v`, which
            // this function borrows mutably; `pred` gets a shared reference that ends
            // before the swap; `ptr::swap` allows `store == i`. A panic in `pred` leaves
            // `v` a permutation of its elements (only whole swaps happen).
            unsafe {
                let goes_left = pred(&*base.add(i));
                std::ptr::swap(base.add(store), base.add(i));
                store += usize::from(goes_left);
            }
        }
        start = end;
        if poll.pending() {
            poll.serve();
        }
    }
    store
}

/// The index of a good pivot: the median of three samples, or of three medians of three
/// (a ninther) for longer slices.
fn choose_pivot<T>(v: &[T], is_less: &impl Fn(&T, &T) -> bool) -> usize {
    let len = v.len();
    let (a, b, c) = (len / 4, len / 2, len / 4 * 3);
    if len >= 128 {
        let a = median3(v, a - 1, a, a + 1, is_less);
        let b = median3(v, b - 1, b, b + 1, is_less);
        let c = median3(v, c - 1, c, c + 1, is_less);
        median3(v, a, b, c, is_less)
    } else {
        median3(v, a, b, c, is_less)
    }
}

fn median3<T>(v: &[T], a: usize, b: usize, c: usize, is_less: &impl Fn(&T, &T) -> bool) -> usize {
    let ab = is_less(&v[a], &v[b]);
    let bc = is_less(&v[b], &v[c]);
    if ab == bc {
        return b;
    }
    let ac = is_less(&v[a], &v[c]);
    if ab == ac {
        c
    } else {
        a
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::Mechanism;

    #[test]
    fn a_partition_answers_a_heartbeat_raised_before_it() {
        // No tick for an hour and no requests: only the partition's own poll can lower
        // the flag raised here.
        let pool = crate::ThreadPoolBuilder::new()
            .num_threads(2)
            .heartbeat_interval(Duration::from_secs(3600))
            .mechanism(Mechanism::Requests, false)
            .build()
            .unwrap();
        let mut v: Vec<u32> = (0..3 * PARTITION_POLL_ELEMENTS as u32).rev().collect();
        let (left, answered) = pool.install(|| {
            let poll = LoopPoll::current();
            poll.ask();
            assert!(poll.pending());
            let left = partition(&mut v, |x| *x < 100, &poll);
            (left, !poll.pending())
        });
        assert_eq!(left, 100);
        assert!(v[..100].iter().all(|x| *x < 100) && v[100..].iter().all(|x| *x >= 100));
        assert!(answered, "the partition never polled the flag");
    }
}
