/*
 * DOC: BGP connections and the session state machine (RFC 4271 8).
 *
 * Everything here runs in the instance's loop. A connection reads whole
 * messages out of its buffer (many per wake-up, bounded by the loop's time
 * budget), writes through a chunk queue with non-blocking sends, and keeps
 * its hold and keepalive timers. The outgoing and the incoming connection
 * may both reach OpenConfirm; collision detection (RFC 4271 6.8) keeps the
 * one opened by the side with the higher BGP identifier.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "proto/bgp/bgp.h"
#include "nest/reconf.h"
#include "lib/log.h"
#include "lib/printf.h"
#include "lib/thread_buf.h"

/* Sessions read into their thread's buffer, with room for two messages
 * of the largest size the session takes, and some: 12 kB a read until
 * extended messages are negotiated. A session keeps only the start of a
 * message that has not all come (c->rbuf), and nothing once a read ends
 * on a message's end: at rest, a hundred sessions held 1.2 MB of
 * buffers of their own. */
static inline uint bgp_rbuf_size(uint max_msg) { return 2 * max_msg + 4096; }
THREAD_BUF(bgp_rx_buf, MEM_PROTOCOLS);

/* The largest message c takes now. */
static uint
bgp_rx_max(const struct bgp_conn *c)
{
  uint max = c->state == BS_ESTABLISHED ? c->p->caps.rx_max_len : 0;
  return max ? max : BGP_MAX_MSG_LEN;
}

/* What is left of a read, len bytes from b: kept by c until its next. */
static void
bgp_rx_keep(struct bgp_conn *c, const u8 *b, uint len)
{
  if (!len || c->rsize < bgp_rx_max(c)) {
    mem_free_shared(MEM_PROTOCOLS, c->rbuf, c->rsize);
    c->rbuf = NULL;
    c->rsize = 0;
  }
  if (len && !c->rbuf) {
    c->rsize = bgp_rx_max(c);
    c->rbuf = mem_alloc_shared(MEM_PROTOCOLS, c->rsize);
  }
  if (len)
    memcpy(c->rbuf, b, len);
  c->rlen = len;
}

static const char *const state_names[] = {
  [BS_IDLE] = "Idle", [BS_CONNECT] = "Connect", [BS_ACTIVE] = "Active", [BS_OPENSENT] = "OpenSent",
  [BS_OPENCONFIRM] = "OpenConfirm", [BS_ESTABLISHED] = "Established", [BS_CLOSE] = "Close",
};

const char *bgp_state_name(enum bgp_conn_state s) { return state_names[s]; }

static void bgp_hold_expired(struct timer *t);
static int bgp_conn_connected(struct bgp_conn *c);
static void bgp_keepalive_fire(struct timer *t);

/* --- Status for the CLI --- */

static void
bgp_show_free_rcu(struct rcu_head *h)
{
  free(caa_container_of(h, struct bgp_show, rcu));
}

void
bgp_update_show(struct bgp_proto *p)
{
  struct bgp_show *s = calloc(1, sizeof(*s));
  if (!s)
    return;
  struct bgp_conn *c = p->conn ? p->conn : (p->out.state >= BS_OPENSENT ? &p->out : p->in.state >= BS_OPENSENT ? &p->in : NULL);
  s->state = p->conn ? BS_ESTABLISHED : c ? c->state : p->start_state;
  bsnprintf(s->last_error, sizeof(s->last_error), "%s", p->last_error);
  s->local_caps = p->local_caps;
  if (c && c->state >= BS_OPENCONFIRM) {
    s->remote_caps = c->remote.caps;
    s->have_remote_caps = 1;
    s->neighbor_id = c->remote.router_id;
    s->hold_expires = c->hold_timer.expires;
    s->keepalive_expires = c->keepalive_timer.expires;
    s->hold_time = c->hold_time;
    s->keepalive_time = c->keepalive_time;
    s->source_addr = c->local_addr;
    s->remote_port = c->remote_port;
    s->outgoing = c->outgoing;
  }
  s->ibgp = p->peer->ibgp;
  s->as4 = p->caps.as4;
  s->start_state = p->start_state;
  s->error_wait = p->error_wait;
  s->connect_expires = p->conn ? 0 : p->connect_timer.expires;
  s->gr_active = p->gr_active_num > 0;
  s->gr_restart_expires = p->conn ? 0 : p->gr_timer.expires;
  for (int af = 0; af < BGP_AF_MAX; af++) {
    s->gr_state[af] = p->ch[af].gr_state;
    s->gr_stale_expires[af] = p->ch[af].stale_timer.expires;
  }
  struct bgp_show *old = rcu_xchg_pointer(&p->show, s);
  if (old)
    call_rcu(&old->rcu, bgp_show_free_rcu);

  const char *name = bgp_state_name(s->state);
  if (s->state == BS_ACTIVE && bgp_cf_passive(p->cf))
    name = "Passive";
  if (p->down_requested)
    name = "Down";
  proto_set_info(&p->p, "%-14s%s", name, p->last_error);
}

