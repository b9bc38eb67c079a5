/*
 * DOC: `echo all|off|{ classes } [size]`: log lines copied to CLI sessions.
 *
 * Log lines come from any thread. The log hook (lib/log.h) copies each into
 * a queue under a mutex and wakes the main loop, which owns the sessions
 * and hands every line to those that asked for its class
 * (cli_echo_push(): sent between replies, kept while a command runs, up to
 * the session's size; BIRD's ring buffer). The hook is installed with the
 * union of the sessions' classes, so with no echo nothing is copied.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "nest/cli.h"
#include "lib/log.h"

#define ECHO_QUEUE_MAX 4096     /* lines waiting for the main loop; more are dropped */

struct echo_line {
  struct echo_line *next;
  enum log_class cls;
  char msg[];
};

static pthread_mutex_t echo_lock = PTHREAD_MUTEX_INITIALIZER;
static struct echo_line *echo_head, **echo_tail = &echo_head;   /* under echo_lock */
static uint echo_count;                                         /* under echo_lock */
static int echo_on;             /* under echo_lock: some session wants lines */
static struct event echo_ev;    /* to the main loop */
static int echo_ready;          /* main loop */

/* Any thread: must not block or log. */
static void
echo_hook(enum log_class cls, const char *msg)
{
  size_t len = strlen(msg);
  struct echo_line *l = malloc(sizeof(*l) + len + 1);
  if (!l)
    return;
  l->next = NULL;
  l->cls = cls;
  memcpy(l->msg, msg, len + 1);
  pthread_mutex_lock(&echo_lock);
  if (!echo_on || echo_count >= ECHO_QUEUE_MAX) {
    pthread_mutex_unlock(&echo_lock);
    free(l);
    return;
  }
  *echo_tail = l;
  echo_tail = &l->next;
  echo_count++;
  pthread_mutex_unlock(&echo_lock);
  ev_send(main_loop(), &echo_ev);
}

/* Take the queued lines; on: whether more may come. */
static struct echo_line *
echo_take(int on)
{
  pthread_mutex_lock(&echo_lock);
  struct echo_line *l = echo_head;
  echo_head = NULL;
  echo_tail = &echo_head;
  echo_count = 0;
  echo_on = on;
  pthread_mutex_unlock(&echo_lock);
  return l;
}

static void
echo_free(struct echo_line *l)
{
  while (l) {
    struct echo_line *next = l->next;
    free(l);
    l = next;
  }
}

static void
echo_deliver(void *data)
{
  (void) data;
  u32 all = 0;
  LIST_WALK_ENTRY(s, cli_session_list(), struct cli, n)
    all |= s->echo_mask;
  struct echo_line *l = echo_take(!!all);
  while (l) {
    struct echo_line *next = l->next;
    LIST_WALK_ENTRY_SAFE(c, cli_session_list(), struct cli, n)
      if (c->echo_mask & (1U << l->cls))
        cli_echo_push(c, l->msg);
    free(l);
    l = next;
  }
}

void
cli_echo_set(struct cli *c, u32 mask, uint size)
{
  if (!echo_ready) {
    ev_init(&echo_ev, echo_deliver, NULL);
    echo_ready = 1;
  }
  if (c->echo_buf)
    mb_free(c->echo_buf);
  c->echo_buf = NULL;
  c->echo_len = c->echo_lost = 0;
  c->echo_mask = size ? mask : 0;
  c->echo_size = size;
  if (c->echo_mask)
    c->echo_buf = mb_alloc(c->pool, size);
  u32 all = 0;
  LIST_WALK_ENTRY(s, cli_session_list(), struct cli, n)
    all |= s->echo_mask;
  log_set_echo(all, echo_hook);
  if (!all)                     /* nobody wants what is queued; none comes now */
    echo_free(echo_take(0));
  else {
    pthread_mutex_lock(&echo_lock);
    echo_on = 1;
    pthread_mutex_unlock(&echo_lock);
  }
}
