/*
 * DOC: Config objects, symbols, and the entry points of parsing.
 *
 * A config owns a pool (and a linpool for everything the parser
 * allocates); freeing the pool frees the config. Configs are
 * reference-counted by the main loop: the running config holds one
 * reference and each protocol instance another until it has switched to a
 * newer config, so old objects stay valid while protocols still use them.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include "conf/cf_context.h"
#include "conf/cf-parse.h"
#include "lib/printf.h"
#include "lib/log.h"
#include "lib/hash.h"
#include "nest/rt.h"
#include "nest/cli.h"

int yyparse(struct cf_context *cx, void *scanner);

static struct config *
config_alloc(const char *name)
{
  pool *p = rp_new(root_pool(), MEM_CONFIG, "Config");
  struct config *c = mb_allocz(p, sizeof(struct config));
  c->pool = p;
  c->mem = lp_new(p);
  c->file_name = lp_strdup(c->mem, name);
  c->sym_hash = lp_allocz(c->mem, SYM_HASH_SIZE * sizeof(struct symbol *));
  c->sym_last = &c->sym_first;
  list_init(&c->logfiles);
  list_init(&c->thread_groups);
  list_init(&c->tables);
  list_init(&c->protos);
  c->tf_route = tf_default_route;
  c->tf_proto = tf_default_proto;
  c->tf_base = tf_default_base;
  c->tf_log = tf_default_log;
  c->load_time = time_real_now();
  c->refs = 1;
  return c;
}

static void
config_free(struct config *c)
{
  rt_config_release(c);
  rfree(c->pool);
}

void config_ref(struct config *c) { c->refs++; }

void
config_unref(struct config *c)
{
  if (c && --c->refs == 0)
    config_free(c);
}

struct config *
config_new_empty(const char *name)
{
  struct config *c = config_alloc(name);
  rt_config_defaults(c);
  return c;
}

static u32
sym_hash(const char *name)
{
  return hash_bytes_seeded(name, strlen(name), 0x5eed) & (SYM_HASH_SIZE - 1);
}

struct symbol *
cf_find_symbol(struct config *c, const char *name)
{
  for (struct symbol *s = c->sym_hash[sym_hash(name)]; s; s = s->next)
    if (!strcmp(s->name, name))
      return s;
  return NULL;
}

static struct symbol *
sym_new(linpool *mem, const char *name)
{
  struct symbol *s = lp_allocz(mem, sizeof(struct symbol));
  s->name = lp_strdup(mem, name);
  return s;
}

struct symbol *
cf_get_symbol(struct config *c, const char *name)
{
  struct symbol *s = cf_find_symbol(c, name);
  if (s)
    return s;
  s = sym_new(c->mem, name);
  u32 h = sym_hash(name);
  s->next = c->sym_hash[h];
  c->sym_hash[h] = s;
  *c->sym_last = s;
  c->sym_last = &s->next_all;
  c->sym_count++;
  return s;
}

/* In CLI mode unknown names must not leak into the running config. */
struct symbol *
cf_lex_symbol(struct cf_context *cx, const char *name)
{
  if (!cx->cli_mode)
    return cf_get_symbol(cx->conf, name);
  struct symbol *s = cf_find_symbol(cx->conf, name);
  return s ? s : sym_new(cx->mem, name);
}

const char *
cf_symbol_class_name(const struct symbol *s)
{
  switch (s->class) {
  case SYM_VOID: return "undefined";
  case SYM_PROTO: return "protocol";
  case SYM_TEMPLATE: return "protocol template";
  case SYM_TABLE: return "routing table";
  case SYM_CONSTANT: return "constant";
  case SYM_FILTER: return "filter";
  case SYM_FUNCTION: return "function";
  case SYM_ATTRIBUTE: return "custom attribute";
  case SYM_THREAD_GROUP: return "thread group";
  }
  return "unknown type";
}

int
cf_define_symbol(struct cf_context *cx, struct symbol *sym, enum sym_class class, void *def)
{
  if (sym->class != SYM_VOID) {
    cf_error_at(cx, "Symbol '%s' already defined", sym->name);
    return -1;
  }
  sym->class = class;
  sym->def = def;
  return 0;
}