/* --- Sending --- */

void
bgp_flush(struct bgp_conn *c)
{
  /* A send that failed inside bgp_send() closed the connection already
   * (a NOTIFICATION to a peer that had reset it): nothing left to flush,
   * and its loop_fd is gone. */
  if (c->fd < 0)
    return;
  int rv = txq_flush(&c->tx, c->fd);
  if (rv < 0) {
    if (c->state == BS_CLOSE)
      return;             /* already closing: the last flush is best effort */
    bsnprintf(c->p->last_error, sizeof(c->p->last_error), "Socket: %m");
    bgp_conn_close(c);
    return;
  }
  loop_fd_want_tx(&c->lfd, rv > 0);
}

void
bgp_send(struct bgp_conn *c, const u8 *msg, uint len)
{
  if (c->fd < 0)
    return;
  txq_append(&c->tx, msg, len);
  /* Keepalives are due at most every keepalive_time; any message counts. */
  if (c->state == BS_ESTABLISHED && c->keepalive_time)
    tm_start(&c->keepalive_timer, (btime) c->keepalive_time * S_ 1);
  /* Batches (the tx hook) flush once at their end; a socket that never
   * refused a write has no writable edge left to wait for, so writing is
   * always tried first and want_tx is set only after EAGAIN. */
  if (txq_queued(&c->tx) > 64 * 1024 || c->state != BS_ESTABLISHED)
    bgp_flush(c);
}

void
bgp_send_now(struct bgp_conn *c, const u8 *msg, uint len)
{
  bgp_send(c, msg, len);
  if (c->fd >= 0)
    bgp_flush(c);
}

static void
bgp_send_keepalive(struct bgp_conn *c)
{
  u8 buf[BGP_KEEPALIVE_LEN];
  bgp_send_now(c, buf, bgp_keepalive_encode(buf, sizeof(buf)));
}

static void
bgp_send_open(struct bgp_conn *c)
{
  struct bgp_proto *p = c->p;
  struct bgp_open_msg m = {
    .version = BGP_VERSION,
    .my_as = p->peer->public_as > 0xffff ? BGP_AS_TRANS : p->peer->public_as,
    .hold_time = p->cf->hold_time,
    .router_id = p->p.pcf->router_id ? p->p.pcf->router_id : config_running()->router_id,
    .peer_as = p->peer->public_as,
    .caps = p->local_caps,
  };
  u8 buf[BGP_MAX_MSG_LEN];
  uint len = bgp_open_encode(buf, sizeof(buf), &m);
  bgp_send(c, buf, len);
  c->state = BS_OPENSENT;
  tm_start(&c->hold_timer, (btime) p->cf->startup_hold_time * S_ 1);
}

/* --- Between sessions (BIRD 2's start states) --- */

/* Connect after the connect delay; a passive neighbor just listens. */
static void
bgp_startup(struct bgp_proto *p)
{
  p->start_state = BS_ACTIVE;
  if (bgp_cf_passive(p->cf))
    tm_stop(&p->connect_timer);
  else
    tm_start(&p->connect_timer, (btime) MAX(p->cf->connect_delay_time, 1) * S_ 1);
}

/* An error ends the run (BIRD's bgp_update_startup_delay): the next one
 * waits, longer with every error that follows soon after another. */
static void
bgp_error_delay(struct bgp_proto *p)
{
  const struct bgp_config *cf = p->cf;
  btime now = time_mono_now();
  if (p->last_proto_error && now - p->last_proto_error >= (btime) cf->error_forget_time * S_ 1)
    p->error_wait = 0;
  p->last_proto_error = now;
  p->error_wait = p->error_wait ? MIN(2 * p->error_wait, cf->error_wait_max) : cf->error_wait_min;
  p->error_pending = 1;
}

/* No connection is left (BIRD's bgp_decision): wait out an error, or go
 * connect again. Incoming connections are refused while waiting. */
static void
bgp_retry(struct bgp_proto *p)
{
  int wait = p->error_pending && p->error_wait;
  p->error_pending = 0;
  if (!wait) {
    bgp_startup(p);
    return;
  }
  p->start_state = BS_IDLE;
  tm_start(&p->connect_timer, (btime) p->error_wait * S_ 1);
}

