/*
 * DOC: Filter values and types (private to filter/).
 *
 * A struct f_val is a small tagged value. Scalars are inline; networks,
 * strings, paths, community lists, sets and masks point to immutable data
 * that lives in the config (constants) or in the run's scratch linpool.
 * Type codes keep BIRD 2's numbering, because `eval` prints enums as
 * "(enum 30)1" with the type code in hex.
 */
#ifndef FILTER_DATA_H
#define FILTER_DATA_H

#include <string.h>
#include "lib/birdlib.h"
#include "lib/ip.h"
#include "lib/net.h"
#include "lib/resource.h"
#include "lib/printf.h"

enum f_type {
  T_VOID = 0,
  T_INT = 0x10,
  T_BOOL = 0x11,
  T_PAIR = 0x12,
  T_QUAD = 0x13,
  T_ENUM_LO = 0x30,
  T_ENUM_RTS = 0x30,
  T_ENUM_BGP_ORIGIN = 0x31,
  T_ENUM_SCOPE = 0x32,
  T_ENUM_RTC = 0x33,
  T_ENUM_RTD = 0x34,
  T_ENUM_ROA = 0x35,
  T_ENUM_NETTYPE = 0x36,
  T_ENUM_RA_PREFERENCE = 0x37,
  T_ENUM_AF = 0x38,
  T_ENUM_ASPA = 0x39,
  T_ENUM_HI = 0x3f,
  T_IP = 0x20,
  T_NET = 0x21,
  T_STRING = 0x22,
  T_PATH_MASK = 0x23,
  T_PATH = 0x24,
  T_CLIST = 0x25,
  T_EC = 0x26,
  T_ECLIST = 0x27,
  T_LC = 0x28,
  T_LCLIST = 0x29,
  T_RD = 0x2a,
  T_BYTESTRING = 0x2c,
  T_SET = 0x80,
  T_PREFIX_SET = 0x81,
  T_ANY = 0xfe,          /* compile time only: not checked (e.g. `print`) */
};

static inline int f_type_is_enum(uint t) { return t >= T_ENUM_LO && t <= T_ENUM_HI; }
/* Values in val.i, compared as u32 (val_compare) */
static inline int f_type_is_u32(uint t) { return (t >= T_INT && t <= T_QUAD) || f_type_is_enum(t); }
const char *f_type_name(uint t);

/* Byte data: paths, community lists, strings of bytes. data usually
 * follows the header (adata_alloc), but may point into an interned
 * attribute list, which then is read in place without a copy. */
struct adata {
  u32 length;
  u8 *data;
};

typedef struct lcomm { u32 asn, ldp1, ldp2; } lcomm;

struct f_set;
struct f_trie;
struct f_path_mask;

struct f_val {
  u8 type;              /* enum f_type */
  u8 subtype;           /* T_SET: element type */
  union {
    u32 i;
    u64 ec;
    lcomm lc;
    ip_addr ip;
    const net_addr *net;
    const char *s;
    const struct adata *ad;
    const struct f_set *set;
    const struct f_trie *trie;
    const struct f_path_mask *pm;
  } val;
};

#define F_VAL_VOID ((struct f_val){ .type = T_VOID })
static inline struct f_val f_int(uint t, u32 i) { return (struct f_val){ .type = t, .val.i = i }; }
static inline struct f_val f_bool(int b) { return (struct f_val){ .type = T_BOOL, .val.i = !!b }; }

/* --- Sets of scalar values: sorted ranges --- */
struct f_set {
  u8 type;              /* element type: T_INT, T_PAIR, T_QUAD, T_EC, T_LC, T_IP, T_STRING, enums */
  u32 count;
  struct f_val *from, *to;   /* sorted by from; to >= from */
  struct f_val *maxto;       /* maxto[i] = max(to[0..i]) */
  u32 *from32, *maxto32;     /* the same for u32-valued element types (fast path) */
  u32 *few32;                /* u32 type, 1..F_SET_FEW ranges: their starts, then their
                                lengths (to - from), the last range repeated; else NULL */
};
#define F_SET_FEW 8

/* --- Prefix sets: a path-compressed binary trie per address family --- */
struct f_trie_node {
  struct f_trie_node *c[2];
  u32 addr[4];          /* prefix bits, left-aligned (IPv4 in addr[0]) */
  u8 plen;
  u32 accept[5];        /* bit L: nets of length L match here */
};

struct f_trie_entry { net_addr net; u8 lo, hi; };

