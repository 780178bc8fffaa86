//! tree-sum: the Spice benchmark. A binary tree of boxed nodes holding the values
//! `1..=N` (`value = from + (to - from) / 2` for the balanced shape) is summed by
//! plain recursion (`seq`) or with one fork per node that has two children.

use crate::impls::{BranchFloorJoin, Ctx, Impl, Join, RayonJoin, SumacJoin};
use crate::workloads::{SplitMix64, Workload};

/// A tree node, laid out like the Spice/Rayon benchmark's Rust baseline (allocated in
/// pre-order like the Spice Zig benchmark: see [`Node::build`]).
pub struct Node {
    value: i64,
    left: Option<Box<Node>>,
    right: Option<Box<Node>>,
}

/// How each node's range `from..=to` is split into its value and two subtrees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Shape {
    /// The split point is the middle: a perfectly balanced tree (the Spice benchmark).
    Balanced,
    /// The split point sits at 7/8 of the range: every left subtree holds 7/8 of
    /// the nodes (depth about 5.2 log2 N; a true chain would have no parallelism).
    LeftDeep,
    /// The split point is drawn uniformly from the range (seeded).
    Random,
}

impl Shape {
    /// The name used on the command line and in bench names.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Balanced => "balanced",
            Shape::LeftDeep => "left-deep",
            Shape::Random => "random",
        }
    }
}

impl Node {
    /// Builds a tree holding the values `from..=to` (`from <= to`) in the given shape.
    pub fn build(from: i64, to: i64, shape: Shape, rng: &mut SplitMix64) -> Node {
        *Node::build_boxed(from, to, shape, rng)
    }

    /// Allocates each node *before* its children (pre-order), as the Spice benchmark's
    /// Zig code does (`allocator.create(Node)`, then the subtrees). The layout matters:
    /// a left-first traversal of a pre-order tree walks memory upwards, which the
    /// hardware prefetcher follows; a tree whose nodes are boxed after their children
    /// (post-order, as in the Spice repository's Rust example) instead favours
    /// right-first traversals such as Chili's `join`, which runs its second closure
    /// first. See bench/README.md.
    fn build_boxed(from: i64, to: i64, shape: Shape, rng: &mut SplitMix64) -> Box<Node> {
        let value = match shape {
            Shape::Balanced => from + (to - from) / 2,
            Shape::LeftDeep => to - (to - from) / 8,
            Shape::Random => from + rng.below((to - from + 1) as u64) as i64,
        };
        let mut node = Box::new(Node {
            value,
            left: None,
            right: None,
        });
        if value > from {
            node.left = Some(Node::build_boxed(from, value - 1, shape, rng));
        }
        if value < to {
            node.right = Some(Node::build_boxed(value + 1, to, shape, rng));
        }
        node
    }

    /// The tree's depth (a single node has depth 1).
    #[cfg(test)]
    pub fn depth(&self) -> usize {
        let l = self.left.as_ref().map_or(0, |c| c.depth());
        let r = self.right.as_ref().map_or(0, |c| c.depth());
        1 + l.max(r)
    }
}

/// The work done per node, monomorphised so `--work 0` is the exact Spice kernel.
trait LeafWork: Copy + Send + Sync {
    fn val(self, v: i64) -> i64;
}

/// The Spice benchmark's per-node work: just the value.
#[derive(Clone, Copy)]
struct Plain;

impl LeafWork for Plain {
    #[inline(always)]
    fn val(self, v: i64) -> i64 {
        v
    }
}

/// `--work K`: K rounds of a multiply-xorshift hash of the value.
#[derive(Clone, Copy)]
struct Hashed(u64);

