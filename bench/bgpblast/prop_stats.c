/*
 * DOC: prop_stats.c - propagation mode: the two phases and the summary
 *
 * prop_wait() runs on main while the session threads work:
 *   1. announce: the sender writes its stream; the phase ends when the
 *      receiver holds every prefix, or --prop-idle seconds after the last
 *      UPDATE it read once the sender has written everything (routes that
 *      never came are lost), or at --timeout;
 *   2. after --prop-pause, main sets wd_go and the sender writes the
 *      withdrawals; the phase ends when the receiver holds nothing, or
 *      again after --prop-idle quiet seconds.
 * prop_summary() runs after the threads are joined and turns the stamps
 * into numbers: convergence (first UPDATE written to the last prefix
 * read), per-prefix latency percentiles, routes/s, withdrawal time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prop.h"

static double max_d(double a, double b)
{
	return a > b ? a : b;
}

/* Waits until done() or the phase has been quiet too long; a result word
 * for the failures, NULL when done() came true. */
static const char *phase_wait(struct bb *bb, bool (*done)(struct bb *), double since)
{
	struct prop *p = bb->prop;
	const struct bb_config *cf = &bb->cf;
	for (;;) {
		bb_sleep_ms(2);
		if (done(bb))
			return NULL;
		if (atomic_load(&bb->fatal))
			return "error";
		if (bb_signalled())
			return "interrupted";
		double now = bb_now();
		if (now > cf->timeout)
			return "timeout";
		double sent = atomic_load(&bb->t_sent_all);
		if (sent > 0 && now - max_d(max_d(atomic_load(&p->t_last), sent), since) > cf->prop_idle)
			return "lost";
	}
}

static bool all_announced(struct bb *bb)
{
	return atomic_load(&bb->prop->received) == bb->prop->n;
}

static bool all_withdrawn(struct bb *bb)
{
	return atomic_load(&bb->prop->held) == 0;
}

