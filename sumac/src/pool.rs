//! `ThreadPoolBuilder` and `ThreadPool`.

use std::any::Any;
use std::error::Error;
use std::fmt;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::policy::{Mechanism, Mechanisms};
use crate::registration;
use crate::registry::{self, Registry};
use crate::stats::PoolStats;
use crate::thread_builder::{CustomSpawn, DefaultSpawn, ThreadBuilder, ThreadSpawn};
use crate::worker::WorkerThread;
use crate::{join, scope, spawn, Scope};

/// The type of a pool's panic handler.
pub(crate) type PanicHandler = dyn Fn(Box<dyn Any + Send>) + Send + Sync;

/// The type of a pool's start and exit handlers (called with the worker's index).
pub(crate) type ThreadHandler = dyn Fn(usize) + Send + Sync;

/// The default heartbeat interval: how often a busy worker shares its oldest fork.
///
/// ```
/// use std::time::Duration;
/// assert_eq!(sumac::DEFAULT_HEARTBEAT_INTERVAL, Duration::from_micros(100));
/// // A pool that checks for work to share half as often as the default:
/// let pool = sumac::ThreadPoolBuilder::new()
///     .num_threads(2)
///     .heartbeat_interval(sumac::DEFAULT_HEARTBEAT_INTERVAL * 2)
///     .build()
///     .unwrap();
/// assert_eq!(pool.join(|| 'x', || 'y'), ('x', 'y'));
/// ```
pub const DEFAULT_HEARTBEAT_INTERVAL: Duration = Duration::from_micros(100);

/// Configures and builds a [`ThreadPool`] (or the global pool).
///
/// ```
/// use std::time::Duration;
/// let pool = sumac::ThreadPoolBuilder::new()
///     .num_threads(4)
///     .heartbeat_interval(Duration::from_micros(50))
///     .thread_name(|i| format!("my-worker-{i}"))
///     .build()
///     .unwrap();
/// assert_eq!(pool.current_num_threads(), 4);
/// ```
pub struct ThreadPoolBuilder<S = DefaultSpawn> {
    num_threads: usize,
    heartbeat_interval: Duration,
    stack_size: Option<usize>,
    thread_name: Option<Box<dyn FnMut(usize) -> String>>,
    panic_handler: Option<Box<PanicHandler>>,
    start_handler: Option<Box<ThreadHandler>>,
    exit_handler: Option<Box<ThreadHandler>>,
    use_current_thread: bool,
    /// Mechanisms switched on or off by [`mechanism`](Self::mechanism), in call order.
    mechanism_overrides: Vec<(Mechanism, bool)>,
    /// See [`force_splits`](Self::force_splits).
    forced_splits: u32,
    spawn: S,
}

impl Default for ThreadPoolBuilder {
    fn default() -> Self {
        ThreadPoolBuilder {
            num_threads: 0,
            heartbeat_interval: DEFAULT_HEARTBEAT_INTERVAL,
            stack_size: None,
            thread_name: None,
            panic_handler: None,
            start_handler: None,
            exit_handler: None,
            use_current_thread: false,
            mechanism_overrides: Vec::new(),
            forced_splits: 0,
            spawn: DefaultSpawn,
        }
    }
}

impl<S> fmt::Debug for ThreadPoolBuilder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPoolBuilder")
            .field("num_threads", &self.num_threads)
            .field("heartbeat_interval", &self.heartbeat_interval)
            .field("stack_size", &self.stack_size)
            .field("thread_name", &self.thread_name.is_some())
            .field("panic_handler", &self.panic_handler.is_some())
            .field("start_handler", &self.start_handler.is_some())
            .field("exit_handler", &self.exit_handler.is_some())
            .field("use_current_thread", &self.use_current_thread)
            .field("mechanism_overrides", &self.mechanism_overrides)
            .field("forced_splits", &self.forced_splits)
            .finish()
    }
}

/// A builder's settings, validated.
pub(crate) struct Config {
    pub(crate) num_threads: usize,
    pub(crate) heartbeat_interval: Duration,
    pub(crate) stack_size: Option<usize>,
    pub(crate) thread_name: Box<dyn FnMut(usize) -> String>,
    pub(crate) panic_handler: Option<Box<PanicHandler>>,
    pub(crate) start_handler: Option<Box<ThreadHandler>>,
    pub(crate) exit_handler: Option<Box<ThreadHandler>>,
    pub(crate) use_current_thread: bool,
    pub(crate) mechanisms: Mechanisms,
    pub(crate) forced_splits: u32,
}

