/*
 * DOC: BGP OPEN and capabilities: encode, decode, negotiate.
 *
 * struct bgp_caps says what one side announced: for the local side it is
 * built from the config and encoded by bgp_open_encode(); for the remote
 * side bgp_open_decode() fills it from the peer's OPEN. Neither is what
 * the session may use: bgp_caps_negotiate() combines the two into struct
 * bgp_session_caps (families both carry, ADD-PATH per direction, message
 * size, GR state of the peer, the RFC 9234 role check).
 *
 * Unknown capabilities are ignored and counted (RFC 5492 3). A known
 * capability with a length its RFC does not allow is an OPEN Message
 * Error with subcode 0 (no RFC names a better one; BIRD does the same),
 * except the hostname courtesy capability, which is merely ignored.
 *
 * Pure functions; no allocation.
 */
#include <string.h>

#include "proto/bgp/bgp_wire.h"

void
bgp_caps_init(struct bgp_caps *c)
{
  memset(c, 0, sizeof(*c));
  c->role = BGP_ROLE_NONE;
}

/* ---------------------------------------------------------------- */
/* Encode                                                            */

static u8 *
cap_hdr(u8 *p, u8 code, uint len)
{
  p[0] = code;
  p[1] = len;
  return p + 2;
}

static u8 *
cap_af(u8 *p, enum bgp_af af)
{
  bgp_store16(p, bgp_af_afi(af));
  p[2] = BGP_SAFI_UNICAST;
  return p + 3;
}

static u8 *
caps_encode_af_lists(const struct bgp_caps *c, u8 *p)
{
  uint n = 0;
  for (uint af = 0; af < BGP_AF_MAX; af++)
    n += c->add_path[af] ? 1 : 0;
  if (n) {
    p = cap_hdr(p, BGP_CAP_ADD_PATH, 4 * n);
    for (uint af = 0; af < BGP_AF_MAX; af++)
      if (c->add_path[af]) {
        p = cap_af(p, af);
        *p++ = c->add_path[af] & (BGP_ADD_PATH_RX | BGP_ADD_PATH_TX);
      }
  }
  if (c->gr) {
    for (uint af = n = 0; af < BGP_AF_MAX; af++)
      n += c->gr_af[af] ? 1 : 0;
    p = cap_hdr(p, BGP_CAP_GR, 2 + 4 * n);
    bgp_store16(p, ((c->gr_flags & 0xf) << 12) | (c->gr_time & 0xfff));
    p += 2;
    for (uint af = 0; af < BGP_AF_MAX; af++)
      if (c->gr_af[af]) {
        p = cap_af(p, af);
        *p++ = c->gr_af[af] & BGP_GR_AF_FORWARDING ? 0x80 : 0;
      }
  }
  if (c->llgr) {
    for (uint af = n = 0; af < BGP_AF_MAX; af++)
      n += c->llgr_af[af] ? 1 : 0;
    p = cap_hdr(p, BGP_CAP_LLGR, 7 * n);
    for (uint af = 0; af < BGP_AF_MAX; af++)
      if (c->llgr_af[af]) {
        p = cap_af(p, af);
        *p++ = c->llgr_af[af] & BGP_LLGR_AF_FORWARDING ? 0x80 : 0;
        p[0] = c->llgr_time[af] >> 16;
        bgp_store16(p + 1, c->llgr_time[af]);
        p += 3;
      }
  }
  return p;
}

