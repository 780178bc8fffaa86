//! Parallel stable sort: merge sort whose halves are sorted with `join` and merged in
//! parallel (the longer run is split at its middle, the other by binary search), with
//! the standard library's stable `sort_by` for small pieces.
//!
//! Panic safety: a merge first copies the two sorted runs into the scratch buffer and
//! then writes the merged output back into the slice. Until the merge completes, a
//! guard owns the job of copying the runs back if the comparator panics, so the slice
//! always ends up holding every element exactly once.

use std::cmp::Ordering;
use std::mem;
use std::ptr;

use super::SEQUENTIAL_SORT;

/// Runs of at most this many elements are merged sequentially.
const SEQUENTIAL_MERGE: usize = 4096;

pub(super) fn sort<T, F>(v: &mut [T], compare: &F)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if v.len() <= SEQUENTIAL_SORT || mem::size_of::<T>() == 0 {
        v.sort_by(compare);
        return;
    }
    // The scratch buffer: capacity for every element, length 0 (it never owns items, so
    // dropping it only frees memory).
    let mut scratch: Vec<T> = Vec::with_capacity(v.len());
    let buf = RawPtr(scratch.as_mut_ptr());
    crate::in_worker(|| recurse(v, buf, compare));
    drop(scratch);
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

/// Sorts `v` using `buf` (room for `v.len()` elements, disjoint from `v`) as scratch.
fn recurse<T, F>(v: &mut [T], buf: RawPtr<T>, compare: &F)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let len = v.len();
    if len <= SEQUENTIAL_SORT {
        v.sort_by(compare);
        return;
    }
    let mid = len / 2;
    {
        let (left, right) = v.split_at_mut(mid);
        // SAFETY: `mid < len`, and `buf` has room for `len` elements.
        let right_buf = unsafe { buf.add(mid) };
        crate::join(
            || recurse(left, buf, compare),
            || recurse(right, right_buf, compare),
        );
    }
    if compare(&v[mid - 1], &v[mid]) != Ordering::Greater {
        return; // Already in order.
    }
    let dest = RawPtr(v.as_mut_ptr());
    // SAFETY: `buf` has room for `len` elements and does not overlap `v`. After the copy
    // both hold bitwise copies of the elements; the slice's copies are considered moved
    // out (the merge overwrites them), the buffer's are the real ones until the merge
    // has written every slot of the slice.
    unsafe { ptr::copy_nonoverlapping(dest.0, buf.0, len) };
    let guard = CopyBack {
        src: buf,
        dst: dest,
        len,
    };
    // SAFETY: `buf[..mid]` and `buf[mid..len]` are sorted runs of initialised elements,
    // and `dest` has room for `len` elements, disjoint from `buf`.
    unsafe { merge(buf, mid, buf.add(mid), len - mid, dest, compare) };
    // Every slot of the slice now holds exactly one element; the buffer's copies are stale.
    mem::forget(guard);
}

/// On unwinding out of a merge, copies the runs back from the scratch buffer, so the
/// slice holds every element exactly once again.
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
        crate::join(
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
        );
    }
}

/// The sequential two-finger merge.
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
    let (mut i, mut j, mut k) = (0, 0, 0);
    // SAFETY: `i < left_len`, `j < right_len` and `k = i + j < left_len + right_len` keep
    // every access in bounds (see the function's contract); the references passed to
    // `compare` point at initialised elements no other task accesses.
    unsafe {
        while i < left_len && j < right_len {
            let (a, b) = (left.0.add(i), right.0.add(j));
            let take_right = compare(&*b, &*a) == Ordering::Less;
            let src = if take_right { b } else { a };
            ptr::copy_nonoverlapping(src, dest.0.add(k), 1);
            k += 1;
            if take_right {
                j += 1;
            } else {
                i += 1;
            }
        }
        ptr::copy_nonoverlapping(left.0.add(i), dest.0.add(k), left_len - i);
        k += left_len - i;
        ptr::copy_nonoverlapping(right.0.add(j), dest.0.add(k), right_len - j);
    }
}
