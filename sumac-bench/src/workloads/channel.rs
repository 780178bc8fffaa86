//! crossbeam-channel's own benchmark suite (`seq`, `spsc`, `mpsc`, `mpmc`, `select_rx`),
//! run over sumac's channels and the peers': `usize` messages `0..messages`, the
//! result is their sum. Every participant is an OS thread (the timed run spawns them,
//! as crossbeam's suite does), so the rows compare channels, not schedulers.
//!
//! - `seq`: one thread sends every message, then receives them (capacity N, unbounded);
//! - `spsc`: one sender thread, one receiver thread;
//! - `mpsc`: `threads` sender threads, one receiver thread;
//! - `mpmc`: `threads` sender threads, `threads` receiver threads;
//! - `select_rx`: `threads` channels, a sender thread on each, one receiver thread
//!   selecting among them.
//!
//! The reference (the `seq` row, sampled alternately with every other row) is
//! crossbeam-channel itself at the same thread count: a row's `ratio` is its time over
//! crossbeam-channel's, measured interleaved in one process.

use std::thread;

use crate::impls::{Ctx, Impl};
use crate::workloads::Workload;

/// The shapes of crossbeam-channel's suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Send everything, then receive everything, on one thread.
    Seq,
    /// One sender, one receiver.
    Spsc,
    /// `threads` senders, one receiver.
    Mpsc,
    /// `threads` senders, `threads` receivers.
    Mpmc,
    /// One receiver selecting among `threads` channels, one sender each.
    SelectRx,
}

impl Shape {
    /// Every shape, in the suite's order.
    pub const ALL: [Shape; 5] = [
        Shape::Seq,
        Shape::Spsc,
        Shape::Mpsc,
        Shape::Mpmc,
        Shape::SelectRx,
    ];

    /// The name used on the command line and in bench names.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Seq => "seq",
            Shape::Spsc => "spsc",
            Shape::Mpsc => "mpsc",
            Shape::Mpmc => "mpmc",
            Shape::SelectRx => "select_rx",
        }
    }

    /// Parses a shape name.
    pub fn parse(text: &str) -> Option<Shape> {
        Shape::ALL.into_iter().find(|s| s.name() == text)
    }

    /// Whether `imp` can run this shape with `capacity` (`None` = unbounded).
    pub fn supports(self, imp: Impl, capacity: Option<usize>) -> bool {
        let library = matches!(
            imp,
            Impl::Seq
                | Impl::Sumac
                | Impl::CrossbeamChannel
                | Impl::Flume
                | Impl::Kanal
                | Impl::Crossfire
                | Impl::StdMpsc
        );
        // A channel of capacity 0 or 1 cannot hold everything one thread sends first.
        let seq_fits = self != Shape::Seq || !matches!(capacity, Some(0 | 1));
        let shape_ok = match self {
            Shape::Mpmc => imp != Impl::StdMpsc,
            Shape::SelectRx => matches!(
                imp,
                Impl::Seq | Impl::Sumac | Impl::CrossbeamChannel | Impl::Flume
            ),
            _ => true,
        };
        // crossfire 3 turns capacity 0 into 1 (no rendezvous).
        let capacity_ok = !(imp == Impl::Crossfire && capacity == Some(0));
        library && seq_fits && shape_ok && capacity_ok
    }
}

/// One shape of the suite at one capacity.
pub struct ChannelBench {
    shape: Shape,
    capacity: Option<usize>,
    messages: usize,
}

impl ChannelBench {
    /// The benchmark of `shape` over channels of `capacity` (`None` = unbounded).
    pub fn new(shape: Shape, capacity: Option<usize>, messages: usize) -> Self {
        ChannelBench {
            shape,
            capacity,
            messages,
        }
    }

    fn expected(&self) -> u64 {
        let m = self.messages as u64;
        m * m.saturating_sub(1) / 2
    }

    fn run_with<L: Library>(&self, threads: usize) -> u64 {
        let (m, cap) = (self.messages, self.capacity);
        match self.shape {
            Shape::Seq => seq::<L>(cap, m),
            Shape::Spsc => spsc::<L>(cap, m),
            Shape::Mpsc => mpsc::<L>(cap, m, threads),
            Shape::Mpmc => mpmc::<L>(cap, m, threads),
            Shape::SelectRx => L::select_rx(cap, m, threads),
        }
    }
}

/// Which implementation the next runs use, and their thread count (also the
/// reference's).
#[derive(Default)]
pub struct Chosen(Option<Impl>, usize);

impl Workload for ChannelBench {
    type State = Chosen;
    const OWN_THREADS: bool = true;

    fn new_state(&self) -> Chosen {
        Chosen::default()
    }

    fn select(&self, state: &mut Chosen, imp: Impl) {
        state.0 = Some(imp);
    }

