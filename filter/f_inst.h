/*
 * DOC: Filter compiler and interpreter internals (private to filter/).
 *
 * The grammar (filter/config.y) builds a typed tree of struct f_expr,
 * checking types as each node is made, so a type error points at the
 * config position where it was written. f_compile() turns a tree into a
 * flat array of struct f_insn (postfix, constants folded, jumps resolved)
 * inside a struct filter. f_run() (filter/interp.c) executes that array
 * over a value stack.
 */
#ifndef FILTER_F_INST_H
#define FILTER_F_INST_H

#include "filter/filter.h"
#include "filter/data.h"
#include "conf/cf_context.h"

enum f_op {
#define F_INSN(name, bname, pops, pushes) FI_##name,
#include "filter/insns.def"
#undef F_INSN
  FI__MAX
};
extern const char *const f_op_names[FI__MAX];

/* Static route attributes (not in the eattr list). */
enum f_sa {
  SA_NET = 1, SA_FROM, SA_GW, SA_PROTO, SA_SOURCE, SA_SCOPE, SA_DEST, SA_IFNAME, SA_IFINDEX,
  SA_PREFERENCE, SA_WEIGHT, SA_ONLINK, SA_IGP_METRIC, SA_GW_MPLS,
};

/* An attribute in the eattr list: BGP ones and user-declared ones. */
struct f_attr {
  const char *name;
  u16 id;           /* EA_CODE */
  u8 type;          /* filter type */
  u8 eaf;           /* storage: enum ea_type */
  u8 flags;         /* BGP attribute flags to set on write */
  u8 readonly;
};

/* One instruction: 16 bytes. */
struct f_insn {
  u16 op;
  u16 b;            /* small operand: type, kind, slot */
  u32 a;            /* jump target, slot, attribute id, count */
  union {
    const struct f_val *v;
    const void *p;
    uintptr_t u;
  } p;
};

/*
 * Operand b of the conditional jumps. JZ/JNZ: the op named when the value
 * is not a bool (0: CONDITION). JCMP and JMATCH test a value against a
 * constant (compile.c fuses `if x < 5`, `if net ~ SET` so): the original
 * op (EQ, NEQ, LT, LE, MATCH, NMATCH) in the low byte and these flags.
 */
enum f_jcond {
  FJ_SWAP = 0x100,          /* the constant is the left operand */
  FJ_WHEN = 0x200,          /* jump when the test is true (else when false) */
  /* JCMP on equal u32-valued types: jump when the value is below, equal
   * to, above the constant (flags, with swap and sense folded in) */
  FJ_BELOW = 0x1000, FJ_EQUAL = 0x2000, FJ_ABOVE = 0x4000,
};

/* JCMP_RT, JMATCH_RT: the tested value is read from the route, not popped:
 * the net or an attribute, or a method of it (`net.len <= 24`, `bgp_path ~
 * BOGON_ASNS`, `bgp_path.first != 3320` are one instruction each). */
struct f_jtest {
  struct f_val k;               /* the constant */
  const struct f_attr *attr;    /* this attribute; NULL: the net */
  u16 method;                   /* then this method (FI_LEN, FI_TYPE, FI_FIRST, ...); 0: none;
                                 * FI_ROA_CHECK: roa_check(table, net, attr.last) */
  const void *table;            /* FI_ROA_CHECK: the ROA table (struct rtable_config) */
};

/* EA_EDIT: attribute attr = attr.add|delete|filter(k), or attr = k, with k
 * a constant checked (and converted) by the compiler. The interpreter
 * defers it until something reads, writes or unsets the attribute or the
 * run ends; a run whose only changes are such edits is memoized by its
 * input list and the edits it ran (filter/interp_attr.c). */
struct f_edit {
  const struct f_attr *attr;
  u16 op;                       /* enum list_edit_op, or F_EDIT_SET */
  u16 id;                       /* one per distinct edit in its config
                                 * (f_edit_intern): memo keys name it by it */
  struct f_val k;
};

#define F_EDIT_SET 0x100

static inline enum list_edit_op
f_list_edit_op(uint op)
{
  return op == FI_ADD_ITEM ? LE_ADD : op == FI_DELETE ? LE_DELETE : LE_FILTER;
}

