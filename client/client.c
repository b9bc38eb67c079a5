/*
 * DOC: Client core: arguments, control socket, replies, plain input
 *
 * One session is one connection: the server greets with "0001 ...", then
 * answers each command line with a reply that ends at the first line whose
 * fifth byte is a space ("DDDD text"). The state machine is
 *
 *   GREETING --(-r)--> RESTRICT --> BUSY (one-shot command) --> exit
 *                                   IDLE <--> BUSY (interactive)
 *
 * Input is read only while IDLE, so a command never overtakes the reply of
 * the previous one. Server lines are printed one by one as they arrive and
 * stdout is flushed after every read(), so a million-line reply streams.
 * Lines arriving while IDLE (asynchronous "+" lines, or a second reply the
 * server volunteers) are printed between the front end's hide() and
 * reveal() so that they do not garble the line being edited.
 *
 * Output and exit codes follow BIRD 2.0.12's birdc/birdcl, which also print
 * the greeting in one-shot mode and, with -r, the "Access restricted" reply.
 * The pager ("--More--") works as in BIRD when stdin and stdout are
 * terminals: space = next page, enter = next line, q = skip the rest.
 *
 * Deliberate differences from BIRD 2.0.12's clients: option words of
 * "show route" and "mrt dump" are expanded too ("sh ro co"); `help` lists
 * the commands after BIRD's one-line hint; one-shot "quit" and "help" are
 * handled locally (BIRD sends them and waits forever: the server never
 * answers them) and one-shot "... ?" prints help (BIRD sends it and gets a
 * syntax error); TAB twice lists the candidates; a line is "DDDD-"/"DDDD " only with four digits
 * (BIRD's sscanf also takes "12x4-"); lines longer than CLIENT_LINE_MAX are
 * cut there (BIRD's client garbles lines longer than its 4 KiB buffer).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "client/client.h"

/* PATH_CONTROL_SOCKET wins; the build defines PATH_CONTROL_SOCKET_DEFAULT
 * from runstatedir for the daemon and the clients alike. */
#ifndef PATH_CONTROL_SOCKET
#ifdef PATH_CONTROL_SOCKET_DEFAULT
#define PATH_CONTROL_SOCKET PATH_CONTROL_SOCKET_DEFAULT
#else
#define PATH_CONTROL_SOCKET "/run/bird/bird.ctl"
#endif
#endif

/* ---- Reply lines ---- */

void client_line_parse(const char *line, size_t len, struct client_line *l)
{
  *l = (struct client_line) { .kind = CLIENT_LINE_INVALID, .text = line, .text_len = len };

  if (len >= 1 && (line[0] == '+' || line[0] == ' ')) {
    l->kind = line[0] == '+' ? CLIENT_LINE_ASYNC : CLIENT_LINE_CONT;
    l->text = line + 1;
    l->text_len = len - 1;
    return;
  }

  if (len < 5 || (line[4] != ' ' && line[4] != '-'))
    return;
  int code = 0;
  for (int i = 0; i < 4; i++) {
    if (line[i] < '0' || line[i] > '9')
      return;
    code = code * 10 + (line[i] - '0');
  }
  l->kind = CLIENT_LINE_CODED;
  l->code = code;
  l->last = line[4] == ' ';
  l->text = line + 5;
  l->text_len = len - 5;
}

static size_t client_emit(FILE *out, const char *pre, const char *s, size_t len, const char *post)
{
  fputs(pre, out);
  fwrite(s, 1, len, out);
  fputs(post, out);
  return strlen(pre) + len + strlen(post);
}

