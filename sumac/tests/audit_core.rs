//! Adversarial tests of the core runtime (join, scope, spawn, broadcast, pool shutdown),
//! written during an audit of its unsafe code. Each of the first tests reproduced a bug.

mod common;

use common::{finishes, panic_message, HANG};

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// A value whose destructor panics while `armed` (once: it disarms itself first).
struct Bomb {
    armed: Arc<AtomicBool>,
}

impl Drop for Bomb {
    fn drop(&mut self) {
        if self.armed.swap(false, Ordering::SeqCst) {
            panic!("bomb destructor");
        }
    }
}

/// A pool of two workers, shareable with a thread that [`finishes`] watches.
fn two_worker_pool() -> Arc<sumac::ThreadPool> {
    Arc::new(
        sumac::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap(),
    )
}

/// Checks that both workers of a 2-worker pool are alive and serve it: a broadcast
/// reaches each of them (a worker killed by an escaping panic would hang it).
fn assert_both_workers_serve(pool: Arc<sumac::ThreadPool>) {
    assert_eq!(
        finishes("a broadcast afterwards", move || pool
            .broadcast(|ctx| ctx.index())),
        [0, 1],
        "a worker died"
    );
}

/// A 2-worker pool whose exit handler reports each exiting worker's index on the
/// returned channel.
fn pool_reporting_exits() -> (sumac::ThreadPool, mpsc::Receiver<usize>) {
    let (exited, exits) = mpsc::channel();
    let exited = Mutex::new(exited);
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(2)
        .exit_handler(move |index| {
            let _ = exited.lock().unwrap().send(index);
        })
        .build()
        .unwrap();
    (pool, exits)
}

// ---------------------------------------------------------------------------------------
// Pool shutdown while a spawned job still runs.
//
// Dropping the pool lets a worker exit as soon as it sees nothing queued, even though a
// spawned ('static) job still runs on another worker. A `spawn_broadcast` or `broadcast`
// made by that job afterwards puts a job in the exited worker's inbox, where nobody ever
// runs it: the job (and its closure) is lost, and `broadcast` waits forever.

/// A job spawned on a pool that is then dropped calls `spawn_broadcast` once the other
/// worker had a chance to exit: the operation must still run on both workers.
#[test]
fn spawn_broadcast_from_a_spawned_job_during_pool_drop_runs_on_every_worker() {
    let (pool, exits) = pool_reporting_exits();
    let runs = Arc::new(AtomicUsize::new(0));
    let job_runs = Arc::clone(&runs);
    pool.spawn(move || {
        // Give the other worker time to exit (it does not, once spawned jobs keep
        // the pool alive; then this just waits out the timeout).
        let _ = exits.recv_timeout(Duration::from_secs(1));
        sumac::spawn_broadcast(move |_| {
            job_runs.fetch_add(1, Ordering::SeqCst);
        });
    });
    finishes("dropping the pool", move || drop(pool));
    assert_eq!(
        runs.load(Ordering::SeqCst),
        2,
        "a spawn_broadcast job was addressed to a worker that had already exited"
    );
}

/// As above with a blocking `broadcast`: it must return, with one result per worker.
#[test]
fn broadcast_from_a_spawned_job_during_pool_drop_does_not_hang() {
    let (pool, exits) = pool_reporting_exits();
    let (sender, results) = mpsc::channel();
    pool.spawn(move || {
        let _ = exits.recv_timeout(Duration::from_secs(1));
        let _ = sender.send(sumac::broadcast(|ctx| ctx.index()));
    });
    let dropper = thread::spawn(move || drop(pool));
    let indices = results
        .recv_timeout(HANG)
        .expect("broadcast from a spawned job hangs once the pool is being dropped");
    assert_eq!(indices, [0, 1]);
    dropper.join().unwrap();
}

// ---------------------------------------------------------------------------------------
// Panics that escape a job from a destructor.
//
// Every job catches the panic of the user's closure, but some drop user values after
// (outside) that `catch_unwind`: the shared closure of a broadcast job, and the surplus
// payload of a scope's second panic. A panic from such a destructor unwinds the worker
// that runs the job: through whatever it was waiting in (a join whose second closure
// another worker is running on this stack frame: a use-after-free), or out of the
// worker thread, which dies and leaves its scope uncounted (a hang).

