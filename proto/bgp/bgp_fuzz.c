/*
 * DOC: libFuzzer harness for the BGP wire codec.
 *
 * Input: one flag octet, then a message body (after the 19-byte header).
 *   bit 0      0 = UPDATE, 1 = OPEN
 *   bits 1..7  receive context: as4, ebgp, confed, ADD-PATH IPv4,
 *              ADD-PATH IPv6, extended next hop IPv4, IPv6 negotiated
 * An UPDATE that parses is interned, its NLRI decoded, and everything is
 * re-encoded (attributes, reach and withdraw messages) and parsed again:
 * what we produce must parse back without error, so encoder bugs show up
 * as aborts too. An OPEN that parses is negotiated, re-encoded and
 * decoded again. The header, NOTIFICATION and ROUTE-REFRESH decoders see
 * the same bytes.
 *
 * Build and run: tools/fuzz.sh bgp [seconds]. With BGP_FUZZ_SEEDS=DIR the
 * harness writes a few valid messages made by our encoders into DIR at
 * start-up, as a seed corpus.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/bgp/bgp_wire.h"
#include "lib/hash.h"
#include "lib/log.h"

static linpool *fz_lp;
static u8 fz_buf[BGP_MAX_EXT_MSG_LEN];
static u8 fz_buf2[BGP_MAX_EXT_MSG_LEN];

#define FZ_MAX_NETS BGP_MAX_EXT_MSG_LEN   /* at least one octet per prefix */
static net_addr fz_nets[FZ_MAX_NETS];
static u32 fz_ids[FZ_MAX_NETS];

static void
fz_check(bool ok, const char *what)
{
  if (!ok) {
    fprintf(stderr, "bgp_fuzz: invariant broken: %s\n", what);
    abort();
  }
}

static struct bgp_rx_ctx
fz_ctx(u8 f)
{
  struct bgp_rx_ctx c = {
    .as4 = f & 2, .ebgp = f & 4, .confed = f & 8, .local_as = 65000, .peer_as = 65001,
  };
  c.add_path[BGP_AF_IPV4] = f & 16;
  c.add_path[BGP_AF_IPV6] = f & 32;
  c.ext_next_hop[BGP_AF_IPV4] = f & 64;
  c.af[BGP_AF_IPV4] = true;
  c.af[BGP_AF_IPV6] = f & 128;
  return c;
}

static struct bgp_tx_ctx
fz_tx(const struct bgp_rx_ctx *rx)
{
  struct bgp_tx_ctx t = { .as4 = rx->as4, .max_len = BGP_MAX_MSG_LEN };
  for (uint af = 0; af < BGP_AF_MAX; af++) {
    t.add_path[af] = rx->add_path[af];
    t.ext_next_hop[af] = rx->ext_next_hop[af];
  }
  return t;
}

/* Drain an iterator; returns the count or -1 on a (legal) NLRI error. */
static int
fz_drain(struct bgp_nlri_iter *it, uint *n)
{
  struct bgp_error err;
  int k;
  while ((k = bgp_nlri_decode(it, fz_nets + *n, fz_ids + *n, MIN(64u, FZ_MAX_NETS - *n), &err)) > 0)
    *n += k;
  if (k < 0)
    fz_check(err.code == BGP_ERR_UPDATE && err.subcode == BGP_ERR_UPD_INVALID_NETWORK, "NLRI error code");
  return k;
}

/* Parse what an encoder produced: must be a well-formed OK UPDATE. */
static void
fz_reparse(const struct bgp_rx_ctx *rx, const u8 *m, uint len, uint want_nets)
{
  uint mlen;
  u8 type;
  struct bgp_error err;
  struct ea_builder b;
  struct bgp_update u;
  struct bgp_rx_ctx c = *rx;
  c.ebgp = false;   /* keep LOCAL_PREF and reflection attributes */
  c.confed = true;
  fz_check(bgp_header_check(m, BGP_MAX_EXT_MSG_LEN, &mlen, &type, &err) == 0 && mlen == len, "own header");
  ea_builder_init(&b);
  fz_check(bgp_update_parse(&c, fz_lp, m + 19, len - 19, &b, &u) == BGP_ATTR_OK, "own UPDATE parses");
  uint n = 0;
  struct bgp_nlri_iter it;
  bgp_update_reach_iter(&c, &u, &it);
  fz_check(fz_drain(&it, &n) == 0, "own NLRI");
  bgp_update_mp_reach_iter(&c, &u, &it);
  fz_check(fz_drain(&it, &n) == 0, "own MP NLRI");
  bgp_update_withdrawn_iter(&c, &u, &it);
  fz_check(fz_drain(&it, &n) == 0, "own withdrawn");
  bgp_update_mp_unreach_iter(&c, &u, &it);
  fz_check(fz_drain(&it, &n) == 0, "own MP withdrawn");
  fz_check(n == want_nets, "own NLRI count");
}

