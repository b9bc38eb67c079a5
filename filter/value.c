/*
 * DOC: Filter values: comparison, equality, printing, and scalar sets.
 *
 * Comparison follows BIRD: values of different types do not compare
 * (F_CMP_ERROR), except an IPv4 address against a quad. Equality of
 * incomparable values falls back to structural equality (paths, lists,
 * sets, masks) and is false across types. Printing matches `birdc eval`.
 *
 * Sets of scalars are sorted arrays of ranges; membership is a binary
 * search over the range starts plus a running maximum of the range ends,
 * which stays correct when ranges overlap.
 */
#include <string.h>
#include <stdlib.h>
#include "filter/data.h"
#include "lib/printf.h"

static u8 adata_empty_bytes[4];
const struct adata adata_empty = { 0, adata_empty_bytes };

const char *
f_type_name(uint t)
{
  switch (t) {
  case T_VOID: return "void";
  case T_INT: return "int";
  case T_BOOL: return "bool";
  case T_PAIR: return "pair";
  case T_QUAD: return "quad";
  case T_ENUM_RTS: return "enum rts";
  case T_ENUM_BGP_ORIGIN: return "enum bgp_origin";
  case T_ENUM_SCOPE: return "enum scope";
  case T_ENUM_RTC: return "enum rtc";
  case T_ENUM_RTD: return "enum rtd";
  case T_ENUM_ROA: return "enum roa";
  case T_ENUM_NETTYPE: return "enum net_type";
  case T_ENUM_RA_PREFERENCE: return "enum ra_preference";
  case T_ENUM_AF: return "enum af";
  case T_ENUM_ASPA: return "enum aspa";
  case T_IP: return "ip";
  case T_NET: return "prefix";
  case T_STRING: return "string";
  case T_BYTESTRING: return "bytestring";
  case T_PATH_MASK: return "bgpmask";
  case T_PATH: return "bgppath";
  case T_CLIST: return "clist";
  case T_EC: return "ec";
  case T_ECLIST: return "eclist";
  case T_LC: return "lc";
  case T_LCLIST: return "lclist";
  case T_RD: return "rd";
  case T_SET: return "set";
  case T_PREFIX_SET: return "prefix set";
  case T_ANY: return "any";
  }
  return "?";
}

/* --- Byte data --- */

struct adata *
adata_new(linpool *lp, const void *data, uint len)
{
  struct adata *a = adata_alloc(lp, len);
  if (len)
    memcpy(a->data, data, len);
  return a;
}

int
adata_same(const struct adata *a, const struct adata *b)
{
  uint la = a ? a->length : 0, lb = b ? b->length : 0;
  return la == lb && (!la || !memcmp(a->data, b->data, la));
}

/* --- Comparison --- */

static int u32_cmp(u32 a, u32 b) { return a < b ? -1 : a > b; }

static inline int
lc_cmp(const lcomm *a, const lcomm *b)
{
  if (a->asn != b->asn) return u32_cmp(a->asn, b->asn);
  if (a->ldp1 != b->ldp1) return u32_cmp(a->ldp1, b->ldp1);
  return u32_cmp(a->ldp2, b->ldp2);
}
static int u64_cmp(u64 a, u64 b) { return a < b ? -1 : a > b; }

int
val_is_ip4(const struct f_val *v)
{
  return v->type == T_IP && ipa_is_ip4(v->val.ip);
}

int
val_compare(const struct f_val *a, const struct f_val *b)
{
  if (a->type != b->type) {
    if (a->type == T_QUAD && val_is_ip4(b))
      return u32_cmp(a->val.i, ipa_to_ip4(b->val.ip).addr);
    if (val_is_ip4(a) && b->type == T_QUAD)
      return u32_cmp(ipa_to_ip4(a->val.ip).addr, b->val.i);
    return F_CMP_ERROR;
  }
  switch (a->type) {
  case T_VOID:
    return 0;
  case T_INT: case T_BOOL: case T_PAIR: case T_QUAD:
    return u32_cmp(a->val.i, b->val.i);
  case T_EC: case T_RD:
    return u64_cmp(a->val.ec, b->val.ec);
  case T_LC:
    return lc_cmp(&a->val.lc, &b->val.lc);
  case T_IP:
    return ipa_compare(a->val.ip, b->val.ip);
  case T_NET:
    return net_compare(a->val.net, b->val.net);
  case T_STRING: {
    int c = strcmp(a->val.s, b->val.s);
    return c < 0 ? -1 : c > 0;
  }
  default:
    if (f_type_is_enum(a->type))
      return u32_cmp(a->val.i, b->val.i);
    return F_CMP_ERROR;
  }
}

