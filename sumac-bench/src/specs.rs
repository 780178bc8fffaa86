//! Experiment definitions: which workload, size, parameters, implementations and
//! thread counts each command runs. Inputs are built lazily, when the experiment runs.

use crate::cli::DirectionChoice;
use crate::experiment::{run_experiment, ExperimentResult, Plan, RunError, Settings, SweepMetric};
use crate::impls::Impl;
use crate::output::FlagError;
use crate::policy::Policy;
use crate::report::fmt_count;
use crate::workloads::bfs::{self, Bfs, Direction};
use crate::workloads::channel::{ChannelBench, Shape as ChannelShape};
use crate::workloads::fib::{fib_calls, Fib};
use crate::workloads::graph::{
    Bikeshed, CostOf, Shape as GraphShape, ShapeWorkload, TaskCost, Variant,
};
use crate::workloads::knucleotide::KNucleotide;
use crate::workloads::leaves::{LeafShape, LongLeaves};
use crate::workloads::loops::{ForIrregular, Increment, Iota, Jacobi, Lu, Matmul, SumSquares};
use crate::workloads::ring::MessageBench;
use crate::workloads::sort::{Sort, SortKind};
use crate::workloads::spawn::{Spawn, SpawnShape};
use crate::workloads::tree::{Shape, TreeSum};
use crate::workloads::Workload;

type Runner = Box<dyn FnOnce(&Plan, &Settings) -> Result<ExperimentResult, RunError>>;

/// An experiment ready to run: its plan and a closure that builds the input and runs it.
pub struct Spec {
    /// What will run.
    pub plan: Plan,
    runner: Runner,
}

impl Spec {
    /// Builds the input and runs the experiment.
    pub fn run(self, settings: &Settings) -> Result<ExperimentResult, RunError> {
        (self.runner)(&self.plan, settings)
    }
}

/// Which implementations the user asked for, and how to treat unsupported ones.
#[derive(Clone, Debug)]
pub struct Selection {
    /// `None`: every implementation the workload supports.
    pub impls: Option<Vec<Impl>>,
    /// Reject (rather than skip) a requested implementation the workload lacks.
    pub strict: bool,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Seed for random inputs.
    pub seed: u64,
    /// Time each run as a call from outside the pool (`--from-main`).
    pub from_main: bool,
    /// sumac's policy variants (`--policy`).
    pub policies: Vec<Policy>,
}

/// Fills in `plan.impls` from the selection and wraps the workload builder.
fn make<W: Workload + 'static>(
    mut plan: Plan,
    sel: &Selection,
    build: impl FnOnce() -> W + 'static,
) -> Result<Spec, FlagError> {
    let supported: Vec<Impl> = Impl::ALL.into_iter().filter(|&i| W::supports(i)).collect();
    plan.impls = match &sel.impls {
        // Implementations that cannot run every configuration run only when named.
        None => supported
            .iter()
            .copied()
            .filter(|imp| !imp.only_when_named())
            .collect(),
        Some(list) => {
            if sel.strict {
                if let Some(bad) = list.iter().find(|i| !supported.contains(i)) {
                    let names: Vec<_> = supported.iter().map(|i| i.name()).collect();
                    let hint = if *bad == Impl::Sumac {
                        " (sumac's loop variants need `--features sumac-iter`)"
                    } else {
                        ""
                    };
                    return Err(FlagError(format!(
                        "--impls: {bad} does not run {} (it supports {}){hint}",
                        plan.bench,
                        names.join(", ")
                    )));
                }
            }
            list.iter()
                .copied()
                .filter(|i| supported.contains(i))
                .collect()
        }
    };
    plan.threads = sel.threads.clone();
    plan.policies = sel.policies.clone();
    let only_default = matches!(sel.policies.as_slice(), [p] if p.is_default());
    if sel.strict && !only_default && !plan.impls.contains(&Impl::Sumac) {
        return Err(FlagError(format!(
            "--policy: {} runs no sumac variant here (sumac is not among its implementations)",
            plan.bench
        )));
    }
    if sel.from_main {
        plan.from_main = true;
        plan.id.push_str("-from-main");
        plan.title.push_str(", each run a call from main");
    }
    Ok(Spec {
        plan,
        runner: Box::new(move |plan, settings| run_experiment(&build(), plan, settings)),
    })
}

