/*
 * DOC: Event loops on a bounded pool of worker threads.
 *
 * A loop owns a set of file descriptors, timers and events. Code of one
 * loop runs on at most one thread at a time (its state word is claimed
 * with a CAS before running), and may move between the threads of its
 * scheduler from one run to the next. A scheduler ("thread group") owns an
 * epoll instance and N threads; every loop's fds, its timerfd and its
 * wake-up eventfd are registered edge-triggered in the scheduler's epoll,
 * so any idle thread can pick up any ready loop.
 *
 * The main scheduler has exactly one thread: the process's main thread,
 * which runs the main loop (config, CLI, protocol lifecycle, signals).
 *
 * Cross-loop communication: ev_send(loop, ev) from any thread queues the
 * event on the target loop's wait-free MPSC queue and wakes it. An event
 * is in at most one queue; sending a pending event again is a no-op, which
 * gives natural coalescing of "something changed" notifications.
 *
 * Fairness: a loop run has a time budget (loop_budget_left()). Long work
 * checks it, and when it runs out calls loop_yield() and returns; the loop
 * is woken again after other ready loops had their turn.
 *
 * Every scheduler thread is registered with RCU.
 */
#ifndef LIB_LOOP_H
#define LIB_LOOP_H

#include "lib/birdlib.h"
#include "lib/lists.h"
#include "lib/resource.h"
#include "lib/rcu.h"

struct loop;
struct sched;

/* An event: a hook to be called in some loop. Owned by whoever embeds it. */
struct event {
  struct cds_wfcq_node qn;
  void (*hook)(void *data);
  void *data;
  int pending;           /* atomic: queued and not yet run */
};

static inline void ev_init(struct event *e, void (*hook)(void *), void *data)
{
#ifdef BIRD_SANITIZED
  /* A queued event made anew drops the rest of its queue, or, sent on to
   * another loop, joins two loops' queues: both would run what follows. */
  if (__atomic_load_n(&e->pending, __ATOMIC_SEQ_CST))
    bug("ev_init() of a queued event %p (hook %p, now %p)", e, (void *) e->hook, (void *) hook);
#endif
  cds_wfcq_node_init(&e->qn);
  e->hook = hook;
  e->data = data;
  e->pending = 0;
}
/* Queue e to run in loop l. Callable from any thread. Returns 1 if queued,
 * 0 if it was already pending. */
int ev_send(struct loop *l, struct event *e);
/* ev_send to the current loop. */
int ev_schedule(struct event *e);
/* Is the event queued and not yet run? */
static inline int ev_active(struct event *e) { return uatomic_read(&e->pending); }

/* A timer of one loop. Start/stop only from inside that loop. */
struct timer {
  btime expires;          /* monotonic, 0 = not active */
  void (*hook)(struct timer *);
  void *data;
  btime recurrent;        /* if nonzero, restarted with this period after firing */
  uint heap_index;        /* position in the loop's heap, 0 = not queued */
  struct loop *loop;
};
void tm_init(struct timer *t, struct loop *l, void (*hook)(struct timer *), void *data);
void tm_start(struct timer *t, btime after);          /* relative */
void tm_set(struct timer *t, btime when);             /* absolute monotonic */
void tm_stop(struct timer *t);
static inline int tm_active(struct timer *t) { return t->expires != 0; }
/* Time left until expiry (0 if inactive or expired). */
btime tm_remains(struct timer *t);

/* A file descriptor watched by a loop. rx is called when readable, tx when
 * writable and tx interest is set, err on EPOLLERR/EPOLLHUP when no rx
 * exists to observe the EOF. Handlers must read/write until EAGAIN, or call
 * loop_fd_again() if they stop early because of the budget. */
struct loop_fd {
  struct lnode n;
  struct loop *loop;
  int fd;
  u32 ready;              /* atomic: LOOP_FD_READ|WRITE|ERR set by the poller */
  u32 want_tx;            /* owner: loop; call tx when writable */
  void (*rx)(struct loop_fd *);
  void (*tx)(struct loop_fd *);
  void (*err)(struct loop_fd *);
  void *data;
};
#define LOOP_FD_READ 1
#define LOOP_FD_WRITE 2
#define LOOP_FD_ERR 4

/* Register fd (already non-blocking) with loop l; inside l. */
void loop_fd_add(struct loop *l, struct loop_fd *f, int fd);
/* Unregister; does not close the fd. Inside the owner loop. */
void loop_fd_remove(struct loop_fd *f);
void loop_fd_want_tx(struct loop_fd *f, int on);
/* The handler stopped before EAGAIN: call it again on the next run. */
void loop_fd_again(struct loop_fd *f, u32 what);

/* Schedulers (thread groups). */
struct sched *sched_new(const char *name, uint threads);
/* The main thread's scheduler; its single loop is returned by main_loop(). */
struct sched *sched_main_init(void);
struct loop *main_loop(void);
/* Run the main loop in the calling (main) thread until loop_main_quit(). */
void sched_main_run(void);
void loop_main_quit(void);
/* Change the number of threads; grows at once, shrinks as threads go idle. */
void sched_set_threads(struct sched *s, uint threads);
uint sched_threads(struct sched *s);
const char *sched_name(struct sched *s);
/* Stop all threads and free the scheduler; its loops must be gone. */
void sched_free(struct sched *s);

/* Loops. */
struct loop *loop_new(struct sched *s, const char *name);
const char *loop_name(struct loop *l);
/* Stop the loop: no more events, timers or fds run; then call done in the
 * main loop (done->data is the caller's) and free the loop. Call from
 * inside l or from the main loop. */
void loop_stop(struct loop *l, struct event *done);

/* The loop the current thread is running, or NULL. */
struct loop *loop_current(void);
static inline int loop_inside(struct loop *l) { return loop_current() == l; }
#define ASSERT_INSIDE(l) ASSERT_DIE(loop_inside(l))

/* Monotonic time, cached at the start of the current run. */
btime loop_now(void);
/* Wall-clock time of the same instant (outside a loop: now). Route
 * timestamps use it, as BIRD's current_time(): a clock read per route
 * cost 4-6% of the daemon's time in the propagation bench. */
btime loop_now_real(void);
/* Remaining time budget of the current run (<= 0: yield). */
btime loop_budget_left(void);
/* Ask to be run again soon (after others) even without new input. */
void loop_yield(void);

/* Per-thread scratch linpool, flushed after each loop run. */
linpool *loop_tmp(void);

/* For tests: run a function inside a loop and wait for it (not from a loop). */
void loop_call_sync(struct loop *l, void (*fn)(void *), void *data);

#endif