int
val_same(const struct f_val *a, const struct f_val *b)
{
  int c = val_compare(a, b);
  if (c != F_CMP_ERROR)
    return !c;
  if (a->type != b->type)
    return 0;
  switch (a->type) {
  case T_PATH: case T_CLIST: case T_ECLIST: case T_LCLIST: case T_BYTESTRING:
    return adata_same(a->val.ad, b->val.ad);
  case T_SET:
    return f_set_same(a->val.set, b->val.set);
  case T_PREFIX_SET:
    return f_trie_same(a->val.trie, b->val.trie);
  case T_PATH_MASK:
    return path_mask_same(a->val.pm, b->val.pm);
  }
  return 0;
}

/* --- Printing --- */

int
ec_format(char *buf, size_t size, u64 ec)
{
  u32 type = ec >> 48, key, val;
  char tbuf[24];
  const char *tstr;
  switch (type & 0xf0ff) {
  case 0x0002: tstr = "rt"; break;
  case 0x0003: tstr = "ro"; break;
  default:
    bsnprintf(tbuf, sizeof(tbuf), "unknown 0x%x", type);
    tstr = tbuf;
  }
  switch (ec >> 56) {
  case 0x00: case 0x40:
    key = (ec >> 32) & 0xffff;
    val = (u32) ec;
    return bsnprintf(buf, size, "(%s, %u, %u)", tstr, key, val);
  case 0x01: case 0x41:
    key = (u32) (ec >> 16);
    val = ec & 0xffff;
    return bsnprintf(buf, size, "(%s, %R, %u)", tstr, key, val);
  case 0x02: case 0x42:
    key = (u32) (ec >> 16);
    val = ec & 0xffff;
    return bsnprintf(buf, size, "(%s, %u, %u)", tstr, key, val);
  default:
    return bsnprintf(buf, size, "(generic, 0x%x, 0x%x)", (u32) (ec >> 32), (u32) ec);
  }
}

static void
val_format_scalar(const struct f_val *v, struct buffer *b)
{
  char buf[64];
  switch (v->type) {
  case T_VOID: buffer_puts(b, "(void)"); return;
  case T_BOOL: buffer_puts(b, v->val.i ? "TRUE" : "FALSE"); return;
  case T_INT: buffer_print(b, "%u", v->val.i); return;
  case T_STRING: buffer_puts(b, v->val.s); return;
  case T_IP: buffer_print(b, "%I", v->val.ip); return;
  case T_NET: buffer_print(b, "%N", v->val.net); return;
  case T_PAIR: buffer_print(b, "(%u,%u)", v->val.i >> 16, v->val.i & 0xffff); return;
  case T_QUAD: buffer_print(b, "%R", v->val.i); return;
  case T_EC: ec_format(buf, sizeof(buf), v->val.ec); buffer_puts(b, buf); return;
  case T_LC: buffer_print(b, "(%u, %u, %u)", v->val.lc.asn, v->val.lc.ldp1, v->val.lc.ldp2); return;
  case T_RD: buffer_print(b, "%u:%u", (u32) (v->val.ec >> 32), (u32) v->val.ec); return;
  }
  if (f_type_is_enum(v->type)) {
    buffer_print(b, "(enum %x)%u", v->type, v->val.i);
    return;
  }
  buffer_print(b, "[unknown type %x]", v->type);
}

void
val_format(const struct f_val *v, struct buffer *b)
{
  switch (v->type) {
  case T_PATH:
    buffer_puts(b, "(path ");
    as_path_format(v->val.ad, b);
    buffer_puts(b, ")");
    return;
  case T_CLIST: case T_ECLIST: case T_LCLIST:
    clist_format(v->type, v->val.ad, b);
    return;
  case T_SET:
    f_set_format(v->val.set, b);
    return;
  case T_PREFIX_SET:
    f_trie_format(v->val.trie, b);
    return;
  case T_PATH_MASK:
    path_mask_format(v->val.pm, b);
    return;
  case T_BYTESTRING:
    for (uint i = 0; i < v->val.ad->length; i++)
      buffer_print(b, i ? ":%02x" : "%02x", v->val.ad->data[i]);
    return;
  }
  val_format_scalar(v, b);
}

char *
val_format_str(const struct f_val *v, linpool *lp)
{
  struct buffer b;
  buffer_init(&b);
  val_format(v, &b);
  char *s = lp_strdup(lp, b.start ? b.start : "");
  buffer_free(&b);
  return s;
}

/* --- Sets --- */

