//! Parallel iterators, named and shaped like Rayon's, driven by heartbeat scheduling.
//!
//! A parallel loop runs sequentially on the worker that started it, polling the
//! worker's heartbeat between small adaptive blocks of iterations. When an idle worker
//! wants work, the loop splits its *remaining* iterations at their midpoint and hands
//! the upper half to the pool as a fork; nested loops split the outermost loop that
//! still has iterations left. There is no up-front split into pieces and no
//! length-based cutoff, so a loop over a thousand items costs about what a sequential
//! loop costs, and a loop over a billion items still spreads over every worker.
//!
//! Results are combined in iteration order, so `reduce`, `collect`, `find_first` and
//! friends give the sequential answer even for non-commutative operations.
//!
//! ```
//! use sumac::prelude::*;
//!
//! let squares: Vec<u64> = (0..1000u64).into_par_iter().map(|x| x * x).collect();
//! assert_eq!(squares[999], 998_001);
//! let sum: u64 = squares.par_iter().sum();
//! assert_eq!(sum, (0..1000u64).map(|x| x * x).sum());
//! ```

use std::cmp::Ordering;
use std::iter::{Product, Sum};

pub use either::Either;

/// Declares small `Copy` wrappers of a shared reference to a closure: the per-item ops
/// of the adaptors (`map`'s `MapOp`s, `filter`'s `BlockOp`s), copied into every piece
/// of the loop.
macro_rules! closure_ops {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        pub(crate) struct $name<'f, F>(&'f F);
        impl<F> Clone for $name<'_, F> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<F> Copy for $name<'_, F> {}
    )*};
}

pub mod plumbing;

mod blocks;
mod chain;
mod char_range;
mod chunks;
mod collect;
pub mod collections;
mod driver;
pub(crate) use driver::LoopPoll;
mod extend;
mod filter;
pub(crate) mod find;
mod flat_map;
mod fold;
mod halt;
mod indexed;
mod intersperse;
mod map;
mod multizip;
pub mod option;
mod par_either;
/// Parallel iterators over the `Ok` value of a `Result` (zero or one item): the same
/// iterator as for an `Option` (see [`option`]).
pub mod result {
    /// The iterator over the `Ok` value of a `Result`, by value.
    pub type IntoIter<T> = super::option::IntoIter<T>;
    /// The iterator over a reference to the `Ok` value of a `Result`.
    pub type Iter<'a, T> = super::option::IntoIter<&'a T>;
    /// The iterator over a mutable reference to the `Ok` value of a `Result`.
    pub type IterMut<'a, T> = super::option::IntoIter<&'a mut T>;
}
pub(crate) mod binary_heap;
mod par_bridge;
mod parts;
pub mod range;
pub mod range_inclusive;
mod reduce;
mod repeat;
pub mod slice;
mod split;
pub(crate) mod string;
mod unzip;
pub mod vec;
pub(crate) mod vec_deque;
mod walk_tree;

pub use self::blocks::{ExponentialBlocks, UniformBlocks};
pub use self::chain::Chain;
pub use self::chunks::{Chunks, FoldChunks, FoldChunksWith, Positions};
pub use self::filter::{Filter, FilterMap, FlatMapIter, FlattenIter};
pub use self::flat_map::{FlatMap, Flatten};
pub use self::fold::{Fold, FoldWith, TryFold, TryFoldWith};
pub use self::halt::{PanicFuse, SkipAny, SkipAnyWhile, TakeAny, TakeAnyWhile, WhileSome};
pub use self::indexed::{
    Enumerate, Interleave, InterleaveShortest, MaxLen, MinLen, Rev, Skip, StepBy, Take, Zip,
};
pub use self::intersperse::Intersperse;

/// The iterator returned by [`IndexedParallelIterator::zip_eq`]: a [`Zip`] whose two
/// sides were checked to have the same length.
pub type ZipEq<A, B> = Zip<A, B>;
pub use self::collections::ParallelDrainFull;
pub use self::map::{Cloned, Copied, Inspect, Map, MapInit, MapWith, Update};
pub use self::multizip::MultiZip;
pub use self::par_bridge::{IterBridge, ParallelBridge};
pub use self::repeat::{empty, once, repeat, repeat_n, repeatn, Empty, Once, Repeat, RepeatN};
pub use self::split::{split, Split};
pub use self::vec::ParallelDrainRange;
pub use self::walk_tree::{
    walk_tree, walk_tree_postfix, walk_tree_prefix, WalkTree, WalkTreePostfix, WalkTreePrefix,
};

use self::plumbing::{Consumer, ProducerCallback, UnindexedConsumer};

/// A parallel version of [`Iterator`]: a stream of items processed by the workers of a
/// thread pool.
///
/// Adaptors (`map`, `filter`, ...) build a new parallel iterator; consumers (`for_each`,
/// `sum`, `collect`, ...) run the loop. A loop called from outside any pool runs on the
/// global pool.
///
/// ```
/// use sumac::prelude::*;
///
/// let v: Vec<i32> = (1..=100).collect();
/// let evens: i32 = v.par_iter().filter(|&&x| x % 2 == 0).sum();
/// assert_eq!(evens, 2550);
/// ```
pub trait ParallelIterator: Sized + Send {
    /// The type of the items.
    type Item: Send;

    /// Runs the iterator into `consumer` (the low-level entry point behind every consumer
    /// method; see [`plumbing`]).
    fn drive_unindexed<C>(self, consumer: C) -> C::Result
    where
        C: UnindexedConsumer<Self::Item>;

    /// The exact number of items, when it is known without running the iterator.
    fn opt_len(&self) -> Option<usize> {
        None
    }

    /// The number of positions of the underlying producer this iterator spans (consumers
    /// are split at positions in that space). Equals the length for indexed iterators.
    #[doc(hidden)]
    fn index_span(&self) -> usize {
        self.opt_len().unwrap_or(0)
    }

    // ----------------------------------------------------------------- consumers

    /// Calls `op` on every item.
    ///
    /// # Panics
    /// A panic in `op` propagates to the caller (after the other running pieces finish).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let total = AtomicUsize::new(0);
    /// (0..100usize).into_par_iter().for_each(|i| { total.fetch_add(i, Ordering::Relaxed); });
    /// assert_eq!(total.into_inner(), 4950);
    /// ```
    fn for_each<OP>(self, op: OP)
    where
        OP: Fn(Self::Item) + Sync + Send,
    {
        reduce::for_each(self, &op)
    }

    /// Calls `op` on every item with a `&mut` to a clone of `init` (one clone per piece).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// use std::sync::mpsc::channel;
    ///
    /// let (tx, rx) = channel();
    /// (0..5).into_par_iter().for_each_with(tx, |tx, x| tx.send(x).unwrap());
    /// let mut got: Vec<i32> = rx.iter().collect();
    /// got.sort();
    /// assert_eq!(got, [0, 1, 2, 3, 4]);
    /// ```
    fn for_each_with<OP, T>(self, init: T, op: OP)
    where
        OP: Fn(&mut T, Self::Item) + Sync + Send,
        T: Send + Clone,
    {
        self.map_with(init, op).for_each(|()| ())
    }

    /// Calls `op` on every item with a `&mut` to a value made by `init` (once per piece).
    ///
    /// ```
    /// use sumac::prelude::*;
    ///
    /// let mut v = vec![0u8; 1000];
    /// v.par_chunks_mut(10).for_each_init(|| 7u8, |seed, chunk| chunk.fill(*seed));
    /// assert!(v.iter().all(|&x| x == 7));
    /// ```
    fn for_each_init<OP, INIT, T>(self, init: INIT, op: OP)
    where
        OP: Fn(&mut T, Self::Item) + Sync + Send,
        INIT: Fn() -> T + Sync + Send,
    {
        self.map_init(init, op).for_each(|()| ())
    }

    /// Calls a fallible `op` on every item, stopping early at a failure (`Err`, `None`,
    /// `ControlFlow::Break`), which is returned. When several items fail, any one of
    /// the failures may be returned.
    ///
    /// ```
    /// use sumac::prelude::*;
    ///
    /// let r = (0..100).into_par_iter().try_for_each(|x| if x == 42 { Err(x) } else { Ok(()) });
    /// assert_eq!(r, Err(42));
    /// ```
    fn try_for_each<OP, R>(self, op: OP) -> R
    where
        OP: Fn(Self::Item) -> R + Sync + Send,
        R: private::Try<Output = ()> + Send,
    {
        self.map(op)
            .find_any(private::Try::is_break)
            .unwrap_or_else(|| private::Try::from_output(()))
    }

