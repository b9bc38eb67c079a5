/*
 * DOC: Logging with BIRD's classes and destinations.
 *
 * Classes: debug, trace, info, remote, warning, error, auth, fatal, bug.
 * Destinations come from the config (`log stderr|syslog [name NAME]|"file"
 * [size N "backup"] all|{ classes }`); until a config is committed
 * everything but debug goes to stderr. Each line is
 * "<time> <CLASS> text" with the `timeformat log` format, e.g.
 * "2026-11-21 19:05:22.235 <INFO> Started". Safe to call from any thread;
 * a line is written with one write() so lines never interleave.
 */
#ifndef LIB_LOG_H
#define LIB_LOG_H

#include <stdarg.h>
#include "lib/birdlib.h"
#include "lib/lists.h"
#include "lib/timeutil.h"

enum log_class {
  L_DEBUG = 1, L_TRACE, L_INFO, L_REMOTE, L_WARN, L_ERR, L_AUTH, L_FATAL, L_BUG,
  L_MAX
};
#define L_ALL_MASK (((1U << L_MAX) - 1) & ~1U)

/* "debug", "trace", "info", "remote", "warning", "error", "auth", "fatal", "bug" */
extern const char *const log_class_names[L_MAX];
/* Name as printed in a log line: "DBG", "TRACE", "INFO", "RMT", "WARN", "ERR", "AUTH", "FATAL", "BUG" */
extern const char *const log_class_tags[L_MAX];

enum log_dest { LOG_DEST_STDERR, LOG_DEST_FILE, LOG_DEST_SYSLOG };

/* One `log` statement of the config. Owned by the config. */
struct log_config {
  struct lnode n;
  enum log_dest dest;
  u32 mask;               /* bit per class */
  const char *filename;   /* LOG_DEST_FILE */
  const char *backup;     /* rotate to this name when size exceeded */
  u64 limit;              /* bytes, 0 = no limit */
  const char *syslog_name;
};

void log_init(const char *progname);
/* Switch to the destinations of a new config (list of struct log_config).
 * Files are opened before the old ones are closed; returns 0 or -1 with a
 * message in err. An empty list means stderr for everything but debug. */
int log_switch(struct lnode *configs, const struct timeformat *tf, char *err, size_t errlen);
void log_msg(enum log_class cls, const char *fmt, ...);
void log_vmsg(enum log_class cls, const char *fmt, va_list args);
/* Rate-limited logging for anything a peer can trigger. */
struct log_rate { btime window_start; u32 count; u32 dropped; };
void log_rl(struct log_rate *rl, enum log_class cls, const char *fmt, ...);
/* Debug output (debug protocols ...): goes to destinations with L_DEBUG. */
void debug_msg(const char *fmt, ...);
/* The CLI's `echo`: fn gets the text of every line of a class in mask
 * (without time and class), in the thread that logs it; it must neither
 * block nor log. A mask of 0 stops it (fn may still be called by a line
 * under way, so it must stay valid). */
void log_set_echo(u32 mask, void (*fn)(enum log_class cls, const char *msg));
/* Also echo log lines to stderr regardless of config (-d option). */
void log_set_debug_stderr(int on);

#endif
