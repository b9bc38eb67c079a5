/*
 * DOC: BGP in the CLI: `show protocols all` details, route info, attribute
 * formatting for `show route all`, and best-path selection.
 *
 * show_info runs in the main loop and reads only the RCU-published
 * struct bgp_show snapshot. Best-path comparison runs in whatever loop
 * imports a route; it reads immutable attributes and the peer identity.
 */
#include <string.h>
#include "proto/bgp/bgp.h"
#include "proto/bgp/bgp_memo.h"
#include "nest/cli.h"
#include "nest/rt_hostcache.h"
#include "lib/printf.h"

const char *
bgp_err_text(u8 code, u8 subcode)
{
  static const char *const hdr[] = { "Invalid message header", "Connection not synchronized",
                                     "Bad message length", "Bad message type" };
  static const char *const open[] = { "Invalid OPEN message", "Unsupported version number", "Bad peer AS",
                                      "Bad BGP identifier", "Unsupported optional parameter", "Authentication failure",
                                      "Unacceptable hold time", "Required capability missing", "", "", "",
                                      "Role mismatch" };
  static const char *const upd[] = { "Invalid UPDATE message", "Malformed attribute list",
                                     "Unrecognized well-known attribute", "Missing mandatory attribute",
                                     "Invalid attribute flags", "Invalid attribute length", "Invalid ORIGIN attribute",
                                     "AS routing loop", "Invalid NEXT_HOP attribute", "Optional attribute error",
                                     "Invalid network field", "Malformed AS_PATH" };
  static const char *const cease[] = { "Cease", "Maximum number of prefixes reached", "Administrative shutdown",
                                       "Peer de-configured", "Administrative reset", "Connection rejected",
                                       "Other configuration change", "Connection collision resolution",
                                       "Out of Resources", "Hard reset", "BFD session down" };
  switch (code) {
  case BGP_ERR_HEADER: return subcode < ARRAY_SIZE(hdr) ? hdr[subcode] : hdr[0];
  case BGP_ERR_OPEN: return subcode < ARRAY_SIZE(open) && *open[subcode] ? open[subcode] : open[0];
  case BGP_ERR_UPDATE: return subcode < ARRAY_SIZE(upd) ? upd[subcode] : upd[0];
  case BGP_ERR_HOLD_TIMER: return "Hold timer expired";
  case BGP_ERR_FSM: return "Finite state machine error";
  case BGP_ERR_CEASE: return subcode < ARRAY_SIZE(cease) ? cease[subcode] : cease[0];
  case BGP_ERR_ROUTE_REFRESH: return "Invalid ROUTE-REFRESH message";
  default: return "Unknown error";
  }
}

/* --- show protocols all --- */

/* RFC 9234 role as BIRD names it (and as `local role` takes it). */
static const char *
bgp_role_name(u8 role)
{
  static const char *const names[] = {
    [BGP_ROLE_PROVIDER] = "provider", [BGP_ROLE_RS] = "rs_server", [BGP_ROLE_RS_CLIENT] = "rs_client",
    [BGP_ROLE_CUSTOMER] = "customer", [BGP_ROLE_PEER] = "peer",
  };
  return role < ARRAY_SIZE(names) ? names[role] : "?";
}

/* "        AF supported: ipv4 ipv6" of the families whose byte has the bits. */
static void
bgp_show_afs(struct cli *c, const char *what, const u8 *flags, u8 bits)
{
  char afs[32] = "";
  for (int af = 0; af < BGP_AF_MAX; af++)
    if ((flags[af] & bits) == bits)
      bsnprintf(afs + strlen(afs), sizeof(afs) - strlen(afs), " %s", af == BGP_AF_IPV4 ? "ipv4" : "ipv6");
  cli_printf(c, -1006, "        %s:%s", what, afs);
}

/* BIRD shows the details only of a speaker that can restart itself (it
 * lists families), not of one that is merely aware. */
static void
bgp_show_gr_cap(struct cli *c, const struct bgp_caps *k)
{
  cli_printf(c, -1006, "      Graceful restart");
  int able = 0;
  for (int af = 0; af < BGP_AF_MAX; af++)
    able |= k->gr_af[af];
  if (!able)
    return;
  cli_printf(c, -1006, "        Restart time: %u", k->gr_time);
  if (k->gr_flags & BGP_GRF_RESTART)
    cli_printf(c, -1006, "        Restart recovery");
  bgp_show_afs(c, "AF supported", k->gr_af, BGP_GR_AF_PRESENT);
  bgp_show_afs(c, "AF preserved", k->gr_af, BGP_GR_AF_PRESENT | BGP_GR_AF_FORWARDING);
}

