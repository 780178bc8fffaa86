//! Parallel iterators: every adaptor and consumer against its sequential `std` twin,
//! random pipelines of adaptors, the loop driver and how loops split (at heartbeats,
//! forced, with `with_min_len`), searches, panics and drop accounting, sizes at the edge
//! of `usize`, the sorts and drains, `par_bridge` and `walk_tree`, and Rayon's API and
//! `plumbing` traits used as Rayon users write them. One module per subject; its property
//! tests sit beside its other tests (their saved failure seeds: `../proptest-regressions/`).
//!
//! CI's second, optimised run leaves out (`--cfg skip_api_twins`) the modules that check
//! results of Rayon's surface and of adaptor chains against `std`: they instantiate most
//! of this binary's generic code, which is what makes an optimised build of it slow, and
//! the debug run checks the same results under forced splits and 1 µs heartbeats. The
//! optimised run keeps the driver, real-heartbeat splits, panics, sizes, sorts, drains,
//! searches and hand-written plumbing. See `.ci/run`.
//!
//! Forced splits here are a setting of each pool (`force_splits`); the global pool is
//! left as it is by default (tests that force splits in it run in `iter_split`).
#[path = "../common/mod.rs"]
mod common;

#[cfg(not(skip_api_twins))]
mod adaptors;
mod drain;
mod driver;
mod heartbeat_splits;
mod min_len;
mod panics;
mod par_bridge;
#[cfg(not(skip_api_twins))]
mod pipelines;
#[cfg(not(skip_api_twins))]
mod rayon_api;
#[cfg(not(skip_api_twins))]
mod rayon_consumers;
mod rayon_plumbing;
mod searches;
mod sizes;
mod sort;
mod walk_tree;
