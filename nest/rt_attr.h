/*
 * DOC: Route attributes, interned.
 *
 * Everything about a route except its network and source lives in an
 * ea_list: where it points (dest, gateway, interface), its preference and
 * source kind, and the protocol attributes (BGP path, communities, ...) as
 * id-tagged entries. Lists are built in a struct ea_builder (scratch), then
 * interned: equal lists share one immutable, reference-counted copy in a
 * lock-free hash (cds_lfht), so 100,000 routes with one attribute set cost
 * one set. The last ea_unref() removes the set from the hash and frees it
 * after an RCU grace period.
 *
 * Owner: shared; immutable after interning; reclaimed through RCU.
 */
#ifndef NEST_RT_ATTR_H
#define NEST_RT_ATTR_H

#include "lib/birdlib.h"
#include "lib/ip.h"
#include "lib/rcu.h"

struct iface;

/* Route source kind (`source` in filters; RTS_* enum). */
enum rte_source {
  RTS_DUMMY = 0, RTS_STATIC, RTS_INHERIT, RTS_DEVICE, RTS_STATIC_DEVICE, RTS_REDIRECT,
  RTS_RIP, RTS_OSPF, RTS_OSPF_IA, RTS_OSPF_EXT1, RTS_OSPF_EXT2, RTS_BGP, RTS_PIPE, RTS_BABEL,
  RTS_RPKI, RTS_PERF, RTS_AGGREGATED, RTS_MAX
};
/* Destination kind (`dest`; RTD_*). */
enum rte_dest {
  RTD_NONE = 0, RTD_UNICAST, RTD_BLACKHOLE, RTD_UNREACHABLE, RTD_PROHIBIT, RTD_MAX
};

extern const char *const rte_source_names[RTS_MAX];  /* "static", "BGP", ... as `source` prints */
extern const char *const rte_dest_names[RTD_MAX];    /* "", "unicast", "blackhole", "unreachable", "prohibited" */

/* Types of extended attributes. */
enum ea_type {
  EAF_INT = 1,       /* u32 */
  EAF_IP,            /* ip_addr in data */
  EAF_ROUTER_ID,     /* u32 shown as quad */
  EAF_OPAQUE,        /* bytes */
  EAF_AS_PATH,
  EAF_INT_SET,       /* communities */
  EAF_EC_SET,
  EAF_LC_SET,
};

struct eattr {
  u16 id;            /* protocol-class-scoped attribute id (EA_CODE) */
  u8 type;           /* enum ea_type */
  u8 flags;          /* protocol flags (e.g. BGP attribute flags) */
  u32 val;           /* EAF_INT/ROUTER_ID: value; else byte offset into data */
  u32 len;           /* payload length for non-inline types */
};

/* Attribute id space: high byte = protocol class, low byte = code. */
#define EA_CODE(proto, code) ((u16) (((proto) << 8) | (code)))

#define EA_MEMO_SIZE 18

struct ea_list {
  struct cds_lfht_node node;    /* in the intern hash */
  struct rcu_head rcu;
  u32 uc;                       /* atomic use count */
  u32 hash;
  /* What a protocol reads of the key for every route it compares or
   * exports, found once when the list is new (ea_register_memo: BGP's
   * best-path inputs and well-known communities, proto/bgp/bgp_memo.h).
   * Written before the list is published, constant after. */
  u8 memo[EA_MEMO_SIZE] __attribute__((aligned(8)));
  /* --- key: everything from here to the end is hashed and compared --- */
  u16 count;                    /* eattrs */
  u32 preference;
  u8 source;                    /* enum rte_source */
  u8 dest;                      /* enum rte_dest */
  u8 scope;
  u8 flags;                     /* EAL_* */
  ip_addr gw;                   /* RTD_UNICAST with a gateway */
  u32 igp_metric;
  struct iface *iface;          /* RTD_UNICAST: outgoing interface (never freed) */
  u32 data_len;
  struct eattr a[];             /* sorted by id, then data_len bytes of payload */
};
_Static_assert(sizeof(struct ea_list) == 104, "struct ea_list grew");
/* The key is hashed and compared bytewise: no padding inside it. */
_Static_assert(offsetof(struct ea_list, count) == offsetof(struct ea_list, memo) + EA_MEMO_SIZE &&
               offsetof(struct ea_list, preference) == offsetof(struct ea_list, count) + 2 &&
               offsetof(struct ea_list, gw) == offsetof(struct ea_list, flags) + 1 &&
               offsetof(struct ea_list, a) == offsetof(struct ea_list, data_len) + 4, "padding in the key");
