//! The loop driver (`drive`, the detaching and splitting folds, `split_join`), the
//! unindexed drivers (`par_bridge`, `walk_tree`, `iter::split`) and the searches built on
//! them: against the sequential `std` result, in the forced-split pool (4 threads, 1 µs
//! heartbeat, forced splits) and in a one-thread pool, with nested loops, one slow item
//! among cheap ones, a panic in every item of a small input, and drop counting.
use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use sumac::prelude::*;

/// The forced-split 4-thread pool, then a one-thread pool (which forces no splits).
fn pools() -> [&'static sumac::ThreadPool; 2] {
    static ONE: OnceLock<sumac::ThreadPool> = OnceLock::new();
    let forced = common::forced_split_pool();
    [forced, ONE.get_or_init(|| common::stress_pool(1))]
}

/// Panics of this file carry this prefix; the hook stays quiet about them.
const PREFIX: &str = "audit-driver:";

fn silence_own_panics() {
    common::quiet_planned_panics(PREFIX);
}

fn spin(micros: u64) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_micros(micros) {
        std::hint::spin_loop();
    }
}

/// Children of `n` in a complete binary tree of nodes 1..=`last`.
fn kids(last: u32) -> impl Fn(&u32) -> Vec<u32> + Sync + Send + Copy {
    move |&n| {
        [2 * n, 2 * n + 1]
            .into_iter()
            .filter(|&c| c <= last)
            .collect()
    }
}

fn seq_prefix(n: u32, last: u32, out: &mut Vec<u32>) {
    out.push(n);
    for c in kids(last)(&n) {
        seq_prefix(c, last, out);
    }
}

fn seq_postfix(n: u32, last: u32, out: &mut Vec<u32>) {
    for c in kids(last)(&n) {
        seq_postfix(c, last, out);
    }
    out.push(n);
}

/// `r` cut in halves down to single numbers.
fn halve(r: std::ops::Range<u32>) -> (std::ops::Range<u32>, Option<std::ops::Range<u32>>) {
    if r.len() <= 1 {
        return (r, None);
    }
    let mid = r.start + r.len() as u32 / 2;
    (r.start..mid, Some(mid..r.end))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// `find_last` and `find_first` where many pieces cover the same empty range of
    /// positions: the inner loops of `flat_map` (split beyond their one outer position)
    /// and unindexed iterators chained after, or nested in, indexed ones. `find_last`
    /// used to let such a piece with a match stop the later pieces at the same position,
    /// and itself after its first match (regression).
    #[test]
    fn searches_keep_order_across_pieces_at_one_position(
        outer in 0usize..6, inner in 0usize..80, last in 1u32..120, m in 2u32..9, r in 0u32..9,
    ) {
        for pool in pools() {
            pool.install(|| {
                let hit = |x: &u32| x % m == r % m;
                // Inner indexed loops.
                let nested = || (0..outer).into_par_iter()
                    .flat_map(|i| (0..inner as u32).into_par_iter().map(move |j| i as u32 * 1000 + j));
                let seq: Vec<u32> = (0..outer)
                    .flat_map(|i| (0..inner as u32).map(move |j| i as u32 * 1000 + j))
                    .collect();
                let hit_inner = |x: &u32| hit(&(x % 1000));
                prop_assert_eq!(nested().find_last(hit_inner), seq.iter().copied().rev().find(hit_inner));
                prop_assert_eq!(nested().find_first(hit_inner), seq.iter().copied().find(hit_inner));
                prop_assert_eq!(
                    nested().find_map_last(|x| hit_inner(&x).then_some(x / 7)),
                    seq.iter().copied().rev().find(hit_inner).map(|x| x / 7)
                );

                // Trees after and inside indexed loops.
                let mut pre = Vec::new();
                seq_prefix(1, last, &mut pre);
                let mut post = Vec::new();
                seq_postfix(1, last, &mut post);
                let chained = || (0..outer as u32).into_par_iter()
                    .chain(sumac::iter::walk_tree_prefix(1u32, kids(last)));
                let seq_chained: Vec<u32> = (0..outer as u32).chain(pre.iter().copied()).collect();
                prop_assert_eq!(chained().find_last(hit), seq_chained.iter().copied().rev().find(hit));
                prop_assert_eq!(chained().find_first(hit), seq_chained.iter().copied().find(hit));
                let trees = || (0..outer).into_par_iter()
                    .flat_map(|i| sumac::iter::walk_tree_postfix(1u32, kids(last)).map(move |n| (i, n)));
                let seq_trees: Vec<(usize, u32)> =
                    (0..outer).flat_map(|i| post.iter().map(move |&n| (i, n))).collect();
                let hit_tree = |&(i, n): &(usize, u32)| i + 1 == outer && hit(&n);
                prop_assert_eq!(trees().find_last(hit_tree), seq_trees.iter().copied().rev().find(hit_tree));
                prop_assert_eq!(trees().find_first(hit_tree), seq_trees.iter().copied().find(hit_tree));

                // Pieces of `iter::split` inside an indexed loop.
                let cut = || (0..outer).into_par_iter()
                    .flat_map(|i| sumac::iter::split(0..last, halve).flat_map_iter(move |r| r.map(move |x| (i, x))));
                let seq_cut: Vec<(usize, u32)> = (0..outer).flat_map(|i| (0..last).map(move |x| (i, x))).collect();
                let hit_cut = |&(_, x): &(usize, u32)| hit(&x);
                prop_assert_eq!(cut().find_last(hit_cut), seq_cut.iter().copied().rev().find(hit_cut));
                prop_assert_eq!(cut().find_first(hit_cut), seq_cut.iter().copied().find(hit_cut));
                Ok(())
            })?;
        }
    }
}

