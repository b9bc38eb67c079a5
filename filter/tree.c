/*
 * DOC: Building the typed filter tree from grammar actions.
 *
 * Every node gets its result type when it is made, and its operands are
 * checked then, so type errors come out at the position being parsed
 * ("file:line:col Argument 1 of LT must be ..."), with BIRD's wording.
 * Pure nodes whose operands are all constants are evaluated on the spot
 * (constant folding): the grammar only ever sees the folded constant.
 *
 * Local variables live in scopes of the function being defined; a slot
 * number is given to each when it is declared. Names are looked up in the
 * scopes first, so locals shadow global symbols.
 */
#include <string.h>
#include "filter/f_inst.h"
#include "nest/ea_bgp.h"
#include "nest/rt.h"
#include "lib/printf.h"

#define ERR(...) do { cf_error_at(cx, __VA_ARGS__); return NULL; } while (0)

struct f_parse *
f_parse_state(struct cf_context *cx)
{
  if (!cx->filter)
    cx->filter = cf_alloc(cx, sizeof(struct f_parse));
  return cx->filter;
}

/* --- Types --- */

static int
type_ok(uint have, uint want)
{
  return have == want || have == T_ANY || want == T_ANY || have == T_VOID;
}

/* BIRD's constant promotion: an IPv4 literal where a quad is expected. */
static int
expr_ok(struct f_expr *e, uint want)
{
  if (type_ok(e->type, want))
    return 1;
  if (want == T_QUAD && e->op == FI_CONST && e->type == T_IP && ipa_is_ip4(e->val.val.ip)) {
    u32 q = ipa_to_ip4(e->val.val.ip).addr;
    e->val = f_int(T_QUAD, q);
    e->type = T_QUAD;
    return 1;
  }
  return 0;
}

static struct f_expr *
arg_type_err(struct cf_context *cx, uint op, int n, uint want, uint have)
{
  ERR("Argument %d of %s must be of type %s, got type %s", n, f_op_names[op], f_type_name(want), f_type_name(have));
}

#define CHECK_ARG(op, n, e, want) \
  do { if (!expr_ok((e), (want))) return arg_type_err(cx, op, n, want, (e)->type); } while (0)

static int
known(uint t)
{
  return t != T_ANY && t != T_VOID;
}

/* --- Nodes --- */

struct f_expr *
f_new(struct cf_context *cx, uint op, uint type)
{
  struct f_expr *e = cf_alloc(cx, sizeof(struct f_expr));
  e->op = op;
  e->type = type;
  e->line = cx->tok_line;
  return e;
}

struct f_expr *
f_new_const(struct cf_context *cx, struct f_val v)
{
  struct f_expr *e = f_new(cx, FI_CONST, v.type);
  e->val = v;
  if (v.type == T_SET)
    e->subtype = v.val.set->type;
  return e;
}

struct f_expr *
f_append(struct f_expr *list, struct f_expr *x)
{
  if (!list)
    return x;
  struct f_expr *l = list;
  while (l->next)
    l = l->next;
  l->next = x;
  return list;
}

static int
is_const(const struct f_expr *e)
{
  return !e || e->op == FI_CONST;
}

/* Evaluate a pure node with constant operands now. */
static struct f_expr *
fold(struct cf_context *cx, struct f_expr *e)
{
  if (!is_const(e->a) || !is_const(e->b) || !is_const(e->c))
    return e;
  struct f_val v;
  int failed = cx->failed;
  char err[sizeof(cx->err)];
  memcpy(err, cx->err, sizeof(err));
  if (f_eval_const(cx, e, &v) < 0) {
    /* Leave it to run time (e.g. 1/0 in a branch never taken). */
    cx->failed = failed;
    memcpy(cx->err, err, sizeof(err));
    return e;
  }
  struct f_expr *c = f_new_const(cx, v);
  c->line = e->line;
  return c;
}

struct f_expr *
f_new_unary(struct cf_context *cx, uint op, struct f_expr *a)
{
  struct f_expr *e = f_new(cx, op, T_BOOL);
  e->a = a;
  if (op == FI_NOT)
    CHECK_ARG(op, 1, a, T_BOOL);
  return fold(cx, e);
}

static int
match_ok(uint a, uint b, uint bsub)
{
  if (!known(a) || !known(b))
    return 1;
  switch (b) {
  case T_PATH_MASK: return a == T_PATH;
  case T_CLIST: return a == T_PAIR || a == T_QUAD || a == T_IP;
  case T_ECLIST: return a == T_EC;
  case T_LCLIST: return a == T_LC;
  case T_STRING: return a == T_STRING;
  case T_NET: return a == T_IP || a == T_NET;
  case T_PREFIX_SET: return a == T_NET;
  case T_SET:
    if (a == T_CLIST || a == T_ECLIST || a == T_LCLIST || a == T_PATH)
      return 1;
    return !bsub || a == bsub || (a == T_QUAD && bsub == T_IP);
  }
  return 0;
}

