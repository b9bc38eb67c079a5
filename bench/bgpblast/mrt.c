/*
 * DOC: mrt.c - MRT TABLE_DUMP_V2 (RFC 6396) reading and writing
 *
 * Reading: PEER_INDEX_TABLE, then RIB_IPV4_UNICAST / RIB_IPV6_UNICAST
 * records (and their RFC 8050 ADD-PATH variants, path id dropped).  MRT
 * peer k is played by our peer k % N.  A route's attributes are rewritten
 * the way a real peer would send them to a route server: our peer's ASN
 * leads the AS path (prepended unless it already does), NEXT_HOP and
 * MP_REACH are replaced by the peer's own address (encode.c adds them),
 * iBGP-only and AS4_* attributes are dropped, the rest is kept verbatim
 * and sorted by type.  Identical attribute sets of a peer are interned so
 * UPDATEs pack as many prefixes as the real table allows.  Other record
 * types are skipped and counted.  Files must be uncompressed.
 *
 * Writing: the route set as a collector would dump it: one PEER_INDEX_TABLE
 * naming our peers (address, ASN), then one RIB record per prefix with an
 * entry per peer announcing it.  `bgpdump -m` reads the result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bgpblast.h"

#define MRT_TABLE_DUMP_V2 13
#define MRT_PEER_INDEX 1
#define MRT_RIB_IPV4 2
#define MRT_RIB_IPV6 4
#define MRT_RIB_IPV4_AP 8
#define MRT_RIB_IPV6_AP 10
#define MRT_TIME 1700000000u /* fixed, so written files are reproducible */

/* Interned attribute sets of one peer: slots hold attr index + 1. */
struct blob_index {
	uint32_t *slot;
	uint64_t mask, n;
};

static uint64_t blob_hash(const uint8_t *d, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ d[i]) * 0x100000001b3ULL;
	return hash_mix(h);
}

static void blob_index_grow(struct blob_index *bi, const struct peer_rib *pr)
{
	uint64_t cap = bi->mask ? (bi->mask + 1) * 2 : 1024;
	uint32_t *s = bb_alloc(cap * sizeof(*s));
	memset(s, 0, cap * sizeof(*s));
	for (uint64_t i = 0; bi->slot && i <= bi->mask; i++) {
		if (!bi->slot[i])
			continue;
		const struct attr_blob *a = &pr->attrs[bi->slot[i] - 1];
		uint64_t h = blob_hash(a->data, a->len) & (cap - 1);
		while (s[h])
			h = (h + 1) & (cap - 1);
		s[h] = bi->slot[i];
	}
	free(bi->slot);
	bi->slot = s;
	bi->mask = cap - 1;
}

static uint32_t blob_intern(struct blob_index *bi, struct peer_rib *pr, const uint8_t *d, size_t n)
{
	if ((bi->n + 1) * 2 > bi->mask + 1)
		blob_index_grow(bi, pr);
	uint64_t h = blob_hash(d, n) & bi->mask;
	while (bi->slot[h]) {
		const struct attr_blob *a = &pr->attrs[bi->slot[h] - 1];
		if (a->len == n && !memcmp(a->data, d, n))
			return bi->slot[h] - 1;
		h = (h + 1) & bi->mask;
	}
	uint32_t idx = rib_attr_add(pr, d, (uint32_t)n);
	bi->slot[h] = idx + 1;
	bi->n++;
	return idx;
}

struct raw_attr {
	uint8_t flags, type;
	const uint8_t *d;
	uint16_t len;
};

static int raw_attr_cmp(const void *a, const void *b)
{
	return ((const struct raw_attr *)a)->type - ((const struct raw_attr *)b)->type;
}

/* AS_PATH (4-byte ASNs in TABLE_DUMP_V2) with asn leading. */
static void as_path_lead(struct buf *out, const struct raw_attr *ap, uint32_t asn)
{
	const uint8_t *d = ap ? ap->d : NULL;
	size_t len = ap ? ap->len : 0;
	bool leads = len >= 6 && d[0] == 2 && get_u32(d + 2) == asn;
	bool merge = len >= 2 && d[0] == 2 && d[1] < 255 && !leads;
	size_t nlen = leads ? len : merge ? len + 4 : len + 6;
	uint8_t *p = attr_put(out, 0x40, 2, nlen);
	if (leads) {
		memcpy(p, d, len);
	} else if (merge) {
		p[0] = 2;
		p[1] = d[1] + 1;
		put_u32(p + 2, asn);
		memcpy(p + 6, d + 2, len - 2);
	} else {
		p[0] = 2;
		p[1] = 1;
		put_u32(p + 2, asn);
		if (len)
			memcpy(p + 6, d, len);
	}
}

