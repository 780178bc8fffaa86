//! Command-line interface: clap definitions and validation of list flags.
//! Validation errors are one line naming the flag (exit code 2).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::impls::Impl;
use crate::output::FlagError;
use crate::workloads::tree::Shape;

/// Benchmarks sumac side by side with Rayon, Chili and sequential baselines.
///
/// Every implementation runs in the same process on the same input; each result
/// is checked against `seq` (exit code 1 on a mismatch). Without a subcommand a
/// short headline suite runs (tree-sum 1,000 and 1,000,000 nodes, fib 30 with
/// cutoffs 1 and 20, at 1 thread and all cores).
#[derive(Parser, Debug)]
#[command(name = "sumac-bench", version, after_help = AFTER_HELP)]
pub struct Cli {
    /// The workload to run (default: the headline suite).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Flags shared by every workload.
    #[command(flatten)]
    pub common: Common,
}

const AFTER_HELP: &str = "\
Implementations (--impls): seq (plain sequential code; always run, it is the reference), \
sumac, rayon, rayon-tuned (loops only: best with_min_len of 1,16,256,4096, reported in `param`), \
chili (tree-sum, fib), static (tree-sum: one hand-split subtree per OS thread), forte (spawn), \
channel-pool (graph: OS threads fed ready task ids through a crossbeam channel), \
branch-floor (tree-sum, fib: a join that is one run-time branch; fork-overhead runs it); \
message passing (channel, ring, threadring, oneshot): crossbeam-channel, flume, kanal, \
crossfire, std-mpsc (channel suite, OS threads), tokio, async-executor (async \
runtimes), threads (ring: one OS thread per task).

Times are measured inside each pool; `per_unit_ns` is the median time per run divided by \
the unit count (nodes, calls, elements, iterations, updates or multiply-adds).";

/// Flags accepted by every subcommand (and before it).
#[derive(Args, Debug, Clone, Default)]
pub struct Common {
    /// Thread counts, comma-separated [default: 1,<available cores>; suite: 1,2,4,...,2x cores].
    #[arg(long, global = true, value_name = "LIST")]
    pub threads: Option<String>,
    /// Implementations, comma-separated (listed at the end of `sumac-bench --help`)
    /// [default: every one the workload supports].
    #[arg(long, global = true, value_name = "LIST")]
    pub impls: Option<String>,
    /// Samples per implementation, thread count and parameter [default: 20; suite: 10].
    #[arg(long, global = true, value_name = "K")]
    pub samples: Option<usize>,
    /// Warm-up before sampling, per implementation and thread count, in milliseconds
    /// [default: 1000; headline: 200; suite: 300].
    #[arg(long, global = true, value_name = "MS")]
    pub warmup_ms: Option<u64>,
    /// Write all result rows as CSV to PATH.
    #[arg(long, global = true, value_name = "PATH")]
    pub csv: Option<PathBuf>,
    /// Write a figure to PATH (with several experiments: PATH-stem-<experiment>.svg).
    #[arg(long, global = true, value_name = "PATH")]
    pub svg: Option<PathBuf>,
    /// Write sumac's per-worker timeline as Chrome trace-event JSON (needs `--features trace`).
    #[arg(long, global = true, value_name = "PATH")]
    pub trace: Option<PathBuf>,
    /// Hide the progress bar.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Use tiny inputs in the headline suite and `suite` (a quick check of the harness).
    #[arg(long, global = true)]
    pub smoke: bool,
    /// Testing aid: corrupt every non-seq result, to exercise the mismatch check (exit 1).
    #[arg(long, global = true, hide = true)]
    pub inject_mismatch: bool,
    /// Time each run of sumac and Rayon as one call into the pool from the measuring
    /// thread, outside the pool, the way `main` calls a parallel iterator on the global
    /// pool (the default times every run inside one `install`).
    #[arg(long, global = true)]
    pub from_main: bool,
    /// sumac policy variants, comma-separated, each run as an implementation row of its
    /// own: `default` (every mechanism on), `-name[+-name...]` (those mechanisms off,
    /// row `sumac[-name+-name]`), or `each` (default, then every mechanism off alone).
    /// Mechanisms: age-rule, old-top-forks, worker-rate-limit, pool-rate-limit,
    /// budget-shrink, wide-recording, rescue, first-item-split, long-item-halving,
    /// eager-split, idle-spin, requests, timer-slack, guests, guest-place,
    /// guest-takes-forks, linger, spinners-tick, small-first-split, timed-growth,
    /// spinners-rescue, next-phase-split, large-forks-at-once [default: default].
    #[arg(long, global = true, value_name = "LIST", allow_hyphen_values = true)]
    pub policy: Option<String>,
    /// Seed for random inputs (random trees, matrices, vectors).
    #[arg(long, global = true, value_name = "SEED", default_value_t = 42)]
    pub seed: u64,
}

