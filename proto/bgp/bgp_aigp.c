/*
 * DOC: The AIGP attribute (RFC 7311), as BIRD 2 handles it.
 *
 * AIGP carries the IGP metric accumulated along a route, for ASes that
 * agree to compare it. We keep it as received (its TLVs in wire order, an
 * EAF_OPAQUE eattr) and read the first AIGP TLV. Who uses it:
 *   - the decoder (bgp_attrs.c) checks the TLV framing; a malformed AIGP,
 *     wrong flags included, is discarded (RFC 7311 3.1);
 *   - a channel with `aigp off` (the default toward eBGP) drops it on
 *     receipt and never sends it (bgp_rx.c, bgp_tx.c);
 *   - the best path compares the total metric right after LOCAL_PREF
 *     (bgp_show.c); a route without AIGP loses against one with it;
 *   - when we put ourselves as the next hop, the metric grows by the
 *     distance to the old next hop (the route's IGP metric, at least 1),
 *     and `aigp originate` gives a route of another protocol an AIGP of
 *     its IGP metric (RFC 7311 3.4).
 * Pure functions on attributes; unit tests in bgp_aigp_test.c.
 */
#include <string.h>

#include "proto/bgp/bgp_wire.h"

#define BGP_AIGP_TLV_METRIC 1
#define BGP_AIGP_METRIC_LEN 11      /* type, length, 8 octets of metric */

static u64
bgp_load64(const u8 *p)
{
  return ((u64) bgp_load32(p) << 32) | bgp_load32(p + 4);
}

static void
bgp_store64(u8 *p, u64 v)
{
  bgp_store32(p, v >> 32);
  bgp_store32(p + 4, (u32) v);
}

const char *
bgp_aigp_check(const u8 *v, uint len)
{
  while (len) {
    if (len < 3)
      return "TLV framing error";
    uint tlen = bgp_load16(v + 1);
    if (tlen > len)
      return "TLV framing error";
    if (tlen < 3)
      return "Bad TLV length";
    if (v[0] == BGP_AIGP_TLV_METRIC && tlen != BGP_AIGP_METRIC_LEN)
      return "Bad AIGP TLV length";
    v += tlen;
    len -= tlen;
  }
  return NULL;
}

/* Offset of the first AIGP TLV, -1 without one. */
static int
bgp_aigp_find(const u8 *v, uint len)
{
  for (uint pos = 0; pos + 3 <= len;) {
    uint tlen = bgp_load16(v + pos + 1);
    if (tlen < 3 || tlen > len - pos)
      return -1;
    if (v[pos] == BGP_AIGP_TLV_METRIC && tlen == BGP_AIGP_METRIC_LEN)
      return (int) pos;
    pos += tlen;
  }
  return -1;
}

bool
bgp_aigp_metric(const u8 *v, uint len, u64 *metric)
{
  int pos = bgp_aigp_find(v, len);
  if (pos < 0)
    return false;
  *metric = bgp_load64(v + pos + 3);
  return true;
}

u8 *
bgp_aigp_set_metric(linpool *lp, const u8 *v, uint len, u64 metric, uint *out_len)
{
  int pos = bgp_aigp_find(v, len);
  uint size = len + (pos < 0 ? BGP_AIGP_METRIC_LEN : 0);
  u8 *o = lp_alloc(lp, size);
  if (pos < 0) {
    o[0] = BGP_AIGP_TLV_METRIC;
    bgp_store16(o + 1, BGP_AIGP_METRIC_LEN);
    if (len)
      memcpy(o + BGP_AIGP_METRIC_LEN, v, len);
    pos = 0;
  } else
    memcpy(o, v, len);
  bgp_store64(o + pos + 3, metric);
  *out_len = size;
  return o;
}

/* BIRD's bgp_total_aigp_metric_(): false when the route has no AIGP TLV. */
static bool
bgp_aigp_total_of(const struct ea_list *a, u64 *total)
{
  const struct eattr *e = ea_find(a, BGP_EA(BA_AIGP));
  u64 m;
  if (!e || !bgp_aigp_metric(ea_data(a, e), e->len, &m))
    return false;
  /* the IGP part of the way to the next hop: none known, no total (BIRD) */
  u64 step = a->igp_metric;
  if (a->dest == RTD_UNREACHABLE || step >= IGP_METRIC_UNKNOWN)
    step = BGP_AIGP_MAX;
  if (!step)
    step = 1;
  *total = m + step < m ? BGP_AIGP_MAX : m + step;
  return true;
}

u64
bgp_aigp_total(const struct ea_list *a)
{
  u64 t;
  return bgp_aigp_total_of(a, &t) ? t : BGP_AIGP_MAX;
}

void
bgp_aigp_export(struct ea_builder *b, const struct ea_list *a, bool originate, linpool *lp)
{
  const struct eattr *e = ea_find(a, BGP_EA(BA_AIGP));
  const u8 *v = e ? ea_data(a, e) : NULL;
  uint len = e ? e->len : 0;
  u64 metric;
  if (bgp_aigp_total_of(a, &metric))
    ;
  else if (originate && a->source != RTS_BGP && (a->igp_metric || a->source == RTS_DEVICE))
    metric = a->igp_metric;   /* BIRD: a known IGP metric; a device route's is 0 */
  else
    return;                   /* kept as it is, if there is one */
  uint out_len;
  u8 *out = bgp_aigp_set_metric(lp, v, len, metric, &out_len);
  ea_set_data(b, BGP_EA(BA_AIGP), EAF_OPAQUE, BAF_OPTIONAL, out, out_len);
}
