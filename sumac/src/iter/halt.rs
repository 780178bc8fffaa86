//! Loops that halt every piece once one item says so: `while_some` (at the first `None`)
//! and, inside `try_reduce` and `try_reduce_with`, at the first failure.
//!
//! The consumer shares one flag among all pieces of the loop. A piece that meets a
//! halting item raises it; every piece reports itself [`full`](Consumer::full) once the
//! flag is up, so it stops at its next block boundary (the driver checks between blocks,
//! and the default `consume_iter` between items).

use std::sync::atomic::{AtomicBool, Ordering};

use super::plumbing::{Consumer, Folder};
use super::private::Try;
use super::ParallelIterator;

/// What an item does to a halting loop: what it passes on, and whether it halts it.
pub(super) trait HaltRule<T>: Copy + Send + Sync {
    type Output;
    fn check(self, item: T) -> (Option<Self::Output>, bool);
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
    fn drive_unindexed<C: Consumer<T>>(self, consumer: C) -> C::Result {
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
    fn drive_unindexed<C: Consumer<I::Item>>(self, consumer: C) -> C::Result {
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
    C: Consumer<H::Output>,
{
    base.drive_unindexed(HaltConsumer {
        base: consumer,
        rule,
        halted,
    })
}

struct HaltConsumer<'h, C, H> {
    base: C,
    rule: H,
    halted: &'h AtomicBool,
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
    fn split_at(self, index: usize) -> (Self, Self) {
        let (left, right) = self.base.split_at(index);
        (
            HaltConsumer { base: left, ..self },
            HaltConsumer {
                base: right,
                ..self
            },
        )
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
    fn into_folder(self) -> Self::Folder {
        HaltConsumer {
            base: self.base.into_folder(),
            rule: self.rule,
            halted: self.halted,
        }
    }
    fn detach(folder: Self::Folder, consumed: usize) -> (C::Result, Self) {
        let (result, base) = C::detach(folder.base, consumed);
        let rest = HaltConsumer {
            base,
            rule: folder.rule,
            halted: folder.halted,
        };
        (result, rest)
    }
    fn full(&self) -> bool {
        self.halted() || self.base.full()
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