/* SWITCH table: first matching range wins; else deflt. */
struct f_switch {
  uint n;
  struct f_switch_entry { struct f_val from, to; u32 target; } *e;
  u32 deflt;
};

#define F_MAX_ARGS 16

enum filter_kind_int { FK_ACCEPT = 1, FK_REJECT, FK_FILTER, FK_FUNCTION, FK_WHERE };

struct f_same_test { struct f_same_test *next; const struct filter *other; int expect; u32 line; };

struct filter {
  const char *name;             /* symbol name; NULL for inline filters */
  /* Memoized runs name their edits by id within this scope (the parse's,
   * unique in the process) and look for them in the bucket of this seed
   * (the scope and the edits in the code): filters of one config making
   * the same edits share memo entries (filter/edit_intern.c). */
  u64 memo_scope, memo_seed;
  u64 uid;                      /* unique in the process: the verdict memo names the filter by it */
  u8 pure;                      /* reads the route's attributes only (filter/verdict_memo.c) */
  u8 edits;                     /* has EA_EDITs, or calls a function that had when compiled */
  u8 kind;                      /* enum filter_kind_int */
  u8 ret_type;                  /* functions */
  u8 argc;
  u8 arg_type[F_MAX_ARGS];
  u16 nslots;                   /* arguments + locals */
  u32 stack_need;               /* slots + deepest expression stack */
  u32 len;
  const struct f_insn *code;
  const u32 *lines;
  /* Per instruction, the function it was inlined from (NULL: this one's
   * own); NULL when nothing was inlined. Run-time errors name it. */
  const struct filter *const *origin;
  const char *file;
  int compiled;                 /* body done (recursion sees a half-built one) */
  /* A function of no arguments and no locals whose body is `return E;`:
   * E, which calls compile in place of the call. */
  const struct f_expr *inline_ret;
  /* Self-tests */
  const char *test_desc;
  u32 test_seq;
  struct f_same_test *same;
};

/* Tree */
struct f_expr {
  u16 op;
  u8 type;                      /* result type (T_VOID for statements) */
  u8 subtype;                   /* T_SET: element type */
  u32 line;
  struct f_expr *a, *b, *c;
  struct f_expr *next;          /* statement / argument lists */
  u16 bx;                       /* -> f_insn.b */
  u32 ax;                       /* -> f_insn.a */
  const void *ptr;              /* -> f_insn.p */
  struct f_val val;             /* FI_CONST */
};

/* Local variables and scopes (parse time). */
struct f_local {
  struct f_local *next;
  struct symbol *sym;
  u16 slot;
  u8 type;
};
struct f_scope {
  struct f_scope *up;
  struct f_local *vars;
};

/* case arms */
struct f_arm {
  struct f_arm *next;
  struct f_val from, to;
  int is_else;
  struct f_expr *body;          /* shared by the items of one label list */
};

/* Set literal under construction */
struct f_setb {
  uint n, size;
  struct f_val *from, *to;
  int prefix;                   /* prefix set */
  struct f_trie_entry *pfx;
};

/* Path mask items under construction */
struct f_pmi {
  struct f_pmi *next;
  struct f_path_mask_item item;
  struct f_expr *expr;          /* PM_ASN_EXPR */
};

struct f_prefix { net_addr net; u8 lo, hi; };

/* Per-parse compiler state, hung on cf_context. */
struct f_parse {
  struct f_scope *scope;
  struct filter *cur;           /* function or filter being defined */
  u16 nslots;
  u8 ret_type;                  /* declared (or inferred) return type; T_ANY: infer */
  u8 ret_declared;
  u32 test_seq;
  u16 attr_next;                /* next user attribute code */
  u16 edit_next;                /* next EA_EDIT id */
  u64 memo_scope;               /* f_edit_scope(); 0: not asked yet */
  struct f_edit_tab *edits;     /* filter/edit_intern.c */
};

struct f_parse *f_parse_state(struct cf_context *cx);

/* filter/edit_intern.c: the parse's one edit of attribute a, operation op
 * (enum list_edit_op or F_EDIT_SET) and constant k; NULL once the ids are
 * spent. The scope that makes its id unique in the process. */
