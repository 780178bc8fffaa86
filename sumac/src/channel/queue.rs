//! The message queues of buffered channels: crossbeam-queue's `ArrayQueue` (bounded,
//! the slots allocated once) and `SegQueue` (unbounded, blocks of slots), both lock-free.
//!
//! The wait/notify protocol of [`super::waiters`] relies on one property of both: a
//! push or pop that changes the queue updates its index with a sequentially consistent
//! read-modify-write, and a push that finds the queue full or a pop that finds it empty
//! decides so after a sequentially consistent fence (crossbeam-queue 0.3's
//! implementation; `is_empty` and `is_full` load both indices with `SeqCst`).
//!
//! Under `cfg(loom)` both are replaced by a queue behind a `crate::sync::Mutex` with the
//! same interface, so that loom models drive the channel's own code around it.

#[cfg(not(loom))]
pub(crate) use crossbeam_queue::{ArrayQueue as BoundedQueue, SegQueue as UnboundedQueue};

#[cfg(loom)]
pub(crate) use loom_queues::{BoundedQueue, UnboundedQueue};

#[cfg(loom)]
mod loom_queues {
    use std::collections::VecDeque;

    use crate::sync::{self, Mutex};

    pub(crate) struct BoundedQueue<T> {
        items: Mutex<VecDeque<T>>,
        capacity: usize,
    }

    impl<T> BoundedQueue<T> {
        pub(crate) fn new(capacity: usize) -> Self {
            assert!(capacity > 0, "capacity must be non-zero");
            BoundedQueue {
                items: Mutex::new(VecDeque::new()),
                capacity,
            }
        }

        pub(crate) fn push(&self, value: T) -> Result<(), T> {
            let mut items = sync::lock(&self.items);
            if items.len() == self.capacity {
                return Err(value);
            }
            items.push_back(value);
            Ok(())
        }

        pub(crate) fn pop(&self) -> Option<T> {
            sync::lock(&self.items).pop_front()
        }

        pub(crate) fn len(&self) -> usize {
            sync::lock(&self.items).len()
        }

        pub(crate) fn is_empty(&self) -> bool {
            self.len() == 0
        }

        pub(crate) fn is_full(&self) -> bool {
            self.len() == self.capacity
        }

        pub(crate) fn capacity(&self) -> usize {
            self.capacity
        }
    }

    pub(crate) struct UnboundedQueue<T> {
        items: Mutex<VecDeque<T>>,
    }

    impl<T> UnboundedQueue<T> {
        pub(crate) fn new() -> Self {
            UnboundedQueue {
                items: Mutex::new(VecDeque::new()),
            }
        }

        pub(crate) fn push(&self, value: T) {
            sync::lock(&self.items).push_back(value);
        }

        pub(crate) fn pop(&self) -> Option<T> {
            sync::lock(&self.items).pop_front()
        }

        pub(crate) fn len(&self) -> usize {
            sync::lock(&self.items).len()
        }

        pub(crate) fn is_empty(&self) -> bool {
            self.len() == 0
        }
    }
}
