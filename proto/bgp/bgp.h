/*
 * DOC: The BGP protocol: configuration, instance and session state.
 *
 * One instance per `protocol bgp`, running in its own loop. It owns at
 * most two connections (outgoing and incoming, RFC 4271 collision
 * detection picks one) and the export state of its channels. The wire
 * format lives in bgp_wire.h (pure codec); this header is the glue to
 * the nest: channels, tables, the CLI.
 *
 * Ownership: everything in struct bgp_proto and struct bgp_conn belongs to
 * the instance's loop, except `show` (an RCU-published snapshot for the
 * CLI) and `peer` (immutable while routes of the session exist; read by
 * the best-path comparison from any loop).
 */
#ifndef PROTO_BGP_BGP_H
#define PROTO_BGP_BGP_H

#include "nest/proto.h"
#include "nest/gr_recovery.h"
#include "conf/cf_context.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/txq.h"
#include "proto/bgp/bgp_wire.h"
#include "proto/bgp/bgp_rules.h"

#define BGP_PT_UNSPEC 0
#define BGP_PT_INTERNAL 1
#define BGP_PT_EXTERNAL 2

#define BGP_GR_OFF 0
#define BGP_GR_AWARE 1
#define BGP_GR_ABLE 2

#define BGP_GW_UNSET 0
#define BGP_GW_DIRECT 1
#define BGP_GW_RECURSIVE 2

#define BGP_NH_DEFAULT 0
#define BGP_NH_SELF 1
#define BGP_NH_KEEP 2

struct bgp_channel_config {
  struct channel_config c;
  int next_hop_mode;            /* BGP_NH_* */
  ip_addr next_hop_addr;
  u8 add_path;                  /* BGP_ADD_PATH_RX | TX */
  /* BIRD's `gateway direct|recursive`; unset: direct for single-hop
   * sessions, recursive for multihop ones (postconfig) */
  int gw_mode;                  /* BGP_GW_* */
  int ext_next_hop;             /* RFC 8950: IPv4 routes with IPv6 next hops (ipv4 channel) */
  int mandatory;                /* no session unless the neighbor takes the family too */
  /* `igp table`: where recursive next hops resolve, per address family
   * of the next hop; unset: the channel's table (postconfig) */
  struct rtable_config *igp_table4, *igp_table6;
  int aigp, aigp_set;           /* RFC 7311; unset: on for iBGP (postconfig) */
  int aigp_originate;
  /* The family in our GR / LLGR capability and its stale time; unset:
   * from the protocol's options (postconfig), as BIRD 2 */
  int gr_able, gr_able_set;
  int llgr_able, llgr_able_set;
  u32 llgr_time, llgr_time_set;
};

struct bgp_config {
  struct proto_config c;
  /* From here to `password`: plain values, compared as one block by
   * bgp_reconfigure(). As BIRD 2, a change in any of them restarts the
   * protocol. Keep pointers out of the block; configs are zeroed, so the
   * padding compares equal. */
  ip_addr local_ip;             /* `local`, or `source address` (as BIRD) */
  uint local_port;
  u32 local_as;
  ip_addr remote_ip;
  uint remote_port;
  u32 remote_as;
  net_addr remote_range;        /* `neighbor range`: type 0 without (bgp_dynamic.c) */
  int peer_type;                /* BGP_PT_* from `neighbor ... internal|external` */
  int passive;
  int multihop;                 /* -1 unset, 0 direct, N hops */
  int ttl_security;
  int strict_bind;
  u32 hold_time, keepalive_time, connect_retry_time, connect_delay_time;
  u32 error_wait_min, error_wait_max, error_forget_time, startup_hold_time;
  int rs_client, rr_client;
  u32 rr_cluster_id;
  u32 confederation;            /* confederation ASN (RFC 5065), 0 without */
  int confederation_member;
  int local_role;               /* enum bgp_role, BGP_ROLE_NONE unset (RFC 9234) */
  int require_roles;
  int enable_refresh, enable_as4, enable_ext_msg;
  int capabilities;             /* -1 unset (on): BIRD 2 restarts for an explicit `on` too */
  int gr_mode;                  /* BGP_GR_* */
  u32 gr_time;
  int llgr_mode;                /* BGP_GR_*; -1 unset: aware with GR, else off */
  u32 llgr_time;                /* long lived stale time */
  int allow_local_as;
  int allow_as_sets;
  int enforce_first_as;
  u32 default_local_pref, default_med;
  int interpret_communities;
  int deterministic_med, prefer_older, med_metric;
  /* igp_metric, path_metric: compare the IGP metrics of recursive next
   * hops, the AS path lengths in best path (bgp_rte_better) */
  int igp_metric, path_metric;
  /* Compared by value: a change restarts the protocol too */
  const char *password;
  const char *iface;
  const char *hostname;
  /* Names of spawned instances: not compared on reconfigure, they only
   * name the next spawns */
  const char *dynamic_name;
  uint dynamic_name_digits;
};

