//! `walk_tree_prefix`, `walk_tree_postfix` and `walk_tree`: every node of a tree given by
//! a root and a function from a node to its children.
//!
//! A piece of the walk is a depth-first traversal with an explicit stack of work (so a
//! tree of any depth walks without recursion), one unit of work per loop turn: *visit*
//! a node (push its children, first child on top) or, in postfix order, *emit* a node
//! whose children are done. Each unit's output is contiguous in the walk's order, and
//! the units on the stack come out top first. So when a heartbeat (or an idle worker's
//! request) arrives, the piece splits its stack: the upper half stays (it comes first),
//! the lower half is forked as a new piece, and their results are reduced in that order.
//!
//! Each fork nests the forking piece's continuation one level deeper, and unlike a
//! range, a stack's halves need not be halves of the work (the lower half of a chain's
//! stack is a few nodes waiting to be emitted). So, as with `par_bridge`, forks are
//! rationed: at most one piece per worker exists at a time (counting forks not yet
//! started), a piece forks again only after its last fork started elsewhere and after
//! it did some work of its own, and a piece forks at most once per worker of the pool
//! (the pieces it forked split on their own). Without that last rule, walking a chain of
//! 300,000 nodes overflowed a 96 KiB stack: each forked lower half was done at once,
//! and the piece forked again.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::driver::LoopPoll;
use super::plumbing::{self, Reducer, UnindexedConsumer, UnindexedFold};
use super::ParallelIterator;
use crate::join::{join_hinted, ForkSize};

/// Walks the tree under `root` in prefix order: each node before its children, children
/// in the order `children_of` gives them.
///
/// ```
/// use sumac::prelude::*;
/// // 4 has children 2 and 3; 3 has children 1 and 2.
/// let children = |&n: &u32| if n <= 2 { vec![] } else { vec![n / 2, n / 2 + 1] };
/// let order: Vec<u32> = sumac::iter::walk_tree_prefix(4, children).collect();
/// assert_eq!(order, [4, 2, 3, 1, 2]);
/// ```
pub fn walk_tree_prefix<S, B, I>(root: S, children_of: B) -> WalkTreePrefix<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
{
    WalkTreePrefix {
        walk: Walk { root, children_of },
    }
}

/// Walks the tree under `root` in postfix order: each node after its children, children
/// in the order `children_of` gives them.
///
/// ```
/// use sumac::prelude::*;
/// let children = |&n: &u32| if n <= 2 { vec![] } else { vec![n / 2, n / 2 + 1] };
/// let order: Vec<u32> = sumac::iter::walk_tree_postfix(4, children).collect();
/// assert_eq!(order, [2, 1, 2, 3, 4]);
/// ```
pub fn walk_tree_postfix<S, B, I>(root: S, children_of: B) -> WalkTreePostfix<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
{
    WalkTreePostfix {
        walk: Walk { root, children_of },
    }
}

/// Walks the tree under `root` in an unspecified order (sumac uses prefix order).
///
/// ```
/// use sumac::prelude::*;
/// let children = |&n: &u32| if n <= 2 { vec![] } else { vec![n / 2, n / 2 + 1] };
/// assert_eq!(sumac::iter::walk_tree(4, children).sum::<u32>(), 12);
/// ```
pub fn walk_tree<S, B, I>(root: S, children_of: B) -> WalkTree<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
{
    WalkTree {
        walk: Walk { root, children_of },
    }
}

#[derive(Clone, Debug)]
struct Walk<S, B> {
    root: S,
    children_of: B,
}

/// Declares the public walk iterators.
macro_rules! walk_iterator {
    ($($(#[$doc:meta])* $name:ident, postfix = $postfix:literal;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $name<S, B> {
            walk: Walk<S, B>,
        }

        impl<S, B, I> ParallelIterator for $name<S, B>
        where
            S: Send,
            B: Fn(&S) -> I + Send + Sync,
            I: IntoIterator<Item = S>,
        {
            type Item = S;
            fn drive_unindexed<C: UnindexedConsumer<S>>(self, consumer: C) -> C::Result {
                drive_walk(self.walk, $postfix, consumer)
            }
            /// The nodes have no positions: every piece of the walk covers the empty range.
            fn index_span(&self) -> usize {
                0
            }
        }
    )*};
}

