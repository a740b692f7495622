#!/usr/bin/env bats
# progress.bats - progress on a terminal: shown on stderr when it is a terminal (after a second, or always with FOFKIT_PROGRESS=always), never otherwise, never with -v.

bats_require_minimum_version 1.5.0
load ref_helpers

# Runs a command with a terminal on stdin, stdout and stderr; what the terminal got is in tty.out.
on_tty() {
    command -v script >/dev/null || skip "no script(1)"
    script -qfec "$*" /dev/null >tty.out
}


@test "a terminal gets a progress line redrawn in place, erased at the end; the output is the same" {
    mkuniverse -n 20000 -s 3 | tipsy2bin | kdbuild -o t.bin
    foflink t.bin -o plain.bin
    on_tty FOFKIT_PROGRESS=always foflink t.bin -o tty.bin
    cmp plain.bin tty.bin
    grep -q $'\r\033\\[Kfoflink: reading: ' tty.out
    grep -q 'reading: [0-9.]* [kM]*B of [0-9.]* kB (' tty.out  # the input's size, a file
    grep -q $'\r\033\\[Kfoflink: linking' tty.out
    # the last thing written erases the line
    [ "$(tail -c 4 tty.out | od -An -c | tr -d ' ')" = '\r033[K' ]
    on_tty FOFKIT_PROGRESS=always groups -m 8 --format=grp -o g.grp plain.bin
    grep -q $'\r\033\\[Kgroups: reading: ' tty.out
}

@test "no progress without a terminal, with -v, with FOFKIT_PROGRESS=0, or in a short run" {
    mkuniverse -n 20000 -s 3 | tipsy2bin | kdbuild -o t.bin
    FOFKIT_PROGRESS=always foflink t.bin -o out.bin 2>err.txt
    [ ! -s err.txt ]
    on_tty FOFKIT_PROGRESS=0 foflink t.bin -o out.bin
    [ ! -s tty.out ]
    on_tty foflink t.bin -o out.bin
    [ ! -s tty.out ]
    on_tty FOFKIT_PROGRESS=always foflink -v t.bin -o out.bin
    ! grep -q $'\r' tty.out
    grep -q "foflink: linked on the [CG]PU" tty.out # whichever device the run chose
}
