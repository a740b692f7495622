/* test_streamfeed.c - tests of streamfeed.c: chunks taken on the feed's thread, the stage told before the stream ends, failures handed out at the join. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "streamfeed.h"

/* A writer of A, B, then (once the stage said it was told, or after 5 s) C
 * and END into a pipe. */
typedef struct source {
    int fd;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int told;       /* the stage's wait returned */
    int told_in_time;
    int ok;         /* every write succeeded */
} source;

/* the writer's checks, made by the main thread once it is joined */
#define OK(cond) (s->ok = s->ok && (cond))

static void *write_source(void *arg)
{
    source *s = arg;
    FILE *f = fdopen(s->fd, "wb");
    s->ok = f != NULL;
    fk_writer *w;
    fk_error err = {0};
    uint32_t v[4] = {1, 2, 3, 4};
    fk_chunk c;
    OK(fk_writer_open(&w, f, 0, &err) == FK_OK);
    fk_chunk_init(&c, "A", "<u4", 0, 4, 1);
    OK(fk_writer_put(w, &c, v, &err) == FK_OK);
    fk_chunk_init(&c, "B", "<u4", 0, 4, 1);
    OK(fk_writer_put(w, &c, v, &err) == FK_OK);
    fflush(f);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    pthread_mutex_lock(&s->mu);
    while (!s->told && pthread_cond_timedwait(&s->cv, &s->mu, &until) == 0) {
    }
    s->told_in_time = s->told;
    pthread_mutex_unlock(&s->mu);
    fk_chunk_init(&c, "C", "<u4", 0, 4, 1);
    OK(fk_writer_put(w, &c, v, &err) == FK_OK);
    OK(fk_writer_finish(w, &err) == FK_OK);
    fk_writer_free(w);
    if (fclose(f) != 0) s->ok = 0;
    return NULL;
}

/* What the stage reads: the chunks' tags in order, B's payload; fail_at a
 * tag whose take fails. */
typedef struct stage {
    char seen[16];
    int nseen;
    uint32_t *b;
    const char *fail_at;
    int b_came;      /* ready's copy */
    uint32_t *b_copy;
} stage;

static int take(void *ctx, fk_reader *r, const fk_chunk *c, fk_error *err)
{
    stage *s = ctx;
    if (s->nseen < 15) s->seen[s->nseen++] = c->tag[0];
    if (s->fail_at && strcmp(c->tag, s->fail_at) == 0) return fk_fail(err, FK_EFORMAT, "chunk %s refused", c->tag);
    if (strcmp(c->tag, "B") == 0) return fk_reader_load(r, (void **)&s->b, err);
    return FK_OK;
}

static int b_ready(void *ctx)
{
    stage *s = ctx;
    if (!s->b) return 0;
    s->b_came = 1, s->b_copy = s->b;
    return 1;
}

static void run(const char *fail_at, int want_ready, int want_st)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    source src = {.fd = fds[1]};
    pthread_mutex_init(&src.mu, NULL);
    pthread_cond_init(&src.cv, NULL);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, write_source, &src) == 0);
    FILE *in = fdopen(fds[0], "rb");
    fk_reader *r;
    fk_error err = {0};
    CHECK(fk_reader_open(&r, in, "pipe", &err) == FK_OK);
    stage s = {.fail_at = fail_at};
    fk_feed *feed;
    CHECK(fk_feed_start(&feed, r, take, b_ready, &s, &err) == FK_OK);
    const int ready = fk_feed_wait(feed);
    pthread_mutex_lock(&src.mu);
    src.told = 1;
    pthread_cond_broadcast(&src.cv);
    pthread_mutex_unlock(&src.mu);
    CHECK_MSG(ready == want_ready, "fail_at %s: ready %d", fail_at ? fail_at : "none", ready);
    if (ready) CHECK(s.b_came && s.b_copy[3] == 4);
    double ended = 0;
    const int st = fk_feed_join(feed, &ended, &err);
    CHECK_MSG(st == want_st, "fail_at %s: status %d: %s", fail_at ? fail_at : "none", st, err.msg);
    CHECK(ended > 0);
    pthread_join(th, NULL);
    CHECK(src.ok);
    if (!fail_at) {
        /* told while C was held back: before the stream ended */
        CHECK(src.told_in_time);
        CHECK(s.nseen == 3 && memcmp(s.seen, "ABC", 3) == 0);
    } else {
        CHECK(strstr(err.msg, "refused") != NULL);
    }
    free(s.b);
    fk_reader_close(r);
    fclose(in);
    pthread_mutex_destroy(&src.mu);
    pthread_cond_destroy(&src.cv);
}

int main(void)
{
    run(NULL, 1, FK_OK);
    run("C", 1, FK_EFORMAT); /* ready came before the failure: the stage may start, the join says no */
    run("A", 0, FK_EFORMAT); /* the failure first: nothing to start on */
    CHECK_DONE();
}