/// The workloads.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Sum a binary tree of boxed nodes (the Spice benchmark), one fork per node.
    TreeSum(TreeArgs),
    /// Naive recursive Fibonacci: `join` above the cutoff, plain recursion at or below it.
    Fib(FibArgs),
    /// Write 42 into every element of a Vec<u64> (parallel for, memory bound).
    Iota(LenArgs),
    /// Add one to every element of a Vec<usize> (rayon-demo's increment_all).
    Increment(IncrementArgs),
    /// Parallel for with very irregular items: fib(10 + ((i - 10) mod (limit - 10))).
    ForIrregular(IrregularArgs),
    /// LU factorisation of a random matrix, rows below each pivot in parallel.
    Lu(SizeArgs),
    /// Naive matrix product, rows of the result in parallel.
    Matmul(SizeArgs),
    /// 2-D Jacobi stencil: an n x n grid of f64, one parallel sweep over rows per step.
    Jacobi(JacobiArgs),
    /// Reduction: map(|x| x * x).sum() over a slice.
    SumSquares(LenArgs),
    /// par_sort_unstable and par_sort of random u64s (benches sort-unstable, sort-stable).
    Sort(SortArgs),
    /// Spawned jobs at scale: fan-out and skynet spawn trees, a flat loop of spawns into
    /// a scope, spawns from a thread outside the pool (ns per job).
    Spawn(SpawnArgs),
    /// Graph500 BFS (kernel 2) on a Kronecker graph: 64 validated searches, harmonic-mean TEPS.
    Bfs(BfsArgs),
    /// The benchmarks game's k-nucleotide: count the k-mers of fasta's >THREE section.
    Knucleotide(KnucleotideArgs),
    /// crossbeam-channel's suite (seq, spsc, mpsc, mpmc, select_rx) over each channel
    /// library; `--threads` is the number of senders (and receivers) [default: 4].
    Channel(ChannelArgs),
    /// A ring of async tasks passing one token (the pipes benchmark); ns per hop.
    Ring(RingArgs),
    /// The shootout's threadring: 503 tasks in a ring pass a token N times; prints the
    /// number of the last holder.
    Threadring(ThreadringArgs),
    /// Oneshot round trips: spawn a task that answers through a oneshot, await it.
    Oneshot(OneshotArgs),
    /// Task graphs (`sumac::graph`) against Rayon spawns with dependency counters and a
    /// crossbeam-channel thread pool: Bikeshed's experiment and Taskflow's shapes.
    #[command(subcommand)]
    Graph(GraphCommand),
    /// Coarse tasks: sequential leaves that make no forks under join trees, scopes and a
    /// parallel loop (how a heartbeat scheduler shares work waiting behind a leaf).
    LongLeaves(LongLeavesArgs),
    /// The cost of a fork: tree-sum and fib with a join per node or call, against plain
    /// recursion and the branch floor (a join that is one run-time branch, no scheduler).
    ForkOverhead(ForkOverheadArgs),
    /// The headline suite (what runs without a subcommand).
    Headline,
    /// Every workload at its reference sizes with thread and cutoff sweeps: CSV, SVG and REPORT.md.
    Suite(SuiteArgs),
}