/// The tree of a one-thread pool's walk, chained after a range: the walk's only piece
/// covers the empty range after the range, and `find_last` stopped it at its first
/// match (regression; deterministic, no split needed).
#[test]
fn find_last_of_a_walk_chained_after_a_range() {
    let pool = common::stress_pool(1);
    let last = 127;
    let mut pre = Vec::new();
    seq_prefix(1, last, &mut pre);
    let hit = |&n: &u32| n % 2 == 0 && n > 1;
    let found = pool.install(|| {
        (0..10u32)
            .into_par_iter()
            .chain(sumac::iter::walk_tree_prefix(1u32, kids(last)))
            .find_last(hit)
    });
    assert_eq!(found, pre.iter().copied().rev().find(hit));
}

/// Runs `f`, which must panic with `expected`, and checks that every token made was
/// dropped exactly once.
fn expect_panic(what: &str, expected: &str, f: impl FnOnce(&common::DropCounter)) {
    let counter = common::DropCounter::new();
    let r = catch_unwind(AssertUnwindSafe(|| f(&counter)));
    match r {
        Ok(()) => panic!("{what}: no panic, expected {expected:?}"),
        Err(e) => assert_eq!(common::panic_message(&*e), expected, "{what}: wrong panic"),
    }
    assert_eq!(
        counter.created(),
        counter.dropped(),
        "{what}: {} tokens made, {} dropped",
        counter.created(),
        counter.dropped()
    );
}