size_t client_reply_line(struct client_reply *r, const char *line, size_t len, FILE *out, bool *end)
{
  struct client_line l;
  size_t printed = 0;

  client_line_parse(line, len, &l);
  *end = false;

  switch (l.kind) {
  case CLIENT_LINE_ASYNC:
    if (!r->skip)
      printed = client_emit(out, ">>> ", l.text, l.text_len, "\n");
    break;
  case CLIENT_LINE_CONT:
    if (!r->skip)
      printed = client_emit(out, r->verbose ? "     " : "", l.text, l.text_len, "\n");
    break;
  case CLIENT_LINE_CODED:
    /* Code 0 only terminates a reply ("0000 "); birdc never shows it. */
    if (l.code && !r->skip)
      printed = r->verbose ? client_emit(out, "", line, len, "\n") : client_emit(out, "", l.text, l.text_len, "\n");
    r->last_code = l.code;
    if (l.last) {
      r->skip = false;
      *end = true;
    }
    break;
  case CLIENT_LINE_INVALID:
    if (!r->skip)
      printed = client_emit(out, "??? <", line, len, ">\n");
    break;
  }
  return printed;
}

/* ---- Line splitting ---- */

static void client_rbuf_append(struct client_rbuf *rb, const char *data, size_t n)
{
  if (rb->len + n > CLIENT_LINE_MAX) {
    n = CLIENT_LINE_MAX - rb->len;
    rb->overflow = true;
  }
  if (rb->len + n > rb->cap) {
    size_t cap = MAX(rb->cap * 2, rb->len + n);
    char *b = realloc(rb->buf, MIN(cap, (size_t) CLIENT_LINE_MAX));
    if (!b) {
      fputs("Out of memory\n", stderr);
      exit(1);
    }
    rb->buf = b;
    rb->cap = MIN(cap, (size_t) CLIENT_LINE_MAX);
  }
  memcpy(rb->buf + rb->len, data, n);
  rb->len += n;
}

void client_rbuf_feed(struct client_rbuf *rb, const char *data, size_t n, client_line_fn fn, void *ctx)
{
  while (n) {
    const char *nl = memchr(data, '\n', n);
    size_t chunk = nl ? (size_t) (nl - data) : n;

    if (nl && !rb->len && !rb->overflow && chunk <= CLIENT_LINE_MAX) {
      /* A whole line inside this read: no copy. */
      fn(ctx, data, chunk);
    } else {
      if (!rb->overflow)
        client_rbuf_append(rb, data, chunk);
      if (nl) {
        fn(ctx, rb->buf, rb->len);
        rb->len = 0;
        rb->overflow = false;
      }
    }

    if (!nl)
      return;
    data += chunk + 1;
    n -= chunk + 1;
  }
}

void client_rbuf_free(struct client_rbuf *rb)
{
  free(rb->buf);
  *rb = (struct client_rbuf) { 0 };
}

/* ---- Session ---- */

enum client_state {
  CLIENT_GREETING,      /* waiting for "0001 BIRD ... ready." */
  CLIENT_RESTRICT,      /* -r: waiting for "0016 Access restricted" */
  CLIENT_BUSY,          /* a command was sent, its reply is coming */
  CLIENT_IDLE,          /* waiting for the user */
};

/* owner: the only thread */
static struct {
  const struct client_ui *ui;
  const char *server_path;
  char *init_cmd;               /* one-shot command, or NULL */
  bool restricted;
  bool interactive;             /* stdin is a terminal, no one-shot command */
  bool pager;                   /* ... and stdout is a terminal too */
  int fd;
  enum client_state state;
  struct client_rbuf rbuf;
  struct client_reply reply;
  bool hidden;                  /* ui->hide() is in effect */
  int num_lines, term_rows, term_cols;
  bool interrupted;             /* ^C seen during this reply */
} client = { .fd = -1 };

void client_exit(int status)
{
  fflush(stdout);
  if (client.ui && client.ui->cleanup)
    client.ui->cleanup();
  exit(status);
}

static NORET PRINTF_LIKE(1, 2) void client_die(const char *fmt, ...)
{
  va_list args;

  fflush(stdout);
  if (client.ui && client.ui->cleanup)
    client.ui->cleanup();
  va_start(args, fmt);
  vfprintf(stderr, fmt, args);
  va_end(args);
  fputc('\n', stderr);
  exit(1);
}

