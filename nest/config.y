/* Nest grammar: tables, protocol and channel generics, CLI commands. */
%%header
#include "nest/proto.h"
#include "nest/rt.h"
#include "nest/cmds.h"
#include "nest/cli.h"
/* `show` of a protocol class we do not have, in BIRD's words ("Not a OSPF
 * protocol" included); used in grammar actions only. */
#define ABSENT(cls, sym) do { \
    if (sym) cf_error("%s: Not a %s protocol", (sym)->name, cls); \
    cf_error("There is no %s protocol running", cls); \
  } while (0)

%%decls
%type <i> net_type proto_debug_mask proto_debug_list proto_debug_flag cfg_timeout limit_action
%type <r> rtable
%type <t> cfg_name thread_group
%type <s> proto_pattern
%type <ra> r_args
%type <pa> proto_args
%type <i> mrtdump_mask mrtdump_list mrtdump_flag echo_mask echo_size
%type <pt> proto_target proto_target0
%type <s> absent_proto absent_iface

%%keywords ipv4 ipv6 roa4 roa6 table sorted trie settle gc threshold period cork digest
%%keywords protocol template from disabled description import export none preference
%%keywords protocols states routes filters interfaces events packets channels
%%keywords show status memory symbols for in count stats primary filtered filter function
%%keywords configure soft check confirm undo timeout enable disable restart down restrict dump resources reload out
%%keywords summary limit action warn block receive rpki
%%keywords mrtdump messages sockets neighbors attributes
%%keywords ospf rip babel bfd sessions entries topology state lsadb echo

%%grammar
/* Tables */

net_type:
   IPV4 { $$ = NET_IP4; }
 | IPV6 { $$ = NET_IP6; }
 | ROA4 { $$ = NET_ROA4; }
 | ROA6 { $$ = NET_ROA6; }
 | ASPA { $$ = NET_ASPA; }
 ;

conf_item: table_def ;
/* The options write into the table's config as they come: made (or the
 * implicit master4/master6 taken) before them. */
table_def: net_type TABLE symbol {
    cx->this_table = rt_new_table_config(cx->conf, $3, $1);
    if (!cx->this_table)
      cf_error("Symbol %s already defined", $3->name);
  } table_opts_block { cx->this_table = NULL; } ;
table_opts_block: ';' | '{' table_opts '}' | table_inline_opts ';' ;
/* BIRD also takes the flags without braces: `ipv4 table master4 sorted;` */
table_inline_opts: table_inline_opt | table_inline_opts table_inline_opt ;
table_inline_opt: SORTED { cx->this_table->sorted = 1; } | TRIE { cx->this_table->trie = 1; } ;
table_opts: /* empty */ | table_opts table_opt ';' ;
table_opt:
   SORTED bool { cx->this_table->sorted = $2; }
 | TRIE bool { cx->this_table->trie = $2; }
 /* BIRD 2's wait before a ROA change reloads its readers; BIRD 3 calls
  * it `digest settle time` */
 | MIN SETTLE TIME expr_us { cx->this_table->min_settle = MAX($4, 1); }
 | MAX SETTLE TIME expr_us { cx->this_table->max_settle = MAX($4, 1); }
 | DIGEST SETTLE TIME expr_us expr_us {
     cx->this_table->min_settle = MAX($4, 1);
     cx->this_table->max_settle = MAX($5, 1);
   }
 /* BIRD 3's: nest/rt_settle.c */
 | EXPORT SETTLE TIME expr_us expr_us { cx->this_table->export_settle = (struct rt_settle_times) { $4, $5 }; }
 | ROUTE REFRESH EXPORT SETTLE TIME expr_us expr_us {
     cx->this_table->rr_settle = (struct rt_settle_times) { $6, $7 };
   }
 /* BIRD 3's import backpressure marks (nest/rt_press.c): items a reader
  * is behind when importers wait, and when they go on */
 | CORK THRESHOLD expr expr {
     if ($3 > $4) cf_error("Cork low threshold must be lower than the high threshold.");
     if (!$4) cf_error("Cork high threshold must be positive");
     cx->this_table->cork_low = $3;
     cx->this_table->cork_high = $4;
   }
 | thread_group { cx->this_table->thread_group = $1; }
 /* BIRD 2's periodic prune has no counterpart here: what goes is freed
  * once its readers passed (README, table options) */
 | GC THRESHOLD expr { }
 | GC PERIOD expr_us { }
 /* BIRD 3's `debug all|off|{states,routes,events}` (BIRD 2 has no table
  * debug); flags tables do not trace are ignored */
 | DEBUG bool { cx->this_table->debug = $2 ? D_STATES | D_ROUTES | D_EVENTS : 0; }
 | DEBUG ALL { cx->this_table->debug = D_STATES | D_ROUTES | D_EVENTS; }
 | DEBUG '{' proto_debug_list '}' { cx->this_table->debug = $3 & (D_STATES | D_ROUTES | D_EVENTS); }
 ;

