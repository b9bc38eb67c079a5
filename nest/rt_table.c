/*
 * DOC: Route table core: updates and the journal they write (the net index
 * and its lookups: nest/rt_index.c; the journal's readers:
 * nest/rt_reader.c; freeing what every reader passed: nest/rt_cleanup.c).
 *
 * Write path (any loop): build the rte outside the lock, then under the
 * table's writer lock find or create the net, unlink the old route of the
 * same source, link the new one at its place in best-first order (RCU
 * pointer stores, so concurrent readers always see a well-formed chain),
 * and append one journal item. Readers are notified from under the lock,
 * but only by ev_send, which never blocks.
 *
 * Nothing a reader may still hold is freed here: retired routes and emptied
 * nets ride on their journal item and are released by the table's cleanup
 * in its own loop, once every reader has passed the item, through call_rcu.
 */
#include <string.h>
#include <stdlib.h>
#include "nest/rt.h"
#include "nest/rt_core.h"
#include "nest/rt_trie.h"
#include "nest/proto.h"
#include "nest/reconf.h"
#include "lib/hash.h"
#include "lib/slab_shared.h"
#include "lib/page_pool.h"
#include "lib/log.h"
#include "lib/printf.h"
#include "lib/timeutil.h"

/* --- Best route order --- */

int
rte_better(const struct rte *a, const struct rte *b)
{
  if (rte_attrs(a)->preference != rte_attrs(b)->preference)
    return rte_attrs(a)->preference > rte_attrs(b)->preference;
  const struct proto_class *ca = rte_src(a)->proto->class, *cb = rte_src(b)->proto->class;
  if (ca != cb)
    return ca->class_id < cb->class_id;
  if (rte_suppressed(a) != rte_suppressed(b))
    return rte_suppressed(b);
  if (ca->rte_better)
    return ca->rte_better(a, b);
  return 0;
}

/* Routes and nets come from shared slabs (a net's size depends on its
 * type only); made on first use, by whichever thread imports first. */
static struct shslab *rte_slab, *net_slab[NET_MAX];
static struct page_pool *journal_pool;
static pthread_once_t rt_slabs_once = PTHREAD_ONCE_INIT;

static void
rt_slabs_init(void)
{
  rte_slab = shslab_new(MEM_TABLES, sizeof(struct rte));
  for (uint t = 1; t < NET_MAX; t++)
    net_slab[t] = shslab_new(MEM_TABLES, offsetof(struct net, n) + net_addr_length[t]);
  /* Free blocks stay for the next burst of changes: a quarter of those
   * in use (lib/page_pool.c), at least 256 KB. A larger floor was standby
   * memory at the peak of small loads, which churn through few blocks. */
  journal_pool = page_pool_new(RT_JOURNAL_BYTES, 16 * RT_JOURNAL_BYTES);
}

static struct net *
net_alloc(const net_addr *n)
{
  ASSERT_DIE(n->type && n->type < NET_MAX && n->length == net_addr_length[n->type]);
  return shslab_alloc(net_slab[n->type]);
}

void net_free(struct net *n) { shslab_free(net_slab[n->n.type], n); }
void rte_free(struct rte *r) { shslab_free(rte_slab, r); }

void
rt_journal_block_free(struct rt_journal_block *b)
{
  page_pool_free(journal_pool, b);
  mem_account(MEM_TABLES, -(s64) RT_JOURNAL_BYTES, 0);
}

/* --- Route ids (bit per id, under the writer lock) --- */

static u32
rt_id_alloc(struct rtable *t)
{
  for (;;) {
    u32 words = t->id_map_size / 32;
    for (u32 k = 0; k < words; k++) {
      u32 w = (t->id_hint + k) % words;
      if (t->id_map[w] != ~0U) {
        u32 bit = __builtin_ctz(~t->id_map[w]);
        t->id_map[w] |= 1U << bit;
        t->id_hint = w;
        return w * 32 + bit;
      }
    }
    u32 nsize = t->id_map_size ? t->id_map_size * 2 : 1024;
    t->id_map = realloc(t->id_map, nsize / 8);
    if (!t->id_map)
      die("Out of memory");
    memset(t->id_map + words, 0, (nsize - t->id_map_size) / 8);
    mem_account(MEM_TABLES, (nsize - t->id_map_size) / 8, 0);
    t->id_hint = words;
    t->id_map_size = nsize;
  }
}

/* --- Routes --- */

void
rte_release(struct rtable *t, struct rte *r)
{
  rt_id_free(t, r->id);
  ea_unref(rte_attrs(r));
  rt_unlock_source(rte_src(r));
}

/* --- Journal --- */

_Static_assert(sizeof(struct rt_journal_block) <= RT_JOURNAL_BYTES, "journal block outgrew its pages");

