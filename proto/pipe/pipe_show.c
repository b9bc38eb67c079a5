/*
 * DOC: `show protocols all` of a pipe.
 *
 * BIRD shows a pipe's two channels as one block, "Channel main", with the
 * peer table, the state and filter of each way, the limits, and statistics
 * put together from both channels.
 */
#include "proto/pipe/pipe.h"
#include "nest/cli.h"
#include "filter/filter.h"

/* BIRD's names for the state of a direction (its export into the pipe).
 * BIRD also says "feed" while the first feed runs; whether a feed runs is
 * the pipe loop's to know (c->feeding), not ours to read from here. */
static const char *
pipe_dir_state(const struct channel *c)
{
  return c && uatomic_read(&c->state) == CS_UP ? "up" : "down";
}

/* `show protocols all`: one block, as BIRD 2. What goes from the primary
 * table to the peer table is exported, the other way imported; each way
 * counts in the export side of the channel it leaves (received, rejected,
 * filtered) and in the import side of the channel it enters (ignored,
 * accepted: pipe_flush). Main loop; the channels' identity and counters
 * are safe to read while the protocol runs. */
void
pipe_show_channels(struct proto *pp, struct cli *c)
{
  const struct pipe_config *cf = (const struct pipe_config *) pp->cf;
  const struct channel *pri = NULL, *sec = NULL;
  if (pp->loop)
    LIST_WALK_ENTRY(ch, &pp->channels, struct channel, n) {
      if (ch->cf == cf->pri)
        pri = ch;
      else if (ch->cf == cf->sec)
        sec = ch;
    }
  cli_printf(c, -1006, "  Channel main");
  cli_printf(c, -1006, "    Table:          %s", cf->pri->table->name);
  cli_printf(c, -1006, "    Peer table:     %s", cf->peer->name);
  cli_printf(c, -1006, "    Import state:   %s", pipe_dir_state(sec));
  cli_printf(c, -1006, "    Export state:   %s", pipe_dir_state(pri));
  cli_printf(c, -1006, "    Import filter:  %s", filter_name(cf->sec->out_filter));
  cli_printf(c, -1006, "    Export filter:  %s", filter_name(cf->pri->out_filter));
  channel_render_limit(c, "Import limit: ", &cf->pri->in_limit, pri ? &pri->in_limit_hit : NULL);
  channel_render_limit(c, "Export limit: ", &cf->pri->out_limit, pri ? &pri->out_limit_hit : NULL);
  if (!pri || !sec)
    return;
  const struct channel_stats *s1 = &pri->stats, *s2 = &sec->stats;
#define R(s, x) ((unsigned long long) uatomic_read(&(s)->x))
  cli_printf(c, -1006, "  Routes:         %llu imported, %llu exported", R(s1, imp_routes), R(s2, imp_routes));
  cli_printf(c, -1006, "  Route change stats:     received   rejected   filtered    ignored   accepted");
  cli_printf(c, -1006, "    Import updates:     %10llu %10llu %10llu %10llu %10llu", R(s2, exp_updates_received),
             R(s2, exp_updates_rejected), R(s2, exp_updates_filtered), R(s1, imp_updates_ignored),
             R(s1, imp_updates_accepted));
  cli_printf(c, -1006, "    Import withdraws:   %10llu %10llu        --- %10llu %10llu", R(s2, exp_withdraws_received),
             0ULL, R(s1, imp_withdraws_ignored), R(s1, imp_withdraws_accepted));
  cli_printf(c, -1006, "    Export updates:     %10llu %10llu %10llu %10llu %10llu", R(s1, exp_updates_received),
             R(s1, exp_updates_rejected), R(s1, exp_updates_filtered), R(s2, imp_updates_ignored),
             R(s2, imp_updates_accepted));
  cli_printf(c, -1006, "    Export withdraws:   %10llu %10llu        --- %10llu %10llu", R(s1, exp_withdraws_received),
             0ULL, R(s2, imp_withdraws_ignored), R(s2, imp_withdraws_accepted));
#undef R
}
