//! Task-graph workloads (`sumac-bench graph ...`): Bikeshed's producer/consumer
//! experiment, Taskflow's shapes (linear chain, binary tree, wavefront, graph traversal)
//! and the cost of creating a task and of adding a dependency.
//!
//! Implementations: `sumac` (a `sumac::graph` graph on the pool), `rayon` (what a Rayon
//! user writes today: one `Scope::spawn` per task, with an atomic count of unfinished
//! dependencies per task; a task that finishes spawns the dependents it released),
//! `channel-pool` (OS worker threads pulling ready task ids from a crossbeam channel, with
//! the same counters: the usual hand-rolled design) and `seq` (the tasks in a topological
//! order on one thread).
//!
//! For the shapes, building the graph (its tasks and dependencies) is inside the timed
//! region, as in Taskflow; the sumac graph's fixed arrays are allocated once per pool
//! (untimed) and reused, since a graph's slots come back as its tasks finish.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

use sumac::graph::{Before, Task, TaskGraph, TaskId};

use crate::impls::{Ctx, Impl};
use crate::workloads::{SplitMix64, Workload};

/// Adjacency lists of `n` tasks in two flat arrays: list `i` is
/// `items[offsets[i]..offsets[i + 1]]`. The fixture every implementation reads as it
/// builds its graph: one allocation per list would scatter the lists over the heap in
/// whatever order the generator first touched them, and reading the input would then cost
/// each implementation cache misses that depend on how its build loop overlaps them.
struct Lists {
    offsets: Vec<u32>,
    items: Vec<u32>,
}

impl Lists {
    /// The lists of `n` tasks holding `pairs` (`(list, item)`, walked twice: once to
    /// count, once to fill), each list in the order its items come in `pairs`.
    fn from_pairs(n: usize, pairs: impl Iterator<Item = (u32, u32)> + Clone) -> Lists {
        let mut offsets = vec![0u32; n + 1];
        for (list, _) in pairs.clone() {
            offsets[list as usize + 1] += 1;
        }
        for k in 0..n {
            offsets[k + 1] += offsets[k];
        }
        let mut cursor = offsets.clone();
        let mut items = vec![0u32; offsets[n] as usize];
        for (list, item) in pairs {
            items[cursor[list as usize] as usize] = item;
            cursor[list as usize] += 1;
        }
        Lists { offsets, items }
    }

    fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// List `i`.
    #[inline]
    fn get(&self, i: usize) -> &[u32] {
        &self.items[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    fn iter(&self) -> impl Iterator<Item = &[u32]> + Clone + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// A graph of `n` tasks given by its edges (every edge goes from a lower to a higher
/// index, so index order is topological).
pub struct Dag {
    /// List `i`: the tasks that run after task `i`.
    dependents: Lists,
    /// List `j`: the tasks task `j` runs after.
    dependencies: Lists,
    links: usize,
}

impl Dag {
    fn from_edges(n: usize, edges: impl IntoIterator<Item = (u32, u32)>) -> Dag {
        let edges: Vec<(u32, u32)> = edges.into_iter().collect();
        debug_assert!(edges.iter().all(|&(before, after)| before < after));
        Dag {
            dependents: Lists::from_pairs(n, edges.iter().copied()),
            dependencies: Lists::from_pairs(n, edges.iter().map(|&(b, a)| (a, b))),
            links: edges.len(),
        }
    }

    fn len(&self) -> usize {
        self.dependents.len()
    }

    /// What the `rayon` and `channel-pool` variants build from the input (inside the
    /// timed region, as sumac builds its graph there): each task's dependents, turned
    /// around from its dependencies, and its count of unfinished dependencies.
    fn build_counters(&self) -> Counters {
        let dependents = Lists::from_pairs(
            self.len(),
            self.dependencies
                .iter()
                .enumerate()
                .flat_map(|(j, deps)| deps.iter().map(move |&i| (i, j as u32))),
        );
        let counts = self
            .dependencies
            .iter()
            .map(|d| AtomicU32::new(d.len() as u32))
            .collect();
        Counters { dependents, counts }
    }
}

/// Dependents and dependency counters (see [`Dag::build_counters`]).
struct Counters {
    dependents: Lists,
    counts: Vec<AtomicU32>,
}

impl Counters {
    /// The tasks released by the end of task `i`.
    #[inline]
    fn release(&self, i: u32) -> impl Iterator<Item = u32> + '_ {
        self.dependents
            .get(i as usize)
            .iter()
            .copied()
            .filter(|&d| self.counts[d as usize].fetch_sub(1, Ordering::AcqRel) == 1)
    }
}

/// Taskflow's shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `n` tasks, i before i+1.
    LinearChain,
    /// `layers` layers, task i before 2i and 2i+1 (1-based).
    BinaryTree,
    /// a `side x side` grid, (i,j) before (i+1,j) and (i,j+1).
    Wavefront,
    /// an `n x n` level graph, each node with 1 + rand()%4 edges into a shuffled next
    /// level (fixed seed).
    GraphTraversal,
}

impl Shape {
    /// The bench name.
    pub fn name(self) -> &'static str {
        match self {
            Shape::LinearChain => "graph-linear-chain",
            Shape::BinaryTree => "graph-binary-tree",
            Shape::Wavefront => "graph-wavefront",
            Shape::GraphTraversal => "graph-traversal",
        }
    }