void *
cf_alloc(struct cf_context *cx, size_t size)
{
  return lp_allocz(cx->mem, size);
}

const char *
config_hostname(struct cf_context *cx)
{
  if (cx->conf->hostname)
    return cx->conf->hostname;
  char buf[256];
  if (gethostname(buf, sizeof(buf) - 1) < 0)
    return NULL;
  buf[sizeof(buf) - 1] = 0;
  return cf_strdup(cx, buf);
}

char *
cf_strdup(struct cf_context *cx, const char *s)
{
  return lp_strdup(cx->mem, s);
}

void
cf_error_at(struct cf_context *cx, const char *fmt, ...)
{
  if (cx->failed)
    return;
  cx->failed = 1;
  char msg[400];
  va_list args;
  va_start(args, fmt);
  bvsnprintf(msg, sizeof(msg), fmt, args);
  va_end(args);
  if (cx->cli_mode)
    bsnprintf(cx->err, sizeof(cx->err), "%s", msg);
  else
    bsnprintf(cx->err, sizeof(cx->err), "%s:%d:%d %s",
              cx->tok_file ? cx->tok_file : cx->conf->file_name, cx->tok_line, cx->tok_col, msg);
}

void
yyerror(YYLTYPE *loc, struct cf_context *cx, void *scanner, const char *msg)
{
  (void) loc; (void) scanner;
  cf_error_at(cx, "%s", msg);
}

/* Parse a file, or text when text is non-NULL (file then only names it). */
static struct config *
config_parse(const char *file, const char *text, struct cf_error *err)
{
  struct config *c = config_alloc(file);
  struct cf_context cx = { .conf = c, .mem = c->mem };
  rt_config_defaults(c);

  if (cf_scanner_init(&cx, c->file_name, text) < 0) {
    bsnprintf(err->msg, sizeof(err->msg), "%s: %m", file);
    config_free(c);
    return NULL;
  }
  int rv = yyparse(&cx, cx.scanner);
  cf_scanner_free(&cx);
  if (rv || cx.failed) {
    bsnprintf(err->msg, sizeof(err->msg), "%s", cx.failed ? cx.err : "Parse error");
    config_free(c);
    return NULL;
  }
  if (list_empty(&c->protos)) {
    /* BIRD reports this at the last token's line, column 0. */
    bsnprintf(err->msg, sizeof(err->msg), "%s:%d:0 No protocol is specified in the config file",
              file, cx.tok_line ? cx.tok_line : 1);
    config_free(c);
    return NULL;
  }
  return c;
}

struct config *
config_parse_file(const char *file, struct cf_error *err)
{
  return config_parse(file, NULL, err);
}

struct config *
config_parse_text(const char *name, const char *text, struct cf_error *err)
{
  return config_parse(name, text, err);
}

void
cf_cli_parse(struct cli *c, const char *line, struct config *running)
{
  lp_flush(c->parse_mem);
  struct cf_context cx = {
    .conf = running, .mem = c->parse_mem, .cli_mode = 1, .cli = c, .restricted = c->restricted,
  };
  if (cf_scanner_init(&cx, "CLI", line) < 0) {
    cli_printf(c, 9001, "Internal error");
    return;
  }
  int rv = yyparse(&cx, cx.scanner);
  cf_scanner_free(&cx);
  if (rv || cx.failed)
    cli_printf(c, 9001, "%s", cx.failed ? cx.err : "Parse error");
}

void
cf_val_format(const struct cf_val *v, char *buf, size_t size)
{
  switch (v->type) {
  case CFV_INT: bsnprintf(buf, size, "%u", v->i); break;
  case CFV_IP: bsnprintf(buf, size, "%I", v->ip); break;
  case CFV_NET: bsnprintf(buf, size, "%N", &v->net); break;
  case CFV_STRING: bsnprintf(buf, size, "%s", v->s); break;
  case CFV_BOOL: bsnprintf(buf, size, "%s", v->i ? "TRUE" : "FALSE"); break;
  case CFV_PAIR: bsnprintf(buf, size, "(%u,%u)", v->i >> 16, v->i & 0xffff); break;
  case CFV_QUAD: bsnprintf(buf, size, "%R", v->i); break;
  case CFV_FILTER: bsnprintf(buf, size, "(value)"); break;
  }
}
