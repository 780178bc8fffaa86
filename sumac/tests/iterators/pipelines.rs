//! Random pipelines of chained adaptors over a random source, against the same pipeline
//! on `std`'s sequential iterators, on the forced-split pool and the 1- and 2-thread
//! stress pools.
//!
//! A pipeline is a source, up to three indexed steps, up to two unindexed steps, an
//! optional order-free tail (`take_any_while`, `skip_any_while`, `take_any`, `skip_any`)
//! and a consumer. The `std` side interprets the steps on a boxed `dyn Iterator`. Parallel
//! iterators are not object safe and one generic instantiation per combination of steps
//! would be far too many, so the parallel side is built from fixed *levels*: each level
//! holds every adaptor of its kind (rev through an `Either`), and the level's step sets
//! the parameters of its own adaptor while every other adaptor of the level gets
//! parameters that make it the identity (`skip(0)`, `take(usize::MAX)`, `step_by(1)`,
//! `chunks(1)`, a chain or interleave with nothing, a zip with a longer range or slice,
//! a `filter` that keeps everything...). So each parallel pipeline is the random one with
//! identity adaptors in between, which the comparison with `std` also checks.
use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sumac::iter::Either;
use sumac::prelude::*;

// ---------------------------------------------------------------------------------------
// Pipeline descriptions.

#[derive(Clone, Debug)]
enum Source {
    /// `Vec<i32>` by value.
    Vec(Vec<i32>),
    /// A slice by reference, copied.
    Slice(Vec<i32>),
    /// An integer range.
    Range(i32, i32),
    /// `par_chunks(k)` of a slice, each chunk summed.
    Chunks(Vec<i32>, usize),
}

#[derive(Clone, Debug)]
enum IStep {
    Map(i32),
    /// `enumerate` then `x + k * i`.
    Enumerate(i32),
    Rev,
    Skip(usize),
    Take(usize),
    StepBy(usize),
    /// `zip(start..start + len)` then `x + y`.
    ZipRange(i32, usize),
    /// `zip(&slice)` then `x - y`.
    ZipSlice(Vec<i32>),
    Chain(Vec<i32>),
    /// `chunks(k)` then the (wrapping) sum of each chunk.
    Chunks(usize),
    Interleave(Vec<i32>),
    MinLen(usize),
    MaxLen(usize),
    Inspect,
}

#[derive(Clone, Debug)]
enum UStep {
    /// Keeps `x` unless `x.rem_euclid(m) == 0`.
    Filter(i32),
    /// `Some(x / 2)` unless `x.rem_euclid(m) == 1`.
    FilterMap(i32),
    /// `x, x + 1, ..` (`k` items) as a `Vec`.
    FlatMap(usize),
    /// `x, x - 1, ..` (`k` items) as an iterator.
    FlatMapIter(usize),
    /// `map` to `vec![x ^ 1; k]` then `flatten`.
    Flatten(usize),
    PanicFuse,
    /// `*x = x * 5 + c`.
    Update(i32),
    Map(i32),
    Inspect,
    /// Unindexed `chain` with a slice.
    Chain(Vec<i32>),
}

/// An order-free last step: only its properties are checked.
#[derive(Clone, Debug)]
enum Tail {
    None,
    TakeAnyWhile(i32),
    SkipAnyWhile(i32),
    TakeAny(usize),
    SkipAny(usize),
}

/// `x.rem_euclid(m) == r`.
#[derive(Clone, Copy, Debug)]
struct Pred(i32, i32);

impl Pred {
    fn test(self, x: i32) -> bool {
        x.rem_euclid(self.0) == self.1
    }
}

#[derive(Clone, Debug)]
enum Consumer {
    Collect,
    Sum,
    Count,
    Min,
    Max,
    Reduce,
    FoldReduce,
    FindFirst(Pred),
    FindLast(Pred),
    FindAny(Pred),
    PositionFirst(Pred),
    PositionLast(Pred),
    PositionAny(Pred),
    Any(Pred),
    All(Pred),
    /// `eq` with the expected items, and with them changed at one place.
    Eq(usize),
    CollectIntoVec,
    Unzip,
    Partition(Pred),
    Len,
}

#[derive(Clone, Debug)]
struct Pipeline {
    source: Source,
    /// Levels of indexed steps, each in slot order without two of the same kind.
    indexed: Vec<Vec<IStep>>,
    /// Levels of unindexed steps, likewise.
    unindexed: Vec<Vec<UStep>>,
    tail: Tail,
    consumer: Consumer,
}

// ---------------------------------------------------------------------------------------
// Strategies.

fn items(max: usize) -> impl Strategy<Value = Vec<i32>> {
    prop::collection::vec(-1000i32..1000, 0..max)
}

