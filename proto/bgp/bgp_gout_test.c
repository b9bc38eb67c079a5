/*
 * Unit tests for proto/bgp/bgp_gout.c, the output of an update group.
 * Every test reads back what each member finds in the shared log (its own
 * txlog cursor), parses the UPDATEs and applies them to a model of that
 * member's Adj-RIB-In, recording the order of what it saw:
 *
 *  - split horizon: each first/last change combination gives exactly the
 *    announcements and withdrawals bgp_gout.h promises, per member, and
 *    only the first change of a net since the flush counts for "had";
 *  - packing: many nets of one audience and one attribute set go out in
 *    few full UPDATEs, split per audience, withdrawals first;
 *  - order: feed items and raw messages of a member keep their order and
 *    come before the changes of the same flush;
 *  - cohorts: a feed to the members a definition names, one of them left
 *    out where the route came from it, packed as one audience;
 *  - classes: members in three export classes get each class's result,
 *    withdrawals where a class had a route and gets none, split horizon
 *    across classes, one message for a result every class shares, and a
 *    cohort feed narrowed to a set of classes;
 *  - bookkeeping: bgp_gout_changed(), bgp_gout_pending(), an empty flush;
 *  - an unencodable net is dropped without taking its neighbours along;
 *  - references: held while pending, dropped by the flush and by the free;
 *  - a burst of 300,000 changes in one flush, announced then withdrawn,
 *    reaches every member whole.
 */
#include "proto/bgp/bgp_test.h"
#include "proto/bgp/bgp_gout.h"

#define T BAF_TRANSITIVE

#define MEMBERS 4               /* members 1..3 (0 is "no member") */
#define NETS 2048               /* model size: net i is 10.(i >> 8).(i & 255).0/24 */
#define EVENTS 8192

#define MED_A 100
#define MED_B 200

enum ev_kind { EV_ANN = 1, EV_WD, EV_EOR, EV_RR };

/* One thing a member saw, in order. */
struct event {
  u8 kind;                      /* enum ev_kind */
  u8 rr_subtype;                /* EV_RR */
  u16 net;                      /* EV_ANN, EV_WD */
  u32 med;                      /* EV_ANN: which list */
  uint msg;                     /* index of the log entry it came in */
};

/* What a member got from the log. */
struct member {
  struct bgp_txlog_cursor cur;
  u32 rib[NETS];                /* MED of the route it has, 0: none */
  struct event ev[EVENTS];
  uint nev;
  uint msgs;                    /* log entries read */
  uint lens[64];                /* lengths of the first of them */
};

static struct member mem[MEMBERS];
static pool *tpool;
static struct bgp_txlog *tlog;
static struct bgp_gout *gout;
static struct ea_list *la, *lb; /* MED_A and MED_B */

static net_addr
net_n(uint i)
{
  net_addr n;
  net_fill_ip4(&n, ip4_from_u32(0x0a000000 | (i << 8)), 24);
  return n;
}

static uint
net_index(const net_addr *n)
{
  assert_int_equal(n->type, NET_IP4);
  assert_int_equal(n->pxlen, 24);
  u32 a = ipa_to_ip4(net_prefix(n)).addr;
  assert_int_equal(a >> 24, 10);
  uint i = (a >> 8) & 0xffff;
  assert_true(i < NETS);
  return i;
}

/* ORIGIN, AS_PATH [65001 65002], NEXT_HOP nh, MED med */
static struct ea_list *
mk_list(u32 med, ip_addr nh)
{
  static u8 path[32];
  static const u8 types[] = { AS_PATH_SEQUENCE };
  static const uint counts[] = { 2 };
  static const u32 asns[] = { 65001, 65002 };
  static ip_addr nhs[1];
  nhs[0] = nh;
  struct ea_builder b;
  ea_builder_init(&b);
  ea_set_int(&b, BGP_EA(BA_ORIGIN), EAF_INT, T, ORIGIN_IGP);
  ea_set_data(&b, BGP_EA(BA_AS_PATH), EAF_AS_PATH, T, path, mk_path(path, 1, types, counts, asns));
  ea_set_data(&b, BGP_EA(BA_NEXT_HOP), EAF_IP, T, nhs, sizeof(ip_addr));
  ea_set_int(&b, BGP_EA(BA_MULTI_EXIT_DISC), EAF_INT, BAF_OPTIONAL, med);
  return ea_intern(&b);
}

static ip_addr
v4(u32 a)
{
  return ipa_from_ip4(ip4_from_u32(a));
}

static u32
uc(struct ea_list *l)
{
  return __atomic_load_n(&l->uc, __ATOMIC_RELAXED);
}

/* --- Fixture: a pool, a log, three members joined, lists A and B --- */

static int
setup(void **state UNUSED)
{
  tpool = rp_new(root_pool(), MEM_PROTOCOLS, "gout test");
  tlog = bgp_txlog_new();
  struct bgp_tx_ctx tx = { .as4 = true, .max_len = 4096 };
  gout = bgp_gout_new(tpool, &tx, BGP_AF_IPV4, tlog);
  memset(mem, 0, sizeof(mem));
  for (u32 m = 1; m < MEMBERS; m++)
    bgp_txlog_join(tlog, &mem[m].cur, m, 0, NULL, NULL);
  la = mk_list(MED_A, v4(0xc0000201));
  lb = mk_list(MED_B, v4(0xc0000202));
  return 0;
}

