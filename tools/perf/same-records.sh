#!/bin/bash
# Whether two rdmasim binaries write the same records: every shipped scenario (scenarios/*.ron and
# scenarios/cc/*.ron) run briefly by each, with SOURCE_DATE_EPOCH fixed, and every file but the
# manifest (it holds the wall time) compared byte for byte. For changes the in-process digests
# test cannot see, such as the binary's allocator. Exits 1 if any file differs.
#
#   tools/perf/same-records.sh A B
set -euo pipefail
if [ $# -ne 2 ]; then
    sed -n '2,7p' "$0" >&2
    exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export SOURCE_DATE_EPOCH=1
same=0 differ=0
for s in "$root"/scenarios/*.ron "$root"/scenarios/cc/*.ron; do
    # faults-loss runs through its link-down (0.1 s to 0.2 s), as the digests test does.
    rt=0.004
    [ "$(basename "$s")" = faults-loss.ron ] && rt=0.21
    for side in a b; do
        bin=$1
        [ $side = b ] && bin=$2
        rm -rf "${out:?}/$side"
        "$bin" run "$s" --quiet --set "simulation.RunTime=$rt" --out "$out/$side" </dev/null >/dev/null 2>&1
    done
    for f in "$out"/a/*; do
        case $f in *.json) continue ;; esac
        if cmp -s "$f" "$out/b/$(basename "$f")"; then
            same=$((same + 1))
        else
            differ=$((differ + 1))
            echo "differs: $(basename "$s") $(basename "$f")"
        fi
    done
done
echo "$same files the same, $differ differ"
[ "$differ" = 0 ]
