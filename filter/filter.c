/*
 * DOC: Filters: running them on routes, comparing them, testing them.
 *
 * f_run() is what channels and `show route` call: it runs the bytecode on
 * one route and hands back the verdict and, when attributes changed, a
 * new interned attribute list. The ACCEPT/REJECT sentinels never reach
 * the interpreter. `eval` and `bird -T` reuse the same interpreter with no
 * route (eval) or a dummy one (self-tests).
 */
#include <stdlib.h>
#include <string.h>
#include "filter/f_inst.h"
#include "nest/cli.h"
#include "lib/log.h"
#include "lib/printf.h"

const struct filter filter_accept_all = { .name = "ACCEPT", .kind = FK_ACCEPT };
const struct filter filter_reject_all = { .name = "REJECT", .kind = FK_REJECT };

enum f_result
f_run(const struct filter *f, struct f_route *r, linpool *tmp)
{
  r->out = NULL;
  if (f == FILTER_REJECT)
    return F_REJECT;
  if (f == FILTER_ACCEPT) {
    if (r->set_preference && r->attrs->preference != r->set_preference) {
      struct ea_builder b;
      ea_builder_from(&b, r->attrs);
      b.preference = r->set_preference;
      r->out = ea_intern(&b);
    }
    return F_ACCEPT;
  }
  enum f_result res = f->pure ? f_run_pure(f, r, tmp) : f_exec(f, r, tmp, NULL, NULL);
  if (res == F_ACCEPT || res == F_REJECT || res == F_ERROR)
    return res;
  /* Fell off the end (or returned) without a verdict. */
  if (r->out) {
    ea_unref(r->out);
    r->out = NULL;
  }
  log_msg(L_ERR, "Filter %s did not return accept nor reject. Make up your mind", filter_name(f));
  return F_ERROR;
}

bool
f_run_export(const struct filter *f, struct f_route *r, linpool *tmp)
{
  enum f_result res = f_run(f, r, tmp);
  lp_flush(tmp);
  if (res != F_ACCEPT) {
    if (r->out)
      ea_unref(r->out);
    r->out = NULL;
    return false;
  }
  if (r->out && r->out == r->attrs) {
    ea_unref(r->out);
    r->out = NULL;
  }
  return true;
}

enum f_result
f_eval_rte(const struct filter *f, struct f_route *r, linpool *tmp)
{
  r->out = NULL;
  enum f_result res = f_exec(f, r, tmp, NULL, NULL);
  if (res == F_ERROR) {
    if (r->out)
      ea_unref(r->out);
    r->out = NULL;
    return F_ERROR;
  }
  return F_NOP;
}

int
filter_same(const struct filter *a, const struct filter *b)
{
  if (a == b)
    return 1;
  if (a == FILTER_ACCEPT || a == FILTER_REJECT || b == FILTER_ACCEPT || b == FILTER_REJECT || !a || !b)
    return 0;
  return f_code_same(a, b);
}

const char *
filter_name(const struct filter *f)
{
  if (!f)
    return "ACCEPT";
  if (f == FILTER_ACCEPT)
    return "ACCEPT";
  if (f == FILTER_REJECT)
    return "REJECT";
  return f->name ? f->name : "(unnamed)";
}

/* --- eval --- */

void
f_cli_eval(struct cli *c, struct cf_context *cx, struct f_expr *e)
{
  struct filter f = { .kind = FK_FUNCTION, .name = "eval" };
  struct f_expr r = { .op = FI_RETURN, .type = T_VOID, .a = e, .line = e->line };
  f_compile(cx, &f, &r);
  struct f_val v;
  char err[160] = "";
  struct f_exec_opts o = { .silent = 1, .errbuf = err, .errsize = sizeof(err) };
  if (f_exec(&f, NULL, cx->mem, &v, &o) != F_RETURN) {
    /* BIRD evaluates constant parts while parsing and reports them so. */
    if (!strcmp(err, F_ERR_NO_ROUTE) || !err[0])
      cli_printf(c, 8008, "runtime error");
    else
      cli_printf(c, 9001, "filter preevaluation, line %u: %s", e->line, err);
    return;
  }
  cli_printf(c, 23, "%s", val_format_str(&v, cx->mem));
}

/* --- Self-tests --- */

struct t_ctx {
  void (*print)(void *ctx, const char *line);
  void *ctx;
};

static void
t_print(void *ctx, const char *text)
{
  struct t_ctx *t = ctx;
  t->print(t->ctx, text);
}

static int
test_cmp(const void *x, const void *y)
{
  const struct filter *a = *(const struct filter *const *) x, *b = *(const struct filter *const *) y;
  return a->test_seq < b->test_seq ? -1 : a->test_seq > b->test_seq;
}

int
filter_run_tests(struct config *c, void (*print)(void *ctx, const char *line), void *ctx)
{
  uint n = 0, passed = 0, failed = 0;
  for (struct symbol *s = c->sym_first; s; s = s->next_all)
    if ((s->class == SYM_FUNCTION || s->class == SYM_FILTER) && ((struct filter *) s->def)->test_seq)
      n++;
  const struct filter **tests = malloc((n + 1) * sizeof(*tests));
  n = 0;
  for (struct symbol *s = c->sym_first; s; s = s->next_all)
    if ((s->class == SYM_FUNCTION || s->class == SYM_FILTER) && ((struct filter *) s->def)->test_seq)
      tests[n++] = s->def;
  qsort(tests, n, sizeof(*tests), test_cmp);

  rcu_thread_register();
  linpool *lp = lp_new(c->pool);
  net_addr net;
  net_fill_ip4(&net, ip4_from_u32(0), 0);
  struct ea_builder b;
  ea_builder_init(&b);
  struct ea_list *attrs = ea_intern(&b);
  struct t_ctx tc = { print, ctx };
  char line[512];

  for (uint i = 0; i < n; i++) {
    const struct filter *f = tests[i];
    if (f->test_desc) {
      u32 asserts = 0;
      struct f_exec_opts o = { .print = t_print, .print_ctx = &tc, .assert_failed = &asserts };
      struct f_route r = { .net = &net, .attrs = attrs, .proto_name = "test" };
      enum f_result res = f_exec(f, &r, lp, NULL, &o);
      if (r.out)
        ea_unref(r.out);
      int ok = (res == F_RETURN || res == F_NOP || res == F_ACCEPT) && !asserts;
      bsnprintf(line, sizeof(line), "[%s] %s: %s", ok ? " OK " : "FAIL", f->name, f->test_desc);
      print(ctx, line);
      ok ? passed++ : failed++;
      lp_flush(lp);
    }
    for (const struct f_same_test *t = f->same; t; t = t->next) {
      int same = f_code_same(f, t->other);
      int ok = same == t->expect;
      bsnprintf(line, sizeof(line), "[%s] bt_test_same(%s, %s, %d)", ok ? " OK " : "FAIL", f->name,
                t->other->name ? t->other->name : "?", t->expect);
      print(ctx, line);
      ok ? passed++ : failed++;
    }
  }
  ea_unref(attrs);
  free(tests);
  bsnprintf(line, sizeof(line), "%u passed, %u failed", passed, failed);
  print(ctx, line);
  return failed;
}
