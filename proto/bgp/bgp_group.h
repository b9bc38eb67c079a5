/*
 * DOC: BGP update groups (doc/update-groups.md).
 *
 * Sessions whose exports are equal by construction (the same table and
 * export filter, the same export profile and encoding, no ADD-PATH, no
 * export table or limit, no `secondary`) share one export: a group reads
 * the table's journal once, runs the export filter and the BGP export
 * rules once, packs UPDATEs once (bgp_gout.h) into a log every member
 * reads from its own loop (bgp_txlog.h).
 *
 * Who owns what:
 *  - the main loop keeps the registry, makes a group (its loop, its
 *    hidden channel on the table, a reference on the config its filter
 *    lives in) and takes it apart when its last member has left;
 *  - the group's loop does the export, joins and feeds members, and
 *    packs UPDATEs;
 *  - a member's loop writes the log's messages for it to its socket and
 *    leaves on its own: session down, or a reconfigure that would make
 *    its export differ (it then exports alone, as a session out of any
 *    group does); a route refresh or `reload out` has the group feed it
 *    again;
 *  - the group lets a member go that falls too far behind the log's end
 *    (a peer that reads slowly or not at all): the log must neither grow
 *    nor wait for it.
 *
 * A member's state machine (struct bgp_gmember.state, bgp_group_int.h):
 * PENDING from bgp_group_join() until the group took it in (JOINED) or
 * the member gave up first (LEAVING); JOINED -> HANDOVER when it goes to
 * export alone, until it has sent the log up to the hand-over point (or
 * passed over it, when let go for lagging). A member only touches its log
 * cursor once JOINED.
 */
#ifndef PROTO_BGP_BGP_GROUP_H
#define PROTO_BGP_BGP_GROUP_H

struct bgp_proto;
struct bgp_channel;

/* Session up, before the channel comes up: export bc through a group
 * (1) or alone (0, nothing changes). Member loop. */
int bgp_group_join(struct bgp_proto *p, struct bgp_channel *bc);
/* Session down or protocol stop: leave the group, if in one; the channel
 * stays out of the journal until the next session decides. */
void bgp_group_leave(struct bgp_proto *p, struct bgp_channel *bc);
/* The export of bc changed (filter, next hop, ...; the channel has its
 * new config, cfg is where the new export filter lives): where the peer
 * takes enhanced route refresh (RFC 7313) and has had its End-of-RIB,
 * leave the group or the export alone, send BoRR and join the group of
 * the new settings, whose feed ends with EoRR: the peer drops what was
 * not sent again. 1 done, 0 not possible (bgp_group_solo, or a refeed
 * of its own). Member loop. */
int bgp_group_regroup(struct bgp_proto *p, struct bgp_channel *bc, struct config *cfg);
/* Leave the group, if in one, and export alone from a full feed; with
 * bc->quiet_move (a `configure` changed its export, the peer takes no
 * enhanced route refresh), once handed over, join the group of the new
 * settings at once instead, with what the peer holds: that group's feed
 * withdraws what the new settings do not send. Member loop. */
void bgp_group_solo(struct bgp_proto *p, struct bgp_channel *bc);
/* `configure soft` changed bc's export settings: the peer keeps what it
 * has, the new settings apply to what changes from now on. A member
 * leaves its group for its own export without a feed (where the peer has
 * all the group exported to it; else with one); the channel stays out of
 * any group until a feed has put the peer in line with its settings
 * (`reload out`, a route refresh), as a group's class would hold it.
 * Member loop. */
void bgp_group_soft_change(struct bgp_proto *p, struct bgp_channel *bc);
/* The peer asked for everything again (route refresh): in a group, 1 and
 * the group resends it, followed by EoRR when eorr; 0 when not grouped. */
int bgp_group_refeed(struct bgp_proto *p, struct bgp_channel *bc, int eorr);
/* `reload out` of a member's channel: the group resends it all. */
void bgp_group_reload_out(struct channel *c);
/* Write what the log holds for bc until the socket's queue is full.
 * -1: the connection went away. Member loop, from the tx hook. */
int bgp_group_tx(struct bgp_proto *p, struct bgp_channel *bc);
/* A member the group let go for lagging too far behind passes over the
 * rest of its log instead of writing it, whatever its socket holds: the
 * withdrawals there are queued for its own export (the peer may hold
 * those routes), which then feeds it everything the table exports. Member
 * loop, from the tx hook. */
void bgp_group_skip(struct bgp_proto *p, struct bgp_channel *bc);
/* Is bc exporting through a group (joined or joining; not while it
 * joins at a marker, when it still exports alone)? */
int bgp_group_member(const struct bgp_channel *bc);
/* bc exports alone (a group handed it back: its settings changed
 * without enhanced route refresh, or it was let go for lagging) and its
 * own export has sent everything: join the group of its settings at a
 * marker, with nothing resent. The group, once its reader is where bc's
 * was, packs and hands over its journal position and the log from there;
 * bc's channel, still exporting alone, exports up to that position,
 * sends what it has, and reads the group's log from then on (or, gone
 * past it meanwhile, tries again later). Nothing when it cannot be in a
 * group. Member loop. */
void bgp_group_rejoin(struct bgp_proto *p, struct bgp_channel *bc);
/* From the tx hook, while bc joins at a marker: go on to the marker, or
 * over to the group's log once there; give up for now when the channel
 * went past the marker or its own export restarted (a refeed, a
 * catch-up). Member loop. */
void bgp_group_marker(struct bgp_proto *p, struct bgp_channel *bc);

#endif