struct f_expr *
f_new_binary(struct cf_context *cx, uint op, struct f_expr *a, struct f_expr *b)
{
  struct f_expr *e = f_new(cx, op, T_BOOL);
  e->a = a;
  e->b = b;
  switch (op) {
  case FI_ADD: case FI_SUB: case FI_MUL: case FI_DIV: case FI_BAND: case FI_BOR:
    CHECK_ARG(op, 1, a, T_INT);
    CHECK_ARG(op, 2, b, T_INT);
    e->type = T_INT;
    break;
  case FI_AND: case FI_OR:
    CHECK_ARG(op, 1, a, T_BOOL);
    CHECK_ARG(op, 2, b, T_BOOL);
    if (a->op == FI_CONST && a->type == T_BOOL) {
      /* Short circuit with a constant left side. */
      if ((op == FI_AND) != !!a->val.val.i)
        return a;
      return b;
    }
    return e;
  case FI_EQ: case FI_NEQ:
    break;
  case FI_LT: case FI_LE:
    if (known(a->type) && known(b->type) && a->type != b->type &&
        !((a->type == T_IP && b->type == T_QUAD) || (a->type == T_QUAD && b->type == T_IP)))
      ERR("Arguments 1 and 2 of %s must be of the same type", f_op_names[op]);
    break;
  case FI_MATCH: case FI_NMATCH:
    if (!match_ok(a->type, b->type, b->subtype))
      ERR("~ applied on unknown type pair");
    break;
  case FI_CONCAT:
    CHECK_ARG(op, 1, a, T_STRING);
    CHECK_ARG(op, 2, b, T_STRING);
    e->type = T_STRING;
    break;
  }
  return fold(cx, e);
}

static uint
list_item_type(uint t)
{
  switch (t) {
  case T_CLIST: return T_PAIR;
  case T_ECLIST: return T_EC;
  case T_LCLIST: return T_LC;
  case T_PATH: return T_INT;
  }
  return T_ANY;
}

/* Type of obj.method(arg); 0 with an error message when it does not apply. */
static uint
method_type(struct cf_context *cx, uint op, const struct f_expr *obj, const struct f_expr *arg)
{
  uint t = obj->type, at = arg ? arg->type : T_VOID;
  int any = !known(t);
  switch (op) {
  case FI_IS_V4:
    if (any || t == T_IP || t == T_NET) return T_BOOL;
    cf_error_at(cx, "IP address expected"); return 0;
  case FI_TYPE:
    if (any || t == T_NET) return T_ENUM_NETTYPE;
    break;
  case FI_IP:
    if (any || t == T_NET) return T_IP;
    break;
  case FI_RD:
    if (any || t == T_NET) return T_RD;
    break;
  case FI_LEN:
    if (any || t == T_NET || t == T_PATH || t == T_CLIST || t == T_ECLIST || t == T_LCLIST || t == T_STRING || t == T_BYTESTRING)
      return T_INT;
    cf_error_at(cx, "Prefix, path, clist or eclist expected"); return 0;
  case FI_MAXLEN:
    if (any || t == T_NET) return T_INT;
    break;
  case FI_ASN:
    if (any || t == T_NET || t == T_PAIR || t == T_LC) return T_INT;
    break;
  case FI_NET_SRC: case FI_NET_DST:
    if (any || t == T_NET) return T_NET;
    break;
  case FI_DATA:
    if (any || t == T_PAIR || t == T_LC) return T_INT;
    break;
  case FI_DATA1: case FI_DATA2:
    if (any || t == T_LC) return T_INT;
    break;
  case FI_FIRST: case FI_LAST: case FI_LAST_NONAGG:
    if (any || t == T_PATH) return T_INT;
    cf_error_at(cx, "AS path expected"); return 0;
  case FI_MIN: case FI_MAX:
    if (any) return T_ANY;
    if (t == T_CLIST || t == T_ECLIST || t == T_LCLIST) return list_item_type(t);
    cf_error_at(cx, "Argument 1 of %s must be of type clist, eclist or lclist, got type %s",
                f_op_names[op], f_type_name(t));
    return 0;
  case FI_EMPTY:
    if (any || t == T_PATH || t == T_CLIST || t == T_ECLIST || t == T_LCLIST) return any ? T_ANY : t;
    break;
  case FI_PREPEND:
    if (!type_ok(t, T_PATH)) { arg_type_err(cx, op, 1, T_PATH, t); return 0; }
    if (!type_ok(at, T_INT)) { arg_type_err(cx, op, 2, T_INT, at); return 0; }
    return T_PATH;
  case FI_ADD_ITEM: case FI_DELETE: case FI_FILTER:
    if (any) return T_ANY;
    if (t == T_PATH) {
      if (op == FI_ADD_ITEM) { cf_error_at(cx, "Can't add to a path; use prepend"); return 0; }
      if (!known(at) || at == T_INT || at == T_SET) return T_PATH;
      cf_error_at(cx, "Integer or integer set expected"); return 0;
    }
    if (t == T_CLIST || t == T_ECLIST || t == T_LCLIST) {
      uint it = list_item_type(t);
      if (!known(at) || at == t || at == T_SET || at == it ||
          (t == T_CLIST && (at == T_QUAD || at == T_IP || at == T_INT)))
        return (op == FI_ADD_ITEM && at == T_SET) ? (cf_error_at(cx, "Can't add a set to a list"), 0u) : t;
      cf_error_at(cx, "Argument 2 of %s must be of type %s, got type %s", f_op_names[op], f_type_name(it), f_type_name(at));
      return 0;
    }
    cf_error_at(cx, "Argument 1 of %s must be of type clist, eclist, lclist or bgppath, got type %s",
                f_op_names[op], f_type_name(t));
    return 0;
  }
  cf_error_at(cx, "Method %s can't be applied to type %s", f_op_names[op], f_type_name(t));
  return 0;
}

