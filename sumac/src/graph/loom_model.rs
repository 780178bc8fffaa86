//! Loom models of the task graph's hand-offs, on the production code: the graph is built
//! with [`Executor::Model`], which counts runner requests instead of pushing pool jobs,
//! and model threads serve those requests by calling the production
//! [`Graph::run_runner`]. Everything else (ready queues, `sched`, the pending counts, the
//! dependents lists, the free stacks) is the code that runs in the pool.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p sumac --lib --profile release-test loom_graph -- --test-threads=1`.
//!
//! A stranded ready task (a runner leaving as a task becomes ready, with no other runner
//! started) shows as a task that never ran; a task released before all its dependencies
//! finished, or without a happens-before edge from them, shows as an unsynchronised
//! read of the cells they wrote; a task run twice shows in the run counts.

use std::sync::atomic::Ordering;

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicUsize};
use loom::sync::Arc;
use loom::thread;

use super::engine::{Config, Executor, Graph};
use super::TaskId;

/// A cell that tasks on different model threads write and read; loom reports any access
/// not ordered by a happens-before edge.
struct Shared(UnsafeCell<u32>);

// SAFETY: every access goes through loom's `UnsafeCell`, which reports any access not
// ordered by happens-before with another: racing accesses fail the model.
unsafe impl Sync for Shared {}

impl Shared {
    fn new() -> Arc<Shared> {
        Arc::new(Shared(UnsafeCell::new(0)))
    }

    fn set(&self, value: u32) {
        // SAFETY: loom reports a write that races with another access.
        self.0.with_mut(|v| unsafe { *v = value });
    }

    fn get(&self) -> u32 {
        // SAFETY: loom reports a read that races with a write.
        self.0.with(|v| unsafe { *v })
    }
}

/// Explores the interleavings of `f` with at most `bound` preemptions
/// (`LOOM_MAX_PREEMPTIONS` overrides it).
fn model(bound: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(bound);
    }
    let executions = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&executions);
    builder.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        f();
    });
    println!(
        "{}: {} executions",
        std::thread::current().name().unwrap_or("?"),
        executions.load(Ordering::Relaxed)
    );
}

/// A graph of `tasks` slots and `links` links whose runner requests are counted in the
/// returned counter, with up to `runners` runners.
fn graph(
    tasks: usize,
    links: usize,
    runners: usize,
) -> (std::sync::Arc<Graph<'static>>, Arc<AtomicUsize>) {
    let requests = Arc::new(AtomicUsize::new(0));
    let graph = Graph::new(Config {
        max_tasks: tasks,
        max_dependencies: links,
        pool_channels: 1,
        dedicated_channels: 0,
        max_runners: runners,
        executor: Executor::Model(Arc::clone(&requests)),
    });
    (graph, requests)
}

/// A model thread standing in for a pool worker: serves runner requests until `stop` is
/// set and none is left.
fn serve(graph: &Graph<'static>, requests: &AtomicUsize, stop: &AtomicBool) {
    loop {
        let pending = requests.load(Ordering::SeqCst);
        if pending > 0 {
            if requests
                .compare_exchange(pending, pending - 1, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                graph.run_runner(0);
            }
            continue;
        }
        if stop.load(Ordering::SeqCst) && requests.load(Ordering::SeqCst) == 0 {
            return;
        }
        thread::yield_now();
    }
}

