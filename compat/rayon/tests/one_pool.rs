//! With both stand-ins, `rayon::`, `rayon_core::` and `sumac::` reach one global pool:
//! the thread counts agree, a job spawned through one crate runs on the workers that the
//! others report, and the process has one set of worker threads. Rayon's
//! `RAYON_NUM_THREADS` sizes that pool, and `SUMAC_NUM_THREADS` wins over it.
//!
//! A plain `main` (`harness = false`): the thread census must see no test-harness threads,
//! and the global pool's size is set by the environment before anything starts it.

use std::collections::HashSet;
use std::sync::mpsc;
use std::thread::{self, ThreadId};

use rayon::prelude::*;

/// The global pool's size, set through Rayon's variable before the pool starts.
const GLOBAL_THREADS: usize = 3;

fn main() {
    std::env::remove_var("SUMAC_NUM_THREADS");
    std::env::remove_var("RAYON_RS_NUM_CPUS");
    std::env::set_var("RAYON_NUM_THREADS", GLOBAL_THREADS.to_string());

    let checks: [(&str, fn()); 5] = [
        (
            "rayon_num_threads_sizes_the_global_pool_and_all_three_crates_see_it",
            rayon_num_threads_sizes_the_global_pool_and_all_three_crates_see_it,
        ),
        (
            "a_job_spawned_through_one_crate_runs_on_the_workers_of_the_others",
            a_job_spawned_through_one_crate_runs_on_the_workers_of_the_others,
        ),
        (
            "the_process_has_one_set_of_worker_threads",
            the_process_has_one_set_of_worker_threads,
        ),
        (
            "a_pool_built_through_rayon_core_runs_rayon_iterators_installed_in_it",
            a_pool_built_through_rayon_core_runs_rayon_iterators_installed_in_it,
        ),
        (
            "sumac_num_threads_wins_over_rayon_num_threads",
            sumac_num_threads_wins_over_rayon_num_threads,
        ),
    ];
    for (name, check) in checks {
        check();
        println!("test {name} ... ok");
    }
    println!("one_pool: {} checks passed", checks.len());
}

fn rayon_num_threads_sizes_the_global_pool_and_all_three_crates_see_it() {
    assert_eq!(rayon::current_num_threads(), GLOBAL_THREADS);
    assert_eq!(rayon_core::current_num_threads(), GLOBAL_THREADS);
    assert_eq!(sumac::current_num_threads(), GLOBAL_THREADS);
    assert_eq!(sumac::global_stats().workers.len(), GLOBAL_THREADS);
}

/// The thread ids of the global pool's workers, as a broadcast through `crate_name` sees
/// them (a broadcast runs once on every worker).
fn global_workers(crate_name: &str) -> HashSet<ThreadId> {
    let ids: Vec<ThreadId> = match crate_name {
        "rayon" => rayon::broadcast(|_| thread::current().id()),
        "rayon_core" => rayon_core::broadcast(|_| thread::current().id()),
        "sumac" => sumac::broadcast(|_| thread::current().id()),
        _ => unreachable!(),
    };
    assert_eq!(ids.len(), GLOBAL_THREADS);
    let ids: HashSet<ThreadId> = ids.into_iter().collect();
    assert_eq!(ids.len(), GLOBAL_THREADS, "one broadcast job per worker");
    ids
}

/// Where a job spawned through `crate_name` ran: its thread and its worker index.
fn spawned_job_runs_on(crate_name: &str) -> (ThreadId, Option<usize>) {
    let (sender, receiver) = mpsc::channel();
    let job = move || {
        let here = (thread::current().id(), rayon_core::current_thread_index());
        sender.send(here).unwrap();
    };
    match crate_name {
        "rayon" => rayon::spawn(job),
        "rayon_core" => rayon_core::spawn_fifo(job),
        "sumac" => sumac::spawn(job),
        _ => unreachable!(),
    }
    receiver.recv().unwrap()
}

fn a_job_spawned_through_one_crate_runs_on_the_workers_of_the_others() {
    let crates = ["rayon", "rayon_core", "sumac"];
    let workers = global_workers("sumac");
    for other in crates {
        assert_eq!(
            global_workers(other),
            workers,
            "{other} broadcasts elsewhere"
        );
    }
    for spawner in crates {
        for _ in 0..20 {
            let (thread, index) = spawned_job_runs_on(spawner);
            assert!(
                workers.contains(&thread),
                "a job spawned through {spawner} ran off the shared pool"
            );
            assert!(index.is_some_and(|index| index < GLOBAL_THREADS));
        }
    }
    // Parallel iterators and joins too: on the shared workers, and on this thread, which
    // takes part in the calls it makes (see the README, "Behaves differently").
    let mut here = workers.clone();
    here.insert(thread::current().id());
    let ran_on: HashSet<ThreadId> = (0..10_000)
        .into_par_iter()
        .map(|_| thread::current().id())
        .collect();
    assert!(ran_on.is_subset(&here));
    let (a, b) = rayon_core::join(|| thread::current().id(), || thread::current().id());
    assert!(here.contains(&a) && here.contains(&b));
}

/// The names of the process's threads (Linux only: `/proc/self/task/*/comm`).
#[cfg(target_os = "linux")]
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .map(|task| {
            let comm = task.unwrap().path().join("comm");
            std::fs::read_to_string(comm).unwrap().trim_end().to_owned()
        })
        .collect()
}

#[cfg(target_os = "linux")]
fn the_process_has_one_set_of_worker_threads() {
    // Use every crate's entry points first, so that a second pool would have started.
    rayon::join(|| (), || ());
    rayon_core::join(|| (), || ());
    let _: u64 = (0..1000u64).into_par_iter().sum();
    let mut names = thread_names();
    names.sort();
    let mut expected: Vec<String> = (0..GLOBAL_THREADS)
        .map(|index| format!("sumac-worker-{index}"))
        .collect();
    // This thread (named after the binary) and the pool's heartbeat thread.
    expected.push("sumac-heartbeat".to_owned());
    let main = std::fs::read_to_string("/proc/self/comm").unwrap();
    expected.push(main.trim_end().to_owned());
    expected.sort();
    assert_eq!(names, expected);
}

#[cfg(not(target_os = "linux"))]
fn the_process_has_one_set_of_worker_threads() {
    // No thread census without /proc: the broadcasts above still show one pool.
}

fn a_pool_built_through_rayon_core_runs_rayon_iterators_installed_in_it() {
    let pool = rayon_core::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let (threads, indices) = pool.install(|| {
        let indices: HashSet<Option<usize>> = (0..10_000)
            .into_par_iter()
            .map(|_| rayon::current_thread_index())
            .collect();
        (rayon::current_num_threads(), indices)
    });
    assert_eq!(threads, 2);
    // A worker's index, or none on this thread (which takes part in its own call).
    assert!(indices.iter().all(|index| index.is_none_or(|i| i < 2)));
}

fn sumac_num_threads_wins_over_rayon_num_threads() {
    let default_size = || {
        rayon::ThreadPoolBuilder::new()
            .build()
            .unwrap()
            .current_num_threads()
    };
    std::env::set_var("RAYON_NUM_THREADS", "5");
    assert_eq!(default_size(), 5);
    std::env::set_var("SUMAC_NUM_THREADS", "2");
    assert_eq!(default_size(), 2);
    std::env::remove_var("SUMAC_NUM_THREADS");
    std::env::remove_var("RAYON_NUM_THREADS");
}
