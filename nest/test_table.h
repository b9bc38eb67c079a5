/*
 * Unit-test helpers shared by the table tests (rt_table_test.c,
 * rt_press_test.c, rt_journal_test.c): fake protocols, channels and
 * their route sources, the master4 table of an empty config, and a
 * numbering of /24 nets.
 */
#ifndef NEST_TEST_TABLE_H
#define NEST_TEST_TABLE_H

#include <stdlib.h>

#include "conf/conf.h"
#include "nest/proto.h"
#include "nest/reconf.h"
#include "nest/rt.h"
#include "nest/test_attrs.h"

static const struct proto_class test_class = { .name = "Test", .keyword = "test", .class_id = 9 };

static inline struct proto *
fake_proto(const char *name)
{
  struct proto *p = calloc(1, sizeof(*p));
  p->class = &test_class;
  p->name = name;
  return p;
}

static inline struct rtable *
test_table(void)
{
  static struct rtable *t;
  if (!t) {
    struct config *c = config_new_empty("test");
    config_commit(c);
    t = rt_find_table("master4");
  }
  return t;
}

/* A channel of a fake protocol into t, with a sender number of its own:
 * what its routes and journal items carry. */
static inline struct channel *
fake_channel(struct rtable *t, const char *name)
{
  struct channel *c = calloc(1, sizeof(*c));
  c->proto = fake_proto(name);
  c->table = t;
  c->name = "ipv4";
  c->sender_id = rt_sender_add(t, c);
  return c;
}

static inline void
fake_channel_free(struct channel *c)
{
  rt_sender_remove(c->table, c->sender_id);
  rcu_barrier();
  free(c->proto);
  free(c);
}

static inline void
net4(net_addr *n, u32 i)
{
  net_fill_ip4(n, ip4_from_u32(0x0a000000 | (i << 8)), 24);
}

/* Unlocks n sources of fake protocols (fake_proto) and frees those
 * protocols once the sources, which go through RCU, are gone. */
static inline void
test_srcs_free(struct rte_src *const *srcs, uint n)
{
  struct proto *ps[n];
  for (uint i = 0; i < n; i++) {
    ps[i] = srcs[i]->proto;
    rt_unlock_source(srcs[i]);
  }
  rcu_barrier();
  for (uint i = 0; i < n; i++)
    free(ps[i]);
}

/* Two sources of fake protocols, a low and a high preference attribute
 * set: what the single-net tests start from. */
struct two_srcs {
  struct rte_src *s1, *s2;
  struct ea_list *lo, *hi;
};

static inline struct two_srcs
two_srcs_new(void)
{
  return (struct two_srcs){ rt_get_source(fake_proto("a"), 0), rt_get_source(fake_proto("b"), 0),
                            attrs_pref(100, 1), attrs_pref(200, 2) };
}

static inline void
two_srcs_free(struct two_srcs *x)
{
  ea_unref(x->lo);
  ea_unref(x->hi);
  test_srcs_free((struct rte_src *[]){ x->s1, x->s2 }, 2);
}

/* A thread walking the table's chains lock-free until stop is set,
 * counting chains out of best-first order (its return value). */
struct chain_walk {
  struct rtable *t;
  int stop;                   /* atomic: set by the test's thread */
};

static inline void *
chain_walk_main(void *arg)
{
  struct chain_walk *w = arg;
  long bad = 0;
  rcu_thread_register();
  while (!uatomic_read(&w->stop)) {
    rcu_read_lock();
    struct rcu_hash_iter it;
    for (struct net *n = rt_first_net(w->t, &it); n; n = rt_next_net(w->t, &it)) {
      struct rte *r = rcu_dereference(n->routes), *next;
      /* Each pointer is loaded once: the chain changes under our feet. */
      for (; r && (next = rcu_dereference(r->next)); r = next)
        if (rte_better(next, r))
          bad++;
    }
    rcu_read_unlock();
  }
  rcu_thread_unregister();
  return (void *) bad;
}

#endif
