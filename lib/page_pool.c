/*
 * Page pools (see page_pool.h).
 *
 * A free block is in one of two lists. Resident ones (at most the
 * reserve) link through their first word. Released ones read as zeros
 * once the kernel took their pages, so their list is an array beside
 * them. Chunks are never unmapped: what is released costs address space
 * only, and a released block is reused before new pages are carved.
 *
 * The reserve follows the load: besides the fixed floor, a quarter as many
 * blocks as are in use may wait resident. A hundred tables' journals of
 * a converging route server free and take blocks by the thousand; with
 * a fixed 64 every such swing went back to the kernel and faulted in
 * again, and each release on a threaded process interrupts every other
 * core to flush its TLB (about 15,000 releases in 2 s at 100 peers,
 * `multi` layout; 10,000-15,000 with a quarter). A pool's resident
 * blocks still never exceed the most it ever had in use (they grow only
 * when none is free), but the blocks kept while other memory grows add
 * to the process's peak: at half the blocks in use one table's 1M routes
 * from 10 peers peaked some 3 MB higher, at a quarter no difference
 * showed. As the use drops the reserve drops with it, and the blocks
 * above it go back.
 *
 * The use also swings fast: a table's journal frees its blocks a grace
 * period at a time, dozens at once, while its writer takes new ones one by
 * one. With only the quarter kept, each swing above it went to the kernel
 * and faulted back in a moment later (an insert benchmark with no reader
 * released 43% of the blocks it took, 4,000 releases a second, each a
 * TLB shootdown of the other core). So free blocks up to the recent swing
 * stay too: the pool's resident blocks, in use and free, may reach the
 * most it had in use lately (this epoch of PAGE_POOL_EPOCH allocations
 * or the last); what the swing keeps beyond the reserve above is at most
 * PAGE_POOL_SWING_MAX bytes. The pool then holds no more than it held a
 * moment ago, and at rest at most that much more than before.
 *
 * Accounting: a resident free block is overhead of MEM_STANDBY; blocks in
 * use are their owners' to count; released and never-touched pages are
 * not resident and count nowhere.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/page_pool.h"
#include "lib/log.h"


#define PAGE_POOL_CHUNK_BLOCKS 64   /* blocks mapped at once */

struct page_pool {
  pthread_mutex_t lock;
  size_t size;                      /* whole pages */
  size_t align;                     /* of blocks: size if a power of two, else a page */
  uint reserve;                     /* resident free blocks kept at least */
  size_t in_use;                    /* under lock: blocks handed out */
  size_t peak, peak_prev;           /* under lock: most in use in this epoch, the last */
  uint epoch_left;                  /* under lock: allocations before the epoch ends */
  void *hot;                        /* under lock: resident free blocks */
  uint hot_count;
  void **cold;                      /* under lock: released free blocks */
  uint cold_count, cold_size;
  char *carve, *carve_end;          /* under lock: untouched part of the newest chunk */
};

struct page_pool *
page_pool_new(size_t size, size_t reserve)
{
  size_t page = (size_t) sysconf(_SC_PAGESIZE);
  struct page_pool *p = calloc(1, sizeof(*p));
  if (!p)
    die("Out of memory");
  pthread_mutex_init(&p->lock, NULL);
  p->size = (size + page - 1) / page * page;
  p->align = (p->size & (p->size - 1)) ? page : p->size;
  p->reserve = (uint) (reserve / p->size);
  return p;
}

size_t
page_pool_block_size(const struct page_pool *p)
{
  return p->size;
}

#ifdef BIRD_SANITIZED

void *
page_pool_alloc_dirty(struct page_pool *p)
{
  void *b = aligned_alloc(p->align, p->size);
  if (!b)
    die("Unable to allocate %zu bytes of memory", p->size);
  return b;
}

void *
page_pool_alloc(struct page_pool *p)
{
  return memset(page_pool_alloc_dirty(p), 0, p->size);
}

