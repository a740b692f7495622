# ref_helpers.bash - shared by correctness.bats, kdbuild.bats, foflink.bats, fofdump.bats: scratch dirs, failure checks, stream surgery in perl.

DATA=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}

# A pseudo-random generator for the awk scripts that make test data, prepended to their
# program: awk's own srand/rand differ between awk builds (mawk 1.3.4 20240123 does not
# repeat a sequence for a given seed), and the data must be the same everywhere.
# S = mix(seed) seeds it, rnd() returns the next number in [0, 1): a 32-bit LCG, exact in
# doubles.
RND_AWK='function mix(s) { return (s * 2654435761 + 12345) % 4294967296 }
function rnd() { S = (S * 69069 + 1) % 4294967296; return S / 4294967296 }
'

# Every test runs in its own scratch directory.
setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
}

# Runs PROG ARGS... expecting exit status STATUS and exactly the one line MESSAGE on
# stderr. Usage: fails_with STATUS MESSAGE PROG ARGS...
fails_with() {
    local want=$1 msg=$2
    shift 2
    run --separate-stderr stdout_to stdout.out "$@"
    echo "status $status, stderr: $stderr"
    [ "$status" -eq "$want" ]
    [ "$stderr" = "$msg" ]
}

# Runs COMMAND ARGS... with its standard output into FILE (binary data in bats's $output
# would lose its NUL bytes, with a warning).
stdout_to() {
    local f=$1
    shift
    "$@" >"$f"
}

# Runs COMMAND ARGS... able to allocate 512 MB at most: under ulimit -v, or, under the
# sanitizers (make check-asan sets ASAN_OPTIONS; they reserve terabytes of address space
# and would not start), with ASan's own limit on an allocation.
small_memory() {
    if [ -n "${ASAN_OPTIONS:-}" ]; then
        ASAN_OPTIONS="$ASAN_OPTIONS:max_allocation_size_mb=512" "$@"
    else
        (ulimit -v 524288 && exec "$@")
    fi
}

# As fails_with, status 1: PROG ARGS... must fail with exactly MESSAGE.
fails() {
    local msg=$1
    shift
    fails_with 1 "$msg" "$@"
}

# A usage error: status 2, MESSAGE then the pointer to --help, nothing else.
usage_fails() {
    local msg=$1 prog=$2
    shift
    run --separate-stderr "$@"
    echo "status $status, stderr: $stderr"
    [ "$status" -eq 2 ]
    [ "$stderr" = "$(printf '%s\n%s' "$prog: $msg" "Try '$prog --help' for more information.")" ]
    [ -z "$output" ]
}

