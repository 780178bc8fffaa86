//! The traits needed to use parallel iterators and parallel slice methods:
//! `use sumac::prelude::*;`.
//!
//! ```
//! use sumac::prelude::*;
//! let mut v = vec![3, 1, 2];
//! v.par_sort();
//! assert_eq!(v.par_iter().map(|x| x * 2).collect::<Vec<_>>(), [2, 4, 6]);
//! ```

pub use crate::iter::collections::ParallelDrainFull;
pub use crate::iter::vec::ParallelDrainRange;
pub use crate::iter::{
    FromParallelIterator, IndexedParallelIterator, IntoParallelIterator, IntoParallelRefIterator,
    IntoParallelRefMutIterator, ParallelBridge, ParallelExtend, ParallelIterator,
};
pub use crate::slice::{ParallelSlice, ParallelSliceMut};
pub use crate::str::ParallelString;
