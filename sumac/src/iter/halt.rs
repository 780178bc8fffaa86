//! Loops that halt every piece once one item says so: `while_some` (at the first `None`),
//! `take_any` (once enough items were taken), `take_any_while` (at the first item that
//! fails the predicate), `panic_fuse` (at a panic) and, inside `try_reduce` and
//! `try_reduce_with`, at the first failure; and `skip_any`/`skip_any_while`, which share
//! the same per-item rule machinery without halting.
//!
//! The consumer shares one flag among all pieces of the loop. A piece that meets a
//! halting item raises it; every piece reports itself [`full`](Consumer::full) once the
//! flag is up, so it stops at its next block boundary (the driver checks between blocks,
//! and the default `consume_iter` between items).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::plumbing::{Consumer, Folder, Producer, ProducerCallback, UnindexedConsumer};
use super::private::Try;
use super::{IndexedParallelIterator, ParallelIterator};

/// What an item does to a halting loop: what it passes on, and whether it halts it.
pub(super) trait HaltRule<T>: Copy + Send + Sync {
    type Output;
    /// Whether a panic while passing items on halts the loop (`panic_fuse`).
    const HALT_ON_PANIC: bool = false;
    fn check(self, item: T) -> (Option<Self::Output>, bool);
}

/// `take_any`: the first `n` items to arrive (from any piece) pass; the `n`th halts.
#[derive(Clone, Copy)]
struct Budget<'s> {
    taken: &'s AtomicUsize,
    n: usize,
}

impl<T> HaltRule<T> for Budget<'_> {
    type Output = T;
    #[inline]
    fn check(self, item: T) -> (Option<T>, bool) {
        let k = self.taken.fetch_add(1, Ordering::Relaxed);
        if k < self.n {
            (Some(item), k + 1 == self.n)
        } else {
            (None, true)
        }
    }
}

/// `skip_any`: the first `n` items to arrive are dropped; once they are, the counter is
/// only read.
#[derive(Clone, Copy)]
struct SkipCount<'s> {
    seen: &'s AtomicUsize,
    n: usize,
}

impl<T> HaltRule<T> for SkipCount<'_> {
    type Output = T;
    #[inline]
    fn check(self, item: T) -> (Option<T>, bool) {
        let skipping = self.seen.load(Ordering::Relaxed) < self.n
            && self.seen.fetch_add(1, Ordering::Relaxed) < self.n;
        (if skipping { None } else { Some(item) }, false)
    }
}

/// `take_any_while`: items pass while the predicate holds; the first that fails halts.
struct TakeWhileRule<'p, P>(&'p P);

/// `skip_any_while`: items are dropped while the predicate holds and no item has failed
/// it yet (in any piece).
struct SkipWhileRule<'p, P> {
    predicate: &'p P,
    done: &'p AtomicBool,
}

/// `panic_fuse`: every item passes; a panic halts.
#[derive(Clone, Copy)]
struct FuseRule;

impl<P> Clone for TakeWhileRule<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P> Copy for TakeWhileRule<'_, P> {}
impl<P> Clone for SkipWhileRule<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P> Copy for SkipWhileRule<'_, P> {}

impl<T, P: Fn(&T) -> bool + Sync> HaltRule<T> for TakeWhileRule<'_, P> {
    type Output = T;
    #[inline]
    fn check(self, item: T) -> (Option<T>, bool) {
        if (self.0)(&item) {
            (Some(item), false)
        } else {
            (None, true)
        }
    }
}

impl<T, P: Fn(&T) -> bool + Sync> HaltRule<T> for SkipWhileRule<'_, P> {
    type Output = T;
    #[inline]
    fn check(self, item: T) -> (Option<T>, bool) {
        if !self.done.load(Ordering::Relaxed) && (self.predicate)(&item) {
            return (None, false);
        }
        self.done.store(true, Ordering::Relaxed);
        (Some(item), false)
    }
}

impl<T> HaltRule<T> for FuseRule {
    type Output = T;
    const HALT_ON_PANIC: bool = true;
    #[inline]
    fn check(self, item: T) -> (Option<T>, bool) {
        (Some(item), false)
    }
}

/// `while_some`: `Some(x)` passes `x` on; `None` halts.
#[derive(Clone, Copy)]
pub(super) struct AtNone;

impl<T> HaltRule<Option<T>> for AtNone {
    type Output = T;
    #[inline]
    fn check(self, item: Option<T>) -> (Option<T>, bool) {
        let halt = item.is_none();
        (item, halt)
    }
}

