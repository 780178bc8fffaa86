//! Loom models of whole pools: the production `ThreadPoolBuilder::build`, `Registry`,
//! `WorkerThread`, `worker_main`, `join`, `scope`, `spawn`, `broadcast`, the heartbeat's
//! tick (promotion, rescue, the release of kept tasks), sleep and wake-up, and shutdown,
//! on loom threads.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p sumac --lib --profile release-test loom_pool -- --test-threads=1`.
//!
//! # How a model drives a pool
//! Under `cfg(loom)`, `crate::sync` gives the pool loom's threads, thread-locals and a
//! model clock (see `sync::time`: every spin limit and rate limit passes after a reading
//! or two), and the pool starts no heartbeat thread: a model that needs ticks runs
//! `heartbeat::tick` on a model thread of its own ([`ticking`]), so a promotion, a rescue
//! or a task's release can fall between any two steps of the workers.
//!
//! A model that needs a member to do something at a chosen point (fork, spawn into its
//! own deques, wake a task) builds its pool with `use_current_thread`: the model's thread
//! is worker 0 and calls `join`, `scope` or `install` as a worker, while the other
//! workers run the production worker loop. Mechanisms a model is not about are switched
//! off (`Mechanism`), so that each model's interleavings are spent on its hand-off; every
//! model that shares work checks, after exploring, that some execution did share it
//! ([`Seen`]), so that a model cannot pass by never reaching its subject.
//!
//! Every model drops its pool at the end, so the production shutdown (terminate, wake
//! every member, join the workers) runs in every execution. Under loom,
//! `crate::sync::deque` replaces crossbeam's deques by a lock-based stand-in with the
//! same interface: crossbeam checks its deque, these models check what sumac builds on
//! it.
//!
//! # Tasks
//! async-task hands a task's state between threads with std atomics, which loom does
//! not see, so no loom object may cross threads only through async-task: the tasks here
//! are detached and send their result through a sumac channel (loom-visible), and the
//! task's job header, which async-task frees, is never dropped (`sync::FreedUnseen`).
//! What loom sees of a task is all of sumac's part: `schedule` from the waking thread,
//! the queues, the `NextTask` slot, the heartbeat's release and `run_task_job`.
//!
//! # What a failure looks like
//! See `loom_tests`: a write not ordered before its reader's read ([`Slot`]), a lost
//! wake-up (a deadlock), a job left queued (a leak), or a failed assertion; the failing
//! execution's steps are printed.

use std::sync::atomic::Ordering;

use loom::sync::atomic::AtomicUsize;
use loom::sync::Arc;
use loom::thread;

use crate::channel::{self, oneshot};
use crate::heartbeat;
use crate::loom_tests::{model, note, Slot};
use crate::policy::Mechanism;
use crate::{ThreadPool, ThreadPoolBuilder};

// ---------------------------------------------------------------------------------------
// Model plumbing
// ---------------------------------------------------------------------------------------

/// A builder of `threads` workers for a model, with callers from outside handing their
/// calls to a worker (no guests: each guest is one more member to explore).
fn builder(threads: usize) -> ThreadPoolBuilder {
    ThreadPoolBuilder::new()
        .num_threads(threads)
        .mechanism(Mechanism::Guests, false)
}

/// A pool of `threads` workers for a model (see [`builder`]).
fn pool(threads: usize) -> ThreadPool {
    builder(threads).build().expect("a model pool builds")
}

/// A pool of `threads` workers whose worker 0 is the model's thread, sharing forks at
/// the first heartbeat after they were recorded (no age rule, no rate limits) and not
/// rescuing them unless `rescue`.
fn pool_on_this_thread(threads: usize, rescue: bool) -> ThreadPool {
    builder(threads)
        .use_current_thread()
        .mechanism(Mechanism::AgeRule, false)
        .mechanism(Mechanism::WorkerRateLimit, false)
        .mechanism(Mechanism::PoolRateLimit, false)
        .mechanism(Mechanism::Rescue, rescue)
        .build()
        .expect("a model pool builds")
}

/// A one-thread pool whose callers from outside take part (as guests): the caller is
/// the pool's one thread while its call runs.
fn one_thread_pool_with_guests() -> ThreadPool {
    builder(1)
        .mechanism(Mechanism::Guests, true)
        .build()
        .expect("a model pool builds")
}

