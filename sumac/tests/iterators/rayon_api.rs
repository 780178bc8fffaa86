//! Parts of Rayon's surface that code switching from Rayon relies on: tuples of up to
//! twelve indexed iterators zipped in lock step (`MultiZip`), and the collections a
//! parallel iterator collects into. Checked against sequential std code on a pool
//! whose loops split constantly.

use std::borrow::Cow;
use std::collections::LinkedList;
use std::ffi::{OsStr, OsString};
use std::ops::Range;
use std::rc::Rc;
use std::sync::Arc;

use sumac::prelude::*;

use crate::common;

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

/// Cuts a range in halves while it is longer than `limit`.
fn halve(
    limit: usize,
) -> impl Fn(Range<usize>) -> (Range<usize>, Option<Range<usize>>) + Sync + Send {
    move |r| {
        if r.len() <= limit {
            return (r, None);
        }
        let mid = r.start + r.len() / 2;
        (r.start..mid, Some(mid..r.end))
    }
}

/// `iter::split`'s pieces tile the data in order whatever the scheduler cut, each piece
/// is one the splitter made, and ordered consumers see them in order.
#[test]
fn split_pieces_tile_the_data_in_order() {
    let pool = pool();
    for (len, limit) in [
        (0, 1),
        (1, 1),
        (2, 1),
        (7, 2),
        (100, 1),
        (1000, 10),
        (5000, 3),
    ] {
        pool.install(|| {
            let pieces: Vec<Range<usize>> = sumac::iter::split(0..len, halve(limit)).collect();
            assert_eq!(pieces.first().map(|r| r.start), Some(0));
            assert_eq!(pieces.last().map(|r| r.end), Some(len));
            assert!(pieces
                .windows(2)
                .all(|w| w[0].end == w[1].start && !w[1].is_empty()));
            let items: Vec<usize> = sumac::iter::split(0..len, halve(limit))
                .flat_map_iter(|r| r)
                .collect();
            assert_eq!(items, (0..len).collect::<Vec<_>>());
            let first_big =
                sumac::iter::split(0..len, halve(limit)).find_first(|r| r.end > len / 2);
            assert!(first_big.is_none_or(|r| r.start <= len / 2 && r.end > len / 2));
            // A non-commutative reduction: the pieces' bounds, concatenated in order,
            // must tile 0..len (a cut need not be the same twice, so compare tilings).
            let text = sumac::iter::split(0..len, halve(limit))
                .map(|r| format!("{}-{};", r.start, r.end))
                .reduce(String::new, |a, b| a + &b);
            let bounds: Vec<usize> = text
                .split(';')
                .filter(|s| !s.is_empty())
                .flat_map(|s| s.split('-').map(|n| n.parse::<usize>().unwrap()))
                .collect();
            assert_eq!(bounds.first(), Some(&0));
            assert_eq!(bounds.last(), Some(&len));
            assert!(bounds
                .chunks(2)
                .zip(bounds.chunks(2).skip(1))
                .all(|(a, b)| a[1] == b[0]));
        });
    }
}

/// A one-thread pool never cuts; a pool of four cuts at least into four pieces at once
/// (the eager budget), when the splitter allows it.
#[test]
fn split_cuts_for_the_pool_size() {
    let one = sumac::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let pieces = one.install(|| sumac::iter::split(0..1000usize, halve(1)).count());
    assert_eq!(pieces, 1);
    let four = sumac::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    let pieces = four.install(|| sumac::iter::split(0..1000usize, halve(1)).count());
    assert!(pieces >= 4, "only {pieces} pieces on four workers");
    let pieces = four.install(|| sumac::iter::split(0..1000usize, halve(600)).count());
    assert_eq!(pieces, 2, "the splitter's own limit is respected");
}

/// A splitter that peels off one element at a time, on a pool whose heartbeat fires
/// every microsecond and whose loops split constantly, with small stacks: the cuts made
/// at heartbeats are rationed, so the nesting stays shallow.
#[test]
fn split_peeling_one_at_a_time_does_not_nest_deeply() {
    let pool = sumac::ThreadPoolBuilder::new()
        .num_threads(3)
        .heartbeat_interval(std::time::Duration::from_micros(1))
        .stack_size(256 * 1024)
        .build()
        .unwrap();
    let peel = |r: Range<usize>| {
        if r.len() <= 1 {
            (r, None)
        } else {
            (r.start..r.start + 1, Some(r.start + 1..r.end))
        }
    };
    // The shared pool's first use forces loops (and cuts) to split constantly.
    let _ = common::forced_split_pool();
    for _ in 0..5 {
        let total: usize = pool.install(|| {
            sumac::iter::split(0..200_000usize, peel)
                .map(|r| r.map(|x| x % 7).sum::<usize>())
                .sum()
        });
        assert_eq!(total, (0..200_000).map(|x| x % 7).sum());
    }
}