static NORET void client_usage(const char *argv0)
{
  fprintf(stderr, "Usage: %s [-s <control-socket>] [-v] [-r] [-l]\n", argv0);
  exit(1);
}

static void client_parse_args(int argc, char **argv)
{
  bool server_changed = false;
  int c;

  client.server_path = PATH_CONTROL_SOCKET;
  while ((c = getopt(argc, argv, "s:vrl")) >= 0)
    switch (c) {
    case 's':
      client.server_path = optarg;
      server_changed = true;
      break;
    case 'v':
      client.reply.verbose = true;
      break;
    case 'r':
      client.restricted = true;
      break;
    case 'l':
      /* The default socket's name, in the current directory. */
      if (!server_changed) {
        const char *slash = strrchr(client.server_path, '/');
        if (slash)
          client.server_path = slash + 1;
      }
      break;
    default:
      client_usage(argv[0]);
    }

  if (optind < argc) {
    size_t len = 0;
    for (int i = optind; i < argc; i++)
      len += strlen(argv[i]) + 1;
    client.init_cmd = malloc(len);
    if (!client.init_cmd)
      client_die("Out of memory");
    client.init_cmd[0] = 0;
    for (int i = optind; i < argc; i++) {
      if (i > optind)
        strcat(client.init_cmd, " ");
      strcat(client.init_cmd, argv[i]);
    }
  }
}

static void client_connect(void)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };

  if (strlen(client.server_path) >= sizeof(sa.sun_path))
    client_die("Unable to connect to server control socket (%s): %s", client.server_path, strerror(ENAMETOOLONG));
  strcpy(sa.sun_path, client.server_path);

  client.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (client.fd < 0)
    client_die("Cannot create socket: %s", strerror(errno));
  if (connect(client.fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
    client_die("Unable to connect to server control socket (%s): %s", client.server_path, strerror(errno));
}

static void client_send(const char *cmd)
{
  size_t len = strlen(cmd);
  char *buf = malloc(len + 1);

  if (!buf)
    client_die("Out of memory");
  memcpy(buf, cmd, len);
  buf[len++] = '\n';

  for (size_t done = 0; done < len;) {
    ssize_t n = send(client.fd, buf + done, len - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      free(buf);
      client_die("Server write error: %s", strerror(errno));
    }
    done += n;
  }
  free(buf);
}

static void client_term_size(void)
{
  struct winsize ws;

  client.term_rows = client.term_cols = 0;
  if (client.ui && client.ui->term_size)
    client.ui->term_size(&client.term_rows, &client.term_cols);
  else if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws)) {
    client.term_rows = ws.ws_row;
    client.term_cols = ws.ws_col;
  }
  if (client.term_rows <= 0)
    client.term_rows = 24;
  if (client.term_cols <= 0)
    client.term_cols = 80;
}

static void client_start_command(const char *cmd)
{
  client_send(cmd);
  client.state = CLIENT_BUSY;
  client.interrupted = false;
  if (client.pager) {
    client_term_size();
    client.num_lines = 2;
  }
}

/* Prints the top-level commands: what `help` shows. */
static void client_help(void)
{
  puts("Press `?' for context sensitive help.");
  cmd_help("", 0, stdout);
}

enum client_submit client_submit(const char *line)
{
  char *cmd;

  switch (cmd_expand(line, &cmd, stdout)) {
  case CMD_EXPAND_EMPTY:
    return CLIENT_SUBMIT_LOCAL;
  case CMD_EXPAND_UNKNOWN:
  case CMD_EXPAND_AMBIGUOUS:
    return CLIENT_SUBMIT_ERROR;
  case CMD_EXPAND_OK:
    break;
  }

