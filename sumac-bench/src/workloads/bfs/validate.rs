//! Graph500's validation of a BFS tree (a parent array) against the input edge
//! list, as its reference code does it, with the specification's five checks:
//!
//! 1. the tree has no cycle and its root is the key (`parent[key] = key`);
//! 2. each tree edge connects vertices whose levels differ by exactly one: every
//!    reached vertex's parent is a vertex, and a reached one;
//! 3. every input edge connects vertices whose levels differ by at most one, or
//!    two vertices both unreached;
//! 4. the tree spans exactly the key's component: no input edge joins a reached
//!    vertex to an unreached one;
//! 5. every tree edge `{v, parent[v]}` is an input edge.
//!
//! A vertex's level is its depth in the tree, found by walking up its parent
//! chain (each vertex is walked once; a chain that meets itself is a cycle).
//! The edge list is scanned once, in parallel, for checks 3 to 5, counting the
//! input edges with both ends reached (self-loops and duplicates included, as the
//! reference counts them): the edges a search traversed, for TEPS. All checks
//! run; the failure reported is that of the lowest-numbered failing check.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use rayon::prelude::*;

use super::kronecker::Edge;
use super::search::NONE;

/// One of the specification's five checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Check {
    /// 1: no cycle, and the root is the key.
    TreeRootedAtKey = 1,
    /// 2: tree edges join levels that differ by one.
    TreeEdgeLevels = 2,
    /// 3: input edges join levels that differ by at most one.
    EdgeLevels = 3,
    /// 4: the tree spans the key's component exactly.
    SpansComponent = 4,
    /// 5: tree edges are input edges.
    TreeEdgesAreEdges = 5,
}

/// A tree that fails validation: the lowest-numbered failing check and an example.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// The check that failed.
    pub check: Check,
    /// What failed, with a vertex or edge as example.
    pub detail: String,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "BFS tree fails check {} ({:?}): {}",
            self.check as u8, self.check, self.detail
        )
    }
}

/// A valid tree's summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Valid {
    /// Input edges with both ends in the tree (the edges the search traversed).
    pub edges: u64,
    /// Vertices reached.
    pub vertices: u64,
    /// Checksum of the level of every vertex (the same for every correct tree).
    pub levels_checksum: u64,
}

/// Unreached, or not yet walked.
const NO_LEVEL: u32 = u32::MAX;
/// On the chain being walked now.
const WALKING: u32 = u32::MAX - 1;

