//! `par_drain` of a range of a `VecDeque` and of a `String`, and of all of a
//! `BinaryHeap`, all in place, against the std drains: on a 4-thread pool with a 1 µs
//! heartbeat and forced extra splits, with every kind of range bound, deques whose buffer
//! wraps around or starts past its beginning, drains dropped unused or leaked, and
//! closures that panic midway (the collection is left valid and every item is dropped
//! exactly once).
use crate::common;

use std::collections::{BinaryHeap, VecDeque};
use std::ops::Bound;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use sumac::prelude::*;

fn on_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    common::forced_split_pool().install(f)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 128,
        ..ProptestConfig::default()
    }
}

/// The panic message of the closures below that panic on purpose.
const BOOM: &str = "drain_props: planned panic";

/// Runs `f`, catching its panic; the planned panics print nothing (any other panic is
/// reported by the default hook as usual).
fn catch<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    common::quiet_planned_panics(BOOM);
    catch_unwind(AssertUnwindSafe(f))
}

/// A range as its two bounds.
type Bounds = (Bound<usize>, Bound<usize>);

/// A range given by its two bounds, each picked by a number: the start is included (0),
/// excluded (1, one before `lo`) or unbounded (2, when `lo` is 0); the end is excluded
/// (0), included (1, `hi - 1`) or unbounded (2, when `hi` is `len`). Kinds that cannot
/// express `lo..hi` fall back to the plain bound.
fn bounds(lo: usize, hi: usize, len: usize, kinds: (u8, u8)) -> Bounds {
    let start = match kinds.0 {
        1 if lo > 0 => Bound::Excluded(lo - 1),
        2 if lo == 0 => Bound::Unbounded,
        _ => Bound::Included(lo),
    };
    let end = match kinds.1 {
        1 if hi > 0 => Bound::Included(hi - 1),
        2 if hi == len => Bound::Unbounded,
        _ => Bound::Excluded(hi),
    };
    (start, end)
}

/// A deque holding `make(0)`, ..., `make(len - 1)` in order, built so that its buffer
/// does not start at its beginning: `skipped` fillers (`make(len)`) are pushed and
/// drained at the front first, then the first `fronts` items are pushed at the front
/// (so the buffer wraps around when `skipped` is 0 and some items were pushed at the
/// back).
fn shaped_deque<T>(
    len: usize,
    fronts: usize,
    skipped: usize,
    mut make: impl FnMut(usize) -> T,
) -> VecDeque<T> {
    let fronts = fronts.min(len);
    let mut deque: VecDeque<T> = VecDeque::new();
    deque.extend((0..skipped).map(|_| make(len)));
    deque.extend((fronts..len).map(&mut make));
    deque.drain(..skipped);
    for id in (0..fronts).rev() {
        deque.push_front(make(id));
    }
    deque
}

#[test]
fn shaped_deques_wrap_or_start_late() {
    let wrapped = shaped_deque(20, 5, 0, |i| i);
    assert!(wrapped.iter().copied().eq(0..20));
    assert!(!wrapped.as_slices().1.is_empty(), "the buffer wraps around");
    let late = shaped_deque(20, 0, 7, |i| i);
    assert!(late.iter().copied().eq(0..20));
}

/// Counts, per id, how many times an item was dropped.
struct Ledger {
    drops: Vec<AtomicUsize>,
}

impl Ledger {
    fn new(n: usize) -> Self {
        Ledger {
            drops: (0..n).map(|_| AtomicUsize::new(0)).collect(),
        }
    }
    fn make(&self, id: usize) -> Tracked<'_> {
        Tracked { id, ledger: self }
    }
    /// Ids dropped a number of times other than once.
    fn not_dropped_once(&self) -> Vec<(usize, usize)> {
        self.drops
            .iter()
            .map(|d| d.load(Ordering::SeqCst))
            .enumerate()
            .filter(|&(_, d)| d != 1)
            .collect()
    }
}

struct Tracked<'a> {
    id: usize,
    ledger: &'a Ledger,
}

impl Clone for Tracked<'_> {
    fn clone(&self) -> Self {
        panic!("items are never cloned")
    }
}

impl Drop for Tracked<'_> {
    fn drop(&mut self) {
        self.ledger.drops[self.id].fetch_add(1, Ordering::SeqCst);
    }
}

/// A [`Tracked`] item ordered by its id, for heaps.
struct ById<'a>(Tracked<'a>);

impl PartialEq for ById<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}

impl Eq for ById<'_> {}

impl PartialOrd for ById<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ById<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.id.cmp(&other.0.id)
    }
}

/// Strings made of chars of every UTF-8 width.
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!["a", "bc", "é", "日本", "\u{1F600}", " ", "x\u{85}y"]),
        0..80,
    )
    .prop_map(|parts| parts.concat())
}

