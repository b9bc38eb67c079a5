/*
 * DOC: The `~` operator of the filter language.
 *
 * What `a ~ b` means depends on the pair of types: a path against a mask,
 * a community against a list, an address or a net inside a net, a net in
 * a prefix set, a value in a set, any ASN of a path or any item of a
 * community list in a set, a string against a shell pattern. The
 * interpreter calls val_match() for FI_MATCH and for the fused tests
 * (jmatch_jumps() in filter/f_interp.h), which look up a net in a prefix
 * set themselves.
 */
#include <string.h>
#include "filter/f_interp.h"

/* Shell-like pattern: * and ? */
static int
patmatch(const char *p, const char *s)
{
  while (*p) {
    if (*p == '*') {
      p++;
      if (!*p)
        return 1;
      for (; *s; s++)
        if (patmatch(p, s))
          return 1;
      return 0;
    }
    if (!*s || (*p != '?' && *p != *s))
      return 0;
    p++;
    s++;
  }
  return !*s;
}

/* Any ASN of path p in the set, tested as `how` says: 2 the ranges in v
 * (a set of a few u32 ranges, loaded once for the whole path), 1 a u32
 * set's search, 0 a value look-up. Inlined where `how` is constant. */
static inline __attribute__((always_inline)) int
path_any_asn_in(const struct adata *p, const struct f_set *set, int how, const struct f_few32 *v)
{
  const u8 *d = p->data, *end = d + p->length;
  while (d < end) {
    uint n = d[1];
    d += 2;
    for (uint i = 0; i < n; i++, d += 4) {
      u32 asn;
      memcpy(&asn, d, 4);
      struct f_val x = f_int(T_INT, asn);
      if (how == 2 ? f_few32_has(v, asn) : how == 1 ? f_set_contains_u32(set, asn) : f_set_contains(set, &x))
        return 1;
    }
  }
  return 0;
}

int
f_path_any_in_set(const struct adata *p, const struct f_set *set)
{
  int u32set = set->from32 && set->type == T_INT;
  if (u32set && set->few32) {
    const struct f_few32 v = f_few32_load(set);
    return path_any_asn_in(p, set, 2, &v);
  }
  return path_any_asn_in(p, set, u32set, NULL);
}

int
val_match(const struct f_val *a, const struct f_val *b)
{
  switch (b->type) {
  case T_PATH_MASK:
    return a->type == T_PATH ? as_path_match(a->val.ad, b->val.pm) : -1;
  case T_CLIST:
    if (a->type == T_PAIR || a->type == T_QUAD)
      return clist_contains(T_CLIST, b->val.ad, a);
    if (a->type == T_IP && ipa_is_ip4(a->val.ip)) {
      struct f_val x = f_int(T_QUAD, ipa_to_ip4(a->val.ip).addr);
      return clist_contains(T_CLIST, b->val.ad, &x);
    }
    return -1;
  case T_ECLIST:
    return a->type == T_EC ? clist_contains(T_ECLIST, b->val.ad, a) : -1;
  case T_LCLIST:
    return a->type == T_LC ? clist_contains(T_LCLIST, b->val.ad, a) : -1;
  case T_STRING:
    return a->type == T_STRING ? patmatch(b->val.s, a->val.s) : -1;
  case T_NET:
    if (a->type == T_IP) {
      const net_addr *n = b->val.net;
      if ((n->type == NET_IP4 || n->type == NET_ROA4) != ipa_is_ip4(a->val.ip))
        return 0;
      return net_contains_ip(n, a->val.ip);
    }
    if (a->type == T_NET) {
      const net_addr *x = a->val.net, *y = b->val.net;
      int x4 = x->type == NET_IP4 || x->type == NET_ROA4, y4 = y->type == NET_IP4 || y->type == NET_ROA4;
      if (x4 != y4 || x->pxlen < y->pxlen)
        return 0;
      return net_contains_ip(y, net_prefix(x));
    }
    return -1;
  case T_PREFIX_SET:
    return a->type == T_NET ? f_trie_match(b->val.trie, a->val.net) : -1;
  case T_SET: {
    const struct f_set *s = b->val.set;
    if (a->type == s->type)
      return f_set_contains(s, a);
    if (a->type == T_QUAD && s->type == T_IP) {
      struct f_val x = { .type = T_IP, .val.ip = ipa_from_ip4(ip4_from_u32(a->val.i)) };
      return f_set_contains(s, &x);
    }
    if (a->type == T_CLIST || a->type == T_ECLIST || a->type == T_LCLIST)
      return clist_match_set(a->type, a->val.ad, b);
    if (a->type == T_PATH)
      return f_path_any_in_set(a->val.ad, s);
    if (!s->count)
      return 0;
    return -1;
  }
  }
  return -1;
}
