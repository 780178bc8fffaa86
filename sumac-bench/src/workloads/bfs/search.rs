//! The breadth-first searches. Each fills a parent array: `parent[key] = key`,
//! `parent[v]` = the vertex `v` was discovered from, [`NONE`] for vertices not
//! reached. Initialising the array is part of every search (as in Graph500's
//! reference code).
//!
//! - `seq`: the textbook queue.
//! - Level-synchronous top-down (`sumac`, `rayon`): a parallel `fold` over the
//!   frontier; each piece pushes the vertices it claims onto its own `Vec`, and
//!   `reduce` appends the smaller piece to the larger to form the next frontier.
//!   A vertex is claimed by one compare-and-swap of its parent from `NONE`
//!   (tried only after a plain load still sees `NONE`); the loop's end orders one
//!   level's writes before the next level's reads, so every access is `Relaxed`.
//! - Direction-optimising (Beamer, Asanović and Patterson, SC 2012; the GAP
//!   benchmark suite's rules and constants): top-down while the frontier's edges
//!   are few, else bottom-up, where every unreached vertex scans its neighbours
//!   for one in the frontier bitmap and takes the first as its parent. A
//!   bottom-up step writes each word of the next bitmap, and the parents of its
//!   64 vertices, from one loop item (a word is the bitmap's unit), so it needs no
//!   read-modify-write at all. The sequential twin runs the same steps in plain
//!   loops.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use super::graph::Graph;

/// The parent of a vertex not reached.
pub const NONE: u32 = u32::MAX;

/// Switch to bottom-up when the frontier's edges exceed the unexplored edges
/// divided by this (Beamer's alpha, as tuned in the GAP suite).
pub const ALPHA: usize = 15;
/// Stay bottom-up while the frontier grows or holds more than the vertices
/// divided by this (Beamer's beta, as tuned in the GAP suite).
pub const BETA: usize = 18;

/// Bits a bitmap word holds.
const WORD: usize = 64;

/// The bitmap words covering `n` vertices.
pub fn bitmap_words(n: usize) -> usize {
    n.div_ceil(WORD)
}

/// Queue-based BFS from `root` into `parent` (`queue` is scratch space).
pub fn seq_top_down(g: &Graph, root: u32, parent: &mut [u32], queue: &mut Vec<u32>) {
    parent.fill(NONE);
    parent[root as usize] = root;
    queue.clear();
    queue.push(root);
    let mut head = 0;
    while let Some(&u) = queue.get(head) {
        head += 1;
        for &v in g.neighbors(u) {
            if parent[v as usize] == NONE {
                parent[v as usize] = u;
                queue.push(v);
            }
        }
    }
}

/// Scratch space of the sequential direction-optimising search.
#[derive(Default)]
pub struct SeqScratch {
    frontier: Vec<u32>,
    next: Vec<u32>,
    front: Vec<u64>,
    curr: Vec<u64>,
}

/// Direction-optimising BFS from `root` into `parent`, sequentially.
pub fn seq_direction_optimizing(g: &Graph, root: u32, parent: &mut [u32], s: &mut SeqScratch) {
    let n = g.vertices();
    parent.fill(NONE);
    parent[root as usize] = root;
    s.front.resize(bitmap_words(n), 0);
    s.curr.resize(bitmap_words(n), 0);
    s.frontier.clear();
    s.frontier.push(root);
    let mut edges_to_check = g.adjacencies();
    let mut scout = g.degree(root);
    while !s.frontier.is_empty() {
        if scout > edges_to_check / ALPHA {
            s.front.fill(0);
            for &v in &s.frontier {
                s.front[v as usize / WORD] |= 1 << (v as usize % WORD);
            }
            let mut awake = s.frontier.len();
            let cells = std::cell::Cell::from_mut(&mut *parent).as_slice_of_cells();
            loop {
                let old = awake;
                awake = 0;
                for (w, word) in s.curr.iter_mut().enumerate() {
                    let front = &s.front;
                    let bits = bottom_up_word(
                        g,
                        w,
                        |u| front[u as usize / WORD] >> (u as usize % WORD) & 1 != 0,
                        |v| cells[v as usize].get(),
                        |v, p| cells[v as usize].set(p),
                    );
                    awake += bits.count_ones() as usize;
                    *word = bits;
                }
                std::mem::swap(&mut s.front, &mut s.curr);
                if awake < old && awake <= n / BETA {
                    break;
                }
            }
            s.frontier.clear();
            for (w, &word) in s.front.iter().enumerate() {
                push_bits(&mut s.frontier, w, word);
            }
            scout = 1;
        } else {
            edges_to_check = edges_to_check.saturating_sub(scout);
            scout = 0;
            s.next.clear();
            for &u in &s.frontier {
                for &v in g.neighbors(u) {
                    if parent[v as usize] == NONE {
                        parent[v as usize] = u;
                        s.next.push(v);
                        scout += g.degree(v);
                    }
                }
            }
            std::mem::swap(&mut s.frontier, &mut s.next);
        }
    }
}

