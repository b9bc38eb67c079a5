/*
 * Unit tests for proto/bgp/bgp_txlog.c: each member reads exactly the
 * entries addressed to it, in order, byte for byte, across chunks of every
 * fill; nothing shows before a publish, and a late member sees only what
 * follows its join; chunks are freed once every cursor has left them and
 * not before; four reader threads keep up with a writer that trims behind
 * them; a publish wakes a member's loop; cohorts reach the members a
 * DEFINE named, until another names them, and none who joined later;
 * a class set reaches the readers of those classes only, its bytes intact.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "proto/bgp/bgp_txlog.h"
#include "nest/test_loops.h"

#define CHUNK BGP_TXLOG_CHUNK           /* what bgp_txlog.c allocates per chunk */
#define CHUNK_DATA (CHUNK - 24)         /* less its header */

/* Byte i of message seq: the first four are seq itself when there is
 * room, the rest a pattern of both. */
static u8
msg_byte(u32 seq, uint i, uint len)
{
  if (len >= 4 && i < 4)
    return (u8) (seq >> (8 * i));
  return (u8) (seq * 31 + i * 7 + (i >> 8));
}

static uint
mk_msg(u8 *buf, u32 seq, uint len)
{
  for (uint i = 0; i < len; i++)
    buf[i] = msg_byte(seq, i, len);
  return len;
}

static bool
msg_ok(const struct bgp_txlog_entry *e, u32 seq, uint len)
{
  if (e->len != len)
    return false;
  for (uint i = 0; i < len; i++)
    if (bgp_txlog_msg(e)[i] != msg_byte(seq, i, len))
      return false;
  return true;
}

static u32
msg_seq(const struct bgp_txlog_entry *e)
{
  const u8 *m = bgp_txlog_msg(e);
  return m[0] | m[1] << 8 | m[2] << 16 | (u32) m[3] << 24;
}

static void
append_seq(struct bgp_txlog *log, enum bgp_txlog_audience aud, u32 member, u32 seq, uint len)
{
  static u8 buf[BGP_TXLOG_MAX_MSG];
  bgp_txlog_append(log, aud, member, buf, mk_msg(buf, seq, len));
}

/* Read everything published for cur; returns the first bytes (seq) of each. */
static uint
drain(struct bgp_txlog *log, struct bgp_txlog_cursor *cur, u32 *seqs, uint max)
{
  uint n = 0;
  const struct bgp_txlog_entry *e;
  while ((e = bgp_txlog_peek(log, cur))) {
    assert_true(n < max);
    assert_true(e->len >= 4);
    seqs[n++] = msg_seq(e);
    bgp_txlog_consume(log, cur);
  }
  return n;
}

static void
test_audience(void **state UNUSED)
{
  struct bgp_txlog *log = bgp_txlog_new();
  struct bgp_txlog_cursor cur[4];
  for (u32 m = 1; m <= 3; m++)
    bgp_txlog_join(log, &cur[m], m, 0, NULL, NULL);
  append_seq(log, BGP_TXLOG_ALL, 0, 10, 19);
  append_seq(log, BGP_TXLOG_ALL_BUT, 2, 11, 4);
  append_seq(log, BGP_TXLOG_ONLY, 3, 12, 100);
  append_seq(log, BGP_TXLOG_ALL, 0, 13, 23);
  bgp_txlog_publish(log);

  static const u32 want[4][4] = { {}, { 10, 11, 13 }, { 10, 13 }, { 10, 11, 12, 13 } };
  static const uint want_n[4] = { 0, 3, 2, 4 };
  static const uint lens[] = { [10] = 19, [11] = 4, [12] = 100, [13] = 23 };
  for (u32 m = 1; m <= 3; m++) {
    for (uint i = 0; i < want_n[m]; i++) {
      const struct bgp_txlog_entry *e = bgp_txlog_peek(log, &cur[m]);
      assert_non_null(e);
      /* peek again without consume: the same entry */
      assert_ptr_equal(bgp_txlog_peek(log, &cur[m]), e);
      assert_true(msg_ok(e, want[m][i], lens[want[m][i]]));
      bgp_txlog_consume(log, &cur[m]);
    }
    assert_null(bgp_txlog_peek(log, &cur[m]));
    assert_int_equal(bgp_txlog_lag(log, &cur[m]), 0);
    bgp_txlog_leave(log, &cur[m]);
  }
  bgp_txlog_free(log);
}

