//! Parallel stable sort: merge sort whose halves are sorted with `join` and merged in
//! parallel (the longer run is split at its middle, the other by binary search), with
//! the standard library's stable `sort_by` for small pieces. Short merges run
//! sequentially as a bidirectional merge (smallest to the front and largest to the back in
//! the same step) whose ends never touch an element the other end took, so that a
//! comparator that is not a total order still leaves each element exactly once.
//!
//! The sorted halves are produced in the other array (slice or scratch buffer) than the
//! one their merge writes to, so no level copies its input before merging ("ping-pong").
//!
//! Panic safety: every call keeps the invariant "if I unwind, my elements are all in the
//! slice, exactly once". Elements only ever move by bitwise copies between the slice and
//! the scratch buffer; whenever the real copies sit in the buffer (sorted halves waiting
//! to be merged back into the slice), a guard copies them back to the slice if the
//! comparator panics.

use std::cmp::Ordering;
use std::mem;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

use super::piece_size;
use crate::join::join_hinted;

/// Pieces of at most this many elements are sorted by the standard library's stable sort
/// (far fewer under Miri, so that its small inputs reach the parallel merges).
const SEQUENTIAL_SORT: usize = if cfg!(miri) { 48 } else { 8192 };

/// Runs of at most this many elements are merged sequentially (fewer under Miri).
const SEQUENTIAL_MERGE: usize = if cfg!(miri) { 24 } else { 4096 };

pub(super) fn sort<T, F>(v: &mut [T], compare: &F)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let len = v.len();
    if len <= SEQUENTIAL_SORT || mem::size_of::<T>() == 0 {
        v.sort_by(compare);
        return;
    }
    crate::in_worker_single_aware(|single_thread| {
        if single_thread {
            // A one-thread pool runs the standard library's sort: the merge passes of
            // the parallel algorithm could never pay off there.
            v.sort_by(compare);
            return;
        }
        // The scratch buffer: capacity for every element, length 0 (it never owns items,
        // so dropping it only frees memory).
        let mut scratch: Vec<T> = Vec::with_capacity(len);
        let buf = RawPtr(scratch.as_mut_ptr());
        // From here on the slice is only accessed through pointers derived from `root`.
        let root = RawPtr(v.as_mut_ptr());
        // SAFETY: `root` points at `len` initialised elements that we hold exclusively
        // (through `v`), `buf` at room for `len` elements in a separate allocation.
        unsafe { recurse(root, len, buf, false, compare) };
        drop(scratch);
    });
}

/// A raw pointer into the scratch buffer or the slice, movable across threads: each
/// task works on a disjoint window.
struct RawPtr<T>(*mut T);

impl<T> Clone for RawPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for RawPtr<T> {}

// SAFETY: the pointer is used to move `T` values between threads (each window is used by
// one task at a time), which is sound for `T: Send`.
unsafe impl<T: Send> Send for RawPtr<T> {}
// SAFETY: shared copies of the pointer are only dereferenced on disjoint windows, or to
// read an element while no task writes it; moving access between threads needs `T: Send`.
unsafe impl<T: Send> Sync for RawPtr<T> {}

impl<T> RawPtr<T> {
    /// # Safety
    /// `self + n` must stay within (or one past) the same allocation.
    unsafe fn add(self, n: usize) -> Self {
        // SAFETY: guaranteed by the caller.
        RawPtr(unsafe { self.0.add(n) })
    }
}

/// Sorts the `len` elements at `v`; the sorted result ends up at `v`, or at `buf` when
/// `into_buf` (then the copies left at `v` are stale).
///
/// # Safety
/// `v` holds `len` initialised elements owned by this call; `buf` has room for `len`
/// elements and overlaps neither `v` nor any window another task uses. If this call
/// unwinds, the elements are all at `v` again, each exactly once.
unsafe fn recurse<T, F>(v: RawPtr<T>, len: usize, buf: RawPtr<T>, into_buf: bool, compare: &F)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if len <= SEQUENTIAL_SORT {
        // SAFETY: the window holds `len` initialised elements that only this call uses.
        let slice = unsafe { std::slice::from_raw_parts_mut(v.0, len) };
        // The standard sort leaves a permutation if it unwinds.
        slice.sort_by(compare);
        if into_buf {
            // SAFETY: both windows have room for `len` elements and do not overlap.
            unsafe { ptr::copy_nonoverlapping(v.0, buf.0, len) };
        }
        return;
    }
    let mid = len / 2;
    // SAFETY: `mid < len`: both pointers stay inside their windows.
    let (v_right, buf_right) = unsafe { (v.add(mid), buf.add(mid)) };
    // The halves are sorted into the other array than the one this call ends up in.
    let halves_into_buf = !into_buf;
    let done = [AtomicBool::new(false), AtomicBool::new(false)];
    let restore = RestoreHalves {
        done: &done,
        active: halves_into_buf,
        v,
        buf,
        mid,
        len,
    };
    join_hinted(
        || {
            // SAFETY: the left halves of the windows, disjoint from the right ones.
            unsafe { recurse(v, mid, buf, halves_into_buf, compare) };
            done[0].store(true, AtomicOrdering::Relaxed);
        },
        || {
            // SAFETY: the right halves of the windows.
            unsafe { recurse(v_right, len - mid, buf_right, halves_into_buf, compare) };
            done[1].store(true, AtomicOrdering::Relaxed);
        },
        piece_size(len - mid),
    );
    mem::forget(restore);

    let (src, dest) = if halves_into_buf { (buf, v) } else { (v, buf) };
    // While the real elements sit in the buffer, a panic must copy them back.
    let copy_back = CopyBack {
        src: buf,
        dst: v,
        len: if halves_into_buf { len } else { 0 },
    };
    // SAFETY: `src` holds the two sorted runs (`mid` and `len - mid` initialised elements)
    // and `dest` has room for `len` elements in the other, non-overlapping, array.
    unsafe {
        let (left_last, right_first) = (&*src.0.add(mid - 1), &*src.0.add(mid));
        if compare(left_last, right_first) != Ordering::Greater {
            // Already in order.
            ptr::copy_nonoverlapping(src.0, dest.0, len);
        } else {
            merge(src, mid, src.add(mid), len - mid, dest, compare);
        }
    }
    // The merged elements are at `dest`: at `v` (done), or at `buf` (the caller's job).
    mem::forget(copy_back);
}

