/*
 * DOC: The filter interpreter.
 *
 * f_exec() runs bytecode over a value stack that lives on the C stack of
 * the caller: no globals, no locks, so every loop may run filters at once.
 * Each function call gets a frame (its arguments and locals are the first
 * slots at the frame's base). Recursion depth and the number of executed
 * instructions are bounded, so a runaway filter ends with a runtime error
 * instead of hanging a loop.
 *
 * Route attributes are read from the route's interned list until the
 * first write; then the list is copied into an ea_builder (copy-on-write)
 * and later reads and writes use the builder. f_run() interns the builder
 * once at the end, if anything was written.
 *
 * Types are checked at config time; the checks here guard against void
 * values (unset attributes, uninitialised variables) and keep the
 * interpreter safe on any input.
 */
#include <string.h>
#include <stdlib.h>
#include "filter/f_inst.h"
#include "nest/ea_bgp.h"
#include "nest/rt.h"
#include "nest/rt_valid.h"
#include "nest/proto.h"
#include "nest/iface.h"
#include "lib/log.h"
#include "lib/printf.h"

#define F_STACK 1024
#define F_MAX_FRAMES 100
#define F_MAX_STEPS 2000000   /* loop iterations and calls per run */
/* Scratch memory per run (values in the linpool, print output). Loops can
 * grow values (a path prepended to in a nested loop) much faster than
 * they count steps: without this bound, a filter within the step budget
 * could copy terabytes. Checked where steps are counted: between two
 * checks a run allocates at most a few copies of the values it has. */
#define F_MAX_MEM (32u << 20)

struct f_frame {
  const struct filter *f;
  u32 pc;
  u32 base;
};

/* Attributes read in this run: a filter that reads bgp_path four times
 * looks it up once. An entry keeps what the lookup found (a copy of the
 * eattr, its payload) and the object made of the payload on the first
 * read (a view of a list, a copy of a net); a read builds the value from
 * that in place, field by field. (Copying a whole struct f_val just built
 * stalls on store forwarding.) An entry goes when its attribute is
 * written. Payload views live in views[], each used once per run, so a
 * value that outlives its entry (in a variable) stays as it was. */
#define F_EA_CACHE 8
struct f_ea_cached {
  const struct f_attr *a;
  struct eattr e;
  int found;                    /* 0: the attribute is not set (e unused) */
  const void *data;
  const void *obj;
};

struct f_state {
  struct f_route *r;
  linpool *lp;
  const struct f_exec_opts *opts;
  struct ea_builder *eb;        /* non-NULL once an attribute was written */
  struct ea_builder *ebs;       /* storage for it (left uninitialised until then) */
  struct buffer out;            /* print buffer */
  int out_used;
  uint ncached, nviews;
  struct f_ea_cached cached[F_EA_CACHE];
  struct adata views[F_EA_CACHE];
};

static const u8 empty_bytes[4];

/* Build results in place: a whole-struct copy of a fresh temporary stalls
 * on store forwarding in the hot path. */
#define SET_BOOL(v, b) do { struct f_val *v_ = &(v); u32 b_ = !!(b); v_->type = T_BOOL; v_->val.i = b_; } while (0)
#define SET_INT(v, t, x) do { struct f_val *v_ = &(v); u32 x_ = (x); v_->type = (t); v_->val.i = x_; } while (0)

/* --- Attribute access --- */

/* First write: copy the route's list into the builder. */
static void
st_cow(struct f_state *st)
{
  if (st->eb)
    return;
  struct ea_builder *b = st->ebs;
  ea_builder_from(b, st->r->attrs);
  st->eb = b;
}

static const struct eattr *
st_ea_find(struct f_state *st, u16 id, const void **data)
{
  if (st->eb) {
    for (uint i = 0; i < st->eb->count; i++)
      if (st->eb->a[i].id == id) {
        *data = st->eb->payload[i];
        return &st->eb->a[i];
      }
    return NULL;
  }
  const struct eattr *e = ea_find(st->r->attrs, id);
  if (e && e->type != EAF_INT && e->type != EAF_ROUTER_ID)
    *data = ea_data(st->r->attrs, e);
  return e;
}

/* Attribute payloads stay valid for the whole run (the input list is
 * held by the caller; builder payloads live in the run's linpool). */

/* Does a value of attribute a point to an object made of its payload? */
static int
ea_needs_obj(const struct f_attr *a, const struct eattr *e)
{
  switch (e->type) {
  case EAF_AS_PATH: case EAF_INT_SET: case EAF_EC_SET: case EAF_LC_SET:
    return 1;
  case EAF_OPAQUE:
    return a->type != T_BOOL && a->type != T_STRING && a->type != T_EC && a->type != T_RD && a->type != T_LC;
  }
  return 0;
}

/* That object: a copy of a net (in lp), or a view of the payload (in
 * view if given, else in lp). */
static const void *
ea_make_obj(linpool *lp, struct adata *view, const struct f_attr *a, const struct eattr *e, const void *data)
{
  if (e->type == EAF_OPAQUE && a->type == T_NET) {
    net_addr *n = lp_allocz(lp, sizeof(net_addr));
    memcpy(n, data, MIN(e->len, sizeof(net_addr)));
    return n;
  }
  if (!view)
    view = lp_alloc(lp, sizeof(struct adata));
  view->length = e->len;
  view->data = (u8 *) (data ? data : empty_bytes);
  return view;
}

/* An attribute's value as the filter type a says it is (e NULL: not set),
 * built in v; obj from ea_make_obj() where ea_needs_obj(). */
static void
ea_to_val(const struct f_attr *a, const struct eattr *e, const void *data, const void *obj, struct f_val *v)
{
  v->subtype = 0;
  if (!e) {
    switch (a->type) {
    case T_PATH: case T_CLIST: case T_ECLIST: case T_LCLIST:
      v->type = a->type;
      v->val.ad = &adata_empty;
      return;
    }
    v->type = T_VOID;
    return;
  }
  v->type = a->type;
  switch (e->type) {
  case EAF_INT: case EAF_ROUTER_ID:
    v->val.i = a->type == T_BOOL ? !!e->val : e->val;
    return;
  case EAF_IP:
    if (e->len >= sizeof(ip_addr))
      memcpy(&v->val.ip, data, sizeof(ip_addr));
    else
      v->val.ip = IPA_NONE;
    return;
  case EAF_AS_PATH: case EAF_INT_SET: case EAF_EC_SET: case EAF_LC_SET:
    v->val.ad = obj;
    return;
  case EAF_OPAQUE:
    switch (a->type) {
    case T_BOOL: v->val.i = 1; return;
    case T_STRING: v->val.s = e->len ? (const char *) data : ""; return;
    case T_EC: case T_RD:
      v->val.ec = 0;
      if (e->len == 8)
        memcpy(&v->val.ec, data, 8);
      return;
    case T_LC:
      v->val.lc = (lcomm){ 0, 0, 0 };
      if (e->len == 12)
        memcpy(&v->val.lc, data, 12);
      return;
    case T_NET: v->val.net = obj; return;
    default:
      v->type = T_BYTESTRING;
      v->val.ad = obj;
      return;
    }
  }
  v->type = T_VOID;
}

struct f_val
f_ea_to_val(const struct f_attr *a, const struct eattr *e, const void *data, linpool *lp)
{
  struct f_val v;
  ea_to_val(a, e, data, e && ea_needs_obj(a, e) ? ea_make_obj(lp, NULL, a, e, data) : NULL, &v);
  return v;
}

