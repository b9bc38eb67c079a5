/*
 * DOC: Export attribute cache: a per-thread memo shared by sessions alike.
 *
 * What a BGP peer gets for a route is a function of the route's
 * attributes, the session it came from and the receiving session's
 * export profile (bgp_export_profile: ASNs, roles, next hop policy). A
 * route server sends the same few thousand attribute sets to hundreds of
 * peers whose profiles are all equal: one cache per channel would hold
 * the same entries hundreds of times (12 MB of them at 100 peers, more
 * than all the routes' attributes). Keyed by the profile's value instead,
 * the thread's memo (nest/ea_memo.h) serves every session the thread
 * runs, and its size is bounded by the threads, not by the peers.
 *
 * The profile goes into the key as the number of its interned copy: 8
 * bytes instead of 64 make a memo entry one cache line and a key compare
 * three words. Numbers only grow, so a profile freed and another one
 * interned later never meet each other's entries.
 */
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include "proto/bgp/bgp.h"
#include "nest/ea_memo.h"

/* What the key is besides the source list: from gen to the end. */
#define XK_OFS offsetof(struct bgp_export_key, gen)
_Static_assert(sizeof(struct bgp_export_key) - XK_OFS <= EA_MEMO_BGP_EXPORT_KEY, "export key too long for the memo");

/* The memo's result for k, made and kept on a miss; take: with a
 * reference for the caller. */
static struct ea_list *
bgp_export_cache_lookup(const struct bgp_export_key *k, struct ea_list *(*make)(void *ctx), void *ctx, bool take)
{
  /* One multiply (a chain of mixers here was a visible part of an
   * export): the memo is the thread's own, no one aims collisions at it. */
  u64 x = ((uintptr_t) k->src ^ (k->gen * 0x9e3779b97f4a7c15ULL) ^ (k->prof_id << 40)) + k->med_fresh;
  struct ea_memo_key mk = {
    .src = k->src,
    .hash = (u32) ((x * 0xd6e8feb86659fd93ULL) >> 32),
    .len = sizeof(*k) - XK_OFS,
    .bytes = (const u8 *) k + XK_OFS,
  };
  struct ea_list *out;
  if (take ? ea_memo_take(EA_MEMO_BGP_EXPORT, &mk, &out) : ea_memo_get(EA_MEMO_BGP_EXPORT, &mk, &out))
    return out;
  out = make(ctx);
  ea_memo_put(EA_MEMO_BGP_EXPORT, &mk, out);
  return take && out ? ea_ref(out) : out;
}

struct ea_list *
bgp_export_cache_get(const struct bgp_export_key *k, struct ea_list *(*make)(void *ctx), void *ctx)
{
  return bgp_export_cache_lookup(k, make, ctx, false);
}

struct ea_list *
bgp_export_cache_take(const struct bgp_export_key *k, struct ea_list *(*make)(void *ctx), void *ctx)
{
  return bgp_export_cache_lookup(k, make, ctx, true);
}

/* --- Interned profiles. A session's profile changes when it comes up or
 * is reconfigured: one lock for all of them is enough. --- */

static pthread_mutex_t xprof_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hash_table xprof_table;   /* struct bgp_xprof by value, under the lock */
static u64 xprof_next_id = 1;           /* under the lock */

static int
xprof_eq(const struct hash_node *n, const void *key)
{
  return !memcmp(&container_of(n, struct bgp_xprof, hn)->prof, key, sizeof(struct bgp_export_profile));
}

struct bgp_xprof *
bgp_export_profile_get(const struct bgp_export_profile *prof)
{
  u32 h = hash_bytes(prof, sizeof(*prof));
  pthread_mutex_lock(&xprof_lock);
  if (!xprof_table.buckets)
    hash_init(&xprof_table, NULL, 4);
  struct hash_node *n = hash_find(&xprof_table, h, xprof_eq, prof);
  struct bgp_xprof *x;
  if (n)
    x = container_of(n, struct bgp_xprof, hn);
  else {
    x = mem_alloc_shared(MEM_PROTOCOLS, sizeof(*x));
    memset(x, 0, sizeof(*x));
    memcpy(&x->prof, prof, sizeof(*prof));
    x->id = xprof_next_id++;
    hash_insert(&xprof_table, &x->hn, h);
  }
  x->refs++;
  pthread_mutex_unlock(&xprof_lock);
  return x;
}

void
bgp_export_profile_put(struct bgp_xprof *x)
{
  if (!x)
    return;
  pthread_mutex_lock(&xprof_lock);
  if (!--x->refs) {
    hash_remove(&xprof_table, &x->hn);
    mem_free_shared(MEM_PROTOCOLS, x, sizeof(*x));
  }
  pthread_mutex_unlock(&xprof_lock);
}