/* MRT entry attributes -> what our peer sends (see DOC). false: malformed */
static bool attrs_rewrite(const uint8_t *d, size_t len, uint32_t asn, struct buf *out)
{
	struct raw_attr ra[64];
	unsigned n = 0;
	struct cur c = { d, d + len, false };
	while (c.p < c.end) {
		struct raw_attr a;
		a.flags = cur_u8(&c);
		a.type = cur_u8(&c);
		a.len = a.flags & 0x10 ? cur_u16(&c) : cur_u8(&c);
		a.d = cur_take(&c, a.len);
		if (c.err)
			return false;
		switch (a.type) {
		case 3: case 5: case 9: case 10: case 14: case 15: case 17: case 18:
			continue; /* next hop, iBGP-only, MP, AS4_* */
		}
		if (n == ARRAY_SIZE(ra))
			return false;
		ra[n++] = a;
	}
	qsort(ra, n, sizeof(ra[0]), raw_attr_cmp);
	out->len = 0;
	bool origin = false, path = false;
	for (unsigned i = 0; i <= n; i++) {
		uint8_t type = i < n ? ra[i].type : 255;
		if (i && i < n && type == ra[i - 1].type)
			continue; /* duplicate attribute: keep the first */
		if (type >= 2 && !origin) { /* mandatory ORIGIN missing: IGP */
			*attr_put(out, 0x40, 1, 1) = 0;
			origin = true;
		}
		if (type > 2 && !path) { /* mandatory AS_PATH missing */
			as_path_lead(out, NULL, asn);
			path = true;
		}
		if (i == n)
			break;
		if (type == 2) {
			as_path_lead(out, &ra[i], asn);
			path = true;
			continue;
		}
		origin |= type == 1;
		memcpy(attr_put(out, ra[i].flags & ~0x10, type, ra[i].len), ra[i].d, ra[i].len);
	}
	return true;
}

static uint8_t *file_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		bb_die("%s: cannot open", path);
	struct buf b = { 0 };
	size_t n;
	do {
		uint8_t *p = buf_grow(&b, 1 << 20);
		n = fread(p, 1, 1 << 20, f);
		b.len -= (1 << 20) - n;
	} while (n > 0);
	fclose(f);
	*len = b.len;
	return b.d;
}

struct mrt_reader {
	const struct bb_config *cf;
	struct bb_ribs *r;
	struct pfx_set pool;
	struct blob_index *bi;
	uint64_t *last_rec; /* per our peer: last record number it took a route from */
	unsigned mrt_peers;
	uint64_t records, skipped, bad_entries;
	struct buf attrs;
};

static void rd_pool_add(struct mrt_reader *m, const struct pfx *p, uint32_t *idx)
{
	bool added;
	*idx = pfx_set_add(&m->pool, p, (uint32_t)m->r->npool, &added);
	if (!added)
		return;
	if ((m->r->npool & (m->r->npool - 1)) == 0 && m->r->npool >= 1024)
		m->r->pool = bb_realloc(m->r->pool, m->r->npool * 2 * sizeof(*m->r->pool));
	else if (!m->r->pool)
		m->r->pool = bb_alloc(1024 * sizeof(*m->r->pool));
	m->r->pool[m->r->npool++] = *p;
	if (p->af == AFI_IPV4)
		m->r->npool4++;
	else
		m->r->npool6++;
}

static void rd_rib(struct mrt_reader *m, struct cur *c, uint8_t af, bool addpath)
{
	const struct bb_config *cf = m->cf;
	cur_u32(c); /* sequence number */
	struct pfx p;
	if (!dec_nlri(c, af, &p)) {
		m->bad_entries++;
		return;
	}
	uint16_t count = cur_u16(c);
	uint32_t pidx = UINT32_MAX;
	for (unsigned e = 0; e < count && !c->err; e++) {
		uint16_t peer = cur_u16(c);
		cur_u32(c); /* originated time */
		if (addpath)
			cur_u32(c); /* path id */
		uint16_t alen = cur_u16(c);
		const uint8_t *a = cur_take(c, alen);
		if (c->err || peer >= m->mrt_peers) {
			m->bad_entries++;
			continue;
		}
		unsigned our = peer % cf->peers;
		if (m->last_rec[our] == m->records)
			continue; /* two MRT peers of one of ours: first route wins */
		uint32_t asn = bb_peer_asn(cf, our);
		if (!attrs_rewrite(a, alen, asn, &m->attrs)) {
			m->bad_entries++;
			continue;
		}
		if (pidx == UINT32_MAX)
			rd_pool_add(m, &p, &pidx);
		m->last_rec[our] = m->records;
		struct peer_rib *pr = &m->r->peer[our];
		rib_route_add(pr, pidx, blob_intern(&m->bi[our], pr, m->attrs.d, m->attrs.len));
		m->r->nroutes++;
	}
}

