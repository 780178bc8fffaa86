//! Loom models of whole pools: the production `Registry`, `WorkerThread` and
//! `worker_main`, built by `ThreadPoolBuilder` on loom threads, with async tasks from
//! `spawn_future`.
//!
//! async-task hands a task's state between threads with std atomics, which loom does
//! not see, so no loom object may cross threads only through async-task: the tasks here
//! are detached and send their result through a sumac channel (loom-visible), and the
//! task's job header, which async-task frees, is never dropped (`sync::FreedUnseen`).
//! What loom sees of a task is all of sumac's part: `schedule` from the waking thread,
//! the queues, the `NextTask` slot, the heartbeat's release and `run_task_job`.
//!
//! Under `cfg(loom)`, `crate::sync` gives the pool loom's threads, thread-locals and a
//! model clock (see `sync::time`), and the pool starts no heartbeat thread (a model
//! that needs ticks can run `heartbeat::tick` on a thread of its own; the heartbeat's
//! claim of a kept task is modelled on the production `NextTask` in `loom_tests`). Every model drops
//! its pool at the end, so the production shutdown (terminate, wake every member, join
//! the workers) runs in every execution.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p sumac --lib --release loom_pool -- --test-threads=1`.

use std::sync::atomic::Ordering;

use loom::sync::atomic::AtomicUsize;
use loom::sync::Arc;
use loom::thread;

use crate::channel::{self, oneshot};
use crate::heartbeat;
use crate::loom_tests::{model, note, Slot};
use crate::policy::Mechanism;
use crate::{ThreadPool, ThreadPoolBuilder};

/// A pool of `threads` workers for a model. Callers from outside take part on their own
/// stack only if `guests` (each guest is one more member to explore).
fn pool(threads: usize, guests: bool) -> ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(threads)
        .mechanism(Mechanism::Guests, guests)
        .build()
        .expect("a model pool builds")
}

/// A job spawned from outside a one-worker pool runs before dropping the pool returns:
/// the job's live unit keeps the worker from exiting, whether the worker is still
/// starting, spinning or asleep when the job is injected.
#[test]
fn loom_pool_a_job_spawned_from_outside_runs_before_the_drop_returns() {
    model(Some(3), || {
        let pool = pool(1, false);
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&runs);
        pool.spawn(move || {
            note(format_args!("the spawned job runs"));
            counted.fetch_add(1, Ordering::Relaxed);
        });
        drop(pool);
        assert_eq!(runs.load(Ordering::Relaxed), 1, "the job ran exactly once");
    });
}

/// A scope entered from outside a two-worker pool returns only after the job it spawned
/// ran, and sees the job's write (the scope's count latch is the only edge between them).
#[test]
fn loom_pool_a_scope_from_outside_waits_for_its_spawned_job() {
    model(Some(2), || {
        let pool = pool(2, false);
        let slot = Slot::new();
        pool.scope(|scope| {
            let slot = &slot;
            scope.spawn(move |_| slot.write(7));
        });
        assert_eq!(slot.read(), 7, "the scope returned after its job wrote");
        drop(pool);
    });
}

/// Spawns a detached task on `pool` that waits for a number and answers it plus one:
/// returns where to send the number, and where the answer arrives.
fn task_adding_one(
    pool: &ThreadPool,
) -> (channel::OneshotSender<u32>, channel::OneshotReceiver<u32>) {
    let (sender, receiver) = oneshot::<u32>();
    let (answer, result) = oneshot::<u32>();
    pool.spawn_future(async move { answer.send(receiver.await.unwrap() + 1).unwrap() })
        .detach();
    (sender, result)
}

/// A task woken from a thread outside its pool (a oneshot's send) runs on the pool's
/// worker, and its answer arrives: the production `schedule` (to the injector), the
/// worker's wake-up, `run_task_job` and the task's completion.
#[test]
fn loom_pool_a_task_woken_from_outside_runs_on_the_worker() {
    model(Some(3), || {
        let pool = pool(1, false);
        let (sender, result) = task_adding_one(&pool);
        sender.send(41).unwrap();
        assert_eq!(result.recv(), Ok(42));
        drop(pool);
    });
}

/// A task woken by a job on its own pool's worker is kept in that worker's `NextTask`
/// slot and run once the job returns; its answer arrives.
#[test]
fn loom_pool_a_task_woken_on_its_worker_runs_once_the_waking_job_returns() {
    model(Some(3), || {
        let pool = pool(1, false);
        let (sender, result) = task_adding_one(&pool);
        pool.spawn(move || {
            note(format_args!("the job wakes the task"));
            sender.send(41).unwrap();
        });
        assert_eq!(result.recv(), Ok(42));
        drop(pool);
    });
}

/// A fork recorded by the production `join` on a worker of a two-worker pool, while a
/// model thread ticks twice: the fork is shared at a heartbeat (the tick raised the
/// worker's flag, the fork is a tick old, the other worker waits) and run by the idle
/// worker, or joined back by its owner, exactly once either way; the join returns both
/// results, and the fork's write happened before the join returned.
#[test]
fn loom_pool_a_join_fork_shared_at_a_heartbeat_runs_once() {
    model(Some(2), || {
        let pool = ThreadPoolBuilder::new()
            .num_threads(2)
            .mechanism(Mechanism::Guests, false)
            .mechanism(Mechanism::Rescue, false)
            .build()
            .unwrap();
        let registry = std::sync::Arc::clone(pool.registry());
        let ticking = thread::spawn(move || {
            let mut quiet = heartbeat::quiet_members(&registry);
            for _ in 0..2 {
                heartbeat::tick(&registry, &mut quiet);
            }
        });
        let slot = Slot::new();
        let runs = Arc::new(AtomicUsize::new(0));
        let (a, b) = pool.install(|| {
            crate::join(
                // A nested fork: one more poll of the heartbeat flag after the outer
                // fork was recorded.
                || crate::join(|| 1, || 2),
                || {
                    note(format_args!("the outer fork runs"));
                    runs.fetch_add(1, Ordering::Relaxed);
                    slot.write(3);
                    3
                },
            )
        });
        assert_eq!((a, b), ((1, 2), 3));
        assert_eq!(runs.load(Ordering::Relaxed), 1, "the fork ran once");
        assert_eq!(
            slot.read(),
            3,
            "the fork's write happened before the join returned"
        );
        ticking.join().unwrap();
        drop(pool);
    });
}