const struct f_edit *f_edit_intern(struct cf_context *cx, const struct f_attr *a, uint op, const struct f_val *k);
u64 f_edit_scope(struct cf_context *cx);

/* --- Tree building (filter/tree.c). Each returns NULL after cf_error_at(). --- */
struct f_expr *f_new(struct cf_context *cx, uint op, uint type);
struct f_expr *f_new_const(struct cf_context *cx, struct f_val v);
struct f_expr *f_new_unary(struct cf_context *cx, uint op, struct f_expr *a);
struct f_expr *f_new_binary(struct cf_context *cx, uint op, struct f_expr *a, struct f_expr *b);
struct f_expr *f_new_method(struct cf_context *cx, uint op, struct f_expr *obj, struct f_expr *arg);
struct f_expr *f_new_mask(struct cf_context *cx, struct f_expr *ip, struct f_expr *len);
struct f_expr *f_new_pair(struct cf_context *cx, struct f_expr *a, struct f_expr *b);
struct f_expr *f_new_ec(struct cf_context *cx, uint kind, struct f_expr *a, struct f_expr *b);
struct f_expr *f_new_lc(struct cf_context *cx, struct f_expr *a, struct f_expr *b, struct f_expr *c);
struct f_expr *f_new_pathmask(struct cf_context *cx, struct f_pmi *items);
struct f_expr *f_new_sa_get(struct cf_context *cx, uint sa);
struct f_expr *f_new_sa_set(struct cf_context *cx, uint sa, struct f_expr *v);
struct f_expr *f_new_ea_get(struct cf_context *cx, const struct f_attr *a);
struct f_expr *f_new_ea_set(struct cf_context *cx, const struct f_attr *a, struct f_expr *v);
struct f_expr *f_new_ea_unset(struct cf_context *cx, const struct f_attr *a);
struct f_expr *f_new_defined(struct cf_context *cx, struct f_expr *e);
struct f_expr *f_new_symbol(struct cf_context *cx, struct symbol *s);
struct f_expr *f_new_assign(struct cf_context *cx, struct symbol *s, struct f_expr *v);
/* lvalue.method(arg) as a statement: lvalue = lvalue.method(arg) */
struct f_expr *f_new_lvalue_method(struct cf_context *cx, struct f_expr *lv, uint op, struct f_expr *arg);
struct f_expr *f_new_check_assign(struct cf_context *cx, struct f_expr *lv, struct f_expr *v);
struct f_expr *f_new_decl(struct cf_context *cx, uint type, struct symbol *s, struct f_expr *init);
struct f_expr *f_new_call(struct cf_context *cx, struct symbol *s, struct f_expr *args);
struct f_expr *f_new_if(struct cf_context *cx, struct f_expr *c, struct f_expr *t, struct f_expr *e);
struct f_expr *f_new_block(struct cf_context *cx, struct f_expr *list);
struct f_expr *f_new_return(struct cf_context *cx, struct f_expr *v);
struct f_expr *f_new_print(struct cf_context *cx, uint op, uint flags, struct f_expr *list);
struct f_expr *f_new_case(struct cf_context *cx, struct f_expr *v, struct f_arm *arms);
struct f_expr *f_new_for(struct cf_context *cx, struct f_expr *var, struct f_expr *list, struct f_expr *body);
struct f_expr *f_new_for_var(struct cf_context *cx, uint type, struct symbol *s);
struct f_expr *f_new_assert(struct cf_context *cx, struct f_expr *e, const char *text);
struct f_expr *f_new_roa_check(struct cf_context *cx, struct symbol *table, struct f_expr *net, struct f_expr *asn);
struct f_expr *f_new_aspa_check(struct cf_context *cx, struct symbol *table, struct f_expr *path, struct f_expr *up);
struct f_expr *f_new_format(struct cf_context *cx, struct f_expr *e);
struct f_expr *f_new_from_hex(struct cf_context *cx, struct f_expr *e);
struct f_expr *f_append(struct f_expr *list, struct f_expr *x);