static int
teardown(void **state UNUSED)
{
  if (gout)
    bgp_gout_free(gout);
  gout = NULL;
  for (u32 m = 1; m < MEMBERS; m++)
    bgp_txlog_leave(tlog, &mem[m].cur);
  bgp_txlog_free(tlog);
  ea_unref(la);
  ea_unref(lb);
  rfree(tpool);
  return 0;
}

/* --- The decoder: a member's log entries into its model --- */

static void
record(struct member *m, struct event e)
{
  assert_true(m->nev < EVENTS);
  e.msg = m->msgs;
  m->ev[m->nev++] = e;
}

static void
apply_nlri(struct member *m, struct bgp_nlri_iter *it, bool announce, u32 med)
{
  net_addr nets[256];
  struct bgp_error err;
  int k;
  while ((k = bgp_nlri_decode(it, nets, NULL, ARRAY_SIZE(nets), &err)) > 0)
    for (int i = 0; i < k; i++) {
      uint n = net_index(&nets[i]);
      m->rib[n] = announce ? med : 0;
      record(m, (struct event){ .kind = announce ? EV_ANN : EV_WD, .net = n, .med = announce ? med : 0 });
    }
  assert_int_equal(k, 0);
}

static void
apply_update(struct member *m, const u8 *msg, uint len)
{
  struct bgp_rx_ctx rx = rx_ctx(true, true);
  struct ea_builder b;
  struct bgp_update u;
  struct bgp_nlri_iter it;
  ea_builder_init(&b);
  lp_flush(test_lp);
  assert_int_equal(bgp_update_parse(&rx, test_lp, msg + BGP_HEADER_LEN, len - BGP_HEADER_LEN, &b, &u),
                   BGP_ATTR_OK);
  if (u.eor >= 0) {
    assert_int_equal(u.eor, BGP_AF_IPV4);
    record(m, (struct event){ .kind = EV_EOR });
    return;
  }
  /* withdrawals first, as a receiver applies them */
  bgp_update_withdrawn_iter(&rx, &u, &it);
  apply_nlri(m, &it, false, 0);
  bgp_update_mp_unreach_iter(&rx, &u, &it);
  apply_nlri(m, &it, false, 0);

  u32 med = 0;
  if (b.count) {
    struct ea_list *l = ea_intern(&b);
    const struct eattr *e = find_bgp(l, BA_MULTI_EXIT_DISC);
    assert_non_null(e);
    med = e->val;
    assert_true(med == MED_A || med == MED_B);
    /* the whole list came through, not just the MED */
    assert_ptr_equal(l, med == MED_A ? la : lb);
    ea_unref(l);
  }
  bgp_update_reach_iter(&rx, &u, &it);
  apply_nlri(m, &it, true, med);
  bgp_update_mp_reach_iter(&rx, &u, &it);
  apply_nlri(m, &it, true, med);
}

/* Read all published entries for member id. */
static void
drain(u32 id)
{
  struct member *m = &mem[id];
  const struct bgp_txlog_entry *e;
  while ((e = bgp_txlog_peek(tlog, &m->cur))) {
    const u8 *msg = bgp_txlog_msg(e);
    uint len;
    u8 type;
    struct bgp_error err;
    assert_true(bgp_txlog_for(e, id, m->cur.cohort, m->cur.cls));
    assert_int_equal(bgp_header_check(msg, BGP_MAX_EXT_MSG_LEN, &len, &type, &err), 0);
    assert_int_equal(len, e->len);
    assert_true(len <= 4096);
    if (type == BGP_MSG_ROUTE_REFRESH) {
      struct bgp_route_refresh rr;
      assert_int_equal(bgp_route_refresh_decode(msg, len, &rr, &err), 0);
      record(m, (struct event){ .kind = EV_RR, .rr_subtype = rr.subtype });
    } else {
      assert_int_equal(type, BGP_MSG_UPDATE);
      apply_update(m, msg, len);
    }
    if (m->msgs < ARRAY_SIZE(m->lens))
      m->lens[m->msgs] = len;
    m->msgs++;
    bgp_txlog_consume(tlog, &m->cur);
  }
}

static void
flush_and_drain(void)
{
  bgp_gout_flush(gout);
  bgp_txlog_publish(tlog);
  for (u32 m = 1; m < MEMBERS; m++)
    drain(m);
}

/* Events of member id about net n. */
static uint
events_about(u32 id, uint n, struct event *out, uint max)
{
  uint k = 0;
  for (uint i = 0; i < mem[id].nev; i++)
    if ((mem[id].ev[i].kind == EV_ANN || mem[id].ev[i].kind == EV_WD) && mem[id].ev[i].net == n) {
      assert_true(k < max);
      out[k++] = mem[id].ev[i];
    }
  return k;
}

/* What a member must see about a net in one flush: nothing, one
 * announcement with a list, or one withdrawal. */
enum outcome { NONE = 0, ANN_A, ANN_B, WD };

