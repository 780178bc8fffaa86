//! Latches: one-shot "it is done" signals that a waiting thread blocks on.
//!
//! The setter of a latch usually lets the waiter free it (the latch lives in the
//! waiter's stack frame), so [`Latch::set`] takes a raw pointer and must not touch the
//! latch after the store that publishes completion.

use std::cell::Cell;
use std::ptr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::registry::Registry;
use crate::sync::{self, AtomicBool, AtomicUsize, Condvar, Mutex};
use crate::worker::WorkerThread;

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
        registry.queues.wake(index);
    }
}

/// A count of outstanding work (a scope's spawned jobs, plus one for its body) with the
/// thread that waits for it to reach zero: the decrement that reaches zero wakes it.
///
/// The owner is the thread that created the latch: a worker (of any pool), which keeps
/// running its pool's jobs while it waits and is woken through that pool's queue, or a
/// thread outside every pool, which blocks on a [`LockLatch`].
pub(crate) struct CountLatch {
    pending: AtomicUsize,
    owner: CountOwner,
}

enum CountOwner {
    Worker {
        registry: Arc<Registry>,
        index: usize,
    },
    Thread(LockLatch),
}

impl CountLatch {
    /// A latch with a count of one (the owner's own share), owned by the calling thread.
    pub(crate) fn for_current_thread() -> Self {
        // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
        let owner = match unsafe { WorkerThread::current().as_ref() } {
            Some(worker) => CountOwner::Worker {
                registry: Arc::clone(worker.registry()),
                index: worker.index(),
            },
            None => CountOwner::Thread(LockLatch::new()),
        };
        CountLatch {
            pending: AtomicUsize::new(1),
            owner,
        }
    }

    /// A latch owned by a thread outside every pool (for the loom models).
    #[cfg(all(loom, test))]
    pub(crate) fn for_thread() -> Self {
        CountLatch {
            pending: AtomicUsize::new(1),
            owner: CountOwner::Thread(LockLatch::new()),
        }
    }

    /// Counts one more piece of outstanding work (while the count is above zero).
    pub(crate) fn increment(&self) {
        self.pending.fetch_add(1, Ordering::Relaxed);
    }

    /// One piece of work finished; the last one wakes the owner.
    ///
    /// # Safety
    /// `this` is live. Once the count reaches zero, a worker owner may free it at once,
    /// and a thread owner once its lock latch is set; neither is touched after that.
    pub(crate) unsafe fn decrement(this: *const Self) {
        // SAFETY: the caller's contract.
        unsafe { Self::decrement_by(this, 1) }
    }

    /// `count` pieces of work finished (`count` > 0); the last one wakes the owner.
    ///
    /// # Safety
    /// As for [`decrement`](Self::decrement); the count is at least `count`.
    unsafe fn decrement_by(this: *const Self, count: usize) {
        // SAFETY: live until the decrement below.
        match unsafe { &(*this).owner } {
            CountOwner::Worker { registry, index } => {
                let index = *index;
                // Once the count is zero the owner may return and drop its pool: the
                // wake-up needs a reference of our own to the registry. A member of that
                // registry has one already (its `WorkerThread` holds it for as long as it
                // runs jobs); anyone else clones it, which is an atomic operation on a
                // line every member shares.
                // SAFETY: a non-null thread-local pointer refers to this thread's live
                // worker.
                let member = unsafe { WorkerThread::current().as_ref() }
                    .filter(|worker| Arc::ptr_eq(worker.registry(), registry));
                let cloned;
                let registry: &Registry = match member {
                    Some(worker) => worker.registry(),
                    None => {
                        cloned = Arc::clone(registry);
                        &cloned
                    }
                };
                // SAFETY: live until this decrement; not touched after it.
                if unsafe { (*this).pending.fetch_sub(count, Ordering::AcqRel) } == count {
                    registry.queues.wake(index);
                }
            }
            CountOwner::Thread(latch) => {
                let latch: *const LockLatch = latch;
                // SAFETY: live until this decrement, and beyond it until the lock latch is
                // set: a thread owner waits for that latch, never for the count.
                if unsafe { (*this).pending.fetch_sub(count, Ordering::AcqRel) } == count {
                    // SAFETY: as above; `set` does not touch the latch after waking.
                    unsafe { LockLatch::set(latch) };
                }
            }
        }
    }

