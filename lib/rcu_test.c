/*
 * Unit tests for lib/rcu.c: a forked child keeps working RCU workers.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/rcu.h"

static int freed;

static void
count_free(struct rcu_head *h)
{
  (void) h;
  __atomic_add_fetch(&freed, 1, __ATOMIC_SEQ_CST);
}

/* The daemon's order of events: hash tables and call_rcu used before the
 * fork (config parsing), tear-down in the child. With a plain fork() the
 * child waited forever in cds_lfht_destroy() and rcu_barrier(), on
 * workers left in the parent; here the child must finish within seconds. */
static void
test_fork_keeps_workers(void **state)
{
  (void) state;
  rcu_thread_register();
  struct cds_lfht *before = cds_lfht_new(4, 4, 0, CDS_LFHT_AUTO_RESIZE, NULL);
  assert_non_null(before);
  static struct rcu_head h1, h2;
  call_rcu(&h1, count_free);
  rcu_barrier();

  pid_t pid = rcu_fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    alarm(10);          /* a hang ends the child with SIGALRM */
    call_rcu(&h2, count_free);
    rcu_barrier();
    int ok = cds_lfht_destroy(before, NULL) == 0 && freed == 2;
    struct cds_lfht *after = cds_lfht_new(4, 4, 0, CDS_LFHT_AUTO_RESIZE, NULL);
    ok = ok && after && cds_lfht_destroy(after, NULL) == 0;
    _exit(ok ? 0 : 1);
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  /* the parent's workers were only paused */
  assert_int_equal(cds_lfht_destroy(before, NULL), 0);
  call_rcu(&h2, count_free);
  rcu_barrier();
  assert_int_equal(freed, 2);
}

int
main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_fork_keeps_workers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
