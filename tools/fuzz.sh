#!/usr/bin/env bash
# Build a libFuzzer target (clang, ASan + UBSan) and run it.
#   tools/fuzz.sh TARGET [SECONDS]          default 60
# Targets:
#   bgp            BGP wire codec (proto/bgp/bgp_fuzz.c): UPDATE/OPEN bytes
#   filter-conf    config parser + filter compiler (filter/f_fuzz_conf.c):
#                  config text, seeded from test/filters, with a dictionary
#                  of the grammar's keywords; what compiles is run
#   filter-interp  filter interpreter (filter/f_fuzz_interp.c): bytes pick
#                  one of a fixed set of filters and the route it runs on
# Environment: FUZZ_DIR (build/corpus dir, default build-fuzz/TARGET),
#   CC (default clang), FUZZ_JOBS (parallel workers, default 1).
# The filter targets link against the daemon's libraries built with clang
# and coverage instrumentation in build-fuzz/obj (made on first use).
# Exits non-zero on any crash, leak, hang or sanitizer report; the
# reproducer is left in $FUZZ_DIR as crash-*/leak-*/timeout-*/oom-*:
# run it with $FUZZ_DIR/TARGET_fuzz FILE (dashes in TARGET as underscores).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
target=${1:?usage: tools/fuzz.sh bgp|filter-conf|filter-interp [SECONDS]}
secs=${2:-60}
dir=${FUZZ_DIR:-$top/build-fuzz/$target}
cc=${CC:-clang}
jobs=${FUZZ_JOBS:-1}
bin=$dir/${target//-/_}_fuzz
san=(-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
urcu=$(pkg-config --cflags --libs liburcu-memb liburcu-cds liburcu)

if ! command -v "$cc" >/dev/null; then
  echo "fuzz: $cc not found (apt-get install clang)" >&2
  exit 1
fi
mkdir -p "$dir/corpus"

build_bgp() {
  # config.h comes from a configured build; any of the usual places will do.
  local inc= d
  for d in "$top/build" "$top/build-asan" "$top"; do
    if [ -f "$d/config.h" ]; then inc="-I$d"; break; fi
  done
  "$cc" -std=gnu11 -g -O1 -D_GNU_SOURCE= -Wall -Wextra -Wno-unused-parameter \
    -Wno-missing-field-initializers -Wno-sign-compare "${san[@]}" -I"$top" $inc \
    "$top"/proto/bgp/bgp_fuzz.c "$top"/proto/bgp/bgp_attrs.c "$top"/proto/bgp/bgp_update.c \
    "$top"/proto/bgp/bgp_open.c "$top"/proto/bgp/bgp_aigp.c "$top"/lib/ip.c "$top"/lib/net.c "$top"/lib/printf.c \
    "$top"/lib/resource.c "$top"/lib/page_pool.c "$top"/lib/rcu_hash.c "$top"/lib/huge_alloc.c "$top"/lib/hash.c "$top"/lib/log.c "$top"/lib/timeutil.c \
    "$top"/lib/rcu.c "$top"/lib/rcu_call.c "$top"/nest/rt_attr.c $urcu -lpthread -o "$bin"
}

# The daemon's libraries, instrumented: one clang build shared by the filter targets.
build_daemon_libs() {
  local obj=$top/build-fuzz/obj
  [ -x "$top/configure" ] || (cd "$top" && autoreconf -fi >/dev/null 2>&1)
  mkdir -p "$obj"
  if [ ! -f "$obj/Makefile" ]; then
    (cd "$obj" && CC="$cc" CFLAGS="-g -O1 -fsanitize=fuzzer-no-link" "$top/configure" -q \
       --enable-sanitizers=address,undefined --disable-werror)
  fi
  make -C "$obj" -j"$(nproc)" conf/cf-parse.h conf/cf-keywords.h >/dev/null
  make -C "$obj" -j"$(nproc)" libdaemon.a libbird.a >/dev/null
  obj_dir=$obj
}

build_filter() {   # build_filter SOURCE
  build_daemon_libs
  "$cc" -std=gnu11 -g -O1 -D_GNU_SOURCE= -Wall -Wextra -Wno-unused-parameter \
    -Wno-missing-field-initializers -Wno-sign-compare "${san[@]}" -I"$top" -I"$obj_dir" \
    "$top/$1" "$obj_dir/libdaemon.a" "$obj_dir/libbird.a" $urcu \
    $(pkg-config --libs libbsd-overlay) -lpthread -o "$bin"
}

# Filter-language tokens: every keyword of the grammar, then the rest.
filter_dict() {
  sed -n 's/^  { "\([^"]*\)".*/"\1"/p' "$obj_dir/conf/cf-keywords.h"
  local t
  for t in '(' ')' '{' '}' '[' ']' '[=' '=]' ';' ',' ':' '=' '==' '!=' '<' '<=' '>' '>=' \
      '~' '!~' '+' '-' '*' '/' '&&' '||' '!' '.' '..' '?' '->' '+empty+' '-empty-' '--empty--' \
      '---empty---' '0' '1' '65535' '4294967295' '10.0.0.0/8' '10.0.0.0/8+' '{16,24}' '1.2.3.4' \
      '2001:db8::/32' '::1' '(1,2)' '(rt, 1, 2)' '(1, 2, 3)' '0x1f' '01:ab' \
      RTS_BGP RTS_STATIC SCOPE_UNIVERSE RTD_BLACKHOLE ROA_VALID ROA_INVALID ASPA_VALID \
      NET_IP4 NET_IP6 NET_ROA4 ORIGIN_IGP; do
    printf '"%s"\n' "${t//\"/\\\"}"
  done
  printf '"\\""\n'
}

opts=()
case $target in
  bgp)
    build_bgp
    opts=(-max_len=8192)
    export BGP_FUZZ_SEEDS=corpus   # seeds made by our own encoders, (re)written on every run
    ;;
  filter-conf)
    build_filter filter/f_fuzz_conf.c
    filter_dict > "$dir/filter.dict"
    for f in "$top"/test/filters/*.conf "$top"/test/filters/arouteserver/*.conf; do
      cp -f "$f" "$dir/corpus/seed-$(basename "$(dirname "$f")")-$(basename "$f")"
    done
    opts=(-max_len=32768 -dict=filter.dict)
    ;;
  filter-interp)
    build_filter filter/f_fuzz_interp.c
    opts=(-max_len=8192)
    export FILTER_FUZZ_SEEDS=corpus   # every filter on every attribute, (re)written on every run
    ;;
  *)
    echo "fuzz: unknown target $target" >&2
    exit 2
    ;;
esac

cd "$dir"
rm -f crash-* leak-* timeout-* oom-*
par=()
[ "$jobs" -gt 1 ] && par=(-fork="$jobs")
set +e
"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  "${opts[@]}" "${par[@]}" corpus > fuzz.log 2>&1
status=$?
set -e
grep -v '^#[0-9]' fuzz.log | grep -v '# Uses:' | tail -n 30
if ls crash-* leak-* timeout-* oom-* >/dev/null 2>&1; then
  echo "fuzz $target: reproducers left in $dir" >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  echo "fuzz $target: the fuzzer failed (status $status), see $dir/fuzz.log" >&2
  exit "$status"
fi
echo "fuzz $target: no findings in ${secs}s"
