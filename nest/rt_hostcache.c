/*
 * DOC: Recursive next-hop resolution and the per-table host cache
 * (see rt_hostcache.h for what and who).
 *
 * The journal check looks an item's net up in a sorted copy of the
 * entries' addresses first (struct rt_hc_index): a route server has a next
 * hop per neighbor, hundreds, and most nets contain none of them. Only a
 * net that does is checked against the entries themselves. It all runs in
 * the table's loop, not on the import path.
 */
#include <stdlib.h>
#include <string.h>
#include "nest/rt_hostcache.h"
#include "nest/iface.h"
#include "lib/log.h"

#define RT_HC_BATCH 4096          /* journal items per run of the reader */
#define RT_HC_POLL (MS_ 20)       /* period of the reader while the table is busy */

struct rt_hc_sub {
  struct rt_hc_sub *next;
  struct loop *loop;
  struct event *ev;
};

/* The entries' addresses, sorted; table loop. */
struct rt_hc_index {
  u32 gen;                    /* of the entry list it was made from */
  uint count, size;
  ip_addr *addr;              /* malloc'd */
};

struct rt_hostcache {
  struct rtable *t;
  pthread_mutex_t lock;       /* writers of entries; subs */
  struct rt_hostentry *entries;   /* RCU list */
  u32 gen;                    /* atomic, written under lock: entries changed */
  struct rt_hc_index idx;     /* table loop */
  struct rt_hc_sub *subs;
  struct rt_reader reader;    /* table loop */
  struct event ev;
  struct timer poll;          /* table loop */
  int polling;                /* table loop: the reader has no notify now */
  int dead;                   /* table loop: the table went while ev was queued
                                 (rt_hostcache_release() frees it) */
};

/* Creation of a table's cache (rare): one lock for all tables. */
static pthread_mutex_t rt_hc_create_lock = PTHREAD_MUTEX_INITIALIZER;

u32
rt_igp_metric(const struct ea_list *a)
{
  if (a->igp_metric)
    return a->igp_metric;
  return a->source == RTS_DEVICE ? 0 : IGP_METRIC_UNKNOWN;
}

void
rt_nh_resolve(struct rtable *t, ip_addr addr, struct rt_nh_res *res)
{
  memset(res, 0, sizeof(*res));
  res->dest = RTD_UNREACHABLE;
  if (!t || ipa_zero(addr) || (t->net_type == NET_IP4) != !!ipa_is_ip4(addr))
    return;
  net_addr host;
  net_fill_ipa(&host, addr, ipa_is_ip4(addr) ? 32 : 128);
  struct net *n = rt_lookup_lpm(t, &host);
  const struct rte *best = n ? net_best(n) : NULL;
  if (!best)
    return;
  res->cover_len = n->n.pxlen;
  const struct ea_list *a = rte_attrs(best);
  /* One level only: BIRD logs and leaves such a next hop unresolved. */
  if (a->flags & EAL_RECURSIVE)
    return;
  res->resolved = 1;
  res->igp_metric = rt_igp_metric(a);
  res->dest = a->dest;
  if (a->dest != RTD_UNICAST)
    return;
  res->iface = a->iface;
  if (ipa_nonzero(a->gw)) {
    res->gw = a->gw;
    return;
  }
  /* A device route: the next hop is on the link, as BIRD's
   * rta_apply_hostentry: no gateway on loopback and point-to-point links */
  const struct iface_set *s = iface_current();
  const struct iface_info *ii = a->iface ? iface_find_info(s, a->iface) : NULL;
  if (ii && (ii->flags & IF_MULTIACCESS) && !(ii->flags & IF_LOOPBACK))
    res->gw = addr;
}

int
rt_nh_same(const struct ea_list *a, const struct rt_nh_res *r)
{
  if (!r->resolved)
    return a->dest == RTD_UNREACHABLE && (a->flags & EAL_RECURSIVE);
  return a->dest == r->dest && ipa_equal(a->gw, r->gw) && a->iface == r->iface && a->igp_metric == r->igp_metric &&
         (a->flags & EAL_RECURSIVE);
}

void
rt_nh_apply(struct ea_builder *b, const struct rt_nh_res *r)
{
  b->dest = r->dest;
  b->gw = r->gw;
  b->iface = r->iface;
  b->igp_metric = r->igp_metric;
  b->flags |= EAL_RECURSIVE;
}