/* The next item; died: the change empties its net. */
static struct rt_journal_item *
rt_journal_push(struct rtable *t, int died, u16 sender)
{
  u64 seq = t->jend + t->junpub++;
  if (!t->jlast || seq - t->jlast->first_seq == RT_JOURNAL_BLOCK) {
    /* Items and senders are written whole as they come: only the header
     * needs clearing, not the 16 kB a recycled block would be zeroed. */
    struct rt_journal_block *b = page_pool_alloc_dirty(journal_pool);
    mem_account(MEM_TABLES, RT_JOURNAL_BYTES, 0);
    b->next = NULL;
    memset(b->net_died, 0, sizeof(b->net_died));
    b->first_seq = seq;
    if (t->jlast) {
      rcu_assign_pointer(t->jlast->next, b);
      t->jnewblock = 1;
    } else
      rcu_assign_pointer(t->jfirst, b);
    t->jlast = b;
  }
  uint i = (uint) (seq - t->jlast->first_seq);
  if (died)
    t->jlast->net_died[i / 64] |= 1ULL << (i % 64);
  t->jlast->sender[i] = sender;
  return &t->jlast->items[i];
}

/* The items pushed since the last time, at once (a batch publishes once
 * per step); before the writer lock goes. */
static void
rt_journal_publish(struct rtable *t)
{
  if (!t->junpub)
    return;
  uatomic_set(&t->jend, t->jend + t->junpub);     /* release: the items are complete */
  t->junpub = 0;
  /* Every reader is woken per change: the fence lets a reader whose event
   * is pending already cost a plain load, not a claim on a line its loop
   * writes (that loop clears the flag with a full barrier before reading
   * the journal: see ev_active). */
  int cleanup = t->jend - uatomic_read(&t->jfirst_seq) >= RT_CLEANUP_THRESHOLD;
  if (t->jnewblock) {
    t->jnewblock = 0;
    cmm_smp_mb();       /* jend before armed: see rt_cleanup_tick */
    cleanup |= !uatomic_read(&t->cleanup_armed);
  }
  if (list_empty(&t->readers) && !cleanup)
    return;
  rcu_full_fence();
  /* with export settle, readers are woken by the table loop, but those
   * far enough behind to press the table (nest/rt_settle.c) */
  int settle = uatomic_read(&t->settle.on);
  LIST_WALK_ENTRY(r, &t->readers, struct rt_reader, n) {
    if (r->notify || uatomic_read(&r->polls))
      rt_press_check(t, r);
    if (!settle || uatomic_read(&r->press))
      rt_reader_wake(r);
  }
  if (settle)
    rt_settle_publish(t);
  if (cleanup && !ev_active(&t->cleanup_ev))
    ev_send(t->loop, &t->cleanup_ev);
}

/* Counters only writers change, under the writer lock: a plain
 * read-modify-write and one store, which readers load whole. A locked
 * instruction here would wait for every fresh route and net just written. */
static inline void
rt_counter_add(u32 *c, int d)
{
  uatomic_set(c, *c + (u32) d);
}

/* --- Update --- */

/* A net's feed_prev and ver, which share a word where pointers have
 * spare bits (struct net). Both change only under the writer lock; ver is
 * read before it too, hence the atomic stores. */
#if UINTPTR_MAX == UINT64_MAX
#define NET_VER_SHIFT 48
#define NET_PREV_MASK (((uintptr_t) 1 << NET_VER_SHIFT) - 1)
static inline struct net *net_feed_prev(const struct net *n) { return (struct net *) (n->prev_ver & NET_PREV_MASK); }

static inline void
net_set_feed_prev(struct net *n, struct net *p)
{
  __atomic_store_n(&n->prev_ver, (n->prev_ver & ~NET_PREV_MASK) | (uintptr_t) p, __ATOMIC_RELAXED);
}

static inline u16 net_ver(const struct net *n) { return (u16) (__atomic_load_n(&n->prev_ver, __ATOMIC_ACQUIRE) >> NET_VER_SHIFT); }

static inline void
net_ver_bump(struct net *n)
{
  __atomic_store_n(&n->prev_ver, n->prev_ver + ((uintptr_t) 1 << NET_VER_SHIFT), __ATOMIC_RELEASE);
}
#else
static inline struct net *net_feed_prev(const struct net *n) { return n->feed_prev; }
static inline void net_set_feed_prev(struct net *n, struct net *p) { n->feed_prev = p; }
static inline u16 net_ver(const struct net *n) { return __atomic_load_n(&n->ver, __ATOMIC_ACQUIRE); }
static inline void net_ver_bump(struct net *n) { __atomic_store_n(&n->ver, (u16) (n->ver + 1), __ATOMIC_RELEASE); }
#endif

/* What the shared word is for: an ipv4 net in 48 bytes of its slab. */
_Static_assert(UINTPTR_MAX != UINT64_MAX || offsetof(struct net, n) + sizeof(net_addr_ip4) == 48,
               "struct net grew");

/* A walk of a chain read the table's jend, then the net's ver. A change
 * the walk did not see has a seq at or above that jend (the items below
 * it were published after their ver bumps), so under the lock there were
 * at most jend + junpub - pre_seq of them. Past this many (half of ver's
 * range, for margin), ver may have wrapped: the walk is not trusted. */
#define RT_VER_TRUST ((u64) 1 << 15)

/* Under the lock: a new net goes into the index and at the feed list's
 * end (a walk started before it may meet it: it is published whole),
 * counted. copy: the sender of a pipe's copies, whose nets the index
 * expects more of when it is full. */
