/*
 * DOC: BGP paths, path masks and community lists as filter values.
 *
 * Paths use the attribute's storage format (nest/ea_bgp.h): segments of
 * (u8 type, u8 count, count * u32 ASN in host order), so a path read from
 * a route needs no conversion. ASNs sit at odd offsets; they are read and
 * written with memcpy. Community lists are plain arrays (u32, u64, or
 * three u32 per large community). Every operation returns new data in the
 * run's linpool and never changes its input.
 *
 * Mask matching follows BIRD: the path is a sequence of positions (an
 * AS_SET is one position matching any of its members); the mask is run
 * as an NFA whose state is the set of marked positions.
 */
#include <string.h>
#include "filter/data.h"
#include "nest/ea_bgp.h"

static inline u32 get_u32(const u8 *p) { u32 v; memcpy(&v, p, 4); return v; }
static inline void put_u32(u8 *p, u32 v) { memcpy(p, &v, 4); }

/* --- Paths --- */

int
as_path_valid(const u8 *data, uint len)
{
  const u8 *p = data, *end = data + len;
  while (p < end) {
    if (end - p < 2)
      return 0;
    uint type = p[0], n = p[1];
    if (type < EAB_AS_SET || type > EAB_AS_CONFED_SET)
      return 0;
    p += 2;
    if ((uint) (end - p) < 4 * n)
      return 0;
    p += 4 * n;
  }
  return 1;
}

struct adata *
as_path_prepend(linpool *lp, const struct adata *path, u32 asn)
{
  uint len = path ? path->length : 0;
  const u8 *d = path ? path->data : NULL;
  struct adata *r;
  if (len && d[0] == EAB_AS_SEQUENCE && d[1] < 255) {
    r = adata_alloc(lp, len + 4);
    r->length = len + 4;
    r->data[0] = EAB_AS_SEQUENCE;
    r->data[1] = d[1] + 1;
    put_u32(r->data + 2, asn);
    memcpy(r->data + 6, d + 2, len - 2);
  } else {
    r = adata_alloc(lp, len + 6);
    r->length = len + 6;
    r->data[0] = EAB_AS_SEQUENCE;
    r->data[1] = 1;
    put_u32(r->data + 2, asn);
    if (len)
      memcpy(r->data + 6, d, len);
  }
  return r;
}

uint
as_path_length(const struct adata *path)
{
  uint res = 0;
  const u8 *p = path->data, *end = p + path->length;
  while (p < end) {
    uint type = p[0], n = p[1];
    p += 2 + 4 * n;
    if (type == EAB_AS_SEQUENCE)
      res += n;
    else if (type == EAB_AS_SET)
      res += n ? 1 : 0;
  }
  return res;
}

int
as_path_first(const struct adata *path, u32 *asn)
{
  const u8 *p = path->data;
  if (!path->length || p[0] != EAB_AS_SEQUENCE || !p[1])
    return 0;
  *asn = get_u32(p + 2);
  return 1;
}

int
as_path_last(const struct adata *path, u32 *asn)
{
  const u8 *p = path->data, *end = p + path->length;
  int found = 0;
  u32 val = 0;
  while (p < end) {
    uint type = p[0], n = p[1];
    p += 2;
    if (n) {
      if (type == EAB_AS_SET || type == EAB_AS_CONFED_SET)
        found = 0;
      else {
        val = get_u32(p + 4 * (n - 1));
        found = 1;
      }
    }
    p += 4 * n;
  }
  if (found)
    *asn = val;
  return found;
}

int
as_path_last_nonaggregated(const struct adata *path, u32 *asn)
{
  const u8 *p = path->data, *end = p + path->length;
  u32 val = 0;
  while (p < end) {
    uint type = p[0], n = p[1];
    p += 2;
    if (n) {
      if (type == EAB_AS_SET || type == EAB_AS_CONFED_SET)
        break;
      val = get_u32(p + 4 * (n - 1));
    }
    p += 4 * n;
  }
  *asn = val;
  return 1;
}

int
as_path_contains(const struct adata *path, u32 asn, int min)
{
  const u8 *p = path->data, *end = p + path->length;
  int cnt = 0;
  while (p < end) {
    uint n = p[1];
    p += 2;
    for (uint i = 0; i < n; i++, p += 4)
      if (get_u32(p) == asn && ++cnt >= min)
        return 1;
  }
  return 0;
}

/* The ASNs of every segment, AS_SETs item by item (`for x in bgp_path`):
 * how many, and the k-th (0 past the end). */
uint
as_path_item_count(const struct adata *path)
{
  uint n = 0;
  const u8 *p = path->data, *end = p + path->length;
  while (p < end) {
    n += p[1];
    p += 2 + 4 * p[1];
  }
  return n;
}

