/*
 * DOC: Logging: classes, destinations, rate limiting.
 *
 * The running destinations form a `struct log_set` built by log_switch()
 * from the config's `log` statements. Before any switch, a static default
 * set sends everything but debug to stderr.
 *
 * Data flow of one message: the caller's text is formatted (bvsnprintf) on
 * the caller's stack without any lock, so %m sees the caller's errno. Then,
 * under log_lock, the time is formatted with the set's `timeformat log`, the
 * line "<time> <TAG> text\n" is assembled and written to each destination
 * whose mask has the class, with one write() per line (so lines from
 * concurrent threads never interleave), rotating size-limited files first.
 * Syslog gets the bare text with a class-derived priority.
 *
 * Locking: log_lock protects the current set and the file state (fd,
 * position). log_switch() opens the new files before taking the lock and
 * closes the old ones after releasing it, so the lock is held only for the
 * pointer swap. log_any_mask caches the union of the classes any
 * destination wants, so disabled classes (typically debug) cost no
 * formatting. Nothing in here may call bug() or log while holding the lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/printf.h"

const char *const log_class_names[L_MAX] = {
  [0] = "?",
  [L_DEBUG] = "debug",
  [L_TRACE] = "trace",
  [L_INFO] = "info",
  [L_REMOTE] = "remote",
  [L_WARN] = "warning",
  [L_ERR] = "error",
  [L_AUTH] = "auth",
  [L_FATAL] = "fatal",
  [L_BUG] = "bug",
};

const char *const log_class_tags[L_MAX] = {
  [0] = "?",
  [L_DEBUG] = "DBG",
  [L_TRACE] = "TRACE",
  [L_INFO] = "INFO",
  [L_REMOTE] = "RMT",
  [L_WARN] = "WARN",
  [L_ERR] = "ERR",
  [L_AUTH] = "AUTH",
  [L_FATAL] = "FATAL",
  [L_BUG] = "BUG",
};

/* As in BIRD */
static const int log_syslog_prio[L_MAX] = {
  [0] = LOG_DEBUG,
  [L_DEBUG] = LOG_DEBUG,
  [L_TRACE] = LOG_DEBUG,
  [L_INFO] = LOG_INFO,
  [L_REMOTE] = LOG_ERR,
  [L_WARN] = LOG_WARNING,
  [L_ERR] = LOG_ERR,
  [L_AUTH] = LOG_ERR,
  [L_FATAL] = LOG_CRIT,
  [L_BUG] = LOG_CRIT,
};

#define LOG_DEFAULT_MASK (L_ALL_MASK & ~(1U << L_DEBUG))
#define LOG_MSG_MAX 2048
#define LOG_LINE_MAX (LOG_MSG_MAX + TM_DATETIME_BUFFER_SIZE + 16)

#define LOG_RL_WINDOW (5 * TO_S)
#define LOG_RL_BURST 5

struct log_out {
  enum log_dest type;
  u32 mask;
  int fd;                 /* -1: file that could not be reopened */
  char *filename, *backup;
  u64 limit;
  u64 pos;                /* bytes in the file, for the size limit */
};

struct log_set {
  uint n;
  struct log_out *out;
  u32 any_mask;
  char *syslog_ident;     /* non-NULL iff some output is syslog */
  struct timeformat tf;
  char *fmt1, *fmt2;      /* owned copies of tf's strings */
};

static struct log_out log_default_out = {
  .type = LOG_DEST_STDERR, .mask = LOG_DEFAULT_MASK, .fd = 2,
};
static struct log_set log_default_set = {
  .n = 1, .out = &log_default_out, .any_mask = LOG_DEFAULT_MASK,
  .tf = { TM_ISO_LONG_MS, NULL, 0 },
};

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct log_set *log_cur = &log_default_set;   /* under log_lock */
static _Atomic u32 log_any_mask = LOG_DEFAULT_MASK;
static _Atomic int log_debug_stderr;
static _Atomic u32 log_echo_mask;
static void (*_Atomic log_echo_fn)(enum log_class, const char *);
static const char *log_progname = "bird";

void
log_init(const char *progname)
{
  if (progname)
  {
    const char *slash = strrchr(progname, '/');
    log_progname = slash ? slash + 1 : progname;
  }
}

void
log_set_debug_stderr(int on)
{
  atomic_store(&log_debug_stderr, !!on);
}

/*
 * Destination sets
 */

