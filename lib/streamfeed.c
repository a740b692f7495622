/* streamfeed.c - a stream read on a thread of its own, each chunk handed to the stage as it comes, the stage told when what it needs has come. */
#include "streamfeed.h"

#include <pthread.h>
#include <stdlib.h>

#include "clock.h"

struct fk_feed {
    fk_reader *r;
    fk_feed_take take;
    fk_feed_ready ready;
    void *ctx;
    pthread_t th;
    int apart;          /* reading on a thread of its own */
    pthread_mutex_t mu;
    pthread_cond_t cv;  /* ready said yes, or the end */
    int yes;            /* ready said yes */
    int done, st;       /* the end reached (or a failure), its status */
    double ended;       /* when (fk_now) */
    fk_error err;
};

/* The reading loop: each chunk taken, then ready asked until it says yes. */
static void *feed_loop(void *arg)
{
    fk_feed *f = arg;
    fk_error err = {0};
    fk_chunk c;
    int st;
    int yes = 0;
    while ((st = fk_reader_next(f->r, &c, &err)) == 1) {
        if ((st = f->take(f->ctx, f->r, &c, &err)) != FK_OK) break;
        if (!yes && f->ready && (yes = f->ready(f->ctx)) != 0) {
            pthread_mutex_lock(&f->mu);
            f->yes = 1;
            pthread_cond_broadcast(&f->cv);
            pthread_mutex_unlock(&f->mu);
        }
    }
    pthread_mutex_lock(&f->mu);
    f->st = st < 0 ? st : FK_OK;
    if (f->st) f->err = err;
    f->done = 1;
    f->ended = fk_now();
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

int fk_feed_start(fk_feed **out, fk_reader *r, fk_feed_take take, fk_feed_ready ready, void *ctx, fk_error *err)
{
    fk_feed *f = calloc(1, sizeof *f);
    *out = NULL;
    if (!f) return fk_fail(err, FK_ENOMEM, "out of memory for the input's reader");
    f->r = r, f->take = take, f->ready = ready, f->ctx = ctx;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    f->apart = pthread_create(&f->th, NULL, feed_loop, f) == 0;
    if (!f->apart) feed_loop(f);
    *out = f;
    return FK_OK;
}

int fk_feed_wait(fk_feed *f)
{
    pthread_mutex_lock(&f->mu);
    while (!f->yes && !f->done) pthread_cond_wait(&f->cv, &f->mu);
    const int yes = f->yes && !(f->done && f->st); /* what came before a failure is not worked on */
    pthread_mutex_unlock(&f->mu);
    return yes;
}

int fk_feed_done(fk_feed *f)
{
    pthread_mutex_lock(&f->mu);
    const int done = f->done;
    pthread_mutex_unlock(&f->mu);
    return done;
}

int fk_feed_join(fk_feed *f, double *ended, fk_error *err)
{
    if (f->apart) pthread_join(f->th, NULL);
    if (ended) *ended = f->ended;
    const int st = f->st;
    if (st) *err = f->err;
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
    free(f);
    return st;
}
