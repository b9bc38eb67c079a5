/*
 * Unit tests for lib/loop.c's file descriptors: reading and writing
 * through loop_fd hooks, edge-triggered readiness asked again, errors,
 * removal with events still pending, and fds served while an event takes
 * every run's budget.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/test_loop.h"

struct fdt {
  struct loop_fd f;
  int sv[2];
  u8 *buf;
  size_t target;
  size_t done_bytes;        /* atomic (size_t via __atomic) */
  int rx_calls, tx_calls, err_calls;
  int eof, not_eagain, bad_data;
  int done;                 /* atomic */
  struct loop *l;
};

static inline u8 pattern(size_t i) { return (u8) (i % 251); }

/* n bytes read: checked against the pattern where the stream is. */
static void
fdt_take(struct fdt *t, const u8 *buf, ssize_t n)
{
  size_t at = __atomic_load_n(&t->done_bytes, __ATOMIC_RELAXED);
  for (ssize_t i = 0; i < n; i++)
    if (buf[i] != pattern(at + i))
      t->bad_data++;
  __atomic_store_n(&t->done_bytes, at + n, __ATOMIC_SEQ_CST);
}

static void
fdt_rx(struct loop_fd *f)
{
  struct fdt *t = container_of(f, struct fdt, f);
  t->rx_calls++;
  u8 buf[3000];
  for (;;)
  {
    ssize_t n = read(f->fd, buf, sizeof(buf));
    if (n > 0)
    {
      fdt_take(t, buf, n);
      continue;
    }
    if (n == 0)
      astore(&t->eof, 1);
    else if (errno != EAGAIN)
      t->not_eagain++;
    return;
  }
}

static void
fdt_socketpair(struct fdt *t)
{
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, t->sv), 0);
}

static void
fdt_add(void *data)
{
  struct fdt *t = data;
  loop_fd_add(t->l, &t->f, t->sv[0]);
}

static void
fdt_remove(void *data)
{
  struct fdt *t = data;
  loop_fd_remove(&t->f);
}

/* Write len bytes of the pattern from the test thread, waiting for room. */
static void
write_pattern(int fd, size_t len)
{
  u8 buf[4096];
  size_t at = 0;
  while (at < len)
  {
    size_t n = MIN(sizeof(buf), len - at);
    for (size_t i = 0; i < n; i++)
      buf[i] = pattern(at + i);
    ssize_t w = write(fd, buf, n);
    if (w < 0)
    {
      assert_int_equal(errno, EAGAIN);
      struct pollfd p = { .fd = fd, .events = POLLOUT };
      assert_int_equal(poll(&p, 1, WAIT_S * 1000), 1);
      continue;
    }
    at += w;
  }
}

static void
test_fd_rx(void **state)
{
  struct sched *s = sched_new("fdrx", 2);
  struct fdt t = { .l = loop_new(s, "fdrx"), .f.rx = fdt_rx };
  fdt_socketpair(&t);
  loop_call_sync(t.l, fdt_add, &t);

  size_t len = 4 << 20;
  write_pattern(t.sv[1], len);
  WAIT_FOR(__atomic_load_n(&t.done_bytes, __ATOMIC_SEQ_CST) == len);
  assert_false(aload(&t.eof));

  /* EOF reaches rx (which observes it), not err */
  close(t.sv[1]);
  WAIT_FOR(aload(&t.eof));
  loop_call_sync(t.l, fdt_remove, &t);
  close(t.sv[0]);

  assert_int_equal(t.bad_data, 0);
  assert_int_equal(t.not_eagain, 0);
  assert_int_equal(t.err_calls, 0);
  assert_true(t.rx_calls >= 2);
  stop_all(s, &t.l, 1);
}

/* Reads one small chunk per call and asks to be called again: with
 * edge-triggered epoll, the rest would otherwise wait for new data. */
static void
fdt_rx_some(struct loop_fd *f)
{
  struct fdt *t = container_of(f, struct fdt, f);
  t->rx_calls++;
  u8 buf[100];
  ssize_t n = read(f->fd, buf, sizeof(buf));
  if (n > 0)
  {
    fdt_take(t, buf, n);
    loop_fd_again(f, LOOP_FD_READ);
  }
  else if (n < 0 && errno != EAGAIN)
    t->not_eagain++;
}

