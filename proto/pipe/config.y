/* Pipe protocol grammar (BIRD 2: table, peer table, import, export). */
%%header
#include "proto/pipe/pipe.h"

%%keywords pipe peer

%%grammar
proto: pipe_proto '}' { if (proto_config_end(cx) < 0) YYABORT; } ;

pipe_proto_start: proto_start PIPE {
    if (proto_config_begin(cx, &proto_pipe) < 0) YYABORT;
  } ;

pipe_proto:
   pipe_proto_start proto_name '{' { cx->this_channel = pipe_main_channel(cx); }
 | pipe_proto channel_item ';'
 | pipe_proto DISABLED bool ';' { cx->this_proto->disabled = $3; }
 | pipe_proto DESCRIPTION text ';' { cx->this_proto->dsc = $3; }
 | pipe_proto PEER TABLE rtable ';' { pipe_cfg(cx)->peer = $4; }
 ;

%%code
