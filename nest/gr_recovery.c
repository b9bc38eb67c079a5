/*
 * DOC: Graceful restart recovery (`bird -R`): the restarting speaker's side.
 *
 * After a restart in which forwarding went on, the neighbors (GR helpers)
 * keep our routes and wait for our End-of-RIB. Our tables are empty at
 * first, so exporting right away would tell them to drop most of what
 * they kept. Protocols that take part (BGP with `graceful restart on`)
 * therefore hold one recovery lock per channel, taken in the main loop
 * before they start, and defer all their exports, End-of-RIB included,
 * until the recovery ends: when the last lock is released (each neighbor
 * sent its End-of-RIB) or when `graceful restart wait` runs out. Then every
 * waiting protocol gets its event and feeds its neighbors.
 *
 * State: the flag and the lock count are atomics, read from any loop; the
 * wait timer belongs to the main loop; waiters are a list under a mutex.
 * The shutdown flag of the `graceful restart` command lives here too.
 */
#include <pthread.h>
#include "nest/gr_recovery.h"
#include "nest/cli.h"
#include "lib/log.h"

#define GR_WAIT_DEFAULT 240

static int gr_active;             /* atomic */
static int gr_locks;              /* atomic */
static int gr_down;               /* atomic: `graceful restart` shutdown */
static u32 gr_wait;               /* main loop */
static struct timer gr_timer;     /* main loop */
static pthread_mutex_t gr_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct lnode gr_waiters = { &gr_waiters, &gr_waiters };   /* under gr_mutex */

static void
gr_recovery_done(const char *why)
{
  if (!uatomic_cmpxchg(&gr_active, 1, 0))
    return;
  log_msg(L_INFO, "Graceful restart done%s", why);
  pthread_mutex_lock(&gr_mutex);
  LIST_WALK_ENTRY_SAFE(w, &gr_waiters, struct gr_waiter, n) {
    list_del(&w->n);
    ev_send(w->loop, w->ev);
  }
  pthread_mutex_unlock(&gr_mutex);
}

static void
gr_timer_hook(struct timer *t)
{
  (void) t;
  gr_recovery_done(" (wait timer expired)");
}

void
gr_recovery_start(u32 wait)
{
  ASSERT_INSIDE(main_loop());
  gr_wait = wait ? wait : GR_WAIT_DEFAULT;
  uatomic_set(&gr_active, 1);
  log_msg(L_INFO, "Graceful restart started");
  tm_init(&gr_timer, main_loop(), gr_timer_hook, NULL);
  tm_start(&gr_timer, (btime) gr_wait * S_ 1);
}

int gr_recovery_active(void) { return uatomic_read(&gr_active); }

void
gr_recovery_lock(void)
{
  uatomic_inc(&gr_locks);
}

void
gr_recovery_unlock(void)
{
  if (!uatomic_sub_return(&gr_locks, 1))
    gr_recovery_done("");
}

/* With no protocol taking part, nothing would end the recovery but the
 * timer: the main loop checks once every protocol had its start. */
void
gr_recovery_check(void)
{
  if (!uatomic_read(&gr_locks))
    gr_recovery_done("");
}

int
gr_recovery_wait(struct gr_waiter *w)
{
  pthread_mutex_lock(&gr_mutex);
  int active = uatomic_read(&gr_active);
  if (active)
    list_add_tail(&gr_waiters, &w->n);
  pthread_mutex_unlock(&gr_mutex);
  return active;
}

void
gr_recovery_cancel(struct gr_waiter *w)
{
  pthread_mutex_lock(&gr_mutex);
  if (lnode_linked(&w->n))
    list_del(&w->n);
  pthread_mutex_unlock(&gr_mutex);
}

void
gr_recovery_show(struct cli *c)
{
  if (!gr_recovery_active())
    return;
  cli_printf(c, -24, "Graceful restart recovery in progress");
  cli_printf(c, -24, "  Waiting for %d channels to recover", uatomic_read(&gr_locks));
  cli_printf(c, -24, "  Wait timer is %t/%u", tm_remains(&gr_timer), gr_wait);
}

void gr_shutdown_request(void) { uatomic_set(&gr_down, 1); }
int gr_shutdown_requested(void) { return uatomic_read(&gr_down); }
