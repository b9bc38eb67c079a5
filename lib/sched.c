/*
 * DOC: Schedulers: an epoll instance and a pool of threads running loops.
 *
 * Every thread of a scheduler sits in epoll_wait() with maxevents = 1, so
 * the ready loops spread over the idle threads. An event names a source
 * (struct loop_src: a loop's wake-up eventfd, its timerfd or one of its
 * loop_fds) by key; the poller looks the source up, hands the event to
 * loop_src_event(), which marks the source ready and tries to claim the
 * loop, and runs the loop if it won the claim (lib/loop.c).
 *
 * Why keys and not pointers. A poller may hold an event that epoll_wait()
 * returned just before another thread did EPOLL_CTL_DEL, and act on it
 * later. RCU alone does not close this window: the kernel copies the event
 * out while the poller is outside any read-side section (it must be, or an
 * idle thread would block grace periods forever), so a grace period can
 * end between epoll_wait() returning and rcu_read_lock(). So the epoll
 * data is a key, generation << 32 | slot, into the scheduler's source
 * table. The poller looks it up inside rcu_read_lock(). Retiring a source
 * clears its slot and bumps the slot's generation, so a stale event is not
 * found and is dropped, even if the slot has a new source by then. The
 * source itself is freed through call_rcu() after it left the table, so a
 * poller that did find it may still set its ready bits; and since pollers
 * set bits only in the source, never in the caller's struct loop_fd, the
 * loop alone decides which handlers run (see loop_fd_remove()). A loop is
 * freed through call_rcu() after all its sources left the table, so a
 * poller that found a source may also use the source's loop.
 *
 * The table is an array of source pointers, read lock-free under RCU and
 * written under sched->lock; it grows by publishing a copy and retiring
 * the old one through call_rcu().
 *
 * Threads. Growing starts threads at once. Shrinking posts exit tokens on
 * an EFD_SEMAPHORE eventfd registered level-triggered (key 0): an idle
 * thread takes one token and leaves; busy threads finish their loop
 * first. Threads that left are joined by the next sched_set_threads() or
 * by sched_free(). Each thread has a scratch linpool (loop_tmp()),
 * allocated and freed by the main thread, which owns the scheduler's pool.
 * Scheduler threads block all signals; signals are the main loop's.
 *
 * The main scheduler has no threads of its own: sched_main_run() makes the
 * calling main thread its only poller, until loop_main_quit() posts an
 * exit token. The main thread counts as inside the main loop also between
 * runs, so start-up code may set the main loop's timers and fds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "lib/loop_internal.h"
#include "lib/log.h"

#define SCHED_EXIT_KEY 0
#define SRC_TABLE_MIN 64

struct src_table {
  u32 size;
  struct rcu_head rcu;
  struct loop_src *slot[];  /* atomic pointers; written under sched->lock */
};

struct sched_thread {
  struct lnode n;           /* in sched->threads; under sched->lock */
  struct sched *sched;
  pthread_t tid;
  linpool *tmp;             /* loop_tmp() */
  bool exited;              /* under sched->lock */
};

struct sched {
  int epfd;
  int exitfd;               /* EFD_SEMAPHORE, level-triggered: one token, one thread leaves */
  bool is_main;
  pthread_t main_tid;       /* is_main */
  pool *pool;               /* the threads' linpools; owner: main thread */
  struct src_table *srcs;   /* RCU-published; replaced under lock */
  pthread_mutex_t lock;
  u32 *gen;                 /* per slot: generation of its next source; under lock */
  u32 *free_slots, nfree;   /* under lock */
  u32 used;                 /* slots ever handed out; under lock */
  struct lnode threads;     /* struct sched_thread; under lock */
  uint live;                /* threads that did not take an exit token; under lock */
  uint tokens;              /* exit tokens posted and not yet taken; under lock */
  size_t size;
  char name[];
};

static struct sched *main_sched;
static struct loop *main_loop_ptr;

static __thread struct sched_thread *tl_thread;

static int tsan_rcu;
void sched_tsan_rcu_release(void) { tsan_release(&tsan_rcu); }
void sched_tsan_rcu_acquire(void) { tsan_acquire(&tsan_rcu); }