/// A panic in item `k`, for every `k` of a small input, through each driver of this
/// area: the panic reported is that item's, and every owned item (and every partial
/// result holding owned items) is dropped exactly once.
#[test]
fn a_panic_in_any_one_item_is_reported_and_nothing_leaks() {
    silence_own_panics();
    const N: usize = 23;
    for pool in pools() {
        for k in 0..N {
            let expected = format!("{PREFIX} item {k}");
            let fail = |i: usize| {
                if i == k {
                    panic!("{PREFIX} item {i}");
                }
            };
            let owned =
                |c: &common::DropCounter| (0..N).map(|i| (i, c.token())).collect::<Vec<_>>();
            pool.install(|| {
                expect_panic("vec map collect", &expected, |c| {
                    let _: Vec<_> = owned(c)
                        .into_par_iter()
                        .map(|(i, t)| {
                            fail(i);
                            (i, t)
                        })
                        .collect();
                });
                expect_panic("vec filter_map collect", &expected, |c| {
                    let _: Vec<_> = owned(c)
                        .into_par_iter()
                        .filter_map(|(i, t)| {
                            fail(i);
                            (i % 3 != 0).then_some(t)
                        })
                        .collect();
                });
                expect_panic("chunks", &expected, |c| {
                    let _: Vec<Vec<_>> = owned(c)
                        .into_par_iter()
                        .map(|(i, t)| {
                            fail(i);
                            t
                        })
                        .chunks(4)
                        .collect();
                });
                expect_panic("fold_chunks", &expected, |c| {
                    let _: Vec<Vec<_>> = owned(c)
                        .into_par_iter()
                        .fold_chunks(3, Vec::new, |mut v, (i, t)| {
                            fail(i);
                            v.push(t);
                            v
                        })
                        .collect();
                });
                expect_panic("intersperse", &expected, |c| {
                    let _: Vec<_> = owned(c)
                        .into_par_iter()
                        .map(|(i, t)| {
                            fail(i);
                            std::sync::Arc::new(t)
                        })
                        .intersperse(std::sync::Arc::new(c.token()))
                        .collect();
                });
                expect_panic("unindexed intersperse", &expected, |c| {
                    let _: Vec<_> = owned(c)
                        .into_par_iter()
                        .filter(|(i, _)| i % 2 == 0 || *i == k)
                        .map(|(i, t)| {
                            fail(i);
                            std::sync::Arc::new(t)
                        })
                        .intersperse(std::sync::Arc::new(c.token()))
                        .collect();
                });
                expect_panic("flat_map", &expected, |c| {
                    let _: Vec<_> = (0..5usize)
                        .into_par_iter()
                        .flat_map(|o| (0..5usize).into_par_iter().map(move |j| o * 5 + j))
                        .filter(|&i| i < N)
                        .map(|i| {
                            let t = c.token();
                            fail(i);
                            t
                        })
                        .collect();
                });
                expect_panic("indexed panic_fuse", &expected, |c| {
                    let _: Vec<_> = owned(c)
                        .into_par_iter()
                        .panic_fuse()
                        .map(|(i, t)| {
                            fail(i);
                            t
                        })
                        .collect();
                });
                expect_panic("unindexed panic_fuse", &expected, |c| {
                    let _: Vec<_> = owned(c)
                        .into_par_iter()
                        .filter(|_| true)
                        .panic_fuse()
                        .map(|(i, t)| {
                            fail(i);
                            t
                        })
                        .collect();
                });
                expect_panic("walk_tree", &expected, |c| {
                    let _: Vec<_> = sumac::iter::walk_tree_prefix(1u32, kids(N as u32))
                        .map(|n| {
                            let t = c.token();
                            fail(n as usize - 1);
                            t
                        })
                        .collect();
                });
                expect_panic("walk_tree children", &expected, |c| {
                    let _: Vec<_> = sumac::iter::walk_tree_postfix((1u32, c.token()), |(n, _)| {
                        fail(*n as usize - 1);
                        kids(N as u32)(n)
                            .into_iter()
                            .map(|m| (m, c.token()))
                            .collect::<Vec<_>>()
                    })
                    .collect();
                });
                expect_panic("split", &expected, |c| {
                    let _: Vec<_> = sumac::iter::split(0..N as u32, halve)
                        .flat_map_iter(|r| r)
                        .map(|i| {
                            let t = c.token();
                            fail(i as usize);
                            t
                        })
                        .collect();
                });
                expect_panic("par_bridge", &expected, |c| {
                    let _: Vec<_> = owned(c)
                        .into_iter()
                        .par_bridge()
                        .map(|(i, t)| {
                            fail(i);
                            t
                        })
                        .collect();
                });
                expect_panic("par_bridge source", &expected, |c| {
                    let items = owned(c);
                    let mut i = 0;
                    let source = std::iter::from_fn(move || {
                        fail(i);
                        i += 1;
                        (i <= N).then(|| c.token())
                    });
                    drop(items);
                    let _: Vec<_> = source.par_bridge().collect();
                });
            });
        }
    }
}

/// Calls per item, to check that every item runs exactly once.
struct Calls(Vec<AtomicUsize>);

impl Calls {
    fn new(n: usize) -> Self {
        Calls((0..n).map(|_| AtomicUsize::new(0)).collect())
    }
    fn hit(&self, i: usize) {
        self.0[i].fetch_add(1, Ordering::Relaxed);
    }
    fn assert_once(&self, what: &str) {
        for (i, c) in self.0.iter().enumerate() {
            let c = c.load(Ordering::Relaxed);
            assert_eq!(c, 1, "{what}: item {i} ran {c} times");
        }
    }
}

