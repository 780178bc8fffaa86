//! Message passing between tasks: the pipes ring, the shootout's threadring and a
//! oneshot round trip, over sumac's async tasks and channels and the peers' runtimes.
//!
//! - **ring**: `tasks` tasks in a ring, each receiving a token from its left neighbour
//!   and sending it on to its right (links of capacity 1), until it made `hops` hops;
//!   one token, so one task runs at a time: the time per hop is a receive, a send, a
//!   wake-up and a switch between tasks. The result is the index of the last holder
//!   plus one, the shootout's `threadring` answer (503 tasks, `hops` = N).
//! - **oneshot**: `rounds` times, a task spawns a task that answers through a oneshot
//!   channel and awaits the answer; the result is the sum of the answers.
//!
//! Peers: tokio's multi-thread runtime with tokio's channels, smol's async-executor on
//! `threads` threads with async-channel (its oneshot is a bounded(1) channel), and (ring
//! only) one OS thread per task with crossbeam-channel links. forte is left out: its
//! newest version for Rust 1.95 (1.0.0-alpha.4; 1.0.0-beta.2 needs Rust 1.96) never
//! finished a 7-task ring on one thread.
//!
//! The reference (the `seq` row, sampled alternately with every other row) is tokio at
//! the thread count of the row being measured (1 for the `seq` row itself), so a row's
//! `ratio` is its time over tokio's, measured interleaved in one process.

use std::sync::Arc;
use std::thread;

use crate::impls::{Ctx, Impl};
use crate::workloads::Workload;

/// Which message-passing benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A ring of tasks passing one token (ring, threadring).
    Ring {
        /// Tasks in the ring.
        tasks: usize,
        /// Hops the token makes in all.
        hops: usize,
    },
    /// Spawn a task that answers through a oneshot, await it; `rounds` times.
    Oneshot {
        /// Round trips.
        rounds: usize,
    },
}

/// A message-passing benchmark.
pub struct MessageBench {
    kind: Kind,
    /// Whether OS threads (one per task) take part: only for small rings.
    threads_allowed: bool,
}

impl MessageBench {
    /// A ring of `tasks` tasks whose token makes `hops` hops.
    pub fn ring(tasks: usize, hops: usize, threads_allowed: bool) -> Self {
        MessageBench {
            kind: Kind::Ring { tasks, hops },
            threads_allowed,
        }
    }

    /// `rounds` oneshot round trips.
    pub fn oneshot(rounds: usize) -> Self {
        MessageBench {
            kind: Kind::Oneshot { rounds },
            threads_allowed: false,
        }
    }

    /// Whether `imp` runs this benchmark.
    pub fn runs(&self, imp: Impl) -> bool {
        match imp {
            Impl::Seq | Impl::Sumac | Impl::Tokio | Impl::AsyncExecutor => true,
            Impl::Threads => self.threads_allowed && matches!(self.kind, Kind::Ring { .. }),
            _ => false,
        }
    }

    #[cfg(test)]
    fn expected(&self) -> u64 {
        match self.kind {
            Kind::Ring { tasks, hops } => (hops % tasks) as u64 + 1,
            Kind::Oneshot { rounds } => {
                let r = rounds as u64;
                r * r.saturating_sub(1) / 2
            }
        }
    }
}

/// The runtimes built so far (kept across runs: building one is not timed).
#[derive(Default)]
pub struct Runtimes {
    chosen: Option<Impl>,
    /// The thread count of the last run (the reference runs at it too).
    threads: usize,
    sumac: Option<(usize, sumac::ThreadPool)>,
    tokio: Option<(usize, tokio::runtime::Runtime)>,
    smol: Option<(usize, SmolRuntime)>,
}

