/*
 * DOC: Routing tables.
 *
 * A table maps networks to chains of routes, best first. Readers (export
 * channels, the CLI, anything doing lookups) walk it inside
 * rcu_read_lock() without locks. Writers (imports from any loop) hold the
 * table's writer lock only while swapping pointers in one network's chain
 * and appending to the export journal; filters and I/O run outside it, and
 * so does the walk of the chain that finds where a change goes (checked
 * under the lock against the net's ver).
 *
 * Every change of a network appends a journal item (new best, old best,
 * and the route it retired). Export readers (struct rt_reader) consume the
 * journal each in its own loop and at its own pace; the table's
 * maintenance loop frees items, retired routes and empty networks once
 * every reader has passed them (and after an RCU grace period).
 *
 * Ownership:
 *  - struct rtable: configuration part owned by the main loop; chains,
 *    journal and counters by the writer lock / atomics; maintenance state
 *    by the table's loop.
 *  - struct rte and struct net: immutable after publication except rte->next,
 *    net->routes and the net's ver, which change only under the writer lock, and
 *    rte->refresh_gen (see below).
 *
 * Refresh cycles (route refresh, graceful restart): every route carries the
 * refresh generation of its sender channel at its last announcement. A cycle
 * begins by bumping the channel's generation, which makes all its routes
 * stale at once (no walk); a route announced again gets the new generation,
 * in place if nothing else changed (an atomic store under the writer lock;
 * nothing orders routes by it). The cycle ends with rt_flush_stale(), which
 * withdraws in bounded chunks whatever is still older. Stale routes stay in
 * the table and are exported as usual meanwhile.
 */
#ifndef NEST_RT_H
#define NEST_RT_H

#include <pthread.h>
#include "lib/birdlib.h"
#include "lib/lists.h"
#include "lib/net.h"
#include "lib/loop.h"
#include "lib/rcu.h"
#include "lib/rcu_hash.h"
#include "lib/wlock.h"
#include "nest/rt_attr.h"

struct channel;
struct proto;
struct proto_run_info;
struct config;
struct symbol;
struct rt_hostcache;

/* `debug` flags of protocols, channels and tables (BIRD's bits). */
enum debug_flag { D_STATES = 1, D_ROUTES = 2, D_FILTERS = 4, D_INTERFACES = 8, D_EVENTS = 16, D_PACKETS = 32 };

/* BIRD 3's export settle: readers are woken once no change came for min,
 * or max after the first one (nest/rt_settle.c). */
struct rt_settle_times {
  btime min, max;
};

struct rtable_config {
  struct lnode n;
  const char *name;
  struct symbol *sym;
  struct config *config;
  uint net_type;
  int sorted;
  int trie;
  btime min_settle, max_settle;   /* after a ROA change, before its readers' reload */
  struct rt_settle_times export_settle, rr_settle;  /* {0, 0}: readers woken at once */
  u32 cork_low, cork_high;    /* 0: RT_PRESS_LOW, RT_PRESS_HIGH */
  const char *thread_group;   /* its loop's; NULL: the default */
  struct rtable *table;       /* owner: main loop; the running table */
  int table_ref;              /* owner: main loop; holds a config_refs of table */
  int implicit;               /* master4/master6 made before parsing, not yet declared */
  u32 debug;                  /* D_STATES, D_ROUTES, D_EVENTS (BIRD 3's table `debug`); read-only
                                 after parsing, rt_commit() copies it into the running table */
};

/* Identity of who announced a route: one per protocol instance (and path id). */
struct rte_src {
  struct rte_src *next;       /* in the source hash; owner: source lock */
  struct proto *proto;
  u64 private_id;
  u32 global_id;
  u32 uc;                     /* atomic */
  u32 run_id;                 /* set at creation, then constant: the protocol's
                                 run it was made in (proto.run_id) */
  u32 ix;                     /* its slot (rt_src_at()); constant */
  u8 holds_proto;             /* set at creation, then constant: it counts in
                                 proto->src_refs (proto_new's instances) */
  struct proto_run_info *run_info;  /* set at creation, then constant: that
                                       run's (proto.run_info), held; NULL: none */
  struct rcu_head rcu;
};
/* Every source is a slot of chunks mapped as needed (nest/rt_src.c), so
 * a route names its own by the slot's number: 0 for none. */
#define RT_SRC_CHUNK_SHIFT 16
#define RT_SRC_CHUNK_SLOTS ((u32) 1 << RT_SRC_CHUNK_SHIFT)
#define RT_SRC_CHUNKS ((u32) 1 << (32 - RT_SRC_CHUNK_SHIFT))
extern struct rte_src *rt_src_chunks[RT_SRC_CHUNKS];
static inline struct rte_src *rt_src_at(u32 ix)
{
  return ix ? __atomic_load_n(&rt_src_chunks[ix >> RT_SRC_CHUNK_SHIFT], __ATOMIC_RELAXED) + (ix & (RT_SRC_CHUNK_SLOTS - 1))
            : NULL;
}
static inline u32 rt_src_ix(const struct rte_src *s) { return s ? s->ix : 0; }

/* 32 bytes: a full route server holds tens of millions (every path of
 * every peer), so the source is a 32-bit slot number (rte_src()), the
 * sender the table's number for it (rt_sender_of()), and the import time
 * (milliseconds), the import flags and the group state share a word with
 * the attribute list: an address needs 48 bits of it (rte_attrs()). */
struct rte {
  struct rte *next;           /* RCU; next route of the same net, worse */
  u64 ea;                     /* set before the route is published, then constant:
                                 bits 0-47 the attribute list, interned, one
                                 reference held (rte_attrs()); 48-61 the import
                                 time's bits above lastmod_lo; 62 REF_FILTERED;
                                 63 not its group's best (rte_suppressed()) */
  u32 src_ix;                 /* rte_src(): the source's slot (rt_src_at) */
  u32 id;                     /* per-table, for export maps */
  u32 lastmod_lo;             /* real time of import, ms since the epoch, low bits */
  u16 sender;                 /* the table's sender number (nest/rt_sender.c), 0: none */
  u16 refresh_gen;            /* atomic: the sender's refresh generation when
                                 last announced; written under the writer lock */
};
_Static_assert(sizeof(struct rte) == 32, "struct rte grew");

