/*
 * DOC: libFuzzer harness for the filter interpreter.
 *
 * A fixed config (fz_conf below) compiles, once, a set of filters that
 * together use every kind of instruction: path, community and prefix-set
 * matching, methods, arithmetic, loops, `case`, recursion, attribute
 * writes of every type. The input chooses one of them and the route it
 * runs on:
 *
 *   byte 0        filter (index into fz_names, modulo)
 *   then records  length byte, that many bytes: the network first (bit 0
 *                 of its first byte: IPv6), then one attribute each (the
 *                 first byte picks which, modulo FZ_TAGS)
 *
 * A value reads zeros past the end of its record, so every input is a
 * route, and a mutation stays inside one attribute.
 * Values are drawn from the bytes in the shapes the rest of the daemon
 * hands to filters (the BGP decoder's AS_PATH segments of type 1..4 with
 * 1..255 ASNs, whole communities, 16-octet next hops), with a bias to
 * small and well-known numbers so that set and mask matches happen. User
 * attributes of every storable type (`attribute int u_int;` ...) carry
 * "random values" of each filter type into the filters.
 *
 * Each input runs twice: both runs must give the same verdict and the
 * same interned attribute list. Written attributes must be well formed
 * (AS_PATH as bgp_as_path_valid() wants it, community lists in whole
 * items), and every attribute list reference must be returned. Runaway
 * loops and recursion must end through the interpreter's own limits
 * before libFuzzer's -timeout.
 *
 * Build and run: tools/fuzz.sh filter-interp [seconds]. With
 * FILTER_FUZZ_SEEDS=DIR the harness writes seed inputs into DIR at
 * start-up: every filter on routes that carry every attribute.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter/f_fuzz.h"
#include "filter/f_test.h"
#include "proto/bgp/bgp_wire.h"   /* bgp_as_path_valid(): written paths must decode */