static void
test_fd_again(void **state)
{
  struct sched *s = sched_new("fdagain", 2);
  struct fdt t = { .l = loop_new(s, "fdagain"), .f.rx = fdt_rx_some };
  fdt_socketpair(&t);
  loop_call_sync(t.l, fdt_add, &t);

  size_t len = 100000;
  write_pattern(t.sv[1], len);
  WAIT_FOR(__atomic_load_n(&t.done_bytes, __ATOMIC_SEQ_CST) == len);
  loop_call_sync(t.l, fdt_remove, &t);
  close(t.sv[0]);
  close(t.sv[1]);

  assert_int_equal(t.bad_data, 0);
  assert_int_equal(t.not_eagain, 0);
  assert_true(t.rx_calls >= (int) (len / 100));
  stop_all(s, &t.l, 1);
}

static void
fdt_err(struct loop_fd *f)
{
  struct fdt *t = container_of(f, struct fdt, f);
  t->err_calls++;
  astore(&t->done, 1);
}

static void
test_fd_err(void **state)
{
  struct sched *s = sched_new("fderr", 1);
  struct fdt t = { .l = loop_new(s, "fderr"), .f.err = fdt_err };
  fdt_socketpair(&t);
  loop_call_sync(t.l, fdt_add, &t);
  close(t.sv[1]);
  WAIT_FOR(aload(&t.done));
  loop_call_sync(t.l, fdt_remove, &t);
  close(t.sv[0]);
  assert_true(t.err_calls >= 1);
  stop_all(s, &t.l, 1);
}

/* Write the pattern until EAGAIN or the target; true when all is out. */
static bool
fdt_write_some(struct fdt *t)
{
  u8 buf[4096];
  while (t->done_bytes < t->target)
  {
    size_t n = MIN(sizeof(buf), t->target - t->done_bytes);
    for (size_t i = 0; i < n; i++)
      buf[i] = pattern(t->done_bytes + i);
    ssize_t w = write(t->f.fd, buf, n);
    if (w < 0)
    {
      if (errno != EAGAIN)
        t->not_eagain++;
      return false;
    }
    t->done_bytes += w;
  }
  return true;
}

static void
fdt_tx(struct loop_fd *f)
{
  struct fdt *t = container_of(f, struct fdt, f);
  t->tx_calls++;
  if (fdt_write_some(t))
  {
    loop_fd_want_tx(f, 0);
    astore(&t->done, 1);
  }
}

static void
fdt_fill(void *data)
{
  struct fdt *t = data;
  loop_fd_add(t->l, &t->f, t->sv[0]);
  /* Fill the socket buffer, then let tx continue when there is room */
  if (fdt_write_some(t))
    t->bad_data++;          /* the target is far above any socket buffer */
  loop_fd_want_tx(&t->f, 1);
}

static void
test_fd_tx(void **state)
{
  struct sched *s = sched_new("fdtx", 2);
  struct fdt t = { .l = loop_new(s, "fdtx"), .f.tx = fdt_tx, .target = 8 << 20 };
  fdt_socketpair(&t);
  loop_call_sync(t.l, fdt_fill, &t);

  /* Read it all back from the test thread */
  u8 buf[8192];
  size_t got = 0;
  int bad = 0;
  while (got < t.target)
  {
    ssize_t n = read(t.sv[1], buf, sizeof(buf));
    if (n < 0)
    {
      assert_int_equal(errno, EAGAIN);
      struct pollfd p = { .fd = t.sv[1], .events = POLLIN };
      assert_int_equal(poll(&p, 1, WAIT_S * 1000), 1);
      continue;
    }
    assert_true(n > 0);
    for (ssize_t i = 0; i < n; i++)
      bad += buf[i] != pattern(got + i);
    got += n;
  }
  WAIT_FOR(aload(&t.done));
  loop_call_sync(t.l, fdt_remove, &t);
  close(t.sv[0]);
  close(t.sv[1]);

  assert_int_equal(bad, 0);
  assert_int_equal(t.bad_data, 0);
  assert_int_equal(t.not_eagain, 0);
  assert_true(t.tx_calls >= 1);
  stop_all(s, &t.l, 1);
}

/* Remove and close an fd with data pending, many times, while idle
 * threads of the scheduler race to report it. No handler may run, no
 * freed loop_fd may be touched (ASan), reused fd numbers must not get
 * stale events. */