#define REF_FILTERED 1        /* kept but rejected by the import filter */
#define RTE_EA_PTR (((u64) 1 << 48) - 1)
#define RTE_EA_TIME_SHIFT 48
#define RTE_EA_TIME_BITS 14
#define RTE_EA_FILTERED ((u64) 1 << 62)
#define RTE_EA_SUPPRESSED ((u64) 1 << 63)

static inline struct ea_list *rte_attrs(const struct rte *r) { return (struct ea_list *) (uintptr_t) (r->ea & RTE_EA_PTR); }
static inline uint rte_flags(const struct rte *r) { return r->ea & RTE_EA_FILTERED ? REF_FILTERED : 0; }
/* Not its group's best (proto_class.rte_group): a route changing state is
 * replaced by a copy. */
static inline int rte_suppressed(const struct rte *r) { return !!(r->ea & RTE_EA_SUPPRESSED); }
static inline struct rte_src *rte_src(const struct rte *r) { return rt_src_at(r->src_ix); }

static inline btime rte_lastmod(const struct rte *r)
{
  u64 hi = (r->ea >> RTE_EA_TIME_SHIFT) & (((u64) 1 << RTE_EA_TIME_BITS) - 1);
  return (btime) ((hi << 32) | r->lastmod_lo) * 1000;
}

/* The word of an unpublished route: attrs, flags, suppressed, import time. */
static inline void rte_set_ea(struct rte *r, struct ea_list *attrs, uint flags, int suppressed, btime real)
{
  u64 ms = (u64) (real / 1000);
  ASSERT((u64) (uintptr_t) attrs <= RTE_EA_PTR);   /* user space: 47 bits */
  r->lastmod_lo = (u32) ms;
  r->ea = (u64) (uintptr_t) attrs
        | ((ms >> 32) & (((u64) 1 << RTE_EA_TIME_BITS) - 1)) << RTE_EA_TIME_SHIFT
        | (flags & REF_FILTERED ? RTE_EA_FILTERED : 0) | (suppressed ? RTE_EA_SUPPRESSED : 0);
}

static inline void rte_set_suppressed(struct rte *r, int suppressed)   /* unpublished r */
{
  r->ea = (r->ea & ~RTE_EA_SUPPRESSED) | (suppressed ? RTE_EA_SUPPRESSED : 0);
}

/* A private copy of published route r with attrs in place of its own
 * (NULL: its own), for code that takes a route: the fields the table's
 * writers change under readers (next, refresh_gen) are not read, so the
 * copy races with nobody; they are 0 in it. */
static inline struct rte rte_view(const struct rte *r, struct ea_list *attrs)
{
  struct rte v = { .src_ix = r->src_ix, .id = r->id, .sender = r->sender, .lastmod_lo = r->lastmod_lo };
  v.ea = attrs ? (r->ea & ~RTE_EA_PTR) | (u64) (uintptr_t) attrs : r->ea;
  return v;
}

struct net {
  struct rcu_hash_node node;  /* in table->nets */
  struct rte *routes;         /* RCU; best first */
  /* All nets in creation order, for feeds that resume across RCU read
   * sections (rt_feed_next). A dead net keeps its next pointer. */
  struct net *feed_next;      /* RCU */
  /* The net before it in that order (under the writer lock) and the
   * chain's version: bumped (release) under the writer lock after every
   * change of the chain, so that a writer that walked the chain before
   * the lock (RCU) knows under it whether what it found still holds
   * (rt_upd_walk). Where pointers have spare top bits, the version is 16
   * of them: an ipv4 net is then 48 bytes, not 56, and the journal tells
   * when so few bits may have wrapped. Accessed through net_feed_prev()
   * and net_ver() in rt_table.c. */
#if UINTPTR_MAX == UINT64_MAX
  uintptr_t prev_ver;         /* atomic */
#else
  struct net *feed_prev;
  u16 ver;                    /* atomic */
#endif
  net_addr n;                 /* variable length: allocated to n.length */
};

/* One change of one network. */
struct rt_journal_item {
  struct net *net;
  struct rte *new_best;       /* may be NULL */
  struct rte *old_best;       /* may be NULL */
  struct rte *new_rte;        /* the route this change added, may be NULL */
  struct rte *retired;        /* removed from the chain here; freed with the item */
};

/* A block is 16 KiB of whole pages (lib/page_pool.h): a converging route
 * server holds millions of items, and their memory must leave as soon as
 * the slowest reader has passed them. */
#define RT_JOURNAL_BYTES 16384
#define RT_JOURNAL_BLOCK 387
/* Changes published before the table loop is asked to free what every
 * reader has passed, and grown since without it before a writer frees
 * them itself. Each request is an eventfd write, a wake-up of the table
 * loop and a turn of its writer lock against the importers: asked per
 * journal block, that was a sixth of a batched insert's time. Eight
 * blocks keep at most 128 kB of journal (and the routes it retires)
 * beyond the slowest reader. */
#define RT_CLEANUP_THRESHOLD (8 * RT_JOURNAL_BLOCK)
struct rt_journal_block {
  struct rt_journal_block *next;  /* RCU published */
  struct rcu_head rcu;
  u64 first_seq;
  uint used;                  /* items to release when freed */
  u64 net_died[(RT_JOURNAL_BLOCK + 63) / 64];  /* item i emptied its net: freed with the item */
  struct rt_journal_item items[RT_JOURNAL_BLOCK];
  /* The sender of item i's change (rte.sender; 0: none): a reader skips
   * its own channel's items without loading their routes (a pipe reads
   * back every copy it made: 99 of 100 items of a route server's peer
   * table). */
  u16 sender[RT_JOURNAL_BLOCK];
};