/* --- Closing --- */

/* Best effort: the connection closes right after. */
static void
bgp_conn_notify(struct bgp_conn *c, const struct bgp_error *e)
{
  u8 buf[BGP_MAX_EXT_MSG_LEN];
  uint len = bgp_notification_encode(buf, sizeof(buf), BGP_MAX_MSG_LEN, e);
  if (len && c->fd >= 0) {
    bgp_send(c, buf, len);
    bgp_flush(c);
  }
}

/* After an error the run ends (BIRD's bgp_stop): a connection still
 * opening goes too, with a Cease. BIRD 2 then restarts the protocol,
 * which shows as a new Since even when the session never came up. */
static void
bgp_conn_close_all(struct bgp_proto *p)
{
  proto_notify_restart(&p->p);
  struct bgp_error e;
  bgp_error_set(&e, BGP_ERR_CEASE, 0, NULL, 0, "Cease");
  struct bgp_conn *cs[] = { &p->out, &p->in };
  for (uint i = 0; i < ARRAY_SIZE(cs); i++) {
    if (cs[i]->state >= BS_OPENSENT)
      bgp_conn_notify(cs[i], &e);
    if (cs[i]->fd >= 0)
      bgp_conn_close(cs[i]);
  }
}

void
bgp_conn_close(struct bgp_conn *c)
{
  struct bgp_proto *p = c->p;
  int was_established = p->conn == c;
  if (c->fd >= 0) {
    c->state = BS_CLOSE;
    if (txq_queued(&c->tx))
      bgp_flush(c);     /* best effort for a pending NOTIFICATION */
    loop_fd_remove(&c->lfd);
    close(c->fd);
    c->fd = -1;
  }
  txq_clear(&c->tx);
  mem_free_shared(MEM_PROTOCOLS, c->rbuf, c->rsize);
  c->rbuf = NULL;
  c->rsize = c->rlen = 0;
  tm_stop(&c->hold_timer);
  tm_stop(&c->keepalive_timer);
  rt_hold_stop(&c->rx_hold);
  c->state = BS_IDLE;
  if (was_established) {
    p->conn = NULL;
    bgp_session_down(p);
  }
  if (p->p.pcf && !p->down_requested && p->out.state == BS_IDLE && p->in.state == BS_IDLE)
    bgp_retry(p);
  bgp_update_show(p);
}

/* Whether what happens on a connection happens to the session: a second
 * connection beside an established one (the loser of a collision, which
 * its peer closes after the Cease) touches neither the session nor its
 * last error. */
static inline int
bgp_conn_speaks(const struct bgp_conn *c)
{
  return !c->p->conn || c == c->p->conn;
}

/* Our NOTIFICATION. As BIRD 2 the last error is "BGP Error: " and the
 * RFC's name of the code; one other than Cease ends the run and delays
 * the next. */
void
bgp_conn_error(struct bgp_conn *c, const struct bgp_error *e, const char *why)
{
  struct bgp_proto *p = c->p;
  int primary = bgp_conn_speaks(c);
  if (c == p->conn)
    p->down_notified = 1;     /* RFC 4724 4: a NOTIFICATION ends GR too */
  if (primary)
    bsnprintf(p->last_error, sizeof(p->last_error), "BGP Error: %s", bgp_err_text(e->code, e->subcode));
  log_rl(&p->rl, L_REMOTE, "%s: %s (code %u/%u)", p->p.name, why, e->code, e->subcode);
  bgp_conn_notify(c, e);
  int fatal = primary && e->code != BGP_ERR_CEASE;
  if (fatal)
    bgp_error_delay(p);
  bgp_conn_close(c);
  if (fatal)
    bgp_conn_close_all(p);
}

static void
bgp_conn_error_code(struct bgp_conn *c, u8 code, u8 subcode, const char *why)
{
  struct bgp_error e;
  bgp_error_set(&e, code, subcode, NULL, 0, why);
  bgp_conn_error(c, &e, why);
}

/* --- Receiving --- */

/* RFC 4724 4.2: a new connection from a neighbor that can restart, while
 * its session is established, means it has restarted without our
 * noticing (no reset reached us). The old session ends as if the
 * connection had dropped: the routes stay, stale, and the new connection
 * proceeds instead of waiting for our hold timer. */
static void
bgp_neighbor_restarted(struct bgp_proto *p)
{
  bsnprintf(p->last_error, sizeof(p->last_error), "Error: Graceful restart");
  log_rl(&p->rl, L_REMOTE, "%s: New connection from an established neighbor: graceful restart", p->p.name);
  bgp_conn_close(p->conn);
}