static void
rt_net_link(struct rtable *t, struct net *net, u32 hash, u16 copy)
{
  net_set_feed_prev(net, t->feed_tail);
  rt_index_mark(t, &net->n);
  rcu_tsan_publish(net);
  if (copy && rcu_hash_full(&t->nets))
    rt_index_expect_copies(t, copy);
  rcu_hash_insert(&t->nets, hash, &net->node);
  rt_index_account(t);
  if (t->feed_tail)
    rcu_assign_pointer(t->feed_tail->feed_next, net);
  else
    rcu_assign_pointer(t->feed_head, net);
  t->feed_tail = net;
  if (t->trie)
    rt_trie_add(t->trie, &net->n);
  rt_counter_add(&t->net_count, 1);
  rt_counter_add(&t->pxlen_count[net->n.pxlen], 1);
}

/* Under the lock: a net whose chain emptied leaves the index and the feed
 * list; it is freed with its journal item. A walker standing on it goes
 * on from its next pointer, which we leave as it is. */
static void
rt_net_unlink(struct rtable *t, struct net *net)
{
  rcu_hash_remove(&t->nets, rt_net_hash(&net->n), &net->node);
  rt_index_account(t);
  struct net *next = net->feed_next, *prev = net_feed_prev(net);
  if (prev)
    rcu_assign_pointer(prev->feed_next, next);
  else
    rcu_assign_pointer(t->feed_head, next);
  if (next)
    net_set_feed_prev(next, prev);
  else
    t->feed_tail = prev;
  if (t->trie)
    rt_trie_remove(t->trie, &net->n);
  rt_counter_add(&t->net_count, -1);
  rt_counter_add(&t->pxlen_count[net->n.pxlen], -1);
}

/* Chain order: usable routes best first, then routes kept only because of
 * `import keep filtered` (never best, never exported). */
static int
rte_goes_before(const struct rte *new, const struct rte *r)
{
  int nf = rte_flags(new) & REF_FILTERED, rf = rte_flags(r) & REF_FILTERED;
  if (nf != rf)
    return !nf;
  return rte_better(new, r);
}

/* Table counters and what the caller's statistics need to know. */
static uint
rt_count_change(struct rtable *t, const struct rte *old, const struct rte *new)
{
  int old_ok = old && !(rte_flags(old) & REF_FILTERED), new_ok = new && !(rte_flags(new) & REF_FILTERED);
  int old_filt = old && !old_ok, new_filt = new && !new_ok;
  uint res = RT_UPD_NONE;
  if (old_ok && new_ok)
    res = RT_UPD_REPLACE;
  else if (old_ok) {
    rt_counter_add(&t->route_count, -1);
    res = RT_UPD_REMOVE;
  } else if (new_ok) {
    rt_counter_add(&t->route_count, 1);
    res = RT_UPD_ADD;
  }
  if (new_filt && !old_filt) {
    rt_counter_add(&t->filtered_count, 1);
    res |= RT_UPD_FILTERED_ADD;
  } else if (old_filt && !new_filt) {
    rt_counter_add(&t->filtered_count, -1);
    res |= RT_UPD_FILTERED_REMOVE;
  }
  return res;
}

/* The `preferred` counter of r's sender, if r and its sender are there. */
static inline void
rt_pref_count(struct rtable *t, const struct rte *r, int d)
{
  struct channel *c = r ? rt_sender_of(t, r->sender) : NULL;
  if (c)
    uatomic_add(&c->stats.pref_routes, d);
}

/* refs: the caller took the route's references on attrs and src already. */
static struct rte *
rte_new(struct rte_src *src, u16 sender, struct ea_list *attrs, u16 flags, u16 gen, int refs, btime now)
{
  if (!refs) {
    ea_ref(attrs);
    rt_lock_source(src);
  }
  struct rte *r = shslab_alloc(rte_slab);
  memset(r, 0, sizeof(*r));
  rte_set_ea(r, attrs, flags, 0, now);
  r->src_ix = rt_src_ix(src);
  r->sender = sender;
  r->refresh_gen = gen;
  return r;
}

static void
rte_drop_unpublished(struct rte *r)
{
  ea_unref(rte_attrs(r));
  rt_unlock_source(rte_src(r));
  rte_free(r);
}

/* Where a change goes in a chain, found by walking it before the lock:
 * the routes after which old is and new goes (NULL: the head), the latter
 * in the chain without old. */
struct rt_place {
  int known;
  struct rte *old_after, *new_after;
};

/* Replaces route old of a net by new (either may be NULL): the chain,
 * the counters and one journal item. Under the writer lock. at: where,
 * if known (else found here, comparing new with the routes in turn). */
