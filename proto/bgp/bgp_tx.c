/*
 * DOC: Export to a BGP peer: attribute buckets and UPDATE packing.
 *
 * rt_notify turns a route into the attributes this peer gets (AS prepend,
 * next hop, MED and LOCAL_PREF rules, well-known communities), interns them
 * with every non-BGP field cleared, and files the prefix in the bucket of
 * that attribute list. Equal exports share one bucket, so a route server
 * packs hundreds of prefixes per UPDATE. Withdrawals have their own
 * bucket and go first. A prefix changed again before it was sent just
 * moves to its new bucket: only the latest state goes on the wire. The tx
 * hook drains buckets while the socket keeps up, then sends End-of-RIB
 * once after the first full feed.
 */
#include <string.h>
#include "proto/bgp/bgp.h"
#include "proto/bgp/bgp_group.h"
#include "lib/log.h"
#include "lib/thread_buf.h"

#define BGP_TX_BATCH 1024
/* Backpressure: a channel with this many prefixes waiting stops reading the
 * table's journal until the socket took most of them. Pending prefixes
 * cost about 80 bytes each: the channels of all BGP sessions share a
 * budget, so a route server with hundreds of peers does not hold a peak
 * of hundreds of megabytes while they all converge at once; each channel
 * keeps enough to pack full UPDATEs. */
#define BGP_PENDING_MAX 4096
#define BGP_PENDING_MIN 1024
#define BGP_PENDING_BUDGET (128 * 1024)
/* the UPDATE being encoded (lib/thread_buf.h: not a TLS array) */
THREAD_BUF(bgp_tx_buf, MEM_PROTOCOLS);
static u32 bgp_tx_channels;     /* atomic: channels of running BGP protocols */

static u32
bgp_pending_high(void)
{
  u32 n = uatomic_read(&bgp_tx_channels);
  return MIN(BGP_PENDING_MAX, MAX(BGP_PENDING_MIN, BGP_PENDING_BUDGET / MAX(n, 1)));
}
#define BGP_TX_SETTLE (MS_ 1)
#define BGP_TX_SETTLE_PREFIXES 512

/* A pending prefix is a net and, with ADD-PATH transmit, a path id. */
struct bgp_prefix_key {
  const net_addr *net;
  u32 path_id;
};

static int
bgp_prefix_eq(const struct hash_node *n, const void *key)
{
  const struct bgp_prefix *px = container_of(n, struct bgp_prefix, hn);
  const struct bgp_prefix_key *k = key;
  return px->path_id == k->path_id && net_equal(&px->net, k->net);
}

static int
bgp_bucket_eq(const struct hash_node *n, const void *key)
{
  return container_of(n, struct bgp_bucket, hn)->attrs == key;
}


void
bgp_tx_init(struct bgp_proto *p)
{
  for (int af = 0; af < BGP_AF_MAX; af++) {
    struct bgp_channel *bc = &p->ch[af];
    if (!bc->c)
      continue;
    hash_init_sparse(&bc->prefixes, p->p.run_pool, 10);
    hash_init(&bc->buckets, p->p.run_pool, 6);
    memset(&bc->withdraw, 0, sizeof(bc->withdraw));
    bc->last_bucket = NULL;
    list_init(&bc->withdraw.prefixes);
    list_init(&bc->withdraw.n);
    list_init(&bc->ready);
    bc->prefix_slab = sl_new(p->p.run_pool, sizeof(struct bgp_prefix));
    tm_init(&bc->group_tm, p->p.loop, bgp_tx_timer_hook, p);
    uatomic_inc(&bgp_tx_channels);
  }
}

static void bgp_tx_early_free(struct bgp_channel *bc);

void
bgp_tx_cleanup(struct bgp_proto *p)
{
  for (int af = 0; af < BGP_AF_MAX; af++) {
    struct bgp_channel *bc = &p->ch[af];
    bgp_group_leave(p, bc);
    if (bc->early)
      bgp_tx_early_free(bc);
    bgp_export_profile_put(bc->xprof_ref);
    bc->xprof_ref = NULL;
    if (bc->c)
      uatomic_dec(&bgp_tx_channels);
  }
}

