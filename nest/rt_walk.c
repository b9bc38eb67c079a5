/*
 * DOC: Walks over the routes of one channel: its flush when it goes down
 * for good, and a refresh cycle's walk (withdraw what was not sent again,
 * replace what goes stale), which is also how a BGP session that goes
 * down drops its routes (in the table's loop for every channel going
 * down at the time: nest/rt_flush.c). Both visit every net of the table
 * in parts, each in a read section of its own and resumed from a
 * position of the index, and change the channel's routes in batches
 * (rt_update_batch).
 *
 * The walker's state (struct rt_walk_batch, the position) is on the stack
 * of the loop that walks: the channel's, the only one that imports
 * through it.
 */
#include <stdlib.h>
#include "nest/rt.h"
#include "nest/proto.h"
#include "nest/rt_walk.h"

/* A flush withdraws in batches of this many routes, and leaves its read
 * section every RT_FLUSH_NETS nets: a walk of a million nets in one
 * section would hold every grace period meanwhile, and with it the
 * memory of all the routes, nets and journal that its own withdrawals
 * (and everyone else's) retired. */
#define RT_FLUSH_BATCH 256
#define RT_FLUSH_NETS 4096

/* Nets the walk has stepped to but not visited yet: a visit reads the
 * routes of its net (senders, generations), a cache miss each, and the
 * net itself is one to the walk. A net is asked for as the walk steps to
 * it and visited RT_WALK_AHEAD nets later; in between its routes are
 * asked for one link further each time: the first RT_WALK_AHEAD / 2 nets
 * after the net, the next halfway from there to the visit, and so on for
 * RT_WALK_CHAIN routes (a route server's nets have a few paths each).
 * A walk of a table with 2-5 paths per net took 72 ns per route without,
 * 48-51 with (rt_bench rt/walk). */
#define RT_WALK_AHEAD 16
#define RT_WALK_CHAIN 3

static void
rt_walk_chain_prefetch(struct net *const *ring, uint head, uint queued)
{
  uint lag = RT_WALK_AHEAD / 2;
  for (uint d = 0; d < RT_WALK_CHAIN && queued > lag; d++, lag += (RT_WALK_AHEAD - lag) / 2) {
    const struct rte *r = rcu_dereference(ring[(head + queued - 1 - lag) % RT_WALK_AHEAD]->routes);
    for (uint j = 0; r && j < d; j++)
      r = rcu_dereference(r->next);
    rt_prefetch_rte(r);
  }
}

/* A position is a bucket's start (rcu_hash_pos). */
int
rt_walk_part(struct rtable *t, u64 *pos, uint max, void (*visit)(struct rtable *, struct net *, void *), void *ctx)
{
  struct rcu_hash_iter it;
  struct net *ring[RT_WALK_AHEAD];
  uint head = 0, queued = 0, stepped = 0;
  int stop = 0;
  struct net *n = rt_net_at(t, *pos, &it);
  while (queued || (n && !stop)) {
    if (n && !stop) {
      u32 step = it.step;
      ring[(head + queued++) % RT_WALK_AHEAD] = n;
      __builtin_prefetch(&n->routes);
      rt_walk_chain_prefetch(ring, head, queued);
      n = rt_next_net(t, &it);
      stop = ++stepped >= max && n && it.step != step;
      if (queued < RT_WALK_AHEAD && n && !stop)
        continue;
    }
    struct net *cur = ring[head];
    head = (head + 1) % RT_WALK_AHEAD;
    queued--;
    visit(t, cur, ctx);
  }
  *pos = n ? rcu_hash_pos(&it) : 0;
  return !n;
}

void
rt_walk_batch_apply(struct rtable *t, struct rt_walk_batch *b)
{
  rt_update_batch(t, b->c, b->im, b->k);
  for (uint i = 0; i < b->k; i++) {
    uint res = b->im[i].result;
    b->count += res != RT_UPD_NONE;
    b->removed += (res & RT_UPD_USABLE) == RT_UPD_REMOVE;
    b->modified += (res & RT_UPD_USABLE) == RT_UPD_REPLACE;
    b->filt_removed += !!(res & RT_UPD_FILTERED_REMOVE);
    /* the walk's reference to a replacement: the route took its own */
    if (b->im[i].attrs)
      ea_unref(b->im[i].attrs);
  }
  b->k = 0;
}

void
rt_walk_batch_add(struct rtable *t, struct rt_walk_batch *b, struct rt_import im)
{
  if (b->k == b->cap)
    rt_walk_batch_apply(t, b);
  b->im[b->k++] = im;
}

