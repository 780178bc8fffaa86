//! Latches: one-shot "it is done" signals that a waiting thread blocks on.
//!
//! The setter of a latch usually lets the waiter free it (the latch lives in the
//! waiter's stack frame), so [`Latch::set`] takes a raw pointer and must not touch the
//! latch after the store that publishes completion.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::registry::Registry;
use crate::sync::{self, AtomicBool, Condvar, Mutex};

/// A one-shot completion signal.
pub(crate) trait Latch {
    /// Sets the latch and wakes its waiter.
    ///
    /// # Safety
    /// `this` points to a live latch. The latch may be freed by its waiter as soon as it
    /// is set, so implementations must not touch `*this` after publishing.
    unsafe fn set(this: *const Self);
}

/// A latch for a thread outside the pool: it blocks on a mutex and condition variable.
pub(crate) struct LockLatch {
    done: Mutex<bool>,
    signal: Condvar,
}

impl LockLatch {
    pub(crate) fn new() -> Self {
        LockLatch {
            done: Mutex::new(false),
            signal: Condvar::new(),
        }
    }

    /// Blocks until the latch is set.
    pub(crate) fn wait(&self) {
        let mut done = sync::lock(&self.done);
        while !*done {
            done = sync::wait(&self.signal, done);
        }
    }
}

impl Latch for LockLatch {
    unsafe fn set(this: *const Self) {
        // SAFETY: the latch is live until the waiter sees `done`, which it can only do
        // after we release the lock: we notify while holding it.
        let this = unsafe { &*this };
        let mut done = sync::lock(&this.done);
        *done = true;
        this.signal.notify_all();
    }
}

/// A latch for a worker (of any pool) that keeps running its pool's jobs while it waits.
pub(crate) struct WorkerLatch {
    done: AtomicBool,
    registry: Arc<Registry>,
    index: usize,
}

impl WorkerLatch {
    pub(crate) fn new(registry: &Arc<Registry>, index: usize) -> Self {
        WorkerLatch {
            done: AtomicBool::new(false),
            registry: Arc::clone(registry),
            index,
        }
    }

    /// True once the latch is set.
    pub(crate) fn probe(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }
}

impl Latch for WorkerLatch {
    unsafe fn set(this: *const Self) {
        // Keep the waiter's registry alive for the wake-up: once `done` is stored the
        // waiter may return, drop its pool and free the registry.
        // SAFETY: the latch is live until the store below.
        let (registry, index) = unsafe { (Arc::clone(&(*this).registry), (*this).index) };
        // SAFETY: as above; we do not touch `*this` after this store.
        unsafe { (*this).done.store(true, Ordering::Release) };
        registry.queue.wake(index);
    }
}