/* A protocol's or table's loop runs on this group's threads. */
thread_group: THREAD GROUP CF_SYM_KNOWN {
    if ($3->class != SYM_THREAD_GROUP) cf_error("Thread group name expected");
    $$ = $3->name;
  } ;

rtable: CF_SYM_KNOWN {
    if ($1->class != SYM_TABLE) cf_error("Table name expected");
    $$ = $1->table;
  } ;

global_option: GRACEFUL RESTART WAIT expr { cx->conf->gr_wait = $4; } ;

/* debug protocols / debug in protocols */
global_option: DEBUG PROTOCOLS proto_debug_mask { cx->conf->proto_default_debug = $3; } ;
global_option: DEBUG CHANNELS proto_debug_mask { cx->conf->channel_default_debug = $3; } ;
proto_debug_mask:
   ALL { $$ = ~0U; }
 | OFF { $$ = 0; }
 | '{' proto_debug_list '}' { $$ = $2; }
 ;
proto_debug_list: proto_debug_flag | proto_debug_list ',' proto_debug_flag { $$ = $1 | $3; } ;
proto_debug_flag:
   STATES { $$ = D_STATES; } | ROUTES { $$ = D_ROUTES; } | FILTERS { $$ = D_FILTERS; }
 | INTERFACES { $$ = D_INTERFACES; } | EVENTS { $$ = D_EVENTS; } | PACKETS { $$ = D_PACKETS; }
 ;

/* Protocols: each class supplies `proto: <class>_proto '}' ;` and uses these. */
conf_item: proto ;

proto_start: PROTOCOL { cx->proto_is_template = 0; } | TEMPLATE { cx->proto_is_template = 1; } ;

proto_name:
   /* empty */ { if (proto_config_set_name(cx, NULL, NULL) < 0) YYABORT; }
 | symbol { if (proto_config_set_name(cx, $1, NULL) < 0) YYABORT; }
 | FROM CF_SYM_KNOWN { if (proto_config_set_name(cx, NULL, $2) < 0) YYABORT; }
 | symbol FROM CF_SYM_KNOWN { if (proto_config_set_name(cx, $1, $3) < 0) YYABORT; }
 ;

proto_item:
   /* empty */
 | DISABLED bool { cx->this_proto->disabled = $2; }
 | DEBUG proto_debug_mask { cx->this_proto->debug = $2; }
 | DESCRIPTION text { cx->this_proto->dsc = $2; }
 | ROUTER ID idval { cx->this_proto->router_id = $3; }
 | thread_group { cx->this_proto->thread_group = $1; }
 ;

/* Channels: `ipv4 [{ table t; import all; ... }]` inside a protocol. */
proto_channel: channel_start channel_opt_list {
    if (channel_config_finish(cx) < 0) YYABORT;
  } ;
channel_start: net_type {
    if (channel_config_start(cx, $1) < 0) YYABORT;
  } ;
