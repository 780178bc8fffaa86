//! Synchronisation primitives, switched to loom's model-checked versions under `cfg(loom)`.
//!
//! The hand-off protocol (the queues, their sleep/wake logic, the latches, the pool's
//! live count and guest seats), the workers' threads, thread-locals and clock, the
//! published best position of ordered searches (`iter::find::Best`) and the task
//! graph's slots, ready queues and runner count (`graph`) go through this module, so
//! that `cargo test --cfg loom` runs the production `Registry` and `WorkerThread` and
//! explores their interleavings. Worker-local state uses plain `Cell`s and never needs
//! it; plain counters and hints that hand nothing off (statistics, heartbeat flags)
//! stay std atomics.

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

/// Orders a thread's sequentially consistent write before its sequentially consistent
/// read of another location, for a protocol in which two threads each write one and
/// read the other (either one sees the other's write). Outside loom the single total
/// order of `SeqCst` accesses already does, and this is nothing; loom models `SeqCst`
/// loads and stores as acquire and release only (tokio-rs/loom#180), so under loom this
/// is a `SeqCst` fence, which it models.
#[inline(always)]
pub(crate) fn order_seq_cst_accesses() {
    #[cfg(loom)]
    fence(Ordering::SeqCst);
}

/// A value (of `crate::sync` atomics) inside memory that a reference count loom cannot
/// see frees: an async task's allocation, freed through async-task's std atomics. Never
/// dropped: its atomics need no drop, and under loom their drop would count as an access
/// that loom cannot order after the last use on another thread (the count's
/// release/acquire edge is outside the model), a false report.
#[repr(transparent)]
pub(crate) struct FreedUnseen<T>(std::mem::ManuallyDrop<T>);

impl<T> FreedUnseen<T> {
    pub(crate) const fn new(value: T) -> Self {
        #[cfg(not(loom))]
        const {
            assert!(
                !std::mem::needs_drop::<T>(),
                "only for values without drop glue"
            );
        }
        FreedUnseen(std::mem::ManuallyDrop::new(value))
    }
}

impl<T> std::ops::Deref for FreedUnseen<T> {
    type Target = T;

    #[inline(always)]
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Declares a thread-local variable with a constant initialiser (`static NAME: T =
/// const { init };`): std's, or loom's under `cfg(loom)` (every model thread runs on one
/// OS thread, so a std thread-local would be shared by all of them).
macro_rules! model_thread_local {
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const { $init:expr };) => {
        #[cfg(loom)]
        loom::thread_local! {
            $(#[$attr])* $vis static $name: $t = $init;
        }
        #[cfg(not(loom))]
        std::thread_local! {
            $(#[$attr])* $vis static $name: $t = const { $init };
        }
    };
}
pub(crate) use model_thread_local as thread_local;

/// Starting, joining and yielding threads.
pub(crate) mod thread {
    #[cfg(loom)]
    pub(crate) use loom::thread::{yield_now, Builder, JoinHandle};
    #[cfg(not(loom))]
    pub(crate) use std::thread::{yield_now, Builder, JoinHandle};
}

/// The clock the scheduler reads (for spin limits, share gaps and rate limits).
///
/// Under loom it is a step counter shared by the model's threads, starting at the same
/// instant in every execution and advancing `time::STEP` per reading: each execution
/// reads the same times in the same order, as loom's replay needs, and every time limit
/// passes after a few readings, so no spin outlasts a couple of looks. The scheduler's
/// correctness never depends on what the clock says, only its tuning does.
pub(crate) mod time {
    pub(crate) use std::time::{Duration, Instant};

    /// The current time.
    #[cfg(not(loom))]
    #[inline(always)]
    pub(crate) fn now() -> Instant {
        Instant::now()
    }

    /// How far the model clock advances per reading: longer than every spin limit, and
    /// than the share gaps of the default interval, so that each passes at the next
    /// reading.
    #[cfg(loom)]
    pub(crate) const STEP: Duration = Duration::from_millis(1);

    /// The current time: the model clock (see the module header).
    #[cfg(loom)]
    pub(crate) fn now() -> Instant {
        use std::sync::atomic::{AtomicU32, Ordering};
        use std::sync::OnceLock;
        static ORIGIN: OnceLock<Instant> = OnceLock::new();
        loom::lazy_static! {
            // Created afresh in each execution; a std atomic, as reading the clock
            // hands nothing off (and would otherwise be a step to explore).
            static ref READINGS: AtomicU32 = AtomicU32::new(0);
        }
        let readings = READINGS.fetch_add(1, Ordering::Relaxed) + 1;
        *ORIGIN.get_or_init(Instant::now) + STEP * readings
    }

    /// The time since `earlier` (zero if `earlier` is later).
    #[inline(always)]
    pub(crate) fn since(earlier: Instant) -> Duration {
        now().saturating_duration_since(earlier)
    }
}

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
