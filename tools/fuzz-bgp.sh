#!/usr/bin/env bash
# Build the BGP codec fuzzer (libFuzzer + ASan + UBSan) and run it.
#   tools/fuzz-bgp.sh [SECONDS]          default 60
# Environment: FUZZ_DIR (build/corpus dir, default build-fuzz/bgp),
#   CC (default clang), FUZZ_JOBS (parallel workers, default 1).
# Exits non-zero on any crash, leak or sanitizer report; the reproducer is
# left in $FUZZ_DIR as crash-*/leak-*/timeout-*.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-60}
dir=${FUZZ_DIR:-$top/build-fuzz/bgp}
cc=${CC:-clang}
jobs=${FUZZ_JOBS:-1}

if ! command -v "$cc" >/dev/null; then
  echo "fuzz-bgp: $cc not found (apt-get install clang)" >&2
  exit 1
fi
# config.h comes from a configured build; any of the usual places will do.
inc=
for d in "$top/build" "$top/build-asan" "$top"; do
  if [ -f "$d/config.h" ]; then inc="-I$d"; break; fi
done

mkdir -p "$dir/corpus"
"$cc" -std=gnu11 -g -O1 -D_GNU_SOURCE= -Wall -Wextra -Wno-unused-parameter \
  -Wno-missing-field-initializers -Wno-sign-compare \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$top" $inc \
  "$top"/proto/bgp/bgp_fuzz.c "$top"/proto/bgp/bgp_attrs.c "$top"/proto/bgp/bgp_update.c \
  "$top"/proto/bgp/bgp_open.c "$top"/lib/ip.c "$top"/lib/net.c "$top"/lib/printf.c \
  "$top"/lib/resource.c "$top"/lib/hash.c "$top"/lib/log.c "$top"/lib/timeutil.c \
  "$top"/lib/rcu.c "$top"/nest/rt_attr.c \
  $(pkg-config --cflags --libs liburcu-memb liburcu-cds liburcu) -lpthread \
  -o "$dir/bgp_fuzz"

cd "$dir"
rm -f crash-* leak-* timeout-* oom-*
par=()
[ "$jobs" -gt 1 ] && par=(-fork="$jobs")
# Seeds made by our own encoders are (re)written on every run.
set +e
BGP_FUZZ_SEEDS=corpus ./bgp_fuzz -max_total_time="$secs" -max_len=8192 -timeout=10 \
  -print_final_stats=1 "${par[@]}" corpus > fuzz.log 2>&1
status=$?
set -e
grep -v '^#[0-9]' fuzz.log | grep -v '# Uses:' | tail -n 30
if ls crash-* leak-* timeout-* oom-* >/dev/null 2>&1; then
  echo "fuzz-bgp: reproducers left in $dir" >&2
  exit 1
fi
echo "fuzz-bgp: no findings in ${secs}s"
exit "$status"
