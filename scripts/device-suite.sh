#!/usr/bin/env bash
# Runs `sumac-bench` on the 16-core device machine in parts that each fit its 10-minute
# command limit, and packs everything measured so far into one archive under $OUT (the
# device returns only a few files per command).
#
# Usage: bash scripts/device-suite.sh quick|1|2|3|4|5
#
# Here (the device has no network):
#   cargo build --release -p sumac-bench --bin sumac-bench
#   mkdir -p .bench-bin && cp target/release/sumac-bench .bench-bin/
# Then one device command per part, each carrying `.bench-bin`:
#   bash scripts/device-suite.sh quick  # headline + every mechanism off vs on  (< 4 min)
#   bash scripts/device-suite.sh 1      # tree-sum 1,000 and 100M, fib        (~3 min)
#   bash scripts/device-suite.sh 2      # work sweep, tree shapes, loops, sorts (~5 min)
#   bash scripts/device-suite.sh 3      # for-irregular, matmul                 (~6 min)
#   bash scripts/device-suite.sh 4      # coarse leaves (sumac-bench long-leaves) (~1 min)
#   bash scripts/device-suite.sh 5      # jacobi, increment, calls from main, fork
#                                       # overhead, the suite's long leaves     (~5 min)
# and unpack the last archive into bench/results/device-16core-<commit>/.
#
# `quick` is the one command to run when the machine is lent only briefly: the headline
# comparison (tree-sum 1,000 and 1M, fib 30 with cutoffs 1 and 20; seq, sumac, rayon,
# chili, static at 1 and all cores), then sumac with each switchable mechanism off beside
# the default (`--policy each`, rows `sumac[-name]`) and Rayon, at all cores, on the
# workloads the mechanisms are for: fine-grained forks (tree-sum 1,000, fib 35), short
# phases (lu 700, jacobi 256), long items (for-irregular 100), leaves without forks
# (long-leaves tree of 16) and calls from main (increment 1,000). It stops starting new
# runs after QUICK_SECONDS (default 180) and writes .bench-out/quick/ (REPORT.md, one
# CSV and SVG per experiment, headline.csv, run-log.txt), packed as $OUT/quick.tgz.
# SMOKE=1 runs it at tiny sizes (a check of the script on any machine).
#
# (The times of parts 1-3 predate paired `seq` samples, which repeat every `seq` run
# shorter than 50 ms beside each row; a part that outgrows its 540-second budget marks
# the experiments it skipped as "not run" in REPORT.md, and the next part can rerun them
# with --only.)
#
# The parts write into `.bench-out/` (ignored by git), which stays on the device while
# it is warm, so each part's REPORT.md covers the experiments of the earlier parts too.
set -euo pipefail

part=${1:?usage: device-suite.sh quick|1|2|3|4|5}
bin=${BIN:-.bench-bin/sumac-bench}
out=${OUT:?OUT must name the folder whose files come back}
dir=.bench-out/results

if [[ $part == quick ]]; then
    qdir=.bench-out/quick
    rm -rf "$qdir"
    mkdir -p "$qdir"
    smoke=()
    only=tree-sum-1000,fib-35-cutoff1,lu-700,jacobi-256x400,for-irregular-100-limit40
    only+=,long-leaves-tree4,increment-1000-from-main
    if [[ ${SMOKE:-} == 1 ]]; then
        smoke=(--smoke)
        only=tree-sum-100,fib-15-cutoff1,lu-20,jacobi-8x4,for-irregular-100-limit20
        only+=,long-leaves-tree4,increment-100-from-main
    fi
    only=${QUICK_ONLY:-$only}
    budget=${QUICK_SECONDS:-180}
    cores=$(nproc)
    log=$qdir/run-log.txt
    {
        echo "# quick on $(hostname), $cores cores, $(date -u +%FT%TZ)"
        grep -m1 'model name' /proc/cpuinfo || true
    } >>"$log"
    status=0
    # The headline comparison (about 20 s on 16 cores).
    timeout 60 "$bin" headline "${smoke[@]}" --threads "1,$cores" --samples 10 \
        --warmup-ms 100 --quiet --csv "$qdir/headline.csv" >>"$log" 2>&1 || status=$?
    # Each mechanism off beside the default, interleaved with seq's samples.
    "$bin" suite "${smoke[@]}" --out "$qdir" --threads "$cores" --policy each \
        --impls seq,sumac,rayon --samples 5 --warmup-ms 50 --max-seconds "$budget" \
        --only "$only" \
        --quiet >>"$log" 2>&1 || status=$?
    echo "# quick exit status $status" >>"$log"
    tar -C .bench-out -czf "$out/quick.tgz" quick
    tail -n 40 "$log"
    exit "$status"
fi

case $part in
1) only=tree-sum-1000,fib,tree-sum-100M ;;
2) only=work,random,left-deep,iota,sum-squares,sort,lu ;;
3) only=for-irregular,matmul ;;
4) only= ;;
5) only=jacobi,increment,from-main,fork-overhead,long-leaves ;;
*)
    echo "device-suite.sh: unknown part '$part' (expected quick, 1, 2, 3, 4 or 5)" >&2
    exit 2
    ;;
esac

mkdir -p "$dir"
{
    echo "# part $part on $(hostname), $(nproc) cores, $(date -u +%FT%TZ)"
    grep -m1 'model name' /proc/cpuinfo || true
} >>"$dir/run-log.txt"
status=0
if [[ $part == 4 ]]; then
    # Sequential leaves that make no forks under join trees, scopes and loops, sumac
    # beside Rayon: busy 20 ms and 2 ms leaves on 16 threads, sleeping ones on 32.
    for args in "20000 16" "2000 16" "20000 32 --sleep" "1000 16 --sleep"; do
        # shellcheck disable=SC2086 # the arguments are meant to split
        set -- $args
        "$bin" long-leaves --leaf-us "$1" --threads "$2" ${3:-} --quiet \
            --csv "$dir/long-leaves-$1us-$2${3:+-sleep}.csv" \
            >>"$dir/long-leaves.txt" 2>&1 || status=$?
    done
    cat "$dir/long-leaves.txt" >>"$dir/run-log.txt"
else
    "$bin" suite --out "$dir" --only "$only" --max-seconds 540 --quiet \
        >>"$dir/run-log.txt" 2>&1 || status=$?
fi
echo "# part $part exit status $status" >>"$dir/run-log.txt"
tar -C .bench-out -czf "$out/results.tgz" results
tail -n 40 "$dir/run-log.txt"
exit "$status"