impl ThreadPoolBuilder {
    /// A builder with default settings: one thread per available core, a 100 µs
    /// heartbeat, the platform's default stack size, and aborting on a `spawn` panic.
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().build().unwrap();
    /// // One thread per core (or `SUMAC_NUM_THREADS`): at least one either way.
    /// assert!(pool.current_num_threads() >= 1);
    /// let names = pool.broadcast(|_| std::thread::current().name().unwrap().to_owned());
    /// assert_eq!(names[0], "sumac-worker-0");
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds a pool whose workers run on threads of a [`std::thread::scope`], so that
    /// `wrapper` (which must call [`ThreadBuilder::run`]) may borrow from the caller, for
    /// example to set up thread-local state around each worker. `with_pool` gets the
    /// pool; when it returns, the pool is dropped and every worker has returned before
    /// `build_scoped` does.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let started = AtomicUsize::new(0); // borrowed by the workers, not 'static
    /// let sum = sumac::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .build_scoped(
    ///         |thread| {
    ///             started.fetch_add(1, Ordering::SeqCst);
    ///             thread.run()
    ///         },
    ///         |pool| pool.install(|| sumac::join(|| 1, || 2)),
    ///     )
    ///     .unwrap();
    /// assert_eq!(sum, (1, 2));
    /// assert_eq!(started.load(Ordering::SeqCst), 2);
    /// ```
    ///
    /// # Errors
    /// As [`build`](Self::build); `with_pool` is then not called.
    ///
    /// # Panics
    /// Re-raises a panic of `with_pool` (after the workers returned). A panic of
    /// `wrapper` on a worker thread is re-raised too, when the scope ends, as
    /// [`std::thread::scope`] does.
    pub fn build_scoped<W, F, R>(self, wrapper: W, with_pool: F) -> Result<R, ThreadPoolBuildError>
    where
        W: Fn(ThreadBuilder) + Sync,
        F: FnOnce(&ThreadPool) -> R,
    {
        std::thread::scope(|scope| {
            let wrapper = &wrapper;
            let pool = self
                .spawn_handler(|thread| {
                    let mut builder = std::thread::Builder::new();
                    if let Some(name) = thread.name() {
                        builder = builder.name(name.to_owned());
                    }
                    if let Some(stack_size) = thread.stack_size() {
                        builder = builder.stack_size(stack_size);
                    }
                    builder.spawn_scoped(scope, move || wrapper(thread))?;
                    Ok(())
                })
                .build()?;
            let result = panic::catch_unwind(AssertUnwindSafe(|| with_pool(&pool)));
            drop(pool);
            match result {
                Ok(value) => Ok(value),
                Err(payload) => panic::resume_unwind(payload),
            }
        })
    }
}

impl<S> ThreadPoolBuilder<S> {
    /// The number of worker threads. `0` (the default) chooses automatically, as in Rayon:
    /// the `SUMAC_NUM_THREADS` environment variable if it holds a positive number (the
    /// counterpart of `RAYON_NUM_THREADS`), else one thread per available core (as
    /// reported by [`std::thread::available_parallelism`]). With the `rayon-num-threads`
    /// feature (which the `rayon` and `rayon-core` stand-in crates turn on),
    /// `RAYON_NUM_THREADS` and `RAYON_RS_NUM_CPUS` are read as Rayon reads them when
    /// `SUMAC_NUM_THREADS` is not set: `SUMAC_NUM_THREADS` wins.
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// assert_eq!(pool.current_num_threads(), 3);
    /// ```
    pub fn num_threads(mut self, num_threads: usize) -> Self {
        self.num_threads = num_threads;
        self
    }

    /// How often a busy worker hands its oldest un-run fork to idle workers (default
    /// 100 µs). Shorter intervals share work sooner at a higher bookkeeping cost; a zero
    /// interval is rejected by [`build`](Self::build).
    ///
    /// ```
    /// use std::time::Duration;
    /// use sumac::prelude::*;
    /// let pool = sumac::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .heartbeat_interval(Duration::from_millis(1))
    ///     .build()
    ///     .unwrap();
    /// // The interval changes when work is shared, never the result.
    /// let sum: u64 = pool.install(|| (1..=10_000u64).into_par_iter().sum());
    /// assert_eq!(sum, 50_005_000);
    /// ```
    pub fn heartbeat_interval(mut self, interval: Duration) -> Self {
        self.heartbeat_interval = interval;
        self
    }

    /// The stack size of each worker thread, in bytes (deep recursion needs large stacks).
    ///
    /// ```
    /// fn depth(n: u64) -> u64 {
    ///     if n == 0 {
    ///         0
    ///     } else {
    ///         1 + depth(std::hint::black_box(n - 1))
    ///     }
    /// }
    /// let pool = sumac::ThreadPoolBuilder::new()
    ///     .num_threads(1)
    ///     .stack_size(64 * 1024 * 1024)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(pool.install(|| depth(200_000)), 200_000);
    /// ```
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Names worker threads: `thread_name(index)` (default `sumac-worker-{index}`).
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .thread_name(|index| format!("solver-{index}"))
    ///     .build()
    ///     .unwrap();
    /// let names = pool.broadcast(|_| std::thread::current().name().map(str::to_owned));
    /// assert_eq!(names, [Some("solver-0".to_owned()), Some("solver-1".to_owned())]);
    /// ```
    pub fn thread_name<F>(mut self, thread_name: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.thread_name = Some(Box::new(thread_name));
        self
    }