const char *prop_wait(struct bb *bb)
{
	struct prop *p = bb->prop;
	const char *r = phase_wait(bb, all_announced, 0);
	bb_event("event=prop_announced received=%llu of=%llu", (unsigned long long)atomic_load(&p->received),
		 (unsigned long long)p->n);
	if (r && strcmp(r, "lost"))
		return r;
	/* The pause lets the DUT finish what it does after the last export,
	 * so that it does not bill the withdrawal phase. */
	double until = bb_now() + bb->cf.prop_pause;
	while (bb_now() < until && !atomic_load(&bb->fatal) && !bb_signalled())
		bb_sleep_ms(2);
	double go = bb_now();
	atomic_store(&p->t_wd_go, go);
	atomic_store(&bb->wd_go, 1);
	const char *w = phase_wait(bb, all_withdrawn, go);
	bb_event("event=prop_withdrawn held=%llu", (unsigned long long)atomic_load(&p->held));
	return r ? r : w ? w : "ok";
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array, in milliseconds. */
static void json_pct(struct json *j, const char *key, const double *v, uint64_t n, double q)
{
	if (!n) {
		json_raw(j, key, "null");
		return;
	}
	uint64_t k = (uint64_t)ceil(q * (double)n);
	json_raw(j, key, "%.3f", v[k ? k - 1 : 0] * 1e3);
}

struct lat {
	double *v;
	uint64_t n;
	double last; /* latest receive stamp */
};

/* Latencies of the prefixes stamped in t (0: never), against the message
 * stamps of the stream that carried them. */
static void latencies(const struct prop *p, const double *t, const uint32_t *msg_of, const double *msg_t,
		      struct lat *l)
{
	l->v = bb_alloc((p->n + 1) * sizeof(*l->v));
	l->n = 0;
	l->last = 0;
	for (uint64_t i = 0; i < p->n; i++) {
		if (!(t[i] > 0))
			continue;
		l->last = max_d(l->last, t[i]);
		l->v[l->n++] = t[i] - msg_t[msg_of[i]];
	}
	qsort(l->v, l->n, sizeof(*l->v), cmp_d);
}

static void json_lat(struct json *j, const char *prefix, const struct lat *l)
{
	char k[64];
	static const struct {
		const char *name;
		double q;
	} pct[] = { { "min", 0 }, { "p50", 0.5 }, { "p90", 0.9 }, { "p99", 0.99 }, { "max", 1 } };
	for (size_t i = 0; i < ARRAY_SIZE(pct); i++) {
		snprintf(k, sizeof(k), "%s_%s_ms", prefix, pct[i].name);
		json_pct(j, k, l->v, l->n, pct[i].q);
	}
}

void prop_summary(struct bb *bb, const struct run_totals *rt)
{
	struct prop *p = bb->prop;
	const struct peer_tx *tx = &bb->tx[0], *wtx = bb->wtx;
	struct lat a, w;
	latencies(p, p->t_rx, p->msg_of, tx->msg_t, &a);
	latencies(p, p->t_wd, p->wmsg_of, wtx->msg_t, &w);
	double first = tx->msg_t[0], wfirst = wtx->msg_t[0];
	double conv = a.n && first > 0 ? a.last - first : 0;
	double wd = w.n && wfirst > 0 ? w.last - wfirst : 0;
	uint64_t held = atomic_load(&p->held);
	uint64_t wd_lost = 0;
	for (uint64_t i = 0; i < p->n; i++)
		wd_lost += (p->state[i] & (PS_SEEN | PS_WD)) == PS_SEEN;

	struct json j = { .n = 0 };
	json_word(&j, "mode", "propagate");
	json_word(&j, "result", rt->result);
	json_u64(&j, "routes", p->n);
	json_u64(&j, "received", a.n);
	json_u64(&j, "lost", p->n - a.n);
	json_u64(&j, "unexpected", p->unexpected);
	json_u64(&j, "duplicates", p->duplicates);
	json_u64(&j, "early_withdrawals", p->early_wd);
	json_u64(&j, "attr_checked", p->checked);
	json_u64(&j, "attr_bad_origin", p->bad_origin);
	json_u64(&j, "attr_bad_as_path", p->bad_path);
	json_u64(&j, "attr_bad_communities", p->bad_comm);
	json_u64(&j, "attr_bad_large_communities", p->bad_lcomm);
	if (bb->cf.prop_dut_asn_set)
		json_u64(&j, "expect_dut_as", bb->cf.prop_dut_asn);
	else
		json_raw(&j, "expect_dut_as", "null");
	json_word(&j, "next_hop", p->next_hop[0] ? p->next_hop : "none");
	json_u64(&j, "updates_sent", tx->updates);
	json_u64(&j, "updates_rcvd", p->updates_rx);
	json_u64(&j, "bytes_sent", atomic_load(&bb->bytes_sent));
	json_u64(&j, "bytes_rcvd", atomic_load(&bb->bytes_rcvd));
	json_raw(&j, "prep_s", "%.3f", rt->prep_s);
	json_time(&j, "t_first_send", first);
	json_time(&j, "t_last_rcvd", a.last);
	json_time(&j, "converge_s", conv);
	json_rate(&j, "routes_per_s", (double)a.n, conv);
	json_lat(&j, "latency", &a);
	json_u64(&j, "withdrawals_sent", wtx->routes);
	json_u64(&j, "withdrawals_rcvd", w.n);
	json_u64(&j, "withdraw_lost", wd_lost);
	json_u64(&j, "held_at_end", held);
	json_time(&j, "withdraw_s", wd);
	json_rate(&j, "withdraw_routes_per_s", (double)w.n, wd);
	json_lat(&j, "wd_latency", &w);
	json_raw(&j, "cpu_user_s", "%.3f", rt->cpu_user);
	json_raw(&j, "cpu_sys_s", "%.3f", rt->cpu_sys);
	json_print(&j);
	free(a.v);
	free(w.v);
}
