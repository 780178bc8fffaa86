//! The shared state of a task graph and everything that runs on it: allocation, creation,
//! dependencies, readying, runners, completion, waiting, cancelling and re-running.
//!
//! # Runners and the hand-off that strands no task
//! Ready tasks of pool channels are run by *runners*: pool jobs that each take batches of
//! ready tasks until none are left, then end. A runner that finds none watches the
//! channels for `RUNNER_LINGER` first, with sparse looks (`LINGER_LOOK_EVERY` apart) that
//! leave a producer's lines in its cache between them. `sched` holds the number of runners
//! (spawned and not yet ended) and a `NOTIFIED` bit, and both sides change it only with
//! read-modify-writes, so they are totally ordered:
//!
//! * whoever pushes ready tasks then either adds a runner (if fewer than wanted exist)
//!   and spawns it, or sets `NOTIFIED` (a compare-and-swap even if it is set already, so
//!   that the runner that clears it synchronises with this push);
//! * a runner that finds every pool channel empty clears `NOTIFIED` and looks again if it
//!   was set, and otherwise leaves by decrementing the count.
//!
//! A push that came before a runner's exit swap shows as `NOTIFIED` (the runner looks
//! again and finds it); one that came after sees the runner gone and spawns another. The
//! loom model `loom_graph_*` checks this on this code.
//!
//! A runner keeps the tasks its own tasks release and runs them next without a push. In a
//! graph of several runners it keeps up to `KEEP_MAX`, newest first, like a depth-first
//! walk that keeps their data in cache, and pushes the older ones in one go for other
//! runners. A graph of one runner has nobody to share with: it keeps them all and runs
//! them in release order, which keeps a wide graph's walk on few levels at a time (a
//! depth-first walk reaches every level at once, and each release misses the cache).
//! There a task released behind others has its first dependency link fetched as it is
//! kept, and its dependents' slots when the `LOOK_AHEAD`-th task after it is kept (by
//! then the link is in cache), so that its releases find them in cache. The kept tasks
//! live in a thread-local, so that a task that waits can hand them to other runners
//! first: one that waits for a task of its graph ([`Graph::wait`]), and one that blocks
//! on a channel, a oneshot or a future (`BlockedTask`, from `channel::waiters`), since
//! what it waits for may come from a task its thread kept. Both lend their runner's
//! place meanwhile; the blocked task counts as a helper, so that the graph does not look
//! stalled while it still runs.
//!
//! # Completion and dependency release
//! The thread that runs a task owns it: it made its `pending` word zero. Finishing sets
//! `CLOSED` on the task's `dependents` word and takes the list in the same instruction;
//! each dependent's `pending` is decremented (acquire-release, so the task that makes it
//! zero sees every dependency's effects) and whoever makes it zero schedules it. Once a
//! task is readied, only its unfinished dependencies change its `pending` word (adding
//! dependencies, readying and cancelling all need `NOT_READIED`; re-running needs every
//! task finished), so the thread that finishes the last of them owns the word: it reads
//! it with acquire and writes it with a plain store. A dependency linked concurrently
//! either made it onto the list before `CLOSED` (and is released) or sees `CLOSED` and
//! undoes its own count. A failed (panicked or cancelled) task poisons its dependents
//! before releasing them; a poisoned task finishes without running and poisons its own,
//! so failure cascades along the same path.
//!
//! # Linked batches
//! [`Graph::create_linked_batch_into`] fills its slots and links them to each other with
//! plain stores while their `pending` words still hold the old generation (to every other
//! thread the slots hold finished tasks, and no link points at them). Each task's count
//! waits in the low bits of its old word. Publishing stores every word (release) before
//! anything of the batch is scheduled, and a task's count covers its links to older
//! tasks, which are pushed only after that, like `add_dependencies`' (a refused push
//! undoes its count): so no task of the batch runs before all its links are in place.
//! Nothing is scheduled until the batch's `Local` is published at the end.
//!
//! # Helpers
//! Any thread may run a channel's ready tasks (`execute_one`, `run_channel`), counted in
//! `helpers` while it does. `run_channel` on a pool channel keeps what its tasks release,
//! as a runner does; its tasks count in the pool's stats and trace when the thread is a
//! member (or guest) of the graph's pool. A caller taking part in a call into the
//! graph's pool (a guest: it holds one of the pool's places) that waits in `wait_all`
//! runs the pool channels' ready tasks this way before it blocks, keeping what they
//! release as a runner does: in a one-thread pool the runner jobs it spawned would
//! otherwise wait for it to block, and then run on another core. It runs only this
//! graph's tasks, which the wait is for: nothing it runs can bury the waiting frame.
//!
//! # Counting for waits
//! `unfinished` counts created tasks not yet finished. Runners count what they finish
//! locally and subtract it in batches, always before they leave, so `wait_all` sees zero
//! once they are idle. A graph is *stalled* when tasks are unfinished but no runner or
//! helper is active, no channel holds a ready task, and no task that waits (having lent
//! its runner's place) waits for a task already finished (it is about to resume): nothing
//! inside the graph can make progress. Waiters register in `waiters`; every event that may end a wait (a finished
//! task while someone waits for one, the last runner leaving, the count reaching zero, a
//! push to a dedicated channel) wakes them after making its change, and they re-check.
//!
//! # Memory
//! Nothing is allocated per task: slots, their link indices and the dependency links are
//! arrays allocated (zeroed, so mapped lazily) when the graph is built; freed slots and
//! links go back to lock-free free stacks in batches. After a compaction, slots and links
//! never used since are taken in index order before freed ones (see `Graph::allocate`).
//! Each slot also has a link of its own, which serves its task's first dependency
//! (`Graph::own_link`): a task with one dependency, the common case in chains and trees,
//! allocates and frees no link. A failed one-shot task's slot waits on a stack of its own
//! until `wait_all` reports the failure (or no other slot is left), so that a dependency
//! added on it later still finds it failed rather than reused. Each channel's ready queue
//! (`ready`) is a ring of
//! at least as many cells as there are slots, zeroed too, so it never fills.
//! Runner jobs are allocated per burst of work, not per task.

use std::cell::Cell;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use crossbeam_utils::CachePadded;

use super::error::{Capacity, Failure, GraphBusy, GraphFull, TaskError, WaitError};
use super::ready::{ring_cells, ReadyQueue};
use super::slot::{
    generation_of, Slot, CHANNEL_MASK, CLOSED, COUNT_MASK, FAILED, LINK_MASK, NOT_READIED, NO_LINK,
    OWN_LINK_TAKEN, POISONED, REUSABLE,
};
use super::stack::{Chain, FreeStack, NIL};
use super::{Before, Channel, Task, TaskId};
use crate::job::PanicPayload;
use crate::park::{self, Unparker};
use crate::registry::Registry;
use crate::sync::{AtomicBool, AtomicU32, AtomicUsize, Mutex};

/// Ready tasks a runner takes from a channel at once (the rest stay for other runners).
const RUNNER_BATCH: usize = 32;
/// Freed slots and links a thread keeps before pushing them back in one go (fewer slots
/// in a small graph, see `Graph::free_batch`).
const FREE_BATCH: u32 = 64;
/// Freed slots a runner that ran out of ready tasks keeps before pushing them back.
const IDLE_FREE_BATCH: u32 = 16;
/// A graph lets each thread keep at most this fraction of its slots freed but unpublished,
/// so that a small graph's creators (possibly tasks of the same runner) find them.
const FREE_BATCH_SHARE: usize = 64;
/// How long an idle runner watches the pool channels before it ends: spawning a new
/// runner for the next burst costs an allocation, a pool push and maybe a wake-up, so a
/// short gap between a producer's tasks should not end it (about an idle worker's spin,
/// [`crate::policy::MAX_SPIN`], at most).
#[cfg_attr(
    any(loom, miri),
    allow(dead_code, reason = "a loom or Miri runner looks once")
)]
const RUNNER_LINGER: Duration = Duration::from_micros(50);
/// Time between an idle runner's looks: each look pulls the channels' head cells from
/// the producers' cores, so sparse looks let a producer fill cells and slots in its own
/// cache and let ready tasks gather into bigger takes; it is also the most a task readied
/// to an idle runner waits.
#[cfg_attr(
    any(loom, miri),
    allow(dead_code, reason = "a loom or Miri runner looks once")
)]
const LINGER_LOOK_EVERY: Duration = Duration::from_micros(2);
/// Released tasks a runner of a graph of several runners keeps to run itself (newest
/// first, like a depth-first walk, which keeps their data in cache); older ones beyond
/// this go to its channel for other runners (a graph of one runner keeps all).
const KEEP_MAX: u32 = 8;
/// How many tasks of a batch ahead a runner prefetches the slot of.
const PREFETCH_AHEAD: usize = 4;
/// A runner of a one-runner graph prefetches the dependents' slots of a task it kept when
/// it keeps the `LOOK_AHEAD`-th task after it (the first link was prefetched meanwhile).
const LOOK_AHEAD: usize = 32;
/// How many of a task's dependents have their slots prefetched as it starts.
const PREFETCH_DEPENDENTS: usize = 8;
/// Whether prefetch hints are compiled (see `prefetch_line`): elsewhere the walks that
/// find what to prefetch would only add loads (and, under loom, states to explore).
const PREFETCHES: bool = cfg!(all(target_arch = "x86_64", not(loom), not(miri)));
/// Channels a thread collects released tasks for before pushing them.
const RELEASE_CHANNELS: usize = 4;

/// `sched`: set by a push that did not spawn a runner (see the module documentation).
const NOTIFIED: usize = 1;
/// `sched`: one runner.
const RUNNER: usize = 2;

static NEXT_SERIAL: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

/// The graph whose tasks the calling thread is running (innermost), if any.
#[derive(Clone, Copy)]
struct Current {
    /// The graph (a `Graph<'a>`, for the `'a` of `block`), null if none.
    graph: *const (),
    /// Whether the thread runs them as a runner (holding a place in `sched`).
    runner: bool,
    /// `Graph::<'a>::block_task` of that graph.
    block: unsafe fn(*const (), bool, bool),
}

impl Current {
    const NONE: Current = Current {
        graph: ptr::null(),
        runner: false,
        block: no_graph_blocks,
    };
}

/// `Current::NONE`'s `block` (never called: `graph` is null).
fn no_graph_blocks(_: *const (), _: bool, _: bool) {}

thread_local! {
    static CURRENT_GRAPH: Cell<Current> = const { Cell::new(Current::NONE) };
}

/// A task of a graph that blocks on a channel, a oneshot or a future (`channel::waiters`)
/// while it runs on the calling thread: from `enter` until dropped, the tasks its thread
/// kept are shared, its runner's place is lent and it counts as a helper (see
/// [`Graph::block_task`]).
pub(crate) struct BlockedTask(Current);

impl BlockedTask {
    /// `None` unless the calling thread runs a task of a graph.
    pub(crate) fn enter() -> Option<BlockedTask> {
        let current = CURRENT_GRAPH.with(Cell::get);
        if current.graph.is_null() {
            return None;
        }
        // SAFETY: a current graph outlives the `Running` guard that set it, which lives on
        // this thread's stack below the blocking call (the graph's task runs above it).
        unsafe { (current.block)(current.graph, current.runner, true) };
        Some(BlockedTask(current))
    }
}

impl Drop for BlockedTask {
    fn drop(&mut self) {
        let current = self.0;
        // SAFETY: as in `enter`; the task has not returned yet.
        unsafe { (current.block)(current.graph, current.runner, false) };
    }
}

/// The released tasks a runner keeps to run itself, in the order it runs them (see the
/// module documentation), and the channel it shares them on.
#[derive(Clone, Copy)]
struct Kept {
    tasks: Chain,
    home: usize,
}

impl Kept {
    const fn empty(home: usize) -> Kept {
        Kept {
            tasks: Chain::EMPTY,
            home,
        }
    }
}

thread_local! {
    /// The calling runner's kept tasks: in a thread-local rather than on the runner's
    /// stack, so that a task of the runner that waits can share them first (the task it
    /// waits for may be one of them).
    static KEPT: Cell<Kept> = const {
        Cell::new(Kept::empty(0))
    };
}

thread_local! {
    /// The buffer of a linked batch's dependencies on outside tasks, kept between batches
    /// (a batch made inside another one's iterator finds it empty and allocates).
    static OUTSIDE_LINKS: Cell<Vec<(u32, TaskId, u32)>> = const { Cell::new(Vec::new()) };
}

/// Marks the calling thread as running tasks of a graph until dropped.
struct Running {
    previous: Current,
    previous_kept: Kept,
}

impl Running {
    /// `runner`: the thread runs a runner job (which holds a place in `sched`) for pool
    /// channel `home`, not a helper's call.
    fn enter<'a>(graph: &Graph<'a>, runner: bool, home: usize) -> Running {
        let current = Current {
            graph: ptr::from_ref(graph).cast(),
            runner,
            block: Graph::<'a>::block_task,
        };
        Running {
            previous: CURRENT_GRAPH.with(|cell| cell.replace(current)),
            previous_kept: KEPT.replace(Kept::empty(home)),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        debug_assert_eq!(KEPT.get().tasks.count, 0, "kept tasks left behind");
        KEPT.set(self.previous_kept);
        CURRENT_GRAPH.with(|current| current.set(self.previous));
    }
}

