/*
 * DOC: Protocol lifecycle.
 *
 * The main loop owns the list of protocol instances and decides when each
 * starts, stops, restarts or takes a new config. The work itself happens
 * in the protocol's loop: the main loop sends start/stop/reconfigure
 * events there; the protocol reports its state with proto_notify_state(),
 * which sends notify_ev back. Reaching Down ends a run: the protocol loop
 * has flushed its channels' routes by then, the main loop stops the loop,
 * frees the run's pool and either starts again, deletes the instance, or
 * leaves it down.
 *
 * Reconfiguration is asynchronous too; protos_commit() counts the
 * outstanding acknowledgements so that `configure` can answer only when
 * every protocol has applied (or refused) its new config.
 */
#include <fnmatch.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "nest/proto.h"
#include "nest/reconf.h"
#include "conf/conf.h"
#include "lib/log.h"
#include "lib/printf.h"
#include "lib/timeutil.h"

const char *const proto_state_names[PS_MAX] = { "down", "start", "up", "stop" };

static struct lnode protos = { &protos, &protos };
static uint reconf_pending;          /* main */
static struct event *reconf_done;    /* main: sent when reconf_pending drops to 0 */
static uint reconf_restarts;         /* main: restarts the loops asked for since protos_commit() */
static struct event *settled_ev;     /* main: sent once protos_all_settled() holds */

struct lnode *proto_list(void) { return &protos; }
uint protos_reconfig_restarts(void) { return reconf_restarts; }

struct proto *
proto_find_by_name(const char *name)
{
  LIST_WALK_ENTRY(p, &protos, struct proto, n)
    if (!strcmp(p->name, name))
      return p;
  return NULL;
}

const struct proto_status *
proto_status(struct proto *p)
{
  return rcu_dereference(p->status);
}

/* --- Protocol loop side --- */

static void
proto_status_free_rcu(struct rcu_head *h)
{
  free(caa_container_of(h, struct proto_status, rcu));
}

void
proto_set_info(struct proto *p, const char *fmt, ...)
{
  struct proto_status *s = calloc(1, sizeof(*s));
  if (!s)
    return;
  va_list args;
  va_start(args, fmt);
  bvsnprintf(s->info, sizeof(s->info), fmt, args);
  va_end(args);
  struct proto_status *old = rcu_xchg_pointer(&p->status, s);
  if (old)
    call_rcu(&old->rcu, proto_status_free_rcu);
}

void channel_down(struct channel *c);

void
proto_notify_state(struct proto *p, enum proto_state s)
{
  ASSERT_INSIDE(p->loop);
  enum proto_state old = uatomic_read(&p->req_state);
  LIST_WALK_ENTRY(c, &p->channels, struct channel, n) {
    if (s == PS_UP && !c->disabled)
      channel_up(c);
    else if (s == PS_START && old == PS_UP)
      channel_pause(c);
    else if (s == PS_DOWN)
      channel_down(c);
  }
  uatomic_set(&p->req_state, s);
  ev_send(main_loop(), &p->notify_ev);
}

void
proto_notify_restart(struct proto *p)
{
  ASSERT_INSIDE(p->loop);
  uatomic_set(&p->req_restart, 1);
  ev_send(main_loop(), &p->notify_ev);
}

static void
proto_start_hook(void *data)
{
  struct proto *p = data;
  proto_notify_state(p, p->class->start(p));
}

static void
proto_stop_hook(void *data)
{
  struct proto *p = data;
  enum proto_state s = p->class->shutdown ? p->class->shutdown(p) : PS_DOWN;
  proto_notify_state(p, s);
}

