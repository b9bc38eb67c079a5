/*
 * DOC: Clocks and time formats.
 *
 * btime is microseconds. Monotonic time drives timers; real time is only
 * for display. A timeformat is BIRD's "fmt1 [limit fmt2]": fmt1 is used
 * when the time is within `limit` of now, fmt2 otherwise. Formats are
 * strftime formats plus "%Nf" for N fractional-second digits (1..6).
 */
#ifndef LIB_TIMEUTIL_H
#define LIB_TIMEUTIL_H

#include "lib/birdlib.h"

btime time_mono_now(void);
btime time_real_now(void);
/* Convert a monotonic timestamp to real time (via the current offset). */
btime time_mono_to_real(btime mono);

struct timeformat {
  const char *fmt1;
  const char *fmt2;   /* NULL: always fmt1 */
  btime limit;
};

#define TM_ISO_SHORT_S  "%T"
#define TM_ISO_SHORT_MS "%T.%3f"
#define TM_ISO_SHORT_US "%T.%6f"
#define TM_ISO_LONG_S   "%F %T"
#define TM_ISO_LONG_MS  "%F %T.%3f"
#define TM_ISO_LONG_US  "%F %T.%6f"

/* BIRD's defaults: route and protocol "iso short ms" within 20 hours,
 * otherwise date; base and log "iso long ms". */
extern const struct timeformat tf_default_route;
extern const struct timeformat tf_default_proto;
extern const struct timeformat tf_default_base;
extern const struct timeformat tf_default_log;

#define TM_DATETIME_BUFFER_SIZE 64
/* Format real time t; returns 0 on success, -1 if the result did not fit. */
int tm_format_real_time(char *buf, size_t size, const char *fmt, btime t);
/* Format with a timeformat relative to now (real time). */
void tm_format_time(char *buf, size_t size, const struct timeformat *tf, btime real);

#endif