#[test]
fn split_propagates_a_splitter_panic() {
    let pool = pool();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.install(|| {
            sumac::iter::split(0..1000usize, |r: Range<usize>| {
                // The second half is cut eagerly on a 4-worker pool.
                if r.start >= 500 {
                    panic!("splitter gave up");
                }
                halve(1)(r)
            })
            .count()
        })
    }));
    assert_eq!(
        caught.unwrap_err().downcast_ref::<&str>(),
        Some(&"splitter gave up")
    );
}

/// Rayon's deprecated `find` and `position` still compile (with a warning) and answer
/// like `find_any` and `position_any`.
#[test]
#[allow(deprecated)]
fn deprecated_rayon_searches_still_answer() {
    let v: Vec<u32> = (0..1000).collect();
    pool().install(|| {
        assert_eq!(v.par_iter().find(|&&x| x == 777), Some(&777));
        assert_eq!(v.par_iter().position(|&x| x == 321), Some(321));
        assert_eq!(v.par_iter().find(|&&x| x > 5000), None);
    });
}

/// `Either` of two parallel iterators runs whichever it holds (indexed when both are),
/// and `Either` items collect into, or extend, a pair of collections.
#[test]
fn either_iterators_and_either_items() {
    use sumac::iter::Either;
    let v: Vec<u64> = (0..2000).collect();
    pool().install(|| {
        for backwards in [false, true] {
            let it = if backwards {
                Either::Left(v.par_iter().rev())
            } else {
                Either::Right(v.par_iter())
            };
            assert_eq!(it.len(), 2000);
            let got: Vec<(usize, u64)> = it.enumerate().map(|(i, &x)| (i, x)).collect();
            let expected: Vec<(usize, u64)> = if backwards {
                v.iter().rev().copied().enumerate().collect()
            } else {
                v.iter().copied().enumerate().collect()
            };
            assert_eq!(got, expected);
            let filtered = if backwards {
                Either::Left(v.par_iter().filter(|&&x| x % 3 == 0))
            } else {
                Either::Right(v.par_iter().filter(|&&x| x % 5 == 0))
            };
            let found: Vec<u64> = filtered.copied().collect();
            let step = if backwards { 3 } else { 5 };
            assert_eq!(found, (0..2000).step_by(step).collect::<Vec<u64>>());
        }
        let (evens, odds): (Vec<u64>, Vec<u64>) = v
            .par_iter()
            .map(|&x| {
                if x % 2 == 0 {
                    Either::Left(x)
                } else {
                    Either::Right(x)
                }
            })
            .collect();
        assert_eq!(evens, (0..2000).step_by(2).collect::<Vec<_>>());
        assert_eq!(odds, (1..2000).step_by(2).collect::<Vec<_>>());
        let mut pair = (vec![7u64], LinkedList::new());
        pair.par_extend(v.par_iter().map(|&x| {
            if x < 10 {
                Either::Left(x)
            } else {
                Either::Right(x)
            }
        }));
        assert_eq!(pair.0, [7, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert!(pair.1.iter().copied().eq(10..2000));
        let mut either: Either<Vec<u64>, LinkedList<u64>> = Either::Right(LinkedList::new());
        either.par_extend(v.par_iter().copied());
        assert!(either.right().unwrap().into_iter().eq(0..2000));
    });
}

/// A `Result` is a parallel iterator over its `Ok` value, by value and by reference.
#[test]
fn result_sources_yield_the_ok_value() {
    let mut ok: Result<Vec<u32>, String> = Ok(vec![1, 2, 3]);
    let err: Result<Vec<u32>, String> = Err("bad".into());
    assert_eq!((&ok).into_par_iter().map(Vec::len).sum::<usize>(), 3);
    assert_eq!((&err).into_par_iter().count(), 0);
    (&mut ok).into_par_iter().for_each(|v| v.push(4));
    assert_eq!(
        ok.clone().into_par_iter().collect::<Vec<_>>(),
        [vec![1, 2, 3, 4]]
    );
    assert_eq!(err.into_par_iter().len(), 0);
}

/// Boxed slices are sources like `Vec`s, and a tuple of collections zips its parts by
/// reference (`par_iter`) or by mutable reference (`par_iter_mut`).
#[test]
fn boxed_slices_and_tuples_of_collections() {
    pool().install(|| {
        let mut boxed: Box<[u32]> = (0..500).collect();
        (&mut boxed).into_par_iter().for_each(|x| *x *= 2);
        assert_eq!(
            (&boxed).into_par_iter().sum::<u32>(),
            2 * (0..500).sum::<u32>()
        );
        let moved: Vec<u32> = boxed.into_par_iter().rev().collect();
        assert_eq!(moved, (0..500).rev().map(|x| 2 * x).collect::<Vec<_>>());

        let mut pair = (vec![1u32; 300], vec![0u64; 300]);
        pair.par_iter_mut().for_each(|(a, b)| {
            *b = u64::from(*a) * 3;
            *a += 1;
        });
        let sums: Vec<u64> = pair.par_iter().map(|(a, b)| u64::from(*a) + b).collect();
        assert_eq!(sums, vec![5u64; 300]);
        let triple = (vec![1, 2, 3], [10, 20, 30, 40], vec![100, 101, 102, 103]);
        let firsts: Vec<i32> = triple.par_iter().map(|(a, b, c)| a + b + c).collect();
        assert_eq!(firsts, [111, 123, 135]);
    });
}

/// Rayon's module paths name the types sumac's sources return (a type mismatch here
/// would not compile), and `ParallelDrainRange` / `ParallelDrainFull` are reachable from
/// `sumac::iter` as from `rayon::iter`.
#[test]
fn rayon_module_paths_name_the_returned_types() {
    use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, VecDeque};
    use sumac::iter::{ParallelDrainFull as _, ParallelDrainRange as _};
    let mut map: HashMap<u8, u8> = (0..10).map(|i| (i, i)).collect();
    let it: sumac::collections::hash_map::Iter<'_, u8, u8> = map.par_iter();
    assert_eq!(it.count(), 10);
    let it: sumac::collections::hash_map::IterMut<'_, u8, u8> = map.par_iter_mut();
    assert_eq!(it.count(), 10);
    let drained: sumac::collections::hash_map::Drain<'_, u8, u8> = map.par_drain();
    assert_eq!(drained.count(), 10);
    let set: HashSet<u8> = (0..5).collect();
    let it: sumac::collections::hash_set::IntoIter<u8> = set.into_par_iter();
    assert_eq!(it.count(), 5);
    let tree: BTreeMap<u8, u8> = (0..4).map(|i| (i, i)).collect();
    let it: sumac::collections::btree_map::Iter<'_, u8, u8> = tree.par_iter();
    assert_eq!(it.count(), 4);
    let tree_set: BTreeSet<u8> = (0..3).collect();
    let it: sumac::collections::btree_set::Iter<'_, u8> = tree_set.par_iter();
    assert_eq!(it.count(), 3);
    let mut heap: BinaryHeap<u8> = (0..6).collect();
    let it: sumac::collections::binary_heap::Drain<u8> = heap.par_drain();
    assert_eq!(it.count(), 6);
    let list: LinkedList<u8> = (0..2).collect();
    let it: sumac::collections::linked_list::Iter<'_, u8> = list.par_iter();
    assert_eq!(it.count(), 2);
    let mut deque: VecDeque<u8> = (0..7).collect();
    let it: sumac::collections::vec_deque::IterMut<'_, u8> = deque.par_iter_mut();
    assert_eq!(it.count(), 7);
    let mut v: Vec<u8> = (0..9).collect();
    let it: sumac::vec::Drain<u8> = v.par_drain(2..5);
    assert_eq!(it.count(), 3);
    let it: sumac::vec::IntoIter<u8> = v.into_par_iter();
    assert_eq!(it.count(), 6);
    let it: sumac::array::IntoIter<u8, 2> = [1u8, 2].into_par_iter();
    assert_eq!(it.count(), 2);
    let mut text = String::from("héllo");
    let it: sumac::string::Drain = text.par_drain(..3);
    assert_eq!(it.collect::<String>(), "hé");
    let opt = Some(1u8);
    let it: sumac::option::Iter<'_, u8> = opt.par_iter();
    assert_eq!(it.count(), 1);
    let res: Result<u8, ()> = Ok(1);
    let it: sumac::result::Iter<'_, u8> = res.par_iter();
    assert_eq!(it.count(), 1);
    let it: sumac::range::Iter<u32> = (0..3u32).into_par_iter();
    assert_eq!(it.count(), 3);
    let it: sumac::range_inclusive::Iter<u32> = (0..=3u32).into_par_iter();
    assert_eq!(it.count(), 4);
}

/// Clones and drops of the `repeat_n` element, counted (as Rayon's own tests count them).
mod repeat_n_counts {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    use sumac::iter::plumbing::{Producer, ProducerCallback};
    use sumac::prelude::*;

    static CLONES: AtomicUsize = AtomicUsize::new(0);
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    /// The counters are global: the tests of this module take turns.
    static TURN: Mutex<()> = Mutex::new(());

    struct Counted;

    impl Clone for Counted {
        fn clone(&self) -> Self {
            CLONES.fetch_add(1, Ordering::Relaxed);
            Counted
        }
    }

    impl Drop for Counted {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// (clones, drops) since the last call.
    fn take_counts() -> (usize, usize) {
        (
            CLONES.swap(0, Ordering::Relaxed),
            DROPS.swap(0, Ordering::Relaxed),
        )
    }

    #[test]
    fn an_empty_repeat_n_holds_no_element() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        take_counts();
        let empty = sumac::iter::repeat_n(Counted, 0);
        assert_eq!(take_counts(), (0, 1), "the element is dropped at once");
        let copy = empty.clone();
        assert_eq!(
            take_counts(),
            (0, 0),
            "cloning an empty iterator clones nothing"
        );
        assert_eq!(empty.count() + copy.count(), 0);
        assert_eq!(take_counts(), (0, 0));
    }

    /// Splits a 3-item producer at its end and at its start.
    struct SplitAtTheEnds;

    impl ProducerCallback<Counted> for SplitAtTheEnds {
        type Output = [(usize, usize); 2];
        fn callback<P: Producer<Item = Counted>>(self, producer: P) -> Self::Output {
            let (all, nothing) = producer.split_at(3);
            drop(nothing);
            let at_end = take_counts();
            let (nothing, all) = all.split_at(0);
            drop(nothing);
            let at_start = take_counts();
            assert_eq!(all.into_iter().count(), 3);
            [at_end, at_start]
        }
    }

    #[test]
    fn splitting_off_an_empty_part_clones_nothing() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        take_counts();
        let counts = sumac::iter::repeat_n(Counted, 3).with_producer(SplitAtTheEnds);
        assert_eq!(counts, [(0, 0), (0, 0)]);
        assert_eq!(take_counts(), (2, 3), "two clones and the element itself");
    }

    /// Drains a producer sequentially.
    struct RunSequentially;

    impl ProducerCallback<Counted> for RunSequentially {
        type Output = usize;
        fn callback<P: Producer<Item = Counted>>(self, producer: P) -> usize {
            producer.into_iter().map(drop).count()
        }
    }

    #[test]
    fn n_items_cost_n_minus_one_clones_and_every_one_is_dropped_once() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        take_counts();
        let items = sumac::iter::repeat_n(Counted, 100).with_producer(RunSequentially);
        assert_eq!(items, 100);
        assert_eq!(
            take_counts(),
            (99, 100),
            "the last item is the element itself"
        );
        // Splits clone the element for the new part, but every clone is dropped once.
        for n in [1usize, 2, 100, 5000] {
            super::pool().install(|| sumac::iter::repeat_n(Counted, n).for_each(drop));
            let (clones, drops) = take_counts();
            assert_eq!(drops, clones + 1, "n = {n}");
            assert!(clones >= n - 1, "n = {n}: {clones} clones");
        }
    }

    /// Under `with_min_len(min)`, a loop of fewer than `3 * min` items can never split
    /// (its first `min` items close as a piece of their own, and each half of the rest
    /// must hold `min`), so it folds in one go, without the blocks that time a loop.
    /// Each such block is split off the rest, which under `step_by` costs a clone of the
    /// element for the part that starts the rest, and one for the first item of the
    /// block, whose part's element is then never used (Rayon's tests count this).
    /// Every `step`-th of `(n - 1) * step + 1` items ends at the element itself, so one
    /// piece makes `n - 1` clones.
    #[test]
    fn a_loop_too_short_to_split_under_with_min_len_clones_only_for_its_items() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        take_counts();
        let wide = sumac::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        for pool in [super::pool(), &wide] {
            for min in [2usize, 3, 10] {
                for n in 1..3 * min {
                    let items = pool.install(|| {
                        sumac::iter::repeat_n(Counted, (n - 1) * 5 + 1)
                            .step_by(5)
                            .with_min_len(min)
                            .map(drop)
                            .count()
                    });
                    assert_eq!(items, n);
                    assert_eq!(take_counts(), (n - 1, n), "{n} items, min {min}");
                }
            }
        }
    }
}

