/*
 * DOC: From the typed tree to flat bytecode.
 *
 * Code generation is a post-order walk: operands first, then the
 * operation, so the interpreter only ever pops its operands. Control flow
 * (if, &&, ||, case, for) becomes jumps whose targets are patched once the
 * target is emitted. The walk also tracks the value stack depth, so each
 * function records how much stack it can need and the interpreter checks
 * room once per call instead of once per push.
 *
 * Two filters are "the same" when their instruction arrays match operand
 * by operand, comparing constants, sets and callees by value: this decides
 * whether `configure` must reload a channel, and backs bt_test_same.
 */
#include <string.h>
#include <stdlib.h>
#include "filter/f_inst.h"
#include "lib/printf.h"
#include "nest/rt.h"

const char *const f_op_names[FI__MAX] = {
#define F_INSN(name, bname, pops, pushes) [FI_##name] = bname,
#include "filter/insns.def"
#undef F_INSN
};

struct cbuf {
  struct cf_context *cx;
  struct f_insn *code;
  u32 *lines;
  const struct filter **origin;
  const struct filter *inlining;   /* the function being inlined, or NULL */
  int inlined;                     /* anything was */
  uint len, size;
  int depth, max_depth;
};

static uint
emit(struct cbuf *c, uint op, uint b, u32 a, const void *p, u32 line, int stack)
{
  if (c->len == c->size) {
    uint size = c->size ? c->size * 2 : 64;
    struct f_insn *code = malloc(size * sizeof(struct f_insn));
    u32 *lines = malloc(size * sizeof(u32));
    const struct filter **origin = malloc(size * sizeof(struct filter *));
    if (!code || !lines || !origin)
      die("Out of memory");
    if (c->len) {
      memcpy(code, c->code, c->len * sizeof(struct f_insn));
      memcpy(lines, c->lines, c->len * sizeof(u32));
      memcpy(origin, c->origin, c->len * sizeof(struct filter *));
    }
    free(c->code);
    free(c->lines);
    free(c->origin);
    c->code = code;
    c->lines = lines;
    c->origin = origin;
    c->size = size;
  }
  struct f_insn *i = &c->code[c->len];
  i->op = op;
  i->b = b;
  i->a = a;
  i->p.p = p;
  c->lines[c->len] = line;
  c->origin[c->len] = c->inlining;
  c->depth += stack;
  if (c->depth > c->max_depth)
    c->max_depth = c->depth;
  return c->len++;
}

static void gen(struct cbuf *c, const struct f_expr *e);

/*
 * Conditions compile to jumps. gen_cond() emits code that jumps when the
 * condition is `when` and falls through otherwise; the jumps wait for
 * their target in a list chained through their a operands (backpatching).
 * `!`, `&&` and `||` never build a bool, and a comparison or `~` with a
 * constant side is one fused instruction (JCMP, JMATCH) instead of push
 * constant, operate, test. Run-time type errors keep their wording: errop
 * names the op whose operand a non-bool value would have been.
 */
#define JLIST_END ((u32) -1)

static void
jlist_patch(struct cbuf *c, u32 list, u32 target)
{
  while (list != JLIST_END) {
    u32 next = c->code[list].a;
    c->code[list].a = target;
    list = next;
  }
}

static u32
jlist_merge(struct cbuf *c, u32 a, u32 b)
{
  if (a == JLIST_END)
    return b;
  u32 last = a;
  while (c->code[last].a != JLIST_END)
    last = c->code[last].a;
  c->code[last].a = b;
  return a;
}

static const struct f_val *
const_copy(struct cbuf *c, const struct f_val *v)
{
  struct f_val *x = cf_alloc(c->cx, sizeof(struct f_val));
  *x = *v;
  return x;
}

/* JCMP on u32-valued equal types: which relations of value to constant
 * jump. (Types of the other kinds take the generic path.) */
