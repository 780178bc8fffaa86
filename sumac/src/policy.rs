//! The sharing policy: every rule that decides whether a fork is recorded, how it is
//! stamped, when it is shared, rescued or rate-limited, and every tuning constant of the
//! scheduler and of the loop driver, each with its reason. `SCHEDULER.md` explains the
//! design these rules implement; `bench/DECISIONS.md` records what each was measured to
//! do.
//!
//! The rules in one place:
//! 1. **Recording.** A worker records a fork on its private list only while fewer than
//!    its [`ForkBudget`] allows wait there (the oldest forks are the ones worth sharing;
//!    deeper forks are two direct calls). Work that has not yet lasted through a
//!    heartbeat gives a slot up with every recorded fork it joins (`budget-shrink`).
//! 2. **Stamping.** Each recorded fork carries a [`Stamp`]: the heartbeat tick it was
//!    recorded in, or "known big" (a loop half whose items were timed), or "long ago"
//!    (the top forks of a job that was itself shared: `old-top-forks`).
//! 3. **Sharing.** At a heartbeat (or an idle worker's request), a worker shares its
//!    oldest forks, one per waiting worker, if the oldest one is eligible
//!    ([`share_now`]): known big, or (`age-rule`) waited through a whole interval, and
//!    not rate-limited (`worker-rate-limit`, `pool-rate-limit`).
//! 4. **Rescue.** A worker that neither forked nor polled for a tick has its recorded
//!    forks claimed by the heartbeat thread, one per waiting worker (`rescue`).
//! 5. **Loops** time their blocks and split the rest in halves at a request; a half
//!    worth [`BIG_WORK_NS`] or more is known big, or, for items cheaper than a clock
//!    read, [`CHEAP_ITEMS_BIG_NS`] of their time net of the clock's
//!    ([`LoopTicks::is_big`]); `first-item-split`, `eager-split` and
//!    `long-item-halving` are the loop's three ways to split before a heartbeat.
//!
//! Every mechanism can be switched off per pool ([`Mechanisms`]), to measure what it does.

use std::cell::Cell;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

// ------------------------------------------------------------------ tuning constants

/// Forks a worker records at least: a heartbeat shares the oldest, so three levels of a
/// recursion give it big pieces while deeper forks stay two direct calls.
pub(crate) const MIN_RECORDED_FORKS: usize = 3;

/// Forks a worker may have recorded at once (and rescue slots per worker): enough for a
/// loop of long items halved down to single items and for log2 of a wide pool's size.
pub(crate) const MAX_RECORDED_FORKS: usize = 8;

/// Spin rounds between two clock reads while an idle worker watches for work: a clock
/// read costs about as much as this many spin hints. (One under loom, where each look
/// is a step to explore and a spin's outcome is that of its last look.)
pub(crate) const SPIN_ROUNDS: u32 = if cfg!(loom) { 1 } else { 64 };

/// An idle worker spins at most this long before it sleeps (or one interval if that is
/// shorter): long enough to catch the next phase of a program of short parallel phases
/// without a futex wake-up, short enough that an idle pool soon burns nothing.
pub(crate) const MAX_SPIN: Duration = Duration::from_micros(200);

/// And at least this long: with stress-test intervals of a microsecond, a spin shorter
/// than a thread's wake-up would only add sleeps.
pub(crate) const MIN_SPIN: Duration = Duration::from_micros(5);

/// A spinning worker renews its request for work this many times per spin, and yields
/// its core between rounds after the first of these periods (so that, with more threads
/// than cores, a woken join owner does not wait for a spinner's core).
pub(crate) const REQUESTS_PER_SPIN: u32 = 8;

/// A worker shares forks of unknown size at most once per this fraction of an interval
/// (`worker-rate-limit`): numerator and denominator.
pub(crate) const WORKER_SHARE_GAP: (u32, u32) = (3, 4);

/// The heartbeat thread's timer slack on Linux (`timer-slack`): its timed waits then end
/// within this of their deadline instead of the default 50 µs.
#[cfg_attr(any(loom, miri), allow(dead_code))]
pub(crate) const HEARTBEAT_TIMER_SLACK_NS: u64 = 1_000;

/// Ticks without a poll after which the heartbeat thread claims a worker's offered
/// forks: its flag was raised after the previous snapshot and only handling it clears
/// it, so one quiet tick means a whole interval without a fork or a poll.
pub(crate) const RESCUE_AFTER_TICKS: u32 = 1;

/// Heartbeat intervals shorter than this are timed by yielding in a loop rather than by
/// an OS timer, whose wake-ups are only accurate to tens of microseconds.
pub(crate) const SHORTEST_TIMED_WAIT: Duration = Duration::from_micros(50);

/// A loop block grows while it takes less than this: polling after each block then costs
/// well under one percent of the block.
pub(crate) const BLOCK_TARGET_NS: u64 = 2_500;

/// A loop block shrinks when it takes more than this, so that a request is answered
/// within a few tens of microseconds.
pub(crate) const BLOCK_LIMIT_NS: u64 = 20_000;

/// Work above which a piece is worth handing to a spinning worker at once, and above
/// which a single loop item counts as long: a thief's start and the owner's wait for it
/// cost a few microseconds together.
pub(crate) const BIG_WORK_NS: u64 = 10_000;

