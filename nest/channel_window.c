/*
 * Coalescing of an export channel's journal items (nest/channel_window.h).
 */
#include <string.h>
#include "nest/channel_window.h"

#define CHAN_WINDOW_NONE 0xffff

/* Multiplicative: the window scan is on every item's path, and keys are
 * addresses of nets (no one picks them) and a source's slot. */
static inline uint
chan_window_hash(const struct net *n, u32 src_ix, uint mask)
{
  u64 x = ((uintptr_t) n >> 4) ^ ((u64) src_ix << 32);
  return (uint) ((x * 0x9e3779b97f4a7c15ULL) >> 40) & mask;
}

/* Past what a feed ran ahead of: the window's first item is the one at
 * the reader's seq, past the feed's items once seq reached their end
 * (chan_export_forget_others asks after the read, with seq one further). */
static int
chan_coalesces(struct channel *c)
{
  return !c->cf->secondary && !c->feed_rejected &&
         (!c->feed_ahead_until || uatomic_read(&c->reader.seq) >= c->feed_ahead_until);
}

/* The keys of a window's k items: their nets, with src the nets and the
 * routes' sources (a channel exporting every route). 1: some key has
 * more than one item. */
static int
chan_window_keys(struct chan_window *w, const struct rt_journal_item **items, uint k, int any, int src)
{
  /* twice the items' slots at least: a window of a few items clears a
   * few words, not the whole table */
  uint slots = 16;
  while (slots < 2 * k)
    slots *= 2;
  w->hmask = slots - 1;
  memset(w->hash, 0, slots * sizeof(w->hash[0]));
  uint count = 0;
  int repeats = 0;
  for (uint j = 0; j < k; j++) {
    const struct rt_journal_item *it = items[j];
    w->key_of[j] = CHAN_WINDOW_NONE;
    if (any ? !it->new_rte && !it->retired : it->new_best == it->old_best)
      continue;
    const struct rte *r = src ? (it->new_rte ? it->new_rte : it->retired) : NULL;
    u32 src_ix = r ? r->src_ix : 0;
    uint h = chan_window_hash(it->net, src_ix, w->hmask), e;
    while (w->hash[h] && (w->keys[w->hash[h] - 1].net != it->net || w->keys[w->hash[h] - 1].src_ix != src_ix))
      h = (h + 1) & w->hmask;
    if (w->hash[h]) {
      e = w->hash[h] - 1;
      repeats = 1;
    } else {
      e = count++;
      w->keys[e].net = it->net;
      w->keys[e].src_ix = src_ix;
      w->keys[e].first_old = any ? it->retired : it->old_best;
      w->hash[h] = (u16) (e + 1);
    }
    w->keys[e].last = (u16) j;
    w->key_of[j] = (u16) e;
  }
  return repeats;
}

void
chan_window_open(struct channel *c, struct chan_window *w, int any)
{
  const struct rt_journal_item **items = w->items;
  u16 senders[CHAN_WINDOW];
  w->left = 1;
  w->pos = 0;
  if (!(w->coalesce = chan_coalesces(c)))
    return;
  uint k = rt_reader_window(&c->reader, items, senders, CHAN_WINDOW);
  if (c->export_hold)
    k = (uint) MIN((u64) k, c->export_until - c->reader.seq);
  if (!k) {
    w->coalesce = 0;                  /* whatever comes meanwhile is read as one item */
    return;
  }
  u16 own = c->reader.own;
  if (own) {
    uint run = 1;
    while (run < k && (senders[run] == own) == (senders[0] == own))
      run++;
    k = run;
  }
  w->left = k;
  if ((own && senders[0] == own) || !chan_window_keys(w, items, k, any, 0))
    w->coalesce = 0;
  else if (any) {
    for (uint j = 0; j < k; j++)
      __builtin_prefetch(items[j]->new_rte ? items[j]->new_rte : items[j]->retired);
    chan_window_keys(w, items, k, any, 1);
  }
}

int
chan_window_take(struct chan_window *w, const struct rt_journal_item *it, int any, struct rte **new,
                 struct rte **old)
{
  uint j = w->pos++;
  ASSERT(it == w->items[j]);
  uint e = w->key_of[j];
  if (e == CHAN_WINDOW_NONE)
    return -1;
  *new = any ? it->new_rte : it->new_best;
  *old = w->keys[e].first_old;
  return w->keys[e].last == j && *old != *new;
}
