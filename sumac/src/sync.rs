//! Synchronisation primitives, switched to loom's model-checked versions under `cfg(loom)`.
//!
//! Only the hand-off protocol (the shared queue, its sleep/wake logic and the latches),
//! the published best position of ordered searches (`iter::find::Best`) and the task
//! graph's slots, ready stacks and runner count (`graph`) go through
//! this module, so that `cargo test --cfg loom` can explore its
//! interleavings. Worker-local state uses plain `Cell`s and never needs it.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize,
};
#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize,
};
#[cfg(not(loom))]
pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};

/// Locks `mutex`, ignoring poisoning: the state it protects is kept consistent by
/// code that never panics while holding the lock.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    #[cfg(loom)]
    {
        mutex.lock().unwrap()
    }
    #[cfg(not(loom))]
    {
        mutex
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Waits on `condvar`, ignoring poisoning (see [`lock`]).
pub(crate) fn wait<'a, T>(condvar: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    #[cfg(loom)]
    {
        condvar.wait(guard).unwrap()
    }
    #[cfg(not(loom))]
    {
        condvar
            .wait(guard)
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Waits on `condvar` for at most `timeout`, ignoring poisoning (see [`lock`]). Under
/// loom, which has no clock, it waits as [`wait`] does or returns at once (a spurious
/// wake-up), which callers must handle anyway.
pub(crate) fn wait_timeout<'a, T>(
    condvar: &Condvar,
    guard: MutexGuard<'a, T>,
    timeout: std::time::Duration,
) -> MutexGuard<'a, T> {
    #[cfg(loom)]
    {
        let _ = timeout;
        condvar.wait(guard).unwrap()
    }
    #[cfg(not(loom))]
    {
        condvar
            .wait_timeout(guard, timeout)
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .0
    }
}