    /// [`try_for_each`](ParallelIterator::try_for_each) with a per-piece state cloned
    /// from `init`, as in [`for_each_with`](ParallelIterator::for_each_with).
    ///
    /// ```
    /// use std::sync::mpsc::channel;
    /// use sumac::prelude::*;
    ///
    /// let (sender, receiver) = channel();
    /// let sent = (0..5).into_par_iter().try_for_each_with(sender, |s, x| s.send(x));
    /// assert!(sent.is_ok());
    /// let mut got: Vec<i32> = receiver.iter().collect();
    /// got.sort();
    /// assert_eq!(got, [0, 1, 2, 3, 4]);
    /// ```
    fn try_for_each_with<OP, T, R>(self, init: T, op: OP) -> R
    where
        OP: Fn(&mut T, Self::Item) -> R + Sync + Send,
        T: Send + Clone,
        R: private::Try<Output = ()> + Send,
    {
        self.map_with(init, op)
            .find_any(private::Try::is_break)
            .unwrap_or_else(|| private::Try::from_output(()))
    }

    /// [`try_for_each`](ParallelIterator::try_for_each) with a per-piece state made by
    /// `init`, as in [`for_each_init`](ParallelIterator::for_each_init).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let r = (0..100).into_par_iter().try_for_each_init(Vec::new, |buf, x| {
    ///     buf.push(x);
    ///     if x == 42 { Err(x) } else { Ok(()) }
    /// });
    /// assert_eq!(r, Err(42));
    /// ```
    fn try_for_each_init<OP, INIT, T, R>(self, init: INIT, op: OP) -> R
    where
        OP: Fn(&mut T, Self::Item) -> R + Sync + Send,
        INIT: Fn() -> T + Sync + Send,
        R: private::Try<Output = ()> + Send,
    {
        self.map_init(init, op)
            .find_any(private::Try::is_break)
            .unwrap_or_else(|| private::Try::from_output(()))
    }

    /// Reduces fallible items (`Option`, `Result`, `ControlFlow`) with a fallible `op`:
    /// the combined success, or a failure as soon as one item or one `op` call fails
    /// (every piece of the loop then stops at its next block). When several fail, any
    /// one of the failures may be returned. `op` must be associative.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let sum = (1..=100u8).into_par_iter().map(Some).try_reduce(|| 0, u8::checked_add);
    /// assert_eq!(sum, None); // 5050 overflows a u8
    /// let sum = (1..=10u8).into_par_iter().map(Some).try_reduce(|| 0, u8::checked_add);
    /// assert_eq!(sum, Some(55));
    /// ```
    fn try_reduce<T, OP, ID>(self, identity: ID, op: OP) -> Self::Item
    where
        OP: Fn(T, T) -> Self::Item + Sync + Send,
        ID: Fn() -> T + Sync + Send,
        Self::Item: private::Try<Output = T>,
    {
        let halted = std::sync::atomic::AtomicBool::new(false);
        let combine = halt::try_combine(&op, &halted);
        halt::Halting::new(self, &halted).reduce(|| private::Try::from_output(identity()), combine)
    }

    /// Like [`try_reduce`](ParallelIterator::try_reduce) without an identity: `None` when
    /// there is no item.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let r: Option<Result<i32, String>> = (1..5).into_par_iter().map(Ok).try_reduce_with(|a, b| Ok(a * b));
    /// assert_eq!(r, Some(Ok(24)));
    /// ```
    fn try_reduce_with<T, OP>(self, op: OP) -> Option<Self::Item>
    where
        OP: Fn(T, T) -> Self::Item + Sync + Send,
        Self::Item: private::Try<Output = T>,
    {
        let halted = std::sync::atomic::AtomicBool::new(false);
        let combine = halt::try_combine(&op, &halted);
        halt::Halting::new(self, &halted).reduce_with(combine)
    }

    /// The `Some` items, halting the whole loop at the first `None` (every piece stops at
    /// its next block). Which items before the halt are passed on is not specified.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<u32> = (0..100u32).into_par_iter()
    ///     .map(|x| if x == 0 { None } else { Some(x) })
    ///     .while_some()
    ///     .collect();
    /// assert!(v.len() < 100); // the None halted the loop somewhere
    /// ```
    fn while_some<T>(self) -> WhileSome<Self>
    where
        Self: ParallelIterator<Item = Option<T>>,
        T: Send,
    {
        WhileSome::new(self)
    }

    /// At most `n` items, taken from anywhere in the loop (whichever arrive first); the
    /// loop halts once it has them.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<u32> = (0..1000u32).into_par_iter().take_any(10).collect();
    /// assert_eq!(v.len(), 10);
    /// ```
    fn take_any(self, n: usize) -> TakeAny<Self> {
        TakeAny::new(self, n)
    }

    /// All items but `n`, skipped from anywhere in the loop (whichever arrive first).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert_eq!((0..1000u32).into_par_iter().skip_any(10).count(), 990);
    /// ```
    fn skip_any(self, n: usize) -> SkipAny<Self> {
        SkipAny::new(self, n)
    }

