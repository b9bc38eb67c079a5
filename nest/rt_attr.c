/*
 * DOC: Interned attribute lists.
 *
 * ea_intern() flattens a builder into one block (header, sorted eattrs,
 * payload bytes), hashes the key part with the process seed and looks it
 * up in a cds_lfht. A hit whose use count is not already zero is shared;
 * otherwise the new block is added. ea_unref() dropping the last reference
 * deletes the node from the hash and frees it through call_rcu, so readers
 * that found it in an RCU read section stay safe.
 *
 * A lookup may meet a node whose count just dropped to zero (being
 * deleted); it never resurrects it but adds a fresh copy instead. Such a
 * transient duplicate costs a little memory and nothing else.
 */
#include <string.h>
#include <stdlib.h>
#include "nest/rt_attr.h"
#include "nest/ea_bgp.h"
#include "lib/hash.h"
#include "lib/printf.h"
#include "lib/resource.h"
#include "lib/log.h"

const char *const rte_source_names[RTS_MAX] = {
  [RTS_DUMMY] = "dummy", [RTS_STATIC] = "static", [RTS_INHERIT] = "inherit", [RTS_DEVICE] = "device",
  [RTS_STATIC_DEVICE] = "static-device", [RTS_REDIRECT] = "redirect", [RTS_RIP] = "RIP",
  [RTS_OSPF] = "OSPF", [RTS_OSPF_IA] = "OSPF-IA", [RTS_OSPF_EXT1] = "OSPF-E1", [RTS_OSPF_EXT2] = "OSPF-E2",
  [RTS_BGP] = "BGP", [RTS_PIPE] = "pipe", [RTS_BABEL] = "Babel", [RTS_RPKI] = "RPKI", [RTS_PERF] = "Perf",
  [RTS_AGGREGATED] = "aggregated",
};

const char *const rte_dest_names[RTD_MAX] = {
  [RTD_NONE] = "", [RTD_UNICAST] = "unicast", [RTD_BLACKHOLE] = "blackhole",
  [RTD_UNREACHABLE] = "unreachable", [RTD_PROHIBIT] = "prohibited",
};

static struct cds_lfht *ea_hash;
static const struct ea_class_desc *ea_classes[256];   /* written at start-up only */

void ea_register_class(uint proto, const struct ea_class_desc *d) { ea_classes[proto & 0xff] = d; }
const struct ea_class_desc *ea_class(uint proto) { return ea_classes[proto & 0xff]; }
static void (*ea_memo_fill)(const struct ea_list *l, u8 *memo);   /* written at start-up only */
void ea_register_memo(void (*fill)(const struct ea_list *l, u8 *memo)) { ea_memo_fill = fill; }
static u64 ea_total;   /* atomic */

/*
 * Generic attributes in `show route all`. Only those BIRD 3 prints in the
 * B2-style listing we keep (`from`, `weight`, ... stay hidden there, as
 * in BIRD 2): the ASPA provider list, "aspa_providers: 65003 65004".
 */
static const char *
ea_gen_name(const struct eattr *e, char *buf, size_t size)
{
  (void) buf, (void) size;
  return e->id == EA_GEN_ASPA_PROVIDERS ? "aspa_providers" : NULL;
}

static void
ea_gen_format(const struct ea_list *l, const struct eattr *e, char *buf, size_t size)
{
  const u8 *d = ea_data(l, e);
  size_t used = 0;
  buf[0] = 0;
  for (u32 i = 0; i + 4 <= e->len && used + 12 < size; i += 4) {
    u32 asn;
    memcpy(&asn, d + i, 4);
    used += bsnprintf(buf + used, size - used, "%s%u", i ? " " : "", asn);
  }
}

static const struct ea_class_desc ea_gen_class = { .name = ea_gen_name, .format = ea_gen_format };

void
ea_init(void)
{
  ea_register_class(EAP_GENERIC, &ea_gen_class);
  ea_hash = cds_lfht_new(1024, 1024, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING, NULL);
  if (!ea_hash)
    die("Cannot allocate attribute hash");
}

/* Only entries below count are ever read, so the (large) arrays are not
 * cleared: this runs once per UPDATE and per filter run that writes. */
void
ea_builder_init(struct ea_builder *b)
{
  memset(b, 0, offsetof(struct ea_builder, a));
}