/// Validates `parent` as a BFS tree from `key` of the graph whose input edges are
/// `edges` over `parent.len()` vertices.
pub fn validate(edges: &[Edge], key: u32, parent: &[u32]) -> Result<Valid, Invalid> {
    let n = parent.len();
    let mut failures: Vec<Invalid> = Vec::new();
    let mut fail = |check, detail: String| failures.push(Invalid { check, detail });
    if key as usize >= n {
        return Err(Invalid {
            check: Check::TreeRootedAtKey,
            detail: format!("key {key} is not a vertex"),
        });
    }
    if parent[key as usize] != key {
        fail(
            Check::TreeRootedAtKey,
            format!(
                "the key {key} has parent {} instead of itself",
                parent[key as usize]
            ),
        );
    }

    // Levels, walking each chain up to a vertex whose level is known.
    let mut level = vec![NO_LEVEL; n];
    level[key as usize] = 0;
    let mut chain = Vec::new();
    for start in 0..n as u32 {
        if parent[start as usize] == NONE || level[start as usize] != NO_LEVEL {
            continue;
        }
        chain.clear();
        let mut v = start;
        let base = loop {
            let l = level[v as usize];
            if l == WALKING {
                fail(
                    Check::TreeRootedAtKey,
                    format!("vertex {v} lies on a cycle of parents"),
                );
                break None;
            }
            if l != NO_LEVEL {
                break Some(l);
            }
            let p = parent[v as usize];
            if p == NONE {
                // Only reachable for a parent of an earlier vertex of the chain.
                fail(
                    Check::TreeEdgeLevels,
                    format!(
                        "tree edge {{{}, {v}}}: {v} is not in the tree",
                        chain.last().unwrap()
                    ),
                );
                break None;
            }
            if p as usize >= n {
                fail(
                    Check::TreeEdgeLevels,
                    format!("vertex {v} has parent {p}, not a vertex"),
                );
                break None;
            }
            level[v as usize] = WALKING;
            chain.push(v);
            v = p;
        };
        // Unwind: levels count up from the known one, or stay unknown on failure.
        for (depth, &u) in chain.iter().rev().enumerate() {
            level[u as usize] = match base {
                Some(b) => b + 1 + depth as u32,
                None => NO_LEVEL - 2,
            };
        }
    }
    let has_level = |v: u32| level[v as usize] < NO_LEVEL - 2;

    // One scan of the input edges for checks 3, 4 and 5.
    let seen: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
    let reached = |v: u32| parent[v as usize] != NONE;
    #[derive(Default)]
    struct Scan {
        edges: u64,
        bad_levels: Option<Edge>,
        leaves_tree: Option<Edge>,
        out_of_range: Option<Edge>,
    }
    let scan = edges
        .par_iter()
        .fold(Scan::default, |mut s, &[u, v]| {
            if u as usize >= n || v as usize >= n {
                s.out_of_range.get_or_insert([u, v]);
                return s;
            }
            match (reached(u), reached(v)) {
                (false, false) => {}
                (true, true) => {
                    s.edges += 1;
                    if u != v {
                        if parent[u as usize] == v {
                            seen[u as usize].store(true, Relaxed);
                        }
                        if parent[v as usize] == u {
                            seen[v as usize].store(true, Relaxed);
                        }
                    }
                    if has_level(u)
                        && has_level(v)
                        && level[u as usize].abs_diff(level[v as usize]) > 1
                    {
                        s.bad_levels.get_or_insert([u, v]);
                    }
                }
                _ => {
                    s.leaves_tree.get_or_insert([u, v]);
                }
            }
            s
        })
        .reduce(Scan::default, |a, b| Scan {
            edges: a.edges + b.edges,
            bad_levels: a.bad_levels.or(b.bad_levels),
            leaves_tree: a.leaves_tree.or(b.leaves_tree),
            out_of_range: a.out_of_range.or(b.out_of_range),
        });
    if let Some([u, v]) = scan.out_of_range {
        fail(
            Check::SpansComponent,
            format!("input edge {{{u}, {v}}} is outside the {n} vertices"),
        );
    }
    if let Some([u, v]) = scan.bad_levels {
        fail(
            Check::EdgeLevels,
            format!(
                "input edge {{{u}, {v}}} joins levels {} and {}",
                level[u as usize], level[v as usize]
            ),
        );
    }
    if let Some([u, v]) = scan.leaves_tree {
        fail(
            Check::SpansComponent,
            format!("input edge {{{u}, {v}}} joins a reached vertex to an unreached one"),
        );
    }
    if let Some(v) =
        (0..n as u32).find(|&v| v != key && has_level(v) && !seen[v as usize].load(Relaxed))
    {
        fail(
            Check::TreeEdgesAreEdges,
            format!(
                "tree edge {{{v}, {}}} is not an input edge",
                parent[v as usize]
            ),
        );
    }
    if let Some(first) = failures.into_iter().min_by_key(|f| f.check) {
        return Err(first);
    }
    Ok(Valid {
        edges: scan.edges,
        vertices: parent.iter().filter(|&&p| p != NONE).count() as u64,
        levels_checksum: crate::workloads::checksum(level.iter().map(|&l| u64::from(l))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path 0-1-2-3, a chord 0-3, and vertex 4 alone with a self-loop.
    const EDGES: [Edge; 5] = [[0, 1], [1, 2], [2, 3], [3, 0], [4, 4]];
    const N: u32 = NONE;

    fn check_of(parent: &[u32]) -> Option<Check> {
        validate(&EDGES, 0, parent).err().map(|e| e.check)
    }

    #[test]
    fn a_bfs_tree_passes_and_counts_its_edges() {
        let v = validate(&EDGES, 0, &[0, 0, 1, 0, N]).unwrap();
        assert_eq!(v.edges, 4);
        assert_eq!(v.vertices, 4);
        // The other BFS tree (2 reached through 3) has the same levels.
        let w = validate(&EDGES, 0, &[0, 0, 3, 0, N]).unwrap();
        assert_eq!(w.levels_checksum, v.levels_checksum);
        // A self-loop counts as a traversed edge when its vertex is reached.
        assert_eq!(validate(&EDGES, 4, &[N, N, N, N, 4]).unwrap().edges, 1);
    }

    #[test]
    fn check_1_fails_on_a_cycle_or_a_root_that_is_not_the_key() {
        assert_eq!(check_of(&[0, 2, 1, 0, N]), Some(Check::TreeRootedAtKey));
        assert_eq!(check_of(&[1, 0, 1, 0, N]), Some(Check::TreeRootedAtKey));
        assert_eq!(
            check_of(&[0, 0, 2, 0, N]),
            Some(Check::TreeRootedAtKey),
            "a self-parent"
        );
    }

    #[test]
    fn check_2_fails_on_a_parent_outside_the_tree() {
        // 2's parent 4 is unreached; a vertex whose chain leaves the tree has no
        // level, so checks 3 and 5 skip it.
        assert_eq!(check_of(&[0, 0, 4, 0, N]), Some(Check::TreeEdgeLevels));
        assert_eq!(check_of(&[0, 0, 9, 0, N]), Some(Check::TreeEdgeLevels));
    }

    #[test]
    fn check_3_fails_on_a_tree_that_is_not_breadth_first() {
        // The path 0-1-2-3 as a tree: the chord {3, 0} joins levels 3 and 0.
        assert_eq!(check_of(&[0, 0, 1, 2, N]), Some(Check::EdgeLevels));
    }

    #[test]
    fn check_4_fails_on_a_tree_missing_or_exceeding_the_component() {
        assert_eq!(check_of(&[0, 0, N, 0, N]), Some(Check::SpansComponent));
        // A vertex of another component claimed (through a non-edge, so check 5
        // fails too): its edge to the unreached 3 fails check 4 first.
        let edges = [[0, 1], [2, 3]];
        assert_eq!(
            validate(&edges, 0, &[0, 0, 1, N]).err().map(|e| e.check),
            Some(Check::SpansComponent)
        );
    }

    #[test]
    fn check_5_fails_on_a_tree_edge_that_is_no_input_edge() {
        // 2's parent 0: levels 1 and the edges {1,2}, {2,3} still differ by 0.
        assert_eq!(check_of(&[0, 0, 0, 0, N]), Some(Check::TreeEdgesAreEdges));
    }
}