/* The routes of a net are taken by source, in one look at its chain: a
 * withdrawal finds the route of its source wherever another one's
 * withdrawal moved it (rt_group_settle replaces it by a copy, same
 * source). A net stays valid in the read section its batch runs in. */
static void
rt_flush_net(struct rtable *t, struct net *n, void *ctx)
{
  struct rt_walk_batch *f = ctx;
  for (struct rte *r = rcu_dereference(n->routes); r; r = rcu_dereference(r->next))
    if (r->sender == f->sid)
      rt_walk_batch_add(t, f, (struct rt_import){ .net = &n->n, .src = rte_src(r) });
}

uint
rt_flush_channel(struct rtable *t, struct channel *c)
{
  /* Only the channel's own loop imports through it, and that is where
   * this runs: its routes the walk sees stay until withdrawn here. */
  struct rt_import im[RT_FLUSH_BATCH];
  struct rt_walk_batch f = { .c = c, .sid = chan_sender_id(c, t), .im = im, .cap = RT_FLUSH_BATCH };
  u64 pos = 0;
  int done;
  do {
    rcu_read_lock();
    done = rt_walk_part(t, &pos, RT_FLUSH_NETS, rt_flush_net, &f);
    if (f.k)
      rt_walk_batch_apply(t, &f);
    rcu_read_unlock();
  } while (!done);
  return f.count;
}

/* What the op does to route r of its channel: 0 nothing, 1 withdraw, 2 modify. */
static int
rt_stale_action(const struct rt_stale_op *op, u16 sid, const struct rte *r)
{
  if (r->sender != sid)
    return 0;
  if (op->flush && rte_gen_older(r, op->flush_gen))
    return 1;
  if (op->modify && rte_gen_older(r, op->modify_gen) && (!op->select || op->select(op->c, r)))
    return 2;
  return 0;
}

struct rt_stale_ctx {
  const struct rt_stale_op *op;
  struct rt_walk_batch b;
};

/* One net. Inside rcu_read_lock(). Only the channel's own loop imports
 * through it, and that is where walks run: the routes we pick here do
 * not change before the batch re-finds them by source. A net's changes
 * are picked before any of them is applied: a replacement put further
 * down the chain would be met again, still stale. */
static void
rt_stale_net(struct rtable *t, struct net *n, void *ctx)
{
  struct rt_stale_ctx *w = ctx;
  const struct rt_stale_op *op = w->op;
  struct rt_import buf[8], *ch = buf;
  uint cnt = 0;
  for (struct rte *r = rcu_dereference(n->routes); r; r = rcu_dereference(r->next))
    cnt += !!rt_stale_action(op, w->b.sid, r);
  if (!cnt)
    return;
  if (cnt > ARRAY_SIZE(buf) && !(ch = malloc(cnt * sizeof(*ch))))
    die("Out of memory");
  uint k = 0;
  for (struct rte *r = rcu_dereference(n->routes); r && k < cnt; r = rcu_dereference(r->next)) {
    int act = rt_stale_action(op, w->b.sid, r);
    /* a route kept with REF_FILTERED stays so when modified */
    if (act)
      ch[k++] = (struct rt_import){ .net = &n->n, .src = rte_src(r), .attrs = act == 2 ? op->modify(op->c, r) : NULL,
                                    .flags = rte_flags(r), .keep_gen = 1, .gen = uatomic_read(&r->refresh_gen) };
  }
  for (uint i = 0; i < k; i++)
    rt_walk_batch_add(t, &w->b, ch[i]);
  if (ch != buf)
    free(ch);
}

int
rt_stale_walk(struct rtable *t, const struct rt_stale_op *op, u64 *pos, uint max,
              uint *removed, uint *modified)
{
  struct rt_import im[RT_FLUSH_BATCH];
  struct rt_stale_ctx w = { .op = op, .b = { .c = op->c, .sid = chan_sender_id(op->c, t), .im = im, .cap = RT_FLUSH_BATCH } };
  rcu_read_lock();
  int done = rt_walk_part(t, pos, max, rt_stale_net, &w);
  if (w.b.k)
    rt_walk_batch_apply(t, &w.b);
  rcu_read_unlock();
  *removed += w.b.removed;
  *modified += w.b.modified;
  if (w.b.filt_removed)
    uatomic_sub(&op->c->stats.filt_routes, w.b.filt_removed);
  return done;
}
