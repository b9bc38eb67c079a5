/*
 * DOC: Event loops: events, timers, fds and the run of a loop.
 *
 * The model is in lib/loop.h; the scheduler side (epoll, threads, the
 * source table that makes fd removal safe) is in lib/sched.c.
 *
 * State. A loop's state word is IDLE, RUNNING, RUNNING_AGAIN or STOPPED.
 * A poller that got an event for the loop marks the source ready and tries
 * IDLE -> RUNNING; the winner runs the loop. If the loop is RUNNING, the
 * poller flips it to RUNNING_AGAIN and leaves: the running thread sees the
 * flag when it tries RUNNING -> IDLE and goes round once more. So a loop
 * runs on one thread at a time, and no wake-up is lost. Only the thread
 * holding RUNNING may stop and retire a loop.
 *
 * A run (loop_run_once()) drains, in rounds while there is work and time
 * budget left: the event queue, expired timers (in expiry order, equal
 * expiries in start order), ready fds. Each hook is followed by a budget
 * check; a run cut short by the budget or by loop_yield() ends with the
 * loop going IDLE and writing its own eventfd, so other ready loops come
 * first, and the next run starts with the part after the one cut short
 * (so that a hook that always spends its budget starves no other part).
 * So does a RUNNING_AGAIN round once the thread has spent a whole budget
 * on the loop since it claimed it. After a run the timerfd is
 * re-armed (absolute CLOCK_MONOTONIC) if the earliest timer is due before
 * it would fire, or it has fired, and the thread's scratch linpool is
 * flushed. Timers never fire early: they start from fresh time and fire
 * when loop_now() has passed their expiry.
 *
 * Events. ev_send() claims e->pending with a CAS, appends e to the loop's
 * wfcqueue (wait-free for any number of senders; the loop is the only
 * consumer) and writes the loop's eventfd unless wake_pending was already
 * set (xchg). The loop clears wake_pending with an xchg before it drains,
 * and clears e->pending before it calls the hook, so a hook may send its
 * event again. Sending to the loop that is running on this thread skips
 * the eventfd: the run rechecks its queue before it ends.
 *
 * Fds. Pollers put epoll's readiness into the source (struct loop_src),
 * never into the caller's struct loop_fd. At each round the loop moves
 * source bits of its registered fds into f->ready and calls handlers,
 * clearing f->ready before each call, so readiness that arrives during a
 * handler makes another call. A writable edge is kept in f->ready while
 * tx interest is off, because epoll will not repeat it. Once
 * loop_fd_remove() returns, the source is out of the scheduler's table and
 * out of the loop's lists, so no handler of f runs and nothing touches f.
 *
 * Stopping. loop_stop() sets `stopping`; the owner ends the current run,
 * unregisters every source, drops timers and queued events (clearing
 * their pending flags), marks the loop STOPPED, sends `done` to the main
 * loop and frees the loop through call_rcu(), as pollers may still hold it
 * (see lib/sched.c). The eventfd and timerfd are closed in that callback
 * too, so a late write to them is harmless.
 *
 * Liveness contract: ev_send() needs its target not to be freed while it
 * runs, so senders stop sending before the target is stopped; an event
 * queued after the target's teardown stays pending for good. Threads that
 * call anything here other than ev_send() must be registered with RCU
 * (scheduler threads and the main thread are). Owners remove their fds
 * before closing them (see loop_teardown()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "lib/loop_internal.h"
#include "lib/log.h"
#include "lib/timeutil.h"

#define LOOP_BUDGET (MS_ 10)

enum loop_state { LOOP_IDLE, LOOP_RUNNING, LOOP_RUNNING_AGAIN, LOOP_STOPPED };

struct tm_slot {
  btime expires;
  u64 seq;                  /* start order: equal expiry fires first started first */
  struct timer *t;
};

struct loop {
  struct sched *sched;
  int state;                /* atomic: enum loop_state */
  int wake_pending;         /* atomic: the eventfd was written since the last drain */
  int fd_ready;             /* atomic: some fd source may have ready bits */
  int stopping;             /* atomic: loop_stop() was called */
  struct event *stop_done;  /* written before stopping is set */
  int wakefd, timerfd;
  struct loop_src *wake_src, *timer_src;
  struct __cds_wfcq_head qhead;   /* MPSC event queue; the loop dequeues */
  struct cds_wfcq_tail qtail;