static uint
jcmp_rel_flags(uint op, int swap, int when)
{
  /* truth of `value OP constant` for value below, equal, above */
  uint lt = 0, eq = 0, gt = 0;
  switch (op) {
  case FI_EQ: eq = 1; break;
  case FI_NEQ: lt = gt = 1; break;
  case FI_LT: lt = 1; break;     /* value < constant; swapped: constant < value */
  case FI_LE: lt = eq = 1; break;
  }
  if (swap) {
    uint t = lt;
    lt = gt;
    gt = t;
  }
  if (!when) {
    lt = !lt;
    eq = !eq;
    gt = !gt;
  }
  return (lt ? FJ_BELOW : 0) | (eq ? FJ_EQUAL : 0) | (gt ? FJ_ABOVE : 0);
}

/*
 * Small functions are inlined: a call of a function without arguments or
 * locals whose body is `return E;` compiles E in its place (as a value,
 * or as jumps in a condition), saving the call and the return, and
 * letting `if !is_bogon() then` fuse like any other test. The origin of
 * each instruction keeps run-time errors naming the function they happen
 * in. A function being defined is not compiled yet, so recursion is
 * never inlined.
 */
#define F_INLINE_MAX 48      /* instructions of the function (its own inlining included) */

static const struct f_expr *
inline_body(const struct f_expr *call)
{
  const struct filter *fn = call->ptr;
  /* (The size bound keeps nested one-liners, each calling the previous
   * twice, from growing the code exponentially.) */
  return fn && fn->compiled && !call->a && fn->len <= F_INLINE_MAX ? fn->inline_ret : NULL;
}

static const struct filter *
inline_enter(struct cbuf *c, const struct f_expr *call)
{
  const struct filter *saved = c->inlining;
  c->inlining = call->ptr;
  c->inlined = 1;
  return saved;
}

/*
 * Values read straight from the route: the net, an attribute, and the
 * methods read together with them (`net.len`, `net.type`, `.len` of a
 * list attribute, `.first`/`.last`/`.last_nonaggregated` of a path). Such
 * an operand compiles into the instruction that uses it: NET_METHOD or
 * EA_METHOD for a value, JCMP_RT or JMATCH_RT for a test.
 */
static int
route_operand(const struct f_expr *x, const struct f_attr **attr, uint *method)
{
  *attr = NULL;
  *method = 0;
  if (x->op == FI_SA_GET && x->bx == SA_NET)
    return 1;
  if (x->op == FI_ROA_CHECK && x->a->op == FI_SA_GET && x->a->bx == SA_NET &&
      route_operand(x->b, attr, method) && *attr && *method == FI_LAST) {
    /* roa_check(T, net, bgp_path.last) (only in tests: the table goes
     * with the test's constant) */
    *method = FI_ROA_CHECK;
    return 1;
  }
  if (x->op == FI_EA_GET) {
    *attr = x->ptr;
    return 1;
  }
  if (x->b || !x->a)
    return 0;
  const struct f_expr *o = x->a;
  if (o->op == FI_SA_GET && o->bx == SA_NET && (x->op == FI_LEN || x->op == FI_TYPE)) {
    *method = x->op;
    return 1;
  }
  if (o->op != FI_EA_GET)
    return 0;
  const struct f_attr *a = o->ptr;
  if ((x->op == FI_LEN && (a->type == T_PATH || a->type == T_CLIST || a->type == T_ECLIST || a->type == T_LCLIST)) ||
      ((x->op == FI_FIRST || x->op == FI_LAST || x->op == FI_LAST_NONAGG) && a->type == T_PATH)) {
    *attr = a;
    *method = x->op;
    return 1;
  }
  return 0;
}

/* `attr = attr.add|delete|filter(CONSTANT)` (what `bgp_community.delete(X);`
 * compiles to) or `attr = CONSTANT` as one EA_EDIT, when the constant fits
 * the attribute; NULL: not that shape, or the run-time checks have
 * something to say. */
