//! Sampling: warm-up, calibration of repetitions per sample, and summary statistics.

use std::hint::black_box;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::impls::RunOutcome;

/// How to sample one (implementation, thread count, parameter) combination.
#[derive(Clone, Debug)]
pub struct MeasureConfig {
    /// Number of samples to record.
    pub samples: usize,
    /// Time spent running the workload before sampling.
    pub warmup: Duration,
    /// A sample repeats the workload until it lasts at least this long.
    pub min_sample: Duration,
    /// Stop sampling early (after at least [`MIN_SAMPLES_UNDER_BUDGET`]) once the
    /// samples took this long (the suite's time budget).
    pub sampling_budget: Option<Duration>,
    /// Time each run of a pool's implementation as one call into the pool from the
    /// measuring thread (see `Plan::from_main`).
    pub from_main: bool,
}

/// Fewest samples kept when a sampling budget cuts a run short.
pub const MIN_SAMPLES_UNDER_BUDGET: usize = 3;

/// Something [`measure`] can time: a workload bound to its input and context.
pub trait Target {
    /// Whether `reset` must run (untimed) before every run.
    const NEEDS_RESET: bool;
    /// Restores the input a run destroys (untimed); also called once before the checked run.
    fn reset(&mut self);
    /// One run of the workload; returns its result.
    fn run(&mut self) -> u64;
    /// One run of the sequential version of the same workload on the same input (the
    /// reference that [`measure`] samples alternately with `run`).
    fn run_reference(&mut self) -> u64;
    /// Checksum of a run's result, compared with the sequential one.
    fn check(&self, out: u64) -> u64;
    /// The workload's own protocol, run once after sampling (see
    /// `Workload::protocol`).
    fn protocol(&mut self) -> Result<Option<String>, String> {
        Ok(None)
    }
}

/// Which runs of a [`Target`] are timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// Only `run` (the sequential implementation itself).
    Alone,
    /// `run`, alternating sample by sample with `run_reference`, so that a slow phase
    /// of a shared machine slows both sides of the ratio alike.
    Paired,
}

/// Runs `target` once to check it, warms it up, calibrates repetitions so a
/// sample lasts at least `cfg.min_sample`, then records `cfg.samples` samples
/// (time per run, in ns); with [`Sampling::Paired`], each sample is preceded by a
/// sample of the sequential reference, recorded in `reference_ns`. Must be called
/// where the workload should run (inside the pool), so the timing excludes the
/// hand-off into the pool.
pub fn measure<T: Target>(
    cfg: &MeasureConfig,
    progress: &Progress,
    target: &mut T,
    sampling: Sampling,
) -> RunOutcome {
    // Checked run (also the first warm-up run), always from a freshly reset input
    // so an implementation that does nothing cannot inherit a correct result.
    let warm_start = Instant::now();
    target.reset();
    let first = timed_run(target, T::run);
    let check = target.check(first.1);
    let paired = sampling == Sampling::Paired;
    let mut fastest = first.0;
    let mut fastest_reference = Duration::MAX;
    let mut batch = WarmupBatch::default();
    let mut reference_batch = WarmupBatch::default();
    while warm_start.elapsed() < cfg.warmup {
        fastest = fastest.min(batch.run(target, T::run));
        if paired {
            fastest_reference =
                fastest_reference.min(reference_batch.run(target, T::run_reference));
        }
    }
    if paired && fastest_reference == Duration::MAX {
        fastest_reference = timed_run(target, T::run_reference).0;
    }
    let reps = repetitions(cfg, fastest);
    let reference_reps = repetitions(cfg, fastest_reference);

    let mut samples_ns = Vec::with_capacity(cfg.samples);
    let mut reference_ns = Vec::new();
    let sampling_start = Instant::now();
    for _ in 0..cfg.samples {
        if paired {
            reference_ns.push(sample(target, T::run_reference, reference_reps));
        }
        samples_ns.push(sample(target, T::run, reps));
        progress.inc();
        if let Some(budget) = cfg.sampling_budget {
            if samples_ns.len() >= MIN_SAMPLES_UNDER_BUDGET && sampling_start.elapsed() > budget {
                progress.inc_by((cfg.samples - samples_ns.len()) as u64);
                break;
            }
        }
    }
    let (note, failure) = match target.protocol() {
        Ok(note) => (note, None),
        Err(why) => (None, Some(why)),
    };
    RunOutcome {
        samples_ns,
        reference_ns,
        check,
        note,
        failure,
        ..RunOutcome::default()
    }
}

