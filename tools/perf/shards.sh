#!/bin/bash
# Speed-up from shards on this machine: N pairs of runs of one scenario, one shard and S shards
# back to back (order flipped each pair), and the median of the one-shard time over the
# S-shard time per pair, with each side's median; then the windows and crossing packets of an
# S-shard run (what an efficiency estimate for more shards needs: docs/performance.md).
#
#   tools/perf/shards.sh N RUNTIME TOPOLOGY S [BIN]
#   tools/perf/shards.sh 6 0.0005 'FatTree(k: 16)' 2
set -euo pipefail
if [ $# -lt 4 ]; then
    sed -n '2,9p' "$0" >&2
    exit 2
fi
n=$1 rt=$2 topo=$3 s=$4
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${5:-$root/target/release/rdmasim}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
wall() {
    "$bin" run "$root/scenarios/default.ron" --set "simulation.RunTime=$rt" --set "topology=$topo" \
        --shards "$1" --quiet --out "$out/o$1" </dev/null >"$out/last$1" 2>&1
    awk '/^wall time/ {print $3}' "$out/last$1"
}
for i in $(seq "$n"); do
    if [ $((i % 2)) = 1 ]; then a=$(wall 1); b=$(wall "$s"); else b=$(wall "$s"); a=$(wall 1); fi
    echo "$a $b"
done >"$out/pairs"
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "1 shard:  median $(cut -d' ' -f1 "$out/pairs" | median) s"
echo "$s shards: median $(cut -d' ' -f2 "$out/pairs" | median) s"
echo "speed-up (1 shard / $s shards) per pair: median $(awk '{printf "%.3f\n", $1 / $2}' "$out/pairs" | median) over $n pairs"
grep -E '^(events|shards)' "$out/last$s"