    /// What to do with the panic of a `spawn`ed job (or of a start or exit handler).
    /// Without a handler the process aborts (as in Rayon), because nobody could otherwise
    /// observe the panic.
    ///
    /// # Panics
    /// If the handler itself panics, the process aborts (as in Rayon): that panic would
    /// otherwise unwind the worker that ran the job.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let panics = Arc::new(AtomicUsize::new(0));
    /// let counter = Arc::clone(&panics);
    /// let pool = sumac::ThreadPoolBuilder::new()
    ///     .num_threads(1)
    ///     .panic_handler(move |_| {
    ///         counter.fetch_add(1, Ordering::SeqCst);
    ///     })
    ///     .build()
    ///     .unwrap();
    /// pool.spawn(|| panic!("boom"));
    /// drop(pool); // waits for the spawned job
    /// assert_eq!(panics.load(Ordering::SeqCst), 1);
    /// ```
    pub fn panic_handler<H>(mut self, handler: H) -> Self
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.panic_handler = Some(Box::new(handler));
        self
    }

    /// Called on each worker thread when it starts, with its index, before it runs any
    /// job (inside, [`current_thread_index`](crate::current_thread_index) already
    /// answers). A panic in it goes to the [panic handler](Self::panic_handler) (no
    /// handler: abort), and the worker then starts normally.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let started = Arc::new(AtomicUsize::new(0));
    /// let counter = Arc::clone(&started);
    /// let pool = sumac::ThreadPoolBuilder::new()
    ///     .num_threads(3)
    ///     .start_handler(move |index| {
    ///         assert_eq!(sumac::current_thread_index(), Some(index));
    ///         counter.fetch_add(1, Ordering::SeqCst);
    ///     })
    ///     .build()
    ///     .unwrap();
    /// pool.install(|| ()); // at least one worker is up
    /// drop(pool); // joins all three
    /// assert_eq!(started.load(Ordering::SeqCst), 3);
    /// ```
    pub fn start_handler<H>(mut self, handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.start_handler = Some(Box::new(handler));
        self
    }

    /// Called on each worker thread with its index when the pool shuts down, after the
    /// worker ran its last job. Panics are handled as for
    /// [`start_handler`](Self::start_handler).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let exited = Arc::new(AtomicUsize::new(0));
    /// let counter = Arc::clone(&exited);
    /// let pool = sumac::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .exit_handler(move |_index| {
    ///         counter.fetch_add(1, Ordering::SeqCst);
    ///     })
    ///     .build()
    ///     .unwrap();
    /// drop(pool);
    /// assert_eq!(exited.load(Ordering::SeqCst), 2);
    /// ```
    pub fn exit_handler<H>(mut self, handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.exit_handler = Some(Box::new(handler));
        self
    }

    /// Starts the workers with `spawn` instead of [`std::thread::Builder`]: it is called
    /// once per worker with a [`ThreadBuilder`], and must start a thread that calls
    /// [`ThreadBuilder::run`] (for example a thread of another library, or one with
    /// special settings). An error it returns makes [`build`](Self::build) fail.
    ///
    /// The pool still joins its workers when dropped (off the workers of any pool): it
    /// waits until every worker returned from `run` (a `ThreadBuilder` that is dropped
    /// without running counts as returned, but the pool then has a worker that never
    /// runs: jobs addressed to it, such as [`broadcast`](crate::broadcast()) ones, would
    /// wait forever). sumac's heartbeat thread is not a worker and is still started with
    /// `std::thread`.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// let handles = Arc::new(Mutex::new(Vec::new()));
    /// let kept = Arc::clone(&handles);
    /// let pool = sumac::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .spawn_handler(move |thread| {
    ///         let handle = std::thread::Builder::new().spawn(|| thread.run())?;
    ///         kept.lock().unwrap().push(handle);
    ///         Ok(())
    ///     })
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(pool.install(|| sumac::join(|| 1, || 2)), (1, 2));
    /// drop(pool); // waits for both workers
    /// for handle in handles.lock().unwrap().drain(..) {
    ///     assert!(handle.is_finished() || handle.join().is_ok());
    /// }
    /// ```
    pub fn spawn_handler<F>(self, spawn: F) -> ThreadPoolBuilder<CustomSpawn<F>>
    where
        F: FnMut(ThreadBuilder) -> io::Result<()>,
    {
        ThreadPoolBuilder {
            num_threads: self.num_threads,
            heartbeat_interval: self.heartbeat_interval,
            stack_size: self.stack_size,
            thread_name: self.thread_name,
            panic_handler: self.panic_handler,
            start_handler: self.start_handler,
            exit_handler: self.exit_handler,
            use_current_thread: self.use_current_thread,
            mechanism_overrides: self.mechanism_overrides,
            forced_splits: self.forced_splits,
            spawn: CustomSpawn::new(spawn),
        }
    }

    /// Makes the thread that calls [`build`](Self::build) (or
    /// [`build_global`](Self::build_global)) worker 0 of the pool, instead of starting a
    /// thread for it; start and exit handlers do not run for it. The thread does not run
    /// the worker loop: it keeps doing its own work and acts as worker 0 only while it
    /// is inside a call into the pool (`install`, `join`, `scope`, a parallel iterator,
    /// `broadcast`, `yield_now`...). So jobs addressed to it (a `broadcast` from another
    /// thread) wait until it next calls into the pool, and jobs it `spawn`s while not
    /// inside such a call run on the other workers (with a single worker: at its next
    /// call, or when it drops the pool).
    ///
    /// Drop the pool on this thread: that runs the jobs left for worker 0 and ends the
    /// registration. (Dropped elsewhere, the thread notices at its next call and stops
    /// acting as worker 0; jobs addressed to it are then never run.)
    ///
    /// ```
    /// let here = std::thread::current().id();
    /// let pool = sumac::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .use_current_thread()
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(sumac::current_thread_index(), Some(0));
    /// assert_eq!(pool.install(|| std::thread::current().id()), here);
    /// assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1]);
    /// drop(pool);
    /// assert_eq!(sumac::current_thread_index(), None);
    /// ```
    ///
    /// # Errors
    /// [`build`](Self::build) fails with
    /// [`CurrentThreadAlreadyInPool`](ThreadPoolBuildErrorKind::CurrentThreadAlreadyInPool)
    /// if the calling thread is already a worker of a pool (or worker 0 of another one).
    pub fn use_current_thread(mut self) -> Self {
        self.use_current_thread = true;
        self
    }

    /// Accepted for source compatibility with Rayon, where it is deprecated too; it
    /// changes nothing. A sumac worker always runs its own newest jobs first (depth
    /// first, which keeps the oldest, biggest ones for sharing); for first-in,
    /// first-out order use [`spawn_fifo`](crate::spawn_fifo) or
    /// [`scope_fifo`](crate::scope_fifo).
    ///
    /// ```
    /// use std::sync::Mutex;
    /// #[allow(deprecated)]
    /// let pool = sumac::ThreadPoolBuilder::new()
    ///     .num_threads(1)
    ///     .breadth_first()
    ///     .build()
    ///     .unwrap();
    /// let order = Mutex::new(Vec::new());
    /// pool.scope(|s| {
    ///     for i in 0..3 {
    ///         let order = &order;
    ///         s.spawn(move |_| order.lock().unwrap().push(i));
    ///     }
    /// });
    /// // Still newest first on the one worker, as without `breadth_first`.
    /// assert_eq!(order.into_inner().unwrap(), [2, 1, 0]);
    /// ```
    #[deprecated(note = "has no effect in sumac; use `spawn_fifo` or `scope_fifo` for FIFO order")]
    pub fn breadth_first(self) -> Self {
        self
    }

    /// Whether a thread outside the pool that calls into it ([`install`], `join`,
    /// `scope`, a parallel iterator, directly or on the global pool) runs the call
    /// itself, taking part in the pool for its duration (`true`, the default), or hands
    /// it to a worker and blocks until it is done (`false`, as in Rayon).
    ///
    /// Taking part, the caller runs the work on its own stack as a member of the pool:
    /// its forks are shared with idle workers at heartbeats like a worker's, so work
    /// that finishes before anyone could help costs what the sequential code costs (no
    /// hand-over to a worker and back, which costs tens of microseconds when the
    /// workers sleep), and work that lasts spreads to the workers. What the caller runs
    /// sees the caller's thread: its thread-locals, its name, its stack (so a pool
    /// built with [`stack_size`](Self::stack_size) never lets callers take part),
    /// and [`current_thread_index`](crate::current_thread_index) is `None` there. At
    /// most a few callers take part at once; further ones hand their calls over.
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// assert_eq!(pool.install(sumac::current_thread_index), None); // ran right here
    /// let rayon_like = sumac::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .callers_take_part(false)
    ///     .build()
    ///     .unwrap();
    /// assert!(rayon_like.install(sumac::current_thread_index).is_some()); // on a worker
    /// ```
    ///
    /// [`install`]: ThreadPool::install
    pub fn callers_take_part(self, take_part: bool) -> Self {
        self.mechanism(Mechanism::Guests, take_part)
    }

    /// Switches one of the scheduler's heuristics on or off, to measure what it does
    /// (see `sumac/src/policy.rs`; `SUMAC_MECHANISMS=-name,...` does the same for every
    /// pool, and this call overrides it). Not a stable interface.
    #[doc(hidden)]
    pub fn mechanism(mut self, mechanism: Mechanism, on: bool) -> Self {
        self.mechanism_overrides.push((mechanism, on));
        self
    }

    /// A testing aid: makes the pool's parallel loops split on average once every
    /// `every` blocks of at most three items, whether or not a worker asks for work (0,
    /// the default, turns it off). Not a stable interface.
    #[doc(hidden)]
    pub fn force_splits(mut self, every: u32) -> Self {
        self.forced_splits = every;
        self
    }
}

