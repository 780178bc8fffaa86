//! `panic_fuse` halts the other pieces of a loop after a panic. In a binary of its own:
//! the test silences the panic hook for its own panic, because the reaction time of a
//! fuse is the time the hook takes (the fuse trips when unwinding starts, after the
//! hook), and the test harness's own hook takes milliseconds the first time.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sumac::prelude::*;

mod common;

/// Busy work for about `micros` microseconds.
fn spin(micros: u64) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_micros(micros) {
        std::hint::spin_loop();
    }
}

/// Runs `run_loop` (a loop over 200,000 items whose body is `item`) five times in a
/// 4-thread pool; the panic is at the 10,000th item to arrive (when the loop has spread
/// over the workers) and items take about a microsecond; with the fuse the others stop
/// within a few items, without it they run on to the end of the 200,000.
fn check_halts(run_loop: impl Fn(&(dyn Fn() + Sync)) + Sync) {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<&str>() != Some(&"the 10,000th item") {
            default_hook(info);
        }
    }));
    let pool = common::stress_pool(4);
    for _ in 0..5 {
        let seen = AtomicUsize::new(0);
        let item = || {
            let k = seen.fetch_add(1, Ordering::Relaxed);
            assert!(k != 10_000, "the 10,000th item");
            spin(1);
        };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.install(|| run_loop(&item))
        }));
        assert!(r.is_err());
        let looked = seen.load(Ordering::Relaxed);
        assert!(
            looked < 100_000,
            "looked at {looked} items after a panic at the 10,000th"
        );
    }
}

#[test]
fn panic_fuse_halts_the_loop() {
    check_halts(|item| {
        (0..200_000u32)
            .into_par_iter()
            .panic_fuse()
            .for_each(|_| item())
    });
}

/// Over an indexed base `panic_fuse` is indexed, as in Rayon: it has a length, and
/// indexed adaptors after it (here `enumerate`, which only an indexed iterator has)
/// still halt at a panic.
#[test]
fn an_indexed_panic_fuse_halts_the_loop() {
    let v: Vec<u32> = (0..1000).collect();
    assert_eq!(v.par_iter().panic_fuse().len(), 1000);
    let pairs: Vec<(usize, u32)> = v
        .par_iter()
        .copied()
        .panic_fuse()
        .enumerate()
        .rev()
        .collect();
    let expected: Vec<(usize, u32)> = v.iter().copied().enumerate().rev().collect();
    assert_eq!(pairs, expected);
    check_halts(|item| {
        (0..200_000u32)
            .into_par_iter()
            .panic_fuse()
            .enumerate()
            .for_each(|_| item())
    });
}

/// A panic in a closure *before* the fuse in the chain halts the loop too (as in Rayon):
/// it drops the piece's folder (or, when indexed, the fuse's iterator) on its way out.
#[test]
fn a_panic_before_the_fuse_halts_the_loop() {
    check_halts(|item| {
        (0..200_000u32)
            .into_par_iter()
            .inspect(|_| item())
            .panic_fuse()
            .for_each(|_| ())
    });
    check_halts(|item| {
        (0..200_000u32)
            .into_par_iter()
            .inspect(|_| item())
            .panic_fuse()
            .enumerate()
            .for_each(|_| ())
    });
}

/// Runs a fused loop in its destructor and records the loop's sum.
struct SumOnDrop<'a>(&'a AtomicUsize);

impl Drop for SumOnDrop<'_> {
    fn drop(&mut self) {
        let sum: usize = (0..10_000usize)
            .into_par_iter()
            .panic_fuse()
            .map(|x| x % 7)
            .sum();
        let indexed: usize = (0..10_000usize)
            .into_par_iter()
            .panic_fuse()
            .enumerate()
            .map(|(i, x)| (i + x) % 7)
            .sum();
        self.0.store(sum + indexed, Ordering::SeqCst);
    }
}

/// A fused loop run by a destructor while another panic unwinds is not halted by that
/// panic: it runs to its end.
#[test]
fn a_loop_run_during_an_unwind_is_not_halted_by_it() {
    let expected: usize = (0..10_000usize).map(|x| x % 7).sum::<usize>()
        + (0..10_000usize).map(|x| (2 * x) % 7).sum::<usize>();
    let pool = common::stress_pool(2);
    for _ in 0..20 {
        let sum = AtomicUsize::new(0);
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.install(|| {
                let _guard = SumOnDrop(&sum);
                std::panic::resume_unwind(Box::new("unwinding"));
            })
        }));
        assert!(unwound.is_err());
        assert_eq!(sum.load(Ordering::SeqCst), expected);
    }
}
