/* prog.h - what every fofkit program shares: messages, exit codes, strict option parsing, outputs. */
#ifndef FK_PROG_H
#define FK_PROG_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "fileio.h"
#include "filter.h"
#include "snap.h"
#include "stream.h"

/* Exit statuses, documented in every man page. */
enum {
    EXIT_OK = 0,
    EXIT_DATA = 1,   /* bad input, I/O failure, anything that went wrong at run time */
    EXIT_USAGE = 2,  /* bad command line                                            */
    EXIT_RESOURCE = 3 /* out of memory, no GPU, not enough GPU memory               */
};

extern const char *prog_name;
extern int prog_verbose;

/* Names the program (for messages) and installs the signal handlers that
 * remove unfinished outputs on SIGINT, SIGTERM and SIGHUP. */
void prog_init(const char *name);

/* Names the input the program reads ("-": stdin), for the errors whose
 * message does not name a file (prog_open_input and prog_filter_open call
 * it; a program that opens its input otherwise calls it first). */
void prog_input(const char *name);

/* Prints "name: FILE: message" on stderr (FILE the input named by
 * prog_input, left out when message names a file or an option first),
 * removes unfinished outputs, exits. */
_Noreturn void prog_die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* As prog_die with a library error; the status follows the error code. */
_Noreturn void prog_fail(const fk_error *err);

/* A usage error: the message, a pointer to --help, exit status 2. */
_Noreturn void prog_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "name: message" on stderr when -v was given. */
void prog_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "name: message" on stderr, -v or not: what a user should know although
 * nothing failed (said once). */
void prog_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Progress on a terminal: when stderr is one, -v was not given and the
 * program has run for a second (FOFKIT_PROGRESS=0 never, =always from the
 * start), one line redrawn in place at most 4 times a second: what the
 * program does and how far it is. Nothing otherwise. The line is erased
 * before any other message and at exit. done and total 0 announce a phase
 * ("linking") without numbers. */
void prog_progress(const char *what, uint64_t done, uint64_t total);

/* A reader's progress callback (fk_reader_set_progress): "reading NAME",
 * bytes against the input's size when it is a file. ctx is the fk_reader. */
void prog_progress_reader(void *ctx, uint64_t offset);

/* Erases the progress line, if one is shown. */
void prog_progress_clear(void);

/* Seconds on a monotonic clock. */
double prog_now(void);

/* Strict numeric operands: the whole string must be a number within
 * [lo, hi], else a usage error naming the option. */
double prog_parse_double(const char *opt, const char *arg, double lo, double hi);

/* As prog_parse_double for a number above 0 and at most hi (DBL_MAX: no
 * bound); the message says "above 0", as the check. */
double prog_parse_positive(const char *opt, const char *arg, double hi);
long long prog_parse_int(const char *opt, const char *arg, long long lo, long long hi);

/* A list of up to max comma-separated numbers ("0.2,0.1"), each within
 * [lo, hi]; returns how many. */
int prog_parse_list(const char *opt, const char *arg, double *out, int max, double lo, double hi);

/* The options every stream program takes. */
typedef struct prog_std {
    const char *output; /* -o FILE ("-" or NULL: stdout) */
    int force;          /* -f: binary to/from a terminal  */
    int zlevel;         /* -z / --compress[=N]            */
} prog_std;

#define PROG_STD_SHORT "ho:fz::vV"
#define PROG_STD_LONG                                                                                   \
    {"help", no_argument, 0, 'h'}, {"output", required_argument, 0, 'o'}, {"force", no_argument, 0, 'f'},    \
        {"compress", optional_argument, 0, 'z'}, {"verbose", no_argument, 0, 'v'},                            \
        {"version", no_argument, 0, 'V'}

/* Handles one of the standard options (returns 1) or returns 0 for the
 * program to handle. help() prints the usage to stdout. Unknown options and
 * missing operands ('?' and ':') are reported here as usage errors. */
int prog_std_option(int c, const char *arg, prog_std *o, void (*help)(void), char *const *argv);

/* The input file from the operands left after options: none or "-" for
 * stdin, one name; more is a usage error. */
const char *prog_one_input(int argc, char **argv, int optind_);

/* Opens the output named by o->output for binary or text; exits on error. */
fk_output *prog_open_output(const prog_std *o, int binary);

/* Opens the input (exits on error). */
FILE *prog_open_input(const char *path, int binary, int force);

/* Commits the output (exits on error). */
void prog_commit(fk_output *out);

/* A stream filter: the input opened and read up to its SNAP chunk, which
 * is already written on to the output (f.w). Exits on error. */
typedef struct prog_filter {
    const char *name; /* the input's name in messages: the file, or "stdin" */
    FILE *in;
    fk_output *out;
    fk_filter f;
    double waited; /* seconds spent waiting for the input's writer, set by prog_filter_close */
} prog_filter;

void prog_filter_open(prog_filter *f, const char *input, const prog_std *std);

/* Ends the output stream (END chunk), commits it and frees f, keeping in
 * f->waited how long the input kept it waiting (a pipe: -v tells the time
 * spent waiting for the stage before apart from the work). */
void prog_filter_close(prog_filter *f);

#endif