/// Zero chunk and block sizes panic with Rayon's messages (Rayon's tests match on them).
mod zero_sizes {
    use sumac::prelude::*;

    #[test]
    #[should_panic(expected = "chunk_size must not be zero")]
    fn chunks() {
        let _: Vec<Vec<u8>> = vec![1u8, 2].into_par_iter().chunks(0).collect();
    }

    #[test]
    #[should_panic(expected = "chunk_size must not be zero")]
    fn fold_chunks() {
        let _: Vec<u8> = (0..3u8)
            .into_par_iter()
            .fold_chunks(0, || 0, |a, b| a + b)
            .collect();
    }

    #[test]
    #[should_panic(expected = "chunk_size must not be zero")]
    fn par_chunks() {
        let _ = [1u8, 2].par_chunks(0).count();
    }

    #[test]
    #[should_panic(expected = "chunk_size must not be zero")]
    fn par_rchunks_exact_mut() {
        let _ = [1u8, 2].par_rchunks_exact_mut(0).count();
    }

    #[test]
    #[should_panic(expected = "block_size must not be zero")]
    fn by_uniform_blocks() {
        let _ = (0..3).into_par_iter().by_uniform_blocks(0).count();
    }
}

/// Sources are not `#[must_use]`, as in Rayon (only adaptors are): code that makes one
/// and drops it (Rayon's own tests do) compiles under `deny(unused_must_use)`.
#[test]
#[deny(unused_must_use)]
fn making_a_source_and_dropping_it_is_not_a_warning() {
    let mut v = vec![1u8, 2, 3];
    v.par_iter();
    v.par_iter_mut();
    v.par_chunks(2);
    v.par_windows(2);
    v.par_drain(..1);
    v.clone().into_par_iter();
    (0..3).into_par_iter();
    (0..=3).into_par_iter();
    Some(1).into_par_iter();
    sumac::iter::repeat_n(1, 2);
    sumac::iter::repeat(1);
    "a b".par_split_whitespace();
    "ab".par_encode_utf16();
    assert_eq!(v, [2, 3]);
}