static const char fz_conf[] =
  "protocol device {}\n"
  "roa4 table r4;\n"
  "roa6 table r6;\n"
  "aspa table at;\n"
  "attribute int u_int;\n"
  "attribute int u_int2;\n"
  "attribute bool u_bool;\n"
  "attribute pair u_pair;\n"
  "attribute quad u_quad;\n"
  "attribute ip u_ip;\n"
  "attribute prefix u_net;\n"
  "attribute string u_str;\n"
  "attribute ec u_ec;\n"
  "attribute lc u_lc;\n"
  "attribute bgppath u_path;\n"
  "attribute clist u_clist;\n"
  "attribute eclist u_eclist;\n"
  "attribute lclist u_lclist;\n"
  "attribute bytestring u_bytes;\n"
  "define BOGONS = [ 0.0.0.0/8+, 10.0.0.0/8+, 100.64.0.0/10+, 127.0.0.0/8+, 169.254.0.0/16+,\n"
  "  172.16.0.0/12+, 192.0.2.0/24+, 192.168.0.0/16+, 224.0.0.0/3+ ];\n"
  "define BOGONS6 = [ ::/8+, 2001:db8::/32+, fe80::/10+, ff00::/8+, 2000::/3{3,16} ];\n"
  "define PFX = [ 11.0.0.0/8{16,24}, 12.1.0.0/16{16,32}, 13.0.0.0/8-, 0.0.0.0/0{0,4} ];\n"
  "define BAD_ASNS = [ 0, 23456, 64496..64511, 64512..65534, 65535, 4200000000..4294967295 ];\n"
  "define RS = 65000;\n"
  "\n"
  "filter fz_rs {\n"
  "  if net.type = NET_IP4 then { if net ~ BOGONS then reject \"bogon\"; }\n"
  "  else if net ~ BOGONS6 then reject;\n"
  "  if net.len < 8 || net.len > 24 && net.type = NET_IP4 then reject;\n"
  "  if bgp_path.len > 32 || bgp_path.len = 0 then reject;\n"
  "  if bgp_path.first != u_int then reject;\n"
  "  if bgp_path ~ BAD_ASNS then reject;\n"
  "  if roa_check(r4, net, bgp_path.last) = ROA_INVALID then reject;\n"
  "  if roa_check(r6) = ROA_INVALID then reject;\n"
  "  if aspa_check(at, bgp_path, true) = ASPA_INVALID then reject;\n"
  "  if aspa_check_downstream(at) = ASPA_INVALID then reject;\n"
  "  if (RS, 0) ~ bgp_community then reject;\n"
  "  bgp_community.delete([(RS, *)]);\n"
  "  bgp_large_community.delete([(RS, *, *)]);\n"
  "  if !(net ~ PFX) then bgp_large_community.add((RS, 1101, 9));\n"
  "  bgp_large_community.add((RS, 1000, 1));\n"
  "  accept;\n"
  "}\n"
  "\n"
  "filter fz_path\n"
  "bgppath p; int n;\n"
  "{\n"
  "  p = bgp_path;\n"
  "  n = p.len + p.first + p.last + p.last_nonaggregated;\n"
  "  if p ~ [= * u_int * =] then n = n + 1;\n"
  "  if p ~ [= u_int+ ? * (u_int2) =] then n = n + 2;\n"
  "  if p ~ [= * [1..100, 65000] ?+ =] then n = n + 3;\n"
  "  if p ~ [= 65001 * 1..10 =] then n = n + 4;\n"
  "  if p ~ [7, 1..100] then n = n + 5;\n"
  "  p = delete(p, u_int);\n"
  "  p = delete(p, [1..20]);\n"
  "  p = filter(p, BAD_ASNS);\n"
  "  p = prepend(p, u_int2);\n"
  "  p = p.prepend(n).delete(0);\n"
  "  bgp_path = p;\n"
  "  bgp_path.prepend(RS);\n"
  "  bgp_path.delete(u_int);\n"
  "  if u_path.len > 0 then bgp_path = u_path;\n"
  "  u_path = p;\n"
  "  u_int = n;\n"
  "  accept;\n"
  "}\n"
  "\n"
  "filter fz_clist\n"
  "clist c; pair q; int n;\n"
  "{\n"
  "  c = bgp_community;\n"
  "  n = c.len;\n"
  "  if c.len > 0 then { q = c.min; q = c.max; n = n + q.asn + q.data; }\n"
  "  if u_pair ~ c then n = n + 1;\n"
  "  if c ~ [(1, *), (1..5, 0..10), (65535, 65281)] then n = n + 2;\n"
  "  c = add(c, u_pair);\n"
  "  c = add(c, u_clist);\n"
  "  c = delete(c, [(0, *)]);\n"
  "  c = delete(c, u_clist);\n"
  "  c = filter(c, [(0..1000, *), (RS, 1..20)]);\n"
  "  c = c.add((n, n)).delete(u_pair);\n"
  "  for pair x in bgp_community do c = add(c, (x.data, x.asn));\n"
  "  bgp_community = c;\n"
  "  bgp_community.add(u_clist);\n"
  "  u_clist = delete(u_clist, bgp_community);\n"
  "  bgp_cluster_list = add(bgp_cluster_list, u_quad);\n"
  "  u_int = n;\n"
  "  accept;\n"
  "}\n"
  "\n"
  "filter fz_ext\n"
  "eclist e; lclist l; ec x; lc y; int n;\n"
  "{\n"
  "  e = bgp_ext_community;\n"
  "  l = bgp_large_community;\n"
  "  n = e.len + l.len;\n"
  "  if e.len > 0 then { x = e.min; x = e.max; }\n"
  "  if l.len > 0 then { y = l.min; y = l.max; n = n + y.asn + y.data1 + y.data2; }\n"
  "  if u_ec ~ e || e ~ [(rt, 1, *), (ro, 10, 1..9)] then n = n + 1;\n"
  "  if u_lc ~ l || l ~ [(1, *, *), (RS, 5, 1..20)] then n = n + 2;\n"
  "  e = add(e, u_ec).add((rt, n, u_int2)).add((ro, u_quad, u_int));\n"
  "  e = delete(e, [(rt, 100, *), (rt, 1, 0..100)]);\n"
  "  e = add(e, u_eclist).filter([(rt, 65000, *), (generic, 0, *)]);\n"
  "  l = add(l, u_lc).add((n, u_int, u_int2));\n"
  "  l = delete(l, [(1, *, *)]);\n"
  "  l = add(l, u_lclist).delete(u_lclist);\n"
  "  for ec z in bgp_ext_community do e = add(e, z);\n"
  "  for lc w in bgp_large_community do l = add(l, (w.data2, w.data1, w.asn));\n"
  "  bgp_ext_community = e;\n"
  "  bgp_large_community = l;\n"
  "  u_eclist = e;\n"
  "  u_lclist = add(u_lclist, l);\n"
  "  u_ec = (rt, u_int, n);\n"
  "  u_lc = (u_int, u_int2, n);\n"
  "  accept;\n"
  "}\n"
  "\n"
  "filter fz_net\n"
  "int n; ip a; prefix p;\n"
  "{\n"
  "  n = net.len;\n"
  "  if net.ip.mask(8).is_v4 && net.type != NET_IP6 then n = n + 1;\n"
  "  a = net.ip.mask(u_int2);\n"
  "  a = u_ip.mask(net.len);\n"
  "  if u_ip ~ net || u_ip ~ u_net || net ~ u_net || u_net ~ net then n = n + 1;\n"
  "  if u_net ~ PFX || u_net ~ BOGONS6 || net ~ [12.0.0.0/8+] then n = n + 2;\n"
  "  if u_ip ~ [10.0.0.1, 192.0.2.0..192.0.2.255, 2001:db8::1] then n = n + 3;\n"
  "  if u_ip.is_v4 then n = n + 4;\n"
  "  p = u_net;\n"
  "  n = n + p.len;\n"
  "  if !p.ip.mask(p.len).is_v4 then n = n + 1;\n"
  "  if net.type = NET_ROA4 then n = n + net.maxlen + net.asn;\n"
  "  case net.type { NET_IP4: n = n + 1; NET_IP6: n = n + 2; else: n = n + 3; }\n"
  "  bgp_next_hop = u_ip;\n"
  "  if u_bool then gw = u_ip;\n"
  "  from = a;\n"
  "  u_net = net;\n"
  "  u_ip = a;\n"
  "  u_int = n;\n"
  "  if u_int2 > 100 then reject;\n"
  "  accept;\n"
  "}\n"
  "\n"
  "filter fz_scalar\n"
  "int n; pair q; quad d; bool b;\n"
  "{\n"
  "  n = u_int + u_int2 * 3 - bgp_med;\n"
  "  n = n / u_int2;\n"
  "  n = n / (u_int - u_int2);\n"
  "  n = n * bgp_local_pref + preference + igp_metric + weight + ifindex;\n"
  "  b = u_bool && (u_int > u_int2 || u_int <= bgp_med) && !(u_pair = (1, 2));\n"
  "  b = b || u_int ~ [1, 5..10, 100..200] || u_pair ~ [(1, *), (2, 3..5), (10..20, 30..40)];\n"
  "  b = b || u_quad ~ [1.2.3.4, 10.0.0.0..10.255.255.255] || u_quad = bgp_originator_id;\n"
  "  b = b || u_lc ~ [(1, *, *), (2, 3, 4..5)] || u_ec ~ [(rt, 1, *), (ro, 10, 0..5)];\n"
  "  b = b || bgp_origin = ORIGIN_IGP || source ~ [RTS_BGP, RTS_STATIC] || dest = RTD_BLACKHOLE;\n"
  "  b = b || scope = SCOPE_UNIVERSE || onlink || defined(bgp_atomic_aggr) || defined(u_lc);\n"
  "  q = (u_int, u_int2);\n"
  "  n = n + q.asn + q.data + u_lc.data1;\n"
  "  d = bgp_originator_id;\n"
  "  case u_int { 0: n = 1; 1..9: { n = 2; u_bool = false; } 10, 20, 30..40: n = 3; else: n = n + 1; }\n"
  "  if b then bgp_med = n; else bgp_local_pref = n;\n"
  "  preference = u_int2;\n"
  "  igp_metric = u_int;\n"
  "  weight = n;\n"
  "  onlink = b;\n"
  "  bgp_origin = ORIGIN_INCOMPLETE;\n"
  "  bgp_otc = u_int;\n"
  "  bgp_originator_id = u_quad;\n"
  "  u_pair = q;\n"
  "  u_quad = d;\n"
  "  u_bool = b;\n"
  "  if u_int > u_int2 then unset(bgp_med);\n"
  "  unset(u_lc);\n"
  "  dest = RTD_UNREACHABLE;\n"
  "  if u_int = 7 then reject;\n"
  "  accept;\n"
  "}\n"
  "\n"
  "filter fz_string\n"
  "string t; int n;\n"
  "{\n"
  "  t = u_str;\n"
  "  n = 0;\n"
  "  if t ~ \"a*b?c\" || t ~ \"*\" || t !~ \"?\" || t ~ u_str then n = n + 1;\n"
  "  if t ~ [\"a\", \"b\", \"z\"] || proto ~ \"fuzz*\" || ifname = t then n = n + 2;\n"
  "  t = format(bgp_path);\n"
  "  t = format(bgp_community);\n"
  "  t = format(u_net);\n"
  "  t = format(u_ec);\n"
  "  t = format(u_lclist);\n"
  "  t = format(u_bytes);\n"
  "  t = format(from_hex(u_str));\n"
  "  u_bytes = from_hex(u_str);\n"
  "  print \"x \", u_int, u_pair, u_quad, u_ip, u_net, u_ec, u_lc, u_path, u_clist, u_eclist, u_lclist, t;\n"
  "  printn u_bool, u_bytes, bgp_aggregator, bgp_next_hop;\n"
  "  u_str = t;\n"
  "  if n > 2 then error \"bad \", t;\n"
  "  accept \"ok \", n;\n"
  "}\n"
  "\n"
  "function fz_fib(int n) -> int { if n < 2 then return n; return fz_fib(n - 1) + fz_fib(n - 2); }\n"
  "function fz_down(int n) -> int { if n = 0 then return 0; return fz_down(n - 1) + 1; }\n"
  "function fz_grow(bgppath p) -> bgppath\n"
  "bgppath q;\n"
  "{\n"
  "  q = p;\n"
  "  for int a in p do for int b in p do q = prepend(q, a + b);\n"
  "  return q;\n"
  "}\n"
  "filter fz_loops\n"
  "int n; clist c; bgppath p;\n"
  "{\n"
  "  n = fz_fib(u_int2) + fz_down(u_int);\n"
  "  c = bgp_community;\n"
  "  for pair x in bgp_community do for pair y in u_clist do c = add(c, (x.asn, y.data));\n"
  "  for int a in bgp_path do for pair y in c do n = n + a + y.data;\n"
  "  p = fz_grow(bgp_path);\n"
  "  p = fz_grow(p);\n"
  "  bgp_community = c;\n"
  "  bgp_path = p;\n"
  "  u_int = n;\n"
  "  accept;\n"
  "}\n";

