/*
 * DOC: Prefix sets printed as BIRD 2 prints them (`eval`, `print`, `format`).
 *
 * BIRD 2 prints a prefix set as a dump of its trie, not as written:
 * `[1.0.0.0/8+, 2.0.0.0/16{18,20}]` comes out as
 * `[1.0.0.0/8{1.255.255.255}, 2.0.0.0/16{0.0.112.0}]`, every entry
 * "prefix{mask}" with bit (W - L) of the mask (W = 32 or 128) set for each
 * accepted length L, and `0.0.0.0/0` (`::/0`) first when length 0 is. The
 * trie's shape follows from the set, not from the order it was written
 * in, and this file rebuilds that shape from our entries for printing
 * only (lookups use filter/trie.c). The rules below were derived from
 * BIRD 2.0.12's output and checked against it on thousands of random
 * IPv4 and IPv6 sets:
 *
 * - Nodes sit at prefix lengths divisible by 4 (a 16-way trie, paths
 *   compressed): the root, the node at floor4(q) of every pattern
 *   `X/q{l,h}` (q = min(pxlen, h), X cut to q), the 2^(c4(q)-q) nodes at
 *   the next multiple of 4 when q is not one and h reaches it, and the
 *   branch nodes where those diverge (floor4 of the common prefix length).
 * - A node's accept mask: lengths of nets under it (>= its length) or of
 *   its supernets (< its length). Every node on the path to a pattern's
 *   node gets the pattern's lengths l .. its own length; the pattern's
 *   own aligned node gets l..h; the next-aligned nodes get max(l, c4)..h.
 * - Lengths strictly inside a node's 4-bit stride are "local" positions
 *   (14 per node: 2 of length +1, 4 of +2, 8 of +3): a non-aligned
 *   pattern's own lengths below c4(q), and the supernet lengths of a
 *   pattern that fall inside a path node's stride. Positions whose
 *   length the node accepts anyway are dropped.
 * - Output: nodes in trie order; after a node's own entry, its local
 *   positions by length then address, each one not already covered by a
 *   printed local above it, with the mask {L} plus the lengths that both
 *   of its sub-positions carry (recursively, inside the stride).
 */
#include <stdlib.h>
#include <string.h>
#include "filter/data.h"

struct tf_key {
  u32 a[4];       /* prefix bits, left-aligned (IPv4 in a[0]) */
  uint plen;
};

struct tf_node {
  struct tf_key k;
  int parent;     /* index, -1 for the root */
  u32 acc[4];     /* accept mask as printed: bit (W - L), big-endian words */
  u16 local;      /* position (1 << step) + bits, step 1..3 */
};

struct tf_pat {
  struct tf_key k;
  uint l, h;
};

struct tf {
  uint w;         /* 32 or 128 */
  uint words;     /* 1 or 4 */
  struct tf_node *n;
  uint count, size;
  struct buffer *out;
  int entries;    /* printed so far */
};

static inline uint f4(uint q) { return q & ~3u; }
static inline uint c4(uint q) { return (q + 3) & ~3u; }

static uint
key_bit(const struct tf_key *k, uint i)
{
  return (k->a[i / 32] >> (31 - i % 32)) & 1;
}

/* Bits [from, from + n) of k as a number (n <= 8). */
static uint
key_bits(const struct tf_key *k, uint from, uint n)
{
  uint v = 0;
  for (uint i = 0; i < n; i++)
    v = (v << 1) | key_bit(k, from + i);
  return v;
}

static struct tf_key
key_cut(const struct tf_key *k, uint len)
{
  struct tf_key r = { .plen = len };
  for (uint i = 0; i < 4; i++) {
    uint keep = len > 32 * i ? MIN(len - 32 * i, 32u) : 0;
    r.a[i] = keep ? k->a[i] & (keep == 32 ? ~0u : ~(~0u >> keep)) : 0;
  }
  return r;
}

/* k cut to len, then bits [len, len + n) set to v. */
static struct tf_key
key_extend(const struct tf_key *k, uint len, uint n, uint v)
{
  struct tf_key r = key_cut(k, len);
  for (uint i = 0; i < n; i++)
    if ((v >> (n - 1 - i)) & 1)
      r.a[(len + i) / 32] |= 1u << (31 - (len + i) % 32);
  r.plen = len + n;
  return r;
}

static uint
key_common(const struct tf_key *x, const struct tf_key *y)
{
  uint lim = MIN(x->plen, y->plen), n = 0;
  while (n < lim && key_bit(x, n) == key_bit(y, n))
    n++;
  return n;
}

