/*
 * DOC: Literal values and set literals of the filter grammar.
 *
 * What the grammar writes as a value: nets, strings, the empty path and
 * community lists, the enum constants (RTS_BGP, ROA_VALID, ...), and
 * sets (`[ 1, 5..10 ]`, `[ 10.0.0.0/8{16,24} ]`, pair, extended and
 * large community ranges). A set is gathered item by item, each checked as it
 * comes so that an error points at the item, and built once it closes:
 * a prefix set into a trie, others into a sorted range set.
 */
#include <string.h>
#include "filter/f_inst.h"
#include "nest/ea_bgp.h"
#include "nest/rt.h"

/* --- Literal values --- */

struct f_val
f_val_net(struct cf_context *cx, const net_addr *n)
{
  net_addr *x = cf_alloc(cx, sizeof(net_addr));
  net_copy(x, n);
  return (struct f_val){ .type = T_NET, .val.net = x };
}

struct f_val
f_val_string(struct cf_context *cx, const char *s)
{
  return (struct f_val){ .type = T_STRING, .val.s = cf_strdup(cx, s) };
}

struct f_val
f_val_empty(uint type)
{
  switch (type) {
  case T_PATH: case T_CLIST: case T_ECLIST: case T_LCLIST:
    return (struct f_val){ .type = type, .val.ad = &adata_empty };
  }
  return F_VAL_VOID;
}

static const struct { const char *name; u8 type; u16 val; } f_enums[] = {
  { "RTS_DUMMY", T_ENUM_RTS, RTS_DUMMY }, { "RTS_STATIC", T_ENUM_RTS, RTS_STATIC },
  { "RTS_INHERIT", T_ENUM_RTS, RTS_INHERIT }, { "RTS_DEVICE", T_ENUM_RTS, RTS_DEVICE },
  { "RTS_STATIC_DEVICE", T_ENUM_RTS, RTS_STATIC_DEVICE }, { "RTS_REDIRECT", T_ENUM_RTS, RTS_REDIRECT },
  { "RTS_RIP", T_ENUM_RTS, RTS_RIP }, { "RTS_OSPF", T_ENUM_RTS, RTS_OSPF },
  { "RTS_OSPF_IA", T_ENUM_RTS, RTS_OSPF_IA }, { "RTS_OSPF_EXT1", T_ENUM_RTS, RTS_OSPF_EXT1 },
  { "RTS_OSPF_EXT2", T_ENUM_RTS, RTS_OSPF_EXT2 }, { "RTS_BGP", T_ENUM_RTS, RTS_BGP },
  { "RTS_PIPE", T_ENUM_RTS, RTS_PIPE }, { "RTS_BABEL", T_ENUM_RTS, RTS_BABEL },
  { "RTS_RPKI", T_ENUM_RTS, RTS_RPKI }, { "RTS_PERF", T_ENUM_RTS, RTS_PERF },
  { "RTS_AGGREGATED", T_ENUM_RTS, RTS_AGGREGATED },
  { "SCOPE_HOST", T_ENUM_SCOPE, SCOPE_HOST }, { "SCOPE_LINK", T_ENUM_SCOPE, SCOPE_LINK },
  { "SCOPE_SITE", T_ENUM_SCOPE, SCOPE_SITE }, { "SCOPE_ORGANIZATION", T_ENUM_SCOPE, SCOPE_ORGANIZATION },
  { "SCOPE_UNIVERSE", T_ENUM_SCOPE, SCOPE_UNIVERSE }, { "SCOPE_UNDEFINED", T_ENUM_SCOPE, SCOPE_UNDEFINED },
  { "RTD_UNICAST", T_ENUM_RTD, RTD_UNICAST }, { "RTD_BLACKHOLE", T_ENUM_RTD, RTD_BLACKHOLE },
  { "RTD_UNREACHABLE", T_ENUM_RTD, RTD_UNREACHABLE }, { "RTD_PROHIBIT", T_ENUM_RTD, RTD_PROHIBIT },
  { "ROA_UNKNOWN", T_ENUM_ROA, 0 }, { "ROA_VALID", T_ENUM_ROA, 1 }, { "ROA_INVALID", T_ENUM_ROA, 2 },
  { "ASPA_UNKNOWN", T_ENUM_ASPA, 0 }, { "ASPA_VALID", T_ENUM_ASPA, 1 }, { "ASPA_INVALID", T_ENUM_ASPA, 2 },
  { "NET_IP4", T_ENUM_NETTYPE, 1 }, { "NET_IP6", T_ENUM_NETTYPE, 2 }, { "NET_VPN4", T_ENUM_NETTYPE, 3 },
  { "NET_VPN6", T_ENUM_NETTYPE, 4 }, { "NET_ROA4", T_ENUM_NETTYPE, 5 }, { "NET_ROA6", T_ENUM_NETTYPE, 6 },
  { "NET_FLOW4", T_ENUM_NETTYPE, 7 }, { "NET_FLOW6", T_ENUM_NETTYPE, 8 }, { "NET_IP6_SADR", T_ENUM_NETTYPE, 9 },
  { "NET_MPLS", T_ENUM_NETTYPE, 10 }, { "NET_ASPA", T_ENUM_NETTYPE, 11 },
  { "ORIGIN_IGP", T_ENUM_BGP_ORIGIN, EAB_ORIGIN_IGP }, { "ORIGIN_EGP", T_ENUM_BGP_ORIGIN, EAB_ORIGIN_EGP },
  { "ORIGIN_INCOMPLETE", T_ENUM_BGP_ORIGIN, EAB_ORIGIN_INCOMPLETE },
};

