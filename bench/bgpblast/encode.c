/*
 * DOC: encode.c - BGP message encoding
 *
 * enc_peer_updates() turns one peer's routes into the exact byte stream the
 * peer will write: routes are bucketed by attribute set (counting sort),
 * then each set is packed into UPDATEs of at most 4096 bytes, IPv4 in the
 * NLRI field with a NEXT_HOP, IPv6 inside MP_REACH_NLRI.  The stream ends
 * with the End-of-RIB marker of each family.  Attributes are kept in
 * ascending type order, as RFC 4271 asks of a sender.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bgpblast.h"

void enc_header(uint8_t *p, uint16_t len, uint8_t type)
{
	memset(p, 0xff, 16);
	put_u16(p + 16, len);
	p[18] = type;
}

size_t enc_open(uint8_t *p, uint32_t asn, unsigned hold, uint32_t id, bool ipv6, bool err)
{
	uint8_t *q = p + BGP_HDR_LEN;
	*q++ = 4;
	put_u16(q, asn > 0xffff ? AS_TRANS : (uint16_t)asn);
	put_u16(q + 2, (uint16_t)hold);
	put_u32(q + 4, id);
	q += 8;
	uint8_t *optlen = q++;
	*q++ = 2; /* capabilities */
	uint8_t *caplen = q++;
	uint8_t *caps = q;
	for (int afi = AFI_IPV4; afi <= (ipv6 ? AFI_IPV6 : AFI_IPV4); afi++) {
		*q++ = 1; /* multiprotocol: afi, reserved, safi unicast */
		*q++ = 4;
		put_u16(q, (uint16_t)afi);
		q[2] = 0;
		q[3] = 1;
		q += 4;
	}
	*q++ = 2; /* route refresh */
	*q++ = 0;
	if (err) {
		*q++ = 70; /* enhanced route refresh */
		*q++ = 0;
	}
	*q++ = 65; /* 4-byte ASN */
	*q++ = 4;
	put_u32(q, asn);
	q += 4;
	*caplen = (uint8_t)(q - caps);
	*optlen = (uint8_t)(q - optlen - 1);
	size_t len = (size_t)(q - p);
	enc_header(p, (uint16_t)len, BGP_OPEN);
	return len;
}

size_t enc_keepalive(uint8_t *p)
{
	enc_header(p, BGP_HDR_LEN, BGP_KEEPALIVE);
	return BGP_HDR_LEN;
}

size_t enc_notification(uint8_t *p, uint8_t code, uint8_t sub)
{
	enc_header(p, BGP_HDR_LEN + 2, BGP_NOTIFICATION);
	p[BGP_HDR_LEN] = code;
	p[BGP_HDR_LEN + 1] = sub;
	return BGP_HDR_LEN + 2;
}

bool dec_nlri(struct cur *c, uint8_t af, struct pfx *out)
{
	uint8_t len = cur_u8(c);
	unsigned max = af == AFI_IPV4 ? 32 : 128;
	if (c->err || len > max)
		return false;
	memset(out, 0, sizeof(*out));
	out->af = af;
	out->len = len;
	size_t n = pfx_bytes(out);
	const uint8_t *a = cur_take(c, n);
	if (!a)
		return false;
	memcpy(out->addr, a, n);
	if (len % 8) /* bits past the length are ignored (RFC 4271 4.3) */
		out->addr[n - 1] &= (uint8_t)(0xff00 >> (len % 8));
	return true;
}

size_t enc_attr_split(const struct attr_blob *a, uint8_t t)
{
	struct cur c = { a->data, a->data + a->len, false };
	while (c.p < c.end) {
		const uint8_t *at = c.p;
		uint8_t flags = cur_u8(&c), type = cur_u8(&c);
		size_t len = flags & 0x10 ? cur_u16(&c) : cur_u8(&c);
		if (c.err || type > t)
			return (size_t)(at - a->data);
		cur_take(&c, len);
	}
	return a->len;
}

/* Starts an UPDATE with attributes blob[0..split) extra blob[split..). */
static uint8_t *upd_start(struct buf *b, const struct attr_blob *a, size_t split,
			  const uint8_t *extra, size_t elen)
{
	size_t alen = a->len + elen;
	uint8_t *m = buf_grow(b, BGP_HDR_LEN + 4 + alen);
	put_u16(m + BGP_HDR_LEN, 0);
	put_u16(m + BGP_HDR_LEN + 2, (uint16_t)alen);
	uint8_t *q = m + BGP_HDR_LEN + 4;
	memcpy(q, a->data, split);
	memcpy(q + split, extra, elen);
	memcpy(q + split + elen, a->data + split, a->len - split);
	return m;
}

static void upd_finish(struct buf *b, size_t start, struct peer_tx *tx)
{
	enc_header(b->d + start, (uint16_t)(b->len - start), BGP_UPDATE);
	tx->updates++;
}

