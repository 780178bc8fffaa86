//! Pool shutdown: the live count of spawned jobs that keeps the workers
//! (`Registry::live_spawns`), queued spawns run before the drop returns, jobs spawned by
//! exit handlers, broadcasts from spawned jobs while the pool is dropped, pools dropped
//! from their own workers, nested pools, `use_current_thread`, custom spawn handlers and
//! heartbeat intervals that outlast the drop. Every spawned closure must run (or at least
//! be dropped) exactly once, and no drop may hang.

use crate::common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use common::{
    drop_within_a_minute, fib, fib_seq, finishes, pool_with_heartbeat, stress_pool, DropCounter,
    HANG,
};
use sumac::ThreadPoolBuilder;

/// Aborts the process unless `done` is sent within `HANG`: for tests whose possible
/// deadlock would block the test's own thread (a pool dropped on its building thread).
fn watchdog(what: &'static str) -> mpsc::Sender<()> {
    let (done, finished) = mpsc::channel::<()>();
    thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(HANG) {
            eprintln!("{what}: hung");
            std::process::abort();
        }
    });
    done
}

/// Polls `condition` until it holds, or panics with `what` after `HANG`.
fn eventually(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + HANG;
    while !condition() {
        assert!(Instant::now() < deadline, "{what}");
        thread::sleep(Duration::from_millis(1));
    }
}

// ---------------------------------------------------------------------------------------
// Jobs spawned by exit handlers.

/// The only worker of a pool spawns a job from its exit handler: the job lands on its
/// list, is handed to the shared queue, and no worker is left to run it. The closure
/// must still run (or at least be dropped), not be leaked.
#[test]
fn a_job_spawned_by_the_exit_handler_of_a_one_worker_pool_is_not_lost() {
    let counter = Arc::new(DropCounter::new());
    let ran = Arc::new(AtomicUsize::new(0));
    let (handler_counter, handler_ran) = (Arc::clone(&counter), Arc::clone(&ran));
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(1)
        .exit_handler(move |_| {
            let token = handler_counter.token();
            let ran = Arc::clone(&handler_ran);
            sumac::spawn(move || {
                ran.fetch_add(1, Ordering::SeqCst);
                drop(token);
            });
        })
        .build()
        .unwrap();
    finishes("dropping the pool", move || drop(pool));
    assert_eq!(counter.created(), 1);
    assert_eq!(
        (ran.load(Ordering::SeqCst), counter.dropped()),
        (1, 1),
        "the job the exit handler spawned never ran and its closure was leaked"
    );
}

