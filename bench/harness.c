/*
 * DOC: The micro-benchmark harness (see harness.h).
 *
 * Flow per timed benchmark: setup, then calibration (grow the op count
 * until a run takes about a fifth of the target, then scale it to the
 * target; these runs double as warm-up) or, for fixed-size benchmarks,
 * `warmup` untimed runs; then N samples, each timed with CLOCK_MONOTONIC
 * around run() only; then teardown. Results are kept and printed at the
 * end, so progress lines (stderr) never interleave with the report.
 */
#include "bench/harness.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_CFLAGS
#define BENCH_CFLAGS "(unknown)"
#endif
#ifndef BENCH_LIB_CFLAGS
#define BENCH_LIB_CFLAGS "(unknown)"
#endif

#define BENCH_MAX 128
#define RESULT_MAX 512
#define HEADER_MAX 32
#define NOTE_MAX 64
#define TEXT 256

struct result {
  const struct bench_spec *b;
  int is_metric;
  /* timing */
  unsigned samples;
  uint64_t iters;
  double median, min, p25, p75, max;    /* ns/op */
  /* metric */
  char metric[TEXT];
  double value;
  char unit[64];
  char target[TEXT];
  int met;
};

static struct {
  const char *filter;
  const char *csv;
  unsigned samples;
  int quick;
  double target_ms;
  int list;
  /* perf's control and ack FIFOs (--perf-ctl): counting only while timed */
  FILE *perf_ctl, *perf_ack;
} opt = { .samples = 15, .target_ms = 100 };

static struct bench_spec benches[BENCH_MAX];
static unsigned nbenches;
static struct result results[RESULT_MAX];
static unsigned nresults;
static char headers[HEADER_MAX][2][TEXT];
static unsigned nheaders;
static char notes[NOTE_MAX][TEXT * 2];
static unsigned nnotes;
static const char *title = "Micro-benchmarks";
static const struct bench_spec *current;
static void (*finish_hook)(void);

void bench_on_finish(void (*fn)(void)) { finish_hook = fn; }

/* --- Options --- */

void
bench_usage(const char *prog)
{
  fprintf(stderr,
          "Usage: %s [--filter SUBSTR] [--samples N] [--quick] [--csv FILE] [--target-ms MS] [--list] [--perf-ctl C,A]\n"
          "  --filter SUBSTR  run only benchmarks whose name contains SUBSTR\n"
          "  --samples N      samples per benchmark (default 15; a benchmark may ask for fewer)\n"
          "  --quick          3 samples and smaller inputs where a benchmark allows it (CI smoke runs)\n"
          "  --csv FILE       append one CSV row per result to FILE\n"
          "  --target-ms MS   calibrated sample length (default 100)\n"
          "  --list           list benchmark names and exit\n"
          "  --perf-ctl C,A   enable perf's events only around timed runs: C and A are the FIFOs\n"
          "                   given to `perf record -D -1 --control fifo:C,A`\n",
          prog);
}

/* A profile of a whole run is mostly its untimed setup (loading and
 * emptying tables between samples); with perf started disabled and these
 * FIFOs, it samples the timed runs only. */
static int
perf_ctl_open(const char *arg)
{
  char ctl[TEXT];
  const char *comma = strchr(arg, ',');
  if (!comma || (size_t) (comma - arg) >= sizeof(ctl)) {
    fprintf(stderr, "--perf-ctl: want CTL_FIFO,ACK_FIFO, got %s\n", arg);
    return -1;
  }
  memcpy(ctl, arg, (size_t) (comma - arg));
  ctl[comma - arg] = 0;
  opt.perf_ctl = fopen(ctl, "w");
  opt.perf_ack = opt.perf_ctl ? fopen(comma + 1, "r") : NULL;
  if (!opt.perf_ack) {
    fprintf(stderr, "--perf-ctl: %s: %s\n", opt.perf_ctl ? comma + 1 : ctl, strerror(errno));
    return -1;
  }
  return 0;
}

/* Waits for perf's ack, so that the switch lands outside the clock. */
static void
perf_ctl_say(const char *what)
{
  if (!opt.perf_ctl)
    return;
  char ack[16];
  fprintf(opt.perf_ctl, "%s\n", what);
  fflush(opt.perf_ctl);
  if (!fgets(ack, sizeof(ack), opt.perf_ack)) {
    fprintf(stderr, "--perf-ctl: perf went away\n");
    fclose(opt.perf_ctl);
    fclose(opt.perf_ack);
    opt.perf_ctl = opt.perf_ack = NULL;
  }
}

