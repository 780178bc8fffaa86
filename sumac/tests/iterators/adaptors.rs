//! Every parallel adaptor and consumer against its sequential `std::iter` twin, on a
//! 4-thread pool with a 1 µs heartbeat and forced extra splits (so pieces are split,
//! folded and reduced in every way).
use crate::common;

use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};
use std::num::Wrapping;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use sumac::prelude::*;

fn pool() -> &'static sumac::ThreadPool {
    common::forced_split_pool()
}

fn on_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    pool().install(f)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 48,
        ..ProptestConfig::default()
    }
}

fn small_vec() -> impl Strategy<Value = Vec<i32>> {
    prop::collection::vec(-1000i32..1000, 0..300)
}

/// The items with a clone of `sep` between every two adjacent ones (itertools'
/// `intersperse`).
fn interspersed<T: Clone>(items: impl IntoIterator<Item = T>, sep: T) -> Vec<T> {
    let mut out = Vec::new();
    for item in items {
        if !out.is_empty() {
            out.push(sep.clone());
        }
        out.push(item);
    }
    out
}

/// Masks of up to 300 positions, from almost all set to almost none.
fn sparse_mask() -> impl Strategy<Value = Vec<bool>> {
    (0.0f64..1.0).prop_flat_map(|p| prop::collection::vec(prop::bool::weighted(p * p), 0..300))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn one_to_one_adaptors(v in small_vec(), n in 0usize..320, step in 1usize..7) {
        on_pool(|| {
            let seq: Vec<i64> = v.iter().map(|&x| x as i64 * 3).collect();
            prop_assert_eq!(v.par_iter().map(|&x| x as i64 * 3).collect::<Vec<_>>(), seq);
            prop_assert_eq!(v.par_iter().copied().collect::<Vec<_>>(), v.clone());
            prop_assert_eq!(v.par_iter().cloned().collect::<Vec<_>>(), v.clone());
            let calls = AtomicUsize::new(0);
            let inspected: Vec<i32> = v
                .par_iter()
                .inspect(|_| {
                    calls.fetch_add(1, Ordering::Relaxed);
                })
                .copied()
                .collect();
            prop_assert_eq!(inspected, v.clone());
            prop_assert_eq!(calls.load(Ordering::Relaxed), v.len());
            prop_assert_eq!(
                v.par_iter().enumerate().map(|(i, &x)| (i, x)).collect::<Vec<_>>(),
                v.iter().copied().enumerate().collect::<Vec<_>>()
            );
            prop_assert_eq!(v.par_iter().rev().copied().collect::<Vec<_>>(),
                v.iter().rev().copied().collect::<Vec<_>>());
            prop_assert_eq!(v.par_iter().skip(n).copied().collect::<Vec<_>>(),
                v.iter().skip(n).copied().collect::<Vec<_>>());
            prop_assert_eq!(v.par_iter().take(n).copied().collect::<Vec<_>>(),
                v.iter().take(n).copied().collect::<Vec<_>>());
            prop_assert_eq!(v.par_iter().step_by(step).copied().collect::<Vec<_>>(),
                v.iter().step_by(step).copied().collect::<Vec<_>>());
            prop_assert_eq!(v.par_iter().with_min_len(step * 10).copied().collect::<Vec<_>>(), v.clone());
            prop_assert_eq!(v.par_iter().with_max_len(step).copied().collect::<Vec<_>>(), v.clone());
            // Composition of index-preserving adaptors.
            prop_assert_eq!(
                v.par_iter().enumerate().rev().skip(n / 3).step_by(step).take(n)
                    .map(|(i, &x)| i as i64 + x as i64).collect::<Vec<_>>(),
                v.iter().enumerate().rev().skip(n / 3).step_by(step).take(n)
                    .map(|(i, &x)| i as i64 + x as i64).collect::<Vec<_>>()
            );
            Ok(())
        })?;
    }

    #[test]
    fn zip_and_chain(a in small_vec(), b in small_vec()) {
        on_pool(|| {
            prop_assert_eq!(
                a.par_iter().zip(&b).map(|(x, y)| x - y).collect::<Vec<_>>(),
                a.iter().zip(&b).map(|(x, y)| x - y).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                a.par_iter().zip(b.par_iter().rev()).rev().map(|(x, y)| x * 2 + y).collect::<Vec<_>>(),
                a.iter().zip(b.iter().rev()).rev().map(|(x, y)| x * 2 + y).collect::<Vec<_>>()
            );
            let seq: Vec<i32> = a.iter().chain(&b).copied().collect();
            prop_assert_eq!(a.par_iter().chain(&b).copied().collect::<Vec<_>>(), seq.clone());
            prop_assert_eq!(
                a.par_iter().chain(&b).enumerate().rev().map(|(i, &x)| (i, x)).collect::<Vec<_>>(),
                a.iter().chain(&b).copied().enumerate().collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>()
            );
            // Unindexed chain.
            prop_assert_eq!(
                a.par_iter().filter(|x| *x % 2 == 0).chain(b.par_iter().filter(|x| *x % 3 == 0))
                    .copied().collect::<Vec<_>>(),
                a.iter().filter(|x| *x % 2 == 0).chain(b.iter().filter(|x| *x % 3 == 0))
                    .copied().collect::<Vec<_>>()
            );
            prop_assert_eq!(
                a.par_iter().filter(|x| *x % 2 == 0).chain(&b).find_first(|x| **x % 7 == 0),
                a.iter().filter(|x| *x % 2 == 0).chain(&b).find(|x| **x % 7 == 0)
            );
            prop_assert_eq!(
                a.par_iter().filter(|x| *x % 2 == 0).chain(&b).find_last(|x| **x % 7 == 0),
                a.iter().filter(|x| *x % 2 == 0).chain(&b).rev().find(|x| **x % 7 == 0)
            );
            Ok(())
        })?;
    }

    #[test]
    fn filtering_adaptors(v in small_vec()) {
        on_pool(|| {
            prop_assert_eq!(v.par_iter().filter(|&&x| x % 3 == 0).copied().collect::<Vec<_>>(),
                v.iter().filter(|&&x| x % 3 == 0).copied().collect::<Vec<_>>());
            prop_assert_eq!(
                v.par_iter().filter_map(|&x| if x > 0 { Some(x * 2) } else { None }).collect::<Vec<_>>(),
                v.iter().filter_map(|&x| if x > 0 { Some(x * 2) } else { None }).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                v.par_iter().flat_map_iter(|&x| 0..(x.rem_euclid(4))).collect::<Vec<_>>(),
                v.iter().flat_map(|&x| 0..(x.rem_euclid(4))).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                v.par_iter().filter(|&&x| x % 2 == 0).map(|&x| x + 1).count(),
                v.iter().filter(|&&x| x % 2 == 0).count()
            );
            Ok(())
        })?;
    }

    #[test]
    fn flattening_adaptors(v in small_vec(), m in 2i32..50) {
        on_pool(|| {
            let inner = |x: i32| 0..x.rem_euclid(7);
            let seq: Vec<i32> = v.iter().flat_map(|&x| inner(x)).collect();
            prop_assert_eq!(
                v.par_iter().flat_map(|&x| inner(x).into_par_iter()).collect::<Vec<_>>(),
                seq.clone()
            );
            // Inner loops with adaptors of their own, and an ordered non-commutative reduction.
            prop_assert_eq!(
                v.par_iter()
                    .flat_map(|&x| inner(x).into_par_iter().map(move |y| vec![x, y]))
                    .reduce(Vec::new, |mut a, b| { a.extend(b); a }),
                v.iter().flat_map(|&x| inner(x).map(move |y| vec![x, y])).flatten().collect::<Vec<_>>()
            );
            prop_assert_eq!(
                v.par_iter().flat_map(|&x| inner(x)).filter(|y| y % 2 == 1).count(),
                seq.iter().filter(|&&y| y % 2 == 1).count()
            );
            let target = m % 7;
            let tagged = |&x: &i32| inner(x).into_par_iter().map(move |y| (x, y));
            let seq_tagged: Vec<(i32, i32)> = v.iter().flat_map(|&x| inner(x).map(move |y| (x, y))).collect();
            prop_assert_eq!(
                v.par_iter().flat_map(tagged).find_first(|&(_, y)| y == target),
                seq_tagged.iter().copied().find(|&(_, y)| y == target)
            );
            prop_assert_eq!(
                v.par_iter().flat_map(tagged).find_last(|&(_, y)| y == target),
                seq_tagged.iter().copied().rfind(|&(_, y)| y == target)
            );
            prop_assert_eq!(
                v.par_iter().flat_map(tagged).any(|(_, y)| y == target),
                seq_tagged.iter().any(|&(_, y)| y == target)
            );
            let rows: Vec<Vec<i32>> = v.chunks(1 + m as usize % 5).map(|c| c.to_vec()).collect();
            prop_assert_eq!(rows.clone().into_par_iter().flatten().collect::<Vec<_>>(), v.clone());
            prop_assert_eq!(rows.par_iter().flatten_iter().copied().collect::<Vec<_>>(), v.clone());
            prop_assert_eq!(rows.par_iter().flatten().copied().collect::<Vec<_>>(), v.clone());
            Ok(())
        })?;
    }

    #[test]
    fn stateful_adaptors(v in small_vec()) {
        on_pool(|| {
            let seq: Vec<i32> = v.iter().map(|x| x + 5).collect();
            prop_assert_eq!(v.par_iter().map_with(5, |k, &x| x + *k).collect::<Vec<_>>(), seq.clone());
            prop_assert_eq!(v.par_iter().map_init(|| 5, |k, &x| x + *k).collect::<Vec<_>>(), seq.clone());
            // The producer paths (indexed adaptors after map_with / map_init).
            prop_assert_eq!(
                v.par_iter().map_with(5, |k, &x| x + *k).rev().collect::<Vec<_>>(),
                seq.iter().rev().copied().collect::<Vec<_>>()
            );
            prop_assert_eq!(
                v.par_iter().map_init(|| 5, |k, &x| x + *k).enumerate().map(|(_, x)| x).collect::<Vec<_>>(),
                seq.clone()
            );
            let total = AtomicUsize::new(0);
            v.par_iter().for_each_with(3usize, |k, &x| {
                total.fetch_add(x.unsigned_abs() as usize + *k, Ordering::Relaxed);
            });
            prop_assert_eq!(total.swap(0, Ordering::Relaxed),
                v.iter().map(|x| x.unsigned_abs() as usize + 3).sum::<usize>());
            v.par_iter().for_each_init(|| 2usize, |k, &x| {
                total.fetch_add(x.unsigned_abs() as usize * *k, Ordering::Relaxed);
            });
            prop_assert_eq!(total.swap(0, Ordering::Relaxed),
                v.iter().map(|x| x.unsigned_abs() as usize * 2).sum::<usize>());
            Ok(())
        })?;
    }

    #[test]
    fn arithmetic_consumers(v in small_vec()) {
        on_pool(|| {
            prop_assert_eq!(v.par_iter().sum::<i32>(), v.iter().sum::<i32>());
            prop_assert_eq!(v.par_iter().map(|&x| x as i64).sum::<i64>(), v.iter().map(|&x| x as i64).sum::<i64>());
            prop_assert_eq!(
                v.par_iter().map(|&x| Wrapping(x)).product::<Wrapping<i32>>(),
                v.iter().map(|&x| Wrapping(x)).product::<Wrapping<i32>>()
            );
            prop_assert_eq!(v.par_iter().count(), v.len());
            let sum = AtomicUsize::new(0);
            v.par_iter().for_each(|&x| {
                sum.fetch_add(x.unsigned_abs() as usize, Ordering::Relaxed);
            });
            prop_assert_eq!(sum.into_inner(), v.iter().map(|x| x.unsigned_abs() as usize).sum::<usize>());
            Ok(())
        })?;
    }

    #[test]
    fn ordered_reductions(v in small_vec()) {
        on_pool(|| {
            // Non-commutative operations must combine in order.
            let strings: Vec<String> = v.iter().map(|x| format!("{x},")).collect();
            prop_assert_eq!(
                strings.par_iter().cloned().reduce(String::new, |a, b| a + &b),
                strings.concat()
            );
            prop_assert_eq!(
                v.par_iter().map(|&x| vec![x]).reduce_with(|mut a, b| { a.extend(b); a }),
                if v.is_empty() { None } else { Some(v.clone()) }
            );
            let folded: Vec<Vec<i32>> = v.par_iter().fold(Vec::new, |mut acc, &x| { acc.push(x); acc }).collect();
            prop_assert_eq!(folded.concat(), v.clone());
            let folded: Vec<i32> = v.par_iter()
                .fold_with(Vec::new(), |mut acc, &x| { acc.push(x); acc })
                .reduce(Vec::new, |mut a, b| { a.extend(b); a });
            prop_assert_eq!(folded, v.clone());
            // Keys with ties: min keeps the first, max the last.
            let keyed: Vec<(i32, usize)> = v.iter().enumerate().map(|(i, &x)| (x % 5, i)).collect();
            prop_assert_eq!(v.par_iter().min(), v.iter().min());
            prop_assert_eq!(v.par_iter().max(), v.iter().max());
            prop_assert_eq!(keyed.par_iter().min_by_key(|p| p.0), keyed.iter().min_by_key(|p| p.0));
            prop_assert_eq!(keyed.par_iter().max_by_key(|p| p.0), keyed.iter().max_by_key(|p| p.0));
            prop_assert_eq!(keyed.par_iter().min_by(|a, b| a.0.cmp(&b.0)), keyed.iter().min_by(|a, b| a.0.cmp(&b.0)));
            prop_assert_eq!(keyed.par_iter().max_by(|a, b| a.0.cmp(&b.0)), keyed.iter().max_by(|a, b| a.0.cmp(&b.0)));
            Ok(())
        })?;
    }

    #[test]
    fn searches(v in small_vec(), m in 2i32..50) {
        on_pool(|| {
            let hit = |x: &i32| x % m == 0;
            prop_assert_eq!(v.par_iter().find_first(|x| hit(x)), v.iter().find(|x| hit(x)));
            prop_assert_eq!(v.par_iter().find_last(|x| hit(x)), v.iter().rev().find(|x| hit(x)));
            prop_assert_eq!(v.par_iter().position_first(hit), v.iter().position(hit));
            prop_assert_eq!(v.par_iter().position_last(hit), v.iter().rposition(hit));
            let any = v.par_iter().find_any(|x| hit(x));
            prop_assert_eq!(any.is_some(), v.iter().any(hit));
            if let Some(x) = any {
                prop_assert!(hit(x));
            }
            match v.par_iter().position_any(hit) {
                Some(i) => prop_assert!(hit(&v[i])),
                None => prop_assert!(!v.iter().any(hit)),
            }
            prop_assert_eq!(v.par_iter().any(hit), v.iter().any(hit));
            prop_assert_eq!(v.par_iter().all(|x| !hit(x)), v.iter().all(|x| !hit(x)));
            let r = v.par_iter().try_for_each(|x| if hit(x) { Err(*x) } else { Ok(()) });
            match r {
                Ok(()) => prop_assert!(!v.iter().any(hit)),
                Err(x) => prop_assert!(hit(&x) && v.contains(&x)),
            }
            let r = v.par_iter().try_for_each(|x| if hit(x) { None } else { Some(()) });
            prop_assert_eq!(r.is_none(), v.iter().any(hit));
            // Searches after filtering (keys in the underlying index space).
            prop_assert_eq!(
                v.par_iter().filter(|x| **x > 0).find_first(|x| hit(x)),
                v.iter().filter(|x| **x > 0).find(|x| hit(x))
            );
            prop_assert_eq!(
                v.par_iter().flat_map_iter(|&x| [x, x + 1]).find_last(|x| hit(x)),
                v.iter().flat_map(|&x| [x, x + 1]).rev().find(|x| hit(x))
            );
            Ok(())
        })?;
    }

    #[test]
    fn fallible_consumers(v in small_vec(), m in 2i32..60) {
        on_pool(|| {
            let bytes: Vec<u8> = v.iter().map(|&x| (x.rem_euclid(7)) as u8).collect();
            // Partial sums of non-negative items never exceed the total, so the checked
            // sum fails in any grouping exactly when the total overflows.
            let total: u32 = bytes.iter().map(|&b| u32::from(b)).sum();
            let expected = u8::try_from(total).ok();
            prop_assert_eq!(bytes.par_iter().map(|&b| Some(b)).try_reduce(|| 0, u8::checked_add), expected);
            prop_assert_eq!(
                bytes.par_iter().map(|&b| Some(b)).try_reduce_with(u8::checked_add),
                if bytes.is_empty() { None } else { Some(expected) }
            );
            prop_assert_eq!(
                bytes.par_iter().try_fold(|| 0u8, |a, &b| a.checked_add(b)).try_reduce(|| 0, u8::checked_add),
                expected
            );
            prop_assert_eq!(
                bytes.par_iter().try_fold_with(0u8, |a, &b| a.checked_add(b)).try_reduce(|| 0, u8::checked_add),
                expected
            );
            // Failing items: the result is one of them.
            let hit = |x: i32| x % m == 0;
            let checked = |x: i32| if hit(x) { Err(x) } else { Ok(i64::from(x)) };
            match v.par_iter().map(|&x| checked(x)).try_reduce(|| 0, |a, b| Ok(a + b)) {
                Ok(sum) => prop_assert!(!v.iter().any(|&x| hit(x)) && sum == v.iter().map(|&x| i64::from(x)).sum::<i64>()),
                Err(x) => prop_assert!(hit(x) && v.contains(&x)),
            }
            let flow = v.par_iter().map(|&x| if hit(x) { ControlFlow::Break(x) } else { ControlFlow::Continue(()) })
                .try_reduce(|| (), |(), ()| ControlFlow::Continue(()));
            prop_assert_eq!(flow.is_break(), v.iter().any(|&x| hit(x)));
            prop_assert_eq!(
                v.par_iter().try_for_each_with(m, |m, &x| if x % *m == 0 { Err(x) } else { Ok(()) }).is_err(),
                v.iter().any(|&x| hit(x))
            );
            prop_assert_eq!(
                v.par_iter().try_for_each_init(|| m, |m, &x| if x % *m == 0 { None } else { Some(()) }).is_none(),
                v.iter().any(|&x| hit(x))
            );
            // while_some: all items when no None; otherwise an ordered subsequence of the Some items.
            let kept: Vec<i32> = v.par_iter().map(|&x| if hit(x) { None } else { Some(x) }).while_some().collect();
            if v.iter().any(|&x| hit(x)) {
                let mut rest = v.iter().filter(|&&x| !hit(x));
                prop_assert!(kept.iter().all(|k| rest.any(|x| x == k)), "{:?} is not a subsequence", kept);
            } else {
                prop_assert_eq!(kept, v.clone());
            }
            Ok(())
        })?;
    }

    #[test]
    fn indexed_comparisons_and_positions(v in small_vec(), w in small_vec(), m in 2i32..40, size in 1usize..9) {
        on_pool(|| {
            for (a, b) in [(&v, &w), (&v, &v), (&w, &v)] {
                prop_assert_eq!(a.par_iter().cmp(b), a.iter().cmp(b.iter()));
                prop_assert_eq!(a.par_iter().partial_cmp(b), a.iter().partial_cmp(b.iter()));
                prop_assert_eq!(a.par_iter().eq(b), a.iter().eq(b.iter()));
                prop_assert_eq!(a.par_iter().ne(b), a.iter().ne(b.iter()));
                prop_assert_eq!(a.par_iter().lt(b), a.iter().lt(b.iter()));
                prop_assert_eq!(a.par_iter().le(b), a.iter().le(b.iter()));
                prop_assert_eq!(a.par_iter().gt(b), a.iter().gt(b.iter()));
                prop_assert_eq!(a.par_iter().ge(b), a.iter().ge(b.iter()));
            }
            // A common prefix decides nothing: the shorter one is less.
            let prefix = &v[..v.len() / 2];
            prop_assert_eq!(prefix.par_iter().cmp(&v), prefix.iter().cmp(v.iter()));
            prop_assert_eq!(
                v.par_iter().positions(|&x| x % m == 0).collect::<Vec<_>>(),
                v.iter().enumerate().filter(|(_, &x)| x % m == 0).map(|(i, _)| i).collect::<Vec<_>>()
            );
            let parse = |&x: &i32| if x % m == 0 { Some(x * 2) } else { None };
            prop_assert_eq!(v.par_iter().find_map_first(parse), v.iter().find_map(parse));
            prop_assert_eq!(v.par_iter().find_map_last(parse), v.iter().rev().find_map(parse));
            let any = v.par_iter().find_map_any(parse);
            prop_assert_eq!(any.is_some(), v.iter().any(|&x| x % m == 0));
            prop_assert!(any.is_none_or(|y| y % (2 * m) == 0));
            prop_assert_eq!(
                v.par_iter().copied().chunks(size).collect::<Vec<_>>(),
                v.chunks(size).map(<[i32]>::to_vec).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                v.par_iter().fold_chunks(size, String::new, |s, x| s + &x.to_string()).collect::<Vec<_>>(),
                v.chunks(size).map(|c| c.iter().map(|x| x.to_string()).collect::<String>()).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                v.par_iter().fold_chunks_with(size, vec![m], |mut acc, &x| { acc.push(x); acc }).collect::<Vec<_>>(),
                v.chunks(size).map(|c| [&[m][..], c].concat()).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                v.par_iter().copied().update(|x| *x -= 1).collect::<Vec<_>>(),
                v.iter().map(|x| x - 1).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                v.par_iter().zip_eq(v.par_iter().rev()).map(|(a, b)| a - b).collect::<Vec<_>>(),
                v.iter().zip(v.iter().rev()).map(|(a, b)| a - b).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                sumac::iter::repeat(m).zip(&v).map(|(m, &x)| m * x).collect::<Vec<_>>(),
                v.iter().map(|&x| m * x).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                v.par_iter().filter(|&&x| x % m == 0).copied().collect_vec_list().into_iter().flatten().collect::<Vec<_>>(),
                v.iter().filter(|&&x| x % m == 0).copied().collect::<Vec<_>>()
            );
            let mut doubled = vec![0i32; v.len() + 3];
            (&v, &mut doubled).into_par_iter().for_each(|(x, d)| *d = 2 * x);
            prop_assert!(doubled.iter().zip(&v).all(|(d, x)| *d == 2 * x));
            prop_assert!(doubled[v.len()..].iter().all(|&d| d == 0));
            let mut drained_from = v.clone();
            let (lo, hi) = (v.len() / 3, v.len() / 2);
            let drained: Vec<i32> = drained_from.par_drain(lo..hi).collect();
            prop_assert_eq!(&drained[..], &v[lo..hi]);
            prop_assert_eq!(drained_from, [&v[..lo], &v[hi..]].concat());
            Ok(())
        })?;
    }

    #[test]
    fn vec_par_drain_in_place(len in 0usize..400, a in 0usize..420, b in 0usize..420, k in 0usize..50, m in 1usize..9) {
        let (lo, hi) = (a.min(b).min(len), a.max(b).min(len));
        let original: Vec<String> = (0..len).map(|i| i.to_string()).collect();
        on_pool(|| {
            let mut expected = original.clone();
            let expected_drained: Vec<String> = expected.drain(lo..hi).collect();
            let mut v = original.clone();
            prop_assert_eq!(v.par_drain(lo..hi).collect::<Vec<_>>(), expected_drained.clone());
            prop_assert_eq!(&v, &expected);
            let mut v = original.clone();
            prop_assert_eq!(v.par_drain(lo..hi).rev().collect::<Vec<_>>(),
                expected_drained.iter().rev().cloned().collect::<Vec<_>>());
            prop_assert_eq!(&v, &expected);
            let mut v = original.clone();
            prop_assert_eq!(v.par_drain(lo..hi).skip(k).take(k + 1).collect::<Vec<_>>(),
                expected_drained.iter().skip(k).take(k + 1).cloned().collect::<Vec<_>>());
            prop_assert_eq!(&v, &expected);
            let mut v = original.clone();
            prop_assert_eq!(v.par_drain(lo..hi).find_first(|s| s.len() % m == 0 && s.ends_with('7')),
                expected_drained.iter().find(|s| s.len() % m == 0 && s.ends_with('7')).cloned());
            prop_assert_eq!(&v, &expected);
            // Dropped unused: the range's items go, as with `Vec::drain`.
            let mut v = original.clone();
            if hi > lo {
                drop(v.par_drain(lo..=hi - 1));
            } else {
                drop(v.par_drain(lo..));
                expected.truncate(lo);
            }
            prop_assert_eq!(&v, &expected);
            Ok(())
        })?;
    }

    #[test]
    fn string_parts(parts in prop::collection::vec(prop::sample::select(vec![
        "a", "bc", "é", "日本", "\u{1F600}", " ", "  ", "\t", "\n", "\r\n", "\r", ",", ",,", "\u{3000}", "x\u{85}y",
    ]), 0..60), m in 2i32..40) {
        let text: String = parts.concat();
        let text = text.as_str();
        on_pool(|| {
            prop_assert_eq!(text.par_chars().collect::<Vec<_>>(), text.chars().collect::<Vec<_>>());
            prop_assert_eq!(text.par_chars().count(), text.chars().count());
            prop_assert_eq!(text.par_char_indices().collect::<Vec<_>>(), text.char_indices().collect::<Vec<_>>());
            prop_assert_eq!(text.par_bytes().collect::<Vec<_>>(), text.bytes().collect::<Vec<_>>());
            prop_assert_eq!(text.par_lines().collect::<Vec<_>>(), text.lines().collect::<Vec<_>>());
            prop_assert_eq!(text.par_split_whitespace().collect::<Vec<_>>(), text.split_whitespace().collect::<Vec<_>>());
            prop_assert_eq!(text.par_split_ascii_whitespace().collect::<Vec<_>>(), text.split_ascii_whitespace().collect::<Vec<_>>());
            prop_assert_eq!(text.par_split(',').collect::<Vec<_>>(), text.split(',').collect::<Vec<_>>());
            prop_assert_eq!(text.par_split(['\n', 'é']).collect::<Vec<_>>(), text.split(['\n', 'é']).collect::<Vec<_>>());
            prop_assert_eq!(text.par_split(&['a', ' '][..]).collect::<Vec<_>>(), text.split(&['a', ' '][..]).collect::<Vec<_>>());
            prop_assert_eq!(text.par_split(char::is_whitespace).collect::<Vec<_>>(), text.split(char::is_whitespace).collect::<Vec<_>>());
            prop_assert_eq!(text.par_split_terminator(',').collect::<Vec<_>>(), text.split_terminator(',').collect::<Vec<_>>());
            prop_assert_eq!(text.par_split_terminator('\n').collect::<Vec<_>>(), text.split_terminator('\n').collect::<Vec<_>>());
            prop_assert_eq!(text.par_split_inclusive(',').collect::<Vec<_>>(), text.split_inclusive(',').collect::<Vec<_>>());
            prop_assert_eq!(text.par_split_inclusive(['\n', 'é']).collect::<Vec<_>>(), text.split_inclusive(['\n', 'é']).collect::<Vec<_>>());
            prop_assert_eq!(text.par_matches(char::is_whitespace).collect::<Vec<_>>(), text.matches(char::is_whitespace).collect::<Vec<_>>());
            prop_assert_eq!(text.par_match_indices(['é', ',']).collect::<Vec<_>>(), text.match_indices(['é', ',']).collect::<Vec<_>>());
            prop_assert_eq!(text.par_encode_utf16().collect::<Vec<_>>(), text.encode_utf16().collect::<Vec<_>>());
            // Searches keep the string's order.
            let long = |w: &&str| w.len() as i32 > m / 8;
            prop_assert_eq!(text.par_split_whitespace().find_first(long), text.split_whitespace().find(long));
            prop_assert_eq!(text.par_split_whitespace().find_last(long), text.split_whitespace().rev().find(long));
            Ok(())
        })?;
    }

    #[test]
    fn unordered_take_and_skip(v in small_vec(), n in 0usize..320, m in 2i32..40) {
        on_pool(|| {
            fn counts(v: &[i32]) -> HashMap<i32, usize> {
                let mut c = HashMap::new();
                for &x in v {
                    *c.entry(x).or_insert(0) += 1;
                }
                c
            }
            let all = counts(&v);
            let within = |got: &[i32]| counts(got).iter().all(|(x, k)| all.get(x).is_some_and(|a| k <= a));
            let taken: Vec<i32> = v.par_iter().copied().take_any(n).collect();
            prop_assert_eq!(taken.len(), n.min(v.len()));
            prop_assert!(within(&taken));
            let kept: Vec<i32> = v.par_iter().copied().skip_any(n).collect();
            prop_assert_eq!(kept.len(), v.len() - n.min(v.len()));
            prop_assert!(within(&kept));
            let small = |x: &i32| x % m != 0;
            let taken: Vec<i32> = v.par_iter().copied().take_any_while(small).collect();
            prop_assert!(taken.iter().all(small) && within(&taken));
            if v.iter().all(small) {
                prop_assert_eq!(taken.len(), v.len());
            }
            let kept: Vec<i32> = v.par_iter().copied().skip_any_while(small).collect();
            prop_assert!(within(&kept));
            // Items that fail the predicate are never skipped.
            let failing: Vec<i32> = v.iter().copied().filter(|x| !small(x)).collect();
            prop_assert!(counts(&failing).iter().all(|(x, k)| counts(&kept).get(x).is_some_and(|g| k <= g)));
            prop_assert_eq!(v.par_iter().copied().panic_fuse().collect::<Vec<_>>(), v.clone());
            Ok(())
        })?;
    }

    #[test]
    fn slice_pieces(v in prop::collection::vec(-20i32..20, 0..300), m in 2i32..9) {
        on_pool(|| {
            let sep = |x: &i32| x % m == 0;
            prop_assert_eq!(v.par_split(sep).collect::<Vec<_>>(), v.split(sep).collect::<Vec<_>>());
            prop_assert_eq!(v.par_split_inclusive(sep).collect::<Vec<_>>(), v.split_inclusive(sep).collect::<Vec<_>>());
            let same = |a: &i32, b: &i32| (a - b).abs() < m;
            prop_assert_eq!(v.par_chunk_by(same).collect::<Vec<_>>(), v.chunk_by(same).collect::<Vec<_>>());
            let mut w = v.clone();
            w.par_split_mut(sep).for_each(|piece| piece.reverse());
            let mut expected = v.clone();
            expected.split_mut(sep).for_each(|piece| piece.reverse());
            prop_assert_eq!(&w, &expected);
            prop_assert_eq!(
                w.par_split_inclusive_mut(sep).map(|piece| piece.to_vec()).collect::<Vec<_>>(),
                expected.split_inclusive_mut(sep).map(|piece| piece.to_vec()).collect::<Vec<_>>()
            );
            w.par_chunk_by_mut(same).for_each(|run| run[0] = run.len() as i32);
            expected.chunk_by_mut(same).for_each(|run| run[0] = run.len() as i32);
            prop_assert_eq!(&w, &expected);
            let long = |piece: &&[i32]| piece.len() > 2;
            prop_assert_eq!(v.par_split(sep).find_first(long), v.split(sep).find(long));
            prop_assert_eq!(v.par_chunk_by(same).find_last(long), v.chunk_by(same).rev().find(long));
            Ok(())
        })?;
    }

    #[test]
    fn block_by_block(v in prop::collection::vec(-1000i32..1000, 0..3000), size in 1usize..200, m in 2i32..60) {
        on_pool(|| {
            prop_assert_eq!(v.par_iter().by_uniform_blocks(size).copied().collect::<Vec<_>>(), v.clone());
            prop_assert_eq!(v.par_iter().by_exponential_blocks().copied().collect::<Vec<_>>(), v.clone());
            let hit = |x: &&i32| *x % m == 0;
            prop_assert_eq!(v.par_iter().by_uniform_blocks(size).find_first(hit), v.iter().find(hit));
            prop_assert_eq!(v.par_iter().by_exponential_blocks().find_last(hit), v.iter().rev().find(hit));
            prop_assert_eq!(
                v.par_iter().by_uniform_blocks(size).map(|x| vec![*x]).reduce(Vec::new, |mut a, b| { a.extend(b); a }),
                v.clone()
            );
            // A search that succeeds in the first block never starts the second.
            let looked = AtomicUsize::new(0);
            let first = v.par_iter().inspect(|_| { looked.fetch_add(1, Ordering::Relaxed); })
                .by_uniform_blocks(size).find_first(|_| true);
            prop_assert_eq!(first, v.first());
            prop_assert!(looked.load(Ordering::Relaxed) <= size.min(v.len()));
            Ok(())
        })?;
    }

    #[test]
    fn collection_sources(v in small_vec(), fronts in 0usize..40) {
        on_pool(|| {
            fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
                v.sort();
                v
            }
            let map: HashMap<usize, i32> = v.iter().copied().enumerate().collect();
            prop_assert_eq!(
                sorted(map.par_iter().map(|(&k, &x)| (k, x)).collect::<Vec<_>>()),
                sorted(map.iter().map(|(&k, &x)| (k, x)).collect::<Vec<_>>())
            );
            let mut doubled = map.clone();
            doubled.par_iter_mut().for_each(|(_, x)| *x *= 2);
            prop_assert!(doubled.iter().all(|(k, &x)| x == 2 * map[k]));
            prop_assert_eq!(sorted(map.clone().into_par_iter().collect::<Vec<_>>()),
                sorted(map.into_iter().collect::<Vec<_>>()));
            let set: HashSet<i32> = v.iter().copied().collect();
            prop_assert_eq!(set.par_iter().copied().collect::<HashSet<_>>(), set.clone());
            prop_assert_eq!(set.clone().into_par_iter().collect::<HashSet<_>>(), set);
            // Ordered collections keep their order.
            let mut tree: BTreeMap<i32, usize> = v.iter().map(|&x| (x, 0)).collect();
            prop_assert_eq!(tree.par_iter().map(|(&k, _)| k).collect::<Vec<_>>(),
                tree.keys().copied().collect::<Vec<_>>());
            tree.par_iter_mut().for_each(|(&k, n)| *n = k.unsigned_abs() as usize);
            prop_assert!(tree.iter().all(|(&k, &n)| n == k.unsigned_abs() as usize));
            prop_assert_eq!(tree.clone().into_par_iter().collect::<Vec<_>>(),
                tree.into_iter().collect::<Vec<_>>());
            let tree_set: BTreeSet<i32> = v.iter().copied().collect();
            prop_assert_eq!(tree_set.par_iter().copied().collect::<Vec<_>>(),
                tree_set.iter().copied().collect::<Vec<_>>());
            prop_assert_eq!(tree_set.clone().into_par_iter().collect::<BTreeSet<_>>(), tree_set);
            let mut list: LinkedList<i32> = v.iter().copied().collect();
            list.par_iter_mut().for_each(|x| *x += 1);
            prop_assert_eq!(list.par_iter().copied().collect::<Vec<_>>(),
                v.iter().map(|x| x + 1).collect::<Vec<_>>());
            prop_assert_eq!(list.into_par_iter().collect::<Vec<_>>(),
                v.iter().map(|x| x + 1).collect::<Vec<_>>());
            let heap: BinaryHeap<i32> = v.iter().copied().collect();
            prop_assert_eq!(sorted(heap.par_iter().copied().collect::<Vec<_>>()), sorted(v.clone()));
            prop_assert_eq!(heap.clone().into_par_iter().collect::<BinaryHeap<_>>().into_sorted_vec(),
                heap.into_sorted_vec());
            // A deque whose items wrap around its buffer (two slices).
            let mut deque: VecDeque<i32> = v.iter().copied().skip(fronts.min(v.len())).collect();
            for &x in v[..fronts.min(v.len())].iter().rev() {
                deque.push_front(x);
            }
            prop_assert_eq!(deque.par_iter().copied().collect::<Vec<_>>(), v.clone());
            prop_assert_eq!(deque.par_iter().rev().copied().collect::<Vec<_>>(),
                v.iter().rev().copied().collect::<Vec<_>>());
            deque.par_iter_mut().enumerate().for_each(|(i, x)| *x -= i as i32);
            prop_assert!(deque.iter().enumerate().all(|(i, &x)| x == v[i] - i as i32));
            prop_assert_eq!(deque.clone().into_par_iter().collect::<VecDeque<_>>(), deque.clone());
            // Drains.
            let (lo, hi) = (deque.len() / 4, deque.len() / 2);
            let mut drained_deque = deque.clone();
            let mut expected_deque = deque.clone();
            prop_assert_eq!(drained_deque.par_drain(lo..hi).collect::<Vec<_>>(),
                expected_deque.drain(lo..hi).collect::<Vec<_>>());
            prop_assert_eq!(&drained_deque, &expected_deque);
            let mut map: HashMap<usize, i32> = v.iter().copied().enumerate().collect();
            let n = map.len();
            prop_assert_eq!(map.par_drain().count(), n);
            prop_assert!(map.is_empty());
            let mut set: HashSet<i32> = v.iter().copied().collect();
            let expected_set = set.clone();
            prop_assert_eq!(set.par_drain().collect::<HashSet<_>>(), expected_set);
            prop_assert!(set.is_empty());
            let mut heap: BinaryHeap<i32> = v.iter().copied().collect();
            prop_assert_eq!(sorted(heap.par_drain().collect::<Vec<_>>()), sorted(v.clone()));
            prop_assert!(heap.is_empty());
            let mut text: String = v.iter().map(|&x| char::from_u32(0x61 + x.unsigned_abs() % 0x800).unwrap_or('?')).collect();
            let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
            let (a, b) = (bounds[bounds.len() / 3], bounds[bounds.len() / 2]);
            let mut expected_text = text.clone();
            prop_assert_eq!(text.par_drain(a..b).collect::<String>(), expected_text.drain(a..b).collect::<String>());
            prop_assert_eq!(text, expected_text);
            prop_assert_eq!(deque.into_par_iter().collect::<Vec<_>>(),
                v.iter().enumerate().map(|(i, x)| x - i as i32).collect::<Vec<_>>());
            Ok(())
        })?;
    }

    #[test]
    fn collections(v in small_vec()) {
        on_pool(|| {
            let pairs: Vec<(i32, usize)> = v.iter().enumerate().map(|(i, &x)| (x, i)).collect();
            prop_assert_eq!(pairs.par_iter().copied().collect::<HashMap<_, _>>(),
                pairs.iter().copied().collect::<HashMap<_, _>>());
            prop_assert_eq!(pairs.par_iter().copied().collect::<BTreeMap<_, _>>(),
                pairs.iter().copied().collect::<BTreeMap<_, _>>());
            prop_assert_eq!(v.par_iter().copied().collect::<HashSet<_>>(), v.iter().copied().collect::<HashSet<_>>());
            let s: String = v.par_iter().map(|x| x.to_string()).collect();
            prop_assert_eq!(s, v.iter().map(|x| x.to_string()).collect::<String>());
            let s: String = v.par_iter().map(|x| char::from(b'a' + x.rem_euclid(26) as u8)).collect();
            prop_assert_eq!(s, v.iter().map(|x| char::from(b'a' + x.rem_euclid(26) as u8)).collect::<String>());
            let (a, b): (Vec<i32>, Vec<usize>) = pairs.par_iter().copied().unzip();
            let (sa, sb): (Vec<i32>, Vec<usize>) = pairs.iter().copied().unzip();
            prop_assert_eq!((a, b), (sa, sb));
            let (even, odd): (Vec<i32>, Vec<i32>) = v.par_iter().copied().partition(|x| *x % 2 == 0);
            let (seven, sodd): (Vec<i32>, Vec<i32>) = v.iter().partition(|x| *x % 2 == 0);
            prop_assert_eq!((even, odd), (seven, sodd));
            let (halves, rest): (Vec<i32>, HashSet<String>) = v.par_iter().partition_map(|&x| {
                if x % 2 == 0 { sumac::iter::Either::Left(x / 2) } else { sumac::iter::Either::Right(x.to_string()) }
            });
            prop_assert_eq!(halves, v.iter().filter(|x| *x % 2 == 0).map(|x| x / 2).collect::<Vec<_>>());
            prop_assert_eq!(rest, v.iter().filter(|x| *x % 2 != 0).map(|x| x.to_string()).collect::<HashSet<_>>());
            let (xs, is): (Vec<i32>, HashSet<usize>) = pairs.par_iter().copied().collect();
            prop_assert_eq!(&xs, &v);
            prop_assert_eq!(is, (0..v.len()).collect::<HashSet<_>>());
            let mut both = (vec![7i32], Vec::<usize>::new());
            both.par_extend(pairs.par_iter().copied());
            prop_assert_eq!(both, ([&[7][..], &v[..]].concat(), (0..v.len()).collect::<Vec<_>>()));
            let (mut a, mut b) = (vec![5], vec![6usize; 9]);
            pairs.par_iter().copied().unzip_into_vecs(&mut a, &mut b);
            prop_assert_eq!((a, b), pairs.iter().copied().unzip::<i32, usize, Vec<_>, Vec<_>>());
            let mut out = vec![1, 2, 3];
            v.par_iter().copied().collect_into_vec(&mut out);
            prop_assert_eq!(&out, &v);
            out.par_extend(v.par_iter().filter(|x| **x < 0).copied());
            let mut expected = v.clone();
            expected.extend(v.iter().filter(|x| **x < 0));
            prop_assert_eq!(&out, &expected);
            let ok: Result<Vec<i32>, i32> = v.par_iter().map(|&x| if x < 990 { Ok(x) } else { Err(x) }).collect();
            let sok: Result<Vec<i32>, i32> = v.iter().map(|&x| if x < 990 { Ok(x) } else { Err(x) }).collect();
            prop_assert_eq!(ok.is_ok(), sok.is_ok());
            if let Ok(ok) = ok { prop_assert_eq!(ok, v.clone()); }
            let opt: Option<Vec<i32>> = v.par_iter().map(|&x| (x < 990).then_some(x)).collect();
            prop_assert_eq!(opt, v.iter().map(|&x| (x < 990).then_some(x)).collect::<Option<Vec<i32>>>());
            Ok(())
        })?;
    }

    #[test]
    fn owning_and_mutable_sources(v in small_vec(), size in 1usize..9) {
        on_pool(|| {
            let strings: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            prop_assert_eq!(strings.clone().into_par_iter().collect::<Vec<_>>(), strings.clone());
            prop_assert_eq!(
                strings.clone().into_par_iter().rev().skip(3).map(|s| s.len()).collect::<Vec<_>>(),
                strings.iter().rev().skip(3).map(|s| s.len()).collect::<Vec<_>>()
            );
            let mut w = v.clone();
            w.par_iter_mut().for_each(|x| *x = x.wrapping_mul(3) - 1);
            prop_assert_eq!(&w, &v.iter().map(|x| x.wrapping_mul(3) - 1).collect::<Vec<_>>());
            prop_assert_eq!(
                v.par_chunks(size).map(|c| c.to_vec()).collect::<Vec<_>>(),
                v.chunks(size).map(|c| c.to_vec()).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                v.par_windows(size).map(|c| c.iter().sum::<i32>()).collect::<Vec<_>>(),
                v.windows(size).map(|c| c.iter().sum::<i32>()).collect::<Vec<_>>()
            );
            let mut w = v.clone();
            w.par_chunks_mut(size).for_each(|c| c.reverse());
            let mut expected = v.clone();
            expected.chunks_mut(size).for_each(|c| c.reverse());
            prop_assert_eq!(w, expected);
            let mut w = v.clone();
            w.par_rchunks_mut(size).enumerate().for_each(|(i, c)| c[0] = i as i32);
            w.par_chunks_exact_mut(size).for_each(|c| c.rotate_left(1));
            w.par_rchunks_exact_mut(size).for_each(|c| c.reverse());
            let mut expected = v.clone();
            expected.rchunks_mut(size).enumerate().for_each(|(i, c)| c[0] = i as i32);
            expected.chunks_exact_mut(size).for_each(|c| c.rotate_left(1));
            expected.rchunks_exact_mut(size).for_each(|c| c.reverse());
            prop_assert_eq!(w, expected);
            let first = v.first().copied();
            prop_assert_eq!(first.into_par_iter().collect::<Vec<_>>(), first.into_iter().collect::<Vec<_>>());
            prop_assert_eq!((&first).into_par_iter().count(), first.iter().count());
            Ok(())
        })?;
    }

    #[test]
    fn integer_ranges(a in -300i64..300, len in 0i64..300) {
        on_pool(|| {
            let b = a + len;
            macro_rules! check {
                ($($t:ty)*) => {$(
                    let (lo, hi) = (a.rem_euclid(120) as $t, b.rem_euclid(127) as $t);
                    prop_assert_eq!((lo..hi).into_par_iter().collect::<Vec<$t>>(), (lo..hi).collect::<Vec<$t>>());
                    prop_assert_eq!((lo..=hi).into_par_iter().collect::<Vec<$t>>(), (lo..=hi).collect::<Vec<$t>>());
                    prop_assert_eq!((lo..hi).into_par_iter().map(|x| x as i128).sum::<i128>(),
                        (lo..hi).map(|x| x as i128).sum::<i128>());
                    prop_assert_eq!((lo..=hi).into_par_iter().find_last(|x| x % 7 == 3),
                        (lo..=hi).rev().find(|x| x % 7 == 3));
                )*};
            }
            check!(u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize);
            prop_assert_eq!((a..b).into_par_iter().collect::<Vec<_>>(), (a..b).collect::<Vec<_>>());
            prop_assert_eq!((a as i8..=(b as i8)).into_par_iter().collect::<Vec<_>>(),
                (a as i8..=(b as i8)).collect::<Vec<_>>());
            Ok(())
        })?;
    }

    #[test]
    fn char_ranges(a in 0u32..0x11_0000, len in 0u32..3000, near_gap in any::<bool>(), k in 0usize..3100) {
        // Half the cases start just below the surrogate gap so that they straddle it.
        let a = if near_gap { 0xD800 - (a % 1500) } else { a };
        let (Some(lo), Some(hi)) = (char_from_below(a), char_from_below(a.saturating_add(len))) else {
            return Ok(());
        };
        on_pool(|| {
            let seq: Vec<char> = (lo..hi).collect();
            prop_assert_eq!((lo..hi).into_par_iter().collect::<Vec<char>>(), seq.clone());
            prop_assert_eq!((lo..hi).into_par_iter().len(), seq.len());
            prop_assert_eq!((lo..hi).into_par_iter().rev().collect::<Vec<char>>(),
                seq.iter().rev().copied().collect::<Vec<_>>());
            prop_assert_eq!((lo..hi).into_par_iter().skip(k).take(k / 2 + 1).collect::<Vec<char>>(),
                seq.iter().skip(k).take(k / 2 + 1).copied().collect::<Vec<_>>());
            prop_assert_eq!((lo..hi).into_par_iter().enumerate().filter(|(i, _)| i % 5 == 1).collect::<Vec<_>>(),
                seq.iter().copied().enumerate().filter(|(i, _)| i % 5 == 1).collect::<Vec<_>>());
            prop_assert_eq!((lo..hi).into_par_iter().step_by(k % 7 + 1).collect::<Vec<char>>(),
                seq.iter().step_by(k % 7 + 1).copied().collect::<Vec<_>>());
            prop_assert_eq!((lo..hi).into_par_iter().rev().step_by(k % 5 + 1).collect::<Vec<char>>(),
                seq.iter().rev().step_by(k % 5 + 1).copied().collect::<Vec<_>>());
            prop_assert_eq!((lo..hi).into_par_iter().map(u32::from).map(u64::from).sum::<u64>(),
                seq.iter().map(|&c| u64::from(u32::from(c))).sum::<u64>());
            let seq_inclusive: Vec<char> = (lo..=hi).collect();
            prop_assert_eq!((lo..=hi).into_par_iter().collect::<Vec<char>>(), seq_inclusive.clone());
            prop_assert_eq!((lo..=hi).into_par_iter().len(), seq_inclusive.len());
            prop_assert_eq!((lo..=hi).into_par_iter().collect::<String>(), seq_inclusive.iter().collect::<String>());
            prop_assert_eq!((hi..lo).into_par_iter().count(), (hi..lo).count());
            prop_assert_eq!((hi..=lo).into_par_iter().count(), (hi..=lo).count());
            Ok(())
        })?;
    }

    #[test]
    fn nested_loops(n in 0usize..40, m in 0usize..40) {
        on_pool(|| {
            let par: Vec<usize> = (0..n).into_par_iter()
                .map(|i| (0..m).into_par_iter().map(|j| i * j).sum::<usize>())
                .collect();
            let seq: Vec<usize> = (0..n).map(|i| (0..m).map(|j| i * j).sum::<usize>()).collect();
            prop_assert_eq!(par, seq);
            Ok(())
        })?;
    }

    #[test]
    fn intersperse_unindexed(keep in sparse_mask(), m in 2i64..9) {
        on_pool(|| {
            let n = keep.len();
            // Unindexed: the kept positions, many pieces of them empty when the mask is
            // sparse. Separators are negative, items are not.
            let kept = || (0..n).into_par_iter().filter(|&i| keep[i]).map(|i| i as i64);
            let seq_kept: Vec<i64> = (0..n).filter(|&i| keep[i]).map(|i| i as i64).collect();
            let seq = interspersed(seq_kept.iter().copied(), -1);
            prop_assert_eq!(kept().intersperse(-1).collect::<Vec<_>>(), seq.clone());
            prop_assert_eq!(kept().intersperse(-1).opt_len(), None);
            prop_assert_eq!(kept().intersperse(-1).count(), seq.len());
            prop_assert_eq!(
                kept().intersperse(-1).collect_vec_list().into_iter().flatten().collect::<Vec<_>>(),
                seq.clone()
            );
            // A stray separator at either end, or a missing one, changes these answers.
            let hit = |x: &i64| *x < 0 || x % m == 1;
            prop_assert_eq!(kept().intersperse(-1).find_first(hit), seq.iter().copied().find(hit));
            prop_assert_eq!(kept().intersperse(-1).find_last(hit), seq.iter().copied().rev().find(hit));
            prop_assert_eq!(
                kept().intersperse(-1).find_first(|x| *x < 0),
                seq.iter().copied().find(|x| *x < 0)
            );
            prop_assert_eq!(
                kept().intersperse(-1).find_last(|x| *x < 0),
                seq.iter().copied().rev().find(|x| *x < 0)
            );
            // A non-commutative reduction.
            let words = || kept().map(|i| i.to_string()).intersperse(String::from(","));
            let seq_joined = seq_kept.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(",");
            prop_assert_eq!(words().reduce(String::new, |a, b| a + &b), seq_joined.clone());
            prop_assert_eq!(words().collect::<String>(), seq_joined);
            prop_assert_eq!(kept().intersperse(-1).sum::<i64>(), seq.iter().sum::<i64>());
            // Pieces that produce several items each, or none.
            prop_assert_eq!(
                kept().flat_map_iter(|i| 0..i % m).intersperse(-1).collect::<Vec<_>>(),
                interspersed(seq_kept.iter().flat_map(|&i| 0..i % m), -1)
            );
            prop_assert_eq!(
                kept().flat_map(|i| (0..i % m).into_par_iter()).intersperse(-1).collect::<Vec<_>>(),
                interspersed(seq_kept.iter().flat_map(|&i| 0..i % m), -1)
            );
            prop_assert_eq!(
                kept().chain(kept().map(|i| i + 1000)).intersperse(-1).collect::<Vec<_>>(),
                interspersed(seq_kept.iter().copied().chain(seq_kept.iter().map(|i| i + 1000)), -1)
            );
            // No positions at all (every piece spans none): the order of the items is
            // not kept, but separators still alternate with them.
            let bridged: Vec<i64> = seq_kept.clone().into_iter().par_bridge().intersperse(-1).collect();
            prop_assert_eq!(bridged.len(), seq.len());
            prop_assert!(bridged.iter().enumerate().all(|(i, &x)| (x < 0) == (i % 2 == 1)));
            let mut items: Vec<i64> = bridged.into_iter().filter(|&x| x >= 0).collect();
            items.sort_unstable();
            prop_assert_eq!(items, seq_kept.clone());
            // Twice: the outer one sees the inner one's items and separators.
            prop_assert_eq!(
                kept().intersperse(-1).intersperse(-2).collect::<Vec<_>>(),
                interspersed(seq.iter().copied(), -2)
            );
            Ok(())
        })?;
    }

    #[test]
    fn intersperse_indexed(v in small_vec(), k in 0usize..700, m in 2i32..9) {
        on_pool(|| {
            let sep = i32::MIN;
            let seq = interspersed(v.iter().copied(), sep);
            let it = || v.par_iter().copied().intersperse(sep);
            prop_assert_eq!(it().len(), seq.len());
            prop_assert_eq!(it().opt_len(), Some(seq.len()));
            // In place, through the consumer side (the base's positions, doubled).
            prop_assert_eq!(it().collect::<Vec<_>>(), seq.clone());
            let mut target = vec![7; 3];
            it().collect_into_vec(&mut target);
            prop_assert_eq!(&target, &seq);
            // Through the producer.
            prop_assert_eq!(it().rev().collect::<Vec<_>>(), seq.iter().rev().copied().collect::<Vec<_>>());
            prop_assert_eq!(
                it().enumerate().collect::<Vec<_>>(),
                seq.iter().copied().enumerate().collect::<Vec<_>>()
            );
            prop_assert_eq!(
                it().zip(0..k).rev().collect::<Vec<_>>(),
                seq.iter().copied().zip(0..k).rev().collect::<Vec<_>>()
            );
            prop_assert_eq!(
                it().skip(k / 3).take(k).collect::<Vec<_>>(),
                seq.iter().copied().skip(k / 3).take(k).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                it().with_max_len(1 + k % 3).step_by(1 + k % 4).collect::<Vec<_>>(),
                seq.iter().copied().step_by(1 + k % 4).collect::<Vec<_>>()
            );
            prop_assert_eq!(it().position_first(|x| x == sep), seq.iter().position(|&x| x == sep));
            prop_assert_eq!(it().position_last(|x| x == sep), seq.iter().rposition(|&x| x == sep));
            let hit = |x: &i32| *x == sep || x % m == 1;
            prop_assert_eq!(it().find_first(hit), seq.iter().copied().find(hit));
            prop_assert_eq!(it().find_last(hit), seq.iter().copied().rev().find(hit));
            let words = || v.par_iter().map(|x| x.to_string()).intersperse(String::from(","));
            prop_assert_eq!(
                words().reduce(String::new, |a, b| a + &b),
                v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")
            );
            prop_assert_eq!(
                words().rev().reduce(String::new, |a, b| a + &b),
                v.iter().rev().map(|x| x.to_string()).collect::<Vec<_>>().join(",")
            );
            // Nested, and after other indexed adaptors: still exact positions.
            let twice = interspersed(seq.iter().copied(), 0);
            prop_assert_eq!(it().intersperse(0).collect::<Vec<_>>(), twice.clone());
            prop_assert_eq!(it().intersperse(0).rev().collect::<Vec<_>>(),
                twice.iter().rev().copied().collect::<Vec<_>>());
            prop_assert_eq!(
                v.par_iter().copied().rev().skip(k / 5).intersperse(sep).collect::<Vec<_>>(),
                interspersed(v.iter().copied().rev().skip(k / 5), sep)
            );
            prop_assert_eq!(
                v.par_iter().copied().intersperse(sep).chain(v.par_iter().copied()).collect::<Vec<_>>(),
                seq.iter().chain(&v).copied().collect::<Vec<_>>()
            );
            Ok(())
        })?;
    }
}

