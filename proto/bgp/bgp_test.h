/*
 * Shared helpers of the BGP codec unit tests (not part of the daemon).
 */
#ifndef PROTO_BGP_BGP_TEST_H
#define PROTO_BGP_BGP_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proto/bgp/bgp_wire.h"
#include "lib/hash.h"
#include "lib/log.h"

static linpool *test_lp;

static inline void
bgp_test_init(const char *name)
{
  resource_init();
  log_init(name);
  hash_seed_init();
  ea_init();
  rcu_thread_register();
  test_lp = lp_new(root_pool());
}

/* Append one attribute (short or extended length) at p; returns the end. */
static inline u8 *
put_attr(u8 *p, u8 flags, u8 code, const void *val, uint len)
{
  if (len > 255)
    flags |= BAF_EXT_LEN;
  *p++ = flags;
  *p++ = code;
  if (flags & BAF_EXT_LEN) {
    bgp_store16(p, len);
    p += 2;
  } else
    *p++ = len;
  if (len)
    memcpy(p, val, len);
  return p + len;
}

/* An AS4, eBGP, IPv4+IPv6 receive context. */
static inline struct bgp_rx_ctx
rx_ctx(bool as4, bool ebgp)
{
  struct bgp_rx_ctx c = { .as4 = as4, .ebgp = ebgp, .local_as = 65000, .peer_as = ebgp ? 65001 : 65000 };
  c.af[BGP_AF_IPV4] = c.af[BGP_AF_IPV6] = true;
  return c;
}

static inline struct bgp_tx_ctx
tx_ctx(bool as4)
{
  return (struct bgp_tx_ctx){ .as4 = as4, .max_len = BGP_MAX_MSG_LEN };
}

/* Internal-format AS path builder: segs of (type, count, asns...). */
static inline uint
mk_path(u8 *buf, uint nseg, const u8 *types, const uint *counts, const u32 *asns)
{
  u8 *p = buf;
  for (uint s = 0; s < nseg; s++) {
    *p++ = types[s];
    *p++ = counts[s];
    for (uint i = 0; i < counts[s]; i++, p += 4)
      bgp_put_host32(p, *asns++);
  }
  return p - buf;
}

static inline const struct eattr *
find_bgp(const struct ea_list *l, u8 code)
{
  return ea_find(l, BGP_EA(code));
}

#endif