/// Nested loops whose items cost nothing except one that spins for a millisecond (so
/// heartbeats land in the middle of the outer loop's blocks, and the expensive-item path
/// splits the rest eagerly): every (outer, inner) item runs exactly once, and ordered
/// results (collect, a non-commutative reduce, fold + reduce) equal the sequential ones.
#[test]
fn nested_loops_with_one_slow_item_run_every_item_once_in_order() {
    const OUTER: usize = 64;
    const INNER: usize = 50;
    for pool in pools() {
        for slow in [0, 7, OUTER - 1] {
            let calls = Calls::new(OUTER * INNER);
            let body = |i: usize, j: usize| {
                calls.hit(i * INNER + j);
                if i == slow && j == INNER / 2 {
                    spin(1000);
                }
                i * INNER + j
            };
            let (nested, words, folded) = pool.install(|| {
                let nested: Vec<Vec<usize>> = (0..OUTER)
                    .into_par_iter()
                    .map(|i| (0..INNER).into_par_iter().map(|j| body(i, j)).collect())
                    .collect();
                calls.assert_once("map of collect");
                let calls2 = Calls::new(OUTER * INNER);
                let words = (0..OUTER)
                    .into_par_iter()
                    .flat_map(|i| (0..INNER).into_par_iter().map(move |j| (i, j)))
                    .map(|(i, j)| {
                        calls2.hit(i * INNER + j);
                        if i == slow && j == 3 {
                            spin(1000);
                        }
                        format!("{i}.{j} ")
                    })
                    .reduce(String::new, |a, b| a + &b);
                calls2.assert_once("flat_map reduce");
                let folded: Vec<usize> = (0..OUTER * INNER)
                    .into_par_iter()
                    .with_min_len(3)
                    .fold(Vec::new, |mut v, x| {
                        if x == slow * INNER {
                            spin(1000);
                        }
                        v.push(x);
                        v
                    })
                    .reduce(Vec::new, |mut a, b| {
                        a.extend(b);
                        a
                    });
                (nested, words, folded)
            });
            let seq: Vec<Vec<usize>> = (0..OUTER)
                .map(|i| (0..INNER).map(|j| i * INNER + j).collect())
                .collect();
            assert_eq!(nested, seq);
            let seq_words: String = (0..OUTER)
                .flat_map(|i| (0..INNER).map(move |j| format!("{i}.{j} ")))
                .collect();
            assert_eq!(words, seq_words);
            assert_eq!(folded, (0..OUTER * INNER).collect::<Vec<_>>());
        }
    }
}