/* Not read yet in this run: look it up and remember it. */
static void __attribute__((noinline))
ea_value_miss(struct f_state *st, const struct f_attr *a, struct f_val *out)
{
  const void *data = NULL, *obj = NULL;
  const struct eattr *e = st_ea_find(st, a->id, &data);
  if (e && ea_needs_obj(a, e)) {
    struct adata *view = NULL;
    if (!(e->type == EAF_OPAQUE && a->type == T_NET) && st->nviews < F_EA_CACHE)
      view = &st->views[st->nviews++];
    obj = ea_make_obj(st->lp, view, a, e, data);
  }
  if (st->ncached < F_EA_CACHE) {
    struct f_ea_cached *c = &st->cached[st->ncached++];
    c->a = a;
    c->found = !!e;
    if (e)
      c->e = *e;
    c->data = data;
    c->obj = obj;
  }
  ea_to_val(a, e, data, obj, out);
}

static inline void
ea_value(struct f_state *st, const struct f_attr *a, struct f_val *out)
{
  for (uint i = 0; i < st->ncached; i++)
    if (st->cached[i].a == a) {
      const struct f_ea_cached *c = &st->cached[i];
      ea_to_val(a, c->found ? &c->e : NULL, c->data, c->obj, out);
      return;
    }
  ea_value_miss(st, a, out);
}

/* Attribute id is about to change: drop what was read of it. */
static void
ea_forget(struct f_state *st, u16 id)
{
  for (uint i = 0; i < st->ncached; )
    if (st->cached[i].a->id == id)
      st->cached[i] = st->cached[--st->ncached];
    else
      i++;
}

/* Would storing v leave the attribute (e, payload old) as it is? (Common
 * in route-server filters: scrubbing communities that are not there,
 * setting a value that is already set.) Then no copy-on-write happens. */
static int
ea_unchanged(const struct f_attr *a, const struct eattr *e, const void *old, const struct f_val *v)
{
  switch (a->eaf) {
  case EAF_INT: case EAF_ROUTER_ID:
    return e && e->val == v->val.i;
  case EAF_AS_PATH: case EAF_INT_SET: case EAF_EC_SET: case EAF_LC_SET:
    if (!e)
      return 0;
    return e->len == v->val.ad->length && (old == v->val.ad->data || !memcmp(old, v->val.ad->data, e->len));
  }
  return 0;
}

/* Builder entry i (-1: a new one) becomes id: an integer val, or payload
 * data (non-NULL) of len bytes. */
static void
eb_put(struct ea_builder *b, int i, u16 id, u8 type, u8 flags, u32 val, const void *data, u32 len)
{
  if (i < 0) {
    if (data)
      ea_set_data(b, id, type, flags, data, len);
    else
      ea_set_int(b, id, type, flags, val);
    return;
  }
  b->a[i] = (struct eattr){ .id = id, .type = type, .flags = flags, .val = data ? 0 : val, .len = data ? len : 0 };
  b->payload[i] = data;
}

static void
ea_store(struct f_state *st, const struct f_attr *a, const struct f_val *v)
{
  const void *old = NULL;
  const struct eattr *e = st_ea_find(st, a->id, &old);
  if (ea_unchanged(a, e, old, v))
    return;
  ea_forget(st, a->id);
  /* Its index: ea_builder_from() copies the list's entries in order, so
   * one found in the list has the same index in the builder. */
  int i = !e ? -1 : st->eb ? (int) (e - st->eb->a) : (int) (e - st->r->attrs->a);
  u8 flags = e ? e->flags : a->flags;
  st_cow(st);
  struct ea_builder *b = st->eb;
  switch (a->eaf) {
  case EAF_INT: case EAF_ROUTER_ID:
    eb_put(b, i, a->id, a->eaf, flags, v->val.i, NULL, 0);
    return;
  case EAF_IP: {
    ip_addr *ip = lp_alloc(st->lp, sizeof(ip_addr));
    *ip = v->val.ip;
    eb_put(b, i, a->id, EAF_IP, flags, 0, ip, sizeof(ip_addr));
    return;
  }
  case EAF_AS_PATH: case EAF_INT_SET: case EAF_EC_SET: case EAF_LC_SET:
    eb_put(b, i, a->id, a->eaf, flags, 0, v->val.ad->length ? v->val.ad->data : empty_bytes, v->val.ad->length);
    return;
  case EAF_OPAQUE:
    switch (v->type) {
    case T_BOOL:
      if (v->val.i)
        eb_put(b, i, a->id, EAF_OPAQUE, flags, 0, empty_bytes, 0);
      else
        ea_unset(b, a->id);
      return;
    case T_STRING:
      eb_put(b, i, a->id, EAF_OPAQUE, flags, 0, v->val.s, strlen(v->val.s) + 1);
      return;
    case T_EC: case T_RD: {
      u64 *x = lp_alloc(st->lp, 8);
      *x = v->val.ec;
      eb_put(b, i, a->id, EAF_OPAQUE, flags, 0, x, 8);
      return;
    }
    case T_LC: {
      lcomm *x = lp_alloc(st->lp, sizeof(lcomm));
      *x = v->val.lc;
      eb_put(b, i, a->id, EAF_OPAQUE, flags, 0, x, 12);
      return;
    }
    case T_NET:
      eb_put(b, i, a->id, EAF_OPAQUE, flags, 0, v->val.net, v->val.net->length);
      return;
    default:
      eb_put(b, i, a->id, EAF_OPAQUE, flags, 0, v->val.ad->length ? v->val.ad->data : empty_bytes, v->val.ad->length);
      return;
    }
  }
}

/* Current values of the fixed fields. */
#define ST_FIELD(st, f) ((st)->eb ? (st)->eb->f : (st)->r->attrs->f)

static const char *
st_proto_name(struct f_state *st)
{
  if (st->r->proto_name)
    return st->r->proto_name;
  if (st->r->src && st->r->src->proto)
    return st->r->src->proto->name;
  return "";
}

static int
sa_get(struct f_state *st, uint sa, struct f_val *v)
{
  const void *data = NULL;
  const struct eattr *e;
  switch (sa) {
  case SA_NET: *v = (struct f_val){ .type = T_NET, .val.net = st->r->net }; return 0;
  case SA_FROM:
    *v = (struct f_val){ .type = T_IP };
    e = st_ea_find(st, EA_GEN_FROM, &data);
    if (e && e->len >= sizeof(ip_addr))
      memcpy(&v->val.ip, data, sizeof(ip_addr));
    return 0;
  case SA_GW: *v = (struct f_val){ .type = T_IP, .val.ip = ST_FIELD(st, gw) }; return 0;
  case SA_PROTO: *v = (struct f_val){ .type = T_STRING, .val.s = st_proto_name(st) }; return 0;
  case SA_SOURCE: SET_INT(*v, T_ENUM_RTS, ST_FIELD(st, source)); return 0;
  case SA_SCOPE: SET_INT(*v, T_ENUM_SCOPE, ST_FIELD(st, scope)); return 0;
  case SA_DEST: SET_INT(*v, T_ENUM_RTD, ST_FIELD(st, dest)); return 0;
  case SA_IFNAME: {
    struct iface *i = ST_FIELD(st, iface);
    *v = (struct f_val){ .type = T_STRING, .val.s = i ? i->name : "" };
    return 0;
  }
  case SA_IFINDEX: {
    struct iface *i = ST_FIELD(st, iface);
    SET_INT(*v, T_INT, i ? i->index : 0);
    return 0;
  }
  case SA_PREFERENCE: SET_INT(*v, T_INT, ST_FIELD(st, preference)); return 0;
  case SA_IGP_METRIC: SET_INT(*v, T_INT, ST_FIELD(st, igp_metric)); return 0;
  case SA_WEIGHT:
    e = st_ea_find(st, EA_GEN_WEIGHT, &data);
    SET_INT(*v, T_INT, e ? e->val : 0);
    return 0;
  case SA_ONLINK:
    e = st_ea_find(st, EA_GEN_ONLINK, &data);
    SET_BOOL(*v, e && e->val);
    return 0;
  case SA_GW_MPLS: SET_INT(*v, T_INT, 0); return 0;
  }
  return -1;
}

