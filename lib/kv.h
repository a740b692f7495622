/* kv.h - "key value" text records, the payload of the stream's metadata chunks. */
#ifndef FK_KV_H
#define FK_KV_H

#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A metadata chunk is UTF-8 text, one "key value" pair a line: the key is
 * [a-z0-9_]+, one space, then the value (the rest of the line). Readers
 * ignore keys they do not know, so stages can add keys without breaking
 * older readers. Numbers are written so that they read back exactly
 * (doubles with %.17g). */

/* A growing text buffer to build a record. */
typedef struct fk_kvbuf {
    char *text;
    size_t len, cap;
    int failed; /* an allocation failed: fk_kv_finish reports it */
} fk_kvbuf;

void fk_kv_init(fk_kvbuf *b);
void fk_kv_str(fk_kvbuf *b, const char *key, const char *value);
void fk_kv_u64(fk_kvbuf *b, const char *key, uint64_t value);
void fk_kv_dbl(fk_kvbuf *b, const char *key, double value);
/* Returns the finished text (caller frees) in *text, or FK_ENOMEM. */
int fk_kv_finish(fk_kvbuf *b, char **text, fk_error *err);

/* Lookups in a record. what names the record in messages ("SNAP chunk").
 * Missing keys and malformed values are FK_EFORMAT errors. */
int fk_kv_get_str(const char *text, const char *key, char *out, size_t outsize, const char *what, fk_error *err);
int fk_kv_get_u64(const char *text, const char *key, uint64_t *out, const char *what, fk_error *err);
int fk_kv_get_dbl(const char *text, const char *key, double *out, const char *what, fk_error *err);
/* 1 if key is present, 0 if not. */
int fk_kv_has(const char *text, const char *key);

#ifdef __cplusplus
}
#endif

#endif
