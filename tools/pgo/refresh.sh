#!/bin/bash
# Regenerates `pgo/rdmasim.profdata`, the profile `.cargo/config.toml` hands to every build
# (profile-guided optimization; docs/performance.md). Builds rdmasim instrumented in a scratch
# target directory, runs the RoCE NIC's shipped scenarios and a short large fabric with it, and
# merges what they recorded.
#
# Needs llvm-profdata from LLVM 19 or later (Debian: `llvm-19`, installed here if missing and
# running as root). rustc's own LLVM (22 for Rust 1.95) reads the profile that writes.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
profdata=$(command -v llvm-profdata-19 || command -v llvm-profdata-20 || command -v llvm-profdata-21 || true)
if [ -z "$profdata" ]; then
    if [ "$(id -u)" = 0 ]; then
        apt-get install -y llvm-19 >/dev/null || { apt-get update >/dev/null && apt-get install -y llvm-19 >/dev/null; }
        profdata=llvm-profdata-19
    else
        echo "refresh.sh: needs llvm-profdata 19 or later (Debian package llvm-19)" >&2
        exit 1
    fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The wrapper (`tools/pgo/rustc-wrapper`) leaves an instrumented compile without the old profile.
RUSTFLAGS="-Cprofile-generate=$work/raw" cargo build --release -p rdmasim --target-dir "$work/target"
# Build scripts and proc macros ran instrumented too: keep only the runs' profiles.
rm -rf "$work/raw"
bin="$work/target/release/rdmasim"
# The RoCE NIC scenarios, the default longest (the performance target is measured on it). Not the
# ideal NIC's: with a second NIC behind the fabric's receiver, the compiler no longer turns the
# receiver's indirect call into a direct one, and the default scenario ran 7% more instructions.
for run in default:0.05 star:0.005 many-connections:0.005 spec-ratios-0.9-0.1:0.005 spec-ratios-0.25-0.75:0.005; do
    name=${run%%:*}
    LLVM_PROFILE_FILE="$work/raw/$name-%p.profraw" "$bin" run "scenarios/$name.ron" \
        --set "simulation.RunTime=${run##*:}" --quiet --out "$work/out" </dev/null >/dev/null
done
# A large fabric, briefly: its run goes through the lookahead's loop and the handlers' warming,
# which the small scenarios never reach (a path no run reached is compiled as cold).
LLVM_PROFILE_FILE="$work/raw/fat-tree-k32-%p.profraw" "$bin" run scenarios/scale/fat-tree-k32.ron \
    --set simulation.WarmUp=0.00005 --set simulation.RunTime=0.00002 --set simulation.CoolDown=0.000001 \
    --quiet --out "$work/out" </dev/null >/dev/null
mkdir -p pgo
# The small scenarios count ten times: with the large fabric's counts at full weight the default
# scenario ran more instructions (docs/performance.md, "Fewer warming calls, a cheaper sort, and
# a profile of a large fabric").
inputs=()
for f in "$work"/raw/*.profraw; do
    case $f in
        */fat-tree-k32-*) inputs+=("-weighted-input=1,$f") ;;
        *) inputs+=("-weighted-input=10,$f") ;;
    esac
done
"$profdata" merge -o pgo/rdmasim.profdata "${inputs[@]}"
ls -l pgo/rdmasim.profdata
