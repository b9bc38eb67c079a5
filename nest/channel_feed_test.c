/*
 * Unit tests of an export channel's feeds against its journal: a channel
 * on a fake protocol whose export policy rejects the routes of one
 * attribute set, driven step by step in the main loop (its protocol's
 * loop here), with the table written in between as peers would. One test
 * replays a case that lost an export; one checks when a channel's exports
 * are the table's as of its reader's position; the last checks, over
 * random writes, refeeds, stalls and journal clean-ups, that the protocol
 * was told exactly what the table holds once the channel caught up;
 * another that several changes of a net read together go out as one.
 * FEED_RANDOM_ROUNDS (6) and FEED_RANDOM_SEED (1) choose its rounds, one
 * export mode after another; FEED_RANDOM_TRACE=k prints what net k was told.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "conf/conf.h"
#include "lib/loop.h"
#include "nest/channel_window.h"
#include "nest/proto.h"
#include "nest/rt.h"
#include "nest/test_attrs.h"
#include "nest/test_loops.h"
#include "nest/test_table.h"

#define FEED_NETS 8192        /* net numbers of net4(); enough for any id map */
#define FILLER_FLAPS 1000     /* over two journal blocks */

static struct ea_list *feed_rejected_attrs;
static u8 feed_exported[FEED_NETS];

static u32
net_no(const net_addr *n)
{
  return (ip4_to_u32(((const net_addr_ip4 *) n)->prefix) >> 8) & 0xffff;
}

static int
feed_preexport(struct channel *c, const struct rte *r)
{
  (void) c;
  return rte_attrs(r) == feed_rejected_attrs ? -1 : 0;
}

static void
feed_notify(struct proto *p, struct channel *c, const net_addr *n, struct rte *new, struct rte *old,
            const struct ea_list *new_src)
{
  (void) p, (void) c, (void) old, (void) new_src;
  u32 k = net_no(n);
  assert_true(k < FEED_NETS);
  feed_exported[k] = !!new;
}

static const struct proto_class feed_class = {
  .name = "FeedTest", .keyword = "feedtest", .class_id = 9,
  .rt_notify = feed_notify, .preexport = feed_preexport,
};

/* One step in the channel's loop: what the test does there, then the
 * channel's export event, as the journal's writes would have sent it. */
struct feed_step {
  struct channel *c;
  void (*what)(struct feed_step *);
  net_addr only;              /* partial refeed of this net */
  struct rte_src *src;
  struct ea_list *ok, *ok2;
  u32 gone_id;                /* step_new_routes: up to a route of this id */
  u32 next;                   /* step_new_routes: the next net number */
};

static void
feed_step_run(void *data)
{
  struct feed_step *s = data;
  if (s->what)
    s->what(s);
  s->c->export_ev.hook(s->c->export_ev.data);
}

static void
feed_step(struct feed_step *s, void (*what)(struct feed_step *))
{
  s->what = what;
  loop_call_sync(main_loop(), feed_step_run, s);
}

/* Up, with one change the reader has yet to read when the feed runs. */
static void
step_up(struct feed_step *s)
{
  channel_up(s->c);
  net_addr n;
  net4(&n, 2);
  rt_update(s->c->table, &n, s->src, NULL, s->ok, 0);
}

static u32
route_id(struct rtable *t, u32 k)
{
  net_addr n;
  net4(&n, k);
  rcu_read_lock();
  struct net *net = rt_find_net(t, &n);
  u32 id = net && net->routes ? net->routes->id : ~0U;
  rcu_read_unlock();
  return id;
}

static void
step_leave(struct feed_step *s)
{
  net_addr n;
  net4(&n, 0);
  rt_update(s->c->table, &n, s->src, NULL, NULL, 0);
  net4(&n, 3);
  for (uint i = 0; i < FILLER_FLAPS; i++)
    rt_update(s->c->table, &n, s->src, NULL, i & 1 ? s->ok : s->ok2, 0);
  chan_refeed_nets(s->c, &s->only, 1);
}

static void
step_new_routes(struct feed_step *s)
{
  net_addr n;
  for (s->next = 4; s->next < FEED_NETS;) {
    net4(&n, s->next);
    rt_update(s->c->table, &n, s->src, NULL, s->ok, 0);
    if (route_id(s->c->table, s->next++) == s->gone_id)
      break;
  }
  chan_refeed_nets(s->c, &s->only, 1);
}

