//! The loop workloads of the OCaml parallel-scheduler suite (iota, for-irregular,
//! lu, matmul) plus a reduction (sum-squares), written once against Rayon-style
//! parallel iterators and instantiated for Rayon and (feature `sumac-iter`) sumac.

use crate::impls::{Ctx, Impl};
use crate::workloads::fib::fib_seq;
use crate::workloads::{checksum, SplitMix64, Workload};

/// A dense square matrix stored as rows (like the OCaml suite's arrays of arrays).
pub type Matrix = Vec<Vec<f64>>;

/// Which implementations the loop workloads support.
pub fn loop_supports(imp: Impl) -> bool {
    match imp {
        Impl::Seq | Impl::Rayon | Impl::RayonTuned => true,
        Impl::Sumac => cfg!(feature = "sumac-iter"),
        Impl::Chili
        | Impl::Static
        | Impl::Forte
        | Impl::ChannelPool
        | Impl::CrossbeamChannel
        | Impl::Flume
        | Impl::Kanal
        | Impl::Crossfire
        | Impl::StdMpsc
        | Impl::Tokio
        | Impl::AsyncExecutor
        | Impl::Threads
        | Impl::BranchFloor => false,
    }
}

/// for-irregular's item: `fib(10 + ((i - 10) mod (limit - 10)))`, Euclidean mod.
/// Never inlined, so every implementation runs the very same item code (an item
/// costs at least fib(10), so the call itself is negligible).
#[inline(never)]
pub fn irregular_item(i: usize, limit: u64) -> u64 {
    let m = (i as i64 - 10).rem_euclid(limit as i64 - 10);
    fib_seq(10 + m as u64)
}

/// One row update of LU for pivot `k`: store the multiplier, eliminate the rest.
#[inline]
fn lu_row(row: &mut [f64], pivot: &[f64], k: usize) {
    let f = row[k] / pivot[k];
    row[k] = f;
    for (x, p) in row[k + 1..].iter_mut().zip(&pivot[k + 1..]) {
        *x -= f * p;
    }
}

/// Row `i` of the naive product `a * b` (the `k` loop innermost, in order).
#[inline]
fn matmul_row(a: &[Vec<f64>], b: &[Vec<f64>], i: usize, out: &mut [f64]) {
    let ai = &a[i];
    for (j, c) in out.iter_mut().enumerate() {
        let mut acc = 0.0;
        for (k, x) in ai.iter().enumerate() {
            acc += x * b[k][j];
        }
        *c = acc;
    }
}

/// Row `i` of one Jacobi sweep of an `n x n` grid: each interior cell becomes the mean
/// of its four neighbours in `cur`; boundary cells (the first and last rows and
/// columns) keep their values.
#[inline]
fn jacobi_row(cur: &[f64], row: &mut [f64], n: usize, i: usize) {
    let mid = &cur[i * n..(i + 1) * n];
    if i == 0 || i == n - 1 {
        row.copy_from_slice(mid);
        return;
    }
    let up = &cur[(i - 1) * n..i * n];
    let down = &cur[(i + 1) * n..(i + 2) * n];
    row[0] = mid[0];
    row[n - 1] = mid[n - 1];
    for j in 1..n - 1 {
        row[j] = 0.25 * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
    }
}