struct set_sort_item { struct f_val from, to; };

static int
set_item_cmp(const void *x, const void *y)
{
  const struct set_sort_item *a = x, *b = y;
  int c = val_compare(&a->from, &b->from);
  if (c)
    return c;
  return val_compare(&a->to, &b->to);
}

static int
set_type_u32(uint t)
{
  return t == T_INT || t == T_PAIR || t == T_QUAD || t == T_BOOL || f_type_is_enum(t);
}

struct f_set *
f_set_build(linpool *lp, uint type, struct f_val *from, struct f_val *to, uint n, const char **err)
{
  struct set_sort_item *items = malloc((n ? n : 1) * sizeof(*items));
  for (uint i = 0; i < n; i++) {
    if (from[i].type != type || to[i].type != type) {
      *err = "Set elements must have the same type";
      free(items);
      return NULL;
    }
    if (val_compare(&from[i], &to[i]) > 0) {
      *err = "Invalid range in set";
      free(items);
      return NULL;
    }
    items[i].from = from[i];
    items[i].to = to[i];
  }
  qsort(items, n, sizeof(*items), set_item_cmp);
  struct f_set *s = lp_allocz(lp, sizeof(struct f_set));
  s->type = type;
  s->count = n;
  s->from = lp_alloc(lp, (n + 1) * sizeof(struct f_val));
  s->to = lp_alloc(lp, (n + 1) * sizeof(struct f_val));
  s->maxto = lp_alloc(lp, (n + 1) * sizeof(struct f_val));
  for (uint i = 0; i < n; i++) {
    s->from[i] = items[i].from;
    s->to[i] = items[i].to;
    s->maxto[i] = (i && val_compare(&s->maxto[i - 1], &items[i].to) > 0) ? s->maxto[i - 1] : items[i].to;
  }
  if (set_type_u32(type)) {
    s->from32 = lp_alloc(lp, (n + 1) * sizeof(u32));
    s->maxto32 = lp_alloc(lp, (n + 1) * sizeof(u32));
    for (uint i = 0; i < n; i++) {
      s->from32[i] = s->from[i].val.i;
      s->maxto32[i] = s->maxto[i].val.i;
    }
    if (n && n <= F_SET_FEW) {
      s->few32 = lp_alloc(lp, 2 * F_SET_FEW * sizeof(u32));
      for (uint i = 0; i < F_SET_FEW; i++) {
        uint k = MIN(i, n - 1);
        s->few32[i] = s->from[k].val.i;
        s->few32[F_SET_FEW + i] = s->to[k].val.i - s->from[k].val.i;
      }
    }
  }
  free(items);
  return s;
}

int
f_set_contains(const struct f_set *s, const struct f_val *v)
{
  if (!s->count)
    return 0;
  if (s->from32 && v->type == s->type)
    return f_set_contains_u32(s, v->val.i);
  if (v->type == T_LC && s->type == T_LC) {
    /* (route servers scrub large communities by such sets) */
    int lo = 0, hi = (int) s->count - 1, found = -1;
    while (lo <= hi) {
      int mid = (lo + hi) / 2;
      if (lc_cmp(&s->from[mid].val.lc, &v->val.lc) <= 0) { found = mid; lo = mid + 1; }
      else hi = mid - 1;
    }
    return found >= 0 && lc_cmp(&s->maxto[found].val.lc, &v->val.lc) >= 0;
  }
  int lo = 0, hi = (int) s->count - 1, found = -1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    int c = val_compare(&s->from[mid], v);
    if (c == F_CMP_ERROR)
      return 0;
    if (c <= 0) { found = mid; lo = mid + 1; }
    else hi = mid - 1;
  }
  if (found < 0)
    return 0;
  int c = val_compare(&s->maxto[found], v);
  return c != F_CMP_ERROR && c >= 0;
}

int
f_set_same(const struct f_set *a, const struct f_set *b)
{
  if (a->type != b->type || a->count != b->count)
    return 0;
  for (uint i = 0; i < a->count; i++)
    if (!val_same(&a->from[i], &b->from[i]) || !val_same(&a->to[i], &b->to[i]))
      return 0;
  return 1;
}

void
f_set_format(const struct f_set *s, struct buffer *b)
{
  buffer_puts(b, "[");
  for (uint i = 0; i < s->count; i++) {
    if (i)
      buffer_puts(b, ", ");
    val_format(&s->from[i], b);
    if (val_compare(&s->from[i], &s->to[i])) {
      buffer_puts(b, "..");
      val_format(&s->to[i], b);
    }
  }
  buffer_puts(b, "]");
}
