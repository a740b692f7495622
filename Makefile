# fofkit - friends-of-friends halo finding as a Unix toolchain. `make help` lists the targets.

PREFIX  ?= /usr/local
CC      ?= gcc
NVCC    ?= nvcc
# CUDA=1 builds the GPU backend, CUDA=0 a CPU-only build; by default, whether nvcc is found.
CUDA    ?= $(if $(shell command -v $(NVCC) 2>/dev/null),1,0)
# Target GPUs: Hopper machine code plus PTX, so newer GPUs compile it at load.
CUDA_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
CUDA_HOME ?= $(patsubst %/bin/,%,$(dir $(shell command -v $(NVCC) 2>/dev/null)))

# -ffp-contract=off: no fused multiply-add anywhere, so the linking predicate
# is evaluated exactly as documented in foflink(1), on every path.
# CFLAGS and NVFLAGS are yours to set (make CFLAGS=-O0, NVFLAGS=-DFK_GPU_STATS); what the code needs is added.
CFLAGS  ?= -O3 -g
NVFLAGS ?= -O3
ALL_CFLAGS  = $(CFLAGS) -std=c11 -Wall -Wextra -ffp-contract=off -fopenmp -D_DEFAULT_SOURCE -Iinclude -Ilib -Itools/common
ALL_NVFLAGS = $(NVFLAGS) -std=c++17 --fmad=$(NV_FMAD) $(CUDA_ARCH) -Iinclude -Ilib -Xcompiler -Wall,-Wextra,-ffp-contract=off,-fopenmp
NV_FMAD = false
# Each host thread its own default stream: the unbinding feeds the GPU from several threads at once.
ALL_NVFLAGS += --default-stream per-thread
LDLIBS  = -lz -lm
ifeq ($(CUDA),1)
LDLIBS  += -L$(CUDA_HOME)/lib64 -lcudart_static -lstdc++ -ldl -lrt -lpthread
endif

B ?= build

