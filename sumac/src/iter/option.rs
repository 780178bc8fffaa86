//! Parallel iterators over an `Option` (zero or one item), or over the `Ok` value of a
//! `Result` (see [`result`](super::result)).
//!
//! ```
//! use sumac::prelude::*;
//! assert_eq!(Some(3).into_par_iter().map(|x| x * 2).sum::<i32>(), 6);
//! assert_eq!(None::<i32>.into_par_iter().count(), 0);
//! let ok: Result<i32, String> = Ok(4);
//! assert_eq!((&ok).into_par_iter().copied().collect::<Vec<_>>(), [4]);
//! assert_eq!(Err::<i32, _>("no").into_par_iter().count(), 0);
//! ```

use super::plumbing::{bridge, Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

/// A parallel iterator over the item of an `Option`, if any.
#[derive(Clone, Debug)]
pub struct IntoIter<T> {
    opt: Option<T>,
}

impl<T: Send> IntoParallelIterator for Option<T> {
    type Iter = IntoIter<T>;
    type Item = T;
    fn into_par_iter(self) -> IntoIter<T> {
        IntoIter { opt: self }
    }
}

impl<'a, T: Sync> IntoParallelIterator for &'a Option<T> {
    type Iter = IntoIter<&'a T>;
    type Item = &'a T;
    fn into_par_iter(self) -> IntoIter<&'a T> {
        IntoIter { opt: self.as_ref() }
    }
}

impl<'a, T: Send> IntoParallelIterator for &'a mut Option<T> {
    type Iter = IntoIter<&'a mut T>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> IntoIter<&'a mut T> {
        IntoIter { opt: self.as_mut() }
    }
}

impl<T: Send, E> IntoParallelIterator for Result<T, E> {
    type Iter = IntoIter<T>;
    type Item = T;
    fn into_par_iter(self) -> IntoIter<T> {
        IntoIter { opt: self.ok() }
    }
}

impl<'a, T: Sync, E> IntoParallelIterator for &'a Result<T, E> {
    type Iter = IntoIter<&'a T>;
    type Item = &'a T;
    fn into_par_iter(self) -> IntoIter<&'a T> {
        IntoIter {
            opt: self.as_ref().ok(),
        }
    }
}

impl<'a, T: Send, E> IntoParallelIterator for &'a mut Result<T, E> {
    type Iter = IntoIter<&'a mut T>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> IntoIter<&'a mut T> {
        IntoIter {
            opt: self.as_mut().ok(),
        }
    }
}

impl<T: Send> ParallelIterator for IntoIter<T> {
    type Item = T;
    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        bridge(self, consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.opt.is_some() as usize)
    }
}

impl<T: Send> IndexedParallelIterator for IntoIter<T> {
    fn len(&self) -> usize {
        self.opt.is_some() as usize
    }
    fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
        callback.callback(OptionProducer { opt: self.opt })
    }
}

struct OptionProducer<T> {
    opt: Option<T>,
}

impl<T: Send> Producer for OptionProducer<T> {
    type Item = T;
    type IntoIter = std::option::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.opt.into_iter()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        if index == 0 {
            (OptionProducer { opt: None }, self)
        } else {
            (self, OptionProducer { opt: None })
        }
    }
}
