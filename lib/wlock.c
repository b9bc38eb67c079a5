/*
 * The contended side of lib/wlock.h: a futex mutex (states 0, 1, 2) whose
 * contenders spin reading before they sleep.
 */

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <urcu/arch.h>

#include "lib/wlock.h"

/* About as long as a dozen holds of a table step under contention: a
 * contender that sleeps at once costs both sides a futex call, each longer
 * than the wait. */
#define WLOCK_SPIN_PAUSES 2048

void
wlock_wait(struct wlock *l)
{
  for (uint i = 0; i < WLOCK_SPIN_PAUSES; i++) {
    u32 s = __atomic_load_n(&l->state, __ATOMIC_RELAXED);
    /* taken from under sleepers too: one that wakes finds it held and
     * sleeps again, and a give wakes it later (the word stays 2) */
    if (s == 0 && wlock_try(l))
      return;
    caa_cpu_relax();
  }
  /* Whoever takes the lock from here marks it 2: a sleeper that was woken
   * cannot tell whether others still sleep, so its give wakes one more. */
  while (__atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE) != 0)
    syscall(SYS_futex, &l->state, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

void
wlock_wake(struct wlock *l)
{
  syscall(SYS_futex, &l->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