/* An export subscriber: consumes the journal in its own loop. */
struct rt_reader {
  struct lnode n;             /* in table->readers; under the writer lock */
  struct rtable *table;
  struct loop *loop;          /* where the reader runs */
  struct event *notify;       /* sent when new items arrive */
  u64 seq;                    /* next item to read; atomic */
  /* Atomic (read by cleanup): the items before it are done with. One
   * behind seq while the reader works on the item rt_reader_next() gave
   * it last: the cleanup must neither release that item's retired route
   * (a catch-up takes a reference on its attributes) nor free its id. */
  u64 done;
  int held;                   /* owner: reader's loop: rt_reader_hold() */
  int left_oldest;            /* owner: reader's loop: an item given since
                                 done last moved ended the journal's oldest
                                 block */
  u64 end;                    /* owner: reader's loop: the journal's end as
                                 last read; jend's line is written by every
                                 import, so it is read again only when the
                                 reader gets there */
  struct rt_journal_block *block;  /* cursor */
  /* Atomic: set by the table loop when the reader is more than
   * rt_laggard_limit() items behind, cleared by the reader's loop, which
   * should then skip to the end and feed the table again (the items it
   * holds would outgrow the table; see chan_catch_up()). */
  u32 laggard;
  u64 seen_seq;               /* owner: table loop: seq at the last move seen */
  btime seen_at;              /* owner: table loop: when */
  /* Atomic, the reader's rt_press_level: raised by an importer that
   * sees the reader rt_press_copies_high() or RT_PRESS_HIGH behind,
   * lowered by the reader's loop, or by the table loop once it stopped
   * moving; counted in the table's `crowding` and `pressing`. */
  u32 press;
  u32 idle;                   /* atomic: the reader stopped of its own accord
                                 (rt_reader_idle), until it reads again */
  /* Atomic, set by the owner once attached (rt_reader_polls): at times
   * without notify, the reader reads on by a timer of its loop (the host
   * cache while the table is busy), so its lag presses as that of one
   * with notify does; this event, which reads too, is sent to its loop
   * when a writer raises its level, so that whom it holds back waits
   * for its reading, not for its timer. Readers without notify and
   * without this are pins (a feed's start, the CLI's listing): they
   * never press. */
  struct event *polls;
  /* Owner: reader's loop. Items of sender `own` (0: none) are not
   * prefetched: the reader's channel does not export its own routes.
   * `sender` is that of the item rt_reader_next() gave last. */
  u16 own, sender;
#ifdef BIRD_SANITIZED
  u32 busy;                   /* atomic: a thread is in rt_reader_next() */
  u64 attach_seq;             /* written at attach, under the writer lock: */
  char attach_loop[40];       /* where and in which loop (the dump reads them) */
#endif
};

#ifdef BIRD_SANITIZED
/* Sanitizer builds: the table's last unlinks of journal blocks, as the
 * readers' check tells them when a reader is found behind the journal
 * (nest/rt_readers_check.c). Under the writer lock. */
#define RT_UNLINK_LOG 8
#define RT_UNLINK_READERS 6
struct rt_unlink_note {
  const char *where;
  char loop[40];
  u64 min, from, to, end;
  u32 readers;
  struct { const struct rt_reader *r; u64 done; } seen[RT_UNLINK_READERS];
};
#endif

#define RT_INDEX_MIN_ORDER 10       /* 2^N buckets at least in a net index */
/* A net index that grew ahead of its nets (lib/rcu_hash.h) is compacted
 * once no net has come for this long: the load is over. */
#define RT_INDEX_QUIET (S_ 1)

/* Published through rtable.senders (RCU); older, size and next are
 * nest/rt_sender.c's, under its lock (main loop). */
struct rt_senders {
  struct rt_senders *older;   /* replaced arrays, freed with the table */
  u32 size;                   /* fixed for the array's life */
  u32 next;                   /* where the search for a free number starts */
  /* atomic, by number, in the same block as ch: the table a sender's
   * routes are copies of (a pipe's), NULL: none; written under the lock */
  const struct rtable **origin;
  /* by number, in the same block; main loop, under rt_sender.c's lock:
   * the journal's end when the number's last channel went; reused once
   * every reader passed it */
  u64 *gone_at;
  struct channel *ch[];       /* atomic: read by anyone, written by the main loop */
};

/* A table's export settle (nest/rt_settle.c). */
struct rt_settle {
  struct rt_settle_times exp, rr;   /* atomic; main loop's (rt_settle_set) */
  u32 on;                     /* atomic: any of them set: writers kick, not wake */
  struct event ev;            /* kick: sent by writers, run by the table loop */
  u32 changed;                /* atomic: writers published since the last kick */
  struct timer tm;            /* the readers' wake-up; table loop */
  btime first;                /* table loop: the first change tm waits for */
  int gone;                   /* table loop: torn down */
};

struct rtable {
  struct lnode n;             /* in the global table list; owner: main loop */
  const char *name;
  u32 id;                     /* set at creation, never reused (an address is) */
  struct rtable_config *config;   /* owner: main loop */
  u32 debug;                  /* atomic: the config's; set by the main loop, read by writers */
  uint net_type;
  pool *pool;
  struct loop *loop;          /* maintenance */
  struct event cleanup_ev;
  int deleted;                /* owner: main loop */
  int use_count;              /* owner: main loop: channels + config */
  /* Owner: main loop. Configs naming the table: their filters may have a
   * channel reading it (ROA reload, nest/channel_roa.c) until the protocol
   * leaves that config, so it stays until they are freed (not at shutdown,
   * when no protocol runs). */
  int config_refs;

  struct rcu_hash nets;       /* net index; writes under the lock */
  /* Owner: the table loop (rt_cleanup). The index's insert count when it
   * last changed, since when, and the timer that looks again. */
  u32 index_mark;
  btime index_mark_at;
  struct timer index_tm;
  struct net *feed_head, *feed_tail;  /* head RCU, tail under the writer lock */
  struct wlock lock;          /* writers; a cache line of its own */
  /* Counters: changed under the writer lock, read atomically by anyone. */
  u32 route_count;            /* routes in chains */
  u32 pxlen_count[IP6_MAX_PREFIX_LENGTH + 1];  /* nets per prefix length (LPM skips empty ones) */
  size_t index_bytes;         /* under the lock: the index's arrays as accounted */
  /* ROA tables: per region of the address space (rt_index.c), the prefix
   * lengths region_low..region_low+63 of the nets covering part of it, a
   * bit each: set under the writer lock before the net is published, read
   * atomically; never cleared while the table lives (a stale bit costs a
   * probe, never misses one). Made with the table (region_low too, fixed
   * then), freed after a grace period once it is gone. NULL: none. */
  u64 *regions;
  u8 region_low;
  /* The `trie` option's prefixes of the nets (nest/rt_trie.h): made with
   * an IP table configured with it, NULL otherwise; written under the
   * lock with the index, read in RCU read sections, freed with the nets. */
  struct rt_trie *trie;
  u32 net_count;              /* nets in index */
  u32 filtered_count;         /* routes kept with REF_FILTERED */
  int aux;                    /* a channel's import table: not in
                                 the table list, counts no preferred routes */