/// On unwinding out of the sorting of two halves into the buffer, copies the halves
/// that completed back to the slice (a half that unwound put its elements back itself).
struct RestoreHalves<'a, T> {
    done: &'a [AtomicBool; 2],
    active: bool,
    v: RawPtr<T>,
    buf: RawPtr<T>,
    mid: usize,
    len: usize,
}

impl<T> Drop for RestoreHalves<'_, T> {
    fn drop(&mut self) {
        if !self.active {
            return;
        }
        // SAFETY: a completed half's real elements are in its buffer window; both windows
        // have room for them and do not overlap; every task has finished (`join` waits
        // for both sides before propagating a panic).
        unsafe {
            if self.done[0].load(AtomicOrdering::Relaxed) {
                ptr::copy_nonoverlapping(self.buf.0, self.v.0, self.mid);
            }
            if self.done[1].load(AtomicOrdering::Relaxed) {
                ptr::copy_nonoverlapping(
                    self.buf.0.add(self.mid),
                    self.v.0.add(self.mid),
                    self.len - self.mid,
                );
            }
        }
    }
}

/// On unwinding out of a merge from the buffer into the slice, copies the runs back
/// from the buffer, so the slice holds every element exactly once again.
struct CopyBack<T> {
    src: RawPtr<T>,
    dst: RawPtr<T>,
    len: usize,
}

impl<T> Drop for CopyBack<T> {
    fn drop(&mut self) {
        // SAFETY: `src` holds the `len` real elements (the merge only reads it), `dst` has
        // room for `len` elements and does not overlap `src`; every task of the merge has
        // finished (`join` waits for both sides before propagating a panic).
        unsafe { ptr::copy_nonoverlapping(self.src.0, self.dst.0, self.len) };
    }
}

/// Merges the sorted runs `left[..left_len]` and `right[..right_len]` into `dest`, stably
/// (on ties, `left` first), in parallel for long runs.
///
/// # Safety
/// The runs hold initialised elements and `dest` has room for `left_len + right_len`
/// elements; `dest` overlaps neither run. Elements are copied bitwise: the caller decides
/// which copies are the real ones.
unsafe fn merge<T, F>(
    left: RawPtr<T>,
    left_len: usize,
    right: RawPtr<T>,
    right_len: usize,
    dest: RawPtr<T>,
    compare: &F,
) where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if left_len == 0 || right_len == 0 || left_len + right_len <= SEQUENTIAL_MERGE {
        // SAFETY: forwarded from the caller.
        unsafe { merge_sequential(left, left_len, right, right_len, dest, compare) };
        return;
    }
    // SAFETY: the runs hold `left_len` / `right_len` initialised elements that no other
    // task accesses while this merge runs.
    let (l, r) = unsafe {
        (
            std::slice::from_raw_parts(left.0, left_len),
            std::slice::from_raw_parts(right.0, right_len),
        )
    };
    let (left_mid, right_mid) = if left_len >= right_len {
        // Split the left run at its middle; right elements smaller than that element
        // go before it.
        let left_mid = left_len / 2;
        let pivot = &l[left_mid];
        (
            left_mid,
            r.partition_point(|x| compare(x, pivot) == Ordering::Less),
        )
    } else {
        // Split the right run at its middle; left elements not greater than that element
        // go before it (stability: left first on ties).
        let right_mid = right_len / 2;
        let pivot = &r[right_mid];
        (
            l.partition_point(|x| compare(x, pivot) != Ordering::Greater),
            right_mid,
        )
    };
    // SAFETY: the split points are within the runs, so all the pointers stay in bounds;
    // the two sub-merges read disjoint parts of the runs and write disjoint parts of
    // `dest` (the first writes `left_mid + right_mid` elements).
    unsafe {
        let (left2, right2) = (left.add(left_mid), right.add(right_mid));
        let dest2 = dest.add(left_mid + right_mid);
        join_hinted(
            move || merge(left, left_mid, right, right_mid, dest, compare),
            move || {
                merge(
                    left2,
                    left_len - left_mid,
                    right2,
                    right_len - right_mid,
                    dest2,
                    compare,
                )
            },
            piece_size(left_len - left_mid + right_len - right_mid),
        );
    }
}