/// Who runs the runners.
pub(crate) enum Executor {
    /// Runner jobs go to this pool.
    Pool(Arc<Registry>),
    /// Runner requests are counted for a loom model's threads to serve.
    #[cfg(all(test, loom))]
    Model(loom::sync::Arc<loom::sync::atomic::AtomicUsize>),
}

/// A thread blocked in [`Graph::wait_all`] or [`Graph::wait`].
struct Waiter {
    unparker: Unparker,
    /// The task waited for, if a task waits (its runner's place lent meanwhile).
    for_task: Option<(usize, u32)>,
}

/// The first panic and the cancelled tasks since the last report.
#[derive(Default)]
struct FailureLog {
    panic: Option<(TaskId, PanicPayload)>,
    other_panics: usize,
    cancelled: usize,
    cancelled_ids: Vec<TaskId>,
}

/// A task graph: its tasks, their dependencies, its channels and its runners. A
/// [`TaskGraph`](super::TaskGraph) owns one and dereferences to it; running tasks reach
/// it through [`Task::graph`]. Every method takes `&self` and may be called from any
/// thread, including from tasks of the graph.
///
/// `'a` is how long the tasks' borrows live: `'static` for a graph that outlives stack
/// frames, or a scope's lifetime inside [`scope`](super::scope).
pub struct Graph<'a> {
    /// This graph's own allocation, for [`Graph::arc`]: a strong reference made from it
    /// keeps the allocation's provenance, so that whichever reference is dropped last may
    /// free it (one made from `&self` may not).
    this: Weak<Graph<'a>>,
    serial: u32,
    slots: Box<[Slot]>,
    /// Per slot: the next index on the stack or chain the slot is on.
    next: Box<[AtomicU32]>,
    free_slots: CachePadded<FreeStack>,
    /// Slots of one-shot tasks that failed, kept out of `free_slots` so that a dependency
    /// added later on such a task still sees it failed: given back when `wait_all` reports
    /// the failures, or taken when no other slot is left.
    failed_slots: FreeStack,
    /// Slots never used yet start here (allocation bumps it).
    fresh_slots: CachePadded<AtomicU32>,
    /// Set by [`compact`](Self::compact): allocation takes slots never used since in
    /// index order before freed ones (see [`Graph::allocate`]).
    in_order: AtomicBool,
    /// Per link: the task it releases. The first `max_links` links are allocated; the
    /// rest, if any, are the tasks' own links (see [`Graph::own_link`]).
    link_target: Box<[AtomicU32]>,
    /// Per link: the next link on the list or stack it is on.
    link_next: Box<[AtomicU32]>,
    /// The links allocation hands out (`max_dependencies`).
    max_links: usize,
    free_links: CachePadded<FreeStack>,
    fresh_links: CachePadded<AtomicU32>,
    /// Pool channels first, then dedicated channels.
    channels: Box<[ReadyQueue]>,
    pool_channels: usize,
    /// `runners * RUNNER | NOTIFIED`.
    sched: CachePadded<AtomicUsize>,
    max_runners: usize,
    /// Freed slots a thread keeps before publishing them.
    free_batch: u32,
    /// Threads running tasks outside runners (`execute_one`, `run_channel`).
    helpers: CachePadded<AtomicUsize>,
    unfinished: CachePadded<AtomicUsize>,
    /// Reusable tasks made (they keep their slots until the graph is dropped).
    reusable_tasks: AtomicUsize,
    /// Registered waiters (a hint that events must wake `waiters`).
    waiting: CachePadded<AtomicUsize>,
    /// Registered waiters for one task ([`Graph::wait`]): every finished task wakes them.
    task_waiters: AtomicUsize,
    waiters: Mutex<Vec<Waiter>>,
    failed: AtomicBool,
    failures: Mutex<FailureLog>,
    cancelling: AtomicBool,
    executor: Executor,
    /// Invariant in `'a`: tasks of exactly this lifetime.
    _tasks: PhantomData<fn(&'a ()) -> &'a ()>,
}

// SAFETY: the closures in the slots are `Send`, and each is touched by one thread at a
// time: its creator until it publishes the task, then the thread that owns its run (or,
// once nothing runs, the thread dropping the graph). Everything else is atomic or locked.
unsafe impl Send for Graph<'_> {}
// SAFETY: as above.
unsafe impl Sync for Graph<'_> {}

/// What a thread running tasks collects before publishing it in one go.
struct Local {
    /// Keep released tasks of pool channels to run next, without a push (a runner; the
    /// tasks kept are in `KEPT`).
    keep: bool,
    released: [(u32, Chain); RELEASE_CHANNELS],
    released_len: usize,
    free_slots: Chain,
    failed_slots: Chain,
    free_links: Chain,
    finished: usize,
    ran: u64,
    /// A runner of a one-runner graph: the last `LOOK_AHEAD` tasks it kept behind others
    /// (`NIL` where none), oldest at `recent_at`.
    recent: [u32; LOOK_AHEAD],
    recent_at: usize,
}

impl Local {
    fn new(keep: bool) -> Local {
        Local {
            keep,
            released: [(0, Chain::EMPTY); RELEASE_CHANNELS],
            released_len: 0,
            free_slots: Chain::EMPTY,
            failed_slots: Chain::EMPTY,
            free_links: Chain::EMPTY,
            finished: 0,
            ran: 0,
            recent: [NIL; LOOK_AHEAD],
            recent_at: 0,
        }
    }
}

/// Configuration of a new graph (checked by the builder).
pub(crate) struct Config {
    pub(crate) max_tasks: usize,
    pub(crate) max_dependencies: usize,
    pub(crate) pool_channels: usize,
    pub(crate) dedicated_channels: usize,
    pub(crate) max_runners: usize,
    pub(crate) executor: Executor,
}

fn atomic_array(len: usize) -> Box<[AtomicU32]> {
    #[cfg(not(loom))]
    {
        super::slot::zeroed_slice(len)
    }
    #[cfg(loom)]
    {
        (0..len).map(|_| AtomicU32::new(0)).collect()
    }
}

fn slot_array(len: usize) -> Box<[Slot]> {
    #[cfg(not(loom))]
    {
        super::slot::zeroed_slice(len)
    }
    #[cfg(loom)]
    {
        (0..len).map(|_| Slot::new()).collect()
    }
}

/// A batch of [`Graph::create_linked_batch_into`] being made: what goes back if it fails
/// (dropped with `kept` unset).
struct LinkedBatch<'g, 'a, 'v> {
    graph: &'g Graph<'a>,
    /// Every slot of the batch (the chain stays intact: filling uses no `next` entry).
    slots: Chain,
    /// Links allocated and not used yet.
    spare_links: Chain,
    /// Dependencies on tasks made before the batch: (position, dependency, link).
    outside: Vec<(u32, TaskId, u32)>,
    /// The batch's ids start at `start`.
    ids: &'v mut Vec<TaskId>,
    start: usize,
    /// The batch succeeded: nothing goes back.
    kept: bool,
}

impl<'g, 'a, 'v> LinkedBatch<'g, 'a, 'v> {
    /// Links the task at `position` (filled, its id pushed) after `before`; returns how
    /// many dependencies it has, with `OWN_LINK_TAKEN` if its own link serves the first.
    fn link(
        &mut self,
        position: u32,
        before: impl IntoIterator<Item = Before>,
    ) -> Result<u64, TaskError> {
        let graph = self.graph;
        let index = self.ids[self.start + position as usize].index;
        let mut own = graph.own_link(index as usize);
        let taken = if own.is_some() { OWN_LINK_TAKEN } else { 0 };
        let mut count = 0u64;
        for b in before {
            match b {
                Before::InBatch(k) => {
                    if k >= position as usize {
                        return Err(TaskError::NotEarlierInBatch);
                    }
                    let link = match own.take() {
                        Some(link) => link,
                        None => self.take_link()?,
                    };
                    let earlier = &graph.slots[self.ids[self.start + k].index as usize];
                    // Nobody else can reach a slot of the batch before it is published.
                    let head = earlier.dependents.load(Ordering::Relaxed);
                    graph.link_target[link as usize].store(index, Ordering::Relaxed);
                    graph.link_next[link as usize]
                        .store((head & LINK_MASK) as u32, Ordering::Relaxed);
                    earlier
                        .dependents
                        .store((head & !LINK_MASK) | link as u64, Ordering::Relaxed);
                }
                Before::Task(id) => {
                    graph.check_dependency(id, 0)?;
                    if graph.succeeded(id) {
                        // Nothing to wait for, and it stays so: no link, no count.
                        continue;
                    }
                    let link = match own.take() {
                        Some(link) => link,
                        None => self.take_link()?,
                    };
                    self.outside.push((position, id, link));
                }
            }
            count += 1;
            if count > COUNT_MASK {
                return Err(TaskError::TooManyDependencies);
            }
        }
        Ok(if count > 0 { count | taken } else { 0 })
    }

    /// One link of the batch's allocation, allocating more (in groups) when none is left.
    fn take_link(&mut self) -> Result<u32, GraphFull> {
        let graph = self.graph;
        if self.spare_links.is_empty() {
            let group = (graph.max_dependencies() / FREE_BATCH_SHARE).clamp(1, FREE_BATCH as usize);
            self.spare_links = match graph.allocate_links(group) {
                Ok(links) => links,
                Err(_) => graph.allocate_links(1)?,
            };
        }
        let link = self.spare_links.first;
        self.spare_links.count -= 1;
        self.spare_links.first = if self.spare_links.is_empty() {
            self.spare_links = Chain::EMPTY;
            NIL
        } else {
            graph.link_next[link as usize].load(Ordering::Relaxed)
        };
        Ok(link)
    }
}

impl Drop for LinkedBatch<'_, '_, '_> {
    /// Undoes a failed batch: its closures are dropped, its slots and links go back (its
    /// tasks were never published).
    fn drop(&mut self) {
        if self.kept {
            return;
        }
        let graph = self.graph;
        let mut links = self.spare_links;
        for &(.., link) in &self.outside {
            if !graph.is_own_link(link) {
                links.push_front(&graph.link_next, link);
            }
        }
        for id in self.ids.drain(self.start..) {
            let slot = &graph.slots[id.index as usize];
            let mut link = slot.dependents.load(Ordering::Relaxed) & LINK_MASK;
            while link != NO_LINK {
                let after = graph.link_next[link as usize].load(Ordering::Relaxed) as u64;
                if !graph.is_own_link(link as u32) {
                    links.push_front(&graph.link_next, link as u32);
                }
                link = after;
            }
            // The old word, without the count the batch kept in it.
            let pending = slot.pending.load(Ordering::Relaxed);
            slot.pending
                .store(pending & !(u32::MAX as u64), Ordering::Relaxed);
            // SAFETY: the task was never published; we still own its slot.
            unsafe { slot.drop_closure() };
        }
        if !links.is_empty() {
            graph.free_links.push(&graph.link_next, links);
        }
        graph.free_slots.push(&graph.next, self.slots);
    }
}

/// What pushing a link onto a task's dependents list found.
enum Linked {
    Yes,
    /// The task finished already (`failed`: it panicked or was cancelled).
    Finished {
        failed: bool,
    },
}

