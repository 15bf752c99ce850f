# gpumerge - merge and sort files of integers on an NVIDIA GPU, or on all CPU cores.
#
#   make                 build ./gpumerge (with the CUDA engine when nvcc is found),
#                        and ./gpumerge-mpi beside it when Open MPI's mpicc is found;
#                        the library libgpumerge (build/lib/: libgpumerge.a,
#                        libgpumerge.so.VERSION, gpumerge.pc), which ./gpumerge links
#   make openmpi         installs Open MPI (libopenmpi-dev openmpi-bin) with apt-get
#                        when mpicc is missing and we are root, else says how
#   make test            build and run every Criterion suite (installs Criterion
#                        with apt-get when it is missing and we are root); also `make check`
#   make layout          the core's rooms kept: no include of a room above (core/'s
#                        floors), cuda/ included by core/device/ alone, no loop of
#                        includes or of symbols between objects (also run by make test)
#   make test-gpu        the GPU suite, the library's (static: device pointers too),
#                        the CLI suite with --device=gpu and the records' GPU suite
#                        (needs a GPU)
#   make sanitize        compute-sanitizer memcheck, racecheck and synccheck on every kernel
#                        (the key-value kernels through build/tests/gpupairs)
#   make sanitize-host   the CPU-only program and every suite under ASan+UBSan, then TSan
#   make fuzz            the libFuzzer targets of fuzz/, FUZZ_SECONDS each (clang)
#   make bench           the end-to-end benchmark, and the kernel benchmark when a
#                        GPU is usable
#                        (then bench/iofloor.sh: the output floor of files and pipes)
#   make install PREFIX=/usr/local     binary (with its symbols; gpumerge-mpi too when
#                        built), man pages (gpumerge.1 and a gpusort.1 link to it,
#                        gpumerge.3 and a man3 link for each of the header's calls),
#                        bash completion; the
#                        library (LIBDIR), its header (INCLUDEDIR), gpumerge.pc
#                        (PKGCONFIGDIR); in a CUDA build the CUDA engine the program
#                        and the shared library load (LIBDIR/gpumerge/)
#   make install-strip PREFIX=/usr/local   the same with the binary stripped
#   make uninstall PREFIX=/usr/local   removes them
#   make dist            gpumerge-VERSION.tar.gz of the tracked files (git)
#   make distcheck       that tarball unpacked, built and tested in a temporary folder
#   make clean
#
# Variables: NVCC (path to nvcc, or NVCC= for a CPU-only build), MPICC (path to
# Open MPI's mpicc, or MPICC= for no gpumerge-mpi), GPU_ARCHS (the
# real architectures to embed, default "75 80 90"; PTX for the last one is added),
# and GNU's CC, AR, CFLAGS, CPPFLAGS, LDFLAGS, LDLIBS, NVFLAGS, DESTDIR, PREFIX,
# BINDIR, LIBDIR, INCLUDEDIR, MANDIR, PKGCONFIGDIR: the
# flags the build needs (GM_*) are always applied, and these are added after them.
# The version is the one line of VERSION; GM_VERSION, the man pages, gpumerge.pc and
# the shared library's names take it (soname libgpumerge.so.MAJOR).
# Jobs run in parallel, one per core, unless the command line says -jN.

VERSION := $(shell cat VERSION)
CC       ?= cc
PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
LIBDIR   ?= $(PREFIX)/lib
MANDIR   ?= $(PREFIX)/share/man
LIBDIR   ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INSTALL  ?= install
BUILD    ?= build
PROG     ?= gpumerge
CFLAGS   ?= -O2 -g
NVFLAGS  ?= -O3 -lineinfo
# What the build needs whatever CFLAGS says; SANFLAGS is the sanitizer and fuzz
# targets' instrumentation.
GM_CPPFLAGS = -DGM_VERSION='"$(VERSION)"' -Icore
GM_CFLAGS   = -std=c11 -Wall -Wextra -pthread -MMD -MP $(SANFLAGS)
GM_LDLIBS   = -pthread -lm
# The library's objects (core/, cuda/) are position-independent, for the shared
# library; its exports are the header's calls (lib/gpumerge.map), so nothing is
# interposed and calls within it stay direct.
GM_PIC      =
$(BUILD)/core/%.o $(BUILD)/cuda/%.o: GM_PIC = -fPIC -fno-semantic-interposition
COMPILE.gm  = $(CC) $(GM_CPPFLAGS) $(CPPFLAGS) $(GM_CFLAGS) $(GM_PIC) $(CFLAGS)
LINK.gm     = $(CC) $(GM_CFLAGS) $(CFLAGS) $(LDFLAGS)

ifeq ($(MAKELEVEL)$(filter -j%,$(MAKEFLAGS)),0)
  MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif

NVCC_FOUND := $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
ifeq ($(origin NVCC),undefined)
  NVCC   := $(NVCC_FOUND)
endif
GPU_ARCHS ?= 75 80 90
# Ask nvcc where its toolkit is: /usr/local/bin/nvcc may be a wrapper script.
CUDA_HOME := $(if $(NVCC),$(or $(shell $(NVCC) --dryrun -c -x cu /dev/null -o /dev/null 2>&1 \
               | sed -n 's/^\#\$$ TOP=//p'),$(patsubst %/bin/nvcc,%,$(NVCC))))
