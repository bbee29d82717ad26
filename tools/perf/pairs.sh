#!/bin/bash
# Compares two rdmasim builds' wall time on one scenario, on a machine whose speed drifts by ±20%
# within minutes (docs/performance.md): N pairs of runs, A and B back to back with their order
# flipped each pair, and the median of B's time over A's per pair, with the range and each build's
# fastest and median run, and an interval the true median ratio lies in at 95% confidence.
#
#   tools/perf/pairs.sh N RUNTIME A B [SCENARIO]
#   tools/perf/pairs.sh 40 0.05 /tmp/rdmasim.old target/release/rdmasim
#
# A ratio below 1 means B is faster. With pair ratios spread over about 0.7-1.3, 40 pairs resolve
# a difference of about 3%, 80 pairs about 2%: a difference inside the interval is not resolved.
set -euo pipefail
if [ $# -lt 4 ]; then
    sed -n '2,12p' "$0" >&2
    exit 2
fi
n=$1 rt=$2 a=$3 b=$4
scenario=${5:-$(cd "$(dirname "$0")/../.." && pwd)/scenarios/default.ron}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
wall() {
    "$1" run "$scenario" --set "simulation.RunTime=$rt" --quiet --out "$out/o" </dev/null 2>&1 |
        awk '/^wall time/ {print $3}'
}
for i in $(seq "$n"); do
    if [ $((i % 2)) = 1 ]; then ta=$(wall "$a"); tb=$(wall "$b"); else tb=$(wall "$b"); ta=$(wall "$a"); fi
    echo "$ta $tb"
done > "$out/pairs"
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ratios=$(awk '{printf "%.4f\n", $2 / $1}' "$out/pairs")
echo "A: fastest $(cut -d' ' -f1 "$out/pairs" | sort -g | head -1) s, median $(cut -d' ' -f1 "$out/pairs" | median) s"
echo "B: fastest $(cut -d' ' -f2 "$out/pairs" | sort -g | head -1) s, median $(cut -d' ' -f2 "$out/pairs" | median) s"
echo "B/A per pair: median $(echo "$ratios" | median), range $(echo "$ratios" | sort -g | head -1)-$(echo "$ratios" | sort -g | tail -1) over $n pairs"
# Distribution-free: the pair ratios of ranks floor(n/2 - 0.98 sqrt(n)) and ceil(n/2 + 0.98
# sqrt(n)) + 1 bound the median at 95% or more (ranks 40 and 61 at 100 pairs, as the binomial
# gives; wider than they need be below about 30 pairs).
echo "$ratios" | sort -g | awk -v n="$n" '{v[NR] = $1} END {
    lo = int(n / 2 - 0.98 * sqrt(n))
    up = n / 2 + 0.98 * sqrt(n); hi = (up == int(up) ? up : int(up) + 1) + 1
    if (lo < 1) lo = 1; if (hi > n) hi = n
    print "95% interval of the median ratio: " v[lo] "-" v[hi]
}'
