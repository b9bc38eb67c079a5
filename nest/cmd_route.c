/*
 * DOC: `show route`.
 *
 * A plain count reads each table's counters. Listing may be long (a
 * million routes), so it streams: each continuation step shows a bounded
 * number of nets in its own short RCU read section, resuming a walk of
 * the table's index from where the last one stopped (rt_walk_part; nets
 * made or gone meanwhile may or may not be shown). A `sorted` table is
 * listed from its nets' addresses in order instead (gathered by the same
 * walk, then sorted and merged in steps: nest/cmd_route_sort.h), each
 * looked up again when its step comes (one that went meanwhile is left
 * out); so is `in PREFIX` on a `trie` table, as BIRD 2 lists it, and
 * such a table made with its trie walks that instead (nest/rt_trie.h): a
 * step resumes after the last prefix it took, so only the prefix's
 * subtree is walked. Imports and other CLI sessions run between steps; a
 * client that does not read simply stops the steps. Counting what a
 * filter, a protocol or an export picks walks the same way, printing
 * nothing, and so does `in PREFIX`, skipping the nets outside it.
 *
 * Between steps the listing holds nothing of the table: a listing left
 * unread for hours (`birdc show route all | less`) must not keep what the
 * table drops meanwhile, as a reader pinning its journal would.
 */
#include <stdlib.h>
#include <string.h>
#include "nest/cmds.h"
#include "nest/cmd_route_sort.h"
#include "nest/rt_trie.h"
#include "nest/cli.h"
#include "nest/iface.h"
#include "nest/proto.h"
#include "nest/reconf.h"
#include "conf/conf.h"
#include "lib/printf.h"
#include "lib/timeutil.h"

#define SR_STEP_NETS 256
#define SR_STEP_COUNT 4096

struct sr_counts { u64 shown, examined, nets; };

/* owner: main loop (the CLI's); allocated in pool, freed with it when
 * the command ends or its client goes */
struct sr_state {
  pool *pool;
  struct show_route_args *a;
  /* as many as the command may pick: an IXP's multi layout has hundreds */
  struct rtable **tables;
  /* `export table P.C`: the channel's table seen through its export map;
   * the channel is found again by name at each step (it may go away) */
  const struct sra_table **view;
  uint table_cap;
  struct channel *view_ch;      /* view[cur] found for this step (sr_view_resolve) */
  uint table_count, cur;
  struct sr_counts cnt, total;
  int in_table;                 /* tables[cur] is being walked */
  u64 walk_pos;                 /* where its walk goes on (rt_walk_part) */
  int sorting;                  /* a sorted table's listing: SR_GATHER, ... */
  struct sr_sort sort;          /* its nets' addresses */
  int trie_walked;              /* SR_TRIE: a step took trie_after */
  net_addr trie_after;          /* the last prefix the trie's walk took */
  int table_started;            /* the current table's header is out */
  int headed;                   /* some table's header is out */
  int examined_any;             /* a route was examined: "Network not found" else */
  int tables_locked;            /* use counts taken on s->tables */
  struct proto *proto;          /* `protocol P` */
  struct proto *exp_proto;      /* `export P` / `noexport P` */
  struct config *conf;          /* held while a filter from it runs */
  linpool *flp;                 /* scratch of filter runs */
};

struct show_route_args *
show_route_args_new(struct cli *c)
{
  return lp_allocz(c->parse_mem, sizeof(struct show_route_args));
}

int
show_route_args_add_table(struct show_route_args *a, enum sra_table_kind kind, const char *name, uint channel_type)
{
  if (a->table_count >= SRA_MAX_TABLES)
    return -1;
  a->tables[a->table_count++] = (struct sra_table){ kind, name, channel_type, !!a->export_mode };
  return 0;
}

/* --- Rendering --- */