  /* owner: loop */
  struct tm_slot *heap;     /* 1-based binary min-heap of active timers */
  uint tm_n, tm_cap;
  u64 tm_seq;
  btime armed;              /* expiry the timerfd is armed for, 0 = none */
  struct lnode fds;         /* struct loop_fd.n */
  struct lnode srcs;        /* struct loop_src.n of the fds */
  struct lnode *fd_next;    /* dispatch cursor, moved on by loop_fd_remove() */
  struct loop_fd *cur_fd;   /* fd whose handlers run; NULLed by loop_fd_remove() */
  bool yield;               /* run again after others */
  bool cut;                 /* end the current run after this hook */
  u8 first_part;            /* the part a run starts with (loop_run_once) */

  struct rcu_head rcu;
  size_t size;
  char name[];
};

static __thread struct loop *tl_running;      /* loop being run by this thread */
static __thread struct loop *tl_home;         /* main thread: the main loop */
static __thread btime tl_now, tl_run_start;
static __thread btime tl_real_offset;         /* wall clock minus monotonic, read once a run */
static __thread btime tl_budget_left;         /* loop_budget_left()'s last reading */
static __thread uint tl_budget_calls;

/*
 * Small helpers
 */

/* Loops are freed through RCU from any thread, so they live outside
 * pools, accounted to the protocols class. */
static void *
loop_zalloc(size_t size)
{
  void *m = mem_alloc_shared(MEM_PROTOCOLS, size);
  memset(m, 0, size);
  return m;
}

static inline void loop_mfree(void *m, size_t size) { mem_free_shared(MEM_PROTOCOLS, m, size); }

