//! `panic_fuse` halts the other pieces of a loop after a panic. In a binary of its own:
//! the test silences the panic hook for its own panic, because the reaction time of a
//! fuse is the time the hook takes (the fuse trips when unwinding starts, after the
//! hook), and the test harness's own hook takes milliseconds the first time.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sumac::prelude::*;

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
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(4)
        .heartbeat_interval(Duration::from_micros(1))
        .build()
        .unwrap();
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
