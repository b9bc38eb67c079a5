/*
 * Update group output: changes and feed items until the flush, then
 * UPDATEs into the log (bgp_gout.h says what goes to whom).
 *
 * Nothing is bucketed while changes come in: a change is one hash lookup
 * and, the first time, one slab node. The flush groups what it sends by
 * (audience, attributes) in one pass, so every run of equal keys packs
 * into full UPDATEs, and a net can give two messages (the announcement to
 * the others, the withdrawal to the member it came from) without living
 * in two buckets. (qsort() did the grouping first: a quarter of the
 * daemon's time at 100 joining peers.)
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "proto/bgp/bgp_gout.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/rcu.h"
#include "lib/thread_buf.h"
#include "nest/rt_attr.h"

/* A net changed since the last flush. */
struct gout_change {
  struct hash_node hn;
  struct lnode n;               /* in changes, in the order of first change */
  struct ea_list **now;         /* what each class gets now, NULL: nothing (now1 with one class) */
  u32 *had;                     /* at the first change: the classes that had a route (had1) */
  struct ea_list *now1;
  u32 had1;
  u32 now_src;                  /* member it came from, 0: none */
  u32 src_cls;                  /* its class */
  u32 was_src;                  /* at the first change: member the old route came from */
  net_addr net;
};

/* A feed item (a net, announced with attrs or withdrawn) or a raw message
 * (msg set). */
struct gout_item {
  struct lnode n;
  u32 aud, cohort, member;      /* the audience (bgp_txlog.h) */
  const u32 *set;               /* its classes, NULL: all */
  struct ea_list *attrs;        /* of a net's item, NULL: withdrawn */
  u8 *msg;                      /* a raw message, NULL: a net's item */
  uint len;
  net_addr net;
};

struct bgp_gout {
  pool *pool;
  struct bgp_tx_ctx tx;
  enum bgp_af af;
  struct bgp_txlog *log;
  struct hash_table changes_by_net;
  struct lnode changes;         /* struct gout_change */
  struct lnode items;           /* struct gout_item, in order */
  uint n_changes, n_items;
  slab *change_slab, *item_slab;
  /* Export classes: ids below classes, words of bitmap, live by the
   * group (bgp_gout_classes); one class alone needs no bitmap. */
  uint classes, words;
  const u32 *live;
  u32 live1;
  linpool *lp;                  /* per-class arrays and sets until the flush */
  struct log_rate rl;
};

/* The outputs of one key: one audience, one set of attributes (NULL:
 * withdraw); the key is that of its first output. */
struct gout_run {
  u32 first, count, start;
};

/*
 * A flush's outputs (struct gout_outs) and the scratch gout_encode sorts
 * them in. They belong to the thread, not to the group: a flush runs to
 * its end within one loop run, and the multi layout has a group per peer,
 * each of which kept half a megabyte after its first burst (a hundred
 * peers: half of the daemon's memory). Kept from one flush to the next:
 * fresh pages for each were a quarter of an import burst's flush. A group
 * flushes once BGP_GOUT_PENDING_MAX changes wait (two outputs each): what
 * that needs, some 2 MB, stays with the thread until it ends. A flush
 * beyond it (a feed, a catch-up, many classes) lets its arrays go after:
 * kept, the thread's largest burst stayed in `show memory` for good, and
 * which thread got it decided how much (1.3 to 4 MB more from one run of
 * test_stalled_client_let_go to the next).
 */
struct gout_scratch {
  struct gout_out *outs;
  uint outs_size;
  struct gout_run *runs;
  u32 *run_of, *order, *slots;
  uint size, slots_size;        /* runs, run_of and order hold size */
  /* A run's nets in a row, for the encoder: as many as the longest run
   * (a key's nets, hundreds where a peer sends hundreds of prefixes an
   * UPDATE), not as the flush (28 bytes an output, a fifth of it). */
  net_addr *nets;
  uint nets_size;
};
static __thread struct gout_scratch gout_mine;
/* the UPDATE being encoded (lib/thread_buf.h: not a TLS array) */
THREAD_BUF(gout_buf, MEM_PROTOCOLS);
#define GOUT_SCRATCH_KEEP (5 * BGP_GOUT_PENDING_MAX / 2)      /* entries */

