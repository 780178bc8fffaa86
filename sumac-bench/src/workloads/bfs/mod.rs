//! Graph500's breadth-first search (kernel 2) on its Kronecker graph.
//!
//! The input ([`Input`]): `16 * 2^scale` edges from the Kronecker generator
//! ([`kronecker`]), the undirected graph built from them ([`graph`]; kernel 1),
//! and the search keys (random vertices of degree at least 1). Generating and
//! building are timed once and reported as notes.
//!
//! A timed run is one search: `seq` runs take the keys in turn (from the first
//! after a reset), and a parallel run searches the key of the last `seq` run, so
//! the samples taken alternately with `seq` (the only way these rows are sampled)
//! compare searches of the same key; a row's median is a median time per search; its
//! units are the mean number of input edges in a key's component (the edges a
//! search traverses, by Graph500's count), so `per_unit_ns` is ns per traversed
//! edge. The protocol ([`Workload::protocol`]) then runs Graph500's kernel 2 for
//! every implementation and thread count: one timed search per key, each tree
//! validated by the five checks ([`validate`]; a failure is a mismatch), and
//! reports the harmonic mean of the keys' TEPS and the median time per search.
//! The benches: `bfs` (`seq` queue BFS, level-synchronous top-down `sumac` and
//! `rayon`) and `bfs-do` (direction-optimising, `seq` its sequential twin).

pub mod graph;
pub mod kronecker;
pub mod search;
pub mod validate;

use std::cell::OnceCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::impls::{Ctx, Impl};
use crate::report::{fmt_count, fmt_ns};
use crate::workloads::Workload;
use graph::Graph;
use kronecker::Edge;
use search::{ParScratch, SeqScratch};

/// Graph500's edge factor: edges per vertex.
pub const EDGE_FACTOR: u64 = 16;
/// The smallest scale accepted.
pub const MIN_SCALE: u32 = 1;
/// The largest scale accepted: 2^26 vertices and 2^30 edges (the edge list and
/// the graph) need about 20 GB, most of a 24 GB machine.
pub const MAX_SCALE: u32 = 26;

/// Which search a bench runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Level-synchronous top-down (`seq`: a queue).
    TopDown,
    /// Direction-optimising (top-down and bottom-up steps).
    Optimizing,
}

impl Direction {
    /// The bench name.
    pub fn bench_name(self) -> &'static str {
        match self {
            Direction::TopDown => "bfs",
            Direction::Optimizing => "bfs-do",
        }
    }
}

/// The generated graph and its search keys.
pub struct Input {
    /// The input edge list (self-loops and duplicates included).
    pub edges: Vec<Edge>,
    /// The graph built from it.
    pub graph: Graph,
    /// The search keys.
    pub keys: Vec<u32>,
    /// Input edges in each key's component (what its search traverses).
    pub key_edges: Vec<u64>,
    notes: Vec<String>,
}

impl Input {
    /// Generates the Kronecker graph of `2^scale` vertices and draws `keys` keys.
    pub fn generate(scale: u32, keys: usize, seed: u64) -> Input {
        let t0 = Instant::now();
        let edges = kronecker::edges(scale, EDGE_FACTOR as usize, seed);
        let generated = t0.elapsed();
        Input::from_edges(1 << scale, edges, keys, seed, Some(generated))
    }

    /// The input over `n` vertices with the given edge list.
    pub fn from_edges(
        n: usize,
        edges: Vec<Edge>,
        keys: usize,
        seed: u64,
        generated: Option<Duration>,
    ) -> Input {
        let t0 = Instant::now();
        let graph = Graph::from_edges(n, &edges);
        let built = t0.elapsed();
        let keys = graph.search_keys(keys, seed);
        let component = graph.components();
        let mut per_component = vec![0u64; n];
        for &[u, _] in &edges {
            per_component[component[u as usize] as usize] += 1;
        }
        let key_edges = keys
            .iter()
            .map(|&k| per_component[component[k as usize] as usize])
            .collect();
        let mut notes = Vec::new();
        if let Some(g) = generated {
            notes.push(format!(
                "generation: {} edges over {} vertices in {} (untimed by the rows)",
                fmt_count(edges.len() as u64),
                fmt_count(n as u64),
                fmt_ns(g.as_nanos() as f64)
            ));
        }
        notes.push(format!(
            "construction (kernel 1): {} adjacencies (self-loops dropped, duplicates once) in {}; {} keys",
            fmt_count(graph.adjacencies() as u64),
            fmt_ns(built.as_nanos() as f64),
            keys.len()
        ));
        Input {
            edges,
            graph,
            keys,
            key_edges,
            notes,
        }
    }
}

/// An input built on first use and shared by the benches of one command.
#[derive(Clone)]
pub struct SharedInput {
    params: (u32, usize, u64),
    cell: Rc<OnceCell<Arc<Input>>>,
}