static void
proto_reconf_hook(void *data)
{
  struct proto *p = data;
  struct proto_config *nc = p->reconf_cf;
  /* Channels first, so the protocol sees their new preference and policy.
   * A changed export filter refeeds right there; a changed import filter
   * needs the protocol to send its routes again (or a restart). */
  u32 reload = 0, i = 0;
  int restart = 0;
  LIST_WALK_ENTRY(c, &p->channels, struct channel, n) {
    /* by name too: a pipe has two channels of one net type */
    LIST_WALK_ENTRY(cc, &nc->channels, struct channel_config, n)
      if (cc->net_type == c->net_type && !strcmp(cc->name, c->name)) {
        int r = channel_reconfigure(c, cc, nc->global->soft);
        if (r < 0)
          restart = 1;
        else if (r)
          reload |= 1U << MIN(i, 31);
      }
    i++;
  }
  int ok = !restart && p->class->reconfigure ? p->class->reconfigure(p, nc) : 0;
  /* a channel with an import table reloads from it; others need the
   * protocol to resend */
  i = 0;
  LIST_WALK_ENTRY(c, &p->channels, struct channel, n) {
    if (ok && (reload & (1U << MIN(i, 31))) && !c->in_table && !p->class->reload_routes)
      ok = 0;
    i++;
  }
  if (ok && reload) {
    i = 0;
    LIST_WALK_ENTRY(c, &p->channels, struct channel, n) {
      if (reload & (1U << MIN(i, 31)))
        chan_reload_in(c);
      i++;
    }
  }
  if (ok)
    p->pcf = nc;
  uatomic_set(&p->reconf_result, ok ? 1 : -1);
  ev_send(main_loop(), &p->reconf_done_ev);
}

/* --- Main loop side --- */

static void
proto_set_state_main(struct proto *p, enum proto_state s)
{
  if (p->state == s)
    return;
  p->state = s;
  p->last_state_change = time_real_now();
  if (p->debug & D_STATES)
    log_msg(L_TRACE, "%s: State changed to %s", p->name, proto_state_names[s]);
}


static struct proto_run_info *proto_run_plain(void);

static void
proto_start(struct proto *p)
{
  ASSERT_INSIDE(main_loop());
  char err[256];
  if (p->class->init && p->class->init(p, err, sizeof(err)) < 0) {
    log_msg(L_ERR, "%s: %s", p->name, err);
    p->message = mb_strdup(p->pool, err);
    return;
  }
  p->run_pool = rp_new_child(p->pool, "run");
  p->loop = loop_new(thread_group_sched(p->cf->thread_group), p->name);
  p->pcf = p->cf;
  p->stopping = 0;
  p->restart_pending = 0;
  static u32 run_ids;         /* main loop */
  p->run_id = ++run_ids;
  p->run_info = p->class->run_info ? p->class->run_info(p) : proto_run_plain();
  list_init(&p->channels);
  LIST_WALK_ENTRY(cc, &p->cf->channels, struct channel_config, n)
    channel_new(p, cc);
  p->main_source = rt_get_source(p, 0);
  uatomic_set(&p->req_state, PS_START);
  proto_set_info(p, "");
  proto_set_state_main(p, PS_START);
  ev_send(p->loop, &p->start_ev);
}

static void
proto_stop(struct proto *p)
{
  if (!p->loop || p->stopping)
    return;
  p->stopping = 1;
  proto_set_state_main(p, PS_STOP);
  ev_send(p->loop, &p->stop_ev);
}

static void proto_free(struct proto *p);
static void proto_release(void *data);
static void protos_check_settled(void);

/* p's channel into t wrote copies (a pipe's) and some of them left. */
void
proto_copies_gone(const struct proto *p, struct rtable *t)
{
  LIST_WALK_ENTRY(q, &protos, struct proto, n)
    if (q != p && q->class->copies_gone && q->state == PS_UP && !q->stopping && q->loop)
      q->class->copies_gone(q, t);
}

