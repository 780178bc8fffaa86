//! The heartbeat thread: ticks while some workers are busy and some idle, and rescues
//! the forks of workers that stopped polling (see `SCHEDULER.md`).

use std::thread::{self};
use std::time::{Duration, Instant};

use crate::sync::{self, AtomicBool, Condvar, Mutex, MutexGuard, Ordering};

use crate::job_list::RescueSlot;
use crate::stats::bump;

#[cfg(all(target_os = "linux", not(miri), not(loom)))]
use crate::policy::HEARTBEAT_TIMER_SLACK_NS;
use crate::policy::{Mechanism, HEARTBEAT_LINGER, RESCUE_AFTER_TICKS, SHORTEST_TIMED_WAIT};
use crate::registry::Registry;
use crate::worker::RESCUE_SLOTS;

/// The heartbeat thread's parking spot, and its protocol. The thread announces a park
/// (`parked`) while it holds the lock, checks once more what it parks on, and waits,
/// holding the lock until the wait releases it. A waker changes what the thread checks
/// first and then looks at `parked`. Every access is sequentially consistent (and so
/// ordered under loom too: `sync::order_seq_cst_accesses`): either the thread's check
/// sees the change, or the waker sees the park. The first waker to see a park clears
/// `parked` and wakes the thread (under the lock, so after its wait began); wakers
/// after it, until the thread parks again, find it woken and pay nothing. So a member
/// that calls in again and again while the thread is on its way back from a park makes
/// one system call, not one per call.
pub(crate) struct HeartbeatPark {
    parked: AtomicBool,
    lock: Mutex<()>,
    signal: Condvar,
}

impl HeartbeatPark {
    pub(crate) fn new() -> HeartbeatPark {
        HeartbeatPark {
            parked: AtomicBool::new(false),
            lock: Mutex::new(()),
            signal: Condvar::new(),
        }
    }

    /// Takes the lock under which the heartbeat thread decides whether to park.
    pub(crate) fn lock(&self) -> MutexGuard<'_, ()> {
        sync::lock(&self.lock)
    }

    /// Waits (the lock released meanwhile) until woken or `timeout` passed (`None`:
    /// until woken), without announcing a park: no member's work needs a wake-up.
    pub(crate) fn wait_timeout<'a>(
        &self,
        guard: MutexGuard<'a, ()>,
        timeout: Option<Duration>,
    ) -> MutexGuard<'a, ()> {
        match timeout {
            Some(timeout) => sync::wait_timeout(&self.signal, guard, timeout),
            None => sync::wait(&self.signal, guard),
        }
    }

    /// Parks until a waker wakes the thread, unless `needed()` holds once the park is
    /// announced. Returns the lock and whether the thread waited.
    pub(crate) fn park<'a>(
        &self,
        guard: MutexGuard<'a, ()>,
        needed: impl Fn() -> bool,
    ) -> (MutexGuard<'a, ()>, bool) {
        self.parked.store(true, Ordering::SeqCst);
        sync::order_seq_cst_accesses();
        if needed() {
            self.parked.store(false, Ordering::SeqCst);
            return (guard, false);
        }
        let guard = sync::wait(&self.signal, guard);
        self.parked.store(false, Ordering::SeqCst);
        (guard, true)
    }

    /// Whether the heartbeat thread announced a park that no waker has ended yet. Call
    /// after changing what it parks on.
    #[inline]
    pub(crate) fn is_parked(&self) -> bool {
        sync::order_seq_cst_accesses();
        self.parked.load(Ordering::SeqCst)
    }

    /// Wakes the heartbeat thread if it parked and no other waker is waking it already;
    /// returns whether this call woke it. Call after changing what it parks on.
    #[inline]
    pub(crate) fn wake_if_parked(&self) -> bool {
        if self.is_parked() && self.parked.swap(false, Ordering::SeqCst) {
            self.wake();
            true
        } else {
            false
        }
    }

    /// Wakes the heartbeat thread from a park or a timed wait (taking the lock it
    /// decides under, so that the wake-up cannot fall between its check and its wait).
    #[cold]
    pub(crate) fn wake(&self) {
        let _guard = sync::lock(&self.lock);
        self.signal.notify_all();
    }
}

