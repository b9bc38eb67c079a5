/*
 * DOC: BGP-4 wire codec: the whole public interface.
 *
 * Pure functions between bytes and structures; no sockets, no timers, no
 * logging, no global state. The peer loop frames messages with
 * bgp_header_check(), decodes OPEN with bgp_open_decode(), negotiates with
 * bgp_caps_negotiate(), splits UPDATEs with bgp_update_parse() (attributes
 * parsed ONCE into a caller's struct ea_builder, NLRI decoded in batches
 * into caller arrays), and the export side packs prefixes sharing one
 * interned attribute set into full UPDATEs with bgp_update_encode_reach().
 *
 * Input from the wire is hostile: everything is read through struct
 * bgp_cur, whose getters fail instead of reading past ->end, and every
 * failure maps to a NOTIFICATION (struct bgp_error) or, for attributes, to
 * the RFC 7606 treat-as-withdraw / attribute-discard verdicts.
 *
 * ATTRIBUTE STORAGE CONVENTION (the protocol and the filter language rely
 * on it). Every BGP path attribute is an eattr with
 *   id   = EA_CODE(EAP_BGP, code), code = the BGP attribute type code
 *   flags= canonical BGP flags for known attributes (OPTIONAL|TRANSITIVE as
 *          RFC 4271 defines them; never EXT_LEN), the received flags (minus
 *          EXT_LEN) for unknown optional transitive attributes
 * and this type/payload per code:
 *   ORIGIN (1)            EAF_INT        0 IGP, 1 EGP, 2 INCOMPLETE
 *   AS_PATH (2)           EAF_AS_PATH    segments: u8 type, u8 count, then
 *                                        count * u32 ASN in host order
 *                                        (always 4-byte ASNs; 2-byte paths
 *                                        are widened and AS4_PATH merged on
 *                                        input; unaligned: use memcpy)
 *   NEXT_HOP (3)          EAF_IP         1 or 2 ip_addr: the global next hop
 *                                        (IPv4 v4-mapped) and, from
 *                                        MP_REACH, the IPv6 link-local one
 *   MED (4), LOCAL_PREF (5)  EAF_INT
 *   ATOMIC_AGGREGATE (6)  EAF_OPAQUE     empty
 *   AGGREGATOR (7)        EAF_OPAQUE     8 bytes: u32 ASN, u32 router id,
 *                                        host order (AS4_AGGREGATOR merged)
 *   COMMUNITIES (8)       EAF_INT_SET    u32[] host order
 *   ORIGINATOR_ID (9)     EAF_ROUTER_ID  value in eattr.val
 *   CLUSTER_LIST (10)     EAF_INT_SET    u32[] host order
 *   EXT_COMMUNITIES (16)  EAF_EC_SET     u64[] host order (payloads are only
 *                                        4-byte aligned: read with memcpy)
 *   AIGP (26)             EAF_OPAQUE     the TLVs as on the wire (RFC 7311)
 *   LARGE_COMMUNITIES (32) EAF_LC_SET    u32[3 * n] host order
 *   OTC (35)              EAF_INT
 *   unknown optional transitive  EAF_OPAQUE raw value; re-advertised with
 *                                the Partial bit set (RFC 4271 5)
 * MP_REACH/MP_UNREACH (14/15) and AS4_PATH/AS4_AGGREGATOR (17/18) are never
 * stored: they are wire encodings of the above. Unknown optional
 * non-transitive attributes are dropped.
 *
 * Ownership: nothing here allocates except from the linpool a caller hands
 * in; the payloads placed in an ea_builder point into that linpool or into
 * the received message, so both must live until ea_intern().
 */
#ifndef PROTO_BGP_BGP_WIRE_H
#define PROTO_BGP_BGP_WIRE_H

#include <string.h>
#include "lib/birdlib.h"
#include "lib/ip.h"
#include "lib/net.h"
#include "lib/resource.h"
#include "nest/rt_attr.h"

/* ---------------------------------------------------------------- */
/* Messages                                                          */

#define BGP_HEADER_LEN 19
#define BGP_MARKER_LEN 16
#define BGP_MAX_MSG_LEN 4096        /* RFC 4271 */
#define BGP_MAX_EXT_MSG_LEN 65535   /* RFC 8654 */
#define BGP_PORT 179
#define BGP_VERSION 4
#define BGP_AS_TRANS 23456          /* RFC 6793 */

enum bgp_msg_type {
  BGP_MSG_OPEN = 1,
  BGP_MSG_UPDATE = 2,
  BGP_MSG_NOTIFICATION = 3,
  BGP_MSG_KEEPALIVE = 4,
  BGP_MSG_ROUTE_REFRESH = 5,        /* RFC 2918 */
};