    fn supports(imp: Impl) -> bool {
        Shape::ALL.iter().any(|s| s.supports(imp, None))
    }

    fn run(&self, ctx: &mut Ctx<'_, '_>, state: &mut Chosen, _param: u64) -> u64 {
        let threads = match ctx {
            // The reference: crossbeam-channel (see the module documentation).
            Ctx::Seq if self.shape.supports(Impl::CrossbeamChannel, self.capacity) => {
                return self.run_with::<CrossbeamLib>(state.1.max(1));
            }
            Ctx::Seq => return self.expected(),
            Ctx::Static { threads } => (*threads).max(1),
            _ => unreachable!("channel workloads run with their own threads"),
        };
        state.1 = threads;
        match state.0.expect("select() names the implementation") {
            Impl::Sumac => self.run_with::<SumacLib>(threads),
            Impl::CrossbeamChannel => self.run_with::<CrossbeamLib>(threads),
            Impl::Flume => self.run_with::<FlumeLib>(threads),
            Impl::Kanal => self.run_with::<KanalLib>(threads),
            Impl::Crossfire => self.run_with::<CrossfireLib>(threads),
            Impl::StdMpsc => self.run_with::<StdLib>(threads),
            imp => unreachable!("{imp} does not run the channel suite"),
        }
    }
}

/// A channel library under test (messages are `usize`).
trait Library {
    type S: Clone + Send + 'static;
    type R: Send + 'static;
    fn new(capacity: Option<usize>) -> (Self::S, Self::R);
    fn send(sender: &Self::S, v: usize);
    /// `None` once the channel is empty and disconnected.
    fn recv(receiver: &Self::R) -> Option<usize>;
    /// Another receiver of the same channel (MPMC libraries only).
    fn clone_receiver(receiver: &Self::R) -> Self::R;
    /// The `select_rx` shape (libraries with a select only).
    fn select_rx(_capacity: Option<usize>, _messages: usize, _threads: usize) -> u64 {
        unreachable!("no select")
    }
}

fn seq<L: Library>(capacity: Option<usize>, messages: usize) -> u64 {
    let (sender, receiver) = L::new(capacity);
    for i in 0..messages {
        L::send(&sender, i);
    }
    (0..messages)
        .map(|_| L::recv(&receiver).expect("a message") as u64)
        .sum()
}

/// Receives until the channel is empty and disconnected; returns the sum.
fn drain<L: Library>(receiver: L::R) -> u64 {
    let mut sum = 0u64;
    while let Some(v) = L::recv(&receiver) {
        sum += v as u64;
    }
    sum
}

fn spsc<L: Library>(capacity: Option<usize>, messages: usize) -> u64 {
    mpsc::<L>(capacity, messages, 1)
}

fn mpsc<L: Library>(capacity: Option<usize>, messages: usize, senders: usize) -> u64 {
    let (sender, receiver) = L::new(capacity);
    thread::scope(|s| {
        for p in 0..senders {
            let sender = sender.clone();
            s.spawn(move || {
                for i in (p..messages).step_by(senders) {
                    L::send(&sender, i);
                }
            });
        }
        drop(sender);
        s.spawn(move || drain::<L>(receiver))
            .join()
            .expect("receiver")
    })
}

fn mpmc<L: Library>(capacity: Option<usize>, messages: usize, threads: usize) -> u64 {
    let (sender, receiver) = L::new(capacity);
    thread::scope(|s| {
        for p in 0..threads {
            let sender = sender.clone();
            s.spawn(move || {
                for i in (p..messages).step_by(threads) {
                    L::send(&sender, i);
                }
            });
        }
        drop(sender);
        let receivers: Vec<_> = (0..threads)
            .map(|_| {
                let receiver = L::clone_receiver(&receiver);
                s.spawn(move || drain::<L>(receiver))
            })
            .collect();
        drop(receiver);
        receivers
            .into_iter()
            .map(|r| r.join().expect("receiver"))
            .sum()
    })
}

/// Spawns one sender thread per channel of `channels`, sending its share of `0..messages`.
fn select_senders<'s, S: Send + 'static>(
    scope: &'s thread::Scope<'s, '_>,
    senders: Vec<S>,
    messages: usize,
    send: fn(&S, usize),
) {
    let count = senders.len();
    for (p, sender) in senders.into_iter().enumerate() {
        scope.spawn(move || {
            for i in (p..messages).step_by(count) {
                send(&sender, i);
            }
        });
    }
}

struct SumacLib;

