/*
 * DOC: The pipe protocol: routes between two tables.
 */
#ifndef PROTO_PIPE_PIPE_H
#define PROTO_PIPE_PIPE_H

#include "nest/proto.h"
#include "nest/rt.h"
#include "conf/cf_context.h"
#include "lib/log.h"

/*
 * Two channels: `pri` on the primary table (`table`) and `sec` on the peer
 * table (`peer table`). Each side's export policy decides what crosses:
 * pri's out filter is the pipe's `export` (primary -> peer), sec's out
 * filter its `import` (peer -> primary).
 */
struct pipe_config {
  struct proto_config c;
  struct rtable_config *peer;
  struct channel_config *pri, *sec;   /* set by postconfig */
};

struct pipe_proto {
  struct proto p;
  struct channel *pri, *sec;    /* owner: the pipe's loop */
  struct log_rate rl;
  /* Copies declined because another pipe's were there ([0]: into sec's
   * table, [1]: into pri's; the pipe's loop), offered again by a refeed
   * when copies leave the table (reoffer_ev, sent by the main loop) */
  int declined[2];
  struct event reoffer_ev;
  /* Copies of routes still in their table left the other table ([dir] as
   * q[]; atomic): the main loop tells the other pipes there (gone_ev) */
  u32 gone[2];
  struct event gone_ev;
  /* Each direction's hold ([dir] as q[]; the pipe's loop): pipe_export_busy */
  struct rt_hold hold[2];
};

extern const struct proto_class proto_pipe;

static inline struct pipe_config *pipe_cfg(struct cf_context *cx) { return (struct pipe_config *) cx->this_proto; }
/* Grammar helpers: the primary channel's policies before postconfig. */
struct channel_config *pipe_main_channel(struct cf_context *cx);
/* pipe_show.c: the channel block of `show protocols all` (show_channels). */
void pipe_show_channels(struct proto *pp, struct cli *c);

#endif