static uint
rt_change(struct rtable *t, struct net *net, struct rte *old, struct rte *new, const struct rt_place *at)
{
  struct rte *old_best = rte_usable(net->routes);
  if (old) {
    struct rte **pp = at->known ? (at->old_after ? &at->old_after->next : &net->routes) : &net->routes;
    while (*pp != old)
      pp = &(*pp)->next;
    rcu_assign_pointer(*pp, old->next);
  }

  if (new) {
    new->id = rt_id_alloc(t);
    struct rte **ip;
    if (at->known)
      ip = at->new_after ? &at->new_after->next : &net->routes;
    else
      for (ip = &net->routes; *ip && !rte_goes_before(new, *ip);)
        ip = &(*ip)->next;
    new->next = *ip;
    rcu_assign_pointer(*ip, new);
  }
  /* after the chain's stores: a walk that saw any of them finds ver moved */
  net_ver_bump(net);

  struct rte *new_best = rte_usable(net->routes);
  int died = !net->routes;
  if (died)
    rt_net_unlink(t, net);
  uint res = rt_count_change(t, old, new);
  /* "preferred" counters of the channels whose route won or lost; an
   * import or export table mirrors a channel and counts nothing */
  if (!t->aux) {
    if (new_best != old_best) {
      rt_pref_count(t, new_best, 1);
      if (old_best != old)
        rt_pref_count(t, old_best, -1);
    }
    if (old && old == old_best)
      rt_pref_count(t, old, -1);
  }

  struct rt_journal_item *item = rt_journal_push(t, died, new ? new->sender : old ? old->sender : 0);
  *item = (struct rt_journal_item){
    .net = net, .new_best = new_best, .old_best = old_best,
    .new_rte = rte_usable(new), .retired = old,
  };
  return res;
}

/* --- Route groups (BGP `deterministic med`) ---
 *
 * RFC 4271 9.1.2.2 compares MEDs only between routes of one neighbor AS,
 * so comparing routes pair by pair depends on the order they came in. A
 * class that groups routes (proto_class.rte_group) has one best route per
 * group of a net, chosen among the group alone; the others are suppressed
 * and rank below every unsuppressed route of their class (rte_better).
 * A change can move a group's best to another route: the routes whose
 * state flips are replaced by copies with the new state, each an ordinary
 * change with its own journal item, so readers that walk a chain while it
 * changes miss nothing the journal does not bring them afterwards. The
 * chain stays ordered only if comparisons between its unsuppressed routes
 * never involve MEDs, hence the order of rt_group_suppress, the change,
 * rt_group_lift.
 */

/* What makes routes one group; key 0: not grouped. */
struct rt_group {
  const struct proto_class *class;
  u32 preference;
  u64 key;
};

static struct rt_group
rt_group_of(const struct rtable *t, const struct rte *r)
{
  /* import and export tables mirror a channel: nothing is best there */
  if (!r || t->aux || !rte_src(r)->proto->class->rte_group)
    return (struct rt_group){ 0 };
  return (struct rt_group){ rte_src(r)->proto->class, rte_attrs(r)->preference, rte_src(r)->proto->class->rte_group(r) };
}

static int
rt_group_same(const struct rt_group *a, const struct rt_group *b)
{
  return a->key == b->key && a->class == b->class && a->preference == b->preference;
}

/* The best route of group g in net, not counting skip, counting extra. */
static struct rte *
rt_group_best(const struct rtable *t, struct net *net, const struct rt_group *g, const struct rte *skip, struct rte *extra)
{
  struct rte *best = extra;
  for (struct rte *r = net->routes; rte_usable(r); r = r->next) {
    struct rt_group rg = rt_group_of(t, r);
    if (r != skip && rg.key && rt_group_same(&rg, g) && (!best || g->class->rte_better(r, best)))
      best = r;
  }
  return best;
}

/* Route r of group g goes into the other state: replaced by a copy. */
static void
rt_group_flip(struct rtable *t, struct net *net, struct rte *r)
{
  struct rte *copy = rte_new(rte_src(r), r->sender, rte_attrs(r), rte_flags(r), uatomic_read(&r->refresh_gen), 0,
                             rte_lastmod(r));
  rte_set_suppressed(copy, !rte_suppressed(r));
  rt_change(t, net, r, copy, &(struct rt_place){ 0 });
}

/* Whether route r of group g is to be unsuppressed when best is the
 * group's best: r is best or ties with it (rte_mergable). */
static int
rt_group_keeps(const struct rt_group *g, const struct rte *best, const struct rte *r)
{
  return r == best || (best && g->class->rte_mergable && g->class->rte_mergable(best, r));
}

/* Flip the routes of group g in net whose state is not what best makes
 * it, those to suppress (lift 0) or those to lift (lift 1), except skip.
 * A flip replaces the route in the chain: the walk starts again. */
static void
rt_group_flip_all(struct rtable *t, struct net *net, const struct rt_group *g, const struct rte *best,
                  const struct rte *skip, int lift)
{
  struct rte *r = net->routes;
  while (rte_usable(r)) {
    struct rt_group rg = rt_group_of(t, r);
    if (r != skip && rte_suppressed(r) == lift && rg.key && rt_group_same(&rg, g) &&
        rt_group_keeps(g, best, r) == lift) {
      rt_group_flip(t, net, r);
      r = net->routes;
    } else
      r = r->next;
  }
}

/* Before a change: suppress the routes of group g that best does not
 * keep, except skip (the route the change replaces). Suppressing first
 * and lifting after (rt_group_lift) keeps the unsuppressed routes of a
 * group in the chain tied through their MEDs, so each insertion compares
 * with routes pair by pair as RFC 4271 allows: across groups, never on
 * MED. */
static void
rt_group_suppress(struct rtable *t, struct net *net, const struct rt_group *g,
                  const struct rte *best, const struct rte *skip)
{
  rt_group_flip_all(t, net, g, best, skip, 0);
}

/* After a change: the routes of group g its best keeps, if suppressed,
 * are lifted. */
