#!/usr/bin/env bats
# library.bats - libfofkit's public calls (fofkit.h) on arrays in memory give the programs' groups and catalogue on mock universes and every real snapshot; the shared library exports fofkit_* only; make install puts a library pkg-config finds.

bats_require_minimum_version 1.5.0

DATA=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}
REPO=$BATS_TEST_DIRNAME/..

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    command -v fofarrays >/dev/null || skip "fofarrays is not built"
}

# same_groups NAME STREAM [LINK OPTIONS...]: the .grp of every level from fofarrays (the stream's
# arrays through fofkit_fof) equals groups --format=grp's after kdbuild | foflink, byte for byte.
same_groups() {
    local name=$1 stream=$2 levels=1 a k
    shift 2
    for a in "$@"; do
        case $a in *,*) levels=$(($(tr -cd , <<<"$a" | wc -c) + 1)) ;; esac
    done
    # fofkit_fof links every particle together: foflink --link-types=all (a stream with dark
    # matter and gas or stars is otherwise a hydro run, foflink(1))
    kdbuild --device=cpu "$stream" | foflink --device=cpu --link-types=all "$@" | groups -m 8 -o "$name.g" || return 1
    for ((k = 0; k < levels; k++)); do
        groups -m 8 --format=grp --level=$k "$name.g" -o "$name.$k.grp" || return 1
        fofarrays --device=cpu "$@" --level=$k "$stream" >"$name.$k.lib" || return 1
        cmp "$name.$k.grp" "$name.$k.lib" || return 1
        [ "$(sort -n "$name.$k.grp" | tail -1)" -gt 0 ] || { echo "$name: no group at level $k"; return 1; }
    done
}

@test "fofkit_fof on arrays: the programs' groups on a mock universe, 3D, 6D, levels, isolated, any threads" {
    mkuniverse -n 30000 -s 11 -o snap.std
    tipsy2bin snap.std -o s.fof
    same_groups b02 s.fof -b 0.2
    same_groups levels s.fof -b 0.2,0.1,0.05
    same_groups psi s.fof -b 0.2 --psi=0.5
    same_groups psirel s.fof -b 0.2,0.1 --psi-rel=1
    same_groups abs s.fof -l 0.01
    same_groups iso s.fof -l 0.01 --no-periodic
    fofarrays --device=cpu -j 1 -b 0.2 s.fof | cmp b02.0.grp -
    # the sink array: the lowest index of each particle's group, the same groups
    fofarrays --device=cpu -m 1 --sinks -b 0.2 s.fof >sinks.txt
    groups -m 1 --format=grp b02.g -o m1.grp
    paste -d ' ' <(tail -n +2 m1.grp) sinks.txt | awk '
        { g = $1; s = $2; i = NR - 1
          if (s > i) { print "sink " s " above particle " i; bad = 1 }
          if (g in low) { if (low[g] != s) { print "group " g " has sinks " low[g] " and " s; bad = 1 } }
          else { low[g] = s; if (s != i) { print "first member " i " of group " g " has sink " s; bad = 1 } } }
        END { exit bad }'
}

@test "fofkit_fof on arrays: the programs' groups on every real snapshot (skips without ../shared/data)" {
    [ -d "$DATA" ] || skip "no $DATA"
    local f ran=0
    for f in skid-dark lambs-30k test4-zoom; do
        [ -f "$DATA/$f.std" ] || continue
        # fofkit_fof's b is of every particle's spacing: foflink --spacing=all (the zoom's masses differ)
        tipsy2bin "$DATA/$f.std" -o "$f.fof" && same_groups "$f" "$f.fof" -b 0.2 --spacing=all
        ran=$((ran + 1))
    done
    if [ -f "$DATA/cube300-ics.std" ]; then
        tipsy2bin "$DATA/cube300-ics.std" -o cube.fof && same_groups cube cube.fof -l 0.02
        ran=$((ran + 1))
    fi
    for f in run581-dark-star run99-gas-dark-star onestar-pad1; do
        [ -f "$DATA/$f.std" ] || continue
        tipsy2bin --no-periodic "$DATA/$f.std" -o "$f.fof" && same_groups "$f" "$f.fof" -l 0.05
        ran=$((ran + 1))
    done
    if [ -f "$DATA/gadget2-lcdm-gas-ics.dat" ]; then
        gadget2bin --box=50000 -t dark "$DATA/gadget2-lcdm-gas-ics.dat" -o g2.fof && same_groups g2 g2.fof -l 1406.25
        ran=$((ran + 1))
    fi
    if [ -f "$DATA/g4-lcdm-gas-z0.hdf5" ] && ! hdf52bin -o /dev/null /nonexistent.hdf5 2>&1 | grep -q 'no HDF5 support'; then
        hdf52bin --types=dark "$DATA/g4-lcdm-gas-z0.hdf5" -o g4.fof && same_groups g4 g4.fof -b 0.2
        hdf52bin "$DATA/g4-lcdm-gas-z0.hdf5" -o g4all.fof && same_groups g4all g4all.fof -b 0.2,0.1
        ran=$((ran + 1))
    fi
    [ "$ran" -ge 9 ] || { echo "only $ran of the 10 snapshots were there"; ls "$DATA"; }
    [ "$ran" -gt 0 ]
}

