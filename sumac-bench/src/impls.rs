//! The implementations being compared, their thread pools, and the runner that
//! times one workload under one implementation at one thread count.

use std::fmt;
use std::num::NonZeroUsize;
use std::str::FromStr;
use std::time::{Duration, Instant};

use crate::measure::{measure, MeasureConfig, Progress, Sampling, Target};
use crate::policy::Policy;
use crate::workloads::Workload;

/// An implementation that can appear in `--impls`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Impl {
    /// Plain sequential code on the calling thread.
    Seq,
    /// sumac: `join` per fork / sumac's parallel iterators.
    Sumac,
    /// Rayon with default settings.
    Rayon,
    /// Rayon with the best `with_min_len` of a sweep (loop workloads only).
    RayonTuned,
    /// Chili: `Scope::join` per fork.
    Chili,
    /// The "parallel baseline": input split by hand, one part per thread, `std::thread::scope`.
    Static,
    /// Forte (`forte` 1.0.0-alpha.4, the newest release that builds on Rust 1.95): a
    /// heartbeat-scheduled pool with scopes, spawns and futures.
    Forte,
    // Message-passing peers (channel, ring, threadring and oneshot workloads).
    /// crossbeam-channel (OS threads).
    CrossbeamChannel,
    /// flume (OS threads).
    Flume,
    /// kanal (OS threads).
    Kanal,
    /// crossfire 3.x, its `mpmc` flavors (OS threads).
    Crossfire,
    /// `std::sync::mpsc` (OS threads; no MPMC, no select).
    StdMpsc,
    /// tokio's multi-thread runtime with tokio's channels.
    Tokio,
    /// smol's `async-executor` on N threads with `async-channel`.
    AsyncExecutor,
    /// One OS thread per task, linked by crossbeam-channel channels.
    Threads,
    /// Task graphs: OS worker threads pulling ready task ids from a crossbeam channel.
    ChannelPool,
    /// fork-overhead's floor: `join` as `(a(), b())` behind one run-time branch, no
    /// scheduler ([`BranchFloorJoin`]); runs only when named or in `fork-overhead`.
    BranchFloor,
}

impl Impl {
    /// Every implementation, in display order.
    pub const ALL: [Impl; 17] = [
        Impl::Seq,
        Impl::Sumac,
        Impl::Rayon,
        Impl::RayonTuned,
        Impl::Chili,
        Impl::Static,
        Impl::Forte,
        Impl::CrossbeamChannel,
        Impl::Flume,
        Impl::Kanal,
        Impl::Crossfire,
        Impl::StdMpsc,
        Impl::Tokio,
        Impl::AsyncExecutor,
        Impl::Threads,
        Impl::ChannelPool,
        Impl::BranchFloor,
    ];

    /// Whether the implementation runs only when `--impls` names it: forte 1.0.0-alpha.4
    /// deadlocks when its pool shrinks, so it runs only at thread counts that grow; the
    /// branch floor is a reference for `fork-overhead`, not a peer.
    pub fn only_when_named(self) -> bool {
        matches!(self, Impl::Forte | Impl::BranchFloor)
    }

    /// The name used in `--impls`, tables and CSV files.
    pub fn name(self) -> &'static str {
        match self {
            Impl::Seq => "seq",
            Impl::Sumac => "sumac",
            Impl::Rayon => "rayon",
            Impl::RayonTuned => "rayon-tuned",
            Impl::Chili => "chili",
            Impl::Static => "static",
            Impl::Forte => "forte",
            Impl::CrossbeamChannel => "crossbeam-channel",
            Impl::Flume => "flume",
            Impl::Kanal => "kanal",
            Impl::Crossfire => "crossfire",
            Impl::StdMpsc => "std-mpsc",
            Impl::Tokio => "tokio",
            Impl::AsyncExecutor => "async-executor",
            Impl::Threads => "threads",
            Impl::ChannelPool => "channel-pool",
            Impl::BranchFloor => "branch-floor",
        }
    }
}

