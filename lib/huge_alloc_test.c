/*
 * Unit tests for lib/huge_alloc.c: zeroed memory of the size asked for,
 * big arrays aligned to huge pages and advised as such (the kernel's smaps
 * shows the advice as the "hg" flag), and freeing that unmaps exactly what
 * was mapped. Under ASan/TSan everything is calloc: only the contents are
 * checked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/birdlib.h"
#include "lib/huge_alloc.h"

#define MB ((size_t) 1 << 20)

static void
check_zero_and_write(unsigned char *p, size_t size)
{
  for (size_t i = 0; i < size; i += 4093)
    assert_int_equal(p[i], 0);
  assert_int_equal(p[size - 1], 0);
  memset(p, 0xa5, size);
}

#if !defined(BIRD_SANITIZED) && defined(MADV_HUGEPAGE)
/* Is the mapping holding p advised for huge pages (smaps VmFlags "hg")? */
static int
advised_huge(const void *p)
{
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f)
    return -1;
  char line[512];
  int in = 0, hg = 0;
  while (fgets(line, sizeof(line), f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
      in = (uintptr_t) p >= lo && (uintptr_t) p < hi;
    else if (in && !strncmp(line, "VmFlags:", 8))
      hg = strstr(line, " hg") != NULL;
  }
  fclose(f);
  return hg;
}
#endif

static void
test_small(void **state)
{
  (void) state;
  unsigned char *p = huge_zalloc(1000);
  check_zero_and_write(p, 1000);
  huge_free(p, 1000);
  huge_free(NULL, 1000);
}

static void
test_big(void **state)
{
  (void) state;
  /* An index array's shape: 2 MB of buckets and a header. */
  size_t sizes[] = { 2 * MB, 2 * MB + 40, 9 * MB + 4096 + 1 };
  for (uint i = 0; i < ARRAY_SIZE(sizes); i++) {
    unsigned char *p = huge_zalloc(sizes[i]);
    check_zero_and_write(p, sizes[i]);
#ifndef BIRD_SANITIZED
    assert_int_equal((uintptr_t) p % (2 * MB), 0);
#ifdef MADV_HUGEPAGE
    assert_int_equal(advised_huge(p), 1);
#endif
#endif
    huge_free(p, sizes[i]);
#ifndef BIRD_SANITIZED
    /* gone: the address no longer maps (mincore fails with ENOMEM) */
    unsigned char v;
    assert_int_not_equal(mincore(p, 4096, &v), 0);
#endif
  }
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_small),
    cmocka_unit_test(test_big),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
