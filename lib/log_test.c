/*
 * Unit tests for lib/log.c: line format, class filtering, file rotation,
 * switching destinations, rate limiting and logging from several threads.
 * Everything is logged into files under a temporary directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/log.h"

#define TIME_RE "[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}"

static char tmpdir[64];
static int file_no;

struct lines {
  char **v;
  uint n;
  size_t bytes;
  int ends_with_newline;
};

static void
lines_free(struct lines *l)
{
  for (uint i = 0; i < l->n; i++)
    free(l->v[i]);
  free(l->v);
  memset(l, 0, sizeof(*l));
}

static void
read_lines(const char *path, struct lines *l)
{
  memset(l, 0, sizeof(*l));
  l->ends_with_newline = 1;
  FILE *f = fopen(path, "r");
  if (!f)
    return;
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, f)) > 0)
  {
    l->bytes += len;
    l->ends_with_newline = line[len - 1] == '\n';
    if (l->ends_with_newline)
      line[len - 1] = 0;
    l->v = realloc(l->v, (l->n + 1) * sizeof(char *));
    l->v[l->n++] = strdup(line);
  }
  free(line);
  fclose(f);
}

static void
new_path(char *buf, size_t size, const char *what)
{
  snprintf(buf, size, "%s/%s-%d.log", tmpdir, what, file_no++);
}

static int
matches(const char *re, const char *s)
{
  regex_t r;
  assert_int_equal(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
  int m = regexec(&r, s, 0, NULL, 0) == 0;
  regfree(&r);
  return m;
}

/* Switch to a single file destination. */
static void
log_to_file(struct log_config *c, struct lnode *head, const char *path, u32 mask,
            const struct timeformat *tf)
{
  memset(c, 0, sizeof(*c));
  c->dest = LOG_DEST_FILE;
  c->mask = mask;
  c->filename = path;
  list_init(head);
  list_add_tail(head, &c->n);
  char err[256] = "";
  assert_int_equal(log_switch(head, tf, err, sizeof(err)), 0);
}

static void
log_to_stderr(void)
{
  struct lnode empty;
  list_init(&empty);
  assert_int_equal(log_switch(&empty, NULL, NULL, 0), 0);
}

#define BIT(c) (1U << (c))

static void
test_names(void **state)
{
  assert_string_equal(log_class_names[L_DEBUG], "debug");
  assert_string_equal(log_class_names[L_WARN], "warning");
  assert_string_equal(log_class_names[L_BUG], "bug");
  assert_string_equal(log_class_tags[L_INFO], "INFO");
  assert_string_equal(log_class_tags[L_REMOTE], "RMT");
  assert_string_equal(log_class_tags[L_DEBUG], "DBG");
  assert_string_equal(log_class_tags[L_FATAL], "FATAL");
}

static void
test_format_and_filter(void **state)
{
  char path[128];
  new_path(path, sizeof(path), "fmt");
  struct log_config c;
  struct lnode head;
  log_to_file(&c, &head, path, BIT(L_INFO) | BIT(L_WARN) | BIT(L_ERR), NULL);

  log_msg(L_INFO, "hello %d", 5);
  log_msg(L_TRACE, "trace is filtered");
  log_msg(L_WARN, "careful with %s", "that");
  debug_msg("debug is filtered");
  log_msg(L_ERR, "trailing newline is dropped\n");
  log_msg(L_AUTH, "auth is filtered");
  log_to_stderr();

  struct lines l;
  read_lines(path, &l);
  assert_int_equal(l.n, 3);
  assert_true(l.ends_with_newline);
  assert_true(matches("^" TIME_RE " <INFO> hello 5$", l.v[0]));
  assert_true(matches("^" TIME_RE " <WARN> careful with that$", l.v[1]));
  assert_true(matches("^" TIME_RE " <ERR> trailing newline is dropped$", l.v[2]));
  lines_free(&l);
}

static void
test_all_classes(void **state)
{
  char path[128];
  new_path(path, sizeof(path), "all");
  struct log_config c;
  struct lnode head;
  log_to_file(&c, &head, path, L_ALL_MASK, NULL);

  for (int cls = L_DEBUG; cls < L_MAX; cls++)
    log_msg(cls, "class %s", log_class_names[cls]);
  debug_msg("via debug_msg %d\n", 7);
  log_to_stderr();

  struct lines l;
  read_lines(path, &l);
  assert_int_equal(l.n, L_MAX - L_DEBUG + 1);
  for (int cls = L_DEBUG; cls < L_MAX; cls++)
  {
    char re[128];
    snprintf(re, sizeof(re), "^" TIME_RE " <%s> class %s$", log_class_tags[cls], log_class_names[cls]);
    assert_true(matches(re, l.v[cls - L_DEBUG]));
  }
  assert_true(matches("^" TIME_RE " <DBG> via debug_msg 7$", l.v[l.n - 1]));
  lines_free(&l);
}

