/*
 * DOC: What the filter fuzzers (f_fuzz_conf.c, f_fuzz_interp.c) share.
 *
 * The daemon's start-up minus the loops: pools, logging, the attribute
 * intern hash and every protocol class, so that any config text the
 * grammar accepts can be parsed in-process. Log lines below L_FATAL are
 * dropped (runtime errors of fuzzed filters are expected, and writing
 * them would only slow the fuzzer down). A runner executes a compiled
 * filter or function with `print` output discarded.
 *
 * Only the fuzz harnesses include this; tools/fuzz.sh builds them.
 */
#ifndef FILTER_F_FUZZ_H
#define FILTER_F_FUZZ_H

#include "conf/conf.h"
#include "filter/f_inst.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/rcu.h"
#include "nest/ea_bgp.h"
#include "nest/ea_memo.h"
#include "proto/protos.h"

static inline void
f_fuzz_init(void)
{
  resource_init();
  log_init("fuzz");
  hash_seed_init();
  ea_init();
  f_user_attr_init();
  protos_build_all();
  rcu_thread_register();

  static struct lnode logs;
  static struct log_config quiet = { .dest = LOG_DEST_STDERR, .mask = (1u << L_FATAL) | (1u << L_BUG) };
  char err[128];
  list_init(&logs);
  list_add_tail(&logs, &quiet.n);
  log_switch(&logs, &tf_default_log, err, sizeof(err));
}

static inline void
f_fuzz_print(void *ctx, const char *text)
{
  (void) ctx;
  (void) text;
}

/* Run f on r (NULL: no route, as `eval` does); r->out is released. */
static inline enum f_result
f_fuzz_exec(const struct filter *f, struct f_route *r, linpool *lp)
{
  struct f_exec_opts o = { .print = f_fuzz_print, .silent = 1 };
  struct f_val ret;
  enum f_result res = f_exec(f, r, lp, &ret, &o);
  if (r && r->out) {
    ea_unref(r->out);
    r->out = NULL;
  }
  lp_flush(lp);
  return res;
}

/* End of one input: the number of interned attribute lists must come
 * back to where it was (a run that keeps a reference leaks the list for
 * good, and LeakSanitizer cannot tell: the intern hash still points to it).
 * Lists are freed after an RCU grace period, so an input's mallocs and
 * frees do not always balance; libFuzzer then soon stops its per-input
 * leak checks, and LeakSanitizer's check at exit reports what leaked
 * (rcu_barrier() here would keep them balanced but costs 10 ms an input). */
static inline void
f_fuzz_end(u64 before, const char *what)
{
  ea_memo_flush();              /* memoized results are references kept on purpose */
  if (ea_count() != before) {
    fprintf(stderr, "fuzz: %s: %llu interned attribute lists before, %llu after\n", what,
            (unsigned long long) before, (unsigned long long) ea_count());
    abort();
  }
}

#endif