static int
rt_nh_res_equal(const struct rt_nh_res *a, const struct rt_nh_res *b)
{
  return a->dest == b->dest && ipa_equal(a->gw, b->gw) && a->iface == b->iface && a->igp_metric == b->igp_metric &&
         a->cover_len == b->cover_len && a->resolved == b->resolved;
}

static struct rt_nh_res *
rt_nh_res_new(struct rtable *t, ip_addr addr)
{
  struct rt_nh_res *r = malloc(sizeof(*r));
  if (!r)
    die("Out of memory");
  rt_nh_resolve(t, addr, r);
  return r;
}

static void
rt_nh_res_free_rcu(struct rcu_head *h)
{
  free(caa_container_of(h, struct rt_nh_res, rcu));
}

/* Retire a resolution: readers may hold it until their read section ends. */
static void
rt_nh_res_retire(struct rt_nh_res *r)
{
  call_rcu(&r->rcu, rt_nh_res_free_rcu);
}

static void rt_hc_run(void *data);
static void rt_hc_tick(struct timer *tm);

/* The table's cache, made on first use. Never freed while the table lives,
 * so no read section is needed to use it. */
static struct rt_hostcache *
rt_hc_get(struct rtable *t)
{
  struct rt_hostcache *hc = uatomic_read(&t->hostcache);
  if (hc)
    return hc;
  pthread_mutex_lock(&rt_hc_create_lock);
  hc = t->hostcache;
  if (!hc) {
    hc = calloc(1, sizeof(*hc));
    if (!hc)
      die("Out of memory");
    hc->t = t;
    pthread_mutex_init(&hc->lock, NULL);
    ev_init(&hc->ev, rt_hc_run, hc);
    tm_init(&hc->poll, t->loop, rt_hc_tick, hc);
    rt_reader_attach(t, &hc->reader, t->loop, &hc->ev);
    rt_reader_polls(&hc->reader, &hc->ev);    /* rt_hc_set_notify: a busy table's reader polls */
    rcu_assign_pointer(t->hostcache, hc);
  }
  pthread_mutex_unlock(&rt_hc_create_lock);
  return hc;
}

static struct rt_hostentry *
rt_hc_find(struct rt_hostcache *hc, ip_addr addr)
{
  for (struct rt_hostentry *he = hc->entries; he; he = he->next)
    if (ipa_equal(he->addr, addr))
      return he;
  return NULL;
}

static void
rt_hostentry_free_rcu(struct rcu_head *h)
{
  struct rt_hostentry *he = caa_container_of(h, struct rt_hostentry, rcu);
  free(he->res);
  free(he);
}

struct rt_hostentry *
rt_hostentry_get(struct rtable *t, ip_addr addr)
{
  struct rt_hostcache *hc = rt_hc_get(t);
  pthread_mutex_lock(&hc->lock);
  struct rt_hostentry *he = rt_hc_find(hc, addr);
  if (he) {
    he->uc++;
    pthread_mutex_unlock(&hc->lock);
    return he;
  }
  pthread_mutex_unlock(&hc->lock);

  /* A new entry: resolved outside the lock (no mutex inside a read
   * section), then checked once more by the table loop, which may have
   * passed a change of the table meanwhile. */
  struct rt_hostentry *nhe = calloc(1, sizeof(*nhe));
  if (!nhe)
    die("Out of memory");
  nhe->hc = hc;
  nhe->addr = addr;
  nhe->uc = 1;
  nhe->dirty = 1;
  rcu_read_lock();
  nhe->res = rt_nh_res_new(t, addr);
  rcu_read_unlock();
  pthread_mutex_lock(&hc->lock);
  he = rt_hc_find(hc, addr);
  if (he)
    he->uc++;
  else {
    nhe->next = hc->entries;
    rcu_assign_pointer(hc->entries, nhe);
    uatomic_inc(&hc->gen);
  }
  pthread_mutex_unlock(&hc->lock);
  if (he) {
    free(nhe->res);
    free(nhe);
    return he;
  }
  ev_send(t->loop, &hc->ev);
  return nhe;
}

void
rt_hostentry_put(struct rt_hostentry *he)
{
  struct rt_hostcache *hc = he->hc;
  pthread_mutex_lock(&hc->lock);
  if (--he->uc) {
    pthread_mutex_unlock(&hc->lock);
    return;
  }
  for (struct rt_hostentry **pp = &hc->entries; *pp; pp = &(*pp)->next)
    if (*pp == he) {
      rcu_assign_pointer(*pp, he->next);
      uatomic_inc(&hc->gen);
      break;
    }
  pthread_mutex_unlock(&hc->lock);
  /* The table loop or an importer may still read it (and its resolution,
   * whichever the table loop published last) in a read section. */
  call_rcu(&he->rcu, rt_hostentry_free_rcu);
}

