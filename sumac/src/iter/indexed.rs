//! Position-preserving adaptors of indexed iterators: `enumerate`, `zip`, `rev`, `skip`,
//! `take`, `step_by`, `with_min_len`, `with_max_len`, `interleave`,
//! `interleave_shortest`. All of them work on producers.

use std::marker::PhantomData;

use super::plumbing::{Producer, ProducerCallback, UnindexedConsumer};
use super::{drive_indexed, IndexedParallelIterator, ParallelIterator};

/// `ParallelIterator` for an indexed adaptor: drive through the producer.
macro_rules! indexed_parallel_iterator {
    (impl<$($g:ident),*> $ty:ty, item = $item:ty, where $($bounds:tt)*) => {
        impl<$($g),*> ParallelIterator for $ty
        where
            $($bounds)*
        {
            type Item = $item;
            fn drive_unindexed<C: UnindexedConsumer<$item>>(self, consumer: C) -> C::Result {
                drive_indexed(self, consumer)
            }
            fn opt_len(&self) -> Option<usize> {
                Some(IndexedParallelIterator::len(self))
            }
        }
    };
}

// ------------------------------------------------------------------- enumerate

/// The iterator returned by [`IndexedParallelIterator::enumerate`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Enumerate<I> {
    base: I,
}

impl<I> Enumerate<I> {
    pub(super) fn new(base: I) -> Self {
        Enumerate { base }
    }
}

indexed_parallel_iterator!(impl<I> Enumerate<I>, item = (usize, I::Item),
    where I: IndexedParallelIterator);

impl<I: IndexedParallelIterator> IndexedParallelIterator for Enumerate<I> {
    fn len(&self) -> usize {
        self.base.len()
    }
    fn with_producer<CB: ProducerCallback<(usize, I::Item)>>(self, callback: CB) -> CB::Output {
        return self.base.with_producer(Callback { callback });

        struct Callback<CB> {
            callback: CB,
        }
        impl<T, CB: ProducerCallback<(usize, T)>> ProducerCallback<T> for Callback<CB> {
            type Output = CB::Output;
            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                self.callback
                    .callback(EnumerateProducer { base, offset: 0 })
            }
        }
    }
}

struct EnumerateProducer<P> {
    base: P,
    offset: usize,
}

impl<P: Producer> Producer for EnumerateProducer<P> {
    type Item = (usize, P::Item);
    type IntoIter = std::iter::Zip<std::ops::Range<usize>, P::IntoIter>;
    fn into_iter(self) -> Self::IntoIter {
        let base = self.base.into_iter();
        (self.offset..self.offset + base.len()).zip(base)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        (
            EnumerateProducer {
                base: l,
                offset: self.offset,
            },
            EnumerateProducer {
                base: r,
                offset: self.offset + index,
            },
        )
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
}

// ------------------------------------------------------------------------- zip

/// The iterator returned by [`IndexedParallelIterator::zip`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Zip<A, B> {
    a: A,
    b: B,
}

impl<A, B> Zip<A, B> {
    pub(super) fn new(a: A, b: B) -> Self {
        Zip { a, b }
    }
}

indexed_parallel_iterator!(impl<A, B> Zip<A, B>, item = (A::Item, B::Item),
    where A: IndexedParallelIterator, B: IndexedParallelIterator);

impl<A, B> IndexedParallelIterator for Zip<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator,
{
    fn len(&self) -> usize {
        self.a.len().min(self.b.len())
    }
    fn with_producer<CB>(self, callback: CB) -> CB::Output
    where
        CB: ProducerCallback<(A::Item, B::Item)>,
    {
        let len = self.len();
        return with_two_producers(self.a, self.b, ZipPair { callback, len });

        struct ZipPair<CB> {
            callback: CB,
            len: usize,
        }
        impl<TA, TB, CB: ProducerCallback<(TA, TB)>> PairCallback<TA, TB> for ZipPair<CB> {
            type Output = CB::Output;
            fn call<PA, PB>(self, a: PA, a_len: usize, b: PB, b_len: usize) -> CB::Output
            where
                PA: Producer<Item = TA>,
                PB: Producer<Item = TB>,
            {
                let (a, b) = (truncate(a, a_len, self.len), truncate(b, b_len, self.len));
                self.callback.callback(ZipProducer { a, b })
            }
        }
    }
}

/// Receives the producers of two indexed iterators, with their lengths (see
/// [`with_two_producers`]).
pub(super) trait PairCallback<TA, TB> {
    type Output;
    fn call<PA, PB>(self, a: PA, a_len: usize, b: PB, b_len: usize) -> Self::Output
    where
        PA: Producer<Item = TA>,
        PB: Producer<Item = TB>;
}

