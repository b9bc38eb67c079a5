/*
 * DOC: Output queue of a non-blocking stream socket (see txq.h).
 *
 * Chunks of at least 64 KiB; appends fill the last chunk while it has
 * room and nothing of it was written yet, so small messages (BGP
 * KEEPALIVEs, CLI lines) coalesce into few send() calls.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include "lib/txq.h"

#define TXQ_CHUNK (64 * 1024)

struct txq_chunk {
  struct txq_chunk *next;
  size_t len, pos, size;
  u8 data[];
};

void
txq_init(struct txq *q, enum mem_class cls)
{
  q->head = q->tail = NULL;
  q->queued = 0;
  q->cls = cls;
}

void
txq_append(struct txq *q, const void *data, size_t len)
{
  struct txq_chunk *t = q->tail;
  if (!t || t->pos || t->size - t->len < len) {
    size_t size = MAX(len, TXQ_CHUNK);
    t = mem_alloc_shared(q->cls, sizeof(*t) + size);
    t->next = NULL;
    t->len = t->pos = 0;
    t->size = size;
    if (q->tail)
      q->tail->next = t;
    else
      q->head = t;
    q->tail = t;
  }
  memcpy(t->data + t->len, data, len);
  t->len += len;
  q->queued += len;
}

static void
txq_pop(struct txq *q)
{
  struct txq_chunk *t = q->head;
  q->head = t->next;
  if (!q->head)
    q->tail = NULL;
  mem_free_shared(q->cls, t, sizeof(*t) + t->size);
}

int
txq_flush(struct txq *q, int fd)
{
  while (q->head) {
    struct txq_chunk *t = q->head;
    ssize_t n = send(fd, t->data + t->pos, t->len - t->pos, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return (errno == EAGAIN || errno == EWOULDBLOCK) ? 1 : -1;
    }
    t->pos += n;
    q->queued -= n;
    if (t->pos == t->len)
      txq_pop(q);
  }
  return 0;
}

void
txq_clear(struct txq *q)
{
  while (q->head)
    txq_pop(q);
  q->queued = 0;
}
