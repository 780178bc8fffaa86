#!/usr/bin/env bash
# Real crates that use Rayon, on the `rayon`/`rayon-core` stand-ins (compat/) and on
# Rayon itself, side by side.
#
# For each crate below, its published source (fetched from crates.io by cargo, with its
# own Cargo.lock) is copied twice into a scratch folder outside the repository. One copy
# gets both stand-ins through `[patch.crates-io]`, the other keeps Rayon 1.12.0 and
# rayon-core 1.13.0 from crates.io (the releases whose API the stand-ins carry); in both,
# `cargo tree` must show the intended rayon and rayon-core only. Then the crate's own
# test suite runs with its Rayon feature in each copy, and the pass/fail/ignore counts
# are printed side by side. ndarray's published crate ships no tests/ folder: its lib and
# doc tests run (its parallel tests among them).
#
# Last, a program that depends on `image` (default features) and on `ndarray` with
# `rayon` is built on the stand-ins (scripts/compat/one_pool_program.rs): its dependency
# graph must hold no real rayon or rayon-core, and it checks that the process has one
# set of worker threads, sumac's global pool.
#
# Exits non-zero if a count differs, a test fails, a build fails or a check fails.
#
# Usage: scripts/compat.sh [--scratch DIR] [--skip-program]
#   --scratch DIR   work in DIR (default: $TMPDIR/sumac-compat, or /tmp/sumac-compat);
#                   its target/ folder is kept between runs, so a second run is faster
#   --skip-program  leave out the image + ndarray program
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
scratch="${TMPDIR:-/tmp}/sumac-compat"
program=1
while [ $# -gt 0 ]; do
    case "$1" in
        --scratch)
            [ $# -ge 2 ] || { echo "--scratch needs a folder" >&2; exit 2; }
            scratch=$2
            shift 2
            ;;
        --skip-program) program=0; shift ;;
        -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done
outside_repo() { # absolute-path
    case "$1/" in
        "$repo/"*) echo "the scratch folder must be outside the repository: $1" >&2; return 1 ;;
    esac
}
case "$scratch" in /*) ;; *) scratch="$PWD/$scratch" ;; esac
outside_repo "$scratch" || exit 2
mkdir -p "$scratch" && scratch=$(cd "$scratch" && pwd) || exit 2
outside_repo "$scratch" || exit 2

# crate, version, features, test arguments (the crates' Rayon features, as in issue 28).
crates=(
    "hashbrown 0.17.2 rayon"
    "indexmap 2.14.2 rayon"
    "dashmap 6.2.1 rayon"
    "ndarray 0.17.2 rayon,approx"
)
rayon_version=1.12.0
rayon_core_version=1.13.0

export CARGO_TERM_COLOR=never
export CARGO_TARGET_DIR="$scratch/target"
start=$(date +%s)
failed=0
say() { printf '== %s\n' "$*"; }
fail() { printf 'FAILED: %s\n' "$*"; failed=1; }

# The crates' published sources, through cargo (which downloads and unpacks them).
say "fetching the crates' sources from crates.io"
mkdir -p "$scratch/sources/src"
touch "$scratch/sources/src/lib.rs"
{
    printf '[package]\nname = "sources"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n[dependencies]\n'
    for entry in "${crates[@]}"; do
        read -r name version _ <<<"$entry"
        printf '%s = "=%s"\n' "$name" "$version"
    done
    printf '\n[workspace]\n'
} >"$scratch/sources/Cargo.toml"
metadata=$(cargo metadata --format-version 1 --manifest-path "$scratch/sources/Cargo.toml") \
    || { echo "cargo could not fetch the crates" >&2; exit 1; }
source_dir() { # name version
    printf '%s' "$metadata" | grep -o "\"manifest_path\":\"[^\"]*/$1-$2/Cargo.toml\"" \
        | head -n 1 | sed 's/^"manifest_path":"//; s#/Cargo.toml"$##'
}

# Copies a crate into $scratch/VARIANT/ and points it at the stand-ins or at Rayon.
prepare() { # variant name version features
    local variant=$1 name=$2 version=$3 features=$4 src dir
    src=$(source_dir "$name" "$version")
    [ -n "$src" ] || { echo "no source for $name $version" >&2; return 1; }
    dir="$scratch/$variant/$name-$version"
    rm -rf "$dir" && mkdir -p "$scratch/$variant" && cp -R "$src" "$dir" && chmod -R u+w "$dir" \
        || return 1
    # Built with the same toolchain as everything else (dashmap pins one).
    rm -f "$dir/rust-toolchain" "$dir/rust-toolchain.toml"
    grep -q '^\[workspace\]' "$dir/Cargo.toml" || printf '\n[workspace]\n' >>"$dir/Cargo.toml"
    (
        cd "$dir" || exit 1
        if [ "$variant" = stand-ins ]; then
            printf '\n[patch.crates-io]\nrayon = { path = "%s" }\nrayon-core = { path = "%s" }\n' \
                "$repo/compat/rayon" "$repo/compat/rayon-core" >>Cargo.toml
            # A lock that pins an older Rayon would leave the patch unused.
            cargo update -q -p rayon -p rayon-core
        else
            cargo update -q -p rayon-core --precise "$rayon_core_version" \
                && cargo update -q -p rayon --precise "$rayon_version"
        fi
    ) || return 1
    check_rayons "$variant" "$dir" --features "$features"
}

