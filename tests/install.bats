#!/usr/bin/env bats
# install.bats - make install puts the programs and man pages under PREFIX; make uninstall removes them and the directories install made, and nothing else.

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    # the build the tests run (build/, or build-asan/ under make check-asan), as it was built
    local bin
    bin=$(dirname "$(command -v foflink)")
    B=${bin%/bin}
    CUDA=1
    [ -e "$B/lib/gpu_none.o" ] && CUDA=0
    ROOT=$BATS_TEST_DIRNAME/..
}

mk() {
    make --no-print-directory -C "$ROOT" B="$B" CUDA="$CUDA" "$@"
}

@test "install then uninstall into a new prefix leaves nothing, not even the directories" {
    mk install PREFIX="$PWD/p" >make.log
    for p in tipsy2bin gadget2bin hdf52bin kdbuild foflink groups halostats halomf fofdump mkuniverse fofmap; do
        [ -x "p/bin/$p" ]
        [ -f "p/share/man/man1/$p.1" ]
    done
    [ -f p/share/man/man5/fofstream.5 ]
    p/bin/foflink --version | grep -q '^foflink (fofkit) '
    # a second install over the first changes nothing that uninstall would leave
    mk install PREFIX="$PWD/p" >>make.log
    mk uninstall PREFIX="$PWD/p" >>make.log
    [ ! -e p ]
}

@test "uninstall keeps the directories that were there before, and what else they hold" {
    mkdir -p q/bin q/share/man/man1
    echo mine >q/bin/other
    echo mine >q/share/man/man1/other.1
    mk install PREFIX="$PWD/q" >make.log
    [ -x q/bin/groups ]
    mk uninstall PREFIX="$PWD/q" >>make.log
    [ "$(cd q && find . | sort | tr '\n' ' ')" = ". ./bin ./bin/other ./share ./share/man ./share/man/man1 ./share/man/man1/other.1 " ]
    # an empty directory that was there before stays too
    rm q/bin/other
    mk install PREFIX="$PWD/q" >>make.log
    mk uninstall PREFIX="$PWD/q" >>make.log
    [ -d q/bin ]
    [ ! -e q/share/man/man5 ]
}
