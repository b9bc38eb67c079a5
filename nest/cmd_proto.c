/*
 * DOC: `show protocols [all]` and enable/disable/restart.
 *
 * Lifecycle data (state, since) belongs to the main loop, where commands
 * run; the protocol's info text is an RCU snapshot; channel statistics are
 * atomic counters. So the listing needs no round trip to protocol loops.
 */
#include <fnmatch.h>
#include <string.h>
#include "nest/cmds.h"
#include "nest/cli.h"
#include "nest/proto.h"
#include "nest/reconf.h"
#include "conf/conf.h"
#include "lib/log.h"
#include "lib/printf.h"
#include "lib/timeutil.h"

struct proto_rec {
  const char *name, *proto, *table, *state;
  char since[TM_DATETIME_BUFFER_SIZE];
  char info[96];
};

static void
proto_gather(struct proto *p, struct proto_rec *r)
{
  r->name = p->name;
  r->proto = p->class->name;
  r->table = "---";
  if (p->class->max_channels == 1 && !list_empty(&p->cf->channels))
    r->table = container_of(list_first(&p->cf->channels), struct channel_config, n)->table->name;
  r->state = proto_state_names[p->state];
  tm_format_time(r->since, sizeof(r->since), &config_running()->tf_proto, p->last_state_change);
  r->info[0] = 0;
  rcu_read_lock();
  const struct proto_status *st = proto_status(p);
  if (st && p->state != PS_DOWN)
    bsnprintf(r->info, sizeof(r->info), "%s", st->info);
  rcu_read_unlock();
  if (p->state == PS_DOWN && p->class->down_info)
    p->class->down_info(p, r->info, sizeof(r->info));
}

static void
proto_render_line(struct cli *c, const struct proto_rec *r)
{
  cli_printf(c, -1002, "%-10s %-10s %-10s %-6s %-12s  %s", r->name, r->proto, r->table, r->state, r->since, r->info);
}

static void channel_render_stats(struct cli *c, const struct channel *ch);

void
channel_render_limit(struct cli *c, const char *label, const struct channel_limit *l, const int *hit)
{
  if (!l->max)
    return;
  cli_printf(c, -1006, "    %s  %u%s", label, l->max, hit && uatomic_read(hit) ? " [HIT]" : "");
  cli_printf(c, -1006, "      Action:       %s", limit_action_names[l->action]);
}

static void
channel_render(struct cli *c, struct proto *p, struct channel_config *cc, struct channel *ch)
{
  static const char *const cs[] = { "DOWN", "START", "UP", "FLUSHING" };
  cli_printf(c, -1006, "  Channel %s", cc->name);
  cli_printf(c, -1006, "    State:          %s", ch ? cs[uatomic_read(&ch->state)] : "DOWN");
  cli_printf(c, -1006, "    Table:          %s", cc->table->name);
  cli_printf(c, -1006, "    Preference:     %u", cc->preference);
  cli_printf(c, -1006, "    Input filter:   %s", filter_name(cc->in_filter));
  cli_printf(c, -1006, "    Output filter:  %s", filter_name(cc->out_filter));
  channel_render_limit(c, "Receive limit:", &cc->rx_limit, ch ? &ch->rx_limit_hit : NULL);
  channel_render_limit(c, "Import limit: ", &cc->in_limit, ch ? &ch->in_limit_hit : NULL);
  channel_render_limit(c, "Export limit: ", &cc->out_limit, ch ? &ch->out_limit_hit : NULL);
  if (!ch)
    return;
  /* BIRD 2: the statistics of every channel not down (a paused one too) */
  if (uatomic_read(&ch->state) != CS_DOWN)
    channel_render_stats(c, ch);
  /* the protocol's lines (BGP: GR state, next hop, IGP table), even while
   * the channel is down, as BIRD prints them */
  if (p->class->show_channel_info)
    p->class->show_channel_info(p, ch, c);
}