static void
bgp_bucket_free(struct bgp_channel *bc, struct bgp_bucket *b)
{
  if (lnode_linked(&b->n))
    list_del(&b->n);
  if (b == &bc->withdraw)
    return;
  if (bc->last_bucket == b)
    bc->last_bucket = NULL;
  hash_remove(&bc->buckets, &b->hn);
  ea_unref(b->attrs);
  mb_free(b);
}

static void
bgp_prefix_free(struct bgp_channel *bc, struct bgp_prefix *px)
{
  bc->pending--;
  list_del(&px->bn);
  hash_remove(&bc->prefixes, &px->hn);
  sl_free(bc->prefix_slab, px);
}

void
bgp_tx_reset_channel(struct bgp_proto *p, struct bgp_channel *bc)
{
  bgp_group_leave(p, bc);
  bc->rejoin = 0;
  tm_stop(&bc->group_tm);
  HASH_WALK_DELSAFE(&bc->prefixes, n)
    bgp_prefix_free(bc, container_of(n, struct bgp_prefix, hn));
  HASH_WALK_DELSAFE(&bc->buckets, n)
    bgp_bucket_free(bc, container_of(n, struct bgp_bucket, hn));
  if (lnode_linked(&bc->withdraw.n))
    list_del(&bc->withdraw.n);
  bc->pending = 0;
  if (bc->early)
    bgp_tx_early_free(bc);
  if (bc->export_paused) {
    bc->export_paused = 0;
    ev_schedule(&bc->c->export_ev);
  }
}

/* Drop everything pending (session went down). */
void
bgp_tx_reset(struct bgp_proto *p)
{
  for (int af = 0; af < BGP_AF_MAX; af++)
    if (p->ch[af].c)
      bgp_tx_reset_channel(p, &p->ch[af]);
}

static struct bgp_bucket *
bgp_bucket_get(struct bgp_proto *p, struct bgp_channel *bc, struct ea_list *attrs)
{
  /* An UPDATE's prefixes reach us one after another with one attribute
   * list: the bucket of the last one is most often the one. (It holds a
   * reference on its list, so an equal pointer is the same list.) */
  if (bc->last_bucket && bc->last_bucket->attrs == attrs)
    return bc->last_bucket;
  u32 h = hash_ptr(attrs);
  struct hash_node *n = hash_find(&bc->buckets, h, bgp_bucket_eq, attrs);
  if (n)
    return bc->last_bucket = container_of(n, struct bgp_bucket, hn);
  struct bgp_bucket *b = mb_allocz(p->p.run_pool, sizeof(*b));
  b->attrs = ea_ref(attrs);
  list_init(&b->prefixes);
  list_init(&b->n);
  hash_insert(&bc->buckets, &b->hn, h);
  return bc->last_bucket = b;
}

static void
bgp_schedule_prefix(struct bgp_proto *p, struct bgp_channel *bc, const net_addr *net, u32 path_id,
                    struct ea_list *attrs)
{
  u32 h = net_hash(net) ^ hash_u32(path_id);
  struct bgp_prefix_key key = { net, path_id };
  struct hash_node *n = hash_find(&bc->prefixes, h, bgp_prefix_eq, &key);
  struct bgp_prefix *px;
  if (n) {
    px = container_of(n, struct bgp_prefix, hn);
    struct bgp_bucket *old = px->bucket;
    list_del(&px->bn);
    if (old != &bc->withdraw && list_empty(&old->prefixes))
      bgp_bucket_free(bc, old);
  } else {
    px = sl_alloc(bc->prefix_slab);
    memset(px, 0, sizeof(*px));
    bc->pending++;
    px->path_id = path_id;
    net_copy(&px->net, net);
    hash_insert(&bc->prefixes, &px->hn, h);
  }
  struct bgp_bucket *b = attrs ? bgp_bucket_get(p, bc, attrs) : &bc->withdraw;
  px->bucket = b;
  list_add_tail(&b->prefixes, &px->bn);
  if (!lnode_linked(&b->n)) {
    /* Withdrawals first. */
    if (b == &bc->withdraw)
      list_add_head(&bc->ready, &b->n);
    else
      list_add_tail(&bc->ready, &b->n);
  }
}

