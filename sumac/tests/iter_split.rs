//! Exhaustive split-point tests for the indexed producers: for every length up to 12,
//! every split point (and every pair of split points), processing the pieces in either
//! order gives the sequential sequence; iterating backwards gives it reversed.

mod common;

use std::fmt::Debug;

use sumac::iter::plumbing::{Producer, ProducerCallback};
use sumac::prelude::*;

/// Collects the producer's items, split as described.
enum Plan {
    /// No split, forwards.
    Whole,
    /// No split, backwards (then reversed back), checking `ExactSizeIterator::len`.
    Backwards,
    /// One split at `at`; pieces processed right piece first when `right_first`.
    One { at: usize, right_first: bool },
    /// Split at `at`, then the right piece again at `at2`.
    Two {
        at: usize,
        at2: usize,
        right_first: bool,
    },
}

/// A [`Plan`] for a producer of `n` items.
struct Run {
    n: usize,
    plan: Plan,
}

/// The items of `p`, checking that its iterator reports `len` of them.
fn items<P: Producer>(p: P, len: usize) -> Vec<P::Item> {
    let it = p.into_iter();
    assert_eq!(it.len(), len);
    let v: Vec<P::Item> = it.collect();
    assert_eq!(v.len(), len);
    v
}

impl<T> ProducerCallback<T> for Run {
    type Output = Vec<T>;
    fn callback<P: Producer<Item = T>>(self, p: P) -> Vec<T> {
        let n = self.n;
        match self.plan {
            Plan::Whole => items(p, n),
            Plan::Backwards => {
                let it = p.into_iter();
                assert_eq!(it.len(), n);
                let mut v: Vec<T> = it.rev().collect();
                v.reverse();
                v
            }
            Plan::One { at, right_first } => {
                let (l, r) = p.split_at(at);
                let (lv, rv): (Vec<T>, Vec<T>) = if right_first {
                    let rv = items(r, n - at);
                    (items(l, at), rv)
                } else {
                    let lv = items(l, at);
                    (lv, items(r, n - at))
                };
                lv.into_iter().chain(rv).collect()
            }
            Plan::Two {
                at,
                at2,
                right_first,
            } => {
                let (l, r) = p.split_at(at);
                let (rl, rr) = r.split_at(at2);
                let (a, b, c): (Vec<T>, Vec<T>, Vec<T>) = if right_first {
                    let c = items(rr, n - at - at2);
                    let b: Vec<T> = rl
                        .into_iter()
                        .rev()
                        .collect::<Vec<T>>()
                        .into_iter()
                        .rev()
                        .collect();
                    assert_eq!(b.len(), at2);
                    (items(l, at), b, c)
                } else {
                    (items(l, at), items(rl, at2), items(rr, n - at - at2))
                };
                a.into_iter().chain(b).chain(c).collect()
            }
        }
    }
}

/// Checks every split of `make()` against `expected`.
fn check<I, F>(make: F, expected: &[I::Item])
where
    F: Fn() -> I,
    I: IndexedParallelIterator,
    I::Item: PartialEq + Debug,
{
    let n = expected.len();
    assert_eq!(make().len(), n);
    let run = |plan| make().with_producer(Run { n, plan });
    assert_eq!(run(Plan::Whole), expected);
    assert_eq!(run(Plan::Backwards), expected);
    for at in 0..=n {
        for right_first in [false, true] {
            let got = run(Plan::One { at, right_first });
            assert_eq!(got, expected, "split at {at} (right first: {right_first})");
            if n <= 16 {
                for at2 in 0..=n - at {
                    let got = run(Plan::Two {
                        at,
                        at2,
                        right_first,
                    });
                    assert_eq!(got, expected, "split at {at} then {at2}");
                }
            }
        }
    }
    // The whole loop, through the driver (with forced splits).
    assert_eq!(make().collect::<Vec<_>>(), expected);
}

