#!/usr/bin/env bats
# mkuniverse.bats - mkuniverse(1): valid tipsy of exactly N particles, reproducibility, the documented halo catalogue.

bats_require_minimum_version 1.5.0
load tipsy_helpers

# The halo lines of a catalogue (no comments).
halos() {
    grep -v '^#' "$1"
}

@test "--help prints the usage with every option on stdout" {
    run --separate-stderr mkuniverse --help
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "Usage: mkuniverse [OPTION]..." ]
    for o in --particles=N --seed=S --halo-fraction=F --min-halo=N --max-halo=N --big-halo=N --big-halo-c=C \
        --big-halo-radius=R --big-halo-centre=X,Y,Z --gas[=F] --tile=K --native --catalog=FILE \
        --output=FILE --force --verbose --help --version; do
        [[ "$output" == *"$o"* ]] || { echo "missing $o"; return 1; }
    done
    [[ "$output" == *"(default 1Mi = 1048576; at most 2^31 - 1)"* ]]
    [ -z "$stderr" ]
}

@test "--version names the program and the release" {
    run mkuniverse --version
    [ "$status" -eq 0 ]
    [[ "$output" =~ ^mkuniverse\ \(fofkit\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "usage errors: one message, a pointer to --help, status 2" {
    run -2 mkuniverse --bogus
    [ "${lines[0]}" = "mkuniverse: unknown option '--bogus'" ]
    [ "${lines[1]}" = "Try 'mkuniverse --help' for more information." ]
    [ "${#lines[@]}" -eq 2 ]
    run -2 mkuniverse -z
    [ "${lines[0]}" = "mkuniverse: unknown option '-z'" ]
    run -2 mkuniverse -n
    [ "${lines[0]}" = "mkuniverse: option '-n' needs a value" ]
    run -2 mkuniverse -n 0
    [ "${lines[0]}" = "mkuniverse: option -n: 0 is out of range [1, 2147483647]" ]
    run -2 mkuniverse -n 2Gi
    [ "${lines[0]}" = "mkuniverse: option -n: 2Gi is out of range [1, 2147483647]" ]
    run -2 mkuniverse -n 12x
    [ "${lines[0]}" = "mkuniverse: option -n needs a count (digits, then k, M, G, Ki, Mi or Gi), not '12x'" ]
    run -2 mkuniverse -n -5
    [ "${lines[0]}" = "mkuniverse: option -n needs a count, not '-5'" ]
    run -2 mkuniverse -s 99999999999999999999999
    [ "${lines[0]}" = "mkuniverse: option --seed: 99999999999999999999999 is out of range [0, 18446744073709551615]" ]
    run -2 mkuniverse --halo-fraction=1.5
    [ "${lines[0]}" = "mkuniverse: option --halo-fraction: 1.5 is out of range (it must be from 0 to 1)" ]
    run -2 mkuniverse -n 1000 --big-halo=2k
    [ "${lines[0]}" = "mkuniverse: option --big-halo: 2000 is more than the 1000 particles" ]
    run -2 mkuniverse --max-halo=10
    [ "${lines[0]}" = "mkuniverse: option --max-halo: 10 is below the smallest halo (32)" ]
    run -2 mkuniverse --catalog=
    [ "${lines[0]}" = "mkuniverse: option --catalog needs a file name, not ''" ]
    run -2 mkuniverse out.std
    [ "${lines[0]}" = "mkuniverse: unexpected argument 'out.std' (mkuniverse reads no input)" ]
    run -2 mkuniverse -n 1Mi --tile=3
    [ "${lines[0]}" = "mkuniverse: option --tile=3: the 1048576 particles are not a multiple of 27 copies" ]
    run -2 mkuniverse -n 64 --tile=17
    [ "${lines[0]}" = "mkuniverse: option --tile: 17 is out of range [1, 16]" ]
    run -2 mkuniverse -n 64 --tile=0
    [ "${lines[0]}" = "mkuniverse: option --tile: 0 is out of range [1, 16]" ]
    run -2 mkuniverse -n 64 --tile=2 --catalog=c.txt
    [ "${lines[0]}" = "mkuniverse: options --tile and --catalog: the catalogue of a tiled box is not written" ]
    [ ! -e c.txt ]
}

@test "refuses to write binary data to a terminal" {
    command -v script >/dev/null || skip "no script(1) to make a terminal"
    run script -qec "mkuniverse -n 100" /dev/null
    [ "$status" -eq 1 ] || skip "no pseudo-terminal here (script failed: $output)"
    [ "$(printf '%s' "$output" | tr -d '\r')" = "mkuniverse: stdout: refusing to write binary data to a terminal (use -o FILE or redirect)" ]
}

@test "a valid standard tipsy file of exactly N dark particles, all inside the box" {
    mkuniverse -n 20000 -o u.std
    [ "$(stat -c %s u.std)" -eq $((32 + 36 * 20000)) ]
    [ "$(tipsy_header u.std)" = "1 20000 3 0 20000 0 0" ]
    tipsy2bin -o u.bin u.std
    [ "$(snap_key u.bin n)" = 20000 ]
    [ "$(snap_key u.bin ndark)" = 20000 ]
    [ "$(chunk u.bin MASS | sort -u)" = "4.99999987e-05" ]
    run tipsy_dark_positions u.std
    [ "${#lines[@]}" -eq 20000 ]
    [ "$(printf '%s\n' "${lines[@]}" | awk '{ for (i = 1; i <= 3; i++) if (!($i >= -0.5 && $i < 0.5)) bad++ } END { print bad + 0 }')" = 0 ]
    # stdout works too, and gives the same bytes
    mkuniverse -n 20000 >v.std
    cmp u.std v.std
    # a single particle
    mkuniverse -n 1 -o one.std
    [ "$(tipsy_header one.std)" = "1 1 3 0 1 0 0" ]
}

@test "the same seed gives the same bytes, whatever the thread count; another seed another universe" {
    OMP_NUM_THREADS=1 mkuniverse -n 30000 -s 5 -o a.std
    OMP_NUM_THREADS=2 mkuniverse -n 30000 --seed=5 -o b.std
    cmp a.std b.std
    OMP_NUM_THREADS=3 mkuniverse -n 30000 -s 5 -o c.std
    cmp a.std c.std
    mkuniverse -n 30000 -s 6 -o d.std
    ! cmp -s a.std d.std
    # the header is the same; the positions differ nearly everywhere
    [ "$(tipsy_header a.std)" = "$(tipsy_header d.std)" ]
    [ "$(paste -d' ' <(tipsy_dark_positions a.std) <(tipsy_dark_positions d.std) | awk '$1 == $4' | wc -l)" -lt 100 ]
    # the default seed is documented and fixed
    mkuniverse -n 30000 -o e.std
    mkuniverse -n 30000 -s 20240611 -o f.std
    cmp e.std f.std
}

@test "--native writes the byte-swapped twin of the standard file" {
    mkuniverse -n 5000 -o s.std
    mkuniverse -n 5000 --native -o n.std
    swap_tipsy s.std swapped.std
    cmp n.std swapped.std
    [ "$(tipsy_header n.std native)" = "1 5000 3 0 5000 0 0" ]
}

@test "the catalogue: sizes as documented, and the particles where it says" {
    mkuniverse -n 1Mi --catalog=big.cat -o big.std
    [ "$(head -n 1 big.cat)" = "# mkuniverse halo catalogue: n 1048576 seed 20240611 halos 1411 background 471888" ]
    [ "$(halos big.cat | wc -l)" -eq 1411 ]
    # the documented largest halo; sizes decreasing from there to 32, contiguous in the file
    [ "$(halos big.cat | head -n 1 | awk '{print $1, $2, $3}')" = "0 0 110354" ]
    halos big.cat | awk 'NR > 1 && ($3 > prev || $2 != end) { bad++ } { prev = $3; end = $2 + $3 }
        $3 < 32 { bad++ } END { exit bad > 0 }'
    [ "$(halos big.cat | tail -n 1 | awk '{print $3}')" = 32 ]
    # 55% of the particles in halos, the rest background
    [ "$(halos big.cat | awk '{ s += $3 } END { print s + 471888 }')" = 1048576 ]
    halos big.cat | awk '{ s += $3 } END { exit !(s > 0.549 * 1048576 && s <= 0.55 * 1048576) }'
    # dN/dM ~ M^-1.9: ten times the mass, about 10^0.9 = 7.9 times fewer halos
    halos big.cat | awk '$3 >= 100 { a++ } $3 >= 1000 { b++ } $3 >= 10000 { c++ }
        END { print a, b, c; exit !(a / b > 6.5 && a / b < 9.5 && b / c > 6 && b / c < 10) }'
    # concentration and r200 as documented
    halos big.cat | awk 'function clamp(c) { return c < 3 ? 3 : c > 20 ? 20 : c }
        { m = $3 / 1048576; r = (3 * m / (800 * 3.14159265358979)) ^ (1 / 3); c = clamp(7 * (m / 1e-3) ^ -0.1)
          if ((r - $5) ^ 2 > (1e-6 * r) ^ 2 || (c - $6) ^ 2 > (1e-4 * c) ^ 2) bad++ } END { exit bad > 0 }'
    rm big.std

    # in a small universe, read the particles themselves: every particle of the three
    # largest halos within r200 of its centre, and the inner part dense
    mkuniverse -n 20000 --catalog=small.cat -o small.std
    tipsy_dark_positions small.std >pos.txt
    halos small.cat | head -n 3 >top.txt
    awk 'NR == FNR { first[NR] = $2; np[NR] = $3; r[NR] = $5; c[NR] = $6; x[NR] = $7; y[NR] = $8; z[NR] = $9; next }
        function d(a, b) { a -= b; a -= int(a + (a >= 0 ? 0.5 : -0.5)); return a }
        { i = FNR - 1
          for (h = 1; h <= 3; h++) {
              if (i < first[h] || i >= first[h] + np[h]) continue
              dist = sqrt(d($1, x[h]) ^ 2 + d($2, y[h]) ^ 2 + d($3, z[h]) ^ 2)
              if (dist > r[h] * 1.000001) out++
              if (dist < r[h] / c[h]) inner[h]++ } }
        END { for (h = 1; h <= 3; h++) {
                  cc = c[h]; frac = (log(2) - 0.5) / (log(1 + cc) - cc / (1 + cc))
                  print h, np[h], inner[h], frac * np[h]
                  if ((inner[h] - frac * np[h]) ^ 2 > 25 * frac * np[h]) bad++ }
              exit out > 0 || bad > 0 }' top.txt pos.txt
}

@test "--big-halo puts one dense halo first; -v describes the universe" {
    run --separate-stderr mkuniverse -v -n 50k --big-halo=10k --catalog=c.cat -o u.std
    [ "$status" -eq 0 ]
    [[ "$stderr" =~ ^mkuniverse:\ 50000\ particles\ \(standard\ tipsy,\ seed\ 20240611\):\ [0-9]+\ halos\ of\ 32\ to\ [0-9]+\ particles,\ [0-9]+\ in\ all\;\ big\ halo\ 10000\;\ background\ [0-9]+\;\ generated\ in\ [0-9.]+\ s,\ [0-9.]+\ s\ in\ all\ \(.*\ particles/s\)$ ]]
    [ "$(halos c.cat | head -n 1 | awk '{print $1, $2, $3, $6}')" = "0 0 10000 15" ]
    [ "$(halos c.cat | sed -n 2p | awk '{print $2}')" = 10000 ]
    # without -v, quiet
    run --separate-stderr mkuniverse -n 100 -o q.std
    [ -z "$stderr" ]
    # the smallest universes are all background
    mkuniverse -n 100 --catalog=none.cat -o none.std
    [ "$(halos none.cat | wc -l)" -eq 0 ]
    [ "$(head -n 1 none.cat)" = "# mkuniverse halo catalogue: n 100 seed 20240611 halos 0 background 100" ]
}

@test "--big-halo-c, --big-halo-radius and --big-halo-centre shape the big halo; its particles lie within that radius of that centre, across the periodic boundary" {
    mkuniverse -n 50k --big-halo=10k --big-halo-c=10 --big-halo-radius=0.04 --big-halo-centre=-0.5,-0.5,0.25 --catalog=c.cat -o u.std
    [ "$(halos c.cat | head -n 1 | awk '{print $1, $3, $5, $6, $7, $8, $9}')" = "0 10000 0.04 10 -0.5 -0.5 0.25" ]
    # the first 10000 particles: within 0.04 of the centre, the corner's images included; some on each side
    tipsy2bin u.std | fofdump -c POS | awk 'NR > 10000 { exit }
        { dx = $1 + 0.5; dy = $2 + 0.5; dz = $3 - 0.25
          if (dx > 0.5) dx -= 1; if (dy > 0.5) dy -= 1
          if (dx * dx + dy * dy + dz * dz > 0.04 * 0.04 * (1 + 1e-5)) out++
          if ($1 > 0) high++ }
        END { exit out > 0 || high < 1000 || high > 9000 }'
    # the same universe but for the big halo's shape: the rest is the default big halo's
    mkuniverse -n 50k --big-halo=10k --catalog=d.cat -o d.std
    [ "$(halos d.cat | head -n 1 | awk '{print $6}')" = 15 ]
    [ "$(halos c.cat | sed 1d | md5sum)" = "$(halos d.cat | sed 1d | md5sum)" ]
    run -2 mkuniverse -n 100 --big-halo-c=3
    [ "${lines[0]}" = "mkuniverse: options --big-halo-c, --big-halo-radius and --big-halo-centre shape the halo of --big-halo, which is not given" ]
    run -2 mkuniverse -n 100 --big-halo=10 --big-halo-centre=0.5,0,0
    [ "${lines[0]}" = "mkuniverse: option --big-halo-centre: 0.5,0,0 is outside the box [-0.5, 0.5)" ]
    run -2 mkuniverse -n 100 --big-halo=10 --big-halo-centre=0,0
    [ "${lines[0]}" = "mkuniverse: option --big-halo-centre needs three numbers X,Y,Z, not '0,0'" ]
    run -2 mkuniverse -n 100 --big-halo=10 --big-halo-radius=0.6
    [[ "${lines[0]}" == "mkuniverse: option --big-halo-radius: 0.6 is out of range"* ]]
}

@test "--halo-fraction, --min-halo and --max-halo shape the catalogue" {
    mkuniverse -n 100k --halo-fraction=0 --catalog=a.cat -o a.std
    [ "$(halos a.cat | wc -l)" -eq 0 ]
    mkuniverse -n 100k --halo-fraction=1 --min-halo=100 --max-halo=5000 --catalog=b.cat -o b.std
    halos b.cat | awk '$3 < 100 || $3 > 5000 { bad++ } { s += $3 } END { exit bad > 0 || s < 99000 }'
}

@test "a write error is reported, and no file is left half-written" {
    [ -w /dev/full ] || skip "no /dev/full"
    run -1 --separate-stderr mkuniverse -n 100k -o /dev/full/x.std
    [[ "$stderr" == "mkuniverse: /dev/full/x.std: cannot create: "* ]]
    run -1 --separate-stderr bash -c 'mkuniverse -n 100k >/dev/full'
    [ "$stderr" = "mkuniverse: stdout: cannot write: No space left on device" ]
}

# Every particle of a standard tipsy FILE (gas, dark or star), "mass x y z vx vy vz" a line (%.9g),
# in file order, read with perl from the layout in tipsy.h.
tipsy_particles() {
    perl -e '
        open(my $fh, "<:raw", $ARGV[0]) or die;
        local $/;
        my $d = <$fh>;
        my (undef, $n, undef, @nt) = unpack("d> N5", $d);
        my ($off, @words) = (32, 12, 9, 11);
        for my $t (0 .. 2) {
            for (1 .. $nt[$t]) {
                my @v = unpack("f>7", substr($d, $off, 28));
                print join(" ", map { sprintf("%.9g", $_) } @v), "\n";
                $off += 4 * $words[$t];
            }
        }
        die "size\n" unless $off == length $d;' "$1"
}

@test "--gas: a gas particle beside each dark one, gas first, masses F/N and (1-F)/N; the dark matter where it was" {
    mkuniverse -n 20000 -o d.std
    mkuniverse -n 20000 --gas --catalog=g.cat -o g.std
    [ "$(stat -c %s g.std)" -eq $((32 + 48 * 20000 + 36 * 20000)) ]
    [ "$(tipsy_header g.std)" = "1 40000 3 20000 20000 0 0" ]
    [ "$(head -n 1 g.cat)" = "# mkuniverse halo catalogue: n 20000 seed 20240611 halos 58 background 9184 gas 0.133333333" ]
    tipsy_particles g.std >g.txt
    tipsy_particles d.std >d.txt
    [ "$(wc -l <g.txt)" -eq 40000 ]
    # the dark matter: the same positions and velocities as without gas, of mass (1 - 0.04/0.3)/N
    [ "$(tail -n 20000 g.txt | cut -d' ' -f2- | md5sum)" = "$(cut -d' ' -f2- d.txt | md5sum)" ]
    [ "$(tail -n 20000 g.txt | cut -d' ' -f1 | sort -u)" = 4.33333335e-05 ]
    [ "$(head -n 20000 g.txt | cut -d' ' -f1 | sort -u)" = 6.66666665e-06 ]
    # gas particle i: dark particle i's velocity, its position moved by a Gaussian of
    # 0.05 N^(-1/3) = 0.00184202 per component (minimum image), inside the box
    paste -d' ' <(head -n 20000 g.txt) d.txt | awk -v s=0.00184202 '
        function img(x) { return x - (x > 0.5) + (x < -0.5) }
        { for (k = 2; k <= 4; k++) { dx = img($k - $(k + 7)); sum += dx * dx; n++; if (dx * dx > 36 * s * s) far++
                                     if (!($k >= -0.5 && $k < 0.5)) out++ }
          for (k = 5; k <= 7; k++) if ($k != $(k + 7)) vel++ }
        END { rms = sqrt(sum / n); print rms, far + 0, out + 0, vel + 0
              exit !(rms > 0.98 * s && rms < 1.02 * s && far == 0 && out == 0 && vel == 0) }'
    # tipsy2bin: both types; the total mass 1
    tipsy2bin g.std -o g.bin
    [ "$(snap_key g.bin ngas) $(snap_key g.bin ndark)" = "20000 20000" ]
    chunk g.bin MASS | awk '{ s += $1 } END { exit !(s > 0.99999 && s < 1.00001) }'
}

@test "--gas=F sets the gas's share; the same bytes whatever the thread count; F within (0, 1)" {
    OMP_NUM_THREADS=1 mkuniverse -n 30000 --gas=0.2 -s 5 --big-halo=5k -o a.std
    OMP_NUM_THREADS=3 mkuniverse -n 30000 --gas=0.2 -s 5 --big-halo=5k -o b.std
    cmp a.std b.std
    [ "$(tipsy_particles a.std | cut -d' ' -f1 | uniq -c | awk '{ print $1, $2 }' | tr '\n' ' ')" = "30000 6.66666665e-06 30000 2.66666666e-05 " ]
    # another seed moves the gas too
    mkuniverse -n 30000 --gas=0.2 -s 6 --big-halo=5k -o c.std
    [ "$(tipsy_particles a.std | head -n 30000 | md5sum)" != "$(tipsy_particles c.std | head -n 30000 | md5sum)" ]
    # -v counts the gas
    run --separate-stderr mkuniverse -v -n 1000 --gas -o v.std
    [[ "$stderr" == *"; and 1000 gas particles, 0.133333 of the mass; generated in "* ]]
    run -2 mkuniverse --gas=0
    [ "${lines[0]}" = "mkuniverse: option --gas: the gas's share F must be above 0 and below 1, not 0" ]
    run -2 mkuniverse --gas=1
    [ "${lines[0]}" = "mkuniverse: option --gas: the gas's share F must be above 0 and below 1, not 1" ]
    run -2 mkuniverse --gas=x
    [[ "${lines[0]}" == "mkuniverse: option --gas"*"'x'"* ]]
}

# A tiled .grp against the tile's: every group of the tiled box is one group of the tile, of the
# same size (its members that group's particles, in whichever copies), and each group of the
# tile is found K^3 times; the ungrouped the same particles in every copy.
same_copies() {
    python3 - "$1" "$2" "$3" <<'PY'
import sys
import numpy as np
tile = np.loadtxt(sys.argv[1], dtype=np.int64)[1:]
tiled = np.loadtxt(sys.argv[2], dtype=np.int64)[1:]
k = int(sys.argv[3])
m = len(tile)
assert len(tiled) == k * m, (len(tiled), k, m)
mine = np.tile(tile, k)
assert np.array_equal(mine == 0, tiled == 0), "grouped differently"
g = tiled[tiled > 0]
t = mine[tiled > 0]
order = np.argsort(g, kind="stable")
g, t = g[order], t[order]
starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
sizes = np.diff(np.r_[starts, len(g)])
first = t[starts]
assert all((t[s:s + n] == f).all() for s, n, f in zip(starts, sizes, first)), "a group of two of the tile's"
tsize = np.bincount(tile)
assert (sizes == tsize[first]).all(), "a group of another size"
assert (np.bincount(first, minlength=len(tsize))[1:] == k).all(), "a group of the tile not found K^3 times"
PY
}

@test "--tile=K: K^3 exact copies; linking at l/K finds each group of --tile=1 at l in every copy" {
    mkuniverse -n 4000 -s 7 --tile=1 -o one.std
    mkuniverse -n 32000 -s 7 --tile=2 -o two.std
    mkuniverse -n 108000 -s 7 --tile=3 -v -o three.std 2>err
    grep -q "27 copies of a box of 4000 particles, 3 a side" err
    [ "$(tipsy_header two.std)" = "1 32000 3 0 32000 0 0" ]
    tipsy2bin one.std | kdbuild | foflink -l 0.03 | groups -v -m 8 --format=grp -o one.grp 2>e1
    tipsy2bin two.std | kdbuild | foflink -l 0.015 | groups -v -m 8 --format=grp -o two.grp 2>e2
    tipsy2bin three.std | kdbuild | foflink -l 0.01 | groups -v -m 8 --format=grp -o three.grp 2>e3
    g=$(sed -n 's/.* \([0-9]*\) groups found, \([0-9]*\) kept.*/\1 \2/p' e1)
    [ "$(sed -n 's/.* \([0-9]*\) groups found, \([0-9]*\) kept.*/\1 \2/p' e2)" = "$((${g% *} * 8)) $((${g#* } * 8))" ]
    [ "$(sed -n 's/.* \([0-9]*\) groups found, \([0-9]*\) kept.*/\1 \2/p' e3)" = "$((${g% *} * 27)) $((${g#* } * 27))" ]
    [ "${g#* }" -gt 5 ]
    same_copies one.grp two.grp 8
    same_copies one.grp three.grp 27
    # copy 1 of two.std is (x + 1.5) / 2 - 0.5, (y + 0.5) / 2 - 0.5, (z + 0.5) / 2 - 0.5 of one.std's, exactly
    python3 - <<'PY'
import numpy as np
rec = np.dtype([("m", ">f4"), ("p", ">f4", 3), ("v", ">f4", 3), ("eps", ">f4"), ("phi", ">f4")])
one = np.fromfile("one.std", dtype=rec, offset=32)["p"].astype(np.float64)
two = np.fromfile("two.std", dtype=rec, offset=32)["p"]
want = ((one + 0.5 + np.array([1, 0, 0])) / 2 - 0.5).astype(np.float32)
assert np.array_equal(two[4000:8000], want), "copy 1 is not the tile moved"
assert np.array_equal(two[:4000], ((one + 0.5) / 2 - 0.5).astype(np.float32)), "copy 0 is not the tile"
PY
}
