/*
 * DOC: The daemon: command line, start-up, signals, shutdown.
 *
 *   bird [-c config] [-s socket] [-P pidfile] [-f] [-d] [-l] [-p] [-R]
 *
 * Start-up forks into the background first unless -f/-d (the parent
 * waits until the child is up, so what fails before reaches the terminal
 * and the exit code), parses the config (`-p` and broken configs fail
 * fast with file:line:col), opens the control socket, writes the pid
 * file, commits the config and runs the main loop.
 * Signals reach the main loop through a self-pipe: SIGHUP reconfigures,
 * SIGTERM/SIGINT shut down cleanly, SIGUSR1 dumps state to the log. A
 * signalfd would need the signals blocked in every thread, and liburcu's
 * call_rcu thread keeps SIGUSR1 open; a handler that only writes the
 * signal number to a pipe is safe on whichever thread takes the signal.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "conf/conf.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/rcu.h"
#include "lib/resource.h"
#include "lib/slab_shared.h"
#include "filter/filter.h"
#include "nest/cli.h"
#include "nest/iface.h"
#include "nest/proto.h"
#include "nest/reconf.h"
#include "nest/gr_recovery.h"
#include "nest/rt.h"
#include "proto/protos.h"

#ifndef PATH_CONFIG_FILE_DEFAULT
#define PATH_CONFIG_FILE_DEFAULT "/etc/bird/bird.conf"
#endif
#ifndef PATH_CONTROL_SOCKET_DEFAULT
#define PATH_CONTROL_SOCKET_DEFAULT "/run/bird/bird.ctl"
#endif

struct options {
  const char *config;
  const char *socket;
  const char *pidfile;
  int foreground;
  int debug;
  int parse_only;
  int self_test;              /* -T: run the config's bt_test_suite functions */
  int gr_recovery;            /* -R: graceful restart recovery */
};

static struct loop_fd sig_fd;
static struct timer trim_timer;

/* Resident memory of the process, 0 if unknown. */
static u64
rss_bytes(void)
{
  static int fd = -1;
  char buf[128];
  if (fd < 0 && (fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)) < 0)
    return 0;
  ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0)
    return 0;
  buf[n] = 0;
  unsigned long size, resident;
  if (sscanf(buf, "%lu %lu", &size, &resident) != 2)
    return 0;
  return (u64) resident * (u64) sysconf(_SC_PAGESIZE);
}

/* Bursts (a full feed to every peer at once) leave freed memory in
 * malloc's arenas; give it back to the system once such a burst is over
 * (what we account fell well below its peak), while one goes on (resident
 * memory well above what we account: freed, not yet returned), and every
 * 10 s anyway. */
static void
trim_hook(struct timer *t)
{
  (void) t;
  static u64 peak, slack;      /* slack: resident beyond accounted that a trim left */
  static uint ticks;
  /* Chunks of routes and nets that emptied (peers gone) go back first, so
   * what is accounted below is what stays. */
  shslab_trim_all();
  u64 now = 0;
  for (int i = 0; i < MEM_CLASS_MAX; i++) {
    struct mem_usage u;
    mem_class_usage(i, &u);
    now += u.effective + u.overhead;
  }
  peak = MAX(peak, now);
  u64 rss = rss_bytes();
  if (++ticks >= 40 || (peak - now > (4 << 20) && now < peak / 4 * 3) ||
      rss > now + slack + (16 << 20)) {
    malloc_trim(0);
    rss = rss_bytes();
    slack = rss > now ? rss - now : 0;
    peak = now;
    ticks = 0;
  }
}
static int sig_pipe[2] = { -1, -1 };
static const char *pid_path;

static void
self_test_print(void *ctx, const char *line)
{
  (void) ctx;
  printf("%s\n", line);
  fflush(stdout);
}

/*
 * `bird -T` with protocols that fill tables from the config (static: ROA
 * and ASPA records for roa_check/aspa_check suites): the config runs as
 * the daemon would run it, without a control socket, and the tests start
 * once every such protocol has announced its routes (polled: nothing else
 * tells the main loop). Then the daemon shuts down as on SIGTERM.
 */
#define SELF_TEST_POLL (MS_ 1)
#define SELF_TEST_PATIENCE (30 * S_ 1)

struct self_test_live {
  struct config *conf;
  struct timer poll;
  btime deadline;
  int failed;
};

static int
self_test_needs_protocols(struct config *c)
{
  LIST_WALK_ENTRY(pc, &c->protos, struct proto_config, n)
    if (pc->class->announced && !pc->disabled)
      return 1;
  return 0;
}