    /// The items that satisfy `predicate`, from anywhere in the loop, until an item fails
    /// it: that one and every later arrival are dropped, and the loop halts.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<u32> = (0..1000u32).into_par_iter().take_any_while(|&x| x < 500).collect();
    /// assert!(v.iter().all(|&x| x < 500));
    /// ```
    fn take_any_while<P>(self, predicate: P) -> TakeAnyWhile<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        TakeAnyWhile::new(self, predicate)
    }

    /// Drops the items that satisfy `predicate`, from anywhere in the loop, until an item
    /// fails it; that one and every later arrival pass.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<u32> = (0..1000u32).into_par_iter().skip_any_while(|&x| x < 500).collect();
    /// assert!(v.contains(&999));
    /// ```
    fn skip_any_while<P>(self, predicate: P) -> SkipAnyWhile<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        SkipAnyWhile::new(self, predicate)
    }

    /// Halts every piece of the loop at its next block once a closure of the loop
    /// panics, before or after this adaptor in the chain, instead of letting the other
    /// pieces run to their end (the panic still propagates to the caller). Over an
    /// indexed iterator the result is indexed too.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let r = std::panic::catch_unwind(|| {
    ///     (0..1_000_000u32).into_par_iter().panic_fuse().for_each(|x| assert!(x != 5))
    /// });
    /// assert!(r.is_err());
    /// // Indexed: it has a length, and indexed adaptors may follow it.
    /// let fused = [10, 20, 30].par_iter().panic_fuse();
    /// assert_eq!(fused.len(), 3);
    /// let v: Vec<(usize, &i32)> = fused.enumerate().collect();
    /// assert_eq!(v, [(0, &10), (1, &20), (2, &30)]);
    /// ```
    fn panic_fuse(self) -> PanicFuse<Self> {
        PanicFuse::new(self)
    }

    /// Counts the items.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert_eq!((0..1000).into_par_iter().filter(|x| x % 3 == 0).count(), 334);
    /// ```
    fn count(self) -> usize {
        self.map(|_| 1usize).sum()
    }

    /// Sums the items, like [`Iterator::sum`].
    ///
    /// # Panics
    /// Like the sequential sum, on overflow in debug builds.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert_eq!((1..=10u32).into_par_iter().sum::<u32>(), 55);
    /// ```
    fn sum<S>(self) -> S
    where
        S: Send + Sum<Self::Item> + Sum<S>,
    {
        reduce::sum(self)
    }

    /// Multiplies the items, like [`Iterator::product`].
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert_eq!((1..=10u64).into_par_iter().product::<u64>(), 3_628_800);
    /// ```
    fn product<P>(self) -> P
    where
        P: Send + Product<Self::Item> + Product<P>,
    {
        reduce::product(self)
    }

    /// Reduces the items with `op`, starting every piece from `identity()`. `op` must be
    /// associative; it need not be commutative (pieces are combined in order).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let s = (0..10).into_par_iter().map(|d| d.to_string())
    ///     .reduce(String::new, |a, b| a + &b);
    /// assert_eq!(s, "0123456789");
    /// ```
    fn reduce<OP, ID>(self, identity: ID, op: OP) -> Self::Item
    where
        OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
        ID: Fn() -> Self::Item + Sync + Send,
    {
        reduce::reduce(self, &identity, &op)
    }

    /// Reduces the items with `op`, or returns `None` when there is none. `op` must be
    /// associative; it need not be commutative.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert_eq!((1..5).into_par_iter().reduce_with(|a, b| a * b), Some(24));
    /// assert_eq!((1..1).into_par_iter().reduce_with(|a, b| a * b), None);
    /// ```
    fn reduce_with<OP>(self, op: OP) -> Option<Self::Item>
    where
        OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
    {
        self.map(Some).reduce(
            || None,
            |a, b| match (a, b) {
                (Some(a), Some(b)) => Some(op(a, b)),
                (a, None) => a,
                (None, b) => b,
            },
        )
    }

    /// The smallest item (the first one among equals), like [`Iterator::min`].
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert_eq!([3, 1, 2].par_iter().min(), Some(&1));
    /// ```
    fn min(self) -> Option<Self::Item>
    where
        Self::Item: Ord,
    {
        self.reduce_with(|a, b| if b < a { b } else { a })
    }

    /// The smallest item by `f` (the first one among equals).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// // `f64` is not `Ord`, so `min` does not apply; compare with `total_cmp`.
    /// let temps = [21.5f64, -3.0, 17.25, -3.0, 8.0];
    /// let coldest = temps.par_iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1));
    /// assert_eq!(coldest, Some((1, &-3.0))); // the first of the two -3.0s
    /// ```
    fn min_by<F>(self, f: F) -> Option<Self::Item>
    where
        F: Sync + Send + Fn(&Self::Item, &Self::Item) -> Ordering,
    {
        self.reduce_with(|a, b| if f(&b, &a) == Ordering::Less { b } else { a })
    }

    /// The item with the smallest key (the first one among equals).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let words = ["apple", "fig", "kiwi", "pea"];
    /// assert_eq!(words.par_iter().min_by_key(|w| w.len()), Some(&"fig"));
    /// ```
    fn min_by_key<K, F>(self, f: F) -> Option<Self::Item>
    where
        K: Ord + Send,
        F: Sync + Send + Fn(&Self::Item) -> K,
    {
        self.map(|x| (f(&x), x))
            .reduce_with(|a, b| if b.0 < a.0 { b } else { a })
            .map(|p| p.1)
    }

    /// The largest item (the last one among equals), like [`Iterator::max`].
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert_eq!([3, 1, 2].par_iter().max(), Some(&3));
    /// ```
    fn max(self) -> Option<Self::Item>
    where
        Self::Item: Ord,
    {
        self.reduce_with(|a, b| if b >= a { b } else { a })
    }

    /// The largest item by `f` (the last one among equals).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let temps = [21.5f64, 30.0, -3.0, 30.0, 8.0];
    /// let hottest = temps.par_iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1));
    /// assert_eq!(hottest, Some((3, &30.0))); // the last of the two 30.0s
    /// let none: [f64; 0] = [];
    /// assert_eq!(none.par_iter().max_by(|a, b| a.total_cmp(b)), None);
    /// ```
    fn max_by<F>(self, f: F) -> Option<Self::Item>
    where
        F: Sync + Send + Fn(&Self::Item, &Self::Item) -> Ordering,
    {
        self.reduce_with(|a, b| if f(&b, &a) == Ordering::Less { a } else { b })
    }

    /// The item with the largest key (the last one among equals).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let words = ["pear", "banana", "kiwi", "cherry", "fig"];
    /// // "banana" and "cherry" both have six letters: the later one wins.
    /// assert_eq!(words.par_iter().max_by_key(|w| w.len()), Some(&"cherry"));
    /// ```
    fn max_by_key<K, F>(self, f: F) -> Option<Self::Item>
    where
        K: Ord + Send,
        F: Sync + Send + Fn(&Self::Item) -> K,
    {
        self.map(|x| (f(&x), x))
            .reduce_with(|a, b| if b.0 >= a.0 { b } else { a })
            .map(|p| p.1)
    }

    /// Searches for some item matching `predicate` (not necessarily the first one),
    /// stopping the loop once one is found.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert_eq!((0..100).into_par_iter().find_any(|&x| x == 42), Some(42));
    /// ```
    fn find_any<P>(self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        find::find(self, &predicate, find::Mode::Any)
    }

    /// [`find_any`](ParallelIterator::find_any), under the name Rayon deprecated (kept
    /// so that code written for Rayon compiles, with the same warning).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// #[allow(deprecated)]
    /// let found = (0..100).into_par_iter().find(|x| x % 10 == 3);
    /// assert!(matches!(found, Some(x) if x % 10 == 3)); // any match, not the first
    /// ```
    #[doc(hidden)]
    #[deprecated(note = "parallel `find` does not search in order: use `find_any`, \
                         `find_first` or `find_last`")]
    fn find<P>(self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        self.find_any(predicate)
    }

    /// Applies `predicate` to the items and returns any `Some` result, stopping early
    /// (like [`find_any`](ParallelIterator::find_any)).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let r = ["a", "7", "x"].par_iter().find_map_any(|s| s.parse::<u32>().ok());
    /// assert_eq!(r, Some(7));
    /// ```
    fn find_map_any<P, R>(self, predicate: P) -> Option<R>
    where
        P: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        self.filter_map(predicate).find_any(|_| true)
    }

    /// The first `Some` result of `predicate`, in iteration order, like
    /// [`Iterator::find_map`].
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let r = ["a", "7", "x", "8"].par_iter().find_map_first(|s| s.parse::<u32>().ok());
    /// assert_eq!(r, Some(7));
    /// ```
    fn find_map_first<P, R>(self, predicate: P) -> Option<R>
    where
        P: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        self.filter_map(predicate).find_first(|_| true)
    }

    /// The last `Some` result of `predicate`, in iteration order.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let r = ["a", "7", "x", "8"].par_iter().find_map_last(|s| s.parse::<u32>().ok());
    /// assert_eq!(r, Some(8));
    /// ```
    fn find_map_last<P, R>(self, predicate: P) -> Option<R>
    where
        P: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        self.filter_map(predicate).find_last(|_| true)
    }

    /// Searches for the first item (in iteration order) matching `predicate`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert_eq!((0..100).into_par_iter().find_first(|x| x % 7 == 6), Some(6));
    /// ```
    fn find_first<P>(self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        find::find(self, &predicate, find::Mode::First)
    }

    /// Searches for the last item (in iteration order) matching `predicate`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert_eq!((0..100).into_par_iter().find_last(|x| x % 7 == 6), Some(97));
    /// ```
    fn find_last<P>(self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        find::find(self, &predicate, find::Mode::Last)
    }

    /// Whether some item satisfies `predicate` (stops early once one does).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert!((0..100).into_par_iter().any(|x| x == 99));
    /// assert!((0..100).into_par_iter().all(|x| x < 100));
    /// ```
    fn any<P>(self, predicate: P) -> bool
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(predicate).find_any(|&b| b).is_some()
    }

    /// Whether every item satisfies `predicate` (stops early once one does not).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert!((0..1000).into_par_iter().all(|x| x < 1000));
    /// assert!(!(0..1000).into_par_iter().all(|x| x % 250 != 249));
    /// assert!((0..0).into_par_iter().all(|_: i32| false)); // true when there is no item
    /// ```
    fn all<P>(self, predicate: P) -> bool
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(predicate).find_any(|&b| !b).is_none()
    }

    /// Collects the items into a collection, in order (for ordered collections).
    ///
    /// Indexed iterators collected into a `Vec` are written in place: one allocation, no
    /// intermediate vectors.
    ///
    /// # Panics
    /// A panic in a closure propagates; the items already produced are dropped.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// use std::collections::HashMap;
    ///
    /// let v: Vec<usize> = (0..5).into_par_iter().map(|x| x * 2).collect();
    /// assert_eq!(v, [0, 2, 4, 6, 8]);
    /// let m: HashMap<usize, usize> = v.par_iter().map(|&x| (x, x + 1)).collect();
    /// assert_eq!(m[&4], 5);
    /// let s: String = ['a', 'b', 'c'].par_iter().collect();
    /// assert_eq!(s, "abc");
    /// ```
    fn collect<C>(self) -> C
    where
        C: FromParallelIterator<Self::Item>,
    {
        C::from_par_iter(self)
    }

    /// Splits an iterator of pairs into two collections.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let (a, b): (Vec<i32>, Vec<char>) = [(1, 'a'), (2, 'b')].par_iter().copied().unzip();
    /// assert_eq!(a, [1, 2]);
    /// assert_eq!(b, ['a', 'b']);
    /// ```
    fn unzip<A, B, FromA, FromB>(self) -> (FromA, FromB)
    where
        Self: ParallelIterator<Item = (A, B)>,
        FromA: Default + Send + ParallelExtend<A>,
        FromB: Default + Send + ParallelExtend<B>,
        A: Send,
        B: Send,
    {
        unzip::unzip(self)
    }

    /// Collects the items into a list of vectors, one per piece of the loop, in order:
    /// the cheapest way to gather the items of an iterator of unknown length.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let list = (0..100).into_par_iter().filter(|x| x % 3 == 0).collect_vec_list();
    /// assert_eq!(list.into_iter().flatten().collect::<Vec<_>>(), (0..100).step_by(3).collect::<Vec<_>>());
    /// ```
    fn collect_vec_list(self) -> std::collections::LinkedList<Vec<Self::Item>> {
        collect::collect_list(self)
    }

    /// Splits the items into two collections: those matching `predicate`, and the others.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let (even, odd): (Vec<i32>, Vec<i32>) = (0..6).into_par_iter().partition(|x| x % 2 == 0);
    /// assert_eq!(even, [0, 2, 4]);
    /// assert_eq!(odd, [1, 3, 5]);
    /// ```
    fn partition<A, B, P>(self, predicate: P) -> (A, B)
    where
        A: Default + Send + ParallelExtend<Self::Item>,
        B: Default + Send + ParallelExtend<Self::Item>,
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        let sides = |x| {
            if predicate(&x) {
                Either::Left(x)
            } else {
                Either::Right(x)
            }
        };
        unzip::partition_map(self, &sides)
    }

    /// Maps every item to `Either::Left` or `Either::Right` and collects the two kinds
    /// into two collections, each in iteration order.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// use sumac::iter::Either;
    /// let (numbers, words): (Vec<u32>, Vec<&str>) = ["1", "a", "22", "b"]
    ///     .par_iter()
    ///     .partition_map(|s| match s.parse::<u32>() {
    ///         Ok(n) => Either::Left(n),
    ///         Err(_) => Either::Right(*s),
    ///     });
    /// assert_eq!((numbers, words), (vec![1, 22], vec!["a", "b"]));
    /// ```
    fn partition_map<A, B, P, L, R>(self, predicate: P) -> (A, B)
    where
        A: Default + Send + ParallelExtend<L>,
        B: Default + Send + ParallelExtend<R>,
        P: Fn(Self::Item) -> Either<L, R> + Sync + Send,
        L: Send,
        R: Send,
    {
        unzip::partition_map(self, &predicate)
    }

    // ------------------------------------------------------------------ adaptors

    /// Applies `map_op` to every item.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<i32> = [1, 2, 3].par_iter().map(|x| x * 10).collect();
    /// assert_eq!(v, [10, 20, 30]);
    /// ```
    fn map<F, R>(self, map_op: F) -> Map<Self, F>
    where
        F: Fn(Self::Item) -> R + Sync + Send,
        R: Send,
    {
        Map::new(self, map_op)
    }

    /// Applies `map_op` to every item with a `&mut` to a clone of `init` (one per piece).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<i32> = (0..4).into_par_iter().map_with(10, |k, x| *k + x).collect();
    /// assert_eq!(v, [10, 11, 12, 13]);
    /// ```
    fn map_with<F, T, R>(self, init: T, map_op: F) -> MapWith<Self, T, F>
    where
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
        T: Send + Clone,
        R: Send,
    {
        MapWith::new(self, init, map_op)
    }

    /// Applies `map_op` to every item with a `&mut` to a value made by `init` (called once
    /// per sequential piece of the loop).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<usize> = (0..4usize).into_par_iter()
    ///     .map_init(Vec::new, |buf, x| { buf.push(x); x * 2 }).collect();
    /// assert_eq!(v, [0, 2, 4, 6]);
    /// ```
    fn map_init<F, INIT, T, R>(self, init: INIT, map_op: F) -> MapInit<Self, INIT, F>
    where
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
        INIT: Fn() -> T + Sync + Send,
        R: Send,
    {
        MapInit::new(self, init, map_op)
    }

    /// Clones every item out of a reference.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let names = vec![String::from("ada"), String::from("grace")];
    /// let copies: Vec<String> = names.par_iter().cloned().collect();
    /// assert_eq!(copies, ["ada", "grace"]);
    /// assert_eq!(names.len(), 2); // the originals are still there
    /// ```
    fn cloned<'a, T>(self) -> Cloned<Self>
    where
        T: 'a + Clone + Send,
        Self: ParallelIterator<Item = &'a T>,
    {
        Cloned::new(self)
    }

    /// Copies every item out of a reference.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<u8> = [1u8, 2, 3].par_iter().copied().collect();
    /// assert_eq!(v, [1, 2, 3]);
    /// ```
    fn copied<'a, T>(self) -> Copied<Self>
    where
        T: 'a + Copy + Send,
        Self: ParallelIterator<Item = &'a T>,
    {
        Copied::new(self)
    }

    /// Calls `inspect_op` on a reference to every item as it passes.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let seen = AtomicUsize::new(0);
    /// let evens: Vec<u32> = (0..100u32)
    ///     .into_par_iter()
    ///     .inspect(|_| {
    ///         seen.fetch_add(1, Ordering::Relaxed);
    ///     })
    ///     .filter(|x| x % 2 == 0)
    ///     .collect();
    /// assert_eq!(evens.len(), 50);
    /// assert_eq!(seen.into_inner(), 100); // it saw the items `filter` dropped too
    /// ```
    fn inspect<OP>(self, inspect_op: OP) -> Inspect<Self, OP>
    where
        OP: Fn(&Self::Item) + Sync + Send,
    {
        Inspect::new(self, inspect_op)
    }

    /// Calls `update_op` on a mutable reference to every item as it passes.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<Vec<i32>> = (0..3).into_par_iter().map(|i| vec![i]).update(|v| v.push(9)).collect();
    /// assert_eq!(v, [vec![0, 9], vec![1, 9], vec![2, 9]]);
    /// ```
    fn update<OP>(self, update_op: OP) -> Update<Self, OP>
    where
        OP: Fn(&mut Self::Item) + Sync + Send,
    {
        Update::new(self, update_op)
    }

    /// Keeps the items for which `filter_op` returns `true`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<i32> = (0..10).into_par_iter().filter(|x| x % 3 == 0).collect();
    /// assert_eq!(v, [0, 3, 6, 9]);
    /// ```
    fn filter<P>(self, filter_op: P) -> Filter<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        Filter::new(self, filter_op)
    }

    /// Maps every item to an `Option` and keeps the `Some` values.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<u32> = ["1", "x", "3"].par_iter().filter_map(|s| s.parse().ok()).collect();
    /// assert_eq!(v, [1, 3]);
    /// ```
    fn filter_map<P, R>(self, filter_op: P) -> FilterMap<Self, P>
    where
        P: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        FilterMap::new(self, filter_op)
    }

    /// Maps every item to a sequential iterator and flattens the results.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<u32> = (1..4u32).into_par_iter().flat_map_iter(|n| 0..n).collect();
    /// assert_eq!(v, [0, 0, 1, 0, 1, 2]);
    /// ```
    fn flat_map_iter<F, SI>(self, map_op: F) -> FlatMapIter<Self, F>
    where
        F: Fn(Self::Item) -> SI + Sync + Send,
        SI: IntoIterator,
        SI::Item: Send,
    {
        FlatMapIter::new(self, map_op)
    }

    /// Maps every item to a parallel iterator and flattens the results, in order. The
    /// inner loops split at heartbeats like the outer one, so a few large inner
    /// iterators still spread over the pool. When the inner sequences are short, prefer
    /// [`flat_map_iter`](ParallelIterator::flat_map_iter): it does not start a parallel
    /// loop per item.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<u32> = (1..4u32).into_par_iter().flat_map(|n| 0..n).collect();
    /// assert_eq!(v, [0, 0, 1, 0, 1, 2]);
    /// let pairs = (0..100u64).into_par_iter()
    ///     .flat_map(|i| (0..i).into_par_iter().map(move |j| i * j))
    ///     .count();
    /// assert_eq!(pairs, 4950);
    /// ```
    fn flat_map<F, PI>(self, map_op: F) -> FlatMap<Self, F>
    where
        F: Fn(Self::Item) -> PI + Sync + Send,
        PI: IntoParallelIterator,
    {
        FlatMap::new(self, map_op)
    }

    /// Flattens items that are themselves parallel iterators (or convertible into them),
    /// in order.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let rows = vec![vec![1, 2], vec![], vec![3]];
    /// let flat: Vec<i32> = rows.into_par_iter().flatten().collect();
    /// assert_eq!(flat, [1, 2, 3]);
    /// ```
    fn flatten(self) -> Flatten<Self>
    where
        Self::Item: IntoParallelIterator,
    {
        Flatten::new(self)
    }

    /// Flattens items that are sequential iterators (or convertible into them), in
    /// order; each item's iterator runs sequentially on one worker.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let rows = vec![vec![1, 2], vec![], vec![3]];
    /// let flat: Vec<i32> = rows.into_par_iter().flatten_iter().collect();
    /// assert_eq!(flat, [1, 2, 3]);
    /// ```
    fn flatten_iter(self) -> FlattenIter<Self>
    where
        Self::Item: IntoIterator,
        <Self::Item as IntoIterator>::Item: Send,
    {
        FlattenIter::new(self)
    }

    /// Folds the items of every sequential piece into one value, starting from
    /// `identity()`; the result is a parallel iterator of those per-piece values (in
    /// order), usually followed by `reduce` or `sum`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let total: usize = (0..100usize).into_par_iter()
    ///     .fold(|| 0, |acc, x| acc + x)
    ///     .sum();
    /// assert_eq!(total, 4950);
    /// ```
    fn fold<T, ID, F>(self, identity: ID, fold_op: F) -> Fold<Self, ID, F>
    where
        F: Fn(T, Self::Item) -> T + Sync + Send,
        ID: Fn() -> T + Sync + Send,
        T: Send,
    {
        Fold::new(self, identity, fold_op)
    }

    /// Like [`fold`](ParallelIterator::fold), starting every piece from a clone of `init`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let letters: Vec<char> = "heartbeat".chars().collect();
    /// let pieces: Vec<String> = letters
    ///     .into_par_iter()
    ///     .fold_with(String::from("|"), |mut s, c| {
    ///         s.push(c);
    ///         s
    ///     })
    ///     .collect();
    /// // However the loop was split, every piece began as its own clone of "|", and the
    /// // pieces come out in order.
    /// assert!(pieces.iter().all(|p| p.starts_with('|')));
    /// assert_eq!(pieces.concat().replace('|', ""), "heartbeat");
    /// ```
    fn fold_with<F, T>(self, init: T, fold_op: F) -> FoldWith<Self, T, F>
    where
        F: Fn(T, Self::Item) -> T + Sync + Send,
        T: Send + Clone,
    {
        FoldWith::new(self, init, fold_op)
    }

    /// A fallible [`fold`](ParallelIterator::fold): each piece folds its items with
    /// `fold_op` until it fails; the result is a parallel iterator of the per-piece
    /// outcomes, usually followed by `try_reduce`. A failed piece skips its remaining
    /// items without calling `fold_op`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let total = (1..=100u32).into_par_iter()
    ///     .try_fold(|| 0u32, |acc, x| acc.checked_add(x))
    ///     .try_reduce(|| 0, u32::checked_add);
    /// assert_eq!(total, Some(5050));
    /// ```
    fn try_fold<T, R, ID, F>(self, identity: ID, fold_op: F) -> TryFold<Self, R, ID, F>
    where
        F: Fn(T, Self::Item) -> R + Sync + Send,
        ID: Fn() -> T + Sync + Send,
        R: private::Try<Output = T> + Send,
    {
        TryFold::new(self, identity, fold_op)
    }

    /// Like [`try_fold`](ParallelIterator::try_fold), starting every piece from a clone
    /// of `init`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let r: Result<u32, u32> = (1..=100u32).into_par_iter()
    ///     .try_fold_with(0, |acc, x| if x == 77 { Err(x) } else { Ok(acc + x) })
    ///     .try_reduce(|| 0, |a, b| Ok(a + b));
    /// assert_eq!(r, Err(77));
    /// ```
    fn try_fold_with<F, T, R>(self, init: T, fold_op: F) -> TryFoldWith<Self, T, F>
    where
        F: Fn(T, Self::Item) -> R + Sync + Send,
        R: private::Try<Output = T> + Send,
        T: Clone + Send,
    {
        TryFoldWith::new(self, init, fold_op)
    }

    /// The items of `self` followed by those of `chain`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<i32> = (0..3).into_par_iter().chain(7..9).collect();
    /// assert_eq!(v, [0, 1, 2, 7, 8]);
    /// ```
    fn chain<C>(self, chain: C) -> Chain<Self, C::Iter>
    where
        C: IntoParallelIterator<Item = Self::Item>,
    {
        Chain::new(self, chain.into_par_iter())
    }

    /// Puts a clone of `element` between every two adjacent items: no separator before
    /// the first item or after the last, none at all for fewer than two items, however
    /// the loop is split (also after adaptors such as `filter` that leave pieces empty).
    /// Over an indexed iterator of `n` items the result is indexed too, with `2n - 1`
    /// items (0 for `n` = 0), so it collects in place and can be reversed or zipped.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<i32> = (1..4).into_par_iter().intersperse(0).collect();
    /// assert_eq!(v, [1, 0, 2, 0, 3]);
    /// let odd: Vec<i32> = (0..8).into_par_iter().filter(|x| x % 2 == 1).intersperse(-1).collect();
    /// assert_eq!(odd, [1, -1, 3, -1, 5, -1, 7]);
    /// let s: String = ["a", "b", "c"].par_iter().copied().intersperse(", ").collect();
    /// assert_eq!(s, "a, b, c");
    /// assert_eq!((0..0).into_par_iter().intersperse(9).count(), 0);
    /// assert_eq!((0..100).into_par_iter().intersperse(-1).rev().len(), 199);
    /// ```
    ///
    /// # Panics
    /// On an indexed iterator of more than `usize::MAX / 2 + 1` items, asking for the
    /// length (`len`, and adaptors such as `zip` or `rev` that need it) panics: `2n - 1`
    /// overflows `usize`.
    fn intersperse(self, element: Self::Item) -> Intersperse<Self>
    where
        Self::Item: Clone,
    {
        Intersperse::new(self, element)
    }
}

