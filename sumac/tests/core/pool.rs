//! Thread pools: building, errors, handlers, heartbeat intervals, installing and nesting
//! without deadlock, yielding. (Dropping a pool: `shutdown.rs`.)
use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use common::{drop_within_a_minute, fib, fib_seq, stress_pool};
use sumac::{ThreadPoolBuildErrorKind, ThreadPoolBuilder};

#[test]
fn zero_heartbeat_interval_is_an_error() {
    let error = ThreadPoolBuilder::new()
        .heartbeat_interval(Duration::ZERO)
        .build()
        .unwrap_err();
    assert_eq!(
        error.kind(),
        ThreadPoolBuildErrorKind::ZeroHeartbeatInterval
    );
    assert!(error.to_string().contains("heartbeat"));
}

#[test]
fn zero_threads_means_one_per_core() {
    let pool = ThreadPoolBuilder::new().num_threads(0).build().unwrap();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(pool.current_num_threads(), cores);
}

#[test]
fn thread_names_and_indices() {
    // Calls handed to a worker (callers taking part run on their own thread, see
    // `callers_take_part_runs_install_on_the_calling_thread`).
    let pool = ThreadPoolBuilder::new()
        .num_threads(3)
        .thread_name(|i| format!("test-worker-{i}"))
        .callers_take_part(false)
        .build()
        .unwrap();
    let (name, index) = pool.install(|| {
        (
            std::thread::current().name().map(str::to_owned),
            sumac::current_thread_index(),
        )
    });
    let index = index.expect("inside the pool");
    assert!(index < 3);
    assert_eq!(
        name.as_deref(),
        Some(format!("test-worker-{index}").as_str())
    );
    assert!(pool
        .install(|| pool.current_thread_index())
        .is_some_and(|i| i < 3));
    assert_eq!(pool.current_thread_index(), None);
    assert_eq!(pool.install(sumac::current_num_threads), 3);
}

#[test]
fn install_propagates_panics_and_the_pool_survives() {
    let pool = stress_pool(2);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.install(|| panic!("inside"))
    }));
    assert!(result.is_err());
    assert_eq!(pool.install(|| fib(15)), fib_seq(15));
}

#[test]
fn install_into_itself_runs_inline() {
    let pool = stress_pool(2);
    let result = pool.install(|| {
        let outer = sumac::current_thread_index();
        pool.install(|| (outer, sumac::current_thread_index(), fib(12)))
    });
    assert_eq!(
        result.0, result.1,
        "a pool installing into itself stays on the same worker"
    );
    assert_eq!(result.2, fib_seq(12));
}

#[test]
fn install_into_another_pool_from_inside_a_pool() {
    let outer = stress_pool(2);
    let inner = stress_pool(3);
    let result = outer.install(|| {
        let (a, b) = sumac::join(
            || inner.install(|| fib(16)),
            || inner.install(sumac::current_num_threads),
        );
        (a, b, sumac::current_num_threads())
    });
    assert_eq!(result, (fib_seq(16), 3, 2));
}

#[test]
fn two_pools_installing_into_each_other() {
    let a = Arc::new(stress_pool(2));
    let b = Arc::new(stress_pool(2));
    let total: u64 = a.install(|| {
        let (x, y) = sumac::join(
            || b.install(|| a.install(|| b.install(|| fib(12)))),
            || b.install(|| sumac::join(|| a.install(|| fib(11)), || fib(10))),
        );
        x + y.0 + y.1
    });
    assert_eq!(total, fib_seq(12) + fib_seq(11) + fib_seq(10));
    // Many rounds from several external threads at once, crossing both ways.
    std::thread::scope(|threads| {
        for t in 0..4 {
            let (a, b) = (Arc::clone(&a), Arc::clone(&b));
            threads.spawn(move || {
                for _ in 0..50 {
                    let (first, second) = if t % 2 == 0 { (&a, &b) } else { (&b, &a) };
                    let value = first.install(|| second.install(|| first.install(|| fib(9))));
                    assert_eq!(value, fib_seq(9));
                }
            });
        }
    });
}

