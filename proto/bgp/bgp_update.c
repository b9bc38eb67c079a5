/*
 * DOC: BGP message framing, UPDATE split/NLRI, and the small messages.
 *
 * Receive: bgp_header_check() frames a message; bgp_update_parse() splits
 * an UPDATE into withdrawn routes, attributes and NLRI, detects End-of-RIB
 * and hands the attributes to bgp_attrs_parse(); the NLRI are then decoded
 * by bgp_nlri_decode() in caller-sized batches straight into net_addr
 * arrays, with no allocation per prefix. That loop is the hot path of a
 * full-table feed: one length byte, one bounds check, one 4-byte load and
 * a mask per IPv4 prefix.
 *
 * Send: bgp_update_encode_reach() packs as many prefixes sharing one
 * interned attribute set into one UPDATE as the negotiated size allows,
 * IPv4 with an IPv4 next hop in the body, everything else in MP_REACH
 * (placed first, RFC 7606 5.1). Withdrawals and End-of-RIB likewise.
 *
 * Pure functions; the caller owns every buffer.
 */
#include <string.h>

#include "proto/bgp/bgp_wire.h"

/* ---------------------------------------------------------------- */
/* Header and the small messages                                     */

static const u8 bgp_min_len[] = {
  [BGP_MSG_OPEN] = BGP_MIN_OPEN_LEN,
  [BGP_MSG_UPDATE] = BGP_MIN_UPDATE_LEN,
  [BGP_MSG_NOTIFICATION] = BGP_MIN_NOTIFICATION_LEN,
  [BGP_MSG_KEEPALIVE] = BGP_KEEPALIVE_LEN,
  [BGP_MSG_ROUTE_REFRESH] = BGP_ROUTE_REFRESH_LEN,
};

static int
bgp_bad_length(struct bgp_error *err, uint len)
{
  /* RFC 4271 6.1: the data is the erroneous Length field */
  bgp_error_set(err, BGP_ERR_HEADER, BGP_ERR_HDR_BAD_LENGTH, NULL, 2, "Bad message length");
  bgp_store16(err->own, len);
  return -1;
}

int
bgp_header_check(const u8 *buf, uint max_len, uint *msg_len, u8 *type, struct bgp_error *err)
{
  for (uint i = 0; i < BGP_MARKER_LEN; i++)
    if (buf[i] != 0xff) {
      bgp_error_set(err, BGP_ERR_HEADER, BGP_ERR_HDR_NOT_SYNC, NULL, 0, "Connection not synchronized");
      return -1;
    }
  uint len = bgp_load16(buf + 16);
  u8 t = buf[18];
  if (len < BGP_HEADER_LEN || len > max_len)
    return bgp_bad_length(err, len);
  if (t < BGP_MSG_OPEN || t > BGP_MSG_ROUTE_REFRESH) {
    bgp_error_set(err, BGP_ERR_HEADER, BGP_ERR_HDR_BAD_TYPE, NULL, 1, "Bad message type");
    err->own[0] = t;
    return -1;
  }
  /* RFC 4271 6.1 minimums, KEEPALIVE exactly 19; RFC 8654 3: OPEN and
   * KEEPALIVE never exceed 4096 */
  if (len < bgp_min_len[t] || (t == BGP_MSG_KEEPALIVE && len != BGP_KEEPALIVE_LEN) ||
      (t == BGP_MSG_OPEN && len > BGP_MAX_MSG_LEN))
    return bgp_bad_length(err, len);
  *msg_len = len;
  *type = t;
  return 0;
}

uint
bgp_header_put(u8 *buf, uint len, u8 type)
{
  memset(buf, 0xff, BGP_MARKER_LEN);
  bgp_store16(buf + 16, len);
  buf[18] = type;
  return BGP_HEADER_LEN;
}

uint
bgp_keepalive_encode(u8 *buf, uint size)
{
  if (size < BGP_KEEPALIVE_LEN)
    return 0;
  return bgp_header_put(buf, BGP_KEEPALIVE_LEN, BGP_MSG_KEEPALIVE);
}