fn source() -> impl Strategy<Value = Source> {
    prop_oneof![
        items(200).prop_map(Source::Vec),
        items(200).prop_map(Source::Slice),
        (-300i32..300, 0i32..300).prop_map(|(a, n)| Source::Range(a, a + n)),
        (items(300), 1usize..6).prop_map(|(v, k)| Source::Chunks(v, k)),
    ]
}

fn istep() -> impl Strategy<Value = IStep> {
    prop_oneof![
        (-50i32..50).prop_map(IStep::Map),
        (-3i32..4).prop_map(IStep::Enumerate),
        Just(IStep::Rev),
        (0usize..120).prop_map(IStep::Skip),
        (0usize..120).prop_map(IStep::Take),
        (1usize..6).prop_map(IStep::StepBy),
        (-100i32..100, 0usize..250).prop_map(|(s, n)| IStep::ZipRange(s, n)),
        items(250).prop_map(IStep::ZipSlice),
        items(60).prop_map(IStep::Chain),
        (1usize..5).prop_map(IStep::Chunks),
        items(60).prop_map(IStep::Interleave),
        (1usize..40).prop_map(IStep::MinLen),
        (1usize..6).prop_map(IStep::MaxLen),
        Just(IStep::Inspect),
    ]
}

fn ustep() -> impl Strategy<Value = UStep> {
    prop_oneof![
        (2i32..5).prop_map(UStep::Filter),
        (2i32..5).prop_map(UStep::FilterMap),
        (0usize..4).prop_map(UStep::FlatMap),
        (0usize..4).prop_map(UStep::FlatMapIter),
        (0usize..3).prop_map(UStep::Flatten),
        Just(UStep::PanicFuse),
        (-9i32..9).prop_map(UStep::Update),
        (-9i32..9).prop_map(UStep::Map),
        Just(UStep::Inspect),
        items(40).prop_map(UStep::Chain),
    ]
}

fn tail() -> impl Strategy<Value = Tail> {
    prop_oneof![
        4 => Just(Tail::None),
        1 => (-500i32..1000).prop_map(Tail::TakeAnyWhile),
        1 => (-1000i32..500).prop_map(Tail::SkipAnyWhile),
        1 => (0usize..200).prop_map(Tail::TakeAny),
        1 => (0usize..200).prop_map(Tail::SkipAny),
    ]
}

fn pred() -> impl Strategy<Value = Pred> {
    (1i32..12).prop_flat_map(|m| (Just(m), 0..m).prop_map(|(m, r)| Pred(m, r)))
}

fn consumer() -> impl Strategy<Value = Consumer> {
    prop_oneof![
        3 => Just(Consumer::Collect),
        1 => Just(Consumer::Sum),
        1 => Just(Consumer::Count),
        1 => Just(Consumer::Min),
        1 => Just(Consumer::Max),
        1 => Just(Consumer::Reduce),
        1 => Just(Consumer::FoldReduce),
        1 => pred().prop_map(Consumer::FindFirst),
        1 => pred().prop_map(Consumer::FindLast),
        1 => pred().prop_map(Consumer::FindAny),
        1 => pred().prop_map(Consumer::PositionFirst),
        1 => pred().prop_map(Consumer::PositionLast),
        1 => pred().prop_map(Consumer::PositionAny),
        1 => pred().prop_map(Consumer::Any),
        1 => pred().prop_map(Consumer::All),
        1 => (0usize..1000).prop_map(Consumer::Eq),
        1 => Just(Consumer::CollectIntoVec),
        1 => Just(Consumer::Unzip),
        1 => pred().prop_map(Consumer::Partition),
        1 => Just(Consumer::Len),
    ]
}

fn pipeline() -> impl Strategy<Value = Pipeline> {
    (
        source(),
        prop::collection::vec(level(istep(), islot), 0..=INDEXED_LEVELS),
        prop::collection::vec(level(ustep(), uslot), 0..=UNINDEXED_LEVELS),
        tail(),
        consumer(),
    )
        .prop_map(|(source, indexed, unindexed, tail, consumer)| Pipeline {
            source,
            indexed,
            unindexed,
            tail,
            consumer,
        })
}

/// Up to four steps of distinct kinds, in the order of their slots in a level.
fn level<S: Strategy>(
    step: S,
    slot: fn(&S::Value) -> usize,
) -> impl Strategy<Value = Vec<S::Value>> {
    prop::collection::vec(step, 1..5).prop_map(move |mut v| {
        v.sort_by_key(slot);
        v.dedup_by_key(|s| slot(s));
        v
    })
}

