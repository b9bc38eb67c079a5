/*
 * DOC: Routes to run filters on, for filter/'s tests and fuzzers.
 *
 * The attributes of a route as the BGP decoder hands it to a filter:
 * learned by BGP, unicast via 192.0.2.1, preference 100, then the AS path,
 * communities and MED the caller asks for. filter/filter_test.c and the
 * fuzz harnesses (f_fuzz_conf.c, f_fuzz_interp.c) include this; the daemon
 * does not.
 */
#ifndef FILTER_F_TEST_H
#define FILTER_F_TEST_H

#include <string.h>
#include "nest/ea_bgp.h"
#include "nest/rt_attr.h"

/* b: a BGP route's fixed fields, no attributes yet (no gateway either:
 * a caller that wants one sets b->gw). */
static inline void
f_test_route_init(struct ea_builder *b)
{
  ea_builder_init(b);
  b->source = RTS_BGP;
  b->dest = RTD_UNICAST;
  b->preference = 100;
}

/* Interned attributes (the caller unrefs them): gateway 192.0.2.1, an
 * AS_SEQUENCE of plen (at most 255) ASNs, clen communities (0: no
 * attribute), origin IGP, MED med (0: no attribute). */
static inline struct ea_list *
f_test_bgp_attrs(const u32 *path, uint plen, const u32 *comm, uint clen, u32 med)
{
  u8 pbuf[2 + 4 * 255];         /* ea_intern() copies it */
  struct ea_builder b;
  f_test_route_init(&b);
  b.gw = ipa_from_ip4(ip4_from_u32(0xc0000201));
  pbuf[0] = EAB_AS_SEQUENCE;
  pbuf[1] = plen;
  memcpy(pbuf + 2, path, 4 * plen);
  ea_set_data(&b, EA_BGP(EAB_AS_PATH), EAF_AS_PATH, 0x40, pbuf, 2 + 4 * plen);
  if (clen)
    ea_set_data(&b, EA_BGP(EAB_COMMUNITY), EAF_INT_SET, 0xc0, comm, 4 * clen);
  ea_set_int(&b, EA_BGP(EAB_ORIGIN), EAF_INT, 0x40, EAB_ORIGIN_IGP);
  if (med)
    ea_set_int(&b, EA_BGP(EAB_MULTI_EXIT_DISC), EAF_INT, 0x80, med);
  return ea_intern(&b);
}

#endif
