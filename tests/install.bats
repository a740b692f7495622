#!/usr/bin/env bats
# install.bats - make install and uninstall: the programs and man pages, the stage installed as groups and fofgroups, coreutils' groups still answering for users' names and without a terminal, groups(1) left to coreutils, ldconfig; uninstall removing the directories install made, and only those.

bats_require_minimum_version 1.5.0

REPO=$BATS_TEST_DIRNAME/..
COREUTILS=/usr/bin/groups

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    # the build the tests run (build/ or build-asan/), installed as it is: no rebuild (the GPU
    # backend as that build has it or not), no outer make's jobserver
    BIN=$(dirname "$(command -v halostats)")
    B=$(cd "$BIN/.." && pwd)
    CUDA=0
    [ -d "$B/lib/gpu" ] && CUDA=1
    unset MAKEFLAGS MFLAGS MAKELEVEL
}

# Installs into PREFIX with ARGS... (make install), quietly.
install_into() {
    local prefix=$1
    shift
    make -s -C "$REPO" B="$B" CUDA=$CUDA PREFIX="$prefix" "$@" install >install.log 2>&1 || { cat install.log; return 1; }
}

@test "make install puts every program and man page in PREFIX, the stage as groups and fofgroups; uninstall removes them" {
    install_into "$PWD/p"
    for t in tipsy2bin hdf52bin gadget2bin kdbuild foflink fofgroups halostats halomf halotree fofdump mkuniverse fofmap; do
        [ -x "p/bin/$t" ] || { echo "no $t"; return 1; }
    done
    [ "$(readlink p/bin/groups)" = fofgroups ]
    [ -f p/share/man/man1/fofgroups.1 ] && [ -f p/share/man/man1/foflink.1 ] && [ -f p/share/man/man5/fofstream.5 ]
    # groups(1) stays coreutils': the stage's page is fofgroups(1) only
    [ ! -e p/share/man/man1/groups.1 ] && [ ! -L p/share/man/man1/groups.1 ]
    [ "$(sed -n '/^\.SH NAME/{n;p;}' p/share/man/man1/fofgroups.1)" = "fofgroups \- number the friends-of-friends groups of a fofkit stream by size" ]
    # man groups: coreutils' page (when man and it are here), man fofgroups: the stage's
    if command -v man >/dev/null && [ -n "$(ls /usr/share/man/man1/groups.1* 2>/dev/null)" ]; then
        [[ "$(MANPATH="$PWD/p/share/man:/usr/share/man" man -w groups)" == /usr/share/man/man1/groups.1* ]]
        [ "$(MANPATH="$PWD/p/share/man:/usr/share/man" man -w fofgroups)" = "$PWD/p/share/man/man1/fofgroups.1" ]
    fi
    make -s -C "$REPO" B="$B" CUDA=$CUDA PREFIX="$PWD/p" uninstall
    [ -z "$(find p -type f -o -type l)" ]
    # INSTALL_GROUPS=0: the stage as fofgroups only, nothing named groups
    install_into "$PWD/q" INSTALL_GROUPS=0
    [ -x q/bin/fofgroups ] && [ ! -e q/bin/groups ] && [ ! -e q/share/man/man1/groups.1 ]
}

@test "installed first on the PATH: groups USER and a bare groups (terminal or none) are coreutils'; the pipeline's groups is fofkit's" {
    [ -x "$COREUTILS" ] || skip "no $COREUTILS"
    install_into "$PWD/p"
    local user
    user=$(id -un)
    # users' names go to coreutils' groups, with its output and status
    [ "$(PATH="$PWD/p/bin:$PATH" groups root)" = "$("$COREUTILS" root)" ]
    [ "$(PATH="$PWD/p/bin:$PATH" groups "$user" root)" = "$("$COREUTILS" "$user" root)" ]
    run -1 env PATH="$PWD/p/bin:$PATH" groups no-such-user-or-file
    [ "$output" = "groups: no-such-user-or-file: cannot open: No such file or directory" ]
    # nothing on a terminal: the user's own groups (script(1) gives the command a terminal)
    if command -v script >/dev/null; then
        [ "$(PATH="$PWD/p/bin:$PATH" script -qec groups /dev/null | tr -d '\r')" = "$("$COREUTILS")" ]
    fi
    # no terminal (cron, ssh host groups, a CI script): /dev/null, an empty pipe, a line of text
    [ "$(PATH="$PWD/p/bin:$PATH" bash -c 'groups </dev/null')" = "$("$COREUTILS")" ]
    [ "$(echo | PATH="$PWD/p/bin:$PATH" groups)" = "$("$COREUTILS")" ]
    [ "$(PATH="$PWD/p/bin:$PATH" setsid groups </dev/null 2>&1)" = "$("$COREUTILS")" ]
    # the pipeline: fofkit's stage, by either name
    mkuniverse -n 4000 -s 5 -o snap.std
    tipsy2bin snap.std | kdbuild | foflink -b 0.2 -o linked.fof
    PATH="$PWD/p/bin:$PATH" groups -m 20 --format=grp -o a.grp linked.fof
    PATH="$PWD/p/bin:$PATH" groups -m 20 <linked.fof | groups -m 20 --format=grp >b.grp
    "$BIN/groups" -m 20 --format=grp -o want.grp linked.fof
    cmp a.grp want.grp
    cmp b.grp want.grp
    # a file named like a user is a file: fofkit reads it
    cp linked.fof root
    PATH="$PWD/p/bin:$PATH" groups -m 20 --format=grp -o c.grp root
    cmp c.grp want.grp
}

