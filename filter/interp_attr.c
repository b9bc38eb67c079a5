/*
 * DOC: Route attributes in the filter interpreter.
 *
 * Reads come from the route's interned list until the first write; then
 * the list is copied into an ea_builder (copy-on-write, f_st_cow()) and
 * later reads and writes use the builder. f_exec() interns the builder
 * once at the end, if anything was written. A write that would leave an
 * attribute as it is (scrubbing communities that are not there) copies
 * nothing.
 *
 * Reads go through a per-run cache (struct f_state, filter/f_interp.h):
 * its hit path, f_st_ea_get(), is static inline there and compiled with
 * the dispatch loop; the first read of an attribute (f_st_ea_miss()) is
 * here. Static attributes (gw, dest,
 * preference, ...) live in the list's fixed fields, except from, weight
 * and onlink, which are stored as attributes.
 *
 * Attribute payloads stay valid for the whole run (the input list is held
 * by the caller; builder payloads live in the run's linpool).
 */
#include <stddef.h>
#include <string.h>
#include "filter/f_interp.h"
#include "nest/ea_memo.h"
#include "lib/hash.h"
#include "nest/ea_bgp.h"
#include "nest/rt.h"
#include "nest/proto.h"
#include "nest/iface.h"

static const u8 empty_bytes[4];

/* As the attributes are now, edits waiting or not. */
static inline __attribute__((always_inline)) const struct eattr *
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

/* f_st_ea_find(), inline in the first read of each attribute. */
static inline __attribute__((always_inline)) const struct eattr *
st_ea_find_now(struct f_state *st, u16 id, const void **data)
{
  f_st_edits_apply(st, id);
  return st_ea_find(st, id, data);
}

const struct eattr *
f_st_ea_find(struct f_state *st, u16 id, const void **data)
{
  return st_ea_find_now(st, id, data);
}

/* Does a value of attribute a point to an object made of its payload? */
static inline int
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
static inline __attribute__((always_inline)) const void *
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

struct f_val
f_ea_to_val(const struct f_attr *a, const struct eattr *e, const void *data, linpool *lp)
{
  struct f_val v;
  f_ea_val(a, e, data, e && ea_needs_obj(a, e) ? ea_make_obj(lp, NULL, a, e, data) : NULL, &v);
  return v;
}

