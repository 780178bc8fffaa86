//! `ThreadPoolBuilder::use_current_thread`: the building thread is worker 0 of the pool,
//! acting as it whenever it calls into the pool, and not otherwise.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use common::{fib, fib_seq};
use sumac::prelude::*;
use sumac::{ThreadPoolBuildErrorKind, ThreadPoolBuilder};

fn pool_on_this_thread(threads: usize) -> sumac::ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(threads)
        .heartbeat_interval(Duration::from_micros(1))
        .use_current_thread()
        .build()
        .unwrap()
}

/// With a single worker, which is this thread, everything runs here: joins, scopes,
/// loops, broadcasts, and spawned jobs (when the thread yields, or drops the pool).
#[test]
fn a_one_worker_pool_runs_everything_on_this_thread() {
    let here = thread::current().id();
    let pool = pool_on_this_thread(1);
    assert_eq!(sumac::current_thread_index(), Some(0));
    assert_eq!(pool.current_thread_index(), Some(0));
    assert_eq!(sumac::current_num_threads(), 1);
    assert_eq!(sumac::current_thread_has_pending_tasks(), Some(false));
    assert_eq!(pool.current_thread_has_pending_tasks(), Some(false));
    let other = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    assert_eq!(other.current_thread_index(), None);
    assert_eq!(other.yield_now(), None);
    let on_this_thread = || assert_eq!(thread::current().id(), here);
    assert_eq!(pool.install(|| fib(18)), fib_seq(18));
    assert_eq!(
        sumac::join(|| fib(15), || fib(16)),
        (fib_seq(15), fib_seq(16))
    );
    let ran = AtomicUsize::new(0);
    pool.scope(|s| {
        for _ in 0..10 {
            s.spawn(|_| {
                on_this_thread();
                ran.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    sumac::in_place_scope(|s| {
        s.spawn(|_| {
            on_this_thread();
            ran.fetch_add(1, Ordering::SeqCst);
        })
    });
    assert_eq!(ran.load(Ordering::SeqCst), 11);
    let total: u64 = (0..10_000u64).into_par_iter().map(|x| x * x).sum();
    assert_eq!(total, (0..10_000u64).map(|x| x * x).sum());
    assert_eq!(pool.broadcast(|ctx| ctx.index()), [0]);
    assert_eq!(sumac::broadcast(|ctx| ctx.num_threads()), [1]);

    // A spawned job waits for this thread to call into the pool again.
    let (sender, receiver) = mpsc::channel();
    let first = sender.clone();
    pool.spawn(move || first.send(thread::current().id()).unwrap());
    assert!(receiver.try_recv().is_err());
    assert_eq!(sumac::yield_now(), Some(sumac::Yield::Executed));
    assert_eq!(receiver.try_recv(), Ok(here));
    // ... or for the pool to be dropped, which runs what is left.
    sumac::spawn(move || sender.send(thread::current().id()).unwrap());
    drop(pool);
    assert_eq!(receiver.try_recv(), Ok(here));
    assert_eq!(sumac::current_thread_index(), None);
}

/// With more workers, this thread is worker 0 inside calls into the pool, and the
/// other workers share its work.
#[test]
fn the_current_thread_shares_work_with_the_other_workers() {
    let here = thread::current().id();
    let pool = pool_on_this_thread(3);
    let (index, thread_id) =
        pool.install(|| (sumac::current_thread_index(), thread::current().id()));
    assert_eq!((index, thread_id), (Some(0), here));
    assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1, 2]);
    for _ in 0..20 {
        assert_eq!(pool.install(|| fib(22)), fib_seq(22));
        assert_eq!(
            sumac::join(|| fib(20), || fib(21)),
            (fib_seq(20), fib_seq(21))
        );
    }
    let shared: u64 = pool.stats().workers[1..]
        .iter()
        .map(|w| w.shared_jobs_run)
        .sum();
    assert!(shared > 0, "the other workers never ran this thread's work");
    // A job spawned from this thread outside any call runs on another worker.
    let (sender, receiver) = mpsc::channel();
    sumac::spawn(move || sender.send(thread::current().id()).unwrap());
    let ran_on = receiver
        .recv_timeout(Duration::from_secs(60))
        .expect("spawned job never ran");
    assert_ne!(ran_on, here);
    // A panic inside the pool propagates, and the thread is still worker 0 afterwards.
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.install(|| panic!("inside"))
    }));
    assert!(caught.is_err());
    assert_eq!(sumac::current_thread_index(), Some(0));
    assert_eq!(pool.install(|| fib(15)), fib_seq(15));
}

/// A thread can be worker 0 of one pool at a time, and not while it is a worker of
/// another pool; once its pool is dropped, it can be registered again.
#[test]
fn a_thread_is_worker_zero_of_one_pool_at_a_time() {
    let first = pool_on_this_thread(2);
    let error = ThreadPoolBuilder::new()
        .num_threads(2)
        .use_current_thread()
        .build()
        .unwrap_err();
    assert_eq!(
        error.kind(),
        ThreadPoolBuildErrorKind::CurrentThreadAlreadyInPool
    );
    assert_eq!(
        error.to_string(),
        "The current thread is already part of another thread pool."
    );
    let other = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let inside = other.install(|| {
        ThreadPoolBuilder::new()
            .num_threads(1)
            .use_current_thread()
            .build()
            .map(drop)
    });
    assert_eq!(
        inside.unwrap_err().kind(),
        ThreadPoolBuildErrorKind::CurrentThreadAlreadyInPool
    );
    drop(first);
    let second = pool_on_this_thread(2);
    assert_eq!(second.install(|| fib(12)), fib_seq(12));
}

/// A pool dropped on another thread: this thread stops acting as its worker 0 at its
/// next call and uses the global pool like any other thread.
#[test]
fn a_pool_dropped_elsewhere_releases_this_thread() {
    let pool = pool_on_this_thread(2);
    assert_eq!(pool.install(|| fib(14)), fib_seq(14));
    thread::spawn(move || drop(pool)).join().unwrap();
    assert_eq!(sumac::join(|| fib(12), || 1), (fib_seq(12), 1));
    assert_eq!(sumac::current_thread_index(), None);
    let again = pool_on_this_thread(1);
    assert_eq!(again.install(|| fib(10)), fib_seq(10));
}

/// Waiting on another pool, this thread keeps acting as worker 0 of its own: a job of
/// the other pool that needs this pool (whose only worker is this thread) completes.
#[test]
fn waiting_on_another_pool_still_runs_this_pools_jobs() {
    // A deadlock here would block this very thread: a watchdog turns it into a failure.
    let (done, finished) = mpsc::channel::<()>();
    thread::spawn(move || {
        if finished.recv_timeout(Duration::from_secs(60)).is_err() {
            eprintln!("deadlock: this thread did not run its own pool's job while waiting");
            std::process::abort();
        }
    });
    let mine = pool_on_this_thread(1);
    let other = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let here = thread::current().id();
    let (value, ran_on) = other.install(|| mine.install(|| (fib(15), thread::current().id())));
    assert_eq!((value, ran_on), (fib_seq(15), here));
    done.send(()).unwrap();
}
