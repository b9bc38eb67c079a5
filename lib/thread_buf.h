/*
 * DOC: Scratch buffers of each thread's own.
 *
 * A buffer too large for static thread-local storage: glibc clears a
 * thread's whole static TLS when the thread starts, so a 64 kB array
 * there is 64 kB resident in every thread of the process, whether it
 * ever uses it or not. A struct thread_buf in TLS is a few words; its
 * memory is made on first use by the thread that uses it, grown on
 * demand, counted in its memory class, and given back when the thread
 * leaves RCU (rcu_thread_unregister()).
 *
 * Ownership: the thread whose TLS holds the struct.
 */
#ifndef LIB_THREAD_BUF_H
#define LIB_THREAD_BUF_H

#include "lib/birdlib.h"
#include "lib/resource.h"

struct thread_buf {
  enum mem_class cls;           /* set by the declaration */
  void *mem;
  size_t size;
  struct thread_buf *next;      /* the thread's buffers that hold memory */
};

/* Declares a thread's buffer counted in class cls. */
#define THREAD_BUF(name, c) static __thread struct thread_buf name = { .cls = (c) }

/* At least size bytes, kept as they are while the buffer does not grow
 * (growing does not keep them). */
void *thread_buf_get(struct thread_buf *b, size_t size);

/* Gives back every buffer of the calling thread (done for it when the
 * thread unregisters from RCU). */
void thread_buf_release_all(void);

#endif
