/*
 * DOC: Route sources and the slots they live in.
 *
 * A full route server keeps tens of millions of routes and each names its
 * source; a pointer would take 8 of a route's 32 bytes. Every source is
 * instead a numbered slot, so a route keeps the number in 32 bits: the
 * number's high half picks a chunk of slots, mapped when the first of its
 * slots is handed out, the low half the slot (rt_src_at(), nest/rt.h).
 * Freed slots are reused (last freed first) before a new one is taken.
 * Slot 0 is never handed out: it stands for "no source".
 *
 * A source is freed after an RCU grace period once its last reference
 * goes, so a reader that found it through a route may still read it until
 * its read section ends. Under AddressSanitizer a free slot is poisoned,
 * so a use after free is still reported though the memory stays mapped,
 * and the chunks are roots of the leak check.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
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

/* RT_SRC_CHUNK_SLOTS slots each (4.5 MiB of address space); written under
 * src_lock, read by anyone that holds a slot's number. */
struct rte_src *rt_src_chunks[RT_SRC_CHUNKS];

/* owner: src_lock */
static pthread_mutex_t src_lock = PTHREAD_MUTEX_INITIALIZER;
static u32 src_next_id = 1;         /* global ids (ADD-PATH tx path ids): never reused */
static u64 src_used = 1;            /* slots handed out at least once, slot 0 included */
static struct rte_src *src_free;    /* freed slots, linked through next */
static size_t src_touched;          /* bytes of the last chunk written (whole pages) */

/* The chunk of slot ix, mapped; under src_lock. */
static void
rt_src_chunk_map(u64 ix)
{
  size_t len = RT_SRC_CHUNK_SLOTS * sizeof(struct rte_src);
  void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    die("Cannot map memory for route sources: %m");
#ifdef RT_SRC_ASAN
  /* what only a source points to (its protocol) is not a leak */
  __lsan_register_root_region(m, len);
#endif
  src_touched = 0;
  /* readers learn of a slot from a published route */
  __atomic_store_n(&rt_src_chunks[ix >> RT_SRC_CHUNK_SHIFT], (struct rte_src *) m, __ATOMIC_RELAXED);
}

/* A slot to fill; under src_lock. */
static struct rte_src *
rt_src_slot(void)
{
  struct rte_src *s = src_free;
  if (s) {
    RT_SRC_UNPOISON(s);
    src_free = s->next;
    return s;
  }
  u64 ix = src_used++;
  if (ix >> RT_SRC_CHUNK_SHIFT >= RT_SRC_CHUNKS)
    die("Too many route sources (%llu)", (unsigned long long) ix);
  if (!rt_src_chunks[ix >> RT_SRC_CHUNK_SHIFT])
    rt_src_chunk_map(ix);
  /* A chunk costs only the pages written, as slots are handed out in
   * order: count a page once, as overhead until slots are in use. */
  size_t end = ((ix & (RT_SRC_CHUNK_SLOTS - 1)) + 1) * sizeof(struct rte_src);
  if (end > src_touched) {
    size_t page = (size_t) sysconf(_SC_PAGESIZE);
    size_t to = (end + page - 1) / page * page;
    mem_account(MEM_TABLES, 0, (s64) (to - src_touched));
    src_touched = to;
  }
  s = rt_src_at((u32) ix);
  s->ix = (u32) ix;
  return s;
}

struct rte_src *
rt_get_source(struct proto *p, u64 private_id)
{
  pthread_mutex_lock(&src_lock);
  struct rte_src *s = rt_src_slot();
  u32 id = src_next_id++;
  pthread_mutex_unlock(&src_lock);
  mem_account(MEM_TABLES, sizeof(*s), -(s64) sizeof(*s));

  u32 ix = s->ix;
  memset(s, 0, sizeof(*s));
  s->ix = ix;
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
rt_unlock_source_many(struct rte_src *s, uint n)
{
  if (!uatomic_sub_return(&s->uc, n))
    call_rcu(&s->rcu, rt_source_free_rcu);
}

void rt_unlock_source(struct rte_src *s) { rt_unlock_source_many(s, 1); }
