/*
 * DOC: Update groups: the class filters of a step of changes, over the pool.
 *
 * A route server's group runs every export class's filter on every change
 * (bgp_group_class.c): with a filter per client that is most of the
 * group's work, and all of it on the group's loop, one thread. Only the
 * verdicts and results are that work, and they depend on the route alone
 * (filters are functions of the route). So with two or more classes and
 * threads to spare, the group keeps the changes of an export pass in a
 * step instead of running them one by one; at the pass's end, or when the
 * step is full, it cuts the step into chunks of changes for the pool
 * (lib/par.h: its own thread takes the chunks no helper took), each chunk
 * writing the verdicts of its changes into their own rows. Then the group
 * applies the rows in the order of the changes, as if it had run them one
 * by one: counters, traces, what each class gets (bgp_gout). When every
 * class's filter reads only the route's attributes (group_class_pure()),
 * a route like one of an earlier change of the step runs no filter: its
 * row takes that change's verdicts between the chunks and the applying.
 *
 * The cohort walk that feeds late members (bgp_group_feed.c) keeps its
 * nets in the same steps: each cohort class's filter on the net's
 * exported route, the feed items then sent in the walk's order.
 *
 * The routes kept are RCU-protected for the export pass (or the walk's
 * read section) only, and their references held by the pass's reader
 * (rt_reader_hold(): a later change of the pass may retire one), which
 * is why the step runs before the pass ends (export_flush) or the walk
 * pauses, and before anything else goes to the group's output
 * (group_pack), so that nothing overtakes what it keeps.
 *
 * Owner: the group's loop; the chunks' rows are their chunk's while
 * par_run() runs.
 */
#include <string.h>
#include "proto/bgp/bgp_group_int.h"
#include "lib/par.h"
#include "lib/hash.h"

/* Rows of a step: class runs in all (changes times classes), so that its
 * memory stays some 500 kB whatever the classes; at least this many
 * changes. */
#define STEP_CELLS 16384
#define STEP_MIN 16
/* Class runs per chunk: enough to be worth a claim, few enough that the
 * chunks spread over a dozen threads in a step. */
#define STEP_CHUNK_RUNS 512

/* A change of the export pass, or a net of the cohort walk (feed: new
 * is the exported route, seen through mod, held; but: the member it came
 * from, if in the cohort). */
struct step_change {
  const net_addr *n;
  const struct rte *new, *old;
  const struct ea_list *new_src;
  struct ea_list *mod;
  u32 but;
  bool feed;
};

/* The group's loop's; a chunk's rows are the chunk's while par_run() runs. */
struct group_step {
  struct step_change *ch;
  struct cls_verdicts *v;       /* a row per change */
  struct ea_list **now;         /* the rows' arrays: ncls per row */
  struct cls_result *res;
  u32 *bits;                    /* had and takes: words each per row */
  uint n, size;                 /* changes kept, room */
  uint ncls;                    /* classes the rows have room for */
  /* Chunk k is changes cut[k] .. cut[k + 1] - 1: STEP_CHUNK_RUNS class
   * runs each, a route whose verdicts are shared counting none. */
  uint *cut;
  /* With pure class filters: change i's new route is like that of change
   * rep[i] (i itself: the first such of the step), its old one like that
   * of change rep[size + i]; only the first runs the filters, the others
   * share its verdicts once the chunks are done. */
  u32 *rep;
  u32 *seen;                    /* the step's routes by key: change + 1, 0: free */
  uint seen_size;               /* a power of two, at least twice size */
  bool pure;                    /* group_class_pure() as the step runs */
  struct bgp_group *g;
};

static void
step_arrays_free(struct group_step *s)
{
  if (!s->size)
    return;
  mb_free(s->ch);
  mb_free(s->v);
  mb_free(s->now);
  mb_free(s->res);
  mb_free(s->bits);
  mb_free(s->cut);
  mb_free(s->rep);
  mb_free(s->seen);
  s->size = 0;
}