impl Library for SumacLib {
    type S = sumac::channel::Sender<usize>;
    type R = sumac::channel::Receiver<usize>;
    fn new(capacity: Option<usize>) -> (Self::S, Self::R) {
        match capacity {
            None => sumac::channel::unbounded(),
            Some(cap) => sumac::channel::bounded(cap),
        }
    }
    fn send(sender: &Self::S, v: usize) {
        sender.send(v).expect("receiver alive");
    }
    fn recv(receiver: &Self::R) -> Option<usize> {
        receiver.recv().ok()
    }
    fn clone_receiver(receiver: &Self::R) -> Self::R {
        receiver.clone()
    }
    fn select_rx(capacity: Option<usize>, messages: usize, threads: usize) -> u64 {
        let (senders, receivers): (Vec<_>, Vec<_>) =
            (0..threads).map(|_| Self::new(capacity)).unzip();
        thread::scope(|s| {
            // The channels stay connected while the receiver selects (as in
            // crossbeam's suite): a finished sender's channel is not selected.
            select_senders(s, senders.clone(), messages, Self::send);
            s.spawn(move || {
                let mut sum = 0u64;
                for _ in 0..messages {
                    let mut select = sumac::channel::Select::new();
                    for receiver in &receivers {
                        select.recv(receiver);
                    }
                    let operation = select.select();
                    let index = operation.index();
                    sum += operation.recv(&receivers[index]).expect("a message") as u64;
                }
                sum
            })
            .join()
            .expect("receiver")
        })
    }
}

struct CrossbeamLib;

impl Library for CrossbeamLib {
    type S = crossbeam_channel::Sender<usize>;
    type R = crossbeam_channel::Receiver<usize>;
    fn new(capacity: Option<usize>) -> (Self::S, Self::R) {
        match capacity {
            None => crossbeam_channel::unbounded(),
            Some(cap) => crossbeam_channel::bounded(cap),
        }
    }
    fn send(sender: &Self::S, v: usize) {
        sender.send(v).expect("receiver alive");
    }
    fn recv(receiver: &Self::R) -> Option<usize> {
        receiver.recv().ok()
    }
    fn clone_receiver(receiver: &Self::R) -> Self::R {
        receiver.clone()
    }
    fn select_rx(capacity: Option<usize>, messages: usize, threads: usize) -> u64 {
        let (senders, receivers): (Vec<_>, Vec<_>) =
            (0..threads).map(|_| Self::new(capacity)).unzip();
        thread::scope(|s| {
            // The channels stay connected while the receiver selects (as in
            // crossbeam's suite): a finished sender's channel is not selected.
            select_senders(s, senders.clone(), messages, Self::send);
            s.spawn(move || {
                let mut sum = 0u64;
                for _ in 0..messages {
                    let mut select = crossbeam_channel::Select::new();
                    for receiver in &receivers {
                        select.recv(receiver);
                    }
                    let operation = select.select();
                    let index = operation.index();
                    sum += operation.recv(&receivers[index]).expect("a message") as u64;
                }
                sum
            })
            .join()
            .expect("receiver")
        })
    }
}

struct FlumeLib;

impl Library for FlumeLib {
    type S = flume::Sender<usize>;
    type R = flume::Receiver<usize>;
    fn new(capacity: Option<usize>) -> (Self::S, Self::R) {
        match capacity {
            None => flume::unbounded(),
            Some(cap) => flume::bounded(cap),
        }
    }
    fn send(sender: &Self::S, v: usize) {
        sender.send(v).expect("receiver alive");
    }
    fn recv(receiver: &Self::R) -> Option<usize> {
        receiver.recv().ok()
    }
    fn clone_receiver(receiver: &Self::R) -> Self::R {
        receiver.clone()
    }
    fn select_rx(capacity: Option<usize>, messages: usize, threads: usize) -> u64 {
        let (senders, receivers): (Vec<_>, Vec<_>) =
            (0..threads).map(|_| Self::new(capacity)).unzip();
        thread::scope(|s| {
            // The channels stay connected while the receiver selects (as in
            // crossbeam's suite): a finished sender's channel is not selected.
            select_senders(s, senders.clone(), messages, Self::send);
            s.spawn(move || {
                let mut sum = 0u64;
                for _ in 0..messages {
                    let mut selector = flume::Selector::new();
                    for receiver in &receivers {
                        selector = selector.recv(receiver, |v| v.expect("a message"));
                    }
                    sum += selector.wait() as u64;
                }
                sum
            })
            .join()
            .expect("receiver")
        })
    }
}

struct KanalLib;

impl Library for KanalLib {
    type S = kanal::Sender<usize>;
    type R = kanal::Receiver<usize>;
    fn new(capacity: Option<usize>) -> (Self::S, Self::R) {
        match capacity {
            None => kanal::unbounded(),
            Some(cap) => kanal::bounded(cap),
        }
    }
    fn send(sender: &Self::S, v: usize) {
        sender.send(v).expect("receiver alive");
    }
    fn recv(receiver: &Self::R) -> Option<usize> {
        receiver.recv().ok()
    }
    fn clone_receiver(receiver: &Self::R) -> Self::R {
        receiver.clone()
    }
}