/* Minimum total lengths per type (RFC 4271 4.1-4.4, RFC 2918 3). */
#define BGP_MIN_OPEN_LEN 29
#define BGP_MIN_UPDATE_LEN 23
#define BGP_MIN_NOTIFICATION_LEN 21
#define BGP_KEEPALIVE_LEN 19
#define BGP_ROUTE_REFRESH_LEN 23

/* ---------------------------------------------------------------- */
/* Path attributes                                                   */

#define EAP_BGP 1                   /* protocol class of BGP eattr ids */
#define BGP_EA(code) EA_CODE(EAP_BGP, code)
static inline int bgp_ea_is_bgp(u16 id) { return (id >> 8) == EAP_BGP; }
static inline u8 bgp_ea_code(u16 id) { return id & 0xff; }

enum bgp_attr_code {
  BA_ORIGIN = 1,
  BA_AS_PATH = 2,
  BA_NEXT_HOP = 3,
  BA_MULTI_EXIT_DISC = 4,
  BA_LOCAL_PREF = 5,
  BA_ATOMIC_AGGR = 6,
  BA_AGGREGATOR = 7,
  BA_COMMUNITY = 8,                 /* RFC 1997 */
  BA_ORIGINATOR_ID = 9,             /* RFC 4456 */
  BA_CLUSTER_LIST = 10,
  BA_MP_REACH_NLRI = 14,            /* RFC 4760 */
  BA_MP_UNREACH_NLRI = 15,
  BA_EXT_COMMUNITY = 16,            /* RFC 4360 */
  BA_AS4_PATH = 17,                 /* RFC 6793 */
  BA_AS4_AGGREGATOR = 18,
  BA_IPV6_EXT_COMMUNITY = 25,       /* RFC 5701: passed through as unknown */
  BA_AIGP = 26,                     /* RFC 7311, bgp_aigp.c */
  BA_LARGE_COMMUNITY = 32,          /* RFC 8092 */
  BA_OTC = 35,                      /* RFC 9234 */
};

/* Attribute flags (RFC 4271 4.3). */
#define BAF_OPTIONAL 0x80
#define BAF_TRANSITIVE 0x40
#define BAF_PARTIAL 0x20
#define BAF_EXT_LEN 0x10

enum bgp_origin { ORIGIN_IGP = 0, ORIGIN_EGP = 1, ORIGIN_INCOMPLETE = 2 };

/* AS_PATH segment types (RFC 4271 4.3, RFC 5065). */
#define AS_PATH_SET 1
#define AS_PATH_SEQUENCE 2
#define AS_PATH_CONFED_SEQUENCE 3
#define AS_PATH_CONFED_SET 4
#define AS_PATH_MAXSEG 255

/* Well-known communities (RFC 1997, RFC 7999, RFC 8326). */
#define BGP_COMM_NO_EXPORT 0xFFFFFF01
#define BGP_COMM_NO_ADVERTISE 0xFFFFFF02
#define BGP_COMM_NO_EXPORT_SUBCONFED 0xFFFFFF03
#define BGP_COMM_GRACEFUL_SHUTDOWN 0xFFFF0000
#define BGP_COMM_BLACKHOLE 0xFFFF029A
#define BGP_COMM_LLGR_STALE 0xFFFF0006
#define BGP_COMM_NO_LLGR 0xFFFF0007

/* ---------------------------------------------------------------- */
/* Address families                                                  */

#define BGP_AFI_IPV4 1
#define BGP_AFI_IPV6 2
#define BGP_SAFI_UNICAST 1

/* Index of the address families this codec carries. */
enum bgp_af {
  BGP_AF_IPV4 = 0,
  BGP_AF_IPV6 = 1,
  BGP_AF_MAX = 2,
};

/* BGP_AF_* for an AFI/SAFI pair, or -1 when we do not carry it. */
static inline int bgp_af_index(u16 afi, u8 safi)
{
  if (safi != BGP_SAFI_UNICAST)
    return -1;
  return afi == BGP_AFI_IPV4 ? BGP_AF_IPV4 : afi == BGP_AFI_IPV6 ? BGP_AF_IPV6 : -1;
}
static inline u16 bgp_af_afi(enum bgp_af af) { return af == BGP_AF_IPV4 ? BGP_AFI_IPV4 : BGP_AFI_IPV6; }
static inline u8 bgp_af_net_type(enum bgp_af af) { return af == BGP_AF_IPV4 ? NET_IP4 : NET_IP6; }
/* The family of a channel's net type (NET_IP4 or NET_IP6). */
static inline enum bgp_af bgp_net_af(uint net_type) { return net_type == NET_IP4 ? BGP_AF_IPV4 : BGP_AF_IPV6; }

/* ---------------------------------------------------------------- */
/* Capabilities (RFC 5492 and the ones named)                        */