void
ea_builder_from(struct ea_builder *b, const struct ea_list *l)
{
  b->source = l->source;
  b->dest = l->dest;
  b->scope = l->scope;
  b->flags = l->flags;
  b->preference = l->preference;
  b->gw = l->gw;
  b->iface = l->iface;
  b->igp_metric = l->igp_metric;
  b->count = l->count;
  for (uint i = 0; i < l->count; i++) {
    b->a[i] = l->a[i];
    b->payload[i] = (l->a[i].type == EAF_INT || l->a[i].type == EAF_ROUTER_ID) ? NULL : ea_data(l, &l->a[i]);
  }
}

static int
ea_builder_slot(struct ea_builder *b, u16 id)
{
  for (uint i = 0; i < b->count; i++)
    if (b->a[i].id == id)
      return i;
  if (b->count >= EA_BUILDER_MAX)
    bug("Too many attributes in one route");
  return b->count++;
}

void
ea_set_int(struct ea_builder *b, u16 id, u8 type, u8 flags, u32 val)
{
  int i = ea_builder_slot(b, id);
  b->a[i] = (struct eattr){ .id = id, .type = type, .flags = flags, .val = val };
  b->payload[i] = NULL;
}

void
ea_set_data(struct ea_builder *b, u16 id, u8 type, u8 flags, const void *data, u32 len)
{
  int i = ea_builder_slot(b, id);
  b->a[i] = (struct eattr){ .id = id, .type = type, .flags = flags, .len = len };
  b->payload[i] = data;
}

void
ea_unset(struct ea_builder *b, u16 id)
{
  for (uint i = 0; i < b->count; i++)
    if (b->a[i].id == id) {
      b->a[i] = b->a[b->count - 1];
      b->payload[i] = b->payload[b->count - 1];
      b->count--;
      return;
    }
}

static size_t
ea_key_size(const struct ea_list *l)
{
  return offsetof(struct ea_list, a) - EA_KEY_START + l->count * sizeof(struct eattr) + l->data_len;
}

static int
ea_match(struct cds_lfht_node *node, const void *key)
{
  const struct ea_list *a = caa_container_of(node, struct ea_list, node);
  const struct ea_list *b = key;
  rcu_tsan_found(a);
  if (a->hash != b->hash || a->count != b->count || a->data_len != b->data_len)
    return 0;
  return !memcmp((const u8 *) a + EA_KEY_START, (const u8 *) b + EA_KEY_START, ea_key_size(a));
}

/* Size of the flattened list. Entries go sorted by id: order[] gets the
 * builder's indices in that order, or is not used (returns 0 in *sorted)
 * when the builder is sorted already, as after a filter that only
 * replaced attributes of a list. */
static size_t
ea_flat_size(const struct ea_builder *b, uint *order, int *sorted, u32 *data_len)
{
  u32 dl = 0;
  *sorted = 1;
  for (uint i = 0; i < b->count; i++) {
    if (i && b->a[i - 1].id > b->a[i].id)
      *sorted = 0;
    if (b->payload[i])
      dl += ALIGN_UP(b->a[i].len, 4);
  }
  *data_len = dl;
  if (!*sorted) {
    for (uint i = 0; i < b->count; i++)
      order[i] = i;
    for (uint i = 1; i < b->count; i++)
      for (uint j = i; j > 0 && b->a[order[j - 1]].id > b->a[order[j]].id; j--) {
        uint t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
      }
  }
  return offsetof(struct ea_list, a) + b->count * sizeof(struct eattr) + dl;
}

/* Write the flattened list into l; use count one. Every byte is set
 * (payload padding included) without clearing the block first. */
static void
ea_flatten_into(struct ea_list *l, const struct ea_builder *b, const uint *order, int sorted, u32 data_len)
{
  memset(l, 0, EA_KEY_START);
  l->uc = 1;
  l->source = b->source;
  l->dest = b->dest;
  l->scope = b->scope;
  l->flags = b->flags;
  l->preference = b->preference;
  l->gw = b->gw;
  l->iface = b->iface;
  l->igp_metric = b->igp_metric;
  l->count = b->count;
  l->data_len = data_len;

  u8 *data = (u8 *) &l->a[l->count];
  u32 off = 0;
  if (sorted)
    memcpy(l->a, b->a, b->count * sizeof(struct eattr));
  for (uint i = 0; i < b->count; i++) {
    uint k = sorted ? i : order[i];
    if (!sorted)
      l->a[i] = b->a[k];
    const void *pl = b->payload[k];
    if (pl) {
      u32 len = l->a[i].len, alen = ALIGN_UP(len, 4);
      l->a[i].val = off;
      if (alen != len)
        memset(data + off + alen - 4, 0, 4);
      memcpy(data + off, pl, len);
      off += alen;
    }
  }
  l->hash = hash_bytes((const u8 *) l + EA_KEY_START, ea_key_size(l));
}