/// The heartbeat thread: ticks while some members are busy and some workers idle, unless
/// a member spinning for work ticks in its stead (`spinners-tick`); once the pool went
/// idle it lingers for [`HEARTBEAT_LINGER`] (looking once per interval, without ticking),
/// then parks until a worker or a guest wakes it. Otherwise, with nothing to tick for,
/// it parks at once: whoever makes a tick needed wakes it (`Registry::unpark_heartbeat`).
///
/// Ticks are at least one interval apart, counted from the previous tick (whoever made
/// it), not from the end of a park: after a park of a whole interval or more (every
/// worker was busy), the first tick comes at once. A fork recorded during the park
/// carries the epoch of the last tick before it, so this immediate tick still happens
/// after the fork was recorded, and the fork is shared at the tick after it, one whole
/// interval later: the rule "shared only after waiting through a whole interval" holds,
/// and a worker that runs out of work after a busy phase waits one interval for a fork
/// instead of two.
pub(crate) fn heartbeat_main(registry: &Registry) {
    if registry.mechanisms.has(Mechanism::TimerSlack) {
        wake_on_time();
    }
    let park = &registry.heartbeat_park;
    let mut last_useful = Instant::now();
    let linger = registry.mechanisms.has(Mechanism::Linger);
    let linger_period = registry.heartbeat_interval.max(SHORTEST_TIMED_WAIT);
    loop {
        let mut parked = false;
        {
            let mut guard = park.lock();
            loop {
                if registry.is_terminating() {
                    return;
                }
                if registry.heartbeat_thread_needed() {
                    break;
                }
                if linger && registry.pool_idle() && last_useful.elapsed() < HEARTBEAT_LINGER {
                    // Look again in a while, without ticking: nobody needs to wake us.
                    guard = park.wait_timeout(guard, Some(linger_period));
                    continue;
                }
                let (relocked, waited) = park.park(guard, || {
                    registry.heartbeat_thread_needed() || registry.is_terminating()
                });
                guard = relocked;
                parked |= waited;
            }
        }
        if parked {
            // Outside the park's lock: a ticking member holds the rescue state's lock
            // while it ticks, and must never wait for the park's.
            registry.forget_quiet_members();
        }
        last_useful = Instant::now();
        pause_until(registry, registry.next_tick_due());
        if registry.is_terminating() {
            return;
        }
        registry.tick_if_due();
    }
}

/// What the heartbeat thread remembers of each member from one tick to the next.
pub(crate) fn quiet_members(members: usize) -> Vec<QuietWorker> {
    vec![QuietWorker::default(); members]
}

/// One tick: advances the epoch, rescues the forks of members that stopped polling and
/// the tasks kept too long, and raises every member's heartbeat flag. Ticks never
/// overlap: `Registry::tick_if_due` holds the lock of `quiet`. (The loom models call it
/// from a model thread of their own.)
pub(crate) fn tick(registry: &Registry, quiet: &mut [QuietWorker]) {
    let ticks = registry.epoch_ticks.load(Ordering::Relaxed);
    registry.epoch_ticks.store(ticks + 1, Ordering::Relaxed);
    if registry.mechanisms.has(Mechanism::Rescue) {
        rescue_quiet_workers(registry, quiet);
    }
    release_waiting_tasks(registry, quiet);
    for worker in registry.workers.iter() {
        if !worker.heartbeat.load(Ordering::Relaxed) {
            worker.heartbeat.store(true, Ordering::Relaxed);
        }
    }
}

