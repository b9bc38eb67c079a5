/*
 * DOC: Transmit log: one writer, lock-free readers, chunks freed behind them.
 *
 * The log is a list of chunks, and a position in it is an absolute byte
 * offset: a chunk covers [base, base + size), the next one starts where it
 * ends. Entries are 8-byte aligned and never cross a chunk; when one does
 * not fit, the writer marks the rest of the chunk skipped (a length of
 * TXLOG_SKIP) and starts a new chunk of max(BGP_TXLOG_CHUNK, the entry).
 *
 * Publication is one word: log->end, the offset up to which everything is
 * written. The writer fills entries, seals chunks and links new ones with
 * plain stores, then stores end with release; a reader loads end with
 * acquire and reads only below it, so whatever it reads (entry bytes, a
 * skip mark, chunk->next, the next chunk's base and size) was written
 * before and is never written again. The writer only writes at or above
 * end. A batch of appends thus shows up at once, on bgp_txlog_publish().
 *
 * Freeing: a cursor stores (release) the chunk it reads only after it has
 * read all it needs from the previous one, chunk->next included; trim
 * loads (acquire) every cursor's chunk and frees the chunks before the
 * oldest. The chunk holding end is kept too, for cursors that join later:
 * they start there. Join, leave, publish (for the wake-ups and the chunk
 * of end) and trim (for the walk over cursors) share one mutex, never
 * held while reading entries; since trim computes what to keep under it
 * and join takes its chunk under it, a joining cursor never lands in a
 * chunk being freed.
 *
 * Chunks are malloc'd (mem_alloc_shared, counted as protocol memory): the
 * log is shared between loops, so no loop's pool may own it.
 */
#include <pthread.h>
#include <string.h>
#include "proto/bgp/bgp_txlog.h"
#include "lib/loop.h"
#include "lib/resource.h"

#define TXLOG_SKIP 0xffffffffU          /* entry length: the rest of the chunk is unused */

_Static_assert(sizeof(struct bgp_txlog_entry) == 16, "entry header is 16 bytes");

struct bgp_txlog_chunk {
  struct bgp_txlog_chunk *next;         /* writer; readers follow it only below end */
  u64 base;                             /* writer, before linking: offset of data[0] */
  u32 size;                             /* writer, before linking: bytes of data */
  u32 used;                             /* writer only: bytes appended */
  u8 data[] __attribute__((aligned(8)));
};

struct bgp_txlog {
  u64 end;                              /* writer stores (release), readers load (acquire):
                                         * the published end */
  struct bgp_txlog_chunk *head;         /* writer: the oldest chunk not freed */
  struct bgp_txlog_chunk *tail;         /* writer: the chunk being appended to */
  struct bgp_txlog_chunk *end_chunk;    /* writer, under lock: the chunk holding end */
  u64 held;                             /* writer: bytes allocated in chunks */
  pthread_mutex_t lock;                 /* the cursor list and end_chunk */
  struct lnode cursors;                 /* struct bgp_txlog_cursor.n, under lock */
};

static inline uint
txlog_entry_size(uint words, uint len)
{
  return ALIGN_UP(sizeof(struct bgp_txlog_entry) + 4 * words + len, 8);
}

static struct bgp_txlog_chunk *
txlog_chunk_new(struct bgp_txlog *log, u64 base, uint need)
{
  size_t bytes = MAX(BGP_TXLOG_CHUNK, sizeof(struct bgp_txlog_chunk) + need);
  struct bgp_txlog_chunk *c = mem_alloc_shared(MEM_PROTOCOLS, bytes);
  c->next = NULL;
  c->base = base;
  c->size = bytes - sizeof(struct bgp_txlog_chunk);
  c->used = 0;
  log->held += bytes;
  return c;
}

static void
txlog_chunk_free(struct bgp_txlog *log, struct bgp_txlog_chunk *c)
{
  size_t bytes = sizeof(struct bgp_txlog_chunk) + c->size;
  log->held -= bytes;
  mem_free_shared(MEM_PROTOCOLS, c, bytes);
}

struct bgp_txlog *
bgp_txlog_new(void)
{
  struct bgp_txlog *log = mem_alloc_shared(MEM_PROTOCOLS, sizeof(*log));
  memset(log, 0, sizeof(*log));
  pthread_mutex_init(&log->lock, NULL);
  list_init(&log->cursors);
  log->head = log->tail = log->end_chunk = txlog_chunk_new(log, 0, 0);
  return log;
}