/// Every iterator type is `Debug` whatever closure it holds, as in Rayon: the closures
/// are left out of the output.
mod debug_with_closures {
    use std::fmt::Debug;

    use sumac::prelude::*;

    /// `iter`'s `Debug` output, which must start with `start`.
    #[track_caller]
    fn check<I: ParallelIterator + Debug>(iter: I, start: &str) -> String {
        let shown = format!("{iter:?}");
        assert!(
            shown.starts_with(start),
            "{shown:?} should start with {start:?}"
        );
        shown
    }

    /// Formats without checking the name: the types that were `Debug` already.
    fn show<I: ParallelIterator + Debug>(iter: I) {
        assert!(!format!("{iter:?}").is_empty());
    }

    #[test]
    fn adaptors_holding_a_closure() {
        let v: Vec<i32> = (0..10).collect();
        let base = format!("{:?}", v.par_iter());
        let of = |name: &str| format!("{name} {{ base: {base}");
        check(v.par_iter().map(|x| x + 1), &of("Map"));
        check(v.par_iter().inspect(|_| ()), &of("Inspect"));
        check(v.par_iter().update(|_| ()), &of("Update"));
        let shown = check(v.par_iter().map_with(7u8, |_, x| x), &of("MapWith"));
        assert!(shown.contains("item: 7"), "{shown}");
        check(v.par_iter().map_init(|| 0, |_, x| x), &of("MapInit"));
        check(v.par_iter().filter(|_| true), &of("Filter"));
        check(v.par_iter().filter_map(|x| Some(x + 1)), &of("FilterMap"));
        check(v.par_iter().flat_map(|x| vec![*x]), &of("FlatMap"));
        check(v.par_iter().flat_map_iter(|x| vec![*x]), &of("FlatMapIter"));
        check(v.par_iter().fold(|| 0, |x, _| x), &of("Fold"));
        let shown = check(v.par_iter().fold_with(5u8, |x, _| x), &of("FoldWith"));
        assert!(shown.contains("item: 5"), "{shown}");
        check(v.par_iter().try_fold(|| 0, |x, _| Some(x)), &of("TryFold"));
        let shown = check(
            v.par_iter().try_fold_with(6u8, |x, _| Some(x)),
            &of("TryFoldWith"),
        );
        assert!(shown.contains("item: 6"), "{shown}");
        let shown = check(
            v.par_iter().fold_chunks(3, || 0, |x, _| x),
            &of("FoldChunks"),
        );
        assert!(shown.contains("chunk_size: 3"), "{shown}");
        let shown = check(
            v.par_iter().fold_chunks_with(4, 9u8, |x, _| x),
            &of("FoldChunksWith"),
        );
        assert!(
            shown.contains("chunk_size: 4") && shown.contains("item: 9"),
            "{shown}"
        );
        check(v.par_iter().positions(|_| true), &of("Positions"));
        check(v.par_iter().skip_any_while(|_| false), &of("SkipAnyWhile"));
        check(v.par_iter().take_any_while(|_| true), &of("TakeAnyWhile"));
        let shown = check(v.par_iter().take_any(2), &of("TakeAny"));
        assert!(shown.contains("count: 2"), "{shown}");
        let shown = check(v.par_iter().skip_any(3), &of("SkipAny"));
        assert!(shown.contains("count: 3"), "{shown}");
        let shown = check(
            sumac::iter::split(0..10, |r| (r, None)),
            "Split { data: 0..10",
        );
        assert!(!shown.contains("splitter"), "{shown}");
    }