/* All capabilities into buf (at least 1024 bytes); returns the length. */
static uint
caps_encode(const struct bgp_caps *c, u8 *buf)
{
  u8 *p = buf;
  for (uint af = 0; af < BGP_AF_MAX; af++)
    if (c->mp[af]) {
      p = cap_hdr(p, BGP_CAP_MP, 4);
      bgp_store16(p, bgp_af_afi(af));
      p[2] = 0;
      p[3] = BGP_SAFI_UNICAST;
      p += 4;
    }
  if (c->route_refresh)
    p = cap_hdr(p, BGP_CAP_ROUTE_REFRESH, 0);
  if (c->ext_next_hop[BGP_AF_IPV4]) {
    /* RFC 8950 4: IPv4 unicast NLRI over an IPv6 next hop */
    p = cap_hdr(p, BGP_CAP_EXT_NEXT_HOP, 6);
    bgp_store16(p, BGP_AFI_IPV4);
    bgp_store16(p + 2, BGP_SAFI_UNICAST);
    bgp_store16(p + 4, BGP_AFI_IPV6);
    p += 6;
  }
  if (c->ext_messages)
    p = cap_hdr(p, BGP_CAP_EXT_MESSAGE, 0);
  if (c->role != BGP_ROLE_NONE) {
    p = cap_hdr(p, BGP_CAP_ROLE, 1);
    *p++ = c->role;
  }
  if (c->as4) {
    p = cap_hdr(p, BGP_CAP_AS4, 4);
    bgp_store32(p, c->as4_number);
    p += 4;
  }
  p = caps_encode_af_lists(c, p);
  if (c->enhanced_refresh)
    p = cap_hdr(p, BGP_CAP_ENHANCED_RR, 0);
  if (c->hostname[0]) {
    /* One length octet for the whole capability: trim to fit. */
    uint dl = MIN(strnlen(c->domain, sizeof(c->domain)), 64);
    uint hl = MIN(strnlen(c->hostname, sizeof(c->hostname)), 253 - dl);
    p = cap_hdr(p, BGP_CAP_HOSTNAME, 2 + hl + dl);
    *p++ = hl;
    memcpy(p, c->hostname, hl);
    p += hl;
    *p++ = dl;
    memcpy(p, c->domain, dl);
    p += dl;
  }
  return p - buf;
}

uint
bgp_open_encode(u8 *buf, uint size, const struct bgp_open_msg *m)
{
  u8 caps[1024];
  uint cl = caps_encode(&m->caps, caps);
  /* RFC 9072: parameters that do not fit one length octet go in the
   * extended form (255, 255, u16 length, u16 parameter lengths) */
  bool ext = cl + 2 > 255;
  uint opt_len = cl ? (ext ? 3 + 3 + cl : 2 + cl) : 0;
  uint len = BGP_MIN_OPEN_LEN + opt_len;
  if (size < len || len > BGP_MAX_MSG_LEN)
    return 0;

  u8 *p = buf + bgp_header_put(buf, len, BGP_MSG_OPEN);
  p[0] = BGP_VERSION;
  bgp_store16(p + 1, m->my_as);
  bgp_store16(p + 3, m->hold_time);
  bgp_store32(p + 5, m->router_id);
  p += 9;
  if (ext) {
    *p++ = 255;
    *p++ = BGP_OPT_PARAM_EXT;
    bgp_store16(p, cl + 3);
    p[2] = BGP_OPT_PARAM_CAPS;
    bgp_store16(p + 3, cl);
    p += 5;
  } else {
    *p++ = opt_len;
    if (cl) {
      *p++ = BGP_OPT_PARAM_CAPS;
      *p++ = cl;
    }
  }
  memcpy(p, caps, cl);
  return len;
}

/* ---------------------------------------------------------------- */
/* Decode                                                            */

static int
open_error(struct bgp_error *err, u8 subcode, const char *reason)
{
  bgp_error_set(err, BGP_ERR_OPEN, subcode, NULL, 0, reason);
  return -1;
}

/* "len bytes of text" from the peer into a NUL-terminated printable string */
static void
copy_printable(char *dst, const u8 *src, uint len)
{
  for (uint i = 0; i < len; i++)
    dst[i] = src[i] < 0x20 || src[i] >= 0x7f ? '?' : (char) src[i];
  dst[len] = 0;
}

static void
cap_hostname(struct bgp_caps *c, struct bgp_cur v)
{
  u8 hl, dl;
  const u8 *h, *d;
  /* A courtesy capability: malformed means ignored, not a session error. */
  if (!bgp_get_u8(&v, &hl) || !bgp_get_bytes(&v, hl, &h) || !bgp_get_u8(&v, &dl) || !bgp_get_bytes(&v, dl, &d))
    return;
  copy_printable(c->hostname, h, hl);
  copy_printable(c->domain, d, dl);
}

/* Tuples of AFI/SAFI + per-AF bytes (ADD-PATH, GR, LLGR). */
static void
cap_af_tuples(struct bgp_caps *c, u8 code, struct bgp_cur v)
{
  u16 afi;
  u8 safi, flags;
  while (bgp_get_u16(&v, &afi) && bgp_get_u8(&v, &safi) && bgp_get_u8(&v, &flags)) {
    int af = bgp_af_index(afi, safi);
    u32 t = 0;
    if (code == BGP_CAP_LLGR && !bgp_get_u24(&v, &t))
      return;
    if (af < 0)
      continue;
    if (code == BGP_CAP_ADD_PATH && flags >= 1 && flags <= 3)   /* RFC 7911 4: others are ignored */
      c->add_path[af] = flags;
    else if (code == BGP_CAP_GR)
      c->gr_af[af] = BGP_GR_AF_PRESENT | (flags & 0x80 ? BGP_GR_AF_FORWARDING : 0);
    else if (code == BGP_CAP_LLGR) {
      c->llgr_af[af] = BGP_LLGR_AF_PRESENT | (flags & 0x80 ? BGP_LLGR_AF_FORWARDING : 0);
      c->llgr_time[af] = t;
    }
  }
}

