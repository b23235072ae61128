#!/usr/bin/env bash
# Configures and builds meshlab into build/ (or $1 with extra cmake options after it).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -B "$dir" -S . -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMESHLAB_WERROR=ON "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
