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
#include <sys/types.h>

/*
 * Pointer publication and atomics over C11 builtins. liburcu 0.13 (Debian
 * 12) implements these with volatile accesses and fences, which
 * ThreadSanitizer cannot see, so every RCU publish would look like a data
 * race. The builtins compile to the same instructions on x86 and to proper
 * acquire/release elsewhere.
 */
#undef rcu_dereference
#undef rcu_assign_pointer
#undef rcu_xchg_pointer
#define rcu_dereference(p) __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#define rcu_assign_pointer(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
#define rcu_xchg_pointer(pp, v) __atomic_exchange_n((pp), (v), __ATOMIC_ACQ_REL)

#undef uatomic_read
#undef uatomic_set
#undef uatomic_inc
#undef uatomic_dec
#undef uatomic_add_return
#undef uatomic_sub_return
#undef uatomic_cmpxchg
#undef uatomic_xchg
#define uatomic_read(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define uatomic_set(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define uatomic_inc(p) ((void) __atomic_add_fetch((p), 1, __ATOMIC_SEQ_CST))
#define uatomic_dec(p) ((void) __atomic_sub_fetch((p), 1, __ATOMIC_SEQ_CST))
#define uatomic_add_return(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
#define uatomic_sub_return(p, v) __atomic_sub_fetch((p), (v), __ATOMIC_SEQ_CST)
#define uatomic_xchg(p, v) __atomic_exchange_n((p), (v), __ATOMIC_SEQ_CST)
#define uatomic_cmpxchg(p, old, new) \
  ({ __typeof__(*(p)) _o = (old); \
     __atomic_compare_exchange_n((p), &_o, (new), 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); _o; })

/*
 * Objects published through liburcu's own structures (cds_lfht_add, the
 * wfcqueue) are handed over inside uninstrumented library code; tell TSan
 * about that handover. No code in normal builds.
 */
#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define rcu_tsan_publish(obj) __tsan_release((void *) (obj))
#define rcu_tsan_found(obj) __tsan_acquire((void *) (obj))
/* A grace period orders every read section before every callback that
 * follows it: model that with one token readers release on unlock. */
void *rcu_tsan_gp_token(void);
#undef rcu_read_unlock
#define rcu_read_unlock() do { __tsan_release(rcu_tsan_gp_token()); urcu_memb_read_unlock(); } while (0)
/* A full barrier: ThreadSanitizer refuses __atomic_thread_fence, so
 * liburcu's own (inline assembly, which it does not see) stands in. */
#define rcu_full_fence() cmm_smp_mb()
#else
#define rcu_tsan_publish(obj) ((void) (obj))
#define rcu_tsan_found(obj) ((void) (obj))
/* A full barrier (stores before it are visible before loads after it). */
#define rcu_full_fence() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif

/* Deferred frees (lib/rcu_call.c): fn(head) runs once every read section
 * that began before the call has ended, on a thread of ours that does not
 * sleep between grace periods as liburcu's does. From any thread, in a
 * read section or not; callbacks run one at a time, in the order given. */
void rcu_call(struct rcu_head *head, void (*fn)(struct rcu_head *));
/* Until every callback given before it (to rcu_call() or liburcu's own
 * queue) has run. Not in a read section, nor from a callback. */
void rcu_call_barrier(void);
#undef call_rcu
#define call_rcu rcu_call
#undef rcu_barrier
#define rcu_barrier rcu_call_barrier

/* Idempotent per thread: whoever first needs RCU on a thread registers it
 * (a scheduler creating its threads, a test, a helper thread). */
void rcu_thread_register(void);
void rcu_thread_unregister(void);
/* fn runs in every thread that unregisters from now on, just before it
 * does (still able to unref RCU-freed objects): for per-thread caches.
 * At most 8 in the process. */
void rcu_thread_at_exit(void (*fn)(void));

#endif
