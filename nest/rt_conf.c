/*
 * DOC: Table configuration and the set of live tables (main loop).
 *
 * Tables are matched between configs by name and type. A table that is
 * no longer configured is deleted once its last user (channel) is gone; a
 * new one is created with its own maintenance loop on the default thread
 * group.
 */
#include <string.h>
#include "nest/rt.h"
#include "nest/rt_hostcache.h"
#include "nest/rt_trie.h"
#include "nest/reconf.h"
#include "conf/cf_context.h"
#include "lib/log.h"

static struct lnode live_tables = { &live_tables, &live_tables };
static uint tables_dying;   /* main loop: teardown scheduled, not finished */
static int tables_shut;     /* main loop: rt_shutdown() ran; configs no longer hold tables */

struct rtable_config *
rt_new_table_config(struct config *c, struct symbol *s, uint net_type)
{
  /* `ipv4 table master4 sorted;` declares the default table BIRD made
   * implicitly: it is the same table, now with options. */
  if (s->class == SYM_TABLE && s->table->implicit && s->table->net_type == net_type) {
    s->table->implicit = 0;
    return s->table;
  }
  if (s->class != SYM_VOID)
    return NULL;
  struct rtable_config *rc = lp_allocz(c->mem, sizeof(*rc));
  rc->name = s->name;
  rc->sym = s;
  rc->config = c;
  rc->net_type = net_type;
  /* BIRD 2's defaults for the wait before a ROA change reloads the
   * channels whose filters read the table (nest/channel_roa.c) */
  rc->min_settle = S_ 1;
  rc->max_settle = S_ 20;
  s->class = SYM_TABLE;
  s->table = rc;
  list_add_tail(&c->tables, &rc->n);
  if (!c->def_tables[net_type])
    c->def_tables[net_type] = rc;
  return rc;
}

void
rt_config_defaults(struct config *c)
{
  rt_new_table_config(c, cf_get_symbol(c, "master4"), NET_IP4)->implicit = 1;
  rt_new_table_config(c, cf_get_symbol(c, "master6"), NET_IP6)->implicit = 1;
}

struct lnode *rt_tables(void) { return &live_tables; }

struct rtable *
rt_find_table(const char *name)
{
  LIST_WALK_ENTRY(t, &live_tables, struct rtable, n)
    if (!t->deleted && !strcmp(t->name, name))
      return t;
  return NULL;
}

static struct rtable *
rt_table_alloc(const char *name, uint net_type, struct sched *sched)
{
  pool *p = rp_new(root_pool(), MEM_TABLES, name);
  struct rtable *t = mb_allocz(p, sizeof(struct rtable));
  t->pool = p;
  static u32 table_ids;        /* any thread: tests make tables on theirs */
  t->id = uatomic_add_return(&table_ids, 1);
  t->name = mb_strdup(p, name);
  t->net_type = net_type;
  wlock_init(&t->lock);
  list_init(&t->readers);
  pthread_mutex_init(&t->press_lock, NULL);
  char lname[128];
  snprintf(lname, sizeof(lname), "Routing table service %s", t->name);
  t->sched = sched;
  t->loop = loop_new(sched, lname);
  t->press_low = RT_PRESS_LOW;
  t->press_high = RT_PRESS_HIGH;
  t->press_auto = 1;
  ev_init(&t->cleanup_ev, rt_cleanup, t);
  rt_flush_init(t);
  tm_init(&t->cleanup_tm, t->loop, rt_cleanup_tick, t);
  rt_settle_init(t);
  rt_index_init(t);
  list_init(&t->n);
  return t;
}

/* Only IP tables keep a trie: a ROA prefix keys many nets. */
static int
rt_config_trie(const struct rtable_config *rc)
{
  return rc->trie && (rc->net_type == NET_IP4 || rc->net_type == NET_IP6);
}

static struct rtable *
rt_table_new(struct rtable_config *rc)
{
  struct rtable *t = rt_table_alloc(rc->name, rc->net_type, thread_group_sched(rc->thread_group));
  t->config = rc;
  if (rt_config_trie(rc))
    t->trie = rt_trie_new(rc->net_type);
  return t;
}

struct rtable *
rt_aux_table_new(const char *name, uint net_type)
{
  struct rtable *t = rt_table_alloc(name, net_type, thread_group_sched(NULL));
  t->aux = 1;
  return t;
}

static void
rt_table_free_done(void *data)
{
  struct rtable *t = data;
  if (uatomic_read(&t->debug) & D_STATES)
    log_msg(L_TRACE, "%s: Down", t->name);
  rt_hostcache_release(t);
  rt_senders_free(t);
  rfree(t->pool);
  tables_dying--;
  config_shutdown_check();
}

