/* fuzz_stream.c - fuzz harness: the stream reader on every chunk type, its pass-through to a writer, and a reread. */
#include "fuzz.h"
#include "groups.h"
#include "kdtree.h"
#include "kv.h"
#include "snap.h"
#include "stream.h"

/* The input is a whole stream (build with -DFK_FUZZ_NO_CRC so that CRCs do
 * not stop mutations at the door). Each chunk is, in turn, skipped, loaded
 * (text chunks loaded as text and parsed by the reader of their tag: SNAP,
 * TREE, GRPS, the key lookups of LINK and HCOL) or copied to a writer, as the
 * programs do. Byte 12 of the stream header (reserved, ignored by readers)
 * chooses the writer's compression and where the cycle of actions starts.
 * When the whole input reads, the stream written is read back: the same
 * chunks in the same order. */

#define MAX_CHUNKS 64

typedef struct seen {
    char tag[FK_TAG_MAX + 1], dtype[5];
    uint64_t nrows;
    uint32_t ncols, level;
} seen;

static void parse_text(const fk_chunk *c, const char *text)
{
    fk_error err = {0};
    int st = FK_OK;
    if (strcmp(c->tag, "SNAP") == 0) {
        fk_snap s;
        st = fk_snap_parse(text, &s, "fuzz", &err);
    } else if (strcmp(c->tag, "TREE") == 0) {
        fk_tree t;
        st = fk_tree_parse(text, &t, "fuzz", &err);
    } else if (strcmp(c->tag, "GRPS") == 0) {
        fk_groups g;
        st = fk_groups_parse(text, &g, "fuzz", &err);
    } else {
        /* LINK, HCOL and the rest: lookups as halostats and fofdump do them. */
        static const char *keys[] = {"l", "b", "psi", "periodic", "box", "method", "levels", "columns", "G"};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            double d;
            uint64_t u;
            char s[64];
            fk_error e1 = {0}, e2 = {0}, e3 = {0};
            FUZZ_ASSERT_ERR(fk_kv_get_dbl(text, keys[k], &d, "fuzz", &e1), e1);
            FUZZ_ASSERT_ERR(fk_kv_get_u64(text, keys[k], &u, "fuzz", &e2), e2);
            FUZZ_ASSERT_ERR(fk_kv_get_str(text, keys[k], s, sizeof s, "fuzz", &e3), e3);
        }
    }
    FUZZ_ASSERT_ERR(st, err);
}

/* Reads the stream in f; writes what it reads to w (if not NULL). Returns
 * the number of chunks, or -1 when the stream is refused. */
static int read_stream(FILE *f, fk_writer *w, unsigned cycle, seen *log)
{
    fk_reader *r;
    fk_error err = {0};
    int st = fk_reader_open(&r, f, "fuzz", &err);
    FUZZ_ASSERT_ERR(st, err);
    if (st) return -1;
    fk_chunk c;
    int nchunks = 0;
    while ((st = fk_reader_next(r, &c, &err)) == 1) {
        st = FK_OK;
        FUZZ_ASSERT(fk_dtype_size(c.dtype) > 0 && c.ncols > 0);
        if (log && nchunks < MAX_CHUNKS) {
            seen *s = &log[nchunks];
            memcpy(s->tag, c.tag, sizeof s->tag);
            memcpy(s->dtype, c.dtype, sizeof s->dtype);
            s->nrows = c.nrows;
            s->ncols = c.ncols;
            s->level = c.level;
        }
        unsigned action = (cycle + (unsigned)nchunks++) % 3;
        if (action == 1 && (c.flags & FK_CF_TEXT)) {
            char *text;
            st = fk_reader_load_text(r, &text, &err);
            if (st == FK_OK) {
                FUZZ_ASSERT(strlen(text) == fk_chunk_rawsize(&c));
                parse_text(&c, text);
                if (w) st = fk_writer_text(w, c.tag, c.level, text, &err);
                free(text);
            }
        } else if (action == 1) {
            void *buf;
            st = fk_reader_load(r, &buf, &err);
            if (st == FK_OK) {
                fk_chunk out = c;
                out.flags &= ~FK_CF_ZLIB;
                if (w) st = fk_writer_put(w, &out, buf, &err);
                free(buf);
            }
        } else if (action == 2 && w) {
            st = fk_writer_copy(w, r, &c, &err);
        } else if (w) {
            st = fk_writer_copy(w, r, &c, &err); /* skipped by the reader of the reread */
        }
        if (st) break;
    }
    FUZZ_ASSERT_ERR(st, err);
    fk_reader_close(r);
    return st < 0 ? -1 : nchunks;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned mode = size > 12 ? data[12] : 0;
    FILE *f = fuzz_memfile(data, size);
    if (!f) return 0;
    char *out = NULL;
    size_t outlen = 0;
    FILE *o = open_memstream(&out, &outlen);
    if (!o) abort();
    fk_writer *w;
    fk_error err = {0};
    if (fk_writer_open(&w, o, (mode & 1) ? 1 : 0, &err)) abort();
    static seen first[MAX_CHUNKS], again[MAX_CHUNKS];
    int n = read_stream(f, w, mode >> 1, first);
    fclose(f);
    int fin = n >= 0 ? fk_writer_finish(w, &err) : FK_OK;
    fk_writer_free(w);
    FUZZ_ASSERT(fclose(o) == 0);
    if (n >= 0) {
        /* What the writer wrote reads back, chunk for chunk, each chunk
         * read the same way (a chunk passed through unread, say text with a
         * NUL byte, is checked by the stage that reads it, not here). */
        FUZZ_ASSERT(fin == FK_OK);
        FILE *g = fuzz_memfile((const uint8_t *)out, outlen);
        if (!g) abort();
        int m = read_stream(g, NULL, mode >> 1, again);
        fclose(g);
        FUZZ_ASSERT(m == n);
        for (int i = 0; i < n && i < MAX_CHUNKS; i++) {
            FUZZ_ASSERT(strcmp(first[i].tag, again[i].tag) == 0 && strcmp(first[i].dtype, again[i].dtype) == 0);
            FUZZ_ASSERT(first[i].nrows == again[i].nrows && first[i].ncols == again[i].ncols);
            FUZZ_ASSERT(first[i].level == again[i].level);
        }
    }
    free(out);
    return 0;
}
