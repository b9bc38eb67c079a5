/*
 * DOC: Clocks and BIRD time formats.
 *
 * Both clocks are read with clock_gettime() and returned in microseconds.
 * Formatting goes through strftime() in local time; the one extension,
 * "%Nf" (N = 1..6 fractional-second digits), is expanded into literal
 * digits before strftime sees the format. No state except a pthread_once
 * for tzset(), so everything here is safe from any thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/timeutil.h"

const struct timeformat tf_default_route = { TM_ISO_SHORT_MS, "%F", S_ 20 * 3600 };
const struct timeformat tf_default_proto = { TM_ISO_SHORT_MS, "%F", S_ 20 * 3600 };
const struct timeformat tf_default_base = { TM_ISO_LONG_MS, NULL, 0 };
const struct timeformat tf_default_log = { TM_ISO_LONG_MS, NULL, 0 };

/* Longest format after %Nf expansion; config formats are far shorter. */
#define TM_FMT_MAX 256

static btime
tm_clock(clockid_t clk)
{
  struct timespec ts;
  clock_gettime(clk, &ts);
  return (btime) ts.tv_sec * TO_S + ts.tv_nsec / 1000;
}

btime time_mono_now(void) { return tm_clock(CLOCK_MONOTONIC); }
btime time_real_now(void) { return tm_clock(CLOCK_REALTIME); }

btime
time_mono_to_real(btime mono)
{
  return mono + (time_real_now() - time_mono_now());
}

static pthread_once_t tm_tz_once = PTHREAD_ONCE_INIT;
static void tm_tz_init(void) { tzset(); }

/*
 * Copy fmt to out, replacing each "%Nf" by the first N digits of the
 * microseconds in usec. "%%" is copied as is so that "%%3f" stays literal.
 * Returns -1 if the result does not fit.
 */
static int
tm_expand_frac(char *out, size_t size, const char *fmt, u32 usec)
{
  char digits[8];
  snprintf(digits, sizeof(digits), "%06u", (uint) usec);

  size_t o = 0;
  for (const char *f = fmt; *f; f++)
  {
    if (f[0] == '%' && f[1] >= '1' && f[1] <= '6' && f[2] == 'f')
    {
      uint n = f[1] - '0';
      if (o + n >= size)
        return -1;
      memcpy(out + o, digits, n);
      o += n;
      f += 2;
      continue;
    }

    uint n = (f[0] == '%' && f[1]) ? 2 : 1;
    if (o + n >= size)
      return -1;
    memcpy(out + o, f, n);
    o += n;
    f += n - 1;
  }
  out[o] = 0;
  return 0;
}

int
tm_format_real_time(char *buf, size_t size, const char *fmt, btime t)
{
  if (!size)
    return -1;
  buf[0] = 0;
  if (!*fmt)
    return 0;

  /* Floor division so that times before the epoch keep a positive fraction */
  time_t sec = t / TO_S;
  s64 usec = t % TO_S;
  if (usec < 0)
  {
    usec += TO_S;
    sec--;
  }

  char xfmt[TM_FMT_MAX];
  if (tm_expand_frac(xfmt, sizeof(xfmt), fmt, (u32) usec) < 0)
    return -1;

  pthread_once(&tm_tz_once, tm_tz_init);
  struct tm tm;
  if (!localtime_r(&sec, &tm))
    return -1;

  /* strftime() returns 0 both for "did not fit" and for an empty result;
   * a non-empty format that expands to nothing is not worth supporting. */
  if (!strftime(buf, size, xfmt, &tm))
  {
    buf[0] = 0;
    return -1;
  }
  return 0;
}

void
tm_format_time(char *buf, size_t size, const struct timeformat *tf, btime real)
{
  btime delta = time_real_now() - real;
  if (delta < 0)
    delta = -delta;

  const char *fmt = (!tf->fmt2 || delta < tf->limit) ? tf->fmt1 : tf->fmt2;
  if (tm_format_real_time(buf, size, fmt, real) < 0 && size)
    snprintf(buf, size, "<error>");
}