/* The protocol of a neighbor range, which only spawns instances; they
 * have the range and their own neighbor address. */
static inline int bgp_cf_is_range(const struct bgp_config *cf)
{
  return cf->remote_range.type && ipa_zero(cf->remote_ip);
}

/* The range protocol waits for connections, its instances are as configured. */
static inline int bgp_cf_passive(const struct bgp_config *cf)
{
  return cf->passive || bgp_cf_is_range(cf);
}

enum bgp_conn_state {
  BS_IDLE = 0, BS_CONNECT, BS_ACTIVE, BS_OPENSENT, BS_OPENCONFIRM, BS_ESTABLISHED, BS_CLOSE,
};

struct bgp_proto;

/* One TCP connection of a session (outgoing or incoming); the instance's
 * loop (p->p.loop) owns it, `show` reads it through struct bgp_show. */
struct bgp_conn {
  struct bgp_proto *p;
  int fd;
  struct loop_fd lfd;
  enum bgp_conn_state state;
  int outgoing;
  /* the start of a message not all read yet (bgp_conn_rx), else NULL */
  u8 *rbuf;
  uint rlen, rsize;
  struct txq tx;
  struct timer hold_timer, keepalive_timer;
  struct rt_hold rx_hold;       /* an import hold: waits for its table */
  struct event rx_wait_ev;      /* the hold is over: read again */
  struct bgp_open_msg remote;
  struct bgp_session_caps caps; /* negotiated at its OPEN; the session's at its KEEPALIVE */
  u32 hold_time, keepalive_time;
  ip_addr local_addr;
  uint local_port, remote_port;
};

/* What `show protocols all` prints; RCU-published by the instance. */
struct bgp_show {
  struct rcu_head rcu;
  enum bgp_conn_state state;
  char last_error[128];
  u32 neighbor_id;
  struct bgp_caps local_caps, remote_caps;
  int have_remote_caps;
  int ibgp, as4;
  ip_addr source_addr;
  uint remote_port;
  btime hold_expires, keepalive_expires;   /* monotonic */
  u32 hold_time, keepalive_time;
  btime connect_expires;       /* connect delay or error wait, 0: none */
  u32 error_wait;               /* seconds; shown while start_state is BS_IDLE */
  enum bgp_conn_state start_state;
  int outgoing;
  int gr_active;                /* "Neighbor graceful restart active" */
  btime gr_restart_expires;     /* 0: not running */
  u8 gr_state[BGP_AF_MAX];      /* enum bgp_gr_state */
  btime gr_stale_expires[BGP_AF_MAX];
};

struct bgp_prefix;
struct bgp_bucket {
  struct hash_node hn;          /* by attribute list pointer */
  struct ea_list *attrs;        /* NULL: the withdraw bucket */
  struct lnode prefixes;        /* struct bgp_prefix, pending */
  struct lnode n;               /* buckets with pending prefixes */
};

struct bgp_prefix {
  struct hash_node hn;          /* by net */
  struct lnode bn;              /* in its bucket */
  struct bgp_bucket *bucket;
  u32 path_id;
  net_addr net;                 /* variable length */
};

/* What the attributes a session exports depend on besides the route
 * (bgp_export_attrs): sessions with equal profiles send equal attributes
 * for a route. Compared and hashed as bytes: filled from zero. */
struct bgp_export_profile {
  ip_addr local_addr;           /* next hop self */
  ip_addr next_hop_addr;        /* `next hop address` */
  u32 local_as, public_as, confederation, default_local_pref, rr_cluster_id;
  u8 af, local_role, ibgp, interior, rs_client, next_hop_mode, ext_next_hop_v4, aigp, aigp_originate;
};