/* A channel of master4 on a protocol of class pc, down; secondary: export
 * the best route the policy accepts, all_paths: every route. */
static struct channel *
feed_channel_new(const struct proto_class *pc, int secondary, int all_paths)
{
  struct proto *p = calloc(1, sizeof(*p));
  p->class = pc;
  p->name = "feedtest";
  p->loop = main_loop();
  list_init(&p->channels);
  struct channel_config *cc = calloc(1, sizeof(*cc));
  cc->name = "ipv4";
  cc->net_type = NET_IP4;
  cc->secondary = secondary;
  struct channel *c = calloc(1, sizeof(*c));
  c->name = "ipv4";
  c->proto = p;
  c->cf = cc;
  c->table = test_table();
  c->net_type = NET_IP4;
  c->out_filter = FILTER_ACCEPT;
  c->export_all_paths = all_paths;
  c->sender_id = rt_sender_add(c->table, c);
  return c;
}

static void
reader_detach(void *r)
{
  rt_reader_detach(r);
}

static void
feed_channel_free(struct channel *c)
{
  if (c->reader.table)
    loop_call_sync(main_loop(), reader_detach, &c->reader);
  rt_sender_remove(c->table, c->sender_id);
  chan_exp_free(c);
  rcu_barrier();
  free((void *) c->cf);
  free(c->proto);
  free(c);
}

/*
 * A feed marks the routes it rejects while the reader has changes to
 * read, so that one's change coming later is not counted twice. A route
 * that leaves must take its mark along: its id goes to a new route once
 * every reader passed its retirement, and a mark left over from a feed
 * before would pass the new route's change off as the feed's news. The
 * mark outlives a feed's end as long as feeds follow each other (each
 * keeps the map to its own end of the journal), which partial refeeds
 * (`rpki reload` of a few nets) make likely.
 */
static void
test_feed_mark_leaves_with_route(void **state)
{
  (void) state;
  struct rtable *t = test_table();
  struct channel *c = feed_channel_new(&feed_class, 0, 0);
  memset(feed_exported, 0, sizeof(feed_exported));

  struct proto *peer = fake_proto("peer");
  struct rte_src *src = rt_get_source(peer, 0);
  struct ea_list *ok = attrs_pref(100, 1), *ok2 = attrs_pref(100, 2);
  feed_rejected_attrs = attrs_pref(50, 3);
  struct feed_step s = { .c = c, .src = src, .ok = ok, .ok2 = ok2 };
  net4(&s.only, 1);
  net_addr n;

  /* net 0: a rejected route, net 1: an exported one; both read before
   * the feed (the reader starts at the journal's end) */
  net4(&n, 0);
  rt_update(t, &n, src, NULL, feed_rejected_attrs, 0);
  u32 gone_id = route_id(t, 0);
  net4(&n, 1);
  rt_update(t, &n, src, NULL, ok, 0);
  feed_step(&s, step_up);
  assert_true(feed_exported[1] && feed_exported[2] && !feed_exported[0]);

  /* The rejected route leaves, a few journal blocks of other changes
   * follow, and a partial feed is asked for before the reader gets to
   * them (a peer reading slowly holds the reader): that feed keeps the
   * marks to its end, past them all. */
  feed_step(&s, step_leave);
  loop_call_sync(t->loop, rt_cleanup, t);   /* ids of read blocks go back */

  /* New routes on new nets until one gets the id the rejected one had,
   * and another partial feed before they are read. */
  s.gone_id = gone_id;
  feed_step(&s, step_new_routes);
  assert_int_equal(route_id(t, s.next - 1), gone_id);   /* else nothing was tested */
  u32 k = s.next;
  for (u32 i = 4; i < k; i++)
    if (!feed_exported[i])
      fail_msg("route of net %u (id %u) not exported", i, route_id(t, i));

  for (u32 i = 0; i < k; i++) {
    net4(&n, i);
    rt_update(t, &n, src, NULL, NULL, 0);
  }
  feed_channel_free(c);
  ea_unref(ok);
  ea_unref(ok2);
  ea_unref(feed_rejected_attrs);
  rt_unlock_source(src);
  rcu_barrier();
  free(peer);
}

/*
 * A feed sends the table as it is when it walks, ahead of the changes its
 * reader has yet to read: until the reader passed them, the channel's
 * exports are not those of the table at its reader's position, and a BGP
 * update group must not hand a joining member that position as its
 * marker (the member would never get those changes). chan_export_steady()
 * says so: false at the end of a feed that ran ahead, true once the
 * reader read on, and true at the end of one that did not run ahead.
 */