impl<'a> Graph<'a> {
    pub(crate) fn new(config: Config) -> Arc<Graph<'a>> {
        let channels = config.pool_channels + config.dedicated_channels;
        // Every link index must stay below `NO_LINK`.
        let own_links = if config.max_dependencies + config.max_tasks <= NO_LINK as usize {
            config.max_tasks
        } else {
            0
        };
        Arc::new_cyclic(|this| Graph {
            this: Weak::clone(this),
            serial: NEXT_SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            slots: slot_array(config.max_tasks),
            next: atomic_array(config.max_tasks),
            free_slots: CachePadded::new(FreeStack::new()),
            failed_slots: FreeStack::new(),
            fresh_slots: CachePadded::new(AtomicU32::new(0)),
            in_order: AtomicBool::new(false),
            link_target: atomic_array(config.max_dependencies + own_links),
            link_next: atomic_array(config.max_dependencies + own_links),
            max_links: config.max_dependencies,
            free_links: CachePadded::new(FreeStack::new()),
            fresh_links: CachePadded::new(AtomicU32::new(0)),
            channels: (0..channels)
                .map(|_| ReadyQueue::new(atomic_array(ring_cells(config.max_tasks))))
                .collect(),
            pool_channels: config.pool_channels,
            sched: CachePadded::new(AtomicUsize::new(0)),
            max_runners: config.max_runners.max(1),
            free_batch: (config.max_tasks / FREE_BATCH_SHARE).clamp(1, FREE_BATCH as usize) as u32,
            helpers: CachePadded::new(AtomicUsize::new(0)),
            unfinished: CachePadded::new(AtomicUsize::new(0)),
            reusable_tasks: AtomicUsize::new(0),
            waiting: CachePadded::new(AtomicUsize::new(0)),
            task_waiters: AtomicUsize::new(0),
            waiters: Mutex::new(Vec::new()),
            failed: AtomicBool::new(false),
            failures: Mutex::new(FailureLog::default()),
            cancelling: AtomicBool::new(false),
            executor: config.executor,
            _tasks: PhantomData,
        })
    }

    /// Another strong reference to this graph.
    fn arc(&self) -> Arc<Graph<'a>> {
        self.this
            .upgrade()
            .expect("`&self` proves a strong reference is alive")
    }

    // -----------------------------------------------------------------------------------
    // Channels and ids
    // -----------------------------------------------------------------------------------

    /// Pool channel `index` (`0..channels`): its ready tasks run on the pool's workers,
    /// which take from every pool channel (a runner prefers the channel it was started
    /// for). `None` if there is no such channel.
    pub fn channel(&self, index: usize) -> Option<Channel> {
        (index < self.pool_channels).then_some(Channel {
            graph: self.serial,
            index: index as u16,
        })
    }

    /// Dedicated channel `index` (`0..dedicated_channels`): its ready tasks run only on
    /// threads that serve it ([`execute_one`](Self::execute_one),
    /// [`run_channel`](Self::run_channel), [`wait_all_serving`](Self::wait_all_serving)),
    /// for example a main-thread channel. `None` if there is no such channel.
    pub fn dedicated_channel(&self, index: usize) -> Option<Channel> {
        (index < self.channels.len() - self.pool_channels).then(|| Channel {
            graph: self.serial,
            index: (self.pool_channels + index) as u16,
        })
    }

    /// The channel of tasks made by [`create`](Self::create): pool channel 0.
    pub fn default_channel(&self) -> Channel {
        Channel {
            graph: self.serial,
            index: 0,
        }
    }

    /// The number of task slots.
    pub fn max_tasks(&self) -> usize {
        self.slots.len()
    }

    /// The number of dependency links.
    pub fn max_dependencies(&self) -> usize {
        self.max_links
    }

    /// Tasks created and not yet finished (a snapshot; finished tasks are counted in
    /// batches as runners go idle).
    pub fn unfinished(&self) -> usize {
        self.unfinished.load(Ordering::Acquire)
    }

    fn check_channel(&self, channel: Channel) -> Result<usize, TaskError> {
        if channel.graph != self.serial {
            return Err(TaskError::ForeignGraph);
        }
        let index = channel.index as usize;
        if index >= self.channels.len() {
            return Err(TaskError::NoSuchChannel);
        }
        Ok(index)
    }

    fn check_id(&self, id: TaskId) -> Result<usize, TaskError> {
        if id.graph != self.serial {
            return Err(TaskError::ForeignGraph);
        }
        let index = id.index as usize;
        if index >= self.slots.len() {
            return Err(TaskError::OutOfRange);
        }
        Ok(index)
    }

    /// Whether task `id` has finished (its slot moved on, or it is closed).
    fn finished(&self, index: usize, generation: u32) -> bool {
        let dependents = self.slots[index].dependents.load(Ordering::SeqCst);
        generation_of(dependents) != generation || dependents & CLOSED != 0
    }

    /// Whether one-shot task `id` finished without failing (or so long ago that its slot
    /// moved on, which `push_dependent` counts the same). Once true it stays true (only a
    /// re-run reopens a task, a reusable one). Acquire: the caller sees the task's
    /// effects.
    #[inline]
    fn succeeded(&self, id: TaskId) -> bool {
        let dependents = self.slots[id.index as usize]
            .dependents
            .load(Ordering::Acquire);
        generation_of(dependents) != id.generation || dependents & (CLOSED | FAILED) == CLOSED
    }

    fn is_pool_channel(&self, channel: usize) -> bool {
        channel < self.pool_channels
    }

    // -----------------------------------------------------------------------------------
    // Allocation
    // -----------------------------------------------------------------------------------

    /// Takes `n` indices from `free`, then from the never-used range, then from `spare`
    /// (if any); all or nothing.
    ///
    /// `in_order` (after a compaction): never-used indices come before all of these, in
    /// index order, while any are left. A freed index lies wherever its task finished,
    /// last written by the thread that freed it, and the next is found only by reading its
    /// link there; fresh ones lie in order and are counted, not read. Otherwise freed
    /// indices come first, so that memory is touched only as the number in use grows.
    fn allocate(
        free: &FreeStack,
        fresh: &AtomicU32,
        in_order: bool,
        spare: Option<&FreeStack>,
        next: &[AtomicU32],
        n: usize,
        capacity: Capacity,
    ) -> Result<Chain, GraphFull> {
        let full = GraphFull {
            capacity,
            requested: n,
        };
        let Ok(wanted) = u32::try_from(n) else {
            return Err(full);
        };
        let mut chain = Chain::EMPTY;
        if in_order && Self::bump_until(fresh, next, wanted, &mut chain) {
            return Ok(chain);
        }
        Self::pop_until(free, next, wanted, &mut chain);
        if !Self::bump_until(fresh, next, wanted, &mut chain) {
            if let Some(spare) = spare {
                Self::pop_until(spare, next, wanted, &mut chain);
                Self::bump_until(fresh, next, wanted, &mut chain);
            }
        }
        if chain.count < wanted {
            if !chain.is_empty() {
                free.push(next, chain);
            }
            return Err(full);
        }
        Ok(chain)
    }

    /// Adds indices popped from `stack` to `chain` until it holds `wanted` or the stack
    /// is empty.
    fn pop_until(stack: &FreeStack, next: &[AtomicU32], wanted: u32, chain: &mut Chain) {
        while chain.count < wanted {
            let popped = stack.pop(next, wanted - chain.count);
            if popped.is_empty() {
                return;
            }
            if chain.is_empty() {
                *chain = popped;
            } else {
                next[chain.last as usize].store(popped.first, Ordering::Relaxed);
                chain.last = popped.last;
                chain.count += popped.count;
            }
        }
    }

    /// Adds never-used indices to `chain` until it holds `wanted`, all at once or none;
    /// returns whether it holds `wanted`.
    fn bump_until(fresh: &AtomicU32, next: &[AtomicU32], wanted: u32, chain: &mut Chain) -> bool {
        let missing = wanted - chain.count;
        if missing == 0 {
            return true;
        }
        let bumped = fresh.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
            used.checked_add(missing)
                .filter(|&end| end as usize <= next.len())
        });
        let Ok(start) = bumped else {
            return false;
        };
        for index in start..start + missing {
            chain.push_back(next, index);
        }
        true
    }

    fn allocate_slots(&self, n: usize) -> Result<Chain, GraphFull> {
        let chain = Self::allocate(
            &self.free_slots,
            &self.fresh_slots,
            self.in_order.load(Ordering::Relaxed),
            Some(&self.failed_slots),
            &self.next,
            n,
            Capacity::Tasks,
        )?;
        self.prefetch_next_allocation(chain.last);
        Ok(chain)
    }

    /// Asks the CPU to fetch, for writing, the slot (and its link) that the free stack's
    /// top was when `last` was popped, which the calling thread's next allocation likely
    /// gets: the thread that freed it last wrote both, on its own core, and a creator that
    /// makes one task per call would otherwise wait for each line in turn (a hint: the
    /// stack may change meanwhile).
    #[inline(always)]
    fn prefetch_next_allocation(&self, last: u32) {
        if !PREFETCHES {
            return;
        }
        // `last` is the caller's: nobody else writes its link until it is freed again.
        let top = self.next[last as usize].load(Ordering::Relaxed) as usize;
        if let (Some(slot), Some(link)) = (self.slots.get(top), self.next.get(top)) {
            prefetch_line_for_write(slot);
            prefetch_line(link);
        }
    }

    /// Gives back the `count` slots of a batch's chain from `first` on, which the batch
    /// did not use.
    fn free_unused_slots(&self, first: u32, count: u32) {
        if count == 0 {
            return;
        }
        let mut rest = Chain::EMPTY;
        let mut at = first;
        for _ in 0..count {
            let after = self.next[at as usize].load(Ordering::Relaxed);
            rest.push_back(&self.next, at);
            at = after;
        }
        self.free_slots.push(&self.next, rest);
    }

    fn allocate_links(&self, n: usize) -> Result<Chain, GraphFull> {
        Self::allocate(
            &self.free_links,
            &self.fresh_links,
            self.in_order.load(Ordering::Relaxed),
            None,
            &self.link_next[..self.max_links],
            n,
            Capacity::Dependencies,
        )
    }

    /// The link of its own that the task in slot `index` uses for its first dependency
    /// (if the graph's link indices have room for one per slot). It is never allocated
    /// or freed: `OWN_LINK_TAKEN` in the task's `pending` word says whether it is taken,
    /// and a new task in the slot starts with it free. Nobody else can use it, and it
    /// leaves the list it is on before the task finishes (or before a failed batch's
    /// slot goes back), so it is on no list when the slot is reused.
    #[inline]
    fn own_link(&self, index: usize) -> Option<u32> {
        (self.link_target.len() > self.max_links).then(|| (self.max_links + index) as u32)
    }

    /// Whether `link` is a task's own link, which goes back to no free stack.
    #[inline]
    fn is_own_link(&self, link: u32) -> bool {
        link as usize >= self.max_links
    }

    // -----------------------------------------------------------------------------------
    // Creating
    // -----------------------------------------------------------------------------------

    /// Fills slot `index` (just allocated) with a new task and returns its id.
    #[inline]
    fn init_slot(
        &self,
        index: u32,
        channel: usize,
        reusable: bool,
        put: impl FnOnce(&Slot),
    ) -> TaskId {
        let id = self.fill_slot(index, channel, reusable, put);
        self.publish_slot(id);
        id
    }

    /// Fills slot `index` (just allocated) with a new task, not yet visible to
    /// [`cancel`](Self::cancel)'s sweep (see [`publish_slot`](Self::publish_slot)).
    #[inline]
    fn fill_slot(
        &self,
        index: u32,
        channel: usize,
        reusable: bool,
        put: impl FnOnce(&Slot),
    ) -> TaskId {
        let slot = &self.slots[index as usize];
        let generation = match generation_of(slot.pending.load(Ordering::Relaxed)).wrapping_add(1) {
            0 => 1,
            g => g,
        };
        put(slot);
        let reuse = if reusable { REUSABLE } else { 0 };
        slot.meta.store(channel as u32 | reuse, Ordering::Relaxed);
        slot.dependents
            .store(((generation as u64) << 32) | NO_LINK, Ordering::Relaxed);
        TaskId {
            graph: self.serial,
            index,
            generation,
        }
    }

    /// Makes a filled task's `pending` word current: from here on its id works, and a
    /// sweep of [`cancel`](Self::cancel) may ready it.
    #[inline]
    fn publish_slot(&self, id: TaskId) {
        // Release: whoever sees this word (readying, cancelling) sees the closure.
        self.slots[id.index as usize].pending.store(
            ((id.generation as u64) << 32) | NOT_READIED,
            Ordering::Release,
        );
    }

    /// Creates a one-shot task on the [default channel](Self::default_channel). It runs
    /// once it was [readied](Self::ready) and every dependency added to it finished. The
    /// closure gets a [`Task`] with this graph and its own id (to create, connect and
    /// ready more tasks: continuations, subgraphs).
    ///
    /// Closures of up to 32 bytes (8-byte aligned) are stored in the task's slot; a
    /// bigger one is boxed (one allocation).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let count = AtomicUsize::new(0);
    /// sumac::graph::scope(|g| {
    ///     let a = g.create(|_| { count.fetch_add(1, Ordering::Relaxed); }).unwrap();
    ///     g.ready(&[a]).unwrap();
    /// })
    /// .unwrap();
    /// assert_eq!(count.into_inner(), 1);
    /// ```
    ///
    /// # Errors
    /// [`GraphFull`] if no slot is free.
    pub fn create<F>(&self, f: F) -> Result<TaskId, GraphFull>
    where
        F: FnOnce(&Task<'_, 'a>) + Send + 'a,
    {
        let chain = self.allocate_slots(1)?;
        // SAFETY: the slot was just allocated to us and holds no closure; the task will
        // run with contexts of this graph.
        let id = self.init_slot(chain.first, 0, false, |slot| unsafe { slot.put_once(f) });
        self.unfinished.fetch_add(1, Ordering::Relaxed);
        Ok(id)
    }

    /// [`create`](Self::create) on `channel`.
    ///
    /// # Errors
    /// [`TaskError::Full`], or a channel of another graph.
    pub fn create_on<F>(&self, channel: Channel, f: F) -> Result<TaskId, TaskError>
    where
        F: FnOnce(&Task<'_, 'a>) + Send + 'a,
    {
        let channel = self.check_channel(channel)?;
        let chain = self.allocate_slots(1)?;
        // SAFETY: as in `create`.
        let id = self.init_slot(chain.first, channel, false, |slot| unsafe {
            slot.put_once(f)
        });
        self.unfinished.fetch_add(1, Ordering::Relaxed);
        Ok(id)
    }

    /// Creates a reusable task on `channel`: an `Fn` that stays in the graph after it ran,
    /// so that [`rerun`](Self::rerun) runs it again with the same dependencies. Reusable
    /// tasks may depend only on reusable tasks (and one-shot only on one-shot); they are
    /// kept until the graph is dropped.
    ///
    /// # Errors
    /// [`TaskError::Full`], or a channel of another graph.
    pub fn create_reusable_on<F>(&self, channel: Channel, f: F) -> Result<TaskId, TaskError>
    where
        F: Fn(&Task<'_, 'a>) + Send + 'a,
    {
        let channel = self.check_channel(channel)?;
        let chain = self.allocate_slots(1)?;
        // SAFETY: as in `create`.
        let id = self.init_slot(chain.first, channel, true, |slot| unsafe {
            slot.put_reusable(f)
        });
        self.reusable_tasks.fetch_add(1, Ordering::Relaxed);
        self.unfinished.fetch_add(1, Ordering::Relaxed);
        Ok(id)
    }

    /// [`create_reusable_on`](Self::create_reusable_on) the default channel.
    ///
    /// # Errors
    /// [`GraphFull`] if no slot is free.
    pub fn create_reusable<F>(&self, f: F) -> Result<TaskId, GraphFull>
    where
        F: Fn(&Task<'_, 'a>) + Send + 'a,
    {
        match self.create_reusable_on(self.default_channel(), f) {
            Ok(id) => Ok(id),
            Err(TaskError::Full(full)) => Err(full),
            Err(other) => unreachable!("the default channel was refused: {other}"),
        }
    }

    /// Creates one one-shot task per closure of `tasks`, on the default channel, with one
    /// synchronisation for the whole batch; returns their ids in order. A batch fails
    /// whole: with too few free slots, nothing is created.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let count = AtomicUsize::new(0);
    /// sumac::graph::scope(|g| {
    ///     let count = &count;
    ///     let ids = g
    ///         .create_batch((0..16).map(|i| move |_: &sumac::graph::Task<'_, '_>| {
    ///             count.fetch_add(i, Ordering::Relaxed);
    ///         }))
    ///         .unwrap();
    ///     g.ready(&ids).unwrap();
    /// })
    /// .unwrap();
    /// assert_eq!(count.into_inner(), 120);
    /// ```
    ///
    /// # Errors
    /// [`GraphFull`] if fewer slots than closures are free.
    pub fn create_batch<I, F>(&self, tasks: I) -> Result<Vec<TaskId>, GraphFull>
    where
        I: IntoIterator<Item = F>,
        I::IntoIter: ExactSizeIterator,
        F: FnOnce(&Task<'_, 'a>) + Send + 'a,
    {
        let tasks = tasks.into_iter();
        let mut ids = Vec::with_capacity(tasks.len());
        match self.create_batch_into(self.default_channel(), tasks, &mut ids) {
            Ok(()) => Ok(ids),
            Err(TaskError::Full(full)) => Err(full),
            Err(other) => unreachable!("the default channel was refused: {other}"),
        }
    }

    /// [`create_batch`](Self::create_batch) on `channel`, appending the ids to `ids` (a
    /// buffer that can be reused, so that a steady stream of batches allocates nothing).
    /// On error nothing is created and `ids` is unchanged. If the iterator yields fewer
    /// closures than its length said, the unused slots go back; extra ones are ignored.
    ///
    /// # Errors
    /// [`TaskError::Full`], or a channel of another graph.
    pub fn create_batch_into<I, F>(
        &self,
        channel: Channel,
        tasks: I,
        ids: &mut Vec<TaskId>,
    ) -> Result<(), TaskError>
    where
        I: IntoIterator<Item = F>,
        I::IntoIter: ExactSizeIterator,
        F: FnOnce(&Task<'_, 'a>) + Send + 'a,
    {
        let channel = self.check_channel(channel)?;
        let mut tasks = tasks.into_iter();
        let n = tasks.len();
        if n == 0 {
            return Ok(());
        }
        let chain = self.allocate_slots(n)?;
        ids.reserve(n);
        let start = ids.len();
        // The tasks are published only once all are made. If the iterator panics, the
        // tasks made so far (never published, so no other thread saw them) are dropped and
        // every slot of the batch goes back: the batch is all or nothing.
        struct Unwind<'g, 'a, 'v> {
            graph: &'g Graph<'a>,
            chain: Chain,
            ids: &'v mut Vec<TaskId>,
            start: usize,
        }
        impl Drop for Unwind<'_, '_, '_> {
            fn drop(&mut self) {
                for id in self.ids.drain(self.start..) {
                    // SAFETY: the task was never published; we still own its slot.
                    unsafe { self.graph.slots[id.index as usize].drop_closure() };
                }
                self.graph.free_slots.push(&self.graph.next, self.chain);
            }
        }
        let guard = Unwind {
            graph: self,
            chain,
            ids,
            start,
        };
        let mut index = chain.first;
        let mut made = 0u32;
        while made < chain.count {
            let Some(f) = tasks.next() else { break };
            let after = self.next[index as usize].load(Ordering::Relaxed);
            // SAFETY: as in `create`.
            let id = self.fill_slot(index, channel, false, |slot| unsafe { slot.put_once(f) });
            guard.ids.push(id);
            made += 1;
            index = after;
        }
        let guard = std::mem::ManuallyDrop::new(guard);
        for &id in &guard.ids[start..] {
            self.publish_slot(id);
        }
        // The iterator may have run dry early: the slots not used go back.
        self.free_unused_slots(index, chain.count - made);
        let _ = guard;
        self.unfinished.fetch_add(made as usize, Ordering::Relaxed);
        Ok(())
    }

    /// [`create_linked_batch_into`](Self::create_linked_batch_into) on the default
    /// channel, returning the ids.
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use sumac::graph::Before;
    /// let order = Mutex::new(Vec::new());
    /// sumac::graph::scope(|g| {
    ///     let order = &order;
    ///     let step = |name: char| move |_: &sumac::graph::Task<'_, '_>| {
    ///         order.lock().unwrap().push(name)
    ///     };
    ///     let tasks = [
    ///         (step('a'), vec![]),
    ///         (step('b'), vec![Before::InBatch(0)]),
    ///         (step('c'), vec![Before::InBatch(1), Before::InBatch(0)]),
    ///     ];
    ///     g.create_linked_batch(tasks, true).unwrap();
    /// })
    /// .unwrap();
    /// assert_eq!(order.into_inner().unwrap(), ['a', 'b', 'c']);
    /// ```
    ///
    /// # Errors
    /// As [`create_linked_batch_into`](Self::create_linked_batch_into).
    pub fn create_linked_batch<I, F, B>(
        &self,
        tasks: I,
        ready: bool,
    ) -> Result<Vec<TaskId>, TaskError>
    where
        I: IntoIterator<Item = (F, B)>,
        I::IntoIter: ExactSizeIterator,
        F: FnOnce(&Task<'_, 'a>) + Send + 'a,
        B: IntoIterator<Item = Before>,
    {
        let tasks = tasks.into_iter();
        let mut ids = Vec::with_capacity(tasks.len());
        self.create_linked_batch_into(self.default_channel(), tasks, ready, &mut ids)?;
        Ok(ids)
    }

    /// Creates a batch of one-shot tasks on `channel` together with their dependencies,
    /// appending their ids to `ids`; with `ready`, readies them too. Each item is a
    /// closure and the tasks it runs after: [`Before::InBatch`]`(k)`, the `k`-th task of
    /// this batch (an earlier one), or [`Before::Task`], a task made before the batch
    /// (one that finished already counts as done, as in
    /// [`add_dependencies`](Self::add_dependencies)).
    ///
    /// This does what [`create_batch_into`](Self::create_batch_into),
    /// [`add_dependencies`](Self::add_dependencies) and [`ready`](Self::ready) do, for
    /// less: the links among the batch's tasks are written before any other thread can see
    /// them, so they cost no synchronisation; only dependencies on tasks made before the
    /// batch are pushed one by one. Without `ready` the tasks wait for [`ready`](Self::ready) and
    /// may take more dependencies first.
    ///
    /// # Errors
    /// Nothing is created and `ids` is unchanged on any error (as in
    /// [`create_batch_into`](Self::create_batch_into)): [`TaskError::Full`] (slots or
    /// links), a channel or id of another graph or out of range,
    /// [`TaskError::NotEarlierInBatch`], [`TaskError::ReuseMismatch`] (a reusable task
    /// named by [`Before::Task`]) or [`TaskError::TooManyDependencies`]. If the iterator
    /// yields fewer items than its length said, the unused slots go back.
    pub fn create_linked_batch_into<I, F, B>(
        &self,
        channel: Channel,
        tasks: I,
        ready: bool,
        ids: &mut Vec<TaskId>,
    ) -> Result<(), TaskError>
    where
        I: IntoIterator<Item = (F, B)>,
        I::IntoIter: ExactSizeIterator,
        F: FnOnce(&Task<'_, 'a>) + Send + 'a,
        B: IntoIterator<Item = Before>,
    {
        let channel = self.check_channel(channel)?;
        let mut tasks = tasks.into_iter();
        let n = tasks.len();
        if n == 0 {
            return Ok(());
        }
        let slots = self.allocate_slots(n)?;
        ids.reserve(n);
        let start = ids.len();
        let mut batch = LinkedBatch {
            graph: self,
            slots,
            spare_links: Chain::EMPTY,
            outside: OUTSIDE_LINKS.take(),
            ids,
            start,
            kept: false,
        };
        let mut index = slots.first;
        let mut made = 0u32;
        while made < slots.count {
            let Some((f, before)) = tasks.next() else {
                break;
            };
            let after = self.next[index as usize].load(Ordering::Relaxed);
            // SAFETY: as in `create`.
            let id = self.fill_slot(index, channel, false, |slot| unsafe { slot.put_once(f) });
            batch.ids.push(id);
            let count = batch.link(made, before)?;
            // Until the batch is published the count (and `OWN_LINK_TAKEN`) waits in the
            // low bits of the slot's old `pending` word: its generation is the old one and
            // `NOT_READIED` is clear, so to every other thread the slot still holds a
            // finished task.
            let pending = &self.slots[index as usize].pending;
            let old = pending.load(Ordering::Relaxed) & !(u32::MAX as u64);
            pending.store(old | count, Ordering::Relaxed);
            made += 1;
            index = after;
        }
        batch.kept = true;
        let (spare_links, outside, ids) = (batch.spare_links, &batch.outside, &batch.ids[..]);
        self.free_unused_slots(index, slots.count - made);
        if !spare_links.is_empty() {
            self.free_links.push(&self.link_next, spare_links);
        }
        // Counted before any of them can run (and finish).
        self.unfinished.fetch_add(made as usize, Ordering::Relaxed);
        let mut local = Local::new(false);
        let flags = if ready { 0 } else { NOT_READIED };
        for &id in &ids[start..] {
            let slot = &self.slots[id.index as usize];
            let low = slot.pending.load(Ordering::Relaxed) & (COUNT_MASK | OWN_LINK_TAKEN);
            let count = low & COUNT_MASK;
            // Release: whoever sees this word sees the closure and the links. Nothing of
            // the batch runs before `publish` below, so every word is set before any
            // task of the batch can release another; a task's count covers its links to
            // outside tasks, pushed below, so none runs before they are pushed or undone.
            slot.pending.store(
                ((id.generation as u64) << 32) | flags | low,
                Ordering::Release,
            );
            if ready && count == 0 {
                self.schedule(id.index, &mut local);
            }
        }
        for &(position, before, link) in outside {
            let index = ids[start + position as usize].index;
            self.link_target[link as usize].store(index, Ordering::Relaxed);
            if let Linked::Finished { failed } = self.push_dependent(before, link) {
                if !self.is_own_link(link) {
                    local.free_links.push_front(&self.link_next, link);
                }
                self.release(index as usize, 1, failed, &mut local);
            }
        }
        self.publish(&mut local);
        let mut outside = std::mem::take(&mut batch.outside);
        outside.clear();
        OUTSIDE_LINKS.set(outside);
        Ok(())
    }

    // -----------------------------------------------------------------------------------
    // Dependencies
    // -----------------------------------------------------------------------------------

    /// Makes `task` run only after every task of `before` finished. Batched: the links
    /// are allocated and `task` counted with one synchronisation each, plus one push per
    /// link. A task of `before` that finished already counts as done (if it panicked or
    /// was cancelled, `task` will be cancelled: a failed task keeps its slot until
    /// [`wait_all`](Self::wait_all) reports it, unless the graph runs out of other
    /// slots), so a running task may make a continuation of itself:
    /// `g.add_dependencies(next, &[me.id()])`.
    ///
    /// ```
    /// use std::sync::Mutex;
    /// let order = Mutex::new(Vec::new());
    /// sumac::graph::scope(|g| {
    ///     let order = &order;
    ///     let a = g.create(move |_| order.lock().unwrap().push('a')).unwrap();
    ///     let b = g.create(move |_| order.lock().unwrap().push('b')).unwrap();
    ///     g.add_dependencies(a, &[b]).unwrap(); // a after b
    ///     g.ready(&[a, b]).unwrap();
    /// })
    /// .unwrap();
    /// assert_eq!(order.into_inner().unwrap(), ['b', 'a']);
    /// ```
    ///
    /// # Errors
    /// A [`TaskError`] and nothing changed: an id of another graph or out of range,
    /// `task` finished or readied already, `task` among `before`, reusable and one-shot
    /// tasks mixed, or too few free links.
    pub fn add_dependencies(&self, task: TaskId, before: &[TaskId]) -> Result<(), TaskError> {
        let index = self.check_id(task)?;
        let slot = &self.slots[index];
        let reusable = slot.meta.load(Ordering::Relaxed) & REUSABLE;
        for &b in before {
            if b == task {
                return Err(TaskError::SelfDependency);
            }
            self.check_dependency(b, reusable)?;
        }
        if before.is_empty() {
            return self.check_open(task).map(|_| ());
        }
        let k = before.len() as u64;
        let mut pending = slot.pending.load(Ordering::Relaxed);
        // The task's own link serves its first dependency while it is free.
        let mut own = self
            .own_link(index)
            .filter(|_| pending & OWN_LINK_TAKEN == 0);
        let mut links = match before.len() - usize::from(own.is_some()) {
            0 => Chain::EMPTY,
            n => self.allocate_links(n)?,
        };
        loop {
            let refusal = if generation_of(pending) != task.generation {
                Some(TaskError::Finished)
            } else if pending & NOT_READIED == 0 {
                Some(self.readied_or_finished(index, task.generation))
            } else if (pending & COUNT_MASK) + k > COUNT_MASK {
                Some(TaskError::TooManyDependencies)
            } else if reusable != 0 && generation_of(pending) != task.generation {
                Some(TaskError::Finished)
            } else {
                None
            };
            if let Some(error) = refusal {
                if !links.is_empty() {
                    self.free_links.push(&self.link_next, links);
                }
                return Err(error);
            }
            if own.is_some() && pending & OWN_LINK_TAKEN != 0 {
                // Another call took the own link meanwhile: allocate one more instead.
                match self.allocate_links(1) {
                    Ok(one) => links.push_back(&self.link_next, one.first),
                    Err(full) => {
                        if !links.is_empty() {
                            self.free_links.push(&self.link_next, links);
                        }
                        return Err(full.into());
                    }
                }
                own = None;
                continue;
            }
            let taken = if own.is_some() { OWN_LINK_TAKEN } else { 0 };
            match slot.pending.compare_exchange_weak(
                pending,
                (pending + k) | taken,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(actual) => pending = actual,
            }
        }
        let mut unused = Chain::EMPTY;
        let mut undo = 0u64;
        let mut poison = false;
        let mut pooled = links.first;
        for &b in before {
            let link = own.take().unwrap_or_else(|| {
                let link = pooled;
                pooled = self.link_next[link as usize].load(Ordering::Relaxed);
                link
            });
            self.link_target[link as usize].store(task.index, Ordering::Relaxed);
            match self.push_dependent(b, link) {
                Linked::Yes => {}
                Linked::Finished { failed } => {
                    undo += 1;
                    poison |= failed;
                    if !self.is_own_link(link) {
                        unused.push_back(&self.link_next, link);
                    }
                }
            }
        }
        if !unused.is_empty() {
            self.free_links.push(&self.link_next, unused);
        }
        if undo > 0 {
            let mut local = Local::new(false);
            self.release(index, undo, poison, &mut local);
            self.publish(&mut local);
        }
        Ok(())
    }

    /// Checks that `before` may be a dependency of a task whose `meta` has `reusable`
    /// (`REUSABLE` or 0): an id of this graph, and (unless it finished) of a task as
    /// reusable as that one.
    fn check_dependency(&self, before: TaskId, reusable: u32) -> Result<(), TaskError> {
        let slot = &self.slots[self.check_id(before)?];
        if generation_of(slot.pending.load(Ordering::Acquire)) == before.generation
            && slot.meta.load(Ordering::Relaxed) & REUSABLE != reusable
        {
            return Err(TaskError::ReuseMismatch);
        }
        Ok(())
    }

    /// Checks that `task` may still take dependencies (for an empty `before`).
    fn check_open(&self, task: TaskId) -> Result<usize, TaskError> {
        let index = self.check_id(task)?;
        let pending = self.slots[index].pending.load(Ordering::Acquire);
        if generation_of(pending) != task.generation {
            Err(TaskError::Finished)
        } else if pending & NOT_READIED == 0 {
            Err(self.readied_or_finished(index, task.generation))
        } else {
            Ok(index)
        }
    }

    fn readied_or_finished(&self, index: usize, generation: u32) -> TaskError {
        if self.finished(index, generation) {
            TaskError::Finished
        } else {
            TaskError::AlreadyReadied
        }
    }

    /// Pushes `link` onto the dependents of `before`, unless it finished already.
    fn push_dependent(&self, before: TaskId, link: u32) -> Linked {
        let slot = &self.slots[before.index as usize];
        let mut dependents = slot.dependents.load(Ordering::Acquire);
        loop {
            if generation_of(dependents) != before.generation {
                // The slot was reused: `before` finished long ago.
                return Linked::Finished { failed: false };
            }
            if dependents & CLOSED != 0 {
                return Linked::Finished {
                    failed: dependents & FAILED != 0,
                };
            }
            self.link_next[link as usize].store((dependents & LINK_MASK) as u32, Ordering::Relaxed);
            let linked = (dependents & !LINK_MASK) | link as u64;
            match slot.dependents.compare_exchange_weak(
                dependents,
                linked,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Linked::Yes,
                Err(actual) => dependents = actual,
            }
        }
    }

    // -----------------------------------------------------------------------------------
    // Readying and scheduling
    // -----------------------------------------------------------------------------------

    /// Readies the tasks of `ids`: each runs once all its dependencies finished. Batched:
    /// the tasks that can run at once are pushed with one synchronisation per channel.
    ///
    /// # Errors
    /// If an id is of another graph or out of range, nothing is readied. Otherwise the
    /// valid ones are readied, and the first refusal among the others (a task readied or
    /// finished already) is returned.
    pub fn ready(&self, ids: &[TaskId]) -> Result<(), TaskError> {
        for &id in ids {
            self.check_id(id)?;
        }
        let mut local = Local::new(false);
        let mut refusal = None;
        for &id in ids {
            if let Err(error) = self.ready_one(id, &mut local) {
                refusal.get_or_insert(error);
            }
        }
        self.publish(&mut local);
        refusal.map_or(Ok(()), Err)
    }

    fn ready_one(&self, id: TaskId, local: &mut Local) -> Result<(), TaskError> {
        let index = id.index as usize;
        let slot = &self.slots[index];
        let mut pending = slot.pending.load(Ordering::Relaxed);
        loop {
            if generation_of(pending) != id.generation {
                return Err(TaskError::Finished);
            }
            if pending & NOT_READIED == 0 {
                return Err(self.readied_or_finished(index, id.generation));
            }
            let readied = pending & !NOT_READIED;
            match slot.pending.compare_exchange_weak(
                pending,
                readied,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    if readied & COUNT_MASK == 0 {
                        self.schedule(index as u32, local);
                    }
                    return Ok(());
                }
                Err(actual) => pending = actual,
            }
        }
    }

    /// Counts `n` finished dependencies of task `index` (poisoning it first if one
    /// failed); schedules it if that was the last thing it waited for.
    #[inline]
    fn release(&self, index: usize, n: u64, poison: bool, local: &mut Local) {
        let pending = &self.slots[index].pending;
        let mut current = pending.load(Ordering::Acquire);
        if current & (COUNT_MASK | NOT_READIED) == n {
            // The last dependencies of a readied task: no other thread may change the word
            // (see the module documentation), so a plain store does.
            let released = if poison { current | POISONED } else { current };
            pending.store(released - n, Ordering::Relaxed);
            self.schedule(index as u32, local);
            return;
        }
        let before = if poison {
            loop {
                match pending.compare_exchange_weak(
                    current,
                    (current | POISONED) - n,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                ) {
                    Ok(previous) => break previous,
                    Err(actual) => current = actual,
                }
            }
        } else {
            pending.fetch_sub(n, Ordering::AcqRel)
        };
        if before & (COUNT_MASK | NOT_READIED) == n {
            self.schedule(index as u32, local);
        }
    }

    /// Task `index` may run now (the caller made its pending count zero): keep it to run
    /// next, or collect it for its channel.
    #[inline]
    fn schedule(&self, index: u32, local: &mut Local) {
        let channel = self.slots[index as usize].meta.load(Ordering::Relaxed) & CHANNEL_MASK;
        if local.keep && self.is_pool_channel(channel as usize) {
            let mut kept = KEPT.get();
            if self.max_runners > 1 {
                kept.tasks.push_front(&self.next, index);
                if kept.tasks.count >= KEEP_MAX {
                    kept = self.share_kept(kept, 1);
                }
            } else {
                // Kept all, in release order (a task of the graph that waits shares them
                // first, see `wait`); one that runs next leaves no time for a prefetch.
                let behind_others = !kept.tasks.is_empty();
                kept.tasks.push_back(&self.next, index);
                if PREFETCHES && behind_others {
                    self.prefetch_first_link(&self.slots[index as usize]);
                    // The task kept `LOOK_AHEAD` tasks ago: its first link was fetched
                    // then; fetch its dependents' slots now, before it runs.
                    let older = std::mem::replace(&mut local.recent[local.recent_at], index);
                    local.recent_at = (local.recent_at + 1) % LOOK_AHEAD;
                    if let Some(slot) = self.slots.get(older as usize) {
                        self.prefetch_dependents(slot);
                    }
                }
            }
            KEPT.set(kept);
            return;
        }
        let found = local.released[..local.released_len]
            .iter()
            .position(|(c, _)| *c == channel);
        let at = match found {
            Some(at) => at,
            None => {
                if local.released_len == RELEASE_CHANNELS {
                    self.publish_released(local);
                }
                let at = local.released_len;
                local.released[at] = (channel, Chain::EMPTY);
                local.released_len += 1;
                at
            }
        };
        local.released[at].1.push_front(&self.next, index);
    }

    /// Keeps the newest `keep` kept tasks (0 or 1) and pushes the others to the runner's
    /// home channel, where other runners can take them.
    #[cold]
    fn share_kept(&self, kept: Kept, keep: u32) -> Kept {
        debug_assert!(keep <= 1 && kept.tasks.count > keep);
        let mut left = Kept::empty(kept.home);
        let mut shared = kept.tasks;
        if keep == 1 {
            let newest = kept.tasks.first;
            shared.first = self.next[newest as usize].load(Ordering::Relaxed);
            shared.count -= 1;
            left.tasks.push_front(&self.next, newest);
        }
        self.channels[kept.home].push(&self.next, shared);
        self.wake_runners(kept.home, true);
        left
    }

    /// Pushes the collected ready tasks to their channels and wakes who runs them.
    fn publish_released(&self, local: &mut Local) {
        for at in 0..local.released_len {
            let (channel, chain) = local.released[at];
            let queue = &self.channels[channel as usize];
            let start = queue.push(&self.next, chain);
            if self.is_pool_channel(channel as usize) {
                // Whether others' tasks wait too matters only to a graph of several runners.
                let backlog = self.max_runners > 1 && queue.held_before(start);
                self.wake_runners(channel as usize, backlog);
            } else {
                self.wake_waiters_if_any();
            }
        }
        local.released_len = 0;
    }

    /// Publishes everything `local` collected: ready tasks, freed slots and links, and
    /// finished tasks.
    fn publish(&self, local: &mut Local) {
        self.publish_released(local);
        if !local.free_slots.is_empty() {
            self.free_slots.push(&self.next, local.free_slots);
            local.free_slots = Chain::EMPTY;
        }
        if !local.failed_slots.is_empty() {
            self.failed_slots.push(&self.next, local.failed_slots);
            local.failed_slots = Chain::EMPTY;
        }
        if !local.free_links.is_empty() {
            self.free_links.push(&self.link_next, local.free_links);
            local.free_links = Chain::EMPTY;
        }
        if local.finished > 0 {
            let finished = std::mem::take(&mut local.finished);
            if self.unfinished.fetch_sub(finished, Ordering::SeqCst) == finished {
                self.wake_waiters_if_any();
            }
        }
    }

    /// Ready tasks were pushed to pool channel `home` (onto others, if `backlog`): start
    /// a runner if fewer than wanted run, else notify the running ones (see the module
    /// documentation).
    fn wake_runners(&self, home: usize, backlog: bool) {
        let wanted = if backlog { self.max_runners } else { 1 };
        let mut sched = self.sched.load(Ordering::Relaxed);
        loop {
            if sched / RUNNER < wanted {
                match self.sched.compare_exchange_weak(
                    sched,
                    sched + RUNNER,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        self.spawn_runner(home);
                        return;
                    }
                    Err(actual) => sched = actual,
                }
            } else {
                match self.sched.compare_exchange_weak(
                    sched,
                    sched | NOTIFIED,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return,
                    Err(actual) => sched = actual,
                }
            }
        }
    }

    fn spawn_runner(&self, home: usize) {
        let graph = self.arc();
        match &self.executor {
            Executor::Pool(registry) => {
                // Counted in the pool's live count, so that its workers outlive the runner
                // (a pool dropped meanwhile still runs it). A pool whose count reached zero
                // is gone or going: the calling thread runs the tasks itself.
                if !registry.spawn_started(None) {
                    graph.run_runner(home);
                    return;
                }
                let pool = Arc::clone(registry);
                let job = crate::job::HeapJob::into_job_ref(move || {
                    crate::worker::settle_current_scope_debt();
                    graph.run_runner(home);
                    drop(graph);
                    pool.release_live_unit();
                });
                registry.push_spawned(job, false);
            }
            #[cfg(all(test, loom))]
            Executor::Model(requests) => {
                drop(graph);
                requests.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    // -----------------------------------------------------------------------------------
    // Running
    // -----------------------------------------------------------------------------------

    /// The body of a runner job: runs ready tasks of the pool channels (`home` first)
    /// until none are left, then leaves (see the module documentation).
    pub(crate) fn run_runner(&self, home: usize) {
        let runners_left = self.running_pool_tasks(true, home, |local| loop {
            self.drain(home, local);
            if let Some(left) = self.try_leave() {
                break left;
            }
        });
        if runners_left == 0 {
            self.wake_waiters_if_any();
        }
    }

    /// Runs `body` as the calling thread's run of the pool channels' tasks (a runner's,
    /// if `runner`, else a helper's), keeping what they release: enters the graph, and
    /// records the run in the pool's trace and its tasks in the stats.
    fn running_pool_tasks<R>(
        &self,
        runner: bool,
        home: usize,
        body: impl FnOnce(&mut Local) -> R,
    ) -> R {
        let _running = Running::enter(self, runner, home);
        #[cfg(feature = "trace")]
        self.with_pool_member(|member| trace_on(member, crate::trace::EventKind::GraphTasksStart));
        let mut local = Local::new(true);
        let result = body(&mut local);
        self.with_pool_member(|member| {
            count_tasks_on(member, local.ran);
            #[cfg(feature = "trace")]
            trace_on(member, crate::trace::EventKind::GraphTasksEnd);
        });
        result
    }

    /// Calls `f` with the calling thread's worker (or guest seat) if it is a member of the
    /// graph's pool: tasks run elsewhere are in no pool's stats or trace.
    fn with_pool_member<R>(&self, f: impl FnOnce(&crate::worker::WorkerThread) -> R) -> Option<R> {
        match &self.executor {
            Executor::Pool(registry) => {
                // SAFETY: a non-null thread-local pointer refers to this thread's live
                // worker (or guest seat).
                let member = unsafe { crate::worker::WorkerThread::current().as_ref() }?;
                Arc::ptr_eq(member.registry(), registry).then(|| f(member))
            }
            #[cfg(all(test, loom))]
            Executor::Model(_) => None,
        }
    }

    /// Runs tasks of the pool channels until all look empty for a short while.
    fn drain(&self, home: usize, local: &mut Local) {
        let mut batch = [NIL; RUNNER_BATCH];
        loop {
            let taken = self.take_batch(home, &mut batch);
            if taken > 0 {
                self.run_batch(&batch[..taken], local);
                continue;
            }
            // Freed slots go back in groups (a producer allocating them one at a time
            // would otherwise pull the free stack's line to its core and back per task),
            // but soon enough that producers reuse slots still in cache.
            if local.free_slots.count >= IDLE_FREE_BATCH.min(self.free_batch) {
                self.publish(local);
            }
            if !self.linger() {
                self.publish(local);
                return;
            }
        }
    }

    /// Runs the tasks of `batch` (taken from a channel), each followed by what it released
    /// for this thread to run next; returns how many tasks ran or were cancelled.
    fn run_batch(&self, batch: &[u32], local: &mut Local) -> usize {
        // The slots were written on the producers' cores: fetch them ahead.
        for &index in batch.iter().take(PREFETCH_AHEAD) {
            self.prefetch(index);
        }
        let mut count = batch.len();
        for (at, &index) in batch.iter().enumerate() {
            if let Some(&ahead) = batch.get(at + PREFETCH_AHEAD) {
                self.prefetch(ahead);
            }
            self.execute(index, local, true);
            count += self.run_kept(local);
        }
        count
    }

    /// Asks the CPU to load slot `index` into its cache (a hint; nothing for an index out
    /// of range).
    #[inline(always)]
    fn prefetch(&self, index: u32) {
        if let Some(slot) = self.slots.get(index as usize) {
            prefetch_line(slot);
        }
    }

    /// Asks the CPU to load the slots of the first [`PREFETCH_DEPENDENTS`] dependents of
    /// the task in `slot` (a hint: the list may change meanwhile), whose counts its end
    /// decrements.
    #[inline(always)]
    fn prefetch_dependents(&self, slot: &Slot) {
        if !PREFETCHES {
            return;
        }
        let mut link = slot.dependents.load(Ordering::Relaxed) & LINK_MASK;
        let mut ahead = 0;
        while link != NO_LINK && ahead < PREFETCH_DEPENDENTS {
            let Some(target) = self.link_target.get(link as usize) else {
                return;
            };
            self.prefetch(target.load(Ordering::Relaxed));
            link = self.link_next[link as usize].load(Ordering::Relaxed) as u64;
            ahead += 1;
        }
    }

    /// Asks the CPU to load the first link of the dependents list of the task in `slot` (a
    /// hint: the list may change meanwhile), which [`prefetch_dependents`] reads when the
    /// task starts.
    ///
    /// [`prefetch_dependents`]: Self::prefetch_dependents
    #[inline(always)]
    fn prefetch_first_link(&self, slot: &Slot) {
        if !PREFETCHES {
            return;
        }
        let link = (slot.dependents.load(Ordering::Relaxed) & LINK_MASK) as usize;
        if let (Some(target), Some(next)) = (self.link_target.get(link), self.link_next.get(link)) {
            prefetch_line(target);
            prefetch_line(next);
        }
    }

    /// Runs the tasks released for this thread to run next; returns how many.
    #[inline]
    fn run_kept(&self, local: &mut Local) -> usize {
        let mut count = 0;
        loop {
            let mut kept = KEPT.get();
            if kept.tasks.count == 0 {
                break;
            }
            let index = kept.tasks.first;
            kept.tasks.first = self.next[index as usize].load(Ordering::Relaxed);
            kept.tasks.count -= 1;
            if kept.tasks.count == 0 {
                kept.tasks = Chain::EMPTY;
            }
            // Kept in release order: with `LOOK_AHEAD` tasks behind it, the last of those
            // to be kept prefetched its dependents' slots (a task kept onto an empty list
            // was not in `recent`: it misses the hint).
            let looked_ahead =
                PREFETCHES && self.max_runners == 1 && kept.tasks.count as usize >= LOOK_AHEAD;
            KEPT.set(kept);
            self.publish_released(local);
            self.execute(index, local, !looked_ahead);
            count += 1;
        }
        if local.released_len > 0 {
            self.publish_released(local);
        }
        if local.free_slots.count >= self.free_batch || local.free_links.count >= FREE_BATCH {
            self.publish(local);
        }
        count
    }

    /// Watches the pool channels for a while; returns whether one got a task.
    fn linger(&self) -> bool {
        let busy = || {
            self.channels[..self.pool_channels]
                .iter()
                .any(|channel| !channel.looks_empty())
        };
        // A loom runner looks once (spinning there only multiplies the states), and so does
        // one under Miri (whose clock advances with the instructions it interprets).
        #[cfg(any(loom, miri))]
        return busy();
        #[cfg(not(any(loom, miri)))]
        {
            let (look_every, linger) = linger_ticks();
            let start = crate::clock::ticks();
            loop {
                let look_at = crate::clock::ticks().wrapping_add(look_every);
                while crate::clock::ticks() < look_at {
                    std::hint::spin_loop();
                }
                if busy() {
                    return true;
                }
                if crate::clock::ticks().wrapping_sub(start) >= linger {
                    return false;
                }
            }
        }
    }

    /// Leaves the runner count unless a push notified us: `None` to look again, else the
    /// number of runners left.
    fn try_leave(&self) -> Option<usize> {
        let mut sched = self.sched.load(Ordering::Acquire);
        loop {
            let (new, leaving) = if sched & NOTIFIED != 0 {
                (sched & !NOTIFIED, false)
            } else {
                (sched - RUNNER, true)
            };
            match self
                .sched
                .compare_exchange_weak(sched, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return leaving.then_some(new / RUNNER),
                Err(actual) => sched = actual,
            }
        }
    }

    /// Takes up to `RUNNER_BATCH` ready tasks from the pool channels, `home` first;
    /// returns how many it put into `batch`.
    fn take_batch(&self, home: usize, batch: &mut [u32; RUNNER_BATCH]) -> usize {
        let pool = self.pool_channels;
        for step in 0..pool {
            let channel = (home + step) % pool;
            let taken = self.take_from(channel, batch);
            if taken > 0 {
                return taken;
            }
        }
        0
    }

    /// Takes up to `batch.len()` of the oldest ready tasks of `channel`.
    fn take_from(&self, channel: usize, batch: &mut [u32]) -> usize {
        let (taken, more) = self.channels[channel].take(&self.next, batch);
        if more {
            if self.is_pool_channel(channel) {
                self.wake_runners(channel, true);
            } else {
                self.wake_waiters_if_any();
            }
        }
        taken
    }

    /// Runs (or, if poisoned or cancelled, drops) task `index`, which this thread owns,
    /// and finishes it; prefetches its dependents' slots as it starts if
    /// `prefetch_dependents` (not when a look-ahead did).
    #[inline]
    fn execute(&self, index: u32, local: &mut Local, prefetch_dependents: bool) {
        let slot = &self.slots[index as usize];
        let pending = slot.pending.load(Ordering::Relaxed);
        let reusable = slot.meta.load(Ordering::Relaxed) & REUSABLE != 0;
        let id = TaskId {
            graph: self.serial,
            index,
            generation: generation_of(pending),
        };
        let failed = if pending & POISONED != 0 || self.cancelling.load(Ordering::Relaxed) {
            if !reusable {
                // SAFETY: this thread owns the task's run, hence its closure.
                let dropped =
                    panic::catch_unwind(AssertUnwindSafe(|| unsafe { slot.drop_closure() }));
                if let Err(payload) = dropped {
                    self.note_panic(id, payload);
                }
            }
            self.note_cancelled(id);
            true
        } else {
            let task = Task {
                graph: self,
                id: TaskId {
                    graph: self.serial,
                    index,
                    generation: generation_of(pending),
                },
            };
            if prefetch_dependents {
                self.prefetch_dependents(slot);
            }
            // SAFETY: this thread owns the task's run; the slot holds its closure, stored
            // for this graph.
            let ran =
                panic::catch_unwind(AssertUnwindSafe(|| unsafe { slot.run(reusable, &task) }));
            local.ran += 1;
            match ran {
                Ok(()) => false,
                Err(payload) => {
                    self.note_panic(id, payload);
                    true
                }
            }
        };
        self.finish(index, reusable, failed, local);
    }

    /// Closes finished task `index` and releases its dependents (see the module
    /// documentation); a one-shot task's slot and links are freed.
    #[inline]
    fn finish(&self, index: u32, reusable: bool, failed: bool, local: &mut Local) {
        let slot = &self.slots[index as usize];
        let close = if failed { CLOSED | FAILED } else { CLOSED };
        // Neither flag is set before a task's finish, so adding them sets them (one
        // locked add, where an OR that returns the old word is a compare-and-swap loop).
        let dependents = slot.dependents.fetch_add(close, Ordering::SeqCst);
        debug_assert_eq!(dependents & (CLOSED | FAILED), 0, "a task finished twice");
        let mut link = dependents & LINK_MASK;
        while link != NO_LINK {
            let at = link as usize;
            let target = self.link_target[at].load(Ordering::Relaxed);
            let after = self.link_next[at].load(Ordering::Relaxed) as u64;
            if !reusable && !self.is_own_link(link as u32) {
                local.free_links.push_front(&self.link_next, link as u32);
            }
            self.release(target as usize, 1, failed, local);
            link = after;
        }
        if !reusable {
            let freed = if failed {
                &mut local.failed_slots
            } else {
                &mut local.free_slots
            };
            freed.push_front(&self.next, index);
        }
        local.finished += 1;
        if self.task_waiters.load(Ordering::SeqCst) != 0 {
            self.wake_waiters();
        }
    }

    fn note_panic(&self, id: TaskId, payload: PanicPayload) {
        self.failed.store(true, Ordering::Relaxed);
        let mut log = crate::sync::lock(&self.failures);
        if log.panic.is_none() {
            log.panic = Some((id, payload));
        } else {
            log.other_panics += 1;
        }
    }

    fn note_cancelled(&self, id: TaskId) {
        self.failed.store(true, Ordering::Relaxed);
        let mut log = crate::sync::lock(&self.failures);
        log.cancelled += 1;
        if log.cancelled_ids.len() < Failure::MAX_IDS {
            log.cancelled_ids.push(id);
        }
    }

    // -----------------------------------------------------------------------------------
    // Serving channels from any thread
    // -----------------------------------------------------------------------------------

    /// Runs one ready task of `channel` on the calling thread, if there is one; returns
    /// whether it ran one. This is how a dedicated channel's tasks run (for example on
    /// the main thread); any thread may also help with a pool channel this way.
    ///
    /// ```
    /// let main_thread = std::thread::current().id();
    /// let graph = sumac::graph::TaskGraph::builder().dedicated_channels(1).build().unwrap();
    /// let main = graph.dedicated_channel(0).unwrap();
    /// let task = graph
    ///     .create_on(main, move |_| assert_eq!(std::thread::current().id(), main_thread))
    ///     .unwrap();
    /// graph.ready(&[task]).unwrap();
    /// assert!(graph.execute_one(main).unwrap());
    /// assert!(!graph.execute_one(main).unwrap()); // nothing left
    /// graph.wait_all().unwrap();
    /// ```
    ///
    /// # Errors
    /// A channel of another graph.
    pub fn execute_one(&self, channel: Channel) -> Result<bool, TaskError> {
        let channel = self.check_channel(channel)?;
        let mut one = [NIL; 1];
        self.helpers.fetch_add(1, Ordering::SeqCst);
        let ran = self.take_from(channel, &mut one) == 1;
        if ran {
            let _running = Running::enter(self, false, 0);
            let mut local = Local::new(false);
            self.execute(one[0], &mut local, true);
            self.publish(&mut local);
        }
        self.leave_helping();
        Ok(ran)
    }

    /// Runs ready tasks of `channel` on the calling thread until it has none; returns
    /// how many it ran (or cancelled). On a pool channel the thread also runs, as a
    /// runner does, the pool channels' tasks that its tasks release (they would go to
    /// the pool otherwise): a thread that builds a graph in a one-thread pool can run
    /// each part while its slots are still in cache, instead of all of it at the end.
    ///
    /// # Errors
    /// A channel of another graph.
    pub fn run_channel(&self, channel: Channel) -> Result<usize, TaskError> {
        let channel = self.check_channel(channel)?;
        self.helpers.fetch_add(1, Ordering::SeqCst);
        let count = if self.is_pool_channel(channel) {
            self.running_pool_tasks(false, channel, |local| self.run_ready(channel, local))
        } else {
            let _running = Running::enter(self, false, 0);
            self.run_ready(channel, &mut Local::new(false))
        };
        self.leave_helping();
        Ok(count)
    }

    /// Runs ready tasks of `channel` until it has none, and publishes what they left;
    /// returns how many ran or were cancelled.
    fn run_ready(&self, channel: usize, local: &mut Local) -> usize {
        let mut batch = [NIL; RUNNER_BATCH];
        let mut count = 0;
        loop {
            let taken = self.take_from(channel, &mut batch);
            if taken == 0 {
                break;
            }
            count += self.run_batch(&batch[..taken], local);
        }
        self.publish(local);
        count
    }

    fn leave_helping(&self) {
        if self.helpers.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.wake_waiters_if_any();
        }
    }

    // -----------------------------------------------------------------------------------
    // Waiting
    // -----------------------------------------------------------------------------------

    fn wake_waiters_if_any(&self) {
        if self.waiting.load(Ordering::SeqCst) != 0 {
            self.wake_waiters();
        }
    }

    #[cold]
    fn wake_waiters(&self) {
        // Unparked outside the lock: a waiter evaluates `stalled` (which takes it) under
        // its pool's sleep lock, which an unpark takes.
        let waiters: Vec<Unparker> = crate::sync::lock(&self.waiters)
            .iter()
            .map(|waiter| waiter.unparker.clone())
            .collect();
        for waiter in waiters {
            waiter.unpark();
        }
    }

    /// Blocks (or, on a worker, runs the pool's jobs) until `done()`; every event that
    /// may make it true wakes registered waiters.
    /// `for_task` is the task waited for by a task that lent its runner's place.
    fn wait_until(&self, for_task: Option<(usize, u32)>, done: impl Fn() -> bool) {
        if done() {
            return;
        }
        let me = Unparker::for_current_thread();
        crate::sync::lock(&self.waiters).push(Waiter {
            unparker: me.clone(),
            for_task,
        });
        self.waiting.fetch_add(1, Ordering::SeqCst);
        park::park_until(&done);
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        let mut waiters = crate::sync::lock(&self.waiters);
        if let Some(at) = waiters.iter().position(|w| w.unparker.same_waiter(&me)) {
            waiters.swap_remove(at);
        }
    }

    /// Whether no task can make progress: tasks are unfinished, but no runner or helper
    /// is active, no channel holds a ready task, and no waiting task's wait is over (it
    /// resumes its runner once it notices).
    fn stalled(&self) -> bool {
        self.unfinished.load(Ordering::SeqCst) != 0
            && self.sched.load(Ordering::SeqCst) / RUNNER == 0
            && self.helpers.load(Ordering::SeqCst) == 0
            && self.channels.iter().all(|channel| channel.looks_empty())
            && !crate::sync::lock(&self.waiters).iter().any(|waiter| {
                waiter
                    .for_task
                    .is_some_and(|(index, generation)| self.finished(index, generation))
            })
    }

    fn inside_own_task(&self) -> bool {
        ptr::eq(
            CURRENT_GRAPH.with(Cell::get).graph,
            ptr::from_ref(self).cast(),
        )
    }

    fn inside_own_runner(&self) -> bool {
        let current = CURRENT_GRAPH.with(Cell::get);
        current.runner && ptr::eq(current.graph, ptr::from_ref(self).cast())
    }

    /// A task of this graph running on the calling thread blocks on a channel, a oneshot
    /// or a future (`blocking`), or resumes (`!blocking`; `runner` as when it blocked).
    /// While it blocks, the tasks its thread kept go to its channel and a runner's place
    /// is lent, as in [`wait`](Self::wait), so that other threads run them (the one it
    /// waits for may be among them); and it counts as a helper, so that the graph does
    /// not look stalled while one of its tasks is still running.
    ///
    /// # Safety
    /// `graph` points to a live `Graph<'a>`.
    unsafe fn block_task(graph: *const (), runner: bool, blocking: bool) {
        // SAFETY: by the caller.
        let graph = unsafe { &*graph.cast::<Graph<'a>>() };
        if blocking {
            graph.helpers.fetch_add(1, Ordering::SeqCst);
            graph.step_aside(runner);
        } else {
            if runner {
                graph.sched.fetch_add(RUNNER, Ordering::AcqRel);
            }
            graph.leave_helping();
        }
    }

    /// Waits until task `id` finished (ran, panicked or was cancelled; what happened is
    /// reported by [`wait_all`](Self::wait_all)). On a worker of the pool, the worker
    /// runs other work meanwhile (tasks of this graph included); elsewhere the thread
    /// blocks. A task may wait for another task this way.
    ///
    /// # Errors
    /// [`WaitError::Stalled`] if the task can never run (nothing in the graph is ready or
    /// running, and it was never readied or waits on such tasks), or a refused id.
    pub fn wait(&self, id: TaskId) -> Result<(), WaitError> {
        let index = self.check_id(id)?;
        if self.finished(index, id.generation) {
            return Ok(());
        }
        // Counted before the runner's place is lent: a stall seen meanwhile would count
        // this task.
        self.task_waiters.fetch_add(1, Ordering::SeqCst);
        // The task waited for may be one this thread kept (as a runner or a helper).
        let lending = self.inside_own_runner();
        if self.inside_own_task() {
            self.step_aside(lending);
        }
        self.wait_until(Some((index, id.generation)), || {
            self.finished(index, id.generation) || self.stalled()
        });
        // The runner's place back first: a stall seen meanwhile would count this task.
        if lending {
            self.sched.fetch_add(RUNNER, Ordering::AcqRel);
        }
        self.task_waiters.fetch_sub(1, Ordering::SeqCst);
        if self.finished(index, id.generation) {
            Ok(())
        } else {
            Err(WaitError::Stalled {
                unfinished: self.unfinished(),
            })
        }
    }

    /// A task of this graph running on the calling thread is about to wait: the tasks its
    /// thread kept go to their channel, and if the thread is a `runner` it lends its place,
    /// so that another runner may start and run them.
    fn step_aside(&self, runner: bool) {
        let kept = KEPT.get();
        if kept.tasks.count > 0 {
            KEPT.set(self.share_kept(kept, 0));
        }
        if runner {
            self.lend_runner();
        }
    }

    /// Gives up the calling runner's place while its task waits: start another runner
    /// if tasks are ready.
    fn lend_runner(&self) {
        let before = self.sched.fetch_sub(RUNNER, Ordering::AcqRel);
        if let Some(home) =
            (0..self.pool_channels).find(|&channel| !self.channels[channel].looks_empty())
        {
            self.wake_runners(home, true);
        } else if before / RUNNER == 1 {
            self.wake_waiters_if_any();
        }
    }

    /// Waits until every task created so far finished, then reports: `Ok` if all ran
    /// without panicking. On a worker of the pool the worker runs other work meanwhile; a
    /// thread taking part in a call into the pool (inside its `install`, `join`, `scope`
    /// or a parallel loop) runs the graph's ready tasks; elsewhere the thread blocks. The
    /// graph stays usable afterwards: the failures reported are forgotten, and a
    /// [`cancel`](Self::cancel) ends here.
    ///
    /// Panics are *returned*, not re-raised: [`Failure::resume_unwind`] re-raises the
    /// first one if you want that.
    ///
    /// ```
    /// let graph = sumac::graph::TaskGraph::builder().build().unwrap();
    /// let bad = graph.create(|_| panic!("boom")).unwrap();
    /// let after = graph.create(|_| unreachable!("cancelled")).unwrap();
    /// let independent = graph.create(|_| ()).unwrap();
    /// graph.add_dependencies(after, &[bad]).unwrap();
    /// graph.ready(&[bad, after, independent]).unwrap();
    /// match graph.wait_all() {
    ///     Err(sumac::graph::WaitError::Failed(failure)) => {
    ///         assert_eq!(failure.panic.unwrap().0, bad);
    ///         assert_eq!(failure.cancelled_ids, [after]);
    ///     }
    ///     other => panic!("{other:?}"),
    /// }
    /// graph.wait_all().unwrap(); // reported once
    /// ```
    ///
    /// # Errors
    /// [`WaitError::Failed`]: tasks panicked or were cancelled (every task finished).
    /// [`WaitError::Stalled`]: tasks remain that nothing can run (a cycle, or tasks never
    /// readied or waiting on such tasks), with nothing running. Readying tasks from other
    /// threads while this waits may be taken for a stall: ready from the waiting thread
    /// (or tasks), or wait after the producers finished. [`WaitError::InsideTask`]:
    /// called from a task of this graph. Tasks of dedicated channels that nobody serves
    /// keep it waiting; serve them with
    /// [`wait_all_serving`](Self::wait_all_serving).
    pub fn wait_all(&self) -> Result<(), WaitError> {
        self.wait_all_inner(None)
    }

    /// [`wait_all`](Self::wait_all), running the ready tasks of `channel` (a dedicated
    /// channel, typically) on the calling thread meanwhile.
    ///
    /// ```
    /// let graph = sumac::graph::TaskGraph::builder().dedicated_channels(1).build().unwrap();
    /// let main = graph.dedicated_channel(0).unwrap();
    /// let ui = std::thread::current().id();
    /// let work = graph.create(|_| ()).unwrap(); // on the pool
    /// let show = graph
    ///     .create_on(main, move |_| assert_eq!(std::thread::current().id(), ui))
    ///     .unwrap();
    /// graph.add_dependencies(show, &[work]).unwrap();
    /// graph.ready(&[work, show]).unwrap();
    /// graph.wait_all_serving(main).unwrap();
    /// ```
    ///
    /// # Errors
    /// As [`wait_all`](Self::wait_all), or a channel of another graph.
    pub fn wait_all_serving(&self, channel: Channel) -> Result<(), WaitError> {
        self.wait_all_inner(Some(self.check_channel(channel)?))
    }

    fn wait_all_inner(&self, serving: Option<usize>) -> Result<(), WaitError> {
        if self.inside_own_task() {
            return Err(WaitError::InsideTask);
        }
        // Tasks waiting in a stalled graph see the stall too and return: report it once
        // they did, so that the count is of the tasks that never run.
        let done = || {
            self.unfinished.load(Ordering::SeqCst) == 0
                || (self.stalled() && self.task_waiters.load(Ordering::SeqCst) == 0)
        };
        loop {
            if self.cancelling.load(Ordering::SeqCst) {
                // Nobody may serve the dedicated channels: finish their cancelled tasks.
                for channel in self.pool_channels..self.channels.len() {
                    self.run_channel(self.channel_handle(channel))?;
                }
            }
            if let Some(channel) = serving {
                self.run_channel(self.channel_handle(channel))?;
            }
            if self.caller_is_guest_of_pool() {
                self.help_pool_channels();
            }
            if done() {
                break;
            }
            let cancelling = || self.cancelling.load(Ordering::SeqCst);
            let dedicated_ready = || {
                self.channels[self.pool_channels..]
                    .iter()
                    .any(|channel| !channel.looks_empty())
            };
            self.wait_until(None, || {
                done()
                    || serving.is_some_and(|channel| !self.channels[channel].looks_empty())
                    || (cancelling() && dedicated_ready())
            });
        }
        let unfinished = self.unfinished.load(Ordering::SeqCst);
        if unfinished != 0 {
            return Err(WaitError::Stalled { unfinished });
        }
        self.cancelling.store(false, Ordering::SeqCst);
        if !self.failed.swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        // Reported now: the failed tasks' slots may go to new tasks.
        let failed = self.failed_slots.pop(&self.next, u32::MAX);
        if !failed.is_empty() {
            self.free_slots.push(&self.next, failed);
        }
        let log = std::mem::take(&mut *crate::sync::lock(&self.failures));
        if log.panic.is_none() && log.cancelled == 0 {
            return Ok(());
        }
        Err(WaitError::Failed(Failure {
            panic: log.panic,
            other_panics: log.other_panics,
            cancelled: log.cancelled,
            cancelled_ids: log.cancelled_ids,
        }))
    }

    /// Whether the calling thread takes part in a call into the graph's pool from outside
    /// it (a guest holding a place of that pool: see `SCHEDULER.md`).
    fn caller_is_guest_of_pool(&self) -> bool {
        self.with_pool_member(|member| member.public_index().is_none()) == Some(true)
    }

    /// Runs ready tasks of the pool channels on the calling thread, as a runner would
    /// (keeping what its tasks release), until they look empty for a short while. A
    /// guest waiting for the graph does this instead of blocking: it holds one of the
    /// pool's places, and in a one-thread pool the runner jobs it spawned wait for it.
    fn help_pool_channels(&self) {
        self.helpers.fetch_add(1, Ordering::SeqCst);
        self.running_pool_tasks(false, 0, |local| self.drain(0, local));
        self.leave_helping();
    }

    fn channel_handle(&self, index: usize) -> Channel {
        Channel {
            graph: self.serial,
            index: index as u16,
        }
    }

    // -----------------------------------------------------------------------------------
    // Cancelling and re-running
    // -----------------------------------------------------------------------------------

    /// Cancels the graph: tasks not started never start (they finish as cancelled, and
    /// their closures are dropped), running ones finish. This holds for tasks readied or
    /// created until [`wait_all`](Self::wait_all) reports the cancellation, after which
    /// the graph runs tasks again. Tasks never readied are readied as cancelled.
    ///
    /// ```
    /// let graph = sumac::graph::TaskGraph::builder().build().unwrap();
    /// let never = graph.create(|_| unreachable!()).unwrap();
    /// graph.cancel();
    /// let failure = match graph.wait_all() {
    ///     Err(sumac::graph::WaitError::Failed(failure)) => failure,
    ///     other => panic!("{other:?}"),
    /// };
    /// assert_eq!(failure.cancelled_ids, [never]);
    /// ```
    pub fn cancel(&self) {
        self.cancelling.store(true, Ordering::SeqCst);
        let mut local = Local::new(false);
        let used = (self.fresh_slots.load(Ordering::Acquire) as usize).min(self.slots.len());
        for index in 0..used {
            let pending = &self.slots[index].pending;
            let mut current = pending.load(Ordering::Acquire);
            while current & NOT_READIED != 0 {
                let cancelled = (current & !NOT_READIED) | POISONED;
                match pending.compare_exchange_weak(
                    current,
                    cancelled,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => {
                        if cancelled & COUNT_MASK == 0 {
                            self.schedule(index as u32, &mut local);
                        }
                        break;
                    }
                    Err(actual) => current = actual,
                }
            }
        }
        self.publish(&mut local);
        self.wake_waiters_if_any();
    }

    /// Runs the graph's reusable tasks again, with their dependencies, once every task
    /// finished; returns how many it readied. Taskflow's "run a built graph again",
    /// without rebuilding: nothing is allocated.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let runs = AtomicUsize::new(0);
    /// sumac::graph::scope(|g| {
    ///     let runs = &runs;
    ///     let a = g.create_reusable(move |_| { runs.fetch_add(1, Ordering::Relaxed); }).unwrap();
    ///     let b = g.create_reusable(move |_| { runs.fetch_add(1, Ordering::Relaxed); }).unwrap();
    ///     g.add_dependencies(b, &[a]).unwrap();
    ///     g.ready(&[a, b]).unwrap();
    ///     for _ in 0..3 {
    ///         g.wait_all().unwrap();
    ///         assert_eq!(g.rerun().unwrap(), 2);
    ///     }
    /// })
    /// .unwrap();
    /// assert_eq!(runs.into_inner(), 8);
    /// ```
    ///
    /// # Errors
    /// [`GraphBusy`] while tasks are unfinished: call it after
    /// [`wait_all`](Self::wait_all). Readying or creating tasks concurrently with it is
    /// not allowed.
    pub fn rerun(&self) -> Result<usize, GraphBusy> {
        // Every task's finish (its releases included) comes before the count that
        // covers it is subtracted, so zero means no task is running or about to.
        let unfinished = self.unfinished.load(Ordering::SeqCst);
        if unfinished != 0 {
            return Err(GraphBusy { unfinished });
        }
        let used = (self.fresh_slots.load(Ordering::Acquire) as usize).min(self.slots.len());
        let reusable =
            |index: usize| self.slots[index].meta.load(Ordering::Relaxed) & REUSABLE != 0;
        for index in (0..used).filter(|&i| reusable(i)) {
            let pending = &self.slots[index].pending;
            let kept = pending.load(Ordering::Acquire) & (!(u32::MAX as u64) | OWN_LINK_TAKEN);
            pending.store(kept, Ordering::Relaxed);
        }
        for index in (0..used).filter(|&i| reusable(i)) {
            let mut link = self.slots[index].dependents.load(Ordering::Acquire) & LINK_MASK;
            while link != NO_LINK {
                let target = self.link_target[link as usize].load(Ordering::Relaxed);
                self.slots[target as usize]
                    .pending
                    .fetch_add(1, Ordering::Relaxed);
                link = self.link_next[link as usize].load(Ordering::Relaxed) as u64;
            }
        }
        let mut local = Local::new(false);
        let mut count = 0;
        for index in (0..used).filter(|&i| reusable(i)) {
            let slot = &self.slots[index];
            slot.dependents
                .fetch_and(!(CLOSED | FAILED), Ordering::AcqRel);
            count += 1;
            if slot.pending.load(Ordering::Relaxed) & COUNT_MASK == 0 {
                self.schedule(index as u32, &mut local);
            }
        }
        self.unfinished.fetch_add(count, Ordering::SeqCst);
        self.publish(&mut local);
        Ok(count)
    }

    // -----------------------------------------------------------------------------------
    // Teardown
    // -----------------------------------------------------------------------------------

    /// Forgets the order in which slots and links were freed, so that new tasks get
    /// slots in creation order again (see [`TaskGraph::compact`](super::TaskGraph::compact)).
    ///
    /// # Safety
    /// Nothing else may use the graph during the call, and it must hold no task: no
    /// one-shot task unfinished, no reusable task.
    pub(crate) unsafe fn compact(&self) -> Result<(), GraphBusy> {
        let unfinished = self.unfinished.load(Ordering::SeqCst);
        let reusable = self.reusable_tasks.load(Ordering::Relaxed) != 0;
        if unfinished != 0 || reusable || self.helpers.load(Ordering::SeqCst) != 0 {
            return Err(GraphBusy { unfinished });
        }
        // Every slot and link is free: each thread that finished tasks pushed their
        // slots and links back before it subtracted them from `unfinished`. Generations
        // stay in the slots, so stale ids stay stale.
        self.free_slots.clear();
        self.failed_slots.clear();
        self.fresh_slots.store(0, Ordering::Release);
        self.free_links.clear();
        self.fresh_links.store(0, Ordering::Release);
        self.in_order.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Cancels what has not started, waits until no runner or helper is active, and drops
    /// every closure left (tasks never readied, reusable tasks). After this no task of
    /// the graph runs again and nothing borrowed by its tasks is touched.
    pub(crate) fn shut_down(&self) {
        self.cancel();
        // Dropped by one of its own tasks (which held the last handle): wait for every
        // runner and helper but the one running that task. Its closure was moved out to
        // run, and what it runs after this is cancelled (the closures are gone by then).
        let own_runner = self.inside_own_runner() as usize;
        let own_helper = (self.inside_own_task() && own_runner == 0) as usize;
        self.wait_until(None, || {
            self.sched.load(Ordering::SeqCst) / RUNNER == own_runner
                && self.helpers.load(Ordering::SeqCst) == own_helper
        });
        self.drop_closures();
    }

    /// Drops every closure still in a slot. Only when nothing else can touch the graph.
    fn drop_closures(&self) {
        let used = (self.fresh_slots.load(Ordering::Acquire) as usize).min(self.slots.len());
        for slot in &self.slots[..used] {
            // SAFETY: no runner or helper is active and the graph's owner is gone, so no
            // other thread can reach a closure.
            let _ = panic::catch_unwind(AssertUnwindSafe(|| unsafe { slot.drop_closure() }));
        }
    }
}

impl Drop for Graph<'_> {
    fn drop(&mut self) {
        // Normally `shut_down` emptied every slot already; this covers a graph dropped
        // without its owner (the loom models).
        self.drop_closures();
    }
}

impl std::fmt::Debug for Graph<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("max_tasks", &self.max_tasks())
            .field("max_dependencies", &self.max_dependencies())
            .field("pool_channels", &self.pool_channels)
            .field(
                "dedicated_channels",
                &(self.channels.len() - self.pool_channels),
            )
            .field("unfinished", &self.unfinished())
            .finish_non_exhaustive()
    }
}

