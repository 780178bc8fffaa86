//! `scope`, `Scope::spawn` and `spawn`: completion, borrowing, panics, leaks.
use crate::common;

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use common::{
    assert_both_workers_serve, fib, fib_seq, finishes, stress_pool, two_worker_pool, Bomb,
    DropCounter,
};

#[test]
fn scope_waits_for_all_spawned_work_transitively() {
    let pool = stress_pool(4);
    for _ in 0..50 {
        let count = AtomicUsize::new(0);
        pool.scope(|s| {
            for _ in 0..10 {
                s.spawn(|s| {
                    count.fetch_add(1, Ordering::SeqCst);
                    for _ in 0..10 {
                        s.spawn(|_| {
                            fib(8);
                            count.fetch_add(1, Ordering::SeqCst);
                        });
                    }
                });
            }
        });
        assert_eq!(count.load(Ordering::SeqCst), 110);
    }
}

#[test]
fn scope_spawns_borrow_and_mutate_disjoint_data() {
    let pool = stress_pool(3);
    let mut chunks = vec![vec![0u64; 64]; 16];
    pool.scope(|s| {
        for (i, chunk) in chunks.iter_mut().enumerate() {
            s.spawn(move |_| chunk.iter_mut().for_each(|x| *x = i as u64));
        }
    });
    for (i, chunk) in chunks.iter().enumerate() {
        assert!(chunk.iter().all(|&x| x == i as u64));
    }
}

#[test]
fn scope_returns_the_body_result_and_works_outside_pools() {
    let value = sumac::scope(|s| {
        s.spawn(|_| {
            fib(10);
        });
        42
    });
    assert_eq!(value, 42);
}

#[test]
fn scope_inside_join_inside_scope() {
    let pool = stress_pool(4);
    let total = AtomicUsize::new(0);
    pool.scope(|outer| {
        for _ in 0..8 {
            outer.spawn(|_| {
                let (a, b) = sumac::join(
                    || {
                        sumac::scope(|inner| {
                            for _ in 0..4 {
                                inner.spawn(|_| {
                                    total.fetch_add(1, Ordering::SeqCst);
                                });
                            }
                        });
                        1
                    },
                    || fib(12),
                );
                assert_eq!(a + b, 1 + fib_seq(12));
            });
        }
    });
    assert_eq!(total.load(Ordering::SeqCst), 32);
}

#[test]
fn spawn_from_a_foreign_thread_inside_a_scope() {
    let pool = stress_pool(2);
    let count = AtomicUsize::new(0);
    pool.scope(|s| {
        std::thread::scope(|threads| {
            threads.spawn(|| {
                for _ in 0..10 {
                    s.spawn(|_| {
                        count.fetch_add(1, Ordering::SeqCst);
                    });
                }
            });
        });
    });
    assert_eq!(count.load(Ordering::SeqCst), 10);
}

#[test]
fn scope_reraises_a_spawned_panic_after_all_work_finished() {
    let pool = stress_pool(4);
    for _ in 0..50 {
        let finished = AtomicUsize::new(0);
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.scope(|s| {
                s.spawn(|_| panic!("spawned"));
                for _ in 0..8 {
                    s.spawn(|_| {
                        fib(12);
                        finished.fetch_add(1, Ordering::SeqCst);
                    });
                }
            })
        }));
        assert!(result.is_err());
        assert_eq!(
            finished.load(Ordering::SeqCst),
            8,
            "every other job finished before the re-raise"
        );
    }
    assert_eq!(pool.install(|| fib(15)), fib_seq(15));
}

#[test]
fn scope_body_panic_wins_and_spawned_work_still_completes() {
    let pool = stress_pool(4);
    let finished = AtomicUsize::new(0);
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.scope(|s| {
            for _ in 0..8 {
                s.spawn(|_| {
                    fib(12);
                    finished.fetch_add(1, Ordering::SeqCst);
                });
            }
            s.spawn(|_| panic!("spawned"));
            panic!("body");
        })
    }));
    let payload = result.unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"body"));
    assert_eq!(finished.load(Ordering::SeqCst), 8);
}

#[test]
fn scope_jobs_are_dropped_exactly_once() {
    let pool = stress_pool(4);
    let counter = DropCounter::new();
    for _ in 0..20 {
        pool.scope(|s| {
            for _ in 0..50 {
                let token = counter.token();
                s.spawn(move |s| {
                    let inner = token;
                    s.spawn(move |_| drop(inner));
                });
            }
        });
    }
    assert_eq!(counter.created(), 1000);
    assert_eq!(counter.dropped(), 1000);
}