@test "installed last on the PATH: coreutils' groups answers to groups, and the stage runs as fofgroups" {
    [ -x "$COREUTILS" ] || skip "no $COREUTILS"
    install_into "$PWD/p"
    [ "$(PATH="/usr/bin:/bin:$PWD/p/bin" groups root)" = "$("$COREUTILS" root)" ]
    mkuniverse -n 4000 -s 5 -o snap.std
    tipsy2bin snap.std | kdbuild | foflink -b 0.2 -o linked.fof
    PATH="/usr/bin:/bin:$PWD/p/bin" fofgroups -m 20 --format=grp -o a.grp linked.fof
    "$BIN/groups" -m 20 --format=grp -o want.grp linked.fof
    cmp a.grp want.grp
    # fofgroups never hands off: a user's name is a missing file to it
    run -1 env PATH="/usr/bin:/bin:$PWD/p/bin" fofgroups root
    [ "$output" = "fofgroups: root: cannot open: No such file or directory" ]
}

@test "install runs ldconfig as root into a directory the linker searches, never into a DESTDIR; uninstall leaves others' groups alone" {
    # a stand-in ldconfig: says p/lib is searched, and logs every other call
    printf '#!/bin/sh\nif [ "$1" = -v ]; then echo "%s: (from test)"; else echo "ran $*" >>"%s"; fi\n' \
        "$PWD/p/lib" "$PWD/ldconfig.log" >fake-ldconfig
    chmod +x fake-ldconfig
    install_into "$PWD/p" LDCONFIG="$PWD/fake-ldconfig"
    if [ "$(id -u)" = 0 ]; then
        [ "$(cat ldconfig.log)" = "ran " ]
    else
        [ ! -e ldconfig.log ]
    fi
    rm -f ldconfig.log
    # a directory it does not search: no call
    install_into "$PWD/q" LDCONFIG="$PWD/fake-ldconfig"
    [ ! -e ldconfig.log ]
    # a staging install: no call, whoever runs it
    install_into "/p" DESTDIR="$PWD/stage" LDCONFIG="$PWD/fake-ldconfig"
    [ -x stage/p/bin/fofgroups ] && [ ! -e ldconfig.log ]
    # a groups and a groups.1 that are not fofkit's links stay
    make -s -C "$REPO" B="$B" CUDA=$CUDA PREFIX="$PWD/q" uninstall
    mkdir -p q/bin q/share/man/man1
    echo theirs >q/bin/groups
    echo theirs >q/share/man/man1/groups.1
    # install does not write over another program's groups either, and says so
    install_into "$PWD/q" LDCONFIG="$PWD/fake-ldconfig"
    grep -q "q/bin/groups is another program's (coreutils'?): left as it is; the stage is fofgroups" install.log
    [ -x q/bin/fofgroups ] && [ "$(cat q/bin/groups)" = theirs ]
    make -s -C "$REPO" B="$B" CUDA=$CUDA PREFIX="$PWD/q" uninstall
    [ "$(cat q/bin/groups q/share/man/man1/groups.1)" = "theirs
theirs" ]
}

@test "install then uninstall into a new prefix leaves nothing, not even the directories" {
    install_into "$PWD/p"
    [ -x p/bin/foflink ] && [ -f p/share/man/man5/fofstream.5 ] && [ -f p/include/fofkit.h ]
    # a second install over the first changes nothing that uninstall would leave
    install_into "$PWD/p"
    make -s -C "$REPO" B="$B" CUDA=$CUDA PREFIX="$PWD/p" uninstall
    [ ! -e p ]
}

@test "uninstall keeps the directories that were there before, and what else they hold" {
    mkdir -p q/bin q/share/man/man1
    echo mine >q/bin/other
    echo mine >q/share/man/man1/other.1
    install_into "$PWD/q"
    [ -x q/bin/fofgroups ]
    make -s -C "$REPO" B="$B" CUDA=$CUDA PREFIX="$PWD/q" uninstall
    [ "$(cd q && find . | sort | tr '\n' ' ')" = ". ./bin ./bin/other ./share ./share/man ./share/man/man1 ./share/man/man1/other.1 " ]
    # an empty directory that was there before stays too
    rm q/bin/other
    install_into "$PWD/q"
    make -s -C "$REPO" B="$B" CUDA=$CUDA PREFIX="$PWD/q" uninstall
    [ -d q/bin ]
    [ ! -e q/share/man/man5 ]
}
