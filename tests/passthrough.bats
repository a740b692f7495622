#!/usr/bin/env bats
# passthrough.bats - chunks a stage does not read pass through byte for byte (files, pipes, FIFOs, compressed streams), and damage is caught by the stage that reads it.

bats_require_minimum_version 1.5.0
load ref_helpers

# A tree-ordered stream of a small mock universe whose chunks are larger than
# the 1 MiB blocks of the copies (VEL is 1.2 MB): t.bin.
tree_stream() {
    mkuniverse -n 100000 -s 3 -o m.std
    tipsy2bin m.std | kdbuild -o t.bin
}

# The bytes of chunk TAG of stream FILE, header, payload and padding, as hex digest.
chunk_digest() {
    perl -MDigest::MD5=md5_hex -e '
        open(my $h, "<:raw", $ARGV[0]) or die; local $/; my $d = <$h>;
        for (my $off = 64; $off < length $d;) {
            my ($tag, $stored) = (unpack("Z8", substr($d, $off, 8)), unpack("Q<", substr($d, $off + 32, 8)));
            my $len = 64 + int(($stored + 63) / 64) * 64;
            if ($tag eq $ARGV[1]) { print md5_hex(substr($d, $off, $len)), "\n"; exit 0 }
            $off += $len;
        }
        exit 1;' "$1" "$2"
}

@test "foflink passes the chunks it does not read on byte for byte: file, pipe and FIFO, in and out" {
    tree_stream
    foflink t.bin -o file.bin
    cat t.bin | foflink >pipe-pipe.bin
    foflink <t.bin | cat >file-pipe.bin
    cat t.bin | foflink -o pipe-file.bin
    mkfifo in.fifo out.fifo
    cat t.bin >in.fifo &
    cat out.fifo >fifo.bin &
    foflink -o out.fifo in.fifo
    wait
    for f in pipe-pipe.bin file-pipe.bin pipe-file.bin fifo.bin; do cmp file.bin "$f"; done
    # the chunks a 3D linking does not read are the input's, header and payload (-b reads MASS and
    # TYPE for the mean spacing of the lightest particles; -l and --spacing=all read neither)
    for tag in VEL MASS TYPE ID; do
        [ "$(chunk_digest file.bin $tag)" = "$(chunk_digest t.bin $tag)" ]
    done
    fofdump --check file.bin >/dev/null
    foflink -l 0.005 t.bin -o l.bin
    foflink --spacing=all t.bin -o all.bin
    for tag in VEL MASS TYPE ID; do
        [ "$(chunk_digest l.bin $tag)" = "$(chunk_digest t.bin $tag)" ]
        [ "$(chunk_digest all.bin $tag)" = "$(chunk_digest t.bin $tag)" ]
    done
}

@test "compressed streams pass through as stored, and are compressed on the way with -z" {
    tree_stream
    kdbuild -z <(tipsy2bin m.std) -o tz.bin
    foflink tz.bin -o z.bin
    cat tz.bin | foflink | cat >zp.bin
    cmp z.bin zp.bin
    # what -b reads (POS, MASS, TYPE) is written on inflated; the rest as stored
    for tag in VEL ID; do
        [ "$(chunk_digest z.bin $tag)" = "$(chunk_digest tz.bin $tag)" ]
    done
    foflink --spacing=all tz.bin -o zall.bin
    for tag in VEL MASS TYPE ID; do
        [ "$(chunk_digest zall.bin $tag)" = "$(chunk_digest tz.bin $tag)" ]
    done
    [ "$(fofdump z.bin | awk '$1 == "VEL" { print $NF }')" = zlib ]
    # -z compresses what it passes on; every payload still checks and reads back the same
    foflink -z t.bin -o zz.bin
    [ "$(fofdump zz.bin | awk '$1 == "VEL" { print $NF }')" = zlib ]
    fofdump --check zz.bin >/dev/null
    [ "$(fofdump -c VEL zz.bin | md5sum)" = "$(fofdump -c VEL t.bin | md5sum)" ]
    # and the groups are the same as from the uncompressed stream
    [ "$(groups -m 8 --format=grp z.bin | md5sum)" = "$(foflink t.bin | groups -m 8 --format=grp | md5sum)" ]
}

@test "damage in a chunk passed on is caught by the stage that reads it" {
    tree_stream
    # a byte of VEL's payload: 3D linking passes it on, 6D linking reads it
    cp t.bin vel.bin
    flip_byte vel.bin $(($(chunk_offset t.bin VEL) + 64 + 1000))
    foflink vel.bin -o linked.bin
    fails "fofdump: linked.bin: chunk VEL: payload CRC mismatch (damaged data)" fofdump --check linked.bin
    fails "foflink: vel.bin: chunk VEL: payload CRC mismatch (damaged data)" foflink --psi 1 vel.bin
    groups -m 8 linked.bin -o grouped.bin
    fails "halostats: grouped.bin: chunk VEL: payload CRC mismatch (damaged data)" halostats grouped.bin
    run -1 --separate-stderr bash -c 'foflink <vel.bin | groups -m 8 | halostats >/dev/null'
    [ "$stderr" = "halostats: stdin: chunk VEL: payload CRC mismatch (damaged data)" ]
    # a byte of ID's: groups reads it
    cp t.bin id.bin
    flip_byte id.bin $(($(chunk_offset t.bin ID) + 64 + 7))
    run -1 --separate-stderr bash -c 'cat id.bin | foflink | groups -m 8 >/dev/null'
    [ "$stderr" = "groups: stdin: chunk ID: payload CRC mismatch (damaged data)" ]
    # a padding byte of a chunk passed on (foflink -l reads no TYPE); -b reads TYPE and says so
    cp t.bin pad.bin
    type=$(chunk_offset t.bin TYPE)
    flip_byte pad.bin $((type + 64 + 100000 + 5))
    foflink -l 0.005 pad.bin -o padded.bin
    fails "fofdump: padded.bin: chunk TYPE: nonzero padding (damaged data)" fofdump --check padded.bin
    fails "foflink: pad.bin: chunk TYPE: nonzero padding (damaged data)" foflink pad.bin -o padded-b.bin
    [ ! -e padded-b.bin ]
}

@test "a stream cut inside a chunk passed on is truncated, through files and pipes" {
    tree_stream
    vel=$(chunk_offset t.bin VEL)
    head -c $((vel + 64 + 700000)) t.bin >cut.bin
    fails "foflink: cut.bin: truncated stream: chunk VEL at byte $vel claims $(stored t.bin "$vel") bytes of payload, the file holds 700000 more" foflink cut.bin
    # from a pipe into a pipe: nothing (the next stage meets the same end); into a file: one line
    run -1 --separate-stderr bash -c 'set -o pipefail; cat cut.bin | foflink | cat >/dev/null'
    [ -z "$stderr" ]
    run -1 --separate-stderr bash -c 'cat cut.bin | foflink >out.bin'
    [ "$stderr" = "foflink: stdin: the stream stops inside a chunk payload at byte $((vel + 64 + 700000)) (the program writing the pipe stopped)" ]
    no_partial_output 1 foflink cut.bin
}
