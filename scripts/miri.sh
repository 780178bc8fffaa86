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
# Tree Borrows: the spawn deques are crossbeam-deque's, whose memory reclamation
# (crossbeam-epoch) is not compatible with Stacked Borrows but is with Tree Borrows,
# the model crossbeam's own Miri runs use; Tree Borrows still reports every aliasing
# violation the compiler may exploit today. crossbeam-epoch also casts integers to
# pointers (a warning, not an error); sumac's own code uses the strict-provenance APIs. Its
# global collector keeps per-thread state behind tagged integers until the process
# ends, which Miri's leak check reports as leaked: leaks are left to the tests' drop
# counts (the Miri tests count the drops of what they move into jobs, channels and
# collections).
export MIRIFLAGS="${MIRIFLAGS:-} -Zmiri-tree-borrows -Zmiri-permissive-provenance -Zmiri-ignore-leaks"
if [[ -n "${MIRI_SEEDS:-}" ]]; then
    export MIRIFLAGS="${MIRIFLAGS:-} -Zmiri-many-seeds=${MIRI_SEEDS}"
fi
# MIRI_LIB=0 leaves out the unit tests (CI does, to stay within its time budget; the
# `unsafe` paths are all reached from `sumac/tests/miri.rs`).
lib=(--lib)
if [[ ${MIRI_LIB:-1} == 0 ]]; then
    lib=()
fi
cargo +nightly miri test -p sumac "${lib[@]}" --test miri -- --test-threads 1
