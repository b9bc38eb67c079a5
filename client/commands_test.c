/*
 * DOC: Unit tests of the client: command table and reply parsing
 *
 * Expansion, ambiguity, completion and `?` help against commands.def (the
 * expected help texts are what BIRD 2.0.12's birdc prints), and reply
 * handling fed with the exact byte sequences captured from BIRD 2 and 3
 * (shared/reference/bird-compat.md section 1), cut at every possible read
 * boundary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "client/client.h"

/* ---- helpers ---- */

struct capture {
  char *buf;
  size_t len;
  FILE *f;
};

static FILE *capture_open(struct capture *c)
{
  c->buf = NULL;
  c->len = 0;
  c->f = open_memstream(&c->buf, &c->len);
  assert_non_null(c->f);
  return c->f;
}

/* Closes the stream; the caller frees c->buf. */
static const char *capture_text(struct capture *c)
{
  fclose(c->f);
  return c->buf;
}

static void expect_expansion(const char *in, const char *want)
{
  struct capture msg;
  char *out = NULL;

  enum cmd_expand_result r = cmd_expand(in, &out, capture_open(&msg));
  const char *text = capture_text(&msg);
  if (r != CMD_EXPAND_OK || strcmp(out, want))
    fail_msg("expand '%s': result %d, got '%s', want '%s' (msg '%s')", in, r, out ? out : "(null)", want, text);
  assert_string_equal(text, "");
  free(out);
  free(msg.buf);
}

static void expect_failure(const char *in, enum cmd_expand_result want, const char *want_msg)
{
  struct capture msg;
  char *out = NULL;

  enum cmd_expand_result r = cmd_expand(in, &out, capture_open(&msg));
  const char *text = capture_text(&msg);
  if (r != want)
    fail_msg("expand '%s': result %d, want %d (out '%s')", in, r, want, out ? out : "(null)");
  assert_null(out);
  assert_string_equal(text, want_msg);
  free(msg.buf);
}

/* ---- expansion ---- */

static void test_expand_abbreviations(void **state)
{
  expect_expansion("sh ro co", "show route count");
  expect_expansion("conf ch", "configure check");
  expect_expansion("sh pro all", "show protocols all");
  expect_expansion("sh pro a bgp1", "show protocols all bgp1");
  expect_expansion("sh statu", "show status");
  expect_expansion("sh in su", "show interfaces summary");
  expect_expansion("q", "quit");
  expect_expansion("ev 1+2", "eval 1+2");
  expect_expansion("gr re", "graceful restart");
  expect_expansion("rel in p1", "reload in p1");
  expect_expansion("en all", "enable all");
  expect_expansion("conf so tim 30", "configure soft timeout 30");
  expect_expansion("mrt d ta master4 to \"x.mrt\"", "mrt dump table master4 to \"x.mrt\"");
  /* Separators stay as typed; leading blanks go. */
  expect_expansion("  sh\tro   co  ", "show\troute   count  ");
}

