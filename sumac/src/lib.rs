//! sumac: a parallel runtime built on heartbeat scheduling.
//! (Temporary sequential stub: the real scheduler is being written; signatures are final.)
#![deny(unsafe_op_in_unsafe_fn)]

use std::any::Any;
use std::marker::PhantomData;
use std::time::Duration;

pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    (a(), b())
}

pub struct Scope<'scope> {
    _m: PhantomData<&'scope mut &'scope ()>,
}
impl<'scope> Scope<'scope> {
    pub fn spawn<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        body(self)
    }
}
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    op(&Scope { _m: PhantomData })
}
pub fn spawn<F: FnOnce() + Send + 'static>(f: F) {
    f()
}
pub fn current_num_threads() -> usize {
    1
}
pub fn current_thread_index() -> Option<usize> {
    None
}
pub fn global_stats() -> PoolStats {
    PoolStats::default()
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkerStats {
    pub forks: u64,
    pub heartbeats: u64,
    pub promotions: u64,
    pub shared_jobs_run: u64,
    pub sleeps: u64,
    pub wakeups: u64,
}
impl std::ops::Sub for WorkerStats {
    type Output = WorkerStats;
    fn sub(self, o: Self) -> Self {
        WorkerStats {
            forks: self.forks.saturating_sub(o.forks),
            heartbeats: self.heartbeats.saturating_sub(o.heartbeats),
            promotions: self.promotions.saturating_sub(o.promotions),
            shared_jobs_run: self.shared_jobs_run.saturating_sub(o.shared_jobs_run),
            sleeps: self.sleeps.saturating_sub(o.sleeps),
            wakeups: self.wakeups.saturating_sub(o.wakeups),
        }
    }
}
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    pub workers: Vec<WorkerStats>,
}
impl PoolStats {
    pub fn total(&self) -> WorkerStats {
        WorkerStats::default()
    }
    pub fn since(&self, earlier: &PoolStats) -> PoolStats {
        PoolStats { workers: self.workers.iter().zip(&earlier.workers).map(|(a, b)| *a - *b).collect() }
    }
}

#[derive(Debug)]
pub struct ThreadPoolBuildError;
#[derive(Default)]
pub struct ThreadPoolBuilder {
    n: usize,
}
impl ThreadPoolBuilder {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn num_threads(mut self, n: usize) -> Self {
        self.n = n;
        self
    }
    pub fn heartbeat_interval(self, _d: Duration) -> Self {
        self
    }
    pub fn stack_size(self, _b: usize) -> Self {
        self
    }
    pub fn thread_name<F: FnMut(usize) -> String + 'static>(self, _f: F) -> Self {
        self
    }
    pub fn panic_handler<H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static>(self, _h: H) -> Self {
        self
    }
    pub fn build(self) -> Result<ThreadPool, ThreadPoolBuildError> {
        Ok(ThreadPool { n: self.n.max(1) })
    }
    pub fn build_global(self) -> Result<(), ThreadPoolBuildError> {
        Ok(())
    }
}
pub struct ThreadPool {
    n: usize,
}
impl ThreadPool {
    pub fn install<OP: FnOnce() -> R + Send, R: Send>(&self, op: OP) -> R {
        op()
    }
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        join(a, b)
    }
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        scope(op)
    }
    pub fn spawn<F: FnOnce() + Send + 'static>(&self, f: F) {
        f()
    }
    pub fn current_num_threads(&self) -> usize {
        self.n
    }
    pub fn current_thread_index(&self) -> Option<usize> {
        None
    }
    pub fn stats(&self) -> PoolStats {
        PoolStats { workers: vec![WorkerStats::default(); self.n] }
    }
}

/// Crate-internal: run `op` on a worker of the current pool (or the global pool).
#[allow(dead_code)]
pub(crate) fn in_worker<OP: FnOnce() -> R + Send, R: Send>(op: OP) -> R {
    op()
}

/// Crate-internal: a cheap handle on the current worker's heartbeat flag.
#[allow(dead_code)]
pub(crate) struct HeartbeatPoll {
    _p: (),
}
#[allow(dead_code)]
impl HeartbeatPoll {
    /// The poll handle for the calling thread (never fires outside a pool).
    pub(crate) fn current() -> Self {
        HeartbeatPoll { _p: () }
    }
    /// True when a heartbeat (or an idle worker's request) is pending: the caller should
    /// fork part of its remaining work with [`join`] now; the join's own poll then promotes
    /// the oldest pending fork of this worker.
    #[inline(always)]
    pub(crate) fn pending(&self) -> bool {
        false
    }
}

/// Per-worker event timeline (cargo feature `trace`).
#[cfg(feature = "trace")]
pub mod trace {
    /// What a worker did.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum EventKind {
        JobStart,
        JobEnd,
        Promotion,
        Sleep,
        Wake,
    }
    /// One recorded event.
    #[derive(Clone, Copy, Debug)]
    pub struct Event {
        pub worker: usize,
        pub kind: EventKind,
        /// Nanoseconds since a process-wide epoch (the first event recorded by any pool).
        pub time_ns: u64,
    }
}

#[cfg(feature = "trace")]
impl ThreadPool {
    /// Drains the events recorded by this pool's workers so far, sorted by time.
    pub fn take_trace(&self) -> Vec<trace::Event> {
        Vec::new()
    }
}
