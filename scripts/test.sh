#!/usr/bin/env bash
# Runs every test of the workspace: unit, integration, property, CLI and doc tests
# (including the compile-fail doctests), with the `trace` feature on.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --all-features
