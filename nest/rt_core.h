/*
 * What the table core's own files share (nest/rt_table.c writes routes
 * and the journal, nest/rt_cleanup.c frees what every reader passed):
 * not for channels or protocols, which see nest/rt.h only.
 */
#ifndef NEST_RT_CORE_H
#define NEST_RT_CORE_H

#include "nest/rt.h"

/* nest/rt_table.c: a route's or net's memory, back to its slab, and a
 * journal block's to its pool; after a grace period, nobody reads them. */
void rte_free(struct rte *r);
void net_free(struct net *n);
void rt_journal_block_free(struct rt_journal_block *b);

/* Drop what a retired route holds (its id, attributes, source). Its
 * memory goes later, with its journal block, after an RCU grace period:
 * readers may still look at it. Under the writer lock. */
void rte_release(struct rtable *t, struct rte *r);

/* A route's id back to the table's map, under the writer lock (the map is
 * the writers', nest/rt_table.c). */
static inline void
rt_id_free(struct rtable *t, u32 id)
{
  t->id_map[id / 32] &= ~(1U << (id % 32));
}

/* nest/rt_cleanup.c: after a writer's batch, in a read section, a trim of
 * the journal when the cleanup the table asked its loop for is late. */
void rt_journal_trim_due(struct rtable *t);

#endif
