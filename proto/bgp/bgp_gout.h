/*
 * DOC: What an update group sends: its pending changes, packed into
 * UPDATEs once for all members (doc/update-groups.md).
 *
 * The group's loop reports each change of what the group exports for a
 * net, and who was excluded from it: a route never goes back to the
 * member it was learned from (split horizon). Members are numbered from
 * 1; 0 is "no member" (a route of another protocol or of a session out
 * of the group). A flush turns the changes into messages for the shared
 * log (bgp_txlog.h), each with its audience:
 *
 *  - a new route goes to everyone but the member it came from, and that
 *    member gets a withdrawal if it had the previous route;
 *  - a net that lost its route is withdrawn from everyone but the member
 *    the old route came from.
 *
 * Only the first change of a net since the last flush records what the
 * members had; later ones only replace what they get now. So the group
 * keeps no Adj-RIB-Out, only the nets changed since the last flush.
 *
 * Members whose export filters differ read as export classes (bgp_txlog.h).
 * A change then says what each class gets now and which classes had a
 * route; the flush sends each distinct result once, to the classes that
 * got it, and a withdrawal to those that had a route and get none now.
 * A set that holds every class with members goes without a bitmap.
 *
 * A member that joins late gets the group's current exports on its own
 * or with the others that joined meanwhile (feed items, audience: that
 * member only, or a cohort) interleaved with raw messages for it alone
 * (Begin/End of Route Refresh, End-of-RIB) and cohort definitions, in
 * their order.
 * A flush writes all of those first: each reflects a state no newer than
 * the changes pending beside it, which therefore have to follow.
 *
 * Owner: the group's loop; nothing here is shared.
 */
#ifndef PROTO_BGP_BGP_GOUT_H
#define PROTO_BGP_BGP_GOUT_H

#include "proto/bgp/bgp_wire.h"
#include "proto/bgp/bgp_txlog.h"
#include "lib/resource.h"

struct bgp_gout;

/* tx: the members' common encoding; af: the group's family. */
struct bgp_gout *bgp_gout_new(pool *p, const struct bgp_tx_ctx *tx, enum bgp_af af, struct bgp_txlog *log);
/* Drops what is pending (references included). */
void bgp_gout_free(struct bgp_gout *g);

/* The export classes from now on: ids below count, live the bitmap of
 * those with members (the caller's, read at each flush; words of it:
 * (count + 31) / 32). A count that changes needs nothing pending. One
 * class (id 0) until called. */
void bgp_gout_classes(struct bgp_gout *g, uint count, const u32 *live);

/* What the group exports for n changed, class by class: now[k] for
 * class k (NULL: nothing; the group takes references) learned from
 * member now_src of class src_cls; had: the bitmap of the classes that
 * had a route before this change, learned from member was_src. */
void bgp_gout_change_classes(struct bgp_gout *g, const net_addr *n, struct ea_list *const *now, u32 now_src,
                             u32 src_cls, const u32 *had, u32 was_src);
/* The same with one class: what the group exports for n changed: now (NULL: nothing; the group
 * takes a reference) learned from member now_src. Before this change the
 * members had a route (had) learned from member was_src. */
void bgp_gout_change(struct bgp_gout *g, const net_addr *n, struct ea_list *now, u32 now_src, bool had,
                     u32 was_src);
/* A change of n comes soon: its lookup asked for (only a hint). */
void bgp_gout_ahead(const struct bgp_gout *g, const net_addr *n);
/* Is a change of n waiting for the flush? (A late member's feed leaves
 * such nets to it.) */
bool bgp_gout_changed(const struct bgp_gout *g, const net_addr *n);

/* Announce n with attrs to member only (a late member's feed). A net
 * goes at most once to a member between flushes: the items of a flush are
 * packed by attributes, so a second one could overtake the first. */
void bgp_gout_feed(struct bgp_gout *g, const net_addr *n, struct ea_list *attrs, u32 member);
/* Withdraw n from member only, as a feed item: a member that moved into
 * another class without enhanced route refresh may hold a route its new
 * class does not get (bgp_group_feed.c). */
void bgp_gout_feed_withdraw(struct bgp_gout *g, const net_addr *n, u32 member);
/* The same to the members of a cohort (bgp_txlog.h) but member but (0:
 * none), which its bgp_gout_define() names first, of the classes in set
 * (a bitmap as in bgp_gout_classes(); NULL: all). */
void bgp_gout_feed_cohort(struct bgp_gout *g, const net_addr *n, struct ea_list *attrs, u32 cohort, u32 but,
                          const u32 *set);
/* The same with a result per class (now[k] for class k, NULL: nothing),
 * each distinct one once for the classes that get it. */
void bgp_gout_feed_classes(struct bgp_gout *g, const net_addr *n, struct ea_list *const *now, u32 cohort,
                           u32 but);
/* A message for member only, after its feed items so far. */
void bgp_gout_raw(struct bgp_gout *g, u32 member, const void *msg, uint len);
/* Who is in a cohort, in order with the feed items. */
void bgp_gout_define(struct bgp_gout *g, u32 cohort, const u32 *members, uint count);

/* Changes, feed items and raw messages waiting. A group flushes once
 * this many do (a flush's scratch is sized for it, bgp_gout.c). */
uint bgp_gout_pending(const struct bgp_gout *g);
#define BGP_GOUT_PENDING_MAX 8192
/* Encode everything waiting into the log (not published). Returns the
 * number of messages appended. */
uint bgp_gout_flush(struct bgp_gout *g);

#endif
