/*
 * DOC: The ROA and ASPA tables a filter reads.
 *
 * A filter that calls roa_check() or aspa_check() gives a different
 * verdict when such a table changes, so its channels subscribe to those
 * tables and re-run it (nest/channel_roa.c, BIRD's `rpki reload`). The
 * tables are found in the code: the plain instructions, the fused
 * compare-with-constant ones, and the functions it calls.
 */
#include <stdlib.h>
#include "filter/filter.h"
#include "filter/f_inst.h"

/* Functions already walked: each once, however often it is called (and
 * recursion ends). A config with more functions than this is walked only
 * in part, which a real one never has. */
#define F_TABLES_MAX_SEEN 1024
struct f_tables_seen {
  const struct filter *f[F_TABLES_MAX_SEEN];
  uint n;
};

static void
f_tables_walk(const struct filter *f, void (*cb)(void *ctx, struct rtable_config *t), void *ctx,
              struct f_tables_seen *seen)
{
  if (!f || f == FILTER_ACCEPT || f == FILTER_REJECT)
    return;
  for (uint i = 0; i < seen->n; i++)
    if (seen->f[i] == f)
      return;
  if (seen->n == F_TABLES_MAX_SEEN)
    return;
  seen->f[seen->n++] = f;
  for (uint i = 0; i < f->len; i++) {
    const struct f_insn *x = &f->code[i];
    switch (x->op) {
    case FI_ROA_CHECK: case FI_ROA_CHECK_ROUTE: case FI_ASPA_CHECK:
      cb(ctx, (struct rtable_config *) x->p.p);
      break;
    case FI_JCMP_RT: case FI_JMATCH_RT: case FI_JCMP_PATH: {
      const struct f_jtest *t = x->p.p;
      if (t->method == FI_ROA_CHECK)
        cb(ctx, (struct rtable_config *) t->table);
      break;
    }
    case FI_CALL:
      f_tables_walk(x->p.p, cb, ctx, seen);
      break;
    default:
      break;
    }
  }
}

void
filter_tables(const struct filter *f, void (*cb)(void *ctx, struct rtable_config *t), void *ctx)
{
  struct f_tables_seen *seen = malloc(sizeof(*seen));
  if (!seen)
    return;
  seen->n = 0;
  f_tables_walk(f, cb, ctx, seen);
  free(seen);
}