impl fmt::Display for Impl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Impl {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Impl::ALL
            .into_iter()
            .find(|i| i.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Impl::ALL.iter().map(|i| i.name()).collect();
                format!(
                    "unknown implementation '{s}' (expected one of {})",
                    names.join(", ")
                )
            })
    }
}

/// A fork-join library whose `join` needs no explicit context.
pub trait Join {
    /// Runs `a` and `b`, potentially in parallel.
    fn join<RA: Send, RB: Send>(
        a: impl FnOnce() -> RA + Send,
        b: impl FnOnce() -> RB + Send,
    ) -> (RA, RB);
}

/// `sumac::join`.
pub struct SumacJoin;

impl Join for SumacJoin {
    #[inline(always)]
    fn join<RA: Send, RB: Send>(
        a: impl FnOnce() -> RA + Send,
        b: impl FnOnce() -> RB + Send,
    ) -> (RA, RB) {
        sumac::join(a, b)
    }
}

/// `rayon::join`.
pub struct RayonJoin;

impl Join for RayonJoin {
    #[inline(always)]
    fn join<RA: Send, RB: Send>(
        a: impl FnOnce() -> RA + Send,
        b: impl FnOnce() -> RB + Send,
    ) -> (RA, RB) {
        rayon::join(a, b)
    }
}

/// Never true in practice ([`arm_branch_floor`] stores whether the process has absurdly
/// many arguments), but the compiler cannot know: [`BranchFloorJoin`]'s branch stays a
/// real run-time test.
static NEVER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes [`NEVER`] depend on the command line (call once from `main`).
pub fn arm_branch_floor() {
    NEVER.store(
        std::env::args().len() > 1_000_000,
        std::sync::atomic::Ordering::Relaxed,
    );
}

/// The floor of any `join` that decides at run time whether to record its fork: no
/// scheduler at all, just `(a(), b())` behind one branch on a flag that is never set.
/// The branch alone matters because both ways out of it produce the results, and the
/// code after `join` must merge them: the compiler can no longer turn the call of `b`
/// into a loop, as it does in plain recursion, so every fork costs a call of its own.
pub struct BranchFloorJoin;

impl Join for BranchFloorJoin {
    #[inline(always)]
    fn join<RA: Send, RB: Send>(
        a: impl FnOnce() -> RA + Send,
        b: impl FnOnce() -> RB + Send,
    ) -> (RA, RB) {
        if NEVER.load(std::sync::atomic::Ordering::Relaxed) {
            return run_elsewhere(a, b);
        }
        (a(), b())
    }
}

/// The other way out of [`BranchFloorJoin`]'s branch (never taken).
#[cold]
#[inline(never)]
fn run_elsewhere<RA, RB>(a: impl FnOnce() -> RA, b: impl FnOnce() -> RB) -> (RA, RB) {
    let rb = b();
    (a(), rb)
}

/// The `with_min_len` values swept for `rayon-tuned`.
pub const MIN_LEN_SWEEP: [usize; 4] = [1, 16, 256, 4096];

/// The execution context a workload runs in; built inside the pool by the runner.
pub enum Ctx<'a, 's> {
    /// Sequential code on the current thread.
    Seq,
    /// Inside `sumac::ThreadPool::install`.
    Sumac,
    /// Inside `rayon::ThreadPool::install`, loops split with this `with_min_len`.
    Rayon {
        /// Minimum items per Rayon task (1 = Rayon's default).
        min_len: usize,
    },
    /// Inside one `chili::ThreadPool::scope`.
    Chili(&'a mut chili::Scope<'s>),
    /// Hand-split across `threads` scoped OS threads.
    Static {
        /// Number of parts / threads.
        threads: usize,
    },
    /// On the measuring thread, which forte's calls make a worker of its pool for the
    /// call ([`current_forte_pool`]).
    Forte,
    /// `threads` OS worker threads fed through a crossbeam channel (task graphs).
    ChannelPool {
        /// Number of worker threads.
        threads: usize,
    },
    /// On the calling thread, forks through [`BranchFloorJoin`].
    BranchFloor,
}