static void
self_test_poll(struct timer *t)
{
  struct self_test_live *st = t->data;
  uint count;
  int ready = protos_all_announced(&count);
  if (!ready && loop_now() < st->deadline)
    return;
  tm_stop(t);
  if (!ready) {
    fprintf(stderr, "bird: protocols did not announce their routes in time\n");
    st->failed = 1;
  } else
    st->failed = filter_run_tests(st->conf, self_test_print, NULL);
  config_start_shutdown();
}

static int
self_test_run_live(struct config *c)
{
  static struct self_test_live st;
  st.conf = c;
  sched_main_init();
  config_commit(c);
  tm_init(&st.poll, main_loop(), self_test_poll, &st);
  st.poll.recurrent = SELF_TEST_POLL;
  st.deadline = loop_now() + SELF_TEST_PATIENCE;
  tm_start(&st.poll, SELF_TEST_POLL);
  sched_main_run();
  threads_shutdown();
  rcu_barrier();
  return st.failed ? 1 : 0;
}

static void
usage(FILE *f)
{
  fprintf(f, "Usage: bird [--version] [--help] [-c <config-file>] [-d] [-D <debug-file>] [-f] [-l] [-p] [-P <pid-file>] [-s <control-socket>]\n"
             "\n"
             "Options:\n"
             "  -c <config-file>     Use given configuration file instead of %s\n"
             "  -d                   Enable debug messages and run bird in foreground\n"
             "  -D <debug-file>      Log debug messages to given file instead of stderr\n"
             "  -f                   Run bird in foreground\n"
             "  -l                   Look for a configuration file and a control socket in the cwd\n"
             "  -p                   Test configuration file and exit without start\n"
             "  -P <pid-file>        Create a PID file with given filename\n"
             "  -s <control-socket>  Use given filename for a control socket\n"
             "  -T                   Run the filter self-tests (bt_test_suite) of the config and exit\n"
             "  --version            Display version of BIRD\n", PATH_CONFIG_FILE_DEFAULT);
}

static void
parse_args(int argc, char **argv, struct options *o)
{
  static const struct option longopts[] = {
    { "version", no_argument, NULL, 'V' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int c;
  o->config = PATH_CONFIG_FILE_DEFAULT;
  o->socket = PATH_CONTROL_SOCKET_DEFAULT;
  while ((c = getopt_long(argc, argv, "c:dD:fglpP:Rs:Tu:", longopts, NULL)) >= 0)
    switch (c) {
    case 'c': o->config = optarg; break;
    case 'd': o->debug = 1; o->foreground = 1; break;
    case 'D': o->debug = 1; break;
    case 'f': o->foreground = 1; break;
    case 'l': o->config = "bird.conf"; o->socket = "bird.ctl"; break;
    case 'p': o->parse_only = 1; break;
    case 'T': o->self_test = 1; break;
    case 'P': o->pidfile = optarg; break;
    case 's': o->socket = optarg; break;
    case 'R': o->gr_recovery = 1; break;
    case 'g': case 'u': break;   /* accepted for compatibility */
    case 'V': printf("BIRD version %s\n", PACKAGE_VERSION); exit(0);
    case 'h': usage(stdout); exit(0);
    default: usage(stderr); exit(1);
    }
  if (optind < argc) {
    usage(stderr);
    exit(1);
  }
}

static void
write_pidfile(const char *path)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0664);
  if (fd < 0)
    die("Cannot create PID file %s: %m", path);
  char buf[32];
  int n = snprintf(buf, sizeof(buf), "%ld\n", (long) getpid());
  if (write(fd, buf, n) != n)
    die("Cannot write PID file %s: %m", path);
  close(fd);
  pid_path = path;
}

/* Forked before anything starts a thread: liburcu's workers (call_rcu's,
 * the hash table's resizer) do not survive a fork, and the one liburcu
 * makes again in the child spun on a core for good. The child does the
 * whole start-up with the terminal as its stderr, so a broken config or
 * a control socket it cannot make is reported there, and tells the
 * parent through a pipe once it is up (daemon_detach); the parent exits
 * 0 then, or with the child's status if it died first. Returns the
 * pipe's end for daemon_detach. */
static int
daemon_fork(void)
{
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) < 0)
    die("pipe: %m");
  pid_t pid = fork();
  if (pid < 0)
    die("fork: %m");
  if (pid) {
    close(ready[1]);
    char up;
    ssize_t n;
    while ((n = read(ready[0], &up, 1)) < 0 && errno == EINTR)
      ;
    if (n == 1)
      _exit(0);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
      ;
    _exit(WIFEXITED(st) && WEXITSTATUS(st) ? WEXITSTATUS(st) : 1);
  }
  close(ready[0]);
  return ready[1];
}

