/*
 * DOC: Which routes a channel exported: a bit per table route id.
 *
 * Written only by the channel's loop (the export path); read there and by
 * the CLI in the main loop (`show route export table P.C` lists the routes
 * whose bit is set, as the export filter made them: the Adj-RIB-Out without
 * a copy of every route). So the map grows by copy and RCU publication,
 * never realloc in place, and bits are single-word atomic stores (plain
 * moves on x86, only one writer).
 */
#include <string.h>
#include "nest/proto.h"

struct chan_export_map {
  struct rcu_head rcu;
  u32 size;                   /* in bits, a multiple of 1024 */
  u32 bits[];
};

static size_t map_bytes(u32 size) { return sizeof(struct chan_export_map) + size / 8; }

static void
chan_exp_map_free_rcu(struct rcu_head *h)
{
  struct chan_export_map *m = caa_container_of(h, struct chan_export_map, rcu);
  mem_free_shared(MEM_PROTOCOLS, m, map_bytes(m->size));
}

static int
map_bit(const struct chan_export_map *m, u32 id)
{
  return m && id < m->size && (__atomic_load_n(&m->bits[id / 32], __ATOMIC_RELAXED) & (1U << (id % 32)));
}

int
chan_exp_bit(const struct channel *c, u32 id)
{
  return map_bit(c->export_map, id);
}

/* Bit id of the map in *slot set or cleared; growing it publishes a copy
 * and retires the old map through RCU, for readers in other loops. */
static void
map_set(struct chan_export_map **slot, u32 id, int on)
{
  struct chan_export_map *m = *slot;
  if (!m || id >= m->size) {
    if (!on)
      return;
    /* By an eighth, not doubling: a route server keeps a map per peer
     * over the ids of a full table, and doubling left up to half of each
     * unused. The copy stays amortized constant per id. */
    u32 old = m ? m->size : 0, size = ALIGN_UP(MAX(old + old / 8, id + 1), 1024);
    struct chan_export_map *n = mem_alloc_shared(MEM_PROTOCOLS, map_bytes(size));
    n->size = size;
    memset(n->bits, 0, size / 8);
    if (m)
      memcpy(n->bits, m->bits, old / 8);
    rcu_assign_pointer(*slot, n);
    if (m)
      call_rcu(&m->rcu, chan_exp_map_free_rcu);
    m = n;
  }
  u32 *w = &m->bits[id / 32], b = 1U << (id % 32);
  u32 v = __atomic_load_n(w, __ATOMIC_RELAXED);
  __atomic_store_n(w, on ? v | b : v & ~b, __ATOMIC_RELAXED);
}

static void
map_free(struct chan_export_map **slot)
{
  if (*slot)
    call_rcu(&(*slot)->rcu, chan_exp_map_free_rcu);
  *slot = NULL;
}

void
chan_exp_set(struct channel *c, u32 id, int on)
{
  map_set(&c->export_map, id, on);
}

void
chan_exp_clear(struct channel *c)
{
  struct chan_export_map *m = c->export_map;
  for (u32 i = 0; m && i < m->size / 32; i++)
    __atomic_store_n(&m->bits[i], 0, __ATOMIC_RELAXED);
}

void
chan_exp_free(struct channel *c)
{
  map_free(&c->export_map);
  map_free(&c->feed_rejected);
}

void
chan_feed_rejected_set(struct channel *c, u32 id)
{
  map_set(&c->feed_rejected, id, 1);
}

int
chan_feed_rejected_take(struct channel *c, u32 id)
{
  if (!map_bit(c->feed_rejected, id))
    return 0;
  map_set(&c->feed_rejected, id, 0);
  return 1;
}

void
chan_feed_rejected_drop(struct channel *c)
{
  map_free(&c->feed_rejected);
}

struct chan_export_map *
chan_exp_copy(const struct channel *c)
{
  const struct chan_export_map *m = c->export_map;
  u32 size = m ? m->size : 0;
  struct chan_export_map *n = mem_alloc_shared(MEM_PROTOCOLS, map_bytes(size));
  n->size = size;
  for (u32 i = 0; i < size / 32; i++)
    n->bits[i] = __atomic_load_n(&m->bits[i], __ATOMIC_RELAXED);
  return n;
}

u32
chan_exp_count(const struct chan_export_map *m)
{
  u32 count = 0;
  for (u32 i = 0; i < m->size / 32; i++)
    count += __builtin_popcount(m->bits[i]);
  return count;
}

int
chan_exp_map_bit(const struct chan_export_map *m, u32 id)
{
  return map_bit(m, id);
}

void
chan_exp_map_drop(struct chan_export_map *m, u32 id)
{
  if (id < m->size)
    m->bits[id / 32] &= ~(1U << (id % 32));
}

u32
chan_exp_merge(struct channel *c, const struct chan_export_map *m)
{
  u32 added = 0;
  for (u32 w = 0; w < m->size / 32; w++)
    for (u32 bits = m->bits[w]; bits; bits &= bits - 1) {
      u32 id = w * 32 + (u32) __builtin_ctz(bits);
      if (!chan_exp_bit(c, id)) {
        map_set(&c->export_map, id, 1);
        added++;
      }
    }
  return added;
}

u32
chan_exp_adopt(struct channel *c, struct chan_export_map *m)
{
  chan_exp_free(c);
  rcu_assign_pointer(c->export_map, m);
  return chan_exp_count(m);
}

void
chan_exp_discard(struct chan_export_map *m)
{
  mem_free_shared(MEM_PROTOCOLS, m, map_bytes(m->size));
}

struct rte *
chan_net_exported(const struct channel *c, struct net *n)
{
  return chan_net_exported_but(c, n, NULL, NULL, NULL);
}

struct rte *
chan_net_exported_but(const struct channel *c, struct net *n, const struct rte *a, const struct rte *b,
                      const struct rte_src *src)
{
  for (struct rte *r = net_best(n); r; r = rcu_dereference(r->next))
    if (r != a && r != b && (!src || rte_src(r) == src) && chan_exp_bit(c, r->id))
      return r;
  return NULL;
}

int
chan_route_exported(struct channel *c, const struct rte *r)
{
  struct channel *via = uatomic_read(&c->export_via);
  if (via)
    return !chan_sent(c, r) && map_bit(rcu_dereference(via->export_map), r->id);
  return map_bit(rcu_dereference(c->export_map), r->id);
}
