/*
 * DOC: RCU thread registration, made idempotent.
 */
#include "lib/rcu.h"

static __thread int registered;

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
    urcu_memb_unregister_thread();
    registered = 0;
  }
}