static void
sr_render_route(struct cli *c, struct sr_state *s, const struct net *n, const struct rte *r, int first, int primary)
{
  const struct ea_list *a = rte_attrs(r);
  char netbuf[NET_MAX_TEXT_LENGTH + 1] = "";
  char tm[TM_DATETIME_BUFFER_SIZE], info[128] = "", from[64] = "";
  if (first)
    bsnprintf(netbuf, sizeof(netbuf), "%N", &n->n);
  tm_format_time(tm, sizeof(tm), &config_running()->tf_route, rte_lastmod(r));
  const struct proto_class *pc = rte_src(r)->proto->class;
  if (pc->rte_from) {
    ip_addr f = pc->rte_from(r);
    if (ipa_nonzero(f) && !ipa_equal(f, a->gw))
      bsnprintf(from, sizeof(from), " from %I", f);
  }
  /* BIRD 2 shows the igp_metric a route was given (static ones) after the
   * preference; a recursive next hop's is the protocol's to show */
  int metric = a->igp_metric && !(a->flags & EAL_RECURSIVE);
  if (pc->rte_info)
    pc->rte_info(r, info, sizeof(info));
  else if (metric)
    bsnprintf(info, sizeof(info), " (%u/%u)", a->preference, a->igp_metric);
  else
    bsnprintf(info, sizeof(info), " (%u)", a->preference);
  cli_printf(c, -1007, "%-20s %s [%s %s%s]%s%s", netbuf, rte_dest_names[a->dest], rte_src(r)->proto->name, tm, from,
             primary ? " *" : "", info);
  if (a->dest == RTD_UNICAST) {
    if (ipa_nonzero(a->gw) && a->iface)
      cli_printf(c, -1007, "\tvia %I on %s", a->gw, a->iface->name);
    else if (ipa_nonzero(a->gw))
      cli_printf(c, -1007, "\tvia %I", a->gw);
    else if (a->iface)
      cli_printf(c, -1007, "\tdev %s", a->iface->name);
  }
  if (s->a->verbose) {
    static const char *const scopes[] = { "host", "link", "site", "org", "univ" };
    cli_printf(c, -1008, "\tType: %s %s", rte_source_names[a->source], a->scope <= 4 ? scopes[a->scope] : "undef");
    if (metric)
      cli_printf(c, -1012, "\tigp_metric: %u", a->igp_metric);
    for (uint i = 0; i < a->count; i++) {
      const struct ea_class_desc *d = ea_class(a->a[i].id >> 8);
      if (!d)
        continue;
      char name[64], val[CLI_LINE_SIZE];
      const char *nm = d->name(&a->a[i], name, sizeof(name));
      if (!nm)
        continue;
      d->format(a, &a->a[i], val, sizeof(val));
      cli_printf(c, -1012, "\t%s: %s", nm, val);
    }
  }
}

static const char *
sr_table_name(const struct sr_state *s)
{
  return s->view[s->cur] ? "export" : s->tables[s->cur]->name;
}

static struct channel *sr_channel(const struct sra_table *st, int *configured);

/* Find the export view's channel once per table or listing step, not per
 * net: it can only go away between steps (both run in the main loop). */
static void
sr_view_resolve(struct sr_state *s)
{
  s->view_ch = s->view[s->cur] ? sr_channel(s->view[s->cur], NULL) : NULL;
}

/* The attributes the export filter gave r, when they differ from the
 * route's own: into *tmp, one reference in *mod. Returns the filter's
 * verdict. */
static int
sr_view_attrs(struct sr_state *s, const struct net *n, const struct rte *r, const struct filter *ef,
              struct rte *tmp, struct ea_list **mod)
{
  struct f_route fr = { .net = &n->n, .attrs = rte_attrs(r), .src = rte_src(r) };
  int pass = f_run(ef, &fr, s->flp) == F_ACCEPT;
  lp_flush(s->flp);
  if (fr.out && (!pass || fr.out == rte_attrs(r))) {
    ea_unref(fr.out);
    fr.out = NULL;
  }
  if (fr.out) {
    *tmp = rte_view(r, fr.out);
    *mod = fr.out;
  }
  return pass;
}

static void
sr_table_header(struct cli *c, struct sr_state *s)
{
  if (s->table_started)
    return;
  /* (with stats, the blank line comes after each table's counts) */
  if (s->headed && !s->a->stats)
    cli_printf(c, -1007, "");
  cli_printf(c, -1007, "Table %s:", sr_table_name(s));
  s->table_started = s->headed = 1;
}