/// Early-exit consumers over two million cheap items with a slow item near the front:
/// each returns the sequential answer and stops the loop (fewer items looked at than
/// there are; the count, not the time, is checked).
///
/// On a one-worker pool the pieces run in order, so the items after the answer's block
/// are never looked at: far fewer than half. On a pool of several workers, a piece with
/// no match that another worker started before the answer was found runs to its end,
/// and the slow item before the answer (or the machine, under load) can delay the answer
/// long enough for that: in release builds, 4 workers on 2 cores beside this file's
/// other tests ran the whole upper half of the loop in 7 runs out of 12 (1,000,020 of
/// 2,000,000 items looked at). Only the pieces not started by then are skipped, which
/// always includes the rest of the piece that holds the answer.
#[test]
fn early_exit_consumers_stop_the_loop() {
    const N: usize = 2_000_000;
    for pool in pools() {
        let looked = AtomicUsize::new(0);
        let look = |x: usize| {
            looked.fetch_add(1, Ordering::Relaxed);
            if x == 3 {
                spin(1000);
            }
            x
        };
        let bound = if pool.current_num_threads() == 1 {
            N / 2
        } else {
            N
        };
        let stopped = |what: &str| {
            let n = looked.swap(0, Ordering::Relaxed);
            assert!(n < bound, "{what} looked at {n} of {N} items");
        };
        pool.install(|| {
            let r = (0..N)
                .into_par_iter()
                .map(look)
                .find_first(|&x| x % 1000 == 10);
            assert_eq!(r, Some(10));
            stopped("find_first");
            let r = (0..N)
                .into_par_iter()
                .map(look)
                .find_any(|&x| x > 5 && x % 1000 == 10);
            assert!(matches!(r, Some(x) if x % 1000 == 10));
            stopped("find_any");
            assert!((0..N).into_par_iter().map(look).any(|x| x == 20));
            stopped("any");
            assert!(!(0..N).into_par_iter().map(look).all(|x| x != 20));
            stopped("all");
            assert_eq!(
                (0..N).into_par_iter().map(look).position_first(|x| x == 20),
                Some(20)
            );
            stopped("position_first");
            assert_eq!(
                (0..N).into_par_iter().map(look).position_any(|x| x == 20),
                Some(20)
            );
            stopped("position_any");
            let r = (0..N)
                .into_par_iter()
                .map(look)
                .find_last(|&x| x % 1000 == 10);
            assert_eq!(r, Some(N - 990));
            let r = (0..N)
                .into_par_iter()
                .rev()
                .map(look)
                .find_first(|&x| x < 5);
            assert_eq!(r, Some(4));
            looked.store(0, Ordering::Relaxed);
            let mut taken: Vec<usize> = (0..N)
                .into_par_iter()
                .map(look)
                .take_any_while(|&x| x < 30)
                .collect();
            taken.sort_unstable();
            assert!(
                taken.iter().all(|&x| x < 30),
                "take_any_while took {taken:?}"
            );
            assert!(taken.windows(2).all(|w| w[0] < w[1]));
            stopped("take_any_while");
            let r: Vec<usize> = (0..N)
                .into_par_iter()
                .map(look)
                .map(|x| (x != 40).then_some(x))
                .while_some()
                .collect();
            assert!(r.iter().all(|&x| x != 40) && r.len() < N);
            stopped("while_some");
            let r = (0..N).into_par_iter().map(look).try_for_each(|x| {
                if x == 50 {
                    Err(x)
                } else {
                    Ok(())
                }
            });
            assert_eq!(r, Err(50));
            stopped("try_for_each");
            let r = (0..N).into_par_iter().map(look).take_any(10).count();
            assert_eq!(r, 10);
            stopped("take_any");
            // Unindexed sources: their pieces have no positions, so the search makes
            // some up (halving a range at each split); `find_first` stops the pieces
            // after a match too.
            let wide = |&n: &usize| {
                if n < N / 2 {
                    vec![2 * n + 1, 2 * n + 2]
                } else {
                    vec![]
                }
            };
            let r = sumac::iter::walk_tree_prefix(0usize, wide)
                .map(look)
                .find_any(|&x| x % 100 == 60);
            assert!(matches!(r, Some(x) if x % 100 == 60));
            stopped("walk_tree find_any");
            let even = |&x: &usize| x > 5 && x % 2 == 0;
            let r = sumac::iter::walk_tree_prefix(0usize, wide)
                .map(look)
                .find_first(even);
            let mut stack = vec![0usize];
            let seq = std::iter::from_fn(|| {
                let n = stack.pop()?;
                stack.extend(wide(&n).into_iter().rev());
                Some(n)
            })
            .find(even);
            assert_eq!(r, seq);
            stopped("walk_tree find_first");
            let r = (0..N).par_bridge().map(look).find_any(|&x| x == 60);
            assert_eq!(r, Some(60));
            stopped("par_bridge find_any");
            let split = || {
                sumac::iter::split(0..N as u32, halve)
                    .flat_map(|r| r.into_par_iter())
                    .map(|x| look(x as usize))
            };
            assert_eq!(split().find_any(|&x| x == 70), Some(70));
            stopped("split find_any");
            assert_eq!(split().find_first(|&x| x % 1000 == 70), Some(70));
            stopped("split find_first");
            assert_eq!(split().find_last(|&x| x % 1000 == 70), Some(N - 930));
            looked.store(0, Ordering::Relaxed);
            let r = (0..N)
                .par_bridge()
                .map(look)
                .find_first(|&x| x % 1000 == 60);
            assert!(matches!(r, Some(x) if x % 1000 == 60));
            stopped("par_bridge find_first");
        });
    }
}

/// A consumer written as for Rayon (it does not detach, so the driver splits it before
/// every block): gathers the items in order, and once an item equal to `stop_at` was
/// gathered, says it is full (through a flag all its pieces share).
struct Gather<'a> {
    stop_at: Option<usize>,
    stopped: &'a std::sync::atomic::AtomicBool,
}
struct GatherFolder<'a>(Vec<usize>, Gather<'a>);
struct Concat;

impl<'a> sumac::iter::plumbing::Consumer<usize> for Gather<'a> {
    type Folder = GatherFolder<'a>;
    type Reducer = Concat;
    type Result = Vec<usize>;
    fn split_at(self, _index: usize) -> (Self, Self, Concat) {
        (Gather { ..self }, self, Concat)
    }
    fn into_folder(self) -> GatherFolder<'a> {
        GatherFolder(Vec::new(), self)
    }
    fn full(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }
}