static const struct f_edit *
edit_of(struct cbuf *c, const struct f_expr *e)
{
  const struct f_attr *a = e->ptr;
  const struct f_expr *x = e->a;
  if (!x)
    return NULL;
  struct f_val k;
  uint op;
  if (x->op == FI_CONST && x->val.type == a->type) {
    k = x->val;
    op = F_EDIT_SET;
  } else {
    if ((x->op != FI_ADD_ITEM && x->op != FI_DELETE && x->op != FI_FILTER) || !x->a || !x->b)
      return NULL;
    if (x->a->op != FI_EA_GET || ((const struct f_attr *) x->a->ptr)->id != a->id || x->b->op != FI_CONST)
      return NULL;
    k = x->b->val;
    op = f_list_edit_op(x->op);
    if (list_edit_check(op, a->type, &k) != LE_OK)
      return NULL;
  }
  return f_edit_intern(c->cx, a, op, &k);
}

/* `~` of a route operand: JMATCH_NET, JMATCH_PATH or JMATCH_CLIST where
 * the types are known here and fit, else JMATCH_RT. */
static uint
route_match_op(const struct f_jtest *t, int swap)
{
  uint kt = t->k.type;
  if (t->method)
    return FI_JMATCH_RT;
  if (!t->attr)
    return kt == T_PREFIX_SET && !swap ? FI_JMATCH_NET : FI_JMATCH_RT;
  uint at = t->attr->type;
  if (at == T_PATH && !swap &&
      (kt == T_PATH_MASK || (kt == T_SET && t->k.val.set->type == T_INT)))
    return FI_JMATCH_PATH;
  if (swap && ((at == T_CLIST && (kt == T_PAIR || kt == T_QUAD)) || (at == T_ECLIST && kt == T_EC) ||
               (at == T_LCLIST && kt == T_LC)))
    return FI_JMATCH_CLIST;
  return FI_JMATCH_RT;
}

/* The instruction of a route test: one of the typed forms (JCMP_NET,
 * JCMP_PATH, route_match_op()'s) where the operand's type is known here
 * and the constant is of a type that fits, else JCMP_RT or JMATCH_RT,
 * which check the types at run time. */
static uint
route_test_op(const struct f_jtest *t, int cmp, int swap)
{
  uint kt = t->k.type;
  if (!cmp)
    return route_match_op(t, swap);
  if (!f_type_is_u32(kt))
    return FI_JCMP_RT;
  if (!t->attr)
    return (t->method == FI_LEN && kt == T_INT) || (t->method == FI_TYPE && kt == T_ENUM_NETTYPE) ?
      FI_JCMP_NET : FI_JCMP_RT;
  if (t->attr->type != T_PATH)
    return FI_JCMP_RT;
  switch (t->method) {
  case FI_LEN: case FI_FIRST: case FI_LAST: case FI_LAST_NONAGG:
    return kt == T_INT ? FI_JCMP_PATH : FI_JCMP_RT;
  case FI_ROA_CHECK:
    return kt == T_ENUM_ROA ? FI_JCMP_PATH : FI_JCMP_RT;
  }
  return FI_JCMP_RT;
}