fn islot(s: &IStep) -> usize {
    match s {
        IStep::Rev => 0,
        IStep::Map(_) => 1,
        IStep::Enumerate(_) => 2,
        IStep::Skip(_) => 3,
        IStep::Take(_) => 4,
        IStep::StepBy(_) => 5,
        IStep::ZipRange(..) => 6,
        IStep::ZipSlice(_) => 7,
        IStep::Chain(_) => 8,
        IStep::Chunks(_) => 9,
        IStep::Interleave(_) => 10,
        IStep::MinLen(_) => 11,
        IStep::MaxLen(_) => 12,
        IStep::Inspect => 13,
    }
}

fn uslot(s: &UStep) -> usize {
    match s {
        UStep::Filter(_) => 0,
        UStep::FilterMap(_) => 1,
        UStep::FlatMap(_) => 2,
        UStep::FlatMapIter(_) => 3,
        UStep::Flatten(_) => 4,
        UStep::PanicFuse => 5,
        UStep::Update(_) => 6,
        UStep::Map(_) => 7,
        UStep::Inspect => 8,
        UStep::Chain(_) => 9,
    }
}

/// A step's parameter in a level: `$pat => $val` for the level's step of that kind, else
/// `$default` (which makes the adaptor the identity).
macro_rules! knob {
    ($steps:expr, $pat:pat => $val:expr, $default:expr) => {
        $steps
            .iter()
            .find_map(|s| match s {
                $pat => Some($val),
                _ => None,
            })
            .unwrap_or($default)
    };
}

const INDEXED_LEVELS: usize = 1;
const UNINDEXED_LEVELS: usize = 1;

// ---------------------------------------------------------------------------------------
// Closures, made by non-generic functions so that their types stay short whatever the
// iterator they end up in.

fn chunk_sum(c: &[i32]) -> i32 {
    c.iter().fold(0i32, |a, &b| a.wrapping_add(b))
}

fn chunk_sum_vec() -> impl Fn(Vec<i32>) -> i32 + Send + Sync + Copy {
    |c| chunk_sum(&c)
}

fn chunk_sum_slice() -> impl Fn(&[i32]) -> i32 + Send + Sync + Copy {
    chunk_sum
}

fn map_op(c: Option<i32>) -> impl Fn(i32) -> i32 + Send + Sync + Copy {
    move |x| match c {
        Some(c) => x.wrapping_mul(3).wrapping_add(c),
        None => x,
    }
}

fn enumerate_op(k: i32) -> impl Fn((usize, i32)) -> i32 + Send + Sync + Copy {
    move |(i, x)| x.wrapping_add(k.wrapping_mul(i as i32))
}

fn zip_add(k: i32) -> impl Fn((i32, i32)) -> i32 + Send + Sync + Copy {
    move |(x, y)| x.wrapping_add(k.wrapping_mul(y))
}

fn zip_sub() -> impl Fn((i32, &i32)) -> i32 + Send + Sync + Copy {
    |(x, &y)| x.wrapping_sub(y)
}

fn counting(counter: &AtomicUsize) -> impl Fn(&i32) + Send + Sync + Copy + '_ {
    move |_| {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

fn filter_op(m: Option<i32>) -> impl Fn(&i32) -> bool + Send + Sync + Copy {
    move |&x| m.is_none_or(|m| x.rem_euclid(m) != 0)
}

fn filter_map_op(m: Option<i32>) -> impl Fn(i32) -> Option<i32> + Send + Sync + Copy {
    move |x| match m {
        None => Some(x),
        Some(m) if x.rem_euclid(m) == 1 => None,
        Some(_) => Some(x / 2),
    }
}

fn flat_map_op(k: Option<usize>) -> impl Fn(i32) -> Vec<i32> + Send + Sync + Copy {
    move |x| match k {
        None => vec![x],
        Some(k) => (0..k as i32).map(|j| x.wrapping_add(j)).collect(),
    }
}

fn flat_map_iter_op(k: Option<usize>) -> impl Fn(i32) -> Down + Send + Sync + Copy {
    move |x| Down {
        x,
        j: 0,
        k: k.unwrap_or(1) as i32,
    }
}

/// `x, x - 1, ..`, `k` items.
struct Down {
    x: i32,
    j: i32,
    k: i32,
}

impl Iterator for Down {
    type Item = i32;
    fn next(&mut self) -> Option<i32> {
        (self.j < self.k).then(|| {
            self.j += 1;
            self.x.wrapping_sub(self.j - 1)
        })
    }
}

fn flatten_op(k: Option<usize>) -> impl Fn(i32) -> Vec<i32> + Send + Sync + Copy {
    move |x| match k {
        None => vec![x],
        Some(k) => vec![x ^ 1; k],
    }
}

fn update_op(c: Option<i32>) -> impl Fn(&mut i32) + Send + Sync + Copy {
    move |x| {
        if let Some(c) = c {
            *x = x.wrapping_mul(5).wrapping_add(c);
        }
    }
}

fn tail_pred(t: i32) -> impl Fn(&i32) -> bool + Send + Sync + Copy {
    move |&x| x < t
}

// ---------------------------------------------------------------------------------------
// The sequential side.

type Seq<'a> = Box<dyn Iterator<Item = i32> + 'a>;

fn seq_source(source: &Source) -> Seq<'_> {
    match source {
        Source::Vec(v) => Box::new(v.clone().into_iter()),
        Source::Slice(v) => Box::new(v.iter().copied()),
        Source::Range(a, b) => Box::new(*a..*b),
        Source::Chunks(v, k) => Box::new(v.chunks(*k).map(chunk_sum)),
    }
}

