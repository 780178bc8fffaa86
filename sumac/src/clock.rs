//! A cheap monotonic tick counter for timing blocks of loop iterations, and its
//! conversion to time.
//!
//! On x86-64 a tick is a cycle of the time-stamp counter (a constant rate on every
//! processor of the last fifteen years, read in a few nanoseconds); elsewhere, and under
//! Miri, a tick is a nanosecond of [`Instant`]. The loop driver's thresholds are durations
//! ([`crate::policy`]); [`loop_ticks`] converts them once per process, after measuring
//! the counter's rate against the OS clock, so that they mean the same time on every
//! machine, and the counter's own cost: the usual ticks between two back-to-back reads,
//! which every timed block also counts (on a VM one read can outlast many cheap loop
//! items together; see [`LoopTicks::rate`]).

use std::sync::OnceLock;
use std::time::Instant;

use crate::policy::LoopTicks;

/// The time-stamp counter (cycles at a constant rate).
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[inline(always)]
pub(crate) fn ticks() -> u64 {
    // SAFETY: `rdtsc` exists on every x86_64 processor, takes no operand and touches
    // no memory; the value is only used as a hint for block sizes.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Nanoseconds since the first call (other architectures, and Miri, which has no
/// time-stamp counter).
#[cfg(any(not(target_arch = "x86_64"), miri))]
#[inline]
pub(crate) fn ticks() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// How long each of the calibration's measurements lasts.
#[cfg(all(target_arch = "x86_64", not(miri)))]
const CALIBRATION_SPAN: std::time::Duration = std::time::Duration::from_micros(200);

/// Ticks per microsecond, in 1/1024ths, measured once per process.
pub(crate) fn ticks_per_us_1024() -> u64 {
    static RATE: OnceLock<u64> = OnceLock::new();
    *RATE.get_or_init(measure_rate)
}

/// `ns` nanoseconds in ticks of a clock of `ticks_per_us_1024` ticks per microsecond (in
/// 1/1024ths), at least one.
pub(crate) fn ticks_in(ns: u64, ticks_per_us_1024: u64) -> u64 {
    (ns.saturating_mul(ticks_per_us_1024) / 1000 / 1024).max(1)
}

/// The loop driver's thresholds in ticks (see [`LoopTicks`]), computed once per process.
#[inline]
pub(crate) fn loop_ticks() -> &'static LoopTicks {
    static TICKS: OnceLock<LoopTicks> = OnceLock::new();
    TICKS.get_or_init(|| LoopTicks::new(ticks_per_us_1024()).with_read_cost(read_cost()))
}

/// How many pairs of back-to-back reads [`read_cost`] times.
const READ_COST_PAIRS: usize = 63;

/// The median of the ticks between two back-to-back reads of the counter over
/// [`READ_COST_PAIRS`] tries: what an empty block would measure. The median, so that
/// neither a preemption between two reads nor the rare pair that a virtual machine's
/// counter reports a tick apart sets it.
fn read_cost() -> u64 {
    let mut gaps: [u64; READ_COST_PAIRS] = std::array::from_fn(|_| {
        let start = ticks();
        ticks().wrapping_sub(start)
    });
    gaps.sort_unstable();
    gaps[READ_COST_PAIRS / 2]
}

/// Converts a number of ticks to a duration.
#[cfg(all(test, not(loom), not(miri)))]
pub(crate) fn to_duration(ticks: u64) -> std::time::Duration {
    let nanos = u128::from(ticks) * 1000 * 1024 / u128::from(ticks_per_us_1024().max(1));
    std::time::Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

/// Three measurements of the counter against [`Instant`], each over
/// [`CALIBRATION_SPAN`]; the median, so that a preemption during one does not count.
#[cfg(all(target_arch = "x86_64", not(miri)))]
fn measure_rate() -> u64 {
    let mut rates: [u64; 3] = std::array::from_fn(|_| {
        let (start, start_ticks) = (Instant::now(), ticks());
        let mut elapsed;
        loop {
            elapsed = start.elapsed();
            if elapsed >= CALIBRATION_SPAN {
                break;
            }
            std::hint::spin_loop();
        }
        let ticks = ticks().wrapping_sub(start_ticks);
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX).max(1);
        u64::try_from(u128::from(ticks) * 1000 * 1024 / u128::from(nanos)).unwrap_or(u64::MAX)
    });
    rates.sort_unstable();
    rates[1].max(1)
}

/// A tick is a nanosecond.
#[cfg(any(not(target_arch = "x86_64"), miri))]
fn measure_rate() -> u64 {
    1024
}

#[cfg(all(test, not(loom), not(miri)))]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Ticks counted over a sleep convert back to about the time slept (within 10%, or
    /// a millisecond: the sleep itself may overrun, which the conversion must follow).
    #[test]
    fn ticks_convert_to_the_time_that_passed() {
        for _ in 0..3 {
            let (start, start_ticks) = (Instant::now(), ticks());
            std::thread::sleep(Duration::from_millis(20));
            let converted = to_duration(ticks().wrapping_sub(start_ticks));
            let measured = start.elapsed();
            let error = converted.abs_diff(measured);
            if error <= measured / 10 || error <= Duration::from_millis(1) {
                return;
            }
            eprintln!("converted {converted:?}, measured {measured:?}");
        }
        panic!("the tick rate does not match the OS clock in three tries");
    }

    #[test]
    fn loop_thresholds_keep_their_order() {
        let ticks = loop_ticks();
        assert!(ticks.block_target < ticks.big_work);
        assert!(ticks.big_work < ticks.block_limit);
    }

    /// The counter's own cost is measured below a microsecond (a read takes
    /// nanoseconds), and a block that took only that does not rate its items.
    #[test]
    fn a_block_that_took_only_the_clocks_own_time_does_not_rate_its_items() {
        let ticks = loop_ticks();
        assert!(to_duration(ticks.read_cost) < Duration::from_micros(1));
        assert!(ticks.rate(ticks.read_cost, 1).is_none() || ticks.read_cost == 0);
        assert!(ticks.rate(ticks.block_target, 1).is_some());
    }
}