static void
test_timeformat(void **state)
{
  char path[128];
  new_path(path, sizeof(path), "tf");
  struct log_config c;
  struct lnode head;
  const struct timeformat tf = { "%T.%6f", NULL, 0 };
  log_to_file(&c, &head, path, L_ALL_MASK, &tf);
  log_msg(L_INFO, "short");
  log_to_stderr();

  struct lines l;
  read_lines(path, &l);
  assert_int_equal(l.n, 1);
  assert_true(matches("^[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6} <INFO> short$", l.v[0]));
  lines_free(&l);
}

static void
test_two_destinations(void **state)
{
  char p1[128], p2[128];
  new_path(p1, sizeof(p1), "two-a");
  new_path(p2, sizeof(p2), "two-b");

  struct log_config c1 = { .dest = LOG_DEST_FILE, .mask = BIT(L_INFO), .filename = p1 };
  struct log_config c2 = { .dest = LOG_DEST_FILE, .mask = BIT(L_ERR) | BIT(L_INFO), .filename = p2 };
  struct lnode head;
  list_init(&head);
  list_add_tail(&head, &c1.n);
  list_add_tail(&head, &c2.n);
  assert_int_equal(log_switch(&head, NULL, NULL, 0), 0);

  log_msg(L_INFO, "both");
  log_msg(L_ERR, "second only");
  log_to_stderr();

  struct lines a, b;
  read_lines(p1, &a);
  read_lines(p2, &b);
  assert_int_equal(a.n, 1);
  assert_int_equal(b.n, 2);
  assert_true(matches("<INFO> both$", a.v[0]));
  assert_true(matches("<INFO> both$", b.v[0]));
  assert_true(matches("<ERR> second only$", b.v[1]));
  lines_free(&a);
  lines_free(&b);
}

static void
test_switch_failure_keeps_old(void **state)
{
  char path[128];
  new_path(path, sizeof(path), "keep");
  struct log_config c;
  struct lnode head;
  log_to_file(&c, &head, path, L_ALL_MASK, NULL);

  struct log_config bad = { .dest = LOG_DEST_FILE, .mask = L_ALL_MASK,
                            .filename = "/nonexistent-dir/for/sure.log" };
  struct lnode bad_head;
  list_init(&bad_head);
  list_add_tail(&bad_head, &bad.n);
  char err[256] = "";
  assert_int_equal(log_switch(&bad_head, NULL, err, sizeof(err)), -1);
  assert_non_null(strstr(err, "/nonexistent-dir/for/sure.log"));

  log_msg(L_INFO, "still here");
  log_to_stderr();

  struct lines l;
  read_lines(path, &l);
  assert_int_equal(l.n, 1);
  assert_true(matches("<INFO> still here$", l.v[0]));
  lines_free(&l);
}

static void
test_rotation(void **state)
{
  char path[128], backup[128];
  new_path(path, sizeof(path), "rot");
  new_path(backup, sizeof(backup), "rot-backup");

  struct log_config c = { .dest = LOG_DEST_FILE, .mask = L_ALL_MASK, .filename = path,
                          .backup = backup, .limit = 400 };
  struct lnode head;
  list_init(&head);
  list_add_tail(&head, &c.n);
  assert_int_equal(log_switch(&head, NULL, NULL, 0), 0);

  enum { LINES = 60 };
  for (int i = 0; i < LINES; i++)
    log_msg(L_INFO, "line %03d of the rotation test", i);
  log_to_stderr();

  struct lines cur, old;
  read_lines(path, &cur);
  read_lines(backup, &old);

  /* Both files hold some lines, neither passes the limit, and the backup
   * was rotated only when the next line did not fit */
  assert_true(cur.n > 0 && old.n > 0);
  size_t line_len = strlen(cur.v[0]) + 1;
  assert_true(cur.bytes <= 400);
  assert_true(old.bytes <= 400);
  assert_true(old.bytes + line_len > 400);

  /* The newest lines are in the file, the ones just before in the backup */
  char want[64];
  snprintf(want, sizeof(want), "line %03d of", LINES - 1);
  assert_non_null(strstr(cur.v[cur.n - 1], want));
  for (uint i = 0; i < cur.n; i++)
  {
    snprintf(want, sizeof(want), "<INFO> line %03d of the rotation test$", (int) (LINES - cur.n + i));
    assert_true(matches(want, cur.v[i]));
  }
  for (uint i = 0; i < old.n; i++)
  {
    snprintf(want, sizeof(want), "<INFO> line %03d of the rotation test$",
             (int) (LINES - cur.n - old.n + i));
    assert_true(matches(want, old.v[i]));
  }
  lines_free(&cur);
  lines_free(&old);
}