/// Generates the parallel kernels for a crate with Rayon's iterator API.
macro_rules! par_kernels {
    ($module:ident, $krate:ident) => {
        #[doc = concat!("Loop kernels on `", stringify!($krate), "`'s parallel iterators.")]
        pub mod $module {
            use super::{irregular_item, jacobi_row, lu_row, matmul_row};
            use $krate::prelude::*;

            /// Writes 42 into every element.
            pub fn iota(v: &mut [u64], min_len: usize) {
                v.par_iter_mut().with_min_len(min_len).for_each(|x| *x = 42);
            }

            /// Adds one to every element (rayon-demo's `increment_all`).
            pub fn increment(v: &mut [usize], min_len: usize) {
                v.par_iter_mut()
                    .with_min_len(min_len)
                    .for_each(|p| *p = p.wrapping_add(1));
            }

            /// Sum of `irregular_item(i)` for `i` in `1..=n`.
            pub fn for_irregular(n: usize, limit: u64, min_len: usize) -> u64 {
                (1..n + 1)
                    .into_par_iter()
                    .with_min_len(min_len)
                    .map(|i| irregular_item(i, limit))
                    .sum()
            }

            /// In-place LU factorisation, rows below each pivot in parallel.
            pub fn lu(a: &mut [Vec<f64>], min_len: usize) {
                for k in 0..a.len().saturating_sub(1) {
                    let (top, rest) = a.split_at_mut(k + 1);
                    let pivot = &top[k];
                    rest.par_iter_mut()
                        .with_min_len(min_len)
                        .for_each(|row| lu_row(row, pivot, k));
                }
            }

            /// `c = a * b`, rows of `c` in parallel.
            pub fn matmul(a: &[Vec<f64>], b: &[Vec<f64>], c: &mut [Vec<f64>], min_len: usize) {
                c.par_iter_mut()
                    .enumerate()
                    .with_min_len(min_len)
                    .for_each(|(i, row)| matmul_row(a, b, i, row));
            }

            /// One Jacobi sweep of an `n x n` grid from `cur` into `next`, rows in parallel.
            pub fn jacobi_sweep(cur: &[f64], next: &mut [f64], n: usize, min_len: usize) {
                next.par_chunks_mut(n)
                    .enumerate()
                    .with_min_len(min_len)
                    .for_each(|(i, row)| jacobi_row(cur, row, n, i));
            }

            /// Sum of the squares of the elements.
            pub fn sum_squares(v: &[u64], min_len: usize) -> u64 {
                v.par_iter().with_min_len(min_len).map(|&x| x * x).sum()
            }

            /// Parallel unstable sort.
            pub fn sort_unstable(v: &mut [u64]) {
                v.par_sort_unstable();
            }

            /// Parallel stable sort.
            pub fn sort_stable(v: &mut [u64]) {
                v.par_sort();
            }
        }
    };
}

par_kernels!(rayon_kernels, rayon);
#[cfg(feature = "sumac-iter")]
par_kernels!(sumac_kernels, sumac);

/// Dispatches a loop kernel to the context's implementation: `$seq` for `seq`,
/// the named kernel of the Rayon/sumac module otherwise (`min_len` bound to the
/// Rayon split size, 1 for sumac, whose scheduler needs no grain size).
macro_rules! dispatch {
    ($ctx:expr, $seq:expr, |$m:ident| $kernel:ident($($arg:expr),*)) => {
        match $ctx {
            Ctx::Seq => $seq,
            Ctx::Rayon { min_len } => {
                let $m = *min_len;
                $crate::workloads::loops::rayon_kernels::$kernel($($arg),*)
            }
            #[cfg(feature = "sumac-iter")]
            Ctx::Sumac => {
                let $m = 1;
                $crate::workloads::loops::sumac_kernels::$kernel($($arg),*)
            }
            _ => unreachable!("loop workloads run only as seq, rayon or sumac"),
        }
    };
}
pub(crate) use dispatch;

/// iota: write 42 into every element of a `Vec<u64>`.
pub struct Iota {
    len: usize,
}

impl Iota {
    /// A vector of `len` elements.
    pub fn new(len: usize) -> Iota {
        Iota { len }
    }
}

impl Workload for Iota {
    type State = Vec<u64>;

    fn new_state(&self) -> Vec<u64> {
        vec![0; self.len]
    }

    fn reset(&self, v: &mut Vec<u64>) {
        v.fill(0);
    }

    fn supports(imp: Impl) -> bool {
        loop_supports(imp)
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, v: &mut Vec<u64>, _: u64) -> u64 {
        dispatch!(ctx, v.iter_mut().for_each(|x| *x = 42), |m| iota(v, m));
        0
    }

    fn check(&self, v: &Vec<u64>, _: u64) -> u64 {
        checksum(v.iter().copied())
    }
}

/// increment: add one to every element of a `Vec<usize>` (rayon-demo's
/// `increment_all`, and the loop of calls from `main` in sumac's issue 25); `unsplit`
/// runs it under `with_min_len(usize::MAX)`, a loop that never splits.
pub struct Increment {
    len: usize,
    unsplit: bool,
}

impl Increment {
    /// A vector of `len` elements; `unsplit`: in one piece.
    pub fn new(len: usize, unsplit: bool) -> Increment {
        Increment { len, unsplit }
    }
}

impl Workload for Increment {
    type State = Vec<usize>;

    fn new_state(&self) -> Vec<usize> {
        (0..self.len).collect()
    }

    fn reset(&self, v: &mut Vec<usize>) {
        v.iter_mut().enumerate().for_each(|(i, x)| *x = i);
    }

    fn supports(imp: Impl) -> bool {
        loop_supports(imp) && imp != Impl::RayonTuned
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, v: &mut Vec<usize>, _: u64) -> u64 {
        let unsplit = self.unsplit;
        dispatch!(
            ctx,
            v.iter_mut().for_each(|p| *p = p.wrapping_add(1)),
            |m| increment(v, if unsplit { usize::MAX } else { m })
        );
        0
    }