/* What a comparison of two routes reads (rte_better: the preference, then
 * the protocol's memo) is 24 bytes of the first 64: the table's writers
 * ask for them ahead of their walk (nest/rt_table.c); reading further
 * into every list compared cost a fifth of an insert at 2-5 paths a net. */
_Static_assert(offsetof(struct ea_list, preference) + 4 <= 64, "the preference left the first line");

/* The destination fields come from a recursive next hop (BIRD's
 * hostentry): such a route does not resolve others (nest/rt_hostcache.h). */
#define EAL_RECURSIVE 1

/* BIRD's IGP_METRIC_UNKNOWN: a route whose igp_metric means nothing here
 * (what a recursive next hop gets from a route without one). */
#define IGP_METRIC_UNKNOWN 0x80000000U

#define EA_KEY_START offsetof(struct ea_list, count)

/* Scratch builder (not shared). */
#define EA_BUILDER_MAX 64
struct ea_builder {
  u8 source, dest, scope, flags;
  u32 preference;
  ip_addr gw;
  struct iface *iface;
  u32 igp_metric;
  uint count;
  /* entries: only [0, count) are valid */
  struct eattr a[EA_BUILDER_MAX];
  const void *payload[EA_BUILDER_MAX];
};

void ea_builder_init(struct ea_builder *b);
/* Start from an interned list (for filters modifying a route). */
void ea_builder_from(struct ea_builder *b, const struct ea_list *l);
/* Set/replace an integer attribute. */
void ea_set_int(struct ea_builder *b, u16 id, u8 type, u8 flags, u32 val);
/* Set/replace a byte payload attribute; data must outlive ea_intern(). */
void ea_set_data(struct ea_builder *b, u16 id, u8 type, u8 flags, const void *data, u32 len);
void ea_unset(struct ea_builder *b, u16 id);

void ea_init(void);
/* The memo's maker, called for each new list before it is published;
 * register at start-up (before any thread runs). Lists interned before
 * have a zeroed memo. */
void ea_register_memo(void (*fill)(const struct ea_list *l, u8 *memo));
/* Intern: returns a list with one reference held by the caller. */
struct ea_list *ea_intern(const struct ea_builder *b);
struct ea_list *ea_ref(struct ea_list *l);
/* n references at once (a batch of routes sharing the set). */
void ea_ref_many(struct ea_list *l, uint n);
void ea_unref(struct ea_list *l);
/* n references at once (a holder that took them with ea_ref_many()). */
void ea_unref_many(struct ea_list *l, uint n);

/* Attribute id of l, or NULL. Inline: the filter interpreter's first read
 * of each attribute goes through it. A plain binary search: on a cold
 * list its predicted branches let the next probes load early, where a
 * branchless one (tried) waits for each. */
static inline const struct eattr *
ea_find(const struct ea_list *l, u16 id)
{
  int lo = 0, hi = (int) l->count - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (l->a[mid].id == id)
      return &l->a[mid];
    if (l->a[mid].id < id) lo = mid + 1; else hi = mid - 1;
  }
  return NULL;
}
static inline const void *ea_data(const struct ea_list *l, const struct eattr *e)
{ return (const u8 *) &l->a[l->count] + e->val; }

/* Protocol classes describe their attributes for `show route all`. */
struct ea_class_desc {
  /* Name as `show route all` prints it (BIRD 2 style: "BGP.as_path");
   * NULL: the attribute is not shown. */
  const char *(*name)(const struct eattr *e, char *buf, size_t size);
  /* Value text; may fill several lines separated by '\n'. */
  void (*format)(const struct ea_list *l, const struct eattr *e, char *buf, size_t size);
};
/* Register at start-up (before any thread runs). */
void ea_register_class(uint proto, const struct ea_class_desc *d);
const struct ea_class_desc *ea_class(uint proto);

/* Statistics for `show memory`. */
u64 ea_count(void);

#endif