static void
channel_render_stats(struct cli *c, const struct channel *ch)
{
  const struct channel_stats *s = &ch->stats;
#define R(x) ((unsigned long long) uatomic_read(&s->x))
  if (ch->in_keep_filtered)
    cli_printf(c, -1006, "    Routes:         %llu imported, %llu filtered, %llu exported, %llu preferred",
               R(imp_routes), R(filt_routes), R(exp_routes), R(pref_routes));
  else
    cli_printf(c, -1006, "    Routes:         %llu imported, %llu exported, %llu preferred",
               R(imp_routes), R(exp_routes), R(pref_routes));
  cli_printf(c, -1006, "    Route change stats:     received   rejected   filtered    ignored   accepted");
  cli_printf(c, -1006, "      Import updates:     %10llu %10llu %10llu %10llu %10llu",
             R(imp_updates_received), R(imp_updates_invalid), R(imp_updates_filtered), R(imp_updates_ignored), R(imp_updates_accepted));
  cli_printf(c, -1006, "      Import withdraws:   %10llu %10llu        --- %10llu %10llu",
             R(imp_withdraws_received), R(imp_withdraws_invalid), R(imp_withdraws_ignored), R(imp_withdraws_accepted));
  cli_printf(c, -1006, "      Export updates:     %10llu %10llu %10llu        --- %10llu",
             R(exp_updates_received), R(exp_updates_rejected), R(exp_updates_filtered), R(exp_updates_accepted));
  cli_printf(c, -1006, "      Export withdraws:   %10llu        ---        ---        --- %10llu",
             R(exp_withdraws_received), R(exp_withdraws_accepted));
#undef R
}

static void
proto_render_details(struct cli *c, struct proto *p)
{
  if (p->cf->dsc)
    cli_printf(c, -1006, "  Description:    %s", p->cf->dsc);
  if (p->message)
    cli_printf(c, -1006, "  Message:        %s", p->message);
  if (p->class->show_info)
    p->class->show_info(p, c);
  /* Channels belong to the protocol loop while it runs; their identity and
   * atomic counters are safe to read, the list is fixed during a run. */
  if (p->class->show_channels) {
    p->class->show_channels(p, c);
    cli_printf(c, -1006, "");
    return;
  }
  LIST_WALK_ENTRY(cc, &p->cf->channels, struct channel_config, n) {
    struct channel *ch = NULL;
    if (p->loop)
      LIST_WALK_ENTRY(x, &p->channels, struct channel, n)
        if (x->net_type == cc->net_type)
          ch = x;
    channel_render(c, p, cc, ch);
  }
  cli_printf(c, -1006, "");
}

static int
proto_selected(struct proto *p, struct show_proto_args *a)
{
  if (a->name)
    return !strcmp(p->name, a->name);
  if (a->pattern)
    return !fnmatch(a->pattern, p->name, 0);
  return 1;
}

void
cmd_show_protocols(struct cli *c, struct show_proto_args *a)
{
  int any = 0;
  LIST_WALK_ENTRY(p, proto_list(), struct proto, n) {
    if (!proto_selected(p, a))
      continue;
    if (!any)
      cli_printf(c, -2002, "%-10s %-10s %-10s %-6s %-12s  %s", "Name", "Proto", "Table", "State", "Since", "Info");
    any = 1;
    struct proto_rec r;
    proto_gather(p, &r);
    proto_render_line(c, &r);
    if (a->verbose)
      proto_render_details(c, p);
  }
  if (!any && (a->name || a->pattern))
    cli_printf(c, 8003, "No protocols match");
  else
    cli_done(c);
}

