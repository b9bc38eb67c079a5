/*
 * The listing order of a `sorted` table (`show route`, nest/cmd_route.c),
 * made in bounded steps. The CLI runs in the main loop, and sorting a
 * million nets' addresses there at once held every other CLI session and
 * the configuration for the whole sort. So the caller adds the addresses
 * a walk step at a time, each sort step sorts one run of them, and the
 * runs are merged as the listing goes: each address taken costs a pop
 * from a heap of the runs.
 *
 * Owner: the CLI command that lists (main loop).
 */
#ifndef NEST_CMD_ROUTE_SORT_H
#define NEST_CMD_ROUTE_SORT_H

#include "lib/net.h"

struct sr_sort {
  char *v;                  /* the addresses, stride bytes each */
  size_t stride, len, cap;
  size_t run;               /* addresses a run (the last may be shorter) */
  size_t sorted;            /* addresses in sorted runs: [0, sorted) */
  size_t *at;               /* per run: its next address to take */
  u32 *heap;                /* runs with addresses left, least next first */
  u32 heap_len;
  int merging;              /* sorted all: sr_sort_next() takes them */
};

/* stride: net_addr_length[] of the table's type (a multiple of 4, so
 * addresses stay aligned); run: addresses one sort step sorts. */
void sr_sort_init(struct sr_sort *s, size_t stride, size_t run);
void sr_sort_add(struct sr_sort *s, const net_addr *n);
/* Sorts one run once all are added: 1 when none is left to sort. */
int sr_sort_step(struct sr_sort *s);
/* The next address in order once sr_sort_step() said 1; NULL at the end. */
const net_addr *sr_sort_next(struct sr_sort *s);
void sr_sort_free(struct sr_sort *s);

#endif
