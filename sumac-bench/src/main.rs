//! `sumac-bench`: runs sumac, Rayon, Chili and sequential baselines side by side
//! on the same input in one process, checks every result against `seq`, and
//! prints a table (optionally CSV, SVG figures, a Chrome trace, a suite report).
//!
//! Exit codes: 0 on success, 1 when a result differs from `seq` (or a run fails),
//! 2 for bad flags (one line naming the flag; nothing is written).

mod cli;
mod experiment;
mod impls;
mod measure;
mod output;
mod plot;
mod policy;
mod report;
mod specs;
mod suite;
mod trace;
mod workloads;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;

use cli::{Cli, Command, Common, GraphCommand, SortChoice, SpawnChoice, VariantChoice};
use experiment::{ExperimentResult, Settings};
use measure::MeasureConfig;
use output::{FlagError, PendingFile};
use specs::{Selection, Spec};
use workloads::sort::SortKind;
use workloads::spawn::SpawnShape;

/// Why the run stopped early.
enum Failure {
    /// Bad flags or unwritable paths: exit code 2.
    Flag(String),
    /// A result mismatch or a failed write: exit code 1.
    Run(String),
}

impl From<FlagError> for Failure {
    fn from(e: FlagError) -> Self {
        Failure::Flag(e.0)
    }
}

