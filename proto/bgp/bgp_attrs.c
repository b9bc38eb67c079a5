/*
 * DOC: BGP path attributes: parse once into an ea_builder, encode an ea_list.
 *
 * bgp_attrs_parse() walks the attribute block of one UPDATE a single time.
 * Each known attribute has a decoder in bgp_attr_table[]; it validates the
 * value, stores it per the convention in bgp_wire.h and, when the value is
 * malformed, reports the RFC 7606 approach for that attribute: attribute
 * discard, treat-as-withdraw or session reset. The most severe approach
 * wins (RFC 7606 3 h); the walk goes on after a treat-as-withdraw so that a
 * later MP_REACH/MP_UNREACH can still be located and its NLRI withdrawn,
 * and a later session-reset condition still seen.
 *
 * AS_PATH and AGGREGATOR of a 2-byte session are widened to 4-byte ASNs
 * and merged with AS4_PATH / AS4_AGGREGATOR after the walk (RFC 6793
 * 4.2.3), because those may come in any order.
 *
 * bgp_attrs_encode() is the inverse for one interned list and one peer: it
 * narrows to 2-byte ASNs with AS_TRANS plus AS4_* attributes when the peer
 * is not AS4 capable, and sets the Partial bit on unknown optional
 * transitive attributes we pass on (RFC 4271 5).
 *
 * Everything is pure: state lives in struct bgp_parse on the stack,
 * scratch payloads in the caller's linpool.
 *
 * RFC 7606 decisions (W = treat-as-withdraw, D = attribute discard,
 * R = session reset; the decoders cite the section again):
 *   attribute header/length past the block (4)      W; R if it is MP_REACH/
 *                                                   MP_UNREACH, or IPv6/ext-nh
 *                                                   is on and no MP_REACH seen
 *   Optional/Transitive flags wrong (3 c)           W; R for MP_REACH/UNREACH
 *   repeated attribute (3 g)                        D all but the first;
 *                                                   R for MP_REACH/UNREACH
 *   missing ORIGIN/AS_PATH (/NEXT_HOP with body NLRI) with NLRI (3 d)  W
 *   ORIGIN length/value (7.1)                       W
 *   AS_PATH segments, confed from eBGP (7.2)        W
 *   NEXT_HOP length or martian (7.3)                W; ignored without body NLRI
 *   MED length (7.4)                                W
 *   LOCAL_PREF from eBGP (7.5)                      D; length from iBGP: W
 *   ATOMIC_AGGREGATE length (7.6)                   D
 *   AGGREGATOR length (7.7)                         D
 *   COMMUNITIES (7.8), EXT_COMMUNITIES (7.14), LARGE_COMMUNITIES (RFC 8092
 *   6), CLUSTER_LIST (7.10): not a non-zero multiple of the unit      W
 *   ORIGINATOR_ID length (7.9), OTC length (RFC 9234 5)              W
 *   ORIGINATOR_ID/CLUSTER_LIST from eBGP (RFC 4456 8)                D
 *   MP_REACH/MP_UNREACH truncated, next hop length wrong (5.1, 7.11)  R
 *   MP_REACH next hop martian (7.11)                W
 *   MP_* for a family not negotiated (RFC 4760)     D
 *   AS4_PATH/AS4_AGGREGATOR malformed or from an AS4 peer (RFC 6793 6) D
 *   AIGP TLVs or flags malformed (RFC 7311 3.1)      D
 *   unknown well-known (RFC 4271 6.3: R; we W, as BIRD) W
 *   unknown optional non-transitive                 dropped silently
 *   NLRI length > max or overrun (5.3, bgp_update.c)                 R
 *   withdrawn/attribute lengths vs message (4)      R
 */
#include <string.h>

#include "proto/bgp/bgp_wire.h"

/* Scratch for converted payloads: one linpool allocation per UPDATE
 * (linpool calls do accounting, which showed in profiles), bumped here. */
struct bgp_scratch {
  u8 *p, *end;
  linpool *lp;
};

static void *
bgp_scratch(struct bgp_scratch *sc, uint size)
{
  size = ALIGN_UP(size, 4);
  if ((size_t) (sc->end - sc->p) < size)
    return lp_alloc(sc->lp, size);   /* the estimate was short: fall back */
  void *m = sc->p;
  sc->p += size;
  return m;
}

struct bgp_parse {
  const struct bgp_rx_ctx *ctx;
  struct bgp_scratch sc;
  struct ea_builder *b;
  struct bgp_attrs *r;
  bool nlri_present;
  u32 seen[8];                      /* attribute codes met, for duplicates */
  /* the attribute being decoded, header included (NOTIFICATION data) */
  u8 code, flags;
  const u8 *raw;
  uint raw_len;
  /* RFC 6793 4.2.3 inputs, internal format, resolved after the walk */
  u8 *as_path, *as4_path;
  uint as_path_len, as4_path_len;
  bool have_as_path, have_as4_path, have_aggr, have_as4_aggr;
  u32 aggr[2], as4_aggr[2];
};

typedef void bgp_decode_fn(struct bgp_parse *s, const u8 *v, uint len);

struct bgp_attr_desc {
  const char *name;
  u8 flags;                         /* canonical OPTIONAL | TRANSITIVE */
  u8 type;                          /* EAF_* of the stored eattr */
  bgp_decode_fn *decode;
};

static const struct bgp_attr_desc *bgp_attr_desc(u8 code);

/* ---------------------------------------------------------------- */
/* Verdict bookkeeping                                               */

/* Record a problem; keep the first one of the most severe kind (RFC 7606
 * 3 h: the most severe approach is used for the whole UPDATE). */
static void
bgp_note(struct bgp_parse *s, enum bgp_attr_verdict v, u8 subcode, bool with_data, const char *reason)
{
  struct bgp_attrs *r = s->r;
  if (v < r->verdict || (v == r->verdict && r->err.code))
    return;
  r->verdict = v;
  bgp_error_set(&r->err, BGP_ERR_UPDATE, subcode, with_data ? s->raw : NULL, with_data ? s->raw_len : 0,
                reason);
}

static void
bgp_withdraw(struct bgp_parse *s, u8 subcode, const char *reason)
{
  bgp_note(s, BGP_ATTR_TREAT_AS_WITHDRAW, subcode, true, reason);
}

static void
bgp_reset(struct bgp_parse *s, u8 subcode, bool with_data, const char *reason)
{
  bgp_note(s, BGP_ATTR_SESSION_RESET, subcode, with_data, reason);
}

static void
bgp_discard(struct bgp_parse *s, const char *reason)
{
  s->r->discarded++;
  if (s->r->verdict == BGP_ATTR_OK && !s->r->err.reason)
    s->r->err.reason = reason;
}