/* p's channel in table t, NULL: none */
static struct channel *
sr_exp_channel(struct proto *p, struct rtable *t)
{
  struct channel *found = NULL;
  LIST_WALK_ENTRY(ch, &p->channels, struct channel, n)
    if (ch->table == t)
      found = ch;
  return found;
}

/* Has p a channel into t in its config? */
static int
sr_conf_channel(const struct proto *p, const struct rtable *t)
{
  LIST_WALK_ENTRY(cc, &p->cf->channels, struct channel_config, n)
    if (cc->table->table == t)
      return 1;
  return 0;
}

/* r shown with attributes a (one reference, taken over): into *tmp, and
 * *mod holds the reference, the one it held before dropped. */
static void
sr_take_attrs(const struct rte *r, struct ea_list *a, struct rte *tmp, struct ea_list **mod)
{
  if (*mod)
    ea_unref(*mod);
  *tmp = rte_view(r, a);
  *mod = a;
}

/* `export P`: what P's channel would send (the best route, or each for a
 * channel taking more; its export filter applied); `noexport P`: what
 * the filter rejects of them; `preexport P`: those of them that P's own
 * rules take; `exported P`: whatever P's channel did export, as it went
 * out. Is r shown? With `export P`, as the filter made it (*tmp, *mod as
 * sr_take_attrs). */
static int
sr_export_shows(struct sr_state *s, const struct net *n, const struct rte *r, const struct rte *best,
                struct rte *tmp, struct ea_list **mod)
{
  int mode = s->a->export_mode, pass;
  struct channel *ec = sr_exp_channel(s->exp_proto, s->tables[s->cur]);
  /* as BIRD 2: a channel that does not export (not running, or of a
   * protocol that exports nothing: a static) neither passes nor refuses
   * anything */
  if (!ec || !s->exp_proto->class->rt_notify || uatomic_read(&ec->state) != CS_UP)
    return 0;
  const struct filter *ef = uatomic_read(&ec->out_filter);
  if (mode == SRA_EXPORTED) {
    if (!chan_route_exported(ec, r))
      return 0;
    /* shown as it went out; an update group's member got what the group
     * exported if its export class's filter (its own) took it: the filter
     * reads only the route, so its verdict now is the one the group acted
     * on */
    struct ea_list *out = NULL;
    struct rte made;
    pass = sr_view_attrs(s, n, r, ef, &made, &out);
    if (!pass && uatomic_read(&ec->export_via)) {
      if (out)
        ea_unref(out);
      return 0;
    }
    if (out)
      sr_take_attrs(r, out, tmp, mod);
    return 1;
  }
  /* a channel that exports every route (pipes, ADD-PATH) or the first one
   * its filter takes (`secondary`) is asked of each */
  if (r != best && !chan_exports_every_route(ec) && !ec->cf->secondary)
    return 0;
  /* what P's own rules refuse (its own routes, BGP's rules) is neither
   * exported nor "noexported": BIRD skips it */
  struct channel *sc = rt_sender_of(s->tables[s->cur], r->sender);
  if ((sc && sc->proto == s->exp_proto) ||
      (s->exp_proto->class->preexport && s->exp_proto->class->preexport(ec, r) < 0))
    return 0;
  if (mode == SRA_PREEXPORT)
    return 1;
  struct f_route fr = { .net = &n->n, .attrs = rte_attrs(r), .src = rte_src(r) };
  pass = f_run(ef, &fr, s->flp) == F_ACCEPT;
  lp_flush(s->flp);
  if (fr.out && pass && mode == SRA_EXPORT)
    sr_take_attrs(r, fr.out, tmp, mod);
  else if (fr.out)
    ea_unref(fr.out);
  return pass == (mode == SRA_EXPORT);
}

