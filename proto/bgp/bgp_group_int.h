/*
 * DOC: BGP update groups, inside: what their files (bgp_group*.c) share.
 * Not for the rest of the protocol (bgp_group.h is).
 */
#ifndef PROTO_BGP_BGP_GROUP_INT_H
#define PROTO_BGP_BGP_GROUP_INT_H

#include "proto/bgp/bgp.h"
#include "proto/bgp/bgp_group.h"
#include "proto/bgp/bgp_gout.h"
#include "proto/bgp/bgp_txlog.h"

/* The group stops reading the journal while its fastest member has more
 * than this much to send (PAUSE, until RESUME); a member that falls EVICT
 * behind the log's end, less for a small table (group_evict), is let go
 * and exports alone, so that it neither holds the others back nor the
 * log's memory up. */
#define GROUP_LAG_PAUSE (1024 * 1024)
#define GROUP_LAG_RESUME (256 * 1024)
#define GROUP_LAG_EVICT (64 * 1024 * 1024)
/* ... or less for a smaller table: GROUP_EVICT_PER_ROUTE bytes per route
 * the group exports, two or three times what a feed of them afresh sends
 * (a member let go is fed afresh), but no less than this. */
#define GROUP_LAG_EVICT_MIN (4 * 1024 * 1024)
#define GROUP_EVICT_PER_ROUTE 64
/* Log entries a member let go passes over per turn of its loop. */
#define GROUP_SKIP_BUDGET 1024
/* A session exporting alone that failed to join at a marker tries again
 * after this long (a marker it had passed, its export restarted), or this
 * (it fell too far behind the log meanwhile: a slow peer). */
#define GROUP_REJOIN_WAIT (S_ 1)
#define GROUP_REJOIN_WAIT_SLOW (S_ 60)
/* A session joining at a marker holds its own export where it asked
 * until the group has got there, for at most this long (the group is
 * feeding, or further behind the table than this). */
#define GROUP_MARKER_HOLD (S_ 5)
/* A new class's routes are counted this long after it was made, by one
 * walk for every class made meanwhile: a hundred clients coming up
 * together would make a walk each. */
#define GROUP_COUNT_DELAY (MS_ 500)
/* A member asking to export alone (its filter changed, no enhanced route
 * refresh) waits this long for others, unless no refeed follows: a
 * `configure` that changes a hundred clients' filters asks a hundred
 * times within milliseconds, and those handed over together share one
 * walk for their maps. */
#define GROUP_SOLO_WAIT (MS_ 20)
/* Changes wait for more to pack with them, as a session's do (bgp_tx.c). */
#define GROUP_SETTLE (MS_ 1)
#define GROUP_SETTLE_PREFIXES 512
/* Members are woken for their counters alone (after changes that went
 * to nobody) this long after the first such change: a stream of rejected
 * changes wakes a route server's hundreds of members ten times a
 * second, not once per export pass. */
#define GROUP_STATS_WAKE (MS_ 100)

/* What makes exports equal: the group's key. Export filters differ per
 * export class within a group, not per group (gm->filter); one that reads
 * ROA or ASPA tables keeps a session out of groups (gm_eligible). */
struct bgp_group_key {
  struct rtable *table;
  u64 prof_id;                  /* interned export profile */
  uint max_len;                 /* negotiated message size */
  u8 af, as4, ext_next_hop, rr_client, interpret_communities, llgr_peer;
};

/* PENDING -> JOINED (group) -> HANDOVER (group) -> left; any but
 * HANDOVER -> LEAVING (member). Only a member that saw JOINED touches the
 * cursor, only one that saw HANDOVER the h_ fields. A session exporting
 * alone joins at a marker instead: PENDING -> MARKER (group) -> JOINED
 * (member, once its own export reached the marker and went out), or
 * MARKER -> CANCELLED (group: it fell too far behind the log meanwhile)
 * -> LEAVING (member). */
enum { GM_PENDING = 0, GM_JOINED, GM_HANDOVER, GM_LEAVING, GM_MARKER, GM_CANCELLED };
#define GM_REQ_JOIN 1
#define GM_REQ_LEAVE 2
#define GM_REQ_REFEED 4
#define GM_REQ_EORR 8
#define GM_REQ_SOLO 16
#define GM_REQ_SOLO_NOW 32      /* with SOLO: no refeed follows, no wait */

struct bgp_group;
struct bgp_gmember;
struct group_step;
struct par;