/* Trie order: by address bits, a prefix before the prefixes under it. */
static int
key_cmp(const struct tf_key *x, const struct tf_key *y)
{
  for (uint i = 0; i < 4; i++)
    if (x->a[i] != y->a[i])
      return x->a[i] < y->a[i] ? -1 : 1;
  return x->plen < y->plen ? -1 : x->plen > y->plen;
}

static int
node_cmp(const void *x, const void *y)
{
  return key_cmp(&((const struct tf_node *) x)->k, &((const struct tf_node *) y)->k);
}

static void
tf_add(struct tf *t, struct tf_key k)
{
  if (t->count == t->size) {
    t->size = t->size ? 2 * t->size : 64;
    t->n = realloc(t->n, t->size * sizeof(struct tf_node));
  }
  t->n[t->count++] = (struct tf_node){ .k = k, .parent = -1 };
}

static void
tf_sort_unique(struct tf *t)
{
  qsort(t->n, t->count, sizeof(struct tf_node), node_cmp);
  uint j = 0;
  for (uint i = 0; i < t->count; i++)
    if (!j || key_cmp(&t->n[j - 1].k, &t->n[i].k))
      t->n[j++] = t->n[i];
  t->count = j;
}

static struct tf_node *
tf_find(struct tf *t, const struct tf_key *k)
{
  struct tf_node key = { .k = *k };
  return bsearch(&key, t->n, t->count, sizeof(struct tf_node), node_cmp);
}

static int
key_contains(const struct tf_key *outer, const struct tf_key *inner)
{
  return outer->plen <= inner->plen && key_common(outer, inner) >= outer->plen;
}

/* The nodes, their parents: the patterns' aligned nodes, then the branch
 * nodes (the common prefixes of neighbours in trie order make the set
 * closed: the usual construction of a compressed trie from sorted keys). */
static void
tf_build_nodes(struct tf *t, const struct tf_pat *p, uint np)
{
  tf_add(t, (struct tf_key){ .plen = 0 });
  for (uint i = 0; i < np; i++) {
    uint q = p[i].k.plen;
    tf_add(t, key_cut(&p[i].k, f4(q)));
    if (q % 4 && p[i].h >= c4(q))
      for (uint v = 0; v < 1u << (c4(q) - q); v++)
        tf_add(t, key_extend(&p[i].k, q, c4(q) - q, v));
  }
  tf_sort_unique(t);
  uint n = t->count;
  for (uint i = 0; i + 1 < n; i++) {
    uint c = key_common(&t->n[i].k, &t->n[i + 1].k);
    if (c < MIN(t->n[i].k.plen, t->n[i + 1].k.plen))
      tf_add(t, key_cut(&t->n[i].k, f4(c)));
  }
  tf_sort_unique(t);
  int *stack = malloc((t->count + 1) * sizeof(int));
  uint sp = 0;
  for (uint i = 0; i < t->count; i++) {
    while (sp && !key_contains(&t->n[stack[sp - 1]].k, &t->n[i].k))
      sp--;
    t->n[i].parent = sp ? stack[sp - 1] : -1;
    stack[sp++] = i;
  }
  free(stack);
}

static void
acc_set(const struct tf *t, u32 *acc, uint len)
{
  uint bit = t->w - len;
  acc[t->words - 1 - bit / 32] |= 1u << (bit % 32);
}

static int
acc_has(const struct tf *t, const u32 *acc, uint len)
{
  uint bit = t->w - len;
  return (acc[t->words - 1 - bit / 32] >> (bit % 32)) & 1;
}

static void
acc_range(const struct tf *t, u32 *acc, uint lo, uint hi)
{
  for (uint l = lo; l <= hi; l++)
    acc_set(t, acc, l);
}

static void
local_set(struct tf_node *n, const struct tf_key *k, uint len)
{
  uint step = len - n->k.plen;
  n->local |= 1u << ((1u << step) + key_bits(k, n->k.plen, step));
}

static void
tf_add_pattern(struct tf *t, const struct tf_pat *p)
{
  uint q = p->k.plen, l = p->l, h = p->h;
  struct tf_key fk = key_cut(&p->k, f4(q));
  struct tf_node *f = tf_find(t, &fk);
  for (struct tf_node *n = f; n; n = n->parent >= 0 ? &t->n[n->parent] : NULL) {
    uint np = n->k.plen;
    if (np == q)
      acc_range(t, n->acc, l, h);
    else if (l <= MIN(np, h))
      acc_range(t, n->acc, l, MIN(np, h));
    for (int len = MAX(l, np + 1); len <= MIN(MIN((int) h, (int) q - 1), (int) np + 3); len++)
      local_set(n, &p->k, len);
  }
  if (!(q % 4))
    return;
  uint b = c4(q);
  for (uint len = MAX(l, q); len <= MIN(h, b - 1); len++)
    for (uint v = 0; v < 1u << (len - q); v++) {
      struct tf_key x = key_extend(&p->k, q, len - q, v);
      local_set(f, &x, len);
    }
  if (h >= b)
    for (uint v = 0; v < 1u << (b - q); v++) {
      struct tf_key x = key_extend(&p->k, q, b - q, v);
      acc_range(t, tf_find(t, &x)->acc, MAX(l, b), h);
    }
}