static void
expect(u32 id, uint n, enum outcome o)
{
  struct event ev[8];
  uint k = events_about(id, n, ev, ARRAY_SIZE(ev));
  if (o == NONE) {
    if (k)
      fail_msg("member %u: net %u: expected nothing, got %u events (first kind %u)", id, n, k, ev[0].kind);
    return;
  }
  if (k != 1)
    fail_msg("member %u: net %u: expected one event (outcome %d), got %u", id, n, o, k);
  if (o == WD) {
    assert_int_equal(ev[0].kind, EV_WD);
    assert_int_equal(mem[id].rib[n], 0);
  } else {
    assert_int_equal(ev[0].kind, EV_ANN);
    assert_int_equal(ev[0].med, o == ANN_A ? MED_A : MED_B);
    assert_int_equal(mem[id].rib[n], ev[0].med);
  }
}

/* Every member's outcome for nets 1..7 (want[net][member]). */
static void
expect_nets(const enum outcome want[8][MEMBERS])
{
  for (uint i = 1; i < 8; i++)
    for (u32 m = 1; m < MEMBERS; m++)
      expect(m, i, want[i][m]);
}

/* --- Tests --- */

static void
test_split_horizon(void **state UNUSED)
{
  net_addr n[8];
  for (uint i = 1; i < 8; i++)
    n[i] = net_n(i);

  /* N1: a new route from 1 */
  bgp_gout_change(gout, &n[1], la, 1, false, 0);
  /* N2: a route of no member replaces one from 2 */
  bgp_gout_change(gout, &n[2], la, 0, true, 2);
  /* N3: a route from 2 replaces one from 1 */
  bgp_gout_change(gout, &n[3], lb, 2, true, 1);
  /* N4: the route from 3 goes */
  bgp_gout_change(gout, &n[4], NULL, 0, true, 3);
  /* N5: only the first change says what the members had */
  bgp_gout_change(gout, &n[5], la, 1, true, 1);
  bgp_gout_change(gout, &n[5], NULL, 0, false, 0);
  /* N6: came and went before the flush: nobody had it */
  bgp_gout_change(gout, &n[6], la, 0, false, 0);
  bgp_gout_change(gout, &n[6], NULL, 0, true, 0);
  /* N7: 2's route replaced by another of its own */
  bgp_gout_change(gout, &n[7], la, 2, true, 2);
  assert_int_equal(bgp_gout_pending(gout), 7);

  flush_and_drain();

  static const enum outcome want[8][MEMBERS] = {
    /*        -     1      2      3 */
    [1] = { NONE, NONE, ANN_A, ANN_A },
    [2] = { NONE, ANN_A, ANN_A, ANN_A },
    [3] = { NONE, ANN_B, WD, ANN_B },
    [4] = { NONE, WD, WD, NONE },
    [5] = { NONE, NONE, WD, WD },
    [6] = { NONE, NONE, NONE, NONE },
    [7] = { NONE, ANN_A, NONE, ANN_A },
  };
  expect_nets(want);
  for (u32 m = 1; m < MEMBERS; m++)
    for (uint i = 0; i < mem[m].nev; i++)
      assert_true(mem[m].ev[i].net >= 1 && mem[m].ev[i].net < 8);

  /* the next flush starts afresh: N1 now withdrawn, had from 1 */
  for (u32 m = 1; m < MEMBERS; m++)
    mem[m].nev = 0;
  bgp_gout_change(gout, &n[1], NULL, 0, true, 1);
  flush_and_drain();
  expect(1, 1, NONE);
  expect(2, 1, WD);
  expect(3, 1, WD);
  assert_int_equal(mem[1].nev, 0);
}

static void
test_packing(void **state UNUSED)
{
  /* 300 announcements and 50 withdrawals of one audience (all), mixed */
  for (uint i = 0; i < 350; i++) {
    net_addr n = net_n(i);
    if (i % 7 == 3)
      bgp_gout_change(gout, &n, NULL, 0, true, 0);
    else
      bgp_gout_change(gout, &n, la, 0, false, 0);
  }
  uint wd = 0;
  for (uint i = 0; i < 350; i++)
    wd += i % 7 == 3;
  assert_int_equal(bgp_gout_pending(gout), 350);
  uint msgs = bgp_gout_flush(gout);
  bgp_txlog_publish(tlog);
  for (u32 m = 1; m < MEMBERS; m++)
    drain(m);

  /* one UPDATE of withdrawals, one of announcements: all fit in 4096 */
  assert_int_equal(msgs, 2);
  for (u32 m = 1; m < MEMBERS; m++) {
    assert_int_equal(mem[m].msgs, 2);
    assert_int_equal(mem[m].nev, 350);
    uint seen_ann = 0, nwd = 0;
    for (uint i = 0; i < mem[m].nev; i++) {
      struct event *e = &mem[m].ev[i];
      if (e->kind == EV_WD) {
        /* withdrawals come before every announcement */
        assert_int_equal(seen_ann, 0);
        assert_int_equal(e->net % 7, 3);
        nwd++;
      } else {
        assert_int_equal(e->kind, EV_ANN);
        assert_int_not_equal(e->net % 7, 3);
        seen_ann++;
      }
    }
    assert_int_equal(nwd, wd);
    assert_int_equal(seen_ann, 350 - wd);
    for (uint i = 0; i < 350; i++)
      assert_int_equal(mem[m].rib[i], i % 7 == 3 ? 0 : MED_A);
  }

  /* Audiences apart: 200 from 1 and 200 from 2 interleaved, 200 from 0
   * with list B. Each member gets one UPDATE per (audience, list). */
  for (u32 m = 1; m < MEMBERS; m++) {
    mem[m].nev = mem[m].msgs = 0;
    memset(mem[m].rib, 0, sizeof(mem[m].rib));
  }
  for (uint i = 0; i < 600; i++) {
    net_addr n = net_n(1000 + i);
    if (i < 400)
      bgp_gout_change(gout, &n, la, 1 + i % 2, false, 0);
    else
      bgp_gout_change(gout, &n, lb, 0, false, 0);
  }
  /* ALL_BUT 1 with A, ALL_BUT 2 with A, ALL with B */
  assert_int_equal(bgp_gout_flush(gout), 3);
  bgp_txlog_publish(tlog);
  for (u32 m = 1; m < MEMBERS; m++) {
    drain(m);
    uint want_msgs = m == 3 ? 3 : 2;
    assert_int_equal(mem[m].msgs, want_msgs);
    for (uint i = 0; i < 600; i++) {
      u32 want = i >= 400 ? MED_B : (1 + i % 2 == m ? 0 : MED_A);
      assert_int_equal(mem[m].rib[1000 + i], want);
    }
  }

  /* More than one message's worth: 1500 /24s arrive in two UPDATEs (as
   * many as the encoder alone needs), every one full but the last */
  for (u32 m = 1; m < MEMBERS; m++) {
    mem[m].nev = mem[m].msgs = 0;
    memset(mem[m].rib, 0, sizeof(mem[m].rib));
  }
  for (uint i = 0; i < 1500; i++) {
    net_addr n = net_n(i);
    bgp_gout_change(gout, &n, lb, 0, false, 0);
  }
  msgs = bgp_gout_flush(gout);
  bgp_txlog_publish(tlog);
  drain(1);
  assert_int_equal(mem[1].msgs, msgs);
  assert_int_equal(msgs, 2);
  assert_true(mem[1].lens[0] + 4 > 4096);
  for (uint i = 0; i < 1500; i++)
    assert_int_equal(mem[1].rib[i], MED_B);
}