/* Connection c (NULL: one not yet taken in) beside the established
 * session of a neighbor that can restart: its restart, or the late half
 * of a simultaneous open (RFC 4271 6.8), which the neighbor closes with
 * a Cease once our OPEN reaches it. Only its KEEPALIVE tells which: until
 * then the session stands. */
static int
bgp_maybe_restarted(const struct bgp_proto *p, const struct bgp_conn *c)
{
  return p->conn && p->conn != c && !p->down_requested && bgp_gr_ready(p);
}

static void
bgp_rx_open(struct bgp_conn *c, const u8 *body, uint len)
{
  struct bgp_proto *p = c->p;
  struct bgp_error err;
  if (c->state != BS_OPENSENT) {
    bgp_conn_error_code(c, BGP_ERR_FSM, c->state == BS_OPENCONFIRM ? BGP_ERR_FSM_IN_OPENCONFIRM : BGP_ERR_FSM_IN_ESTABLISHED,
                        "Error: Unexpected OPEN");
    return;
  }
  if (bgp_open_decode(body, len, &c->remote, &err) < 0) {
    bgp_conn_error(c, &err, "Error: Bad OPEN message");
    return;
  }
  if (p->cf->remote_as && c->remote.peer_as != p->cf->remote_as) {
    u8 d[2];
    bgp_store16(d, c->remote.my_as);
    bgp_error_set(&err, BGP_ERR_OPEN, BGP_ERR_OPEN_BAD_PEER_AS, d, 2, "Bad peer AS");
    char why[64];
    bsnprintf(why, sizeof(why), "Error: Bad peer AS: %u", c->remote.peer_as);
    bgp_conn_error(c, &err, why);
    return;
  }
  u32 my_id = p->p.pcf->router_id ? p->p.pcf->router_id : config_running()->router_id;
  if (c->remote.router_id == my_id && !p->peer->ibgp) {
    /* eBGP may share the ID (RFC 6286); iBGP must not. */
  } else if (c->remote.router_id == my_id) {
    bgp_conn_error_code(c, BGP_ERR_OPEN, BGP_ERR_OPEN_BAD_BGP_ID, "Error: Bad BGP identifier");
    return;
  }
  struct bgp_session_caps caps;
  if (bgp_caps_negotiate(&p->local_caps, &c->remote.caps, &caps, &err)) {
    /* BIRD's wording, e.g. "BGP Error: Role mismatch" */
    char why[64];
    bsnprintf(why, sizeof(why), "BGP Error: %s", bgp_err_text(err.code, err.subcode));
    bgp_conn_error(c, &err, why);
    return;
  }

  /* Collision detection (RFC 4271 6.8): an established session stays;
   * of two in OpenConfirm the one the dominant side opened (higher BGP
   * identifier, then higher AS, RFC 6286 2.3) stays. Beside the session
   * of a neighbor that can restart, the new connection goes on to its
   * KEEPALIVE (bgp_rx_keepalive). */
  struct bgp_conn *other = c == &p->out ? &p->in : &p->out;
  if (!bgp_maybe_restarted(p, c) && (other->state == BS_OPENCONFIRM || other->state == BS_ESTABLISHED)) {
    int neighbor_dominant = my_id < c->remote.router_id ||
                            (my_id == c->remote.router_id && p->peer->public_as < c->remote.peer_as);
    struct bgp_conn *loser = other->state == BS_ESTABLISHED || c->outgoing == neighbor_dominant ? c : other;
    bgp_conn_error_code(loser, BGP_ERR_CEASE, BGP_ERR_CEASE_COLLISION, "Error: Connection collision");
    if (loser == c)
      return;
  }

  u32 hold = MIN(p->cf->hold_time, c->remote.hold_time);
  c->hold_time = hold;
  c->keepalive_time = p->cf->keepalive_time ? MIN(p->cf->keepalive_time, hold / 3) : hold / 3;
  c->caps = caps;
  if (!p->conn)
    p->caps = caps;
  c->state = BS_OPENCONFIRM;
  bgp_send_keepalive(c);
  if (hold)
    tm_start(&c->hold_timer, (btime) hold * S_ 1);
  if (c->keepalive_time) {
    c->keepalive_timer.recurrent = (btime) c->keepalive_time * S_ 1;
    tm_start(&c->keepalive_timer, (btime) c->keepalive_time * S_ 1);
  }
  bgp_update_show(p);
}