/* Constant values of literal syntax */
struct f_val f_val_net(struct cf_context *cx, const net_addr *n);
struct f_val f_val_string(struct cf_context *cx, const char *s);
struct f_val f_val_empty(uint type);
/* interp_attr.c: an attribute's value as the filter type of a (e may be NULL) */
struct f_val f_ea_to_val(const struct f_attr *a, const struct eattr *e, const void *data, linpool *lp);
int f_lex_enum(const char *name, u32 *val);   /* (type << 16) | value */
struct f_val f_val_enum(u32 packed);

/* Sets */
struct f_setb *f_setb_new(struct cf_context *cx);
int f_setb_add(struct cf_context *cx, struct f_setb *s, struct f_val from, struct f_val to);
int f_setb_add_prefix(struct cf_context *cx, struct f_setb *s, const struct f_prefix *p);
/* Pair/ec/lc ranges with wildcards: component ranges lo..hi each. */
int f_setb_add_pair(struct cf_context *cx, struct f_setb *s, u32 a1, u32 a2, u32 b1, u32 b2);
int f_setb_add_ec(struct cf_context *cx, struct f_setb *s, uint kind, u32 key, u32 v1, u32 v2);
int f_setb_add_lc(struct cf_context *cx, struct f_setb *s, u32 a1, u32 a2, u32 b1, u32 b2, u32 c1, u32 c2);
int f_setb_finish(struct cf_context *cx, struct f_setb *s, struct f_val *out);
/* Add every range of src (a pair/ec/lc tuple item) to s. */
int f_setb_merge(struct cf_context *cx, struct f_setb *s, const struct f_setb *src);
/* Case labels from a tuple item: one arm per range, in order. */
struct f_arm *f_arms_from_set(struct cf_context *cx, const struct f_setb *s);

/* Constant evaluation (define, set atoms, expr) */
int f_eval_const(struct cf_context *cx, struct f_expr *e, struct f_val *out);
int f_eval_int(struct cf_context *cx, struct f_expr *e, u32 *out);

/* Symbols and scopes */
void f_scope_push(struct cf_context *cx);
void f_scope_pop(struct cf_context *cx);
struct f_local *f_find_local(struct cf_context *cx, struct symbol *s);
int f_define_attribute(struct cf_context *cx, struct symbol *s, uint type);
const struct f_attr *f_bgp_attr(uint code);

/* Filters and functions */
int f_function_start(struct cf_context *cx, struct symbol *s, int is_filter);
int f_function_arg(struct cf_context *cx, uint type, struct symbol *s);
void f_function_ret(struct cf_context *cx, uint type);
struct filter *f_function_end(struct cf_context *cx, struct f_expr *body);
/* Inline filter (channel `filter { }`, CLI) */
void f_inline_start(struct cf_context *cx);
struct filter *f_inline_end(struct cf_context *cx, struct f_expr *body);
struct filter *f_new_where(struct cf_context *cx, struct f_expr *cond);
int f_test_suite(struct cf_context *cx, struct symbol *fn, const char *desc);
int f_test_same(struct cf_context *cx, struct symbol *f, struct symbol *g, u32 expect);

/* Compile a statement list into bytecode. */
struct filter *f_compile(struct cf_context *cx, struct filter *f, struct f_expr *body);
int f_code_same(const struct filter *a, const struct filter *b);

/* Interpreter (filter/interp.c) */
#define F_ERR_NO_ROUTE "No route to work with"
struct f_exec_opts {
  void (*print)(void *ctx, const char *text);   /* `print` output; NULL: log */
  void *print_ctx;
  u32 *assert_failed;           /* bt_assert failures counted here */
  int silent;                   /* runtime errors: no log */
  char *errbuf;                 /* runtime error text goes here (may be NULL) */
  size_t errsize;
};
enum f_result f_exec(const struct filter *f, struct f_route *r, linpool *tmp, struct f_val *ret,
                     const struct f_exec_opts *opts);

/* filter/verdict_memo.c: mark f pure once its code is there; f_run() of
 * a pure filter (its verdict from the thread's memo when it has one). */
void f_mark_pure(struct filter *f);
enum f_result f_run_pure(const struct filter *f, struct f_route *r, linpool *tmp);

/* CLI `eval` (filter/filter.c) */
void f_cli_eval(struct cli *c, struct cf_context *cx, struct f_expr *e);
/* define NAME = term */
int f_define_constant(struct cf_context *cx, struct symbol *s, struct f_expr *e);

#endif
