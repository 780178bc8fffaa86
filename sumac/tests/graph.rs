//! Task graphs (`sumac::graph`): every rule of the module, on pools with a 1 µs heartbeat.
//! Random DAGs against a sequential topological run, exactly-once and after-all-
//! dependencies checks, panics at every position, drop counts of tasks that never ran,
//! capacity edges, typed errors for every bad input, channels, waits, cancel and re-runs.
mod common;

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::{finishes, panic_message, stress_pool, stress_pools, DropCounter, IdLedger};
use proptest::prelude::*;
use sumac::graph::{
    self, Before, Capacity, Graph, GraphBuildError, GraphFull, Task, TaskError, TaskGraph, TaskId,
    WaitError,
};
use sumac::prelude::*;

fn failure(result: Result<(), WaitError>) -> graph::Failure {
    match result {
        Err(WaitError::Failed(failure)) => failure,
        other => panic!("expected a failure, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// Random DAGs against a sequential topological run
// ---------------------------------------------------------------------------------------

/// A random DAG: task j depends on some tasks i < j (edges from `seed`).
fn random_dag(n: usize, density: u32, seed: u64) -> Vec<Vec<usize>> {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..n)
        .map(|j| {
            (0..j)
                .filter(|_| (next() % 100) < density as u64)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Each task's value: a hash of its index and its dependencies' values.
fn value_of(j: usize, deps: impl Iterator<Item = u64>) -> u64 {
    deps.fold(j as u64 * 0x9E37_79B9 + 1, |acc, v| {
        acc.rotate_left(5) ^ v.wrapping_mul(0x100_0000_01B3)
    })
}

fn sequential(dag: &[Vec<usize>]) -> Vec<u64> {
    let mut values = vec![0; dag.len()];
    for j in 0..dag.len() {
        values[j] = value_of(j, dag[j].iter().map(|&i| values[i]));
    }
    values
}

/// How [`parallel`] makes its tasks.
#[derive(Clone, Copy, Debug)]
enum Creation {
    /// One at a time on two pool channels, then connected.
    Single,
    /// In one batch, then connected.
    Batch,
    /// In linked batches of `chunk` tasks (dependencies inside a chunk by position, on
    /// earlier chunks by id), readied by the batch or afterwards.
    Linked { chunk: usize, ready: bool },
}

/// Runs `dag` as a graph on `pool`, made as `creation` says and (unless linked batches
/// readied them) readied in a scrambled order. Each task checks that all its dependencies
/// finished before it started and records its runs.
fn parallel(
    pool: &sumac::ThreadPool,
    dag: &[Vec<usize>],
    creation: Creation,
    seed: u64,
) -> (Vec<u64>, Vec<usize>) {
    let n = dag.len();
    let values: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let runs: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
    let links: usize = dag.iter().map(Vec::len).sum();
    graph::TaskGraph::builder()
        .max_tasks(n.max(1))
        .max_dependencies(links.max(1))
        .channels(2)
        .pool(pool)
        .scope(|g| {
            let (values, runs) = (&values, &runs);
            let task = |j: usize| {
                move |_: &Task<'_, '_>| {
                    let deps = dag[j].iter().map(|&i| {
                        let v = values[i].load(Ordering::Acquire);
                        assert_ne!(v, 0, "task {j} ran before its dependency {i}");
                        v
                    });
                    values[j].store(value_of(j, deps), Ordering::Release);
                    runs[j].fetch_add(1, Ordering::Relaxed);
                }
            };
            let ids: Vec<TaskId> = match creation {
                Creation::Batch => g.create_batch((0..n).map(task)).unwrap(),
                Creation::Single => (0..n)
                    .map(|j| g.create_on(g.channel(j % 2).unwrap(), task(j)).unwrap())
                    .collect(),
                Creation::Linked { chunk, ready } => {
                    let mut ids = Vec::new();
                    for start in (0..n).step_by(chunk) {
                        let end = (start + chunk).min(n);
                        let made = &ids[..start];
                        let tasks = (start..end).map(|j| {
                            let before: Vec<Before> = dag[j]
                                .iter()
                                .map(|&i| match i.checked_sub(start) {
                                    Some(k) => Before::InBatch(k),
                                    None => Before::Task(made[i]),
                                })
                                .collect();
                            (task(j), before)
                        });
                        let mut batch = Vec::new();
                        let channel = g.channel(start / chunk % 2).unwrap();
                        g.create_linked_batch_into(channel, tasks, ready, &mut batch)
                            .unwrap();
                        ids.extend(batch);
                    }
                    if ready {
                        return;
                    }
                    ids
                }
            };
            if !matches!(creation, Creation::Linked { .. }) {
                for (j, deps) in dag.iter().enumerate() {
                    let before: Vec<TaskId> = deps.iter().map(|&i| ids[i]).collect();
                    g.add_dependencies(ids[j], &before).unwrap();
                }
            }
            let mut order = ids.clone();
            let rotate = (seed as usize) % n.max(1);
            order.rotate_left(rotate);
            if seed % 2 == 0 {
                order.reverse();
            }
            for chunk in order.chunks(7) {
                g.ready(chunk).unwrap();
            }
        })
        .unwrap()
        .unwrap();
    (
        values.iter().map(|v| v.load(Ordering::Relaxed)).collect(),
        runs.iter().map(|r| r.load(Ordering::Relaxed)).collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_dags_compute_what_a_sequential_topological_run_computes(
        n in 1usize..300, density in 0u32..30, seed in any::<u64>(), mode in 0u8..4
    ) {
        let dag = random_dag(n, density, seed);
        let expected = sequential(&dag);
        let chunk = 1 + (seed >> 8) as usize % 40;
        let creation = match mode {
            0 => Creation::Single,
            1 => Creation::Batch,
            m => Creation::Linked { chunk, ready: m == 2 },
        };
        for pool in stress_pools() {
            let (values, runs) = parallel(pool, &dag, creation, seed);
            prop_assert_eq!(&values, &expected);
            prop_assert!(runs.iter().all(|&r| r == 1), "runs: {:?}", runs);
        }
    }
}

#[test]
fn a_large_random_dag_runs_every_task_once_after_its_dependencies() {
    let dag = random_dag(5000, 1, 7);
    let expected = sequential(&dag);
    let creations = [
        Creation::Single,
        Creation::Batch,
        Creation::Linked {
            chunk: 256,
            ready: true,
        },
        Creation::Linked {
            chunk: 97,
            ready: false,
        },
    ];
    for threads in [1, 2, 3] {
        let pool = stress_pool(threads);
        for creation in creations {
            let (values, runs) = parallel(&pool, &dag, creation, 3);
            assert_eq!(values, expected, "{creation:?} on {threads} threads");
            assert!(runs.iter().all(|&r| r == 1), "{creation:?}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Running on the pool, nested parallelism, dynamic graphs
// ---------------------------------------------------------------------------------------

#[test]
fn tasks_run_on_the_pools_workers_and_nest_join_scope_and_parallel_iterators() {
    let pool = stress_pool(2);
    let sums = Mutex::new(Vec::new());
    graph::TaskGraph::builder()
        .pool(&pool)
        .scope(|g| {
            let sums = &sums;
            let ids = g
                .create_batch((0..8u32).map(u64::from).map(|k| {
                    move |_: &Task<'_, '_>| {
                        assert!(sumac::current_thread_index().is_some());
                        assert_eq!(sumac::current_num_threads(), 2);
                        let (a, b) = sumac::join(|| common::fib(12), || common::fib(13));
                        let par: u64 = (0..1000u64).into_par_iter().map(|x| x * k).sum();
                        let mut scoped = 0;
                        sumac::scope(|s| s.spawn(|_| scoped = 1));
                        sums.lock().unwrap().push(a + b + par + scoped);
                    }
                }))
                .unwrap();
            g.ready(&ids).unwrap();
        })
        .unwrap()
        .unwrap();
    let mut sums = sums.into_inner().unwrap();
    sums.sort_unstable();
    let expected: Vec<u64> = (0..8u64).map(|k| 377 + 499_500 * k + 1).collect();
    assert_eq!(sums, expected);
}

/// fib(n) as a dynamic graph: the task that adds fib(n-1) and fib(n-2) (returned,
/// readied later) and a node task that, when it runs, makes the two smaller graphs,
/// connects their sum tasks and itself (a continuation of itself) before the sum task,
/// and readies it. Leaves' sums are readied at once, so a dependency often names a task
/// that finished already, its slot perhaps reused.
fn fib_tasks(g: &Graph<'_>, n: u64, out: Arc<AtomicU64>) -> TaskId {
    if n < 2 {
        let leaf = g.create(move |_| out.store(n, Ordering::Release)).unwrap();
        g.ready(&[leaf]).unwrap();
        return leaf;
    }
    let (a, b) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (ca, cb) = (Arc::clone(&a), Arc::clone(&b));
    let sum = g
        .create(move |_| {
            out.store(
                a.load(Ordering::Acquire) + b.load(Ordering::Acquire),
                Ordering::Release,
            )
        })
        .unwrap();
    let node = g
        .create(move |t| {
            let g = t.graph();
            let left = fib_tasks(g, n - 1, ca);
            let right = fib_tasks(g, n - 2, cb);
            g.add_dependencies(sum, &[left, right, t.id()]).unwrap();
            g.ready(&[sum]).unwrap();
        })
        .unwrap();
    g.ready(&[node]).unwrap();
    sum
}

#[test]
fn running_tasks_create_connect_and_ready_subgraphs_and_continuations() {
    for threads in [1, 2, 4] {
        let pool = stress_pool(threads);
        let graph = TaskGraph::builder()
            .max_tasks(4096)
            .max_dependencies(8192)
            .pool(&pool)
            .build()
            .unwrap();
        let out = Arc::new(AtomicU64::new(u64::MAX));
        fib_tasks(&graph, 15, Arc::clone(&out));
        graph.wait_all().unwrap();
        assert_eq!(out.load(Ordering::Acquire), common::fib_seq(15));
        assert_eq!(graph.unfinished(), 0);
    }
}

#[test]
fn a_deep_recursive_subgraph_reuses_its_slots() {
    // 2,000 levels of "make the next level, then finish" in a graph of 4 slots.
    fn level(task: &Task<'_, '_>, left: usize, count: Arc<AtomicUsize>) {
        count.fetch_add(1, Ordering::Relaxed);
        if left > 0 {
            let g = task.graph();
            let next = loop {
                let count = Arc::clone(&count);
                match g.create(move |t| level(t, left - 1, count)) {
                    Ok(id) => break id,
                    Err(_) => std::thread::yield_now(),
                }
            };
            g.ready(&[next]).unwrap();
        }
    }
    let pool = stress_pool(2);
    let graph = TaskGraph::builder()
        .max_tasks(4)
        .pool(&pool)
        .build()
        .unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&count);
    let root = graph.create(move |t| level(t, 2000, c)).unwrap();
    graph.ready(&[root]).unwrap();
    graph.wait_all().unwrap();
    assert_eq!(count.load(Ordering::Relaxed), 2001);
}

#[test]
fn tasks_are_counted_in_the_pools_stats() {
    let pool = stress_pool(2);
    let before = pool.stats();
    graph::TaskGraph::builder()
        .pool(&pool)
        .scope(|g| {
            let ids = g
                .create_batch((0..100).map(|_| |_: &Task<'_, '_>| ()))
                .unwrap();
            g.ready(&ids).unwrap();
        })
        .unwrap()
        .unwrap();
    // Counted as each runner ends: wait for the last one.
    let deadline = std::time::Instant::now() + common::HANG;
    while pool.stats().since(&before).total().graph_tasks < 100 {
        assert!(std::time::Instant::now() < deadline, "runners never ended");
        std::thread::yield_now();
    }
    assert_eq!(pool.stats().since(&before).total().graph_tasks, 100);
}

/// Readies 100 tasks and waits for them inside `pool` (the caller runs them).
fn run_100_tasks_waited_for_inside(pool: &sumac::ThreadPool) {
    pool.install(|| {
        let graph = TaskGraph::builder().pool(pool).build().unwrap();
        let ids = graph
            .create_batch((0..100).map(|_| |_: &Task<'_, 'static>| ()))
            .unwrap();
        graph.ready(&ids).unwrap();
        graph.wait_all().unwrap();
    });
}

#[test]
fn tasks_run_by_a_caller_waiting_in_the_pool_are_counted_in_its_stats() {
    let pool = stress_pool(1);
    let before = pool.stats();
    run_100_tasks_waited_for_inside(&pool);
    assert_eq!(pool.stats().since(&before).total().graph_tasks, 100);
}

#[cfg(feature = "trace")]
#[test]
fn tasks_run_by_a_caller_waiting_in_the_pool_appear_in_its_trace() {
    use sumac::trace::EventKind;
    let pool = stress_pool(1);
    pool.take_trace();
    run_100_tasks_waited_for_inside(&pool);
    let events = pool.take_trace();
    // The pool's one worker is member 0; the caller ran them on its seat.
    assert!(
        events
            .iter()
            .any(|e| e.kind == EventKind::GraphTasksStart && e.worker != 0),
        "{events:?}"
    );
    let of = |kind| events.iter().filter(|e| e.kind == kind).count();
    assert_eq!(
        of(EventKind::GraphTasksStart),
        of(EventKind::GraphTasksEnd),
        "{events:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Channels
// ---------------------------------------------------------------------------------------

#[test]
fn dedicated_channel_tasks_run_only_on_the_thread_that_serves_the_channel() {
    let pool = stress_pool(2);
    let graph = TaskGraph::builder()
        .dedicated_channels(2)
        .pool(&pool)
        .build()
        .unwrap();
    let main = graph.dedicated_channel(0).unwrap();
    let other = graph.dedicated_channel(1).unwrap();
    let here = std::thread::current().id();
    let ran_here = Arc::new(AtomicUsize::new(0));
    let mut ids = Vec::new();
    for _ in 0..50 {
        let ran_here = Arc::clone(&ran_here);
        // Pool tasks feed main-thread tasks.
        let work = graph
            .create(move |_| assert!(sumac::current_thread_index().is_some()))
            .unwrap();
        let show = graph
            .create_on(main, move |_| {
                assert_eq!(std::thread::current().id(), here);
                ran_here.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
        graph.add_dependencies(show, &[work]).unwrap();
        ids.extend([work, show]);
    }
    graph.ready(&ids).unwrap();
    graph.wait_all_serving(main).unwrap();
    assert_eq!(ran_here.load(Ordering::Relaxed), 50);
    // A task on a channel nobody serves waits for a thread that serves it.
    let lonely = graph
        .create_on(other, move |_| {
            assert_eq!(std::thread::current().id(), here)
        })
        .unwrap();
    graph.ready(&[lonely]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(10));
    assert_eq!(graph.unfinished(), 1);
    assert!(graph.execute_one(other).unwrap());
    graph.wait_all().unwrap();
}

#[test]
fn execute_one_and_run_channel_serve_a_channel_from_an_outside_thread() {
    let graph = TaskGraph::builder().dedicated_channels(1).build().unwrap();
    let channel = graph.dedicated_channel(0).unwrap();
    assert!(!graph.execute_one(channel).unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let ids = graph
        .create_batch((0..10).map(|_| {
            let count = Arc::clone(&count);
            move |_: &Task<'_, 'static>| {
                count.fetch_add(1, Ordering::Relaxed);
            }
        }))
        .unwrap();
    // Moved to the dedicated channel by making them there instead:
    graph.ready(&ids).unwrap();
    let mut on_channel = Vec::new();
    for _ in 0..10 {
        let count = Arc::clone(&count);
        on_channel.push(
            graph
                .create_on(channel, move |_| {
                    count.fetch_add(1, Ordering::Relaxed);
                })
                .unwrap(),
        );
    }
    graph.ready(&on_channel).unwrap();
    assert!(graph.execute_one(channel).unwrap());
    assert_eq!(graph.run_channel(channel).unwrap(), 9);
    assert_eq!(graph.run_channel(channel).unwrap(), 0);
    graph.wait_all().unwrap();
    assert_eq!(count.load(Ordering::Relaxed), 20);
}

#[test]
fn a_channel_runs_tasks_readied_by_separate_calls_oldest_first() {
    let graph = TaskGraph::builder().dedicated_channels(1).build().unwrap();
    let channel = graph.dedicated_channel(0).unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    for i in 0..5 {
        let order = Arc::clone(&order);
        let id = graph
            .create_on(channel, move |_| order.lock().unwrap().push(i))
            .unwrap();
        graph.ready(&[id]).unwrap();
    }
    assert!(graph.execute_one(channel).unwrap());
    assert!(graph.execute_one(channel).unwrap());
    assert_eq!(graph.run_channel(channel).unwrap(), 3);
    graph.wait_all().unwrap();
    assert_eq!(*order.lock().unwrap(), [0, 1, 2, 3, 4]);
}

#[test]
fn run_channel_on_a_pool_channel_runs_what_its_tasks_release_on_the_calling_thread() {
    let pool = stress_pool(2);
    // Both workers are held until the chain's first task runs here; from then on they
    // are free to take whatever the pool channel gets.
    let hold = Arc::new(AtomicBool::new(true));
    let held = Arc::new(AtomicUsize::new(0));
    for _ in 0..2 {
        let (hold, held) = (Arc::clone(&hold), Arc::clone(&held));
        pool.spawn(move || {
            held.fetch_add(1, Ordering::SeqCst);
            while hold.load(Ordering::SeqCst) {
                std::hint::spin_loop();
            }
        });
    }
    while held.load(Ordering::SeqCst) < 2 {
        std::thread::yield_now();
    }
    let graph = TaskGraph::builder().pool(&pool).build().unwrap();
    let here = std::thread::current().id();
    let elsewhere = Arc::new(AtomicUsize::new(0));
    let ids = graph
        .create_batch((0..1000).map(|k| {
            let (hold, elsewhere) = (Arc::clone(&hold), Arc::clone(&elsewhere));
            move |_: &Task<'_, 'static>| {
                if k == 0 {
                    hold.store(false, Ordering::SeqCst);
                }
                if std::thread::current().id() != here {
                    elsewhere.fetch_add(1, Ordering::SeqCst);
                }
                // Long enough for a freed worker to look at the channel meanwhile.
                let start = std::time::Instant::now();
                while start.elapsed() < std::time::Duration::from_micros(2) {
                    std::hint::spin_loop();
                }
            }
        }))
        .unwrap();
    for pair in ids.windows(2) {
        graph.add_dependencies(pair[1], &[pair[0]]).unwrap();
    }
    graph.ready(&ids).unwrap();
    assert_eq!(graph.run_channel(graph.default_channel()).unwrap(), 1000);
    graph.wait_all().unwrap();
    assert_eq!(elsewhere.load(Ordering::SeqCst), 0);
}

#[test]
fn tasks_run_by_run_channel_inside_the_pool_are_counted_in_its_stats() {
    let pool = stress_pool(1);
    let before = pool.stats();
    pool.install(|| {
        let graph = TaskGraph::builder().pool(&pool).build().unwrap();
        let ids = graph
            .create_batch((0..100).map(|_| |_: &Task<'_, 'static>| ()))
            .unwrap();
        graph.ready(&ids).unwrap();
        assert_eq!(graph.run_channel(graph.default_channel()).unwrap(), 100);
        graph.wait_all().unwrap();
    });
    assert_eq!(pool.stats().since(&before).total().graph_tasks, 100);
}

/// Runner jobs started while a producer outside a one-thread pool readies `tasks` tasks
/// one at a time, `gap` apart (each runner is a pool job, run by the worker as a shared
/// job).
fn runners_for_tasks_readied_apart(tasks: usize, gap: std::time::Duration) -> u64 {
    let pool = stress_pool(1);
    let graph = graph::TaskGraph::builder()
        .pool(&pool)
        .max_tasks(tasks + 1)
        .build()
        .unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    // A first task starts a runner before counting begins.
    let warm = graph.create(|_: &Task<'_, 'static>| ()).unwrap();
    graph.ready(&[warm]).unwrap();
    let before = pool.stats();
    for _ in 0..tasks {
        let since = std::time::Instant::now();
        while since.elapsed() < gap {
            std::hint::spin_loop();
        }
        let ran = Arc::clone(&ran);
        let id = graph
            .create(move |_: &Task<'_, 'static>| {
                ran.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
        graph.ready(&[id]).unwrap();
    }
    graph.wait_all().unwrap();
    assert_eq!(ran.load(Ordering::Relaxed), tasks);
    pool.stats().since(&before).total().shared_jobs_run
}

#[test]
fn a_runner_waits_out_a_producers_short_gaps_instead_of_ending() {
    // 25 µs apart: well within a runner's linger, so one runner should serve most tasks;
    // a runner per task would mean each gap ended one. A preempted producer (a loaded
    // machine) may end a runner now and then, so the run is tried up to three times.
    const TASKS: usize = 200;
    const MOST_RUNNERS: u64 = (TASKS / 4) as u64;
    let gap = std::time::Duration::from_micros(25);
    let mut counts = Vec::new();
    for _ in 0..3 {
        let runners = runners_for_tasks_readied_apart(TASKS, gap);
        if runners <= MOST_RUNNERS {
            return;
        }
        counts.push(runners);
    }
    panic!("runners for {TASKS} tasks readied 25 µs apart, per try: {counts:?}");
}

#[test]
fn many_producers_on_their_own_channels_feed_the_pool() {
    let pool = stress_pool(2);
    let graph = Arc::new(
        TaskGraph::builder()
            .max_tasks(256)
            .channels(4)
            .pool(&pool)
            .build()
            .unwrap(),
    );
    let count = Arc::new(AtomicUsize::new(0));
    std::thread::scope(|s| {
        for p in 0..4 {
            let (graph, count) = (&graph, &count);
            s.spawn(move || {
                let channel = graph.channel(p).unwrap();
                let mut ids = Vec::new();
                let mut made = 0;
                while made < 5000 {
                    ids.clear();
                    let batch = (0..16).map(|_| {
                        let count = Arc::clone(count);
                        move |_: &Task<'_, 'static>| {
                            count.fetch_add(1, Ordering::Relaxed);
                        }
                    });
                    match graph.create_batch_into(channel, batch, &mut ids) {
                        Ok(()) => {
                            graph.ready(&ids).unwrap();
                            made += 16;
                        }
                        Err(TaskError::Full(_)) => {
                            // Help, as Bikeshed's producers do when the pool is full.
                            if !graph.execute_one(channel).unwrap() {
                                std::thread::yield_now();
                            }
                        }
                        Err(other) => panic!("{other}"),
                    }
                }
            });
        }
    });
    graph.wait_all().unwrap();
    assert_eq!(count.load(Ordering::Relaxed), 4 * 5008);
}

// ---------------------------------------------------------------------------------------
// Waiting
// ---------------------------------------------------------------------------------------

#[test]
fn a_task_waits_for_another_task_even_on_a_one_thread_pool() {
    let pool = stress_pool(1);
    let graph = TaskGraph::builder().pool(&pool).build().unwrap();
    let flag = Arc::new(AtomicBool::new(false));
    let set = {
        let flag = Arc::clone(&flag);
        graph
            .create(move |_| flag.store(true, Ordering::Release))
            .unwrap()
    };
    let waiter = {
        let flag = Arc::clone(&flag);
        graph
            .create(move |task| {
                task.graph().wait(set).unwrap();
                assert!(flag.load(Ordering::Acquire));
            })
            .unwrap()
    };
    // Readied together (readied apart, the waiter could see nothing left to run and
    // report a stall); whichever runs first, the wait must let `set` run.
    graph.ready(&[waiter, set]).unwrap();
    finishes("wait inside a task", move || graph.wait_all().unwrap());
}

#[test]
fn waiting_from_a_worker_and_from_outside_both_see_every_task_finish() {
    let pool = stress_pool(2);
    let graph = Arc::new(TaskGraph::builder().pool(&pool).build().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let id = {
        let count = Arc::clone(&count);
        graph
            .create(move |_| {
                std::thread::sleep(std::time::Duration::from_millis(5));
                count.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap()
    };
    graph.ready(&[id]).unwrap();
    pool.install(|| graph.wait(id).unwrap());
    assert_eq!(count.load(Ordering::Relaxed), 1);
    graph.wait(id).unwrap(); // finished already
    graph.wait_all().unwrap();
}

// ---------------------------------------------------------------------------------------
// Failure: panics at every position, cancel
// ---------------------------------------------------------------------------------------

/// A diamond with a tail (0 -> {1, 2} -> 3 -> 4) plus an independent task 5; task `bad`
/// panics. Its transitive dependents are cancelled, everything else runs.
#[test]
fn a_panic_at_every_position_cancels_exactly_its_transitive_dependents() {
    let deps: [&[usize]; 6] = [&[], &[0], &[0], &[1, 2], &[3], &[]];
    let dependents = |bad: usize| -> Vec<usize> {
        let mut out = [false; 6];
        for j in 0..6 {
            out[j] = deps[j].iter().any(|&i| i == bad || out[i]);
        }
        (0..6).filter(|&j| out[j]).collect()
    };
    for threads in [1, 2] {
        let pool = stress_pool(threads);
        let graph = TaskGraph::builder().pool(&pool).build().unwrap();
        for bad in 0..6 {
            let ran: Arc<Vec<AtomicBool>> =
                Arc::new((0..6).map(|_| AtomicBool::new(false)).collect());
            let ids: Vec<TaskId> = (0..6)
                .map(|j| {
                    let ran = Arc::clone(&ran);
                    graph
                        .create(move |_| {
                            ran[j].store(true, Ordering::Relaxed);
                            if j == bad {
                                panic!("task {j}");
                            }
                        })
                        .unwrap()
                })
                .collect();
            for (j, d) in deps.iter().enumerate() {
                let before: Vec<_> = d.iter().map(|&i| ids[i]).collect();
                graph.add_dependencies(ids[j], &before).unwrap();
            }
            graph.ready(&ids).unwrap();
            let failure = failure(graph.wait_all());
            let (who, payload) = failure.panic.unwrap();
            assert_eq!(who, ids[bad]);
            assert_eq!(panic_message(&*payload), format!("task {bad}"));
            let cancelled = dependents(bad);
            let mut got: Vec<usize> = failure
                .cancelled_ids
                .iter()
                .map(|id| ids.iter().position(|x| x == id).unwrap())
                .collect();
            got.sort_unstable();
            assert_eq!(got, cancelled, "bad = {bad}");
            assert_eq!(failure.cancelled, cancelled.len());
            for j in 0..6 {
                assert_eq!(
                    ran[j].load(Ordering::Relaxed),
                    !cancelled.contains(&j),
                    "task {j}, bad {bad}"
                );
            }
            // Usable afterwards, and the failure was reported once.
            let ok = graph.create(|_| ()).unwrap();
            graph.ready(&[ok]).unwrap();
            graph.wait_all().unwrap();
        }
    }
}

#[test]
fn several_panics_report_the_first_and_count_the_others() {
    let graph = TaskGraph::builder().build().unwrap();
    let ids = graph
        .create_batch((0..5).map(|i| move |_: &Task<'_, 'static>| panic!("p{i}")))
        .unwrap();
    graph.ready(&ids).unwrap();
    let failure = failure(graph.wait_all());
    assert!(failure.panic.is_some());
    assert_eq!(failure.other_panics, 4);
    assert_eq!(failure.cancelled, 0);
}

#[test]
fn a_panicking_destructor_of_a_cancelled_task_is_reported_not_raised() {
    struct Bomb;
    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("bomb");
        }
    }
    let graph = TaskGraph::builder().build().unwrap();
    let bad = graph.create(|_| panic!("first")).unwrap();
    let bomb = Bomb;
    let after = graph
        .create(move |_| {
            let _keep = &bomb;
        })
        .unwrap();
    graph.add_dependencies(after, &[bad]).unwrap();
    graph.ready(&[bad, after]).unwrap();
    let failure = failure(graph.wait_all());
    assert_eq!(failure.cancelled_ids, [after]);
    assert_eq!(failure.other_panics, 1);
}

/// A graph of `slots` slots whose first task panicked and finished, its failure not yet
/// reported, with every thread that ran it done: `(graph, failed task)`.
fn graph_with_an_unreported_failure(slots: usize) -> (TaskGraph<'static>, TaskId) {
    let graph = TaskGraph::builder().max_tasks(slots).build().unwrap();
    let bad = graph.create(|_| panic!("unreported")).unwrap();
    graph.ready(&[bad]).unwrap();
    graph.wait(bad).unwrap();
    // Its slot is published before the runner counts it finished.
    while graph.unfinished() != 0 {
        std::thread::yield_now();
    }
    (graph, bad)
}

#[test]
fn a_dependency_added_later_on_a_failed_task_is_cancelled_though_new_tasks_were_made() {
    let (graph, bad) = graph_with_an_unreported_failure(4);
    // New tasks would take the failed task's slot first if it were free.
    let other = graph.create(|_| ()).unwrap();
    assert_ne!(other.slot(), bad.slot());
    let after = graph
        .create(|_| unreachable!("after a failed task"))
        .unwrap();
    graph.add_dependencies(after, &[bad]).unwrap();
    graph.ready(&[other, after]).unwrap();
    assert_eq!(failure(graph.wait_all()).cancelled_ids, [after]);
}

#[test]
fn a_failed_tasks_slot_goes_to_new_tasks_once_reported_or_when_no_other_is_left() {
    let (graph, bad) = graph_with_an_unreported_failure(4);
    assert!(failure(graph.wait_all()).panic.is_some());
    assert_eq!(graph.create(|_| ()).unwrap().slot(), bad.slot());
    // Unreported, it is the last slot taken: a graph of two slots still makes two tasks.
    let (graph, bad) = graph_with_an_unreported_failure(2);
    let made = graph
        .create_batch((0..2).map(|_| |_: &Task<'_, 'static>| ()))
        .unwrap();
    assert!(made.iter().any(|id| id.slot() == bad.slot()));
    graph.ready(&made).unwrap();
    assert!(failure(graph.wait_all()).panic.is_some());
}

#[test]
fn failure_resume_unwind_re_raises_the_first_panic() {
    let graph = TaskGraph::builder().build().unwrap();
    let bad = graph.create(|_| panic!("again")).unwrap();
    graph.ready(&[bad]).unwrap();
    let failure = failure(graph.wait_all());
    let caught = panic::catch_unwind(AssertUnwindSafe(|| failure.resume_unwind())).unwrap_err();
    assert_eq!(panic_message(&*caught), "again");
}

#[test]
fn cancel_stops_tasks_not_started_and_lets_running_ones_finish() {
    let pool = stress_pool(2);
    let graph = Arc::new(TaskGraph::builder().pool(&pool).build().unwrap());
    let started = Arc::new(AtomicBool::new(false));
    let release = Arc::new(AtomicBool::new(false));
    let finished = Arc::new(AtomicBool::new(false));
    let later_ran = Arc::new(AtomicUsize::new(0));
    let running = {
        let (started, release, finished) = (
            Arc::clone(&started),
            Arc::clone(&release),
            Arc::clone(&finished),
        );
        graph
            .create(move |_| {
                started.store(true, Ordering::SeqCst);
                while !release.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
                finished.store(true, Ordering::SeqCst);
            })
            .unwrap()
    };
    let mut later = Vec::new();
    for _ in 0..20 {
        let later_ran = Arc::clone(&later_ran);
        let id = graph
            .create(move |_| {
                later_ran.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
        graph.add_dependencies(id, &[running]).unwrap();
        later.push(id);
    }
    let never_readied = graph.create(|_| unreachable!()).unwrap();
    graph.ready(&[running]).unwrap();
    graph.ready(&later).unwrap();
    while !started.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    graph.cancel();
    release.store(true, Ordering::SeqCst);
    let failure = failure(graph.wait_all());
    assert!(finished.load(Ordering::SeqCst), "the running task finished");
    assert_eq!(later_ran.load(Ordering::SeqCst), 0);
    assert_eq!(failure.cancelled, 21);
    assert!(failure.cancelled_ids.contains(&never_readied));
    // The graph runs tasks again after the cancellation was reported.
    let again = graph.create(|_| ()).unwrap();
    graph.ready(&[again]).unwrap();
    graph.wait_all().unwrap();
}

// ---------------------------------------------------------------------------------------
// Drops
// ---------------------------------------------------------------------------------------

#[test]
fn every_closure_is_dropped_exactly_once_whether_it_ran_was_cancelled_or_never_readied() {
    let ledger = IdLedger::new(400);
    for threads in [1, 2] {
        let pool = stress_pool(threads);
        let _ = graph::TaskGraph::builder().pool(&pool).scope(|g| {
            let ledger = &ledger;
            let base = (threads - 1) * 200;
            let small: Vec<TaskId> = (0..50)
                .map(|i| {
                    let token = ledger.make(base + i);
                    g.create(move |_| drop(token)).unwrap()
                })
                .collect();
            // Big closures are boxed: dropped too.
            let big: Vec<TaskId> = (50..100)
                .map(|i| {
                    let token = ledger.make(base + i);
                    let padding = [7u64; 16];
                    g.create(move |_| {
                        let _ = (&token, padding);
                    })
                    .unwrap()
                })
                .collect();
            let bad = g.create(|_| panic!("cancel my dependents")).unwrap();
            let cancelled: Vec<TaskId> = (100..150)
                .map(|i| {
                    let token = ledger.make(base + i);
                    let padding = [1u8; 40];
                    let id = g
                        .create(move |_| {
                            let _ = (&token, padding);
                        })
                        .unwrap();
                    g.add_dependencies(id, &[bad]).unwrap();
                    id
                })
                .collect();
            for i in 150..200 {
                let token = ledger.make(base + i);
                g.create(move |_| drop(token)).unwrap(); // never readied
            }
            g.ready(&small).unwrap();
            g.ready(&big).unwrap();
            g.ready(&cancelled).unwrap();
            g.ready(&[bad]).unwrap();
        });
    }
    ledger.assert_balanced();
    assert_eq!(ledger.created(), 400);
}

#[test]
fn dropping_a_graph_drops_its_unrun_and_reusable_tasks() {
    let counter = DropCounter::new();
    {
        let graph = TaskGraph::builder().dedicated_channels(1).build().unwrap();
        for _ in 0..10 {
            let token = counter.token();
            graph.create(move |_| drop(token)).unwrap();
        }
        let token = counter.token();
        graph
            .create_reusable(move |_| {
                let _ = &token;
            })
            .unwrap();
        // Ready on a channel nobody serves.
        let token = counter.token();
        let parked = graph
            .create_on(graph.dedicated_channel(0).unwrap(), move |_| drop(token))
            .unwrap();
        graph.ready(&[parked]).unwrap();
    }
    assert_eq!(counter.created(), 12);
    assert_eq!(counter.dropped(), 12);
}

// ---------------------------------------------------------------------------------------
// Capacity edges and typed errors
// ---------------------------------------------------------------------------------------

#[test]
fn a_full_graph_refuses_whole_batches_and_takes_tasks_again_once_slots_free() {
    let graph = TaskGraph::builder()
        .max_tasks(3)
        .max_dependencies(1)
        .build()
        .unwrap();
    let a = graph.create(|_| ()).unwrap();
    let full = graph
        .create_batch((0..3).map(|_| |_: &Task<'_, 'static>| ()))
        .unwrap_err();
    assert_eq!(
        full,
        GraphFull {
            capacity: Capacity::Tasks,
            requested: 3
        }
    );
    assert_eq!(graph.unfinished(), 1, "a failed batch made nothing");
    let bc = graph
        .create_batch((0..2).map(|_| |_: &Task<'_, 'static>| ()))
        .unwrap();
    assert!(graph.create(|_| ()).is_err());
    // `a`'s first dependency takes the task's own link; two more need two of the one
    // link the graph allocates.
    graph.add_dependencies(a, &[bc[0]]).unwrap();
    assert_eq!(
        graph.add_dependencies(a, &[bc[0], bc[1]]),
        Err(TaskError::Full(GraphFull {
            capacity: Capacity::Dependencies,
            requested: 2
        }))
    );
    graph.add_dependencies(a, &[bc[1]]).unwrap();
    graph.ready(&[a, bc[0], bc[1]]).unwrap();
    graph.wait_all().unwrap();
    // Every slot and the allocated link came back, and no task's own link joined them.
    let again = graph
        .create_batch((0..3).map(|_| |_: &Task<'_, 'static>| ()))
        .unwrap();
    assert_eq!(
        graph.add_dependencies(again[0], &[again[1], again[2], again[1]]),
        Err(TaskError::Full(GraphFull {
            capacity: Capacity::Dependencies,
            requested: 2
        }))
    );
    graph
        .add_dependencies(again[0], &[again[1], again[2]])
        .unwrap();
    graph.ready(&again).unwrap();
    graph.wait_all().unwrap();
}

#[test]
fn after_compact_tasks_take_every_slot_in_index_order_before_freed_ones() {
    let one_at_a_time = |graph: &TaskGraph<'static>| {
        let id = graph.create(|_| ()).unwrap();
        graph.ready(&[id]).unwrap();
        graph.wait_all().unwrap();
        id.slot()
    };
    let mut graph = TaskGraph::builder().max_tasks(16).build().unwrap();
    // Without a compaction, a freed slot comes first.
    let a = one_at_a_time(&graph);
    assert_eq!(one_at_a_time(&graph), a);
    graph.compact().unwrap();
    // Each task finishes (and frees its slot) before the next is made, yet the next
    // takes the following slot rather than the freed one, up to the last slot.
    let slots: Vec<usize> = (0..16).map(|_| one_at_a_time(&graph)).collect();
    assert_eq!(slots, (0..16).collect::<Vec<_>>());
    // Then freed slots are reused.
    let b = one_at_a_time(&graph);
    assert_eq!(one_at_a_time(&graph), b);
    // Links too: once both of a two-link graph's links were taken in order, freed ones
    // serve round after round (and slots, once all 64 were taken).
    let mut linked = TaskGraph::builder()
        .max_tasks(64)
        .max_dependencies(2)
        .build()
        .unwrap();
    linked.compact().unwrap();
    for _ in 0..20 {
        let ids = linked
            .create_batch((0..4).map(|_| |_: &Task<'_, 'static>| ()))
            .unwrap();
        // The first dependency takes the task's own link, the other two the graph's.
        linked
            .add_dependencies(ids[0], &[ids[1], ids[2], ids[3]])
            .unwrap();
        linked.ready(&ids).unwrap();
        linked.wait_all().unwrap();
    }
}

#[test]
fn each_task_has_a_link_of_its_own_for_its_first_dependency_in_every_generation() {
    // No links to allocate: chains of one dependency per task run on the tasks' own links,
    // round after round in the same slots, through `add_dependencies` and linked batches.
    let graph = TaskGraph::builder()
        .max_tasks(67)
        .max_dependencies(0)
        .build()
        .unwrap();
    let no_link = Err(TaskError::Full(GraphFull {
        capacity: Capacity::Dependencies,
        requested: 1,
    }));
    for round in 0..4 {
        let order = Arc::new(Mutex::new(Vec::new()));
        let record = |k: usize| {
            let order = Arc::clone(&order);
            move |_: &Task<'_, 'static>| order.lock().unwrap().push(k)
        };
        let ids: Vec<TaskId> = (0..32).map(|k| graph.create(record(k)).unwrap()).collect();
        for k in 1..32 {
            graph.add_dependencies(ids[k], &[ids[k - 1]]).unwrap();
        }
        assert_eq!(
            graph.add_dependencies(ids[5], &[ids[0]]),
            no_link,
            "a second dependency needs an allocated link (round {round})"
        );
        let batch = graph
            .create_linked_batch(
                (0..32).map(|k| (record(100 + k), (k > 0).then(|| Before::InBatch(k - 1)))),
                true,
            )
            .unwrap();
        assert_eq!(batch.len(), 32);
        graph.ready(&ids).unwrap();
        graph.wait_all().unwrap();
        let order = order.lock().unwrap();
        let chain: Vec<usize> = order.iter().copied().filter(|&k| k < 100).collect();
        let linked: Vec<usize> = order.iter().copied().filter(|&k| k >= 100).collect();
        assert_eq!(chain, (0..32).collect::<Vec<_>>());
        assert_eq!(linked, (100..132).collect::<Vec<_>>());
        // A batch task with a second dependency needs an allocated link: refused whole.
        let refused = graph.create_linked_batch(
            [
                (record(200), vec![]),
                (record(201), vec![]),
                (record(202), vec![Before::InBatch(0), Before::InBatch(1)]),
            ],
            true,
        );
        assert_eq!(refused.map(|_| ()), no_link);
        assert_eq!(graph.unfinished(), 0);
    }
}

#[test]
fn adders_racing_for_the_own_link_of_a_task_take_exactly_the_links_they_need() {
    // Eight threads add one dependency each to the same task at once: one of them gets
    // the task's own link, the others the graph's seven links, whoever loses the race
    // for the own link allocates one instead, and none is left over.
    let pool = stress_pool(4);
    for _ in 0..50 {
        let graph = TaskGraph::builder()
            .max_tasks(16)
            .max_dependencies(7)
            .pool(&pool)
            .build()
            .unwrap();
        let (befores, done) = counting_tasks(&graph, 8);
        let last = {
            let done = Arc::clone(&done);
            graph
                .create(move |_| assert_eq!(done.load(Ordering::SeqCst), 8))
                .unwrap()
        };
        std::thread::scope(|s| {
            for &b in &befores {
                let graph = &graph;
                s.spawn(move || graph.add_dependencies(last, &[b]).unwrap());
            }
        });
        let spare = graph.create(|_| ()).unwrap();
        assert_eq!(
            graph.add_dependencies(spare, &[befores[0], befores[1]]),
            Err(TaskError::Full(GraphFull {
                capacity: Capacity::Dependencies,
                requested: 1
            })),
            "every allocated link is in use"
        );
        graph.ready(&befores).unwrap();
        graph.ready(&[last, spare]).unwrap();
        graph.wait_all().unwrap();
        assert_eq!(done.load(Ordering::SeqCst), 8);
    }
}

#[test]
fn a_batch_whose_iterator_panics_makes_nothing() {
    let counter = DropCounter::new();
    let graph = TaskGraph::builder().max_tasks(4).build().unwrap();
    let made = panic::catch_unwind(AssertUnwindSafe(|| {
        graph
            .create_batch((0..4).map(|i| {
                assert!(i < 2, "iterator failed");
                let token = counter.token();
                move |_: &Task<'_, 'static>| drop(token)
            }))
            .unwrap()
    }));
    assert!(made.is_err());
    assert_eq!(counter.dropped(), 2);
    assert_eq!(graph.unfinished(), 0);
    let all = graph
        .create_batch((0..4).map(|_| |_: &Task<'_, 'static>| ()))
        .unwrap();
    graph.ready(&all).unwrap();
    graph.wait_all().unwrap();
}

#[test]
fn builder_rejects_capacities_out_of_range() {
    assert_eq!(
        TaskGraph::builder().max_tasks(0).build().unwrap_err(),
        GraphBuildError::BadTaskCapacity(0)
    );
    assert_eq!(
        TaskGraph::builder()
            .max_tasks(graph::MAX_TASKS + 1)
            .build()
            .unwrap_err(),
        GraphBuildError::BadTaskCapacity(graph::MAX_TASKS + 1)
    );
    assert_eq!(
        TaskGraph::builder()
            .max_dependencies(graph::MAX_DEPENDENCIES + 1)
            .build()
            .unwrap_err(),
        GraphBuildError::BadDependencyCapacity(graph::MAX_DEPENDENCIES + 1)
    );
    assert!(matches!(
        TaskGraph::builder().channels(0).build().unwrap_err(),
        GraphBuildError::BadChannels { .. }
    ));
    assert!(matches!(
        TaskGraph::builder()
            .channels(graph::MAX_CHANNELS)
            .dedicated_channels(1)
            .build()
            .unwrap_err(),
        GraphBuildError::BadChannels { .. }
    ));
    // No links to allocate: each task still has its own, for its first dependency.
    let graph = TaskGraph::builder().max_dependencies(0).build().unwrap();
    let a = graph.create(|_| ()).unwrap();
    let b = graph.create(|_| ()).unwrap();
    let c = graph.create(|_| ()).unwrap();
    graph.add_dependencies(a, &[b]).unwrap();
    assert!(matches!(
        graph.add_dependencies(a, &[c]),
        Err(TaskError::Full(_))
    ));
    graph.ready(&[a, b, c]).unwrap();
    graph.wait_all().unwrap();
}

#[test]
fn a_graph_of_two_to_the_23_tasks_builds_and_runs() {
    let graph = TaskGraph::builder()
        .max_tasks(1 << 23)
        .max_dependencies(1 << 23)
        .build()
        .unwrap();
    assert_eq!(graph.max_tasks(), 1 << 23);
    let count = Arc::new(AtomicUsize::new(0));
    let ids = graph
        .create_batch((0..1000).map(|_| {
            let count = Arc::clone(&count);
            move |_: &Task<'_, 'static>| {
                count.fetch_add(1, Ordering::Relaxed);
            }
        }))
        .unwrap();
    graph.ready(&ids).unwrap();
    graph.wait_all().unwrap();
    assert_eq!(count.load(Ordering::Relaxed), 1000);
}

#[test]
fn bad_ids_and_channels_get_typed_errors() {
    let graph = TaskGraph::builder().dedicated_channels(1).build().unwrap();
    let other = TaskGraph::builder().build().unwrap();
    let foreign = other.create(|_| ()).unwrap();
    let a = graph.create(|_| ()).unwrap();
    let b = graph.create(|_| ()).unwrap();
    assert_eq!(graph.ready(&[foreign]), Err(TaskError::ForeignGraph));
    assert_eq!(
        graph.add_dependencies(a, &[foreign]),
        Err(TaskError::ForeignGraph)
    );
    assert_eq!(
        graph.add_dependencies(foreign, &[a]),
        Err(TaskError::ForeignGraph)
    );
    assert!(matches!(
        graph.wait(foreign),
        Err(WaitError::Task(TaskError::ForeignGraph))
    ));
    assert_eq!(
        graph
            .create_on(other.default_channel(), |_| ())
            .unwrap_err(),
        TaskError::ForeignGraph
    );
    assert_eq!(
        graph.execute_one(other.default_channel()),
        Err(TaskError::ForeignGraph)
    );
    assert!(graph.channel(1).is_none() && graph.dedicated_channel(1).is_none());
    assert_eq!(
        graph.add_dependencies(a, &[a]),
        Err(TaskError::SelfDependency)
    );
    let reusable = graph.create_reusable(|_| ()).unwrap();
    assert_eq!(
        graph.add_dependencies(a, &[reusable]),
        Err(TaskError::ReuseMismatch)
    );
    assert_eq!(
        graph.add_dependencies(reusable, &[a]),
        Err(TaskError::ReuseMismatch)
    );
    // A readied task takes no new dependency and is not readied twice.
    graph.ready(&[b]).unwrap();
    graph.wait(b).unwrap();
    graph.ready(&[a, reusable]).unwrap();
    assert!(matches!(
        graph.add_dependencies(a, &[]),
        Err(TaskError::AlreadyReadied | TaskError::Finished)
    ));
    graph.wait_all().unwrap();
    // Finished one-shot tasks: stale ids.
    assert_eq!(graph.ready(&[b]), Err(TaskError::Finished));
    let c = graph.create(|_| ()).unwrap();
    assert_eq!(graph.add_dependencies(b, &[c]), Err(TaskError::Finished));
    // A dependency on a finished task is satisfied at once.
    graph.add_dependencies(c, &[a]).unwrap();
    graph.ready(&[c]).unwrap();
    graph.wait_all().unwrap();
    // Out of range: an id of a bigger graph with the same serial cannot be made, but a
    // foreign one of a bigger graph is caught first.
    let big = TaskGraph::builder().max_tasks(1 << 17).build().unwrap();
    let ids = big
        .create_batch((0..70_000).map(|_| |_: &Task<'_, 'static>| ()))
        .unwrap();
    assert_eq!(graph.ready(&ids[69_999..]), Err(TaskError::ForeignGraph));
    big.ready(&ids).unwrap();
    big.wait_all().unwrap();
}

#[test]
fn a_dependency_on_a_readied_task_is_refused_but_the_readied_task_runs() {
    let graph = TaskGraph::builder().build().unwrap();
    let gate = graph.create(|_| ()).unwrap();
    let waiting = graph.create(|_| ()).unwrap();
    graph.add_dependencies(waiting, &[gate]).unwrap();
    graph.ready(&[waiting]).unwrap();
    let late = graph.create(|_| ()).unwrap();
    assert_eq!(
        graph.add_dependencies(waiting, &[late]),
        Err(TaskError::AlreadyReadied)
    );
    assert_eq!(graph.ready(&[waiting]), Err(TaskError::AlreadyReadied));
    graph.ready(&[gate, late]).unwrap();
    graph.wait_all().unwrap();
}

#[test]
fn a_wait_that_can_never_finish_is_reported_as_stalled() {
    finishes("stall detection", || {
        let graph = TaskGraph::builder().build().unwrap();
        // A cycle.
        let a = graph.create(|_| ()).unwrap();
        let b = graph.create(|_| ()).unwrap();
        graph.add_dependencies(a, &[b]).unwrap();
        graph.add_dependencies(b, &[a]).unwrap();
        graph.ready(&[a, b]).unwrap();
        assert!(matches!(
            graph.wait_all(),
            Err(WaitError::Stalled { unfinished: 2 })
        ));
        assert!(matches!(graph.wait(a), Err(WaitError::Stalled { .. })));
        // A dependency never readied: readying it resumes the graph.
        let graph = TaskGraph::builder().build().unwrap();
        let never = graph.create(|_| ()).unwrap();
        let after = graph.create(|_| ()).unwrap();
        graph.add_dependencies(after, &[never]).unwrap();
        graph.ready(&[after]).unwrap();
        assert!(matches!(
            graph.wait_all(),
            Err(WaitError::Stalled { unfinished: 2 })
        ));
        graph.ready(&[never]).unwrap();
        graph.wait_all().unwrap();
        // A task that waits for a task never readied, with nothing else running.
        let graph = TaskGraph::builder().build().unwrap();
        let never = graph.create(|_| ()).unwrap();
        let waiter = graph
            .create(move |t| {
                let waited = t.graph().wait(never);
                assert!(
                    matches!(waited, Err(WaitError::Stalled { .. })),
                    "{waited:?}"
                );
            })
            .unwrap();
        graph.ready(&[waiter]).unwrap();
        let waited = graph.wait_all();
        assert!(
            matches!(waited, Err(WaitError::Stalled { unfinished: 1 })),
            "{waited:?}"
        );
        graph.ready(&[never]).unwrap();
        graph.wait_all().unwrap();
    });
}

#[test]
fn wait_all_inside_a_task_of_the_same_graph_is_refused() {
    let graph = TaskGraph::builder().build().unwrap();
    let saw = Arc::new(Mutex::new(None));
    let s = Arc::clone(&saw);
    let id = graph
        .create(move |t| {
            *s.lock().unwrap() = Some(matches!(t.graph().wait_all(), Err(WaitError::InsideTask)))
        })
        .unwrap();
    graph.ready(&[id]).unwrap();
    graph.wait_all().unwrap();
    assert_eq!(*saw.lock().unwrap(), Some(true));
}

// ---------------------------------------------------------------------------------------
// Linked batches
// ---------------------------------------------------------------------------------------

/// A linked batch's task: records its position in `order` when it runs, and drops
/// `token`.
fn recorder<'o>(
    order: &'o Mutex<Vec<usize>>,
    counter: &DropCounter,
    position: usize,
) -> impl FnOnce(&Task<'_, '_>) + Send + 'o {
    let token = counter.token();
    move |_: &Task<'_, '_>| {
        order.lock().unwrap().push(position);
        drop(token);
    }
}

/// Runs `build` in a graph scope on a stress pool of `threads` threads; returns the
/// positions its recorders logged, in the order their tasks ran, and how many recorders
/// were made (each closure must have been dropped).
fn recorded_run(
    threads: usize,
    build: impl for<'o> FnOnce(&Graph<'o>, &'o Mutex<Vec<usize>>, &'o DropCounter),
) -> (Vec<usize>, usize) {
    let pool = stress_pool(threads);
    let order = Mutex::new(Vec::new());
    let counter = DropCounter::new();
    graph::TaskGraph::builder()
        .pool(&pool)
        .scope(|g| build(g, &order, &counter))
        .unwrap()
        .unwrap();
    assert_eq!(counter.created(), counter.dropped());
    (order.into_inner().unwrap(), counter.created())
}

#[test]
fn a_linked_batch_runs_its_tasks_after_their_dependencies_inside_and_outside_the_batch() {
    for threads in [1, 2] {
        let (order, made) = recorded_run(threads, |g, order, counter| {
            let outside = g.create(recorder(order, counter, 100)).unwrap();
            let tasks = vec![
                (recorder(order, counter, 0), vec![Before::Task(outside)]),
                (recorder(order, counter, 1), vec![Before::InBatch(0)]),
                (recorder(order, counter, 2), vec![]),
                (
                    recorder(order, counter, 3),
                    vec![Before::InBatch(1), Before::InBatch(2), outside.into()],
                ),
            ];
            let ids = g.create_linked_batch(tasks, true).unwrap();
            assert_eq!(ids.len(), 4);
            // Readied by the batch: readying again is refused.
            assert_eq!(g.ready(&ids[..1]), Err(TaskError::AlreadyReadied));
            g.ready(&[outside]).unwrap();
        });
        let at = |p: usize| order.iter().position(|&x| x == p).unwrap();
        assert_eq!((order.len(), made), (5, 5), "{order:?}");
        assert!(at(100) < at(0) && at(0) < at(1) && at(1) < at(3) && at(2) < at(3));
    }
}

#[test]
fn a_one_thread_graph_runs_the_tasks_it_released_in_release_order() {
    // A root with three children, each with one child of its own: every child runs
    // before any grandchild (a depth-first walk would run a grandchild right after its
    // parent).
    let (order, made) = recorded_run(1, |g, order, counter| {
        let mut tasks = vec![(recorder(order, counter, 0), vec![])];
        for child in 1..=3 {
            tasks.push((recorder(order, counter, child), vec![Before::InBatch(0)]));
        }
        for grandchild in 4..=6 {
            let parent = Before::InBatch(grandchild - 3);
            tasks.push((recorder(order, counter, grandchild), vec![parent]));
        }
        g.create_linked_batch(tasks, true).unwrap();
    });
    assert_eq!((order.len(), made), (7, 7), "{order:?}");
    assert_eq!(order[0], 0, "{order:?}");
    let mut children: Vec<usize> = order[1..4].to_vec();
    children.sort_unstable();
    assert_eq!(children, [1, 2, 3], "{order:?}");
}

#[test]
fn a_linked_batch_left_unready_waits_for_ready_and_takes_more_dependencies() {
    let order = Mutex::new(Vec::new());
    let counter = DropCounter::new();
    graph::scope(|g| {
        let order = &order;
        let tasks = (0..3).map(|p| {
            let before = (p > 0).then(|| Before::InBatch(p - 1));
            (recorder(order, &counter, p), before)
        });
        let mut ids = Vec::new();
        g.create_linked_batch_into(g.default_channel(), tasks, false, &mut ids)
            .unwrap();
        let later = g.create(recorder(order, &counter, 9)).unwrap();
        g.add_dependencies(ids[0], &[later]).unwrap();
        g.ready(&[later]).unwrap();
        g.wait(later).unwrap();
        assert_eq!(
            *order.lock().unwrap(),
            [9],
            "the batch ran before it was readied"
        );
        g.ready(&ids).unwrap();
    })
    .unwrap();
    assert_eq!(order.into_inner().unwrap(), [9, 0, 1, 2]);
    assert_eq!(counter.dropped(), 4);
}

/// A task that counts its run in `ran`.
fn counting_task(ran: &Arc<AtomicUsize>) -> impl FnOnce(&Task<'_, 'static>) + Send + 'static {
    let ran = Arc::clone(ran);
    move |_| {
        ran.fetch_add(1, Ordering::SeqCst);
    }
}

/// Asserts that `failure` reports exactly `expected` as cancelled, in any order.
fn assert_cancelled_exactly(failure: &graph::Failure, expected: &[TaskId]) {
    let mut cancelled = failure.cancelled_ids.clone();
    cancelled.sort_by_key(|id| id.slot());
    let mut expected = expected.to_vec();
    expected.sort_by_key(|id| id.slot());
    assert_eq!(cancelled, expected);
}

#[test]
fn a_linked_batch_after_outside_tasks_runs_or_is_cancelled_as_they_end() {
    let graph = TaskGraph::builder().build().unwrap();
    let fine = graph.create(|_| ()).unwrap();
    graph.ready(&[fine]).unwrap();
    graph.wait_all().unwrap(); // `fine` finished before the batch names it
    let go = Arc::new(AtomicBool::new(false));
    let bad = {
        let go = Arc::clone(&go);
        graph
            .create(move |_| {
                while !go.load(Ordering::SeqCst) {
                    std::thread::yield_now();
                }
                panic!("outside task fails");
            })
            .unwrap()
    };
    graph.ready(&[bad]).unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let ids = graph
        .create_linked_batch(
            [
                (counting_task(&ran), vec![Before::Task(fine)]),
                (counting_task(&ran), vec![Before::Task(bad)]),
                (counting_task(&ran), vec![Before::InBatch(1)]),
                (counting_task(&ran), vec![Before::InBatch(0)]),
            ],
            true,
        )
        .unwrap();
    go.store(true, Ordering::SeqCst);
    let failure = failure(graph.wait_all());
    assert_eq!(failure.panic.as_ref().map(|(id, _)| *id), Some(bad));
    assert_eq!(
        ran.load(Ordering::SeqCst),
        2,
        "tasks after the failed one ran"
    );
    assert_cancelled_exactly(&failure, &[ids[1], ids[2]]);
}

#[test]
fn a_linked_batch_takes_no_links_for_finished_tasks_and_is_cancelled_after_failed_ones() {
    let graph = TaskGraph::builder()
        .max_tasks(16)
        .max_dependencies(1)
        .build()
        .unwrap();
    let done = graph
        .create_batch((0..3).map(|_| |_: &Task<'_, 'static>| ()))
        .unwrap();
    graph.ready(&done).unwrap();
    graph.wait_all().unwrap();
    let bad = graph.create(|_| panic!("fails before the batch")).unwrap();
    graph.ready(&[bad]).unwrap();
    graph.wait(bad).unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    // Three links per task would not fit: a task's own link and the graph's one link
    // serve two dependencies at a time.
    let finished = |order: [usize; 3]| order.map(|k| Before::Task(done[k])).to_vec();
    let ids = graph
        .create_linked_batch(
            [
                (counting_task(&ran), finished([0, 1, 2])),
                (counting_task(&ran), finished([2, 0, 1])),
                (
                    counting_task(&ran),
                    vec![Before::Task(done[1]), Before::Task(bad)],
                ),
                (counting_task(&ran), vec![Before::InBatch(2)]),
            ],
            true,
        )
        .unwrap();
    let failure = failure(graph.wait_all());
    assert_eq!(failure.panic.as_ref().map(|(id, _)| *id), Some(bad));
    assert_eq!(ran.load(Ordering::SeqCst), 2);
    assert_cancelled_exactly(&failure, &[ids[2], ids[3]]);
}

#[test]
fn a_linked_batch_with_a_bad_dependency_makes_nothing_and_drops_its_closures() {
    let other = TaskGraph::builder().build().unwrap();
    let foreign = other.create(|_| ()).unwrap();
    // Each task's first dependency takes its own link: the batches below need one more.
    let graph = TaskGraph::builder()
        .max_tasks(4)
        .max_dependencies(1)
        .build()
        .unwrap();
    let reusable = graph.create_reusable(|_| ()).unwrap();
    let counter = DropCounter::new();
    let attempt = |bad: Before| {
        let token = || {
            let token = counter.token();
            move |_: &Task<'_, 'static>| drop(token)
        };
        let mut ids = vec![reusable];
        let result = graph.create_linked_batch_into(
            graph.default_channel(),
            [
                (token(), vec![]),
                (token(), vec![Before::InBatch(0)]),
                (token(), vec![Before::InBatch(1), Before::InBatch(0), bad]),
            ],
            true,
            &mut ids,
        );
        assert_eq!(ids, [reusable], "a failed batch changed the ids");
        result
    };
    assert_eq!(
        attempt(Before::InBatch(2)),
        Err(TaskError::NotEarlierInBatch)
    );
    assert_eq!(
        attempt(Before::InBatch(7)),
        Err(TaskError::NotEarlierInBatch)
    );
    assert_eq!(attempt(Before::Task(foreign)), Err(TaskError::ForeignGraph));
    assert_eq!(
        attempt(Before::Task(reusable)),
        Err(TaskError::ReuseMismatch)
    );
    assert_eq!(
        attempt(Before::InBatch(0)),
        Err(TaskError::Full(GraphFull {
            capacity: Capacity::Dependencies,
            requested: 1
        }))
    );
    assert_eq!((counter.created(), counter.dropped()), (15, 15));
    assert_eq!(graph.unfinished(), 1, "only the reusable task");
    // Every slot and link came back: a batch that takes all of them works.
    let ran = Arc::new(AtomicUsize::new(0));
    let tasks = (0..3).map(|p| {
        let ran = Arc::clone(&ran);
        let before: Vec<Before> = (0..p).map(Before::InBatch).take(2).collect();
        (
            move |_: &Task<'_, 'static>| {
                ran.fetch_add(1, Ordering::SeqCst);
            },
            before,
        )
    });
    graph.create_linked_batch(tasks, true).unwrap();
    graph.ready(&[reusable]).unwrap();
    graph.wait_all().unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 3);
    let too_many = (0..4).map(|_| (|_: &Task<'_, 'static>| (), []));
    assert_eq!(
        graph.create_linked_batch(too_many, true),
        Err(TaskError::Full(GraphFull {
            capacity: Capacity::Tasks,
            requested: 4
        }))
    );
}

#[test]
fn a_linked_batch_whose_iterators_panic_makes_nothing() {
    let counter = DropCounter::new();
    let graph = TaskGraph::builder()
        .max_tasks(4)
        .max_dependencies(8)
        .build()
        .unwrap();
    for panic_in_dependencies in [false, true] {
        let made = panic::catch_unwind(AssertUnwindSafe(|| {
            let tasks = (0..4).map(|p| {
                assert!(panic_in_dependencies || p < 3, "task iterator failed");
                let token = counter.token();
                let before = (0..p).map(move |k| {
                    assert!(
                        !panic_in_dependencies || p < 2,
                        "dependency iterator failed"
                    );
                    Before::InBatch(k)
                });
                (move |_: &Task<'_, 'static>| drop(token), before)
            });
            graph.create_linked_batch(tasks, true).unwrap()
        }));
        assert!(made.is_err());
        assert_eq!(counter.created(), counter.dropped());
        assert_eq!(graph.unfinished(), 0);
    }
    // The slots and links all came back.
    let ids = graph
        .create_linked_batch(
            (0..4).map(|p| {
                (
                    |_: &Task<'_, 'static>| (),
                    (0..p).map(Before::InBatch).take(2),
                )
            }),
            true,
        )
        .unwrap();
    assert_eq!(ids.len(), 4);
    graph.wait_all().unwrap();
}

/// An iterator that claims more items than it yields.
struct ShortIterator<T> {
    items: std::vec::IntoIter<T>,
    claimed: usize,
}

impl<T> Iterator for ShortIterator<T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        self.items.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.claimed, Some(self.claimed))
    }
}

impl<T> ExactSizeIterator for ShortIterator<T> {}

#[test]
fn batches_whose_iterators_run_dry_early_give_the_unused_slots_back() {
    let graph = TaskGraph::builder().max_tasks(4).build().unwrap();
    let task = |_: &Task<'_, 'static>| ();
    let mut ids = Vec::new();
    for linked in [false, true] {
        ids.clear();
        if linked {
            let items = vec![(task, None), (task, Some(Before::InBatch(0)))];
            let tasks = ShortIterator {
                items: items.into_iter(),
                claimed: 4,
            };
            graph
                .create_linked_batch_into(graph.default_channel(), tasks, false, &mut ids)
                .unwrap();
        } else {
            let tasks = ShortIterator {
                items: vec![task, task].into_iter(),
                claimed: 4,
            };
            graph
                .create_batch_into(graph.default_channel(), tasks, &mut ids)
                .unwrap();
        }
        assert_eq!(ids.len(), 2);
        // The two slots the batch took and did not use are free again.
        let more = graph.create_batch([task, task]).unwrap();
        assert!(graph.create(task).is_err());
        graph.ready(&ids).unwrap();
        graph.ready(&more).unwrap();
        graph.wait_all().unwrap();
    }
}

// ---------------------------------------------------------------------------------------
// Re-running and borrowing
// ---------------------------------------------------------------------------------------

#[test]
fn a_graph_of_fn_tasks_runs_again_without_being_rebuilt() {
    for threads in [1, 2] {
        let pool = stress_pool(threads);
        let log = Mutex::new(Vec::new());
        graph::TaskGraph::builder()
            .pool(&pool)
            .scope(|g| {
                let log = &log;
                // A diamond: 0 -> {1, 2} -> 3.
                let ids: Vec<TaskId> = (0..4)
                    .map(|j| {
                        g.create_reusable(move |_| log.lock().unwrap().push(j))
                            .unwrap()
                    })
                    .collect();
                g.add_dependencies(ids[1], &[ids[0]]).unwrap();
                g.add_dependencies(ids[2], &[ids[0]]).unwrap();
                g.add_dependencies(ids[3], &[ids[1], ids[2]]).unwrap();
                g.ready(&ids).unwrap();
                g.wait_all().unwrap();
                for _ in 0..5 {
                    assert_eq!(g.rerun().unwrap(), 4);
                    g.wait_all().unwrap();
                }
            })
            .unwrap()
            .unwrap();
        let log = log.into_inner().unwrap();
        assert_eq!(log.len(), 24);
        for run in log.chunks(4) {
            assert_eq!(run[0], 0);
            assert_eq!(run[3], 3);
        }
    }
}

#[test]
fn rerun_is_refused_while_tasks_are_unfinished() {
    let graph = TaskGraph::builder().build().unwrap();
    let a = graph.create_reusable(|_| ()).unwrap();
    assert_eq!(graph.rerun().unwrap_err().unfinished, 1);
    graph.ready(&[a]).unwrap();
    graph.wait_all().unwrap();
    assert_eq!(graph.rerun().unwrap(), 1);
    graph.wait_all().unwrap();
}

#[test]
fn a_failed_reusable_graph_runs_again_with_its_failures_forgotten() {
    let graph = TaskGraph::builder().build().unwrap();
    let fail = Arc::new(AtomicBool::new(true));
    let ran = Arc::new(AtomicUsize::new(0));
    let a = {
        let fail = Arc::clone(&fail);
        graph
            .create_reusable(move |_| assert!(!fail.load(Ordering::SeqCst), "failing run"))
            .unwrap()
    };
    let b = {
        let ran = Arc::clone(&ran);
        graph
            .create_reusable(move |_| {
                ran.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap()
    };
    graph.add_dependencies(b, &[a]).unwrap();
    graph.ready(&[a, b]).unwrap();
    let failure = failure(graph.wait_all());
    assert_eq!(failure.cancelled_ids, [b]);
    fail.store(false, Ordering::SeqCst);
    graph.rerun().unwrap();
    graph.wait_all().unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[test]
fn scoped_tasks_borrow_and_mutate_the_callers_data() {
    let mut cells = vec![0usize; 64];
    let total = AtomicUsize::new(0);
    let result = graph::scope(|g| {
        let total = &total;
        let ids: Vec<TaskId> = cells
            .iter_mut()
            .enumerate()
            .map(|(i, c)| {
                g.create(move |_| {
                    *c = i * 2;
                    total.fetch_add(i, Ordering::Relaxed);
                })
                .unwrap()
            })
            .collect();
        g.ready(&ids).unwrap();
        ids.len()
    });
    assert_eq!(result.unwrap(), 64);
    assert!(cells.iter().enumerate().all(|(i, &c)| c == i * 2));
    assert_eq!(total.into_inner(), (0..64).sum::<usize>());
}

#[test]
fn a_scope_whose_body_panics_drops_its_unrun_tasks_before_unwinding() {
    let counter = DropCounter::new();
    let caught = panic::catch_unwind(AssertUnwindSafe(|| {
        graph::scope(|g| {
            for _ in 0..5 {
                let token = counter.token();
                g.create(move |_| drop(token)).unwrap();
            }
            panic!("body");
        })
    }));
    assert_eq!(panic_message(&*caught.unwrap_err()), "body");
    assert_eq!(counter.dropped(), 5);
}

// ---------------------------------------------------------------------------------------
// Stress with 1 µs heartbeats
// ---------------------------------------------------------------------------------------

#[test]
fn stress_wide_and_deep_graphs_with_nested_parallelism() {
    for threads in [2, 4] {
        let pool = stress_pool(threads);
        for round in 0..20 {
            let sum = AtomicU64::new(0);
            graph::TaskGraph::builder()
                .max_tasks(512)
                .max_dependencies(4096)
                .channels(3)
                .pool(&pool)
                .scope(|g: &Graph<'_>| {
                    let sum = &sum;
                    // Layers of 50, each task after 3 tasks of the previous layer.
                    let mut previous: Vec<TaskId> = Vec::new();
                    for layer in 0..8u64 {
                        let mut current = Vec::new();
                        for k in 0..50u64 {
                            let channel = g.channel(((layer + k) % 3) as usize).unwrap();
                            let id = g
                                .create_on(channel, move |_| {
                                    let s: u64 = if k % 5 == 0 {
                                        (0..200u64).into_par_iter().sum()
                                    } else {
                                        k
                                    };
                                    sum.fetch_add(s, Ordering::Relaxed);
                                })
                                .unwrap();
                            if !previous.is_empty() {
                                let before: Vec<TaskId> = (0..3)
                                    .map(|d| previous[((k + d * 17 + round) % 50) as usize])
                                    .collect();
                                g.add_dependencies(id, &before).unwrap();
                            }
                            current.push(id);
                        }
                        g.ready(&current).unwrap();
                        previous = current;
                    }
                })
                .unwrap()
                .unwrap();
            let per_layer: u64 = (0..50u64)
                .map(|k| if k % 5 == 0 { 19_900 } else { k })
                .sum();
            assert_eq!(sum.into_inner(), per_layer * 8);
        }
    }
}

#[test]
fn stress_producers_outside_the_pool_race_runners_that_come_and_go() {
    // Short bursts with gaps: runners end and restart all the time.
    let pool = stress_pool(2);
    let graph = TaskGraph::builder()
        .max_tasks(64)
        .channels(2)
        .pool(&pool)
        .build()
        .unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let mut ids = Vec::new();
    for burst in 0..2000 {
        ids.clear();
        let channel = graph.channel(burst % 2).unwrap();
        let tasks = (0..(1 + burst % 5)).map(|_| {
            let count = Arc::clone(&count);
            move |_: &Task<'_, 'static>| {
                count.fetch_add(1, Ordering::Relaxed);
            }
        });
        loop {
            match graph.create_batch_into(channel, tasks.clone(), &mut ids) {
                Ok(()) => break,
                Err(_) => std::thread::yield_now(),
            }
        }
        graph.ready(&ids).unwrap();
        if burst % 100 == 0 {
            graph.wait_all().unwrap();
        }
    }
    graph.wait_all().unwrap();
    let expected: usize = (0..2000).map(|b| 1 + b % 5).sum();
    assert_eq!(count.load(Ordering::Relaxed), expected);
}

#[test]
fn stress_compacted_graphs_run_chains_through_the_in_order_sweep_and_then_freed_slots() {
    // 96 slots, 200 chained tasks a round: each round takes the never-used slots first,
    // in order (while runners free the earlier ones), then freed ones once the sweep
    // ends, waiting whenever the graph is full.
    let pool = stress_pool(2);
    let mut graph = TaskGraph::builder()
        .max_tasks(96)
        .max_dependencies(256)
        .pool(&pool)
        .build()
        .unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut ids: Vec<TaskId> = Vec::new();
    let mut batch = Vec::new();
    for round in 0..300usize {
        graph.compact().unwrap();
        ids.clear();
        order.lock().unwrap().clear();
        for start in (0..200usize).step_by(8) {
            let made = &ids[..];
            let tasks = (start..start + 8).map(|j| {
                let order = Arc::clone(&order);
                let before: Vec<Before> = match j {
                    0 => vec![],
                    j if j == start => vec![Before::Task(made[j - 1])],
                    // The chain, and a second link to a task of the last batch.
                    j => {
                        let mut before = vec![Before::InBatch(j - 1 - start)];
                        before.extend(
                            start
                                .checked_sub(1 + round % 8)
                                .map(|k| Before::Task(made[k])),
                        );
                        before
                    }
                };
                (
                    move |_: &Task<'_, 'static>| order.lock().unwrap().push(j),
                    before,
                )
            });
            loop {
                batch.clear();
                match graph.create_linked_batch_into(
                    graph.default_channel(),
                    tasks.clone(),
                    true,
                    &mut batch,
                ) {
                    Ok(()) => break,
                    Err(TaskError::Full(_)) => std::thread::yield_now(),
                    Err(other) => panic!("round {round}: {other:?}"),
                }
            }
            ids.extend_from_slice(&batch);
        }
        graph.wait_all().unwrap();
        assert_eq!(
            *order.lock().unwrap(),
            (0..200).collect::<Vec<_>>(),
            "round {round}"
        );
        let swept: Vec<usize> = ids[..96].iter().map(|id| id.slot()).collect();
        assert_eq!(swept, (0..96).collect::<Vec<_>>(), "round {round}");
    }
}

#[test]
fn a_graph_that_outlives_its_pool_runs_its_tasks_and_drops_without_hanging() {
    finishes("graph after its pool", || {
        let pool = stress_pool(2);
        let graph = TaskGraph::builder().pool(&pool).build().unwrap();
        let count = Arc::new(AtomicUsize::new(0));
        let c = Arc::clone(&count);
        let first = graph
            .create(move |_| {
                c.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
        graph.ready(&[first]).unwrap();
        graph.wait_all().unwrap();
        drop(pool);
        let c = Arc::clone(&count);
        let later = graph
            .create(move |_| {
                c.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
        graph.create(|_| ()).unwrap(); // never readied: dropped with the graph
        graph.ready(&[later]).unwrap();
        assert!(matches!(
            graph.wait_all(),
            Err(WaitError::Stalled { unfinished: 1 })
        ));
        assert_eq!(count.load(Ordering::Relaxed), 2);
    });
}

/// `n` tasks, none linked or readied yet, that each add one to the returned counter.
fn counting_tasks(graph: &TaskGraph<'_>, n: usize) -> (Vec<TaskId>, Arc<AtomicUsize>) {
    let done = Arc::new(AtomicUsize::new(0));
    let ids = (0..n)
        .map(|_| {
            let done = Arc::clone(&done);
            graph
                .create(move |_| {
                    done.fetch_add(1, Ordering::SeqCst);
                })
                .unwrap()
        })
        .collect();
    (ids, done)
}

/// Five siblings that count in `done` and a waiter that waits for each of them, none
/// linked or readied yet: `(siblings, waiter, done)`.
fn siblings_and_their_waiter(graph: &TaskGraph<'_>) -> (Vec<TaskId>, TaskId, Arc<AtomicUsize>) {
    let (siblings, done) = counting_tasks(graph, 5);
    let waits_for = siblings.clone();
    let waiter = graph
        .create(move |t| {
            for &s in &waits_for {
                t.graph().wait(s).unwrap();
            }
        })
        .unwrap();
    (siblings, waiter, done)
}

/// Links `tasks` after `root` in their order (so that its end releases them in the
/// reverse order), readies them, then the root, and waits for all.
fn run_released_by(graph: &TaskGraph<'_>, root: TaskId, tasks: &[TaskId]) {
    for &task in tasks {
        graph.add_dependencies(task, &[root]).unwrap();
    }
    graph.ready(tasks).unwrap();
    graph.ready(&[root]).unwrap();
    graph.wait_all().unwrap();
}

#[test]
fn a_task_waits_for_a_sibling_released_by_the_same_task() {
    // The root's dependents are kept by its runner to run next; the waiter, linked first,
    // is released last, which a runner of several runs first (newest first). A one-runner
    // graph runs them in release order: see the test after this one for a waiter that
    // runs first there.
    for threads in [1, 2] {
        let pool = stress_pool(threads);
        let graph = TaskGraph::builder().pool(&pool).build().unwrap();
        let root = graph.create(|_| ()).unwrap();
        let (siblings, waiter, done) = siblings_and_their_waiter(&graph);
        for &s in [&waiter].into_iter().chain(&siblings) {
            graph.add_dependencies(s, &[root]).unwrap();
        }
        graph.ready(&siblings).unwrap();
        graph.ready(&[waiter, root]).unwrap();
        finishes("a wait for a kept sibling", move || {
            graph.wait_all().unwrap()
        });
        assert_eq!(done.load(Ordering::SeqCst), 5);
    }
}

#[test]
fn a_task_run_by_a_waiting_caller_waits_for_a_sibling_the_caller_kept() {
    // A caller inside the pool runs the graph's tasks as it waits, keeping what they
    // release; whichever sibling it runs first waits for the others.
    for threads in [1, 2] {
        for waiter_linked_last in [false, true] {
            let pool = stress_pool(threads);
            let done = finishes("a caller's wait for a kept sibling", move || {
                pool.install(|| {
                    let graph = TaskGraph::builder().build().unwrap();
                    let root = graph.create(|_| ()).unwrap();
                    let (siblings, waiter, done) = siblings_and_their_waiter(&graph);
                    // Released in reverse link order.
                    let mut linked: Vec<TaskId> = [waiter].into_iter().chain(siblings).collect();
                    if waiter_linked_last {
                        linked.rotate_left(1);
                    }
                    run_released_by(&graph, root, &linked);
                    done.load(Ordering::SeqCst)
                })
            });
            assert_eq!(done, 5);
        }
    }
}

#[test]
fn a_task_blocked_on_a_channel_receive_lets_a_kept_sibling_send() {
    // The root's runner keeps both dependents to run next; whichever runs first, the
    // receiver must not hold the sender back while it blocks.
    for threads in [1, 2] {
        for receiver_linked_last in [false, true] {
            let pool = stress_pool(threads);
            let got = finishes("a receive from a kept sibling", move || {
                let graph = TaskGraph::builder().pool(&pool).build().unwrap();
                let (send, receive) = sumac::channel::unbounded::<usize>();
                let got = Arc::new(AtomicUsize::new(0));
                let root = graph.create(|_| ()).unwrap();
                let got_here = Arc::clone(&got);
                let receiver = graph
                    .create(move |_| {
                        got_here.store(receive.recv().unwrap(), Ordering::SeqCst);
                    })
                    .unwrap();
                let sender = graph.create(move |_| send.send(7).unwrap()).unwrap();
                let mut linked = [receiver, sender];
                if receiver_linked_last {
                    linked.reverse();
                }
                run_released_by(&graph, root, &linked);
                got.load(Ordering::SeqCst)
            });
            assert_eq!(got, 7);
        }
    }
}

#[test]
fn a_graph_whose_task_blocks_on_a_channel_is_not_stalled() {
    // The blocked task lends its runner's place: the graph still has a task running.
    for threads in [1, 2] {
        let pool = stress_pool(threads);
        let graph = TaskGraph::builder().pool(&pool).build().unwrap();
        let (send, receive) = sumac::channel::unbounded::<()>();
        let task = graph.create(move |_| receive.recv().unwrap()).unwrap();
        graph.ready(&[task]).unwrap();
        let sender = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            send.send(()).unwrap();
        });
        let waited = graph.wait_all();
        assert!(waited.is_ok(), "{waited:?}");
        sender.join().unwrap();
    }
}

#[test]
fn a_caller_waiting_in_a_one_thread_pool_runs_the_tasks_itself() {
    // The caller holds the pool's one place: the worker runs nothing while it waits.
    let pool = stress_pool(1);
    pool.install(|| {
        let here = std::thread::current().id();
        let graph = TaskGraph::builder().pool(&pool).build().unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let elsewhere = Arc::new(AtomicUsize::new(0));
        let mut last = None;
        for _ in 0..100 {
            let (ran, elsewhere) = (Arc::clone(&ran), Arc::clone(&elsewhere));
            let task = graph
                .create(move |_| {
                    ran.fetch_add(1, Ordering::SeqCst);
                    if std::thread::current().id() != here {
                        elsewhere.fetch_add(1, Ordering::SeqCst);
                    }
                })
                .unwrap();
            if let Some(before) = last {
                graph.add_dependencies(task, &[before]).unwrap();
            }
            graph.ready(&[task]).unwrap();
            last = Some(task);
        }
        graph.wait_all().unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), 100);
        assert_eq!(elsewhere.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn a_graph_dropped_by_its_own_task_does_not_wait_for_itself() {
    for threads in [1, 2] {
        let pool = stress_pool(threads);
        let graph = Arc::new(TaskGraph::builder().pool(&pool).build().unwrap());
        let counter = DropCounter::new();
        let (send, receive) = std::sync::mpsc::channel();
        let handle = Mutex::new(Some(Arc::clone(&graph)));
        let token = counter.token();
        let last = graph
            .create(move |_| {
                // Drops the last handle here, inside the graph's own task.
                drop(handle.lock().unwrap().take());
                send.send(()).unwrap();
            })
            .unwrap();
        graph.create(move |_| drop(token)).unwrap(); // never readied
        graph.ready(&[last]).unwrap();
        drop(graph);
        finishes("a graph dropped by its own task", move || {
            receive.recv().unwrap()
        });
        assert_eq!(counter.dropped(), 1);
    }
}