static void
bgp_show_llgr_cap(struct cli *c, const struct bgp_caps *k)
{
  cli_printf(c, -1006, "      Long-lived graceful restart");
  int af0 = -1;
  for (int af = BGP_AF_MAX - 1; af >= 0; af--)
    if (k->llgr_af[af])
      af0 = af;
  if (af0 < 0)
    return;
  cli_printf(c, -1006, "        LL stale time: %u", k->llgr_time[af0]);
  bgp_show_afs(c, "AF supported", k->llgr_af, BGP_LLGR_AF_PRESENT);
  bgp_show_afs(c, "AF preserved", k->llgr_af, BGP_LLGR_AF_PRESENT | BGP_LLGR_AF_FORWARDING);
}

static void
bgp_show_caps(struct cli *c, const struct bgp_caps *k)
{
  int mp = 0;
  for (int af = 0; af < BGP_AF_MAX; af++)
    mp |= k->mp[af];
  if (mp) {
    char afs[32] = "";
    for (int af = 0; af < BGP_AF_MAX; af++)
      if (k->mp[af])
        bsnprintf(afs + strlen(afs), sizeof(afs) - strlen(afs), "%s%s", *afs ? " " : "", af == BGP_AF_IPV4 ? "ipv4" : "ipv6");
    cli_printf(c, -1006, "      Multiprotocol");
    cli_printf(c, -1006, "        AF announced: %s", afs);
  }
  if (k->route_refresh)
    cli_printf(c, -1006, "      Route refresh");
  /* Under these two BIRD 2 lists families: those whose NLRI may have an
   * IPv6 next hop, and those that may carry several paths, each way */
  u8 ext_nh[BGP_AF_MAX], any_ext_nh = 0, any_add_path = 0;
  for (int af = 0; af < BGP_AF_MAX; af++) {
    any_ext_nh |= ext_nh[af] = k->ext_next_hop[af];
    any_add_path |= k->add_path[af];
  }
  if (any_ext_nh) {
    cli_printf(c, -1006, "      Extended next hop");
    bgp_show_afs(c, "IPv6 nexthop", ext_nh, 1);
  }
  if (k->ext_messages)
    cli_printf(c, -1006, "      Extended message");
  if (k->gr)
    bgp_show_gr_cap(c, k);
  if (k->as4)
    cli_printf(c, -1006, "      4-octet AS numbers");
  if (any_add_path) {
    cli_printf(c, -1006, "      ADD-PATH");
    bgp_show_afs(c, "RX", k->add_path, BGP_ADD_PATH_RX);
    bgp_show_afs(c, "TX", k->add_path, BGP_ADD_PATH_TX);
  }
  if (k->enhanced_refresh)
    cli_printf(c, -1006, "      Enhanced refresh");
  if (k->llgr)
    bgp_show_llgr_cap(c, k);
  if (k->hostname[0])
    cli_printf(c, -1006, "      Hostname: %s", k->hostname);
  if (k->role != BGP_ROLE_NONE)
    cli_printf(c, -1006, "      Role: %s", bgp_role_name(k->role));
}

/* BIRD 2's lines and order: timers of the start state while the session
 * is not up, the session's details while it is, the last error in both. */
