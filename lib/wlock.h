/*
 * A writer lock for short critical sections taken from many threads at
 * once (a route table's writers: one step of a batch, about a
 * microsecond). A contender spins reading the lock word, so the spinners
 * share its cache line instead of taking it from the holder with every
 * try, and sleeps on a futex only after a while (the holder may have lost
 * its core). Not recursive; no owner is recorded. The word has a cache
 * line of its own wherever the struct is placed: spinners reading it must
 * not slow the holder's writes to what lies beside it.
 */

#ifndef LIB_WLOCK_H
#define LIB_WLOCK_H

#include "lib/birdlib.h"

struct wlock {
  char before[64];
  u32 state;                  /* 0 free, 1 held, 2 held and a thread may sleep on it */
  char after[60];
};

static inline void
wlock_init(struct wlock *l)
{
  __atomic_store_n(&l->state, 0, __ATOMIC_RELAXED);
}

static inline int
wlock_try(struct wlock *l)
{
  u32 free = 0;
  return __atomic_compare_exchange_n(&l->state, &free, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* Whether some thread holds it (a test's check that none was left held). */
static inline int
wlock_held(struct wlock *l)
{
  return __atomic_load_n(&l->state, __ATOMIC_RELAXED) != 0;
}

/* The contended path: spin, then sleep. */
void wlock_wait(struct wlock *l);
/* Wakes one sleeper. */
void wlock_wake(struct wlock *l);

static inline void
wlock_take(struct wlock *l)
{
  if (!wlock_try(l))
    wlock_wait(l);
}

static inline void
wlock_give(struct wlock *l)
{
  if (__atomic_exchange_n(&l->state, 0, __ATOMIC_RELEASE) == 2)
    wlock_wake(l);
}

#endif