/// What the scheduler of a sumac pool did during one run, per second of wall time.
#[derive(Clone, Copy, Debug, Default)]
pub struct SumacActivity {
    /// Forks (`join` calls) per second.
    pub forks: f64,
    /// Promotions (forks made stealable) per second.
    pub promotions: f64,
    /// Jobs run by thieves (shared jobs run) per second.
    pub stolen: f64,
    /// Worker sleeps per second.
    pub sleeps: f64,
    /// Worker wake-ups per second.
    pub wakeups: f64,
    /// Heartbeat ticks made by members spinning for work, per second.
    pub spinner_ticks: f64,
    /// How calls made as the timed runs were spread over the workers.
    pub ramp_up: Option<RampUpSummary>,
}

/// The ramp-up of [`RAMP_UP_CALLS`] calls of a workload made as its timed runs were
/// (from the main thread, or inside the pool), measured with
/// `ThreadPool::measure_ramp_up` after sampling.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RampUpSummary {
    /// Calls measured.
    pub calls: usize,
    /// Workers of the pool.
    pub workers: usize,
    /// Whether the calling thread took part in the calls holding one of the pool's
    /// places (then all workers but one fill the pool).
    pub caller_held_a_place: bool,
    /// Calls in which every place of the pool ran part of the work.
    pub all_busy_calls: usize,
    /// Median, over those calls, of how long after the start the last place was filled.
    pub all_busy_after: Option<Duration>,
    /// Median number of pieces a call was cut into.
    pub pieces: u64,
    /// Median call time.
    pub call: Duration,
}

/// How many calls [`RampUpSummary`] measures: an odd number, for a median.
const RAMP_UP_CALLS: usize = 5;

/// The middle element of `values` (sorted in place); `None` if empty.
fn median_of<T: Ord + Copy>(values: &mut [T]) -> Option<T> {
    values.sort_unstable();
    values.get(values.len() / 2).copied()
}

impl RampUpSummary {
    /// Measures [`RAMP_UP_CALLS`] calls of `target` on `pool`, each from the calling
    /// thread when `from_main`, else inside `pool.install` (as the timed runs).
    fn measure<T: Target>(pool: &sumac::ThreadPool, from_main: bool, target: &mut T) -> Self {
        let mut ramp_ups = Vec::with_capacity(RAMP_UP_CALLS);
        for _ in 0..RAMP_UP_CALLS {
            if T::NEEDS_RESET {
                target.reset();
            }
            let ramp_up = if from_main {
                let run = &mut || target.run();
                pool.measure_ramp_up(|| pool.install(SendRun(run).into_fn()))
                    .1
            } else {
                let mut ramp_up = None;
                let mut call = || {
                    let (out, measured) = pool.measure_ramp_up(|| target.run());
                    ramp_up = Some(measured);
                    out
                };
                pool.install(SendRun(&mut call).into_fn());
                ramp_up.expect("the call ran")
            };
            ramp_ups.push(ramp_up);
        }
        let mut all_busy: Vec<Duration> =
            ramp_ups.iter().filter_map(|r| r.all_busy_after()).collect();
        RampUpSummary {
            calls: ramp_ups.len(),
            workers: pool.current_num_threads(),
            caller_held_a_place: ramp_ups.iter().all(|r| r.caller_held_a_place),
            all_busy_calls: all_busy.len(),
            all_busy_after: median_of(&mut all_busy),
            pieces: median_of(&mut ramp_ups.iter().map(|r| r.pieces).collect::<Vec<_>>())
                .unwrap_or(0),
            call: median_of(&mut ramp_ups.iter().map(|r| r.duration).collect::<Vec<_>>())
                .unwrap_or_default(),
        }
    }
}