#[test]
fn join_and_scope_from_many_external_threads() {
    let pool = Arc::new(stress_pool(3));
    let barrier = Arc::new(Barrier::new(8));
    let done = Arc::new(AtomicUsize::new(0));
    std::thread::scope(|threads| {
        for t in 0..8 {
            let (pool, barrier, done) =
                (Arc::clone(&pool), Arc::clone(&barrier), Arc::clone(&done));
            threads.spawn(move || {
                barrier.wait();
                for _ in 0..30 {
                    if t % 2 == 0 {
                        assert_eq!(
                            pool.join(|| fib(12), || fib(11)),
                            (fib_seq(12), fib_seq(11))
                        );
                    } else {
                        let count = AtomicUsize::new(0);
                        pool.scope(|s| {
                            for _ in 0..5 {
                                s.spawn(|_| {
                                    count.fetch_add(1, Ordering::SeqCst);
                                });
                            }
                        });
                        assert_eq!(count.load(Ordering::SeqCst), 5);
                    }
                    // The global pool too.
                    assert_eq!(sumac::join(|| fib(8), || 1), (fib_seq(8), 1));
                }
                done.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    assert_eq!(done.load(Ordering::SeqCst), 8);
}

/// `Duration::MAX` means "never tick": the pool still runs everything (idle workers'
/// requests still share work) and shuts down, instead of overflowing a clock addition.
#[test]
fn a_heartbeat_that_never_ticks_still_works() {
    let pool = ThreadPoolBuilder::new()
        .num_threads(3)
        .heartbeat_interval(Duration::MAX)
        .build()
        .unwrap();
    assert_eq!(pool.install(|| fib(25)), fib_seq(25));
    let total = AtomicUsize::new(0);
    pool.scope(|s| {
        for i in 0..100 {
            let total = &total;
            s.spawn(move |_| {
                total.fetch_add(i, Ordering::Relaxed);
            });
        }
    });
    assert_eq!(total.load(Ordering::Relaxed), 4950);
    drop_within_a_minute(pool, "dropping the pool hung");
}

/// A member spinning for work ticks in the heartbeat thread's stead (`spinners-tick`,
/// counted in its `ticks`): here the worker that finished its piece of one short loop
/// spins until the caller's next loop gives it work, with ticks due meanwhile. Switched
/// off, only the heartbeat thread ticks (and is not counted).
#[test]
fn a_member_spinning_for_work_ticks_in_the_heartbeat_threads_stead() {
    use sumac::prelude::*;
    use sumac::Mechanism;
    fn spinning_ticks(on: bool, rounds_off: usize) -> u64 {
        let pool = common::two_worker_pool_with(
            Duration::from_micros(20),
            &[(Mechanism::SpinnersTick, on)],
        );
        let before = pool.stats();
        let start = std::time::Instant::now();
        // Short loops back to back, so that an idle worker spins between them while the
        // caller runs: switched on, until a tick was counted (or a minute passed: a hang
        // check, as a loaded machine may deschedule the spinner for a long while);
        // switched off, `rounds_off` loops.
        let mut ticks = 0;
        for round in 1.. {
            pool.install(|| {
                (0..256).into_par_iter().for_each(|_| {
                    let item = std::time::Instant::now();
                    while item.elapsed() < Duration::from_micros(1) {
                        std::hint::spin_loop();
                    }
                })
            });
            ticks = pool.stats().since(&before).total().ticks;
            let done = if on {
                ticks > 0 || start.elapsed() > Duration::from_secs(60)
            } else {
                round >= rounds_off
            };
            if done {
                break;
            }
        }
        ticks
    }
    let on = spinning_ticks(true, 0);
    assert!(on > 0, "no spinning member ticked");
    assert_eq!(spinning_ticks(false, 500), 0);
}

#[test]
fn start_and_exit_handlers_run_once_on_every_worker() {
    let started = Arc::new(std::sync::Mutex::new(Vec::new()));
    let exited = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (on_start, on_exit) = (Arc::clone(&started), Arc::clone(&exited));
    let pool = ThreadPoolBuilder::new()
        .num_threads(4)
        .start_handler(move |index| {
            assert_eq!(sumac::current_thread_index(), Some(index));
            on_start.lock().unwrap().push(index);
        })
        .exit_handler(move |index| {
            assert_eq!(sumac::current_thread_index(), Some(index));
            on_exit.lock().unwrap().push(index);
        })
        .build()
        .unwrap();
    assert_eq!(pool.install(|| fib(20)), fib_seq(20));
    assert!(exited.lock().unwrap().is_empty());
    drop(pool);
    for list in [started, exited] {
        let mut indices = list.lock().unwrap().clone();
        indices.sort_unstable();
        assert_eq!(indices, [0, 1, 2, 3]);
    }
}

#[test]
fn a_panicking_start_handler_goes_to_the_panic_handler() {
    let panics = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&panics);
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .start_handler(|index| {
            if index == 1 {
                panic!("start handler of worker 1");
            }
        })
        .panic_handler(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    // Both workers still run jobs after the handler's panic.
    assert_eq!(pool.install(|| fib(22)), fib_seq(22));
    drop(pool);
    assert_eq!(panics.load(Ordering::SeqCst), 1);
}

/// Fibonacci whose every call yields first: pending forks of the caller (and shared
/// jobs) run early, inside unrelated calls, and every join must still see its own
/// result. On a 1 µs heartbeat, so forks are shared and taken back meanwhile.
fn yielding_fib(n: u64, executed: &AtomicUsize) -> u64 {
    if sumac::yield_now() == Some(sumac::Yield::Executed) {
        executed.fetch_add(1, Ordering::Relaxed);
    }
    if n < 2 {
        return n;
    }
    let (a, b) = sumac::join(
        || yielding_fib(n - 1, executed),
        || yielding_fib(n - 2, executed),
    );
    a + b
}

#[test]
fn yielding_runs_pending_jobs_and_keeps_results() {
    let pool = common::stress_pool(4);
    let executed = AtomicUsize::new(0);
    for _ in 0..20 {
        assert_eq!(
            pool.install(|| yielding_fib(18, &executed)),
            common::fib_seq(18)
        );
    }
    assert!(
        executed.load(Ordering::Relaxed) > 0,
        "no yield ever ran a job"
    );
    // Outside any pool, and on a worker of another pool.
    assert_eq!(sumac::yield_now(), None);
    assert_eq!(sumac::yield_local(), None);
    let other = sumac::ThreadPoolBuilder::new()
        .num_threads(1)
        .heartbeat_interval(std::time::Duration::from_micros(1))
        .callers_take_part(false)
        .build()
        .unwrap();
    assert_eq!(other.install(|| pool.yield_now()), None);
    assert_eq!(
        other.install(|| other.yield_local()),
        Some(sumac::Yield::Idle)
    );
    // yield_local runs the worker's own spawned job.
    let ran = AtomicUsize::new(0);
    other.scope(|s| {
        s.spawn(|_| {
            ran.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(other.yield_local(), Some(sumac::Yield::Executed));
        assert_eq!(ran.load(Ordering::Relaxed), 1);
    });
}

/// A spawn handler starts every worker (its threads carry its names), the pool runs
/// forked work on them, and dropping the pool waits until each worker is done with the
/// pool: every exit handler (the last thing a worker runs before `run` returns) has run
/// when the drop returns. (Whether the OS thread itself has ended by then is a race
/// outside the pool: it still has to return from the handler's closure.)
#[test]
fn a_spawn_handler_starts_every_worker_and_drop_waits_for_them() {
    use std::sync::Mutex;
    let handles = Arc::new(Mutex::new(Vec::new()));
    let indices = Arc::new(Mutex::new(Vec::new()));
    let exited = Arc::new(AtomicUsize::new(0));
    let (kept, seen, exits) = (
        Arc::clone(&handles),
        Arc::clone(&indices),
        Arc::clone(&exited),
    );
    let pool = ThreadPoolBuilder::new()
        .num_threads(3)
        .heartbeat_interval(Duration::from_micros(1))
        .exit_handler(move |_| {
            // Slow enough that a drop that did not wait would return first.
            std::thread::sleep(Duration::from_millis(20));
            exits.fetch_add(1, Ordering::SeqCst);
        })
        .thread_name(|i| format!("handled-{i}"))
        .stack_size(4 << 20)
        .spawn_handler(move |thread| {
            seen.lock().unwrap().push(thread.index());
            assert_eq!(thread.name(), Some(&*format!("handled-{}", thread.index())));
            assert_eq!(thread.stack_size(), Some(4 << 20));
            let mut builder = std::thread::Builder::new();
            builder = builder.name(thread.name().unwrap().to_owned());
            let handle = builder.spawn(|| thread.run())?;
            kept.lock().unwrap().push(handle);
            Ok(())
        })
        .build()
        .unwrap();
    assert_eq!(*indices.lock().unwrap(), [0, 1, 2]);
    assert_eq!(pool.install(|| fib(18)), fib_seq(18));
    let names = pool.broadcast(|_| std::thread::current().name().unwrap().to_owned());
    assert_eq!(names, ["handled-0", "handled-1", "handled-2"]);
    drop(pool);
    assert_eq!(
        exited.load(Ordering::SeqCst),
        3,
        "drop returned before a worker was done"
    );
    for handle in handles.lock().unwrap().drain(..) {
        handle.join().unwrap();
    }
}

/// An error from the spawn handler fails `build` with `ThreadSpawn` (the error as its
/// source), and the workers it had started shut down again.
#[test]
fn a_failing_spawn_handler_fails_the_build_and_stops_started_workers() {
    use std::error::Error;
    let started = Arc::new(AtomicUsize::new(0));
    let exited = Arc::new(AtomicUsize::new(0));
    let (counter, exits) = (Arc::clone(&started), Arc::clone(&exited));
    let error = ThreadPoolBuilder::new()
        .num_threads(4)
        .exit_handler(move |_| {
            exits.fetch_add(1, Ordering::SeqCst);
        })
        .spawn_handler(move |thread| {
            if thread.index() == 2 {
                return Err(std::io::Error::other("no third thread"));
            }
            counter.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(|| thread.run());
            Ok(())
        })
        .build()
        .unwrap_err();
    assert_eq!(error.kind(), ThreadPoolBuildErrorKind::ThreadSpawn);
    assert_eq!(error.source().unwrap().to_string(), "no third thread");
    // `build` returned only after the two started workers ran their exit handlers.
    assert_eq!(started.load(Ordering::SeqCst), 2);
    assert_eq!(exited.load(Ordering::SeqCst), 2);
}

/// Builds a 4-thread pool whose third thread cannot be started because `thread_name` or
/// the spawn handler panics, and returns (workers started, workers that ran their exit
/// handler) once `build` has unwound.
fn build_that_panics_at_the_third_thread(in_spawn_handler: bool) -> (usize, usize) {
    let started = Arc::new(AtomicUsize::new(0));
    let exited = Arc::new(AtomicUsize::new(0));
    let (starts, exits) = (Arc::clone(&started), Arc::clone(&exited));
    let builder = ThreadPoolBuilder::new()
        .num_threads(4)
        .start_handler(move |_| {
            starts.fetch_add(1, Ordering::SeqCst);
        })
        .exit_handler(move |_| {
            exits.fetch_add(1, Ordering::SeqCst);
        });
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        if in_spawn_handler {
            builder
                .spawn_handler(|thread| {
                    assert!(thread.index() < 2, "no third thread");
                    std::thread::spawn(|| thread.run());
                    Ok(())
                })
                .build()
        } else {
            builder
                .thread_name(|index| {
                    assert!(index < 2, "no name for a third thread");
                    format!("named-{index}")
                })
                .build()
        }
    }));
    let payload = outcome.expect_err("the panic unwinds out of build");
    assert!(common::panic_message(&*payload).contains("third thread"));
    (
        started.load(Ordering::SeqCst),
        exited.load(Ordering::SeqCst),
    )
}

/// A panic while the pool starts its threads (in `thread_name` or in the spawn handler)
/// unwinds out of `build` only after the workers started so far exited, as a failed
/// spawn does: before, they ran forever (found by Rayon's `panic_thread_name` test).
#[test]
fn a_panic_while_starting_threads_stops_the_started_workers() {
    for in_spawn_handler in [false, true] {
        let (started, exited) = build_that_panics_at_the_third_thread(in_spawn_handler);
        // The spawned workers may not have reached their start handler before the
        // build stopped them; every one that did has exited.
        assert!(started <= 2, "{started} workers started");
        assert_eq!(exited, started, "spawn handler: {in_spawn_handler}");
    }
}

/// The errors read as Rayon's (code that matches on the message keeps working), and a
/// failed thread start shows the operating system's error.
#[test]
fn build_errors_read_as_rayons() {
    let zero = ThreadPoolBuilder::new()
        .heartbeat_interval(Duration::ZERO)
        .build()
        .unwrap_err();
    assert_eq!(zero.to_string(), "The heartbeat interval must not be zero.");
    let spawn = ThreadPoolBuilder::new()
        .num_threads(2)
        .spawn_handler(|_| Err(std::io::Error::other("no threads today")))
        .build()
        .unwrap_err();
    assert_eq!(spawn.kind(), ThreadPoolBuildErrorKind::ThreadSpawn);
    assert_eq!(spawn.to_string(), "no threads today");
}

/// `build_scoped`: the workers run inside `wrapper`, which borrows from the caller
/// (here it keeps each worker's thread-local state for the whole run), and every worker
/// has returned once `build_scoped` did.
#[test]
fn build_scoped_runs_workers_inside_the_wrapper() {
    use std::cell::Cell;
    use std::sync::Mutex;
    thread_local! {
        static TAG: Cell<usize> = const { Cell::new(0) };
    }
    let finished = Mutex::new(Vec::new());
    let result = ThreadPoolBuilder::new()
        .num_threads(2)
        .heartbeat_interval(Duration::from_micros(1))
        .build_scoped(
            |thread| {
                let index = thread.index();
                TAG.with(|tag| tag.set(100 + index));
                thread.run();
                finished.lock().unwrap().push(index);
            },
            |pool| {
                let tags = pool.broadcast(|_| TAG.with(Cell::get));
                (tags, pool.install(|| fib(16)))
            },
        )
        .unwrap();
    assert_eq!(result, (vec![100, 101], fib_seq(16)));
    let mut finished = finished.into_inner().unwrap();
    finished.sort();
    assert_eq!(finished, [0, 1]);
}

/// `build_scoped` re-raises a panic of `with_pool` after shutting the pool down, and
/// reports a build error without calling `with_pool`.
#[test]
fn build_scoped_propagates_panics_and_errors() {
    let caught = std::panic::catch_unwind(|| {
        ThreadPoolBuilder::new()
            .num_threads(2)
            .build_scoped(|thread| thread.run(), |_| panic!("inside with_pool"))
    });
    let payload = caught.unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"inside with_pool"));
    let error = ThreadPoolBuilder::new()
        .heartbeat_interval(Duration::ZERO)
        .build_scoped(|thread| thread.run(), |_| unreachable!("no pool was built"))
        .unwrap_err();
    assert_eq!(
        error.kind(),
        ThreadPoolBuildErrorKind::ZeroHeartbeatInterval
    );
}

/// `breadth_first` is accepted (deprecated, as in Rayon) and changes nothing.
#[test]
#[allow(deprecated)]
fn breadth_first_is_accepted() {
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .breadth_first()
        .build()
        .unwrap();
    assert_eq!(pool.install(|| fib(14)), fib_seq(14));
}

/// A thread outside the pool runs `install` itself, taking part in the pool: the
/// caller's thread, stack and thread-locals, no worker index; the pool's size, and its
/// workers take forks the caller shares. With `callers_take_part(false)` the call runs
/// on a worker, as in Rayon.
#[test]
fn callers_take_part_runs_install_on_the_calling_thread() {
    thread_local! {
        static MARK: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    }
    MARK.with(|mark| mark.set(7));
    let caller = std::thread::current().id();
    let pool = common::stress_pool(3);
    let (thread, mark, index, threads) = pool.install(|| {
        (
            std::thread::current().id(),
            MARK.with(std::cell::Cell::get),
            sumac::current_thread_index(),
            sumac::current_num_threads(),
        )
    });
    assert_eq!((thread, mark, index, threads), (caller, 7, None, 3));
    assert_eq!(pool.current_thread_index(), None);
    assert_eq!(
        pool.install(|| pool.current_thread_has_pending_tasks()),
        Some(false)
    );
    // Its forks reach the workers (a 1 µs heartbeat shares them).
    let other_threads = pool.install(|| {
        let seen = std::sync::Mutex::new(std::collections::HashSet::new());
        for _ in 0..1000 {
            common::fib(12);
            sumac::join(
                || std::thread::sleep(std::time::Duration::from_micros(200)),
                || {
                    seen.lock().unwrap().insert(std::thread::current().id());
                },
            );
            if seen.lock().unwrap().iter().any(|&id| id != caller) {
                break;
            }
        }
        seen.into_inner().unwrap()
    });
    assert!(
        other_threads.iter().any(|&id| id != caller),
        "no fork of the caller ever ran on a worker"
    );
    let handing = ThreadPoolBuilder::new()
        .num_threads(3)
        .callers_take_part(false)
        .build()
        .unwrap();
    let (thread, mark, index) = handing.install(|| {
        (
            std::thread::current().id(),
            MARK.with(std::cell::Cell::get),
            sumac::current_thread_index(),
        )
    });
    assert_ne!(thread, caller);
    assert_eq!(mark, 0);
    assert!(index.is_some_and(|index| index < 3));
    // A pool with a stack size of its own runs calls on its workers.
    let big_stacks = ThreadPoolBuilder::new()
        .num_threads(2)
        .stack_size(4 << 20)
        .build()
        .unwrap();
    assert!(big_stacks.install(sumac::current_thread_index).is_some());
}

/// A caller taking part in a one-thread pool is that pool's one thread while it runs:
/// its loops and joins stay on it, in sequential order, and its spawned jobs run on it
/// newest first, none on the worker; a job it leaves behind (a `spawn` that outlives the
/// call) is the worker's.
#[test]
fn a_caller_in_a_one_thread_pool_is_its_one_thread_while_it_runs() {
    let pool = stress_pool(1);
    let caller = std::thread::current().id();
    for _ in 0..20 {
        let order = std::sync::Mutex::new(Vec::new());
        pool.install(|| {
            use sumac::prelude::*;
            (0..2000).into_par_iter().for_each(|i| {
                assert_eq!(std::thread::current().id(), caller);
                order.lock().unwrap().push(i);
            });
            sumac::scope(|s| {
                for i in 2000..2100 {
                    let order = &order;
                    s.spawn(move |_| {
                        assert_eq!(std::thread::current().id(), caller);
                        order.lock().unwrap().push(i);
                    });
                    // Time for an idle worker to look for work.
                    std::hint::spin_loop();
                }
            });
        });
        let order = order.into_inner().unwrap();
        let expected: Vec<usize> = (0..2000).chain((2000..2100).rev()).collect();
        assert_eq!(order, expected);
    }
    let (sender, receiver) = std::sync::mpsc::channel();
    pool.install(|| {
        pool.spawn(move || sender.send(std::thread::current().id()).unwrap());
    });
    assert_ne!(
        receiver.recv().unwrap(),
        caller,
        "the worker ran the job left behind"
    );
}

/// A caller taking part that yields runs jobs shared with the pool, as the worker whose
/// place it holds would: in a one-thread pool nobody else runs a job injected from
/// outside while the caller spins in `yield_now` waiting for it. (Bounded: a caller that
/// never runs it fails the test after a minute instead of hanging.)
#[test]
fn a_caller_yielding_in_a_one_thread_pool_runs_a_job_injected_from_outside() {
    let pool = stress_pool(1);
    for _ in 0..20 {
        let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
        pool.install(|| {
            std::thread::scope(|s| {
                // From a thread outside the pool: into its injector.
                s.spawn(|| {
                    let ran = Arc::clone(&ran);
                    pool.spawn(move || ran.store(true, Ordering::Release));
                });
                let deadline = std::time::Instant::now() + Duration::from_secs(60);
                while !ran.load(Ordering::Acquire) && std::time::Instant::now() < deadline {
                    sumac::yield_now();
                }
            });
        });
        assert!(ran.load(Ordering::Acquire), "the injected job never ran");
    }
}

/// A caller taking part holds one of the pool's places: while it runs a long item of its
/// own, only one of a two-thread pool's workers takes the jobs it spawned, so the pool
/// runs as many threads as it has (as Rayon's `install`, which occupies a worker).
#[test]
fn a_caller_taking_part_holds_one_of_the_pools_places() {
    fn item(running: &AtomicUsize, most: &AtomicUsize, length: Duration) {
        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
        most.fetch_max(now, Ordering::SeqCst);
        let start = std::time::Instant::now();
        while start.elapsed() < length {
            most.fetch_max(running.load(Ordering::SeqCst), Ordering::SeqCst);
            std::hint::spin_loop();
        }
        running.fetch_sub(1, Ordering::SeqCst);
    }
    let pool = stress_pool(2);
    for _ in 0..3 {
        let (running, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        pool.install(|| {
            sumac::scope(|s| {
                for _ in 0..4 {
                    s.spawn(|_| item(&running, &most, Duration::from_millis(10)));
                }
                // The caller's own item, during which a worker runs the spawned jobs.
                item(&running, &most, Duration::from_millis(100));
            });
        });
        let most = most.load(Ordering::SeqCst);
        assert!(most <= 2, "{most} members ran at once in a two-thread pool");
    }
}

/// A caller whose call gives no work away (no shared fork, no spawned job, no loop that
/// lasted) holds no place: beside it, every worker of the pool runs jobs from elsewhere,
/// as they would beside any other thread of the program. (Holding a place from the
/// start, it would leave a two-thread pool one worker for them.)
#[test]
fn a_caller_whose_call_gives_nothing_away_holds_no_place() {
    use std::sync::atomic::AtomicBool;
    use std::time::Instant;
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let (running, met) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    let finished = Arc::new(AtomicUsize::new(0));
    pool.install(|| {
        std::thread::scope(|s| {
            // Jobs injected from another thread outside the pool, each running until it
            // saw the other run at the same time.
            s.spawn(|| {
                for _ in 0..2 {
                    let (running, met, finished) = (running.clone(), met.clone(), finished.clone());
                    pool.spawn(move || {
                        running.fetch_add(1, Ordering::SeqCst);
                        while Instant::now() < deadline {
                            if running.load(Ordering::SeqCst) == 2 {
                                met.store(true, Ordering::SeqCst);
                                break;
                            }
                            std::hint::spin_loop();
                        }
                        finished.fetch_add(1, Ordering::SeqCst);
                    });
                }
            });
            // The caller's own work: no forks, no spawns.
            while finished.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
                std::hint::spin_loop();
            }
        });
    });
    assert!(
        met.load(Ordering::SeqCst),
        "the two jobs never ran at once beside a caller that gave nothing away"
    );
}

/// A caller taking part that waits in a join for the half a worker took from it runs
/// pieces of that half meanwhile (`guest-takes-forks`): its wait counts as a request for
/// work, so the worker shares forks of the half and the caller takes them, instead of
/// spinning and then sleeping while one worker runs the whole half.
#[test]
fn a_caller_waiting_for_the_half_a_worker_took_runs_pieces_of_it() {
    use sumac::prelude::*;
    fn spin_for(length: Duration) {
        let start = std::time::Instant::now();
        while start.elapsed() < length {
            std::hint::spin_loop();
        }
    }
    // Items much shorter than the caller's spin (one interval), so that the worker
    // reaches a fork point, and shares, while the caller still spins.
    let pool = common::pool_with_heartbeat(2, Duration::from_micros(100));
    let caller = std::thread::current().id();
    let mut stolen_halves = 0;
    for _ in 0..20 {
        let (stolen, caller_items) = (AtomicUsize::new(0), AtomicUsize::new(0));
        pool.join(
            || spin_for(Duration::from_millis(5)),
            || {
                if std::thread::current().id() != caller {
                    stolen.store(1, Ordering::SeqCst);
                }
                (0..4000).into_par_iter().for_each(|_| {
                    if std::thread::current().id() == caller {
                        caller_items.fetch_add(1, Ordering::SeqCst);
                    }
                    spin_for(Duration::from_micros(5));
                });
            },
        );
        if stolen.load(Ordering::SeqCst) == 1 {
            stolen_halves += 1;
            if caller_items.load(Ordering::SeqCst) > 0 {
                return;
            }
        }
    }
    panic!("in {stolen_halves} of 20 joins a worker took the second half, and the waiting caller never ran a piece of it");
}

// ------------------------------------------------------------------ measured calls

/// A pool whose callers from outside hand their calls to a worker.
fn handing_pool(threads: usize) -> sumac::ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(threads)
        .callers_take_part(false)
        .build()
        .unwrap()
}

#[test]
fn a_measured_call_made_on_a_worker_that_shares_nothing_is_one_piece_on_that_worker() {
    let pool = handing_pool(2);
    let (index, ramp_up) = pool.install(|| {
        let index = pool
            .current_thread_index()
            .expect("a worker runs the install");
        let (answer, ramp_up) = pool.measure_ramp_up(|| 40 + 2);
        assert_eq!(answer, 42);
        (index, ramp_up)
    });
    assert_eq!(ramp_up.pieces, 1);
    let mut expected = vec![None; 2];
    expected[index] = Some(Duration::ZERO);
    assert_eq!(ramp_up.first_work, expected);
    assert_eq!(ramp_up.busy_workers(), 1);
    assert_eq!(ramp_up.all_busy_after(), None);
}

#[test]
fn a_measured_call_from_outside_reports_when_the_worker_took_it() {
    let pool = handing_pool(1);
    let (answer, ramp_up) = pool.measure_ramp_up(|| pool.install(|| 6 * 7));
    assert_eq!(answer, 42);
    assert_eq!(ramp_up.pieces, 1);
    let took = ramp_up.first_work[0].expect("the worker ran the call");
    assert!(took <= ramp_up.duration, "{ramp_up:?}");
    assert_eq!(ramp_up.all_busy_after(), Some(took));
}

/// A caller from outside takes part holding one of the pool's places: the call fills
/// every place once all workers but one took a piece of it.
#[test]
fn a_long_measured_loop_from_outside_fills_every_place_in_pieces() {
    use sumac::prelude::*;
    let pool = stress_pool(2);
    // Until one call reached both workers: on a loaded machine a worker may take long
    // to wake up.
    for call in 0.. {
        let (sum, ramp_up) = pool.measure_ramp_up(|| {
            pool.install(|| {
                (0..200_000u64)
                    .into_par_iter()
                    .map(|x| x.wrapping_mul(x) % 7)
                    .sum::<u64>()
            })
        });
        assert_eq!(sum, (0..200_000u64).map(|x| x.wrapping_mul(x) % 7).sum());
        assert_eq!(ramp_up.first_work.len(), 2);
        assert!(ramp_up.caller_held_a_place);
        if let Some(after) = ramp_up.all_busy_after() {
            assert!(after <= ramp_up.duration, "{ramp_up:?}");
            // A worker got a piece the caller's loop handed over.
            assert!(ramp_up.busy_workers() >= 1, "{ramp_up:?}");
            assert!(ramp_up.pieces >= 2, "{ramp_up:?}");
            break;
        }
        assert!(call < 200, "no call filled every place: {ramp_up:?}");
    }
}

#[test]
fn a_panic_in_a_measured_call_propagates() {
    common::quiet_planned_panics("planned panic in a measured call");
    let pool = handing_pool(2);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.measure_ramp_up(|| pool.install(|| panic!("planned panic in a measured call")))
    }));
    assert!(result.is_err());
    let (answer, ramp_up) = pool.measure_ramp_up(|| pool.install(|| 1));
    assert_eq!((answer, ramp_up.pieces), (1, 1));
}

#[cfg(feature = "trace")]
#[test]
fn a_measured_call_from_outside_starts_in_the_trace() {
    use sumac::trace::EventKind;
    let pool = handing_pool(2);
    pool.take_trace();
    pool.measure_ramp_up(|| pool.install(|| 1));
    let events = pool.take_trace();
    let starts: Vec<_> = events
        .iter()
        .filter(|event| event.kind == EventKind::CallStart)
        .collect();
    assert_eq!(starts.len(), 1, "{events:?}");
    assert_eq!(starts[0].worker, 2, "a thread outside the pool");
    // The worker that took the call started its job after the call started.
    assert!(events
        .iter()
        .any(|event| event.kind == EventKind::JobStart && event.time_ns >= starts[0].time_ns));
}
