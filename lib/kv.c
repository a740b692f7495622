/* kv.c - building and reading "key value" metadata records. */
#include "kv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fk_kv_init(fk_kvbuf *b)
{
    b->text = NULL;
    b->len = b->cap = 0;
    b->failed = 0;
}

static void append(fk_kvbuf *b, const char *key, const char *value)
{
    size_t need = strlen(key) + strlen(value) + 3;
    if (b->failed) return;
    if (b->len + need > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->len + need) cap *= 2;
        char *t = realloc(b->text, cap);
        if (!t) {
            b->failed = 1;
            return;
        }
        b->text = t;
        b->cap = cap;
    }
    b->len += (size_t)sprintf(b->text + b->len, "%s %s\n", key, value);
}

void fk_kv_str(fk_kvbuf *b, const char *key, const char *value)
{
    /* A value is one line: newlines would start a new key. */
    char clean[1024];
    snprintf(clean, sizeof clean, "%s", value);
    for (char *p = clean; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    append(b, key, clean);
}

void fk_kv_u64(fk_kvbuf *b, const char *key, uint64_t value)
{
    char s[32];
    snprintf(s, sizeof s, "%" PRIu64, value);
    append(b, key, s);
}

void fk_kv_dbl(fk_kvbuf *b, const char *key, double value)
{
    char s[40];
    snprintf(s, sizeof s, "%.17g", value);
    append(b, key, s);
}

int fk_kv_finish(fk_kvbuf *b, char **text, fk_error *err)
{
    *text = NULL;
    if (b->failed || (!b->text && !(b->text = calloc(1, 1)))) {
        free(b->text);
        fk_kv_init(b);
        return fk_fail(err, FK_ENOMEM, "out of memory");
    }
    *text = b->text;
    fk_kv_init(b);
    return FK_OK;
}

/* Finds the value of key: a pointer into text and its length, or NULL. */
static const char *find(const char *text, const char *key, size_t *len)
{
    size_t kl = strlen(key);
    for (const char *p = text; p && *p;) {
        const char *eol = strchr(p, '\n');
        size_t ll = eol ? (size_t)(eol - p) : strlen(p);
        if (ll > kl && strncmp(p, key, kl) == 0 && p[kl] == ' ') {
            *len = ll - kl - 1;
            return p + kl + 1;
        }
        p = eol ? eol + 1 : NULL;
    }
    return NULL;
}

int fk_kv_has(const char *text, const char *key)
{
    size_t len;
    return find(text, key, &len) != NULL;
}

int fk_kv_get_str(const char *text, const char *key, char *out, size_t outsize, const char *what, fk_error *err)
{
    size_t len;
    const char *v = find(text, key, &len);
    if (!v) return fk_fail(err, FK_EFORMAT, "%s lacks the key '%s'", what, key);
    if (len >= outsize) return fk_fail(err, FK_EFORMAT, "%s: value of '%s' is too long", what, key);
    memcpy(out, v, len);
    out[len] = '\0';
    return FK_OK;
}

int fk_kv_get_u64(const char *text, const char *key, uint64_t *out, const char *what, fk_error *err)
{
    char s[64], *end;
    int st = fk_kv_get_str(text, key, s, sizeof s, what, err);
    if (st) return st;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end || errno)
        return fk_fail(err, FK_EFORMAT, "%s: '%s' is not a count: '%s'", what, key, s);
    *out = v;
    return FK_OK;
}

int fk_kv_get_dbl(const char *text, const char *key, double *out, const char *what, fk_error *err)
{
    char s[64], *end;
    int st = fk_kv_get_str(text, key, s, sizeof s, what, err);
    if (st) return st;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v))
        return fk_fail(err, FK_EFORMAT, "%s: '%s' is not a finite number: '%s'", what, key, s);
    *out = v;
    return FK_OK;
}