static int feed_end_steady = -1;

static void
steady_feed_end(struct channel *c)
{
  feed_end_steady = chan_export_steady(c);
}

static const struct proto_class steady_class = {
  .name = "SteadyTest", .keyword = "steadytest", .class_id = 9,
  .rt_notify = feed_notify, .preexport = feed_preexport, .feed_end = steady_feed_end,
};

static int steady_after;

static void
step_refeed(struct feed_step *s)
{
  chan_refeed(s->c);
}

static void
step_steady(void *data)
{
  steady_after = chan_export_steady(data);
}

static void
test_steady_after_feed_ahead(void **state)
{
  (void) state;
  struct channel *c = feed_channel_new(&steady_class, 0, 0);
  memset(feed_exported, 0, sizeof(feed_exported));
  struct proto *peer = fake_proto("peer");
  struct rte_src *src = rt_get_source(peer, 0);
  struct ea_list *ok = attrs_pref(100, 1);
  feed_rejected_attrs = NULL;
  struct feed_step s = { .c = c, .src = src, .ok = ok };

  /* the feed meets net 2, whose change its reader has yet to read */
  feed_step(&s, step_up);
  assert_true(feed_exported[2]);
  assert_int_equal(feed_end_steady, 0);
  loop_call_sync(main_loop(), step_steady, c);
  assert_true(steady_after);

  /* a refeed with nothing unread is steady at its end */
  feed_end_steady = -1;
  feed_step(&s, step_refeed);
  assert_int_equal(feed_end_steady, 1);

  net_addr n;
  net4(&n, 2);
  rt_update(c->table, &n, src, NULL, NULL, 0);
  feed_channel_free(c);
  ea_unref(ok);
  rt_unlock_source(src);
  rcu_barrier();
  free(peer);
}

/*
 * Several changes of a net's best route that the reader finds together go
 * out as one: from the route exported before them to the one after the
 * last (nest/channel_window.h). A final route the policy rejects
 * withdraws the route exported before; a best route that came back to
 * the one exported sends nothing.
 */
static uint coal_calls[FEED_NETS];
static const struct rte *coal_old[FEED_NETS];

static void
coal_notify(struct proto *p, struct channel *c, const net_addr *n, struct rte *new, struct rte *old,
            const struct ea_list *new_src)
{
  feed_notify(p, c, n, new, old, new_src);
  u32 k = net_no(n);
  coal_calls[k]++;
  coal_old[k] = old;
}

static const struct proto_class coal_class = {
  .name = "CoalesceTest", .keyword = "coalescetest", .class_id = 9,
  .rt_notify = coal_notify, .preexport = feed_preexport,
};

static void
step_channel_up(struct feed_step *s)
{
  channel_up(s->c);
}

static const struct rte *
best_of_net(struct rtable *t, u32 k)
{
  net_addr n;
  net4(&n, k);
  rcu_read_lock();
  struct net *net = rt_find_net(t, &n);
  const struct rte *r = net ? net_best(net) : NULL;
  rcu_read_unlock();
  return r;
}

static struct two_srcs *coal_x;
static struct ea_list *coal_lo2;

/* Changes the channel reads in one pass */
static void
step_coalesce_writes(struct feed_step *s)
{
  struct rtable *t = s->c->table;
  struct two_srcs *x = coal_x;
  struct ea_list *lo2 = coal_lo2;
  net_addr n;
  net4(&n, 10);         /* replaced twice, the last rejected */
  rt_update(t, &n, x->s1, NULL, lo2, 0);
  rt_update(t, &n, x->s1, NULL, feed_rejected_attrs, 0);
  net4(&n, 11);         /* replaced twice, the last accepted */
  rt_update(t, &n, x->s1, NULL, lo2, 0);
  rt_update(t, &n, x->s1, NULL, x->lo, 0);
  net4(&n, 12);         /* a better route comes and goes */
  rt_update(t, &n, x->s2, NULL, x->hi, 0);
  rt_update(t, &n, x->s2, NULL, NULL, 0);
  net4(&n, 13);         /* replaced once */
  rt_update(t, &n, x->s1, NULL, lo2, 0);
}

/* The coalescing tests' channel (all_paths: exporting every route), the
 * attribute sets, and the first writes, before it goes up: net k gets
 * s1's route for k in [first, last], and s2's for k in [first, last2]. */