void
bgp_txlog_free(struct bgp_txlog *log)
{
  ASSERT_DIE(list_empty(&log->cursors));
  while (log->head) {
    struct bgp_txlog_chunk *c = log->head;
    log->head = c->next;
    txlog_chunk_free(log, c);
  }
  pthread_mutex_destroy(&log->lock);
  mem_free_shared(MEM_PROTOCOLS, log, sizeof(*log));
}

void
bgp_txlog_append(struct bgp_txlog *log, enum bgp_txlog_audience aud, u32 member, const void *msg, uint len)
{
  bgp_txlog_append_cohort(log, aud, 0, member, msg, len);
}

void
bgp_txlog_append_cohort(struct bgp_txlog *log, enum bgp_txlog_audience aud, u32 cohort, u32 member,
                        const void *msg, uint len)
{
  bgp_txlog_append_set(log, aud, cohort, member, NULL, 0, msg, len);
}

void
bgp_txlog_append_set(struct bgp_txlog *log, enum bgp_txlog_audience aud, u32 cohort, u32 member,
                     const u32 *classes, uint words, const void *msg, uint len)
{
  ASSERT_DIE(len <= BGP_TXLOG_MAX_MSG && words <= 0xffff);
  uint need = txlog_entry_size(words, len);
  struct bgp_txlog_chunk *t = log->tail;
  if (t->size - t->used < need) {
    /* Sizes and offsets are multiples of 8: a rest has room for the mark. */
    if (t->used < t->size) {
      u32 skip = TXLOG_SKIP;
      memcpy(t->data + t->used, &skip, sizeof(skip));
    }
    struct bgp_txlog_chunk *n = txlog_chunk_new(log, t->base + t->size, need);
    t->next = n;
    log->tail = t = n;
  }
  struct bgp_txlog_entry *e = (struct bgp_txlog_entry *) (t->data + t->used);
  *e = (struct bgp_txlog_entry){ .len = len, .audience = aud, .classes = words, .member = member, .cohort = cohort };
  if (words)
    memcpy(e + 1, classes, 4 * words);
  memcpy((u8 *) (e + 1) + 4 * words, msg, len);
  t->used += need;
}

/* ev_send() never blocks: fine under the lock, which keeps members from
 * leaving (and freeing their events) meanwhile. */
static void
txlog_wake_locked(struct bgp_txlog *log)
{
  for (struct lnode *n = log->cursors.next; n != &log->cursors; n = n->next) {
    struct bgp_txlog_cursor *cur = container_of(n, struct bgp_txlog_cursor, n);
    if (cur->loop)
      ev_send(cur->loop, cur->wake);
  }
}

void
bgp_txlog_publish(struct bgp_txlog *log)
{
  u64 end = log->tail->base + log->tail->used;
  /* The writer is the only one to store end: a plain read of its own. */
  if (end == __atomic_load_n(&log->end, __ATOMIC_RELAXED))
    return;
  pthread_mutex_lock(&log->lock);
  log->end_chunk = log->tail;
  __atomic_store_n(&log->end, end, __ATOMIC_RELEASE);
  txlog_wake_locked(log);
  pthread_mutex_unlock(&log->lock);
}

void
bgp_txlog_wake_all(struct bgp_txlog *log)
{
  pthread_mutex_lock(&log->lock);
  txlog_wake_locked(log);
  pthread_mutex_unlock(&log->lock);
}

void
bgp_txlog_trim(struct bgp_txlog *log)
{
  pthread_mutex_lock(&log->lock);
  u64 keep = log->end_chunk->base;
  for (struct lnode *n = log->cursors.next; n != &log->cursors; n = n->next) {
    struct bgp_txlog_cursor *cur = container_of(n, struct bgp_txlog_cursor, n);
    /* Cursors only move forward: an older value keeps more, never less. */
    struct bgp_txlog_chunk *c = __atomic_load_n(&cur->chunk, __ATOMIC_ACQUIRE);
    keep = MIN(keep, c->base);
  }
  pthread_mutex_unlock(&log->lock);
  /* No cursor is before keep, and one that joins now starts at end_chunk,
   * which only this thread moves, forward: the chunks before are ours. */
  while (log->head->base < keep) {
    struct bgp_txlog_chunk *c = log->head;
    log->head = c->next;
    txlog_chunk_free(log, c);
  }
}

u64
bgp_txlog_held(const struct bgp_txlog *log)
{
  return log->held;
}

void
bgp_txlog_join(struct bgp_txlog *log, struct bgp_txlog_cursor *cur, u32 member, u32 cls, struct loop *loop,
               struct event *wake)
{
  cur->member = member;
  cur->cls = cls;
  cur->cohort = 0;
  cur->loop = loop;
  cur->wake = wake;
  pthread_mutex_lock(&log->lock);
  cur->chunk = log->end_chunk;
  cur->pos = __atomic_load_n(&log->end, __ATOMIC_RELAXED);
  list_add_tail(&log->cursors, &cur->n);
  pthread_mutex_unlock(&log->lock);
}

