/*
 * Unit-test helper shared by the table and attribute tests: a small
 * interned attribute list (a static blackhole route with a preference and
 * one tagged generic attribute), so tests tell lists apart by tag.
 */
#ifndef NEST_TEST_ATTRS_H
#define NEST_TEST_ATTRS_H

#include "nest/rt_attr.h"

static inline struct ea_list *
attrs_pref(u32 pref, u32 tag)
{
  struct ea_builder b;
  ea_builder_init(&b);
  b.source = RTS_STATIC;
  b.dest = RTD_BLACKHOLE;
  b.preference = pref;
  ea_set_int(&b, EA_CODE(1, 1), EAF_INT, 0, tag);
  return ea_intern(&b);
}

#endif