fn setup() {
    common::force_splits_in_global_pool(2);
}

#[test]
fn ranges() {
    setup();
    for n in 0..=12u8 {
        let e: Vec<u8> = (3..3 + n).collect();
        check(|| (3..3 + n).into_par_iter(), &e);
        let e: Vec<i32> = (-5..n as i32 - 5).collect();
        check(|| (-5..n as i32 - 5).into_par_iter(), &e);
        let e: Vec<usize> = (0..n as usize).collect();
        check(|| (0..n as usize).into_par_iter(), &e);
        let e: Vec<u64> = (u64::MAX - n as u64..u64::MAX).collect();
        check(|| (u64::MAX - n as u64..u64::MAX).into_par_iter(), &e);
        let e: Vec<i16> = (1..=n as i16).collect();
        check(|| (1..=n as i16).into_par_iter(), &e);
        let e: Vec<u8> = (u8::MAX - n..=u8::MAX).collect();
        check(|| (u8::MAX - n..=u8::MAX).into_par_iter(), &e);
        let e: Vec<i8> = (i8::MIN..=i8::MIN + n as i8).collect();
        check(|| (i8::MIN..=i8::MIN + n as i8).into_par_iter(), &e);
        let e: Vec<u32> = (10..=9 + n as u32).collect();
        check(|| (10..=9 + n as u32).into_par_iter(), &e);
    }
    let e: Vec<u8> = (0..=u8::MAX).collect();
    check(|| (0..=u8::MAX).into_par_iter(), &e);
    let e: Vec<i8> = (i8::MIN..=i8::MAX).collect();
    check(|| (i8::MIN..=i8::MAX).into_par_iter(), &e);
}

#[test]
fn slices_vecs_options() {
    setup();
    for n in 0..=12 {
        let v: Vec<i32> = (0..n).map(|x| x * 10 - 7).collect();
        let refs: Vec<&i32> = v.iter().collect();
        check(|| v.par_iter(), &refs);
        check(
            || {
                let w: &mut Vec<i32> = Box::leak(Box::new(v.clone()));
                w.par_iter_mut().map(|x| *x)
            },
            &v,
        );
        let strings: Vec<String> = v.iter().map(|x| format!("s{x}")).collect();
        check(|| strings.clone().into_par_iter(), &strings);
        for size in 1..=4 {
            let e: Vec<&[i32]> = v.chunks(size).collect();
            check(|| v.par_chunks(size), &e);
            let e: Vec<&[i32]> = v.windows(size).collect();
            check(|| v.par_windows(size), &e);
            let e: Vec<&[i32]> = v.chunks_exact(size).collect();
            check(|| v.par_chunks_exact(size), &e);
            let e: Vec<&[i32]> = v.rchunks(size).collect();
            check(|| v.par_rchunks(size), &e);
            let e: Vec<&[i32]> = v.rchunks_exact(size).collect();
            check(|| v.par_rchunks_exact(size), &e);
            let leaked = || -> &'static mut Vec<i32> { Box::leak(Box::new(v.clone())) };
            let e: Vec<Vec<i32>> = v.chunks(size).map(<[i32]>::to_vec).collect();
            check(|| leaked().par_chunks_mut(size).map(|c| c.to_vec()), &e);
            let e: Vec<Vec<i32>> = v.chunks_exact(size).map(<[i32]>::to_vec).collect();
            check(
                || leaked().par_chunks_exact_mut(size).map(|c| c.to_vec()),
                &e,
            );
            let e: Vec<Vec<i32>> = v.rchunks(size).map(<[i32]>::to_vec).collect();
            check(|| leaked().par_rchunks_mut(size).map(|c| c.to_vec()), &e);
            let e: Vec<Vec<i32>> = v.rchunks_exact(size).map(<[i32]>::to_vec).collect();
            check(
                || leaked().par_rchunks_exact_mut(size).map(|c| c.to_vec()),
                &e,
            );
            assert_eq!(
                v.par_chunks_exact(size).remainder(),
                v.chunks_exact(size).remainder()
            );
            assert_eq!(
                v.par_rchunks_exact(size).remainder(),
                v.rchunks_exact(size).remainder()
            );
            let mut w = v.clone();
            let mut x = v.clone();
            assert_eq!(
                w.par_chunks_exact_mut(size).into_remainder(),
                x.chunks_exact_mut(size).into_remainder()
            );
            assert_eq!(
                w.par_rchunks_exact_mut(size).take_remainder(),
                x.rchunks_exact_mut(size).into_remainder()
            );
        }
    }
    check(|| Some(5).into_par_iter(), &[5]);
    check(|| None::<i32>.into_par_iter(), &[]);
    check(|| sumac::iter::once(5), &[5]);
    check(sumac::iter::empty::<i32>, &[]);
    for n in 0..=12 {
        let e = vec![String::from("r"); n];
        check(|| sumac::iter::repeat_n(String::from("r"), n), &e);
        check(|| sumac::iter::repeat(String::from("r")).take(n), &e);
    }
}