/* Does net n contain addr? Inline for IPv4: the reader asks it for every
 * entry and every change of the table. */
static inline int
rt_hc_covers(const net_addr *n, ip_addr addr)
{
  if (n->type != NET_IP4)
    return net_contains_ip(n, addr);
  if (!ipa_is_ip4(addr))
    return 0;
  u32 mask = n->pxlen ? ~0U << (32 - n->pxlen) : 0;
  return !((ip4_to_u32(((const net_addr_ip4 *) n)->prefix) ^ ip4_to_u32(ipa_to_ip4(addr))) & mask);
}

static int
rt_hc_addr_cmp(const void *a, const void *b)
{
  return ipa_compare(*(const ip_addr *) a, *(const ip_addr *) b);
}

/* Table loop, inside a read section: the index as the list is now. An
 * entry added after this is dirty already, and resolved at the end of
 * the drain from the table as it is then. */
static void
rt_hc_index_update(struct rt_hostcache *hc)
{
  struct rt_hc_index *x = &hc->idx;
  u32 gen = uatomic_read(&hc->gen);
  if (x->addr && x->gen == gen)
    return;
  x->gen = gen;
  x->count = 0;
  for (struct rt_hostentry *he = rcu_dereference(hc->entries); he; he = rcu_dereference(he->next)) {
    if (x->count == x->size) {
      x->size = x->size ? 2 * x->size : 64;
      if (!(x->addr = realloc(x->addr, x->size * sizeof(*x->addr))))
        die("Out of memory");
    }
    x->addr[x->count++] = he->addr;
  }
  if (!x->addr && !(x->addr = malloc(sizeof(*x->addr))))
    die("Out of memory");
  qsort(x->addr, x->count, sizeof(*x->addr), rt_hc_addr_cmp);
}

/* May net n contain an entry's address? */
static int
rt_hc_index_hit(const struct rt_hc_index *x, const net_addr *n)
{
  ip_addr lo;
  if (n->type == NET_IP4)
    lo = ipa_from_ip4(((const net_addr_ip4 *) n)->prefix);
  else if (n->type == NET_IP6)
    lo = ((const net_addr_ip6 *) n)->prefix;
  else
    return 1;
  /* the first address from the net's start on: the net holds one if it
   * holds this one */
  uint a = 0, b = x->count;
  while (a < b) {
    uint m = (a + b) / 2;
    if (ipa_compare(x->addr[m], lo) < 0)
      a = m + 1;
    else
      b = m;
  }
  return a < x->count && rt_hc_covers(n, x->addr[a]);
}

/* Table loop: re-resolve the entries the journal's changes may concern.
 * The entry list is read through RCU: entries come and go under hc->lock
 * in other loops meanwhile, and are freed only after a grace period.
 * Returns the items read; *more when a batch was not enough. */
static uint
rt_hc_drain(struct rt_hostcache *hc, int *more)
{
  int changed = 0;
  uint i;
  *more = 0;
  uatomic_set(&hc->reader.laggard, 0);
  rcu_read_lock();
  rt_hc_index_update(hc);
  for (i = 0;; i++) {
    if (i == RT_HC_BATCH) {
      *more = 1;
      break;
    }
    const struct rt_journal_item *it = rt_reader_next(&hc->reader);
    if (!it)
      break;
    rt_reader_prefetch_net(&hc->reader);
    /* resolutions read only the best route of nets: most items of an
     * import burst change another one */
    if (it->new_best == it->old_best)
      continue;
    const net_addr *n = &it->net->n;
    if (!rt_hc_index_hit(&hc->idx, n))
      continue;
    for (struct rt_hostentry *he = rcu_dereference(hc->entries); he; he = rcu_dereference(he->next))
      /* a net shorter than the resolving one changes nothing */
      if (rt_hc_covers(n, he->addr) && n->pxlen >= rcu_dereference(he->res)->cover_len && !uatomic_read(&he->dirty))
        uatomic_set(&he->dirty, 1);
  }
  for (struct rt_hostentry *he = rcu_dereference(hc->entries); he; he = rcu_dereference(he->next)) {
    if (!uatomic_read(&he->dirty))
      continue;
    uatomic_set(&he->dirty, 0);
    struct rt_nh_res *nr = rt_nh_res_new(hc->t, he->addr), *old = rcu_dereference(he->res);
    if (rt_nh_res_equal(nr, old)) {
      free(nr);
      continue;
    }
    /* only this loop replaces resolutions */
    rcu_assign_pointer(he->res, nr);
    rt_nh_res_retire(old);
    changed = 1;
  }
  rcu_read_unlock();
  if (changed) {
    pthread_mutex_lock(&hc->lock);
    for (struct rt_hc_sub *s = hc->subs; s; s = s->next)
      ev_send(s->loop, s->ev);
    pthread_mutex_unlock(&hc->lock);
  }
  return i;
}