/// The second closure of a join runs on another worker while the owner, waiting at the
/// join, runs a `spawn_broadcast` job whose closure's destructor panics. That panic
/// must go to the panic handler; the join must not return (or unwind) before its second
/// closure finished with the join's stack frame.
#[test]
fn a_panicking_destructor_in_a_job_run_at_a_join_does_not_unwind_the_join() {
    let release_b = Arc::new(AtomicBool::new(false));
    let handled = Arc::new(AtomicUsize::new(0));
    let pool = {
        let release_b = Arc::clone(&release_b);
        let handled = Arc::clone(&handled);
        sumac::ThreadPoolBuilder::new()
            .num_threads(2)
            .heartbeat_interval(Duration::from_micros(1))
            .panic_handler(move |_| {
                handled.fetch_add(1, Ordering::SeqCst);
                // Only a handled panic lets `b` finish: if the panic unwound the join
                // instead, `b` never touches the (gone) frame.
                release_b.store(true, Ordering::SeqCst);
            })
            .build()
            .unwrap()
    };
    // Never dropped: on failure a worker is left blocked in `b`.
    let pool: &'static sumac::ThreadPool = Box::leak(Box::new(pool));
    let b_started = Arc::new(AtomicBool::new(false));
    let b_finished = Arc::new(AtomicBool::new(false));
    let op_ran_on_b_worker = Arc::new(AtomicBool::new(false));
    let b_worker = Arc::new(AtomicUsize::new(usize::MAX));
    let verdict = finishes("the join", {
        let (release_b, b_started, b_finished) = (release_b, b_started, b_finished);
        move || {
            pool.install(move || {
                let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
                    sumac::join(
                        || {
                            // `b` gets stolen: the heartbeat thread hands it over (the
                            // rescue offer) while this closure waits without forking.
                            // (Forking here, this worker could itself run `b` from the
                            // queue while it waited at one of those joins, nested below
                            // this closure, and `b` would then wait for this closure
                            // forever.)
                            while !b_started.load(Ordering::SeqCst) {
                                thread::yield_now();
                            }
                            let armed = Arc::new(AtomicBool::new(false));
                            let bomb = Bomb {
                                armed: Arc::clone(&armed),
                            };
                            let ran_on_b = Arc::clone(&op_ran_on_b_worker);
                            let b_index = Arc::clone(&b_worker);
                            sumac::spawn_broadcast(move |ctx| {
                                let _keep = &bomb;
                                if ctx.index() == b_index.load(Ordering::SeqCst) {
                                    ran_on_b.store(true, Ordering::SeqCst);
                                }
                            });
                            armed.store(true, Ordering::SeqCst);
                            // `b`'s worker runs its copy first (from `yield_now`), so
                            // the last reference to the closure goes with this worker's
                            // copy, which it runs while it waits at the join.
                            while !op_ran_on_b_worker.load(Ordering::SeqCst) {
                                thread::sleep(Duration::from_micros(50));
                            }
                        },
                        || {
                            b_worker
                                .store(sumac::current_thread_index().unwrap(), Ordering::SeqCst);
                            b_started.store(true, Ordering::SeqCst);
                            while !release_b.load(Ordering::SeqCst) {
                                sumac::yield_now();
                                thread::sleep(Duration::from_micros(50));
                            }
                            b_finished.store(true, Ordering::SeqCst);
                        },
                    )
                }));
                match outcome {
                    Ok(_) if b_finished.load(Ordering::SeqCst) => Ok(()),
                    Ok(_) => Err("join returned before its second closure finished".to_owned()),
                    Err(payload) if !b_finished.load(Ordering::SeqCst) => Err(format!(
                        "join unwound ({}) while its second closure still ran on its frame",
                        panic_message(&*payload)
                    )),
                    Err(payload) => Err(format!("join panicked: {}", panic_message(&*payload))),
                }
            })
        }
    });
    verdict.unwrap();
    assert_eq!(handled.load(Ordering::SeqCst), 1);
}