struct f_expr *
f_new_method(struct cf_context *cx, uint op, struct f_expr *obj, struct f_expr *arg)
{
  uint t = method_type(cx, op, obj, arg);
  if (!t)
    return NULL;
  struct f_expr *e = f_new(cx, op, t);
  e->a = obj;
  e->b = arg;
  return fold(cx, e);
}

struct f_expr *
f_new_mask(struct cf_context *cx, struct f_expr *ip, struct f_expr *len)
{
  struct f_expr *e = f_new(cx, FI_MASK, T_IP);
  CHECK_ARG(FI_MASK, 1, ip, T_IP);
  CHECK_ARG(FI_MASK, 2, len, T_INT);
  e->a = ip;
  e->b = len;
  return fold(cx, e);
}

struct f_expr *
f_new_pair(struct cf_context *cx, struct f_expr *a, struct f_expr *b)
{
  struct f_expr *e = f_new(cx, FI_PAIR, T_PAIR);
  CHECK_ARG(FI_PAIR, 1, a, T_INT);
  CHECK_ARG(FI_PAIR, 2, b, T_INT);
  e->a = a;
  e->b = b;
  return fold(cx, e);
}

struct f_expr *
f_new_ec(struct cf_context *cx, uint kind, struct f_expr *a, struct f_expr *b)
{
  struct f_expr *e = f_new(cx, FI_EC, T_EC);
  if (known(a->type) && a->type != T_INT && a->type != T_QUAD && a->type != T_IP)
    ERR("Argument 1 of EC constructor must be integer or IPv4 address, got type %s", f_type_name(a->type));
  CHECK_ARG(FI_EC, 2, b, T_INT);
  e->a = a;
  e->b = b;
  e->ax = kind;
  return fold(cx, e);
}

struct f_expr *
f_new_lc(struct cf_context *cx, struct f_expr *a, struct f_expr *b, struct f_expr *c)
{
  struct f_expr *e = f_new(cx, FI_LC, T_LC);
  CHECK_ARG(FI_LC, 1, a, T_INT);
  CHECK_ARG(FI_LC, 2, b, T_INT);
  CHECK_ARG(FI_LC, 3, c, T_INT);
  e->a = a;
  e->b = b;
  e->c = c;
  return fold(cx, e);
}

struct f_expr *
f_new_pathmask(struct cf_context *cx, struct f_pmi *items)
{
  uint n = 0, nexpr = 0;
  for (struct f_pmi *i = items; i; i = i->next) {
    n++;
    if (i->item.kind == PM_ASN_EXPR) {
      if (i->expr->op == FI_CONST && i->expr->type == T_INT) {
        i->item.kind = PM_ASN;
        i->item.asn = i->expr->val.val.i;
      } else if (i->expr->op == FI_CONST && i->expr->type == T_SET) {
        i->item.kind = PM_ASN_SET;
        i->item.set = i->expr->val.val.set;
      } else {
        if (known(i->expr->type) && i->expr->type != T_INT && i->expr->type != T_SET)
          ERR("Path mask expression must be an integer or a set, got type %s", f_type_name(i->expr->type));
        nexpr++;
      }
    }
  }
  struct f_path_mask *m = cf_alloc(cx, sizeof(struct f_path_mask) + n * sizeof(struct f_path_mask_item));
  m->len = n;
  struct f_expr *e = f_new(cx, FI_PATHMASK, T_PATH_MASK), *args = NULL;
  uint k = 0;
  for (struct f_pmi *i = items; i; i = i->next) {
    m->item[k++] = i->item;
    if (i->item.kind == PM_ASN_EXPR)
      args = f_append(args, i->expr);
  }
  if (!nexpr)
    return f_new_const(cx, (struct f_val){ .type = T_PATH_MASK, .val.pm = m });
  e->ptr = m;
  e->a = args;
  e->ax = nexpr;
  return e;
}

/* --- Route attributes --- */