fn main() -> ExitCode {
    impls::arm_branch_floor();
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Flag(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
        Err(Failure::Run(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(1)
        }
    }
}

/// Per-command defaults for sampling.
struct Defaults {
    samples: usize,
    warmup_ms: u64,
    sampling_budget: Option<Duration>,
}

fn run(cli: Cli) -> Result<(), Failure> {
    let common = &cli.common;
    let is_suite = matches!(cli.command, Some(Command::Suite(_)));
    let threads = match &common.threads {
        Some(t) => cli::parse_threads(t)?,
        None if is_suite => cli::suite_threads(),
        // crossbeam-channel's suite runs 4 senders (and 4 receivers).
        None if matches!(cli.command, Some(Command::Channel(_))) => vec![4],
        None => cli::default_threads(),
    };
    let impls = common.impls.as_deref().map(cli::parse_impls).transpose()?;
    let policies = match common.policy.as_deref() {
        Some(list) => policy::parse_policies(list)?,
        None => vec![policy::Policy::default()],
    };
    if common.samples == Some(0) {
        return Err(Failure::Flag("--samples: must be at least 1".into()));
    }
    if common.trace.is_some() && !cfg!(feature = "trace") {
        return Err(Failure::Flag(
            "--trace: this binary was built without tracing; rebuild with `cargo build --release -p sumac-bench --features trace`".into(),
        ));
    }
    let headline = matches!(cli.command, None | Some(Command::Headline));
    let sel = Selection {
        from_main: common.from_main,
        policies,
        impls,
        strict: !(headline || is_suite),
        threads,
        seed: common.seed,
    };
    let defaults = if is_suite {
        Defaults {
            samples: 10,
            warmup_ms: 300,
            sampling_budget: Some(Duration::from_secs(2)),
        }
    } else if matches!(cli.command, Some(Command::Channel(_))) {
        // One run of 5,000,000 messages takes a fraction of a second to seconds.
        Defaults {
            samples: 3,
            warmup_ms: 0,
            sampling_budget: None,
        }
    } else if matches!(
        cli.command,
        Some(Command::Ring(_) | Command::Threadring(_) | Command::Oneshot(_))
    ) {
        Defaults {
            samples: 5,
            warmup_ms: 200,
            sampling_budget: None,
        }
    } else if matches!(cli.command, Some(Command::LongLeaves(_))) {
        // Runs last tens to hundreds of milliseconds (the old example took the best of 5).
        Defaults {
            samples: 5,
            warmup_ms: 100,
            sampling_budget: None,
        }
    } else if headline {
        Defaults {
            samples: 20,
            warmup_ms: 200,
            sampling_budget: None,
        }
    } else {
        Defaults {
            samples: 20,
            warmup_ms: 1000,
            sampling_budget: None,
        }
    };
    let specs = build_specs(cli.command.as_ref(), common, &sel)?;
    if let Some(Command::Suite(args)) = &cli.command {
        if args.list || args.out.is_none() {
            for s in &specs {
                println!(
                    "{:<28} {}  [threads {:?}]",
                    s.plan.id, s.plan.title, s.plan.threads
                );
            }
            return Ok(());
        }
    }

    // Reserve every output file before anything runs.
    let csv = common
        .csv
        .as_deref()
        .map(|p| PendingFile::create("--csv", p))
        .transpose()?;
    let trace_file = common
        .trace
        .as_deref()
        .map(|p| PendingFile::create("--trace", p))
        .transpose()?;
    let svgs: Vec<PendingFile> = match (&common.svg, is_suite) {
        (Some(_), true) => {
            return Err(Failure::Flag(
                "--svg: suite writes one SVG per experiment into --out; drop --svg".into(),
            ))
        }
        (Some(path), false) => svg_paths(path, &specs)
            .iter()
            .map(|p| PendingFile::create("--svg", p))
            .collect::<Result<_, _>>()?,
        (None, _) => Vec::new(),
    };

    let start = Instant::now();
    let settings = Settings {
        measure: MeasureConfig {
            samples: common.samples.unwrap_or(defaults.samples),
            warmup: Duration::from_millis(common.warmup_ms.unwrap_or(defaults.warmup_ms)),
            min_sample: Duration::from_millis(1),
            sampling_budget: defaults.sampling_budget,
            from_main: false,
        },
        progress: !common.quiet,
        trace: common.trace.is_some(),
        deadline: None,
        inject_mismatch: common.inject_mismatch,
    };
    println!(
        "sumac-bench: {} cores available; {} samples, {} ms warm-up per run; threads {:?}",
        cli::cores(),
        settings.measure.samples,
        settings.measure.warmup.as_millis(),
        sel.threads
    );

    let (rows, traces) = if let Some(Command::Suite(args)) = &cli.command {
        let max = args.max_seconds;
        if !(max > 0.0 && max.is_finite()) {
            return Err(Failure::Flag(
                "--max-seconds: must be a positive number of seconds".into(),
            ));
        }
        let dir = args
            .out
            .as_deref()
            .expect("--out is required unless --list");
        prepare_dir(dir)?;
        let settings = Settings {
            deadline: Some(start + Duration::from_secs_f64(max)),
            ..settings
        };
        let only: Option<Vec<String>> = args.only.as_deref().map(|o| {
            o.split(',')
                .map(|w| w.trim().to_string())
                .filter(|w| !w.is_empty())
                .collect()
        });
        let out = suite::run_suite(specs, dir, only.as_deref(), &settings, common.quiet)
            .map_err(Failure::Run)?;
        println!(
            "\nsuite: wrote {} in {:.0} s",
            dir.join("REPORT.md").display(),
            start.elapsed().as_secs_f64()
        );
        (out.rows, out.traces)
    } else {
        let mut results: Vec<ExperimentResult> = Vec::new();
        for spec in specs {
            let res = spec.run(&settings).map_err(|e| Failure::Run(e.0))?;
            print!("{}", report::table(&res));
            let _ = std::io::stdout().flush();
            results.push(res);
        }
        for (file, res) in svgs.into_iter().zip(&results) {
            let svg = plot::render(res).map_err(Failure::Run)?;
            file.commit(svg.as_bytes()).map_err(Failure::Run)?;
        }
        let rows = results
            .iter()
            .flat_map(|r| r.rows.iter().cloned())
            .collect();
        let traces = results.into_iter().flat_map(|r| r.traces).collect();
        (rows, traces)
    };

    if let Some(file) = csv {
        file.commit(&report::to_csv(&rows)).map_err(Failure::Run)?;
    }
    if let Some(file) = trace_file {
        let json = trace::chrome_json(&traces);
        let bytes = serde_json::to_vec(&json).map_err(|e| Failure::Run(e.to_string()))?;
        file.commit(&bytes).map_err(Failure::Run)?;
        let events: usize = traces.iter().map(|t| t.events.len()).sum();
        if events == 0 {
            eprintln!("warning: --trace: sumac recorded no events (no sumac run, or recording not implemented)");
        }
    }
    Ok(())
}

/// The experiments a command runs.
fn build_specs(
    command: Option<&Command>,
    common: &Common,
    sel: &Selection,
) -> Result<Vec<Spec>, FlagError> {
    use cli::positive;
    Ok(match command {
        None | Some(Command::Headline) => specs::headline(common.smoke, sel)?,
        Some(Command::Suite(_)) => specs::suite(common.smoke, sel)?,
        Some(Command::TreeSum(a)) => {
            let work = cli::parse_list("--work", &a.work, true)?;
            vec![specs::tree(
                positive("--nodes", a.nodes)?,
                a.shape,
                &work,
                sel,
            )?]
        }
        Some(Command::Fib(a)) => {
            let n = positive("--n", a.n)?;
            if n > 90 {
                return Err(FlagError(
                    "--n: at most 90 (fib(91) overflows the call count)".into(),
                ));
            }
            vec![specs::fib(
                n,
                &cli::parse_list("--cutoff", &a.cutoff, true)?,
                sel,
            )?]
        }
        Some(Command::Channel(a)) => {
            let messages = positive("--messages", a.messages)?;
            specs::channel(
                &cli::parse_shapes(&a.shapes)?,
                &cli::parse_capacities(&a.capacities, messages)?,
                messages,
                sel,
            )?
        }
        Some(Command::Ring(a)) => vec![specs::ring(
            positive("--tasks", a.tasks)?,
            positive("--laps", a.laps)?,
            sel,
        )?],
        Some(Command::Threadring(a)) => vec![specs::threadring(positive("--n", a.n)?, sel)?],
        Some(Command::Oneshot(a)) => vec![specs::oneshot(positive("--rounds", a.rounds)?, sel)?],
        Some(Command::Iota(a)) => vec![specs::iota(positive("--len", a.len)?, sel)?],
        Some(Command::Increment(a)) => {
            vec![specs::increment(positive("--len", a.len)?, a.unsplit, sel)?]
        }
        Some(Command::ForIrregular(a)) => {
            vec![specs::for_irregular(
                positive("--len", a.len)?,
                a.limit,
                sel,
            )?]
        }
        Some(Command::Lu(a)) => vec![specs::lu(positive("--size", a.size)?, sel)?],
        Some(Command::Matmul(a)) => vec![specs::matmul(positive("--size", a.size)?, sel)?],
        Some(Command::Jacobi(a)) => vec![specs::jacobi(a.n, positive("--steps", a.steps)?, sel)?],
        Some(Command::SumSquares(a)) => vec![specs::sum_squares(positive("--len", a.len)?, sel)?],
        Some(Command::Graph(g)) => graph_specs(g, sel)?,
        Some(Command::Sort(a)) => {
            let len = positive("--len", a.len)?;
            let kinds: &[SortKind] = match a.kind {
                SortChoice::Unstable => &[SortKind::Unstable],
                SortChoice::Stable => &[SortKind::Stable],
                SortChoice::Both => &[SortKind::Unstable, SortKind::Stable],
            };
            kinds
                .iter()
                .map(|&k| specs::sort(len, k, sel))
                .collect::<Result<_, _>>()?
        }
        Some(Command::Spawn(a)) => {
            let fan_out = positive("--fan-out-depth", a.fan_out_depth)?;
            if fan_out > 30 {
                return Err(FlagError("--fan-out-depth: at most 30".into()));
            }
            let skynet = positive("--skynet-depth", a.skynet_depth)?;
            if skynet > 9 {
                return Err(FlagError("--skynet-depth: at most 9".into()));
            }
            let jobs = positive("--jobs", a.jobs)?;
            let all = [
                (SpawnShape::FanOut, fan_out),
                (SpawnShape::Skynet, skynet),
                (SpawnShape::Flat, jobs),
                (SpawnShape::External, jobs),
            ];
            let chosen = |shape: SpawnShape| match a.shape {
                SpawnChoice::All => true,
                SpawnChoice::FanOut => shape == SpawnShape::FanOut,
                SpawnChoice::Skynet => shape == SpawnShape::Skynet,
                SpawnChoice::Flat => shape == SpawnShape::Flat,
                SpawnChoice::External => shape == SpawnShape::External,
            };
            all.into_iter()
                .filter(|&(shape, _)| chosen(shape))
                .map(|(shape, size)| specs::spawn(shape, size, sel))
                .collect::<Result<_, _>>()?
        }
        Some(Command::Bfs(a)) => {
            let scale = a.scale.unwrap_or(if common.smoke { 16 } else { 20 });
            specs::bfs(scale, a.keys, a.direction, sel)?
        }
        Some(Command::LongLeaves(a)) => {
            let leaf_us = positive("--leaf-us", a.leaf_us)?;
            if leaf_us > 10_000_000 {
                return Err(FlagError("--leaf-us: at most 10,000,000 (10 s)".into()));
            }
            let items = match a.items {
                Some(n) => positive("--items", n)?,
                None => 2 * sel.threads.iter().copied().max().unwrap_or(1) as u64,
            };
            let shapes: Vec<_> = match a.shape {
                Some(shape) => vec![shape],
                None => workloads::leaves::LeafShape::ALL.to_vec(),
            };
            shapes
                .into_iter()
                .map(|shape| specs::long_leaves(shape, leaf_us, items, a.sleep, sel))
                .collect::<Result<_, _>>()?
        }
        Some(Command::ForkOverhead(a)) => {
            let nodes = cli::parse_list("--nodes", &a.nodes, false)?;
            let n = positive("--fib", a.fib)?;
            if n > 90 {
                return Err(FlagError(
                    "--fib: at most 90 (fib(91) overflows the call count)".into(),
                ));
            }
            specs::fork_overhead(&nodes, n, sel)?
        }
        Some(Command::Knucleotide(a)) => {
            let n = a.n.unwrap_or(if common.smoke { 10_000 } else { 2_500_000 });
            vec![specs::knucleotide(positive("--n", n)?, a.print, sel)?]
        }
    })
}

/// The experiments of `sumac-bench graph ...`.
fn graph_specs(command: &GraphCommand, sel: &Selection) -> Result<Vec<Spec>, FlagError> {
    use workloads::graph::{CostOf, Shape, Variant};
    let shape = |shape: Shape, size: Option<u64>, default: u64| {
        specs::graph_shape(shape, size.unwrap_or(default), sel).map(|s| vec![s])
    };
    match command {
        GraphCommand::Bikeshed(a) => {
            let variants: &[Variant] = match a.variant {
                VariantChoice::A => &[Variant::A],
                VariantChoice::E => &[Variant::E],
                VariantChoice::Both => &[Variant::E, Variant::A],
            };
            let consumers = cli::parse_threads(&a.consumers)
                .map_err(|e| FlagError(e.0.replace("--threads", "--consumers")))?;
            let sel = Selection {
                threads: consumers,
                ..sel.clone()
            };
            variants
                .iter()
                .map(|&v| specs::bikeshed(a.tasks, a.producers, v, &sel))
                .collect()
        }
        GraphCommand::LinearChain(a) => shape(Shape::LinearChain, a.size, 1 << 20),
        GraphCommand::BinaryTree(a) => shape(Shape::BinaryTree, a.size, 20),
        GraphCommand::Wavefront(a) => shape(Shape::Wavefront, a.size, 1024),
        GraphCommand::GraphTraversal(a) => shape(Shape::GraphTraversal, a.size, 1024),
        GraphCommand::TaskCost(a) => Ok(vec![
            specs::task_cost(a.count, CostOf::Create, sel)?,
            specs::task_cost(a.count, CostOf::Dependency, sel)?,
            specs::task_cost(a.count, CostOf::Dependency8, sel)?,
            specs::task_cost(a.count, CostOf::Linked, sel)?,
            specs::task_cost(a.count, CostOf::Run, sel)?,
        ]),
    }
}

/// `--svg PATH` for one experiment; `PATH-stem-<id>.svg` beside it for several.
fn svg_paths(path: &Path, specs: &[Spec]) -> Vec<PathBuf> {
    if specs.len() == 1 {
        return vec![path.to_path_buf()];
    }
    let stem = path
        .file_stem()
        .map_or("figure".into(), |s| s.to_string_lossy().into_owned());
    specs
        .iter()
        .map(|s| path.with_file_name(format!("{stem}-{}.svg", s.plan.id)))
        .collect()
}

/// Creates the suite's output directory and checks that it is writable.
fn prepare_dir(dir: &Path) -> Result<(), FlagError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| FlagError(format!("--out: cannot create '{}': {e}", dir.display())))?;
    drop(PendingFile::create("--out", &dir.join("REPORT.md"))?);
    Ok(())
}