static void test_expand_keeps_arguments(void **state)
{
  expect_expansion("show route for 10.0.0.1", "show route for 10.0.0.1");
  expect_expansion("sh ro for 10.0.0.1 a", "show route for 10.0.0.1 all");
  expect_expansion("sh ro 10.0.0.0/8 c", "show route 10.0.0.0/8 count");
  expect_expansion("sh ro in 10.0.0.0/8 c", "show route in 10.0.0.0/8 count");
  expect_expansion("sh ro fo 2001:db8::/32 pri", "show route for 2001:db8::/32 primary");
  /* Arguments that look like abbreviations are names, not keywords. */
  expect_expansion("sh ro t t co", "show route table t count");
  expect_expansion("sh ro ta all pri", "show route table all primary");
  expect_expansion("sh ro export p co", "show route export p count");
  expect_expansion("sh ro exporte p", "show route exported p");
  expect_expansion("sh ro export table p.c co", "show route export table p.c count");
  expect_expansion("sh ro im table p.c s", "show route import table p.c stats");
  expect_expansion("sh ro pro static1 c", "show route protocol static1 count");
  expect_expansion("sh ro filter f1 st", "show route filter f1 stats");
  expect_expansion("sh ro filter { if net ~ [ 10.0.0.0/8+ ] then accept; reject; } co",
                   "show route filter { if net ~ [ 10.0.0.0/8+ ] then accept; reject; } count");
  /* where takes the rest of the line */
  expect_expansion("sh ro wh net.len > 8 && c", "show route where net.len > 8 && c");
  /* Without options, the first non-keyword ends expansion (as in BIRD). */
  expect_expansion("show protocols \"b*\"", "show protocols \"b*\"");
  expect_expansion("dis \"p*\" a", "disable \"p*\" a");
  expect_expansion("sh sym tab", "show symbols tab");
  expect_expansion("sh pro a \"x", "show protocols all \"x");
  expect_expansion("ev \"sh ro\"", "eval \"sh ro\"");
}

static void test_expand_errors(void **state)
{
  expect_failure("sh st", CMD_EXPAND_AMBIGUOUS,
                 "Ambiguous command, possible expansions are:\n"
                 "show status                                    Show router status\n"
                 "show static [<name>]                           Show details of static protocol\n");
  expect_failure("d", CMD_EXPAND_AMBIGUOUS,
                 "Ambiguous command, possible expansions are:\n"
                 "dump ...                                       Dump debugging information\n"
                 "disable (<protocol> | \"<pattern>\" | all) [message]  Disable protocol\n"
                 "debug ...                                      Control protocol debugging via BIRD logs\n"
                 "down                                           Shut the daemon down\n");
  /* "mrt" has no help line of its own, so BIRD lists mrtdump only */
  expect_failure("m", CMD_EXPAND_AMBIGUOUS,
                 "Ambiguous command, possible expansions are:\n"
                 "mrtdump ...                                    Control protocol debugging via MRTdump files\n");
  expect_failure("sh ro p x", CMD_EXPAND_AMBIGUOUS,
                 "Ambiguous command, possible expansions are:\n"
                 "show route preexport\n"
                 "show route protocol\n"
                 "show route primary\n");
  expect_failure("sh ro fil f1", CMD_EXPAND_AMBIGUOUS,
                 "Ambiguous command, possible expansions are:\n"
                 "show route filter\n"
                 "show route filtered\n");
  expect_failure("sh ro ex p", CMD_EXPAND_AMBIGUOUS,
                 "Ambiguous command, possible expansions are:\n"
                 "show route export\n"
                 "show route exported\n");

  const char *nsc = "No such command. Press `?' for help.\n";
  expect_failure("s", CMD_EXPAND_UNKNOWN, nsc);
  expect_failure("show", CMD_EXPAND_UNKNOWN, nsc);
  expect_failure("foo", CMD_EXPAND_UNKNOWN, nsc);
  expect_failure("mrt", CMD_EXPAND_UNKNOWN, nsc);
  expect_failure("graceful", CMD_EXPAND_UNKNOWN, nsc);
  expect_failure("\"show\" status", CMD_EXPAND_UNKNOWN, nsc);
  expect_failure("", CMD_EXPAND_EMPTY, "");
  expect_failure(" \t ", CMD_EXPAND_EMPTY, "");
}

static void test_internal(void **state)
{
  assert_int_equal(cmd_internal("quit"), CMD_INTERNAL_QUIT);
  assert_int_equal(cmd_internal("exit now"), CMD_INTERNAL_QUIT);
  assert_int_equal(cmd_internal("help"), CMD_INTERNAL_HELP);
  assert_int_equal(cmd_internal("show status"), CMD_INTERNAL_NONE);
  assert_int_equal(cmd_internal("eval quit"), CMD_INTERNAL_NONE);
}