static struct channel *
coal_setup(struct two_srcs *x, int all_paths, u32 first, u32 last, u32 last2)
{
  struct channel *c = feed_channel_new(&coal_class, 0, all_paths);
  *x = two_srcs_new();
  coal_x = x;
  coal_lo2 = attrs_pref(100, 3);
  feed_rejected_attrs = attrs_pref(100, 4);
  net_addr n;
  for (u32 k = first; k <= last; k++) {
    net4(&n, k);
    rt_update(c->table, &n, x->s1, NULL, x->lo, 0);
    if (k <= last2)
      rt_update(c->table, &n, x->s2, NULL, x->hi, 0);
  }
  struct feed_step s = { .c = c };
  feed_step(&s, step_channel_up);
  memset(coal_calls, 0, sizeof(coal_calls));
  return c;
}

static void
coal_teardown(struct channel *c, struct two_srcs *x, u32 first, u32 last)
{
  net_addr n;
  for (u32 k = first; k <= last; k++) {
    net4(&n, k);
    rt_update(c->table, &n, x->s1, NULL, NULL, 0);
    rt_update(c->table, &n, x->s2, NULL, NULL, 0);
  }
  feed_channel_free(c);
  ea_unref(coal_lo2);
  ea_unref(feed_rejected_attrs);
  two_srcs_free(x);
  rcu_barrier();
}

static void
test_changes_coalesced(void **state)
{
  (void) state;
  struct two_srcs x;
  struct channel *c = coal_setup(&x, 0, 10, 13, 0);
  struct rtable *t = c->table;
  const struct rte *was[14];
  for (u32 k = 10; k <= 13; k++) {
    assert_true(feed_exported[k]);
    was[k] = best_of_net(t, k);
  }

  /* written in the channel's loop, so that it reads them all together */
  struct feed_step s = { .c = c };
  feed_step(&s, step_coalesce_writes);
  assert_ptr_equal(best_of_net(t, 12), was[12]);

  assert_int_equal(coal_calls[10], 1);
  assert_false(feed_exported[10]);
  assert_ptr_equal(coal_old[10], was[10]);
  assert_int_equal(coal_calls[11], 1);
  assert_true(feed_exported[11]);
  assert_ptr_equal(coal_old[11], was[11]);
  assert_int_equal(coal_calls[12], 0);
  assert_int_equal(coal_calls[13], 1);
  assert_int_equal(uatomic_read(&c->stats.exp_routes), 3);
  coal_teardown(c, &x, 10, 13);
}

/* More changes than a journal block holds, read in one window: each net
 * three times, 300 nets apart, the odd ones ending rejected */
#define COAL_MANY_FIRST 100
#define COAL_MANY_LAST 399

static void
step_coalesce_many(struct feed_step *s)
{
  struct rtable *t = s->c->table;
  net_addr n;
  for (uint round = 0; round < 3; round++)
    for (u32 k = COAL_MANY_FIRST; k <= COAL_MANY_LAST; k++) {
      struct ea_list *last = k % 2 ? feed_rejected_attrs : coal_x->lo;
      net4(&n, k);
      rt_update(t, &n, coal_x->s1, NULL, round == 0 ? coal_lo2 : round == 1 ? coal_x->hi : last, 0);
    }
}

static void
test_changes_coalesced_across_blocks(void **state)
{
  (void) state;
  struct two_srcs x;
  struct channel *c = coal_setup(&x, 0, COAL_MANY_FIRST, COAL_MANY_LAST, 0);
  static const struct rte *was[COAL_MANY_LAST + 1];
  for (u32 k = COAL_MANY_FIRST; k <= COAL_MANY_LAST; k++)
    was[k] = best_of_net(c->table, k);
  assert_true(3 * (COAL_MANY_LAST - COAL_MANY_FIRST + 1) > RT_JOURNAL_BLOCK);
  assert_true(3 * (COAL_MANY_LAST - COAL_MANY_FIRST + 1) <= CHAN_WINDOW);

  struct feed_step s = { .c = c };
  feed_step(&s, step_coalesce_many);
  for (u32 k = COAL_MANY_FIRST; k <= COAL_MANY_LAST; k++) {
    assert_int_equal(coal_calls[k], 1);
    assert_ptr_equal(coal_old[k], was[k]);
    assert_int_equal(feed_exported[k], !(k % 2));
  }
  assert_int_equal(uatomic_read(&c->stats.exp_routes), (COAL_MANY_LAST - COAL_MANY_FIRST + 1) / 2);
  coal_teardown(c, &x, COAL_MANY_FIRST, COAL_MANY_LAST);
}