/* IPv4 nodes flattened in preorder (a left child follows its parent) for
 * cache-friendly lookups; c[] are indices, 0 = none (the root is never a child). */
struct f_trie_node4 {
  u32 addr;
  u32 plen;
  u64 accept;
  u32 c[2];
};

/* Where a lookup of an IPv4 net stands after its first 8 (or 16) bits:
 * the lengths accepted by the nodes passed so far, and the node to go on
 * from (index + 1; 0: no deeper node on the path). */
struct f_trie_stride {
  u64 accept;
  u32 resume;
  u32 sub;                       /* top level: table of the next 8 bits (index + 1), or 0 */
};

struct f_trie {
  struct f_trie_node *root[2];   /* [0] IPv4, [1] IPv6 */
  struct f_trie_node4 *v4;       /* flattened IPv4 trie (f_trie_finish) */
  uint v4_count;
  struct f_trie_stride *v4_top;  /* big tries: by the first 8 bits, or NULL */
  struct f_trie_stride *v4_sub;  /* 256 entries per /8 with enough nodes below */
  uint count;
  struct f_trie_entry *entries;  /* as written, for printing and comparing */
};

/* --- AS path masks --- */
enum pm_kind { PM_ASN, PM_QUESTION, PM_ASTERISK, PM_ASN_EXPR, PM_ASN_RANGE, PM_ASN_SET, PM_LOOP };
struct f_path_mask_item {
  u8 kind;
  u32 asn, to;               /* PM_ASN; PM_ASN_RANGE: asn..to */
  const struct f_set *set;   /* PM_ASN_SET */
};
struct f_path_mask {
  uint len;
  struct f_path_mask_item item[];
};

/* --- Values (filter/value.c) --- */
#define F_CMP_ERROR 999
int val_compare(const struct f_val *a, const struct f_val *b);
/* An IPv4 address (compares with quads, as in BIRD). */
int val_is_ip4(const struct f_val *v);
int val_same(const struct f_val *a, const struct f_val *b);
void val_format(const struct f_val *v, struct buffer *b);
/* Into a fixed buffer; truncated with "..." if too long. */
char *val_format_str(const struct f_val *v, linpool *lp);
int ec_format(char *buf, size_t size, u64 ec);

/* Sets */
typedef u32 f_u32x4 __attribute__((vector_size(16)));

/* A set of a few u32 ranges (few32) loaded into vectors: a loop testing
 * many values (the ASNs of a path) loads the set once. 16-byte vectors:
 * every x86-64 and arm64 has them (wider ones would be split up and
 * realign the callers' stack frames). */
struct f_few32 { f_u32x4 lo0, lo1, len0, len1; };

static inline struct f_few32
f_few32_load(const struct f_set *s)
{
  struct f_few32 v;
  memcpy(&v.lo0, s->few32, 16);
  memcpy(&v.lo1, s->few32 + 4, 16);
  memcpy(&v.len0, s->few32 + F_SET_FEW, 16);
  memcpy(&v.len1, s->few32 + F_SET_FEW + 4, 16);
  return v;
}

/* Every range at once: no branch, no load that depends on another. */
static inline int
f_few32_has(const struct f_few32 *v, u32 x)
{
  f_u32x4 in = (f_u32x4) ((x - v->lo0) <= v->len0) | (f_u32x4) ((x - v->lo1) <= v->len1);
  u64 w[2];
  memcpy(w, &in, sizeof(w));
  return !!(w[0] | w[1]);
}

/* x in a set of a u32-valued type (from32 set). A set of a few ranges
 * (bogon ASNs, a community pattern) tests them all at once. A bigger one:
 * the last range starting at or below x must reach it; the search is
 * branchless, its steps depend on the set's size only, so they predict
 * well whatever x is. */
static inline int
f_set_contains_u32(const struct f_set *s, u32 x)
{
  if (s->few32) {
    struct f_few32 v = f_few32_load(s);
    return f_few32_has(&v, x);
  }
  const u32 *base = s->from32;
  uint n = s->count;
  if (!n || base[0] > x)
    return 0;
  while (n > 1) {
    uint half = n / 2;
    base = base[half] <= x ? base + half : base;
    n -= half;
  }
  return s->maxto32[base - s->from32] >= x;
}
struct f_set *f_set_build(linpool *lp, uint type, struct f_val *from, struct f_val *to, uint n, const char **err);
int f_set_contains(const struct f_set *s, const struct f_val *v);
int f_set_same(const struct f_set *a, const struct f_set *b);
void f_set_format(const struct f_set *s, struct buffer *b);