static inline bool
bgp_seen_test_set(struct bgp_parse *s, u8 code)
{
  u32 bit = 1U << (code & 31);
  bool was = s->seen[code >> 5] & bit;
  s->seen[code >> 5] |= bit;
  return was;
}

static inline bool
bgp_seen(const struct bgp_parse *s, u8 code)
{
  return s->seen[code >> 5] & (1U << (code & 31));
}

static void
bgp_store_int(struct bgp_parse *s, u8 code, u32 val)
{
  const struct bgp_attr_desc *d = bgp_attr_desc(code);
  ea_set_int(s->b, BGP_EA(code), d->type, d->flags, val);
}

static void
bgp_store_data(struct bgp_parse *s, u8 code, const void *data, uint len)
{
  const struct bgp_attr_desc *d = bgp_attr_desc(code);
  ea_set_data(s->b, BGP_EA(code), d->type, d->flags, data, len);
}

/* ---------------------------------------------------------------- */
/* AS_PATH in the internal format                                    */

/*
 * Wire AS_PATH (asn_size 2 or 4) to the internal format in lp. Returns 0,
 * or -1 when malformed by RFC 7606 7.2: unknown segment type, a segment
 * overrunning the attribute, a single octet left over, a zero-length
 * segment. *confed tells whether confederation segments were present.
 */
static int
as_path_from_wire(struct bgp_scratch *sc, const u8 *v, uint len, uint asn_size, u8 **out, uint *out_len, bool *confed)
{
  uint pos = 0, size = 0;
  *confed = false;
  while (pos < len) {
    if (len - pos < 2)
      return -1;
    uint type = v[pos], cnt = v[pos + 1];
    if (type < AS_PATH_SET || type > AS_PATH_CONFED_SET || !cnt || len - pos - 2 < cnt * asn_size)
      return -1;
    if (type == AS_PATH_CONFED_SEQUENCE || type == AS_PATH_CONFED_SET)
      *confed = true;
    pos += 2 + cnt * asn_size;
    size += 2 + cnt * 4;
  }

  u8 *o = bgp_scratch(sc, size);
  *out = o;
  *out_len = size;
  for (pos = 0; pos < len;) {
    uint cnt = v[pos + 1];
    *o++ = v[pos];
    *o++ = cnt;
    pos += 2;
    for (uint i = 0; i < cnt; i++, o += 4, pos += asn_size)
      bgp_put_host32(o, asn_size == 4 ? bgp_load32(v + pos) : bgp_load16(v + pos));
  }
  return 0;
}

bool
bgp_as_path_valid(const u8 *p, uint len)
{
  uint pos = 0;
  while (pos < len) {
    if (len - pos < 2)
      return false;
    uint type = p[pos], cnt = p[pos + 1];
    if (type < AS_PATH_SET || type > AS_PATH_CONFED_SET || !cnt || len - pos - 2 < cnt * 4)
      return false;
    pos += 2 + cnt * 4;
  }
  return true;
}

uint
bgp_as_path_length(const u8 *p, uint len)
{
  uint n = 0;
  for (uint pos = 0; pos + 2 <= len; pos += 2 + p[pos + 1] * 4) {
    if (p[pos] == AS_PATH_SEQUENCE)
      n += p[pos + 1];
    else if (p[pos] == AS_PATH_SET)
      n++;
  }
  return n;
}

u32
bgp_as_path_first_as(const u8 *p, uint len)
{
  /* confederation segments lead the path inside one: past them */
  for (uint pos = 0; pos + 2 <= len; pos += 2 + p[pos + 1] * 4)
    if (p[pos] == AS_PATH_SEQUENCE)
      return p[pos + 1] && pos + 6 <= len ? bgp_get_host32(p + pos + 2) : 0;
    else if (p[pos] != AS_PATH_CONFED_SEQUENCE && p[pos] != AS_PATH_CONFED_SET)
      return 0;
  return 0;
}

bool
bgp_as_path_contains(const u8 *p, uint len, u32 asn)
{
  for (uint pos = 0; pos + 2 <= len; pos += 2 + p[pos + 1] * 4)
    for (uint i = 0; i < p[pos + 1] && pos + 6 + i * 4 <= len; i++)
      if (bgp_get_host32(p + pos + 2 + i * 4) == asn)
        return true;
  return false;
}

/* Prepend count times asn as segments of one sequence type (AS_SEQUENCE, or
 * AS_CONFED_SEQUENCE inside a confederation, RFC 5065 4). */
static u8 *
as_path_prepend_type(linpool *lp, const u8 *p, uint len, u8 type, u32 asn, uint count, uint *out_len)
{
  /* Fill the leading segment of that type up to 255, then start new ones. */
  uint lead = (len >= 2 && p[0] == type) ? p[1] : 0;
  uint total = lead + count;
  uint segs = (total + AS_PATH_MAXSEG - 1) / AS_PATH_MAXSEG;
  uint rest = lead ? len - 2 - lead * 4 : len;
  uint size = segs * 2 + total * 4 + rest;
  u8 *o = lp_alloc(lp, size), *w = o;

  for (uint done = 0; done < total;) {
    uint n = MIN(total - done, AS_PATH_MAXSEG);
    *w++ = type;
    *w++ = n;
    for (uint i = 0; i < n; i++, done++, w += 4)
      bgp_put_host32(w, done < count ? asn : bgp_get_host32(p + 2 + (done - count) * 4));
  }
  memcpy(w, p + (len - rest), rest);
  *out_len = size;
  return o;
}

u8 *
bgp_as_path_prepend(linpool *lp, const u8 *p, uint len, u32 asn, uint count, uint *out_len)
{
  return as_path_prepend_type(lp, p, len, AS_PATH_SEQUENCE, asn, count, out_len);
}

u8 *
bgp_as_path_prepend_confed(linpool *lp, const u8 *p, uint len, u32 asn, uint *out_len)
{
  return as_path_prepend_type(lp, p, len, AS_PATH_CONFED_SEQUENCE, asn, 1, out_len);
}

uint
bgp_as_path_count(const u8 *p, uint len, u32 asn)
{
  uint n = 0;
  for (uint pos = 0; pos + 2 <= len; pos += 2 + p[pos + 1] * 4)
    for (uint i = 0; i < p[pos + 1] && pos + 6 + i * 4 <= len; i++)
      n += bgp_get_host32(p + pos + 2 + i * 4) == asn;
  return n;
}

u32
bgp_as_path_first_hop(const u8 *p, uint len)
{
  if (len >= 6 && (p[0] == AS_PATH_SEQUENCE || p[0] == AS_PATH_CONFED_SEQUENCE) && p[1])
    return bgp_get_host32(p + 2);
  return 0;
}

static inline bool
as_path_seg_confed(u8 type)
{
  return type == AS_PATH_CONFED_SEQUENCE || type == AS_PATH_CONFED_SET;
}

