#!/usr/bin/env bash
# Build and run the micro-benchmarks, then write doc/bench/latest.md.
#
#   bench/run.sh [--quick] [--filter SUBSTR] [--samples N] [--csv FILE]
#                [--no-daemons] [--no-filters] [--make | --snapshot]
#
# Steps:
#  1. Build bench programs with gcc against the libraries of the build
#     directory ($BUILD, default ./build) and the headers of the source
#     tree that build was configured from. `make -C $BUILD` runs if
#     libdaemon.a or libbird.a is missing, or with --make. Libraries older
#     than their sources give wrong results (struct layouts differ): that
#     is reported, and --make fixes it. --snapshot instead copies the
#     working tree to a temporary directory and configures and builds it
#     there (for a tree others are editing and building at the same time).
#     The libraries are copied before linking, so a concurrent rebuild
#     cannot change them under the linker.
#  2. Run bench/rt_bench (harness options are passed through).
#  2b. Unless --no-filters (or --filter not matching "filter"): the
#     route-server import filter benchmark of filter/filter_test
#     (filters rs_check and rs_import over 1M routes, 200k with --quick;
#     FILTER_PASSES passes, default 5, 3 with --quick), ns/route per filter.
#     filter/filter_test is built in $BUILD when missing or older than
#     libdaemon.a.
#  3. Unless --no-daemons (or --filter): memory of Debian's BIRD 2
#     (/usr/sbin/bird) and of our daemon ($BUILD/bird) loading the same
#     generated config of N static blackhole routes; RSS growth over the
#     same config without routes, `show memory`, and load time.
#  4. Write $OUT (default doc/bench/latest.md). Text below the line
#     "<!-- kept by bench/run.sh -->" of the previous file is kept.
#
# Environment: BUILD, OUT, CC, BENCH_CFLAGS, STATIC_SIZES (default
# "100000 1000000"), OURS_STATIC_MAX (largest N tried with our daemon,
# default 1000000; its static config parse was once quadratic),
# LOAD_TIMEOUT (seconds per daemon load, default 900).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
OUT=${OUT:-$top/doc/bench/latest.md}
CC=${CC:-gcc}
BENCH_CFLAGS=${BENCH_CFLAGS:--O2 -g}
STATIC_SIZES=${STATIC_SIZES:-100000 1000000}
OURS_STATIC_MAX=${OURS_STATIC_MAX:-1000000}
LOAD_TIMEOUT=${LOAD_TIMEOUT:-900}
BIRD2=${BIRD2:-/usr/sbin/bird}
BIRD2C=${BIRD2C:-/usr/sbin/birdc}

daemons=1
filters=1
quick=0
do_make=0
snapshot=0
bench_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-daemons) daemons=0 ;;
    --quick) quick=1; bench_args+=("$1") ;;
    --filter) daemons=0; case "$2" in *filter*) ;; *) filters=0 ;; esac; bench_args+=("$1" "$2"); shift ;;
    --no-filters) filters=0 ;;
    --samples|--csv|--target-ms) bench_args+=("$1" "$2"); shift ;;
    --make) do_make=1 ;;
    --snapshot) snapshot=1 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[ "$quick" = 1 ] && STATIC_SIZES=${QUICK_STATIC_SIZES:-10000}

