#!/bin/bash
# selftest.sh - build bgpblast and check it for real, on loopback only:
#   1. it refuses a DUT outside 127.0.0.0/8;
#   2. MRT round trip: --write-mrt, bgpdump (if installed) reads it, replay
#      announces the same routes;
#   3. injector -> sink, 10 peers x 100k routes: the injector's own speed;
#   4. Debian's BIRD 2 as DUT (route server), 10 peers x 10k routes and one
#      monitor: the monitor must see every unique prefix, `birdc show route
#      count` must show every route; prints the convergence time.
# --full adds sink 10 x 1M and BIRD 10 x 100k.  Every process started here
# is stopped on exit, by its PID.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
B=$HERE/bgpblast
BIRD=${BIRD:-/usr/sbin/bird}
BIRDC=${BIRDC:-/usr/sbin/birdc}
FULL=0
[ "${1:-}" = "--full" ] && FULL=1

WORK=$(mktemp -d /tmp/bgpblast-selftest.XXXXXX)
PIDS=()
PASS=0
FAIL=0

cleanup() {
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok() { PASS=$((PASS + 1)); echo "ok: $*"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL: $*"; }

# A TCP port nobody listens on (checked in /proc/net/tcp).
free_port() {
	local p hex
	while :; do
		p=$((20000 + RANDOM % 20000))
		hex=$(printf '%04X' "$p")
		grep -q ":$hex 00000000:0000 0A" /proc/net/tcp || { echo "$p"; return; }
	done
}

# jget FILE KEY: a field of the last JSON line in FILE
jget() { grep '^{' "$1" | tail -1 | sed -n "s/.*\"$2\":\"\{0,1\}\([^,\"}]*\).*/\1/p"; }

# kv FILE EVENT KEY: KEY=value from the first line of that event
kv() { grep -m1 "event=$2\( \|$\)" "$1" | tr ' ' '\n' | sed -n "s/^$3=//p"; }

# wait_line FILE PATTERN SECONDS PID: until the line shows up (or PID dies)
wait_line() {
	local end=$((SECONDS + $3))
	while ! grep -q "$2" "$1" 2>/dev/null; do
		kill -0 "$4" 2>/dev/null || { grep -q "$2" "$1" 2>/dev/null; return; }
		[ $SECONDS -lt "$end" ] || return 1
		sleep 0.02
	done
}

now() { date +%s.%N; }

echo "== build"
"$HERE/build.sh"
echo "built $B"

echo "== loopback only"
if "$B" --dut 192.0.2.1:179 --peers 1 --routes 1 >/dev/null 2>"$WORK/err"; then
	bad "accepted a DUT outside 127/8"
elif grep -q "outside 127.0.0.0/8" "$WORK/err"; then
	ok "refused --dut 192.0.2.1 ($(cat "$WORK/err"))"
else
	bad "unexpected error: $(cat "$WORK/err")"
fi
if "$B" --sink 1790 --listen 0.0.0.0 >/dev/null 2>&1; then bad "sink listened on 0.0.0.0"; else ok "refused --listen 0.0.0.0"; fi

# run_sink PEERS ROUTES [extra injector args]: injector against the sink
run_sink() {
	local peers=$1 routes=$2 total=$(($1 * $2)) port spid
	shift 2
	port=$(free_port)
	"$B" --sink "$port" --expect-prefixes "$total" --timeout 120 --quiet >"$WORK/sink.out" &
	spid=$!
	PIDS+=("$spid")
	wait_line "$WORK/sink.out" event=listening 10 "$spid" || { bad "sink did not start"; return; }
	if ! "$B" --dut "127.0.0.1:$port" --peers "$peers" --routes "$routes" --quiet "$@" >"$WORK/inj.out"; then
		bad "injector failed: $(tail -2 "$WORK/inj.out")"
	fi
	wait "$spid" || true
	if [ "$(jget "$WORK/sink.out" result)" != ok ] || [ "$(jget "$WORK/sink.out" prefixes)" != "$total" ]; then
		bad "sink saw $(jget "$WORK/sink.out" prefixes) of $total prefixes"
		return
	fi
	local cu cs
	cu=$(jget "$WORK/inj.out" cpu_user_s)
	cs=$(jget "$WORK/inj.out" cpu_sys_s)
	ok "sink $peers x $routes: received $total routes in $(jget "$WORK/sink.out" recv_s) s =" \
		"$(jget "$WORK/sink.out" recv_routes_per_s) routes/s; injector wrote at" \
		"$(jget "$WORK/inj.out" send_routes_per_s) routes/s using $cu+$cs CPU s" \
		"($(jget "$WORK/inj.out" cpu_routes_per_s) routes per CPU s)"
	SINK_RATE=$(jget "$WORK/sink.out" recv_routes_per_s)
}

echo "== MRT round trip"
"$B" --peers 4 --routes 2000 --v6-share 0.25 --write-mrt "$WORK/t.mrt" 2>/dev/null
if command -v bgpdump >/dev/null; then
	n=$(bgpdump -m "$WORK/t.mrt" 2>/dev/null | wc -l)
	u=$(bgpdump -m "$WORK/t.mrt" 2>/dev/null | cut -d'|' -f6 | sort -u | wc -l)
	if [ "$n" = 8000 ] && [ "$u" = 3200 ]; then ok "bgpdump reads 8000 routes, 3200 prefixes"; else bad "bgpdump: $n routes, $u prefixes"; fi
else
	echo "skip: bgpdump not installed (apt-get install bgpdump)"
fi
"$B" --peers 4 --routes 2000 --v6-share 0.25 --dry-run >"$WORK/a.out"
"$B" --peers 4 --mrt "$WORK/t.mrt" --dry-run >"$WORK/b.out" 2>/dev/null
a=$(kv "$WORK/a.out" start bytes)
b=$(kv "$WORK/b.out" start bytes)
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "MRT replay encodes the same $a UPDATE bytes"; else bad "MRT replay: $b bytes, synthetic $a"; fi
port=$(free_port)
"$B" --sink "$port" --expect-prefixes 8000 --timeout 30 --quiet >"$WORK/sink.out" &
spid=$!
PIDS+=("$spid")
wait_line "$WORK/sink.out" event=listening 10 "$spid"
"$B" --dut "127.0.0.1:$port" --peers 4 --mrt "$WORK/t.mrt" --quiet >/dev/null 2>&1 || true
wait "$spid" || true
if [ "$(jget "$WORK/sink.out" prefixes)" = 8000 ]; then ok "MRT replay into the sink: 8000 routes"; else bad "MRT replay into the sink: $(jget "$WORK/sink.out" prefixes)"; fi

echo "== injector -> sink (no DUT)"
SINK_RATE=
run_sink 10 100000
SINK_100K=$SINK_RATE
if [ $FULL = 1 ]; then
	run_sink 10 1000000
fi

# run_bird PEERS ROUTES: BIRD 2 as route server, one monitor
run_bird() {
	local peers=$1 routes=$2 total=$(($1 * $2)) port dir bpid ipid i t_bird
	port=$(free_port)
	dir=$WORK/bird-$peers-$routes
	mkdir -p "$dir"
	{
		echo "router id 127.0.0.1;"
		echo "log \"$dir/bird.log\" all;"
		echo "protocol device {}"
		echo "template bgp rsc {"
		echo "  local 127.0.0.1 port $port as 64500;"
		echo "  rs client; passive on; multihop;"
		echo "  ipv4 { import all; export all; };"
		echo "}"
		for i in $(seq 1 "$peers"); do
			echo "protocol bgp p$i from rsc { neighbor 127.1.$(((i - 1) / 250)).$(((i - 1) % 250 + 1)) as $((65000 + i)); }"
		done
		echo "protocol bgp m1 from rsc { neighbor 127.2.0.1 as 64901; }"
	} >"$dir/bird.conf"
	t_bird=$(now)
	"$BIRD" -f -c "$dir/bird.conf" -s "$dir/bird.ctl" >"$dir/bird.out" 2>&1 &
	bpid=$!
	PIDS+=("$bpid")
	for i in $(seq 1 200); do
		"$BIRDC" -s "$dir/bird.ctl" show status >/dev/null 2>&1 && break
		kill -0 "$bpid" 2>/dev/null || break
		sleep 0.05
	done
	"$BIRDC" -s "$dir/bird.ctl" show status >/dev/null 2>&1 || { bad "BIRD did not start: $(cat "$dir/bird.out")"; return; }

	"$B" --dut "127.0.0.1:$port" --peers "$peers" --routes "$routes" --monitors 1 --settle 1 \
		--linger -1 --timeout 600 --quiet >"$dir/inj.out" &
	ipid=$!
	PIDS+=("$ipid")
	# what operators script: poll the route count until every route is in
	local want="$total of $total routes for" got="" t_count=""
	for i in $(seq 1 3000); do
		got=$("$BIRDC" -s "$dir/bird.ctl" show route count | grep 'table master4' || true)
		if [[ "$got" == "$want"* ]]; then
			t_count=$(now)
			break
		fi
		kill -0 "$ipid" 2>/dev/null || break
		sleep 0.1
	done
	if ! wait_line "$dir/inj.out" event=done 600 "$ipid"; then
		bad "BIRD $peers x $routes: monitor not full: $(tail -3 "$dir/inj.out")"
		kill "$ipid" "$bpid" 2>/dev/null || true
		return
	fi
	kill -TERM "$ipid"
	wait "$ipid" || true
	local bird_cpu
	bird_cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$bpid/stat")
	kill -TERM "$bpid" 2>/dev/null || true
	wait "$bpid" 2>/dev/null || true

	local pfx mon unix tmf
	pfx=$(kv "$dir/inj.out" start prefixes)
	mon=$(kv "$dir/inj.out" monitor_full prefixes)
	tmf=$(jget "$dir/inj.out" t_monitors_full)
	unix=$(kv "$dir/inj.out" start unix)
	if [ "$mon" = "$pfx" ]; then ok "BIRD $peers x $routes: monitor holds all $pfx unique prefixes"; else bad "BIRD $peers x $routes: monitor $mon of $pfx"; fi
	if [ -n "$t_count" ] && [[ "$got" == *" $pfx networks"* ]]; then
		ok "BIRD $peers x $routes: birdc: $got"
	else
		bad "BIRD $peers x $routes: birdc: $got (want $total routes, $pfx networks)"
	fi
	local cu cs
	cu=$(jget "$dir/inj.out" cpu_user_s)
	cs=$(jget "$dir/inj.out" cpu_sys_s)
	printf 'BIRD 2 %s x %s (%s routes, %s prefixes): monitor full %.3f s after the first UPDATE (%s routes/s), last change %.3f s;' \
		"$peers" "$routes" "$total" "$pfx" "$(jget "$dir/inj.out" converge_s)" \
		"$(jget "$dir/inj.out" converge_routes_per_s)" "$(jget "$dir/inj.out" converge_last_s)"
	printf ' %.3f s after BIRD start; birdc count complete %.2f s after BIRD start; CPU: BIRD %s s, bgpblast %s s\n' \
		"$(awk "BEGIN { print $unix + $tmf - $t_bird }")" "$(awk "BEGIN { print ${t_count:-0} - $t_bird }")" \
		"$bird_cpu" "$(awk "BEGIN { print $cu + $cs }")"
	BIRD_RATE=$(jget "$dir/inj.out" converge_routes_per_s)
}

echo "== BIRD 2 as DUT"
if [ -x "$BIRD" ] && [ -x "$BIRDC" ]; then
	BIRD_RATE=
	run_bird 10 10000
	if [ $FULL = 1 ]; then
		run_bird 10 100000
	fi
	if [ -n "$SINK_100K" ] && [ -n "$BIRD_RATE" ]; then
		echo "injector via sink: $SINK_100K routes/s vs BIRD 2 consumption $BIRD_RATE routes/s: x$((SINK_100K / BIRD_RATE))"
	fi
else
	echo "skip: $BIRD not installed (apt-get install bird2)"
fi

echo "selftest: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