#[test]
fn extreme_ranges() {
    on_pool(|| {
        assert_eq!((0..=u8::MAX).into_par_iter().count(), 256);
        assert_eq!(
            (i8::MIN..=i8::MAX)
                .into_par_iter()
                .map(i32::from)
                .sum::<i32>(),
            -128
        );
        assert_eq!(
            (u64::MAX - 3..=u64::MAX)
                .into_par_iter()
                .collect::<Vec<_>>(),
            (u64::MAX - 3..=u64::MAX).collect::<Vec<_>>()
        );
        assert_eq!(
            (usize::MAX - 2..=usize::MAX).into_par_iter().len_hint(),
            Some(3)
        );
        // Longer than usize::MAX: searched, not run to the end.
        assert_eq!(
            (0..u128::MAX).into_par_iter().find_first(|&x| x == 1000),
            Some(1000)
        );
        assert_eq!(
            (i128::MIN..=i128::MAX)
                .into_par_iter()
                .find_first(|&x| x > i128::MIN + 5),
            Some(i128::MIN + 6)
        );
        assert!((i128::MIN..=i128::MAX)
            .into_par_iter()
            .any(|x| x == i128::MIN + 3));
        #[allow(clippy::reversed_empty_ranges)]
        let empty = 5..3i32;
        assert_eq!(empty.into_par_iter().count(), 0);
        #[allow(clippy::reversed_empty_ranges)]
        let empty = 5..=3u64;
        assert_eq!(empty.into_par_iter().count(), 0);
    });
}

