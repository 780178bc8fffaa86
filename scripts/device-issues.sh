#!/usr/bin/env bash
# One device command for the 16-core figures the open issues ask for (at all cores,
# `seq` beside them), each step under its own time limit, everything measured so far
# packed into $OUT/issues.tgz after every step (so a command stopped at its limit still
# returns what it finished):
#   1. issue 25's table at all cores: lu 700, jacobi 256 x 400, for-irregular 100
#      (limit 35), par_sort_unstable 10M, fib(35) cutoff 20, matmul 500, increment
#      102,400 inside `install`, and increment 1,000 / 102,400 from main (seq, sumac,
#      rayon; sumac's rows carry the ramp-up line);
#   2. issue 24's Bikeshed experiment with 4 + 4 and 8 + 8 producers and consumers;
#   3. issue 27's reference sizes: k-nucleotide N = 25,000,000 (about 80 s on 16 cores:
#      `seq` runs beside every sample) and BFS at scale 22 (8 keys: 64 outrun a device
#      command), then issue 24's Taskflow shapes at all cores;
#   4. `device-suite.sh quick` (every mechanism off beside the default) in what is left.
#
# Usage, here: cargo build --release -p sumac-bench --bin sumac-bench
#              mkdir -p .bench-bin && cp target/release/sumac-bench .bench-bin/
# then a device command carrying `.bench-bin`: bash scripts/device-issues.sh
# SMOKE=1 runs it at tiny sizes (a check of the script on any machine).
set -uo pipefail

bin=${BIN:-.bench-bin/sumac-bench}
out=${OUT:?OUT must name the folder whose files come back}
dir=.bench-out/issues
rm -rf "$dir"
mkdir -p "$dir"
cores=$(nproc)
log=$dir/run-log.txt
{
    echo "# device-issues on $(hostname), $cores cores, $(date -u +%FT%TZ)"
    grep -m1 'model name' /proc/cpuinfo || true
} >>"$log"

small=${SMOKE:-0}
pick() { if [[ $small == 1 ]]; then echo "$2"; else echo "$1"; fi; }
pack() { tar -C .bench-out -czf "$out/issues.tgz" issues; }

# step NAME LIMIT ARGS...: one sumac-bench command under `timeout`, CSV in $dir/NAME.csv.
step() {
    local name=$1 limit=$2
    shift 2
    echo "## $name: $* ($(date -u +%T))" >>"$log"
    timeout "$limit" "$bin" "$@" --quiet --csv "$dir/$name.csv" >>"$log" 2>&1
    echo "## $name exit status $?" >>"$log"
    pack
}

common=(--threads "$cores" --impls seq,sumac,rayon --samples 5 --warmup-ms 100)
step lu-700 40 lu --size "$(pick 700 40)" "${common[@]}"
step jacobi-256x400 40 jacobi --n "$(pick 256 16)" --steps "$(pick 400 4)" "${common[@]}"
step for-irregular-100-limit35 40 for-irregular --len 100 --limit "$(pick 35 20)" "${common[@]}"
# The sort beside its hand-off of large pieces switched off (what 16 cores make of it).
step sort-unstable-10M 60 sort --kind unstable --len "$(pick 10000000 1000)" "${common[@]}" \
    --policy default,-large-forks-at-once
step fib-35-cutoff20 40 fib --n "$(pick 35 15)" --cutoff 20 "${common[@]}"
step matmul-500 40 matmul --size "$(pick 500 20)" "${common[@]}"
step increment-102400 30 increment --len "$(pick 102400 100)" "${common[@]}"
step increment-1000-from-main 30 increment --len "$(pick 1000 100)" --from-main "${common[@]}"
step increment-102400-from-main 30 increment --len "$(pick 102400 100)" --from-main "${common[@]}"

tasks=$(pick 4194303 65535)
for pc in 4 8; do
    step "bikeshed-${pc}p" 75 graph bikeshed --tasks "$tasks" --producers "$pc" \
        --consumers "$pc" --variant both --impls sumac,rayon,channel-pool --samples 3 \
        --warmup-ms 100
done

step knucleotide-25M 220 knucleotide --n "$(pick 25000000 10000)" --threads "$cores" \
    --impls seq,sumac,rayon --samples 3 --warmup-ms 100
step bfs-scale22-keys8 120 bfs --scale "$(pick 22 12)" --keys 8 --threads "$cores" \
    --impls seq,sumac,rayon --samples 3 --warmup-ms 100
for shape in "linear-chain 1048576 1000" "binary-tree 20 8" "wavefront 1024 16" \
    "graph-traversal 1024 16"; do
    # shellcheck disable=SC2086 # the fields are meant to split
    set -- $shape
    step "graph-$1" 45 graph "$1" --size "$(pick "$2" "$3")" --threads "$cores" \
        --samples 3 --warmup-ms 50
done

# Whatever time the caller left: the mechanisms off beside the default.
if [[ -n ${QUICK_SECONDS:-} ]]; then
    echo "## quick ($(date -u +%T))" >>"$log"
    bash scripts/device-suite.sh quick >/dev/null 2>&1
    echo "## quick exit status $?" >>"$log"
    cp -r .bench-out/quick "$dir/quick"
    pack
fi
echo "# done $(date -u +%FT%TZ)" >>"$log"
tail -n 60 "$log"