static int bad_rx_calls;    /* atomic */
static void bad_rx(struct loop_fd *f) { ainc(&bad_rx_calls); }

static void
fd_churn(void *data)
{
  struct loop *l = data;
  for (int i = 0; i < 50; i++)
  {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) < 0)
      bug("socketpair: %m");
    struct loop_fd *f = calloc(1, sizeof(*f));
    f->rx = bad_rx;
    f->err = bad_rx;
    f->tx = bad_rx;
    f->want_tx = 1;
    loop_fd_add(l, f, sv[0]);
    if (write(sv[1], "x", 1) != 1)
      bug("write: %m");
    if (i % 2)
      close(sv[1]);         /* HUP as well */
    /* Let another thread pick up the readiness */
    for (volatile int spin = 0; spin < 2000 * (i % 4); spin++)
      ;
    loop_fd_remove(f);
    close(sv[0]);
    if (!(i % 2))
      close(sv[1]);
    memset(f, 0xa5, sizeof(*f));
    free(f);
  }
}

static void
test_fd_remove_pending(void **state)
{
  struct sched *s = sched_new("fdrm", 4);
  struct loop *l = loop_new(s, "fdrm");
  astore(&bad_rx_calls, 0);
  for (int i = 0; i < 200; i++)
    loop_call_sync(l, fd_churn, l);
  assert_int_equal(aload(&bad_rx_calls), 0);
  stop_all(s, &l, 1);
}

/* An event that sends itself again whenever it has spent its budget (a
 * CLI listing a million routes to a client that reads as fast) must not
 * keep the loop's fds waiting until it is done: the main loop's other CLI
 * sessions waited for the whole listing. */
#define STARVE_RUNS 100

struct starve {
  struct event ev;
  struct loop_fd f;
  int sv[2];
  int ev_runs;              /* owner: the loop */
  int rx_at;                /* ev_runs when rx first ran; atomic */
  int rx_ran;               /* atomic */
  int done;                 /* atomic */
};

static void
starve_ev(void *data)
{
  struct starve *st = data;
  st->ev_runs++;
  if (aload(&st->rx_ran) || st->ev_runs >= STARVE_RUNS)
  {
    astore(&st->done, 1);
    return;
  }
  while (loop_budget_left() > 0)
    ;
  loop_yield();
  ev_schedule(&st->ev);
}

static void
starve_rx(struct loop_fd *f)
{
  struct starve *st = container_of(f, struct starve, f);
  char buf[16];
  while (read(f->fd, buf, sizeof(buf)) > 0)
    ;
  if (!aload(&st->rx_ran))
  {
    astore(&st->rx_at, st->ev_runs);
    astore(&st->rx_ran, 1);
  }
}

static void
starve_start(void *data)
{
  struct starve *st = data;
  st->f.rx = starve_rx;
  loop_fd_add(loop_current(), &st->f, st->sv[0]);
  ev_schedule(&st->ev);
}

static void
test_fd_not_starved_by_event(void **state)
{
  struct sched *s = sched_new("starve", 2);
  struct loop *l = loop_new(s, "starve");
  struct starve st = { 0 };
  ev_init(&st.ev, starve_ev, &st);
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, st.sv), 0);
  loop_call_sync(l, starve_start, &st);
  assert_int_equal(write(st.sv[1], "x", 1), 1);
  WAIT_FOR(aload(&st.done));
  assert_int_equal(aload(&st.rx_ran), 1);
  /* the write came while the event's second or third run went on */
  assert_true(aload(&st.rx_at) < 10);
  stop_all(s, &l, 1);
  close(st.sv[0]);
  close(st.sv[1]);
}

int
main(void)
{
  log_init("loop_fd_test");
  resource_init();
  sched_main_init();

  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup(test_fd_rx, setup_test),
    cmocka_unit_test_setup(test_fd_again, setup_test),
    cmocka_unit_test_setup(test_fd_err, setup_test),
    cmocka_unit_test_setup(test_fd_tx, setup_test),
    cmocka_unit_test_setup(test_fd_remove_pending, setup_test),
    cmocka_unit_test_setup(test_fd_not_starved_by_event, setup_test),
  };
  int rv = cmocka_run_group_tests(tests, NULL, NULL);
  rcu_barrier();
  return rv;
}