static void
fd_write_one(int fd, const char *what)
{
  u64 one = 1;
  if (write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
    bug("%s: Cannot write eventfd: %m", what);
}

/* Reset an eventfd or timerfd counter; one read takes it all. */
static void
fd_drain(int fd, const char *what)
{
  u64 v;
  if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
    bug("%s: Cannot read eventfd/timerfd: %m", what);
}

static u32
epoll_to_ready(u32 events)
{
  return ((events & EPOLLIN) ? LOOP_FD_READ : 0) |
         ((events & EPOLLOUT) ? LOOP_FD_WRITE : 0) |
         ((events & (EPOLLERR | EPOLLHUP | EPOLLRDHUP)) ? LOOP_FD_ERR : 0);
}

void loop_wake(struct loop *l) { fd_write_one(l->wakefd, l->name); }

/*
 * Loop state
 */

static inline bool
loop_state_cas(struct loop *l, int *old, int new)
{
  return __atomic_compare_exchange_n(&l->state, old, new, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* A poller saw work for l: run it here, or make its runner go round again. */
static bool
loop_claim(struct loop *l)
{
  int s = __atomic_load_n(&l->state, __ATOMIC_SEQ_CST);
  for (;;)
    switch (s)
    {
    case LOOP_IDLE:
      if (loop_state_cas(l, &s, LOOP_RUNNING))
        return true;
      break;
    case LOOP_RUNNING:
      if (loop_state_cas(l, &s, LOOP_RUNNING_AGAIN))
        return false;
      break;
    default:
      return false;
    }
}

bool
loop_src_event(struct loop_src *src, u32 events)
{
  struct loop *l = src->loop;
  if (src->kind == SRC_FD)
  {
    __atomic_fetch_or(&src->ready, epoll_to_ready(events), __ATOMIC_SEQ_CST);
    __atomic_store_n(&l->fd_ready, 1, __ATOMIC_SEQ_CST);
  }
  else
    __atomic_store_n(&src->ready, 1, __ATOMIC_SEQ_CST);
  return loop_claim(l);
}

/* End of a run: go IDLE, or stay RUNNING if someone asked for another round. */
static bool
loop_release(struct loop *l)
{
  int s = LOOP_RUNNING;
  if (loop_state_cas(l, &s, LOOP_IDLE))
    return true;
  ASSERT_DIE(s == LOOP_RUNNING_AGAIN);
  __atomic_store_n(&l->state, LOOP_RUNNING, __ATOMIC_SEQ_CST);
  return false;
}

/* Go IDLE and queue a wake-up behind the loops already waiting. Once IDLE,
 * another thread may run, stop and retire the loop; the read-side section
 * keeps l and its eventfd (closed in the RCU callback) valid. */
static void
loop_release_and_requeue(struct loop *l)
{
  rcu_read_lock();
  __atomic_store_n(&l->state, LOOP_IDLE, __ATOMIC_SEQ_CST);
  loop_wake(l);
  sched_tsan_rcu_release();
  rcu_read_unlock();
}

/* After each hook: does the current run end here? */
static bool
loop_check_cut(struct loop *l)
{
  if (l->cut)
    return true;
  if (__atomic_load_n(&l->stopping, __ATOMIC_ACQUIRE) || time_mono_now() - tl_run_start >= LOOP_BUDGET)
    l->cut = l->yield = true;
  return l->cut;
}

/*
 * Events
 */

int
ev_send(struct loop *l, struct event *e)
{
  int idle = 0;
  if (!__atomic_compare_exchange_n(&e->pending, &idle, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return 0;

  cds_wfcq_node_init(&e->qn);
  tsan_release(e);
  /* Once queued, the event may run before we write wake_pending, and what
   * it does may retire l (a member's last word to its update group): the
   * read-side section keeps l and its eventfd until we are done. */
  rcu_read_lock();
  tsan_ignore_begin();
  cds_wfcq_enqueue(&l->qhead, &l->qtail, &e->qn);
  tsan_ignore_end();

  /* A running loop rechecks its queue before it ends the run */
  if (tl_running != l && !__atomic_exchange_n(&l->wake_pending, 1, __ATOMIC_SEQ_CST))
    fd_write_one(l->wakefd, l->name);
  sched_tsan_rcu_release();
  rcu_read_unlock();
  return 1;
}

int
ev_schedule(struct event *e)
{
  struct loop *l = loop_current();
  ASSERT_DIE(l);
  /* Only the thread running this loop clears its events' flags, and that
   * is us: a plain load tells whether it is still queued, without the
   * locked compare-and-swap (an exporter asks once per route). */
  if (uatomic_read(&e->pending))
    return 0;
  return ev_send(l, e);
}

static struct event *
loop_dequeue(struct loop *l, bool wait)
{
  tsan_ignore_begin();
  struct cds_wfcq_node *n = wait ? __cds_wfcq_dequeue_blocking(&l->qhead, &l->qtail)
                                 : __cds_wfcq_dequeue_nonblocking(&l->qhead, &l->qtail);
  tsan_ignore_end();
  /* WOULDBLOCK: an enqueue is half done; its sender will see wake_pending
   * cleared and write the eventfd, so we come back for it. */
  if (!n || n == CDS_WFCQ_WOULDBLOCK)
    return NULL;
  struct event *e = container_of(n, struct event, qn);
  tsan_acquire(e);
  return e;
}

static bool
loop_run_events(struct loop *l)
{
  bool work = false;
  /* An xchg, not a store: it pairs with the senders' xchg so that a sender
   * that saw the flag set has its event visible to the dequeue below. */
  __atomic_exchange_n(&l->wake_pending, 0, __ATOMIC_SEQ_CST);

  struct event *e;
  while ((e = loop_dequeue(l, false)))
  {
    void (*hook)(void *) = e->hook;
    void *data = e->data;
    /* Before the hook: the hook may send the event again, or free it.
     * Seq_cst, i.e. a full barrier: the hook's loads come after the flag
     * is clear, so a sender that stored its data and then found the flag
     * still set (its CAS failed, or ev_active() after a fence) knows this
     * run will see that data. A release store could let the hook read old
     * data while the sender still saw the flag set: a lost wakeup. */
    __atomic_store_n(&e->pending, 0, __ATOMIC_SEQ_CST);
    hook(data);
    work = true;
    if (loop_check_cut(l))
      break;
  }
  return work;
}

/*
 * Timers: a binary min-heap on (expires, seq), 1-based; t->heap_index is
 * the timer's position, 0 when not queued.
 */

static inline bool
tm_before(const struct tm_slot *a, const struct tm_slot *b)
{
  return a->expires < b->expires || (a->expires == b->expires && a->seq < b->seq);
}

static inline void
tm_place(struct loop *l, uint i, struct tm_slot s)
{
  l->heap[i] = s;
  s.t->heap_index = i;
}

static void
tm_sift_up(struct loop *l, uint i)
{
  struct tm_slot s = l->heap[i];
  while (i > 1 && tm_before(&s, &l->heap[i / 2]))
  {
    tm_place(l, i, l->heap[i / 2]);
    i /= 2;
  }
  tm_place(l, i, s);
}

static void
tm_sift_down(struct loop *l, uint i)
{
  struct tm_slot s = l->heap[i];
  for (;;)
  {
    uint c = 2 * i;
    if (c > l->tm_n)
      break;
    if (c + 1 <= l->tm_n && tm_before(&l->heap[c + 1], &l->heap[c]))
      c++;
    if (!tm_before(&l->heap[c], &s))
      break;
    tm_place(l, i, l->heap[c]);
    i = c;
  }
  tm_place(l, i, s);
}

static void
tm_heap_remove(struct loop *l, uint i)
{
  l->heap[i].t->heap_index = 0;
  struct tm_slot last = l->heap[l->tm_n--];
  if (i > l->tm_n)
    return;
  tm_place(l, i, last);
  tm_sift_up(l, i);
  tm_sift_down(l, last.t->heap_index);
}

static void
tm_heap_insert(struct loop *l, struct timer *t, btime when)
{
  if (l->tm_n + 1 >= l->tm_cap)
  {
    uint cap = l->tm_cap ? 2 * l->tm_cap : 16;
    struct tm_slot *h = loop_zalloc(cap * sizeof(*h));
    if (l->heap)
    {
      memcpy(h, l->heap, (l->tm_n + 1) * sizeof(*h));
      loop_mfree(l->heap, l->tm_cap * sizeof(*h));
    }
    l->heap = h;
    l->tm_cap = cap;
  }
  t->expires = when;
  l->heap[++l->tm_n] = (struct tm_slot) { .expires = when, .seq = l->tm_seq++, .t = t };
  tm_sift_up(l, l->tm_n);
}

void
tm_init(struct timer *t, struct loop *l, void (*hook)(struct timer *), void *data)
{
  *t = (struct timer) { .hook = hook, .data = data, .loop = l };
}

void
tm_set(struct timer *t, btime when)
{
  struct loop *l = t->loop;
  ASSERT_DIE(loop_inside(l));
  if (t->heap_index)
    tm_heap_remove(l, t->heap_index);
  tm_heap_insert(l, t, MAX(when, 1));
}

void
tm_start(struct timer *t, btime after)
{
  /* Fresh time, not loop_now(): a timer never fires before `after` has
   * passed from the moment it was started. */
  btime now = time_mono_now();
  tm_set(t, (after >= BTIME_NEVER - now) ? BTIME_NEVER : now + MAX(after, 0));
}

void
tm_stop(struct timer *t)
{
  if (t->heap_index)
  {
    ASSERT_DIE(loop_inside(t->loop));
    tm_heap_remove(t->loop, t->heap_index);
  }
  t->expires = 0;
}

btime
tm_remains(struct timer *t)
{
  if (!t->expires)
    return 0;
  btime left = t->expires - time_mono_now();
  return left > 0 ? left : 0;
}

static bool
loop_run_timers(struct loop *l)
{
  bool work = false;
  while (l->tm_n && l->heap[1].expires <= tl_now)
  {
    struct timer *t = l->heap[1].t;
    tm_heap_remove(l, 1);
    if (t->recurrent)
    {
      /* Keep the period without drift, unless we are a period late */
      btime when = t->expires + t->recurrent;
      tm_heap_insert(l, t, (when > tl_now) ? when : tl_now + t->recurrent);
    }
    else
      t->expires = 0;

    t->hook(t);
    work = true;
    if (loop_check_cut(l))
      break;
  }
  return work;
}

static void
loop_arm_timerfd(struct loop *l)
{
  btime next = l->tm_n ? l->heap[1].expires : 0;
  /* Armed for the earliest timer or before it is enough: firing early
   * costs one run that finds nothing due and arms it again. A session's
   * timers move later with every message (keepalive on each sent, hold
   * on each received), and re-arming for each move was a syscall in
   * nearly every run of a busy session's loop. */
  if (next == l->armed || (l->armed && (!next || l->armed < next)))
    return;

  /* time_mono_now() is CLOCK_MONOTONIC in microseconds */
  struct itimerspec its = { 0 };
  if (next)
  {
    its.it_value.tv_sec = next / TO_S;
    its.it_value.tv_nsec = (next % TO_S) * 1000;
  }
  if (timerfd_settime(l->timerfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
    bug("%s: timerfd_settime: %m", l->name);
  l->armed = next;
}

/*
 * File descriptors
 */

void
loop_fd_add(struct loop *l, struct loop_fd *f, int fd)
{
  ASSERT_DIE(loop_inside(l));
  f->loop = l;
  f->fd = fd;
  f->ready = 0;
  list_add_tail(&l->fds, &f->n);

  struct loop_src *src = sched_src_new(l->sched, SRC_FD, l, f);
  list_add_tail(&l->srcs, &src->n);
  sched_src_watch(l->sched, src, fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET);
}

void
loop_fd_remove(struct loop_fd *f)
{
  struct loop *l = f->loop;
  ASSERT_DIE(l && loop_inside(l));

  struct loop_src *src = NULL;
  LIST_WALK_ENTRY(x, &l->srcs, struct loop_src, n)
    if (x->f == f)
    {
      src = x;
      break;
    }
  ASSERT_DIE(src);

  list_del(&src->n);
  if (sched_src_unwatch(l->sched, src, f->fd) < 0)
    bug("%s: fd %d was closed before loop_fd_remove(): %m", l->name, f->fd);

  if (l->fd_next == &f->n)
    l->fd_next = f->n.next;
  if (l->cur_fd == f)
    l->cur_fd = NULL;
  list_del(&f->n);
  f->loop = NULL;
  f->ready = 0;
}

void
loop_fd_want_tx(struct loop_fd *f, int on)
{
  ASSERT_DIE(loop_inside(f->loop));
  f->want_tx = on;
  if (on && (__atomic_load_n(&f->ready, __ATOMIC_RELAXED) & LOOP_FD_WRITE))
    __atomic_store_n(&f->loop->fd_ready, 1, __ATOMIC_SEQ_CST);
}

void
loop_fd_again(struct loop_fd *f, u32 what)
{
  ASSERT_DIE(loop_inside(f->loop));
  __atomic_fetch_or(&f->ready, what, __ATOMIC_SEQ_CST);
  __atomic_store_n(&f->loop->fd_ready, 1, __ATOMIC_SEQ_CST);
}

/* Run the handlers of one fd. A handler may remove (and free) f. */
static bool
loop_fd_dispatch(struct loop *l, struct loop_fd *f)
{
  u32 r = __atomic_exchange_n(&f->ready, 0, __ATOMIC_SEQ_CST);
  if ((r & LOOP_FD_WRITE) && !(f->want_tx && f->tx))
  {
    /* epoll reports writability once per edge; keep it for when tx
     * interest comes (tx may then meet EAGAIN, which handlers expect) */
    __atomic_fetch_or(&f->ready, LOOP_FD_WRITE, __ATOMIC_SEQ_CST);
    r &= ~LOOP_FD_WRITE;
  }
  if (!r)
    return false;

  bool work = false;
  l->cur_fd = f;
  if (r & (LOOP_FD_READ | LOOP_FD_ERR))
  {
    void (*h)(struct loop_fd *) = f->rx ? f->rx : (r & LOOP_FD_ERR) ? f->err : NULL;
    if (h)
    {
      h(f);
      work = true;
    }
  }
  if ((r & LOOP_FD_WRITE) && l->cur_fd == f)
  {
    if ((work && loop_check_cut(l)) || !(f->want_tx && f->tx))
      __atomic_fetch_or(&f->ready, LOOP_FD_WRITE, __ATOMIC_SEQ_CST);
    else
    {
      f->tx(f);
      work = true;
    }
  }
  l->cur_fd = NULL;
  if (work)
    loop_check_cut(l);
  return work;
}

static bool
loop_run_fds(struct loop *l)
{
  if (!__atomic_exchange_n(&l->fd_ready, 0, __ATOMIC_SEQ_CST))
    return false;

  LIST_WALK_ENTRY(src, &l->srcs, struct loop_src, n)
  {
    u32 r = __atomic_exchange_n(&src->ready, 0, __ATOMIC_SEQ_CST);
    if (r)
      __atomic_fetch_or(&src->f->ready, r, __ATOMIC_SEQ_CST);
  }

  bool work = false;
  for (struct lnode *n = l->fds.next; n != &l->fds; n = l->fd_next)
  {
    l->fd_next = n->next;
    work |= loop_fd_dispatch(l, container_of(n, struct loop_fd, n));
    if (l->cut)
    {
      /* Those not reached yet keep their bits for the next run */
      __atomic_store_n(&l->fd_ready, 1, __ATOMIC_SEQ_CST);
      break;
    }
  }
  l->fd_next = NULL;
  return work;
}

/*
 * Running a loop
 */

/* The parts of a round, in order. A run cut short starts the next one
 * with the part after the one that cut it: an event that sends itself
 * again whenever its budget is spent (a CLI listing a million routes to
 * a client that reads as fast) had every run end in the events, and the
 * main loop's fds (every other CLI session) waited until it was done. */
static bool (*const loop_parts[])(struct loop *) = { loop_run_events, loop_run_timers, loop_run_fds };
#define LOOP_PARTS (sizeof(loop_parts) / sizeof(loop_parts[0]))

/* One run: rounds of events, timers and fds while there is work and
 * budget. Returns true if the loop wants another run after others. */
static bool
loop_run_once(struct loop *l)
{
  tl_running = l;
  tl_run_start = tl_now = time_mono_now();
  tl_real_offset = time_real_now() - tl_now;
  tl_budget_calls = 0;
  l->yield = false;
  l->cut = __atomic_load_n(&l->stopping, __ATOMIC_ACQUIRE);

  if (__atomic_exchange_n(&l->wake_src->ready, 0, __ATOMIC_SEQ_CST))
    fd_drain(l->wakefd, l->name);
  if (__atomic_exchange_n(&l->timer_src->ready, 0, __ATOMIC_SEQ_CST))
  {
    fd_drain(l->timerfd, l->name);
    l->armed = 0;     /* it was one-shot and has fired */
  }

  bool work = !l->cut;
  uint first = l->first_part;
  l->first_part = 0;
  while (work && !l->cut)
  {
    work = false;
    for (uint i = 0; i < LOOP_PARTS && !l->cut; i++)
    {
      uint part = (first + i) % LOOP_PARTS;
      work |= loop_parts[part](l);
      if (l->cut)
        l->first_part = (u8) ((part + 1) % LOOP_PARTS);
    }
    first = 0;
    tl_now = time_mono_now();
  }

  lp_flush(sched_thread_tmp());
  tl_running = NULL;
  return l->yield;
}

static void
loop_free_rcu(struct rcu_head *h)
{
  sched_tsan_rcu_acquire();
  struct loop *l = container_of(h, struct loop, rcu);
  close(l->wakefd);
  close(l->timerfd);
  if (l->heap)
    loop_mfree(l->heap, l->tm_cap * sizeof(struct tm_slot));
  loop_mfree(l, l->size);
}

/* The owner retires a stopped loop. */
static void
loop_teardown(struct loop *l)
{
  struct sched *s = l->sched;

  /* An fd its owner closed without loop_fd_remove() gives EBADF here, which
   * is harmless; had its number been reused by another registration of
   * this scheduler, that one would be dropped: remove before closing. */
  LIST_WALK_ENTRY_SAFE(src, &l->srcs, struct loop_src, n)
  {
    struct loop_fd *f = src->f;
    list_del(&src->n);
    sched_src_unwatch(s, src, f->fd);
    list_del(&f->n);
    f->loop = NULL;
    f->ready = 0;
  }
  sched_src_unwatch(s, l->wake_src, l->wakefd);
  sched_src_unwatch(s, l->timer_src, l->timerfd);

  for (; l->tm_n; l->tm_n--)
  {
    struct timer *t = l->heap[l->tm_n].t;
    t->expires = 0;
    t->heap_index = 0;
  }

  /* Discard queued events, so that their owners may send them again */
  struct event *e;
  while ((e = loop_dequeue(l, true)))
    __atomic_store_n(&e->pending, 0, __ATOMIC_RELEASE);

  struct event *done = l->stop_done;
  __atomic_store_n(&l->state, LOOP_STOPPED, __ATOMIC_SEQ_CST);
  if (done)
    ev_send(main_loop(), done);

  sched_tsan_rcu_release();
  call_rcu(&l->rcu, loop_free_rcu);
}

/* Run a loop whose RUNNING state this thread has claimed. */
void
loop_run(struct loop *l)
{
  btime start = time_mono_now();
  for (;;)
  {
    bool more = loop_run_once(l);
    if (__atomic_load_n(&l->stopping, __ATOMIC_ACQUIRE))
    {
      loop_teardown(l);
      return;
    }
    loop_arm_timerfd(l);
    if (!more && loop_release(l))
      return;

    /* Another round: right away if asked while we ran, but behind the
     * others once this thread has spent a budget on l */
    if (more || time_mono_now() - start >= LOOP_BUDGET)
    {
      loop_release_and_requeue(l);
      return;
    }
  }
}

struct loop *
loop_new(struct sched *s, const char *name)
{
  size_t nlen = strlen(name) + 1;
  struct loop *l = loop_zalloc(sizeof(*l) + nlen);
  l->size = sizeof(*l) + nlen;
  memcpy(l->name, name, nlen);
  l->sched = s;
  l->state = LOOP_IDLE;
  list_init(&l->fds);
  list_init(&l->srcs);
  __cds_wfcq_init(&l->qhead, &l->qtail);

  l->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  l->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (l->wakefd < 0 || l->timerfd < 0)
  {
    log_msg(L_ERR, "%s: Cannot create loop %s: %m", sched_name(s), name);
    if (l->wakefd >= 0)
      close(l->wakefd);
    if (l->timerfd >= 0)
      close(l->timerfd);
    loop_mfree(l, l->size);
    return NULL;
  }

  /* Everything is set before a poller can find the loop */
  l->wake_src = sched_src_new(s, SRC_WAKE, l, NULL);
  l->timer_src = sched_src_new(s, SRC_TIMER, l, NULL);
  sched_src_watch(s, l->wake_src, l->wakefd, EPOLLIN | EPOLLET);
  sched_src_watch(s, l->timer_src, l->timerfd, EPOLLIN | EPOLLET);
  return l;
}

const char *loop_name(struct loop *l) { return l->name; }

void
loop_stop(struct loop *l, struct event *done)
{
  ASSERT_DIE(l != main_loop());
  ASSERT_DIE(tl_running == l || (main_loop() && loop_inside(main_loop())));
  l->stop_done = done;
  if (tl_running == l)
  {
    int was = __atomic_exchange_n(&l->stopping, 1, __ATOMIC_SEQ_CST);
    ASSERT_DIE(!was);
    l->cut = true;
    return;
  }

  /* From the main loop: the owner may retire l as soon as it sees the flag */
  rcu_read_lock();
  int was = __atomic_exchange_n(&l->stopping, 1, __ATOMIC_SEQ_CST);
  ASSERT_DIE(!was);
  loop_wake(l);
  sched_tsan_rcu_release();
  rcu_read_unlock();
}

void loop_set_home(struct loop *l) { tl_home = l; }

struct loop *loop_current(void) { return tl_running ? tl_running : tl_home; }

btime loop_now(void) { return tl_running ? tl_now : time_mono_now(); }
btime loop_now_real(void) { return tl_running ? tl_now + tl_real_offset : time_real_now(); }

btime
loop_budget_left(void)
{
  /* Callers ask once per route or so: read the clock every 16th call only
   * (a route costs about a microsecond, the budget is milliseconds). */
  if (!tl_running)
    return LOOP_BUDGET;
  if (!(tl_budget_calls++ & 15) || tl_budget_left <= 0)
    tl_budget_left = tl_run_start + LOOP_BUDGET - time_mono_now();
  return tl_budget_left;
}

void
loop_yield(void)
{
  ASSERT_DIE(tl_running);
  tl_running->yield = tl_running->cut = true;
}

linpool *
loop_tmp(void)
{
  linpool *lp = sched_thread_tmp();
  ASSERT_DIE(lp);
  return lp;
}

struct loop_call {
  struct event e;
  void (*fn)(void *);
  void *data;
  sem_t done;
};

static void
loop_call_hook(void *data)
{
  struct loop_call *c = data;
  c->fn(c->data);
  sem_post(&c->done);
}

void
loop_call_sync(struct loop *l, void (*fn)(void *), void *data)
{
  ASSERT_DIE(!tl_running && l != loop_current());
  struct loop_call c = { .fn = fn, .data = data };
  sem_init(&c.done, 0, 0);
  ev_init(&c.e, loop_call_hook, &c);
  ev_send(l, &c.e);
  while (sem_wait(&c.done) < 0)
    ASSERT_DIE(errno == EINTR);
  sem_destroy(&c.done);
}