enum bgp_cap_code {
  BGP_CAP_MP = 1,                   /* RFC 4760 */
  BGP_CAP_ROUTE_REFRESH = 2,        /* RFC 2918 */
  BGP_CAP_EXT_NEXT_HOP = 5,         /* RFC 8950 */
  BGP_CAP_EXT_MESSAGE = 6,          /* RFC 8654 */
  BGP_CAP_ROLE = 9,                 /* RFC 9234 */
  BGP_CAP_GR = 64,                  /* RFC 4724 */
  BGP_CAP_AS4 = 65,                 /* RFC 6793 */
  BGP_CAP_ADD_PATH = 69,            /* RFC 7911 */
  BGP_CAP_ENHANCED_RR = 70,         /* RFC 7313 */
  BGP_CAP_LLGR = 71,                /* RFC 9494 */
  BGP_CAP_HOSTNAME = 73,            /* draft-walton-bgp-hostname-capability */
  BGP_CAP_ROUTE_REFRESH_OLD = 128,  /* pre-standard Cisco code, same meaning */
};

#define BGP_OPT_PARAM_CAPS 2
#define BGP_OPT_PARAM_EXT 255       /* RFC 9072 extended optional parameters */

/* ADD-PATH directions, as the capability encodes them (RFC 7911 4). */
#define BGP_ADD_PATH_RX 1
#define BGP_ADD_PATH_TX 2

/* Graceful restart (RFC 4724 3, RFC 8538 2). */
#define BGP_GRF_RESTART 0x8         /* R: the sender has restarted */
#define BGP_GRF_NOTIFICATION 0x4    /* N: GR also after NOTIFICATION */
#define BGP_GR_AF_PRESENT 0x1       /* bgp_caps.gr_af[] bits (ours) */
#define BGP_GR_AF_FORWARDING 0x2    /* F bit: forwarding state preserved */
#define BGP_LLGR_AF_PRESENT 0x1
#define BGP_LLGR_AF_FORWARDING 0x2

/* BGP roles (RFC 9234 4.1). */
enum bgp_role {
  BGP_ROLE_PROVIDER = 0,
  BGP_ROLE_RS = 1,
  BGP_ROLE_RS_CLIENT = 2,
  BGP_ROLE_CUSTOMER = 3,
  BGP_ROLE_PEER = 4,
  BGP_ROLE_NONE = 255,              /* not announced */
};

#define BGP_HOSTNAME_MAX 255

/* What one side announced in its OPEN (for the local side: what to send). */
struct bgp_caps {
  bool mp[BGP_AF_MAX];              /* multiprotocol AFI/SAFI announced */
  bool mp_any;                      /* any MP capability at all (even for an AF we do not carry) */
  bool route_refresh;
  bool enhanced_refresh;
  bool ext_messages;
  bool ext_next_hop[BGP_AF_MAX];    /* only IPv4 NLRI over IPv6 next hop is defined */
  bool as4;
  u32 as4_number;
  u8 add_path[BGP_AF_MAX];          /* BGP_ADD_PATH_RX | BGP_ADD_PATH_TX */
  bool gr;
  u8 gr_flags;                      /* BGP_GRF_* */
  u16 gr_time;                      /* seconds, 12 bits */
  u8 gr_af[BGP_AF_MAX];             /* BGP_GR_AF_* */
  bool llgr;
  u8 llgr_af[BGP_AF_MAX];           /* BGP_LLGR_AF_* */
  u32 llgr_time[BGP_AF_MAX];        /* seconds, 24 bits */
  u8 role;                          /* enum bgp_role, BGP_ROLE_NONE if absent */
  bool role_strict;                 /* local only: refuse peers without a role */
  bool mp_mandatory[BGP_AF_MAX];    /* local only: `mandatory` channels */
  bool role_conflict;               /* remote only: several different roles sent */
  char hostname[BGP_HOSTNAME_MAX + 1];   /* "" if absent; non-printables -> '?' */
  char domain[BGP_HOSTNAME_MAX + 1];
  u16 unknown;                      /* capabilities we ignored (RFC 5492 3) */
};

struct bgp_open_msg {
  u8 version;
  u16 my_as;                        /* the 2-byte field as sent */
  u16 hold_time;
  u32 router_id;
  u32 peer_as;                      /* decoded: AS4 capability ASN or my_as */
  struct bgp_caps caps;
};