impl<S: ThreadSpawn> ThreadPoolBuilder<S> {
    /// Builds the pool and starts its threads.
    ///
    /// ```
    /// let error = sumac::ThreadPoolBuilder::new()
    ///     .heartbeat_interval(std::time::Duration::ZERO)
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(error.kind(), sumac::ThreadPoolBuildErrorKind::ZeroHeartbeatInterval);
    /// ```
    ///
    /// # Errors
    /// A zero heartbeat interval, or the OS refusing to start a thread.
    pub fn build(self) -> Result<ThreadPool, ThreadPoolBuildError> {
        Ok(ThreadPool {
            registry: Registry::new(self)?,
        })
    }

    /// Builds the global pool used by [`join`](crate::join()), [`scope`](crate::scope()),
    /// [`spawn`](crate::spawn()) and parallel iterators outside any pool.
    ///
    /// ```
    /// use sumac::ThreadPoolBuildErrorKind;
    /// // Before anything in this process used the global pool:
    /// sumac::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .build_global()
    ///     .unwrap();
    /// assert_eq!(sumac::current_num_threads(), 2);
    /// assert_eq!(sumac::join(|| 1, || 2), (1, 2)); // runs on that pool
    ///
    /// let again = sumac::ThreadPoolBuilder::new().num_threads(3).build_global();
    /// assert_eq!(
    ///     again.unwrap_err().kind(),
    ///     ThreadPoolBuildErrorKind::GlobalPoolAlreadyInitialized
    /// );
    /// assert_eq!(sumac::current_num_threads(), 2); // unchanged
    /// ```
    ///
    /// # Errors
    /// Fails (and changes nothing) if the global pool already exists, which happens on
    /// first use of any of those functions; also fails like [`build`](Self::build).
    pub fn build_global(self) -> Result<(), ThreadPoolBuildError> {
        registry::set_global_registry(self)
    }

    pub(crate) fn into_config(self) -> Result<(Config, S), ThreadPoolBuildError> {
        if self.heartbeat_interval.is_zero() {
            return Err(ThreadPoolBuildError {
                kind: ThreadPoolBuildErrorKind::ZeroHeartbeatInterval,
                source: None,
            });
        }
        let num_threads = match self.num_threads {
            0 => default_num_threads(),
            n => n,
        }
        .min(crate::max_num_threads());
        let mut mechanisms = match std::env::var(MECHANISMS_VARIABLE) {
            Ok(list) => {
                Mechanisms::default()
                    .apply(&list)
                    .map_err(|message| ThreadPoolBuildError {
                        kind: ThreadPoolBuildErrorKind::InvalidMechanisms,
                        source: Some(io::Error::new(
                            io::ErrorKind::InvalidInput,
                            format!("{MECHANISMS_VARIABLE}: {message}"),
                        )),
                    })?
            }
            Err(_) => Mechanisms::default(),
        };
        for &(mechanism, on) in &self.mechanism_overrides {
            mechanisms = mechanisms.with(mechanism, on);
        }
        let config = Config {
            num_threads,
            heartbeat_interval: self.heartbeat_interval,
            stack_size: self.stack_size,
            thread_name: self
                .thread_name
                .unwrap_or_else(|| Box::new(|index| format!("sumac-worker-{index}"))),
            panic_handler: self.panic_handler,
            start_handler: self.start_handler,
            exit_handler: self.exit_handler,
            use_current_thread: self.use_current_thread,
            mechanisms,
            forced_splits: self.forced_splits,
        };
        Ok((config, self.spawn))
    }
}

