/*
 * DOC: Micro-benchmarks of the route table core.
 *
 * Runs the real table code (libdaemon.a) without a protocol: the bench
 * thread calls ea_intern() and rt_update() directly, the way a channel
 * does after its filters. The process's main thread runs the main loop,
 * and the table's maintenance loop (journal cleanup) runs on its worker
 * thread, as in the daemon.
 *
 * Inputs are deterministic (fixed seeds; bench/rt_bench_input.c): 1M
 * unique IPv4 prefixes of DFZ-like lengths and BGP-like attribute sets,
 * one distinct set per 4 routes of a peer (ATTR_SHARE), ordered like BGP.
 *
 * Memory is measured in a child process per scenario (this binary run
 * with --mem-child KIND), so that heap left over from earlier benchmarks
 * cannot hide or inflate growth. Other modes: --gen-static N prints a
 * config with N static blackhole routes from the same prefix generator
 * (bench/run.sh feeds it to BIRD 2 and to our daemon).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/harness.h"
#include "bench/rt_bench.h"
#include "conf/conf.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/resource.h"
#include "nest/proto.h"
#include "nest/reconf.h"
#include "nest/rt.h"
#include "nest/rt_valid.h"
#include "proto/bgp/bgp_memo.h"

#define NPFX_FULL 1000000
#define ATTR_SHARE 4            /* routes of one peer per distinct attribute set */
#define MP_SOURCES 5            /* multi-path table: paths from 5 peers, 2-5 per net */
#define MT_MAX_THREADS 16          /* peers[] holds 16 sources */

static u32 npfx = NPFX_FULL;    /* --quick: 100k */

static net_addr_ip4 *pfx;

/* --- (1) Attribute interning --- */

struct intern_state {
  struct ea_builder b;
  struct bgp_buf buf;
  struct ea_list *held;
  struct ea_list **made;
  u32 med;
};

static struct intern_state intern_st;

static void
intern_setup(void *s)
{
  struct intern_state *st = s;
  bgp_attrs(&st->b, &st->buf, 3, 12345, 0);
  st->held = ea_intern(&st->b);
}

static void
intern_teardown(void *s)
{
  struct intern_state *st = s;
  ea_unref(st->held);
  rcu_barrier();
}

static void
intern_hit_run(void *s, u64 iters)
{
  struct intern_state *st = s;
  for (u64 i = 0; i < iters; i++) {
    struct ea_list *l = ea_intern(&st->b);
    bench_keep(l);
    ea_unref(l);
  }
}

static void
intern_miss_before(void *s, u64 iters)
{
  struct intern_state *st = s;
  st->made = malloc(iters * sizeof(*st->made));
}

static void
intern_miss_run(void *s, u64 iters)
{
  struct intern_state *st = s;
  for (u64 i = 0; i < iters; i++) {
    ea_set_int(&st->b, BA(BA_MULTI_EXIT_DISC), EAF_INT, 0x80, ++st->med);   /* a set never seen */
    st->made[i] = ea_intern(&st->b);
  }
}

static void
intern_miss_after(void *s, u64 iters)
{
  struct intern_state *st = s;
  for (u64 i = 0; i < iters; i++)
    ea_unref(st->made[i]);
  free(st->made);
  rcu_barrier();
}

/* Dropping the last reference: unlink from the hash, free after RCU. */
static void
intern_unref_run(void *s, u64 iters)
{
  struct intern_state *st = s;
  for (u64 i = 0; i < iters; i++)
    ea_unref(st->made[i]);
}

static void
intern_unref_before(void *s, u64 iters)
{
  intern_miss_before(s, iters);
  intern_miss_run(s, iters);
}

static void
intern_unref_after(void *s, u64 iters)
{
  struct intern_state *st = s;
  (void) iters;
  free(st->made);
  rcu_barrier();
}

/* --- (2)(3) One source, 1M prefixes: insert, replace, withdraw --- */

static void mp_flush(void);
static void mp_batch(int withdraw, enum rt_update_result want);

static int one_loaded;     /* the table holds pfx[*] from peer 0 */
static u64 one_cursor;     /* replace: position in the endless sequence of updates */

static void
one_setup(void *s)
{
  (void) s;
  mp_flush();
  peer_pool(0, npfx / ATTR_SHARE, 1);
}

static void
one_load_raw(void)
{
  for (u32 i = 0; i < npfx; i++)
    upd(&pfx[i], 0, peer_attrs(0, i, 0), RT_UPD_ADD);
  one_loaded = 1;
  one_cursor = 0;
}

static void
one_load(void)
{
  if (one_loaded)
    return;
  one_load_raw();
}

static void
one_flush(void)
{
  if (!one_loaded)
    return;
  for (u32 i = 0; i < npfx; i++)
    upd(&pfx[i], 0, NULL, RT_UPD_REMOVE);
  one_loaded = 0;
  table_quiesce();
}

static void one_insert_run(void *s, u64 iters)
{
  (void) s;
  ASSERT_DIE(!one_loaded && iters == npfx);
  one_load_raw();
}
static void one_flush_hook(void *s, u64 iters) { (void) s; (void) iters; one_flush(); }
static void one_load_hook(void *s, u64 iters) { (void) s; (void) iters; one_load(); }
static void one_load_setup(void *s) { one_setup(s); one_load(); }
static void one_flush_teardown(void *s) { (void) s; one_flush(); }
static void one_quiesce_hook(void *s, u64 iters) { (void) s; (void) iters; table_quiesce(); }

/* Each pass over the prefixes switches every route to the other variant,
 * so every update is a real change (new attributes, best recomputed). */
static void
one_replace_run(void *s, u64 iters)
{
  (void) s;
  for (u64 i = 0; i < iters; i++, one_cursor++) {
    u32 idx = one_cursor % npfx;
    u32 variant = (one_cursor / npfx + 1) & 1;
    upd(&pfx[idx], 0, peer_attrs(0, idx, variant), RT_UPD_REPLACE);
  }
}

