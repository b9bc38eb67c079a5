/*
 * DOC: routes.c - deterministic synthetic route tables
 *
 * The pool holds P unique prefixes, P = N * R / ratio.  Peer p announces
 * the R pool entries (p * R + j) mod P, j < R: every pool prefix is
 * announced at least once, no peer announces a prefix twice (R <= P), and
 * total routes / unique prefixes is exactly the ratio asked for.  The pool
 * is shuffled, so which peers overlap on a prefix is random.
 *
 * Prefix lengths follow a public DFZ table (about 60% /24, then /22, /23,
 * /21, /20, ...; IPv6 mostly /48 and /32) in public unicast space.  Each
 * peer has about R / group attribute sets: AS path of 1-8 ASNs starting
 * with the peer's, sometimes prepended, 0-6 RFC 1997 communities, now and
 * then large communities and a MED.  Routes pick a set with a skewed
 * distribution, so a few sets are big, as in real tables, and the mean
 * UPDATE still carries hundreds of prefixes.
 *
 * Everything derives from --seed: same options, same bytes on the wire.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bgpblast.h"

struct len_weight {
	uint8_t len;
	uint16_t per_mille;
};

/* Roughly the IPv4 DFZ of the 2020s (per mille of all prefixes). */
static const struct len_weight v4_lengths[] = {
	{ 24, 580 }, { 22, 130 }, { 23, 100 }, { 21, 55 }, { 20, 50 }, { 19, 30 }, { 16, 20 },
	{ 18, 15 },  { 17, 10 },  { 15, 3 },   { 14, 3 },  { 13, 2 },  { 12, 1 },  { 11, 1 },
};

static const struct len_weight v6_lengths[] = {
	{ 48, 450 }, { 32, 120 }, { 44, 80 }, { 40, 70 }, { 36, 50 }, { 29, 40 }, { 46, 40 }, { 47, 30 },
	{ 42, 30 },  { 45, 25 },  { 38, 20 }, { 33, 15 }, { 34, 10 }, { 30, 10 }, { 28, 10 },
};

static uint8_t pick_len(uint64_t *rng, const struct len_weight *t, size_t n)
{
	uint32_t x = rng_below(rng, 1000);
	for (size_t i = 0; i < n; i++) {
		if (x < t[i].per_mille)
			return t[i].len;
		x -= t[i].per_mille;
	}
	return t[0].len;
}

static void pfx_mask(struct pfx *p)
{
	size_t full = p->len / 8, total = p->af == AFI_IPV4 ? 4 : 16;
	if (p->len % 8)
		p->addr[full++] &= (uint8_t)(0xff00 >> (p->len % 8));
	for (size_t i = full; i < total; i++)
		p->addr[i] = 0;
}

static bool v4_public(const uint8_t *a)
{
	switch (a[0]) {
	case 0:
	case 10:
	case 127:
		return false;
	case 100:
		return (a[1] & 0xc0) != 64;
	case 169:
		return a[1] != 254;
	case 172:
		return (a[1] & 0xf0) != 16;
	case 192:
		return a[1] != 168;
	default:
		return a[0] < 224;
	}
}

static void gen_v4(uint64_t *rng, struct pfx *p)
{
	memset(p, 0, sizeof(*p));
	p->af = AFI_IPV4;
	p->len = pick_len(rng, v4_lengths, ARRAY_SIZE(v4_lengths));
	do
		put_u32(p->addr, (uint32_t)(rng_next(rng) >> 32));
	while (!v4_public(p->addr));
	pfx_mask(p);
}

static void gen_v6(uint64_t *rng, struct pfx *p)
{
	memset(p, 0, sizeof(*p));
	p->af = AFI_IPV6;
	p->len = pick_len(rng, v6_lengths, ARRAY_SIZE(v6_lengths));
	uint64_t a = rng_next(rng);
	/* 2001::/16 .. 2a0f::/16, where nearly all of today's table lives */
	a = (a & 0x0000ffffffffffffULL) | (uint64_t)(0x2001 + (uint16_t)(a >> 48) % 0x0a0f) << 48;
	for (int i = 0; i < 8; i++)
		p->addr[i] = (uint8_t)(a >> (56 - 8 * i));
	pfx_mask(p);
}

