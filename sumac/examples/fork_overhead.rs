//! Measures the cost of a fork: the Spice tree-sum with `join` per node against plain
//! recursion, on one pool per thread count. `cargo run --release --example fork_overhead`
//! (the full comparison with Rayon and Chili lives in `sumac-bench`).
use std::hint::black_box;
use std::time::Instant;

struct Node {
    value: i64,
    left: Option<Box<Node>>,
    right: Option<Box<Node>>,
}

fn build(from: i64, to: i64) -> Option<Box<Node>> {
    if from > to {
        return None;
    }
    let mid = from + (to - from) / 2;
    Some(Box::new(Node {
        value: mid,
        left: build(from, mid - 1),
        right: build(mid + 1, to),
    }))
}

fn sum_seq(node: &Node) -> i64 {
    let mut total = node.value;
    if let Some(left) = &node.left {
        total += sum_seq(left);
    }
    if let Some(right) = &node.right {
        total += sum_seq(right);
    }
    total
}

fn sum_join(node: &Node) -> i64 {
    let (left, right) = sumac::join(
        || node.left.as_deref().map_or(0, sum_join),
        || node.right.as_deref().map_or(0, sum_join),
    );
    node.value + left + right
}

fn time_per_node(nodes: i64, run: impl Fn() -> i64) -> f64 {
    let reps = (20_000_000 / nodes).max(1);
    let mut best = f64::MAX;
    for _ in 0..7 {
        let start = Instant::now();
        for _ in 0..reps {
            black_box(run());
        }
        best = best.min(start.elapsed().as_nanos() as f64 / (reps * nodes) as f64);
    }
    best
}

fn fib(n: u64) -> u64 {
    if n <= 1 {
        return n;
    }
    let (a, b) = sumac::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

fn fib_seq(n: u64) -> u64 {
    if n <= 1 {
        n
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

/// Usage: `fork_overhead [NODES[,NODES...]] [THREADS...]` (default: 1000,10000000 nodes on
/// 1 and 2 threads), then fib(30) with a join per call.
fn main() {
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
    let start = Instant::now();
    let expected = black_box(fib_seq(fib_n));
    let seq = start.elapsed();
    println!("fib({fib_n})  seq  {:8.2} ms", seq.as_secs_f64() * 1e3);
    for &n in &threads {
        let pool = sumac::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap();
        let best = (0..5)
            .map(|_| {
                let start = Instant::now();
                assert_eq!(pool.install(|| fib(black_box(fib_n))), expected);
                start.elapsed()
            })
            .min()
            .unwrap();
        println!(
            "fib({fib_n})  x{n:<2}  {:8.2} ms  ({:.3}x seq)",
            best.as_secs_f64() * 1e3,
            best.as_secs_f64() / seq.as_secs_f64()
        );
    }
    for nodes in sizes {
        let tree = build(1, nodes).unwrap();
        let expected = sum_seq(&tree);
        let seq = time_per_node(nodes, || sum_seq(black_box(&tree)));
        println!("{nodes:>10} nodes  seq        {seq:7.3} ns/node");
        for &n in &threads {
            let pool = sumac::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap();
            let before = pool.stats();
            let per_node = pool.install(|| {
                assert_eq!(sum_join(&tree), expected);
                time_per_node(nodes, || sum_join(black_box(&tree)))
            });
            let delta = pool.stats().since(&before).total();
            println!(
                "{nodes:>10} nodes  sumac x{n:<2}  {per_node:7.3} ns/node  ({:.3}x seq; promotions {}, shared {})",
                per_node / seq,
                delta.promotions,
                delta.shared_jobs_run
            );
        }
    }
}
