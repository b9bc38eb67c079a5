/*
 * A walk's changes to the routes of one channel (a flush's withdrawals,
 * a refresh cycle's withdrawals and replacements, a joined flush's part
 * for one channel), applied in batches (rt_update_batch), and what they
 * did. Shared by the walks of nest/rt_walk.c and nest/rt_flush.c.
 *
 * Ownership: a batch belongs to the loop that walks (on its stack, or in
 * a flush join under the table's flush_lock); im is the owner's storage
 * of cap entries.
 */
#ifndef NEST_RT_WALK_H
#define NEST_RT_WALK_H

#include "nest/rt.h"

struct rt_walk_batch {
  struct channel *c;
  u16 sid;
  uint k, cap;
  uint count, removed, modified, filt_removed;  /* summed over applies */
  struct rt_import *im;
};

/* Applies the k changes held (k is 0 again) and adds up their results.
 * The batch's references to replacement attributes are dropped. */
void rt_walk_batch_apply(struct rtable *t, struct rt_walk_batch *b);
/* Holds im, applying the batch first when full: call it only where
 * changing the routes of the nets walked so far cannot disturb the
 * caller. */
void rt_walk_batch_add(struct rtable *t, struct rt_walk_batch *b, struct rt_import im);

#endif