/* The loop is gone: nothing runs for this protocol any more. */
static void
proto_down_done(void *data)
{
  struct proto *p = data;
  p->stopping = 0;
  LIST_WALK_ENTRY(c, &p->channels, struct channel, n) {
    rcu_read_lock();
    int copies = c->sender_id && rt_sender_origin(c->table, c->sender_id);
    rcu_read_unlock();
    if (copies)
      proto_copies_gone(p, c->table);
  }
  LIST_WALK_ENTRY_SAFE(c, &p->channels, struct channel, n)
    channel_free(c);
  rt_unlock_source(p->main_source);
  p->main_source = NULL;
  if (p->run_info)
    proto_run_info_drop(p->run_info);
  p->run_info = NULL;
  if (p->class->cleanup)
    p->class->cleanup(p);
  rfree(p->run_pool);
  p->run_pool = NULL;
  p->loop = NULL;
  if (p->config_loop)
    config_unref(p->config_loop);
  p->config_loop = NULL;
  if (p->reconfig_pending) {
    /* The loop died before acknowledging; count it as done. */
    p->reconfig_pending = 0;
    if (!--reconf_pending && reconf_done)
      ev_send(main_loop(), reconf_done);
  }
  if (p->delete_pending) {
    proto_free(p);
    protos_check_settled();
    config_shutdown_check();
    return;
  }
  if (p->restart_pending && !p->disabled && !config_shutting_down())
    proto_start(p);
  protos_check_settled();
  config_shutdown_check();
}

static void
proto_notify_hook(void *data)
{
  struct proto *p = data;
  enum proto_state s = uatomic_read(&p->req_state);
  if (!p->loop)
    return;
  if (p->stopping && s != PS_DOWN)
    return;
  /* Down once per run: the loop may notify again before it is gone */
  if (s == PS_DOWN && p->state == PS_DOWN)
    return;
  if (uatomic_xchg(&p->req_restart, 0) && p->state == s)
    p->last_state_change = time_real_now();
  proto_set_state_main(p, s);
  if (s != PS_DOWN)
    return;
  /* Stopping until proto_down_done: the loop goes away, and an event sent
   * to it now (stop, reconfigure) would stay pending for good, lost to the
   * protocol's next run too. */
  p->stopping = 1;
  loop_stop(p->loop, &p->down_ev);
  protos_check_settled();
}

/* Hold c, the config of p->cf. Only a reconfigure the loop acknowledged
 * switches its p->pcf; until then, or until the run ends, the config the
 * loop runs with stays held too: `configure undo` drops the config it
 * undoes, and a stopping protocol still reads its config. */
static void
proto_hold_config(struct proto *p, struct config *c)
{
  config_ref(c);
  if (p->loop && !p->config_loop)
    p->config_loop = p->config_held;
  else
    config_unref(p->config_held);
  p->config_held = c;
}

static void
proto_reconf_done_hook(void *data)
{
  struct proto *p = data;
  if (!p->reconfig_pending)
    return;
  p->reconfig_pending = 0;
  if (uatomic_read(&p->reconf_result) > 0) {
    /* the loop switched over to the config handed to it */
    struct config **old = p->config_loop ? &p->config_loop : &p->config_held;
    config_unref(*old);
    *old = p->reconf_config;
  } else {
    proto_hold_config(p, p->reconf_config);
    config_unref(p->reconf_config);
  }
  p->reconf_config = NULL;
  if (uatomic_read(&p->reconf_result) < 0)
    reconf_restarts++;
  if (uatomic_read(&p->reconf_result) < 0 && p->cf->spawned_from) {
    /* As BIRD: its peer connects again and spawns a fresh instance. */
    log_msg(L_INFO, "Removing protocol %s", p->name);
    p->delete_pending = 1;
    proto_stop(p);
  } else if (uatomic_read(&p->reconf_result) < 0) {
    log_msg(L_INFO, "Restarting protocol %s", p->name);
    p->restart_pending = 1;
    proto_stop(p);
  }
  if (!--reconf_pending && reconf_done)
    ev_send(main_loop(), reconf_done);
}

u32 proto_debug_gen;

void
proto_debug_set(struct proto *p, u32 mask)
{
  uatomic_set(&p->debug, mask);
  uatomic_add_return(&proto_debug_gen, 1);    /* a full barrier: the mask first */
}

void
proto_channel_debug_set(struct proto *p, uint net_type, u32 mask)
{
  uatomic_set(&p->chan_debug[net_type], mask);
  uatomic_add_return(&proto_debug_gen, 1);
}

/* The masks of a config: the protocol's and its channel blocks' (as BIRD,
 * a `debug` command lasts until the next configure). */
static void
proto_debug_config(struct proto *p, const struct proto_config *pc)
{
  for (uint t = 0; t < NET_MAX; t++)
    uatomic_set(&p->chan_debug[t], 0);
  LIST_WALK_ENTRY(cc, &pc->channels, struct channel_config, n)
    uatomic_set(&p->chan_debug[cc->net_type], cc->debug);
  proto_debug_set(p, pc->debug);
}