/// `try_*`: every item passes on; a failure also halts.
#[derive(Clone, Copy)]
pub(super) struct AtFailure;

impl<T: Try> HaltRule<T> for AtFailure {
    type Output = T;
    #[inline]
    fn check(self, item: T) -> (Option<T>, bool) {
        let halt = item.is_break();
        (Some(item), halt)
    }
}

/// The iterator returned by [`ParallelIterator::while_some`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct WhileSome<I> {
    base: I,
}

impl<I> WhileSome<I> {
    pub(super) fn new(base: I) -> Self {
        WhileSome { base }
    }
}

impl<I, T> ParallelIterator for WhileSome<I>
where
    I: ParallelIterator<Item = Option<T>>,
    T: Send,
{
    type Item = T;
    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        drive_halting(self.base, consumer, AtNone, &AtomicBool::new(false))
    }
    fn index_span(&self) -> usize {
        self.base.index_span()
    }
}

/// The items of `base`, with every piece halted at the first failure or once `halted` is
/// raised (for `try_reduce` and `try_reduce_with`).
pub(super) struct Halting<'h, I> {
    base: I,
    halted: &'h AtomicBool,
}

impl<'h, I> Halting<'h, I> {
    pub(super) fn new(base: I, halted: &'h AtomicBool) -> Self {
        Halting { base, halted }
    }
}

impl<I> ParallelIterator for Halting<'_, I>
where
    I: ParallelIterator,
    I::Item: Try,
{
    type Item = I::Item;
    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        drive_halting(self.base, consumer, AtFailure, self.halted)
    }
    fn index_span(&self) -> usize {
        self.base.index_span()
    }
}

/// The reduction op of `try_reduce`: combines two successes with `op`, keeps the left
/// failure over the right one, and raises `halted` when `op` itself fails.
pub(super) fn try_combine<'a, R, T, OP>(
    op: &'a OP,
    halted: &'a AtomicBool,
) -> impl Fn(R, R) -> R + Sync + Send + 'a
where
    R: Try<Output = T>,
    OP: Fn(T, T) -> R + Sync,
{
    move |left, right| match (left.into_result(), right.into_result()) {
        (Ok(left), Ok(right)) => {
            let combined = op(left, right);
            if combined.is_break() {
                halted.store(true, Ordering::Relaxed);
            }
            combined
        }
        (Err(failure), _) | (_, Err(failure)) => failure,
    }
}

/// Drives `base` into `consumer`, halting every piece once an item meets `rule` (or
/// once `halted` is raised by someone else, such as a reduction whose result failed).
pub(super) fn drive_halting<I, C, H>(
    base: I,
    consumer: C,
    rule: H,
    halted: &AtomicBool,
) -> C::Result
where
    I: ParallelIterator,
    H: HaltRule<I::Item>,
    C: UnindexedConsumer<H::Output>,
{
    base.drive_unindexed(HaltConsumer {
        base: consumer,
        rule,
        halted,
        fuse: UnwindFuse::new(halted, H::HALT_ON_PANIC),
    })
}

/// A piece of a halting loop (its consumer, or its folder).
struct HaltConsumer<'h, C, H> {
    base: C,
    rule: H,
    halted: &'h AtomicBool,
    /// For `panic_fuse`: raises `halted` if this piece is dropped by a panic, wherever
    /// in the piece's loop the panic came from (a closure before the fuse or after it).
    fuse: UnwindFuse<'h>,
}

/// Raises its flag when dropped during a panic, if armed. It is not armed when made
/// while the thread was panicking already (a loop run by a destructor during an unwind
/// must not halt because of that unwind).
struct UnwindFuse<'h>(Option<&'h AtomicBool>);

impl<'h> UnwindFuse<'h> {
    fn new(halted: &'h AtomicBool, armed: bool) -> Self {
        UnwindFuse((armed && !std::thread::panicking()).then_some(halted))
    }

    /// A fuse for a piece split off this one's: armed if this one is, and if the thread
    /// is not panicking now.
    fn renewed(&self) -> Self {
        UnwindFuse(self.0.filter(|_| !std::thread::panicking()))
    }
}

impl Drop for UnwindFuse<'_> {
    fn drop(&mut self) {
        if let Some(halted) = self.0 {
            if std::thread::panicking() {
                halted.store(true, Ordering::Relaxed);
            }
        }
    }
}