/* An export profile interned (bgp_export_profile_get): sessions with
 * equal profiles hold the same one, and its number is never reused. */
struct bgp_xprof {
  struct hash_node hn;          /* in the registry, under its lock */
  u32 refs;                     /* under the registry's lock */
  u64 id;                       /* immutable once interned, read by any loop */
  struct bgp_export_profile prof;   /* immutable once interned */
};

/* 24 bytes after src, so that a memo entry is one cache line */
struct bgp_export_key {
  const struct ea_list *src;    /* the route's attributes (after the export filter) */
  u64 gen;                      /* bgp_peer_info.gen of the source session, 0: not BGP */
  u64 prof_id;                  /* bgp_xprof.id of the receiving session's profile */
  u32 med_fresh;                /* the export filter set the MED (bgp_med_fresh) */
  u32 pad;                      /* 0: the memo compares bytes */
};

/* Graceful restart of the neighbor, per family (RFC 4724, RFC 9494). */
enum bgp_gr_state { BGP_GRS_NONE = 0, BGP_GRS_ACTIVE, BGP_GRS_LLGR };

struct bgp_gmember;

struct bgp_channel {
  struct channel *c;
  enum bgp_gr_state gr_state;   /* the neighbor's routes are kept stale */
  struct timer stale_timer;     /* LLGR: long lived stale time */
  int rr_active;                /* enhanced route refresh: BoRR seen, no EoRR yet */
  int eorr_pending;             /* send EoRR once the refeed is sent */
  enum bgp_af af;
  struct bgp_channel_config *cf;
  struct bgp_export_profile xprof;  /* proto loop: the last one exported with, */
  struct bgp_xprof *xprof_ref;      /* and it interned (NULL: none yet) */
  struct hash_table prefixes;   /* pending struct bgp_prefix by net */
  struct hash_table buckets;    /* struct bgp_bucket by attrs */
  struct bgp_bucket *last_bucket;  /* proto loop: the one bgp_bucket_get() returned last, or NULL */
  struct bgp_bucket withdraw;
  struct lnode ready;           /* buckets with something to send */
  int eor_sent, eor_received;
  int eor_out;                  /* End-of-RIB has gone to the socket, ours or
                                   the group's: the peer's initial load is
                                   over, so BoRR means a refresh to it */
  slab *prefix_slab;
  uint pending;                 /* prefixes waiting in buckets */
  int export_paused;            /* export_busy said so; resume when drained */
  /* UPDATEs sent before the buckets (bgp_tx_early_reserve), one after
   * the other: [early_sent, early_len) waits. Proto loop. */
  u8 *early;
  size_t early_len, early_cap, early_sent;
  struct bgp_gmember *gm;       /* the update group it exports through
                                   (bgp_group.h), NULL: alone */
  int takeover_quiet;           /* proto loop: `configure soft` asked the group
                                   to hand it back without a feed */
  int quiet_move;               /* proto loop: its export changed, the peer takes
                                   no enhanced route refresh: once handed back,
                                   into the group of its new settings at once
                                   (bgp_group.c, gm_move_quietly) */
  int soft_dirty;               /* proto loop: since `configure soft`, the peer
                                   may hold what its settings would not send, */
  u32 soft_seq;                 /* ... until a feed after c->feed_seq was this */
  int rejoin;                   /* proto loop: alone after a group handed it
                                   back; joins again once its export is idle */
  btime rejoin_after;           /* proto loop: not before then */
  btime marker_until;           /* proto loop: joining at a marker, its export
                                   held, gives up waiting then */
  struct timer group_tm;        /* proto loop: runs the tx hook at rejoin_after
                                   and marker_until */
  /* Recursive next hops (bgp_nexthop.c) */
  struct hash_table nh_cache;   /* struct bgp_nh_entry by next hop */
  struct event nh_changed_ev;   /* from the IGP tables' host caches */
  struct event nh_walk_ev;
  struct rt_stale_op nh_op;     /* the walk that applies new resolutions */
  u64 nh_pos;                   /* where it resumes (rcu_hash_walk) */
  int nh_in_table_phase;        /* it walks the import table (after the table) */
  int nh_walking, nh_subscribed;
};