/* The result of negotiation: what the session may use. */
struct bgp_session_caps {
  bool af[BGP_AF_MAX];              /* address families both sides carry */
  bool as4;
  bool route_refresh;               /* the peer accepts ROUTE-REFRESH */
  bool enhanced_refresh;            /* both: BoRR/EoRR (RFC 7313) */
  u8 add_path[BGP_AF_MAX];          /* RX: path ids arrive; TX: we send them */
  bool ext_next_hop[BGP_AF_MAX];    /* both announced RFC 8950 for the AF */
  u32 rx_max_len;                   /* RFC 8654: 65535 when both announced extended */
  u32 tx_max_len;                   /* messages, else 4096 (same both ways) */
  bool gr_peer;                     /* the peer is GR aware */
  bool gr_peer_restarting;          /* R bit */
  bool gr_peer_notification;        /* N bit, both sides (RFC 8538) */
  u16 gr_peer_time;
  u8 gr_peer_af[BGP_AF_MAX];        /* BGP_GR_AF_*, for negotiated AFs */
  bool llgr_peer;
  u32 llgr_peer_time[BGP_AF_MAX];
  u8 llgr_peer_af[BGP_AF_MAX];
  u8 local_role, peer_role;
};

/* ---------------------------------------------------------------- */
/* NOTIFICATION codes and subcodes                                   */

enum bgp_err_code {
  BGP_ERR_HEADER = 1,
  BGP_ERR_OPEN = 2,
  BGP_ERR_UPDATE = 3,
  BGP_ERR_HOLD_TIMER = 4,
  BGP_ERR_FSM = 5,
  BGP_ERR_CEASE = 6,
  BGP_ERR_ROUTE_REFRESH = 7,        /* RFC 7313 */
};

/* 1: Message Header Error (RFC 4271 6.1) */
#define BGP_ERR_HDR_NOT_SYNC 1
#define BGP_ERR_HDR_BAD_LENGTH 2
#define BGP_ERR_HDR_BAD_TYPE 3
/* 2: OPEN Message Error (RFC 4271 6.2, RFC 5492, RFC 9234) */
#define BGP_ERR_OPEN_UNSPECIFIC 0
#define BGP_ERR_OPEN_BAD_VERSION 1
#define BGP_ERR_OPEN_BAD_PEER_AS 2
#define BGP_ERR_OPEN_BAD_BGP_ID 3
#define BGP_ERR_OPEN_UNSUP_OPT_PARAM 4
#define BGP_ERR_OPEN_BAD_HOLD_TIME 6
#define BGP_ERR_OPEN_UNSUP_CAPABILITY 7
#define BGP_ERR_OPEN_ROLE_MISMATCH 11
/* 3: UPDATE Message Error (RFC 4271 6.3) */
#define BGP_ERR_UPD_MALFORMED_ATTR_LIST 1
#define BGP_ERR_UPD_UNRECOGNIZED_WELL_KNOWN 2
#define BGP_ERR_UPD_MISSING_WELL_KNOWN 3
#define BGP_ERR_UPD_ATTR_FLAGS 4
#define BGP_ERR_UPD_ATTR_LENGTH 5
#define BGP_ERR_UPD_INVALID_ORIGIN 6
#define BGP_ERR_UPD_INVALID_NEXT_HOP 8
#define BGP_ERR_UPD_OPTIONAL_ATTR 9
#define BGP_ERR_UPD_INVALID_NETWORK 10
#define BGP_ERR_UPD_MALFORMED_AS_PATH 11
/* 5: FSM Error (RFC 6608) */
#define BGP_ERR_FSM_UNSPECIFIC 0
#define BGP_ERR_FSM_IN_OPENSENT 1
#define BGP_ERR_FSM_IN_OPENCONFIRM 2
#define BGP_ERR_FSM_IN_ESTABLISHED 3
/* 6: Cease (RFC 4486, RFC 8538) */
#define BGP_ERR_CEASE_MAX_PREFIXES 1
#define BGP_ERR_CEASE_ADMIN_SHUTDOWN 2
#define BGP_ERR_CEASE_PEER_DECONFIGURED 3
#define BGP_ERR_CEASE_ADMIN_RESET 4
#define BGP_ERR_CEASE_CONNECTION_REJECTED 5
#define BGP_ERR_CEASE_CONFIG_CHANGE 6
#define BGP_ERR_CEASE_COLLISION 7
#define BGP_ERR_CEASE_OUT_OF_RESOURCES 8
#define BGP_ERR_CEASE_HARD_RESET 9
#define BGP_ERR_CEASE_BFD_DOWN 10
/* 7: ROUTE-REFRESH Message Error (RFC 7313 5) */
#define BGP_ERR_RR_INVALID_LENGTH 1

/* A NOTIFICATION to send (or one received). Data points into the message
 * it was found in, or, when NULL, is the first len bytes of own[]. */
struct bgp_error {
  u8 code, subcode;
  u16 len;
  const u8 *data;
  u8 own[8];
  const char *reason;               /* static text for the log, may be NULL */
};