/// A warm-up batch lasts at least this long once its runs are timed together: the
/// clock is read once per batch, not once per run, so that a short run's warm-up (and a
/// profile of it) is not mostly clock reads.
const WARMUP_BATCH: Duration = Duration::from_micros(100);

/// The warm-up's runs of one side, timed in batches that double until a batch lasts
/// [`WARMUP_BATCH`] (one run at a time for a target that resets before every run).
struct WarmupBatch {
    runs: usize,
}

impl Default for WarmupBatch {
    fn default() -> WarmupBatch {
        WarmupBatch { runs: 1 }
    }
}

impl WarmupBatch {
    /// Runs one batch; returns the time per run.
    fn run<T: Target>(&mut self, target: &mut T, run: fn(&mut T) -> u64) -> Duration {
        let per_run = Duration::from_nanos(sample(target, run, self.runs) as u64);
        // At most as many runs as the batch time has nanoseconds (a run lasts at least
        // one), which keeps `runs` within `u32` for the product.
        if !T::NEEDS_RESET && per_run * (self.runs as u32) < WARMUP_BATCH {
            self.runs = (self.runs * 2).min(WARMUP_BATCH.as_nanos() as usize);
        }
        per_run
    }
}

/// Repetitions per sample so that a sample of runs as fast as `fastest` lasts at least
/// `cfg.min_sample`.
fn repetitions(cfg: &MeasureConfig, fastest: Duration) -> usize {
    let per_run = fastest.as_nanos().max(1);
    (cfg.min_sample.as_nanos() / per_run).clamp(1, 1_000_000) as usize
}

/// One sample: `reps` runs of `run` (each after an untimed reset when needed); returns
/// the time per run in ns.
fn sample<T: Target>(target: &mut T, run: fn(&mut T) -> u64, reps: usize) -> f64 {
    let total = if T::NEEDS_RESET {
        (0..reps)
            .map(|_| timed_run(target, run).0)
            .sum::<Duration>()
    } else {
        let t0 = Instant::now();
        for _ in 0..reps {
            black_box(run(target));
        }
        t0.elapsed()
    };
    total.as_nanos() as f64 / reps as f64
}

/// One run, reset first when needed (untimed); returns its duration and result.
fn timed_run<T: Target>(target: &mut T, run: fn(&mut T) -> u64) -> (Duration, u64) {
    if T::NEEDS_RESET {
        target.reset();
    }
    let t0 = Instant::now();
    let out = black_box(run(target));
    (t0.elapsed(), out)
}

/// Minimum, median and maximum of a set of samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Smallest sample.
    pub min: f64,
    /// Median sample (mean of the middle two for an even count).
    pub median: f64,
    /// Largest sample.
    pub max: f64,
}

impl Summary {
    /// Summarises `samples` (must not be empty).
    pub fn of(samples: &[f64]) -> Summary {
        assert!(!samples.is_empty(), "no samples");
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let median = if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        };
        Summary {
            min: s[0],
            median,
            max: s[n - 1],
        }
    }
}