/// A piece of a parallel sort (a range to sort, or two runs to merge) of at least this many
/// elements is a fork worth waking a sleeping member for (`large-forks-at-once`), shared
/// without waiting through an interval: it takes at least one comparison per element,
/// tens of microseconds or more even for integers, several times a wake-up.
pub(crate) const LARGE_SORT_PIECE: usize = 1 << 16;

/// A sort's partition polls the heartbeat flag once per this many elements (a few
/// microseconds of work), so that a request during a long partition is answered at once
/// instead of by the rescue, a tick or two later.
pub(crate) const PARTITION_POLL_ELEMENTS: usize = 1 << 12;

/// For a loop of items cheaper than a clock read (their time known net of the clock's),
/// the work above which half of what is left is shared at once: such a loop splits into
/// halves of equal work, and a spinning thief starts on one within a microsecond or two.
pub(crate) const CHEAP_ITEMS_BIG_NS: u64 = 2_500;

/// At a loop's first split (`small-first-split`), the work above which its upper half is
/// shared at once, whatever its items cost: a phase shorter than two [`BIG_WORK_NS`] (a
/// late LU pivot step) is otherwise never shared, and one hand-off per loop call costs
/// far less than half of it.
pub(crate) const FIRST_SPLIT_BIG_NS: u64 = 2_500;

/// A loop that starts at most this long after a shared fork of its caller came back is
/// the next of back-to-back phases (`next-phase-split`): the fork's thief is then still
/// on its way back to its spin, which takes it well under a microsecond.
pub(crate) const BACK_TO_BACK_NS: u64 = 2_000;

/// How many clock reads' time a loop block must last, net of the clock's own cost,
/// before it rates its items: the reads' jitter is then a small part of it.
pub(crate) const TIMED_BLOCK_READS: u64 = 4;

/// How many clock reads' time a block must last, net of the clock's own cost, before
/// it gives a rough rate (`next-phase-split`): a one-item block's own work (its split,
/// its fold's call) costs about a read, and a clock may advance in steps of a read, so
/// one read beyond the clock's cost is what an item of no cost often measures.
pub(crate) const ROUGH_RATE_READS: u64 = 2;

/// The fastest growth from one block to the next.
pub(crate) const MAX_BLOCK_GROWTH: u64 = 64;

/// The largest block, so that a block of trivial items still ends within microseconds.
pub(crate) const MAX_BLOCK: usize = 1 << 16;

/// After a first item cheaper than a sixteenth of [`BLOCK_TARGET_NS`] and too short for
/// the clock to time (see `timed-growth`), the second block aims at sixteen targets, up
/// to this many items: a short loop of cheap items then runs in two blocks and reads the
/// clock twice.
pub(crate) const MAX_FIRST_GROWTH: u64 = 1024;

/// Loop blocks and pieces start at multiples of this many items from the loop's first
/// item wherever they can: a vectorised item loop over a slice then has the alignment
/// the sequential loop over the whole slice has (16 items are 16 bytes or more, an SSE
/// vector; one item off, every few vector accesses split a cache line).
pub(crate) const ALIGNED_ITEMS: usize = 16;

/// The fewest items a piece must have for its split point to move to a multiple of
/// [`ALIGNED_ITEMS`]: its halves then differ by at most 3%.
pub(crate) const ALIGNED_SPLIT_MIN_ITEMS: usize = 64 * ALIGNED_ITEMS;

/// How many times a piece whose items are known to be long is halved before any of its
/// items runs (`long-item-halving`): up to 64 single items, each a fork an idle worker
/// can take at once, bounded so that a loop whose later items are cheap pays at most 63
/// forks per long item it timed.
pub(crate) const LONG_ITEM_LEVELS: u32 = 6;

/// Seats per pool for threads outside it that call into it (`guests`): each such call
/// runs on its caller's own stack as a member of the pool; callers beyond this many at
/// once hand their work to a worker instead.
pub(crate) const GUEST_SEATS: usize = 8;

/// How long the heartbeat thread keeps looking (once per interval, without ticking)
/// after the pool went idle before it parks for good (`linger`): a program that calls
/// into the pool again soon after finds it awake, without paying a wake-up, and an idle
/// pool still stops burning CPU soon.
pub(crate) const HEARTBEAT_LINGER: Duration = Duration::from_millis(20);

/// The most items a `par_bridge` puller takes from the source per lock: the lock is then
/// held briefly even for a slow source.
pub(crate) const MAX_PULL_BLOCK: usize = 256;

/// How many forks a worker of a pool of `threads` records: one per level of a balanced
/// tree down to one subtree per worker (log2 of `threads`, rounded up; `wide-recording`),
/// at least [`MIN_RECORDED_FORKS`], at most [`MAX_RECORDED_FORKS`], and none in a
/// one-thread pool, where nobody could take a fork.
pub(crate) fn recorded_forks_limit(threads: usize, mechanisms: Mechanisms) -> usize {
    if threads <= 1 {
        return 0;
    }
    if !mechanisms.has(Mechanism::WideRecording) {
        return MIN_RECORDED_FORKS;
    }
    let levels = threads.next_power_of_two().trailing_zeros() as usize;
    levels.clamp(MIN_RECORDED_FORKS, MAX_RECORDED_FORKS)
}

// ------------------------------------------------------------------ mechanisms

