/* test_stream.c - round trips and damage detection for the stream format (raw and compressed). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kv.h"
#include "stream.h"

/* Writes a stream of a text chunk and a float array to a memory file. */
static char *make_stream(int zlevel, size_t *len, const float *arr, uint64_t n)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    fk_writer *w;
    fk_error err = {0};
    CHECK(fk_writer_open(&w, f, zlevel, &err) == FK_OK);
    CHECK(fk_writer_text(w, "META", 0, "n 5\nname test\n", &err) == FK_OK);
    fk_chunk c;
    fk_chunk_init(&c, "POS", "<f4", FK_CF_PARTICLE, n, 3);
    CHECK(fk_writer_put(w, &c, arr, &err) == FK_OK);
    CHECK(fk_writer_finish(w, &err) == FK_OK);
    fk_writer_free(w);
    fclose(f);
    return buf;
}

/* Reads a stream back; returns the status of the first failure (or FK_OK)
 * and the message in err. */
static int read_stream(const char *buf, size_t len, const float *expect, uint64_t n, fk_error *err)
{
    FILE *f = fmemopen((void *)buf, len, "rb");
    fk_reader *r;
    int st = fk_reader_open(&r, f, "mem", err);
    if (st) {
        fclose(f);
        return st;
    }
    fk_chunk c;
    int chunks = 0;
    while ((st = fk_reader_next(r, &c, err)) == 1) {
        chunks++;
        if (strcmp(c.tag, "META") == 0) {
            char *text;
            if ((st = fk_reader_load_text(r, &text, err))) break;
            uint64_t v = 0;
            CHECK(fk_kv_get_u64(text, "n", &v, "META", err) == FK_OK && v == 5);
            free(text);
        } else if (strcmp(c.tag, "POS") == 0) {
            CHECK(c.nrows == n && c.ncols == 3 && (c.flags & FK_CF_PARTICLE));
            float *got;
            if ((st = fk_reader_load(r, (void **)&got, err))) break;
            CHECK(memcmp(got, expect, n * 12) == 0);
            free(got);
        }
    }
    if (st == 0) CHECK(chunks == 2);
    fk_reader_close(r);
    fclose(f);
    return st;
}

int main(void)
{
    const uint64_t n = 100000;
    float *arr = malloc(n * 12);
    for (uint64_t i = 0; i < 3 * n; i++) arr[i] = (float)(i % 977) * 0.25f - 3.0f;
    for (int z = 0; z <= 6; z += 6) {
        size_t len;
        char *buf = make_stream(z, &len, arr, n);
        fk_error err = {0};
        CHECK(len % 64 == 0);
        CHECK_MSG(read_stream(buf, len, arr, n, &err) == 0, "%s", err.msg);
        if (z) CHECK(len < n * 12); /* compressed */
        /* every header and payload starts on a 64-byte boundary: POS payload at 64+64+64+64 */
        if (!z) CHECK(memcmp(buf + 256, arr, 12) == 0);

        /* truncation anywhere is an error, never a success */
        for (size_t cut = 0; cut < len; cut += (cut < 300 ? 1 : 4099)) {
            fk_error e2 = {0};
            int st = read_stream(buf, cut, arr, n, &e2);
            CHECK_MSG(st < 0, "cut at %zu read as valid", cut);
        }
        /* a flipped bit anywhere in headers or payload is caught */
        size_t spots[] = {3, 70, 100, 130, 200, 260, len / 2, len - 70};
        for (size_t k = 0; k < sizeof spots / sizeof spots[0]; k++) {
            buf[spots[k]] ^= 0x10;
            fk_error e2 = {0};
            CHECK_MSG(read_stream(buf, len, arr, n, &e2) < 0, "flip at %zu not detected", spots[k]);
            buf[spots[k]] ^= 0x10;
        }
        /* trailing garbage after END */
        char *more = malloc(len + 1);
        memcpy(more, buf, len);
        more[len] = 'x';
        fk_error e3 = {0};
        CHECK(read_stream(more, len + 1, arr, n, &e3) == FK_EFORMAT);
        CHECK(strstr(e3.msg, "after the END") != NULL);
        free(more);
        free(buf);
    }
    /* empty input and wrong magic */
    fk_error e = {0};
    CHECK(read_stream("", 0, arr, n, &e) == FK_EFORMAT && strstr(e.msg, "empty"));
    fk_error_clear(&e);
    char junk[64] = "this is not a stream at all, just some text that goes on......";
    CHECK(read_stream(junk, 64, arr, n, &e) == FK_EFORMAT && strstr(e.msg, "magic"));
    free(arr);
    CHECK_DONE();
}