static void
bgp_rx_keepalive(struct bgp_conn *c)
{
  struct bgp_proto *p = c->p;
  if (c->state == BS_OPENCONFIRM) {
    if (p->conn)                /* beside it: its OPEN passed bgp_maybe_restarted() */
      bgp_neighbor_restarted(p);
    c->state = BS_ESTABLISHED;
    struct bgp_conn *other = c == &p->out ? &p->in : &p->out;
    if (other->state != BS_IDLE)
      bgp_conn_error_code(other, BGP_ERR_CEASE, BGP_ERR_CEASE_COLLISION, "Error: Connection collision");
    p->conn = c;
    p->caps = c->caps;
    p->last_error[0] = 0;
    bgp_session_established(p);
    bgp_update_show(p);
  } else if (c->state != BS_ESTABLISHED)
    bgp_conn_error_code(c, BGP_ERR_FSM, BGP_ERR_FSM_IN_OPENSENT, "Error: Unexpected KEEPALIVE");
}

static void
bgp_rx_notification(struct bgp_conn *c, const u8 *body, uint len)
{
  struct bgp_proto *p = c->p;
  struct bgp_error e;
  bgp_notification_decode(body, len, &e);
  char msg[160] = "";
  bgp_notification_shutdown_msg(&e, msg, sizeof(msg));
  char text[sizeof(p->last_error)];
  bsnprintf(text, sizeof(text), "Received: %s%s%s", bgp_err_text(e.code, e.subcode), *msg ? ": " : "", msg);
  log_rl(&p->rl, L_REMOTE, "%s: %s", p->p.name, text);
  int primary = bgp_conn_speaks(c);
  if (primary)
    strcpy(p->last_error, text);
  if (c == p->conn)
    p->down_notified = 1;
  /* BIRD 2: the neighbor's error other than Cease ends the run as ours do */
  int fatal = primary && e.code != BGP_ERR_CEASE;
  if (fatal)
    bgp_error_delay(p);
  bgp_conn_close(c);
  if (fatal)
    bgp_conn_close_all(p);
}

static void
bgp_rx_route_refresh(struct bgp_conn *c, const u8 *msg, uint len)
{
  struct bgp_proto *p = c->p;
  struct bgp_route_refresh rr;
  struct bgp_error err;
  if (c->state != BS_ESTABLISHED)
    return;
  if (bgp_route_refresh_decode(msg, len, &rr, &err) < 0) {
    bgp_conn_error(c, &err, "Error: Bad ROUTE-REFRESH");
    return;
  }
  int af = bgp_af_index(rr.afi, rr.safi);
  if (af >= 0)
    bgp_gr_rx_route_refresh(p, af, rr.subtype);
}

/* One complete message; returns 0 to go on, -1 if the connection is gone. */
static int
bgp_rx_message(struct bgp_conn *c, const u8 *msg, uint len, u8 type)
{
  struct bgp_proto *p = c->p;
  const u8 *body = msg + BGP_HEADER_LEN;
  uint blen = len - BGP_HEADER_LEN;
  if (c->state == BS_ESTABLISHED && c->hold_time)
    tm_start(&c->hold_timer, (btime) c->hold_time * S_ 1);
  switch (type) {
  case BGP_MSG_OPEN: bgp_rx_open(c, body, blen); break;
  case BGP_MSG_KEEPALIVE: bgp_rx_keepalive(c); break;
  case BGP_MSG_NOTIFICATION: bgp_rx_notification(c, body, blen); break;
  case BGP_MSG_ROUTE_REFRESH: bgp_rx_route_refresh(c, msg, len); break;
  case BGP_MSG_UPDATE:
    if (c->state != BS_ESTABLISHED) {
      bgp_conn_error_code(c, BGP_ERR_FSM, c->state == BS_OPENCONFIRM ? BGP_ERR_FSM_IN_OPENCONFIRM : BGP_ERR_FSM_IN_OPENSENT,
                          "Error: Unexpected UPDATE");
      break;
    }
    bgp_rx_update(c, body, blen);
    break;
  }
  (void) p;
  return c->fd < 0 ? -1 : 0;
}

/* A connection's socket failed: it goes, and the failure is the session's
 * last error if the connection speaks for it. */
static void
bgp_conn_socket_failed(struct bgp_conn *c, const char *what)
{
  struct bgp_proto *p = c->p;
  if (bgp_conn_speaks(c))
    bsnprintf(p->last_error, sizeof(p->last_error), "Socket: %s", what);
  bgp_conn_close(c);
}