/* An export class (bgp_txlog.h): the members of a group with the same
 * export filter (filter_same()). The group runs its filter once per change
 * for all of them, and sends each distinct result once for every class
 * that has it. Owner: the group's loop; never freed before the group,
 * since members read routes. */
struct group_class {
  const struct filter *filter;  /* FILTER_ACCEPT: the route as the group's channel exports it */
  struct bgp_gmember *owner;    /* a member whose config holds filter */
  u32 id;
  uint members;
  u32 routes;                   /* atomic, group's loop writes: routes the class gets */
  u64 filtered;                 /* atomic, group's loop writes: updates its filter rejected */
  bool counting;                /* routes is not counted yet (group_class_count) */
  u32 traced;                   /* D_ROUTES, D_FILTERS: some member's `debug`, as of the last look */
};

struct bgp_gmember {
  /* Set by bgp_group_join(), immutable after. */
  struct bgp_group_key key;
  /* The member session, held (proto_src_ref) until gm is freed: the group
   * tells its routes by it and reads its debug mask, nothing else. */
  struct proto *proto;
  struct config *config;        /* the config its filters live in, held from the main loop's join on */
  const struct filter *filter;  /* its export filter, for its class */
  int config_held;              /* by the main loop, which drops it */
  int in_class;                 /* group's loop: counted in cls */
  const struct channel_config *cc;
  struct bgp_xprof *xprof;      /* a reference of our own */
  struct bgp_peer_info peer;    /* the member's, for the group's export rules */
  struct loop *loop;            /* the member's */
  struct event *wake;           /* its tx event */
  char name[48];                /* for logs */
  int join_eor;                 /* after the first feed: End-of-RIB (1), or
                                   EoRR (2) closing the BoRR of a regroup, or
                                   nothing (3: a quiet move, below) */
  /* A quiet move (gm_move_quietly): a member handed over for a filter
   * change, whose peer takes no enhanced route refresh, joins the group
   * of its new settings at once with what its peer holds: p_map, the
   * routes its old class had at the hand-over (its h_map), and p_pin,
   * the journal from there. The feed that follows withdraws from it
   * what the peer holds and its new class does not get. Set before the
   * join goes out; the group's loop drops both at the feed's end,
   * gm_free() if the feed never came. */
  struct chan_export_map *p_map;
  struct rt_reader p_pin;
  /* Joining at a marker (bgp_group_rejoin): m_want is the member's
   * journal position when it asked, where its own export holds; the group
   * waits until its own reader is there or further, packs, and hands the
   * member the marker: m_seq, its reader's position then, and the log
   * from that point on. The member, exporting alone, exports up to m_seq
   * and no further, sends what it has and reads the log. One that waited
   * too long for the marker (GROUP_MARKER_HOLD), or whose export
   * restarted, leaves and tries again later. */
  int marker;
  u64 m_want;
  u64 m_seq;                    /* group's loop, before MARKER */
  u32 m_routes;                 /* group's loop, before MARKER: its exports then */
  int m_switched;               /* member's loop: reads the log now */
  s64 own_base;                 /* member's loop: its own exports the group's
                                   own_routes did not count (the marker's) */

  u32 refs;                     /* atomic: the member's and the group side's */
  int state;                    /* atomic: GM_* */
  u32 req;                      /* atomic: GM_REQ_* for the group's loop */
  struct bgp_group *group;      /* main loop sets it before the join goes to the group */
  struct event main_ev;         /* to the main loop: find or make the group */
  struct event ev;              /* to the group's loop: req */
  struct bgp_txlog_cursor cur;  /* joined by the group's loop, then the member's */
  u32 own_routes;               /* atomic, group's loop writes: its exports learned from this member */
  /* The hand-over to the member's own channel: the group's loop fills
   * them, then the member's (state HANDOVER) takes them. */
  u64 h_end;                    /* the log up to here is the member's still */
  struct rt_reader h_pin;       /* the journal where the group's reader was */
  struct chan_export_map *h_map;   /* the group's export map then */
  struct chan_catchup *h_owed;  /* the withdrawals its catch-up owed then */
  int h_eor_sent, h_eorr;       /* End-of-RIB was in the log; an EoRR is due */
  /* Atomic: let go for lagging, pass over the log, do not send it. The
   * group's loop sets it with HANDOVER, or later, when a member handed
   * over falls as far behind before it got to h_end (group_evict). */
  int h_skip;
  int solo_asked;               /* member's loop: GM_REQ_SOLO sent */
  /* Member's loop: a refresh with EoRR asked of the group, no EoRR sent
   * from the log since. A hand-over that comes first leaves the request
   * unseen (the group no longer lists the member): the member's own
   * export then owes the EoRR. */
  int eorr_asked;

