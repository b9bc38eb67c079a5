/*
 * DOC: `show static [name]`: the configured routes of static protocols.
 *
 * As BIRD 2, one 1009 line per route of the protocol's latest config, with
 * its destination; unicast routes put each next hop on a line of its own,
 * marked "(dormant)" while the route cannot be installed (protocol not up,
 * gateway not a neighbor, interface down). Without a name every static
 * protocol not down is shown, an empty line between them.
 *
 * Runs in the main loop and streams in steps (configs with a million routes
 * exist). It reads only main-loop data (the protocol list, p->cf, p->state)
 * and the RCU interface snapshot: whether a route is dormant is worked out
 * here with the test the protocol's loop uses, so no round trip is needed.
 * Between steps the walked config is held by a reference; the protocol is
 * looked up again by name, as it may have gone meanwhile.
 */
#include <string.h>
#include "proto/static/static.h"
#include "nest/cli.h"
#include "nest/iface.h"
#include "conf/conf.h"
#include "lib/resource.h"

#define SHOW_STEP_ROUTES 256

struct static_show {          /* owner: main loop; in the session's pool */
  const char **names;         /* protocols to show, in list order (copies) */
  uint count, cur;
  struct config *held;        /* config of the protocol being walked */
  struct lnode *pos;          /* next route in it; NULL: protocol not begun */
  const struct lnode *head;
};

static struct proto *
static_show_find(const char *name)
{
  LIST_WALK_ENTRY(p, proto_list(), struct proto, n)
    if (!p->delete_pending && p->class == &proto_static && !strcmp(p->name, name))
      return p;
  return NULL;
}

static void
static_show_route(struct cli *c, const struct static_route *r, int up)
{
  if (r->dest != RTD_UNICAST) {
    /* ROA and ASPA records have no destination: BIRD prints an empty one */
    cli_printf(c, -1009, "%N\t%s", &r->net, rte_dest_names[r->dest]);
    return;
  }
  rcu_read_lock();
  int active = up && static_route_iface(r);
  rcu_read_unlock();
  const char *dormant = active ? "" : " (dormant)";
  cli_printf(c, -1009, "%N", &r->net);
  if (ipa_zero(r->via))
    cli_printf(c, -1009, "\tdev %s%s", r->dev, dormant);
  else
    cli_printf(c, -1009, "\tvia %I%s%s%s%s", r->via, r->dev ? "%" : "", r->dev ? r->dev : "",
               r->onlink ? " onlink" : "", dormant);
}

static void
static_show_release(struct static_show *s)
{
  if (s->held)
    config_unref(s->held);
  s->held = NULL;
  s->pos = NULL;
}

static void
static_show_cleanup(struct cli *c)
{
  struct static_show *s = c->cont_data;
  if (s)
    static_show_release(s);
}

static void
static_show_cont(struct cli *c)
{
  struct static_show *s = c->cont_data;
  if (s->cur >= s->count) {
    cli_cont_done(c);
    for (uint i = 0; i < s->count; i++)
      mb_free((char *) s->names[i]);
    mb_free(s->names);
    mb_free(s);
    cli_printf(c, 0, "");
    return;
  }
  struct proto *p = static_show_find(s->names[s->cur]);
  if (!p) {                   /* gone since the command began */
    static_show_release(s);
    s->cur++;
    return;
  }
  if (!s->pos) {
    /* BIRD's separator: an empty line of the code last printed */
    if (c->last_code)
      cli_printf(c, -c->last_code, "");
    s->held = p->cf->global;
    config_ref(s->held);
    s->head = &((struct static_config *) p->cf)->routes;
    s->pos = s->head->next;
  }
  int up = p->state == PS_UP;
  for (uint i = 0; i < SHOW_STEP_ROUTES && s->pos != s->head; i++, s->pos = s->pos->next)
    static_show_route(c, container_of(s->pos, struct static_route, n), up);
  if (s->pos == s->head) {
    static_show_release(s);
    s->cur++;
  }
}

void
static_show(struct cli *c, const char *name)
{
  uint n = 0;
  LIST_WALK_ENTRY(p, proto_list(), struct proto, n)
    if (!p->delete_pending && p->class == &proto_static && (name ? !strcmp(p->name, name) : p->state != PS_DOWN))
      n++;
  if (!n) {
    if (name)
      cli_printf(c, 9001, "%s: Not a Static protocol", name);
    else
      cli_printf(c, 9001, "There is no Static protocol running");
    return;
  }
  struct static_show *s = mb_allocz(c->pool, sizeof(*s));
  s->names = mb_alloc(c->pool, n * sizeof(*s->names));
  LIST_WALK_ENTRY(p, proto_list(), struct proto, n)
    if (!p->delete_pending && p->class == &proto_static && (name ? !strcmp(p->name, name) : p->state != PS_DOWN))
      s->names[s->count++] = mb_strdup(c->pool, p->name);
  cli_set_cont(c, static_show_cont, s, static_show_cleanup);
}
