//! Graph500's Kronecker edge generator (the specification's `kronecker_generator`):
//! each of `edge_factor * 2^scale` edges picks, bit by bit from the top level down,
//! one quadrant of the adjacency matrix with probabilities A = 0.57, B = C = 0.19,
//! D = 0.05; then the vertex labels are permuted and the edge list shuffled.
//!
//! Per level, as in the specification: the row bit is 1 with probability
//! `1 - (A + B)`; the column bit is 1 with probability `1 - A / (A + B)` after a 0
//! row bit and `1 - C / (C + D)` after a 1. Every edge draws from its own SplitMix64
//! stream, seeded from the seed and the edge's index, so the list does not depend
//! on how the parallel loop that fills it was split.

use sumac::prelude::*;

use crate::workloads::SplitMix64;

/// Probability of the top-left quadrant.
pub const A: f64 = 0.57;
/// Probability of the top-right quadrant.
pub const B: f64 = 0.19;
/// Probability of the bottom-left quadrant.
pub const C: f64 = 0.19;

/// An undirected input edge (possibly a self-loop or a duplicate).
pub type Edge = [u32; 2];

/// The seed of edge `e`'s random stream.
fn edge_seed(seed: u64, e: usize) -> u64 {
    SplitMix64::new(seed ^ (e as u64).wrapping_mul(0xD605_BBB5_8C8A_BBDD)).next_u64()
}

/// The edges in generation order, labels not yet permuted (vertex `v` of a
/// raw edge is `v`'s position in the recursive matrix).
pub fn raw_edges(scale: u32, edge_factor: usize, seed: u64) -> Vec<Edge> {
    assert!((1..=31).contains(&scale), "vertex labels must fit in u32");
    let ab = A + B;
    let c_norm = C / (1.0 - ab);
    let a_norm = A / ab;
    let mut edges = vec![[0u32; 2]; edge_factor << scale];
    edges.par_iter_mut().enumerate().for_each(|(e, edge)| {
        let mut rng = SplitMix64::new(edge_seed(seed, e));
        let (mut i, mut j) = (0u32, 0u32);
        for level in 0..scale {
            let i_bit = rng.unit_f64() > ab;
            let j_bit = rng.unit_f64() > if i_bit { c_norm } else { a_norm };
            i |= u32::from(i_bit) << level;
            j |= u32::from(j_bit) << level;
        }
        *edge = [i, j];
    });
    edges
}

/// Fisher-Yates: a uniformly random permutation of `0..n`.
fn permutation(n: usize, rng: &mut SplitMix64) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n as u32).collect();
    shuffle(&mut p, rng);
    p
}

fn shuffle<T>(v: &mut [T], rng: &mut SplitMix64) {
    for i in (1..v.len()).rev() {
        v.swap(i, rng.below(i as u64 + 1) as usize);
    }
}

/// Graph500's edge list: [`raw_edges`] with vertex labels permuted and the
/// edges shuffled.
pub fn edges(scale: u32, edge_factor: usize, seed: u64) -> Vec<Edge> {
    let mut edges = raw_edges(scale, edge_factor, seed);
    let mut rng = SplitMix64::new(seed ^ 0x6C62_272E_07BB_0142);
    let label = permutation(1 << scale, &mut rng);
    edges
        .par_iter_mut()
        .for_each(|[u, v]| (*u, *v) = (label[*u as usize], label[*v as usize]));
    shuffle(&mut edges, &mut rng);
    edges
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Endpoint count of every vertex (a self-loop counts twice).
    fn degrees(n: usize, edges: &[Edge]) -> Vec<u64> {
        let mut d = vec![0; n];
        for &[u, v] in edges {
            d[u as usize] += 1;
            d[v as usize] += 1;
        }
        d
    }

    #[test]
    fn the_edge_list_has_edge_factor_times_2_to_the_scale_edges_within_range() {
        for (scale, ef) in [(1, 16), (5, 16), (10, 3)] {
            let e = edges(scale, ef, 7);
            assert_eq!(e.len(), ef << scale);
            assert!(e.iter().flatten().all(|&v| v < 1 << scale));
        }
        assert_eq!(edges(8, 16, 1), edges(8, 16, 1), "seeded");
        assert_ne!(edges(8, 16, 1), edges(8, 16, 2));
    }

    #[test]
    fn permuting_and_shuffling_keep_the_degree_distribution() {
        let mut raw = degrees(1 << 10, &raw_edges(10, 16, 3));
        let mut permuted = degrees(1 << 10, &edges(10, 16, 3));
        raw.sort_unstable();
        permuted.sort_unstable();
        assert_eq!(raw, permuted);
    }

    #[test]
    fn degrees_and_quadrants_follow_the_initiator_probabilities() {
        // Independently: a raw edge's row (and column) bit is 1 with probability
        // C + D = B + D = 0.24 at every level, so a vertex whose label has p one
        // bits of `scale` expects 2 M 0.76^(scale - p) 0.24^p endpoints.
        let (scale, ef) = (10u32, 64usize);
        let e = raw_edges(scale, ef, 11);
        let m = e.len() as f64;
        let d = degrees(1 << scale, &e);
        for p in 0..=4u32 {
            let class: Vec<u64> = (0..1u32 << scale)
                .filter(|v| v.count_ones() == p)
                .map(|v| d[v as usize])
                .collect();
            let mean = class.iter().sum::<u64>() as f64 / class.len() as f64;
            let want = 2.0 * m * 0.76f64.powi((scale - p) as i32) * 0.24f64.powi(p as i32);
            assert!(
                (mean - want).abs() < 0.05 * want,
                "popcount {p}: mean degree {mean}, expected {want}"
            );
        }
        // The top level's quadrant shares: A, B, C, D.
        let top = 1 << (scale - 1);
        let share = |i: bool, j: bool| {
            e.iter()
                .filter(|&&[u, v]| (u >= top) == i && (v >= top) == j)
                .count() as f64
                / m
        };
        for (got, want) in [
            (share(false, false), 0.57),
            (share(false, true), 0.19),
            (share(true, false), 0.19),
            (share(true, true), 0.05),
        ] {
            assert!((got - want).abs() < 0.005, "{got} vs {want}");
        }
    }
}
