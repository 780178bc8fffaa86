//! The undirected graph the searches run on (Graph500's kernel 1): compressed
//! sparse rows built from the edge list, each input edge `{u, v}` stored as `v`
//! in `u`'s row and `u` in `v`'s, self-loops dropped and duplicate edges stored
//! once (the specification leaves both to the implementation; neither can change
//! a BFS tree). Rows are sorted by vertex label.

use sumac::prelude::*;

use super::kronecker::Edge;
use crate::workloads::SplitMix64;

/// An undirected graph in compressed sparse rows.
pub struct Graph {
    /// Row `v` is `adjacency[offsets[v]..offsets[v + 1]]`.
    offsets: Vec<usize>,
    adjacency: Vec<u32>,
}

impl Graph {
    /// Builds the graph of `n` vertices from `edges` (endpoints below `n`).
    pub fn from_edges(n: usize, edges: &[Edge]) -> Graph {
        let mut degree = vec![0usize; n];
        for &[u, v] in edges {
            if u != v {
                degree[u as usize] += 1;
                degree[v as usize] += 1;
            }
        }
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0);
        for d in &degree {
            offsets.push(offsets.last().unwrap() + d);
        }
        let mut adjacency = vec![0u32; offsets[n]];
        let mut fill = offsets[..n].to_vec();
        for &[u, v] in edges {
            if u != v {
                adjacency[fill[u as usize]] = v;
                fill[u as usize] += 1;
                adjacency[fill[v as usize]] = u;
                fill[v as usize] += 1;
            }
        }
        // Sort each row (in parallel), then drop duplicates while compacting.
        let mut rows: Vec<&mut [u32]> = Vec::with_capacity(n);
        let mut rest = &mut adjacency[..];
        for d in &degree {
            let (row, tail) = rest.split_at_mut(*d);
            rows.push(row);
            rest = tail;
        }
        rows.par_iter_mut().for_each(|row| row.sort_unstable());
        drop(rows);
        let mut write = 0;
        for v in 0..n {
            let (start, end) = (offsets[v], offsets[v + 1]);
            offsets[v] = write;
            for i in start..end {
                if i == start || adjacency[i] != adjacency[i - 1] {
                    adjacency[write] = adjacency[i];
                    write += 1;
                }
            }
        }
        offsets[n] = write;
        adjacency.truncate(write);
        adjacency.shrink_to_fit();
        Graph { offsets, adjacency }
    }

    /// The number of vertices.
    pub fn vertices(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Stored adjacencies: twice the distinct non-loop edges.
    pub fn adjacencies(&self) -> usize {
        self.adjacency.len()
    }

    /// `v`'s neighbours, ascending.
    #[inline]
    pub fn neighbors(&self, v: u32) -> &[u32] {
        let v = v as usize;
        &self.adjacency[self.offsets[v]..self.offsets[v + 1]]
    }

    /// `v`'s degree (neighbours other than itself, each once).
    #[inline]
    pub fn degree(&self, v: u32) -> usize {
        let v = v as usize;
        self.offsets[v + 1] - self.offsets[v]
    }

    /// Up to `count` distinct search keys drawn at random among the vertices of
    /// degree at least 1 (self-loops not counted), as Graph500 chooses them; all of
    /// them, in random order, when there are fewer.
    pub fn search_keys(&self, count: usize, seed: u64) -> Vec<u32> {
        let mut candidates: Vec<u32> = (0..self.vertices() as u32)
            .filter(|&v| self.degree(v) > 0)
            .collect();
        let mut rng = SplitMix64::new(seed ^ 0x0B5E_55ED_5EA2_C4E5);
        let take = count.min(candidates.len());
        for i in 0..take {
            let j = i + rng.below((candidates.len() - i) as u64) as usize;
            candidates.swap(i, j);
        }
        candidates.truncate(take);
        candidates
    }

    /// The connected component of every vertex, numbered from 0 in order of
    /// their smallest vertex.
    pub fn components(&self) -> Vec<u32> {
        const NONE: u32 = u32::MAX;
        let mut component = vec![NONE; self.vertices()];
        let mut queue = Vec::new();
        let mut next = 0;
        for start in 0..self.vertices() as u32 {
            if component[start as usize] != NONE {
                continue;
            }
            component[start as usize] = next;
            queue.clear();
            queue.push(start);
            let mut head = 0;
            while let Some(&u) = queue.get(head) {
                head += 1;
                for &v in self.neighbors(u) {
                    if component[v as usize] == NONE {
                        component[v as usize] = next;
                        queue.push(v);
                    }
                }
            }
            next += 1;
        }
        component
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_hold_each_neighbour_once_without_self_loops() {
        let g = Graph::from_edges(5, &[[0, 1], [1, 0], [2, 2], [1, 3], [0, 1], [3, 1]]);
        assert_eq!(g.neighbors(0), &[1]);
        assert_eq!(g.neighbors(1), &[0, 3]);
        assert_eq!(g.neighbors(2), &[] as &[u32]);
        assert_eq!(g.neighbors(3), &[1]);
        assert_eq!(g.neighbors(4), &[] as &[u32]);
        assert_eq!(g.adjacencies(), 4);
        assert_eq!(g.components(), vec![0, 0, 1, 0, 2]);
    }

    #[test]
    fn keys_are_distinct_vertices_of_positive_degree() {
        let g = Graph::from_edges(6, &[[0, 1], [2, 2], [3, 4]]);
        let mut keys = g.search_keys(64, 1);
        keys.sort_unstable();
        assert_eq!(keys, vec![0, 1, 3, 4], "all of them when fewer than asked");
        let keys = g.search_keys(2, 1);
        assert_eq!(keys.len(), 2);
        assert_ne!(keys[0], keys[1]);
        assert!(keys.iter().all(|&k| g.degree(k) > 0));
        assert_eq!(g.search_keys(2, 1), keys, "seeded");
    }
}
