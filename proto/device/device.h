/*
 * DOC: The device protocol: learns the system's interfaces.
 */
#ifndef PROTO_DEVICE_DEVICE_H
#define PROTO_DEVICE_DEVICE_H

#include "nest/proto.h"
#include "conf/cf_context.h"

#define DEVICE_MAX_PATTERNS 32

struct device_config {
  struct proto_config c;
  btime scan_time;
  const char *patterns[DEVICE_MAX_PATTERNS];
  uint pattern_count;
};

struct device_proto {
  struct proto p;
  struct timer scan_timer;    /* owner: proto loop */
};

extern const struct proto_class proto_device;

static inline struct device_config *device_cfg(struct cf_context *cx)
{ return (struct device_config *) cx->this_proto; }
void device_cfg_add_iface(struct device_config *dc, const char *pattern);

#endif
