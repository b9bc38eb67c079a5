/*
 * DOC: Helpers of filter/'s cmocka programs: parse a config that must
 * parse (a device protocol first, as every config has), find a filter or
 * function in it. Test programs only; include after cmocka.h.
 */
#ifndef FILTER_F_CMOCKA_H
#define FILTER_F_CMOCKA_H

#include "conf/conf_test.h"
#include "filter/f_inst.h"

static inline struct config *
f_test_parse(const char *text, char *err, size_t errlen)
{
  return cf_test_parse("protocol device {}\n", text, err, errlen);
}

static inline struct config *
f_test_parse_ok(const char *text)
{
  char err[600];
  struct config *c = f_test_parse(text, err, sizeof(err));
  if (!c)
    fail_msg("parse failed: %s\n%s", err, text);
  return c;
}

static inline const struct filter *
f_test_find(struct config *c, const char *name)
{
  struct symbol *s = cf_find_symbol(c, name);
  assert_non_null(s);
  assert_true(s->class == SYM_FILTER || s->class == SYM_FUNCTION);
  return s->def;
}

#endif
