//! One experiment: a workload at one size, run by every selected implementation
//! at every thread count and parameter, checked against `seq`.

use std::time::Instant;

use crate::impls::{run_impl, Impl, Pool, RunOutcome, SumacActivity, MIN_LEN_SWEEP};
use crate::measure::{MeasureConfig, Progress, Sampling, Summary};
use crate::policy::Policy;
use crate::report::Row;
use crate::trace::TraceRun;
use crate::workloads::Workload;

/// What the y axis of a parameter-sweep plot shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SweepMetric {
    /// Median time per unit (fib against its cutoff).
    TimePerUnit,
    /// Ratio to `seq` at the same parameter (tree-sum against its work per node).
    RatioToSeq,
}

/// The description of an experiment: what runs and how results are labelled.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Short name for files (`tree-sum-1000`, `fib-35-cutoffs`).
    pub id: String,
    /// Bench name for tables and CSV (`tree-sum`, `sort-stable`).
    pub bench: String,
    /// Human title naming the workload and size (`tree-sum, 1,000 nodes, balanced`).
    pub title: String,
    /// The size column (nodes, n, len or matrix size).
    pub size: u64,
    /// The unit times are divided by (`node`, `call`, `element`...).
    pub unit: &'static str,
    /// How many units one run processes.
    pub units: u64,
    /// Name of the parameter (`cutoff`, `work`), if the experiment has one.
    pub param_name: Option<&'static str>,
    /// Parameter values (`[None]` when there is no parameter).
    pub params: Vec<Option<u64>>,
    /// Implementations to run besides `seq` (always run first, as the reference).
    pub impls: Vec<Impl>,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// What a parameter-sweep plot shows.
    pub sweep_metric: SweepMetric,
    /// Sample `seq` alternately with every implementation even when one `seq` run
    /// takes longer than [`PAIR_BELOW_NS`] (the applications, whose ratios are
    /// targets: on a shared machine only paired samples compare like with like).
    pub pair_long_runs: bool,
    /// Time each run of sumac and Rayon as one call into the pool from the measuring
    /// thread, outside the pool (`--from-main`), rather than every run inside one
    /// `install`.
    pub from_main: bool,
    /// sumac's policy variants (`--policy`): each runs as an implementation of its own
    /// where `sumac` would run (`[Policy::default()]` = plain sumac).
    pub policies: Vec<Policy>,
}

impl Plan {
    /// The implementations in run order, each sumac policy variant as one entry:
    /// `(implementation, policy, label)`.
    pub fn variants(&self) -> Vec<(Impl, Policy, String)> {
        let mut out = Vec::new();
        for &imp in &self.impls {
            if imp == Impl::Sumac {
                for p in &self.policies {
                    out.push((imp, p.clone(), p.label()));
                }
            } else {
                out.push((imp, Policy::default(), imp.name().to_string()));
            }
        }
        out
    }

    /// Number of timed runs (for the progress bar).
    pub fn run_count<W: Workload>(&self) -> u64 {
        let seq = if W::SEQ_USES_PARAM {
            self.params.len()
        } else {
            1
        };
        let per_thread: usize = self
            .variants()
            .iter()
            .map(|v| v.0)
            .filter(|&i| i != Impl::Seq)
            .map(|i| {
                if i == Impl::RayonTuned {
                    MIN_LEN_SWEEP.len()
                } else {
                    1
                }
            })
            .sum();
        let floor = usize::from(self.impls.contains(&Impl::BranchFloor));
        (seq + ((per_thread - floor) * self.threads.len() + floor) * self.params.len()) as u64
    }
}

/// Knobs shared by every experiment of one invocation.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Sampling configuration.
    pub measure: MeasureConfig,
    /// Show the progress bar (if stderr is a terminal).
    pub progress: bool,
    /// Record sumac timelines (feature `trace`).
    pub trace: bool,
    /// Stop starting new runs after this instant (the suite's budget).
    pub deadline: Option<Instant>,
    /// Testing aid (`--inject-mismatch`): flip a bit of every non-seq checksum.
    pub inject_mismatch: bool,
}

/// Scheduler activity of one sumac run.
#[derive(Clone, Debug)]
pub struct ActivityLine {
    /// The implementation's label (`sumac`, or a policy variant's `sumac[-rescue]`).
    pub label: String,
    /// Thread count of the pool.
    pub threads: usize,
    /// Parameter value, if any.
    pub param: Option<u64>,
    /// Rates per second.
    pub activity: SumacActivity,
}

