/* streamfeed.h - a stream read on a thread of its own, each chunk handed to the stage as it comes, the stage told when what it needs has come. */
#ifndef FK_STREAMFEED_H
#define FK_STREAMFEED_H

#include "error.h"
#include "stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A stage whose work can start before its input has ended (halostats -m:
 * the groups numbered and their potentials found once the IDs, SINK levels,
 * positions and masses have come, while the velocities are still read)
 * reads it through a feed: a thread of the feed's reads chunk after chunk
 * to END, handing each to take(ctx, r, c, err), which loads it (or skips
 * it) and records what it found in ctx, as a plain reading loop would, and
 * after each asks ready(ctx) whether what a piece of the stage's work needs
 * has come; the first time it says yes, ready copies what the work needs
 * out of ctx, and the stage's own thread, waiting in fk_feed_wait, goes on
 * to that work while the feed reads on. take and ready run on the feed's
 * thread only, so they need no lock; the stage touches nothing take writes
 * before fk_feed_join, but for what ready copied and the payloads loaded
 * once and for all (a second chunk of a kind is an error, not a new array).
 * take stops the feed by returning a status other than FK_OK (its err
 * filled); so does a reading error. The status and message are handed out
 * by fk_feed_join, so that a stage reports its input's errors first, as a
 * plain reading loop would, whatever its early work found.
 */

typedef struct fk_feed fk_feed;

/* Handles chunk c of r (its payload not yet read: fk_reader_load, or
 * nothing, and it is skipped). FK_OK or a failure with err filled. */
typedef int (*fk_feed_take)(void *ctx, fk_reader *r, const fk_chunk *c, fk_error *err);

/* Whether what the stage waits for has come (nonzero) yet; the first yes
 * copies it for the stage. */
typedef int (*fk_feed_ready)(void *ctx);

/* Starts reading r (after its SNAP) on a thread of its own, ready (NULL:
 * none) asked after each chunk taken until it says yes. When no thread can
 * be made, reads all of r here. The feed does not close r. FK_ENOMEM. */
int fk_feed_start(fk_feed **f, fk_reader *r, fk_feed_take take, fk_feed_ready ready, void *ctx, fk_error *err);

/* Waits until ready has said yes (1) or the stream has ended or failed
 * without it (0; a failure's status waits for fk_feed_join). */
int fk_feed_wait(fk_feed *f);

/* Whether the feed has stopped (the end of the stream, or a failure), now:
 * for early work that had better stop where the rest can take over. */
int fk_feed_done(fk_feed *f);

/* Waits for the end of the stream and frees f: FK_OK when every chunk to
 * END was taken, else the failure (of take or of reading) with err filled.
 * *ended (ended may be NULL): when the feed stopped, on clock.h's fk_now
 * clock (for a stage's -v: how much of its work the input's reading hid). */
int fk_feed_join(fk_feed *f, double *ended, fk_error *err);

#ifdef __cplusplus
}
#endif

#endif