static void gen_pool(const struct bb_config *cf, struct bb_ribs *r, uint64_t n)
{
	uint64_t n6 = (uint64_t)llround((double)n * cf->v6_share);
	uint64_t rng = cf->seed ^ 0x706f6f6cULL; /* "pool" */
	struct pfx_set seen;
	pfx_set_init(&seen, n, cf->seed);
	r->pool = bb_alloc(n * sizeof(*r->pool));
	r->npool = 0;
	while (r->npool < n) {
		struct pfx p;
		if (r->npool < n - n6)
			gen_v4(&rng, &p);
		else
			gen_v6(&rng, &p);
		bool added;
		pfx_set_add(&seen, &p, 0, &added);
		if (added)
			r->pool[r->npool++] = p;
	}
	pfx_set_free(&seen);
	r->npool6 = n6;
	r->npool4 = n - n6;
	for (uint64_t i = n - 1; i > 0; i--) { /* Fisher-Yates: mix v4 and v6 */
		uint64_t j = rng_next(&rng) % (i + 1);
		struct pfx t = r->pool[i];
		r->pool[i] = r->pool[j];
		r->pool[j] = t;
	}
}

uint32_t rib_attr_add(struct peer_rib *pr, const uint8_t *d, uint32_t len)
{
	if (pr->nattrs == pr->attrs_cap) {
		pr->attrs_cap = pr->attrs_cap ? pr->attrs_cap * 2 : 64;
		pr->attrs = bb_realloc(pr->attrs, pr->attrs_cap * sizeof(*pr->attrs));
	}
	struct attr_blob *a = &pr->attrs[pr->nattrs];
	a->data = bb_alloc(len ? len : 1);
	memcpy(a->data, d, len);
	a->len = len;
	return pr->nattrs++;
}

void rib_route_add(struct peer_rib *pr, uint32_t pfx, uint32_t attr)
{
	if (pr->nroutes == pr->routes_cap) {
		pr->routes_cap = pr->routes_cap ? pr->routes_cap * 2 : 1024;
		pr->routes = bb_realloc(pr->routes, pr->routes_cap * sizeof(*pr->routes));
	}
	pr->routes[pr->nroutes++] = (struct route){ pfx, attr };
}

static uint32_t random_asn(uint64_t *rng)
{
	if (rng_below(rng, 100) < 20)
		return 131072 + rng_below(rng, 290000); /* 4-byte space in use */
	uint32_t a;
	do
		a = 1 + rng_below(rng, 64495);
	while (a == AS_TRANS);
	return a;
}

uint8_t *attr_put(struct buf *b, uint8_t flags, uint8_t type, size_t len)
{
	bool ext = len > 255;
	uint8_t *p = buf_grow(b, (ext ? 4 : 3) + len);
	p[0] = flags | (ext ? 0x10 : 0);
	p[1] = type;
	if (ext)
		put_u16(p + 2, (uint16_t)len);
	else
		p[2] = (uint8_t)len;
	return p + (ext ? 4 : 3);
}

static const uint8_t path_len_pct[] = { 8, 22, 30, 20, 10, 5, 3, 2 }; /* 1..8 */
static const uint8_t comm_cnt_pct[] = { 30, 15, 15, 12, 10, 9, 9 };   /* 0..6 */

static unsigned pick_pct(uint64_t *rng, const uint8_t *pct, unsigned n)
{
	unsigned x = rng_below(rng, 100);
	for (unsigned i = 0; i < n; i++) {
		if (x < pct[i])
			return i;
		x -= pct[i];
	}
	return 0;
}