/// `tree-sum` flags.
#[derive(Args, Debug)]
pub struct TreeArgs {
    /// Number of nodes (values 1..=N).
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub nodes: u64,
    /// Tree shape.
    #[arg(long, value_enum, default_value_t = Shape::Balanced)]
    pub shape: Shape,
    /// Rounds of a cheap hash per node, comma-separated for a sweep (0 = the Spice benchmark).
    #[arg(long, value_name = "K", default_value = "0")]
    pub work: String,
}

/// `fib` flags.
#[derive(Args, Debug)]
pub struct FibArgs {
    /// Compute fib(N).
    #[arg(long = "n", value_name = "N", default_value_t = 30)]
    pub n: u64,
    /// Cutoffs, comma-separated: fork only above this n.
    #[arg(long, value_name = "LIST", default_value = "1")]
    pub cutoff: String,
}

/// Flags of workloads sized by a length.
#[derive(Args, Debug)]
pub struct LenArgs {
    /// Number of elements.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub len: u64,
}

/// `increment` flags.
#[derive(Args, Debug)]
pub struct IncrementArgs {
    /// Number of elements.
    #[arg(long, value_name = "N", default_value_t = 102_400)]
    pub len: u64,
    /// Run the loop under `with_min_len(usize::MAX)`: one piece that never splits.
    #[arg(long)]
    pub unsplit: bool,
}

/// `long-leaves` flags.
#[derive(Args, Debug)]
pub struct LongLeavesArgs {
    /// Length of one leaf in microseconds.
    #[arg(long, value_name = "US", default_value_t = 20_000)]
    pub leaf_us: u64,
    /// Which shape [default: all].
    #[arg(long, value_enum)]
    pub shape: Option<crate::workloads::leaves::LeafShape>,
    /// Leaves of the loop shape [default: twice the largest thread count].
    #[arg(long, value_name = "N")]
    pub items: Option<u64>,
    /// Leaves sleep instead of spinning (to check pools larger than the machine).
    #[arg(long)]
    pub sleep: bool,
}

/// `fork-overhead` flags.
#[derive(Args, Debug)]
pub struct ForkOverheadArgs {
    /// Tree sizes, comma-separated (balanced tree-sum, one join per node).
    #[arg(long, value_name = "LIST", default_value = "1000,10000000")]
    pub nodes: String,
    /// fib(N) with a join per call (cutoff 1).
    #[arg(long = "fib", value_name = "N", default_value_t = 30)]
    pub fib: u64,
}

/// `for-irregular` flags.
#[derive(Args, Debug)]
pub struct IrregularArgs {
    /// Number of iterations.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub len: u64,
    /// fib arguments range over 10..limit (must exceed 10).
    #[arg(long, value_name = "L", default_value_t = 25)]
    pub limit: u64,
}

/// Flags of matrix workloads.
#[derive(Args, Debug)]
pub struct SizeArgs {
    /// Matrix side N (an N x N matrix).
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub size: u64,
}

/// `jacobi` flags.
#[derive(Args, Debug)]
pub struct JacobiArgs {
    /// Grid side N (an N x N grid, N >= 3).
    #[arg(long = "n", value_name = "N", default_value_t = 256)]
    pub n: u64,
    /// Sweeps per run.
    #[arg(long, value_name = "K", default_value_t = 400)]
    pub steps: u64,
}

/// Which sorts `sort` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SortChoice {
    /// Only par_sort_unstable.
    Unstable,
    /// Only par_sort.
    Stable,
    /// Both, as two benches.
    Both,
}

/// `sort` flags.
#[derive(Args, Debug)]
pub struct SortArgs {
    /// Number of elements.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub len: u64,
    /// Which sort(s).
    #[arg(long, value_enum, default_value_t = SortChoice::Both)]
    pub kind: SortChoice,
}

