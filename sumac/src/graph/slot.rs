//! One task's slot: its counters and its closure, in one cache line.
//!
//! A slot is written by the thread that creates its task and read by the thread that runs
//! it; both touch one 64-byte line. The closure lives inline when it fits
//! [`INLINE_BYTES`] with an alignment of at most 8; a bigger one is boxed (one
//! allocation for that task) and the box lives inline.
//!
//! # The two atomic words
//! * `pending`: `generation << 32 | NOT_READIED | POISONED | OWN_LINK_TAKEN | unfinished
//!   dependencies`. A task may run once `NOT_READIED` and the count are zero: it was
//!   readied and every dependency finished. Whoever makes them zero owns the run.
//!   `POISONED` says a dependency failed or the task was cancelled: it is finished
//!   without running. `OWN_LINK_TAKEN` says the task's own dependency link is taken for
//!   this generation (set in the same compare-and-swap that counts the dependency).
//! * `dependents`: `generation << 32 | CLOSED | FAILED | first link`: the tasks waiting
//!   for this one, as a list of links. Finishing the task sets `CLOSED` (and `FAILED`)
//!   with one read-modify-write that also takes the list; a dependency pushed later
//!   sees `CLOSED` and counts as finished. `CLOSED` stays until the slot is reused, and
//!   a reused slot has a new generation, so a stale id can never link into, ready or
//!   wait for its successor.
//!
//! Both carry the generation so that every compare-and-swap of a `TaskId` holder fails
//! once the slot belongs to another task.

use std::cell::UnsafeCell;
use std::mem::{self, MaybeUninit};
use std::ptr;

use super::Task;
use crate::sync::{AtomicU32, AtomicU64};

/// Bytes of closure stored inline in a slot (bigger closures are boxed).
pub(crate) const INLINE_BYTES: usize = 32;
const INLINE_WORDS: usize = INLINE_BYTES / mem::size_of::<usize>();

pub(crate) const NOT_READIED: u64 = 1 << 31;
pub(crate) const POISONED: u64 = 1 << 30;
/// The task's own dependency link is taken (see `Graph::own_link`).
pub(crate) const OWN_LINK_TAKEN: u64 = 1 << 29;
pub(crate) const COUNT_MASK: u64 = OWN_LINK_TAKEN - 1;

pub(crate) const CLOSED: u64 = 1 << 31;
pub(crate) const FAILED: u64 = 1 << 30;
/// The link field of `dependents` (`NO_LINK`: an empty list).
pub(crate) const LINK_MASK: u64 = FAILED - 1;
pub(crate) const NO_LINK: u64 = LINK_MASK;

/// `meta`: the task is reusable (`Fn`, kept after it ran).
pub(crate) const REUSABLE: u32 = 1 << 31;
pub(crate) const CHANNEL_MASK: u32 = 0xFFFF;

#[inline]
pub(crate) fn generation_of(word: u64) -> u32 {
    (word >> 32) as u32
}

/// How to run and drop the closure in a slot, for one closure type. The context is
/// passed as an erased pointer to a [`Task`] so that the table has no lifetime.
pub(crate) struct TaskVTable {
    /// Runs the closure; a one-shot closure is moved out (the storage is then empty).
    run: unsafe fn(*mut u8, *const ()),
    /// Drops a closure that will not run.
    drop: unsafe fn(*mut u8),
}

/// One task's slot (see the module documentation).
#[repr(C, align(64))]
pub(crate) struct Slot {
    pub(crate) pending: AtomicU64,
    pub(crate) dependents: AtomicU64,
    /// `REUSABLE | channel`: written by the creator, read by whoever readies,
    /// releases or runs the task (ordered by the same hand-offs as the closure).
    pub(crate) meta: AtomicU32,
    /// The closure's vtable; null when the slot holds no closure. Written by the creator
    /// and by whoever consumes the closure (each then owns the slot's closure).
    vtable: UnsafeCell<*const TaskVTable>,
    storage: UnsafeCell<[MaybeUninit<usize>; INLINE_WORDS]>,
}