  struct group_class *cls;      /* group's loop sets it before JOINED or MARKER */
  /* Group's loop. */
  int waiting;                  /* in marker_wait */
  struct lnode mn;              /* group->marker_wait */
  int listed;                   /* in members and by_proto */
  int handing;                  /* handed over, in handing */
  int solo_waiting;             /* asked to export alone, in solo_wait */
  struct lnode sn;              /* group->solo_wait */
  struct lnode n;               /* in group->members, or handing */
  struct hash_node hn;          /* group->by_proto */
  u32 id;
  int feed_wanted;              /* waits for the next walk */
  u32 walk;                     /* the cohort of the walk it is fed in, 0: none */
  int eor_due;                  /* after the feed: 1 End-of-RIB, 2 EoRR, 3 none */
  int own_due;                  /* joined with routes of its own in the table
                                   (join_eor 2, 3): group_count_own() */
  u32 own_count;                /* group_count_own()'s tally */
};

/* The walk that feeds members who joined late, all at once (a cohort,
 * bgp_group_feed.c). Group's loop. */
struct group_walk {
  struct chan_export_map *next; /* what the next cohort lacks, taken at the
                                   last request (bgp_group_feed.c) */
  struct chan_export_map *map;  /* the same for the cohort fed now */
  u32 cohort;                   /* the cohort fed now, 0: none */
  u32 seq;                      /* the last cohort number given */
  uint members;                 /* in the cohort and still listed */
  int started;
  struct rt_reader pin;         /* keeps cursor and last alive */
  struct net *cursor;
  struct net *last;             /* the newest net when the walk began: one
                                   made later was never sent before */
  u32 *classes;                 /* the cohort's classes (a bitmap of nclasses ids) */
  uint nclasses;
  struct bgp_gmember **moved;   /* its members moving quietly (p_map), listed */
  uint nmoved;
};

struct bgp_group {
  struct proto p;               /* hidden protocol: loop, pools, channel list */
  char name[32];
  /* Main loop. */
  struct lnode n;               /* in the registry */
  struct config *config;        /* held: cc's filters and tables live there */
  struct channel_config cc;     /* the channel's: the first member's, trimmed */
  struct event close_ev, done_ev;
  /* Immutable once made. */
  struct bgp_group_key key;
  struct bgp_xprof *xprof;      /* held */
  struct bgp_peer_info peer;    /* the members as the export rules see them */
  struct bgp_txlog *log;
  /* Cross-loop. */
  u32 refs;                     /* atomic: members joined or joining; only main adds */
  int paused;                   /* atomic: export_busy said so; members wake resume_ev */
  /* Group's loop. */
  struct channel *c;
  struct bgp_gout *out;
  struct lnode members;         /* struct bgp_gmember */
  struct lnode marker_wait;     /* struct bgp_gmember joining at a marker */
  struct lnode handing;         /* struct bgp_gmember handed over, until they leave */
  struct lnode solo_wait;       /* struct bgp_gmember to hand over (solo_tm) */
  struct group_class **cls;     /* export classes by id, ncls of them */
  uint ncls, cls_size;
  u32 *live;                    /* bitmap of the classes with members, cls_size bits */
  /* Scratch for one change or fed net, cls_size entries: a route server's
   * hundred classes would otherwise take kilobytes per change from the
   * loop's temporary pool, kept until its turn ends. */
  struct ea_list **cls_now;
  u32 *cls_had, *cls_takes;
  struct cls_result *cls_res;
  linpool *ftmp;                /* the class filters' scratch */
  uint nlive;                   /* classes with members */
  struct group_step *step;      /* changes whose class filters run together, NULL: none yet */
  struct par *par;              /* the pool's helpers (lib/par.h), set when made */
  struct hash_table by_proto;   /* struct bgp_gmember by proto */
  u32 next_id;
  struct group_walk walk;
  struct timer settle;
  struct timer count_tm;        /* counts the routes of new classes (group_class_count) */
  struct timer solo_tm;         /* hands solo_wait over (GROUP_SOLO_WAIT) */
  u32 traced;                   /* some class's traced, as of the last look (group_class_look) */
  u32 traced_gen;               /* proto_debug_gen at the last look */
  u64 stats_seen;               /* changes counted at the last look (group_stats_wake) */
  struct timer stats_tm;        /* wakes the members for their counters */
  struct event start_ev, stop_ev, flush_ev, resume_ev, feed_ev;
  struct event marker_ev;       /* group_marker_check, after the joins queued */
};

