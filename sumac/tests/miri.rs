//! Small tests of every path through sumac's `unsafe` code, sized so that Miri can run
//! them (`bash scripts/miri.sh`): forks recorded on a worker's list and shared, taken
//! back or waited for; panics in each closure position while the other closure runs on
//! another thread; scopes, spawned and broadcast jobs; pools entered from each other and
//! dropped with work in flight; and the data-parallel code that moves values by pointer
//! (collect, the in-place drains, the parallel sorts, `par_chunks_mut`); and a fork
//! claimed from its worker's rescue offers (one slot and two) while the worker runs code
//! without forks.
//!
//! Every pool here has a 1 µs heartbeat and loops are forced to split every few items,
//! so that even these small inputs go through the sharing paths. Under Miri the
//! heartbeat thread reads Miri's clock, and its thread scheduler interleaves the workers;
//! the normal test run runs the same tests natively.
mod common;

use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Barrier};

use common::{
    fib, fib_seq, forced_split_stress_pool, panic_message, stress_pool, DropCounter, DropToken,
};
use sumac::prelude::*;

/// The size of the inputs: small under Miri (an interpreter), larger natively.
const fn size(miri: usize, native: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        native
    }
}

/// Runs `check` on a 2-thread and a 3-thread pool with a 1 µs heartbeat, with loops
/// forced to split.
fn on_sharing_pools(check: impl Fn(&sumac::ThreadPool)) {
    for threads in [2, 3] {
        let pool = forced_split_stress_pool(threads, 2);
        check(&pool);
    }
}

#[test]
fn joins_are_shared_and_give_the_sequential_result() {
    on_sharing_pools(|pool| {
        let before = pool.stats();
        // Rounds until some fork was run by another worker: a heartbeat every
        // microsecond shares one almost at once, but on a loaded machine the workers may
        // not run for a while, so natively the rounds go on for up to 20 s (20 rounds
        // under Miri). Natively a call lasts tens of microseconds (an optimised fib(12)
        // could end before its oldest fork is two heartbeats old, every time).
        let n = size(12, 18) as u64;
        let give_up = std::time::Instant::now() + std::time::Duration::from_secs(20);
        for round in 0.. {
            assert_eq!(pool.install(|| fib(n)), fib_seq(n));
            if pool.stats().since(&before).total().shared_jobs_run > 0 {
                return;
            }
            let out_of_time = if cfg!(miri) {
                round + 1 >= 20
            } else {
                std::time::Instant::now() >= give_up
            };
            assert!(
                !out_of_time,
                "no fork was shared: the test did not exercise the hand-off"
            );
        }
    });
}

/// Spins, without forking, until `n` callers arrived at `count` (false after 20 s).
fn meet(count: &AtomicUsize, n: usize) -> bool {
    common::meet(count, n, std::time::Duration::from_secs(20))
}

#[test]
fn a_fork_behind_a_leaf_without_forks_is_claimed_by_the_heartbeat_thread() {
    // `a` makes no forks, so only the rescue offer can get `b` to the other worker.
    on_sharing_pools(|pool| {
        for _ in 0..size(2, 20) {
            let count = AtomicUsize::new(0);
            let (a, b) = pool.install(|| sumac::join(|| meet(&count, 2), || meet(&count, 2)));
            assert!(a && b, "b never ran beside a");
        }
    });
}

#[test]
fn forks_offered_in_two_slots_are_both_claimed() {
    // Worker 0 records the outer `b` and then the inner one, both on offer, and runs a
    // leaf without forks: the three leaves meet only if both forks were claimed.
    let pool = stress_pool(3);
    for _ in 0..size(1, 20) {
        let count = AtomicUsize::new(0);
        let ((a, b), c) = pool.install(|| {
            sumac::join(
                || sumac::join(|| meet(&count, 3), || meet(&count, 3)),
                || meet(&count, 3),
            )
        });
        assert!(a && b && c, "the leaves never all ran at once");
    }
}

#[test]
fn a_panic_in_either_closure_waits_for_the_other_one() {
    on_sharing_pools(|pool| {
        for round in 0..size(6, 200) {
            let finished = AtomicUsize::new(0);
            let panics_in_a = round % 2 == 0;
            let result = panic::catch_unwind(AssertUnwindSafe(|| {
                pool.install(|| {
                    sumac::join(
                        || {
                            fib(9);
                            finished.fetch_add(1, Ordering::SeqCst);
                            assert!(!panics_in_a, "a");
                        },
                        || {
                            fib(9);
                            finished.fetch_add(1, Ordering::SeqCst);
                            assert!(panics_in_a, "b");
                        },
                    )
                })
            }));
            let expected = if panics_in_a { "a" } else { "b" };
            assert_eq!(panic_message(&*result.unwrap_err()), expected);
            assert_eq!(finished.load(Ordering::SeqCst), 2, "both closures finished");
        }
    });
}