/* Show (or count) one net; returns 1 if anything of it was shown. */
static int
sr_net(struct cli *c, struct sr_state *s, const struct net *n, int print)
{
  int first = 1, shown = 0, examined_any = 0;
  const struct rte *best = rcu_dereference(n->routes);
  /* the export view: the routes the channel exported (one per net, all
   * with ADD-PATH), as its export filter made them */
  struct channel *view = s->view_ch;
  if (s->view[s->cur] && !view)
    return 0;     /* the channel went away meanwhile */
  for (const struct rte *r = best; r; r = rcu_dereference(r->next)) {
    if (s->a->primary_only && r != best)
      break;
    if (!!(rte_flags(r) & REF_FILTERED) != !!s->a->filtered)
      continue;
    if (view && !chan_route_exported(view, r))
      continue;
    s->cnt.examined++;
    examined_any = 1;
    if (s->proto && rte_src(r)->proto != s->proto)
      continue;
    /* `filter`/`where`: show what passes, as the filter left it. */
    struct rte tmp;
    struct ea_list *mod = NULL;
    if (view)
      sr_view_attrs(s, n, r, uatomic_read(&view->out_filter), &tmp, &mod);
    if (s->exp_proto && !sr_export_shows(s, n, r, best, &tmp, &mod))
      goto next;
    if (s->a->filter) {
      struct f_route fr = { .net = &n->n, .attrs = mod ? mod : rte_attrs(r), .src = rte_src(r) };
      enum f_result res = f_run(s->a->filter, &fr, s->flp);
      lp_flush(s->flp);
      if (res != F_ACCEPT) {
        if (fr.out)
          ea_unref(fr.out);
        goto next;
      }
      if (fr.out)
        sr_take_attrs(r, fr.out, &tmp, &mod);
    }
    s->cnt.shown++;
    shown = 1;
    if (print) {
      sr_table_header(c, s);
      sr_render_route(c, s, n, mod ? &tmp : r, first, r == best);
      first = 0;
    }
  next:
    if (mod)
      ea_unref(mod);
  }
  if (examined_any) {
    s->cnt.nets++;
    s->examined_any = 1;
  }
  return shown;
}

/* --- Table selection --- */

#define SR_ERROR ((struct rtable *) 1)

/* The channel st names, NULL: none now; *configured (if asked): the
 * protocol has one in its config (a disabled one has not made it). */
static struct channel *
sr_channel(const struct sra_table *st, int *configured)
{
  struct proto *p = proto_find_by_name(st->name);
  struct channel *ch = NULL;
  if (p)
    LIST_WALK_ENTRY(x, &p->channels, struct channel, n)
      if (x->net_type == st->channel_type)
        ch = x;
  if (configured) {
    *configured = 0;
    if (p)
      LIST_WALK_ENTRY(cc, &p->cf->channels, struct channel_config, n)
        *configured |= cc->net_type == st->channel_type;
  }
  return ch;
}

/* `table T` (NULL when gone meanwhile), or a channel's import table or
 * export view (SR_ERROR after replying with BIRD's error when it has none). */
static struct rtable *
sr_named_table(struct cli *c, const struct sra_table *st)
{
  if (st->kind == SRA_TABLE)
    return rt_find_table(st->name);
  const char *cname = st->channel_type == NET_IP4 ? "ipv4" : "ipv6";
  int configured;
  struct channel *ch = sr_channel(st, &configured);
  if (!ch && !configured) {
    cli_printf(c, 9001, "Channel %s.%s not found", st->name, cname);
    return SR_ERROR;
  }
  /* As BIRD 2, whose channels have these tables from their start to
   * their end: a channel down (a session not up, a protocol disabled)
   * has none. */
  struct rtable *t = NULL;
  if (ch && uatomic_read(&ch->state) != CS_DOWN)
    t = st->kind == SRA_IMPORT_TABLE ? ch->in_table : ch->cf->export_table ? ch->table : NULL;
  if (!t)
    cli_printf(c, 9001, "No %s table in channel %s.%s", st->kind == SRA_IMPORT_TABLE ? "import" : "export",
               st->name, cname);
  return t ? t : SR_ERROR;
}

static void
sr_add_table(struct sr_state *s, struct rtable *t, uint want_type)
{
  if (t && !t->deleted && (!want_type || t->net_type == want_type) && s->table_count < s->table_cap)
    s->tables[s->table_count++] = t;
}

