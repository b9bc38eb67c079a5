/*
 * DOC: Help from the pool: a loop's burst of work, cut into chunks, taken
 * by whichever threads of its scheduler are free.
 *
 * A loop with a burst of independent work (an update group running every
 * export class's filter on a step of changes) cuts it into chunks and
 * calls par_run(). The chunks go to whoever claims them first: the caller
 * itself, or the scheduler's helper loops, which the call wakes and which
 * run on threads that have nothing else to do. The caller claims chunks
 * too until none is left, then waits only for those a helper is running:
 * with every thread busy it does all of them itself, and the split costs
 * the wake-ups. par_run() returns once every chunk is done, its results
 * visible to the caller.
 *
 * A chunk's function runs on any thread, in an RCU read section, beside
 * the others: it may read what the caller reads, but write only what is
 * its chunk's alone, and use the scratch pool it is given (flushed after
 * each chunk).
 *
 * Helpers are loops of their own on the scheduler, so the pool stays as
 * big as `threads` says. A scheduler's helpers are one struct par: made
 * and sized in the main loop with the scheduler (nest/reconf.c), stopped
 * before it is freed.
 */
#ifndef LIB_PAR_H
#define LIB_PAR_H

#include "lib/loop.h"

struct par;

/* The helpers of scheduler s, none yet. Main loop. */
struct par *par_new(struct sched *s);
/* Up to n helpers take chunks from now on (the scheduler's threads but
 * the caller's). Main loop; helpers are made, never freed before
 * par_stop(). */
void par_helpers(struct par *p, uint n);
/* How many threads may run chunks of one call at once, the caller's
 * included. Any thread. */
uint par_width(const struct par *p);
/* Stop the helpers; done runs in the main loop once they are gone, and p
 * is freed. No par_run() may be under way or come. Main loop. */
void par_stop(struct par *p, struct event *done);

/* Run fn(ctx, i, tmp) for every chunk i < chunks; returns when all are
 * done. From a loop of p's scheduler (or any thread: the helpers only
 * need to run somewhere). p NULL: the caller runs them all. */
typedef void (*par_fn)(void *ctx, uint chunk, linpool *tmp);
void par_run(struct par *p, uint chunks, par_fn fn, void *ctx, linpool *tmp);

#endif
