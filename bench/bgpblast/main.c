/*
 * DOC: main.c - options, preparation, the waiting loop and the summary
 *
 * Injector run: build the route set (routes.c or mrt.c), pre-encode every
 * peer's UPDATEs (encode.c), then start the sessions (session.c) and watch
 * the atomic counters until all sessions are up, every peer has written
 * everything and every monitor holds the expected prefixes, or until the
 * timeout.  t=0 of every output line is the moment the first connect()
 * starts; preparation time is reported apart (prep_s).
 *
 * Propagation run (--propagate): one peer sends, one monitor receives;
 * prop.c takes over the waiting and the summary.
 *
 * Sink run: listen, count, and report when the expected number of
 * prefixes arrived (or on SIGINT/SIGTERM).
 *
 * Exit status: 0 done, 1 error (bad option, NOTIFICATION, lost session),
 * 2 timeout, 3 routes lost (propagation mode), 130 interrupted before done.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bgpblast.h"

static double t0;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t got_signal;

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

double bb_now(void)
{
	return mono() - t0;
}

void bb_die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "bgpblast: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void *bb_alloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		bb_die("out of memory (%zu bytes)", n);
	return p;
}

void *bb_realloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		bb_die("out of memory (%zu bytes)", n);
	return p;
}

void bb_event(const char *fmt, ...)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "t=%.6f ", bb_now());
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&out_lock);
	fputs(line, stdout);
	fputc('\n', stdout);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

/* Session i of a block: base + (i / 250) * 256 + i % 250 + 1, so the last
 * octet is never 0 or 255: 127.1.0.1 .. 127.1.0.250, 127.1.1.1, ... */
static uint32_t block_addr(uint32_t base, unsigned i)
{
	return base + (i / 250) * 256 + i % 250 + 1;
}

uint32_t bb_peer_addr(const struct bb_config *cf, unsigned i)
{
	return block_addr(cf->peer_base, i);
}

uint32_t bb_monitor_addr(const struct bb_config *cf, unsigned i)
{
	return block_addr(cf->monitor_base, i);
}

uint32_t bb_peer_asn(const struct bb_config *cf, unsigned i)
{
	return cf->asn_base + i + 1;
}

uint32_t bb_monitor_asn(const struct bb_config *cf, unsigned i)
{
	return cf->monitor_asn_base + i + 1;
}

static bool is_loopback(uint32_t a)
{
	return (a >> 24) == 127;
}

static uint32_t parse_loopback(const char *what, const char *s)
{
	struct in_addr in;
	if (inet_pton(AF_INET, s, &in) != 1)
		bb_die("%s: '%s' is not an IPv4 address", what, s);
	uint32_t a = ntohl(in.s_addr);
	if (!is_loopback(a))
		bb_die("%s: %s is outside 127.0.0.0/8; bgpblast sends nothing off this host", what, s);
	return a;
}

static uint64_t parse_u64(const char *what, const char *s, uint64_t min, uint64_t max)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end); /* accepts 1e6 */
	if (errno || end == s || *end || v < (double)min || v > (double)max || v != floor(v))
		bb_die("%s: '%s' is not an integer in [%llu, %llu]", what, s, (unsigned long long)min,
		       (unsigned long long)max);
	return (uint64_t)v;
}

static double parse_double(const char *what, const char *s, double min, double max)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !(v >= min && v <= max))
		bb_die("%s: '%s' is not a number in [%g, %g]", what, s, min, max);
	return v;
}