/// Rayon's `interleave`: `a0, b0, a1, b1, ..`, then what is left of the longer one.
fn interleaved(a: Vec<i32>, b: &[i32]) -> Vec<i32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter(), b.iter().copied());
    loop {
        match (a.next(), b.next()) {
            (None, None) => return out,
            (x, y) => out.extend(x.into_iter().chain(y)),
        }
    }
}

fn seq_istep<'a>(it: Seq<'a>, step: &'a IStep, counter: &'a AtomicUsize) -> Seq<'a> {
    match step {
        IStep::Map(c) => Box::new(it.map(map_op(Some(*c)))),
        IStep::Enumerate(k) => Box::new(it.enumerate().map(enumerate_op(*k))),
        IStep::Rev => Box::new(it.collect::<Vec<_>>().into_iter().rev()),
        IStep::Skip(n) => Box::new(it.skip(*n)),
        IStep::Take(n) => Box::new(it.take(*n)),
        IStep::StepBy(k) => Box::new(it.step_by(*k)),
        IStep::ZipRange(s, n) => Box::new(it.zip(*s..*s + *n as i32).map(zip_add(1))),
        IStep::ZipSlice(v) => Box::new(it.zip(v).map(zip_sub())),
        IStep::Chain(v) => Box::new(it.chain(v.iter().copied())),
        IStep::Chunks(k) => {
            let v: Vec<i32> = it.collect();
            Box::new(v.chunks(*k).map(chunk_sum).collect::<Vec<_>>().into_iter())
        }
        IStep::Interleave(v) => Box::new(interleaved(it.collect(), v).into_iter()),
        IStep::MinLen(_) | IStep::MaxLen(_) => it,
        IStep::Inspect => Box::new(it.inspect(counting(counter))),
    }
}

fn seq_ustep<'a>(it: Seq<'a>, step: &'a UStep, counter: &'a AtomicUsize) -> Seq<'a> {
    match step {
        UStep::Filter(m) => Box::new(it.filter(filter_op(Some(*m)))),
        UStep::FilterMap(m) => Box::new(it.filter_map(filter_map_op(Some(*m)))),
        UStep::FlatMap(k) => Box::new(it.flat_map(flat_map_op(Some(*k)))),
        UStep::FlatMapIter(k) => Box::new(it.flat_map(flat_map_iter_op(Some(*k)))),
        UStep::Flatten(k) => Box::new(it.flat_map(flatten_op(Some(*k)))),
        UStep::PanicFuse => it,
        UStep::Update(c) => {
            let update = update_op(Some(*c));
            Box::new(it.map(move |mut x| {
                update(&mut x);
                x
            }))
        }
        UStep::Map(c) => Box::new(it.map(map_op(Some(*c)))),
        UStep::Inspect => Box::new(it.inspect(counting(counter))),
        UStep::Chain(v) => Box::new(it.chain(v.iter().copied())),
    }
}

/// The items of the pipeline before its tail and consumer.
fn seq_items(p: &Pipeline) -> Vec<i32> {
    let counter = AtomicUsize::new(0);
    let mut it = seq_source(&p.source);
    for step in p.indexed.iter().flatten() {
        it = seq_istep(it, step, &counter);
    }
    for step in p.unindexed.iter().flatten() {
        it = seq_ustep(it, step, &counter);
    }
    it.collect()
}

// ---------------------------------------------------------------------------------------
// The parallel side: fixed levels, each with every adaptor of its kind.

/// Zeros for a zip with a slice that must change nothing.
fn zeros() -> &'static [i32] {
    static ZEROS: OnceLock<Vec<i32>> = OnceLock::new();
    ZEROS.get_or_init(|| vec![0; 1 << 12])
}