/// The char boundaries of `text` picked by `a` and `b` (taken modulo their number), in
/// order.
fn char_range(text: &str, a: usize, b: usize) -> (usize, usize) {
    let ends: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let (a, b) = (ends[a % ends.len()], ends[b % ends.len()]);
    (a.min(b), a.max(b))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn vec_deque_par_drain_in_place(len in 0usize..400, fronts in 0usize..400, skipped in 0usize..3,
                                    a in 0usize..420, b in 0usize..420, kinds in (0u8..3, 0u8..3),
                                    k in 0usize..50, m in 1usize..9) {
        let (lo, hi) = (a.min(b).min(len), a.max(b).min(len));
        let range = bounds(lo, hi, len, kinds);
        let original = shaped_deque(len, fronts, skipped * 50, |i| i.to_string());
        on_pool(|| {
            let mut expected = original.clone();
            let expected_drained: Vec<String> = expected.drain(range).collect();
            let mut d = original.clone();
            let drain = d.par_drain(range);
            prop_assert_eq!(drain.len(), expected_drained.len());
            prop_assert_eq!(drain.collect::<Vec<_>>(), expected_drained.clone());
            prop_assert_eq!(&d, &expected);
            let mut d = original.clone();
            prop_assert_eq!(d.par_drain(range).rev().collect::<Vec<_>>(),
                expected_drained.iter().rev().cloned().collect::<Vec<_>>());
            prop_assert_eq!(&d, &expected);
            let mut d = original.clone();
            prop_assert_eq!(d.par_drain(range).skip(k).take(k + 1).collect::<Vec<_>>(),
                expected_drained.iter().skip(k).take(k + 1).cloned().collect::<Vec<_>>());
            prop_assert_eq!(&d, &expected);
            let mut d = original.clone();
            prop_assert_eq!(d.par_drain(range).find_first(|s| s.len() % m == 0 && s.ends_with('7')),
                expected_drained.iter().find(|s| s.len() % m == 0 && s.ends_with('7')).cloned());
            prop_assert_eq!(&d, &expected);
            let mut d = original.clone();
            prop_assert_eq!(d.par_drain(range).enumerate().map(|(i, s)| (i, s.len())).collect::<Vec<_>>(),
                expected_drained.iter().map(String::len).enumerate().collect::<Vec<_>>());
            prop_assert_eq!(&d, &expected);
            // Dropped unused: the range's items go, as with `VecDeque::drain`.
            let mut d = original.clone();
            drop(d.par_drain(range));
            prop_assert_eq!(&d, &expected);
            // Leaked before it ran: the deque keeps everything.
            let mut d = original.clone();
            std::mem::forget(d.par_drain(range));
            prop_assert_eq!(&d, &original);
            // The deque still works as one.
            let mut d = original.clone();
            d.par_drain(range).for_each(drop);
            d.push_front("f".to_string());
            d.push_back("b".to_string());
            prop_assert_eq!(d.len(), expected.len() + 2);
            prop_assert_eq!((d.front().map(String::as_str), d.back().map(String::as_str)), (Some("f"), Some("b")));
            Ok(())
        })?;
    }

    #[test]
    fn vec_deque_par_drain_panicking_drops_each_item_once(
        len in 1usize..300, fronts in 0usize..300, skipped in 0usize..3,
        a in 0usize..300, b in 0usize..300, kinds in (0u8..3, 0u8..3), bad in 0usize..300, how in 0u8..3,
    ) {
        let (lo, hi) = (a.min(b).min(len), a.max(b).min(len));
        let range = bounds(lo, hi, len, kinds);
        let bad = bad % len;
        // Item `len` is the filler, dropped while the deque is built.
        let ledger = Ledger::new(len + 1);
        let mut d = shaped_deque(len, fronts, skipped * 40, |id| ledger.make(id));
        ledger.drops[len].store(1, Ordering::SeqCst);
        let r = catch(|| on_pool(|| match how {
            0 => d.par_drain(range).for_each(|t| if t.id == bad { panic!("{}", BOOM) }),
            1 => drop(d.par_drain(range).map(|t| if t.id == bad { panic!("{}", BOOM) } else { t }).collect::<Vec<_>>()),
            _ => drop(d.par_drain(range).rev().skip(1).find_first(|t| if t.id == bad { panic!("{}", BOOM) } else { false })),
        }));
        let mut expected: VecDeque<usize> = (0..len).collect();
        let drained: Vec<usize> = expected.drain(range).collect();
        let reached = if how == 2 { drained.iter().rev().skip(1).any(|&id| id == bad) } else { drained.contains(&bad) };
        prop_assert_eq!(r.is_err(), reached);
        prop_assert!(d.iter().map(|t| t.id).eq(expected.iter().copied()));
        for &id in &drained {
            prop_assert_eq!(ledger.drops[id].load(Ordering::SeqCst), 1, "drained item {} not dropped once", id);
        }
        drop(d);
        prop_assert_eq!(ledger.not_dropped_once(), vec![]);
    }

    #[test]
    fn string_par_drain_in_place(text in text(), a in 0usize..200, b in 0usize..200,
                                 kinds in (0u8..3, 0u8..3), m in 1u32..5) {
        let (lo, hi) = char_range(&text, a, b);
        let range = bounds(lo, hi, text.len(), kinds);
        on_pool(|| {
            let mut expected = text.clone();
            let expected_drained: Vec<char> = expected.drain(range).collect();
            let mut s = text.clone();
            prop_assert_eq!(s.par_drain(range).collect::<Vec<_>>(), expected_drained.clone());
            prop_assert_eq!(&s, &expected);
            let mut s = text.clone();
            prop_assert_eq!(s.par_drain(range).collect::<String>(), expected_drained.iter().collect::<String>());
            prop_assert_eq!(&s, &expected);
            let mut s = text.clone();
            prop_assert_eq!(s.par_drain(range).count(), expected_drained.len());
            prop_assert_eq!(&s, &expected);
            let mut s = text.clone();
            let pick = |c: &char| (*c as u32) % (m + 1) == 0 && !c.is_ascii_whitespace();
            prop_assert_eq!(s.par_drain(range).find_first(pick), expected_drained.iter().copied().find(pick));
            prop_assert_eq!(&s, &expected);
            let mut s = text.clone();
            prop_assert_eq!(s.par_drain(range).filter(pick).map(|c| c.len_utf8()).sum::<usize>(),
                expected_drained.iter().copied().filter(pick).map(char::len_utf8).sum::<usize>());
            prop_assert_eq!(&s, &expected);
            // Dropped unused: the range goes.
            let mut s = text.clone();
            drop(s.par_drain(range));
            prop_assert_eq!(&s, &expected);
            // Leaked: the string keeps it.
            let mut s = text.clone();
            std::mem::forget(s.par_drain(range));
            prop_assert_eq!(&s, &text);
            Ok(())
        })?;
    }

    #[test]
    fn string_par_drain_panicking_removes_the_range(text in text(), a in 0usize..200, b in 0usize..200,
                                                    kinds in (0u8..3, 0u8..3), bad in 0usize..200) {
        let (lo, hi) = char_range(&text, a, b);
        let range = bounds(lo, hi, text.len(), kinds);
        let mut expected = text.clone();
        let drained: Vec<char> = expected.drain(range).collect();
        let bad = drained.get(bad % (drained.len() + 1)).copied();
        let mut s = text.clone();
        let r = catch(|| on_pool(|| s.par_drain(range).for_each(|c| if Some(c) == bad { panic!("{}", BOOM) })));
        prop_assert_eq!(r.is_err(), bad.is_some());
        prop_assert_eq!(s, expected);
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn binary_heap_par_drain_in_place(values in prop::collection::vec(0u32..1000, 0..400),
                                      spare in 0usize..100, k in 0usize..50, m in 1u32..9) {
        let mut original: BinaryHeap<u32> = BinaryHeap::with_capacity(values.len() + spare);
        original.extend(values.iter().copied());
        // The heap's own order, which the drain yields.
        let in_heap_order = original.clone().into_vec();
        on_pool(|| {
            let mut h = original.clone();
            let capacity = h.capacity();
            let drain = h.par_drain();
            prop_assert_eq!(drain.len(), values.len());
            prop_assert_eq!(drain.collect::<Vec<_>>(), in_heap_order.clone());
            prop_assert!(h.is_empty());
            prop_assert_eq!(h.capacity(), capacity, "the heap keeps its buffer");
            let mut h = original.clone();
            prop_assert_eq!(h.par_drain().rev().skip(k).take(k + 1).collect::<Vec<_>>(),
                in_heap_order.iter().rev().skip(k).take(k + 1).copied().collect::<Vec<_>>());
            prop_assert!(h.is_empty());
            let mut h = original.clone();
            prop_assert_eq!(h.par_drain().find_first(|x| x % m == 0),
                in_heap_order.iter().copied().find(|x| x % m == 0));
            prop_assert!(h.is_empty());
            // Dropped unused: the items go, as with `BinaryHeap::drain`.
            let mut h = original.clone();
            drop(h.par_drain());
            prop_assert!(h.is_empty());
            // Leaked before it ran: the heap keeps everything.
            let mut h = original.clone();
            std::mem::forget(h.par_drain());
            prop_assert_eq!(h.clone().into_sorted_vec(), original.clone().into_sorted_vec());
            // The heap still works as one.
            let mut h = original.clone();
            h.par_drain().for_each(drop);
            h.extend([3, 9, 1]);
            prop_assert_eq!(h.into_sorted_vec(), vec![1, 3, 9]);
            Ok(())
        })?;
    }

    #[test]
    fn binary_heap_par_drain_panicking_drops_each_item_once(len in 1usize..300, bad in 0usize..300,
                                                           how in 0u8..3) {
        let bad = bad % len;
        let ledger = Ledger::new(len);
        let mut h: BinaryHeap<ById<'_>> = (0..len).map(|id| ById(ledger.make(id))).collect();
        let order: Vec<usize> = h.iter().map(|item| item.0.id).collect();
        let r = catch(|| on_pool(|| match how {
            0 => h.par_drain().for_each(|t| if t.0.id == bad { panic!("{}", BOOM) }),
            1 => drop(h.par_drain().map(|t| if t.0.id == bad { panic!("{}", BOOM) } else { t }).collect::<Vec<_>>()),
            _ => drop(h.par_drain().rev().skip(1).find_first(|t| if t.0.id == bad { panic!("{}", BOOM) } else { false })),
        }));
        let reached = if how == 2 { order.iter().rev().skip(1).any(|&id| id == bad) } else { true };
        prop_assert_eq!(r.is_err(), reached);
        prop_assert!(h.is_empty(), "the heap is left empty");
        prop_assert_eq!(ledger.not_dropped_once(), vec![]);
        h.push(ById(ledger.make(0)));
        prop_assert_eq!(h.len(), 1);
        std::mem::forget(h);
    }
}

#[test]
fn concrete_range_types() {
    let mut d: VecDeque<u32> = (0..10).collect();
    d.push_front(100);
    assert_eq!(d.par_drain(2..4).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(d.par_drain(..=1).collect::<Vec<_>>(), [100, 0]);
    assert_eq!(d.par_drain(5..).collect::<Vec<_>>(), [8, 9]);
    assert_eq!(d.par_drain(..).collect::<Vec<_>>(), [3, 4, 5, 6, 7]);
    assert!(d.is_empty());
    assert_eq!(d.par_drain(..).count(), 0);

    let mut s = String::from("añ日\u{1F600}b");
    assert_eq!(s.par_drain(1..=2).collect::<String>(), "ñ");
    assert_eq!(s.par_drain(..4).collect::<String>(), "a日");
    assert_eq!(s.par_drain(4..).collect::<String>(), "b");
    assert_eq!(s.par_drain(..).collect::<String>(), "\u{1F600}");
    assert!(s.is_empty());
}

/// Bad ranges panic at the call of `par_drain` (as the std drains do), leaving the
/// collection as it was.
#[test]
fn bad_ranges_panic_at_the_call() {
    let bad_deque_ranges: [Bounds; 4] = [
        (Bound::Included(3), Bound::Excluded(2)),
        (Bound::Included(0), Bound::Excluded(6)),
        (Bound::Included(0), Bound::Included(5)),
        (Bound::Excluded(usize::MAX), Bound::Unbounded),
    ];
    for range in bad_deque_ranges {
        let mut d: VecDeque<String> = (0..5).map(|i| i.to_string()).collect();
        d.push_front("f".into());
        d.pop_back();
        let before = d.clone();
        let r = catch_unwind(AssertUnwindSafe(|| {
            let _ = d.par_drain(range);
        }));
        let message = common::panic_message(&*r.expect_err("a bad range panics"));
        assert!(message.contains("range"), "{range:?}: {message}");
        assert_eq!(d, before);
    }

    let text = "aé日";
    let bad_string_ranges: [(Bounds, &str); 4] = [
        (
            (Bound::Included(2), Bound::Unbounded),
            "start 2 is not on a char boundary",
        ),
        (
            (Bound::Unbounded, Bound::Excluded(4)),
            "end 4 is not on a char boundary",
        ),
        (
            (Bound::Included(3), Bound::Excluded(1)),
            "start 3 is past its end 1",
        ),
        (
            (Bound::Unbounded, Bound::Included(6)),
            "end 7 is past the string's length 6",
        ),
    ];
    for (range, expected) in bad_string_ranges {
        let mut s = String::from(text);
        let r = catch_unwind(AssertUnwindSafe(|| {
            let _ = s.par_drain(range);
        }));
        let message = common::panic_message(&*r.expect_err("a bad range panics"));
        assert!(message.contains(expected), "{range:?}: {message}");
        assert_eq!(s, text);
    }
}
