/* BGP protocol grammar (BIRD 2/3 `protocol bgp` syntax). */
%%header
#include "proto/bgp/bgp.h"

%%keywords bgp local neighbor port as internal external passive multihop direct source address
%%keywords strict bind hold keepalive connect retry delay wait forget startup rs rr client cluster
%%keywords refresh as4 extended messages capabilities graceful aware password ttl security
%%keywords allow enforce first bgp_local_pref bgp_med interpret communities deterministic med
%%keywords prefer older metric path advertise next hop self keep add paths rx tx gateway
%%keywords mandatory secondary aigp originate missing lladdr lived stale sets ignore drop
%%keywords confederation member role roles require provider customer rs_server rs_client peer
%%keywords range dynamic digits

%%decls
%type <i> bgp_role_name

%%grammar
proto: bgp_proto '}' { if (proto_config_end(cx) < 0) YYABORT; } ;

bgp_proto_start: proto_start BGP { if (proto_config_begin(cx, &proto_bgp) < 0) YYABORT; } ;

bgp_proto:
   bgp_proto_start proto_name '{'
 | bgp_proto proto_item ';'
 | bgp_proto bgp_channel ';'
 | bgp_proto LOCAL bgp_local_opts ';'
 | bgp_proto NEIGHBOR bgp_neighbor_opts ';'
 | bgp_proto NEIGHBOR RANGE net_ip bgp_neighbor_opts ';' {
     /* checked at the end, where BIRD reports it */
     if (ipa_nonzero(bgp_cfg(cx)->remote_ip) || bgp_cfg(cx)->remote_range.type)
       cf_error("Only one neighbor per BGP instance is allowed");
     /* whole bytes zeroed: reconfigure compares the config with memcmp */
     memset(&bgp_cfg(cx)->remote_range, 0, sizeof(net_addr));
     net_copy(&bgp_cfg(cx)->remote_range, &$4);
   }
 | bgp_proto PASSIVE bool ';' { bgp_cfg(cx)->passive = $3; }
 | bgp_proto MULTIHOP ';' { bgp_cfg(cx)->multihop = 64; }
 | bgp_proto MULTIHOP expr ';' {
     if ($3 < 1 || $3 > 255) cf_error("Multihop must be in range 1-255");
     bgp_cfg(cx)->multihop = $3;
   }
 | bgp_proto DIRECT ';' { bgp_cfg(cx)->multihop = 0; }
 | bgp_proto SOURCE ADDRESS ipa ';' { bgp_cfg(cx)->local_ip = $4; }
 | bgp_proto STRICT BIND bool ';' { bgp_cfg(cx)->strict_bind = $4; }
 | bgp_proto HOLD TIME expr ';' {
     if ($4 && ($4 < 3 || $4 > 65535)) cf_error("Hold time must be in range 3-65535 or zero");
     bgp_cfg(cx)->hold_time = $4;
   }
 | bgp_proto STARTUP HOLD TIME expr ';' { bgp_cfg(cx)->startup_hold_time = $5; }
 | bgp_proto KEEPALIVE TIME expr ';' { bgp_cfg(cx)->keepalive_time = $4; }
 | bgp_proto CONNECT RETRY TIME expr ';' { bgp_cfg(cx)->connect_retry_time = $5; }
 | bgp_proto CONNECT DELAY TIME expr ';' { bgp_cfg(cx)->connect_delay_time = $5; }
 | bgp_proto ERROR WAIT TIME expr ',' expr ';' {
     if ($5 > $7) cf_error("Error wait time must be a range");
     bgp_cfg(cx)->error_wait_min = $5; bgp_cfg(cx)->error_wait_max = $7;
   }
 | bgp_proto ERROR FORGET TIME expr ';' { bgp_cfg(cx)->error_forget_time = $5; }
 | bgp_proto RS CLIENT bool ';' { bgp_cfg(cx)->rs_client = $4; }
 | bgp_proto RR CLIENT bool ';' { bgp_cfg(cx)->rr_client = $4; }
 | bgp_proto RR CLUSTER ID idval ';' { bgp_cfg(cx)->rr_cluster_id = $5; }
 | bgp_proto CONFEDERATION expr ';' { bgp_cfg(cx)->confederation = $3; }
 | bgp_proto CONFEDERATION MEMBER bool ';' { bgp_cfg(cx)->confederation_member = $4; }
 | bgp_proto LOCAL ROLE bgp_role_name ';' { bgp_cfg(cx)->local_role = $4; }
 | bgp_proto REQUIRE ROLES bool ';' { bgp_cfg(cx)->require_roles = $4; }
 | bgp_proto ENABLE ROUTE REFRESH bool ';' { bgp_cfg(cx)->enable_refresh = $5; }
 | bgp_proto ENABLE AS4 bool ';' { bgp_cfg(cx)->enable_as4 = $4; }
 | bgp_proto ENABLE EXTENDED MESSAGES bool ';' { bgp_cfg(cx)->enable_ext_msg = $5; }
 | bgp_proto CAPABILITIES bool ';' { bgp_cfg(cx)->capabilities = $3; }
 | bgp_proto GRACEFUL RESTART bool ';' { bgp_cfg(cx)->gr_mode = $4 ? BGP_GR_ABLE : BGP_GR_OFF; }
 | bgp_proto GRACEFUL RESTART AWARE ';' { bgp_cfg(cx)->gr_mode = BGP_GR_AWARE; }
 | bgp_proto GRACEFUL RESTART TIME expr ';' {
     if ($5 > 4095) cf_error("Graceful restart time must be in range 0-4095");
     bgp_cfg(cx)->gr_time = $5;
   }
 | bgp_proto LONG LIVED GRACEFUL RESTART bool ';' { bgp_cfg(cx)->llgr_mode = $6 ? BGP_GR_ABLE : BGP_GR_OFF; }
 | bgp_proto LONG LIVED GRACEFUL RESTART AWARE ';' { bgp_cfg(cx)->llgr_mode = BGP_GR_AWARE; }
 | bgp_proto LONG LIVED STALE TIME expr ';' {
     if ($6 > 16777215) cf_error("Long-lived stale time must be in range 0-16777215");
     bgp_cfg(cx)->llgr_time = $6;
   }
 | bgp_proto PASSWORD text ';' { bgp_cfg(cx)->password = $3; }
 | bgp_proto TTL SECURITY bool ';' { bgp_cfg(cx)->ttl_security = $4; }
 | bgp_proto INTERFACE text ';' { bgp_cfg(cx)->iface = $3; }
 | bgp_proto ALLOW LOCAL AS ';' { bgp_cfg(cx)->allow_local_as = -1; }
 | bgp_proto ALLOW LOCAL AS expr ';' { bgp_cfg(cx)->allow_local_as = $5; }
 | bgp_proto ENFORCE FIRST AS bool ';' { bgp_cfg(cx)->enforce_first_as = $5; }
 | bgp_proto ALLOW AS SETS bool ';' { bgp_cfg(cx)->allow_as_sets = $5; }
 | bgp_proto DEFAULT BGP_LOCAL_PREF expr ';' { bgp_cfg(cx)->default_local_pref = $4; }
 | bgp_proto DEFAULT BGP_MED expr ';' { bgp_cfg(cx)->default_med = $4; }
 | bgp_proto INTERPRET COMMUNITIES bool ';' { bgp_cfg(cx)->interpret_communities = $4; }
 | bgp_proto DETERMINISTIC MED bool ';' { bgp_cfg(cx)->deterministic_med = $4; }
 | bgp_proto PREFER OLDER bool ';' { bgp_cfg(cx)->prefer_older = $4; }
 | bgp_proto MED METRIC bool ';' { bgp_cfg(cx)->med_metric = $4; }
 | bgp_proto IGP METRIC bool ';' { bgp_cfg(cx)->igp_metric = $4; }
 | bgp_proto PATH METRIC bool ';' { bgp_cfg(cx)->path_metric = $4; }
 | bgp_proto ADVERTISE HOSTNAME bool ';' { bgp_cfg(cx)->hostname = $4 ? config_hostname(cx) : NULL; }
 | bgp_proto DYNAMIC NAME text ';' {
     /* BIRD's limit: room for the number in a name of 64 bytes */
     if (strchr($4, '%')) cf_error("Forbidden character '%%' in dynamic name");
     if (strlen($4) > 48) cf_error("Dynamic name too long");
     bgp_cfg(cx)->dynamic_name = $4;
   }
 | bgp_proto DYNAMIC NAME DIGITS expr ';' {
     if ($5 > 10) cf_error("Dynamic name digits must be at most 10");
     bgp_cfg(cx)->dynamic_name_digits = $5;
   }
 ;