/* One message's worth of the flush: nets with one audience and one set
 * of attributes (NULL: withdraw). Sorted by the key, so equal keys meet. */
struct gout_out {
  const struct ea_list *attrs;
  u32 aud, member, cohort;
  const u32 *set;               /* classes, NULL: all */
  const net_addr *net;
};

/* The outputs of a flush, growing: classes make a change give more than
 * two. */
struct gout_outs {
  struct gout_out *o;
  uint n, size;
};

static void *gout_alloc(size_t n, size_t each) { return mem_alloc_shared(MEM_PROTOCOLS, n * each); }
static void gout_free(void *m, size_t n, size_t each) { mem_free_shared(MEM_PROTOCOLS, m, n * each); }

/* m, an array of *size entries of each bytes, made to hold need: if it
 * does not, a fresh one (contents not kept) of need or twice *size. */
static void *
gout_reserve(void *m, uint *size, uint need, size_t each)
{
  if (*size >= need)
    return m;
  uint grown = MAX(need, 2 * *size);
  if (*size)
    gout_free(m, *size, each);
  *size = grown;
  return gout_alloc(grown, each);
}

static void
gout_outs_free(struct gout_scratch *x)
{
  if (x->outs_size)
    gout_free(x->outs, x->outs_size, sizeof(*x->outs));
  x->outs_size = 0;
}

static void
gout_sort_free(struct gout_scratch *x)
{
  if (!x->size)
    return;
  gout_free(x->runs, x->size, sizeof(*x->runs));
  gout_free(x->run_of, x->size, sizeof(*x->run_of));
  gout_free(x->order, x->size, sizeof(*x->order));
  gout_free(x->slots, x->slots_size, sizeof(*x->slots));
  x->size = 0;
  if (x->nets_size)
    gout_free(x->nets, x->nets_size, sizeof(*x->nets));
  x->nets_size = 0;
}

static void
gout_thread_exit(void)
{
  gout_outs_free(&gout_mine);
  gout_sort_free(&gout_mine);
}

static pthread_once_t gout_once = PTHREAD_ONCE_INIT;
static void gout_hook_init(void) { rcu_thread_at_exit(gout_thread_exit); }

struct bgp_gout *
bgp_gout_new(pool *p, const struct bgp_tx_ctx *tx, enum bgp_af af, struct bgp_txlog *log)
{
  struct bgp_gout *g = mb_allocz(p, sizeof(*g));
  g->pool = p;
  g->tx = *tx;
  g->af = af;
  g->log = log;
  hash_init_sparse(&g->changes_by_net, p, 10);
  list_init(&g->changes);
  list_init(&g->items);
  g->change_slab = sl_new(p, sizeof(struct gout_change));
  g->item_slab = sl_new(p, sizeof(struct gout_item));
  g->lp = lp_new(p);
  g->classes = g->words = 1;
  g->live1 = 1;
  g->live = &g->live1;
  return g;
}

void
bgp_gout_classes(struct bgp_gout *g, uint count, const u32 *live)
{
  uint words = bgp_class_words(count);
  ASSERT_DIE(count && (words == g->words || !bgp_gout_pending(g)));
  g->classes = count;
  g->words = words;
  g->live = live;
}

static int
gout_change_eq(const struct hash_node *n, const void *key)
{
  return net_equal(&container_of(n, struct gout_change, hn)->net, key);
}

static struct gout_change *
gout_change_find(const struct bgp_gout *g, const net_addr *n, u32 h)
{
  struct hash_node *hn = hash_find(&g->changes_by_net, h, gout_change_eq, n);
  return hn ? container_of(hn, struct gout_change, hn) : NULL;
}

/* References to now[0..count), taken or dropped a run of equal pointers
 * at a time: neighbouring classes mostly share a result, and each
 * reference is an atomic add on a line the importing threads touch too. */
static void
gout_refs(struct ea_list *const *now, uint count, bool take)
{
  for (uint k = 0, j; k < count; k = j) {
    for (j = k + 1; j < count && now[j] == now[k]; j++)
      ;
    if (now[k] && take)
      ea_ref_many(now[k], j - k);
    else if (now[k])
      ea_unref_many(now[k], j - k);
  }
}

static void
gout_now_drop(struct bgp_gout *g, struct gout_change *c)
{
  gout_refs(c->now, g->classes, false);
  memset(c->now, 0, g->classes * sizeof(*c->now));
}

