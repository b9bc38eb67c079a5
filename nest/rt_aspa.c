/*
 * DOC: AS path verification with ASPA (draft-ietf-sidrops-aspa-verification).
 *
 * An ASPA record says which ASes are providers of a customer AS. For two
 * adjacent ASes of a path, hop(customer, provider) is "Provider+" when the
 * customer's record lists the other AS, "Not Provider+" when a record
 * exists and does not, and "No Attestation" without a record.
 *
 * Paths are handled origin first below, as the draft writes them:
 * p[0] = AS(1) the origin, p[N-1] = AS(N) the neighbor. A link is "up"
 * (the route climbed from customer to provider) when hop(p[i], p[i+1]) is
 * Provider+, "down" when hop(p[i+1], p[i]) is. A valley-free path is an up
 * ramp from the origin, at most one lateral (peer) link, then a down ramp
 * to the neighbor; from a customer or peer (upstream) there is no down
 * ramp at all. The longest ramps made of Provider+ hops alone decide
 * Valid; the longest ones also allowing "No Attestation" hops decide
 * Invalid (even that optimistic reading cannot make the path valley-free).
 *
 * The table side: a record is the routes of the net keyed by the customer
 * ASN in an aspa table, their EA_GEN_ASPA_PROVIDERS lists united (one
 * route per source). Lookups in the caller's RCU read section, no locks.
 */
#include <stdlib.h>
#include <string.h>
#include "nest/rt_valid.h"
#include "nest/ea_bgp.h"

/* Up ramp length in ASes, from the origin, counting hops for which ok(). */
static uint
aspa_up_ramp(const u32 *p, uint n, aspa_hop_fn hop, void *ctx, int allow_none)
{
  uint r = 1;
  while (r < n) {
    enum aspa_hop h = hop(ctx, p[r - 1], p[r]);
    if (h == ASPA_HOP_NOT_PROVIDER || (h == ASPA_HOP_NO_ATTESTATION && !allow_none))
      break;
    r++;
  }
  return r;
}

/* Down ramp length in ASes, from the neighbor towards the origin. */
static uint
aspa_down_ramp(const u32 *p, uint n, aspa_hop_fn hop, void *ctx, int allow_none)
{
  uint r = 1;
  while (r < n) {
    uint i = n - r;     /* p[i] got the route from its provider p[i-1]? */
    enum aspa_hop h = hop(ctx, p[i], p[i - 1]);
    if (h == ASPA_HOP_NOT_PROVIDER || (h == ASPA_HOP_NO_ATTESTATION && !allow_none))
      break;
    r++;
  }
  return r;
}

/* p is origin first (see DOC). */
static enum aspa_result
aspa_verify_origin_first(const u32 *p, uint n, int upstream, aspa_hop_fn hop, void *ctx)
{
  if (!n)
    return ASPA_INVALID;
  if (upstream) {
    if (aspa_up_ramp(p, n, hop, ctx, 1) < n)
      return ASPA_INVALID;
    if (aspa_up_ramp(p, n, hop, ctx, 0) < n)
      return ASPA_UNKNOWN;
    return ASPA_VALID;
  }
  if (n <= 2)
    return ASPA_VALID;
  if (aspa_up_ramp(p, n, hop, ctx, 1) + aspa_down_ramp(p, n, hop, ctx, 1) < n)
    return ASPA_INVALID;
  if (aspa_up_ramp(p, n, hop, ctx, 0) + aspa_down_ramp(p, n, hop, ctx, 0) < n)
    return ASPA_UNKNOWN;
  return ASPA_VALID;
}

#define ASPA_STACK_PATH 256

enum aspa_result
aspa_verify(const u32 *asns, uint n, int upstream, aspa_hop_fn hop, void *ctx)
{
  u32 local[ASPA_STACK_PATH];
  u32 *p = n <= ASPA_STACK_PATH ? local : malloc(n * sizeof(u32));
  if (!p)
    return ASPA_UNKNOWN;
  for (uint i = 0; i < n; i++)
    p[i] = asns[n - 1 - i];
  enum aspa_result r = aspa_verify_origin_first(p, n, upstream, hop, ctx);
  if (p != local)
    free(p);
  return r;
}

/* --- Against a table --- */

static enum aspa_hop
aspa_table_hop(void *ctx, u32 customer, u32 provider)
{
  struct rtable *t = ctx;
  net_addr key;
  net_fill_aspa(&key, customer);
  struct net *n = rt_find_net(t, &key);
  if (!n)
    return ASPA_HOP_NO_ATTESTATION;
  int found = 0;
  for (struct rte *r = rcu_dereference(n->routes); r; r = rcu_dereference(r->next)) {
    if (!rte_usable(r))
      continue;
    found = 1;
    const struct eattr *e = ea_find(rte_attrs(r), EA_GEN_ASPA_PROVIDERS);
    if (!e)
      continue;     /* a record without providers: AS0 */
    const u8 *d = ea_data(rte_attrs(r), e);
    for (u32 i = 0; i + 4 <= e->len; i += 4) {
      u32 asn;
      memcpy(&asn, d + i, 4);
      if (asn == provider)
        return ASPA_HOP_PROVIDER;
    }
  }
  return found ? ASPA_HOP_NOT_PROVIDER : ASPA_HOP_NO_ATTESTATION;
}

/* Collapse the path into out (AS_PATH order); -1 for an AS_SET. The
 * caller sizes out for len / 4 ASNs, more than the path can hold. */
static int
aspa_path_flatten(const u8 *path, uint len, u32 *out)
{
  const u8 *d = path, *end = path + len;
  uint n = 0;
  while (end - d >= 2) {
    uint type = d[0], cnt = d[1];
    d += 2;
    if ((uint) (end - d) < 4 * cnt)
      break;        /* validated on receipt; stay in bounds anyway */
    if (type == EAB_AS_SET && cnt)
      return -1;
    if (type == EAB_AS_SEQUENCE)
      for (uint i = 0; i < cnt; i++) {
        u32 asn;
        memcpy(&asn, d + 4 * i, 4);
        if (!n || out[n - 1] != asn)
          out[n++] = asn;
      }
    d += 4 * cnt;
  }
  return n;
}

enum aspa_result
rt_aspa_check(struct rtable *t, const u8 *path, uint len, int upstream)
{
  if (!t || t->net_type != NET_ASPA)
    return ASPA_UNKNOWN;
  u32 local[ASPA_STACK_PATH];
  uint max = len / 4 + 1;
  u32 *asns = max <= ASPA_STACK_PATH ? local : malloc(max * sizeof(u32));
  if (!asns)
    return ASPA_UNKNOWN;
  int n = path ? aspa_path_flatten(path, len, asns) : 0;
  enum aspa_result r = n < 0 ? ASPA_INVALID : aspa_verify(asns, n, upstream, aspa_table_hop, t);
  if (asns != local)
    free(asns);
  return r;
}