/// A model thread that runs `ticks` heartbeat ticks on `pool`.
fn ticking(pool: &ThreadPool, ticks: usize) -> thread::JoinHandle<()> {
    // A std `Arc`: its count hands nothing off.
    let registry = std::sync::Arc::clone(pool.registry());
    thread::spawn(move || {
        let mut quiet = heartbeat::quiet_members(registry.workers.len());
        for _ in 0..ticks {
            heartbeat::tick(&registry, &mut quiet);
        }
    })
}

/// A closure for `b` that counts its runs, notes (in `seen`) a run on a thread other
/// than worker `owner`, writes `value` into a fresh slot and returns `value`; and the
/// counter and slot, to check on it afterwards.
#[allow(clippy::type_complexity)]
fn checked_closure(
    value: usize,
    owner: usize,
    seen: &'static Seen,
) -> (impl FnOnce() -> usize + Send, Arc<AtomicUsize>, Arc<Slot>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let slot = Slot::new();
    let closure = {
        let (runs, slot) = (Arc::clone(&runs), Arc::clone(&slot));
        move || {
            note(format_args!("closure {value} runs"));
            if crate::current_thread_index() != Some(owner) {
                seen.mark();
            }
            runs.fetch_add(1, Ordering::Relaxed);
            slot.write(value);
            value
        }
    };
    (closure, runs, slot)
}

/// Checks, once the wait for `checked_closure(value)` returned `result`, that the
/// closure ran exactly once and that its run happened before the wait returned.
fn check_ran_once(value: usize, result: usize, runs: &AtomicUsize, slot: &Slot) {
    assert_eq!(result, value, "the wait returned the closure's result");
    // Relaxed on purpose: only the hand-off's happens-before edge makes the run visible.
    assert_eq!(
        runs.load(Ordering::Relaxed),
        1,
        "the closure ran exactly once"
    );
    assert_eq!(
        slot.read(),
        value,
        "the closure's write happened before its wait returned"
    );
}

/// Counts the executions of a model in which its subject happened (a fork ran on
/// another worker, a fork was rescued): checked after exploring, so that a model that
/// never reaches its hand-off fails instead of passing. A std atomic, outside the model.
struct Seen(std::sync::atomic::AtomicUsize);

impl Seen {
    const fn new() -> Seen {
        Seen(std::sync::atomic::AtomicUsize::new(0))
    }

