# groups_helpers.bash - shared by groups.bats and halostats.bats: a chunk lister, hand-made inputs, an awk FoF reference.

# Every test runs in its own scratch directory.
setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
}

# Runs PROG ARGS... expecting status 1 and exactly MESSAGE on stderr (stdout may hold
# the part of a stream passed through before the failure).
fails() {
    local prog=$1 msg=$2
    shift 2
    run -1 --separate-stderr "$prog" "$@"
    echo "stderr: $stderr"
    [ "$stderr" = "$msg" ]
}

# What every fofkit program does with --help, --version and an unknown option.
standard_options() {
    local prog=$1
    run --separate-stderr "$prog" --help
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "Usage: $prog [OPTION]... [STREAM]" ]
    [ -z "$stderr" ]
    run "$prog" --version
    [ "$status" -eq 0 ]
    [[ "$output" =~ ^$prog\ \(fofkit\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
    run -2 "$prog" --bogus
    [ "${lines[0]}" = "$prog: unknown option '--bogus'" ]
    [ "${lines[1]}" = "Try '$prog --help' for more information." ]
    [ "${#lines[@]}" -eq 2 ]
}

# Lists the chunks of a stream file, one a line: OFFSET TAG DTYPE FLAGS ROWS LEVEL STORED
# (read with od from the layout of stream.h, independently of the library).
chunks() {
    local f=$1 off=64 size tag dtype flags rows level stored
    size=$(stat -c %s "$f")
    while [ "$off" -lt "$size" ]; do
        tag=$(head -c $((off + 8)) "$f" | tail -c 8 | tr -d '\0')
        dtype=$(head -c $((off + 12)) "$f" | tail -c 4 | tr -d '\0')
        flags=$(od -An -tu4 -j $((off + 12)) -N4 "$f" | tr -d ' ')
        rows=$(od -An -tu8 -j $((off + 16)) -N8 "$f" | tr -d ' ')
        level=$(od -An -tu4 -j $((off + 28)) -N4 "$f" | tr -d ' ')
        stored=$(od -An -tu8 -j $((off + 32)) -N8 "$f" | tr -d ' ')
        echo "$off $tag $dtype $flags $rows $level $stored"
        off=$((off + 64 + (stored + 63) / 64 * 64))
    done
}

# The payload of the first chunk TAG (uncompressed, <u4) of FILE: one value a line.
u32_payload() {
    local f=$1 tag=$2 line off rows
    line=$(chunks "$f" | awk -v t="$tag" '$2 == t { print; exit }')
    [ -n "$line" ] || return 1
    read -r off _ _ _ rows _ <<<"$line"
    od -An -tu4 -v -j $((off + 64)) -N $((rows * 4)) "$f" | tr -s ' ' '\n' | sed '/^$/d'
}

# The payload of the first text chunk TAG of FILE (uncompressed).
text_payload() {
    local f=$1 tag=$2 line off stored
    line=$(chunks "$f" | awk -v t="$tag" '$2 == t { print; exit }')
    [ -n "$line" ] || return 1
    read -r off _ _ _ _ _ stored <<<"$line"
    tail -c +$((off + 65)) "$f" | head -c "$stored"
}

# Overwrites one byte of FILE at OFFSET with its complement.
flip_byte() {
    local f=$1 off=$2 b
    b=$(od -An -tu1 -j "$off" -N1 "$f" | tr -d ' ')
    printf "$(printf '\\%03o' $((255 - b)))" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none
}

# Nine particles in five groups given by non-canonical chains: {0,3,4} (sink 4), {1,5}
# (sink 5), {2,7} (sink 7), {6}, {8}; original indices shuffled among 13 source
# particles. With -m 2 the GID rows (original order) are 0 2 1 3 0 3 0 1 1 0 0 2 0:
# the pair {2,7} (lowest ID 1) is group 2, the pair {1,5} (lowest ID 3) group 3.
nine() {
    cat <<'EOF'
box 1
origin 0
periodic 1
nsource 13
p 0.125 0.125 0.125  1 0 0  1 1 7
p 0.5   0.5   0.5    0 1 0  1 1 3
p 0.75  0.25  0.5    0 0 1  1 1 11
p 0.25  0.125 0.125  1 0 0  1 1 2
p 0.125 0.25  0.125  1 0 0  2 1 8
p 0.5   0.5   0.625  0 1 0  1 1 5
p 0.875 0.875 0.875  0 0 0  1 1 0
p 0.75  0.25  0.625  0 0 1  1 1 1
p 0.375 0.875 0.125  0 0 0  1 1 12
sink 3 5 7 4 4 5 6 7 8
EOF
}
NINE_GID="0 2 1 3 0 3 0 1 1 0 0 2 0"

# A mkstream description of 34 clustered particles in the periodic box [-0.5, 0.5)^3:
# clusters of 9, 7, 5, 5, 3 and 2 members within 0.0045 of their centres on every axis
# (some straddling the boundary), 0.1 or more apart, and 3 strays far from everything;
# coordinates are multiples of 2^-12 (exact in binary32 and in the text), stream order
# and original indices permutations of the input order.
clusters() {
    awk 'BEGIN {
        srand(20261122)
        split("-0.497 0.2 0.3 7|0.25 0.25 0.25 5|-0.2 -0.499 0.1 5|0.1 0.1 -0.4 9|0.498 -0.3 0.498 3|0 0.4 -0.1 2", c, "|")
        n = 0
        for (k = 1; k in c; k++) {
            split(c[k], f, " ")
            for (m = 0; m < f[4]; m++) { for (a = 1; a <= 3; a++) X[n, a] = f[a] + (rand() - 0.5) * 0.009; n++ }
        }
        split("-0.3 -0.3 -0.3|0.35 -0.15 0.2|-0.1 0.05 0.45", s, "|")
        for (k = 1; k in s; k++) { split(s[k], f, " "); for (a = 1; a <= 3; a++) X[n, a] = f[a]; n++ }
        print "box 1"; print "origin -0.5"; print "periodic 1"
        for (i = 0; i < n; i++) {
            j = (i * 7 + 3) % n
            line = "p"
            for (a = 1; a <= 3; a++) {
                x = X[j, a]; if (x < -0.5) x += 1; if (x >= 0.5) x -= 1
                q = int((x + 0.5) * 4096 + 0.5); if (q >= 4096) q -= 4096
                line = line sprintf(" %.12f", q / 4096 - 0.5)
            }
            for (a = 1; a <= 3; a++) line = line sprintf(" %.6f", int((rand() - 0.5) * 128) / 64)
            print line sprintf(" %.3f 1 %d", 0.5 + int(rand() * 12) / 8, (j * 11 + 5) % n)
        }
    }'
}

# Friends-of-friends by brute force over a mkstream description (p lines with all ten
# fields, IDs 0..n-1): pairs closer than L (minimum image in a periodic box), union-find,
# groups of at least M members numbered by decreasing size, then lowest ID. Prints the
# .grp file: n, then the group of each original index.
awk_fof() {
    awk -v L="$1" -v M="$2" '
        function nint(x) { return x >= 0 ? int(x + 0.5) : -int(-x + 0.5) }
        function find(i) { while (P[i] != i) i = P[i]; return i }
        BEGIN { n = 0 }
        $1 == "box" { box = $2 }
        $1 == "periodic" { per = $2 }
        $1 == "p" { for (a = 1; a <= 3; a++) X[n, a] = $(a + 1); ID[n] = $10; P[n] = n; n++ }
        END {
            for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) {
                r2 = 0
                for (a = 1; a <= 3; a++) { d = X[i, a] - X[j, a]; if (per) d -= box * nint(d / box); r2 += d * d }
                if (r2 < L * L) { ri = find(i); rj = find(j); if (ri != rj) P[ri] = rj }
            }
            for (i = 0; i < n; i++) { r = find(i); S[r]++; if (!(r in LO) || ID[i] < LO[r]) LO[r] = ID[i] }
            ng = 0
            for (r in S) if (S[r] >= M) R[++ng] = r
            for (a = 2; a <= ng; a++)   # insertion sort: size down, lowest ID up
                for (b = a; b > 1 && (S[R[b]] > S[R[b-1]] || (S[R[b]] == S[R[b-1]] && LO[R[b]] < LO[R[b-1]])); b--) {
                    t = R[b]; R[b] = R[b-1]; R[b-1] = t
                }
            for (g = 1; g <= ng; g++) NUM[R[g]] = g
            for (i = 0; i < n; i++) { r = find(i); OUT[ID[i]] = (r in NUM) ? NUM[r] : 0 }
            print n
            for (k = 0; k < n; k++) print OUT[k]
        }'
}