static void
rt_group_lift(struct rtable *t, struct net *net, const struct rt_group *g)
{
  rt_group_flip_all(t, net, g, rt_group_best(t, net, g, NULL, NULL), NULL, 1);
}

/* `debug { routes }` of a table: a change as BIRD 2 traces a channel's
 * imports, after the table's name ("master4: s1.ipv4 > added [best]
 * 10.1.0.0/16 0L 2G blackhole"). Inside rcu_read_lock(): r may be retired. */
static void
rt_trace_change(struct rtable *t, const struct net *net, const struct channel *c, const struct rte *r, uint what,
                int best, int table)
{
  static const char *const names[] = { [RT_UPD_ADD] = "added", [RT_UPD_REPLACE] = "updated", [RT_UPD_REMOVE] = "removed" };
  static const char *const best_names[] = { [RT_UPD_ADD] = "added [best]", [RT_UPD_REPLACE] = "updated [best]",
                                            [RT_UPD_REMOVE] = "removed [best]" };
  const char *msg = best ? best_names[what] : names[what];
  /* the table's `debug routes` (BIRD 3), then the protocol's (BIRD 2) */
  if (table)
    log_msg(L_TRACE, "%s: %s.%s > %s %N %luL %uG %s", t->name, c ? c->proto->name : "?",
            c && c->name ? c->name : "?", msg, &net->n, (unsigned long) rte_src(r)->private_id, rte_src(r)->global_id,
            rte_dest_names[rte_attrs(r)->dest]);
  if (c && chan_debug(c, D_ROUTES))
    chan_trace(c, '>', msg, &net->n, rte_src(r), rte_attrs(r));
}

/* One update in three steps: prepared outside the writer lock, applied
 * under it, finished after it. A batch runs each step over several
 * updates in a row, so that the cache misses of one step's work are in
 * flight while the step before works on the others.
 * Lives on the updating thread's stack. */
struct rt_upd {
  const net_addr *n;
  struct rte_src *src;
  u32 hash;
  u8 applied;                 /* the change went in: new is published */
  u8 old_best, new_best;      /* for the trace */
  struct rte *new;            /* NULL: a withdrawal */
  /* An announcement whose net was not there when looked for brings one
   * along, made outside the lock; freed unpublished when the net is there
   * by then. */
  struct net *fresh;
  struct net *net;            /* applied: the net and the route it lost */
  struct rte *old;
  /* Batches: the route of the chain asked for last, and the one before
   * it whose attributes were asked for, its walk's step still to come. */
  struct rte *ahead, *walk_at;
  /* Found before the lock (rt_upd_walk): the net, its ver then, the
   * old route of the source and where the change goes; good under the
   * lock if the net and its ver are the same (and the table's jend then
   * says ver cannot have wrapped since). */
  struct net *pre_net;
  struct rte *pre_old;
  struct rt_place pre_at;
  struct rte *walk_prev;      /* the walk's last route */
  u64 pre_seq;
  u16 pre_ver;
  u8 placed;                  /* the walk found new's place (or has none) */
  uint res;
  /* A withdrawal only of a route older than stale_gen (rt_import) */
  u8 stale_only;
  u16 stale_gen;
};

static void
rt_upd_prepare(struct rtable *t, struct rt_upd *u, const net_addr *n, struct rte_src *src,
               struct channel *sender, struct ea_list *attrs, u16 flags, int gen, int refs, btime now)
{
  *u = (struct rt_upd){ .n = n, .src = src, .hash = rt_net_hash(n) };
  if (!attrs)
    return;
  /* The sender's loop is the one importing: its generation is stable here. */
  u16 g = gen >= 0 ? (u16) gen : sender ? uatomic_read(&sender->refresh.gen) : 0;
  u->new = rte_new(src, chan_sender_id(sender, t), attrs, flags, g, refs, now);
}

/* Before the lock, inside the read section: the old route of the source
 * and where the change goes in the chain of net (may be NULL), the
 * comparisons of the new route with the others, with their cache misses,
 * made outside the lock. A change of the chain meanwhile moves its ver,
 * and rt_upd_apply() then walks it again. seq: the table's jend, read
 * (acquire) before the walk. A batch walks a chain a route at a time
 * (rt_batch_chain_on), each once its attributes have come; one update
 * walks it at once (rt_upd_walk). */
static void
rt_upd_walk_start(struct rt_upd *u, struct net *net, u64 seq)
{
  u->pre_net = net;
  u->pre_old = NULL;
  u->pre_at = (struct rt_place){ 0 };
  u->walk_prev = NULL;
  u->placed = !u->new;
  if (!net)
    return;
  u->pre_seq = seq;
  u->pre_ver = net_ver(net);
}

/* The walk is over once both the old route and the new one's place are
 * known: the routes after them are not read. */
static inline int rt_upd_walk_done(const struct rt_upd *u) { return u->placed && u->pre_old; }

/* Route r of the chain, the one after those walked so far. */
static inline void
rt_upd_walk_step(struct rt_upd *u, struct rte *r)
{
  if (!u->pre_old && r->src_ix == rt_src_ix(u->src)) {
    u->pre_old = r;
    u->pre_at.old_after = u->walk_prev;
  } else if (!u->placed) {
    if (rte_goes_before(u->new, r))
      u->placed = 1;
    else
      u->pre_at.new_after = r;
  }
  u->walk_prev = r;
}