    /// The number of tasks for size parameter `size` (chain length, tree layers, grid
    /// side, levels).
    pub fn tasks(self, size: u64) -> u64 {
        match self {
            Shape::LinearChain => size,
            Shape::BinaryTree => (1u64 << size.min(40)) - 1,
            Shape::Wavefront | Shape::GraphTraversal => size * size,
        }
    }
}

fn build_dag(shape: Shape, size: u64, seed: u64) -> Dag {
    let n = shape.tasks(size) as usize;
    match shape {
        Shape::LinearChain => Dag::from_edges(n, (1..n as u32).map(|i| (i - 1, i))),
        Shape::BinaryTree => Dag::from_edges(
            n,
            (1..=n as u32).flat_map(|i| {
                [2 * i, 2 * i + 1]
                    .into_iter()
                    .filter(move |&c| c as usize <= n)
                    .map(move |c| (i - 1, c - 1))
            }),
        ),
        Shape::Wavefront => {
            let side = size as u32;
            let at = move |i: u32, j: u32| i * side + j;
            Dag::from_edges(
                n,
                (0..side).flat_map(move |i| {
                    (0..side).flat_map(move |j| {
                        let down = (i + 1 < side).then(|| (at(i, j), at(i + 1, j)));
                        let right = (j + 1 < side).then(|| (at(i, j), at(i, j + 1)));
                        down.into_iter().chain(right)
                    })
                }),
            )
        }
        Shape::GraphTraversal => {
            let side = size as u32;
            let mut rng = SplitMix64::new(seed);
            let mut edges = Vec::new();
            let mut next_level: Vec<u32> = (0..side).collect();
            for level in 0..side.saturating_sub(1) {
                // Shuffle the next level (Fisher-Yates), then connect.
                for k in (1..next_level.len()).rev() {
                    let r = rng.below(k as u64 + 1) as usize;
                    next_level.swap(k, r);
                }
                for node in 0..side {
                    let from = level * side + node;
                    let degree = 1 + rng.below(4) as u32;
                    let start = rng.below(side as u64) as u32;
                    let mut targets: Vec<u32> = (0..degree.min(side))
                        .map(|d| next_level[((start + d) % side) as usize])
                        .collect();
                    targets.sort_unstable();
                    targets.dedup();
                    edges.extend(targets.into_iter().map(|t| (from, (level + 1) * side + t)));
                }
            }
            Dag::from_edges(n, edges)
        }
    }
}

/// The work of task `i`: what every implementation runs (Taskflow's `counter++`, here an
/// atomic add so that every implementation does the same; the order of the adds is what
/// the dependencies force, so the result is exact).
#[inline(always)]
fn work(counter: &AtomicU64, i: u32) {
    counter.fetch_add(i as u64 + 1, Ordering::Relaxed);
}

/// Tasks the sumac variant creates, connects and readies at a time.
const BUILD_CHUNK: usize = 256;

/// A Taskflow shape as a workload.
pub struct ShapeWorkload {
    shape: Shape,
    dag: Dag,
}

/// The reused sumac graph (per pool: keyed by its thread count) and id buffer.
#[derive(Default)]
pub struct GraphState {
    graph: Option<(usize, TaskGraph<'static>)>,
    ids: Vec<TaskId>,
    /// How many graphs were built (ids made under another count are of a dropped graph).
    builds: u64,
}

impl GraphState {
    fn graph(&mut self, tasks: usize, links: usize) -> &mut TaskGraph<'static> {
        let threads = sumac::current_num_threads();
        let stale = !matches!(&self.graph, Some((t, g)) if *t == threads && g.max_tasks() >= tasks);
        if stale {
            self.graph = None; // dropped before the new one is built
            let graph = TaskGraph::builder()
                .max_tasks(tasks.max(1))
                .max_dependencies(links.max(1))
                // For `CostOf::Run`, whose tasks nothing else may run.
                .dedicated_channels(1)
                .build()
                .expect("graph capacities");
            self.graph = Some((threads, graph));
            self.builds += 1;
        }
        &mut self.graph.as_mut().expect("just built").1
    }