/* Import backpressure (nest/rt.h, RT_PRESS_HIGH): while a table we
 * import into has a reader far behind, read nothing more from the peer
 * until the table lets go (rx_wait_ev), for RT_PRESS_HOLD_MAX at most
 * (its keepalives wait in the socket too), then a read; the peer's TCP
 * window closes meanwhile. */
static int
bgp_conn_rx_held(struct bgp_conn *c)
{
  return rt_hold_check(&c->rx_hold, c->state == BS_ESTABLISHED && bgp_import_pressed(c->p, &c->rx_hold.wait));
}

/* The hold is over: its table let go, or RT_PRESS_HOLD_MAX passed. */
static void
bgp_rx_wait_hook(void *data)
{
  struct bgp_conn *c = data;
  if (c->fd >= 0 && rt_hold_held(&c->rx_hold))
    loop_fd_again(&c->lfd, LOOP_FD_READ);
}

static void
bgp_conn_rx(struct loop_fd *f)
{
  struct bgp_conn *c = f->data;
  if (c->state == BS_CONNECT && bgp_conn_connected(c) < 0)
    return;
  for (;;) {
    if (bgp_conn_rx_held(c))
      return;
    /* what is kept is less than a message: a whole one always fits */
    uint size = bgp_rbuf_size(bgp_rx_max(c)), len = c->rlen;
    u8 *buf = thread_buf_get(&bgp_rx_buf, size);
    if (len)
      memcpy(buf, c->rbuf, len);
    ssize_t n = recv(c->fd, buf + len, size - len, MSG_DONTWAIT);
    if (n == 0) {
      bgp_conn_socket_failed(c, "Connection closed");
      return;
    }
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        break;
      bgp_conn_socket_failed(c, strerror(errno));
      return;
    }
    len += (uint) n;
    uint pos = 0;
    while (len - pos >= BGP_HEADER_LEN) {
      uint mlen;
      u8 type;
      struct bgp_error err;
      if (bgp_header_check(buf + pos, bgp_rx_max(c), &mlen, &type, &err) < 0) {
        bgp_conn_error(c, &err, "Error: Bad message header");
        return;
      }
      if (len - pos < mlen)
        break;
      if (bgp_rx_message(c, buf + pos, mlen, type) < 0)
        return;
      pos += mlen;
    }
    bgp_rx_keep(c, buf + pos, len - pos);
    if (loop_budget_left() <= 0) {
      loop_fd_again(f, LOOP_FD_READ);
      loop_yield();
      return;
    }
  }
}

/* An outgoing connect finished (writable, or readable: the peer may send
 * its OPEN before we see the socket writable). Returns 0 if usable. */
static int
bgp_conn_connected(struct bgp_conn *c)
{
  int e = 0;
  socklen_t el = sizeof(e);
  getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &el);
  if (e) {
    bgp_conn_socket_failed(c, strerror(e));
    return -1;
  }
  tm_stop(&c->p->connect_timer);
  bgp_send_open(c);
  bgp_update_show(c->p);
  return 0;
}

static void
bgp_conn_tx(struct loop_fd *f)
{
  struct bgp_conn *c = f->data;
  if (c->state == BS_CONNECT) {
    bgp_conn_connected(c);
    return;
  }
  bgp_flush(c);
  if (c->fd >= 0 && !txq_queued(&c->tx) && c->state == BS_ESTABLISHED)
    ev_schedule(&c->p->tx_ev);
}

static void
bgp_conn_err(struct loop_fd *f)
{
  struct bgp_conn *c = f->data;
  if (c->state == BS_CONNECT) {
    bgp_conn_tx(f);
    return;
  }
  /* the socket's own error, as BIRD prints it ("Connection reset by peer") */
  int e = 0;
  socklen_t el = sizeof(e);
  getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &el);
  bgp_conn_socket_failed(c, strerror(e ? e : ECONNRESET));
}

static void
bgp_conn_attach(struct bgp_conn *c, int fd)
{
  c->fd = fd;
  mem_free_shared(MEM_PROTOCOLS, c->rbuf, c->rsize);
  c->rbuf = NULL;
  c->rsize = c->rlen = 0;
  c->lfd.rx = bgp_conn_rx;
  c->lfd.tx = bgp_conn_tx;
  c->lfd.err = bgp_conn_err;
  c->lfd.data = c;
  struct sockaddr_in6 la;
  socklen_t lalen = sizeof(la);
  if (!getsockname(fd, (struct sockaddr *) &la, &lalen) && la.sin6_family == AF_INET6) {
    c->local_addr = ip6_get((const u8 *) &la.sin6_addr);
    c->local_port = ntohs(la.sin6_port);
  }
  struct sockaddr_in6 ra;
  socklen_t ralen = sizeof(ra);
  if (!getpeername(fd, (struct sockaddr *) &ra, &ralen) && ra.sin6_family == AF_INET6)
    c->remote_port = ntohs(ra.sin6_port);
  loop_fd_add(c->p->p.loop, &c->lfd, fd);
}

