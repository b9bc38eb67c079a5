#!/usr/bin/env bash
# The thread-scaling suite for a time-boxed machine with more cores: the
# table's writer-scaling micro-benchmarks, then bench/scaling.sh over a
# plan of route-server workloads, most wanted first, until the deadline.
#   bench/scaling-suite.sh BUNDLE OUTDIR [SECONDS]
# BUNDLE is bench/bundle.sh's folder (bird, birdc, bgpblast, bird2 and
# rt_bench in BUNDLE/bin); OUTDIR gets env.txt, micro.md/.csv, stats.csv
# (converge.py's rows, BIRD's format) and suite.log (every run's stderr:
# the daemon's CPU, failures). SECONDS (default 480) bounds the whole: no
# run starts after it (a convergence run is given up after 120 s, the
# micro-benchmarks are killed at SECONDS + 60).
# Environment: SUITE_PLAN (lines "LAYOUT PEERS TOTAL RUNS THREADS BIRD2",
# BIRD2 1 for a reference run of Debian's BIRD 2 per round), MT_THREADS
# (writer counts of the micro-benchmarks, default "1 2 4 8 16"; "" skips
# them), MICRO_ARGS (rt_bench's options for them, default "--samples 3";
# "--quick --samples 5" takes 100k nets a peer instead of 1M),
# BLAST_THREADS (default: a quarter of the cores, at least 2).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bundle=$(cd "${1:?usage: bench/scaling-suite.sh BUNDLE OUTDIR [SECONDS]}" && pwd)
out=${2:?usage: bench/scaling-suite.sh BUNDLE OUTDIR [SECONDS]}
budget=${3:-480}
mkdir -p "$out"
out=$(cd "$out" && pwd)
start=$SECONDS
cores=$(nproc)
left() { echo $((budget - (SECONDS - start))); }
log() { echo "[$((SECONDS - start))s] $*" | tee -a "$out/suite.log"; }

{
  echo "date: $(date -u +%FT%TZ)"
  echo "cores: $cores"
  grep -m1 'model name' /proc/cpuinfo
  grep -E 'MemTotal' /proc/meminfo
  uname -r
  ldd --version 2>&1 | head -1
  command -v python3
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

# Our C library is newer than the host's? Then run through our own loader.
if ! "$bundle/bin/bird" --version >/dev/null 2>&1; then
  export BUNDLE_GLIBC=1
  "$bundle/bin/bird" --version >/dev/null 2>&1 || { log "bundle: bird does not run here"; exit 1; }
  log "bundle: the host's C library is too old, running through the bundle's loader"
fi

mt=${MT_THREADS-1 2 4 8 16}
if [ -n "$mt" ] && [ -x "$bundle/bin/rt_bench" ]; then
  log "micro: rt/insert/mt-*thr-batch, writers: $mt"
  (cd "$out" && BENCH_MT_THREADS="$mt" timeout $(($(left) + 60)) "$bundle/bin/rt_bench" \
     --filter thr-batch ${MICRO_ARGS:---samples 3} --csv "$out/micro.csv" >"$out/micro.md" 2>>"$out/suite.log")
  grep '^| rt/insert/mt' "$out/micro.md" | tee -a "$out/suite.log"
fi

plan=${SUITE_PLAN:-"single 100 1000000 3 1 2 4 8 16 0
multi 100 1000000 2 1 2 4 8 16 0
single 32 1000000 1 1 16 1
single 100 10000000 1 1 16 0
mulimex 32 1000000 1 1 4 16 0"}
blast=${BLAST_THREADS:-$(( cores / 4 > 2 ? cores / 4 : 2 ))}
while read -r layout peers total runs rest; do
  [ -n "$layout" ] || continue
  ref=${rest##* } threads=${rest% *}
  if [ "$(left)" -le 0 ]; then
    log "deadline: skipped $layout $peers $total"
    continue
  fi
  log "converge: $layout, $peers peers, $total routes, threads $threads, BIRD 2: $ref"
  BIRD="$bundle/bin/bird" BGPBLAST="$bundle/bin/bgpblast" BLAST_THREADS=$blast \
    BIRD2=$([ "$ref" = 1 ] && echo "$bundle/bin/bird2") DEADLINE=$(left) TIMEOUT=120 CONVERGE_ARGS=--cpu \
    "$top/bench/scaling.sh" "$layout" "$peers" "$total" "$runs" "$threads" \
    "$out/stats.csv" 2>>"$out/suite.log" | tee -a "$out/suite.log"
done <<<"$plan"
log "done"
