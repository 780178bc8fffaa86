//! Helpers shared by the integration tests (every test binary includes this module).
#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Once, PoisonError, RwLock};
use std::time::Duration;

use proptest::test_runner::TestCaseError;

/// A pool whose heartbeat fires every microsecond, so that the sharing paths (promotion,
/// stealing, reclaiming, waiting) run all the time.
pub fn stress_pool(threads: usize) -> sumac::ThreadPool {
    pool_with_heartbeat(threads, Duration::from_micros(1))
}

/// A pool of `threads` workers whose heartbeat fires every `interval`.
pub fn pool_with_heartbeat(threads: usize, interval: Duration) -> sumac::ThreadPool {
    sumac::ThreadPoolBuilder::new()
        .num_threads(threads)
        .heartbeat_interval(interval)
        .build()
        .expect("build pool")
}

/// A two-worker pool whose heartbeat fires every `interval`, with each listed mechanism
/// switched on or off (tests that show what one mechanism does, against a long interval
/// so that no tick does it instead).
pub fn two_worker_pool_with(
    interval: Duration,
    mechanisms: &[(sumac::Mechanism, bool)],
) -> sumac::ThreadPool {
    mechanisms
        .iter()
        .fold(
            sumac::ThreadPoolBuilder::new()
                .num_threads(2)
                .heartbeat_interval(interval),
            |builder, &(mechanism, on)| builder.mechanism(mechanism, on),
        )
        .build()
        .expect("build pool")
}

/// A [`stress_pool`] whose worker 0 is the calling thread (`use_current_thread`): it acts
/// as that worker whenever it calls into the pool (or `join`, `scope`...).
pub fn current_thread_stress_pool(threads: usize) -> sumac::ThreadPool {
    sumac::ThreadPoolBuilder::new()
        .num_threads(threads)
        .heartbeat_interval(Duration::from_micros(1))
        .use_current_thread()
        .build()
        .expect("build pool")
}

/// Pools of 1, 2 and 4 threads with a 1 µs heartbeat, built once per test binary.
pub fn stress_pools() -> &'static [sumac::ThreadPool] {
    static POOLS: std::sync::OnceLock<Vec<sumac::ThreadPool>> = std::sync::OnceLock::new();
    POOLS.get_or_init(|| [1, 2, 4].into_iter().map(stress_pool).collect())
}

/// Runs the property check `check` inside every pool of `pools`, stopping at the first
/// failure.
pub fn on_each<F>(pools: &[sumac::ThreadPool], check: F) -> Result<(), TestCaseError>
where
    F: Fn() -> Result<(), TestCaseError> + Sync,
{
    for pool in pools {
        pool.install(&check)?;
    }
    Ok(())
}

/// A shared 4-thread pool with a 1 µs heartbeat in which parallel loops are also forced
/// to split every few items, for the iterator property tests.
pub fn forced_split_pool() -> &'static sumac::ThreadPool {
    static POOL: std::sync::OnceLock<sumac::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| forced_split_stress_pool(4, 3))
}

/// A pool of `threads` workers with a 1 µs heartbeat whose loops split, on average, once
/// every `every` blocks of at most three items.
pub fn forced_split_stress_pool(threads: usize, every: u32) -> sumac::ThreadPool {
    sumac::ThreadPoolBuilder::new()
        .num_threads(threads)
        .heartbeat_interval(Duration::from_micros(1))
        .force_splits(every)
        .build()
        .expect("build pool")
}

/// Makes the global pool force loop splits (once every `every` blocks), for tests that
/// run parallel iterators from the test thread. Call it before anything starts the global
/// pool; later calls (the pool exists already) change nothing.
pub fn force_splits_in_global_pool(every: u32) {
    let _ = sumac::ThreadPoolBuilder::new()
        .force_splits(every)
        .build_global();
}

/// Plain fork-join fibonacci.
pub fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = sumac::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