impl Clone for Gather<'_> {
    fn clone(&self) -> Self {
        Gather { ..*self }
    }
}

impl sumac::iter::plumbing::UnindexedConsumer<usize> for Gather<'_> {
    fn split_off_left(&self) -> Self {
        self.clone()
    }
    fn to_reducer(&self) -> Concat {
        Concat
    }
}

impl sumac::iter::plumbing::Folder<usize> for GatherFolder<'_> {
    type Result = Vec<usize>;
    fn consume(mut self, item: usize) -> Self {
        if Some(item) == self.1.stop_at {
            self.1.stopped.store(true, Ordering::Relaxed);
        }
        self.0.push(item);
        self
    }
    fn complete(self) -> Vec<usize> {
        self.0
    }
    fn full(&self) -> bool {
        self.1.stopped.load(Ordering::Relaxed)
    }
}

impl sumac::iter::plumbing::Reducer<Vec<usize>> for Concat {
    fn reduce(self, mut left: Vec<usize>, right: Vec<usize>) -> Vec<usize> {
        left.extend(right);
        left
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// The splitting fold (a consumer that does not detach), with a slow item among
    /// cheap ones, `with_min_len`/`with_max_len`, nested and unindexed sources: the
    /// items come out in order, each once; with a stop item, everything gathered is a
    /// prefix-closed run that includes the stop item's piece only up to it.
    #[test]
    fn a_consumer_that_does_not_detach_gets_every_item_once_in_order(
        len in 0usize..3000, slow in 0usize..3000, min in 1usize..40, max in 1usize..400, stop in 0usize..3000,
    ) {
        for pool in pools() {
            pool.install(|| {
                let no_stop = std::sync::atomic::AtomicBool::new(false);
                let gather = || Gather { stop_at: None, stopped: &no_stop };
                let body = |x: usize| {
                    if x == slow {
                        spin(300);
                    }
                    x
                };
                let seq: Vec<usize> = (0..len).collect();
                prop_assert_eq!((0..len).into_par_iter().map(body).drive_unindexed(gather()), seq.clone());
                prop_assert_eq!(
                    (0..len).into_par_iter().with_min_len(min).map(body).drive(gather()),
                    seq.clone()
                );
                prop_assert_eq!(
                    (0..len).into_par_iter().with_max_len(max).with_min_len(min).map(body).drive(gather()),
                    seq.clone()
                );
                let rows = len / 50;
                prop_assert_eq!(
                    (0..rows).into_par_iter()
                        .flat_map(|i| (0..50).into_par_iter().map(move |j| body(i * 50 + j)))
                        .drive_unindexed(gather()),
                    (0..rows * 50).collect::<Vec<_>>()
                );
                let last = (len as u32).max(1);
                let mut pre = Vec::new();
                seq_prefix(1, last, &mut pre);
                prop_assert_eq!(
                    (0..len).into_par_iter()
                        .chain(sumac::iter::walk_tree_prefix(1u32, kids(last)).map(|n| n as usize))
                        .drive_unindexed(gather()),
                    (0..len).chain(pre.iter().map(|&n| n as usize)).collect::<Vec<_>>()
                );
                prop_assert_eq!(
                    (0..len).into_par_iter().map(body).intersperse(usize::MAX).drive_unindexed(gather()),
                    (0..len).flat_map(|x| [usize::MAX, x]).skip(1).collect::<Vec<_>>()
                );
                // Stopping: the pieces before the stop item's are gathered whole (they
                // may have finished first) or cut short at a block boundary; in any
                // case the items are increasing, and the stop item is there.
                let stopped = std::sync::atomic::AtomicBool::new(false);
                let got = (0..len).into_par_iter().map(body)
                    .drive_unindexed(Gather { stop_at: Some(stop), stopped: &stopped });
                prop_assert!(got.windows(2).all(|w| w[0] < w[1]), "not in order: {:?}", got);
                if stop < len {
                    prop_assert!(got.contains(&stop));
                } else {
                    prop_assert_eq!(got, seq);
                }
                Ok(())
            })?;
        }
    }
}

/// The first `n` numbers, recording every block the loop driver folds as `(start, len)`.
struct Recorded<'a> {
    n: usize,
    blocks: &'a std::sync::Mutex<Vec<(usize, usize)>>,
}

struct RecordedProducer<'a> {
    range: std::ops::Range<usize>,
    blocks: &'a std::sync::Mutex<Vec<(usize, usize)>>,
}

