//! `intersperse`: a clone of a separator between every two adjacent items.
//!
//! # Unindexed: the consumer side
//!
//! A piece of the loop cannot tell on its own whether its first item needs a separator:
//! that depends on whether any item comes before it, which an earlier piece (maybe still
//! running, maybe empty after a `filter`) decides. So the separator at the seam of a
//! split is left to the reducer. Each piece's consumer carries:
//!
//! - `lead`: an item is *known* to precede the piece, so the piece puts a separator
//!   before its own first item (a piece detached after a prefix that produced an item);
//! - `front`: a slot, a base consumer that covers no item and sits just before the
//!   piece. Splitting a consumer in three (left, slot, right) gives the right piece the
//!   slot; the left piece keeps the front slot of the whole.
//!
//! A piece's result says whether the piece produced any item. When the reducer combines
//! a left result with a right result that brings a slot, it folds one separator into the
//! slot exactly when the right side produced an item and the left side either produced
//! one or knew of one before it (`lead`); then it reduces left, slot and right in order.
//! When neither holds, the separator, if one is needed at all, belongs further left: at
//! the left side's own front slot, decided by an outer reduction, or nowhere when nothing
//! precedes. So every item but the first gets exactly one separator before it, however
//! the scheduler split the loop, and even where pieces turn out empty.
//!
//! The base consumer is split in the *output's* positions: a piece of `d` base
//! positions (after a known item when `lead`) covers `2d - 1 + lead` output positions
//! (none when `d` is 0), and a slot covers the one position between two nonempty
//! pieces. When the base iterator has an exact length, those are exactly the positions
//! the items land in, so `collect` writes the result in place; otherwise they only keep
//! the order that position-tracking consumers (`find_first`, `find_last`) rely on.
//!
//! # Indexed: the producer side
//!
//! Over an indexed base, the result is indexed too: `2n - 1` items (none for `n` = 0).
//! A producer piece holds the base items whose output positions it covers, and whether
//! it starts and ends with a separator; it can be split at any output position.

use std::cell::Cell;

use super::plumbing::{Consumer, Folder, Producer, ProducerCallback, Reducer, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};

/// The iterator returned by [`ParallelIterator::intersperse`].
#[derive(Clone, Debug)]
#[must_use = "parallel iterators are lazy and do nothing unless consumed"]
pub struct Intersperse<I>
where
    I: ParallelIterator,
    I::Item: Clone,
{
    base: I,
    item: I::Item,
}

impl<I> Intersperse<I>
where
    I: ParallelIterator,
    I::Item: Clone,
{
    pub(super) fn new(base: I, item: I::Item) -> Self {
        Intersperse { base, item }
    }
}

/// The number of output positions of a piece of `span` base positions, with a separator
/// before its first item when `lead` (no position at all for an empty piece).
#[inline]
fn window(span: usize, lead: bool) -> usize {
    if span == 0 {
        0
    } else {
        (span - 1)
            .saturating_mul(2)
            .saturating_add(1 + lead as usize)
    }
}

/// `2n - 1` items for `n` base items (`None` when that overflows).
fn output_len(n: usize) -> Option<usize> {
    match n {
        0 => Some(0),
        n => n.checked_add(n - 1),
    }
}

impl<I> ParallelIterator for Intersperse<I>
where
    I: ParallelIterator,
    I::Item: Clone,
{
    type Item = I::Item;

    fn drive_unindexed<C>(self, consumer: C) -> C::Result
    where
        C: UnindexedConsumer<I::Item>,
    {
        let span = self.base.index_span();
        let consumer = SepConsumer {
            base: consumer,
            sep: self.item,
            lead: Cell::new(false),
            front: Cell::new(None),
            span,
        };
        // The whole loop has no front slot: only left pieces inherit it.
        self.base.drive_unindexed(consumer).result
    }

    fn opt_len(&self) -> Option<usize> {
        output_len(self.base.opt_len()?)
    }

    fn index_span(&self) -> usize {
        window(self.base.index_span(), false)
    }
}