static void
one_withdraw_run(void *s, u64 iters)
{
  (void) s;
  ASSERT_DIE(one_loaded && iters == npfx);
  for (u32 i = 0; i < npfx; i++)
    upd(&pfx[i], 0, NULL, RT_UPD_REMOVE);
  one_loaded = 0;
}

/* The same updates as BGP brings the NLRI of an UPDATE to the table:
 * rt_update_batch() over up to 256 routes (BGP_RX_BATCH), of a peer.
 * Updates from cursor on, as one_replace_run numbers them; variant < 0:
 * the one of the update's pass, else that one; withdraw: attributes NULL. */
#define ONE_BATCH 256

/* One rt_update_batch() of k routes, each of which must come out as want. */
static void
batch_apply(struct rt_import *im, uint k, enum rt_update_result want)
{
  rt_update_batch(tab, NULL, im, k);
  for (uint i = 0; i < k; i++)
    if (im[i].result != want)
      unexpected++;
}

static void
peer_batch(u32 peer, u64 cursor, u64 count, int variant, int withdraw, enum rt_update_result want)
{
  struct rt_import im[ONE_BATCH];
  while (count) {
    uint k = (uint) MIN(count, ONE_BATCH);
    for (uint i = 0; i < k; i++) {
      u64 c = cursor + i;
      u32 idx = (u32) (c % npfx), v = variant >= 0 ? (u32) variant : (u32) ((c / npfx + 1) & 1);
      im[i] = (struct rt_import){ .net = NA(&pfx[idx]), .src = peers[peer].src,
                                  .attrs = withdraw ? NULL : peer_attrs(peer, idx, v) };
    }
    batch_apply(im, k, want);
    cursor += k;
    count -= k;
  }
}

static void
one_insert_batch_run(void *s, u64 iters)
{
  (void) s;
  ASSERT_DIE(!one_loaded && iters == npfx);
  peer_batch(0, 0, npfx, 0, 0, RT_UPD_ADD);
  one_loaded = 1;
  one_cursor = 0;
}

static void
one_replace_batch_run(void *s, u64 iters)
{
  (void) s;
  peer_batch(0, one_cursor, iters, -1, 0, RT_UPD_REPLACE);
  one_cursor += iters;
}

static void
one_withdraw_batch_run(void *s, u64 iters)
{
  (void) s;
  ASSERT_DIE(one_loaded && iters == npfx);
  peer_batch(0, 0, npfx, 0, 1, RT_UPD_REMOVE);
  one_loaded = 0;
}


/* --- (4)(5) Multi-path table: 1M nets, 2-5 paths each from 5 peers --- */

static int mp_loaded;
static u64 mp_routes;
static u64 mp_cursor;
static net_addr_ip4 *lpm_hit, *lpm_rand;
#define LPM_KEYS (1 << 20)

/* Net i has k(i) = 2..5 paths, from peers (i + j) % 5 for j < k(i). */
static inline uint mp_paths(u32 i) { return 2 + hash_u32(i * 2654435761U) % 4; }
static inline int
mp_has(u32 i, u32 peer)
{
  return (peer + MP_SOURCES - i % MP_SOURCES) % MP_SOURCES < mp_paths(i);
}

static void
mp_setup(void *s)
{
  (void) s;
  one_flush();
  if (!mp_routes)
    for (u32 i = 0; i < npfx; i++)
      mp_routes += mp_paths(i);
  for (u32 p = 0; p < MP_SOURCES; p++)
    peer_pool(p, (u32) (mp_routes / MP_SOURCES / ATTR_SHARE), 1);
}

/* Peers come up one after another: each sends its whole table. The first
 * peer's routes create the nets, the others' go through best selection. */
static void
mp_load_raw(void)
{
  for (u32 p = 0; p < MP_SOURCES; p++)
    for (u32 i = 0; i < npfx; i++)
      if (mp_has(i, p))
        upd(&pfx[i], p, peer_attrs(p, i, 0), RT_UPD_ADD);
  mp_loaded = 1;
  mp_cursor = 0;
}

static void
mp_load(void)
{
  if (mp_loaded)
    return;
  mp_load_raw();
}

static void
mp_flush(void)
{
  if (!mp_loaded)
    return;
  /* In batches, as BGP withdraws: one by one, this setup outweighed the
   * measured inserts in a profile of the whole run (session 55). */
  mp_batch(1, RT_UPD_REMOVE);
  mp_loaded = 0;
  table_quiesce();
}

static void
mp_insert_run(void *s, u64 iters)
{
  (void) s;
  ASSERT_DIE(!mp_loaded && iters == mp_routes);
  mp_load_raw();
}

/* A table that never calls the protocol's tiebreak hook was built from
 * other headers than this program (struct proto_class differs). */
static void
mp_check_hook(void *s)
{
  (void) s;
  if (!better_calls) {
    fprintf(stderr, "rt_bench: the table never called the bench class's rte_better hook: "
                    "libraries and headers differ (stale build?)\n");
    bench_note("**Invalid run:** the table never called the protocol's rte_better hook; the libraries "
               "were built from other headers than rt_bench (stale build).");
  }
}
static void
mp_withdraw_run(void *s, u64 iters)
{
  (void) s;
  ASSERT_DIE(mp_loaded && iters == mp_routes);
  for (u32 p = 0; p < MP_SOURCES; p++)
    for (u32 i = 0; i < npfx; i++)
      if (mp_has(i, p))
        upd(&pfx[i], p, NULL, RT_UPD_REMOVE);
  mp_loaded = 0;
}
/* The same loads and flushes as BGP brings them: each peer's routes in
 * batches of ONE_BATCH (an UPDATE's NLRI), through rt_update_batch(). */