/// One bottom-up step for the 64 vertices of bitmap word `w`: each unreached one
/// takes its first neighbour in the frontier as parent. Returns the word of the
/// vertices reached.
#[inline]
fn bottom_up_word(
    g: &Graph,
    w: usize,
    in_front: impl Fn(u32) -> bool,
    parent_of: impl Fn(u32) -> u32,
    mut set_parent: impl FnMut(u32, u32),
) -> u64 {
    let first = w * WORD;
    let last = (first + WORD).min(g.vertices());
    let mut bits = 0;
    for v in first..last {
        let v = v as u32;
        if parent_of(v) != NONE {
            continue;
        }
        for &u in g.neighbors(v) {
            if in_front(u) {
                set_parent(v, u);
                bits |= 1 << (v as usize % WORD);
                break;
            }
        }
    }
    bits
}

/// Appends the vertices of bitmap word `w` whose bits are set.
#[inline]
fn push_bits(out: &mut Vec<u32>, w: usize, mut word: u64) {
    while word != 0 {
        out.push((w * WORD) as u32 + word.trailing_zeros());
        word &= word - 1;
    }
}

/// Claims `v` for `u`: true if this call moved `v`'s parent from [`NONE`].
#[inline]
fn claim(parent: &[AtomicU32], v: u32, u: u32) -> bool {
    let p = &parent[v as usize];
    p.load(Relaxed) == NONE && p.compare_exchange(NONE, u, Relaxed, Relaxed).is_ok()
}

/// Joins two pieces of a frontier: the smaller appended to the larger (the
/// order of a frontier is irrelevant), and their degree sums added.
fn append_smaller(a: (Vec<u32>, usize), b: (Vec<u32>, usize)) -> (Vec<u32>, usize) {
    let ((mut big, x), (small, y)) = if a.0.len() >= b.0.len() {
        (a, b)
    } else {
        (b, a)
    };
    big.extend_from_slice(&small);
    (big, x + y)
}

/// Scratch space of the parallel searches: the parent array (shared by the
/// claiming threads) and the bitmaps of the direction-optimising search.
pub struct ParScratch {
    /// The parent array the searches fill.
    pub parent: Vec<AtomicU32>,
    front: Vec<AtomicU64>,
    curr: Vec<AtomicU64>,
}

impl ParScratch {
    /// Scratch space for a graph of `n` vertices.
    pub fn new(n: usize) -> ParScratch {
        let words = || (0..bitmap_words(n)).map(|_| AtomicU64::new(0)).collect();
        ParScratch {
            parent: (0..n).map(|_| AtomicU32::new(NONE)).collect(),
            front: words(),
            curr: words(),
        }
    }

    /// The parent array as plain values.
    pub fn parents(&self) -> Vec<u32> {
        self.parent.iter().map(|p| p.load(Relaxed)).collect()
    }
}