static void
define(struct bgp_txlog *log, u32 cohort, const u32 *ids, uint n)
{
  bgp_txlog_append_cohort(log, BGP_TXLOG_DEFINE, cohort, 0, ids, 4 * n);
}

static void
append_cohort(struct bgp_txlog *log, enum bgp_txlog_audience aud, u32 cohort, u32 member, u32 seq)
{
  u8 buf[8];
  bgp_txlog_append_cohort(log, aud, cohort, member, buf, mk_msg(buf, seq, sizeof(buf)));
}

static void
test_cohorts(void **state UNUSED)
{
  struct bgp_txlog *log = bgp_txlog_new();
  struct bgp_txlog_cursor cur[5];
  u32 seqs[5][16];
  for (u32 m = 1; m <= 3; m++)
    bgp_txlog_join(log, &cur[m], m, 0, NULL, NULL);
  append_cohort(log, BGP_TXLOG_COHORT, 7, 0, 1);        /* before its DEFINE: nobody */
  define(log, 7, (u32[]){ 1, 3 }, 2);
  append_cohort(log, BGP_TXLOG_COHORT, 7, 0, 2);
  append_cohort(log, BGP_TXLOG_COHORT_BUT, 7, 3, 3);
  append_seq(log, BGP_TXLOG_ALL, 0, 4, 8);
  define(log, 8, (u32[]){ 2 }, 1);
  append_cohort(log, BGP_TXLOG_COHORT, 8, 0, 5);
  append_cohort(log, BGP_TXLOG_COHORT, 7, 0, 6);        /* 1 and 3 are still in 7 */
  bgp_txlog_publish(log);
  /* 4 joins now: it is in no cohort */
  bgp_txlog_join(log, &cur[4], 4, 0, NULL, NULL);
  define(log, 9, (u32[]){ 3, 4 }, 2);                    /* 3 moves on to 9 */
  append_cohort(log, BGP_TXLOG_COHORT, 7, 0, 7);
  append_cohort(log, BGP_TXLOG_COHORT_BUT, 9, 4, 8);
  append_cohort(log, BGP_TXLOG_COHORT, 9, 0, 9);
  bgp_txlog_publish(log);

  static const u32 want[5][8] = { {}, { 2, 3, 4, 6, 7 }, { 4, 5 }, { 2, 4, 6, 8, 9 }, { 9 } };
  static const uint want_n[5] = { 0, 5, 2, 5, 1 };
  for (u32 m = 1; m <= 4; m++) {
    uint n = drain(log, &cur[m], seqs[m], 16);
    assert_int_equal(n, want_n[m]);
    for (uint i = 0; i < n; i++)
      assert_int_equal(seqs[m][i], want[m][i]);
    assert_int_equal(bgp_txlog_lag(log, &cur[m]), 0);
    bgp_txlog_leave(log, &cur[m]);
  }
  bgp_txlog_free(log);
}

