#!/usr/bin/env bash
# Runs sumac's unit tests and its Miri tests (sumac/tests/miri.rs: small inputs through
# every path of the `unsafe` code) under Miri, which reports undefined behaviour
# (Stacked Borrows aliasing violations, use-after-free, uninitialised reads), data races
# and weak-memory effects of the atomics, and leaks. About 10 minutes on 2 cores.
#
# Needs a nightly toolchain with Miri:
#   rustup toolchain install nightly --component miri --component rust-src
# Miri's clock and scheduler are deterministic (isolation stays on); MIRI_SEEDS=a..b
# runs the tests once per seed in that range, for other interleavings.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/miri}"
if [[ -n "${MIRI_SEEDS:-}" ]]; then
    export MIRIFLAGS="${MIRIFLAGS:-} -Zmiri-many-seeds=${MIRI_SEEDS}"
fi
cargo +nightly miri test -p sumac --lib --test miri -- --test-threads 1