void
bgp_tx_withdraw(struct bgp_proto *p, struct bgp_channel *bc, const net_addr *n)
{
  bgp_schedule_prefix(p, bc, n, 0, NULL);
  ev_schedule(&p->tx_ev);
}

u8 *
bgp_tx_early_reserve(struct bgp_channel *bc, uint len)
{
  if (bc->early_len + len > bc->early_cap) {
    size_t cap = MAX(MAX(2 * bc->early_cap, bc->early_len + len), (size_t) 65536);
    u8 *b = realloc(bc->early, cap);
    if (!b)
      die("Out of memory");
    mem_account(MEM_PROTOCOLS, (s64) (cap - bc->early_cap), 0);
    bc->early = b;
    bc->early_cap = cap;
  }
  return bc->early + bc->early_len;
}

void
bgp_tx_early_commit(struct bgp_channel *bc, uint len)
{
  bc->early_len += len;
}

static void
bgp_tx_early_free(struct bgp_channel *bc)
{
  mem_account(MEM_PROTOCOLS, -(s64) bc->early_cap, 0);
  free(bc->early);
  bc->early = NULL;
  bc->early_len = bc->early_cap = bc->early_sent = 0;
}

/* The next early UPDATE; 0: none waits, -1: the connection went away. */
static int
bgp_tx_early(struct bgp_proto *p, struct bgp_channel *bc)
{
  if (bc->early_sent >= bc->early_len) {
    if (bc->early)
      bgp_tx_early_free(bc);
    return 0;
  }
  const u8 *m = bc->early + bc->early_sent;
  uint len = bgp_load16(m + 16);
  bc->early_sent += len;
  bgp_send(p->conn, m, len);
  return p->conn ? 1 : -1;
}

void
bgp_rt_notify(struct proto *pp, struct channel *c, const net_addr *n, struct rte *new, struct rte *old,
              const struct ea_list *new_src)
{
  struct bgp_proto *p = (struct bgp_proto *) pp;
  /* During our recovery nothing goes out: the feed follows its end. Once
   * `graceful restart` was ordered neither: the other protocols stopping
   * would withdraw what the neighbor is to keep. */
  if (!p->conn || p->gr_deferred || gr_shutdown_requested())
    return;
  int af = bgp_net_af(n->type);
  struct bgp_channel *bc = &p->ch[af];
  if (!bc->c || !p->caps.af[af])
    return;
  struct ea_list *a = new ? bgp_export_attrs_get(bgp_export_profile_of(p, bc), new, new_src) : NULL;
  if (!a && !old)
    return;
  /* ADD-PATH transmit: the channel hands us every route on its own, new
   * and old of one source; the source is the path (as in BIRD). */
  u32 path_id = p->tx.add_path[af] ? rte_src(new ? new : old)->global_id : 0;
  bgp_schedule_prefix(p, bc, n, path_id, a);
  /* Settle: a few changes wait up to BGP_TX_SETTLE for more to join them
   * (an import runs beside us on another thread and hands over changes a
   * few dozen at a time); a full UPDATE's worth goes at once. */
  if (bc->pending >= BGP_TX_SETTLE_PREFIXES)
    ev_schedule(&p->tx_ev);
  else if (!tm_active(&p->tx_settle))
    tm_start(&p->tx_settle, BGP_TX_SETTLE);
}

/* The channel's feed has ended (nest's feed_end): if it left nothing
 * pending, no rt_notify would wake the tx hook for End-of-RIB or EoRR. */
void
bgp_feed_end(struct channel *c)
{
  ev_send(c->proto->loop, &((struct bgp_proto *) c->proto)->tx_ev);
}

/* The session's tx_settle (changes waited long enough) and its channels'
 * group_tm (a group rejoin or a marker's hold is due) run the tx hook. */
void
bgp_tx_timer_hook(struct timer *t)
{
  struct bgp_proto *p = t->data;
  ev_schedule(&p->tx_ev);
}

/* --- Sending --- */

