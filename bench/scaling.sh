#!/usr/bin/env bash
# Thread scaling of our daemon on one route-server workload, with Debian's
# BIRD 2 on the same config as the reference, interleaved run by run:
#   bench/scaling.sh LAYOUT PEERS TOTAL_ROUTES RUNS "THREADS..." [CSV]
# e.g. bench/scaling.sh single 100 1000000 3 "1 2 4 8 16" stats.csv
# Environment: BIRD (ours), BGPBLAST (the injector), BIRD2 (reference binary, "" for none),
# BLAST_THREADS (injector I/O threads, default 4), DEADLINE (seconds after
# which no new run starts, for time-boxed machines), TIMEOUT per run,
# CONVERGE_ARGS (more options for every converge.py run, e.g. --cpu).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
layout=$1 peers=$2 total=$3 runs=$4 threads=$5
csv=${6:-$top/doc/threads/stats.csv}
bird=${BIRD:-$top/build/bird}
bird2=${BIRD2-/usr/sbin/bird}
deadline=${DEADLINE:-0}
py=${PYTHON:-python3}
start=$SECONDS
conv() {
  if [ "$deadline" -gt 0 ] && [ $((SECONDS - start)) -ge "$deadline" ]; then
    echo "deadline reached, skipped: $*" >&2
    return 0
  fi
  $py "$top/bench/converge.py" --bird "$bird" --bird2 "${bird2:-/usr/sbin/bird}" \
    --bgpblast "${BGPBLAST:-$top/bench/bgpblast/bgpblast}" \
    --blast-threads "${BLAST_THREADS:-4}" --layout "$layout" --peers "$peers" \
    --routes $((total / peers)) --runs 1 --csv "$csv" --timeout "${TIMEOUT:-300}" --delivered ${CONVERGE_ARGS:-} "$@" \
    || echo "run failed: $* $layout $peers $total" >&2
}
for i in $(seq "$runs"); do
  [ -n "$bird2" ] && conv --daemon bird2
  for t in $threads; do
    conv --daemon ours --threads "$t"
  done
done