/* hashed: still in changes_by_net (not cleared at once) */
static void
gout_change_free(struct bgp_gout *g, struct gout_change *c, bool hashed)
{
  gout_now_drop(g, c);
  list_del(&c->n);
  if (hashed)
    hash_remove(&g->changes_by_net, &c->hn);
  sl_free(g->change_slab, c);
  g->n_changes--;
}

static void
gout_item_free(struct bgp_gout *g, struct gout_item *it)
{
  if (it->attrs)
    ea_unref(it->attrs);
  if (it->msg)
    mb_free(it->msg);
  list_del(&it->n);
  sl_free(g->item_slab, it);
  g->n_items--;
}

void
bgp_gout_free(struct bgp_gout *g)
{
  while (!list_empty(&g->changes))
    gout_change_free(g, container_of(list_first(&g->changes), struct gout_change, n), true);
  while (!list_empty(&g->items))
    gout_item_free(g, container_of(list_first(&g->items), struct gout_item, n));
  hash_free(&g->changes_by_net);
  rfree(g->change_slab);
  rfree(g->item_slab);
  rfree(g->lp);
  mb_free(g);
}

static bool
gout_set_empty(const struct bgp_gout *g, const u32 *set)
{
  for (uint w = 0; w < g->words; w++)
    if (set[w])
      return false;
  return true;
}

void
bgp_gout_ahead(const struct bgp_gout *g, const net_addr *n)
{
  hash_prefetch(&g->changes_by_net, net_hash(n));
}

void
bgp_gout_change_classes(struct bgp_gout *g, const net_addr *n, struct ea_list *const *now, u32 now_src,
                        u32 src_cls, const u32 *had, u32 was_src)
{
  u32 h = net_hash(n);
  struct gout_change *c = gout_change_find(g, n, h);
  if (!c) {
    c = sl_alloc(g->change_slab);
    memset(c, 0, sizeof(*c));
    net_copy(&c->net, n);
    if (g->classes == 1) {
      c->now = &c->now1;
      c->had = &c->had1;
    } else {
      c->now = lp_allocz(g->lp, g->classes * sizeof(*c->now));
      c->had = lp_alloc(g->lp, g->words * sizeof(u32));
    }
    memcpy(c->had, had, g->words * sizeof(u32));
    c->was_src = gout_set_empty(g, had) ? 0 : was_src;
    hash_insert(&g->changes_by_net, &c->hn, h);
    list_add_tail(&g->changes, &c->n);
    g->n_changes++;
  } else
    gout_now_drop(g, c);
  bool any = false;
  for (uint k = 0; k < g->classes; k++)
    any |= !!(c->now[k] = now[k]);
  gout_refs(c->now, g->classes, true);
  c->now_src = any ? now_src : 0;
  c->src_cls = src_cls;
}

void
bgp_gout_change(struct bgp_gout *g, const net_addr *n, struct ea_list *now, u32 now_src, bool had, u32 was_src)
{
  ASSERT_DIE(g->classes == 1);
  u32 had1 = had;
  bgp_gout_change_classes(g, n, &now, now_src, 0, &had1, was_src);
}

bool
bgp_gout_changed(const struct bgp_gout *g, const net_addr *n)
{
  return g->n_changes && gout_change_find(g, n, net_hash(n));
}

static struct gout_item *
gout_item_new(struct bgp_gout *g, u32 aud, u32 cohort, u32 member)
{
  struct gout_item *it = sl_alloc(g->item_slab);
  memset(it, 0, sizeof(*it));
  it->aud = aud;
  it->cohort = cohort;
  it->member = member;
  list_add_tail(&g->items, &it->n);
  g->n_items++;
  return it;
}

static void
gout_feed(struct bgp_gout *g, const net_addr *n, struct ea_list *attrs, u32 aud, u32 cohort, u32 member,
          const u32 *set)
{
  struct gout_item *it = gout_item_new(g, aud, cohort, member);
  it->attrs = attrs ? ea_ref(attrs) : NULL;
  net_copy(&it->net, n);
  if (set) {
    u32 *copy = lp_alloc(g->lp, g->words * sizeof(u32));
    memcpy(copy, set, g->words * sizeof(u32));
    it->set = copy;
  }
}