static void
test_rate_limit(void **state)
{
  char path[128];
  new_path(path, sizeof(path), "rl");
  struct log_config c;
  struct lnode head;
  log_to_file(&c, &head, path, L_ALL_MASK, NULL);

  struct log_rate rl = { 0 };
  for (int i = 0; i < 20; i++)
    log_rl(&rl, L_REMOTE, "peer sent garbage %d", i);

  /* Pretend the window passed */
  rl.window_start -= 6 * TO_S;
  log_rl(&rl, L_REMOTE, "peer sent garbage %d", 20);
  log_rl(&rl, L_REMOTE, "peer sent garbage %d", 21);
  log_to_stderr();

  struct lines l;
  read_lines(path, &l);
  assert_int_equal(l.n, 5 + 1 + 2);
  for (int i = 0; i < 5; i++)
  {
    char want[64];
    snprintf(want, sizeof(want), "<RMT> peer sent garbage %d$", i);
    assert_true(matches(want, l.v[i]));
  }
  assert_true(matches("<RMT> \\.\\.\\. 15 messages suppressed$", l.v[5]));
  assert_true(matches("<RMT> peer sent garbage 20$", l.v[6]));
  assert_true(matches("<RMT> peer sent garbage 21$", l.v[7]));
  lines_free(&l);
}

static void
test_long_message(void **state)
{
  char path[128];
  new_path(path, sizeof(path), "long");
  struct log_config c;
  struct lnode head;
  log_to_file(&c, &head, path, L_ALL_MASK, NULL);

  size_t n = 10000;
  char *big = malloc(n + 1);
  memset(big, 'q', n);
  big[n] = 0;
  log_msg(L_INFO, "%s", big);
  log_msg(L_INFO, "after");
  log_to_stderr();
  free(big);

  /* Truncated, but still one whole line */
  struct lines l;
  read_lines(path, &l);
  assert_int_equal(l.n, 2);
  assert_true(l.ends_with_newline);
  assert_true(strlen(l.v[0]) > 1000);
  assert_true(matches("<INFO> after$", l.v[1]));
  lines_free(&l);
}

enum { THREADS = 4, PER_THREAD = 3000 };

static void *
log_thread(void *arg)
{
  int id = (int) (intptr_t) arg;
  char pad[201];
  memset(pad, 'a' + id, 200);
  pad[200] = 0;
  for (int i = 0; i < PER_THREAD; i++)
    log_msg(L_INFO, "thread %d line %d %s end", id, i, pad);
  return NULL;
}

static void
test_threads(void **state)
{
  char path[128];
  new_path(path, sizeof(path), "threads");
  struct log_config c;
  struct lnode head;
  log_to_file(&c, &head, path, L_ALL_MASK, NULL);

  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++)
    assert_int_equal(pthread_create(&th[i], NULL, log_thread, (void *) (intptr_t) i), 0);
  for (int i = 0; i < THREADS; i++)
    pthread_join(th[i], NULL);
  log_to_stderr();

  struct lines l;
  read_lines(path, &l);
  assert_int_equal(l.n, THREADS * PER_THREAD);
  assert_true(l.ends_with_newline);

  int next[THREADS] = { 0 };
  for (uint k = 0; k < l.n; k++)
  {
    int id, i;
    char pad[256], end[8];
    const char *p = strstr(l.v[k], "> thread ");
    assert_non_null(p);
    assert_int_equal(sscanf(p, "> thread %d line %d %255s %7s", &id, &i, pad, end), 4);
    assert_true(id >= 0 && id < THREADS);
    /* Lines of one thread come in order and none is missing or torn */
    assert_int_equal(i, next[id]);
    next[id]++;
    assert_int_equal(strlen(pad), 200);
    assert_true(pad[0] == 'a' + id && pad[199] == 'a' + id);
    assert_string_equal(end, "end");
    assert_true(matches("^" TIME_RE " <INFO> thread", l.v[k]));
  }
  for (int i = 0; i < THREADS; i++)
    assert_int_equal(next[i], PER_THREAD);
  lines_free(&l);
}

static int
setup(void **state)
{
  log_init("log_test");
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/log_test.XXXXXX");
  return mkdtemp(tmpdir) ? 0 : -1;
}

static int
teardown(void **state)
{
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_names),
    cmocka_unit_test(test_format_and_filter),
    cmocka_unit_test(test_all_classes),
    cmocka_unit_test(test_timeformat),
    cmocka_unit_test(test_two_destinations),
    cmocka_unit_test(test_switch_failure_keeps_old),
    cmocka_unit_test(test_rotation),
    cmocka_unit_test(test_rate_limit),
    cmocka_unit_test(test_long_message),
    cmocka_unit_test(test_threads),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