fn par_source(source: &Source) -> impl IndexedParallelIterator<Item = i32> + '_ {
    match source {
        Source::Vec(v) => Either::Left(v.clone().into_par_iter()),
        Source::Slice(v) => Either::Right(Either::Left(v.par_iter().copied())),
        Source::Range(a, b) => Either::Right(Either::Right(Either::Left((*a..*b).into_par_iter()))),
        Source::Chunks(v, k) => Either::Right(Either::Right(Either::Right(
            v.par_chunks(*k).map(chunk_sum_slice()),
        ))),
    }
}

fn ilevel<'a, P>(
    p: P,
    steps: &'a [IStep],
    counter: &'a AtomicUsize,
) -> impl IndexedParallelIterator<Item = i32> + 'a
where
    P: IndexedParallelIterator<Item = i32> + 'a,
{
    use IStep as S;
    let p = if steps.iter().any(|s| matches!(s, S::Rev)) {
        Either::Left(p.rev())
    } else {
        Either::Right(p)
    };
    let (zip_start, zip_end, zip_k) =
        knob!(steps, S::ZipRange(s, n) => (*s, *s + *n as i32, 1), (0, i32::MAX, 0));
    let p = p
        .map(map_op(knob!(steps, S::Map(c) => Some(*c), None)))
        .enumerate()
        .map(enumerate_op(knob!(steps, S::Enumerate(k) => *k, 0)))
        .skip(knob!(steps, S::Skip(n) => *n, 0))
        .take(knob!(steps, S::Take(n) => *n, usize::MAX))
        .step_by(knob!(steps, S::StepBy(k) => *k, 1))
        .zip(zip_start..zip_end)
        .map(zip_add(zip_k));
    let other: &[i32] = knob!(steps, S::ZipSlice(v) => v.as_slice(), &zeros()[..p.len()]);
    let chained: &[i32] = knob!(steps, S::Chain(v) => v.as_slice(), &[]);
    let interleaved: &[i32] = knob!(steps, S::Interleave(v) => v.as_slice(), &[]);
    p.zip(other)
        .map(zip_sub())
        .chain(chained.par_iter().copied())
        .chunks(knob!(steps, S::Chunks(k) => *k, 1))
        .map(chunk_sum_vec())
        .interleave(interleaved.par_iter().copied())
        .with_min_len(knob!(steps, S::MinLen(n) => *n, 1))
        .with_max_len(knob!(steps, S::MaxLen(n) => *n, usize::MAX))
        .inspect(counting(counter))
}

fn ulevel<'a, P>(
    p: P,
    steps: &'a [UStep],
    counter: &'a AtomicUsize,
) -> impl ParallelIterator<Item = i32> + 'a
where
    P: ParallelIterator<Item = i32> + 'a,
{
    use UStep as S;
    let chained: &[i32] = knob!(steps, S::Chain(v) => v.as_slice(), &[]);
    p.filter(filter_op(knob!(steps, S::Filter(m) => Some(*m), None)))
        .filter_map(filter_map_op(
            knob!(steps, S::FilterMap(m) => Some(*m), None),
        ))
        .flat_map(flat_map_op(knob!(steps, S::FlatMap(k) => Some(*k), None)))
        .flat_map_iter(flat_map_iter_op(
            knob!(steps, S::FlatMapIter(k) => Some(*k), None),
        ))
        .map(flatten_op(knob!(steps, S::Flatten(k) => Some(*k), None)))
        .flatten()
        .panic_fuse()
        .update(update_op(knob!(steps, S::Update(c) => Some(*c), None)))
        .map(map_op(knob!(steps, S::Map(c) => Some(*c), None)))
        .inspect(counting(counter))
        .chain(chained.par_iter().copied())
}

/// The steps of level `i` (none if the pipeline has fewer levels).
fn level_steps<S>(levels: &[Vec<S>], i: usize) -> &[S] {
    levels.get(i).map_or(&[], Vec::as_slice)
}

fn par_indexed<'a>(
    p: &'a Pipeline,
    counter: &'a AtomicUsize,
) -> impl IndexedParallelIterator<Item = i32> + 'a {
    let it = par_source(&p.source);
    ilevel(it, level_steps(&p.indexed, 0), counter)
}

fn par_unindexed<'a>(
    p: &'a Pipeline,
    counter: &'a AtomicUsize,
) -> impl ParallelIterator<Item = i32> + 'a {
    let it = par_indexed(p, counter);
    ulevel(it, level_steps(&p.unindexed, 0), counter)
}

