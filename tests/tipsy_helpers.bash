# tipsy_helpers.bash - shared by tipsy2bin.bats and mkuniverse.bats: scratch directories, stream and tipsy readers in perl.

DATA=${FOFKIT_DATA:-$BATS_TEST_DIRNAME/../../shared/data}

# Every test runs in its own scratch directory.
setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
}

# The payload of chunk TAG of an uncompressed stream FILE, read with perl from the
# layout in stream.h (independently of the library): a text chunk as is, an array one
# row a line (floats with %.9g, so every binary32 value prints exactly).
chunk() {
    perl -e '
        my ($f, $want) = @ARGV;
        open(my $fh, "<:raw", $f) or die "$f: $!";
        local $/;
        my $d = <$fh>;
        my %fmt = ("<f4" => "f<", "<u4" => "V", "<u8" => "Q<", "|u1" => "C");
        for (my $off = 64; $off < length $d;) {
            my ($tag, $dtype, $flags, $rows, $cols, $level, $stored) = unpack("Z8 Z4 V Q< V V Q<", substr($d, $off, 40));
            if ($tag eq $want) {
                die "$want is compressed\n" if $flags & 1;
                my $p = substr($d, $off + 64, $stored);
                if ($flags & 4) { print $p; exit 0 }
                my @v = unpack("$fmt{$dtype}*", $p);
                while (@v) {
                    print join(" ", map { $dtype eq "<f4" ? sprintf("%.9g", $_) : $_ } splice(@v, 0, $cols)), "\n";
                }
                exit 0;
            }
            $off += 64 + int(($stored + 63) / 64) * 64;
        }
        exit 1;' "$@"
}

# The chunk tags of an uncompressed stream, in order, with dtype, flags, rows, columns.
chunk_list() {
    perl -e '
        open(my $fh, "<:raw", $ARGV[0]) or die;
        local $/;
        my $d = <$fh>;
        for (my $off = 64; $off < length $d;) {
            my ($tag, $dtype, $flags, $rows, $cols, $level, $stored) = unpack("Z8 Z4 V Q< V V Q<", substr($d, $off, 40));
            print "$tag $dtype $flags $rows $cols\n";
            $off += 64 + int(($stored + 63) / 64) * 64;
        }' "$1"
}

# The value of KEY in the SNAP chunk of stream FILE.
snap_key() {
    chunk "$1" SNAP | awk -v k="$2" '$1 == k { sub(/^[^ ]* /, ""); print }'
}

# The header of a tipsy FILE as "time nbodies ndim nsph ndark nstar pad" (standard, or
# native with a second argument "native").
tipsy_header() {
    perl -e '
        open(my $fh, "<:raw", $ARGV[0]) or die;
        read($fh, my $h, 32) == 32 or die "short\n";
        my @v = $ARGV[1] eq "native" ? unpack("d< V6", $h) : unpack("d> N6", $h);
        print join(" ", @v), "\n";' "$1" "${2:-standard}"
}

# Byte-swaps a standard tipsy file IN into its native (little-endian) twin OUT (or back):
# the 8-byte time, then every 4-byte field.
swap_tipsy() {
    perl -e '
        local $/;
        binmode STDIN;
        binmode STDOUT;
        my $d = <STDIN>;
        print scalar reverse(substr($d, 0, 8)), pack("V*", unpack("N*", substr($d, 8)));' <"$1" >"$2"
}

# Positions of the dark particles of a standard all-dark tipsy FILE, "x y z" a line (%.9g).
tipsy_dark_positions() {
    perl -e '
        open(my $fh, "<:raw", $ARGV[0]) or die;
        local $/;
        my $d = <$fh>;
        my $n = unpack("N", substr($d, 20, 4));
        for my $i (0 .. $n - 1) {
            printf "%.9g %.9g %.9g\n", unpack("f>3", substr($d, 32 + 36 * $i + 4, 12));
        }' "$1"
}

# Skips the test unless every named program is on PATH.
need_programs() {
    local p
    for p in "$@"; do
        command -v "$p" >/dev/null || skip "$p is not built"
    done
}