/// A heuristic of the scheduler or of the loop driver that can be switched off per pool
/// (`ThreadPoolBuilder::mechanism`, or `SUMAC_MECHANISMS=-name,-name` for pools built
/// with default settings), to measure what it does. Not a stable interface.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Mechanism {
    /// Forks of unknown size are shared only after waiting through a whole interval.
    AgeRule,
    /// The first forks recorded in a shared job count as old (shareable at a request).
    OldTopForks,
    /// A worker shares forks of unknown size at most once per ¾ interval.
    WorkerRateLimit,
    /// The pool shares forks of unknown size at most once per `interval / busy workers`.
    PoolRateLimit,
    /// Before the first heartbeat, a joined recorded fork gives up its slot.
    BudgetShrink,
    /// Pools above 8 threads record log2(threads) forks instead of three.
    WideRecording,
    /// The heartbeat thread claims the recorded forks of a worker that stopped polling.
    Rescue,
    /// A loop that starts while a worker waits runs its first item as a fork of its own.
    FirstItemSplit,
    /// A loop piece whose items are known to be long is halved down to single items.
    LongItemHalving,
    /// After a long single item, a loop splits its remaining items at once.
    EagerSplit,
    /// An idle worker spins before it sleeps.
    IdleSpin,
    /// An idle worker raises the other workers' heartbeat flags (a request).
    Requests,
    /// The heartbeat thread asks the OS for a 1 µs timer slack.
    TimerSlack,
    /// A thread outside the pool runs its call (`install`, `join`, `scope`, a loop) on
    /// its own stack as a member of the pool, instead of handing it to a worker.
    Guests,
    /// A guest whose call's work spread (or that waits) holds one of the pool's
    /// `num_threads` places: a worker takes a shared job only while a place is free, so
    /// that a pool called from outside runs as many threads as it has, not one more.
    GuestPlace,
    /// A guest waiting in a join for work others took from it runs shared forks
    /// meanwhile, and counts as waiting for work when workers decide to share.
    GuestTakesForks,
    /// The heartbeat thread stays awake for a while after the pool went idle.
    Linger,
    /// Members spinning for work tick in the heartbeat thread's stead, which sleeps
    /// meanwhile (no thread wake-up per interval while someone is awake to tick).
    SpinnersTick,
    /// A loop's first split shares its upper half at once from `FIRST_SPLIT_BIG_NS` of
    /// work, whatever its items cost (later splits keep `BIG_WORK_NS` for costly items).
    SmallFirstSplit,
    /// After a first loop item long enough to time, blocks grow toward the target (a
    /// poll per target) instead of jumping to sixteen targets.
    TimedGrowth,
    /// A worker spinning for work looks for forks to rescue at each renewal of its
    /// request, not only at ticks (with `rescue` and `requests`).
    SpinnersRescue,
    /// A loop that starts while a member spins for work, or after a shared fork of this
    /// member's came back, splits at its first roughly rated block (if its upper half is
    /// worth a first split) without waiting for a request; a guest waiting at a join
    /// looks at it in every spin round.
    NextPhaseSplit,
    /// A fork worth waking a sleeping member for (a big piece of a parallel sort) is
    /// shared as soon as it is recorded while members wait for work, asleep or not,
    /// without waiting for a request or a tick.
    LargeForksAtOnce,
}

impl Mechanism {
    /// Every mechanism, in the order of the documentation.
    pub const ALL: [Mechanism; 23] = [
        Mechanism::AgeRule,
        Mechanism::OldTopForks,
        Mechanism::WorkerRateLimit,
        Mechanism::PoolRateLimit,
        Mechanism::BudgetShrink,
        Mechanism::WideRecording,
        Mechanism::Rescue,
        Mechanism::FirstItemSplit,
        Mechanism::LongItemHalving,
        Mechanism::EagerSplit,
        Mechanism::IdleSpin,
        Mechanism::Requests,
        Mechanism::TimerSlack,
        Mechanism::Guests,
        Mechanism::GuestPlace,
        Mechanism::GuestTakesForks,
        Mechanism::Linger,
        Mechanism::SpinnersTick,
        Mechanism::SmallFirstSplit,
        Mechanism::TimedGrowth,
        Mechanism::SpinnersRescue,
        Mechanism::NextPhaseSplit,
        Mechanism::LargeForksAtOnce,
    ];

    /// The name used in `SUMAC_MECHANISMS` and by `sumac-bench --policy`.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::AgeRule => "age-rule",
            Mechanism::OldTopForks => "old-top-forks",
            Mechanism::WorkerRateLimit => "worker-rate-limit",
            Mechanism::PoolRateLimit => "pool-rate-limit",
            Mechanism::BudgetShrink => "budget-shrink",
            Mechanism::WideRecording => "wide-recording",
            Mechanism::Rescue => "rescue",
            Mechanism::FirstItemSplit => "first-item-split",
            Mechanism::LongItemHalving => "long-item-halving",
            Mechanism::EagerSplit => "eager-split",
            Mechanism::IdleSpin => "idle-spin",
            Mechanism::Requests => "requests",
            Mechanism::TimerSlack => "timer-slack",
            Mechanism::Guests => "guests",
            Mechanism::GuestPlace => "guest-place",
            Mechanism::GuestTakesForks => "guest-takes-forks",
            Mechanism::Linger => "linger",
            Mechanism::SpinnersTick => "spinners-tick",
            Mechanism::SmallFirstSplit => "small-first-split",
            Mechanism::TimedGrowth => "timed-growth",
            Mechanism::SpinnersRescue => "spinners-rescue",
            Mechanism::NextPhaseSplit => "next-phase-split",
            Mechanism::LargeForksAtOnce => "large-forks-at-once",
        }
    }

    /// The mechanism's bit in [`Mechanisms`]: its place in [`ALL`](Self::ALL), which is
    /// its declaration order (checked below), so a constant on every hot path.
    #[inline(always)]
    const fn bit(self) -> u32 {
        1 << self as u32
    }
}