static void
test_feed_and_raw_order(void **state UNUSED)
{
  net_addr n8 = net_n(8), n9 = net_n(9), n10 = net_n(10);
  u8 rr[64], eor[64];
  struct bgp_route_refresh borr = { .afi = BGP_AFI_IPV4, .subtype = BGP_RR_BEGIN, .safi = BGP_SAFI_UNICAST };
  uint rr_len = bgp_route_refresh_encode(rr, sizeof(rr), &borr);
  uint eor_len = bgp_update_encode_eor(BGP_AF_IPV4, eor, sizeof(eor));
  assert_int_equal(eor_len, 23);

  /* a change first: the items still go before it */
  bgp_gout_change(gout, &n8, lb, 0, true, 0);
  bgp_gout_raw(gout, 3, rr, rr_len);
  bgp_gout_feed(gout, &n8, la, 3);
  bgp_gout_feed(gout, &n10, lb, 3);
  bgp_gout_raw(gout, 3, eor, eor_len);
  bgp_gout_feed(gout, &n9, lb, 3);
  /* one change, three feed items, two raw messages */
  assert_int_equal(bgp_gout_pending(gout), 6);
  flush_and_drain();

  /* member 3: BoRR, N8 A (N10 B in any order beside it), End-of-RIB, N9 B, N8 B */
  struct member *m = &mem[3];
  assert_int_equal(m->nev, 6);
  assert_int_equal(m->ev[0].kind, EV_RR);
  assert_int_equal(m->ev[0].rr_subtype, BGP_RR_BEGIN);
  uint i8 = m->ev[1].net == 8 ? 1 : 2, i10 = 3 - i8;
  assert_int_equal(m->ev[i8].kind, EV_ANN);
  assert_int_equal(m->ev[i8].net, 8);
  assert_int_equal(m->ev[i8].med, MED_A);
  assert_int_equal(m->ev[i10].kind, EV_ANN);
  assert_int_equal(m->ev[i10].net, 10);
  assert_int_equal(m->ev[i10].med, MED_B);
  assert_int_equal(m->ev[3].kind, EV_EOR);
  assert_int_equal(m->ev[4].kind, EV_ANN);
  assert_int_equal(m->ev[4].net, 9);
  assert_int_equal(m->ev[4].med, MED_B);
  assert_int_equal(m->ev[5].kind, EV_ANN);
  assert_int_equal(m->ev[5].net, 8);
  assert_int_equal(m->ev[5].med, MED_B);
  assert_int_equal(m->rib[8], MED_B);
  assert_int_equal(m->rib[9], MED_B);
  assert_int_equal(m->rib[10], MED_B);

  /* the others: only the change */
  for (u32 id = 1; id <= 2; id++) {
    assert_int_equal(mem[id].nev, 1);
    assert_int_equal(mem[id].msgs, 1);
    expect(id, 8, ANN_B);
  }

  /* feed items of two members: each gets its own only */
  for (u32 id = 1; id < MEMBERS; id++)
    mem[id].nev = mem[id].msgs = 0;
  bgp_gout_feed(gout, &n9, la, 1);
  bgp_gout_feed(gout, &n9, lb, 2);
  bgp_gout_raw(gout, 2, eor, eor_len);
  flush_and_drain();
  expect(1, 9, ANN_A);
  expect(2, 9, ANN_B);
  assert_int_equal(mem[1].nev, 1);
  assert_int_equal(mem[2].nev, 2);
  assert_int_equal(mem[2].ev[1].kind, EV_EOR);
  assert_int_equal(mem[3].nev, 0);
  assert_int_equal(mem[3].msgs, 0);
}