static const struct { u8 type; u8 ro; } sa_info[] = {
  [SA_NET] = { T_NET, 1 }, [SA_FROM] = { T_IP, 0 }, [SA_GW] = { T_IP, 0 },
  [SA_PROTO] = { T_STRING, 1 }, [SA_SOURCE] = { T_ENUM_RTS, 1 }, [SA_SCOPE] = { T_ENUM_SCOPE, 0 },
  [SA_DEST] = { T_ENUM_RTD, 0 }, [SA_IFNAME] = { T_STRING, 0 }, [SA_IFINDEX] = { T_INT, 1 },
  [SA_PREFERENCE] = { T_INT, 0 }, [SA_WEIGHT] = { T_INT, 0 }, [SA_ONLINK] = { T_BOOL, 0 },
  [SA_IGP_METRIC] = { T_INT, 0 }, [SA_GW_MPLS] = { T_INT, 0 },
};

struct f_expr *
f_new_sa_get(struct cf_context *cx, uint sa)
{
  struct f_expr *e = f_new(cx, FI_SA_GET, sa_info[sa].type);
  e->bx = sa;
  return e;
}

struct f_expr *
f_new_sa_set(struct cf_context *cx, uint sa, struct f_expr *v)
{
  if (sa_info[sa].ro)
    ERR("This static attribute is read-only.");
  CHECK_ARG(FI_SA_SET, 1, v, sa_info[sa].type);
  struct f_expr *e = f_new(cx, FI_SA_SET, T_VOID);
  e->bx = sa;
  e->a = v;
  return e;
}

static const struct f_attr bgp_attrs[] = {
  { "bgp_origin", EA_BGP(EAB_ORIGIN), T_ENUM_BGP_ORIGIN, EAF_INT, 0x40, 0 },
  { "bgp_path", EA_BGP(EAB_AS_PATH), T_PATH, EAF_AS_PATH, 0x40, 0 },
  { "bgp_next_hop", EA_BGP(EAB_NEXT_HOP), T_IP, EAF_IP, 0x40, 0 },
  { "bgp_med", EA_BGP(EAB_MULTI_EXIT_DISC), T_INT, EAF_INT, 0x80, 0 },
  { "bgp_local_pref", EA_BGP(EAB_LOCAL_PREF), T_INT, EAF_INT, 0x40, 0 },
  { "bgp_atomic_aggr", EA_BGP(EAB_ATOMIC_AGGR), T_BOOL, EAF_OPAQUE, 0x40, 0 },
  { "bgp_aggregator", EA_BGP(EAB_AGGREGATOR), T_BYTESTRING, EAF_OPAQUE, 0xc0, 0 },
  { "bgp_community", EA_BGP(EAB_COMMUNITY), T_CLIST, EAF_INT_SET, 0xc0, 0 },
  { "bgp_originator_id", EA_BGP(EAB_ORIGINATOR_ID), T_QUAD, EAF_ROUTER_ID, 0x80, 0 },
  { "bgp_cluster_list", EA_BGP(EAB_CLUSTER_LIST), T_CLIST, EAF_INT_SET, 0x80, 0 },
  { "bgp_ext_community", EA_BGP(EAB_EXT_COMMUNITY), T_ECLIST, EAF_EC_SET, 0xc0, 0 },
  { "bgp_large_community", EA_BGP(EAB_LARGE_COMMUNITY), T_LCLIST, EAF_LC_SET, 0xc0, 0 },
  { "bgp_otc", EA_BGP(EAB_ONLY_TO_CUSTOMER), T_INT, EAF_INT, 0xc0, 0 },
  /* BIRD 2 reads it as an opaque value (defined(), unset()); its TLVs here */
  { "bgp_aigp", EA_BGP(EAB_AIGP), T_BYTESTRING, EAF_OPAQUE, 0x80, 1 },
};

const struct f_attr *
f_bgp_attr(uint code)
{
  for (uint i = 0; i < ARRAY_SIZE(bgp_attrs); i++)
    if (bgp_attrs[i].id == EA_BGP(code))
      return &bgp_attrs[i];
  bug("Unknown BGP attribute %u", code);
}

struct f_expr *
f_new_ea_get(struct cf_context *cx, const struct f_attr *a)
{
  struct f_expr *e = f_new(cx, FI_EA_GET, a->type);
  e->ptr = a;
  return e;
}

struct f_expr *
f_new_ea_set(struct cf_context *cx, const struct f_attr *a, struct f_expr *v)
{
  if (a->readonly)
    ERR("Attribute %s is read-only", a->name);
  CHECK_ARG(FI_EA_SET, 1, v, a->type);
  struct f_expr *e = f_new(cx, FI_EA_SET, T_VOID);
  e->ptr = a;
  e->a = v;
  return e;
}

struct f_expr *
f_new_ea_unset(struct cf_context *cx, const struct f_attr *a)
{
  struct f_expr *e = f_new(cx, FI_EA_UNSET, T_VOID);
  e->ptr = a;
  return e;
}