static u32
gen_cond(struct cbuf *c, const struct f_expr *e, int when, uint errop)
{
  u32 l1, l2;
  switch (e->op) {
  case FI_CALL: {
    const struct f_expr *body = inline_body(e);
    if (!body)
      break;
    const struct filter *saved = inline_enter(c, e);
    l1 = gen_cond(c, body, when, errop);
    c->inlining = saved;
    return l1;
  }
  case FI_NOT:
    return gen_cond(c, e->a, !when, FI_NOT);
  case FI_AND: case FI_OR:
    /* Jump for the left side when it alone decides: && false, || true. */
    if ((e->op == FI_AND) != when) {
      l1 = gen_cond(c, e->a, when, e->op == FI_AND ? FI_JZ : FI_JNZ);
      l2 = gen_cond(c, e->b, when, errop);
      return jlist_merge(c, l1, l2);
    }
    l1 = gen_cond(c, e->a, !when, e->op == FI_AND ? FI_JZ : FI_JNZ);
    l2 = gen_cond(c, e->b, when, errop);
    jlist_patch(c, l1, c->len);
    return l2;
  case FI_CONST:
    if (e->type == T_BOOL && e->val.type == T_BOOL) {
      if (!!e->val.val.i != when)
        return JLIST_END;
      return emit(c, FI_JMP, 0, JLIST_END, NULL, e->line, 0);
    }
    break;
  case FI_EQ: case FI_NEQ: case FI_LT: case FI_LE:
  case FI_MATCH: case FI_NMATCH: {
    int swap = e->a->op == FI_CONST;
    if (!swap && e->b->op != FI_CONST)
      break;
    const struct f_expr *k = swap ? e->a : e->b, *x = swap ? e->b : e->a;
    uint b = e->op | (swap ? FJ_SWAP : 0) | (when ? FJ_WHEN : 0);
    int cmp = e->op != FI_MATCH && e->op != FI_NMATCH;
    if (cmp)
      b |= jcmp_rel_flags(e->op, swap, when);
    const struct f_attr *attr;
    uint method;
    if (route_operand(x, &attr, &method)) {
      struct f_jtest *t = cf_alloc(c->cx, sizeof(struct f_jtest));
      t->k = k->val;
      t->attr = attr;
      t->method = method;
      t->table = method == FI_ROA_CHECK ? x->ptr : NULL;
      return emit(c, route_test_op(t, cmp, swap), b, JLIST_END, t, e->line, 0);
    }
    gen(c, x);
    return emit(c, cmp ? FI_JCMP : FI_JMATCH, b, JLIST_END, const_copy(c, &k->val), e->line, -1);
  }
  }
  gen(c, e);
  return emit(c, when ? FI_JNZ : FI_JZ, errop == FI_JZ || errop == FI_JNZ ? 0 : errop, JLIST_END, NULL, e->line, -1);
}

static void
gen_list(struct cbuf *c, const struct f_expr *e)
{
  for (; e; e = e->next) {
    gen(c, e);
    /* A function call used as a statement leaves its result. */
    if (e->op == FI_CALL)
      emit(c, FI_POP, 0, 0, NULL, e->line, -1);
  }
}

static uint
count_list(const struct f_expr *e)
{
  uint n = 0;
  for (; e; e = e->next)
    n++;
  return n;
}

static void
gen_args(struct cbuf *c, const struct f_expr *e)
{
  for (; e; e = e->next)
    gen(c, e);
}

static void
gen_case(struct cbuf *c, const struct f_expr *e)
{
  const struct f_arm *arms = e->ptr;
  uint n = 0, all = 0;
  for (const struct f_arm *a = arms; a; a = a->next, all++)
    if (!a->is_else)
      n++;
  struct f_switch *sw = cf_alloc(c->cx, sizeof(struct f_switch));
  sw->n = n;
  sw->e = cf_alloc(c->cx, (n + 1) * sizeof(struct f_switch_entry));
  gen(c, e->a);
  emit(c, FI_SWITCH, 0, 0, sw, e->line, -1);

  /* Bodies; items sharing a label list share one body. */
  /* At most one body per arm (a pair wildcard label makes many arms). */
  u32 *ends = cf_alloc(c->cx, (all + 1) * sizeof(u32)), nends = 0, k = 0;
  const struct f_expr **done = cf_alloc(c->cx, (all + 1) * sizeof(*done));
  u32 *done_at = cf_alloc(c->cx, (all + 1) * sizeof(u32));
  uint ndone = 0;
  int have_else = 0;
  for (const struct f_arm *a = arms; a; a = a->next) {
    u32 target = (u32) -1;
    for (uint i = 0; i < ndone; i++)
      if (done[i] == a->body)
        target = done_at[i];
    if (target == (u32) -1) {
      target = c->len;
      gen_list(c, a->body);
      ends[nends++] = emit(c, FI_JMP, 0, 0, NULL, e->line, 0);
      done[ndone] = a->body;
      done_at[ndone++] = target;
    }
    if (a->is_else) {
      sw->deflt = target;
      have_else = 1;
    } else {
      sw->e[k].from = a->from;
      sw->e[k].to = a->to;
      sw->e[k].target = target;
      k++;
    }
  }
  if (!have_else)
    sw->deflt = c->len;
  for (uint i = 0; i < nends; i++)
    c->code[ends[i]].a = c->len;
}

