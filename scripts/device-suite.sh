#!/usr/bin/env bash
# Runs `sumac-bench suite` on the 16-core device machine in parts that each fit its
# 10-minute command limit, and packs everything measured so far into one archive under
# $OUT (the device returns only a few files per command).
#
# Here (the device has no network):
#   cargo build --release -p sumac-bench --bin sumac-bench
#   mkdir -p .bench-bin && cp target/release/sumac-bench .bench-bin/
# Then one device command per part, each carrying `.bench-bin`:
#   bash scripts/device-suite.sh 1      # tree-sum 1,000 and 100M, fib        (~3 min)
#   bash scripts/device-suite.sh 2      # work sweep, tree shapes, loops, sorts (~5 min)
#   bash scripts/device-suite.sh 3      # for-irregular, matmul                 (~6 min)
#   bash scripts/device-suite.sh 4      # coarse leaves (sumac-bench long-leaves) (~1 min)
# and unpack the last archive into bench/results/device-16core-<commit>/.
# (The times above predate paired `seq` samples, which repeat every `seq` run shorter
# than 50 ms beside each row; a part that outgrows its 540-second budget marks the
# experiments it skipped as "not run" in REPORT.md, and the next part can rerun them
# with --only.)
#
# The parts write into `.bench-out/` (ignored by git), which stays on the device while
# it is warm, so each part's REPORT.md covers the experiments of the earlier parts too.
set -euo pipefail

part=${1:?usage: device-suite.sh 1|2|3|4}
bin=${BIN:-.bench-bin/sumac-bench}
out=${OUT:?OUT must name the folder whose files come back}
dir=.bench-out/results

case $part in
1) only=tree-sum-1000,fib,tree-sum-100M ;;
2) only=work,random,left-deep,iota,sum-squares,sort,lu ;;
3) only=for-irregular,matmul ;;
4) only= ;;
*)
    echo "device-suite.sh: unknown part '$part' (expected 1, 2, 3 or 4)" >&2
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
