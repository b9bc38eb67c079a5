/*
 * DOC: bgpblast - BGP load injector, monitor and sink
 *
 * A self-contained benchmark tool: it never links the project's libraries,
 * so it cannot share a bug with the daemon it measures.
 *
 * Data flow: routes.c (synthetic) or mrt.c (TABLE_DUMP_V2 replay) fill one
 * struct bb_ribs: a pool of unique prefixes plus, per peer, a list of
 * (prefix, attribute set) routes.  encode.c packs each peer's routes into one
 * contiguous buffer of ready-to-send UPDATE messages before any socket is
 * opened.  session.c runs the sessions (N peers, M monitors, or the sink's
 * accepted sessions) in a few threads, each with its own epoll instance;
 * a session is owned by exactly one thread and never touched by another.
 * Threads talk to main.c only through the atomic counters in struct bb.
 * monitor.c parses what monitors receive into a per-monitor prefix set.
 * prop.c and prop_stats.c are the propagation mode: one sender, one
 * receiver, per-prefix timestamps on one clock, then a withdrawal phase.
 */
#ifndef BGPBLAST_H
#define BGPBLAST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BGP_HDR_LEN 19
#define BGP_MAX_LEN 4096
#define BGP_OPEN 1
#define BGP_UPDATE 2
#define BGP_NOTIFICATION 3
#define BGP_KEEPALIVE 4
#define BGP_REFRESH 5

#define AFI_IPV4 1
#define AFI_IPV6 2
#define AS_TRANS 23456

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- utilities (main.c) ---- */

void bb_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void *bb_alloc(size_t n);
void *bb_realloc(void *p, size_t n);
double bb_now(void); /* monotonic seconds since the run started */
/* One machine-readable line on stdout: "t=<s> <text>", atomic across threads. */
void bb_event(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bb_sleep_ms(unsigned ms);
bool bb_signalled(void); /* SIGINT or SIGTERM came */

/* ---- json.c: the one-line JSON summary, a flat object ---- */

struct json {
	char s[4096];
	size_t n;
};

void json_raw(struct json *j, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void json_u64(struct json *j, const char *key, uint64_t v);
void json_word(struct json *j, const char *key, const char *v);
void json_time(struct json *j, const char *key, double t); /* null unless > 0 */
void json_rate(struct json *j, const char *key, double count, double s);
void json_print(struct json *j);

/* splitmix64: deterministic, seedable, good enough for synthetic tables */
static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint32_t rng_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(((rng_next(s) >> 32) * (uint64_t)n) >> 32);
}

static inline double rng_unit(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) / 9007199254740992.0;
}

static inline uint64_t hash_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static inline void put_u16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static inline void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static inline uint16_t get_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Bounds-checked read cursor for everything that comes off the wire or
 * out of a file: reads past the end return zeros and set err. */
struct cur {
	const uint8_t *p, *end;
	bool err;
};

static inline bool cur_need(struct cur *c, size_t n)
{
	if (c->err || (size_t)(c->end - c->p) < n) {
		c->err = true;
		return false;
	}
	return true;
}

static inline uint8_t cur_u8(struct cur *c)
{
	return cur_need(c, 1) ? *c->p++ : 0;
}

static inline uint16_t cur_u16(struct cur *c)
{
	if (!cur_need(c, 2))
		return 0;
	c->p += 2;
	return get_u16(c->p - 2);
}

static inline uint32_t cur_u32(struct cur *c)
{
	if (!cur_need(c, 4))
		return 0;
	c->p += 4;
	return get_u32(c->p - 4);
}

static inline const uint8_t *cur_take(struct cur *c, size_t n)
{
	if (!cur_need(c, n))
		return NULL;
	c->p += n;
	return c->p - n;
}

/* An UPDATE body (after the header) split into its withdrawn routes, its
 * path attributes and its NLRI; false if the lengths overrun it. */
static inline bool upd_split(const uint8_t *body, size_t len, struct cur *withdrawn, struct cur *attrs,
			     struct cur *nlri)
{
	struct cur c = { body, body + len, false };
	uint16_t wlen = cur_u16(&c);
	const uint8_t *w = cur_take(&c, wlen);
	uint16_t alen = cur_u16(&c);
	const uint8_t *a = cur_take(&c, alen);
	if (c.err)
		return false;
	*withdrawn = (struct cur){ w, w + wlen, false };
	*attrs = (struct cur){ a, a + alen, false };
	*nlri = c;
	return true;
}

/* IPv6 next hop of a peer: fd00::<its IPv4 address>.  Not ::ffff:a.b.c.d:
 * BIRD reads IPv4-mapped addresses as IPv4 and rejects them for IPv6. */