    fn mark(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// Fails unless some execution marked `self`; prints in how many.
    fn check_reached(&self, what: &str) {
        let executions = self.0.load(Ordering::Relaxed);
        println!("{what}: in {executions} executions");
        assert!(
            executions > 0,
            "no execution reached the model's subject: {what}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// 1. Forks: recorded by `join`, shared at a heartbeat, rescued from a quiet worker
// ---------------------------------------------------------------------------------------

/// Nested `join`s on worker 0 while a model thread ticks twice and worker 1 runs its
/// loop (starting, spinning, asleep): either fork may be shared at a heartbeat (the
/// tick raised worker 0's flag and worker 1 counts as waiting), then taken by worker 1
/// or taken back by its owner, through the queue or by reclaiming it; every fork runs
/// exactly once, before its join returns, and the promotion's push wakes worker 1 if it
/// sleeps.
#[test]
fn loom_pool_forks_shared_at_a_heartbeat_run_once_whoever_takes_them() {
    static STOLEN: Seen = Seen::new();
    model(Some(4), || nested_joins_on_worker_0(false, &STOLEN));
    STOLEN.check_reached("a fork ran on worker 1");
}

/// Nested `join`s on worker 0 of a two-worker pool (rescue on if `rescue`), whose first
/// closures make no forks, while a model thread ticks twice: both forks run exactly
/// once, before their joins return. Marks `seen` if a fork ran on worker 1 (with
/// `rescue`: if the heartbeat rescued one).
fn nested_joins_on_worker_0(rescue: bool, seen: &'static Seen) {
    static UNCOUNTED: Seen = Seen::new();
    let moved = if rescue { &UNCOUNTED } else { seen };
    let pool = pool_on_this_thread(2, rescue);
    let ticks = ticking(&pool, 2);
    let (outer, runs_outer, slot_outer) = checked_closure(11, 0, moved);
    let (inner, runs_inner, slot_inner) = checked_closure(22, 0, moved);
    let ((), result) = crate::join(
        || {
            let ((), result) = crate::join(|| {}, inner);
            check_ran_once(22, result, &runs_inner, &slot_inner);
        },
        outer,
    );
    check_ran_once(11, result, &runs_outer, &slot_outer);
    if rescue && rescued_on_worker_0(&pool) {
        seen.mark();
    }
    ticks.join().unwrap();
    drop(pool);
}

/// Whether the heartbeat claimed a fork or kept task of worker 0 (read once the work
/// is done).
fn rescued_on_worker_0(pool: &ThreadPool) -> bool {
    pool.registry().workers[0]
        .counters
        .rescues
        .load(Ordering::Relaxed)
        > 0
}

/// Two owners share into one queue: worker 0 (this thread) joins while a spawned job
/// joins on another worker, a tick raises every flag, and the third worker idles. An
/// owner may see its fork run by the idle worker or by the *other owner* (waiting for
/// its own fork) and be woken by it; every fork runs exactly once.
#[test]
fn loom_pool_two_owners_share_forks_with_one_idle_worker() {
    static STOLEN: Seen = Seen::new();
    model(Some(1), || {
        let pool = pool_on_this_thread(3, false);
        let (other_done, other_result) = oneshot::<()>();
        pool.spawn(move || {
            let owner = crate::current_thread_index().expect("a job runs on a worker");
            let (b, runs, slot) = checked_closure(5, owner, &STOLEN);
            let ((), result) = crate::join(|| {}, b);
            check_ran_once(5, result, &runs, &slot);
            other_done.send(()).unwrap();
        });
        let ticks = ticking(&pool, 1);
        let (b, runs, slot) = checked_closure(7, 0, &STOLEN);
        let ((), result) = crate::join(|| {}, b);
        check_ran_once(7, result, &runs, &slot);
        assert_eq!(other_result.recv(), Ok(()));
        ticks.join().unwrap();
        drop(pool);
    });
    STOLEN.check_reached("a fork ran away from its owner");
}

/// `join(a, b)` on worker 0 whose `a` never polls, while a model thread ticks twice
/// with rescue on: the second tick finds the worker quiet with `b` on offer and claims
/// it for the waiting worker 1, racing the owner's withdrawal when `a` returns; a
/// claimed `b` races the owner's reclaim against worker 1, which the push must wake.
/// `b` runs exactly once, before the join returns, whoever wins each race.
#[test]
fn loom_pool_a_rescued_fork_runs_once_whether_claimed_or_withdrawn() {
    static RESCUED: Seen = Seen::new();
    static UNCOUNTED: Seen = Seen::new();
    model(Some(2), || {
        let pool = pool_on_this_thread(2, true);
        let ticks = ticking(&pool, 2);
        let (b, runs, slot) = checked_closure(7, 0, &UNCOUNTED);
        let ((), result) = crate::join(|| {}, b);
        check_ran_once(7, result, &runs, &slot);
        if rescued_on_worker_0(&pool) {
            RESCUED.mark();
        }
        ticks.join().unwrap();
        drop(pool);
    });
    RESCUED.check_reached("the heartbeat rescued the fork");
}

/// Nested `join`s on worker 0, neither of whose first closures polls: both forks are
/// offered, each in a rescue slot of its own, and the ticks claim them in slot order
/// while the owner withdraws them innermost first. Each fork runs exactly once, and a
/// claimed outer fork stays linked below the inner one until its own join unlinks it.
#[test]
fn loom_pool_forks_rescued_from_two_slots_run_once() {
    static RESCUED: Seen = Seen::new();
    model(Some(2), || nested_joins_on_worker_0(true, &RESCUED));
    RESCUED.check_reached("the heartbeat rescued a fork");
}

/// A job injected from outside while worker 0 waits for a fork that worker 1 took: a
/// push that sees a member searching wakes nobody, and a member that idled in a wait
/// and leaves it because its fork completed must pass such a job on (`hand_off`), or
/// the job stays queued while worker 1 sleeps (loom reports the outsider's deadlock).
#[test]
fn loom_pool_a_job_queued_while_a_searcher_returns_to_its_fork_is_not_stranded() {
    static STOLEN: Seen = Seen::new();
    model(Some(3), || {
        let pool = pool_on_this_thread(2, false);
        let (sender, answer) = oneshot::<u32>();
        let outsider = {
            let registry = std::sync::Arc::clone(pool.registry());
            thread::spawn(move || {
                crate::spawn::spawn_in(&registry, move || sender.send(3).unwrap(), false);
                assert_eq!(answer.recv(), Ok(3), "the injected job ran");
            })
        };
        let ticks = ticking(&pool, 1);
        let (b, runs, slot) = checked_closure(7, 0, &STOLEN);
        let ((), result) = crate::join(|| {}, b);
        check_ran_once(7, result, &runs, &slot);
        // Worker 0 goes back to work of its own, outside the pool.
        outsider.join().unwrap();
        ticks.join().unwrap();
        drop(pool);
    });
    STOLEN.check_reached("the fork ran on worker 1");
}

// ---------------------------------------------------------------------------------------
// 2. Spawned jobs: the injector, a member's own deques, steals, sleep and wake-up
// ---------------------------------------------------------------------------------------

/// A job spawned from outside a one-worker pool runs before dropping the pool returns:
/// the job's live unit keeps the worker from exiting, whether the worker is still
/// starting, spinning or asleep when the job is injected.
#[test]
fn loom_pool_a_job_spawned_from_outside_runs_before_the_drop_returns() {
    model(Some(3), || {
        let pool = pool(1);
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

/// Spawns `jobs` jobs from outside a pool of `threads` workers, each answering through a
/// oneshot, and waits for every answer before the pool is dropped (which would wake
/// everyone): each injection must reach a worker that may be starting, searching or
/// asleep.
fn spawn_and_wait_from_outside(threads: usize, jobs: u32) {
    let pool = pool(threads);
    let answers: Vec<_> = (0..jobs)
        .map(|job| {
            let (sender, answer) = oneshot::<u32>();
            pool.spawn(move || sender.send(job).unwrap());
            answer
        })
        .collect();
    for (job, answer) in (0..jobs).zip(answers) {
        assert_eq!(answer.recv(), Ok(job), "job {job} ran");
    }
    drop(pool);
}

/// An injected job wakes the one worker of a pool, whether it is starting, spinning or
/// asleep when the job arrives.
#[test]
fn loom_pool_a_job_spawned_from_outside_wakes_the_sleeping_worker() {
    model(Some(4), || spawn_and_wait_from_outside(1, 1));
}

/// One job injected while two workers search and go to sleep: whichever of them counts
/// as searching when the job arrives, or sees it in its re-check after registering as a
/// sleeper, the job runs, and nobody is left asleep with it queued.
#[test]
fn loom_pool_a_job_spawned_from_outside_reaches_one_of_two_searching_workers() {
    model(Some(2), || spawn_and_wait_from_outside(2, 1));
}

/// Two jobs injected one at a time into a pool of two idle workers: the wake-ups, the
/// searching count and the wake-up chain of a successful steal get both run.
#[test]
fn loom_pool_two_jobs_spawned_from_outside_both_run_on_two_workers() {
    model(Some(1), || spawn_and_wait_from_outside(2, 2));
}

/// A guest (a thread outside the pool taking part in its scope) spawns a job on its own
/// deque and then blocks in a oneshot, where it runs no jobs (`wait_blocked`), until the
/// job answered; the worker meanwhile searches and goes to sleep, without a place while
/// the guest holds the pool's one place (`guest-place`). The guest's freeing of its place
/// as it sleeps and the worker's sleep see each other (no lost wake-up), the worker
/// steals and runs the job, and the job's wake-up of the guest (a private sleeper) is not
/// lost either.
#[test]
fn loom_pool_a_guests_spawned_job_reaches_a_worker_going_to_sleep() {
    model(Some(3), || {
        let pool = one_thread_pool_with_guests();
        let slot = Slot::new();
        pool.scope(|scope| {
            let (sender, answer) = oneshot::<u32>();
            let slot = &slot;
            scope.spawn(move |_| {
                slot.write(5);
                sender.send(5).unwrap();
            });
            assert_eq!(answer.recv(), Ok(5));
        });
        assert_eq!(
            slot.read(),
            5,
            "the job's write happened before the scope returned"
        );
        drop(pool);
    });
}

/// A thread outside a one-thread pool opens a FIFO scope, spawns a job into it and
/// blocks until the job answers (lending its jobs to the pool's worker, which runs that
/// one), then spawns two more: the caller is the pool's one thread again, so those two
/// run on the caller, in the order they were spawned, although the worker, back from
/// the first job, searches every member's deques meanwhile. (A steal that saw the
/// caller's deques open just before the caller closed them must not take a job pushed
/// after that: the caller waits for such steals to end.)
#[test]
fn loom_pool_a_one_thread_pools_caller_runs_its_spawned_jobs_itself_in_order() {
    model(Some(3), || {
        let pool = one_thread_pool_with_guests();
        let order = loom::sync::Mutex::new(Vec::new());
        pool.scope_fifo(|scope| {
            let (sender, answer) = oneshot::<()>();
            scope.spawn_fifo(move |_| sender.send(()).unwrap());
            assert_eq!(answer.recv(), Ok(()));
            for job in 0..2 {
                let order = &order;
                scope.spawn_fifo(move |_| {
                    let on = crate::current_thread_index();
                    order.lock().unwrap().push((job, on));
                });
            }
        });
        assert_eq!(
            *order.lock().unwrap(),
            [(0, None), (1, None)],
            "both jobs ran on the caller (index None), oldest first"
        );
        drop(pool);
    });
}

/// Worker 0 spawns a job in its scope (on its own deque, LIFO or FIFO) and completes
/// the scope, where its wait pops its own job, while worker 1 may steal it: the job
/// runs exactly once, by either, and the scope returns only after it ran (when worker 1
/// runs it, the count's last decrement wakes worker 0, which may be asleep).
#[test]
fn loom_pool_a_scoped_job_runs_once_whether_its_owner_pops_it_or_a_worker_steals_it() {
    static STOLEN: Seen = Seen::new();
    for fifo in [false, true] {
        model(Some(3), move || {
            let pool = pool_on_this_thread(2, false);
            let (b, runs, slot) = checked_closure(3, 0, &STOLEN);
            let result = AtomicUsize::new(0);
            let body = || result.store(b(), Ordering::Relaxed);
            if fifo {
                pool.scope_fifo(|scope| scope.spawn_fifo(move |_| body()));
            } else {
                pool.scope(|scope| scope.spawn(move |_| body()));
            }
            check_ran_once(3, result.load(Ordering::Relaxed), &runs, &slot);
            drop(pool);
        });
    }
    STOLEN.check_reached("the scoped job ran on worker 1");
}

/// A scope entered from outside a two-worker pool returns only after the job it spawned
/// ran, and sees the job's write (the scope's count latch is the only edge between them).
#[test]
fn loom_pool_a_scope_from_outside_waits_for_its_spawned_job() {
    model(Some(2), || {
        let pool = pool(2);
        let slot = Slot::new();
        pool.scope(|scope| {
            let slot = &slot;
            scope.spawn(move |_| slot.write(7));
        });
        assert_eq!(slot.read(), 7, "the scope returned after its job wrote");
        drop(pool);
    });
}

/// An `in_place_scope` run by a thread outside the pool: its first job, on a worker,
/// spawns a second into the same scope as it finishes, so the worker that runs both
/// owes its decrements and the second job takes the first one's unit over
/// (`CountDebt`). The owner (a thread-owned count latch) returns only after both jobs'
/// writes: a unit taken over while also paid, or paid before its job finished, would
/// let it return early.
#[test]
fn loom_pool_an_in_place_scope_from_outside_waits_for_a_job_its_job_spawned() {
    model(Some(2), || {
        let pool = pool(2);
        let slots = [Slot::new(), Slot::new()];
        pool.in_place_scope(|scope| {
            let slots = &slots;
            scope.spawn(move |scope| {
                slots[0].write(1);
                scope.spawn(move |_| slots[1].write(2));
            });
        });
        note(format_args!("the scope returned"));
        assert_eq!(
            (slots[0].read(), slots[1].read()),
            (1, 2),
            "every job's write happened before the scope returned"
        );
        drop(pool);
    });
}

/// A job spawned from outside a two-worker pool that is dropped at once addresses a
/// job to every worker (`spawn_broadcast` from inside a spawned job). A worker may see
/// the pool terminating with nothing queued before the spawned job ran: it must not
/// exit then, or the job addressed to it would never run. The count of unfinished
/// spawned jobs keeps both workers, and whoever takes it to zero wakes them.
#[test]
fn loom_pool_a_running_spawned_job_keeps_the_workers_it_addresses() {
    model(Some(1), || {
        let pool = pool(2);
        let runs = Arc::new(AtomicUsize::new(0));
        {
            let runs = Arc::clone(&runs);
            pool.spawn(move || {
                note(format_args!("the spawned job addresses every worker"));
                crate::spawn_broadcast(move |_| {
                    runs.fetch_add(1, Ordering::Relaxed);
                });
            });
        }
        drop(pool);
        assert_eq!(
            runs.load(Ordering::Relaxed),
            2,
            "the job addressed to each worker ran before the drop returned"
        );
    });
}

// ---------------------------------------------------------------------------------------
// 3. Calls from outside: `install`, `broadcast`, and a drop of custom-spawned workers
// ---------------------------------------------------------------------------------------

/// `install` from outside a one-worker pool: the call is injected as a job with a lock
/// latch, the caller blocks on the latch, and reads the result and the job's write.
#[test]
fn loom_pool_install_from_outside_returns_after_the_workers_write() {
    model(None, || {
        let pool = pool(1);
        let slot = Slot::new();
        let result = pool.install(|| {
            slot.write(11);
            13
        });
        assert_eq!(result, 13);
        assert_eq!(slot.read(), 11, "the job's write is visible to the caller");
        drop(pool);
    });
}

/// `broadcast` from outside a pool of one worker: the job goes into the worker's inbox
/// while the worker may be starting, spinning, deciding to sleep, or asleep; the caller
/// waits on a count latch. The worker runs the job (no lost wake-up), and the job's
/// write happens before the caller returns.
#[test]
fn loom_pool_a_broadcast_from_outside_reaches_a_sleeping_worker() {
    model(Some(4), || {
        let pool = pool(1);
        let slot = Slot::new();
        let indices = pool.broadcast(|context| {
            slot.write(3);
            context.index()
        });
        assert_eq!(indices, [0]);
        assert_eq!(slot.read(), 3, "the job's write is visible to the caller");
        drop(pool);
    });
}

/// Dropping a pool whose workers a spawn handler started on threads of its own: the
/// drop waits until every handed-out `ThreadBuilder` finished running (no lost wake-up),
/// so the exit handlers' writes happen before it returns.
#[test]
fn loom_pool_the_drop_waits_for_workers_a_spawn_handler_started() {
    model(Some(2), || {
        let slots = Arc::new([Slot::new(), Slot::new()]);
        let pool = {
            let slots = Arc::clone(&slots);
            builder(2)
                .exit_handler(move |index| slots[index].write(index + 1))
                .spawn_handler(|worker| {
                    // Detached: only the pool's drop waits for it.
                    drop(thread::spawn(move || worker.run()));
                    Ok(())
                })
                .build()
                .expect("a model pool builds")
        };
        drop(pool);
        note(format_args!("the drop returned"));
        assert_eq!(
            (slots[0].read(), slots[1].read()),
            (1, 2),
            "both workers finished before the drop returned"
        );
    });
}

// ---------------------------------------------------------------------------------------
// 4. Async tasks: `schedule`, the `NextTask` slot and the heartbeat's release
// ---------------------------------------------------------------------------------------

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
        let pool = pool(1);
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
        let pool = pool(1);
        let (sender, result) = task_adding_one(&pool);
        pool.spawn(move || {
            note(format_args!("the job wakes the task"));
            sender.send(41).unwrap();
        });
        assert_eq!(result.recv(), Ok(42));
        drop(pool);
    });
}

/// Worker 0 wakes two tasks, keeping each in its `NextTask` slot (the second displaces
/// the first to the pool), and then waits for their answers, while a model thread
/// ticks twice and worker 1 idles: a task is run by worker 0 (taken from the slot or
/// the pool), released by the heartbeat to worker 1 (claimed from the slot and
/// injected), or taken from the pool by worker 1, exactly once whichever way.
#[test]
fn loom_pool_kept_tasks_run_once_whether_their_worker_or_the_heartbeat_takes_them() {
    static RELEASED: Seen = Seen::new();
    model(Some(2), || {
        let pool = pool_on_this_thread(2, false);
        let (first, first_result) = task_adding_one(&pool);
        let (second, second_result) = task_adding_one(&pool);
        let ticks = ticking(&pool, 2);
        pool.install(|| {
            first.send(1).unwrap();
            second.send(2).unwrap();
            assert_eq!(first_result.recv(), Ok(2));
            assert_eq!(second_result.recv(), Ok(3));
        });
        if rescued_on_worker_0(&pool) {
            RELEASED.mark();
        }
        ticks.join().unwrap();
        drop(pool);
    });
    RELEASED.check_reached("the heartbeat released a kept task");
}
