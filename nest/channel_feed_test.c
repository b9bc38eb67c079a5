/*
 * Unit tests of an export channel's feed against its journal: a channel
 * on a fake protocol whose export policy rejects the routes of one
 * attribute set, driven step by step in the main loop (its protocol's
 * loop here), with the table written in between as peers would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "conf/conf.h"
#include "lib/loop.h"
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
  return r->attrs == feed_rejected_attrs ? -1 : 0;
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

static u32 route_id(struct rtable *t, u32 k);

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

static void
reader_detach(void *r)
{
  rt_reader_detach(r);
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
  struct proto *p = calloc(1, sizeof(*p));
  p->class = &feed_class;
  p->name = "feedtest";
  p->loop = main_loop();
  list_init(&p->channels);
  struct channel_config *cc = calloc(1, sizeof(*cc));
  cc->name = "ipv4";
  cc->net_type = NET_IP4;
  struct channel *c = calloc(1, sizeof(*c));
  c->name = "ipv4";
  c->proto = p;
  c->cf = cc;
  c->table = t;
  c->net_type = NET_IP4;
  c->out_filter = FILTER_ACCEPT;
  c->sender_id = rt_sender_add(t, c);
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

  loop_call_sync(main_loop(), reader_detach, &c->reader);
  for (u32 i = 0; i < k; i++) {
    net4(&n, i);
    rt_update(t, &n, src, NULL, NULL, 0);
  }
  rt_sender_remove(t, c->sender_id);
  chan_exp_free(c);
  ea_unref(ok);
  ea_unref(ok2);
  ea_unref(feed_rejected_attrs);
  rt_unlock_source(src);
  rcu_barrier();
  free(c);
  free(cc);
  free(p);
  free(peer);
}

static const struct CMUnitTest tests[] = {
  cmocka_unit_test(test_feed_mark_leaves_with_route),
};

int
main(void)
{
  return test_run_with_loops("channel_feed_test", tests, NULL);
}