/* Re-encode the nets of one family with list l and parse that back. */
static void
fz_reencode(const struct bgp_rx_ctx *rx, const struct ea_list *l, enum bgp_af af, uint first, uint n)
{
  struct bgp_tx_ctx tx = fz_tx(rx);
  uint done;
  if (!n)
    return;
  uint len = bgp_update_encode_reach(&tx, l, af, fz_nets + first, fz_ids + first, n, fz_buf2, sizeof(fz_buf2), &done);
  if (len) {
    fz_check(len <= tx.max_len && done > 0 && done <= n, "reach length");
    fz_reparse(rx, fz_buf2, len, done);
  }
  len = bgp_update_encode_withdraw(&tx, af, fz_nets + first, fz_ids + first, n, fz_buf2, sizeof(fz_buf2), &done);
  fz_check(len && len <= tx.max_len && done > 0, "withdraw length");
  fz_reparse(rx, fz_buf2, len, done);
}

static void
fz_update(u8 flags, const u8 *body, uint len)
{
  struct bgp_rx_ctx rx = fz_ctx(flags);
  struct ea_builder b;
  struct bgp_update u;
  ea_builder_init(&b);
  lp_flush(fz_lp);
  enum bgp_attr_verdict v = bgp_update_parse(&rx, fz_lp, body, len, &b, &u);
  if (v == BGP_ATTR_SESSION_RESET) {
    fz_check(u.a.err.code == BGP_ERR_UPDATE, "reset code");
    bgp_notification_encode(fz_buf2, sizeof(fz_buf2), BGP_MAX_MSG_LEN, &u.a.err);
    return;
  }

  struct bgp_nlri_iter it;
  uint n = 0;
  bgp_update_withdrawn_iter(&rx, &u, &it);
  fz_drain(&it, &n);
  bgp_update_mp_unreach_iter(&rx, &u, &it);
  fz_drain(&it, &n);
  uint v4_first = n = 0;
  bgp_update_reach_iter(&rx, &u, &it);
  int body_ok = fz_drain(&it, &n);
  uint v4_n = n;
  bgp_update_mp_reach_iter(&rx, &u, &it);
  int mp_ok = fz_drain(&it, &n);
  if (v != BGP_ATTR_OK)
    return;

  struct ea_list *l = ea_intern(&b);
  struct bgp_tx_ctx tx = fz_tx(&rx);
  int al = bgp_attrs_encode(&tx, l, true, fz_buf, sizeof(fz_buf));
  /* what we parsed we can encode, unless 2-byte narrowing (AS4_PATH
   * growing) pushes a huge attribute set past 64k */
  fz_check(al >= 0 || len > 16000, "attrs encode");
  if (body_ok == 0 && u.a.has_next_hop)
    fz_reencode(&rx, l, BGP_AF_IPV4, v4_first, v4_n);
  if (mp_ok == 0 && u.a.mp_reach.present && !u.a.mp_reach.ignored && n > v4_n) {
    bgp_attrs_use_mp_next_hop(&b, &u.a);
    struct ea_list *l6 = ea_intern(&b);
    fz_reencode(&rx, l6, u.a.mp_reach.af, v4_n, n - v4_n);
    ea_unref(l6);
  }
  ea_unref(l);
}

static void
fz_open(const u8 *body, uint len)
{
  struct bgp_open_msg m, m2;
  struct bgp_error err;
  if (bgp_open_decode(body, len, &m, &err) < 0) {
    fz_check(err.code == BGP_ERR_OPEN || err.code == BGP_ERR_HEADER, "OPEN error code");
    return;
  }
  struct bgp_caps local;
  struct bgp_session_caps s;
  bgp_caps_init(&local);
  local.mp[BGP_AF_IPV4] = local.mp[BGP_AF_IPV6] = true;
  local.as4 = local.ext_messages = local.route_refresh = true;
  local.add_path[BGP_AF_IPV4] = BGP_ADD_PATH_RX | BGP_ADD_PATH_TX;
  local.role = BGP_ROLE_RS;
  bgp_caps_negotiate(&local, &m.caps, &s, &err);

  uint elen = bgp_open_encode(fz_buf2, sizeof(fz_buf2), &m);
  if (!elen)
    return;   /* e.g. hostname + everything past 4096: legal to refuse */
  fz_check(bgp_open_decode(fz_buf2 + 19, elen - 19, &m2, &err) == 0, "own OPEN parses");
  const struct bgp_caps *a = &m.caps, *c = &m2.caps;
  fz_check(m2.peer_as == m.peer_as && m2.hold_time == m.hold_time && m2.router_id == m.router_id, "OPEN fields");
  fz_check(a->as4 == c->as4 && a->as4_number == c->as4_number && !memcmp(a->mp, c->mp, sizeof(a->mp)) &&
           !memcmp(a->add_path, c->add_path, sizeof(a->add_path)) && a->gr == c->gr && a->gr_time == c->gr_time &&
           a->ext_messages == c->ext_messages && a->route_refresh == c->route_refresh && a->role == c->role &&
           !memcmp(a->llgr_time, c->llgr_time, sizeof(a->llgr_time)), "OPEN caps round trip");
}