int
f_lex_enum(const char *name, u32 *val)
{
  /* Cheap reject: every enum name is upper case with an underscore. */
  if (name[0] < 'A' || name[0] > 'Z' || !strchr(name, '_'))
    return 0;
  for (uint i = 0; i < ARRAY_SIZE(f_enums); i++)
    if (!strcmp(f_enums[i].name, name)) {
      *val = ((u32) f_enums[i].type << 16) | f_enums[i].val;
      return 1;
    }
  return 0;
}

struct f_val
f_val_enum(u32 packed)
{
  return f_int(packed >> 16, packed & 0xffff);
}

/* --- Set literals --- */

struct f_setb *
f_setb_new(struct cf_context *cx)
{
  return cf_alloc(cx, sizeof(struct f_setb));
}

static int
setb_grow(struct cf_context *cx, struct f_setb *s)
{
  if (s->n < s->size)
    return 0;
  uint size = s->size ? s->size * 2 : 16;
  struct f_val *f = cf_alloc(cx, size * sizeof(struct f_val));
  struct f_val *t = cf_alloc(cx, size * sizeof(struct f_val));
  struct f_trie_entry *p = cf_alloc(cx, size * sizeof(struct f_trie_entry));
  if (s->n) {
    memcpy(f, s->from, s->n * sizeof(struct f_val));
    memcpy(t, s->to, s->n * sizeof(struct f_val));
    memcpy(p, s->pfx, s->n * sizeof(struct f_trie_entry));
  }
  s->from = f;
  s->to = t;
  s->pfx = p;
  s->size = size;
  return 0;
}

int
f_setb_add(struct cf_context *cx, struct f_setb *s, struct f_val from, struct f_val to)
{
  if (s->prefix) {
    cf_error_at(cx, "Mixing of prefix and non-prefix items in one set");
    return -1;
  }
  uint t = from.type;
  if (t == T_PATH || t == T_CLIST || t == T_ECLIST || t == T_LCLIST || t == T_SET || t == T_PREFIX_SET ||
      t == T_PATH_MASK || t == T_VOID || t == T_NET || t == T_BOOL) {
    cf_error_at(cx, "Set-incompatible type");
    return -1;
  }
  if (from.type != to.type) {
    cf_error_at(cx, "Range of different types");
    return -1;
  }
  if (s->n && s->from[0].type != t) {
    cf_error_at(cx, "Mixed types in set");
    return -1;
  }
  setb_grow(cx, s);
  s->from[s->n] = from;
  s->to[s->n] = to;
  s->n++;
  return 0;
}

int
f_setb_merge(struct cf_context *cx, struct f_setb *s, const struct f_setb *src)
{
  for (uint i = 0; i < src->n; i++)
    if (f_setb_add(cx, s, src->from[i], src->to[i]) < 0)
      return -1;
  return 0;
}

struct f_arm *
f_arms_from_set(struct cf_context *cx, const struct f_setb *s)
{
  struct f_arm *first = NULL, **pp = &first;
  for (uint i = 0; i < s->n; i++) {
    struct f_arm *a = cf_alloc(cx, sizeof(struct f_arm));
    a->from = s->from[i];
    a->to = s->to[i];
    *pp = a;
    pp = &a->next;
  }
  return first;
}