/* Rows for the group's classes now; nothing kept. */
static void
step_size(struct bgp_group *g, struct group_step *s)
{
  if (s->size && s->ncls == g->ncls)
    return;
  step_arrays_free(s);
  uint ncls = g->ncls, words = bgp_class_words(ncls);
  uint size = MAX(STEP_MIN, STEP_CELLS / ncls);
  pool *p = g->p.run_pool;
  s->ch = mb_alloc(p, size * sizeof(*s->ch));
  s->v = mb_alloc(p, size * sizeof(*s->v));
  s->now = mb_alloc(p, (size_t) size * ncls * sizeof(*s->now));
  s->res = mb_alloc(p, (size_t) size * ncls * sizeof(*s->res));
  s->bits = mb_alloc(p, (size_t) size * 2 * words * sizeof(u32));
  s->cut = mb_alloc(p, (size + 1) * sizeof(*s->cut));
  s->rep = mb_alloc(p, 2 * size * sizeof(*s->rep));
  for (s->seen_size = 64; s->seen_size < 2 * size; s->seen_size *= 2)
    ;
  s->seen = mb_alloc(p, s->seen_size * sizeof(*s->seen));
  for (uint i = 0; i < size; i++)
    s->v[i] = (struct cls_verdicts) {
      .now = s->now + (size_t) i * ncls,
      .had = s->bits + (size_t) i * 2 * words,
      .takes = s->bits + (size_t) i * 2 * words + words,
      .res = { .r = s->res + (size_t) i * ncls },
    };
  s->size = size;
  s->ncls = ncls;
}

/* Worth a step: classes to run for each change, threads to run them. */
static bool
step_wanted(const struct bgp_group *g)
{
  return g->nlive >= 2 && par_width(g->par) > 1;
}

/* The step with room for one more, or NULL: run it now. */
static struct group_step *
step_room(struct bgp_group *g)
{
  struct group_step *s = g->step;
  if (!s || !s->n) {
    if (!step_wanted(g))
      return NULL;
    if (!s) {
      s = g->step = mb_allocz(g->p.run_pool, sizeof(*s));
      s->g = g;
    }
    step_size(g, s);
  } else if (s->n == s->size)
    group_step_run(g);
  return s;
}

void
group_step_change(struct bgp_group *g, const net_addr *n, const struct rte *new, const struct rte *old,
                  const struct ea_list *new_src)
{
  struct group_step *s = step_room(g);
  if (!s)
    group_class_change(g, n, new, old, new_src);
  else
    s->ch[s->n++] = (struct step_change) { .n = n, .new = new, .old = old, .new_src = new_src };
}

void
group_step_feed(struct bgp_group *g, const net_addr *n, const struct rte *exp, struct ea_list *mod, u32 but)
{
  struct group_step *s = step_room(g);
  if (s) {
    s->ch[s->n++] = (struct step_change) { .n = n, .new = exp, .new_src = rte_attrs(exp), .mod = mod, .but = but,
                                           .feed = true };
    return;
  }
  struct rte view = rte_view(exp, mod);
  group_class_feed(g, n, &view, rte_attrs(exp), but);
  if (mod)
    ea_unref(mod);
}

/* The key of a route (and for a new one, the attributes it came with)
 * in the step's table. */
static inline u32
step_key(const struct rte *r, const struct ea_list *src)
{
  return hash_ptr(rte_attrs(r)) ^ (hash_ptr(rte_src(r)) * 0x9e3779b1U) ^ (src ? hash_ptr(src) >> 1 : 0) ^ rte_flags(r);
}

/* rep[]: with pure filters, each change's new (old) route looked up among
 * those of the changes before it in the step. Most old routes are like
 * one met a few changes earlier, not like the one just before (82% and
 * 11% at 100 clients with a filter each); most new ones like the one
 * before (an UPDATE's prefixes). */