struct CrossfireLib;

/// crossfire's bounded and unbounded `mpmc` ends are different types.
enum CrossfireSender {
    Array(crossfire::MTx<crossfire::mpmc::Array<usize>>),
    List(crossfire::MTx<crossfire::mpmc::List<usize>>),
}

enum CrossfireReceiver {
    Array(crossfire::MRx<crossfire::mpmc::Array<usize>>),
    List(crossfire::MRx<crossfire::mpmc::List<usize>>),
}

impl Clone for CrossfireSender {
    fn clone(&self) -> Self {
        match self {
            CrossfireSender::Array(s) => CrossfireSender::Array(s.clone()),
            CrossfireSender::List(s) => CrossfireSender::List(s.clone()),
        }
    }
}

impl Library for CrossfireLib {
    type S = CrossfireSender;
    type R = CrossfireReceiver;
    fn new(capacity: Option<usize>) -> (Self::S, Self::R) {
        // crossfire's advice for virtual machines (its spinning settings), once.
        static DETECTED: std::sync::Once = std::sync::Once::new();
        DETECTED.call_once(crossfire::detect_backoff_cfg);
        match capacity {
            None => {
                let (s, r) = crossfire::mpmc::unbounded_blocking();
                (CrossfireSender::List(s), CrossfireReceiver::List(r))
            }
            Some(cap) => {
                let (s, r) = crossfire::mpmc::bounded_blocking(cap);
                (CrossfireSender::Array(s), CrossfireReceiver::Array(r))
            }
        }
    }
    fn send(sender: &Self::S, v: usize) {
        use crossfire::BlockingTxTrait;
        match sender {
            CrossfireSender::Array(s) => s.send(v).expect("receiver alive"),
            CrossfireSender::List(s) => s.send(v).expect("receiver alive"),
        }
    }
    fn recv(receiver: &Self::R) -> Option<usize> {
        use crossfire::BlockingRxTrait;
        match receiver {
            CrossfireReceiver::Array(r) => r.recv().ok(),
            CrossfireReceiver::List(r) => r.recv().ok(),
        }
    }
    fn clone_receiver(receiver: &Self::R) -> Self::R {
        match receiver {
            CrossfireReceiver::Array(r) => CrossfireReceiver::Array(r.clone()),
            CrossfireReceiver::List(r) => CrossfireReceiver::List(r.clone()),
        }
    }
}

struct StdLib;

impl Library for StdLib {
    type S = StdSender;
    type R = std::sync::mpsc::Receiver<usize>;
    fn new(capacity: Option<usize>) -> (Self::S, Self::R) {
        match capacity {
            None => {
                let (s, r) = std::sync::mpsc::channel();
                (StdSender::Unbounded(s), r)
            }
            Some(cap) => {
                let (s, r) = std::sync::mpsc::sync_channel(cap);
                (StdSender::Bounded(s), r)
            }
        }
    }
    fn send(sender: &Self::S, v: usize) {
        match sender {
            StdSender::Unbounded(s) => s.send(v).expect("receiver alive"),
            StdSender::Bounded(s) => s.send(v).expect("receiver alive"),
        }
    }
    fn recv(receiver: &Self::R) -> Option<usize> {
        receiver.recv().ok()
    }
    fn clone_receiver(_receiver: &Self::R) -> Self::R {
        unreachable!("std::sync::mpsc has a single receiver")
    }
}

/// `std::sync::mpsc`'s two sender types.
#[derive(Clone)]
enum StdSender {
    Unbounded(std::sync::mpsc::Sender<usize>),
    Bounded(std::sync::mpsc::SyncSender<usize>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_library_and_shape_sums_the_messages() {
        let libraries = [
            Impl::Sumac,
            Impl::CrossbeamChannel,
            Impl::Flume,
            Impl::Kanal,
            Impl::Crossfire,
            Impl::StdMpsc,
        ];
        for shape in Shape::ALL {
            for capacity in [Some(0), Some(1), Some(1000), None] {
                let bench = ChannelBench::new(shape, capacity, 1000);
                let want = bench.run(&mut Ctx::Seq, &mut Chosen::default(), 0);
                for imp in libraries {
                    if !shape.supports(imp, capacity) {
                        continue;
                    }
                    let mut state = Chosen::default();
                    bench.select(&mut state, imp);
                    let got = bench.run(&mut Ctx::Static { threads: 4 }, &mut state, 0);
                    assert_eq!(got, want, "{imp} {shape:?} {capacity:?}");
                }
            }
        }
    }
}