/// A parallel iterator with a known length whose items can be addressed by position:
/// it can be split anywhere, zipped, enumerated, reversed, and collected in place.
///
/// ```
/// use sumac::prelude::*;
/// let a = [1, 2, 3];
/// let b = [10, 20, 30];
/// let v: Vec<i32> = a.par_iter().zip(&b).map(|(x, y)| x + y).rev().collect();
/// assert_eq!(v, [33, 22, 11]);
/// ```
#[allow(clippy::len_without_is_empty)]
pub trait IndexedParallelIterator: ParallelIterator {
    /// The number of items.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert_eq!((0..10).into_par_iter().len(), 10);
    /// assert_eq!((0..10).into_par_iter().step_by(3).len(), 4); // 0, 3, 6, 9
    /// assert_eq!([1, 2, 3].par_iter().zip(0..2).len(), 2);
    /// ```
    fn len(&self) -> usize;

    /// Hands this iterator's [`Producer`](plumbing::Producer) to `callback`.
    fn with_producer<CB>(self, callback: CB) -> CB::Output
    where
        CB: ProducerCallback<Self::Item>;

    /// Runs the iterator into `consumer`, splitting by position.
    fn drive<C>(self, consumer: C) -> C::Result
    where
        C: Consumer<Self::Item>,
    {
        plumbing::bridge(self, consumer)
    }