static void
log_set_free(struct log_set *s)
{
  if (s == &log_default_set)
    return;
  for (uint i = 0; i < s->n; i++)
  {
    struct log_out *o = &s->out[i];
    if (o->type == LOG_DEST_FILE && o->fd >= 0)
      close(o->fd);
    free(o->filename);
    free(o->backup);
  }
  free(s->out);
  free(s->syslog_ident);
  free(s->fmt1);
  free(s->fmt2);
  free(s);
}

static char *
log_strdup(const char *s)
{
  if (!s)
    return NULL;
  char *d = strdup(s);
  if (!d)
    die("Unable to allocate memory for the log config");
  return d;
}

static void *
log_calloc(size_t n, size_t size)
{
  void *p = calloc(n, size);
  if (!p)
    die("Unable to allocate memory for the log config");
  return p;
}

static int
log_out_open(struct log_out *o, const struct log_config *c, char *err, size_t errlen)
{
  o->fd = open(c->filename, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (o->fd < 0)
  {
    if (err && errlen)
      snprintf(err, errlen, "Unable to open log file '%s': %s", c->filename, strerror(errno));
    return -1;
  }

  struct stat st;
  o->pos = fstat(o->fd, &st) < 0 ? 0 : (u64) st.st_size;
  o->filename = log_strdup(c->filename);
  o->backup = log_strdup(c->backup);
  o->limit = c->limit;
  return 0;
}

static struct log_set *
log_set_new(struct lnode *configs, const struct timeformat *tf, char *err, size_t errlen)
{
  uint n = configs ? list_length(configs) : 0;
  struct log_set *s = log_calloc(1, sizeof(*s));
  s->out = log_calloc(n ? n : 1, sizeof(struct log_out));

  if (!n)
    s->out[s->n++] = (struct log_out) { .type = LOG_DEST_STDERR, .mask = LOG_DEFAULT_MASK, .fd = 2 };
  else
    LIST_WALK_ENTRY(c, configs, struct log_config, n)
    {
      struct log_out *o = &s->out[s->n++];
      o->type = c->dest;
      o->mask = c->mask & L_ALL_MASK;
      o->fd = -1;

      switch (c->dest)
      {
      case LOG_DEST_STDERR:
        o->fd = 2;
        break;
      case LOG_DEST_FILE:
        if (log_out_open(o, c, err, errlen) < 0)
          goto fail;
        break;
      case LOG_DEST_SYSLOG:
        /* One identity per process: the last syslog statement wins */
        free(s->syslog_ident);
        s->syslog_ident = log_strdup(c->syslog_name ? c->syslog_name : log_progname);
        break;
      default:
        if (err && errlen)
          snprintf(err, errlen, "Unknown log destination %d", (int) c->dest);
        goto fail;
      }
    }

  for (uint i = 0; i < s->n; i++)
    s->any_mask |= s->out[i].mask;

  if (!tf)
    tf = &tf_default_log;
  s->fmt1 = log_strdup(tf->fmt1 ? tf->fmt1 : TM_ISO_LONG_MS);
  s->fmt2 = log_strdup(tf->fmt2);
  s->tf = (struct timeformat) { s->fmt1, s->fmt2, tf->limit };
  return s;

fail:
  log_set_free(s);
  return NULL;
}

int
log_switch(struct lnode *configs, const struct timeformat *tf, char *err, size_t errlen)
{
  struct log_set *s = log_set_new(configs, tf, err, errlen);
  if (!s)
    return -1;

  pthread_mutex_lock(&log_lock);
  struct log_set *old = log_cur;
  if (s->syslog_ident)
    openlog(s->syslog_ident, LOG_CONS | LOG_NDELAY, LOG_DAEMON);
  else if (old->syslog_ident)
    closelog();
  log_cur = s;
  atomic_store(&log_any_mask, s->any_mask);
  pthread_mutex_unlock(&log_lock);

  /* Nobody can reach the old set now: it was only used under the lock */
  log_set_free(old);
  return 0;
}

/*
 * Output
 */

static void
log_write_all(int fd, const char *buf, size_t len)
{
  while (len)
  {
    ssize_t w = write(fd, buf, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return;   /* nowhere to report it */
    buf += w;
    len -= w;
  }
}

/* The file is over its limit: move it to the backup name, start afresh. */
static void
log_rotate(struct log_out *o)
{
  close(o->fd);
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
  if (!o->backup || rename(o->filename, o->backup) < 0)
    flags |= O_TRUNC;   /* no backup (or it failed): keep the limit anyway */

  o->fd = open(o->filename, flags, 0644);
  o->pos = 0;
  if (o->fd < 0)
  {
    char msg[512];
    int len = snprintf(msg, sizeof(msg), "Unable to reopen log file '%s': %s\n",
                       o->filename, strerror(errno));
    log_write_all(2, msg, MIN((size_t) len, sizeof(msg) - 1));
  }
}

static void
log_out_write(struct log_out *o, const char *line, size_t len)
{
  if (o->type == LOG_DEST_FILE)
  {
    if (o->fd >= 0 && o->limit && o->pos > 0 && o->pos + len > o->limit)
      log_rotate(o);
    if (o->fd < 0)
      return;
  }
  log_write_all(o->fd, line, len);
  o->pos += len;
}

static void
log_emit(enum log_class cls, const char *msg)
{
  char line[LOG_LINE_MAX];
  size_t len = 0;
  int echo = atomic_load(&log_debug_stderr);
  u32 bit = 1U << cls;

  pthread_mutex_lock(&log_lock);
  struct log_set *s = log_cur;

  if ((s->any_mask & bit) || echo)
  {
    tm_format_time(line, TM_DATETIME_BUFFER_SIZE, &s->tf, time_real_now());
    len = strlen(line);
    len += snprintf(line + len, sizeof(line) - len, " <%s> %s\n", log_class_tags[cls], msg);
    if (len >= sizeof(line))
    {
      len = sizeof(line) - 1;
      line[len - 1] = '\n';
    }
  }

  for (uint i = 0; i < s->n; i++)
  {
    struct log_out *o = &s->out[i];
    if (!(o->mask & bit))
      continue;
    if (o->type == LOG_DEST_SYSLOG)
      syslog(log_syslog_prio[cls], "%s", msg);
    else
    {
      log_out_write(o, line, len);
      if (o->fd == 2)
        echo = 0;   /* already on stderr */
    }
  }
  if (echo)
    log_write_all(2, line, len);

  pthread_mutex_unlock(&log_lock);
}

void
log_vmsg(enum log_class cls, const char *fmt, va_list args)
{
  if (cls < L_DEBUG || cls >= L_MAX)
    cls = L_BUG;
  u32 echo = atomic_load_explicit(&log_echo_mask, memory_order_relaxed) & (1U << cls);
  if (!(atomic_load_explicit(&log_any_mask, memory_order_relaxed) & (1U << cls)) &&
      !atomic_load_explicit(&log_debug_stderr, memory_order_relaxed) && !echo)
    return;

  char msg[LOG_MSG_MAX];
  int n = bvsnprintf(msg, sizeof(msg), fmt, args);
  size_t len = n < 0 ? 0 : MIN((size_t) n, sizeof(msg) - 1);
  msg[len] = 0;
  /* The line ends with our own newline; tolerate callers adding one */
  while (len && msg[len - 1] == '\n')
    msg[--len] = 0;

  if (echo) {
    void (*fn)(enum log_class, const char *) = atomic_load(&log_echo_fn);
    if (fn)
      fn(cls, msg);
  }
  log_emit(cls, msg);
}

void
log_set_echo(u32 mask, void (*fn)(enum log_class cls, const char *msg))
{
  if (fn)
    atomic_store(&log_echo_fn, fn);
  atomic_store(&log_echo_mask, fn ? mask : 0);
}

void
log_msg(enum log_class cls, const char *fmt, ...)
{
  va_list args;
  va_start(args, fmt);
  log_vmsg(cls, fmt, args);
  va_end(args);
}

void
debug_msg(const char *fmt, ...)
{
  va_list args;
  va_start(args, fmt);
  log_vmsg(L_DEBUG, fmt, args);
  va_end(args);
}

/*
 * The rate limiter belongs to its caller's loop, like the thing it limits,
 * so it needs no atomics.
 */
void
log_rl(struct log_rate *rl, enum log_class cls, const char *fmt, ...)
{
  btime now = time_mono_now();

  if (!rl->window_start || now - rl->window_start >= LOG_RL_WINDOW)
  {
    if (rl->dropped)
      log_msg(cls, "... %u messages suppressed", rl->dropped);
    rl->window_start = now;
    rl->count = 0;
    rl->dropped = 0;
  }

  if (rl->count >= LOG_RL_BURST)
  {
    rl->dropped++;
    return;
  }
  rl->count++;

  va_list args;
  va_start(args, fmt);
  log_vmsg(cls, fmt, args);
  va_end(args);
}

void
bug(const char *fmt, ...)
{
  va_list args;
  va_start(args, fmt);
  log_vmsg(L_BUG, fmt, args);
  va_end(args);
  abort();
}

void
die(const char *fmt, ...)
{
  va_list args;
  va_start(args, fmt);
  log_vmsg(L_FATAL, fmt, args);
  va_end(args);
  exit(1);
}