static inline const u8 *bgp_error_data(const struct bgp_error *e)
{ return e->data ? e->data : e->own; }

static inline void bgp_error_set(struct bgp_error *e, u8 code, u8 subcode, const u8 *data, uint len,
                                 const char *reason)
{
  e->code = code;
  e->subcode = subcode;
  e->data = data;
  e->len = len > 0xffff ? 0xffff : len;
  e->reason = reason;
}

/* ---------------------------------------------------------------- */
/* Bounds-checked read cursor                                        */

struct bgp_cur {
  const u8 *p, *end;
};

/* NULL with length 0 makes an empty cursor (NULL + 0 is undefined in C). */
static inline struct bgp_cur bgp_cur_init(const u8 *p, size_t len) { return (struct bgp_cur){ p, p ? p + len : p }; }
static inline size_t bgp_cur_left(const struct bgp_cur *c) { return (size_t) (c->end - c->p); }
static inline bool bgp_cur_empty(const struct bgp_cur *c) { return c->p >= c->end; }

/* Getters: on short input they return false and leave the cursor alone. */
static inline bool bgp_get_u8(struct bgp_cur *c, u8 *v)
{
  if (c->p >= c->end)
    return false;
  *v = *c->p++;
  return true;
}

static inline bool bgp_get_u16(struct bgp_cur *c, u16 *v)
{
  if (bgp_cur_left(c) < 2)
    return false;
  *v = (u16) ((c->p[0] << 8) | c->p[1]);
  c->p += 2;
  return true;
}

static inline bool bgp_get_u24(struct bgp_cur *c, u32 *v)
{
  if (bgp_cur_left(c) < 3)
    return false;
  *v = ((u32) c->p[0] << 16) | ((u32) c->p[1] << 8) | c->p[2];
  c->p += 3;
  return true;
}

static inline bool bgp_get_u32(struct bgp_cur *c, u32 *v)
{
  if (bgp_cur_left(c) < 4)
    return false;
  *v = ((u32) c->p[0] << 24) | ((u32) c->p[1] << 16) | ((u32) c->p[2] << 8) | c->p[3];
  c->p += 4;
  return true;
}

/* Take the next n bytes as a pointer (no copy). */
static inline bool bgp_get_bytes(struct bgp_cur *c, size_t n, const u8 **out)
{
  if (bgp_cur_left(c) < n)
    return false;
  *out = c->p;
  c->p += n;
  return true;
}

/* Take the next n bytes as a cursor of their own. */
static inline bool bgp_get_sub(struct bgp_cur *c, size_t n, struct bgp_cur *sub)
{
  if (bgp_cur_left(c) < n)
    return false;
  *sub = bgp_cur_init(c->p, n);
  c->p += n;
  return true;
}

static inline bool bgp_skip(struct bgp_cur *c, size_t n)
{
  if (bgp_cur_left(c) < n)
    return false;
  c->p += n;
  return true;
}

/* Unchecked big-endian helpers for buffers whose size was checked before. */
static inline u16 bgp_load16(const u8 *p) { return (u16) ((p[0] << 8) | p[1]); }
static inline u32 bgp_load32(const u8 *p)
{ return ((u32) p[0] << 24) | ((u32) p[1] << 16) | ((u32) p[2] << 8) | p[3]; }
static inline void bgp_store16(u8 *p, u16 v) { p[0] = v >> 8; p[1] = (u8) v; }
static inline void bgp_store32(u8 *p, u32 v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = (u8) v; }
/* Host-order u32 at an unaligned address (AS_PATH payloads). */
static inline u32 bgp_get_host32(const u8 *p) { u32 v; memcpy(&v, p, 4); return v; }
static inline void bgp_put_host32(u8 *p, u32 v) { memcpy(p, &v, 4); }

/* ---------------------------------------------------------------- */
/* Header, KEEPALIVE, NOTIFICATION, ROUTE-REFRESH (bgp_update.c)     */

/*
 * Check the 19-byte header at buf (avail >= BGP_HEADER_LEN bytes present).
 * max_len is the negotiated receive limit (4096, or 65535 with extended
 * messages; OPEN and KEEPALIVE stay within 4096 by RFC 8654 3). On success
 * returns 0 with the total message length and type; on error -1 with the
 * NOTIFICATION in err (Connection Not Synchronized; Bad Message Length with
 * the length field as data; Bad Message Type with the type as data).
 */
int bgp_header_check(const u8 *buf, uint max_len, uint *msg_len, u8 *type, struct bgp_error *err);

/* Write a header for a message of total length len; returns BGP_HEADER_LEN. */
uint bgp_header_put(u8 *buf, uint len, u8 type);

/* Each encoder returns the total message length, or 0 if size is too small. */
uint bgp_keepalive_encode(u8 *buf, uint size);
/* Data is truncated to what fits in max_len (RFC 4271 does not forbid it,
 * and a NOTIFICATION that cannot be sent helps nobody). */