/// Progress bar on stderr: workload, implementation, thread count and samples done.
/// Hidden when stderr is not a terminal or with `--quiet`.
#[derive(Clone)]
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar over `total` samples, visible only if `visible` and stderr is a terminal.
    pub fn new(total: u64, visible: bool) -> Progress {
        use std::io::IsTerminal;
        let target = if visible && std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(total), target);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} samples  {msg}",
            )
            .expect("valid progress template"),
        );
        Progress { bar }
    }

    /// Shows what is being measured now.
    pub fn set_message(&self, msg: String) {
        self.bar.set_message(msg);
    }

    /// One more sample done.
    pub fn inc(&self) {
        self.bar.inc(1);
    }

    /// `n` more samples done (or skipped).
    pub fn inc_by(&self, n: u64) {
        self.bar.inc(n);
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts its runs.
    struct Counting {
        runs: u64,
        reference_runs: u64,
    }

    impl Target for Counting {
        const NEEDS_RESET: bool = false;
        fn reset(&mut self) {}
        fn run(&mut self) -> u64 {
            self.runs += 1;
            7
        }
        fn run_reference(&mut self) -> u64 {
            self.reference_runs += 1;
            7
        }
        fn check(&self, out: u64) -> u64 {
            out
        }
    }

    /// Five samples of a [`Counting`] target; returns the outcome and the counts.
    fn measure_counting(sampling: Sampling) -> (RunOutcome, Counting) {
        let cfg = MeasureConfig {
            samples: 5,
            warmup: Duration::from_millis(2),
            min_sample: Duration::from_micros(100),
            sampling_budget: None,
            from_main: false,
        };
        let mut target = Counting {
            runs: 0,
            reference_runs: 0,
        };
        let out = measure(&cfg, &Progress::new(5, false), &mut target, sampling);
        assert_eq!(out.samples_ns.len(), 5);
        (out, target)
    }

    #[test]
    fn paired_sampling_times_the_reference_between_samples() {
        let (out, target) = measure_counting(Sampling::Paired);
        assert_eq!(out.reference_ns.len(), 5);
        // Each sample repeats a run at least once; the reference is sampled as often.
        assert!(target.reference_runs >= 5 && target.runs >= 5);
    }

    #[test]
    fn unpaired_sampling_never_runs_the_reference() {
        let (out, target) = measure_counting(Sampling::Alone);
        assert!(out.reference_ns.is_empty());
        assert_eq!(target.reference_runs, 0);
    }

    #[test]
    fn warm_up_batches_double_until_they_last_the_batch_time() {
        let mut target = Counting {
            runs: 0,
            reference_runs: 0,
        };
        let mut batch = WarmupBatch::default();
        let mut sizes = Vec::new();
        for _ in 0..8 {
            sizes.push(batch.runs);
            batch.run(&mut target, Counting::run);
        }
        // A run of `Counting` lasts far less than a batch: each batch doubles, but for
        // one that a preemption of this thread made last the batch time.
        assert!(
            sizes.windows(2).all(|w| w[1] == w[0] || w[1] == 2 * w[0]),
            "{sizes:?}"
        );
        assert!(batch.runs >= 32, "{sizes:?}");
        assert_eq!(target.runs, sizes.iter().sum::<usize>() as u64);
    }

    #[test]
    fn warm_up_runs_of_a_target_that_resets_are_timed_one_at_a_time() {
        struct Resetting(u64);
        impl Target for Resetting {
            const NEEDS_RESET: bool = true;
            fn reset(&mut self) {}
            fn run(&mut self) -> u64 {
                self.0 += 1;
                self.0
            }
            fn run_reference(&mut self) -> u64 {
                0
            }
            fn check(&self, out: u64) -> u64 {
                out
            }
        }
        let mut target = Resetting(0);
        let mut batch = WarmupBatch::default();
        for _ in 0..4 {
            batch.run(&mut target, Resetting::run);
        }
        assert_eq!((batch.runs, target.0), (1, 4));
    }

    #[test]
    fn summary_odd_and_even() {
        assert_eq!(
            Summary::of(&[3.0, 1.0, 2.0]),
            Summary {
                min: 1.0,
                median: 2.0,
                max: 3.0
            }
        );
        assert_eq!(Summary::of(&[4.0, 1.0, 2.0, 3.0]).median, 2.5);
    }
}