/* The new protocol goes after `after` in the list (`show protocols`
 * order), at the end when NULL. */
static struct proto *
proto_new(struct proto_config *pc, struct lnode *after)
{
  pool *pl = rp_new(root_pool(), MEM_PROTOCOLS, pc->name);
  static u32 proto_ids;       /* main loop */
  struct proto *p = mb_allocz(pl, pc->class->proto_size);
  p->id = ++proto_ids;
  p->src_refs = 1;
  ev_init(&p->free_ev, proto_release, p);
  p->pool = pl;
  p->class = pc->class;
  p->name = mb_strdup(pl, pc->name);
  p->cf = pc;
  proto_debug_config(p, pc);
  p->config_held = pc->global;
  config_ref(pc->global);
  p->disabled = pc->disabled;
  p->created = p->last_state_change = time_real_now();
  list_init(&p->channels);
  ev_init(&p->start_ev, proto_start_hook, p);
  ev_init(&p->stop_ev, proto_stop_hook, p);
  ev_init(&p->reconf_ev, proto_reconf_hook, p);
  ev_init(&p->notify_ev, proto_notify_hook, p);
  ev_init(&p->reconf_done_ev, proto_reconf_done_hook, p);
  ev_init(&p->down_ev, proto_down_done, p);
  chan_limit_init(p);
  if (after)
    list_insert_after(after, &p->n);
  else
    list_add_tail(&protos, &p->n);
  return p;
}

/* The last source of a deleted protocol is gone (main loop). */
static void
proto_release(void *data)
{
  struct proto *p = data;
  struct proto_status *st = rcu_xchg_pointer(&p->status, NULL);
  if (st)
    call_rcu(&st->rcu, proto_status_free_rcu);
  rfree(p->pool);
}

/* The config goes now: it holds the tables, whose teardown frees the
 * routes that hold the sources. */
static void
proto_free(struct proto *p)
{
  list_del(&p->n);
  config_unref(p->config_held);
  p->config_held = NULL;
  if (p->reconf_config)
    config_unref(p->reconf_config);
  p->reconf_config = NULL;
  proto_src_unref(p);
}

void
proto_src_unref(struct proto *p)
{
  if (!uatomic_sub_return(&p->src_refs, 1))
    ev_send(main_loop(), &p->free_ev);
}

void proto_run_info_hold(struct proto_run_info *ri) { uatomic_inc(&ri->uc); }

/* A table by its id, not its address: a table gone, another may come at
 * its address while routes of the run live on. */
struct proto_run_home {
  struct proto_run_home *next;
  u32 table_id;
};

void
proto_run_home_add(struct proto_run_info *ri, const struct rtable *t)
{
  ASSERT_INSIDE(main_loop());
  if (!ri || proto_run_home(ri, t))
    return;
  struct proto_run_home *h = mem_alloc_shared(MEM_PROTOCOLS, sizeof(*h));
  h->table_id = t->id;
  h->next = ri->home;
  rcu_assign_pointer(ri->home, h);
}

int
proto_run_home(const struct proto_run_info *ri, const struct rtable *t)
{
  for (const struct proto_run_home *h = ri ? rcu_dereference(ri->home) : NULL; h; h = rcu_dereference(h->next))
    if (h->table_id == t->id)
      return 1;
  return 0;
}

static void proto_run_plain_free(struct proto_run_info *ri) { mem_free_shared(MEM_PROTOCOLS, ri, sizeof(*ri)); }

/* The run's info for a class that keeps none of its own. */
static struct proto_run_info *
proto_run_plain(void)
{
  struct proto_run_info *ri = mem_alloc_shared(MEM_PROTOCOLS, sizeof(*ri));
  memset(ri, 0, sizeof(*ri));
  ri->uc = 1;
  ri->free = proto_run_plain_free;
  return ri;
}