void
page_pool_free(struct page_pool *p UNUSED, void *block)
{
  free(block);
}

#else

/* Under lock: a never-used block, mapping a chunk when needed. */
static void *
page_pool_carve(struct page_pool *p)
{
  if (p->carve == p->carve_end) {
    /* Mapped with room to align the first block; the unused head and
     * tail are never touched, so they cost address space only. */
    size_t len = p->size * PAGE_POOL_CHUNK_BLOCKS + p->align;
    char *c = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (c == MAP_FAILED)
      die("Unable to map %zu bytes of memory", len);
    p->carve = (char *) (((uintptr_t) c + p->align - 1) & ~(uintptr_t) (p->align - 1));
    p->carve_end = p->carve + p->size * PAGE_POOL_CHUNK_BLOCKS;
  }
  void *b = p->carve;
  p->carve += p->size;
  return b;
}

static void *
page_pool_get(struct page_pool *p, int zero)
{
  pthread_mutex_lock(&p->lock);
  p->in_use++;
  p->peak = MAX(p->peak, p->in_use);
  if (!p->epoch_left--) {
    p->peak_prev = p->peak;
    p->peak = p->in_use;
    p->epoch_left = PAGE_POOL_EPOCH - 1;
  }
  void *b = p->hot;
  int resident = b != NULL;
  if (resident) {
    p->hot = *(void **) b;
    p->hot_count--;
  } else if (p->cold_count)
    b = p->cold[--p->cold_count];       /* its pages read as zeros again */
  else
    b = page_pool_carve(p);
  pthread_mutex_unlock(&p->lock);
  if (resident) {
    if (zero)
      memset(b, 0, p->size);
    mem_account(MEM_STANDBY, 0, -(s64) p->size);
  }
  return b;
}

void *page_pool_alloc(struct page_pool *p) { return page_pool_get(p, 1); }
void *page_pool_alloc_dirty(struct page_pool *p) { return page_pool_get(p, 0); }

/* Under lock: the resident free blocks kept now. */
static size_t
page_pool_keep(const struct page_pool *p)
{
  size_t recent = MAX(p->peak, p->peak_prev);
  size_t swing = MIN(recent - MIN(recent, p->in_use), PAGE_POOL_SWING_MAX / p->size);
  return MAX(MAX((size_t) p->reserve, p->in_use / 4), swing);
}

/* Hand a block's pages back and list it as released. */
static void
page_pool_release(struct page_pool *p, void *block)
{
  /* Released before it is listed: once listed, another thread may take it
   * and write to it. */
  if (madvise(block, p->size, MADV_DONTNEED))
    die("madvise failed: %m");
  pthread_mutex_lock(&p->lock);
  if (p->cold_count == p->cold_size) {
    p->cold_size = p->cold_size ? 2 * p->cold_size : 64;
    p->cold = realloc(p->cold, p->cold_size * sizeof(*p->cold));
    if (!p->cold)
      die("Out of memory");
  }
  p->cold[p->cold_count++] = block;
  pthread_mutex_unlock(&p->lock);
}

void
page_pool_free(struct page_pool *p, void *block)
{
  if (!block)
    return;
  pthread_mutex_lock(&p->lock);
  p->in_use--;
  size_t keep = page_pool_keep(p);
  if (p->hot_count < keep) {
    *(void **) block = p->hot;
    p->hot = block;
    p->hot_count++;
    pthread_mutex_unlock(&p->lock);
    mem_account(MEM_STANDBY, 0, (s64) p->size);
    return;
  }
  /* The use dropped: so does the reserve, a block at a time. */
  void *extra = NULL;
  if (p->hot_count > keep) {
    extra = p->hot;
    p->hot = *(void **) extra;
    p->hot_count--;
  }
  pthread_mutex_unlock(&p->lock);
  page_pool_release(p, block);
  if (extra) {
    mem_account(MEM_STANDBY, 0, -(s64) p->size);
    page_pool_release(p, extra);
  }
}

#endif