static struct iface *
iface_by_name(const char *name)
{
  struct iface *res = NULL;
  rcu_read_lock();
  const struct iface_set *s = iface_current();
  for (uint i = 0; s && i < s->count; i++)
    if (!strcmp(s->ifs[i].iface->name, name))
      res = s->ifs[i].iface;
  rcu_read_unlock();
  return res;
}

/* Returns an error text or NULL. */
static const char *
sa_set(struct f_state *st, uint sa, const struct f_val *v)
{
  if (sa == SA_PREFERENCE && ST_FIELD(st, preference) == v->val.i)
    return NULL;
  st_cow(st);
  /* from, weight and onlink are stored as attributes */
  ea_forget(st, EA_GEN_FROM);
  ea_forget(st, EA_GEN_WEIGHT);
  ea_forget(st, EA_GEN_ONLINK);
  struct ea_builder *b = st->eb;
  switch (sa) {
  case SA_FROM: {
    ip_addr *ip = lp_alloc(st->lp, sizeof(ip_addr));
    *ip = v->val.ip;
    ea_set_data(b, EA_GEN_FROM, EAF_IP, 0, ip, sizeof(ip_addr));
    return NULL;
  }
  case SA_GW:
    b->gw = v->val.ip;
    b->dest = RTD_UNICAST;
    return NULL;
  case SA_SCOPE: b->scope = v->val.i; return NULL;
  case SA_DEST:
    if (v->val.i == RTD_UNICAST)
      return "Setting dest to UNICAST is not supported; set gw instead";
    if (v->val.i >= RTD_MAX)
      return "Invalid dest value";
    b->dest = v->val.i;
    b->gw = IPA_NONE;
    b->iface = NULL;
    return NULL;
  case SA_IFNAME: {
    struct iface *i = iface_by_name(v->val.s);
    if (!i)
      return "Invalid iface name";
    b->iface = i;
    b->dest = RTD_UNICAST;
    b->gw = IPA_NONE;
    return NULL;
  }
  case SA_PREFERENCE:
    if (v->val.i > 0xffff)
      return "Preference out of range";
    b->preference = v->val.i;
    return NULL;
  case SA_IGP_METRIC: b->igp_metric = v->val.i; return NULL;
  case SA_WEIGHT:
    if (v->val.i > 256 || !v->val.i)
      return "Setting weight value out of bounds";
    ea_set_int(b, EA_GEN_WEIGHT, EAF_INT, 0, v->val.i);
    return NULL;
  case SA_ONLINK:
    ea_set_int(b, EA_GEN_ONLINK, EAF_INT, 0, v->val.i);
    return NULL;
  case SA_GW_MPLS:
    return NULL;
  }
  return "Attribute is read-only";
}

/* --- Operations on values --- */

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

static int
path_any_in_set(const struct adata *p, const struct f_set *set)
{
  const u8 *d = p->data, *end = d + p->length;
  int u32set = set->from32 && set->type == T_INT;
  while (d < end) {
    uint n = d[1];
    d += 2;
    for (uint i = 0; i < n; i++, d += 4) {
      u32 asn;
      memcpy(&asn, d, 4);
      if (u32set) {
        if (f_set_contains_u32(set, asn))
          return 1;
        continue;
      }
      struct f_val x = f_int(T_INT, asn);
      if (f_set_contains(set, &x))
        return 1;
    }
  }
  return 0;
}

/* a ~ b: 1, 0, or -1 when it does not apply */
static int
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
      return path_any_in_set(a->val.ad, s);
    if (!s->count)
      return 0;
    return -1;
  }
  }
  return -1;
}

static uint
path_item_count(const struct adata *p)
{
  uint n = 0;
  const u8 *d = p->data, *end = d + p->length;
  while (d < end) {
    n += d[1];
    d += 2 + 4 * d[1];
  }
  return n;
}

static u32
path_item(const struct adata *p, uint k)
{
  const u8 *d = p->data, *end = d + p->length;
  while (d < end) {
    uint n = d[1];
    if (k < n) {
      u32 asn;
      memcpy(&asn, d + 2 + 4 * k, 4);
      return asn;
    }
    k -= n;
    d += 2 + 4 * n;
  }
  return 0;
}

static uint
net_type_enum(const net_addr *n)
{
  switch (n->type) {
  case NET_IP4: return 1;
  case NET_IP6: return 2;
  case NET_ROA4: return 5;
  case NET_ROA6: return 6;
  case NET_ASPA: return 11;
  }
  return 0;
}

