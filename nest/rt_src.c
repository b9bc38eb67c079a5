/*
 * DOC: Route sources and the range they live in.
 *
 * A full route server keeps tens of millions of routes and each names its
 * source; a pointer would take 8 of a route's 32 bytes. Every source is
 * instead a slot of one address range reserved at the first source, so a
 * route keeps the slot's number in 32 bits (rt_src_at(), nest/rt.h).
 *
 * The range is reserved inaccessible and made usable a chunk at a time as
 * sources are made, so only the sources in use cost memory; freed slots
 * are reused (last freed first) before the range grows. Slot 0 is never
 * handed out: it stands for "no source".
 *
 * A source is freed after an RCU grace period once its last reference
 * goes, so a reader that found it through a route may still read it until
 * its read section ends. Under AddressSanitizer a free slot is poisoned,
 * so a use after free is still reported though the memory stays mapped,
 * and the range is a root of the leak check.
 */
#include <string.h>
#include <sys/mman.h>
#include "nest/rt.h"
#include "nest/proto.h"
#include "lib/log.h"

#if defined(__SANITIZE_ADDRESS__)
#define RT_SRC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RT_SRC_ASAN 1
#endif
#endif
#ifdef RT_SRC_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/lsan_interface.h>
#define RT_SRC_POISON(s) ASAN_POISON_MEMORY_REGION((s), sizeof(struct rte_src))
#define RT_SRC_UNPOISON(s) ASAN_UNPOISON_MEMORY_REGION((s), sizeof(struct rte_src))
#else
#define RT_SRC_POISON(s) ((void) (s))
#define RT_SRC_UNPOISON(s) ((void) (s))
#endif

/* 2^28 sources (16 GiB of address space on 64-bit hosts, none of it
 * memory until used): a source per peer and ADD-PATH path id. */
#if UINTPTR_MAX == UINT64_MAX
#define RT_SRC_SLOTS ((size_t) 1 << 28)
#else
#define RT_SRC_SLOTS ((size_t) 1 << 20)
#endif
#define RT_SRC_CHUNK ((size_t) 64 << 10)      /* bytes made usable at a time */

char *rt_src_base;

/* owner: src_lock */
static pthread_mutex_t src_lock = PTHREAD_MUTEX_INITIALIZER;
static u32 src_next_id = 1;         /* global ids (ADD-PATH tx path ids): never reused */
static size_t src_used;             /* slots handed out at least once, slot 0 included */
static size_t src_usable;           /* slots made accessible */
static struct rte_src *src_free;    /* freed slots, linked through next */

static void
rt_src_reserve(void)
{
  void *m = mmap(NULL, RT_SRC_SLOTS * sizeof(struct rte_src), PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED)
    die("Cannot reserve address space for route sources: %m");
  rt_src_base = m;
  src_used = 1;
#ifdef RT_SRC_ASAN
  /* what only a source points to (its protocol) is not a leak */
  __lsan_register_root_region(m, RT_SRC_SLOTS * sizeof(struct rte_src));
#endif
}

/* A slot, its memory accessible; under src_lock. */
static struct rte_src *
rt_src_slot(void)
{
  struct rte_src *s = src_free;
  if (s) {
    RT_SRC_UNPOISON(s);
    src_free = s->next;
    return s;
  }
  if (!rt_src_base)
    rt_src_reserve();
  if (src_used >= src_usable) {
    if (src_usable + RT_SRC_CHUNK / sizeof(struct rte_src) > RT_SRC_SLOTS)
      die("Too many route sources (%zu)", src_used);
    if (mprotect(rt_src_base + src_usable * sizeof(struct rte_src), RT_SRC_CHUNK, PROT_READ | PROT_WRITE))
      die("Cannot map memory for route sources: %m");
    src_usable += RT_SRC_CHUNK / sizeof(struct rte_src);
    mem_account(MEM_TABLES, 0, RT_SRC_CHUNK);
  }
  return (struct rte_src *) (rt_src_base + src_used++ * sizeof(struct rte_src));
}

struct rte_src *
rt_get_source(struct proto *p, u64 private_id)
{
  pthread_mutex_lock(&src_lock);
  struct rte_src *s = rt_src_slot();
  u32 id = src_next_id++;
  pthread_mutex_unlock(&src_lock);
  mem_account(MEM_TABLES, sizeof(*s), -(s64) sizeof(*s));

  memset(s, 0, sizeof(*s));
  s->global_id = id;
  s->proto = p;
  s->run_id = p ? p->run_id : 0;
  s->run_info = p ? p->run_info : NULL;
  if (s->run_info)
    proto_run_info_hold(s->run_info);
  if (p && p->id) {
    s->holds_proto = 1;
    proto_src_ref(p);
  }
  s->private_id = private_id;
  s->uc = 1;
  return s;
}

void rt_lock_source_many(struct rte_src *s, uint n) { uatomic_add(&s->uc, n); }
void rt_lock_source(struct rte_src *s) { rt_lock_source_many(s, 1); }

static void
rt_source_free_rcu(struct rcu_head *h)
{
  struct rte_src *s = caa_container_of(h, struct rte_src, rcu);
  struct proto *p = s->holds_proto ? s->proto : NULL;
  if (s->run_info)
    proto_run_info_drop(s->run_info);
  mem_account(MEM_TABLES, -(s64) sizeof(*s), sizeof(*s));
  pthread_mutex_lock(&src_lock);
  s->next = src_free;
  src_free = s;
  RT_SRC_POISON(s);
  pthread_mutex_unlock(&src_lock);
  if (p)
    proto_src_unref(p);
}

/* Readers print a route's source protocol, so the source outlives them. */
void
rt_unlock_source(struct rte_src *s)
{
  if (!uatomic_sub_return(&s->uc, 1))
    call_rcu(&s->rcu, rt_source_free_rcu);
}