static void
mp_batch(int withdraw, enum rt_update_result want)
{
  struct rt_import im[ONE_BATCH];
  for (u32 p = 0; p < MP_SOURCES; p++)
    for (u32 i = 0, k = 0; i < npfx || k; ) {
      if (i < npfx && k < ONE_BATCH) {
        if (mp_has(i, p))
          im[k++] = (struct rt_import){ .net = NA(&pfx[i]), .src = peers[p].src,
                                        .attrs = withdraw ? NULL : peer_attrs(p, i, 0) };
        i++;
        continue;
      }
      batch_apply(im, k, want);
      k = 0;
    }
}

static void
mp_insert_batch_run(void *s, u64 iters)
{
  (void) s;
  ASSERT_DIE(!mp_loaded && iters == mp_routes);
  mp_batch(0, RT_UPD_ADD);
  mp_loaded = 1;
  mp_cursor = 0;
}

static void
mp_withdraw_batch_run(void *s, u64 iters)
{
  (void) s;
  ASSERT_DIE(mp_loaded && iters == mp_routes);
  mp_batch(1, RT_UPD_REMOVE);
  mp_loaded = 0;
}

/* An endless walk over every net, one peer's after another: pass counts
 * the rounds over all peers. */
struct peer_walk { u32 peer, net, pass; };

/* iters replacements as BGP brings them: batches of ONE_BATCH of one
 * peer's routes, those pick() gives new attributes for (NULL: none). */
static void
walk_replace(struct peer_walk *w, u64 iters, struct ea_list *(*pick)(const struct peer_walk *w))
{
  struct rt_import im[ONE_BATCH];
  while (iters) {
    uint k = 0;
    u32 peer = w->peer;
    while (k < ONE_BATCH && k < iters) {
      struct ea_list *a = pick(w);
      if (a)
        im[k++] = (struct rt_import){ .net = NA(&pfx[w->net]), .src = peers[peer].src, .attrs = a };
      if (++w->net == npfx) {
        w->net = 0;
        if (++w->peer == MP_SOURCES) {
          w->peer = 0;
          w->pass++;
        }
        break;
      }
    }
    batch_apply(im, k, RT_UPD_REPLACE);
    iters -= k;
  }
}

/* Replace: a peer's routes again with other attributes, each pass over
 * them switching every route's variant. From a table loaded afresh (the
 * one-by-one replace leaves its variants mixed). */
static struct peer_walk mprb;

static void
mp_reload_setup(void *s)
{
  mp_setup(s);
  mp_flush();
  mp_load();
  mprb = (struct peer_walk) { 0 };
}

static struct ea_list *
mprb_pick(const struct peer_walk *w)
{
  return mp_has(w->net, w->peer) ? peer_attrs(w->peer, w->net, (w->pass + 1) & 1) : NULL;
}

static void
mp_replace_batch_run(void *s, u64 iters)
{
  (void) s;
  walk_replace(&mprb, iters, mprb_pick);
}

/* Best-route recompute: every change moves a net's best route. A net's
 * best path is replaced by a worse copy (local pref 50, below every set's
 * 100-120), so the next path takes over and the copy goes to the chain's
 * end; the pass after restores it, and it takes over again. Each peer's
 * nets in batches of ONE_BATCH, the peers in turn, as BGP brings them;
 * each pass over every net switches from worsening to restoring. From a
 * table loaded afresh, whose best paths are looked up once at setup. */
static u8 *best_of;                     /* net i's best path is peer best_of[i]'s */
static struct ea_list *best_worse[MP_SOURCES];
static struct peer_walk best_walk;

static struct rte_src *
best_src(u32 i)
{
  struct net *n = rt_find_net(tab, NA(&pfx[i]));
  struct rte *r = n ? net_best(n) : NULL;
  return r ? rte_src(r) : NULL;
}

static void
best_setup(void *s)
{
  mp_reload_setup(s);
  if (!best_of && !(best_of = malloc(npfx)))
    die("Out of memory");
  rcu_read_lock();
  for (u32 i = 0; i < npfx; i++) {
    struct rte_src *src = best_src(i);
    u32 p = 0;
    while (p < MP_SOURCES && peers[p].src != src)
      p++;
    ASSERT_DIE(p < MP_SOURCES);
    best_of[i] = (u8) p;
  }
  rcu_read_unlock();
  for (u32 p = 0; p < MP_SOURCES; p++)
    if (!best_worse[p]) {
      struct ea_builder b;
      struct bgp_buf buf;
      bgp_attrs(&b, &buf, p, 0, 0);
      ea_set_int(&b, BA(BA_LOCAL_PREF), EAF_INT, 0x40, 50);
      best_worse[p] = ea_intern(&b);
    }
  best_walk = (struct peer_walk) { 0 };
}

static struct ea_list *
best_pick(const struct peer_walk *w)
{
  if (best_of[w->net] != w->peer)
    return NULL;
  return w->pass & 1 ? peer_attrs(w->peer, w->net, 0) : best_worse[w->peer];
}

static void
best_change_run(void *s, u64 iters)
{
  (void) s;
  walk_replace(&best_walk, iters, best_pick);
}

/* Every change did move the best: a sample of nets, each of whose best is
 * its worsened path's only while the pass it is in restores them. */
static void
best_check(void *s)
{
  (void) s;
  u64 wrong = 0;
  rcu_read_lock();
  for (u32 i = 0; i < npfx; i += 997) {
    u32 p = best_of[i];
    const struct peer_walk *w = &best_walk;
    /* the pass that reached net i last: this one if it is past it */
    int reached = p < w->peer || (p == w->peer && i < w->net);
    if (!w->pass && !reached)
      continue;                         /* not changed yet */
    u32 pass = reached ? w->pass : w->pass - 1;
    int worsened = !(pass & 1);
    if ((best_src(i) == peers[p].src) == worsened)
      wrong++;
  }
  rcu_read_unlock();
  if (wrong)
    bench_note("**Check failed:** %llu sampled nets of rt/best/* had not the best route the changes made.",
               (unsigned long long) wrong);
}