static inline void nh6_of(uint32_t v4, uint8_t *out)
{
	for (int i = 0; i < 12; i++)
		out[i] = 0;
	out[0] = 0xfd;
	put_u32(out + 12, v4);
}

/* ---- growable byte buffer ---- */

struct buf {
	uint8_t *d;
	size_t len, cap;
};

static inline uint8_t *buf_grow(struct buf *b, size_t n)
{
	if (b->len + n > b->cap) {
		size_t c = b->cap ? b->cap : 4096;
		while (c < b->len + n)
			c *= 2;
		b->d = bb_realloc(b->d, c);
		b->cap = c;
	}
	b->len += n;
	return b->d + b->len - n;
}

/* ---- prefixes and route sets ---- */

/* A prefix, host-independent: af is AFI_IPV4/AFI_IPV6, addr in network
 * order, bits past len are zero. 18 bytes, no padding. */
struct pfx {
	uint8_t af, len;
	uint8_t addr[16];
};

static inline size_t pfx_bytes(const struct pfx *p)
{
	return (p->len + 7u) / 8u;
}

/* Open-addressing set of prefixes (linear probing, backward-shift delete).
 * Used for the pool (interning, gives each prefix an index) and for what a
 * monitor currently holds.  Keys come from a DUT, so the hash is seeded. */
struct pfx_slot {
	struct pfx k; /* k.af == 0 marks an empty slot */
	uint32_t val; /* beside the key: one cache miss per probe, not two */
};

struct pfx_set {
	struct pfx_slot *slot;
	uint64_t mask, n;
	uint64_t seed;
};

void pfx_set_init(struct pfx_set *s, uint64_t expect, uint64_t seed);
void pfx_set_free(struct pfx_set *s);
/* Returns the value stored for p, inserting val if absent (*added set). */
uint32_t pfx_set_add(struct pfx_set *s, const struct pfx *p, uint32_t val, bool *added);
bool pfx_set_del(struct pfx_set *s, const struct pfx *p);
/* The value stored for p, or UINT32_MAX when absent; never writes. */
uint32_t pfx_set_get(const struct pfx_set *s, const struct pfx *p);

/* An attribute set as we send it: every path attribute except NEXT_HOP and
 * MP_REACH/MP_UNREACH (those are added per message by encode.c). */
struct attr_blob {
	uint8_t *data;
	uint32_t len;
};

struct route {
	uint32_t pfx;  /* index into bb_ribs.pool */
	uint32_t attr; /* index into peer_rib.attrs */
};

struct peer_rib {
	struct attr_blob *attrs;
	uint32_t nattrs, attrs_cap;
	struct route *routes;
	uint64_t nroutes, routes_cap;
};

struct bb_ribs {
	struct pfx *pool;
	uint64_t npool, npool4, npool6;
	struct peer_rib *peer; /* [npeers] */
	unsigned npeers;
	uint64_t nroutes;
};

/* ---- configuration ---- */

struct bb_config {
	bool sink;
	uint32_t dut_addr; /* host order; 127.0.0.0/8 only */
	uint16_t dut_port;
	uint32_t listen_addr; /* sink */
	unsigned peers, monitors, threads;
	uint64_t routes; /* per peer */
	double ratio;    /* total routes / unique prefixes */
	double v6_share; /* share of the pool that is IPv6 */
	unsigned group;  /* mean prefixes per attribute set */
	uint64_t seed;
	uint32_t peer_base, monitor_base; /* host order */
	uint32_t asn_base, monitor_asn_base, local_asn;
	uint32_t next_hop; /* host order; 0: each peer's own address */
	unsigned hold;
	unsigned batch_us; /* pause after each busy epoll round */
	bool ipv6; /* negotiate IPv6 unicast */
	bool enhanced_refresh; /* offer enhanced route refresh */
	const char *mrt_in, *mrt_out;
	uint64_t expect;
	bool expect_set;
	double timeout, linger;
	double settle; /* monitors must also be quiet this long */
	double progress;
	bool quiet;   /* no per-session lines */
	bool dry_run; /* prepare, print the start line, exit */
	/* propagation mode (prop.c) */
	bool prop;
	bool prop_dut_asn_set;
	uint32_t prop_dut_asn; /* expected in front of the AS path; none if unset */
	double prop_idle;      /* a phase ends this long after the last UPDATE */
	double prop_pause;     /* between everything received and the withdrawals */
};

/* Address and ASN of peer i / monitor i (0-based); see main.c. */
uint32_t bb_peer_addr(const struct bb_config *cf, unsigned i);
uint32_t bb_monitor_addr(const struct bb_config *cf, unsigned i);
uint32_t bb_peer_asn(const struct bb_config *cf, unsigned i);
uint32_t bb_monitor_asn(const struct bb_config *cf, unsigned i);

/* ---- routes.c: synthetic tables ---- */