static void usage(FILE *f)
{
	fputs("usage: bgpblast [options]            inject into a DUT\n"
	      "       bgpblast --sink PORT [options] count what injectors send\n"
	      "       bgpblast --write-mrt FILE [options] write the synthetic set as MRT\n"
	      "DUT and sessions (127.0.0.0/8 only):\n"
	      "  --dut ADDR:PORT          device under test (127.0.0.1:179)\n"
	      "  --peers N                announcing peers (10)\n"
	      "  --monitors M             receive-only sessions that count prefixes (0)\n"
	      "  --peer-base ADDR         peer i binds to ADDR+(i/250)*256+i%250+1 (127.1.0.0)\n"
	      "  --monitor-base ADDR      likewise for monitors (127.2.0.0)\n"
	      "  --asn-base A             peer i (1-based) has ASN A+i (65000)\n"
	      "  --monitor-asn-base A     monitor i has ASN A+i (64900)\n"
	      "  --hold S                 hold time offered, seconds (90)\n"
	      "  --ipv6                   negotiate IPv6 unicast too (implied by IPv6 routes)\n"
	      "  --threads T              I/O threads (2)\n"
	      "  --batch-us U             pause after each busy epoll round, coalescing reads (1000)\n"
	      "Routes:\n"
	      "  --routes R               routes per peer (10000)\n"
	      "  --ratio X                total routes / unique prefixes (2.5)\n"
	      "  --v6-share F             share of IPv6 prefixes in the pool (0)\n"
	      "  --group G                mean prefixes per attribute set (400)\n"
	      "  --seed S                 seed of the synthetic set (1)\n"
	      "  --mrt FILE               replay TABLE_DUMP_V2 instead (MRT peer k -> peer k%N)\n"
	      "  --write-mrt FILE         write the route set as TABLE_DUMP_V2 and exit\n"
	      "Run:\n"
	      "  --expect-prefixes K      monitors (sink: all sessions) wait for K prefixes\n"
	      "                           (default: every unique prefix of the set)\n"
	      "  --timeout S              give up after S seconds, exit 2 (600; sink: none)\n"
	      "  --settle S               done also needs S s without UPDATEs to monitors (0)\n"
	      "  --linger S               keep sessions up S s after done, -1 = until signal (0)\n"
	      "  --progress S             print a progress line every S seconds\n"
	      "  --quiet                  no per-session lines\n"
	      "  --dry-run                prepare and encode, print the start line, exit\n"
	      "  --next-hop ADDR          NEXT_HOP of every route (default: the peer's address)\n"
	      "  --enhanced-refresh       offer enhanced route refresh (RFC 7313) too\n"
	      "Propagation (one sender, one receiver; see README):\n"
	      "  --propagate              peer 1 announces, monitor 1 receives, then peer 1\n"
	      "                           withdraws; per-prefix latency on one clock\n"
	      "  --prop-dut-as A          check that the DUT put A in front of every AS path\n"
	      "                           (without it: the path must arrive unchanged)\n"
	      "  --prop-idle S            a phase gives up S s after the last UPDATE (10)\n"
	      "  --prop-pause S           pause between the phases (0.5)\n"
	      "Sink:\n"
	      "  --sink PORT              listen and count instead of injecting\n"
	      "  --listen ADDR            sink address (127.0.0.1)\n"
	      "  --local-as A             sink ASN (64500)\n",
	      f);
}

enum {
	O_DUT = 256, O_PEERS, O_MONITORS, O_PEER_BASE, O_MON_BASE, O_ASN_BASE, O_MON_ASN_BASE, O_HOLD,
	O_IPV6, O_THREADS, O_ROUTES, O_RATIO, O_V6, O_GROUP, O_SEED, O_MRT, O_WRITE_MRT, O_EXPECT,
	O_TIMEOUT, O_LINGER, O_SETTLE, O_DRY_RUN, O_BATCH, O_PROGRESS, O_QUIET, O_SINK, O_LISTEN, O_LOCAL_AS, O_HELP,
	O_NEXT_HOP, O_PROP, O_PROP_AS, O_PROP_IDLE, O_PROP_PAUSE, O_ERR,
};