/* ---- completion and help ---- */

static const char show_listing[] =
  "show status                                    Show router status\n"
  "show memory                                    Show memory usage\n"
  "show protocols [<protocol> | \"<pattern>\"]      Show routing protocols\n"
  "show interfaces                                Show network interfaces\n"
  "show route ...                                 Show routing table\n"
  "show symbols ...                               Show all known symbolic names\n"
  "show bfd ...                                   Show information about BFD protocol\n"
  "show babel ...                                 Show information about Babel protocol\n"
  "show ospf ...                                  Show information about OSPF protocol\n"
  "show rip ...                                   Show information about RIP protocol\n"
  "show static [<name>]                           Show details of static protocol\n";

static void expect_completion(const char *line, int want_n, const char *want_insert)
{
  char *insert = NULL;
  int n = cmd_complete(line, strlen(line), &insert);

  if (n != want_n || (want_insert && (!insert || strcmp(insert, want_insert))))
    fail_msg("complete '%s': %d '%s', want %d '%s'", line, n, insert ? insert : "(null)", want_n,
             want_insert ? want_insert : "(null)");
  free(insert);
}

static void test_complete(void **state)
{
  expect_completion("", 18, "");
  expect_completion("sh", 1, "ow ");
  expect_completion("show ", 11, "");
  expect_completion("show ro", 1, "ute ");
  expect_completion("show st", 2, "at");
  expect_completion("sh ro co", 1, "unt ");
  expect_completion("show route ex", 2, "port");
  expect_completion("show route fi", 2, "lter");
  expect_completion("show route ", 16, "");
  expect_completion("show protocols ", 1, "all ");
  expect_completion("configure so", 1, "ft ");
  /* argument positions take no keyword */
  expect_completion("show route table ", 0, NULL);
  expect_completion("show route table m", 0, NULL);
  expect_completion("show route where n", 0, NULL);
  expect_completion("show protocols all x", 0, NULL);
  expect_completion("show route for 10.0.0.1 c", 1, "ount ");
  expect_completion("show \"ro", 0, NULL);
  expect_completion("sh st c", 0, NULL);
  expect_completion("xyz", 0, NULL);
}

static void test_list_completions(void **state)
{
  struct capture c;

  cmd_list_completions("show ", 5, capture_open(&c));
  assert_string_equal(capture_text(&c), show_listing);
  free(c.buf);

  cmd_list_completions("show route ex", 13, capture_open(&c));
  assert_string_equal(capture_text(&c), "show route export\nshow route exported\n");
  free(c.buf);

  cmd_list_completions("m", 1, capture_open(&c));
  assert_string_equal(capture_text(&c),
                      "mrtdump ...                                    Control protocol debugging via MRTdump files\n"
                      "mrt ...\n");
  free(c.buf);
}

static void expect_help(const char *line, const char *want)
{
  struct capture c;

  cmd_help(line, strlen(line), capture_open(&c));
  assert_string_equal(capture_text(&c), want);
  free(c.buf);
}