uint bgp_notification_encode(u8 *buf, uint size, uint max_len, const struct bgp_error *e);
/* body/len: the message after the header. Data points into body. */
int bgp_notification_decode(const u8 *body, uint len, struct bgp_error *out);
/* RFC 8203/9003 shutdown communication of a Cease/2 or Cease/4 as text
 * (control characters replaced); returns 0 when there is none. */
int bgp_notification_shutdown_msg(const struct bgp_error *e, char *buf, uint size);

enum bgp_rr_subtype {
  BGP_RR_NORMAL = 0,
  BGP_RR_BEGIN = 1,                 /* BoRR, RFC 7313 */
  BGP_RR_END = 2,                   /* EoRR */
};
struct bgp_route_refresh {
  u16 afi;
  u8 subtype;
  u8 safi;
};
uint bgp_route_refresh_encode(u8 *buf, uint size, const struct bgp_route_refresh *rr);
/* 0 ok, 1 ignore (unknown subtype, RFC 7313 5), -1 error in err (the data of
 * a ROUTE-REFRESH length error is the whole message: pass msg/msg_len). */
int bgp_route_refresh_decode(const u8 *msg, uint msg_len, struct bgp_route_refresh *rr,
                             struct bgp_error *err);

/* ---------------------------------------------------------------- */
/* OPEN and capabilities (bgp_open.c)                                */

void bgp_caps_init(struct bgp_caps *c);
/* Whole OPEN message (header included) from m; 0 if it does not fit. */
uint bgp_open_encode(u8 *buf, uint size, const struct bgp_open_msg *m);
/*
 * Decode an OPEN body (after the header). Validates version 4, hold time 0
 * or >= 3, nonzero BGP identifier, peer AS nonzero (RFC 7607), optional
 * parameter types and capability lengths; returns 0 or -1 with err.
 * Checking the peer AS against the configured one is the caller's job.
 */
int bgp_open_decode(const u8 *body, uint len, struct bgp_open_msg *m, struct bgp_error *err);
/* Returns 0, or a NOTIFICATION subcode (OPEN error, BGP_ERR_OPEN_ROLE_MISMATCH)
 * with err filled. */
int bgp_caps_negotiate(const struct bgp_caps *local, const struct bgp_caps *remote,
                       struct bgp_session_caps *out, struct bgp_error *err);

/* ---------------------------------------------------------------- */
/* Path attributes (bgp_attrs.c)                                     */

/* What the receive side of a session needs to know; all pure data. */
struct bgp_rx_ctx {
  bool as4;                         /* 4-byte ASNs in AS_PATH/AGGREGATOR */
  bool ebgp;                        /* peer AS differs from ours (confed members too) */
  bool confed;                      /* peer in our confederation: treated as internal
                                       for LOCAL_PREF (RFC 5065), confed segments ok */
  bool af[BGP_AF_MAX];              /* negotiated families; MP attrs for others are discarded */
  bool add_path[BGP_AF_MAX];        /* path ids precede NLRI */
  bool ext_next_hop[BGP_AF_MAX];    /* IPv6 next hop for IPv4 NLRI allowed */
  u32 local_as, peer_as;
};

enum bgp_attr_verdict {
  BGP_ATTR_OK = 0,
  BGP_ATTR_TREAT_AS_WITHDRAW,       /* all NLRI of the UPDATE are withdrawals */
  BGP_ATTR_SESSION_RESET,           /* send err as NOTIFICATION */
};

/* An MP_REACH/MP_UNREACH found in the attributes. */
struct bgp_mp_part {
  bool present;
  bool ignored;                     /* AFI/SAFI not negotiated: attribute discarded */
  u16 afi;
  u8 safi;
  u8 af;                            /* enum bgp_af when !ignored */
  struct bgp_cur nlri;
};

struct bgp_attrs {
  enum bgp_attr_verdict verdict;
  struct bgp_error err;             /* SESSION_RESET: to send; else the first problem, for logs */
  u16 discarded;                    /* attributes dropped by "attribute discard" */
  u16 count;                        /* attributes seen on the wire */
  bool has_next_hop;                /* NEXT_HOP attribute (body NLRI) */
  bool local_pref_seen;             /* LOCAL_PREF on the wire, even if dropped */
  ip_addr next_hop;
  struct bgp_mp_part mp_reach, mp_unreach;
  u8 mp_nh_count;                   /* 1 or 2 (global, link-local) */
  ip_addr mp_nh[2];
};

