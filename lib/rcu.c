/*
 * DOC: RCU thread registration, made idempotent.
 */
#include "lib/rcu.h"
#include <stdlib.h>

static __thread int registered;

#define RCU_EXIT_HOOKS 8
static void (*exit_hooks[RCU_EXIT_HOOKS])(void);   /* atomic; filled once each */
static uint exit_hook_count;                        /* atomic */

void
rcu_thread_at_exit(void (*fn)(void))
{
  uint i = __atomic_fetch_add(&exit_hook_count, 1, __ATOMIC_ACQ_REL);
  if (i >= RCU_EXIT_HOOKS)
    abort();
  __atomic_store_n(&exit_hooks[i], fn, __ATOMIC_RELEASE);
}

void
rcu_thread_register(void)
{
  if (!registered) {
    urcu_memb_register_thread();
    registered = 1;
  }
}

void
rcu_thread_unregister(void)
{
  if (registered) {
    uint n = __atomic_load_n(&exit_hook_count, __ATOMIC_ACQUIRE);
    for (uint i = 0; i < n && i < RCU_EXIT_HOOKS; i++) {
      void (*fn)(void) = __atomic_load_n(&exit_hooks[i], __ATOMIC_ACQUIRE);
      if (fn)
        fn();
    }
    urcu_memb_unregister_thread();
    registered = 0;
  }
}

#if defined(__SANITIZE_THREAD__)
static char rcu_tsan_gp;
void *rcu_tsan_gp_token(void) { return &rcu_tsan_gp; }
#endif
