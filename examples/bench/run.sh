#!/usr/bin/env bash
# Builds examples/bench once (cached by a hash of go.mod, go.sum and every
# non-test .go file of the module, tracked or not) and runs it with "$@", for
#   EXTRA_PEERS="gocurator=/abs/path/examples/bench/run.sh" ../shared/peers/run-all.sh full
# run-all builds only its own peers before measuring; this builds on the first
# call (outside the binary's own timings) into $BENCH_BUILD_DIR, else $TMPDIR.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUTDIR=${BENCH_BUILD_DIR:-${TMPDIR:-/tmp}}/gocurator-bench
mkdir -p "$OUTDIR"
SUM=$(cd "$ROOT" && { cat go.mod go.sum; git ls-files -co --exclude-standard -- '*.go' | grep -v '_test\.go$' | sort | xargs cat; } | md5sum | cut -c1-12)
BIN=$OUTDIR/bench-$SUM
if [[ ! -x $BIN ]]; then
  (cd "$ROOT" && go build -trimpath -o "$BIN.tmp.$$" ./examples/bench && mv "$BIN.tmp.$$" "$BIN")
fi
exec "$BIN" "$@"
