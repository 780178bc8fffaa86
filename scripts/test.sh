#!/usr/bin/env bash
# Runs every test of the workspace: unit, integration, property, CLI and doc tests
# (including the compile-fail doctests), with the `trace` feature on; then the tests of
# the `rayon` and `rayon-core` stand-ins (a workspace of their own, sharing the target
# folder).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --all-features
cargo test --manifest-path compat/Cargo.toml --target-dir target --workspace --all-features