/// Asks the CPU to load the cache line of `item` (a hint; nothing unless `PREFETCHES`).
#[inline(always)]
fn prefetch_line<T>(item: &T) {
    #[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
    {
        let address: *const T = item;
        // SAFETY: prefetching is a hint that never faults, and the address is of a value.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                address.cast::<i8>(),
            )
        };
    }
    #[cfg(not(all(target_arch = "x86_64", not(loom), not(miri))))]
    let _ = item;
}

/// Asks the CPU to load the cache line that holds `item` for writing (`prefetchw`: the
/// line arrives owned, so the stores that follow need not fetch it again; a no-op on
/// processors without the instruction and elsewhere).
#[inline(always)]
fn prefetch_line_for_write<T>(item: &T) {
    #[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
    {
        let address: *const T = item;
        // SAFETY: `prefetchw` is a hint that never faults and changes no register, flag or
        // memory content; every x86-64 processor decodes it, and those that do not report
        // it (Intel's before Broadwell) execute it as a no-op.
        unsafe {
            core::arch::asm!(
                "prefetchw [{0}]",
                in(reg) address,
                options(nostack, preserves_flags, readonly)
            )
        };
    }
    #[cfg(not(all(target_arch = "x86_64", not(loom), not(miri))))]
    let _ = item;
}

/// [`LINGER_LOOK_EVERY`] and [`RUNNER_LINGER`] in clock ticks, computed once per process.
#[cfg(not(any(loom, miri)))]
fn linger_ticks() -> (u64, u64) {
    static TICKS: std::sync::OnceLock<(u64, u64)> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        let rate = crate::clock::ticks_per_us_1024();
        let ticks = |d: Duration| {
            crate::clock::ticks_in(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX), rate)
        };
        (ticks(LINGER_LOOK_EVERY), ticks(RUNNER_LINGER))
    })
}

/// Adds `n` tasks run to a member's counters.
fn count_tasks_on(member: &crate::worker::WorkerThread, n: u64) {
    #[cfg(not(loom))]
    crate::stats::bump(&member.shared().counters.graph_tasks, n);
    #[cfg(loom)]
    let _ = (member, n);
}

/// Records a trace event on a member.
#[cfg(feature = "trace")]
fn trace_on(member: &crate::worker::WorkerThread, kind: crate::trace::EventKind) {
    member.shared().trace.record(member.index(), kind);
}
