/*
 * DOC: Big zeroed arrays on huge pages.
 *
 * A table's net index is an array of millions of buckets hit at random:
 * with 4 KB pages nearly every lookup misses the TLB as well as the cache,
 * and under virtualisation a page walk is itself a chain of memory
 * accesses. Arrays of 2 MB and more are
 * mapped on their own, aligned to 2 MB and advised to the kernel as huge
 * page candidates (MADV_HUGEPAGE: most distributions enable transparent
 * huge pages only where asked). Smaller ones come from calloc. Under
 * AddressSanitizer or ThreadSanitizer everything comes from calloc, so the
 * checkers see it. Every page is written once before it is returned (see
 * huge_touch() for why): the memory is resident from the start.
 *
 * Any thread; the caller remembers the size for huge_free().
 */
#ifndef LIB_HUGE_ALLOC_H
#define LIB_HUGE_ALLOC_H

#include <stddef.h>

/* size zeroed bytes; dies when out of memory. */
void *huge_zalloc(size_t size);
void huge_free(void *p, size_t size);

#endif
