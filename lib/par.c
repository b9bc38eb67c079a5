/*
 * Help from the pool (par.h): a board of job slots per scheduler, helper
 * loops that take chunks from it.
 *
 * A call takes a free slot and publishes its job there as one word:
 * generation, next chunk, chunk count. A chunk is claimed by a
 * compare-and-swap of that word, so a helper that read an older job's
 * word (it woke late, the job is over, the slot has a new one) fails its
 * claim instead of taking a chunk of the wrong job. The job's function
 * and context are written before the word and read after a claim, which
 * the owner cannot outlive: it waits until every chunk is done. Slots are
 * never freed while helpers live, so a late helper only ever reads a
 * slot's word.
 *
 * Owner: the struct's fields but the slots and width are the main loop's;
 * a slot is its caller's while busy, its word and done count are shared.
 */
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <urcu/arch.h>
#include "lib/par.h"
#include "lib/resource.h"

#define PAR_SLOTS 8
#define PAR_MAX_HELPERS 63
#define PAR_MAX_CHUNKS 0xffffU
/* The owner waits for helpers' chunks spinning this many times (a chunk
 * is some hundred microseconds), then sleeps until the last one is done:
 * a helper's thread may have lost its core to the owner's spinning, with
 * more threads than cores. */
#define PAR_SPINS 2000

/* A job on the board: its caller's while busy; helpers claim chunks. */
struct par_slot {
  u32 busy;                     /* atomic: a caller holds the slot */
  u32 done;                     /* atomic: chunks of the job finished (a futex) */
  u64 word;                     /* atomic: generation << 32 | next << 16 | count */
  par_fn fn;                    /* the job's, written before word */
  void *ctx;
  uint base;                    /* the job's first chunk in this word */
  u32 sleeping;                 /* atomic: the owner sleeps on done */
  char pad[64 - 4 * sizeof(u32) - sizeof(u64) - sizeof(par_fn) - sizeof(void *)];
};

/* One helper loop. Made and stopped by the main loop; immutable between. */
struct par_helper {
  struct par *par;
  struct loop *loop;
  struct event ev;              /* to its loop: look at the board */
  struct event stopped;         /* to the main loop: its loop is gone */
};

struct par {
  struct par_slot slots[PAR_SLOTS];
  struct sched *sched;
  struct par_helper *helper[PAR_MAX_HELPERS];
  uint made;                    /* main loop */
  uint width;                   /* atomic: helpers allowed, plus the caller */
  uint stopping;                /* main loop: helpers not gone yet */
  struct event *done;
};

static inline u32 word_next(u64 w) { return (w >> 16) & PAR_MAX_CHUNKS; }
static inline u32 word_count(u64 w) { return w & PAR_MAX_CHUNKS; }

/* A chunk of the slot's job (and the job's count), or false: none left. */
static bool
par_claim(struct par_slot *s, uint *chunk, uint *count)
{
  u64 w = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);
  while (word_next(w) < word_count(w))
    if (__atomic_compare_exchange_n(&s->word, &w, w + (1U << 16), false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      *chunk = word_next(w);
      *count = word_count(w);
      return true;
    }
  return false;
}

/* Run one claimed chunk; the job's fields are this job's while a chunk
 * of it is not done. The last one wakes an owner asleep. */