static void mp_flush_hook(void *s, u64 iters) { (void) s; (void) iters; mp_flush(); }
static void mp_load_hook(void *s, u64 iters) { (void) s; (void) iters; mp_load(); }
static void mp_load_setup(void *s) { mp_setup(s); mp_load(); }

/* Replace: walk the routes net by net, path by path, switching variants
 * each pass (a real change every time, best route recomputed). */
static void
mp_replace_run(void *s, u64 iters)
{
  (void) s;
  static u32 net, path;
  for (u64 i = 0; i < iters; i++) {
    u32 peer = (net + path) % MP_SOURCES;
    u32 variant = (mp_cursor + 1) & 1;
    upd(&pfx[net], peer, peer_attrs(peer, net, variant), RT_UPD_REPLACE);
    if (++path == mp_paths(net)) {
      path = 0;
      if (++net == npfx) {
        net = 0;
        mp_cursor++;
      }
    }
  }
}

/* A walk over every route, as a channel's flush or a refresh cycle's end
 * makes one: the visit reads each route's sender and generation and
 * changes nothing (no route is stale). */
static void
mp_walk_run(void *s, u64 iters)
{
  (void) s;
  ASSERT_DIE(mp_loaded && iters == mp_routes);
  struct rt_stale_op op = { 0 };
  u64 pos = 0;
  uint removed = 0, modified = 0;
  while (!rt_stale_walk(tab, &op, &pos, 4096, &removed, &modified))
    ;
  if (removed || modified)
    unexpected++;
}

static void
lpm_setup(void *s)
{
  mp_load_setup(s);
  if (lpm_hit)
    return;
  u64 seed = 0x1a2b3c;
  lpm_hit = malloc(LPM_KEYS * sizeof(*lpm_hit));
  lpm_rand = malloc(LPM_KEYS * sizeof(*lpm_rand));
  for (u32 i = 0; i < LPM_KEYS; i++) {
    const net_addr_ip4 *p = &pfx[bench_rand(&seed) % npfx];
    u32 host = (u32) bench_rand(&seed) & ~u32_mkmask(p->pxlen);
    net_fill_ip4((net_addr *) &lpm_hit[i], ip4_from_u32(p->prefix.addr | host), 32);
    u32 a;
    do
      a = (u32) bench_rand(&seed);
    while ((a >> 24) == 0 || (a >> 24) >= 224);
    net_fill_ip4((net_addr *) &lpm_rand[i], ip4_from_u32(a), 32);
  }
}

static u64 lpm_found;

static void
lpm_run(const net_addr_ip4 *keys, u64 iters)
{
  u64 found = 0;
  for (u64 i = 0; i < iters; i++) {
    rcu_read_lock();
    struct net *n = rt_lookup_lpm(tab, NA(&keys[i & (LPM_KEYS - 1)]));
    found += n != NULL;
    rcu_read_unlock();
  }
  lpm_found += found;
}

static void lpm_hit_run(void *s, u64 iters) { (void) s; lpm_run(lpm_hit, iters); }
static void lpm_rand_run(void *s, u64 iters) { (void) s; lpm_run(lpm_rand, iters); }

static void
find_run(void *s, u64 iters)
{
  (void) s;
  u64 found = 0;
  for (u64 i = 0; i < iters; i++) {
    rcu_read_lock();
    found += rt_find_net(tab, NA(&pfx[i % npfx])) != NULL;
    rcu_read_unlock();
  }
  if (found != iters)
    unexpected++;
}

/* --- (7) Origin validation: roa_check against a ROA table --- */

/* Half the prefixes have a ROA (about the share of the DFZ that RPKI
 * covers): prefix i, for even i, with its own length as max length, or
 * two more one time in four, and origin roa_asn(i). Every route is
 * checked with the origin of its ROA, but one in ten with another: VALID,
 * INVALID and UNKNOWN all come, as at an IXP. */
static struct rtable *roa_tab;
static inline u32 roa_asn(u32 i) { return 64512 + i % 1000; }
static inline u32 roa_origin(u32 i) { return roa_asn(i) + (i % 10 == 1); }

static void
roa_setup(void *s)
{
  (void) s;
  if (roa_tab)
    return;
  roa_tab = rt_aux_table_new("roa4", NET_ROA4);
  peer_pool(0, 1, 0);
  for (u32 i = 0; i < npfx; i += 2) {
    net_addr r;
    net_fill_roa4(&r, pfx[i].prefix, pfx[i].pxlen, MIN(pfx[i].pxlen + (i % 4 ? 0 : 2), 32), roa_asn(i));
    rt_update(roa_tab, &r, peers[0].src, NULL, peer_attrs(0, 0, 0), 0);
  }
}

static void
roa_run(void *s, u64 iters)
{
  (void) s;
  u64 seen[3] = { 0 };
  for (u64 k = 0; k < iters; k++) {
    u32 i = (u32) (k % npfx);
    rcu_read_lock();
    seen[rt_roa_check(roa_tab, NA(&pfx[i]), roa_origin(i))]++;
    rcu_read_unlock();
  }
  if (iters >= npfx && !(seen[ROA_VALID] && seen[ROA_INVALID] && seen[ROA_UNKNOWN]))
    unexpected++;
}

/* --- (6) Several writer threads into one table --- */

/* The same work for every thread count: `sources` peers each insert the
 * same 1M nets (`sources` paths a net), their routes split over `threads`
 * writers (peer p's on writer p % threads, one peer after another, as a
 * loop serving several sessions). One writer doing all of it is the
 * reference the others' speedup is read against: the chains grow with
 * the peers, so runs of different peer counts do not compare. */
