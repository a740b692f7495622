/* coreutils.h - groups started as coreutils' groups is used (a user's name, or nothing and no stream file on stdin): handed to coreutils. */
#ifndef GROUPS_COREUTILS_H
#define GROUPS_COREUTILS_H

/* fofkit's stage and coreutils' groups(1) share a name. When this program
 * runs as "groups" (not as "fofgroups") with no option and either no
 * operand and no file holding a fofkit stream on stdin (a terminal, a pipe,
 * /dev/null: a script's, cron's or ssh's groups), or operands that each name
 * a user and no file, it is coreutils' groups that was meant: runs the first other
 * "groups" on the PATH (else /usr/bin/groups, /bin/groups) with the same
 * arguments, and does not return. Otherwise returns, and the program is
 * fofkit's stage; also when no other groups is found (the operands are then
 * reported as missing files). */
void groups_coreutils_handoff(int argc, char **argv);

#endif