/* A method read with its operand from the route (route_operand()). */
static int
gen_fused_method(struct cbuf *c, const struct f_expr *e)
{
  const struct f_attr *attr;
  uint method;
  if (!route_operand(e, &attr, &method) || !method || method == FI_ROA_CHECK)
    return 0;
  if (attr)
    emit(c, FI_EA_METHOD, method, attr->id, attr, e->line, 1);
  else
    emit(c, FI_NET_METHOD, method, 0, NULL, e->line, 1);
  return 1;
}

static void
gen(struct cbuf *c, const struct f_expr *e)
{
  uint j2, top;
  switch (e->op) {
  case FI_LEN: case FI_TYPE: case FI_FIRST: case FI_LAST: case FI_LAST_NONAGG:
    if (gen_fused_method(c, e))
      return;
    break;
  }
  switch (e->op) {
  case FI_CONST: {
    struct f_val *v = cf_alloc(c->cx, sizeof(struct f_val));
    *v = e->val;
    emit(c, FI_CONST, 0, 0, v, e->line, 1);
    return;
  }
  case FI_VAR_GET:
    emit(c, FI_VAR_GET, 0, e->ax, NULL, e->line, 1);
    return;
  case FI_VAR_SET:
    gen(c, e->a);
    emit(c, FI_VAR_SET, 0, e->ax, NULL, e->line, -1);
    return;
  case FI_VAR_INIT:
    emit(c, FI_VAR_INIT, e->bx, e->ax, NULL, e->line, 0);
    return;
  case FI_NOP:
    return;
  case FI_BLOCK:
    gen_list(c, e->a);
    return;
  case FI_AND: case FI_OR: {
    /* The left side decides (false for &&, true for ||), or the right
     * side's value is the result. */
    u32 l = gen_cond(c, e->a, e->op == FI_OR, e->op == FI_AND ? FI_JZ : FI_JNZ);
    gen(c, e->b);
    j2 = emit(c, FI_JMP, 0, 0, NULL, e->line, -1);
    jlist_patch(c, l, c->len);
    {
      struct f_val *v = cf_alloc(c->cx, sizeof(struct f_val));
      *v = f_bool(e->op == FI_OR);
      emit(c, FI_CONST, 0, 0, v, e->line, 1);
    }
    c->code[j2].a = c->len;
    return;
  }
  case FI_IF: {
    u32 l = gen_cond(c, e->a, 0, FI_JZ);
    gen_list(c, e->b);
    if (e->c) {
      j2 = emit(c, FI_JMP, 0, 0, NULL, e->line, 0);
      jlist_patch(c, l, c->len);
      gen_list(c, e->c);
      c->code[j2].a = c->len;
    } else
      jlist_patch(c, l, c->len);
    return;
  }
  case FI_CASE:
    gen_case(c, e);
    return;
  case FI_FOR:
    gen(c, e->a);
    emit(c, FI_VAR_SET, 0, e->ax, NULL, e->line, -1);
    {
      struct f_val *zero = cf_alloc(c->cx, sizeof(struct f_val));
      *zero = f_int(T_INT, 0);
      emit(c, FI_CONST, 0, 0, zero, e->line, 1);
      emit(c, FI_VAR_SET, 0, e->ax + 1, NULL, e->line, -1);
    }
    top = emit(c, FI_FOR_NEXT, e->bx, e->ax, NULL, e->line, 0);
    gen_list(c, e->b);
    emit(c, FI_JMP, 0, top, NULL, e->line, 0);
    c->code[top].p.u = c->len;
    return;
  case FI_CALL: {
    const struct f_expr *body = inline_body(e);
    if (body) {
      const struct filter *saved = inline_enter(c, e);
      gen(c, body);
      c->inlining = saved;
      return;
    }
    gen_args(c, e->a);
    emit(c, FI_CALL, 0, e->ax, e->ptr, e->line, 1 - (int) e->ax);
    return;
  }
  case FI_RETURN:
    if (e->a)
      gen(c, e->a);
    else {
      struct f_val *v = cf_alloc(c->cx, sizeof(struct f_val));
      *v = F_VAL_VOID;
      emit(c, FI_CONST, 0, 0, v, e->line, 1);
    }
    emit(c, FI_RETURN, 0, 0, NULL, e->line, -1);
    return;
  case FI_ACCEPT: case FI_REJECT: case FI_ERROR: case FI_PRINT: {
    uint n = count_list(e->a);
    gen_args(c, e->a);
    emit(c, e->op, e->bx, n, NULL, e->line, -(int) n);
    return;
  }
  case FI_ASSERT:
    gen(c, e->a);
    emit(c, FI_ASSERT, 0, 0, e->ptr, e->line, -1);
    return;
  case FI_PATHMASK:
    gen_args(c, e->a);
    emit(c, FI_PATHMASK, 0, e->ax, e->ptr, e->line, 1 - (int) e->ax);
    return;
  case FI_SA_GET:
    emit(c, e->bx == SA_NET ? FI_SA_NET : FI_SA_GET, e->bx, 0, NULL, e->line, 1);
    return;
  case FI_SA_SET:
    gen(c, e->a);
    emit(c, FI_SA_SET, e->bx, 0, NULL, e->line, -1);
    return;
  case FI_EA_GET: case FI_EA_UNSET: case FI_EA_DEFINED: {
    const struct f_attr *a = e->ptr;
    emit(c, e->op, 0, a->id, a, e->line, e->op == FI_EA_UNSET ? 0 : 1);
    return;
  }
  case FI_EA_SET: {
    const struct f_attr *a = e->ptr;
    const struct f_edit *ed = edit_of(c, e);
    if (ed) {
      emit(c, FI_EA_EDIT, 0, a->id, ed, e->line, 0);
      return;
    }
    gen(c, e->a);
    emit(c, FI_EA_SET, 0, a->id, a, e->line, -1);
    return;
  }
  case FI_EC:
    gen(c, e->a);
    gen(c, e->b);
    emit(c, FI_EC, 0, e->ax, NULL, e->line, -1);
    return;
  case FI_ROA_CHECK_ROUTE:
    emit(c, e->op, 0, 0, e->ptr, e->line, 1);
    return;
  case FI_ROA_CHECK: case FI_ASPA_CHECK:
    gen(c, e->a);
    gen(c, e->b);
    emit(c, e->op, 0, 0, e->ptr, e->line, -1);
    return;
  default: {
    /* Plain operators: operands in order, then the operation. */
    int n = 0;
    if (e->a) { gen(c, e->a); n++; }
    if (e->b) { gen(c, e->b); n++; }
    if (e->c) { gen(c, e->c); n++; }
    emit(c, e->op, e->bx, e->ax, e->ptr, e->line, 1 - n);
    return;
  }
  }
}