# same_halos OPTIONS...: fofkit_halos on a grouped stream's arrays (its order and IDs) prints halostats'
# level-0 rows, byte for byte.
same_halos() {
    halostats "$@" grouped.fof | grep -v '^#' | awk '$1 == 0' >h.txt || return 1
    fofarrays --halos "$@" grouped.fof >l.txt || return 1
    [ -s h.txt ] && cmp h.txt l.txt
}

@test "fofkit_halos on arrays: halostats' catalogue, centres, SO masses and unbinding" {
    mkuniverse -n 30000 -s 12 | tipsy2bin | kdbuild | foflink -b 0.2 | groups -m 20 -o grouped.fof
    # the mock has no units: G given, 1 in its own (fofkit_halos' default)
    same_halos --G=1
    same_halos --G=1 --centre=com
    same_halos --G=1 --so --omega-m=0.3 --unbind
}

@test "libfofkit.so exports the calls of fofkit.h and nothing else, under a versioned soname" {
    local so=$FOFKIT_BUILD/libfofkit.so
    [ -n "$FOFKIT_BUILD" ] && [ -f "$so" ] || skip "no shared library (FOFKIT_BUILD unset)"
    command -v nm >/dev/null && command -v readelf >/dev/null || skip "no binutils"
    run bash -c "nm -D --defined-only '$so' | awk '\$2 ~ /[TDBR]/ { print \$3 }' | sed 's/@.*//' | sort -u"
    [ "$status" -eq 0 ]
    echo "$output"
    [[ "$output" == *fofkit_fof* ]] && [[ "$output" == *fofkit_halos* ]]
    ! grep -v '^fofkit_' <<<"$output"
    readelf -d "$so" | grep -q 'SONAME.*\[libfofkit\.so\.[0-9]*\]'
    # every call the header declares is exported
    for f in $(grep -o '\bfofkit_[a-z_]*(' "$REPO/include/fofkit.h" | tr -d '(' | sort -u); do
        [ "$f" = fofkit_fof_mpi ] || grep -qx "$f" <<<"$output" || { echo "$f is not exported"; return 1; }
    done
}

@test "make install puts fofkit.h, the libraries and fofkit.pc, and a program built with pkg-config runs" {
    [ -n "$FOFKIT_BUILD" ] || skip "FOFKIT_BUILD unset"
    command -v pkg-config >/dev/null || skip "no pkg-config"
    make -s -C "$REPO" B="$FOFKIT_BUILD" install PREFIX="$PWD/root" >install.log 2>&1 || { cat install.log; return 1; }
    [ -f root/include/fofkit.h ] && [ -f root/lib/libfofkit.a ] && [ -f root/share/man/man3/fofkit.3 ]
    [ -L root/lib/libfofkit.so ] && [ -f root/lib/libfofkit.so.0 ]
    export PKG_CONFIG_PATH=$PWD/root/lib/pkgconfig
    [ "$(pkg-config --modversion fofkit)" = "$(sed -n 's/^#define FOFKIT_VERSION_STRING "\(.*\)"/\1/p' root/include/fofkit.h)" ]
    cat >prog.c <<'EOF'
#include <fofkit.h>
#include <stdio.h>
int main(void)
{
    float pos[] = {0.1f, 0.1f, 0.1f, 0.11f, 0.1f, 0.1f, 0.5f, 0.5f, 0.5f};
    uint32_t group[3];
    fofkit_particles p;
    fofkit_fof_options o;
    fofkit_fof_result r;
    fofkit_error e;
    fofkit_particles_init(&p);
    fofkit_fof_options_init(&o);
    fofkit_fof_result_init(&r);
    p.n = 3, p.pos = pos, p.periodic = 1, p.box = 1;
    o.l[0] = 0.05, o.minsize = 1, o.device = FOFKIT_DEVICE_CPU;
    r.group[0] = group;
    if (fofkit_fof(&p, &o, &r, &e)) { fprintf(stderr, "%s\n", e.message); return 1; }
    printf("%s %u %u %u %llu\n", fofkit_version(), group[0], group[1], group[2], (unsigned long long)r.ngroups[0]);
    fofkit_fof_result_free(&r);
    return 0;
}
EOF
    cc prog.c $(pkg-config --cflags --libs fofkit) -Wl,-rpath,"$PWD/root/lib" -o prog
    run ./prog
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = "$(pkg-config --modversion fofkit) 1 1 2 2" ]
    make -s -C "$REPO" B="$FOFKIT_BUILD" uninstall PREFIX="$PWD/root" >/dev/null
    [ ! -e root/include/fofkit.h ] && [ ! -e root/lib/libfofkit.so ] && [ ! -e root/lib/pkgconfig/fofkit.pc ]
}

