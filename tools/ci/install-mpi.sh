#!/usr/bin/env bash
# Installs what the `mpi` feature builds and runs against (Debian's Open MPI, and libclang for the
# bindings' generator), when it is missing. Needs root (CI runs as root).
set -euo pipefail
packages=(libopenmpi-dev openmpi-bin libclang1-14 libclang-common-14-dev)
if dpkg-query -W -f='${Status}\n' "${packages[@]}" 2>/dev/null | grep -qv "install ok installed" ||
    ! command -v mpirun >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
fi
mpirun --version | head -1
