#!/usr/bin/env bash
# The convergence matrix of doc/threads: our daemon and Debian's BIRD 2 on
# the same generated configs, interleaved run by run so that load on a
# shared machine hits both alike; rows go to doc/threads/stats.csv. Each
# run lasts until every session had all it was due (converge.py
# --delivered): the peers' own tables of the multi layouts fill after
# master4 and the monitor have everything.
#   bench/run-matrix.sh [RUNS] [LAYOUTS] [PEERS] [TOTALS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-3}
layouts=${2:-"single multi"}
peers_list=${3:-"10 32 100"}
totals=${4:-"10000 100000 1000000"}
csv=${CSV:-$top/doc/threads/stats.csv}
py=/usr/bin/python3
for layout in $layouts; do
  for peers in $peers_list; do
    for total in $totals; do
      per=$((total / peers))
      for i in $(seq "$runs"); do
        for daemon in ours bird2; do
          $py "$top/bench/converge.py" --daemon $daemon --layout "$layout" --peers "$peers" \
            --routes "$per" --runs 1 --csv "$csv" --timeout "${TIMEOUT:-600}" --delivered || echo "run failed: $daemon $layout $peers $total"
        done
      done
    done
  done
done
# Thread scaling of ours: 1 vs 2 threads (more on bigger machines: THREADS="1 2 4 8 16").
[ -n "${NO_THREADS:-}" ] && exit 0
for t in ${THREADS:-1 2}; do
  $py "$top/bench/converge.py" --daemon ours --layout single --peers 32 --routes 31250 --runs "$runs" \
    --threads "$t" --csv "$csv" --timeout "${TIMEOUT:-600}" --delivered || true
done