  switch (cmd_internal(cmd)) {
  case CMD_INTERNAL_QUIT:
    free(cmd);
    client_exit(0);
  case CMD_INTERNAL_HELP:
    free(cmd);
    client_help();
    return CLIENT_SUBMIT_LOCAL;
  case CMD_INTERNAL_NONE:
    break;
  }

  client_start_command(cmd);
  free(cmd);
  return CLIENT_SUBMIT_SENT;
}

/* A line whose last non-blank character is '?' asks for help. */
static bool client_wants_help(const char *line)
{
  size_t len = strlen(line);

  while (len && (line[len - 1] == ' ' || line[len - 1] == '\t'))
    len--;
  return len && line[len - 1] == '?';
}

void client_interrupt(void)
{
  if (client.state != CLIENT_BUSY)
    return;
  if (client.interrupted)
    client_exit(1);
  client.interrupted = true;
  client.reply.skip = true;
  /* The terminal echoed "^C"; the prompt comes on a line of its own. */
  putchar('\n');
  fflush(stdout);
}

/* ---- Pager ---- */

static void client_more(void)
{
  struct termios saved, raw;
  bool have_tty = !tcgetattr(STDIN_FILENO, &saved);
  char c;

  fputs("--More--\r", stdout);
  fflush(stdout);

  if (have_tty) {
    raw = saved;
    raw.c_lflag &= ~(ICANON | ECHO | ISIG);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    tcsetattr(STDIN_FILENO, TCSANOW, &raw);
  }

  for (;;) {
    ssize_t n = read(STDIN_FILENO, &c, 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0 || c == 'q' || c == 3 /* ^C */) {
      client.reply.skip = true;
      break;
    }
    if (c == ' ') {
      client.num_lines = 2;
      break;
    }
    if (c == '\n' || c == '\r') {
      client.num_lines--;
      break;
    }
  }

  if (have_tty)
    tcsetattr(STDIN_FILENO, TCSANOW, &saved);
  if (client.ui && client.ui->more_clear)
    client.ui->more_clear();
  else
    fputs("        \r", stdout);
  fflush(stdout);
}

static void client_count_lines(size_t printed)
{
  /* Rows taken by the line, its '\n' excluded. */
  size_t len = printed > 1 ? printed - 1 : 1;
  client.num_lines += (len + client.term_cols - 1) / client.term_cols;
  if (client.num_lines >= client.term_rows)
    client_more();
}

/* ---- Replies ---- */

static void client_run_init_cmd(void)
{
  const char *cmd = client.init_cmd;

  if (client_wants_help(cmd)) {
    cmd_help(cmd, strlen(cmd), stdout);
    client_exit(0);
  }
  switch (client_submit(cmd)) {
  case CLIENT_SUBMIT_SENT:
    return;
  case CLIENT_SUBMIT_LOCAL:
    /* help; an empty command is as unknown to BIRD as any other. */
    if (!cmd[strspn(cmd, " \t\r\n\v\f")]) {
      puts("No such command. Press `?' for help.");
      client_exit(1);
    }
    client_exit(0);
  case CLIENT_SUBMIT_ERROR:
    client_exit(1);
  }
}

static void client_begin_session(void)
{
  if (client.init_cmd) {
    client_run_init_cmd();
    return;
  }
  client.state = CLIENT_IDLE;
  if (client.ui->start)
    client.ui->start();
  if (client.ui->prompt)
    client.ui->prompt();
}

static void client_reply_done(void)
{
  switch (client.state) {
  case CLIENT_GREETING:
    if (client.restricted) {
      client_send("restrict");
      client.state = CLIENT_RESTRICT;
      return;
    }
    client_begin_session();
    return;
  case CLIENT_RESTRICT:
    client_begin_session();
    return;
  case CLIENT_BUSY:
    if (client.init_cmd)
      client_exit(client_reply_status(&client.reply));
    client.state = CLIENT_IDLE;
    if (client.ui->prompt)
      client.ui->prompt();
    return;
  case CLIENT_IDLE:
    /* The end of a reply nobody asked for. */
    return;
  }
}

