# bench/pipeline.bash - bench/run's pipeline section: each stage and the piped pipeline beside the machine's I/O floor.
#
# Sourced by bench/run, which sets BIN, PEAK, FLOOR, DIR and dev (cpu or gpu). pipeline_rows N SNAP
# prints the table rows for one snapshot; the -v output of every stage goes to $PIPELINE_LOG.
#
# The floor is measured in the same run, on the same files, best of 3 (the first run warms the
# page cache): read = `floor read IN` (the input in 128 KiB blocks); pipe = the faster of
# `floor pipe IN` (a file copied into a pipe read by a child process) and `cat IN | cat >/dev/null`;
# write = `floor write BYTES` (as many bytes as the output, then fsync, as the programs commit).
# A stage from file to file must at least read its input and write its output: floor = read + write.
# The piped pipeline's stages run at once, so it cannot finish before its slowest stream has moved:
# floor = the largest of reading the snapshot, copying the largest stream through a pipe and
# writing the output.

# bytes FILE: its size in bytes.
bytes() { stat -c %s "$1"; }

# least: the smallest of the numbers on stdin, one a line (awk, so that no pipe is cut short).
least() { awk 'NR == 1 || $1 < m { m = $1 } END { print m }'; }

# best3 COMMAND...: runs a command that prints "BYTES SECONDS" three times; prints the least seconds.
best3() {
    local i out
    for i in 1 2 3; do
        out=$("$@") || { echo "bench/run: $* failed" >&2; exit 1; }
        echo "${out#* }"
    done | least
}

# cached KIND ARG: the floor KIND (read, pipe or write) of ARG (a file or a byte count), measured once
# per snapshot: the pipes carry the same files as the stages read (kept in $DIR/floor.cache).
cached() {
    local hit
    hit=$(awk -v k="$1" -v a="$2" '$1 == k && $2 == a { print $3; exit }' "$DIR/floor.cache" 2>/dev/null || true)
    [ -n "$hit" ] || { hit=$("floor_$1" "$2"); echo "$1 $2 $hit" >>"$DIR/floor.cache"; }
    echo "$hit"
}

floor_read() { best3 "$FLOOR" read "$1"; }
floor_write() { best3 "$FLOOR" write "$1" "$DIR/floor.tmp"; }

# cat_pipe FILE: "BYTES SECONDS" of cat FILE | cat > /dev/null (wall time from peakrss).
cat_pipe() {
    local out
    out=$("$PEAK" bash -c "cat '$1' | cat > /dev/null" 2>&1) || { echo "bench/run: cat pipe failed: $out" >&2; exit 1; }
    echo "$(bytes "$1") $(sed -n 's/.*peakrss: wall \([0-9.]*\) s.*/\1/p' <<<"$out")"
}

# floor_pipe FILE: the faster of floor's pipe copy and cat | cat, best of 3 each.
floor_pipe() {
    { best3 "$FLOOR" pipe "$1"; best3 cat_pipe "$1"; } | least
}

# timed LABEL COMMAND...: runs the command under peakrss, its stderr (-v) appended to the log;
# prints "WALL PEAK_MIB".
timed() {
    local label=$1 out
    shift
    echo "== $label" >>"$PIPELINE_LOG"
    out=$("$PEAK" "$@" 2>&1 >/dev/null) || { echo "bench/run: $label failed: $out" >&2; exit 1; }
    echo "$out" >>"$PIPELINE_LOG"
    echo "$(sed -n 's/.*peakrss: wall \([0-9.]*\) s.*/\1/p' <<<"$out" | tail -1)" \
        "$(sed -n 's/.*peak \([0-9.]*\) MiB.*/\1/p' <<<"$out" | tail -1)"
}

# row NAME N WALL MIB BYTES_IN BYTES_OUT READ_S PIPE_S WRITE_S FLOOR_S: one table row.
row() {
    awk -v name="$1" -v n="$2" -v w="$3" -v m="$4" -v bi="$5" -v bo="$6" -v r="$7" -v p="$8" -v wr="$9" -v f="${10}" \
        'BEGIN { printf "| %-32s | %10d | %7.3f | %8.1f | %8.1f | %5.2f | %7.0f | %5.2f | %6.3f | %6.3f | %6.3f | %6.3f | %6.1f |\n",
                 name, n, w, bi / 1e6, bo / 1e6, (bi + bo) / w / 1e9, m, m * 1048576 / (n * 37), r, p, wr, f, w / f }'
}

pipeline_header() {
    echo "| stage                            |  particles |  wall s |    MB in |   MB out |  GB/s |    peak | mem   | read s | pipe s | write s| floor s| x floor|"
    echo "|----------------------------------|------------|---------|----------|----------|-------|---------|-------|--------|--------|--------|--------|--------|"
}