/* RFC 9234 3: our role toward the neighbor */
bgp_role_name:
   PEER { $$ = BGP_ROLE_PEER; }
 | PROVIDER { $$ = BGP_ROLE_PROVIDER; }
 | CUSTOMER { $$ = BGP_ROLE_CUSTOMER; }
 | RS_SERVER { $$ = BGP_ROLE_RS; }
 | RS_CLIENT { $$ = BGP_ROLE_RS_CLIENT; }
 ;

bgp_lladdr_mode: SELF | DROP | IGNORE ;

bgp_local_opts:
   /* empty */
 | bgp_local_opts ipa { bgp_cfg(cx)->local_ip = $2; }
 | bgp_local_opts PORT expr {
     if ($3 < 1 || $3 > 65535) cf_error("Invalid port number");
     bgp_cfg(cx)->local_port = $3;
   }
 | bgp_local_opts AS expr { bgp_cfg(cx)->local_as = $3; }
 ;

bgp_neighbor_opts:
   /* empty */
 | bgp_neighbor_opts ipa {
     if (ipa_nonzero(bgp_cfg(cx)->remote_ip) || bgp_cfg(cx)->remote_range.type)
       cf_error("Only one neighbor per BGP instance is allowed");
     bgp_cfg(cx)->remote_ip = $2;
   }
 | bgp_neighbor_opts PORT expr {
     if ($3 < 1 || $3 > 65535) cf_error("Invalid port number");
     bgp_cfg(cx)->remote_port = $3;
   }
 | bgp_neighbor_opts AS expr { bgp_cfg(cx)->remote_as = $3; }
 | bgp_neighbor_opts INTERNAL { bgp_cfg(cx)->peer_type = BGP_PT_INTERNAL; }
 | bgp_neighbor_opts EXTERNAL { bgp_cfg(cx)->peer_type = BGP_PT_EXTERNAL; }
 ;

