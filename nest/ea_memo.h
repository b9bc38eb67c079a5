/*
 * DOC: Per-thread memos of attribute-list transformations.
 *
 * Some work on routes is a pure function of the route's interned
 * attribute list and a few other values: what a BGP session exports for a
 * route (its export profile), what a filter's edits with constants make
 * of a route's attributes (the edits it ran). A route server meets the same
 * few thousand attribute sets over and over: an UPDATE's prefixes share
 * one, and every peer is sent the same ones. A memo keyed by (list, key
 * bytes) gives the result of the first computation to the later ones
 * without redoing it and without interning the result again.
 *
 * Each thread has its own memo of each kind: no locks, and its size is
 * bounded by the threads, not by the peers. Four-way buckets; a new entry
 * replaces the oldest one of its bucket, and a memo whose working set
 * does not fit doubles (up to a bound). Entries hold references on the
 * source list and on the result (and a stock of result references to give
 * out, ea_memo_take()); they go when replaced and when the
 * thread leaves RCU (rcu_thread_unregister), so only RCU threads may use
 * a memo.
 */
#ifndef NEST_EA_MEMO_H
#define NEST_EA_MEMO_H

#include "nest/rt_attr.h"

enum ea_memo_kind {
  EA_MEMO_BGP_EXPORT,           /* proto/bgp/bgp_export_cache.c */
  EA_MEMO_FILTER,               /* filter/interp_attr.c: a run's edits (EA_EDIT) */
  EA_MEMO_VERDICT,              /* filter/verdict_memo.c: a pure filter's verdict */
  EA_MEMO_KINDS,
};

/* Bytes of key besides the source list, per kind: an entry of 24 bytes
 * and a key of up to 40 is one cache line. */
#define EA_MEMO_KEY_MAX 40
#define EA_MEMO_BGP_EXPORT_KEY 24
#define EA_MEMO_VERDICT_KEY 16

struct ea_memo_key {
  const struct ea_list *src;
  u32 hash;                     /* of src and bytes, from the caller (it may have a cheaper one) */
  u32 len;                      /* a multiple of 8, at most the kind's maximum */
  const void *bytes;            /* 8-byte aligned; compared exactly */
};

/* The remembered result for k in *out (NULL is a result too); 0: none.
 * Borrowed: valid until this thread's next ea_memo_put() of that kind. */
int ea_memo_get(enum ea_memo_kind kind, const struct ea_memo_key *k, struct ea_list **out);

/* As ea_memo_get(), but a found result comes with a reference for the
 * caller. The entry keeps a stock of references it took in one add, so a
 * hit does not touch the result's use count (a line other threads write,
 * cold when a route server meets thousands of sets in turn). */
int ea_memo_take(enum ea_memo_kind kind, const struct ea_memo_key *k, struct ea_list **out);

/* Start loading the bucket of a key with this hash: a caller that knows
 * the hash well before it looks (a filter run) hides the cache miss. */
void ea_memo_prefetch(enum ea_memo_kind kind, u32 hash);

/* Forget everything this thread's memos remember (their references go). */
void ea_memo_flush(void);

/* Remember out for k. The memo takes a reference on k->src and takes
 * over the caller's reference on out (if not NULL). */
void ea_memo_put(enum ea_memo_kind kind, const struct ea_memo_key *k, struct ea_list *out);

#endif
