#!/bin/bash
# go.sh - a fuzz bundle's runner (tests/fuzz/run --bundle DIR): every harness at once on JOBS cores for SECONDS, with a summary.
#
# Usage: DIR/go.sh JOBS SECONDS
# Runs JOBS libFuzzer processes at once for SECONDS, spread over the harnesses
# of DIR/bin (with more JOBS than harnesses, several processes per harness
# share its corpus; with fewer, each process runs its harnesses one after
# another, for a share of SECONDS each), from DIR's corpora and past crash
# inputs, with the options of tests/fuzz/run (DIR/env). A process that finds
# something (crash, leak, timeout, out of memory) keeps the input and is
# started again for the time left.
# Writes into $OUT (default DIR/results):
#   summary.txt         per harness: executions (libFuzzer's stat::number_of_executed_units summed
#                       over its processes), cov and ft (the highest a process reported), findings
#   logs/NAME.*.log     libFuzzer's output, one per process
#   crash/NAME/         crash-*, leak-*, timeout-*, oom-* inputs (the findings)
#   corpus/NAME/        the whole corpus the run ended with
#   new-corpus.tar.gz   the new entries that add coverage to DIR's corpus (libFuzzer -merge=1),
#                       each at most 48 KB, the archive under 10 MB
# Exit status: 0 nothing found, 1 a harness found something, 2 usage or a missing library.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -ne 2 ] || ! [ "$1" -ge 1 ] 2>/dev/null || ! [ "$2" -ge 1 ] 2>/dev/null; then
    echo "usage: $0 JOBS SECONDS   (results in \$OUT, default $here/results)" >&2
    exit 2
fi
JOBS=$1 SECS=$2
OUT=${OUT:-$here/results}
# shellcheck source=/dev/null
. "$here/env"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
names=()
for b in "$here"/bin/fuzz_*; do names+=("$(basename "$b")"); done
for n in "${names[@]}"; do
    if ldd "$here/bin/$n" | grep -q 'not found'; then
        echo "go.sh: $n needs a library this system lacks:" >&2
        ldd "$here/bin/$n" | grep 'not found' >&2
        exit 2
    fi
done
rm -rf "$OUT/logs" "$OUT/crash" "$OUT/corpus" "$OUT/merged" "$OUT/new-corpus" "$OUT/summary.txt" "$OUT/new-corpus.tar.gz"
mkdir -p "$OUT/logs" || exit 2

# Worker w runs harness w mod H (JOBS >= H), or harnesses w, w + JOBS, ...
# one after another (JOBS < H), sharing SECONDS among them.
H=${#names[@]}
for n in "${names[@]}"; do
    mkdir -p "$OUT/crash/$n" "$OUT/corpus/$n"
    [ -d "$here/corpus/$n" ] && cp "$here/corpus/$n"/* "$OUT/corpus/$n/" 2>/dev/null
done
worker() {
    local w=$1 list=() i n
    if [ "$JOBS" -ge "$H" ]; then list=($((w % H))); else for ((i = w; i < H; i += JOBS)); do list+=("$i"); done; fi
    local share=$((SECS / ${#list[@]}))
    for i in "${list[@]}"; do
        n=${names[$i]}
        local seeds=() start=$SECONDS left r=0
        [ -d "$here/regress/$n" ] && seeds+=("$here/regress/$n")
        while left=$((share - (SECONDS - start))) && [ "$left" -ge 1 ] && [ "$r" -lt 50 ]; do
            r=$((r + 1))
            # shellcheck disable=SC2086
            "$here/bin/$n" "$OUT/corpus/$n" "${seeds[@]}" -max_total_time="$left" $FUZZ_FLAGS \
                -artifact_prefix="$OUT/crash/$n/" >"$OUT/logs/$n.w$w.r$r.log" 2>&1
            echo "$n w$w r$r exit $?" >>"$OUT/logs/exits"
        done
    done
}
echo "go.sh: $H harnesses, $JOBS processes at once, $SECS s; results in $OUT"
pids=()
for ((w = 0; w < JOBS; w++)); do
    worker "$w" &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done

status=0
total=0
{
    echo "# $FUZZ_SOURCE"
    echo "# $(uname -m), $(env -u OMP_NUM_THREADS nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); go.sh $JOBS $SECS"
    echo "# ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS OMP_NUM_THREADS=$OMP_NUM_THREADS"
    printf '%-12s %14s %6s %6s %6s %6s  %s\n' harness executions cov ft corpus procs "findings (exit statuses other than 0, files)"
    for n in "${names[@]}"; do
        runs=0 cov=0 ft=0 procs=0
        for log in "$OUT/logs/$n".w*.log; do
            [ -e "$log" ] || continue
            procs=$((procs + 1))
            u=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
            runs=$((runs + ${u:-0}))
            c=$(grep -oE ' cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1)
            read -r _ cv _ fv <<<"${c:-x 0 x 0}"
            [ "$cv" -gt "$cov" ] && cov=$cv
            [ "$fv" -gt "$ft" ] && ft=$fv
        done
        bad=$(grep -c "^$n .* exit [^0]" "$OUT/logs/exits" 2>/dev/null)
        files=$(cd "$OUT/crash/$n" && ls 2>/dev/null | tr '\n' ' ')
        [ "${bad:-0}" = 0 ] && [ -z "$files" ] || status=1
        total=$((total + runs))
        printf '%-12s %14s %6s %6s %6s %6s  %s\n' "$n" "$runs" "$cov" "$ft" "$(ls "$OUT/corpus/$n" | wc -l)" "$procs" \
            "${bad:-0} ${files}"
    done
    printf '%-12s %14s\n' total "$total"
} >"$OUT/summary.txt"
cat "$OUT/summary.txt"

# The new entries: what -merge=1 adds to the bundle's corpus from the run's,
# inputs up to 48 KB, at most 10 MB compressed (the smallest first); the
# harnesses merged at the same time.
mkdir -p "$OUT/new-corpus"
new_entries() {
    local n=$1 m="$OUT/merged/$1" f
    mkdir -p "$m" "$OUT/new-corpus/$n"
    [ -d "$here/corpus/$n" ] && cp "$here/corpus/$n"/* "$m/" 2>/dev/null
    "$here/bin/$n" -merge=1 "$m" "$OUT/corpus/$n" >"$OUT/logs/$n.merge.log" 2>&1 ||
        echo "go.sh: $n: merge failed (see logs/$n.merge.log)" >&2
    for f in "$m"/*; do
        [ -e "$f" ] || continue
        [ -e "$here/corpus/$n/$(basename "$f")" ] && continue
        [ "$(stat -c %s "$f")" -le 49152 ] && cp "$f" "$OUT/new-corpus/$n/"
    done
}
pids=()
for n in "${names[@]}"; do
    new_entries "$n" &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
while :; do
    tar -czf "$OUT/new-corpus.tar.gz" -C "$OUT" new-corpus
    [ "$(stat -c %s "$OUT/new-corpus.tar.gz")" -lt 10000000 ] && break
    big=$(find "$OUT/new-corpus" -type f -printf '%s %p\n' | sort -n | tail -n 1 | cut -d' ' -f2-)
    [ -n "$big" ] || break
    rm -f "$big"
done
echo "go.sh: new corpus entries: $(find "$OUT/new-corpus" -type f | wc -l) in $OUT/new-corpus.tar.gz" \
    "($(stat -c %s "$OUT/new-corpus.tar.gz") bytes)"
[ $status -eq 0 ] || echo "go.sh: FOUND SOMETHING: see $OUT/summary.txt and $OUT/crash/" >&2
exit $status