#[test]
fn nested_joins_with_panicking_leaves_drop_every_closure_once() {
    fn tree(depth: u32, counter: &DropCounter) -> u64 {
        let token = counter.token();
        if depth == 0 {
            drop(token);
            assert!(counter.created() % 7 != 3, "leaf");
            return 1;
        }
        let left = counter.token();
        let right = counter.token();
        let (a, b) = sumac::join(
            move || {
                let _left = left;
                tree(depth - 1, counter)
            },
            move || {
                let _right = right;
                tree(depth - 1, counter)
            },
        );
        drop(token);
        a + b
    }
    on_sharing_pools(|pool| {
        for _ in 0..size(3, 50) {
            let counter = DropCounter::new();
            let _ = panic::catch_unwind(AssertUnwindSafe(|| pool.install(|| tree(5, &counter))));
            assert_eq!(
                counter.created(),
                counter.dropped(),
                "leaked or dropped twice"
            );
        }
    });
}

#[test]
fn scopes_spawn_borrowing_jobs_and_rethrow_after_all_finished() {
    on_sharing_pools(|pool| {
        let mut slots = vec![0u64; size(12, 200)];
        pool.scope(|s| {
            for (i, slot) in slots.iter_mut().enumerate() {
                s.spawn(move |s| {
                    s.spawn(move |_| *slot = fib_seq(i as u64 % 10));
                });
            }
        });
        let expected: Vec<u64> = (0..slots.len()).map(|i| fib_seq(i as u64 % 10)).collect();
        assert_eq!(slots, expected);

        let ran = AtomicUsize::new(0);
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.scope_fifo(|s| {
                for i in 0..size(8, 100) {
                    let ran = &ran;
                    s.spawn_fifo(move |_| {
                        ran.fetch_add(1, Ordering::SeqCst);
                        assert!(i != 3, "job 3");
                    });
                }
            })
        }));
        assert_eq!(panic_message(&*result.unwrap_err()), "job 3");
        assert_eq!(
            ran.load(Ordering::SeqCst),
            size(8, 100),
            "every job ran first"
        );
    });
}

#[test]
fn spawned_and_broadcast_jobs_run_and_are_dropped_once() {
    on_sharing_pools(|pool| {
        let counter = DropCounter::new();
        let (sender, receiver) = mpsc::channel();
        for i in 0..size(6, 100) {
            let token = counter.token();
            let sender = sender.clone();
            if i % 2 == 0 {
                pool.spawn(move || {
                    drop(token);
                    sender.send(()).unwrap();
                });
            } else {
                pool.spawn_fifo(move || {
                    drop(token);
                    sender.send(()).unwrap();
                });
            }
        }
        drop(sender);
        assert_eq!(receiver.iter().count(), size(6, 100));

        let indices = pool.broadcast(|ctx| ctx.index());
        assert_eq!(indices, (0..pool.current_num_threads()).collect::<Vec<_>>());
        let token = counter.token();
        let (sender, receiver) = mpsc::channel();
        pool.spawn_broadcast(move |ctx| {
            let _keep = &token;
            sender.send(ctx.index()).unwrap();
        });
        let mut seen: Vec<usize> = receiver.iter().collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..pool.current_num_threads()).collect::<Vec<_>>());
        assert_eq!(counter.created(), counter.dropped());
    });
}

#[test]
fn pools_install_into_each_other_and_drop_with_work_in_flight() {
    let a = forced_split_stress_pool(2, 2);
    let b = forced_split_stress_pool(2, 2);
    let total = a.install(|| {
        let (x, y) = sumac::join(
            || b.install(|| a.install(|| fib(8))),
            || b.install(|| fib(9)),
        );
        x + y
    });
    assert_eq!(total, fib_seq(8) + fib_seq(9));

    // Dropped while spawned jobs still run (and spawn more): the drop waits for them.
    let done = std::sync::Arc::new(AtomicUsize::new(0));
    let gate = std::sync::Arc::new(Barrier::new(2));
    {
        let done = std::sync::Arc::clone(&done);
        let gate = std::sync::Arc::clone(&gate);
        b.spawn(move || {
            gate.wait();
            sumac::spawn_fifo(move || {
                fib(8);
                done.fetch_add(1, Ordering::SeqCst);
            });
        });
    }
    gate.wait();
    drop(b);
    assert_eq!(
        done.load(Ordering::SeqCst),
        1,
        "the drop let the queued job run"
    );
    drop(a);
}