int
f_setb_add_prefix(struct cf_context *cx, struct f_setb *s, const struct f_prefix *p)
{
  if (s->n && !s->prefix) {
    cf_error_at(cx, "Mixing of prefix and non-prefix items in one set");
    return -1;
  }
  if (s->n && (s->pfx[0].net.type == NET_IP4) != (p->net.type == NET_IP4)) {
    cf_error_at(cx, "Mixed IPv4/IPv6 prefixes in prefix set");
    return -1;
  }
  s->prefix = 1;
  setb_grow(cx, s);
  s->pfx[s->n].net = p->net;
  s->pfx[s->n].lo = p->lo;
  s->pfx[s->n].hi = p->hi;
  s->n++;
  return 0;
}

int
f_setb_add_pair(struct cf_context *cx, struct f_setb *s, u32 a1, u32 a2, u32 b1, u32 b2)
{
  if (a1 > 0xffff || a2 > 0xffff || b1 > 0xffff || b2 > 0xffff) {
    cf_error_at(cx, "Value %u > 65535", MAX(MAX(a1, a2), MAX(b1, b2)));
    return -1;
  }
  if (a1 > a2 || b1 > b2) {
    cf_error_at(cx, "Invalid range in pair set");
    return -1;
  }
  /* (a1..a2, b1..b2): one range per first component unless b is full. */
  if (b1 == 0 && b2 == 0xffff)
    return f_setb_add(cx, s, f_int(T_PAIR, (a1 << 16) | b1), f_int(T_PAIR, (a2 << 16) | b2));
  if (a2 - a1 > 65535) {
    cf_error_at(cx, "Pair set too large");
    return -1;
  }
  for (u32 a = a1; a <= a2; a++)
    if (f_setb_add(cx, s, f_int(T_PAIR, (a << 16) | b1), f_int(T_PAIR, (a << 16) | b2)) < 0)
      return -1;
  return 0;
}

static int
ec_make(struct cf_context *cx, uint kind, u32 key, u32 val, int ipv4, u64 *out)
{
  if (kind == 0x10000) {
    *out = ((u64) key << 32) | val;
    return 0;
  }
  if (!ipv4 && key < 0x10000) {
    *out = ((u64) kind << 48) | ((u64) key << 32) | val;
    return 0;
  }
  if (val > 0xffff) {
    cf_error_at(cx, ipv4 ? "4-byte value %u can't be used with IP-address key in extended community"
                         : "4-byte value %u can't be used with 4-byte ASN in extended community", val);
    return -1;
  }
  *out = ((u64) ((ipv4 ? 0x0100 : 0x0200) | kind) << 48) | ((u64) key << 16) | val;
  return 0;
}

int
f_setb_add_ec(struct cf_context *cx, struct f_setb *s, uint kind, u32 key, u32 v1, u32 v2)
{
  struct f_val a = { .type = T_EC }, b = { .type = T_EC };
  if (v2 == 0xffffffff && kind != 0x10000 && key >= 0x10000)
    v2 = 0xffff;
  if (ec_make(cx, kind, key, v1, 0, &a.val.ec) < 0 || ec_make(cx, kind, key, v2, 0, &b.val.ec) < 0)
    return -1;
  return f_setb_add(cx, s, a, b);
}

int
f_setb_add_lc(struct cf_context *cx, struct f_setb *s, u32 a1, u32 a2, u32 b1, u32 b2, u32 c1, u32 c2)
{
  struct f_val a = { .type = T_LC }, b = { .type = T_LC };
  a.val.lc = (lcomm){ a1, b1, c1 };
  b.val.lc = (lcomm){ a2, b2, c2 };
  return f_setb_add(cx, s, a, b);
}

int
f_setb_finish(struct cf_context *cx, struct f_setb *s, struct f_val *out)
{
  if (s->prefix) {
    struct f_trie *t = f_trie_new(cx->mem);
    for (uint i = 0; i < s->n; i++)
      f_trie_add(cx->mem, t, &s->pfx[i].net, s->pfx[i].lo, s->pfx[i].hi);
    f_trie_finish(cx->mem, t, s->pfx, s->n);
    *out = (struct f_val){ .type = T_PREFIX_SET, .val.trie = t };
    return 0;
  }
  const char *err = NULL;
  struct f_set *set = f_set_build(cx->mem, s->n ? s->from[0].type : T_INT, s->from, s->to, s->n, &err);
  if (!set) {
    cf_error_at(cx, "%s", err);
    return -1;
  }
  *out = (struct f_val){ .type = T_SET, .val.set = set };
  return 0;
}