impl<I> IndexedParallelIterator for Intersperse<I>
where
    I: IndexedParallelIterator,
    I::Item: Clone,
{
    fn len(&self) -> usize {
        output_len(self.base.len()).expect("intersperse: the length overflows usize")
    }

    fn with_producer<CB>(self, callback: CB) -> CB::Output
    where
        CB: ProducerCallback<I::Item>,
    {
        let base_len = self.base.len();
        return self.base.with_producer(Callback {
            callback,
            sep: self.item,
            base_len,
        });

        struct Callback<CB, T> {
            callback: CB,
            sep: T,
            base_len: usize,
        }
        impl<T, CB> ProducerCallback<T> for Callback<CB, T>
        where
            T: Clone + Send,
            CB: ProducerCallback<T>,
        {
            type Output = CB::Output;
            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                self.callback.callback(SepProducer {
                    base,
                    base_len: self.base_len,
                    sep: self.sep,
                    lead: false,
                    trail: false,
                })
            }
        }
    }
}

// ------------------------------------------------------------ shared folding

/// The items of `iter` with a clone of `sep` before each one, except before the first
/// when `sep_first` is false.
struct Separated<'s, I: Iterator> {
    iter: I,
    sep: &'s I::Item,
    sep_first: bool,
    /// The item that follows the separator just returned.
    pending: Option<I::Item>,
    /// Whether an item was drawn from `iter`.
    seen: bool,
}

impl<I> Iterator for Separated<'_, I>
where
    I: Iterator,
    I::Item: Clone,
{
    type Item = I::Item;

    #[inline]
    fn next(&mut self) -> Option<I::Item> {
        if let Some(item) = self.pending.take() {
            return Some(item);
        }
        let item = self.iter.next()?;
        self.seen = true;
        if self.sep_first {
            self.pending = Some(item);
            Some(self.sep.clone())
        } else {
            self.sep_first = true;
            Some(item)
        }
    }
}

/// Feeds the items of `iter` to `folder` with separators between them (and before the
/// first when `sep_first`); also says whether `iter` had an item.
#[inline]
fn fold_separated<T, F, I>(folder: F, sep: &T, sep_first: bool, iter: I) -> (F, bool)
where
    T: Clone,
    F: Folder<T>,
    I: Iterator<Item = T>,
{
    let mut items = Separated {
        iter,
        sep,
        sep_first,
        pending: None,
        seen: false,
    };
    let folder = folder.consume_iter(&mut items);
    (folder, items.seen)
}

/// Feeds one `item` to `folder`, after a separator when `sep_first`.
#[inline]
fn consume_separated<T: Clone, F: Folder<T>>(folder: F, sep: &T, sep_first: bool, item: T) -> F {
    let folder = if sep_first {
        folder.consume(sep.clone())
    } else {
        folder
    };
    if folder.full() {
        folder
    } else {
        folder.consume(item)
    }
}

// ------------------------------------------------------------ consumer side

/// The consumer of one piece of an unindexed loop (see the module doc).
///
/// `lead` and `front` are cells so that [`UnindexedConsumer::split_off_left`], which
/// only borrows the consumer, can hand them to the left piece.
struct SepConsumer<C, T> {
    base: C,
    sep: T,
    /// An item is known to precede this piece: its first item gets a separator.
    lead: Cell<bool>,
    /// The slot just before this piece, when this piece is the right side of a split.
    front: Cell<Option<Slot<C, T>>>,
    /// The base positions this piece covers (the base consumer is split in output
    /// positions derived from them).
    span: usize,
}

/// A base consumer that covers no item, between two pieces: the reducer puts one
/// separator in it when the seam needs one.
struct Slot<C, T> {
    consumer: C,
    sep: T,
}

impl<C: Consumer<T>, T> Slot<C, T> {
    /// Folds the separator into the slot when `fill`, and reduces the slot's result with
    /// `next`, the result of the piece after it, using `reducer` (the one that came with
    /// the slot when it was split off).
    fn resolve(self, fill: bool, next: C::Result, reducer: C::Reducer) -> C::Result {
        let mut folder = self.consumer.into_folder();
        if fill && !folder.full() {
            folder = folder.consume(self.sep);
        }
        reducer.reduce(folder.complete(), next)
    }
}

