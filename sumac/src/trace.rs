//! Per-worker event timeline.
//!
//! The event types are always available, so that tools can process timelines without
//! enabling anything; the recording itself needs the cargo feature `trace`. With it, each
//! worker appends to its own buffer and `ThreadPool::take_trace` drains them all. Only
//! scheduling events are recorded (shared jobs, promotions, sleeps, wake-ups), never
//! individual forks, and without the feature the recording calls compile to nothing.

#[cfg(feature = "trace")]
use std::sync::{Mutex, OnceLock, PoisonError};
#[cfg(feature = "trace")]
use std::time::Instant;

/// What a worker did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// Started a job taken from the shared queue.
    JobStart,
    /// Finished that job.
    JobEnd,
    /// Handed forks to the shared queue (a heartbeat promotion).
    Promotion,
    /// Went to sleep for lack of work.
    Sleep,
    /// Woke up.
    Wake,
    /// Started running ready tasks of a [task graph](crate::graph) (a runner job, or a
    /// caller taking part in a call into the pool, waiting for the graph).
    GraphTasksStart,
    /// Stopped running them (no ready task left).
    GraphTasksEnd,
    /// A measured call began
    /// ([`ThreadPool::measure_ramp_up`](crate::ThreadPool::measure_ramp_up)); `worker`
    /// is the calling worker, or the pool's thread count for a thread outside the pool.
    /// Each worker's first `JobStart` after it shows how long the worker waited for work.
    CallStart,
}

/// One recorded event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// Index of the worker in its pool.
    pub worker: usize,
    /// What happened.
    pub kind: EventKind,
    /// Nanoseconds since a process-wide epoch (fixed when the first pool is built).
    pub time_ns: u64,
}

#[cfg(feature = "trace")]
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// One worker's event buffer.
#[cfg(feature = "trace")]
#[derive(Default)]
pub(crate) struct TraceBuffer {
    events: Mutex<Vec<Event>>,
}

#[cfg(feature = "trace")]
impl TraceBuffer {
    pub(crate) fn new() -> Self {
        let _ = epoch();
        TraceBuffer::default()
    }

    pub(crate) fn record(&self, worker: usize, kind: EventKind) {
        let time_ns = u64::try_from(epoch().elapsed().as_nanos()).unwrap_or(u64::MAX);
        let mut events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        events.push(Event {
            worker,
            kind,
            time_ns,
        });
    }

    pub(crate) fn take(&self) -> Vec<Event> {
        std::mem::take(&mut *self.events.lock().unwrap_or_else(PoisonError::into_inner))
    }
}
