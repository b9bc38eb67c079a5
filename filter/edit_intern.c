/*
 * DOC: One EA_EDIT per distinct edit in a config.
 *
 * A memoized run names the edits it ran by their ids (filter/interp_attr.c),
 * so two filters that make the same edit with the same constant can share
 * memo entries only if that edit has one id. In a route server every
 * client's export filter scrubs the server's own communities alike, and an
 * update group runs all those filters on each route in turn (one per
 * export class): with an id per filter, each class filled a memo entry of
 * its own for the same list and the same result, a cache miss per class
 * and route. Here edits equal in attribute, operation and constant
 * (val_same()) get one struct f_edit and one id within a parse; memo keys
 * carry the parse's scope, so ids of different configs never meet.
 *
 * Owner: the parsing thread (the table hangs on its cf_context).
 */
#include "filter/f_inst.h"
#include "lib/hash.h"

struct f_edit_tab {
  const struct f_edit **slot;   /* open addressing, NULL: free */
  u32 mask, used;
};

/* What val_same() can tell apart cheaply; values it compares in depth
 * (sets, tries, masks) hash by their type and meet in val_same(). */
static u32
edit_hash(const struct f_attr *a, uint op, const struct f_val *k)
{
  u32 h = hash_mix(hash_mix(a->id, a->type), hash_mix(op, k->type));
  switch (k->type) {
  case T_INT: case T_BOOL: case T_PAIR: case T_QUAD:
    return hash_mix(h, k->val.i);
  case T_EC: case T_RD:
    return hash_mix(hash_mix(h, (u32) k->val.ec), (u32) (k->val.ec >> 32));
  case T_LC:
    return hash_mix(hash_mix(hash_mix(h, k->val.lc.asn), k->val.lc.ldp1), k->val.lc.ldp2);
  case T_PATH: case T_CLIST: case T_ECLIST: case T_LCLIST: case T_BYTESTRING:
    return hash_mix(h, hash_bytes(k->val.ad->data, k->val.ad->length));
  case T_SET:
    return hash_mix(h, k->val.set->count);
  }
  return h;
}

static int
edit_same(const struct f_edit *e, const struct f_attr *a, uint op, const struct f_val *k)
{
  return e->attr->id == a->id && e->attr->type == a->type && e->op == op && e->k.type == k->type &&
         val_same(&e->k, k);
}

static void
tab_grow(struct cf_context *cx, struct f_edit_tab *t)
{
  u32 size = t->mask ? 2 * (t->mask + 1) : 64;
  const struct f_edit **old = t->slot;
  u32 old_size = t->mask ? t->mask + 1 : 0;
  /* config memory: the old array stays until the config goes (a few kB) */
  t->slot = cf_alloc(cx, size * sizeof(*t->slot));
  t->mask = size - 1;
  for (u32 i = 0; i < old_size; i++)
    if (old[i]) {
      u32 j = edit_hash(old[i]->attr, old[i]->op, &old[i]->k) & t->mask;
      while (t->slot[j])
        j = (j + 1) & t->mask;
      t->slot[j] = old[i];
    }
}

const struct f_edit *
f_edit_intern(struct cf_context *cx, const struct f_attr *a, uint op, const struct f_val *k)
{
  struct f_parse *fp = f_parse_state(cx);
  if (!fp->edits)
    fp->edits = cf_alloc(cx, sizeof(struct f_edit_tab));
  struct f_edit_tab *t = fp->edits;
  if (2 * (t->used + 1) > (t->mask ? t->mask + 1 : 0))
    tab_grow(cx, t);
  u32 j = edit_hash(a, op, k) & t->mask;
  for (; t->slot[j]; j = (j + 1) & t->mask)
    if (edit_same(t->slot[j], a, op, k))
      return t->slot[j];
  if (fp->edit_next == 0xffff)
    return NULL;                /* the ids are spent: a plain set instead */
  struct f_edit *ed = cf_alloc(cx, sizeof(*ed));
  ed->attr = a;
  ed->op = op;
  ed->id = fp->edit_next++;
  ed->k = *k;
  t->slot[j] = ed;
  t->used++;
  return ed;
}

u64
f_edit_scope(struct cf_context *cx)
{
  static u64 scopes;
  struct f_parse *fp = f_parse_state(cx);
  if (!fp->memo_scope)
    fp->memo_scope = __atomic_add_fetch(&scopes, 1, __ATOMIC_RELAXED);
  return fp->memo_scope;
}