struct f_expr *
f_new_defined(struct cf_context *cx, struct f_expr *x)
{
  if (x->op == FI_EA_GET) {
    x->op = FI_EA_DEFINED;
    x->type = T_BOOL;
    return x;
  }
  struct f_expr *e = f_new(cx, FI_DEFINED, T_BOOL);
  e->a = x;
  return fold(cx, e);
}

int
f_define_attribute(struct cf_context *cx, struct symbol *s, uint type)
{
  struct f_parse *fp = f_parse_state(cx);
  struct f_attr *a = cf_alloc(cx, sizeof(struct f_attr));
  a->name = s->name;
  a->type = type;
  switch (type) {
  case T_INT: case T_BOOL: case T_PAIR: case T_QUAD: a->eaf = EAF_INT; break;
  case T_IP: a->eaf = EAF_IP; break;
  case T_PATH: a->eaf = EAF_AS_PATH; break;
  case T_CLIST: a->eaf = EAF_INT_SET; break;
  case T_ECLIST: a->eaf = EAF_EC_SET; break;
  case T_LCLIST: a->eaf = EAF_LC_SET; break;
  case T_STRING: case T_NET: case T_EC: case T_LC: case T_RD: case T_BYTESTRING: a->eaf = EAF_OPAQUE; break;
  default:
    if (f_type_is_enum(type)) { a->eaf = EAF_INT; break; }
    cf_error_at(cx, "Attributes of type %s are not supported", f_type_name(type));
    return -1;
  }
  if (fp->attr_next >= 255) {
    cf_error_at(cx, "Too many attributes");
    return -1;
  }
  a->id = EA_CODE(EAP_USER, ++fp->attr_next);
  return cf_define_symbol(cx, s, SYM_ATTRIBUTE, a);
}

/* --- Symbols, variables, scopes --- */

void
f_scope_push(struct cf_context *cx)
{
  struct f_parse *fp = f_parse_state(cx);
  struct f_scope *s = cf_alloc(cx, sizeof(struct f_scope));
  s->up = fp->scope;
  fp->scope = s;
}

void
f_scope_pop(struct cf_context *cx)
{
  struct f_parse *fp = f_parse_state(cx);
  if (fp->scope)
    fp->scope = fp->scope->up;
}

struct f_local *
f_find_local(struct cf_context *cx, struct symbol *sym)
{
  struct f_parse *fp = f_parse_state(cx);
  for (struct f_scope *s = fp->scope; s; s = s->up)
    for (struct f_local *l = s->vars; l; l = l->next)
      if (l->sym == sym || !strcmp(l->sym->name, sym->name))
        return l;
  return NULL;
}

static struct f_local *
declare_local(struct cf_context *cx, struct symbol *sym, uint type)
{
  struct f_parse *fp = f_parse_state(cx);
  if (!fp->scope)
    ERR("Variables can be declared only inside a filter or function");
  for (struct f_local *l = fp->scope->vars; l; l = l->next)
    if (!strcmp(l->sym->name, sym->name))
      ERR("Symbol %s already defined", sym->name);
  if (fp->nslots >= 1000)
    ERR("Too many local variables");
  struct f_local *l = cf_alloc(cx, sizeof(struct f_local));
  l->sym = sym;
  l->type = type;
  l->slot = fp->nslots++;
  l->next = fp->scope->vars;
  fp->scope->vars = l;
  return l;
}

/* The value of a constant symbol. */
static struct f_val
const_value(const struct cf_val *v)
{
  if (v->fv)
    return *v->fv;
  switch (v->type) {
  case CFV_INT: return f_int(T_INT, v->i);
  case CFV_BOOL: return f_bool(v->i);
  case CFV_PAIR: return f_int(T_PAIR, v->i);
  case CFV_QUAD: return f_int(T_QUAD, v->i);
  case CFV_IP: return (struct f_val){ .type = T_IP, .val.ip = v->ip };
  case CFV_NET: return (struct f_val){ .type = T_NET, .val.net = &v->net };
  case CFV_STRING: return (struct f_val){ .type = T_STRING, .val.s = v->s };
  default: return F_VAL_VOID;
  }
}

struct f_expr *
f_new_symbol(struct cf_context *cx, struct symbol *s)
{
  struct f_local *l = f_find_local(cx, s);
  if (l) {
    struct f_expr *e = f_new(cx, FI_VAR_GET, l->type);
    e->ax = l->slot;
    return e;
  }
  switch (s->class) {
  case SYM_CONSTANT:
    return f_new_const(cx, const_value(s->val));
  case SYM_ATTRIBUTE:
    return f_new_ea_get(cx, s->def);
  case SYM_VOID:
    ERR("Undefined symbol %s", s->name);
  default:
    ERR("Symbol %s is not a variable", s->name);
  }
}

