/*
 * DOC: Control socket and CLI sessions (main loop).
 *
 * The listening socket and every session are loop_fds of the main loop.
 * Input lines are executed one at a time, in order; while a command is
 * still producing output (continuation) or waits for another loop
 * (suspended), later lines stay in the buffer. Output is queued in chunks
 * and written with non-blocking sends; a client that does not read only
 * fills its own queue, and its command's continuation is not called again
 * until the queue drains below CLI_TX_HIGH.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "nest/cli.h"
#include "nest/reconf.h"
#include "conf/conf.h"
#include "lib/log.h"
#include "lib/printf.h"
#include "lib/timeutil.h"

static struct loop_fd listen_fd;
static int listen_sock = -1;
static const char *listen_path;
static struct lnode sessions = { &sessions, &sessions };
static u32 cli_next_id = 1;

static void cli_process_input(struct cli *c);
static void cli_free(struct cli *c);
static void cli_flush(struct cli *c);

/* --- Output --- */

void
cli_vprintf(struct cli *c, int code, const char *fmt, va_list args)
{
  char line[CLI_LINE_SIZE + 8];
  int final = code >= 0;
  int cd = final ? code : -code;
  int pre;
  if (!final && cd == c->last_code)
    pre = bsnprintf(line, sizeof(line), " ");
  else
    pre = bsnprintf(line, sizeof(line), "%04d%c", cd, final ? ' ' : '-');
  /* As BIRD: the text gets what is left of the 512 bytes but one; what does
   * not fit is replaced by a line of its own code, 8000 */
  int n = bvsnprintf(line + pre, CLI_LINE_SIZE - pre - 1, fmt, args);
  if (n < 0 || n >= CLI_LINE_SIZE - pre - 1) {
    cli_printf(c, final ? 8000 : -8000, "<line overflow>");
    return;
  }
  line[pre + n] = '\n';
  txq_append(&c->tx, line, pre + n + 1);
  c->last_code = final ? 0 : cd;
}

void
cli_printf(struct cli *c, int code, const char *fmt, ...)
{
  va_list args;
  va_start(args, fmt);
  cli_vprintf(c, code, fmt, args);
  va_end(args);
}

/* BIRD's spontaneous printout: "+text", outside any reply's framing. */
void
cli_async_printf(u32 id, const char *fmt, ...)
{
  LIST_WALK_ENTRY(c, &sessions, struct cli, n) {
    if (c->id != id || c->closing)
      continue;
    char line[CLI_LINE_SIZE + 8];
    va_list args;
    va_start(args, fmt);
    int n = bvsnprintf(line + 1, CLI_LINE_SIZE - 2, fmt, args);
    va_end(args);
    if (n < 0)
      return;
    line[0] = '+';
    line[n + 1] = '\n';
    txq_append(&c->tx, line, n + 2);
    cli_flush(c);
    return;
  }
}

int cli_tx_room(struct cli *c) { return txq_queued(&c->tx) < CLI_TX_HIGH; }
struct lnode *cli_session_list(void) { return &sessions; }

/* Echo lines go out between replies only, as in BIRD; so does its notice
 * of lines that did not fit, first and without the '+'. */
static void
cli_echo_flush(struct cli *c)
{
  if (c->echo_lost) {
    char line[64];
    int n = bsnprintf(line, sizeof(line), "<%u messages lost>\n", c->echo_lost);
    txq_append(&c->tx, line, n);
    c->echo_lost = 0;
  }
  if (c->echo_len)
    txq_append(&c->tx, c->echo_buf, c->echo_len);
  c->echo_len = 0;
}

void
cli_echo_push(struct cli *c, const char *msg)
{
  size_t len = strlen(msg);
  if (c->closing || !c->echo_buf)
    return;
  if (len + 2 > c->echo_size - c->echo_len) {
    c->echo_lost++;
    return;
  }
  c->echo_buf[c->echo_len++] = '+';
  memcpy(c->echo_buf + c->echo_len, msg, len);
  c->echo_len += len;
  c->echo_buf[c->echo_len++] = '\n';
  if (!c->cont && !c->suspended) {
    cli_echo_flush(c);
    cli_flush(c);
  }
}

static void
cli_flush(struct cli *c)
{
  int rv = txq_flush(&c->tx, c->fd.fd);
  if (rv < 0)
    c->closing = 1;
  loop_fd_want_tx(&c->fd, rv > 0);
}

/* A continuation's time before the others in the main loop get theirs:
 * with the loop's whole budget (10 ms) every other CLI session waited
 * 20-50 ms for each command while one client read a listing of a million
 * routes; with this slice 0.6-0.8 ms (BIRD 2: 0.1-0.2), and the listing
 * takes as long (bench/cli_stall.py). A slice costs a round of the loop. */
#define CLI_SLICE ((btime) 200)   /* us */

/* Run the continuation while there is room, then send; then go on with
 * pipelined input once the command is complete. A continuation waits for
 * the socket (tx event), for a resume (suspended), or for the next run of
 * the loop when its slice or the loop's budget is used up. */
static void
cli_pump(struct cli *c)
{
  btime slice_end = time_mono_now() + CLI_SLICE;
  for (;;) {
    int slice_left = 1;
    while (c->cont && !c->suspended && cli_tx_room(c) && !c->closing && loop_budget_left() > 0 &&
           (slice_left = time_mono_now() < slice_end))
      c->cont(c);
    if (!c->cont && !c->suspended && (c->echo_len || c->echo_lost))
      cli_echo_flush(c);
    cli_flush(c);
    if (c->closing || c->suspended)
      break;
    if (c->cont) {
      if (loop_budget_left() <= 0 || !slice_left) {
        loop_yield();
        ev_schedule(&c->resume_ev);
        break;
      }
      if (cli_tx_room(c))
        continue;
      break;                    /* the tx handler pumps again */
    }
    size_t before = c->rx_len;
    cli_process_input(c);
    if (c->rx_len == before && !c->cont)
      break;
  }
  if (c->closing)
    cli_free(c);
}