/// The environment variable that switches mechanisms off (or on) in every pool.
const MECHANISMS_VARIABLE: &str = "SUMAC_MECHANISMS";

/// The thread count `num_threads(0)` stands for: `SUMAC_NUM_THREADS` if it holds a
/// positive number; with the `rayon-num-threads` feature, then Rayon's variables as Rayon
/// reads them; else one per available core.
fn default_num_threads() -> usize {
    let cores = || std::thread::available_parallelism().map_or(1, |n| n.get());
    std::env::var("SUMAC_NUM_THREADS")
        .ok()
        .and_then(|value| value.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .or_else(rayon_num_threads)
        .unwrap_or_else(cores)
}

/// The thread count Rayon's variables ask for, read as rayon-core 1.13 reads them:
/// `RAYON_NUM_THREADS` if it is a number (`0` standing for one thread per core, given
/// here as `None`), else the deprecated `RAYON_RS_NUM_CPUS` if it is a positive number.
/// Always `None` without the `rayon-num-threads` feature.
fn rayon_num_threads() -> Option<usize> {
    if !cfg!(feature = "rayon-num-threads") {
        return None;
    }
    let read = |name| std::env::var(name).ok()?.parse::<usize>().ok();
    match read("RAYON_NUM_THREADS") {
        Some(n) => Some(n).filter(|&n| n > 0),
        None => read("RAYON_RS_NUM_CPUS").filter(|&n| n > 0),
    }
}

/// Why a pool could not be built (see [`ThreadPoolBuildError::kind`]).
///
/// ```
/// use sumac::ThreadPoolBuildErrorKind;
/// let error = sumac::ThreadPoolBuilder::new()
///     .heartbeat_interval(std::time::Duration::ZERO)
///     .build()
///     .unwrap_err();
/// // The enum is `#[non_exhaustive]`: a `match` needs a catch-all arm.
/// let retry_with_defaults = match error.kind() {
///     ThreadPoolBuildErrorKind::ZeroHeartbeatInterval => true,
///     _ => false,
/// };
/// assert!(retry_with_defaults);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ThreadPoolBuildErrorKind {
    /// [`ThreadPoolBuilder::heartbeat_interval`] was zero.
    ZeroHeartbeatInterval,
    /// [`ThreadPoolBuilder::build_global`] was called after the global pool existed.
    GlobalPoolAlreadyInitialized,
    /// The operating system refused to start a thread.
    ThreadSpawn,
    /// [`ThreadPoolBuilder::use_current_thread`] on a thread that is already a worker of
    /// a pool.
    CurrentThreadAlreadyInPool,
    /// `SUMAC_MECHANISMS` names a mechanism that does not exist (the error's source says
    /// which).
    InvalidMechanisms,
}

/// The error of [`ThreadPoolBuilder::build`] and [`ThreadPoolBuilder::build_global`].
///
/// ```
/// use std::error::Error;
/// let error = sumac::ThreadPoolBuilder::new()
///     .heartbeat_interval(std::time::Duration::ZERO)
///     .build()
///     .unwrap_err();
/// assert_eq!(error.to_string(), "The heartbeat interval must not be zero.");
/// assert!(error.source().is_none()); // only a failed thread start has a source
/// ```
#[derive(Debug)]
pub struct ThreadPoolBuildError {
    kind: ThreadPoolBuildErrorKind,
    source: Option<io::Error>,
}

impl ThreadPoolBuildError {
    /// What went wrong.
    ///
    /// ```
    /// use sumac::ThreadPoolBuildErrorKind;
    /// let result = sumac::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .heartbeat_interval(std::time::Duration::ZERO)
    ///     .build();
    /// assert_eq!(
    ///     result.unwrap_err().kind(),
    ///     ThreadPoolBuildErrorKind::ZeroHeartbeatInterval
    /// );
    /// ```
    pub fn kind(&self) -> ThreadPoolBuildErrorKind {
        self.kind
    }

    pub(crate) fn spawn(error: io::Error) -> Self {
        ThreadPoolBuildError {
            kind: ThreadPoolBuildErrorKind::ThreadSpawn,
            source: Some(error),
        }
    }

    pub(crate) fn current_thread_already_in_pool() -> Self {
        ThreadPoolBuildError {
            kind: ThreadPoolBuildErrorKind::CurrentThreadAlreadyInPool,
            source: None,
        }
    }

    pub(crate) fn global_already_initialized() -> Self {
        ThreadPoolBuildError {
            kind: ThreadPoolBuildErrorKind::GlobalPoolAlreadyInitialized,
            source: None,
        }
    }
}

/// The messages read as Rayon's do (code that matches on them keeps working); a failed
/// thread start displays the operating system's error, which is also the `source`.
impl fmt::Display for ThreadPoolBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind, &self.source) {
            (ThreadPoolBuildErrorKind::ThreadSpawn, Some(error)) => error.fmt(f),
            (ThreadPoolBuildErrorKind::ThreadSpawn, None) => {
                f.write_str("A worker thread could not be started.")
            }
            (ThreadPoolBuildErrorKind::ZeroHeartbeatInterval, _) => {
                f.write_str("The heartbeat interval must not be zero.")
            }
            (ThreadPoolBuildErrorKind::GlobalPoolAlreadyInitialized, _) => {
                f.write_str("The global thread pool has already been initialized.")
            }
            (ThreadPoolBuildErrorKind::CurrentThreadAlreadyInPool, _) => {
                f.write_str("The current thread is already part of another thread pool.")
            }
            (ThreadPoolBuildErrorKind::InvalidMechanisms, Some(error)) => error.fmt(f),
            (ThreadPoolBuildErrorKind::InvalidMechanisms, None) => {
                f.write_str("SUMAC_MECHANISMS names an unknown mechanism.")
            }
        }
    }
}

