//! `unzip`, `partition` and `partition_map`: per-piece pairs of vectors, concatenated in
//! order, then handed to the target collections.

use either::Either;

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

pub(super) fn partition_map<I, A, B, P, L, R>(iter: I, predicate: &P) -> (A, B)
where
    I: ParallelIterator,
    A: Default + Send + ParallelExtend<L>,
    B: Default + Send + ParallelExtend<R>,
    P: Fn(I::Item) -> Either<L, R> + Sync,
    L: Send,
    R: Send,
{
    let pieces = collect_list(iter.fold(
        || (Vec::new(), Vec::new()),
        |(mut left, mut right), x| {
            match predicate(x) {
                Either::Left(l) => left.push(l),
                Either::Right(r) => right.push(r),
            }
            (left, right)
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
