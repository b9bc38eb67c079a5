/*
 * DOC: session.c - BGP sessions on epoll, a few threads
 *
 * Each thread owns an epoll instance and a fixed subset of the sessions
 * (session i goes to thread i % threads); a session is only ever touched
 * by its thread.  Sockets are non-blocking and edge-triggered: reads go
 * until EAGAIN, writes until EAGAIN or nothing is left.
 *
 * Sending: a peer's UPDATEs are one pre-encoded buffer (encode.c), written
 * with writev() straight from it.  Small control messages (OPEN, KEEPALIVE,
 * NOTIFICATION) wait in a per-session queue and are slipped in only at a
 * message boundary of the bulk stream, so framing is never broken.
 *
 * Receiving: framing is always checked (marker, length, type) so that
 * KEEPALIVEs are answered and NOTIFICATIONs seen; peers drop UPDATEs
 * unparsed, monitors apply them to their prefix set, the sink counts NLRI.
 *
 * Propagation mode (prop.c): the peer stamps when each message began its
 * last write (tx->msg_t); the monitor hands its UPDATEs to prop.c with the
 * time the read() that completed them returned.  Once main sets wd_go, the
 * peer sends the withdrawal stream (bb->wtx) after what it is sending.
 *
 * Threads report to main.c only through the atomics of struct bb.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bgpblast.h"

#define CTRL_CAP 2048
#define RX_CAP (64 * 1024)
#define OPEN_HOLD 240.0 /* hold time before OPEN is received (RFC 4271 10) */
#define SCAN_EVERY 0.2

enum sess_role { ROLE_PEER, ROLE_MONITOR, ROLE_SINK };

enum sess_state {
	ST_IDLE,       /* waiting to (re)connect */
	ST_CONNECTING, /* TCP connect in progress */
	ST_OPENSENT,   /* waiting for the other side's OPEN */
	ST_OPENCONFIRM,
	ST_ESTABLISHED,
	ST_DEAD,
};

struct bb_thread;

/* owner: its thread (th); nobody else reads or writes it while running */
struct session {
	struct bb *bb;
	struct bb_thread *th;
	enum sess_role role;
	enum sess_state state;
	unsigned idx; /* 0-based index among peers, monitors or sink sessions */
	int fd;
	uint32_t laddr, raddr, asn, rasn;
	unsigned hold, keepalive; /* negotiated, seconds */
	double last_rx, last_ka, retry_at;
	bool ever_up, sent_all, mon_full, failed_once, refresh_pending;

	uint8_t ctrl[CTRL_CAP];
	size_t ctrl_len, ctrl_off;
	struct peer_tx *cur; /* the stream being sent: bb->tx[idx] or bb->wtx */
	const uint8_t *bulk;
	size_t bulk_len, bulk_off, msg_start, msg_end;
	bool bulk_on, wd_started;
	size_t stamp_end; /* cur->msg_t: messages before this offset are stamped */
	uint32_t stamp_no;

	uint8_t *rx;
	size_t rx_len;

	struct pfx_set set; /* monitors */
	uint64_t prefixes_in, withdrawn_in, updates_in;
};

struct bb_thread {
	struct bb *bb;
	unsigned id;
	int epfd, lfd;
	pthread_t tid;
	struct session **sess;
	unsigned nsess, cap;
	double last_scan;
};

static struct bb_thread *threads;
static unsigned nthreads;

static const char *role_name(const struct session *s)
{
	return s->role == ROLE_PEER ? "peer" : s->role == ROLE_MONITOR ? "monitor" : "sink";
}

