/*
 * DOC: Building protocol and channel configs from grammar actions.
 *
 * `protocol static [name] [from template] { ... }` starts with
 * proto_config_begin() (class known), gets its name (auto-generated as
 * BIRD does: static1, static2, ...) and template applied in
 * proto_config_set_name(), and is validated in proto_config_end().
 * Templates are ordinary proto configs that are never instantiated; `from`
 * deep-copies the template's generic options, channels and class data.
 * A spawned instance (dynamic BGP) gets the same kind of copy of its
 * parent's finished config, made in the main loop (proto_config_clone).
 */
#include <string.h>
#include "conf/cf_context.h"
#include "nest/proto.h"
#include "lib/printf.h"

static const struct proto_class *proto_classes[16];
static uint proto_class_count;

void
proto_build(const struct proto_class *c)
{
  ASSERT_DIE(proto_class_count < ARRAY_SIZE(proto_classes));
  proto_classes[proto_class_count++] = c;
}

const struct proto_class *
proto_class_find(const char *keyword)
{
  for (uint i = 0; i < proto_class_count; i++)
    if (!strcmp(proto_classes[i]->keyword, keyword))
      return proto_classes[i];
  return NULL;
}

int
proto_config_begin(struct cf_context *cx, const struct proto_class *cls)
{
  struct proto_config *pc = cf_alloc(cx, cls->config_size);
  pc->global = cx->conf;
  pc->class = cls;
  pc->debug = cx->conf->proto_default_debug;
  list_init(&pc->channels);
  cx->this_proto = pc;
  cx->this_channel = NULL;
  cx->proto_class = cls;
  if (cls->preconfig)
    cls->preconfig(pc);
  return 0;
}

int
proto_config_set_name(struct cf_context *cx, struct symbol *name, struct symbol *from)
{
  struct proto_config *pc = cx->this_proto;
  if (!name) {
    if (cx->proto_is_template) {
      cf_error_at(cx, "Template has no name");
      return -1;
    }
    /* Auto name: first free "<template_name>N" */
    char buf[64];
    uint *seq = &cx->conf->proto_seq[pc->class->class_id];
    do
      bsnprintf(buf, sizeof(buf), pc->class->template_name, ++*seq);
    while (cf_find_symbol(cx->conf, buf) && cf_find_symbol(cx->conf, buf)->class != SYM_VOID);
    name = cf_get_symbol(cx->conf, buf);
  }
  if (cf_define_symbol(cx, name, cx->proto_is_template ? SYM_TEMPLATE : SYM_PROTO, pc) < 0)
    return -1;
  pc->sym = name;
  pc->name = name->name;

  if (from) {
    if (from->class != SYM_TEMPLATE) {
      cf_error_at(cx, "Template name expected");
      return -1;
    }
    struct proto_config *t = from->proto;
    if (t->class != pc->class) {
      cf_error_at(cx, "Can't inherit from a template of a different protocol type");
      return -1;
    }
    proto_copy_config(pc, t);
    pc->template_from = t;
  }
  return 0;
}

/* Deep copy of generic options and channels; the class copies its own data. */
void
proto_copy_config(struct proto_config *dst, const struct proto_config *src)
{
  dst->dsc = src->dsc;
  dst->disabled = src->disabled;
  dst->debug = src->debug;
  dst->router_id = src->router_id;
  dst->thread_group = src->thread_group;
  struct config *c = dst->global;
  LIST_WALK_ENTRY(cc, &src->channels, struct channel_config, n) {
    size_t size = dst->class->channel_config_size ? dst->class->channel_config_size : sizeof(struct channel_config);
    struct channel_config *nc = lp_allocz(c->mem, size);
    memcpy(nc, cc, size);
    nc->parent = dst;
    list_add_tail(&dst->channels, &nc->n);
  }
  if (dst->class->copy_config)
    dst->class->copy_config(dst, src);
}

static struct channel_config *
channel_config_find(struct proto_config *pc, uint net_type)
{
  LIST_WALK_ENTRY(cc, &pc->channels, struct channel_config, n)
    if (cc->net_type == net_type)
      return cc;
  return NULL;
}

int
channel_config_start(struct cf_context *cx, uint net_type)
{
  struct proto_config *pc = cx->this_proto;
  if (!(pc->class->channel_mask & (1U << net_type))) {
    cf_error_at(cx, "Channel %s not supported by protocol %s", net_type_names[net_type], pc->class->keyword);
    return -1;
  }
  struct channel_config *cc = channel_config_find(pc, net_type);
  if (!cc) {
    if (list_length(&pc->channels) >= pc->class->max_channels) {
      cf_error_at(cx, "Too many channels");
      return -1;
    }
    cc = cf_alloc(cx, pc->class->channel_config_size ? pc->class->channel_config_size : sizeof(*cc));
    cc->name = net_type_names[net_type];
    cc->parent = pc;
    cc->net_type = net_type;
    cc->debug = cx->conf->channel_default_debug;   /* or'ed with the protocol's */
    cc->in_filter = FILTER_ACCEPT;     /* BIRD's defaults: import all, export none */
    cc->out_filter = FILTER_REJECT;
    cc->rpki_reload = 1;
    list_add_tail(&pc->channels, &cc->n);
  }
  cx->this_channel = cc;
  return 0;
}

int
channel_config_finish(struct cf_context *cx)
{
  struct channel_config *cc = cx->this_channel;
  if (!cc->table) {
    cc->table = cx->conf->def_tables[cc->net_type];
    if (!cc->table) {
      cf_error_at(cx, "Routing table not specified");
      return -1;
    }
  }
  cx->this_channel = NULL;
  return 0;
}

int
proto_config_end(struct cf_context *cx)
{
  struct proto_config *pc = cx->this_proto;
  if (!cx->proto_is_template) {
    LIST_WALK_ENTRY(cc, &pc->channels, struct channel_config, n) {
      if (!cc->table)
        cc->table = cx->conf->def_tables[cc->net_type];
      if (!cc->preference)
        cc->preference = pc->class->default_preference;
    }
    if (pc->class->postconfig) {
      char err[256];
      if (pc->class->postconfig(pc, err, sizeof(err)) < 0) {
        cf_error_at(cx, "%s", err);
        return -1;
      }
    }
    list_add_tail(&cx->conf->protos, &pc->n);
  }
  cx->this_proto = NULL;
  return 0;
}

/* A name a spawned instance may take in c: unused, or left by an instance
 * spawned while c was running before (`configure undo` brings such a
 * config back; that instance is gone or is the one coming back). */
static int
proto_spawn_name_free(struct config *c, const char *name)
{
  struct symbol *s = cf_find_symbol(c, name);
  return !s || s->class == SYM_VOID || (s->class == SYM_PROTO && s->proto->spawned_from);
}

struct proto_config *
proto_config_clone(const struct proto_config *parent, const char *name, const struct proto_config *like)
{
  struct config *c = parent->global;
  if (!proto_spawn_name_free(c, name))
    return NULL;
  struct proto_config *pc = lp_allocz(c->mem, parent->class->config_size);
  pc->global = c;
  pc->class = parent->class;
  list_init(&pc->channels);
  proto_copy_config(pc, parent);
  pc->spawned_from = parent;
  if (like && (!pc->class->respawn_config || !pc->class->respawn_config(pc, like)))
    return NULL;                /* the linpool takes the memory back with c */
  struct symbol *s = cf_get_symbol(c, name);
  s->class = SYM_PROTO;
  s->proto = pc;
  pc->sym = s;
  pc->name = s->name;
  return pc;
}