    #[test]
    fn slice_pieces_holding_a_closure() {
        let mut v: Vec<i32> = (0..10).collect();
        let slice = format!("{:?}", &v[..]);
        let of = |name: &str| format!("{name} {{ slice: {slice} }}");
        assert_eq!(
            check(v.par_chunk_by(|a, b| a < b), "ChunkBy {"),
            of("ChunkBy")
        );
        assert_eq!(check(v.par_split(|x| x % 3 == 0), "Split {"), of("Split"));
        assert_eq!(
            check(v.par_split_inclusive(|x| x % 3 == 0), "SplitInclusive {"),
            of("SplitInclusive")
        );
        let expected = [of("ChunkByMut"), of("SplitMut"), of("SplitInclusiveMut")];
        assert_eq!(
            check(v.par_chunk_by_mut(|a, b| a < b), "ChunkByMut {"),
            expected[0]
        );
        assert_eq!(
            check(v.par_split_mut(|x| x % 3 == 0), "SplitMut {"),
            expected[1]
        );
        assert_eq!(
            check(
                v.par_split_inclusive_mut(|x| x % 3 == 0),
                "SplitInclusiveMut {"
            ),
            expected[2]
        );
    }

    /// Rayon's list of iterator types (its `tests/debug.rs`): every one is `Debug`.
    #[test]
    fn every_iterator_type() {
        let mut v: Vec<i32> = (0..10).collect();
        show(v.par_chunk_by(i32::eq));
        show(v.par_chunk_by_mut(i32::eq));
        show(v.par_chunks(4));
        show(v.par_chunks_exact(4));
        show(v.par_chunks_mut(4));
        show(v.par_chunks_exact_mut(4));
        show(v.par_rchunks(4));
        show(v.par_rchunks_exact(4));
        show(v.par_rchunks_mut(4));
        show(v.par_rchunks_exact_mut(4));
        show(v.par_windows(4));
        show(v.par_array_windows::<4>());
        show(v.par_drain(..2));
        show(v.clone().into_par_iter());
        show([0i32; 4].into_par_iter());
        show(v.par_iter().by_exponential_blocks());
        show(v.par_iter().by_uniform_blocks(5));
        show(v.par_iter().chain(&v));
        show(v.par_iter().cloned());
        show(v.par_iter().copied());
        show(v.par_iter().enumerate());
        show(v.par_iter().map(Some).flatten());
        show(v.par_iter().map(Some).flatten_iter());
        show(v.par_iter().interleave(&v));
        show(v.par_iter().interleave_shortest(&v));
        show(v.par_iter().intersperse(&-1));
        show(v.par_iter().chunks(3));
        show(v.par_iter().panic_fuse());
        show(v.par_iter().rev());
        show(v.par_iter().skip(1));
        show(v.par_iter().take(1));
        show(v.par_iter().map(Some).while_some());
        show(v.par_iter().with_max_len(1));
        show(v.par_iter().with_min_len(1));
        show(v.par_iter().zip(&v));
        show(v.par_iter().zip_eq(&v));
        show(v.par_iter().step_by(2));
        let s = "a b c d\ne f g";
        show(s.par_chars());
        show(s.par_lines());
        show(s.par_split('\n'));
        show(s.par_split_inclusive('\n'));
        show(s.par_split_terminator('\n'));
        show(s.par_split_whitespace());
        show(s.par_split_ascii_whitespace());
        show(sumac::iter::empty::<i32>());
        show(sumac::iter::once(10));
        show(sumac::iter::repeat(None::<i32>));
        show(sumac::iter::repeat_n(None::<i32>, 10));
        let w = &v;
        show((w,).into_par_iter());
        show((w, w).into_par_iter());
        show((w, w, w, w, w, w, w, w, w, w, w, w).into_par_iter());
    }
}