    /// Clears `target` and collects the items into it, in order, in place.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let mut v = vec![9; 3];
    /// (0..5).into_par_iter().collect_into_vec(&mut v);
    /// assert_eq!(v, [0, 1, 2, 3, 4]);
    /// ```
    fn collect_into_vec(self, target: &mut Vec<Self::Item>) {
        target.clear();
        let len = self.len();
        collect::collect_with_len(self, len, target);
    }

    /// Unzips pairs into two vectors, in order, replacing their contents.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let (mut small, mut big) = (vec![7], Vec::new());
    /// (0..4).into_par_iter().map(|i| (i, i * 100)).unzip_into_vecs(&mut small, &mut big);
    /// assert_eq!((small, big), (vec![0, 1, 2, 3], vec![0, 100, 200, 300]));
    /// ```
    fn unzip_into_vecs<A, B>(self, left: &mut Vec<A>, right: &mut Vec<B>)
    where
        Self: IndexedParallelIterator<Item = (A, B)>,
        A: Send,
        B: Send,
    {
        (*left, *right) = self.unzip();
    }

    /// Pairs the items with those of `zip_op`, stopping at the shorter of the two.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let names = ["ann", "bob", "cy"];
    /// let ages = vec![31, 27, 45, 60];
    /// let people: Vec<(&str, u32)> = names.par_iter().copied().zip(ages).collect();
    /// assert_eq!(people, [("ann", 31), ("bob", 27), ("cy", 45)]); // 60 has no partner
    /// ```
    fn zip<Z>(self, zip_op: Z) -> Zip<Self, Z::Iter>
    where
        Z: IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        Zip::new(self, zip_op.into_par_iter())
    }

    /// Like [`zip`](IndexedParallelIterator::zip), for two iterators of the same length.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let dot: i32 = [1, 2, 3].par_iter().zip_eq(&[4, 5, 6]).map(|(a, b)| a * b).sum();
    /// assert_eq!(dot, 32);
    /// ```
    ///
    /// # Panics
    /// If the two lengths differ.
    fn zip_eq<Z>(self, zip_op: Z) -> ZipEq<Self, Z::Iter>
    where
        Z: IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        let other = zip_op.into_par_iter();
        let (len, other_len) = (self.len(), other.len());
        assert_eq!(
            len, other_len,
            "zip_eq: the iterators have different lengths"
        );
        Zip::new(self, other)
    }

    /// The items of `self` and `other` in turns, `self` first, then the rest of the
    /// longer one.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<i32> = vec![1, 2, 3, 4].into_par_iter().interleave(vec![10, 20]).collect();
    /// assert_eq!(v, [1, 10, 2, 20, 3, 4]);
    /// ```
    fn interleave<I>(self, other: I) -> Interleave<Self, I::Iter>
    where
        I: IntoParallelIterator<Item = Self::Item>,
        I::Iter: IndexedParallelIterator<Item = Self::Item>,
    {
        Interleave::new(self, other.into_par_iter())
    }

    /// The items of `self` and `other` in turns, `self` first, until one of them runs
    /// out.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<i32> = vec![1, 2, 3, 4].into_par_iter().interleave_shortest(vec![10, 20]).collect();
    /// assert_eq!(v, [1, 10, 2, 20, 3]);
    /// ```
    fn interleave_shortest<I>(self, other: I) -> InterleaveShortest<Self, I::Iter>
    where
        I: IntoParallelIterator<Item = Self::Item>,
        I::Iter: IndexedParallelIterator<Item = Self::Item>,
    {
        InterleaveShortest::new(self, other.into_par_iter())
    }

    /// Runs the loop as a sequence of parallel loops over consecutive blocks of
    /// `block_size` items, each finished before the next starts: a search that finds its
    /// answer early never touches the later blocks.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let first = (0..1_000_000u32).into_par_iter().by_uniform_blocks(1000).find_first(|&x| x % 777 == 776);
    /// assert_eq!(first, Some(776));
    /// ```
    ///
    /// # Panics
    /// If `block_size` is 0.
    fn by_uniform_blocks(self, block_size: usize) -> UniformBlocks<Self> {
        UniformBlocks::new(self, block_size)
    }

    /// Like [`by_uniform_blocks`](IndexedParallelIterator::by_uniform_blocks), with blocks
    /// that double in size (1,024 items, then 2,048, ...): cheap for a search whose answer
    /// is early, and few blocks for one that runs through everything.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<u32> = (0..5000u32).into_par_iter().by_exponential_blocks().collect();
    /// assert_eq!(v, (0..5000).collect::<Vec<_>>());
    /// ```
    fn by_exponential_blocks(self) -> ExponentialBlocks<Self> {
        ExponentialBlocks::new(self)
    }

    /// Gathers the items into vectors of `chunk_size` items, in order (the last one may be
    /// shorter).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let rows: Vec<Vec<u32>> = (0..7u32).into_par_iter().chunks(3).collect();
    /// assert_eq!(rows, [vec![0, 1, 2], vec![3, 4, 5], vec![6]]);
    /// ```
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn chunks(self, chunk_size: usize) -> Chunks<Self> {
        Chunks::new(self, chunk_size)
    }

    /// Folds each group of `chunk_size` items (the last may be shorter) from
    /// `identity()`, in order: like [`chunks`](IndexedParallelIterator::chunks) followed
    /// by a fold of each chunk, without the vectors.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let sums: Vec<u32> = (1..=7u32).into_par_iter().fold_chunks(3, || 0, |a, x| a + x).collect();
    /// assert_eq!(sums, [6, 15, 7]);
    /// ```
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn fold_chunks<T, ID, F>(
        self,
        chunk_size: usize,
        identity: ID,
        fold_op: F,
    ) -> FoldChunks<Self, ID, F>
    where
        ID: Fn() -> T + Send + Sync,
        F: Fn(T, Self::Item) -> T + Send + Sync,
        T: Send,
    {
        FoldChunks::new(self, chunk_size, identity, fold_op)
    }

    /// Like [`fold_chunks`](IndexedParallelIterator::fold_chunks), starting each chunk
    /// from a clone of `init`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<String> = "abcde".chars().collect::<Vec<_>>().into_par_iter()
    ///     .fold_chunks_with(2, String::new(), |mut s, c| { s.push(c); s })
    ///     .collect();
    /// assert_eq!(v, ["ab", "cd", "e"]);
    /// ```
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn fold_chunks_with<T, F>(
        self,
        chunk_size: usize,
        init: T,
        fold_op: F,
    ) -> FoldChunksWith<Self, T, F>
    where
        T: Send + Clone,
        F: Fn(T, Self::Item) -> T + Send + Sync,
    {
        FoldChunksWith::new(self, chunk_size, init, fold_op)
    }

    /// The positions of the items that satisfy `predicate`, in order.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v = [1, 4, 2, 8, 5];
    /// let big: Vec<usize> = v.par_iter().positions(|&x| x > 3).collect();
    /// assert_eq!(big, [1, 3, 4]);
    /// ```
    fn positions<P>(self, predicate: P) -> Positions<Self, P>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        Positions::new(self, predicate)
    }

    /// Compares the items with those of `other` lexicographically, like [`Iterator::cmp`].
    ///
    /// ```
    /// use std::cmp::Ordering;
    /// use sumac::prelude::*;
    /// assert_eq!([1, 2, 3].par_iter().cmp(&[1, 2, 4]), Ordering::Less);
    /// assert_eq!([1, 2, 3].par_iter().cmp(&[1, 2]), Ordering::Greater);
    /// ```
    fn cmp<I>(self, other: I) -> Ordering
    where
        I: IntoParallelIterator<Item = Self::Item>,
        I::Iter: IndexedParallelIterator,
        Self::Item: Ord,
    {
        let other = other.into_par_iter();
        let by_len = self.len().cmp(&other.len());
        self.zip(other)
            .map(|(a, b)| a.cmp(&b))
            .find_first(|&order| order != Ordering::Equal)
            .unwrap_or(by_len)
    }

    /// Compares the items with those of `other` lexicographically, like
    /// [`Iterator::partial_cmp`].
    ///
    /// ```
    /// use std::cmp::Ordering;
    /// use sumac::prelude::*;
    /// assert_eq!([1.0, f64::NAN].par_iter().partial_cmp(&[1.0, 2.0]), None);
    /// assert_eq!([1.0, 2.0].par_iter().partial_cmp(&[1.0, 2.5]), Some(Ordering::Less));
    /// ```
    fn partial_cmp<I>(self, other: I) -> Option<Ordering>
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        let other = other.into_par_iter();
        let by_len = self.len().cmp(&other.len());
        self.zip(other)
            .map(|(a, b)| a.partial_cmp(&b))
            .find_first(|&order| order != Some(Ordering::Equal))
            .unwrap_or(Some(by_len))
    }

    /// Whether the items equal those of `other`, like [`Iterator::eq`].
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert!((0..100).into_par_iter().eq((0..100).collect::<Vec<_>>()));
    /// assert!((0..100).into_par_iter().ne(0..99));
    /// ```
    fn eq<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialEq<I::Item>,
    {
        let other = other.into_par_iter();
        self.len() == other.len() && self.zip(other).all(|(a, b)| a == b)
    }

    /// Whether the items differ from those of `other`, like [`Iterator::ne`].
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert!((0..5).into_par_iter().ne(vec![0, 1, 2, 3, 5]));
    /// assert!((0..5).into_par_iter().ne(0..4)); // a different length is a difference
    /// assert!(!(0..5).into_par_iter().ne(0..5));
    /// ```
    fn ne<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialEq<I::Item>,
    {
        !self.eq(other)
    }

    /// Whether the items are lexicographically less than those of `other`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert!([1, 2, 3].par_iter().lt(&[1, 2, 4]));
    /// assert!([1, 2].par_iter().lt(&[1, 2, 0])); // a proper prefix is less
    /// assert!(![1, 2, 3].par_iter().lt(&[1, 2, 3]));
    /// ```
    fn lt<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        self.partial_cmp(other) == Some(Ordering::Less)
    }

    /// Whether the items are lexicographically less than or equal to those of `other`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert!([1, 2, 3].par_iter().le(&[1, 2, 3]));
    /// assert!([1, 9, 9].par_iter().le(&[2]));
    /// assert!(![f64::NAN].par_iter().le(&[f64::NAN])); // NaN is not comparable
    /// ```
    fn le<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        matches!(
            self.partial_cmp(other),
            Some(Ordering::Less | Ordering::Equal)
        )
    }

    /// Whether the items are lexicographically greater than those of `other`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert!((0..10).into_par_iter().gt(0..9)); // a longer run with the same start
    /// assert!((0..10).into_par_iter().gt(vec![0, 1, 1, 7]));
    /// assert!(!(0..10).into_par_iter().gt(vec![0, 1, 5]));
    /// ```
    fn gt<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        self.partial_cmp(other) == Some(Ordering::Greater)
    }

    /// Whether the items are lexicographically greater than or equal to those of `other`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert!((0..10).into_par_iter().ge(0..10));
    /// assert!((5..10).into_par_iter().ge(0..100));
    /// assert!(![1.0, f64::NAN].par_iter().ge(&[1.0, 0.0])); // NaN is not comparable
    /// ```
    fn ge<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        matches!(
            self.partial_cmp(other),
            Some(Ordering::Greater | Ordering::Equal)
        )
    }

    /// Pairs every item with its position.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<(usize, char)> = ['a', 'b'].par_iter().copied().enumerate().collect();
    /// assert_eq!(v, [(0, 'a'), (1, 'b')]);
    /// ```
    fn enumerate(self) -> Enumerate<Self> {
        Enumerate::new(self)
    }

    /// Every `step`-th item, starting with the first.
    ///
    /// # Panics
    /// If `step` is 0.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<i32> = (0..10).into_par_iter().step_by(4).collect();
    /// assert_eq!(v, [0, 4, 8]);
    /// ```
    fn step_by(self, step: usize) -> StepBy<Self> {
        StepBy::new(self, step)
    }

    /// Skips the first `n` items.
    ///
    /// The skipped items are still produced (in parallel with the rest) and dropped, as
    /// `std` and Rayon do, so that the closures of the adaptors before `skip` run for
    /// every item, and a panic in one of them propagates.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use sumac::prelude::*;
    /// let v: Vec<i32> = (0..10).into_par_iter().skip(7).collect();
    /// assert_eq!(v, [7, 8, 9]);
    /// let calls = AtomicUsize::new(0);
    /// let kept = (0..10)
    ///     .into_par_iter()
    ///     .inspect(|_| {
    ///         calls.fetch_add(1, Ordering::Relaxed);
    ///     })
    ///     .skip(7)
    ///     .count();
    /// assert_eq!((kept, calls.into_inner()), (3, 10));
    /// ```
    ///
    /// # Panics
    /// If producing any item panics, skipped ones included.
    fn skip(self, n: usize) -> Skip<Self> {
        Skip::new(self, n)
    }

    /// Only the first `n` items.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<i32> = (0..10).into_par_iter().take(3).collect();
    /// assert_eq!(v, [0, 1, 2]);
    /// ```
    fn take(self, n: usize) -> Take<Self> {
        Take::new(self, n)
    }

    /// The items in reverse order.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v: Vec<u32> = (0..5u32).into_par_iter().rev().collect();
    /// assert_eq!(v, [4, 3, 2, 1, 0]);
    /// // Searches in order run on the reversed order: the first match is the last one.
    /// assert_eq!((0..1000).into_par_iter().rev().find_first(|x| x % 100 == 7), Some(907));
    /// ```
    fn rev(self) -> Rev<Self> {
        Rev::new(self)
    }

    /// Never splits the loop into pieces of fewer than `min` items (`fold` and every
    /// consumer see pieces of at least `min` items, unless the whole input is shorter).
    /// Heartbeat splitting makes this unnecessary for performance, but it is honoured.
    ///
    /// A loop runs its first items before it splits, and the items it already ran make
    /// a piece of their own: it splits only once they number at least `min` and the rest
    /// halves into two pieces of at least `min`. So unlike Rayon, which splits before
    /// running anything, sumac keeps a loop of fewer than `3 * min` items in one piece.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// // 1,000 items cannot make two pieces of at least 600: `fold` sees one piece.
    /// let pieces: Vec<Vec<u32>> = (0..1000u32)
    ///     .into_par_iter()
    ///     .with_min_len(600)
    ///     .fold(Vec::new, |mut v, x| {
    ///         v.push(x);
    ///         v
    ///     })
    ///     .collect();
    /// assert_eq!(pieces.len(), 1);
    /// assert_eq!(pieces[0], (0..1000).collect::<Vec<_>>());
    /// ```
    fn with_min_len(self, min: usize) -> MinLen<Self> {
        MinLen::new(self, min)
    }

    /// Splits the loop eagerly into pieces of at most `max` items. Heartbeat splitting
    /// makes this unnecessary for performance, but it is honoured.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let pieces: Vec<Vec<u32>> = (0..1000u32)
    ///     .into_par_iter()
    ///     .with_max_len(100)
    ///     .fold(Vec::new, |mut v, x| {
    ///         v.push(x);
    ///         v
    ///     })
    ///     .collect();
    /// assert!(pieces.len() >= 10);
    /// assert!(pieces.iter().all(|p| p.len() <= 100));
    /// assert_eq!(pieces.concat(), (0..1000).collect::<Vec<_>>());
    /// ```
    fn with_max_len(self, max: usize) -> MaxLen<Self> {
        MaxLen::new(self, max)
    }

    /// The position of some item matching `predicate` (not necessarily the first).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert_eq!([5, 6, 7].par_iter().position_any(|&x| x == 6), Some(1));
    /// ```
    fn position_any<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(predicate)
            .enumerate()
            .find_any(|&(_, b)| b)
            .map(|(i, _)| i)
    }

    /// [`position_any`](IndexedParallelIterator::position_any), under the name Rayon
    /// deprecated (kept so that code written for Rayon compiles, with the same warning).
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v = [4, 7, 1, 7];
    /// #[allow(deprecated)]
    /// let at = v.par_iter().position(|&x| x == 7);
    /// assert!(at == Some(1) || at == Some(3)); // any match, not the first
    /// ```
    #[doc(hidden)]
    #[deprecated(note = "parallel `position` does not search in order: use \
                         `position_any`, `position_first` or `position_last`")]
    fn position<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.position_any(predicate)
    }

    /// The position of the first item matching `predicate`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// assert_eq!([5, 6, 7, 6].par_iter().position_first(|&x| x == 6), Some(1));
    /// ```
    fn position_first<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(predicate)
            .enumerate()
            .find_first(|&(_, b)| b)
            .map(|(i, _)| i)
    }

    /// The position of the last item matching `predicate`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let v = [3, 8, 1, 8, 5];
    /// assert_eq!(v.par_iter().position_last(|&x| x == 8), Some(3));
    /// assert_eq!(v.par_iter().position_last(|&x| x > 10), None);
    /// ```
    fn position_last<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(predicate)
            .enumerate()
            .find_last(|&(_, b)| b)
            .map(|(i, _)| i)
    }
}