void
bgp_txlog_leave(struct bgp_txlog *log, struct bgp_txlog_cursor *cur)
{
  pthread_mutex_lock(&log->lock);
  list_del(&cur->n);
  /* under the lock: bgp_txlog_wake() sees it gone */
  __atomic_store_n(&cur->chunk, NULL, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&log->lock);
}

const struct bgp_txlog_entry *
bgp_txlog_peek(struct bgp_txlog *log, struct bgp_txlog_cursor *cur)
{
  u64 end = __atomic_load_n(&log->end, __ATOMIC_ACQUIRE);
  struct bgp_txlog_chunk *c = cur->chunk;
  u64 pos = cur->pos, start = pos;
  const struct bgp_txlog_entry *e = NULL;
  while (pos < end) {
    u32 off = pos - c->base;
    u32 len = TXLOG_SKIP;
    if (off < c->size)
      memcpy(&len, c->data + off, sizeof(len));
    if (len == TXLOG_SKIP) {
      /* Below end, so the writer has moved on and linked the next chunk.
       * Read it first, then let trim know we are done with this one. */
      c = c->next;
      pos = c->base;
      __atomic_store_n(&cur->chunk, c, __ATOMIC_RELEASE);
      continue;
    }
    e = (const struct bgp_txlog_entry *) (c->data + off);
    if (e->audience == BGP_TXLOG_DEFINE) {
      const u8 *ids = bgp_txlog_msg(e);
      for (uint i = 0; i + 4 <= e->len; i += 4) {
        u32 id;
        memcpy(&id, ids + i, 4);
        if (id == cur->member) {
          cur->cohort = e->cohort;
          break;
        }
      }
    } else if (bgp_txlog_for(e, cur->member, cur->cohort, cur->cls))
      break;
    pos += txlog_entry_size(e->classes, len);
    e = NULL;
  }
  /* Skipped entries count as passed: a member that gets nothing from a
   * stretch of the log must not hold its chunks. */
  if (pos != start)
    __atomic_store_n(&cur->pos, pos, __ATOMIC_RELEASE);
  return e;
}

void
bgp_txlog_consume(struct bgp_txlog *log, struct bgp_txlog_cursor *cur)
{
  /* peek left pos at the entry it returned, below end */
  ASSERT(cur->pos < __atomic_load_n(&log->end, __ATOMIC_RELAXED));
  const struct bgp_txlog_entry *e = (const void *) (cur->chunk->data + (cur->pos - cur->chunk->base));
  __atomic_store_n(&cur->pos, cur->pos + txlog_entry_size(e->classes, e->len), __ATOMIC_RELEASE);
}

u64
bgp_txlog_lag(const struct bgp_txlog *log, const struct bgp_txlog_cursor *cur)
{
  /* pos first: end only grows and was at least pos when pos was stored. */
  u64 pos = __atomic_load_n(&cur->pos, __ATOMIC_ACQUIRE);
  u64 end = __atomic_load_n(&log->end, __ATOMIC_ACQUIRE);
  return end > pos ? end - pos : 0;
}

u64
bgp_txlog_min_lag(struct bgp_txlog *log, int *blocked)
{
  u64 end = __atomic_load_n(&log->end, __ATOMIC_RELAXED), min = UINT64_MAX;
  pthread_mutex_lock(&log->lock);
  for (struct lnode *n = log->cursors.next; n != &log->cursors; n = n->next) {
    struct bgp_txlog_cursor *cur = container_of(n, struct bgp_txlog_cursor, n);
    u64 pos = __atomic_load_n(&cur->pos, __ATOMIC_ACQUIRE), lag = end > pos ? end - pos : 0;
    if (lag < min && blocked)
      *blocked = __atomic_load_n(&cur->blocked, __ATOMIC_RELAXED);
    min = MIN(min, lag);
  }
  pthread_mutex_unlock(&log->lock);
  return min == UINT64_MAX ? 0 : min;
}

void
bgp_txlog_wake(struct bgp_txlog *log, struct bgp_txlog_cursor *cur)
{
  pthread_mutex_lock(&log->lock);
  if (__atomic_load_n(&cur->chunk, __ATOMIC_RELAXED) && cur->loop)
    ev_send(cur->loop, cur->wake);
  pthread_mutex_unlock(&log->lock);
}

u64
bgp_txlog_end(const struct bgp_txlog *log)
{
  return __atomic_load_n(&log->end, __ATOMIC_RELAXED);
}
