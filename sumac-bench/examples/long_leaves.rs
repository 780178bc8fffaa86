//! Coarse tasks: sequential leaves that make no forks, under `join`, `scope` and a
//! parallel loop, in sumac and Rayon pools of the same size. A heartbeat scheduler sees
//! heartbeats only at forks, so these shapes test how it shares work that waits behind a
//! leaf (sumac's rescue offer, see `sumac/src/SCHEDULER.md`).
//!
//! `cargo run --release -p sumac-bench --example long_leaves -- [LEAF_MS] [THREADS] [sleep]`
//! (default: 20 ms leaves, 2 threads). Each line gives the best of five wall-clock times
//! in ms, and the best time the shape allows with that many threads. With `sleep`, the
//! leaves sleep instead of spinning, so that pools larger than the machine can be
//! checked (a sleeping leaf makes no forks either).
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Leaves sleep rather than spin (the third argument is `sleep`).
static SLEEP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Busy work for `length`, with no forks and no system calls (or a sleep that long).
fn leaf(length: Duration) -> u64 {
    if SLEEP.load(std::sync::atomic::Ordering::Relaxed) {
        std::thread::sleep(length);
        return 0;
    }
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < length {
        n = black_box(n.wrapping_add(1));
    }
    n
}

/// The shortest of five runs of `run`, in ms.
fn best_ms(mut run: impl FnMut()) -> f64 {
    (0..5)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let leaf_ms: u64 = args
        .next()
        .map_or(20, |a| a.parse().expect("leaf length in ms"));
    let threads: usize = args.next().map_or(2, |a| a.parse().expect("thread count"));
    match args.next().as_deref() {
        None => {}
        Some("sleep") => SLEEP.store(true, std::sync::atomic::Ordering::Relaxed),
        Some(other) => panic!("unknown leaf kind {other:?} (expected `sleep`)"),
    }
    let t = Duration::from_millis(leaf_ms);
    let sumac_pool = sumac::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("sumac pool");
    let rayon_pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("rayon pool");
    let ideal = |leaves: u64| (leaves.div_ceil(threads as u64) * leaf_ms) as f64;
    let kind = if SLEEP.load(std::sync::atomic::Ordering::Relaxed) {
        "sleeping"
    } else {
        "busy"
    };
    println!("{leaf_ms} ms {kind} leaves, {threads} threads: best of 5 runs (ms)");
    println!(
        "{:<40} {:>8} {:>8} {:>8}",
        "shape", "sumac", "rayon", "ideal"
    );
    let row = |shape: &str, sumac: f64, rayon: f64, ideal: f64| {
        println!("{shape:<40} {sumac:>8.1} {rayon:>8.1} {ideal:>8.1}");
    };
    row(
        "join(leaf, leaf)",
        best_ms(|| {
            sumac_pool.install(|| sumac::join(|| leaf(t), || leaf(t)));
        }),
        best_ms(|| {
            rayon_pool.install(|| rayon::join(|| leaf(t), || leaf(t)));
        }),
        ideal(2),
    );
    row(
        "join(join(leaf, leaf), join(leaf, leaf))",
        best_ms(|| {
            sumac_pool.install(|| {
                sumac::join(
                    || sumac::join(|| leaf(t), || leaf(t)),
                    || sumac::join(|| leaf(t), || leaf(t)),
                )
            });
        }),
        best_ms(|| {
            rayon_pool.install(|| {
                rayon::join(
                    || rayon::join(|| leaf(t), || leaf(t)),
                    || rayon::join(|| leaf(t), || leaf(t)),
                )
            });
        }),
        ideal(4),
    );
    for depth in [3, 4] {
        let leaves = 1u64 << depth;
        row(
            &format!("join tree of depth {depth} ({leaves} leaves)"),
            best_ms(|| {
                sumac_pool.install(|| sumac_tree(depth, t));
            }),
            best_ms(|| {
                rayon_pool.install(|| rayon_tree(depth, t));
            }),
            ideal(leaves),
        );
    }
    row(
        "scope: 4 spawned leaves",
        best_ms(|| {
            sumac_pool.scope(|s| {
                for _ in 0..4 {
                    s.spawn(|_| {
                        leaf(t);
                    });
                }
            })
        }),
        best_ms(|| {
            rayon_pool.scope(|s| {
                for _ in 0..4 {
                    s.spawn(|_| {
                        leaf(t);
                    });
                }
            })
        }),
        ideal(4),
    );
    row(
        "scope: spawned leaf beside a leaf body",
        best_ms(|| {
            sumac_pool.scope(|s| {
                s.spawn(|_| {
                    leaf(t);
                });
                leaf(t);
            })
        }),
        best_ms(|| {
            rayon_pool.scope(|s| {
                s.spawn(|_| {
                    leaf(t);
                });
                leaf(t);
            })
        }),
        ideal(2),
    );
    let items = 2 * threads as u64;
    row(
        &format!("par_iter over {items} leaves"),
        best_ms(|| {
            use sumac::prelude::*;
            sumac_pool.install(|| {
                (0..items).into_par_iter().for_each(|_| {
                    leaf(t);
                })
            });
        }),
        best_ms(|| {
            use rayon::prelude::*;
            rayon_pool.install(|| {
                (0..items).into_par_iter().for_each(|_| {
                    leaf(t);
                })
            });
        }),
        ideal(items),
    );
}

/// A balanced tree of `join`s, `depth` levels above its 2^depth leaves.
fn sumac_tree(depth: u32, t: Duration) -> u64 {
    if depth == 0 {
        return leaf(t);
    }
    let (a, b) = sumac::join(|| sumac_tree(depth - 1, t), || sumac_tree(depth - 1, t));
    a.wrapping_add(b)
}

/// [`sumac_tree`] with `rayon::join`.
fn rayon_tree(depth: u32, t: Duration) -> u64 {
    if depth == 0 {
        return leaf(t);
    }
    let (a, b) = rayon::join(|| rayon_tree(depth - 1, t), || rayon_tree(depth - 1, t));
    a.wrapping_add(b)
}