# Checks that a copy's dependency graph holds only the intended rayon and rayon-core.
check_rayons() { # variant dir cargo-tree-arguments...
    local variant=$1 dir=$2 found expected
    shift 2
    found=$(cd "$dir" && cargo tree "$@" --prefix none --format '{p}' \
        | grep -E '^rayon(-core)? v' | sed 's/ (\*)$//' | sort -u)
    if [ "$variant" = stand-ins ]; then
        expected=$(printf 'rayon v%s (%s)\nrayon-core v%s (%s)' \
            "$rayon_version" "$repo/compat/rayon" "$rayon_core_version" "$repo/compat/rayon-core")
    else
        expected=$(printf 'rayon v%s\nrayon-core v%s' "$rayon_version" "$rayon_core_version")
    fi
    if [ "$found" != "$expected" ]; then
        printf 'unexpected rayon crates in %s:\n%s\n(expected:\n%s)\n' "$dir" "$found" "$expected"
        return 1
    fi
}

# Runs a copy's tests; prints "passed failed ignored exit-status".
run_tests() { # variant name version features
    local variant=$1 name=$2 version=$3 features=$4 log status
    log="$scratch/$variant/$name-$version.log"
    (cd "$scratch/$variant/$name-$version" && cargo test --no-fail-fast --features "$features") \
        >"$log" 2>&1
    status=$?
    awk -v status="$status" '
        /^test result:/ {
            for (i = 1; i < NF; i++) {
                if ($(i + 1) ~ /^passed/) passed += $i
                if ($(i + 1) ~ /^failed/) failed += $i
                if ($(i + 1) ~ /^ignored/) ignored += $i
            }
        }
        END { print passed + 0, failed + 0, ignored + 0, status }' "$log"
}

rows=()
for entry in "${crates[@]}"; do
    read -r name version features <<<"$entry"
    declare -A counts=()
    for variant in stand-ins rayon; do
        say "$name $version on $variant: cargo test --features $features"
        t0=$(date +%s)
        if prepare "$variant" "$name" "$version" "$features"; then
            counts[$variant]=$(run_tests "$variant" "$name" "$version" "$features")
        else
            counts[$variant]="0 0 0 setup-failed"
        fi
        echo "   passed failed ignored exit: ${counts[$variant]} ($(($(date +%s) - t0)) s;" \
            "log: $scratch/$variant/$name-$version.log)"
    done
    read -r sp sf si ss <<<"${counts[stand-ins]}"
    read -r rp rf ri rs <<<"${counts[rayon]}"
    verdict=same
    if [ "$sp $sf $si" != "$rp $rf $ri" ] || [ "$ss" != 0 ] || [ "$rs" != 0 ] || [ "$sp" = 0 ]; then
        verdict=DIFFERENT
        fail "$name $version: stand-ins $sp/$sf/$si (exit $ss), Rayon $rp/$rf/$ri (exit $rs)"
    fi
    rows+=("$(printf '%-18s %-30s %-22s %-22s %s' "$name $version" "--features $features" \
        "$sp / $sf / $si" "$rp / $rf / $ri" "$verdict")")
    unset counts
done

if [ "$program" = 1 ]; then
    say "a program using image (default features) and ndarray (rayon), on the stand-ins"
    t0=$(date +%s)
    dir="$scratch/one-pool-program"
    mkdir -p "$dir/src"
    cp "$repo/scripts/compat/one_pool_program.rs" "$dir/src/main.rs"
    cat >"$dir/Cargo.toml" <<TOML
[package]
name = "one-pool-program"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
image = "=0.25.10"
ndarray = { version = "=0.17.2", features = ["rayon"] }
rayon = "1.12"
rayon-core = "1.13"

[patch.crates-io]
rayon = { path = "$repo/compat/rayon" }
rayon-core = { path = "$repo/compat/rayon-core" }

[workspace]
TOML
    if ! check_rayons stand-ins "$dir"; then
        fail "the program's dependency graph holds a real rayon or rayon-core"
    elif ! (cd "$dir" && cargo build -q 2>&1 | tail -n 20); then
        fail "the program does not build"
    elif ! (cd "$dir" && cargo run -q); then
        fail "the program does not run one pool"
    fi
    echo "   ($(($(date +%s) - t0)) s)"
fi

echo
printf '%-18s %-30s %-22s %-22s %s\n' crate "cargo test" "stand-ins pass/fail/ign" \
    "Rayon pass/fail/ign" ""
printf '%s\n' "${rows[@]}"
echo "scratch folder: $scratch; total time: $(($(date +%s) - start)) s"
if [ "$failed" != 0 ]; then
    echo "compat.sh: FAILED (see above)"
    exit 1
fi
echo "compat.sh: every count matches"