/// Asks the OS to end the calling thread's timed waits within
/// [`HEARTBEAT_TIMER_SLACK_NS`] of their deadline (`timer-slack`). Linux lets a timed
/// wait overrun by the thread's *timer slack*, 50 µs by default, to batch wake-ups, which
/// would stretch every interval. The thread waits on a timer only while some workers are
/// busy and some idle; otherwise it parks without a timeout, so an idle pool never wakes.
fn wake_on_time() {
    #[cfg(all(target_os = "linux", not(miri), not(loom)))]
    {
        // SAFETY: PR_SET_TIMERSLACK takes one unsigned long (the slack in nanoseconds)
        // and changes only the calling thread's timer slack; it reads and writes no
        // memory of ours. A failure (an old kernel) leaves the default slack, which is
        // only slower.
        unsafe {
            libc::prctl(
                libc::PR_SET_TIMERSLACK,
                HEARTBEAT_TIMER_SLACK_NS as libc::c_ulong,
            );
        }
    }
}

/// What the heartbeat thread saw of a worker at the previous tick.
#[derive(Clone, Copy, Default)]
pub(crate) struct QuietWorker {
    /// The worker's counts of handled heartbeats and of forks (`None` after a park, when
    /// they are not yet known).
    handled: Option<(u64, u64)>,
    /// The jobs in its rescue slots (compared by address only, never dereferenced; 0
    /// for an empty slot).
    offered: [usize; RESCUE_SLOTS],
    /// Consecutive ticks at which none of these had changed, with a job on offer.
    ticks: u32,
    /// The task in its [`NextTask`](crate::job_list::NextTask) slot (compared by address
    /// only; 0 for none).
    next_task: usize,
}

/// The heartbeat thread's side of the rescue protocol (see [`RescueSlot`]): a worker
/// whose counts of handled heartbeats and of forks have not moved for
/// [`RESCUE_AFTER_TICKS`] ticks, while the same forks sat in its offer, has neither
/// polled its (raised) flag nor forked since: it is deep in code that makes no forks.
/// (The fork count also tells a fork offered again at the same stack address, by a
/// worker that forks without handling a heartbeat, from one that sat there.) While some
/// workers wait for work, its offered forks are claimed and shared through the queue,
/// one per waiting worker, as its own heartbeat would have promoted them. Slots are
/// taken in order, which is the order the forks were recorded in unless a promotion
/// freed a slot below a younger fork.
pub(crate) fn rescue_quiet_workers(registry: &Registry, quiet: &mut [QuietWorker]) {
    for (worker, quiet) in registry.workers.iter().zip(quiet) {
        let offered = worker.rescue.each_ref().map(RescueSlot::offered_addr);
        let handled = (
            worker.counters.heartbeats.load(Ordering::Relaxed),
            worker.counters.forks.total(),
        );
        if offered == [0; RESCUE_SLOTS]
            || quiet.handled != Some(handled)
            || quiet.offered != offered
        {
            *quiet = QuietWorker {
                handled: Some(handled),
                offered,
                ticks: 0,
                next_task: quiet.next_task,
            };
            continue;
        }
        quiet.ticks = quiet.ticks.saturating_add(1);
        if quiet.ticks < RESCUE_AFTER_TICKS {
            continue;
        }
        for (slot, seen) in worker.rescue.iter().zip(&mut quiet.offered) {
            if *seen == 0 {
                continue;
            }
            if registry.workers_waiting() == 0 {
                break;
            }
            // Only the fork seen at the previous ticks: if the worker moved on meanwhile
            // and offered another, it forked, and the new one is young.
            if let Some(job) = slot.claim_if(*seen) {
                // Counted before the push, so that whoever sees the job done sees the
                // count.
                bump(&worker.counters.rescues, 1);
                registry.share_forks([job]);
            }
            // Claimed now, or withdrawn (or replaced) meanwhile: the next tick compares
            // the slot afresh.
            *seen = 0;
        }
    }
}