static void
gout_raw(struct bgp_gout *g, u32 aud, u32 cohort, u32 member, const void *msg, uint len)
{
  struct gout_item *it = gout_item_new(g, aud, cohort, member);
  it->msg = mb_alloc(g->pool, len);
  memcpy(it->msg, msg, len);
  it->len = len;
}

void
bgp_gout_feed(struct bgp_gout *g, const net_addr *n, struct ea_list *attrs, u32 member)
{
  gout_feed(g, n, attrs, BGP_TXLOG_ONLY, 0, member, NULL);
}

void
bgp_gout_feed_withdraw(struct bgp_gout *g, const net_addr *n, u32 member)
{
  gout_feed(g, n, NULL, BGP_TXLOG_ONLY, 0, member, NULL);
}

void
bgp_gout_feed_cohort(struct bgp_gout *g, const net_addr *n, struct ea_list *attrs, u32 cohort, u32 but,
                     const u32 *set)
{
  gout_feed(g, n, attrs, but ? BGP_TXLOG_COHORT_BUT : BGP_TXLOG_COHORT, cohort, but, set);
}

/* A set of classes as the log takes it: NULL for every live class. */
static const u32 *
gout_set_final(const struct bgp_gout *g, const u32 *set)
{
  return memcmp(set, g->live, g->words * sizeof(u32)) ? set : NULL;
}

/* The classes that get what class k gets (now[k], not NULL), marked in
 * got as well: each distinct result once, from its first class on. */
static const u32 *
gout_same_result(struct bgp_gout *g, struct ea_list *const *now, uint k, u32 *got)
{
  u32 *set = lp_allocz(g->lp, g->words * sizeof(u32));
  /* a word's bits in a register: this runs per change and distinct result
   * over every class, on the group's loop */
  for (uint w = k / 32; w < g->words; w++) {
    u32 bits = 0;
    for (uint j = MAX(32 * w, k); j < MIN(32 * w + 32, g->classes); j++)
      bits |= (u32) (now[j] == now[k]) << (j % 32);
    set[w] = bits;
    got[w] |= bits;
  }
  return gout_set_final(g, set);
}

void
bgp_gout_feed_classes(struct bgp_gout *g, const net_addr *n, struct ea_list *const *now, u32 cohort, u32 but)
{
  u32 *got = lp_allocz(g->lp, g->words * sizeof(u32));
  for (uint k = 0; k < g->classes; k++)
    if (now[k] && !bgp_class_has(got, k))
      gout_feed(g, n, now[k], but ? BGP_TXLOG_COHORT_BUT : BGP_TXLOG_COHORT, cohort, but,
                gout_same_result(g, now, k, got));
}

void
bgp_gout_raw(struct bgp_gout *g, u32 member, const void *msg, uint len)
{
  gout_raw(g, BGP_TXLOG_ONLY, 0, member, msg, len);
}

void
bgp_gout_define(struct bgp_gout *g, u32 cohort, const u32 *members, uint count)
{
  gout_raw(g, BGP_TXLOG_DEFINE, cohort, 0, members, count * sizeof(u32));
}

uint
bgp_gout_pending(const struct bgp_gout *g)
{
  return g->n_changes + g->n_items;
}


static bool
gout_set_eq(const struct bgp_gout *g, const u32 *a, const u32 *b)
{
  return a == b || (a && b && !memcmp(a, b, g->words * sizeof(u32)));
}

static u32
gout_set_hash(const struct bgp_gout *g, const u32 *set)
{
  u32 h = 0;
  if (set)
    for (uint w = 0; w < g->words; w++)
      h = hash_mix(h, set[w] + w);
  return h;
}

static struct gout_scratch *
gout_sort_scratch(uint n)
{
  struct gout_scratch *x = &gout_mine;
  if (n <= x->size)
    return x;
  uint size = MAX(n, 2 * x->size);
  gout_sort_free(x);
  x->size = size;
  x->runs = gout_alloc(size, sizeof(*x->runs));
  x->run_of = gout_alloc(size, sizeof(*x->run_of));
  x->order = gout_alloc(size, sizeof(*x->order));
  x->slots_size = 1;
  while (x->slots_size < 2 * size)
    x->slots_size *= 2;
  x->slots = gout_alloc(x->slots_size, sizeof(*x->slots));
  return x;
}

