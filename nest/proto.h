/*
 * DOC: Protocols and channels.
 *
 * A protocol instance runs in its own loop on a worker scheduler. Its
 * lifecycle (Down -> Start -> Up -> Stop -> Down) is driven by the main
 * loop: start, stop, restart and reconfigure requests are events posted
 * into the protocol's loop; the protocol reports state changes with
 * proto_notify_state(), which posts back to the main loop. A protocol
 * class plugs in through struct proto_class; nest/ never includes a
 * protocol's header.
 *
 * A channel binds a protocol to a table for one net type: it carries the
 * import/export policy, preference, limits and statistics. Imports go
 * through chan_import() in the protocol's loop; exports arrive through the
 * channel's table reader, in the protocol's loop, calling class->rt_notify.
 *
 * Ownership: fields marked "main" are touched only by the main loop; "proto"
 * only by the protocol's loop; "atomic" may be read anywhere. The status
 * shown by the CLI (state, info text, since) is published through RCU.
 */
#ifndef NEST_PROTO_H
#define NEST_PROTO_H

#include "lib/birdlib.h"
#include "lib/lists.h"
#include "lib/loop.h"
#include "lib/net.h"
#include "nest/rt.h"
#include "filter/filter.h"

struct config;
struct cli;
struct symbol;
struct proto;
struct channel;

enum proto_state { PS_DOWN = 0, PS_START, PS_UP, PS_STOP, PS_MAX };
extern const char *const proto_state_names[PS_MAX];  /* "down", "start", "up", "stop" */

enum limit_action { LIMIT_DISABLE = 0, LIMIT_WARN, LIMIT_BLOCK, LIMIT_RESTART };
extern const char *const limit_action_names[];   /* "disable", "warn", "block", "restart" */

struct channel_limit {
  u32 max;                    /* 0: no limit */
  enum limit_action action;
};

struct channel_config {
  struct lnode n;
  const char *name;           /* "ipv4", "ipv6", ... */
  struct proto_config *parent;
  uint net_type;
  struct rtable_config *table;
  const struct filter *in_filter, *out_filter;   /* FILTER_ACCEPT/REJECT or code */
  int in_filter_set, out_filter_set;
  int in_keep_filtered;       /* `import keep filtered` */
  u32 preference;
  u32 debug;
  struct channel_limit rx_limit, in_limit, out_limit;   /* receive, import, export */
  int import_table, export_table;   /* keep Adj-RIB-In / Adj-RIB-Out */
  int secondary;              /* export the best route the export policy
                                 accepts, not only the best one (BGP) */
  int rpki_reload;            /* re-run filters when a ROA/ASPA table they
                                 read changes (nest/channel_roa.c) */
};

struct proto_config {
  struct lnode n;
  struct config *global;
  const struct proto_class *class;
  struct symbol *sym;
  const char *name;
  const char *dsc;
  int disabled;
  u32 debug;
  u32 router_id;
  const char *thread_group;   /* NULL: default group */
  struct lnode channels;      /* struct channel_config */
  struct proto_config *template_from;
  /* The protocol this instance was spawned from (dynamic BGP), a config
   * of the same struct config; NULL for configured protocols. */
  const struct proto_config *spawned_from;
};

/* Read anywhere with uatomic_read(). The import side's are atomic
 * counters (table writers and pipes change some from other loops); the
 * export side's (exp_*) have one writer, the proto loop, which adds with
 * chan_stat_add(): a plain load and store, where a locked add per export
 * per session was a tenth of a 100-peer route server's time. */
struct channel_stats {
  u64 imp_updates_received, imp_updates_invalid, imp_updates_filtered, imp_updates_ignored, imp_updates_accepted;
  u64 imp_withdraws_received, imp_withdraws_invalid, imp_withdraws_ignored, imp_withdraws_accepted;
  u64 exp_updates_received, exp_updates_rejected, exp_updates_filtered, exp_updates_accepted;
  u64 exp_withdraws_received, exp_withdraws_accepted;
  u32 imp_routes, filt_routes, exp_routes, pref_routes;
};
#define chan_stat_add(ctr, d) \
  __atomic_store_n((ctr), __atomic_load_n((ctr), __ATOMIC_RELAXED) + (d), __ATOMIC_RELAXED)

enum channel_state { CS_DOWN = 0, CS_START, CS_UP, CS_FLUSHING };

/* Refresh cycle of a channel's imports (nest/channel_refresh.c, rt.h DOC).
 * Owner: the protocol's loop; gen is read by rt_update and the CLI. */
struct chan_refresh {
  u16 gen;                    /* atomic: generation of routes imported now */
  int active;                 /* between chan_refresh_begin and _end */
  int walking;                /* atomic: a chunked walk is under way */
  struct rt_stale_op op;      /* what the walk does */
  u64 pos;                    /* where the walk resumes (rcu_hash_walk) */
  int in_table_phase;         /* the walk is in the channel's import table */
  /* A flush's walk of the table is the table's (rt_flush_join), which
   * sends joined_ev when it is over */
  int joined;
  struct event ev, joined_ev;
};