impl SumacActivity {
    fn from_stats(d: sumac::WorkerStats, wall: Duration) -> Self {
        let s = wall.as_secs_f64().max(1e-9);
        SumacActivity {
            forks: d.forks as f64 / s,
            promotions: d.promotions as f64 / s,
            stolen: d.shared_jobs_run as f64 / s,
            sleeps: d.sleeps as f64 / s,
            wakeups: d.wakeups as f64 / s,
            spinner_ticks: d.ticks as f64 / s,
            ramp_up: None,
        }
    }
}

/// The outcome of timing one implementation at one thread count and parameter.
#[derive(Debug, Default)]
pub struct RunOutcome {
    /// Time per run of every sample, in nanoseconds.
    pub samples_ns: Vec<f64>,
    /// Time per run of the sequential reference, sampled alternately with `samples_ns`
    /// (empty for `seq` itself).
    pub reference_ns: Vec<f64>,
    /// Checksum of the first run's result (compared with `seq`).
    pub check: u64,
    /// Scheduler activity (sumac only).
    pub activity: Option<SumacActivity>,
    /// Timeline events recorded by sumac (feature `trace`, when requested).
    pub trace: Vec<sumac::trace::Event>,
    /// The line the workload's protocol reported, if any.
    pub note: Option<String>,
    /// Why the workload's protocol found a result wrong (a mismatch).
    pub failure: Option<String>,
}

/// A thread pool of one implementation, built once per thread count.
pub enum Pool {
    /// No pool: `seq` and `static` run from the calling thread.
    None,
    /// A sumac pool.
    Sumac(sumac::ThreadPool),
    /// A Rayon pool.
    Rayon(rayon::ThreadPool),
    /// A Chili pool.
    Chili(chili::ThreadPool),
    /// Forte's static pool, resized to `threads` workers. It is never emptied: shrinking
    /// it to zero deadlocks in forte 1.0.0-alpha.4 (its resize joins the heartbeat thread
    /// while holding the lock that thread waits for).
    Forte,
}

/// Forte's pools are statics; the bench resizes this one for each thread count.
static FORTE_POOL: forte::ThreadPool = forte::ThreadPool::new();

/// The size the bench last gave [`FORTE_POOL`].
static FORTE_SIZE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Runs `f` on a worker of forte's pool and waits for it: the measuring thread does not
/// become a worker itself (which forte makes of a thread that calls its pool), so the
/// pool has exactly the workers it was sized for.
fn on_forte_worker<F: FnOnce() -> R + Send, R: Send>(f: F) -> R {
    /// The closure and its result, handed to the worker by address.
    struct Call<F, R> {
        f: Option<F>,
        result: Option<R>,
    }
    /// Runs the call at `address` (a `Call<F, R>`).
    ///
    /// # Safety
    /// `address` is a live `Call<F, R>` that nothing else touches meanwhile.
    unsafe fn run<F: FnOnce() -> R, R>(address: usize) {
        // SAFETY: forwarded from the caller.
        let call = unsafe { &mut *(address as *mut Call<F, R>) };
        let f = call.f.take().expect("the call runs once");
        call.result = Some(f());
    }
    let mut call = Call {
        f: Some(f),
        result: None,
    };
    let address = std::ptr::addr_of_mut!(call) as usize;
    let runner: unsafe fn(usize) = run::<F, R>;
    let (done, finished) = std::sync::mpsc::channel::<()>();
    FORTE_POOL.spawn(move |_| {
        // SAFETY: `call` lives in the caller's frame until it received our message,
        // sent after the last use of the address, and the caller does not touch it
        // meanwhile.
        unsafe { runner(address) };
        let _ = done.send(());
    });
    finished
        .recv()
        .expect("the measuring job panicked on forte's worker");
    call.result.take().expect("the measuring job ran")
}

/// Forte's pool (sized for the current run).
pub fn current_forte_pool() -> &'static forte::ThreadPool {
    &FORTE_POOL
}