/*
 * Parse the path attribute block of one UPDATE into b (freshly
 * ea_builder_init()ed by the caller) and r. nlri_present tells whether the
 * body carries IPv4 NLRI (NEXT_HOP is mandatory then). Payloads point into
 * attrs or lp. The builder holds the body NEXT_HOP if there was one; call
 * bgp_attrs_use_mp_next_hop() before interning for MP_REACH NLRI.
 * Returns r->verdict.
 */
enum bgp_attr_verdict bgp_attrs_parse(const struct bgp_rx_ctx *ctx, linpool *lp, const u8 *attrs, uint len,
                                      bool nlri_present, struct ea_builder *b, struct bgp_attrs *r);
/* Empty result (what bgp_attrs_parse() starts from; fields not named in
 * it are valid only when their flags say so). */
void bgp_attrs_reset(struct bgp_attrs *r);
/* Replace the NEXT_HOP eattr by the MP_REACH next hop(s) of r; r must stay
 * where it is until ea_intern(). */
void bgp_attrs_use_mp_next_hop(struct ea_builder *b, const struct bgp_attrs *r);

struct bgp_tx_ctx {
  bool as4;                         /* peer is 4-byte capable */
  bool add_path[BGP_AF_MAX];        /* we send path ids */
  bool ext_next_hop[BGP_AF_MAX];    /* IPv4 NLRI may carry an IPv6 next hop */
  uint max_len;                     /* negotiated tx_max_len */
};

/*
 * Encode the BGP attributes of l (all EAP_BGP eattrs but NEXT_HOP, which
 * the caller places as NEXT_HOP or MP_REACH) to wire form, narrowing
 * AS_PATH/AGGREGATOR for 2-byte peers with AS_TRANS plus AS4_PATH /
 * AS4_AGGREGATOR (RFC 6793 4.2.2). with_next_hop adds the IPv4 NEXT_HOP
 * attribute. Returns bytes written or -1 if size is too small or an
 * attribute is unencodable (wrong payload shape).
 */
int bgp_attrs_encode(const struct bgp_tx_ctx *ctx, const struct ea_list *l, bool with_next_hop, u8 *buf,
                     uint size);

/* AS_PATH helpers on the internal format (see the convention above). */
bool bgp_as_path_valid(const u8 *p, uint len);
/* Path length for best path selection: a set counts 1, confed segments 0. */
uint bgp_as_path_length(const u8 *p, uint len);
/* Leftmost ASN of the path past its confederation segments if an
 * AS_SEQUENCE starts there, else 0 (RFC 4271 9.1.2.2 c's neighbor AS). */
u32 bgp_as_path_first_as(const u8 *p, uint len);
bool bgp_as_path_contains(const u8 *p, uint len, u32 asn);
/* New path with asn prepended into lp (count times), its length in *out_len. */
u8 *bgp_as_path_prepend(linpool *lp, const u8 *p, uint len, u32 asn, uint count, uint *out_len);
/* Likewise once into a leading AS_CONFED_SEQUENCE (RFC 5065 4, toward members). */
u8 *bgp_as_path_prepend_confed(linpool *lp, const u8 *p, uint len, u32 asn, uint *out_len);
/* How many times asn occurs in the path (`allow local as N`). */
uint bgp_as_path_count(const u8 *p, uint len, u32 asn);
/* Leftmost ASN when the path starts with AS_SEQUENCE or AS_CONFED_SEQUENCE,
 * else 0: the neighbor's own AS for `enforce first as`. */
u32 bgp_as_path_first_hop(const u8 *p, uint len);
bool bgp_as_path_has_confed(const u8 *p, uint len);
/* Offset of the first AS_SET segment, -1 if none. */
int bgp_as_path_set_at(const u8 *p, uint len);
/* Copy without AS_CONFED_* segments into lp (RFC 5065 4.1, toward true eBGP). */
u8 *bgp_as_path_strip_confed(linpool *lp, const u8 *p, uint len, uint *out_len);

/* ---------------------------------------------------------------- */
/* AIGP (bgp_aigp.c)                                                 */

#define BGP_AIGP_MAX UINT64_MAX     /* the total metric of a route without AIGP */

/* NULL if the TLVs of a received AIGP are well framed, else why not. */
const char *bgp_aigp_check(const u8 *v, uint len);
/* The metric of the first AIGP TLV, false without one. */
bool bgp_aigp_metric(const u8 *v, uint len, u64 *metric);
/* A copy in lp with that metric set (an AIGP TLV added first if none). */
u8 *bgp_aigp_set_metric(linpool *lp, const u8 *v, uint len, u64 metric, uint *out_len);
/* Best path: the route's metric plus the distance to its next hop (its IGP
 * metric, at least 1), BGP_AIGP_MAX without AIGP. */
u64 bgp_aigp_total(const struct ea_list *a);
/* An export of route attributes a with our next hop, AIGP allowed: b gets
 * the total metric, or with originate a new AIGP for a route of another
 * protocol with a known IGP metric. Payload from lp. */