static const struct option long_opts[] = {
	{ "dut", 1, 0, O_DUT },
	{ "peers", 1, 0, O_PEERS },
	{ "monitors", 1, 0, O_MONITORS },
	{ "peer-base", 1, 0, O_PEER_BASE },
	{ "monitor-base", 1, 0, O_MON_BASE },
	{ "asn-base", 1, 0, O_ASN_BASE },
	{ "monitor-asn-base", 1, 0, O_MON_ASN_BASE },
	{ "hold", 1, 0, O_HOLD },
	{ "ipv6", 0, 0, O_IPV6 },
	{ "threads", 1, 0, O_THREADS },
	{ "routes", 1, 0, O_ROUTES },
	{ "ratio", 1, 0, O_RATIO },
	{ "v6-share", 1, 0, O_V6 },
	{ "group", 1, 0, O_GROUP },
	{ "seed", 1, 0, O_SEED },
	{ "mrt", 1, 0, O_MRT },
	{ "write-mrt", 1, 0, O_WRITE_MRT },
	{ "expect-prefixes", 1, 0, O_EXPECT },
	{ "timeout", 1, 0, O_TIMEOUT },
	{ "linger", 1, 0, O_LINGER },
	{ "enhanced-refresh", 0, 0, O_ERR },
	{ "settle", 1, 0, O_SETTLE },
	{ "dry-run", 0, 0, O_DRY_RUN },
	{ "batch-us", 1, 0, O_BATCH },
	{ "progress", 1, 0, O_PROGRESS },
	{ "quiet", 0, 0, O_QUIET },
	{ "sink", 1, 0, O_SINK },
	{ "listen", 1, 0, O_LISTEN },
	{ "local-as", 1, 0, O_LOCAL_AS },
	{ "help", 0, 0, O_HELP },
	{ "next-hop", 1, 0, O_NEXT_HOP },
	{ "propagate", 0, 0, O_PROP },
	{ "prop-dut-as", 1, 0, O_PROP_AS },
	{ "prop-idle", 1, 0, O_PROP_IDLE },
	{ "prop-pause", 1, 0, O_PROP_PAUSE },
	{ 0, 0, 0, 0 },
};

static void parse_dut(struct bb_config *cf, const char *arg)
{
	char host[64];
	const char *colon = strrchr(arg, ':');
	size_t hl = colon ? (size_t)(colon - arg) : strlen(arg);
	if (hl >= sizeof(host))
		bb_die("--dut: '%s' too long", arg);
	memcpy(host, arg, hl);
	host[hl] = 0;
	cf->dut_addr = parse_loopback("--dut", host);
	if (colon)
		cf->dut_port = (uint16_t)parse_u64("--dut port", colon + 1, 1, 65535);
}