void
bgp_show_info(struct proto *pp, struct cli *c)
{
  struct bgp_proto *p = (struct bgp_proto *) pp;
  const struct bgp_config *cf = (const struct bgp_config *) pp->cf;
  rcu_read_lock();
  const struct bgp_show *s = pp->loop ? rcu_dereference(p->show) : NULL;
  const char *state = s ? bgp_state_name(s->state) : "Down";
  if (s && s->state == BS_ACTIVE && bgp_cf_passive(cf))
    state = "Passive";
  int up = s && s->state == BS_ESTABLISHED && s->have_remote_caps;
  btime now = time_mono_now();
  cli_printf(c, -1006, "  BGP state:          %s", state);
  if (bgp_cf_is_range(cf))
    cli_printf(c, -1006, "    Neighbor range:   %N", &cf->remote_range);
  else
    cli_printf(c, -1006, "    Neighbor address: %I", cf->remote_ip);
  if (up && s->outgoing && cf->remote_port && cf->remote_port != BGP_PORT)
    cli_printf(c, -1006, "    Neighbor port:    %u", cf->remote_port);
  cli_printf(c, -1006, "    Neighbor AS:      %u", cf->remote_as);
  cli_printf(c, -1006, "    Local AS:         %u", cf->local_as);
  if (s && s->gr_active)
    cli_printf(c, -1006, "    Neighbor graceful restart active");
  if (up) {
    cli_printf(c, -1006, "    Neighbor ID:      %R", s->neighbor_id);
    cli_printf(c, -1006, "    Local capabilities");
    bgp_show_caps(c, &s->local_caps);
    cli_printf(c, -1006, "    Neighbor capabilities");
    bgp_show_caps(c, &s->remote_caps);
    cli_printf(c, -1006, "    Session:          %s%s%s%s%s", s->ibgp ? "internal" : "external",
               cf->multihop > 0 ? " multihop" : "", cf->rr_client ? " route-reflector" : "",
               cf->rs_client ? " route-server" : "", s->as4 ? " AS4" : "");
    cli_printf(c, -1006, "    Source address:   %I", s->source_addr);
    if (s->hold_time)
      cli_printf(c, -1006, "    Hold timer:       %t/%u", MAX(s->hold_expires - now, 0), s->hold_time);
    if (s->keepalive_time)
      cli_printf(c, -1006, "    Keepalive timer:  %t/%u", MAX(s->keepalive_expires - now, 0), s->keepalive_time);
  } else if (s) {
    if (s->connect_expires && s->start_state == BS_IDLE)
      cli_printf(c, -1006, "    Error wait:       %t/%u", MAX(s->connect_expires - now, 0), s->error_wait);
    if (s->connect_expires && s->start_state == BS_ACTIVE && s->state == BS_ACTIVE)
      cli_printf(c, -1006, "    Connect delay:    %t/%u", MAX(s->connect_expires - now, 0), cf->connect_delay_time);
    if (s->gr_active && s->gr_restart_expires)
      cli_printf(c, -1006, "    Restart timer:    %t/-", MAX(s->gr_restart_expires - now, 0));
  }
  if (s && s->last_error[0])
    cli_printf(c, -1006, "    Last error:       %s", s->last_error);
  rcu_read_unlock();
}

/* A channel's lines after its statistics: GR state (bgp_gr.c), then the
 * next hop we announce while the session is up, and the IGP table. */
void
bgp_show_channel(struct proto *pp, struct channel *c, struct cli *cli)
{
  struct bgp_proto *p = (struct bgp_proto *) pp;
  int af = bgp_net_af(c->net_type);
  bgp_gr_show_channel(pp, c, cli);
  rcu_read_lock();
  const struct bgp_show *s = pp->loop ? rcu_dereference(p->show) : NULL;
  if (s && s->state == BS_ESTABLISHED && p->ch[af].cf) {
    ip_addr nh = p->ch[af].cf->next_hop_addr;
    cli_printf(cli, -1006, "    BGP Next hop:   %I", ipa_nonzero(nh) ? nh : s->source_addr);
  }
  rcu_read_unlock();
  /* the IGP tables of recursive next hops; none in direct mode (BIRD 2) */
  const struct bgp_channel_config *cf = (const struct bgp_channel_config *) c->cf;
  if (cf->gw_mode == BGP_GW_RECURSIVE && cf->igp_table4)
    cli_printf(cli, -1006, "    IGP IPv4 table: %s", cf->igp_table4->name);
  if (cf->gw_mode == BGP_GW_RECURSIVE && cf->igp_table6)
    cli_printf(cli, -1006, "    IGP IPv6 table: %s", cf->igp_table6->name);
}

/* --- Routes --- */

static u32
bgp_attr_u32(const struct ea_list *a, uint code, u32 dflt)
{
  const struct eattr *e = ea_find(a, BGP_EA(code));
  return e ? e->val : dflt;
}