#[test]
fn adaptors() {
    setup();
    for n in 0..=12usize {
        let v: Vec<usize> = (0..n).map(|x| x * 3 + 1).collect();
        let w: Vec<usize> = (0..n + 2).map(|x| x * 5).collect();
        let e: Vec<(usize, usize)> = v.iter().copied().zip(w.iter().copied()).collect();
        check(|| v.par_iter().copied().zip(w.par_iter().copied()), &e);
        check(
            || w.par_iter().copied().zip(v.par_iter().copied()),
            &e.iter().map(|&(a, b)| (b, a)).collect::<Vec<_>>(),
        );
        let e: Vec<(usize, usize)> = v.iter().copied().enumerate().collect();
        check(|| v.par_iter().copied().enumerate(), &e);
        let e: Vec<(usize, usize, usize)> = v
            .iter()
            .zip(&w)
            .zip(0..n)
            .map(|((&a, &b), c)| (a, b, c))
            .collect();
        check(
            || (v.par_iter().copied(), w.par_iter().copied(), 0..n).into_par_iter(),
            &e,
        );
        let e: Vec<(usize, usize, usize, usize, usize, usize)> =
            v.iter().map(|&a| (a, a, a, a, a, a)).collect();
        check(
            || {
                (&v, &v, &v, &v, &v, v.clone())
                    .into_par_iter()
                    .map(|(a, b, c, d, e, f)| (*a, *b, *c, *d, *e, f))
            },
            &e,
        );
        let e: Vec<usize> = v.iter().rev().copied().collect();
        check(|| v.par_iter().copied().rev(), &e);
        let e: Vec<(usize, usize)> = v
            .iter()
            .copied()
            .enumerate()
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        check(|| v.par_iter().copied().enumerate().rev(), &e);
        for k in 0..=n + 1 {
            let e: Vec<usize> = v.iter().skip(k).copied().collect();
            check(|| v.par_iter().copied().skip(k), &e);
            let e: Vec<usize> = v.iter().take(k).copied().collect();
            check(|| v.par_iter().copied().take(k), &e);
        }
        for step in 1..=4 {
            let e: Vec<usize> = v.iter().step_by(step).copied().collect();
            check(|| v.par_iter().copied().step_by(step), &e);
            let e: Vec<usize> = v.iter().rev().step_by(step).copied().collect();
            check(|| v.par_iter().copied().rev().step_by(step), &e);
        }
        for m in [0, 1, n / 2, n, n + 1, n + 3] {
            let w: Vec<usize> = (0..m).map(|x| 1000 + x).collect();
            let e = interleaved(&v, &w, false);
            check(
                || v.par_iter().copied().interleave(w.par_iter().copied()),
                &e,
            );
            check(
                || {
                    v.par_iter()
                        .copied()
                        .interleave(w.par_iter().copied())
                        .rev()
                },
                &e.iter().rev().copied().collect::<Vec<_>>(),
            );
            let e = interleaved(&v, &w, true);
            check(
                || {
                    v.par_iter()
                        .copied()
                        .interleave_shortest(w.par_iter().copied())
                },
                &e,
            );
        }
        for split in 0..=n {
            let (a, b) = v.split_at(split);
            let e: Vec<usize> = a.iter().chain(b.iter().rev()).copied().collect();
            check(|| a.par_iter().chain(b.par_iter().rev()).copied(), &e);
        }
        for size in 1..=4 {
            let e: Vec<Vec<usize>> = v.chunks(size).map(<[usize]>::to_vec).collect();
            check(|| v.par_iter().copied().chunks(size), &e);
            let e: Vec<usize> = v.chunks(size).map(|c| c.iter().sum()).collect();
            check(|| v.par_iter().fold_chunks(size, || 0, |a, x| a + x), &e);
            check(|| v.par_iter().fold_chunks_with(size, 0, |a, x| a + x), &e);
            let e: Vec<Vec<usize>> = v.chunks(size).rev().map(<[usize]>::to_vec).collect();
            check(|| v.par_iter().copied().chunks(size).rev(), &e);
            let e: Vec<Vec<usize>> = v.rchunks(size).map(<[usize]>::to_vec).collect();
            check(
                || {
                    v.par_iter().copied().rev().chunks(size).map(|mut c| {
                        c.reverse();
                        c
                    })
                },
                &e,
            );
        }
        let e: Vec<usize> = v.iter().map(|x| x + 2).collect();
        check(|| v.par_iter().copied().update(|x| *x += 2), &e);
        check(|| v.par_iter().map_with(2, |k, x| x + *k), &e);
        check(|| v.par_iter().map_init(|| 2, |k, x| x + *k), &e);
        check(|| v.par_iter().map(|x| x + 2).with_min_len(3), &e);
        check(|| v.par_iter().map(|x| x + 2).with_max_len(2), &e);
        let strings: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        let e: Vec<(usize, String)> = strings
            .iter()
            .cloned()
            .enumerate()
            .skip(1)
            .step_by(2)
            .collect();
        check(
            || {
                strings
                    .clone()
                    .into_par_iter()
                    .enumerate()
                    .skip(1)
                    .step_by(2)
            },
            &e,
        );
    }
}