#[test]
fn a_use_current_thread_pool_runs_joins_and_scopes_as_worker_zero() {
    let pool = common::current_thread_stress_pool(2);
    assert_eq!(pool.current_thread_index(), Some(0));
    assert_eq!(pool.install(|| fib(11)), fib_seq(11));
    let mut hits = [0u8; 6];
    pool.scope(|s| {
        for hit in &mut hits {
            s.spawn(move |_| *hit += 1);
        }
    });
    assert_eq!(hits, [1; 6]);
}

#[test]
fn collecting_and_iterating_owned_values_moves_each_once() {
    on_sharing_pools(|pool| {
        let n = size(40, 2_000);
        let strings: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        let lengths: Vec<usize> =
            pool.install(|| strings.clone().into_par_iter().map(|s| s.len()).collect());
        assert_eq!(lengths, strings.iter().map(String::len).collect::<Vec<_>>());

        let mut out = Vec::new();
        pool.install(|| {
            strings
                .par_iter()
                .map(|s| format!("<{s}>"))
                .collect_into_vec(&mut out)
        });
        assert_eq!(out[n - 1], format!("<{}>", n - 1));

        // A panicking `map` while collecting owned values: nothing leaks or is dropped
        // twice, neither the collected items nor the ones not yet taken.
        let counter = DropCounter::new();
        let tokens: Vec<_> = (0..n).map(|_| counter.token()).collect();
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| {
                tokens
                    .into_par_iter()
                    .enumerate()
                    .map(|(i, token)| {
                        assert!(i != n / 2, "item");
                        token
                    })
                    .collect::<Vec<_>>()
            })
        }));
        assert!(result.is_err());
        assert_eq!(counter.created(), counter.dropped());
    });
}

#[test]
fn drains_remove_exactly_the_range_in_place() {
    on_sharing_pools(|pool| {
        let n = size(30, 1_000);
        let mut vec: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        let drained: Vec<String> = pool.install(|| vec.par_drain(n / 4..n / 2).collect());
        assert_eq!(drained.len(), n / 2 - n / 4);
        assert_eq!(vec.len(), n - drained.len());
        assert_eq!(drained[0], (n / 4).to_string());
        assert_eq!(vec[n / 4], (n / 2).to_string());

        // A drain dropped unused, and one whose consumer panics part-way.
        let counter = DropCounter::new();
        let mut tokens: Vec<_> = (0..n).map(|_| counter.token()).collect();
        drop(tokens.par_drain(2..n - 2));
        assert_eq!(tokens.len(), 4);
        tokens.extend((0..n).map(|_| counter.token()));
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| {
                tokens.par_drain(1..).enumerate().for_each(|(i, token)| {
                    assert!(i != n / 3, "drained item");
                    drop(token);
                })
            })
        }));
        assert!(result.is_err());
        assert_eq!(tokens.len(), 1);
        drop(tokens);
        assert_eq!(counter.created(), counter.dropped());

        // A wrapped deque, drained in place (a long range) and gathered (a short one).
        let mut deque: VecDeque<String> = (0..n).map(|i| i.to_string()).collect();
        deque.rotate_left(n / 3);
        let mut expected = deque.clone();
        let long: Vec<String> = pool.install(|| deque.par_drain(1..n - 1).collect());
        assert_eq!(long, expected.drain(1..n - 1).collect::<Vec<_>>());
        assert_eq!(deque, expected);
        let mut deque: VecDeque<String> = (0..n).map(|i| i.to_string()).collect();
        deque.rotate_right(n / 3);
        let mut expected = deque.clone();
        let short: Vec<String> = pool.install(|| deque.par_drain(2..4).collect());
        assert_eq!(short, expected.drain(2..4).collect::<Vec<_>>());
        assert_eq!(deque, expected);

        let mut text: String = (0..n)
            .map(|i| char::from_u32(0x3b1 + i as u32).unwrap())
            .collect();
        let mut expected = text.clone();
        let start = text.char_indices().nth(3).unwrap().0;
        let end = text.char_indices().nth(n - 3).unwrap().0;
        let chars: String = pool.install(|| text.par_drain(start..end).collect());
        assert_eq!(chars, expected.drain(start..end).collect::<String>());
        assert_eq!(text, expected);
    });
}