/* bgp_group.c, any loop: a member's last reference goes (and it, from
 * the main loop if it held a config); the group's loop (gm->group set) is
 * asked for something (GM_REQ_*). */
void gm_unref(struct bgp_gmember *gm);
void gm_request(struct bgp_gmember *gm, u32 req);
/* bgp_group.c, the main loop: a member asks to join (its main_ev's hook):
 * its group is found or made. */
void group_join_main(void *data);

/* bgp_group.c, the group's loop */
u32 group_src_member(struct bgp_group *g, const struct rte *r, struct bgp_gmember **gmp);
void group_flush(struct bgp_group *g);
void group_settle(struct bgp_group *g);
/* Members joining at a marker get it once the group's reader has got to
 * their journal position and reads the journal, not a feed. */
void group_marker_check(struct bgp_group *g);
int group_busy(struct bgp_group *g);

/* The distinct results of one change (or one fed net) across classes:
 * classes whose filters leave the same attributes share what is sent
 * (one BGP export lookup, one reference), and most filters of a route
 * server change nothing or the same thing for every class. */
struct cls_result {
  struct ea_list *mod;          /* the filter's output, referenced; NULL: the route's own */
  struct ea_list *a;            /* what is sent, referenced; NULL: nothing (BGP's rules) */
  uint extra;                   /* more references on mod: classes that made it too */
};
struct cls_results {
  struct cls_result *r;         /* room for a result per class */
  uint n;
};

/* One change's verdicts, class by class (room for ncls classes). */
struct cls_verdicts {
  struct ea_list **now;         /* what class k gets, NULL: nothing; held by res */
  u32 *had;                     /* bitmap: the classes that took the old route */
  u32 *takes;                   /* bitmap: the classes whose filter takes the new one */
  struct cls_results res;
};

/* bgp_group_class.c, the group's loop */
/* gm's class: the one of its filter, made if none (pending packed first) */
void group_class_enter(struct bgp_group *g, struct bgp_gmember *gm);
void group_class_leave(struct bgp_group *g, struct bgp_gmember *gm);
/* Which classes have a member whose `debug` traces routes or filters:
 * the group traces each change for them (as their own export would).
 * Looks again when a member comes and when a debug mask changed. */
void group_class_look(struct bgp_group *g);
/* The table's exported route for n changed from old to new (rt_notify):
 * the verdicts, then their effect. */
void group_class_change(struct bgp_group *g, const net_addr *n, const struct rte *new, const struct rte *old,
                        const struct ea_list *new_src);
/* The verdicts alone, into v, with scratch tmp: of new (NULL: none
 * taken, no results) and old (NULL: none had it). Runs on any thread
 * while the group's loop waits (bgp_group_step.c): reads the classes,
 * writes only v. */
void group_class_verdicts(const struct bgp_group *g, const net_addr *n, const struct rte *new,
                          const struct rte *old, const struct ea_list *new_src, struct cls_verdicts *v,
                          linpool *tmp);
/* v, made without new (old) by group_class_verdicts(), takes the verdicts
 * of same_new (same_old), if not NULL: a change whose new (old) route
 * every class takes or rejects as this one's (the classes' filters pure,
 * group_class_pure(), and the routes alike), and results with references
 * of v's own. The group's loop. */
void group_class_share(const struct bgp_group *g, struct cls_verdicts *v, const struct cls_verdicts *same_new,
                       const struct cls_verdicts *same_old);
/* Do the classes' filters read the route's attributes only (filter_pure()),
 * so that each one's verdict and result on a route depend on its
 * attributes, source and flags alone? */
bool group_class_pure(const struct bgp_group *g);
/* Routes that pure class filters take or reject alike, with the same
 * results: the prefixes of one UPDATE, next to each other in the journal
 * and in the table's feed order, and the routes they replace, which most
 * often came in a few UPDATEs before. Both held (RCU or references), so
 * equal pointers are the same lists. */