/// Conversion into a parallel iterator (the parallel [`IntoIterator`]).
///
/// Implemented for integer ranges, slices, vectors, options, and every parallel iterator.
///
/// ```
/// use sumac::prelude::*;
/// let v = vec![String::from("a"), String::from("b")];
/// let joined: String = v.into_par_iter().collect();
/// assert_eq!(joined, "ab");
/// ```
pub trait IntoParallelIterator {
    /// The parallel iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items.
    type Item: Send;
    /// Converts `self` into a parallel iterator.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let words = vec![String::from("par"), String::from("iter")];
    /// // The vector is moved in: the items are owned `String`s.
    /// let total: usize = words.into_par_iter().map(|w| w.len()).sum();
    /// assert_eq!(total, 7);
    /// let odd: Vec<u64> = (1..=9u64).into_par_iter().filter(|x| x % 2 == 1).collect();
    /// assert_eq!(odd, [1, 3, 5, 7, 9]);
    /// ```
    fn into_par_iter(self) -> Self::Iter;
}

impl<T: ParallelIterator> IntoParallelIterator for T {
    type Iter = T;
    type Item = T::Item;
    fn into_par_iter(self) -> T {
        self
    }
}

/// `par_iter()`: a parallel iterator over shared references (for everything whose
/// reference is [`IntoParallelIterator`]).
///
/// ```
/// use sumac::prelude::*;
/// let v = vec![1, 2, 3];
/// assert_eq!(v.par_iter().max(), Some(&3));
/// ```
pub trait IntoParallelRefIterator<'data> {
    /// The parallel iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items (usually `&'data T`).
    type Item: Send + 'data;
    /// A parallel iterator over `&self`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let scores = vec![40, 75, 90, 62];
    /// let passed = scores.par_iter().filter(|&&s| s >= 60).count();
    /// assert_eq!(passed, 3);
    /// assert_eq!(scores, [40, 75, 90, 62]); // only borrowed
    /// ```
    fn par_iter(&'data self) -> Self::Iter;
}

