/*
 * DOC: General CLI commands: status, memory, symbols, interfaces,
 * configure, down, restrict, dump. Output layouts follow BIRD 2/3 exactly
 * (see shared/reference/bird-compat.md).
 */
#include "config.h"
#include <string.h>
#include <unistd.h>
#include "nest/cmds.h"
#include "nest/gr_recovery.h"
#include "nest/cli.h"
#include "nest/iface.h"
#include "nest/proto.h"
#include "nest/reconf.h"
#include "conf/conf.h"
#include "lib/log.h"
#include "lib/printf.h"
#include "lib/resource.h"
#include "lib/timeutil.h"

/* --- show status --- */

struct status_rec {
  const char *version;
  u32 router_id;
  char hostname[256];
  char now[TM_DATETIME_BUFFER_SIZE], boot[TM_DATETIME_BUFFER_SIZE], reconf[TM_DATETIME_BUFFER_SIZE];
  int shutting_down, reconfiguring;
};

static void
status_gather(struct status_rec *r)
{
  struct config *c = config_running();
  r->version = PACKAGE_VERSION;
  r->router_id = c->router_id;
  if (c->hostname)
    bsnprintf(r->hostname, sizeof(r->hostname), "%s", c->hostname);
  else if (gethostname(r->hostname, sizeof(r->hostname) - 1) < 0)
    r->hostname[0] = 0;
  tm_format_time(r->now, sizeof(r->now), &c->tf_base, time_real_now());
  tm_format_time(r->boot, sizeof(r->boot), &c->tf_base, config_boot_time());
  tm_format_time(r->reconf, sizeof(r->reconf), &c->tf_base, config_reconf_time());
  r->shutting_down = config_shutting_down();
  r->reconfiguring = config_status() != CONF_DONE;
}

void
cmd_show_status(struct cli *c)
{
  struct status_rec r;
  status_gather(&r);
  cli_printf(c, -1000, "BIRD %s", r.version);
  cli_printf(c, -1011, "Router ID is %R", r.router_id);
  cli_printf(c, -1011, "Hostname is %s", r.hostname);
  cli_printf(c, -1011, "Current server time is %s", r.now);
  cli_printf(c, -1011, "Last reboot on %s", r.boot);
  cli_printf(c, -1011, "Last reconfiguration on %s", r.reconf);
  gr_recovery_show(c);
  /* BIRD 2: one code, 0013, whatever the state */
  if (r.shutting_down)
    cli_printf(c, 13, "Shutdown in progress");
  else if (r.reconfiguring)
    cli_printf(c, 13, "Reconfiguration in progress");
  else
    cli_printf(c, 13, "Daemon is up and running");
}

/* --- show memory --- */

static void
mem_fmt(char *buf, size_t size, u64 v, int width)
{
  static const char *units[] = { " B", "kB", "MB", "GB", "TB" };
  double x = v;
  uint u = 0;
  while (x >= 10000 && u < ARRAY_SIZE(units) - 1) {
    x /= 1024;
    u++;
  }
  /* our printf has no floating point; one decimal by hand */
  u64 tenths = (u64) (x * 10 + 0.5);
  char num[32];
  bsnprintf(num, sizeof(num), "%llu.%llu", (unsigned long long) (tenths / 10), (unsigned long long) (tenths % 10));
  bsnprintf(buf, size, "%*s %s", width, num, units[u]);
}

static void
mem_line(struct cli *c, const char *name, const struct mem_usage *u)
{
  char e[32], o[32];
  mem_fmt(e, sizeof(e), u->effective, 6);
  mem_fmt(o, sizeof(o), u->overhead, 8);
  cli_printf(c, -1018, "%-17s %s %s", name, e, o);
}

void
cmd_show_memory(struct cli *c)
{
  static const char *const names[MEM_CLASS_MAX] = {
    [MEM_TABLES] = "Routing tables:", [MEM_ATTRS] = "Route attributes:", [MEM_PROTOCOLS] = "Protocols:",
    [MEM_CONFIG] = "Current config:", [MEM_STANDBY] = "Standby memory:",
  };
  struct mem_usage total = { 0, 0 };
  cli_printf(c, -1018, "BIRD memory usage");
  cli_printf(c, -1018, "%-17s Effective    Overhead", "");
  for (int i = 0; i < MEM_CLASS_MAX; i++) {
    struct mem_usage u;
    mem_class_usage(i, &u);
    mem_line(c, names[i], &u);
    total.effective += u.effective;
    total.overhead += u.overhead;
  }
  mem_line(c, "Total:", &total);
  cli_done(c);
}

/* --- show symbols --- */

void
cmd_show_symbols(struct cli *c, int class, struct symbol *sym)
{
  struct config *conf = config_running();
  if (sym) {
    cli_printf(c, 1010, "%-8s\t%s", sym->name, cf_symbol_class_name(sym));
    return;
  }
  for (struct symbol *s = conf->sym_first; s; s = s->next_all)
    if (class < 0 || (int) s->class == class)
      cli_printf(c, -1010, "%-8s\t%s", s->name, cf_symbol_class_name(s));
  cli_done(c);
}