static void
par_do(struct par_slot *s, uint chunk, uint count, linpool *tmp)
{
  s->fn(s->ctx, s->base + chunk, tmp);
  lp_flush(tmp);
  if (__atomic_add_fetch(&s->done, 1, __ATOMIC_SEQ_CST) == count &&
      __atomic_load_n(&s->sleeping, __ATOMIC_SEQ_CST))
    syscall(SYS_futex, &s->done, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* The owner: until all count chunks are done. A helper that finishes the
 * last one after the owner's mark sees it; one that finished before, the
 * owner sees done moved. */
static void
par_wait(struct par_slot *s, uint count)
{
  u32 d;
  for (uint spins = 0; (d = __atomic_load_n(&s->done, __ATOMIC_ACQUIRE)) < count; spins++) {
    if (spins < PAR_SPINS) {
      caa_cpu_relax();
      continue;
    }
    __atomic_store_n(&s->sleeping, 1, __ATOMIC_SEQ_CST);
    if ((d = __atomic_load_n(&s->done, __ATOMIC_SEQ_CST)) < count)
      syscall(SYS_futex, &s->done, FUTEX_WAIT_PRIVATE, d, NULL, NULL, 0);
    __atomic_store_n(&s->sleeping, 0, __ATOMIC_RELAXED);
  }
}

static void
par_help(void *data)
{
  struct par_helper *h = data;
  struct par *p = h->par;
  linpool *tmp = loop_tmp();
  uint chunk, count;
  rcu_read_lock();
  for (bool more = true; more;) {
    more = false;
    for (uint i = 0; i < PAR_SLOTS; i++)
      while (par_claim(&p->slots[i], &chunk, &count)) {
        par_do(&p->slots[i], chunk, count, tmp);
        more = true;
      }
  }
  rcu_read_unlock();
}

struct par *
par_new(struct sched *s)
{
  struct par *p = mem_alloc_shared(MEM_PROTOCOLS, sizeof(*p));
  memset(p, 0, sizeof(*p));
  p->sched = s;
  p->width = 1;
  return p;
}

void
par_helpers(struct par *p, uint n)
{
  n = MIN(n, PAR_MAX_HELPERS);
  for (; p->made < n; p->made++) {
    struct par_helper *h = mem_alloc_shared(MEM_PROTOCOLS, sizeof(*h));
    memset(h, 0, sizeof(*h));
    char name[32];
    snprintf(name, sizeof(name), "%s helper %u", sched_name(p->sched), p->made + 1);
    h->par = p;
    h->loop = loop_new(p->sched, name);
    if (!h->loop) {
      mem_free_shared(MEM_PROTOCOLS, h, sizeof(*h));
      break;
    }
    ev_init(&h->ev, par_help, h);
    p->helper[p->made] = h;
  }
  __atomic_store_n(&p->width, MIN(n, p->made) + 1, __ATOMIC_RELEASE);
}

uint
par_width(const struct par *p)
{
  return p ? __atomic_load_n(&p->width, __ATOMIC_RELAXED) : 1;
}

static void
par_free(struct par *p)
{
  struct event *done = p->done;
  mem_free_shared(MEM_PROTOCOLS, p, sizeof(*p));
  ev_send(main_loop(), done);
}

static void
par_helper_gone(void *data)
{
  struct par_helper *h = data;
  struct par *p = h->par;
  mem_free_shared(MEM_PROTOCOLS, h, sizeof(*h));
  if (!--p->stopping)
    par_free(p);
}

void
par_stop(struct par *p, struct event *done)
{
  p->done = done;
  p->stopping = p->made;
  __atomic_store_n(&p->width, 1, __ATOMIC_RELAXED);
  if (!p->made) {
    par_free(p);
    return;
  }
  for (uint i = 0; i < p->made; i++) {
    struct par_helper *h = p->helper[i];
    ev_init(&h->stopped, par_helper_gone, h);
    loop_stop(h->loop, &h->stopped);
  }
}

/* A free slot, or NULL: as many jobs as slots run already. */
static struct par_slot *
par_slot_take(struct par *p)
{
  for (uint i = 0; i < PAR_SLOTS; i++) {
    u32 free = 0;
    if (__atomic_compare_exchange_n(&p->slots[i].busy, &free, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      return &p->slots[i];
  }
  return NULL;
}

/* Chunks base.. base + count - 1 of a job, in slot s. */
static void
par_round(struct par *p, struct par_slot *s, uint width, uint count, linpool *tmp)
{
  __atomic_store_n(&s->done, 0, __ATOMIC_RELAXED);
  u64 gen = (__atomic_load_n(&s->word, __ATOMIC_RELAXED) >> 32) + 1;
  __atomic_store_n(&s->word, gen << 32 | count, __ATOMIC_RELEASE);
  uint wake = MIN(width - 1, count - 1);
  for (uint i = 0; i < wake; i++)
    ev_send(p->helper[i]->loop, &p->helper[i]->ev);
  uint chunk, n;
  while (par_claim(s, &chunk, &n))
    par_do(s, chunk, n, tmp);
  par_wait(s, count);
}

void
par_run(struct par *p, uint chunks, par_fn fn, void *ctx, linpool *tmp)
{
  /* helpers below width are made and set (release in par_helpers) */
  uint width = p ? __atomic_load_n(&p->width, __ATOMIC_ACQUIRE) : 1;
  struct par_slot *s = width > 1 && chunks > 1 ? par_slot_take(p) : NULL;
  if (!s) {
    for (uint i = 0; i < chunks; i++) {
      fn(ctx, i, tmp);
      lp_flush(tmp);
    }
    return;
  }
  s->fn = fn;
  s->ctx = ctx;
  for (uint base = 0; base < chunks; base += PAR_MAX_CHUNKS) {
    s->base = base;
    par_round(p, s, width, MIN(chunks - base, PAR_MAX_CHUNKS), tmp);
  }
  __atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
}