struct mt_state {
  uint threads, sources;
  int batched;              /* rt_update_batch of 256, as BGP writes */
  pthread_barrier_t go;
};

struct mt_arg {
  struct mt_state *st;
  u32 writer;
};

static void *
mt_writer(void *arg)
{
  struct mt_arg *a = arg;
  struct mt_state *st = a->st;
  rcu_thread_register();
  pthread_barrier_wait(&st->go);
  struct rt_import im[ONE_BATCH];
  for (u32 p = a->writer; p < st->sources; p += st->threads) {
    /* Each peer starts at its own offset: two peers do not send their
     * tables in the same order. */
    u32 off = p * (npfx / st->sources);
    uint n = 0;
    for (u32 k = 0; k < npfx; k++) {
      u32 i = (k + off) % npfx;
      if (!st->batched) {
        rt_update(tab, NA(&pfx[i]), peers[p].src, NULL, peer_attrs(p, i, 0), 0);
        continue;
      }
      im[n++] = (struct rt_import){ .net = NA(&pfx[i]), .src = peers[p].src, .attrs = peer_attrs(p, i, 0) };
      if (n == ONE_BATCH || k + 1 == npfx) {
        rt_update_batch(tab, NULL, im, n);
        n = 0;
      }
    }
  }
  rcu_thread_unregister();
  return NULL;
}

static void
mt_setup(void *s)
{
  struct mt_state *st = s;
  one_flush();
  mp_flush();
  for (u32 p = 0; p < st->sources; p++)
    peer_pool(p, npfx / ATTR_SHARE, 0);
}

static void
mt_run(void *s, u64 iters)
{
  struct mt_state *st = s;
  pthread_t th[MT_MAX_THREADS];
  struct mt_arg args[MT_MAX_THREADS];
  ASSERT_DIE(iters == (u64) npfx * st->sources);
  pthread_barrier_init(&st->go, NULL, st->threads);
  for (uint t = 0; t < st->threads; t++) {
    args[t] = (struct mt_arg){ .st = st, .writer = t };
    pthread_create(&th[t], NULL, mt_writer, &args[t]);
  }
  for (uint t = 0; t < st->threads; t++)
    pthread_join(th[t], NULL);
  pthread_barrier_destroy(&st->go);
}

static void
mt_after(void *s, u64 iters)
{
  struct mt_state *st = s;
  (void) iters;
  if (uatomic_read(&tab->route_count) != (u32) (npfx * st->sources))
    unexpected++;
  for (u32 p = 0; p < st->sources; p++)
    peer_batch(p, 0, npfx, 0, 1, RT_UPD_REMOVE);
  table_quiesce();
}

/* One state per (thread count, batched) registered; BENCH_MT_THREADS
 * picks the counts (default "1 2": a big machine asks "1 2 4 8 16"). */
static struct mt_state mt_states[2 * MT_MAX_THREADS];

/* --- (7) Resident memory per route, measured in a child process --- */

struct mem_scenario {
  const char *kind;
  const char *what;
  u32 peers;
  u32 prefixes;
  int random_paths;           /* 1..4 paths per net (mean 2.5), else every peer */
};

static const struct mem_scenario mem_scenarios[] = {
  { "2src-1M", "1M routes: 500k prefixes x 2 peers", 2, 500000, 0 },
  { "10src-1M", "~1M routes: 400k prefixes, 10 peers, 2.5 paths/prefix", 10, 400000, 1 },
  { "2src-900k", "rustbgpd shape: 900k prefixes x 2 peers (1.8M routes)", 2, 900000, 0 },
};

static inline uint mem_paths(u32 i) { return 1 + hash_u32(i ^ 0xabcdef) % 4; }
static inline int
mem_has(const struct mem_scenario *m, u32 i, u32 peer)
{
  if (!m->random_paths)
    return 1;
  return (peer + m->peers - i % m->peers) % m->peers < mem_paths(i);
}

static void
print_usage_line(const char *key, enum mem_class c)
{
  struct mem_usage u;
  mem_class_usage(c, &u);
  printf("%s_eff %zu\n%s_ovh %zu\n", key, u.effective, key, u.overhead);
}

/* Child: load the scenario into an empty table and print what it cost. */
static void
mem_child(const char *kind)
{
  const struct mem_scenario *m = NULL;
  for (uint i = 0; i < ARRAY_SIZE(mem_scenarios); i++)
    if (!strcmp(mem_scenarios[i].kind, kind))
      m = &mem_scenarios[i];
  if (!m)
    die("Unknown memory scenario %s", kind);
  u32 n = bench_quick() ? m->prefixes / 10 : m->prefixes;
  pfx = gen_prefixes(n, 42);
  u32 per_peer[16] = { 0 };
  u64 routes = 0;
  for (u32 p = 0; p < m->peers; p++) {
    peer_source(p);
    for (u32 i = 0; i < n; i++)
      per_peer[p] += mem_has(m, i, p);
    routes += per_peer[p];
  }
  table_quiesce();
  struct mem_usage t0, a0;
  mem_class_usage(MEM_TABLES, &t0);
  mem_class_usage(MEM_ATTRS, &a0);
  u64 sets0 = ea_count();
  u64 rss0 = bench_rss_bytes();

  for (u32 p = 0; p < m->peers; p++)
    peer_pool(p, MAX(1, per_peer[p] / ATTR_SHARE), 0);
  u64 t = bench_now_ns();
  for (u32 p = 0; p < m->peers; p++)
    for (u32 i = 0; i < n; i++)
      if (mem_has(m, i, p))
        upd(&pfx[i], p, peer_attrs(p, i, 0), RT_UPD_ADD);
  t = bench_now_ns() - t;
  table_quiesce();
  u64 rss1 = bench_rss_bytes();

  printf("routes %llu\nprefixes %u\n", (unsigned long long) routes, uatomic_read(&tab->net_count));
  printf("table_routes %u\n", uatomic_read(&tab->route_count));
  printf("rss_growth %llu\nrss %llu\n", (unsigned long long) (rss1 - rss0), (unsigned long long) rss1);
  printf("tables0_eff %zu\ntables0_ovh %zu\nattrs0_eff %zu\nattrs0_ovh %zu\n", t0.effective, t0.overhead,
         a0.effective, a0.overhead);
  print_usage_line("tables", MEM_TABLES);
  print_usage_line("attrs", MEM_ATTRS);
  printf("attr_sets %llu\n", (unsigned long long) (ea_count() - sets0));
  printf("load_ns %llu\nunexpected %llu\n", (unsigned long long) t, (unsigned long long) unexpected);
  fflush(stdout);
}