/// A 1-tuple of collections is a parallel iterator of 1-tuples, by value, by `&` and by
/// `&mut`, as in Rayon.
mod one_tuple_zip {
    use sumac::prelude::*;

    #[test]
    fn by_value_by_reference_and_by_mutable_reference() {
        common_pool().install(|| {
            for len in [0usize, 1, 2, 1000] {
                let mut v: Vec<u32> = (0..len as u32).collect();
                let expected: Vec<(&u32,)> = v.iter().map(|x| (x,)).collect();
                let got: Vec<(&u32,)> = (&v,).into_par_iter().collect();
                assert_eq!(got, expected);
                let owned = (v.clone(),);
                let got: Vec<(&u32,)> = owned.par_iter().collect();
                assert_eq!(got, expected);
                let got: Vec<(u32,)> = (v.clone(),).into_par_iter().collect();
                assert_eq!(got, v.iter().map(|&x| (x,)).collect::<Vec<_>>());
                let got: Vec<(u32,)> = (0..len as u32,).into_par_iter().collect();
                assert_eq!(got, v.iter().map(|&x| (x,)).collect::<Vec<_>>());
                (&mut v,)
                    .into_par_iter()
                    .for_each(|(x,): (&mut u32,)| *x *= 2);
                let mut owned = (v,);
                owned.par_iter_mut().for_each(|(x,)| *x += 1);
                let (v,) = owned;
                let expected: Vec<u32> = (0..len as u32).map(|x| 2 * x + 1).collect();
                assert_eq!(v, expected);
                let iter = (&v,).into_par_iter();
                assert_eq!(iter.len(), len);
                let rev: Vec<(&u32,)> = iter.rev().collect();
                assert_eq!(rev, v.iter().rev().map(|x| (x,)).collect::<Vec<_>>());
            }
        });
    }