/* One route source per received ADD-PATH path id (owner: instance loop). */
struct bgp_path_src {
  struct hash_node hn;
  u32 path_id;
  struct rte_src *src;
};

/* A run's session identity: bgp_run_info() makes one at each start; the
 * run and its route sources hold it (struct proto_run_info). */
struct bgp_run {
  struct proto_run_info ri;
  struct bgp_peer_info peer;
};

struct bgp_proto {
  struct proto p;
  const struct bgp_config *cf;  /* the config in use (p.pcf) */
  struct bgp_conn out, in;
  struct bgp_conn *conn;        /* the established one */
  struct bgp_peer_info *peer;   /* the run's (struct bgp_run); bgp_rules.h */
  struct bgp_session_caps caps;
  struct bgp_caps local_caps;
  struct bgp_rx_ctx rx;
  struct bgp_tx_ctx tx;
  struct bgp_channel ch[BGP_AF_MAX];
  /* Between sessions, as BIRD 2's start state: BS_IDLE waits the error
   * wait time, BS_ACTIVE the connect delay (or a passive neighbor),
   * BS_CONNECT a connect() that may hang. One timer for the three. */
  struct timer connect_timer;
  int start_state;
  /* BIRD's startup delay: after an error (a NOTIFICATION other than Cease,
   * sent or received) the next attempt waits; 0 none, doubling up to the
   * error wait maximum, forgotten after the error forget time. */
  u32 error_wait;
  btime last_proto_error;       /* monotonic, 0: none */
  int error_pending;            /* the connections closing now end in an error wait */
  char last_error[128];
  struct event tx_ev;
  struct timer tx_settle;       /* sends tx_ev when a few changes waited long enough */
  struct event incoming_ev;
  int incoming_fd;              /* atomic: fd handed over by the listener, -1 none */
  struct bgp_show *show;        /* RCU */
  linpool *rx_mem;
  struct log_rate rl;
  int down_requested;
  struct hash_table path_srcs;  /* ADD-PATH rx: struct bgp_path_src by path id */
  int down_notified;            /* the session ended with a NOTIFICATION: no GR */
  uint gr_active_num;           /* families with gr_state != NONE */
  /* Our own restart (`bird -R`, graceful restart on): the recovery locks we
   * hold (taken by the main loop before start, then the loop's), and
   * whether our exports wait for the end of the recovery. */
  u8 gr_recovery_lock[BGP_AF_MAX];
  int gr_deferred;
  struct gr_waiter gr_waiter;
  struct event gr_recovery_ev;
  struct timer gr_timer;        /* restart time, then stale routes guard */
  struct rtable *igp_locked[4]; /* main loop: IGP tables held for recursive next hops */
  ip_addr listen_addr;          /* main loop: the listener this instance holds */
  uint listen_port;
  /* main loop: the TCP-MD5 key this instance put on that listener */
  ip_addr md5_remote;
  int md5_pxlen;                /* -1: one address */
  int md5_set;
  uint dynamic_seq;             /* main loop: last number of a spawn's name, */
  const struct proto_config *dynamic_seq_cf;  /* counted since this config */
};

extern const struct proto_class proto_bgp;
/* Register the class and its attribute formatter (start-up). */
void bgp_build(void);

static inline struct bgp_config *bgp_cfg(struct cf_context *cx) { return (struct bgp_config *) cx->this_proto; }
static inline struct bgp_channel_config *bgp_chan_cfg(struct cf_context *cx) { return (struct bgp_channel_config *) cx->this_channel; }

/* bgp_conn.c: sessions */
void bgp_conn_init(struct bgp_proto *p, struct bgp_conn *c, int outgoing);
void bgp_start_connect(struct bgp_proto *p);
void bgp_conn_close(struct bgp_conn *c);
void bgp_conn_error(struct bgp_conn *c, const struct bgp_error *e, const char *why);
/* Queue a message; bgp_flush() writes the queue (batches call it once). */
void bgp_send(struct bgp_conn *c, const u8 *msg, uint len);
void bgp_send_now(struct bgp_conn *c, const u8 *msg, uint len);
void bgp_flush(struct bgp_conn *c);
void bgp_incoming_hook(void *data);
void bgp_update_show(struct bgp_proto *p);
const char *bgp_state_name(enum bgp_conn_state s);

