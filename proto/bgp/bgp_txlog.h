/*
 * DOC: Transmit log: UPDATEs encoded once, read by every member of a group.
 *
 * The first block of BGP update groups. A group loop encodes each UPDATE
 * once and appends it to the log; every member session reads the log from
 * its own loop with its own cursor and copies the bytes to its socket.
 * Entries carry an audience, so split horizon (a route never goes back to
 * the session it came from) costs a few bytes instead of a second encoding.
 *
 * One writer (the group loop; the thread may change, never two at once)
 * appends and publishes; readers never lock, they follow an acquire load
 * of the published end. Chunks are freed by the writer once every cursor
 * has left them. See bgp_txlog.c for the memory ordering.
 */
#ifndef PROTO_BGP_BGP_TXLOG_H
#define PROTO_BGP_BGP_TXLOG_H

#include "lib/birdlib.h"
#include "lib/lists.h"

struct loop;
struct event;
struct bgp_txlog;                       /* opaque; shared by the group and its members */
struct bgp_txlog_chunk;                 /* opaque */

/* The largest message: BGP extended messages (RFC 8654). */
#define BGP_TXLOG_MAX_MSG 65535

/* Bytes allocated for a chunk, at least (a larger entry gets a chunk of
 * its size). Every log keeps the chunk holding its end: the multi layout
 * has a group per peer, and at 64 KiB their logs held 2 MB more at 100
 * peers x 100 routes than at this size, with the same CPU at 100 x 10k in
 * one table, where a single group's log carries everything. */
#define BGP_TXLOG_CHUNK (8 * 1024)

/*
 * Cohorts: members fed together (a group walks its table once for all
 * members that joined meanwhile). A DEFINE entry names cohort c's members
 * (its message: their numbers, u32 each); a reader that finds itself
 * there belongs to c from then on, until another DEFINE names it. The
 * entries of c follow its DEFINE, so a reader always knows in time.
 */
enum bgp_txlog_audience {
  BGP_TXLOG_ALL = 0,                    /* every member */
  BGP_TXLOG_ALL_BUT,                    /* every member but entry.member */
  BGP_TXLOG_ONLY,                       /* entry.member alone */
  BGP_TXLOG_COHORT,                     /* the members of entry.cohort */
  BGP_TXLOG_COHORT_BUT,                 /* those but entry.member */
  BGP_TXLOG_DEFINE,                     /* who is in entry.cohort; readers keep it, peek never returns it */
};

/*
 * Export classes: members of a group whose export filters differ each
 * read as one class (a small number, cursor.cls). An entry may narrow its
 * audience to a set of classes, a bitmap of entry.classes u32 words in
 * front of the message (0 words: every class). So a route that several
 * filters pass alike is encoded once for all of them.
 */

/* Class sets: class k is bit k % 32 of word k / 32. */
static inline uint bgp_class_words(uint count) { return (count + 31) / 32; }
static inline bool bgp_class_has(const u32 *set, u32 k) { return set[k / 32] & (1U << (k % 32)); }
static inline void
bgp_class_put(u32 *set, u32 k, bool on)
{
  if (on)
    set[k / 32] |= 1U << (k % 32);
  else
    set[k / 32] &= ~(1U << (k % 32));
}

/* An entry as it lies in the log, the message right after it. Written by
 * the writer before publication, read-only afterwards. */
struct bgp_txlog_entry {
  u32 len;                              /* bytes of the message */
  u16 audience;                         /* enum bgp_txlog_audience */
  u16 classes;                          /* u32 words of class bitmap before the message, 0: all */
  u32 member;                           /* the member of ALL_BUT, ONLY, COHORT_BUT */
  u32 cohort;                           /* the cohort of COHORT, COHORT_BUT, DEFINE */
};

static inline const u32 *bgp_txlog_classes(const struct bgp_txlog_entry *e) { return (const u32 *) (e + 1); }
static inline const u8 *bgp_txlog_msg(const struct bgp_txlog_entry *e) { return (const u8 *) (bgp_txlog_classes(e) + e->classes); }

