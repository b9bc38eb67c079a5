/*
 * DOC: Intrusive circular doubly-linked lists.
 *
 * A list head is an lnode whose next/prev point to itself when empty.
 * Elements embed an lnode and are reached with container_of. Not
 * thread-safe: a list belongs to the loop that owns its head.
 */
#ifndef LIB_LISTS_H
#define LIB_LISTS_H

#include "lib/birdlib.h"

struct lnode {
  struct lnode *next, *prev;
};

static inline void list_init(struct lnode *head) { head->next = head->prev = head; }
static inline int list_empty(const struct lnode *head) { return head->next == head; }
static inline int lnode_linked(const struct lnode *n) { return n->next && n->next != n; }

static inline void list_insert_between(struct lnode *n, struct lnode *prev, struct lnode *next)
{
  n->prev = prev;
  n->next = next;
  prev->next = n;
  next->prev = n;
}

static inline void list_add_tail(struct lnode *head, struct lnode *n) { list_insert_between(n, head->prev, head); }
static inline void list_add_head(struct lnode *head, struct lnode *n) { list_insert_between(n, head, head->next); }
/* Insert n right after pos. */
static inline void list_insert_after(struct lnode *pos, struct lnode *n) { list_insert_between(n, pos, pos->next); }

/* Unlink; the node is left self-linked so lnode_linked() reports false. */
static inline void list_del(struct lnode *n)
{
  n->prev->next = n->next;
  n->next->prev = n->prev;
  n->next = n->prev = n;
}

static inline struct lnode *list_first(const struct lnode *head) { return list_empty(head) ? NULL : head->next; }
static inline struct lnode *list_last(const struct lnode *head) { return list_empty(head) ? NULL : head->prev; }

static inline uint list_length(const struct lnode *head)
{
  uint n = 0;
  for (const struct lnode *x = head->next; x != head; x = x->next)
    n++;
  return n;
}

/* Move all elements of src to the tail of dst; src becomes empty. */
static inline void list_splice_tail(struct lnode *dst, struct lnode *src)
{
  if (list_empty(src))
    return;
  struct lnode *first = src->next, *last = src->prev;
  first->prev = dst->prev;
  dst->prev->next = first;
  last->next = dst;
  dst->prev = last;
  list_init(src);
}

#define LIST_WALK(n, head) for (struct lnode *n = (head)->next; n != (head); n = n->next)
#define LIST_WALK_SAFE(n, head) \
  for (struct lnode *n = (head)->next, *n##_next = n->next; n != (head); n = n##_next, n##_next = n->next)
/* Walk typed elements: type *v over list head, via member field. */
#define LIST_WALK_ENTRY(v, head, type, member) \
  for (type *v = container_of((head)->next, type, member); &v->member != (head); \
       v = container_of(v->member.next, type, member))
#define LIST_WALK_ENTRY_SAFE(v, head, type, member) \
  for (type *v = container_of((head)->next, type, member), *v##_next = container_of(v->member.next, type, member); \
       &v->member != (head); v = v##_next, v##_next = container_of(v->member.next, type, member))

#endif