/* The filters the first byte chooses from. */
static const char *const fz_names[] = {
  "fz_rs", "fz_path", "fz_clist", "fz_ext", "fz_net", "fz_scalar", "fz_string", "fz_loops",
};
static const struct filter *fz_filters[ARRAY_SIZE(fz_names)];

static struct config *fz_config;
static linpool *fz_lp;    /* the input's payloads */
static linpool *fz_tmp;   /* filter runs */

/* --- Reading the input --- */

struct fz_in {
  const u8 *p, *end;
};

static uint
fz_u8(struct fz_in *in)
{
  return in->p < in->end ? *in->p++ : 0;
}

/* The next record: a length byte and that many bytes. */
static struct fz_in
fz_record(struct fz_in *in)
{
  uint len = fz_u8(in);
  struct fz_in r = { in->p, in->p + MIN(len, (size_t) (in->end - in->p)) };
  in->p = r.end;
  return r;
}

static u32
fz_u32raw(struct fz_in *in)
{
  u32 v = 0;
  for (uint i = 0; i < 4; i++)
    v = (v << 8) | fz_u8(in);
  return v;
}

/* A number: mostly small or well-known ones, sometimes any 32 bits. */
static u32
fz_num(struct fz_in *in)
{
  static const u32 known[] = {
    0, 1, 2, 3, 7, 10, 24, 32, 100, 128, 255, 256, 1000, 23456, 64496, 64512, 65000, 65001,
    65535, 65536, 4200000000u, 0x7fffffff, 0x80000000u, 0xffffffffu,
  };
  uint b = fz_u8(in);
  if (b < 128)
    return b % 40;
  if (b < 224)
    return known[b % ARRAY_SIZE(known)];
  return fz_u32raw(in);
}