static size_t
ea_size(const struct ea_list *l)
{
  return offsetof(struct ea_list, a) + l->count * sizeof(struct eattr) + l->data_len;
}

static void
ea_free_rcu(struct rcu_head *h)
{
  struct ea_list *l = caa_container_of(h, struct ea_list, rcu);
  mem_free_shared(MEM_ATTRS, l, ea_size(l));
}

/* Take a reference unless the count already reached zero. */
static int
ea_tryref(struct ea_list *l)
{
  u32 uc = uatomic_read(&l->uc);
  while (uc) {
    u32 old = uatomic_cmpxchg(&l->uc, uc, uc + 1);
    if (old == uc)
      return 1;
    uc = old;
  }
  return 0;
}

/* Most lists are small: build the lookup key on the stack and allocate
 * only when the list is new (the common case on a route server is a hit). */
#define EA_STACK_KEY 2048

struct ea_list *
ea_intern(const struct ea_builder *b)
{
  uint order[EA_BUILDER_MAX];
  u32 data_len;
  int sorted;
  size_t size = ea_flat_size(b, order, &sorted, &data_len);
  u64 stack[EA_STACK_KEY / 8];
  struct ea_list *heap = size <= sizeof(stack) ? NULL : mem_alloc_shared(MEM_ATTRS, size);
  struct ea_list *key = heap ? heap : (struct ea_list *) stack;
  ea_flatten_into(key, b, order, sorted, data_len);
  struct cds_lfht_iter it;

  rcu_read_lock();
  cds_lfht_lookup(ea_hash, key->hash, ea_match, key, &it);
  struct cds_lfht_node *n = cds_lfht_iter_get_node(&it);
  if (n) {
    struct ea_list *found = caa_container_of(n, struct ea_list, node);
    if (ea_tryref(found)) {
      rcu_read_unlock();
      if (heap)
        mem_free_shared(MEM_ATTRS, heap, size);
      return found;
    }
  }
  struct ea_list *l = heap;
  if (!l) {
    l = mem_alloc_shared(MEM_ATTRS, size);
    memcpy(l, key, size);
  }
  if (ea_memo_fill)
    ea_memo_fill(l, l->memo);
  rcu_tsan_publish(l);
  struct cds_lfht_node *ret = cds_lfht_add_unique(ea_hash, l->hash, ea_match, l, &l->node);
  if (ret != &l->node) {
    struct ea_list *found = caa_container_of(ret, struct ea_list, node);
    if (ea_tryref(found)) {
      rcu_read_unlock();
      mem_free_shared(MEM_ATTRS, l, size);
      return found;
    }
    /* The equal list is dying; live beside it. */
    cds_lfht_add(ea_hash, l->hash, &l->node);
  }
  rcu_read_unlock();
  uatomic_inc(&ea_total);
  return l;
}

struct ea_list *
ea_ref(struct ea_list *l)
{
  ASSERT_DIE(uatomic_add_return(&l->uc, 1) > 1);
  return l;
}

void
ea_ref_many(struct ea_list *l, uint n)
{
  ASSERT_DIE(uatomic_add_return(&l->uc, n) > n);
}

void
ea_unref(struct ea_list *l)
{
  ea_unref_many(l, 1);
}

void
ea_unref_many(struct ea_list *l, uint n)
{
  if (!l || !n)
    return;
  u32 uc = uatomic_sub_return(&l->uc, n);
  ASSERT((s32) uc >= 0);
  if (uc)
    return;
  rcu_read_lock();
  int rv = cds_lfht_del(ea_hash, &l->node);
  rcu_read_unlock();
  ASSERT_DIE(rv == 0);
  uatomic_dec(&ea_total);
  call_rcu(&l->rcu, ea_free_rcu);
}

u64
ea_count(void)
{
  return uatomic_read(&ea_total);
}