/* A feed that ran ahead of its reader: the changes it met are read
 * alone (the feed may have sent a net's later route already), those
 * after them together again, from the first one on. The reader stood
 * right at the feed's end of the journal when the next changes came,
 * and the first of them went out alone (a pipe's peer table got a net
 * twice from four changes under `export settle time`). */
static void
step_change_thrice(struct feed_step *s)
{
  net_addr n;
  net4(&n, 13);
  rt_update(s->c->table, &n, coal_x->s1, NULL, coal_lo2, 0);
  rt_update(s->c->table, &n, coal_x->s1, NULL, coal_x->hi, 0);
  rt_update(s->c->table, &n, coal_x->s1, NULL, coal_x->lo, 0);
}

static void
test_changes_coalesced_after_feed_ahead(void **state)
{
  (void) state;
  struct two_srcs x;
  struct channel *c = feed_channel_new(&coal_class, 0, 0);
  x = two_srcs_new();
  coal_x = &x;
  coal_lo2 = attrs_pref(100, 3);
  feed_rejected_attrs = attrs_pref(100, 4);
  net_addr n;
  net4(&n, 13);
  rt_update(c->table, &n, x.s1, NULL, x.hi, 0);
  struct feed_step s = { .c = c, .src = x.s1, .ok = x.lo };
  feed_step(&s, step_up);               /* and net 2, which the feed meets */
  assert_true(feed_exported[13] && feed_exported[2]);
  assert_true(c->feed_ahead_until);     /* else nothing was tested */
  const struct rte *was = best_of_net(c->table, 13);

  memset(coal_calls, 0, sizeof(coal_calls));
  feed_step(&s, step_change_thrice);
  assert_int_equal(coal_calls[13], 1);
  assert_ptr_equal(coal_old[13], was);
  assert_int_equal(coal_calls[2], 0);
  coal_teardown(c, &x, 2, 13);
}

/* The same for a channel exporting every route (pipes, ADD-PATH): each
 * source's route of a net once. */
static void
step_coalesce_every_route(struct feed_step *s)
{
  struct rtable *t = s->c->table;
  struct two_srcs *x = coal_x;
  net_addr n;
  net4(&n, 10);         /* s1's replaced twice, the last rejected; s2's twice */
  rt_update(t, &n, x->s1, NULL, coal_lo2, 0);
  rt_update(t, &n, x->s1, NULL, feed_rejected_attrs, 0);
  rt_update(t, &n, x->s2, NULL, x->lo, 0);
  rt_update(t, &n, x->s2, NULL, x->hi, 0);
  net4(&n, 11);         /* s1's withdrawn and back (s2's keeps the net) */
  rt_update(t, &n, x->s1, NULL, NULL, 0);
  rt_update(t, &n, x->s1, NULL, x->lo, 0);
  net4(&n, 12);         /* new, and gone again */
  rt_update(t, &n, x->s2, NULL, x->hi, 0);
  rt_update(t, &n, x->s2, NULL, NULL, 0);
}

static void
test_changes_coalesced_every_route(void **state)
{
  (void) state;
  struct two_srcs x;
  struct channel *c = coal_setup(&x, 1, 10, 11, 11);
  assert_int_equal(uatomic_read(&c->stats.exp_routes), 4);

  struct feed_step s = { .c = c };
  feed_step(&s, step_coalesce_every_route);
  assert_int_equal(coal_calls[10], 2);
  assert_int_equal(coal_calls[11], 1);
  assert_true(feed_exported[11]);
  assert_int_equal(coal_calls[12], 0);
  assert_int_equal(uatomic_read(&c->stats.exp_routes), 3);
  coal_teardown(c, &x, 10, 12);
}

/* --- Random writes, refeeds, stalls and clean-ups against a model --- */

#define RND_BASE 20000        /* net numbers of the random test's nets */
#define RND_NETS 48
#define RND_SRCS 4
#define RND_ATTRS 4           /* the last one rejected by the policy */

#define RND_GHOSTS 256

struct rnd_route {
  struct rte_src *src;        /* NULL: none */
  struct ea_list *attrs;
  u32 id;                     /* the table's route: the same until every
                                 reader passed its retirement */
};