/* Is the entry addressed to member m, in cohort c (0: none), of class k? */
static inline bool
bgp_txlog_for(const struct bgp_txlog_entry *e, u32 m, u32 c, u32 k)
{
  if (e->classes && (k / 32 >= e->classes || !bgp_class_has(bgp_txlog_classes(e), k)))
    return false;
  switch (e->audience) {
  case BGP_TXLOG_ALL_BUT: return e->member != m;
  case BGP_TXLOG_ONLY: return e->member == m;
  case BGP_TXLOG_COHORT: return c && e->cohort == c;
  case BGP_TXLOG_COHORT_BUT: return c && e->cohort == c && e->member != m;
  case BGP_TXLOG_DEFINE: return false;
  default: return true;
  }
}

/*
 * A member's read position. Owner: the member's loop (one thread at a
 * time); the writer reads the two published fields. Embedded by the member,
 * which must bgp_txlog_leave() before freeing it.
 */
struct bgp_txlog_cursor {
  struct lnode n;                       /* in the log's cursor list: under its lock */
  struct bgp_txlog_chunk *chunk;        /* owner: cursor; the chunk it reads; stored with
                                         * release: bgp_txlog_trim() frees only older ones */
  u64 pos;                              /* owner: cursor; absolute offset of the next entry to
                                         * look at; stored with release for bgp_txlog_lag() */
  u32 member;                           /* set by join: the member the cursor reads for */
  u32 cls;                              /* set by join: its export class */
  u32 cohort;                           /* owner: cursor: its cohort by the last DEFINE naming it */
  struct loop *loop;                    /* set by join: where wake runs; NULL: nobody to wake */
  struct event *wake;                   /* set by join: sent on every publication */
  u32 blocked;                          /* atomic, owner: cursor: its reader stopped with
                                         * the peer's socket full (a slow peer) */
};

struct bgp_txlog *bgp_txlog_new(void);
/* Every cursor must have left. */
void bgp_txlog_free(struct bgp_txlog *log);

/* Writer side: one thread at a time. */
void bgp_txlog_append(struct bgp_txlog *log, enum bgp_txlog_audience aud, u32 member, const void *msg, uint len);
/* The same with a cohort (COHORT, COHORT_BUT, DEFINE). */
void bgp_txlog_append_cohort(struct bgp_txlog *log, enum bgp_txlog_audience aud, u32 cohort, u32 member,
                             const void *msg, uint len);
/* The same for the classes in the bitmap classes (words u32, 0: all). */
void bgp_txlog_append_set(struct bgp_txlog *log, enum bgp_txlog_audience aud, u32 cohort, u32 member,
                          const u32 *classes, uint words, const void *msg, uint len);
/* Make what was appended visible to readers at once, then wake them. */
void bgp_txlog_publish(struct bgp_txlog *log);
/* Free the chunks every cursor has left. */
void bgp_txlog_trim(struct bgp_txlog *log);
/* Bytes in chunks not freed yet. */
u64 bgp_txlog_held(const struct bgp_txlog *log);

/* Reader side: any thread, each cursor in one thread at a time. A cursor
 * starts at the published end: it sees what is published after it joined. */
void bgp_txlog_join(struct bgp_txlog *log, struct bgp_txlog_cursor *cur, u32 member, u32 cls, struct loop *loop,
                    struct event *wake);
void bgp_txlog_leave(struct bgp_txlog *log, struct bgp_txlog_cursor *cur);
/* The next published entry for cur->member and its class (others are skipped), or NULL
 * when caught up. Valid until consume. */
const struct bgp_txlog_entry *bgp_txlog_peek(struct bgp_txlog *log, struct bgp_txlog_cursor *cur);
/* Step past the entry peek returned. */
void bgp_txlog_consume(struct bgp_txlog *log, struct bgp_txlog_cursor *cur);
/* Published bytes the cursor has not passed (any thread: evict slow members). */
u64 bgp_txlog_lag(const struct bgp_txlog *log, const struct bgp_txlog_cursor *cur);
/* The least lag of all cursors, 0 without any (writer: is everyone behind?);
 * *blocked (if given): the cursor of that lag waits for its peer. */
u64 bgp_txlog_min_lag(struct bgp_txlog *log, int *blocked);
/* Writer: send cur's wake event, unless it left meanwhile (its loop may
 * be gone then). */
void bgp_txlog_wake(struct bgp_txlog *log, struct bgp_txlog_cursor *cur);
/* Writer: send every cursor's wake event, as a publication does (what
 * the members show may have changed without anything for them to send). */
void bgp_txlog_wake_all(struct bgp_txlog *log);
/* Writer: the published end, an offset to compare cursor positions with. */
u64 bgp_txlog_end(const struct bgp_txlog *log);

#endif