/* Scheduler bookkeeping is shared between threads and partly freed
 * through RCU, so it lives outside pools. */
static void *
sched_zalloc(size_t size)
{
  void *m = mem_alloc_shared(MEM_PROTOCOLS, size);
  memset(m, 0, size);
  return m;
}

static inline void sched_mfree(void *m, size_t size) { mem_free_shared(MEM_PROTOCOLS, m, size); }

/*
 * Source table
 */

static inline size_t
src_table_bytes(u32 size)
{
  return sizeof(struct src_table) + size * sizeof(struct loop_src *);
}

static void
src_table_free_rcu(struct rcu_head *h)
{
  sched_tsan_rcu_acquire();
  struct src_table *t = container_of(h, struct src_table, rcu);
  sched_mfree(t, src_table_bytes(t->size));
}

static void
src_free_rcu(struct rcu_head *h)
{
  sched_tsan_rcu_acquire();
  sched_mfree(container_of(h, struct loop_src, rcu), sizeof(struct loop_src));
}

/* Under lock: double the table. */
static void
src_table_grow(struct sched *s)
{
  struct src_table *old = s->srcs;
  u32 size = old->size * 2;
  struct src_table *t = sched_zalloc(src_table_bytes(size));
  t->size = size;
  for (u32 i = 0; i < old->size; i++)
    t->slot[i] = __atomic_load_n(&old->slot[i], __ATOMIC_RELAXED);

  u32 *gen = sched_zalloc(size * sizeof(u32));
  memcpy(gen, s->gen, old->size * sizeof(u32));
  for (u32 i = old->size; i < size; i++)
    gen[i] = 1;
  u32 *fs = sched_zalloc(size * sizeof(u32));
  memcpy(fs, s->free_slots, s->nfree * sizeof(u32));
  sched_mfree(s->gen, old->size * sizeof(u32));
  sched_mfree(s->free_slots, old->size * sizeof(u32));
  s->gen = gen;
  s->free_slots = fs;

  /* Readers still in the old table find the same sources there; a source
   * retired later is freed after them too, as they started before. */
  __atomic_store_n(&s->srcs, t, __ATOMIC_RELEASE);
  sched_tsan_rcu_release();
  call_rcu(&old->rcu, src_table_free_rcu);
}

struct loop_src *
sched_src_new(struct sched *s, enum loop_src_kind kind, struct loop *l, struct loop_fd *f)
{
  struct loop_src *src = sched_zalloc(sizeof(*src));
  src->kind = kind;
  src->loop = l;
  src->f = f;

  pthread_mutex_lock(&s->lock);
  if (!s->nfree && s->used == s->srcs->size)
    src_table_grow(s);
  u32 idx = s->nfree ? s->free_slots[--s->nfree] : s->used++;
  src->key = (u64) s->gen[idx] << 32 | idx;
  pthread_mutex_unlock(&s->lock);
  return src;
}

void
sched_src_watch(struct sched *s, struct loop_src *src, int fd, u32 events)
{
  u32 idx = (u32) src->key;
  pthread_mutex_lock(&s->lock);
  __atomic_store_n(&s->srcs->slot[idx], src, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&s->lock);

  struct epoll_event ev = { .events = events, .data.u64 = src->key };
  if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
    bug("%s: Cannot watch fd %d: %m", s->name, fd);
}

int
sched_src_unwatch(struct sched *s, struct loop_src *src, int fd)
{
  int rv = epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
  int saved_errno = errno;

  u32 idx = (u32) src->key;
  pthread_mutex_lock(&s->lock);
  ASSERT_DIE(__atomic_load_n(&s->srcs->slot[idx], __ATOMIC_RELAXED) == src);
  __atomic_store_n(&s->srcs->slot[idx], NULL, __ATOMIC_RELEASE);
  if (!++s->gen[idx])
    s->gen[idx] = 1;        /* key 0 is the exit token */
  s->free_slots[s->nfree++] = idx;
  pthread_mutex_unlock(&s->lock);

  sched_tsan_rcu_release();
  call_rcu(&src->rcu, src_free_rcu);
  errno = saved_errno;
  return rv;
}