uint
bgp_notification_encode(u8 *buf, uint size, uint max_len, const struct bgp_error *e)
{
  uint limit = MIN(size, max_len);
  if (limit < BGP_MIN_NOTIFICATION_LEN)
    return 0;
  uint dlen = MIN((uint) e->len, limit - BGP_MIN_NOTIFICATION_LEN);
  uint len = BGP_MIN_NOTIFICATION_LEN + dlen;
  bgp_header_put(buf, len, BGP_MSG_NOTIFICATION);
  buf[19] = e->code;
  buf[20] = e->subcode;
  if (dlen)
    memmove(buf + 21, bgp_error_data(e), dlen);
  return len;
}

int
bgp_notification_decode(const u8 *body, uint len, struct bgp_error *out)
{
  memset(out, 0, sizeof(*out));
  if (len < 2)
    return -1;
  bgp_error_set(out, body[0], body[1], len > 2 ? body + 2 : NULL, len - 2, NULL);
  return 0;
}

int
bgp_notification_shutdown_msg(const struct bgp_error *e, char *buf, uint size)
{
  /* RFC 9003 2: Cease / Administrative Shutdown or Reset, one length octet
   * then UTF-8; the text is the peer's, so control characters go. */
  if (e->code != BGP_ERR_CEASE || !size ||
      (e->subcode != BGP_ERR_CEASE_ADMIN_SHUTDOWN && e->subcode != BGP_ERR_CEASE_ADMIN_RESET) || e->len < 1)
    return 0;
  const u8 *d = bgp_error_data(e);
  uint n = d[0];
  if (!n || n > (uint) e->len - 1)
    return 0;
  n = MIN(n, size - 1);
  for (uint i = 0; i < n; i++)
    buf[i] = d[1 + i] < 0x20 || d[1 + i] == 0x7f ? '?' : (char) d[1 + i];
  buf[n] = 0;
  return 1;
}

uint
bgp_route_refresh_encode(u8 *buf, uint size, const struct bgp_route_refresh *rr)
{
  if (size < BGP_ROUTE_REFRESH_LEN)
    return 0;
  bgp_header_put(buf, BGP_ROUTE_REFRESH_LEN, BGP_MSG_ROUTE_REFRESH);
  bgp_store16(buf + 19, rr->afi);
  buf[21] = rr->subtype;
  buf[22] = rr->safi;
  return BGP_ROUTE_REFRESH_LEN;
}