struct f_expr *
f_new_assign(struct cf_context *cx, struct symbol *s, struct f_expr *v)
{
  struct f_local *l = f_find_local(cx, s);
  if (l) {
    CHECK_ARG(FI_VAR_SET, 1, v, l->type);
    struct f_expr *e = f_new(cx, FI_VAR_SET, T_VOID);
    e->ax = l->slot;
    e->a = v;
    return e;
  }
  switch (s->class) {
  case SYM_ATTRIBUTE:
    return f_new_ea_set(cx, s->def, v);
  case SYM_VOID:
    ERR("Undefined symbol %s", s->name);
  case SYM_CONSTANT:
    ERR("Can't assign to constant %s", s->name);
  default:
    ERR("Symbol %s is not a variable", s->name);
  }
}

static struct f_expr *
lvalue_set(struct cf_context *cx, struct f_expr *lv, struct f_expr *v)
{
  struct f_expr *e;
  switch (lv->op) {
  case FI_VAR_GET:
    CHECK_ARG(FI_VAR_SET, 1, v, lv->type);
    e = f_new(cx, FI_VAR_SET, T_VOID);
    e->ax = lv->ax;
    e->a = v;
    return e;
  case FI_EA_GET:
    return f_new_ea_set(cx, lv->ptr, v);
  case FI_SA_GET:
    return f_new_sa_set(cx, lv->bx, v);
  }
  ERR("Variable or attribute expected");
}

struct f_expr *
f_new_lvalue_method(struct cf_context *cx, struct f_expr *lv, uint op, struct f_expr *arg)
{
  if (lv->op != FI_VAR_GET && lv->op != FI_EA_GET && lv->op != FI_SA_GET)
    ERR("Variable or attribute expected");
  struct f_expr *m = f_new_method(cx, op, lv, arg);
  if (!m)
    return NULL;
  return lvalue_set(cx, lv, m);
}

/* bt_check_assign(lvalue, value): assign, then assert that reading it back
 * gives the value (the attribute storage round-trips). */
struct f_expr *
f_new_check_assign(struct cf_context *cx, struct f_expr *lv, struct f_expr *v)
{
  struct f_expr *set = lvalue_set(cx, lv, v);
  if (!set)
    return NULL;
  struct f_expr *eq = f_new_binary(cx, FI_EQ, lv, v);
  if (!eq)
    return NULL;
  struct f_expr *chk = f_new_assert(cx, eq, "bt_check_assign");
  if (!chk)
    return NULL;
  set->next = chk;
  return f_new_block(cx, set);
}

struct f_expr *
f_new_decl(struct cf_context *cx, uint type, struct symbol *s, struct f_expr *init)
{
  if (init && !expr_ok(init, type))
    return arg_type_err(cx, FI_VAR_SET, 1, type, init->type);
  struct f_local *l = declare_local(cx, s, type);
  if (!l)
    return NULL;
  struct f_expr *e = f_new(cx, init ? FI_VAR_SET : FI_VAR_INIT, T_VOID);
  e->ax = l->slot;
  e->bx = type;
  e->a = init;
  return e;
}

struct f_expr *
f_new_for_var(struct cf_context *cx, uint type, struct symbol *s)
{
  struct f_local *l = declare_local(cx, s, type);
  if (!l)
    return NULL;
  struct f_expr *e = f_new(cx, FI_VAR_GET, type);
  e->ax = l->slot;
  return e;
}

struct f_expr *
f_new_for(struct cf_context *cx, struct f_expr *var, struct f_expr *list, struct f_expr *body)
{
  if (var->op != FI_VAR_GET)
    ERR("Loop variable expected");
  uint it = list_item_type(list->type);
  if (known(list->type) && it == T_ANY)
    ERR("Argument 1 of FOR must be of type bgppath, clist, eclist or lclist, got type %s", f_type_name(list->type));
  if (known(list->type) && !type_ok(it, var->type))
    ERR("Loop variable of type %s can't iterate over %s", f_type_name(var->type), f_type_name(list->type));
  struct f_parse *fp = f_parse_state(cx);
  struct f_expr *e = f_new(cx, FI_FOR, T_VOID);
  e->a = list;
  e->b = body;
  e->bx = var->ax;
  e->ax = fp->nslots;     /* hidden: the list and the index */
  fp->nslots += 2;
  return e;
}

/* --- Statements --- */

struct f_expr *
f_new_if(struct cf_context *cx, struct f_expr *c, struct f_expr *t, struct f_expr *el)
{
  CHECK_ARG(FI_IF, 1, c, T_BOOL);
  if (c->op == FI_CONST)
    return c->val.val.i ? t : (el ? el : f_new(cx, FI_NOP, T_VOID));
  struct f_expr *e = f_new(cx, FI_IF, T_VOID);
  e->a = c;
  e->b = t;
  e->c = el;
  return e;
}

struct f_expr *
f_new_block(struct cf_context *cx, struct f_expr *list)
{
  struct f_expr *e = f_new(cx, FI_BLOCK, T_VOID);
  e->a = list;
  return e;
}