impl Slot {
    #[cfg(loom)]
    pub(crate) fn new() -> Self {
        Slot {
            pending: AtomicU64::new(0),
            dependents: AtomicU64::new(0),
            meta: AtomicU32::new(0),
            vtable: UnsafeCell::new(ptr::null()),
            storage: UnsafeCell::new([MaybeUninit::uninit(); INLINE_WORDS]),
        }
    }

    /// Stores `f` as a one-shot task.
    ///
    /// # Safety
    /// The caller owns the slot (just allocated) and it holds no closure. The closure is
    /// run only with a context of the graph whose lifetime is `'a`.
    #[inline]
    pub(crate) unsafe fn put_once<'a, F: FnOnce(&Task<'_, 'a>) + Send + 'a>(&self, f: F) {
        let vtable: *const TaskVTable = if fits_inline::<F>() {
            // SAFETY: the caller owns the slot; the storage is big and aligned enough.
            unsafe { self.storage.get().cast::<F>().write(f) };
            &<Inline<F> as OnceTable<'a>>::ONCE
        } else {
            // SAFETY: as above; a box pointer fits the storage.
            unsafe { self.storage.get().cast::<Box<F>>().write(Box::new(f)) };
            &<Boxed<F> as OnceTable<'a>>::ONCE
        };
        // SAFETY: the caller owns the slot.
        unsafe { *self.vtable.get() = vtable };
    }

    /// Stores `f` as a reusable task.
    ///
    /// # Safety
    /// As [`put_once`](Self::put_once).
    pub(crate) unsafe fn put_reusable<'a, F: Fn(&Task<'_, 'a>) + Send + 'a>(&self, f: F) {
        let vtable: *const TaskVTable = if fits_inline::<F>() {
            // SAFETY: as in `put_once`.
            unsafe { self.storage.get().cast::<F>().write(f) };
            &<Inline<F> as ReusableTable<'a>>::REUSABLE
        } else {
            // SAFETY: as in `put_once`.
            unsafe { self.storage.get().cast::<Box<F>>().write(Box::new(f)) };
            &<Boxed<F> as ReusableTable<'a>>::REUSABLE
        };
        // SAFETY: the caller owns the slot.
        unsafe { *self.vtable.get() = vtable };
    }

    /// Runs the closure with `context`; a one-shot closure is consumed (and the slot then
    /// holds none), a reusable one stays. A panic propagates to the caller; the closure
    /// is consumed (dropped) all the same.
    ///
    /// # Safety
    /// The caller owns the run of this task (it made `pending` zero), the slot holds its
    /// closure, and `context` belongs to the graph the closure was stored for.
    #[inline]
    pub(crate) unsafe fn run(&self, reusable: bool, context: &Task<'_, '_>) {
        // SAFETY: the caller owns the run, so nobody else touches the vtable or storage.
        unsafe {
            let vtable = *self.vtable.get();
            debug_assert!(!vtable.is_null());
            if !reusable {
                *self.vtable.get() = ptr::null();
            }
            let context: *const Task<'_, '_> = context;
            ((*vtable).run)(self.storage.get().cast::<u8>(), context.cast::<()>());
        }
    }

    /// Drops the closure if the slot holds one (a task that will not run).
    ///
    /// # Safety
    /// The caller owns the slot's closure: it owns the task's run, or no other thread
    /// can touch the graph.
    pub(crate) unsafe fn drop_closure(&self) {
        // SAFETY: as the caller guarantees.
        unsafe {
            let vtable = *self.vtable.get();
            if !vtable.is_null() {
                *self.vtable.get() = ptr::null();
                ((*vtable).drop)(self.storage.get().cast::<u8>());
            }
        }
    }
}

const fn fits_inline<F>() -> bool {
    mem::size_of::<F>() <= INLINE_BYTES && mem::align_of::<F>() <= mem::align_of::<usize>()
}

/// The vtables of a one-shot closure type.
trait OnceTable<'a> {
    const ONCE: TaskVTable;
}