/* The rest of the walk, from route r on. */
static void
rt_upd_walk_rest(struct rt_upd *u, struct rte *r)
{
  if (!u->pre_net)
    return;
  for (; r && !rt_upd_walk_done(u); r = rcu_dereference(r->next))
    rt_upd_walk_step(u, r);
  u->pre_at.known = 1;
}

static void
rt_upd_walk(struct rt_upd *u, struct net *net, u64 seq)
{
  rt_upd_walk_start(u, net, seq);
  rt_upd_walk_rest(u, net ? rcu_dereference(net->routes) : NULL);
}

static void
rt_upd_make_net(struct rt_upd *u)
{
  u->fresh = net_alloc(u->n);
  memset(u->fresh, 0, offsetof(struct net, n));
  net_copy(&u->fresh->n, u->n);
}

/* The sender's number in t when its routes are copies (a pipe's), else 0:
 * rt_upd_apply() keeps such a sender off the routes of others. Inside a
 * read section. */
static u16
rt_copy_sender(struct rtable *t, struct channel *sender)
{
  u16 sid = chan_sender_id(sender, t);
  return sid && rt_sender_origin(t, sid) ? sid : 0;
}

/* Under the writer lock. copy: rt_copy_sender(). */
static void
rt_upd_apply(struct rtable *t, struct rt_upd *u, u16 copy)
{
  /* A net walked before the lock whose ver has not moved since is still
   * in the index, unless its chain is empty: a net leaves the index only
   * in the change that empties its chain, and the walk may have read the
   * ver that change left. */
  struct net *net = u->pre_net;
  int walked = net && u->pre_at.known && t->jend + t->junpub - u->pre_seq < RT_VER_TRUST &&
               net_ver(net) == u->pre_ver && net->routes;
  if (!walked) {
    struct rcu_hash_iter it;
    net = rt_index_find(t, u->hash, u->n, &it);
  }
  if (!net && u->new) {
    /* The net was there when looked for before the lock and has gone
     * since (emptied by another writer, removed by the cleanup): rare
     * enough to be made under the lock. */
    if (!u->fresh)
      rt_upd_make_net(u);
    net = u->fresh;
    u->fresh = NULL;
    rt_net_link(t, net, u->hash, copy);
  }
  if (!net)
    return;

  /* The old route of this source, and where the change goes. */
  struct rte *old = NULL, *new = u->new;
  struct rt_place at = { 0 };
  if (walked) {
    old = u->pre_old;
    at = u->pre_at;
  } else
    for (struct rte *r = net->routes; r && !old; r = r->next)
      if (r->src_ix == rt_src_ix(u->src))
        old = r;

  if (old && copy && old->sender != copy) {
    u->res = RT_UPD_CLASH;
    return;
  }
  /* the route came again since the walk that withdraws it saw it */
  if (u->stale_only && old && !rte_gen_older(old, u->stale_gen))
    return;
  if (old && new && rte_attrs(old) == rte_attrs(new) && rte_flags(old) == rte_flags(new)) {
    /* Announced again unchanged: only a refresh cycle cares (the route is
     * fresh now); no journal item, nothing to export. */
    if (old->refresh_gen != new->refresh_gen)
      uatomic_set(&old->refresh_gen, new->refresh_gen);
    return;
  }
  if (!old && !new)
    return;

  u->old_best = old && net->routes == old;
  struct rt_group gnew = rt_group_of(t, rte_usable(new)), gold = rt_group_of(t, rte_usable(old));
  if (gnew.key) {
    struct rte *best = rt_group_best(t, net, &gnew, old, new);
    rt_group_suppress(t, net, &gnew, best, old);
    rte_set_suppressed(new, !rt_group_keeps(&gnew, best, new));
  }
  if (gnew.key || gold.key)
    at.known = 0;               /* the groups' flips move the chain */
  u->res = rt_change(t, net, old, new, &at);
  if (gnew.key)
    rt_group_lift(t, net, &gnew);
  if (gold.key && !rt_group_same(&gold, &gnew))
    rt_group_lift(t, net, &gold);
  u->new_best = new && net->routes == new;
  u->applied = 1;
  u->net = net;
  u->old = old;
}

/* After the lock, inside the read section the update ran in: the routes
 * traced may be retired already, not freed. */
static void
rt_upd_finish(struct rtable *t, struct rt_upd *u, struct channel *sender, u32 debug)
{
  uint what = u->res & RT_UPD_USABLE;
  if (u->applied && what && ((debug & D_ROUTES) || (sender && chan_debug(sender, D_ROUTES))))
    rt_trace_change(t, u->net, sender, what == RT_UPD_REMOVE ? u->old : u->new, what,
                    what == RT_UPD_REMOVE ? u->old_best : u->new_best, debug & D_ROUTES);
  if (u->fresh)
    net_free(u->fresh);
  if (!u->applied && u->new)
    rte_drop_unpublished(u->new);
}

/* The writer lock of the hot paths (updates, batches): held for one step
 * of a batch, about a microsecond (lib/wlock.h spins before it sleeps). */
static inline void
rt_writer_lock(struct rtable *t)
{
  wlock_take(&t->lock);
  /* before any chain changes: a reader that sees one sees this too
   * (rcu_assign_pointer releases) */
  uatomic_set(&t->writing, 1);
}

