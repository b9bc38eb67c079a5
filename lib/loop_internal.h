/*
 * DOC: Internals shared by lib/loop.c (loops) and lib/sched.c (schedulers).
 *
 * Nothing else includes this file; the public interface is lib/loop.h.
 *
 * A struct loop_src is what one epoll registration stands for: a loop's
 * wake-up eventfd, its timerfd, or one of its loop_fds. The epoll data of
 * a registration is the source's key (generation << 32 | slot in the
 * scheduler's source table), never a pointer; lib/sched.c explains why.
 * The loop creates and retires its sources through sched_src_*(); the
 * scheduler's threads hand events to loop_src_event() and run the loops
 * they claim with loop_run().
 */
#ifndef LIB_LOOP_INTERNAL_H
#define LIB_LOOP_INTERNAL_H

#include "lib/loop.h"

enum loop_src_kind { SRC_WAKE, SRC_TIMER, SRC_FD };

struct loop_src {
  u64 key;                  /* epoll data: generation << 32 | slot; 0 is never used */
  enum loop_src_kind kind;
  u32 ready;                /* atomic: LOOP_FD_* (SRC_FD) or 1; set by pollers, taken by the loop */
  struct loop *loop;
  struct loop_fd *f;        /* SRC_FD; dereferenced by the loop only */
  struct lnode n;           /* in the loop's list of fd sources; owner: loop */
  struct rcu_head rcu;
};

/* lib/sched.c */

/* A new source with its key; pollers cannot see it before sched_src_watch(). */
struct loop_src *sched_src_new(struct sched *s, enum loop_src_kind kind, struct loop *l, struct loop_fd *f);
/* Publish the source and register fd with epoll (events as for epoll_ctl). */
void sched_src_watch(struct sched *s, struct loop_src *src, int fd, u32 events);
/* Unregister fd and retire the source; pollers drop its events from now
 * on, and it is freed after a grace period. Returns epoll_ctl's result. */
int sched_src_unwatch(struct sched *s, struct loop_src *src, int fd);

/* loop_tmp() of the calling thread, NULL if it is no scheduler thread. */
linpool *sched_thread_tmp(void);

/* Happens-before for ThreadSanitizer across RCU: release at the end of a
 * read-side section and before call_rcu(), acquire in the callback. */
void sched_tsan_rcu_release(void);
void sched_tsan_rcu_acquire(void);

/* lib/loop.c */

/* A poller got events for src; inside rcu_read_lock(). Returns true if
 * this thread claimed the loop and must loop_run() it. */
bool loop_src_event(struct loop_src *src, u32 events);
/* Run a loop whose RUNNING state this thread has claimed. */
void loop_run(struct loop *l);
/* Make l the calling thread's loop outside runs (the main thread's). */
void loop_set_home(struct loop *l);
/* Write l's wake-up eventfd. */
void loop_wake(struct loop *l);

/*
 * ThreadSanitizer does not see liburcu's synchronisation (inline asm
 * atomics, membarrier grace periods); these tell it what the algorithms
 * guarantee.
 */
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
static inline void tsan_release(void *a) { __tsan_release(a); }
static inline void tsan_acquire(void *a) { __tsan_acquire(a); }
static inline void tsan_ignore_begin(void)
{
  AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
  AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
}
static inline void tsan_ignore_end(void)
{
  AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
  AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
}
#else
static inline void tsan_release(void *a UNUSED) {}
static inline void tsan_acquire(void *a UNUSED) {}
static inline void tsan_ignore_begin(void) {}
static inline void tsan_ignore_end(void) {}
#endif

#endif