static void test_help(void **state)
{
  /* What BIRD's birdcl prints for these lines ending in '?' */
  expect_help("show ?", show_listing);
  expect_help("sh st?", show_listing);
  expect_help("show route for 1.2.3.4 ?",
              "show route [<prefix>|for <prefix>|for <ip>] [table <t>] [(import|export) table <p>.<c>] "
              "[filter <f>|where <cond>] [all] [primary] [filtered] [(export|preexport|noexport) <p>] "
              "[protocol <p>] [stats|count]  Show routing table\n");
  expect_help("sh pr a ?", "show protocols all [<protocol> | \"<pattern>\"]  Show routing protocol details\n");
  expect_help("configure soft ?",
              "configure soft [\"<file>\"] [timeout [<sec>]]    Reload configuration and ignore changes in filters\n"
              "configure soft timeout [<sec>]                 Reload configuration with undo timeout\n");
  expect_help("re ?",
              "restart (<protocol> | \"<pattern>\" | all) [message]  Restart protocol\n"
              "reload <protocol> | \"<pattern>\" | all          Reload protocol\n"
              "restrict                                       Restrict current CLI session to safe commands\n");
  expect_help("graceful ?", "graceful restart                               Shut the daemon down for graceful restart\n");
  expect_help("mrt ?",
              "mrt dump [table <name>|\"<pattern>\"] [to \"<file>\"] [filter <filter>|where <where filter>]   "
              "Save MRT Table Dump into a file\n");

  struct capture c;
  cmd_help("", 0, capture_open(&c));
  const char *top = capture_text(&c);
  assert_non_null(strstr(top, "quit                                           Quit the client\n"));
  assert_non_null(strstr(top, "graceful restart                               Shut the daemon down for graceful restart\n"));
  assert_null(strstr(top, "mrt dump"));
  free(c.buf);
}

/* ---- replies ---- */

struct session {
  struct client_reply reply;
  struct client_rbuf rbuf;
  struct capture out;
  int ends;                     /* replies ended so far */
  int status;                   /* exit code after the last one */
};

static void session_line(void *ctx, const char *line, size_t len)
{
  struct session *s = ctx;
  bool end;

  client_reply_line(&s->reply, line, len, s->out.f, &end);
  if (end) {
    s->ends++;
    s->status = client_reply_status(&s->reply);
  }
}

/* Feeds @data in pieces of @step bytes; returns the printed text. */
static char *session_run(const char *data, size_t len, size_t step, bool verbose, int *ends, int *status)
{
  struct session s = { .reply = { .verbose = verbose } };

  capture_open(&s.out);
  for (size_t i = 0; i < len; i += step)
    client_rbuf_feed(&s.rbuf, data + i, MIN(step, len - i), session_line, &s);
  client_rbuf_free(&s.rbuf);
  capture_text(&s.out);
  *ends = s.ends;
  *status = s.status;
  return s.out.buf;
}

/* Checks the output for every read size from 1 byte to all at once. */
static void expect_session(const char *data, bool verbose, const char *want, int want_ends, int want_status)
{
  size_t len = strlen(data);

  for (size_t step = 1; step <= len; step++) {
    int ends, status;
    char *out = session_run(data, len, step, verbose, &ends, &status);
    if (strcmp(out, want) || ends != want_ends || status != want_status)
      fail_msg("read size %zu: ends %d status %d output:\n%s\nwant ends %d status %d output:\n%s", step, ends, status,
               out, want_ends, want_status, want);
    free(out);
  }
}

static void test_line_parse(void **state)
{
  struct client_line l;

  client_line_parse("1007-8 of 8 routes", 18, &l);
  assert_int_equal(l.kind, CLIENT_LINE_CODED);
  assert_int_equal(l.code, 1007);
  assert_false(l.last);
  assert_int_equal(l.text_len, 13);
  assert_memory_equal(l.text, "8 of 8 routes", 13);

  client_line_parse("0014 Total", 10, &l);
  assert_int_equal(l.kind, CLIENT_LINE_CODED);
  assert_int_equal(l.code, 14);
  assert_true(l.last);

  client_line_parse("0000 ", 5, &l);
  assert_int_equal(l.kind, CLIENT_LINE_CODED);
  assert_int_equal(l.code, 0);
  assert_true(l.last);
  assert_int_equal(l.text_len, 0);

  client_line_parse(" 0 of 0", 7, &l);
  assert_int_equal(l.kind, CLIENT_LINE_CONT);
  assert_int_equal(l.text_len, 6);

  client_line_parse("+Restarting protocol idle1", 26, &l);
  assert_int_equal(l.kind, CLIENT_LINE_ASYNC);
  assert_memory_equal(l.text, "Restarting", 10);

  client_line_parse("0000", 4, &l);
  assert_int_equal(l.kind, CLIENT_LINE_INVALID);
  client_line_parse("12ab-x", 6, &l);
  assert_int_equal(l.kind, CLIENT_LINE_INVALID);
  client_line_parse("1007x", 5, &l);
  assert_int_equal(l.kind, CLIENT_LINE_INVALID);
  client_line_parse("", 0, &l);
  assert_int_equal(l.kind, CLIENT_LINE_INVALID);
}