static u32
fz_pair(struct fz_in *in)
{
  return (fz_num(in) << 16) | (fz_num(in) & 0xffff);
}

static ip_addr
fz_ip(struct fz_in *in, int v6)
{
  if (!v6)
    return ipa_from_ip4(ip4_from_u32(fz_u8(in) % 3 ? (fz_num(in) << 24) | fz_u32raw(in) >> 8 : fz_u32raw(in)));
  ip6_addr a = ip6_build(fz_u8(in) % 2 ? 0x20010db8 : fz_u32raw(in), fz_u32raw(in), 0, fz_num(in));
  return ipa_from_ip6(a);
}

static void
fz_net(struct fz_in *in, net_addr *n)
{
  uint b = fz_u8(in);
  ip_addr a = fz_ip(in, b & 1);
  if (b & 1)
    net_fill_ip6(n, ipa_to_ip6(a), fz_u8(in) % 129);
  else
    net_fill_ip4(n, ipa_to_ip4(a), fz_u8(in) % 33);
  net_normalize(n);
}

/* Payloads live until the end of the input (ea_set_data keeps pointers). */
static u8 *
fz_alloc(uint len)
{
  return lp_alloc(fz_lp, len ? len : 1);
}

/* AS_PATH: segments of type 1..4 with 1..255 ASNs, host order. */
static void
fz_path(struct fz_in *in, struct ea_builder *b, u16 id, u8 flags)
{
  uint nseg = fz_u8(in) % 5;
  uint cnt[4], len = 0;
  for (uint i = 0; i < nseg; i++) {
    uint c = fz_u8(in);
    cnt[i] = c < 200 ? 1 + c % 8 : 1 + c % 255;
    len += 2 + 4 * cnt[i];
  }
  u8 *p = fz_alloc(len), *w = p;
  for (uint i = 0; i < nseg; i++) {
    uint t = fz_u8(in);
    *w++ = t < 192 ? EAB_AS_SEQUENCE : 1 + t % 4;
    *w++ = cnt[i];
    for (uint k = 0; k < cnt[i]; k++, w += 4) {
      u32 asn = fz_num(in);
      memcpy(w, &asn, 4);
    }
  }
  ea_set_data(b, id, EAF_AS_PATH, flags, p, len);
}