static void
test_publish_and_late_join(void **state UNUSED)
{
  struct bgp_txlog *log = bgp_txlog_new();
  struct bgp_txlog_cursor a, b;
  u32 seqs[8];
  bgp_txlog_join(log, &a, 1, 0, NULL, NULL);
  append_seq(log, BGP_TXLOG_ALL, 0, 1, 8);
  append_seq(log, BGP_TXLOG_ALL, 0, 2, 8);
  assert_null(bgp_txlog_peek(log, &a));
  assert_int_equal(bgp_txlog_lag(log, &a), 0);
  bgp_txlog_publish(log);
  assert_true(bgp_txlog_lag(log, &a) > 0);

  /* b joins after the publish of 1 and 2 and before that of 3 */
  bgp_txlog_join(log, &b, 2, 0, NULL, NULL);
  assert_null(bgp_txlog_peek(log, &b));
  append_seq(log, BGP_TXLOG_ALL, 0, 3, 8);
  assert_int_equal(drain(log, &a, seqs, 8), 2);
  assert_int_equal(seqs[0], 1);
  assert_int_equal(seqs[1], 2);
  assert_null(bgp_txlog_peek(log, &b));
  bgp_txlog_publish(log);
  assert_int_equal(drain(log, &a, seqs, 8), 1);
  assert_int_equal(seqs[0], 3);
  assert_int_equal(drain(log, &b, seqs, 8), 1);
  assert_int_equal(seqs[0], 3);
  bgp_txlog_leave(log, &a);
  bgp_txlog_leave(log, &b);
  bgp_txlog_free(log);
}

/* Lengths for the chunk test: the extremes, an entry filling a chunk
 * (12 + 65500 = 65512 bytes of data) and a spread in between. */
static uint
boundary_len(u32 seq)
{
  static const uint fixed[] = { 1, 65535, 2, 65500, 3, 65500, 7, 8, 65524, 4, 65535, 65535, 5 };
  if (seq < ARRAY_SIZE(fixed))
    return fixed[seq];
  u32 x = seq * 2654435761U;
  return (x >> 8) % 3 ? (x >> 12) % 300 + 1 : (x >> 12) % BGP_TXLOG_MAX_MSG + 1;
}

static void
check_boundaries(struct bgp_txlog *log, struct bgp_txlog_cursor *cur, u32 *next, u32 upto)
{
  const struct bgp_txlog_entry *e;
  while ((e = bgp_txlog_peek(log, cur))) {
    assert_true(*next < upto);
    assert_true(msg_ok(e, *next, boundary_len(*next)));
    (*next)++;
    bgp_txlog_consume(log, cur);
  }
  assert_int_equal(*next, upto);
}

static void
test_chunk_boundaries(void **state UNUSED)
{
  enum { N = 1000 };
  struct bgp_txlog *log = bgp_txlog_new();
  struct bgp_txlog_cursor eager, late;
  u32 eager_next = 0, late_next = 0;
  bgp_txlog_join(log, &eager, 1, 0, NULL, NULL);
  bgp_txlog_join(log, &late, 2, 0, NULL, NULL);
  /* batches of 1..7 entries: the eager reader stops at every kind of
   * place, chunk ends with and without a skipped rest included */
  for (u32 seq = 0, batch = 1; seq < N; batch = batch % 7 + 1) {
    for (u32 i = 0; i < batch && seq < N; i++, seq++)
      append_seq(log, BGP_TXLOG_ALL, 0, seq, boundary_len(seq));
    bgp_txlog_publish(log);
    check_boundaries(log, &eager, &eager_next, seq);
    bgp_txlog_trim(log);
  }
  /* all of it is still there for the late reader */
  assert_true(bgp_txlog_held(log) > (u64) N * 300);
  check_boundaries(log, &late, &late_next, N);
  bgp_txlog_trim(log);
  assert_true(bgp_txlog_held(log) <= CHUNK + BGP_TXLOG_MAX_MSG);
  bgp_txlog_leave(log, &eager);
  bgp_txlog_leave(log, &late);
  bgp_txlog_free(log);
}

