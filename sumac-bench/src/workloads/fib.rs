//! fib: naive doubly recursive Fibonacci, forking with `join` above the cutoff
//! and plain recursion at or below it.

use crate::impls::{BranchFloorJoin, Ctx, Impl, Join, RayonJoin, SumacJoin};
use crate::workloads::Workload;

/// Plain recursive Fibonacci (`fib(0) = 0`, `fib(1) = 1`).
pub fn fib_seq(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_seq(n - 1).wrapping_add(fib_seq(n - 2))
    }
}

/// Number of calls the naive recursion makes for `fib(n)`: `2 fib(n + 1) - 1`.
pub fn fib_calls(n: u64) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..=n {
        (a, b) = (b, a.wrapping_add(b));
    }
    2 * a - 1
}

fn fib_join<J: Join>(n: u64, cutoff: u64) -> u64 {
    if n <= cutoff || n < 2 {
        return fib_seq(n);
    }
    let (a, b) = J::join(
        || fib_join::<J>(n - 1, cutoff),
        || fib_join::<J>(n - 2, cutoff),
    );
    a.wrapping_add(b)
}

fn fib_chili(n: u64, cutoff: u64, s: &mut chili::Scope<'_>) -> u64 {
    if n <= cutoff || n < 2 {
        return fib_seq(n);
    }
    let (a, b) = s.join(
        |s| fib_chili(n - 1, cutoff, s),
        |s| fib_chili(n - 2, cutoff, s),
    );
    a.wrapping_add(b)
}

/// The fib workload for one `n`; the cutoff is the run parameter.
pub struct Fib {
    n: u64,
}

impl Fib {
    /// Computes `fib(n)`.
    pub fn new(n: u64) -> Fib {
        Fib { n }
    }
}

impl Workload for Fib {
    type State = ();

    fn new_state(&self) {}

    fn supports(imp: Impl) -> bool {
        matches!(
            imp,
            Impl::Seq | Impl::Sumac | Impl::Rayon | Impl::Chili | Impl::BranchFloor
        )
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, _state: &mut (), cutoff: u64) -> u64 {
        match ctx {
            Ctx::Seq => fib_seq(self.n),
            Ctx::Sumac => fib_join::<SumacJoin>(self.n, cutoff),
            Ctx::Rayon { .. } => fib_join::<RayonJoin>(self.n, cutoff),
            Ctx::Chili(s) => fib_chili(self.n, cutoff, s),
            Ctx::BranchFloor => fib_join::<BranchFloorJoin>(self.n, cutoff),
            Ctx::Static { .. } | Ctx::Forte | Ctx::ChannelPool { .. } => {
                unreachable!("fib has no static, forte or channel-pool variant")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_calls() {
        assert_eq!(fib_seq(20), 6765);
        assert_eq!(fib_calls(0), 1);
        assert_eq!(fib_calls(1), 1);
        assert_eq!(fib_calls(2), 3);
        assert_eq!(fib_calls(35), 29_860_703);
    }

    #[test]
    fn cutoffs_do_not_change_the_value() {
        let f = Fib::new(18);
        for c in [0, 1, 5, 18, 40] {
            assert_eq!(
                f.run(&mut Ctx::Rayon { min_len: 1 }, &mut (), c),
                fib_seq(18)
            );
        }
    }
}
