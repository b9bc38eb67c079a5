/*
 * DOC: CLI command implementations (main loop).
 *
 * Each command gathers its data into records and renders them with BIRD's
 * text layout; the grammar (nest/config.y) only collects arguments.
 */
#ifndef NEST_CMDS_H
#define NEST_CMDS_H

#include "lib/birdlib.h"
#include "lib/net.h"

struct cli;
struct symbol;

#define SRA_MAX_TABLES 16
enum sra_mode { SRA_ALL = 0, SRA_EXACT, SRA_FOR, SRA_IN };

/* `export P`: what P's export filter accepts now; `noexport P`: what it
 * rejects; `preexport P`: what P is offered (before the filter);
 * `exported P`: what P's channel did export. */
enum sra_export_mode { SRA_EXPORT = 1, SRA_NOEXPORT, SRA_PREEXPORT, SRA_EXPORTED };

/* `table T`, `import table P.C` or `export table P.C`, in the order given */
enum sra_table_kind { SRA_TABLE = 0, SRA_IMPORT_TABLE, SRA_EXPORT_TABLE };
struct sra_table {
  enum sra_table_kind kind;
  const char *name;           /* table, or protocol for the channel's tables */
  uint channel_type;          /* NET_IP4, NET_IP6: the channel of the protocol */
  int after_export;           /* named after `(export|noexport|...) P` */
};

struct show_route_args {
  net_addr net;
  int have_net;
  enum sra_mode mode;
  struct sra_table tables[SRA_MAX_TABLES];
  uint table_count;
  int all_tables;
  /* As BIRD 2's grammar: the last word that picked tables was `table`
   * (or `table all`, `import|export table`), not `protocol` or an export
   * mode, and tables are shown with their header even when empty */
  int tables_direct;
  int verbose;
  int primary_only;
  int filtered;
  int stats;                  /* 1 = stats, 2 = count */
  const char *proto_name;
  const struct filter *filter;  /* `filter NAME|{...}` or `where EXPR` */
  int export_mode;              /* SRA_EXPORT ... : through a protocol's export side */
  const char *export_proto;
};

struct show_proto_args {
  int verbose;
  const char *name;
  const char *pattern;
};

enum proto_cmd { PROTO_CMD_DISABLE, PROTO_CMD_ENABLE, PROTO_CMD_RESTART,
                 PROTO_CMD_RELOAD, PROTO_CMD_RELOAD_IN, PROTO_CMD_RELOAD_OUT };
enum cfg_mode { CFG_NORMAL, CFG_SOFT, CFG_CHECK };
enum dump_what { DUMP_RESOURCES, DUMP_PROTOCOLS, DUMP_ROUTES, DUMP_SOCKETS, DUMP_EVENTS,
                 DUMP_INTERFACES, DUMP_NEIGHBORS, DUMP_ATTRIBUTES, DUMP_FILTERS };
/* `debug` / `mrtdump` targets: a protocol, a channel of one, a pattern. */
struct proto_target {
  const char *name;           /* protocol, or NULL */
  const char *pattern;        /* "*" for all */
  uint channel_type;          /* NET_*: the protocol's channel; 0: none */
};

struct show_route_args *show_route_args_new(struct cli *c);
int show_route_args_add_table(struct show_route_args *a, enum sra_table_kind kind, const char *name, uint channel_type);

void cmd_show_status(struct cli *c);
void cmd_show_memory(struct cli *c);
void cmd_show_interfaces(struct cli *c, int summary);
void cmd_show_symbols(struct cli *c, int class, struct symbol *sym);
void cmd_show_protocols(struct cli *c, struct show_proto_args *a);
void cmd_show_route(struct cli *c, struct show_route_args *a);
void cmd_proto_action(struct cli *c, enum proto_cmd what, const char *name, const char *pattern, const char *msg);
void cmd_proto_debug(struct cli *c, const struct proto_target *t, u32 mask);
void cmd_proto_mrtdump(struct cli *c, const struct proto_target *t, u32 mask);
void cmd_configure(struct cli *c, const char *file, enum cfg_mode mode, uint timeout);
void cmd_configure_confirm(struct cli *c);
void cmd_configure_undo(struct cli *c);
void cmd_configure_status(struct cli *c);
void cmd_down(struct cli *c);
void cmd_graceful_restart(struct cli *c);
void cmd_restrict(struct cli *c);
void cmd_dump(struct cli *c, enum dump_what what);

#endif
