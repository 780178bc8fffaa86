//! sumac timelines as Chrome trace-event JSON (open in Perfetto or chrome://tracing).

use serde_json::{json, Value};
use sumac::trace::{Event, EventKind};

/// The timeline of one sumac run (one pool, thread count and parameter).
#[derive(Clone, Debug)]
pub struct TraceRun {
    /// Shown as the process name in the viewer.
    pub label: String,
    /// Events, in any order.
    pub events: Vec<Event>,
}

/// Most events kept per run, so a long run cannot produce a file no viewer opens.
#[cfg_attr(not(feature = "trace"), allow(dead_code))]
pub const MAX_EVENTS_PER_RUN: usize = 1_000_000;

/// Most events written in one file (later runs keep only their process name).
pub const MAX_EVENTS_PER_FILE: usize = 4_000_000;

/// Keeps the first [`MAX_EVENTS_PER_RUN`] of sumac's recorded events (feature `trace`).
#[cfg(feature = "trace")]
pub fn truncate(mut events: Vec<Event>) -> Vec<Event> {
    events.truncate(MAX_EVENTS_PER_RUN);
    events
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
        let mut open_graph: Vec<Vec<u64>> = vec![Vec::new(); workers];
        let mut open_sleep: Vec<Option<u64>> = vec![None; workers];
        let instant = |name: &str, e: &Event| json!({"name": name, "ph": "i", "s": "t", "pid": pid, "tid": e.worker, "ts": us(e.time_ns)});
        let slice = |name: &str, w: usize, start: u64, end: u64| {
            json!({"name": name, "ph": "X", "pid": pid, "tid": w, "ts": us(start),
                   "dur": (end - start) as f64 / 1e3})
        };
        for e in &events {
            let w = e.worker;
            match e.kind {
                EventKind::JobStart => open_jobs[w].push(e.time_ns),
                EventKind::JobEnd => match open_jobs[w].pop() {
                    Some(start) => out.push(slice("job", w, start, e.time_ns)),
                    None => out.push(instant("job end", e)),
                },
                EventKind::Sleep => {
                    if let Some(start) = open_sleep[w].replace(e.time_ns) {
                        out.push(instant(
                            "sleep",
                            &Event {
                                time_ns: start,
                                ..*e
                            },
                        ));
                    }
                }
                EventKind::Wake => match open_sleep[w].take() {
                    Some(start) => out.push(slice("sleep", w, start, e.time_ns)),
                    None => out.push(instant("wake", e)),
                },
                EventKind::Promotion => out.push(instant("promotion", e)),
                EventKind::CallStart => out.push(instant("measured call", e)),
                EventKind::GraphTasksStart => open_graph[w].push(e.time_ns),
                EventKind::GraphTasksEnd => match open_graph[w].pop() {
                    Some(start) => out.push(slice("graph tasks", w, start, e.time_ns)),
                    None => out.push(instant("graph tasks end", e)),
                },
            }
        }
        for (w, starts) in open_jobs.iter().enumerate() {
            for &t in starts {
                out.push(instant(
                    "job start",
                    &Event {
                        worker: w,
                        kind: EventKind::JobStart,
                        time_ns: t,
                    },
                ));
            }
        }
        for (w, start) in open_sleep.iter().enumerate() {
            if let Some(t) = *start {
                out.push(instant(
                    "sleep",
                    &Event {
                        worker: w,
                        kind: EventKind::Sleep,
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
        let ev = |worker, kind, time_ns| Event {
            worker,
            kind,
            time_ns,
        };
        let run = TraceRun {
            label: "t".into(),
            events: vec![
                ev(1, EventKind::JobEnd, 3000),
                ev(1, EventKind::JobStart, 1000),
                ev(0, EventKind::Promotion, 500),
                ev(0, EventKind::Sleep, 4000),
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