/// `a` and `b` in turns, `a` first; then the rest of the longer one, unless `shortest`.
fn interleaved(a: &[usize], b: &[usize], shortest: bool) -> Vec<usize> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    loop {
        if i < a.len() {
            out.push(a[i]);
            i += 1;
        } else if shortest || j == b.len() {
            return out;
        }
        if j < b.len() {
            out.push(b[j]);
            j += 1;
        } else if shortest {
            return out;
        }
        if i == a.len() && j == b.len() {
            return out;
        }
    }
}

/// Cuts a producer into pieces at every position whose bit is set in `cuts` (bit `i`:
/// a cut after output `i`), peeling pieces off the left end or off the right end, and
/// reads the pieces forwards, backwards, or from both ends in turns.
struct Cuts {
    /// The producer's number of items.
    n: usize,
    cuts: u64,
    from_right: bool,
}

impl<T> ProducerCallback<T> for Cuts {
    type Output = Vec<T>;
    fn callback<P: Producer<Item = T>>(self, p: P) -> Vec<T> {
        let n = self.n;
        let points: Vec<usize> = (1..n).filter(|&i| self.cuts >> (i - 1) & 1 == 1).collect();
        // The pieces with their lengths (a producer does not know its own).
        let mut pieces: Vec<(P, usize)> = Vec::new();
        if self.from_right {
            let mut rest = p;
            let mut end = n;
            for &at in points.iter().rev() {
                let (l, r) = rest.split_at(at);
                pieces.push((r, end - at));
                rest = l;
                end = at;
            }
            pieces.push((rest, end));
            pieces.reverse();
        } else {
            let mut rest = p;
            let mut done = 0;
            for &at in &points {
                let (l, r) = rest.split_at(at - done);
                pieces.push((l, at - done));
                rest = r;
                done = at;
            }
            pieces.push((rest, n - done));
        }
        let mut out = Vec::new();
        for (i, (piece, len)) in pieces.into_iter().enumerate() {
            let mut it = piece.into_iter();
            assert_eq!(it.len(), len);
            let items: Vec<T> = match i % 3 {
                0 => it.collect(),
                1 => {
                    let mut v: Vec<T> = it.rev().collect();
                    v.reverse();
                    v
                }
                _ => {
                    let (mut front, mut back) = (Vec::new(), Vec::new());
                    for step in 0.. {
                        assert_eq!(it.len(), len - front.len() - back.len());
                        let next = if step % 2 == 0 {
                            it.next()
                        } else {
                            it.next_back()
                        };
                        match next {
                            Some(x) if step % 2 == 0 => front.push(x),
                            Some(x) => back.push(x),
                            None => break,
                        }
                    }
                    assert!(it.next().is_none() && it.next_back().is_none());
                    back.reverse();
                    front.extend(back);
                    front
                }
            };
            assert_eq!(items.len(), len);
            out.extend(items);
        }
        out
    }
}

