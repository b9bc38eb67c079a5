/*
 * DOC: The filter interpreter: the dispatch loop.
 *
 * f_exec() runs bytecode over a value stack that lives on the C stack of
 * the caller: no globals, no locks, so every loop may run filters at once.
 * Each function call gets a frame (its arguments and locals are the first
 * slots at the frame's base). Recursion depth, the number of executed
 * instructions and the scratch memory are bounded, so a runaway filter
 * ends with a runtime error instead of hanging a loop.
 *
 * Route attributes are read and written through filter/interp_attr.c
 * (a per-run cache, copy-on-write into an ea_builder); f_exec() interns
 * the builder once at the end, if anything was written. `~` is
 * filter/interp_match.c; what the loop needs inlined from both is in
 * filter/f_interp.h.
 *
 * Types are checked at config time; the checks here guard against void
 * values (unset attributes, uninitialised variables) and keep the
 * interpreter safe on any input.
 */
#include <string.h>
#include <stdlib.h>
#include "filter/f_interp.h"
#include "nest/ea_bgp.h"
#include "nest/rt.h"
#include "nest/rt_valid.h"
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

/* --- Handler helpers --- */

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
  st.nedits = st.applied = 0;
  st.memo_ok = 1;
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
  st.top = top;
  if (r)
    f_st_start(&st, top);
  if (r && r->set_preference && r->attrs->preference != r->set_preference) {
    f_st_cow(&st);
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
        else SET_INT(*(x), T_ENUM_NETTYPE, f_net_type_enum(r->net)); \
      } else { \
        f_st_ea_get(&st, (t)->attr, (x)); \
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
    [FI_JCMP_NET] = &&L_FI_JCMP_NET,
    [FI_JMATCH_NET] = &&L_FI_JMATCH_NET,
    [FI_JCMP_PATH] = &&L_FI_JCMP_PATH,
    [FI_JMATCH_PATH] = &&L_FI_JMATCH_PATH,
    [FI_JMATCH_CLIST] = &&L_FI_JMATCH_CLIST,
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
    [FI_EA_EDIT] = &&L_FI_EA_EDIT,
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
    /* The typed forms: the compiler checked the types (route_test_op()). */
    L_FI_JCMP_NET: ; {
      NEED_ROUTE();
      const struct f_jtest *t = in->p.p;
      u32 v = t->method == FI_LEN ? r->net->pxlen : f_net_type_enum(r->net);
      JUMP_IF(jcmp_u32_jumps(in->b, v, t->k.val.i), F_ERR_CMP);
    }
    L_FI_JMATCH_NET: ; {
      NEED_ROUTE();
      const struct f_jtest *t = in->p.p;
      JUMP_IF(jmatch_result_jumps(in->b, f_trie_match(t->k.val.trie, r->net)), F_ERR_MATCH);
    }
    /* The list attribute of test t into v; one stored as something else
     * takes the checked form (and its error). */
#define ROUTE_LIST(t, v, checked) do { NEED_ROUTE(); f_st_ea_get(&st, (t)->attr, &(v)); \
      if (unlikely((v).type != (t)->attr->type)) goto checked; } while (0)
    L_FI_JCMP_PATH: ; {
      const struct f_jtest *t = in->p.p;
      struct f_val p;
      ROUTE_LIST(t, p, L_FI_JCMP_RT);
      u32 v = 0;
      switch (t->method) {
      case FI_LEN: v = as_path_length(p.val.ad); break;
      case FI_FIRST: as_path_first(p.val.ad, &v); break;
      case FI_LAST: as_path_last(p.val.ad, &v); break;
      case FI_LAST_NONAGG: as_path_last_nonaggregated(p.val.ad, &v); break;
      case FI_ROA_CHECK: as_path_last(p.val.ad, &v); v = roa_check(t->table, r->net, v); break;
      }
      JUMP_IF(jcmp_u32_jumps(in->b, v, t->k.val.i), F_ERR_CMP);
    }
    L_FI_JMATCH_PATH: ; {
      const struct f_jtest *t = in->p.p;
      struct f_val p;
      ROUTE_LIST(t, p, L_FI_JMATCH_RT);
      int m = t->k.type == T_PATH_MASK ? as_path_match(p.val.ad, t->k.val.pm) : f_path_any_in_set(p.val.ad, t->k.val.set);
      JUMP_IF(jmatch_result_jumps(in->b, m), F_ERR_MATCH);
    }
    L_FI_JMATCH_CLIST: ; {
      const struct f_jtest *t = in->p.p;
      struct f_val l;
      ROUTE_LIST(t, l, L_FI_JMATCH_RT);
      JUMP_IF(jmatch_result_jumps(in->b, clist_contains(l.type, l.val.ad, &t->k)), F_ERR_MATCH);
    }
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
        n = as_path_item_count(list->val.ad);
        if (k >= n) { pc = in->p.u; break; }
        SET_INT(stack[base + in->b], T_INT, as_path_item(list->val.ad, k));
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
      /* a constant in a function's own body (a set, a define) may call it
       * at parse time, before it has code */
      if (unlikely(!fn->code))
        ERROR("Function %s called before its definition is complete", fn->name ? fn->name : "?");
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
        SET_INT(stack[sp], T_ENUM_NETTYPE, f_net_type_enum(r->net));
      sp++;
      DISPATCH();
    L_FI_EA_METHOD: ; {
      NEED_ROUTE();
      struct f_val v;
      f_st_ea_get(&st, in->p.p, &v);
      u32 x = 0;
      EA_METHOD(in->b, &v, x);
      SET_INT(stack[sp], T_INT, x);
      sp++;
      DISPATCH();
    }
    L_FI_SA_GET: ;
      NEED_ROUTE();
      if (f_st_sa_get(&st, in->b, &stack[sp]) < 0)
        ERROR("Unknown static attribute");
      sp++;
      DISPATCH();
    L_FI_SA_SET: ; {
      NEED_ROUTE();
      const struct f_val *v = &stack[--sp];
      if (v->type == T_VOID)
        ERROR("Can't set an attribute to void");
      const char *e = f_st_sa_set(&st, in->b, v);
      if (e)
        ERROR("%s", e);
      DISPATCH();
    }
    L_FI_EA_GET: ;
      NEED_ROUTE();
      f_st_ea_get(&st, in->p.p, &stack[sp++]);
      DISPATCH();
    L_FI_EA_SET: ; {
      NEED_ROUTE();
      const struct f_attr *a = in->p.p;
      const struct f_val *v = &stack[--sp];
      if (v->type != a->type)
        ERROR("Argument 1 of EA_SET must be of type %s, got type %s", f_type_name(a->type), f_type_name(v->type));
      f_st_ea_set(&st, a, v);
      DISPATCH();
    }
    L_FI_EA_EDIT: ;
      NEED_ROUTE();
      f_st_edit(&st, in);
      DISPATCH();
    L_FI_EA_UNSET: ;
      NEED_ROUTE();
      f_st_edits_apply(&st, in->a);
      st.memo_ok = 0;
      f_st_ea_forget(&st, in->a);
      f_st_cow(&st);
      ea_unset(st.eb, in->a);
      DISPATCH();
    L_FI_EA_DEFINED: ; {
      NEED_ROUTE();
      const void *data;
      { SET_BOOL(stack[sp], f_st_ea_find(&st, in->a, &data) != NULL); sp++; };
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
      SET_INT(TOP, T_ENUM_NETTYPE, f_net_type_enum(TOP.val.net));
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
      enum list_edit_op op = f_list_edit_op(in->op);
      switch (list_edit_check(op, a->type, b)) {
      case LE_OK:
        break;
      case LE_PATH_ADD:
        ERROR("Can't add to a path");
      case LE_PATH_ITEM:
        ERROR("Integer or integer set expected");
      case LE_NOT_LIST:
        ERROR("Argument 1 of %s must be of type clist, eclist, lclist or bgppath, got type %s",
              f_op_names[in->op], f_type_name(a->type));
      case LE_ITEM:
        ERROR("Argument 2 of %s must be of type %s, got type %s", f_op_names[in->op],
              f_type_name(clist_item_type(a->type)), f_type_name(b->type));
      }
      a->val.ad = list_edit(lp, op, a->type, a->val.ad, b);
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
      f_st_ea_get(&st, f_bgp_attr(EAB_AS_PATH), &p);
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
  /* A rejected route's attributes go nowhere: not interned, not looked up. */
  if (r)
    r->out = (res == F_ACCEPT || res == F_NOP) && !r->verdict_only ? f_st_result(&st) : NULL;
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
#undef ROUTE_LIST
#undef DISPATCH
#undef STEP
#undef POP
#undef TOP
}