/// Every worker's exit handler spawns (`spawn` and `spawn_fifo`): all those jobs run
/// exactly once, whichever worker exits last.
#[test]
fn jobs_spawned_by_every_exit_handler_all_run_once() {
    for round in 0..20 {
        let counter = Arc::new(DropCounter::new());
        let ran = Arc::new(AtomicUsize::new(0));
        let (handler_counter, handler_ran) = (Arc::clone(&counter), Arc::clone(&ran));
        let pool = sumac::ThreadPoolBuilder::new()
            .num_threads(3)
            .heartbeat_interval(Duration::from_micros(1))
            .exit_handler(move |_| {
                for fifo in [false, true] {
                    let token = handler_counter.token();
                    let ran = Arc::clone(&handler_ran);
                    let job = move || {
                        ran.fetch_add(1, Ordering::SeqCst);
                        drop(token);
                    };
                    if fifo {
                        sumac::spawn_fifo(job);
                    } else {
                        sumac::spawn(job);
                    }
                }
            })
            .build()
            .unwrap();
        pool.install(|| fib(12));
        finishes("dropping the pool", move || drop(pool));
        assert_eq!(counter.created(), 6);
        assert_eq!(
            (ran.load(Ordering::SeqCst), counter.dropped()),
            (6, 6),
            "round {round}: a job spawned by an exit handler was lost"
        );
    }
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

// ---------------------------------------------------------------------------------------
// Custom spawn handlers.

/// A spawn handler that drops a `ThreadBuilder` unused is supported (the pool's drop
/// does not wait for that worker). A `spawn_broadcast` then addresses a job to that
/// worker which nobody will ever run: it must not be counted among the live spawned
/// jobs, or the other workers would wait for it forever and the pool's drop would hang.
#[test]
fn spawn_broadcast_on_a_pool_with_an_unused_worker_does_not_hang_the_drop() {
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(2)
        .spawn_handler(|thread| {
            if thread.index() == 0 {
                thread::spawn(|| thread.run());
            }
            Ok(())
        })
        .build()
        .unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let job_ran = Arc::clone(&ran);
    pool.spawn_broadcast(move |ctx| {
        if ctx.index() == 0 {
            job_ran.fetch_add(1, Ordering::SeqCst);
        }
    });
    finishes("dropping the pool", move || drop(pool));
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

/// `build_scoped`: a job spawned just before the pool is dropped keeps queueing work
/// (a chain of spawns, a scope, a broadcast) after the drop started; all of it runs,
/// and `build_scoped` returns.
#[test]
fn build_scoped_pool_dropped_while_a_spawned_job_keeps_queueing_work() {
    let counter = Arc::new(DropCounter::new());
    let total = Arc::new(AtomicUsize::new(0));
    let (job_counter, job_total) = (Arc::clone(&counter), Arc::clone(&total));
    finishes(
        "build_scoped with a spawned job during the drop",
        move || {
            sumac::ThreadPoolBuilder::new()
                .num_threads(3)
                .heartbeat_interval(Duration::from_micros(1))
                .build_scoped(
                    |thread| thread.run(),
                    move |pool| {
                        let (go, wait) = mpsc::channel::<()>();
                        pool.spawn(move || {
                            let _ = wait.recv();
                            thread::sleep(Duration::from_millis(20));
                            spawn_chain(20, &job_counter, &job_total);
                        });
                        go.send(()).unwrap();
                        // `pool` is dropped when this closure returns.
                    },
                )
                .unwrap();
        },
    );
    assert_eq!(counter.created(), counter.dropped());
    assert_eq!(total.load(Ordering::SeqCst), 20 * 4);
}

/// Spawns a chain of `depth` jobs; each adds 1 to `total` itself, then runs a scope of
/// one spawned job, a `spawn_fifo` and a one-worker-only piece of a `broadcast`, each
/// adding 1 (so 4 per level).
fn spawn_chain(depth: usize, counter: &Arc<DropCounter>, total: &Arc<AtomicUsize>) {
    if depth == 0 {
        return;
    }
    let token = counter.token();
    let (counter, total) = (Arc::clone(counter), Arc::clone(total));
    sumac::spawn(move || {
        total.fetch_add(1, Ordering::SeqCst);
        sumac::scope(|s| {
            s.spawn(|_| {
                total.fetch_add(1, Ordering::SeqCst);
            });
        });
        let fifo_token = counter.token();
        let fifo_total = Arc::clone(&total);
        sumac::spawn_fifo(move || {
            fifo_total.fetch_add(1, Ordering::SeqCst);
            drop(fifo_token);
        });
        sumac::broadcast(|ctx| {
            if ctx.index() == 0 {
                total.fetch_add(1, Ordering::SeqCst);
            }
        });
        spawn_chain(depth - 1, &counter, &total);
        drop(token);
    });
}

/// A handler that drops its `ThreadBuilder` instead of running it does not make
/// dropping the pool hang (that worker counts as finished).
#[test]
fn a_thread_builder_dropped_unused_does_not_hang_the_drop() {
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .spawn_handler(|thread| {
            if thread.index() == 0 {
                std::thread::spawn(|| thread.run());
            }
            Ok(())
        })
        .build()
        .unwrap();
    assert_eq!(pool.install(|| fib(12)), fib_seq(12));
    drop_within_a_minute(pool, "dropping the pool waited for a worker that never ran");
}

// ---------------------------------------------------------------------------------------
// Pools dropped from their own workers, and nested pools.

/// The last reference to a pool is dropped inside one of its own spawned jobs while
/// many other spawned jobs (some spawning more) are pending: the threads are detached,
/// every job still runs exactly once, and every worker exits afterwards.
#[test]
fn a_pool_dropped_on_its_own_worker_runs_every_pending_spawn_and_its_workers_exit() {
    for _ in 0..10 {
        let counter = Arc::new(DropCounter::new());
        let total = Arc::new(AtomicUsize::new(0));
        let exits = Arc::new(AtomicUsize::new(0));
        let handler_exits = Arc::clone(&exits);
        let pool = Arc::new(
            sumac::ThreadPoolBuilder::new()
                .num_threads(3)
                .heartbeat_interval(Duration::from_micros(1))
                .exit_handler(move |_| {
                    handler_exits.fetch_add(1, Ordering::SeqCst);
                })
                .build()
                .unwrap(),
        );
        let inner = Arc::clone(&pool);
        pool.spawn(move || drop(inner));
        for i in 0..50 {
            let token = counter.token();
            let (counter, total) = (Arc::clone(&counter), Arc::clone(&total));
            let job = move || {
                fib(8);
                total.fetch_add(1, Ordering::SeqCst);
                let nested = counter.token();
                let total = Arc::clone(&total);
                sumac::spawn(move || {
                    total.fetch_add(1, Ordering::SeqCst);
                    drop(nested);
                });
                drop(token);
            };
            if i % 2 == 0 {
                pool.spawn(job);
            } else {
                pool.spawn_fifo(job);
            }
        }
        drop(pool);
        eventually("the detached workers never exited", || {
            exits.load(Ordering::SeqCst) == 3
        });
        assert_eq!(total.load(Ordering::SeqCst), 100);
        assert_eq!((counter.created(), counter.dropped()), (100, 100));
    }
}

/// Two pools whose spawned jobs spawn into each other (each holding both pools). The
/// main thread drops its reference to pool A at once, so A's last reference goes away
/// in one of the jobs, on a worker of A (threads detached) or of B (that worker waits
/// for A's workers, which wait for A's spawned jobs), while B's jobs keep spawning
/// into A. Every job runs exactly once. (Dropped on any worker, a pool detaches its
/// threads: see `two_pools_dropped_on_each_others_workers_do_not_deadlock`.)
#[test]
fn a_pool_dropped_while_another_pools_jobs_spawn_into_it() {
    fn ping(
        here: Arc<sumac::ThreadPool>,
        there: Arc<sumac::ThreadPool>,
        hops: usize,
        counter: Arc<DropCounter>,
        total: Arc<AtomicUsize>,
    ) {
        if hops == 0 {
            return;
        }
        let token = counter.token();
        here.clone().spawn(move || {
            total.fetch_add(1, Ordering::SeqCst);
            let next_total = Arc::clone(&total);
            ping(there, here, hops - 1, counter, next_total);
            drop(token);
        });
    }
    for _ in 0..10 {
        let counter = Arc::new(DropCounter::new());
        let total = Arc::new(AtomicUsize::new(0));
        let a = Arc::new(pool_with_heartbeat(2, Duration::from_micros(1)));
        let b = Arc::new(pool_with_heartbeat(2, Duration::from_micros(1)));
        for first_in_a in [true, false].repeat(4) {
            let (here, there) = if first_in_a { (&a, &b) } else { (&b, &a) };
            ping(
                Arc::clone(here),
                Arc::clone(there),
                30,
                Arc::clone(&counter),
                Arc::clone(&total),
            );
        }
        let a_alive = Arc::downgrade(&a);
        finishes("dropping pool A", move || drop(a));
        eventually("pool A was never dropped", || a_alive.strong_count() == 0);
        finishes("dropping pool B", move || drop(b));
        eventually("the hops never finished", || {
            total.load(Ordering::SeqCst) == 8 * 30
        });
        eventually("a hop's closure was not dropped", || {
            counter.dropped() == 8 * 30
        });
        assert_eq!(counter.created(), 8 * 30);
    }
}

/// Each of two one-thread pools holds the last reference to the other and drops it on
/// its only worker, at the same time. Had a drop joined the other pool's threads, each
/// worker would wait for the other one, which waits in its own drop: a deadlock. Both
/// drops must return, and both workers must exit afterwards.
#[test]
fn two_pools_dropped_on_each_others_workers_do_not_deadlock() {
    for _ in 0..20 {
        let exits = Arc::new(AtomicUsize::new(0));
        let pool = || {
            let exits = Arc::clone(&exits);
            sumac::ThreadPoolBuilder::new()
                .num_threads(1)
                .exit_handler(move |_| {
                    exits.fetch_add(1, Ordering::SeqCst);
                })
                .build()
                .unwrap()
        };
        let (a, b) = (pool(), pool());
        let both_hold_the_other = Arc::new(std::sync::Barrier::new(2));
        let (dropped, drops) = mpsc::channel::<&'static str>();
        // The job on A's worker receives B, the job on B's worker receives A; each
        // waits until both hold their pool, then drops it.
        let mut handovers = Vec::new();
        for (here, what) in [
            (&a, "B dropped on A's worker"),
            (&b, "A dropped on B's worker"),
        ] {
            let (hand_over, receive) = mpsc::channel::<sumac::ThreadPool>();
            let (hold, dropped) = (Arc::clone(&both_hold_the_other), dropped.clone());
            here.spawn(move || {
                let other = receive.recv().expect("the other pool is handed over");
                hold.wait();
                drop(other);
                let _ = dropped.send(what);
            });
            handovers.push(hand_over);
        }
        handovers[0].send(b).unwrap();
        handovers[1].send(a).unwrap();
        for _ in 0..2 {
            drops
                .recv_timeout(HANG)
                .expect("two pools dropped on each other's workers deadlocked");
        }
        eventually("the detached workers never exited", || {
            exits.load(Ordering::SeqCst) == 2
        });
    }
}

#[test]
fn dropping_a_pool_from_its_own_worker_detaches() {
    let pool = Arc::new(stress_pool(2));
    let (sender, receiver) = std::sync::mpsc::channel();
    let inner = Arc::clone(&pool);
    pool.spawn(move || {
        // The last reference may be dropped here, on one of the pool's own workers.
        drop(inner);
        sender.send(()).unwrap();
    });
    drop(pool);
    receiver
        .recv_timeout(Duration::from_secs(10))
        .expect("the spawned job ran");
}

// ---------------------------------------------------------------------------------------
// use_current_thread.

/// A pool whose worker 0 is this thread, dropped on this thread while a spawned job
/// (running on worker 1) still runs and then calls `spawn_broadcast`: the broadcast
/// job addressed to worker 0 must run, or at least its closure must be dropped.
#[test]
fn use_current_thread_pool_dropped_here_while_a_spawned_job_broadcasts() {
    let done = watchdog("dropping a use_current_thread pool on its own thread");
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(2)
        .use_current_thread()
        .build()
        .unwrap();
    let counter = Arc::new(DropCounter::new());
    let ran = Arc::new(Mutex::new(Vec::new()));
    let (started, is_started) = mpsc::channel();
    let (job_counter, job_ran) = (Arc::clone(&counter), Arc::clone(&ran));
    // Spawned from a thread outside the pool: the job waits in the shared queue, and
    // worker 1 (the only one looking now) takes it.
    pool.spawn(move || {
        started.send(()).unwrap();
        // Let the drop on the main thread get past worker 0's last jobs.
        thread::sleep(Duration::from_millis(100));
        let token = job_counter.token();
        sumac::spawn_broadcast(move |ctx| {
            let _ = &token;
            job_ran.lock().unwrap().push(ctx.index());
        });
    });
    is_started.recv().unwrap();
    drop(pool);
    done.send(()).unwrap();
    eventually("a spawn_broadcast closure was never dropped", || {
        counter.dropped() == 1
    });
    let mut ran = ran.lock().unwrap().clone();
    ran.sort();
    assert_eq!(ran, [0, 1], "spawn_broadcast did not run on every worker");
}

/// As above with a blocking `broadcast` from the spawned job: it must return (worker 0
/// runs its part), or the pool's drop waits forever for worker 1.
#[test]
fn use_current_thread_pool_dropped_here_while_a_spawned_job_blocks_in_broadcast() {
    let done = watchdog("dropping a use_current_thread pool during a broadcast");
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(2)
        .use_current_thread()
        .build()
        .unwrap();
    let (started, is_started) = mpsc::channel();
    let (sender, results) = mpsc::channel();
    pool.spawn(move || {
        started.send(()).unwrap();
        thread::sleep(Duration::from_millis(100));
        let _ = sender.send(sumac::broadcast(|ctx| ctx.index()));
    });
    is_started.recv().unwrap();
    drop(pool);
    done.send(()).unwrap();
    assert_eq!(results.recv().unwrap(), [0, 1]);
}

// ---------------------------------------------------------------------------------------
// Stress: many small pools dropped concurrently with pending spawned work.

/// Threads each build and drop many small pools on a 1 µs heartbeat, with spawned jobs
/// of every kind pending (some blocking until after the drop started, some panicking
/// into the panic handler): every closure runs or is dropped exactly once, and no drop
/// hangs.
#[test]
fn many_small_pools_dropped_concurrently_with_pending_spawns() {
    let counter = Arc::new(DropCounter::new());
    let panics = Arc::new(AtomicUsize::new(0));
    let ran = Arc::new(AtomicUsize::new(0));
    let expected = Arc::new(AtomicUsize::new(0));
    let (counter2, panics2, ran2, expected2) = (
        Arc::clone(&counter),
        Arc::clone(&panics),
        Arc::clone(&ran),
        Arc::clone(&expected),
    );
    finishes("dropping many small pools", move || {
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let (counter, panics, ran, expected) = (
                    Arc::clone(&counter2),
                    Arc::clone(&panics2),
                    Arc::clone(&ran2),
                    Arc::clone(&expected2),
                );
                thread::spawn(move || {
                    for round in 0..25 {
                        let handler_panics = Arc::clone(&panics);
                        let threads = 1 + (t + round) % 3;
                        let pool = sumac::ThreadPoolBuilder::new()
                            .num_threads(threads)
                            .heartbeat_interval(Duration::from_micros(1))
                            .panic_handler(move |_| {
                                handler_panics.fetch_add(1, Ordering::SeqCst);
                            })
                            .build()
                            .unwrap();
                        let dropping = Arc::new(AtomicBool::new(false));
                        for i in 0..6 {
                            let token = counter.token();
                            let ran = Arc::clone(&ran);
                            let dropping = Arc::clone(&dropping);
                            let counter = Arc::clone(&counter);
                            match i {
                                0 => {
                                    expected.fetch_add(1, Ordering::SeqCst);
                                    pool.spawn(move || {
                                        // Blocks until the drop started.
                                        while !dropping.load(Ordering::SeqCst) {
                                            thread::yield_now();
                                        }
                                        let inner = counter.token();
                                        sumac::spawn_broadcast(move |_| {
                                            let _ = &inner;
                                        });
                                        ran.fetch_add(1, Ordering::SeqCst);
                                        drop(token);
                                    })
                                }
                                1 => {
                                    expected.fetch_add(1, Ordering::SeqCst);
                                    pool.spawn_fifo(move || {
                                        let _ = &token;
                                        ran.fetch_add(1, Ordering::SeqCst);
                                        panic!("into the panic handler");
                                    })
                                }
                                2 => {
                                    expected.fetch_add(threads, Ordering::SeqCst);
                                    pool.spawn_broadcast(move |_| {
                                        let _ = &token;
                                        ran.fetch_add(1, Ordering::SeqCst);
                                    })
                                }
                                _ => {
                                    expected.fetch_add(1, Ordering::SeqCst);
                                    pool.spawn(move || {
                                        sumac::scope(|s| {
                                            s.spawn(|_| {
                                                fib(6);
                                            });
                                        });
                                        let inner = counter.token();
                                        sumac::spawn(move || drop(inner));
                                        ran.fetch_add(1, Ordering::SeqCst);
                                        drop(token);
                                    })
                                }
                            }
                        }
                        dropping.store(true, Ordering::SeqCst);
                        drop(pool);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
    });
    assert_eq!(ran.load(Ordering::SeqCst), expected.load(Ordering::SeqCst));
    assert_eq!(panics.load(Ordering::SeqCst), 4 * 25);
    assert_eq!(counter.created(), counter.dropped(), "a closure was leaked");
}

/// After spawned jobs finished, the pool goes back to sleep (their count is back to
/// the pool's own unit), and dropping it with nothing spawned returns.
#[test]
fn a_pool_whose_spawns_finished_sleeps_and_drops() {
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let (sender, receiver) = mpsc::channel();
    for _ in 0..30 {
        let sender = sender.clone();
        pool.spawn(move || sender.send(fib(10)).unwrap());
    }
    pool.spawn_broadcast(|_| ());
    assert_eq!(receiver.iter().take(30).count(), 30);
    eventually(
        "the workers never all slept after their spawned jobs",
        || {
            pool.stats()
                .workers
                .iter()
                .all(|w| w.sleeps == w.wakeups + 1)
        },
    );
    finishes("dropping an idle pool", move || drop(pool));
}

/// Exit handlers that call `spawn_broadcast`: the job addressed to a worker that has
/// already exited never runs; the workers still running must not wait for it (a hung
/// drop). Every worker's own part runs (its exiting worker runs what is pending).
#[test]
fn spawn_broadcast_from_exit_handlers_does_not_hang_the_drop() {
    for round in 0..30 {
        let ran = Arc::new(AtomicUsize::new(0));
        let handler_ran = Arc::clone(&ran);
        let pool = sumac::ThreadPoolBuilder::new()
            .num_threads(3)
            .heartbeat_interval(Duration::from_micros(1))
            .exit_handler(move |index| {
                let ran = Arc::clone(&handler_ran);
                sumac::spawn_broadcast(move |ctx| {
                    if ctx.index() == index {
                        ran.fetch_add(1, Ordering::SeqCst);
                    }
                });
            })
            .build()
            .unwrap();
        pool.install(|| fib(10));
        finishes(&format!("round {round}: dropping the pool"), move || {
            drop(pool)
        });
        assert_eq!(
            ran.load(Ordering::SeqCst),
            3,
            "round {round}: an exiting worker did not run its own broadcast job"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Pool shutdown while a spawned job still runs.
//
// Dropping the pool lets a worker exit as soon as it sees nothing queued, even though a
// spawned ('static) job still runs on another worker. A `spawn_broadcast` or `broadcast`
// made by that job afterwards puts a job in the exited worker's inbox, where nobody ever
// runs it: the job (and its closure) is lost, and `broadcast` waits forever.

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
// Drops that must neither lose queued work nor wait for what never comes.

/// The heartbeat thread waits out its interval on a condition variable that dropping
/// the pool signals: with an hour-long interval, a drop that slept through it would
/// hang (the 60-second limit only turns such a hang into a failure).
#[test]
fn dropping_a_pool_does_not_wait_out_a_long_heartbeat() {
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .heartbeat_interval(Duration::from_secs(3600))
        .build()
        .unwrap();
    // One worker busy and one idle: the heartbeat thread starts waiting out an interval.
    pool.install(|| std::thread::sleep(Duration::from_millis(20)));
    drop_within_a_minute(pool, "dropping the pool waited for its heartbeat interval");
}

#[test]
fn dropping_a_pool_runs_queued_spawns_first() {
    let count = Arc::new(AtomicUsize::new(0));
    let pool = stress_pool(2);
    for _ in 0..100 {
        let count = Arc::clone(&count);
        pool.spawn(move || {
            fib(10);
            count.fetch_add(1, Ordering::SeqCst);
        });
    }
    drop(pool);
    assert_eq!(count.load(Ordering::SeqCst), 100);
}
