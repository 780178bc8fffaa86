//! An idle pool burns no CPU: workers sleep and the heartbeat thread parks.
use crate::common;
use crate::ONE_AT_A_TIME;

use std::time::Duration;

/// User plus system CPU time of the whole process, from `/proc/self/stat`, in seconds.
fn process_cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("read /proc/self/stat");
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let after_name = &stat[stat.rfind(')').expect("stat format") + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let utime: f64 = fields[11].parse().expect("utime");
    let stime: f64 = fields[12].parse().expect("stime");
    // Clock ticks are 100 per second on Linux.
    (utime + stime) / 100.0
}

/// Runs a burst of work on `pool` (so every thread, heartbeat included, has run), then
/// checks that the idle pool uses under 5% of a core over one second.
fn assert_idle_pool_sleeps(pool: sumac::ThreadPool) {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(pool.install(|| common::fib(25)), common::fib_seq(25));
    std::thread::sleep(Duration::from_millis(100));
    let before = process_cpu_seconds();
    std::thread::sleep(Duration::from_secs(1));
    let used = process_cpu_seconds() - before;
    assert!(
        used < 0.05,
        "an idle pool used {used:.3} CPU-seconds in one second"
    );
    drop(pool);
}

#[test]
fn idle_pool_of_four_uses_under_five_percent_of_a_core() {
    assert_idle_pool_sleeps(
        sumac::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap(),
    );
}

/// The same with the test's thread as worker 0 (`use_current_thread`): while that
/// thread is outside the pool it counts as idle, so the heartbeat thread parks.
#[test]
fn idle_pool_with_the_current_thread_as_worker_uses_under_five_percent() {
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(4)
        .use_current_thread()
        .build()
        .unwrap();
    assert_idle_pool_sleeps(pool);
}

/// Every worker of an idle pool is asleep, and its stats say so: a sleep is counted as it
/// starts and a wake-up as it ends, so a sleeping worker shows one sleep more than
/// wake-ups. Waking them for work closes those sleeps.
#[test]
fn the_stats_of_an_idle_pool_show_every_worker_asleep() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let all_asleep = |pool: &sumac::ThreadPool| {
        pool.stats()
            .workers
            .iter()
            .all(|w| w.sleeps == w.wakeups + 1)
    };
    // Not a timing assertion: the workers go to sleep within microseconds; the bound
    // only keeps a broken pool from hanging the test.
    let wait_until_all_asleep = |pool: &sumac::ThreadPool| {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !all_asleep(pool) {
            assert!(
                std::time::Instant::now() < deadline,
                "the workers never all slept: {:?}",
                pool.stats().workers
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    wait_until_all_asleep(&pool);
    let before = pool.stats();
    // One job per worker: every one of them wakes up.
    let ran = pool.broadcast(|ctx| ctx.index());
    assert_eq!(ran, [0, 1, 2]);
    wait_until_all_asleep(&pool);
    let delta = pool.stats().since(&before);
    for (index, worker) in delta.workers.iter().enumerate() {
        assert!(
            worker.wakeups >= 1,
            "worker {index} did not wake: {delta:?}"
        );
        assert_eq!(worker.sleeps, worker.wakeups, "worker {index}: {delta:?}");
    }
}
