//! `spawn`: fire-and-forget jobs on the current pool (the global pool from outside any).

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use crate::job::HeapJob;
use crate::registry::{self, Registry};

/// Runs `func` some time later, without waiting for it: on the current pool (the pool of
/// the calling worker, as in Rayon), or on the global pool when called from outside any
/// pool.
///
/// On a worker, the job goes on that worker's own deque, from which any idle worker of
/// the pool can steal it at once while the spawning worker goes on (the spawning worker
/// itself runs its newest spawned job first); from outside the pool it goes into the
/// pool's injector, from which the workers take jobs in order.
///
/// ```
/// let pool = sumac::ThreadPoolBuilder::new()
///     .num_threads(2)
///     .thread_name(|i| format!("mine-{i}"))
///     .build()
///     .unwrap();
/// let (sender, receiver) = std::sync::mpsc::channel();
/// pool.install(|| {
///     sumac::spawn(move || {
///         let name = std::thread::current().name().unwrap().to_owned();
///         sender.send(name).unwrap();
///     })
/// });
/// assert!(receiver.recv().unwrap().starts_with("mine-")); // it ran on `pool`
/// ```
///
/// ```
/// let (sender, receiver) = std::sync::mpsc::channel();
/// sumac::spawn(move || sender.send(6 * 7).unwrap());
/// assert_eq!(receiver.recv().unwrap(), 42);
/// ```
///
/// The closure must be `Send` and `'static`:
///
/// ```compile_fail
/// let shared = std::rc::Rc::new(1);
/// sumac::spawn(move || drop(shared));
/// ```
///
/// # Panics
/// A panic in `func` goes to the pool's panic handler
/// ([`ThreadPoolBuilder::panic_handler`](crate::ThreadPoolBuilder::panic_handler)); with
/// none configured the process aborts, as in Rayon.
pub fn spawn<F>(func: F)
where
    F: FnOnce() + Send + 'static,
{
    registry::with_current_registry(|registry| spawn_in(registry, func, false));
}

/// Like [`spawn`], but first in, first out: on a worker the job goes on the worker's own
/// FIFO deque, so the jobs one thread spawns with `spawn_fifo` start in the order they
/// were spawned (as in Rayon). Mixed with [`spawn`], the worker runs its LIFO jobs
/// first.
///
/// ```
/// let (sender, receiver) = std::sync::mpsc::channel();
/// sumac::spawn_fifo(move || sender.send(7).unwrap());
/// assert_eq!(receiver.recv().unwrap(), 7);
/// ```
///
/// # Panics
/// As [`spawn`].
pub fn spawn_fifo<F>(func: F)
where
    F: FnOnce() + Send + 'static,
{
    registry::with_current_registry(|registry| spawn_in(registry, func, true));
}

/// Spawns `func` into the pool of `registry` (see [`Registry::push_spawned`]), counted in
/// the pool's live count until it ran.
pub(crate) fn spawn_in<F>(registry: &Arc<Registry>, func: F, fifo: bool)
where
    F: FnOnce() + Send + 'static,
{
    let counted = registry.spawn_started(None);
    let job = HeapJob::into_job_ref(move || {
        crate::worker::settle_current_scope_debt();
        let result = panic::catch_unwind(AssertUnwindSafe(func));
        registry::finish_spawned_job(result.err(), counted);
    });
    registry.push_spawned(job, fifo);
}