static int
sr_pick_tables(struct cli *c, struct sr_state *s)
{
  struct show_route_args *a = s->a;
  uint want_type = a->have_net ? a->net.type : 0;
  struct config *conf = config_running();
  uint cap = a->table_count + NET_MAX;
  LIST_WALK(n, &conf->tables)
    cap++;
  if (s->exp_proto)
    LIST_WALK(n, &s->exp_proto->channels)
      cap++;
  if (s->proto)
    LIST_WALK(n, &s->proto->cf->channels)
      cap++;
  s->tables = mb_allocz(s->pool, cap * sizeof(*s->tables));
  s->view = mb_allocz(s->pool, cap * sizeof(*s->view));
  s->table_cap = cap;
  if (a->table_count) {
    for (uint i = 0; i < a->table_count; i++) {
      struct rtable *t = sr_named_table(c, &a->tables[i]);
      if (t == SR_ERROR)
        return -1;
      if (!t)
        continue;
      if (s->exp_proto && !sr_exp_channel(s->exp_proto, t)) {
        /* as BIRD 2: a table named after `export P` that P has no
         * channel into is an error, named before it drops out; one of a
         * channel not running (P disabled) stays, and shows nothing */
        if (!sr_conf_channel(s->exp_proto, t)) {
          if (a->tables[i].after_export) {
            cli_printf(c, 9001, "No export channel for table %s", t->name);
            return -1;
          }
          continue;
        }
      }
      if (want_type && t->net_type != want_type) {
        /* as BIRD 2: an error where `table` picked the tables last, else
         * (`protocol P` or an export mode after it) the table drops out */
        if (!a->tables_direct)
          continue;
        cli_printf(c, 9001, "Incompatible type of prefix/ip for table %s", t->name);
        return -1;
      }
      s->view[s->table_count] = a->tables[i].kind == SRA_EXPORT_TABLE ? &a->tables[i] : NULL;
      s->tables[s->table_count++] = t;
    }
    return 0;
  }
  if (s->exp_proto && a->all_tables) {
    /* `table all` with `export P`: every table P has a channel into */
    LIST_WALK_ENTRY(cf, &conf->tables, struct rtable_config, n)
      if (cf->table && sr_conf_channel(s->exp_proto, cf->table))
        sr_add_table(s, cf->table, want_type);
    return 0;
  }
  if (s->exp_proto) {
    /* `export P`: the tables of P's channels that export now (BIRD 2:
     * none of a static's); named tables are shown whatever P does there */
    if (s->exp_proto->loop && s->exp_proto->class->rt_notify)
      LIST_WALK_ENTRY(ch, &s->exp_proto->channels, struct channel, n)
        if (uatomic_read(&ch->state) == CS_UP)
          sr_add_table(s, ch->table, want_type);
    return 0;
  }
  /* `protocol P` without tables: the tables of P's channels. */
  struct proto *sel = s->proto;
  if (sel && !a->all_tables) {
    LIST_WALK_ENTRY(cc, &sel->cf->channels, struct channel_config, n)
      sr_add_table(s, cc->table->table, want_type);
    return 0;
  }
  /* As BIRD: `table all` in the order of the running config, the
   * default tables by net type. */
  if (a->all_tables)
    LIST_WALK_ENTRY(cf, &conf->tables, struct rtable_config, n)
      sr_add_table(s, cf->table, want_type);
  else
    for (uint type = 1; type < NET_MAX; type++)
      if (conf->def_tables[type])
        sr_add_table(s, conf->def_tables[type]->table, want_type);
  return 0;
}

static void
sr_count_line(struct cli *c, struct sr_state *s)
{
  cli_printf(c, -1007, "%llu of %llu routes for %llu networks in table %s",
             (unsigned long long) s->cnt.shown, (unsigned long long) s->cnt.examined,
             (unsigned long long) s->cnt.nets, sr_table_name(s));
}

/* `stats` after a whole table's listing: as BIRD, every table has its
 * header, even an empty one, and a blank line follows its counts when
 * there are several tables. */
