//! Measures the cost of a fork on a noisy machine: the Spice tree-sum with `join` per node
//! against plain recursion, *interleaved* sample by sample on the same worker thread, so
//! that a slow phase of the machine slows both sides of a pair alike. Reports, per pool
//! size, the median of the per-pair ratios. (`sumac-bench` runs each implementation's
//! samples one after the other, which is what a side-by-side comparison with Rayon and
//! Chili needs; this example isolates sumac against sequential code.)
//!
//! `cargo run --release -p sumac --example fork_overhead -- [NODES[,NODES...]] [THREADS...]`
//! (default: 1000,10000000 nodes on 1 and 2 threads), then fib(30) with a join per call.
//!
//! Each tree line also reports the *branch floor*: the same tree summed through a `join`
//! that is only `(a(), b())` behind one run-time branch (see [`branch_join`]), the cost
//! that any `join` deciding at run time whether to record its fork pays over plain
//! recursion, whatever its scheduler does.
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

struct Node {
    value: i64,
    left: Option<Box<Node>>,
    right: Option<Box<Node>>,
}

/// The balanced tree holding `from..=to`, each node allocated before its children (as in
/// `sumac-bench`).
fn build(from: i64, to: i64) -> Box<Node> {
    let value = from + (to - from) / 2;
    let mut node = Box::new(Node {
        value,
        left: None,
        right: None,
    });
    if value > from {
        node.left = Some(build(from, value - 1));
    }
    if value < to {
        node.right = Some(build(value + 1, to));
    }
    node
}

fn sum_seq(node: &Node) -> i64 {
    let mut total = node.value;
    if let Some(left) = &node.left {
        total = total.wrapping_add(sum_seq(left));
    }
    if let Some(right) = &node.right {
        total = total.wrapping_add(sum_seq(right));
    }
    total
}

fn sum_join(node: &Node) -> i64 {
    let value = node.value;
    match (&node.left, &node.right) {
        (Some(left), Some(right)) => {
            let (l, r) = sumac::join(|| sum_join(left), || sum_join(right));
            value.wrapping_add(l).wrapping_add(r)
        }
        (Some(child), None) | (None, Some(child)) => value.wrapping_add(sum_join(child)),
        (None, None) => value,
    }
}

/// Never true in practice (`main` stores whether there are absurdly many arguments), but
/// the compiler cannot know: [`branch_join`]'s branch stays a real run-time test.
static NEVER: AtomicBool = AtomicBool::new(false);

/// The floor of any `join` that decides at run time whether to record its fork: no
/// scheduler at all, just `(a(), b())` behind one branch on a flag that is never set.
/// The branch alone matters because both ways out of it produce the results, and the
/// code after `join` must merge them: the compiler can then no longer turn the call of
/// `b` (in tree-sum: the right child) into a loop, as it does in `sum_seq`, so every
/// node costs a call of its own.
#[inline(always)]
fn branch_join<RA, RB>(a: impl FnOnce() -> RA, b: impl FnOnce() -> RB) -> (RA, RB) {
    if NEVER.load(Ordering::Relaxed) {
        return run_elsewhere(a, b);
    }
    (a(), b())
}

#[cold]
#[inline(never)]
fn run_elsewhere<RA, RB>(a: impl FnOnce() -> RA, b: impl FnOnce() -> RB) -> (RA, RB) {
    let rb = b();
    (a(), rb)
}

fn sum_branch_floor(node: &Node) -> i64 {
    let value = node.value;
    match (&node.left, &node.right) {
        (Some(left), Some(right)) => {
            let (l, r) = branch_join(|| sum_branch_floor(left), || sum_branch_floor(right));
            value.wrapping_add(l).wrapping_add(r)
        }
        (Some(child), None) | (None, Some(child)) => value.wrapping_add(sum_branch_floor(child)),
        (None, None) => value,
    }
}

