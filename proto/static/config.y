/* Static protocol grammar. */
%%header
#include "proto/static/static.h"

%%keywords static route via blackhole unreachable prohibit drop reject dev recursive onlink check link igp
%%keywords providers transit

%%grammar
proto: static_proto '}' { if (proto_config_end(cx) < 0) YYABORT; } ;

static_proto_start: proto_start STATIC { if (proto_config_begin(cx, &proto_static) < 0) YYABORT; } ;

static_proto:
   static_proto_start proto_name '{'
 | static_proto proto_item ';'
 | static_proto proto_channel ';'
 | static_proto CHECK LINK bool ';' { static_cfg(cx)->check_link = $4; }
 | static_proto IGP TABLE rtable ';' { }
 | static_proto stat_route stat_route_opts ';' {
     const char *e = static_route_add(static_cfg(cx), cx->this_item);
     if (e) cf_error("%s", e);
   }
 /* No destination (ROA records). Spelled out rather than as an empty
  * alternative of stat_route: that would be a default reduction after the
  * net, and a misspelled destination would then report "expecting ONLINK
  * or ';' or '{'" instead of BIRD's plain "unexpected ...". */
 | static_proto stat_route0 stat_route_opts1 ';' {
     const char *e = static_route_add(static_cfg(cx), cx->this_item);
     if (e) cf_error("%s", e);
   }
 | static_proto stat_route0 ';' {
     const char *e = static_route_add(static_cfg(cx), cx->this_item);
     if (e) cf_error("%s", e);
   }
 ;

stat_route0: ROUTE net_any {
    cx->this_item = static_route_new(cx, &$2);
  }
 /* ROA records: `route 10.0.0.0/16 max 24 as 65001;` (no destination) */
 | ROUTE net_roa {
    cx->this_item = static_route_new(cx, &$2);
  }
 /* BIRD 3: `route aspa 65001 providers 65002, 65003;` / `route aspa 65001 transit;` */
 | ROUTE ASPA expr {
    net_addr n;
    net_fill_aspa(&n, $3);
    cx->this_item = static_route_new(cx, &n);
  } ;

stat_aspa_providers:
   expr { static_route_add_provider(cx, cx->this_item, $1); }
 | stat_aspa_providers ',' expr { static_route_add_provider(cx, cx->this_item, $3); }
 ;

stat_route:
   stat_route0 VIA ipa { static_route_set_via(cx->this_item, $3, NULL); }
 | stat_route0 VIA ipa DEV text { static_route_set_via(cx->this_item, $3, $5); }
 | stat_route0 VIA TEXT { static_route_set_dev(cx->this_item, $3); }
 | stat_route0 DEV text { static_route_set_dev(cx->this_item, $3); }
 | stat_route0 BLACKHOLE { static_route_set_dest(cx->this_item, RTD_BLACKHOLE); }
 | stat_route0 DROP { static_route_set_dest(cx->this_item, RTD_BLACKHOLE); }
 | stat_route0 UNREACHABLE { static_route_set_dest(cx->this_item, RTD_UNREACHABLE); }
 | stat_route0 REJECT { static_route_set_dest(cx->this_item, RTD_UNREACHABLE); }
 | stat_route0 PROHIBIT { static_route_set_dest(cx->this_item, RTD_PROHIBIT); }
 | stat_route0 PROVIDERS stat_aspa_providers
 | stat_route0 TRANSIT { ((struct static_route *) cx->this_item)->aspa_set = 1; }
 ;

stat_route_opts: /* empty */ | stat_route_opts1 ;
stat_route_opts1: stat_route_opt | stat_route_opts1 stat_route_opt ;
stat_route_opt: ONLINK bool { static_route_set_onlink(cx->this_item, $2); } ;
/* route ... { bgp_med = 10; bgp_community.add((1,2)); }: attributes set by filter statements */
stat_route_opt: '{' { f_inline_start(cx); } cmds '}' {
    struct filter *f = f_inline_end(cx, $3);
    if (!f) YYABORT;
    ((struct static_route *) cx->this_item)->cmds = f;
  } ;

/* CLI */
cli_cmd: SHOW STATIC END { static_show(cx->cli, NULL); } ;
cli_cmd: SHOW STATIC CF_SYM_KNOWN END {
    if ($3->class != SYM_PROTO) cf_error("Protocol name required");
    static_show(cx->cli, $3->name);
  } ;

%%code