static void
bgp_timer_hook_init(struct bgp_proto *p, struct bgp_conn *c)
{
  tm_init(&c->hold_timer, p->p.loop, bgp_hold_expired, c);
  tm_init(&c->keepalive_timer, p->p.loop, bgp_keepalive_fire, c);
  ev_init(&c->rx_wait_ev, bgp_rx_wait_hook, c);
  rt_hold_init(&c->rx_hold, p->p.loop, &c->rx_wait_ev, 0);
}

void
bgp_conn_init(struct bgp_proto *p, struct bgp_conn *c, int outgoing)
{
#ifdef BIRD_SANITIZED
  /* the last run's connection let its hold and event go (rt_hold_init) */
  if (uatomic_read(&c->rx_hold.wait.table) || ev_active(&c->rx_wait_ev))
    bug("%s: bgp_conn_init() of a connection still waiting", p->p.name);
#endif
  memset(c, 0, sizeof(*c));
  c->p = p;
  c->fd = -1;
  c->outgoing = outgoing;
  txq_init(&c->tx, MEM_PROTOCOLS);
  bgp_timer_hook_init(p, c);
}

static void
bgp_hold_expired(struct timer *t)
{
  struct bgp_conn *c = t->data;
  struct bgp_proto *p = c->p;
  /* As BIRD 2: what waits in the socket may be the peer's keepalives,
   * unread because the daemon is busy (a loop's run takes its timers
   * before its sockets) or holds the peer's input back for its table:
   * ten seconds more, while anything does. A silent peer sends nothing. */
  int waiting = 0;
  if (c->fd >= 0 && ioctl(c->fd, FIONREAD, &waiting) == 0 && waiting > 0) {
    tm_start(&c->hold_timer, S_ 10);
    return;
  }
  if (c == p->conn && bgp_llgr_ready(p)) {
    /* As BIRD 2: a silent peer that can restart long-lived gets the
     * chance (graceful restart first, then long-lived) and no last error;
     * a NOTIFICATION would make it flush what it has from us. Without
     * LLGR the hold timer is an error like any other. */
    log_rl(&p->rl, L_REMOTE, "%s: Hold timer expired; entering long-lived graceful restart", p->p.name);
    bgp_conn_close(c);
    return;
  }
  bgp_conn_error_code(c, BGP_ERR_HOLD_TIMER, 0, "Error: Hold timer expired");
}

static void
bgp_keepalive_fire(struct timer *t)
{
  struct bgp_conn *c = t->data;
  if (c->state >= BS_OPENCONFIRM && c->state <= BS_ESTABLISHED)
    bgp_send_keepalive(c);
}

/* --- Connecting --- */

static int
bgp_socket_setup(struct bgp_proto *p, int fd)
{
  const struct bgp_config *cf = p->cf;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  int v4 = ipa_is_ip4(cf->remote_ip);
  int ttl = cf->ttl_security ? 255 : (cf->multihop > 0 ? cf->multihop : (cf->multihop == 0 ? 1 : 64));
  /* GTSM (RFC 5082): we send 255, and take nothing that crossed more hops
   * than allowed (IPv4 TTL, IPv6 hop limit) */
  int min = 256 - (cf->multihop > 0 ? cf->multihop : 1);
  if (v4) {
    setsockopt(fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl));
    if (cf->ttl_security)
      setsockopt(fd, IPPROTO_IP, IP_MINTTL, &min, sizeof(min));
  } else {
    setsockopt(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &ttl, sizeof(ttl));
    if (cf->ttl_security)
      setsockopt(fd, IPPROTO_IPV6, IPV6_MINHOPCOUNT, &min, sizeof(min));
  }
  if (cf->password && bgp_md5_set(fd, cf->remote_ip, -1, cf->password) < 0)
    return -1;
  return 0;
}