/// `items` with a clone of `sep` between every two adjacent ones.
fn interspersed<T: Clone>(items: &[T], sep: T) -> Vec<T> {
    let mut out = Vec::new();
    for item in items {
        if !out.is_empty() {
            out.push(sep.clone());
        }
        out.push(item.clone());
    }
    out
}

/// Checks every way of cutting `make()`'s producer into pieces.
fn check_all_cuts<I, F>(make: F, expected: &[I::Item])
where
    F: Fn() -> I,
    I: IndexedParallelIterator,
    I::Item: PartialEq + Debug,
{
    let n = expected.len();
    assert!(n <= 16, "too many ways to cut {n} items");
    for cuts in 0..1u64 << n.saturating_sub(1) {
        for from_right in [false, true] {
            let got = make().with_producer(Cuts {
                n,
                cuts,
                from_right,
            });
            assert_eq!(
                got, expected,
                "cuts {cuts:#b} (from the right: {from_right})"
            );
        }
    }
}

#[test]
fn intersperse() {
    setup();
    for n in 0..=8usize {
        let v: Vec<usize> = (0..n).map(|x| x * 3 + 1).collect();
        let e = interspersed(&v, 0);
        assert_eq!(e.len(), (2 * n).saturating_sub(1));
        check(|| v.par_iter().copied().intersperse(0), &e);
        check_all_cuts(|| v.par_iter().copied().intersperse(0), &e);
        let rev: Vec<usize> = e.iter().rev().copied().collect();
        check(|| v.par_iter().copied().intersperse(0).rev(), &rev);
        check(|| v.par_iter().copied().rev().intersperse(0), &rev);
        let e2: Vec<(usize, usize)> = e.iter().copied().enumerate().collect();
        check(|| v.par_iter().copied().intersperse(0).enumerate(), &e2);
        let strings: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        let e3 = interspersed(&strings, String::from("-"));
        check(
            || {
                strings
                    .clone()
                    .into_par_iter()
                    .intersperse(String::from("-"))
            },
            &e3,
        );
        // Separators of separators: pieces that start or end inside the inner ones.
        let e4 = interspersed(&e, 1000);
        check(
            || v.par_iter().copied().intersperse(0).intersperse(1000),
            &e4,
        );
        if n <= 4 {
            check_all_cuts(
                || v.par_iter().copied().intersperse(0).intersperse(1000),
                &e4,
            );
        }
    }
}