impl<C, H> HaltConsumer<'_, C, H> {
    fn halted(&self) -> bool {
        self.halted.load(Ordering::Relaxed)
    }
}

impl<'h, T, C, H> Consumer<T> for HaltConsumer<'h, C, H>
where
    H: HaltRule<T>,
    C: Consumer<H::Output>,
{
    type Folder = HaltConsumer<'h, C::Folder, H>;
    type Reducer = C::Reducer;
    type Result = C::Result;
    const DETACHES: bool = C::DETACHES;
    fn split_at(self, index: usize) -> (Self, Self, C::Reducer) {
        let (left, right, reducer) = self.base.split_at(index);
        (
            HaltConsumer {
                base: left,
                rule: self.rule,
                halted: self.halted,
                fuse: self.fuse.renewed(),
            },
            HaltConsumer {
                base: right,
                rule: self.rule,
                halted: self.halted,
                fuse: self.fuse.renewed(),
            },
            reducer,
        )
    }
    fn into_folder(self) -> Self::Folder {
        HaltConsumer {
            base: self.base.into_folder(),
            rule: self.rule,
            halted: self.halted,
            fuse: self.fuse,
        }
    }
    fn detach(folder: Self::Folder, consumed: usize) -> (C::Result, Self, C::Reducer) {
        let (result, base, reducer) = C::detach(folder.base, consumed);
        let rest = HaltConsumer {
            base,
            rule: folder.rule,
            halted: folder.halted,
            fuse: folder.fuse,
        };
        (result, rest, reducer)
    }
    fn full(&self) -> bool {
        self.halted() || self.base.full()
    }
}

impl<'h, T, C, H> UnindexedConsumer<T> for HaltConsumer<'h, C, H>
where
    H: HaltRule<T>,
    C: UnindexedConsumer<H::Output>,
{
    fn split_off_left(&self) -> Self {
        HaltConsumer {
            base: self.base.split_off_left(),
            rule: self.rule,
            halted: self.halted,
            fuse: self.fuse.renewed(),
        }
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
}

impl<T, F, H> Folder<T> for HaltConsumer<'_, F, H>
where
    H: HaltRule<T>,
    F: Folder<H::Output>,
{
    type Result = F::Result;
    fn consume(mut self, item: T) -> Self {
        let (passed, halt) = self.rule.check(item);
        if let Some(passed) = passed {
            // A panic in there drops `self.fuse` (for `panic_fuse`), which halts the loop.
            self.base = self.base.consume(passed);
        }
        if halt {
            self.halted.store(true, Ordering::Relaxed);
        }
        self
    }
    fn complete(self) -> F::Result {
        self.base.complete()
    }
    fn full(&self) -> bool {
        self.halted() || self.base.full()
    }
}

/// Declares a public halting adaptor: the struct, its constructor, a `Debug` impl
/// showing the base and the fields named in `show` (under the names given there; a
/// predicate is never shown), and a `ParallelIterator` impl that drives the base with the
/// rule `$rule`, built from the adaptor's fields and fresh shared state (`$state`).
macro_rules! halting_adaptor {
    ($(#[$doc:meta])* $name:ident<I $(, $p:ident)?> { $($field:ident: $ty:ty),* }
     where [$($bounds:tt)*], show = [$($shown:ident as $label:literal),*],
     state = $state:expr, rule = |$st:ident| $rule:expr) => {
        $(#[$doc])*
        #[derive(Clone)]
        #[must_use = "parallel iterators are lazy and do nothing unless consumed"]
        pub struct $name<I $(, $p)?> {
            base: I,
            $($field: $ty),*
        }

        impl<I: std::fmt::Debug $(, $p)?> std::fmt::Debug for $name<I $(, $p)?> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("base", &self.base)
                    $(.field($label, &self.$shown))*
                    .finish()
            }
        }

        impl<I $(, $p)?> $name<I $(, $p)?> {
            pub(super) fn new(base: I $(, $field: $ty)*) -> Self {
                $name { base $(, $field)* }
            }
        }

        impl<I $(, $p)?> ParallelIterator for $name<I $(, $p)?>
        where
            I: ParallelIterator,
            $($bounds)*
        {
            type Item = I::Item;
            fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
                let $name { base $(, $field)* } = self;
                let halted = AtomicBool::new(false);
                let $st = $state;
                let rule = $rule;
                drive_halting(base, consumer, rule, &halted)
            }
            fn index_span(&self) -> usize {
                self.base.index_span()
            }
        }
    };
}