    fn check(&self, v: &Vec<usize>, _: u64) -> u64 {
        checksum(v.iter().map(|&x| x as u64))
    }
}

/// for-irregular: `fib(10 + ((i - 10) mod (limit - 10)))` for `i` in `1..=len`.
pub struct ForIrregular {
    len: usize,
    limit: u64,
}

impl ForIrregular {
    /// `len` iterations with fib arguments below `limit` (`limit > 10`).
    pub fn new(len: usize, limit: u64) -> ForIrregular {
        assert!(limit > 10, "limit must exceed 10");
        ForIrregular { len, limit }
    }
}

impl Workload for ForIrregular {
    type State = ();

    fn new_state(&self) {}

    fn supports(imp: Impl) -> bool {
        loop_supports(imp)
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, _: &mut (), _: u64) -> u64 {
        let (n, limit) = (self.len, self.limit);
        dispatch!(
            ctx,
            (1..n + 1).map(|i| irregular_item(i, limit)).sum(),
            |m| for_irregular(n, limit, m)
        )
    }
}

/// A random `n x n` matrix, made diagonally dominant so LU needs no pivoting.
pub fn random_matrix(n: usize, seed: u64) -> Matrix {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|i| {
            let mut row: Vec<f64> = (0..n).map(|_| rng.unit_f64()).collect();
            row[i] += n as f64;
            row
        })
        .collect()
}

/// Checksum of a matrix's exact bits.
fn matrix_checksum(m: &[Vec<f64>]) -> u64 {
    checksum(m.iter().flatten().map(|x| x.to_bits()))
}

/// lu: LU factorisation (no pivoting) with a parallel loop over the rows below each pivot.
pub struct Lu {
    input: Matrix,
}

impl Lu {
    /// A random `size x size` matrix.
    pub fn new(size: usize, seed: u64) -> Lu {
        Lu {
            input: random_matrix(size, seed),
        }
    }

    /// Inner updates performed: the sum of `(n - 1 - k)^2` over the pivots.
    pub fn updates(size: u64) -> u64 {
        (0..size).map(|k| (size - 1 - k).pow(2)).sum::<u64>().max(1)
    }
}

impl Workload for Lu {
    type State = Matrix;
    const NEEDS_RESET: bool = true;

    fn new_state(&self) -> Matrix {
        self.input.clone()
    }

    fn reset(&self, m: &mut Matrix) {
        for (dst, src) in m.iter_mut().zip(&self.input) {
            dst.copy_from_slice(src);
        }
    }

    fn supports(imp: Impl) -> bool {
        loop_supports(imp)
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, a: &mut Matrix, _: u64) -> u64 {
        dispatch!(
            ctx,
            for k in 0..a.len().saturating_sub(1) {
                let (top, rest) = a.split_at_mut(k + 1);
                rest.iter_mut().for_each(|row| lu_row(row, &top[k], k));
            },
            |m| lu(a, m)
        );
        0
    }

    fn check(&self, m: &Matrix, _: u64) -> u64 {
        matrix_checksum(m)
    }
}

/// matmul: naive product of two random matrices, rows of the result in parallel.
pub struct Matmul {
    a: Matrix,
    b: Matrix,
}

impl Matmul {
    /// Two random `size x size` matrices.
    pub fn new(size: usize, seed: u64) -> Matmul {
        Matmul {
            a: random_matrix(size, seed),
            b: random_matrix(size, seed ^ 0x5555),
        }
    }
}

impl Workload for Matmul {
    type State = Matrix;

    fn new_state(&self) -> Matrix {
        vec![vec![0.0; self.a.len()]; self.a.len()]
    }

    fn reset(&self, c: &mut Matrix) {
        c.iter_mut().for_each(|row| row.fill(0.0));
    }

    fn supports(imp: Impl) -> bool {
        loop_supports(imp)
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, c: &mut Matrix, _: u64) -> u64 {
        let (a, b) = (&self.a, &self.b);
        dispatch!(
            ctx,
            c.iter_mut()
                .enumerate()
                .for_each(|(i, row)| matmul_row(a, b, i, row)),
            |m| matmul(a, b, c, m)
        );
        0
    }

    fn check(&self, c: &Matrix, _: u64) -> u64 {
        matrix_checksum(c)
    }
}

/// sum-squares: `map(|x| x * x).sum()` over a slice of random values below 2^16.
pub struct SumSquares {
    input: Vec<u64>,
}

impl SumSquares {
    /// `len` random values.
    pub fn new(len: usize, seed: u64) -> SumSquares {
        let mut rng = SplitMix64::new(seed);
        SumSquares {
            input: (0..len).map(|_| rng.below(1 << 16)).collect(),
        }
    }
}

impl Workload for SumSquares {
    type State = ();