static void
proto_run_info_free_rcu(struct rcu_head *h)
{
  struct proto_run_info *ri = caa_container_of(h, struct proto_run_info, rcu);
  for (struct proto_run_home *x = ri->home, *n; x; x = n) {
    n = x->next;
    mem_free_shared(MEM_PROTOCOLS, x, sizeof(*x));
  }
  ri->free(ri);
}

/* Readers reach it through a route's source and hold no reference of
 * their own: the free waits for their read sections to end. */
void
proto_run_info_drop(struct proto_run_info *ri)
{
  if (!uatomic_sub_return(&ri->uc, 1))
    call_rcu(&ri->rcu, proto_run_info_free_rcu);
}

static int
channels_compatible(struct proto_config *a, struct proto_config *b)
{
  if (list_length(&a->channels) != list_length(&b->channels))
    return 0;
  LIST_WALK_ENTRY(ca, &a->channels, struct channel_config, n) {
    int found = 0;
    LIST_WALK_ENTRY(cb, &b->channels, struct channel_config, n)
      if (ca->net_type == cb->net_type && !strcmp(ca->table->name, cb->table->name))
        found = 1;
    if (!found)
      return 0;
  }
  return 1;
}

static int
str_equal(const char *a, const char *b)
{
  return a == b || (a && b && !strcmp(a, b));
}

/* Try to give a running protocol its new config; 0 = must restart. */
static int
proto_reconfigure(struct proto *p, struct proto_config *nc)
{
  struct proto_config *oc = p->cf;
  if (oc->class != nc->class || !channels_compatible(oc, nc) ||
      !str_equal(oc->thread_group, nc->thread_group) || oc->router_id != nc->router_id)
    return 0;
  if (nc->disabled != oc->disabled)
    p->disabled = nc->disabled;
  p->cf = nc;
  proto_debug_config(p, nc);
  if (!p->loop || p->stopping) {
    /* Not running: the next start uses the new config. */
    proto_hold_config(p, nc->global);
    return 1;
  }
  config_ref(nc->global);
  if (p->reconf_config)
    config_unref(p->reconf_config);
  p->reconf_config = nc->global;
  p->reconf_cf = nc;
  if (!p->reconfig_pending) {
    p->reconfig_pending = 1;
    reconf_pending++;
  }
  ev_send(p->loop, &p->reconf_ev);
  return 1;
}

struct proto *
proto_spawn(struct proto_config *pc)
{
  ASSERT_INSIDE(main_loop());
  struct proto *p = proto_new(pc, NULL);
  if (!p->disabled && !config_shutting_down())
    proto_start(p);
  return p;
}

/* A spawned instance follows its parent's new config as BIRD's dynamic BGP
 * does: in place when it can, else it is removed (not restarted: its peer
 * connects again and spawns a fresh one); so is an instance whose parent
 * is gone or disabled, or that is down itself (disabled, or it could not
 * start). Returns 1 if removed. */
static uint
proto_commit_spawned(struct proto *p, struct config *new)
{
  struct symbol *s = cf_find_symbol(new, p->cf->spawned_from->name);
  struct proto_config *parent = (s && s->class == SYM_PROTO) ? s->proto : NULL;
  struct proto_config *nc = NULL;
  if (parent && parent->class == p->class && !parent->disabled && !p->disabled && p->loop)
    nc = proto_config_clone(parent, p->name, p->cf);
  if (nc && proto_reconfigure(p, nc))
    return 0;
  log_msg(L_INFO, "Removing protocol %s", p->name);
  p->delete_pending = 1;
  if (p->loop)
    proto_stop(p);
  else
    proto_free(p);
  return 1;
}