/* A feed item without attributes withdraws its net from its member alone
 * (a member moving into another class drops what it holds that the class
 * does not get), before the changes of the same flush, which show a newer
 * state; withdrawals go out ahead of the announcements beside them. */
static void
test_feed_withdraw(void **state UNUSED)
{
  net_addr n8 = net_n(8), n9 = net_n(9), n10 = net_n(10);
  /* everyone holds 8 and 9 */
  bgp_gout_change(gout, &n8, la, 0, false, 0);
  bgp_gout_change(gout, &n9, la, 0, false, 0);
  flush_and_drain();
  for (u32 id = 1; id < MEMBERS; id++)
    mem[id].nev = mem[id].msgs = 0;

  bgp_gout_change(gout, &n9, lb, 0, true, 0);
  bgp_gout_feed(gout, &n10, lb, 2);
  bgp_gout_feed_withdraw(gout, &n9, 2);
  bgp_gout_feed_withdraw(gout, &n8, 2);
  assert_int_equal(bgp_gout_pending(gout), 4);
  flush_and_drain();

  /* member 2: both withdrawals, then N10 B, then the change: N9 B again */
  struct member *m = &mem[2];
  assert_int_equal(m->nev, 4);
  assert_int_equal(m->ev[0].kind, EV_WD);
  assert_int_equal(m->ev[1].kind, EV_WD);
  assert_int_equal(m->ev[0].net + m->ev[1].net, 17);
  assert_int_equal(m->ev[2].kind, EV_ANN);
  assert_int_equal(m->ev[2].net, 10);
  assert_int_equal(m->ev[3].kind, EV_ANN);
  assert_int_equal(m->ev[3].net, 9);
  assert_int_equal(m->ev[3].med, MED_B);
  assert_int_equal(m->rib[8], 0);
  assert_int_equal(m->rib[9], MED_B);
  /* the others: the change alone; they keep 8 */
  for (u32 id = 1; id < MEMBERS; id++)
    if (id != 2) {
      assert_int_equal(mem[id].nev, 1);
      expect(id, 9, ANN_B);
      assert_int_equal(mem[id].rib[8], MED_A);
    }
}

static void
test_cohort_feed(void **state UNUSED)
{
  net_addr n1 = net_n(1), n2 = net_n(2), n3 = net_n(3);
  u8 eor[64];
  uint eor_len = bgp_update_encode_eor(BGP_AF_IPV4, eor, sizeof(eor));
  bgp_gout_define(gout, 5, (u32[]){ 2, 3 }, 2);
  bgp_gout_feed_cohort(gout, &n1, la, 5, 0, NULL);
  bgp_gout_feed_cohort(gout, &n3, la, 5, 0, NULL);
  bgp_gout_feed_cohort(gout, &n2, lb, 5, 3, NULL);    /* learned from member 3 */
  bgp_gout_raw(gout, 2, eor, eor_len);
  bgp_gout_raw(gout, 3, eor, eor_len);
  /* a change beside them: after the feed for the cohort */
  bgp_gout_change(gout, &n1, lb, 0, true, 0);
  uint msgs = bgp_gout_flush(gout);
  bgp_txlog_publish(tlog);
  for (u32 id = 1; id < MEMBERS; id++)
    drain(id);
  /* N1 and N3 share their attributes and audience: one UPDATE; N2 one,
   * two End-of-RIBs, the definition and the change */
  assert_int_equal(msgs, 6);
  assert_int_equal(mem[1].nev, 1);
  expect(1, 1, ANN_B);
  struct member *m2 = &mem[2], *m3 = &mem[3];
  assert_int_equal(m2->nev, 5);
  assert_int_equal(m2->rib[1], MED_B);
  assert_int_equal(m2->rib[2], MED_B);
  assert_int_equal(m2->rib[3], MED_A);
  assert_int_equal(m2->ev[3].kind, EV_EOR);
  assert_int_equal(m2->ev[4].kind, EV_ANN);
  assert_int_equal(m2->ev[4].net, 1);
  /* member 3 never gets its own N2 */
  assert_int_equal(m3->nev, 4);
  assert_int_equal(m3->rib[2], 0);
  assert_int_equal(m3->rib[3], MED_A);
  assert_int_equal(m3->ev[2].kind, EV_EOR);
  assert_int_equal(m3->rib[1], MED_B);
  /* members stay in their cohort: a later feed to 5 reaches 2 and 3 */
  for (u32 id = 1; id < MEMBERS; id++)
    mem[id].nev = mem[id].msgs = 0;
  bgp_gout_feed_cohort(gout, &n3, lb, 5, 0, NULL);
  flush_and_drain();
  assert_int_equal(mem[1].nev, 0);
  expect(2, 3, ANN_B);
  expect(3, 3, ANN_B);
}

