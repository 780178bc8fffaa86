//! Synchronisation primitives, switched to loom's model-checked versions under `cfg(loom)`.
//!
//! Only the hand-off protocol (the shared queue, its sleep/wake logic and the latches),
//! the published best position of ordered searches (`iter::find::Best`) and the task
//! graph's slots, ready stacks and runner count (`graph`) go through
//! this module, so that `cargo test --cfg loom` can explore its
//! interleavings. Worker-local state uses plain `Cell`s and never needs it.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize,
};
#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize,
};

pub(crate) use std::sync::atomic::Ordering;

/// Work-stealing deques: crossbeam's, or under loom a lock-based stand-in with the same
/// interface (crossbeam's deque is checked by crossbeam; the models check what sumac
/// builds on it).
pub(crate) mod deque {
    #[cfg(not(loom))]
    pub(crate) use crossbeam_deque::{Injector, Stealer, Worker};

    #[cfg(loom)]
    pub(crate) use self::model::{Injector, Stealer, Worker};

    #[cfg(loom)]
    mod model {
        use std::collections::VecDeque;

        use crossbeam_deque::Steal;
        use loom::sync::{Arc, Mutex};

        /// The owner's end of a deque: pops from the back (LIFO) or the front (FIFO).
        pub(crate) struct Worker<T> {
            items: Arc<Mutex<VecDeque<T>>>,
            lifo: bool,
        }

        /// A thief's end: steals from the front.
        pub(crate) struct Stealer<T> {
            items: Arc<Mutex<VecDeque<T>>>,
        }

        /// A queue anyone may push to and steal from, first in first out.
        pub(crate) struct Injector<T> {
            items: Mutex<VecDeque<T>>,
        }

        impl<T> Worker<T> {
            pub(crate) fn new_lifo() -> Self {
                Worker {
                    items: Arc::new(Mutex::new(VecDeque::new())),
                    lifo: true,
                }
            }
            pub(crate) fn new_fifo() -> Self {
                Worker {
                    items: Arc::new(Mutex::new(VecDeque::new())),
                    lifo: false,
                }
            }
            pub(crate) fn push(&self, item: T) {
                self.items.lock().unwrap().push_back(item);
            }
            pub(crate) fn pop(&self) -> Option<T> {
                let mut items = self.items.lock().unwrap();
                if self.lifo {
                    items.pop_back()
                } else {
                    items.pop_front()
                }
            }
            pub(crate) fn is_empty(&self) -> bool {
                self.items.lock().unwrap().is_empty()
            }
            pub(crate) fn stealer(&self) -> Stealer<T> {
                Stealer {
                    items: Arc::clone(&self.items),
                }
            }
        }

        /// Moves up to half of `items` (at least one) from their front: the first is
        /// returned, the rest pushed on `dest` in order (after `items`' lock is released,
        /// so that two thieves stealing from each other cannot deadlock).
        fn steal_batch<T>(items: &Mutex<VecDeque<T>>, dest: &Worker<T>) -> Steal<T> {
            let mut batch = {
                let mut items = items.lock().unwrap();
                let count = items.len().div_ceil(2);
                items.drain(..count).collect::<VecDeque<T>>()
            };
            let Some(first) = batch.pop_front() else {
                return Steal::Empty;
            };
            dest.items.lock().unwrap().extend(batch);
            Steal::Success(first)
        }

        impl<T> Stealer<T> {
            pub(crate) fn steal_batch_and_pop(&self, dest: &Worker<T>) -> Steal<T> {
                steal_batch(&self.items, dest)
            }
            pub(crate) fn is_empty(&self) -> bool {
                self.items.lock().unwrap().is_empty()
            }
        }

        impl<T> Injector<T> {
            pub(crate) fn new() -> Self {
                Injector {
                    items: Mutex::new(VecDeque::new()),
                }
            }
            pub(crate) fn push(&self, item: T) {
                self.items.lock().unwrap().push_back(item);
            }
            pub(crate) fn steal_batch_and_pop(&self, dest: &Worker<T>) -> Steal<T> {
                steal_batch(&self.items, dest)
            }
            pub(crate) fn is_empty(&self) -> bool {
                self.items.lock().unwrap().is_empty()
            }
        }
    }

    pub(crate) use crossbeam_deque::Steal;
}
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