# Group properties by the definitions of halostats(1), from a .grp file and the
# mkstream description (p lines with all ten fields): one line per group, the
# columns of halostats. Only for groups whose total mass is positive.
awk_halostats() {
    awk 'function nint(x) { return x >= 0 ? int(x + 0.5) : -int(-x + 0.5) }
        function img(d) { return per ? d - box * nint(d / box) : d }
        function floor(x) { return int(x) - (x < int(x)) }
        BEGIN { CONVFMT = "%.17g" }
        NR == FNR { if (FNR > 1) G[FNR - 2] = $1; next }
        $1 == "box" { box = $2 }
        $1 == "origin" { org = $2 }
        $1 == "periodic" { per = $2 }
        $1 == "p" {
            g = G[$10]; if (g == 0) next
            k = C[g]++; M[g, k] = $8; I[g, k] = $10
            for (a = 1; a <= 3; a++) { X[g, k, a] = $(a + 1); V[g, k, a] = $(a + 4) }
            if (g > ng) ng = g
        }
        END {
            for (g = 1; g <= ng; g++) {
                ref = 0
                for (k = 1; k < C[g]; k++) if (I[g, k] < I[g, ref]) ref = k
                W = 0; for (a = 1; a <= 3; a++) { S[a] = 0; U[a] = 0 }
                for (k = 0; k < C[g]; k++) {
                    W += M[g, k]
                    for (a = 1; a <= 3; a++) { S[a] += M[g, k] * img(X[g, k, a] - X[g, ref, a]); U[a] += M[g, k] * V[g, k, a] }
                }
                line = g " " C[g] " " W
                for (a = 1; a <= 3; a++) {
                    S[a] /= W; U[a] /= W; c = X[g, ref, a] + S[a]
                    if (per) { c -= box * floor((c - org) / box); if (c >= org + box) c = org }
                    line = line " " c
                }
                for (a = 1; a <= 3; a++) line = line " " U[a]
                s2 = 0; r2max = 0
                for (k = 0; k < C[g]; k++) {
                    r2 = 0; v2 = 0
                    for (a = 1; a <= 3; a++) {
                        d = img(X[g, k, a] - X[g, ref, a]) - S[a]; r2 += d * d
                        u = V[g, k, a] - U[a]; v2 += u * u
                    }
                    s2 += M[g, k] * v2; if (r2 > r2max) r2max = r2
                }
                print line " " sqrt(s2 / W) " " sqrt(r2max)
            }
        }' "$@"
}

# Compares two tables of numbers (files) column by column, every value to a
# relative difference of 1e-7 (absolute 1e-10 near 0); names the first difference.
same_numbers() {
    paste -d '|' "$1" "$2" | awk -F'|' '{
        na = split($1, a, " "); nb = split($2, b, " ")
        if (na != nb) { printf "line %d: %d columns against %d\n", NR, na, nb; bad = 1; exit }
        for (k = 1; k <= na; k++) {
            d = a[k] - b[k]; if (d < 0) d = -d; s = a[k] < 0 ? -a[k] : a[k]
            if (d > 1e-7 * (s > 1e-3 ? s : 1e-3)) { printf "line %d column %d: %s against %s\n", NR, k, a[k], b[k]; bad = 1; exit }
        }
    } END { if (NR == 0) { print "no lines"; bad = 1 } exit bad }'
}