static void parse_args(struct bb_config *cf, int argc, char **argv)
{
	*cf = (struct bb_config){
		.dut_addr = 0x7f000001, .dut_port = 179, .listen_addr = 0x7f000001, .peers = 10,
		.threads = 2, .routes = 10000, .ratio = 2.5, .group = 400, .seed = 1,
		.peer_base = 0x7f010000, .monitor_base = 0x7f020000, .asn_base = 65000,
		.monitor_asn_base = 64900, .local_asn = 64500, .hold = 90, .timeout = -1, .batch_us = 1000,
		.prop_idle = 10, .prop_pause = 0.5,
	};
	bool batch_set = false;
	int c;
	while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		switch (c) {
		case O_DUT: parse_dut(cf, optarg); break;
		case O_PEERS: cf->peers = (unsigned)parse_u64("--peers", optarg, 0, 64000); break;
		case O_MONITORS: cf->monitors = (unsigned)parse_u64("--monitors", optarg, 0, 64000); break;
		case O_PEER_BASE: cf->peer_base = parse_loopback("--peer-base", optarg); break;
		case O_MON_BASE: cf->monitor_base = parse_loopback("--monitor-base", optarg); break;
		case O_ASN_BASE: cf->asn_base = (uint32_t)parse_u64("--asn-base", optarg, 1, 4294000000ULL); break;
		case O_MON_ASN_BASE:
			cf->monitor_asn_base = (uint32_t)parse_u64("--monitor-asn-base", optarg, 1, 4294000000ULL);
			break;
		case O_HOLD: cf->hold = (unsigned)parse_u64("--hold", optarg, 0, 65535); break;
		case O_IPV6: cf->ipv6 = true; break;
		case O_THREADS: cf->threads = (unsigned)parse_u64("--threads", optarg, 1, 256); break;
		case O_ROUTES: cf->routes = parse_u64("--routes", optarg, 0, 100000000); break;
		case O_RATIO: cf->ratio = parse_double("--ratio", optarg, 1, 1e6); break;
		case O_V6: cf->v6_share = parse_double("--v6-share", optarg, 0, 1); break;
		case O_GROUP: cf->group = (unsigned)parse_u64("--group", optarg, 1, 100000000); break;
		case O_SEED: cf->seed = parse_u64("--seed", optarg, 0, 1ULL << 53); break;
		case O_MRT: cf->mrt_in = optarg; break;
		case O_WRITE_MRT: cf->mrt_out = optarg; break;
		case O_EXPECT:
			cf->expect = parse_u64("--expect-prefixes", optarg, 0, 1ULL << 40);
			cf->expect_set = true;
			break;
		case O_TIMEOUT: cf->timeout = parse_double("--timeout", optarg, 0, 1e9); break;
		case O_LINGER: cf->linger = parse_double("--linger", optarg, -1, 1e9); break;
		case O_ERR: cf->enhanced_refresh = true; break;
		case O_BATCH:
			cf->batch_us = (unsigned)parse_u64("--batch-us", optarg, 0, 1000000);
			batch_set = true;
			break;
		case O_DRY_RUN: cf->dry_run = true; break;
		case O_SETTLE: cf->settle = parse_double("--settle", optarg, 0, 1e6); break;
		case O_PROGRESS: cf->progress = parse_double("--progress", optarg, 0.01, 1e6); break;
		case O_QUIET: cf->quiet = true; break;
		case O_SINK:
			cf->sink = true;
			cf->dut_port = (uint16_t)parse_u64("--sink", optarg, 1, 65535);
			break;
		case O_LISTEN: cf->listen_addr = parse_loopback("--listen", optarg); break;
		case O_LOCAL_AS: cf->local_asn = (uint32_t)parse_u64("--local-as", optarg, 1, 4294967295ULL); break;
		case O_NEXT_HOP: {
			/* only an attribute: it sends nothing anywhere, so any address */
			struct in_addr in;
			if (inet_pton(AF_INET, optarg, &in) != 1)
				bb_die("--next-hop: '%s' is not an IPv4 address", optarg);
			cf->next_hop = ntohl(in.s_addr);
			break;
		}
		case O_PROP: cf->prop = true; break;
		case O_PROP_AS:
			cf->prop_dut_asn = (uint32_t)parse_u64("--prop-dut-as", optarg, 1, 4294967295ULL);
			cf->prop_dut_asn_set = true;
			break;
		case O_PROP_IDLE: cf->prop_idle = parse_double("--prop-idle", optarg, 0.1, 1e6); break;
		case O_PROP_PAUSE: cf->prop_pause = parse_double("--prop-pause", optarg, 0, 1e6); break;
		case O_HELP:
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(1);
		}
	}
	if (optind < argc)
		bb_die("unexpected argument '%s' (see --help)", argv[optind]);
	if (cf->hold == 1 || cf->hold == 2)
		bb_die("--hold must be 0 or at least 3");
	if (cf->sink)
		return;
	if (cf->prop) {
		if (cf->mrt_out)
			bb_die("--propagate and --write-mrt do not mix");
		cf->peers = 1;
		cf->monitors = 1;
		/* The pause after a busy round would add up to batch-us to every
		 * latency the receiver stamps; one receiver reads little. */
		if (!batch_set)
			cf->batch_us = 0;
	}
	if (!cf->peers && !cf->monitors)
		bb_die("nothing to do: no peers and no monitors");
	if (cf->peers && !is_loopback(bb_peer_addr(cf, cf->peers - 1)))
		bb_die("--peers %u runs past 127.255.255.255 from the peer base", cf->peers);
	if (cf->monitors && !is_loopback(bb_monitor_addr(cf, cf->monitors - 1)))
		bb_die("--monitors %u runs past 127.255.255.255 from the monitor base", cf->monitors);
	if ((uint64_t)cf->asn_base + cf->peers > UINT32_MAX ||
	    (uint64_t)cf->monitor_asn_base + cf->monitors > UINT32_MAX)
		bb_die("ASN base too high for that many sessions");
	if (cf->timeout < 0)
		cf->timeout = 600;
	if (cf->v6_share > 0)
		cf->ipv6 = true;
}

static void cpu_split(double *user, double *sys)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	*user = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
	*sys = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void on_signal(int sig)
{
	got_signal = sig;
}

