/*
 * DOC: Micro-benchmark of UPDATE parse and encode.
 *
 * The shapes of the rustbgpd table: 1, 10, 100 and 500 /24 prefixes with a
 * typical 6-attribute set (ORIGIN, AS_PATH of 4 ASNs, NEXT_HOP, MED,
 * COMMUNITIES x3, LARGE_COMMUNITIES x1), eBGP, AS4, no ADD-PATH.
 *   parse  = frame split + attributes parsed once into an ea_builder +
 *            every NLRI decoded into a net_addr array (what the peer loop
 *            does before the import filter)
 *   +intern = parse plus ea_intern()/ea_unref() of the attribute set
 *   encode = one full UPDATE from an interned list and the nets
 * Each figure is the median of 15 timed runs after a warm-up run; prints a
 * Markdown table. Time is the thread's CPU time (CLOCK_THREAD_CPUTIME_ID),
 * so that other load on a shared machine does not count; on a quiet
 * machine it equals wall time. BGP_BENCH_WALL=1 switches to wall time. Build with -O2 and without sanitizers, e.g.
 *   gcc -O2 -std=gnu11 -D_GNU_SOURCE= -I. -Ibuild proto/bgp/bgp_bench.c \
 *     proto/bgp/bgp_{attrs,update,open}.c lib/{ip,net,printf,resource,hash,\
 *     log,timeutil,rcu}.c nest/rt_attr.c $(pkg-config --cflags --libs \
 *     liburcu-memb liburcu-cds liburcu) -lpthread -o /tmp/bgp_bench
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/bgp/bgp_wire.h"
#include "lib/hash.h"
#include "lib/log.h"

#define RUNS 15
#define MAXN 500

static linpool *lp;
static u8 msg[BGP_MAX_MSG_LEN];
static u8 out[BGP_MAX_MSG_LEN];
static net_addr nets[MAXN], got[MAXN];
static volatile u64 sink;

static clockid_t bench_clock = CLOCK_THREAD_CPUTIME_ID;

static u64
now_ns(void)
{
  struct timespec ts;
  clock_gettime(bench_clock, &ts);
  return (u64) ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static struct ea_list *
typical_list(void)
{
  static u8 path[2 + 4 * 4];
  static const u32 comm[] = { 0xfde90001, 0xfde90002, 0xfde90003 };
  static const u32 lc[] = { 65001, 1, 2 };
  static ip_addr nh;
  path[0] = AS_PATH_SEQUENCE;
  path[1] = 4;
  for (uint i = 0; i < 4; i++)
    bgp_put_host32(path + 2 + 4 * i, 65001 + i);
  nh = ipa_from_ip4(ip4_from_u32(0xc0000201));
  struct ea_builder b;
  ea_builder_init(&b);
  ea_set_int(&b, BGP_EA(BA_ORIGIN), EAF_INT, BAF_TRANSITIVE, ORIGIN_IGP);
  ea_set_data(&b, BGP_EA(BA_AS_PATH), EAF_AS_PATH, BAF_TRANSITIVE, path, sizeof(path));
  ea_set_data(&b, BGP_EA(BA_NEXT_HOP), EAF_IP, BAF_TRANSITIVE, &nh, sizeof(nh));
  ea_set_int(&b, BGP_EA(BA_MULTI_EXIT_DISC), EAF_INT, BAF_OPTIONAL, 10);
  ea_set_data(&b, BGP_EA(BA_COMMUNITY), EAF_INT_SET, BAF_OPTIONAL | BAF_TRANSITIVE, comm, sizeof(comm));
  ea_set_data(&b, BGP_EA(BA_LARGE_COMMUNITY), EAF_LC_SET, BAF_OPTIONAL | BAF_TRANSITIVE, lc, sizeof(lc));
  return ea_intern(&b);
}

enum op { OP_PARSE, OP_PARSE_INTERN, OP_ENCODE, OP_MAX };
static const char *const op_names[OP_MAX] = { "parse", "parse+intern", "encode" };

/* One timed run of iters messages; returns ns per message. */
static double
run(enum op op, const struct bgp_rx_ctx *rx, const struct bgp_tx_ctx *tx, struct ea_list *l, uint len, uint n,
    uint iters)
{
  struct ea_builder b;
  struct bgp_update u;
  struct bgp_error err;
  struct bgp_nlri_iter it;
  u64 acc = 0;
  u64 t0 = now_ns();
  for (uint i = 0; i < iters; i++) {
    if (op == OP_ENCODE) {
      uint done;
      acc += bgp_update_encode_reach(tx, l, BGP_AF_IPV4, nets, NULL, n, out, sizeof(out), &done);
      continue;
    }
    lp_flush(lp);
    ea_builder_init(&b);
    if (bgp_update_parse(rx, lp, msg + BGP_HEADER_LEN, len - BGP_HEADER_LEN, &b, &u) != BGP_ATTR_OK)
      abort();
    bgp_update_reach_iter(rx, &u, &it);
    int k;
    while ((k = bgp_nlri_decode(&it, got, NULL, MAXN, &err)) > 0)
      acc += k + got[k - 1].pxlen;
    if (op == OP_PARSE_INTERN) {
      struct ea_list *x = ea_intern(&b);
      acc += x->count;
      ea_unref(x);
    }
  }
  u64 t1 = now_ns();
  sink += acc;
  return (double) (t1 - t0) / iters;
}

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

int
main(void)
{
  resource_init();
  log_init("bgp_bench");
  hash_seed_init();
  ea_init();
  rcu_thread_register();
  lp = lp_new(root_pool());
  if (getenv("BGP_BENCH_WALL"))
    bench_clock = CLOCK_MONOTONIC;

  for (uint i = 0; i < MAXN; i++)
    net_fill_ip4(&nets[i], ip4_from_u32(0x0a000000 | (i << 8)), 24);
  struct ea_list *l = typical_list();
  struct bgp_rx_ctx rx = { .as4 = true, .ebgp = true, .local_as = 65000, .peer_as = 65001 };
  rx.af[BGP_AF_IPV4] = rx.af[BGP_AF_IPV6] = true;
  struct bgp_tx_ctx tx = { .as4 = true, .max_len = BGP_MAX_MSG_LEN };

  static const uint sizes[] = { 1, 10, 100, 500 };
  printf("| prefixes | msg bytes | op | ns/message | ns/prefix |\n");
  printf("|---:|---:|---|---:|---:|\n");
  for (uint s = 0; s < ARRAY_SIZE(sizes); s++) {
    uint n = sizes[s], done;
    uint len = bgp_update_encode_reach(&tx, l, BGP_AF_IPV4, nets, NULL, n, msg, sizeof(msg), &done);
    if (!len || done != n)
      abort();
    uint iters = MAX(20000u, 2000000u / n);
    for (uint op = 0; op < OP_MAX; op++) {
      double t[RUNS];
      run(op, &rx, &tx, l, len, n, iters);   /* warm-up */
      for (uint r = 0; r < RUNS; r++)
        t[r] = run(op, &rx, &tx, l, len, n, iters);
      qsort(t, RUNS, sizeof(t[0]), cmp_double);
      double med = t[RUNS / 2];
      printf("| %u | %u | %s | %.1f | %.2f |\n", n, len, op_names[op], med, med / n);
    }
  }
  ea_unref(l);
  return 0;
}