    fn common_pool() -> &'static sumac::ThreadPool {
        super::common::forced_split_pool()
    }
}

/// `par_chunk_by` tests each neighbour pair exactly once and the slice `par_split*`
/// methods each element exactly once, as sequential std (and Rayon) do, however the loop
/// splits; the pieces are std's.
mod predicate_calls {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

    use sumac::prelude::*;

    const LENGTHS: [usize; 7] = [0, 1, 2, 3, 17, 1000, 10_000];

    /// Runs `check` on the forced-split pool and on a 1-thread pool.
    fn on_pools(check: impl Fn() + Sync) {
        super::common::forced_split_pool().install(&check);
        let one = sumac::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        one.install(&check);
    }

    /// Data with runs of different lengths (1 to 7), and separators (multiples of 5) here
    /// and there, next to each other and at the ends.
    fn data(len: usize) -> Vec<u32> {
        (0..len as u32).map(|i| (i * i / 7) % 13).collect()
    }

    fn same(a: &u32, b: &u32) -> bool {
        a / 3 == b / 3
    }

    fn sep(x: &u32) -> bool {
        x % 5 == 0
    }

    #[test]
    fn chunk_by_tests_each_pair_once() {
        on_pools(|| {
            for len in LENGTHS {
                let mut v = data(len);
                let calls = AtomicUsize::new(0);
                let counted = |a: &u32, b: &u32| {
                    calls.fetch_add(1, Relaxed);
                    same(a, b)
                };
                let got: Vec<&[u32]> = v.par_chunk_by(counted).collect();
                let expected: Vec<&[u32]> = v.chunk_by(same).collect();
                assert_eq!(got, expected, "len {len}");
                assert_eq!(calls.swap(0, Relaxed), len.saturating_sub(1), "len {len}");

                let mut w = v.clone();
                let expected: Vec<Vec<u32>> = w.chunk_by_mut(same).map(|c| c.to_vec()).collect();
                let got: Vec<Vec<u32>> = v
                    .par_chunk_by_mut(counted)
                    .map(|c| {
                        c.reverse();
                        c.iter().rev().copied().collect()
                    })
                    .collect();
                assert_eq!(got, expected, "len {len}");
                assert_eq!(calls.swap(0, Relaxed), len.saturating_sub(1), "len {len}");
                for c in w.chunk_by_mut(same) {
                    c.reverse();
                }
                assert_eq!(v, w, "len {len}");
            }
        });
    }