/// Everything an experiment produced.
#[derive(Clone, Debug)]
pub struct ExperimentResult {
    /// The plan that was run.
    pub plan: Plan,
    /// One row per (implementation, thread count, parameter).
    pub rows: Vec<Row>,
    /// sumac scheduler activity, one line per sumac run.
    pub activity: Vec<ActivityLine>,
    /// sumac timelines (when tracing).
    pub traces: Vec<TraceRun>,
    /// Runs skipped because the time budget ran out.
    pub skipped_runs: usize,
    /// Lines the workload reported: about its input, then one per run whose
    /// protocol reported one (Graph500's TEPS).
    pub notes: Vec<String>,
}

/// Why an experiment stopped: an implementation's result differs from the
/// sequential one, or a pool could not be built (exit code 1).
#[derive(Debug)]
pub struct RunError(pub String);

/// `seq` is sampled alternately with an implementation only when one `seq` run takes
/// less than this (50 ms): repeating longer runs would double the suite's time, and a
/// run that long already spans the short slow phases of a shared machine.
pub const PAIR_BELOW_NS: f64 = 50e6;

/// Runs `plan` on `workload`: `seq` first (per parameter when its result depends
/// on it), then every other implementation at every thread count, one pool per
/// (implementation, thread count) reused across parameters and dropped before the
/// next is built. Every result is checked against `seq`. A row's ratio to `seq`
/// divides its median by the median of `seq` samples taken alternately with its own
/// samples (in the same pool, on the same thread), not by the `seq` row's median
/// measured earlier: on a shared machine whose speed drifts, only paired samples
/// compare like with like. Runs of `seq` longer than [`PAIR_BELOW_NS`] are not
/// repeated; their rows divide by the `seq` row's median.
pub fn run_experiment<W: Workload>(
    workload: &W,
    plan: &Plan,
    settings: &Settings,
) -> Result<ExperimentResult, RunError> {
    let progress = Progress::new(
        plan.run_count::<W>() * settings.measure.samples as u64,
        settings.progress,
    );
    // Units counted on the built input replace the plan's estimate.
    let plan = &{
        let mut plan = plan.clone();
        if let Some(units) = workload.units() {
            plan.units = units.max(1);
        }
        plan
    };
    let mut state = workload.new_state();
    let mut result = ExperimentResult {
        plan: plan.clone(),
        rows: Vec::new(),
        activity: Vec::new(),
        traces: Vec::new(),
        skipped_runs: 0,
        notes: workload.input_notes(),
    };

    let seq_params: Vec<Option<u64>> = if W::SEQ_USES_PARAM {
        plan.params.clone()
    } else {
        vec![None]
    };
    // (param, median, check) of the sequential reference.
    let mut reference = Vec::new();
    for &p in &seq_params {
        progress.set_message(label(plan, Impl::Seq.name(), 1, p));
        let out = run_impl(
            workload,
            &mut state,
            Impl::Seq,
            &Pool::None,
            1,
            p.unwrap_or(0),
            1,
            &settings.measure,
            Sampling::Alone,
            &progress,
            false,
        );
        take_protocol(&mut result, plan, Impl::Seq.name(), 1, p, &out, &progress)?;
        let s = Summary::of(&out.samples_ns);
        reference.push((p, s.median, out.check));
        result.rows.push(row(
            plan,
            Impl::Seq,
            Impl::Seq.name(),
            1,
            param_text(p),
            &out,
            s.median,
        ));
    }
    let seq_for = |p: Option<u64>| {
        let key = if W::SEQ_USES_PARAM { p } else { None };
        reference
            .iter()
            .find(|r| r.0 == key)
            .map(|r| (r.1, r.2))
            .expect("seq ran for every parameter")
    };

    for (imp, policy, name) in plan.variants().into_iter().filter(|v| v.0 != Impl::Seq) {
        let name = name.as_str();
        // The branch floor runs on the calling thread: one row, at 1 thread.
        let threads_of_variant: &[usize] = if imp == Impl::BranchFloor {
            &[1]
        } else {
            &plan.threads
        };
        for &threads in threads_of_variant {
            if settings.deadline.is_some_and(|d| Instant::now() >= d) {
                result.skipped_runs += plan.params.len();
                continue;
            }
            let pool = Pool::build(imp, &policy, threads).map_err(RunError)?;
            workload.new_pool(&mut state);
            for &p in &plan.params {
                progress.set_message(label(plan, name, threads, p));
                let param = p.unwrap_or(0);
                let sweep: &[usize] = if imp == Impl::RayonTuned {
                    &MIN_LEN_SWEEP
                } else {
                    &[1]
                };
                let sampling = if plan.pair_long_runs || seq_for(p).0 < PAIR_BELOW_NS {
                    Sampling::Paired
                } else {
                    Sampling::Alone
                };
                let mut best: Option<(f64, usize, RunOutcome)> = None;
                for &min_len in sweep {
                    let mut out = run_impl(
                        workload,
                        &mut state,
                        imp,
                        &pool,
                        threads,
                        param,
                        min_len,
                        &MeasureConfig {
                            from_main: plan.from_main,
                            ..settings.measure.clone()
                        },
                        sampling,
                        &progress,
                        settings.trace,
                    );
                    if settings.inject_mismatch {
                        out.check ^= 1;
                    }
                    take_protocol(&mut result, plan, name, threads, p, &out, &progress)?;
                    let (_, want) = seq_for(p);
                    if out.check != want {
                        progress.finish();
                        return Err(RunError(format!(
                            "result mismatch: {} {}: {name} with {threads} threads{} returned checksum {:#x}, seq returned {want:#x}",
                            plan.bench,
                            plan.size,
                            p.map(|v| format!(" and {} {v}", plan.param_name.unwrap_or("param")))
                                .unwrap_or_default(),
                            out.check
                        )));
                    }
                    // Compared by ratio to their own paired reference: the sweep's
                    // runs are seconds apart on a machine whose speed drifts.
                    let ratio =
                        Summary::of(&out.samples_ns).median / reference_median(&out).unwrap_or(1.0);
                    if !matches!(&best, Some(b) if b.0 <= ratio) {
                        best = Some((ratio, min_len, out));
                    }
                }
                let (_, min_len, mut out) = best.expect("at least one run");
                let text = if imp == Impl::RayonTuned {
                    min_len.to_string()
                } else {
                    param_text(p)
                };
                let (seq_median, _) = seq_for(p);
                result
                    .rows
                    .push(row(plan, imp, name, threads, text, &out, seq_median));
                if let Some(activity) = out.activity {
                    result.activity.push(ActivityLine {
                        label: name.to_string(),
                        threads,
                        param: p,
                        activity,
                    });
                }
                if settings.trace && imp == Impl::Sumac {
                    result.traces.push(TraceRun {
                        label: format!("{}: {}", plan.title, label_tail(plan, name, threads, p)),
                        events: std::mem::take(&mut out.trace),
                    });
                }
            }
            drop(pool);
        }
    }
    progress.finish();
    Ok(result)
}