static void
cap_ext_next_hop(struct bgp_caps *c, struct bgp_cur v)
{
  u16 afi, safi, nh_afi;
  while (bgp_get_u16(&v, &afi) && bgp_get_u16(&v, &safi) && bgp_get_u16(&v, &nh_afi))
    if (afi == BGP_AFI_IPV4 && safi == BGP_SAFI_UNICAST && nh_afi == BGP_AFI_IPV6)
      c->ext_next_hop[BGP_AF_IPV4] = true;
}

/* Expected length of a capability: exact, or a multiple (+ base). */
static bool
cap_len_ok(u8 code, uint len)
{
  switch (code) {
  case BGP_CAP_MP:
  case BGP_CAP_AS4:
    return len == 4;
  case BGP_CAP_ROUTE_REFRESH:
  case BGP_CAP_ROUTE_REFRESH_OLD:
  case BGP_CAP_EXT_MESSAGE:
  case BGP_CAP_ENHANCED_RR:
    return len == 0;
  case BGP_CAP_ROLE:
    return len == 1;
  case BGP_CAP_EXT_NEXT_HOP:
    return len % 6 == 0;
  case BGP_CAP_GR:
    return len >= 2 && (len - 2) % 4 == 0;
  case BGP_CAP_ADD_PATH:
    return len % 4 == 0;
  case BGP_CAP_LLGR:
    return len % 7 == 0;
  default:
    return true;
  }
}

static int
cap_decode(struct bgp_caps *c, u8 code, struct bgp_cur v, struct bgp_error *err)
{
  const u8 *p = v.p;
  if (!cap_len_ok(code, bgp_cur_left(&v)))
    return open_error(err, BGP_ERR_OPEN_UNSPECIFIC, "Malformed capability");
  switch (code) {
  case BGP_CAP_MP: {
    int af = bgp_af_index(bgp_load16(p), p[3]);
    c->mp_any = true;
    if (af >= 0)
      c->mp[af] = true;
    break;
  }
  case BGP_CAP_ROUTE_REFRESH:
  case BGP_CAP_ROUTE_REFRESH_OLD:
    c->route_refresh = true;
    break;
  case BGP_CAP_EXT_NEXT_HOP:
    cap_ext_next_hop(c, v);
    break;
  case BGP_CAP_EXT_MESSAGE:
    c->ext_messages = true;
    break;
  case BGP_CAP_ROLE:
    /* RFC 9234 4.2: several Role capabilities with different values are a
     * mismatch, decided in bgp_caps_negotiate() */
    if (c->role != BGP_ROLE_NONE && c->role != p[0])
      c->role_conflict = true;
    c->role = p[0];
    break;
  case BGP_CAP_GR:
    c->gr = true;
    c->gr_flags = p[0] >> 4;
    c->gr_time = bgp_load16(p) & 0xfff;
    bgp_skip(&v, 2);
    cap_af_tuples(c, code, v);
    break;
  case BGP_CAP_AS4:
    c->as4 = true;
    c->as4_number = bgp_load32(p);
    break;
  case BGP_CAP_ADD_PATH:
  case BGP_CAP_LLGR:
    if (code == BGP_CAP_LLGR)
      c->llgr = true;
    cap_af_tuples(c, code, v);
    break;
  case BGP_CAP_ENHANCED_RR:
    c->enhanced_refresh = true;
    break;
  case BGP_CAP_HOSTNAME:
    cap_hostname(c, v);
    break;
  default:
    c->unknown++;   /* RFC 5492 3: ignore what we do not understand */
  }
  return 0;
}

static int
caps_decode(struct bgp_caps *c, struct bgp_cur v, struct bgp_error *err)
{
  while (!bgp_cur_empty(&v)) {
    u8 code, len;
    struct bgp_cur cv;
    if (!bgp_get_u8(&v, &code) || !bgp_get_u8(&v, &len) || !bgp_get_sub(&v, len, &cv))
      return open_error(err, BGP_ERR_OPEN_UNSPECIFIC, "Malformed capability list");
    if (cap_decode(c, code, cv, err) < 0)
      return -1;
  }
  return 0;
}