/* Runs in the table's loop: after this, nothing references the table.
 * The second for the daemon's exit (rt_shutdown()), which leaves the
 * table's routes to the process's end. */
static void
rt_table_teardown_as(struct rtable *t, int at_exit)
{
  rt_table_destroy_data(t, at_exit);
  struct event *done = mb_allocz(t->pool, sizeof(struct event));
  ev_init(done, rt_table_free_done, t);
  loop_stop(t->loop, done);
}

static void rt_table_teardown(void *data) { rt_table_teardown_as(data, 0); }
static void rt_table_teardown_exit(void *data) { rt_table_teardown_as(data, 1); }

static void
rt_table_maybe_free(struct rtable *t)
{
  if (!t->deleted || t->use_count || (t->config_refs && !tables_shut))
    return;
  list_del(&t->n);
  tables_dying++;
  struct event *e = mb_allocz(t->pool, sizeof(struct event));
  ev_init(e, tables_shut ? rt_table_teardown_exit : rt_table_teardown, t);
  ev_send(t->loop, e);
}

/* Its owner has flushed it; remaining routes are released with it. */
void
rt_aux_table_free(struct rtable *t)
{
  t->deleted = 1;
  rt_table_maybe_free(t);
}

/* After shutdown the table may be gone already; configs freed then let go. */
static void
rt_config_unref(struct rtable_config *rc)
{
  rc->table_ref = 0;
  if (tables_shut)
    return;
  rc->table->config_refs--;
  rt_table_maybe_free(rc->table);
}

void rt_lock_table(struct rtable *t) { t->use_count++; }

void
rt_unlock_table(struct rtable *t)
{
  t->use_count--;
  rt_table_maybe_free(t);
}

/* What a running table takes of its config at every commit. */
static void
rt_table_options(struct rtable *t, const struct rtable_config *rc)
{
  uatomic_set(&t->debug, rc->debug);
  uatomic_set(&t->press_low, rc->cork_high ? rc->cork_low : RT_PRESS_LOW);
  uatomic_set(&t->press_high, rc->cork_high ? rc->cork_high : RT_PRESS_HIGH);
  uatomic_set(&t->press_auto, !rc->cork_high);
  rt_settle_set(t, rc->export_settle, rc->rr_settle);
  /* a loop stays on the threads it was made on */
  if (thread_group_sched(rc->thread_group) != t->sched)
    log_msg(L_WARN, "Table %s stays on thread group %s until it is made again", t->name, sched_name(t->sched));
  /* the trie holds every net from the table's start: one added later
   * would be built under the writer lock, all at once */
  if (!rt_config_trie(rc) != !t->trie)
    log_msg(L_WARN, "Table %s stays %s a trie until it is made again", t->name, t->trie ? "with" : "without");
}

void
rt_commit(struct config *new, struct config *old)
{
  (void) old;
  LIST_WALK_ENTRY(t, &live_tables, struct rtable, n)
    t->config = NULL;

  LIST_WALK_ENTRY(rc, &new->tables, struct rtable_config, n) {
    struct rtable *t = NULL;
    LIST_WALK_ENTRY(x, &live_tables, struct rtable, n)
      if (!x->deleted && !strcmp(x->name, rc->name) && x->net_type == rc->net_type) {
        t = x;
        break;
      }
    if (!t) {
      t = rt_table_new(rc);
      list_add_tail(&live_tables, &t->n);
      if (rc->debug & D_STATES)
        log_msg(L_TRACE, "%s: Started", t->name);
    }
    t->config = rc;
    rt_table_options(t, rc);
    /* `configure undo` commits an older config again: its tables may be
     * new ones by now */
    if (rc->table_ref && rc->table != t)
      rt_config_unref(rc);
    rc->table = t;
    if (!rc->table_ref) {
      t->config_refs++;
      rc->table_ref = 1;
    }
  }

  LIST_WALK_ENTRY_SAFE(t, &live_tables, struct rtable, n)
    if (!t->config && !t->deleted) {
      if (uatomic_read(&t->debug) & D_STATES)
        log_msg(L_TRACE, "%s: Removed from the config, shutting down", t->name);
      t->deleted = 1;
      rt_table_maybe_free(t);
    }
}

void
rt_config_release(struct config *c)
{
  LIST_WALK_ENTRY(rc, &c->tables, struct rtable_config, n)
    if (rc->table_ref)
      rt_config_unref(rc);
}

void
rt_shutdown(void)
{
  tables_shut = 1;
  /* Tables deleted by an earlier reconfigure too: a config kept for
   * `configure undo` held them until now. */
  LIST_WALK_ENTRY_SAFE(t, &live_tables, struct rtable, n) {
    t->config = NULL;
    t->deleted = 1;
    rt_table_maybe_free(t);
  }
}

int rt_all_gone(void) { return list_empty(&live_tables) && !tables_dying; }