static void test_reply_b3_route_count(void **state)
{
  /* Greeting, then "show route count", as od -c showed them (B3). */
  static const char wire[] =
    "0001 BIRD 3.3.2 ready.\n"
    "1007-8 of 8 routes for 7 networks in table master4\n"
    " 0 of 0 routes for 0 networks in table master6\n"
    " 2 of 2 routes for 2 networks in table r4\n"
    " 1 of 1 routes for 1 networks in table at\n"
    "0014 Total: 11 of 11 routes for 10 networks in 4 tables\n";

  expect_session(wire, false,
                 "BIRD 3.3.2 ready.\n"
                 "8 of 8 routes for 7 networks in table master4\n"
                 "0 of 0 routes for 0 networks in table master6\n"
                 "2 of 2 routes for 2 networks in table r4\n"
                 "1 of 1 routes for 1 networks in table at\n"
                 "Total: 11 of 11 routes for 10 networks in 4 tables\n",
                 2, 0);
  expect_session(wire, true,
                 "0001 BIRD 3.3.2 ready.\n"
                 "1007-8 of 8 routes for 7 networks in table master4\n"
                 "     0 of 0 routes for 0 networks in table master6\n"
                 "     2 of 2 routes for 2 networks in table r4\n"
                 "     1 of 1 routes for 1 networks in table at\n"
                 "0014 Total: 11 of 11 routes for 10 networks in 4 tables\n",
                 2, 0);
}

static void test_reply_b2_status(void **state)
{
  /* B2 "show status", python repr */
  static const char wire[] =
    "1000-BIRD 2.0.12\n1011-Router ID is 10.255.0.2\n Hostname is vm\n"
    " Current server time is 2026-11-21 19:05:29.669\n Last reboot on ... \n"
    " Last reconfiguration on ...\n0013 Daemon is up and running\n";

  expect_session(wire, false,
                 "BIRD 2.0.12\nRouter ID is 10.255.0.2\nHostname is vm\n"
                 "Current server time is 2026-11-21 19:05:29.669\nLast reboot on ... \n"
                 "Last reconfiguration on ...\nDaemon is up and running\n",
                 1, 0);
}

static void test_reply_code_changes(void **state)
{
  /* A route with attributes: the code changes inside one reply, tabs kept,
   * "0000 " ends it and prints nothing. */
  static const char wire[] =
    "1007-Table master4:\n"
    " 10.9.0.0/24          unreachable [static4 19:06:24.337] * (200)\n"
    "1008-\tType: static univ\n"
    "1007-                     unicast [peer3 19:06:41.321] (100) [i]\n"
    " \tvia 192.0.2.73 on eth0\n"
    "1008-\tType: BGP univ\n"
    "1012-\tBGP.origin: IGP\n"
    " \tBGP.as_path: \n"
    "0000 \n";

  expect_session(wire, false,
                 "Table master4:\n"
                 "10.9.0.0/24          unreachable [static4 19:06:24.337] * (200)\n"
                 "\tType: static univ\n"
                 "                     unicast [peer3 19:06:41.321] (100) [i]\n"
                 "\tvia 192.0.2.73 on eth0\n"
                 "\tType: BGP univ\n"
                 "\tBGP.origin: IGP\n"
                 "\tBGP.as_path: \n",
                 1, 0);
  expect_session(wire, true,
                 "1007-Table master4:\n"
                 "     10.9.0.0/24          unreachable [static4 19:06:24.337] * (200)\n"
                 "1008-\tType: static univ\n"
                 "1007-                     unicast [peer3 19:06:41.321] (100) [i]\n"
                 "     \tvia 192.0.2.73 on eth0\n"
                 "1008-\tType: BGP univ\n"
                 "1012-\tBGP.origin: IGP\n"
                 "     \tBGP.as_path: \n",
                 1, 0);
}

