/*
 * DOC: Filters: the public interface.
 *
 * A struct filter is a compiled filter (or function, or `where` condition)
 * from the config: flat bytecode plus its constants. It is immutable and
 * lives as long as its config. f_run() interprets it on one route; it is
 * re-entrant and keeps no global state, so any loop may run any filter
 * concurrently. Writes to attributes are collected copy-on-write and the
 * result is interned once at the end.
 *
 * Two sentinels stand for `all` and `none` (FILTER_ACCEPT, FILTER_REJECT);
 * channels hold a filter pointer and test for them before running code.
 */
#ifndef FILTER_FILTER_H
#define FILTER_FILTER_H

#include "lib/birdlib.h"
#include "lib/net.h"
#include "lib/resource.h"
#include "nest/rt_attr.h"

struct filter;
struct rte_src;
struct cli;
struct config;

extern const struct filter filter_accept_all, filter_reject_all;
#define FILTER_ACCEPT (&filter_accept_all)
#define FILTER_REJECT (&filter_reject_all)

enum f_result {
  F_NOP = 0,      /* ran to the end without a verdict (a filter then rejects) */
  F_ACCEPT,       /* accept */
  F_REJECT,       /* reject */
  F_ERROR,        /* runtime error: logged; the route is rejected */
  F_RETURN,       /* internal: function return */
};

/* One route as a filter sees it. */
struct f_route {
  const net_addr *net;
  struct ea_list *attrs;        /* interned input; the caller holds a reference */
  const struct rte_src *src;    /* `proto`, `source` of the sender; may be NULL */
  const char *proto_name;       /* overrides src->proto->name when set */
  u32 set_preference;           /* nonzero: start with this preference (import stamping) */
  bool verdict_only;            /* the caller wants accept or reject: out stays NULL
                                   (no attribute list is made or looked up) */
  /* Output of f_run(): NULL if the attributes did not change or the route
   * was rejected, otherwise a new interned list with one reference that
   * the caller must ea_unref(). */
  struct ea_list *out;
};

/* Run a filter on a route; tmp holds scratch values (flush it afterwards). */
enum f_result f_run(const struct filter *f, struct f_route *r, linpool *tmp);

/* Do f's verdict and result on a route depend on its attribute list
 * (and a stamped preference) alone (filter/verdict_memo.c)? Also for
 * the ACCEPT and REJECT sentinels. */
bool filter_pure(const struct filter *f);

/* The same for an export: accepted or not; r->out is NULL unless
 * accepted with other attributes. Flushes tmp. */
bool f_run_export(const struct filter *f, struct f_route *r, linpool *tmp);

/* Run statements that set attributes and need no verdict (static routes'
 * `{ ... }` blocks); r->out as for f_run(). Returns F_NOP, or F_ERROR. */
enum f_result f_eval_rte(const struct filter *f, struct f_route *r, linpool *tmp);

/* Same code (reconfiguration keeps a channel whose filter is the same). */
int filter_same(const struct filter *a, const struct filter *b);

/* Each ROA or ASPA table the filter (or a function it calls) reads, maybe
 * more than once: their changes change its verdicts (filter/f_tables.c). */
struct rtable_config;
void filter_tables(const struct filter *f, void (*cb)(void *ctx, struct rtable_config *t), void *ctx);

/* "ACCEPT", "REJECT", the filter's name, or "(unnamed)". */
const char *filter_name(const struct filter *f);

/*
 * Self-tests (`bird -T`): run every bt_test_suite of a config, print one
 * line per suite and a summary to out; returns the number of failures.
 */
int filter_run_tests(struct config *c, void (*print)(void *ctx, const char *line), void *ctx);

/* `show route all` prints config-declared attributes (start-up). */
void f_user_attr_init(void);

#endif