static void
test_changed_and_pending(void **state UNUSED)
{
  net_addr n1 = net_n(1), n2 = net_n(2), n3 = net_n(3);
  u8 eor[64];
  uint eor_len = bgp_update_encode_eor(BGP_AF_IPV4, eor, sizeof(eor));

  /* a raw message alone is pending and flushed */
  bgp_gout_raw(gout, 1, eor, eor_len);
  assert_int_equal(bgp_gout_pending(gout), 1);
  assert_int_equal(bgp_gout_flush(gout), 1);
  assert_int_equal(bgp_gout_pending(gout), 0);
  bgp_txlog_publish(tlog);
  drain(1);
  assert_int_equal(mem[1].nev, 1);
  assert_int_equal(mem[1].ev[0].kind, EV_EOR);
  mem[1].nev = mem[1].msgs = 0;

  /* nothing pending: the flush appends nothing */
  u64 end = bgp_txlog_end(tlog);
  assert_int_equal(bgp_gout_pending(gout), 0);
  assert_int_equal(bgp_gout_flush(gout), 0);
  bgp_txlog_publish(tlog);
  assert_true(bgp_txlog_end(tlog) == end);
  assert_false(bgp_gout_changed(gout, &n1));

  bgp_gout_change(gout, &n1, la, 0, false, 0);
  assert_true(bgp_gout_changed(gout, &n1));
  assert_false(bgp_gout_changed(gout, &n2));
  assert_int_equal(bgp_gout_pending(gout), 1);
  /* a second change of the same net is still one */
  bgp_gout_change(gout, &n1, lb, 0, false, 0);
  assert_int_equal(bgp_gout_pending(gout), 1);
  /* a change to nothing is a change too */
  bgp_gout_change(gout, &n2, NULL, 0, true, 1);
  assert_true(bgp_gout_changed(gout, &n2));
  /* a feed item is no change */
  bgp_gout_feed(gout, &n3, la, 2);
  assert_false(bgp_gout_changed(gout, &n3));
  assert_int_equal(bgp_gout_pending(gout), 3);
  /* A raw message counts too (bgp_gout.h says "changes and feed items"):
   * the group flushes when something is pending, and an End-of-RIB alone
   * must not wait for the next change. */
  bgp_gout_raw(gout, 2, eor, eor_len);
  assert_int_equal(bgp_gout_pending(gout), 4);

  /* N1 B to all, N2 withdrawn from 2 and 3, N3 + End-of-RIB to 2 */
  uint msgs = bgp_gout_flush(gout);
  assert_int_equal(msgs, 4);
  assert_int_equal(bgp_gout_pending(gout), 0);
  assert_false(bgp_gout_changed(gout, &n1));
  assert_false(bgp_gout_changed(gout, &n2));
  bgp_txlog_publish(tlog);
  for (u32 m = 1; m < MEMBERS; m++)
    drain(m);
  assert_int_equal(mem[1].msgs, 1);
  assert_int_equal(mem[2].msgs, 4);
  assert_int_equal(mem[3].msgs, 2);
  expect(1, 1, ANN_B);
  expect(2, 2, WD);
  expect(2, 3, ANN_A);

  /* and again nothing */
  end = bgp_txlog_end(tlog);
  assert_int_equal(bgp_gout_flush(gout), 0);
  bgp_txlog_publish(tlog);
  assert_true(bgp_txlog_end(tlog) == end);
}

static void
test_unencodable_dropped(void **state UNUSED)
{
  /* an IPv6 next hop for IPv4 NLRI without extended next hop */
  struct ea_list *l6 = mk_list(MED_A, ipa_from_ip6(ip6_build(0x20010db8, 0, 0, 1)));
  net_addr n1 = net_n(1), n2 = net_n(2), n3 = net_n(3);
  bgp_gout_change(gout, &n1, la, 0, false, 0);
  bgp_gout_change(gout, &n2, l6, 0, false, 0);
  bgp_gout_change(gout, &n3, l6, 0, false, 0);
  bgp_gout_feed(gout, &n2, l6, 3);
  u32 before = uc(l6);
  assert_int_equal(bgp_gout_flush(gout), 1);
  assert_int_equal(uc(l6), before - 3);
  bgp_txlog_publish(tlog);
  for (u32 m = 1; m < MEMBERS; m++) {
    drain(m);
    assert_int_equal(mem[m].msgs, 1);
    assert_int_equal(mem[m].nev, 1);
    expect(m, 1, ANN_A);
  }
  ea_unref(l6);
}

static void
test_references(void **state UNUSED)
{
  net_addr n1 = net_n(1), n2 = net_n(2);
  u32 a0 = uc(la), b0 = uc(lb);

  bgp_gout_change(gout, &n1, la, 0, false, 0);
  assert_int_equal(uc(la), a0 + 1);
  /* replaced by itself: still one */
  bgp_gout_change(gout, &n1, la, 1, false, 0);
  assert_int_equal(uc(la), a0 + 1);
  /* replaced by B: A back, B held */
  bgp_gout_change(gout, &n1, lb, 0, false, 0);
  assert_int_equal(uc(la), a0);
  assert_int_equal(uc(lb), b0 + 1);
  /* replaced by nothing: B back */
  bgp_gout_change(gout, &n1, NULL, 0, false, 0);
  assert_int_equal(uc(lb), b0);
  bgp_gout_change(gout, &n1, lb, 0, false, 0);
  bgp_gout_change(gout, &n2, la, 2, true, 1);
  bgp_gout_feed(gout, &n2, la, 3);
  bgp_gout_feed(gout, &n1, la, 3);
  assert_int_equal(uc(la), a0 + 3);
  assert_int_equal(uc(lb), b0 + 1);

  /* the flush drops them all */
  assert_true(bgp_gout_flush(gout) > 0);
  assert_int_equal(uc(la), a0);
  assert_int_equal(uc(lb), b0);
  bgp_txlog_publish(tlog);

  /* so does the free, and it sends nothing */
  bgp_gout_change(gout, &n1, la, 0, true, 0);
  bgp_gout_change(gout, &n2, lb, 1, false, 0);
  bgp_gout_feed(gout, &n2, lb, 2);
  bgp_gout_raw(gout, 2, "\xff", 1);
  assert_int_equal(uc(la), a0 + 1);
  assert_int_equal(uc(lb), b0 + 2);
  u64 end = bgp_txlog_end(tlog);
  bgp_gout_free(gout);
  gout = NULL;
  assert_int_equal(uc(la), a0);
  assert_int_equal(uc(lb), b0);
  bgp_txlog_publish(tlog);
  assert_true(bgp_txlog_end(tlog) == end);
}