void routes_synth(const struct bb_config *cf, struct bb_ribs *r);
/* Appends one path attribute header (extended length when needed) and
 * returns where its len payload bytes go. */
uint8_t *attr_put(struct buf *b, uint8_t flags, uint8_t type, size_t len);
uint32_t rib_attr_add(struct peer_rib *pr, const uint8_t *d, uint32_t len);
void rib_route_add(struct peer_rib *pr, uint32_t pfx, uint32_t attr);

/* ---- mrt.c: TABLE_DUMP_V2 ---- */

void mrt_read(const struct bb_config *cf, const char *path, struct bb_ribs *r);
void mrt_write(const struct bb_config *cf, const char *path, const struct bb_ribs *r);

/* ---- encode.c: messages ---- */

struct peer_tx {
	uint8_t *buf; /* all UPDATEs then End-of-RIB marker(s) */
	size_t len;
	uint64_t routes;
	uint32_t updates;
	/* Propagation mode: when each message of buf began its last write,
	 * [updates + End-of-RIB markers]; 0 until then.  Written only by the
	 * session sending buf, read by main after the threads are joined. */
	double *msg_t;
};

void enc_peer_updates(const struct bb_ribs *r, unsigned peer, uint32_t nh, bool ipv6,
		      struct peer_tx *tx);
size_t enc_open(uint8_t *p, uint32_t asn, unsigned hold, uint32_t id, bool ipv6, bool err);
size_t enc_keepalive(uint8_t *p);
size_t enc_notification(uint8_t *p, uint8_t code, uint8_t sub);
void enc_header(uint8_t *p, uint16_t len, uint8_t type);
/* Offset in a (type-sorted) blob before which an attribute of type t goes. */
size_t enc_attr_split(const struct attr_blob *a, uint8_t t);
/* Encodes p as NLRI (length byte + significant bytes) */
static inline size_t enc_nlri(uint8_t *d, const struct pfx *p)
{
	size_t n = pfx_bytes(p);
	d[0] = p->len;
	for (size_t i = 0; i < n; i++)
		d[1 + i] = p->addr[i];
	return n + 1;
}
/* Parses one NLRI entry; false on malformed input. */
bool dec_nlri(struct cur *c, uint8_t af, struct pfx *out);

/* ---- monitor.c: what monitors and the sink make of UPDATEs ---- */

struct update_count {
	uint64_t announced, withdrawn;
	bool eor;
};

/* Counts NLRI in one UPDATE body (after the 19-byte header). With set,
 * also applies it to the set. Returns false on a malformed message. */
bool mon_update(const uint8_t *body, size_t len, struct pfx_set *set, struct update_count *uc);

/* ---- session.c / main.c: the run ---- */

/* What one injector run measured, for the summary. */
struct run_totals {
	const char *result;
	uint64_t prefixes, updates, update_bytes;
	double prep_s, cpu_user, cpu_sys;
};

struct prop;

struct bb {
	struct bb_config cf;
	struct peer_tx *tx; /* [peers] */
	uint64_t routes_total, expect;
	unsigned nsessions;
	atomic_uint n_established, n_sent_all, n_mon_full, n_mon_eor;
	atomic_int fatal, stop, interrupted;
	_Atomic double t_first_send, t_established_all, t_sent_all, t_mon_full, t_mon_last;
	/* the last UPDATE any peer got: when the DUT had delivered to everyone */
	_Atomic double t_peer_last;
	atomic_uint_fast64_t peer_updates_in;
	atomic_uint_fast64_t bytes_sent, bytes_rcvd;
	/* sink */
	atomic_uint_fast64_t sink_prefixes, sink_withdrawn, sink_updates, sink_sessions;
	atomic_int sink_open; /* sessions the sink holds open now */
	_Atomic double t_first_update, t_last_update, t_sink_full;
	/* monitors' current counts, for progress lines and timeouts */
	_Atomic uint64_t *mon_count;
	/* propagation mode: the sender's withdrawals, sent once wd_go is set */
	struct prop *prop;
	struct peer_tx *wtx;
	atomic_int wd_go;
};

void sess_run_injector(struct bb *bb);
void sess_run_sink(struct bb *bb);
void sess_stop(struct bb *bb);

/* ---- prop.c, prop_stats.c: propagation mode ---- */

/* After enc_peer_updates: index the prefixes, encode the withdrawals. */
void prop_prepare(struct bb *bb, const struct bb_ribs *r);
/* The receiver's UPDATE, read at time t; false when malformed. */
bool prop_rx_update(struct prop *p, const uint8_t *body, size_t len, double t);
/* Announce, wait, withdraw, wait; returns the result word. */
const char *prop_wait(struct bb *bb);
void prop_summary(struct bb *bb, const struct run_totals *rt);

#endif