int
bgp_md5_set(int fd, ip_addr remote, int pxlen, const char *password)
{
  /* Our sockets are AF_INET6: an IPv4 peer is a v4-mapped address (the
   * kernel takes its prefix length in IPv4 bits). */
  struct tcp_md5sig md = { 0 };
  struct sockaddr_in6 *sa = (struct sockaddr_in6 *) &md.tcpm_addr;
  sa->sin6_family = AF_INET6;
  ip6_put((u8 *) &sa->sin6_addr, remote);
  if (password) {
    md.tcpm_keylen = strlen(password);
    if (md.tcpm_keylen > TCP_MD5SIG_MAXKEYLEN)
      return -1;
    memcpy(md.tcpm_key, password, md.tcpm_keylen);
  }
  int opt = TCP_MD5SIG;
  if (pxlen >= 0) {
    opt = TCP_MD5SIG_EXT;
    md.tcpm_flags = TCP_MD5SIG_FLAG_PREFIX;
    md.tcpm_prefixlen = pxlen;
  }
  return setsockopt(fd, IPPROTO_TCP, opt, &md, sizeof(md));
}

static void
bgp_connect(struct bgp_proto *p)
{
  const struct bgp_config *cf = p->cf;
  struct bgp_conn *c = &p->out;
  if (c->state != BS_IDLE || p->conn)
    return;
  int fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    bsnprintf(p->last_error, sizeof(p->last_error), "Socket: %m");
    return;
  }
  if (bgp_socket_setup(p, fd) < 0) {
    bsnprintf(p->last_error, sizeof(p->last_error), "Socket: Cannot set options: %m");
    close(fd);
    return;
  }
  ip_addr src = cf->local_ip;
  if (ipa_nonzero(src)) {
    struct sockaddr_in6 sa = { .sin6_family = AF_INET6 };
    ip6_put((u8 *) &sa.sin6_addr, src);
    if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
      bsnprintf(p->last_error, sizeof(p->last_error), "Socket: Cannot bind: %m");
      close(fd);
      return;
    }
  }
  struct sockaddr_in6 ra = { .sin6_family = AF_INET6, .sin6_port = htons(cf->remote_port ? cf->remote_port : BGP_PORT) };
  ip6_put((u8 *) &ra.sin6_addr, cf->remote_ip);
  int rv = connect(fd, (struct sockaddr *) &ra, sizeof(ra));
  if (rv < 0 && errno != EINPROGRESS) {
    bsnprintf(p->last_error, sizeof(p->last_error), "Socket: %m");
    close(fd);
    bgp_startup(p);
    bgp_update_show(p);
    return;
  }
  bgp_conn_attach(c, fd);
  c->state = BS_CONNECT;
  p->start_state = BS_CONNECT;
  loop_fd_want_tx(&c->lfd, 1);
  /* A connect that hangs is retried like a refused one. */
  tm_start(&p->connect_timer, (btime) cf->connect_retry_time * S_ 1);
  bgp_update_show(p);
}

static void
bgp_connect_timer(struct timer *t)
{
  struct bgp_proto *p = t->data;
  if (p->start_state == BS_IDLE) {
    bgp_startup(p);           /* the error wait is over */
    bgp_update_show(p);
    return;
  }
  if (p->out.state == BS_CONNECT) {
    bsnprintf(p->last_error, sizeof(p->last_error), "Socket: Connection timed out");
    bgp_conn_close(&p->out);
    return;
  }
  bgp_connect(p);
}

void
bgp_start_connect(struct bgp_proto *p)
{
  tm_init(&p->connect_timer, p->p.loop, bgp_connect_timer, p);
  p->error_pending = 0;
  bgp_startup(p);
  bgp_update_show(p);
}

void
bgp_incoming_hook(void *data)
{
  struct bgp_proto *p = data;
  int fd = __atomic_exchange_n(&p->incoming_fd, -1, __ATOMIC_ACQ_REL);
  if (fd < 0)
    return;
  /* A session on the incoming connection leaves no room for the new one:
   * the restart is taken at once (as BIRD 2 does for any). Beside a
   * session we opened, the new connection takes the place of one that
   * is still opening. */
  if (p->conn == &p->in && bgp_maybe_restarted(p, NULL))
    bgp_neighbor_restarted(p);
  else if (p->in.state != BS_IDLE && bgp_maybe_restarted(p, &p->in))
    bgp_conn_close(&p->in);   /* the newer of two: one that never sent its OPEN holds nothing back */
  if (p->down_requested || p->in.state != BS_IDLE || p->start_state == BS_IDLE) {
    /* One incoming attempt at a time, none while waiting after an error
     * (as BIRD 2). Beside a session we opened, the new connection gets
     * as far as its OPEN, where collision detection closes it, or, from
     * a neighbor that can restart, as far as its KEEPALIVE. */
    close(fd);
    return;
  }
  bgp_socket_setup(p, fd);
  bgp_conn_attach(&p->in, fd);
  bgp_send_open(&p->in);
  bgp_update_show(p);
}