static void
bgp_path_of(const struct ea_list *a, const u8 **p, uint *len)
{
  const struct eattr *e = ea_find(a, BGP_EA(BA_AS_PATH));
  *p = e ? ea_data(a, e) : NULL;
  *len = e ? e->len : 0;
}

/* Last ASN of the path (the origin AS), 0 if none: a path ending in an
 * AS_SET has no single origin (BIRD prints `[i]` then, as `.last` is 0). */
static u32
bgp_path_last_as(const u8 *p, uint len)
{
  u32 last = 0;
  for (uint i = 0; i + 2 <= len;) {
    uint cnt = p[i + 1];
    if (i + 2 + 4 * cnt > len)
      break;
    if (cnt && (p[i] == AS_PATH_SET || p[i] == AS_PATH_CONFED_SET))
      last = 0;
    else if (cnt)
      memcpy(&last, p + i + 2 + 4 * (cnt - 1), 4);
    i += 2 + 4 * cnt;
  }
  return last;
}

void
bgp_rte_info(const struct rte *r, char *buf, size_t size)
{
  const struct ea_list *a = rte_attrs(r);
  const u8 *path;
  uint plen;
  bgp_path_of(a, &path, &plen);
  u32 origin_as = bgp_path_last_as(path, plen);
  static const char origin_ch[] = "ie?";
  u32 o = bgp_attr_u32(a, BA_ORIGIN, ORIGIN_INCOMPLETE);
  char oc = o < 3 ? origin_ch[o] : '?';
  /* BIRD marks after the preference a route `deterministic med` suppressed
   * with "-", a long-lived stale one with "s", then a recursive next hop's
   * IGP metric: "-" unresolvable, "?" unknown */
  const char *sup = rte_suppressed(r) ? "-" : "", *st = bgp_llgr_stale(a) ? "s" : "";
  char m[16] = "";
  if (!a->igp_metric)
    ;
  else if (a->dest == RTD_UNREACHABLE)
    bsnprintf(m, sizeof(m), "/-");
  else if (a->igp_metric >= IGP_METRIC_UNKNOWN)
    bsnprintf(m, sizeof(m), "/?");
  else
    bsnprintf(m, sizeof(m), "/%u", a->igp_metric);
  if (origin_as)
    bsnprintf(buf, size, " (%u%s%s%s) [AS%u%c]", a->preference, sup, st, m, origin_as, oc);
  else
    bsnprintf(buf, size, " (%u%s%s%s) [%c]", a->preference, sup, st, m, oc);
}


ip_addr
bgp_rte_from(const struct rte *r)
{
  return bgp_src_peer(r)->remote_ip;
}

/* The AS whose MEDs compare with each other: the path's first, past
 * confederation segments; for a path without one (our own AS's routes),
 * as BIRD 2, the session's confederation or local AS. */
static u32
bgp_neighbor_as(const struct bgp_peer_info *i, const struct bgp_memo *m)
{
  return m->first_as ? m->first_as : i->confederation ? i->confederation : i->local_as;
}

static u32
bgp_origin_of(const struct ea_list *a, const struct bgp_memo *m)
{
  return (m->bits & BGP_MEMO_ORIGIN_ODD) ? bgp_attr_u32(a, BA_ORIGIN, ORIGIN_INCOMPLETE) : bgp_memo_origin(m);
}

/* RFC 4271 9.1.2.1 to 9.1.2.2 c), the steps through the MEDs, with
 * BIRD's order and options: 1 when a wins on them, -1 when b does, 0 when
 * they tie. ix, iy: their sessions' peer info, never the config
 * (bgp_rules.h). aigp: whether RFC 7311's metric counts (not for the
 * routes BIRD 2 takes as equal to a group's best, bgp_rte_mergable).
 * What it reads of the attributes is in their lists' memos (bgp_memo.h). */