    fn new_state(&self) {}

    fn supports(imp: Impl) -> bool {
        loop_supports(imp)
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, _: &mut (), _: u64) -> u64 {
        let v = &self.input[..];
        dispatch!(ctx, v.iter().map(|&x| x * x).sum(), |m| sum_squares(v, m))
    }
}

/// jacobi: a 2-D Jacobi stencil on an `n x n` grid of `f64`, `steps` sweeps; each
/// sweep is one parallel loop over the rows of the second grid (`par_chunks_mut`),
/// then the grids swap. The boundary is fixed at 1, the interior starts random.
pub struct Jacobi {
    n: usize,
    steps: usize,
    input: Vec<f64>,
}

impl Jacobi {
    /// An `n x n` grid (`n >= 3`), `steps` sweeps per run.
    pub fn new(n: usize, steps: usize, seed: u64) -> Jacobi {
        assert!(n >= 3, "the grid needs an interior");
        let mut rng = SplitMix64::new(seed);
        let input = (0..n * n)
            .map(|k| {
                let (i, j) = (k / n, k % n);
                if i == 0 || j == 0 || i == n - 1 || j == n - 1 {
                    1.0
                } else {
                    rng.unit_f64()
                }
            })
            .collect();
        Jacobi { n, steps, input }
    }
}

/// The two grids of a Jacobi run: the current one and the one a sweep writes.
pub struct Grids {
    cur: Vec<f64>,
    next: Vec<f64>,
}

impl Workload for Jacobi {
    type State = Grids;

    fn new_state(&self) -> Grids {
        Grids {
            cur: self.input.clone(),
            next: vec![0.0; self.input.len()],
        }
    }

    fn reset(&self, g: &mut Grids) {
        g.cur.copy_from_slice(&self.input);
    }

    fn supports(imp: Impl) -> bool {
        loop_supports(imp)
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, g: &mut Grids, _: u64) -> u64 {
        let n = self.n;
        for _ in 0..self.steps {
            let (cur, next) = (&g.cur[..], &mut g.next[..]);
            dispatch!(
                ctx,
                next.chunks_mut(n)
                    .enumerate()
                    .for_each(|(i, row)| jacobi_row(cur, row, n, i)),
                |m| jacobi_sweep(cur, next, n, m)
            );
            std::mem::swap(&mut g.cur, &mut g.next);
        }
        0
    }

    fn check(&self, g: &Grids, _: u64) -> u64 {
        checksum(g.cur.iter().map(|x| x.to_bits()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agree<W: Workload>(w: &W) {
        let mut st = w.new_state();
        w.reset(&mut st);
        let out = w.run(&mut Ctx::Seq, &mut st, 0);
        let want = w.check(&st, out);
        for min_len in [1, 16] {
            w.reset(&mut st);
            let out = w.run(&mut Ctx::Rayon { min_len }, &mut st, 0);
            assert_eq!(w.check(&st, out), want);
        }
        #[cfg(feature = "sumac-iter")]
        {
            let pool = sumac::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .unwrap();
            w.reset(&mut st);
            let out = pool.install(|| w.run(&mut Ctx::Sumac, &mut st, 0));
            assert_eq!(w.check(&st, out), want);
        }
    }

    #[test]
    fn rayon_kernels_agree_with_seq() {
        agree(&Iota::new(1000));
        agree(&ForIrregular::new(100, 20));
        agree(&Lu::new(40, 1));
        agree(&Matmul::new(30, 2));
        agree(&SumSquares::new(1000, 3));
        agree(&Jacobi::new(37, 5, 6));
        use crate::workloads::sort::{Sort, SortKind};
        agree(&Sort::new(5000, SortKind::Unstable, 4));
        agree(&Sort::new(5000, SortKind::Stable, 5));
    }

    #[test]
    fn a_jacobi_sweep_averages_the_four_neighbours_and_keeps_the_boundary() {
        let w = Jacobi::new(3, 1, 0);
        let mut g = w.new_state();
        g.cur = (0..9).map(f64::from).collect();
        w.run(&mut Ctx::Seq, &mut g, 0);
        let want: Vec<f64> = vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        assert_eq!(g.cur, want, "the centre's neighbours average to its own 4");
        g.cur[1] = 5.0;
        w.run(&mut Ctx::Seq, &mut g, 0);
        assert_eq!(g.cur[4], 5.0);
    }

    #[test]
    fn irregular_uses_a_euclidean_mod() {
        assert_eq!(irregular_item(1, 40), fib_seq(10 + 21));
        assert_eq!(irregular_item(10, 40), fib_seq(10));
        assert_eq!(Lu::updates(3), 4 + 1);
    }
}