/// Tasks `a` and `b`, which write 1 and 2 into two cells, and `c`, which checks that it
/// sees both writes and counts its runs in the returned counter: `(a, b, c, runs)`.
fn two_writers_and_a_reader(graph: &Graph<'static>) -> (TaskId, TaskId, TaskId, Arc<AtomicUsize>) {
    let left = Shared::new();
    let right = Shared::new();
    let runs = Arc::new(AtomicUsize::new(0));
    let a = {
        let left = left.clone();
        graph.create(move |_| left.set(1)).unwrap()
    };
    let b = {
        let right = right.clone();
        graph.create(move |_| right.set(2)).unwrap()
    };
    let c = {
        let runs = runs.clone();
        graph
            .create(move |_| {
                assert_eq!(left.get() + right.get(), 3);
                runs.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap()
    };
    (a, b, c, runs)
}

/// A producer readies `tasks` tasks one after the other on a graph of one runner, served
/// by one model thread: each must run exactly once.
fn readies_one_by_one(tasks: usize) {
    let (graph, requests) = graph(tasks + 2, 0, 1);
    let runs = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let worker = {
        let (graph, requests, stop) = (graph.clone(), requests.clone(), stop.clone());
        thread::spawn(move || serve(&graph, &requests, &stop))
    };
    for _ in 0..tasks {
        let runs = runs.clone();
        let id = graph
            .create(move |_| {
                runs.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
        graph.ready(&[id]).unwrap();
    }
    stop.store(true, Ordering::SeqCst);
    worker.join().unwrap();
    assert_eq!(
        runs.load(Ordering::SeqCst),
        tasks,
        "a ready task was stranded"
    );
    assert_eq!(graph.unfinished(), 0);
}

/// A producer readies two tasks one after the other while the runner it started for the
/// first may be leaving: the second must run too (by that runner, which saw `NOTIFIED`,
/// or by a new one), and each exactly once.
#[test]
fn loom_graph_no_ready_task_is_stranded() {
    model(3, || readies_one_by_one(2));
}

/// Three tasks readied one after the other: the third may find `NOTIFIED` set by the
/// second while the runner is clearing it; it must run too, exactly once.
#[test]
fn loom_graph_a_push_that_finds_the_runner_notified_is_not_stranded() {
    model(3, || readies_one_by_one(3));
}

/// Two tasks run on two runners at once and both release a third: it runs exactly once,
/// after both, and sees what both wrote.
#[test]
fn loom_graph_a_task_runs_once_after_all_its_dependencies() {
    model(3, || {
        let (graph, requests) = graph(4, 2, 2);
        let stop = Arc::new(AtomicBool::new(false));
        let (a, b, c, joined) = two_writers_and_a_reader(&graph);
        graph.add_dependencies(c, &[a, b]).unwrap();
        graph.ready(&[c, a, b]).unwrap();
        stop.store(true, Ordering::SeqCst);
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let (graph, requests, stop) = (graph.clone(), requests.clone(), stop.clone());
                thread::spawn(move || serve(&graph, &requests, &stop))
            })
            .collect();
        for worker in workers {
            worker.join().unwrap();
        }
        assert_eq!(joined.load(Ordering::SeqCst), 1);
        assert_eq!(graph.unfinished(), 0);
    });
}

/// A dependency is added on a task that is running (or finishing) on a runner: the
/// dependent runs exactly once, after it, whichever side wins the race on the
/// dependents list.
#[test]
fn loom_graph_a_dependency_added_while_its_task_finishes() {
    model(3, || {
        let (graph, requests) = graph(4, 1, 1);
        let cell = Shared::new();
        let after = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let first = {
            let cell = cell.clone();
            graph.create(move |_| cell.set(7)).unwrap()
        };
        graph.ready(&[first]).unwrap();
        let worker = {
            let (graph, requests, stop) = (graph.clone(), requests.clone(), stop.clone());
            thread::spawn(move || serve(&graph, &requests, &stop))
        };
        let second = {
            let (cell, after) = (cell.clone(), after.clone());
            graph
                .create(move |_| {
                    assert_eq!(cell.get(), 7);
                    after.fetch_add(1, Ordering::SeqCst);
                })
                .unwrap()
        };
        graph.add_dependencies(second, &[first]).unwrap();
        graph.ready(&[second]).unwrap();
        stop.store(true, Ordering::SeqCst);
        worker.join().unwrap();
        assert_eq!(after.load(Ordering::SeqCst), 1);
        assert_eq!(graph.unfinished(), 0);
    });
}

/// A graph of one slot: the producer creates a task, readies it, and creates the next
/// one in the slot the runner frees (retrying while it is full). Each task runs once,
/// and the first task's id is stale (finished) once the slot was reused.
#[test]
fn loom_graph_a_freed_slot_is_reused_with_a_new_generation() {
    model(3, || {
        let (graph, requests) = graph(1, 0, 1);
        let runs = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let worker = {
            let (graph, requests, stop) = (graph.clone(), requests.clone(), stop.clone());
            thread::spawn(move || serve(&graph, &requests, &stop))
        };
        let make = |runs: Arc<AtomicUsize>| {
            move |_: &super::Task<'_, 'static>| {
                runs.fetch_add(1, Ordering::SeqCst);
            }
        };
        let first = graph.create(make(runs.clone())).unwrap();
        graph.ready(&[first]).unwrap();
        let second = loop {
            match graph.create(make(runs.clone())) {
                Ok(id) => break id,
                Err(_) => thread::yield_now(),
            }
        };
        assert_eq!(
            graph.ready(&[first]),
            Err(super::TaskError::Finished),
            "a stale id readied its slot's next task"
        );
        graph.ready(&[second]).unwrap();
        stop.store(true, Ordering::SeqCst);
        worker.join().unwrap();
        assert_eq!(runs.load(Ordering::SeqCst), 2);
    });
}

/// A linked batch (two tasks, the second after the first) is made and readied while the
/// task its first one depends on runs on a runner: the push of that link races the
/// task's finish. Each batch task runs once, in order, and sees what the one before
/// wrote.
#[test]
fn loom_graph_a_linked_batch_depends_on_a_task_that_is_finishing() {
    use super::Before;
    model(3, || {
        let (graph, requests) = graph(3, 2, 1);
        let first_cell = Shared::new();
        let second_cell = Shared::new();
        let last = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let first = {
            let cell = first_cell.clone();
            graph.create(move |_| cell.set(7)).unwrap()
        };
        graph.ready(&[first]).unwrap();
        let worker = {
            let (graph, requests, stop) = (graph.clone(), requests.clone(), stop.clone());
            thread::spawn(move || serve(&graph, &requests, &stop))
        };
        let middle = {
            let (seen, cell) = (first_cell.clone(), second_cell.clone());
            move |_: &super::Task<'_, 'static>| {
                assert_eq!(seen.get(), 7);
                cell.set(8);
            }
        };
        let end = {
            let (seen, last) = (second_cell.clone(), last.clone());
            move |_: &super::Task<'_, 'static>| {
                assert_eq!(seen.get(), 8);
                last.fetch_add(1, Ordering::SeqCst);
            }
        };
        let mut ids = Vec::new();
        graph
            .create_linked_batch_into(
                graph.default_channel(),
                [
                    (
                        Box::new(middle) as Box<dyn FnOnce(&super::Task<'_, 'static>) + Send>,
                        [Before::Task(first)],
                    ),
                    (Box::new(end), [Before::InBatch(0)]),
                ],
                true,
                &mut ids,
            )
            .unwrap();
        stop.store(true, Ordering::SeqCst);
        worker.join().unwrap();
        assert_eq!(last.load(Ordering::SeqCst), 1);
        assert_eq!(graph.unfinished(), 0);
    });
}

/// Two threads add a dependency each to the same task at once, on a graph with one link
/// to allocate: one takes the task's own link and the other the allocated one, whoever
/// wins the race for the own link (the loser allocates instead). Both succeed, no link
/// is left to allocate, and the task runs once, after both dependencies, seeing what
/// they wrote.
#[test]
fn loom_graph_two_adders_race_for_the_own_link_of_a_task() {
    use super::TaskError;
    model(3, || {
        let (graph, requests) = graph(4, 1, 1);
        let stop = Arc::new(AtomicBool::new(false));
        let (a, b, c, joined) = two_writers_and_a_reader(&graph);
        let adder = {
            let graph = graph.clone();
            thread::spawn(move || graph.add_dependencies(c, &[a]).unwrap())
        };
        graph.add_dependencies(c, &[b]).unwrap();
        adder.join().unwrap();
        // `d`'s own link serves `a`; `b` would need the allocated link, which `c` holds.
        let d = graph.create(|_| ()).unwrap();
        assert!(matches!(
            graph.add_dependencies(d, &[a, b]),
            Err(TaskError::Full(_))
        ));
        graph.ready(&[c, a, b, d]).unwrap();
        stop.store(true, Ordering::SeqCst);
        serve(&graph, &requests, &stop);
        assert_eq!(joined.load(Ordering::SeqCst), 1);
        assert_eq!(graph.unfinished(), 0);
    });
}

/// A ring of two cells (the fewest for two slot indices): a pusher pushes indices 0 and
/// 1 (one after the other, or as one chain) while two takers try once each to take up to
/// `at_once`, and a taker pushes what it got again (its slots reused), so that later
/// pushes (and the rest of a chain put back) wrap onto a cell the other taker may still
/// be reading. Every index pushed is taken exactly once (what is left after the threads
/// end is taken then), and its taker sees what the pusher wrote before pushing.
fn ready_queue_wraps(as_one_chain: bool, at_once: usize) {
    use super::ready::ReadyQueue;
    use super::stack::{Chain, NIL};
    use crate::sync::AtomicU32;

    type Written = [Arc<Shared>; 2];

    fn push_one(queue: &ReadyQueue, next: &[AtomicU32], index: u32) {
        let mut chain = Chain::EMPTY;
        chain.push_back(next, index);
        queue.push(next, chain);
    }

    /// Takes at most `at_once` indices; returns them with what their pusher wrote.
    fn take_some(
        queue: &ReadyQueue,
        next: &[AtomicU32],
        written: &Written,
        at_once: usize,
    ) -> Vec<(u32, u32)> {
        let mut batch = [NIL; 2];
        let (taken, _) = queue.take(next, &mut batch[..at_once]);
        batch[..taken]
            .iter()
            .map(|&index| (index, written[index as usize].get()))
            .collect()
    }

    /// Takes what it can (up to `at_once`) and pushes each again after writing 2 for it.
    fn take_and_reuse(
        queue: &ReadyQueue,
        next: &[AtomicU32],
        written: &Written,
        at_once: usize,
    ) -> Vec<(u32, u32)> {
        let taken = take_some(queue, next, written, at_once);
        for &(index, _) in &taken {
            written[index as usize].set(2);
            push_one(queue, next, index);
        }
        taken
    }

    model(3, move || {
        let next: Arc<[AtomicU32; 2]> = Arc::new([AtomicU32::new(NIL), AtomicU32::new(NIL)]);
        let queue = Arc::new(ReadyQueue::new((0..2).map(|_| AtomicU32::new(0)).collect()));
        let written: Written = [Shared::new(), Shared::new()];
        let pusher = {
            let (next, queue, written) = (next.clone(), queue.clone(), written.clone());
            thread::spawn(move || {
                if as_one_chain {
                    let mut chain = Chain::EMPTY;
                    for index in 0..2 {
                        written[index as usize].set(1);
                        chain.push_back(&next[..], index);
                    }
                    queue.push(&next[..], chain);
                } else {
                    for index in 0..2 {
                        written[index as usize].set(1);
                        push_one(&queue, &next[..], index);
                    }
                }
            })
        };
        let other = {
            let (next, queue, written) = (next.clone(), queue.clone(), written.clone());
            thread::spawn(move || take_and_reuse(&queue, &next[..], &written, at_once))
        };
        let mut taken = take_and_reuse(&queue, &next[..], &written, at_once);
        pusher.join().unwrap();
        taken.extend(other.join().unwrap());
        // One more push for each index taken so far.
        let mut expected = vec![(0, 1), (1, 1)];
        expected.extend(taken.iter().map(|&(index, _)| (index, 2)));
        loop {
            let left = take_some(&queue, &next[..], &written, 2);
            if left.is_empty() {
                break;
            }
            taken.extend(left);
        }
        taken.sort_unstable();
        expected.sort_unstable();
        assert_eq!(taken, expected);
        assert!(queue.looks_empty());
    });
}

#[test]
fn loom_graph_ready_queue_pushes_wrap_onto_cells_their_takers_read() {
    ready_queue_wraps(false, 1);
}

#[test]
fn loom_graph_ready_queue_puts_back_the_rest_of_a_chain_behind_newer_pushes() {
    ready_queue_wraps(true, 1);
}

#[test]
fn loom_graph_ready_queue_claims_runs_of_single_tasks_in_one_swap() {
    ready_queue_wraps(false, 2);
}
