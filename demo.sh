#!/usr/bin/env bash
# Demo: install deps, build, start the daemon on an embedded default config
# (a small route server's static part on loopback, private socket), and
# show what an operator sees with birdc.
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
"$top/tools/deps.sh"
"$top/tools/build.sh" "$top/build"
run=$(mktemp -d /tmp/bird-demo.XXXXXX)
cat > "$run/bird.conf" <<'CONF'
# Embedded demo configuration: route-server style tables with static routes.
router id 127.0.0.1;
log stderr all;
protocol device {}
ipv4 table rs4;
protocol static members4 {
  ipv4 { table master4; };
  route 192.0.2.0/24 blackhole;
  route 198.51.100.0/24 unreachable;
  route 203.0.113.0/24 prohibit;
}
protocol static members6 {
  ipv6;
  route 2001:db8:100::/48 blackhole;
  route 2001:db8:200::/48 unreachable;
}
protocol static rs_local { ipv4 { table rs4; }; route 10.0.0.0/8 blackhole; }
CONF
"$top/build/bird" -c "$run/bird.conf" -s "$run/bird.ctl" -P "$run/bird.pid"
for _ in $(seq 50); do [ -S "$run/bird.ctl" ] && break; sleep 0.1; done
sleep 0.3
echo "== birdc show protocols"
"$top/build/birdc" -s "$run/bird.ctl" show protocols
echo "== birdc show route count"
"$top/build/birdc" -s "$run/bird.ctl" show route count
echo "== birdc show route table all count"
"$top/build/birdc" -s "$run/bird.ctl" show route table all count
echo
echo "Daemon running (pid $(cat "$run/bird.pid")), socket $run/bird.ctl"
echo "Try: $top/build/birdc -s $run/bird.ctl      Stop: $top/build/birdc -s $run/bird.ctl down"