static void
test_trim_and_lag(void **state UNUSED)
{
  /* 1000-byte messages: 1016-byte entries, PER in a chunk; 200 of them
   * fill FULL chunks and part of one more */
  enum { LEN = 1000, ENTRY = 1016, DATA = CHUNK_DATA, PER = DATA / ENTRY, FULL = 199 / PER };
  struct bgp_txlog *log = bgp_txlog_new();
  struct bgp_txlog_cursor fast, slow, none;
  u32 seqs[256];
  bgp_txlog_join(log, &fast, 1, 0, NULL, NULL);
  bgp_txlog_join(log, &slow, 2, 0, NULL, NULL);
  bgp_txlog_join(log, &none, 3, 0, NULL, NULL);    /* gets nothing */
  for (u32 seq = 0; seq < 200; seq++)
    append_seq(log, BGP_TXLOG_ALL_BUT, 3, seq, LEN);
  bgp_txlog_publish(log);
  _Static_assert(200 - FULL * PER <= PER && 200 - FULL * PER > 0, "the last chunk is part full");
  u64 end = (u64) FULL * DATA + (200 - FULL * PER) * ENTRY;
  assert_int_equal(bgp_txlog_held(log), (FULL + 1) * CHUNK);
  assert_int_equal(bgp_txlog_lag(log, &slow), end);

  assert_int_equal(drain(log, &fast, seqs, 256), 200);
  assert_null(bgp_txlog_peek(log, &none));
  assert_int_equal(bgp_txlog_lag(log, &fast), 0);
  assert_int_equal(bgp_txlog_lag(log, &none), 0);
  bgp_txlog_trim(log);
  assert_int_equal(bgp_txlog_held(log), (FULL + 1) * CHUNK);

  /* slow reads all of the first chunk: still in it */
  for (uint i = 0; i < PER; i++) {
    assert_non_null(bgp_txlog_peek(log, &slow));
    bgp_txlog_consume(log, &slow);
  }
  assert_int_equal(bgp_txlog_lag(log, &slow), end - PER * ENTRY);
  bgp_txlog_trim(log);
  assert_int_equal(bgp_txlog_held(log), (FULL + 1) * CHUNK);

  /* the next entry is in the second chunk */
  assert_non_null(bgp_txlog_peek(log, &slow));
  assert_int_equal(bgp_txlog_lag(log, &slow), end - DATA);
  bgp_txlog_consume(log, &slow);
  assert_int_equal(bgp_txlog_lag(log, &slow), end - DATA - ENTRY);
  bgp_txlog_trim(log);
  assert_int_equal(bgp_txlog_held(log), FULL * CHUNK);

  /* caught up: the chunk being written stays */
  assert_int_equal(drain(log, &slow, seqs, 256), 200 - PER - 1);
  assert_int_equal(seqs[0], PER + 1);
  assert_int_equal(bgp_txlog_lag(log, &slow), 0);
  bgp_txlog_trim(log);
  assert_int_equal(bgp_txlog_held(log), CHUNK);

  /* with nobody reading, all but the chunk of the published end go */
  bgp_txlog_leave(log, &fast);
  bgp_txlog_leave(log, &slow);
  bgp_txlog_leave(log, &none);
  for (u32 seq = 0; seq < 3 * PER; seq++)
    append_seq(log, BGP_TXLOG_ALL, 0, seq, LEN);
  bgp_txlog_publish(log);
  assert_int_equal(bgp_txlog_held(log), 4 * CHUNK);
  bgp_txlog_trim(log);
  assert_int_equal(bgp_txlog_held(log), CHUNK);
  bgp_txlog_free(log);
}

/* --- A writer and four readers on threads of their own. --- */

enum { T_N = 200000, T_MEMBERS = 4, T_BATCH = 5, T_TRIM = 1000 };

static enum bgp_txlog_audience
t_aud(u32 seq, u32 *member)
{
  *member = (seq / 3) % T_MEMBERS;
  return (enum bgp_txlog_audience[]){ BGP_TXLOG_ALL, BGP_TXLOG_ALL_BUT, BGP_TXLOG_ONLY }[seq % 3];
}

static bool
t_for(u32 seq, u32 m)
{
  u32 k;
  /* room for a class word, which an entry for every class has not */
  struct { struct bgp_txlog_entry e; u32 classes[1]; } x = { .e = { .audience = t_aud(seq, &k) } };
  x.e.member = k;
  return bgp_txlog_for(&x.e, m, 0, 0);
}