channel_opt_list: /* empty */ | '{' channel_items '}' ;
channel_items: /* empty */ | channel_items channel_item ';' ;
channel_item:
   TABLE rtable {
     /* A channel without a net type (pipe) takes the table's. */
     if (cx->this_channel->net_type && $2->net_type != cx->this_channel->net_type)
       cf_error("Incompatible table type");
     cx->this_channel->table = $2;
   }
 | IMPORT ALL { cx->this_channel->in_filter = FILTER_ACCEPT; cx->this_channel->in_filter_set = 1; }
 | IMPORT NONE { cx->this_channel->in_filter = FILTER_REJECT; cx->this_channel->in_filter_set = 1; }
 | EXPORT ALL { cx->this_channel->out_filter = FILTER_ACCEPT; cx->this_channel->out_filter_set = 1; }
 | EXPORT NONE { cx->this_channel->out_filter = FILTER_REJECT; cx->this_channel->out_filter_set = 1; }
 | PREFERENCE expr {
     if ($2 > 0xffff) cf_error("Preference must be in range 0-65535");
     cx->this_channel->preference = $2;
   }
 | DEBUG proto_debug_mask { cx->this_channel->debug = $2; }
 | IMPORT TABLE bool { cx->this_channel->import_table = $3; }
 | EXPORT TABLE bool { cx->this_channel->export_table = $3; }
 | RPKI RELOAD bool { cx->this_channel->rpki_reload = $3; }
 | RECEIVE LIMIT expr limit_action { cx->this_channel->rx_limit = (struct channel_limit){ $3, $4 }; }
 | RECEIVE LIMIT OFF { cx->this_channel->rx_limit.max = 0; }
 | IMPORT LIMIT expr limit_action { cx->this_channel->in_limit = (struct channel_limit){ $3, $4 }; }
 | IMPORT LIMIT OFF { cx->this_channel->in_limit.max = 0; }
 | EXPORT LIMIT expr limit_action { cx->this_channel->out_limit = (struct channel_limit){ $3, $4 }; }
 | EXPORT LIMIT OFF { cx->this_channel->out_limit.max = 0; }
 ;

limit_action:
   /* empty */ { $$ = LIMIT_DISABLE; }
 | ACTION WARN { $$ = LIMIT_WARN; }
 | ACTION BLOCK { $$ = LIMIT_BLOCK; }
 | ACTION RESTART { $$ = LIMIT_RESTART; }
 | ACTION DISABLE { $$ = LIMIT_DISABLE; }
 ;

/* CLI commands */

cli_cmd: SHOW STATUS END { cmd_show_status(cx->cli); } ;
cli_cmd: SHOW MEMORY END { cmd_show_memory(cx->cli); } ;
cli_cmd: SHOW INTERFACES END { cmd_show_interfaces(cx->cli, 0); } ;
cli_cmd: SHOW INTERFACES SUMMARY END { cmd_show_interfaces(cx->cli, 1); } ;

cli_cmd: SHOW SYMBOLS END { cmd_show_symbols(cx->cli, -1, NULL); } ;
cli_cmd: SHOW SYMBOLS TABLE END { cmd_show_symbols(cx->cli, SYM_TABLE, NULL); } ;
cli_cmd: SHOW SYMBOLS FILTER END { cmd_show_symbols(cx->cli, SYM_FILTER, NULL); } ;
cli_cmd: SHOW SYMBOLS FUNCTION END { cmd_show_symbols(cx->cli, SYM_FUNCTION, NULL); } ;
cli_cmd: SHOW SYMBOLS PROTOCOL END { cmd_show_symbols(cx->cli, SYM_PROTO, NULL); } ;
cli_cmd: SHOW SYMBOLS TEMPLATE END { cmd_show_symbols(cx->cli, SYM_TEMPLATE, NULL); } ;
cli_cmd: SHOW SYMBOLS symbol END { cmd_show_symbols(cx->cli, -1, $3); } ;

cli_cmd: SHOW PROTOCOLS proto_args END { cmd_show_protocols(cx->cli, $3); } ;
proto_args:
   /* empty */ { $$ = cx->pa = cf_alloc(cx, sizeof(struct show_proto_args)); }
 | proto_args ALL { $$ = $1; $$->verbose = 1; }
 | proto_args CF_SYM_KNOWN {
     $$ = $1;
     if ($2->class != SYM_PROTO) cf_error("Protocol name expected");
     $$->name = $2->name;
   }
 | proto_args TEXT { $$ = $1; $$->pattern = $2; }
 ;

proto_pattern:
   CF_SYM_KNOWN { if ($1->class != SYM_PROTO) cf_error("Protocol name expected"); $$ = $1; }
 ;