/// The whole pipeline with its tail (not `Tail::None`), collected.
fn par_tail(p: &Pipeline) -> Vec<i32> {
    let counter = AtomicUsize::new(0);
    let it = par_unindexed(p, &counter);
    match p.tail {
        Tail::None => unreachable!(),
        Tail::TakeAnyWhile(t) => Either::Left(it.take_any_while(tail_pred(t))),
        Tail::SkipAnyWhile(t) => Either::Right(Either::Left(it.skip_any_while(tail_pred(t)))),
        Tail::TakeAny(n) => Either::Right(Either::Right(Either::Left(it.take_any(n)))),
        Tail::SkipAny(n) => Either::Right(Either::Right(Either::Right(it.skip_any(n)))),
    }
    .collect()
}

// ---------------------------------------------------------------------------------------
// Checks.

fn is_subsequence(sub: &[i32], of: &[i32]) -> bool {
    let mut of = of.iter();
    sub.iter().all(|x| of.any(|y| y == x))
}

fn check_tail(got: &[i32], before: &[i32], tail: &Tail) -> Result<(), TestCaseError> {
    prop_assert!(
        is_subsequence(got, before),
        "{:?} is not a subsequence of {:?}",
        got,
        before
    );
    match *tail {
        Tail::None => unreachable!(),
        Tail::TakeAnyWhile(t) => {
            prop_assert!(got.iter().all(|&x| x < t));
            if before.iter().all(|&x| x < t) {
                prop_assert_eq!(got, before);
            }
        }
        Tail::SkipAnyWhile(t) => {
            let failing: Vec<i32> = before.iter().copied().filter(|&x| x >= t).collect();
            let got_failing: Vec<i32> = got.iter().copied().filter(|&x| x >= t).collect();
            prop_assert_eq!(got_failing, failing);
        }
        Tail::TakeAny(n) => prop_assert_eq!(got.len(), n.min(before.len())),
        Tail::SkipAny(n) => prop_assert_eq!(got.len(), before.len() - n.min(before.len())),
    }
    Ok(())
}

/// The consumers of every parallel iterator.
fn consume<I>(it: I, consumer: &Consumer, expected: &[i32]) -> Result<(), TestCaseError>
where
    I: ParallelIterator<Item = i32>,
{
    let seq = || expected.iter().copied();
    match *consumer {
        Consumer::Sum => prop_assert_eq!(
            it.map(i64::from).sum::<i64>(),
            seq().map(i64::from).sum::<i64>()
        ),
        Consumer::Count => prop_assert_eq!(it.count(), expected.len()),
        Consumer::Min => prop_assert_eq!(it.min(), seq().min()),
        Consumer::Max => prop_assert_eq!(it.max(), seq().max()),
        Consumer::Reduce => prop_assert_eq!(
            it.reduce(|| 0, i32::wrapping_add),
            seq().fold(0, i32::wrapping_add)
        ),
        Consumer::FoldReduce => {
            let got = it
                .fold(Vec::new, |mut v, x| {
                    v.push(x);
                    v
                })
                .reduce(Vec::new, |mut a, mut b| {
                    a.append(&mut b);
                    a
                });
            prop_assert_eq!(got, expected);
        }
        Consumer::FindFirst(p) => {
            prop_assert_eq!(it.find_first(|&x| p.test(x)), seq().find(|&x| p.test(x)))
        }
        Consumer::FindLast(p) => prop_assert_eq!(
            it.find_last(|&x| p.test(x)),
            seq().rev().find(|&x| p.test(x))
        ),
        Consumer::FindAny(p) => match it.find_any(|&x| p.test(x)) {
            Some(x) => prop_assert!(p.test(x) && expected.contains(&x)),
            None => prop_assert!(!seq().any(|x| p.test(x))),
        },
        Consumer::Any(p) => prop_assert_eq!(it.any(|x| p.test(x)), seq().any(|x| p.test(x))),
        Consumer::All(p) => prop_assert_eq!(it.all(|x| p.test(x)), seq().all(|x| p.test(x))),
        Consumer::Unzip => {
            let (a, b): (Vec<i32>, Vec<i32>) = it.map(|x| (x, x ^ 1)).unzip();
            prop_assert_eq!(a, expected);
            prop_assert_eq!(b, seq().map(|x| x ^ 1).collect::<Vec<_>>());
        }
        Consumer::Partition(p) => {
            let got: (Vec<i32>, Vec<i32>) = it.partition(|&x| p.test(x));
            let want: (Vec<i32>, Vec<i32>) = seq().partition(|&x| p.test(x));
            prop_assert_eq!(got, want);
        }
        // `Collect`, and the indexed-only consumers on an unindexed pipeline.
        _ => prop_assert_eq!(it.collect::<Vec<i32>>(), expected),
    }
    Ok(())
}

