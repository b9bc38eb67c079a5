/*
 * DOC: Configuration: the parsed config object, symbols, and parsing.
 *
 * A struct config is built by the parser from a file (and its includes),
 * lives in its own pool and is immutable once committed. The main loop owns
 * the committed ("running") config; protocols keep pointers into it and
 * hold it alive with config_ref() until they have switched to a newer one.
 *
 * Parsing is re-entrant: the scanner and parser keep all state in a
 * struct cf_context, so CLI commands (parsed with the same grammar, in CLI
 * mode) never touch the config being loaded. Errors are reported as
 * "file:line:col message".
 */
#ifndef CONF_CONF_H
#define CONF_CONF_H

#include "lib/birdlib.h"
#include "lib/lists.h"
#include "lib/resource.h"
#include "lib/timeutil.h"
#include "lib/net.h"

struct rtable_config;
struct proto_config;
struct channel_config;
struct cli;

enum sym_class {
  SYM_VOID = 0,       /* known name, nothing defined: "undefined" */
  SYM_PROTO,
  SYM_TEMPLATE,
  SYM_TABLE,
  SYM_CONSTANT,
  SYM_FILTER,
  SYM_FUNCTION,
  SYM_ATTRIBUTE,
  SYM_THREAD_GROUP,
};

/* Constant value (`define`); the filter language extends the types. */
enum cf_val_type { CFV_INT = 1, CFV_IP, CFV_NET, CFV_STRING, CFV_BOOL, CFV_PAIR, CFV_QUAD, CFV_FILTER };
struct f_val;
struct cf_val {
  enum cf_val_type type;
  union {
    u32 i;
    ip_addr ip;
    net_addr net;
    const char *s;
  };
  const struct f_val *fv;   /* the full filter value (filter/); CFV_FILTER: only this */
};

struct symbol {
  struct symbol *next;      /* hash chain */
  struct symbol *next_all;  /* all symbols in creation order */
  const char *name;
  enum sym_class class;
  union {
    void *def;
    struct rtable_config *table;
    struct proto_config *proto;
    struct cf_val *val;
    struct thread_group_config *tg;
  };
};

struct thread_group_config {
  struct lnode n;
  struct symbol *sym;
  uint threads;
  int is_default;
};

struct config {
  pool *pool;
  linpool *mem;
  const char *file_name;
  struct symbol **sym_hash;   /* SYM_HASH_SIZE buckets */
  struct symbol *sym_first, **sym_last;
  uint sym_count;

  u32 router_id;
  const char *hostname;
  u32 gr_wait;                /* `graceful restart wait`, seconds; 0: default */
  struct lnode logfiles;      /* struct log_config */
  struct timeformat tf_route, tf_proto, tf_base, tf_log;
  u32 proto_default_debug;
  u32 channel_default_debug;  /* `debug channels` */
  uint threads;               /* `threads N`; 0 = number of cores */
  struct lnode thread_groups; /* struct thread_group_config */

  struct lnode tables;        /* struct rtable_config */
  struct rtable_config *def_tables[8];  /* per net type */
  struct lnode protos;        /* struct proto_config */
  uint proto_seq[16];         /* per protocol class, for names like static1 */

  btime load_time;            /* real time */
  int refs;                   /* owner: main loop; running config + protocols */
  int shutdown;               /* this is the empty config used for shutdown */
  /* Committed by `configure soft` (BIRD 2; set by the main loop before
   * the commit, then constant): changed filters apply to the routes that
   * change from then on; nothing is imported or exported again for them
   * (`reload` does that when the operator wants). */
  int soft;
};

#define SYM_HASH_SIZE 1024

/* Error position of a failed parse. */
struct cf_error {
  char msg[512];              /* "file:line:col message" or "file: strerror" */
};

/* Parse a file into a new config. Returns NULL and fills err on failure. */
struct config *config_parse_file(const char *file, struct cf_error *err);
/* The same from a string (tests, fuzzers); name stands for the file in
 * errors, and `include` paths are relative to the current directory. */
struct config *config_parse_text(const char *name, const char *text, struct cf_error *err);
/* An empty config (for shutdown and for tests). */
struct config *config_new_empty(const char *name);
void config_ref(struct config *c);
void config_unref(struct config *c);

/* Symbols. Lookup is case-sensitive. */
struct symbol *cf_find_symbol(struct config *c, const char *name);
struct symbol *cf_get_symbol(struct config *c, const char *name);  /* creates SYM_VOID */
const char *cf_symbol_class_name(const struct symbol *s);

/* CLI: parse and execute one command line in the CLI grammar. Output goes
 * through the cli's reply functions; a syntax error becomes a 9001 reply. */
void cf_cli_parse(struct cli *c, const char *line, struct config *running);

/* Format a constant the way the CLI prints it. */
void cf_val_format(const struct cf_val *v, char *buf, size_t size);

#endif