static void client_got_line(void *ctx, const char *line, size_t len)
{
  bool end;

  if (client.state == CLIENT_IDLE && !client.hidden && client.ui->hide) {
    client.ui->hide();
    client.hidden = true;
  }

  size_t printed = client_reply_line(&client.reply, line, len, stdout, &end);
  if (printed && client.pager && client.state == CLIENT_BUSY)
    client_count_lines(printed);
  if (end)
    client_reply_done();
}

static void client_server_read(void)
{
  static char buf[65536];
  ssize_t n = read(client.fd, buf, sizeof(buf));

  if (n < 0) {
    if (errno == EINTR || errno == EAGAIN)
      return;
    client_die("Server read error: %s", strerror(errno));
  }
  if (n == 0)
    client_die("Connection closed by server");

  client_rbuf_feed(&client.rbuf, buf, n, client_got_line, NULL);
  fflush(stdout);
  if (client.hidden) {
    client.hidden = false;
    if (client.ui->reveal)
      client.ui->reveal();
  }
}

void client_main(int argc, char **argv, const struct client_ui *ui)
{
  client.ui = ui;
  client_parse_args(argc, argv);
  client.interactive = !client.init_cmd && isatty(STDIN_FILENO);
  client.pager = client.interactive && isatty(STDOUT_FILENO);

  /* Plain input reads stdin with fgets, but only when select() says so:
   * no stdio read-ahead may hide a pending line from select(). */
  setvbuf(stdin, NULL, _IONBF, 0);

  client_connect();
  client.state = CLIENT_GREETING;

  for (;;) {
    fd_set rd;
    bool want_input = client.state == CLIENT_IDLE && ui->input;

    if (ui->poll)
      ui->poll();

    FD_ZERO(&rd);
    FD_SET(client.fd, &rd);
    if (want_input)
      FD_SET(STDIN_FILENO, &rd);

    if (select(client.fd + 1, &rd, NULL, NULL, NULL) < 0) {
      if (errno == EINTR)
        continue;
      client_die("select: %s", strerror(errno));
    }

    if (FD_ISSET(client.fd, &rd))
      client_server_read();
    if (want_input && client.state == CLIENT_IDLE && FD_ISSET(STDIN_FILENO, &rd))
      ui->input();
  }
}

/* ---- Plain front end (birdcl, birdc without a terminal) ---- */

void client_plain_prompt(void)
{
  fputs("bird> ", stdout);
  fflush(stdout);
}

/* Reads one line of any length; NULL at end of input. */
static char *client_read_line(void)
{
  char chunk[1024];
  char *line = NULL;
  size_t len = 0;

  while (fgets(chunk, sizeof(chunk), stdin)) {
    size_t n = strlen(chunk);
    char *l = realloc(line, len + n + 1);
    if (!l)
      client_die("Out of memory");
    line = l;
    memcpy(line + len, chunk, n + 1);
    len += n;
    if (line[len - 1] == '\n')
      break;
  }
  if (line && len && line[len - 1] == '\n')
    line[--len] = 0;
  return line;
}

void client_plain_input(void)
{
  char *line = client_read_line();

  if (!line) {
    if (client.ui->plain_eof)
      client.ui->plain_eof();
    else
      putchar('\n');
    client_exit(0);
  }

  /* Without a terminal nothing shows what was typed; BIRD echoes it. */
  if (!isatty(STDIN_FILENO))
    printf("%s\n", line);

  if (client_wants_help(line)) {
    cmd_help(line, strlen(line), stdout);
    client_plain_prompt();
  } else if (client_submit(line) != CLIENT_SUBMIT_SENT)
    client_plain_prompt();
  else if (client.ui->plain_sent)
    client.ui->plain_sent();
  fflush(stdout);
  free(line);
}

const struct client_ui client_plain_ui = {
  .prompt = client_plain_prompt,
  .input = client_plain_input,
};