# file_stage NAME N IN OUT COMMAND...: one stage from file IN to file OUT, beside its floor.
file_stage() {
    local name=$1 n=$2 in=$3 out=$4
    shift 4
    local t r p w
    t=$(timed "$name ($n particles)" "$@")
    r=$(cached read "$in") p=$(cached pipe "$in") w=$(cached write "$(bytes "$out")")
    row "$name" "$n" ${t% *} ${t#* } "$(bytes "$in")" "$(bytes "$out")" "$r" "$p" "$w" \
        "$(awk -v r="$r" -v w="$w" 'BEGIN { print r + w }')"
}

# piped NAME N SNAP OUT STREAMS COMMAND: the pipeline through pipes; STREAMS are files holding the
# same bytes as its pipes (from the file-to-file stages).
piped() {
    local name=$1 n=$2 snap=$3 out=$4 streams=$5 cmd=$6
    local t s sum=0 pmax=0 p r w
    t=$(timed "$name ($n particles)" bash -c "$cmd")
    for s in $streams; do
        sum=$((sum + $(bytes "$s")))
        p=$(cached pipe "$s")
        pmax=$(awk -v a="$pmax" -v b="$p" 'BEGIN { print (b > a ? b : a) }')
    done
    r=$(cached read "$snap") w=$(cached write "$(bytes "$out")")
    row "$name" "$n" ${t% *} ${t#* } $(($(bytes "$snap") + sum)) $((sum + $(bytes "$out"))) "$r" "$pmax" "$w" \
        "$(awk -v r="$r" -v p="$pmax" -v w="$w" 'BEGIN { f = r; if (p > f) f = p; if (w > f) f = w; print f }')"
}

# same FILE1 FILE2 LABEL: the piped pipeline must give the file-to-file result, byte for byte but
# for the catalogue's "# input NAME" line (a file there, stdin here).
same() {
    cmp -s <(grep -v '^# input ' "$1") <(grep -v '^# input ' "$2") || { echo "bench/run: $3: the piped pipeline's output differs from the stages' ($1, $2)" >&2; exit 1; }
}

# pipeline_rows N SNAP: every stage from file to file, then the two piped pipelines.
pipeline_rows() {
    local n=$1 snap=$2 d=$DIR b=$BIN
    echo "bench/run: pipeline section, $n particles, -v output in $PIPELINE_LOG" >&2
    rm -f "$DIR/floor.cache"
    file_stage "tipsy2bin" "$n" "$snap" "$d/s.bin" "$b/tipsy2bin" -v "$snap" -o "$d/s.bin"
    file_stage "kdbuild --device=$dev" "$n" "$d/s.bin" "$d/t.bin" "$b/kdbuild" -v --device=$dev "$d/s.bin" -o "$d/t.bin"
    file_stage "foflink --device=$dev" "$n" "$d/t.bin" "$d/l.bin" \
        "$b/foflink" -v --device=$dev -b 0.2 "$d/t.bin" -o "$d/l.bin"
    file_stage "groups -m 8 --format=grp" "$n" "$d/l.bin" "$d/snap.grp" \
        "$b/groups" -v -m 8 --format=grp "$d/l.bin" -o "$d/snap.grp"
    file_stage "groups -m 8" "$n" "$d/l.bin" "$d/g.bin" "$b/groups" -v -m 8 "$d/l.bin" -o "$d/g.bin"
    file_stage "halostats --device=$dev" "$n" "$d/g.bin" "$d/h.txt" \
        "$b/halostats" -v --device=$dev "$d/g.bin" -o "$d/h.txt"
    local head="'$b/tipsy2bin' -v '$snap' 2>>'$PIPELINE_LOG' | '$b/kdbuild' -v --device=$dev 2>>'$PIPELINE_LOG' | \
'$b/foflink' -v --device=$dev -b 0.2 2>>'$PIPELINE_LOG'"
    piped "pipes to groups --format=grp" "$n" "$snap" "$d/p.grp" "$d/s.bin $d/t.bin $d/l.bin" \
        "$head | '$b/groups' -v -m 8 --format=grp 2>>'$PIPELINE_LOG' > '$d/p.grp'"
    same "$d/snap.grp" "$d/p.grp" "groups --format=grp"
    piped "pipes to halostats" "$n" "$snap" "$d/p.txt" "$d/s.bin $d/t.bin $d/l.bin $d/g.bin" \
        "$head | '$b/groups' -v -m 8 2>>'$PIPELINE_LOG' | '$b/halostats' -v --device=$dev 2>>'$PIPELINE_LOG' > '$d/p.txt'"
    same "$d/h.txt" "$d/p.txt" "halostats"
    rm -f "$d"/s.bin "$d"/t.bin "$d"/l.bin "$d"/g.bin "$d"/snap.grp "$d"/h.txt "$d"/p.grp "$d"/p.txt "$d"/floor.tmp "$d"/floor.cache
}

# pipeline_intro: the explanation printed above the rows.
pipeline_intro() {
    cat <<'EOF'
Each stage from a file to a file, then the whole pipeline through pipes: "pipes to groups --format=grp"
is `tipsy2bin snap | kdbuild | foflink -b 0.2 | groups -m 8 --format=grp > snap.grp`, "pipes to
halostats" the same ending in `groups -m 8 | halostats > halos.txt`; the piped outputs are checked byte
for byte against the stages' (but for the catalogue's `# input` line). MB in/out: the input and output
files (for the pipes: the snapshot plus every stream a stage reads; every stream written plus the
output). GB/s = (in + out) / wall; peak = peak resident MiB (bench/peakrss); mem = peak / (37 bytes x
particles), the particle data. Floor, measured in the same run on the same bytes, best of 3
(bench/floor, page cache warm): read = the input read in 128 KiB blocks; pipe = the input copied
through a pipe (the faster of `floor pipe` and `cat | cat`); write = the output's bytes written and
fsynced as the programs commit. A stage's floor = read + write; the piped pipeline's floor = the
largest of reading the snapshot, the largest stream's pipe copy and writing the output (its stages
overlap). x floor = wall / floor. The stages' `-v` output is kept in $BENCH_DIR/pipeline-MODE.log.
EOF
    # other work on the machine inflates every time here, the floor's included
    echo "Load average (1, 5, 15 minutes) when the section started: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo
}
