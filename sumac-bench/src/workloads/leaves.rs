//! long-leaves: coarse tasks, sequential leaves that make no forks, under `join`,
//! `scope` and a parallel loop. A heartbeat scheduler sees heartbeats only at forks,
//! so these shapes test how it shares work that waits behind a leaf (sumac's rescue
//! offer, see `sumac/src/SCHEDULER.md`). Every leaf spins for a fixed time (or sleeps
//! that long) and counts as 1: a run's result is the number of leaves it ran.
//!
//! The best a pool of `t` threads can do is `ceil(leaves / t)` leaf times (the
//! `ideal` note under each table).

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::impls::{Ctx, Impl, Join, RayonJoin, SumacJoin};
use crate::workloads::Workload;

/// How the leaves are forked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LeafShape {
    /// `join(leaf, leaf)`.
    Join2,
    /// `join(join(leaf, leaf), join(leaf, leaf))`.
    Join4,
    /// A balanced join tree of depth 3 (8 leaves).
    Tree3,
    /// A balanced join tree of depth 4 (16 leaves).
    Tree4,
    /// A scope with 4 spawned leaves.
    Scope4,
    /// A scope with one spawned leaf beside a leaf in its body.
    ScopeBody,
    /// A parallel loop over `items` leaves.
    Loop,
}

impl LeafShape {
    /// Every shape, in the order of the report.
    pub const ALL: [LeafShape; 7] = [
        LeafShape::Join2,
        LeafShape::Join4,
        LeafShape::Tree3,
        LeafShape::Tree4,
        LeafShape::Scope4,
        LeafShape::ScopeBody,
        LeafShape::Loop,
    ];

    /// The name used in bench names and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            LeafShape::Join2 => "join2",
            LeafShape::Join4 => "join4",
            LeafShape::Tree3 => "tree3",
            LeafShape::Tree4 => "tree4",
            LeafShape::Scope4 => "scope4",
            LeafShape::ScopeBody => "scope-body",
            LeafShape::Loop => "loop",
        }
    }

    /// What the shape is, for titles.
    pub fn describe(self, items: u64) -> String {
        match self {
            LeafShape::Join2 => "join(leaf, leaf)".into(),
            LeafShape::Join4 => "join(join(leaf, leaf), join(leaf, leaf))".into(),
            LeafShape::Tree3 => "join tree of depth 3 (8 leaves)".into(),
            LeafShape::Tree4 => "join tree of depth 4 (16 leaves)".into(),
            LeafShape::Scope4 => "scope with 4 spawned leaves".into(),
            LeafShape::ScopeBody => "scope: a spawned leaf beside a leaf body".into(),
            LeafShape::Loop => format!("par_iter over {items} leaves"),
        }
    }

    /// The number of leaves one run executes (`items` for the loop).
    pub fn leaves(self, items: u64) -> u64 {
        match self {
            LeafShape::Join2 | LeafShape::ScopeBody => 2,
            LeafShape::Join4 | LeafShape::Scope4 => 4,
            LeafShape::Tree3 => 8,
            LeafShape::Tree4 => 16,
            LeafShape::Loop => items,
        }
    }
}

/// Busy work for `length` with no forks and no system calls, or a sleep that long.
#[inline(never)]
fn leaf(length: Duration, sleep: bool) -> u64 {
    if sleep {
        std::thread::sleep(length);
        return 1;
    }
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < length {
        n = black_box(n.wrapping_add(1));
    }
    1
}

/// A balanced tree of `join`s, `depth` levels above its 2^depth leaves.
fn join_tree<J: Join>(depth: u32, t: Duration, sleep: bool) -> u64 {
    if depth == 0 {
        return leaf(t, sleep);
    }
    let (a, b) = J::join(
        || join_tree::<J>(depth - 1, t, sleep),
        || join_tree::<J>(depth - 1, t, sleep),
    );
    a + b
}