/// The consumers of indexed parallel iterators, then those of every one.
fn consume_indexed<I>(it: I, consumer: &Consumer, expected: &[i32]) -> Result<(), TestCaseError>
where
    I: IndexedParallelIterator<Item = i32>,
{
    let seq = || expected.iter().copied();
    match *consumer {
        Consumer::PositionFirst(p) => prop_assert_eq!(
            it.position_first(|x| p.test(x)),
            seq().position(|x| p.test(x))
        ),
        Consumer::PositionLast(p) => prop_assert_eq!(
            it.position_last(|x| p.test(x)),
            expected.iter().rposition(|&x| p.test(x))
        ),
        Consumer::PositionAny(p) => match it.position_any(|x| p.test(x)) {
            Some(i) => prop_assert!(i < expected.len() && p.test(expected[i])),
            None => prop_assert!(!seq().any(|x| p.test(x))),
        },
        Consumer::Eq(i) => {
            let mut other = expected.to_vec();
            let equal = match i % 3 {
                0 => true,
                1 if !other.is_empty() => {
                    let at = i % other.len();
                    other[at] = other[at].wrapping_add(1);
                    false
                }
                _ => {
                    other.push(0);
                    false
                }
            };
            prop_assert_eq!(it.eq(other.par_iter().copied()), equal);
        }
        Consumer::CollectIntoVec => {
            let mut v = vec![7; 5];
            it.collect_into_vec(&mut v);
            prop_assert_eq!(v, expected);
        }
        Consumer::Len => prop_assert_eq!(it.len(), expected.len()),
        _ => consume(it, consumer, expected)?,
    }
    Ok(())
}

/// The forced-split pool, then the 1- and 2-thread stress pools.
fn pools() -> impl Iterator<Item = &'static sumac::ThreadPool> {
    std::iter::once(common::forced_split_pool()).chain(&common::stress_pools()[..2])
}