fn fib(n: u64) -> u64 {
    if n <= 1 {
        return n;
    }
    let (a, b) = sumac::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// fib through [`branch_join`]: the floor under fib with a `join` per call.
fn fib_branch_floor(n: u64) -> u64 {
    if n <= 1 {
        return n;
    }
    let (a, b) = branch_join(|| fib_branch_floor(n - 1), || fib_branch_floor(n - 2));
    a + b
}

fn fib_seq(n: u64) -> u64 {
    if n <= 1 {
        n
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

/// Nanoseconds per call of `run`, averaged over `reps` calls.
fn sample(reps: usize, run: &dyn Fn() -> i64) -> f64 {
    let start = Instant::now();
    for _ in 0..reps {
        black_box(run());
    }
    start.elapsed().as_nanos() as f64 / reps as f64
}

/// The shortest of five timed calls of `run`.
fn best_of_5(mut run: impl FnMut()) -> Duration {
    (0..5)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed()
        })
        .min()
        .unwrap()
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Usage: `fork_overhead [NODES[,NODES...]] [THREADS...]`.
fn main() {
    NEVER.store(std::env::args().len() > 1000, Ordering::Relaxed);
    let mut args = std::env::args().skip(1);
    let sizes: Vec<i64> = match args.next() {
        Some(list) => list
            .split(',')
            .map(|n| n.parse().expect("node count"))
            .collect(),
        None => vec![1_000, 10_000_000],
    };
    let threads: Vec<usize> = args.map(|a| a.parse().expect("thread count")).collect();
    let threads = if threads.is_empty() {
        vec![1, 2]
    } else {
        threads
    };
    let fib_n = 30;
    let expected = fib_seq(black_box(fib_n));
    let seq = best_of_5(|| assert_eq!(fib_seq(black_box(fib_n)), expected));
    println!("fib({fib_n})  seq  {:8.2} ms", seq.as_secs_f64() * 1e3);
    let floor = best_of_5(|| assert_eq!(fib_branch_floor(black_box(fib_n)), expected));
    println!(
        "fib({fib_n})  branch floor {:8.2} ms  ({:.3}x seq)",
        floor.as_secs_f64() * 1e3,
        floor.as_secs_f64() / seq.as_secs_f64()
    );
    for &n in &threads {
        let pool = sumac::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap();
        let best = best_of_5(|| assert_eq!(pool.install(|| fib(black_box(fib_n))), expected));
        println!(
            "fib({fib_n})  x{n:<2}  {:8.2} ms  ({:.3}x seq)",
            best.as_secs_f64() * 1e3,
            best.as_secs_f64() / seq.as_secs_f64()
        );
    }
    for nodes in sizes {
        let tree = build(1, nodes);
        let expected = sum_seq(&tree);
        let reps = (2_000_000 / nodes as usize).max(1);
        let pairs = if nodes >= 1_000_000 { 30 } else { 200 };
        for &n in &threads {
            let pool = sumac::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap();
            let before = pool.stats();
            let (mut seq, mut par, mut ratios, mut floor_ratios) = pool.install(|| {
                assert_eq!(sum_join(&tree), expected);
                assert_eq!(sum_branch_floor(&tree), expected);
                let mut seq = Vec::with_capacity(pairs);
                let mut par = Vec::with_capacity(pairs);
                let mut floor = Vec::with_capacity(pairs);
                for _ in 0..pairs {
                    seq.push(sample(reps, &|| sum_seq(black_box(&tree))));
                    par.push(sample(reps, &|| sum_join(black_box(&tree))));
                    floor.push(sample(reps, &|| sum_branch_floor(black_box(&tree))));
                }
                let ratio_to_seq = |times: &[f64]| -> Vec<f64> {
                    times.iter().zip(&seq).map(|(t, s)| t / s).collect()
                };
                let (ratios, floor_ratios) = (ratio_to_seq(&par), ratio_to_seq(&floor));
                (seq, par, ratios, floor_ratios)
            });
            let delta = pool.stats().since(&before).total();
            let per_node = |ns: f64| ns / nodes as f64;
            println!(
                "{nodes:>10} nodes  x{n:<2}  seq {:.3} ns/node, sumac {:.3} ns/node (medians of {pairs}); \
                 median pair ratio {:.3}x seq; branch floor {:.3}x seq (promotions {}, shared {})",
                per_node(median(&mut seq)),
                per_node(median(&mut par)),
                median(&mut ratios),
                median(&mut floor_ratios),
                delta.promotions,
                delta.shared_jobs_run
            );
        }
    }
}