void
cmd_proto_action(struct cli *c, enum proto_cmd what, const char *name, const char *pattern, const char *msg)
{
  if (cli_access_restricted(c))
    return;
  int any = 0;
  LIST_WALK_ENTRY_SAFE(p, proto_list(), struct proto, n) {
    if (p->delete_pending)
      continue;
    if (name ? strcmp(p->name, name) : fnmatch(pattern, p->name, 0))
      continue;
    any = 1;
    switch (what) {
    case PROTO_CMD_DISABLE:
      if (p->disabled)
        cli_printf(c, -8, "%s: already disabled", p->name);
      else {
        log_msg(L_INFO, "Disabling protocol %s", p->name);
        proto_cmd_disable(p, msg);
        cli_printf(c, -9, "%s: disabled", p->name);
      }
      break;
    case PROTO_CMD_ENABLE:
      if (!p->disabled)
        cli_printf(c, -10, "%s: already enabled", p->name);
      else {
        log_msg(L_INFO, "Enabling protocol %s", p->name);
        proto_cmd_enable(p);
        cli_printf(c, -11, "%s: enabled", p->name);
      }
      break;
    case PROTO_CMD_RESTART:
      if (p->disabled)
        cli_printf(c, -8, "%s: already disabled", p->name);
      else {
        log_msg(L_INFO, "Restarting protocol %s", p->name);
        proto_cmd_restart(p, msg);
        cli_printf(c, -12, "%s: restarted", p->name);
      }
      break;
    case PROTO_CMD_RELOAD:
    case PROTO_CMD_RELOAD_IN:
    case PROTO_CMD_RELOAD_OUT: {
      /* BIRD 2: nothing printed for a protocol that is not up */
      int dir = what == PROTO_CMD_RELOAD_IN ? PROTO_RELOAD_IN
              : what == PROTO_CMD_RELOAD_OUT ? PROTO_RELOAD_OUT : PROTO_RELOAD_IN | PROTO_RELOAD_OUT;
      if (p->disabled) {
        cli_printf(c, -8, "%s: already disabled", p->name);
        break;
      }
      int rv = proto_cmd_reload(p, dir);
      if (rv < 0)
        cli_printf(c, -8006, "%s: reload failed", p->name);
      else if (rv > 0)
        cli_printf(c, -15, "%s: reloading", p->name);
      break;
    }
    }
  }
  if (!any)
    cli_printf(c, 8003, "No protocols match");
  else
    cli_done(c);
}

/* --- debug, mrtdump --- */

static int
proto_has_channel(const struct proto_config *pc, uint net_type)
{
  LIST_WALK_ENTRY(cc, &pc->channels, struct channel_config, n)
    if (cc->net_type == net_type)
      return 1;
  return 0;
}

/* As BIRD 2's proto_apply_cmd: a pattern that matches nothing is 8003; a
 * channel that does not exist is a parse-time error there (9001). */
static int
proto_target_walk(struct cli *c, const struct proto_target *t, void (*fn)(struct proto *, uint, u32), u32 mask)
{
  int any = 0;
  LIST_WALK_ENTRY(p, proto_list(), struct proto, n) {
    if (p->delete_pending)
      continue;
    if (t->name ? strcmp(p->name, t->name) : fnmatch(t->pattern, p->name, 0))
      continue;
    if (t->channel_type && !proto_has_channel(p->cf, t->channel_type)) {
      cli_printf(c, 9001, "Channel %s.%s not found", p->name, net_type_names[t->channel_type]);
      return -1;
    }
    any = 1;
    if (fn)
      fn(p, t->channel_type, mask);
  }
  if (!any) {
    cli_printf(c, 8003, "No protocols match");
    return -1;
  }
  return 0;
}

/* States, routes and filters are traced (nest/chan_trace.c), for all
 * the protocol's channels; `debug p.ipv4 ...` sets that channel's own
 * mask (or'ed with the protocol's). */
static void
proto_target_debug(struct proto *p, uint channel_type, u32 mask)
{
  if (channel_type)
    proto_channel_debug_set(p, channel_type, mask);
  else
    proto_debug_set(p, mask);
}

void
cmd_proto_debug(struct cli *c, const struct proto_target *t, u32 mask)
{
  if (cli_access_restricted(c))
    return;
  if (proto_target_walk(c, t, proto_target_debug, mask) == 0)
    cli_done(c);
}

/* We write no MRT dumps: as in BIRD 2 without a global `mrtdump` file, the
 * mask has nothing to act on, so it is checked and dropped. */
void
cmd_proto_mrtdump(struct cli *c, const struct proto_target *t, u32 mask)
{
  if (cli_access_restricted(c))
    return;
  (void) mask;
  if (proto_target_walk(c, t, NULL, 0) == 0)
    cli_done(c);
}
