/*
 * DOC: birdc / birdcl, the control socket clients
 *
 * Two binaries share one core. client.c connects to the daemon's Unix
 * socket, splits the byte stream into reply lines, prints them as they come
 * (never a whole reply at once) and runs one-shot mode and the plain line
 * front end. commands.c owns the command table (commands.def): abbreviation
 * expansion, completion and `?` help. birdc.c adds a readline front end,
 * birdcl.c is the plain one. Everything runs in one thread; the core keeps
 * its state in a file-local struct.
 *
 * Output follows BIRD 2's birdc: the text after the "DDDD-" / "DDDD " / " "
 * prefix, code-0 lines omitted, "+text" as ">>> text", unparsable lines as
 * "??? <line>"; -v prints coded lines raw and indents continuations.
 */
#ifndef CLIENT_CLIENT_H
#define CLIENT_CLIENT_H

#include <stdio.h>

#include "lib/birdlib.h"

/* ---- Reply lines (client.c) ---- */

enum client_line_kind {
  CLIENT_LINE_CODED,    /* "DDDD-text" or "DDDD text" */
  CLIENT_LINE_CONT,     /* " text": same code as the previous line */
  CLIENT_LINE_ASYNC,    /* "+text": spontaneous printout */
  CLIENT_LINE_INVALID,  /* anything else */
};

struct client_line {
  enum client_line_kind kind;
  int code;             /* CLIENT_LINE_CODED only */
  bool last;            /* "DDDD text": the reply ends here */
  const char *text;     /* after the prefix; the whole line when invalid */
  size_t text_len;
};

/* Classifies one line (without its '\n'). */
void client_line_parse(const char *line, size_t len, struct client_line *out);

/* Printing state of the reply in progress. */
struct client_reply {
  int last_code;        /* code of the last coded line */
  bool verbose;         /* -v: print codes */
  bool skip;            /* discard the rest of this reply (pager 'q', ^C) */
};

/* Prints one line to @out as birdc does and sets *@end when it is the last
 * line of a reply. Returns the number of bytes printed. */
size_t client_reply_line(struct client_reply *r, const char *line, size_t len, FILE *out, bool *end);

/* Exit status of a one-shot command whose reply has ended. */
static inline int client_reply_status(const struct client_reply *r)
{
  return r->last_code < 8000 ? 0 : 1;
}

/* Splits a byte stream into lines, whatever the read boundaries. A line
 * longer than CLIENT_LINE_MAX is truncated to that length. */
#define CLIENT_LINE_MAX (1 << 20)

struct client_rbuf {
  char *buf;
  size_t len, cap;
  bool overflow;        /* dropping the tail of an overlong line */
};

typedef void (*client_line_fn)(void *ctx, const char *line, size_t len);

void client_rbuf_feed(struct client_rbuf *rb, const char *data, size_t n, client_line_fn fn, void *ctx);
void client_rbuf_free(struct client_rbuf *rb);

/* ---- Front ends ---- */

/* Hooks of an interactive front end; any may be NULL. */
struct client_ui {
  void (*start)(void);          /* the session starts (after the greeting) */
  void (*prompt)(void);         /* idle again: show the prompt, accept input */
  void (*input)(void);          /* stdin is readable while idle */
  void (*hide)(void);           /* unsolicited server output arrives while idle */
  void (*reveal)(void);         /* ... and has been printed */
  void (*poll)(void);           /* look at signal flags (before/after select) */
  void (*cleanup)(void);        /* just before exit: restore the terminal */
  void (*term_size)(int *rows, int *cols);  /* for the pager */
  void (*more_clear)(void);     /* erase the "--More--" prompt */
  void (*plain_sent)(void);     /* client_plain_input() sent a command */
  void (*plain_eof)(void);      /* client_plain_input() met the end of stdin */
};

/* Reads in plain lines with fgets: birdcl, and birdc without a terminal.
 * Prompt "bird> ", echo of the line when stdin is not a terminal, a line
 * ending in '?' prints help, "\n" at the end of input. */
extern const struct client_ui client_plain_ui;
void client_plain_prompt(void);
void client_plain_input(void);

/* Parses the arguments, connects and runs the session; never returns. */
NORET void client_main(int argc, char **argv, const struct client_ui *ui);

enum client_submit {
  CLIENT_SUBMIT_SENT,   /* sent; the reply will follow */
  CLIENT_SUBMIT_LOCAL,  /* empty line or handled by the client (help) */
  CLIENT_SUBMIT_ERROR,  /* unknown or ambiguous, message printed */
};

/* Expands and sends a line the user entered (quit/exit end the program). */
enum client_submit client_submit(const char *line);

/* ^C: while a reply is printed, drop the rest of it; a second one exits. */
void client_interrupt(void);

/* Restores the terminal through the front end and exits. */
NORET void client_exit(int status);

/* ---- Command table (commands.c) ---- */

enum cmd_expand_result {
  CMD_EXPAND_OK,
  CMD_EXPAND_EMPTY,     /* nothing but whitespace */
  CMD_EXPAND_UNKNOWN,   /* "No such command..." printed */
  CMD_EXPAND_AMBIGUOUS, /* "Ambiguous command..." printed */
};

/* Expands abbreviated keywords of @line. On CMD_EXPAND_OK *@out is a new
 * malloc'd string; error messages go to @msg. */
enum cmd_expand_result cmd_expand(const char *line, char **out, FILE *msg);

enum cmd_internal {
  CMD_INTERNAL_NONE,
  CMD_INTERNAL_QUIT,    /* quit, exit */
  CMD_INTERNAL_HELP,    /* help */
};

/* Whether an expanded line is handled by the client; the server would not
 * reply to these. */
enum cmd_internal cmd_internal(const char *expanded);

/* `?` help for the first @len bytes of @line: the command reached by the
 * words and the commands below it. */
void cmd_help(const char *line, size_t len, FILE *out);

/* TAB completion of the word that ends at @point. Returns the number of
 * candidates; when positive, *@insert is a malloc'd string to insert at
 * @point: the rest of the only candidate plus a space, or what all
 * candidates have in common (possibly ""). */
int cmd_complete(const char *line, size_t point, char **insert);

/* Lists the candidates of cmd_complete() with their help text. */
void cmd_list_completions(const char *line, size_t point, FILE *out);

#endif
