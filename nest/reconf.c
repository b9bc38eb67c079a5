/*
 * DOC: The running configuration, its replacement, and shutdown.
 *
 * Everything here runs in the main loop. A commit switches logging, sizes
 * the thread groups, creates and retires tables, then hands protocols
 * their new configs (protos_commit). The old config object stays alive as
 * long as some protocol still holds it.
 */
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "nest/reconf.h"
#include "nest/proto.h"
#include "nest/rt.h"
#include "nest/cli.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/par.h"

#define MAX_THREAD_GROUPS 16

static struct config *running;
static const char *cfg_path;
static int shutting_down;      /* main loop writes; protocol loops read (atomic) */
static uint shutdown_holds;     /* main loop: config_shutdown_hold() */
static btime boot_time, reconf_time;

struct tg_entry {
  const char *name;             /* malloc'd */
  struct sched *sched;
  struct par *par;              /* its helpers: one fewer than its threads */
};
static struct tg_entry groups[MAX_THREAD_GROUPS];
static uint group_count;
static struct sched *default_sched;

struct config *config_running(void) { return running; }
void config_set_path(const char *path) { free((void *) cfg_path); cfg_path = strdup(path); }
const char *config_path(void) { return cfg_path; }
int config_shutting_down(void) { return uatomic_read(&shutting_down); }
btime config_boot_time(void) { return boot_time; }
btime config_reconf_time(void) { return reconf_time; }

struct sched *
thread_group_sched(const char *name)
{
  if (name)
    for (uint i = 0; i < group_count; i++)
      if (!strcmp(groups[i].name, name))
        return groups[i].sched;
  return default_sched;
}

struct par *
thread_group_par(struct sched *s)
{
  for (uint i = 0; i < group_count; i++)
    if (groups[i].sched == s)
      return groups[i].par;
  return NULL;
}

/* A group of n threads: n - 1 of them may help a loop with a burst. */
static void
tg_size(struct tg_entry *g, uint n)
{
  sched_set_threads(g->sched, n);
  if (!g->par)
    g->par = par_new(g->sched);
  par_helpers(g->par, n ? n - 1 : 0);
}

static uint
default_threads(void)
{
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (uint) n : 1;
}

/* `threads N` sizes the default group ("worker"); `thread group` blocks
 * add groups, one of which may be the default. Groups are never removed
 * while loops may live on them; a group dropped from the config keeps
 * running with one thread. */
static void
threads_commit(struct config *c)
{
  uint n = c->threads ? c->threads : default_threads();
  if (!group_count) {
    groups[0].name = strdup("worker");
    groups[0].sched = sched_new("worker", n);
    group_count = 1;
  }
  default_sched = groups[0].sched;
  tg_size(&groups[0], n);

  LIST_WALK_ENTRY(tg, &c->thread_groups, struct thread_group_config, n) {
    struct tg_entry *g = NULL;
    for (uint i = 0; i < group_count; i++)
      if (!strcmp(groups[i].name, tg->sym->name))
        g = &groups[i];
    if (!g && group_count < MAX_THREAD_GROUPS) {
      g = &groups[group_count++];
      g->sched = sched_new(tg->sym->name, tg->threads);
      g->name = strdup(tg->sym->name);
    }
    if (!g)
      continue;
    tg_size(g, tg->threads);
    if (tg->is_default)
      default_sched = g->sched;
  }
}

/* BIRD's fallback: the lowest IPv4 address of a non-loopback interface. */
static u32
router_id_guess(void)
{
  struct ifaddrs *list, *a;
  u32 best = 0, lo = 0;
  if (getifaddrs(&list) < 0)
    return 0;
  for (a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET)
      continue;
    u32 ip = ip4_to_u32(ip4_get((const u8 *) &((struct sockaddr_in *) a->ifa_addr)->sin_addr));
    if (a->ifa_flags & 0x8 /* IFF_LOOPBACK */) {
      lo = lo ? MIN(lo, ip) : ip;
      continue;
    }
    best = best ? MIN(best, ip) : ip;
  }
  freeifaddrs(list);
  return best ? best : lo;
}

uint
config_commit_wait(struct config *new, struct event *done)
{
  struct config *old = running;
  char err[256];
  if (!new->router_id)
    new->router_id = old ? old->router_id : router_id_guess();
  if (log_switch(&new->logfiles, &new->tf_log, err, sizeof(err)) < 0)
    log_msg(L_ERR, "%s", err);
  threads_commit(new);
  rt_commit(new, old);
  running = new;
  reconf_time = time_real_now();
  uint changed = protos_commit(new, old, done);
  if (old)
    config_unref(old);
  return changed;
}

void
config_commit(struct config *new)
{
  if (!boot_time)
    boot_time = time_real_now();
  config_commit_wait(new, NULL);
}

void
config_start_shutdown(void)
{
  if (shutting_down)
    return;
  uatomic_set(&shutting_down, 1);
  log_msg(L_INFO, "Shutting down");
  protos_shutdown();
  config_shutdown_check();
}

void config_shutdown_hold(void) { shutdown_holds++; }

void
config_shutdown_release(void)
{
  shutdown_holds--;
  config_shutdown_check();
}

static uint pars_left;          /* main loop: helpers of groups not stopped yet */

static void
tg_par_gone(void *data UNUSED)
{
  if (!--pars_left)
    config_shutdown_check();
}

/* Protocols first, then tables (their loops must be gone before the
 * worker threads are joined), then the groups' helpers, then the main
 * loop may end. */
void
config_shutdown_check(void)
{
  static int tables_retired, pars_stopped;
  static struct event par_done[MAX_THREAD_GROUPS];
  if (!shutting_down || !protos_all_down() || shutdown_holds)
    return;
  if (!tables_retired) {
    tables_retired = 1;
    rt_shutdown();
  }
  if (!rt_all_gone())
    return;
  if (!pars_stopped) {
    pars_stopped = 1;
    for (uint i = 0; i < group_count; i++)
      if (groups[i].par) {
        pars_left++;
        ev_init(&par_done[i], tg_par_gone, NULL);
        par_stop(groups[i].par, &par_done[i]);
        groups[i].par = NULL;
      }
  }
  if (!pars_left)
    loop_main_quit();
}

void
threads_shutdown(void)
{
  for (uint i = 0; i < group_count; i++) {
    sched_free(groups[i].sched);
    free((void *) groups[i].name);
  }
  group_count = 0;
  default_sched = NULL;
}