static int
bgp_rte_cmp_to_med(const struct rte *a, const struct rte *b, const struct bgp_peer_info *ix,
                   const struct bgp_peer_info *iy, bool aigp)
{
#define BGP_WINS(cond) ((cond) ? 1 : -1)
  const struct ea_list *x = rte_attrs(a), *y = rte_attrs(b);
  struct bgp_memo tx, ty;
  const struct bgp_memo *mx = bgp_memo(x, &tx), *my = bgp_memo(y, &ty);
  /* RFC 4271 9.1.2.1: unresolvable next hops lose (BIRD 2: unreachable) */
  int ux = !!(mx->bits & BGP_MEMO_UNREACHABLE), uy = !!(my->bits & BGP_MEMO_UNREACHABLE);
  if (ux != uy)
    return BGP_WINS(uy);
  /* RFC 9494 4.3: long-lived stale routes lose against all others. */
  int sx = !!(mx->bits & BGP_WK_LLGR_STALE), sy = !!(my->bits & BGP_WK_LLGR_STALE);
  if (sx != sy)
    return BGP_WINS(sy);
  /* a LOCAL_PREF dropped from an eBGP peer counts as the session's default */
  u32 lx = (mx->bits & BGP_MEMO_LOCAL_PREF) ? mx->local_pref : ix->default_local_pref;
  u32 ly = (my->bits & BGP_MEMO_LOCAL_PREF) ? my->local_pref : iy->default_local_pref;
  if (lx != ly)
    return BGP_WINS(lx > ly);
  /* RFC 7311 4.1, where BIRD 2 puts it: AIGP before the AS path length
   * (a list without one has the largest total, as one that is broken) */
  if (aigp && ((mx->bits | my->bits) & BGP_MEMO_AIGP)) {
    u64 ax = bgp_aigp_total(x), ay = bgp_aigp_total(y);
    if (ax != ay)
      return BGP_WINS(ax < ay);
  }
  /* RFC 4271 9.1.2.2 a), unless both sessions have `path metric off` */
  if (mx->path_len != my->path_len && (ix->path_metric || iy->path_metric))
    return BGP_WINS(mx->path_len < my->path_len);
  u32 ox = bgp_origin_of(x, mx), oy = bgp_origin_of(y, my);
  if (ox != oy)
    return BGP_WINS(ox < oy);
  /* MEDs compare between routes of one neighbor AS, or between any with
   * `med metric`; a missing one counts as the session's `default bgp_med` */
  if (bgp_neighbor_as(ix, mx) == bgp_neighbor_as(iy, my) || ix->med_metric || iy->med_metric) {
    u32 dx = (mx->bits & BGP_MEMO_MED) ? mx->med : ix->default_med;
    u32 dy = (my->bits & BGP_MEMO_MED) ? my->med : iy->default_med;
    if (dx != dy)
      return BGP_WINS(dx < dy);
  }
  return 0;
#undef BGP_WINS
}

/* RFC 4271 9.1.2.2 with BIRD's order of tiebreaks. */
int
bgp_rte_better(const struct rte *a, const struct rte *b)
{
  const struct bgp_peer_info *ix = bgp_src_peer(a), *iy = bgp_src_peer(b);
  int c = bgp_rte_cmp_to_med(a, b, ix, iy, true);
  if (c)
    return c > 0;
  const struct ea_list *x = rte_attrs(a), *y = rte_attrs(b);
  /* Prefer external; confederation members count as internal (RFC 5065 5.3) */
  if (ix->interior != iy->interior)
    return !ix->interior;
  /* RFC 4271 9.1.2.2 e), where each session's `igp metric` allows */
  u32 gx = ix->igp_metric ? x->igp_metric : 0;
  u32 gy = iy->igp_metric ? y->igp_metric : 0;
  if (gx != gy)
    return gx < gy;
  /* RFC 5004 (`prefer older`): between external routes of different
   * neighbors the one we had first stays */
  if ((ix->prefer_older || iy->prefer_older) && !ix->ibgp && !iy->ibgp && ix != iy &&
      rte_lastmod(a) != rte_lastmod(b))
    return rte_lastmod(a) < rte_lastmod(b);
  /* ORIGINATOR_ID and CLUSTER_LIST: route reflection's, only flagged in
   * the memos */
  struct bgp_memo tx, ty;
  uint rr = (bgp_memo(x, &tx)->bits | bgp_memo(y, &ty)->bits) & (BGP_MEMO_ORIGINATOR | BGP_MEMO_CLUSTER);
  u32 rx = ix->remote_id, ry = iy->remote_id;
  if (rr & BGP_MEMO_ORIGINATOR) {
    rx = bgp_attr_u32(x, BA_ORIGINATOR_ID, rx);
    ry = bgp_attr_u32(y, BA_ORIGINATOR_ID, ry);
  }
  if (rx != ry)
    return rx < ry;
  if (rr & BGP_MEMO_CLUSTER) {
    const struct eattr *cx = ea_find(x, BGP_EA(BA_CLUSTER_LIST)), *cy = ea_find(y, BGP_EA(BA_CLUSTER_LIST));
    uint clx = cx ? cx->len : 0, cly = cy ? cy->len : 0;
    if (clx != cly)
      return clx < cly;
  }
  return ipa_compare(ix->remote_ip, iy->remote_ip) < 0;
}