/// Records the line a run's protocol reported, or fails the experiment (exit 1)
/// when the protocol found a wrong result.
fn take_protocol(
    result: &mut ExperimentResult,
    plan: &Plan,
    imp: &str,
    threads: usize,
    p: Option<u64>,
    out: &RunOutcome,
    progress: &Progress,
) -> Result<(), RunError> {
    let who = label_tail(plan, imp, threads, p);
    if let Some(why) = &out.failure {
        progress.finish();
        return Err(RunError(format!(
            "result mismatch: {} {}: {who}: {why}",
            plan.bench, plan.size
        )));
    }
    if let Some(note) = &out.note {
        result.notes.push(format!("{who}: {note}"));
    }
    Ok(())
}

fn param_text(p: Option<u64>) -> String {
    p.map(|v| v.to_string()).unwrap_or_default()
}

fn label_tail(plan: &Plan, imp: &str, threads: usize, p: Option<u64>) -> String {
    let mut s = format!("{imp}, {threads} thr");
    if let (Some(name), Some(v)) = (plan.param_name, p) {
        s.push_str(&format!(", {name} {v}"));
    }
    s
}

fn label(plan: &Plan, imp: &str, threads: usize, p: Option<u64>) -> String {
    format!(
        "{} {} | {}",
        plan.bench,
        plan.size,
        label_tail(plan, imp, threads, p)
    )
}

fn row(
    plan: &Plan,
    imp: Impl,
    name: &str,
    threads: usize,
    param: String,
    out: &RunOutcome,
    seq_median: f64,
) -> Row {
    let s = Summary::of(&out.samples_ns);
    Row {
        bench: plan.bench.clone(),
        size: plan.size,
        imp: name.to_string(),
        threads,
        param,
        min_ns: s.min,
        median_ns: s.median,
        max_ns: s.max,
        per_unit_ns: s.median / plan.units as f64,
        ratio_to_seq: if imp == Impl::Seq {
            1.0
        } else {
            s.median / reference_median(out).unwrap_or(seq_median)
        },
    }
}

/// The median of the `seq` samples taken alternately with this run's samples.
fn reference_median(out: &RunOutcome) -> Option<f64> {
    (!out.reference_ns.is_empty()).then(|| Summary::of(&out.reference_ns).median)
}
