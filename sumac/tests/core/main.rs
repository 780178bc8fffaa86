//! The core runtime: `join`, `scope` and `spawn`, `broadcast`, pools (building, handlers,
//! nesting) and their shutdown, `use_current_thread`, the rescue of jobs waiting behind
//! code that makes no forks, and random programs that combine all of these. One module
//! per subject; its stress and property tests sit beside its other tests.
//!
//! Every test here uses pools of its own, or the global pool as it is by default (tests
//! that configure the global pool or read the environment have binaries of their own).
#[path = "../common/mod.rs"]
mod common;

mod broadcast;
mod combinations;
mod current_thread;
mod join;
mod pool;
mod rescue;
mod scope;
mod shutdown;
