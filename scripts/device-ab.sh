#!/usr/bin/env bash
# Two builds of `sumac-bench` alternated on the device at all cores, for a change whose
# effect shows only there (a short device lease rarely fits two `device-suite.sh` runs).
# Each workload runs A, B, A, B; everything measured so far is packed into $OUT/ab.tgz
# after each workload (a command stopped at its limit still returns what it finished).
#
# Usage, here (strip the binaries: the working tree and what it carries travel together
# under 64 MiB):
#   cargo build --release -p sumac-bench --bin sumac-bench   # at the baseline
#   mkdir -p .bench-bin && strip -o .bench-bin/sumac-bench-a target/release/sumac-bench
#   cargo build --release -p sumac-bench --bin sumac-bench   # with the change
#   strip -o .bench-bin/sumac-bench-b target/release/sumac-bench
# then a device command carrying `.bench-bin`: bash scripts/device-ab.sh
# AB_ONLY=name,name picks workloads from the list below; AB_SECONDS (default 150) stops
# starting new workloads after that many seconds. SMOKE=1 runs tiny sizes (a check of
# the script on any machine).
set -uo pipefail

out=${OUT:?OUT must name the folder whose files come back}
dir=.bench-out/ab
rm -rf "$dir"
mkdir -p "$dir"
log=$dir/run-log.txt
cores=$(nproc)
budget=${AB_SECONDS:-150}
small=${SMOKE:-0}
pick() { if [[ $small == 1 ]]; then echo "$2"; else echo "$1"; fi; }
{
    echo "# device-ab on $(hostname), $cores cores, $(date -u +%FT%TZ)"
    grep -m1 'model name' /proc/cpuinfo || true
} >>"$log"

# ab NAME ARGS...: ARGS with builds a and b, twice each, alternated.
ab() {
    local name=$1
    shift
    if [[ -n ${AB_ONLY:-} && ,$AB_ONLY, != *,$name,* ]]; then
        return
    fi
    if ((SECONDS > budget)); then
        echo "## $name not run: budget of ${budget}s spent" >>"$log"
        return
    fi
    for round in 1 2; do
        for build in a b; do
            echo "## $name $build round $round" >>"$log"
            timeout 30 ".bench-bin/sumac-bench-$build" "$@" --quiet \
                --csv "$dir/$name-$build-$round.csv" >>"$log" 2>&1
        done
    done
    tar -C .bench-out -czf "$out/ab.tgz" ab
}

ab increment-1000-from-main increment --len "$(pick 1000 100)" --from-main \
    --threads "1,$cores" --impls seq,sumac,rayon --samples 9 --warmup-ms 100
ab increment-102400 increment --len "$(pick 102400 1000)" --threads "$cores" \
    --impls seq,sumac,rayon --samples 9 --warmup-ms 100
ab jacobi-256x400 jacobi --n "$(pick 256 16)" --steps "$(pick 400 4)" --threads "$cores" \
    --impls seq,sumac,rayon --samples 5 --warmup-ms 100
ab lu-700 lu --size "$(pick 700 40)" --threads "$cores" --impls seq,sumac,rayon \
    --samples 5 --warmup-ms 100
ab for-irregular-100-limit35 for-irregular --len 100 --limit "$(pick 35 20)" \
    --threads "$cores" --impls sumac,rayon --samples 5 --warmup-ms 100
ab sum-squares-1000 sum-squares --len "$(pick 1000 100)" --threads "$cores" \
    --impls seq,sumac,rayon --samples 9 --warmup-ms 100
ab tree-sum-1000 tree-sum --nodes "$(pick 1000 100)" --threads "$cores" \
    --impls seq,sumac,rayon --samples 9 --warmup-ms 100
ab fib-30-cutoff20 fib --n "$(pick 30 15)" --cutoff 20 --threads "$cores" \
    --impls seq,sumac,rayon --samples 9 --warmup-ms 100

tar -C .bench-out -czf "$out/ab.tgz" ab
# The medians, one line per row, under their workload and build.
grep -E '^## |^(seq|sumac|rayon)[^ ]* ' "$log" | sed -E 's/ +/ /g'