/* Lengths (as offsets 1..3 from the node, bit i) position idx carries. */
static uint
local_mask(const struct tf_node *n, uint idx, uint top)
{
  if (!(n->local & (1u << idx)))
    return 0;
  uint step = 31 - __builtin_clz(idx);
  uint m = 1u << step;
  if (step < 3 && n->k.plen + step + 1 <= top)
    m |= local_mask(n, 2 * idx, top) & local_mask(n, 2 * idx + 1, top);
  return m;
}

static void
tf_print_entry(struct tf *t, const struct tf_key *k, const u32 *acc)
{
  const char *sep = t->entries++ ? ", " : "";
  if (t->w == 32)
    buffer_print(t->out, "%s%I4/%u{%I4}", sep, ip4_from_u32(k->a[0]), k->plen, ip4_from_u32(acc[0]));
  else
    buffer_print(t->out, "%s%I6/%u{%I6}", sep, ip6_build(k->a[0], k->a[1], k->a[2], k->a[3]), k->plen,
                 ip6_build(acc[0], acc[1], acc[2], acc[3]));
}

static void
tf_print_node(struct tf *t, const struct tf_node *n)
{
  static const u32 none[4];
  if (memcmp(n->acc, none, sizeof(none)))
    tf_print_entry(t, &n->k, n->acc);
  uint printed[16] = { 0 };
  for (uint idx = 2; idx < 16; idx++) {
    uint step = 31 - __builtin_clz(idx);
    if (n->k.plen + step > t->w || !(n->local & (1u << idx)))
      continue;
    int covered = 0;
    for (uint up = idx >> 1; up >= 2; up >>= 1)
      if (printed[up] & (1u << step))
        covered = 1;
    if (covered)
      continue;
    printed[idx] = local_mask(n, idx, t->w);
    u32 acc[4] = { 0 };
    for (uint s = 1; s <= 3; s++)
      if (printed[idx] & (1u << s))
        acc_set(t, acc, n->k.plen + s);
    struct tf_key k = key_extend(&n->k, n->k.plen, step, idx - (1u << step));
    tf_print_entry(t, &k, acc);
  }
}

void
f_trie_format(const struct f_trie *ft, struct buffer *b)
{
  struct tf t = { 0 };
  struct tf_pat *p = malloc((ft->count + 1) * sizeof(struct tf_pat));
  uint np = 0;
  int zero = 0;
  for (uint i = 0; i < ft->count; i++) {
    const struct f_trie_entry *e = &ft->entries[i];
    const net_addr *net = &e->net;
    struct tf_key k = { .plen = net->pxlen };
    if (net->type == NET_IP4) {
      t.w = 32;
      k.a[0] = ip4_to_u32(((const net_addr_ip4 *) net)->prefix);
    } else {
      t.w = 128;
      memcpy(k.a, ((const net_addr_ip6 *) net)->prefix.addr, sizeof(k.a));
    }
    uint l = e->lo, h = e->hi;
    if (l == 0) {
      zero = 1;
      l = 1;
      if (!h)
        continue;
    }
    p[np++] = (struct tf_pat){ .k = key_cut(&k, MIN(k.plen, h)), .l = l, .h = h };
  }
  t.words = t.w == 32 ? 1 : 4;

  t.out = b;
  buffer_puts(b, "[");
  if (zero) {
    buffer_puts(b, t.w == 128 ? "::/0" : "0.0.0.0/0");
    t.entries++;
  }
  if (np) {
    tf_build_nodes(&t, p, np);
    for (uint i = 0; i < np; i++)
      tf_add_pattern(&t, &p[i]);
    for (uint i = 0; i < t.count; i++) {
      struct tf_node *n = &t.n[i];
      for (uint s = 1; s <= 3 && n->k.plen + s <= t.w; s++)
        if (acc_has(&t, n->acc, n->k.plen + s))
          for (uint idx = 1u << s; idx < 2u << s; idx++)
            n->local &= ~(1u << idx);
      tf_print_node(&t, n);
    }
  }
  buffer_puts(b, "]");
  free(t.n);
  free(p);
}
