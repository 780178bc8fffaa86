//! `spawn`: fire-and-forget jobs on the current pool (the global pool from outside any).

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use crate::job::HeapJob;
use crate::registry::{self, Registry};

/// Runs `func` some time later, without waiting for it: on the current pool (the pool of
/// the calling worker, as in Rayon), or on the global pool when called from outside any
/// pool.
///
/// On a worker of a pool with more than one thread, the job goes into the pool's shared
/// queue at once, where an idle worker can take it while the spawning worker goes on; in
/// a one-thread pool it goes on the worker's own list (newest first).
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

/// Like [`spawn`], but behind every job spawned before it: the job goes into the pool's
/// shared FIFO queue (one lock) even in a one-thread pool, where [`spawn`] uses the
/// worker's own list, so jobs spawned with `spawn_fifo` start in the order they were
/// spawned.
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

/// Spawns `func` into the pool of `registry`: on the calling worker's own list if it is
/// the one worker of that pool, else (or with `fifo`) into the shared queue.
pub(crate) fn spawn_in<F>(registry: &Arc<Registry>, func: F, fifo: bool)
where
    F: FnOnce() + Send + 'static,
{
    let counted = registry.spawn_started(None);
    let job = HeapJob::into_job_ref(move || {
        let result = panic::catch_unwind(AssertUnwindSafe(func));
        registry::finish_spawned_job(result.err(), counted);
    });
    if fifo {
        registry.queue.push([job]);
    } else {
        registry.push_job(job);
    }
}
