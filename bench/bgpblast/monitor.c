/*
 * DOC: monitor.c - what a monitor (or the sink) makes of an UPDATE
 *
 * Walks withdrawn routes, the path attributes (only MP_REACH_NLRI and
 * MP_UNREACH_NLRI matter here) and the NLRI field through a bounds-checked
 * cursor.  ADD-PATH is never negotiated, so every NLRI is plain
 * <length, prefix>.  With a set, announcements are added and withdrawals
 * removed, so set->n is the number of prefixes the monitor holds now.
 * Without one (the sink) it only counts, which costs a few ns per prefix.
 */
#include <string.h>

#include "bgpblast.h"

static bool nlri_walk(struct cur *c, uint8_t af, struct pfx_set *set, bool announce,
		      uint64_t *count)
{
	while (c->p < c->end) {
		if (!set) { /* counting only: skip the bytes */
			uint8_t len = cur_u8(c);
			if (len > (af == AFI_IPV4 ? 32 : 128) || !cur_take(c, (len + 7u) / 8u))
				return false;
			(*count)++;
			continue;
		}
		struct pfx p;
		if (!dec_nlri(c, af, &p))
			return false;
		(*count)++;
		if (announce) {
			bool added;
			pfx_set_add(set, &p, 0, &added);
		} else {
			pfx_set_del(set, &p);
		}
	}
	return !c->err;
}

static bool mp_attr(const uint8_t *d, size_t len, bool reach, struct pfx_set *set,
		    struct update_count *uc)
{
	struct cur c = { d, d + len, false };
	uint16_t afi = cur_u16(&c);
	uint8_t safi = cur_u8(&c);
	if (reach) {
		uint8_t nhlen = cur_u8(&c);
		cur_take(&c, nhlen);
		cur_u8(&c); /* reserved */
	}
	if (c.err)
		return false;
	if (safi != 1 || (afi != AFI_IPV4 && afi != AFI_IPV6))
		return true; /* a family we did not ask for: ignore */
	if (!reach && c.p == c.end)
		uc->eor = true;
	return nlri_walk(&c, (uint8_t)afi, set, reach, reach ? &uc->announced : &uc->withdrawn);
}

bool mon_update(const uint8_t *body, size_t len, struct pfx_set *set, struct update_count *uc)
{
	struct cur wc, ac, c;
	memset(uc, 0, sizeof(*uc));
	if (!upd_split(body, len, &wc, &ac, &c))
		return false;
	if (!nlri_walk(&wc, AFI_IPV4, set, false, &uc->withdrawn))
		return false;

	unsigned nattrs = 0;
	while (ac.p < ac.end) {
		uint8_t flags = cur_u8(&ac), type = cur_u8(&ac);
		size_t l = flags & 0x10 ? cur_u16(&ac) : cur_u8(&ac);
		const uint8_t *d = cur_take(&ac, l);
		if (ac.err)
			return false;
		nattrs++;
		if ((type == 14 || type == 15) && !mp_attr(d, l, type == 14, set, uc))
			return false;
	}
	if (uc->eor && nattrs != 1)
		uc->eor = false; /* an MP_UNREACH next to other attributes is no EoR */

	if (!nlri_walk(&c, AFI_IPV4, set, true, &uc->announced))
		return false;
	if (len == 4) /* no withdrawn routes, no attributes: End-of-RIB */
		uc->eor = true;
	return true;
}