bool
bgp_as_path_has_confed(const u8 *p, uint len)
{
  for (uint pos = 0; pos + 2 <= len; pos += 2 + p[pos + 1] * 4)
    if (as_path_seg_confed(p[pos]))
      return true;
  return false;
}

int
bgp_as_path_set_at(const u8 *p, uint len)
{
  for (uint pos = 0; pos + 2 <= len; pos += 2 + p[pos + 1] * 4)
    if (p[pos] == AS_PATH_SET)
      return pos;
  return -1;
}

u8 *
bgp_as_path_strip_confed(linpool *lp, const u8 *p, uint len, uint *out_len)
{
  u8 *o = lp_alloc(lp, len ? len : 1), *w = o;
  for (uint pos = 0; pos + 2 <= len;) {
    uint seg = 2 + p[pos + 1] * 4;
    if (seg > len - pos)
      break;
    if (!as_path_seg_confed(p[pos])) {
      memcpy(w, p + pos, seg);
      w += seg;
    }
    pos += seg;
  }
  *out_len = (uint) (w - o);
  return o;
}

/*
 * RFC 6793 4.2.3: rebuild the path from AS_PATH (p2, widened, AS_TRANS
 * where the peer had no room) and AS4_PATH (p4). If AS_PATH is shorter,
 * AS4_PATH is ignored (NULL). Otherwise take as many leading ASNs of
 * AS_PATH as make the lengths equal, keeping confederation segments that
 * lead or touch the taken part, and append AS4_PATH.
 */
static u8 *
as_path_merge(struct bgp_scratch *sc, const u8 *p2, uint l2, const u8 *p4, uint l4, uint *out_len)
{
  uint n2 = bgp_as_path_length(p2, l2), n4 = bgp_as_path_length(p4, l4);
  if (n2 < n4)
    return NULL;

  uint need = n2 - n4;
  u8 *o = bgp_scratch(sc, l2 + l4), *w = o, *last_seq = NULL;
  for (uint pos = 0; pos < l2;) {
    uint type = p2[pos], cnt = p2[pos + 1];
    uint take = cnt;
    if (type == AS_PATH_SET || type == AS_PATH_SEQUENCE) {
      if (!need)
        break;
      take = type == AS_PATH_SET ? cnt : MIN(cnt, need);
      need -= type == AS_PATH_SET ? 1 : take;
    }
    last_seq = type == AS_PATH_SEQUENCE ? w : NULL;
    w[0] = type;
    w[1] = take;
    memcpy(w + 2, p2 + pos + 2, take * 4);
    w += 2 + take * 4;
    pos += 2 + cnt * 4;
  }

  /* Join a trailing partial sequence with a leading AS4 sequence, so the
   * result does not depend on where the old speakers were. */
  if (last_seq && l4 >= 2 && p4[0] == AS_PATH_SEQUENCE && last_seq[1] + p4[1] <= AS_PATH_MAXSEG) {
    uint c4 = p4[1];
    memcpy(w, p4 + 2, c4 * 4);
    last_seq[1] += c4;
    w += c4 * 4;
    p4 += 2 + c4 * 4;
    l4 -= 2 + c4 * 4;
  }
  memcpy(w, p4, l4);
  *out_len = (uint) (w - o) + l4;
  return o;
}

/* ---------------------------------------------------------------- */
/* Decoders, one per known attribute                                 */

static void
dec_origin(struct bgp_parse *s, const u8 *v, uint len)
{
  /* RFC 7606 7.1: wrong length or undefined value -> treat-as-withdraw */
  if (len != 1)
    return bgp_withdraw(s, BGP_ERR_UPD_ATTR_LENGTH, "Malformed ORIGIN");
  if (v[0] > ORIGIN_INCOMPLETE)
    return bgp_withdraw(s, BGP_ERR_UPD_INVALID_ORIGIN, "Invalid ORIGIN");
  bgp_store_int(s, BA_ORIGIN, v[0]);
}

static void
dec_as_path(struct bgp_parse *s, const u8 *v, uint len)
{
  bool confed;
  /* RFC 7606 7.2: a malformed AS_PATH -> treat-as-withdraw */
  if (as_path_from_wire(&s->sc, v, len, s->ctx->as4 ? 4 : 2, &s->as_path, &s->as_path_len, &confed) < 0)
    return bgp_withdraw(s, BGP_ERR_UPD_MALFORMED_AS_PATH, "Malformed AS_PATH");
  /* RFC 7606 7.2 with RFC 5065 5: confederation segments from a peer
   * outside our confederation -> treat-as-withdraw */
  if (confed && s->ctx->ebgp && !s->ctx->confed)
    return bgp_withdraw(s, BGP_ERR_UPD_MALFORMED_AS_PATH, "Confederation segments in AS_PATH from eBGP peer");
  s->have_as_path = true;
}

static void
dec_next_hop(struct bgp_parse *s, const u8 *v, uint len)
{
  /* RFC 4760 3: with no IPv4 NLRI in the body the NEXT_HOP is ignored;
   * only MP_REACH's next hop counts then. */
  if (!s->nlri_present)
    return;
  /* RFC 7606 7.3: length other than 4 -> treat-as-withdraw */
  if (len != 4)
    return bgp_withdraw(s, BGP_ERR_UPD_ATTR_LENGTH, "Malformed NEXT_HOP");
  u32 a = bgp_load32(v);
  /* RFC 7606 7.3 / RFC 4271 6.3: a semantically invalid next hop (here:
   * unspecified, multicast or class E; our own address is the protocol's
   * check) -> treat-as-withdraw */
  if (!a || (a >> 28) >= 0xe)
    return bgp_withdraw(s, BGP_ERR_UPD_INVALID_NEXT_HOP, "Invalid NEXT_HOP");
  s->r->has_next_hop = true;
  s->r->next_hop = ipa_from_ip4(ip4_from_u32(a));
  ip_addr *nh = bgp_scratch(&s->sc, sizeof(ip_addr));
  *nh = s->r->next_hop;
  bgp_store_data(s, BA_NEXT_HOP, nh, sizeof(ip_addr));
}

static void
dec_med(struct bgp_parse *s, const u8 *v, uint len)
{
  /* RFC 7606 7.4: length other than 4 -> treat-as-withdraw */
  if (len != 4)
    return bgp_withdraw(s, BGP_ERR_UPD_ATTR_LENGTH, "Malformed MULTI_EXIT_DISC");
  bgp_store_int(s, BA_MULTI_EXIT_DISC, bgp_load32(v));
}

static void
dec_local_pref(struct bgp_parse *s, const u8 *v, uint len)
{
  /* RFC 7606 7.5: length other than 4 -> treat-as-withdraw */
  if (len != 4)
    return bgp_withdraw(s, BGP_ERR_UPD_ATTR_LENGTH, "Malformed LOCAL_PREF");
  bgp_store_int(s, BA_LOCAL_PREF, bgp_load32(v));
}