/* Optional parameters, classic (1-octet lengths) or RFC 9072 extended. */
static int
open_params_decode(struct bgp_open_msg *m, struct bgp_cur *c, struct bgp_error *err)
{
  u8 opt_len, type;
  u16 ext_len;
  bool ext = false;
  struct bgp_cur params;
  if (!bgp_get_u8(c, &opt_len))
    return open_error(err, BGP_ERR_OPEN_UNSPECIFIC, "Truncated OPEN");
  /* RFC 9072 2: length 255 followed by type 255 announces the extended form */
  if (opt_len == 255 && bgp_cur_left(c) >= 1 && c->p[0] == BGP_OPT_PARAM_EXT) {
    bgp_skip(c, 1);
    if (!bgp_get_u16(c, &ext_len) || !bgp_get_sub(c, ext_len, &params))
      return open_error(err, BGP_ERR_OPEN_UNSPECIFIC, "Malformed optional parameters");
    ext = true;
  } else if (!bgp_get_sub(c, opt_len, &params))
    return open_error(err, BGP_ERR_OPEN_UNSPECIFIC, "Malformed optional parameters");
  if (!bgp_cur_empty(c))
    return open_error(err, BGP_ERR_OPEN_UNSPECIFIC, "Trailing data after optional parameters");

  while (!bgp_cur_empty(&params)) {
    u16 plen = 0;
    u8 plen8;
    struct bgp_cur pv;
    if (!bgp_get_u8(&params, &type) || (ext ? !bgp_get_u16(&params, &plen) : !bgp_get_u8(&params, &plen8)) ||
        !bgp_get_sub(&params, ext ? plen : plen8, &pv))
      return open_error(err, BGP_ERR_OPEN_UNSPECIFIC, "Malformed optional parameters");
    /* RFC 4271 6.2 / RFC 5492: capabilities are the only parameter left */
    if (type != BGP_OPT_PARAM_CAPS)
      return open_error(err, BGP_ERR_OPEN_UNSUP_OPT_PARAM, "Unsupported optional parameter");
    if (caps_decode(&m->caps, pv, err) < 0)
      return -1;
  }
  return 0;
}

int
bgp_open_decode(const u8 *body, uint len, struct bgp_open_msg *m, struct bgp_error *err)
{
  struct bgp_cur c = bgp_cur_init(body, len);
  memset(m, 0, sizeof(*m));
  bgp_caps_init(&m->caps);
  if (!bgp_get_u8(&c, &m->version) || !bgp_get_u16(&c, &m->my_as) || !bgp_get_u16(&c, &m->hold_time) ||
      !bgp_get_u32(&c, &m->router_id)) {
    bgp_error_set(err, BGP_ERR_HEADER, BGP_ERR_HDR_BAD_LENGTH, NULL, 2, "Truncated OPEN");
    bgp_store16(err->own, len + BGP_HEADER_LEN);
    return -1;
  }
  if (m->version != BGP_VERSION) {
    /* RFC 4271 6.2: data = the largest version we support */
    open_error(err, BGP_ERR_OPEN_BAD_VERSION, "Unsupported version");
    err->len = 2;
    bgp_store16(err->own, BGP_VERSION);
    return -1;
  }
  /* RFC 4271 4.2 / 6.2: hold time 1 and 2 are unacceptable */
  if (m->hold_time == 1 || m->hold_time == 2)
    return open_error(err, BGP_ERR_OPEN_BAD_HOLD_TIME, "Unacceptable hold time");
  /* RFC 6286 2.2: the identifier is a nonzero 4-octet number */
  if (!m->router_id)
    return open_error(err, BGP_ERR_OPEN_BAD_BGP_ID, "Bad BGP identifier");
  if (open_params_decode(m, &c, err) < 0)
    return -1;
  m->peer_as = m->caps.as4 ? m->caps.as4_number : m->my_as;
  /* RFC 7607 2: AS 0 in My AS or in the AS4 capability -> Bad Peer AS */
  if (!m->my_as || !m->peer_as)
    return open_error(err, BGP_ERR_OPEN_BAD_PEER_AS, "Bad peer AS 0");
  return 0;
}

/* ---------------------------------------------------------------- */
/* Negotiation                                                       */