int
bench_parse_args(int argc, char **argv)
{
  int i;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    int has = i + 1 < argc;
    if (!strcmp(a, "--filter") && has)
      opt.filter = argv[++i];
    else if (!strcmp(a, "--csv") && has)
      opt.csv = argv[++i];
    else if (!strcmp(a, "--samples") && has) {
      opt.samples = (unsigned) strtoul(argv[++i], NULL, 10);
      if (!opt.samples)
        return -1;
    } else if (!strcmp(a, "--target-ms") && has) {
      opt.target_ms = strtod(argv[++i], NULL);
      if (opt.target_ms <= 0)
        return -1;
    } else if (!strcmp(a, "--quick"))
      opt.quick = 1;
    else if (!strcmp(a, "--list"))
      opt.list = 1;
    else if (!strcmp(a, "--perf-ctl") && has) {
      if (perf_ctl_open(argv[++i]) < 0)
        return -1;
    }
    else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      bench_usage(argv[0]);
      return -2;
    } else
      break;
  }
  if (opt.quick)
    opt.samples = 3;
  return i;
}

int bench_quick(void) { return opt.quick; }

void
bench_title(const char *t)
{
  title = t;
}

void
bench_header(const char *key, const char *fmt, ...)
{
  if (nheaders >= HEADER_MAX)
    return;
  va_list ap;
  va_start(ap, fmt);
  snprintf(headers[nheaders][0], TEXT, "%s", key);
  vsnprintf(headers[nheaders][1], TEXT, fmt, ap);
  va_end(ap);
  nheaders++;
}

void
bench_note(const char *fmt, ...)
{
  if (nnotes >= NOTE_MAX)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(notes[nnotes++], sizeof(notes[0]), fmt, ap);
  va_end(ap);
}

void
bench_add(const struct bench_spec *b)
{
  if (nbenches >= BENCH_MAX) {
    fprintf(stderr, "bench: too many benchmarks\n");
    exit(2);
  }
  benches[nbenches++] = *b;
}

int
bench_selected(const char *name)
{
  return !opt.filter || strstr(name, opt.filter);
}

/* --- Measuring --- */

uint64_t
bench_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

uint64_t
bench_rss_bytes(void)
{
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long size = 0, resident = 0;
  if (!f)
    return 0;
  if (fscanf(f, "%lu %lu", &size, &resident) != 2)
    resident = 0;
  fclose(f);
  return (uint64_t) resident * (uint64_t) sysconf(_SC_PAGESIZE);
}

static uint64_t
timed_run(const struct bench_spec *b, uint64_t iters)
{
  if (b->before)
    b->before(b->state, iters);
  perf_ctl_say("enable");
  uint64_t t0 = bench_now_ns();
  b->run(b->state, iters);
  uint64_t t = bench_now_ns() - t0;
  perf_ctl_say("disable");
  if (b->after)
    b->after(b->state, iters);
  return t ? t : 1;
}

/* Grow the op count until a run takes a fifth of the target, then scale
 * it to the target. The runs on the way are the warm-up. */
static uint64_t
calibrate(const struct bench_spec *b)
{
  double target = opt.target_ms * 1e6;
  uint64_t n = 1, t = timed_run(b, n);
  while (t < target / 5) {
    double grow = target / 5 / (double) t * 1.2;
    if (grow > 100)
      grow = 100;
    if (grow < 2)
      grow = 2;
    n = (uint64_t) ((double) n * grow);
    t = timed_run(b, n);
  }
  n = (uint64_t) ((double) n * target / (double) t);
  if (!n)
    n = 1;
  timed_run(b, n);
  return n;
}

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* Percentile of a sorted array, linear interpolation between ranks. */
static double
percentile(const double *v, unsigned n, double p)
{
  if (n == 1)
    return v[0];
  double rank = p * (n - 1);
  unsigned lo = (unsigned) rank;
  if (lo + 1 >= n)
    return v[n - 1];
  return v[lo] + (v[lo + 1] - v[lo]) * (rank - lo);
}