// `bit` relies on `ALL` listing the mechanisms in declaration order, and on 32 bits.
const _: () = {
    let mut i = 0;
    while i < Mechanism::ALL.len() {
        assert!(Mechanism::ALL[i] as usize == i);
        i += 1;
    }
    assert!(Mechanism::ALL.len() <= 32);
};

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mechanism {
    type Err = String;
    fn from_str(name: &str) -> Result<Self, String> {
        Mechanism::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Mechanism::ALL.iter().map(|m| m.name()).collect();
                format!(
                    "unknown mechanism '{name}' (expected one of {})",
                    names.join(", ")
                )
            })
    }
}

/// The set of mechanisms a pool uses (all by default).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Mechanisms {
    on: u32,
}

impl Default for Mechanisms {
    fn default() -> Self {
        Mechanisms { on: u32::MAX }
    }
}

impl fmt::Debug for Mechanisms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let off: Vec<&str> = Mechanism::ALL
            .iter()
            .filter(|&&m| !self.has(m))
            .map(|m| m.name())
            .collect();
        write!(f, "Mechanisms(off: [{}])", off.join(", "))
    }
}

impl Mechanisms {
    /// Whether `mechanism` is on.
    #[inline(always)]
    pub(crate) fn has(self, mechanism: Mechanism) -> bool {
        self.on & mechanism.bit() != 0
    }

    /// This set with `mechanism` switched on or off.
    pub(crate) fn with(self, mechanism: Mechanism, on: bool) -> Mechanisms {
        let bit = mechanism.bit();
        Mechanisms {
            on: if on { self.on | bit } else { self.on & !bit },
        }
    }

    /// Applies a list such as `-rescue,-age-rule,+requests` (a name alone means `+`).
    pub(crate) fn apply(self, list: &str) -> Result<Mechanisms, String> {
        let mut set = self;
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (on, name) = match item.as_bytes()[0] {
                b'-' => (false, &item[1..]),
                b'+' => (true, &item[1..]),
                _ => (true, item),
            };
            set = set.with(name.parse()?, on);
        }
        Ok(set)
    }
}

// ------------------------------------------------------------------ stamps

/// When a recorded fork was made, as far as sharing it goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Stamp(u64);

impl Stamp {
    /// A fork known to be big (a loop half whose items were timed): share it at the next
    /// heartbeat, without waiting or rate limits.
    pub(crate) const KNOWN_BIG: Stamp = Stamp(u64::MAX);
    /// A job that was never a fork on a worker's list (a closure injected from outside
    /// the pool, a spawned job): a worker that runs it learns nothing about its size.
    pub(crate) const NOT_A_FORK: Stamp = Stamp(u64::MAX - 1);
    /// A fork that counts as having waited long enough already (one of the first forks
    /// of a shared job), but whose sharing is still rate-limited.
    pub(crate) const LONG_AGO: Stamp = Stamp(u64::MAX - 2);

    /// A fork recorded at heartbeat tick `epoch`.
    #[inline(always)]
    pub(crate) fn at_tick(epoch: u64) -> Stamp {
        Stamp(epoch.min(u64::MAX - 3))
    }

    /// Whether a job with this stamp was a fork (or a spawned job) on a worker's list.
    pub(crate) fn was_listed(self) -> bool {
        self != Stamp::NOT_A_FORK
    }

    /// Whether a fork with this stamp may be shared at tick `epoch`: known big, stamped
    /// long ago, or (with the `age-rule`) recorded at least two ticks before, that is,
    /// after it waited through a whole interval.
    pub(crate) fn old_enough(self, epoch: u64, mechanisms: Mechanisms) -> bool {
        debug_assert!(self.was_listed(), "only forks are listed");
        match self {
            Stamp::KNOWN_BIG | Stamp::LONG_AGO => true,
            Stamp(tick) => !mechanisms.has(Mechanism::AgeRule) || tick.saturating_add(2) <= epoch,
        }
    }
}

// ------------------------------------------------------------------ recording budget

/// How many forks a worker records, and how its forks are stamped: the fork path's
/// whole state of classification.
pub(crate) struct ForkBudget {
    /// Forks of unknown or measured size that may wait on the list
    /// ([`recorded_forks_limit`]): 0 in a one-thread pool.
    full: usize,
    /// A fork is recorded only while fewer jobs than this wait on the list: at most
    /// `full`; between heartbeats it shrinks as recorded forks are joined.
    limit: Cell<usize>,
    /// A heartbeat (or request) arrived since the list was last emptied by a join: the
    /// work under way has lasted, and joined forks keep their slots.
    lasting: Cell<bool>,
    /// How many more forks get the [`Stamp::LONG_AGO`] stamp (the top of a shared job).
    old_left: Cell<u8>,
    /// Whether joined forks give up their slots before the first heartbeat.
    shrinks: bool,
}

