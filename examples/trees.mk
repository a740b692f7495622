# trees.mk - merger trees from a directory of snapshots with make -j: each snapshot through the pipeline to its halo catalogue (in parallel), then halotree over the series.
#
# Usage: make -f trees.mk SNAPS=DIR [OUT=DIR] [B=0.2] [MINN=20] [TYPES=dark] [HALOSTATS=...] [HALOTREE=...] -j N
#   SNAPS      the snapshots, single-file Gadget-4 HDF5 named snapshot_NNN.hdf5 (default snapshots)
#   OUT        where cat_NNN.hdf5 (one catalogue a snapshot) and tree_0_0_0.dat go (default trees)
#   B, MINN    foflink's -b and the groups' least members, halostats -m (defaults 0.2 and 20)
#   TYPES      the particle types linked (hdf52bin -t; default dark)
#   HALOSTATS  more halostats options (e.g. --so, or --unbind and HALOTREE=--subhalos)
#   HALOTREE   halotree's options (e.g. --skip=2)
#   BIN        the directory of the fofkit programs, with a trailing / (default: found on PATH)
# make -j N runs N snapshots' pipelines at once (each stage of a pipeline runs on every core
# as well); the tree waits for every catalogue. A catalogue is remade only when its snapshot
# is newer, and a failed stage leaves no catalogue behind (halostats writes atomically, and the
# pipeline's status is its first failure's).
#
# On the Gadget-4 series of the tests: make -f examples/trees.mk SNAPS=../shared/data/g4-lcdm-series -j 2

# Each is taken from make's command line only: a variable of the same name in the environment
# (B, OUT and BIN are common ones: a build directory, an output folder) is not taken for it.
vars := SNAPS=snapshots OUT=trees B=0.2 MINN=20 TYPES=dark HALOSTATS= HALOTREE= BIN=
$(foreach v,$(vars),$(if $(filter command line,$(origin $(firstword $(subst =, ,$(v))))),,\
    $(eval $(firstword $(subst =, ,$(v))) := $(word 2,$(subst =, ,$(v))))))

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
.DELETE_ON_ERROR:

snapshots := $(sort $(wildcard $(SNAPS)/snapshot_*.hdf5))
catalogues := $(patsubst $(SNAPS)/snapshot_%.hdf5,$(OUT)/cat_%.hdf5,$(snapshots))

ifeq ($(snapshots),)
$(error no $(SNAPS)/snapshot_*.hdf5: name the directory of the snapshots with SNAPS=DIR)
endif

.PHONY: all catalogues
all: $(OUT)/tree_0_0_0.dat

catalogues: $(catalogues)

$(OUT):
	mkdir -p $@

$(OUT)/cat_%.hdf5: $(SNAPS)/snapshot_%.hdf5 | $(OUT)
	$(BIN)hdf52bin -t $(TYPES) $< | $(BIN)kdbuild | $(BIN)foflink -b $(B) | $(BIN)halostats -m $(MINN) $(HALOSTATS) --format=hdf5 -o $@

$(OUT)/tree_0_0_0.dat: $(catalogues)
	$(BIN)halotree $(HALOTREE) -o $@ $^