static void pack_v4(struct buf *b, const struct attr_blob *a, const struct pfx *pool,
		    const uint32_t *idx, size_t n, uint32_t nh, struct peer_tx *tx)
{
	uint8_t nhattr[7] = { 0x40, 3, 4 };
	put_u32(nhattr + 3, nh);
	size_t split = enc_attr_split(a, 3), i = 0;
	if (BGP_HDR_LEN + 4 + a->len + 7 + 5 > BGP_MAX_LEN)
		bb_die("attribute set of %u bytes leaves no room for NLRI", a->len);
	while (i < n) {
		size_t start = b->len;
		upd_start(b, a, split, nhattr, sizeof(nhattr));
		while (i < n && b->len - start + 1 + pfx_bytes(&pool[idx[i]]) <= BGP_MAX_LEN) {
			uint8_t *d = buf_grow(b, 1 + pfx_bytes(&pool[idx[i]]));
			enc_nlri(d, &pool[idx[i]]);
			i++;
		}
		upd_finish(b, start, tx);
	}
}

static void pack_v6(struct buf *b, const struct attr_blob *a, const struct pfx *pool,
		    const uint32_t *idx, size_t n, uint32_t nh, struct peer_tx *tx)
{
	size_t split = enc_attr_split(a, 14), i = 0;
	size_t fixed = BGP_HDR_LEN + 4 + a->len + 4 + 21;
	if (fixed + 17 > BGP_MAX_LEN)
		bb_die("attribute set of %u bytes leaves no room for NLRI", a->len);
	uint8_t mp[BGP_MAX_LEN];
	while (i < n) {
		/* MP_REACH_NLRI: afi 2, safi 1, next hop fd00::<peer address> */
		size_t ml = 4, room = BGP_MAX_LEN - fixed;
		put_u16(mp + ml, AFI_IPV6);
		mp[ml + 2] = 1;
		mp[ml + 3] = 16;
		nh6_of(nh, mp + ml + 4);
		mp[ml + 20] = 0;
		ml += 21;
		while (i < n && 1 + pfx_bytes(&pool[idx[i]]) <= room) {
			size_t k = enc_nlri(mp + ml, &pool[idx[i]]);
			ml += k;
			room -= k;
			i++;
		}
		mp[0] = 0x90; /* optional, extended length */
		mp[1] = 14;
		put_u16(mp + 2, (uint16_t)(ml - 4));
		size_t start = b->len;
		upd_start(b, a, split, mp, ml);
		upd_finish(b, start, tx);
	}
}

void enc_peer_updates(const struct bb_ribs *r, unsigned peer, uint32_t nh, bool ipv6,
		      struct peer_tx *tx)
{
	const struct peer_rib *pr = &r->peer[peer];
	struct buf b = { 0 };
	memset(tx, 0, sizeof(*tx));

	/* counting sort of route indices by attribute set */
	uint64_t *start = bb_alloc((pr->nattrs + 1) * sizeof(*start));
	memset(start, 0, (pr->nattrs + 1) * sizeof(*start));
	for (uint64_t i = 0; i < pr->nroutes; i++)
		start[pr->routes[i].attr + 1]++;
	for (uint32_t a = 0; a < pr->nattrs; a++)
		start[a + 1] += start[a];
	uint32_t *v4 = bb_alloc((pr->nroutes + 1) * sizeof(*v4));
	uint32_t *v6 = bb_alloc((pr->nroutes + 1) * sizeof(*v6));
	uint32_t *order = bb_alloc((pr->nroutes + 1) * sizeof(*order));
	uint64_t *fill = bb_alloc((pr->nattrs + 1) * sizeof(*fill));
	memcpy(fill, start, (pr->nattrs + 1) * sizeof(*fill));
	for (uint64_t i = 0; i < pr->nroutes; i++)
		order[fill[pr->routes[i].attr]++] = pr->routes[i].pfx;

	for (uint32_t a = 0; a < pr->nattrs; a++) {
		size_t n4 = 0, n6 = 0;
		for (uint64_t i = start[a]; i < start[a + 1]; i++) {
			if (r->pool[order[i]].af == AFI_IPV4)
				v4[n4++] = order[i];
			else
				v6[n6++] = order[i];
		}
		if (n6 && !ipv6)
			bb_die("IPv6 routes but IPv6 not enabled");
		pack_v4(&b, &pr->attrs[a], r->pool, v4, n4, nh, tx);
		pack_v6(&b, &pr->attrs[a], r->pool, v6, n6, nh, tx);
		tx->routes += n4 + n6;
	}

	/* End-of-RIB (RFC 4724): empty UPDATE; for IPv6 an empty MP_UNREACH */
	uint8_t *e = buf_grow(&b, BGP_HDR_LEN + 4);
	enc_header(e, BGP_HDR_LEN + 4, BGP_UPDATE);
	memset(e + BGP_HDR_LEN, 0, 4);
	if (ipv6) {
		static const uint8_t unreach[] = { 0, 0, 0, 6, 0x80, 15, 3, 0, AFI_IPV6, 1 };
		e = buf_grow(&b, BGP_HDR_LEN + sizeof(unreach));
		enc_header(e, BGP_HDR_LEN + sizeof(unreach), BGP_UPDATE);
		memcpy(e + BGP_HDR_LEN, unreach, sizeof(unreach));
	}
	tx->buf = b.d;
	tx->len = b.len;
	free(start);
	free(fill);
	free(order);
	free(v4);
	free(v6);
}
