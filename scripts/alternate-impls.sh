#!/usr/bin/env bash
# Implementations compared in separate processes, alternated, on a shared and noisy
# machine: each round runs every implementation once (each paired with `seq`, as every
# row is), in turn, and the next round runs them in the reverse order, so that neither
# the order within a round nor a slow stretch of the machine favours one of them. One
# process with all implementations runs them one after the other, and whichever comes
# second often shows the machine's drift (see bench/DECISIONS.md).
#
# Usage:
#   scripts/alternate-impls.sh ROUNDS IMPLS THREADS WORKLOAD [ARGS...]
#   e.g. scripts/alternate-impls.sh 6 sumac,rayon 2 bfs --scale 20 --keys 16 --direction top-down
# SUMAC_BENCH names the binary (default target/release/sumac-bench); OUT_DIR keeps the
# CSVs (default a temporary folder). Prints each run's row, then per implementation the
# mean over rounds of the median time and of the ratio to `seq`.
set -euo pipefail

usage() {
    echo "usage: $0 ROUNDS IMPLS THREADS WORKLOAD [ARGS...]" >&2
    exit 2
}
(($# >= 4)) || usage
rounds=$1
impls=$2
threads=$3
shift 3
[[ $rounds =~ ^[1-9][0-9]*$ ]] || usage
[[ $threads =~ ^[1-9][0-9]*$ ]] || usage
bench=${SUMAC_BENCH:-target/release/sumac-bench}
[[ -x $bench ]] || {
    echo "$0: no executable $bench (build it with cargo build --release -p sumac-bench)" >&2
    exit 2
}
out=${OUT_DIR:-$(mktemp -d)}
mkdir -p "$out"
IFS=, read -r -a list <<<"$impls"
n=${#list[@]}

for ((r = 1; r <= rounds; r++)); do
    for ((k = 0; k < n; k++)); do
        if ((r % 2 == 1)); then i=$k; else i=$((n - 1 - k)); fi
        imp=${list[$i]}
        csv=$out/round$r-$imp.csv
        "$bench" "$@" --threads "$threads" --impls "seq,$imp" --csv "$csv" --quiet >/dev/null
        awk -F, -v imp="$imp" -v r="$r" -v t="$threads" \
            'NR > 1 && $3 == imp && $4 == t { printf "round %d %-12s median %.6g ns  ratio %.4f\n", r, imp, $7, $10 }' "$csv"
    done
done

echo "mean over $rounds rounds (median ns per run, ratio to seq):"
for imp in "${list[@]}"; do
    cat "$out"/round*-"$imp".csv |
        awk -F, -v imp="$imp" -v t="$threads" \
            '$3 == imp && $4 == t { m += $7; q += $10; c++ }
             END { if (c) printf "  %-12s %.6g ns  %.4f  (%d rows)\n", imp, m / c, q / c, c }'
done
echo "CSVs in $out"
