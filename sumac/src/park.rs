//! `park`: how a thread blocked on one of sumac's primitives (a channel, a task graph, a
//! future in `block_on`) waits, and how whoever unblocks it wakes it.
//!
//! A waiter is either a worker of some pool or a plain thread:
//! - a **worker** keeps running its pool's pending jobs while it waits (its own newest
//!   jobs first, then jobs addressed to it, then shared ones), and sleeps in its pool's
//!   sleep protocol when there are none, so a pool never deadlocks because one of its
//!   workers waits for a job of the same pool (rayon #835's scope with a producer and a
//!   consumer on a one-thread pool). It is woken through its pool;
//! - a **caller taking part** in a pool (a guest, see `registration`) runs nothing while
//!   it waits here: the pool's workers take its spawned jobs. A job it ran could serve
//!   another thread's waiter first and then block itself above this wait, burying it
//!   (a receiver under a sender of the same channel);
//! - a **plain thread** (outside every pool) parks; it is woken with `Thread::unpark`.
//!
//! # The rule that makes wake-ups never lost
//! The waker first makes the condition true (a store with release ordering or under a
//! lock), then calls [`Unparker::unpark`]. The waiter evaluates its condition after
//! every wake-up and before every sleep: a worker re-checks it under its pool's sleep
//! lock, which `unpark` takes; a parked thread keeps the unpark token if it arrives
//! before `park`. An `Unparker` may be called any number of times, also after the
//! waiter stopped waiting (a spurious wake-up costs a look at the condition).
//!
//! # Re-entrancy
//! A worker that waits runs other jobs on its stack, above the waiting frame. Those jobs
//! may wait too (nested); each wait returns only once its own condition holds, so a
//! frame below never returns while a job above it still runs. A job that waits for
//! something only a job *below* it on the same stack can provide deadlocks, as with
//! nested `join`s in any work-stealing runtime; this module documents, it cannot forbid.

#[cfg(loom)]
use loom::thread::{self, Thread};
use std::sync::Arc;
#[cfg(not(loom))]
use std::thread::{self, Thread};
use std::time::Instant;

use crate::registry::Registry;
use crate::worker::WorkerThread;

/// Wakes one waiter (see the module documentation): cheap to clone, `Send` and `Sync`.
#[derive(Clone, Debug)]
pub(crate) struct Unparker {
    target: Target,
}

#[derive(Clone)]
enum Target {
    /// Worker `index` of a pool: woken through that pool's sleep protocol.
    Worker {
        registry: Arc<Registry>,
        index: usize,
    },
    /// A thread outside every pool.
    Thread(Thread),
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Worker { index, .. } => write!(f, "Worker({index})"),
            Target::Thread(thread) => write!(f, "Thread({:?})", thread.id()),
        }
    }
}

impl Unparker {
    /// The unparker of the calling thread: its worker if it is one, else the thread.
    pub(crate) fn for_current_thread() -> Unparker {
        // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
        let target = match unsafe { WorkerThread::current().as_ref() } {
            Some(worker) => Target::Worker {
                registry: Arc::clone(worker.registry()),
                index: worker.index(),
            },
            None => Target::Thread(thread::current()),
        };
        Unparker { target }
    }

    /// Wakes the waiter if it sleeps. Call it after making its condition true.
    pub(crate) fn unpark(&self) {
        match &self.target {
            Target::Worker { registry, index } => registry.wake_worker(*index),
            Target::Thread(thread) => thread.unpark(),
        }
    }

    /// Whether both wake the same waiter.
    pub(crate) fn same_waiter(&self, other: &Unparker) -> bool {
        match (&self.target, &other.target) {
            (
                Target::Worker { registry, index },
                Target::Worker {
                    registry: other_registry,
                    index: other_index,
                },
            ) => Arc::ptr_eq(registry, other_registry) && index == other_index,
            (Target::Thread(thread), Target::Thread(other)) => thread.id() == other.id(),
            _ => false,
        }
    }
}

/// Whether the calling thread is a worker of some pool (so that waiting runs that pool's
/// jobs instead of blocking the thread).
pub(crate) fn on_worker() -> bool {
    !WorkerThread::current().is_null()
}

