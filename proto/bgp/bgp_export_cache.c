/*
 * DOC: Export attribute cache, one per thread, shared by sessions alike.
 *
 * What a BGP peer gets for a route is a function of the route's
 * attributes, the session it came from and the receiving session's
 * export profile (bgp_export_profile: ASNs, roles, next hop policy). A
 * route server sends the same few thousand attribute sets to hundreds of
 * peers whose profiles are all equal: one cache per channel would hold
 * the same entries hundreds of times (12 MB of them at 100 peers, more
 * than all the routes' attributes). Keyed by the profile's value instead,
 * one cache per worker thread serves every session the thread runs, and
 * its size is bounded by the threads, not by the peers.
 *
 * Open addressing over a fixed table; when full it is emptied at once
 * (the working set comes back within one pass over the attribute sets).
 * Entries hold references on both attribute lists. Only the owning thread
 * touches its cache; a thread's cache is freed when it leaves RCU (the
 * references can only be dropped before).
 */
#include <pthread.h>
#include <string.h>
#include "proto/bgp/bgp.h"
#include "lib/hash.h"
#include "lib/log.h"

#define XC_SLOTS 16384                 /* power of two */
#define XC_MAX (XC_SLOTS / 2)          /* entries; emptied when full */

struct xc_entry {
  const struct ea_list *src;           /* reference held */
  struct ea_list *out;                 /* reference held; NULL = not exported */
  u64 gen;
  u32 hash;
  int med_fresh;
  struct bgp_export_profile prof;
};

/* owner: one thread */
struct xc {
  u32 count;
  u32 slot[XC_SLOTS];                  /* 1 + index into e; 0 = empty */
  struct xc_entry e[XC_MAX];
};

static __thread struct xc *xc_mine;
static pthread_once_t xc_once = PTHREAD_ONCE_INIT;

static void
xc_empty(struct xc *c)
{
  for (u32 i = 0; i < c->count; i++) {
    ea_unref((struct ea_list *) c->e[i].src);
    if (c->e[i].out)
      ea_unref(c->e[i].out);
  }
  c->count = 0;
  memset(c->slot, 0, sizeof(c->slot));
}

static void
xc_thread_exit(void)
{
  if (!xc_mine)
    return;
  xc_empty(xc_mine);
  mem_free_shared(MEM_PROTOCOLS, xc_mine, sizeof(*xc_mine));
  xc_mine = NULL;
}

static void
xc_hook_init(void)
{
  rcu_thread_at_exit(xc_thread_exit);
}

static struct xc *
xc_get(void)
{
  if (!xc_mine) {
    pthread_once(&xc_once, xc_hook_init);
    xc_mine = mem_alloc_shared(MEM_PROTOCOLS, sizeof(*xc_mine));
    xc_mine->count = 0;
    memset(xc_mine->slot, 0, sizeof(xc_mine->slot));
  }
  return xc_mine;
}

static u32
xc_hash(const struct bgp_export_key *k)
{
  uintptr_t s = (uintptr_t) k->src;
  return hash_mix(hash_mix(hash_u32((u32) (s >> 4)) ^ (u32) (s >> 36), (u32) k->gen ^ (u32) (k->gen >> 32)),
                  k->prof_hash ^ (u32) k->med_fresh);
}

/* The slot of k's entry, or of the empty slot where it would go. */
static u32 *
xc_slot(struct xc *c, const struct bgp_export_key *k, u32 h)
{
  for (u32 i = h & (XC_SLOTS - 1);; i = (i + 1) & (XC_SLOTS - 1)) {
    if (!c->slot[i])
      return &c->slot[i];
    const struct xc_entry *e = &c->e[c->slot[i] - 1];
    if (e->hash == h && e->src == k->src && e->gen == k->gen && e->med_fresh == k->med_fresh &&
        !memcmp(&e->prof, &k->prof, sizeof(k->prof)))
      return &c->slot[i];
  }
}

struct ea_list *
bgp_export_cache_get(const struct bgp_export_key *k, struct ea_list *(*make)(void *ctx), void *ctx)
{
  struct xc *c = xc_get();
  u32 h = xc_hash(k);
  u32 *s = xc_slot(c, k, h);
  if (*s)
    return c->e[*s - 1].out;
  struct ea_list *out = make(ctx);
  if (c->count == XC_MAX) {
    xc_empty(c);
    s = xc_slot(c, k, h);
  }
  struct xc_entry *e = &c->e[c->count++];
  *e = (struct xc_entry) { .src = ea_ref((struct ea_list *) k->src), .out = out, .gen = k->gen, .hash = h,
                           .med_fresh = k->med_fresh, .prof = k->prof };
  *s = c->count;
  return out;
}
