//! spawn: spawned jobs at scale, the path task graphs, async tasks and channels build on.
//!
//! - **fan-out**: a binary tree of scoped spawns, `depth` levels (2^depth leaves, each an
//!   atomic add);
//! - **skynet**: the classic runtime benchmark, a 10-ary tree of spawns `depth` levels
//!   deep (10^depth leaves) summing the leaves' numbers through the scope;
//! - **flat**: one job spawning `count` jobs into a scope in a loop;
//! - **external**: `count` spawns from a thread outside the pool, then a wait for all.
//!
//! `seq` runs the same leaf work as a plain recursion or loop. The checksum is the sum
//! of what the leaves added, which every implementation must reproduce.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, Thread};

use crate::impls::{current_forte_pool, with_current_pool, Ctx, Impl, PoolRef};
use crate::workloads::Workload;

/// The shape of a spawn workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpawnShape {
    /// A binary tree of scoped spawns.
    FanOut,
    /// A 10-ary tree of scoped spawns summing leaf numbers.
    Skynet,
    /// One job spawning every job into a scope.
    Flat,
    /// Fire-and-forget spawns from a thread outside the pool.
    External,
}

impl SpawnShape {
    /// The bench name (`spawn-fan-out`, ...).
    pub fn bench_name(self) -> &'static str {
        match self {
            SpawnShape::FanOut => "spawn-fan-out",
            SpawnShape::Skynet => "spawn-skynet",
            SpawnShape::Flat => "spawn-flat",
            SpawnShape::External => "spawn-external",
        }
    }

    /// How many jobs a workload of this shape and `size` spawns (the unit count).
    pub fn jobs(self, size: u64) -> u64 {
        match self {
            // 2 + 4 + ... + 2^depth spawns.
            SpawnShape::FanOut => (1u64 << size.min(62)) * 2 - 2,
            // 10 + 100 + ... + 10^depth spawns.
            SpawnShape::Skynet => (1..=size).map(|level| 10u64.pow(level as u32)).sum(),
            SpawnShape::Flat | SpawnShape::External => size,
        }
    }
}

/// A spawn workload: `size` is the depth of the trees, or the number of jobs.
pub struct Spawn {
    shape: SpawnShape,
    size: u64,
}

impl Spawn {
    /// A workload of `shape` and `size`.
    pub fn new(shape: SpawnShape, size: u64) -> Spawn {
        Spawn { shape, size }
    }
}

/// skynet's leaf numbers: the leaves of the subtree of `size` leaves starting at `num`.
fn skynet_seq(num: u64, size: u64) -> u64 {
    if size == 1 {
        return num;
    }
    let part = size / 10;
    (0..10).map(|i| skynet_seq(num + i * part, part)).sum()
}

fn fan_out_seq(depth: u64, counter: &AtomicU64) {
    if depth == 0 {
        counter.fetch_add(1, Ordering::Relaxed);
    } else {
        fan_out_seq(depth - 1, counter);
        fan_out_seq(depth - 1, counter);
    }
}

/// The three scoped shapes, written once for the scope type of each library (all three
/// hand a spawned closure its scope).
macro_rules! scoped_shapes {
    ($module:ident, $Scope:path) => {
        mod $module {
            use std::sync::atomic::{AtomicU64, Ordering};

            use $Scope as Scope;

            pub fn fan_out<'s>(s: &Scope<'s>, depth: u64, counter: &'s AtomicU64) {
                if depth == 0 {
                    counter.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                s.spawn(move |s| fan_out(s, depth - 1, counter));
                s.spawn(move |s| fan_out(s, depth - 1, counter));
            }

            pub fn skynet<'s>(s: &Scope<'s>, num: u64, size: u64, total: &'s AtomicU64) {
                if size == 1 {
                    total.fetch_add(num, Ordering::Relaxed);
                    return;
                }
                let part = size / 10;
                for i in 0..10 {
                    s.spawn(move |s| skynet(s, num + i * part, part, total));
                }
            }

            pub fn flat<'s>(s: &Scope<'s>, count: u64, counter: &'s AtomicU64) {
                for _ in 0..count {
                    s.spawn(move |_| {
                        counter.fetch_add(1, Ordering::Relaxed);
                    });
                }
            }
        }
    };
}

scoped_shapes!(sumac_shapes, sumac::Scope);
scoped_shapes!(rayon_shapes, rayon::Scope);
scoped_shapes!(forte_shapes, forte::Scope);

/// What the jobs of an external run share: the count of jobs run, and the thread to
/// wake when the last one ran.
struct Outstanding {
    done: AtomicU64,
    count: u64,
    waiter: Thread,
}

impl Outstanding {
    fn new(count: u64) -> Arc<Outstanding> {
        Arc::new(Outstanding {
            done: AtomicU64::new(0),
            count,
            waiter: thread::current(),
        })
    }

    fn job_done(&self) {
        if self.done.fetch_add(1, Ordering::AcqRel) + 1 == self.count {
            self.waiter.unpark();
        }
    }

    fn wait(&self) -> u64 {
        while self.done.load(Ordering::Acquire) < self.count {
            thread::park();
        }
        self.count
    }
}

/// `count` spawns by `spawn` from the calling thread (outside every pool: see
/// `starts_outside_pool`), which then waits for all of them.
fn external(count: u64, spawn: impl Fn(Arc<Outstanding>)) -> u64 {
    let outstanding = Outstanding::new(count);
    for _ in 0..count {
        spawn(Arc::clone(&outstanding));
    }
    outstanding.wait()
}