/// Which spawn workloads `spawn` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SpawnChoice {
    /// A binary tree of scoped spawns.
    FanOut,
    /// A 10-ary tree of scoped spawns summing leaf numbers.
    Skynet,
    /// One job spawning every job into a scope.
    Flat,
    /// Spawns from a thread outside the pool, then a wait for all.
    External,
    /// All four.
    All,
}

/// `spawn` flags.
#[derive(Args, Debug)]
pub struct SpawnArgs {
    /// Which workload(s).
    #[arg(long, value_enum, default_value_t = SpawnChoice::All)]
    pub shape: SpawnChoice,
    /// Levels of the fan-out tree (2^D leaves).
    #[arg(long, value_name = "D", default_value_t = 20)]
    pub fan_out_depth: u64,
    /// Levels of the skynet tree (10^D leaves).
    #[arg(long, value_name = "D", default_value_t = 6)]
    pub skynet_depth: u64,
    /// Jobs of the flat and external workloads.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub jobs: u64,
}

/// Which BFS variants `bfs` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DirectionChoice {
    /// Level-synchronous top-down search only (bench `bfs`).
    TopDown,
    /// Direction-optimising search only (bench `bfs-do`).
    Optimizing,
    /// Both, as two benches on the same graph.
    Both,
}

/// `bfs` flags.
#[derive(Args, Debug)]
pub struct BfsArgs {
    /// log2 of the vertex count (Graph500's SCALE; edge factor 16)
    /// [default: 20; with --smoke: 16; Graph500's reference: 22].
    #[arg(long, value_name = "S")]
    pub scale: Option<u32>,
    /// Search keys: random vertices of degree at least 1, each searched and
    /// validated once per implementation and thread count.
    #[arg(long, value_name = "K", default_value_t = 64)]
    pub keys: u64,
    /// Which searches.
    #[arg(long, value_enum, default_value_t = DirectionChoice::Both)]
    pub direction: DirectionChoice,
}

/// `knucleotide` flags.
#[derive(Args, Debug)]
pub struct KnucleotideArgs {
    /// fasta's N: the >THREE section has 5N bases
    /// [default: 2,500,000; with --smoke: 10,000; the benchmarks game's reference: 25,000,000].
    #[arg(long = "n", value_name = "N")]
    pub n: Option<u64>,
    /// Print the program's output (seq's) before measuring.
    #[arg(long)]
    pub print: bool,
}

/// `channel` flags.
#[derive(Args, Debug)]
pub struct ChannelArgs {
    /// Shapes, comma-separated subset of seq,spsc,mpsc,mpmc,select_rx.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "seq,spsc,mpsc,mpmc,select_rx"
    )]
    pub shapes: String,
    /// Capacities, comma-separated: numbers, N (= --messages) or unbounded.
    #[arg(long, value_name = "LIST", default_value = "0,1,N,unbounded")]
    pub capacities: String,
    /// Messages sent per run.
    #[arg(long, value_name = "N", default_value_t = 5_000_000)]
    pub messages: u64,
}

/// `ring` flags.
#[derive(Args, Debug)]
pub struct RingArgs {
    /// Tasks in the ring.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub tasks: u64,
    /// Times the token goes round.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub laps: u64,
}

/// `threadring` flags.
#[derive(Args, Debug)]
pub struct ThreadringArgs {
    /// Passes of the token.
    #[arg(long = "n", value_name = "N", default_value_t = 5_000_000)]
    pub n: u64,
}

/// `oneshot` flags.
#[derive(Args, Debug)]
pub struct OneshotArgs {
    /// Round trips per run.
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    pub rounds: u64,
}