struct channel {
  struct lnode n;             /* in proto->channels; owner: proto */
  const char *name;
  struct proto *proto;
  struct channel_config *cf;  /* owner: proto (switched on reconfigure) */
  struct rtable *table;
  uint net_type;
  u32 preference;
  const struct filter *in_filter, *out_filter;  /* owner: proto (switched on reconfigure) */
  int in_keep_filtered;
  linpool *filter_tmp;        /* owner: proto; scratch of filter runs */
  int state;                  /* atomic: enum channel_state */
  int disabled;               /* owner: proto; stays down when the protocol
                                 comes up (BGP: family not negotiated) */
  /* Adj-RIB-In or NULL: made by channel_new (main loop) and fixed for the
   * channel's life; its routes are written in the proto loop, read by the
   * CLI through RCU */
  struct rtable *in_table;
  u16 sender_id, in_sender_id;  /* the numbers of this channel in table and
                                   in_table (rt_sender_add), fixed for its life */
  struct channel_stats stats;
  /* Export side, owner: proto loop. */
  struct rt_reader reader;
  struct event export_ev;
  int export_all_paths;       /* every route, not only the best (ADD-PATH
                                 tx); set by the protocol, then
                                 chan_export_reset() */
  int export_elsewhere;       /* the protocol exports the table by other
                                 means (a BGP update group): the channel
                                 reads no journal (chan_export_own) */
  /* Proto loop: the journal is read no further than export_until (the
   * next item to read) while export_hold (chan_export_hold) */
  int export_hold;
  u64 export_until;
  enum { CHAN_FEED_NONE = 0, CHAN_FEED_START, CHAN_FEED_RUNNING } feeding;
  struct net *feed_cursor;    /* next net of a running feed (chan_feed_step) */
  struct net *feed_last;      /* proto loop: the table's last net when the feed
                                 began; nets made later come through the journal */
  net_addr *feed_only;        /* proto loop; malloc'd: the feed covers the nets
                                 within these prefixes only; NULL: every net */
  uint feed_only_count;       /* proto loop */
  u32 feed_seq;               /* proto loop: whole feeds begun (a receiver
                                 that may hold stale exports is in line
                                 once one begun later is over) */
  struct chan_catchup *catchup;  /* owner: proto loop; fell behind the journal (nest/channel_catchup.c) */
  /* Reload from the import table, owner: proto loop (nest/channel_reload.c). */
  struct event reload_ev;
  struct rt_reader reload_pin;  /* keeps reload_cursor alive between steps */
  struct net *reload_cursor;    /* next net; NULL: from the first */
  int reloading;
  net_addr *reload_only;        /* proto loop; malloc'd: reload the nets within
                                   these prefixes only; NULL: every net */
  uint reload_only_count;       /* proto loop */
  struct chan_export_map *export_map;   /* RCU; nest/channel_export_map.c */
  /* Proto loop: routes a feed rejected while the journal behind the
   * reader had items yet to read, up to feed_rejected_until (the table's
   * journal end when that feed ended): an item bringing such a route is
   * the feed's news again, not counted twice. A route's mark goes when
   * its item is read or it leaves (its id may be reused). NULL: none. */
  struct chan_export_map *feed_rejected;
  u64 feed_rejected_until;
  /* Proto loop: the journal's end when the last feed that ran ahead of
   * the reader ended; until the reader passed it, a change may name a
   * route the protocol no longer holds, or none where it holds one
   * (chan_export_one). 0: none. */
  u64 feed_ahead_until;
  /* The channel that exports for this one (export_elsewhere: its BGP
   * update group's, whose map tells what went out), NULL: itself. Set and
   * cleared by the protocol's loop; read by the CLI in the main loop,
   * which is also where that channel is freed. */
  struct channel *export_via;
  int rx_limit_hit, in_limit_hit, out_limit_hit;    /* atomic: shown as [HIT] */
  struct chan_refresh refresh;  /* owner: proto loop */
  /* ROA/ASPA tables the filters read (nest/channel_roa.c); owner: proto loop */
  struct chan_roa_sub *roa_subs, *roa_idle;
};

struct proto_status {         /* RCU-published snapshot for the CLI */
  struct rcu_head rcu;
  char info[96];              /* protocol's Info column */
};

/* What a protocol's routes tell of the run that made them beyond its
 * number: the tables the run writes into itself, and the class's own
 * account of the run (BGP: the session identity its best path and export
 * rules read). The main loop makes it before the run's first route source
 * (the class's run_info hook, or a plain one) and changes nothing in it
 * after, but fields it names atomic. The run holds it, and so does each
 * rte_src made in the run: copies of the run's routes in other tables,
 * exported after the protocol restarted with other settings, still read
 * the run that made them. */
struct proto_run_home;
struct proto_run_info {
  u32 uc;                     /* atomic */
  void (*free)(struct proto_run_info *);  /* a grace period after the last drop */
  struct proto_run_home *home;  /* RCU list, prepended by the main loop */
  struct rcu_head rcu;
};
/* Any thread. */
void proto_run_info_hold(struct proto_run_info *ri);
void proto_run_info_drop(struct proto_run_info *ri);
/* The run's channel writes into t (main loop, channel_new). */
void proto_run_home_add(struct proto_run_info *ri, const struct rtable *t);
/* Does the run write into t itself, or did it (its channel there gone)?
 * A pipe never writes that run's routes there: that is where they come
 * from, and in a ring of pipes copies of a route gone would keep one
 * another alive. The answer lasts as long as any route of the run, not
 * its channel: copies may still go round after the run ended. The next
 * run's routes are others (new sources), free to come in through a pipe
 * (a peer moved by `configure` from the single layout to the multi one).
 * Anyone holding a route of the run, in its read section; ri NULL: no. */
