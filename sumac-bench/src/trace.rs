//! sumac timelines as Chrome trace-event JSON (open in Perfetto or chrome://tracing).

use serde_json::{json, Value};

/// What a worker did (mirrors `sumac::trace::EventKind`, available without the feature).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "trace"), allow(dead_code))]
pub enum Kind {
    /// A shared job started on this worker.
    JobStart,
    /// That job finished.
    JobEnd,
    /// A fork was promoted (made stealable).
    Promotion,
    /// The worker went to sleep.
    Sleep,
    /// The worker woke up.
    Wake,
}

/// One event of one worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkerEvent {
    /// Worker index in its pool.
    pub worker: usize,
    /// What happened.
    pub kind: Kind,
    /// Nanoseconds since a process-wide epoch.
    pub time_ns: u64,
}

/// The timeline of one sumac run (one pool, thread count and parameter).
#[derive(Clone, Debug)]
pub struct TraceRun {
    /// Shown as the process name in the viewer.
    pub label: String,
    /// Events, in any order.
    pub events: Vec<WorkerEvent>,
}

/// Most events kept per run, so a long run cannot produce a file no viewer opens.
#[cfg_attr(not(feature = "trace"), allow(dead_code))]
pub const MAX_EVENTS_PER_RUN: usize = 1_000_000;

/// Most events written in one file (later runs keep only their process name).
pub const MAX_EVENTS_PER_FILE: usize = 4_000_000;

/// Converts sumac's recorded events (feature `trace`), keeping the first
/// [`MAX_EVENTS_PER_RUN`].
#[cfg(feature = "trace")]
pub fn convert(events: Vec<sumac::trace::Event>) -> Vec<WorkerEvent> {
    use sumac::trace::EventKind as E;
    events
        .into_iter()
        .take(MAX_EVENTS_PER_RUN)
        .map(|e| WorkerEvent {
            worker: e.worker,
            kind: match e.kind {
                E::JobStart => Kind::JobStart,
                E::JobEnd => Kind::JobEnd,
                E::Promotion => Kind::Promotion,
                E::Sleep => Kind::Sleep,
                E::Wake => Kind::Wake,
            },
            time_ns: e.time_ns,
        })
        .collect()
}

/// Builds the Chrome trace-event JSON document: one process per run, one thread
/// per worker; job start/end and sleep/wake pairs become complete (`X`) slices,
/// promotions and unpaired events instant (`i`) events. Times are in µs from the
/// run's first event.
pub fn chrome_json(runs: &[TraceRun]) -> Value {
    let mut out = Vec::new();
    let mut budget = MAX_EVENTS_PER_FILE;
    for (pid, run) in runs.iter().enumerate() {
        out.push(
            json!({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                        "args": {"name": run.label}}),
        );
        let keep = run.events.len().min(budget);
        budget -= keep;
        let mut events = run.events[..keep].to_vec();
        events.sort_by_key(|e| (e.time_ns, e.worker));
        let t0 = events.first().map_or(0, |e| e.time_ns);
        let us = |t: u64| (t - t0) as f64 / 1e3;
        let workers = events.iter().map(|e| e.worker + 1).max().unwrap_or(0);
        for w in 0..workers {
            out.push(
                json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": w,
                            "args": {"name": format!("worker {w}")}}),
            );
        }
        // Open job / sleep start times per worker.
        let mut open_jobs: Vec<Vec<u64>> = vec![Vec::new(); workers];
        let mut open_sleep: Vec<Option<u64>> = vec![None; workers];
        let instant = |name: &str, e: &WorkerEvent| json!({"name": name, "ph": "i", "s": "t", "pid": pid, "tid": e.worker, "ts": us(e.time_ns)});
        let slice = |name: &str, w: usize, start: u64, end: u64| {
            json!({"name": name, "ph": "X", "pid": pid, "tid": w, "ts": us(start),
                   "dur": (end - start) as f64 / 1e3})
        };
        for e in &events {
            let w = e.worker;
            match e.kind {
                Kind::JobStart => open_jobs[w].push(e.time_ns),
                Kind::JobEnd => match open_jobs[w].pop() {
                    Some(start) => out.push(slice("job", w, start, e.time_ns)),
                    None => out.push(instant("job end", e)),
                },
                Kind::Sleep => {
                    if let Some(start) = open_sleep[w].replace(e.time_ns) {
                        out.push(instant(
                            "sleep",
                            &WorkerEvent {
                                time_ns: start,
                                ..*e
                            },
                        ));
                    }
                }
                Kind::Wake => match open_sleep[w].take() {
                    Some(start) => out.push(slice("sleep", w, start, e.time_ns)),
                    None => out.push(instant("wake", e)),
                },
                Kind::Promotion => out.push(instant("promotion", e)),
            }
        }
        for (w, starts) in open_jobs.iter().enumerate() {
            for &t in starts {
                out.push(instant(
                    "job start",
                    &WorkerEvent {
                        worker: w,
                        kind: Kind::JobStart,
                        time_ns: t,
                    },
                ));
            }
        }
        for (w, start) in open_sleep.iter().enumerate() {
            if let Some(t) = *start {
                out.push(instant(
                    "sleep",
                    &WorkerEvent {
                        worker: w,
                        kind: Kind::Sleep,
                        time_ns: t,
                    },
                ));
            }
        }
    }
    json!({"traceEvents": out, "displayTimeUnit": "ns"})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_become_slices() {
        let ev = |worker, kind, time_ns| WorkerEvent {
            worker,
            kind,
            time_ns,
        };
        let run = TraceRun {
            label: "t".into(),
            events: vec![
                ev(1, Kind::JobEnd, 3000),
                ev(1, Kind::JobStart, 1000),
                ev(0, Kind::Promotion, 500),
                ev(0, Kind::Sleep, 4000),
            ],
        };
        let v = chrome_json(&[run]);
        let evs = v["traceEvents"].as_array().unwrap();
        let job = evs.iter().find(|e| e["name"] == "job").unwrap();
        assert_eq!(job["ph"], "X");
        assert_eq!(job["tid"], 1);
        assert_eq!(job["dur"].as_f64().unwrap(), 2.0);
        assert!(evs.iter().any(|e| e["name"] == "sleep" && e["ph"] == "i"));
    }
}