uint
protos_commit(struct config *new, struct config *old, struct event *done)
{
  uint changed = 0;
  reconf_done = done;
  reconf_restarts = 0;

  /* Existing instances: keep, reconfigure, restart or delete. */
  LIST_WALK_ENTRY_SAFE(p, &protos, struct proto, n) {
    if (p->delete_pending)
      continue;
    if (p->cf->spawned_from) {
      changed += proto_commit_spawned(p, new);
      continue;
    }
    struct symbol *s = cf_find_symbol(new, p->name);
    struct proto_config *nc = (s && s->class == SYM_PROTO) ? s->proto : NULL;
    if (nc && nc->class == p->class) {
      nc->sym->proto = nc;
      if (proto_reconfigure(p, nc)) {
        if (p->disabled && p->loop) {
          proto_stop(p);
          changed++;
        } else if (!p->disabled && !p->loop && !config_shutting_down()) {
          proto_start(p);
          changed++;
        }
        continue;
      }
      /* Incompatible: restart with the new config. */
      log_msg(L_INFO, "Restarting protocol %s", p->name);
      p->cf = nc;
      proto_debug_config(p, nc);
      p->disabled = nc->disabled;
      proto_hold_config(p, nc->global);
      changed++;
      if (p->loop) {
        p->restart_pending = 1;
        proto_stop(p);
      } else if (!p->disabled)
        proto_start(p);
      continue;
    }
    /* Gone from the config (or changed class: a new instance follows). */
    changed++;
    p->delete_pending = 1;
    if (p->loop)
      proto_stop(p);
    else
      proto_free(p);
  }

  /* New instances, as in BIRD, after the one before them in the config
   * (`show protocols` lists in config order what was added since). */
  struct lnode *after = &protos;
  LIST_WALK_ENTRY(pc, &new->protos, struct proto_config, n) {
    struct proto *p = proto_find_by_name(pc->name);
    if (p && !p->delete_pending) {
      after = &p->n;
      continue;
    }
    if (old)
      log_msg(L_INFO, "Adding protocol %s", pc->name);
    p = proto_new(pc, after);
    after = &p->n;
    changed++;
    if (!p->disabled && !config_shutting_down())
      proto_start(p);
  }
  if (!reconf_pending && done)
    ev_send(main_loop(), done);
  return changed;
}

void
proto_cmd_disable(struct proto *p, const char *msg)
{
  p->disabled = 1;
  p->message = msg ? mb_strdup(p->pool, msg) : NULL;
  proto_stop(p);
}

void
proto_cmd_enable(struct proto *p)
{
  p->disabled = 0;
  if (p->loop)
    p->restart_pending = 1;     /* still stopping: come back up afterwards */
  else if (!config_shutting_down())
    proto_start(p);
}

void
proto_cmd_restart(struct proto *p, const char *msg)
{
  p->message = msg ? mb_strdup(p->pool, msg) : NULL;
  if (p->disabled)
    return;
  if (p->loop) {
    p->restart_pending = 1;
    proto_stop(p);
  } else
    proto_start(p);
}

int
protos_all_down(void)
{
  LIST_WALK_ENTRY(p, &protos, struct proto, n)
    if (p->loop)
      return 0;
  return 1;
}

int
protos_all_settled(void)
{
  LIST_WALK_ENTRY(p, &protos, struct proto, n)
    /* Down with its loop going counts as settled, as before stopping
     * lasted until proto_down_done */
    if ((p->stopping && p->state != PS_DOWN) || p->restart_pending || p->state == PS_STOP)
      return 0;
  return 1;
}

static void
protos_check_settled(void)
{
  if (settled_ev && protos_all_settled()) {
    struct event *e = settled_ev;
    settled_ev = NULL;
    ev_send(main_loop(), e);
  }
}

void
protos_wait_settled(struct event *ev)
{
  settled_ev = ev;
  protos_check_settled();
}

int
protos_all_announced(uint *count)
{
  int done = 1;
  *count = 0;
  LIST_WALK_ENTRY(p, &protos, struct proto, n)
    if (p->class->announced && !p->disabled) {
      (*count)++;
      if (p->state != PS_UP || !p->class->announced(p))
        done = 0;
    }
  return done;
}

void
protos_shutdown(void)
{
  LIST_WALK_ENTRY(p, &protos, struct proto, n) {
    p->restart_pending = 0;
    proto_stop(p);
  }
}

void
protos_dump(void)
{
  LIST_WALK_ENTRY(p, &protos, struct proto, n) {
    debug_msg("%s: %s class %s %s\n", p->name, proto_state_names[p->state], p->class->name,
              p->disabled ? "disabled" : "");
    if (p->class->dump && p->loop)
      debug_msg("  (details are dumped by the protocol loop)\n");
  }
}