int proto_run_home(const struct proto_run_info *ri, const struct rtable *t);

struct proto {
  struct lnode n;             /* global list; owner: main */
  const struct proto_class *class;
  const char *name;
  u32 id;                     /* set by main at creation, then read anywhere;
                                 never reused (an address is); 0: a hidden instance */
  u32 run_id;                 /* set by main at each start, before the loop
                                 runs; never reused: the routes of one run
                                 tell by it (rte_src.run_id) */
  pool *pool;                 /* instance lifetime; owner: main */
  struct proto_config *cf;    /* latest committed config; owner: main */
  struct config *config_held; /* config kept alive for the proto loop; main */
  struct config *config_loop; /* main: the config the loop still runs with
                                 while config_held moved on (reconfigure
                                 failed, or came while stopping); until Down */

  /* Main loop's view of the lifecycle. */
  enum proto_state state;     /* main */
  int disabled;               /* main: administratively down */
  int stopping;               /* main: stop requested or Down and the loop
                                 going; until proto_down_done */
  int restart_pending;        /* main: start again after going down */
  int delete_pending;         /* main: removed from config */
  int reconfig_pending;       /* main: waiting for the reconfigure ack */
  btime last_state_change;    /* main, real time */
  btime created;              /* main, real time */
  const char *message;        /* main: disable/restart message (in pool) */
  u32 debug;                  /* atomic, main loop writes: debug mask, the
                                 config's until the `debug` command changes
                                 it; read by route traces (chan_debug) */
  /* Atomic, main loop writes: the same for each channel, by net type (a
   * protocol has one channel of each): a channel block's own `debug`,
   * or'ed with the protocol's. Here, not in the channel, so that who
   * traces for a channel (an update group) may read it as long as it
   * holds the protocol. */
  u32 chan_debug[NET_MAX];

  /* One run (start to down). */
  pool *run_pool;             /* owner: proto loop while it runs; main frees it */
  struct loop *loop;          /* main creates and stops it */
  struct proto_config *pcf;   /* config the proto loop works with; proto */
  struct lnode channels;      /* struct channel; created/freed by main while
                                 the loop does not run, else owner: proto */
  struct rte_src *main_source;
  struct proto_run_info *run_info;  /* main makes it at each start, before
                                       the loop runs, and drops it at Down */
  int req_state;              /* atomic: last state reported by the proto loop */
  int req_restart;            /* atomic: proto_notify_restart() not yet seen by main */
  struct proto_status *status;/* RCU; written by the proto loop */

  struct event start_ev, stop_ev, reconf_ev;      /* sent to the proto loop */
  struct event notify_ev, reconf_done_ev, down_ev; /* sent to the main loop */
  struct event limit_ev;          /* to the main loop: a limit asks for restart/disable */
  struct event reload_ev;         /* to the proto loop: `reload` (nest/proto_reload.c) */
  /* Route sources name their protocol, and copies of its routes (pipes)
   * outlive its own channels' flush: a deleted protocol stays allocated
   * (not its config) until its last source goes. Atomic: one for each
   * live source, one for the instance itself; the last one out sends
   * free_ev to the main loop (nest/proto.c). */
  u32 src_refs;
  struct event free_ev;           /* to the main loop: proto_release */
  int reload_request;             /* atomic: PROTO_RELOAD_* bits */
  int limit_request;              /* atomic: LIMIT_RESTART or LIMIT_DISABLE */
  struct proto_config *reconf_cf;  /* handed over with reconf_ev */
  struct config *reconf_config;    /* its config, referenced for the handover */
  int reconf_result;          /* atomic: 1 applied, -1 needs restart */
};

struct proto_class {
  const char *name;           /* "Static", "Device", "BGP" as `show protocols` prints */
  const char *template_name;  /* "static%d": auto names */
  const char *keyword;        /* "static" in config */
  uint class_id;              /* index for counters */
  size_t config_size, proto_size;
  size_t channel_config_size;   /* 0: struct channel_config */
  u32 channel_mask;           /* net types (NB_*) it may have channels for */
  uint max_channels;
  enum rte_source source;
  u32 default_preference;     /* channel preference unless configured */
  int export_any;             /* export every route, not only the best (pipes) */

  /* Config time (main loop). */
  void (*preconfig)(struct proto_config *);
  int (*postconfig)(struct proto_config *, char *err, size_t errlen);
  void (*copy_config)(struct proto_config *dst, const struct proto_config *src);
  /* Configure, for an instance spawned with config oc: nc is a fresh clone
   * of its parent's new config; copy what is the instance's own (BGP: the
   * neighbor address). 0: the parent would not spawn it any more (the
   * instance is removed). */
  int (*respawn_config)(struct proto_config *nc, const struct proto_config *oc);

