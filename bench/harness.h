/*
 * DOC: A small micro-benchmark harness.
 *
 * A benchmark is a function doing `iters` operations on a state pointer.
 * The harness warms it up, calibrates the number of operations per sample
 * so that one sample takes about --target-ms (100 ms by default), takes N
 * samples (15 by default, 3 with --quick) and reports the median and the
 * spread (min, p25, p75, max) in ns/op, and the median in ops/s. Benchmarks
 * whose work has a natural size (load a whole table) set fixed_iters and
 * get before/after hooks, run untimed around every sample, to bring the
 * state back (empty the table, reload it).
 *
 * Measurements that are not timings (bytes per route) are reported with
 * bench_metric() from a metric-only benchmark (run == NULL, measure set).
 *
 * Results go to stdout as Markdown: a header with the machine (CPU model,
 * cores, kernel, compiler, build flags), a table of timings with the
 * target of each benchmark beside it, and a table of metrics. --csv FILE
 * appends one row per result. Progress goes to stderr.
 *
 * Nothing here is thread-safe: register and run from one thread (a
 * benchmark may start its own threads inside run()).
 */
#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H

#include <stdint.h>

struct bench_spec {
  const char *name;           /* "rt/insert/1src"; --filter matches a substring */
  const char *op;             /* what one op is, e.g. "insert" (display only) */
  void *state;
  /* Timed: do iters operations. */
  void (*run)(void *state, uint64_t iters);
  /* Untimed, around every run (warm-up and calibration included). */
  void (*before)(void *state, uint64_t iters);
  void (*after)(void *state, uint64_t iters);
  /* Called once before the first run and once after the last one (untimed). */
  void (*setup)(void *state);
  void (*teardown)(void *state);
  /* Metric-only benchmark: called once instead of timing; reports with
   * bench_metric(). */
  void (*measure)(void *state);
  uint64_t fixed_iters;       /* 0: calibrate to --target-ms per sample */
  unsigned samples;           /* 0: the global default (15, --samples N) */
  unsigned warmup;            /* untimed runs before sampling (fixed_iters): default 1 */
  double target_ops;          /* aim in ops/s (0: none); shown with a verdict */
  const char *target;         /* text shown in the Target column */
};

/* Parse the harness options (see bench_usage); unknown ones are left to
 * the caller: returns the index of the first argument not understood, or
 * -1 on error, or -2 when the program should just exit 0 (--help). */
int bench_parse_args(int argc, char **argv);
void bench_usage(const char *prog);

/* Lines of the machine header block beyond the built-in ones. */
void bench_header(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bench_title(const char *title);

void bench_add(const struct bench_spec *b);
/* Does --filter select this name? (for setups shared by several benches) */
int bench_selected(const char *name);
/* Is --quick set? (benchmarks may shrink their inputs for smoke runs) */
int bench_quick(void);
/* Run the selected benchmarks in registration order and print the report.
 * Returns 0, or 1 if nothing matched the filter. */
int bench_run_all(void);

/* A non-timing result of the running benchmark (or of `group` if set). */
void bench_metric(const char *name, double value, const char *unit, const char *target,
                  int met /* 1 yes, 0 no, -1 no verdict */);
/* Called after the last benchmark, before the report is printed (for
 * sanity checks that add notes). */
void bench_on_finish(void (*fn)(void));
/* A free-text note printed under the tables. */
void bench_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Helpers for benchmarks. */
uint64_t bench_now_ns(void);                 /* CLOCK_MONOTONIC */
/* Resident set size of this process in bytes (/proc/self/statm). */
uint64_t bench_rss_bytes(void);
/* Deterministic PRNG (splitmix64): the same seed gives the same inputs on
 * every run and machine. */
static inline uint64_t bench_rand(uint64_t *s)
{
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
/* Keep the compiler from optimizing a result away. */
static inline void bench_keep(const void *p) { __asm__ volatile("" : : "g"(p) : "memory"); }

#endif
