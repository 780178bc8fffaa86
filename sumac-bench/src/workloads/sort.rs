//! sort: `par_sort_unstable` and `par_sort` of random `u64`s, reported as two
//! benches, `sort-unstable` and `sort-stable`.

use crate::impls::{Ctx, Impl};
use crate::workloads::loops::dispatch;
use crate::workloads::{checksum, SplitMix64, Workload};

/// Which sort is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKind {
    /// `sort_unstable` / `par_sort_unstable`.
    Unstable,
    /// `sort` / `par_sort`.
    Stable,
}

impl SortKind {
    /// The bench name used in tables and CSV files.
    pub fn bench_name(self) -> &'static str {
        match self {
            SortKind::Unstable => "sort-unstable",
            SortKind::Stable => "sort-stable",
        }
    }
}

/// Sorting a copy of a fixed random input (the copy is untimed).
pub struct Sort {
    input: Vec<u64>,
    kind: SortKind,
}

impl Sort {
    /// `len` random `u64`s, sorted with `kind`.
    pub fn new(len: usize, kind: SortKind, seed: u64) -> Sort {
        let mut rng = SplitMix64::new(seed);
        Sort {
            input: (0..len).map(|_| rng.next_u64()).collect(),
            kind,
        }
    }
}

impl Workload for Sort {
    type State = Vec<u64>;
    const NEEDS_RESET: bool = true;

    fn new_state(&self) -> Vec<u64> {
        self.input.clone()
    }

    fn reset(&self, v: &mut Vec<u64>) {
        v.copy_from_slice(&self.input);
    }

    fn supports(imp: Impl) -> bool {
        // Sorting has no grain size to tune.
        imp != Impl::RayonTuned && crate::workloads::loops::loop_supports(imp)
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, v: &mut Vec<u64>, _: u64) -> u64 {
        match self.kind {
            SortKind::Unstable => dispatch!(ctx, v.sort_unstable(), |_m| sort_unstable(v)),
            SortKind::Stable => dispatch!(ctx, v.sort(), |_m| sort_stable(v)),
        }
        0
    }

    fn check(&self, v: &Vec<u64>, _: u64) -> u64 {
        checksum(v.iter().copied())
    }
}
