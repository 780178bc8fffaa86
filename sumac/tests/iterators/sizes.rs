//! Zero-sized items and lengths at the edge of `usize`: through collect, drain, sort,
//! chunks and `step_by`, on the forced-split pool.
use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use sumac::prelude::*;

fn pool() -> &'static sumac::ThreadPool {
    common::forced_split_pool()
}

fn quiet<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    catch_unwind(AssertUnwindSafe(f))
}

/// A zero-sized item that counts its drops.
static ZST_DROPS: AtomicUsize = AtomicUsize::new(0);
struct Zst;
impl Drop for Zst {
    fn drop(&mut self) {
        ZST_DROPS.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn zero_sized_items_through_collect_drain_and_sort() {
    // Only this test touches ZST_DROPS.
    let n = 10_000;
    let out: Vec<Zst> = pool().install(|| (0..n).into_par_iter().map(|_| Zst).collect());
    assert_eq!(out.len(), n);
    assert_eq!(ZST_DROPS.load(Ordering::SeqCst), 0);
    let kept: Vec<Zst> = pool().install(|| out.into_par_iter().skip(10).take(100).collect());
    assert_eq!(kept.len(), 100);
    assert_eq!(ZST_DROPS.load(Ordering::SeqCst), n - 100);
    drop(kept);
    ZST_DROPS.store(0, Ordering::SeqCst);
    // A panicking closure mid-collect: every item built is dropped once.
    let built = AtomicUsize::new(0);
    let r = quiet(|| {
        pool().install(|| {
            (0..n)
                .into_par_iter()
                .map(|i| {
                    if i == 7777 {
                        panic!("zst")
                    }
                    built.fetch_add(1, Ordering::SeqCst);
                    Zst
                })
                .collect::<Vec<_>>()
        })
    });
    assert!(r.is_err());
    assert_eq!(
        ZST_DROPS.load(Ordering::SeqCst),
        built.load(Ordering::SeqCst)
    );
    ZST_DROPS.store(0, Ordering::SeqCst);
    let mut v: Vec<Zst> = (0..n).map(|_| Zst).collect();
    let drained = pool().install(|| v.par_drain(100..200).count());
    assert_eq!((drained, v.len()), (100, n - 100));
    assert_eq!(ZST_DROPS.load(Ordering::SeqCst), 100);
    pool().install(|| v.par_sort_by(|_, _| std::cmp::Ordering::Equal));
    pool().install(|| v.par_sort_unstable_by(|_, _| std::cmp::Ordering::Less));
    assert_eq!(v.len(), n - 100);
    assert_eq!(ZST_DROPS.load(Ordering::SeqCst), 100);
    let chunks = pool().install(|| v.par_chunks_mut(7).map(|c| c.len()).sum::<usize>());
    assert_eq!(chunks, n - 100);
    drop(v);
    assert_eq!(ZST_DROPS.load(Ordering::SeqCst), n);
}

#[test]
fn huge_zero_sized_vectors() {
    let v: Vec<()> = vec![(); usize::MAX];
    let tail = pool().install(|| v.into_par_iter().rev().take(5).count());
    assert_eq!(tail, 5);
    let v: Vec<()> = vec![(); usize::MAX];
    let c = pool().install(|| v.par_chunks(usize::MAX / 2).count());
    assert_eq!(c, 3);
    let c = pool().install(|| {
        v.par_rchunks(usize::MAX / 2)
            .map(|c| c.len())
            .collect::<Vec<_>>()
    });
    assert_eq!(c, vec![usize::MAX / 2, usize::MAX / 2, 1]);
    let c = pool().install(|| {
        v.par_windows(usize::MAX - 2)
            .map(|w| w.len())
            .collect::<Vec<_>>()
    });
    assert_eq!(c, vec![usize::MAX - 2; 3]);
    // Splitting windows at their end (`take` of all of them) must not overflow
    // computing the end of the last window.
    let c = (1..=3).map(|n| v.par_windows(usize::MAX - 2).take(n).count());
    assert!(c.eq(1..=3));
    let c = v
        .par_windows(usize::MAX)
        .take(1)
        .map(|w| w.len())
        .collect::<Vec<_>>();
    assert_eq!(c, [usize::MAX]);
    let c = v.par_array_windows::<3>().rev().take(2).count();
    assert_eq!(c, 2);
    let c = pool().install(|| v.par_iter().step_by(usize::MAX / 3).count());
    assert_eq!(c, 3);
    let c = pool().install(|| v.par_iter().step_by(usize::MAX / 3 - 1).count());
    assert_eq!(c, 4);
    let c = pool().install(|| {
        v.par_iter()
            .enumerate()
            .zip(v.par_iter().rev())
            .rev()
            .take(2)
            .map(|((i, _), _)| i)
            .collect::<Vec<_>>()
    });
    assert_eq!(c, vec![usize::MAX - 1, usize::MAX - 2]);
}

/// `step_by` skips through the sequential iterator's `nth`; a range's must not walk the
/// skipped integers (the loop below would then take `usize::MAX` steps).
#[test]
fn step_by_skips_over_huge_ranges_in_constant_time() {
    let out = common::finishes(
        "a step_by over a huge range (walking the items it skips?)",
        || {
            pool().install(|| {
                let r = (0..usize::MAX).into_par_iter();
                (
                    r.clone().step_by(usize::MAX).collect::<Vec<_>>(),
                    r.clone().step_by(usize::MAX / 2).collect::<Vec<_>>(),
                    r.clone().rev().step_by(usize::MAX / 2).collect::<Vec<_>>(),
                    (i64::MIN..i64::MAX)
                        .into_par_iter()
                        .step_by(1 << 62)
                        .count(),
                )
            })
        },
    );
    assert_eq!(out.0, [0]);
    assert_eq!(out.1, [0, usize::MAX / 2, usize::MAX - 1]);
    assert_eq!(out.2, [usize::MAX - 1, usize::MAX - 1 - usize::MAX / 2, 0]);
    assert_eq!(out.3, 4);
}

/// Lengths at the edge of `usize`: zip, rev, chunks and searches of `0..usize::MAX`, and
/// chains longer than `usize::MAX` (not indexed, still searchable).
#[test]
fn huge_range_lengths() {
    pool().install(|| {
        let r = (0..usize::MAX).into_par_iter();
        assert_eq!(r.clone().chunks(usize::MAX).len(), 1);
        assert_eq!(r.clone().chunks(usize::MAX / 2).len(), 3);
        assert_eq!(
            r.clone()
                .zip(0..usize::MAX)
                .rev()
                .take(2)
                .collect::<Vec<_>>(),
            [
                (usize::MAX - 1, usize::MAX - 1),
                (usize::MAX - 2, usize::MAX - 2)
            ]
        );
        assert_eq!(r.clone().find_last(|_| true), Some(usize::MAX - 1));
        assert_eq!(
            r.clone().position_last(|x| x % 3 == 0),
            Some(usize::MAX - 1 - (usize::MAX - 1) % 3)
        );
        assert_eq!(r.clone().chain(0..10).opt_len(), None);
        assert_eq!(r.clone().chain(0..10).find_first(|&x| x == 5), Some(5));
        assert_eq!(r.clone().chain(0..10).find_last(|&x| x == 5), Some(5));
        assert_eq!(
            (0..=usize::MAX)
                .into_par_iter()
                .chain(0..10usize)
                .find_first(|&x| x > 3),
            Some(4)
        );
    });
}
