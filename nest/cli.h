/*
 * DOC: CLI sessions on the control socket.
 *
 * Each client connection is a struct cli owned by the main loop. Input is
 * split into lines; each line is parsed with the config grammar in CLI mode
 * and executed. Replies use BIRD's framing exactly:
 *   "DDDD-text"  a line of a reply that continues,
 *   " text"      a continued line with the same code as the previous one,
 *   "DDDD text"  the last line of the reply.
 * cli_printf(c, -code, ...) writes a non-final line, cli_printf(c, code, ...)
 * (code >= 0) the final one.
 *
 * Output is queued per session and written without blocking; a client that
 * does not read only stalls its own session. Long replies are produced in
 * steps: a command installs a continuation (cli_set_cont) that is called
 * again whenever the queue has drained below a threshold, so `show route`
 * over a large table streams and never holds the main loop for long.
 * Commands that need data owned by another loop suspend the session
 * (cli_suspend) and are resumed by an event (cli_resume).
 */
#ifndef NEST_CLI_H
#define NEST_CLI_H

#include "lib/birdlib.h"
#include "lib/lists.h"
#include "lib/loop.h"
#include "lib/resource.h"
#include "lib/txq.h"

#define CLI_LINE_SIZE 512
#define CLI_RX_SIZE 1024
#define CLI_TX_HIGH (64 * 1024)   /* stop producing above this much queued output */

struct cli;
typedef void (*cli_cont_fn)(struct cli *c);

struct cli {
  struct lnode n;              /* owner: main loop */
  pool *pool;                  /* freed with the session */
  linpool *parse_mem;          /* per command */
  struct loop_fd fd;
  char rx[CLI_RX_SIZE];
  size_t rx_len;
  int rx_overflow;
  struct txq tx;
  int last_code;               /* code of the previous line of the current reply; 0 = none yet */
  int restricted;
  int closing;
  cli_cont_fn cont;            /* streaming continuation of the running command */
  void *cont_data;
  void (*cont_cleanup)(struct cli *c);   /* called if the session dies mid-command */
  int suspended;
  struct event resume_ev;
  u32 id;
  /* `echo` (nest/cli_echo.c): log lines of the classes in echo_mask are
   * sent as "+text" lines between replies; while a command runs they wait
   * in echo_buf (echo_size bytes, in pool), what does not fit is counted
   * in echo_lost ("<N messages lost>"). */
  u32 echo_mask;
  uint echo_size, echo_len, echo_lost;
  char *echo_buf;
};

/* Listen on a Unix socket path (main loop). Returns 0 or -1 with errno. */
int cli_listen(const char *path);
void cli_shutdown(void);

/* Reply output. code < 0: non-final line with code -code; code >= 0: final line. */
void cli_printf(struct cli *c, int code, const char *fmt, ...);
void cli_vprintf(struct cli *c, int code, const char *fmt, va_list args);
/* A spontaneous line "+text" to session id, if it is still there (the
 * configure undo timeout tells the session that asked for it). */
void cli_async_printf(u32 id, const char *fmt, ...);
/* Every session (main loop). */
struct lnode *cli_session_list(void);
/* `echo` (nest/cli_echo.c), main loop. set: mask 0 turns it off; push: a
 * log line for session c, sent now if c is between commands. */
void cli_echo_set(struct cli *c, u32 mask, uint size);
void cli_echo_push(struct cli *c, const char *msg);
/* Shorthand for the final "0000 " line. */
static inline void cli_done(struct cli *c) { cli_printf(c, 0, ""); }

void cli_set_cont(struct cli *c, cli_cont_fn fn, void *data, void (*cleanup)(struct cli *));
/* Called by a continuation when it wrote its final line. */
void cli_cont_done(struct cli *c);
/* Is there room to produce more output now? */
int cli_tx_room(struct cli *c);
void cli_suspend(struct cli *c);
/* From any loop: wake a suspended session; its continuation runs next. */
void cli_resume(struct cli *c);

/* Command helpers. */
int cli_access_restricted(struct cli *c);   /* replies 8007 and returns 1 if restricted */

#endif