static int
hexval(int c)
{
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static struct adata *
from_hex(linpool *lp, const char *s)
{
  uint len = strlen(s);
  struct adata *a = adata_alloc(lp, len / 2 + 1);
  uint n = 0;
  while (*s) {
    if (*s == ':' || *s == ' ' || *s == '-') {
      s++;
      continue;
    }
    int hi = hexval(s[0]), lo = s[1] ? hexval(s[1]) : -1;
    if (hi < 0 || lo < 0)
      return NULL;
    a->data[n++] = (hi << 4) | lo;
    s += 2;
  }
  a->length = n;
  return a;
}

/* ROA validation: lookups by prefix in the ROA table (nest/rt_roa.c). The
 * table is the one running now under the config this filter came from. */
static uint
roa_check(const struct rtable_config *tc, const net_addr *n, u32 asn)
{
  struct rtable *t = tc->table;
  if (!t || !n)
    return ROA_UNKNOWN;
  rcu_read_lock();
  uint r = rt_roa_check(t, n, asn);
  rcu_read_unlock();
  return r;
}

/* ASPA verification of a path (nest/rt_aspa.c). */
static uint
aspa_check(const struct rtable_config *tc, const struct adata *path, int upstream)
{
  struct rtable *t = tc->table;
  if (!t)
    return ASPA_UNKNOWN;
  rcu_read_lock();
  uint r = rt_aspa_check(t, path ? path->data : NULL, path ? path->length : 0, upstream);
  rcu_read_unlock();
  return r;
}

/* --- Fused tests (compile.c: gen_cond) --- */

/* Does JCMP with flags b jump for value x and constant k? -1: the types
 * do not compare (LT, LE). */
static inline int
jcmp_jumps(uint b, const struct f_val *x, const struct f_val *k)
{
  if (x->type == k->type && f_type_is_u32(x->type)) {
    u32 rel = x->val.i < k->val.i ? FJ_BELOW : x->val.i == k->val.i ? FJ_EQUAL : FJ_ABOVE;
    return !!(b & rel);
  }
  const struct f_val *l = x, *r = k;
  if (b & FJ_SWAP)
    l = k, r = x;
  uint op = b & 0xff;
  int res;
  if (op == FI_EQ || op == FI_NEQ)
    res = val_same(l, r) == (op == FI_EQ);
  else {
    int c = val_compare(l, r);
    if (c == F_CMP_ERROR)
      return -1;
    res = op == FI_LT ? c < 0 : c <= 0;
  }
  return res == !!(b & FJ_WHEN);
}

/* Does JMATCH with flags b jump? -1: `~` does not apply to the types. */
static inline int
jmatch_jumps(uint b, const struct f_val *x, const struct f_val *k)
{
  int m;
  if (k->type == T_PREFIX_SET && x->type == T_NET && !(b & FJ_SWAP))
    m = f_trie_match(k->val.trie, x->val.net);
  else {
    m = b & FJ_SWAP ? val_match(k, x) : val_match(x, k);
    if (m < 0)
      return -1;
  }
  return (m == ((b & 0xff) == FI_MATCH)) == !!(b & FJ_WHEN);
}

/* --- Printing --- */

static void
st_flush(struct f_state *st, int newline)
{
  if (!newline)
    return;
  const char *text = st->out_used ? st->out.start : "";
  if (st->opts && st->opts->print)
    st->opts->print(st->opts->print_ctx, text);
  else
    log_msg(L_INFO, "%s", text);
  buffer_reset(&st->out);   /* kept for the next print; freed when the run ends */
}

static void
st_print_vals(struct f_state *st, const struct f_val *v, uint n)
{
  if (!st->out_used) {
    buffer_init(&st->out);
    st->out_used = 1;
  }
  for (uint i = 0; i < n; i++)
    val_format(&v[i], &st->out);
}

/* --- The loop --- */

/* Each handler must end in its own indirect jump (the branch predictor
 * learns where each instruction tends to be followed): GCC's cross-jumping
 * would merge them into a few shared ones (16 jumps for 75 handlers). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-crossjumping")))
#endif
enum f_result
f_exec(const struct filter *top, struct f_route *r, linpool *lp, struct f_val *ret, const struct f_exec_opts *opts)
{
  struct f_val stack[F_STACK];
  struct f_frame frames[F_MAX_FRAMES];
  struct ea_builder ebs;        /* big: not zeroed unless a write needs it */
  struct f_state st;            /* not zeroed whole: the caches are big */
  st.r = r;
  st.lp = lp;
  st.opts = opts;
  st.eb = NULL;
  st.ebs = &ebs;
  st.out_used = 0;
  st.out.len = 0;               /* read by STEP()'s memory limit before any print */
  st.ncached = st.nviews = 0;
  uint nframes = 0, sp = 0, steps = 0;
  size_t lp_base = lp_used(lp);
  const struct filter *f = top;
  const struct f_insn *code = f->code;
  u32 pc = 0, base = 0;
  enum f_result res = F_NOP;
  char errmsg[160];
  u32 errline = 0;
  const struct filter *errf = top;   /* named in the message */

  if (f->stack_need > F_STACK) {
    bsnprintf(errmsg, sizeof(errmsg), "Filter stack overflow");
    goto fail;
  }
  for (; sp < f->nslots; sp++)
    stack[sp] = F_VAL_VOID;
  if (r && r->set_preference && r->attrs->preference != r->set_preference) {
    st_cow(&st);
    st.eb->preference = r->set_preference;
  }

#define ERROR_AT() do { errline = f->lines[pc - 1]; errf = f->origin && f->origin[pc - 1] ? f->origin[pc - 1] : f; } while (0)
#define ERROR(...) do { ERROR_AT(); bsnprintf(errmsg, sizeof(errmsg), __VA_ARGS__); goto fail; } while (0)
#define NEED_ROUTE() do { if (!r) ERROR(F_ERR_NO_ROUTE); } while (0)
#define ARG_TYPE(v, n, t) do { if ((v).type != (t)) \
      ERROR("Argument %d of %s must be of type %s, got type %s", n, f_op_names[in->op], f_type_name(t), f_type_name((v).type)); } while (0)
#define STEP() do { \
    if (unlikely(++steps > F_MAX_STEPS)) \
      ERROR("Filter runs too long (more than %u loop steps)", F_MAX_STEPS); \
    if (unlikely(lp_used(lp) - lp_base + st.out.len > F_MAX_MEM)) \
      ERROR("Filter uses too much memory (more than %u MB)", F_MAX_MEM >> 20); \
  } while (0)
#define POP() (stack[--sp])
/* A method of an attribute's value v (EA_METHOD, route operands) into u32 x. */
#define EA_METHOD(method, v, x) do { \
      if ((method) == FI_LEN) { \
        switch ((v)->type) { \
        case T_PATH: x = as_path_length((v)->val.ad); break; \
        case T_CLIST: case T_ECLIST: case T_LCLIST: x = clist_count((v)->type, (v)->val.ad); break; \
        case T_BYTESTRING: x = (v)->val.ad->length; break; \
        default: ERROR("Prefix, path, clist or eclist expected"); \
        } \
      } else { \
        if ((v)->type != T_PATH) \
          ERROR("Argument 1 of %s must be of type %s, got type %s", f_op_names[method], f_type_name(T_PATH), f_type_name((v)->type)); \
        if ((method) == FI_FIRST) as_path_first((v)->val.ad, &x); \
        else if ((method) == FI_LAST) as_path_last((v)->val.ad, &x); \
        else as_path_last_nonaggregated((v)->val.ad, &x); \
      } } while (0)
/* The operand of JCMP_RT / JMATCH_RT (struct f_jtest t) into *x. */
#define ROUTE_OPERAND(t, x) do { \
      if (!(t)->attr) { \
        if (!(t)->method) { (x)->type = T_NET; (x)->val.net = r->net; } \
        else if ((t)->method == FI_LEN) SET_INT(*(x), T_INT, r->net->pxlen); \
        else SET_INT(*(x), T_ENUM_NETTYPE, net_type_enum(r->net)); \
      } else { \
        ea_value(&st, (t)->attr, (x)); \
        if ((t)->method == FI_ROA_CHECK) { \
          u32 m_ = 0; \
          EA_METHOD(FI_LAST, (x), m_); \
          SET_INT(*(x), T_ENUM_ROA, roa_check((t)->table, r->net, m_)); \
        } else if ((t)->method) { \
          u32 m_ = 0; \
          EA_METHOD((t)->method, (x), m_); \
          SET_INT(*(x), T_INT, m_); \
        } \
      } } while (0)