/// The pool of the run in progress, for workloads that must call it from a thread
/// outside the pool (spawns from outside, calls from `main`).
#[derive(Clone, Copy)]
pub enum PoolRef<'p> {
    /// A sumac pool.
    Sumac(&'p sumac::ThreadPool),
    /// A Rayon pool.
    Rayon(&'p rayon::ThreadPool),
}

/// The pool of the run in progress (see [`with_pool_set`]), as a type-erased pointer.
static CURRENT_POOL: std::sync::Mutex<Option<(usize, bool)>> = std::sync::Mutex::new(None);

/// Runs `f` with `pool` as the pool of the run in progress.
pub fn with_pool_set<R>(pool: PoolRef<'_>, f: impl FnOnce() -> R) -> R {
    let erased = match pool {
        PoolRef::Sumac(p) => (p as *const sumac::ThreadPool as usize, true),
        PoolRef::Rayon(p) => (p as *const rayon::ThreadPool as usize, false),
    };
    let previous = CURRENT_POOL.lock().unwrap().replace(erased);
    /// Restores the previous pool when `f` returns or unwinds.
    struct Restore(Option<(usize, bool)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            *CURRENT_POOL.lock().unwrap() = self.0;
        }
    }
    let _restore = Restore(previous);
    f()
}

/// Calls `f` with the pool of the run in progress.
///
/// # Panics
/// Outside [`with_pool_set`].
pub fn with_current_pool<R>(f: impl FnOnce(PoolRef<'_>) -> R) -> R {
    let (address, is_sumac) = CURRENT_POOL
        .lock()
        .unwrap()
        .expect("no pool is set for this run");
    // SAFETY: `with_pool_set` stores the address of a pool it borrows for as long as the
    // address is set, and the runs that read it happen inside that call.
    let pool = unsafe {
        if is_sumac {
            PoolRef::Sumac(&*(address as *const sumac::ThreadPool))
        } else {
            PoolRef::Rayon(&*(address as *const rayon::ThreadPool))
        }
    };
    f(pool)
}

impl Pool {
    /// Builds the pool `imp` needs for `threads` threads (a sumac pool with `policy`'s
    /// mechanisms switched off).
    pub fn build(imp: Impl, policy: &Policy, threads: usize) -> Result<Pool, String> {
        Ok(match imp {
            Impl::Seq
            | Impl::Static
            | Impl::CrossbeamChannel
            | Impl::Flume
            | Impl::Kanal
            | Impl::Crossfire
            | Impl::StdMpsc
            | Impl::Tokio
            | Impl::AsyncExecutor
            | Impl::Threads
            | Impl::ChannelPool
            | Impl::BranchFloor => Pool::None,
            Impl::Sumac => Pool::Sumac(policy.builder(threads).build().map_err(|e| {
                format!("cannot build a sumac pool of {threads} threads ({policy}): {e:?}")
            })?),
            Impl::Rayon | Impl::RayonTuned => Pool::Rayon(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .map_err(|e| format!("cannot build a rayon pool of {threads} threads: {e}"))?,
            ),
            Impl::Chili => Pool::Chili(chili::ThreadPool::with_config(chili::Config {
                thread_count: NonZeroUsize::new(threads),
                ..chili::Config::default()
            })),
            Impl::Forte => {
                let current = FORTE_SIZE.load(std::sync::atomic::Ordering::Relaxed);
                if threads < current {
                    return Err(format!(
                        "forte 1.0.0-alpha.4 cannot shrink its pool from {current} to {threads} threads (its resize deadlocks): give forte thread counts in increasing order, or one per run"
                    ));
                }
                FORTE_POOL.resize_to(threads.max(1));
                FORTE_SIZE.store(threads.max(1), std::sync::atomic::Ordering::Relaxed);
                Pool::Forte
            }
        })
    }
}

/// A workload bound to its state, context and parameter: what [`measure`] times.
struct Bound<'w, 'a, 's, W: Workload> {
    workload: &'w W,
    state: &'w mut W::State,
    ctx: Ctx<'a, 's>,
    param: u64,
}