impl SharedInput {
    /// The input of a scale, key count and seed, not yet generated.
    pub fn new(scale: u32, keys: usize, seed: u64) -> SharedInput {
        SharedInput {
            params: (scale, keys, seed),
            cell: Rc::new(OnceCell::new()),
        }
    }

    /// The input, generated by the first call.
    pub fn get(&self) -> Arc<Input> {
        let (scale, keys, seed) = self.params;
        self.cell
            .get_or_init(|| Arc::new(Input::generate(scale, keys, seed)))
            .clone()
    }
}

/// The BFS workload: one bench (`bfs` or `bfs-do`) over a shared input.
pub struct Bfs {
    input: Arc<Input>,
    direction: Direction,
}

/// Scratch space: parent arrays, queues and bitmaps, and the next key's index.
pub struct State {
    seq_parent: Vec<u32>,
    queue: Vec<u32>,
    seq_scratch: SeqScratch,
    par: ParScratch,
    /// Whether the last search wrote `par` (else `seq_parent`).
    last_parallel: bool,
    /// The last search's key.
    last_key: u32,
    /// Runs of `seq` since the reset: each searches the next key in turn.
    seq_runs: usize,
    /// The key index a parallel run searches: that of the last `seq` run, so a
    /// sample taken alternately with `seq` (which runs first) searches its key.
    paired_key: usize,
}

impl State {
    /// The parent array of the last search.
    pub fn tree(&self) -> Vec<u32> {
        if self.last_parallel {
            self.par.parents()
        } else {
            self.seq_parent.clone()
        }
    }
}

impl Bfs {
    /// The bench searching `input` in `direction`.
    pub fn new(input: Arc<Input>, direction: Direction) -> Bfs {
        Bfs { input, direction }
    }

    /// One search from `key` in `ctx`.
    pub fn search(&self, ctx: &Ctx<'_, '_>, state: &mut State, key: u32) {
        let g = &self.input.graph;
        state.last_key = key;
        state.last_parallel = !matches!(ctx, Ctx::Seq);
        match (ctx, self.direction) {
            (Ctx::Seq, Direction::TopDown) => {
                search::seq_top_down(g, key, &mut state.seq_parent, &mut state.queue)
            }
            (Ctx::Seq, Direction::Optimizing) => search::seq_direction_optimizing(
                g,
                key,
                &mut state.seq_parent,
                &mut state.seq_scratch,
            ),
            (Ctx::Sumac, Direction::TopDown) => search::sumac_search::top_down(g, key, &state.par),
            (Ctx::Sumac, Direction::Optimizing) => {
                search::sumac_search::direction_optimizing(g, key, &mut state.par)
            }
            (Ctx::Rayon { .. }, Direction::TopDown) => {
                search::rayon_search::top_down(g, key, &state.par)
            }
            (Ctx::Rayon { .. }, Direction::Optimizing) => {
                search::rayon_search::direction_optimizing(g, key, &mut state.par)
            }
            _ => unreachable!("BFS runs only as seq, sumac or rayon"),
        }
    }
}

impl Workload for Bfs {
    type State = State;

    fn new_state(&self) -> State {
        let n = self.input.graph.vertices();
        State {
            seq_parent: vec![search::NONE; n],
            queue: Vec::with_capacity(n),
            seq_scratch: SeqScratch::default(),
            par: ParScratch::new(n),
            last_parallel: false,
            last_key: 0,
            seq_runs: 0,
            paired_key: 0,
        }
    }

    fn reset(&self, state: &mut State) {
        state.seq_runs = 0;
        state.paired_key = 0;
    }

    fn supports(imp: Impl) -> bool {
        matches!(imp, Impl::Seq | Impl::Sumac | Impl::Rayon)
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, state: &mut State, _: u64) -> u64 {
        let keys = &self.input.keys;
        if keys.is_empty() {
            return 0;
        }
        if matches!(ctx, Ctx::Seq) {
            state.paired_key = state.seq_runs % keys.len();
            state.seq_runs += 1;
        }
        let key = keys[state.paired_key];
        self.search(ctx, state, key);
        0
    }

    /// The checked run searched from the first key: its tree must pass
    /// validation, and its levels are the same for every correct search.
    fn check(&self, state: &State, _: u64) -> u64 {
        if self.input.keys.is_empty() {
            return 0;
        }
        match validate::validate(&self.input.edges, state.last_key, &state.tree()) {
            Ok(v) => v.levels_checksum,
            Err(e) => {
                eprintln!("bfs: key {}: {e}", state.last_key);
                u64::MAX
            }
        }
    }

    fn units(&self) -> Option<u64> {
        let k = &self.input.key_edges;
        (!k.is_empty()).then(|| k.iter().sum::<u64>() / k.len() as u64)
    }

    fn input_notes(&self) -> Vec<String> {
        self.input.notes.clone()
    }

