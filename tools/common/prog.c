/* prog.c - messages, exit codes, option parsing and output handling shared by the programs. */
#define _POSIX_C_SOURCE 200809L
#include "prog.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "version.h"

const char *prog_name = "fofkit";
int prog_verbose = 0;
static double t_start;
static int progress_shown;
static const char *prog_file; /* what the program reads (or, reading nothing, writes), for messages */
static const char *prog_outpath; /* -o, as given */

static void on_signal(int sig)
{
    fk_output_cleanup_all();
    signal(sig, SIG_DFL);
    raise(sig);
}

void prog_init(const char *name)
{
    prog_name = name;
    t_start = prog_now();
    atexit(prog_progress_clear);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* Whether message m names what it is about first: "NAME: ..." with a name
 * without blanks (a file, "stdin", "stdout"), or an option ("--box=0: ..."). */
static int names_itself(const char *m)
{
    if (prog_file) {
        size_t n = strlen(prog_file);
        if (!strncmp(m, prog_file, n) && m[n] == ':') return 1;
    }
    const char *colon = strstr(m, ": ");
    return colon && colon > m && !memchr(m, ' ', (size_t)(colon - m));
}

static void vmessage(const char *fmt, va_list ap)
{
    prog_progress_clear();
    fflush(stdout);
    fprintf(stderr, "%s: ", prog_name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

/* An error: "PROG: FILE: what went wrong (what to do)", the file being the
 * one the program reads (prog_input) when the message does not name one. */
static void verror(const char *fmt, va_list ap)
{
    char m[1024];
    vsnprintf(m, sizeof m, fmt, ap);
    prog_progress_clear();
    fflush(stdout);
    if (prog_file && !names_itself(m))
        fprintf(stderr, "%s: %s: %s\n", prog_name, prog_file, m);
    else
        fprintf(stderr, "%s: %s\n", prog_name, m);
}

void prog_input(const char *name)
{
    prog_file = name && strcmp(name, "-") ? name : "stdin";
}

void prog_die(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(fmt, ap);
    va_end(ap);
    fk_output_cleanup_all();
    exit(status);
}

/* Whether the program's output goes into a pipe (stdout, a FIFO). */
static int writes_to_pipe(void)
{
    struct stat sb;
    return (!prog_outpath || !strcmp(prog_outpath, "-")) && fstat(STDOUT_FILENO, &sb) == 0 && S_ISFIFO(sb.st_mode);
}

void prog_fail(const fk_error *err)
{
    /* A pipe that stops early: the program writing it stopped, and said why
     * if it was one of ours. In the middle of a pipeline this stage says
     * nothing more (the next one would say the same); the last one, writing
     * elsewhere, says it in one line. */
    if (err->code == FK_ECUT && !prog_verbose && writes_to_pipe()) {
        fk_output_cleanup_all();
        exit(EXIT_DATA);
    }
    int status = EXIT_DATA;
    if (err->code == FK_ENOMEM || err->code == FK_EDEVICE) status = EXIT_RESOURCE;
    prog_die(status, "%s", err->msg[0] ? err->msg : fk_strstatus(err->code));
}

void prog_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
    fprintf(stderr, "Try '%s --help' for more information.\n", prog_name);
    fk_output_cleanup_all();
    exit(EXIT_USAGE);
}

void prog_info(const char *fmt, ...)
{
    if (!prog_verbose) return;
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
}

void prog_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
}

void prog_progress_clear(void)
{
    if (!progress_shown) return;
    fputs("\r\033[K", stderr);
    progress_shown = 0;
}

/* Human units: 1.23 GB, 456 MB, 7.8 kB, 12 B. */
static void human(char *buf, size_t size, double v)
{
    static const char *u[] = {"B", "kB", "MB", "GB", "TB"};
    int k = 0;
    while (v >= 1000 && k < 4) v /= 1000, k++;
    snprintf(buf, size, k ? "%.3g %s" : "%.0f %s", v, u[k]);
}

void prog_progress(const char *what, uint64_t done, uint64_t total)
{
    static int mode = -1; /* 0 off, 1 after a second, 2 always */
    static double last;
    if (mode < 0) {
        const char *e = getenv("FOFKIT_PROGRESS");
        mode = e && !strcmp(e, "0") ? 0 : e && !strcmp(e, "always") ? 2 : 1;
        if (!isatty(STDERR_FILENO)) mode = 0;
    }
    if (mode == 0 || prog_verbose) return;
    double t = prog_now();
    int phase = done == 0 && total == 0; /* a new phase: shown at once */
    if ((mode == 1 && t - t_start < 1.0) || (progress_shown && t - last < 0.25 && !phase)) return;
    last = t;
    if (phase) {
        fprintf(stderr, "\r\033[K%s: %s", prog_name, what);
        fflush(stderr);
        progress_shown = 1;
        return;
    }
    char d[32], tot[32], rate[32];
    human(d, sizeof d, (double)done);
    human(rate, sizeof rate, done / (t - t_start + 1e-9));
    if (total) {
        human(tot, sizeof tot, (double)total);
        fprintf(stderr, "\r\033[K%s: %s: %s of %s (%.0f%%), %s/s", prog_name, what, d, tot,
                100.0 * (double)done / (double)total, rate);
    } else {
        fprintf(stderr, "\r\033[K%s: %s: %s, %s/s", prog_name, what, d, rate);
    }
    fflush(stderr);
    progress_shown = 1;
}

void prog_progress_reader(void *ctx, uint64_t offset)
{
    fk_reader *r = ctx;
    prog_progress("reading", offset, fk_reader_size(r));
}

double prog_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The numbers v with lo <= v <= hi (lo < v when above), in words, so that
 * the message says what the check does: "from 0.01 to 1000", "above 0",
 * "at least 0" (a bound of DBL_MAX or beyond is no bound). */
static void range_words(char *buf, size_t size, double lo, double hi, int above)
{
    const int top = hi < DBL_MAX, bottom = lo > -DBL_MAX;
    if (above)
        snprintf(buf, size, top ? "above %g and at most %g" : "above %g", lo, hi);
    else if (bottom && top)
        snprintf(buf, size, "from %g to %g", lo, hi);
    else if (bottom)
        snprintf(buf, size, "at least %g", lo);
    else
        snprintf(buf, size, top ? "at most %g" : "any number", hi);
}

static double parse_number(const char *opt, const char *arg, double lo, double hi, int above)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (end == arg || *end || errno == ERANGE || !isfinite(v))
        prog_usage("option %s needs a number, not '%s'", opt, arg);
    if ((above ? !(v > lo) : v < lo) || v > hi) {
        char r[128];
        range_words(r, sizeof r, lo, hi, above);
        prog_usage("option %s: %s is out of range (it must be %s)", opt, arg, r);
    }
    return v;
}

