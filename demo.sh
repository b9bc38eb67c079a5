#!/usr/bin/env bash
# Demo: install deps, build, and start a small IXP route server on loopback:
# our daemon (embedded default config below) with three member peers played
# by Debian's BIRD 2, each on its own 127.66.0.x address, announcing a few
# prefixes. Then show what an operator sees with birdc.
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
"$top/tools/deps.sh"
"$top/tools/build.sh" "$top/build"
run=$(mktemp -d /tmp/bird-demo.XXXXXX)
port=$((20000 + RANDOM % 20000))
rs=127.66.0.1

# --- the route server (our daemon) ---
{
  cat <<CONF
# Embedded demo configuration: a transparent route server (rs client) for
# three members, plus a few local static routes.
router id $rs;
log stderr all;
protocol device {}
protocol static local4 {
  ipv4;
  route 192.0.2.0/24 blackhole;
  route 198.51.100.0/24 unreachable;
}
protocol static local6 { ipv6; route 2001:db8:100::/48 blackhole; }
CONF
  for m in 2 3 4; do
    cat <<CONF
protocol bgp member$m {
  description "Member AS6500$m";
  local $rs port $port as 64500;
  neighbor 127.66.0.$m port $((port + m)) as 6500$m;
  rs client; multihop; connect delay time 1;
  ipv4 { import all; export all; };
}
CONF
  done
} > "$run/bird.conf"

# --- the members (Debian's BIRD 2) ---
for m in 2 3 4; do
  mkdir -p "$run/m$m"
  cat > "$run/m$m/bird.conf" <<CONF
router id 127.66.0.$m;
protocol device {}
protocol static announce {
  ipv4;
  route 10.$m.0.0/16 blackhole;
  route 10.$m.1.0/24 blackhole;
  route 10.$m.2.0/24 blackhole;
}
protocol bgp rserver {
  local 127.66.0.$m port $((port + m)) as 6500$m;
  neighbor $rs port $port as 64500;
  multihop; connect delay time 1;
  ipv4 { import all; export all; gateway recursive; };
}
CONF
  /usr/sbin/bird -c "$run/m$m/bird.conf" -s "$run/m$m/bird.ctl" -P "$run/m$m/bird.pid"
done

"$top/build/bird" -c "$run/bird.conf" -s "$run/bird.ctl" -P "$run/bird.pid"
for _ in $(seq 100); do
  n=$("$top/build/birdcl" -s "$run/bird.ctl" show protocols 2>/dev/null | grep -c Established || true)
  [ "$n" = 3 ] && break
  sleep 0.1
done
sleep 0.5
echo "== birdc show protocols"
"$top/build/birdc" -s "$run/bird.ctl" show protocols
echo "== birdc show route count"
"$top/build/birdc" -s "$run/bird.ctl" show route count
echo "== member AS65002 sees (through the route server):"
/usr/sbin/birdc -s "$run/m2/bird.ctl" show route protocol rserver
cat > "$run/stop.sh" <<STOP
#!/bin/sh
"$top/build/birdc" -s "$run/bird.ctl" down >/dev/null
for m in 2 3 4; do /usr/sbin/birdc -s "$run/m\$m/bird.ctl" down >/dev/null; done
STOP
chmod +x "$run/stop.sh"
echo
echo "Route server running (socket $run/bird.ctl). Try: $top/build/birdc -s $run/bird.ctl"
echo "Stop everything: $run/stop.sh"