  /* Journal: appended under lock; end published with release semantics. */
  struct rt_journal_block *jfirst, *jlast;
  u64 jend;                   /* atomic: seq of the next item to be published */
  u32 junpub;                 /* under lock: items written after jend, not yet published */
  /* Under lock: a block was started after others since the last publish.
   * Unless the cleanup's timer runs, that asks for a cleanup: with no
   * reader, nothing else would free the blocks of fewer changes than
   * RT_CLEANUP_THRESHOLD (a pipe's peer table nothing reads kept 8 blocks,
   * 128 kB, and the routes they retired, for good). */
  u32 jnewblock;
  /* The table loop looks again RT_CLEANUP_QUIET after a cleanup, until a
   * look finds no change since the one before: what the last changes left
   * goes once they are over. cleanup_armed (atomic): the timer runs;
   * cleanup_seen: jend when it was started. */
  struct timer cleanup_tm;
  u32 cleanup_armed;
  u64 cleanup_seen;
  u32 writing;                /* atomic, written under lock: 1 from a writer's
                                 taking the lock until it published, so a
                                 chain may hold changes jend does not cover */
  u64 jfirst_seq;             /* atomic, written under lock: by the cleanup
                                 (table loop) or a writer's trim; read by readers */
  u64 jtrim_at;               /* atomic, written under lock: jend at the last
                                 cleanup or trim (rt_journal_trim_due) */
  u32 pressing;               /* atomic: readers at RT_PRESS_ALL (rt_import_pressed) */
  u32 crowding;               /* atomic: readers at RT_PRESS_COPIES or above */
  u32 reader_count;           /* atomic: readers attached; changed under the lock */
  /* atomic, set by the main loop (rt_commit): a reader this many items
   * behind presses the table until back within press_low (`cork
   * threshold`, RT_PRESS_LOW and RT_PRESS_HIGH by default); without
   * `cork threshold` (press_auto), marks no higher than the table's size
   * calls for (rt_press_marks) */
  u32 press_low, press_high, press_auto;
  u32 refreshing;             /* atomic: channels writing here in a refresh cycle */
  struct rt_settle settle;
  struct sched *sched;        /* its loop's, fixed */
  /* Channels' flushes in one walk of the table for all of them
   * (nest/rt_flush.c): joins and flush_pos under flush_lock, which the
   * walk (table loop, flush_ev) holds for each of its parts */
  pthread_mutex_t flush_lock;
  struct rt_flush_join *flush_joins;
  u64 flush_pos;
  struct event flush_ev;
  pthread_mutex_t press_lock; /* importers waiting for the pressing to end */
  struct rt_press_wait *press_waiters;  /* under press_lock */
  struct lnode readers;       /* struct rt_reader, under lock */

  /* Recursive next hops resolved here (nest/rt_hostcache.c); RCU, made
   * on first use, freed with the table's data. */
  struct rt_hostcache *hostcache;
  /* Its remains while its event may still sit in the table loop's queue.
   * Owner: the table loop sets it in its last act; the main loop frees it
   * once that loop is gone (rt_hostcache_release) */
  struct rt_hostcache *hostcache_dead;

  /* Route ids for export maps. */
  u32 *id_map;                /* bitmap, under lock */
  u32 id_map_size;            /* in bits */
  u32 id_hint;

  /* The channels that write here, by the number their routes carry
   * (nest/rt_sender.c): RCU, changed by the main loop. */
  struct rt_senders *senders;
#ifdef BIRD_SANITIZED
  struct rt_unlink_note unlinks[RT_UNLINK_LOG];   /* under lock, a ring */
  u32 unlink_next;
#endif
};

struct rtable_config *rt_new_table_config(struct config *c, struct symbol *s, uint net_type);
/* A config is freed: its tables may go (main loop). */
void rt_config_release(struct config *c);
/* Create master4/master6 if the config has none of that type. */
void rt_config_defaults(struct config *c);
/* Commit table configs of a new config: create new tables, keep same-named
 * ones (same type), schedule removal of those no longer configured. */
void rt_commit(struct config *new, struct config *old);
struct rtable *rt_find_table(const char *name);
/* All live tables in config order (main loop). */
struct lnode *rt_tables(void);
/* nest/rt_sender.c: numbers for the channels writing into t (main loop;
 * a channel that never writes may skip it), and the channel of a number
 * (anyone, in an RCU read section; NULL for 0). */
u16 rt_sender_add(struct rtable *t, struct channel *c);
void rt_sender_remove(struct rtable *t, u16 id);
void rt_senders_free(struct rtable *t);       /* the table goes */

static inline struct channel *rt_sender_of(const struct rtable *t, u16 id)
{
  if (!id)
    return NULL;
  const struct rt_senders *s = rcu_dereference(t->senders);
  return __atomic_load_n(&s->ch[id], __ATOMIC_ACQUIRE);
}

/* Sender id's routes in t are copies of table from's routes (a pipe: they
 * keep their source). Set before it writes any; anyone reads it under RCU
 * (a table is only compared with, never read through). */
void rt_sender_set_origin(struct rtable *t, u16 id, const struct rtable *from);
static inline const struct rtable *rt_sender_origin(const struct rtable *t, u16 id)
{
  if (!id)
    return NULL;
  const struct rt_senders *s = rcu_dereference(t->senders);
  return __atomic_load_n(&s->origin[id], __ATOMIC_ACQUIRE);
}

void rt_lock_table(struct rtable *t);     /* use count (main loop) */
/* Shutdown: retire every table; rt_all_gone() once all are freed. */
void rt_shutdown(void);
int rt_all_gone(void);
void rt_unlock_table(struct rtable *t);
/* A channel's import table (Adj-RIB-In): a table of its own,
 * not in the table list and not in any config; main loop. */
struct rtable *rt_aux_table_new(const char *name, uint net_type);
void rt_aux_table_free(struct rtable *t);

/* Sources (nest/rt_src.c). */
struct rte_src *rt_get_source(struct proto *p, u64 private_id);
void rt_lock_source(struct rte_src *s);
void rt_lock_source_many(struct rte_src *s, uint n);   /* n references at once */
void rt_unlock_source(struct rte_src *s);
void rt_unlock_source_many(struct rte_src *s, uint n);