/* --- show interfaces --- */

static const char *
scope_name(int scope)
{
  switch (scope) {
  case SCOPE_HOST: return "host";
  case SCOPE_LINK: return "link";
  case SCOPE_SITE: return "site";
  case SCOPE_ORGANIZATION: return "org";
  case SCOPE_UNIVERSE: return "univ";
  default: return "undef";
  }
}

void
cmd_show_interfaces(struct cli *c, int summary)
{
  rcu_read_lock();
  const struct iface_set *s = iface_current();
  if (summary)
    cli_printf(c, -2005, "%-10s %-6s %-18s %s", "Interface", "State", "IPv4 address", "IPv6 address");
  for (uint i = 0; i < s->count; i++) {
    const struct iface_info *ii = &s->ifs[i];
    const char *state = (ii->flags & IF_UP) ? "up" : "down";
    if (summary) {
      char a4[NET_MAX_TEXT_LENGTH + 1] = "", a6[NET_MAX_TEXT_LENGTH + 1] = "";
      for (uint k = 0; k < ii->addr_count; k++) {
        const struct ifa *fa = &ii->addrs[k];
        char *dst = fa->prefix.type == NET_IP4 ? a4 : a6;
        if (!*dst)
          bsnprintf(dst, NET_MAX_TEXT_LENGTH + 1, "%I/%u", fa->ip, fa->prefix.pxlen);
      }
      cli_printf(c, -1005, "%-10s %-6s %-18s %s", ii->iface->name, state, a4, a6);
      continue;
    }
    cli_printf(c, -1001, "%s %s (index=%u)", ii->iface->name, state, ii->iface->index);
    char flags[256];
    /* a loopback interface is "Ignored" by BIRD: nothing is a neighbor there */
    bsnprintf(flags, sizeof(flags), "\t%s%s%s%s%s%s MTU=%u",
              (ii->flags & IF_MULTIACCESS) ? "MultiAccess" : "PtP",
              (ii->flags & IF_BROADCAST) ? " Broadcast" : "",
              (ii->flags & IF_MULTICAST) ? " Multicast" : "",
              (ii->flags & IF_ADMIN_UP) ? " AdminUp" : " AdminDown",
              (ii->flags & IF_LINK_UP) ? " LinkUp" : " LinkDown",
              (ii->flags & IF_LOOPBACK) ? " Loopback Ignored" : "", ii->mtu);
    cli_printf(c, -1004, "%s", flags);
    for (uint k = 0; k < ii->addr_count; k++) {
      const struct ifa *fa = &ii->addrs[k];
      cli_printf(c, -1003, "\t%I/%u (%s%s, scope %s)", fa->ip, fa->prefix.pxlen,
                 (fa->flags & IA_PRIMARY) ? "Preferred" : "Secondary",
                 (fa->flags & IA_PEER) ? ", opposite" : "", scope_name(fa->scope));
    }
  }
  rcu_read_unlock();
  cli_done(c);
}

/* --- configure --- */

/*
 * The requests and their state are nest/reconf_ctl.c's; here the replies.
 * Only one commit runs at a time, so one session at most waits for its
 * final line (others are queued and answered at once).
 */
static struct {               /* main loop */
  struct cli *cli;            /* waiting for the commit's reply; NULL: gone */
  struct event done;
  u32 timeout_cli;            /* session of the last `configure timeout` */
} cfg_wait;

static void
cfg_cli_cleanup(struct cli *c)
{
  if (cfg_wait.cli == c)
    cfg_wait.cli = NULL;
}

static void
cfg_reply(struct cli *c, int r)
{
  switch (r) {
  case CONF_DONE: cli_printf(c, 3, "Reconfigured"); break;
  case CONF_PROGRESS: cli_printf(c, 4, "Reconfiguration in progress"); break;
  case CONF_QUEUED: cli_printf(c, 5, "Reconfiguration already in progress, queueing new config"); break;
  case CONF_UNQUEUED: cli_printf(c, 17, "Reconfiguration already in progress, removing queued config"); break;
  case CONF_CONFIRM: cli_printf(c, 18, "Reconfiguration confirmed"); break;
  case CONF_SHUTDOWN: cli_printf(c, 6, "Reconfiguration ignored, shutting down"); break;
  case CONF_NOTHING: cli_printf(c, 19, "Nothing to do"); break;
  }
}

static void
cfg_done_hook(void *data)
{
  (void) data;
  struct cli *c = cfg_wait.cli;
  cfg_wait.cli = NULL;
  if (!c)
    return;
  cfg_reply(c, config_commit_result());
  cli_cont_done(c);
  cli_resume(c);
}

/* Waiting is a continuation that never produces output by itself. */
static void
cfg_wait_cont(struct cli *c)
{
  cli_suspend(c);
}

