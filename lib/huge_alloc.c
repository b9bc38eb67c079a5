/*
 * Big zeroed arrays on huge pages: see lib/huge_alloc.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "lib/birdlib.h"
#include "lib/huge_alloc.h"
#include "lib/log.h"

#define HUGE_PAGE ((size_t) 2 << 20)

/* The mapping: whole small pages. */
static size_t
huge_len(size_t size)
{
  return (size + 4095) & ~(size_t) 4095;
}

#ifdef BIRD_SANITIZED
static const int huge_mapped = 0;
#else
static const int huge_mapped = 1;
#endif

/* Write to every page before anyone reads it. A fresh anonymous page
 * that is read first maps the shared zero page, and the first write then
 * faults again and, as the process's threads run on other cores, flushes
 * their TLBs with an interrupt each: a resize of the net index reads
 * every bucket before it writes it, and that was 5% of a 100-table route
 * server's time. Written first, a page faults once, locally. */
static void
huge_touch(void *p, size_t size)
{
  volatile char *c = p;
  for (size_t off = 0; off < size; off += 4096)
    c[off] = 0;
}

void *
huge_zalloc(size_t size)
{
  if (!huge_mapped || size < HUGE_PAGE) {
    void *p = calloc(1, size);
    if (!p)
      die("Unable to allocate %zu bytes of memory", size);
    huge_touch(p, size);
    return p;
  }
  /* Map a huge page more than asked and unmap what lies outside the
   * aligned part; fresh anonymous pages read as zeros. The kernel backs
   * whole aligned 2 MB ranges only: a tail past the last one (an array's
   * header makes it 2 MB and a few bytes) stays on small pages. */
  size_t len = huge_len(size);
  char *m = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    die("Unable to map %zu bytes of memory", len);
  char *a = (char *) (((uintptr_t) m + HUGE_PAGE - 1) & ~(uintptr_t) (HUGE_PAGE - 1));
  if (a > m)
    munmap(m, (size_t) (a - m));
  if (a + len < m + len + HUGE_PAGE)
    munmap(a + len, (size_t) (m + len + HUGE_PAGE - (a + len)));
#ifdef MADV_HUGEPAGE
  madvise(a, len, MADV_HUGEPAGE);     /* a hint: without it, small pages */
#endif
  huge_touch(a, len);
  return a;
}

void
huge_free(void *p, size_t size)
{
  if (!p)
    return;
  if (!huge_mapped || size < HUGE_PAGE) {
    free(p);
    return;
  }
  munmap(p, huge_len(size));
}