static void
dec_atomic_aggr(struct bgp_parse *s, const u8 *v, uint len)
{
  /* RFC 7606 7.6: length other than 0 -> attribute discard */
  if (len != 0)
    return bgp_discard(s, "Malformed ATOMIC_AGGREGATE");
  bgp_store_data(s, BA_ATOMIC_AGGR, v, 0);
}

static void
dec_aggregator(struct bgp_parse *s, const u8 *v, uint len)
{
  /* RFC 7606 7.7: length other than 6 (2-byte session) or 8 (AS4) ->
   * attribute discard */
  if (len != (s->ctx->as4 ? 8u : 6u))
    return bgp_discard(s, "Malformed AGGREGATOR");
  s->aggr[0] = s->ctx->as4 ? bgp_load32(v) : bgp_load16(v);
  s->aggr[1] = bgp_load32(v + len - 4);
  s->have_aggr = true;
}

/* Non-empty array of u32 (COMMUNITIES, CLUSTER_LIST), byte-swapped. */
static void
dec_u32_set(struct bgp_parse *s, const u8 *v, uint len)
{
  u32 *out = bgp_scratch(&s->sc, len);
  for (uint i = 0; i < len / 4; i++)
    out[i] = bgp_load32(v + i * 4);
  bgp_store_data(s, s->code, out, len);
}

static void
dec_community(struct bgp_parse *s, const u8 *v, uint len)
{
  /* RFC 7606 7.8: length not a non-zero multiple of 4 -> treat-as-withdraw */
  if (!len || len % 4)
    return bgp_withdraw(s, BGP_ERR_UPD_OPTIONAL_ATTR, "Malformed COMMUNITIES");
  dec_u32_set(s, v, len);
}

static void
dec_originator_id(struct bgp_parse *s, const u8 *v, uint len)
{
  /* RFC 7606 7.9: length other than 4 -> treat-as-withdraw */
  if (len != 4)
    return bgp_withdraw(s, BGP_ERR_UPD_ATTR_LENGTH, "Malformed ORIGINATOR_ID");
  bgp_store_int(s, BA_ORIGINATOR_ID, bgp_load32(v));
}

static void
dec_cluster_list(struct bgp_parse *s, const u8 *v, uint len)
{
  /* RFC 7606 7.10: length not a non-zero multiple of 4 -> treat-as-withdraw */
  if (!len || len % 4)
    return bgp_withdraw(s, BGP_ERR_UPD_ATTR_LENGTH, "Malformed CLUSTER_LIST");
  dec_u32_set(s, v, len);
}

/* MP next hop: global, optionally link-local (RFC 2545 3, RFC 8950 3).
 * Returns false when the length does not suit the family. */
static bool
dec_mp_next_hop(struct bgp_parse *s, u8 af, const u8 *nh, uint nh_len)
{
  struct bgp_attrs *r = s->r;
  if (af == BGP_AF_IPV4 && nh_len == 4) {
    r->mp_nh[0] = ipa_from_ip4(ip4_get(nh));
    r->mp_nh_count = 1;
  } else if ((af == BGP_AF_IPV6 || s->ctx->ext_next_hop[BGP_AF_IPV4]) && (nh_len == 16 || nh_len == 32)) {
    r->mp_nh[0] = ip6_get(nh);
    r->mp_nh_count = nh_len / 16;
    if (nh_len == 32)
      r->mp_nh[1] = ip6_get(nh + 16);
  } else
    return false;
  return true;
}

static bool
bgp_nh_semantic_ok(ip_addr a)
{
  if (ipa_is_ip4(a)) {
    u32 v = ipa_to_ip4(a).addr;
    return v && (v >> 28) < 0xe;
  }
  return !ipa_zero(a) && (a.addr[0] >> 24) != 0xff;
}

static void
dec_mp_reach(struct bgp_parse *s, const u8 *v, uint len)
{
  struct bgp_mp_part *m = &s->r->mp_reach;
  struct bgp_cur c = bgp_cur_init(v, len);
  u8 nh_len, reserved;
  const u8 *nh;
  /* RFC 7606 5.1 and 7.11: when MP_REACH is malformed its NLRI cannot be
   * located reliably -> session reset (we do not do AFI/SAFI disable). */
  if (!bgp_get_u16(&c, &m->afi) || !bgp_get_u8(&c, &m->safi) || !bgp_get_u8(&c, &nh_len) ||
      !bgp_get_bytes(&c, nh_len, &nh) || !bgp_get_u8(&c, &reserved))
    return bgp_reset(s, BGP_ERR_UPD_OPTIONAL_ATTR, true, "Malformed MP_REACH_NLRI");
  m->present = true;
  m->nlri = c;
  int af = bgp_af_index(m->afi, m->safi);
  if (af < 0 || !s->ctx->af[af]) {
    /* A family not negotiated: drop the attribute (RFC 4760 leaves it to
     * us; BIRD does the same) rather than tear the session down. */
    m->ignored = true;
    return bgp_discard(s, "MP_REACH_NLRI for a family not negotiated");
  }
  m->af = af;
  /* RFC 7606 7.11: next hop length inconsistent with the family ->
   * session reset, the NLRI after it cannot be trusted */
  if (!dec_mp_next_hop(s, af, nh, nh_len))
    return bgp_reset(s, BGP_ERR_UPD_OPTIONAL_ATTR, true, "Bad MP_REACH_NLRI next hop length");
  /* RFC 7606 7.11: a semantically invalid next hop -> treat-as-withdraw */
  if (!bgp_nh_semantic_ok(s->r->mp_nh[0]))
    return bgp_withdraw(s, BGP_ERR_UPD_OPTIONAL_ATTR, "Invalid MP_REACH_NLRI next hop");
}

static void
dec_mp_unreach(struct bgp_parse *s, const u8 *v, uint len)
{
  struct bgp_mp_part *m = &s->r->mp_unreach;
  struct bgp_cur c = bgp_cur_init(v, len);
  /* RFC 7606 5.1: malformed MP_UNREACH -> session reset */
  if (!bgp_get_u16(&c, &m->afi) || !bgp_get_u8(&c, &m->safi))
    return bgp_reset(s, BGP_ERR_UPD_OPTIONAL_ATTR, true, "Malformed MP_UNREACH_NLRI");
  m->present = true;
  m->nlri = c;
  int af = bgp_af_index(m->afi, m->safi);
  if (af < 0 || !s->ctx->af[af]) {
    m->ignored = true;
    return bgp_discard(s, "MP_UNREACH_NLRI for a family not negotiated");
  }
  m->af = af;
}