/* n items of size 4, 8 or 12 (communities, ext, large). */
static void
fz_list(struct fz_in *in, struct ea_builder *b, u16 id, u8 type, u8 flags, uint words)
{
  uint n = fz_u8(in) % 24;
  u32 *v = (u32 *) fz_alloc(n * words * 4);
  for (uint i = 0; i < n * words; i++)
    v[i] = words == 1 ? fz_pair(in) : fz_num(in);
  ea_set_data(b, id, type, flags, v, n * words * 4);
}

static void
fz_ipattr(struct fz_in *in, struct ea_builder *b, u16 id, u8 flags, int v6)
{
  uint n = 1 + (v6 && fz_u8(in) % 2);
  ip_addr *ip = (ip_addr *) fz_alloc(n * sizeof(ip_addr));
  for (uint i = 0; i < n; i++)
    ip[i] = fz_ip(in, v6);
  ea_set_data(b, id, EAF_IP, flags, ip, n * sizeof(ip_addr));
}

static void
fz_opaque(struct ea_builder *b, u16 id, const void *data, uint len)
{
  u8 *p = fz_alloc(len);
  memcpy(p, data, len);
  ea_set_data(b, id, EAF_OPAQUE, 0, p, len);
}

static const struct f_attr *
fz_user(const char *name)
{
  struct symbol *s = cf_find_symbol(fz_config, name);
  if (!s || s->class != SYM_ATTRIBUTE)
    abort();
  return s->def;
}