impl<'data, I: 'data + ?Sized> IntoParallelRefIterator<'data> for I
where
    &'data I: IntoParallelIterator,
{
    type Iter = <&'data I as IntoParallelIterator>::Iter;
    type Item = <&'data I as IntoParallelIterator>::Item;
    fn par_iter(&'data self) -> Self::Iter {
        self.into_par_iter()
    }
}

/// `par_iter_mut()`: a parallel iterator over mutable references.
///
/// ```
/// use sumac::prelude::*;
/// let mut v = vec![1, 2, 3];
/// v.par_iter_mut().for_each(|x| *x *= 2);
/// assert_eq!(v, [2, 4, 6]);
/// ```
pub trait IntoParallelRefMutIterator<'data> {
    /// The parallel iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items (usually `&'data mut T`).
    type Item: Send + 'data;
    /// A parallel iterator over `&mut self`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let mut grid = vec![[0u8; 4]; 3];
    /// grid.par_iter_mut()
    ///     .enumerate()
    ///     .for_each(|(row, cells)| cells.fill(row as u8));
    /// assert_eq!(grid, [[0; 4], [1; 4], [2; 4]]);
    /// ```
    fn par_iter_mut(&'data mut self) -> Self::Iter;
}

impl<'data, I: 'data + ?Sized> IntoParallelRefMutIterator<'data> for I
where
    &'data mut I: IntoParallelIterator,
{
    type Iter = <&'data mut I as IntoParallelIterator>::Iter;
    type Item = <&'data mut I as IntoParallelIterator>::Item;
    fn par_iter_mut(&'data mut self) -> Self::Iter {
        self.into_par_iter()
    }
}