/*
 * Import: replace the route of (net, src) in the table. attrs == NULL
 * withdraws. The table takes its own reference on attrs. Callable from the
 * channel's loop (any loop); takes the writer lock briefly.
 * Returns what happened.
 */
/* The low bits say what happened to the source's usable route; a route
 * kept with REF_FILTERED counts apart, in the two flag bits. */
enum rt_update_result { RT_UPD_NONE = 0, RT_UPD_ADD, RT_UPD_REPLACE, RT_UPD_REMOVE };
#define RT_UPD_USABLE 3
#define RT_UPD_FILTERED_ADD 4
#define RT_UPD_FILTERED_REMOVE 8
/* Nothing done: the writer is a copy (a sender with an origin: a pipe)
 * and the route of the source there is someone else's (the original, or
 * another pipe's copy); a copy neither replaces nor withdraws it. */
#define RT_UPD_CLASH 16
uint rt_update(struct rtable *t, const net_addr *n, struct rte_src *src,
              struct channel *sender, struct ea_list *attrs, u16 flags);
/* One route of a batch: the caller's, for the call's duration. */
struct rt_import {
  const net_addr *net;
  struct rte_src *src;
  struct ea_list *attrs;      /* NULL withdraws */
  u16 flags;
  /* The route's refresh generation: the sender's current one, or with
   * keep_gen this one (a refresh cycle's walk replaces a route and keeps
   * it stale) */
  u8 keep_gen;
  u16 gen;
  /* A withdrawal that takes the route of the source only if it is older
   * than gen (rte_gen_older): a walk outside the sender's loop, which may
   * have imported it again since the walk saw it (rt_flush_join) */
  u8 stale_only;
  uint result;                /* out: what rt_update would have returned */
};
/*
 * rt_update of n routes in order, all from sender: the same changes, the
 * same journal items, at a fraction of the cost when the nets are many
 * (the NLRI of an UPDATE). The cache misses of several routes are in
 * flight at once, and the writer lock is taken once per few routes.
 */
void rt_update_batch(struct rtable *t, struct channel *sender, struct rt_import *im, uint n);
/* Remove every route sent by this channel (flush on channel down). */
uint rt_flush_channel(struct rtable *t, struct channel *c);
/* nest/rt_flush.c. Channel c (its loop) asks the table to withdraw its
 * routes older than gen: one walk in the table's loop serves every
 * channel flushing the table at the time (a route server's sessions all
 * going down walk it once, not once each). The walk withdraws in c's
 * name and subtracts what it withdrew from c's route counts; when it has
 * been over every net since c joined it sends done to the loop c joined
 * from. c may import meanwhile (a session back up): what it imports
 * since the generation moved past gen stays. Joining again moves gen
 * and starts over. */
void rt_flush_join(struct rtable *t, struct channel *c, u16 gen, struct event *done);
/* c's join ends, done or not; when this returns, the walk no longer
 * names c (c's loop). */
void rt_flush_leave(struct rtable *t, struct channel *c);
/* Is c's join still under way? */
int rt_flush_pending(struct rtable *t, struct channel *c);
void rt_flush_init(struct rtable *t);
/*
 * Refresh cycle walk over the routes sent by one channel (any loop; locks
 * like rt_update): withdraw those older than flush_gen (when flush is set),
 * and replace those older than modify_gen by what modify returns (one
 * reference, NULL withdraws), keeping their generation, so they stay stale.
 * Visits about max nets (it stops only between two buckets of the net
 * index), starting at position *pos (0: from the start; see
 * rcu_hash_walk). Returns 1 when the walk is complete (*pos is 0 again),
 * else 0 with *pos where to resume. Index resizes in between change
 * nothing. Adds the routes withdrawn and replaced to *removed and
 * *modified.
 */
struct rt_stale_op {
  struct channel *c;
  int flush;
  u16 flush_gen, modify_gen;
  struct ea_list *(*modify)(struct channel *c, const struct rte *r);
  /* NULL, or which of those modify may replace: the others stay (no
   * writer lock taken for them) */
  int (*select)(struct channel *c, const struct rte *r);
};
int rt_stale_walk(struct rtable *t, const struct rt_stale_op *op, u64 *pos, uint max,
                  uint *removed, uint *modified);
/* Is route r older than generation gen (wrap-around safe)? */
static inline int rte_gen_older(const struct rte *r, u16 gen)
{
  return (s16) (u16) (uatomic_read(&r->refresh_gen) - gen) < 0;
}

/* Lookups (nest/rt_index.c): call inside rcu_read_lock(); results valid
 * until unlock. */
struct net *rt_find_net(struct rtable *t, const net_addr *n);
/* out[i] = rt_find_net(t, n[i]) for count nets, their cache misses
 * overlapped (a sorted table's listing looks up each net it lists). */
void rt_find_nets(struct rtable *t, const net_addr *const *n, uint count, struct net **out);
/* Longest prefix match of an address (or the net itself and its
 * supernets): the longest that has a usable route. */
struct net *rt_lookup_lpm(struct rtable *t, const net_addr *n);
/* Probes of a prefix at its own length and each shorter one the table has
 * nets of, longest first: the keys a longest-prefix match or a ROA check
 * looks up. Their buckets and first nets are asked for RT_PROBE_WAVE keys
 * at a time, so the probes' cache misses overlap (rt_index.c). The state
 * is on the caller's stack, inside one read section. */
#define RT_PROBE_WAVE 16
struct rt_probe {
  struct rtable *t;
  const net_addr *of;
  int len;                    /* the next length a wave looks at */
  int region_low;             /* lengths from here on (64 of them): probed */
  u64 region_lens;            /*   only if in the region's mask (rtable.regions) */
  uint count, next;           /* keys in the wave, the next one handed out */
  u32 hash[RT_PROBE_WAVE];
  net_addr key[RT_PROBE_WAVE];
};
void rt_probe_start(struct rt_probe *p, struct rtable *t, const net_addr *of);
/* The next key and its hash; NULL when every length was probed. */
const net_addr *rt_probe_next(struct rt_probe *p, u32 *hash);
/* ROA nets with the prefix and length of key (a ROA net; its max length
 * and ASN are ignored), whatever their max length and ASN; hash: the
 * key's (rt_probe_next, rt_net_hash). */
