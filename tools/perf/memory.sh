#!/bin/bash
# What this machine's memory costs a large fabric (#16): the latency of one random load by
# working-set size (where the caches end for this process, which on a shared machine moves with
# the neighbours' load), and ns per load with K random loads in flight over 256 MiB (how many
# misses the core overlaps). Built from memory.rs with plain rustc; takes about a minute.
#
#   tools/perf/memory.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
rustc -O --edition 2024 "$here/memory.rs" -o "$out/memory"
"$out/memory"