/// Hands the producers of `a` and `b` to `pair` (producers are only ever lent to a
/// callback, so two of them take two nested callbacks).
pub(super) fn with_two_producers<A, B, PC>(a: A, b: B, pair: PC) -> PC::Output
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator,
    PC: PairCallback<A::Item, B::Item>,
{
    let lens = (a.len(), b.len());
    return a.with_producer(CallbackA { pair, b, lens });

    struct CallbackA<PC, B> {
        pair: PC,
        b: B,
        lens: (usize, usize),
    }
    impl<TA, PC, B> ProducerCallback<TA> for CallbackA<PC, B>
    where
        B: IndexedParallelIterator,
        PC: PairCallback<TA, B::Item>,
    {
        type Output = PC::Output;
        fn callback<PA: Producer<Item = TA>>(self, a: PA) -> PC::Output {
            self.b.with_producer(CallbackB {
                pair: self.pair,
                a,
                lens: self.lens,
            })
        }
    }

    struct CallbackB<PC, PA> {
        pair: PC,
        a: PA,
        lens: (usize, usize),
    }
    impl<TB, PC, PA> ProducerCallback<TB> for CallbackB<PC, PA>
    where
        PA: Producer,
        PC: PairCallback<PA::Item, TB>,
    {
        type Output = PC::Output;
        fn callback<PB: Producer<Item = TB>>(self, b: PB) -> PC::Output {
            self.pair.call(self.a, self.lens.0, b, self.lens.1)
        }
    }
}

/// Builds one producer out of two of the same item type (chain, interleave), given
/// their lengths.
pub(super) trait JoinProducers {
    fn join<PA, PB>(a: PA, a_len: usize, b: PB, b_len: usize) -> impl Producer<Item = PA::Item>
    where
        PA: Producer,
        PB: Producer<Item = PA::Item>;
}

/// Hands `callback` the producer that `J` builds from the producers of `a` and `b`.
pub(super) fn with_joined_producers<J, A, B, CB>(a: A, b: B, callback: CB) -> CB::Output
where
    J: JoinProducers,
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
    CB: ProducerCallback<A::Item>,
{
    return with_two_producers(
        a,
        b,
        Joined::<J, CB> {
            callback,
            join: PhantomData,
        },
    );

    struct Joined<J, CB> {
        callback: CB,
        join: PhantomData<J>,
    }
    impl<T, J: JoinProducers, CB: ProducerCallback<T>> PairCallback<T, T> for Joined<J, CB> {
        type Output = CB::Output;
        fn call<PA, PB>(self, a: PA, a_len: usize, b: PB, b_len: usize) -> CB::Output
        where
            PA: Producer<Item = T>,
            PB: Producer<Item = T>,
        {
            self.callback.callback(J::join(a, a_len, b, b_len))
        }
    }
}

/// The number of items of two iterators one after the other (`what` names the adaptor
/// in the overflow panic).
pub(super) fn total_len(a: usize, b: usize, what: &str) -> usize {
    a.checked_add(b)
        .unwrap_or_else(|| panic!("{what} length overflows usize"))
}

/// The first `len` items of `p`, which has `p_len` (the rest is dropped).
fn truncate<P: Producer>(p: P, p_len: usize, len: usize) -> P {
    if p_len > len {
        p.split_at(len).0
    } else {
        p
    }
}

/// Two producers of the same length, side by side.
struct ZipProducer<A, B> {
    a: A,
    b: B,
}

impl<A: Producer, B: Producer> Producer for ZipProducer<A, B> {
    type Item = (A::Item, B::Item);
    type IntoIter = std::iter::Zip<A::IntoIter, B::IntoIter>;
    fn into_iter(self) -> Self::IntoIter {
        self.a.into_iter().zip(self.b.into_iter())
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (al, ar) = self.a.split_at(index);
        let (bl, br) = self.b.split_at(index);
        (ZipProducer { a: al, b: bl }, ZipProducer { a: ar, b: br })
    }
    fn min_len(&self) -> usize {
        self.a.min_len().max(self.b.min_len())
    }
    fn max_len(&self) -> usize {
        self.a.max_len().min(self.b.max_len())
    }
}

// ------------------------------------------------------------------------- rev

/// The iterator returned by [`IndexedParallelIterator::rev`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Rev<I> {
    base: I,
}

impl<I> Rev<I> {
    pub(super) fn new(base: I) -> Self {
        Rev { base }
    }
}