#define TOP (stack[sp - 1])

  /* Threaded dispatch: each handler jumps straight to the next one, so
   * the branch predictor sees where each instruction tends to go. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
  static const void *const dispatch[FI__MAX] = {
    [0 ... FI__MAX - 1] = &&L_BAD,
    [FI_CONST] = &&L_FI_CONST,
    [FI_VAR_GET] = &&L_FI_VAR_GET,
    [FI_VAR_SET] = &&L_FI_VAR_SET,
    [FI_VAR_INIT] = &&L_FI_VAR_INIT,
    [FI_POP] = &&L_FI_POP,
    [FI_ADD] = &&L_FI_ADD,
    [FI_SUB] = &&L_FI_SUB,
    [FI_MUL] = &&L_FI_MUL,
    [FI_DIV] = &&L_FI_DIV,
    [FI_BAND] = &&L_FI_BAND,
    [FI_BOR] = &&L_FI_BOR,
    [FI_NOT] = &&L_FI_NOT,
    [FI_EQ] = &&L_FI_EQ,
    [FI_NEQ] = &&L_FI_NEQ,
    [FI_LT] = &&L_FI_LT,
    [FI_LE] = &&L_FI_LE,
    [FI_MATCH] = &&L_FI_MATCH,
    [FI_NMATCH] = &&L_FI_NMATCH,
    [FI_CONCAT] = &&L_FI_CONCAT,
    [FI_JMP] = &&L_FI_JMP,
    [FI_JZ] = &&L_FI_JZ,
    [FI_JNZ] = &&L_FI_JNZ,
    [FI_JCMP] = &&L_FI_JCMP,
    [FI_JMATCH] = &&L_FI_JMATCH,
    [FI_JCMP_RT] = &&L_FI_JCMP_RT,
    [FI_JMATCH_RT] = &&L_FI_JMATCH_RT,
    [FI_SWITCH] = &&L_FI_SWITCH,
    [FI_FOR_NEXT] = &&L_FI_FOR_NEXT,
    [FI_CALL] = &&L_FI_CALL,
    [FI_RETURN] = &&L_FI_RETURN,
    [FI_ACCEPT] = &&L_FI_ACCEPT,
    [FI_REJECT] = &&L_FI_REJECT,
    [FI_ERROR] = &&L_FI_ERROR,
    [FI_PRINT] = &&L_FI_PRINT,
    [FI_ASSERT] = &&L_FI_ASSERT,
    [FI_PAIR] = &&L_FI_PAIR,
    [FI_EC] = &&L_FI_EC,
    [FI_LC] = &&L_FI_LC,
    [FI_PATHMASK] = &&L_FI_PATHMASK,
    [FI_SA_GET] = &&L_FI_SA_GET,
    [FI_SA_NET] = &&L_FI_SA_NET,
    [FI_NET_METHOD] = &&L_FI_NET_METHOD,
    [FI_EA_METHOD] = &&L_FI_EA_METHOD,
    [FI_SA_SET] = &&L_FI_SA_SET,
    [FI_EA_GET] = &&L_FI_EA_GET,
    [FI_EA_SET] = &&L_FI_EA_SET,
    [FI_EA_UNSET] = &&L_FI_EA_UNSET,
    [FI_EA_DEFINED] = &&L_FI_EA_DEFINED,
    [FI_DEFINED] = &&L_FI_DEFINED,
    [FI_IS_V4] = &&L_FI_IS_V4,
    [FI_TYPE] = &&L_FI_TYPE,
    [FI_IP] = &&L_FI_IP,
    [FI_RD] = &&L_FI_RD,
    [FI_LEN] = &&L_FI_LEN,
    [FI_MAXLEN] = &&L_FI_MAXLEN,
    [FI_ASN] = &&L_FI_ASN,
    [FI_NET_SRC] = &&L_FI_NET_SRC,
    [FI_NET_DST] = &&L_FI_NET_DST,
    [FI_MASK] = &&L_FI_MASK,
    [FI_DATA] = &&L_FI_DATA,
    [FI_DATA1] = &&L_FI_DATA1,
    [FI_DATA2] = &&L_FI_DATA2,
    [FI_FIRST] = &&L_FI_FIRST,
    [FI_LAST] = &&L_FI_LAST,
    [FI_LAST_NONAGG] = &&L_FI_LAST_NONAGG,
    [FI_MIN] = &&L_FI_MIN,
    [FI_MAX] = &&L_FI_MAX,
    [FI_EMPTY] = &&L_FI_EMPTY,
    [FI_PREPEND] = &&L_FI_PREPEND,
    [FI_ADD_ITEM] = &&L_FI_ADD_ITEM,
    [FI_DELETE] = &&L_FI_DELETE,
    [FI_FILTER] = &&L_FI_FILTER,
    [FI_FORMAT] = &&L_FI_FORMAT,
    [FI_FROM_HEX] = &&L_FI_FROM_HEX,
    [FI_ROA_CHECK] = &&L_FI_ROA_CHECK,
    [FI_ROA_CHECK_ROUTE] = &&L_FI_ROA_CHECK_ROUTE,
    [FI_ASPA_CHECK] = &&L_FI_ASPA_CHECK,
    [FI_END] = &&L_FI_END,
  };
#pragma GCC diagnostic pop
  const struct f_insn *in;
#define DISPATCH() do { in = &code[pc++]; goto *dispatch[in->op]; } while (0)
  DISPATCH();
  {
    {
    L_FI_END: ;
      goto done;
    L_FI_CONST: ;
      stack[sp++] = *in->p.v;
      DISPATCH();
    L_FI_VAR_GET: ;
      stack[sp] = stack[base + in->a];
      sp++;
      DISPATCH();
    L_FI_VAR_SET: ;
      stack[base + in->a] = POP();
      DISPATCH();
    L_FI_VAR_INIT: ;
      stack[base + in->a] = f_val_empty(in->b);
      DISPATCH();
    L_FI_POP: ;
      sp--;
      DISPATCH();

    L_FI_ADD: L_FI_SUB: L_FI_MUL: L_FI_DIV: L_FI_BAND: L_FI_BOR: ; {
      const struct f_val *bp = &stack[--sp];   /* no copy: stays valid */
      struct f_val *a = &TOP;
      ARG_TYPE(*a, 1, T_INT);
      ARG_TYPE(*bp, 2, T_INT);
      switch (in->op) {
      case FI_ADD: a->val.i += bp->val.i; break;
      case FI_SUB: a->val.i -= bp->val.i; break;
      case FI_MUL: a->val.i *= bp->val.i; break;
      case FI_DIV:
        if (!bp->val.i)
          ERROR("Mother told me not to divide by 0");
        a->val.i /= bp->val.i;
        break;
      case FI_BAND: a->val.i &= bp->val.i; break;
      case FI_BOR: a->val.i |= bp->val.i; break;
      }
      DISPATCH();
    }
    L_FI_NOT: ;
      ARG_TYPE(TOP, 1, T_BOOL);
      TOP.val.i = !TOP.val.i;
      DISPATCH();
    L_FI_EQ: L_FI_NEQ: ; {
      const struct f_val *bp = &stack[--sp];   /* no copy: stays valid */
      int s = val_same(&TOP, bp);
      SET_BOOL(TOP, in->op == FI_EQ ? s : !s);
      DISPATCH();
    }
    L_FI_LT: L_FI_LE: ; {
      const struct f_val *bp = &stack[--sp];   /* no copy: stays valid */
      int c = val_compare(&TOP, bp);
      if (c == F_CMP_ERROR)
        ERROR("Can't compare values of incompatible types");
      SET_BOOL(TOP, in->op == FI_LT ? c < 0 : c <= 0);
      DISPATCH();
    }
    L_FI_MATCH: L_FI_NMATCH: ; {
      const struct f_val *bp = &stack[--sp];   /* no copy: stays valid */
      int m = val_match(&TOP, bp);
      if (m < 0)
        ERROR("~ applied on unknown type pair");
      SET_BOOL(TOP, in->op == FI_MATCH ? m : !m);
      DISPATCH();
    }
    L_FI_CONCAT: ; {
      const struct f_val *bp = &stack[--sp];   /* no copy: stays valid */
      ARG_TYPE(TOP, 1, T_STRING);
      ARG_TYPE(*bp, 2, T_STRING);
      TOP.val.s = lp_sprintf(lp, "%s%s", TOP.val.s, bp->val.s);
      DISPATCH();
    }

    L_FI_JMP: ;
      /* Only backward jumps (loops) and calls can repeat work: count them. */
      if (in->a < pc)
        STEP();
      pc = in->a;
      DISPATCH();
    L_FI_JZ: L_FI_JNZ: ; {
      const struct f_val *c = &stack[--sp];
      if (unlikely(c->type != T_BOOL))
        ERROR("Argument 1 of %s must be of type bool, got type %s", f_op_names[in->b ? in->b : in->op], f_type_name(c->type));
      if (!c->val.i == (in->op == FI_JZ))
        pc = in->a;
      DISPATCH();
    }
    /* Fused tests: one handler each (each its own dispatch jump). */