GM_NVFLAGS = -std=c++17 --expt-relaxed-constexpr -Xcompiler -Wall,-Wextra,-fPIC \
             $(foreach a,$(GPU_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
             -gencode arch=compute_$(lastword $(GPU_ARCHS)),code=compute_$(lastword $(GPU_ARCHS))
# nvcc takes -D, -U and -I itself; CPPFLAGS' other words go to its host compiler.
NV_CPPFLAGS = $(filter -D% -U% -I%,$(CPPFLAGS)) \
              $(foreach f,$(filter-out -D% -U% -I%,$(CPPFLAGS)),-Xcompiler $(f))
COMPILE.nv  = $(NVCC) $(GM_CPPFLAGS) $(NV_CPPFLAGS) $(GM_NVFLAGS) $(NVFLAGS)

# The core's rooms, from the ground up (each includes only rooms below it; make
# layout checks it), and gm.c and api.c at its top: every C file of each.
CORE_ROOMS = base keys read sort write merge runs device plan records stream
CORE_SRC = $(foreach r,$(CORE_ROOMS),$(sort $(wildcard core/$(r)/*.c))) core/gm.c core/api.c
CLI_SRC  = cli/main.c cli/options.c cli/optapply.c cli/optnum.c cli/optmsg.c cli/files0.c \
           cli/usage.c cli/version.c
CUDA_SRC = cuda/device.cu cuda/partition.cu cuda/merge_basic.cu cuda/merge_tiled.cu \
           cuda/merge_circular.cu cuda/merge_multi.cu cuda/block_sort.cu cuda/merge.cu \
           cuda/sort.cu cuda/text.cu cuda/text_parse.cu cuda/text_format.cu cuda/trace.cu \
           cuda/records.cu cuda/resident.cu cuda/unique.cu cuda/text_scratch.cu

MPI_SRC  = mpi/agree.c mpi/run.c mpi/ranges.c mpi/output.c mpi/localsort.c mpi/samplesort.c mpi/exchange.c mpi/comerge.c mpi/bulk.c mpi/direct.c

CORE_OBJ = $(CORE_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  = $(CLI_SRC:%.c=$(BUILD)/%.o)
# The option parser (the CLI less its main), which tests and fuzz targets call.
OPTIONS_OBJ = $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJ))
# The program's GPU engine: in a CUDA build a loader (cuda/gpu_load.c) that
# loads the engine, CUDA_LIB (the .cu objects and the CUDA runtime, beside the
# program), only when a run uses the GPU, so that every other run starts as a
# CPU-only build does; the tests, gpumerge-mpi and the benchmarks link GPU_OBJ
# themselves.
ifeq ($(NVCC),)
  GPU_OBJ  = $(BUILD)/cuda/gpu_stub.o
  TESTING_OBJ = $(BUILD)/cuda/testing_stub.o
  GPU_LIBS =
  PROG_GPU_OBJ = $(GPU_OBJ)
  PROG_LIBS =
  CUDA_LIB =
  LIB_GPU_OBJ = $(GPU_OBJ)
  LIB_SO_LIBS =
  ARCHIVE_LIBS =
  CUDART_A =
  BUILD_KIND = CPU-only ($(if $(NVCC_FOUND),NVCC is empty: $(NVCC_FOUND) not used,no nvcc found); the GPU engine says 'built without CUDA')
  ENGINE     = CPU only (built without nvcc)
else
  GPU_OBJ  = $(CUDA_SRC:%.cu=$(BUILD)/%.o)
  TESTING_OBJ = $(BUILD)/cuda/testing.o
  GPU_LIBS = -L$(abspath $(CUDA_HOME)/lib64) -lcudart_static -ldl -lrt -lstdc++
  PROG_GPU_OBJ = $(BUILD)/cuda/gpu_load.o
  PROG_LIBS = -ldl
  CUDA_LIB = $(dir $(PROG))gpumerge-cuda.so
  LIB_GPU_OBJ = $(BUILD)/cuda/gpu_load_lib.o
  LIB_SO_LIBS = -ldl
  ARCHIVE_LIBS = -ldl -lrt -lstdc++
  CUDART_A := $(firstword $(wildcard $(CUDA_HOME)/lib64/libcudart_static.a) \
               $(shell $(CC) -print-file-name=libcudart_static.a))
  BUILD_KIND = with CUDA ($(NVCC), sm_$(subst $() $(),/sm_,$(GPU_ARCHS)))
  ENGINE     = CUDA $(shell $(NVCC) --version | sed -n 's/.*release \([0-9.]*\).*/\1/p') \
               (sm_$(subst $() $(), sm_,$(GPU_ARCHS)), PTX compute_$(lastword $(GPU_ARCHS))) and CPU
endif

# libgpumerge: the core and the GPU engine (or its stub), as an archive and as a
# shared library named by VERSION (soname libgpumerge.so.MAJOR). In a CUDA build
# the shared one holds the program's loader (cuda/gpu_load.c, compiled to look
# beside the library), which loads the engine, CUDA_LIB, from gpumerge/ beside it
# only when a call uses the GPU (in the build tree LIB_ENGINE links to CUDA_LIB);
# the archive holds the .cu objects and the toolkit's CUDA runtime
# (libcudart_static.a, CUDART_A, which NVIDIA lets programs redistribute), so that
# gpumerge.pc's Libs.private names only the system's libraries and no path outside
# the prefix (PKG_CONFIG_SYSROOT_DIR then rewrites every path it gives).
VERSION_MAJOR := $(firstword $(subst ., ,$(VERSION)))
LIB_A_OBJ   = $(CORE_OBJ) $(GPU_OBJ)
LIB_SO_OBJ  = $(CORE_OBJ) $(LIB_GPU_OBJ)
LIB_A       = $(BUILD)/lib/libgpumerge.a
LIB_SONAME  = libgpumerge.so.$(VERSION_MAJOR)
LIB_SO      = $(BUILD)/lib/libgpumerge.so.$(VERSION)
LIB_PC      = $(BUILD)/lib/gpumerge.pc
LIB_ENGINE  = $(if $(CUDA_LIB),$(BUILD)/lib/gpumerge/gpumerge-cuda.so)
LIBS_PRIVATE = $(strip $(ARCHIVE_LIBS) $(GM_LDLIBS))
# gpumerge.pc's directories, through ${prefix} where they lie under PREFIX.
PC_DIR      = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
# The header's calls: each has its man3 page, a link to gpumerge(3).
LP         := (
LIB_FUNCS  := $(shell sed -n 's/^[a-z].*[ *]\(gm_[a-z_]*\)$(LP).*/\1/p' include/gpumerge.h)
AR         ?= ar

# gpumerge-mpi: built when Open MPI's compiler wrapper is found.
MPICC_FOUND := $(shell command -v mpicc 2>/dev/null)
ifeq ($(origin MPICC),undefined)
  MPICC  := $(MPICC_FOUND)
endif
MPI_PROG = $(if $(MPICC),$(patsubst %gpumerge,%gpumerge-mpi,$(PROG)))
MPI_OBJ  = $(MPI_SRC:%.c=$(BUILD)/%.o) $(BUILD)/cli/mpi_main.o

TESTS    = corank parser output pages cpu cli gpu compat safety stream ranges plan keys records recgpu recrange lines \
           package report mpi lib lib_static
TEST_BIN = $(TESTS:%=$(BUILD)/tests/test_%)

# Keep the test objects between runs.
.SECONDARY:

.PHONY: all test check layout test-gpu sanitize sanitize-host fuzz clang-fuzzer bench install \
        install-strip uninstall dist distcheck clean criterion openmpi pkgconfig FORCE

all: $(PROG) $(CUDA_LIB) $(MPI_PROG) $(BUILD)/man/gpumerge.1 $(LIB_A) $(LIB_SO) $(LIB_ENGINE) \
     $(LIB_PC) $(BUILD)/man/gpumerge.3
ifeq ($(MPICC),)
	@echo "gpumerge-mpi not built: no mpicc (make openmpi installs Open MPI)"
endif

# The program: the command line on the library's core objects (the same build,
# less the API's entry points), and its GPU engine: the loader of CUDA_LIB in a
# CUDA build, so that a run that never uses the GPU starts as a CPU-only one.
PROG_CORE_OBJ = $(filter-out $(BUILD)/core/api.o,$(CORE_OBJ))
$(PROG): $(CLI_OBJ) $(PROG_CORE_OBJ) $(PROG_GPU_OBJ) | $(CUDA_LIB)
	$(LINK.gm) -o $@ $^ $(PROG_LIBS) $(GM_LDLIBS) $(LDLIBS)
	ln -sf $(notdir $@) $(dir $@)gpusort
	@echo "built ./$(PROG) $(BUILD_KIND) (and gpusort, the same program as sort)"

# The CUDA engine the program loads (cuda/gpu_load.c): the GPU objects, the
# status functions they call, and the CUDA runtime, bound to their own symbols.
$(CUDA_LIB): $(GPU_OBJ) $(BUILD)/cuda/status.pic.o
	$(LINK.gm) -shared -Wl,-Bsymbolic -o $@ $^ $(GPU_LIBS) $(GM_LDLIBS) $(LDLIBS)

$(BUILD)/cuda/status.pic.o: core/base/status.c
	@mkdir -p $(dir $@)
	$(COMPILE.gm) -fPIC -c -o $@ $<

# The loader looks beside the program, in ../lib/gpumerge, and in LIBDIR's.
$(BUILD)/cuda/gpu_load.o: cuda/gpu_load.c
	@mkdir -p $(dir $@)
	$(COMPILE.gm) -DGM_ENGINE_DIR='"$(LIBDIR)/gpumerge"' -c -o $@ $<

# The shared library's loader looks in gpumerge/ beside the library, then LIBDIR's.
$(BUILD)/cuda/gpu_load_lib.o: cuda/gpu_load.c
	@mkdir -p $(dir $@)
	$(COMPILE.gm) -DGM_LOADER_IN_LIBRARY -DGM_ENGINE_DIR='"$(LIBDIR)/gpumerge"' -c -o $@ $<

$(LIB_A): $(LIB_A_OBJ) $(CUDART_A)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $(LIB_A_OBJ)
ifneq ($(CUDART_A),)
	rm -rf $(BUILD)/lib/cudart && mkdir -p $(BUILD)/lib/cudart
	cd $(BUILD)/lib/cudart && $(AR) x $(abspath $(CUDART_A))
	$(AR) rs $@ $(BUILD)/lib/cudart/*
endif

$(LIB_SO): $(LIB_SO_OBJ) lib/gpumerge.map
	@mkdir -p $(dir $@)
	$(LINK.gm) -shared -Wl,-soname,$(LIB_SONAME) -Wl,--version-script=lib/gpumerge.map \
	  -o $@ $(LIB_SO_OBJ) $(LIB_SO_LIBS) $(GM_LDLIBS) $(LDLIBS)
	@echo "built $@ (soname $(LIB_SONAME)) and $(LIB_A) $(BUILD_KIND)"

$(LIB_ENGINE): | $(CUDA_LIB)
	@mkdir -p $(dir $@)
	ln -sf $(abspath $(CUDA_LIB)) $@

# gpumerge.pc with this make's paths and libraries: rewritten when they change.
$(LIB_PC): lib/gpumerge.pc.in VERSION FORCE
	@mkdir -p $(dir $@)
	@sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call PC_DIR,$(LIBDIR))|' \
	  -e 's|@INCLUDEDIR@|$(call PC_DIR,$(INCLUDEDIR))|' -e 's|@VERSION@|$(VERSION)|' \
	  -e 's|@LIBS_PRIVATE@|$(LIBS_PRIVATE)|' lib/gpumerge.pc.in >$@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; echo "wrote $@"; fi

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(COMPILE.gm) -c -o $@ $<

# gpumerge-mpi: the MPI files compiled by mpicc with the build's flags, linked
# with gpumerge's objects and its main under another name (one rank runs it).
$(BUILD)/mpi/%.o: mpi/%.c
	@mkdir -p $(dir $@)
	$(MPICC) $(GM_CPPFLAGS) $(CPPFLAGS) $(GM_CFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/cli/mpi_main.o: cli/mpi_main.c
	@mkdir -p $(dir $@)
	$(MPICC) $(GM_CPPFLAGS) $(CPPFLAGS) $(GM_CFLAGS) $(CFLAGS) -c -o $@ $<

$(MPI_PROG): $(MPI_OBJ) $(BUILD)/tests/cli_main.o $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJ)) \
              $(CORE_OBJ) $(GPU_OBJ)
	$(MPICC) $(GM_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(GPU_LIBS) $(GM_LDLIBS) $(LDLIBS)
	@echo "built ./$@ with Open MPI ($(MPICC))"

# --version names the version and the engine: version.o is rebuilt when either
# changes.
$(BUILD)/cli/engine.txt: FORCE
	@mkdir -p $(dir $@)
	@echo '$(VERSION) $(ENGINE)' | cmp -s - $@ || echo '$(VERSION) $(ENGINE)' >$@
# (its own recipe: a CFLAGS given on the command line would drop a
# target-specific CFLAGS +=)
$(BUILD)/cli/version.o: cli/version.c $(BUILD)/cli/engine.txt
	@mkdir -p $(dir $@)
	$(COMPILE.gm) -DGM_BUILD_ENGINE='"$(ENGINE)"' -c -o $@ $<

# The man page with the version on its .TH line.
$(BUILD)/man/gpumerge.1: man/gpumerge.1 VERSION
	@mkdir -p $(dir $@)
	sed '1,/^\.TH /s/^\(\.TH GPUMERGE 1 [^ ]* "gpumerge\)"/\1 $(VERSION)"/' man/gpumerge.1 >$@

$(BUILD)/man/gpumerge.3: man/gpumerge.3 VERSION
	@mkdir -p $(dir $@)
	sed '1,/^\.TH /s/^\(\.TH GPUMERGE 3 [^ ]* "libgpumerge\)"/\1 $(VERSION)"/' man/gpumerge.3 >$@

# -MMD -MP: each CUDA object depends on every header it includes (the .d files).
$(BUILD)/cuda/%.o: cuda/%.cu
	@mkdir -p $(dir $@)
	$(COMPILE.nv) -MMD -MP -MF $(@:.o=.d) -c -o $@ $<

# ---------------------------------------------------------------- tests

# Criterion comes from the distribution; as root we install it, else we say how.
criterion:
	@if ! printf '#include <criterion/criterion.h>\n' | $(CC) $(CPPFLAGS) -E -x c - >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Criterion (libcriterion-dev) with apt-get"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libcriterion-dev) >/dev/null || exit 1; \
	  else \
	    echo "Criterion is missing; install it with: sudo apt-get install libcriterion-dev"; exit 1; \
	  fi; \
	fi

# Open MPI comes from the distribution too (mpirun runs the MPI suite).
openmpi:
	@if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Open MPI (libopenmpi-dev openmpi-bin) with apt-get"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      libopenmpi-dev openmpi-bin) >/dev/null || exit 1; \
	  else \
	    echo "Open MPI is missing; install it with: sudo apt-get install libopenmpi-dev openmpi-bin"; \
	    exit 1; \
	  fi; \
	fi

$(BUILD)/tests/%.o: tests/%.c tests/helpers.h | criterion
	@mkdir -p $(dir $@)
	$(COMPILE.gm) -c -o $@ $<

$(BUILD)/tests/test_%: $(BUILD)/tests/test_%.o $(BUILD)/tests/helpers.o $(CORE_OBJ) $(GPU_OBJ) \
                      $(TESTING_OBJ)
	$(LINK.gm) -o $@ $^ -lcriterion $(GPU_LIBS) $(GM_LDLIBS) $(LDLIBS)

# A long suite spans files: tests/test_X.c and its parts tests/X_*.c, one binary.
$(foreach t,$(TESTS),$(eval $(BUILD)/tests/test_$(t): \
  $(patsubst tests/%.c,$(BUILD)/tests/%.o,$(wildcard tests/$(t)_*.c))))

# pkg-config comes from the distribution too (the library's suite links through it).
pkgconfig:
	@if ! command -v pkg-config >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing pkg-config with apt-get"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      pkg-config) >/dev/null || exit 1; \
	  else \
	    echo "pkg-config is missing; install it with: sudo apt-get install pkg-config"; exit 1; \
	  fi; \
	fi

# The library's suite (tests/test_lib.c) sees the library as its users do: make
# install puts it in LIB_ROOT (a PREFIX under the build), and the suite takes its
# header and flags from pkg-config there; test_lib links it shared (found by an
# rpath), test_lib_static the archive. A second install is staged as packagers
# stage one: DESTDIR=LIB_STAGE with PREFIX=LIB_STAGE_PREFIX, which does not exist
# outside it, for the cases under PKG_CONFIG_SYSROOT_DIR. The programs the suite
# builds against them use this build's compiler and sanitizers (GM_TEST_CC);
# GM_TEST_CUDA says whether this is a CUDA build.
LIB_ROOT = $(abspath $(BUILD))/tests/libroot
LIB_STAGE = $(abspath $(BUILD))/tests/libstage
LIB_STAGE_PREFIX = /opt/gpumerge-staged
LIB_PKG  = PKG_CONFIG_PATH=$(LIB_ROOT)/lib/pkgconfig pkg-config
LIB_INSTALLED = $(PROG) $(BUILD)/man/gpumerge.1 $(BUILD)/man/gpumerge.3 $(LIB_A) $(LIB_SO) \
                include/gpumerge.h
$(LIB_ROOT)/installed: $(LIB_INSTALLED) | pkgconfig
	rm -rf $(LIB_ROOT)
	$(MAKE) --no-print-directory -s install DESTDIR= PREFIX=$(LIB_ROOT) BINDIR=$(LIB_ROOT)/bin \
	  LIBDIR=$(LIB_ROOT)/lib INCLUDEDIR=$(LIB_ROOT)/include MANDIR=$(LIB_ROOT)/share/man \
	  PKGCONFIGDIR=$(LIB_ROOT)/lib/pkgconfig LIB_PC=$(abspath $(BUILD))/tests/gpumerge.pc
	touch $@

$(LIB_STAGE)/installed: $(LIB_INSTALLED) | pkgconfig
	rm -rf $(LIB_STAGE)
	$(MAKE) --no-print-directory -s install DESTDIR=$(LIB_STAGE) PREFIX=$(LIB_STAGE_PREFIX) \
	  BINDIR=$(LIB_STAGE_PREFIX)/bin LIBDIR=$(LIB_STAGE_PREFIX)/lib \
	  INCLUDEDIR=$(LIB_STAGE_PREFIX)/include MANDIR=$(LIB_STAGE_PREFIX)/share/man \
	  PKGCONFIGDIR=$(LIB_STAGE_PREFIX)/lib/pkgconfig LIB_PC=$(abspath $(BUILD))/tests/staged.pc
	touch $@

LIB_TEST_OBJ = $(patsubst tests/%.c,$(BUILD)/tests/%.o,tests/test_lib.c $(wildcard tests/lib_*.c))
$(LIB_TEST_OBJ): $(BUILD)/tests/%.o: tests/%.c tests/helpers.h tests/lib_cases.h \
                 $(LIB_ROOT)/installed $(LIB_STAGE)/installed | criterion
	@mkdir -p $(dir $@)
	$(COMPILE.gm) -DGM_TEST_LIB_ROOT='"$(LIB_ROOT)"' -DGM_TEST_CC='"$(CC) $(SANFLAGS)"' \
	  -DGM_TEST_LIB_STAGE='"$(LIB_STAGE)"' -DGM_TEST_LIB_STAGE_PREFIX='"$(LIB_STAGE_PREFIX)"' \
	  -DGM_TEST_CUDA=$(if $(NVCC),1,0) $$($(LIB_PKG) --cflags gpumerge) -c -o $@ $<

$(BUILD)/tests/test_lib: $(LIB_TEST_OBJ) $(BUILD)/tests/helpers.o
	$(LINK.gm) -o $@ $^ -Wl,-rpath,$(LIB_ROOT)/lib $$($(LIB_PKG) --libs gpumerge) -lcriterion \
	  $(GM_LDLIBS) $(LDLIBS)

$(BUILD)/tests/test_lib_static: $(LIB_TEST_OBJ) $(BUILD)/tests/helpers.o
	$(LINK.gm) -o $@ $^ $$($(LIB_PKG) --static --libs gpumerge | sed 's/-lgpumerge/-l:libgpumerge.a/') \
	  -lcriterion $(GM_LDLIBS) $(LDLIBS)

# The compatibility suite also calls the option parser directly.
$(BUILD)/tests/test_compat: $(OPTIONS_OBJ)

# The GPU suite's key-value cases and their reference (tests/pairs.c), which
# gpupairs, the driver compute-sanitizer runs over them, shares.
$(BUILD)/tests/test_gpu: $(BUILD)/tests/pairs.o
$(BUILD)/tests/test_keys $(BUILD)/tests/test_records $(BUILD)/tests/test_recgpu $(BUILD)/tests/test_ranges: $(BUILD)/tests/specs.o
$(BUILD)/tests/pairs.o: tests/pairs.h
GPUPAIRS = $(BUILD)/tests/gpupairs
$(GPUPAIRS): $(BUILD)/tests/gpupairs.o $(BUILD)/tests/pairs.o $(BUILD)/tests/helpers.o \
             $(CORE_OBJ) $(GPU_OBJ) $(TESTING_OBJ)
	$(LINK.gm) -o $@ $^ $(GPU_LIBS) $(GM_LDLIBS) $(LDLIBS)

# gpumerge with GPU choices forced from its first arguments (cuda/testing.h), for
# tests/sanitize.sh and the CLI suite: the CLI's main under another name.
$(BUILD)/tests/cli_main.o: cli/main.c
	@mkdir -p $(dir $@)
	$(COMPILE.gm) -Dmain=gm_cli_main -c -o $@ $<

FORCED = $(BUILD)/tests/gpumerge_forced
$(FORCED): $(BUILD)/tests/gpumerge_forced.o $(BUILD)/tests/cli_main.o \
           $(OPTIONS_OBJ) $(CORE_OBJ) $(GPU_OBJ) $(TESTING_OBJ)
	$(LINK.gm) -o $@ $^ $(GPU_LIBS) $(GM_LDLIBS) $(LDLIBS)

# gpumerge with a stand-in device for the sort in device memory (tests/fakegpu.c),
# so that test_recrange runs the host's side of it where no GPU is, in every build.
FAKEGPU = $(BUILD)/tests/gpumerge_fakegpu
$(BUILD)/tests/gpu_stub_fake.o: cuda/gpu_stub.c cuda/gpu.h
	@mkdir -p $(dir $@)
	$(COMPILE.gm) -DGM_FAKE_LINES -c -o $@ $<
$(FAKEGPU): $(BUILD)/cli/main.o $(OPTIONS_OBJ) $(CORE_OBJ) $(BUILD)/tests/fakegpu.o \
            $(BUILD)/tests/gpu_stub_fake.o
	$(LINK.gm) -o $@ $^ $(GM_LDLIBS) $(LDLIBS)

test: $(PROG) $(MPI_PROG) $(FORCED) $(FAKEGPU) $(TEST_BIN) $(BUILD)/man/gpumerge.1 $(BUILD)/man/gpumerge.3
	@sh tests/layout.sh $(BUILD)
	@if command -v groff >/dev/null; then for m in 1 3; do \
	  echo "== $(BUILD)/man/gpumerge.$$m"; groff -man -ww -z $(BUILD)/man/gpumerge.$$m || exit 1; done; fi
	@GPUMERGE=$(CURDIR)/$(PROG) GPUMERGE_FORCED=$(CURDIR)/$(FORCED) TESTDATA=$(CURDIR)/testdata \
	  GPUMERGE_FAKEGPU=$(CURDIR)/$(FAKEGPU) GPUMERGE_MPI=$(if $(MPI_PROG),$(CURDIR)/$(MPI_PROG)) sh tests/run.sh $(TEST_BIN)

test-gpu: gpumerge $(FORCED) $(BUILD)/tests/test_gpu $(BUILD)/tests/test_cli \
          $(BUILD)/tests/test_recgpu $(BUILD)/tests/test_lib_static
	GM_TEST_REQUIRE_GPU=1 $(BUILD)/tests/test_gpu
	GM_TEST_REQUIRE_GPU=1 TESTDATA=$(CURDIR)/testdata $(BUILD)/tests/test_lib_static
	GPUMERGE=$(CURDIR)/gpumerge GPUMERGE_FORCED=$(CURDIR)/$(FORCED) TESTDATA=$(CURDIR)/testdata \
	  GM_TEST_DEVICE=gpu $(BUILD)/tests/test_cli
	GPUMERGE=$(CURDIR)/gpumerge GPUMERGE_FORCED=$(CURDIR)/$(FORCED) TESTDATA=$(CURDIR)/testdata \
	  $(BUILD)/tests/test_recgpu

SANITIZER ?= compute-sanitizer
sanitize: gpumerge $(FORCED) $(GPUPAIRS)
	SANITIZER=$(SANITIZER) GPUMERGE=./gpumerge GPUMERGE_FORCED=$(FORCED) GPUPAIRS=$(GPUPAIRS) \
	  bash tests/sanitize.sh memcheck racecheck synccheck

# The host code under the compilers' sanitizers, CPU-only, in build dirs of their
# own. ASan+UBSan: the program and every suite, built into build-asan/ and run
# in full. TSan: the program built into build-tsan/, driven by the CLI suites
# (cli, safety: every command, on 2 threads and more); Criterion's own sandbox
# cannot start under TSan, so the suites themselves are the plain build's. Every
# process writes its reports under build-*/reports/ (the tests' gpumerge runs
# too, whatever the exit statuses the tests see): any report fails the target.
# UBSan's reports go to stderr (gcc's runtime ignores log_path beside ASan), and
# end the process with status 86, which every test sees. TSan's runtime refuses
# some kernels' address-space randomisation: then it runs under setarch -R.
# -O1 -g unless CFLAGS is given; the instrumentation goes in SANFLAGS, which
# CFLAGS cannot drop.
SAN_CFLAGS = $(if $(filter file,$(origin CFLAGS)),-O1 -g,$(CFLAGS))
SAN_OPTS   = halt_on_error=1:exitcode=86:print_stacktrace=1
SAN_ENV    = ASAN_OPTIONS=$(SAN_OPTS):detect_leaks=0:log_path=$(CURDIR)/$(1)/reports/asan \
             UBSAN_OPTIONS=$(SAN_OPTS):log_path=$(CURDIR)/$(1)/reports/ubsan \
             TSAN_OPTIONS=$(SAN_OPTS):second_deadlock_stack=1:log_path=$(CURDIR)/$(1)/reports/tsan
SAN_CHECK  = if [ -n "$$(ls $(1)/reports)" ]; then cat $(1)/reports/*; \
               echo "sanitize-host: $(1): the reports above"; exit 1; fi; \
             if [ -n "$$st" ]; then echo "sanitize-host: $(1): tests failed"; exit 1; fi
sanitize-host: criterion
	@echo "== sanitize-host: ASan + UBSan (build-asan/)"
	@rm -rf build-asan/reports; mkdir -p -m 1777 build-asan/reports; st=; \
	$(call SAN_ENV,build-asan) $(MAKE) --no-print-directory BUILD=build-asan \
	  PROG=build-asan/gpumerge NVCC= CFLAGS="$(SAN_CFLAGS)" SANFLAGS="-fno-omit-frame-pointer \
	  -fsanitize=address,undefined -fno-sanitize-recover=all" test || st=$$?; $(call SAN_CHECK,build-asan)
	@echo "== sanitize-host: TSan (build-tsan/)"
	@rm -rf build-tsan/reports; mkdir -p -m 1777 build-tsan/reports; st=; \
	$(MAKE) --no-print-directory BUILD=build-tsan PROG=build-tsan/gpumerge NVCC= \
	  CFLAGS="$(SAN_CFLAGS)" SANFLAGS="-fno-omit-frame-pointer -fsanitize=thread" \
	  build-tsan/gpumerge || exit 1; \
	$(MAKE) --no-print-directory NVCC= $(BUILD)/tests/test_cli $(BUILD)/tests/test_safety \
	  || exit 1; \
	r=; build-tsan/gpumerge --version >/dev/null 2>&1 || r="setarch $$(uname -m) -R"; \
	for t in cli safety; do echo "== $(BUILD)/tests/test_$$t with build-tsan/gpumerge $$r"; \
	  $(call SAN_ENV,build-tsan) GPUMERGE=$(CURDIR)/build-tsan/gpumerge \
	  TESTDATA=$(CURDIR)/testdata $$r $(BUILD)/tests/test_$$t --jobs=2 --verbose || st=1; \
	done; $(call SAN_CHECK,build-tsan)
	@echo "sanitize-host: no reports"

# ---------------------------------------------------------------- fuzz

# libFuzzer targets (fuzz/*.c) built with clang, ASan and UBSan into build-fuzz/:
# first every saved crash in fuzz/regressions/TARGET/ is run once (each must pass
# now), then each target fuzzes for FUZZ_SECONDS from the seeds made from
# testdata (fuzz/seeds.sh) and its corpus in build-fuzz/corpus/. A crash leaves
# its input in build-fuzz/crashes/ and fails the target; the input belongs in
# fuzz/regressions/ once the bug is fixed.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS  = parse options pipeline keys
FUZZ_CC      ?= clang
FUZZ_SANFLAGS = -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
                -fno-sanitize-recover=all
FUZZ_BIN      = $(FUZZ_TARGETS:%=build-fuzz/fuzz/fuzz_%)

# clang and its libFuzzer come from the distribution; as root we install them.
clang-fuzzer:
	@if ! printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n)\n{ return 0; }\n' \
	    | $(FUZZ_CC) -fsanitize=fuzzer -x c - -o /dev/null >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing clang and libFuzzer (clang libclang-rt-dev) with apt-get"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      clang libclang-rt-dev) >/dev/null || exit 1; \
	  else \
	    echo "clang with libFuzzer is missing; install it with:" \
	      "sudo apt-get install clang libclang-rt-dev"; exit 1; \
	  fi; \
	fi

$(BUILD)/fuzz/fuzz_%: $(BUILD)/fuzz/%.o $(OPTIONS_OBJ) $(CORE_OBJ) $(GPU_OBJ)
	$(LINK.gm) -fsanitize=fuzzer -o $@ $^ $(GM_LDLIBS) $(LDLIBS)

fuzz: clang-fuzzer
	@$(MAKE) --no-print-directory BUILD=build-fuzz CC=$(FUZZ_CC) CFLAGS="$(SAN_CFLAGS)" \
	  SANFLAGS="$(FUZZ_SANFLAGS)" NVCC= $(FUZZ_BIN)
	@rm -rf build-fuzz/seeds build-fuzz/crashes; sh fuzz/seeds.sh build-fuzz/seeds; \
	mkdir -p build-fuzz/crashes; fail=0; \
	for t in $(FUZZ_TARGETS); do \
	  if [ -n "$$(ls fuzz/regressions/$$t 2>/dev/null)" ]; then \
	    echo "== fuzz $$t: regressions"; \
	    build-fuzz/fuzz/fuzz_$$t fuzz/regressions/$$t/* > build-fuzz/$$t-regressions.log 2>&1 \
	      || { fail=1; tail -n 60 build-fuzz/$$t-regressions.log; }; \
	    grep -c '^Executed' build-fuzz/$$t-regressions.log | sed 's/$$/ inputs replayed/'; fi; \
	  echo "== fuzz $$t: $(FUZZ_SECONDS) s"; mkdir -p build-fuzz/corpus/$$t; \
	  build-fuzz/fuzz/fuzz_$$t build-fuzz/corpus/$$t build-fuzz/seeds/$$t \
	    -max_total_time=$(FUZZ_SECONDS) -timeout=20 -rss_limit_mb=4096 \
	    -artifact_prefix=build-fuzz/crashes/$$t- -print_final_stats=1 \
	    > build-fuzz/$$t.log 2>&1 || { fail=1; tail -n 60 build-fuzz/$$t.log; }; \
	  grep -E '^(stat::number_of_executed_units|stat::new_units_added)|^Done' build-fuzz/$$t.log; \
	done; \
	if [ -n "$$(ls build-fuzz/crashes)" ]; then ls build-fuzz/crashes; fail=1; fi; exit $$fail

# ---------------------------------------------------------------- bench

$(BUILD)/bench/kernels.o: bench/kernels.cu
	@mkdir -p $(dir $@)
	$(COMPILE.nv) -MMD -MP -MF $(@:.o=.d) -c -o $@ $<

$(BUILD)/bench/kernels: $(BUILD)/bench/kernels.o $(GPU_OBJ) $(TESTING_OBJ) $(BUILD)/core/sort/cpumerge.o \
                       $(BUILD)/core/sort/cpusort.o $(BUILD)/core/base/pages.o $(BUILD)/core/base/status.o \
                       $(BUILD)/core/base/util.o $(BUILD)/core/base/pool.o
	$(LINK.gm) -o $@ $^ $(GPU_LIBS) $(GM_LDLIBS) $(LDLIBS)

# The benchmarks' input.
$(BUILD)/bench/gen: bench/gen.c
	@mkdir -p $(dir $@)
	$(COMPILE.gm) $(LDFLAGS) -o $@ $< $(GM_LDLIBS) $(LDLIBS)

# The output floor: every way of writing N bytes into a file or a pipe (no core code).
$(BUILD)/bench/iofloor: bench/iofloor.c
	@mkdir -p $(dir $@)
	$(COMPILE.gm) $(LDFLAGS) -o $@ $< $(GM_LDLIBS) $(LDLIBS)

# The kernel benchmark runs where ./gpumerge can use a GPU; the end-to-end one always.
bench: gpumerge $(BUILD)/bench/gen $(BUILD)/bench/iofloor
	@if [ -z "$(NVCC)" ]; then echo "no nvcc: skipping the kernel benchmark"; \
	elif ! echo 1 | ./gpumerge sort --device=gpu >/dev/null 2>&1; then \
	  echo "no usable GPU: skipping the kernel benchmark"; \
	else $(MAKE) --no-print-directory $(BUILD)/bench/kernels && $(BUILD)/bench/kernels; fi
	bash bench/e2e.sh
	IOFLOOR=$(BUILD)/bench/iofloor bash bench/iofloor.sh

# ---------------------------------------------------------------- install

# GNU's conventions: `install` keeps the binary's symbols, `install-strip` strips it.
COMPLETIONS     = $(PREFIX)/share/bash-completion/completions
INSTALL_PROGRAM = $(INSTALL) -m 755
INSTALL_DATA    = $(INSTALL) -m 644

install: $(PROG) $(BUILD)/man/gpumerge.1 $(LIB_A) $(LIB_SO) $(LIB_PC) $(BUILD)/man/gpumerge.3
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(COMPLETIONS) \
	  $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man3
	$(INSTALL_PROGRAM) $(PROG) $(DESTDIR)$(BINDIR)/gpumerge
	ln -sf gpumerge $(DESTDIR)$(BINDIR)/gpusort
	@if [ -n "$(MPI_PROG)" ] && [ -f "$(MPI_PROG)" ]; then \
	  $(INSTALL_PROGRAM) $(MPI_PROG) $(DESTDIR)$(BINDIR)/gpumerge-mpi; fi
	$(INSTALL_DATA) $(BUILD)/man/gpumerge.1 $(DESTDIR)$(MANDIR)/man1/gpumerge.1
	echo '.so man1/gpumerge.1' >$(DESTDIR)$(MANDIR)/man1/gpusort.1 && \
	  chmod 644 $(DESTDIR)$(MANDIR)/man1/gpusort.1
	$(INSTALL_DATA) completion/gpumerge.bash $(DESTDIR)$(COMPLETIONS)/gpumerge
	@if [ -n "$(CUDA_LIB)" ]; then \
	  $(INSTALL) -d $(DESTDIR)$(LIBDIR)/gpumerge && \
	  $(INSTALL_PROGRAM) $(CUDA_LIB) $(DESTDIR)$(LIBDIR)/gpumerge/gpumerge-cuda.so; fi
	$(INSTALL_DATA) $(LIB_A) $(DESTDIR)$(LIBDIR)/libgpumerge.a
	$(INSTALL_PROGRAM) $(LIB_SO) $(DESTDIR)$(LIBDIR)/libgpumerge.so.$(VERSION)
	ln -sf libgpumerge.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libgpumerge.so
	$(INSTALL_DATA) include/gpumerge.h $(DESTDIR)$(INCLUDEDIR)/gpumerge.h
	$(INSTALL_DATA) $(LIB_PC) $(DESTDIR)$(PKGCONFIGDIR)/gpumerge.pc
	$(INSTALL_DATA) $(BUILD)/man/gpumerge.3 $(DESTDIR)$(MANDIR)/man3/gpumerge.3
	@for f in $(LIB_FUNCS); do echo '.so man3/gpumerge.3' >$(DESTDIR)$(MANDIR)/man3/$$f.3 && \
	  chmod 644 $(DESTDIR)$(MANDIR)/man3/$$f.3 || exit 1; done

# install with the programs stripped: the same rule, no second make (whose options,
# -o among them, would not carry over)
install-strip: INSTALL_PROGRAM = $(INSTALL) -m 755 -s
install-strip: install

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/gpumerge $(DESTDIR)$(BINDIR)/gpusort $(DESTDIR)$(BINDIR)/gpumerge-mpi \
	  $(DESTDIR)$(MANDIR)/man1/gpumerge.1 $(DESTDIR)$(MANDIR)/man1/gpusort.1 \
	  $(DESTDIR)$(COMPLETIONS)/gpumerge $(DESTDIR)$(LIBDIR)/gpumerge/gpumerge-cuda.so \
	  $(DESTDIR)$(LIBDIR)/libgpumerge.a $(DESTDIR)$(LIBDIR)/libgpumerge.so \
	  $(DESTDIR)$(LIBDIR)/$(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libgpumerge.so.$(VERSION) \
	  $(DESTDIR)$(INCLUDEDIR)/gpumerge.h $(DESTDIR)$(PKGCONFIGDIR)/gpumerge.pc \
	  $(DESTDIR)$(MANDIR)/man3/gpumerge.3 $(LIB_FUNCS:%=$(DESTDIR)$(MANDIR)/man3/%.3)
	@rmdir $(DESTDIR)$(LIBDIR)/gpumerge 2>/dev/null || true

# ---------------------------------------------------------------- dist

# gpumerge-VERSION.tar.gz: the tracked files as they are in the working tree
# (`git stash create` makes a commit of uncommitted changes without touching any
# branch, the index or the files), under gpumerge-VERSION/.
DIST = gpumerge-$(VERSION)
dist:
	@command -v git >/dev/null && git rev-parse --git-dir >/dev/null 2>&1 || \
	  { echo "make dist: needs git and the repository"; exit 1; }
	@tree=$$(git stash create) && git archive --format=tar.gz --prefix=$(DIST)/ \
	  -o $(DIST).tar.gz $${tree:-HEAD} && echo "wrote $(DIST).tar.gz"

# The tarball unpacked in a temporary folder, built and tested there (with this
# make's NVCC: `make NVCC= distcheck` for a CPU-only build).
distcheck: dist
	@d=$$(mktemp -d "$${TMPDIR:-/tmp}/gpumerge-distcheck.XXXXXX") && trap 'rm -rf "$$d"' EXIT && \
	tar -xzf $(DIST).tar.gz -C "$$d" && \
	$(MAKE) --no-print-directory -C "$$d/$(DIST)" NVCC=$(NVCC) test && \
	echo "distcheck: $(DIST).tar.gz builds and passes its tests from a clean unpack"

check: test

# The core's rooms kept: no include of a room above, none of cuda/ outside
# core/device/, no loop of includes or of the objects' symbols (tests/layout.sh).
layout: $(CORE_OBJ) $(GPU_OBJ)
	@sh tests/layout.sh $(BUILD)

clean:
	rm -rf $(BUILD) gpumerge gpusort gpumerge-mpi gpumerge-cuda.so build-asan build-tsan build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
