/*
 * DOC: libFuzzer harness for the config parser and the filter compiler.
 *
 * Input: config text (up to the first NUL). It is parsed and compiled by
 * config_parse_text() after a `protocol device {}` line (a config needs
 * one protocol), as `bird -p` would, but in-process: no loops, no
 * sockets, no tables. Whatever compiles is then run: every filter and
 * every function without arguments, once on a small BGP route and once
 * with no route (as `eval` does), so that code the type checker accepted
 * meets the interpreter; every `define`d value is printed as `eval` would
 * print it. Then the config is freed.
 *
 * Findings: crashes, sanitizer reports, leaks (LeakSanitizer after each
 * input; attribute lists kept interned by a filter run are counted), and
 * hangs (libFuzzer's -timeout; the interpreter's step and depth limits
 * must end runaway code first). `include` is skipped: it would read
 * whatever files the current directory holds.
 *
 * Build and run: tools/fuzz.sh filter-conf [seconds].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter/f_fuzz.h"
#include "filter/f_test.h"

static linpool *fz_lp;
static struct ea_list *fz_attrs;
static net_addr fz_net;

/* A route from AS 65001 via 100 and 1, two communities, MED 5. */
static struct ea_list *
fz_route_attrs(void)
{
  static const u32 asns[] = { 65001, 100, 1 }, comm[] = { (65001u << 16) | 1, (64500u << 16) | 7 };
  return f_test_bgp_attrs(asns, ARRAY_SIZE(asns), comm, ARRAY_SIZE(comm), 5);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void) argc;
  (void) argv;
  f_fuzz_init();
  fz_lp = lp_new(root_pool());
  fz_attrs = fz_route_attrs();
  net_fill_ip4(&fz_net, ip4_from_u32(0x0a000000), 8);
  return 0;
}

static void
fz_run_all(struct config *c)
{
  for (struct symbol *s = c->sym_first; s; s = s->next_all) {
    if (s->class == SYM_CONSTANT && s->val->fv) {
      /* `define`d values go through the printers (eval, print, format) */
      struct buffer b;
      buffer_init(&b);
      val_format(s->val->fv, &b);
      buffer_free(&b);
      continue;
    }
    if (s->class != SYM_FILTER && s->class != SYM_FUNCTION)
      continue;
    const struct filter *f = s->def;
    if (f->argc)
      continue;
    struct f_route r = { .net = &fz_net, .attrs = fz_attrs, .proto_name = "fuzz" };
    f_fuzz_exec(f, &r, fz_lp);
    f_fuzz_exec(f, NULL, fz_lp);
  }
}

int
LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
  static const char head[] = "protocol device {}\n";
  char *text = malloc(sizeof(head) + size);
  memcpy(text, head, sizeof(head) - 1);
  memcpy(text + sizeof(head) - 1, data, size);
  text[sizeof(head) - 1 + size] = 0;
  if (strstr(text, "include")) {
    free(text);
    return -1;   /* not added to the corpus */
  }

  u64 before = ea_count();
  struct cf_error err;
  struct config *c = config_parse_text("fuzz.conf", text, &err);
  if (c) {
    fz_run_all(c);
    config_unref(c);
  }
  f_fuzz_end(before, "config run");
  free(text);
  return 0;
}