/// `Scope::spawn_broadcast` whose closure's destructor panics (the last reference is
/// dropped in a job): the scope must complete and re-raise that panic.
#[test]
fn scope_spawn_broadcast_closure_whose_destructor_panics_is_reraised() {
    let pool = two_worker_pool();
    let in_pool = Arc::clone(&pool);
    let outcome = finishes("the scope", move || {
        let armed = Arc::new(AtomicBool::new(true));
        let released = AtomicBool::new(false);
        let bomb = Bomb { armed };
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            in_pool.in_place_scope(|s| {
                let released = &released;
                s.spawn_broadcast(move |_, _| {
                    let _keep = &bomb;
                    // Hold on until the scope body dropped its own reference.
                    while !released.load(Ordering::SeqCst) {
                        thread::yield_now();
                    }
                });
                released.store(true, Ordering::SeqCst);
            })
        }));
        result.map_err(|payload| panic_message(&*payload))
    });
    assert_eq!(outcome, Err("bomb destructor".to_owned()));
    assert_both_workers_serve(pool);
}

/// `ThreadPool::spawn_broadcast` whose closure's destructor panics: the panic goes to
/// the panic handler, and the worker that dropped the closure keeps working.
#[test]
fn spawn_broadcast_closure_whose_destructor_panics_goes_to_the_handler() {
    let (handled, panics) = mpsc::channel();
    let handled = Mutex::new(handled);
    let pool = Arc::new(
        sumac::ThreadPoolBuilder::new()
            .num_threads(2)
            .panic_handler(move |payload| {
                let _ = handled.lock().unwrap().send(panic_message(&*payload));
            })
            .build()
            .unwrap(),
    );
    let armed = Arc::new(AtomicBool::new(false));
    let bomb = Bomb {
        armed: Arc::clone(&armed),
    };
    let ran = Arc::new(AtomicUsize::new(0));
    let job_ran = Arc::clone(&ran);
    let go = Arc::new(AtomicBool::new(false));
    let job_go = Arc::clone(&go);
    pool.spawn_broadcast(move |_| {
        let _keep = &bomb;
        while !job_go.load(Ordering::SeqCst) {
            thread::yield_now();
        }
        job_ran.fetch_add(1, Ordering::SeqCst);
    });
    armed.store(true, Ordering::SeqCst);
    go.store(true, Ordering::SeqCst);
    assert_eq!(
        panics.recv_timeout(HANG).as_deref(),
        Ok("bomb destructor"),
        "the destructor's panic did not reach the panic handler"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 2);
    assert_both_workers_serve(pool);
}

/// Two spawned jobs of a scope panic with payloads whose destructor panics: the scope
/// keeps the first payload and drops the second inside the job. That destructor's panic
/// must not escape the job; the scope completes and re-raises the first payload.
#[test]
fn a_second_scope_panic_whose_payload_destructor_panics_is_contained() {
    let pool = two_worker_pool();
    let in_pool = Arc::clone(&pool);
    let outcome = finishes("the scope", move || {
        let armed = Arc::new(AtomicBool::new(true));
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            in_pool.in_place_scope(|s| {
                for _ in 0..2 {
                    let armed = Arc::clone(&armed);
                    s.spawn(move |_| panic::panic_any(Bomb { armed }));
                }
            })
        }));
        match result {
            Ok(()) => Err("the scope did not re-raise".to_owned()),
            Err(payload) => {
                let is_bomb = payload.is::<Bomb>();
                drop(payload); // disarmed by the dropped surplus payload
                Ok((is_bomb, armed.load(Ordering::SeqCst)))
            }
        }
    });
    assert_eq!(outcome, Ok((true, false)));
    assert_both_workers_serve(pool);
}

/// Exit handlers that spawn jobs (onto their exiting worker's list) do not keep the
/// other workers, and so the pool's drop, waiting for those jobs.
#[test]
fn spawning_from_exit_handlers_does_not_hang_the_pool_drop() {
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(2)
        .exit_handler(|_| sumac::spawn(|| ()))
        .build()
        .unwrap();
    pool.install(|| sumac::join(|| (), || ()));
    finishes("dropping the pool", move || drop(pool));
}