/* Idle, the journal's first item wakes the reader (notify). Busy (an
 * import burst: every route of every peer is an item here), a wake-up per
 * item would cost the importers a loop wake-up each; the reader drops its
 * notify and polls until a period passes without items. */
static void
rt_hc_set_notify(struct rt_hostcache *hc, struct event *ev)
{
  wlock_take(&hc->t->lock);
  hc->reader.notify = ev;
  wlock_give(&hc->t->lock);
}

static void
rt_hc_run(void *data)
{
  struct rt_hostcache *hc = data;
  if (hc->dead)
    return;                   /* rt_hostcache_release() frees it */
  int more;
  uint n = rt_hc_drain(hc, &more);
  if (more)
    ev_send(hc->t->loop, &hc->ev);
  if (n && !hc->polling) {
    hc->polling = 1;
    rt_hc_set_notify(hc, NULL);
    tm_start(&hc->poll, RT_HC_POLL);
  }
}

static void
rt_hc_tick(struct timer *tm)
{
  struct rt_hostcache *hc = tm->data;
  int more;
  uint n = rt_hc_drain(hc, &more);
  if (more)
    ev_send(hc->t->loop, &hc->ev);
  if (n || more) {
    tm_start(&hc->poll, RT_HC_POLL);
    return;
  }
  /* quiet: notified again, after a last look for what came meanwhile */
  hc->polling = 0;
  rt_hc_set_notify(hc, &hc->ev);
  ev_send(hc->t->loop, &hc->ev);
}

void
rt_hostcache_subscribe(struct rtable *t, struct loop *l, struct event *ev)
{
  struct rt_hostcache *hc = rt_hc_get(t);
  struct rt_hc_sub *s = calloc(1, sizeof(*s));
  if (!s)
    die("Out of memory");
  s->loop = l;
  s->ev = ev;
  pthread_mutex_lock(&hc->lock);
  s->next = hc->subs;
  hc->subs = s;
  pthread_mutex_unlock(&hc->lock);
}

void
rt_hostcache_unsubscribe(struct rtable *t, struct event *ev)
{
  struct rt_hostcache *hc = uatomic_read(&t->hostcache);
  if (!hc)
    return;
  pthread_mutex_lock(&hc->lock);
  for (struct rt_hc_sub **pp = &hc->subs; *pp; pp = &(*pp)->next)
    if ((*pp)->ev == ev) {
      struct rt_hc_sub *s = *pp;
      *pp = s->next;
      free(s);
      break;
    }
  pthread_mutex_unlock(&hc->lock);
}

void
rt_hostcache_free(struct rtable *t)
{
  struct rt_hostcache *hc = t->hostcache;
  if (!hc)
    return;
  /* Every holder (a channel) is gone before its table's data. */
  wlock_take(&t->lock);
  list_del(&hc->reader.n);
  uatomic_set(&t->reader_count, t->reader_count - 1);
  wlock_give(&t->lock);
  tm_stop(&hc->poll);
  t->hostcache = NULL;
  while (hc->entries) {
    struct rt_hostentry *he = hc->entries;
    hc->entries = he->next;
    call_rcu(&he->rcu, rt_hostentry_free_rcu);
  }
  while (hc->subs) {
    struct rt_hc_sub *s = hc->subs;
    hc->subs = s->next;
    free(s);
  }
  pthread_mutex_destroy(&hc->lock);
  free(hc->idx.addr);
  hc->idx.addr = NULL;
  /* ev may be queued in this loop still, and the loop's end discards
   * queued events, touching them: hc goes after that (or the event runs
   * first and finds it dead) */
  if (ev_active(&hc->ev)) {
    hc->dead = 1;
    t->hostcache_dead = hc;
  } else
    free(hc);
}

void
rt_hostcache_release(struct rtable *t)
{
  free(t->hostcache_dead);
  t->hostcache_dead = NULL;
}