void
cli_set_cont(struct cli *c, cli_cont_fn fn, void *data, void (*cleanup)(struct cli *))
{
  c->cont = fn;
  c->cont_data = data;
  c->cont_cleanup = cleanup;
}

void
cli_cont_done(struct cli *c)
{
  c->cont = NULL;
  c->cont_data = NULL;
  c->cont_cleanup = NULL;
}

void cli_suspend(struct cli *c) { c->suspended = 1; }

static void
cli_resume_hook(void *data)
{
  struct cli *c = data;
  c->suspended = 0;
  cli_pump(c);
}

void
cli_resume(struct cli *c)
{
  ev_send(main_loop(), &c->resume_ev);
}

int
cli_access_restricted(struct cli *c)
{
  if (!c->restricted)
    return 0;
  cli_printf(c, 8007, "Access denied");
  return 1;
}

/* --- Input --- */

static void
cli_process_input(struct cli *c)
{
  while (!c->cont && !c->suspended && !c->closing) {
    char *nl = memchr(c->rx, '\n', c->rx_len);
    if (!nl) {
      if (c->rx_len >= sizeof(c->rx) - 1) {
        /* No newline within the buffer: refuse the line and skip to its end. */
        c->rx_overflow = 1;
        c->rx_len = 0;
      }
      return;
    }
    *nl = 0;
    size_t linelen = nl - c->rx;
    if (c->rx_overflow) {
      c->rx_overflow = 0;
      cli_printf(c, 9000, "Command too long");
    } else {
      /* Drop CRs, as BIRD does. */
      char *w = c->rx;
      for (char *r = c->rx; r < nl; r++)
        if (*r != '\r')
          *w++ = *r;
      *w = 0;
      c->last_code = 0;
      cf_cli_parse(c, c->rx, config_running());
    }
    memmove(c->rx, nl + 1, c->rx_len - linelen - 1);
    c->rx_len -= linelen + 1;
  }
}

static void
cli_rx(struct loop_fd *f)
{
  struct cli *c = f->data;
  for (;;) {
    if (c->rx_len >= sizeof(c->rx) - 1) {
      if (c->cont || c->suspended) {
        /* Busy with a command: leave further input in the socket. */
        loop_fd_again(f, LOOP_FD_READ);
        break;
      }
      cli_process_input(c);
      if (c->rx_len >= sizeof(c->rx) - 1)
        break;
    }
    ssize_t n = recv(f->fd, c->rx + c->rx_len, sizeof(c->rx) - 1 - c->rx_len, MSG_DONTWAIT);
    if (n == 0) {
      c->closing = 1;
      break;
    }
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        c->closing = 1;
      break;
    }
    c->rx_len += n;
    if (!c->cont && !c->suspended)
      cli_process_input(c);
  }
  cli_pump(c);
}

static void
cli_tx(struct loop_fd *f)
{
  cli_pump(f->data);
}

static void
cli_err(struct loop_fd *f)
{
  struct cli *c = f->data;
  c->closing = 1;
  cli_pump(c);
}

static void
cli_free(struct cli *c)
{
  if (c->cont_cleanup)
    c->cont_cleanup(c);
  cli_echo_set(c, 0, 0);
  txq_clear(&c->tx);
  loop_fd_remove(&c->fd);
  close(c->fd.fd);
  list_del(&c->n);
  rfree(c->pool);
}

static void
cli_new(int fd)
{
  pool *p = rp_new(root_pool(), MEM_PROTOCOLS, "CLI");
  struct cli *c = mb_allocz(p, sizeof(struct cli));
  c->pool = p;
  c->parse_mem = lp_new(p);
  c->id = cli_next_id++;
  txq_init(&c->tx, MEM_PROTOCOLS);
  ev_init(&c->resume_ev, cli_resume_hook, c);
  list_add_tail(&sessions, &c->n);
  c->fd.rx = cli_rx;
  c->fd.tx = cli_tx;
  c->fd.err = cli_err;
  c->fd.data = c;
  loop_fd_add(main_loop(), &c->fd, fd);
  cli_printf(c, 1, "BIRD %s ready.", PACKAGE_VERSION);
  cli_flush(c);
}

static void
cli_accept(struct loop_fd *f)
{
  for (;;) {
    int fd = accept4(f->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        log_msg(L_ERR, "CLI accept: %m");
      return;
    }
    cli_new(fd);
  }
}

int
cli_listen(const char *path)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  if (strlen(path) >= sizeof(sa.sun_path)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(sa.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  unlink(path);
  mode_t old = umask(0117);   /* srw-rw---- as BIRD */
  int rv = bind(fd, (struct sockaddr *) &sa, sizeof(sa));
  umask(old);
  if (rv < 0 || listen(fd, 64) < 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  listen_sock = fd;
  listen_path = strdup(path);
  listen_fd.rx = cli_accept;
  listen_fd.data = NULL;
  loop_fd_add(main_loop(), &listen_fd, fd);
  return 0;
}

void
cli_shutdown(void)
{
  LIST_WALK_ENTRY_SAFE(c, &sessions, struct cli, n)
    cli_free(c);
  if (listen_sock >= 0) {
    loop_fd_remove(&listen_fd);
    close(listen_sock);
    listen_sock = -1;
    unlink(listen_path);
  }
}