static struct result *
new_result(void)
{
  if (nresults >= RESULT_MAX) {
    fprintf(stderr, "bench: too many results\n");
    exit(2);
  }
  struct result *r = &results[nresults++];
  memset(r, 0, sizeof(*r));
  r->b = current;
  return r;
}

void
bench_metric(const char *name, double value, const char *unit, const char *target, int met)
{
  struct result *r = new_result();
  r->is_metric = 1;
  snprintf(r->metric, sizeof(r->metric), "%s", name);
  r->value = value;
  snprintf(r->unit, sizeof(r->unit), "%s", unit ? unit : "");
  snprintf(r->target, sizeof(r->target), "%s", target ? target : "");
  r->met = met;
  fprintf(stderr, "  %-40s %14.1f %s\n", name, value, unit ? unit : "");
}

static void
run_timed(const struct bench_spec *b)
{
  unsigned samples = opt.samples;
  if (b->samples && b->samples < samples && !opt.quick)
    samples = b->samples;
  uint64_t n;
  if (b->fixed_iters) {
    n = b->fixed_iters;
    unsigned w = b->warmup ? b->warmup : 1;
    for (unsigned i = 0; i < w; i++)
      timed_run(b, n);
  } else
    n = calibrate(b);

  double *v = calloc(samples, sizeof(double));
  if (!v)
    exit(2);
  for (unsigned i = 0; i < samples; i++)
    v[i] = (double) timed_run(b, n) / (double) n;
  qsort(v, samples, sizeof(double), cmp_double);

  struct result *r = new_result();
  r->samples = samples;
  r->iters = n;
  r->min = v[0];
  r->max = v[samples - 1];
  r->median = percentile(v, samples, 0.5);
  r->p25 = percentile(v, samples, 0.25);
  r->p75 = percentile(v, samples, 0.75);
  r->met = b->target_ops > 0 ? 1e9 / r->median >= b->target_ops : -1;
  snprintf(r->target, sizeof(r->target), "%s", b->target ? b->target : "");
  free(v);
  fprintf(stderr, "  %-40s %10.1f ns/op  %12.0f ops/s  (%u x %llu ops, p25..p75 %.1f..%.1f)\n",
          b->name, r->median, 1e9 / r->median, samples, (unsigned long long) n, r->p25, r->p75);
}

/* --- Report --- */

static void
cpu_model(char *buf, size_t size)
{
  snprintf(buf, size, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f)
    return;
  char line[512];
  while (fgets(line, sizeof(line), f))
    if (!strncmp(line, "model name", 10)) {
      char *c = strchr(line, ':');
      if (c) {
        c++;
        while (*c == ' ' || *c == '\t')
          c++;
        c[strcspn(c, "\n")] = 0;
        snprintf(buf, size, "%s", c);
      }
      break;
    }
  fclose(f);
}

static double
mem_total_gib(void)
{
  FILE *f = fopen("/proc/meminfo", "r");
  unsigned long kb = 0;
  if (!f)
    return 0;
  char line[256];
  while (fgets(line, sizeof(line), f))
    if (sscanf(line, "MemTotal: %lu kB", &kb) == 1)
      break;
  fclose(f);
  return kb / 1048576.0;
}

static void
fmt_rate(char *buf, size_t size, double ops)
{
  if (ops >= 1e9)
    snprintf(buf, size, "%.2f G/s", ops / 1e9);
  else if (ops >= 1e6)
    snprintf(buf, size, "%.2f M/s", ops / 1e6);
  else if (ops >= 1e3)
    snprintf(buf, size, "%.1f k/s", ops / 1e3);
  else
    snprintf(buf, size, "%.1f /s", ops);
}

static void
fmt_count(char *buf, size_t size, uint64_t n)
{
  if (n >= 1000000)
    snprintf(buf, size, "%.3gM", n / 1e6);
  else if (n >= 10000)
    snprintf(buf, size, "%.3gk", n / 1e3);
  else
    snprintf(buf, size, "%llu", (unsigned long long) n);
}

static const char *
verdict(int met)
{
  return met < 0 ? "" : met ? "yes" : "**no**";
}

static char cpu[256], host[256], kernel[256], date[64], load_start[64], load_end[64];
static double latency_ns;

static void
loadavg(char *buf, size_t size)
{
  snprintf(buf, size, "?");
  FILE *f = fopen("/proc/loadavg", "r");
  double a, b, c;
  if (!f)
    return;
  if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3)
    snprintf(buf, size, "%.2f %.2f %.2f", a, b, c);
  fclose(f);
}