struct filter *
f_compile(struct cf_context *cx, struct filter *f, struct f_expr *body)
{
  struct cbuf c = { .cx = cx };
  gen_list(&c, body);
  if (f->kind == FK_FUNCTION) {
    /* Falling off the end returns void. */
    struct f_val *v = cf_alloc(cx, sizeof(struct f_val));
    *v = F_VAL_VOID;
    emit(&c, FI_CONST, 0, 0, v, 0, 1);
    emit(&c, FI_RETURN, 0, 0, NULL, 0, -1);
  }
  /* Every array ends in END, so the interpreter never checks bounds. */
  emit(&c, FI_END, 0, 0, NULL, 0, 0);
  struct f_parse *fp = f_parse_state(cx);
  f->len = c.len;
  f->code = cf_alloc(cx, (c.len + 1) * sizeof(struct f_insn));
  f->lines = cf_alloc(cx, (c.len + 1) * sizeof(u32));
  f->origin = NULL;
  if (c.len) {
    memcpy((void *) f->code, c.code, c.len * sizeof(struct f_insn));
    memcpy((void *) f->lines, c.lines, c.len * sizeof(u32));
  }
  if (c.inlined) {
    const struct filter **origin = cf_alloc(cx, c.len * sizeof(struct filter *));
    memcpy(origin, c.origin, c.len * sizeof(struct filter *));
    f->origin = origin;
  }
  free(c.code);
  free(c.lines);
  free(c.origin);
  f->nslots = MAX(fp->nslots, f->argc);
  f->inline_ret = NULL;
  if (f->kind == FK_FUNCTION && !f->argc && !f->nslots && body && !body->next && body->op == FI_RETURN && body->a)
    f->inline_ret = body->a;
  f->stack_need = f->nslots + c.max_depth + 4;
  f->memo_scope = f_edit_scope(cx);
  f->memo_seed = f->memo_scope;
  f->edits = 0;
  for (uint i = 0; i < f->len; i++) {
    const struct f_insn *in = &f->code[i];
    if (in->op == FI_EA_EDIT) {
      f->edits = 1;
      f->memo_seed = f->memo_seed * 0x9e3779b97f4a7c15ULL + ((const struct f_edit *) in->p.p)->id + 1;
    } else if (in->op == FI_CALL && ((const struct filter *) in->p.p)->edits) {
      f->edits = 1;
      f->memo_seed = f->memo_seed * 0x9e3779b97f4a7c15ULL + ((const struct filter *) in->p.p)->memo_seed;
    }
  }
  static u64 uids;
  f->uid = __atomic_add_fetch(&uids, 1, __ATOMIC_RELAXED);
  f_mark_pure(f);
  f->compiled = 1;
  return f;
}