u32
as_path_item(const struct adata *path, uint k)
{
  const u8 *p = path->data, *end = p + path->length;
  while (p < end) {
    uint n = p[1];
    if (k < n)
      return get_u32(p + 2 + 4 * k);
    k -= n;
    p += 2 + 4 * n;
  }
  return 0;
}

static int
asn_matches(u32 asn, const struct f_val *v)
{
  if (v->type == T_SET) {
    struct f_val x = f_int(T_INT, asn);
    return f_set_contains(v->val.set, &x);
  }
  return asn == v->val.i;
}

struct adata *
as_path_filter(linpool *lp, const struct adata *path, const struct f_val *v, int keep)
{
  struct adata *r = adata_alloc(lp, path->length);
  const u8 *p = path->data, *end = p + path->length;
  u8 *q = r->data;
  while (p < end) {
    uint type = p[0], n = p[1];
    p += 2;
    u8 *hdr = q;
    q += 2;
    uint k = 0;
    for (uint i = 0; i < n; i++, p += 4) {
      u32 asn = get_u32(p);
      if (asn_matches(asn, v) == keep) {
        put_u32(q, asn);
        q += 4;
        k++;
      }
    }
    if (k) {
      hdr[0] = type;
      hdr[1] = k;
    } else
      q = hdr;
  }
  r->length = q - r->data;
  return r;
}

void
as_path_format(const struct adata *path, struct buffer *b)
{
  const u8 *p = path->data, *end = p + path->length;
  int first = 1;
  while (p < end) {
    uint type = p[0], n = p[1];
    p += 2;
    const char *open = "", *close = "";
    if (type == EAB_AS_SET) { open = "{"; close = "}"; }
    else if (type == EAB_AS_CONFED_SEQUENCE) { open = "("; close = ")"; }
    else if (type == EAB_AS_CONFED_SET) { open = "["; close = "]"; }
    if (*open) {
      buffer_print(b, "%s%s", first ? "" : " ", open);
      first = 1;
    }
    for (uint i = 0; i < n; i++, p += 4) {
      buffer_print(b, "%s%u", first ? "" : " ", get_u32(p));
      first = 0;
    }
    if (*close) {
      buffer_puts(b, close);
      first = 0;
    }
  }
}

/* --- Masks --- */

struct pm_pos {
  const u8 *asn;      /* first ASN of this position */
  u8 n;               /* ASNs (more than one: an AS set) */
  u8 mark;
};

#define PM_MAX_POS 1024

static uint
pm_parse(const struct adata *path, struct pm_pos *pos)
{
  const u8 *p = path->data, *end = p + path->length;
  uint k = 0;
  while (p < end && k < PM_MAX_POS) {
    uint type = p[0], n = p[1];
    p += 2;
    if (type == EAB_AS_SET || type == EAB_AS_CONFED_SET) {
      if (n)
        pos[k++] = (struct pm_pos){ .asn = p, .n = n };
    } else
      for (uint i = 0; i < n && k < PM_MAX_POS; i++)
        pos[k++] = (struct pm_pos){ .asn = p + 4 * i, .n = 1 };
    p += 4 * n;
  }
  return k;
}

static int
pm_item_match(const struct f_path_mask_item *it, const struct pm_pos *pos)
{
  for (uint i = 0; i < pos->n; i++) {
    u32 asn = get_u32(pos->asn + 4 * i);
    switch (it->kind) {
    case PM_QUESTION: return 1;
    case PM_ASN: if (asn == it->asn) return 1; break;
    case PM_ASN_RANGE: if (asn >= it->asn && asn <= it->to) return 1; break;
    case PM_ASN_SET: {
      struct f_val v = f_int(T_INT, asn);
      if (f_set_contains(it->set, &v))
        return 1;
      break;
    }
    }
  }
  return 0;
}

/* One step of item it: from marks in cur to marks in next (positions + 1). */
static int
pm_step(const struct f_path_mask_item *it, const struct pm_pos *pos, uint plen, const u8 *cur, u8 *next)
{
  int any = 0;
  memset(next, 0, plen + 1);
  for (uint i = 0; i < plen; i++)
    if (cur[i] && pm_item_match(it, &pos[i])) {
      next[i + 1] = 1;
      any = 1;
    }
  return any;
}