double prog_parse_double(const char *opt, const char *arg, double lo, double hi)
{
    return parse_number(opt, arg, lo, hi, 0);
}

double prog_parse_positive(const char *opt, const char *arg, double hi)
{
    return parse_number(opt, arg, 0, hi, 1);
}

long long prog_parse_int(const char *opt, const char *arg, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(arg, &end, 10);
    if (end == arg || *end || errno == ERANGE) prog_usage("option %s needs a whole number, not '%s'", opt, arg);
    if (v < lo || v > hi) prog_usage("option %s: %s is out of range [%lld, %lld]", opt, arg, lo, hi);
    return v;
}

int prog_parse_list(const char *opt, const char *arg, double *out, int max, double lo, double hi)
{
    char buf[1024];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", arg);
    char *save = NULL;
    if (buf[0] == '\0' || buf[strlen(buf) - 1] == ',' || buf[0] == ',' || strstr(buf, ",,"))
        prog_usage("option %s needs a comma-separated list of numbers, not '%s'", opt, arg);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == max) prog_usage("option %s takes at most %d values", opt, max);
        out[n++] = prog_parse_double(opt, t, lo, hi);
    }
    return n;
}

int prog_std_option(int c, const char *arg, prog_std *o, void (*help)(void), char *const *argv)
{
    switch (c) {
    case 'h':
        help();
        if (fflush(stdout) != 0 || ferror(stdout)) prog_die(EXIT_DATA, "stdout: cannot write: %s", strerror(errno));
        exit(EXIT_OK);
    case 'V':
        printf("%s (fofkit) %s\n", prog_name, FK_VERSION);
        if (fflush(stdout) != 0 || ferror(stdout)) prog_die(EXIT_DATA, "stdout: cannot write: %s", strerror(errno));
        exit(EXIT_OK);
    case 'v':
        prog_verbose = 1;
        return 1;
    case 'f':
        o->force = 1;
        return 1;
    case 'o':
        if (arg[0] == '-' && arg[1] != '\0') prog_usage("option -o needs a file name, not '%s'", arg);
        if (arg[0] == '\0') prog_usage("option -o needs a file name");
        o->output = prog_outpath = arg;
        return 1;
    case 'z':
        o->zlevel = arg ? (int)prog_parse_int("--compress", arg, 1, 9) : 6;
        return 1;
    case ':':
        prog_usage("option '%s' needs a value", argv[optind - 1]);
    case '?':
        if (optopt) prog_usage("unknown option '-%c'", optopt);
        prog_usage("unknown option '%s'", argv[optind - 1]);
    }
    return 0;
}

const char *prog_one_input(int argc, char **argv, int optind_)
{
    if (optind_ >= argc) return "-";
    if (argc - optind_ > 1) prog_usage("too many input files (one at most, or '-' for stdin)");
    return argv[optind_];
}

fk_output *prog_open_output(const prog_std *o, int binary)
{
    fk_error err = {0};
    fk_output *out;
    if (fk_output_open(&out, o->output, binary, o->force, &err)) prog_fail(&err);
    if (!prog_file) { /* a program that reads nothing: what it makes */
        static char made[512];
        snprintf(made, sizeof made, "%s", fk_output_name(out));
        prog_file = made;
    }
    return out;
}

FILE *prog_open_input(const char *path, int binary, int force)
{
    fk_error err = {0};
    FILE *f;
    prog_input(path);
    if (fk_input_open(&f, path, binary, force, &err)) prog_fail(&err);
    return f;
}

void prog_commit(fk_output *out)
{
    fk_error err = {0};
    if (fk_output_commit(out, &err)) prog_fail(&err);
}

void prog_filter_open(prog_filter *f, const char *input, const prog_std *std)
{
    fk_error err = {0};
    f->name = strcmp(input, "-") ? input : "stdin";
    f->in = prog_open_input(input, 1, std->force);
    f->out = prog_open_output(std, 1);
    if (fk_filter_start(&f->f, f->in, f->name, fk_output_file(f->out), std->zlevel, &err)) prog_fail(&err);
    fk_reader_set_progress(f->f.r, prog_progress_reader, f->f.r);
}

void prog_filter_close(prog_filter *f)
{
    fk_error err = {0};
    if (fk_filter_finish(&f->f, &err)) prog_fail(&err);
    f->waited = fk_reader_waited(f->f.r);
    prog_commit(f->out);
    fk_filter_free(&f->f);
    fk_input_close(f->in);
}