bgp_channel: channel_start bgp_channel_opt_list {
    if (channel_config_finish(cx) < 0) YYABORT;
  } ;
bgp_channel_opt_list: /* empty */ | '{' bgp_channel_items '}' ;
bgp_channel_items: /* empty */ | bgp_channel_items bgp_channel_item ';' ;
bgp_channel_item:
   channel_item
 | NEXT HOP SELF bool { bgp_chan_cfg(cx)->next_hop_mode = $4 ? BGP_NH_SELF : BGP_NH_DEFAULT; }
 | NEXT HOP KEEP bool { bgp_chan_cfg(cx)->next_hop_mode = $4 ? BGP_NH_KEEP : BGP_NH_DEFAULT; }
 | NEXT HOP ADDRESS ipa { bgp_chan_cfg(cx)->next_hop_addr = $4; }
 | ADD PATHS RX { bgp_chan_cfg(cx)->add_path = BGP_ADD_PATH_RX; }
 | ADD PATHS TX { bgp_chan_cfg(cx)->add_path = BGP_ADD_PATH_TX; }
 | ADD PATHS bool { bgp_chan_cfg(cx)->add_path = $3 ? BGP_ADD_PATH_RX | BGP_ADD_PATH_TX : 0; }
 | GATEWAY DIRECT { bgp_chan_cfg(cx)->gw_mode = BGP_GW_DIRECT; }
 | GATEWAY RECURSIVE { bgp_chan_cfg(cx)->gw_mode = BGP_GW_RECURSIVE; }
 | IGP TABLE rtable {
     /* BIRD keeps one per next-hop family; a mismatch with the channel is
      * reported at the end of the protocol, in recursive mode only */
     if ($3->net_type == NET_IP4) bgp_chan_cfg(cx)->igp_table4 = $3;
     else if ($3->net_type == NET_IP6) bgp_chan_cfg(cx)->igp_table6 = $3;
     else cf_error("Mismatched IGP table type");
   }
 | MANDATORY bool { bgp_chan_cfg(cx)->mandatory = $2; }
 | SECONDARY bool { cx->this_channel->secondary = $2; }
 | AIGP bool { bgp_chan_cfg(cx)->aigp = $2; bgp_chan_cfg(cx)->aigp_set = 1; bgp_chan_cfg(cx)->aigp_originate = 0; }
 | AIGP ORIGINATE { bgp_chan_cfg(cx)->aigp = bgp_chan_cfg(cx)->aigp_set = bgp_chan_cfg(cx)->aigp_originate = 1; }
 | MISSING LLADDR bgp_lladdr_mode {
     /* BIRD 1's choice for an IPv6 next hop without a link-local address
      * toward a direct peer; BIRD 2 decides that itself and only warns. */
     log_msg(L_WARN, "%s.%s: Missing lladdr option is deprecated and ignored, remove it", cx->this_proto->name,
             cx->this_channel->name);
   }
 | EXTENDED NEXT HOP bool { bgp_chan_cfg(cx)->ext_next_hop = $4; }
 | GRACEFUL RESTART bool { bgp_chan_cfg(cx)->gr_able = $3; bgp_chan_cfg(cx)->gr_able_set = 1; }
 | LONG LIVED GRACEFUL RESTART bool { bgp_chan_cfg(cx)->llgr_able = $5; bgp_chan_cfg(cx)->llgr_able_set = 1; }
 | LONG LIVED STALE TIME expr {
     if ($5 > 16777215) cf_error("Long-lived stale time must be in range 0-16777215");
     bgp_chan_cfg(cx)->llgr_time = $5;
     bgp_chan_cfg(cx)->llgr_time_set = 1;
   }
 ;

%%code