struct f_expr *
f_new_return(struct cf_context *cx, struct f_expr *v)
{
  struct f_parse *fp = f_parse_state(cx);
  if (v && fp->cur && fp->cur->kind == FK_FUNCTION) {
    if (!fp->ret_declared && fp->ret_type == T_ANY && known(v->type))
      fp->ret_type = v->type;
    else if (known(fp->ret_type) && !type_ok(v->type, fp->ret_type))
      ERR("Can't return %s from function %s, declared to return %s",
          f_type_name(v->type), fp->cur->name, f_type_name(fp->ret_type));
  }
  struct f_expr *e = f_new(cx, FI_RETURN, T_VOID);
  e->a = v;
  return e;
}

struct f_expr *
f_new_print(struct cf_context *cx, uint op, uint flags, struct f_expr *list)
{
  struct f_expr *e = f_new(cx, op, T_VOID);
  e->a = list;
  e->bx = flags;
  return e;
}

struct f_expr *
f_new_case(struct cf_context *cx, struct f_expr *v, struct f_arm *arms)
{
  for (struct f_arm *a = arms; a; a = a->next)
    if (!a->is_else && known(v->type) && a->from.type != v->type &&
        !(a->from.type == T_INT && f_type_is_enum(v->type)) &&
        !(v->type == T_QUAD && val_is_ip4(&a->from) && val_is_ip4(&a->to)))  /* BIRD: IPv4 literals for quads */
      ERR("Case label of type %s doesn't match the switched type %s", f_type_name(a->from.type), f_type_name(v->type));
  struct f_expr *e = f_new(cx, FI_CASE, T_VOID);
  e->a = v;
  e->ptr = arms;
  return e;
}

struct f_expr *
f_new_assert(struct cf_context *cx, struct f_expr *x, const char *text)
{
  CHECK_ARG(FI_ASSERT, 1, x, T_BOOL);
  struct f_expr *e = f_new(cx, FI_ASSERT, T_VOID);
  e->a = x;
  e->ptr = cf_strdup(cx, lp_sprintf(cx->mem, "%s:%d: %s", cx->tok_file ? cx->tok_file : "", cx->tok_line,
                                     text ? text : "bt_assert"));
  return e;
}

struct f_expr *
f_new_call(struct cf_context *cx, struct symbol *s, struct f_expr *args)
{
  if (s->class != SYM_FUNCTION)
    ERR("You can't call something which is not a function. Really.");
  struct filter *fn = s->def;
  uint n = 0;
  for (struct f_expr *a = args; a; a = a->next)
    n++;
  if (n != fn->argc)
    ERR("Function %s takes %u arguments, got %u", s->name, fn->argc, n);
  n = 0;
  for (struct f_expr *a = args; a; a = a->next, n++)
    if (!expr_ok(a, fn->arg_type[n]))
      ERR("Argument %u of '%s' must be %s, got %s", n + 1, s->name, f_type_name(fn->arg_type[n]), f_type_name(a->type));
  struct f_expr *e = f_new(cx, FI_CALL, fn->compiled ? fn->ret_type : T_ANY);
  e->ptr = fn;
  e->a = args;
  e->ax = fn->argc;
  return e;
}

struct f_expr *
f_new_roa_check(struct cf_context *cx, struct symbol *table, struct f_expr *net, struct f_expr *asn)
{
  if (table->class != SYM_TABLE)
    ERR("%s is not a table", table->name);
  if (table->table->net_type != NET_ROA4 && table->table->net_type != NET_ROA6)
    ERR("ROA table expected");
  struct f_expr *e = f_new(cx, net ? FI_ROA_CHECK : FI_ROA_CHECK_ROUTE, T_ENUM_ROA);
  if (net) {
    CHECK_ARG(FI_ROA_CHECK, 1, net, T_NET);
    CHECK_ARG(FI_ROA_CHECK, 2, asn, T_INT);
  }
  e->a = net;
  e->b = asn;
  e->ptr = table->table;
  return e;
}

struct f_expr *
f_new_aspa_check(struct cf_context *cx, struct symbol *table, struct f_expr *path, struct f_expr *up)
{
  if (table->class != SYM_TABLE)
    ERR("%s is not a table", table->name);
  if (table->table->net_type != NET_ASPA)
    ERR("ASPA table expected");
  CHECK_ARG(FI_ASPA_CHECK, 1, path, T_PATH);
  CHECK_ARG(FI_ASPA_CHECK, 2, up, T_BOOL);
  struct f_expr *e = f_new(cx, FI_ASPA_CHECK, T_ENUM_ASPA);
  e->a = path;
  e->b = up;
  e->ptr = table->table;
  return e;
}

struct f_expr *
f_new_format(struct cf_context *cx, struct f_expr *x)
{
  struct f_expr *e = f_new(cx, FI_FORMAT, T_STRING);
  e->a = x;
  return fold(cx, e);
}

