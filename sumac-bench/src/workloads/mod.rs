//! The benchmark workloads and the interface the harness drives them through.
//!
//! A workload owns its input (built once and shared by every implementation and
//! thread count), and knows how to run itself in every execution context
//! ([`Ctx`]) it supports. The harness never needs to know which workload it runs.

pub mod bfs;
pub mod channel;
pub mod fib;
pub mod graph;
pub mod knucleotide;
pub mod leaves;
pub mod loops;
pub mod ring;
pub mod sort;
pub mod spawn;
pub mod tree;

use crate::impls::{Ctx, Impl};

/// One benchmark problem, runnable by several implementations.
pub trait Workload: Sync {
    /// Mutable scratch space (work buffers) that the timed runs write into.
    type State: Send;

    /// Whether [`Workload::reset`] must run (untimed) before every timed run,
    /// because a run destroys its input (sorting, LU factorisation).
    const NEEDS_RESET: bool = false;

    /// Whether the sequential result and time depend on the parameter (tree-sum's
    /// `--work` does, fib's `--cutoff` does not).
    const SEQ_USES_PARAM: bool = false;

    /// Whether the workload starts its own threads or runtimes (channels, rings): then
    /// every implementation but `seq` runs from the calling thread with
    /// `Ctx::Static { threads }`, after [`Workload::select`] told it which one it is.
    const OWN_THREADS: bool = false;

    /// Whether the runs must start on a thread outside the pool (spawns from outside):
    /// then sumac and Rayon time them on the measuring thread, with the pool reachable
    /// through [`crate::impls::with_current_pool`].
    fn starts_outside_pool(&self) -> bool {
        false
    }

    /// Tells an [`OWN_THREADS`](Self::OWN_THREADS) workload which implementation the
    /// next runs are (untimed: it may build a runtime into `state`).
    fn select(&self, _state: &mut Self::State, _imp: Impl) {}

    /// Allocates the scratch state (untimed).
    fn new_state(&self) -> Self::State;

    /// The runs that follow use a pool built for them (untimed): state bound to an
    /// earlier pool (a task graph runs its tasks on the pool it was built in) goes here.
    /// Called for every row, since two rows of one thread count (`--policy`) have pools
    /// of their own.
    fn new_pool(&self, _state: &mut Self::State) {}

    /// Restores the state (untimed): before the checked first run of every
    /// implementation, and before every run when `NEEDS_RESET`.
    fn reset(&self, _state: &mut Self::State) {}

    /// Whether this workload has a variant for `imp`.
    fn supports(imp: Impl) -> bool;

    /// Runs the workload once in `ctx` with parameter `param` (a cutoff, a work
    /// size, or 0), returning its result (or 0 when the result lives in `state`).
    fn run(&self, ctx: &mut Ctx<'_, '_>, state: &mut Self::State, param: u64) -> u64;

    /// Turns a run's return value and final state into a checksum that must equal
    /// the sequential one (untimed).
    fn check(&self, _state: &Self::State, out: u64) -> u64 {
        out
    }

    /// Units one run processes, counted on the built input when the plan could not
    /// know them in advance (BFS: input edges traversed per search); `None` keeps
    /// the plan's count.
    fn units(&self) -> Option<u64> {
        None
    }

    /// Lines about the input, shown under the experiment's table (what building it
    /// took).
    fn input_notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// A protocol of the workload's own, run once per implementation and thread
    /// count inside its pool after sampling (Graph500's validated search of every
    /// key): a line for the report, or `Err` when a result is wrong (a mismatch,
    /// exit code 1).
    fn protocol(
        &self,
        _ctx: &mut Ctx<'_, '_>,
        _state: &mut Self::State,
    ) -> Result<Option<String>, String> {
        Ok(None)
    }
}

/// A small, fast, seeded pseudo-random generator (SplitMix64) for building inputs
/// reproducibly without an extra dependency.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value uniformly drawn from `0..bound` (`bound > 0`; the tiny modulo bias
    /// is irrelevant for benchmark inputs).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }

    /// A float uniformly drawn from `[0, 1)`.
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// An order-sensitive checksum (FNV-1a over 64-bit words) of a sequence, used to
/// compare vectors and matrices produced by different implementations.
pub fn checksum(words: impl IntoIterator<Item = u64>) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for w in words {
        h ^= w;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}