/* A commit began (CONF_PROGRESS): the final line comes from cfg_done_hook. */
static void
cfg_wait_reply(struct cli *c)
{
  cfg_wait.cli = c;
  cli_set_cont(c, cfg_wait_cont, NULL, cfg_cli_cleanup);
  cli_suspend(c);
}

static struct event *
cfg_done_event(void)
{
  /* once: a reply sent but not yet run must not be reset */
  if (!cfg_wait.done.hook)
    ev_init(&cfg_wait.done, cfg_done_hook, NULL);
  return &cfg_wait.done;
}

static void
cfg_undo_notify(void)
{
  if (cfg_wait.timeout_cli)
    cli_async_printf(cfg_wait.timeout_cli, "Config timeout expired, starting undo");
}

void
cmd_configure(struct cli *c, const char *file, enum cfg_mode mode, uint timeout)
{
  if (cli_access_restricted(c))
    return;
  /* As BIRD 2: a configure forgets what it could undo before it reads the
   * file (a broken one leaves nothing to undo); check keeps it. */
  if (mode != CFG_CHECK)
    config_free_old();
  const char *path = file ? file : config_path();
  cli_printf(c, -2, "Reading configuration from %s", path);
  struct cf_error err;
  struct config *nc = config_parse_file(path, &err);
  if (!nc) {
    cli_printf(c, 8002, "%s", err.msg);
    return;
  }
  if (mode == CFG_CHECK) {
    config_unref(nc);
    cli_printf(c, 20, "Configuration OK");
    return;
  }
  /* As BIRD 2: the file named here is read this once; a plain configure,
   * configure check and SIGHUP read the one given with -c again. */
  nc->soft = mode == CFG_SOFT;
  int r = config_request(nc, timeout, cfg_done_event());
  if (r >= 0 && timeout) {
    config_set_undo_notify(cfg_undo_notify);
    cfg_wait.timeout_cli = c->id;
    cli_printf(c, -22, "Undo scheduled in %u s", timeout);
  }
  if (r == CONF_PROGRESS)
    cfg_wait_reply(c);
  else
    cfg_reply(c, r);
}

void
cmd_configure_confirm(struct cli *c)
{
  if (cli_access_restricted(c))
    return;
  cfg_reply(c, config_confirm());
}

void
cmd_configure_undo(struct cli *c)
{
  if (cli_access_restricted(c))
    return;
  cli_printf(c, -21, "Undo requested");
  int r = config_undo(cfg_done_event());
  if (r == CONF_PROGRESS)
    cfg_wait_reply(c);
  else
    cfg_reply(c, r);
}

void
cmd_configure_status(struct cli *c)
{
  switch (config_status()) {
  case CONF_SHUTDOWN: cli_printf(c, -6, "Shutdown in progress"); break;
  case CONF_QUEUED: cli_printf(c, -5, "Reconfiguration in progress, next one enqueued"); break;
  case CONF_PROGRESS: cli_printf(c, -4, "Reconfiguration in progress"); break;
  default: cli_printf(c, -3, "Daemon is up and running"); break;
  }
  btime left = config_undo_remains();
  if (left >= 0)
    cli_printf(c, -22, "Configuration unconfirmed, undo in %t s", left);
  cli_done(c);
}

/* --- misc --- */

void
cmd_down(struct cli *c)
{
  if (cli_access_restricted(c))
    return;
  cli_printf(c, 7, "Shutdown requested");
  config_start_shutdown();
}

/* BIRD: shut down so that neighbors keep our routes until we are back. */
void
cmd_graceful_restart(struct cli *c)
{
  if (cli_access_restricted(c))
    return;
  cli_printf(c, 25, "Graceful restart requested");
  gr_shutdown_request();
  config_start_shutdown();
}

void
cmd_restrict(struct cli *c)
{
  c->restricted = 1;
  cli_printf(c, 16, "Access restricted");
}

static void
dump_interfaces(void)
{
  rcu_read_lock();
  const struct iface_set *s = iface_current();
  debug_msg("Interfaces:\n");
  for (uint i = 0; i < s->count; i++) {
    const struct iface_info *ii = &s->ifs[i];
    debug_msg("  %s: index %u flags %x mtu %u\n", ii->iface->name, ii->iface->index, ii->flags, ii->mtu);
    for (uint k = 0; k < ii->addr_count; k++)
      debug_msg("    %I/%u\n", ii->addrs[k].ip, ii->addrs[k].prefix.pxlen);
  }
  rcu_read_unlock();
}

void
cmd_dump(struct cli *c, enum dump_what what)
{
  /* BIRD 2 lets a restricted session dump too */
  /* As BIRD 2: the text goes to the debug output, the reply is empty.
   * Sockets, events, neighbors, attributes and filters have no dump of
   * their own here (loops own their sockets and event queues, neighbors
   * are looked up in the interface snapshot): those reply only. */
  switch (what) {
  case DUMP_RESOURCES: rdump(root_pool(), 0); break;
  case DUMP_PROTOCOLS: protos_dump(); break;
  case DUMP_INTERFACES: dump_interfaces(); break;
  default: break;
  }
  cli_done(c);
}