/// Generates the parallel searches for a crate with Rayon's iterator API.
macro_rules! par_searches {
    ($module:ident, $krate:ident) => {
        #[doc = concat!("Parallel searches on `", stringify!($krate), "`'s parallel iterators.")]
        pub mod $module {
            use std::sync::atomic::Ordering::Relaxed;

            use super::{
                append_smaller, bottom_up_word, claim, push_bits, Graph, ParScratch, ALPHA, BETA,
                NONE, WORD,
            };
            use $krate::prelude::*;

            /// One top-down level: the next frontier and, if `DEGREES`, the sum of
            /// its degrees (only the direction-optimising search needs it, and it
            /// costs a cache miss per claimed vertex).
            fn top_down_step<const DEGREES: bool>(
                g: &Graph,
                parent: &[std::sync::atomic::AtomicU32],
                frontier: &[u32],
            ) -> (Vec<u32>, usize) {
                // The closure owns copies of the references it reads (`move`), so
                // they are not reloaded through the environment for every edge.
                frontier
                    .par_iter()
                    .fold(
                        || (Vec::new(), 0),
                        move |(mut next, mut degrees), &u| {
                            for &v in g.neighbors(u) {
                                if claim(parent, v, u) {
                                    next.push(v);
                                    if DEGREES {
                                        degrees += g.degree(v);
                                    }
                                }
                            }
                            (next, degrees)
                        },
                    )
                    .reduce(|| (Vec::new(), 0), append_smaller)
            }

            /// Resets the parent array and claims the root.
            fn start(root: u32, s: &ParScratch) {
                s.parent.par_iter().for_each(|p| p.store(NONE, Relaxed));
                s.parent[root as usize].store(root, Relaxed);
            }

            /// Level-synchronous top-down BFS from `root` into `s.parent`.
            pub fn top_down(g: &Graph, root: u32, s: &ParScratch) {
                start(root, s);
                let mut frontier = vec![root];
                while !frontier.is_empty() {
                    frontier = top_down_step::<false>(g, &s.parent, &frontier).0;
                }
            }

            /// Direction-optimising BFS from `root` into `s.parent`.
            pub fn direction_optimizing(g: &Graph, root: u32, s: &mut ParScratch) {
                start(root, s);
                let n = g.vertices();
                let mut frontier = vec![root];
                let mut edges_to_check = g.adjacencies();
                let mut scout = g.degree(root);
                while !frontier.is_empty() {
                    if scout > edges_to_check / ALPHA {
                        s.front.par_iter().for_each(|w| w.store(0, Relaxed));
                        frontier.par_iter().for_each(|&v| {
                            s.front[v as usize / WORD].fetch_or(1 << (v as usize % WORD), Relaxed);
                        });
                        let mut awake = frontier.len();
                        loop {
                            let old = awake;
                            let (front, curr, parent) = (&s.front, &s.curr, &s.parent);
                            awake = curr
                                .par_iter()
                                .enumerate()
                                .map(move |(w, word)| {
                                    let bits = bottom_up_word(
                                        g,
                                        w,
                                        |u| {
                                            front[u as usize / WORD].load(Relaxed)
                                                >> (u as usize % WORD)
                                                & 1
                                                != 0
                                        },
                                        |v| parent[v as usize].load(Relaxed),
                                        |v, p| parent[v as usize].store(p, Relaxed),
                                    );
                                    word.store(bits, Relaxed);
                                    bits.count_ones() as usize
                                })
                                .sum();
                            std::mem::swap(&mut s.front, &mut s.curr);
                            if awake < old && awake <= n / BETA {
                                break;
                            }
                        }
                        frontier = s
                            .front
                            .par_iter()
                            .enumerate()
                            .fold(Vec::new, |mut out, (w, word)| {
                                push_bits(&mut out, w, word.load(Relaxed));
                                out
                            })
                            .reduce(Vec::new, |a, b| append_smaller((a, 0), (b, 0)).0);
                        scout = 1;
                    } else {
                        edges_to_check = edges_to_check.saturating_sub(scout);
                        (frontier, scout) = top_down_step::<true>(g, &s.parent, &frontier);
                    }
                }
            }
        }
    };
}

par_searches!(sumac_search, sumac);
par_searches!(rayon_search, rayon);