/// Waits until `done()` holds. `done` must become true only through an action that is
/// followed by an [`Unparker::unpark`] of an unparker made on this thread (see the module
/// documentation). On a worker, runs the pool's pending jobs meanwhile.
pub(crate) fn park_until(done: impl Fn() -> bool) {
    // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
    match unsafe { WorkerThread::current().as_ref() } {
        Some(worker) => {
            worker.wait_blocked(done, None);
        }
        None => {
            while !done() {
                thread::park();
            }
        }
    }
}

/// Like [`park_until`], but gives up at `deadline`: returns whether `done()` held.
pub(crate) fn park_until_deadline(done: impl Fn() -> bool, deadline: Instant) -> bool {
    // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
    match unsafe { WorkerThread::current().as_ref() } {
        Some(worker) => worker.wait_blocked(done, Some(deadline)),
        None => loop {
            if done() {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return done();
            }
            // Loom has no clock: there, a timed park is a park (loom models give their
            // waits no deadline).
            #[cfg(not(loom))]
            thread::park_timeout(deadline - now);
            #[cfg(loom)]
            thread::park();
        },
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;
    use std::time::Duration;

    /// rayon #835's shape: on a one-thread pool, a scope's job waits for a flag that only
    /// another job of the same scope sets. The waiting worker runs that job meanwhile.
    #[test]
    fn a_worker_that_waits_runs_the_job_it_waits_for() {
        let pool = crate::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let flag = AtomicBool::new(false);
        let waiter: Mutex<Option<Unparker>> = Mutex::new(None);
        pool.scope(|s| {
            // Spawned first, so run last (a one-thread pool's own list is LIFO).
            s.spawn(|_| {
                flag.store(true, Ordering::Release);
                if let Some(unparker) = waiter.lock().unwrap().as_ref() {
                    unparker.unpark();
                }
            });
            s.spawn(|_| {
                *waiter.lock().unwrap() = Some(Unparker::for_current_thread());
                park_until(|| flag.load(Ordering::Acquire));
            });
        });
        assert!(flag.load(Ordering::Relaxed));
    }

    /// A thread outside every pool parks until another thread sets its condition and
    /// unparks it; a worker is woken through its pool when it sleeps.
    #[test]
    fn a_waiter_is_woken_by_its_unparker_on_a_thread_and_on_a_worker() {
        let pool = crate::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        for on_pool in [false, true] {
            let flag = std::sync::Arc::new(AtomicBool::new(false));
            let (send, receive) = std::sync::mpsc::channel::<Unparker>();
            let setter = {
                let flag = std::sync::Arc::clone(&flag);
                std::thread::spawn(move || {
                    let unparker = receive.recv().unwrap();
                    std::thread::sleep(Duration::from_millis(20));
                    flag.store(true, Ordering::Release);
                    unparker.unpark();
                })
            };
            let wait = || {
                assert_eq!(on_worker(), on_pool);
                send.send(Unparker::for_current_thread()).unwrap();
                park_until(|| flag.load(Ordering::Acquire));
            };
            if on_pool {
                pool.install(wait);
            } else {
                wait();
            }
            setter.join().unwrap();
        }
    }

    /// A wait with a deadline returns false once it passed, on a thread and on a worker,
    /// and true at once when the condition already holds.
    #[test]
    fn a_wait_with_a_deadline_gives_up_at_the_deadline() {
        let pool = crate::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let wait = || {
            let start = Instant::now();
            let deadline = start + Duration::from_millis(30);
            assert!(!park_until_deadline(|| false, deadline));
            assert!(Instant::now() >= deadline);
            assert!(park_until_deadline(|| true, start));
        };
        wait();
        pool.install(wait);
    }

    #[test]
    fn unparkers_of_the_same_waiter_compare_equal() {
        let here = Unparker::for_current_thread();
        assert!(here.same_waiter(&here.clone()));
        let pool = crate::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let there = pool.install(Unparker::for_current_thread);
        assert!(!here.same_waiter(&there));
        assert!(there.same_waiter(&pool.install(Unparker::for_current_thread)));
    }
}