int
as_path_match(const struct adata *path, const struct f_path_mask *m)
{
  struct pm_pos pos[PM_MAX_POS];
  u8 mark[PM_MAX_POS + 1], next[PM_MAX_POS + 1], acc[PM_MAX_POS + 1];
  uint plen = pm_parse(path, pos);
  memset(mark, 0, plen + 1);
  mark[0] = 1;
  const struct f_path_mask_item *prev = NULL;
  for (uint k = 0; k < m->len; k++) {
    const struct f_path_mask_item *it = &m->item[k];
    switch (it->kind) {
    case PM_ASTERISK: {
      uint i = 0;
      while (i <= plen && !mark[i])
        i++;
      for (; i <= plen; i++)
        mark[i] = 1;
      break;
    }
    case PM_LOOP:
      /* Repeat the previous item: close the marks under further steps. */
      if (!prev || prev->kind == PM_ASTERISK)
        break;
      memcpy(acc, mark, plen + 1);
      for (;;) {
        if (!pm_step(prev, pos, plen, acc, next))
          break;
        int grew = 0;
        for (uint i = 0; i <= plen; i++)
          if (next[i] && !mark[i]) {
            mark[i] = 1;
            grew = 1;
          }
        if (!grew)
          break;
        memcpy(acc, next, plen + 1);
      }
      break;
    default:
      if (!pm_step(it, pos, plen, mark, next))
        return 0;
      memcpy(mark, next, plen + 1);
    }
    if (it->kind != PM_LOOP)
      prev = it;
  }
  return mark[plen];
}

void
path_mask_format(const struct f_path_mask *m, struct buffer *b)
{
  buffer_puts(b, "[= ");
  for (uint i = 0; i < m->len; i++) {
    const struct f_path_mask_item *it = &m->item[i];
    switch (it->kind) {
    case PM_ASN: buffer_print(b, "%u ", it->asn); break;
    case PM_QUESTION: buffer_puts(b, "? "); break;
    case PM_ASTERISK: buffer_puts(b, "* "); break;
    case PM_ASN_RANGE: buffer_print(b, "%u..%u ", it->asn, it->to); break;
    case PM_ASN_SET: f_set_format(it->set, b); buffer_puts(b, " "); break;
    case PM_LOOP: buffer_puts(b, "+ "); break;
    case PM_ASN_EXPR: buffer_puts(b, "(expr) "); break;
    }
  }
  buffer_puts(b, "=]");
}

int
path_mask_same(const struct f_path_mask *a, const struct f_path_mask *b)
{
  if (a->len != b->len)
    return 0;
  for (uint i = 0; i < a->len; i++) {
    const struct f_path_mask_item *x = &a->item[i], *y = &b->item[i];
    if (x->kind != y->kind || x->asn != y->asn || x->to != y->to)
      return 0;
    if (x->kind == PM_ASN_SET && !f_set_same(x->set, y->set))
      return 0;
  }
  return 1;
}

/* --- Community lists --- */

static inline uint
item_size(uint type)
{
  return type == T_CLIST ? 4 : type == T_ECLIST ? 8 : 12;
}

uint
clist_count(uint type, const struct adata *l)
{
  return l ? l->length / item_size(type) : 0;
}

struct f_val
clist_item(uint type, const struct adata *l, uint i)
{
  struct f_val v = { .type = clist_item_type(type) };
  const u8 *p = l->data + i * item_size(type);
  if (type == T_CLIST)
    v.val.i = get_u32(p);
  else if (type == T_ECLIST)
    memcpy(&v.val.ec, p, 8);
  else
    memcpy(&v.val.lc, p, 12);
  return v;
}

/* Does list element i equal the scalar v? */
static int
item_equal(uint type, const struct adata *l, uint i, const struct f_val *v)
{
  struct f_val x = clist_item(type, l, i);
  if (type == T_CLIST)
    return x.val.i == v->val.i;
  if (type == T_ECLIST)
    return x.val.ec == v->val.ec;
  return !memcmp(&x.val.lc, &v->val.lc, 12);
}

int
clist_contains(uint type, const struct adata *l, const struct f_val *v)
{
  uint n = clist_count(type, l);
  if (type == T_CLIST) {
    /* (the common case, read as words: no value per item) */
    for (uint i = 0; i < n; i++)
      if (get_u32(l->data + 4 * i) == v->val.i)
        return 1;
    return 0;
  }
  for (uint i = 0; i < n; i++)
    if (item_equal(type, l, i, v))
      return 1;
  return 0;
}

/* Does item i match v: a scalar, a set of scalars, or another list? */
static int
item_matches(uint type, const struct adata *l, uint i, const struct f_val *v)
{
  if (type == T_CLIST && v->type == T_SET && v->val.set->type == T_PAIR && v->val.set->from32)
    return f_set_contains_u32(v->val.set, get_u32(l->data + 4 * i));
  if (v->type == T_SET) {
    struct f_val x = clist_item(type, l, i);
    return f_set_contains(v->val.set, &x);
  }
  if (v->type == type) {
    struct f_val x = clist_item(type, l, i);
    return clist_contains(type, v->val.ad, &x);
  }
  return item_equal(type, l, i, v);
}

int
clist_match_set(uint type, const struct adata *l, const struct f_val *set)
{
  uint n = clist_count(type, l);
  for (uint i = 0; i < n; i++)
    if (item_matches(type, l, i, set))
      return 1;
  return 0;
}

