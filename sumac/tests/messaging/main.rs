//! Messaging between threads and tasks: `sumac::channel` (crossbeam-channel's semantics,
//! `Select`, oneshots, async ends) and async tasks on the pool (`spawn_future`, `Task`,
//! `block_on`).
#[path = "../common/mod.rs"]
mod common;

mod channel;
mod tasks;