work=$(mktemp -d /tmp/bird-bench.XXXXXX)
daemon_pid=
cleanup() {
  if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
    kill "$daemon_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# --- 1. Build ---
if [ "$snapshot" = 1 ]; then
  echo "== snapshot of $top, private build in $work/build" >&2
  mkdir -p "$work/src" "$work/build"
  excl=(--exclude=./.git --exclude=./autom4te.cache)
  for d in "$top"/*/; do   # other build directories (configured: they hold config.status)
    [ -f "$d/config.status" ] && excl+=("--exclude=./$(basename "$d")")
  done
  (cd "$top" && tar -c "${excl[@]}" .) | tar -x -C "$work/src"
  (cd "$work/build" && "$work/src/configure" && make -j"$(nproc)") > "$work/build.log" 2>&1 ||
    { tail -30 "$work/build.log" >&2; echo "run.sh: snapshot build failed" >&2; exit 1; }
  BUILD=$work/build
elif [ "$do_make" = 1 ] || [ ! -f "$BUILD/libdaemon.a" ] || [ ! -f "$BUILD/libbird.a" ]; then
  echo "== building $BUILD" >&2
  make -C "$BUILD"
fi
src=$(sed -n 's/^abs_top_srcdir = //p' "$BUILD/Makefile" 2>/dev/null)
[ -d "${src:-}" ] || src=$top
stale=$(find "$src" \( -path "$src/build*" -o -path "$src/.git" -o -path "$src/bench" -o -path "$src/test" \) -prune -o \
  \( -name '*.[chly]' ! -name '*_test.c' ! -name 'test_*.h' -newer "$BUILD/libdaemon.a" -print \) 2>/dev/null |
  head -3 | tr '\n' ' ')     # unit tests are not in the libraries
if [ -n "$stale" ]; then
  echo "run.sh: WARNING: sources newer than $BUILD/libdaemon.a ($stale): run with --make or --snapshot" >&2
fi
cp "$BUILD/libdaemon.a" "$BUILD/libbird.a" "$work/"
lib_cflags=$(sed -n 's/^CFLAGS = //p' "$BUILD/Makefile" 2>/dev/null || true)
pc_libs=$(pkg-config --libs liburcu-memb liburcu-cds liburcu libbsd-overlay)
pc_cflags=$(pkg-config --cflags liburcu-memb libbsd-overlay)
echo "== compiling bench/rt_bench" >&2
# shellcheck disable=SC2086
$CC -std=gnu11 $BENCH_CFLAGS -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
  -Wno-sign-compare -D_GNU_SOURCE= -I"$src" -I"$BUILD" $pc_cflags \
  -DBENCH_CFLAGS="\"-std=gnu11 $BENCH_CFLAGS\"" -DBENCH_LIB_CFLAGS="\"${lib_cflags:-unknown}\"" \
  "$src/bench/harness.c" "$src/bench/rt_bench_input.c" "$src/bench/rt_bench.c" "$work/libdaemon.a" "$work/libbird.a" \
  $pc_libs -lpthread -o "$work/rt_bench"

# --- 2. Table core micro-benchmarks ---
echo "== running rt_bench ${bench_args[*]:-}" >&2
"$work/rt_bench" "${bench_args[@]}" > "$work/rt_bench.md"

# --- 2b. The route-server import filters ---
filter_rows=()
if [ "$filters" = 1 ]; then
  ft=$BUILD/filter/filter_test
  if [ ! -x "$ft" ] || [ "$BUILD/libdaemon.a" -nt "$ft" ]; then
    echo "== building $ft" >&2
    make -C "$BUILD" filter/filter_test > "$work/filter_test.build.log" 2>&1 ||
      { tail -20 "$work/filter_test.build.log" >&2; echo "run.sh: building filter/filter_test failed" >&2; exit 1; }
  fi
  fnets=1; fpasses=${FILTER_PASSES:-5}
  if [ "$quick" = 1 ]; then fnets=200000; fpasses=${FILTER_PASSES:-3}; fi
  echo "== running filter benchmark ($fpasses passes)" >&2
  fload0=$(cut -d' ' -f1-3 /proc/loadavg)
  FILTER_BENCH=$fnets FILTER_BENCH_ONLY=1 FILTER_BENCH_REPEAT=$fpasses "$ft" > "$work/filter.out" 2>&1 ||
    { cat "$work/filter.out" >&2; echo "run.sh: filter benchmark failed" >&2; exit 1; }
  # The same with the prefixes of one UPDATE in a row (4 routes per attribute set).
  FILTER_BENCH=$fnets FILTER_BENCH_ONLY=1 FILTER_BENCH_REPEAT=$fpasses FILTER_BENCH_GROUP=4 "$ft" >> "$work/filter.out" 2>&1 ||
    { cat "$work/filter.out" >&2; echo "run.sh: filter benchmark failed" >&2; exit 1; }
  fload1=$(cut -d' ' -f1-3 /proc/loadavg)
  # "filter benchmark rs_check: 1000000 routes, 888091 accepted, 151.2 ns/route (CPU time; median of 5 passes, min 140.1, max 190.3)"
  while read -r line; do
    filter_rows+=("$(echo "$line" | awk -v passes="$fpasses" '{
      name = $3; sub(":", "", name)
      med = $8; min = med; max = med
      if (match($0, /min [0-9.]+/)) min = substr($0, RSTART + 4, RLENGTH - 4)
      if (match($0, /max [0-9.]+/)) max = substr($0, RSTART + 4, RLENGTH - 4)
      printf "| %s | %s | %s | %s | %s | %s | %s | 150 ns/route (issue 4) | %s |", name, $4, $6, passes, med, min, max, (med <= 150 ? "yes" : "**no**")
    }')")
  done < <(grep "^filter benchmark" "$work/filter.out")
fi

# --- 3. BIRD 2 vs ours: memory for the same static routes ---
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

# "Routing tables:   88.1 MB   1367.8 kB" -> effective+overhead in bytes
mem_line_bytes() {
  awk -v key="$1" '
    function b(v, u) { return v * (u == "kB" ? 1024 : u == "MB" ? 1048576 : u == "GB" ? 1073741824 : 1) }
    index($0, key ":") == 1 {
      sub(key ":", ""); n = split($0, f, " ")
      if (n >= 4) printf "%.0f\n", b(f[1], f[2]) + b(f[3], f[4])
    }' "$2"
}

# measure_daemon BIN CLIENT CONF N TAG: load CONF, wait for N routes in
# master4; prints "load_s rss_kb", leaves show memory in $work/TAG.mem.
measure_daemon() {
  local bin=$1 client=$2 conf=$3 n=$4 tag=$5
  local sock=$work/$tag.ctl t0 t1 count=0 deadline
  t0=$(date +%s.%N)
  "$bin" -f -c "$conf" -s "$sock" > "$work/$tag.log" 2>&1 &
  daemon_pid=$!
  deadline=$(( $(date +%s) + LOAD_TIMEOUT ))
  while :; do
    if ! kill -0 "$daemon_pid" 2>/dev/null; then
      echo "fail 0"; daemon_pid=; return
    fi
    if [ -S "$sock" ]; then
      # (birdc fails while the daemon is busy loading: not an error here,
      # and under set -e a failed substitution would end the whole run)
      count=$("$client" -s "$sock" show route count 2>/dev/null |
              awk '/in table master4/ { print $1; exit }' || true)
      [ "${count:-0}" -ge "$n" ] 2>/dev/null && break
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      kill "$daemon_pid"; wait "$daemon_pid" 2>/dev/null || true; daemon_pid=
      echo "timeout 0"; return
    fi
    sleep 0.2
  done
  t1=$(date +%s.%N)
  sleep 1   # let deferred frees and cleanups settle
  local rss
  rss=$(rss_kb "$daemon_pid")
  "$client" -s "$sock" show memory > "$work/$tag.mem" 2>&1 || true
  "$client" -s "$sock" down > /dev/null 2>&1 || kill "$daemon_pid"
  wait "$daemon_pid" 2>/dev/null || true
  daemon_pid=
  echo "$(echo "$t1 - $t0" | awk '{ printf "%.1f", $1 - $3 }' 2>/dev/null || echo "?") $rss"
}

daemon_rows=()
daemon_notes=()
if [ "$daemons" = 1 ]; then
  ours_client=$BIRD2C
  [ -x "$BUILD/birdc" ] && ours_client=$BUILD/birdc
  have_b2=0; [ -x "$BIRD2" ] && [ -x "$BIRD2C" ] && have_b2=1
  have_ours=0; [ -x "$BUILD/bird" ] && have_ours=1
  [ "$have_b2" = 0 ] && daemon_notes+=("BIRD 2 ($BIRD2) not installed: skipped.")
  [ "$have_ours" = 0 ] && daemon_notes+=("$BUILD/bird not built: our daemon skipped.")
  "$work/rt_bench" --gen-static 0 > "$work/s0.conf"
  declare -A base
  for d in b2 ours; do
    { [ $d = b2 ] && [ $have_b2 = 0 ]; } && continue
    { [ $d = ours ] && [ $have_ours = 0 ]; } && continue
    bin=$BIRD2; cl=$BIRD2C; [ $d = ours ] && { bin=$BUILD/bird; cl=$ours_client; }
    echo "== $d: empty config" >&2
    read -r _ rss < <(measure_daemon "$bin" "$cl" "$work/s0.conf" 0 "$d-0") || rss=0
    base[$d]=$rss
    base[$d-tab]=$(mem_line_bytes "Routing tables" "$work/$d-0.mem")
    base[$d-cfg]=$(mem_line_bytes "Current config" "$work/$d-0.mem")
    base[$d-proto]=$(mem_line_bytes "Protocols" "$work/$d-0.mem")
  done
  for n in $STATIC_SIZES; do
    "$work/rt_bench" --gen-static "$n" > "$work/s$n.conf"
    for d in b2 ours; do
      { [ $d = b2 ] && [ $have_b2 = 0 ]; } && continue
      { [ $d = ours ] && [ $have_ours = 0 ]; } && continue
      bin=$BIRD2; cl=$BIRD2C; name="BIRD 2 ($($BIRD2 --version 2>&1 | awk '{ print $NF }'))"
      if [ $d = ours ]; then
        bin=$BUILD/bird; cl=$ours_client; name="ours ($($bin --version 2>&1 | awk '{ print $NF }'))"
        if [ "$n" -gt "$OURS_STATIC_MAX" ]; then
          daemon_rows+=("| $n | $name | not run: N > OURS_STATIC_MAX=$OURS_STATIC_MAX | | | | | | |")
          continue
        fi
      fi
      pt0=$(date +%s.%N)
      "$bin" -p -c "$work/s$n.conf" > /dev/null 2>&1 || true
      parse_s=$(awk -v a="$pt0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
      echo "== $d: $n static routes (parse alone ${parse_s}s)" >&2
      read -r load rss < <(measure_daemon "$bin" "$cl" "$work/s$n.conf" "$n" "$d-$n") || load=fail
      if [ "$load" = fail ] || [ "$load" = timeout ]; then
        daemon_rows+=("| $n | $name | $load | $parse_s | | | | | |")
        continue
      fi
      tab=$(mem_line_bytes "Routing tables" "$work/$d-$n.mem")
      cfg=$(mem_line_bytes "Current config" "$work/$d-$n.mem")
      proto=$(mem_line_bytes "Protocols" "$work/$d-$n.mem")
      daemon_rows+=("$(awk -v n="$n" -v name="$name" -v load="$load" -v parse="$parse_s" -v rss="$rss" \
        -v rss0="${base[$d]:-0}" -v tab="${tab:-0}" -v tab0="${base[$d-tab]:-0}" -v cfg="${cfg:-0}" \
        -v cfg0="${base[$d-cfg]:-0}" -v proto="${proto:-0}" -v proto0="${base[$d-proto]:-0}" 'BEGIN {
          printf "| %d | %s | %s | %s | %.1f MiB | %.0f | %.0f | %.0f | %.0f |", n, name, load, parse, rss / 1024,
            (rss - rss0) * 1024 / n, (tab - tab0) / n, (proto - proto0) / n, (cfg - cfg0) / n }')")
    done
  done
fi

# --- 4. Report ---
mkdir -p "$(dirname "$OUT")"
kept=
marker='<!-- kept by bench/run.sh -->'
if [ -f "$OUT" ] && grep -qF "$marker" "$OUT"; then
  kept=$(awk -v m="$marker" '$0 == m { on = 1 } on' "$OUT")
fi
{
  echo "# Benchmarks: latest results"
  echo
  flags="${bench_args[*]:-}"; [ "$snapshot" = 1 ] && flags="--snapshot $flags"
  echo "Generated by \`bench/run.sh${flags:+ $flags}\` (\`make bench\`). Reproduce: build the tree, then run"
  echo "\`bench/run.sh\`; \`bench/run.sh --quick\` is the CI smoke run. Every input is generated from fixed seeds."
  echo
  if [ -n "$stale" ]; then
    echo "**Warning:** the libraries were older than their sources ($stale); these results may not"
    echo "match the code in the tree. Run \`bench/run.sh --make\` or \`--snapshot\`."
    echo
  fi
  cat "$work/rt_bench.md"
  if [ ${#filter_rows[@]} -gt 0 ]; then
    echo "## Route-server import filters (filter/filter_test)"
    echo
    echo "\`FILTER_BENCH=$fnets FILTER_BENCH_ONLY=1 FILTER_BENCH_REPEAT=$fpasses build/filter/filter_test\`: the"
    echo "filters \`rs_check\` (bogons, prefix length, path length, first AS, bogon ASNs in the path, a"
    echo "4,000-entry IRR prefix set, \`roa_check\` whose table the benchmark does not load (it returns at once; a loaded"
    echo "one: \`rt/roa/check\` above), a community test: accept/reject only) and \`rs_import\` (the same"
    echo "plus community scrubbing and tagging, and the interning of the changed attributes) over routes"
    echo "sharing 4,096 attribute sets, each route meeting the set used 4,095 routes before it (cold in the"
    echo "caches: a worst case). \`/g4\`: 4 routes in a row share a set, as the prefixes of one UPDATE do;"
    echo "\`FILTER_BENCH_GROUP=4\`. CPU time of one thread per route; passes alternate between the"
    echo "filters. Load average $fload0 at start, $fload1 at end."
    echo
    echo "| Filter | Routes | Accepted | Passes | Median ns/route | Min | Max | Target | Met |"
    echo "|---|--:|--:|--:|--:|--:|--:|---|---|"
    for r in "${filter_rows[@]}"; do echo "$r"; done
    echo
  fi
  if [ "$daemons" = 1 ]; then
    echo "## BIRD 2 vs ours: the same static routes"
    echo
    echo "Both daemons load the same generated config (\`rt_bench --gen-static N\`: N static blackhole routes"
    echo "in one \`protocol static\`, the prefix mix of the table benchmarks). Load = daemon start until"
    echo "\`show route count\` reports N routes (includes parsing). RSS growth is over the same daemon running"
    echo "the config without routes; it includes the parsed config, which both daemons keep."
    echo "The last three columns are \`show memory\` (effective + overhead) growth per route."
    echo
    echo "| Routes | Daemon | Load s | Parse alone s | RSS | RSS growth B/route | Routing tables B/route | Protocols B/route | Current config B/route |"
    echo "|--:|---|--:|--:|--:|--:|--:|--:|--:|"
    for r in "${daemon_rows[@]}"; do echo "$r"; done
    echo
    for n in "${daemon_notes[@]}"; do echo "- $n"; done
    [ ${#daemon_notes[@]} -gt 0 ] && echo
  fi
  if [ -n "$kept" ]; then
    echo "$kept"
  else
    echo "$marker"
  fi
} > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "== wrote $OUT" >&2