/* One attribute record. */
#define FZ_TAGS 32
static void
fz_attr(struct fz_in *in, struct ea_builder *b, int v6)
{
  uint tag = fz_u8(in) % FZ_TAGS;
  u32 x;
  switch (tag) {
  case 0: fz_path(in, b, EA_BGP(EAB_AS_PATH), 0x40); return;
  case 1: fz_list(in, b, EA_BGP(EAB_COMMUNITY), EAF_INT_SET, 0xc0, 1); return;
  case 2: fz_list(in, b, EA_BGP(EAB_EXT_COMMUNITY), EAF_EC_SET, 0xc0, 2); return;
  case 3: fz_list(in, b, EA_BGP(EAB_LARGE_COMMUNITY), EAF_LC_SET, 0xc0, 3); return;
  case 4: ea_set_int(b, EA_BGP(EAB_MULTI_EXIT_DISC), EAF_INT, 0x80, fz_num(in)); return;
  case 5: ea_set_int(b, EA_BGP(EAB_LOCAL_PREF), EAF_INT, 0x40, fz_num(in)); return;
  case 6: ea_set_int(b, EA_BGP(EAB_ORIGIN), EAF_INT, 0x40, fz_u8(in) % 3); return;
  case 7: fz_ipattr(in, b, EA_BGP(EAB_NEXT_HOP), 0x40, v6); return;
  case 8: ea_set_int(b, EA_BGP(EAB_ORIGINATOR_ID), EAF_ROUTER_ID, 0x80, fz_num(in)); return;
  case 9: fz_list(in, b, EA_BGP(EAB_CLUSTER_LIST), EAF_INT_SET, 0x80, 1); return;
  case 10: {
    u32 agg[2] = { fz_num(in), fz_u32raw(in) };
    ea_set_data(b, EA_BGP(EAB_AGGREGATOR), EAF_OPAQUE, 0xc0, memcpy(fz_alloc(8), agg, 8), 8);
    return;
  }
  case 11: ea_set_data(b, EA_BGP(EAB_ATOMIC_AGGR), EAF_OPAQUE, 0x40, fz_alloc(0), 0); return;
  case 12: ea_set_int(b, EA_BGP(EAB_ONLY_TO_CUSTOMER), EAF_INT, 0xc0, fz_num(in)); return;
  case 13: b->preference = fz_num(in); return;
  case 14: b->source = fz_u8(in) % RTS_MAX; return;
  case 15: b->dest = fz_u8(in) % RTD_MAX; return;
  case 16: b->scope = fz_u8(in); return;
  case 17: b->gw = fz_ip(in, v6); b->dest = RTD_UNICAST; return;
  case 18: b->igp_metric = fz_num(in); return;
  case 19: ea_set_int(b, fz_user("u_int")->id, EAF_INT, 0, fz_num(in)); return;
  case 20: ea_set_int(b, fz_user("u_int2")->id, EAF_INT, 0, fz_num(in)); return;
  case 21: ea_set_int(b, fz_user("u_bool")->id, EAF_INT, 0, fz_u8(in) & 1); return;
  case 22: ea_set_int(b, fz_user("u_pair")->id, EAF_INT, 0, fz_pair(in)); return;
  case 23: ea_set_int(b, fz_user("u_quad")->id, EAF_INT, 0, fz_u32raw(in)); return;
  case 24: fz_ipattr(in, b, fz_user("u_ip")->id, 0, fz_u8(in) & 1); return;
  case 25: {
    net_addr n;
    fz_net(in, &n);
    fz_opaque(b, fz_user("u_net")->id, &n, n.length);
    return;
  }
  case 26: {
    char s[24];
    uint n = fz_u8(in) % sizeof(s);
    for (uint i = 0; i < n; i++)
      s[i] = "ab?*c:0123456789abcdef"[fz_u8(in) % 22];
    s[n] = 0;
    fz_opaque(b, fz_user("u_str")->id, s, n + 1);
    return;
  }
  case 27: {
    u64 ec = ((u64) fz_u8(in) << 56) | ((u64) fz_num(in) << 16) | (fz_num(in) & 0xffff);
    if (fz_u8(in) % 2)
      ec = ((u64) 2 << 48) | ((u64) (fz_num(in) & 0xffff) << 32) | fz_num(in);   /* (rt, a, b) */
    fz_opaque(b, fz_user("u_ec")->id, &ec, 8);
    return;
  }
  case 28: {
    u32 lc[3] = { fz_num(in), fz_num(in), fz_num(in) };
    fz_opaque(b, fz_user("u_lc")->id, lc, 12);
    return;
  }
  case 29: fz_path(in, b, fz_user("u_path")->id, 0); return;
  case 30:
    x = fz_u8(in) % 3;
    fz_list(in, b, fz_user(x == 0 ? "u_clist" : x == 1 ? "u_eclist" : "u_lclist")->id,
            x == 0 ? EAF_INT_SET : x == 1 ? EAF_EC_SET : EAF_LC_SET, 0, x + 1);
    return;
  case 31: {
    u8 bytes[16];
    uint n = fz_u8(in) % sizeof(bytes);
    for (uint i = 0; i < n; i++)
      bytes[i] = fz_u8(in);
    fz_opaque(b, fz_user("u_bytes")->id, bytes, n);
    return;
  }
  }
}

