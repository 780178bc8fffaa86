//! Tests that measure the whole process (its CPU time, its threads) and so run one at a
//! time, each holding [`ONE_AT_A_TIME`], in a test binary of their own: no other test's
//! threads may run meanwhile.
#[path = "../common/mod.rs"]
mod common;

mod idle;
mod threads;

/// Held by every test of this binary while it runs.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
