/*
 * DOC: pfxset.c - open-addressing prefix set
 *
 * Linear probing with backward-shift deletion, so a monitor that sees
 * millions of announce/withdraw pairs never fills up with tombstones.
 * The table doubles at 50% load.  Owner: whoever holds the struct (the
 * generator at start-up, or exactly one monitor session); no locking.
 */
#include <stdlib.h>
#include <string.h>

#include "bgpblast.h"

static uint64_t pfx_hash(const struct pfx_set *s, const struct pfx *p)
{
	uint64_t a, b;
	memcpy(&a, p->addr, 8);
	memcpy(&b, p->addr + 8, 8);
	return hash_mix(a ^ s->seed ^ hash_mix(b ^ ((uint64_t)p->len << 8 | p->af)));
}

static bool pfx_eq(const struct pfx *a, const struct pfx *b)
{
	return a->af == b->af && a->len == b->len && !memcmp(a->addr, b->addr, 16);
}

void pfx_set_init(struct pfx_set *s, uint64_t expect, uint64_t seed)
{
	uint64_t cap = 1024;
	while (cap < expect * 2)
		cap *= 2;
	s->slot = bb_alloc(cap * sizeof(*s->slot));
	memset(s->slot, 0, cap * sizeof(*s->slot));
	s->mask = cap - 1;
	s->n = 0;
	s->seed = seed;
}

void pfx_set_free(struct pfx_set *s)
{
	free(s->slot);
	memset(s, 0, sizeof(*s));
}

static void pfx_set_resize(struct pfx_set *s)
{
	struct pfx_set old = *s;
	pfx_set_init(s, (old.mask + 1), old.seed);
	for (uint64_t i = 0; i <= old.mask; i++) {
		if (!old.slot[i].k.af)
			continue;
		uint64_t h = pfx_hash(s, &old.slot[i].k) & s->mask;
		while (s->slot[h].k.af)
			h = (h + 1) & s->mask;
		s->slot[h] = old.slot[i];
		s->n++;
	}
	pfx_set_free(&old);
}

uint32_t pfx_set_add(struct pfx_set *s, const struct pfx *p, uint32_t val, bool *added)
{
	if ((s->n + 1) * 2 > s->mask + 1)
		pfx_set_resize(s);
	uint64_t h = pfx_hash(s, p) & s->mask;
	while (s->slot[h].k.af) {
		if (pfx_eq(&s->slot[h].k, p)) {
			*added = false;
			return s->slot[h].val;
		}
		h = (h + 1) & s->mask;
	}
	s->slot[h].k = *p;
	s->slot[h].val = val;
	s->n++;
	*added = true;
	return val;
}

bool pfx_set_del(struct pfx_set *s, const struct pfx *p)
{
	uint64_t h = pfx_hash(s, p) & s->mask;
	while (s->slot[h].k.af) {
		if (pfx_eq(&s->slot[h].k, p))
			break;
		h = (h + 1) & s->mask;
	}
	if (!s->slot[h].k.af)
		return false;
	/* backward shift: pull later entries of the run into the hole */
	uint64_t hole = h, j = h;
	for (;;) {
		j = (j + 1) & s->mask;
		if (!s->slot[j].k.af)
			break;
		uint64_t home = pfx_hash(s, &s->slot[j].k) & s->mask;
		/* move j into hole unless its home lies cyclically in (hole, j] */
		bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
		if (stays)
			continue;
		s->slot[hole] = s->slot[j];
		hole = j;
	}
	s->slot[hole].k.af = 0;
	s->n--;
	return true;
}

uint32_t pfx_set_get(const struct pfx_set *s, const struct pfx *p)
{
	uint64_t h = pfx_hash(s, p) & s->mask;
	while (s->slot[h].k.af) {
		if (pfx_eq(&s->slot[h].k, p))
			return s->slot[h].val;
		h = (h + 1) & s->mask;
	}
	return UINT32_MAX;
}