@test "the example fofkit-gpu-arrays: groups of GPU arrays, or of the host's without a GPU, the same as the CPU's" {
    command -v fofkit-gpu-arrays >/dev/null || skip "the examples are not built"
    run fofkit-gpu-arrays 50000
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ ^50000\ particles,\ l\ =\ 0\.0054[0-9]*:\ 50\ groups ]]
    [[ "${lines[1]}" =~ ^group\ 1:\ [0-9]+\ members$ ]]
    [[ "$output" == *"the GPU arrays were not tried"* ]] || [[ "$output" == *"GPU arrays: 50 groups on the GPU"*"the same groups"* ]]
}

@test "fofkit_fof_mpi: each rank's arrays, the partition of one process on 1 to 4 ranks, levels and 6D, any communicator" {
    load mpi_helpers
    command -v fofmpi >/dev/null || skip "fofmpi is not built"
    mpi_probe
    need_mpi fofmpi
    mkuniverse -n 20000 -s 13 | tipsy2bin -o s.fof
    local R k
    for args in "-b 0.2,0.1" "-b 0.2 --psi=0.5"; do
        fofarrays --device=cpu -m 1 --sinks $args s.fof >one.0
        fofarrays --device=cpu -m 1 --sinks --level=1 $args s.fof >one.1 2>/dev/null || true
        for R in 1 2 4; do
            rm -f out.*
            run mpirun -n $R fofmpi --device=cpu $args s.fof out
            echo "$output"
            [ "$status" -eq 0 ]
            [[ "${lines[-1]}" =~ ^$R\ ranks,\ [0-9]+\ groups ]]
            for ((k = 0; k < 2; k++)); do
                [ -f out.0.$k ] || continue
                cat $(for ((q = 0; q < R; q++)); do echo out.$q.$k; done) | cmp - one.$k
            done
        done
    done
    # two communicators, the even and the odd ranks of 4, link the stream side by side: each the
    # partition of one process
    rm -f out.*
    run mpirun -n 4 fofmpi --device=cpu --split-comm -b 0.2 s.fof out
    echo "$output"
    [ "$status" -eq 0 ]
    fofarrays --device=cpu -m 1 --sinks -b 0.2 s.fof >one.0
    cat out.0.0 out.2.0 | cmp - one.0
    cat out.1.0 out.3.0 | cmp - one.0
}

@test "the example gadget4_halos.py: the Gadget-4 snapshot's halos from Python, its groups those of groups(1)" {
    local g4=$DATA/g4-lcdm-gas-z0.hdf5
    [ -f "$g4" ] || skip "no $g4"
    [ -n "$FOFKIT_BUILD" ] && [ -f "$FOFKIT_BUILD/libfofkit.so" ] || skip "no library build (FOFKIT_BUILD unset)"
    ! ldd "$FOFKIT_BUILD/libfofkit.so" | grep -q libasan || skip "an ASan build (python3 is not instrumented)"
    python3 -c 'import numpy, h5py' 2>/dev/null || skip "no numpy or h5py"
    run env FOFKIT_LIB="$FOFKIT_BUILD/libfofkit.so" python3 "$REPO/examples/gadget4_halos.py" "$g4"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "g4-lcdm-gas-z0.hdf5: 32768 dark matter particles in a box of 50000 kpc/h, a = 1.000" ]
    # the groups of the programs on the same particles (hdf52bin keeps the file's order)
    if ! hdf52bin -o /dev/null /nonexistent.hdf5 2>&1 | grep -q 'no HDF5 support'; then
        hdf52bin --types=dark "$g4" | kdbuild | foflink -b 0.2 | groups -m 8 -o g.fof
        [ "${lines[1]}" = "$(fofdump -c GRPS g.fof | awk '$1 == "ngroups" { g = $2 } $1 == "ngrouped" { p = $2 }
                              END { print g " groups of at least 8 particles, " p " particles in them" }')" ]
    fi
    [[ "${lines[3]}" =~ ^\ +1\ +[0-9]+\ + ]]
    [ "${#lines[@]}" -eq 13 ]
}