static void test_reply_exit_codes(void **state)
{
  expect_session("8001 Network not found\n", false, "Network not found\n", 1, 1);
  expect_session("9001 syntax error, unexpected CF_SYM_UNDEFINED\n", false,
                 "syntax error, unexpected CF_SYM_UNDEFINED\n", 1, 1);
  expect_session("0016 Access restricted\n8007 Access denied\n", false, "Access restricted\nAccess denied\n", 2, 1);
  expect_session("1010 MYAS    \tconstant\n", false, "MYAS    \tconstant\n", 1, 0);
  expect_session("0002-Reading configuration from b2.conf\n0020 Configuration OK\n", false,
                 "Reading configuration from b2.conf\nConfiguration OK\n", 1, 0);
  /* 7999 is still success, 8000 is not */
  expect_session("7999 x\n", false, "x\n", 1, 0);
  expect_session("8000 Reply too long\n", false, "Reply too long\n", 1, 1);
  /* the status is that of the last line, whatever came before */
  expect_session("8003-No protocols match\n0000 \n", false, "No protocols match\n", 1, 0);
  /* B3 "reload bgp": two complete replies */
  expect_session("0015-peer2.ipv4: reloading\n0000 \n0015-peer2.ipv4: reloading from table\n0000 \n", false,
                 "peer2.ipv4: reloading\npeer2.ipv4: reloading from table\n", 2, 0);
  /* an unfinished reply never ends */
  expect_session("1007-partial\n partial2\n", false, "partial\npartial2\n", 0, 0);
}

static void test_reply_async_and_junk(void **state)
{
  expect_session("+Restarting protocol idle1\n1002-a\n+Config timeout expired, starting undo\n b\n0000 \n", false,
                 ">>> Restarting protocol idle1\na\n>>> Config timeout expired, starting undo\nb\n", 1, 0);
  expect_session("1000-a\n\n12\nx1007-y\n0000 \n", false, "a\n??? <>\n??? <12>\n??? <x1007-y>\n", 1, 0);
}

static void test_reply_long_line(void **state)
{
  size_t len = CLIENT_LINE_MAX + 5000;
  char *wire = malloc(len + 16);
  int ends, status;

  /* " xxxx...x\n0000 \n": truncated to CLIENT_LINE_MAX, still one line */
  wire[0] = ' ';
  memset(wire + 1, 'x', len - 1);
  strcpy(wire + len, "\n0000 \n");

  char *out = session_run(wire, strlen(wire), 4096, false, &ends, &status);
  assert_int_equal(ends, 1);
  assert_int_equal(strlen(out), CLIENT_LINE_MAX - 1 + 1);
  assert_int_equal(out[CLIENT_LINE_MAX - 1], '\n');
  free(out);
  free(wire);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_expand_abbreviations),
    cmocka_unit_test(test_expand_keeps_arguments),
    cmocka_unit_test(test_expand_errors),
    cmocka_unit_test(test_internal),
    cmocka_unit_test(test_complete),
    cmocka_unit_test(test_list_completions),
    cmocka_unit_test(test_help),
    cmocka_unit_test(test_line_parse),
    cmocka_unit_test(test_reply_b3_route_count),
    cmocka_unit_test(test_reply_b2_status),
    cmocka_unit_test(test_reply_code_changes),
    cmocka_unit_test(test_reply_exit_codes),
    cmocka_unit_test(test_reply_async_and_junk),
    cmocka_unit_test(test_reply_long_line),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