impl<W: Workload> Target for Bound<'_, '_, '_, W> {
    const NEEDS_RESET: bool = W::NEEDS_RESET;
    fn reset(&mut self) {
        self.workload.reset(self.state);
    }
    #[inline(never)]
    fn run(&mut self) -> u64 {
        let w = std::hint::black_box(self.workload);
        w.run(&mut self.ctx, self.state, std::hint::black_box(self.param))
    }
    #[inline(never)]
    fn run_reference(&mut self) -> u64 {
        let w = std::hint::black_box(self.workload);
        w.run(&mut Ctx::Seq, self.state, std::hint::black_box(self.param))
    }
    fn check(&self, out: u64) -> u64 {
        self.workload.check(self.state, out)
    }
    fn protocol(&mut self) -> Result<Option<String>, String> {
        self.workload.protocol(&mut self.ctx, self.state)
    }
}

/// A target whose every run is one call into a pool from the measuring thread
/// (`--from-main`): `enter` makes the call, with the inner target's run as its closure.
struct CallPerRun<E, T> {
    enter: E,
    inner: T,
}

impl<E, T> Target for CallPerRun<E, T>
where
    E: FnMut(&mut dyn FnMut() -> u64) -> u64,
    T: Target,
{
    const NEEDS_RESET: bool = T::NEEDS_RESET;
    fn reset(&mut self) {
        self.inner.reset();
    }
    #[inline(never)]
    fn run(&mut self) -> u64 {
        let inner = &mut self.inner;
        (self.enter)(&mut || inner.run())
    }
    fn run_reference(&mut self) -> u64 {
        self.inner.run_reference()
    }
    fn check(&self, out: u64) -> u64 {
        self.inner.check(out)
    }
}

/// A run handed to a pool's `install` (which requires `Send`).
struct SendRun<'a>(&'a mut dyn FnMut() -> u64);

// SAFETY: `install` runs the closure while the calling thread waits for it (or on the
// calling thread itself), so nothing it borrows is used by two threads at once; the
// contexts of the runs handed over this way (`Ctx::Sumac`, `Ctx::Rayon`) hold no data
// tied to a thread.
unsafe impl Send for SendRun<'_> {}

impl<'a> SendRun<'a> {
    /// The closure to hand to `install` (a method, so that the closure captures the
    /// whole `Send` wrapper rather than its field).
    fn into_fn(self) -> impl FnOnce() -> u64 + Send + 'a {
        move || {
            let run = self;
            (run.0)()
        }
    }
}