struct f_expr *
f_new_from_hex(struct cf_context *cx, struct f_expr *x)
{
  CHECK_ARG(FI_FROM_HEX, 1, x, T_STRING);
  struct f_expr *e = f_new(cx, FI_FROM_HEX, T_BYTESTRING);
  e->a = x;
  return fold(cx, e);
}

/* --- Filters and functions --- */

int
f_function_start(struct cf_context *cx, struct symbol *s, int is_filter)
{
  struct f_parse *fp = f_parse_state(cx);
  struct filter *f = cf_alloc(cx, sizeof(struct filter));
  f->name = s->name;
  f->kind = is_filter ? FK_FILTER : FK_FUNCTION;
  f->file = cx->tok_file;
  if (cf_define_symbol(cx, s, is_filter ? SYM_FILTER : SYM_FUNCTION, f) < 0)
    return -1;
  fp->cur = f;
  fp->scope = NULL;
  fp->nslots = 0;
  fp->ret_type = T_ANY;
  fp->ret_declared = 0;
  f_scope_push(cx);
  return 0;
}

int
f_function_arg(struct cf_context *cx, uint type, struct symbol *s)
{
  struct f_parse *fp = f_parse_state(cx);
  struct filter *f = fp->cur;
  if (f->argc >= F_MAX_ARGS) {
    cf_error_at(cx, "Too many arguments");
    return -1;
  }
  if (!declare_local(cx, s, type))
    return -1;
  f->arg_type[f->argc++] = type;
  return 0;
}

void
f_function_ret(struct cf_context *cx, uint type)
{
  struct f_parse *fp = f_parse_state(cx);
  fp->ret_type = type;
  fp->ret_declared = type != T_ANY;
  fp->cur->ret_type = type;
}

struct filter *
f_function_end(struct cf_context *cx, struct f_expr *body)
{
  struct f_parse *fp = f_parse_state(cx);
  struct filter *f = fp->cur;
  f->ret_type = fp->ret_type == T_ANY ? T_VOID : fp->ret_type;
  if (!f_compile(cx, f, body))
    return NULL;
  fp->cur = NULL;
  fp->scope = NULL;
  return f;
}

void
f_inline_start(struct cf_context *cx)
{
  struct f_parse *fp = f_parse_state(cx);
  struct filter *f = cf_alloc(cx, sizeof(struct filter));
  f->kind = FK_FILTER;
  f->file = cx->tok_file;
  fp->cur = f;
  fp->scope = NULL;
  fp->nslots = 0;
  fp->ret_type = T_ANY;
  fp->ret_declared = 0;
  f_scope_push(cx);
}

struct filter *
f_inline_end(struct cf_context *cx, struct f_expr *body)
{
  struct f_parse *fp = f_parse_state(cx);
  struct filter *f = fp->cur;
  if (!f_compile(cx, f, body))
    return NULL;
  fp->cur = NULL;
  fp->scope = NULL;
  return f;
}

struct filter *
f_new_where(struct cf_context *cx, struct f_expr *cond)
{
  struct f_parse *fp = f_parse_state(cx);
  if (!type_ok(cond->type, T_BOOL)) {
    arg_type_err(cx, FI_IF, 1, T_BOOL, cond->type);
    return NULL;
  }
  struct f_expr *acc = f_new_print(cx, FI_ACCEPT, 0, NULL), *rej = f_new_print(cx, FI_REJECT, 0, NULL);
  struct f_expr *body = f_new_if(cx, cond, acc, rej);
  fp->cur->kind = FK_WHERE;
  return f_inline_end(cx, body);
}

int
f_test_suite(struct cf_context *cx, struct symbol *s, const char *desc)
{
  struct f_parse *fp = f_parse_state(cx);
  if (s->class != SYM_FUNCTION) {
    cf_error_at(cx, "Function expected");
    return -1;
  }
  struct filter *f = s->def;
  if (f->argc) {
    cf_error_at(cx, "Test function %s must take no arguments", s->name);
    return -1;
  }
  f->test_desc = desc;
  f->test_seq = ++fp->test_seq;
  return 0;
}

int
f_test_same(struct cf_context *cx, struct symbol *a, struct symbol *b, u32 expect)
{
  struct f_parse *fp = f_parse_state(cx);
  if ((a->class != SYM_FUNCTION && a->class != SYM_FILTER) || (b->class != SYM_FUNCTION && b->class != SYM_FILTER)) {
    cf_error_at(cx, "Function or filter expected");
    return -1;
  }
  struct filter *f = a->def;
  struct f_same_test *t = cf_alloc(cx, sizeof(struct f_same_test));
  t->other = b->def;
  t->expect = !!expect;
  t->line = cx->tok_line;
  struct f_same_test **pp = &f->same;
  while (*pp)
    pp = &(*pp)->next;
  *pp = t;
  if (!f->test_seq)
    f->test_seq = ++fp->test_seq;
  return 0;
}