/* The changes made under the lock published, the lock given up. */
static inline void
rt_writer_unlock(struct rtable *t)
{
  rt_journal_publish(t);
  cmm_smp_wmb();        /* jend before writing: writing 0 means jend covers all */
  uatomic_set(&t->writing, 0);
  wlock_give(&t->lock);
}

/* gen: the refresh generation the route gets, -1 for the sender's current. */
static uint
rt_update_gen(struct rtable *t, const net_addr *n, struct rte_src *src,
              struct channel *sender, struct ea_list *attrs, u16 flags, int gen)
{
  pthread_once(&rt_slabs_once, rt_slabs_init);
  struct rt_upd u;
  rt_upd_prepare(t, &u, n, src, sender, attrs, flags, gen, 0, loop_now_real());
  rcu_read_lock();
  /* The net is looked for and its chain walked before the lock: a net to
   * make is made outside it, and the lookup's cache misses are not waited
   * for under it (the one under the lock finds its lines there). */
  u64 seq = __atomic_load_n(&t->jend, __ATOMIC_ACQUIRE);
  struct rcu_hash_iter it;
  struct net *net = rt_index_find(t, u.hash, u.n, &it);
  if (!net && u.new)
    rt_upd_make_net(&u);
  rt_upd_walk(&u, net, seq);
  u16 copy = rt_copy_sender(t, sender);
  rt_writer_lock(t);
  rt_upd_apply(t, &u, copy);
  rt_writer_unlock(t);
  rt_upd_finish(t, &u, sender, uatomic_read(&t->debug));
  rcu_read_unlock();
  return u.res;
}

uint
rt_update(struct rtable *t, const net_addr *n, struct rte_src *src,
          struct channel *sender, struct ea_list *attrs, u16 flags)
{
  return rt_update_gen(t, n, src, sender, attrs, flags, -1);
}

/* Updates per step of a batch: enough to cover a cache miss with the
 * others' work, few enough to keep the writer lock short. */
#define RT_BATCH_STEP 16

/* The references of a step's new routes, one add per run of routes with
 * the same attributes or source (an UPDATE's routes share both): the
 * locked adds would each wait for the fresh routes written before them. */
static void
rt_batch_refs(const struct rt_import *b, uint k)
{
  for (uint i = 0, n; i < k; i += n) {
    n = 1;
    while (i + n < k && b[i + n].attrs == b[i].attrs)
      n++;
    if (b[i].attrs)
      ea_ref_many(b[i].attrs, n);
  }
  for (uint i = 0, n; i < k; i += n) {
    uint routes = !!b[i].attrs;
    n = 1;
    for (; i + n < k && b[i + n].src == b[i].src; n++)
      routes += !!b[i + n].attrs;
    if (routes)
      rt_lock_source_many(b[i].src, routes);
  }
}

/* What a comparison of routes reads of their attributes (rte_better):
 * the list's protocol memo and preference, 24 bytes that end its first
 * 64 (nest/rt_attr.h); malloc aligns lists to 16, so they may span two
 * lines. */
static inline void
rt_prefetch_attrs(const struct ea_list *a)
{
  __builtin_prefetch(a->memo);
  __builtin_prefetch((const char *) &a->preference + 3);
}

/* A step's first stage: its routes and nets made, the use counts they
 * reference and their buckets asked for. */
static void
rt_batch_prepare(struct rtable *t, struct channel *sender, struct rt_import *b, uint k, struct rt_upd *u, btime now)
{
  for (uint i = 0; i < k; i++)
    if (b[i].attrs)
      __builtin_prefetch(&b[i].attrs->uc, 1);
  for (uint i = 0; i < k; i++) {
    rt_upd_prepare(t, &u[i], b[i].net, b[i].src, sender, b[i].attrs, b[i].flags, b[i].keep_gen ? b[i].gen : -1, 1,
                   now);
    u[i].stale_only = b[i].stale_only && !b[i].attrs;
    u[i].stale_gen = b[i].gen;
    rcu_hash_prefetch(&t->nets, u[i].hash);
  }
}

/* The second: the references taken, each bucket's first net asked for. */
static void
rt_batch_reach(struct rtable *t, struct rt_import *b, uint k, struct rt_upd *u)
{
  rt_batch_refs(b, k);
  for (uint i = 0; i < k; i++)
    rcu_hash_prefetch_node(&t->nets, u[i].hash, 0);
}

/* The third: the second net of each bucket asked for. A new net is
 * compared with every net of its bucket: at one net per bucket, a third
 * of the inserts met a second one, a cache miss the step before had not
 * asked for. */
static void
rt_batch_reach_on(struct rtable *t, uint k, struct rt_upd *u)
{
  for (uint i = 0; i < k; i++)
    rcu_hash_prefetch_node(&t->nets, u[i].hash, 1);
}

/* Then the chain of routes the update will compare with: its net has
 * come, its first route is asked for (an announcement whose net is not
 * there gets one made here: most find theirs, so none is made before).
 * With several paths per net, the routes' attributes were most of an
 * insert's cache misses (rte_better reads them), and each route is known
 * only once the one before it has come: the steps that follow walk the
 * chain one route further each. */
