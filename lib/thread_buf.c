/*
 * DOC: Scratch buffers of each thread's own (lib/thread_buf.h).
 */
#include <pthread.h>
#include "lib/thread_buf.h"
#include "lib/rcu.h"

static __thread struct thread_buf *tl_bufs;

static pthread_once_t thread_buf_once = PTHREAD_ONCE_INIT;
static void thread_buf_hook(void) { rcu_thread_at_exit(thread_buf_release_all); }

void *
thread_buf_get(struct thread_buf *b, size_t size)
{
  if (b->size >= size)
    return b->mem;
  pthread_once(&thread_buf_once, thread_buf_hook);
  if (b->mem)
    mem_free_shared(b->cls, b->mem, b->size);
  else {
    b->next = tl_bufs;
    tl_bufs = b;
  }
  b->mem = mem_alloc_shared(b->cls, size);
  b->size = size;
  return b->mem;
}

void
thread_buf_release_all(void)
{
  for (struct thread_buf *b = tl_bufs, *next; b; b = next) {
    next = b->next;
    mem_free_shared(b->cls, b->mem, b->size);
    *b = (struct thread_buf){ .cls = b->cls };
  }
  tl_bufs = NULL;
}
