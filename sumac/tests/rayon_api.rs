//! Parts of Rayon's surface that code switching from Rayon relies on: tuples of up to
//! twelve indexed iterators zipped in lock step (`MultiZip`), and the collections a
//! parallel iterator collects into. Checked against sequential std code on a pool
//! whose loops split constantly.

use std::borrow::Cow;
use std::collections::LinkedList;
use std::ffi::{OsStr, OsString};
use std::rc::Rc;
use std::sync::Arc;

use sumac::prelude::*;

mod common;

/// The shared 4-thread pool with a 1 µs heartbeat whose loops are forced to split every
/// few items.
fn pool() -> &'static sumac::ThreadPool {
    common::forced_split_pool()
}

#[test]
fn twelve_iterators_in_lock_step_stop_at_the_shortest() {
    let pool = pool();
    for shortest in [0usize, 1, 2, 7, 40, 300] {
        let v: Vec<u32> = (0..400).collect();
        let got: Vec<u64> = pool.install(|| {
            (
                0..400u32,
                &v,
                1..400u32,
                v.par_iter().rev(),
                0..shortest as u32,
                &v[3..],
                2..400u32,
                v.par_iter().map(|x| x * 2),
                0..400u32,
                &v,
                5..400u32,
                v.par_iter().skip(7),
            )
                .into_par_iter()
                .map(|(a, b, c, d, e, f, g, h, i, j, k, l)| {
                    [a, *b, c, *d, e, *f, g, h, i, *j, k, *l]
                        .iter()
                        .enumerate()
                        .map(|(n, &x)| (n as u64 + 1) * u64::from(x))
                        .sum()
                })
                .collect()
        });
        let expected: Vec<u64> = (0..shortest as u32)
            .map(|p| {
                let pu = p as usize;
                let items = [
                    p,
                    v[pu],
                    1 + p,
                    v[399 - pu],
                    p,
                    v[3 + pu],
                    2 + p,
                    v[pu] * 2,
                    p,
                    v[pu],
                    5 + p,
                    v[7 + pu],
                ];
                items
                    .iter()
                    .enumerate()
                    .map(|(n, &x)| (n as u64 + 1) * u64::from(x))
                    .sum()
            })
            .collect();
        assert_eq!(got, expected, "shortest = {shortest}");
    }
}

#[test]
fn seven_iterators_write_through_a_mutable_slice() {
    let pool = pool();
    let a: Vec<i64> = (0..1000).collect();
    let mut out = vec![0i64; 1000];
    pool.install(|| {
        (&a, &a, &a, 0..1000i64, &a, &a, &mut out)
            .into_par_iter()
            .rev()
            .for_each(|(x1, x2, x3, i, x5, x6, o)| *o = x1 + x2 + x3 + i + x5 + x6);
    });
    assert!(out.iter().enumerate().all(|(i, &o)| o == 6 * i as i64));
}

#[test]
fn collections_of_every_kind_keep_the_order() {
    let pool = pool();
    let words: Vec<String> = (0..500).map(|i| format!("w{i},")).collect();
    let expected: String = words.concat();
    pool.install(|| {
        let boxed: Box<str> = words.par_iter().map(String::as_str).collect();
        assert_eq!(&*boxed, expected);
        let boxed: Box<str> = expected.par_chars().collect();
        assert_eq!(&*boxed, expected);
        let from_boxes: String = words
            .par_iter()
            .map(|w| w.clone().into_boxed_str())
            .collect();
        assert_eq!(from_boxes, expected);
        let os: OsString = words.par_iter().map(|w| OsStr::new(w.as_str())).collect();
        assert_eq!(os, OsString::from(&expected));
        let os: OsString = words
            .par_iter()
            .map(|w| Cow::Owned(OsString::from(w)))
            .collect();
        assert_eq!(os, OsString::from(&expected));
        let cow: Cow<'_, str> = words.par_iter().map(String::as_str).collect();
        assert_eq!(cow, expected);
        let cow: Cow<'_, [usize]> = (0..700usize).into_par_iter().collect();
        assert_eq!(cow, (0..700).collect::<Vec<_>>());
        let rc: Rc<[usize]> = (0..700usize).into_par_iter().rev().collect();
        assert_eq!(&*rc, (0..700).rev().collect::<Vec<_>>());
        let arc: Arc<[usize]> = (0..700usize)
            .into_par_iter()
            .filter(|x| x % 3 == 0)
            .collect();
        assert_eq!(&*arc, (0..700).filter(|x| x % 3 == 0).collect::<Vec<_>>());
        let numbers: Vec<u64> = (0..900).collect();
        let mut copies = vec![7u64];
        copies.par_extend(&numbers);
        copies.par_extend(numbers.par_iter().filter(|x| *x % 2 == 1));
        let mut expected_copies = vec![7u64];
        expected_copies.extend(&numbers);
        expected_copies.extend(numbers.iter().filter(|x| *x % 2 == 1));
        assert_eq!(copies, expected_copies);
        let mut list: LinkedList<u64> = LinkedList::new();
        list.par_extend(&numbers);
        assert!(list.iter().eq(numbers.iter()));
        let mut unit = ();
        let ran = std::sync::atomic::AtomicUsize::new(0);
        unit.par_extend((0..100).into_par_iter().map(|_| {
            ran.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }));
        assert_eq!(ran.into_inner(), 100);
    });
}

#[test]
fn array_windows_match_std_windows() {
    let pool = pool();
    for len in [0usize, 1, 2, 3, 4, 5, 17, 300] {
        let v: Vec<u32> = (0..len as u32).map(|x| x * x + 1).collect();
        pool.install(|| {
            let got: Vec<&[u32; 3]> = v.par_array_windows::<3>().collect();
            let expected: Vec<&[u32]> = v.windows(3).collect();
            assert_eq!(got.len(), expected.len(), "len {len}");
            assert!(got.iter().zip(&expected).all(|(a, b)| a[..] == b[..]));
            let reversed: Vec<u32> = v.par_array_windows().rev().map(|&[a, b]| b - a).collect();
            let expected: Vec<u32> = v.windows(2).rev().map(|w| w[1] - w[0]).collect();
            assert_eq!(reversed, expected, "len {len}");
            assert_eq!(v.par_array_windows::<1>().len(), len);
        });
    }
}

#[test]
#[should_panic(expected = "window size must not be zero")]
fn array_windows_of_zero_items_panic() {
    let _ = [1, 2, 3].par_array_windows::<0>();
}