#[test]
fn parallel_sorts_keep_every_element_once() {
    on_sharing_pools(|pool| {
        // Above both sorts' sequential cut-offs (lowered under Miri), so that their
        // parallel merges and partitions run.
        let n = size(500, 40_000);
        let keys: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761) % 1_000)
            .collect();
        let mut stable: Vec<(u32, usize)> = keys.iter().copied().zip(0..).collect();
        pool.install(|| stable.par_sort_by_key(|&(key, _)| key));
        let mut expected: Vec<(u32, usize)> = keys.iter().copied().zip(0..).collect();
        expected.sort_by_key(|&(key, _)| key);
        assert_eq!(stable, expected);

        let mut boxed: Vec<Box<u32>> = keys.iter().map(|&k| Box::new(k)).collect();
        pool.install(|| boxed.par_sort_unstable());
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        assert!(boxed.iter().map(|b| **b).eq(sorted.iter().copied()));

        // A comparator that panics part-way: every element is still there, once.
        let mut boxed: Vec<Box<u32>> = keys.iter().map(|&k| Box::new(k)).collect();
        let calls = AtomicUsize::new(0);
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| {
                boxed.par_sort_by(|a, b| {
                    assert!(calls.fetch_add(1, Ordering::Relaxed) != 2 * n, "comparator");
                    a.cmp(b)
                })
            })
        }));
        assert!(result.is_err());
        let mut after: Vec<u32> = boxed.iter().map(|b| **b).collect();
        after.sort_unstable();
        assert_eq!(after, sorted);
    });
}

#[test]
fn mutable_chunks_and_zips_write_disjoint_pieces() {
    on_sharing_pools(|pool| {
        let n = size(50, 5_000);
        let mut data = vec![0usize; n];
        pool.install(|| {
            data.par_chunks_mut(3)
                .enumerate()
                .for_each(|(i, chunk)| chunk.iter_mut().for_each(|x| *x = i))
        });
        assert!(data.iter().enumerate().all(|(j, &x)| x == j / 3));
        let mut sums = vec![0usize; n];
        pool.install(|| {
            sums.par_iter_mut()
                .zip(data.par_iter())
                .zip(0..n)
                .for_each(|((s, &d), i)| *s = d + i)
        });
        assert!(sums.iter().enumerate().all(|(j, &s)| s == j / 3 + j));
    });
}

// ------------------------------------------------------------------ channels and tasks

/// Every channel flavor between threads, with messages that own heap memory (so a
/// double drop or a use after free shows): the lock-free queues, the rendezvous hooks
/// and their cells, and the drop of what is left queued.
#[test]
fn channel_messages_cross_threads_and_leftovers_are_dropped_once() {
    use sumac::channel::{bounded, unbounded};
    let n = size(20, 2000);
    for capacity in [None, Some(0), Some(1), Some(4)] {
        let (sender, receiver) = match capacity {
            None => unbounded::<Box<usize>>(),
            Some(cap) => bounded(cap),
        };
        std::thread::scope(|s| {
            let sender = &sender;
            s.spawn(move || {
                for i in 0..n {
                    sender.send(Box::new(i)).unwrap();
                }
            });
            let mut sum = 0;
            for _ in 0..n {
                sum += *receiver.recv().unwrap();
            }
            assert_eq!(sum, n * (n - 1) / 2);
        });
    }
    let counter = DropCounter::new();
    let (sender, receiver) = unbounded();
    for _ in 0..3 {
        sender.send(counter.token()).unwrap();
    }
    drop(receiver);
    assert_eq!(counter.dropped(), 3);
}

