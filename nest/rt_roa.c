/*
 * DOC: Route origin validation (RFC 6811) by lookups in a ROA table.
 *
 * A ROA net is keyed by prefix, length, max length and ASN, but a route
 * only tells us its prefix: the table hashes ROA nets by prefix and length
 * alone (nest/rt_index.c), so all ROAs of one prefix come out of one hash
 * probe (rt_roa_first/next). Covering ROAs have lengths 0..len, and the
 * table keeps the lengths its ROAs have per region of the address space
 * (nest/rt_index.c), so only the few lengths of ROAs near the route are
 * probed, asked for from memory together (struct rt_probe).
 */
#include "nest/rt_valid.h"

static u32
roa_field(const net_addr *r, int asn)
{
  if (r->type == NET_ROA4)
    return asn ? ((const net_addr_roa4 *) r)->asn : ((const net_addr_roa4 *) r)->max_pxlen;
  return asn ? ((const net_addr_roa6 *) r)->asn : ((const net_addr_roa6 *) r)->max_pxlen;
}

enum roa_result
rt_roa_check(struct rtable *t, const net_addr *n, u32 asn)
{
  uint rtype;
  if (n->type == NET_IP4)
    rtype = NET_ROA4;
  else if (n->type == NET_IP6)
    rtype = NET_ROA6;
  else
    return ROA_UNKNOWN;
  if (!t || t->net_type != rtype || !uatomic_read(&t->net_count))
    return ROA_UNKNOWN;

  net_addr key;
  if (rtype == NET_ROA4)
    net_fill_roa4(&key, ((const net_addr_ip4 *) n)->prefix, n->pxlen, 0, 0);
  else
    net_fill_roa6(&key, ((const net_addr_ip6 *) n)->prefix, n->pxlen, 0, 0);

  int covered = 0;
  struct rt_probe p;
  rt_probe_start(&p, t, &key);
  u32 hash;
  for (const net_addr *k; (k = rt_probe_next(&p, &hash));) {
    struct rcu_hash_iter it;
    for (struct net *x = rt_roa_first(t, k, hash, &it); x; x = rt_roa_next(k, &it)) {
      if (!net_best(x))
        continue;     /* emptied, or only filtered routes */
      covered = 1;
      if (asn && roa_field(&x->n, 1) == asn && n->pxlen <= roa_field(&x->n, 0))
        return ROA_VALID;
    }
  }
  return covered ? ROA_INVALID : ROA_UNKNOWN;
}