  /* Main loop, before each start / after each run ended: resources the
   * protocol needs from the main loop (e.g. a shared listening socket).
   * init returns 0, or -1 with a message (the protocol stays down). */
  int (*init)(struct proto *, char *err, size_t errlen);
  void (*cleanup)(struct proto *);
  /* Main loop, at each start once pcf is set: the run's account for its
   * routes (struct proto_run_info, one reference). NULL: a plain one. */
  struct proto_run_info *(*run_info)(struct proto *);
  /* Protocol loop. Return the new state (PS_START/PS_UP, PS_STOP/PS_DOWN). */
  enum proto_state (*start)(struct proto *);
  enum proto_state (*shutdown)(struct proto *);
  /* Return 1 if the new config was applied in place, 0 to request restart. */
  int (*reconfigure)(struct proto *, struct proto_config *new);
  /* Send every route of the channel through chan_import() again (its
   * import filter changed). NULL: such a change restarts the protocol. */
  void (*reload_routes)(struct channel *);
  /* `reload [in|out]` (PROTO_RELOAD_* in dir) done the protocol's own
   * way: a pipe's directions are each a refeed of one of its channels.
   * Protocol loop. NULL: every channel up reloads in (its import table or
   * reload_routes) and refeeds out. */
  void (*reload)(struct proto *, int dir);
  /* reload_routes and refeeds involve the neighbor (BGP's route refresh,
   * resending everything): `rpki reload` then needs the channel's import
   * or export table, as in BIRD 2 (nest/channel_roa.c). */
  int reload_asks_peer;
  /* The protocol's own export rules, before the export filter (BIRD's
   * preexport: BGP's iBGP split horizon, well-known communities, OTC).
   * 0: go on, -1: reject (counted as rejected). Runs in the channel's loop
   * and, for `show route export`, in the main loop. NULL: always 0. */
  int (*preexport)(struct channel *, const struct rte *r);
  /* Main loop, for `reload in`: 1 can, 0 not running (nothing to do),
   * -1 cannot (e.g. the BGP neighbor has no route refresh). NULL: 1. */
  int (*can_reload_in)(struct proto *);
  /* new carries the attributes the export filter left; new_src are the
   * table route's own (the same list when the filter changed nothing; NULL
   * without new): BGP sends a MED the filter set, not one it learned. */
  void (*rt_notify)(struct proto *, struct channel *, const net_addr *, struct rte *new, struct rte *old,
                    const struct ea_list *new_src);
  /* Net n comes to rt_notify a few changes from now: the protocol may ask
   * for what it will look up then (only a hint; nothing may change).
   * Protocol loop. NULL: nothing to ask for. */
  void (*rt_notify_ahead)(struct proto *, const net_addr *n);
  /* Backpressure: while this is nonzero the channel stops reading the
   * journal (which keeps the changes, shared by all readers); the protocol
   * sends c->export_ev when it can take more. 1: its peers read slowly, or
   * a pipe holds its copies (nest/rt_press.c); 2: it has more to send than
   * it sent yet, which it will once its loops run (the reader may go on
   * holding the table's imports off: nest/rt.h). NULL: never busy. */
  int (*export_busy)(struct proto *, struct channel *);
  /* rt_notify takes a change at any time, whatever export_busy says (a
   * pipe: its holds spare memory, they are no limit): a catch-up passes
   * on withdrawals at once (nest/channel_catchup.c). */
  int export_always;
  /* The channel's export pass ends: a protocol that queued what rt_notify
   * gave it must be done with those routes now (they are RCU-protected
   * for the pass only; a catch-up's withdrawn copy goes right after its
   * rt_notify, so the pass ends there too). Protocol loop. NULL: none. */
  void (*export_flush)(struct proto *, struct channel *);
  /* `reload out` of a channel that exports by other means
   * (export_elsewhere: a BGP update group). Protocol loop. */
  void (*refeed_elsewhere)(struct channel *c);
  /* Main loop: another protocol's channel that wrote copies of routes
   * into table t (a pipe's) has gone down, its routes flushed, or it took
   * copies back whose routes are still there (its filter no longer passes
   * them). One that left out copies of the same routes because those were
   * there (two pipes bring one route into t) may offer them now. NULL:
   * none. */
  void (*copies_gone)(struct proto *, struct rtable *t);
  /* A feed of the channel (its first, or a refeed) has handed every route
   * to rt_notify; c->feeding is CHAN_FEED_NONE again. Protocol loop; BGP
   * sends End-of-RIB or EoRR only then. NULL: nothing to do. */
  void (*feed_end)(struct channel *c);
  /* Tiebreak between two routes of this class (after preference). */
  int (*rte_better)(const struct rte *a, const struct rte *b);
  /* Routes of one net with equal nonzero keys (and preference) form a
   * group whose best is chosen among the group first (BGP `deterministic
   * med`: the neighbor AS); 0: the route is in no group. NULL: never. */
  u64 (*rte_group)(const struct rte *r);
  /* Whether r of best's group ties with best on all the group decides by
   * and stays unsuppressed beside it (BIRD 2's ECMP candidates). NULL:
   * only the group's best is not suppressed. */
  int (*rte_mergable)(const struct rte *best, const struct rte *r);
  /* The address the route came from (BGP neighbor), IPA_NONE if none;
   * `show route` prints " from X" when it differs from the gateway. */
  ip_addr (*rte_from)(const struct rte *r);
  /* Extra info after the route line in `show route` ("[AS65000i]"). */
  void (*rte_info)(const struct rte *r, char *buf, size_t size);
  /* Lines of `show protocols all` after the generic ones; runs in the main
   * loop on RCU-safe data. */
  void (*show_info)(struct proto *, struct cli *);
  /* The Info column of `show protocols` while the protocol is down (a
   * pipe names its tables all the same, as BIRD); main loop, from its
   * config. NULL: empty. */
  void (*down_info)(const struct proto *, char *buf, size_t size);
  /* Has the protocol announced everything it has on its own, with no
   * peer involved (static: every configured route evaluated)? Read from
   * the main loop; `bird -T` waits for it before running the tests. NULL:
   * nothing to wait for. */
  int (*announced)(struct proto *);
  /* Lines of one channel after its statistics, as show_info. */
  void (*show_channel_info)(struct proto *, struct channel *, struct cli *);
  /* In place of the generic channel blocks of `show protocols all` (a
   * pipe shows its two channels as one, as BIRD does); as show_info. */
  void (*show_channels)(struct proto *, struct cli *);
  void (*dump)(struct proto *);
};