halting_adaptor!(
    /// The iterator returned by [`ParallelIterator::take_any`].
    TakeAny<I> { n: usize } where [], show = [n as "count"],
    state = AtomicUsize::new(0),
    rule = |taken| Budget { taken: &taken, n }
);

halting_adaptor!(
    /// The iterator returned by [`ParallelIterator::skip_any`].
    SkipAny<I> { n: usize } where [], show = [n as "count"],
    state = AtomicUsize::new(0),
    rule = |seen| SkipCount { seen: &seen, n }
);

halting_adaptor!(
    /// The iterator returned by [`ParallelIterator::take_any_while`].
    TakeAnyWhile<I, P> { predicate: P } where [P: Fn(&I::Item) -> bool + Sync + Send],
    show = [],
    state = (),
    rule = |_unit| TakeWhileRule(&predicate)
);

halting_adaptor!(
    /// The iterator returned by [`ParallelIterator::skip_any_while`].
    SkipAnyWhile<I, P> { predicate: P } where [P: Fn(&I::Item) -> bool + Sync + Send],
    show = [],
    state = AtomicBool::new(false),
    rule = |done| SkipWhileRule { predicate: &predicate, done: &done }
);

/// The iterator returned by [`ParallelIterator::panic_fuse`]; indexed when its base is.
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct PanicFuse<I> {
    base: I,
}

impl<I> PanicFuse<I> {
    pub(super) fn new(base: I) -> Self {
        PanicFuse { base }
    }
}

impl<I: ParallelIterator> ParallelIterator for PanicFuse<I> {
    type Item = I::Item;
    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        let halted = AtomicBool::new(false);
        drive_halting(self.base, consumer, FuseRule, &halted)
    }
    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len()
    }
    fn index_span(&self) -> usize {
        self.base.index_span()
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for PanicFuse<I> {
    fn len(&self) -> usize {
        self.base.len()
    }
    fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
        let halted = AtomicBool::new(false);
        return self.base.with_producer(Callback {
            callback,
            halted: &halted,
        });

        struct Callback<'h, CB> {
            callback: CB,
            halted: &'h AtomicBool,
        }
        impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for Callback<'_, CB> {
            type Output = CB::Output;
            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                self.callback.callback(FuseProducer {
                    base,
                    halted: self.halted,
                })
            }
        }
    }
}

/// The producer of an indexed `panic_fuse`: every piece shares the flag. Its sequential
/// iterator ends early once the flag is up, and raises it when a panic drops it: a panic
/// anywhere in a piece's loop (in the closures before `panic_fuse`, which its iterator
/// calls, or after it, which consume the iterator) unwinds through the iterator of that
/// piece.
struct FuseProducer<'h, P> {
    base: P,
    halted: &'h AtomicBool,
}

impl<'h, P: Producer> Producer for FuseProducer<'h, P> {
    type Item = P::Item;
    type IntoIter = FuseIter<'h, P::IntoIter>;
    fn into_iter(self) -> Self::IntoIter {
        FuseIter {
            base: self.base.into_iter(),
            halted: self.halted,
            _fuse: UnwindFuse::new(self.halted, true),
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (left, right) = self.base.split_at(index);
        let halted = self.halted;
        (
            FuseProducer { base: left, halted },
            FuseProducer {
                base: right,
                halted,
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

/// The sequential iterator of [`FuseProducer`]. Once the flag is up it yields nothing
/// more, although its length said otherwise: that only happens while a panic unwinds,
/// and the loop's result is then discarded.
struct FuseIter<'h, I> {
    base: I,
    halted: &'h AtomicBool,
    /// Raises `halted` when a panic drops the iterator.
    _fuse: UnwindFuse<'h>,
}

impl<I: Iterator> Iterator for FuseIter<'_, I> {
    type Item = I::Item;
    #[inline]
    fn next(&mut self) -> Option<I::Item> {
        if self.halted.load(Ordering::Relaxed) {
            return None;
        }
        self.base.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.base.size_hint()
    }
}

impl<I: DoubleEndedIterator> DoubleEndedIterator for FuseIter<'_, I> {
    #[inline]
    fn next_back(&mut self) -> Option<I::Item> {
        if self.halted.load(Ordering::Relaxed) {
            return None;
        }
        self.base.next_back()
    }
}

impl<I: ExactSizeIterator> ExactSizeIterator for FuseIter<'_, I> {}