static void rd_peer_index(struct mrt_reader *m, struct cur *c)
{
	cur_u32(c); /* collector BGP id */
	cur_take(c, cur_u16(c)); /* view name */
	m->mrt_peers = cur_u16(c);
	for (unsigned i = 0; i < m->mrt_peers && !c->err; i++) {
		uint8_t t = cur_u8(c);
		cur_u32(c);
		cur_take(c, t & 1 ? 16 : 4);
		cur_take(c, t & 2 ? 4 : 2);
	}
	if (c->err)
		bb_die("MRT: malformed PEER_INDEX_TABLE");
}

void mrt_read(const struct bb_config *cf, const char *path, struct bb_ribs *r)
{
	if (!cf->peers)
		bb_die("--mrt needs at least one peer");
	size_t len;
	uint8_t *data = file_read(path, &len);
	if (len >= 3 && ((data[0] == 0x1f && data[1] == 0x8b) || !memcmp(data, "BZh", 3)))
		bb_die("%s: compressed; decompress it first (gunzip / bunzip2)", path);

	struct mrt_reader m = { .cf = cf, .r = r };
	r->npeers = cf->peers;
	r->peer = bb_alloc(cf->peers * sizeof(*r->peer));
	memset(r->peer, 0, cf->peers * sizeof(*r->peer));
	m.bi = bb_alloc(cf->peers * sizeof(*m.bi));
	memset(m.bi, 0, cf->peers * sizeof(*m.bi));
	m.last_rec = bb_alloc(cf->peers * sizeof(*m.last_rec));
	for (unsigned i = 0; i < cf->peers; i++)
		m.last_rec[i] = UINT64_MAX;
	pfx_set_init(&m.pool, 1 << 16, cf->seed);

	struct cur f = { data, data + len, false };
	while (f.p < f.end) {
		cur_u32(&f); /* timestamp */
		uint16_t type = cur_u16(&f), sub = cur_u16(&f);
		uint32_t rlen = cur_u32(&f);
		const uint8_t *rec = cur_take(&f, rlen);
		if (f.err)
			bb_die("%s: truncated MRT record at byte %zu", path, (size_t)(f.p - data));
		m.records++;
		struct cur c = { rec, rec + rlen, false };
		if (type != MRT_TABLE_DUMP_V2) {
			m.skipped++;
			continue;
		}
		if (sub == MRT_PEER_INDEX)
			rd_peer_index(&m, &c);
		else if (sub == MRT_RIB_IPV4 || sub == MRT_RIB_IPV4_AP)
			rd_rib(&m, &c, AFI_IPV4, sub == MRT_RIB_IPV4_AP);
		else if (sub == MRT_RIB_IPV6 || sub == MRT_RIB_IPV6_AP)
			rd_rib(&m, &c, AFI_IPV6, sub == MRT_RIB_IPV6_AP);
		else
			m.skipped++;
		if (c.err)
			m.bad_entries++;
	}
	fprintf(stderr,
		"bgpblast: %s: %llu records (%llu skipped, %llu bad entries), %u MRT peers, "
		"%llu prefixes (%llu IPv6), %llu routes\n",
		path, (unsigned long long)m.records, (unsigned long long)m.skipped,
		(unsigned long long)m.bad_entries, m.mrt_peers, (unsigned long long)r->npool,
		(unsigned long long)r->npool6, (unsigned long long)r->nroutes);
	for (unsigned i = 0; i < cf->peers; i++)
		free(m.bi[i].slot);
	free(m.bi);
	free(m.last_rec);
	free(m.attrs.d);
	pfx_set_free(&m.pool);
	free(data);
}

static void mrt_record(FILE *f, uint16_t sub, const struct buf *body)
{
	uint8_t h[12];
	put_u32(h, MRT_TIME);
	put_u16(h + 4, MRT_TABLE_DUMP_V2);
	put_u16(h + 6, sub);
	put_u32(h + 8, (uint32_t)body->len);
	if (fwrite(h, 1, 12, f) != 12 || fwrite(body->d, 1, body->len, f) != body->len)
		bb_die("MRT: write failed");
}