/* Prefix tries (filter/trie.c) */
struct f_trie *f_trie_new(linpool *lp);
void f_trie_add(linpool *lp, struct f_trie *t, const net_addr *n, uint lo, uint hi);
void f_trie_finish(linpool *lp, struct f_trie *t, struct f_trie_entry *list, uint count);
int f_trie_match(const struct f_trie *t, const net_addr *n);
int f_trie_same(const struct f_trie *a, const struct f_trie *b);
void f_trie_format(const struct f_trie *t, struct buffer *b);

/* AS paths (filter/path.c); payload: segments (u8 type, u8 count, u32[count]) */
struct adata *as_path_prepend(linpool *lp, const struct adata *p, u32 asn);
uint as_path_length(const struct adata *p);
int as_path_first(const struct adata *p, u32 *asn);
int as_path_last(const struct adata *p, u32 *asn);
int as_path_last_nonaggregated(const struct adata *p, u32 *asn);
int as_path_contains(const struct adata *p, u32 asn, int min);
/* Every ASN, AS_SET members one by one: how many, and the k-th (0 past the end) */
uint as_path_item_count(const struct adata *p);
u32 as_path_item(const struct adata *p, uint k);
/* Remove (keep = 0) or keep only (keep = 1) ASNs matching v (int or int set). */
struct adata *as_path_filter(linpool *lp, const struct adata *p, const struct f_val *v, int keep);
int as_path_match(const struct adata *p, const struct f_path_mask *m);
int as_path_valid(const u8 *data, uint len);
void as_path_format(const struct adata *p, struct buffer *b);
void path_mask_format(const struct f_path_mask *m, struct buffer *b);
int path_mask_same(const struct f_path_mask *a, const struct f_path_mask *b);

/* Community lists (filter/path.c): T_CLIST u32[], T_ECLIST u64[], T_LCLIST lcomm[] */
uint clist_count(uint type, const struct adata *l);
int clist_contains(uint type, const struct adata *l, const struct f_val *v);
struct adata *clist_add(linpool *lp, uint type, const struct adata *l, const struct f_val *v);
/* mode 0: delete matching, 1: keep matching (filter) */
struct adata *clist_filter(linpool *lp, uint type, const struct adata *l, const struct f_val *v, int keep);
int clist_minmax(uint type, const struct adata *l, int max, struct f_val *out);
void clist_format(uint type, const struct adata *l, struct buffer *b);
int clist_match_set(uint type, const struct adata *l, const struct f_val *set);
struct f_val clist_item(uint type, const struct adata *l, uint i);

static inline uint clist_item_type(uint list_type)
{
  return list_type == T_CLIST ? T_PAIR : list_type == T_ECLIST ? T_EC : T_LC;
}

/* l.add(b), l.delete(b), l.filter(b) on a community list or (delete,
 * filter) a path of type lt. list_edit_check() says whether the operands
 * go together, converting b in place as the language does (a quad, an int
 * or an IPv4 address becomes a pair for a clist); list_edit() then makes
 * the new list. The interpreter checks at run time; the compiler checks
 * constant operands once (FI_EA_EDIT). */
enum list_edit_op { LE_ADD, LE_DELETE, LE_FILTER };
enum list_edit_err { LE_OK, LE_PATH_ADD, LE_PATH_ITEM, LE_NOT_LIST, LE_ITEM };
enum list_edit_err list_edit_check(enum list_edit_op op, uint lt, struct f_val *b);
const struct adata *list_edit(linpool *lp, enum list_edit_op op, uint lt, const struct adata *l, const struct f_val *b);

struct adata *adata_new(linpool *lp, const void *data, uint len);
static inline struct adata *adata_alloc(linpool *lp, uint len)
{
  struct adata *a = lp_alloc(lp, sizeof(struct adata) + len);
  a->length = len;
  a->data = (u8 *) (a + 1);
  return a;
}
/* A read-only view of existing bytes (no copy). */
static inline struct adata *adata_view(linpool *lp, const void *data, uint len)
{
  struct adata *a = lp_alloc(lp, sizeof(struct adata));
  a->length = len;
  a->data = (u8 *) data;
  return a;
}
int adata_same(const struct adata *a, const struct adata *b);
extern const struct adata adata_empty;

#endif