struct net *rt_roa_first(struct rtable *t, const net_addr *key, u32 hash, struct rcu_hash_iter *it);
struct net *rt_roa_next(const net_addr *key, struct rcu_hash_iter *it);
/* Iterate nets: first/next inside one RCU read section. */
struct net *rt_first_net(struct rtable *t, struct rcu_hash_iter *it);
/* The first net from walk position pos on (rcu_hash_walk, rcu_hash_pos):
 * a walk resumed in another read section. */
struct net *rt_net_at(struct rtable *t, u64 pos, struct rcu_hash_iter *it);
struct net *rt_next_net(struct rtable *t, struct rcu_hash_iter *it);
/* A walk in parts, each in a read section of the caller's, resumed from
 * *pos (0: the start): visits the nets from there (each once the walk has
 * stepped past it: the visit may remove it), max or a few more, as it
 * stops only between buckets. *pos: where the next part starts. Nets
 * made or gone between parts may or may not be visited. 1: done. */
int rt_walk_part(struct rtable *t, u64 *pos, uint max, void (*visit)(struct rtable *, struct net *, void *), void *ctx);

/*
 * Feeds: walk every net in steps, each in its own RCU read section, with
 * a journal reader attached that does not move meanwhile. That reader
 * keeps every net removed after the walk began from being freed, so the
 * cursor (and whatever a dead net points to) stays valid between steps.
 * Dead nets are returned too (their chain is empty); skip them.
 */
static inline struct net *rt_feed_first(struct rtable *t) { return rcu_dereference(t->feed_head); }
static inline struct net *rt_feed_next(struct net *n) { return rcu_dereference(n->feed_next); }
/* The newest net now (NULL: none). A reader attached before keeps it
 * from being freed; a walk may miss it if it dies and leaves the list. */
struct net *rt_feed_last(struct rtable *t);

/*
 * A feed's read-ahead: a walk that handles each net's chain (its best
 * route, the one a channel exported) waits for a cache miss per route in
 * a big table. Nets come in the order they were made, which the hardware
 * follows; their routes do not. So the walk asks for the first route of
 * the net RT_FEED_FAR steps on, and for the second route of the one
 * RT_FEED_NEAR steps on, whose first has come by then. Start it at the
 * walk's net, step it with the walk; last: where the walk ends (NULL:
 * the list's end).
 */
#define RT_FEED_FAR 6
#define RT_FEED_NEAR 3
/* The walk's own, on its stack; read inside the walk's read section. */
struct rt_feed_ahead {
  struct net *far, *near;
  const struct net *last;
};

static inline struct net *
rt_feed_ahead_next(const struct rt_feed_ahead *a, struct net *n)
{
  return n && n != a->last ? rt_feed_next(n) : NULL;
}

static inline void
rt_feed_ahead_far(struct rt_feed_ahead *a)
{
  struct rte *r = (a->far = rt_feed_ahead_next(a, a->far)) ? rcu_dereference(a->far->routes) : NULL;
  if (r)
    __builtin_prefetch(r);
}

static inline void
rt_feed_ahead_near(struct rt_feed_ahead *a)
{
  struct rte *r = (a->near = rt_feed_ahead_next(a, a->near)) ? rcu_dereference(a->near->routes) : NULL;
  struct rte *next = r ? rcu_dereference(r->next) : NULL;
  if (next)
    __builtin_prefetch(next);
}

static inline void
rt_feed_ahead_start(struct rt_feed_ahead *a, struct net *from, const struct net *last)
{
  *a = (struct rt_feed_ahead) { .far = from, .near = from, .last = last };
  for (uint i = 0; i < RT_FEED_FAR; i++)
    rt_feed_ahead_far(a);
  for (uint i = 0; i < RT_FEED_NEAR; i++)
    rt_feed_ahead_near(a);
}

static inline void
rt_feed_ahead_step(struct rt_feed_ahead *a)
{
  rt_feed_ahead_far(a);
  rt_feed_ahead_near(a);
}

/* Readers. */
/* notify == NULL: a pin that only keeps journal items (and the routes and
 * nets they retire) from being freed, e.g. while the CLI streams a table. */
void rt_reader_attach(struct rtable *t, struct rt_reader *r, struct loop *l, struct event *notify);
/* The same where reader at (attached to t) is now, not at the end. */
void rt_reader_attach_at(struct rtable *t, struct rt_reader *r, struct loop *l, struct event *notify,
                         const struct rt_reader *at);
void rt_reader_detach(struct rt_reader *r);
/* Under the writer lock (the readers' list): r's loop is sent its notify
 * event, unless it has none or that is pending. */
static inline void
rt_reader_wake(struct rt_reader *r)
{
  if (r->notify && !ev_active(r->notify))
    ev_send(r->loop, r->notify);
}

/* Items between the reader and the journal's end. Reader's loop. */
u64 rt_reader_lag(const struct rt_reader *r);
/* A route just seen in a chain of the reader's table: may its journal
 * item be one the reader has yet to read (published or not)? 0: it was
 * read already. Reader's loop, inside rcu_read_lock(). */
int rt_reader_may_meet(const struct rt_reader *r);
/* The journal's end, past the item of every route in the table's chains
 * before the call (it waits for a writer inside to publish). Any loop. */
u64 rt_journal_end_settled(struct rtable *t);
/* The journal position every reader of t is done with (the end when none
 * reads): what lies before it no reader will see again. */
u64 rt_readers_done_min(struct rtable *t);
u64 rt_readers_done_min_locked(struct rtable *t);    /* under the writer lock */
/* The lag past which a reader with a notify event is flagged laggard if
 * it has not moved for RT_LAGGARD_STUCK: the table's nets (a refeed costs
 * one walk of them), plus RT_LAGGARD_MIN. One that moves is flagged at
 * four times the limit: it may be slow only while a burst lasts, and a
 * feed resends what the peer has. */
#define RT_LAGGARD_MIN 65536
#define RT_LAGGARD_STUCK (S_ 1)
u64 rt_laggard_limit(struct rtable *t);