#[test]
fn pool_spawn_runs_and_reports_panics_to_the_handler() {
    let panics = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&panics);
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(3)
        .heartbeat_interval(std::time::Duration::from_micros(1))
        .panic_handler(move |payload| {
            assert_eq!(payload.downcast_ref::<&str>(), Some(&"spawned panic"));
            seen.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    let (sender, receiver) = mpsc::channel();
    for i in 0..20 {
        let sender = sender.clone();
        pool.spawn(move || {
            if i % 4 == 0 {
                panic!("spawned panic");
            }
            sender.send(i).unwrap();
        });
    }
    drop(sender);
    let mut received: Vec<i32> = receiver.iter().collect();
    received.sort_unstable();
    assert_eq!(received, (0..20).filter(|i| i % 4 != 0).collect::<Vec<_>>());
    drop(pool); // joins the workers after the queued work ran
    assert_eq!(panics.load(Ordering::SeqCst), 5);
}

#[test]
fn global_spawn_runs() {
    let (sender, receiver) = mpsc::channel();
    for i in 0..10 {
        let sender = sender.clone();
        sumac::spawn(move || sender.send(i).unwrap());
    }
    drop(sender);
    let mut received: Vec<i32> = receiver.iter().collect();
    received.sort_unstable();
    assert_eq!(received, (0..10).collect::<Vec<_>>());
}

#[test]
fn spawn_inside_a_worker_goes_on_its_list_and_still_runs() {
    let pool = stress_pool(2);
    let (sender, receiver) = mpsc::channel();
    pool.install(|| {
        for i in 0..100 {
            let sender = sender.clone();
            pool.spawn(move || sender.send(i).unwrap());
        }
    });
    drop(sender);
    assert_eq!(receiver.iter().count(), 100);
}

/// `in_place_scope` from a thread outside every pool: the body runs on the caller, the
/// spawned jobs on the pool's workers, and the caller blocks on a latch until the last
/// job (transitively) finished. Many rounds on a 1 µs heartbeat, so the last job and
/// the body's own completion race in both orders.
#[test]
fn in_place_scope_from_outside_runs_the_body_here_and_waits_for_every_job() {
    let pool = stress_pool(4);
    let caller = std::thread::current().id();
    for round in 0..200 {
        let count = AtomicUsize::new(0);
        let on_workers = AtomicUsize::new(0);
        let local = std::cell::Cell::new(0); // not `Sync`: the body must stay on this thread
        pool.in_place_scope(|s| {
            assert_eq!(std::thread::current().id(), caller);
            for _ in 0..round % 7 {
                local.set(local.get() + 1);
                s.spawn(|s| {
                    if sumac::current_thread_index().is_some() {
                        on_workers.fetch_add(1, Ordering::SeqCst);
                    }
                    s.spawn(|_| {
                        fib(6);
                        count.fetch_add(1, Ordering::SeqCst);
                    });
                    count.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
        assert_eq!(count.load(Ordering::SeqCst), 2 * (round % 7));
        assert_eq!(on_workers.load(Ordering::SeqCst), round % 7);
        assert_eq!(local.get(), round % 7);
    }
}

#[test]
fn in_place_scope_reraises_after_all_work_finished() {
    let pool = stress_pool(3);
    for _ in 0..20 {
        let finished = AtomicUsize::new(0);
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.in_place_scope(|s| {
                s.spawn(|_| panic!("spawned"));
                for _ in 0..6 {
                    s.spawn(|_| {
                        fib(12);
                        finished.fetch_add(1, Ordering::SeqCst);
                    });
                }
            })
        }));
        assert_eq!(result.unwrap_err().downcast_ref::<&str>(), Some(&"spawned"));
        assert_eq!(finished.load(Ordering::SeqCst), 6);
    }
    // The free function, from outside any pool, uses the global pool.
    let value = sumac::in_place_scope(|s| {
        s.spawn(|_| assert!(sumac::current_thread_index().is_some()));
        7
    });
    assert_eq!(value, 7);
}

/// A worker of one pool owns an `in_place_scope` whose jobs run on another pool: it
/// waits by working through its own pool and is woken through its own queue.
#[test]
fn in_place_scope_across_pools() {
    let outer = stress_pool(2);
    let inner = sumac::ThreadPoolBuilder::new()
        .num_threads(3)
        .heartbeat_interval(std::time::Duration::from_micros(1))
        .thread_name(|i| format!("inner-{i}"))
        .build()
        .unwrap();
    for _ in 0..50 {
        let names = std::sync::Mutex::new(Vec::new());
        outer.install(|| {
            let (a, b) = sumac::join(
                || {
                    inner.in_place_scope(|s| {
                        for _ in 0..4 {
                            s.spawn(|_| {
                                let name = std::thread::current().name().map(String::from);
                                names.lock().unwrap().push(name);
                            });
                        }
                    })
                },
                || fib(10),
            );
            assert_eq!((a, b), ((), fib_seq(10)));
        });
        let names = names.into_inner().unwrap();
        assert_eq!(names.len(), 4);
        assert!(names
            .iter()
            .all(|n| n.as_deref().is_some_and(|n| n.starts_with("inner-"))));
    }
}

/// With one worker, FIFO jobs run in the order they were spawned: breadth first.
#[test]
fn scope_fifo_runs_breadth_first_on_one_worker() {
    let pool = stress_pool(1);
    let order = std::sync::Mutex::new(Vec::new());
    pool.scope_fifo(|s| {
        for a in 0..3 {
            let order = &order;
            s.spawn_fifo(move |s| {
                order.lock().unwrap().push(a);
                for b in 0..2 {
                    s.spawn_fifo(move |_| order.lock().unwrap().push(10 * (a + 1) + b));
                }
            });
        }
    });
    assert_eq!(
        order.into_inner().unwrap(),
        [0, 1, 2, 10, 11, 20, 21, 30, 31]
    );
    // spawn_fifo outside a scope keeps the order too.
    let (sender, receiver) = mpsc::channel();
    for i in 0..20 {
        let sender = sender.clone();
        pool.spawn_fifo(move || sender.send(i).unwrap());
    }
    drop(sender);
    assert!(receiver.iter().eq(0..20));
}

#[test]
fn scope_fifo_waits_for_everything_and_reraises_panics() {
    let pool = stress_pool(4);
    for _ in 0..50 {
        let count = AtomicUsize::new(0);
        pool.scope_fifo(|s| {
            for _ in 0..10 {
                s.spawn_fifo(|s| {
                    count.fetch_add(1, Ordering::SeqCst);
                    for _ in 0..10 {
                        s.spawn_fifo(|_| {
                            fib(8);
                            count.fetch_add(1, Ordering::SeqCst);
                        });
                    }
                });
            }
        });
        assert_eq!(count.load(Ordering::SeqCst), 110);
    }
    let finished = AtomicUsize::new(0);
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        sumac::in_place_scope_fifo(|s| {
            s.spawn_fifo(|_| panic!("fifo job"));
            for _ in 0..6 {
                s.spawn_fifo(|_| {
                    fib(12);
                    finished.fetch_add(1, Ordering::SeqCst);
                });
            }
        })
    }));
    assert_eq!(
        result.unwrap_err().downcast_ref::<&str>(),
        Some(&"fifo job")
    );
    assert_eq!(finished.load(Ordering::SeqCst), 6);
}