/// Smallest and largest value of a non-empty list.
fn range_of(values: &[u64]) -> (u64, u64) {
    let lo = values.iter().copied().min().unwrap_or(0);
    let hi = values.iter().copied().max().unwrap_or(0);
    (lo, hi)
}

/// A short size label for file names: 1000, 1M, 100M, 10k.
pub fn si(n: u64) -> String {
    if n >= 1_000_000 && n % 1_000_000 == 0 {
        format!("{}M", n / 1_000_000)
    } else if n >= 10_000 && n % 1000 == 0 {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

fn base(id: String, bench: &str, title: String, size: u64, unit: &'static str, units: u64) -> Plan {
    Plan {
        id,
        bench: bench.to_string(),
        title,
        size,
        unit,
        units: units.max(1),
        param_name: None,
        params: vec![None],
        impls: Vec::new(),
        threads: Vec::new(),
        sweep_metric: SweepMetric::TimePerUnit,
        pair_long_runs: false,
        from_main: false,
        policies: vec![Policy::default()],
    }
}

/// tree-sum with `nodes` nodes, a shape and a list of work sizes (`[0]` = none).
pub fn tree(nodes: u64, shape: Shape, work: &[u64], sel: &Selection) -> Result<Spec, FlagError> {
    let bench = match shape {
        Shape::Balanced => "tree-sum".to_string(),
        s => format!("tree-sum-{}", s.name()),
    };
    let mut title = format!(
        "tree-sum, {} nodes, {} tree",
        fmt_count(nodes),
        shape.name()
    );
    let mut id = format!("{bench}-{}", si(nodes));
    let mut plan = base(id.clone(), &bench, title.clone(), nodes, "node", nodes);
    if work != [0] {
        plan.param_name = Some("work");
        plan.params = work.iter().map(|&k| Some(k)).collect();
        if let [k] = work {
            title.push_str(&format!(", work {k}"));
            id.push_str(&format!("-work{k}"));
        } else {
            let (lo, hi) = range_of(work);
            title.push_str(&format!(", work {lo} to {hi}"));
            id.push_str("-work");
        }
        plan.title = title;
        plan.id = id;
    }
    plan.sweep_metric = SweepMetric::RatioToSeq;
    let seed = sel.seed;
    make(plan, sel, move || TreeSum::new(nodes, shape, seed))
}

/// fib(n) with a list of cutoffs.
pub fn fib(n: u64, cutoffs: &[u64], sel: &Selection) -> Result<Spec, FlagError> {
    let calls = fib_calls(n);
    let mut plan = base(
        format!("fib-{n}{}", if cutoffs.len() > 1 { "-cutoffs" } else { "" }),
        "fib",
        format!("fib({n}), {} calls", fmt_count(calls)),
        n,
        "call",
        calls,
    );
    if cutoffs.len() == 1 {
        plan.title.push_str(&format!(", cutoff {}", cutoffs[0]));
        plan.id.push_str(&format!("-cutoff{}", cutoffs[0]));
    } else {
        let threads = match sel.threads.as_slice() {
            [t] => format!(" at {t} threads"),
            _ => String::new(),
        };
        let (lo, hi) = range_of(cutoffs);
        plan.title
            .push_str(&format!(", cutoffs {lo} to {hi}{threads}"));
    }
    plan.param_name = Some("cutoff");
    plan.params = cutoffs.iter().map(|&c| Some(c)).collect();
    make(plan, sel, move || Fib::new(n))
}

/// iota over `len` elements.
pub fn iota(len: u64, sel: &Selection) -> Result<Spec, FlagError> {
    let plan = base(
        format!("iota-{}", si(len)),
        "iota",
        format!("iota, {} elements", fmt_count(len)),
        len,
        "element",
        len,
    );
    make(plan, sel, move || Iota::new(len as usize))
}

/// increment over `len` elements (`unsplit`: under `with_min_len(usize::MAX)`).
pub fn increment(len: u64, unsplit: bool, sel: &Selection) -> Result<Spec, FlagError> {
    let plan = base(
        format!(
            "increment-{}{}",
            si(len),
            if unsplit { "-unsplit" } else { "" }
        ),
        "increment",
        format!(
            "increment, {} usizes{}",
            fmt_count(len),
            if unsplit {
                ", with_min_len(usize::MAX)"
            } else {
                ""
            }
        ),
        len,
        "element",
        len,
    );
    make(plan, sel, move || Increment::new(len as usize, unsplit))
}

/// for-irregular with `len` iterations and `limit`.
pub fn for_irregular(len: u64, limit: u64, sel: &Selection) -> Result<Spec, FlagError> {
    if limit <= 10 {
        return Err(FlagError("--limit: must be greater than 10".into()));
    }
    let plan = base(
        format!("for-irregular-{}-limit{limit}", si(len)),
        "for-irregular",
        format!(
            "for-irregular, {} iterations, limit {limit}",
            fmt_count(len)
        ),
        len,
        "iteration",
        len,
    );
    make(plan, sel, move || ForIrregular::new(len as usize, limit))
}

/// LU of a `size x size` matrix.
pub fn lu(size: u64, sel: &Selection) -> Result<Spec, FlagError> {
    let plan = base(
        format!("lu-{size}"),
        "lu",
        format!("lu, {size} x {size} matrix"),
        size,
        "update",
        Lu::updates(size),
    );
    let seed = sel.seed;
    make(plan, sel, move || Lu::new(size as usize, seed))
}

/// matmul of two `size x size` matrices.
pub fn matmul(size: u64, sel: &Selection) -> Result<Spec, FlagError> {
    let plan = base(
        format!("matmul-{size}"),
        "matmul",
        format!("matmul, {size} x {size} matrices"),
        size,
        "multiply-add",
        size.saturating_pow(3),
    );
    let seed = sel.seed;
    make(plan, sel, move || Matmul::new(size as usize, seed))
}

/// jacobi: `steps` sweeps of an `n x n` grid.
pub fn jacobi(n: u64, steps: u64, sel: &Selection) -> Result<Spec, FlagError> {
    if !(3..=16_384).contains(&n) {
        return Err(FlagError(
            "--n: the grid side must be from 3 to 16384".into(),
        ));
    }
    if steps > 1_000_000 {
        return Err(FlagError("--steps: at most 1,000,000".into()));
    }
    let plan = base(
        format!("jacobi-{n}x{}", si(steps)),
        "jacobi",
        format!("jacobi, {n} x {n} grid, {} sweeps", fmt_count(steps)),
        n,
        "cell",
        n * n * steps,
    );
    let seed = sel.seed;
    make(plan, sel, move || {
        Jacobi::new(n as usize, steps as usize, seed)
    })
}

/// sum-squares over `len` elements.
pub fn sum_squares(len: u64, sel: &Selection) -> Result<Spec, FlagError> {
    let plan = base(
        format!("sum-squares-{}", si(len)),
        "sum-squares",
        format!("sum-squares, {} elements", fmt_count(len)),
        len,
        "element",
        len,
    );
    let seed = sel.seed;
    make(plan, sel, move || SumSquares::new(len as usize, seed))
}

/// One sort of `len` random `u64`s.
pub fn sort(len: u64, kind: SortKind, sel: &Selection) -> Result<Spec, FlagError> {
    let bench = kind.bench_name();
    let plan = base(
        format!("{bench}-{}", si(len)),
        bench,
        format!("{bench}, {} random u64", fmt_count(len)),
        len,
        "element",
        len,
    );
    let seed = sel.seed;
    make(plan, sel, move || Sort::new(len as usize, kind, seed))
}

/// One spawn workload: `size` is a tree's depth or a number of jobs.
pub fn spawn(shape: SpawnShape, size: u64, sel: &Selection) -> Result<Spec, FlagError> {
    let bench = shape.bench_name();
    let jobs = shape.jobs(size);
    let title = match shape {
        SpawnShape::FanOut => format!("spawn fan-out, depth {size} ({} jobs)", fmt_count(jobs)),
        SpawnShape::Skynet => format!("spawn skynet, depth {size} ({} jobs)", fmt_count(jobs)),
        SpawnShape::Flat => format!("spawn flat, {} jobs into one scope", fmt_count(jobs)),
        SpawnShape::External => format!("spawn external, {} jobs from outside", fmt_count(jobs)),
    };
    let id = match shape {
        SpawnShape::FanOut | SpawnShape::Skynet => format!("{bench}-{size}"),
        SpawnShape::Flat | SpawnShape::External => format!("{bench}-{}", si(size)),
    };
    let plan = base(id, bench, title, size, "job", jobs);
    make(plan, sel, move || Spawn::new(shape, size))
}

/// long-leaves: `shape` with leaves of `leaf_us` µs (sleeping if `sleep`), `items`
/// leaves for the loop shape.
pub fn long_leaves(
    shape: LeafShape,
    leaf_us: u64,
    items: u64,
    sleep: bool,
    sel: &Selection,
) -> Result<Spec, FlagError> {
    let leaves = shape.leaves(items);
    let kind = if sleep { "sleeping" } else { "busy" };
    let plan = base(
        format!(
            "long-leaves-{}-{}us{}",
            shape.name(),
            si(leaf_us),
            if sleep { "-sleep" } else { "" }
        ),
        &format!("long-leaves-{}", shape.name()),
        format!(
            "long leaves: {}, {} µs {kind} leaves",
            shape.describe(items),
            fmt_count(leaf_us)
        ),
        leaf_us,
        "leaf",
        leaves,
    );
    let mut spec = make(plan, sel, move || {
        LongLeaves::new(
            shape,
            items,
            std::time::Duration::from_micros(leaf_us),
            sleep,
        )
    })?;
    if shape == LeafShape::Loop && !cfg!(feature = "sumac-iter") {
        spec.plan.impls.retain(|&imp| imp != Impl::Sumac);
    }
    Ok(spec)
}

/// fork-overhead: balanced tree-sum of each size in `nodes` and fib(`fib_n`), one join
/// per node or call, by default against plain recursion, Rayon and the branch floor.
pub fn fork_overhead(nodes: &[u64], fib_n: u64, sel: &Selection) -> Result<Vec<Spec>, FlagError> {
    let sel = &Selection {
        impls: Some(
            sel.impls
                .clone()
                .unwrap_or_else(|| vec![Impl::Seq, Impl::Sumac, Impl::Rayon, Impl::BranchFloor]),
        ),
        ..sel.clone()
    };
    let mut out = Vec::new();
    for &n in nodes {
        out.push(tree(n, Shape::Balanced, &[0], sel)?);
    }
    out.push(fib(fib_n, &[1], sel)?);
    for spec in &mut out {
        spec.plan.id = format!("fork-overhead-{}", spec.plan.id);
        spec.plan.title = format!("fork overhead: {}", spec.plan.title);
    }
    Ok(out)
}

/// Graph500 BFS on a Kronecker graph of `2^scale` vertices with `keys` search
/// keys: `bfs` (top-down) and/or `bfs-do` (direction-optimising), sharing one graph.
pub fn bfs(
    scale: u32,
    keys: u64,
    direction: DirectionChoice,
    sel: &Selection,
) -> Result<Vec<Spec>, FlagError> {
    if !(bfs::MIN_SCALE..=bfs::MAX_SCALE).contains(&scale) {
        return Err(FlagError(format!(
            "--scale: must be from {} to {} (2^scale vertices, 16 edges each)",
            bfs::MIN_SCALE,
            bfs::MAX_SCALE
        )));
    }
    if keys == 0 || keys > 4096 {
        return Err(FlagError("--keys: must be from 1 to 4096".into()));
    }
    let directions: &[Direction] = match direction {
        DirectionChoice::TopDown => &[Direction::TopDown],
        DirectionChoice::Optimizing => &[Direction::Optimizing],
        DirectionChoice::Both => &[Direction::TopDown, Direction::Optimizing],
    };
    // Both benches search the same graph: it is built once, by whichever runs first.
    let input = bfs::SharedInput::new(scale, keys as usize, sel.seed);
    directions
        .iter()
        .map(|&d| {
            let bench = d.bench_name();
            let plan = base(
                format!("{bench}-scale{scale}"),
                bench,
                format!(
                    "{bench}, Kronecker scale {scale} ({} vertices, {} edges), {keys} keys",
                    fmt_count(1 << scale),
                    fmt_count(bfs::EDGE_FACTOR << scale)
                ),
                u64::from(scale),
                "edge",
                bfs::EDGE_FACTOR << scale,
            );
            let plan = Plan {
                pair_long_runs: true,
                ..plan
            };
            let input = input.clone();
            make(plan, sel, move || Bfs::new(input.get(), d))
        })
        .collect()
}

/// k-nucleotide over the `>THREE` section of `fasta n` (5n bases).
pub fn knucleotide(n: u64, print: bool, sel: &Selection) -> Result<Spec, FlagError> {
    if n > 50_000_000 {
        return Err(FlagError(
            "--n: at most 50,000,000 (twice the reference; the k = 18 table of a larger input may not fit in memory)".into(),
        ));
    }
    let plan = base(
        format!("knucleotide-{}", si(n)),
        "knucleotide",
        format!(
            "k-nucleotide, fasta {} (>THREE: {} bases)",
            fmt_count(n),
            fmt_count(5 * n)
        ),
        n,
        "base",
        5 * n,
    );
    let plan = Plan {
        pair_long_runs: true,
        from_main: false,
        ..plan
    };
    make(plan, sel, move || {
        let w = KNucleotide::new(n as usize);
        if print {
            print!("{}", w.seq_report());
        }
        w
    })
}

/// Bikeshed's experiment: `tasks` tasks from `producers` producers, variant A or E; the
/// thread counts of `sel` are the consumers.
pub fn bikeshed(
    tasks: u64,
    producers: u64,
    variant: Variant,
    sel: &Selection,
) -> Result<Spec, FlagError> {
    if producers == 0 || producers > 1024 {
        return Err(FlagError("--producers: must be between 1 and 1024".into()));
    }
    if tasks == 0 || tasks > u32::MAX as u64 {
        return Err(FlagError(
            "--tasks: must be between 1 and 4294967295".into(),
        ));
    }
    let v = match variant {
        Variant::A => "A",
        Variant::E => "E",
    };
    let plan = base(
        format!("graph-bikeshed-{v}-{}p-{}", producers, si(tasks)),
        &format!("graph-bikeshed-{v}"),
        format!(
            "Bikeshed {v}, {} tasks, {producers} producer(s), consumers = threads",
            fmt_count(tasks)
        ),
        tasks,
        "task",
        tasks,
    );
    make(plan, sel, move || {
        Bikeshed::new(tasks, producers as usize, variant)
    })
}

/// One of Taskflow's shapes at `size`.
pub fn graph_shape(shape: GraphShape, size: u64, sel: &Selection) -> Result<Spec, FlagError> {
    let limit = match shape {
        GraphShape::LinearChain => 1 << 26,
        GraphShape::BinaryTree => 26,
        GraphShape::Wavefront | GraphShape::GraphTraversal => 1 << 13,
    };
    if size == 0 || size > limit {
        return Err(FlagError(format!("--size: must be between 1 and {limit}")));
    }
    let tasks = shape.tasks(size);
    let plan = base(
        format!("{}-{}", shape.name(), si(size)),
        shape.name(),
        format!("{}, size {size}, {} tasks", shape.name(), fmt_count(tasks)),
        size,
        "task",
        tasks,
    );
    let seed = sel.seed;
    make(plan, sel, move || ShapeWorkload::new(shape, size, seed))
}

/// The cost of `count` task creations or dependency additions.
pub fn task_cost(count: u64, what: CostOf, sel: &Selection) -> Result<Spec, FlagError> {
    if count == 0 || count > 1 << 26 {
        return Err(FlagError("--count: must be between 1 and 67108864".into()));
    }
    let unit = match what {
        CostOf::Create | CostOf::Linked | CostOf::Run => "task",
        CostOf::Dependency | CostOf::Dependency8 => "dependency",
    };
    let plan = base(
        format!("{}-{}", what.name(), si(count)),
        what.name(),
        format!("{}, {} per run", what.name(), fmt_count(count)),
        count,
        unit,
        count,
    );
    make(plan, sel, move || TaskCost::new(count as usize, what))
}

/// Every graph experiment (the suite's graph part): Bikeshed A and E with one producer
/// and one consumer, Taskflow's shapes at 1 and `top` threads, and the task costs.
pub fn graph_suite(smoke: bool, sel: &Selection, top: usize) -> Result<Vec<Spec>, FlagError> {
    let s = |full: u64, tiny: u64| if smoke { tiny } else { full };
    let at = |threads: Vec<usize>| Selection {
        threads,
        ..sel.clone()
    };
    let mut ends = vec![1, top];
    ends.dedup();
    Ok(vec![
        bikeshed(s(33_554_431, 20_000), 1, Variant::E, &at(vec![1]))?,
        bikeshed(s(33_554_431, 20_000), 1, Variant::A, &at(vec![1]))?,
        graph_shape(GraphShape::LinearChain, s(1 << 20, 1000), &at(ends.clone()))?,
        graph_shape(GraphShape::BinaryTree, s(20, 8), &at(ends.clone()))?,
        graph_shape(GraphShape::Wavefront, s(1024, 30), &at(ends.clone()))?,
        graph_shape(GraphShape::GraphTraversal, s(1024, 30), &at(ends.clone()))?,
        task_cost(s(1 << 20, 1000), CostOf::Create, &at(vec![1]))?,
        task_cost(s(1 << 20, 1000), CostOf::Dependency, &at(vec![1]))?,
        task_cost(s(1 << 20, 1000), CostOf::Dependency8, &at(vec![1]))?,
        task_cost(s(1 << 20, 1000), CostOf::Linked, &at(vec![1]))?,
        task_cost(s(1 << 20, 1000), CostOf::Run, &at(vec![1]))?,
    ])
}

/// The headline suite: tree-sum 1,000 and 1,000,000 nodes and fib 30 with
/// cutoffs 1 and 20 (tiny sizes with `smoke`).
pub fn headline(smoke: bool, sel: &Selection) -> Result<Vec<Spec>, FlagError> {
    let (small, large, n, cutoffs) = if smoke {
        (100, 1000, 15, [1, 5])
    } else {
        (1000, 1_000_000, 30, [1, 20])
    };
    Ok(vec![
        tree(small, Shape::Balanced, &[0], sel)?,
        tree(large, Shape::Balanced, &[0], sel)?,
        fib(n, &cutoffs, sel)?,
    ])
}

/// Every workload at its reference sizes, cheapest and most important first.
/// Thread sweeps use `sel.threads`; the fib cutoff sweep and the tree shape runs
/// use the largest thread count up to the core count ("top"); the work sweep uses
/// 1 and top threads; the large loop inputs use 1, top and the largest count.
pub fn suite(smoke: bool, sel: &Selection) -> Result<Vec<Spec>, FlagError> {
    let s = |full: u64, tiny: u64| if smoke { tiny } else { full };
    let cores = crate::cli::cores();
    let top = sel
        .threads
        .iter()
        .copied()
        .filter(|&t| t <= cores)
        .max()
        .unwrap_or(sel.threads[0]);
    let at = |mut threads: Vec<usize>| {
        threads.dedup();
        Selection {
            threads,
            ..sel.clone()
        }
    };
    // Large loop inputs: 1 thread, all cores and the largest count (oversubscribed).
    let max = sel.threads.iter().copied().max().unwrap_or(top);
    let ends = at(vec![1, top, max]);
    let mut out = vec![
        tree(s(1000, 100), Shape::Balanced, &[0], sel)?,
        fib(s(35, 15), &[1], sel)?,
        tree(s(100_000_000, 5000), Shape::Balanced, &[0], sel)?,
        fib(s(35, 15), &[1, 5, 10, 15, 20, 25], &at(vec![top]))?,
        tree(
            s(1_000_000, 1000),
            Shape::Balanced,
            &[0, 1, 2, 4, 8, 16, 32, 64],
            &at(vec![1, top]),
        )?,
        tree(s(10_000_000, 1000), Shape::Random, &[0], &at(vec![top]))?,
        tree(s(10_000_000, 1000), Shape::LeftDeep, &[0], &at(vec![top]))?,
        iota(s(1_000_000, 1000), sel)?,
        sum_squares(s(1000, 100), sel)?,
        sort(s(1000, 100), SortKind::Unstable, sel)?,
        sort(s(1000, 100), SortKind::Stable, sel)?,
        for_irregular(s(10_000, 300), 25, sel)?,
        lu(s(700, 20), sel)?,
        matmul(s(500, 20), sel)?,
        jacobi(s(256, 8), s(400, 4), sel)?,
        increment(s(1000, 100), false, sel)?,
        increment(s(102_400, 1000), false, sel)?,
        iota(s(100_000_000, 5000), &ends)?,
        sum_squares(s(100_000_000, 5000), &ends)?,
        sort(s(10_000_000, 5000), SortKind::Unstable, &ends)?,
        sort(s(10_000_000, 5000), SortKind::Stable, &ends)?,
        matmul(s(1024, 30), &ends)?,
        for_irregular(s(100, 100), s(40, 20), &ends)?,
        spawn(SpawnShape::FanOut, s(20, 8), sel)?,
        spawn(SpawnShape::Skynet, s(6, 3), sel)?,
        spawn(SpawnShape::Flat, s(1_000_000, 1000), sel)?,
        spawn(SpawnShape::External, s(1_000_000, 1000), sel)?,
        knucleotide(s(2_500_000, 10_000), false, &ends)?,
        jacobi(s(1024, 16), s(200, 4), &ends)?,
    ];
    // The loop and tree workloads at small sizes again, each run a call from the
    // measuring thread outside the pool (the way `main` calls a parallel iterator),
    // beside their in-pool rows above.
    let mut one_top = vec![1, top];
    one_top.dedup();
    let from_main = Selection {
        from_main: true,
        ..at(one_top.clone())
    };
    out.extend([
        increment(s(1000, 100), false, &from_main)?,
        increment(s(102_400, 1000), false, &from_main)?,
        increment(s(102_400, 1000), true, &from_main)?,
        sum_squares(s(1000, 100), &from_main)?,
        tree(s(1000, 100), Shape::Balanced, &[0], &from_main)?,
    ]);
    // The fork path against plain recursion and the branch floor (fork_overhead's shape).
    out.extend(fork_overhead(
        &[s(1000, 100), s(10_000_000, 1000)],
        s(30, 15),
        &at(one_top),
    )?);
    // Coarse leaves that make no forks, at all cores: 2 ms busy leaves.
    for shape in LeafShape::ALL {
        out.push(long_leaves(
            shape,
            s(2000, 100),
            2 * top as u64,
            false,
            &at(vec![top]),
        )?);
    }
    out.extend(bfs(
        if smoke { 12 } else { 20 },
        if smoke { 8 } else { 64 },
        DirectionChoice::Both,
        &ends,
    )?);
    out.extend(message_passing_suite(smoke, sel, top)?);
    out.extend(graph_suite(smoke, sel, top)?);
    // Drop duplicate ids that tiny sizes can create.
    let mut seen = std::collections::HashSet::new();
    out.retain(|spec| seen.insert(spec.plan.id.clone()));
    Ok(out)
}

// ------------------------------------------------------------------ message passing

/// The channel suite: one experiment per shape and capacity (`None` = unbounded),
/// with the implementations that run it.
pub fn channel(
    shapes: &[ChannelShape],
    capacities: &[Option<usize>],
    messages: u64,
    sel: &Selection,
) -> Result<Vec<Spec>, FlagError> {
    let mut out = Vec::new();
    for &shape in shapes {
        for &capacity in capacities {
            let cap_name = match capacity {
                None => "unbounded".to_string(),
                Some(c) if c as u64 == messages && c > 1 => "bounded-n".to_string(),
                Some(c) => format!("bounded{c}"),
            };
            let cap_text = match capacity {
                None => "unbounded".to_string(),
                Some(c) => format!("capacity {}", fmt_count(c as u64)),
            };
            let bench = format!("channel-{}", shape.name());
            let plan = base(
                format!("channel-{}-{cap_name}-{}", shape.name(), si(messages)),
                &bench,
                format!(
                    "channel {}, {cap_text}, {} usize messages",
                    shape.name(),
                    fmt_count(messages)
                ),
                messages,
                "message",
                messages,
            );
            let mut spec = make(plan, sel, move || {
                ChannelBench::new(shape, capacity, messages as usize)
            })?;
            spec.plan.impls.retain(|&imp| shape.supports(imp, capacity));
            if spec.plan.impls.iter().any(|&imp| imp != Impl::Seq) {
                out.push(spec);
            }
        }
    }
    Ok(out)
}

/// A ring of `tasks` async tasks whose token goes round `laps` times.
pub fn ring(tasks: u64, laps: u64, sel: &Selection) -> Result<Spec, FlagError> {
    let hops = tasks.saturating_mul(laps);
    // A hop between OS threads costs microseconds: they only run small rings.
    let threads_allowed = hops <= 100_000;
    let plan = base(
        format!("ring-{tasks}x{}", si(laps)),
        "ring",
        format!(
            "ring of {tasks} tasks, {} laps ({} hops)",
            fmt_count(laps),
            fmt_count(hops)
        ),
        hops,
        "hop",
        hops,
    );
    let mut spec = make(plan, sel, move || {
        MessageBench::ring(tasks as usize, hops as usize, threads_allowed)
    })?;
    let probe = MessageBench::ring(tasks as usize, hops as usize, threads_allowed);
    spec.plan.impls.retain(|&imp| probe.runs(imp));
    Ok(spec)
}

/// The shootout's threadring: 503 tasks, the token passed `n` times.
pub fn threadring(n: u64, sel: &Selection) -> Result<Spec, FlagError> {
    let plan = base(
        format!("threadring-{}", si(n)),
        "threadring",
        format!("threadring, 503 tasks, token passed {} times", fmt_count(n)),
        n,
        "hop",
        n,
    );
    let mut spec = make(plan, sel, move || {
        MessageBench::ring(503, n as usize, false)
    })?;
    let probe = MessageBench::ring(503, n as usize, false);
    spec.plan.impls.retain(|&imp| probe.runs(imp));
    println!("threadring: the token ends with task {}", (n % 503) + 1);
    Ok(spec)
}

/// `rounds` oneshot round trips.
pub fn oneshot(rounds: u64, sel: &Selection) -> Result<Spec, FlagError> {
    let plan = base(
        format!("oneshot-{}", si(rounds)),
        "oneshot",
        format!(
            "oneshot round trip (spawn a task that answers, await it), {} rounds",
            fmt_count(rounds)
        ),
        rounds,
        "round trip",
        rounds,
    );
    let mut spec = make(plan, sel, move || MessageBench::oneshot(rounds as usize))?;
    let probe = MessageBench::oneshot(rounds as usize);
    spec.plan.impls.retain(|&imp| probe.runs(imp));
    Ok(spec)
}

/// The message-passing experiments of the suite: the channel suite at 4 threads, the
/// ring (and a small one with OS threads), threadring and the oneshot round trip at 1
/// thread and `top`.
fn message_passing_suite(smoke: bool, sel: &Selection, top: usize) -> Result<Vec<Spec>, FlagError> {
    let s = |full: u64, tiny: u64| if smoke { tiny } else { full };
    let four = Selection {
        threads: vec![4],
        ..sel.clone()
    };
    let mut ends = vec![1, top];
    ends.dedup();
    let ends = Selection {
        threads: ends,
        ..sel.clone()
    };
    let messages = s(5_000_000, 2000);
    let mut out = channel(
        &ChannelShape::ALL,
        &[Some(0), Some(1), Some(messages as usize), None],
        messages,
        &four,
    )?;
    out.push(ring(100, s(10_000, 10), &ends)?);
    out.push(ring(100, s(100, 5), &ends)?);
    out.push(threadring(s(5_000_000, 2000), &ends)?);
    out.push(oneshot(s(100_000, 200), &ends)?);
    Ok(out)
}