/* Nets 0..count-1 (net_of gives them) in one flush, from no member:
 * announced with A in round 0, withdrawn in round 1. */
static void
burst(uint count, net_addr (*net_of)(uint), uint round)
{
  for (uint i = 0; i < count; i++) {
    net_addr n = net_of(i);
    bgp_gout_change(gout, &n, round ? NULL : la, 0, round == 1, 0);
  }
  assert_true(bgp_gout_flush(gout) > 0);
  bgp_txlog_publish(tlog);
}

/* A burst's outputs and scratch are kept for the next flush, whatever
 * its size: burst, one change, burst again, each exact. */
static void
test_burst_scratch(void **state UNUSED)
{
  for (uint round = 0; round < 2; round++) {
    burst(NETS, net_n, round);
    for (u32 m = 1; m < MEMBERS; m++) {
      mem[m].nev = 0;
      drain(m);
      for (uint i = 0; i < NETS; i++)
        assert_int_equal(mem[m].rib[i], round ? 0 : MED_A);
    }
    /* from member 2: it had the burst's route, withdrawn (round 0), or none */
    net_addr one = net_n(7);
    bgp_gout_change(gout, &one, lb, 2, round == 0, 0);
    assert_int_equal(bgp_gout_flush(gout), round ? 1 : 2);
    bgp_txlog_publish(tlog);
    for (u32 m = 1; m < MEMBERS; m++) {
      mem[m].nev = 0;
      drain(m);
      assert_int_equal(mem[m].rib[7], m == 2 ? 0 : MED_B);
    }
  }
}

/* A burst far beyond BGP_GOUT_PENDING_MAX in one flush (a caller that does
 * not ask export_busy between changes): announced, then withdrawn, every
 * net reaches every member exactly, and the flush's arrays (600,000
 * outputs: some 70 MB) go with it. */
#define HUGE_NETS 300000

static net_addr
huge_net(uint i)
{
  net_addr n;
  net_fill_ip4(&n, ip4_from_u32(0x14000000 + (i << 8)), 24);
  return n;
}

static void
huge_count(struct bgp_nlri_iter *it, u8 *seen, u8 bit)
{
  net_addr nets[256];
  struct bgp_error err;
  int k;
  while ((k = bgp_nlri_decode(it, nets, NULL, ARRAY_SIZE(nets), &err)) > 0)
    for (int i = 0; i < k; i++) {
      u32 idx = ((ipa_to_ip4(net_prefix(&nets[i])).addr - 0x14000000) >> 8);
      assert_true(idx < HUGE_NETS);
      assert_false(seen[idx] & bit);
      seen[idx] |= bit;
    }
  assert_int_equal(k, 0);
}

/* bit 1: announced, bit 2: withdrawn */
static void
huge_drain(u32 id, u8 *seen)
{
  const struct bgp_txlog_entry *e;
  struct bgp_rx_ctx rx = rx_ctx(true, true);
  while ((e = bgp_txlog_peek(tlog, &mem[id].cur))) {
    const u8 *msg = bgp_txlog_msg(e);
    struct ea_builder b;
    struct bgp_update u;
    struct bgp_nlri_iter it;
    ea_builder_init(&b);
    lp_flush(test_lp);
    assert_int_equal(bgp_update_parse(&rx, test_lp, msg + BGP_HEADER_LEN, e->len - BGP_HEADER_LEN, &b, &u),
                     BGP_ATTR_OK);
    bgp_update_withdrawn_iter(&rx, &u, &it);
    huge_count(&it, seen, 2);
    bgp_update_reach_iter(&rx, &u, &it);
    huge_count(&it, seen, 1);
    bgp_txlog_consume(tlog, &mem[id].cur);
  }
}

/* "Protocols" in `show memory`, less the log the burst fills */
static s64
huge_mem_beside_log(void)
{
  struct mem_usage u;
  mem_class_usage(MEM_PROTOCOLS, &u);
  return (s64) u.effective - (s64) bgp_txlog_held(tlog);
}

