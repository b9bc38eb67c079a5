/*
 * DOC: prop.c - propagation mode: preparation and the receiver's side
 *
 * One peer (the sender) announces the route set through the DUT to one
 * monitor (the receiver), then withdraws it all.  Both sessions live in
 * this process, so their timestamps share one CLOCK_MONOTONIC.
 *
 * Preparation (before any socket opens) walks the sender's encoded stream
 * to learn which message carries each prefix, encodes the withdrawal
 * stream in the same prefix order, and derives from each of the sender's
 * attribute sets what the receiver must get: the same ORIGIN,
 * COMMUNITIES and LARGE_COMMUNITY (as sets: BIRD sorts them, which is
 * allowed), and the AS path with the DUT's ASN in front (--prop-dut-as)
 * or unchanged (a route server).  MED, NEXT_HOP and
 * the rest may legitimately change on the way and are not checked.
 *
 * The receiver (prop_rx_update, on the monitor's thread) stamps each
 * prefix the first time it is announced and the first time it is
 * withdrawn in the withdrawal phase, and counts what should not happen.
 * Owner of the per-prefix arrays: the receiver's thread; main reads them
 * only after the threads are joined.  The counters main polls are atomics.
 */
#include <stdlib.h>
#include <string.h>

#include "prop.h"

static bool mp_split(const uint8_t *d, size_t len, bool reach, struct prop_upd *u)
{
	struct cur c = { d, d + len, false };
	uint16_t afi = cur_u16(&c);
	uint8_t safi = cur_u8(&c);
	if (reach) {
		u->mp_nh_len = cur_u8(&c);
		u->mp_nh = cur_take(&c, u->mp_nh_len);
		cur_u8(&c); /* reserved */
	}
	if (c.err)
		return false;
	if (safi != 1 || (afi != AFI_IPV4 && afi != AFI_IPV6))
		return true; /* a family nobody asked for */
	*(reach ? &u->mp_reach : &u->mp_unreach) = c;
	*(reach ? &u->reach_af : &u->unreach_af) = (uint8_t)afi;
	return true;
}

bool prop_parse(const uint8_t *body, size_t len, struct prop_upd *u)
{
	struct cur attrs;
	memset(u, 0, sizeof(*u));
	if (!upd_split(body, len, &u->withdrawn, &attrs, &u->nlri))
		return false;
	return prop_attrs(attrs.p, (size_t)(attrs.end - attrs.p), u);
}

bool prop_attrs(const uint8_t *a, size_t alen, struct prop_upd *u)
{
	struct cur ac = { a, a + alen, false };
	while (ac.p < ac.end) {
		uint8_t flags = cur_u8(&ac), type = cur_u8(&ac);
		uint16_t l = flags & 0x10 ? cur_u16(&ac) : cur_u8(&ac);
		const uint8_t *d = cur_take(&ac, l);
		if (ac.err)
			return false;
		struct prop_attr pa = { d, l, true };
		switch (type) {
		case 1: u->origin = pa; break;
		case 2: u->path = pa; break;
		case 3: u->next_hop = pa; break;
		case 8: u->comm = pa; break;
		case 32: u->lcomm = pa; break;
		case 14:
		case 15:
			if (!mp_split(d, l, type == 14, u))
				return false;
			break;
		}
	}
	return true;
}

static int cmp_comm(const void *a, const void *b)
{
	return memcmp(a, b, 4);
}

static int cmp_lcomm(const void *a, const void *b)
{
	return memcmp(a, b, 12);
}

void prop_attr_sort(struct prop_attr *a, uint8_t *buf, size_t item)
{
	if (!a->present || a->len % item)
		return; /* malformed: compared as it is, and so reported */
	memcpy(buf, a->d, a->len);
	qsort(buf, a->len / item, item, item == 4 ? cmp_comm : cmp_lcomm);
	a->d = buf;
}

/* ---- preparation ---- */

/* The sender's AS path with asn in front: into the leading AS_SEQUENCE
 * when there is room, else as a segment of its own (RFC 4271 5.1.2). */