cli_cmd: DISABLE proto_pattern opttext END { cmd_proto_action(cx->cli, PROTO_CMD_DISABLE, $2->name, NULL, $3); } ;
cli_cmd: DISABLE TEXT opttext END { cmd_proto_action(cx->cli, PROTO_CMD_DISABLE, NULL, $2, $3); } ;
cli_cmd: DISABLE ALL opttext END { cmd_proto_action(cx->cli, PROTO_CMD_DISABLE, NULL, "*", $3); } ;
cli_cmd: ENABLE proto_pattern opttext END { cmd_proto_action(cx->cli, PROTO_CMD_ENABLE, $2->name, NULL, $3); } ;
cli_cmd: ENABLE TEXT opttext END { cmd_proto_action(cx->cli, PROTO_CMD_ENABLE, NULL, $2, $3); } ;
cli_cmd: ENABLE ALL opttext END { cmd_proto_action(cx->cli, PROTO_CMD_ENABLE, NULL, "*", $3); } ;
cli_cmd: RESTART proto_pattern opttext END { cmd_proto_action(cx->cli, PROTO_CMD_RESTART, $2->name, NULL, $3); } ;
cli_cmd: RESTART TEXT opttext END { cmd_proto_action(cx->cli, PROTO_CMD_RESTART, NULL, $2, $3); } ;
cli_cmd: RESTART ALL opttext END { cmd_proto_action(cx->cli, PROTO_CMD_RESTART, NULL, "*", $3); } ;

cli_cmd: RELOAD proto_pattern END { cmd_proto_action(cx->cli, PROTO_CMD_RELOAD, $2->name, NULL, NULL); } ;
cli_cmd: RELOAD TEXT END { cmd_proto_action(cx->cli, PROTO_CMD_RELOAD, NULL, $2, NULL); } ;
cli_cmd: RELOAD ALL END { cmd_proto_action(cx->cli, PROTO_CMD_RELOAD, NULL, "*", NULL); } ;
cli_cmd: RELOAD IN proto_pattern END { cmd_proto_action(cx->cli, PROTO_CMD_RELOAD_IN, $3->name, NULL, NULL); } ;
cli_cmd: RELOAD IN TEXT END { cmd_proto_action(cx->cli, PROTO_CMD_RELOAD_IN, NULL, $3, NULL); } ;
cli_cmd: RELOAD IN ALL END { cmd_proto_action(cx->cli, PROTO_CMD_RELOAD_IN, NULL, "*", NULL); } ;
cli_cmd: RELOAD OUT proto_pattern END { cmd_proto_action(cx->cli, PROTO_CMD_RELOAD_OUT, $3->name, NULL, NULL); } ;
cli_cmd: RELOAD OUT TEXT END { cmd_proto_action(cx->cli, PROTO_CMD_RELOAD_OUT, NULL, $3, NULL); } ;
cli_cmd: RELOAD OUT ALL END { cmd_proto_action(cx->cli, PROTO_CMD_RELOAD_OUT, NULL, "*", NULL); } ;

cli_cmd: CONFIGURE cfg_name cfg_timeout END { cmd_configure(cx->cli, $2, CFG_NORMAL, $3); } ;
cli_cmd: CONFIGURE SOFT cfg_name cfg_timeout END { cmd_configure(cx->cli, $3, CFG_SOFT, $4); } ;
cli_cmd: CONFIGURE CHECK cfg_name END { cmd_configure(cx->cli, $3, CFG_CHECK, 0); } ;
cli_cmd: CONFIGURE CONFIRM END { cmd_configure_confirm(cx->cli); } ;
cli_cmd: CONFIGURE UNDO END { cmd_configure_undo(cx->cli); } ;
cli_cmd: CONFIGURE STATUS END { cmd_configure_status(cx->cli); } ;
cfg_name: /* empty */ { $$ = NULL; } | TEXT ;
cfg_timeout: /* empty */ { $$ = 0; } | TIMEOUT { $$ = 300; } | TIMEOUT expr { $$ = $2; } ;

cli_cmd: DOWN END { cmd_down(cx->cli); } ;
cli_cmd: GRACEFUL RESTART END { cmd_graceful_restart(cx->cli); } ;
cli_cmd: RESTRICT END { cmd_restrict(cx->cli); } ;
cli_cmd: DUMP RESOURCES END { cmd_dump(cx->cli, DUMP_RESOURCES); } ;
cli_cmd: DUMP PROTOCOLS END { cmd_dump(cx->cli, DUMP_PROTOCOLS); } ;
cli_cmd: DUMP ROUTES END { cmd_dump(cx->cli, DUMP_ROUTES); } ;
cli_cmd: DUMP SOCKETS END { cmd_dump(cx->cli, DUMP_SOCKETS); } ;
cli_cmd: DUMP EVENTS END { cmd_dump(cx->cli, DUMP_EVENTS); } ;
cli_cmd: DUMP INTERFACES END { cmd_dump(cx->cli, DUMP_INTERFACES); } ;
cli_cmd: DUMP NEIGHBORS END { cmd_dump(cx->cli, DUMP_NEIGHBORS); } ;
cli_cmd: DUMP ATTRIBUTES END { cmd_dump(cx->cli, DUMP_ATTRIBUTES); } ;
cli_cmd: DUMP FILTER ALL END { cmd_dump(cx->cli, DUMP_FILTERS); } ;