impl Workload for Spawn {
    type State = ();

    fn new_state(&self) {}

    fn supports(imp: Impl) -> bool {
        matches!(imp, Impl::Seq | Impl::Sumac | Impl::Rayon | Impl::Forte)
    }

    fn starts_outside_pool(&self) -> bool {
        self.shape == SpawnShape::External
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, _state: &mut (), _param: u64) -> u64 {
        let counter = AtomicU64::new(0);
        let (shape, size) = (self.shape, self.size);
        match ctx {
            Ctx::Seq => match shape {
                SpawnShape::FanOut => fan_out_seq(size, &counter),
                SpawnShape::Skynet => {
                    counter.fetch_add(skynet_seq(0, 10u64.pow(size as u32)), Ordering::Relaxed);
                }
                SpawnShape::Flat | SpawnShape::External => {
                    for _ in 0..size {
                        counter.fetch_add(1, Ordering::Relaxed);
                    }
                }
            },
            Ctx::Sumac => match shape {
                SpawnShape::FanOut => {
                    sumac::scope(|s| sumac_shapes::fan_out(s, size, &counter));
                }
                SpawnShape::Skynet => sumac::scope(|s| {
                    sumac_shapes::skynet(s, 0, 10u64.pow(size as u32), &counter);
                }),
                SpawnShape::Flat => sumac::scope(|s| {
                    s.spawn(|s| sumac_shapes::flat(s, size, &counter));
                }),
                SpawnShape::External => {
                    let total = with_current_pool(|pool| match pool {
                        PoolRef::Sumac(pool) => external(size, |outstanding| {
                            pool.spawn(move || outstanding.job_done());
                        }),
                        _ => unreachable!("a sumac run has a sumac pool"),
                    });
                    counter.store(total, Ordering::Relaxed);
                }
            },
            Ctx::Rayon { .. } => match shape {
                SpawnShape::FanOut => {
                    rayon::scope(|s| rayon_shapes::fan_out(s, size, &counter));
                }
                SpawnShape::Skynet => rayon::scope(|s| {
                    rayon_shapes::skynet(s, 0, 10u64.pow(size as u32), &counter);
                }),
                SpawnShape::Flat => rayon::scope(|s| {
                    s.spawn(|s| rayon_shapes::flat(s, size, &counter));
                }),
                SpawnShape::External => {
                    let total = with_current_pool(|pool| match pool {
                        PoolRef::Rayon(pool) => external(size, |outstanding| {
                            pool.spawn(move || outstanding.job_done());
                        }),
                        _ => unreachable!("a rayon run has a rayon pool"),
                    });
                    counter.store(total, Ordering::Relaxed);
                }
            },
            Ctx::Forte => {
                let pool = current_forte_pool();
                match shape {
                    SpawnShape::FanOut => {
                        pool.scope(|s| forte_shapes::fan_out(s, size, &counter));
                    }
                    SpawnShape::Skynet => pool.scope(|s| {
                        forte_shapes::skynet(s, 0, 10u64.pow(size as u32), &counter);
                    }),
                    SpawnShape::Flat => pool.scope(|s| {
                        s.spawn(|s| forte_shapes::flat(s, size, &counter));
                    }),
                    SpawnShape::External => {
                        let total = external(size, |outstanding| {
                            pool.spawn(move |_| outstanding.job_done());
                        });
                        counter.store(total, Ordering::Relaxed);
                    }
                }
            }
            _ => unreachable!("spawn workloads run as seq, sumac, rayon or forte"),
        }
        counter.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_counts_match_the_shapes() {
        assert_eq!(SpawnShape::FanOut.jobs(3), 2 + 4 + 8);
        assert_eq!(SpawnShape::Skynet.jobs(2), 10 + 100);
        assert_eq!(SpawnShape::Flat.jobs(7), 7);
    }

    #[test]
    fn skynet_sums_every_leaf_number_once() {
        // 0 + 1 + ... + 999.
        assert_eq!(skynet_seq(0, 1000), 999 * 1000 / 2);
    }

    #[test]
    fn every_implementation_reproduces_the_sequential_checksum() {
        let sumac = sumac::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let rayon = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        for (shape, size) in [
            (SpawnShape::FanOut, 6),
            (SpawnShape::Skynet, 2),
            (SpawnShape::Flat, 100),
            (SpawnShape::External, 100),
        ] {
            let w = Spawn::new(shape, size);
            let want = w.run(&mut Ctx::Seq, &mut (), 0);
            let outside = w.starts_outside_pool();
            let got = crate::impls::with_pool_set(PoolRef::Sumac(&sumac), || {
                let run = || w.run(&mut Ctx::Sumac, &mut (), 0);
                if outside {
                    run()
                } else {
                    sumac.install(run)
                }
            });
            assert_eq!(got, want, "sumac {shape:?}");
            let got = crate::impls::with_pool_set(PoolRef::Rayon(&rayon), || {
                let run = || w.run(&mut Ctx::Rayon { min_len: 1 }, &mut (), 0);
                if outside {
                    run()
                } else {
                    rayon.install(run)
                }
            });
            assert_eq!(got, want, "rayon {shape:?}");
        }
    }
}