    /// Drops the graph (bound to the pool it was built in): the next run builds one in
    /// its own pool.
    fn forget_graph(&mut self) {
        self.graph = None;
    }

    /// Builds the graph if [`graph`](Self::graph) would, and returns how many graphs
    /// were built so far.
    fn build_count(&mut self, tasks: usize, links: usize) -> u64 {
        self.graph(tasks, links);
        self.builds
    }
}

impl ShapeWorkload {
    /// The shape at size `size` (random edges from `seed`).
    pub fn new(shape: Shape, size: u64, seed: u64) -> ShapeWorkload {
        ShapeWorkload {
            shape,
            dag: build_dag(shape, size, seed),
        }
    }

    fn run_seq(&self) -> u64 {
        let counter = AtomicU64::new(0);
        for i in 0..self.dag.len() as u32 {
            work(&counter, i);
        }
        counter.into_inner()
    }

    fn run_sumac(&self, state: &mut GraphState) -> u64 {
        let n = self.dag.len();
        // 'static tasks (the graph outlives the run): they add to a static counter.
        let counter: &'static AtomicU64 = &SHAPE_COUNTER;
        counter.store(0, Ordering::Relaxed);
        let mut ids = std::mem::take(&mut state.ids);
        let graph = state.graph(n, self.dag.links);
        // Slots in creation order (the last run freed them in its own order).
        graph.compact().expect("the last run finished");
        let graph = &*graph;
        ids.clear();
        let channel = graph.default_channel();
        // Built in linked batches, each created, connected and readied in one call while
        // its slots are in cache (dependencies inside the batch by position, on earlier
        // batches by id: those may have run already). In a one-thread pool the builder
        // holds the pool's only place, so nobody else runs the ready tasks until it
        // waits: it runs them after each batch, while their slots are in cache.
        let alone = sumac::current_num_threads() == 1;
        let mut batch = Vec::with_capacity(BUILD_CHUNK);
        for start in (0..n).step_by(BUILD_CHUNK) {
            let end = (start + BUILD_CHUNK).min(n);
            let made = &ids[..];
            let tasks = (start..end).map(|j| {
                let before = self.dag.dependencies.get(j).iter().map(move |&i| {
                    match (i as usize).checked_sub(start) {
                        Some(k) => Before::InBatch(k),
                        None => Before::Task(made[i as usize]),
                    }
                });
                (move |_: &Task<'_, 'static>| work(counter, j as u32), before)
            });
            batch.clear();
            graph
                .create_linked_batch_into(channel, tasks, true, &mut batch)
                .expect("capacity");
            ids.extend_from_slice(&batch);
            if alone {
                graph.run_channel(channel).expect("the graph's own channel");
            }
        }
        graph.wait_all().expect("graph");
        state.ids = ids;
        counter.load(Ordering::Relaxed)
    }

    fn run_rayon(&self) -> u64 {
        let counter = AtomicU64::new(0);
        let counters = self.dag.build_counters();
        fn go<'s>(s: &rayon::Scope<'s>, counters: &'s Counters, counter: &'s AtomicU64, i: u32) {
            work(counter, i);
            for d in counters.release(i) {
                s.spawn(move |s| go(s, counters, counter, d));
            }
        }
        let (counters_ref, counter_ref) = (&counters, &counter);
        rayon::in_place_scope(|s| {
            for (i, deps) in self.dag.dependencies.iter().enumerate() {
                if deps.is_empty() {
                    s.spawn(move |s| go(s, counters_ref, counter_ref, i as u32));
                }
            }
        });
        counter.into_inner()
    }

    fn run_channel_pool(&self, threads: usize) -> u64 {
        let counter = AtomicU64::new(0);
        let counters = self.dag.build_counters();
        let remaining = AtomicUsize::new(self.dag.len());
        let (send, receive) = crossbeam_channel::unbounded::<u32>();
        for (i, deps) in self.dag.dependencies.iter().enumerate() {
            if deps.is_empty() {
                send.send(i as u32).expect("open");
            }
        }
        std::thread::scope(|ts| {
            for _ in 0..threads {
                let (send, receive) = (send.clone(), receive.clone());
                let (counters, counter, remaining) = (&counters, &counter, &remaining);
                ts.spawn(move || {
                    while let Ok(i) = receive.recv() {
                        if i == u32::MAX {
                            return;
                        }
                        work(counter, i);
                        for d in counters.release(i) {
                            send.send(d).expect("open");
                        }
                        if remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                            for _ in 0..threads {
                                send.send(u32::MAX).expect("open");
                            }
                        }
                    }
                });
            }
        });
        counter.into_inner()
    }
}