/* One synthetic attribute set of a peer, in wire form (no NEXT_HOP). */
static void gen_attrs(uint64_t *rng, uint32_t peer_asn, struct buf *b)
{
	b->len = 0;
	*attr_put(b, 0x40, 1, 1) = rng_below(rng, 100) < 87 ? 0 : 2; /* ORIGIN */

	uint32_t path[8];
	unsigned n = 1 + pick_pct(rng, path_len_pct, ARRAY_SIZE(path_len_pct));
	path[0] = peer_asn;
	for (unsigned i = 1; i < n; i++)
		path[i] = random_asn(rng);
	if (n > 1 && n < 8 && rng_below(rng, 100) < 10) /* origin prepends once */
		path[n] = path[n - 1], n++;
	uint8_t *p = attr_put(b, 0x40, 2, 2 + 4 * n); /* AS_PATH, 4-byte ASNs */
	p[0] = 2;
	p[1] = (uint8_t)n;
	for (unsigned i = 0; i < n; i++)
		put_u32(p + 2 + 4 * i, path[i]);

	if (rng_below(rng, 100) < 30) /* MED */
		put_u32(attr_put(b, 0x80, 4, 4), 10 * rng_below(rng, 100));

	unsigned nc = pick_pct(rng, comm_cnt_pct, ARRAY_SIZE(comm_cnt_pct));
	if (nc) { /* RFC 1997, never a well-known 65535:x one */
		uint16_t hi = peer_asn <= 64495 ? (uint16_t)peer_asn : (uint16_t)(1 + rng_below(rng, 64495));
		p = attr_put(b, 0xc0, 8, 4 * nc);
		for (unsigned i = 0; i < nc; i++) {
			put_u16(p + 4 * i, i % 3 == 2 ? (uint16_t)(1 + rng_below(rng, 64495)) : hi);
			put_u16(p + 4 * i + 2, (uint16_t)(100 * (i + 1) + rng_below(rng, 100)));
		}
	}

	if (rng_below(rng, 100) < 10) { /* RFC 8092 large communities */
		unsigned nl = 1 + rng_below(rng, 2);
		p = attr_put(b, 0xc0, 32, 12 * nl);
		for (unsigned i = 0; i < nl; i++) {
			put_u32(p + 12 * i, peer_asn);
			put_u32(p + 12 * i + 4, 1 + rng_below(rng, 1000));
			put_u32(p + 12 * i + 8, 1 + rng_below(rng, 100000));
		}
	}
}

void routes_synth(const struct bb_config *cf, struct bb_ribs *r)
{
	uint64_t total = (uint64_t)cf->peers * cf->routes;
	uint64_t npool = (uint64_t)llround((double)total / cf->ratio);
	if (npool < cf->routes)
		npool = cf->routes; /* a peer announces each prefix at most once */
	if (npool == 0)
		bb_die("no routes to generate");
	if (npool > UINT32_MAX)
		bb_die("pool of %llu prefixes is too large", (unsigned long long)npool);
	gen_pool(cf, r, npool);

	r->npeers = cf->peers;
	r->peer = bb_alloc(cf->peers * sizeof(*r->peer));
	memset(r->peer, 0, cf->peers * sizeof(*r->peer));
	r->nroutes = total;

	struct buf b = { 0 };
	for (unsigned p = 0; p < cf->peers; p++) {
		struct peer_rib *pr = &r->peer[p];
		uint64_t rng = cf->seed ^ hash_mix(0x70656572ULL + p); /* "peer" */
		uint64_t g = (cf->routes + cf->group - 1) / cf->group;
		if (g == 0)
			g = 1;
		for (uint64_t i = 0; i < g; i++) {
			gen_attrs(&rng, bb_peer_asn(cf, p), &b);
			rib_attr_add(pr, b.d, (uint32_t)b.len);
		}
		pr->routes_cap = cf->routes;
		pr->routes = bb_alloc((cf->routes ? cf->routes : 1) * sizeof(*pr->routes));
		uint64_t start = (uint64_t)p * cf->routes % npool;
		for (uint64_t j = 0; j < cf->routes; j++) {
			double u = rng_unit(&rng);
			uint32_t a = (uint32_t)((double)g * u * u); /* skewed: big sets first */
			rib_route_add(pr, (uint32_t)((start + j) % npool), a < g ? a : (uint32_t)g - 1);
		}
	}
	free(b.d);
}