static struct rnd {
  struct channel *c;
  struct rte_src *src[RND_SRCS];
  struct ea_list *attrs[RND_ATTRS];
  int busy;                   /* the protocol holds the reader */
  int all_paths, secondary;
  int caught_up;              /* rnd_settle found the channel caught up */
  int trace;                  /* the net whose exports go to stderr, -1: none */
  uint floods, catch_ups;     /* laggard floods written, catch-ups seen */
  int flooded;                /* a flood waits for the table's clean-up */
  /* What the protocol was told: per net the exported route (every
   * route, per source, when all_paths), and the routes replaced without
   * being named. */
  struct rnd_route best[RND_NETS], path[RND_NETS][RND_SRCS], ghost[RND_NETS][RND_GHOSTS];
  uint ghosts[RND_NETS];
} rnd;

static uint
rnd_src_no(const struct rte_src *s)
{
  for (uint i = 0; i < RND_SRCS; i++)
    if (rnd.src[i] == s)
      return i;
  fail_msg("a route of no source of the test");
  return 0;
}

static int
rnd_attr_no(const struct ea_list *a)
{
  for (int i = 0; i < RND_ATTRS; i++)
    if (rnd.attrs[i] == a)
      return i;
  return -1;
}

static int
rnd_preexport(struct channel *c, const struct rte *r)
{
  (void) c;
  return rte_attrs(r) == rnd.attrs[RND_ATTRS - 1] ? -1 : 0;
}

static int
rnd_busy(struct proto *p, struct channel *c)
{
  (void) p, (void) c;
  return rnd.busy;
}

/* A route the protocol was told of and no longer holds: per net, the
 * routes replaced without being named, and whether one is among them. */
static int
rnd_ghost_take(u32 k, const struct rte *r)
{
  for (uint i = 0; i < rnd.ghosts[k]; i++)
    if (rnd.ghost[k][i].src && rnd.ghost[k][i].id == r->id) {
      memmove(&rnd.ghost[k][i], &rnd.ghost[k][i + 1], (--rnd.ghosts[k] - i) * sizeof(struct rnd_route));
      return 1;
    }
  return 0;
}

/* Most are never named: a change that goes out for a net while a feed's
 * route is the protocol's takes the export bits of the net's other routes
 * (nest/channel_export.c); the oldest make room. */
static void
rnd_ghost_add(u32 k, const struct rnd_route *r)
{
  if (rnd.ghosts[k] == RND_GHOSTS) {
    memmove(&rnd.ghost[k][0], &rnd.ghost[k][1], (RND_GHOSTS - 1) * sizeof(struct rnd_route));
    rnd.ghosts[k]--;
  }
  rnd.ghost[k][rnd.ghosts[k]++] = *r;
}

/* The protocol's view, checked against what it is told: a route goes
 * only once told it came. A route may be replaced without being named
 * (an UPDATE replaces the net's route, an ADD-PATH one its path): a
 * feed running ahead of the journal exports the successor of a route
 * whose retirement it has not read yet, and that change names the route
 * later (nest/channel_export.c). */
static void
rnd_notify(struct proto *p, struct channel *c, const net_addr *n, struct rte *new, struct rte *old,
           const struct ea_list *new_src)
{
  (void) p, (void) c, (void) new_src;
  u32 k = net_no(n) - RND_BASE;
  assert_true(k < RND_NETS);
  if (rnd.trace == (int) k)   /* FEED_RANDOM_TRACE=net: what net k was told */
    fprintf(stderr, "net %u: new %d/%d (id %u) old %d/%d (id %u), feeding %d, reader at %llu\n", k,
            new ? (int) rnd_src_no(rte_src(new)) : -1, rnd_attr_no(new ? rte_attrs(new) : NULL), new ? new->id : 0,
            old ? (int) rnd_src_no(rte_src(old)) : -1, rnd_attr_no(old ? rte_attrs(old) : NULL), old ? old->id : 0,
            c->feeding, (unsigned long long) uatomic_read(&c->reader.seq));
  struct rnd_route *now = &rnd.best[k];
  if (rnd.all_paths)
    now = &rnd.path[k][rnd_src_no(new ? rte_src(new) : rte_src(old))];
  if (old && now->src && old->id == now->id) {
    if (rte_src(old) != now->src || rte_attrs(old) != now->attrs)
      fail_msg("net %u: route %u withdrawn with other attributes than it was exported with", k, old->id);
    *now = (struct rnd_route){ 0 };
  }
  else if (old && !rnd_ghost_take(k, old))
    fail_msg("net %u: a route withdrawn (source %u) that was not exported", k, rnd_src_no(rte_src(old)));
  if (rnd.all_paths && old && new && rte_src(old) != rte_src(new))
    fail_msg("net %u: a path of source %u replaced by one of source %u", k, rnd_src_no(rte_src(old)),
             rnd_src_no(rte_src(new)));
  /* an id once a ghost's may be a new route's now */
  for (u32 i = 0; new && i < RND_NETS; i++)
    while (rnd_ghost_take(i, new))
      ;
  if (new && now->src && now->id != new->id)
    rnd_ghost_add(k, now);
  if (new)
    *now = (struct rnd_route){ rte_src(new), rte_attrs(new), new->id };
}