static void
dec_ext_community(struct bgp_parse *s, const u8 *v, uint len)
{
  /* RFC 7606 7.14: length not a non-zero multiple of 8 -> treat-as-withdraw */
  if (!len || len % 8)
    return bgp_withdraw(s, BGP_ERR_UPD_OPTIONAL_ATTR, "Malformed EXT_COMMUNITIES");
  u32 *out = bgp_scratch(&s->sc, len);
  for (uint i = 0; i < len / 8; i++) {
    u64 ec = ((u64) bgp_load32(v + i * 8) << 32) | bgp_load32(v + i * 8 + 4);
    memcpy(out + 2 * i, &ec, 8);
  }
  bgp_store_data(s, BA_EXT_COMMUNITY, out, len);
}

static void
dec_as4_path(struct bgp_parse *s, const u8 *v, uint len)
{
  bool confed;
  /* RFC 6793 6 (with RFC 7606 7.2's notion of malformed): malformed, or
   * carrying confederation segments -> attribute discard; the session and
   * the route stay. */
  if (as_path_from_wire(&s->sc, v, len, 4, &s->as4_path, &s->as4_path_len, &confed) < 0 || confed)
    return bgp_discard(s, "Malformed AS4_PATH");
  s->have_as4_path = true;
}

static void
dec_as4_aggregator(struct bgp_parse *s, const u8 *v, uint len)
{
  /* RFC 6793 6: length other than 8 -> attribute discard */
  if (len != 8)
    return bgp_discard(s, "Malformed AS4_AGGREGATOR");
  s->as4_aggr[0] = bgp_load32(v);
  s->as4_aggr[1] = bgp_load32(v + 4);
  s->have_as4_aggr = true;
}

static void
dec_large_community(struct bgp_parse *s, const u8 *v, uint len)
{
  /* RFC 8092 6: length not a non-zero multiple of 12 -> treat-as-withdraw */
  if (!len || len % 12)
    return bgp_withdraw(s, BGP_ERR_UPD_OPTIONAL_ATTR, "Malformed LARGE_COMMUNITIES");
  dec_u32_set(s, v, len);
}

static void
dec_otc(struct bgp_parse *s, const u8 *v, uint len)
{
  /* RFC 9234 5: length other than 4 -> treat-as-withdraw */
  if (len != 4)
    return bgp_withdraw(s, BGP_ERR_UPD_ATTR_LENGTH, "Malformed OTC");
  bgp_store_int(s, BA_OTC, bgp_load32(v));
}

static void
dec_aigp(struct bgp_parse *s, const u8 *v, uint len)
{
  /* RFC 7311 3.1: a malformed AIGP is ignored as an unknown optional
   * non-transitive attribute would be (BIRD: "Malformed AIGP attribute") */
  if (bgp_aigp_check(v, len))
    return bgp_discard(s, "Malformed AIGP attribute");
  bgp_store_data(s, BA_AIGP, v, len);
}

#define O BAF_OPTIONAL
#define T BAF_TRANSITIVE
static const struct bgp_attr_desc bgp_attr_table[] = {
  [BA_ORIGIN] = { "ORIGIN", T, EAF_INT, dec_origin },
  [BA_AS_PATH] = { "AS_PATH", T, EAF_AS_PATH, dec_as_path },
  [BA_NEXT_HOP] = { "NEXT_HOP", T, EAF_IP, dec_next_hop },
  [BA_MULTI_EXIT_DISC] = { "MULTI_EXIT_DISC", O, EAF_INT, dec_med },
  [BA_LOCAL_PREF] = { "LOCAL_PREF", T, EAF_INT, dec_local_pref },
  [BA_ATOMIC_AGGR] = { "ATOMIC_AGGREGATE", T, EAF_OPAQUE, dec_atomic_aggr },
  [BA_AGGREGATOR] = { "AGGREGATOR", O | T, EAF_OPAQUE, dec_aggregator },
  [BA_COMMUNITY] = { "COMMUNITIES", O | T, EAF_INT_SET, dec_community },
  [BA_ORIGINATOR_ID] = { "ORIGINATOR_ID", O, EAF_ROUTER_ID, dec_originator_id },
  [BA_CLUSTER_LIST] = { "CLUSTER_LIST", O, EAF_INT_SET, dec_cluster_list },
  [BA_MP_REACH_NLRI] = { "MP_REACH_NLRI", O, 0, dec_mp_reach },
  [BA_MP_UNREACH_NLRI] = { "MP_UNREACH_NLRI", O, 0, dec_mp_unreach },
  [BA_EXT_COMMUNITY] = { "EXT_COMMUNITIES", O | T, EAF_EC_SET, dec_ext_community },
  [BA_AS4_PATH] = { "AS4_PATH", O | T, 0, dec_as4_path },
  [BA_AS4_AGGREGATOR] = { "AS4_AGGREGATOR", O | T, 0, dec_as4_aggregator },
  [BA_AIGP] = { "AIGP", O, EAF_OPAQUE, dec_aigp },
  [BA_LARGE_COMMUNITY] = { "LARGE_COMMUNITIES", O | T, EAF_LC_SET, dec_large_community },
  [BA_OTC] = { "OTC", O | T, EAF_INT, dec_otc },
};
#undef O
#undef T

static const struct bgp_attr_desc *
bgp_attr_desc(u8 code)
{
  return code < ARRAY_SIZE(bgp_attr_table) && bgp_attr_table[code].decode ? &bgp_attr_table[code] : NULL;
}

/* ---------------------------------------------------------------- */
/* The walk                                                          */

/* Leave room for what the protocol adds to the builder after us. */
#define BGP_UNKNOWN_ATTR_ROOM (EA_BUILDER_MAX - 8)

static void
bgp_unknown_attr(struct bgp_parse *s, const u8 *v, uint len)
{
  /* RFC 4271 6.3 makes an unrecognized well-known attribute a session
   * reset and RFC 7606 3 e/f do not list it; we treat-as-withdraw (as BIRD
   * does): one odd attribute should not flush every route of the peer. */
  if (!(s->flags & BAF_OPTIONAL))
    return bgp_withdraw(s, BGP_ERR_UPD_UNRECOGNIZED_WELL_KNOWN, "Unrecognized well-known attribute");
  /* RFC 4271 5: unrecognized optional non-transitive -> quietly ignored */
  if (!(s->flags & BAF_TRANSITIVE))
    return;
  /* Optional transitive: pass it on (the Partial bit is set on encode). A
   * peer sending dozens of them cannot overflow the builder: the excess is
   * dropped and counted. */
  if (s->b->count >= BGP_UNKNOWN_ATTR_ROOM)
    return bgp_discard(s, "Too many unknown attributes");
  ea_set_data(s->b, BGP_EA(s->code), EAF_OPAQUE, s->flags & (BAF_OPTIONAL | BAF_TRANSITIVE | BAF_PARTIAL), v,
              len);
}

