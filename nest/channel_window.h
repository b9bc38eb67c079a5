/*
 * DOC: Coalescing: an export channel's journal read in windows.
 *
 * A channel reads the journal in windows of what is already published,
 * up to CHAN_WINDOW items, looks at each window before reading it, and
 * exports each net (each route source of a net, for a channel exporting
 * every route) that changed there once, at its last change: from the
 * route before the window's first change to the one after the last. A
 * net whose best route came back to the one it had exports nothing. The
 * export pass (nest/channel_export.c) stops only between windows, so nothing of
 * one (the route a net had before it) is kept past a stop. A reader that
 * keeps up finds a few items at a time; one that slept (`export settle
 * time`, a hold, a busy peer) finds its backlog, and coalesces a net's
 * changes up to CHAN_WINDOW items apart: a thousand routes' flap, gone
 * and back, exports each route once.
 *
 * Not while anything relies on seeing each item: a feed's marks of what
 * it sent ahead of the journal, `secondary` (which looks at the chain,
 * not the item's routes). A run of items of the channel's own sender (a
 * pipe's copies, read back) is a window read one by one: it costs no
 * route loads (chan_export_own_item), and nothing is coalesced across
 * it. So is a window whose nets change once each, the usual case: with
 * every route exported, its routes are not loaded for their sources.
 *
 * Owner: the channel's loop, one window at a time of an export pass.
 */
#ifndef NEST_CHANNEL_WINDOW_H
#define NEST_CHANNEL_WINDOW_H

#include "nest/proto.h"

/* A pass stops only between windows, so this bounds how long it may go
 * without asking the protocol's export_busy() or the loop's budget: a
 * thousand items is some milliseconds of a pipe's filters. 38 KiB on the
 * loop's stack. */
#define CHAN_WINDOW 1024
#define CHAN_WINDOW_HASH (2 * CHAN_WINDOW)   /* the most hash slots, a power of two */

struct chan_window {
  uint left;                          /* items of the window yet to read */
  uint pos;                           /* the window's item read next */
  int coalesce;                       /* 0: its items are read as they come */
  uint hmask;                         /* the hash's slots in use - 1 */
  const struct rt_journal_item *items[CHAN_WINDOW];
  u16 key_of[CHAN_WINDOW];            /* item -> its key's entry; NONE: read as it comes */
  struct {
    struct net *net;
    u32 src_ix;                       /* exporting every route: the routes' source */
    u16 last;                         /* the item of its last change */
    struct rte *first_old;            /* the route before its first change */
  } keys[CHAN_WINDOW];
  u16 hash[CHAN_WINDOW_HASH];         /* entry + 1, 0: free */
};

/* The next window of c's reader (held, inside rcu_read_lock()): a single
 * item where the channel does not coalesce now, else what is published
 * of the next CHAN_WINDOW items, up to a hold's end (export_until). any:
 * the channel exports every route. */
void chan_window_open(struct channel *c, struct chan_window *w, int any);

/* it, the item the reader gave next, in a coalescing window: -1 export
 * it as it comes; 0 nothing (not its net's last change, or the net is
 * back where it was); 1 export *new in place of *old. */
int chan_window_take(struct chan_window *w, const struct rt_journal_item *it, int any, struct rte **new,
                     struct rte **old);

#endif