/* --- Constant evaluation --- */

int
f_eval_const(struct cf_context *cx, struct f_expr *e, struct f_val *out)
{
  struct filter f = { .kind = FK_FUNCTION, .name = "(constant)" };
  struct f_expr r = { .op = FI_RETURN, .type = T_VOID, .a = e, .line = e->line };
  struct f_parse *fp = f_parse_state(cx);
  u16 saved = fp->nslots;
  fp->nslots = 0;
  f_compile(cx, &f, &r);
  fp->nslots = saved;
  /* A variable of the function around (a set item's "format(x)") has no
   * slot here: reading it would read whatever the C stack held. */
  for (uint i = 0; i < f.len; i++)
    if ((f.code[i].op == FI_VAR_GET || f.code[i].op == FI_VAR_SET) && f.code[i].a >= f.nslots) {
      cf_error_at(cx, "Constant expression expected, not a variable");
      return -1;
    }
  char err[160] = "";
  struct f_exec_opts o = { .silent = 1, .errbuf = err, .errsize = sizeof(err) };
  enum f_result res = f_exec(&f, NULL, cx->mem, out, &o);
  if (res != F_RETURN) {
    cf_error_at(cx, "%s", err[0] ? err : "Runtime error while evaluating expression");
    return -1;
  }
  return 0;
}

int
f_eval_int(struct cf_context *cx, struct f_expr *e, u32 *out)
{
  struct f_val v;
  if (f_eval_const(cx, e, &v) < 0)
    return -1;
  if (v.type != T_INT) {
    cf_error_at(cx, "Integer expression expected");
    return -1;
  }
  *out = v.val.i;
  return 0;
}

int
f_define_constant(struct cf_context *cx, struct symbol *s, struct f_expr *e)
{
  struct f_val v;
  if (f_eval_const(cx, e, &v) < 0)
    return -1;
  struct cf_val *cv = cf_alloc(cx, sizeof(struct cf_val));
  struct f_val *fv = cf_alloc(cx, sizeof(struct f_val));
  *fv = v;
  cv->fv = fv;
  switch (v.type) {
  case T_INT: cv->type = CFV_INT; cv->i = v.val.i; break;
  case T_BOOL: cv->type = CFV_BOOL; cv->i = v.val.i; break;
  case T_PAIR: cv->type = CFV_PAIR; cv->i = v.val.i; break;
  case T_QUAD: cv->type = CFV_QUAD; cv->i = v.val.i; break;
  case T_IP: cv->type = CFV_IP; cv->ip = v.val.ip; break;
  case T_NET: cv->type = CFV_NET; net_copy(&cv->net, v.val.net); break;
  case T_STRING: cv->type = CFV_STRING; cv->s = v.val.s; break;
  default: cv->type = CFV_FILTER; break;
  }
  return cf_define_symbol(cx, s, SYM_CONSTANT, cv);
}

