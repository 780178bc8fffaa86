//! `unzip` and `partition`: per-piece pairs of vectors, concatenated in order, then
//! handed to the target collections.

use super::collect::{collect_list, concat};
use super::{ParallelExtend, ParallelIterator};

pub(super) fn unzip<I, A, B, FromA, FromB>(iter: I) -> (FromA, FromB)
where
    I: ParallelIterator<Item = (A, B)>,
    FromA: Default + Send + ParallelExtend<A>,
    FromB: Default + Send + ParallelExtend<B>,
    A: Send,
    B: Send,
{
    let pieces = collect_list(iter.fold(
        || (Vec::new(), Vec::new()),
        |(mut va, mut vb), (a, b)| {
            va.push(a);
            vb.push(b);
            (va, vb)
        },
    ));
    split_into(pieces.into_iter().flatten())
}

pub(super) fn partition<I, A, B, P>(iter: I, predicate: &P) -> (A, B)
where
    I: ParallelIterator,
    A: Default + Send + ParallelExtend<I::Item>,
    B: Default + Send + ParallelExtend<I::Item>,
    P: Fn(&I::Item) -> bool + Sync,
{
    let pieces = collect_list(iter.fold(
        || (Vec::new(), Vec::new()),
        |(mut yes, mut no), x| {
            if predicate(&x) {
                yes.push(x);
            } else {
                no.push(x);
            }
            (yes, no)
        },
    ));
    split_into(pieces.into_iter().flatten())
}

fn split_into<A, B, FromA, FromB>(pieces: impl Iterator<Item = (Vec<A>, Vec<B>)>) -> (FromA, FromB)
where
    FromA: Default + Send + ParallelExtend<A>,
    FromB: Default + Send + ParallelExtend<B>,
    A: Send,
    B: Send,
{
    let (la, lb): (
        std::collections::LinkedList<Vec<A>>,
        std::collections::LinkedList<Vec<B>>,
    ) = pieces.unzip();
    let (va, vb) = (concat(la), concat(lb));
    let mut fa = FromA::default();
    let mut fb = FromB::default();
    crate::join(|| fa.par_extend(va), || fb.par_extend(vb));
    (fa, fb)
}
