#!/bin/bash
# Cost per event as the fabric grows (#16): N pairs of one-shard runs, the default scenario and the
# same scenario on TOPOLOGY, back to back (order flipped each pair), each run's wall time after
# its set-up (the summary's `set-up`: building the fabric and its routes) over its events; prints
# the median ns per event of each side and the median ratio (TOPOLOGY over default) per pair,
# then the same with the set-up counted in. The default runs DEFAULT_RUNTIME (0.05 s: long enough
# that start-up is noise), TOPOLOGY runs RUNTIME. TOPOLOGY may instead be a scenario file
# (`.ron`), run as it is but for RUNTIME: for a large fabric on a short timeline.
#
#   tools/perf/scale.sh N TOPOLOGY RUNTIME [DEFAULT_RUNTIME] [BIN]
#   tools/perf/scale.sh 3 'FatTree(k: 32)' 0.0005
#   tools/perf/scale.sh 4 scenarios/scale/fat-tree-k32.ron 0.0001
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,12p' "$0" >&2
    exit 2
fi
n=$1 topo=$2 rt=$3 drt=${4:-0.05}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${5:-$root/target/release/rdmasim}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# ns per event of one run of scenario $1: the summary's wall time after set-up over its events,
# then its whole wall time over them.
per_event() {
    "$bin" run "$@" --quiet --out "$out/o" </dev/null >"$out/last" 2>&1
    awk '/^wall time/ {w = $3; s = $6 + 0} /^events/ {e = $2}
        END {printf "%.1f %.1f\n", (w - s) * 1e9 / e, w * 1e9 / e}' "$out/last"
}
small() { per_event "$root/scenarios/default.ron" --set "simulation.RunTime=$drt"; }
case $topo in
*.ron) large() { per_event "$topo" --set "simulation.RunTime=$rt"; } ;;
*) large() { per_event "$root/scenarios/default.ron" --set "simulation.RunTime=$rt" --set "topology=$topo"; } ;;
esac
for i in $(seq "$n"); do
    if [ $((i % 2)) = 1 ]; then a=$(small); b=$(large); else b=$(large); a=$(small); fi
    echo "$a $b"
done >"$out/pairs"
# Columns: default after set-up, default whole, TOPOLOGY after set-up, TOPOLOGY whole.
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "default:  median $(cut -d' ' -f1 "$out/pairs" | median) ns per event after set-up"
echo "$topo: median $(cut -d' ' -f3 "$out/pairs" | median) ns per event after set-up"
echo "ratio per pair: median $(awk '{print $3 / $1}' "$out/pairs" | median) over $n pairs"
echo "with set-up: default $(cut -d' ' -f2 "$out/pairs" | median) ns," \
    "$topo $(cut -d' ' -f4 "$out/pairs" | median) ns, ratio $(awk '{print $4 / $2}' "$out/pairs" | median)"