/// Building a collection from a parallel iterator (the parallel [`FromIterator`]); used
/// by [`ParallelIterator::collect`].
///
/// ```
/// use sumac::prelude::*;
/// use std::collections::BTreeSet;
/// let s = BTreeSet::from_par_iter((0..5).into_par_iter().map(|x| x % 3));
/// assert_eq!(s.into_iter().collect::<Vec<_>>(), [0, 1, 2]);
/// ```
pub trait FromParallelIterator<T: Send> {
    /// Builds `Self` from the items of `par_iter`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// use std::collections::HashSet;
    ///
    /// let rems = HashSet::<u32>::from_par_iter((0..100u32).into_par_iter().map(|x| x % 7));
    /// assert_eq!(rems.len(), 7);
    /// // Anything convertible into a parallel iterator will do.
    /// let word = String::from_par_iter(vec!['o', 'k']);
    /// assert_eq!(word, "ok");
    /// ```
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>;
}

/// Extending a collection with the items of a parallel iterator (the parallel
/// [`Extend`]).
///
/// ```
/// use sumac::prelude::*;
/// let mut v = vec![0];
/// v.par_extend((1..4).into_par_iter());
/// assert_eq!(v, [0, 1, 2, 3]);
/// ```
pub trait ParallelExtend<T: Send> {
    /// Adds the items of `par_iter` to `self`.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let mut log = String::from("ids:");
    /// log.par_extend((1..=4).into_par_iter().map(|i| format!(" {i}")));
    /// assert_eq!(log, "ids: 1 2 3 4"); // appended in order
    /// ```
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = T>;
}

/// Runs an indexed iterator through its producer (the `drive_unindexed` of every
/// indexed iterator).
pub(crate) fn drive_indexed<I, C>(iter: I, consumer: C) -> C::Result
where
    I: IndexedParallelIterator,
    C: Consumer<I::Item>,
{
    plumbing::bridge(iter, consumer)
}

/// Sealed helper traits used in public signatures.
pub mod private {
    use std::ops::ControlFlow;

    /// Values that are either a success or a failure, for
    /// [`try_for_each`](super::ParallelIterator::try_for_each): implemented for `Option`,
    /// `Result` and `ControlFlow` (a stable stand-in for the unstable `std::ops::Try`).
    /// Also used by `try_reduce`, `try_reduce_with`, `try_fold` and `try_fold_with`.
    pub trait Try: Sealed {
        /// The success payload.
        type Output;
        /// Wraps a success.
        fn from_output(output: Self::Output) -> Self;
        /// Whether this is a failure (`None`, `Err`, `Break`).
        fn is_break(&self) -> bool;
        /// The success payload, or the failure itself.
        fn into_result(self) -> Result<Self::Output, Self>
        where
            Self: Sized;
    }

    /// Prevents implementations outside this crate.
    pub trait Sealed {}

    impl<T> Sealed for Option<T> {}
    impl<T, E> Sealed for Result<T, E> {}
    impl<B, C> Sealed for ControlFlow<B, C> {}

    impl<T> Try for Option<T> {
        type Output = T;
        fn from_output(output: T) -> Self {
            Some(output)
        }
        fn is_break(&self) -> bool {
            self.is_none()
        }
        fn into_result(self) -> Result<T, Self> {
            self.ok_or(None)
        }
    }

    impl<T, E> Try for Result<T, E> {
        type Output = T;
        fn from_output(output: T) -> Self {
            Ok(output)
        }
        fn is_break(&self) -> bool {
            self.is_err()
        }
        fn into_result(self) -> Result<T, Self> {
            self.map_err(Err)
        }
    }

    impl<B, C> Try for ControlFlow<B, C> {
        type Output = C;
        fn from_output(output: C) -> Self {
            ControlFlow::Continue(output)
        }
        fn is_break(&self) -> bool {
            matches!(self, ControlFlow::Break(_))
        }
        fn into_result(self) -> Result<C, Self> {
            match self {
                ControlFlow::Continue(output) => Ok(output),
                failure => Err(failure),
            }
        }
    }
}
