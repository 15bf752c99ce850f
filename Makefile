# gpumerge - merge and sort files of integers on an NVIDIA GPU, or on all CPU cores.
#
#   make                 build ./gpumerge (with the CUDA engine when nvcc is found)
#   make test            build and run every Criterion suite (installs Criterion
#                        with apt-get when it is missing and we are root)
#   make test-gpu        the GPU suite and the CLI suite with --device=gpu (needs a GPU)
#   make sanitize        compute-sanitizer memcheck, racecheck and synccheck on every kernel
#   make bench           the kernel benchmark (needs a GPU) and the end-to-end benchmark
#   make install PREFIX=/usr/local     binary and man page
#   make clean
#
# Variables: NVCC (path to nvcc, or NVCC= for a CPU-only build), GPU_ARCHS (the
# real architectures to embed, default "75 80 90"; PTX for the last one is added).

CC       ?= cc
PREFIX   ?= /usr/local
BUILD    ?= build
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -Wall -Wextra -pthread -MMD -MP
LDLIBS   += -pthread -lm

ifeq ($(origin NVCC),undefined)
  NVCC   := $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
endif
GPU_ARCHS ?= 75 80 90
# Ask nvcc where its toolkit is: /usr/local/bin/nvcc may be a wrapper script.
CUDA_HOME := $(if $(NVCC),$(or $(shell $(NVCC) --dryrun -c -x cu /dev/null -o /dev/null 2>&1 \
               | sed -n 's/^\#\$$ TOP=//p'),$(patsubst %/bin/nvcc,%,$(NVCC))))
NVFLAGS  ?= -O3 -lineinfo
NVFLAGS  += -std=c++17 --expt-relaxed-constexpr -Xcompiler -Wall,-Wextra \
            $(foreach a,$(GPU_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
            -gencode arch=compute_$(lastword $(GPU_ARCHS)),code=compute_$(lastword $(GPU_ARCHS))

CORE_SRC = core/util.c core/pool.c core/cleanup.c core/input.c core/output.c core/cpu.c core/engine.c \
           core/run.c core/stream.c core/gm.c
CLI_SRC  = cli/main.c cli/options.c
CUDA_SRC = cuda/merge_basic.cu cuda/merge_tiled.cu cuda/merge_circular.cu \
           cuda/mergesort.cu cuda/merge_multi.cu cuda/gpu.cu

CORE_OBJ = $(CORE_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  = $(CLI_SRC:%.c=$(BUILD)/%.o)
ifeq ($(NVCC),)
  GPU_OBJ  = $(BUILD)/cuda/gpu_stub.o
  GPU_LIBS =
  BUILD_KIND = CPU-only (no nvcc found: the GPU engine says "built without CUDA")
else
  GPU_OBJ  = $(CUDA_SRC:%.cu=$(BUILD)/%.o)
  GPU_LIBS = -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lstdc++
  BUILD_KIND = with CUDA ($(NVCC), sm_$(subst $() $(),/sm_,$(GPU_ARCHS)))
endif

TESTS    = corank parser output cpu cli gpu stream
TEST_BIN = $(TESTS:%=$(BUILD)/tests/test_%)

# Keep the test objects between runs.
.SECONDARY:

.PHONY: all test test-gpu sanitize bench install clean criterion

all: gpumerge

gpumerge: $(CLI_OBJ) $(CORE_OBJ) $(GPU_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(GPU_LIBS) $(LDLIBS)
	@echo "built ./gpumerge $(BUILD_KIND)"

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/cuda/%.o: cuda/%.cu cuda/*.cuh cuda/gpu.h core/corank.h core/corank_impl.h
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -c -o $@ $<

# ---------------------------------------------------------------- tests

# Criterion comes from the distribution; as root we install it, else we say how.
criterion:
	@if ! printf '#include <criterion/criterion.h>\n' | $(CC) -E -x c - >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Criterion (libcriterion-dev) with apt-get"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libcriterion-dev) >/dev/null || exit 1; \
	  else \
	    echo "Criterion is missing; install it with: sudo apt-get install libcriterion-dev"; exit 1; \
	  fi; \
	fi

$(BUILD)/tests/%.o: tests/%.c tests/helpers.h | criterion
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/test_%: $(BUILD)/tests/test_%.o $(BUILD)/tests/helpers.o $(CORE_OBJ) $(GPU_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ -lcriterion $(GPU_LIBS) $(LDLIBS)

test: gpumerge $(TEST_BIN)
	@if command -v groff >/dev/null; then \
	  echo "== man/gpumerge.1"; groff -man -ww -z man/gpumerge.1 || exit 1; fi
	@fail=0; for t in $(TEST_BIN); do \
	  echo "== $$t"; GPUMERGE=$(CURDIR)/gpumerge TESTDATA=$(CURDIR)/testdata \
	    $$t --jobs=2 $$(case $$t in *gpu|*cli) echo --verbose;; esac) || fail=1; \
	done; exit $$fail

test-gpu: gpumerge $(BUILD)/tests/test_gpu $(BUILD)/tests/test_cli
	GM_TEST_REQUIRE_GPU=1 $(BUILD)/tests/test_gpu
	GPUMERGE=$(CURDIR)/gpumerge TESTDATA=$(CURDIR)/testdata GM_TEST_DEVICE=gpu \
	  $(BUILD)/tests/test_cli

SANITIZER ?= compute-sanitizer
sanitize: gpumerge
	SANITIZER=$(SANITIZER) GPUMERGE=./gpumerge bash tests/sanitize.sh memcheck racecheck synccheck

# ---------------------------------------------------------------- bench

$(BUILD)/bench/kernels: bench/kernels.cu $(GPU_OBJ) $(BUILD)/core/cpu.o $(BUILD)/core/util.o $(BUILD)/core/pool.o
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -o $@ $^ -lpthread

bench: gpumerge
	@if [ -n "$(NVCC)" ]; then $(MAKE) --no-print-directory $(BUILD)/bench/kernels && \
	  $(BUILD)/bench/kernels; else echo "no nvcc: skipping the kernel benchmark"; fi
	bash bench/e2e.sh

# ---------------------------------------------------------------- install

install: gpumerge
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 gpumerge $(DESTDIR)$(PREFIX)/bin/gpumerge
	install -m 644 man/gpumerge.1 $(DESTDIR)$(PREFIX)/share/man/man1/gpumerge.1

clean:
	rm -rf $(BUILD) gpumerge

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
