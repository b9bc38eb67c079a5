/*
 * DOC: birdc, the interactive control socket client
 *
 * GNU readline in callback mode, so the core's select() loop keeps watching
 * the socket while the user edits: TAB completes keywords from the command
 * table (a second TAB lists the candidates), `?` prints context help and
 * redisplays the line, history lives in memory and in ~/.birdc_history.
 * While a reply is printed the readline handler is removed; the prompt comes
 * back when the reply ends. Terminfo (ncurses) is used only where BIRD needs
 * the terminal: its size for the pager when the kernel does not know it, and
 * clr_eol to erase the "--More--" prompt.
 *
 * ^C at the prompt drops the line being edited; during a reply it drops the
 * rest of the reply, and a second ^C exits.
 *
 * Without a terminal on stdin birdc reads plain lines like birdcl, and its
 * output is byte for byte that of BIRD's birdc, whose readline still redraws
 * there: after the echo of a command that is sent comes "bird> " and its
 * erasure ("\r" + clr_eol), and at the end of input the last prompt is erased
 * instead of ended with "\n".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <readline/readline.h>
#include <readline/history.h>

#include "client/client.h"

/* Last: term.h defines macros with short lower-case names. */
#include <curses.h>
#include <term.h>

#define BIRDC_PROMPT "bird> "
#define BIRDC_HISTORY_FILE ".birdc_history"
#define BIRDC_HISTORY_SIZE 1000

/* owner: the only thread; the signal flags are written by handlers */
static struct {
  bool started;
  bool active;                  /* the readline handler is installed */
  bool have_terminfo;
  char *history;                /* path of the history file, or NULL */
  char *hidden_line;            /* line saved by birdc_hide() */
  int hidden_point;
} birdc;

static volatile sig_atomic_t birdc_sigint, birdc_sigwinch;

static void birdc_signal(int sig)
{
  if (sig == SIGINT)
    birdc_sigint = 1;
  else
    birdc_sigwinch = 1;
}

static void birdc_got_line(char *line)
{
  if (!line) {
    /* ^D on an empty line; readline has already moved to a new line */
    rl_callback_handler_remove();
    birdc.active = false;
    client_exit(0);
  }

  if (line[0])
    add_history(line);
  if (client_submit(line) == CLIENT_SUBMIT_SENT) {
    /* No prompt until the reply has ended. */
    rl_callback_handler_remove();
    birdc.active = false;
  }
  free(line);
}

/* TAB: complete the keyword at point; again: list the candidates. */
static int birdc_complete(int count UNUSED, int key UNUSED)
{
  bool again = rl_last_func == birdc_complete;
  char *insert;
  int n = cmd_complete(rl_line_buffer, rl_point, &insert);

  if (!n) {
    rl_ding();
    return 0;
  }
  if (insert[0])
    rl_insert_text(insert);
  free(insert);
  if (n == 1)
    return 0;

  if (!again) {
    rl_ding();
    return 0;
  }
  rl_crlf();
  cmd_list_completions(rl_line_buffer, rl_point, stdout);
  fflush(stdout);
  rl_on_new_line();
  return 0;
}

/* `?`: help for the words before point, then the line again. Inside a
 * string or [...] it is just a character. */
static int birdc_help(int count, int key UNUSED)
{
  bool in_string = false;
  int in_bracket = 0;

  if (count != 1)
    return rl_insert(count, '?');

  for (int i = 0; i < rl_point; i++) {
    if (rl_line_buffer[i] == '"')
      in_string = !in_string;
    else if (!in_string && rl_line_buffer[i] == '[')
      in_bracket++;
    else if (!in_string && rl_line_buffer[i] == ']')
      in_bracket--;
  }
  if (in_string || in_bracket > 0)
    return rl_insert(1, '?');

  /* Show the '?' where it was typed, as BIRD does, then take it back. */
  rl_insert_text("?");
  rl_redisplay();
  rl_crlf();
  cmd_help(rl_line_buffer, rl_point, stdout);
  fflush(stdout);
  rl_point--;
  rl_delete_text(rl_point, rl_point + 1);
  rl_on_new_line();
  return 0;
}

