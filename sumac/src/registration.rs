//! Threads that act as a pool's member without running its loop: `use_current_thread`
//! (worker 0 for good) and callers taking part in one call each (guests, on seats).
//! See `SCHEDULER.md`, "Callers taking part".

use std::cell::Cell;
use std::ptr::{self};
use std::sync::Arc;

use crossbeam_utils::CachePadded;

use crate::pool::ThreadPoolBuildError;
use crate::sync::{AtomicU64, Ordering};

use crate::registry::Registry;
use crate::worker::{WorkerThread, WORKER_THREAD};

// ------------------------------------------------------------------ use_current_thread
//
// A pool built with `use_current_thread` makes the building thread its worker 0 without
// running the worker loop there: the thread keeps doing its own work, and acts as worker
// 0 only while it is inside a call into the pool (`install`, `join`, `scope`, a parallel
// iterator, `broadcast`, `yield_now`, ...). Its `WorkerThread` lives on the heap,
// registered in `REGISTERED_WORKER`; `WORKER_THREAD` points to it only while the thread
// acts as the worker ("active"). While inactive, worker 0 counts as idle (so the
// heartbeat thread parks when the other workers are idle too), and its own list is empty:
// deactivating hands any job left on it (a `spawn`) to the shared queue, since nobody
// else may look at a worker's list. The registration ends when the pool is dropped on
// this thread, when the thread notices its pool was dropped elsewhere, or at thread exit.

/// The heap-allocated worker of a thread registered with `use_current_thread` (null if
/// none); freed when the registration ends.
struct RegisteredWorker(Cell<*mut WorkerThread>);

impl Drop for RegisteredWorker {
    fn drop(&mut self) {
        let worker = self.0.replace(ptr::null_mut());
        if !worker.is_null() {
            // SAFETY: the pointer came from `Box::into_raw` in `register_current_thread`
            // and is owned by this registration; the thread is exiting, so it is not
            // active (`WORKER_THREAD` never outlives a call into the pool).
            drop(unsafe { Box::from_raw(worker) });
        }
    }
}

crate::sync::thread_local! {
    static REGISTERED_WORKER: RegisteredWorker = const { RegisteredWorker(Cell::new(ptr::null_mut())) };
}

/// Makes the calling thread worker 0 of `registry` (see above). Fails if it already is
/// a worker of a pool, or registered with one.
pub(crate) fn register_current_thread(
    registry: &Arc<Registry>,
) -> Result<(), ThreadPoolBuildError> {
    if !WorkerThread::current().is_null() || !registered_worker().is_null() {
        return Err(ThreadPoolBuildError::current_thread_already_in_pool());
    }
    // SAFETY: a `use_current_thread` pool starts no thread for worker 0: this thread is
    // that worker for the registry's life.
    let worker = Box::into_raw(Box::new(unsafe {
        WorkerThread::new(Arc::clone(registry), 0)
    }));
    REGISTERED_WORKER.with(|registered| registered.0.set(worker));
    // Inactive: idle for the heartbeat thread's and the promoters' accounting.
    registry.count_idle();
    Ok(())
}

pub(crate) fn registered_worker() -> *mut WorkerThread {
    REGISTERED_WORKER
        .try_with(|registered| registered.0.get())
        .unwrap_or(ptr::null_mut())
}

/// Whether the calling thread is registered as worker 0 of a pool that was not dropped
/// (see `with_registered_worker`: it acts as that worker inside calls into a pool).
pub(crate) fn registered_with_a_live_pool() -> bool {
    let worker = registered_worker();
    // SAFETY: a registered worker is live until its registration ends, which happens
    // only on this thread.
    !worker.is_null() && !unsafe { &*worker }.registry.is_terminating()
}

/// Ends the calling thread's registration as worker 0 of `registry`, if it has one (the
/// pool is being dropped, or failed to build: it was terminated). First acts as worker 0
/// as long as the other workers stay: runs its inbox and queued jobs (helping the other
/// workers empty the queue; in a one-worker pool nobody else would run them) until
/// every spawned job finished.
pub(crate) fn unregister_current_thread(registry: &Registry) {
    debug_assert!(registry.is_terminating(), "unregistering from a live pool");
    let worker = registered_worker();
    if worker.is_null() || !WorkerThread::current().is_null() {
        return;
    }
    // SAFETY: a registered worker is live until its registration ends, below.
    if !ptr::eq(Arc::as_ptr(unsafe { &(*worker).registry }), registry) {
        return;
    }
    // SAFETY: as above; the thread is not active.
    let registered = unsafe { &*worker };
    // Act as worker 0 until the other workers may exit too (the pool was terminated):
    // a spawned job still running may address a (`spawn_`)`broadcast` job to worker 0,
    // which nobody else would run (a lost closure, or a `broadcast` that never returns).
    activate(registered, |worker| {
        worker.wait_until(|| {
            registry.spawns_finished()
                && worker.jobs.is_empty()
                && registry.queues.queued() == 0
                && registry.queues.addressed(0) == 0
        });
    });
    end_registration(worker);
}