/// The result of a piece: the base result, whether the piece produced an item, whether
/// it knew of an item before it, and its front slot (still to be resolved by the
/// reduction with what precedes it).
struct Part<C: Consumer<T>, T> {
    result: C::Result,
    emitted: bool,
    lead: bool,
    front: Option<Slot<C, T>>,
}

struct SepFolder<C: Consumer<T>, T> {
    base: C::Folder,
    sep: T,
    lead: bool,
    /// Whether an item was consumed (the next one then gets a separator).
    emitted: bool,
    front: Option<Slot<C, T>>,
    span: usize,
}

/// Reduces [`Part`]s: `.0` reduces the base results; `.1` appends the right part's
/// result to its front slot's, when the right part has one. A split that makes a slot
/// returns the slot's own reducer in `.1`; a piece detached from a prefix has no slot
/// (so `.1` is `None`); a reducer of an unindexed split carries one in case.
struct SepReducer<R>(R, Option<R>);

impl<T, C> Consumer<T> for SepConsumer<C, T>
where
    T: Clone + Send,
    C: Consumer<T>,
{
    type Folder = SepFolder<C, T>;
    type Reducer = SepReducer<C::Reducer>;
    type Result = Part<C, T>;

    const DETACHES: bool = C::DETACHES;

    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer) {
        // Inner loops of a `flat_map` may split beyond the span: clamp, as positions do.
        let k = index.min(self.span);
        let lead = self.lead.get();
        let whole = window(self.span, lead);
        let left_len = window(k, lead);
        let right_len = window(self.span - k, false);
        // 1 between two nonempty pieces; `lead` when the left piece is empty (its
        // separator then goes before the right piece's first item); 0 otherwise.
        let slot_len = whole.saturating_sub(left_len).saturating_sub(right_len);
        let (left_base, rest, reducer) = self.base.split_at(left_len);
        let (slot, right_base, slot_reducer) = rest.split_at(slot_len);
        // `slot_reducer` is kept in this split's reducer, the one that will resolve the
        // slot (consumers are `Send`, reducers need not be).
        let left = SepConsumer {
            base: left_base,
            sep: self.sep.clone(),
            lead: Cell::new(lead),
            front: self.front,
            span: k,
        };
        let right = SepConsumer {
            base: right_base,
            sep: self.sep.clone(),
            lead: Cell::new(false),
            front: Cell::new(Some(Slot {
                consumer: slot,
                sep: self.sep,
            })),
            span: self.span - k,
        };
        (left, right, SepReducer(reducer, Some(slot_reducer)))
    }

    fn into_folder(self) -> Self::Folder {
        SepFolder {
            base: self.base.into_folder(),
            sep: self.sep,
            lead: self.lead.into_inner(),
            emitted: false,
            front: self.front.into_inner(),
            span: self.span,
        }
    }

    fn detach(folder: Self::Folder, consumed: usize) -> (Self::Result, Self, Self::Reducer) {
        let consumed = consumed.min(folder.span);
        let (result, base, reducer) = C::detach(folder.base, window(consumed, folder.lead));
        let prefix = Part {
            result,
            emitted: folder.emitted,
            lead: folder.lead,
            front: folder.front,
        };
        // The rest knows exactly whether an item precedes it: it needs no slot.
        let rest = SepConsumer {
            base,
            sep: folder.sep,
            lead: Cell::new(folder.lead || folder.emitted),
            front: Cell::new(None),
            span: folder.span - consumed,
        };
        (prefix, rest, SepReducer(reducer, None))
    }

    fn full(&self) -> bool {
        self.base.full()
    }
}