/// Parses `--shapes`.
pub fn parse_shapes(text: &str) -> Result<Vec<crate::workloads::channel::Shape>, FlagError> {
    use crate::workloads::channel::Shape;
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let shape = Shape::parse(item).ok_or_else(|| {
            FlagError(format!(
                "--shapes: unknown shape '{item}' (expected seq, spsc, mpsc, mpmc or select_rx)"
            ))
        })?;
        if !out.contains(&shape) {
            out.push(shape);
        }
    }
    if out.is_empty() {
        return Err(FlagError("--shapes: the list is empty".into()));
    }
    Ok(out)
}

/// Parses `--capacities` (`None` = unbounded; `N` = `messages`).
pub fn parse_capacities(text: &str, messages: u64) -> Result<Vec<Option<usize>>, FlagError> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let capacity = match item {
            "unbounded" => None,
            "N" | "n" => Some(messages as usize),
            number => Some(number.parse::<usize>().map_err(|_| {
                FlagError(format!(
                    "--capacities: '{number}' is not a number, N or unbounded"
                ))
            })?),
        };
        if !out.contains(&capacity) {
            out.push(capacity);
        }
    }
    if out.is_empty() {
        return Err(FlagError("--capacities: the list is empty".into()));
    }
    Ok(out)
}

/// `graph` workloads.
#[derive(Subcommand, Debug)]
pub enum GraphCommand {
    /// Bikeshed's experiment: producers outside the pool create and ready tasks (each an
    /// atomic add); the pool's workers (`--consumers`) run them. Per task: ns/task; tasks/s
    /// is 1e9 / that.
    Bikeshed(BikeshedArgs),
    /// A chain of N tasks, i before i+1 (Taskflow's linear_chain).
    LinearChain(ShapeArgs),
    /// A binary tree of `--size` layers, task i before 2i and 2i+1 (Taskflow's binary_tree).
    BinaryTree(ShapeArgs),
    /// A `--size` x `--size` grid, (i,j) before (i+1,j) and (i,j+1) (Taskflow's wavefront).
    Wavefront(ShapeArgs),
    /// A `--size` x `--size` level graph, each node with 1 + rand()%4 edges into a shuffled
    /// next level (Taskflow's graph_traversal).
    GraphTraversal(ShapeArgs),
    /// The cost of creating one task, of adding one dependency, and of taking and running
    /// a task readied alone (sumac against a boxed closure or an edge pushed on a Vec, or
    /// boxed closures called from a Vec).
    TaskCost(CostArgs),
}

/// Which Bikeshed variants run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum VariantChoice {
    /// A: one channel, tasks created and readied one at a time.
    A,
    /// E: a channel per producer, batches of 16.
    E,
    /// Both.
    Both,
}

/// `graph bikeshed` flags.
#[derive(Args, Debug)]
pub struct BikeshedArgs {
    /// Number of tasks.
    #[arg(long, value_name = "N", default_value_t = 33_554_431)]
    pub tasks: u64,
    /// Producer threads (outside the pool).
    #[arg(long, value_name = "P", default_value_t = 1)]
    pub producers: u64,
    /// Consumer counts, comma-separated: the pool's threads (instead of --threads).
    #[arg(long, value_name = "LIST", default_value = "1")]
    pub consumers: String,
    /// Which variants.
    #[arg(long, value_enum, default_value_t = VariantChoice::Both)]
    pub variant: VariantChoice,
}

/// Flags of Taskflow's shapes.
#[derive(Args, Debug)]
pub struct ShapeArgs {
    /// Size: chain length (default 2^20), tree layers (20), grid side (1024) or level
    /// graph side (1024).
    #[arg(long, value_name = "N")]
    pub size: Option<u64>,
}

/// `graph task-cost` flags.
#[derive(Args, Debug)]
pub struct CostArgs {
    /// Tasks created (and dependencies added) per run.
    #[arg(long, value_name = "N", default_value_t = 1 << 20)]
    pub count: u64,
}