walk_iterator! {
    /// The iterator returned by [`walk_tree_prefix`].
    WalkTreePrefix, postfix = false;
    /// The iterator returned by [`walk_tree_postfix`].
    WalkTreePostfix, postfix = true;
    /// The iterator returned by [`walk_tree`].
    WalkTree, postfix = false;
}

/// A unit of work of a piece of the walk.
enum Work<S> {
    /// Push the node's children; emit the node now (prefix) or after them (postfix).
    Visit(S),
    /// Emit the node (postfix: its children are done).
    Emit(S),
}

/// What the pieces of one walk share.
struct Shared<'w, B> {
    children_of: &'w B,
    postfix: bool,
    /// Pieces that exist (running, or forked and not yet started).
    pieces: AtomicUsize,
    /// The pool's number of workers (1: never split).
    max_pieces: usize,
}

fn drive_walk<S, B, I, C>(walk: Walk<S, B>, postfix: bool, consumer: C) -> C::Result
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
    C: UnindexedConsumer<S>,
{
    let Walk { root, children_of } = walk;
    crate::in_worker_single_aware(move |single_thread| {
        let shared = Shared {
            children_of: &children_of,
            postfix,
            pieces: AtomicUsize::new(1),
            max_pieces: if single_thread {
                1
            } else {
                crate::current_num_threads()
            },
        };
        walk_piece(
            &shared,
            vec![Work::Visit(root)],
            consumer,
            None,
            shared.max_pieces,
        )
    })
}

/// One piece: works through `stack` (top first). `sibling_started` is the flag of the
/// last piece this one forked; `forks_left` how many more times it may fork.
fn walk_piece<S, B, I, C>(
    shared: &Shared<'_, B>,
    mut stack: Vec<Work<S>>,
    consumer: C,
    sibling_started: Option<&AtomicBool>,
    forks_left: usize,
) -> C::Result
where
    S: Send,
    B: Fn(&S) -> I + Sync,
    I: IntoIterator<Item = S>,
    C: UnindexedConsumer<S>,
{
    let poll = LoopPoll::current();
    let mut folder = UnindexedFold::new(consumer);
    let mut worked = false;
    while let Some(work) = stack.pop() {
        if folder.full() {
            break;
        }
        let may_fork = worked && forks_left > 0 && !stack.is_empty();
        if may_fork && (poll.asked()) {
            let sibling_running =
                sibling_started.is_none_or(|started| started.load(Ordering::Relaxed));
            if sibling_running && shared.pieces.load(Ordering::Relaxed) < shared.max_pieces {
                stack.push(work);
                let (prefix, rest, reducer) = folder.detach();
                return reducer.reduce(prefix, fork_piece(shared, stack, rest, forks_left - 1));
            }
            poll.serve();
        }
        folder = match work {
            Work::Visit(node) => {
                let children = (shared.children_of)(&node);
                let folder = if shared.postfix {
                    stack.push(Work::Emit(node));
                    folder
                } else {
                    folder.consume(node)
                };
                let first_child = stack.len();
                stack.extend(children.into_iter().map(Work::Visit));
                stack[first_child..].reverse();
                folder
            }
            Work::Emit(node) => folder.consume(node),
        };
        worked = true;
    }
    folder.complete()
}

/// Splits `stack` (at least two units): the upper half stays with this piece (it comes
/// first in the walk's order), the lower half becomes a new piece, forked so that an
/// idle worker can take it at once.
fn fork_piece<S, B, I, C>(
    shared: &Shared<'_, B>,
    mut stack: Vec<Work<S>>,
    consumer: C,
    forks_left: usize,
) -> C::Result
where
    S: Send,
    B: Fn(&S) -> I + Sync,
    I: IntoIterator<Item = S>,
    C: UnindexedConsumer<S>,
{
    let lower: Vec<Work<S>> = stack.drain(..stack.len() / 2).collect();
    let (upper_consumer, lower_consumer, reducer) = plumbing::split_unindexed(consumer);
    let started = AtomicBool::new(false);
    shared.pieces.fetch_add(1, Ordering::Relaxed);
    let (upper, lower) = join_hinted(
        || walk_piece(shared, stack, upper_consumer, Some(&started), forks_left),
        || {
            started.store(true, Ordering::Relaxed);
            let result = walk_piece(shared, lower, lower_consumer, None, shared.max_pieces);
            shared.pieces.fetch_sub(1, Ordering::Relaxed);
            result
        },
        ForkSize::Big,
    );
    reducer.reduce(upper, lower)
}