void proto_build(const struct proto_class *c);   /* register at start-up */
const struct proto_class *proto_class_find(const char *keyword);

/* Config time (grammar actions; see conf/cf_context.h for the builders). */
void proto_copy_config(struct proto_config *dst, const struct proto_config *src);

/* Spawned instances (dynamic BGP), main loop. proto_config_clone()
 * copies parent's config into parent's struct config (its memory; not in
 * its protos list) as protocol name and defines the name there, as the
 * CLI finds protocols by symbol. With like (configure: the config the
 * instance was spawned with), class->respawn_config() takes the instance's
 * own settings over. NULL: the config means something else by name, or
 * the parent would not spawn like any more. proto_spawn() creates and
 * starts an instance of it; it runs while p->loop is set. */
struct proto_config *proto_config_clone(const struct proto_config *parent, const char *name,
                                        const struct proto_config *like);
struct proto *proto_spawn(struct proto_config *pc);

/* Route sources hold their protocol (src_refs): nest/rt_table.c. Instances
 * of proto_new only (id != 0); any thread. */
static inline void proto_src_ref(struct proto *p) { uatomic_inc(&p->src_refs); }
void proto_src_unref(struct proto *p);
/* Main loop: apply a new config (start/stop/reconfigure protocols).
 * done (may be NULL) is sent to the main loop once every protocol has
 * acknowledged its reconfiguration; returns the number of protocols that
 * were restarted, started or stopped. */
uint protos_commit(struct config *new, struct config *old, struct event *done);
/* Protocols that could not take the last config in place (their class's
 * reconfigure hook said so in their loop) and restart: the main loop's
 * own restarts are protos_commit()'s count. */
uint protos_reconfig_restarts(void);
struct lnode *proto_list(void);
struct proto *proto_find_by_name(const char *name);
void proto_cmd_disable(struct proto *p, const char *msg);
void proto_cmd_enable(struct proto *p);
void proto_cmd_restart(struct proto *p, const char *msg);
#define PROTO_RELOAD_IN 1
#define PROTO_RELOAD_OUT 2
/* 1 reloading, 0 not up (nothing to reload), -1 cannot reload in. */
int proto_cmd_reload(struct proto *p, int dir);
/* Are all protocols down (for shutdown)? */
int protos_all_down(void);
/* No protocol is on its way down (stopping, restarting): what `configure`
 * waits for, as BIRD's config obstacles. Starting ones do not count: the
 * range protocol of dynamic BGP stays in Start for good. */
int protos_all_settled(void);
/* Send ev to the main loop once protos_all_settled() holds, at once if it
 * does now (the configure requests, nest/reconf_ctl.c). One waiter; NULL
 * forgets it. */
void protos_wait_settled(struct event *ev);
/* Protocols that exist to announce (class->announced) have done so; how
 * many exist is put in *count. Main loop. */
int protos_all_announced(uint *count);
void protos_shutdown(void);
void protos_dump(void);

/* Protocol loop. The channels follow the state as in BIRD 2: up brings
 * them up (but the disabled ones), up -> start pauses them (CS_START: no
 * export, the imported routes stay; a BGP session in graceful restart),
 * down flushes them. */
void proto_notify_state(struct proto *p, enum proto_state s);
/* Protocol loop: the protocol ended its run and began a new one by itself,
 * without going down (BIRD 2's BGP restarts after an error before its
 * session is up): `show protocols` shows it as a new Since. */
void proto_notify_restart(struct proto *p);
void proto_set_info(struct proto *p, const char *fmt, ...);
/* Main loop: p's copies of routes left table t: tell the others
 * (copies_gone). */