/// Async sends and receives that suspend (rendezvous hooks with wakers, wait-list
/// entries), including futures dropped while queued.
#[test]
fn async_channel_operations_suspend_resume_and_withdraw() {
    use std::future::Future;
    use std::task::{Context, Waker};
    use sumac::channel::{bounded, unbounded};
    let mut cx = Context::from_waker(Waker::noop());
    for capacity in [Some(0), Some(1)] {
        let (sender, receiver) = bounded::<Box<u32>>(capacity.unwrap());
        if capacity == Some(1) {
            sender.send(Box::new(0)).unwrap();
        }
        let mut send = Box::pin(sender.send_async(Box::new(1)));
        assert!(send.as_mut().poll(&mut cx).is_pending());
        drop(send); // withdrawn: its message is dropped with it
        let mut recv = Box::pin(receiver.recv_async());
        if capacity == Some(0) {
            assert!(recv.as_mut().poll(&mut cx).is_pending());
            sender
                .send_timeout(Box::new(2), std::time::Duration::ZERO)
                .unwrap();
            assert_eq!(*sumac::block_on(recv).unwrap(), 2);
        } else {
            assert_eq!(*sumac::block_on(recv).unwrap(), 0);
        }
    }
    let (sender, receiver) = unbounded::<Box<u32>>();
    let task = sumac::spawn_future(async move { *receiver.recv_async().await.unwrap() });
    sender.send(Box::new(7)).unwrap();
    assert_eq!(task.join(), 7);
}

/// The oneshot's cells: a value sent to a live, a waiting and a dropped receiver, and a
/// sender dropped under a waiting receiver.
#[test]
fn oneshot_cells_hand_their_value_over_once() {
    use sumac::channel::oneshot;
    let (sender, receiver) = oneshot::<Box<u32>>();
    let waiter = std::thread::spawn(move || receiver.recv());
    sender.send(Box::new(5)).unwrap();
    assert_eq!(*waiter.join().unwrap().unwrap(), 5);
    let (sender, receiver) = oneshot::<Box<u32>>();
    drop(receiver);
    assert_eq!(*sender.send(Box::new(6)).unwrap_err().0, 6);
    let (sender, receiver) = oneshot::<Box<u32>>();
    let waiter = std::thread::spawn(move || sumac::block_on(receiver));
    drop(sender);
    assert!(waiter.join().unwrap().is_err());
    let (sender, receiver) = oneshot::<Box<u32>>();
    sender.send(Box::new(8)).unwrap();
    drop(receiver); // the value is dropped here, once
}

/// Async tasks on a sharing pool: the task job in the task's metadata is queued, taken
/// and run again across workers, tasks wake each other, are cancelled and panic.
#[test]
fn tasks_are_requeued_through_their_metadata_job_across_workers() {
    use sumac::channel::bounded;
    on_sharing_pools(|pool| {
        let hops = size(30, 3000);
        let (to_b, from_a) = bounded::<usize>(1);
        let (to_a, from_b) = bounded::<usize>(1);
        let a = pool.spawn_future(async move {
            for i in 0..hops {
                to_b.send_async(i).await.unwrap();
                assert_eq!(from_b.recv_async().await.unwrap(), i + 1);
            }
        });
        let b = pool.spawn_future(async move {
            while let Ok(i) = from_a.recv_async().await {
                to_a.send_async(i + 1).await.unwrap();
            }
        });
        a.join();
        b.join();
        let (_keep, never) = bounded::<()>(1);
        let cancelled = pool.spawn_future(async move {
            let _ = never.recv_async().await;
        });
        drop(cancelled);
        let panicking = pool.spawn_future(async { panic!("task panic") });
        let payload = panic::catch_unwind(AssertUnwindSafe(|| panicking.join())).unwrap_err();
        assert_eq!(panic_message(&*payload), "task panic");
    });
}

/// Scoped futures: tasks that borrow from the stack, write through their borrows on
/// other workers, panic, and are dropped before the scope returns.
#[test]
fn scoped_futures_write_through_their_borrows_before_the_scope_returns() {
    use sumac::channel::unbounded;
    on_sharing_pools(|pool| {
        let mut slots = vec![Box::new(0usize); 4];
        let (sender, receiver) = unbounded::<usize>();
        pool.scope(|s| {
            for slot in slots.iter_mut() {
                let receiver = receiver.clone();
                s.spawn_future(async move {
                    **slot = receiver.recv_async().await.unwrap() + 1;
                });
            }
            s.spawn(move |_| (0..4).for_each(|i| sender.send(i).unwrap()));
        });
        let mut values: Vec<usize> = slots.iter().map(|slot| **slot).collect();
        values.sort_unstable();
        assert_eq!(values, [1, 2, 3, 4]);
        let payload = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.scope(|s| s.spawn_future(async { panic!("scoped panic") }));
        }))
        .unwrap_err();
        assert_eq!(panic_message(&*payload), "scoped panic");
    });
}