static void
rt_batch_chain(struct rtable *t, uint k, struct rt_upd *u)
{
  struct rcu_hash_iter it;
  u64 seq = __atomic_load_n(&t->jend, __ATOMIC_ACQUIRE);
  for (uint i = 0; i < k; i++) {
    struct net *net = rt_index_find(t, u[i].hash, u[i].n, &it);
    if (!net && u[i].new)
      rt_upd_make_net(&u[i]);   /* outside the lock; most nets are there */
    rt_upd_walk_start(&u[i], net, seq);
    u[i].walk_at = NULL;
    u[i].ahead = net ? rcu_dereference(net->routes) : NULL;
    if (u[i].ahead)
      __builtin_prefetch(u[i].ahead);
  }
}

/* One route further: the route whose attributes were asked for the step
 * before is walked, the route that has come gets its attributes asked
 * for if the walk will compare with it, and the next route is asked for.
 * The walk stops where it is over: a route past the new one's place is
 * not compared with (of the attribute lists inserts of 2-5 paths in
 * random order asked for before, a fifth were never read), and a
 * withdrawal or a replacement reads no route past the old one. Returns
 * whether a walk of the step goes on (has a route to walk next round). */
static int
rt_batch_chain_on(uint k, struct rt_upd *u)
{
  int more = 0;
  for (uint i = 0; i < k; i++) {
    if (u[i].walk_at) {
      rt_upd_walk_step(&u[i], u[i].walk_at);
      u[i].walk_at = NULL;
      if (rt_upd_walk_done(&u[i]))
        u[i].ahead = NULL;
    }
    struct rte *r = u[i].ahead;
    if (!r)
      continue;
    if (!u[i].placed && r->src_ix != rt_src_ix(u[i].src)) {
      rt_prefetch_attrs(rte_attrs(r));
      rt_prefetch_attrs(rte_attrs(u[i].new));
    }
    u[i].walk_at = r;
    more = 1;
    if ((u[i].ahead = rcu_dereference(r->next)))
      __builtin_prefetch(u[i].ahead);
  }
  return more;
}

/* The last: the chains walked, the changes made under the writer lock,
 * and what follows them. */
static void
rt_batch_apply(struct rtable *t, struct channel *sender, struct rt_import *b, uint k, struct rt_upd *u, u32 debug,
               u16 copy)
{
  /* Chains longer than the stages read ahead are walked on together, a
   * route further each round, so that their routes' and attributes'
   * misses overlap: walked one by one, each route and then its attributes
   * were waited for in turn (16 paths a net: most of an insert). */
  while (rt_batch_chain_on(k, u))
    ;
  for (uint i = 0; i < k; i++)
    rt_upd_walk_rest(&u[i], NULL);
  rt_writer_lock(t);
  for (uint i = 0; i < k; i++)
    rt_upd_apply(t, &u[i], copy);
  rt_writer_unlock(t);
  for (uint i = 0; i < k; i++) {
    rt_upd_finish(t, &u[i], sender, debug);
    b[i].result = u[i].res;
  }
}

/* The steps of a batch go through these stages in a pipeline: while one
 * step is applied, the routes of the chains of the steps before it are
 * asked for one link further each, the next one's nets have come and
 * their first routes are asked for, the one before that's first nets
 * have come and their second ones are asked for, the buckets of the one
 * before have come and their first nets are asked for, and the one
 * before that is prepared. Each cache miss then has a whole step's work
 * to arrive in. Nothing but apply changes the table, so reading ahead
 * changes no result (another writer's changes meanwhile cost misses). */
#define RT_BATCH_CHAIN 3        /* routes of a chain read ahead */
#define RT_BATCH_STAGES (5 + RT_BATCH_CHAIN)
void
rt_update_batch(struct rtable *t, struct channel *sender, struct rt_import *im, uint n)
{
  pthread_once(&rt_slabs_once, rt_slabs_init);
  struct rt_upd u[RT_BATCH_STAGES][RT_BATCH_STEP];
  u32 debug = uatomic_read(&t->debug);
  btime now = loop_now_real();    /* one UPDATE's routes: one import time */
  uint steps = (n + RT_BATCH_STEP - 1) / RT_BATCH_STEP;
  rcu_read_lock();
  u16 copy = rt_copy_sender(t, sender);
  for (uint s = 0; s < steps + RT_BATCH_STAGES - 1; s++)
    for (int stage = RT_BATCH_STAGES - 1; stage >= 0; stage--) {
      if (s < (uint) stage || s - (uint) stage >= steps)
        continue;
      uint at = s - (uint) stage;
      struct rt_import *b = im + at * RT_BATCH_STEP;
      struct rt_upd *us = u[at % RT_BATCH_STAGES];
      uint k = MIN(n - at * RT_BATCH_STEP, RT_BATCH_STEP);
      switch (stage) {
        case 0: rt_batch_prepare(t, sender, b, k, us, now); break;
        case 1: rt_batch_reach(t, b, k, us); break;
        case 2: rt_batch_reach_on(t, k, us); break;
        case 3: rt_batch_chain(t, k, us); break;
        case RT_BATCH_STAGES - 1: rt_batch_apply(t, sender, b, k, us, debug, copy); break;
        default: rt_batch_chain_on(k, us); break;
      }
    }
  rt_journal_trim_due(t);
  rcu_read_unlock();
}