struct t_reader {
  pthread_t th;
  struct bgp_txlog *log;
  struct bgp_txlog_cursor cur;
  u32 seen;                             /* entries read */
  u32 bad;                              /* the first unexpected seq + 1, 0 if none */
};

static void *
t_writer(void *data)
{
  struct bgp_txlog *log = data;
  u8 buf[64];
  for (u32 seq = 0; seq < T_N; seq++) {
    u32 m;
    enum bgp_txlog_audience aud = t_aud(seq, &m);
    bgp_txlog_append(log, aud, m, buf, mk_msg(buf, seq, 4 + seq % 41));
    if (seq % T_BATCH == T_BATCH - 1)
      bgp_txlog_publish(log);
    if (seq % T_TRIM == 0)
      bgp_txlog_trim(log);
  }
  bgp_txlog_publish(log);
  return NULL;
}

static void *
t_read(void *data)
{
  struct t_reader *r = data;
  u32 want = 0;
  while (want < T_N && !t_for(want, r->cur.member))
    want++;
  while (want < T_N && !r->bad) {
    const struct bgp_txlog_entry *e = bgp_txlog_peek(r->log, &r->cur);
    if (!e) {
      sched_yield();
      continue;
    }
    if (!msg_ok(e, want, 4 + want % 41))
      r->bad = want + 1;
    bgp_txlog_consume(r->log, &r->cur);
    r->seen++;
    do
      want++;
    while (want < T_N && !t_for(want, r->cur.member));
  }
  return NULL;
}

static void
test_threads(void **state UNUSED)
{
  struct bgp_txlog *log = bgp_txlog_new();
  struct t_reader r[T_MEMBERS];
  memset(r, 0, sizeof(r));
  for (u32 m = 0; m < T_MEMBERS; m++) {
    r[m].log = log;
    bgp_txlog_join(log, &r[m].cur, m, 0, NULL, NULL);
  }
  for (u32 m = 0; m < T_MEMBERS; m++)
    assert_int_equal(pthread_create(&r[m].th, NULL, t_read, &r[m]), 0);
  pthread_t w;
  assert_int_equal(pthread_create(&w, NULL, t_writer, log), 0);
  pthread_join(w, NULL);
  for (u32 m = 0; m < T_MEMBERS; m++) {
    pthread_join(r[m].th, NULL);
    assert_int_equal(r[m].bad, 0);
    /* nothing more (the reader may have looked before the last publish) */
    assert_null(bgp_txlog_peek(log, &r[m].cur));
    /* a third to all, a third to all but one, a third to one only */
    u32 want = 0;
    for (u32 s = 0; s < T_N; s++)
      want += t_for(s, m);
    assert_int_equal(r[m].seen, want);
  }
  bgp_txlog_trim(log);
  assert_true(bgp_txlog_held(log) <= CHUNK);
  for (u32 m = 0; m < T_MEMBERS; m++)
    bgp_txlog_leave(log, &r[m].cur);
  bgp_txlog_free(log);
}

/* --- A member in a loop: publish wakes it, it reads in its loop. --- */

struct t_member {
  struct bgp_txlog *log;
  struct bgp_txlog_cursor cur;
  struct event wake;
  u32 got;                              /* atomic: entries read in the loop */
};

static void
t_member_wake(void *data)
{
  struct t_member *tm = data;
  while (bgp_txlog_peek(tm->log, &tm->cur)) {
    bgp_txlog_consume(tm->log, &tm->cur);
    __atomic_add_fetch(&tm->got, 1, __ATOMIC_RELEASE);
  }
}

static void
t_noop(void *data UNUSED)
{
}

static bool
t_wait_got(struct t_member *tm, u32 n)
{
  for (int i = 0; i < 5000; i++) {
    if (__atomic_load_n(&tm->got, __ATOMIC_ACQUIRE) >= n)
      return true;
    usleep(1000);
  }
  return false;
}