#define JUMP_IF(j, msg) do { int j_ = (j); if (j_ < 0) ERROR(msg); if (j_) pc = in->a; DISPATCH(); } while (0)
#define F_ERR_CMP "Can't compare values of incompatible types"
#define F_ERR_MATCH "~ applied on unknown type pair"
    L_FI_JCMP: ;
      JUMP_IF(jcmp_jumps(in->b, &stack[--sp], in->p.v), F_ERR_CMP);
    L_FI_JMATCH: ;
      JUMP_IF(jmatch_jumps(in->b, &stack[--sp], in->p.v), F_ERR_MATCH);
#define ROUTE_TEST(jumps, msg) do { NEED_ROUTE(); const struct f_jtest *t_ = in->p.p; struct f_val x_; \
      ROUTE_OPERAND(t_, &x_); JUMP_IF(jumps(in->b, &x_, &t_->k), msg); } while (0)
    L_FI_JCMP_RT: ;
      ROUTE_TEST(jcmp_jumps, F_ERR_CMP);
    L_FI_JMATCH_RT: ;
      ROUTE_TEST(jmatch_jumps, F_ERR_MATCH);
    L_FI_SWITCH: ; {
      struct f_val v = POP();
      const struct f_switch *sw = in->p.p;
      pc = sw->deflt;
      for (uint i = 0; i < sw->n; i++) {
        int c1 = val_compare(&sw->e[i].from, &v), c2 = val_compare(&v, &sw->e[i].to);
        if (c1 != F_CMP_ERROR && c2 != F_CMP_ERROR && c1 <= 0 && c2 <= 0) {
          pc = sw->e[i].target;
          break;
        }
      }
      DISPATCH();
    }
    L_FI_FOR_NEXT: ; {
      struct f_val *list = &stack[base + in->a];
      struct f_val *idx = &stack[base + in->a + 1];
      uint k = idx->val.i, n;
      switch (list->type) {
      case T_PATH:
        n = path_item_count(list->val.ad);
        if (k >= n) { pc = in->p.u; break; }
        SET_INT(stack[base + in->b], T_INT, path_item(list->val.ad, k));
        idx->val.i++;
        break;
      case T_CLIST: case T_ECLIST: case T_LCLIST:
        n = clist_count(list->type, list->val.ad);
        if (k >= n) { pc = in->p.u; break; }
        stack[base + in->b] = clist_item(list->type, list->val.ad, k);
        idx->val.i++;
        break;
      default:
        pc = in->p.u;
      }
      DISPATCH();
    }
    L_FI_CALL: ; {
      const struct filter *fn = in->p.p;
      STEP();
      if (nframes >= F_MAX_FRAMES)
        ERROR("Filter recursion too deep");
      if (sp - in->a + fn->stack_need > F_STACK)
        ERROR("Filter stack overflow");
      frames[nframes++] = (struct f_frame){ .f = f, .pc = pc, .base = base };
      base = sp - in->a;
      for (; sp < base + fn->nslots; sp++)
        stack[sp] = F_VAL_VOID;
      f = fn;
      code = f->code;
      pc = 0;
      DISPATCH();
    }
    L_FI_RETURN: ; {
      struct f_val v = POP();
      if (!nframes) {
        if (ret)
          *ret = v;
        res = F_RETURN;
        goto done;
      }
      sp = base;
      struct f_frame *fr = &frames[--nframes];
      f = fr->f;
      code = f->code;
      pc = fr->pc;
      base = fr->base;
      stack[sp++] = v;
      DISPATCH();
    }
    L_FI_ACCEPT: L_FI_REJECT: ;
      if (in->a) {
        sp -= in->a;
        st_print_vals(&st, &stack[sp], in->a);
        st_flush(&st, 1);
      }
      res = in->op == FI_ACCEPT ? F_ACCEPT : F_REJECT;
      goto done;
    L_FI_ERROR: ; {
      sp -= in->a;
      struct buffer b;
      buffer_init(&b);
      for (uint i = 0; i < in->a; i++)
        val_format(&stack[sp + i], &b);
      ERROR_AT();
      bsnprintf(errmsg, sizeof(errmsg), "%s", b.start);
      buffer_free(&b);
      goto fail;
    }
    L_FI_PRINT: ;
      sp -= in->a;
      st_print_vals(&st, &stack[sp], in->a);
      st_flush(&st, !(in->b & 1));
      DISPATCH();
    L_FI_ASSERT: ; {
      struct f_val c = POP();
      if (c.type != T_BOOL || !c.val.i) {
        if (opts && opts->assert_failed)
          (*opts->assert_failed)++;
        if (opts && opts->print)
          opts->print(opts->print_ctx, lp_sprintf(lp, "Assertion failed at %s", (const char *) in->p.p));
        else
          log_msg(L_ERR, "Assertion failed at %s", (const char *) in->p.p);
      }
      DISPATCH();
    }

    L_FI_PAIR: ; {
      const struct f_val *bp = &stack[--sp];   /* no copy: stays valid */
      struct f_val *a = &TOP;
      ARG_TYPE(*a, 1, T_INT);
      ARG_TYPE(*bp, 2, T_INT);
      if (a->val.i > 0xffff || bp->val.i > 0xffff)
        ERROR("Can't operate with value out of bounds in pair constructor");
      SET_INT(*a, T_PAIR, (a->val.i << 16) | bp->val.i);
      DISPATCH();
    }
    L_FI_EC: ; {
      const struct f_val *bp = &stack[--sp];   /* no copy: stays valid */
      struct f_val *a = &TOP;
      int ip4 = 0;
      u32 key, val, kind = in->a;
      if (a->type == T_INT) key = a->val.i;
      else if (a->type == T_QUAD) { key = a->val.i; ip4 = 1; }
      else if (a->type == T_IP && ipa_is_ip4(a->val.ip)) { key = ipa_to_ip4(a->val.ip).addr; ip4 = 1; }
      else ERROR("Argument 1 of EC constructor must be integer or IPv4 address, got type %s", f_type_name(a->type));
      ARG_TYPE(*bp, 2, T_INT);
      val = bp->val.i;
      u64 ec;
      if (kind == 0x10000)
        ec = ((u64) key << 32) | val;
      else if (!ip4 && key < 0x10000)
        ec = ((u64) kind << 48) | ((u64) key << 32) | val;
      else if (val > 0xffff)
        ERROR(ip4 ? "4-byte value %u can't be used with IP-address key in extended community"
                  : "4-byte value %u can't be used with 4-byte ASN in extended community", val);
      else
        ec = ((u64) ((ip4 ? 0x0100 : 0x0200) | kind) << 48) | ((u64) key << 16) | val;
      *a = (struct f_val){ .type = T_EC, .val.ec = ec };
      DISPATCH();
    }
    L_FI_LC: ; {
      struct f_val c = POP(), b = POP();
      struct f_val *a = &TOP;
      ARG_TYPE(*a, 1, T_INT);
      ARG_TYPE(b, 2, T_INT);
      ARG_TYPE(c, 3, T_INT);
      *a = (struct f_val){ .type = T_LC, .val.lc = { a->val.i, b.val.i, c.val.i } };
      DISPATCH();
    }
    L_FI_PATHMASK: ; {
      const struct f_path_mask *tm = in->p.p;
      struct f_path_mask *m = lp_alloc(lp, sizeof(struct f_path_mask) + tm->len * sizeof(struct f_path_mask_item));
      memcpy(m, tm, sizeof(struct f_path_mask) + tm->len * sizeof(struct f_path_mask_item));
      sp -= in->a;
      uint k = sp;
      for (uint i = 0; i < m->len; i++)
        if (m->item[i].kind == PM_ASN_EXPR) {
          struct f_val *v = &stack[k++];
          if (v->type == T_INT) {
            m->item[i].kind = PM_ASN;
            m->item[i].asn = v->val.i;
          } else if (v->type == T_SET && v->val.set->type == T_INT) {
            m->item[i].kind = PM_ASN_SET;
            m->item[i].set = v->val.set;
          } else
            ERROR("Path mask expression must be an integer or an integer set, got type %s", f_type_name(v->type));
        }
      stack[sp++] = (struct f_val){ .type = T_PATH_MASK, .val.pm = m };
      DISPATCH();
    }

    L_FI_SA_NET: ;
      NEED_ROUTE();
      stack[sp].type = T_NET;
      stack[sp].val.net = r->net;
      sp++;
      DISPATCH();
    L_FI_NET_METHOD: ;
      NEED_ROUTE();
      if (in->b == FI_LEN)
        SET_INT(stack[sp], T_INT, r->net->pxlen);
      else
        SET_INT(stack[sp], T_ENUM_NETTYPE, net_type_enum(r->net));
      sp++;
      DISPATCH();
    L_FI_EA_METHOD: ; {
      NEED_ROUTE();
      struct f_val v;
      ea_value(&st, in->p.p, &v);
      u32 x = 0;
      EA_METHOD(in->b, &v, x);
      SET_INT(stack[sp], T_INT, x);
      sp++;
      DISPATCH();
    }
    L_FI_SA_GET: ;
      NEED_ROUTE();
      if (sa_get(&st, in->b, &stack[sp]) < 0)
        ERROR("Unknown static attribute");
      sp++;
      DISPATCH();
    L_FI_SA_SET: ; {
      NEED_ROUTE();
      const struct f_val *v = &stack[--sp];
      if (v->type == T_VOID)
        ERROR("Can't set an attribute to void");
      const char *e = sa_set(&st, in->b, v);
      if (e)
        ERROR("%s", e);
      DISPATCH();
    }
    L_FI_EA_GET: ;
      NEED_ROUTE();
      ea_value(&st, in->p.p, &stack[sp++]);
      DISPATCH();
    L_FI_EA_SET: ; {
      NEED_ROUTE();
      const struct f_attr *a = in->p.p;
      const struct f_val *v = &stack[--sp];
      if (v->type != a->type)
        ERROR("Argument 1 of EA_SET must be of type %s, got type %s", f_type_name(a->type), f_type_name(v->type));
      ea_store(&st, a, v);
      DISPATCH();
    }
    L_FI_EA_UNSET: ;
      NEED_ROUTE();
      ea_forget(&st, in->a);
      st_cow(&st);
      ea_unset(st.eb, in->a);
      DISPATCH();
    L_FI_EA_DEFINED: ; {
      NEED_ROUTE();
      const void *data;
      { SET_BOOL(stack[sp], st_ea_find(&st, in->a, &data) != NULL); sp++; };
      DISPATCH();
    }
    L_FI_DEFINED: ;
      SET_BOOL(TOP, TOP.type != T_VOID);
      DISPATCH();

    L_FI_IS_V4: ;
      if (TOP.type == T_IP)
        SET_BOOL(TOP, ipa_is_ip4(TOP.val.ip));
      else if (TOP.type == T_NET)
        SET_BOOL(TOP, TOP.val.net->type == NET_IP4 || TOP.val.net->type == NET_ROA4);
      else
        ERROR("IP address expected");
      DISPATCH();
    L_FI_TYPE: ;
      ARG_TYPE(TOP, 1, T_NET);
      SET_INT(TOP, T_ENUM_NETTYPE, net_type_enum(TOP.val.net));
      DISPATCH();
    L_FI_IP: ;
      ARG_TYPE(TOP, 1, T_NET);
      TOP = (struct f_val){ .type = T_IP, .val.ip = net_prefix(TOP.val.net) };
      DISPATCH();
    L_FI_RD: ;
      ERROR("VPN address expected");
    L_FI_LEN: ; {
      struct f_val *v = &TOP;
      switch (v->type) {
      case T_NET: SET_INT(*v, T_INT, v->val.net->pxlen); break;
      case T_PATH: SET_INT(*v, T_INT, as_path_length(v->val.ad)); break;
      case T_CLIST: case T_ECLIST: case T_LCLIST: SET_INT(*v, T_INT, clist_count(v->type, v->val.ad)); break;
      case T_STRING: SET_INT(*v, T_INT, strlen(v->val.s)); break;
      case T_BYTESTRING: SET_INT(*v, T_INT, v->val.ad->length); break;
      default: ERROR("Prefix, path, clist or eclist expected");
      }
      DISPATCH();
    }
    L_FI_MAXLEN: ;
      ARG_TYPE(TOP, 1, T_NET);
      if (TOP.val.net->type == NET_ROA4)
        SET_INT(TOP, T_INT, ((const net_addr_roa4 *) TOP.val.net)->max_pxlen);
      else if (TOP.val.net->type == NET_ROA6)
        SET_INT(TOP, T_INT, ((const net_addr_roa6 *) TOP.val.net)->max_pxlen);
      else
        ERROR("ROA expected");
      DISPATCH();
    L_FI_ASN: ; {
      struct f_val *v = &TOP;
      if (v->type == T_PAIR)
        SET_INT(*v, T_INT, v->val.i >> 16);
      else if (v->type == T_LC)
        SET_INT(*v, T_INT, v->val.lc.asn);
      else if (v->type == T_NET && v->val.net->type == NET_ROA4)
        SET_INT(*v, T_INT, ((const net_addr_roa4 *) v->val.net)->asn);
      else if (v->type == T_NET && v->val.net->type == NET_ROA6)
        SET_INT(*v, T_INT, ((const net_addr_roa6 *) v->val.net)->asn);
      else
        ERROR("ROA expected");
      DISPATCH();
    }
    L_FI_NET_SRC: L_FI_NET_DST: ;
      ERROR("Flow or SADR expected");
    L_FI_MASK: ; {
      const struct f_val *bp = &stack[--sp];   /* no copy: stays valid */
      struct f_val *a = &TOP;
      ARG_TYPE(*a, 1, T_IP);
      ARG_TYPE(*bp, 2, T_INT);
      if (ipa_is_ip4(a->val.ip)) {
        if (bp->val.i > 32)
          ERROR("Invalid mask length");
        a->val.ip = ipa_from_ip4(ip4_and(ipa_to_ip4(a->val.ip), ip4_mkmask(bp->val.i)));
      } else {
        if (bp->val.i > 128)
          ERROR("Invalid mask length");
        a->val.ip = ip6_and(a->val.ip, ip6_mkmask(bp->val.i));
      }
      DISPATCH();
    }
    L_FI_DATA: ;
      if (TOP.type == T_PAIR)
        SET_INT(TOP, T_INT, TOP.val.i & 0xffff);
      else if (TOP.type == T_LC)
        SET_INT(TOP, T_INT, TOP.val.lc.ldp1);
      else
        ERROR("Pair expected");
      DISPATCH();
    L_FI_DATA1: ;
      ARG_TYPE(TOP, 1, T_LC);
      SET_INT(TOP, T_INT, TOP.val.lc.ldp1);
      DISPATCH();
    L_FI_DATA2: ;
      ARG_TYPE(TOP, 1, T_LC);
      SET_INT(TOP, T_INT, TOP.val.lc.ldp2);
      DISPATCH();
    L_FI_FIRST: L_FI_LAST: L_FI_LAST_NONAGG: ; {
      ARG_TYPE(TOP, 1, T_PATH);
      u32 asn = 0;
      if (in->op == FI_FIRST) as_path_first(TOP.val.ad, &asn);
      else if (in->op == FI_LAST) as_path_last(TOP.val.ad, &asn);
      else as_path_last_nonaggregated(TOP.val.ad, &asn);
      SET_INT(TOP, T_INT, asn);
      DISPATCH();
    }
    L_FI_MIN: L_FI_MAX: ; {
      struct f_val *v = &TOP, x;
      if (v->type != T_CLIST && v->type != T_ECLIST && v->type != T_LCLIST)
        ERROR("Argument 1 of %s must be of type clist, eclist or lclist, got type %s", f_op_names[in->op], f_type_name(v->type));
      if (clist_minmax(v->type, v->val.ad, in->op == FI_MAX, &x))
        *v = x;
      else
        *v = F_VAL_VOID;
      DISPATCH();
    }
    L_FI_EMPTY: ;
      if (TOP.type != T_PATH && TOP.type != T_CLIST && TOP.type != T_ECLIST && TOP.type != T_LCLIST)
        ERROR("Can't empty %s", f_type_name(TOP.type));
      TOP = f_val_empty(TOP.type);
      DISPATCH();
    L_FI_PREPEND: ; {
      const struct f_val *bp = &stack[--sp];   /* no copy: stays valid */
      ARG_TYPE(TOP, 1, T_PATH);
      ARG_TYPE(*bp, 2, T_INT);
      TOP.val.ad = as_path_prepend(lp, TOP.val.ad, bp->val.i);
      DISPATCH();
    }
    L_FI_ADD_ITEM: L_FI_DELETE: L_FI_FILTER: ; {
      struct f_val *b = &stack[--sp];   /* in place: no copy (store forwarding) */
      struct f_val *a = &TOP;
      if (a->type == T_PATH) {
        if (in->op == FI_ADD_ITEM)
          ERROR("Can't add to a path");
        if (b->type != T_INT && !(b->type == T_SET && b->val.set->type == T_INT))
          ERROR("Integer or integer set expected");
        a->val.ad = as_path_filter(lp, a->val.ad, b, in->op == FI_FILTER);
        DISPATCH();
      }
      if (a->type != T_CLIST && a->type != T_ECLIST && a->type != T_LCLIST)
        ERROR("Argument 1 of %s must be of type clist, eclist, lclist or bgppath, got type %s",
              f_op_names[in->op], f_type_name(a->type));
      uint it = clist_item_type(a->type);
      if (a->type == T_CLIST && (b->type == T_QUAD || b->type == T_INT))
        b->type = T_PAIR;
      else if (a->type == T_CLIST && b->type == T_IP && ipa_is_ip4(b->val.ip)) {
        u32 q = ipa_to_ip4(b->val.ip).addr;
        b->type = T_PAIR;
        b->val.i = q;
      }
      if (b->type != it && b->type != a->type && !(b->type == T_SET && in->op != FI_ADD_ITEM))
        ERROR("Argument 2 of %s must be of type %s, got type %s", f_op_names[in->op], f_type_name(it), f_type_name(b->type));
      if (in->op == FI_ADD_ITEM)
        a->val.ad = clist_add(lp, a->type, a->val.ad, b);
      else
        a->val.ad = clist_filter(lp, a->type, a->val.ad, b, in->op == FI_FILTER);
      DISPATCH();
    }
    L_FI_FORMAT: ;
      TOP = (struct f_val){ .type = T_STRING, .val.s = val_format_str(&TOP, lp) };
      DISPATCH();
    L_FI_FROM_HEX: ; {
      ARG_TYPE(TOP, 1, T_STRING);
      struct adata *a = from_hex(lp, TOP.val.s);
      if (!a)
        ERROR("Invalid hex string");
      TOP = (struct f_val){ .type = T_BYTESTRING, .val.ad = a };
      DISPATCH();
    }
    L_FI_ROA_CHECK: ; {
      const struct f_val *bp = &stack[--sp];   /* no copy: stays valid */
      struct f_val *a = &TOP;
      ARG_TYPE(*a, 1, T_NET);
      ARG_TYPE(*bp, 2, T_INT);
      SET_INT(*a, T_ENUM_ROA, roa_check(in->p.p, a->val.net, bp->val.i));
      DISPATCH();
    }
    L_FI_ROA_CHECK_ROUTE: ; {
      NEED_ROUTE();
      u32 asn = 0;
      struct f_val p;
      ea_value(&st, f_bgp_attr(EAB_AS_PATH), &p);
      if (p.type == T_PATH)
        as_path_last(p.val.ad, &asn);
      { SET_INT(stack[sp], T_ENUM_ROA, roa_check(in->p.p, r->net, asn)); sp++; };
      DISPATCH();
    }
    L_FI_ASPA_CHECK: ; {
      const struct f_val *up = &stack[--sp];   /* no copy: stays valid */
      struct f_val *a = &TOP;
      ARG_TYPE(*a, 1, T_PATH);
      ARG_TYPE(*up, 2, T_BOOL);
      SET_INT(*a, T_ENUM_ASPA, aspa_check(in->p.p, a->val.ad, up->val.i));
      DISPATCH();
    }

    L_BAD: ;
      ERROR("Unknown instruction %u", in->op);
    }
  }

done:
  if (st.out_used)
    buffer_free(&st.out);
  if (r) {
    r->out = NULL;
    if (st.eb && res != F_ERROR)
      r->out = ea_intern(st.eb);
  }
  return res;

fail:
  if (st.out_used)
    buffer_free(&st.out);
  if (opts && opts->errbuf)
    bsnprintf(opts->errbuf, opts->errsize, "%s", errmsg);
  if (opts && opts->silent)
    ;
  else if (opts && opts->print)
    opts->print(opts->print_ctx, lp_sprintf(lp, "%s, line %u: %s", errf->name ? errf->name : "filter", errline, errmsg));
  else
    log_msg(L_ERR, "%s, line %u: %s", errf->name ? errf->name : "filters", errline, errmsg);
  if (r)
    r->out = NULL;
  return F_ERROR;
#undef ERROR
#undef ERROR_AT
#undef EA_METHOD
#undef ROUTE_OPERAND
#undef JUMP_IF
#undef ROUTE_TEST
#undef DISPATCH
#undef STEP
#undef POP
#undef TOP
}