/* `show` commands of protocols this daemon does not have: BIRD 2's
 * replies when none of them runs. (`show ospf lsadb` takes only a name.) */
/* The END is part of these, not an empty alternative, so that a wrong
 * word gets BIRD's "expecting END or CF_SYM_KNOWN". */
absent_proto:
   END { $$ = NULL; }
 | CF_SYM_KNOWN END { if ($1->class != SYM_PROTO) cf_error("Protocol name required"); $$ = $1; }
 ;
absent_iface:
   absent_proto
 | TEXT END { $$ = NULL; }
 | CF_SYM_KNOWN TEXT END { if ($1->class != SYM_PROTO) cf_error("Protocol name required"); $$ = $1; }
 ;
cli_cmd: SHOW OSPF absent_proto { ABSENT("OSPF", $3); } ;
cli_cmd: SHOW OSPF NEIGHBORS absent_iface { ABSENT("OSPF", $4); } ;
cli_cmd: SHOW OSPF INTERFACE absent_iface { ABSENT("OSPF", $4); } ;
cli_cmd: SHOW OSPF TOPOLOGY absent_proto { ABSENT("OSPF", $4); } ;
cli_cmd: SHOW OSPF TOPOLOGY ALL absent_proto { ABSENT("OSPF", $5); } ;
cli_cmd: SHOW OSPF STATE absent_proto { ABSENT("OSPF", $4); } ;
cli_cmd: SHOW OSPF STATE ALL absent_proto { ABSENT("OSPF", $5); } ;
cli_cmd: SHOW OSPF LSADB absent_proto { ABSENT("OSPF", $4); } ;
cli_cmd: SHOW RIP INTERFACES absent_iface { ABSENT("RIP", $4); } ;
cli_cmd: SHOW RIP NEIGHBORS absent_iface { ABSENT("RIP", $4); } ;
cli_cmd: SHOW BABEL INTERFACES absent_iface { ABSENT("Babel", $4); } ;
cli_cmd: SHOW BABEL NEIGHBORS absent_iface { ABSENT("Babel", $4); } ;
cli_cmd: SHOW BABEL ENTRIES absent_proto { ABSENT("Babel", $4); } ;
cli_cmd: SHOW BABEL ROUTES absent_proto { ABSENT("Babel", $4); } ;
cli_cmd: SHOW BFD SESSIONS absent_proto { ABSENT("BFD", $4); } ;

/* echo all|off|{ classes } [size]: not a restricted command in BIRD 2 */
cli_cmd: ECHO echo_mask echo_size END { cli_echo_set(cx->cli, $2, $3); cli_done(cx->cli); } ;
echo_mask: ALL { $$ = ~0U; } | OFF { $$ = 0; } | '{' log_mask_list '}' { $$ = $2; } ;
echo_size:
   /* empty */ { $$ = 4096; }
 | NUM {
     if ($1 < 256 || $1 > 65536) cf_error("Invalid log buffer size");
     $$ = $1;
   }
 ;

/* debug|mrtdump (proto | proto.channel | "pattern" | all) mask */
cli_cmd: DEBUG proto_target proto_debug_mask END { cmd_proto_debug(cx->cli, $2, $3); } ;
cli_cmd: MRTDUMP proto_target0 mrtdump_mask END { cmd_proto_mrtdump(cx->cli, $2, $3); } ;
proto_target: proto_target0
 | CF_SYM_KNOWN '.' net_type {
     if ($1->class != SYM_PROTO) cf_error("Protocol name required");
     $$ = cf_alloc(cx, sizeof(struct proto_target));
     $$->name = $1->name;
     $$->channel_type = $3;
   }
 ;
proto_target0:
   CF_SYM_KNOWN {
     if ($1->class != SYM_PROTO) cf_error("Protocol name required");
     $$ = cf_alloc(cx, sizeof(struct proto_target));
     $$->name = $1->name;
   }
 | TEXT { $$ = cf_alloc(cx, sizeof(struct proto_target)); $$->pattern = $1; }
 | ALL { $$ = cf_alloc(cx, sizeof(struct proto_target)); $$->pattern = "*"; }
 ;