fn check_pipeline(p: &Pipeline) -> Result<(), TestCaseError> {
    let before = seq_items(p);
    for pool in pools() {
        pool.install(|| {
            if !matches!(p.tail, Tail::None) {
                return check_tail(&par_tail(p), &before, &p.tail);
            }
            let counter = AtomicUsize::new(0);
            if p.unindexed.is_empty() {
                consume_indexed(par_indexed(p, &counter), &p.consumer, &before)
            } else {
                consume(par_unindexed(p, &counter), &p.consumer, &before)
            }
        })?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn pipelines_match_std(p in pipeline()) {
        check_pipeline(&p)?;
    }
}

// ---------------------------------------------------------------------------------------
// Owned items and a panic in a `map`: every item dropped exactly once.

/// An owned item: a heap string and a drop token.
struct Owned {
    text: String,
    _token: common::DropToken,
}

fn owned_items(counter: &common::DropCounter, n: usize) -> Vec<Owned> {
    (0..n)
        .map(|i| Owned {
            text: i.to_string(),
            _token: counter.token(),
        })
        .collect()
}

/// Panics on the item whose text is `at`.
fn bomb(at: usize) -> impl Fn(Owned) -> Owned + Send + Sync + Copy {
    move |item| {
        if item.text == at.to_string() {
            panic!("bomb at {at}");
        }
        item
    }
}

/// Runs pipeline `which` over `n` owned items with a panic at item `at`, and checks that
/// the panic came out (when `at` is reached) and that every item was dropped once.
fn check_drops(which: usize, n: usize, at: usize, k: usize) -> Result<(), TestCaseError> {
    let counter = common::DropCounter::new();
    let v = owned_items(&counter, n);
    let other = owned_items(&counter, n / 2);
    let result = common::forced_split_pool().install(|| {
        catch_unwind(AssertUnwindSafe(|| match which {
            0 => v.into_par_iter().map(bomb(at)).collect::<Vec<_>>().len(),
            1 => v
                .into_par_iter()
                .rev()
                .skip(k)
                .map(bomb(at))
                .filter(|o| o.text.len() % 2 == 0)
                .collect::<Vec<_>>()
                .len(),
            2 => v
                .into_par_iter()
                .chain(other)
                .step_by(k.max(1))
                .map(bomb(at))
                .map(|o| o.text.len())
                .sum::<usize>(),
            3 => v
                .into_par_iter()
                .zip(other)
                .map(|(a, _b)| a)
                .map(bomb(at))
                .flat_map_iter(|o| std::iter::repeat_n(o.text, 2))
                .count(),
            4 => v
                .into_par_iter()
                .chunks(k.max(1))
                .map(|c| c.into_iter().map(bomb(at)).count())
                .sum::<usize>(),
            5 => v
                .into_par_iter()
                .enumerate()
                .map(|(_, o)| bomb(at)(o))
                .panic_fuse()
                .take(k * 10)
                .collect::<Vec<_>>()
                .len(),
            _ => v
                .into_par_iter()
                .interleave(other)
                .map(bomb(at))
                .fold(Vec::new, |mut acc, o| {
                    acc.push(o);
                    acc
                })
                .map(|acc| acc.len())
                .sum::<usize>(),
        }))
    });
    // The pipeline's result (items included) is dropped by now.
    // Pipelines 0, 4 and 6 map every item of `v`: the panic must fire when `at < n`.
    let reached = at < n && matches!(which, 0 | 4 | 6);
    match result {
        Ok(_) => prop_assert!(!reached, "the panic at {} of {} was lost", at, n),
        Err(payload) => prop_assert_eq!(common::panic_message(&*payload), format!("bomb at {at}")),
    }
    prop_assert_eq!(counter.dropped(), counter.created());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn panicking_pipelines_drop_every_item_once(
        which in 0usize..7,
        n in 0usize..200,
        at in 0usize..220,
        k in 0usize..6,
    ) {
        check_drops(which, n, at, k)?;
    }
}

/// A panic inside the pipeline's range must come out.
#[test]
fn panic_in_range_propagates() {
    let counter = common::DropCounter::new();
    let v = owned_items(&counter, 100);
    let result = common::forced_split_pool().install(|| {
        catch_unwind(AssertUnwindSafe(|| {
            v.into_par_iter().map(bomb(57)).collect::<Vec<_>>()
        }))
    });
    assert!(result.is_err());
    assert_eq!(counter.dropped(), 100);
}

// ---------------------------------------------------------------------------------------
// Two indexed levels, the second with its slots in the opposite order (so that every two
// kinds of indexed steps meet in both orders), collected.

fn ilevel_reversed<'a, P>(
    p: P,
    steps: &'a [IStep],
    counter: &'a AtomicUsize,
) -> impl IndexedParallelIterator<Item = i32> + 'a
where
    P: IndexedParallelIterator<Item = i32> + 'a,
{
    use IStep as S;
    let chained: &[i32] = knob!(steps, S::Chain(v) => v.as_slice(), &[]);
    let interleaved: &[i32] = knob!(steps, S::Interleave(v) => v.as_slice(), &[]);
    let p = p
        .inspect(counting(counter))
        .with_max_len(knob!(steps, S::MaxLen(n) => *n, usize::MAX))
        .with_min_len(knob!(steps, S::MinLen(n) => *n, 1))
        .interleave(interleaved.par_iter().copied())
        .chunks(knob!(steps, S::Chunks(k) => *k, 1))
        .map(chunk_sum_vec())
        .chain(chained.par_iter().copied());
    let other: &[i32] = knob!(steps, S::ZipSlice(v) => v.as_slice(), &zeros()[..p.len()]);
    let (zip_start, zip_end, zip_k) =
        knob!(steps, S::ZipRange(s, n) => (*s, *s + *n as i32, 1), (0, i32::MAX, 0));
    let p = p
        .zip(other)
        .map(zip_sub())
        .zip(zip_start..zip_end)
        .map(zip_add(zip_k))
        .step_by(knob!(steps, S::StepBy(k) => *k, 1))
        .take(knob!(steps, S::Take(n) => *n, usize::MAX))
        .skip(knob!(steps, S::Skip(n) => *n, 0))
        .enumerate()
        .map(enumerate_op(knob!(steps, S::Enumerate(k) => *k, 0)))
        .map(map_op(knob!(steps, S::Map(c) => Some(*c), None)));
    if steps.iter().any(|s| matches!(s, S::Rev)) {
        Either::Left(p.rev())
    } else {
        Either::Right(p)
    }
}

fn check_two_levels(source: &Source, a: &[IStep], b: &[IStep]) -> Result<(), TestCaseError> {
    let counter = AtomicUsize::new(0);
    let mut it = seq_source(source);
    for step in a.iter().chain(b) {
        it = seq_istep(it, step, &counter);
    }
    let expected: Vec<i32> = it.collect();
    for pool in pools() {
        pool.install(|| {
            let make = || ilevel_reversed(ilevel(par_source(source), a, &counter), b, &counter);
            prop_assert_eq!(make().len(), expected.len());
            prop_assert_eq!(make().collect::<Vec<_>>(), expected.clone());
            Ok(())
        })?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn two_indexed_levels_match_std(
        source in source(),
        a in level(istep(), islot),
        b in level(istep(), islot).prop_map(|mut v| {
            v.reverse();
            v
        }),
    ) {
        check_two_levels(&source, &a, &b)?;
    }
}
