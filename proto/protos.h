/*
 * DOC: The protocols this daemon is built with.
 *
 * protos_build_all() registers every protocol class (proto_build()) at
 * start-up, before a config is parsed: the daemon's main() and the config
 * fuzzer (filter/f_fuzz.h) call it, so that both know the same protocols.
 * A new protocol adds its line here.
 */
#ifndef PROTO_PROTOS_H
#define PROTO_PROTOS_H

void protos_build_all(void);

#endif