/* --- Checks of what a filter wrote --- */

static void
fz_check(bool ok, const char *what)
{
  if (!ok) {
    fprintf(stderr, "filter_interp_fuzz: invariant broken: %s\n", what);
    abort();
  }
}

static void
fz_check_out(const struct ea_list *l)
{
  for (uint i = 0; i < l->count; i++) {
    const struct eattr *e = &l->a[i];
    switch (e->type) {
    case EAF_AS_PATH: fz_check(bgp_as_path_valid(ea_data(l, e), e->len), "AS_PATH segments"); break;
    case EAF_INT_SET: fz_check(e->len % 4 == 0, "community list length"); break;
    case EAF_EC_SET: fz_check(e->len % 8 == 0, "ext community list length"); break;
    case EAF_LC_SET: fz_check(e->len % 12 == 0, "large community list length"); break;
    case EAF_IP: fz_check(e->len && e->len % sizeof(ip_addr) == 0, "address length"); break;
    }
    if (i)
      fz_check(l->a[i - 1].id < e->id, "attributes sorted and unique");
  }
  fz_check(l->source < RTS_MAX && l->dest < RTD_MAX, "source and dest in range");
}

/* --- Seeds --- */

static void
fz_seed_record(struct buffer *out, const u8 *data, uint len)
{
  u8 l = len;
  buffer_append(out, &l, 1);
  buffer_append(out, data, len);
}