impl ParallelIterator for Recorded<'_> {
    type Item = usize;
    fn drive_unindexed<C: sumac::iter::plumbing::UnindexedConsumer<usize>>(
        self,
        consumer: C,
    ) -> C::Result {
        sumac::iter::plumbing::bridge(self, consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.n)
    }
}

impl IndexedParallelIterator for Recorded<'_> {
    fn len(&self) -> usize {
        self.n
    }
    fn drive<C: sumac::iter::plumbing::Consumer<usize>>(self, consumer: C) -> C::Result {
        sumac::iter::plumbing::bridge(self, consumer)
    }
    fn with_producer<CB: sumac::iter::plumbing::ProducerCallback<usize>>(
        self,
        callback: CB,
    ) -> CB::Output {
        callback.callback(RecordedProducer {
            range: 0..self.n,
            blocks: self.blocks,
        })
    }
}

impl sumac::iter::plumbing::Producer for RecordedProducer<'_> {
    type Item = usize;
    type IntoIter = std::ops::Range<usize>;
    fn into_iter(self) -> Self::IntoIter {
        self.range
    }
    fn fold_with<F: sumac::iter::plumbing::Folder<usize>>(self, folder: F) -> F {
        let block = (self.range.start, self.range.len());
        self.blocks.lock().unwrap().push(block);
        folder.consume_iter(self.range)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let mid = self.range.start + index;
        (
            RecordedProducer {
                range: self.range.start..mid,
                blocks: self.blocks,
            },
            RecordedProducer {
                range: mid..self.range.end,
                blocks: self.blocks,
            },
        )
    }
}

/// A vectorised loop over a slice runs at the alignment the sequential loop has only if
/// its pieces start where the sequential loop's vectors do: every block of 32 items or
/// more starts at a multiple of 16 items from the loop's start (the misaligned first
/// items of a piece are folded as a short block of their own), and the blocks cover the
/// items exactly once. Loops split by 1 µs heartbeats in 2- and 4-thread pools, called
/// on a worker and from outside the pool, through detaching (`sum`, `collect`) and
/// splitting (`unzip`) consumers.
#[test]
fn blocks_of_32_items_or_more_start_at_multiples_of_16_items() {
    const N: usize = 200_000;
    let work = |i: usize| {
        let mut x = i;
        for _ in 0..20 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        i + usize::from(x == usize::MAX)
    };
    let blocks = std::sync::Mutex::new(Vec::new());
    let check = |what: &str| {
        let mut blocks = std::mem::take(&mut *blocks.lock().unwrap());
        blocks.sort_unstable();
        let mut next = 0;
        for &(start, len) in &blocks {
            assert_eq!(
                start, next,
                "{what}: blocks {blocks:?} do not tile the loop"
            );
            assert!(
                len < 32 || start % 16 == 0,
                "{what}: a block of {len} items starts at {start}"
            );
            next = start + len;
        }
        assert_eq!(next, N, "{what}: blocks end before the loop's last item");
        blocks.len()
    };
    let mut most_blocks = 0;
    for threads in [2, 4] {
        let pool = common::stress_pool(threads);
        let recorded = || Recorded {
            n: N,
            blocks: &blocks,
        };
        for _ in 0..5 {
            // From this thread, outside the pool: a guest's loop.
            let sum = pool.install(|| recorded().map(work).sum::<usize>());
            assert_eq!(sum, N * (N - 1) / 2);
            most_blocks = most_blocks.max(check("sum from outside"));
            let v: Vec<usize> = pool.install(|| recorded().map(work).collect());
            assert!(v.iter().copied().eq(0..N));
            most_blocks = most_blocks.max(check("collect from outside"));
            let (a, b): (Vec<usize>, Vec<usize>) =
                pool.install(|| recorded().map(|i| (work(i), i)).unzip());
            assert!(a.iter().copied().eq(0..N) && a == b);
            most_blocks = most_blocks.max(check("unzip from outside"));
            // On a worker.
            let mut sum = 0;
            pool.scope(|s| s.spawn(|_| sum = recorded().map(work).sum::<usize>()));
            assert_eq!(sum, N * (N - 1) / 2);
            most_blocks = most_blocks.max(check("sum on a worker"));
        }
    }
    // The rule was exercised: the loops were cut into many blocks.
    assert!(most_blocks > 8, "at most {most_blocks} blocks per loop");
}