/* bgp_rx.c: received UPDATEs and ROUTE-REFRESH */
void bgp_rx_update(struct bgp_conn *c, const u8 *body, uint len);
/* Does a table we import into hold its imports off? Then w waits there
 * (rt_import_wait). */
int bgp_import_pressed(struct bgp_proto *p, struct rt_press_wait *w);
void bgp_session_established(struct bgp_proto *p);
void bgp_session_down(struct bgp_proto *p);
void bgp_path_srcs_free(struct bgp_proto *p);

/* bgp_nexthop.c: gateway modes, recursive next hops */
/* The destination of a received route from its NEXT_HOP; 0, or -1 when
 * it must be treated as withdrawn (direct mode, no neighbor). */
int bgp_nh_rx_fields(struct bgp_proto *p, struct ea_builder *b, struct bgp_channel *bc);
void bgp_nh_lock(struct bgp_proto *p);        /* main loop, init */
void bgp_nh_start(struct bgp_proto *p);       /* instance loop */
void bgp_nh_stop(struct bgp_proto *p);        /* instance loop, shutdown */
void bgp_nh_cleanup(struct bgp_proto *p);     /* main loop, the loop is gone */

/* bgp_tx.c: export */
/* A session stops packing UPDATEs while this much waits in its socket's
 * queue (bgp_group.c too). */
#define BGP_TX_HIGH (128 * 1024)
void bgp_tx_init(struct bgp_proto *p);
void bgp_tx_reset(struct bgp_proto *p);
/* The same for one family: leave its group, drop what waits. */
void bgp_tx_reset_channel(struct bgp_proto *p, struct bgp_channel *bc);
void bgp_tx_cleanup(struct bgp_proto *p);   /* the protocol stops: leave the pending budget */
void bgp_tx_timer_hook(struct timer *t);
void bgp_rt_notify(struct proto *pp, struct channel *c, const net_addr *n, struct rte *new, struct rte *old,
                   const struct ea_list *new_src);
int bgp_export_busy(struct proto *pp, struct channel *c);
void bgp_feed_end(struct channel *c);
void bgp_export_flush(struct proto *pp, struct channel *c);
/* Has bc's own export sent everything it had? */
int bgp_tx_idle(const struct bgp_channel *bc);
void bgp_tx_hook(void *data);
/* Everything again, to a peer whose routes from us are not known (the
 * recovery of our graceful restart is over): the channel forgets what it
 * sent. A member of an update group leaves it, and its own export feeds
 * from the group's state. */
void bgp_refeed(struct bgp_proto *p, enum bgp_af af);
/* Everything again, to a peer that keeps what it has (a ROUTE-REFRESH,
 * RFC 2918; a next hop setting changed by `configure`); a member of a
 * group or a channel not reading refeeds. */
void bgp_resend(struct bgp_proto *p, enum bgp_af af);
/* A withdrawal of n, queued as the channel's own export queues one. */
void bgp_tx_withdraw(struct bgp_proto *p, struct bgp_channel *bc, const net_addr *n);
/* Room for an UPDATE of up to len bytes, sent before anything else of bc
 * (withdrawals a member let go by its group passed over in the log);
 * bgp_tx_early_commit() the bytes written. */
u8 *bgp_tx_early_reserve(struct bgp_channel *bc, uint len);
void bgp_tx_early_commit(struct bgp_channel *bc, uint len);

/* bgp_export_cache.c: the thread's cached make(ctx) for key k (made and
 * kept on a miss); borrowed, valid until the thread's next call. */
struct ea_list *bgp_export_cache_get(const struct bgp_export_key *k, struct ea_list *(*make)(void *ctx), void *ctx);
/* The same with a reference of the caller's own: a hit takes it from the
 * memo entry's stock, without touching the list's use count (a line the
 * thread that drops the reference may have to take back). */
struct ea_list *bgp_export_cache_take(const struct bgp_export_key *k, struct ea_list *(*make)(void *ctx), void *ctx);
/* The interned profile equal to prof, with a reference; any loop. */
struct bgp_xprof *bgp_export_profile_get(const struct bgp_export_profile *prof);
void bgp_export_profile_put(struct bgp_xprof *x);     /* NULL: nothing */