impl ForkBudget {
    pub(crate) fn new(full: usize, mechanisms: Mechanisms) -> ForkBudget {
        ForkBudget {
            full,
            limit: Cell::new(full),
            lasting: Cell::new(false),
            old_left: Cell::new(0),
            shrinks: mechanisms.has(Mechanism::BudgetShrink),
        }
    }

    /// The most forks of unknown or measured size that may wait.
    #[inline(always)]
    pub(crate) fn full(&self) -> usize {
        self.full
    }

    /// Whether a plain fork is recorded, with `listed` jobs on the list.
    #[inline(always)]
    pub(crate) fn records(&self, listed: usize) -> bool {
        listed < self.limit.get()
    }

    /// A recorded fork was joined off the list (`list_empty`: it was the last).
    #[inline(always)]
    pub(crate) fn joined(&self, list_empty: bool) {
        if list_empty {
            self.restore(false);
        } else if self.shrinks && !self.lasting.get() {
            self.limit.set(self.limit.get().saturating_sub(1));
        }
    }

    /// A heartbeat arrived: every slot is usable again and stays so until the list
    /// empties.
    #[inline]
    pub(crate) fn heartbeat(&self) {
        self.restore(true);
    }

    #[inline]
    fn restore(&self, lasting: bool) {
        self.lasting.set(lasting);
        self.limit.set(self.full);
    }

    /// The stamp of a plain fork recorded now, at tick `epoch`.
    #[inline(always)]
    pub(crate) fn stamp(&self, epoch: u64) -> Stamp {
        let left = self.old_left.get();
        if left > 0 {
            self.old_left.set(left - 1);
            Stamp::LONG_AGO
        } else {
            Stamp::at_tick(epoch)
        }
    }

    /// Runs `f` (a job from the shared queue, stamped `stamp` where it was recorded)
    /// with the first forks it records stamped old if it was a shared fork
    /// (`old-top-forks`): it waited through a whole interval or was known big, so its
    /// halves are likely big too.
    pub(crate) fn running_shared<R>(
        &self,
        stamp: Stamp,
        mechanisms: Mechanisms,
        f: impl FnOnce() -> R,
    ) -> R {
        let inherit = if stamp.was_listed() && mechanisms.has(Mechanism::OldTopForks) {
            u8::try_from(self.full).unwrap_or(u8::MAX)
        } else {
            0
        };
        let outer = self.old_left.replace(inherit);
        let result = f();
        self.old_left.set(outer);
        result
    }

    #[cfg(all(test, not(loom)))]
    pub(crate) fn set_old_left(&self, left: u8) {
        self.old_left.set(left);
    }
}

// ------------------------------------------------------------------ sharing

/// What a worker's heartbeat handler knows when it decides whether to share.
pub(crate) struct ShareRequest {
    /// The stamp of the worker's oldest fork that may be shared.
    pub(crate) oldest: Stamp,
    /// The pool's current heartbeat tick.
    pub(crate) epoch: u64,
    /// Workers waiting for work with no queued job to take.
    pub(crate) waiting: usize,
}

/// Rule 3: how many of its oldest forks a worker shares at a heartbeat (0: none).
/// `worker_may_share` and `pool_may_share` check (and claim) the two rate limits; they
/// are only consulted for forks of unknown size.
pub(crate) fn share_now(
    request: &ShareRequest,
    mechanisms: Mechanisms,
    worker_may_share: impl FnOnce() -> bool,
    pool_may_share: impl FnOnce() -> bool,
) -> usize {
    if request.waiting == 0 || !request.oldest.old_enough(request.epoch, mechanisms) {
        return 0;
    }
    if request.oldest != Stamp::KNOWN_BIG
        && ((mechanisms.has(Mechanism::WorkerRateLimit) && !worker_may_share())
            || (mechanisms.has(Mechanism::PoolRateLimit) && !pool_may_share()))
    {
        return 0;
    }
    request.waiting
}

/// The pool-wide rate limit: the spacing between two shares of forks of unknown size,
/// `interval / busy workers`, so that a lone busy worker with a small input shares at
/// most once per interval however many idle workers ask, while a pool whose workers are
/// all busy may share once per interval per worker.
pub(crate) fn pool_share_spacing(interval: Duration, busy: usize) -> Duration {
    interval / u32::try_from(busy.max(1)).unwrap_or(u32::MAX)
}

/// The per-worker rate limit: the shortest gap between two shares of one worker.
pub(crate) fn worker_share_gap(interval: Duration) -> Duration {
    interval / WORKER_SHARE_GAP.1 * WORKER_SHARE_GAP.0
}

/// How long an idle worker spins before it sleeps (`idle-spin`), for `interval`.
pub(crate) fn spin_limit(interval: Duration, mechanisms: Mechanisms) -> Duration {
    if mechanisms.has(Mechanism::IdleSpin) {
        interval.clamp(MIN_SPIN, MAX_SPIN)
    } else {
        Duration::ZERO
    }
}

// ------------------------------------------------------------------ loops

/// Block sizes and thresholds of the loop driver, in clock ticks (see
/// [`crate::clock`]): the constants above converted once per process.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LoopTicks {
    pub(crate) block_target: u64,
    pub(crate) block_limit: u64,
    pub(crate) big_work: u64,
    pub(crate) cheap_items_big: u64,
    pub(crate) first_split_big: u64,
    pub(crate) back_to_back: u64,
    /// What two back-to-back reads of the clock measure: counted in every timed block.
    pub(crate) read_cost: u64,
}

