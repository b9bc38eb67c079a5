/*
 * DOC: The one place that picks the liburcu flavour.
 *
 * We use urcu-memb (no signals, no quiescent-state announcements needed).
 * Every thread that reads RCU-protected data must call rcu_thread_register()
 * once; the loop scheduler does it for its threads. Readers must not block
 * or take mutexes inside a read section; never call synchronize_rcu() from
 * a loop thread (retire with call_rcu instead).
 */
#ifndef LIB_RCU_H
#define LIB_RCU_H

/* <urcu.h> with RCU_MEMBARRIER is the memb flavour with the generic names
 * (rcu_read_lock, call_rcu, cds_lfht_new) mapped to it. */
#define _LGPL_SOURCE 1
#define RCU_MEMBARRIER 1
#include <urcu.h>
#include <urcu/rculfhash.h>
#include <urcu/wfcqueue.h>
#include <urcu/uatomic.h>

/* Idempotent per thread: whoever first needs RCU on a thread registers it
 * (a scheduler creating its threads, a test, a helper thread). */
void rcu_thread_register(void);
void rcu_thread_unregister(void);

#endif