/// The shapes on a crate with Rayon's `scope` and parallel iterators.
macro_rules! leaf_shapes {
    ($name:ident, $krate:ident, $join:ty) => {
        #[doc = concat!("Runs `shape` on `", stringify!($krate), "` in the current pool.")]
        fn $name(shape: LeafShape, items: u64, t: Duration, sleep: bool) -> u64 {
            match shape {
                LeafShape::Join2 => join_tree::<$join>(1, t, sleep),
                LeafShape::Join4 => join_tree::<$join>(2, t, sleep),
                LeafShape::Tree3 => join_tree::<$join>(3, t, sleep),
                LeafShape::Tree4 => join_tree::<$join>(4, t, sleep),
                LeafShape::Scope4 => {
                    let ran = AtomicU64::new(0);
                    $krate::scope(|s| {
                        for _ in 0..4 {
                            s.spawn(|_| {
                                ran.fetch_add(leaf(t, sleep), Ordering::Relaxed);
                            });
                        }
                    });
                    ran.into_inner()
                }
                LeafShape::ScopeBody => {
                    let ran = AtomicU64::new(0);
                    $krate::scope(|s| {
                        s.spawn(|_| {
                            ran.fetch_add(leaf(t, sleep), Ordering::Relaxed);
                        });
                        ran.fetch_add(leaf(t, sleep), Ordering::Relaxed);
                    });
                    ran.into_inner()
                }
                LeafShape::Loop => leaf_loop!($krate, items, t, sleep),
            }
        }
    };
}

/// The loop shape on `$krate`'s parallel iterators.
macro_rules! leaf_loop {
    (rayon, $items:expr, $t:expr, $sleep:expr) => {{
        use rayon::prelude::*;
        (0..$items)
            .into_par_iter()
            .map(|_| leaf($t, $sleep))
            .sum::<u64>()
    }};
    (sumac, $items:expr, $t:expr, $sleep:expr) => {{
        #[cfg(feature = "sumac-iter")]
        {
            use sumac::prelude::*;
            (0..$items)
                .into_par_iter()
                .map(|_| leaf($t, $sleep))
                .sum::<u64>()
        }
        #[cfg(not(feature = "sumac-iter"))]
        {
            let _ = ($items, $t, $sleep);
            unreachable!("sumac's loop variant needs `--features sumac-iter`")
        }
    }};
}

leaf_shapes!(rayon_shape, rayon, RayonJoin);
leaf_shapes!(sumac_shape, sumac, SumacJoin);

/// One shape of long leaves.
pub struct LongLeaves {
    shape: LeafShape,
    items: u64,
    leaf: Duration,
    sleep: bool,
}

impl LongLeaves {
    /// `shape` with leaves of `leaf` (sleeping ones if `sleep`); `items` leaves for the loop.
    pub fn new(shape: LeafShape, items: u64, leaf: Duration, sleep: bool) -> LongLeaves {
        LongLeaves {
            shape,
            items,
            leaf,
            sleep,
        }
    }
}

impl Workload for LongLeaves {
    type State = ();

    fn new_state(&self) {}

    fn supports(imp: Impl) -> bool {
        matches!(imp, Impl::Seq | Impl::Sumac | Impl::Rayon)
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, _: &mut (), _: u64) -> u64 {
        let (t, sleep) = (self.leaf, self.sleep);
        match ctx {
            Ctx::Seq => (0..self.shape.leaves(self.items))
                .map(|_| leaf(t, sleep))
                .sum(),
            Ctx::Sumac => sumac_shape(self.shape, self.items, t, sleep),
            Ctx::Rayon { .. } => rayon_shape(self.shape, self.items, t, sleep),
            _ => unreachable!("long-leaves runs only as seq, sumac or rayon"),
        }
    }

    fn input_notes(&self) -> Vec<String> {
        let leaves = self.shape.leaves(self.items);
        let us = self.leaf.as_secs_f64() * 1e6;
        vec![format!(
            "{leaves} {} leaves of {us:.0} µs: the best t threads can do is ceil({leaves} / t) x {us:.0} µs",
            if self.sleep { "sleeping" } else { "busy" }
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_runs_each_leaf_once() {
        let t = Duration::from_micros(10);
        let sumac_pool = sumac::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let rayon_pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        for shape in LeafShape::ALL {
            let w = LongLeaves::new(shape, 5, t, false);
            let want = shape.leaves(5);
            assert_eq!(w.run(&mut Ctx::Seq, &mut (), 0), want);
            assert_eq!(
                rayon_pool.install(|| w.run(&mut Ctx::Rayon { min_len: 1 }, &mut (), 0)),
                want
            );
            if cfg!(feature = "sumac-iter") || shape != LeafShape::Loop {
                assert_eq!(
                    sumac_pool.install(|| w.run(&mut Ctx::Sumac, &mut (), 0)),
                    want
                );
            }
        }
    }
}
