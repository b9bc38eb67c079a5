/*
 * DOC: Page pools: big fixed-size blocks whose memory goes back when freed.
 *
 * The export journal of a table grows by blocks of whole pages while its
 * slowest reader lags (a route server converging holds tens of megabytes
 * of it) and shrinks to almost nothing once every reader has caught up.
 * From malloc such blocks interleave with long-lived small objects, and
 * the arena keeps the pages: the peak stays resident. A page pool maps
 * chunks itself, keeps a small reserve of free blocks resident for the
 * next burst, and hands the pages of every other free block back to the
 * kernel (MADV_DONTNEED), so resident memory follows what is in use. The
 * reserve grows with the use (a quarter of the blocks in use, or what a
 * recent swing of it took), so a large load's swings do not go to the
 * kernel and back.
 *
 * Blocks whose size is a power of two are aligned to it (slab pages find
 * their header by masking an object's address).
 *
 * Any thread may allocate and free; one mutex per pool, taken once per
 * block. Under AddressSanitizer or ThreadSanitizer blocks come from
 * malloc instead, so the checkers see them.
 *
 * Accounting: the owner counts the blocks it holds in its own class; the
 * resident free blocks are this module's, shown as `Standby memory`.
 */
#ifndef LIB_PAGE_POOL_H
#define LIB_PAGE_POOL_H

#include "lib/resource.h"

struct page_pool;

/* Free blocks that a recent swing of the use took stay resident too: up
 * to the most in use during this epoch of PAGE_POOL_EPOCH allocations or
 * the last, at most PAGE_POOL_SWING_MAX bytes of them. */
#define PAGE_POOL_EPOCH 256
#define PAGE_POOL_SWING_MAX (1U << 20)

/* Blocks of size bytes (rounded up to whole pages); free blocks up to
 * reserve bytes, or a quarter as many as are in use, or the recent swing
 * above, whichever is more, stay resident. */
struct page_pool *page_pool_new(size_t size, size_t reserve);
void *page_pool_alloc(struct page_pool *p);        /* zeroed */
/* Contents undefined (a recycled block keeps what was written in it):
 * for owners that write what they read, as slab pages. */
void *page_pool_alloc_dirty(struct page_pool *p);
void page_pool_free(struct page_pool *p, void *block);
size_t page_pool_block_size(const struct page_pool *p);

#endif