/* Attributes dropped whatever their flags, length or value. */
static const char *
bgp_drop_anyway(const struct bgp_parse *s)
{
  /* RFC 5065 5.3: confederation members exchange LOCAL_PREF and friends */
  bool external = s->ctx->ebgp && !s->ctx->confed;
  switch (s->code) {
  case BA_LOCAL_PREF:
    /* RFC 7606 7.5: LOCAL_PREF from an external peer -> attribute discard */
    return external ? "LOCAL_PREF from eBGP peer" : NULL;
  case BA_ORIGINATOR_ID:
  case BA_CLUSTER_LIST:
    /* RFC 4456 8: reflection attributes mean nothing across an AS border;
     * from an eBGP peer they are dropped (as BIRD does). */
    return external ? "Route reflection attribute from eBGP peer" : NULL;
  case BA_AS4_PATH:
  case BA_AS4_AGGREGATOR:
    /* RFC 6793 6: AS4_PATH/AS4_AGGREGATOR from a NEW (AS4) speaker -> discard */
    return s->ctx->as4 ? "AS4_* attribute from AS4 peer" : NULL;
  default:
    return NULL;
  }
}

static void
bgp_decode_one(struct bgp_parse *s, const u8 *v, uint len)
{
  const struct bgp_attr_desc *d = bgp_attr_desc(s->code);
  bool mp = s->code == BA_MP_REACH_NLRI || s->code == BA_MP_UNREACH_NLRI;

  s->r->count++;
  if (bgp_seen_test_set(s, s->code)) {
    /* RFC 7606 3 g: a repeated MP_REACH/MP_UNREACH -> session reset with
     * Malformed Attribute List; any other repeat -> discard all but the
     * first occurrence */
    if (mp)
      return bgp_reset(s, BGP_ERR_UPD_MALFORMED_ATTR_LIST, false, "Repeated MP_REACH/MP_UNREACH");
    return bgp_discard(s, "Repeated attribute");
  }
  if (!d)
    return bgp_unknown_attr(s, v, len);
  const char *drop = bgp_drop_anyway(s);
  if (drop)
    return bgp_discard(s, drop);

  /* RFC 7606 3 c: Optional/Transitive bits in conflict with the attribute's
   * definition -> treat-as-withdraw; for MP_REACH/MP_UNREACH that would
   * hide NLRI, which RFC 7606 5.1 makes a session reset. */
  if ((s->flags ^ d->flags) & (BAF_OPTIONAL | BAF_TRANSITIVE)) {
    if (mp)
      return bgp_reset(s, BGP_ERR_UPD_ATTR_FLAGS, true, "Bad MP_REACH/MP_UNREACH flags");
    if (s->code == BA_AIGP)     /* RFC 7311 3.1: malformed, ignored */
      return bgp_discard(s, "Malformed AIGP attribute - conflicting flags");
    return bgp_withdraw(s, BGP_ERR_UPD_ATTR_FLAGS, "Bad attribute flags");
  }
  d->decode(s, v, len);
}

/*
 * RFC 7606 4: an attribute header or length running past the attribute
 * block is treat-as-withdraw, the block's total length still locating the
 * body NLRI. What it cannot locate is an MP_REACH hidden in the unparsed
 * rest; if that one itself is hit, or the session carries families that
 * need MP_REACH and none was found yet, NLRI would be lost -> session reset
 * (RFC 7606 5.1).
 */
static void
bgp_framing_error(struct bgp_parse *s, const u8 *p, uint left)
{
  const struct bgp_rx_ctx *c = s->ctx;
  u8 code = left >= 2 ? p[1] : 0;
  bool mp_possible = c->af[BGP_AF_IPV6] || c->ext_next_hop[BGP_AF_IPV4];

  s->raw = p;
  s->raw_len = left;
  if (code == BA_MP_REACH_NLRI || code == BA_MP_UNREACH_NLRI || (mp_possible && !s->r->mp_reach.present))
    return bgp_reset(s, BGP_ERR_UPD_MALFORMED_ATTR_LIST, false, "Attribute list framing error");
  bgp_withdraw(s, BGP_ERR_UPD_MALFORMED_ATTR_LIST, "Attribute list framing error");
}

static void
bgp_walk(struct bgp_parse *s, const u8 *p, uint len)
{
  const u8 *end = p + len;
  while (p < end && s->r->verdict != BGP_ATTR_SESSION_RESET) {
    uint left = (uint) (end - p);
    uint hdr = (left >= 1 && (p[0] & BAF_EXT_LEN)) ? 4 : 3;
    if (left < hdr)
      return bgp_framing_error(s, p, left);
    uint alen = hdr == 4 ? bgp_load16(p + 2) : p[2];
    if (alen > left - hdr)
      return bgp_framing_error(s, p, left);
    s->flags = p[0];
    s->code = p[1];
    s->raw = p;
    s->raw_len = hdr + alen;
    bgp_decode_one(s, p + hdr, alen);
    p += hdr + alen;
  }
}

/* RFC 6793 4.2.3, then store AS_PATH and AGGREGATOR. */
static void
bgp_finish_as4(struct bgp_parse *s)
{
  if (!s->ctx->as4) {
    /* An AGGREGATOR without AS_TRANS means the aggregating speaker was NEW
     * and AS4_PATH/AS4_AGGREGATOR are stale: ignore both. */
    if (s->have_aggr && s->aggr[0] != BGP_AS_TRANS)
      s->have_as4_aggr = s->have_as4_path = false;
    if (s->have_aggr && s->have_as4_aggr) {
      s->aggr[0] = s->as4_aggr[0];
      s->aggr[1] = s->as4_aggr[1];
    }
    if (s->have_as_path && s->have_as4_path) {
      uint l;
      u8 *m = as_path_merge(&s->sc, s->as_path, s->as_path_len, s->as4_path, s->as4_path_len, &l);
      if (m) {
        s->as_path = m;
        s->as_path_len = l;
      }
    }
  }
  if (s->have_as_path)
    bgp_store_data(s, BA_AS_PATH, s->as_path, s->as_path_len);
  if (s->have_aggr) {
    u32 *a = bgp_scratch(&s->sc, 8);
    a[0] = s->aggr[0];
    a[1] = s->aggr[1];
    bgp_store_data(s, BA_AGGREGATOR, a, 8);
  }
}