/* Filter i on a route with every attribute; long values when big. */
static void
fz_write_seed(const char *dir, uint i, int v6, int big)
{
  struct buffer out;
  buffer_init(&out);
  u8 x = i;
  buffer_append(&out, &x, 1);
  static const u8 net4[] = { 0, 1, 10, 0, 0, 0, 0, 24 }, net6[] = { 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 48 };
  fz_seed_record(&out, v6 ? net6 : net4, v6 ? sizeof(net6) : sizeof(net4));
  u32 rnd = 0x9e3779b9 * (i + 1) + big;
  for (uint tag = 0; tag < FZ_TAGS; tag++) {
    u8 rec[255];
    uint len = big ? 250 : 12;
    rec[0] = tag;
    for (uint k = 1; k < len; k++) {
      rnd = rnd * 1103515245 + 12345;
      rec[k] = (rnd >> 16) % (big ? 256 : 128);   /* < 128: small numbers */
    }
    if (tag == 0 || tag == 29) {   /* paths: sequences */
      rec[1] = 1 + big;
      rec[2] = rec[3] = big ? 254 : 3;
    }
    fz_seed_record(&out, rec, len);
  }
  char name[512];
  bsnprintf(name, sizeof(name), "%s/seed-%s-%s%s", dir, fz_names[i], v6 ? "v6" : "v4", big ? "-big" : "");
  FILE *fh = fopen(name, "w");
  if (fh) {
    fwrite(out.start, 1, out.len, fh);
    fclose(fh);
  }
  buffer_free(&out);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void) argc;
  (void) argv;
  f_fuzz_init();
  struct cf_error err;
  fz_config = config_parse_text("fuzz-interp.conf", fz_conf, &err);
  if (!fz_config) {
    fprintf(stderr, "filter_interp_fuzz: %s\n", err.msg);
    abort();
  }
  for (uint i = 0; i < ARRAY_SIZE(fz_names); i++) {
    struct symbol *s = cf_find_symbol(fz_config, fz_names[i]);
    if (!s || s->class != SYM_FILTER)
      abort();
    fz_filters[i] = s->def;
  }
  fz_lp = lp_new(root_pool());
  fz_tmp = lp_new(root_pool());
  const char *dir = getenv("FILTER_FUZZ_SEEDS");
  for (uint i = 0; dir && i < ARRAY_SIZE(fz_names); i++)
    for (uint k = 0; k < 3; k++)
      fz_write_seed(dir, i, k == 1, k == 2);
  return 0;
}

int
LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
  struct fz_in in = { data, data + size };
  u64 before = ea_count();
  const struct filter *f = fz_filters[fz_u8(&in) % ARRAY_SIZE(fz_filters)];
  net_addr net;
  struct fz_in rec = fz_record(&in);
  fz_net(&rec, &net);
  int v6 = net.type == NET_IP6;

  struct ea_builder b;
  f_test_route_init(&b);
  while (in.p < in.end && b.count < EA_BUILDER_MAX) {
    rec = fz_record(&in);
    fz_attr(&rec, &b, v6);
  }
  struct ea_list *attrs = ea_intern(&b);

  /* Scratch memory is flushed between the runs (the input's payloads
   * were copied when the list was interned). */
  struct f_route r1 = { .net = &net, .attrs = attrs, .proto_name = "fuzz" };
  enum f_result res1 = f_run(f, &r1, fz_tmp);
  lp_flush(fz_tmp);
  struct f_route r2 = { .net = &net, .attrs = attrs, .proto_name = "fuzz" };
  enum f_result res2 = f_run(f, &r2, fz_tmp);
  fz_check(res1 == res2, "same verdict twice");
  fz_check(r1.out == r2.out, "same interned result twice");
  if (r1.out) {
    fz_check_out(r1.out);
    ea_unref(r1.out);
    ea_unref(r2.out);
  }
  lp_flush(fz_tmp);
  ea_unref(attrs);
  lp_flush(fz_lp);
  f_fuzz_end(before, "filter run");
  return 0;
}
