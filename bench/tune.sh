#!/usr/bin/env bash
# bench/tune.sh - builds the kernel benchmark once per tuning variant, so that one
# visit to a GPU machine can time them all: build here, then run
# build/tune/NAME/bench/kernels there. A variant is a list of overrides of the
# values in cuda/policy.cuh, by the names given there, passed as the one macro
# GM_TUNE; each variant builds through the Makefile in a directory of its own.
#
# Usage: bench/tune.sh NAME "name=value ..." [NAME "name=value ..." ...]
#   e.g. bench/tune.sh items19 "i32.tiled_items=19 i32.basic_items=19" steps8 "tiled_steps=8"
#   env: ARCH (default 90: the sm_XX to build for), NVCC
set -euo pipefail
ARCH=${ARCH:-90}
nvcc=()
[ -n "${NVCC:-}" ] && nvcc=(NVCC="$NVCC")
while [ $# -ge 2 ]; do
    name=$1 tune=$2
    shift 2
    echo "building $name: $tune"
    make --no-print-directory "${nvcc[@]}" BUILD="build/tune/$name" GPU_ARCHS="$ARCH" \
        NVFLAGS="-O3 -lineinfo -DGM_TUNE='\"$tune\"'" "build/tune/$name/bench/kernels" >/dev/null
done