# --help on stdout with status 0 and nothing on stderr, naming every OPTION given;
# --version one line.
help_and_version() {
    local prog=$1 o
    shift
    run --separate-stderr "$prog" --help
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "Usage: $prog [OPTION]... [FILE]" ]
    [ -z "$stderr" ]
    for o in "$@" --help --version; do
        [[ "$output" == *"$o"* ]] || { echo "--help does not mention $o"; return 1; }
    done
    run "$prog" -h
    [ "${lines[0]}" = "Usage: $prog [OPTION]... [FILE]" ]
    run --separate-stderr "$prog" --version
    [ "$status" -eq 0 ]
    [[ "$output" =~ ^$prog\ \(fofkit\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
    [ -z "$stderr" ]
    run "$prog" -V
    [[ "$output" =~ ^$prog\ \(fofkit\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

# Checks that PROG [ARGS...] refuses to read binary data from a terminal and, if
# WRITES is "writes", to write it to one (unless -f). INPUT is a valid input file.
terminal_refusals() {
    local prog=$1 writes=$2 input=$3
    shift 3
    command -v script >/dev/null || skip "no script(1) to make a terminal"
    run script -qec "$prog $* -o out.x" /dev/null </dev/null
    [ "$status" -ne 127 ] || skip "no pseudo-terminal here"
    [ "$(printf '%s' "$output" | tr -d '\r')" = \
        "$prog: stdin: refusing to read binary data from a terminal (give a file, or pipe one in)" ]
    [ "$status" -eq 1 ]
    [ ! -e out.x ]
    if [ "$writes" = writes ]; then
        run script -qec "$prog $* $input" /dev/null
        [ "$status" -eq 1 ]
        [ "$(printf '%s' "$output" | tr -d '\r')" = \
            "$prog: stdout: refusing to write binary data to a terminal (use -o FILE or redirect)" ]
        run script -qec "$prog -f $* $input | head -c 8 | od -An -c | tr -d ' '" /dev/null
        [ "$status" -eq 0 ]
        [[ "$output" == *FOF* ]]
    fi
}

# The inputs every stream reader refuses the same way: an empty file, empty stdin, a
# missing file, a directory. PROG [ARGS...] must fail on each with status 1 and its line.
unreadable_inputs() {
    local prog=$1
    shift
    : >empty.bin
    fails "$prog: empty.bin: empty input" "$prog" "$@" empty.bin
    fails "$prog: stdin: empty input" "$prog" "$@" <empty.bin
    fails "$prog: missing.bin: cannot open: No such file or directory" "$prog" "$@" missing.bin
    mkdir -p dir.bin
    fails "$prog: dir.bin: cannot open: it is a directory (give a file)" "$prog" "$@" dir.bin
}

# Checks that a failing PROG ARGS... (status STATUS) leaves no output file: -o out with
# no out before, and with an existing out that it must not touch.
no_partial_output() {
    local want=$1
    shift
    rm -f out.bin
    run "$@" -o out.bin
    [ "$status" -eq "$want" ]
    [ ! -e out.bin ]
    [ -z "$(ls -A | grep '^out\.bin\.tmp')" ]
    echo keep >out.bin
    run "$@" -o out.bin
    [ "$status" -eq "$want" ]
    [ "$(cat out.bin)" = keep ]
    [ -z "$(ls -A | grep '^out\.bin\.tmp')" ]
}

# Stream surgery, from the layout in stream.h (independently of the library):
#   streamtool IN OUT [EDIT]...
# rewrites stream IN into OUT applying each EDIT in turn, then recomputes every CRC
# (unless --keep-crc is given) and each chunk's stored size. EDITs:
#   --payload TAG DONOR    chunk TAG takes the payload of DONOR's chunk TAG
#   --chunk TAG DONOR      chunk TAG is replaced by DONOR's (header and payload)
#   --drop TAG             leaves chunk TAG out
#   --move TAG BEFORE      moves chunk TAG to just before chunk BEFORE
#   --add TAG DTYPE FLAGS ROWS COLS PACK VALUES   a new chunk before END, its payload
#                          perl's pack(PACK, VALUES split on commas)
#   --version N            the stream header's format version
#   --keep-crc             leave the CRCs as they are (after the other edits)
streamtool() {
    perl -MCompress::Zlib -e '
        use strict;
        sub slurp { my $f = shift; open(my $h, "<:raw", $f) or die "$f: $!\n"; local $/; my $d = <$h>; return $d }
        sub parse {
            my $d = shift;
            my @c;
            for (my $off = 64; $off < length $d;) {
                my $h = substr($d, $off, 64);
                my ($tag, $stored) = (unpack("Z8", $h), unpack("Q<", substr($h, 32, 8)));
                push @c, { tag => $tag, h => $h, p => substr($d, $off + 64, $stored) };
                $off += 64 + int(($stored + 63) / 64) * 64;
            }
            return (substr($d, 0, 64), @c);
        }
        sub find { my ($c, $t) = @_; for my $i (0 .. $#$c) { return $i if $c->[$i]{tag} eq $t } die "no chunk $t\n" }
        my ($in, $out, @ed) = @ARGV;
        my ($head, @c) = parse(slurp($in));
        my $fixcrc = 1;
        while (@ed) {
            my $e = shift @ed;
            if ($e eq "--payload") {
                my ($t, $donor) = splice(@ed, 0, 2);
                my (undef, @d) = parse(slurp($donor));
                $c[find(\@c, $t)]{p} = $d[find(\@d, $t)]{p};
            } elsif ($e eq "--chunk") {
                my ($t, $donor) = splice(@ed, 0, 2);
                my (undef, @d) = parse(slurp($donor));
                $c[find(\@c, $t)] = $d[find(\@d, $t)];
            } elsif ($e eq "--drop") {
                my $i = find(\@c, shift @ed);
                splice(@c, $i, 1);
            } elsif ($e eq "--move") {
                my ($t, $before) = splice(@ed, 0, 2);
                my ($x) = splice(@c, find(\@c, $t), 1);
                splice(@c, find(\@c, $before), 0, $x);
            } elsif ($e eq "--add") {
                my ($t, $dt, $fl, $rows, $cols, $pk, $vals) = splice(@ed, 0, 7);
                my $h = pack("a8 a4 V Q< V V Q< V", $t, $dt, $fl, $rows, $cols, 0, 0, 0) . ("\0" x 20);
                splice(@c, find(\@c, "END"), 0, { tag => $t, h => $h, p => pack($pk, split(/,/, $vals)) });
            } elsif ($e eq "--version") {
                substr($head, 8, 4) = pack("V", shift @ed);
            } elsif ($e eq "--keep-crc") {
                $fixcrc = 0;
            } else {
                die "unknown edit $e\n";
            }
        }
        substr($head, 60, 4) = pack("V", crc32(substr($head, 0, 60))) if $fixcrc;
        open(my $o, ">:raw", $out) or die "$out: $!\n";
        print $o $head;
        for my $x (@c) {
            my $h = $x->{h};
            if ($fixcrc) {
                substr($h, 32, 8) = pack("Q<", length $x->{p});
                substr($h, 40, 4) = pack("V", crc32($x->{p}));
                substr($h, 60, 4) = pack("V", crc32(substr($h, 0, 60)));
            }
            my $pad = (64 - length($x->{p}) % 64) % 64;
            print $o $h, $x->{p}, "\0" x $pad;
        }
        close($o) or die "$out: $!\n";' "$@"
}

# The stored payload size of the chunk whose header is at byte OFFSET of stream FILE.
#   stored FILE OFFSET
stored() {
    od -An -tu8 -j $(($2 + 32)) -N8 "$1" | tr -d ' '
}

# Byte offset of the header of the first chunk TAG of stream FILE.
chunk_offset() {
    perl -e '
        open(my $h, "<:raw", $ARGV[0]) or die; local $/; my $d = <$h>;
        for (my $off = 64; $off < length $d;) {
            my ($tag, $stored) = (unpack("Z8", substr($d, $off, 8)), unpack("Q<", substr($d, $off + 32, 8)));
            if ($tag eq $ARGV[1]) { print "$off\n"; exit 0 }
            $off += 64 + int(($stored + 63) / 64) * 64;
        }
        exit 1;' "$1" "$2"
}

# Overwrites one byte of FILE at OFFSET with its complement.
flip_byte() {
    local f=$1 off=$2 b
    b=$(od -An -tu1 -j "$off" -N1 "$f" | tr -d ' ')
    printf "$(printf '\\%03o' $((255 - b)))" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none
}

# Skips the test unless the snapshot NAME.std is in $DATA.
need_snapshot() {
    [ -f "$DATA/$1.std" ] || skip "no $DATA/$1.std (set FOFKIT_DATA)"
}

# --device and FOFKIT_DEVICE for PROG on stream INPUT: cpu either way, the command line
# over the environment, auto taking the CPU here (skips if a GPU is present), and gpu
# refused with status 3 and one line naming the reason, asked for in every way (and with
# the EXTRA options, if given), leaving no output.
device_choices() {
    local prog=$1 input=$2 how
    shift 2
    "$prog" --device=cpu -o a.bin "$input"
    FOFKIT_DEVICE=cpu "$prog" -o b.bin "$input"
    cmp a.bin b.bin
    FOFKIT_DEVICE=gpu "$prog" --device=cpu -o c.bin "$input"
    cmp a.bin c.bin
    need_no_gpu
    FOFKIT_DEVICE=auto "$prog" -v -o d.bin "$input" 2>err.txt
    cmp a.bin d.bin
    grep -q "^$prog: device: CPU (.\+)\$" err.txt
    for how in "$prog --device=gpu" "env FOFKIT_DEVICE=gpu $prog" "env FOFKIT_DEVICE=cpu $prog --device=gpu" \
        ${1:+"$prog --device=gpu $*"}; do
        run --separate-stderr $how -o e.bin "$input"
        echo "$how: status $status, stderr: $stderr"
        [ "$status" -eq 3 ]
        [[ "$stderr" =~ ^$prog:\ --device=gpu:\ [^$'\n']+$ ]]
        [ ! -e e.bin ]
    done
}

# Skips the test when a GPU can be used (for the tests of running without one).
need_no_gpu() {
    printf 'p 0.1 0.1 0.1\n' | mkstream -o gpuprobe.bin
    if kdbuild --device=gpu gpuprobe.bin >/dev/null 2>&1; then skip "a GPU is present"; fi
    rm -f gpuprobe.bin
}