// ---------------------------------------------------------------------------------------
// A panic that escapes a job from a destructor (see `broadcast.rs`): the surplus payload
// of a scope's second panic is dropped inside the job.

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

/// Spawned jobs travel through every path of the spawn deques on 1 µs heartbeats: a
/// member's own LIFO and FIFO deques (popped by the owner, stolen by the others), the
/// injector (spawns from a thread outside the pool), and a caller's seat (spawns from a
/// scope run by a caller taking part). Each runs exactly once and drops what it
/// captured exactly once.
#[test]
fn spawned_jobs_on_every_deque_path_run_once_and_drop_their_captures_once() {
    for threads in [1, 2, 4] {
        let pool = stress_pool(threads);
        let counter = DropCounter::new();
        let runs = Arc::new(AtomicUsize::new(0));
        let expected = finishes("spawn deque paths", {
            let pool = Arc::new(pool);
            let runs = Arc::clone(&runs);
            let tokens: Vec<_> = (0..4 * 300).map(|_| counter.token()).collect();
            move || {
                let mut tokens = tokens.into_iter();
                // From a caller taking part: the seat's deques.
                pool.scope(|s| {
                    for round in 0..100 {
                        let (token, runs) = (tokens.next().unwrap(), Arc::clone(&runs));
                        s.spawn(move |s| {
                            runs.fetch_add(1, Ordering::Relaxed);
                            drop(token);
                            // Nested, from a worker or the caller: own deques.
                            let inner = if round % 2 == 0 { 1 } else { 0 };
                            for _ in 0..inner {
                                s.spawn(|_| ());
                            }
                        });
                    }
                });
                pool.scope_fifo(|s| {
                    for _ in 0..100 {
                        let (token, runs) = (tokens.next().unwrap(), Arc::clone(&runs));
                        s.spawn_fifo(move |_| {
                            runs.fetch_add(1, Ordering::Relaxed);
                            drop(token);
                        });
                    }
                });
                // From inside the pool: a worker's own deques, stolen by the others.
                pool.install(|| {
                    sumac::scope(|s| {
                        for _ in 0..100 {
                            let (token, runs) = (tokens.next().unwrap(), Arc::clone(&runs));
                            s.spawn(move |_| {
                                runs.fetch_add(1, Ordering::Relaxed);
                                drop(token);
                            });
                        }
                    })
                });
                // From a thread outside the pool, not in a call: the injector.
                let (done, wait) = mpsc::channel();
                for token in tokens {
                    let (done, runs) = (done.clone(), Arc::clone(&runs));
                    pool.spawn(move || {
                        runs.fetch_add(1, Ordering::Relaxed);
                        drop(token);
                        done.send(()).unwrap();
                    });
                }
                drop(done);
                wait.iter().count() + 300
            }
        });
        assert_eq!(expected, 4 * 300, "{threads} threads");
        assert_eq!(runs.load(Ordering::Relaxed), 4 * 300, "{threads} threads");
        assert_eq!(counter.dropped(), 4 * 300, "{threads} threads");
    }
}