/* RFC 9234 4.2, table 2: the role pairs that make sense. */
static bool
bgp_roles_match(u8 local, u8 remote)
{
  switch (local) {
  case BGP_ROLE_PROVIDER: return remote == BGP_ROLE_CUSTOMER;
  case BGP_ROLE_CUSTOMER: return remote == BGP_ROLE_PROVIDER;
  case BGP_ROLE_RS: return remote == BGP_ROLE_RS_CLIENT;
  case BGP_ROLE_RS_CLIENT: return remote == BGP_ROLE_RS;
  case BGP_ROLE_PEER: return remote == BGP_ROLE_PEER;
  default: return false;
  }
}

static int
bgp_role_check(const struct bgp_caps *local, const struct bgp_caps *remote, struct bgp_error *err)
{
  if (local->role == BGP_ROLE_NONE)
    return 0;
  bool bad = remote->role_conflict ||
             (remote->role == BGP_ROLE_NONE ? local->role_strict : !bgp_roles_match(local->role, remote->role));
  if (!bad)
    return 0;
  open_error(err, BGP_ERR_OPEN_ROLE_MISMATCH, "Role mismatch");
  return BGP_ERR_OPEN_ROLE_MISMATCH;
}

static void
bgp_negotiate_gr(const struct bgp_caps *local, const struct bgp_caps *remote, struct bgp_session_caps *out)
{
  out->gr_peer = remote->gr;
  out->gr_peer_restarting = remote->gr && (remote->gr_flags & BGP_GRF_RESTART);
  /* RFC 8538 2: the N bit counts only when both sides set it */
  out->gr_peer_notification = local->gr && remote->gr && (local->gr_flags & remote->gr_flags & BGP_GRF_NOTIFICATION);
  out->gr_peer_time = remote->gr ? remote->gr_time : 0;
  out->llgr_peer = remote->llgr;
  for (uint af = 0; af < BGP_AF_MAX; af++) {
    if (!out->af[af])
      continue;
    out->gr_peer_af[af] = remote->gr ? remote->gr_af[af] : 0;
    out->llgr_peer_af[af] = remote->llgr ? remote->llgr_af[af] : 0;
    out->llgr_peer_time[af] = out->llgr_peer_af[af] ? remote->llgr_time[af] : 0;
  }
}

int
bgp_caps_negotiate(const struct bgp_caps *local, const struct bgp_caps *remote, struct bgp_session_caps *out,
                   struct bgp_error *err)
{
  memset(out, 0, sizeof(*out));
  for (uint af = 0; af < BGP_AF_MAX; af++) {
    /* RFC 4760 8: a speaker that sends no MP capability carries IPv4
     * unicast only */
    bool l = local->mp_any || local->mp[BGP_AF_IPV4] || local->mp[BGP_AF_IPV6] ? local->mp[af] : af == BGP_AF_IPV4;
    bool r = remote->mp_any ? remote->mp[af] : af == BGP_AF_IPV4;
    out->af[af] = l && r;
    /* RFC 7911 5: we receive path ids if we can receive and they can send */
    if (out->af[af]) {
      out->add_path[af] = ((local->add_path[af] & BGP_ADD_PATH_RX) && (remote->add_path[af] & BGP_ADD_PATH_TX)
                               ? BGP_ADD_PATH_RX : 0) |
                          ((local->add_path[af] & BGP_ADD_PATH_TX) && (remote->add_path[af] & BGP_ADD_PATH_RX)
                               ? BGP_ADD_PATH_TX : 0);
      out->ext_next_hop[af] = local->ext_next_hop[af] && remote->ext_next_hop[af];
    }
  }
  out->as4 = local->as4 && remote->as4;
  out->route_refresh = remote->route_refresh;
  out->enhanced_refresh = local->enhanced_refresh && remote->enhanced_refresh;
  /* RFC 8654 3: extended messages only between speakers that both announced */
  bool ext = local->ext_messages && remote->ext_messages;
  out->rx_max_len = out->tx_max_len = ext ? BGP_MAX_EXT_MSG_LEN : BGP_MAX_MSG_LEN;
  bgp_negotiate_gr(local, remote, out);
  out->local_role = local->role;
  out->peer_role = remote->role;
  /* A `mandatory` family the neighbor does not carry: no session (BIRD 2's
   * "Required capability missing") */
  for (uint af = 0; af < BGP_AF_MAX; af++)
    if (local->mp_mandatory[af] && !out->af[af])
      return open_error(err, BGP_ERR_OPEN_UNSUP_CAPABILITY, "Required capability missing");
  return bgp_role_check(local, remote, err);
}