int
bgp_route_refresh_decode(const u8 *msg, uint msg_len, struct bgp_route_refresh *rr, struct bgp_error *err)
{
  if (msg_len < BGP_ROUTE_REFRESH_LEN)
    return bgp_bad_length(err, msg_len);
  rr->afi = bgp_load16(msg + 19);
  rr->subtype = msg[21];
  rr->safi = msg[22];
  /* RFC 7313 5: unknown subtypes are ignored; BoRR/EoRR of a length other
   * than 4 after the header -> ROUTE-REFRESH error with the whole message.
   * A plain refresh may be longer (ORF, RFC 5291), so it is not checked. */
  if (rr->subtype > BGP_RR_END)
    return 1;
  if (rr->subtype != BGP_RR_NORMAL && msg_len != BGP_ROUTE_REFRESH_LEN) {
    bgp_error_set(err, BGP_ERR_ROUTE_REFRESH, BGP_ERR_RR_INVALID_LENGTH, msg, msg_len,
                  "Invalid ROUTE-REFRESH length");
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- */
/* UPDATE receive                                                    */

int
bgp_update_split(const u8 *body, uint len, struct bgp_update *u, struct bgp_error *err)
{
  struct bgp_cur c = bgp_cur_init(body, len);
  u16 wlen, alen;
  u->withdrawn = u->attrs = u->nlri = bgp_cur_init(NULL, 0);
  /* RFC 7606 4: Withdrawn Routes Length and Total Attribute Length that do
   * not fit the message -> session reset (Malformed Attribute List) */
  if (!bgp_get_u16(&c, &wlen) || !bgp_get_sub(&c, wlen, &u->withdrawn) || !bgp_get_u16(&c, &alen) ||
      !bgp_get_sub(&c, alen, &u->attrs)) {
    bgp_error_set(err, BGP_ERR_UPDATE, BGP_ERR_UPD_MALFORMED_ATTR_LIST, NULL, 0, "Malformed UPDATE lengths");
    return -1;
  }
  u->nlri = c;
  return 0;
}

enum bgp_attr_verdict
bgp_update_parse(const struct bgp_rx_ctx *ctx, linpool *lp, const u8 *body, uint len, struct ea_builder *b,
                 struct bgp_update *u)
{
  /* no memset of the whole struct: once per UPDATE, and it showed */
  bgp_attrs_reset(&u->a);
  u->eor = -1;
  if (bgp_update_split(body, len, u, &u->a.err) < 0)
    return u->a.verdict = BGP_ATTR_SESSION_RESET;

  bool no_body = bgp_cur_empty(&u->withdrawn) && bgp_cur_empty(&u->nlri);
  /* RFC 4724 2: End-of-RIB for IPv4 unicast is an UPDATE with nothing in it */
  if (no_body && bgp_cur_empty(&u->attrs)) {
    u->eor = BGP_AF_IPV4;
    return BGP_ATTR_OK;
  }

  bgp_attrs_parse(ctx, lp, u->attrs.p, bgp_cur_left(&u->attrs), !bgp_cur_empty(&u->nlri), b, &u->a);

  /* ... and for other families an UPDATE with only an empty MP_UNREACH */
  const struct bgp_mp_part *m = &u->a.mp_unreach;
  if (u->a.verdict != BGP_ATTR_SESSION_RESET && no_body && u->a.count == 1 && m->present && !m->ignored &&
      bgp_cur_empty(&m->nlri))
    u->eor = m->af;
  return u->a.verdict;
}

void
bgp_nlri_iter_init(struct bgp_nlri_iter *it, struct bgp_cur c, enum bgp_af af, bool add_path)
{
  it->c = c;
  it->af = af;
  it->add_path = add_path;
}

static void
bgp_iter_mp(const struct bgp_rx_ctx *ctx, const struct bgp_update *u, const struct bgp_mp_part *m,
            struct bgp_nlri_iter *it)
{
  if (!m->present || m->ignored || u->a.verdict == BGP_ATTR_SESSION_RESET)
    bgp_nlri_iter_init(it, bgp_cur_init(NULL, 0), BGP_AF_IPV4, false);
  else
    bgp_nlri_iter_init(it, m->nlri, m->af, ctx->add_path[m->af]);
}

void
bgp_update_withdrawn_iter(const struct bgp_rx_ctx *ctx, const struct bgp_update *u, struct bgp_nlri_iter *it)
{
  struct bgp_cur c = u->a.verdict == BGP_ATTR_SESSION_RESET ? bgp_cur_init(NULL, 0) : u->withdrawn;
  bgp_nlri_iter_init(it, c, BGP_AF_IPV4, ctx->add_path[BGP_AF_IPV4]);
}

void
bgp_update_reach_iter(const struct bgp_rx_ctx *ctx, const struct bgp_update *u, struct bgp_nlri_iter *it)
{
  struct bgp_cur c = u->a.verdict == BGP_ATTR_SESSION_RESET ? bgp_cur_init(NULL, 0) : u->nlri;
  bgp_nlri_iter_init(it, c, BGP_AF_IPV4, ctx->add_path[BGP_AF_IPV4]);
}

void
bgp_update_mp_unreach_iter(const struct bgp_rx_ctx *ctx, const struct bgp_update *u, struct bgp_nlri_iter *it)
{
  bgp_iter_mp(ctx, u, &u->a.mp_unreach, it);
}

void
bgp_update_mp_reach_iter(const struct bgp_rx_ctx *ctx, const struct bgp_update *u, struct bgp_nlri_iter *it)
{
  bgp_iter_mp(ctx, u, &u->a.mp_reach, it);
}

/* ---------------------------------------------------------------- */
/* NLRI decode                                                       */

static int
bgp_nlri_error(struct bgp_nlri_iter *it, struct bgp_error *err)
{
  /* RFC 7606 5.3: a prefix length beyond the family maximum or a prefix
   * overrunning its field -> session reset (Invalid Network Field) */
  bgp_error_set(err, BGP_ERR_UPDATE, BGP_ERR_UPD_INVALID_NETWORK, NULL, 0, "Malformed NLRI");
  it->c.p = it->c.end;
  return -1;
}

/* The last 1..3 octets of a field, where a 4-octet load would overrun. */
static u32
bgp_nlri_tail(const u8 *p, uint bytes)
{
  u32 a = 0;
  for (uint i = 0; i < bytes; i++)
    a |= (u32) p[i] << (24 - 8 * i);
  return a;
}

/* The hot loop; add_path is a constant at each call site so the compiler
 * drops the path id branch. One bounds check and one 4-octet load per
 * prefix, the mask without a branch, the net_addr written in one store. */
static inline int
bgp_nlri_ip4(struct bgp_nlri_iter *it, net_addr *nets, u32 *ids, uint max, struct bgp_error *err,
             bool add_path)
{
  const u8 *p = it->c.p, *end = it->c.end;
  uint n = 0;
  while (n < max && p < end) {
    u32 id = 0;
    if (add_path) {
      if (end - p < 5)
        return bgp_nlri_error(it, err);
      id = bgp_load32(p);
      p += 4;
    }
    uint pxlen = *p++;
    uint bytes = (pxlen + 7) >> 3;
    if (unlikely(pxlen > IP4_MAX_PREFIX_LENGTH || (uint) (end - p) < bytes))
      return bgp_nlri_error(it, err);
    /* octets past the prefix belong to the next one: masked off */
    u32 a = likely(end - p >= 4) ? bgp_load32(p) : bgp_nlri_tail(p, bytes);
    a = (u32) (((u64) a >> (32 - pxlen)) << (32 - pxlen));
    net_addr_ip4 na = { NET_IP4, pxlen, sizeof(net_addr_ip4), { a } };
    memcpy(&nets[n], &na, sizeof(na));
    if (ids)
      ids[n] = id;
    p += bytes;
    n++;
  }
  it->c.p = p;
  return n;
}

static int
bgp_nlri_ip6(struct bgp_nlri_iter *it, net_addr *nets, u32 *ids, uint max, struct bgp_error *err)
{
  struct bgp_cur *c = &it->c;
  uint n = 0;
  while (n < max && !bgp_cur_empty(c)) {
    u32 id = 0;
    u8 pxlen;
    const u8 *px;
    if ((it->add_path && !bgp_get_u32(c, &id)) || !bgp_get_u8(c, &pxlen) || pxlen > IP6_MAX_PREFIX_LENGTH ||
        !bgp_get_bytes(c, (pxlen + 7u) >> 3, &px))
      return bgp_nlri_error(it, err);
    u8 tmp[16] = { 0 };
    memcpy(tmp, px, (pxlen + 7u) >> 3);
    net_fill_ip6(&nets[n], ip6_and(ip6_get(tmp), ip6_mkmask(pxlen)), pxlen);
    if (ids)
      ids[n] = id;
    n++;
  }
  return n;
}

int
bgp_nlri_decode(struct bgp_nlri_iter *it, net_addr *nets, u32 *path_ids, uint max, struct bgp_error *err)
{
  if (it->af == BGP_AF_IPV6)
    return bgp_nlri_ip6(it, nets, path_ids, max, err);
  if (it->add_path)
    return bgp_nlri_ip4(it, nets, path_ids, max, err, true);
  return bgp_nlri_ip4(it, nets, path_ids, max, err, false);
}

int
bgp_nlri_validate(struct bgp_nlri_iter it, uint *count, struct bgp_error *err)
{
  net_addr nets[64];
  int n;
  *count = 0;
  while ((n = bgp_nlri_decode(&it, nets, NULL, ARRAY_SIZE(nets), err)) > 0)
    *count += n;
  return n;
}

/* ---------------------------------------------------------------- */
/* UPDATE send                                                       */

static inline uint
bgp_nlri_size(const net_addr *n, bool add_path)
{
  return (add_path ? 5 : 1) + ((n->pxlen + 7u) >> 3);
}

/* Pack nets of one type into [*wp, end); returns how many fit. */
static uint
bgp_nlri_pack(u8 **wp, u8 *end, enum bgp_af af, const net_addr *nets, const u32 *ids, uint n, bool add_path)
{
  u8 *w = *wp;
  u8 type = bgp_af_net_type(af);
  uint max = type == NET_IP4 ? IP4_MAX_PREFIX_LENGTH : IP6_MAX_PREFIX_LENGTH;
  uint i;
  for (i = 0; i < n; i++) {
    const net_addr *net = &nets[i];
    /* A foreign or bogus net is the caller's bug: stop before it. */
    if (net->type != type || net->pxlen > max || (uint) (end - w) < bgp_nlri_size(net, add_path))
      break;
    if (add_path) {
      bgp_store32(w, ids ? ids[i] : 0);
      w += 4;
    }
    uint bytes = (net->pxlen + 7u) >> 3;
    *w++ = net->pxlen;
    if (type == NET_IP4 && end - w >= 4) {
      /* all four octets, then advance by the prefix's own: cheaper than a
       * variable-length copy; the extra ones are overwritten or unused */
      bgp_store32(w, ((const net_addr_ip4 *) net)->prefix.addr);
    } else {
      u8 tmp[16];
      if (type == NET_IP4)
        bgp_store32(tmp, ((const net_addr_ip4 *) net)->prefix.addr);
      else
        ip6_put(tmp, ((const net_addr_ip6 *) net)->prefix);
      memcpy(w, tmp, bytes);
    }
    w += bytes;
  }
  *wp = w;
  return i;
}

static uint
bgp_tx_limit(const struct bgp_tx_ctx *ctx, uint size)
{
  return MIN(size, ctx->max_len ? ctx->max_len : BGP_MAX_MSG_LEN);
}

static uint
bgp_encode_body_reach(const struct bgp_tx_ctx *ctx, const struct ea_list *l, const net_addr *nets,
                      const u32 *ids, uint n, u8 *buf, uint limit, uint *done)
{
  int al = bgp_attrs_encode(ctx, l, true, buf + BGP_MIN_UPDATE_LEN, limit - BGP_MIN_UPDATE_LEN);
  if (al < 0)
    return 0;
  bgp_store16(buf + 19, 0);
  bgp_store16(buf + 21, al);
  u8 *w = buf + BGP_MIN_UPDATE_LEN + al;
  *done = bgp_nlri_pack(&w, buf + limit, BGP_AF_IPV4, nets, ids, n, ctx->add_path[BGP_AF_IPV4]);
  if (!*done)
    return 0;
  bgp_header_put(buf, w - buf, BGP_MSG_UPDATE);
  return w - buf;
}

/*
 * MP_REACH goes first (RFC 7606 5.1), but how many NLRI fit depends on the
 * length of the attributes after it. So: encode the attributes where the
 * NLRI will start, park them at the end of the buffer, pack NLRI into the
 * gap, and slide the attributes back behind the NLRI.
 */
static uint
bgp_encode_mp_reach(const struct bgp_tx_ctx *ctx, const struct ea_list *l, enum bgp_af af, const ip_addr *nh,
                    uint nh_count, const net_addr *nets, const u32 *ids, uint n, u8 *buf, uint limit, uint *done)
{
  uint nh_len = 16 * nh_count;
  uint start = BGP_MIN_UPDATE_LEN + 4 + 5 + nh_len;   /* first NLRI byte */
  if (limit <= start)
    return 0;
  int al = bgp_attrs_encode(ctx, l, false, buf + start, limit - start);
  if (al < 0)
    return 0;
  u8 *parked = buf + limit - al;
  memmove(parked, buf + start, al);
  u8 *w = buf + start;
  *done = bgp_nlri_pack(&w, parked, af, nets, ids, n, ctx->add_path[af]);
  if (!*done)
    return 0;
  uint nlri_len = w - (buf + start);
  memmove(w, parked, al);

  u8 *m = buf + BGP_MIN_UPDATE_LEN;
  m[0] = BAF_OPTIONAL | BAF_EXT_LEN;
  m[1] = BA_MP_REACH_NLRI;
  bgp_store16(m + 2, 5 + nh_len + nlri_len);
  bgp_store16(m + 4, bgp_af_afi(af));
  m[6] = BGP_SAFI_UNICAST;
  m[7] = nh_len;
  for (uint i = 0; i < nh_count; i++)
    ip6_put(m + 8 + 16 * i, nh[i]);
  m[8 + nh_len] = 0;   /* reserved (formerly SNPA count) */

  uint total = start + nlri_len + al;
  bgp_store16(buf + 19, 0);
  bgp_store16(buf + 21, total - BGP_MIN_UPDATE_LEN);
  bgp_header_put(buf, total, BGP_MSG_UPDATE);
  return total;
}

uint
bgp_update_encode_reach(const struct bgp_tx_ctx *ctx, const struct ea_list *l, enum bgp_af af,
                        const net_addr *nets, const u32 *path_ids, uint n, u8 *buf, uint size, uint *done)
{
  uint limit = bgp_tx_limit(ctx, size);
  *done = 0;
  if (!n || af >= BGP_AF_MAX || limit < BGP_MIN_UPDATE_LEN)
    return 0;
  const struct eattr *e = ea_find(l, BGP_EA(BA_NEXT_HOP));
  if (!e || e->type != EAF_IP || e->len < sizeof(ip_addr))
    return 0;
  ip_addr nh[2];
  uint nh_count = e->len >= 2 * sizeof(ip_addr) ? 2 : 1;
  memcpy(nh, ea_data(l, e), nh_count * sizeof(ip_addr));

  if (af == BGP_AF_IPV4 && ipa_is_ip4(nh[0]))
    return bgp_encode_body_reach(ctx, l, nets, path_ids, n, buf, limit, done);
  /* RFC 8950: an IPv6 next hop for IPv4 NLRI only if the peer agreed */
  if (af == BGP_AF_IPV4 && !ctx->ext_next_hop[BGP_AF_IPV4])
    return 0;
  return bgp_encode_mp_reach(ctx, l, af, nh, nh_count, nets, path_ids, n, buf, limit, done);
}

uint
bgp_update_encode_withdraw(const struct bgp_tx_ctx *ctx, enum bgp_af af, const net_addr *nets,
                           const u32 *path_ids, uint n, u8 *buf, uint size, uint *done)
{
  uint limit = bgp_tx_limit(ctx, size);
  *done = 0;
  if (!n || af >= BGP_AF_MAX || limit < BGP_MIN_UPDATE_LEN + 7)
    return 0;
  bool add_path = ctx->add_path[af];
  u8 *w;
  if (af == BGP_AF_IPV4) {
    w = buf + 21;
    *done = bgp_nlri_pack(&w, buf + limit - 2, af, nets, path_ids, n, add_path);
    bgp_store16(buf + 19, w - (buf + 21));
    bgp_store16(w, 0);
    w += 2;
  } else {
    u8 *m = buf + BGP_MIN_UPDATE_LEN;
    w = m + 7;
    *done = bgp_nlri_pack(&w, buf + limit, af, nets, path_ids, n, add_path);
    m[0] = BAF_OPTIONAL | BAF_EXT_LEN;
    m[1] = BA_MP_UNREACH_NLRI;
    bgp_store16(m + 2, w - (m + 4));
    bgp_store16(m + 4, bgp_af_afi(af));
    m[6] = BGP_SAFI_UNICAST;
    bgp_store16(buf + 19, 0);
    bgp_store16(buf + 21, w - m);
  }
  if (!*done)
    return 0;
  bgp_header_put(buf, w - buf, BGP_MSG_UPDATE);
  return w - buf;
}

uint
bgp_update_encode_eor(enum bgp_af af, u8 *buf, uint size)
{
  uint len = af == BGP_AF_IPV4 ? BGP_MIN_UPDATE_LEN : BGP_MIN_UPDATE_LEN + 6;
  if (size < len || af >= BGP_AF_MAX)
    return 0;
  bgp_header_put(buf, len, BGP_MSG_UPDATE);
  bgp_store16(buf + 19, 0);
  bgp_store16(buf + 21, len - BGP_MIN_UPDATE_LEN);
  if (af != BGP_AF_IPV4) {
    u8 *m = buf + BGP_MIN_UPDATE_LEN;
    m[0] = BAF_OPTIONAL;
    m[1] = BA_MP_UNREACH_NLRI;
    m[2] = 3;
    bgp_store16(m + 3, bgp_af_afi(af));
    m[5] = BGP_SAFI_UNICAST;
  }
  return len;
}