static void
test_huge_burst(void **state UNUSED)
{
  u8 *seen = calloc(HUGE_NETS, MEMBERS);
  for (uint round = 0; round < 2; round++) {
    s64 before = huge_mem_beside_log();
    burst(HUGE_NETS, huge_net, round);
    assert_true(huge_mem_beside_log() - before < (4 << 20));
    for (u32 m = 1; m < MEMBERS; m++)
      huge_drain(m, seen + (size_t) m * HUGE_NETS);
  }
  for (u32 m = 1; m < MEMBERS; m++)
    for (uint i = 0; i < HUGE_NETS; i++)
      if (seen[(size_t) m * HUGE_NETS + i] != 3)
        fail_msg("member %u: net %u: seen %u", m, i, seen[(size_t) m * HUGE_NETS + i]);
  free(seen);
}

/* Members 1, 2, 3 in classes 0, 1, 2. */
static u32 t_live = 7;

static void
classes_join(void)
{
  bgp_gout_classes(gout, 3, &t_live);
  for (u32 m = 1; m < MEMBERS; m++) {
    bgp_txlog_leave(tlog, &mem[m].cur);
    bgp_txlog_join(tlog, &mem[m].cur, m, m - 1, NULL, NULL);
  }
}

static void
test_classes(void **state UNUSED)
{
  classes_join();
  net_addr n[8];
  for (uint i = 1; i < 8; i++)
    n[i] = net_n(i);
  u32 none = 0, all = 7;
  /* N1, N6: every class gets A: one message for both, no bitmap */
  bgp_gout_change_classes(gout, &n[1], (struct ea_list *[]){ la, la, la }, 0, 0, &none, 0);
  bgp_gout_change_classes(gout, &n[6], (struct ea_list *[]){ la, la, la }, 0, 0, &none, 0);
  /* N2: class 0 A, class 1 B, class 2 nothing */
  bgp_gout_change_classes(gout, &n[2], (struct ea_list *[]){ la, lb, NULL }, 0, 0, &none, 0);
  /* N3: all had it; class 1 rejects it now */
  bgp_gout_change_classes(gout, &n[3], (struct ea_list *[]){ la, NULL, la }, 0, 0, &all, 0);
  /* N4: a route from member 2 (class 1) that only class 1 takes; class 1
   * had the one from 3 before */
  u32 had4 = 2;
  bgp_gout_change_classes(gout, &n[4], (struct ea_list *[]){ NULL, la, NULL }, 2, 1, &had4, 3);
  /* N5: gone; classes 0 and 2 had it, from member 1 */
  u32 had5 = 5;
  bgp_gout_change_classes(gout, &n[5], (struct ea_list *[]){ NULL, NULL, NULL }, 0, 0, &had5, 1);
  /* N7: B for class 2 first, then A for all: the last one counts */
  bgp_gout_change_classes(gout, &n[7], (struct ea_list *[]){ NULL, NULL, lb }, 0, 0, &none, 0);
  bgp_gout_change_classes(gout, &n[7], (struct ea_list *[]){ la, la, la }, 0, 0, &all, 0);

  /* withdrawals: N3 to class 1, N4 to member 2, N5 to classes 0, 2 but 1;
   * announcements: N1 N6 N7 to all, N2 A, N2 B, N3 A, N4 A (class 1 but 2) */
  assert_int_equal(bgp_gout_flush(gout), 8);
  bgp_txlog_publish(tlog);
  for (u32 m = 1; m < MEMBERS; m++)
    drain(m);
  static const enum outcome want[8][MEMBERS] = {
    /*        -     1      2      3 */
    [1] = { NONE, ANN_A, ANN_A, ANN_A },
    [2] = { NONE, ANN_A, ANN_B, NONE },
    [3] = { NONE, ANN_A, WD, ANN_A },
    [4] = { NONE, NONE, WD, NONE },
    [5] = { NONE, NONE, NONE, WD },
    [6] = { NONE, ANN_A, ANN_A, ANN_A },
    [7] = { NONE, ANN_A, ANN_A, ANN_A },
  };
  expect_nets(want);

  /* a cohort of all three, fed for classes 0 and 2 only */
  u32 ids[] = { 1, 2, 3 }, set = 5;
  bgp_gout_define(gout, 9, ids, 3);
  bgp_gout_feed_cohort(gout, &n[2], lb, 9, 0, &set);
  flush_and_drain();
  assert_int_equal(mem[1].rib[2], MED_B);
  assert_int_equal(mem[2].rib[2], MED_B);       /* from before: B */
  assert_int_equal(mem[3].rib[2], MED_B);
  struct event ev[8];
  assert_int_equal(events_about(2, 2, ev, 8), 1);
  assert_int_equal(events_about(3, 2, ev, 8), 1);
}

int
main(void)
{
  bgp_test_init("bgp_gout_test");
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_split_horizon, setup, teardown),
    cmocka_unit_test_setup_teardown(test_packing, setup, teardown),
    cmocka_unit_test_setup_teardown(test_feed_and_raw_order, setup, teardown),
    cmocka_unit_test_setup_teardown(test_feed_withdraw, setup, teardown),
    cmocka_unit_test_setup_teardown(test_cohort_feed, setup, teardown),
    cmocka_unit_test_setup_teardown(test_classes, setup, teardown),
    cmocka_unit_test_setup_teardown(test_changed_and_pending, setup, teardown),
    cmocka_unit_test_setup_teardown(test_unencodable_dropped, setup, teardown),
    cmocka_unit_test_setup_teardown(test_references, setup, teardown),
    cmocka_unit_test_setup_teardown(test_burst_scratch, setup, teardown),
    cmocka_unit_test_setup_teardown(test_huge_burst, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