/* Import backpressure. A reader that reads on but falls RT_PRESS_HIGH
 * items behind (one loop on a few cores against many importing peers)
 * presses the table until it is back within RT_PRESS_LOW: each item in
 * between is memory (40 bytes, and the route it retires), and the
 * importers' CPU is what the reader lacks. Peers' imports wait meanwhile
 * (their TCP windows close), RT_PRESS_HOLD_MAX at a time at most. A
 * reader that stops for a reason of its own (its peer reads slowly, a
 * feed, a hold) presses no more (rt_reader_idle), nor does one that has
 * not moved for RT_PRESS_STUCK, until it reads again: a stalled peer must
 * not hold the others up; it is made a laggard as before. These are the
 * defaults; a table's `cork threshold LOW HIGH` (BIRD 3) sets its own.
 * Without one, and while no pipe is up, a small table's marks are
 * lower: the high mark is an eighth of its nets (RT_PRESS_SHARE), at
 * least RT_PRESS_HIGH_MIN, and the low mark a quarter of it. What waits
 * in the journal then stays small beside what the table holds: one
 * table 10 x 10k peaked 2-3 MB lower in the same time. With pipes, the
 * crowding mark below follows the table already, and the lower marks
 * cost `multi` 32 x 1M 3-5% of its time for no memory (doc/perf.md,
 * session 57). */
#define RT_PRESS_HIGH 65536
#define RT_PRESS_LOW 16384
#define RT_PRESS_HIGH_MIN 4096
#define RT_PRESS_SHARE 8
#define RT_PRESS_STUCK (MS_ 200)
#define RT_PRESS_HOLD_MAX (MS_ 100)
/* A gentler pressure holds copiers alone: pipes that copy routes from a
 * table more channels read into one fewer read (master4 into a peer's
 * table in the multi layout). What they hold back waits in their source's
 * journal, one item for all its readers, not in one journal per copy:
 * a hundred peers' tables each a whole table's changes behind their
 * sessions were 180 MB at the moment master4 converged (nest/rt_press.c).
 * The mark is shared out among the pipes (rt_press_copies_high()): all of
 * them together let their tables' readers fall RT_PRESS_COPIES_ALL
 * changes behind, each one between RT_PRESS_COPIES_MIN and _MAX; a
 * reader crowds its table past that mark and until it is back within
 * half of it. Why not one low mark: the low mark is the reader's runway
 * while the copier's loop waits for a thread; with 10 pipes at 1024 (and
 * 4096 high) the readers starved, and 10 peers' sessions got everything
 * 0.5 s after start against 0.3 s at 8192; with 100 pipes other loops
 * have work meanwhile, and a mark of 1310 costs a little time while the
 * peak of 100 peers' 100 routes each is 80 MB against 93 at 8192 (and
 * BIRD 2's 81; doc/perf.md, session 35). Nor does a table's share pass
 * an eighth of its nets (RT_PRESS_COPIES_SHARE): what waits in its
 * journal stays small beside what it holds. A small table's mark is
 * lower (10 peers' 1,000 routes each: 1,024 where the pipes' share is
 * 8,192), which took 2-3 MB off the peaks of small loads for 5-12%
 * more time (a few milliseconds); a large one reaches the pipes' share
 * (doc/perf.md, session 54). */
#define RT_PRESS_COPIES_ALL (16 * 8192)
#define RT_PRESS_COPIES_MAX 8192
#define RT_PRESS_COPIES_MIN 1024
#define RT_PRESS_COPIES_SHARE 8
/* The crowding mark (items behind t's end) for the pipes alive now and
 * t's size. */
u64 rt_press_copies_high(struct rtable *t);
/* The marks of RT_PRESS_ALL for t's size now. */
void rt_press_marks(struct rtable *t, u64 *low, u64 *high);
enum rt_press_level { RT_PRESS_NONE, RT_PRESS_COPIES, RT_PRESS_ALL };
static inline int rt_import_pressed(struct rtable *t) { return uatomic_read(&t->pressing) != 0; }
static inline int rt_import_crowded(struct rtable *t) { return uatomic_read(&t->crowding) != 0; }
static inline u32 rt_reader_count(struct rtable *t) { return uatomic_read(&t->reader_count); }
/* An importer waiting for the table to be pressed no more; its loop's. */
struct rt_press_wait {
  struct rt_press_wait *next;       /* under the table's press_lock */
  struct rtable *table;             /* where it waits; NULL: nowhere */
  struct loop *loop;
  struct event *ev;                 /* sent there once the pressing ends */
  u32 copies;                       /* a copier's: waits while the table is
                                       crowded (RT_PRESS_COPIES), not only
                                       pressed; set by the owner */
};
/* Is t pressed (crowded, for a copier's w)? Then w waits there (if it
 * does not wait yet): 1. */
int rt_import_wait(struct rtable *t, struct rt_press_wait *w);
/* w waits no more (its importer goes away); no send after this. */
void rt_import_unwait(struct rt_press_wait *w);

/* An importer's hold, in its loop: it writes nothing while a table it
 * writes into is pressed, RT_PRESS_HOLD_MAX at a time at most, then once
 * more (keepalives wait in a held BGP socket; a reader that stopped
 * moving lets go only when its table's cleanup runs, which writes
 * trigger). ev is sent when the wait or the time is over. */
struct rt_hold {
  struct rt_press_wait wait;
  struct timer tm;
  btime since;                      /* 0: not held */
  u32 counted;                      /* a copier's, counted in the pipes that
                                       share the crowding mark; set by
                                       rt_hold_init, cleared by rt_hold_stop,
                                       both in the importer's loop */
};
/* copies: a pipe direction's (one of two a pipe): it waits at the crowding
 * mark, which it shares with every other until rt_hold_stop(). */
void rt_hold_init(struct rt_hold *h, struct loop *l, struct event *ev, int copies);
/* pressed: rt_import_wait() said so of one of the tables, for h->wait.
 * Returns whether to write nothing now. */
int rt_hold_check(struct rt_hold *h, int pressed);
static inline int rt_hold_held(const struct rt_hold *h) { return h->since != 0; }
/* The importer goes away: no send after this. */
void rt_hold_stop(struct rt_hold *h);

/* Reader's loop. */
void rt_reader_idle(struct rt_reader *r);
static inline void rt_reader_polls(struct rt_reader *r, struct event *ev) { uatomic_set(&r->polls, ev); }
/* Internal (nest/rt_press.c): the reader's level set (lowered by the
 * reader's loop or the table's, to the one its lag calls for); a
 * writer's look at a reader after it published. */