/* bgp_export.c: the export rules and attributes */
int bgp_preexport(struct channel *c, const struct rte *r);
/* The session a route came from, NULL when not from BGP. */
const struct bgp_peer_info *bgp_src_peer(const struct rte *r);
/* Channel bc's export profile as the session is now, interned (the
 * channel holds the reference). Proto loop. */
const struct bgp_xprof *bgp_export_profile_of(const struct bgp_proto *p, struct bgp_channel *bc);
/* What a session of profile x sends for route r (NULL: nothing), through
 * the thread's memo; the result is borrowed for the loop run. src: r's
 * attributes before the export filter (NULL: not known, taken as r's),
 * which tell whether the filter set the MED (bgp_med_fresh). */
struct ea_list *bgp_export_attrs_get(const struct bgp_xprof *x, const struct rte *r, const struct ea_list *src);
/* The same with a reference for the caller (bgp_export_cache_take). */
struct ea_list *bgp_export_attrs_take(const struct bgp_xprof *x, const struct rte *r, const struct ea_list *src);

/* bgp_gr.c: graceful restart helper, long-lived GR, enhanced route refresh */
void bgp_gr_init(struct bgp_proto *p);
void bgp_gr_local_caps(struct bgp_proto *p, struct bgp_caps *k);
/* Can the neighbor restart some family of the session (BIRD's gr_ready)? */
int bgp_gr_ready(const struct bgp_proto *p);
/* Can the neighbor restart long-lived (BIRD's llgr_ready)? */
int bgp_llgr_ready(struct bgp_proto *p);
/* Session down: keep (stale) or flush each family's routes; returns the
 * number of families kept. graceful: no NOTIFICATION, no shutdown. */
uint bgp_gr_session_down(struct bgp_proto *p, int graceful);
void bgp_gr_session_up(struct bgp_proto *p);
void bgp_gr_rx_eor(struct bgp_proto *p, enum bgp_af af);
/* ROUTE-REFRESH of any subtype from the peer. */
void bgp_gr_rx_route_refresh(struct bgp_proto *p, enum bgp_af af, u8 subtype);
/* Send a ROUTE-REFRESH of this subtype (BGP_RR_*) for the family. */
void bgp_send_rr(struct bgp_proto *p, enum bgp_af af, u8 subtype);
void bgp_gr_shutdown(struct bgp_proto *p);
/* Flush a family's routes in chunks (session down without GR). */
void bgp_flush_af(struct bgp_proto *p, enum bgp_af af);
int bgp_llgr_stale(const struct ea_list *a);
void bgp_gr_show_channel(struct proto *pp, struct channel *c, struct cli *cli);
void bgp_show_channel(struct proto *pp, struct channel *c, struct cli *cli);   /* bgp_show.c */
/* Restarting speaker: locks before start (main), waiting (loop), release. */
void bgp_gr_recovery_init(struct bgp_proto *p);
void bgp_gr_recovery_start(struct bgp_proto *p);
void bgp_gr_recovery_cleanup(struct bgp_proto *p);
void bgp_local_caps(struct bgp_proto *p);

/* bgp_dynamic.c: instances spawned by a neighbor range (main loop) */
struct bgp_proto *bgp_dynamic_spawn(struct bgp_proto *range, ip_addr remote);
int bgp_respawn_config(struct proto_config *nc, const struct proto_config *oc);

/* bgp_listen.c: listening sockets (main loop) */
int bgp_listen_open(ip_addr addr, uint port, char *err, size_t errlen);
void bgp_listen_close(ip_addr addr, uint port);
/* TCP-MD5 (RFC 2385) key for a peer (pxlen -1) or a range (its prefix
 * length) on the shared listener, so its connections are accepted;
 * password NULL removes it. */
int bgp_listen_md5(ip_addr addr, uint port, ip_addr remote, int pxlen, const char *password);
/* The same on a socket (bgp_conn.c). */
int bgp_md5_set(int fd, ip_addr remote, int pxlen, const char *password);

/* bgp_show.c */
const char *bgp_err_text(u8 code, u8 subcode);
void bgp_show_info(struct proto *pp, struct cli *c);
void bgp_rte_info(const struct rte *r, char *buf, size_t size);
int bgp_rte_better(const struct rte *a, const struct rte *b);
u64 bgp_rte_group(const struct rte *r);
int bgp_rte_mergable(const struct rte *best, const struct rte *r);
ip_addr bgp_rte_from(const struct rte *r);

#endif