/// What one block told of its items' cost, in clock ticks per item (in 1/1024ths).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ItemRate {
    /// With the block's clock read.
    gross_1024: u64,
    /// Without it.
    net_1024: u64,
}

impl LoopTicks {
    /// The thresholds for a clock of `ticks_per_us` ticks per microsecond (in 1/1024ths).
    pub(crate) fn new(ticks_per_us_1024: u64) -> LoopTicks {
        let ticks = |ns: u64| crate::clock::ticks_in(ns, ticks_per_us_1024);
        LoopTicks {
            block_target: ticks(BLOCK_TARGET_NS),
            block_limit: ticks(BLOCK_LIMIT_NS),
            big_work: ticks(BIG_WORK_NS),
            cheap_items_big: ticks(CHEAP_ITEMS_BIG_NS),
            first_split_big: ticks(FIRST_SPLIT_BIG_NS),
            back_to_back: ticks(BACK_TO_BACK_NS),
            read_cost: 0,
        }
    }

    /// The same thresholds, for a clock whose back-to-back reads are `read_cost` ticks
    /// apart.
    pub(crate) fn with_read_cost(self, read_cost: u64) -> LoopTicks {
        LoopTicks { read_cost, ..self }
    }

    /// The rate of a block of `n` items that took `ticks`, or `None` if the block was
    /// too short to tell: under [`TIMED_BLOCK_READS`] clock reads once the clock's own
    /// cost is taken off (the first block of cheap items, one item, times mostly the
    /// clock).
    #[inline]
    pub(crate) fn rate(&self, ticks: u64, n: usize) -> Option<ItemRate> {
        self.outlasts_clock(ticks).then(|| self.item_rate(ticks, n))
    }

    /// A rough rate of a block of `n` items that took `ticks`: the same figures as
    /// [`rate`](Self::rate), for any block that lasted [`ROUGH_RATE_READS`] clock reads
    /// beyond the clock's own cost (for one too short for `rate`, its time per item with
    /// the read is an overstatement, by at most a third). `None` for a block that timed
    /// mostly the clock and the block's own work.
    #[inline]
    pub(crate) fn rough_rate(&self, ticks: u64, n: usize) -> Option<ItemRate> {
        (ticks.saturating_sub(self.read_cost)
            >= self.read_cost.max(1).saturating_mul(ROUGH_RATE_READS))
        .then(|| self.item_rate(ticks, n))
    }

    /// The cost per item of a block of `n` items that took `ticks`, with and without
    /// the clock's own cost.
    #[inline]
    fn item_rate(&self, ticks: u64, n: usize) -> ItemRate {
        let net = ticks.saturating_sub(self.read_cost);
        let n = (n as u64).max(1);
        ItemRate {
            gross_1024: ticks.saturating_mul(1024) / n,
            net_1024: net.saturating_mul(1024) / n,
        }
    }

    /// Whether a block that took `ticks` lasted [`TIMED_BLOCK_READS`] clock reads beyond
    /// the clock's own cost, so that its time tells something of its items.
    #[inline]
    fn outlasts_clock(&self, ticks: u64) -> bool {
        ticks.saturating_sub(self.read_cost) >= self.read_cost.saturating_mul(TIMED_BLOCK_READS)
    }

    /// The next block size after a block of `block` items took `ticks` ticks: grow by
    /// the factor that would bring it to the target (between 2 and [`MAX_BLOCK_GROWTH`]),
    /// shrink by half above the limit. After a cheap first item, the second block aims at
    /// sixteen targets (up to [`MAX_FIRST_GROWTH`] items), unless the item outlasted the
    /// clock and `timed_growth` holds: a loop whose items the clock can time then polls
    /// once per target from its second block on, so that a member asking for work
    /// during a short phase is answered within it.
    #[inline]
    pub(crate) fn next_block(&self, block: usize, ticks: u64, timed_growth: bool) -> usize {
        let ticks = ticks.max(1);
        let target = self.block_target;
        if block == 1 && ticks < target / 16 && !(timed_growth && self.outlasts_clock(ticks)) {
            (16 * target / ticks).clamp(2, MAX_FIRST_GROWTH) as usize
        } else if ticks < target {
            let factor = (target / ticks).clamp(2, MAX_BLOCK_GROWTH) as usize;
            block.saturating_mul(factor).min(MAX_BLOCK)
        } else if ticks > self.block_limit {
            (block / 2).max(1)
        } else {
            block
        }
    }

    /// Whether `items` items at `rate` are worth sharing at once: items cheaper than a
    /// clock read from [`CHEAP_ITEMS_BIG_NS`] of their net time, costlier ones from
    /// [`BIG_WORK_NS`] of their time with the clock's.
    #[inline]
    pub(crate) fn is_big(&self, items: usize, rate: ItemRate) -> bool {
        self.is_big_from(items, rate, self.big_work)
    }

    /// [`is_big`](Self::is_big) at a loop's first split (`small-first-split`): costlier
    /// items from [`FIRST_SPLIT_BIG_NS`] of their time.
    #[inline]
    pub(crate) fn is_big_at_first_split(&self, items: usize, rate: ItemRate) -> bool {
        self.is_big_from(items, rate, self.first_split_big)
    }

