//! [`FromParallelIterator`] and [`ParallelExtend`] for the standard collections.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};
use std::ffi::{OsStr, OsString};
use std::hash::{BuildHasher, Hash};
use std::rc::Rc;
use std::sync::Arc;

use super::collect::{collect_list, collect_with_len, concat};
use super::{FromParallelIterator, IntoParallelIterator, ParallelExtend, ParallelIterator};

/// Collects into an ordered list of per-piece vectors.
fn list_of<I: IntoParallelIterator>(par_iter: I) -> LinkedList<Vec<I::Item>> {
    collect_list(par_iter.into_par_iter())
}

/// In place when the length is known; otherwise per-piece vectors appended in order.
impl<T: Send> ParallelExtend<T> for Vec<T> {
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = T>,
    {
        let iter = par_iter.into_par_iter();
        match iter.opt_len() {
            Some(len) => collect_with_len(iter, len, self),
            None => {
                let list = collect_list(iter);
                if self.is_empty() {
                    *self = concat(list);
                } else {
                    self.reserve(list.iter().map(Vec::len).sum());
                    for mut v in list {
                        self.append(&mut v);
                    }
                }
            }
        }
    }
}

impl<T: Send> FromParallelIterator<T> for Vec<T> {
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        let mut v = Vec::new();
        v.par_extend(par_iter);
        v
    }
}

impl<T: Send> FromParallelIterator<T> for Box<[T]> {
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        Vec::from_par_iter(par_iter).into_boxed_slice()
    }
}

impl<T: Send> ParallelExtend<T> for LinkedList<T> {
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = T>,
    {
        for v in list_of(par_iter) {
            self.extend(v);
        }
    }
}

impl<T: Send> FromParallelIterator<T> for LinkedList<T> {
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        let mut l = LinkedList::new();
        l.par_extend(par_iter);
        l
    }
}