/// Task graphs: closures stored inline and boxed, moved out to run or dropped unrun,
/// slots reused under new generations, dependencies released across workers, panics,
/// cancellation, re-runs and a dedicated channel served by this thread.
#[test]
fn task_graphs_run_drop_and_reuse_their_slots() {
    use sumac::graph::{Before, Task, TaskGraph, WaitError};
    for threads in [1, 2] {
        let pool = stress_pool(threads);
        let graph = TaskGraph::builder()
            .max_tasks(6)
            .max_dependencies(6)
            .dedicated_channels(1)
            .pool(&pool)
            .build()
            .unwrap();
        let drops = DropCounter::new();
        let sum = std::sync::Arc::new(AtomicUsize::new(0));
        for round in 0..size(2, 20) {
            // A diamond, one closure boxed (too big to sit in its slot).
            let (s1, s2, s3) = (sum.clone(), sum.clone(), sum.clone());
            let token = drops.token();
            let a = graph
                .create(move |_| drop((s1.fetch_add(1, Ordering::SeqCst), token)))
                .unwrap();
            let big = [round; 8];
            let b = graph
                .create(move |_| {
                    s2.fetch_add(big[0] - round + 1, Ordering::SeqCst);
                })
                .unwrap();
            let c = graph
                .create(move |t: &Task<'_, 'static>| {
                    s3.fetch_add(1, Ordering::SeqCst);
                    // A task made by a task.
                    let s4 = s3.clone();
                    let d = t
                        .graph()
                        .create(move |_| {
                            s4.fetch_add(1, Ordering::SeqCst);
                        })
                        .unwrap();
                    t.graph().ready(&[d]).unwrap();
                })
                .unwrap();
            graph.add_dependencies(c, &[a, b]).unwrap();
            // Readied and waited for from inside the pool: the caller runs them.
            pool.install(|| {
                graph.ready(&[c, a, b]).unwrap();
                graph.wait_all()
            })
            .unwrap();
            // A panic cancels its dependent, whose closure is dropped unrun.
            let token = drops.token();
            let bad = graph.create(|_| panic!("miri")).unwrap();
            let cancelled = graph.create(move |_| drop(token)).unwrap();
            graph.add_dependencies(cancelled, &[bad]).unwrap();
            graph.ready(&[cancelled, bad]).unwrap();
            assert!(matches!(graph.wait_all(), Err(WaitError::Failed(_))));
            // A linked batch after an outside task, and one refused whole (its closure
            // dropped unrun).
            let first = graph.create(|_| ()).unwrap();
            let step = |token: DropToken| {
                let s = sum.clone();
                move |_: &Task<'_, 'static>| drop((s.fetch_add(1, Ordering::SeqCst), token))
            };
            let linked = [
                (step(drops.token()), [Before::Task(first)]),
                (step(drops.token()), [Before::InBatch(0)]),
            ];
            graph.create_linked_batch(linked, true).unwrap();
            let refused = [(step(drops.token()), [Before::InBatch(0)])];
            assert!(graph.create_linked_batch(refused, true).is_err());
            graph.ready(&[first]).unwrap();
            graph.wait_all().unwrap();
        }
        assert_eq!(sum.load(Ordering::SeqCst), size(2, 20) * 6);
        // A task that blocks on a channel receive hands on what its thread kept (the
        // sender, released by the same root, may be there).
        let (send, receive) = sumac::channel::unbounded::<usize>();
        let root = graph.create(|_| ()).unwrap();
        let receiver = graph
            .create(move |_| assert_eq!(receive.recv().unwrap(), 1))
            .unwrap();
        let sender = graph.create(move |_| send.send(1).unwrap()).unwrap();
        graph.add_dependencies(receiver, &[root]).unwrap();
        graph.add_dependencies(sender, &[root]).unwrap();
        graph.ready(&[sender, receiver, root]).unwrap();
        graph.wait_all().unwrap();
        // Never readied, on a dedicated channel, reusable: dropped with the graph.
        let main = graph.dedicated_channel(0).unwrap();
        let token = drops.token();
        let here = graph.create_on(main, move |_| drop(token)).unwrap();
        graph.ready(&[here]).unwrap();
        assert!(graph.execute_one(main).unwrap());
        let token = drops.token();
        let again = graph
            .create_reusable(move |_| {
                let _ = &token;
            })
            .unwrap();
        graph.ready(&[again]).unwrap();
        graph.wait_all().unwrap();
        graph.rerun().unwrap();
        graph.wait_all().unwrap();
        let token = drops.token();
        graph.create(move |_| drop(token)).unwrap();
        drop(graph);
        assert_eq!(drops.created(), drops.dropped());
    }
}
