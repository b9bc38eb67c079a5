/*
 * Unit tests that parse config text: write it to a temporary file and parse
 * that, as the daemon reads its config. Test programs only; include after
 * cmocka.h.
 */
#ifndef CONF_CONF_TEST_H
#define CONF_CONF_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "conf/conf.h"
#include "lib/printf.h"

/* head, then text; NULL with the message in err (when given) on failure. */
static inline struct config *
cf_test_parse(const char *head, const char *text, char *err, size_t errlen)
{
  char path[] = "/tmp/cf_testXXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "%s%s\n", head, text);
  fclose(f);
  struct cf_error e;
  struct config *c = config_parse_file(path, &e);
  unlink(path);
  if (!c && err)
    bsnprintf(err, errlen, "%s", e.msg);
  return c;
}

#endif