static void
step_reps(struct group_step *s)
{
  for (uint old = 0; old < 2; old++) {
    u32 *rep = s->rep + old * s->size;
    if (s->pure)
      memset(s->seen, 0, s->seen_size * sizeof(*s->seen));
    for (uint i = 0; i < s->n; i++) {
      const struct step_change *c = &s->ch[i];
      const struct rte *r = old ? c->old : c->new;
      const struct ea_list *src = old ? NULL : c->new_src;
      rep[i] = i;
      if (!s->pure || c->feed || !r)
        continue;
      for (u32 h = step_key(r, src) & (s->seen_size - 1);; h = (h + 1) & (s->seen_size - 1)) {
        if (!s->seen[h]) {
          s->seen[h] = i + 1;
          break;
        }
        const struct step_change *p = &s->ch[s->seen[h] - 1];
        if (old ? group_rte_alike(p->old, r) : group_rte_alike(p->new, r) && p->new_src == src) {
          rep[i] = s->seen[h] - 1;
          break;
        }
      }
    }
  }
}

/* Does change i run the filters on its new (old) route? */
static inline bool step_runs_new(const struct group_step *s, uint i) { return s->ch[i].new && s->rep[i] == i; }
static inline bool step_runs_old(const struct group_step *s, uint i)
{
  return s->ch[i].old && s->rep[s->size + i] == i;
}

/* The chunks: class runs (a feed's net one per class, a change one per
 * class for its new route and one for its old, unless shared) up to
 * STEP_CHUNK_RUNS each. */
static uint
step_cut(struct group_step *s, uint nlive)
{
  uint chunks = 0, runs = 0;
  s->cut[0] = 0;
  for (uint i = 0; i < s->n; i++) {
    const struct step_change *c = &s->ch[i];
    uint cost = (c->feed ? 1 : step_runs_new(s, i) + step_runs_old(s, i)) * nlive;
    if (runs && runs + cost > STEP_CHUNK_RUNS) {
      s->cut[++chunks] = i;
      runs = 0;
    }
    runs += cost;
  }
  s->cut[++chunks] = s->n;
  return chunks;
}

static void
step_chunk(void *ctx, uint chunk, linpool *tmp)
{
  struct group_step *s = ctx;
  uint start = s->cut[chunk], end = s->cut[chunk + 1];
  for (uint i = start; i < end; i++) {
    const struct step_change *c = &s->ch[i];
    if (c->feed) {
      struct rte view = rte_view(c->new, c->mod);
      group_class_feed_verdicts(s->g, c->n, &view, c->new_src, &s->v[i], tmp);
    } else
      group_class_verdicts(s->g, c->n, step_runs_new(s, i) ? c->new : NULL, step_runs_old(s, i) ? c->old : NULL,
                           c->new_src, &s->v[i], tmp);
  }
}

/* The shared verdicts, from rows the chunks made: before any row is
 * applied, which drops its results. */
static void
step_share(struct group_step *s)
{
  if (!s->pure)
    return;
  for (uint i = 0; i < s->n; i++) {
    const struct step_change *c = &s->ch[i];
    if (c->feed)
      continue;
    bool same_new = c->new && !step_runs_new(s, i), same_old = c->old && !step_runs_old(s, i);
    if (same_new || same_old)
      group_class_share(s->g, &s->v[i], same_new ? &s->v[s->rep[i]] : NULL,
                        same_old ? &s->v[s->rep[s->size + i]] : NULL);
  }
}

void
group_step_run(struct bgp_group *g)
{
  struct group_step *s = g->step;
  if (!s || !s->n)
    return;
  s->pure = group_class_pure(g);
  step_reps(s);
  par_run(g->par, step_cut(s, MAX(g->nlive, 1U)), step_chunk, s, g->ftmp);
  step_share(s);
  for (uint i = 0; i < s->n; i++) {
    const struct step_change *c = &s->ch[i];
    if (c->feed) {
      struct rte view = rte_view(c->new, c->mod);
      group_class_feed_apply(g, c->n, &view, c->but, &s->v[i]);
      if (c->mod)
        ea_unref(c->mod);
    } else
      group_class_apply(g, c->n, c->new, c->old, &s->v[i]);
  }
  s->n = 0;
}

void
group_step_free(struct bgp_group *g)
{
  struct group_step *s = g->step;
  if (!s)
    return;
  /* the rows get their references when run; only the feed's views hold one */
  for (uint i = 0; i < s->n; i++)
    if (s->ch[i].mod)
      ea_unref(s->ch[i].mod);
  step_arrays_free(s);
  mb_free(s);
  g->step = NULL;
}