    #[test]
    fn split_tests_each_element_once() {
        on_pools(|| {
            for len in LENGTHS {
                let mut v = data(len);
                let calls = AtomicUsize::new(0);
                let counted = |x: &u32| {
                    calls.fetch_add(1, Relaxed);
                    sep(x)
                };
                let got: Vec<&[u32]> = v.par_split(counted).collect();
                let expected: Vec<&[u32]> = v.split(sep).collect();
                assert_eq!(got, expected, "split, len {len}");
                assert_eq!(calls.swap(0, Relaxed), len, "split, len {len}");

                let got: Vec<&[u32]> = v.par_split_inclusive(counted).collect();
                let expected: Vec<&[u32]> = v.split_inclusive(sep).collect();
                assert_eq!(got, expected, "split_inclusive, len {len}");
                assert_eq!(calls.swap(0, Relaxed), len, "split_inclusive, len {len}");

                let mut w = v.clone();
                let expected: Vec<Vec<u32>> = w.split_mut(sep).map(|c| c.to_vec()).collect();
                let got: Vec<Vec<u32>> = v.par_split_mut(counted).map(|c| c.to_vec()).collect();
                assert_eq!(got, expected, "split_mut, len {len}");
                assert_eq!(calls.swap(0, Relaxed), len, "split_mut, len {len}");

                let expected: Vec<Vec<u32>> =
                    w.split_inclusive_mut(sep).map(|c| c.to_vec()).collect();
                let got: Vec<Vec<u32>> = v
                    .par_split_inclusive_mut(counted)
                    .map(|c| {
                        c.reverse();
                        c.iter().rev().copied().collect()
                    })
                    .collect();
                assert_eq!(got, expected, "split_inclusive_mut, len {len}");
                assert_eq!(
                    calls.swap(0, Relaxed),
                    len,
                    "split_inclusive_mut, len {len}"
                );
                for c in w.split_inclusive_mut(sep) {
                    c.reverse();
                }
                assert_eq!(v, w, "split_inclusive_mut, len {len}");
            }
        });
    }

    /// Rayon's own check (`slice_chunk_by` in its `src/slice/test.rs`), on the default
    /// pool.
    #[test]
    fn rayon_slice_chunk_by() {
        let v: Vec<_> = (0..1000).collect();
        assert_eq!(v[..0].par_chunk_by(|_, _| todo!()).count(), 0);
        assert_eq!(v[..1].par_chunk_by(|_, _| todo!()).count(), 1);
        assert_eq!(v[..2].par_chunk_by(|_, _| true).count(), 1);
        assert_eq!(v[..2].par_chunk_by(|_, _| false).count(), 2);
        let count = AtomicUsize::new(0);
        let par: Vec<_> = v
            .par_chunk_by(|x, y| {
                count.fetch_add(1, Relaxed);
                (x % 10 < 3) == (y % 10 < 3)
            })
            .collect();
        assert_eq!(count.into_inner(), v.len() - 1);
        let seq: Vec<_> = v.chunk_by(|x, y| (x % 10 < 3) == (y % 10 < 3)).collect();
        assert_eq!(par, seq);
    }
}