static char self_exe[4096];

struct mem_state {
  const struct mem_scenario *m;
};

static double
kv_get(const char *buf, const char *key)
{
  size_t kl = strlen(key);
  for (const char *p = buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
    if (!strncmp(p, key, kl) && p[kl] == ' ')
      return strtod(p + kl + 1, NULL);
  return -1;
}

static void
mem_measure(void *s)
{
  struct mem_state *st = s;
  char cmd[4200], buf[4096] = "";
  snprintf(cmd, sizeof(cmd), "'%s' --mem-child %s%s", self_exe, st->m->kind,
           bench_quick() ? " --quick" : "");
  FILE *f = popen(cmd, "r");
  if (!f) {
    bench_note("memory scenario %s: cannot start child", st->m->kind);
    return;
  }
  size_t len = fread(buf, 1, sizeof(buf) - 1, f);
  buf[len] = 0;
  int rc = pclose(f);
  double routes = kv_get(buf, "routes"), prefixes = kv_get(buf, "prefixes");
  if (rc || routes <= 0) {
    bench_note("memory scenario %s: child failed (status %d)", st->m->kind, rc);
    return;
  }
  double rss = kv_get(buf, "rss_growth");
  double tab_b = kv_get(buf, "tables_eff") + kv_get(buf, "tables_ovh") - kv_get(buf, "tables0_eff") -
                 kv_get(buf, "tables0_ovh");
  double attr_b = kv_get(buf, "attrs_eff") + kv_get(buf, "attrs_ovh") - kv_get(buf, "attrs0_eff") -
                  kv_get(buf, "attrs0_ovh");
  int two = st->m->peers == 2 && st->m->prefixes == 900000;
  bench_metric("routes", routes, "routes", st->m->what, -1);
  bench_metric("prefixes", prefixes, "nets", "", -1);
  bench_metric("RSS growth per route", rss / routes, "B/route", "< 200 B/route (issue 5)",
               rss / routes < 200);
  bench_metric("RSS growth per prefix", rss / prefixes, "B/prefix",
               two ? "rustbgpd ~637 B/prefix (2 peers + Loc-RIB, 900k)" : "",
               two ? rss / prefixes < 637 : -1);
  bench_metric("show memory: tables per route", tab_b / routes, "B/route", "", -1);
  bench_metric("show memory: attributes per route", attr_b / routes, "B/route", "", -1);
  bench_metric("attribute sets interned", kv_get(buf, "attr_sets"), "sets",
               "1 set per 4 routes of a peer (assumed sharing)", -1);
  bench_metric("load rate (1 thread, rt_update only)", routes / (kv_get(buf, "load_ns") / 1e9),
               "routes/s", "", -1);
  if (kv_get(buf, "unexpected") > 0)
    bench_note("memory scenario %s: %g unexpected rt_update results", st->m->kind, kv_get(buf, "unexpected"));
}

static struct mem_state mem_st[ARRAY_SIZE(mem_scenarios)];

/* --- --gen-static: the same prefixes as a BIRD config --- */

static int
gen_static(u32 n)
{
  net_addr_ip4 *v = n ? gen_prefixes(n, 42) : NULL;
  printf("# %u static blackhole routes generated by bench/rt_bench --gen-static (seed 42)\n", n);
  printf("router id 192.0.2.1;\nlog stderr { error, fatal };\nprotocol device {}\n");
  printf("protocol static bench4 {\n  ipv4;\n");
  for (u32 i = 0; i < n; i++) {
    u32 a = v[i].prefix.addr;
    printf("  route %u.%u.%u.%u/%u blackhole;\n", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255,
           v[i].pxlen);
  }
  printf("}\n");
  free(v);
  return 0;
}

/* --- Registration and main --- */

#define TGT_INSERT "≥ 5M/s per thread (issue 5); rustbgpd 2.6M/s Adj-RIB-In"

/* The writer-scaling benchmarks: as many peers as the largest thread
 * count asked for, their inserts split over each count of writers. */
static void
register_mt_benches(void)
{
  static char names[2 * MT_MAX_THREADS][48], targets[2 * MT_MAX_THREADS][96];
  const char *env = getenv("BENCH_MT_THREADS");
  char list[128];
  ulong counts[MT_MAX_THREADS], nc = 0, sources = 1;
  snprintf(list, sizeof(list), "%s", env && *env ? env : "1 2");
  for (char *save = NULL, *tok = strtok_r(list, " ,", &save); tok; tok = strtok_r(NULL, " ,", &save)) {
    ulong n = strtoul(tok, NULL, 10);
    if (n < 1 || n > MT_MAX_THREADS || nc == MT_MAX_THREADS) {
      fprintf(stderr, "BENCH_MT_THREADS: %s is not a thread count of 1 to %d, skipped\n", tok, MT_MAX_THREADS);
      continue;
    }
    counts[nc++] = n;
    sources = MAX(sources, n);
  }
  uint used = 0;
  for (int batched = 0; batched <= 1; batched++)
    for (ulong c = 0; c < nc; c++, used++) {
      ulong n = counts[c];
      struct mt_state *st = &mt_states[used];
      *st = (struct mt_state){ .threads = (uint) n, .sources = (uint) sources, .batched = batched };
      snprintf(names[used], sizeof(names[used]), "rt/insert/mt-%lusrc-%luthr%s", sources, n,
               batched ? "-batch" : "");
      snprintf(targets[used], sizeof(targets[used]), "≥ %luM/s aggregate (5M/s per thread); %lu paths a net%s",
               5 * n, sources, batched ? "; batches of 256" : "");
      bench_add(&(struct bench_spec){
        .name = names[used], .op = "insert", .state = st, .setup = mt_setup,
        .run = mt_run, .after = mt_after, .fixed_iters = (u64) sources * npfx, .target_ops = 5e6 * n,
        .target = targets[used] });
    }
}

static void
register_benches(void)
{
  static char name_mp_ins[64], name_mp_rep[64], name_mp_wd[64], name_mp_ins_b[64], name_mp_rep_b[64], name_mp_wd_b[64], name_mp_walk[64], name_mp_best[64];
  bench_add(&(struct bench_spec){
    .name = "attr/intern-hit", .op = "intern+unref", .state = &intern_st,
    .setup = intern_setup, .teardown = intern_teardown, .run = intern_hit_run,
    .target = "BGP-like set, 8 attrs, already interned" });
  bench_add(&(struct bench_spec){
    .name = "attr/intern-miss", .op = "intern", .state = &intern_st,
    .setup = intern_setup, .teardown = intern_teardown, .run = intern_miss_run,
    .before = intern_miss_before, .after = intern_miss_after,
    .target = "new set: flatten, hash, insert" });
  bench_add(&(struct bench_spec){
    .name = "attr/unref-last", .op = "unref", .state = &intern_st,
    .setup = intern_setup, .teardown = intern_teardown, .run = intern_unref_run,
    .before = intern_unref_before, .after = intern_unref_after,
    .target = "last reference: unlink + call_rcu" });

  bench_add(&(struct bench_spec){
    .name = "rt/insert/1src", .op = "insert", .setup = one_setup,
    .run = one_insert_run, .after = one_flush_hook, .fixed_iters = npfx, .target_ops = 5e6,
    .target = TGT_INSERT });
  bench_add(&(struct bench_spec){
    .name = "rt/replace/1src", .op = "replace", .setup = one_load_setup, .run = one_replace_run,
    .after = one_quiesce_hook, .teardown = one_flush_teardown, .target_ops = 5e6,
    .target = "≥ 5M/s per thread (issue 5)" });
  bench_add(&(struct bench_spec){
    .name = "rt/withdraw/1src", .op = "withdraw", .setup = one_setup, .before = one_load_hook,
    .run = one_withdraw_run, .after = one_quiesce_hook, .fixed_iters = npfx, .target_ops = 5e6,
    .target = "≥ 5M/s per thread (issue 5)" });
  bench_add(&(struct bench_spec){
    .name = "rt/insert/1src-batch", .op = "insert", .setup = one_setup,
    .run = one_insert_batch_run, .after = one_flush_hook, .fixed_iters = npfx, .target_ops = 5e6,
    .target = TGT_INSERT "; rt_update_batch of 256 (an UPDATE's NLRI)" });
  bench_add(&(struct bench_spec){
    .name = "rt/replace/1src-batch", .op = "replace", .setup = one_load_setup, .run = one_replace_batch_run,
    .after = one_quiesce_hook, .teardown = one_flush_teardown, .target_ops = 5e6,
    .target = "≥ 5M/s per thread (issue 5); batches of 256" });
  bench_add(&(struct bench_spec){
    .name = "rt/withdraw/1src-batch", .op = "withdraw", .setup = one_setup, .before = one_load_hook,
    .run = one_withdraw_batch_run, .after = one_quiesce_hook, .fixed_iters = npfx, .target_ops = 5e6,
    .target = "≥ 5M/s per thread (issue 5); batches of 256" });

  snprintf(name_mp_ins, sizeof(name_mp_ins), "rt/insert/%dsrc-2to5paths", MP_SOURCES);
  snprintf(name_mp_rep, sizeof(name_mp_rep), "rt/replace/%dsrc-2to5paths", MP_SOURCES);
  snprintf(name_mp_wd, sizeof(name_mp_wd), "rt/withdraw/%dsrc-2to5paths", MP_SOURCES);
  snprintf(name_mp_ins_b, sizeof(name_mp_ins_b), "rt/insert/%dsrc-2to5paths-batch", MP_SOURCES);
  snprintf(name_mp_rep_b, sizeof(name_mp_rep_b), "rt/replace/%dsrc-2to5paths-batch", MP_SOURCES);
  snprintf(name_mp_wd_b, sizeof(name_mp_wd_b), "rt/withdraw/%dsrc-2to5paths-batch", MP_SOURCES);
  /* mp_routes is known only after setup; the count is deterministic. */
  u64 routes = 0;
  for (u32 i = 0; i < npfx; i++)
    routes += mp_paths(i);
  bench_add(&(struct bench_spec){
    .name = name_mp_ins, .op = "insert+best", .setup = mp_setup,
    .run = mp_insert_run, .after = mp_flush_hook, .teardown = mp_check_hook, .fixed_iters = routes,
    .samples = 5, .target_ops = 5e6,
    .target = TGT_INSERT });
  bench_add(&(struct bench_spec){
    .name = name_mp_rep, .op = "replace+best", .setup = mp_load_setup, .run = mp_replace_run,
    .after = one_quiesce_hook, .target_ops = 5e6, .target = "≥ 5M/s per thread (issue 5)" });
  snprintf(name_mp_walk, sizeof(name_mp_walk), "rt/walk/%dsrc-2to5paths", MP_SOURCES);
  bench_add(&(struct bench_spec){
    .name = name_mp_walk, .op = "route visited", .setup = mp_load_setup, .run = mp_walk_run,
    .fixed_iters = routes, .samples = 5, .target = "a flush's or refresh cycle's walk, nothing stale" });
  bench_add(&(struct bench_spec){
    .name = "rt/find/exact", .op = "lookup", .setup = lpm_setup, .run = find_run,
    .target = "exact match, 1M nets" });
  bench_add(&(struct bench_spec){
    .name = "rt/lpm/inside-prefix", .op = "lookup", .setup = lpm_setup, .run = lpm_hit_run,
    .target = "/32 inside a known prefix" });
  bench_add(&(struct bench_spec){
    .name = "rt/lpm/random-addr", .op = "lookup", .setup = lpm_setup, .run = lpm_rand_run,
    .target = "uniform /32 in 1/8-223/8" });
  bench_add(&(struct bench_spec){
    .name = "rt/roa/check", .op = "roa_check", .setup = roa_setup, .run = roa_run,
    .target = "every prefix, against a ROA4 table covering half of them" });
  bench_add(&(struct bench_spec){
    .name = name_mp_wd, .op = "withdraw+best", .setup = mp_setup, .before = mp_load_hook,
    .run = mp_withdraw_run, .after = one_quiesce_hook, .fixed_iters = routes, .samples = 5,
    .target_ops = 5e6, .target = "≥ 5M/s per thread (issue 5)" });

  bench_add(&(struct bench_spec){
    .name = name_mp_ins_b, .op = "insert+best", .setup = mp_setup,
    .run = mp_insert_batch_run, .after = mp_flush_hook, .fixed_iters = routes, .samples = 5,
    .target_ops = 5e6, .target = TGT_INSERT "; each peer's routes in batches of 256" });
  bench_add(&(struct bench_spec){
    .name = name_mp_rep_b, .op = "replace+best", .setup = mp_reload_setup, .run = mp_replace_batch_run,
    .after = one_quiesce_hook, .target_ops = 5e6,
    .target = "≥ 5M/s per thread (issue 5); each peer's routes in batches of 256" });
  bench_add(&(struct bench_spec){
    .name = name_mp_wd_b, .op = "withdraw+best", .setup = mp_setup, .before = mp_load_hook,
    .run = mp_withdraw_batch_run, .after = one_quiesce_hook, .fixed_iters = routes, .samples = 5,
    .target_ops = 5e6, .target = "≥ 5M/s per thread (issue 5); batches of 256" });

  snprintf(name_mp_best, sizeof(name_mp_best), "rt/best/%dsrc-2to5paths-batch", MP_SOURCES);
  bench_add(&(struct bench_spec){
    .name = name_mp_best, .op = "best change", .setup = best_setup, .run = best_change_run,
    .after = one_quiesce_hook, .teardown = best_check,
    .target = "the best path replaced by a worse one, and back: the net's best recomputed each time" });

  register_mt_benches();

  for (uint i = 0; i < ARRAY_SIZE(mem_scenarios); i++) {
    static char names[ARRAY_SIZE(mem_scenarios)][48];
    snprintf(names[i], sizeof(names[i]), "mem/%s", mem_scenarios[i].kind);
    mem_st[i].m = &mem_scenarios[i];
    bench_add(&(struct bench_spec){ .name = names[i], .state = &mem_st[i], .measure = mem_measure });
  }
}

static void
sanity_notes(void)
{
  if (unexpected)
    bench_note("**Check failed:** %llu rt_update() results differed from what the benchmarks expected.",
               (unsigned long long) unexpected);
}

static const char *child_kind;
static int result;

static void *
bench_thread(void *arg)
{
  (void) arg;
  rcu_thread_register();
  loop_call_sync(main_loop(), commit_empty_config, NULL);
  if (!tab)
    die("No master4 table");
  if (child_kind) {
    mem_child(child_kind);
    _exit(0);   /* no teardown of a million routes */
  }
  if (bench_quick())
    npfx = NPFX_FULL / 10;
  pfx = gen_prefixes(npfx, 42);
  bench_title("Route table core (bench/rt_bench)");
  bench_header("Inputs", "%u IPv4 prefixes (DFZ-like length mix, seed 42); BGP-like attribute sets, "
               "1 per %d routes of a peer", npfx, ATTR_SHARE);
  bench_header("Table", "master4 of an empty config; rt_update() called directly (no channel, no "
               "filter); journal cleanup on the table's loop thread");
  register_benches();
  bench_on_finish(sanity_notes);
  result = bench_run_all();
  if (unexpected)
    fprintf(stderr, "warning: %llu rt_update results differed from what the benchmarks expected\n",
            (unsigned long long) unexpected);
  if (lpm_found)
    fprintf(stderr, "lpm: %llu lookups found a route\n", (unsigned long long) lpm_found);
  rcu_thread_unregister();
  loop_main_quit();
  return NULL;
}

int
main(int argc, char **argv)
{
  if (argc >= 3 && !strcmp(argv[1], "--gen-static"))
    return gen_static((u32) strtoul(argv[2], NULL, 10));
  if (argc >= 3 && !strcmp(argv[1], "--mem-child")) {
    child_kind = argv[2];
    if (argc >= 4)
      bench_parse_args(argc - 2, argv + 2);   /* --quick */
  } else {
    int i = bench_parse_args(argc, argv);
    if (i == -2)
      return 0;
    if (i < 0 || i < argc) {
      bench_usage(argv[0]);
      fprintf(stderr, "  --gen-static N   print a config with N static blackhole routes and exit\n");
      return 2;
    }
  }
  ssize_t l = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
  if (l > 0)
    self_exe[l] = 0;

  resource_init();
  log_init("rt_bench");
  hash_seed_init();
  ea_init();
  bgp_memo_init();
  sched_main_init();
  pthread_t th;
  pthread_create(&th, NULL, bench_thread, NULL);
  sched_main_run();
  pthread_join(th, NULL);
  return result;
}
