/*
 * DOC: Shared slabs: fixed-size objects allocated and freed from any thread.
 *
 * Routes and networks are the bulk of a full table (millions of each) and
 * are allocated in import loops but freed by the RCU callback thread. From
 * malloc they paid an 8-byte header each, rounding to 16 bytes, and the
 * fragmentation of a dozen per-thread arenas. A shared slab carves objects
 * of one size out of large mapped chunks; each thread keeps a small cache
 * of free objects per slab (a magazine) and trades whole batches with the
 * slab under its mutex, so the common alloc/free touches no shared line.
 *
 * Freed slots are reused before fresh pages are touched. A page whose
 * objects have all been freed, as after a peer's mass withdrawal, is given
 * back to the system by shslab_trim(). Pages wait for a trim rather than
 * going at once so that a table churning near a page's bound does not
 * release and fault in the same page over and over; the daemon trims from
 * its main loop's memory timer.
 *
 * Under AddressSanitizer or ThreadSanitizer every object comes from malloc
 * instead, so use-after-free, leaks and races stay visible to them.
 *
 * A slab lives for the whole process; a thread that did not create it
 * must learn of it through some synchronization (pthread_once, a lock).
 * At most 16 exist.
 */
#ifndef LIB_SLAB_SHARED_H
#define LIB_SLAB_SHARED_H

#include "lib/resource.h"

struct shslab;

/* Objects of size bytes (rounded up to 8), accounted in cls. */
struct shslab *shslab_new(enum mem_class cls, size_t size);
void *shslab_alloc(struct shslab *s);        /* not zeroed */
void shslab_free(struct shslab *s, void *obj);
size_t shslab_size(const struct shslab *s);  /* object size as rounded */

/* Give the pages that emptied back once the free slots on resident pages
 * exceed keep bytes (below that the next routes would soon fault them in
 * again); a bounded number of chunks per call, so the slab's lock is held
 * briefly. Bytes given back. From any thread. */
size_t shslab_trim(struct shslab *s, size_t keep);
/* Every slab, keeping a few megabytes each: the daemon's memory timer. */
size_t shslab_trim_all(void);

#endif