/// A worker that finished a scope's job owes the scope's count its decrement until it
/// runs something else; a pool `spawn` it runs next must not keep the scope's owner
/// waiting. Here that job waits for the scope to end (giving up after a while, so a
/// regression fails instead of hanging).
#[test]
fn a_worker_settles_a_scope_count_it_owes_before_running_a_spawned_job() {
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(1)
        .callers_take_part(false)
        .build()
        .unwrap();
    let scope_ended = Arc::new(AtomicBool::new(false));
    let (report, outcome) = mpsc::channel();
    // The owner is this thread, outside the pool: the scope's one job runs on the worker,
    // and spawns the waiting job onto the worker's own deque.
    pool.in_place_scope(|s| {
        s.spawn(|_| {
            let (scope_ended, report) = (Arc::clone(&scope_ended), report.clone());
            sumac::spawn(move || {
                let start = Instant::now();
                while !scope_ended.load(Ordering::Acquire) {
                    if start.elapsed() > Duration::from_secs(5) {
                        report
                            .send("the scope ended only after the job gave up")
                            .unwrap();
                        return;
                    }
                    std::thread::yield_now();
                }
                report.send("the scope ended while the job waited").unwrap();
            });
        });
    });
    scope_ended.store(true, Ordering::Release);
    assert_eq!(
        outcome.recv().unwrap(),
        "the scope ended while the job waited"
    );
}

/// Jobs of many scopes interleave on the same members (each job of an outer scope opens
/// an inner scope, whose jobs spawn more inner jobs and pool jobs), with a 1 µs
/// heartbeat: each scope returns only after exactly its own jobs ran, every job runs
/// once and every closure is dropped once (the members' owed scope counts are settled
/// in the right scope, and never early).
#[test]
fn interleaved_scopes_each_wait_for_exactly_their_own_jobs() {
    for threads in [1, 2, 4] {
        let pool = stress_pool(threads);
        let drops = DropCounter::new();
        let pool_jobs = Arc::new(AtomicUsize::new(0));
        for _ in 0..20 {
            let outer_ran = AtomicUsize::new(0);
            pool.install(|| {
                sumac::scope(|outer| {
                    for _ in 0..8 {
                        let token = drops.token();
                        let (outer_ran, pool_jobs, drops) = (&outer_ran, &pool_jobs, &drops);
                        outer.spawn(move |_| {
                            let _token = token;
                            let inner_ran = AtomicUsize::new(0);
                            sumac::scope(|inner| {
                                for _ in 0..16 {
                                    let token = drops.token();
                                    let inner_ran = &inner_ran;
                                    inner.spawn(move |inner| {
                                        let _token = token;
                                        let token = drops.token();
                                        inner.spawn(move |_| {
                                            let _token = token;
                                            inner_ran.fetch_add(1, Ordering::Relaxed);
                                        });
                                        let pool_jobs = Arc::clone(pool_jobs);
                                        sumac::spawn(move || {
                                            pool_jobs.fetch_add(1, Ordering::Relaxed);
                                        });
                                        inner_ran.fetch_add(1, Ordering::Relaxed);
                                    });
                                }
                            });
                            assert_eq!(inner_ran.load(Ordering::Relaxed), 32, "inner scope");
                            outer_ran.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                });
            });
            assert_eq!(outer_ran.load(Ordering::Relaxed), 8, "outer scope");
        }
        drop(pool); // waits for the pool jobs
        assert_eq!(pool_jobs.load(Ordering::Relaxed), 20 * 8 * 16);
        let created = drops.created.load(Ordering::SeqCst);
        assert_eq!(created, 20 * 8 * (1 + 16 * 2));
        assert_eq!(drops.dropped.load(Ordering::SeqCst), created);
        pool_jobs.store(0, Ordering::Relaxed);
    }
}