impl Error for ThreadPoolBuildError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.source
            .as_ref()
            .map(|error| error as &(dyn Error + 'static))
    }
}

/// A pool of worker threads scheduled by heartbeats.
///
/// Dropping the pool lets queued and running work finish, including spawned jobs and
/// whatever they queue while they run (a `spawn_broadcast` from a spawned job still
/// reaches every worker), then joins the threads. Dropped on a worker of any pool (its
/// own or another, including a thread that is worker 0 of another pool through
/// [`use_current_thread`](ThreadPoolBuilder::use_current_thread)), it does not block
/// that worker: the threads are detached instead, and exit on their own once that work
/// is done (so two pools dropped on each other's workers cannot deadlock).
///
/// ```
/// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// let sum: u64 = pool.install(|| {
///     let (a, b) = sumac::join(|| (1..=50u64).sum::<u64>(), || (51..=100u64).sum::<u64>());
///     a + b
/// });
/// assert_eq!(sum, 5050);
/// ```
pub struct ThreadPool {
    registry: Arc<Registry>,
}

impl ThreadPool {
    /// The pool's shared state (for crate-internal entry points: `spawn_future`, task
    /// graphs bound to this pool).
    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }
}

impl fmt::Debug for ThreadPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPool")
            .field("num_threads", &self.registry.num_threads())
            .finish()
    }
}