static int
bgp_tx_bucket(struct bgp_proto *p, struct bgp_channel *bc, struct bgp_bucket *b)
{
  net_addr nets[BGP_TX_BATCH];
  u32 ids[BGP_TX_BATCH];
  struct bgp_prefix *pxs[BGP_TX_BATCH];
  uint n = 0;
  int more = 0;         /* the bucket holds prefixes beyond this batch */
  LIST_WALK(x, &b->prefixes) {
    if (n == BGP_TX_BATCH) {
      more = 1;
      break;
    }
    pxs[n] = container_of(x, struct bgp_prefix, bn);
    net_copy(&nets[n], &pxs[n]->net);
    ids[n] = pxs[n]->path_id;
    n++;
  }
  const u32 *path_ids = p->tx.add_path[bc->af] ? ids : NULL;
  uint done = 0, sent = 0;
  u8 *buf = thread_buf_get(&bgp_tx_buf, BGP_MAX_EXT_MSG_LEN);
  while (sent < n) {
    uint len = b->attrs
      ? bgp_update_encode_reach(&p->tx, b->attrs, bc->af, nets + sent, path_ids ? path_ids + sent : NULL, n - sent,
                                buf, BGP_MAX_EXT_MSG_LEN, &done)
      : bgp_update_encode_withdraw(&p->tx, bc->af, nets + sent, path_ids ? path_ids + sent : NULL, n - sent,
                                   buf, BGP_MAX_EXT_MSG_LEN, &done);
    if (!len || !done) {
      /* Unencodable (e.g. a next hop of the wrong family): drop, loudly. */
      log_rl(&p->rl, L_ERR, "%s: Cannot encode UPDATE for %N", p->p.name, &nets[sent]);
      done = 1;
    } else if (sent && more && sent + done == n) {
      /* The batch's tail would go out as a nearly empty message; it
       * leads the next batch instead, so every UPDATE leaves full. */
      break;
    } else
      bgp_send(p->conn, buf, len);
    sent += done;
    if (!p->conn)
      return -1;
  }
  for (uint i = 0; i < sent; i++)
    bgp_prefix_free(bc, pxs[i]);
  if (list_empty(&b->prefixes))
    bgp_bucket_free(bc, b);
  return 0;
}

static bool bgp_tx_fill(struct bgp_proto *p);

int
bgp_tx_idle(const struct bgp_channel *bc)
{
  return !bc->pending && list_empty(&bc->ready) && bc->early_sent >= bc->early_len;
}

/* The tx hook moves a channel over to an update group: one that joins
 * at a marker once it got there (and the rest of its own export has
 * gone), one that may join again once its feed or catch-up is over (a
 * catch-up's last withdrawals may come after the feed's end). */
void
bgp_export_flush(struct proto *pp, struct channel *c)
{
  struct bgp_proto *p = (struct bgp_proto *) pp;
  struct bgp_channel *bc = &p->ch[bgp_net_af(c->net_type)];
  if ((bc->gm && c->export_hold && c->reader.seq >= c->export_until) ||
      (bc->rejoin && chan_export_steady(c) && bgp_tx_idle(bc)))
    ev_schedule(&p->tx_ev);
}

int
bgp_export_busy(struct proto *pp, struct channel *c)
{
  struct bgp_proto *p = (struct bgp_proto *) pp;
  struct bgp_channel *bc = &p->ch[bgp_net_af(c->net_type)];
  if (!p->conn || bc->pending < bgp_pending_high())
    return 0;
  bc->export_paused = 1;
  ev_schedule(&p->tx_ev);
  return 1;
}

void
bgp_tx_hook(void *data)
{
  struct bgp_proto *p = data;
  /* Whatever the socket holds: a member let go for being slow must free
   * the group's log without writing it. */
  for (int af = 0; af < BGP_AF_MAX; af++)
    if (p->ch[af].c && bgp_group_member(&p->ch[af]))
      bgp_group_skip(p, &p->ch[af]);
    else if (p->ch[af].c)
      bgp_group_marker(p, &p->ch[af]);    /* cancelled: leaves the log at once, too */
  bool full = bgp_tx_fill(p);
  if (!p->conn)
    return;
  bgp_flush(p->conn);
  /* Drained enough: let the channels read the journal again. */
  for (int af = 0; af < BGP_AF_MAX; af++) {
    struct bgp_channel *bc = &p->ch[af];
    if (bc->c && bc->export_paused && bc->pending < bgp_pending_high() / 4) {
      bc->export_paused = 0;
      ev_schedule(&bc->c->export_ev);
    }
  }
  /* The fill stopped at a full queue, with prefixes or a group's log
   * left to send, and the socket took everything since (the peer read
   * meanwhile): no writable event will come, and nothing else would wake
   * us. A member whose group paused for it would hold the group too. */
  if (p->conn && full && !txq_queued(&p->conn->tx)) {
    loop_yield();
    ev_schedule(&p->tx_ev);
  }
}