/// async-executor on `threads` threads, stopped when dropped.
pub struct SmolRuntime {
    executor: Arc<async_executor::Executor<'static>>,
    stop: Option<async_channel::Sender<()>>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl SmolRuntime {
    fn new(threads: usize) -> Self {
        let executor = Arc::new(async_executor::Executor::new());
        let (stop, stopped) = async_channel::bounded::<()>(1);
        let threads = (0..threads)
            .map(|_| {
                let executor = Arc::clone(&executor);
                let stopped = stopped.clone();
                thread::spawn(move || {
                    let _ = futures_lite::future::block_on(executor.run(stopped.recv()));
                })
            })
            .collect();
        SmolRuntime {
            executor,
            stop: Some(stop),
            threads,
        }
    }
}

impl Drop for SmolRuntime {
    fn drop(&mut self) {
        drop(self.stop.take());
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

impl Workload for MessageBench {
    type State = Runtimes;
    const OWN_THREADS: bool = true;

    fn new_state(&self) -> Runtimes {
        Runtimes::default()
    }

    fn select(&self, state: &mut Runtimes, imp: Impl) {
        state.chosen = Some(imp);
    }

    fn supports(imp: Impl) -> bool {
        matches!(
            imp,
            Impl::Seq | Impl::Sumac | Impl::Tokio | Impl::AsyncExecutor | Impl::Threads
        )
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, state: &mut Runtimes, _param: u64) -> u64 {
        let (imp, threads) = match ctx {
            // The reference: tokio (see the module documentation).
            Ctx::Seq => (Impl::Tokio, state.threads.max(1)),
            Ctx::Static { threads } => {
                state.threads = (*threads).max(1);
                let imp = state.chosen.expect("select() names the implementation");
                (imp, state.threads)
            }
            _ => unreachable!("message workloads run on their own runtimes"),
        };
        match imp {
            Impl::Sumac => {
                if state.sumac.as_ref().is_none_or(|(t, _)| *t != threads) {
                    state.sumac = None;
                    let pool = sumac::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .expect("sumac pool");
                    state.sumac = Some((threads, pool));
                }
                let pool = &state.sumac.as_ref().expect("built").1;
                match self.kind {
                    Kind::Ring { tasks, hops } => sumac_ring(pool, tasks, hops),
                    Kind::Oneshot { rounds } => sumac_oneshot(pool, rounds),
                }
            }
            Impl::Tokio => {
                if state.tokio.as_ref().is_none_or(|(t, _)| *t != threads) {
                    state.tokio = None;
                    let runtime = tokio::runtime::Builder::new_multi_thread()
                        .worker_threads(threads)
                        .build()
                        .expect("tokio runtime");
                    state.tokio = Some((threads, runtime));
                }
                let runtime = &state.tokio.as_ref().expect("built").1;
                match self.kind {
                    Kind::Ring { tasks, hops } => tokio_ring(runtime, tasks, hops),
                    Kind::Oneshot { rounds } => tokio_oneshot(runtime, rounds),
                }
            }
            Impl::AsyncExecutor => {
                if state.smol.as_ref().is_none_or(|(t, _)| *t != threads) {
                    state.smol = None;
                    state.smol = Some((threads, SmolRuntime::new(threads)));
                }
                let executor = Arc::clone(&state.smol.as_ref().expect("built").1.executor);
                match self.kind {
                    Kind::Ring { tasks, hops } => smol_ring(&executor, tasks, hops),
                    Kind::Oneshot { rounds } => smol_oneshot(&executor, rounds),
                }
            }
            Impl::Threads => match self.kind {
                Kind::Ring { tasks, hops } => threads_ring(tasks, hops),
                Kind::Oneshot { .. } => unreachable!("threads run rings only"),
            },
            imp => unreachable!("{imp} does not run message workloads"),
        }
    }
}

/// The answer of a ring: the last holder's number (1-based).
fn last_holder(holders: impl IntoIterator<Item = Option<usize>>) -> u64 {
    let holders: Vec<usize> = holders.into_iter().flatten().collect();
    assert_eq!(holders.len(), 1, "exactly one task holds the token last");
    holders[0] as u64 + 1
}

// ------------------------------------------------------------------ sumac

fn sumac_ring(pool: &sumac::ThreadPool, tasks: usize, hops: usize) -> u64 {
    let links: Vec<_> = (0..tasks)
        .map(|_| sumac::channel::bounded::<usize>(1))
        .collect();
    let handles: Vec<_> = (0..tasks)
        .map(|i| {
            let receiver = links[i].1.clone();
            let sender = links[(i + 1) % tasks].0.clone();
            pool.spawn_future(async move {
                while let Ok(token) = receiver.recv_async().await {
                    if token == hops {
                        return Some(i);
                    }
                    if sender.send_async(token + 1).await.is_err() {
                        break;
                    }
                }
                None
            })
        })
        .collect();
    links[0].0.send(0).expect("the ring is alive");
    drop(links);
    last_holder(handles.into_iter().map(sumac::Task::join))
}

fn sumac_oneshot(pool: &sumac::ThreadPool, rounds: usize) -> u64 {
    pool.spawn_future(async move {
        let mut sum = 0u64;
        for i in 0..rounds {
            let (sender, receiver) = sumac::channel::oneshot();
            sumac::spawn_future(async move { sender.send(i as u64).expect("awaited") }).detach();
            sum += receiver.await.expect("answered");
        }
        sum
    })
    .join()
}

// ------------------------------------------------------------------ tokio

fn tokio_ring(runtime: &tokio::runtime::Runtime, tasks: usize, hops: usize) -> u64 {
    runtime.block_on(async move {
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..tasks)
            .map(|_| tokio::sync::mpsc::channel::<usize>(1))
            .unzip();
        let handles: Vec<_> = receivers
            .into_iter()
            .enumerate()
            .map(|(i, mut receiver)| {
                let sender = senders[(i + 1) % tasks].clone();
                tokio::spawn(async move {
                    while let Some(token) = receiver.recv().await {
                        if token == hops {
                            return Some(i);
                        }
                        if sender.send(token + 1).await.is_err() {
                            break;
                        }
                    }
                    None
                })
            })
            .collect();
        senders[0].send(0).await.expect("the ring is alive");
        drop(senders);
        let mut holders = Vec::new();
        for handle in handles {
            holders.push(handle.await.expect("ring task"));
        }
        last_holder(holders)
    })
}

fn tokio_oneshot(runtime: &tokio::runtime::Runtime, rounds: usize) -> u64 {
    runtime.block_on(async move {
        tokio::spawn(async move {
            let mut sum = 0u64;
            for i in 0..rounds {
                let (sender, receiver) = tokio::sync::oneshot::channel();
                tokio::spawn(async move { sender.send(i as u64).expect("awaited") });
                sum += receiver.await.expect("answered");
            }
            sum
        })
        .await
        .expect("driver task")
    })
}

// ------------------------------------------------------------------ async-executor

fn smol_ring(executor: &Arc<async_executor::Executor<'static>>, tasks: usize, hops: usize) -> u64 {
    let links: Vec<_> = (0..tasks)
        .map(|_| async_channel::bounded::<usize>(1))
        .collect();
    let handles: Vec<_> = (0..tasks)
        .map(|i| {
            let receiver = links[i].1.clone();
            let sender = links[(i + 1) % tasks].0.clone();
            executor.spawn(async move {
                while let Ok(token) = receiver.recv().await {
                    if token == hops {
                        return Some(i);
                    }
                    if sender.send(token + 1).await.is_err() {
                        break;
                    }
                }
                None
            })
        })
        .collect();
    futures_lite::future::block_on(async move {
        links[0].0.send(0).await.expect("the ring is alive");
        drop(links);
        let mut holders = Vec::new();
        for handle in handles {
            holders.push(handle.await);
        }
        last_holder(holders)
    })
}

fn smol_oneshot(executor: &Arc<async_executor::Executor<'static>>, rounds: usize) -> u64 {
    let inner = Arc::clone(executor);
    let driver = executor.spawn(async move {
        let mut sum = 0u64;
        for i in 0..rounds {
            let (sender, receiver) = async_channel::bounded(1);
            inner
                .spawn(async move { sender.send(i as u64).await.expect("awaited") })
                .detach();
            sum += receiver.recv().await.expect("answered");
        }
        sum
    });
    futures_lite::future::block_on(driver)
}

// ------------------------------------------------------------------ OS threads

fn threads_ring(tasks: usize, hops: usize) -> u64 {
    let links: Vec<_> = (0..tasks)
        .map(|_| crossbeam_channel::bounded::<usize>(1))
        .collect();
    thread::scope(|s| {
        let handles: Vec<_> = (0..tasks)
            .map(|i| {
                let receiver = links[i].1.clone();
                let sender = links[(i + 1) % tasks].0.clone();
                s.spawn(move || {
                    while let Ok(token) = receiver.recv() {
                        if token == hops {
                            return Some(i);
                        }
                        if sender.send(token + 1).is_err() {
                            break;
                        }
                    }
                    None
                })
            })
            .collect();
        links[0].0.send(0).expect("the ring is alive");
        drop(links);
        last_holder(handles.into_iter().map(|h| h.join().expect("ring thread")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_runtime_finds_the_last_holder_and_sums_the_answers() {
        for bench in [
            MessageBench::ring(7, 100, true),
            MessageBench::ring(503, 1000, false),
            MessageBench::oneshot(200),
        ] {
            let want = bench.expected();
            let mut state = Runtimes::default();
            for imp in [Impl::Sumac, Impl::Tokio, Impl::AsyncExecutor, Impl::Threads] {
                if !bench.runs(imp) {
                    continue;
                }
                bench.select(&mut state, imp);
                for threads in [1, 2] {
                    let got = bench.run(&mut Ctx::Static { threads }, &mut state, 0);
                    assert_eq!(got, want, "{imp} {threads} threads {:?}", bench.kind);
                }
            }
        }
    }
}
