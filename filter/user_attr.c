/*
 * DOC: `show route all` of attributes declared in the config.
 *
 * `attribute int foo;` gives foo an id of the EAP_USER class; the running
 * config's symbols say which name and type each id has, so `show route
 * all` prints `foo: 5` as BIRD does. Main loop only (the CLI), like
 * config_running().
 */
#include "filter/f_inst.h"
#include "conf/conf.h"
#include "nest/ea_bgp.h"
#include "nest/reconf.h"
#include "lib/loop.h"
#include "lib/printf.h"

static const struct f_attr *
f_user_attr(uint id)
{
  struct config *c = config_running();
  for (struct symbol *s = c ? c->sym_first : NULL; s; s = s->next_all)
    if (s->class == SYM_ATTRIBUTE && ((const struct f_attr *) s->def)->id == id)
      return s->def;
  return NULL;
}

static const char *
user_attr_name(const struct eattr *e, char *buf, size_t size)
{
  const struct f_attr *a = f_user_attr(e->id);
  if (!a)
    return NULL;      /* declared by an older config, gone now */
  bsnprintf(buf, size, "%s", a->name);
  return buf;
}

/* As route attributes print (paths and lists bare, items apart), not as
 * `eval` prints values. */
static void
user_attr_format(const struct ea_list *l, const struct eattr *e, char *buf, size_t size)
{
  const struct f_attr *a = f_user_attr(e->id);
  struct f_val v = f_ea_to_val(a, e, ea_data(l, e), loop_tmp());
  struct buffer b;
  buffer_init(&b);
  switch (v.type) {
  case T_PATH:
    as_path_format(v.val.ad, &b);
    break;
  case T_CLIST: case T_ECLIST: case T_LCLIST: {
    uint n = clist_count(v.type, v.val.ad);
    for (uint i = 0; i < n; i++) {
      struct f_val it = clist_item(v.type, v.val.ad, i);
      if (i)
        buffer_puts(&b, " ");
      val_format(&it, &b);
    }
    break;
  }
  default:
    val_format(&v, &b);
  }
  bsnprintf(buf, size, "%s", b.start ? b.start : "");
  buffer_free(&b);
}

static const struct ea_class_desc user_attr_class = { .name = user_attr_name, .format = user_attr_format };

void
f_user_attr_init(void)
{
  ea_register_class(EAP_USER, &user_attr_class);
}