/* One RIB_IPV4/6_UNICAST record: prefix px and its n (peer, attrs) entries. */
static void mrt_write_rib(FILE *f, const struct bb_config *cf, const struct bb_ribs *r,
			  const struct pfx *px, const struct route *ent, uint64_t n, uint32_t seq,
			  struct buf *b)
{
	b->len = 0;
	uint8_t *p = buf_grow(b, 4 + 1 + pfx_bytes(px) + 2);
	put_u32(p, seq);
	size_t o = 4 + enc_nlri(p + 4, px);
	put_u16(p + o, (uint16_t)n);
	for (uint64_t e = 0; e < n; e++) {
		unsigned peer = ent[e].pfx;
		const struct attr_blob *a = &r->peer[peer].attrs[ent[e].attr];
		uint32_t nh = bb_peer_addr(cf, peer);
		uint8_t nha[20];
		size_t nhl, split;
		if (px->af == AFI_IPV4) { /* NEXT_HOP */
			nha[0] = 0x40, nha[1] = 3, nha[2] = 4;
			put_u32(nha + 3, nh);
			nhl = 7;
			split = enc_attr_split(a, 3);
		} else { /* abbreviated MP_REACH_NLRI (RFC 6396 4.3.4) */
			nha[0] = 0x80, nha[1] = 14, nha[2] = 17, nha[3] = 16;
			nh6_of(nh, nha + 4);
			nhl = 20;
			split = enc_attr_split(a, 14);
		}
		p = buf_grow(b, 8 + a->len + nhl);
		put_u16(p, (uint16_t)peer);
		put_u32(p + 2, MRT_TIME);
		put_u16(p + 6, (uint16_t)(a->len + nhl));
		memcpy(p + 8, a->data, split);
		memcpy(p + 8 + split, nha, nhl);
		memcpy(p + 8 + split + nhl, a->data + split, a->len - split);
	}
	mrt_record(f, px->af == AFI_IPV4 ? MRT_RIB_IPV4 : MRT_RIB_IPV6, b);
}

void mrt_write(const struct bb_config *cf, const char *path, const struct bb_ribs *r)
{
	if (r->npeers > 65535)
		bb_die("MRT: at most 65535 peers");
	FILE *f = fopen(path, "wb");
	if (!f)
		bb_die("%s: cannot create", path);
	struct buf b = { 0 };
	uint8_t *p = buf_grow(&b, 8);
	put_u32(p, 0x7f000001); /* collector id */
	put_u16(p + 4, 0);       /* no view name */
	put_u16(p + 6, (uint16_t)r->npeers);
	for (unsigned i = 0; i < r->npeers; i++) {
		p = buf_grow(&b, 13);
		p[0] = 2; /* IPv4 address, 4-byte ASN */
		put_u32(p + 1, bb_peer_addr(cf, i));
		put_u32(p + 5, bb_peer_addr(cf, i));
		put_u32(p + 9, bb_peer_asn(cf, i));
	}
	mrt_record(f, MRT_PEER_INDEX, &b);

	/* invert: routes grouped by prefix, in peer order within a prefix */
	uint64_t *start = bb_alloc((r->npool + 1) * sizeof(*start));
	memset(start, 0, (r->npool + 1) * sizeof(*start));
	for (unsigned i = 0; i < r->npeers; i++)
		for (uint64_t k = 0; k < r->peer[i].nroutes; k++)
			start[r->peer[i].routes[k].pfx + 1]++;
	for (uint64_t k = 0; k < r->npool; k++)
		start[k + 1] += start[k];
	struct route *by = bb_alloc((start[r->npool] + 1) * sizeof(*by)); /* pfx field = peer */
	uint64_t *fill = bb_alloc((r->npool + 1) * sizeof(*fill));
	memcpy(fill, start, (r->npool + 1) * sizeof(*fill));
	for (unsigned i = 0; i < r->npeers; i++)
		for (uint64_t k = 0; k < r->peer[i].nroutes; k++) {
			const struct route *rt = &r->peer[i].routes[k];
			by[fill[rt->pfx]++] = (struct route){ i, rt->attr };
		}

	uint32_t seq = 0;
	for (uint64_t k = 0; k < r->npool; k++)
		if (start[k] < start[k + 1])
			mrt_write_rib(f, cf, r, &r->pool[k], by + start[k], start[k + 1] - start[k], seq++, &b);
	if (fclose(f))
		bb_die("%s: write failed", path);
	free(b.d);
	free(start);
	free(fill);
	free(by);
}