/// The sequential merge: a bidirectional prefix, then a forward two-finger merge of
/// what is left in the middle.
///
/// The bidirectional part runs two independent branchless merges per step, one taking
/// the smallest remaining element to the front of `dest` and one the largest to its back,
/// so the two dependency chains overlap (about twice the speed of a forward merge on
/// random keys). Each end only ever reads (and hands to `compare`) elements that neither
/// end has taken yet: it stops as soon as one run has nothing left between the two ends,
/// whatever the comparator answers. So every element is copied to `dest` exactly once, and
/// is copied only after its last comparison: a mutation the comparator makes through
/// interior mutability always reaches the copy (the standard library's guarantee; a
/// stale copy of an element whose owned memory the comparator replaced would be a double
/// free).
///
/// # Safety
/// As for [`merge`].
unsafe fn merge_sequential<T, F>(
    left: RawPtr<T>,
    left_len: usize,
    right: RawPtr<T>,
    right_len: usize,
    dest: RawPtr<T>,
    compare: &F,
) where
    F: Fn(&T, &T) -> Ordering,
{
    // Front cursors (next untaken) and back cursors (one past the last untaken): the
    // untaken elements are `left[i..i_end]` and `right[j..j_end]`; the front has written
    // `dest[..i + j]` and the back `dest[i_end + j_end..]`.
    let (mut i, mut j) = (0, 0);
    let (mut i_end, mut j_end) = (left_len, right_len);
    // SAFETY: each step runs only while `i < i_end` and `j < j_end`, so the front reads
    // `left[i]`, `right[j]` and the back `left[i_end - 1]`, `right[j_end - 1]`, all within
    // the runs and not taken yet; each step takes exactly one of the two elements it read
    // and moves its cursor past it, so the front writes `dest[i + j]` and the back
    // `dest[i_end + j_end - 1]`, slots not written yet, below `left_len + right_len`.
    // All of `dest` is room the caller gave us, and the references passed to `compare`
    // point at initialised elements no other task accesses.
    unsafe {
        while i < i_end && j < j_end {
            let (a, b) = (left.0.add(i), right.0.add(j));
            let take_right = compare(&*b, &*a) == Ordering::Less;
            ptr::copy_nonoverlapping(if take_right { b } else { a }, dest.0.add(i + j), 1);
            j += usize::from(take_right);
            i += usize::from(!take_right);
            if i == i_end || j == j_end {
                break;
            }

            let (a, b) = (left.0.add(i_end - 1), right.0.add(j_end - 1));
            // On ties the right element goes last (stability).
            let take_left = compare(&*b, &*a) == Ordering::Less;
            let back = dest.0.add(i_end + j_end - 1);
            ptr::copy_nonoverlapping(if take_left { a } else { b }, back, 1);
            i_end -= usize::from(take_left);
            j_end -= usize::from(!take_left);
        }
    }
    // SAFETY: the middle parts `left[i..i_end]` and `right[j..j_end]` are what neither end
    // took, and `dest[i + j..i_end + j_end]` is room for exactly those elements.
    unsafe {
        merge_forward(left, i, i_end, right, j, j_end, dest.add(i + j), compare);
    }
}

/// The forward two-finger merge of `left[i..i_end]` and `right[j..j_end]` into `dest`.
///
/// # Safety
/// As for [`merge`], for those parts of the runs; `dest` has room for their total length.
#[allow(clippy::too_many_arguments)]
unsafe fn merge_forward<T, F>(
    left: RawPtr<T>,
    mut i: usize,
    i_end: usize,
    right: RawPtr<T>,
    mut j: usize,
    j_end: usize,
    dest: RawPtr<T>,
    compare: &F,
) where
    F: Fn(&T, &T) -> Ordering,
{
    let mut k = 0;
    // SAFETY: `i < i_end`, `j < j_end` and `k` counts the elements taken so far, below
    // the total, keep every access in bounds (see the function's contract); the references
    // passed to `compare` point at initialised elements no other task accesses.
    unsafe {
        while i < i_end && j < j_end {
            let (a, b) = (left.0.add(i), right.0.add(j));
            let take_right = compare(&*b, &*a) == Ordering::Less;
            let src = if take_right { b } else { a };
            ptr::copy_nonoverlapping(src, dest.0.add(k), 1);
            k += 1;
            j += usize::from(take_right);
            i += usize::from(!take_right);
        }
        ptr::copy_nonoverlapping(left.0.add(i), dest.0.add(k), i_end - i);
        k += i_end - i;
        ptr::copy_nonoverlapping(right.0.add(j), dest.0.add(k), j_end - j);
    }
}
