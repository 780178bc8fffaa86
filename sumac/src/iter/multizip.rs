//! `MultiZip`: a tuple of indexed parallel iterators (or things convertible into them)
//! iterated in lock step, as Rayon's `(a, b, c).into_par_iter()`.
//!
//! ```
//! use sumac::prelude::*;
//! let xs = [1, 2, 3];
//! let mut ys = [0; 3];
//! (&xs, &mut ys).into_par_iter().for_each(|(x, y)| *y = 10 * x);
//! assert_eq!(ys, [10, 20, 30]);
//! let sums: Vec<i32> = (&xs, &ys, 0..3).into_par_iter().map(|(x, y, i)| x + y + i).collect();
//! assert_eq!(sums, [11, 23, 35]);
//! ```

use super::plumbing::{ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

/// Parallel iterators iterated in lock step, stopping at the shortest; see the module
/// documentation.
#[derive(Clone, Debug)]
pub struct MultiZip<T> {
    tuple: T,
}

/// The type `&'a T` (`shared`) or `&'a mut T` (`mut`).
macro_rules! reference_to {
    (shared $t:ty) => { &'a $t };
    (mut $t:ty) => { &'a mut $t };
}

/// Implements `IntoParallelIterator` for a `shared` or `mut` reference to a tuple: its
/// parts are zipped by that kind of reference, as in `(a, b).par_iter()` and
/// `(a, b).par_iter_mut()`.
macro_rules! tuple_by_reference {
    ($kind:tt $first:ident, $($rest:ident),*) => {
        impl<'a, $first, $($rest),*> IntoParallelIterator for reference_to!($kind ($first, $($rest),*))
        where
            reference_to!($kind $first): IntoParallelIterator,
            <reference_to!($kind $first) as IntoParallelIterator>::Iter: IndexedParallelIterator,
            $(reference_to!($kind $rest): IntoParallelIterator,
              <reference_to!($kind $rest) as IntoParallelIterator>::Iter: IndexedParallelIterator,)*
        {
            type Iter = MultiZip<(
                <reference_to!($kind $first) as IntoParallelIterator>::Iter,
                $(<reference_to!($kind $rest) as IntoParallelIterator>::Iter),*
            )>;
            type Item = <Self::Iter as ParallelIterator>::Item;
            #[allow(non_snake_case)]
            fn into_par_iter(self) -> Self::Iter {
                let ($first, $($rest),*) = self;
                MultiZip {
                    tuple: ($first.into_par_iter(), $($rest.into_par_iter()),*),
                }
            }
        }
    };
}

/// Implements `MultiZip` for one tuple arity: the first iterator zipped with each next
/// one, and the nested pairs flattened into a tuple.
macro_rules! multizip {
    ($first:ident $(, $rest:ident)* => |$nested:pat_param| $flat:expr) => {
        impl<$first, $($rest),*> IntoParallelIterator for ($first, $($rest),*)
        where
            $first: IntoParallelIterator,
            $first::Iter: IndexedParallelIterator,
            $($rest: IntoParallelIterator, $rest::Iter: IndexedParallelIterator,)*
        {
            type Iter = MultiZip<($first::Iter, $($rest::Iter),*)>;
            type Item = ($first::Item, $($rest::Item),*);
            #[allow(non_snake_case)]
            fn into_par_iter(self) -> Self::Iter {
                let ($first, $($rest),*) = self;
                MultiZip {
                    tuple: ($first.into_par_iter(), $($rest.into_par_iter()),*),
                }
            }
        }

        tuple_by_reference!(shared $first, $($rest),*);
        tuple_by_reference!(mut $first, $($rest),*);

        impl<$first, $($rest),*> ParallelIterator for MultiZip<($first, $($rest),*)>
        where
            $first: IndexedParallelIterator,
            $($rest: IndexedParallelIterator,)*
        {
            type Item = ($first::Item, $($rest::Item),*);
            fn drive_unindexed<Con: UnindexedConsumer<Self::Item>>(self, consumer: Con) -> Con::Result {
                super::drive_indexed(self, consumer)
            }
            fn opt_len(&self) -> Option<usize> {
                Some(IndexedParallelIterator::len(self))
            }
        }

        impl<$first, $($rest),*> IndexedParallelIterator for MultiZip<($first, $($rest),*)>
        where
            $first: IndexedParallelIterator,
            $($rest: IndexedParallelIterator,)*
        {
            #[allow(non_snake_case)]
            fn len(&self) -> usize {
                let ($first, $($rest),*) = &self.tuple;
                $first.len()$(.min($rest.len()))*
            }
            #[allow(non_snake_case)]
            fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
                let ($first, $($rest),*) = self.tuple;
                $first$(.zip($rest))*.map(|$nested| $flat).with_producer(callback)
            }
        }
    };
}

multizip!(A => |a| (a,));
multizip!(A, B => |(a, b)| (a, b));
multizip!(A, B, C => |((a, b), c)| (a, b, c));
multizip!(A, B, C, D => |(((a, b), c), d)| (a, b, c, d));
multizip!(A, B, C, D, E => |((((a, b), c), d), e)| (a, b, c, d, e));
multizip!(A, B, C, D, E, F => |(((((a, b), c), d), e), f)| (a, b, c, d, e, f));
multizip!(A, B, C, D, E, F, G => |((((((a, b), c), d), e), f), g)| (a, b, c, d, e, f, g));
multizip!(A, B, C, D, E, F, G, H => |(((((((a, b), c), d), e), f), g), h)| (a, b, c, d, e, f, g, h));
multizip!(A, B, C, D, E, F, G, H, I => |((((((((a, b), c), d), e), f), g), h), i)| (a, b, c, d, e, f, g, h, i));
multizip!(A, B, C, D, E, F, G, H, I, J => |(((((((((a, b), c), d), e), f), g), h), i), j)| (a, b, c, d, e, f, g, h, i, j));
multizip!(A, B, C, D, E, F, G, H, I, J, K => |((((((((((a, b), c), d), e), f), g), h), i), j), k)| (a, b, c, d, e, f, g, h, i, j, k));
multizip!(A, B, C, D, E, F, G, H, I, J, K, L => |(((((((((((a, b), c), d), e), f), g), h), i), j), k), l)| (a, b, c, d, e, f, g, h, i, j, k, l));