/* Up: a session of its own, the terminal let go, the parent told. */
static void
daemon_detach(int ready)
{
  setsid();
  int fd = open("/dev/null", O_RDWR);
  if (fd >= 0) {
    dup2(fd, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    if (fd > 2)
      close(fd);
  }
  char up = 1;
  if (write(ready, &up, 1) != 1)
    log_msg(L_WARN, "Cannot tell the parent the daemon is up: %m");
  close(ready);
}

static void
reconfigure_from_signal(void)
{
  /* As BIRD 2: through the same requests as `configure` (queued while
   * one is in progress; "Reconfigured" is logged when it is over). */
  config_free_old();
  log_msg(L_INFO, "Reconfiguration requested by SIGHUP");
  struct cf_error err;
  struct config *c = config_parse_file(config_path(), &err);
  if (!c) {
    log_msg(L_ERR, "%s", err.msg);
    return;
  }
  config_request(c, 0, NULL);
}

static void
signal_handler(int sig)
{
  int e = errno;
  u8 b = sig;
  if (write(sig_pipe[1], &b, 1) < 0) {
    /* pipe full: the loop is behind anyway, the signal is coalesced */
  }
  errno = e;
}

static void
signal_rx(struct loop_fd *f)
{
  u8 sig;
  while (read(f->fd, &sig, 1) == 1)
    switch (sig) {
    case SIGHUP: reconfigure_from_signal(); break;
    case SIGTERM:
    case SIGINT: config_start_shutdown(); break;
    case SIGUSR1:
      log_msg(L_INFO, "Dumping state on SIGUSR1");
      rdump(root_pool(), 0);
      protos_dump();
      break;
    }
}

static sigset_t
handled_signals(void)
{
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGHUP);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGUSR1);
  return s;
}

int
main(int argc, char **argv)
{
  struct options o = { 0 };
  parse_args(argc, argv, &o);
  int ready = !o.foreground && !o.parse_only && !o.self_test ? daemon_fork() : -1;

  /* Blocked while threads are created, so they inherit the block. */
  sigset_t sigs = handled_signals();
  pthread_sigmask(SIG_BLOCK, &sigs, NULL);
  signal(SIGPIPE, SIG_IGN);

  /* Few malloc arenas: per-thread arenas multiply the high-water mark of
   * bursts (every peer's feed at once) and rarely shrink. */
  mallopt(M_ARENA_MAX, 2);
  /* Big blocks (export maps, buffers) mapped and unmapped on their own. A
   * fixed threshold: glibc's default one rises to the size of each big
   * block freed, after which their successors fragment the arena. */
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  resource_init();
  log_init("bird");
  hash_seed_init();
  ea_init();
  f_user_attr_init();
  protos_build_all();

  struct cf_error err;
  struct config *c = config_parse_file(o.config, &err);
  if (!c) {
    fprintf(stderr, "bird: %s\n", err.msg);
    return 1;
  }
  if (o.self_test && self_test_needs_protocols(c))
    return self_test_run_live(c);
  if (o.self_test) {
    /* Filter self-tests: one line per suite, then "N passed, M failed". */
    int failed = filter_run_tests(c, self_test_print, NULL);
    config_unref(c);
    return failed ? 1 : 0;
  }
  if (o.parse_only) {
    config_unref(c);
    return 0;
  }
  config_set_path(o.config);
  if (o.debug)
    log_set_debug_stderr(1);

  sched_main_init();
  if (cli_listen(o.socket) < 0)
    die("Cannot create control socket %s: %m", o.socket);
  if (o.pidfile)
    write_pidfile(o.pidfile);

  if (pipe2(sig_pipe, O_NONBLOCK | O_CLOEXEC) < 0)
    die("pipe: %m");
  sig_fd.rx = signal_rx;
  loop_fd_add(main_loop(), &sig_fd, sig_pipe[0]);
  struct sigaction sa = { .sa_handler = signal_handler, .sa_flags = SA_RESTART };
  sigemptyset(&sa.sa_mask);
  for (int s2 = 1; s2 < NSIG; s2++)
    if (sigismember(&sigs, s2))
      sigaction(s2, &sa, NULL);

  tm_init(&trim_timer, main_loop(), trim_hook, NULL);
  trim_timer.recurrent = S_ 1 / 4;
  tm_start(&trim_timer, S_ 1 / 4);

  if (o.gr_recovery)
    gr_recovery_start(c->gr_wait);
  config_commit(c);
  if (o.gr_recovery)
    gr_recovery_check();
  /* Worker threads exist now, with the signals blocked; take them here. */
  pthread_sigmask(SIG_UNBLOCK, &sigs, NULL);
  if (ready >= 0)
    daemon_detach(ready);
  log_msg(L_INFO, "Started");
  sched_main_run();

  cli_shutdown();
  threads_shutdown();
  rcu_barrier();          /* pending frees done before exit */
  if (pid_path)
    unlink(pid_path);
  log_msg(L_INFO, "Shutdown completed");
  return 0;
}