/* Random-access latency over 64 MiB (a single-cycle pointer chase): the
 * table benchmarks are bound by it, and on a shared or virtualized host it
 * says how quiet the machine was. */
static double
mem_latency(void)
{
  size_t n = (64u << 20) / sizeof(size_t);
  size_t *a = malloc(n * sizeof(size_t));
  if (!a)
    return 0;
  for (size_t i = 0; i < n; i++)
    a[i] = i;
  uint64_t seed = 7;
  for (size_t i = n - 1; i > 0; i--) {       /* Sattolo: one cycle through all */
    size_t j = bench_rand(&seed) % i;
    size_t t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
  size_t p = 0, loads = 2000000;
  uint64_t t0 = bench_now_ns();
  for (size_t i = 0; i < loads; i++)
    p = a[p];
  double ns = (double) (bench_now_ns() - t0) / loads;
  bench_keep(&p);
  free(a);
  return ns;
}

static void
collect_machine(void)
{
  cpu_model(cpu, sizeof(cpu));
  if (gethostname(host, sizeof(host)))
    snprintf(host, sizeof(host), "unknown");
  struct utsname u;
  if (!uname(&u))
    snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname, u.release, u.machine);
  time_t now = time(NULL);
  strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
  loadavg(load_start, sizeof(load_start));
  latency_ns = mem_latency();
}

static void
print_header(FILE *o)
{
  fprintf(o, "## %s\n\n", title);
  fprintf(o, "| Machine | |\n|---|---|\n");
  fprintf(o, "| Date | %s |\n", date);
  fprintf(o, "| Host | %s |\n", host);
  fprintf(o, "| CPU | %s |\n", cpu);
  fprintf(o, "| Cores | %ld online (%ld configured) |\n", sysconf(_SC_NPROCESSORS_ONLN),
          sysconf(_SC_NPROCESSORS_CONF));
  fprintf(o, "| Memory | %.1f GiB |\n", mem_total_gib());
  fprintf(o, "| Kernel | %s |\n", kernel);
#ifdef __VERSION__
  fprintf(o, "| Compiler | %s %s |\n",
#ifdef __clang__
          "clang",
#else
          "gcc",
#endif
          __VERSION__);
#endif
  fprintf(o, "| Build flags (bench) | `%s` |\n", BENCH_CFLAGS);
  fprintf(o, "| Build flags (libraries) | `%s` |\n", BENCH_LIB_CFLAGS);
  fprintf(o, "| Sampling | %u samples%s; calibrated runs last ~%.0f ms; median and spread in ns/op |\n",
          opt.samples, opt.quick ? " (--quick)" : "", opt.target_ms);
  fprintf(o, "| Load average | %s at start, %s at end (other work on the host skews timings) |\n",
          load_start, load_end);
  fprintf(o, "| Memory latency | %.0f ns per random load over 64 MiB, at start |\n", latency_ns);
  for (unsigned i = 0; i < nheaders; i++)
    fprintf(o, "| %s | %s |\n", headers[i][0], headers[i][1]);
  fprintf(o, "\n");
}