void bgp_aigp_export(struct ea_builder *b, const struct ea_list *a, bool originate, linpool *lp);

/* ---------------------------------------------------------------- */
/* UPDATE framing and NLRI (bgp_update.c)                            */

struct bgp_nlri_iter {
  struct bgp_cur c;
  u8 af;                            /* enum bgp_af */
  bool add_path;
};

/* A received UPDATE, split. */
struct bgp_update {
  struct bgp_cur withdrawn;         /* IPv4 withdrawn routes field */
  struct bgp_cur attrs;             /* path attribute block */
  struct bgp_cur nlri;              /* IPv4 NLRI field */
  struct bgp_attrs a;               /* bgp_attrs_parse() result */
  int eor;                          /* enum bgp_af for End-of-RIB, else -1 */
};

/* Split the UPDATE body (after the header) into its three fields; session
 * reset (Malformed Attribute List) when the lengths do not add up (RFC 7606
 * 4 first paragraph). Returns 0 or -1 with err. */
int bgp_update_split(const u8 *body, uint len, struct bgp_update *u, struct bgp_error *err);

/*
 * Split, detect End-of-RIB (RFC 4724 2: empty UPDATE for IPv4, lone empty
 * MP_UNREACH for others) and parse the attributes. Returns the verdict;
 * on BGP_ATTR_SESSION_RESET u->a.err is the NOTIFICATION. Then walk the
 * NLRI with the iterators below: withdrawn (body), MP_UNREACH, and reach
 * (body, MP_REACH), which are withdrawals too on TREAT_AS_WITHDRAW.
 */
enum bgp_attr_verdict bgp_update_parse(const struct bgp_rx_ctx *ctx, linpool *lp, const u8 *body, uint len,
                                       struct ea_builder *b, struct bgp_update *u);

void bgp_nlri_iter_init(struct bgp_nlri_iter *it, struct bgp_cur c, enum bgp_af af, bool add_path);
/* The four NLRI sources of a parsed UPDATE; an absent one yields nothing. */
void bgp_update_withdrawn_iter(const struct bgp_rx_ctx *ctx, const struct bgp_update *u, struct bgp_nlri_iter *it);
void bgp_update_reach_iter(const struct bgp_rx_ctx *ctx, const struct bgp_update *u, struct bgp_nlri_iter *it);
void bgp_update_mp_unreach_iter(const struct bgp_rx_ctx *ctx, const struct bgp_update *u, struct bgp_nlri_iter *it);
void bgp_update_mp_reach_iter(const struct bgp_rx_ctx *ctx, const struct bgp_update *u, struct bgp_nlri_iter *it);

/*
 * Decode up to max prefixes into nets[] (and path_ids[] when non-NULL;
 * 0 without ADD-PATH). Host bits beyond the prefix length are cleared.
 * Returns the number decoded (0 when exhausted) or -1 with err: a prefix
 * length beyond the family maximum or a prefix overrunning its field is a
 * session reset (RFC 7606 5.3, Invalid Network Field). A caller that
 * applies batches as it goes may have applied some prefixes of the UPDATE
 * before the error; the session reset flushes the peer's routes anyway.
 */
int bgp_nlri_decode(struct bgp_nlri_iter *it, net_addr *nets, u32 *path_ids, uint max, struct bgp_error *err);
/* Check a whole NLRI field without storing (for callers that want all or nothing). */
int bgp_nlri_validate(struct bgp_nlri_iter it, uint *count, struct bgp_error *err);

/*
 * Encode one UPDATE announcing as many of nets[0..n) (one family af, path
 * ids from path_ids or 0) as fit in min(size, ctx->max_len), with the
 * attributes of l (its NEXT_HOP eattr is the next hop: IPv4 NLRI with a
 * v4-mapped next hop go in the body, everything else in MP_REACH).
 * Returns the message length and the number of nets consumed in *done, or
 * 0 when not even one prefix fits or the next hop does not suit the family.
 */
uint bgp_update_encode_reach(const struct bgp_tx_ctx *ctx, const struct ea_list *l, enum bgp_af af,
                             const net_addr *nets, const u32 *path_ids, uint n, u8 *buf, uint size, uint *done);
/* Likewise for withdrawals: the body for IPv4, MP_UNREACH otherwise. */
uint bgp_update_encode_withdraw(const struct bgp_tx_ctx *ctx, enum bgp_af af, const net_addr *nets,
                                const u32 *path_ids, uint n, u8 *buf, uint size, uint *done);
/* End-of-RIB marker for af (RFC 4724 2). */
uint bgp_update_encode_eor(enum bgp_af af, u8 *buf, uint size);

#endif