static void
sr_stats_end(struct cli *c, struct sr_state *s)
{
  sr_table_header(c, s);
  sr_count_line(c, s);
  if (s->table_count > 1)
    cli_printf(c, -1007, "");
}

static void
sr_table_done(struct sr_state *s)
{
  s->total.shown += s->cnt.shown;
  s->total.examined += s->cnt.examined;
  s->total.nets += s->cnt.nets;
  memset(&s->cnt, 0, sizeof(s->cnt));
}

static void sr_filter_done(struct sr_state *s);

/* A table (or a channel's import table) deleted while we stream it stays
 * until we are done. */
static void
sr_lock_tables(struct sr_state *s)
{
  for (uint i = 0; i < s->table_count; i++)
    rt_lock_table(s->tables[i]);
  s->tables_locked = 1;
}

static void
sr_unlock_tables(struct sr_state *s)
{
  if (!s->tables_locked)
    return;
  s->tables_locked = 0;
  for (uint i = 0; i < s->table_count; i++)
    rt_unlock_table(s->tables[i]);
}

static void sr_free(struct sr_state *s);

/* A prefix or `for` shows one net per table; `in` lists like a whole
 * table does, the nets of its prefix only. */
static int
sr_single_net(const struct show_route_args *a)
{
  return a->have_net && a->mode != SRA_IN;
}

/* Is n one the command lists? */
static int
sr_net_wanted(const struct show_route_args *a, const struct net *n)
{
  return a->mode != SRA_IN || net_in_net(&n->n, &a->net);
}

static void
sr_finish(struct cli *c, struct sr_state *s)
{
  if (sr_single_net(s->a) && !s->examined_any)
    cli_printf(c, 8001, "Network not found");
  else if (s->a->stats && s->table_count > 1)
    cli_printf(c, 14, "Total: %llu of %llu routes for %llu networks in %u tables",
               (unsigned long long) s->total.shown, (unsigned long long) s->total.examined,
               (unsigned long long) s->total.nets, s->table_count);
  else
    cli_done(c);
  sr_free(s);
}

/* Does `count` on the current table count every route (no selection)? */
static int
sr_count_plain(const struct sr_state *s)
{
  const struct show_route_args *a = s->a;
  return !a->have_net && !a->filter && !s->proto && !s->exp_proto && !a->primary_only && !a->filtered && !s->view[s->cur] &&
         !uatomic_read(&s->tables[s->cur]->filtered_count);
}

/* --- Single net (prefix, for) --- */

static void
sr_one_net(struct cli *c, struct sr_state *s)
{
  struct show_route_args *a = s->a;
  rcu_read_lock();
  for (s->cur = 0; s->cur < s->table_count; s->cur++) {
    struct rtable *t = s->tables[s->cur];
    s->table_started = 0;
    sr_view_resolve(s);
    struct net *n = a->mode == SRA_FOR ? rt_lookup_lpm(t, &a->net) : rt_find_net(t, &a->net);
    if (n)
      sr_net(c, s, n, a->stats != 2);
    if (a->stats && (s->cnt.examined || s->table_count == 1))
      sr_count_line(c, s);
    sr_table_done(s);
  }
  rcu_read_unlock();
  sr_finish(c, s);
}

/* --- Streaming listing --- */

struct sr_visit {
  struct cli *c;
  struct sr_state *s;
  int print;
};

static void
sr_visit_net(struct rtable *t UNUSED, struct net *n, void *ctx)
{
  struct sr_visit *v = ctx;
  if (sr_net_wanted(v->s->a, n))
    sr_net(v->c, v->s, n, v->print);
}

/* A sorted table's listing goes through these in turn: its walk gathers
 * the addresses, then a step sorts a run of them until all are sorted
 * (sr_sort_step), and the steps after that list them. SR_TRIE: `in` on a
 * table with a trie, whose walk gives them in order (sr_trie_step). */
enum { SR_UNSORTED, SR_GATHER, SR_SORTED, SR_TRIE };
#define SR_SORT_RUN SR_STEP_COUNT