void proto_copies_gone(const struct proto *p, struct rtable *t);
struct channel *proto_add_channel(struct proto *p, struct channel_config *cc);
/* The channel's new config (protocol loop). Returns 1 when the import
 * filter or the preference changed and the routes must be imported
 * again, -1 when the channel cannot change in place (the protocol
 * restarts); a changed export filter refeeds right here. soft (`configure soft`): neither, the
 * new filters apply to the routes that change from now on. */
int channel_reconfigure(struct channel *c, struct channel_config *cc, int soft);
struct channel *proto_find_channel(struct proto *p, uint net_type);
/* Import a route (attrs interned by the caller, reference kept by caller)
 * or withdraw (attrs NULL). Applies the import policy and counts. */
void chan_import(struct channel *c, const net_addr *n, struct rte_src *src, struct ea_list *attrs);
/* chan_import of n routes with the same attributes (an UPDATE's NLRI),
 * nets[i] from srcs[i]: the table writes go in batches (rt_update_batch). */
void chan_import_batch(struct channel *c, const net_addr *nets, struct rte_src *const *srcs, uint n,
                       struct ea_list *attrs);
/* The import policy and the table write, without the import table. */
void chan_import_policy(struct channel *c, const net_addr *n, struct rte_src *src, struct ea_list *attrs);
/* The same for k <= CHAN_BATCH routes, all updates or all withdrawals
 * (im[i].attrs set or not): one table batch (rt_update_batch) unless a
 * limit is near. im[] is scratch after. */
#define CHAN_BATCH 64
void chan_import_policy_batch(struct channel *c, struct rt_import *im, uint k);
/* Import the channel's routes again through its current import policy
 * (nest/channel_reload.c). From its import table when it has one, in
 * steps; else through the class's reload_routes (the protocol resends).
 * Returns 0 when neither can. Proto loop. */
int chan_reload_in(struct channel *c);
/* The same for the nets within some prefixes only (IP prefixes of the
 * channel's family, at most CHAN_RELOAD_ONLY_MAX); from the import table,
 * else as chan_reload_in(). A reload under way starts over, for the union. */
#define CHAN_RELOAD_ONLY_MAX 16
int chan_reload_in_nets(struct channel *c, const net_addr *nets, uint count);
/* Forget a reload from the import table under way (the channel goes down). */
void chan_reload_stop(struct channel *c);
/* `rpki reload`: follow the ROA/ASPA tables the channel's filters read, and
 * reload or refeed it after they changed (nest/channel_roa.c). Proto loop:
 * subscribe when the channel goes up or its filters change, unsubscribe
 * when it leaves up. */
void chan_roa_subscribe(struct channel *c);
void chan_roa_unsubscribe(struct channel *c);
/* The same after a reconfiguration, if up: a table both configs read keeps
 * its subscription (its place in the journal, a reload waiting to settle). */
void chan_roa_resubscribe(struct channel *c);
/* Withdraw everything the channel imported (the peer is gone). */
void chan_flush_imports(struct channel *c);
/* The protocol goes on, but what the channel imported is gone (a BGP
 * session ended without graceful restart; BIRD 2 restarts the protocol
 * there): no more export, the routes go in chunks (CS_FLUSHING), then the
 * channel is down, its statistics cleared. Up again at any time. */
void chan_flush_down(struct channel *c);
/* Route limits (nest/channel_limit.c). */
void chan_limit_init(struct proto *p);
int chan_limit_allow(struct channel *c, const struct channel_limit *l, int *hit, u32 count, const char *dir);
/* Would a new route of src for n go over c's receive or import limit (a
 * route the channel has already may always change)? Applies the limit's
 * action; 1: drop the route. filtered: it is kept filtered (receive limit
 * only). Protocol loop. */
int chan_limits_refuse(struct channel *c, const net_addr *n, struct rte_src *src, int filtered);
/* What writes into a channel's table did to its import counters, added up
 * over a batch (chan_tally: one rt_update result; update: an announcement;
 * filtered: the import filter rejected it) and added at once. */
struct chan_tally {
  s32 routes, filt;
  u32 upd_acc, upd_ign, wd_acc, wd_ign;
};
void chan_tally(struct chan_tally *t, uint r, int update, int filtered);
void chan_tally_add(struct channel *c, const struct chan_tally *t);
/* `show protocols all`: a limit's two lines (none without a limit). */
void channel_render_limit(struct cli *c, const char *label, const struct channel_limit *l, const int *hit);

/* Refresh cycle (nest/channel_refresh.c), protocol loop. begin: every route
 * the channel has now becomes stale; routes imported again are fresh. end:
 * the stale ones are withdrawn in chunks (the loop stays responsive).
 * modify_stale: replace every stale route by hook's result (NULL
 * withdraws), in chunks; the results stay stale. stop: forget the cycle
 * (the channel is flushed anyway). */
void chan_refresh_begin(struct channel *c);
void chan_refresh_end(struct channel *c);
void chan_refresh_modify_stale(struct channel *c, struct ea_list *(*hook)(struct channel *, const struct rte *));
void chan_refresh_stop(struct channel *c);
/* Is r (a route of c) stale? Any loop, inside rcu_read_lock(). */
static inline int chan_rte_stale(struct channel *c, const struct rte *r)
{
  return rte_gen_older(r, uatomic_read(&c->refresh.gen));
}