/// The heartbeat thread's side of [`NextTask`](crate::job_list::NextTask): a task that
/// sat in a worker's slot from one tick to the next (its worker is deep in a long job)
/// goes to the injector while some workers wait for work, where any of them takes it.
/// (A task seen at two ticks may have run and been woken again in between: moving it
/// then costs a steal, never a task.)
fn release_waiting_tasks(registry: &Registry, quiet: &mut [QuietWorker]) {
    for (worker, quiet) in registry.workers.iter().zip(quiet) {
        let waiting = worker.next_task.waiting_addr();
        if waiting == 0 || waiting != quiet.next_task || registry.workers_waiting() == 0 {
            quiet.next_task = waiting;
            continue;
        }
        if let Some(task) = worker.next_task.claim_if(waiting) {
            bump(&worker.counters.rescues, 1);
            registry.queues.inject(task);
        }
        quiet.next_task = 0;
    }
}

/// Waits until `deadline` (the next tick). OS sleeps are only accurate to tens of
/// microseconds, so with very short intervals (used by stress tests) this yields in a
/// loop instead. Longer waits happen on the parking condition variable, so that dropping
/// the pool does not wait out a long interval (other notifications on it do not shorten
/// the wait). No deadline (an interval too long to add to the clock, `Duration::MAX`)
/// waits until the pool ends.
fn pause_until(registry: &Registry, deadline: Option<Instant>) {
    if registry.heartbeat_interval < SHORTEST_TIMED_WAIT {
        while deadline.is_some_and(|deadline| Instant::now() < deadline) {
            thread::yield_now();
        }
        return;
    }
    let park = &registry.heartbeat_park;
    let mut guard = park.lock();
    loop {
        if registry.is_terminating() {
            return;
        }
        let timeout = match deadline {
            Some(deadline) => {
                let now = Instant::now();
                if now >= deadline {
                    return;
                }
                Some(deadline - now)
            }
            None => None,
        };
        guard = park.wait_timeout(guard, timeout);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// `wake_on_time` sets the calling thread's timer slack (the heartbeat thread calls
    /// it first thing).
    #[cfg(all(target_os = "linux", not(miri)))]
    #[test]
    fn the_heartbeat_thread_asks_for_a_tight_timer_slack() {
        let slack = std::thread::spawn(|| {
            wake_on_time();
            // SAFETY: PR_GET_TIMERSLACK takes no argument and returns the calling
            // thread's slack; it touches no memory of ours.
            unsafe { libc::prctl(libc::PR_GET_TIMERSLACK) }
        })
        .join()
        .unwrap();
        assert_eq!(u64::try_from(slack).ok(), Some(HEARTBEAT_TIMER_SLACK_NS));
    }

    /// The first waker of a parked heartbeat thread ends the park before it wakes the
    /// thread: a waker after it, before the thread ran again, finds nothing to wake and
    /// takes no lock.
    #[test]
    fn only_the_first_waker_of_a_park_wakes_the_heartbeat_thread() {
        use std::sync::Arc;
        let park = Arc::new(HeartbeatPark::new());
        let parker = {
            let park = Arc::clone(&park);
            std::thread::spawn(move || {
                let guard = park.lock();
                let (_guard, waited) = park.park(guard, || false);
                waited
            })
        };
        while !park.is_parked() {
            std::thread::yield_now();
        }
        // The park was announced under the lock: once we hold it, the parker waits, and
        // it cannot return from its wait, nor the first waker wake it, until we let go.
        let held = park.lock();
        let first_waker = {
            let park = Arc::clone(&park);
            std::thread::spawn(move || park.wake_if_parked())
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while park.is_parked() && Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert!(
            !park.is_parked(),
            "the first waker ends the park before it takes the lock to wake"
        );
        assert!(!park.wake_if_parked(), "a second waker has nothing to wake");
        drop(held);
        assert!(
            first_waker.join().unwrap(),
            "the first waker woke the thread"
        );
        assert!(parker.join().unwrap(), "the thread waited until woken");
    }
}