    #[inline]
    fn is_big_from(&self, items: usize, rate: ItemRate, costly_bar: u64) -> bool {
        let items = items as u64;
        if rate.net_1024 < self.read_cost.saturating_mul(1024) {
            items.saturating_mul(rate.net_1024) / 1024 >= self.cheap_items_big
        } else {
            items.saturating_mul(rate.gross_1024) / 1024 >= costly_bar
        }
    }

    /// Whether a loop that starts `ticks` ticks after a shared fork of its caller came
    /// back follows it back to back (see [`BACK_TO_BACK_NS`]).
    #[inline]
    pub(crate) fn is_back_to_back(&self, ticks: u64) -> bool {
        ticks <= self.back_to_back
    }

    /// Whether a single item that took `ticks` ticks is long (`eager-split`).
    #[inline]
    pub(crate) fn is_long_item(&self, ticks: u64) -> bool {
        ticks > self.big_work
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_fork_waits_two_ticks_unless_stamped_old_or_big() {
        let all = Mechanisms::default();
        assert!(!Stamp::at_tick(5).old_enough(5, all));
        assert!(!Stamp::at_tick(5).old_enough(6, all));
        assert!(Stamp::at_tick(5).old_enough(7, all));
        assert!(Stamp::LONG_AGO.old_enough(0, all));
        assert!(Stamp::KNOWN_BIG.old_enough(0, all));
        let no_age = all.with(Mechanism::AgeRule, false);
        assert!(Stamp::at_tick(5).old_enough(5, no_age));
    }

    #[test]
    fn mechanism_lists_switch_named_mechanisms_and_reject_unknown_names() {
        let set = Mechanisms::default().apply("-rescue, -age-rule").unwrap();
        assert!(!set.has(Mechanism::Rescue));
        assert!(!set.has(Mechanism::AgeRule));
        assert!(set.has(Mechanism::IdleSpin));
        assert!(set.apply("+rescue").unwrap().has(Mechanism::Rescue));
        let error = Mechanisms::default().apply("-rescu").unwrap_err();
        assert!(error.contains("unknown mechanism 'rescu'"), "{error}");
        for mechanism in Mechanism::ALL {
            assert_eq!(mechanism.name().parse::<Mechanism>(), Ok(mechanism));
        }
    }

    #[test]
    fn known_big_forks_skip_the_rate_limits_and_waiting_workers_bound_the_share() {
        let all = Mechanisms::default();
        let request = |oldest| ShareRequest {
            oldest,
            epoch: 10,
            waiting: 3,
        };
        assert_eq!(
            share_now(&request(Stamp::KNOWN_BIG), all, || false, || false),
            3
        );
        assert_eq!(
            share_now(&request(Stamp::LONG_AGO), all, || false, || true),
            0
        );
        assert_eq!(
            share_now(&request(Stamp::LONG_AGO), all, || true, || true),
            3
        );
        assert_eq!(
            share_now(&request(Stamp::at_tick(9)), all, || true, || true),
            0
        );
        let unlimited = all
            .with(Mechanism::WorkerRateLimit, false)
            .with(Mechanism::PoolRateLimit, false);
        assert_eq!(
            share_now(&request(Stamp::LONG_AGO), unlimited, || false, || false),
            3
        );
        let nobody = ShareRequest {
            waiting: 0,
            ..request(Stamp::KNOWN_BIG)
        };
        assert_eq!(share_now(&nobody, all, || true, || true), 0);
    }

    #[test]
    fn wide_pools_record_one_fork_per_level_down_to_one_subtree_per_worker() {
        let all = Mechanisms::default();
        let limits: Vec<(usize, usize)> = [1, 2, 4, 8, 9, 16, 17, 32, 33, 256, 257, 4096]
            .into_iter()
            .map(|threads| (threads, recorded_forks_limit(threads, all)))
            .collect();
        assert_eq!(
            limits,
            [
                (1, 0),
                (2, 3),
                (4, 3),
                (8, 3),
                (9, 4),
                (16, 4),
                (17, 5),
                (32, 5),
                (33, 6),
                (256, 8),
                (257, 8),
                (4096, 8)
            ]
        );
        // A balanced tree that deep has a leaf for every worker.
        for threads in 2..=256 {
            assert!(
                1 << recorded_forks_limit(threads, all) >= threads,
                "{threads}"
            );
        }
        let narrow = all.with(Mechanism::WideRecording, false);
        assert_eq!(recorded_forks_limit(16, narrow), MIN_RECORDED_FORKS);
    }

    #[test]
    fn loop_blocks_grow_toward_the_target_and_shrink_above_the_limit() {
        // A clock of 1 tick per ns.
        let ticks = LoopTicks::new(1024 * 1000);
        assert_eq!(ticks.block_target, BLOCK_TARGET_NS);
        assert_eq!(ticks.next_block(1, 10, false), MAX_FIRST_GROWTH as usize);
        assert_eq!(ticks.next_block(100, BLOCK_TARGET_NS / 4, true), 400);
        assert_eq!(ticks.next_block(100, BLOCK_TARGET_NS, true), 100);
        assert_eq!(ticks.next_block(100, BLOCK_LIMIT_NS + 1, true), 50);
        assert_eq!(ticks.next_block(MAX_BLOCK, 1, true), MAX_BLOCK);
    }

    #[test]
    fn a_block_rates_its_items_only_once_it_outlasts_the_clocks_jitter() {
        // A clock of 1 tick per ns whose reads are 20 ns apart.
        let ticks = LoopTicks::new(1024 * 1000).with_read_cost(20);
        // One cheap item timed at 30 ns: 10 ns net, not enough to tell.
        assert_eq!(ticks.rate(30, 1), None);
        assert_eq!(ticks.rate(20 + 4 * 20 - 1, 1), None);
        assert_eq!(
            ticks.rate(20 + 4 * 20, 4),
            Some(ItemRate {
                gross_1024: 100 * 1024 / 4,
                net_1024: 80 * 1024 / 4
            })
        );
        // A clock of no measurable cost rates every block.
        assert!(LoopTicks::new(1024 * 1000).rate(0, 1).is_some());
    }

    #[test]
    fn a_rough_rate_tells_of_a_block_from_two_reads_beyond_the_clocks_cost() {
        // A clock of 1 tick per ns whose reads are 20 ns apart.
        let ticks = LoopTicks::new(1024 * 1000).with_read_cost(20);
        // Under one read net: the clock, nothing else.
        assert_eq!(ticks.rough_rate(39, 1), None);
        // One read net: what a block's own work and a clock that steps by a read
        // measure of an item of no cost.
        assert_eq!(ticks.rough_rate(40, 1), None);
        assert_eq!(ticks.rough_rate(59, 1), None);
        // From two reads net to four: the time with the read, an overstatement.
        assert_eq!(
            ticks.rough_rate(60, 1),
            Some(ItemRate {
                gross_1024: 60 * 1024,
                net_1024: 40 * 1024
            })
        );
        assert_eq!(ticks.rate(60, 1), None);
        // From four reads net on: the plain rate.
        assert_eq!(ticks.rough_rate(100, 4), ticks.rate(100, 4));
        assert!(ticks.rough_rate(100, 4).is_some());
        // Items of 60 ns with the clock's read: half of a loop of 86 items is worth a
        // first split (43 x 60 ns >= 2,500 ns), of 82 not.
        let rough = ticks.rough_rate(60, 1).unwrap();
        assert!(ticks.is_big_at_first_split(43, rough));
        assert!(!ticks.is_big_at_first_split(41, rough));
    }

    #[test]
    fn a_loop_follows_a_returned_fork_back_to_back_only_within_the_bound() {
        // A clock of 1 tick per ns.
        let ticks = LoopTicks::new(1024 * 1000);
        assert!(ticks.is_back_to_back(0));
        assert!(ticks.is_back_to_back(BACK_TO_BACK_NS));
        assert!(!ticks.is_back_to_back(BACK_TO_BACK_NS + 1));
    }

    #[test]
    fn cheap_items_count_their_net_time_and_costly_ones_their_time_with_the_clock() {
        let ticks = LoopTicks::new(1024 * 1000).with_read_cost(20);
        // 1,024 items in 120 ns: 0.1 ns each net, cheaper than a clock read. Half of a
        // 2,000-item loop is far from the bar, half of a 100,000-item loop past it.
        let cheap = ticks.rate(120, 1024).unwrap();
        assert!(!ticks.is_big(1_000, cheap));
        assert!(ticks.is_big(50_000, cheap));
        let bar = CHEAP_ITEMS_BIG_NS * 1024 / cheap.net_1024;
        assert!(ticks.is_big(bar as usize + 1, cheap));
        assert!(!ticks.is_big(bar as usize - 1, cheap));
        // One item of 130 ns (150 with the clock): costly, rated with the clock's time.
        let costly = ticks.rate(150, 1).unwrap();
        let items = BIG_WORK_NS / 150;
        assert!(!ticks.is_big(items as usize, costly));
        assert!(ticks.is_big(items as usize + 1, costly));
    }

    #[test]
    fn a_loops_first_split_shares_costly_items_from_less_work_than_later_splits() {
        let ticks = LoopTicks::new(1024 * 1000).with_read_cost(20);
        // Items of 150 ns with the clock: FIRST_SPLIT_BIG_NS is a quarter of BIG_WORK_NS.
        let costly = ticks.rate(150, 1).unwrap();
        let first_bar = (FIRST_SPLIT_BIG_NS / 150) as usize;
        assert!(!ticks.is_big_at_first_split(first_bar, costly));
        assert!(ticks.is_big_at_first_split(first_bar + 1, costly));
        assert!(!ticks.is_big(first_bar + 1, costly));
        // Cheap items have one bar for every split.
        let cheap = ticks.rate(120, 1024).unwrap();
        for items in [1_000, 20_000, 30_000, 50_000] {
            assert_eq!(
                ticks.is_big_at_first_split(items, cheap),
                ticks.is_big(items, cheap),
                "{items}"
            );
        }
    }

    #[test]
    fn a_first_item_the_clock_can_time_grows_blocks_toward_the_target_at_once() {
        // Reads 20 ns apart: a block is timed from 100 ns on.
        let ticks = LoopTicks::new(1024 * 1000).with_read_cost(20);
        // 30 ns: mostly the clock; the second block aims at sixteen targets.
        assert_eq!(ticks.next_block(1, 30, true), MAX_FIRST_GROWTH as usize);
        // 125 ns: timed; the second block aims at one target (20 items).
        let one_target = (BLOCK_TARGET_NS / 125) as usize;
        assert_eq!(ticks.next_block(1, 125, true), one_target);
        // Without `timed-growth`, sixteen targets.
        assert_eq!(ticks.next_block(1, 125, false), 16 * one_target);
    }
}
