#!/usr/bin/env bash
# Whole-process client CPU per acquisition, for any peer command of
# ../shared/peers (same flags): each workload runs twice under /usr/bin/time,
# once with OPS acquisitions and once with none (same warm-up, same
# sessions), and the difference in user+system CPU is divided by OPS. That
# leaves out process start-up, JVM JIT of the warm-up and session set-up,
# and counts everything else the process spends (runtime, GC, threads).
#
#   examples/bench/cpu.sh --connect HOST:PORT [--ops 3000] [--k 4] [--warmup 200] \
#       [--workloads uncontended,contended,semaphore,rwlock] NAME=CMD ...
#
# e.g. gocurator=examples/bench/run.sh curator=../shared/peers/curator/run.sh
# gozk=/tmp/gozkbench (build it first: run.sh rebuilds into a temp dir on
# every call when BENCH_BUILD_DIR is unset, and that build would be counted).
# Output: one JSON line per peer and workload.
set -euo pipefail
CONNECT= OPS=3000 K=4 WARMUP=200 WLS=uncontended,contended,semaphore,rwlock
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --connect) CONNECT=$2 ;; --ops) OPS=$2 ;; --k) K=$2 ;; --warmup) WARMUP=$2 ;;
    --workloads) WLS=$2 ;; *) echo "unknown flag $1" >&2; exit 2 ;;
  esac
  shift 2
done
[[ -n $CONNECT && $# -gt 0 ]] || { sed -n 2,16p "$0" >&2; exit 2; }
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
cpu() { # CMD OPS WORKLOAD -> "cpu_seconds ops_per_s"
  local cmd=$1 n=$2 wl=$3
  /usr/bin/time -f '%U %S' -o "$TMP/t" "$cmd" --connect "$CONNECT" --n "$n" --ops "$n" --k "$K" \
    --warmup "$WARMUP" --root "/bench/cpu-$$-$RANDOM" --workloads "$wl" >"$TMP/out" 2>"$TMP/err" ||
    { echo "$cmd $wl failed:" >&2; tail -3 "$TMP/err" >&2; return 1; }
  local ops_s
  ops_s=$(grep -o '"ops_per_s":[0-9.]*' "$TMP/out" | head -1 | cut -d: -f2)
  echo "$(awk '{print $1 + $2}' "$TMP/t") ${ops_s:-0}"
}
for peer in "$@"; do
  name=${peer%%=*} cmd=${peer#*=}
  for wl in ${WLS//,/ }; do
    read -r full ops_s < <(cpu "$cmd" "$OPS" "$wl")
    read -r base _ < <(cpu "$cmd" 0 "$wl")
    k=$K; [[ $wl == uncontended ]] && k=1
    awk -v n="$name" -v w="$wl" -v k="$k" -v o="$OPS" -v f="$full" -v b="$base" -v r="$ops_s" 'BEGIN {
      printf "{\"impl\":\"%s\",\"workload\":\"%s\",\"clients\":%d,\"ops\":%d,\"ops_per_s\":%s,\"cpu_s\":%.2f,\"cpu_s_base\":%.2f,\"cpu_ms_per_op\":%.3f}\n",
        n, w, k, o, r, f, b, (f - b) * 1000 / o }'
  done
done
