/*
 * The inputs every route table benchmark shares (bench/rt_bench_input.c):
 * deterministic prefixes, BGP-like attribute sets, the bench's peers with
 * their sources and pools of interned sets, and the table they write
 * (master4 of an empty config). Used by bench/rt_bench.c only; the bench
 * thread is the only writer of what is here.
 */
#ifndef BENCH_RT_BENCH_H
#define BENCH_RT_BENCH_H

#include "nest/rt.h"
#include "nest/rt_attr.h"

/* BGP's own ids (bgp_wire.h): BGP's memo (bgp_memo.h) reads them as the
 * daemon's */
#define BA(code) BGP_EA(code)

/* n unique prefixes at random unicast addresses (1/8..223/8 without 10/8
 * and 127/8), in random order, with a DFZ-like length mix. */
net_addr_ip4 *gen_prefixes(u32 n, u64 seed);
static inline const net_addr *NA(const net_addr_ip4 *n) { return (const net_addr *) n; }

/* Payloads must outlive ea_intern(). */
struct bgp_buf {
  u8 path[2 + 4 * 8];         /* one AS_SEQUENCE segment */
  ip_addr nh;
  u32 comm[6];
  u32 lc[6];
};

/* Attribute set number k of peer `peer`; variant != 0 gives a set that
 * differs from variant 0 (new MED and local pref: an update of the route). */
void bgp_attrs(struct ea_builder *b, struct bgp_buf *buf, u32 peer, u32 k, u32 variant);
struct ea_list *bgp_attrs_intern(u32 peer, u32 k, u32 variant);

extern u64 better_calls;    /* sanity: the table does call the bench class's hook */

extern struct rtable *tab;  /* master4, once commit_empty_config ran */

struct peer {
  struct rte_src *src;
  struct ea_list **attrs[2];  /* pools: variant 0 (initial) and 1 (updates) */
  u32 nattrs[2];
};

extern struct peer peers[16];

/* Peer i's source (made on first use). */
struct rte_src *peer_source(u32 i);
/* Intern n sets of peer i (and the update variants if asked). */
void peer_pool(u32 i, u32 n, int updates);
static inline struct ea_list *
peer_attrs(u32 i, u32 route, u32 variant)
{
  return peers[i].attrs[variant][route % peers[i].nattrs[variant]];
}

/* In the main loop: an empty config, whose master4 becomes tab. */
void commit_empty_config(void *arg);
/* Let the table loop release retired routes, emptied nets and journal
 * blocks, then wait for the RCU callbacks that free them. */
void table_quiesce(void);

extern u64 unexpected;      /* rt_update results that were not what a benchmark expected */

static inline void
upd(const net_addr_ip4 *n, u32 peer, struct ea_list *a, enum rt_update_result want)
{
  if (rt_update(tab, NA(n), peers[peer].src, NULL, a, 0) != want)
    unexpected++;
}

#endif