/// `suite` flags.
#[derive(Args, Debug)]
pub struct SuiteArgs {
    /// Directory for the CSV and SVG files and REPORT.md (created if missing).
    #[arg(long, value_name = "DIR", required_unless_present = "list")]
    pub out: Option<PathBuf>,
    /// Time budget: no new run starts after this many seconds.
    #[arg(long, value_name = "S", default_value_t = 540.0)]
    pub max_seconds: f64,
    /// Only the experiments whose name contains one of these comma-separated words
    /// (results of earlier runs in DIR are kept in REPORT.md).
    #[arg(long, value_name = "LIST")]
    pub only: Option<String>,
    /// Print the experiments (name, title, thread counts) and exit without running.
    #[arg(long)]
    pub list: bool,
}

/// Parses a comma-separated list of positive integers for `flag`.
pub fn parse_list(flag: &str, text: &str, allow_zero: bool) -> Result<Vec<u64>, FlagError> {
    let items: Vec<&str> = text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if items.is_empty() {
        return Err(FlagError(format!("{flag}: the list is empty")));
    }
    let mut out = Vec::new();
    for item in items {
        let v: u64 = item
            .parse()
            .map_err(|_| FlagError(format!("{flag}: '{item}' is not a non-negative integer")))?;
        if v == 0 && !allow_zero {
            return Err(FlagError(format!("{flag}: values must be at least 1")));
        }
        if !out.contains(&v) {
            out.push(v);
        }
    }
    Ok(out)
}

/// Parses `--threads` (positive, at most 4096).
pub fn parse_threads(text: &str) -> Result<Vec<usize>, FlagError> {
    let list = parse_list("--threads", text, false)?;
    if let Some(&big) = list.iter().find(|&&t| t > 4096) {
        return Err(FlagError(format!(
            "--threads: {big} threads is more than 4096"
        )));
    }
    Ok(list.into_iter().map(|t| t as usize).collect())
}

/// Parses `--impls`.
pub fn parse_impls(text: &str) -> Result<Vec<Impl>, FlagError> {
    let items: Vec<&str> = text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if items.is_empty() {
        return Err(FlagError("--impls: the list is empty".into()));
    }
    let mut out = Vec::new();
    for item in items {
        let imp: Impl = item
            .parse()
            .map_err(|e| FlagError(format!("--impls: {e}")))?;
        if !out.contains(&imp) {
            out.push(imp);
        }
    }
    Ok(out)
}

/// Rejects a zero size for `flag`.
pub fn positive(flag: &str, v: u64) -> Result<u64, FlagError> {
    if v == 0 {
        Err(FlagError(format!("{flag}: the size must be at least 1")))
    } else {
        Ok(v)
    }
}

/// The number of cores available to this process.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Default thread list for single workloads and the headline suite: 1 and all cores.
pub fn default_threads() -> Vec<usize> {
    let n = cores();
    if n == 1 {
        vec![1]
    } else {
        vec![1, n]
    }
}

/// Default thread sweep of the suite: powers of two up to the core count, the core
/// count itself, and twice the core count (oversubscription).
pub fn suite_threads() -> Vec<usize> {
    let n = cores();
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |t| Some(t * 2))
        .take_while(|&t| t <= n)
        .collect();
    if !v.contains(&n) {
        v.push(n);
    }
    v.push(2 * n);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists() {
        assert_eq!(parse_threads("1, 2,4,2").unwrap(), vec![1, 2, 4]);
        assert!(parse_threads("").is_err());
        assert!(parse_threads("0").is_err());
        assert!(parse_threads("x").is_err());
        assert_eq!(parse_list("--work", "0,4", true).unwrap(), vec![0, 4]);
        assert_eq!(
            parse_impls("seq,rayon-tuned").unwrap(),
            vec![Impl::Seq, Impl::RayonTuned]
        );
        assert!(parse_impls("seq,tbb")
            .unwrap_err()
            .0
            .starts_with("--impls: unknown"));
        assert!(suite_threads().len() >= 2);
    }
}