# Optional libraries, probed once into $(B)/config.mk after scripts/deps has installed what it can
# (as root): HDF5 (FK_HAVE_HDF5) and cairo (FK_HAVE_CAIRO). `make config` probes again; HDF5=0 or
# CAIRO=0 on the command line builds without one. A program or test that needs a library left out
# says so (programs) or skips (tests).
ifeq ($(filter clean help config,$(MAKECMDGOALS)),)
include $(B)/config.mk
endif
ifeq ($(HDF5),1)
ALL_CFLAGS += $(HDF5_CFLAGS) -DFK_HAVE_HDF5=1
LDLIBS  += $(HDF5_LIBS)
endif
ifeq ($(strip $(HDF5)),0)
ifeq ($(filter clean help config,$(MAKECMDGOALS)),)
$(info fofkit: building without HDF5 (libhdf5-dev, or HDF5=0): hdf52bin only says so; its tests skip)
endif
endif
ifeq ($(strip $(MPI)),0)
ifeq ($(filter clean help config,$(MAKECMDGOALS)),)
$(info fofkit: building without MPI (libopenmpi-dev, or MPI=0): the programs under mpirun only say so; their tests skip)
endif
endif
# cairo (FK_HAVE_CAIRO): only the pictures' files are compiled with it and only the picture programs
# (and their tests' probe) link it, so libfofkit.so and every other program load no cairo.
CAIRO_PROGS := fofmap halomf
ifeq ($(CAIRO),1)
$(patsubst %.c,$(B)/%.o,tools/common/picture.c $(foreach p,$(CAIRO_PROGS),$(wildcard tools/$(p)/*.c))): private ALL_CFLAGS += $(CAIRO_CFLAGS) -DFK_HAVE_CAIRO=1
$(foreach p,$(CAIRO_PROGS),$(eval $(B)/bin/$(p): private LDLIBS += $(CAIRO_LIBS)))
$(B)/tests/pngprobe: private ALL_CFLAGS += $(CAIRO_CFLAGS) -DFK_HAVE_CAIRO=1
$(B)/tests/pngprobe: private LDLIBS += $(CAIRO_LIBS)
endif
ifeq ($(strip $(CAIRO)),0)
ifeq ($(filter clean help config,$(MAKECMDGOALS)),)
$(info fofkit: building without cairo (libcairo2-dev, or CAIRO=0): fofmap and halomf --plot only say so; their picture tests skip)
endif
endif

# MPI (FK_HAVE_MPI): only lib/dist*.c call it, and only the programs in MPI_PROGS link it.
MPI_PROGS := foflink groups tipsy2bin gadget2bin hdf52bin halostats halotree
ifeq ($(MPI),1)
$(patsubst %.c,$(B)/%.o,$(wildcard lib/dist*.c)): ALL_CFLAGS += $(MPI_CFLAGS) -DFK_HAVE_MPI=1
$(foreach p,$(MPI_PROGS),$(eval $(B)/bin/$(p): LDLIBS += $(MPI_LIBS)))
$(B)/tests/fofmpi: ALL_CFLAGS += $(MPI_CFLAGS) -DFK_HAVE_MPI=1
$(B)/tests/fofmpi: LDLIBS += $(MPI_LIBS)
$(B)/bench/mpifloor: ALL_CFLAGS += $(MPI_CFLAGS) -DFK_HAVE_MPI=1
$(B)/bench/mpifloor: LDLIBS += $(MPI_LIBS)
endif

LIB_C   := $(wildcard lib/*.c)
LIB_CU  := $(wildcard lib/gpu/*.cu)
ifeq ($(CUDA),1)
LIB_C   := $(filter-out lib/gpu_none.c lib/gpuarrays_none.c lib/tree_match_none.c,$(LIB_C))
LIB_OBJ := $(LIB_C:%.c=$(B)/%.o) $(LIB_CU:%.cu=$(B)/%.o)
else
LIB_OBJ := $(LIB_C:%.c=$(B)/%.o)
endif
# The library's objects are position-independent: the same ones make libfofkit.a and libfofkit.so.
$(filter %.o,$(LIB_C:%.c=$(B)/%.o)): ALL_CFLAGS += -fPIC
$(LIB_CU:%.cu=$(B)/%.o): ALL_NVFLAGS += -Xcompiler -fPIC
COMMON_OBJ := $(patsubst %.c,$(B)/%.o,$(wildcard tools/common/*.c))
# The programs' shared code as an archive: each program links only the files it calls (so
# that the MPI calls of one reach only the programs in MPI_PROGS).
COMMON_LIB := $(B)/libprog.a
TOOLS   := $(filter-out common,$(notdir $(wildcard tools/*)))
BINS    := $(TOOLS:%=$(B)/bin/%)
CTESTS  := $(patsubst tests/c/%.c,$(B)/tests/%,$(wildcard tests/c/test_*.c))
CHELP   := $(patsubst tests/c/%.c,$(B)/tests/%,$(filter-out tests/c/test_%,$(wildcard tests/c/*.c)))
BENCHES := $(patsubst bench/%.c,$(B)/bench/%,$(wildcard bench/*.c))
MAN1    := $(wildcard man/man1/*.1)
MAN3    := $(wildcard man/man3/*.3)
MAN5    := $(wildcard man/man5/*.5)

# libfofkit: the public header include/fofkit.h, a shared library exporting only its fofkit_*
# calls (lib/fofkit.map), versioned by lib/version.h (soname libfofkit.so.MAJOR), and fofkit.pc.
VERSION := $(shell sed -n 's/^\#define FK_VERSION "\(.*\)"/\1/p' lib/version.h)
SOMAJOR := $(firstword $(subst ., ,$(VERSION)))
SONAME  := libfofkit.so.$(SOMAJOR)
SHLIB   := $(B)/libfofkit.so.$(VERSION)
LIBDIR  ?= $(PREFIX)/lib
# libfofkit.so holds the objects of fofkit.h's calls (lib/api*.c) and what they reach in libfofkit.a,
# linked --as-needed: no call needs HDF5, libpng or cairo, so a program (or Python) that loads it
# loads none of them. Nor MPI: its fofkit_fof_mpi (lib/shlib/mpi_load.c) opens libfofkit_mpi.so
# (dist_api.c and what it reaches, linked with libmpi; exporting fofkit_fof_mpi alone) at its first
# call, from libfofkit.so's directory.
SHLIB_OBJ  = $(patsubst %.c,$(B)/%.o,$(wildcard lib/api*.c)) \
  $(if $(filter 1,$(MPI)),$(B)/lib/shlib/mpi_load.o,$(B)/lib/dist_api.o)
SHLIB_LIBS = $(LDLIBS) -ldl
MPI_SONAME := libfofkit_mpi.so.$(SOMAJOR)
MPILIB  := $(if $(filter 1,$(MPI)),$(B)/libfofkit_mpi.so.$(VERSION))
$(B)/lib/shlib/mpi_load.o: ALL_CFLAGS += -fPIC -DFK_MPI_LIBRARY='"$(MPI_SONAME)"' $(MPI_CFLAGS) -DFK_HAVE_MPI=1
# What a program linking libfofkit.a may need (pkg-config --static): every optional library.
STATIC_LIBS = $(LDLIBS) $(if $(filter 1,$(MPI)),$(MPI_LIBS))
EXAMPLES := $(patsubst examples/%.c,$(B)/examples/%,$(wildcard examples/*.c))

ifeq ($(V),1)
Q :=
else
Q := @
endif

.PHONY: all lib help deps config test test-full check-c check-bats demo bench gpucheck install uninstall clean fuzz check-asan
.DEFAULT_GOAL := all

all: $(BINS) $(B)/bin/fofgroups $(CTESTS) $(CHELP) $(BENCHES) lib $(EXAMPLES) ## build every program, the library (and the test and benchmark programs)

lib: $(B)/libfofkit.a $(SHLIB) $(B)/libfofkit.so $(MPILIB) $(B)/fofkit.pc ## build libfofkit: static, shared (and libfofkit_mpi.so with MPI), fofkit.pc (in the build tree)

# The grouping stage is groups, and fofgroups too: coreutils has a groups of its own (groups(1),
# README's Install). INSTALL_GROUPS=0 installs it as fofgroups only.
INSTALL_GROUPS ?= 1
$(B)/bin/fofgroups: $(B)/bin/groups
	$(Q)ln -sf groups $@

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 12

# The CPU linker's row kernel vectorises only when selects may be evaluated unconditionally;
# -fno-trapping-math allows that and changes no value (no FP exception flags are read).
$(B)/lib/link_cpu.o: ALL_CFLAGS += -fno-trapping-math
# Potentials need no bit-exact agreement (they agree within the stated tolerance, and every one
# reported is a double sum): fused multiply-adds are allowed there, and only there.
$(B)/lib/gpu/potential.o: NV_FMAD = true

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(if $(filter 1,$(CUDA)),-DFK_HAVE_CUDA=1) -MMD -MP -c $< -o $@

$(B)/%.o: %.cu
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) $(ALL_NVFLAGS) -MMD -MP -c $< -o $@

$(B)/libfofkit.a: $(LIB_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(SHLIB): $(SHLIB_OBJ) $(B)/libfofkit.a lib/fofkit.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=lib/fofkit.map -Wl,--as-needed \
	  $(SHLIB_OBJ) $(B)/libfofkit.a -o $@ $(SHLIB_LIBS)

$(MPILIB): $(B)/lib/dist_api.o $(B)/libfofkit.a lib/fofkit_mpi.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -shared -Wl,-soname,$(MPI_SONAME) -Wl,--version-script=lib/fofkit_mpi.map -Wl,--as-needed \
	  $(B)/lib/dist_api.o $(B)/libfofkit.a -o $@ $(LDLIBS) $(MPI_LIBS)
	$(Q)ln -sf $(notdir $@) $(B)/$(MPI_SONAME)

$(B)/libfofkit.so: $(SHLIB)
	$(Q)ln -sf $(notdir $(SHLIB)) $(B)/$(SONAME) && ln -sf $(SONAME) $@

# fofkit.pc for prefix $(1) (the build tree's names its own directories).
# A library built with sanitizers (make check-asan) says so in Libs: a program linked to it needs their runtimes first.
pc_text = sed -e 's|@PREFIX@|$(1)|; s|@LIBDIR@|$(2)|; s|@INCLUDEDIR@|$(3)|; s|@VERSION@|$(VERSION)|; s|@LIBS@|$(strip $(STATIC_LIBS))|; s|@SANITIZE@|$(if $(filter -fsanitize=%,$(CFLAGS)), $(filter -fsanitize=%,$(CFLAGS)))|' lib/fofkit.pc.in
$(B)/fofkit.pc: lib/fofkit.pc.in lib/version.h Makefile
	$(Q)$(call pc_text,$(CURDIR),$(abspath $(B)),$(CURDIR)/include) >$@

# Examples (examples/*.c): programs a user of the installed library would write, built against
# include/fofkit.h and the shared library only; with CUDA they put their particles on the GPU.
$(B)/examples/%: examples/%.c include/fofkit.h $(B)/libfofkit.so
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) -std=c11 -Wall -Wextra -Iinclude $(if $(filter 1,$(CUDA)),-DHAVE_CUDA=1 -I$(CUDA_HOME)/include) \
	  $< -o $@ -L$(B) -lfofkit -Wl,-rpath,$(CURDIR)/$(B) $(if $(filter 1,$(CUDA)),-L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lpthread) -lm

$(COMMON_LIB): $(COMMON_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# One link rule per program: every .c file of tools/NAME, the shared program code, the library.
define TOOL_LINK
$(B)/bin/$(1): $(patsubst %.c,$(B)/%.o,$(wildcard tools/$(1)/*.c)) $(COMMON_LIB) $(B)/libfofkit.a
	@mkdir -p $$(dir $$@)
	@$$(if $$(Q),echo "  LD      $$@")
	$$(Q)$$(CC) $$(ALL_CFLAGS) $$^ -o $$@ $$(LDLIBS)
endef
$(foreach t,$(TOOLS),$(eval $(call TOOL_LINK,$(t))))

$(B)/tests/%: tests/c/%.c $(COMMON_LIB) $(B)/libfofkit.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/c $< $(COMMON_LIB) $(B)/libfofkit.a -o $@ $(LDLIBS)

$(B)/bench/%: bench/%.c $(COMMON_LIB) $(B)/libfofkit.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/c $< $(COMMON_LIB) $(B)/libfofkit.a -o $@ $(LDLIBS)

# Fuzz harnesses (tests/fuzz/fuzz_*.c): `make test` replays their committed corpus and past crash
# inputs through a plain main() (tests/fuzz/replay.c), built with $(CC) against the library with
# the stream's CRC checks bypassed, so that mutated inputs reach the parsers as they did under
# libFuzzer; `make fuzz` runs them under libFuzzer (clang).
FUZZ    := $(patsubst tests/fuzz/%.c,$(B)/tests/%,$(wildcard tests/fuzz/fuzz_*.c))
all: $(FUZZ)

$(B)/tests/fuzz/stream-nocrc.o: lib/stream.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -DFK_FUZZ_NO_CRC -MMD -MP -c $< -o $@

$(B)/tests/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(wildcard tests/fuzz/*.h) $(B)/tests/fuzz/stream-nocrc.o $(B)/libfofkit.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/fuzz $< tests/fuzz/replay.c $(B)/tests/fuzz/stream-nocrc.o $(B)/libfofkit.a -o $@ $(LDLIBS)

FUZZ_SECONDS ?= 60
fuzz: ## run every fuzz harness for FUZZ_SECONDS (default 60) each under libFuzzer (needs clang)
	$(Q)FUZZ_SECONDS="$(FUZZ_SECONDS)" tests/fuzz/run

# The whole suite under AddressSanitizer (leaks included) and UBSan, with gcc's runtimes. An ASan or
# LSan report is written to $(ASAN_B)/sanitizer/ and fails the run, even where a test accepts any
# non-zero exit; a UBSan report (gcc's runtime writes it to stderr) exits with status 86.
ASAN_B ?= build-asan
check-asan: ## build into build-asan with ASan and UBSan (CUDA=0) and run every test; fails on any report
	$(Q)rm -rf $(ASAN_B)/sanitizer && mkdir -p $(ASAN_B)/sanitizer
	$(Q)ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:exitcode=86:log_path=$(CURDIR)/$(ASAN_B)/sanitizer/asan \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=86 \
	  $(MAKE) --no-print-directory B=$(ASAN_B) CUDA=0 \
	  CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" test
	$(Q)# A report says ERROR; a test of an absurd size leaves only "WARNING: ... failed to allocate".
	$(Q)if grep -l 'ERROR: ' $(ASAN_B)/sanitizer/* 2>/dev/null; then head -n 60 $$(grep -l 'ERROR: ' $(ASAN_B)/sanitizer/*); \
	  echo "check-asan: sanitizer reports in $(ASAN_B)/sanitizer" >&2; exit 1; fi
	@echo "check-asan: no sanitizer report"

# Nothing compiles before scripts/deps has found (as root: installed) a compiler and zlib.h;
# it is silent and takes milliseconds when they are there.
deps: ## check for what building needs (a C compiler, zlib headers); as root, apt-get it
	$(Q)CC="$(CC)" scripts/deps build

$(LIB_OBJ) $(COMMON_OBJ) $(patsubst %.c,$(B)/%.o,$(wildcard tools/*/*.c)): | deps

$(B)/config.mk: scripts/config
	@mkdir -p $(B)
	$(Q)scripts/deps optional
	$(Q)scripts/config >$@.tmp && mv $@.tmp $@

config: ## probe the optional libraries again (HDF5, cairo, MPI) into $(B)/config.mk
	@mkdir -p $(B)
	$(Q)scripts/deps optional
	$(Q)scripts/config >$(B)/config.mk && cat $(B)/config.mk

test: all ## build, then run every test (C tests, then the programs' bats tests)
	$(Q)CC="$(CC)" scripts/deps test
	$(Q)tests/run-c-tests $(CTESTS)
	$(Q)PATH="$(CURDIR)/$(B)/bin:$(CURDIR)/$(B)/tests:$(CURDIR)/$(B)/examples:$$PATH" FOFKIT_BUILD="$(CURDIR)/$(B)" bats tests

test-full: ## make test with every rank count the MPI tests name (1 to 64: tests/mpi_helpers.bash's rank_counts)
	$(Q)FOFKIT_TEST_RANKS=all $(MAKE) test

DEMO_TOOLS := mkuniverse tipsy2bin kdbuild foflink groups halostats fofmap halomf

demo: $(DEMO_TOOLS:%=$(B)/bin/%) ## build the programs the demo runs, make a sample universe, run the whole pipeline, show the biggest halos
	$(Q)B="$(B)" scripts/demo

bench: all ## time every stage on mock universes; writes bench/RESULTS.md
	$(Q)bench/run

gpucheck: all ## on a GPU machine: GPU tests, CPU-GPU identity, compute-sanitizer; one-screen summary
	$(Q)scripts/gpucheck

# The directories install may make, parents first; those it made are listed in $(MADE_DIRS), so
# that uninstall removes them again (when empty) and no directory that was there before.
INST_DIRS = $(DESTDIR)$(PREFIX) $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(LIBDIR) \
	$(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/share $(DESTDIR)$(PREFIX)/share/man \
	$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man3 $(DESTDIR)$(PREFIX)/share/man/man5 \
	$(DESTDIR)$(PREFIX)/share/fofkit
MADE_DIRS = $(DESTDIR)$(PREFIX)/share/fofkit/made-dirs
# The stage's page is installed as fofgroups(1) alone, its NAME line without groups, so that
# groups(1) and whatis groups stay coreutils'.
# install runs ldconfig (its cache and libfofkit.so.N's link) when it installs, as root and not into
# a DESTDIR staging tree, into a directory the dynamic linker searches (ldconfig -v -N lists them).
LDCONFIG ?= ldconfig

install: $(BINS) lib ## install the programs, libfofkit (header, .so, .a, fofkit.pc) and man pages under PREFIX (INSTALL_GROUPS=0: the groups stage as fofgroups only)
	$(Q)made=; for d in $(INST_DIRS); do [ -d "$$d" ] || made="$$made $$d"; done; \
	  install -d $(INST_DIRS) && \
	  { cat $(MADE_DIRS) 2>/dev/null; for d in $$made; do echo "$$d"; done; } | sort -u >$(MADE_DIRS).new && \
	  mv $(MADE_DIRS).new $(MADE_DIRS)
	install -m 755 $(filter-out %/groups,$(BINS)) $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(B)/bin/groups $(DESTDIR)$(PREFIX)/bin/fofgroups
	$(Q)$(if $(filter 0,$(INSTALL_GROUPS)),:,g=$(DESTDIR)$(PREFIX)/bin/groups; \
	  if [ -e "$$g" ] && [ "$$(readlink "$$g")" != fofgroups ]; then \
	    echo "install: $$g is another program's (coreutils'?): left as it is; the stage is fofgroups"; \
	  else echo "ln -sf fofgroups $$g"; ln -sf fofgroups "$$g"; fi)
	install -m 644 $(filter-out %/groups.1,$(MAN1)) $(DESTDIR)$(PREFIX)/share/man/man1
	sed '/^\.SH NAME/{n;s/^groups, fofgroups /fofgroups /;}' man/man1/groups.1 >$(DESTDIR)$(PREFIX)/share/man/man1/fofgroups.1 && \
	  chmod 644 $(DESTDIR)$(PREFIX)/share/man/man1/fofgroups.1
	install -m 644 $(MAN3) $(DESTDIR)$(PREFIX)/share/man/man3
	install -m 644 $(MAN5) $(DESTDIR)$(PREFIX)/share/man/man5
	install -m 644 include/fofkit.h $(DESTDIR)$(PREFIX)/include
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)
	ln -sf $(notdir $(SHLIB)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	$(if $(MPILIB),install -m 755 $(MPILIB) $(DESTDIR)$(LIBDIR) && ln -sf $(notdir $(MPILIB)) $(DESTDIR)$(LIBDIR)/$(MPI_SONAME))
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libfofkit.so
	install -m 644 $(B)/libfofkit.a $(DESTDIR)$(LIBDIR)
	$(call pc_text,$(PREFIX),$(LIBDIR),$(PREFIX)/include) >$(DESTDIR)$(LIBDIR)/pkgconfig/fofkit.pc
	$(Q)if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v $(LDCONFIG) >/dev/null && \
	  $(LDCONFIG) -v -N 2>/dev/null | grep -q "^$(LIBDIR):"; then echo $(LDCONFIG); $(LDCONFIG); fi

uninstall: ## remove what install put in place, and the directories it made (when empty)
	$(Q)for f in $(DESTDIR)$(PREFIX)/bin/groups:fofgroups $(DESTDIR)$(PREFIX)/share/man/man1/groups.1:fofgroups.1; do \
	  [ "$$(readlink "$${f%:*}")" != "$${f#*:}" ] || rm -f "$${f%:*}"; done
	rm -f $(patsubst %,$(DESTDIR)$(PREFIX)/bin/%,$(filter-out groups,$(TOOLS))) $(DESTDIR)$(PREFIX)/bin/fofgroups $(patsubst man/%,$(DESTDIR)$(PREFIX)/share/man/%,$(filter-out %/groups.1,$(MAN1))) $(DESTDIR)$(PREFIX)/share/man/man1/fofgroups.1 $(MAN3:man/%=$(DESTDIR)$(PREFIX)/share/man/%) $(MAN5:man/%=$(DESTDIR)$(PREFIX)/share/man/%)
	rm -f $(DESTDIR)$(PREFIX)/include/fofkit.h $(DESTDIR)$(LIBDIR)/libfofkit.so* $(DESTDIR)$(LIBDIR)/libfofkit_mpi.so* $(DESTDIR)$(LIBDIR)/libfofkit.a $(DESTDIR)$(LIBDIR)/pkgconfig/fofkit.pc
	$(Q)made=$$(cat $(MADE_DIRS) 2>/dev/null); rm -f $(MADE_DIRS); \
	  for d in $$(printf '%s\n' $$made | awk '{ print length, $$0 }' | sort -rn | cut -d' ' -f2-); do \
	    rmdir "$$d" 2>/dev/null || true; done

clean: ## remove the build
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)