static void
sr_gather_net(struct rtable *t UNUSED, struct net *n, void *ctx)
{
  struct sr_state *s = ctx;
  if (sr_net_wanted(s->a, n))
    sr_sort_add(&s->sort, &n->n);
}

/* Is t listed in address order? A `sorted` table always is. BIRD 2
 * walks a `trie` table's trie for `in PREFIX` (its subtree in preorder,
 * which is address order) and its hash otherwise, so a trie table lists
 * `in` sorted and the rest in the index's order. A table made without
 * the trie its config now asks for (nest/rt_conf.c) sorts instead. */
static int
sr_lists_sorted(const struct rtable *t, const struct show_route_args *a)
{
  return t->config && (t->config->sorted || (t->config->trie && a->mode == SRA_IN));
}

/* Does `in PREFIX` walk t's trie? */
static int
sr_walks_trie(const struct rtable *t, const struct show_route_args *a)
{
  return t->trie && a->mode == SRA_IN && a->net.type == t->net_type;
}

/* A step of a trie's walk: the next nets inside the prefix, in order,
 * each looked up (one that went since the trie had it is left out). */
static int
sr_trie_step(struct cli *c, struct sr_state *s, uint max, int print)
{
  struct rtable *t = s->tables[s->cur];
  net_addr at[SR_STEP_NETS];
  const net_addr *a[SR_STEP_NETS];
  struct net *n[SR_STEP_NETS];
  max = MIN(max, SR_STEP_NETS);
  uint k = rt_trie_walk(t->trie, &s->a->net, s->trie_walked ? &s->trie_after : NULL, at, max);
  for (uint i = 0; i < k; i++)
    a[i] = &at[i];
  if (k) {
    net_copy(&s->trie_after, &at[k - 1]);
    s->trie_walked = 1;
  }
  rt_find_nets(t, a, k, n);
  for (uint i = 0; i < k; i++)
    if (n[i])
      sr_net(c, s, n[i], print);
  return k < max;
}

/* A step of the current table: 1 when it is done. */
static int
sr_step(struct cli *c, struct sr_state *s, uint max, int print)
{
  struct rtable *t = s->tables[s->cur];
  switch (s->sorting) {
    case SR_UNSORTED: {
      struct sr_visit v = { c, s, print };
      return rt_walk_part(t, &s->walk_pos, max, sr_visit_net, &v);
    }
    case SR_GATHER:
      if (rt_walk_part(t, &s->walk_pos, SR_STEP_COUNT, sr_gather_net, s))
        s->sorting = SR_SORTED;
      return 0;
    case SR_SORTED:
      if (!sr_sort_step(&s->sort))
        return 0;
      break;
    case SR_TRIE:
      return sr_trie_step(c, s, max, print);
  }
  /* each net looked up again (it may have gone since the walk), the
   * lookups of a step together: in the order of the addresses, each was
   * a cache miss or two in turn (30% of the listing's time at 1M nets) */
  const net_addr *a[SR_STEP_NETS];
  struct net *n[SR_STEP_NETS];
  uint k = 0;
  max = MIN(max, SR_STEP_NETS);
  while (k < max && (a[k] = sr_sort_next(&s->sort)))
    k++;
  rt_find_nets(t, a, k, n);
  for (uint i = 0; i < k; i++)
    if (n[i])
      sr_net(c, s, n[i], print);
  return k < max;
}

static void
sr_release(struct sr_state *s)
{
  sr_sort_free(&s->sort);
  s->sorting = SR_UNSORTED;
}

static void
sr_filter_done(struct sr_state *s)
{
  if (s->conf)
    config_unref(s->conf);
  s->conf = NULL;
  if (s->flp)
    rfree(s->flp);
  s->flp = NULL;
}

/* All of a command's state lives in its own pool: a client that keeps
 * its connection for days (a monitoring script polling `show route
 * count`) must not collect it until it leaves. */
static void
sr_free(struct sr_state *s)
{
  sr_release(s);
  sr_filter_done(s);
  sr_unlock_tables(s);
  rfree(s->pool);
}

static void
sr_cleanup(struct cli *c)
{
  struct sr_state *s = c->cont_data;
  if (s)
    sr_free(s);
}