impl<T, C> UnindexedConsumer<T> for SepConsumer<C, T>
where
    T: Clone + Send,
    C: UnindexedConsumer<T>,
{
    /// What `split_at(0)` gives on the left, without positions: the left piece takes
    /// this piece's `lead` and front slot; a slot split off after it becomes this
    /// piece's front slot.
    fn split_off_left(&self) -> Self {
        let left = SepConsumer {
            base: self.base.split_off_left(),
            sep: self.sep.clone(),
            lead: Cell::new(self.lead.replace(false)),
            front: Cell::new(self.front.take()),
            span: 0,
        };
        let slot = Slot {
            consumer: self.base.split_off_left(),
            sep: self.sep.clone(),
        };
        self.front.set(Some(slot));
        left
    }

    fn to_reducer(&self) -> Self::Reducer {
        SepReducer(self.base.to_reducer(), Some(self.base.to_reducer()))
    }
}

impl<T, C> Folder<T> for SepFolder<C, T>
where
    T: Clone,
    C: Consumer<T>,
{
    type Result = Part<C, T>;

    fn consume(mut self, item: T) -> Self {
        self.base = consume_separated(self.base, &self.sep, self.lead || self.emitted, item);
        self.emitted = true;
        self
    }

    fn consume_iter<I>(mut self, iter: I) -> Self
    where
        I: IntoIterator<Item = T>,
    {
        let sep_first = self.lead || self.emitted;
        let (base, seen) = fold_separated(self.base, &self.sep, sep_first, iter.into_iter());
        self.base = base;
        self.emitted |= seen;
        self
    }

    fn complete(self) -> Part<C, T> {
        Part {
            result: self.base.complete(),
            emitted: self.emitted,
            lead: self.lead,
            front: self.front,
        }
    }

    fn full(&self) -> bool {
        self.base.full()
    }
}

impl<T, C> Reducer<Part<C, T>> for SepReducer<C::Reducer>
where
    C: Consumer<T>,
{
    fn reduce(self, left: Part<C, T>, right: Part<C, T>) -> Part<C, T> {
        let right_result = match right.front {
            Some(slot) => {
                let fill = (left.emitted || left.lead) && right.emitted;
                let slot_reducer = self
                    .1
                    .expect("intersperse: a piece with a front slot comes from a split");
                slot.resolve(fill, right.result, slot_reducer)
            }
            None => right.result,
        };
        Part {
            result: self.0.reduce(left.result, right_result),
            emitted: left.emitted || right.emitted,
            lead: left.lead,
            front: left.front,
        }
    }
}

// ------------------------------------------------------------ producer side

/// A piece of the output of an indexed base: the base items whose output positions it
/// covers (`base_len` of them), preceded by a separator when `lead` and followed by one
/// when `trail`. A piece with no base item is either empty (neither flag) or a lone
/// separator (both).
struct SepProducer<P: Producer> {
    base: P,
    base_len: usize,
    sep: P::Item,
    lead: bool,
    trail: bool,
}

impl<P> Producer for SepProducer<P>
where
    P: Producer,
    P::Item: Clone + Send,
{
    type Item = P::Item;
    type IntoIter = SepIter<P::IntoIter>;

    fn into_iter(self) -> Self::IntoIter {
        SepIter {
            base: self.base.into_iter(),
            sep: self.sep,
            front: self.lead,
            back: self.trail,
        }
    }

    fn fold_with<F>(self, folder: F) -> F
    where
        F: Folder<Self::Item>,
    {
        let SepProducer {
            base,
            base_len,
            sep,
            lead,
            trail,
        } = self;
        if base_len == 0 {
            // Empty, or a lone separator.
            return if lead && trail && !folder.full() {
                folder.consume(sep)
            } else {
                folder
            };
        }
        let folder = base
            .fold_with(SepFold {
                base: folder,
                sep: &sep,
                sep_first: lead,
            })
            .base;
        if trail && !folder.full() {
            folder.consume(sep)
        } else {
            folder
        }
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        let len = separated_len(self.base_len, self.lead, self.trail);
        debug_assert!(index <= len, "intersperse: split beyond the end");
        if index == 0 || index >= len {
            // One side is empty: it takes no base item and no separator.
            let at = if index == 0 { 0 } else { self.base_len };
            let (l, r) = self.base.split_at(at);
            let (empty, whole) = if index == 0 { (l, r) } else { (r, l) };
            let empty = SepProducer {
                base: empty,
                base_len: 0,
                sep: self.sep.clone(),
                lead: false,
                trail: false,
            };
            let whole = SepProducer {
                base: whole,
                base_len: self.base_len,
                sep: self.sep,
                lead: self.lead,
                trail: self.trail,
            };
            return if index == 0 {
                (empty, whole)
            } else {
                (whole, empty)
            };
        }
        // Output position `j` of this piece holds a separator iff `j + lead` is odd; the
        // left side holds the base items at the even ones below `index`.
        let offset = self.lead as usize;
        let left_items = (index + 1 - offset) / 2;
        let sep_at_index = (index + offset) % 2 == 1;
        let (l, r) = self.base.split_at(left_items);
        let left = SepProducer {
            base: l,
            base_len: left_items,
            sep: self.sep.clone(),
            lead: self.lead,
            trail: !sep_at_index,
        };
        let right = SepProducer {
            base: r,
            base_len: self.base_len - left_items,
            sep: self.sep,
            lead: sep_at_index,
            trail: self.trail,
        };
        (left, right)
    }

    fn min_len(&self) -> usize {
        self.base.min_len()
    }

    fn max_len(&self) -> usize {
        self.base.max_len()
    }
}