static void birdc_start(void)
{
  const char *home = getenv("HOME");
  struct sigaction sa = { .sa_handler = birdc_signal, .sa_flags = SA_RESTART };
  int err;

  rl_readline_name = "birdc";
  /* We take the signals ourselves; select() returns EINTR on them. */
  rl_catch_signals = 0;
  rl_catch_sigwinch = 0;
  rl_add_defun("bird-complete", birdc_complete, '\t');
  rl_add_defun("bird-help", birdc_help, '?');

  using_history();
  stifle_history(BIRDC_HISTORY_SIZE);
  if (home && home[0] && asprintf(&birdc.history, "%s/%s", home, BIRDC_HISTORY_FILE) >= 0)
    read_history(birdc.history);

  birdc.have_terminfo = setupterm(NULL, STDOUT_FILENO, &err) == OK;

  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGWINCH, &sa, NULL);
  birdc.started = true;
}

static void birdc_prompt(void)
{
  rl_callback_handler_install(BIRDC_PROMPT, birdc_got_line);
  birdc.active = true;
}

static void birdc_input(void)
{
  rl_callback_read_char();
}

static void birdc_hide(void)
{
  if (!birdc.active)
    return;
  birdc.hidden_point = rl_point;
  birdc.hidden_line = rl_copy_text(0, rl_end);
  rl_save_prompt();
  rl_replace_line("", 0);
  rl_redisplay();
}

static void birdc_reveal(void)
{
  if (!birdc.hidden_line)
    return;
  rl_restore_prompt();
  rl_replace_line(birdc.hidden_line, 0);
  rl_point = birdc.hidden_point;
  rl_redisplay();
  free(birdc.hidden_line);
  birdc.hidden_line = NULL;
}

static void birdc_poll(void)
{
  if (birdc_sigwinch) {
    birdc_sigwinch = 0;
    if (birdc.active)
      rl_resize_terminal();
  }
  if (birdc_sigint) {
    birdc_sigint = 0;
    if (!birdc.active) {
      client_interrupt();
      return;
    }
    rl_callback_sigcleanup();
    rl_free_line_state();
    rl_replace_line("", 0);
    rl_crlf();
    rl_on_new_line();
    rl_redisplay();
  }
}

static void birdc_cleanup(void)
{
  if (!birdc.started)
    return;
  if (birdc.active) {
    rl_callback_handler_remove();
    birdc.active = false;
  }
  if (birdc.history)
    write_history(birdc.history);
}

static void birdc_term_size(int *rows, int *cols)
{
  struct winsize ws;

  if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
    *rows = ws.ws_row;
    *cols = ws.ws_col;
  } else if (birdc.have_terminfo) {
    *rows = tigetnum("lines");
    *cols = tigetnum("cols");
  }
}

static int birdc_putc(int c)
{
  return putchar(c);
}

/* The terminal's clr_eol sequence, or NULL. */
static const char *birdc_clr_eol(void)
{
  const char *el = birdc.have_terminfo ? tigetstr("el") : NULL;
  return el && el != (char *) -1 ? el : NULL;
}

static void birdc_more_clear(void)
{
  const char *el = birdc_clr_eol();

  if (el) {
    putchar('\r');
    tputs(el, 1, birdc_putc);
  } else
    fputs("        \r", stdout);
}

/* ---- Without a terminal ---- */

/* Erases the prompt as readline does: clr_eol, or spaces over the prompt. */
static void birdc_pipe_erase(void)
{
  static bool tried;
  const char *el;
  int err;

  if (!tried) {
    birdc.have_terminfo = setupterm(NULL, STDOUT_FILENO, &err) == OK;
    tried = true;
  }
  el = birdc_clr_eol();
  putchar('\r');
  if (el)
    tputs(el, 1, birdc_putc);
  else
    printf("%*s\r", (int) strlen(BIRDC_PROMPT), "");
}

static void birdc_pipe_sent(void)
{
  fputs(BIRDC_PROMPT, stdout);
  birdc_pipe_erase();
}

static const struct client_ui birdc_pipe_ui = {
  .prompt = client_plain_prompt,
  .input = client_plain_input,
  .plain_sent = birdc_pipe_sent,
  .plain_eof = birdc_pipe_erase,
};

static const struct client_ui birdc_ui = {
  .start = birdc_start,
  .prompt = birdc_prompt,
  .input = birdc_input,
  .hide = birdc_hide,
  .reveal = birdc_reveal,
  .poll = birdc_poll,
  .cleanup = birdc_cleanup,
  .term_size = birdc_term_size,
  .more_clear = birdc_more_clear,
};

int main(int argc, char **argv)
{
  client_main(argc, argv, isatty(STDIN_FILENO) ? &birdc_ui : &birdc_pipe_ui);
}