static void
sr_cont(struct cli *c)
{
  struct sr_state *s = c->cont_data;
  int count = s->a->stats == 2;
  if (!s->in_table) {
    if (s->cur >= s->table_count) {
      cli_cont_done(c);
      sr_finish(c, s);
      return;
    }
    if (count && sr_count_plain(s)) {
      /* Operators poll this in scripts: the table's own counters answer
       * it without a walk (every route shown and examined, every net
       * holds one when none is kept filtered). */
      struct rtable *t = s->tables[s->cur];
      s->cnt = (struct sr_counts){ uatomic_read(&t->route_count), uatomic_read(&t->route_count),
                                   uatomic_read(&t->net_count) };
      sr_count_line(c, s);
      sr_table_done(s);
      s->cur++;
      return;
    }
    s->in_table = 1;
    s->walk_pos = 0;
    s->table_started = 0;
    struct rtable *t = s->tables[s->cur];
    s->trie_walked = 0;
    if (sr_walks_trie(t, s->a))
      s->sorting = SR_TRIE;
    else if (sr_lists_sorted(t, s->a) && !count) {
      sr_sort_init(&s->sort, net_addr_length[t->net_type], SR_SORT_RUN);
      s->sorting = SR_GATHER;
    }
  }
  sr_view_resolve(s);
  rcu_read_lock();
  /* counting prints nothing: its steps may take more nets */
  int done = sr_step(c, s, count ? SR_STEP_COUNT : SR_STEP_NETS, !count);
  rcu_read_unlock();
  if (!done)
    return;
  if (count)
    sr_count_line(c, s);
  else if (s->a->stats)
    sr_stats_end(c, s);
  else if (s->a->tables_direct)
    /* tables named (or `table all`) have their header even when nothing
     * of them shows, as in BIRD 2, unless `protocol` or an export mode
     * came after them in the command */
    sr_table_header(c, s);
  sr_table_done(s);
  sr_release(s);
  s->in_table = 0;
  s->cur++;
}

void
cmd_show_route(struct cli *c, struct show_route_args *a)
{
  pool *p = rp_new_child(c->pool, "show route");
  struct sr_state *s = mb_allocz(p, sizeof(struct sr_state));
  s->pool = p;
  s->a = mb_alloc(p, sizeof(*a));
  *s->a = *a;
  for (uint i = 0; i < a->table_count; i++)
    s->a->tables[i].name = mb_strdup(p, a->tables[i].name);
  if (a->proto_name) {
    s->proto = proto_find_by_name(a->proto_name);
    if (!s->proto) {
      cli_printf(c, 9001, "%s is not a protocol", a->proto_name);
      goto refused;
    }
  }
  if (a->export_mode) {
    s->exp_proto = proto_find_by_name(a->export_proto);
    if (!s->exp_proto) {
      cli_printf(c, 9001, "%s is not a protocol", a->export_proto);
      goto refused;
    }
  }
  /* a channel without the import or export table named is BIRD 2's
   * parse error: it comes before the options are checked together */
  for (uint i = 0; i < a->table_count; i++)
    if (a->tables[i].kind != SRA_TABLE && sr_named_table(c, &a->tables[i]) == SR_ERROR)
      goto refused;
  /* filtered routes are never exported, and none of them is primary */
  if (a->filtered && (a->export_mode || a->primary_only)) {
    cli_printf(c, 9001, "Incompatible show route options");
    goto refused;
  }
  if (sr_pick_tables(c, s) < 0)
    goto refused;
  if (!s->table_count) {
    cli_printf(c, 9001, "No valid tables");
    goto refused;
  }
  sr_lock_tables(s);
  int views = 0;
  for (uint i = 0; i < s->table_count; i++)
    views |= !!s->view[i];
  if (a->filter || a->export_mode || views) {
    s->conf = config_running();
    config_ref(s->conf);
    s->flp = lp_new(p);
  }
  if (sr_single_net(a)) {
    sr_one_net(c, s);
    return;
  }
  cli_set_cont(c, sr_cont, s, sr_cleanup);
  return;
refused:
  sr_free(s);
}