static void addr_str(uint32_t a, char *out)
{
	sprintf(out, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

static void atomic_max_double(_Atomic double *v, double x)
{
	double cur = atomic_load(v);
	while (cur < x && !atomic_compare_exchange_weak(v, &cur, x))
		;
}

static void atomic_set_once(_Atomic double *v, double x)
{
	double zero = 0;
	atomic_compare_exchange_strong(v, &zero, x);
}

static void sess_close(struct session *s)
{
	if (s->fd >= 0) {
		if (s->role == ROLE_SINK)
			atomic_fetch_sub(&s->bb->sink_open, 1);
		epoll_ctl(s->th->epfd, EPOLL_CTL_DEL, s->fd, NULL);
		close(s->fd);
		s->fd = -1;
	}
	s->ctrl_len = s->ctrl_off = 0;
	s->bulk_on = false;
	s->rx_len = 0;
}

/* A session of the injector failed: report, tell main, close. */
static void sess_fatal(struct session *s, const char *what, int err)
{
	char a[16];
	addr_str(s->laddr, a);
	if (s->role == ROLE_SINK) {
		addr_str(s->raddr, a);
		bb_event("event=closed peer=%s reason=\"%s%s%s\" prefixes=%llu", a, what, err ? ": " : "",
			 err ? strerror(err) : "", (unsigned long long)s->prefixes_in);
		sess_close(s);
		s->state = ST_DEAD;
		return;
	}
	if (!atomic_load(&s->bb->stop))
		bb_event("event=error %s=%u addr=%s msg=\"%s%s%s\"", role_name(s), s->idx + 1, a, what,
			 err ? ": " : "", err ? strerror(err) : "");
	atomic_store(&s->bb->fatal, 1);
	sess_close(s);
	s->state = ST_DEAD;
}

/* The connection broke.  Before the session was ever up that is what a
 * busy DUT does (a full accept queue, a collision): try again in a second,
 * as a BGP speaker would.  Afterwards it is an error. */
static void sess_lost(struct session *s, const char *what, int err)
{
	if (s->role == ROLE_SINK || s->ever_up || atomic_load(&s->bb->stop)) {
		sess_fatal(s, what, err);
		return;
	}
	if (!s->failed_once) { /* once per session, even when quiet */
		char a[16];
		addr_str(s->laddr, a);
		bb_event("event=retry %s=%u addr=%s reason=\"%s%s%s\"", role_name(s), s->idx + 1, a, what,
			 err ? ": " : "", err ? strerror(err) : "");
	}
	s->failed_once = true;
	sess_close(s);
	s->state = ST_IDLE;
	s->retry_at = bb_now() + 1;
}

static void sess_flush(struct session *s);

static void sess_queue(struct session *s, const uint8_t *m, size_t len)
{
	if (s->ctrl_off && s->ctrl_len + len > CTRL_CAP) {
		memmove(s->ctrl, s->ctrl + s->ctrl_off, s->ctrl_len - s->ctrl_off);
		s->ctrl_len -= s->ctrl_off;
		s->ctrl_off = 0;
	}
	if (s->ctrl_len + len > CTRL_CAP) {
		if (m[18] == BGP_KEEPALIVE)
			return; /* the other side reads nothing; one more won't help */
		sess_fatal(s, "control queue overflow", 0);
		return;
	}
	memcpy(s->ctrl + s->ctrl_len, m, len);
	s->ctrl_len += len;
	sess_flush(s);
}

static void bulk_start_tx(struct session *s, struct peer_tx *tx)
{
	s->cur = tx;
	s->stamp_end = 0;
	s->stamp_no = 0;
	s->bulk = tx->buf;
	s->bulk_len = tx->len;
	s->bulk_off = s->msg_start = 0;
	s->msg_end = get_u16(tx->buf + 16);
	s->bulk_on = true;
}

static void bulk_start(struct session *s)
{
	bulk_start_tx(s, &s->bb->tx[s->idx]);
}

/* Stamps every message that ends within what was written so far with t,
 * the moment before the write that completed it.  First stamp wins, so a
 * ROUTE-REFRESH resend does not move the times. */
static void bulk_stamp(struct session *s, double t)
{
	struct peer_tx *tx = s->cur;
	while (s->stamp_end < s->bulk_off) {
		size_t len = get_u16(s->bulk + s->stamp_end + 16);
		if (s->stamp_end + len > s->bulk_off)
			break;
		if (!tx->msg_t[s->stamp_no])
			tx->msg_t[s->stamp_no] = t;
		s->stamp_no++;
		s->stamp_end += len;
	}
}

static void bulk_done(struct session *s)
{
	struct bb *bb = s->bb;
	s->bulk_on = false;
	if (s->cur == bb->wtx) {
		if (!bb->cf.quiet)
			bb_event("event=sent_withdrawals peer=%u updates=%u routes=%llu", s->idx + 1,
				 bb->wtx->updates, (unsigned long long)bb->wtx->routes);
	} else if (!s->sent_all) {
		s->sent_all = true;
		double t = bb_now();
		if (!bb->cf.quiet)
			bb_event("event=sent_all peer=%u updates=%u routes=%llu bytes=%zu", s->idx + 1,
				 bb->tx[s->idx].updates, (unsigned long long)bb->tx[s->idx].routes,
				 s->bulk_len);
		if (atomic_fetch_add(&bb->n_sent_all, 1) + 1 == bb->cf.peers) {
			atomic_store(&bb->t_sent_all, t);
			bb_event("event=sent_all_peers peers=%u", bb->cf.peers);
		}
	}
	if (s->refresh_pending) {
		s->refresh_pending = false;
		bulk_start(s);
	}
}

/* Propagation mode: the withdrawals go out once main says so, after the
 * announcements (and any refresh resend) are all written. */
static void sess_withdraw(struct session *s)
{
	if (s->role != ROLE_PEER || s->wd_started || s->bulk_on || s->state != ST_ESTABLISHED)
		return;
	s->wd_started = true;
	bulk_start_tx(s, s->bb->wtx);
	sess_flush(s);
}

static void sess_flush(struct session *s)
{
	while (s->fd >= 0 && s->state != ST_CONNECTING) {
		struct iovec iov[2];
		int n = 0;
		bool at_boundary = !s->bulk_on || s->bulk_off == s->msg_start;
		size_t ctrl = 0;
		if (s->ctrl_off < s->ctrl_len && at_boundary) {
			ctrl = s->ctrl_len - s->ctrl_off;
			iov[n++] = (struct iovec){ s->ctrl + s->ctrl_off, ctrl };
		}
		if (s->bulk_on) {
			size_t end = s->ctrl_off < s->ctrl_len && !at_boundary ? s->msg_end : s->bulk_len;
			iov[n++] = (struct iovec){ (void *)(s->bulk + s->bulk_off), end - s->bulk_off };
		}
		if (!n)
			return;
		double tw = s->bulk_on && s->cur->msg_t ? bb_now() : 0;
		ssize_t w = writev(s->fd, iov, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				sess_lost(s, "write", errno);
			return;
		}
		atomic_fetch_add(&s->bb->bytes_sent, (uint64_t)w);
		size_t c = (size_t)w < ctrl ? (size_t)w : ctrl;
		s->ctrl_off += c;
		if (s->ctrl_off == s->ctrl_len)
			s->ctrl_off = s->ctrl_len = 0;
		if (!s->bulk_on)
			continue;
		s->bulk_off += (size_t)w - c;
		if (tw > 0)
			bulk_stamp(s, tw);
		while (s->bulk_off >= s->msg_end && s->msg_end < s->bulk_len) {
			s->msg_start = s->msg_end;
			s->msg_end += get_u16(s->bulk + s->msg_end + 16);
		}
		if (s->bulk_off == s->bulk_len)
			bulk_done(s);
	}
}

static void sess_established(struct session *s)
{
	struct bb *bb = s->bb;
	double t = bb_now();
	s->state = ST_ESTABLISHED;
	char a[16];
	if (!s->ever_up) {
		s->ever_up = true;
		if (!bb->cf.quiet) {
			addr_str(s->role == ROLE_SINK ? s->raddr : s->laddr, a);
			if (s->role == ROLE_SINK)
				bb_event("event=established peer=%s asn=%u", a, s->rasn);
			else
				bb_event("event=established %s=%u addr=%s asn=%u", role_name(s), s->idx + 1, a,
					 s->asn);
		}
		if (s->role != ROLE_SINK && atomic_fetch_add(&bb->n_established, 1) + 1 == bb->nsessions) {
			atomic_store(&bb->t_established_all, t);
			bb_event("event=established_all sessions=%u", bb->nsessions);
		}
	}
	if (s->role == ROLE_PEER) {
		atomic_set_once(&bb->t_first_send, t);
		bulk_start(s);
		sess_flush(s);
	}
	if (s->role == ROLE_MONITOR && bb->expect == 0 && !s->mon_full) {
		s->mon_full = true;
		if (atomic_fetch_add(&bb->n_mon_full, 1) + 1 == bb->cf.monitors)
			atomic_store(&bb->t_mon_full, t);
	}
}

/* The other side's OPEN: check it, learn hold time and families. */
static void rx_open(struct session *s, const uint8_t *b, size_t len)
{
	struct bb *bb = s->bb;
	struct cur c = { b, b + len, false };
	uint8_t ver = cur_u8(&c);
	uint16_t as2 = cur_u16(&c), hold = cur_u16(&c);
	cur_u32(&c); /* BGP identifier */
	uint8_t optlen = cur_u8(&c);
	struct cur o = { c.p, c.p + optlen, false };
	cur_take(&c, optlen);
	bool as4 = false, mp = false, mp4 = false, mp6 = false;
	uint32_t rasn = as2;
	while (!c.err && o.p < o.end) {
		uint8_t pt = cur_u8(&o), pl = cur_u8(&o);
		const uint8_t *pd = cur_take(&o, pl);
		if (o.err || pt != 2)
			continue;
		struct cur cc = { pd, pd + pl, false };
		while (cc.p < cc.end) {
			uint8_t code = cur_u8(&cc), cl = cur_u8(&cc);
			const uint8_t *cd = cur_take(&cc, cl);
			if (cc.err)
				break;
			if (code == 65 && cl == 4) {
				as4 = true;
				rasn = get_u32(cd);
			} else if (code == 1 && cl == 4 && cd[3] == 1) {
				mp = true;
				mp4 |= get_u16(cd) == AFI_IPV4;
				mp6 |= get_u16(cd) == AFI_IPV6;
			}
		}
	}
	if (c.err || o.err || ver != 4) {
		sess_fatal(s, "malformed OPEN", 0);
		return;
	}
	if (hold == 1 || hold == 2) {
		sess_fatal(s, "unacceptable hold time in OPEN", 0);
		return;
	}
	s->rasn = rasn;
	s->hold = hold < bb->cf.hold ? hold : bb->cf.hold;
	s->keepalive = s->hold / 3;
	if (s->role != ROLE_SINK) {
		if (!as4) {
			sess_fatal(s, "DUT lacks the 4-byte ASN capability", 0);
			return;
		}
		if (mp && !mp4) {
			sess_fatal(s, "DUT did not offer IPv4 unicast", 0);
			return;
		}
		if (bb->cf.ipv6 && !mp6) {
			sess_fatal(s, "DUT did not offer IPv6 unicast", 0);
			return;
		}
	}
	uint8_t m[128];
	if (s->role == ROLE_SINK)
		sess_queue(s, m, enc_open(m, bb->cf.local_asn, bb->cf.hold, s->laddr, true, bb->cf.enhanced_refresh));
	sess_queue(s, m, enc_keepalive(m));
	s->last_ka = bb_now();
	if (s->state != ST_DEAD)
		s->state = ST_OPENCONFIRM;
}

static void rx_update_sink(struct session *s, const uint8_t *b, size_t len)
{
	struct bb *bb = s->bb;
	struct update_count uc;
	if (!mon_update(b, len, NULL, &uc)) {
		sess_fatal(s, "malformed UPDATE", 0);
		return;
	}
	double t = bb_now();
	atomic_set_once(&bb->t_first_update, t);
	atomic_max_double(&bb->t_last_update, t);
	s->prefixes_in += uc.announced;
	s->withdrawn_in += uc.withdrawn;
	atomic_fetch_add(&bb->sink_updates, 1);
	atomic_fetch_add(&bb->sink_withdrawn, uc.withdrawn);
	uint64_t tot = atomic_fetch_add(&bb->sink_prefixes, uc.announced) + uc.announced;
	if (uc.eor && !bb->cf.quiet) {
		char a[16];
		addr_str(s->raddr, a);
		bb_event("event=eor peer=%s prefixes=%llu", a, (unsigned long long)s->prefixes_in);
	}
	if (bb->cf.expect_set && tot >= bb->expect && uc.announced && tot - uc.announced < bb->expect) {
		atomic_store(&bb->t_sink_full, t);
		bb_event("event=sink_full prefixes=%llu", (unsigned long long)tot);
	}
}

static void rx_update_monitor(struct session *s, const uint8_t *b, size_t len)
{
	struct bb *bb = s->bb;
	struct update_count uc;
	if (bb->prop) {
		if (!prop_rx_update(bb->prop, b, len, s->last_rx))
			sess_fatal(s, "malformed UPDATE", 0);
		return;
	}
	if (!mon_update(b, len, &s->set, &uc)) {
		sess_fatal(s, "malformed UPDATE", 0);
		return;
	}
	s->prefixes_in += uc.announced;
	s->withdrawn_in += uc.withdrawn;
	atomic_store(&bb->mon_count[s->idx], s->set.n);
	if (uc.announced || uc.withdrawn)
		atomic_max_double(&bb->t_mon_last, bb_now());
	if (uc.eor) {
		atomic_fetch_add(&bb->n_mon_eor, 1);
		if (!bb->cf.quiet)
			bb_event("event=eor monitor=%u prefixes=%llu", s->idx + 1, (unsigned long long)s->set.n);
	}
	if (!s->mon_full && s->set.n >= bb->expect) {
		double t = bb_now();
		s->mon_full = true;
		bb_event("event=monitor_full monitor=%u prefixes=%llu", s->idx + 1,
			 (unsigned long long)s->set.n);
		if (atomic_fetch_add(&bb->n_mon_full, 1) + 1 == bb->cf.monitors) {
			atomic_store(&bb->t_mon_full, t);
			if (atomic_load(&bb->n_sent_all) < bb->cf.peers)
				bb_event("event=warning msg=\"monitors full before every peer sent all; "
					 "converge_last_s tells when changes stopped\"");
		}
	}
}

static void rx_notification(struct session *s, const uint8_t *b, size_t len)
{
	char a[16], hex[64] = "";
	addr_str(s->role == ROLE_SINK ? s->raddr : s->laddr, a);
	for (size_t i = 2; i < len && i < 30; i++)
		sprintf(hex + 2 * (i - 2), "%02x", b[i]);
	if (s->role == ROLE_SINK) {
		if (!s->bb->cf.quiet)
			bb_event("event=notification peer=%s code=%u subcode=%u prefixes=%llu", a,
				 len > 0 ? b[0] : 0, len > 1 ? b[1] : 0, (unsigned long long)s->prefixes_in);
		sess_close(s);
		s->state = ST_DEAD;
		return;
	}
	if (atomic_load(&s->bb->stop)) { /* we are leaving anyway */
		sess_close(s);
		s->state = ST_DEAD;
		return;
	}
	bb_event("event=notification %s=%u addr=%s code=%u subcode=%u data=%s", role_name(s), s->idx + 1, a,
		 len > 0 ? b[0] : 0, len > 1 ? b[1] : 0, hex);
	atomic_store(&s->bb->fatal, 1);
	sess_close(s);
	s->state = ST_DEAD;
}

static void rx_message(struct session *s, uint8_t type, const uint8_t *b, size_t len)
{
	bool up = s->state == ST_ESTABLISHED;
	switch (type) {
	case BGP_OPEN:
		if (s->state != ST_OPENSENT)
			sess_fatal(s, "unexpected OPEN", 0);
		else
			rx_open(s, b, len);
		return;
	case BGP_KEEPALIVE:
		if (s->state == ST_OPENCONFIRM)
			sess_established(s);
		else if (!up)
			sess_fatal(s, "unexpected KEEPALIVE", 0);
		return;
	case BGP_UPDATE:
		if (!up)
			sess_fatal(s, "UPDATE before Established", 0);
		else if (s->role == ROLE_MONITOR)
			rx_update_monitor(s, b, len);
		else if (s->role == ROLE_SINK)
			rx_update_sink(s, b, len);
		else { /* peers drop what they receive */
			s->updates_in++;
			/* not the withdrawals our own Ceases bring the others,
			 * once the run is over */
			if (!atomic_load(&s->bb->stop)) {
				atomic_fetch_add(&s->bb->peer_updates_in, 1);
				atomic_max_double(&s->bb->t_peer_last, bb_now());
			}
		}
		return;
	case BGP_NOTIFICATION:
		rx_notification(s, b, len);
		return;
	case BGP_REFRESH:
		/* a request (subtype 0); BoRR and EoRR only frame what the DUT resends */
		if (s->role == ROLE_PEER && up && len >= 4 && b[2] == 0) {
			if (s->bulk_on)
				s->refresh_pending = true;
			else {
				bulk_start(s);
				sess_flush(s);
			}
		}
		return;
	default:
		sess_fatal(s, "unknown message type", 0);
	}
}

static void sess_read(struct session *s)
{
	while (s->fd >= 0) {
		ssize_t n = read(s->fd, s->rx + s->rx_len, RX_CAP - s->rx_len);
		if (n == 0) {
			sess_lost(s, "connection closed by the other side", 0);
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				sess_lost(s, "read", errno);
			return;
		}
		atomic_fetch_add(&s->bb->bytes_rcvd, (uint64_t)n);
		bool drained = (size_t)n < RX_CAP - s->rx_len;
		s->rx_len += (size_t)n;
		s->last_rx = bb_now();
		size_t off = 0;
		while (s->rx_len - off >= BGP_HDR_LEN) {
			const uint8_t *m = s->rx + off;
			static const uint8_t marker[16] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
							    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
			uint16_t len = get_u16(m + 16);
			if (memcmp(m, marker, 16) || len < BGP_HDR_LEN || len > BGP_MAX_LEN) {
				sess_fatal(s, "bad message header", 0);
				return;
			}
			if (s->rx_len - off < len)
				break;
			rx_message(s, m[18], m + BGP_HDR_LEN, len - BGP_HDR_LEN);
			if (s->fd < 0)
				return;
			off += len;
		}
		memmove(s->rx, s->rx + off, s->rx_len - off);
		s->rx_len -= off;
		/* A short read emptied the socket; more data means a new edge,
		 * so skip the read that would only return EAGAIN. */
		if (drained)
			return;
	}
}

static void sess_connect(struct session *s)
{
	struct bb *bb = s->bb;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		bb_die("socket: %s", strerror(errno));
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(s->laddr) };
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		char a[16];
		addr_str(s->laddr, a);
		bb_die("bind %s: %s", a, strerror(errno));
	}
	struct sockaddr_in da = { .sin_family = AF_INET,
				  .sin_port = htons(bb->cf.dut_port),
				  .sin_addr.s_addr = htonl(bb->cf.dut_addr) };
	if (connect(fd, (struct sockaddr *)&da, sizeof(da)) < 0 && errno != EINPROGRESS) {
		close(fd);
		s->state = ST_IDLE;
		s->retry_at = bb_now() + 1;
		return;
	}
	s->fd = fd;
	s->state = ST_CONNECTING;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = s };
	if (epoll_ctl(s->th->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		bb_die("epoll_ctl: %s", strerror(errno));
}

static void sess_connected(struct session *s)
{
	int err = 0;
	socklen_t l = sizeof(err);
	getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &l);
	if (err) {
		if (!s->failed_once) { /* once per session, even when quiet */
			char a[16];
			addr_str(s->laddr, a);
			bb_event("event=connect_failed %s=%u addr=%s err=\"%s\" retry=1s", role_name(s),
				 s->idx + 1, a, strerror(err));
		}
		s->failed_once = true;
		sess_close(s);
		s->state = ST_IDLE;
		s->retry_at = bb_now() + 1;
		return;
	}
	uint8_t m[128];
	s->state = ST_OPENSENT;
	s->last_rx = bb_now();
	bool v6 = s->bb->cf.ipv6;
	sess_queue(s, m, enc_open(m, s->asn, s->bb->cf.hold, s->laddr, v6, s->bb->cf.enhanced_refresh));
}