/// The first `char` at or above the code point `code` (skipping the surrogates), if any.
fn char_from_below(code: u32) -> Option<char> {
    (code..=0x10_FFFF).find_map(char::from_u32)
}

#[test]
fn extreme_char_ranges() {
    on_pool(|| {
        let all: Vec<char> = ('\0'..=char::MAX).collect();
        assert_eq!(('\0'..=char::MAX).into_par_iter().len(), all.len());
        assert_eq!(
            ('\0'..=char::MAX).into_par_iter().collect::<Vec<char>>(),
            all
        );
        assert_eq!(('\0'..char::MAX).into_par_iter().len(), all.len() - 1);
        assert_eq!(
            ('\0'..=char::MAX)
                .into_par_iter()
                .filter(|c| (0xD000..0xF000).contains(&u32::from(*c)))
                .count(),
            0x2000 - 0x800
        );
        assert_eq!(
            (char::MAX..=char::MAX).into_par_iter().collect::<Vec<_>>(),
            [char::MAX]
        );
        // A range that sequential iteration has exhausted is empty, as it is for std.
        let mut exhausted = 'a'..='b';
        exhausted.by_ref().for_each(drop);
        assert_eq!(exhausted.into_par_iter().count(), 0);
        let _: sumac::range::Iter<char> = ('a'..'b').into_par_iter();
        let _: sumac::range_inclusive::Iter<char> = ('a'..='b').into_par_iter();
    });
}

/// `opt_len` under its public name, for the test above.
trait LenHint {
    fn len_hint(&self) -> Option<usize>;
}
impl<I: ParallelIterator> LenHint for I {
    fn len_hint(&self) -> Option<usize> {
        self.opt_len()
    }
}

#[test]
fn called_from_outside_any_pool() {
    // Runs on the global pool.
    let v: Vec<u64> = (0..10_000u64).into_par_iter().map(|x| x * 2).collect();
    assert_eq!(v.par_iter().sum::<u64>(), 99_990_000);
}

#[test]
fn forced_splits_are_active_in_debug_builds() {
    // Each split starts a new sequential piece, which calls `init` again.
    let inits = AtomicUsize::new(0);
    on_pool(|| {
        (0..1000)
            .into_par_iter()
            .for_each_init(|| inits.fetch_add(1, Ordering::Relaxed), |_, _| ())
    });
    if cfg!(debug_assertions) {
        assert!(inits.load(Ordering::Relaxed) > 10);
    }
}