static void
bgp_check_mandatory(struct bgp_parse *s)
{
  bool reach = s->nlri_present || (s->r->mp_reach.present && !s->r->mp_reach.ignored);
  if (!reach)
    return;
  /* RFC 7606 3 d: a missing well-known mandatory attribute -> treat-as-
   * withdraw. NEXT_HOP is only mandatory with body NLRI (RFC 4760 3). */
  static const u8 mandatory[] = { BA_ORIGIN, BA_AS_PATH, BA_NEXT_HOP };
  for (uint i = 0; i < ARRAY_SIZE(mandatory); i++) {
    u8 code = mandatory[i];
    if (code == BA_NEXT_HOP && !s->nlri_present)
      continue;
    if (!bgp_seen(s, code)) {
      s->raw = NULL;
      bgp_note(s, BGP_ATTR_TREAT_AS_WITHDRAW, BGP_ERR_UPD_MISSING_WELL_KNOWN, false, "Missing mandatory attribute");
      if (s->r->err.subcode == BGP_ERR_UPD_MISSING_WELL_KNOWN && !s->r->err.data) {
        s->r->err.own[0] = code;
        s->r->err.len = 1;
      }
      return;
    }
  }
}

void
bgp_attrs_reset(struct bgp_attrs *r)
{
  r->verdict = BGP_ATTR_OK;
  r->err.code = r->err.subcode = 0;
  r->err.len = 0;
  r->err.data = NULL;
  r->err.reason = NULL;
  r->discarded = r->count = 0;
  r->has_next_hop = r->local_pref_seen = false;
  r->mp_reach.present = r->mp_reach.ignored = false;
  r->mp_unreach.present = r->mp_unreach.ignored = false;
  r->mp_nh_count = 0;
}

enum bgp_attr_verdict
bgp_attrs_parse(const struct bgp_rx_ctx *ctx, linpool *lp, const u8 *attrs, uint len, bool nlri_present,
                struct ea_builder *b, struct bgp_attrs *r)
{
  /* Field by field, not memset: this runs once per UPDATE and the zeroing
   * of both structs showed in profiles. */
  struct bgp_parse s;
  s.ctx = ctx;
  s.b = b;
  s.r = r;
  s.nlri_present = nlri_present;
  memset(s.seen, 0, sizeof(s.seen));
  s.raw = NULL;
  s.raw_len = 0;
  s.have_as_path = s.have_as4_path = s.have_aggr = s.have_as4_aggr = false;
  /* Converted payloads are at most twice their wire size, except tiny ones
   * (NEXT_HOP 7 -> 16 octets) and the AS4 merge; slack covers the former,
   * the fallback in bgp_scratch() the rest. */
  uint scratch = 2 * len + 64;
  s.sc.lp = lp;
  s.sc.p = lp_alloc(lp, scratch);
  s.sc.end = s.sc.p + scratch;
  bgp_attrs_reset(r);
  bgp_walk(&s, attrs, len);
  r->local_pref_seen = bgp_seen(&s, BA_LOCAL_PREF);
  if (r->verdict == BGP_ATTR_SESSION_RESET)
    return r->verdict;
  bgp_finish_as4(&s);
  bgp_check_mandatory(&s);
  return r->verdict;
}

void
bgp_attrs_use_mp_next_hop(struct ea_builder *b, const struct bgp_attrs *r)
{
  ea_set_data(b, BGP_EA(BA_NEXT_HOP), EAF_IP, BAF_TRANSITIVE, r->mp_nh, r->mp_nh_count * sizeof(ip_addr));
}

/* ---------------------------------------------------------------- */
/* Encoding                                                          */

struct bgp_wr {
  u8 *p, *end;
};

/* Reserve one attribute with a value of len bytes; the Extended Length bit
 * is chosen here, never taken from storage. Returns the value or NULL. */
static u8 *
wr_attr(struct bgp_wr *w, u8 flags, u8 code, uint len)
{
  bool ext = len > 255;
  uint hdr = ext ? 4 : 3;
  if (len > 0xffff || (size_t) (w->end - w->p) < hdr + len)
    return NULL;
  u8 *p = w->p;
  p[0] = (flags & ~BAF_EXT_LEN) | (ext ? BAF_EXT_LEN : 0);
  p[1] = code;
  if (ext)
    bgp_store16(p + 2, len);
  else
    p[2] = len;
  w->p += hdr + len;
  return p + hdr;
}

/* Wire size of an internal AS path with asn_size-byte ASNs; big tells
 * whether any (counted) ASN needs 4 bytes. */
static uint
as_path_wire_size(const u8 *p, uint len, uint asn_size, bool skip_confed, bool *big)
{
  uint size = 0;
  *big = false;
  for (uint pos = 0; pos < len; pos += 2 + p[pos + 1] * 4) {
    uint type = p[pos], cnt = p[pos + 1];
    if (skip_confed && (type == AS_PATH_CONFED_SEQUENCE || type == AS_PATH_CONFED_SET))
      continue;
    size += 2 + cnt * asn_size;
    for (uint i = 0; i < cnt; i++)
      if (bgp_get_host32(p + pos + 2 + i * 4) > 0xffff)
        *big = true;
  }
  return size;
}

static void
as_path_to_wire(const u8 *p, uint len, uint asn_size, bool skip_confed, u8 *o)
{
  for (uint pos = 0; pos < len; pos += 2 + p[pos + 1] * 4) {
    uint type = p[pos], cnt = p[pos + 1];
    if (skip_confed && (type == AS_PATH_CONFED_SEQUENCE || type == AS_PATH_CONFED_SET))
      continue;
    *o++ = type;
    *o++ = cnt;
    for (uint i = 0; i < cnt; i++, o += asn_size) {
      u32 asn = bgp_get_host32(p + pos + 2 + i * 4);
      if (asn_size == 4)
        bgp_store32(o, asn);
      else
        bgp_store16(o, asn > 0xffff ? BGP_AS_TRANS : asn);
    }
  }
}

/* RFC 6793 4.2.2: toward an OLD speaker, AS_PATH gets AS_TRANS for the
 * wide ASNs and AS4_PATH (without confederation segments, RFC 6793 3)
 * carries the truth. */
static int
enc_as_path(const struct bgp_tx_ctx *ctx, struct bgp_wr *w, const u8 *p, uint len)
{
  bool big;
  if (!bgp_as_path_valid(p, len))
    return -1;
  uint asn_size = ctx->as4 ? 4 : 2;
  uint size = as_path_wire_size(p, len, asn_size, false, &big);
  u8 *v = wr_attr(w, BAF_TRANSITIVE, BA_AS_PATH, size);
  if (!v)
    return -1;
  as_path_to_wire(p, len, asn_size, false, v);
  if (ctx->as4)
    return 0;

  size = as_path_wire_size(p, len, 4, true, &big);
  if (!big)
    return 0;
  if (!(v = wr_attr(w, BAF_OPTIONAL | BAF_TRANSITIVE, BA_AS4_PATH, size)))
    return -1;
  as_path_to_wire(p, len, 4, true, v);
  return 0;
}

