#!/usr/bin/env bash
# bench/tune.sh - builds the kernel benchmark once per tuning variant (the -D
# overrides of cuda/common.cuh's table), so that one session on a GPU machine can
# time them all: build here, then run build/tune/*/kernels there.
#
# Usage: bench/tune.sh NAME "-DFLAG=VALUE ..." [NAME "FLAGS" ...]
set -euo pipefail
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ARCH=${ARCH:-90}
make --no-print-directory build/core/cpu.o build/core/util.o >/dev/null
while [ $# -ge 2 ]; do
    name=$1 flags=$2
    shift 2
    out=build/tune/$name
    mkdir -p "$out"
    echo "building $name: $flags"
    for f in cuda/*.cu; do
        "$NVCC" -O3 -lineinfo -std=c++17 --expt-relaxed-constexpr $flags \
            -gencode arch=compute_$ARCH,code=sm_$ARCH -c -o "$out/$(basename "$f" .cu).o" "$f" &
    done
    wait
    "$NVCC" -O3 -std=c++17 $flags -gencode arch=compute_$ARCH,code=sm_$ARCH -o "$out/kernels" \
        bench/kernels.cu "$out"/*.o build/core/cpu.o build/core/util.o -lpthread
done
