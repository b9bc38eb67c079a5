/*
 * DOC: Interpreter internals shared by its files (private to the interpreter).
 *
 * filter/interp.c runs the bytecode (the dispatch loop, frames, limits,
 * errors); filter/interp_attr.c reads and writes the route's attributes
 * for it; filter/interp_match.c is the `~` operator. What they share is
 * the per-run state (struct f_state) and, as static inline functions
 * here, the helpers the dispatch loop needs inlined: the attribute cache's
 * hit path and the fused tests' verdicts run several times per route, and
 * a call there costs as much as the work.
 */
#ifndef FILTER_F_INTERP_H
#define FILTER_F_INTERP_H

#include <string.h>
#include "filter/f_inst.h"
#include "nest/rt_attr.h"

/* Build results in place: a whole-struct copy of a fresh temporary stalls
 * on store forwarding in the hot path. */
#define SET_BOOL(v, b) do { struct f_val *v_ = &(v); u32 b_ = !!(b); v_->type = T_BOOL; v_->val.i = b_; } while (0)
#define SET_INT(v, t, x) do { struct f_val *v_ = &(v); u32 x_ = (x); v_->type = (t); v_->val.i = x_; } while (0)

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
  u16 id;                       /* a->id, for f_st_ea_forget() without a load */
  u8 found;                     /* 0: the attribute is not set (e unused) */
  const void *data;
  const void *obj;
};

/* Edits (EA_EDIT) a run remembers: they key its memo entry. */
#define F_EDITS 13

/* One run of f_exec(): on its C stack, owned by the calling thread. */
struct f_state {
  struct f_route *r;
  linpool *lp;
  const struct f_exec_opts *opts;
  struct ea_builder *eb;        /* non-NULL once an attribute was written */
  struct ea_builder *ebs;       /* storage for it (left uninitialised until then) */
  /* EA_EDITs run, in order: edits[0..applied) are in eb, the rest wait
   * until their attribute is read, written or unset, or the run ends
   * (f_st_edits_apply). memo_ok: nothing else
   * changed the attributes, so the result is a function of the input list
   * and these edits (f_st_result). */
  uint nedits, applied;
  int memo_ok;
  int memo_hashed;              /* memo_hash is set */
  u32 memo_hash;
  const struct filter *top;     /* the filter run (it names the memo entries) */
  const struct f_insn *edits[F_EDITS];
  struct buffer out;            /* print buffer */
  int out_used;
  uint ncached, nviews;
  struct f_ea_cached cached[F_EA_CACHE];
  struct adata views[F_EA_CACHE];
};

/* --- Route attributes (filter/interp_attr.c) --- */

/* Apply the waiting edits, all of them in order, when one of them is of
 * attribute id (before it is read, written or unset). The read cache never
 * holds an attribute with a waiting edit (f_st_edit() drops it), so its
 * hit path needs no check; edits of different attributes commute. */
void f_st_edits_run(struct f_state *st);
static inline void
f_st_edits_apply(struct f_state *st, u16 id)
{
  for (uint i = st->applied; i < st->nedits; i++)
    if (((const struct f_edit *) st->edits[i]->p.p)->attr->id == id) {
      f_st_edits_run(st);
      return;
    }
}

/* An EA_EDIT instruction: remembered, applied later. */
void f_st_edit(struct f_state *st, const struct f_insn *in);

/* A run of top on a route starts. */
void f_st_start(struct f_state *st, const struct filter *top);

/* The run's resulting list (reference for the caller), NULL: unchanged;
 * from the thread's memo when the same edits ran on the same list before. */
struct ea_list *f_st_result(struct f_state *st);

/* First write: copy the route's list into the builder. */
static inline void
f_st_cow(struct f_state *st)
{
  if (st->eb)
    return;
  struct ea_builder *b = st->ebs;
  ea_builder_from(b, st->r->attrs);
  st->eb = b;
}

/* Attribute id as it is now (the builder once written, else the route's
 * list), its payload in *data; NULL: not set. */
const struct eattr *f_st_ea_find(struct f_state *st, u16 id, const void **data);

/* An attribute's value as the filter type a says it is (e NULL: not set),
 * built in v; obj is the object made of the payload where the value
 * points to one (a view of a list, a copy of a net). Inline: the cache's
 * hit path below builds every cached read with it. */
static inline void
f_ea_val(const struct f_attr *a, const struct eattr *e, const void *data, const void *obj, struct f_val *v)
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

/* Not read yet in this run: look it up, remember it, build it in out. */
void f_st_ea_miss(struct f_state *st, const struct f_attr *a, struct f_val *out);

/* Read attribute a into out (through the run's cache). Forced inline:
 * a call would pass out through memory, and the test reading it right
 * after would wait for the stores. */
static inline __attribute__((always_inline)) void
f_st_ea_get(struct f_state *st, const struct f_attr *a, struct f_val *out)
{
  for (uint i = 0; i < st->ncached; i++)
    if (st->cached[i].a == a) {
      const struct f_ea_cached *c = &st->cached[i];
      f_ea_val(a, c->found ? &c->e : NULL, c->data, c->obj, out);
      return;
    }
  f_st_ea_miss(st, a, out);
}

/* Attribute id is about to change: drop what was read of it. */
static inline void
f_st_ea_forget(struct f_state *st, u16 id)
{
  for (uint i = 0; i < st->ncached; )
    if (st->cached[i].id == id)
      st->cached[i] = st->cached[--st->ncached];
    else
      i++;
}

/* Store v (of a's type) in attribute a; copy-on-write on the first change. */
void f_st_ea_set(struct f_state *st, const struct f_attr *a, const struct f_val *v);

/* Static attributes (enum f_sa): get returns -1 for an unknown one; set
 * returns an error text or NULL. */
int f_st_sa_get(struct f_state *st, uint sa, struct f_val *v);
const char *f_st_sa_set(struct f_state *st, uint sa, const struct f_val *v);

/* --- Matching (filter/interp_match.c) --- */

/* a ~ b: 1, 0, or -1 when `~` does not apply to the types */
int val_match(const struct f_val *a, const struct f_val *b);
/* Any ASN of path p in the set (`bgp_path ~ [...]`). */
int f_path_any_in_set(const struct adata *p, const struct f_set *set);

/* --- Fused tests (compile.c: gen_cond), inline in their handlers --- */

/* Does JCMP with flags b jump for u32 value x and constant k of the same
 * type? */
static inline int
jcmp_u32_jumps(uint b, u32 x, u32 k)
{
  return !!(b & (x < k ? FJ_BELOW : x == k ? FJ_EQUAL : FJ_ABOVE));
}

/* Does JMATCH with flags b jump when the match gave m (0 or 1)? */
static inline int
jmatch_result_jumps(uint b, int m)
{
  return (m == ((b & 0xff) == FI_MATCH)) == !!(b & FJ_WHEN);
}

/* Does JCMP with flags b jump for value x and constant k? -1: the types
 * do not compare (LT, LE). */
static inline int
jcmp_jumps(uint b, const struct f_val *x, const struct f_val *k)
{
  if (x->type == k->type && f_type_is_u32(x->type))
    return jcmp_u32_jumps(b, x->val.i, k->val.i);
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
  return jmatch_result_jumps(b, m);
}

/* The language's NET_* enum value of a net's type (`net.type`). */
static inline uint
f_net_type_enum(const net_addr *n)
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

#endif