void rt_reader_press(struct rt_reader *r, u32 level);
void rt_reader_press_ease(struct rt_reader *r, u64 lag);
void rt_press_check(struct rtable *t, struct rt_reader *r);
/* nest/rt_readers_check.c, sanitizer builds only: the readers' list
 * checked at a cleanup or trim (under the lock), a reader's item seq
 * (and its loop) before it reads it, its done that would go back, and
 * the reader a new one starts at (under the lock); a failure logs BUG
 * lines. */
#ifdef BIRD_SANITIZED
extern u32 rt_readers_bugs;         /* atomic: dumps so far (unit tests) */
void rt_readers_check(struct rtable *t, const char *where);
/* Under the lock, after blocks before seq `from` up to the journal's
 * first now left it for min: noted, and the list checked again. */
void rt_readers_unlinked(struct rtable *t, const char *where, u64 min, u64 from);
void rt_reader_check(struct rt_reader *r, u64 seq);
void rt_reader_check_at(struct rtable *t, const struct rt_reader *at);
void rt_reader_twice(struct rt_reader *r);
void rt_reader_back(struct rt_reader *r, u64 seq);
#else
static inline void rt_readers_check(struct rtable *t UNUSED, const char *where UNUSED) {}
static inline void rt_readers_unlinked(struct rtable *t UNUSED, const char *where UNUSED, u64 min UNUSED,
                                       u64 from UNUSED) {}
static inline void rt_reader_check(struct rt_reader *r UNUSED, u64 seq UNUSED) {}
static inline void rt_reader_check_at(struct rtable *t UNUSED, const struct rt_reader *at UNUSED) {}
#endif

/* nest/rt_settle.c: export settle. Made with the table's loop; the times
 * from the config (main loop); a publish with settle.on set kicks the
 * table loop instead of waking readers (writers, under the lock); torn
 * down in the table loop. */
void rt_settle_init(struct rtable *t);
void rt_settle_set(struct rtable *t, struct rt_settle_times exp, struct rt_settle_times rr);
void rt_settle_publish(struct rtable *t);
void rt_settle_stop(struct rtable *t);

/* Table internals (nest/rt_conf.c creates and deletes tables). */
void rt_index_init(struct rtable *t);
/* The index (nest/rt_index.c) to the writer: a net's hash (ROA nets hash
 * by prefix and length only), its lookup leaving *it on the bucket, the
 * index's arrays accounted as table memory (under the lock), and, in the
 * table loop under the lock, a grown index compacted once no net has come
 * for RT_INDEX_QUIET. */
u32 rt_net_hash(const net_addr *n);
struct net *rt_index_find(struct rtable *t, u32 hash, const net_addr *n, struct rcu_hash_iter *it);
void rt_index_account(struct rtable *t);
/* Under the lock, before a net comes into a full index by a copy of
 * sender id's (a pipe's): how big the index should grow. */
void rt_index_expect_copies(struct rtable *t, u16 copy);
void rt_index_settle(struct rtable *t);
/* A net about to enter the index, under the lock: its region's mask. */
void rt_index_mark(struct rtable *t, const net_addr *n);
/* The region masks of a table gone, after its grace period (NULL: none). */
void rt_index_regions_free(u64 *regions);
void rt_cleanup(void *table);
void rt_cleanup_tick(struct timer *tm);     /* cleanup_tm's hook */
void rt_table_destroy_data(struct rtable *t, int at_exit);
/* Next journal item for this reader or NULL; the item stays valid until the
 * next call of rt_reader_next/detach. Call inside rcu_read_lock(). */
const struct rt_journal_item *rt_reader_next(struct rt_reader *r);
/* The reader's loop wrote items of the reader's own sender (r->own) into
 * its table, which it would skip unread (a pipe's copies, read back by
 * the pipe): move the reader past those at its cursor now, up to the
 * first of another sender, so that they do not wait in the journal for
 * its next pass. Not in a pass (held). Returns the items passed, adding
 * the withdrawals among them to *withdrawals. */
uint rt_reader_pass_own(struct rt_reader *r, uint *withdrawals);
/* The items given from now until rt_reader_release() stay the reader's:
 * the routes they name keep their references, even those a later item
 * retires (the cleanup drops a retired route's references once every
 * reader is done with the item that retired it). For a reader that keeps
 * routes past their item for a while, within one read section: an update
 * group's step of changes, a pipe's queue. Memory alone would be safe
 * without it (RCU); a reference taken on a list whose count reached zero
 * would not. Reader's loop. */
void rt_reader_hold(struct rt_reader *r);
void rt_reader_release(struct rt_reader *r);
/* The items rt_reader_next() is to give next, without moving the reader:
 * up to max of them, all published (so possibly fewer), into out[] and
 * their senders into senders[]; returns how many. For a reader that looks at a
 * stretch of items before it reads them (coalescing a net's changes).
 * Held reader, inside rcu_read_lock(). */
uint rt_reader_window(struct rt_reader *r, const struct rt_journal_item **out, u16 *senders, uint max);
/* Start loading what the items a few ahead of the reader point to (nets
 * and routes of a big table are cache misses, one after another). Only
 * a hint: no effect past the journal's end or the reader's block. Inside
 * rcu_read_lock(). */
void rt_reader_prefetch(const struct rt_reader *r);
/* The same for a reader of best-route changes that looks at nets only
 * (the next-hop cache): the net of an item that changed its best route. */
void rt_reader_prefetch_net(const struct rt_reader *r);
/* The item a few ahead of the reader whose records rt_reader_prefetch()
 * asked for a while ago, or NULL: a reader may ask for what it will look
 * up for that item (its own index of nets) while it works on this one.
 * Inside rcu_read_lock(). */
const struct rt_journal_item *rt_reader_ahead(const struct rt_reader *r);

/* Routes of 40 bytes lie across two cache lines in half of the cases,
 * and readers want fields of both (id, attrs, sender, flags): ask for
 * both (a hint; r may be NULL). */
static inline void
rt_prefetch_rte(const struct rte *r)
{
  if (r) {
    __builtin_prefetch(r);
    __builtin_prefetch((const char *) r + sizeof(*r) - 1);
  }
}

/* Best-route order: is a better than b? */
int rte_better(const struct rte *a, const struct rte *b);

/* A route that may be best and exported: not one kept only for `show
 * route filtered`. Those sit at the end of the chain. */
static inline struct rte *rte_usable(struct rte *r) { return r && !rte_flags(r) ? r : NULL; }
static inline struct rte *net_best(struct net *n) { return rte_usable(rcu_dereference(n->routes)); }

#endif