/// Frees the registered `worker` of this thread (which is not active).
pub(crate) fn end_registration(worker: *mut WorkerThread) {
    REGISTERED_WORKER.with(|registered| registered.0.set(ptr::null_mut()));
    // SAFETY: the registration owned the box (from `Box::into_raw`), nothing else refers
    // to it once the registration is cleared, and the thread is not acting as it.
    drop(unsafe { Box::from_raw(worker) });
}

/// Runs `f` on a thread registered with `use_current_thread` as its pool's worker 0 (if
/// the thread is registered, not already acting as a worker, and registered with
/// `registry` when one is given), passing that worker; otherwise runs `f(None)`.
pub(crate) fn with_registered_worker<R>(
    registry: Option<&Registry>,
    f: impl FnOnce(Option<&WorkerThread>) -> R,
) -> R {
    let registered = registered_worker();
    if registered.is_null() || !WorkerThread::current().is_null() {
        return f(None);
    }
    // SAFETY: a registered worker is live until its registration ends, which happens
    // only on this thread and never while it is active.
    let worker = unsafe { &*registered };
    if registry.is_some_and(|registry| !ptr::eq(Arc::as_ptr(&worker.registry), registry)) {
        return f(None);
    }
    if worker.registry.is_terminating() {
        // The pool was dropped on another thread: end the registration.
        end_registration(registered);
        return f(None);
    }
    activate(worker, |worker| f(Some(worker)))
}

/// Calls `f` with the calling thread's worker, if it is one of `registry`'s (of any
/// pool's when `None`): the worker it runs as, or, for a thread registered by
/// `use_current_thread` and not inside a call into its pool, its worker 0 (made active
/// for the call). `None` for other threads.
pub(crate) fn with_current_worker<R>(
    registry: Option<&Registry>,
    f: impl FnOnce(&WorkerThread) -> R,
) -> Option<R> {
    // SAFETY: a non-null thread-local pointer refers to this thread's live worker.
    match unsafe { WorkerThread::current().as_ref() } {
        Some(worker) => registry
            .is_none_or(|registry| ptr::eq(Arc::as_ptr(&worker.registry), registry))
            .then(|| f(worker)),
        None => with_registered_worker(registry, |registered| registered.map(f)),
    }
}

/// Runs `f` with the registered, inactive `worker` active on this thread.
pub(crate) fn activate<R>(worker: &WorkerThread, f: impl FnOnce(&WorkerThread) -> R) -> R {
    /// Makes the worker inactive again when `f` returns or unwinds.
    struct Deactivate<'a>(&'a WorkerThread);
    impl Drop for Deactivate<'_> {
        fn drop(&mut self) {
            let worker = self.0;
            let registry = &worker.registry;
            // Every recorded fork was joined before its call returned; spawned jobs left
            // on the worker's deques stay there, where the other workers steal them.
            debug_assert!(
                worker.jobs.is_empty() && worker.offered.iter().all(|slot| slot.get().is_none()),
                "a fork outlived its join"
            );
            worker.settle_scope_debt();
            WORKER_THREAD.with(|current| current.set(ptr::null()));
            registry.count_idle();
        }
    }
    let _fork_count = worker.shared().counters.forks.attach(&worker.forks);
    WORKER_THREAD.with(|current| current.set(worker));
    worker.registry.leave_idle();
    let _active = Deactivate(worker);
    f(worker)
}

// ------------------------------------------------------------------ guests
//
// A thread outside every pool that calls into one (`install`, `join`, `scope`, a parallel
// loop) takes a free seat of the pool and runs the call on its own stack, as a member:
// its forks are recorded on its own list and shared at heartbeats like a worker's, its
// spawned jobs go on its seat's deques. Work that finishes before anyone could help so
// costs what the sequential code costs: no hand-over to a worker and back. While it
// waits (for a fork another member took, for its scope's jobs) it runs only its own
// work and sleeps privately: it never takes shared jobs, which could keep the caller
// busy with unrelated work. A guest is not one of the pool's threads:
// `current_thread_index()` is `None` there.