static void
put_item(uint type, u8 *p, const struct f_val *v)
{
  if (type == T_CLIST)
    put_u32(p, v->val.i);
  else if (type == T_ECLIST)
    memcpy(p, &v->val.ec, 8);
  else
    memcpy(p, &v->val.lc, 12);
}

struct adata *
clist_add(linpool *lp, uint type, const struct adata *l, const struct f_val *v)
{
  uint sz = item_size(type);
  uint len = l ? l->length : 0;
  if (v->type == type) {
    /* Union: l, then what of v is not in l yet. */
    uint n = clist_count(type, v->val.ad);
    struct adata *r = adata_alloc(lp, len + v->val.ad->length);
    if (len)
      memcpy(r->data, l->data, len);
    r->length = len;
    for (uint i = 0; i < n; i++) {
      struct f_val x = clist_item(type, v->val.ad, i);
      if (!clist_contains(type, r, &x)) {
        put_item(type, r->data + r->length, &x);
        r->length += sz;
      }
    }
    return r;
  }
  if (l && clist_contains(type, l, v))
    return (struct adata *) l;
  struct adata *r = adata_alloc(lp, len + sz);
  if (len)
    memcpy(r->data, l->data, len);
  put_item(type, r->data + len, v);
  r->length = len + sz;
  return r;
}

struct adata *
clist_filter(linpool *lp, uint type, const struct adata *l, const struct f_val *v, int keep)
{
  uint n = clist_count(type, l), sz = item_size(type);
  /* One pass; nothing to drop gives the same list (callers then see an
   * unchanged value), the first item dropped starts the copy. */
  const struct f_set *ps = NULL;
  if (type == T_CLIST && v->type == T_SET && v->val.set->type == T_PAIR && v->val.set->from32)
    ps = v->val.set;
  struct adata *r = NULL;
  for (uint i = 0; i < n; i++) {
    int m = ps ? f_set_contains_u32(ps, get_u32(l->data + 4 * i)) : item_matches(type, l, i, v);
    if (m == keep) {
      if (r) {
        memcpy(r->data + r->length, l->data + i * sz, sz);
        r->length += sz;
      }
    } else if (!r) {
      r = adata_alloc(lp, l->length);
      memcpy(r->data, l->data, i * sz);
      r->length = i * sz;
    }
  }
  if (r)
    return r;
  if (l)
    return (struct adata *) l;
  r = adata_alloc(lp, 0);
  return r;
}

int
clist_minmax(uint type, const struct adata *l, int max, struct f_val *out)
{
  uint n = clist_count(type, l);
  if (!n)
    return 0;
  *out = clist_item(type, l, 0);
  for (uint i = 1; i < n; i++) {
    struct f_val x = clist_item(type, l, i);
    int c = val_compare(&x, out);
    if (max ? c > 0 : c < 0)
      *out = x;
  }
  return 1;
}

void
clist_format(uint type, const struct adata *l, struct buffer *b)
{
  buffer_puts(b, type == T_CLIST ? "(clist " : type == T_ECLIST ? "(eclist " : "(lclist ");
  uint n = clist_count(type, l);
  for (uint i = 0; i < n; i++) {
    struct f_val x = clist_item(type, l, i);
    if (i)
      buffer_puts(b, " ");
    val_format(&x, b);
  }
  buffer_puts(b, ")");
}

enum list_edit_err
list_edit_check(enum list_edit_op op, uint lt, struct f_val *b)
{
  if (lt == T_PATH) {
    if (op == LE_ADD)
      return LE_PATH_ADD;
    if (b->type != T_INT && !(b->type == T_SET && b->val.set->type == T_INT))
      return LE_PATH_ITEM;
    return LE_OK;
  }
  if (lt != T_CLIST && lt != T_ECLIST && lt != T_LCLIST)
    return LE_NOT_LIST;
  if (lt == T_CLIST && (b->type == T_QUAD || b->type == T_INT))
    b->type = T_PAIR;
  else if (lt == T_CLIST && b->type == T_IP && ipa_is_ip4(b->val.ip)) {
    u32 q = ipa_to_ip4(b->val.ip).addr;
    b->type = T_PAIR;
    b->val.i = q;
  }
  if (b->type != clist_item_type(lt) && b->type != lt && !(b->type == T_SET && op != LE_ADD))
    return LE_ITEM;
  return LE_OK;
}

const struct adata *
list_edit(linpool *lp, enum list_edit_op op, uint lt, const struct adata *l, const struct f_val *b)
{
  if (lt == T_PATH)
    return as_path_filter(lp, l, b, op == LE_FILTER);
  if (op == LE_ADD)
    return clist_add(lp, lt, l, b);
  return clist_filter(lp, lt, l, b, op == LE_FILTER);
}