static void path_prepend(struct prop_expect *e, const struct prop_attr *path, uint32_t asn)
{
	size_t len = path->present ? path->len : 0;
	uint8_t *o = bb_alloc(len + 6);
	if (len >= 2 && path->d[0] == 2 && path->d[1] < 255) {
		o[0] = 2;
		o[1] = (uint8_t)(path->d[1] + 1);
		put_u32(o + 2, asn);
		memcpy(o + 6, path->d + 2, len - 2);
		e->path = (struct prop_attr){ o, (uint16_t)(len + 4), true };
	} else {
		o[0] = 2;
		o[1] = 1;
		put_u32(o + 2, asn);
		if (len)
			memcpy(o + 6, path->d, len);
		e->path = (struct prop_attr){ o, (uint16_t)(len + 6), true };
	}
	e->path_buf = o;
}

static void expect_of(const struct bb_config *cf, const struct attr_blob *a, struct prop_expect *e)
{
	/* points into the blob, which lives as long as the run */
	struct prop_upd u;
	memset(&u, 0, sizeof(u));
	if (!prop_attrs(a->data, a->len, &u))
		bb_die("propagate: cannot parse one of the sender's attribute sets");
	memset(e, 0, sizeof(*e));
	e->origin = u.origin;
	e->path = u.path;
	e->comm = u.comm;
	e->lcomm = u.lcomm;
	if (cf->prop_dut_asn_set)
		path_prepend(e, &e->path, cf->prop_dut_asn);
	e->comm_buf = bb_alloc(e->comm.len + e->lcomm.len + 1);
	prop_attr_sort(&e->comm, e->comm_buf, 4);
	prop_attr_sort(&e->lcomm, e->comm_buf + e->comm.len, 12);
}

/* Pool index of every prefix in an NLRI field, in order. */
static void nlri_indices(struct prop *p, struct cur c, uint8_t af, uint32_t msg, uint32_t **order,
			 uint64_t *n)
{
	while (c.p < c.end) {
		struct pfx x;
		if (!dec_nlri(&c, af, &x))
			bb_die("propagate: bad NLRI in our own stream");
		uint32_t i = pfx_set_get(&p->index, &x);
		if (i == UINT32_MAX)
			bb_die("propagate: our stream carries a prefix outside the pool");
		p->msg_of[i] = msg;
		(*order)[(*n)++] = i;
	}
}

/* Appends one UPDATE withdrawing the NLRI in d[0..len). */
static void wd_message(struct buf *b, uint8_t af, const uint8_t *d, size_t len)
{
	size_t total = BGP_HDR_LEN + 4 + len + (af == AFI_IPV4 ? 0 : 7);
	uint8_t *m = buf_grow(b, total);
	enc_header(m, (uint16_t)total, BGP_UPDATE);
	uint8_t *q = m + BGP_HDR_LEN;
	if (af == AFI_IPV4) { /* withdrawn routes, then no attributes */
		put_u16(q, (uint16_t)len);
		memcpy(q + 2, d, len);
		put_u16(q + 2 + len, 0);
		return;
	}
	put_u16(q, 0);
	put_u16(q + 2, (uint16_t)(len + 7));
	q[4] = 0x90; /* MP_UNREACH_NLRI: optional, extended length */
	q[5] = 15;
	put_u16(q + 6, (uint16_t)(len + 3));
	put_u16(q + 8, AFI_IPV6);
	q[10] = 1;
	memcpy(q + 11, d, len);
}

/* The withdrawal stream: every prefix in the order it was announced, IPv4
 * in the withdrawn-routes field, IPv6 in MP_UNREACH_NLRI, 4096 bytes max. */