/* Inside rcu_read_lock(). */
static struct loop_src *
src_lookup(struct sched *s, u64 key)
{
  struct src_table *t = __atomic_load_n(&s->srcs, __ATOMIC_ACQUIRE);
  u32 idx = (u32) key;
  if (idx >= t->size)
    return NULL;
  struct loop_src *src = __atomic_load_n(&t->slot[idx], __ATOMIC_ACQUIRE);
  return (src && src->key == key) ? src : NULL;
}

/*
 * Threads
 */

/* Wait for events and run loops until this thread takes an exit token. */
static void
sched_poll(struct sched *s)
{
  for (;;)
  {
    struct epoll_event ev;
    int n = epoll_wait(s->epfd, &ev, 1, -1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      bug("%s: epoll_wait: %m", s->name);
    if (!n)
      continue;

    if (ev.data.u64 == SCHED_EXIT_KEY)
    {
      u64 v;
      if (read(s->exitfd, &v, sizeof(v)) == sizeof(v))
        return;
      continue;     /* another thread took it */
    }

    rcu_read_lock();
    struct loop_src *src = src_lookup(s, ev.data.u64);
    struct loop *run = (src && loop_src_event(src, ev.events)) ? src->loop : NULL;
    sched_tsan_rcu_release();
    rcu_read_unlock();

    /* Claimed: only this thread may retire it now */
    if (run)
      loop_run(run);
  }
}

static void *
sched_thread_main(void *arg)
{
  struct sched_thread *t = arg;
  struct sched *s = t->sched;
  rcu_thread_register();
  tl_thread = t;

  sched_poll(s);

  rcu_thread_unregister();
  pthread_mutex_lock(&s->lock);
  s->live--;
  s->tokens--;
  t->exited = true;
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

/* Under lock. */
static bool
sched_thread_start(struct sched *s)
{
  struct sched_thread *t = sched_zalloc(sizeof(*t));
  t->sched = s;
  t->tmp = lp_new(s->pool);

  /* Asynchronous signals belong to the main thread; faults must stay
   * deliverable (a blocked SIGSEGV kills without any handler, so neither
   * a sanitizer nor a core dump would say where). */
  sigset_t all, old;
  sigfillset(&all);
  static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS };
  for (uint i = 0; i < ARRAY_SIZE(faults); i++)
    sigdelset(&all, faults[i]);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int err = pthread_create(&t->tid, NULL, sched_thread_main, t);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err)
  {
    log_msg(L_ERR, "%s: Cannot start thread: %s", s->name, strerror(err));
    rfree(t->tmp);
    sched_mfree(t, sizeof(*t));
    return false;
  }
  list_add_tail(&s->threads, &t->n);
  s->live++;
  return true;
}

/* Join the threads that left; with all, every thread (they must be leaving). */
static void
sched_reap(struct sched *s, bool all)
{
  for (;;)
  {
    struct sched_thread *gone = NULL;
    pthread_mutex_lock(&s->lock);
    LIST_WALK_ENTRY(t, &s->threads, struct sched_thread, n)
      if (t->exited || all)
      {
        gone = t;
        list_del(&t->n);
        break;
      }
    pthread_mutex_unlock(&s->lock);
    if (!gone)
      return;
    pthread_join(gone->tid, NULL);
    rfree(gone->tmp);
    sched_mfree(gone, sizeof(*gone));
  }
}

/* Under lock. */
static void
sched_post_tokens(struct sched *s, uint n)
{
  u64 v = n;
  if (n && write(s->exitfd, &v, sizeof(v)) != sizeof(v))
    bug("%s: Cannot post exit tokens: %m", s->name);
  s->tokens += n;
}

linpool *sched_thread_tmp(void) { return tl_thread ? tl_thread->tmp : NULL; }

/*
 * Schedulers
 */

