/*
 * DOC: prop.h - state shared by prop.c (preparation, the receiver) and
 * prop_stats.c (the phases and the summary); nothing else includes it.
 *
 * Every prefix of the route set has a pool index i.  Before the run, prop.c
 * records which announcement message (msg_of[i]) and which withdrawal
 * message (wmsg_of[i]) carries it, and which attribute set it must arrive
 * with (exp_of[i]).  The sender stamps messages (peer_tx.msg_t); the
 * receiver stamps prefixes (t_rx[i], t_wd[i]).  Latency of i is
 * t_rx[i] - tx.msg_t[msg_of[i]], both on CLOCK_MONOTONIC of this process.
 */
#ifndef BGPBLAST_PROP_H
#define BGPBLAST_PROP_H

#include "bgpblast.h"

/* A path attribute's payload, or absent. */
struct prop_attr {
	const uint8_t *d;
	uint16_t len;
	bool present;
};

/* What the receiver must see for a route of one of the sender's sets. */
struct prop_expect {
	struct prop_attr origin, path, comm, lcomm;
	uint8_t *path_buf; /* owns path.d when the DUT's ASN was put in front */
	uint8_t *comm_buf; /* owns comm.d and lcomm.d, sorted */
};

/* What an UPDATE holds, as pointers into it. */
struct prop_upd {
	struct cur withdrawn, nlri;       /* IPv4 */
	struct cur mp_reach, mp_unreach;  /* NLRI of IPv4/IPv6 unicast only */
	uint8_t reach_af, unreach_af;     /* 0 when absent */
	struct prop_attr origin, path, comm, lcomm, next_hop;
	const uint8_t *mp_nh;             /* next hop inside MP_REACH */
	uint8_t mp_nh_len;
};

enum {
	PS_HELD = 1,   /* the receiver holds it now */
	PS_SEEN = 2,   /* it was announced to the receiver at least once */
	PS_WD = 4,     /* withdrawn in the withdrawal phase */
};

struct prop {
	struct bb *bb;
	uint64_t n;            /* prefixes, the pool's size */
	struct pfx_set index;  /* prefix -> pool index; read-only once prepared */
	uint32_t *msg_of, *wmsg_of, *exp_of;
	struct prop_expect *exp;
	uint32_t nexp;

	/* owner: the receiver's thread; main reads them after the join */
	double *t_rx, *t_wd;
	uint8_t *state;
	uint64_t unexpected, duplicates, early_wd, checked, updates_rx;
	uint64_t bad_origin, bad_path, bad_comm, bad_lcomm;
	char next_hop[48];     /* of the first route received */
	char bad_first[160];   /* what the first mismatch was */

	/* read by main while the run goes on */
	atomic_uint_fast64_t received, held;
	_Atomic double t_last;  /* last UPDATE the receiver read */
	_Atomic double t_wd_go; /* when main asked for the withdrawals */
};

/* Splits an UPDATE body; false when malformed. */
bool prop_parse(const uint8_t *body, size_t len, struct prop_upd *u);
/* The path attributes part alone (u zeroed by the caller). */
bool prop_attrs(const uint8_t *a, size_t len, struct prop_upd *u);
/* Copies a's items (4 or 12 bytes) into buf, sorted, and points a there:
 * communities compare as sets. */
void prop_attr_sort(struct prop_attr *a, uint8_t *buf, size_t item);

#endif