static void
test_wake(void **state UNUSED)
{
  struct t_member tm = { .log = bgp_txlog_new() };
  ev_init(&tm.wake, t_member_wake, &tm);
  bgp_txlog_join(tm.log, &tm.cur, 1, 0, main_loop(), &tm.wake);
  append_seq(tm.log, BGP_TXLOG_ALL, 0, 1, 10);
  append_seq(tm.log, BGP_TXLOG_ONLY, 2, 2, 10);
  append_seq(tm.log, BGP_TXLOG_ALL_BUT, 2, 3, 10);
  bgp_txlog_publish(tm.log);
  assert_true(t_wait_got(&tm, 2));
  append_seq(tm.log, BGP_TXLOG_ONLY, 1, 4, 10);
  bgp_txlog_publish(tm.log);
  assert_true(t_wait_got(&tm, 3));
  /* queued after any wake-up still pending: once it ran, the loop is done
   * with the cursor */
  loop_call_sync(main_loop(), t_noop, NULL);
  assert_int_equal(__atomic_load_n(&tm.got, __ATOMIC_ACQUIRE), 3);
  bgp_txlog_leave(tm.log, &tm.cur);
  bgp_txlog_free(tm.log);
}

/* Readers of classes 0, 1, 33 and 70; sets of one word, of three, an
 * entry for every class, and a set with a member left out. */
static void
test_class_sets(void **state UNUSED)
{
  struct bgp_txlog *log = bgp_txlog_new();
  static const u32 cls[] = { 0, 1, 33, 70 };
  struct bgp_txlog_cursor cur[4];
  for (uint m = 0; m < 4; m++)
    bgp_txlog_join(log, &cur[m], m + 1, cls[m], NULL, NULL);
  u8 buf[64];
  u32 low[1] = { 1U << 1 }, wide[3] = { 1U << 0, 0, 1U << (70 - 64) }, c33[2] = { 0, 1U << 1 };
  bgp_txlog_append_set(log, BGP_TXLOG_ALL, 0, 0, low, 1, buf, mk_msg(buf, 1, 20));
  bgp_txlog_append_set(log, BGP_TXLOG_ALL, 0, 0, wide, 3, buf, mk_msg(buf, 2, 33));
  bgp_txlog_append_set(log, BGP_TXLOG_ALL, 0, 0, NULL, 0, buf, mk_msg(buf, 3, 7));
  bgp_txlog_append_set(log, BGP_TXLOG_ALL_BUT, 0, 4, wide, 3, buf, mk_msg(buf, 4, 9));
  bgp_txlog_append_set(log, BGP_TXLOG_ALL, 0, 0, c33, 2, buf, mk_msg(buf, 5, 64));
  bgp_txlog_publish(log);
  static const u32 want[4][4] = { { 2, 3, 4 }, { 1, 3 }, { 3, 5 }, { 2, 3 } };
  static const uint lens[] = { 0, 20, 33, 7, 9, 64 };
  for (uint m = 0; m < 4; m++) {
    const struct bgp_txlog_entry *e;
    uint n = 0;
    while ((e = bgp_txlog_peek(log, &cur[m]))) {
      assert_true(n < 3 && want[m][n]);
      u32 seq = msg_seq(e);
      assert_int_equal(seq, want[m][n]);
      assert_true(msg_ok(e, seq, lens[seq]));
      n++;
      bgp_txlog_consume(log, &cur[m]);
    }
    assert_true(n == 3 || !want[m][n]);
    bgp_txlog_leave(log, &cur[m]);
  }
  bgp_txlog_free(log);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_audience),
    cmocka_unit_test(test_cohorts),
    cmocka_unit_test(test_class_sets),
    cmocka_unit_test(test_publish_and_late_join),
    cmocka_unit_test(test_chunk_boundaries),
    cmocka_unit_test(test_trim_and_lag),
    cmocka_unit_test(test_threads),
    cmocka_unit_test(test_wake),
  };
  return test_run_with_loops("bgp_txlog_test", tests, NULL);
}
