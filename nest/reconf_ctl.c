/*
 * DOC: Configure requests: one reconfiguration at a time, a queue of one,
 * undo and the undo timeout (main loop).
 *
 * This follows BIRD 2's conf.c state machine, since its replies are what
 * `configure` prints:
 *
 * - A reconfiguration is "in progress" from its commit until every
 *   protocol acknowledged its new config (config_commit_wait's event) and
 *   none is on its way down any more (protos_wait_settled), BIRD's config
 *   obstacles. A request meanwhile is queued; a newer one replaces it.
 *   Once settled, the queued one is committed.
 * - The config running before the last commit is kept for `configure
 *   undo`, after any commit, with or without a timeout; an undo can be
 *   done once. `configure` drops it before reading the new file (so a file
 *   that fails to parse leaves nothing to undo, as in BIRD), unless a
 *   reconfiguration is in progress.
 * - `timeout N` arms a timer that undoes unless `configure confirm` stops
 *   it first; confirm leaves the undo possible.
 *
 * The session that asked for a commit gets its final reply once the
 * protocols acknowledged (the caller's done event); BIRD, single-threaded,
 * knows that at once.
 */
#include "nest/reconf.h"
#include "nest/proto.h"
#include "nest/cli.h"
#include "lib/log.h"
#include "lib/loop.h"

enum future_kind { FUTURE_NONE, FUTURE_CONFIG, FUTURE_UNDO };

static struct {               /* owner: main loop */
  int configuring;            /* a commit not yet acknowledged and settled */
  int result;                 /* CONF_DONE or CONF_PROGRESS of that commit */
  uint changed;               /* protocols it started, stopped or restarted */
  struct event *reply;        /* the requester's done event, or NULL */
  struct event acked_ev, settled_ev;
  enum future_kind future;
  struct config *future_config;   /* FUTURE_CONFIG, referenced */
  struct config *old;         /* undo target, referenced, or NULL */
  int undo_available;
  struct timer undo_timer;
  int ready;
  void (*notify)(void);       /* told when the undo timer fires */
} ctl;

static void ctl_acked(void *data);
static void ctl_settled(void *data);
static void ctl_timeout(struct timer *t);

static void
ctl_init(void)
{
  if (ctl.ready)
    return;
  ev_init(&ctl.acked_ev, ctl_acked, NULL);
  ev_init(&ctl.settled_ev, ctl_settled, NULL);
  tm_init(&ctl.undo_timer, main_loop(), ctl_timeout, NULL);
  ctl.ready = 1;
}

/* Commit c (reference taken over); undo: c is the undo target. */
static void
ctl_commit(struct config *c, int undo, struct event *reply)
{
  struct config *prev = config_running();
  if (undo) {
    ctl.old = NULL;           /* c is it; the undone config is not kept */
    c->soft = 0;              /* it may have come in softly; its undo is not */
  }
  else {
    if (ctl.old)
      config_unref(ctl.old);
    config_ref(prev);
    ctl.old = prev;
  }
  log_msg(L_INFO, "Reconfiguring");
  ctl.configuring = 1;
  ctl.reply = reply;
  ctl.changed = config_commit_wait(c, &ctl.acked_ev);
}

static void
ctl_acked(void *data)
{
  (void) data;
  /* A restart a protocol's loop asked for may be over already, but BIRD,
   * single-threaded, never finishes one before it replies. */
  ctl.result = (protos_reconfig_restarts() || (ctl.changed && !protos_all_settled())) ? CONF_PROGRESS : CONF_DONE;
  struct event *r = ctl.reply;
  ctl.reply = NULL;
  if (r)
    ev_send(main_loop(), r);
  protos_wait_settled(&ctl.settled_ev);
}

static void
ctl_settled(void *data)
{
  (void) data;
  ctl.configuring = 0;
  log_msg(L_INFO, "Reconfigured");
  enum future_kind f = ctl.future;
  ctl.future = FUTURE_NONE;
  if (f == FUTURE_NONE)
    return;
  if (config_shutting_down()) {
    if (ctl.future_config)
      config_unref(ctl.future_config);
    ctl.future_config = NULL;
    return;
  }
  log_msg(L_INFO, "Reconfiguring to queued configuration");
  if (f == FUTURE_UNDO) {
    if (ctl.old)
      ctl_commit(ctl.old, 1, NULL);
    return;
  }
  struct config *c = ctl.future_config;
  ctl.future_config = NULL;
  ctl_commit(c, 0, NULL);
}

static void
ctl_timeout(struct timer *t)
{
  (void) t;
  log_msg(L_INFO, "Config timeout expired, starting undo");
  if (ctl.notify)
    ctl.notify();
  if (config_undo(NULL) < 0)
    log_msg(L_ERR, "Undo request failed");
}

void
config_free_old(void)
{
  ctl_init();
  if (ctl.configuring)
    return;                   /* BIRD: the old config still has obstacles */
  tm_stop(&ctl.undo_timer);
  ctl.undo_available = 0;
  if (ctl.old)
    config_unref(ctl.old);
  ctl.old = NULL;
}

int
config_request(struct config *c, uint timeout, struct event *done)
{
  ctl_init();
  if (config_shutting_down()) {
    config_unref(c);
    return CONF_SHUTDOWN;
  }
  ctl.undo_available = 1;
  if (timeout)
    tm_start(&ctl.undo_timer, (btime) timeout * S_ 1);
  else
    tm_stop(&ctl.undo_timer);
  if (ctl.configuring) {
    if (ctl.future == FUTURE_NONE)
      log_msg(L_INFO, "Queueing new configuration");
    else
      log_msg(L_INFO, "Queueing new configuration, ignoring the one already queued");
    if (ctl.future_config)
      config_unref(ctl.future_config);
    ctl.future = FUTURE_CONFIG;
    ctl.future_config = c;
    return CONF_QUEUED;
  }
  ctl_commit(c, 0, done);
  return CONF_PROGRESS;
}

int
config_undo(struct event *done)
{
  ctl_init();
  if (config_shutting_down())
    return CONF_SHUTDOWN;
  if (!ctl.undo_available || !ctl.old)
    return CONF_NOTHING;
  ctl.undo_available = 0;
  tm_stop(&ctl.undo_timer);
  if (ctl.configuring) {
    if (ctl.future != FUTURE_NONE) {
      if (ctl.future_config)
        config_unref(ctl.future_config);
      ctl.future_config = NULL;
      ctl.future = FUTURE_NONE;
      log_msg(L_INFO, "Removing queued configuration");
      return CONF_UNQUEUED;
    }
    log_msg(L_INFO, "Queueing undo configuration");
    ctl.future = FUTURE_UNDO;
    return CONF_QUEUED;
  }
  ctl_commit(ctl.old, 1, done);
  return CONF_PROGRESS;
}

int
config_confirm(void)
{
  ctl_init();
  if (!tm_active(&ctl.undo_timer))
    return CONF_NOTHING;
  tm_stop(&ctl.undo_timer);
  return CONF_CONFIRM;
}

int
config_status(void)
{
  if (config_shutting_down())
    return CONF_SHUTDOWN;
  if (ctl.configuring)
    return ctl.future != FUTURE_NONE ? CONF_QUEUED : CONF_PROGRESS;
  return CONF_DONE;
}

int config_commit_result(void) { return ctl.result; }

btime
config_undo_remains(void)
{
  return ctl.ready && tm_active(&ctl.undo_timer) ? tm_remains(&ctl.undo_timer) : -1;
}

void config_set_undo_notify(void (*fn)(void)) { ctl.notify = fn; }