/// Implements `ParallelExtend` + `FromParallelIterator` for a collection that is extended
/// sequentially with the per-piece vectors, in order.
macro_rules! extend_via_list {
    ($(#[$doc:meta])* impl[$($g:tt)*] $coll:ty, $item:ty, where $($bounds:tt)*) => {
        $(#[$doc])*
        impl<$($g)*> ParallelExtend<$item> for $coll
        where
            $($bounds)*
        {
            fn par_extend<I>(&mut self, par_iter: I)
            where
                I: IntoParallelIterator<Item = $item>,
            {
                let list = list_of(par_iter);
                self.reserve_for(list.iter().map(Vec::len).sum());
                for v in list {
                    self.extend(v);
                }
            }
        }

        impl<$($g)*> FromParallelIterator<$item> for $coll
        where
            $coll: Default,
            $($bounds)*
        {
            fn from_par_iter<I>(par_iter: I) -> Self
            where
                I: IntoParallelIterator<Item = $item>,
            {
                let mut c = <$coll>::default();
                c.par_extend(par_iter);
                c
            }
        }
    };
}

/// Reserving room before a sequential extend, where the collection supports it.
trait ReserveFor {
    fn reserve_for(&mut self, additional: usize);
}

impl<K: Eq + Hash, V, S: BuildHasher> ReserveFor for HashMap<K, V, S> {
    fn reserve_for(&mut self, additional: usize) {
        self.reserve(additional);
    }
}
impl<T: Eq + Hash, S: BuildHasher> ReserveFor for HashSet<T, S> {
    fn reserve_for(&mut self, additional: usize) {
        self.reserve(additional);
    }
}
impl<K, V> ReserveFor for BTreeMap<K, V> {
    fn reserve_for(&mut self, _additional: usize) {}
}
impl<T> ReserveFor for BTreeSet<T> {
    fn reserve_for(&mut self, _additional: usize) {}
}
impl<T> ReserveFor for VecDeque<T> {
    fn reserve_for(&mut self, additional: usize) {
        self.reserve(additional);
    }
}
impl<T: Ord> ReserveFor for BinaryHeap<T> {
    fn reserve_for(&mut self, additional: usize) {
        self.reserve(additional);
    }
}
impl ReserveFor for String {
    fn reserve_for(&mut self, _additional: usize) {}
}

extend_via_list!(impl[K, V, S] HashMap<K, V, S>, (K, V),
    where K: Eq + Hash + Send, V: Send, S: BuildHasher + Send);
extend_via_list!(impl['a, K, V, S] HashMap<K, V, S>, (&'a K, &'a V),
    where K: Eq + Hash + Copy + Send + Sync + 'a, V: Copy + Send + Sync + 'a, S: BuildHasher + Send);
extend_via_list!(impl[T, S] HashSet<T, S>, T,
    where T: Eq + Hash + Send, S: BuildHasher + Send);
extend_via_list!(impl['a, T, S] HashSet<T, S>, &'a T,
    where T: Eq + Hash + Copy + Send + Sync + 'a, S: BuildHasher + Send);
extend_via_list!(impl[K, V] BTreeMap<K, V>, (K, V), where K: Ord + Send, V: Send);
extend_via_list!(impl['a, K, V] BTreeMap<K, V>, (&'a K, &'a V),
    where K: Ord + Copy + Send + Sync + 'a, V: Copy + Send + Sync + 'a);
extend_via_list!(impl[T] BTreeSet<T>, T, where T: Ord + Send);
extend_via_list!(impl['a, T] BTreeSet<T>, &'a T, where T: Ord + Copy + Send + Sync + 'a);
extend_via_list!(impl[T] VecDeque<T>, T, where T: Send);
extend_via_list!(impl['a, T] VecDeque<T>, &'a T, where T: Copy + Send + Sync + 'a);
extend_via_list!(impl[T] BinaryHeap<T>, T, where T: Ord + Send);
extend_via_list!(impl['a, T] BinaryHeap<T>, &'a T, where T: Ord + Copy + Send + Sync + 'a);
extend_via_list!(impl[] String, char, where);
extend_via_list!(impl['a] String, &'a char, where);
extend_via_list!(impl['a] String, &'a str, where);
extend_via_list!(impl[] String, String, where);
extend_via_list!(impl['a] String, Cow<'a, str>, where);
extend_via_list!(impl[] String, Box<str>, where);
extend_via_list!(impl['a, T] LinkedList<T>, &'a T, where T: Copy + Send + Sync + 'a);
extend_via_list!(impl['a] OsString, &'a OsStr, where);
extend_via_list!(impl[] OsString, OsString, where);
extend_via_list!(impl['a] OsString, Cow<'a, OsStr>, where);

impl ReserveFor for OsString {
    fn reserve_for(&mut self, _additional: usize) {}
}
impl<T> ReserveFor for LinkedList<T> {
    fn reserve_for(&mut self, _additional: usize) {}
}

/// Copies the referenced items (in place when the length is known, as for owned items).
impl<'a, T: Copy + Send + Sync + 'a> ParallelExtend<&'a T> for Vec<T> {
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = &'a T>,
    {
        self.par_extend(par_iter.into_par_iter().copied());
    }
}

/// Implements `FromParallelIterator` for a shared slice (`Rc<[T]>`, `Arc<[T]>`) through a
/// `Vec` collected in order.
macro_rules! collect_shared_slice {
    ($($(#[$doc:meta])* $ptr:ident),*) => {$(
        $(#[$doc])*
        impl<T: Send> FromParallelIterator<T> for $ptr<[T]> {
            fn from_par_iter<I>(par_iter: I) -> Self
            where
                I: IntoParallelIterator<Item = T>,
            {
                Vec::from_par_iter(par_iter).into()
            }
        }
    )*};
}

collect_shared_slice!(
    /// Collects into a reference-counted slice, in order.
    ///
    /// ```
    /// use sumac::prelude::*;
    /// let squares: std::rc::Rc<[u32]> = (1..4u32).into_par_iter().map(|x| x * x).collect();
    /// assert_eq!(&*squares, [1, 4, 9]);
    /// ```
    Rc,
    /// Collects into an atomically reference-counted slice, in order.
    Arc
);

/// Implements `FromParallelIterator` for `Box<str>` through a `String`.
macro_rules! collect_boxed_str {
    ($([$($g:tt)*] $item:ty),*) => {$(
        impl<$($g)*> FromParallelIterator<$item> for Box<str> {
            fn from_par_iter<I>(par_iter: I) -> Self
            where
                I: IntoParallelIterator<Item = $item>,
            {
                String::from_par_iter(par_iter).into_boxed_str()
            }
        }
    )*};
}

collect_boxed_str!([] char, ['a] &'a char, ['a] &'a str, ['a] Cow<'a, str>, [] Box<str>, [] String);

/// Collects into an owned `Cow` (as Rayon does): the owned form of `C` collects the items.
///
/// ```
/// use std::borrow::Cow;
/// use sumac::prelude::*;
/// let text: Cow<'_, str> = ["a", "b", "c"].par_iter().copied().collect();
/// assert_eq!(text, "abc");
/// ```
impl<'a, C, T> FromParallelIterator<T> for Cow<'a, C>
where
    C: ToOwned + ?Sized,
    C::Owned: FromParallelIterator<T>,
    T: Send,
{
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        Cow::Owned(C::Owned::from_par_iter(par_iter))
    }
}

/// Runs the iterator for its side effects.
impl ParallelExtend<()> for () {
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = ()>,
    {
        par_iter.into_par_iter().for_each(|()| ());
    }
}

/// Runs the iterator for its side effects.
impl FromParallelIterator<()> for () {
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = ()>,
    {
        par_iter.into_par_iter().for_each(|()| ());
    }
}

/// Collects pairs into two collections, in order (as [`unzip`](ParallelIterator::unzip)).
///
/// ```
/// use sumac::prelude::*;
/// let (small, big): (Vec<u32>, Vec<u32>) = (0..3u32).into_par_iter().map(|i| (i, i * 100)).collect();
/// assert_eq!((small, big), (vec![0, 1, 2], vec![0, 100, 200]));
/// ```
impl<A, B, T, U> FromParallelIterator<(T, U)> for (A, B)
where
    A: Default + Send + ParallelExtend<T>,
    B: Default + Send + ParallelExtend<U>,
    T: Send,
    U: Send,
{
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = (T, U)>,
    {
        par_iter.into_par_iter().unzip()
    }
}

/// Extends two collections with the two sides of pairs, in order.
impl<A, B, T, U> ParallelExtend<(T, U)> for (A, B)
where
    A: Send + ParallelExtend<T>,
    B: Send + ParallelExtend<U>,
    T: Send,
    U: Send,
{
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = (T, U)>,
    {
        let (left, right): (Vec<T>, Vec<U>) = par_iter.into_par_iter().unzip();
        let (a, b) = self;
        crate::join(|| a.par_extend(left), || b.par_extend(right));
    }
}

/// Collects the `Some` values, or returns `None` if any item is `None`.
impl<C, T> FromParallelIterator<Option<T>> for Option<C>
where
    C: FromParallelIterator<T>,
    T: Send,
{
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = Option<T>>,
    {
        let saw_none = std::sync::atomic::AtomicBool::new(false);
        let c = par_iter
            .into_par_iter()
            .map(|x| {
                if x.is_none() {
                    saw_none.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                x
            })
            .filter_map(|x| x)
            .collect();
        if saw_none.into_inner() {
            None
        } else {
            Some(c)
        }
    }
}

/// Collects the `Ok` values, or returns an error (one of them when several items fail).
impl<C, T, E> FromParallelIterator<Result<T, E>> for Result<C, E>
where
    C: FromParallelIterator<T>,
    T: Send,
    E: Send,
{
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = Result<T, E>>,
    {
        let error = std::sync::Mutex::new(None::<E>);
        let c = par_iter
            .into_par_iter()
            .map(|x| match x {
                Ok(v) => Some(v),
                Err(e) => {
                    let mut slot = error.lock().unwrap_or_else(|p| p.into_inner());
                    if slot.is_none() {
                        *slot = Some(e);
                    }
                    None
                }
            })
            .filter_map(|x| x)
            .collect();
        match error.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(e),
            None => Ok(c),
        }
    }
}
