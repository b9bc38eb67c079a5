/*
 * Unit tests for proto/bgp/bgp_memo.c: the memo made when a list is
 * interned holds what its attributes say, and a list interned before the
 * hook was registered is read through a memo made on the spot.
 */
#include "proto/bgp/bgp_test.h"
#include "proto/bgp/bgp_memo.h"
#include "proto/bgp/bgp_rules.h"

static struct ea_list *
make(int lp, int med, int origin, const u32 *path, uint hops, const u32 *comm, uint ncomm, u8 dest)
{
  struct ea_builder b;
  ea_builder_init(&b);
  b.source = RTS_BGP;
  b.dest = dest;
  if (lp >= 0)
    ea_set_int(&b, BGP_EA(BA_LOCAL_PREF), EAF_INT, BAF_TRANSITIVE, (u32) lp);
  if (med >= 0)
    ea_set_int(&b, BGP_EA(BA_MULTI_EXIT_DISC), EAF_INT, BAF_OPTIONAL, (u32) med);
  if (origin >= 0)
    ea_set_int(&b, BGP_EA(BA_ORIGIN), EAF_INT, BAF_TRANSITIVE, (u32) origin);
  static u8 seg[2 + 4 * 8];
  if (hops) {
    seg[0] = AS_PATH_SEQUENCE;
    seg[1] = (u8) hops;
    memcpy(seg + 2, path, 4 * hops);
    ea_set_data(&b, BGP_EA(BA_AS_PATH), EAF_AS_PATH, BAF_TRANSITIVE, seg, 2 + 4 * hops);
  }
  if (ncomm)
    ea_set_data(&b, BGP_EA(BA_COMMUNITY), EAF_INT_SET, BAF_OPTIONAL | BAF_TRANSITIVE, comm, 4 * ncomm);
  return ea_intern(&b);
}

static void
test_memo_holds_the_inputs(void **state)
{
  static const u32 path[] = { 65001, 65002, 65003 }, comm[] = { 0x00010002, BGP_COMM_NO_EXPORT };
  struct ea_list *l = make(200, 7, ORIGIN_EGP, path, 3, comm, 2, RTD_UNICAST);
  const struct bgp_memo *m = (const struct bgp_memo *) l->memo;
  struct bgp_memo tmp;
  assert_ptr_equal(bgp_memo(l, &tmp), m);           /* made at intern */
  assert_true(m->bits & BGP_MEMO_SET);
  assert_true(m->bits & BGP_MEMO_LOCAL_PREF);
  assert_int_equal(m->local_pref, 200);
  assert_true(m->bits & BGP_MEMO_MED);
  assert_int_equal(m->med, 7);
  assert_int_equal(bgp_memo_origin(m), ORIGIN_EGP);
  assert_int_equal(m->path_len, 3);
  assert_int_equal(m->first_as, 65001);
  assert_int_equal(m->bits & BGP_MEMO_WK, BGP_WK_NO_EXPORT);
  assert_int_equal(bgp_wk_communities(l), BGP_WK_NO_EXPORT);
  assert_false(m->bits & (BGP_MEMO_AIGP | BGP_MEMO_ORIGINATOR | BGP_MEMO_CLUSTER | BGP_MEMO_UNREACHABLE));
  ea_unref(l);

  /* nothing given: no presence bits, ORIGIN counts as incomplete */
  l = make(-1, -1, -1, NULL, 0, NULL, 0, RTD_UNREACHABLE);
  m = (const struct bgp_memo *) l->memo;
  assert_false(m->bits & (BGP_MEMO_LOCAL_PREF | BGP_MEMO_MED | BGP_MEMO_WK));
  assert_int_equal(bgp_memo_origin(m), ORIGIN_INCOMPLETE);
  assert_int_equal(m->path_len, 0);
  assert_int_equal(m->first_as, 0);
  assert_true(m->bits & BGP_MEMO_UNREACHABLE);
  ea_unref(l);

  /* an ORIGIN no filter sets is left to the list */
  l = make(-1, -1, 5, NULL, 0, NULL, 0, RTD_UNICAST);
  assert_true(((const struct bgp_memo *) l->memo)->bits & BGP_MEMO_ORIGIN_ODD);
  ea_unref(l);
}

/* The memo lies in the list's first 64 bytes with the preference: what a
 * comparison reads (nest/rt_attr.h). */
static void
test_memo_fits(void **state)
{
  assert_true(sizeof(struct bgp_memo) <= EA_MEMO_SIZE);
  assert_true(offsetof(struct ea_list, memo) + sizeof(struct bgp_memo) <= 64);
  assert_true(offsetof(struct ea_list, preference) + 4 <= 64);
}

int
main(void)
{
  bgp_test_init("bgp_memo_test");
  bgp_memo_init();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_memo_holds_the_inputs),
    cmocka_unit_test(test_memo_fits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