/// The vtables of a reusable closure type.
trait ReusableTable<'a> {
    const REUSABLE: TaskVTable;
}

/// A closure stored inline.
struct Inline<F>(F);

/// A closure stored as a box.
struct Boxed<F>(F);

impl<'a, F: FnOnce(&Task<'_, 'a>)> OnceTable<'a> for Inline<F> {
    const ONCE: TaskVTable = TaskVTable {
        run: |storage, context| {
            // SAFETY: the storage holds an `F` (see `put_once`) that nobody reads again,
            // and `context` is a `Task` of the graph of lifetime `'a` (see `Slot::run`).
            unsafe {
                let f = storage.cast::<F>().read();
                f(&*context.cast::<Task<'_, 'a>>());
            }
        },
        drop: drop_in_place::<F>,
    };
}

impl<'a, F: Fn(&Task<'_, 'a>)> ReusableTable<'a> for Inline<F> {
    const REUSABLE: TaskVTable = TaskVTable {
        run: |storage, context| {
            // SAFETY: the storage holds an `F` (see `put_reusable`); `context` as above.
            unsafe { (*storage.cast::<F>())(&*context.cast::<Task<'_, 'a>>()) }
        },
        drop: drop_in_place::<F>,
    };
}

impl<'a, F: FnOnce(&Task<'_, 'a>)> OnceTable<'a> for Boxed<F> {
    const ONCE: TaskVTable = TaskVTable {
        run: |storage, context| {
            // SAFETY: the storage holds a `Box<F>` (see `put_once`) that nobody reads
            // again; `context` as above.
            unsafe {
                let f = storage.cast::<Box<F>>().read();
                f(&*context.cast::<Task<'_, 'a>>());
            }
        },
        drop: drop_in_place::<Box<F>>,
    };
}

impl<'a, F: Fn(&Task<'_, 'a>)> ReusableTable<'a> for Boxed<F> {
    const REUSABLE: TaskVTable = TaskVTable {
        run: |storage, context| {
            // SAFETY: the storage holds a `Box<F>` (see `put_reusable`); `context` as above.
            unsafe { (**storage.cast::<Box<F>>())(&*context.cast::<Task<'_, 'a>>()) }
        },
        drop: drop_in_place::<Box<F>>,
    };
}

/// Drops the `T` at `storage`.
///
/// # Safety
/// `storage` holds a `T` that nobody uses again.
unsafe fn drop_in_place<T>(storage: *mut u8) {
    // SAFETY: as the caller guarantees.
    unsafe { ptr::drop_in_place(storage.cast::<T>()) }
}

/// Types whose all-zero bit pattern is a valid value, so that a big array of them can
/// come from zeroed memory that the operating system maps in only when first touched
/// (a graph of 2^23 tasks costs nothing until its slots are used).
///
/// # Safety
/// All-zero bytes must be a valid value of the type.
#[cfg(not(loom))]
pub(crate) unsafe trait Zeroable {}

// SAFETY: zero is a valid atomic integer.
#[cfg(not(loom))]
unsafe impl Zeroable for AtomicU32 {}
// SAFETY: atomics of zero, a null vtable pointer and uninitialised storage.
#[cfg(not(loom))]
unsafe impl Zeroable for Slot {}

/// A boxed slice of `len` zeroed values.
#[cfg(not(loom))]
pub(crate) fn zeroed_slice<T: Zeroable>(len: usize) -> Box<[T]> {
    if len == 0 || mem::size_of::<T>() == 0 {
        return (0..len)
            // SAFETY: `T: Zeroable`.
            .map(|_| unsafe { mem::zeroed() })
            .collect();
    }
    let layout = std::alloc::Layout::array::<T>(len).expect("graph capacity overflows");
    // SAFETY: the layout has a non-zero size.
    let raw = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if raw.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    // SAFETY: `raw` is a fresh allocation of `len` zeroed `T`s (valid by `Zeroable`)
    // with the layout of `[T; len]`, which a boxed slice frees with the same layout.
    unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(raw, len)) }
}
