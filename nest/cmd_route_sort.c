/*
 * The listing order of a `sorted` table in bounded steps: runs sorted one
 * a step, merged through a heap as they are listed (nest/cmd_route_sort.h).
 */
#include <stdlib.h>
#include <string.h>
#include "nest/cmd_route_sort.h"

static void *
sr_sort_realloc(void *p, size_t bytes)
{
  void *q = realloc(p, bytes);
  if (!q && bytes)
    die("Out of memory");
  return q;
}

static inline const net_addr *
sr_addr(const struct sr_sort *s, size_t i)
{
  return (const net_addr *) (s->v + i * s->stride);
}

static int
sr_addr_cmp(const void *x, const void *y)
{
  return net_compare(x, y);
}

/* Runs r and q by their next addresses: r first? */
static inline int
sr_run_first(const struct sr_sort *s, u32 r, u32 q)
{
  return net_compare(sr_addr(s, s->at[r]), sr_addr(s, s->at[q])) < 0;
}

static void
sr_heap_down(struct sr_sort *s, u32 i)
{
  for (;;) {
    u32 l = 2 * i + 1, m = i;
    if (l < s->heap_len && sr_run_first(s, s->heap[l], s->heap[m]))
      m = l;
    if (l + 1 < s->heap_len && sr_run_first(s, s->heap[l + 1], s->heap[m]))
      m = l + 1;
    if (m == i)
      return;
    u32 x = s->heap[i];
    s->heap[i] = s->heap[m];
    s->heap[m] = x;
    i = m;
  }
}

void
sr_sort_init(struct sr_sort *s, size_t stride, size_t run)
{
  *s = (struct sr_sort){ .stride = stride, .run = run ? run : 1 };
}

void
sr_sort_add(struct sr_sort *s, const net_addr *n)
{
  if (s->len == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 1024;
    s->v = sr_sort_realloc(s->v, s->cap * s->stride);
  }
  net_copy((net_addr *) (s->v + s->len++ * s->stride), n);
}

int
sr_sort_step(struct sr_sort *s)
{
  if (s->merging)
    return 1;
  if (s->sorted < s->len) {
    size_t k = MIN(s->run, s->len - s->sorted);
    qsort(s->v + s->sorted * s->stride, k, s->stride, sr_addr_cmp);
    s->sorted += k;
    return 0;
  }
  u32 runs = (u32) ((s->len + s->run - 1) / s->run);
  s->at = sr_sort_realloc(NULL, runs * sizeof(*s->at));
  s->heap = sr_sort_realloc(NULL, runs * sizeof(*s->heap));
  for (u32 r = 0; r < runs; r++) {
    s->at[r] = r * s->run;
    s->heap[r] = r;
  }
  s->heap_len = runs;
  for (u32 i = runs / 2; i-- > 0;)
    sr_heap_down(s, i);
  s->merging = 1;
  return 1;
}

const net_addr *
sr_sort_next(struct sr_sort *s)
{
  if (!s->heap_len)
    return NULL;
  u32 r = s->heap[0];
  const net_addr *a = sr_addr(s, s->at[r]++);
  if (s->at[r] == MIN(s->len, (size_t) (r + 1) * s->run))
    s->heap[0] = s->heap[--s->heap_len];
  if (s->heap_len)
    sr_heap_down(s, 0);
  return a;
}

void
sr_sort_free(struct sr_sort *s)
{
  free(s->v);
  free(s->at);
  free(s->heap);
  *s = (struct sr_sort){ 0 };
}
