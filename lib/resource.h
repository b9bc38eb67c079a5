/*
 * DOC: Memory: pools, blocks, linear pools and slabs, with accounting.
 *
 * A pool is a tree node owning resources (memory blocks, linear pools,
 * slabs, sub-pools, anything with a resclass). Freeing a pool frees all it
 * owns, so tearing down a protocol instance is one rfree(). A pool and what
 * it holds belong to one loop; nothing here locks.
 *
 * Every pool is tagged with a memory class (inherited from the parent
 * unless set). Allocation and free update per-class atomic counters of
 * effective bytes (asked for) and overhead (headers, slack, free slab
 * slots), which `show memory` reads from any thread. A slab tells them
 * a few kB at a time how its pages split between the two (their sum
 * always at once).
 *
 * Objects shared between loops (routes, attribute sets) are not allocated
 * from pools; they use mem_alloc_shared() with an explicit class and are
 * freed through RCU by their owner module.
 */
#ifndef LIB_RESOURCE_H
#define LIB_RESOURCE_H

#include "lib/birdlib.h"
#include "lib/lists.h"

enum mem_class {
  MEM_TABLES = 0,     /* "Routing tables" */
  MEM_ATTRS,          /* "Route attributes" */
  MEM_PROTOCOLS,      /* "Protocols" */
  MEM_CONFIG,         /* "Current config" */
  MEM_STANDBY,        /* "Standby memory": freed-but-kept caches */
  MEM_CLASS_MAX,
};

struct mem_usage {
  size_t effective;
  size_t overhead;
};

extern const char *const mem_class_names[MEM_CLASS_MAX];

typedef struct pool pool;
typedef struct linpool linpool;
typedef struct slab slab;

struct resource;
struct resclass {
  const char *name;
  size_t size;                                 /* of the whole object incl. struct resource */
  void (*free)(struct resource *);             /* release what the object holds */
  void (*dump)(struct resource *, int indent); /* debug dump to the log; may be NULL */
  /* May be NULL: size counts as overhead. If set, it must report size plus
   * whatever the module mem_account()ed for this object (in the owning
   * pool's class): rfree() and rmove() move exactly that out of the class
   * counters. */
  void (*memsize)(struct resource *, struct mem_usage *);
};

struct resource {
  struct lnode n;
  const struct resclass *class;
  pool *parent;
};

/* The root of all pools; created by resource_init(). */
pool *root_pool(void);
void resource_init(void);

pool *rp_new(pool *parent, enum mem_class cls, const char *name);
/* Same class as the parent. */
pool *rp_new_child(pool *parent, const char *name);
const char *rp_name(pool *p);
enum mem_class rp_class(pool *p);
/* Allocate a resource of class c (c->size bytes, zeroed) owned by p. */
void *ralloc(pool *p, const struct resclass *c);
/* Free a resource (for a pool: everything in it, then the pool). */
void rfree(void *res);
/* Move a resource to another pool (same loop). */
void rmove(void *res, pool *p);
/* Recursive memory usage of a pool. */
void rp_memsize(pool *p, struct mem_usage *u);
/* Debug dump of the tree under p to the log. */
void rdump(pool *p, int indent);

/* Memory blocks: malloc'd chunks owned by a pool. */
void *mb_alloc(pool *p, size_t size);
void *mb_allocz(pool *p, size_t size);
void *mb_realloc(void *m, size_t size);
void mb_free(void *m);
char *mb_strdup(pool *p, const char *s);

/* Linear pools: fast bump allocation, freed all at once (per-event scratch,
 * config parsing). */
linpool *lp_new(pool *p);
void *lp_alloc(linpool *lp, size_t size);   /* 8-byte aligned */
void *lp_allocz(linpool *lp, size_t size);
char *lp_strdup(linpool *lp, const char *s);
char *lp_sprintf(linpool *lp, const char *fmt, ...);
void lp_flush(linpool *lp);                 /* drop everything; chunks to the thread's cache */
size_t lp_used(const linpool *lp);          /* bytes handed out since the last flush */
/* Save/restore points for nested scratch use. */
struct lp_state { void *chunk; size_t used; };
void lp_save(linpool *lp, struct lp_state *s);
void lp_restore(linpool *lp, struct lp_state *s);

/* Slabs: fixed-size objects, constant-time alloc/free, pages of objects. */
slab *sl_new(pool *p, size_t size);
void *sl_alloc(slab *s);
void *sl_allocz(slab *s);
void sl_free(slab *s, void *obj);

/* Accounting for memory not owned by any pool (shared objects). */
void *mem_alloc_shared(enum mem_class cls, size_t size);
void mem_free_shared(enum mem_class cls, void *m, size_t size);
void mem_account(enum mem_class cls, s64 effective, s64 overhead);
void mem_class_usage(enum mem_class cls, struct mem_usage *u);
/* Whether the calling thread counts in a stripe of its own (plain adds);
 * it gets one at its first count if fewer than 64 threads hold one. */
int mem_stripe_mine(void);

#endif
