/*
 * DOC: Output queue of a non-blocking stream socket.
 *
 * The owner appends bytes; txq_flush() writes as much as the socket takes
 * and keeps the rest for the next writable event. Used by CLI sessions and
 * BGP connections alike. Owner: the loop of the socket; not thread-safe.
 */
#ifndef LIB_TXQ_H
#define LIB_TXQ_H

#include "lib/birdlib.h"
#include "lib/resource.h"

struct txq_chunk;

struct txq {
  struct txq_chunk *head, *tail;
  size_t queued;              /* bytes not yet written */
  enum mem_class cls;         /* accounting class of the chunks */
};

void txq_init(struct txq *q, enum mem_class cls);
void txq_append(struct txq *q, const void *data, size_t len);
/* 0: everything written; 1: data left (the socket would block);
 * -1: write error, errno set (the queue keeps its data). */
int txq_flush(struct txq *q, int fd);
/* Drop everything queued. */
void txq_clear(struct txq *q);
static inline size_t txq_queued(const struct txq *q) { return q->queued; }

#endif
