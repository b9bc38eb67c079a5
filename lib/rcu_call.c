/*
 * DOC: Deferred frees after a grace period, on a thread of our own.
 *
 * liburcu's call_rcu thread sleeps 10 ms after every batch of callbacks
 * it ran, and as long again after it was woken, so that grace periods
 * stay rare. While a table converges, what it retires (journal blocks of
 * 16 KiB, the routes they replaced, attribute sets) waits out those
 * sleeps: 10 peers' 1,000 routes each in per-peer tables held 100 of
 * their 144 live journal blocks (1.6 MB) in that queue at the peak, more
 * than the journals themselves.
 *
 * This thread waits for a grace period as soon as there is something to
 * free, runs what was queued before it began, and pauses RCU_CALL_PAUSE_NS
 * before it looks again: under a steady stream of frees that is at most
 * 500 grace periods a second, each covering all that came meanwhile.
 * Read sections here are short (nothing blocks in them), so a grace
 * period is a membarrier and a look at each thread's counter. Without
 * the pause, 10 peers' tables converged 15% slower (likely: the thread
 * slept after every small batch, so the next free paid a futex wake on
 * its importer's thread, and every grace period's membarrier interrupted
 * the workers); with 2 ms about as fast as with liburcu's thread, at
 * the lower peak, and 2-3% slower at larger loads (doc/perf.md, session
 * 56).
 *
 * Producers push onto a lock-free stack (one compare-and-swap; a free
 * from any thread, in or out of a read section); the thread takes the
 * whole stack at once and runs it oldest first.
 */
#include "lib/rcu.h"
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

/* struct rcu_head is liburcu's: its queue link is the stack's link. */
#define RCU_CALL_NEXT(h) ((h)->next.next)

static struct rcu_head *rcu_call_stack;   /* atomic: newest first */
static int rcu_call_sleeping;             /* atomic: the thread waits on cond */
static pthread_mutex_t rcu_call_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rcu_call_cond = PTHREAD_COND_INITIALIZER;       /* the thread's */
static pthread_cond_t rcu_call_barrier_cond = PTHREAD_COND_INITIALIZER;
static pthread_once_t rcu_call_once = PTHREAD_ONCE_INIT;

#define RCU_CALL_PAUSE_NS 2000000

/* Until the stack is not empty; takes it whole. */
static struct rcu_head *
rcu_call_take(void)
{
  struct rcu_head *h = __atomic_exchange_n(&rcu_call_stack, NULL, __ATOMIC_ACQUIRE);
  if (h)
    return h;
  pthread_mutex_lock(&rcu_call_lock);
  /* Dekker with rcu_call(): the flag before the look at the stack here,
   * the push before the look at the flag there (both sequentially
   * consistent), so one of the two sees the other. */
  __atomic_store_n(&rcu_call_sleeping, 1, __ATOMIC_SEQ_CST);
  while (!(h = __atomic_exchange_n(&rcu_call_stack, NULL, __ATOMIC_SEQ_CST)))
    pthread_cond_wait(&rcu_call_cond, &rcu_call_lock);
  __atomic_store_n(&rcu_call_sleeping, 0, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&rcu_call_lock);
  return h;
}

static void *
rcu_call_thread(void *arg)
{
  (void) arg;
  /* Callbacks may read RCU data (an attribute set's hash) and call
   * rcu_call() themselves; the thread is never inside a read section
   * while it waits for a grace period. */
  rcu_thread_register();
  for (;;) {
    struct rcu_head *h = rcu_call_take();
    synchronize_rcu();
#if defined(__SANITIZE_THREAD__)
    __tsan_acquire(rcu_tsan_gp_token());
#endif
    /* Newest first on the stack: reversed, they run in the order given. */
    struct rcu_head *fifo = NULL;
    while (h) {
      struct rcu_head *next = (struct rcu_head *) RCU_CALL_NEXT(h);
      RCU_CALL_NEXT(h) = (struct cds_wfcq_node *) fifo;
      fifo = h;
      h = next;
    }
    while (fifo) {
      struct rcu_head *next = (struct rcu_head *) RCU_CALL_NEXT(fifo);
      fifo->func(fifo);
      fifo = next;
    }
    struct timespec pause = { 0, RCU_CALL_PAUSE_NS };
    nanosleep(&pause, NULL);
  }
  return NULL;
}

static void
rcu_call_start(void)
{
  pthread_attr_t a;
  pthread_t t;
  pthread_attr_init(&a);
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  /* Signals are the main loop's: the thread starts with them blocked,
   * whichever thread freed something first. */
  sigset_t all, was;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &was);
  if (pthread_create(&t, &a, rcu_call_thread, NULL))
    abort();
  pthread_sigmask(SIG_SETMASK, &was, NULL);
  pthread_attr_destroy(&a);
  pthread_setname_np(t, "rcu-free");
}

void
rcu_call(struct rcu_head *head, void (*fn)(struct rcu_head *))
{
  pthread_once(&rcu_call_once, rcu_call_start);
  head->func = fn;
  struct rcu_head *top = __atomic_load_n(&rcu_call_stack, __ATOMIC_RELAXED);
  do
    RCU_CALL_NEXT(head) = (struct cds_wfcq_node *) top;
  while (!__atomic_compare_exchange_n(&rcu_call_stack, &top, head, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
  if (__atomic_load_n(&rcu_call_sleeping, __ATOMIC_SEQ_CST)) {
    pthread_mutex_lock(&rcu_call_lock);
    pthread_cond_signal(&rcu_call_cond);
    pthread_mutex_unlock(&rcu_call_lock);
  }
}

/* The barrier's callback: wakes its waiter. */
struct rcu_call_barrier {
  struct rcu_head rcu;
  int done;                   /* under rcu_call_lock */
};

static void
rcu_call_barrier_done(struct rcu_head *h)
{
  struct rcu_call_barrier *b = caa_container_of(h, struct rcu_call_barrier, rcu);
  pthread_mutex_lock(&rcu_call_lock);
  b->done = 1;
  pthread_cond_broadcast(&rcu_call_barrier_cond);
  pthread_mutex_unlock(&rcu_call_lock);
}

void
rcu_call_barrier(void)
{
  /* liburcu's own queue first: its structures (a hash table's resize)
   * retire through it, and what they free may give us more. */
  urcu_memb_barrier();
  struct rcu_call_barrier b = { .done = 0 };
  rcu_call(&b.rcu, rcu_call_barrier_done);
  pthread_mutex_lock(&rcu_call_lock);
  while (!b.done)
    pthread_cond_wait(&rcu_call_barrier_cond, &rcu_call_lock);
  pthread_mutex_unlock(&rcu_call_lock);
}