static int
enc_aggregator(const struct bgp_tx_ctx *ctx, struct bgp_wr *w, const u8 *data, uint len)
{
  if (len != 8)
    return -1;
  u32 asn = bgp_get_host32(data), id = bgp_get_host32(data + 4);
  u8 *v = wr_attr(w, BAF_OPTIONAL | BAF_TRANSITIVE, BA_AGGREGATOR, ctx->as4 ? 8 : 6);
  if (!v)
    return -1;
  if (ctx->as4) {
    bgp_store32(v, asn);
    bgp_store32(v + 4, id);
    return 0;
  }
  /* RFC 6793 4.2.2: AS_TRANS in AGGREGATOR, the real ASN in AS4_AGGREGATOR */
  bgp_store16(v, asn > 0xffff ? BGP_AS_TRANS : asn);
  bgp_store32(v + 2, id);
  if (asn <= 0xffff)
    return 0;
  if (!(v = wr_attr(w, BAF_OPTIONAL | BAF_TRANSITIVE, BA_AS4_AGGREGATOR, 8)))
    return -1;
  bgp_store32(v, asn);
  bgp_store32(v + 4, id);
  return 0;
}

static int
enc_u32_set(struct bgp_wr *w, u8 flags, u8 code, const u8 *data, uint len, uint unit)
{
  if (len % unit)
    return -1;
  if (!len)
    return 0;   /* an empty set is no attribute (RFC 7606 7.8 would reject it) */
  u8 *v = wr_attr(w, flags, code, len);
  if (!v)
    return -1;
  for (uint i = 0; i < len; i += 4)
    bgp_store32(v + i, bgp_get_host32(data + i));
  return 0;
}

static int
enc_ext_community(struct bgp_wr *w, const u8 *data, uint len)
{
  if (len % 8)
    return -1;
  if (!len)
    return 0;
  u8 *v = wr_attr(w, BAF_OPTIONAL | BAF_TRANSITIVE, BA_EXT_COMMUNITY, len);
  if (!v)
    return -1;
  for (uint i = 0; i < len; i += 8) {
    u64 ec;
    memcpy(&ec, data + i, 8);
    bgp_store32(v + i, ec >> 32);
    bgp_store32(v + i + 4, (u32) ec);
  }
  return 0;
}

static int
enc_u32(struct bgp_wr *w, u8 code, u32 val)
{
  u8 *v = wr_attr(w, bgp_attr_table[code].flags, code, 4);
  if (!v)
    return -1;
  bgp_store32(v, val);
  return 0;
}

static int
enc_next_hop(struct bgp_wr *w, const u8 *data, uint len)
{
  ip_addr nh;
  if (len < sizeof(ip_addr))
    return -1;
  memcpy(&nh, data, sizeof(nh));
  if (!ipa_is_ip4(nh))
    return -1;
  u8 *v = wr_attr(w, BAF_TRANSITIVE, BA_NEXT_HOP, 4);
  if (!v)
    return -1;
  ip4_put(v, ipa_to_ip4(nh));
  return 0;
}

/* An attribute we do not interpret: passed on with the Partial bit set if
 * it is optional transitive (RFC 4271 5), as stored otherwise. */
static int
enc_unknown(struct bgp_wr *w, const struct eattr *e, const u8 *data)
{
  u8 flags = e->flags & (BAF_OPTIONAL | BAF_TRANSITIVE | BAF_PARTIAL);
  if ((flags & (BAF_OPTIONAL | BAF_TRANSITIVE)) == (BAF_OPTIONAL | BAF_TRANSITIVE))
    flags |= BAF_PARTIAL;
  u8 *v = wr_attr(w, flags, bgp_ea_code(e->id), e->len);
  if (!v)
    return -1;
  memcpy(v, data, e->len);
  return 0;
}

static int
bgp_encode_one(const struct bgp_tx_ctx *ctx, struct bgp_wr *w, const struct ea_list *l, const struct eattr *e,
               bool with_next_hop)
{
  u8 code = bgp_ea_code(e->id);
  bool inline_val = e->type == EAF_INT || e->type == EAF_ROUTER_ID;
  const u8 *data = inline_val ? NULL : ea_data(l, e);
  const u8 t = BAF_TRANSITIVE, ot = BAF_OPTIONAL | BAF_TRANSITIVE;

  switch (code) {
  case BA_ORIGIN: {
    u8 *v = inline_val ? wr_attr(w, t, BA_ORIGIN, 1) : NULL;
    if (!v)
      return -1;
    *v = e->val;
    return 0;
  }
  case BA_AS_PATH:
    return inline_val ? -1 : enc_as_path(ctx, w, data, e->len);
  case BA_NEXT_HOP:
    return with_next_hop ? (inline_val ? -1 : enc_next_hop(w, data, e->len)) : 0;
  case BA_MULTI_EXIT_DISC:
  case BA_LOCAL_PREF:
  case BA_ORIGINATOR_ID:
  case BA_OTC:
    return inline_val ? enc_u32(w, code, e->val) : -1;
  case BA_ATOMIC_AGGR:
    return wr_attr(w, t, BA_ATOMIC_AGGR, 0) ? 0 : -1;
  case BA_AIGP: {
    /* optional non-transitive, as received or as we made it */
    u8 *v = inline_val ? NULL : wr_attr(w, BAF_OPTIONAL, BA_AIGP, e->len);
    if (!v)
      return -1;
    memcpy(v, data, e->len);
    return 0;
  }
  case BA_AGGREGATOR:
    return inline_val ? -1 : enc_aggregator(ctx, w, data, e->len);
  case BA_COMMUNITY:
    return inline_val ? -1 : enc_u32_set(w, ot, code, data, e->len, 4);
  case BA_CLUSTER_LIST:
    return inline_val ? -1 : enc_u32_set(w, BAF_OPTIONAL, code, data, e->len, 4);
  case BA_LARGE_COMMUNITY:
    return inline_val ? -1 : enc_u32_set(w, ot, code, data, e->len, 12);
  case BA_EXT_COMMUNITY:
    return inline_val ? -1 : enc_ext_community(w, data, e->len);
  case BA_MP_REACH_NLRI:
  case BA_MP_UNREACH_NLRI:
  case BA_AS4_PATH:
  case BA_AS4_AGGREGATOR:
    return 0;   /* wire-only encodings, never stored: nothing to re-send */
  default:
    return inline_val ? -1 : enc_unknown(w, e, data);
  }
}

int
bgp_attrs_encode(const struct bgp_tx_ctx *ctx, const struct ea_list *l, bool with_next_hop, u8 *buf, uint size)
{
  struct bgp_wr w = { buf, buf + size };
  for (uint i = 0; i < l->count; i++) {
    const struct eattr *e = &l->a[i];
    if (bgp_ea_is_bgp(e->id) && bgp_encode_one(ctx, &w, l, e, with_next_hop) < 0)
      return -1;
  }
  return (int) (w.p - buf);
}