/// Times `workload` with parameter `param` under `imp` at `threads` threads,
/// timing inside the pool so one cross-thread hand-off does not dominate tiny runs.
/// `min_len` is the Rayon split size (1 = default); `sampling` says whether `seq` is
/// sampled alternately with the implementation (never for `seq` itself).
#[allow(clippy::too_many_arguments)]
pub fn run_impl<W: Workload>(
    workload: &W,
    state: &mut W::State,
    imp: Impl,
    pool: &Pool,
    threads: usize,
    param: u64,
    min_len: usize,
    cfg: &MeasureConfig,
    sampling: Sampling,
    progress: &Progress,
    want_trace: bool,
) -> RunOutcome {
    let bind = |state, ctx| Bound {
        workload,
        state,
        ctx,
        param,
    };
    // Workloads that start their own threads or runtimes (channels, rings): every
    // implementation runs from the calling thread, told which one it is.
    if W::OWN_THREADS && imp != Impl::Seq {
        workload.select(state, imp);
        return measure(
            cfg,
            progress,
            &mut bind(state, Ctx::Static { threads }),
            sampling,
        );
    }
    match (imp, pool) {
        (Impl::Seq, _) => measure(cfg, progress, &mut bind(state, Ctx::Seq), Sampling::Alone),
        (Impl::Static, _) => measure(
            cfg,
            progress,
            &mut bind(state, Ctx::Static { threads }),
            sampling,
        ),
        (Impl::BranchFloor, _) => {
            measure(cfg, progress, &mut bind(state, Ctx::BranchFloor), sampling)
        }
        (Impl::ChannelPool, _) => measure(
            cfg,
            progress,
            &mut bind(state, Ctx::ChannelPool { threads }),
            sampling,
        ),
        (Impl::Sumac, Pool::Sumac(p)) => {
            drain_trace(p);
            let before = p.stats();
            let t0 = Instant::now();
            let mut out = with_pool_set(PoolRef::Sumac(p), || {
                if workload.starts_outside_pool() {
                    measure(cfg, progress, &mut bind(state, Ctx::Sumac), sampling)
                } else if cfg.from_main {
                    let mut calls = CallPerRun {
                        enter: |run: &mut dyn FnMut() -> u64| p.install(SendRun(run).into_fn()),
                        inner: bind(state, Ctx::Sumac),
                    };
                    measure(cfg, progress, &mut calls, sampling)
                } else {
                    p.install(|| measure(cfg, progress, &mut bind(state, Ctx::Sumac), sampling))
                }
            });
            let wall = t0.elapsed();
            let delta = p.stats().since(&before).total();
            let mut activity = SumacActivity::from_stats(delta, wall);
            if !workload.starts_outside_pool() {
                // Built here, not by `bind`: that closure borrows `state` for one lifetime,
                // which the timed runs above already hold.
                let mut target = Bound {
                    workload,
                    state,
                    ctx: Ctx::Sumac,
                    param,
                };
                activity.ramp_up = Some(with_pool_set(PoolRef::Sumac(p), || {
                    RampUpSummary::measure(p, cfg.from_main, &mut target)
                }));
            }
            out.activity = Some(activity);
            if want_trace {
                out.trace = take_trace(p);
            }
            out
        }
        (Impl::Rayon | Impl::RayonTuned, Pool::Rayon(p)) => {
            with_pool_set(PoolRef::Rayon(p), || {
                if workload.starts_outside_pool() {
                    measure(
                        cfg,
                        progress,
                        &mut bind(state, Ctx::Rayon { min_len }),
                        sampling,
                    )
                } else if cfg.from_main {
                    let mut calls = CallPerRun {
                        enter: |run: &mut dyn FnMut() -> u64| p.install(SendRun(run).into_fn()),
                        inner: bind(state, Ctx::Rayon { min_len }),
                    };
                    measure(cfg, progress, &mut calls, sampling)
                } else {
                    p.install(|| {
                        measure(
                            cfg,
                            progress,
                            &mut bind(state, Ctx::Rayon { min_len }),
                            sampling,
                        )
                    })
                }
            })
        }
        (Impl::Forte, Pool::Forte) if workload.starts_outside_pool() => {
            measure(cfg, progress, &mut bind(state, Ctx::Forte), sampling)
        }
        (Impl::Forte, Pool::Forte) => {
            on_forte_worker(|| measure(cfg, progress, &mut bind(state, Ctx::Forte), sampling))
        }
        (Impl::Chili, Pool::Chili(p)) => {
            let mut scope = p.scope();
            measure(
                cfg,
                progress,
                &mut bind(state, Ctx::Chili(&mut scope)),
                sampling,
            )
        }
        _ => unreachable!("pool does not match implementation {imp}"),
    }
}

#[cfg(feature = "trace")]
fn drain_trace(pool: &sumac::ThreadPool) {
    drop(pool.take_trace());
}

#[cfg(not(feature = "trace"))]
fn drain_trace(_pool: &sumac::ThreadPool) {}

#[cfg(feature = "trace")]
fn take_trace(pool: &sumac::ThreadPool) -> Vec<sumac::trace::Event> {
    crate::trace::truncate(pool.take_trace())
}

#[cfg(not(feature = "trace"))]
fn take_trace(_pool: &sumac::ThreadPool) -> Vec<sumac::trace::Event> {
    Vec::new()
}
