/*
 * DOC: prop_rx.c - propagation mode: what the receiver makes of an UPDATE
 *
 * Runs on the receiver's (monitor's) thread, which owns the per-prefix
 * arrays of struct prop.  t is when the read() that completed the message
 * returned.  A prefix is stamped the first time it is announced (t_rx) and
 * the first time it is withdrawn after main asked for the withdrawals
 * (t_wd); its attributes are checked against the sender's set the first
 * time it arrives.  Everything else that should not happen is counted:
 * prefixes nobody sent, announcements of a prefix already held, and
 * withdrawals before the withdrawal phase.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "prop.h"

static bool attr_eq(const struct prop_attr *a, const struct prop_attr *b)
{
	return a->present == b->present && a->len == b->len && (!a->len || !memcmp(a->d, b->d, a->len));
}

static void hex(char *out, size_t cap, const struct prop_attr *a)
{
	size_t n = 0;
	out[0] = 0;
	if (!a->present) {
		snprintf(out, cap, "absent");
		return;
	}
	for (uint16_t i = 0; i < a->len && n + 3 < cap; i++)
		n += (size_t)snprintf(out + n, cap - n, "%02x", a->d[i]);
}

static void check_attrs(struct prop *p, uint32_t i, const struct prop_upd *u)
{
	const struct prop_expect *e = &p->exp[p->exp_of[i]];
	const struct prop_attr *got[] = { &u->origin, &u->path, &u->comm, &u->lcomm };
	const struct prop_attr *want[] = { &e->origin, &e->path, &e->comm, &e->lcomm };
	uint64_t *bad[] = { &p->bad_origin, &p->bad_path, &p->bad_comm, &p->bad_lcomm };
	static const char *const name[] = { "origin", "as_path", "communities", "large_communities" };
	p->checked++;
	for (size_t k = 0; k < ARRAY_SIZE(got); k++) {
		if (attr_eq(got[k], want[k]))
			continue;
		if (!p->bad_first[0]) {
			char g[64], w[64];
			hex(g, sizeof(g), got[k]);
			hex(w, sizeof(w), want[k]);
			snprintf(p->bad_first, sizeof(p->bad_first), "%s got=%s want=%s", name[k], g, w);
			bb_event("event=attr_mismatch %s", p->bad_first);
		}
		(*bad[k])++;
	}
}

static void note_next_hop(struct prop *p, const struct prop_upd *u, uint8_t af)
{
	if (p->next_hop[0])
		return;
	if (af == AFI_IPV4 && u->next_hop.present && u->next_hop.len == 4)
		inet_ntop(AF_INET, u->next_hop.d, p->next_hop, sizeof(p->next_hop));
	else if (af == AFI_IPV6 && u->mp_nh && u->mp_nh_len >= 16)
		inet_ntop(AF_INET6, u->mp_nh, p->next_hop, sizeof(p->next_hop));
}

static bool rx_announce(struct prop *p, struct cur c, uint8_t af, const struct prop_upd *u, double t)
{
	while (c.p < c.end) {
		struct pfx x;
		if (!dec_nlri(&c, af, &x))
			return false;
		uint32_t i = pfx_set_get(&p->index, &x);
		if (i == UINT32_MAX) {
			p->unexpected++;
			continue;
		}
		if (p->state[i] & PS_HELD) {
			p->duplicates++; /* an implicit replace: only the first one counts */
			continue;
		}
		p->state[i] |= PS_HELD;
		atomic_fetch_add(&p->held, 1);
		if (p->state[i] & PS_SEEN)
			continue;
		p->state[i] |= PS_SEEN;
		p->t_rx[i] = t;
		note_next_hop(p, u, af);
		check_attrs(p, i, u);
		atomic_fetch_add(&p->received, 1);
	}
	return true;
}

static bool rx_withdraw(struct prop *p, struct cur c, uint8_t af, double t)
{
	bool phase = atomic_load(&p->t_wd_go) > 0;
	while (c.p < c.end) {
		struct pfx x;
		if (!dec_nlri(&c, af, &x))
			return false;
		uint32_t i = pfx_set_get(&p->index, &x);
		if (i == UINT32_MAX || !(p->state[i] & PS_HELD))
			continue; /* withdrawing what one never announced is allowed */
		p->state[i] &= (uint8_t)~PS_HELD;
		atomic_fetch_sub(&p->held, 1);
		if (!phase) {
			p->early_wd++;
			continue;
		}
		if (!(p->state[i] & PS_WD)) {
			p->state[i] |= PS_WD;
			p->t_wd[i] = t;
		}
	}
	return true;
}

bool prop_rx_update(struct prop *p, const uint8_t *body, size_t len, double t)
{
	struct prop_upd u;
	uint8_t comm[BGP_MAX_LEN], lcomm[BGP_MAX_LEN];
	if (!prop_parse(body, len, &u))
		return false;
	prop_attr_sort(&u.comm, comm, 4);
	prop_attr_sort(&u.lcomm, lcomm, 12);
	p->updates_rx++;
	atomic_store(&p->t_last, t);
	if (!rx_withdraw(p, u.withdrawn, AFI_IPV4, t))
		return false;
	if (u.unreach_af && !rx_withdraw(p, u.mp_unreach, u.unreach_af, t))
		return false;
	if (!rx_announce(p, u.nlri, AFI_IPV4, &u, t))
		return false;
	if (u.reach_af && !rx_announce(p, u.mp_reach, u.reach_af, &u, t))
		return false;
	return true;
}