/* Encode the nets of run r (their outputs' indices in idx), as many
 * UPDATEs as it takes: all full but the last. */
static uint
gout_encode_run(struct bgp_gout *g, const struct gout_run *r, const struct gout_out *o, const u32 *idx)
{
  u8 *buf = thread_buf_get(&gout_buf, BGP_TXLOG_MAX_MSG);
  struct gout_scratch *x = &gout_mine;
  uint n = r->count, msgs = 0;
  net_addr *nets = x->nets = gout_reserve(x->nets, &x->nets_size, n, sizeof(*x->nets));
  const struct ea_list *attrs = o[r->first].attrs;
  for (uint i = 0; i < n; i++)
    net_copy(&nets[i], o[idx[i]].net);
  for (uint sent = 0; sent < n;) {
    uint done = 0;
    uint len = attrs
      ? bgp_update_encode_reach(&g->tx, attrs, g->af, nets + sent, NULL, n - sent, buf, BGP_TXLOG_MAX_MSG, &done)
      : bgp_update_encode_withdraw(&g->tx, g->af, nets + sent, NULL, n - sent, buf, BGP_TXLOG_MAX_MSG, &done);
    if (!len || !done) {
      /* Unencodable (a next hop of the wrong family): drop, loudly. */
      log_rl(&g->rl, L_ERR, "Update group: cannot encode UPDATE for %N", &nets[sent]);
      done = 1;
    } else {
      const struct gout_out *k = &o[r->first];
      bgp_txlog_append_set(g->log, k->aud, k->cohort, k->member, k->set, k->set ? g->words : 0, buf, len);
      msgs++;
    }
    sent += done;
  }
  return msgs;
}

/* Group the outputs by key (a hash of the keys, then a counting pass,
 * which keeps their order within a run) and encode each run:
 * withdrawals first, as a session alone sends them. */
static uint
gout_encode(struct bgp_gout *g, const struct gout_out *o, uint n)
{
  if (!n)
    return 0;
  struct gout_scratch *x = gout_sort_scratch(n);
  struct gout_run *runs = x->runs;
  u32 *slots = x->slots, mask = x->slots_size - 1, nruns = 0;
  memset(slots, 0, x->slots_size * sizeof(u32));
  for (uint i = 0; i < n; i++) {
    u32 h = hash_mix(hash_ptr(o[i].attrs), (o[i].aud << 24) ^ o[i].member ^ (o[i].cohort * 0x9e3779b9U) ^
                                              gout_set_hash(g, o[i].set)) & mask;
    for (;; h = (h + 1) & mask) {
      if (!slots[h]) {
        runs[nruns] = (struct gout_run) { i, 0, 0 };
        slots[h] = ++nruns;
        break;
      }
      const struct gout_out *k = &o[runs[slots[h] - 1].first];
      if (k->attrs == o[i].attrs && k->aud == o[i].aud && k->member == o[i].member && k->cohort == o[i].cohort &&
          gout_set_eq(g, k->set, o[i].set))
        break;
    }
    x->run_of[i] = slots[h] - 1;
    runs[slots[h] - 1].count++;
  }
  uint pos = 0;
  for (int withdrawals = 1; withdrawals >= 0; withdrawals--)
    for (uint r = 0; r < nruns; r++)
      if ((o[runs[r].first].attrs == NULL) == withdrawals) {
        runs[r].start = pos;
        pos += runs[r].count;
        runs[r].count = 0;
      }
  for (uint i = 0; i < n; i++) {
    struct gout_run *r = &runs[x->run_of[i]];
    x->order[r->start + r->count++] = i;
  }
  uint msgs = 0;
  for (int withdrawals = 1; withdrawals >= 0; withdrawals--)
    for (uint r = 0; r < nruns; r++)
      if ((o[runs[r].first].attrs == NULL) == withdrawals)
        msgs += gout_encode_run(g, &runs[r], o, x->order + runs[r].start);
  return msgs;
}

static void
gout_put(struct gout_outs *v, const struct ea_list *attrs, u32 aud, u32 member, u32 cohort, const u32 *set,
         const net_addr *net)
{
  if (v->n == v->size) {
    uint size = 2 * v->size;
    struct gout_out *o = gout_alloc(size, sizeof(*o));
    memcpy(o, v->o, v->n * sizeof(*o));
    gout_free(v->o, v->size, sizeof(*o));
    v->o = o;
    v->size = size;
  }
  v->o[v->n++] = (struct gout_out) { attrs, aud, member, cohort, set, net };
}