/* The number routes of c carry in t (their `sender`); 0 for no channel. */
static inline u16 chan_sender_id(const struct channel *c, const struct rtable *t)
{
  return !c ? 0 : t == c->in_table ? c->in_sender_id : c->sender_id;
}

/* Did route r of c's table come in through c? */
static inline int chan_sent(const struct channel *c, const struct rte *r)
{
  return r->sender && r->sender == c->sender_id;
}

/* Main loop: set p's debug mask (the `debug` command); with net_type,
 * that channel's instead. */
void proto_debug_set(struct proto *p, u32 mask);
void proto_channel_debug_set(struct proto *p, uint net_type, u32 mask);
/* Atomic: bumped after any protocol's debug mask changed, for those who
 * trace for others (BGP's update groups) and look again only then. */
extern u32 proto_debug_gen;

/* Route traces (nest/chan_trace.c): is the protocol's `debug` flag on? */
static inline int chan_debug(const struct channel *c, u32 flag)
{
  return (uatomic_read(&c->proto->debug) | uatomic_read(&c->proto->chan_debug[c->net_type])) & flag;
}
void chan_trace(const struct channel *c, char dir, const char *msg, const net_addr *n, const struct rte_src *src,
                const struct ea_list *a);
/* The same line for a channel that someone else exports for (a BGP
 * session in an update group). */
void chan_trace_as(const char *proto, const char *chan, char dir, const char *msg, const net_addr *n,
                   const struct rte_src *src, const struct ea_list *a);

/* Export map (nest/channel_export_map.c): bit per route id, exported or
 * not. Written in the channel's loop; chan_exported_route() may run in any
 * loop inside rcu_read_lock(). */
struct chan_export_map;
int chan_exp_bit(const struct channel *c, u32 id);
void chan_exp_set(struct channel *c, u32 id, int on);
void chan_exp_clear(struct channel *c);
void chan_exp_free(struct channel *c);
/* The feed's rejected routes (channel.feed_rejected), in the channel's
 * loop: set one; take one (whether it was set; clears it); drop them all. */
void chan_feed_rejected_set(struct channel *c, u32 id);
int chan_feed_rejected_take(struct channel *c, u32 id);
void chan_feed_rejected_drop(struct channel *c);
/* Did the channel export route r (of its table)? Through export_via:
 * what that channel exported, but for the routes that came in through c
 * (a group sends a route to every member but the one it came from). */
int chan_route_exported(struct channel *c, const struct rte *r);
/* The route of net n the channel exported, NULL: none. Channel's loop,
 * inside rcu_read_lock(). */
struct rte *chan_net_exported(const struct channel *c, struct net *n);
/* The same, but neither a nor b (either may be NULL), and of source src
 * only (NULL: any). */
struct rte *chan_net_exported_but(const struct channel *c, struct net *n, const struct rte *a, const struct rte *b,
                                  const struct rte_src *src);
/* A copy of c's map, for another channel to adopt (any loop: the copy is
 * what c's loop had stored before, bits set since may be missing);
 * adopt replaces c's map by it (c's loop) and returns its bits set;
 * discard frees a copy nobody adopted. */
struct chan_export_map *chan_exp_copy(const struct channel *c);
u32 chan_exp_adopt(struct channel *c, struct chan_export_map *m);
/* Set in c's map every bit a copy no channel holds has set (c's loop);
 * returns how many were not set before. */
u32 chan_exp_merge(struct channel *c, const struct chan_export_map *m);
void chan_exp_discard(struct chan_export_map *m);
/* A copy's bits: one of them, how many are set. */
int chan_exp_map_bit(const struct chan_export_map *m, u32 id);
/* Clear a bit of a copy no channel holds yet (its owner's loop only). */
void chan_exp_map_drop(struct chan_export_map *m, u32 id);
u32 chan_exp_count(const struct chan_export_map *m);

/* Pipes, and BGP with ADD-PATH transmit: every route of a net on its own,
 * not only the best. */
static inline int chan_exports_every_route(struct channel *c)
{
  return c->proto->class->export_any || c->export_all_paths;
}

/* The channel's export (nest/channel_export.c), proto loop:
 * chan_exports: whether it exports at all (a filter other than none, a
 * protocol that takes routes, not handed to another reader);
 * chan_export_start: attach its reader at the journal's end and feed
 * the table; chan_export_stop: detach, forgetting what was exported. */
int chan_exports(struct channel *c);
void chan_export_start(struct channel *c);
void chan_export_stop(struct channel *c);

/* A laggard export reader (nest/channel_catchup.c); proto loop, inside
 * rcu_read_lock(). chan_catch_up: the reader is flagged: skip the journal
 * to its end remembering exported routes that went away (withdrawing at
 * once those whose nets hold nothing to replace them, for a protocol
 * without export_busy), then start a feed; 0 when it yielded before the
 * end. chan_catch_up_finish: after
 * that feed (c->catchup set), withdraw what it did not replace; 0 when
 * it paused (busy, budget; busy NULL: all at once). chan_catch_up_drop:
 * forget all that (the receiver's state is reset anyway). */
