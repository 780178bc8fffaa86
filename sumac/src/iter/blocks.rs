//! `by_uniform_blocks` and `by_exponential_blocks`: an indexed loop run as a sequence of
//! parallel loops over consecutive blocks, each block finished before the next starts.
//! A search that finds its answer early then never touches the later blocks, and a
//! reduction sees the items block by block.

use super::plumbing::{
    bridge_producer_consumer, Consumer, Folder, Producer, ProducerCallback, Reducer,
    UnindexedConsumer,
};
use super::{IndexedParallelIterator, ParallelIterator};

/// The size of the first block of [`by_exponential_blocks`](IndexedParallelIterator::by_exponential_blocks).
const FIRST_EXPONENTIAL_BLOCK: usize = 1024;

/// Declares a block adaptor: the struct, and a `ParallelIterator` impl that runs the
/// base's producer block by block, the `k`th block (from 0) holding `$size(k, size)`
/// items.
macro_rules! block_adaptor {
    ($(#[$doc:meta])* $name:ident, |$k:ident, $size:ident| $block:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        #[must_use = "parallel iterators are lazy and do nothing unless consumed"]
        pub struct $name<I> {
            base: I,
            size: usize,
        }

        impl<I: IndexedParallelIterator> ParallelIterator for $name<I> {
            type Item = I::Item;
            fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
                let size = self.size;
                let len = self.base.len();
                self.base.with_producer(BlockCallback {
                    len,
                    consumer,
                    block_len: move |$k: u32| {
                        let $size = size;
                        $block
                    },
                })
            }
            fn opt_len(&self) -> Option<usize> {
                Some(self.base.len())
            }
            fn index_span(&self) -> usize {
                self.base.len()
            }
        }
    };
}

block_adaptor!(
    /// The iterator returned by [`IndexedParallelIterator::by_uniform_blocks`].
    UniformBlocks,
    |_k, size| size
);

block_adaptor!(
    /// The iterator returned by [`IndexedParallelIterator::by_exponential_blocks`].
    ExponentialBlocks,
    |k, _size| FIRST_EXPONENTIAL_BLOCK.saturating_mul(1usize.checked_shl(k).unwrap_or(usize::MAX))
);

impl<I> UniformBlocks<I> {
    pub(super) fn new(base: I, size: usize) -> Self {
        assert!(size != 0, "block_size must not be zero");
        UniformBlocks { base, size }
    }
}

impl<I> ExponentialBlocks<I> {
    pub(super) fn new(base: I) -> Self {
        ExponentialBlocks { base, size: 0 }
    }
}

/// Runs the producer, of `len` items, block by block into the consumer.
struct BlockCallback<C, L> {
    len: usize,
    consumer: C,
    block_len: L,
}

impl<T, C, L> ProducerCallback<T> for BlockCallback<C, L>
where
    C: Consumer<T>,
    L: Fn(u32) -> usize,
{
    type Output = C::Result;
    fn callback<P: Producer<Item = T>>(self, mut producer: P) -> C::Result {
        let BlockCallback {
            mut len,
            mut consumer,
            block_len,
        } = self;
        // The result so far, with the reducer that appends the next block's result.
        let mut result: Option<(C::Result, C::Reducer)> = None;
        let mut k = 0u32;
        while len > 0 && !consumer.full() {
            let n = block_len(k).min(len);
            k = k.saturating_add(1);
            let (block, rest) = producer.split_at(n);
            let (here, later, reducer) = consumer.split_at(n);
            let done = bridge_producer_consumer(n, block, here);
            result = Some(match result {
                Some((before, append)) => (append.reduce(before, done), reducer),
                None => (done, reducer),
            });
            producer = rest;
            len -= n;
            consumer = later;
        }
        // The blocks not run are dropped before the result is returned: if one of their
        // drops panics, `result` is then dropped while unwinding, whereas a return value
        // already made would leak (rust-lang/rust#47949).
        drop(producer);
        match result {
            Some((result, _)) => result,
            None => consumer.into_folder().complete(),
        }
    }
}