/* `deterministic med`: routes of a group that tie with its best through
 * the MEDs (BIRD 2's ECMP candidates) are not suppressed either. */
int
bgp_rte_mergable(const struct rte *best, const struct rte *r)
{
  return !bgp_rte_cmp_to_med(best, r, bgp_src_peer(best), bgp_src_peer(r), false);
}

/* `deterministic med`: a route's group is its neighbor AS, the one whose
 * MEDs bgp_rte_better compares. */
u64
bgp_rte_group(const struct rte *r)
{
  const struct bgp_peer_info *i = bgp_src_peer(r);
  if (!i->deterministic_med)
    return 0;
  struct bgp_memo tmp;
  return 1ULL << 32 | bgp_neighbor_as(i, bgp_memo(rte_attrs(r), &tmp));
}

/* --- Attributes in `show route all` (BIRD 2 names) --- */

static const char *
bgp_attr_name(const struct eattr *e, char *buf, size_t size)
{
  u16 id = e->id;
  static const char *const names[] = {
    [BA_ORIGIN] = "origin", [BA_AS_PATH] = "as_path", [BA_NEXT_HOP] = "next_hop",
    [BA_MULTI_EXIT_DISC] = "med", [BA_LOCAL_PREF] = "local_pref", [BA_ATOMIC_AGGR] = "atomic_aggr",
    [BA_AGGREGATOR] = "aggregator", [BA_COMMUNITY] = "community", [BA_ORIGINATOR_ID] = "originator_id",
    [BA_CLUSTER_LIST] = "cluster_list", [BA_EXT_COMMUNITY] = "ext_community",
    [BA_LARGE_COMMUNITY] = "large_community", [BA_AIGP] = "aigp", [BA_OTC] = "otc",
  };
  uint code = bgp_ea_code(id);
  if (code < ARRAY_SIZE(names) && names[code])
    bsnprintf(buf, size, "BGP.%s", names[code]);
  else
    bsnprintf(buf, size, "BGP.%02x [%s%s]", code, (e->flags & BAF_TRANSITIVE) ? "t" : "",
              (e->flags & BAF_PARTIAL) ? "p" : "");
  return buf;
}

/* BIRD's notation: "1 2 {3 4} (5 6) ({7 8})" for sequence, set,
 * confederation sequence and confederation set. */
static void
bgp_format_path(const u8 *p, uint len, char *buf, size_t size)
{
  static const char *const open[] = { [AS_PATH_SET] = "{", [AS_PATH_SEQUENCE] = "",
                                      [AS_PATH_CONFED_SEQUENCE] = "(", [AS_PATH_CONFED_SET] = "({" };
  static const char *const close[] = { [AS_PATH_SET] = "}", [AS_PATH_SEQUENCE] = "",
                                       [AS_PATH_CONFED_SEQUENCE] = ")", [AS_PATH_CONFED_SET] = "})" };
  size_t pos = 0;
  buf[0] = 0;
  for (uint i = 0; i + 2 <= len && pos < size;) {
    uint type = p[i], cnt = p[i + 1];
    if (i + 2 + 4 * cnt > len || type < AS_PATH_SET || type > AS_PATH_CONFED_SET)
      break;
    pos += bsnprintf(buf + pos, size - pos, "%s%s", pos ? " " : "", open[type]);
    for (uint k = 0; k < cnt && pos < size; k++) {
      u32 asn;
      memcpy(&asn, p + i + 2 + 4 * k, 4);
      pos += bsnprintf(buf + pos, size - pos, "%s%u", k ? " " : "", asn);
    }
    if (pos < size)
      pos += bsnprintf(buf + pos, size - pos, "%s", close[type]);
    i += 2 + 4 * cnt;
  }
}