/* Encode what the outputs hold so far. */
static uint
gout_put_out(struct bgp_gout *g, struct gout_outs *v)
{
  uint msgs = gout_encode(g, v->o, v->n);
  v->n = 0;
  return msgs;
}

/* Feed items and raw messages, in their order: a raw message closes the
 * feed items before it. */
static uint
gout_flush_items(struct bgp_gout *g, struct gout_outs *v)
{
  uint msgs = 0;
  LIST_WALK(x, &g->items) {
    struct gout_item *it = container_of(x, struct gout_item, n);
    if (!it->msg) {             /* a net: announced, or withdrawn (no attributes) */
      gout_put(v, it->attrs, it->aud, it->member, it->cohort, it->set, &it->net);
      continue;
    }
    msgs += gout_put_out(g, v);
    bgp_txlog_append_cohort(g->log, it->aud, it->cohort, it->member, it->msg, it->len);
    msgs++;
  }
  return msgs + gout_put_out(g, v);
}

/* The split horizon of bgp_gout.h, class by class: each distinct result
 * to the classes that get it, a withdrawal to those that had a route and
 * get none now. */
static void
gout_change_out(struct bgp_gout *g, struct gout_outs *v, struct gout_change *c)
{
  uint words = g->words;
  u32 *got = lp_allocz(g->lp, words * sizeof(u32));
  u32 s = c->now_src;
  for (uint k = 0; k < g->classes; k++) {
    if (c->now[k] && !bgp_class_has(got, k))
      gout_put(v, c->now[k], s ? BGP_TXLOG_ALL_BUT : BGP_TXLOG_ALL, s, 0, gout_same_result(g, c->now, k, got),
               &c->net);
  }
  u32 *gone = lp_alloc(g->lp, words * sizeof(u32));
  for (uint w = 0; w < words; w++)
    gone[w] = c->had[w] & ~got[w] & g->live[w];
  if (!gout_set_empty(g, gone))
    gout_put(v, NULL, c->was_src ? BGP_TXLOG_ALL_BUT : BGP_TXLOG_ALL, c->was_src, 0, gout_set_final(g, gone),
             &c->net);
  /* the member the route came from had the old one, unless that was its
   * own too: it gets no route now, so it loses that one */
  if (s && bgp_class_has(c->had, c->src_cls) && bgp_class_has(got, c->src_cls) && c->was_src != s)
    gout_put(v, NULL, BGP_TXLOG_ONLY, s, 0, NULL, &c->net);
}

uint
bgp_gout_flush(struct bgp_gout *g)
{
  if (!g->n_changes && !g->n_items)
    return 0;
  pthread_once(&gout_once, gout_hook_init);
  struct gout_scratch *x = &gout_mine;
  uint need = 2 * g->n_changes + g->n_items + 1;
  x->outs = gout_reserve(x->outs, &x->outs_size, need, sizeof(*x->outs));
  struct gout_outs v = { .o = x->outs, .size = x->outs_size };
  uint msgs = gout_flush_items(g, &v);
  LIST_WALK(x, &g->changes)
    gout_change_out(g, &v, container_of(x, struct gout_change, n));
  msgs += gout_put_out(g, &v);
  x->outs = v.o;                        /* gout_put() may have grown it */
  x->outs_size = v.size;
  while (!list_empty(&g->items))
    gout_item_free(g, container_of(list_first(&g->items), struct gout_item, n));
  /* every change goes: an import burst's, cleared at once */
  bool hashed = !hash_clear_dense(&g->changes_by_net);
  while (!list_empty(&g->changes))
    gout_change_free(g, container_of(list_first(&g->changes), struct gout_change, n), hashed);
  hash_trim(&g->changes_by_net);
  lp_flush(g->lp);
  if (x->outs_size > GOUT_SCRATCH_KEEP)
    gout_outs_free(x);
  if (x->size > GOUT_SCRATCH_KEEP || x->nets_size > GOUT_SCRATCH_KEEP)
    gout_sort_free(x);
  return msgs;
}
