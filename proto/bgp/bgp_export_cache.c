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
 */
#include <stddef.h>
#include "proto/bgp/bgp.h"
#include "nest/ea_memo.h"

/* What the key is besides the source list: from gen to the end. */
#define XK_OFS offsetof(struct bgp_export_key, gen)
_Static_assert(sizeof(struct bgp_export_key) - XK_OFS <= EA_MEMO_KEY_MAX, "export key too long for the memo");

struct ea_list *
bgp_export_cache_get(const struct bgp_export_key *k, struct ea_list *(*make)(void *ctx), void *ctx)
{
  /* One multiply (a chain of mixers here was a visible part of an
   * export): the memo is the thread's own, no one aims collisions at it. */
  u64 x = ((uintptr_t) k->src ^ (k->gen * 0x9e3779b97f4a7c15ULL) ^ ((u64) k->prof_hash << 32)) + (u64) k->med_fresh;
  struct ea_memo_key mk = {
    .src = k->src,
    .hash = (u32) ((x * 0xd6e8feb86659fd93ULL) >> 32),
    .len = sizeof(*k) - XK_OFS,
    .bytes = (const u8 *) k + XK_OFS,
  };
  struct ea_list *out;
  if (ea_memo_get(EA_MEMO_BGP_EXPORT, &mk, &out))
    return out;
  out = make(ctx);
  ea_memo_put(EA_MEMO_BGP_EXPORT, &mk, out);
  return out;
}