static void
bgp_attr_format(const struct ea_list *l, const struct eattr *e, char *buf, size_t size)
{
  const u8 *d = (e->type == EAF_INT || e->type == EAF_ROUTER_ID) ? NULL : ea_data(l, e);
  size_t pos = 0;
  buf[0] = 0;
  switch (bgp_ea_code(e->id)) {
  case BA_ORIGIN:
    bsnprintf(buf, size, "%s", e->val == 0 ? "IGP" : e->val == 1 ? "EGP" : "Incomplete");
    return;
  case BA_AS_PATH:
    bgp_format_path(d, e->len, buf, size);
    return;
  case BA_NEXT_HOP:
    for (uint i = 0; i + sizeof(ip_addr) <= e->len && pos < size; i += sizeof(ip_addr)) {
      ip_addr a;
      memcpy(&a, d + i, sizeof(a));
      pos += bsnprintf(buf + pos, size - pos, "%s%I", i ? " " : "", a);
    }
    return;
  case BA_ORIGINATOR_ID:
    bsnprintf(buf, size, "%R", e->val);
    return;
  case BA_COMMUNITY:
    for (uint i = 0; i + 4 <= e->len && pos < size; i += 4) {
      u32 v;
      memcpy(&v, d + i, 4);
      pos += bsnprintf(buf + pos, size - pos, "%s(%u,%u)", i ? " " : "", v >> 16, v & 0xffff);
    }
    return;
  case BA_CLUSTER_LIST:
    for (uint i = 0; i + 4 <= e->len && pos < size; i += 4) {
      u32 v;
      memcpy(&v, d + i, 4);
      pos += bsnprintf(buf + pos, size - pos, "%s%R", i ? " " : "", v);
    }
    return;
  case BA_LARGE_COMMUNITY:
    for (uint i = 0; i + 12 <= e->len && pos < size; i += 12) {
      u32 v[3];
      memcpy(v, d + i, 12);
      pos += bsnprintf(buf + pos, size - pos, "%s(%u, %u, %u)", i ? " " : "", v[0], v[1], v[2]);
    }
    return;
  case BA_EXT_COMMUNITY:
    for (uint i = 0; i + 8 <= e->len && pos < size; i += 8) {
      u64 v;
      memcpy(&v, d + i, 8);
      u32 hi = v >> 32, lo = (u32) v;
      uint type = (hi >> 24) & 0xbf, sub = (hi >> 16) & 0xff;   /* ignore the non-transitive bit */
      const char *kind = sub == 2 ? "rt" : sub == 3 ? "ro" : NULL;
      const char *sep = i ? " " : "";
      if (!kind || type > 2)
        pos += bsnprintf(buf + pos, size - pos, "%s(generic, 0x%x, 0x%x)", sep, hi, lo);
      else if (type == 0)
        pos += bsnprintf(buf + pos, size - pos, "%s(%s, %u, %u)", sep, kind, hi & 0xffff, lo);
      else if (type == 1)
        pos += bsnprintf(buf + pos, size - pos, "%s(%s, %R, %u)", sep, kind, (hi << 16) | (lo >> 16), lo & 0xffff);
      else
        pos += bsnprintf(buf + pos, size - pos, "%s(%s, %u, %u)", sep, kind, (hi << 16) | (lo >> 16), lo & 0xffff);
    }
    return;
  case BA_AIGP: {
    u64 m;
    if (bgp_aigp_metric(d, e->len, &m))
      bsnprintf(buf, size, "%llu", (unsigned long long) m);
    else
      bsnprintf(buf, size, "?");          /* as BIRD: no AIGP TLV */
    return;
  }
  case BA_AGGREGATOR:
    if (e->len >= 8) {
      u32 asn, id;
      memcpy(&asn, d, 4);
      memcpy(&id, d + 4, 4);
      bsnprintf(buf, size, "%R AS%u", id, asn);
    }
    return;
  default:
    if (e->type == EAF_INT || e->type == EAF_ROUTER_ID) {
      bsnprintf(buf, size, "%u", e->val);
      return;
    }
    for (uint i = 0; i < e->len && pos + 3 < size; i++)
      pos += bsnprintf(buf + pos, size - pos, "%s%02x", i ? " " : "", d[i]);
  }
}

const struct ea_class_desc bgp_ea_class = { .name = bgp_attr_name, .format = bgp_attr_format };