/// The length of `n` items with separators between them, plus one before when `lead`
/// and one after when `trail` (a lone separator when `n` is 0 and both are set).
#[inline]
fn separated_len(n: usize, lead: bool, trail: bool) -> usize {
    n.saturating_mul(2)
        .saturating_add(lead as usize + trail as usize)
        .saturating_sub(1)
}

/// Adapts a folder of the output to the base items of a [`SepProducer`], so the base
/// producer's own (possibly faster) `fold_with` runs the loop.
struct SepFold<'s, F, T> {
    base: F,
    sep: &'s T,
    sep_first: bool,
}

impl<T, F> Folder<T> for SepFold<'_, F, T>
where
    T: Clone,
    F: Folder<T>,
{
    type Result = F;

    fn consume(mut self, item: T) -> Self {
        self.base = consume_separated(self.base, self.sep, self.sep_first, item);
        self.sep_first = true;
        self
    }

    fn consume_iter<I>(mut self, iter: I) -> Self
    where
        I: IntoIterator<Item = T>,
    {
        let (base, seen) = fold_separated(self.base, self.sep, self.sep_first, iter.into_iter());
        self.base = base;
        self.sep_first |= seen;
        self
    }

    fn complete(self) -> F {
        self.base
    }

    fn full(&self) -> bool {
        self.base.full()
    }
}

/// The sequential iterator of a [`SepProducer`], from either end.
struct SepIter<I: Iterator> {
    base: I,
    sep: I::Item,
    /// The next item from the front is a separator.
    front: bool,
    /// The next item from the back is a separator.
    back: bool,
}

impl<I> Iterator for SepIter<I>
where
    I: ExactSizeIterator,
    I::Item: Clone,
{
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        if self.front {
            self.front = false;
            if self.base.len() == 0 {
                // That was the lone separator left: nothing remains at the back either.
                self.back = false;
            }
            return Some(self.sep.clone());
        }
        let item = self.base.next()?;
        self.front = self.base.len() > 0 || self.back;
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = separated_len(self.base.len(), self.front, self.back);
        (len, Some(len))
    }
}

impl<I> DoubleEndedIterator for SepIter<I>
where
    I: DoubleEndedIterator + ExactSizeIterator,
    I::Item: Clone,
{
    fn next_back(&mut self) -> Option<I::Item> {
        if self.back {
            self.back = false;
            if self.base.len() == 0 {
                self.front = false;
            }
            return Some(self.sep.clone());
        }
        let item = self.base.next_back()?;
        self.back = self.base.len() > 0 || self.front;
        Some(item)
    }
}

impl<I> ExactSizeIterator for SepIter<I>
where
    I: ExactSizeIterator,
    I::Item: Clone,
{
}