    /// The owner drops its own share and waits until the count is zero. Everything the
    /// other decrements published happens before this returns.
    pub(crate) fn release_and_wait(&self) {
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            return;
        }
        match &self.owner {
            CountOwner::Worker { .. } => {
                // SAFETY: a worker owner is the calling thread (the latch's creator), a
                // live worker.
                let worker = unsafe { &*WorkerThread::current() };
                worker.wait_until(|| self.pending.load(Ordering::Acquire) == 0);
            }
            CountOwner::Thread(latch) => latch.wait(),
        }
    }
}

/// The decrements a member owes to one [`CountLatch`] (a scope's count of jobs).
///
/// A scope job that finishes on a member does not decrement its scope's count: the member
/// owes the decrement, and the next job it spawns into the same scope takes the owed unit
/// over instead of incrementing the count. A spawn tree so touches the count, a line
/// every member running the scope's jobs writes, about once per job instead of twice.
///
/// # Invariants
/// - The count equals the unfinished jobs (plus the body's unit) plus every member's
///   debt to it, so it reaches zero only once every job finished and every debt is
///   settled; while `owed > 0` the latch is alive.
/// - A member owes only while it runs that scope's jobs from its own deque: it settles
///   before it runs any other job, and before it steals, waits, sleeps or stops being a
///   member (see `WorkerThread::settle_scope_debt`). So a debt never delays a scope
///   behind unrelated work, and never outlives the member's turn at running jobs.
pub(crate) struct CountDebt {
    /// The latch owed to (compared only, never dereferenced, once `owed` is zero).
    latch: Cell<*const CountLatch>,
    owed: Cell<usize>,
}

impl CountDebt {
    pub(crate) const fn new() -> Self {
        CountDebt {
            latch: Cell::new(ptr::null()),
            owed: Cell::new(0),
        }
    }

    /// Counts a new job of `latch`: takes over an owed unit if there is one, else
    /// increments the count.
    #[inline]
    pub(crate) fn count_job(&self, latch: &CountLatch) {
        let owed = self.owed.get();
        if owed > 0 && ptr::eq(self.latch.get(), latch) {
            self.owed.set(owed - 1);
        } else {
            latch.increment();
        }
    }

    /// A job of `latch` finished on this member: owes its decrement (settling a debt to
    /// another latch first).
    ///
    /// # Safety
    /// `latch` is live, and the finished job's unit is still in its count.
    #[inline]
    pub(crate) unsafe fn job_finished(&self, latch: *const CountLatch) {
        if !ptr::eq(self.latch.get(), latch) {
            self.settle();
            self.latch.set(latch);
        }
        self.owed.set(self.owed.get() + 1);
    }

    /// Settles a debt to any latch but `latch` (a job of `latch` starts).
    #[inline]
    pub(crate) fn settle_unless_owed_to(&self, latch: *const CountLatch) {
        if !ptr::eq(self.latch.get(), latch) {
            self.settle();
        }
    }

    /// Pays what is owed, waking the latch's owner if that was the last of its count.
    #[inline]
    pub(crate) fn settle(&self) {
        let owed = self.owed.replace(0);
        if owed > 0 {
            // SAFETY: the owed units are still in the latch's count, which keeps it
            // alive (see the invariants).
            unsafe { CountLatch::decrement_by(self.latch.get(), owed) };
        }
    }
}

/// Counts things that must finish before a waiter may go on: the pool's handed-out
/// worker builders (`ThreadBuilder`), which a dropped pool waits for (see
/// `Registry::join_threads`). `add` before handing one out, `finish` when it is done;
/// `wait_for_zero` returns once every one added so far has finished.
pub(crate) struct FinishCount {
    unfinished: Mutex<usize>,
    all_finished: Condvar,
}

impl FinishCount {
    pub(crate) fn new() -> Self {
        FinishCount {
            unfinished: Mutex::new(0),
            all_finished: Condvar::new(),
        }
    }

    /// One more thing to wait for.
    pub(crate) fn add(&self) {
        *sync::lock(&self.unfinished) += 1;
    }

    /// One thing finished; wakes the waiters if it was the last.
    pub(crate) fn finish(&self) {
        let mut unfinished = sync::lock(&self.unfinished);
        debug_assert!(*unfinished > 0, "finished more than were added");
        *unfinished -= 1;
        if *unfinished == 0 {
            self.all_finished.notify_all();
        }
    }

    /// Blocks until everything added has finished.
    pub(crate) fn wait_for_zero(&self) {
        let mut unfinished = sync::lock(&self.unfinished);
        while *unfinished > 0 {
            unfinished = sync::wait(&self.all_finished, unfinished);
        }
    }
}