static struct sched *
sched_alloc(const char *name, bool is_main)
{
  rcu_thread_register();
  size_t nlen = strlen(name) + 1;
  struct sched *s = sched_zalloc(sizeof(*s) + nlen);
  s->size = sizeof(*s) + nlen;
  memcpy(s->name, name, nlen);
  s->is_main = is_main;
  pthread_mutex_init(&s->lock, NULL);
  list_init(&s->threads);
  s->pool = rp_new(root_pool(), MEM_PROTOCOLS, name);

  s->srcs = sched_zalloc(src_table_bytes(SRC_TABLE_MIN));
  s->srcs->size = SRC_TABLE_MIN;
  s->gen = sched_zalloc(SRC_TABLE_MIN * sizeof(u32));
  s->free_slots = sched_zalloc(SRC_TABLE_MIN * sizeof(u32));
  for (u32 i = 0; i < SRC_TABLE_MIN; i++)
    s->gen[i] = 1;

  s->epfd = epoll_create1(EPOLL_CLOEXEC);
  s->exitfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC | EFD_SEMAPHORE);
  if (s->epfd < 0 || s->exitfd < 0)
    die("%s: Cannot create scheduler: %m", name);
  /* Level-triggered: a token stays visible until some thread takes it */
  struct epoll_event ev = { .events = EPOLLIN, .data.u64 = SCHED_EXIT_KEY };
  if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->exitfd, &ev) < 0)
    die("%s: Cannot watch exit eventfd: %m", name);
  return s;
}

struct sched *
sched_new(const char *name, uint threads)
{
  struct sched *s = sched_alloc(name, false);
  sched_set_threads(s, threads);
  return s;
}

void
sched_set_threads(struct sched *s, uint threads)
{
  ASSERT_DIE(!s->is_main);
  sched_reap(s, false);

  pthread_mutex_lock(&s->lock);
  uint staying = s->live - s->tokens;
  /* Take back tokens nobody took yet rather than start new threads */
  while (threads > staying && s->tokens)
  {
    u64 v;
    if (read(s->exitfd, &v, sizeof(v)) != sizeof(v))
      break;
    s->tokens--;
    staying++;
  }
  for (; staying < threads; staying++)
    if (!sched_thread_start(s))
      break;
  if (staying > threads)
    sched_post_tokens(s, staying - threads);
  pthread_mutex_unlock(&s->lock);
}

uint
sched_threads(struct sched *s)
{
  pthread_mutex_lock(&s->lock);
  uint n = s->is_main ? 1 : s->live;
  pthread_mutex_unlock(&s->lock);
  return n;
}

const char *sched_name(struct sched *s) { return s->name; }

void
sched_free(struct sched *s)
{
  ASSERT_DIE(!s->is_main);
  pthread_mutex_lock(&s->lock);
  for (u32 i = 0; i < s->srcs->size; i++)
    if (__atomic_load_n(&s->srcs->slot[i], __ATOMIC_RELAXED))
      bug("%s: Freeing a scheduler that still has loops", s->name);
  sched_post_tokens(s, s->live - s->tokens);
  pthread_mutex_unlock(&s->lock);

  sched_reap(s, true);

  close(s->epfd);
  close(s->exitfd);
  pthread_mutex_destroy(&s->lock);
  /* Replaced tables may still wait for their grace period; this one not */
  u32 size = s->srcs->size;
  sched_mfree(s->gen, size * sizeof(u32));
  sched_mfree(s->free_slots, size * sizeof(u32));
  sched_mfree(s->srcs, src_table_bytes(size));
  rfree(s->pool);
  sched_mfree(s, s->size);
}

/*
 * The main scheduler
 */

struct sched *
sched_main_init(void)
{
  ASSERT_DIE(!main_sched);
  struct sched *s = sched_alloc("main", true);
  s->main_tid = pthread_self();

  struct sched_thread *t = sched_zalloc(sizeof(*t));
  t->sched = s;
  t->tid = s->main_tid;
  t->tmp = lp_new(s->pool);
  tl_thread = t;

  main_sched = s;
  main_loop_ptr = loop_new(s, "main");
  if (!main_loop_ptr)
    die("Cannot create the main loop");
  loop_set_home(main_loop_ptr);
  return s;
}

struct loop *main_loop(void) { return main_loop_ptr; }

void
sched_main_run(void)
{
  ASSERT_DIE(main_sched && pthread_equal(pthread_self(), main_sched->main_tid));
  /* Pick up what start-up code queued or armed outside a run */
  loop_wake(main_loop_ptr);
  sched_poll(main_sched);
}

void
loop_main_quit(void)
{
  ASSERT_DIE(main_sched);
  u64 one = 1;
  if (write(main_sched->exitfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
    bug("Cannot post the main exit token: %m");
}
