//! Rayon's pre-1.0 way of configuring a pool: [`Configuration`], [`initialize`] and
//! [`ThreadPool::new`]. Rayon keeps them, deprecated, so that old code still compiles;
//! sumac keeps them for the same reason, deprecated too, as thin wrappers over
//! [`ThreadPoolBuilder`]. New code uses the builder.
#![allow(deprecated)]

use std::any::Any;
use std::error::Error;
use std::fmt;

use crate::{ThreadPool, ThreadPoolBuilder};

/// The settings of a pool, in Rayon's deprecated pre-1.0 form: each method forwards to
/// the [`ThreadPoolBuilder`] method of the same name, and errors come boxed.
///
/// ```
/// #![allow(deprecated)]
/// let pool = sumac::Configuration::new().num_threads(2).build().unwrap();
/// assert_eq!(pool.current_num_threads(), 2);
/// ```
#[deprecated(note = "use `ThreadPoolBuilder`")]
#[derive(Default)]
pub struct Configuration {
    builder: ThreadPoolBuilder,
}

impl Configuration {
    /// The default settings (those of [`ThreadPoolBuilder::new`]).
    ///
    /// ```
    /// #![allow(deprecated)]
    /// let pool = sumac::Configuration::new().build().unwrap();
    /// assert!(pool.current_num_threads() >= 1);
    /// ```
    pub fn new() -> Configuration {
        Configuration::default()
    }

    /// Builds the pool ([`ThreadPoolBuilder::build`]).
    ///
    /// ```
    /// #![allow(deprecated)]
    /// let error = sumac::Configuration::new()
    ///     .num_threads(1)
    ///     .panic_handler(|_| ())
    ///     .stack_size(1 << 20)
    ///     .breadth_first()
    ///     .start_handler(|_| ())
    ///     .exit_handler(|_| ())
    ///     .thread_name(|i| format!("old-{i}"))
    ///     .build()
    ///     .map(|pool| pool.install(|| std::thread::current().name().map(str::to_owned)));
    /// assert_eq!(error.unwrap().as_deref(), Some("old-0"));
    /// ```
    pub fn build(self) -> Result<ThreadPool, Box<dyn Error + 'static>> {
        self.builder.build().map_err(Box::from)
    }

    /// See [`ThreadPoolBuilder::thread_name`].
    pub fn thread_name<F>(self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.map(|builder| builder.thread_name(closure))
    }

    /// See [`ThreadPoolBuilder::num_threads`].
    pub fn num_threads(self, num_threads: usize) -> Configuration {
        self.map(|builder| builder.num_threads(num_threads))
    }

    /// See [`ThreadPoolBuilder::panic_handler`].
    pub fn panic_handler<H>(self, panic_handler: H) -> Configuration
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.map(|builder| builder.panic_handler(panic_handler))
    }

    /// See [`ThreadPoolBuilder::stack_size`].
    pub fn stack_size(self, stack_size: usize) -> Self {
        self.map(|builder| builder.stack_size(stack_size))
    }

    /// See [`ThreadPoolBuilder::breadth_first`] (no effect).
    pub fn breadth_first(self) -> Self {
        self.map(ThreadPoolBuilder::breadth_first)
    }

    /// See [`ThreadPoolBuilder::start_handler`].
    pub fn start_handler<H>(self, start_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.map(|builder| builder.start_handler(start_handler))
    }

    /// See [`ThreadPoolBuilder::exit_handler`].
    pub fn exit_handler<H>(self, exit_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.map(|builder| builder.exit_handler(exit_handler))
    }

    fn map(self, change: impl FnOnce(ThreadPoolBuilder) -> ThreadPoolBuilder) -> Self {
        Configuration {
            builder: change(self.builder),
        }
    }
}

impl fmt::Debug for Configuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.builder.fmt(f)
    }
}

/// Configures the global pool ([`ThreadPoolBuilder::build_global`]), in Rayon's
/// deprecated pre-1.0 form.
///
/// ```
/// #![allow(deprecated)]
/// let first = sumac::initialize(sumac::Configuration::new().num_threads(2));
/// assert!(first.is_ok());
/// let second = sumac::initialize(sumac::Configuration::new());
/// assert_eq!(
///     second.unwrap_err().to_string(),
///     "The global thread pool has already been initialized."
/// );
/// ```
#[deprecated(note = "use `ThreadPoolBuilder::build_global`")]
pub fn initialize(config: Configuration) -> Result<(), Box<dyn Error>> {
    config.builder.build_global().map_err(Box::from)
}

impl ThreadPool {
    /// Builds a pool from a [`Configuration`], in Rayon's deprecated pre-1.0 form.
    ///
    /// ```
    /// #![allow(deprecated)]
    /// let pool = sumac::ThreadPool::new(sumac::Configuration::new().num_threads(3)).unwrap();
    /// assert_eq!(pool.current_num_threads(), 3);
    /// ```
    #[deprecated(note = "use `ThreadPoolBuilder::build`")]
    pub fn new(configuration: Configuration) -> Result<ThreadPool, Box<dyn Error>> {
        configuration.build()
    }
}