pub fn fib_seq(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

/// Counts live instances: creation increments `created`, drop increments `dropped`.
pub struct DropCounter {
    pub created: Arc<AtomicUsize>,
    pub dropped: Arc<AtomicUsize>,
}

impl DropCounter {
    pub fn new() -> Self {
        DropCounter {
            created: Arc::new(AtomicUsize::new(0)),
            dropped: Arc::new(AtomicUsize::new(0)),
        }
    }

    pub fn token(&self) -> DropToken {
        self.created.fetch_add(1, Ordering::SeqCst);
        DropToken {
            dropped: Arc::clone(&self.dropped),
        }
    }

    pub fn created(&self) -> usize {
        self.created.load(Ordering::SeqCst)
    }

    pub fn dropped(&self) -> usize {
        self.dropped.load(Ordering::SeqCst)
    }
}

pub struct DropToken {
    dropped: Arc<AtomicUsize>,
}

impl Drop for DropToken {
    fn drop(&mut self) {
        self.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

/// Counts, per id, how many times an item was dropped.
pub struct IdLedger {
    drops: Vec<AtomicUsize>,
    created: AtomicUsize,
}

impl IdLedger {
    /// A ledger for the ids `0..n`.
    pub fn new(n: usize) -> Self {
        IdLedger {
            drops: (0..n).map(|_| AtomicUsize::new(0)).collect(),
            created: AtomicUsize::new(0),
        }
    }

    pub fn make(&self, id: usize) -> Tracked<'_> {
        self.created.fetch_add(1, Ordering::Relaxed);
        Tracked { id, ledger: self }
    }

    /// How many items were made.
    pub fn created(&self) -> usize {
        self.created.load(Ordering::Relaxed)
    }

    /// How many times each id was dropped.
    pub fn drops(&self) -> Vec<usize> {
        self.drops
            .iter()
            .map(|d| d.load(Ordering::Relaxed))
            .collect()
    }

    /// Every item created was dropped exactly once.
    pub fn assert_balanced(&self) {
        let created = self.created();
        let mut dropped = 0;
        for (id, d) in self.drops().into_iter().enumerate() {
            assert!(d <= 1, "item {id} dropped {d} times");
            dropped += d;
        }
        assert_eq!(
            dropped, created,
            "{created} items created, {dropped} dropped"
        );
    }
}

/// An item whose drops an [`IdLedger`] counts.
pub struct Tracked<'a> {
    pub id: usize,
    ledger: &'a IdLedger,
}

impl Drop for Tracked<'_> {
    fn drop(&mut self) {
        self.ledger.drops[self.id].fetch_add(1, Ordering::Relaxed);
    }
}

/// Number of threads of this process (Linux), to detect leaked threads.
pub fn process_thread_count() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|dir| dir.count())
        .unwrap_or(0)
}

/// Announces the caller at `count` and spins, without forking, until `n` callers have
/// arrived or `limit` passed (a hang check: nothing that works comes near it). Returns
/// whether all `n` met, i.e. ran at the same time.
pub fn meet(count: &AtomicUsize, n: usize, limit: Duration) -> bool {
    count.fetch_add(1, Ordering::SeqCst);
    let start = std::time::Instant::now();
    while count.load(Ordering::SeqCst) < n {
        if start.elapsed() > limit {
            return false;
        }
        std::hint::spin_loop();
    }
    true
}

/// How long a test waits before it calls a computation hung (a hang check, not a
/// timing assertion: nothing that finishes takes anywhere near this long).
pub const HANG: Duration = Duration::from_secs(60);

/// Runs `f` on a fresh thread and returns its result, or panics with `what` if it does
/// not finish within [`HANG`] (the thread is then left behind, blocked).
pub fn finishes<R: Send + 'static>(what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(f());
    });
    match receiver.recv_timeout(HANG) {
        Ok(result) => result,
        Err(_) => panic!("{what}: hung"),
    }
}

/// The message of a panic payload (`panic!` with a literal or a formatted string).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<not a string>".to_owned()
    }
}

/// A pool of two workers, shareable with a thread that [`finishes`] watches.
pub fn two_worker_pool() -> Arc<sumac::ThreadPool> {
    Arc::new(
        sumac::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap(),
    )
}

/// Checks that both workers of a 2-worker pool are alive and serve it: a broadcast
/// reaches each of them (a worker killed by an escaping panic would hang it).
pub fn assert_both_workers_serve(pool: Arc<sumac::ThreadPool>) {
    assert_eq!(
        finishes("a broadcast afterwards", move || pool
            .broadcast(|ctx| ctx.index())),
        [0, 1],
        "a worker died"
    );
}

/// Drops `pool` on another thread and fails with `hang` if that takes a minute (a limit
/// that only turns a hang into a failure).
pub fn drop_within_a_minute(pool: sumac::ThreadPool, hang: &str) {
    let (dropped, done) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        drop(pool);
        dropped.send(()).unwrap();
    });
    done.recv_timeout(Duration::from_secs(60)).expect(hang);
}

/// A value whose destructor panics while `armed` (once: it disarms itself first).
pub struct Bomb {
    pub armed: Arc<AtomicBool>,
}

impl Drop for Bomb {
    fn drop(&mut self) {
        if self.armed.swap(false, Ordering::SeqCst) {
            panic!("bomb destructor");
        }
    }
}

/// Keeps the panic hook quiet about the panics a test plans: those whose message starts
/// with `prefix`. Every other panic is reported by the previous hook as usual.
///
/// The panic hook is process wide and the tests of a binary run at once, so they never
/// replace it themselves (a `take_hook` + `set_hook` pair is not atomic: two tests doing
/// it together lose one of their hooks). Instead this installs one hook, once per
/// process, that checks the prefixes registered here (each once, however often it is
/// registered). A planned panic then costs the hook a read lock and no printing, which
/// tests that time the reaction to a panic (`panic_fuse`) rely on.
pub fn quiet_planned_panics(prefix: &'static str) {
    static PLANNED: RwLock<Vec<&'static str>> = RwLock::new(Vec::new());
    static HOOK: Once = Once::new();
    {
        let mut planned = PLANNED.write().unwrap_or_else(PoisonError::into_inner);
        if !planned.contains(&prefix) {
            planned.push(prefix);
        }
    }
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = panic_message(info.payload());
            let planned = PLANNED
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .any(|prefix| message.starts_with(prefix));
            if !planned {
                previous(info);
            }
        }));
    });
}