/* --- Code equality --- */

static int code_same(const struct filter *a, const struct filter *b, int depth);

static int
insn_same(const struct f_insn *a, const struct f_insn *b, int depth)
{
  if (a->op != b->op || a->b != b->b || a->a != b->a)
    return 0;
  switch (a->op) {
  case FI_CONST: case FI_JCMP: case FI_JMATCH:
    return a->p.v->type == b->p.v->type && val_same(a->p.v, b->p.v);
  case FI_JCMP_RT: case FI_JMATCH_RT: case FI_JCMP_NET: case FI_JMATCH_NET: case FI_JCMP_PATH:
  case FI_JMATCH_PATH: case FI_JMATCH_CLIST: {
    const struct f_jtest *x = a->p.p, *y = b->p.p;
    if (x->method != y->method || !x->attr != !y->attr)
      return 0;
    if (x->attr && (x->attr->id != y->attr->id || x->attr->type != y->attr->type))
      return 0;
    if (x->method == FI_ROA_CHECK &&
        strcmp(((const struct rtable_config *) x->table)->name, ((const struct rtable_config *) y->table)->name))
      return 0;
    return x->k.type == y->k.type && val_same(&x->k, &y->k);
  }
  case FI_CALL:
    return code_same(a->p.p, b->p.p, depth + 1);
  case FI_SWITCH: {
    const struct f_switch *x = a->p.p, *y = b->p.p;
    if (x->n != y->n || x->deflt != y->deflt)
      return 0;
    for (uint i = 0; i < x->n; i++)
      if (x->e[i].target != y->e[i].target || !val_same(&x->e[i].from, &y->e[i].from) ||
          !val_same(&x->e[i].to, &y->e[i].to))
        return 0;
    return 1;
  }
  case FI_PATHMASK:
    return path_mask_same(a->p.p, b->p.p);
  case FI_EA_GET: case FI_EA_SET: case FI_EA_UNSET: case FI_EA_DEFINED: case FI_EA_METHOD: {
    const struct f_attr *x = a->p.p, *y = b->p.p;
    return x->id == y->id && x->type == y->type;
  }
  case FI_EA_EDIT: {
    const struct f_edit *x = a->p.p, *y = b->p.p;
    return x->attr->id == y->attr->id && x->attr->type == y->attr->type && x->op == y->op &&
           x->k.type == y->k.type && val_same(&x->k, &y->k);
  }
  case FI_ROA_CHECK: case FI_ROA_CHECK_ROUTE: case FI_ASPA_CHECK: {
    const struct rtable_config *x = a->p.p, *y = b->p.p;
    return !strcmp(x->name, y->name);
  }
  case FI_ASSERT:
    return 1;
  case FI_FOR_NEXT:
    return a->p.u == b->p.u;
  default:
    return a->p.p == b->p.p;
  }
}

static int
code_same(const struct filter *a, const struct filter *b, int depth)
{
  if (a == b)
    return 1;
  if (!a || !b || a->kind != b->kind || a->len != b->len || a->argc != b->argc || a->nslots != b->nslots)
    return 0;
  if (a->argc && memcmp(a->arg_type, b->arg_type, a->argc))
    return 0;
  /* Recursion: assume the same below a depth (a difference shows above). */
  if (depth > 16)
    return 1;
  for (uint i = 0; i < a->len; i++)
    if (!insn_same(&a->code[i], &b->code[i], depth))
      return 0;
  return 1;
}

int
f_code_same(const struct filter *a, const struct filter *b)
{
  return code_same(a, b, 0);
}