static void signals_setup(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void bb_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

bool bb_signalled(void)
{
	return got_signal != 0;
}

static int run_sink(struct bb *bb)
{
	const struct bb_config *cf = &bb->cf;
	bb->expect = cf->expect;
	char a[16];
	inet_ntop(AF_INET, &(uint32_t){ htonl(cf->listen_addr) }, a, sizeof(a));
	double cpu0u, cpu0s;
	cpu_split(&cpu0u, &cpu0s);
	t0 = mono();
	signals_setup(); /* from here on a signal ends the run cleanly */
	sess_run_sink(bb);
	bb_event("event=listening addr=%s port=%u asn=%u threads=%u", a, cf->dut_port, cf->local_asn,
		 cf->threads);
	const char *result = "ok";
	double next_progress = cf->progress;
	for (;;) {
		bb_sleep_ms(5);
		double now = bb_now();
		if (got_signal)
			break;
		/* Full: let the injectors end their sessions first (a Cease from
		 * us could reach one before it noticed it was done), but only
		 * for a while. */
		double tfull = atomic_load(&bb->t_sink_full);
		if (cf->expect_set && tfull > 0 && (atomic_load(&bb->sink_open) == 0 || now - tfull > 2))
			break;
		if (cf->timeout > 0 && now > cf->timeout) {
			/* without an expected count the timeout is just the run's length */
			result = cf->expect_set ? "timeout" : "ok";
			bb_event("event=%s prefixes=%llu", cf->expect_set ? "timeout" : "end",
				 (unsigned long long)atomic_load(&bb->sink_prefixes));
			break;
		}
		if (cf->progress && now >= next_progress) {
			next_progress += cf->progress;
			bb_event("event=progress sessions=%llu prefixes=%llu",
				 (unsigned long long)atomic_load(&bb->sink_sessions),
				 (unsigned long long)atomic_load(&bb->sink_prefixes));
		}
	}
	sess_stop(bb);
	double u, s;
	cpu_split(&u, &s);
	u -= cpu0u;
	s -= cpu0s;
	double tf = atomic_load(&bb->t_first_update), tl = atomic_load(&bb->t_last_update);
	uint64_t pfx = atomic_load(&bb->sink_prefixes);
	struct json j = { .n = 0 };
	json_word(&j, "mode", "sink");
	json_word(&j, "result", result);
	json_u64(&j, "sessions", atomic_load(&bb->sink_sessions));
	json_u64(&j, "prefixes", pfx);
	json_u64(&j, "withdrawn", atomic_load(&bb->sink_withdrawn));
	json_u64(&j, "updates", atomic_load(&bb->sink_updates));
	json_u64(&j, "bytes_rcvd", atomic_load(&bb->bytes_rcvd));
	json_time(&j, "t_first_update", tf);
	json_time(&j, "t_last_update", tl);
	json_time(&j, "t_full", atomic_load(&bb->t_sink_full));
	json_raw(&j, "recv_s", "%.6f", tl > tf ? tl - tf : 0.0);
	json_rate(&j, "recv_routes_per_s", (double)pfx, tl - tf);
	json_raw(&j, "cpu_user_s", "%.3f", u);
	json_raw(&j, "cpu_sys_s", "%.3f", s);
	json_rate(&j, "cpu_routes_per_s", (double)pfx, u + s);
	json_print(&j);
	return strcmp(result, "ok") ? 2 : 0;
}

/* Builds the route set and every peer's UPDATE stream. */
static void prepare(struct bb *bb, struct bb_ribs *r)
{
	const struct bb_config *cf = &bb->cf;
	memset(r, 0, sizeof(*r));
	if (cf->mrt_in)
		mrt_read(cf, cf->mrt_in, r);
	else if (cf->peers)
		routes_synth(cf, r);
	if (r->npool6)
		bb->cf.ipv6 = true;
	bb->tx = bb_alloc((cf->peers ? cf->peers : 1) * sizeof(*bb->tx));
	bb->routes_total = 0;
	for (unsigned p = 0; p < cf->peers; p++) {
		uint32_t nh = cf->next_hop ? cf->next_hop : bb_peer_addr(cf, p);
		enc_peer_updates(r, p, nh, bb->cf.ipv6, &bb->tx[p]);
		bb->routes_total += bb->tx[p].routes;
	}
	bb->expect = cf->expect_set ? cf->expect : r->npool;
	if (cf->prop)
		prop_prepare(bb, r);
}

static bool all_done(struct bb *bb, double now)
{
	const struct bb_config *cf = &bb->cf;
	return atomic_load(&bb->n_established) == bb->nsessions && atomic_load(&bb->n_sent_all) == cf->peers &&
	       atomic_load(&bb->n_mon_full) == cf->monitors &&
	       (!cf->settle || now - atomic_load(&bb->t_mon_last) >= cf->settle);
}

static void progress_line(struct bb *bb)
{
	char mons[256] = "";
	size_t n = 0;
	for (unsigned i = 0; i < bb->cf.monitors && n + 24 < sizeof(mons); i++)
		n += (size_t)snprintf(mons + n, sizeof(mons) - n, "%s%llu", i ? "," : "",
				      (unsigned long long)atomic_load(&bb->mon_count[i]));
	bb_event("event=progress established=%u sent_all=%u monitors_full=%u monitor_prefixes=%s "
		 "bytes_sent=%llu",
		 atomic_load(&bb->n_established), atomic_load(&bb->n_sent_all), atomic_load(&bb->n_mon_full),
		 bb->cf.monitors ? mons : "-", (unsigned long long)atomic_load(&bb->bytes_sent));
}

/* Waits for done/error/timeout/signal; returns the result word. */
static const char *wait_run(struct bb *bb)
{
	const struct bb_config *cf = &bb->cf;
	double next_progress = cf->progress;
	bool done = false;
	double done_at = 0;
	for (;;) {
		bb_sleep_ms(5);
		double now = bb_now();
		if (!done && all_done(bb, now)) { /* first: a Cease right after is no error */
			done = true;
			done_at = now;
			bb_event("event=done");
		}
		if (atomic_load(&bb->fatal))
			return "error";
		if (got_signal)
			return done ? "ok" : "interrupted";
		if (cf->progress && now >= next_progress) {
			next_progress += cf->progress;
			progress_line(bb);
		}
		if (done && cf->linger >= 0 && now - done_at >= cf->linger)
			return "ok";
		if (!done && now > cf->timeout) {
			bb_event("event=timeout established=%u sent_all=%u monitors_full=%u",
				 atomic_load(&bb->n_established), atomic_load(&bb->n_sent_all),
				 atomic_load(&bb->n_mon_full));
			progress_line(bb);
			return "timeout";
		}
	}
}

static void inject_summary(struct bb *bb, const struct run_totals *rt)
{
	const struct bb_config *cf = &bb->cf;
	double tfs = atomic_load(&bb->t_first_send), tsa = atomic_load(&bb->t_sent_all);
	double tmf = cf->monitors ? atomic_load(&bb->t_mon_full) : 0;
	double tml = cf->monitors ? atomic_load(&bb->t_mon_last) : 0;
	double send_s = tsa > 0 ? tsa - tfs : 0, conv_s = tmf > 0 ? tmf - tfs : 0;
	double last_s = tml > 0 && tmf > 0 ? tml - tfs : 0;
	double routes = (double)bb->routes_total;
	struct json j = { .n = 0 };
	json_word(&j, "mode", "inject");
	json_word(&j, "result", rt->result);
	json_u64(&j, "peers", cf->peers);
	json_u64(&j, "monitors", cf->monitors);
	json_u64(&j, "threads", cf->threads);
	json_u64(&j, "routes_total", bb->routes_total);
	json_u64(&j, "prefixes_unique", rt->prefixes);
	json_u64(&j, "expect_prefixes", bb->expect);
	json_u64(&j, "updates", rt->updates);
	json_u64(&j, "update_bytes", rt->update_bytes);
	json_u64(&j, "bytes_sent", atomic_load(&bb->bytes_sent));
	json_u64(&j, "bytes_rcvd", atomic_load(&bb->bytes_rcvd));
	json_raw(&j, "prep_s", "%.3f", rt->prep_s);
	json_time(&j, "t_established_all", atomic_load(&bb->t_established_all));
	json_time(&j, "t_first_send", tfs);
	json_time(&j, "t_sent_all", tsa);
	json_time(&j, "t_monitors_full", tmf);
	json_time(&j, "t_monitors_last_update", tml);
	json_time(&j, "t_peers_last_update", atomic_load(&bb->t_peer_last));
	json_u64(&j, "peer_updates_in", atomic_load(&bb->peer_updates_in));
	json_raw(&j, "send_s", "%.6f", send_s);
	json_rate(&j, "send_routes_per_s", routes, send_s);
	json_time(&j, "converge_s", conv_s);
	json_rate(&j, "converge_routes_per_s", routes, conv_s);
	json_time(&j, "converge_last_s", last_s);
	json_raw(&j, "cpu_user_s", "%.3f", rt->cpu_user);
	json_raw(&j, "cpu_sys_s", "%.3f", rt->cpu_sys);
	json_rate(&j, "cpu_routes_per_s", routes, rt->cpu_user + rt->cpu_sys);
	json_print(&j);
}

static void start_line(struct bb *bb, const struct run_totals *rt, uint64_t prefixes6)
{
	const struct bb_config *cf = &bb->cf;
	struct timespec wall;
	clock_gettime(CLOCK_REALTIME, &wall);
	char dut[16];
	inet_ntop(AF_INET, &(uint32_t){ htonl(cf->dut_addr) }, dut, sizeof(dut));
	bb_event("event=start unix=%.6f dut=%s:%u peers=%u monitors=%u threads=%u routes=%llu "
		 "prefixes=%llu prefixes_v6=%llu expect=%llu updates=%llu bytes=%llu prep_s=%.3f",
		 (double)wall.tv_sec + wall.tv_nsec / 1e9, dut, cf->dut_port, cf->peers, cf->monitors,
		 cf->threads, (unsigned long long)bb->routes_total, (unsigned long long)rt->prefixes,
		 (unsigned long long)prefixes6, (unsigned long long)bb->expect,
		 (unsigned long long)rt->updates, (unsigned long long)rt->update_bytes, rt->prep_s);
}

static int run_injector(struct bb *bb)
{
	struct bb_config *cf = &bb->cf;
	struct bb_ribs r;
	struct run_totals rt = { .result = "ok" };
	double prep0 = mono();
	prepare(bb, &r);
	if (cf->mrt_out) {
		mrt_write(cf, cf->mrt_out, &r);
		fprintf(stderr, "bgpblast: wrote %s: %llu prefixes, %llu routes, %u peers\n", cf->mrt_out,
			(unsigned long long)r.npool, (unsigned long long)r.nroutes, cf->peers);
		return 0;
	}
	rt.prep_s = mono() - prep0;
	rt.prefixes = r.npool;
	for (unsigned p = 0; p < cf->peers; p++) {
		rt.updates += bb->tx[p].updates;
		rt.update_bytes += bb->tx[p].len;
	}
	bb->nsessions = cf->peers + cf->monitors;
	bb->mon_count = bb_alloc((cf->monitors + 1) * sizeof(*bb->mon_count));
	for (unsigned i = 0; i <= cf->monitors; i++)
		atomic_init(&bb->mon_count[i], 0);

	double cpu0u, cpu0s;
	cpu_split(&cpu0u, &cpu0s);
	t0 = mono();
	start_line(bb, &rt, r.npool6);
	if (cf->dry_run)
		return 0;
	signals_setup(); /* from here on a signal ends the run cleanly */
	sess_run_injector(bb);
	rt.result = cf->prop ? prop_wait(bb) : wait_run(bb);
	sess_stop(bb);
	cpu_split(&rt.cpu_user, &rt.cpu_sys);
	rt.cpu_user -= cpu0u;
	rt.cpu_sys -= cpu0s;
	if (cf->prop)
		prop_summary(bb, &rt);
	else
		inject_summary(bb, &rt);
	if (!strcmp(rt.result, "ok"))
		return 0;
	if (!strcmp(rt.result, "timeout"))
		return 2;
	if (!strcmp(rt.result, "interrupted"))
		return 130;
	if (!strcmp(rt.result, "lost"))
		return 3;
	return 1;
}

int main(int argc, char **argv)
{
	static struct bb bb;
	t0 = mono();
	parse_args(&bb.cf, argc, argv);
	return bb.cf.sink ? run_sink(&bb) : run_injector(&bb);
}
