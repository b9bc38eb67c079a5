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
/* Configure requests (nest/reconf_ctl.c), main loop. Results as BIRD's,
 * the reply codes of `configure`: */
enum conf_result {
  CONF_DONE = 0,              /* 0003 Reconfigured */
  CONF_PROGRESS = 1,          /* 0004 Reconfiguration in progress */
  CONF_QUEUED = 2,            /* 0005 ... queueing new config */
  CONF_UNQUEUED = 3,          /* 0017 ... removing queued config */
  CONF_CONFIRM = 4,           /* 0018 Reconfiguration confirmed */
  CONF_SHUTDOWN = -1,         /* 0006 Reconfiguration ignored, shutting down */
  CONF_NOTHING = -2,          /* 0019 Nothing to do */
};
/* Before reading a new config: forget the undo config and its timer,
 * unless a reconfiguration is in progress. */
void config_free_old(void);
/* Commit c (the reference is taken over), with an undo timeout in seconds
 * (0: none, and a running one stops). CONF_SHUTDOWN, CONF_QUEUED, or
 * CONF_PROGRESS: begun; then done (may be NULL) is sent to the main loop
 * once the protocols acknowledged, and config_commit_result() says
 * CONF_DONE or CONF_PROGRESS. */
int config_request(struct config *c, uint timeout, struct event *done);
/* Go back to the config before the last commit: CONF_SHUTDOWN,
 * CONF_NOTHING, CONF_UNQUEUED, CONF_QUEUED, or CONF_PROGRESS as above. */
int config_undo(struct event *done);
/* Stop the undo timer: CONF_CONFIRM, or CONF_NOTHING if none runs. */
int config_confirm(void);
/* CONF_DONE (idle), CONF_PROGRESS, CONF_QUEUED (in progress, another
 * queued) or CONF_SHUTDOWN. */
int config_status(void);
int config_commit_result(void);
/* Time left before the undo timer fires, or -1 if it does not run. */
btime config_undo_remains(void);
/* fn is called when the undo timer fires, before the undo. */
void config_set_undo_notify(void (*fn)(void));

/* Schedulers of the configured thread groups; NULL name = default group. */
struct sched *thread_group_sched(const char *name);
/* The helpers of scheduler s (lib/par.h), NULL: none (not a group's). */
struct par *thread_group_par(struct sched *s);
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
/* Main loop: something that is no protocol but has a channel on a table
 * (a BGP update group) exists; tables wait for it at shutdown. */
void config_shutdown_hold(void);
void config_shutdown_release(void);
/* After the main loop ended: join the worker threads. */
void threads_shutdown(void);

#endif