static const struct proto_class rnd_class = {
  .name = "FeedRandom", .keyword = "feedrandom", .class_id = 9,
  .rt_notify = rnd_notify, .preexport = rnd_preexport, .export_busy = rnd_busy,
};

static void
rnd_write(void)
{
  net_addr n;
  net4(&n, RND_BASE + random() % RND_NETS);
  struct rte_src *src = rnd.src[random() % RND_SRCS];
  struct ea_list *a = random() % 4 ? rnd.attrs[random() % RND_ATTRS] : NULL;
  rt_update(rnd.c->table, &n, src, NULL, a, 0);
}

/* One random step in the channel's loop; the export event follows. */
static void
rnd_step(struct feed_step *s)
{
  rnd.catch_ups += uatomic_read(&s->c->reader.laggard) || s->c->catchup;
  uint what = random() % 100;
  if (what < 55)
    for (uint i = random() % 12; i; i--)
      rnd_write();
  else if (what < 62)
    chan_refeed(rnd.c);
  else if (what < 72) {
    net_addr only[3];
    uint count = 1 + random() % 3;
    for (uint i = 0; i < count; i++)
      net4(&only[i], RND_BASE + random() % RND_NETS);
    chan_refeed_nets(rnd.c, only, count);
  } else if (what < 90)
    rnd.busy = rnd.flooded || random() % 3 == 0;
  else if (what < 95)
    /* a burst while the protocol reads slowly: past a journal block */
    for (uint i = 0; i < 500; i++)
      rnd_write();
  else if (what < 96 && random() % 16 == 0) {
    /* a flood while the protocol reads nothing: the table's next clean-up
     * makes a laggard of the reader (4 x rt_laggard_limit() behind), which
     * skips the journal and feeds the table again (nest/channel_catchup.c) */
    rnd.busy = rnd.flooded = 1;
    for (u64 i = 0; i <= 6 * rt_laggard_limit(rnd.c->table); i++)
      rnd_write();
    rnd.floods++;
  }
}

static void
rnd_up(struct feed_step *s)
{
  (void) s;
  channel_up(rnd.c);
}

static void
rnd_check_route(u32 k, const struct rnd_route *got, const struct rnd_route *want)
{
  if (got->src != want->src || (want->src && (got->attrs != want->attrs || got->id != want->id)))
    fail_msg("net %u: exported route %u (source %d, attributes %d), the table's is %u (%d, %d)", k,
             got->src ? got->id : 0, got->src ? (int) rnd_src_no(got->src) : -1, rnd_attr_no(got->attrs),
             want->src ? want->id : 0, want->src ? (int) rnd_src_no(want->src) : -1, rnd_attr_no(want->attrs));
}

/* Whether the channel has caught up with the table, the protocol
 * reading again; in the channel's loop, where the state it looks at is. */
static void
rnd_settle(struct feed_step *s)
{
  struct channel *c = s->c;
  rnd.busy = 0;
  rnd.caught_up = !c->feeding && !c->catchup && !uatomic_read(&c->reader.laggard) &&
                  uatomic_read(&c->reader.seq) >= rt_journal_end_settled(c->table);
}