static void sess_event(struct session *s, uint32_t ev)
{
	if (s->state == ST_CONNECTING) {
		if (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP))
			sess_connected(s);
		if (s->state == ST_CONNECTING || s->fd < 0)
			return;
	}
	if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP))
		sess_read(s);
	if (s->fd >= 0 && (ev & EPOLLOUT))
		sess_flush(s);
}

static void sess_timers(struct session *s, double now)
{
	if (s->state == ST_IDLE && s->role != ROLE_SINK && now >= s->retry_at) {
		sess_connect(s);
		return;
	}
	if (s->fd < 0 || s->state < ST_OPENSENT)
		return;
	double hold = s->state == ST_OPENSENT ? OPEN_HOLD : s->hold;
	if (hold && now - s->last_rx > hold) {
		uint8_t m[32];
		if (write(s->fd, m, enc_notification(m, 4, 0)) < 0) {
			/* best effort: the session is dead either way */
		}
		sess_fatal(s, "hold timer expired", 0);
		return;
	}
	if (s->state >= ST_OPENCONFIRM && s->keepalive && now - s->last_ka >= s->keepalive) {
		uint8_t m[BGP_HDR_LEN];
		s->last_ka = now;
		sess_queue(s, m, enc_keepalive(m));
	}
}

static struct session *sess_new(struct bb *bb, struct bb_thread *th, enum sess_role role, unsigned idx)
{
	struct session *s = bb_alloc(sizeof(*s));
	memset(s, 0, sizeof(*s));
	s->bb = bb;
	s->th = th;
	s->role = role;
	s->idx = idx;
	s->fd = -1;
	s->rx = bb_alloc(RX_CAP);
	if (th->nsess == th->cap) {
		th->cap = th->cap ? th->cap * 2 : 16;
		th->sess = bb_realloc(th->sess, th->cap * sizeof(*th->sess));
	}
	th->sess[th->nsess++] = s;
	return s;
}