int chan_catch_up(struct channel *c);
int chan_catch_up_finish(struct channel *c, int (*busy)(struct proto *, struct channel *));
void chan_catch_up_drop(struct channel *c);
/* A channel whose export state another takes over (chan_export_takeover)
 * hands on the withdrawals its catch-up still owes: the map it hands on
 * no longer holds those routes, and the journal past the pin no longer
 * names them. chan_catch_up_owed copies them (NULL: none owed), in c's
 * loop; the copy goes to chan_export_takeover, or chan_catch_up_discard
 * in any loop. */
struct chan_catchup *chan_catch_up_owed(struct channel *c);
void chan_catch_up_discard(struct chan_catchup *owed);
/* c owes them now, after its next feed (proto loop). */
void chan_catch_up_adopt(struct channel *c, struct chan_catchup *owed);
/* The end of an export pass: the class's export_flush, if any. */
void chan_export_flush(struct channel *c);
/* c's protocol wrote routes into c's table through c (a pipe's copies),
 * which c, exporting every route, rejects unread: its reader passes them
 * now if it is where they begin, counted as its pass would, so that the
 * table's journal does not keep them until c's next pass (a pipe busy the
 * other way). In c's loop, outside c's export pass. */
void chan_export_pass_own(struct channel *c);

/* Reload exports (refeed). */
void chan_refeed(struct channel *c);
/* The same for the nets within some prefixes only (at most
 * CHAN_RELOAD_ONLY_MAX). A partial refeed under way starts over for the
 * union; a whole one, from the start. */
void chan_refeed_nets(struct channel *c, const net_addr *nets, uint count);
/* Add nets[0..count) to the prefix set *set of *have (malloc'd; a partial
 * reload's or refeed's). 0 when the union would exceed
 * CHAN_RELOAD_ONLY_MAX: the caller does everything instead. */
int chan_nets_add(net_addr **set, uint *have, const net_addr *nets, uint count);
void chan_nets_clear(net_addr **set, uint *have);
/* A feed of every net from the first (catch-up, refeed), without waking the
 * loop. Proto loop. */
void chan_feed_all(struct channel *c);
/* Forget the export state and feed everything again. */
void chan_export_reset(struct channel *c);
/* A BGP update group hands a member's export back to the member's
 * channel (bgp_group.c): the group's loop pins the journal where its own
 * reader is and copies its export map, so that c exports from exactly
 * the state the group's exports were in, and the withdrawals its
 * catch-up owes (chan_catch_up_owed); then c's loop takes all that over
 * here and feeds everything again through c's own policy, which
 * withdraws what that policy now rejects, and after the feed what is
 * owed. Without refeed (`configure soft`: the receiver has what the map
 * says) it reads on from the pin, and what is owed goes first. */
void chan_export_takeover(struct channel *c, struct rt_reader *pin, struct chan_export_map *map,
                          struct chan_catchup *owed, int refeed);
/* own 0: the channel stops exporting (its protocol's peer gets the table
 * by other means, a BGP update group) and forgets what it exported; 1:
 * it exports again, from a full feed when up. Before channel_up() too.
 * Proto loop. */
void chan_export_own(struct channel *c, int own);
/* Read the journal up to seq (the next item to read, as rt_reader.seq)
 * and no further until chan_export_release(): a BGP session joins an
 * update group at the group's journal position (bgp_group.c). A feed or
 * a catch-up still runs. Proto loop. */
void chan_export_hold(struct channel *c, u64 seq);
void chan_export_release(struct channel *c);
/* Does c export by reading the journal (attached, no feed, no catch-up,
 * not a laggard), so that what it exported is exactly the table as of its
 * reader's position? Not until the reader passed the journal's end as of
 * the last feed's end either: that feed sent the table as it was then,
 * and the changes between the reader and there are old news to c (a BGP
 * update group's member joining at that position would never get them).
 * The export flush at the end of each export run is where it may become
 * true. Proto loop. */
int chan_export_steady(struct channel *c);
/* The export policy (the class's preexport, the export filter) on route r
 * of c's table, counting nothing: 0 rejected, 1 accepted as it is, 2
 * accepted with the attributes in *out (a reference for the caller).
 * Proto loop. */
int chan_export_policy(struct channel *c, const net_addr *n, const struct rte *r, struct ea_list **out);
/* The protocol found it cannot take the route of id (a pipe's loop): it
 * did not go out, so neither may its withdrawal or replacement later;
 * counted as rejected. Proto loop, in the export pass that gave it. */
void chan_export_decline(struct channel *c, u32 id);
/* Route old of net n, which c exported, is gone: withdraw it as an export
 * pass would (map, counters, the class's rt_notify). Proto loop, inside
 * rcu_read_lock(). */
void chan_export_withdraw(struct channel *c, struct net *n, struct rte *old);

/* A protocol that is no configured instance (a BGP update group) drives
 * its channel itself: new and free in the main loop, up (attach the
 * export reader, feed) and pause (stop exporting) in its own loop. */
struct channel *channel_new(struct proto *p, struct channel_config *cc);
void channel_free(struct channel *c);
void channel_up(struct channel *c);
void channel_pause(struct channel *c);

/* RCU status read for the CLI (inside rcu_read_lock()). */
const struct proto_status *proto_status(struct proto *p);

#endif