static void
print_tables(FILE *o)
{
  int any = 0;
  for (unsigned i = 0; i < nresults; i++)
    if (!results[i].is_metric) {
      if (!any++) {
        fprintf(o, "### Timings\n\n");
        fprintf(o, "| Benchmark | Op | Ops/sample | Samples | Median ns/op | Min | P25 | P75 | Max "
                   "| Median ops/s | Target | Met |\n");
        fprintf(o, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|---|\n");
      }
      struct result *r = &results[i];
      char rate[32], cnt[32];
      fmt_rate(rate, sizeof(rate), 1e9 / r->median);
      fmt_count(cnt, sizeof(cnt), r->iters);
      fprintf(o, "| %s | %s | %s | %u | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %s | %s |\n",
              r->b->name, r->b->op ? r->b->op : "op", cnt, r->samples, r->median, r->min, r->p25, r->p75,
              r->max, rate, r->target, verdict(r->met));
    }
  if (any)
    fprintf(o, "\n");
  any = 0;
  for (unsigned i = 0; i < nresults; i++)
    if (results[i].is_metric) {
      if (!any++) {
        fprintf(o, "### Metrics\n\n");
        fprintf(o, "| Benchmark | Metric | Value | Unit | Target | Met |\n");
        fprintf(o, "|---|---|--:|---|---|---|\n");
      }
      struct result *r = &results[i];
      double v = r->value;
      if (v == (double) (long long) v || v >= 1000)
        fprintf(o, "| %s | %s | %.0f | %s | %s | %s |\n", r->b->name, r->metric, v, r->unit, r->target,
                verdict(r->met));
      else
        fprintf(o, "| %s | %s | %.2f | %s | %s | %s |\n", r->b->name, r->metric, v, r->unit, r->target,
                verdict(r->met));
    }
  if (any)
    fprintf(o, "\n");
  for (unsigned i = 0; i < nnotes; i++)
    fprintf(o, "%s %s\n", i ? "-" : "Notes:\n\n-", notes[i]);
  if (nnotes)
    fprintf(o, "\n");
}

/* One CSV field: quoted when it holds a comma, quote or newline. */
static void
csv_field(FILE *f, const char *s, int last)
{
  if (strpbrk(s, ",\"\n")) {
    fputc('"', f);
    for (; *s; s++) {
      if (*s == '"')
        fputc('"', f);
      fputc(*s, f);
    }
    fputc('"', f);
  } else
    fputs(s, f);
  fputc(last ? '\n' : ',', f);
}

static void
write_csv(void)
{
  struct stat st;
  int fresh = stat(opt.csv, &st) < 0 || st.st_size == 0;
  FILE *f = fopen(opt.csv, "a");
  if (!f) {
    fprintf(stderr, "bench: cannot open %s: %s\n", opt.csv, strerror(errno));
    return;
  }
  if (fresh)
    fprintf(f, "date,host,cpu,cores,compiler,bench,metric,samples,iters,median_ns,min_ns,p25_ns,p75_ns,"
               "max_ns,ops_per_s,value,unit,target,met,loadavg,latency_ns\n");
  char cores[16], buf[64];
  snprintf(cores, sizeof(cores), "%ld", sysconf(_SC_NPROCESSORS_ONLN));
  for (unsigned i = 0; i < nresults; i++) {
    struct result *r = &results[i];
    csv_field(f, date, 0);
    csv_field(f, host, 0);
    csv_field(f, cpu, 0);
    csv_field(f, cores, 0);
    csv_field(f, __VERSION__, 0);
    csv_field(f, r->b->name, 0);
    csv_field(f, r->is_metric ? r->metric : "ns/op", 0);
    if (r->is_metric) {
      fputs(",,,,,,,,", f);
      snprintf(buf, sizeof(buf), "%.3f", r->value);
      csv_field(f, buf, 0);
      csv_field(f, r->unit, 0);
    } else {
      fprintf(f, "%u,%llu,%.3f,%.3f,%.3f,%.3f,%.3f,%.0f,,,", r->samples, (unsigned long long) r->iters,
              r->median, r->min, r->p25, r->p75, r->max, 1e9 / r->median);
    }
    csv_field(f, r->target, 0);
    csv_field(f, r->met < 0 ? "" : r->met ? "yes" : "no", 0);
    csv_field(f, load_start, 0);
    snprintf(buf, sizeof(buf), "%.1f", latency_ns);
    csv_field(f, buf, 1);
  }
  fclose(f);
}

int
bench_run_all(void)
{
  if (opt.list) {
    for (unsigned i = 0; i < nbenches; i++)
      printf("%s\n", benches[i].name);
    return 0;
  }
  collect_machine();
  unsigned ran = 0;
  for (unsigned i = 0; i < nbenches; i++) {
    const struct bench_spec *b = &benches[i];
    if (!bench_selected(b->name))
      continue;
    ran++;
    current = b;
    fprintf(stderr, "[%s]\n", b->name);
    if (b->setup)
      b->setup(b->state);
    if (b->measure)
      b->measure(b->state);
    else if (b->run)
      run_timed(b);
    if (b->teardown)
      b->teardown(b->state);
    current = NULL;
  }
  if (!ran) {
    fprintf(stderr, "bench: no benchmark matches '%s'\n", opt.filter ? opt.filter : "");
    return 1;
  }
  loadavg(load_end, sizeof(load_end));
  if (finish_hook)
    finish_hook();
  print_header(stdout);
  print_tables(stdout);
  fflush(stdout);
  if (opt.csv)
    write_csv();
  return 0;
}
