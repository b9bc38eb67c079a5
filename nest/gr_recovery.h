/*
 * DOC: Graceful restart recovery (`bird -R`) and the `graceful restart`
 * shutdown; see nest/gr_recovery.c.
 */
#ifndef NEST_GR_RECOVERY_H
#define NEST_GR_RECOVERY_H

#include "lib/birdlib.h"
#include "lib/lists.h"
#include "lib/loop.h"

struct cli;

/* A protocol waiting for the end of the recovery; owner: the protocol. */
struct gr_waiter {
  struct lnode n;             /* under the module's mutex */
  struct loop *loop;
  struct event *ev;           /* sent to loop when the recovery ends */
};

/* Main loop, at start-up before the first config commit; wait in seconds
 * (0: BIRD's default 240). */
void gr_recovery_start(u32 wait);
/* After the first commit: ends the recovery if nobody took a lock. */
void gr_recovery_check(void);
int gr_recovery_active(void);             /* any loop */
/* Locks: take in the main loop before the protocol starts; release
 * anywhere; the last release ends the recovery. */
void gr_recovery_lock(void);
void gr_recovery_unlock(void);
/* Returns 0 when the recovery is over already (no event will come). */
int gr_recovery_wait(struct gr_waiter *w);
void gr_recovery_cancel(struct gr_waiter *w);
/* `show status` lines (0024), main loop. */
void gr_recovery_show(struct cli *c);

/* `graceful restart`: shut down so that neighbors keep our routes (BGP
 * closes without NOTIFICATION). */
void gr_shutdown_request(void);
int gr_shutdown_requested(void);

#endif