impl LeafWork for Hashed {
    #[inline(always)]
    fn val(self, v: i64) -> i64 {
        let mut x = v as u64;
        for _ in 0..self.0 {
            x = (x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        }
        x as i64
    }
}

fn sum_seq<L: LeafWork>(node: &Node, l: L) -> i64 {
    let mut r = l.val(node.value);
    if let Some(c) = &node.left {
        r = r.wrapping_add(sum_seq(c, l));
    }
    if let Some(c) = &node.right {
        r = r.wrapping_add(sum_seq(c, l));
    }
    r
}

fn sum_join<J: Join, L: LeafWork>(node: &Node, l: L) -> i64 {
    let v = l.val(node.value);
    match (&node.left, &node.right) {
        (Some(a), Some(b)) => {
            let (x, y) = J::join(|| sum_join::<J, L>(a, l), || sum_join::<J, L>(b, l));
            v.wrapping_add(x).wrapping_add(y)
        }
        (Some(c), None) | (None, Some(c)) => v.wrapping_add(sum_join::<J, L>(c, l)),
        (None, None) => v,
    }
}

fn sum_chili<L: LeafWork>(node: &Node, l: L, s: &mut chili::Scope<'_>) -> i64 {
    let v = l.val(node.value);
    match (&node.left, &node.right) {
        (Some(a), Some(b)) => {
            let (x, y) = s.join(|s| sum_chili(a, l, s), |s| sum_chili(b, l, s));
            v.wrapping_add(x).wrapping_add(y)
        }
        (Some(c), None) | (None, Some(c)) => v.wrapping_add(sum_chili(c, l, s)),
        (None, None) => v,
    }
}

/// The parallel baseline: expand the top of the tree until there is one subtree
/// per thread, sum those on scoped threads (round robin when the count is not a
/// power of two) and the expanded top nodes on the calling thread.
fn sum_static<L: LeafWork>(root: &Node, l: L, threads: usize) -> i64 {
    if threads <= 1 {
        return sum_seq(root, l);
    }
    let mut top = 0i64;
    let mut frontier = vec![root];
    while frontier.len() < threads {
        let mut next = Vec::with_capacity(frontier.len() * 2);
        for n in &frontier {
            top = top.wrapping_add(l.val(n.value));
            next.extend(n.left.as_deref());
            next.extend(n.right.as_deref());
        }
        if next.is_empty() {
            return top;
        }
        frontier = next;
    }
    let part = |t: usize| {
        frontier
            .iter()
            .skip(t)
            .step_by(threads)
            .fold(0i64, |acc, n| acc.wrapping_add(sum_seq(n, l)))
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (1..threads).map(|t| s.spawn(move || part(t))).collect();
        let mut total = top.wrapping_add(part(0));
        for h in handles {
            total = total.wrapping_add(h.join().expect("static worker panicked"));
        }
        total
    })
}

fn sum_in<L: LeafWork>(root: &Node, l: L, ctx: &mut Ctx<'_, '_>) -> i64 {
    match ctx {
        Ctx::Seq => sum_seq(root, l),
        Ctx::Sumac => sum_join::<SumacJoin, L>(root, l),
        Ctx::Rayon { .. } => sum_join::<RayonJoin, L>(root, l),
        Ctx::Chili(s) => sum_chili(root, l, s),
        Ctx::Static { threads } => sum_static(root, l, *threads),
        Ctx::Forte => unreachable!("tree-sum has no forte variant"),
        Ctx::ChannelPool { .. } => unreachable!("tree-sum has no channel-pool variant"),
        Ctx::BranchFloor => sum_join::<BranchFloorJoin, L>(root, l),
    }
}

/// The tree-sum workload: a tree built once, summed with `param` = work rounds per node.
pub struct TreeSum {
    root: Node,
}

impl TreeSum {
    /// Builds the tree of `nodes` nodes (values `1..=nodes`) in `shape`, seeded by `seed`.
    pub fn new(nodes: u64, shape: Shape, seed: u64) -> TreeSum {
        assert!(nodes > 0, "tree needs at least one node");
        let mut rng = SplitMix64::new(seed);
        TreeSum {
            root: Node::build(1, nodes as i64, shape, &mut rng),
        }
    }

    /// Depth of the tree.
    #[cfg(test)]
    pub fn depth(&self) -> usize {
        self.root.depth()
    }
}

impl Workload for TreeSum {
    type State = ();
    const SEQ_USES_PARAM: bool = true;

    fn new_state(&self) {}

    fn supports(imp: Impl) -> bool {
        matches!(
            imp,
            Impl::Seq | Impl::Sumac | Impl::Rayon | Impl::Chili | Impl::Static | Impl::BranchFloor
        )
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, _state: &mut (), work: u64) -> u64 {
        let sum = if work == 0 {
            sum_in(&self.root, Plain, ctx)
        } else {
            sum_in(&self.root, Hashed(work), ctx)
        };
        sum as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_holds_every_value_once() {
        for shape in [Shape::Balanced, Shape::LeftDeep, Shape::Random] {
            let t = TreeSum::new(1000, shape, 7);
            let mut ctx = Ctx::Seq;
            assert_eq!(t.run(&mut ctx, &mut (), 0), 1000 * 1001 / 2, "{shape:?}");
        }
    }

    #[test]
    fn balanced_depth_is_logarithmic() {
        assert_eq!(TreeSum::new(1023, Shape::Balanced, 0).depth(), 10);
        assert!(TreeSum::new(100_000, Shape::LeftDeep, 0).depth() < 120);
    }

    #[test]
    fn static_matches_seq_for_odd_thread_counts() {
        let t = TreeSum::new(5000, Shape::Random, 3);
        let want = t.run(&mut Ctx::Seq, &mut (), 3);
        for threads in [1, 2, 3, 5, 8] {
            assert_eq!(t.run(&mut Ctx::Static { threads }, &mut (), 3), want);
        }
    }
}