static inline bool
group_rte_alike(const struct rte *a, const struct rte *b)
{
  return a && b && rte_attrs(a) == rte_attrs(b) && a->src_ix == b->src_ix && rte_flags(a) == rte_flags(b);
}
/* Their effect, in the order of the changes: counters, traces, what the
 * classes get (bgp_gout); v's results are dropped. */
void group_class_apply(struct bgp_group *g, const net_addr *n, const struct rte *new, const struct rte *old,
                       struct cls_verdicts *v);
/* Feed exp, the group's exported route of n (src: its attributes before
 * the group's channel), to the members of the walk's cohort, but member
 * but (0: none): the verdicts of the cohort's classes, then what they
 * send. The verdicts alone run on any thread, as group_class_verdicts(). */
void group_class_feed(struct bgp_group *g, const net_addr *n, const struct rte *exp, const struct ea_list *src,
                      u32 but);
void group_class_feed_verdicts(const struct bgp_group *g, const net_addr *n, const struct rte *exp,
                               const struct ea_list *src, struct cls_verdicts *v, linpool *tmp);
void group_class_feed_apply(struct bgp_group *g, const net_addr *n, const struct rte *exp, u32 but,
                            struct cls_verdicts *v);
/* What of the group's exports each of gm[0..n) has, for its own export
 * to take over: its h_map, a copy of the group's export map now, less the
 * routes its class's filter rejects and those learned from it. One walk
 * for all of them. */
void group_class_peer_maps(struct bgp_group *g, struct bgp_gmember **gm, uint n);
/* Does class k's filter take r, the group's exported route of n? */
bool group_class_takes(struct bgp_group *g, const struct group_class *k, const net_addr *n, const struct rte *r);
/* Count the routes of the classes made since the last count: one walk
 * over the group's exports for all of them. */
void group_class_count(struct bgp_group *g);
void group_class_count_hook(struct timer *t);
/* The classes with members in cohort: a bitmap (mb_free() it) of count ids. */
u32 *group_class_cohort(struct bgp_group *g, u32 cohort, uint *count);
void group_class_free(struct bgp_group *g);

/* bgp_group_step.c, the group's loop */
/* A change for the classes (rt_notify): run now, or kept for the step. */
void group_step_change(struct bgp_group *g, const net_addr *n, const struct rte *new, const struct rte *old,
                       const struct ea_list *new_src);
/* A net of the cohort walk (group_class_feed() of exp seen through mod,
 * whose reference the step takes over): run now, or kept. */
void group_step_feed(struct bgp_group *g, const net_addr *n, const struct rte *exp, struct ea_list *mod, u32 but);
/* Run what is kept: before the export pass or the walk's step ends (their
 * routes are RCU-protected for it), and before anything else goes to
 * g->out. */
void group_step_run(struct bgp_group *g);
void group_step_free(struct bgp_group *g);

/* bgp_group_feed.c, the group's loop */
/* gm needs everything the group exported (it joined, a route refresh);
 * eor: then End-of-RIB (1) or EoRR (2). */
void group_feed_request(struct bgp_group *g, struct bgp_gmember *gm, int eor);
/* gm is no member any more. */
void group_feed_forget(struct bgp_group *g, struct bgp_gmember *gm);
/* The group stops. */
void group_feed_stop(struct bgp_group *g);
void group_feed_hook(void *data);
/* End-of-RIB or EoRR for gm once its feed and the group's are over. */
void group_eor_check(struct bgp_group *g, struct bgp_gmember *gm);
/* Fed net n, whose exported route exp (learned from member but, or 0)
 * class k gets as now[k] (NULL: nothing): withdraw n from the members
 * moving quietly whose class gets nothing of it and whose peers hold
 * exp from their old class. */
void group_feed_moved(struct bgp_group *g, const net_addr *n, const struct rte *exp, u32 but,
                      struct ea_list *const *now);
/* A member moving quietly, in the loop that holds its move (the group's
 * until the move's walk is over or it leaves; then the member's): the
 * next net of table t whose route its peer held from its old class
 * changed since the move's pin, and in *now that net as it is now (NULL:
 * emptied since); NULL at the end. Inside rcu_read_lock(). drop: the
 * move's map and pin go. */
const net_addr *gm_moved_next(struct bgp_gmember *gm, struct rtable *t, struct net **now);
void gm_moved_drop(struct bgp_gmember *gm);

#endif