static void enc_withdrawals(struct prop *p, const struct pfx *pool, const uint32_t *order, uint64_t n,
			    struct peer_tx *w)
{
	struct buf b = { 0 };
	uint8_t acc[BGP_MAX_LEN];
	memset(w, 0, sizeof(*w));
	for (uint8_t af = AFI_IPV4; af <= AFI_IPV6; af++) {
		size_t room = BGP_MAX_LEN - BGP_HDR_LEN - 4 - (af == AFI_IPV4 ? 0 : 7), len = 0;
		for (uint64_t k = 0; k < n; k++) {
			const struct pfx *x = &pool[order[k]];
			if (x->af != af)
				continue;
			if (len + 1 + pfx_bytes(x) > room) {
				wd_message(&b, af, acc, len);
				w->updates++;
				len = 0;
			}
			len += enc_nlri(acc + len, x);
			p->wmsg_of[order[k]] = w->updates;
			w->routes++;
		}
		if (len) {
			wd_message(&b, af, acc, len);
			w->updates++;
		}
	}
	w->buf = b.d;
	w->len = b.len;
}

void prop_prepare(struct bb *bb, const struct bb_ribs *r)
{
	struct prop *p = bb_alloc(sizeof(*p));
	memset(p, 0, sizeof(*p));
	p->bb = bb;
	p->n = r->npool;
	pfx_set_init(&p->index, p->n, bb->cf.seed ^ 0x70726f70ULL); /* "prop" */
	for (uint64_t i = 0; i < p->n; i++) {
		bool added;
		pfx_set_add(&p->index, &r->pool[i], (uint32_t)i, &added);
	}

	/* expected attributes: the sender's sets, in the sender's order */
	const struct peer_rib *pr = &r->peer[0];
	p->nexp = pr->nattrs;
	p->exp = bb_alloc((p->nexp + 1) * sizeof(*p->exp));
	for (uint32_t a = 0; a < pr->nattrs; a++)
		expect_of(&bb->cf, &pr->attrs[a], &p->exp[a]);
	p->exp_of = bb_alloc((p->n + 1) * sizeof(*p->exp_of));
	for (uint64_t k = 0; k < pr->nroutes; k++)
		p->exp_of[pr->routes[k].pfx] = pr->routes[k].attr;

	/* which message carries each prefix, and the announcement order */
	struct peer_tx *tx = &bb->tx[0];
	p->msg_of = bb_alloc((p->n + 1) * sizeof(*p->msg_of));
	p->wmsg_of = bb_alloc((p->n + 1) * sizeof(*p->wmsg_of));
	uint32_t *order = bb_alloc((p->n + 1) * sizeof(*order));
	uint64_t norder = 0;
	uint32_t msg = 0;
	for (size_t off = 0; off < tx->len; msg++) {
		uint16_t len = get_u16(tx->buf + off + 16);
		struct prop_upd u;
		if (!prop_parse(tx->buf + off + BGP_HDR_LEN, len - BGP_HDR_LEN, &u))
			bb_die("propagate: cannot parse our own UPDATE");
		nlri_indices(p, u.nlri, AFI_IPV4, msg, &order, &norder);
		if (u.reach_af)
			nlri_indices(p, u.mp_reach, u.reach_af, msg, &order, &norder);
		off += len;
	}
	if (norder != p->n)
		bb_die("propagate: the sender announces %llu of %llu prefixes", (unsigned long long)norder,
		       (unsigned long long)p->n);
	tx->msg_t = bb_alloc(msg * sizeof(*tx->msg_t));
	memset(tx->msg_t, 0, msg * sizeof(*tx->msg_t));

	bb->wtx = bb_alloc(sizeof(*bb->wtx));
	enc_withdrawals(p, r->pool, order, norder, bb->wtx);
	bb->wtx->msg_t = bb_alloc((bb->wtx->updates + 1) * sizeof(*bb->wtx->msg_t));
	memset(bb->wtx->msg_t, 0, (bb->wtx->updates + 1) * sizeof(*bb->wtx->msg_t));
	free(order);

	p->t_rx = bb_alloc(p->n * sizeof(*p->t_rx));
	p->t_wd = bb_alloc(p->n * sizeof(*p->t_wd));
	p->state = bb_alloc(p->n);
	memset(p->t_rx, 0, p->n * sizeof(*p->t_rx));
	memset(p->t_wd, 0, p->n * sizeof(*p->t_wd));
	memset(p->state, 0, p->n);
	bb->prop = p;
}
