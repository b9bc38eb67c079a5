/*
 * DOC: State of one parse (config file or CLI line), shared by the scanner
 * and the grammar. Private to conf/ and to the grammar fragments.
 */
#ifndef CONF_CF_CONTEXT_H
#define CONF_CF_CONTEXT_H

#include "conf/conf.h"

#define CF_MAX_INCLUDE_DEPTH 8
#define CF_SYM_MAX_LEN 64

struct cf_file {
  const char *name;           /* lives in the config's linpool */
  void *buffer;               /* flex buffer state */
  void *fh;                   /* FILE *, closed on pop */
  int line, col;              /* position of the next character */
};

struct cf_context {
  struct config *conf;        /* config being built (CLI: the running one) */
  linpool *mem;               /* allocations: config lifetime, or one CLI command */
  void *scanner;
  int cli_mode;
  struct cli *cli;
  int restricted;

  struct cf_file files[CF_MAX_INCLUDE_DEPTH];
  int depth;
  int tok_line, tok_col;      /* start of the last token */
  const char *tok_file;

  int failed;
  int eof_sent;
  char err[512];

  /* Objects under construction by grammar actions. */
  struct proto_config *this_proto;
  struct channel_config *this_channel;
  void *this_item;            /* protocol-specific (e.g. a static route) */
  struct thread_group_config *this_tg;
  struct timeformat *tf;
  struct rtable_config *this_table;
  int proto_is_template;
  const struct proto_class *proto_class;
  struct show_route_args *ra;
  struct show_proto_args *pa;
  struct f_parse *filter;     /* filter compiler state (filter/) */
};

/* Record an error at the last token's position (first error wins). */
void cf_error_at(struct cf_context *cx, const char *fmt, ...);
/* Grammar actions: report and abort the parse. */
#define cf_error(...) do { cf_error_at(cx, __VA_ARGS__); YYABORT; } while (0)

/* Scanner interface (conf/cf-lex.l). */
int cf_scanner_init(struct cf_context *cx, const char *file, const char *text);
void cf_scanner_free(struct cf_context *cx);
/* Symbol for an identifier (CLI: never added to the running config). */
struct symbol *cf_lex_symbol(struct cf_context *cx, const char *name);
/* Keywords table lookup; 0 if not a keyword. */
int cf_keyword(const char *s);

void *cf_alloc(struct cf_context *cx, size_t size);   /* zeroed, config lifetime */
/* The config's hostname, or the system's (config lifetime). */
const char *config_hostname(struct cf_context *cx);
char *cf_strdup(struct cf_context *cx, const char *s);

/* Define sym as class/def, or fail if it is already defined. */
int cf_define_symbol(struct cf_context *cx, struct symbol *sym, enum sym_class class, void *def);

/* Protocol and channel construction from grammar actions (nest/proto_conf.c).
 * Return 0, or -1 after cf_error_at(). */
int proto_config_begin(struct cf_context *cx, const struct proto_class *cls);
int proto_config_set_name(struct cf_context *cx, struct symbol *name, struct symbol *from);
int proto_config_end(struct cf_context *cx);
int channel_config_start(struct cf_context *cx, uint net_type);
int channel_config_finish(struct cf_context *cx);

#endif