indexed_parallel_iterator!(impl<I> Rev<I>, item = I::Item, where I: IndexedParallelIterator);

impl<I: IndexedParallelIterator> IndexedParallelIterator for Rev<I> {
    fn len(&self) -> usize {
        self.base.len()
    }
    fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
        let len = self.base.len();
        return self.base.with_producer(Callback { callback, len });

        struct Callback<CB> {
            callback: CB,
            len: usize,
        }
        impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for Callback<CB> {
            type Output = CB::Output;
            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                self.callback.callback(RevProducer {
                    base,
                    len: self.len,
                })
            }
        }
    }
}

/// The `len` items of `base`, last first.
struct RevProducer<P> {
    base: P,
    len: usize,
}

impl<P: Producer> Producer for RevProducer<P> {
    type Item = P::Item;
    type IntoIter = std::iter::Rev<P::IntoIter>;
    fn into_iter(self) -> Self::IntoIter {
        self.base.into_iter().rev()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let len = self.len;
        let (l, r) = self.base.split_at(len - index);
        (
            RevProducer {
                base: r,
                len: index,
            },
            RevProducer {
                base: l,
                len: len - index,
            },
        )
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
}

// ------------------------------------------------------------------ skip, take

/// One side of a producer split at an index.
#[derive(Clone, Copy)]
enum Side {
    Lower,
    Upper,
}

/// Splits the base producer at `n` (at most its length) and hands on the `keep` side: the
/// upper one for `skip`, the lower one for `take`. The other side is dropped after the
/// callback returns, so a `Vec` source drops the items nobody asked for exactly once.
struct SplitAtCallback<CB> {
    callback: CB,
    n: usize,
    keep: Side,
}

impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for SplitAtCallback<CB> {
    type Output = CB::Output;
    fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
        let n = self.n;
        let (lower, upper) = base.split_at(n);
        match self.keep {
            Side::Lower => self.callback.callback(lower),
            // `skip` still produces the items it skips, as `std` and Rayon do, so that what
            // the adaptors before it do (their closures, their panics) happens for every
            // item: the skipped part runs as a spawned job beside the rest.
            Side::Upper if n == 0 => self.callback.callback(upper),
            Side::Upper => crate::in_place_scope(|scope| {
                scope.spawn(move |_| super::reduce::drain_producer(lower, n));
                self.callback.callback(upper)
            }),
        }
    }
}

/// The iterator returned by [`IndexedParallelIterator::skip`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Skip<I> {
    base: I,
    n: usize,
}

impl<I: IndexedParallelIterator> Skip<I> {
    pub(super) fn new(base: I, n: usize) -> Self {
        let n = n.min(base.len());
        Skip { base, n }
    }
}

indexed_parallel_iterator!(impl<I> Skip<I>, item = I::Item, where I: IndexedParallelIterator);

impl<I: IndexedParallelIterator> IndexedParallelIterator for Skip<I> {
    fn len(&self) -> usize {
        self.base.len() - self.n
    }
    fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
        self.base.with_producer(SplitAtCallback {
            callback,
            n: self.n,
            keep: Side::Upper,
        })
    }
}

/// The iterator returned by [`IndexedParallelIterator::take`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Take<I> {
    base: I,
    n: usize,
}

impl<I: IndexedParallelIterator> Take<I> {
    pub(super) fn new(base: I, n: usize) -> Self {
        let n = n.min(base.len());
        Take { base, n }
    }
}

indexed_parallel_iterator!(impl<I> Take<I>, item = I::Item, where I: IndexedParallelIterator);

impl<I: IndexedParallelIterator> IndexedParallelIterator for Take<I> {
    fn len(&self) -> usize {
        self.n
    }
    fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
        self.base.with_producer(SplitAtCallback {
            callback,
            n: self.n,
            keep: Side::Lower,
        })
    }
}

// --------------------------------------------------------------------- step_by

/// The iterator returned by [`IndexedParallelIterator::step_by`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct StepBy<I> {
    base: I,
    step: usize,
}

impl<I> StepBy<I> {
    pub(super) fn new(base: I, step: usize) -> Self {
        assert!(step != 0, "step_by: the step must not be 0");
        StepBy { base, step }
    }
}

indexed_parallel_iterator!(impl<I> StepBy<I>, item = I::Item, where I: IndexedParallelIterator);

