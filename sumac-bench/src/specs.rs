//! Experiment definitions: which workload, size, parameters, implementations and
//! thread counts each command runs. Inputs are built lazily, when the experiment runs.

use crate::experiment::{run_experiment, ExperimentResult, Plan, RunError, Settings, SweepMetric};
use crate::impls::Impl;
use crate::output::FlagError;
use crate::report::fmt_count;
use crate::workloads::fib::{fib_calls, Fib};
use crate::workloads::graph::{
    Bikeshed, CostOf, Shape as GraphShape, ShapeWorkload, TaskCost, Variant,
};
use crate::workloads::loops::{ForIrregular, Iota, Lu, Matmul, SumSquares};
use crate::workloads::sort::{Sort, SortKind};
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
}

/// Fills in `plan.impls` from the selection and wraps the workload builder.
fn make<W: Workload + 'static>(
    mut plan: Plan,
    sel: &Selection,
    build: impl FnOnce() -> W + 'static,
) -> Result<Spec, FlagError> {
    let supported: Vec<Impl> = Impl::ALL.into_iter().filter(|&i| W::supports(i)).collect();
    plan.impls = match &sel.impls {
        None => supported.clone(),
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
        CostOf::Create => "task",
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
        iota(s(100_000_000, 5000), &ends)?,
        sum_squares(s(100_000_000, 5000), &ends)?,
        sort(s(10_000_000, 5000), SortKind::Unstable, &ends)?,
        sort(s(10_000_000, 5000), SortKind::Stable, &ends)?,
        matmul(s(1024, 30), &ends)?,
        for_irregular(s(100, 100), s(40, 20), &ends)?,
    ];
    out.extend(graph_suite(smoke, sel, top)?);
    // Drop duplicate ids that tiny sizes can create.
    let mut seen = std::collections::HashSet::new();
    out.retain(|spec| seen.insert(spec.plan.id.clone()));
    Ok(out)
}
