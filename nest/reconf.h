/*
 * DOC: The running configuration and its replacement (main loop).
 *
 * config_commit() applies a parsed config: log destinations, thread
 * groups, tables, protocols. Only what changed is touched; protocols whose
 * config changed are reconfigured in place when their class can do it, and
 * restarted otherwise.
 */
#ifndef NEST_RECONF_H
#define NEST_RECONF_H

#include "conf/conf.h"

struct sched;
struct event;

/* The running config (main loop only). */
struct config *config_running(void);
/* Apply new as the running config; takes over the caller's reference. */
void config_commit(struct config *new);
/* Same; done is sent to the main loop once every protocol acknowledged.
 * Returns the number of protocols started, stopped or restarted. */
uint config_commit_wait(struct config *new, struct event *done);
/* Schedulers of the configured thread groups; NULL name = default group. */
struct sched *thread_group_sched(const char *name);
/* Global path of the config file given on the command line. */
void config_set_path(const char *path);
const char *config_path(void);
/* Shutdown progress (main loop). */
int config_shutting_down(void);
void config_start_shutdown(void);
btime config_boot_time(void);
btime config_reconf_time(void);
/* Graceful end of the process once all protocols are down. */
void config_shutdown_check(void);
/* After the main loop ended: join the worker threads. */
void threads_shutdown(void);

#endif