impl<I: IndexedParallelIterator> IndexedParallelIterator for StepBy<I> {
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.step)
    }
    fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
        let base_len = self.base.len();
        return self.base.with_producer(Callback {
            callback,
            step: self.step,
            base_len,
        });

        struct Callback<CB> {
            callback: CB,
            step: usize,
            base_len: usize,
        }
        impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for Callback<CB> {
            type Output = CB::Output;
            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                self.callback.callback(StepByProducer {
                    base,
                    step: self.step,
                    base_len: self.base_len,
                })
            }
        }
    }
}

/// Every `step`-th item of `base` (of `base_len` items), starting with the first.
struct StepByProducer<P> {
    base: P,
    step: usize,
    base_len: usize,
}

impl<P: Producer> Producer for StepByProducer<P> {
    type Item = P::Item;
    type IntoIter = std::iter::StepBy<P::IntoIter>;
    fn into_iter(self) -> Self::IntoIter {
        self.base.into_iter().step_by(self.step)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = index.saturating_mul(self.step).min(self.base_len);
        let (l, r) = self.base.split_at(at);
        (
            StepByProducer {
                base: l,
                step: self.step,
                base_len: at,
            },
            StepByProducer {
                base: r,
                step: self.step,
                base_len: self.base_len - at,
            },
        )
    }
    fn min_len(&self) -> usize {
        self.base.min_len().div_ceil(self.step)
    }
    fn max_len(&self) -> usize {
        (self.base.max_len() / self.step).max(1)
    }
}

// ---------------------------------------------------------- with_min/max_len

/// The iterator returned by [`IndexedParallelIterator::with_min_len`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct MinLen<I> {
    base: I,
    min: usize,
}

impl<I> MinLen<I> {
    pub(super) fn new(base: I, min: usize) -> Self {
        MinLen { base, min }
    }
}

/// The iterator returned by [`IndexedParallelIterator::with_max_len`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct MaxLen<I> {
    base: I,
    max: usize,
}

impl<I> MaxLen<I> {
    pub(super) fn new(base: I, max: usize) -> Self {
        MaxLen { base, max }
    }
}

indexed_parallel_iterator!(impl<I> MinLen<I>, item = I::Item, where I: IndexedParallelIterator);
indexed_parallel_iterator!(impl<I> MaxLen<I>, item = I::Item, where I: IndexedParallelIterator);

impl<I: IndexedParallelIterator> IndexedParallelIterator for MinLen<I> {
    fn len(&self) -> usize {
        self.base.len()
    }
    fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
        self.base.with_producer(LenCallback {
            callback,
            min: self.min,
            max: usize::MAX,
        })
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for MaxLen<I> {
    fn len(&self) -> usize {
        self.base.len()
    }
    fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
        self.base.with_producer(LenCallback {
            callback,
            min: 1,
            max: self.max,
        })
    }
}

struct LenCallback<CB> {
    callback: CB,
    min: usize,
    max: usize,
}

impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for LenCallback<CB> {
    type Output = CB::Output;
    fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
        self.callback.callback(LenProducer {
            base,
            min: self.min,
            max: self.max,
        })
    }
}

/// A producer with tighter split limits.
struct LenProducer<P> {
    base: P,
    min: usize,
    max: usize,
}

impl<P: Producer> Producer for LenProducer<P> {
    type Item = P::Item;
    type IntoIter = P::IntoIter;
    fn into_iter(self) -> P::IntoIter {
        self.base.into_iter()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        (
            LenProducer {
                base: l,
                min: self.min,
                max: self.max,
            },
            LenProducer {
                base: r,
                min: self.min,
                max: self.max,
            },
        )
    }
    fn min_len(&self) -> usize {
        self.base.min_len().max(self.min)
    }
    fn max_len(&self) -> usize {
        self.base.max_len().min(self.max)
    }
}

// ------------------------------------------------------------------ interleave

/// The iterator returned by [`IndexedParallelIterator::interleave`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Interleave<A, B> {
    a: A,
    b: B,
}

impl<A, B> Interleave<A, B> {
    pub(super) fn new(a: A, b: B) -> Self {
        Interleave { a, b }
    }
}

indexed_parallel_iterator!(impl<A, B> Interleave<A, B>, item = A::Item,
    where A: IndexedParallelIterator, B: IndexedParallelIterator<Item = A::Item>);

impl<A, B> IndexedParallelIterator for Interleave<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
{
    fn len(&self) -> usize {
        total_len(self.a.len(), self.b.len(), "interleaved")
    }
    fn with_producer<CB: ProducerCallback<A::Item>>(self, callback: CB) -> CB::Output {
        with_joined_producers::<Self, A, B, CB>(self.a, self.b, callback)
    }
}

