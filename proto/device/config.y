/* Device protocol grammar. */
%%header
#include "proto/device/device.h"

%%keywords device scan interface

%%grammar
proto: device_proto '}' { if (proto_config_end(cx) < 0) YYABORT; } ;

device_proto_start: proto_start DEVICE { if (proto_config_begin(cx, &proto_device) < 0) YYABORT; } ;

device_proto:
   device_proto_start proto_name '{'
 | device_proto proto_item ';'
 | device_proto SCAN TIME expr ';' { device_cfg(cx)->scan_time = (btime) $4 * S_ 1; }
 | device_proto INTERFACE device_iface_list ';'
 ;

device_iface_list: device_iface | device_iface_list ',' device_iface ;
device_iface: TEXT { device_cfg_add_iface(device_cfg(cx), $1); } ;

%%code