/* Out of line: only the cache's hit path belongs in the dispatch loop. */
void __attribute__((noinline))
f_st_ea_miss(struct f_state *st, const struct f_attr *a, struct f_val *out)
{
  const void *data = NULL, *obj = NULL;
  const struct eattr *e = st_ea_find_now(st, a->id, &data);
  if (e && ea_needs_obj(a, e)) {
    struct adata *view = NULL;
    if (!(e->type == EAF_OPAQUE && a->type == T_NET) && st->nviews < F_EA_CACHE)
      view = &st->views[st->nviews++];
    obj = ea_make_obj(st->lp, view, a, e, data);
  }
  if (st->ncached < F_EA_CACHE) {
    struct f_ea_cached *c = &st->cached[st->ncached++];
    c->a = a;
    c->id = a->id;
    c->found = !!e;
    if (e)
      c->e = *e;
    c->data = data;
    c->obj = obj;
  }
  f_ea_val(a, e, data, obj, out);
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

/* Store v in attribute a (its waiting edits applied). */
static void
st_ea_store(struct f_state *st, const struct f_attr *a, const struct f_val *v)
{
  const void *old = NULL;
  const struct eattr *e = st_ea_find(st, a->id, &old);
  if (ea_unchanged(a, e, old, v))
    return;
  f_st_ea_forget(st, a->id);
  /* Its index: ea_builder_from() copies the list's entries in order, so
   * one found in the list has the same index in the builder. */
  int i = !e ? -1 : st->eb ? (int) (e - st->eb->a) : (int) (e - st->r->attrs->a);
  u8 flags = e ? e->flags : a->flags;
  f_st_cow(st);
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

void
f_st_ea_set(struct f_state *st, const struct f_attr *a, const struct f_val *v)
{
  f_st_edits_apply(st, a->id);
  st->memo_ok = 0;
  st_ea_store(st, a, v);
}

/* --- List edits with constants (EA_EDIT), deferred and memoized --- */

/* The memo key: which edits ran (by their ids in the scope of their
 * config: filters making the same edits share entries) and the
 * preference the caller stamped before them. 40 bytes: with the entry's
 * header, one cache line. */
struct f_memo_bytes {
  u64 scope;
  u32 set_preference;
  u16 n;
  u16 edits[F_EDITS];
};
_Static_assert(sizeof(struct f_memo_bytes) == 40, "filter memo key is not 40 bytes");

/* The memo entries of one filter on one list share a bucket, whatever
 * edits ran: the run knows the bucket before it starts. Filters whose
 * code makes the same edits share it too (their seeds are equal). */
static u32
st_memo_hash(const struct f_state *st, const struct filter *top)
{
  /* One multiply: the memo is the thread's own and holds its keys'
   * references, so no one can aim collisions at it that matter. */
  u64 x = (uintptr_t) st->r->attrs ^ top->memo_seed ^ ((u64) st->r->set_preference << 40);
  return (u32) ((x * 0x9e3779b97f4a7c15ULL) >> 32);
}

void
f_st_start(struct f_state *st, const struct filter *top)
{
  /* The route's list (a few cache lines) and, for a filter that edits,
   * its memo bucket load while the first tests run: a route server's
   * filter meets each attribute set cold, and these misses overlap with
   * the prefix set's instead of coming one after the other. */
  const u8 *l = (const u8 *) st->r->attrs;
  for (uint i = 0; i < 4; i++)
    __builtin_prefetch(l + 64 * i);
  st->memo_hashed = top->edits;
  if (top->edits) {
    st->memo_hash = st_memo_hash(st, top);
    ea_memo_prefetch(EA_MEMO_FILTER, st->memo_hash);
  }
}

void
f_st_edit(struct f_state *st, const struct f_insn *in)
{
  if (st->nedits == F_EDITS) {
    /* More than a memo key holds: this run is computed, not memoized. */
    f_st_edits_run(st);
    st->memo_ok = 0;
    st->nedits = st->applied = 0;
  }
  f_st_ea_forget(st, in->a);    /* the attribute's id */
  if (!st->nedits && st->memo_ok && !st->memo_hashed) {
    st->memo_hash = st_memo_hash(st, st->top);
    st->memo_hashed = 1;
  }
  st->edits[st->nedits++] = in;
}

void
f_st_edits_run(struct f_state *st)
{
  while (st->applied < st->nedits) {
    const struct f_edit *ed = st->edits[st->applied++]->p.p;
    const struct f_attr *a = ed->attr;
    if (ed->op == F_EDIT_SET) {
      st_ea_store(st, a, &ed->k);
      continue;
    }
    const void *data = NULL;
    const struct eattr *e = st_ea_find(st, a->id, &data);
    /* A list attribute is always stored as its list type; anything else
     * (none of our writers makes it) counts as an empty list. */
    struct adata cur = { 0 };
    if (e && e->type == a->eaf) {
      cur.length = e->len;
      cur.data = (u8 *) data;
    }
    struct f_val v = { .type = a->type, .val.ad = list_edit(st->lp, ed->op, a->type, &cur, &ed->k) };
    st_ea_store(st, a, &v);
  }
}

struct ea_list *
f_st_result(struct f_state *st)
{
  const struct filter *top = st->top;
  if (!st->memo_ok || !st->nedits) {
    f_st_edits_run(st);
    return st->eb ? ea_intern(st->eb) : NULL;
  }
  struct f_memo_bytes kb = { .scope = top->memo_scope, .set_preference = st->r->set_preference, .n = st->nedits };
  for (uint i = 0; i < st->nedits; i++)
    kb.edits[i] = ((const struct f_edit *) st->edits[i]->p.p)->id;
  struct ea_memo_key k = {
    .src = st->r->attrs,
    .hash = st->memo_hash,
    .len = (offsetof(struct f_memo_bytes, edits) + st->nedits * sizeof(kb.edits[0]) + 7) & ~7u,
    .bytes = &kb,
  };
  struct ea_list *out;
  if (ea_memo_take(EA_MEMO_FILTER, &k, &out))
    return out;
  f_st_edits_run(st);
  out = st->eb ? ea_intern(st->eb) : NULL;
  ea_memo_put(EA_MEMO_FILTER, &k, out ? ea_ref(out) : NULL);
  return out;
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

int
f_st_sa_get(struct f_state *st, uint sa, struct f_val *v)
{
  const void *data = NULL;
  const struct eattr *e;
  switch (sa) {
  case SA_NET: *v = (struct f_val){ .type = T_NET, .val.net = st->r->net }; return 0;
  case SA_FROM:
    *v = (struct f_val){ .type = T_IP };
    e = f_st_ea_find(st, EA_GEN_FROM, &data);
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
    e = f_st_ea_find(st, EA_GEN_WEIGHT, &data);
    SET_INT(*v, T_INT, e ? e->val : 0);
    return 0;
  case SA_ONLINK:
    e = f_st_ea_find(st, EA_GEN_ONLINK, &data);
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

const char *
f_st_sa_set(struct f_state *st, uint sa, const struct f_val *v)
{
  st->memo_ok = 0;
  if (sa == SA_PREFERENCE && ST_FIELD(st, preference) == v->val.i)
    return NULL;
  f_st_cow(st);
  /* from, weight and onlink are stored as attributes */
  f_st_ea_forget(st, EA_GEN_FROM);
  f_st_ea_forget(st, EA_GEN_WEIGHT);
  f_st_ea_forget(st, EA_GEN_ONLINK);
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