impl<A, B> JoinProducers for Interleave<A, B> {
    fn join<PA, PB>(a: PA, a_len: usize, b: PB, b_len: usize) -> impl Producer<Item = PA::Item>
    where
        PA: Producer,
        PB: Producer<Item = PA::Item>,
    {
        InterleaveProducer {
            a,
            b,
            lens: (a_len, b_len),
            a_next: true,
        }
    }
}

/// The items of `a` and `b` (of `lens` items) in turns (`a` first when `a_next`), then
/// the rest of the longer one.
struct InterleaveProducer<A, B> {
    a: A,
    b: B,
    lens: (usize, usize),
    a_next: bool,
}

impl<A, B> Producer for InterleaveProducer<A, B>
where
    A: Producer,
    B: Producer<Item = A::Item>,
{
    type Item = A::Item;
    type IntoIter = InterleaveIter<A::IntoIter, B::IntoIter>;
    fn into_iter(self) -> Self::IntoIter {
        InterleaveIter {
            a: self.a.into_iter(),
            b: self.b.into_iter(),
            a_next: self.a_next,
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (la, lb) = self.lens;
        // While both sides last, the first `index` items take turns.
        let (first_turns, second_turns) = (index.div_ceil(2), index / 2);
        let (turns_a, turns_b) = if self.a_next {
            (first_turns, second_turns)
        } else {
            (second_turns, first_turns)
        };
        let from_a = if turns_a > la {
            la
        } else if turns_b > lb {
            index - lb
        } else {
            turns_a
        };
        let (al, ar) = self.a.split_at(from_a);
        let (bl, br) = self.b.split_at(index - from_a);
        let right_a_next = self.a_next == (index % 2 == 0);
        (
            InterleaveProducer {
                a: al,
                b: bl,
                lens: (from_a, index - from_a),
                a_next: self.a_next,
            },
            InterleaveProducer {
                a: ar,
                b: br,
                lens: (la - from_a, lb - (index - from_a)),
                a_next: right_a_next,
            },
        )
    }
}

struct InterleaveIter<A, B> {
    a: A,
    b: B,
    a_next: bool,
}

impl<T, A, B> Iterator for InterleaveIter<A, B>
where
    A: ExactSizeIterator<Item = T>,
    B: ExactSizeIterator<Item = T>,
{
    type Item = T;
    fn next(&mut self) -> Option<T> {
        let item = if self.a_next {
            self.a.next().or_else(|| self.b.next())
        } else {
            self.b.next().or_else(|| self.a.next())
        };
        self.a_next = !self.a_next;
        item
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.a.len() + self.b.len();
        (n, Some(n))
    }
}

impl<T, A, B> DoubleEndedIterator for InterleaveIter<A, B>
where
    A: DoubleEndedIterator<Item = T> + ExactSizeIterator,
    B: DoubleEndedIterator<Item = T> + ExactSizeIterator,
{
    fn next_back(&mut self) -> Option<T> {
        // The longer side ends the sequence; with equal lengths, the side that moves
        // second in each turn does.
        let (la, lb) = (self.a.len(), self.b.len());
        if la > lb || (la == lb && !self.a_next) {
            self.a.next_back()
        } else {
            self.b.next_back()
        }
    }
}

impl<T, A, B> ExactSizeIterator for InterleaveIter<A, B>
where
    A: ExactSizeIterator<Item = T>,
    B: ExactSizeIterator<Item = T>,
{
}

/// The iterator returned by [`IndexedParallelIterator::interleave_shortest`]: an
/// [`Interleave`] of the two iterators cut where the shorter one runs out.
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct InterleaveShortest<A, B> {
    interleave: Interleave<Take<A>, Take<B>>,
}

impl<A, B> InterleaveShortest<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
{
    pub(super) fn new(a: A, b: B) -> Self {
        // `a` moves first: it may give one item more than `b`.
        let (la, lb) = (a.len(), b.len());
        InterleaveShortest {
            interleave: Interleave::new(a.take(la.min(lb + 1)), b.take(lb.min(la))),
        }
    }
}

indexed_parallel_iterator!(impl<A, B> InterleaveShortest<A, B>, item = A::Item,
    where A: IndexedParallelIterator, B: IndexedParallelIterator<Item = A::Item>);

impl<A, B> IndexedParallelIterator for InterleaveShortest<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
{
    fn len(&self) -> usize {
        self.interleave.len()
    }
    fn with_producer<CB: ProducerCallback<A::Item>>(self, callback: CB) -> CB::Output {
        self.interleave.with_producer(callback)
    }
}