/// Runs `op` on the calling thread, outside every pool, as the guest of `registry` in
/// seat `index` (claimed by the caller; freed here when the call ends, also by a panic).
pub(crate) fn as_guest<R>(
    registry: &Arc<Registry>,
    index: usize,
    op: impl FnOnce(&WorkerThread) -> R,
) -> R {
    /// Frees the seat once the guest's state is gone.
    struct Seat<'a>(&'a Registry, usize);
    impl Drop for Seat<'_> {
        fn drop(&mut self) {
            self.0.seats.release(self.1);
        }
    }
    /// Adds the guest's forks to its seat's count once the call ends (a count that only
    /// the guest writes while it runs: not published meanwhile).
    struct Forks<'a>(&'a WorkerThread);
    impl Drop for Forks<'_> {
        fn drop(&mut self) {
            let forks = self.0.forks.load(Ordering::Relaxed);
            if forks > 0 {
                self.0.shared().counters.forks.retire(forks);
            }
        }
    }
    /// The thread stops acting as the guest, and frees its place if it holds one.
    struct Acting<'a>(&'a WorkerThread);
    impl Drop for Acting<'_> {
        fn drop(&mut self) {
            WORKER_THREAD.with(|current| current.set(ptr::null()));
            self.0.free_place();
        }
    }
    let _seat = Seat(registry, index);
    // SAFETY: the caller claimed seat `index` for this thread; `_seat` frees it only
    // after `guest` is dropped, and `registry` outlives this frame.
    let guest = unsafe { WorkerThread::new_guest(registry, index) };
    if guest.solo {
        registry.queues.keep_private(index, true);
    }
    let _forks = Forks(&guest);
    if guest.solo {
        // The one thread of a one-thread pool: it holds the only place from the start.
        guest.take_place();
    }
    WORKER_THREAD.with(|current| current.set(&guest));
    let _acting = Acting(&guest);
    op(&guest)
}

/// An identity of the calling thread, for comparisons only (`join_context`): the
/// address of a thread-local, never made a pointer again.
pub(crate) fn calling_thread_id() -> usize {
    crate::sync::thread_local! {
        static IDENTITY: u8 = const { 0 };
    }
    IDENTITY.with(|identity| ptr::from_ref(identity).addr())
}

/// The seats of a pool for threads outside it that take part in one call each (see
/// `registration::as_guest`): a bit per seat, claimed and freed with one atomic
/// operation, so that many callers at once never meet on a lock.
pub(crate) struct GuestSeats {
    /// The index of the first seat's member.
    first: usize,
    /// Every seat's bit.
    all: u64,
    /// Bit `i` set: seat `i` is free.
    free: CachePadded<AtomicU64>,
}

impl GuestSeats {
    pub(crate) fn new(first: usize, seats: usize) -> GuestSeats {
        debug_assert!(seats <= 64);
        let free = if seats >= 64 {
            u64::MAX
        } else {
            (1u64 << seats) - 1
        };
        GuestSeats {
            first,
            all: free,
            free: CachePadded::new(AtomicU64::new(free)),
        }
    }

    /// Claims a free seat: the index of its member.
    #[inline]
    pub(crate) fn claim(&self) -> Option<usize> {
        let mut free = self.free.load(Ordering::Relaxed);
        loop {
            if free == 0 {
                return None;
            }
            let bit = free & free.wrapping_neg();
            match self.free.compare_exchange_weak(
                free,
                free & !bit,
                Ordering::SeqCst,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(self.first + bit.trailing_zeros() as usize),
                Err(actual) => free = actual,
            }
        }
    }

    /// Frees the seat of member `index` (claimed before).
    #[inline]
    pub(crate) fn release(&self, index: usize) {
        let bit = 1u64 << (index - self.first);
        let before = self.free.fetch_or(bit, Ordering::SeqCst);
        debug_assert_eq!(before & bit, 0, "a seat freed twice");
    }

    /// Whether a caller takes part in a call now (a busy member the heartbeat thread
    /// ticks for).
    #[inline]
    pub(crate) fn any_claimed(&self) -> bool {
        self.free.load(Ordering::SeqCst) != self.all
    }

    /// Whether the pool has seats (callers from outside take part).
    #[inline]
    pub(crate) fn exist(&self) -> bool {
        self.all != 0
    }

    /// Whether member `index` is a seat.
    #[inline]
    pub(crate) fn is_seat(&self, index: usize) -> bool {
        index >= self.first
    }
}