    fn protocol(&self, ctx: &mut Ctx<'_, '_>, state: &mut State) -> Result<Option<String>, String> {
        let input = &self.input;
        let mut times = Vec::with_capacity(input.keys.len());
        let mut inverse_teps = 0.0;
        for (i, &key) in input.keys.iter().enumerate() {
            let t0 = Instant::now();
            self.search(ctx, state, key);
            let seconds = t0.elapsed().as_secs_f64();
            let valid = validate::validate(&input.edges, key, &state.tree())
                .map_err(|e| format!("search from key {key}: {e}"))?;
            if valid.edges != input.key_edges[i] {
                return Err(format!(
                    "search from key {key}: the tree holds {} input edges, its component {} (check 4)",
                    valid.edges, input.key_edges[i]
                ));
            }
            times.push(seconds);
            inverse_teps += seconds / valid.edges.max(1) as f64;
        }
        if times.is_empty() {
            return Ok(None);
        }
        let harmonic_teps = times.len() as f64 / inverse_teps;
        times.sort_by(f64::total_cmp);
        let median = crate::measure::Summary::of(&times).median;
        Ok(Some(format!(
            "{} searches validated (5 checks each); harmonic-mean TEPS {:.4e}; median time per search {} (min {}, max {})",
            times.len(),
            harmonic_teps,
            fmt_ns(median * 1e9),
            fmt_ns(times[0] * 1e9),
            fmt_ns(times[times.len() - 1] * 1e9),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Graphs with isolated vertices, self-loops, duplicate edges, several
    /// components or one giant one.
    fn graphs() -> Vec<(usize, Vec<Edge>)> {
        let mut rng = crate::workloads::SplitMix64::new(5);
        let mut random = |n: usize, m: usize| -> Vec<Edge> {
            (0..m)
                .map(|_| [rng.below(n as u64) as u32, rng.below(n as u64) as u32])
                .collect()
        };
        let mut giant: Vec<Edge> = (0..2000u32).map(|v| [v, (v + 1) % 2000]).collect();
        giant.extend(random(2000, 3000));
        let star: Vec<Edge> = (1..500u32).flat_map(|v| [[0, v], [v, 0], [v, v]]).collect();
        vec![
            (
                10,
                vec![
                    [0, 0],
                    [1, 2],
                    [2, 1],
                    [1, 2],
                    [3, 3],
                    [4, 5],
                    [5, 6],
                    [6, 4],
                ],
            ),
            (300, random(300, 200)),
            (300, random(300, 900)),
            (2000, giant),
            (600, star),
            (
                5000,
                kronecker::edges(12, 16, 9)
                    .into_iter()
                    .map(|[u, v]| [u % 5000, v % 5000])
                    .collect(),
            ),
        ]
    }

    #[test]
    fn every_implementation_grows_valid_trees_on_awkward_graphs() {
        let sumac_pool = sumac::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let rayon_pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        for (n, edges) in graphs() {
            let input = Arc::new(Input::from_edges(n, edges, 16, 1, None));
            assert!(!input.keys.is_empty());
            for direction in [Direction::TopDown, Direction::Optimizing] {
                let w = Bfs::new(input.clone(), direction);
                let mut state = w.new_state();
                for (i, &key) in input.keys.iter().enumerate() {
                    let mut levels = None;
                    for imp in [Impl::Seq, Impl::Sumac, Impl::Rayon] {
                        match imp {
                            Impl::Seq => w.search(&Ctx::Seq, &mut state, key),
                            Impl::Sumac => {
                                sumac_pool.install(|| w.search(&Ctx::Sumac, &mut state, key))
                            }
                            _ => rayon_pool
                                .install(|| w.search(&Ctx::Rayon { min_len: 1 }, &mut state, key)),
                        }
                        let v = validate::validate(&input.edges, key, &state.tree())
                            .unwrap_or_else(|e| panic!("{imp} {direction:?} n {n} key {key}: {e}"));
                        assert_eq!(
                            v.edges, input.key_edges[i],
                            "{imp} {direction:?} n {n} key {key}"
                        );
                        assert_eq!(*levels.get_or_insert(v.levels_checksum), v.levels_checksum);
                    }
                }
            }
        }
    }

    #[test]
    fn the_protocol_reports_teps_and_fails_on_a_broken_search() {
        let input = Arc::new(Input::from_edges(
            1 << 11,
            kronecker::edges(11, 16, 3),
            8,
            1,
            None,
        ));
        let w = Bfs::new(input.clone(), Direction::TopDown);
        let mut state = w.new_state();
        let note = w.protocol(&mut Ctx::Seq, &mut state).unwrap().unwrap();
        assert!(
            note.starts_with("8 searches validated") && note.contains("TEPS"),
            "{note}"
        );
        // The checked run searches the first key; a tree with a key that is not
        // its own parent fails.
        w.reset(&mut state);
        w.run(&mut Ctx::Seq, &mut state, 0);
        let good = w.check(&state, 0);
        assert_ne!(good, u64::MAX);
        state.seq_parent[input.keys[0] as usize] = search::NONE;
        assert_eq!(w.check(&state, 0), u64::MAX);
    }
}