static void sink_accept(struct bb_thread *th)
{
	for (;;) {
		struct sockaddr_in sa;
		socklen_t sl = sizeof(sa);
		int fd = accept4(th->lfd, (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		struct session *s = sess_new(th->bb, th, ROLE_SINK, th->nsess);
		atomic_fetch_add(&th->bb->sink_sessions, 1);
		atomic_fetch_add(&th->bb->sink_open, 1);
		s->fd = fd;
		s->raddr = ntohl(sa.sin_addr.s_addr);
		s->laddr = th->bb->cf.listen_addr;
		s->state = ST_OPENSENT;
		s->last_rx = bb_now();
		struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = s };
		if (epoll_ctl(th->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
			bb_die("epoll_ctl: %s", strerror(errno));
	}
}

static void *thread_main(void *arg)
{
	struct bb_thread *th = arg;
	struct bb *bb = th->bb;
	struct epoll_event evs[256];
	for (unsigned i = 0; i < th->nsess; i++)
		sess_connect(th->sess[i]);
	while (!atomic_load(&bb->stop)) {
		int n = epoll_wait(th->epfd, evs, ARRAY_SIZE(evs), 20);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == th)
				sink_accept(th);
			else
				sess_event(evs[i].data.ptr, evs[i].events);
		}
		/* Coalesce: after a busy round, let data pile up a little so the
		 * next round reads it in big chunks.  Waking for every 4 KB a
		 * DUT writes costs several times more CPU than the data does. */
		if (n > 0 && bb->cf.batch_us)
			usleep(bb->cf.batch_us);
		if (bb->wtx && atomic_load(&bb->wd_go))
			for (unsigned i = 0; i < th->nsess; i++)
				sess_withdraw(th->sess[i]);
		double now = bb_now();
		if (now - th->last_scan >= SCAN_EVERY) {
			th->last_scan = now;
			for (unsigned i = 0; i < th->nsess; i++)
				sess_timers(th->sess[i], now);
		}
	}
	/* Cease (administrative shutdown), where it cannot break framing */
	for (unsigned i = 0; i < th->nsess; i++) {
		struct session *s = th->sess[i];
		if (s->fd >= 0 && s->state == ST_ESTABLISHED && (!s->bulk_on || s->bulk_off == s->msg_start)) {
			uint8_t m[32];
			if (write(s->fd, m, enc_notification(m, 6, 2)) < 0) {
				/* best effort */
			}
		}
		if (s->fd >= 0)
			close(s->fd);
		s->fd = -1;
	}
	return NULL;
}

static void threads_setup(struct bb *bb)
{
	nthreads = bb->cf.threads;
	threads = bb_alloc(nthreads * sizeof(*threads));
	memset(threads, 0, nthreads * sizeof(*threads));
	for (unsigned t = 0; t < nthreads; t++) {
		threads[t].bb = bb;
		threads[t].id = t;
		threads[t].lfd = -1;
		threads[t].epfd = epoll_create1(EPOLL_CLOEXEC);
		if (threads[t].epfd < 0)
			bb_die("epoll_create1: %s", strerror(errno));
	}
}

static void threads_start(void)
{
	for (unsigned t = 0; t < nthreads; t++)
		if (pthread_create(&threads[t].tid, NULL, thread_main, &threads[t]))
			bb_die("pthread_create failed");
}

void sess_run_injector(struct bb *bb)
{
	const struct bb_config *cf = &bb->cf;
	threads_setup(bb);
	for (unsigned i = 0; i < cf->peers + cf->monitors; i++) {
		bool mon = i >= cf->peers;
		unsigned idx = mon ? i - cf->peers : i;
		struct session *s = sess_new(bb, &threads[i % nthreads], mon ? ROLE_MONITOR : ROLE_PEER, idx);
		s->laddr = mon ? bb_monitor_addr(cf, idx) : bb_peer_addr(cf, idx);
		s->asn = mon ? bb_monitor_asn(cf, idx) : bb_peer_asn(cf, idx);
		if (mon && !bb->prop) /* in propagation mode prop.c keeps the state */
			pfx_set_init(&s->set, bb->expect, cf->seed ^ 0x6d6f6eULL ^ idx);
	}
	threads_start();
}

void sess_run_sink(struct bb *bb)
{
	threads_setup(bb);
	for (unsigned t = 0; t < nthreads; t++) {
		/* one listener per thread, SO_REUSEPORT spreads the sessions */
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
		struct sockaddr_in sa = { .sin_family = AF_INET,
					  .sin_port = htons(bb->cf.dut_port),
					  .sin_addr.s_addr = htonl(bb->cf.listen_addr) };
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4096) < 0)
			bb_die("listen on port %u: %s", bb->cf.dut_port, strerror(errno));
		threads[t].lfd = fd;
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &threads[t] };
		if (epoll_ctl(threads[t].epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
			bb_die("epoll_ctl: %s", strerror(errno));
	}
	threads_start();
}

void sess_stop(struct bb *bb)
{
	atomic_store(&bb->stop, 1);
	for (unsigned t = 0; t < nthreads; t++)
		pthread_join(threads[t].tid, NULL);
}