mrtdump_mask:
   ALL { $$ = ~0U; }
 | OFF { $$ = 0; }
 | '{' mrtdump_list '}' { $$ = $2; }
 ;
mrtdump_list: mrtdump_flag | mrtdump_list ',' mrtdump_flag { $$ = $1 | $3; } ;
mrtdump_flag: STATES { $$ = 1; } | MESSAGES { $$ = 2; } ;

/* show route [<prefix>|for <prefix|ip>|in <prefix>] [table t|all] [all] [primary] [protocol p] [count|stats] */
cli_cmd: SHOW ROUTE r_args END { cmd_show_route(cx->cli, $3); } ;
r_args:
   /* empty */ { $$ = cx->ra = show_route_args_new(cx->cli); }
 | r_args net_any {
     $$ = $1;
     if ($$->have_net) cf_error("Only one prefix expected");
     $$->net = $2; $$->have_net = 1; $$->mode = SRA_EXACT;
   }
 | r_args FOR net_ip {
     $$ = $1;
     if ($$->have_net) cf_error("Only one prefix expected");
     $$->net = $3; $$->have_net = 1; $$->mode = SRA_FOR;
   }
 | r_args FOR IP4 {
     $$ = $1;
     if ($$->have_net) cf_error("Only one prefix expected");
     net_fill_ip4(&$$->net, $3, 32); $$->have_net = 1; $$->mode = SRA_FOR;
   }
 | r_args FOR IP6 {
     $$ = $1;
     if ($$->have_net) cf_error("Only one prefix expected");
     net_fill_ip6(&$$->net, $3, 128); $$->have_net = 1; $$->mode = SRA_FOR;
   }
 | r_args FOR CF_SYM_KNOWN {
     $$ = $1;
     if ($$->have_net) cf_error("Only one prefix expected");
     if ($3->class == SYM_CONSTANT && $3->val->type == CFV_NET) $$->net = $3->val->net;
     else if ($3->class == SYM_CONSTANT && $3->val->type == CFV_IP)
       net_fill_ipa(&$$->net, $3->val->ip, ipa_is_ip4($3->val->ip) ? 32 : 128);
     else cf_error("IP address or network expected");
     $$->have_net = 1; $$->mode = SRA_FOR;
   }
 | r_args IN net_any {
     $$ = $1;
     if ($$->have_net) cf_error("Only one prefix expected");
     $$->net = $3; $$->have_net = 1; $$->mode = SRA_IN;
   }
 | r_args TABLE CF_SYM_KNOWN {
     $$ = $1;
     if ($3->class != SYM_TABLE) cf_error("%s is not a table", $3->name);
     if (show_route_args_add_table($$, SRA_TABLE, $3->name, 0) < 0) cf_error("Too many tables");
     $$->tables_direct = 1;
   }
 | r_args IMPORT TABLE CF_SYM_KNOWN '.' net_type {
     $$ = $1;
     if ($4->class != SYM_PROTO) cf_error("%s is not a protocol", $4->name);
     if (show_route_args_add_table($$, SRA_IMPORT_TABLE, $4->name, $6) < 0) cf_error("Too many tables");
     $$->tables_direct = 1;
   }
 | r_args EXPORT TABLE CF_SYM_KNOWN '.' net_type {
     $$ = $1;
     if ($4->class != SYM_PROTO) cf_error("%s is not a protocol", $4->name);
     if (show_route_args_add_table($$, SRA_EXPORT_TABLE, $4->name, $6) < 0) cf_error("Too many tables");
     $$->tables_direct = 1;
   }
 | r_args TABLE ALL { $$ = $1; $$->all_tables = 1; $$->tables_direct = 1; }
 | r_args ALL { $$ = $1; $$->verbose = 1; }
 | r_args PRIMARY { $$ = $1; $$->primary_only = 1; }
 | r_args FILTERED { $$ = $1; $$->filtered = 1; }
 | r_args COUNT { $$ = $1; $$->stats = 2; }
 | r_args STATS { $$ = $1; $$->stats = 1; }
 | r_args PROTOCOL CF_SYM_KNOWN {
     $$ = $1;
     if ($3->class != SYM_PROTO) cf_error("%s is not a protocol", $3->name);
     $$->proto_name = $3->name;
     $$->tables_direct = 0;
   }
 ;

%%code
