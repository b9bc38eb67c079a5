/*
 * A table's prefix trie (the `trie` table option): the prefixes of the
 * table's nets in a path-compressed binary trie, so that `show route in
 * PREFIX` finds the nets inside a prefix by walking its subtree, in
 * address order, instead of walking the whole table. IP tables only
 * (ipv4, ipv6): ROA tables key many nets by one prefix.
 *
 * Owner: the table's writers, under its writer lock (rt_net_link and
 * rt_net_unlink add and remove a net's prefix with the net). Readers walk
 * it without a lock in RCU read sections: nodes are published whole and
 * freed a grace period after they were unlinked.
 */
#ifndef NEST_RT_TRIE_H
#define NEST_RT_TRIE_H

#include "lib/net.h"

struct rt_trie;

/* net_type: NET_IP4 or NET_IP6. Its nodes count as table memory. */
struct rt_trie *rt_trie_new(uint net_type);
/* No reader may be left; the nodes go at once. */
void rt_trie_free(struct rt_trie *t);

/* Under the table's writer lock: a net with prefix n came, or went. */
void rt_trie_add(struct rt_trie *t, const net_addr *n);
void rt_trie_remove(struct rt_trie *t, const net_addr *n);

/* In an RCU read section: the next prefixes within `in` (the prefix
 * itself included), in address order (net_compare: a prefix before those
 * inside it), after `after` (NULL: from the first). Up to max of them
 * into out; how many. A walk in steps passes its last prefix as the next
 * step's after: prefixes added or removed meanwhile may or may not be
 * seen, none twice, the rest in order. */
uint rt_trie_walk(const struct rt_trie *t, const net_addr *in, const net_addr *after, net_addr *out, uint max);

/* Prefixes held; nodes held (prefixes and the branch points between). */
u32 rt_trie_prefixes(const struct rt_trie *t);
u32 rt_trie_nodes(const struct rt_trie *t);

#endif
