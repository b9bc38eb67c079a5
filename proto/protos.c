/*
 * DOC: Registration of the protocols this daemon is built with (see
 * proto/protos.h).
 */
#include "proto/protos.h"
#include "proto/bgp/bgp.h"
#include "proto/device/device.h"
#include "proto/pipe/pipe.h"
#include "proto/static/static.h"

void
protos_build_all(void)
{
  proto_build(&proto_device);
  proto_build(&proto_static);
  bgp_build();
  proto_build(&proto_pipe);
}