int
LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
  if (size < 1 || size > BGP_MAX_EXT_MSG_LEN)
    return 0;
  u8 flags = data[0];
  const u8 *body = data + 1;
  uint len = size - 1;

  /* the small decoders get the same bytes */
  struct bgp_error err;
  uint mlen;
  u8 type;
  if (len >= BGP_HEADER_LEN)
    bgp_header_check(body, BGP_MAX_EXT_MSG_LEN, &mlen, &type, &err);
  if (bgp_notification_decode(body, len, &err) == 0) {
    char txt[64];
    bgp_notification_shutdown_msg(&err, txt, sizeof(txt));
  }
  struct bgp_route_refresh rr;
  if (len >= BGP_ROUTE_REFRESH_LEN)
    bgp_route_refresh_decode(body, len, &rr, &err);

  if (flags & 1)
    fz_open(body, len);
  else
    fz_update(flags, body, len);
  return 0;
}

/* ---------------------------------------------------------------- */
/* Start-up and seeds                                                */

static void
fz_seed(const char *dir, const char *name, u8 flags, const u8 *msg, uint len)
{
  char path[512];
  snprintf(path, sizeof(path), "%s/seed-%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f)
    return;
  fputc(flags, f);
  fwrite(msg + BGP_HEADER_LEN, 1, len - BGP_HEADER_LEN, f);
  fclose(f);
}

static struct ea_list *
fz_seed_list(bool big, ip_addr nh1, ip_addr nh2, uint nh_count)
{
  static u8 path[64];
  static ip_addr nh[2];
  static const u32 comm[] = { 0xfde90001, BGP_COMM_NO_EXPORT, 0xfde90003 };
  static const u32 lc[] = { 65001, 1, 2 };
  static const u64 ec[] = { 0x0002fde800000064ULL };
  static const u32 aggr[] = { 4200000001u, 0x0a000001 };
  static const u8 unk[] = { 1, 2, 3, 4 };
  u8 *p = path;
  *p++ = AS_PATH_SEQUENCE;
  *p++ = 4;
  for (uint i = 0; i < 4; i++, p += 4)
    bgp_put_host32(p, big ? 4200000000u + i : 65001 + i);
  *p++ = AS_PATH_SET;
  *p++ = 2;
  bgp_put_host32(p, 7), bgp_put_host32(p + 4, 4200000009u);
  p += 8;
  nh[0] = nh1;
  nh[1] = nh2;
  struct ea_builder b;
  ea_builder_init(&b);
  ea_set_int(&b, BGP_EA(BA_ORIGIN), EAF_INT, BAF_TRANSITIVE, ORIGIN_IGP);
  ea_set_data(&b, BGP_EA(BA_AS_PATH), EAF_AS_PATH, BAF_TRANSITIVE, path, p - path);
  ea_set_data(&b, BGP_EA(BA_NEXT_HOP), EAF_IP, BAF_TRANSITIVE, nh, nh_count * sizeof(ip_addr));
  ea_set_int(&b, BGP_EA(BA_MULTI_EXIT_DISC), EAF_INT, BAF_OPTIONAL, 10);
  ea_set_int(&b, BGP_EA(BA_LOCAL_PREF), EAF_INT, BAF_TRANSITIVE, 100);
  ea_set_data(&b, BGP_EA(BA_COMMUNITY), EAF_INT_SET, BAF_OPTIONAL | BAF_TRANSITIVE, comm, sizeof(comm));
  ea_set_data(&b, BGP_EA(BA_LARGE_COMMUNITY), EAF_LC_SET, BAF_OPTIONAL | BAF_TRANSITIVE, lc, sizeof(lc));
  ea_set_data(&b, BGP_EA(BA_EXT_COMMUNITY), EAF_EC_SET, BAF_OPTIONAL | BAF_TRANSITIVE, ec, sizeof(ec));
  ea_set_data(&b, BGP_EA(BA_AGGREGATOR), EAF_OPAQUE, BAF_OPTIONAL | BAF_TRANSITIVE, aggr, 8);
  ea_set_data(&b, BGP_EA(BA_ATOMIC_AGGR), EAF_OPAQUE, BAF_TRANSITIVE, unk, 0);
  ea_set_int(&b, BGP_EA(BA_OTC), EAF_INT, BAF_OPTIONAL | BAF_TRANSITIVE, 65001);
  ea_set_data(&b, BGP_EA(99), EAF_OPAQUE, BAF_OPTIONAL | BAF_TRANSITIVE, unk, sizeof(unk));
  return ea_intern(&b);
}

static void
fz_write_seeds(const char *dir)
{
  net_addr nets[8];
  u32 ids[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
  uint done, len;
  for (uint i = 0; i < 8; i++)
    net_fill_ip4(&nets[i], ip4_from_u32(0x0a000000 | (i << 8)), 24 - i);
  struct bgp_tx_ctx tx = { .as4 = true, .max_len = BGP_MAX_MSG_LEN };
  struct ea_list *l = fz_seed_list(false, ipa_from_ip4(ip4_from_u32(0xc0000201)), IPA_NONE, 1);
  len = bgp_update_encode_reach(&tx, l, BGP_AF_IPV4, nets, ids, 8, fz_buf, sizeof(fz_buf), &done);
  fz_seed(dir, "v4", 0x02 | 0x04 | 0x80, fz_buf, len);
  tx.as4 = false;
  ea_unref(l);
  l = fz_seed_list(true, ipa_from_ip4(ip4_from_u32(0xc0000201)), IPA_NONE, 1);
  len = bgp_update_encode_reach(&tx, l, BGP_AF_IPV4, nets, ids, 8, fz_buf, sizeof(fz_buf), &done);
  fz_seed(dir, "v4-as2", 0x04, fz_buf, len);
  len = bgp_update_encode_withdraw(&tx, BGP_AF_IPV4, nets, ids, 8, fz_buf, sizeof(fz_buf), &done);
  fz_seed(dir, "v4-withdraw", 0x04, fz_buf, len);
  ea_unref(l);

  tx.as4 = true;
  tx.add_path[BGP_AF_IPV6] = tx.ext_next_hop[BGP_AF_IPV4] = true;
  for (uint i = 0; i < 8; i++)
    net_fill_ip6(&nets[i], ip6_build(0x20010db8, i << 16, 0, 0), 48 + i * 9);
  l = fz_seed_list(true, ip6_build(0x20010db8, 0, 0, 1), ip6_build(0xfe800000, 0, 0, 1), 2);
  len = bgp_update_encode_reach(&tx, l, BGP_AF_IPV6, nets, ids, 8, fz_buf, sizeof(fz_buf), &done);
  fz_seed(dir, "v6-addpath", 0x02 | 0x20 | 0x80, fz_buf, len);
  len = bgp_update_encode_withdraw(&tx, BGP_AF_IPV6, nets, ids, 8, fz_buf, sizeof(fz_buf), &done);
  fz_seed(dir, "v6-withdraw", 0x02 | 0x20 | 0x80, fz_buf, len);
  for (uint i = 0; i < 8; i++)
    net_fill_ip4(&nets[i], ip4_from_u32(0x0b000000 | (i << 8)), 24);
  len = bgp_update_encode_reach(&tx, l, BGP_AF_IPV4, nets, ids, 8, fz_buf, sizeof(fz_buf), &done);
  fz_seed(dir, "v4-extnh", 0x02 | 0x40 | 0x80, fz_buf, len);
  ea_unref(l);
  len = bgp_update_encode_eor(BGP_AF_IPV6, fz_buf, sizeof(fz_buf));
  fz_seed(dir, "eor6", 0x82, fz_buf, len);

  struct bgp_open_msg m = { .version = 4, .my_as = BGP_AS_TRANS, .hold_time = 90, .router_id = 1 };
  struct bgp_caps *c = &m.caps;
  bgp_caps_init(c);
  c->mp[0] = c->mp[1] = c->route_refresh = c->enhanced_refresh = c->ext_messages = c->as4 = c->gr = c->llgr = true;
  c->ext_next_hop[BGP_AF_IPV4] = true;
  c->as4_number = 4200000000u;
  c->add_path[0] = 3;
  c->gr_af[0] = c->llgr_af[1] = 3;
  c->gr_time = 120;
  c->role = BGP_ROLE_PEER;
  strcpy(c->hostname, "fuzz");
  len = bgp_open_encode(fz_buf, sizeof(fz_buf), &m);
  fz_seed(dir, "open", 1, fz_buf, len);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
  resource_init();
  log_init("bgp_fuzz");
  hash_seed_init();
  ea_init();
  rcu_thread_register();
  fz_lp = lp_new(root_pool());
  const char *dir = getenv("BGP_FUZZ_SEEDS");
  if (dir)
    fz_write_seeds(dir);
  return 0;
}
