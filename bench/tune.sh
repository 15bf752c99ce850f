#!/usr/bin/env bash
# bench/tune.sh - builds the kernel benchmark once per tuning variant, so that one
# visit to a GPU machine can time them all: build here, then run
# build/tune/NAME/kernels there. A variant is a list of overrides of the values in
# cuda/policy.cuh, by the names given there, passed as the one macro GM_TUNE.
#
# Usage: bench/tune.sh NAME "name=value ..." [NAME "name=value ..." ...]
#   e.g. bench/tune.sh items19 "i32.tiled_items=19 i32.basic_items=19" steps8 "tiled_steps=8"
#   env: ARCH (default 90: the sm_XX to build for), NVCC
set -euo pipefail
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ARCH=${ARCH:-90}
make --no-print-directory build/core/cpu.o build/core/util.o >/dev/null
flags=(-O3 -lineinfo -std=c++17 --expt-relaxed-constexpr -gencode "arch=compute_$ARCH,code=sm_$ARCH")
while [ $# -ge 2 ]; do
    name=$1 tune=$2
    shift 2
    out=build/tune/$name
    mkdir -p "$out"
    echo "building $name: $tune"
    pids=()
    for f in cuda/*.cu bench/kernels.cu; do
        "$NVCC" "${flags[@]}" -DGM_TUNE="\"$tune\"" -c -o "$out/$(basename "$f" .cu).o" "$f" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
    "$NVCC" "${flags[@]}" -o "$out/kernels" "$out"/*.o build/core/cpu.o build/core/util.o -lpthread
done