impl Workload for ShapeWorkload {
    type State = GraphState;

    fn new_state(&self) -> GraphState {
        GraphState::default()
    }

    fn new_pool(&self, state: &mut GraphState) {
        state.forget_graph();
    }

    fn supports(imp: Impl) -> bool {
        matches!(
            imp,
            Impl::Seq | Impl::Sumac | Impl::Rayon | Impl::ChannelPool
        )
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, state: &mut GraphState, _param: u64) -> u64 {
        let _ = self.shape;
        match ctx {
            Ctx::Seq => self.run_seq(),
            Ctx::Sumac => self.run_sumac(state),
            Ctx::Rayon { .. } => self.run_rayon(),
            Ctx::ChannelPool { threads } => self.run_channel_pool(*threads),
            _ => unreachable!("no such variant of a graph workload"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Bikeshed
// ---------------------------------------------------------------------------------------

/// Bikeshed's variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Variant {
    /// One channel for every producer, tasks created and readied one at a time.
    A,
    /// One channel per producer, tasks created and readied in batches of 16.
    E,
}

impl Variant {
    fn batch(self) -> usize {
        match self {
            Variant::A => 1,
            Variant::E => 16,
        }
    }
}

/// Bikeshed's experiment: `tasks` tasks, each an atomic add, created and readied by
/// `producers` threads outside the pool and run by the pool's workers (the consumers).
pub struct Bikeshed {
    tasks: u64,
    producers: usize,
    variant: Variant,
}

/// Task slots of the sumac graph in the Bikeshed experiment (its example's shed size).
const BIKESHED_SLOTS: usize = 1 << 16;

impl Bikeshed {
    /// The experiment.
    pub fn new(tasks: u64, producers: usize, variant: Variant) -> Bikeshed {
        Bikeshed {
            tasks,
            producers,
            variant,
        }
    }

    /// The tasks producer `p` makes.
    fn share(&self, p: usize) -> u64 {
        let base = self.tasks / self.producers as u64;
        base + u64::from((p as u64) < self.tasks % self.producers as u64)
    }

    fn run_sumac(&self, state: &mut GraphState) -> u64 {
        let channels = match self.variant {
            Variant::A => 1,
            Variant::E => self.producers,
        };
        let threads = sumac::current_num_threads();
        let stale = !matches!(&state.graph, Some((t, g)) if *t == threads && g.channel(channels - 1).is_some() && g.channel(channels).is_none());
        if stale {
            state.graph = None;
            let graph = TaskGraph::builder()
                .max_tasks(BIKESHED_SLOTS)
                .max_dependencies(1)
                .channels(channels)
                .build()
                .expect("graph");
            state.graph = Some((threads, graph));
        }
        let graph = &state.graph.as_ref().expect("built").1;
        let counter: &'static AtomicU64 = &BIKESHED_COUNTER;
        counter.store(0, Ordering::Relaxed);
        let batch = self.variant.batch();
        let done = AtomicUsize::new(0);
        std::thread::scope(|ts| {
            for p in 0..self.producers {
                let share = self.share(p);
                let done = &done;
                ts.spawn(move || {
                    let channel = graph.channel(p % channels).expect("channel");
                    let mut ids = Vec::with_capacity(batch);
                    let mut made = 0;
                    while made < share {
                        let n = (batch as u64).min(share - made) as usize;
                        ids.clear();
                        // Created and readied in one call (a linked batch without
                        // links).
                        let tasks = (0..n).map(|_| {
                            let task = move |_: &Task<'_, 'static>| {
                                counter.fetch_add(1, Ordering::Relaxed);
                            };
                            (task, [] as [Before; 0])
                        });
                        match graph.create_linked_batch_into(channel, tasks, true, &mut ids) {
                            Ok(()) => made += n as u64,
                            // Producing faster than consumers run: back off.
                            Err(_) => std::thread::yield_now(),
                        }
                    }
                    done.fetch_add(1, Ordering::Release);
                });
            }
            // This thread is one of the pool's consumers (a worker, or the caller taking
            // part in a worker's place): it runs the graph's runner jobs while the
            // producers work, instead of blocking in the join.
            while done.load(Ordering::Acquire) < self.producers {
                if sumac::yield_now() != Some(sumac::Yield::Executed) {
                    std::thread::yield_now();
                }
            }
        });
        graph.wait_all().expect("graph");
        counter.load(Ordering::Relaxed)
    }

    fn run_rayon(&self) -> u64 {
        let counter = AtomicU64::new(0);
        let counter = &counter;
        let done = AtomicUsize::new(0);
        rayon::in_place_scope(|s| {
            std::thread::scope(|ts| {
                for p in 0..self.producers {
                    let share = self.share(p);
                    let done = &done;
                    ts.spawn(move || {
                        for _ in 0..share {
                            s.spawn(move |_| {
                                counter.fetch_add(1, Ordering::Relaxed);
                            });
                        }
                        done.fetch_add(1, Ordering::Release);
                    });
                }
                // This thread is one of the pool's workers: it runs jobs meanwhile.
                while done.load(Ordering::Acquire) < self.producers {
                    if rayon::yield_now() != Some(rayon::Yield::Executed) {
                        std::thread::yield_now();
                    }
                }
            });
        });
        counter.load(Ordering::Relaxed)
    }

    fn run_channel_pool(&self, consumers: usize) -> u64 {
        let counter = AtomicU64::new(0);
        let batch = self.variant.batch();
        // Variant A: one shared channel; E: one channel per producer, consumers take from
        // their own and then from the others.
        let queues = match self.variant {
            Variant::A => 1,
            Variant::E => self.producers,
        };
        let channels: Vec<_> = (0..queues)
            .map(|_| crossbeam_channel::unbounded::<(u32, u32)>())
            .collect();
        let done = AtomicUsize::new(0);
        std::thread::scope(|ts| {
            for c in 0..consumers {
                let (channels, counter, done) = (&channels, &counter, &done);
                ts.spawn(move || loop {
                    let mut got = None;
                    for k in 0..queues {
                        if let Ok(item) = channels[(c + k) % queues].1.try_recv() {
                            got = Some(item);
                            break;
                        }
                    }
                    match got {
                        Some((_, n)) => {
                            for _ in 0..n {
                                counter.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        None => {
                            if done.load(Ordering::Acquire) == self.producers
                                && channels.iter().all(|(_, r)| r.is_empty())
                            {
                                return;
                            }
                            std::thread::yield_now();
                        }
                    }
                });
            }
            for p in 0..self.producers {
                let (channels, done) = (&channels, &done);
                let share = self.share(p);
                ts.spawn(move || {
                    let send = &channels[p % queues].0;
                    let mut made = 0;
                    while made < share {
                        let n = (batch as u64).min(share - made);
                        send.send((made as u32, n as u32)).expect("open");
                        made += n;
                    }
                    done.fetch_add(1, Ordering::Release);
                });
            }
        });
        counter.into_inner()
    }
}

impl Workload for Bikeshed {
    type State = GraphState;

    fn new_state(&self) -> GraphState {
        GraphState::default()
    }

    fn new_pool(&self, state: &mut GraphState) {
        state.forget_graph();
    }

    fn supports(imp: Impl) -> bool {
        matches!(
            imp,
            Impl::Seq | Impl::Sumac | Impl::Rayon | Impl::ChannelPool
        )
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, state: &mut GraphState, _param: u64) -> u64 {
        match ctx {
            Ctx::Seq => {
                let counter = AtomicU64::new(0);
                for _ in 0..self.tasks {
                    counter.fetch_add(1, Ordering::Relaxed);
                }
                counter.into_inner()
            }
            Ctx::Sumac => self.run_sumac(state),
            Ctx::Rayon { .. } => self.run_rayon(),
            Ctx::ChannelPool { threads } => self.run_channel_pool(*threads),
            _ => unreachable!("no such variant of bikeshed"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The cost of creating a task and of adding a dependency
// ---------------------------------------------------------------------------------------

/// What [`TaskCost`] times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CostOf {
    /// `create` of one task (not readied), one call per task.
    Create,
    /// `add_dependencies` of one link, one call per link (a chain).
    Dependency,
    /// `add_dependencies` of 8 links per call (each task after the 8 before it).
    Dependency8,
    /// A task with one dependency, made by `create_linked_batch_into` (chains of
    /// `BUILD_CHUNK`, each task after the one before it in its batch; not readied):
    /// creating and linking together.
    Linked,
    /// Taking and running a task readied alone (one `ready` call per task, in the
    /// untimed reset, onto a dedicated channel that `run_channel` then drains).
    Run,
}

impl CostOf {
    /// The bench name.
    pub fn name(self) -> &'static str {
        match self {
            CostOf::Create => "graph-create-task",
            CostOf::Dependency => "graph-add-dependency",
            CostOf::Dependency8 => "graph-add-dependency-x8",
            CostOf::Linked => "graph-create-linked-task",
            CostOf::Run => "graph-run-task",
        }
    }
}

/// Times `n` creates, `n` links added by `add_dependencies` (one or eight per call, to
/// tasks made in the untimed reset between runs), `n` tasks made with their link by
/// linked batches, or `n` readied tasks taken and run, on a sumac graph. `seq` is the
/// naive reference: a boxed closure pushed on a `Vec`, an edge pushed on a `Vec`, both,
/// or boxed closures called from a `Vec`.
pub struct TaskCost {
    n: usize,
    what: CostOf,
}

/// State of [`TaskCost`].
#[derive(Default)]
pub struct CostState {
    graph: GraphState,
    ids: Vec<TaskId>,
    /// The graph build `ids` belong to.
    ids_build: u64,
    boxed: Vec<Box<dyn FnOnce() + Send>>,
    edges: Vec<(u32, u32)>,
}

impl TaskCost {
    /// `n` operations of kind `what`.
    pub fn new(n: usize, what: CostOf) -> TaskCost {
        TaskCost { n, what }
    }

    /// The links a run adds (`n`, rounded down to whole calls).
    fn links(&self) -> usize {
        match self.what {
            CostOf::Create | CostOf::Dependency | CostOf::Linked | CostOf::Run => self.n,
            CostOf::Dependency8 => self.n / 8 * 8,
        }
    }

    /// The tasks a run connects: a chain of `n + 1`, or `n / 8` tasks after the first 8.
    fn linked_tasks(&self) -> usize {
        match self.what {
            CostOf::Create | CostOf::Dependency | CostOf::Linked | CostOf::Run => self.n + 1,
            CostOf::Dependency8 => self.n / 8 + 8,
        }
    }

    /// Makes the tasks a dependency run connects (untimed in `reset`; again in the run
    /// if the run is in another pool than the reset, as the ramp-up calls are).
    fn make_linked_tasks(&self, state: &mut CostState) {
        state.ids.clear();
        state.ids_build = state.graph.build_count(self.n + 1, self.n);
        let graph = &*state.graph.graph(self.n + 1, self.n);
        graph
            .create_batch_into(
                graph.default_channel(),
                (0..self.linked_tasks()).map(|_| |_: &Task<'_, 'static>| ()),
                &mut state.ids,
            )
            .expect("capacity");
    }

    /// Makes the tasks a run of `CostOf::Run` takes and runs: `n` boxed closures for
    /// `seq`, and `n` tasks on the sumac graph's dedicated channel, each readied alone
    /// (untimed in `reset`; again in the run if the run is in another pool than the
    /// reset, as the ramp-up calls are).
    fn make_readied_tasks(&self, state: &mut CostState) {
        let counter: &'static AtomicU64 = &BENCH_SINK;
        state.boxed.clear();
        state.boxed.reserve(self.n);
        for _ in 0..self.n {
            state.boxed.push(Box::new(move || {
                counter.fetch_add(1, Ordering::Relaxed);
            }));
        }
        state.ids_build = state.graph.build_count(self.n + 1, self.n);
        let graph = &*state.graph.graph(self.n + 1, self.n);
        let channel = graph.dedicated_channel(0).expect("one dedicated channel");
        for _ in 0..self.n {
            let id = graph
                .create_on(channel, move |_| {
                    counter.fetch_add(1, Ordering::Relaxed);
                })
                .expect("capacity");
            graph.ready(&[id]).expect("ready");
        }
    }

    /// Makes the tasks the runs use but do not time: those a dependency run links, or
    /// those a run of `CostOf::Run` takes and runs.
    fn make_reset_tasks(&self, state: &mut CostState) {
        match self.what {
            CostOf::Dependency | CostOf::Dependency8 => self.make_linked_tasks(state),
            CostOf::Run => self.make_readied_tasks(state),
            CostOf::Create | CostOf::Linked => {}
        }
    }
}

impl Workload for TaskCost {
    type State = CostState;
    const NEEDS_RESET: bool = true;

    fn new_state(&self) -> CostState {
        CostState::default()
    }

    fn new_pool(&self, state: &mut CostState) {
        state.graph.forget_graph();
    }

    fn reset(&self, state: &mut CostState) {
        state.boxed.clear();
        state.edges.clear();
        state.ids.clear();
        if let Some((_, graph)) = &mut state.graph.graph {
            // Discard what the last run made (cancelled, dropped unrun), and hand out
            // slots in creation order again. Tasks readied on the dedicated channel (by
            // a reset before a `seq` run) finish as cancelled only when taken.
            graph.cancel();
            if let Some(channel) = graph.dedicated_channel(0) {
                graph.run_channel(channel).expect("the graph's channel");
            }
            let _ = graph.wait_all();
            graph.compact().expect("the last run finished");
        }
        self.make_reset_tasks(state);
    }

    fn supports(imp: Impl) -> bool {
        matches!(imp, Impl::Seq | Impl::Sumac)
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, state: &mut CostState, _param: u64) -> u64 {
        let counter: &'static AtomicU64 = &BENCH_SINK;
        match (ctx, self.what) {
            (Ctx::Seq, CostOf::Create) => {
                state.boxed.reserve(self.n);
                for _ in 0..self.n {
                    state.boxed.push(Box::new(move || {
                        counter.fetch_add(1, Ordering::Relaxed);
                    }));
                }
                state.boxed.len() as u64
            }
            (Ctx::Seq, CostOf::Linked) => {
                state.boxed.reserve(self.n);
                state.edges.reserve(self.n);
                for i in 0..self.n as u32 {
                    state.boxed.push(Box::new(move || {
                        counter.fetch_add(1, Ordering::Relaxed);
                    }));
                    state.edges.push((i, i + 1));
                }
                state.boxed.len() as u64
            }
            (Ctx::Seq, CostOf::Run) => {
                let ran = state.boxed.len() as u64;
                for task in state.boxed.drain(..) {
                    task();
                }
                ran
            }
            (Ctx::Seq, CostOf::Dependency | CostOf::Dependency8) => {
                let links = self.links();
                state.edges.reserve(links);
                for i in 0..links as u32 {
                    state.edges.push((i, i + 1));
                }
                state.edges.len() as u64
            }
            (Ctx::Sumac, what) => {
                let n = self.n;
                let reset_made_tasks = !matches!(what, CostOf::Create | CostOf::Linked);
                if reset_made_tasks && state.ids_build != state.graph.build_count(n + 1, n) {
                    self.make_reset_tasks(state);
                }
                let graph = &*state.graph.graph(n + 1, n);
                match what {
                    CostOf::Create => {
                        for _ in 0..n {
                            graph
                                .create(move |_| {
                                    counter.fetch_add(1, Ordering::Relaxed);
                                })
                                .expect("capacity");
                        }
                        graph.unfinished() as u64
                    }
                    CostOf::Dependency => {
                        let ids = &state.ids;
                        for i in 0..n {
                            graph
                                .add_dependencies(ids[i + 1], &ids[i..=i])
                                .expect("links");
                        }
                        n as u64
                    }
                    CostOf::Linked => {
                        let ids = &mut state.ids;
                        for start in (0..n).step_by(BUILD_CHUNK) {
                            let tasks = (start..(start + BUILD_CHUNK).min(n)).map(|j| {
                                let task = move |_: &Task<'_, 'static>| {
                                    counter.fetch_add(1, Ordering::Relaxed);
                                };
                                (task, (j > start).then(|| Before::InBatch(j - start - 1)))
                            });
                            graph
                                .create_linked_batch_into(
                                    graph.default_channel(),
                                    tasks,
                                    false,
                                    ids,
                                )
                                .expect("capacity");
                        }
                        graph.unfinished() as u64
                    }
                    CostOf::Dependency8 => {
                        // Each task after the 8 before it, in one call.
                        let ids = &state.ids;
                        for j in 0..n / 8 {
                            graph
                                .add_dependencies(ids[j + 8], &ids[j..j + 8])
                                .expect("links");
                        }
                        self.links() as u64
                    }
                    CostOf::Run => {
                        let channel = graph.dedicated_channel(0).expect("one dedicated channel");
                        graph.run_channel(channel).expect("the graph's channel") as u64
                    }
                }
            }
            _ => unreachable!("task costs run on seq and sumac only"),
        }
    }
}

/// What the `'static` tasks of the sumac variants add to (one run at a time).
static BENCH_SINK: AtomicU64 = AtomicU64::new(0);
static SHAPE_COUNTER: AtomicU64 = AtomicU64::new(0);
static BIKESHED_COUNTER: AtomicU64 = AtomicU64::new(0);

#[cfg(test)]
mod tests {
    use super::*;

    /// The sumac variants add to statics, one run at a time: the tests that run them
    /// (in parallel threads of one test binary) take turns.
    fn one_sumac_run_at_a_time() -> std::sync::MutexGuard<'static, ()> {
        static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
        TURN.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    #[test]
    fn shapes_have_their_sizes_and_forward_edges() {
        let chain = build_dag(Shape::LinearChain, 10, 1);
        assert_eq!((chain.len(), chain.links), (10, 9));
        let tree = build_dag(Shape::BinaryTree, 4, 1);
        assert_eq!((tree.len(), tree.links), (15, 14));
        let grid = build_dag(Shape::Wavefront, 4, 1);
        assert_eq!((grid.len(), grid.links), (16, 24));
        let levels = build_dag(Shape::GraphTraversal, 8, 1);
        assert_eq!(levels.len(), 64);
        for (i, ds) in levels.dependents.iter().enumerate() {
            assert!(ds
                .iter()
                .all(|&d| d as usize > i && (d as usize) / 8 == i / 8 + 1));
            assert!(!ds.is_empty() || i >= 56);
        }
    }

    #[test]
    fn the_dependency_lists_are_the_dependents_lists_turned_around() {
        for shape in [
            Shape::LinearChain,
            Shape::BinaryTree,
            Shape::Wavefront,
            Shape::GraphTraversal,
        ] {
            let dag = build_dag(shape, 5, 7);
            let mut forward: Vec<(u32, u32)> = (0..dag.len())
                .flat_map(|i| dag.dependents.get(i).iter().map(move |&j| (i as u32, j)))
                .collect();
            let mut backward: Vec<(u32, u32)> = (0..dag.len())
                .flat_map(|j| dag.dependencies.get(j).iter().map(move |&i| (i, j as u32)))
                .collect();
            assert_eq!(forward.len(), dag.links, "{shape:?}");
            forward.sort_unstable();
            backward.sort_unstable();
            assert_eq!(forward, backward, "{shape:?}");
        }
        // Each list keeps its items in the order the edges came.
        let lists = Lists::from_pairs(3, [(2, 9), (0, 4), (2, 1), (0, 8)].into_iter());
        assert_eq!(
            (lists.get(0), lists.get(1), lists.get(2)),
            (&[4, 8][..], &[][..], &[9, 1][..])
        );
    }

    #[test]
    fn a_graph_is_rebuilt_in_each_new_pool_even_of_the_same_size() {
        use crate::impls::Pool;
        let _turn = one_sumac_run_at_a_time();
        let w = ShapeWorkload::new(Shape::LinearChain, 64, 1);
        let mut state = w.new_state();
        let seq = w.run(&mut Ctx::Seq, &mut state, 0);
        // Two pools of one size, as two `--policy` rows have, each announced as the
        // harness does.
        for round in 1..=2 {
            let Pool::Sumac(pool) = Pool::build(Impl::Sumac, &Default::default(), 2).unwrap()
            else {
                unreachable!("a sumac pool")
            };
            w.new_pool(&mut state);
            assert_eq!(pool.install(|| w.run(&mut Ctx::Sumac, &mut state, 0)), seq);
            assert_eq!(state.builds, round, "a graph of another pool was reused");
        }
    }

    #[test]
    fn every_implementation_computes_the_same_sum() {
        let _turn = one_sumac_run_at_a_time();
        let pool = sumac::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        for shape in [
            Shape::LinearChain,
            Shape::BinaryTree,
            Shape::Wavefront,
            Shape::GraphTraversal,
        ] {
            let w = ShapeWorkload::new(shape, 6, 3);
            let mut state = w.new_state();
            let seq = w.run(&mut Ctx::Seq, &mut state, 0);
            let sumac = pool.install(|| w.run(&mut Ctx::Sumac, &mut state, 0));
            let rayon = w.run(&mut Ctx::Rayon { min_len: 1 }, &mut state, 0);
            let channels = w.run(&mut Ctx::ChannelPool { threads: 2 }, &mut state, 0);
            assert_eq!([sumac, rayon, channels], [seq; 3], "{shape:?}");
        }
        for variant in [Variant::A, Variant::E] {
            let w = Bikeshed::new(1000, 2, variant);
            let mut state = w.new_state();
            let sumac = pool.install(|| w.run(&mut Ctx::Sumac, &mut state, 0));
            let rayon = w.run(&mut Ctx::Rayon { min_len: 1 }, &mut state, 0);
            let channels = w.run(&mut Ctx::ChannelPool { threads: 2 }, &mut state, 0);
            assert_eq!([sumac, rayon, channels], [1000; 3], "{variant:?}");
        }
    }
}