static bool
bgp_tx_full(const struct bgp_proto *p)
{
  return p->conn && txq_queued(&p->conn->tx) >= BGP_TX_HIGH;
}

/* Returns true when it stopped at a full queue: more may wait. */
static bool
bgp_tx_fill(struct bgp_proto *p)
{
  while (p->conn && txq_queued(&p->conn->tx) < BGP_TX_HIGH) {
    int any = 0;
    for (int af = 0; af < BGP_AF_MAX && p->conn; af++) {
      struct bgp_channel *bc = &p->ch[af];
      if (!bc->c || !p->caps.af[af])
        continue;
      bgp_group_marker(p, bc);
      if (bgp_group_member(bc)) {
        /* the group sends End-of-RIB and EoRR in the log */
        if (bgp_group_tx(p, bc) < 0)
          return false;
        continue;
      }
      /* what the group's log withdrew comes first */
      int early = bgp_tx_early(p, bc);
      if (early < 0)
        return false;
      if (early) {
        any = 1;
        continue;
      }
      struct lnode *first = list_first(&bc->ready);
      if (first) {
        any = 1;
        if (bgp_tx_bucket(p, bc, container_of(first, struct bgp_bucket, n)) < 0)
          return false;
      } else if (bc->c->feeding) {
        /* End-of-RIB and EoRR close the whole table: bgp_feed_end()
         * wakes us once the rest of it is here. */
      } else if (!bc->eor_sent && !p->gr_deferred) {
        u8 buf[64];
        bgp_send(p->conn, buf, bgp_update_encode_eor(af, buf, sizeof(buf)));
        bc->eor_sent = bc->eor_out = 1;
        any = 1;                    /* then an EoRR, or a rejoin */
      } else if (bc->eorr_pending) {
        /* RFC 7313 4: the refeed asked for by the peer has left. */
        bgp_send_rr(p, af, BGP_RR_END);
        bc->eorr_pending = 0;
        any = 1;
      } else if (bc->rejoin)
        bgp_group_rejoin(p, bc);
    }
    if (!any)
      return bgp_tx_full(p);    /* a member's log may have filled it */
    if (loop_budget_left() <= 0) {
      loop_yield();
      ev_schedule(&p->tx_ev);
      return false;
    }
  }
  /* Socket full: bgp_conn_tx schedules us again once it drains, unless
   * the tx hook's flush empties it. */
  return bgp_tx_full(p);
}

void
bgp_refeed(struct bgp_proto *p, enum bgp_af af)
{
  struct bgp_channel *bc = &p->ch[af];
  if (!bc->c)
    return;
  /* What made the member's exports the group's may have changed (the
   * export filter, the next hop): from now on it exports alone. */
  if (bgp_group_member(bc)) {
    bc->takeover_quiet = 0;     /* a feed is wanted after all */
    bgp_group_solo(p, bc);
    ev_schedule(&p->tx_ev);
    return;
  }
  bc->c->export_all_paths = p->tx.add_path[af];
  chan_export_reset(bc->c);
  ev_schedule(&p->tx_ev);
}

void
bgp_resend(struct bgp_proto *p, enum bgp_af af)
{
  struct bgp_channel *bc = &p->ch[af];
  if (!bc->c)
    return;
  if (bgp_group_member(bc) || !bc->c->reader.table) {
    bgp_refeed(p, af);
    return;
  }
  /* The peer keeps what it has: what the channel knows it sent stays
   * known, and so do the withdrawals a catch-up still owes it. */
  chan_refeed(bc->c);
  ev_schedule(&p->tx_ev);
}