/* The table's routes of net k the channel should have exported. */
static void
rnd_check_net(struct rtable *t, u32 k)
{
  net_addr n;
  net4(&n, RND_BASE + k);
  struct rnd_route want[RND_SRCS] = { 0 }, want_best = { 0 };
  rcu_read_lock();
  struct net *net = rt_find_net(t, &n);
  struct rte *best = net ? net_best(net) : NULL;
  for (struct rte *r = best; rte_usable(r); r = r->next) {
    int ok = rte_attrs(r) != rnd.attrs[RND_ATTRS - 1];
    if (ok)
      want[rnd_src_no(rte_src(r))] = (struct rnd_route){ rte_src(r), rte_attrs(r), r->id };
    if (ok && !want_best.src && (rnd.secondary || r == best))
      want_best = want[rnd_src_no(rte_src(r))];
  }
  rcu_read_unlock();
  if (rnd.all_paths) {
    for (uint s = 0; s < RND_SRCS; s++)
      rnd_check_route(k, &rnd.path[k][s], &want[s]);
  } else
    rnd_check_route(k, &rnd.best[k], &want_best);
}

static void
rnd_check(struct feed_step *s)
{
  for (u32 k = 0; k < RND_NETS; k++)
    rnd_check_net(s->c->table, k);
}

static uint rnd_floods, rnd_catch_ups;

static void
rnd_round(uint seed, int secondary, int all_paths, uint steps)
{
  print_message("seed %u, %s\n", seed, all_paths ? "every route" : secondary ? "secondary" : "best route");
  srandom(seed);
  struct rtable *t = test_table();
  memset(&rnd, 0, sizeof(rnd));
  rnd.all_paths = all_paths;
  rnd.secondary = secondary;
  const char *trace = getenv("FEED_RANDOM_TRACE");
  rnd.trace = trace ? atoi(trace) : -1;
  rnd.c = feed_channel_new(&rnd_class, secondary, all_paths);
  for (uint i = 0; i < RND_SRCS; i++)
    rnd.src[i] = rt_get_source(fake_proto("peer"), 0);
  for (uint i = 0; i < RND_ATTRS; i++)
    rnd.attrs[i] = attrs_pref(100 + 10 * (i % 3), 40 + i);
  struct feed_step s = { .c = rnd.c };

  for (uint i = 0; i < 20; i++)
    rnd_write();
  feed_step(&s, rnd_up);
  for (uint i = 0; i < steps; i++) {
    if (random() % 40 == 0 || rnd.flooded) {
      loop_call_sync(t->loop, rt_cleanup, t);   /* ids go back; laggards flagged */
      rnd.flooded = 0;
    }
    feed_step(&s, rnd_step);
    /* caught up now and then: compare */
    if (random() % 50 == 0 || i == steps - 1) {
      for (uint k = 0; k < 1000 && !rnd.caught_up; k++)
        feed_step(&s, rnd_settle);
      assert_true(rnd.caught_up);
      feed_step(&s, rnd_check);
      rnd.caught_up = 0;
    }
  }

  rnd_floods += rnd.floods;
  rnd_catch_ups += rnd.catch_ups;
  feed_channel_free(rnd.c);
  net_addr n;
  for (u32 k = 0; k < RND_NETS; k++)
    for (uint i = 0; i < RND_SRCS; i++) {
      net4(&n, RND_BASE + k);
      rt_update(t, &n, rnd.src[i], NULL, NULL, 0);
    }
  for (uint i = 0; i < RND_ATTRS; i++)
    ea_unref(rnd.attrs[i]);
  test_srcs_free(rnd.src, RND_SRCS);
}

/* Each export mode: the best route, the best the policy accepts
 * (`secondary`), every route (ADD-PATH, pipes). */
static void
test_feed_random(void **state)
{
  (void) state;
  const char *e = getenv("FEED_RANDOM_ROUNDS");
  uint rounds = e ? (uint) atoi(e) : 6;
  e = getenv("FEED_RANDOM_SEED");
  uint base = e ? (uint) atoi(e) : 1;
  for (uint seed = base; seed < base + rounds; seed++)
    rnd_round(seed, seed % 3 == 1, seed % 3 == 2, 2000);
  print_message("%u floods, %u catch-ups seen\n", rnd_floods, rnd_catch_ups);
  assert_true(!rnd_floods || rnd_catch_ups);
}

static const struct CMUnitTest tests[] = {
  cmocka_unit_test(test_feed_mark_leaves_with_route),
  cmocka_unit_test(test_steady_after_feed_ahead),
  cmocka_unit_test(test_changes_coalesced),
  cmocka_unit_test(test_changes_coalesced_every_route),
  cmocka_unit_test(test_changes_coalesced_across_blocks),
  cmocka_unit_test(test_changes_coalesced_after_feed_ahead),
  cmocka_unit_test(test_feed_random),
};

int
main(void)
{
  return test_run_with_loops("channel_feed_test", tests, NULL);
}