impl ThreadPool {
    /// Runs `op` in this pool and returns its result: inside `op`, `join`, `scope` and
    /// parallel iterators use this pool. On a worker of this pool, `op` runs directly.
    /// From a thread outside any pool, the caller runs `op` itself, taking part in the
    /// pool until it returns (see [`ThreadPoolBuilder::callers_take_part`]; with that
    /// off, or when every caller seat is taken, `op` runs on a worker and the caller
    /// blocks). From a worker of another pool, `op` runs on a worker of this one while
    /// the calling worker keeps running its own pool's jobs.
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// assert_eq!(pool.install(sumac::current_num_threads), 3);
    /// ```
    ///
    /// # Panics
    /// Re-raises a panic of `op`.
    pub fn install<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        self.registry.in_worker(|_| op())
    }

    /// [`join`](crate::join()) on this pool.
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// assert_eq!(pool.join(|| 1, || 2), (1, 2));
    /// ```
    ///
    /// # Panics
    /// As [`join`](crate::join()).
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.install(|| join(a, b))
    }

    /// [`scope`](crate::scope()) on this pool.
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let mut parts = [0, 0];
    /// pool.scope(|s| {
    ///     let (left, right) = parts.split_at_mut(1);
    ///     s.spawn(|_| left[0] = 1);
    ///     s.spawn(|_| right[0] = 2);
    /// });
    /// assert_eq!(parts, [1, 2]);
    /// ```
    ///
    /// # Panics
    /// As [`scope`](crate::scope()).
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| scope(op))
    }

    /// [`in_place_scope`](crate::in_place_scope) with this pool: `op` runs on the calling
    /// thread, and the closures it spawns run on this pool.
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let mut parts = [0, 0];
    /// let caller = std::thread::current().id();
    /// pool.in_place_scope(|s| {
    ///     assert_eq!(std::thread::current().id(), caller);
    ///     let (left, right) = parts.split_at_mut(1);
    ///     s.spawn(|_| left[0] = 1);
    ///     s.spawn(|_| right[0] = 2);
    /// });
    /// assert_eq!(parts, [1, 2]);
    /// ```
    ///
    /// # Panics
    /// As [`scope`](crate::scope()).
    pub fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        // A thread registered by `use_current_thread` waits as its own pool's worker 0
        // (whichever pool this is), as `install` does: the jobs it waits for may need
        // that worker (an `install` into its pool, a `broadcast` on it).
        registration::with_registered_worker(None, |_| {
            crate::scope::in_place_scope_in(&self.registry, op)
        })
    }

    /// [`spawn`](crate::spawn()) on this pool.
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let (sender, receiver) = std::sync::mpsc::channel();
    /// pool.spawn(move || sender.send(1).unwrap());
    /// assert_eq!(receiver.recv().unwrap(), 1);
    /// ```
    pub fn spawn<F>(&self, func: F)
    where
        F: FnOnce() + Send + 'static,
    {
        spawn::spawn_in(&self.registry, func, false);
    }

    /// [`spawn_fifo`](crate::spawn_fifo) on this pool.
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// let (sender, receiver) = std::sync::mpsc::channel();
    /// for i in 0..4 {
    ///     let sender = sender.clone();
    ///     pool.spawn_fifo(move || sender.send(i).unwrap());
    /// }
    /// drop(sender); // the jobs hold the remaining senders
    /// // One worker runs the jobs in the order they were spawned.
    /// assert_eq!(receiver.iter().collect::<Vec<_>>(), [0, 1, 2, 3]);
    /// ```
    ///
    /// # Panics
    /// As [`spawn_fifo`](crate::spawn_fifo): a panic of `func` goes to the pool's
    /// [panic handler](ThreadPoolBuilder::panic_handler).
    pub fn spawn_fifo<F>(&self, func: F)
    where
        F: FnOnce() + Send + 'static,
    {
        spawn::spawn_in(&self.registry, func, true);
    }

    /// [`scope_fifo`](crate::scope_fifo()) on this pool.
    ///
    /// ```
    /// use std::sync::Mutex;
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// let log = Mutex::new(String::new());
    /// pool.scope_fifo(|s| {
    ///     s.spawn_fifo(|s| {
    ///         log.lock().unwrap().push('a');
    ///         // Queued behind `b`, which was spawned earlier.
    ///         s.spawn_fifo(|_| log.lock().unwrap().push('c'));
    ///     });
    ///     s.spawn_fifo(|_| log.lock().unwrap().push('b'));
    /// });
    /// assert_eq!(log.into_inner().unwrap(), "abc");
    /// ```
    ///
    /// # Panics
    /// As [`scope`](crate::scope()).
    pub fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&crate::ScopeFifo<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| crate::scope_fifo(op))
    }

    /// [`in_place_scope_fifo`](crate::in_place_scope_fifo()) with this pool: `op` runs
    /// on the calling thread, and the closures it spawns run on this pool.
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let mut ran_on = [None; 3];
    /// pool.in_place_scope_fifo(|s| {
    ///     assert_eq!(pool.current_thread_index(), None); // `op` runs on the caller
    ///     for slot in ran_on.iter_mut() {
    ///         let pool = &pool;
    ///         s.spawn_fifo(move |_| *slot = pool.current_thread_index());
    ///     }
    /// });
    /// assert!(ran_on.iter().all(|index| index.is_some_and(|i| i < 2)));
    /// ```
    ///
    /// # Panics
    /// As [`scope`](crate::scope()).
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&crate::ScopeFifo<'scope>) -> R,
    {
        // As in `in_place_scope`: a registered thread waits as its pool's worker 0.
        registration::with_registered_worker(None, |_| {
            crate::scope::in_place_scope_fifo_in(&self.registry, op)
        })
    }

    /// Whether the calling worker has jobs of its own waiting (forks not yet joined,
    /// spawned jobs, or a broadcast job addressed to it); `None` if the calling thread
    /// is not a worker of this pool.
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// assert_eq!(pool.current_thread_has_pending_tasks(), None);
    /// pool.scope(|s| {
    ///     assert_eq!(pool.current_thread_has_pending_tasks(), Some(false));
    ///     s.spawn(|_| {});
    ///     assert_eq!(pool.current_thread_has_pending_tasks(), Some(true));
    /// });
    /// ```
    pub fn current_thread_has_pending_tasks(&self) -> Option<bool> {
        registration::with_current_worker(Some(&self.registry), WorkerThread::has_pending_jobs)
    }

    /// [`broadcast`](crate::broadcast()) on this pool: runs `op` once on every worker
    /// and returns the results in worker order.
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// assert_eq!(pool.broadcast(|ctx| ctx.num_threads() * 10 + ctx.index()), [20, 21]);
    /// ```
    ///
    /// # Panics
    /// As [`broadcast`](crate::broadcast()).
    pub fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(crate::BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        // As in `in_place_scope`: a registered thread waits as its pool's worker 0.
        registration::with_registered_worker(None, |_| {
            crate::broadcast::broadcast_in(&self.registry, &op)
        })
    }

    /// [`spawn_broadcast`](crate::spawn_broadcast()) on this pool.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// let total = Arc::new(AtomicUsize::new(0));
    /// let counter = Arc::clone(&total);
    /// pool.spawn_broadcast(move |ctx| {
    ///     counter.fetch_add(ctx.index() + 1, Ordering::SeqCst);
    /// });
    /// drop(pool); // waits until every worker ran its job
    /// assert_eq!(total.load(Ordering::SeqCst), 1 + 2 + 3);
    /// ```
    ///
    /// # Panics
    /// As [`spawn_broadcast`](crate::spawn_broadcast()): a panic of `op` goes to the
    /// pool's [panic handler](ThreadPoolBuilder::panic_handler).
    pub fn spawn_broadcast<OP>(&self, op: OP)
    where
        OP: Fn(crate::BroadcastContext<'_>) + Send + Sync + 'static,
    {
        crate::broadcast::spawn_broadcast_in(&self.registry, op);
    }

    /// [`yield_now`](crate::yield_now), if the calling thread is a member of this pool: a
    /// worker, or a caller taking part in a call into it (`None` otherwise).
    ///
    /// ```
    /// // (Calls handed to the one worker, so that nobody else takes the spawned job.)
    /// let pool = sumac::ThreadPoolBuilder::new()
    ///     .num_threads(1)
    ///     .callers_take_part(false)
    ///     .build()
    ///     .unwrap();
    /// let other = sumac::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// assert_eq!(pool.yield_now(), None); // not a worker of any pool
    /// pool.install(|| {
    ///     assert_eq!(other.yield_now(), None); // a worker, but of `pool`
    ///     pool.spawn(|| ());
    ///     assert_eq!(pool.yield_now(), Some(sumac::Yield::Executed));
    ///     assert_eq!(pool.yield_now(), Some(sumac::Yield::Idle));
    /// });
    /// ```
    pub fn yield_now(&self) -> Option<crate::Yield> {
        crate::yielding::yield_on(Some(&self.registry), true)
    }

    /// [`yield_local`](crate::yield_local), if the calling thread is a member of this
    /// pool: a worker, or a caller taking part in a call into it (`None` otherwise).
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new()
    ///     .num_threads(1)
    ///     .callers_take_part(false)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(pool.yield_local(), None);
    /// pool.install(|| {
    ///     // From another thread: into the pool's injector, not this worker's own.
    ///     std::thread::scope(|s| {
    ///         s.spawn(|| pool.spawn(|| ()));
    ///     });
    ///     assert_eq!(pool.yield_local(), Some(sumac::Yield::Idle));
    ///     pool.spawn(|| ()); // onto this worker's own deque
    ///     assert_eq!(pool.yield_local(), Some(sumac::Yield::Executed));
    ///     assert_eq!(pool.yield_now(), Some(sumac::Yield::Executed)); // the injected one
    /// });
    /// ```
    pub fn yield_local(&self) -> Option<crate::Yield> {
        crate::yielding::yield_on(Some(&self.registry), false)
    }

    /// The number of worker threads of this pool, from any thread (unlike the free
    /// function [`current_num_threads`](crate::current_num_threads), which answers for
    /// the caller's pool).
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// let small = sumac::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// assert_eq!(pool.current_num_threads(), 3);
    /// assert_eq!(
    ///     small.install(|| (pool.current_num_threads(), sumac::current_num_threads())),
    ///     (3, 1)
    /// );
    /// ```
    pub fn current_num_threads(&self) -> usize {
        self.registry.num_threads()
    }

    /// The index of the calling thread in this pool, or `None` if it is not one of its
    /// workers (a caller taking part in a call into the pool is not: see
    /// [`current_thread_index`](crate::current_thread_index)).
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// assert_eq!(pool.current_thread_index(), None);
    /// assert_eq!(pool.install(|| pool.current_thread_index()), None); // the caller
    /// let (sender, receiver) = std::sync::mpsc::channel();
    /// let pool = std::sync::Arc::new(pool);
    /// let inside = std::sync::Arc::clone(&pool);
    /// pool.spawn(move || sender.send(inside.current_thread_index()).unwrap());
    /// assert!(receiver.recv().unwrap().unwrap() < 2); // a worker
    /// ```
    pub fn current_thread_index(&self) -> Option<usize> {
        registration::with_current_worker(Some(&self.registry), WorkerThread::public_index)
            .flatten()
    }

    /// Per-worker counters: forks, heartbeats, promotions, shared jobs run, sleeps and
    /// wake-ups (see [`WorkerStats`](crate::WorkerStats)).
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// pool.install(|| {
    ///     for _ in 0..3 {
    ///         sumac::join(|| (), || ());
    ///     }
    /// });
    /// let stats = pool.stats();
    /// assert_eq!(stats.workers.len(), 1);
    /// // This thread ran the `install` itself, taking part in the pool.
    /// assert_eq!(stats.callers.forks, 3);
    /// assert_eq!(stats.total().forks, 3);
    /// assert_eq!(stats.total().shared_jobs_run, 0); // nothing went through a queue
    /// ```
    pub fn stats(&self) -> PoolStats {
        self.registry.stats()
    }

    /// Runs `op` on the calling thread, as any code calls into this pool, and reports how
    /// its work spread over the pool's workers: how long after the call started each
    /// worker first got work, and how many pieces the call was cut into (see
    /// [`RampUp`](crate::RampUp)). With the cargo feature `trace`, the trace gets a
    /// [`CallStart`](crate::trace::EventKind::CallStart) event.
    ///
    /// Meant for benchmarks and tuning, one measured call at a time: the work of other
    /// calls running on the pool meanwhile counts as the measured call's. A panic in
    /// `op` propagates (the measurement ends).
    ///
    /// ```
    /// use sumac::prelude::*;
    ///
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let mut v = vec![0u64; 100_000];
    /// let ((), ramp_up) = pool.measure_ramp_up(|| {
    ///     pool.install(|| v.par_iter_mut().for_each(|x| *x += 1))
    /// });
    /// assert_eq!(ramp_up.first_work.len(), 2);
    /// assert!(ramp_up.pieces >= 1);
    /// println!("{} of 2 workers took part; all busy after {:?}",
    ///     ramp_up.busy_workers(), ramp_up.all_busy_after());
    /// ```
    pub fn measure_ramp_up<R>(&self, op: impl FnOnce() -> R) -> (R, crate::RampUp) {
        /// Ends the measured call when `op` returns or unwinds.
        struct EndCall<'a>(&'a crate::stats::MeasuredCall);
        impl Drop for EndCall<'_> {
            fn drop(&mut self) {
                self.0.end();
            }
        }
        let registry = &*self.registry;
        let caller = self.current_thread_index();
        let promotions_before = registry.stats().total().promotions;
        #[cfg(feature = "trace")]
        registry.workers[caller.unwrap_or(0)].trace.record(
            caller.unwrap_or(registry.num_threads()),
            crate::trace::EventKind::CallStart,
        );
        let call = &registry.measured_call;
        let start = Instant::now();
        let started = call.start();
        let result = {
            let _end = EndCall(call);
            op()
        };
        let duration = start.elapsed();
        let workers = &registry.workers[..registry.num_threads()];
        let first_work = workers
            .iter()
            .enumerate()
            .map(|(index, worker)| match caller {
                Some(caller) if caller == index => Some(Duration::ZERO),
                _ => call.first_work(started, &worker.counters.first_work),
            })
            .collect();
        let promotions = registry.stats().total().promotions;
        let ramp_up = crate::RampUp {
            duration,
            first_work,
            pieces: 1 + promotions.saturating_sub(promotions_before),
            caller_held_a_place: caller.is_none() && registry.callers_hold_places(),
        };
        (result, ramp_up)
    }

    /// Drains the scheduling events recorded by this pool's workers so far, sorted by
    /// time (cargo feature `trace`).
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = sumac::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// pool.install(|| sumac::join(|| 1, || 2));
    /// for event in pool.take_trace() {
    ///     println!("worker {}: {:?} at {} ns", event.worker, event.kind, event.time_ns);
    /// }
    /// ```
    #[cfg(feature = "trace")]
    pub fn take_trace(&self) -> Vec<crate::trace::Event> {
        self.registry.take_trace()
    }
}

impl Drop for ThreadPool {
    fn drop(&mut self) {
        self.registry.terminate();
        registration::unregister_current_thread(&self.registry);
        self.registry.join_threads();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A thread count above `max_num_threads` (explicit, or from the environment) is
    /// reduced to it, as in Rayon; checked on the validated settings, so no thread starts.
    #[test]
    fn thread_counts_above_the_maximum_are_reduced() {
        let config = |n| {
            ThreadPoolBuilder::new()
                .num_threads(n)
                .into_config()
                .unwrap()
                .0
        };
        assert_eq!(config(usize::MAX).num_threads, crate::max_num_threads());
        assert_eq!(
            config(crate::max_num_threads() + 1).num_threads,
            crate::max_num_threads()
        );
        assert_eq!(config(7).num_threads, 7);
    }
}
