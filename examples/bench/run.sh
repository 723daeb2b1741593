#!/usr/bin/env bash
# Builds examples/bench once (cached by source) and runs it with "$@", for
#   EXTRA_PEERS="gocurator=/abs/path/examples/bench/run.sh" ../shared/peers/run-all.sh full
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUTDIR=${BENCH_BUILD_DIR:-${TMPDIR:-/tmp}}/gocurator-bench
mkdir -p "$OUTDIR"
SUM=$(cd "$ROOT" && cat go.sum $(git ls-files '*.go' 2>/dev/null | grep -v _test.go) 2>/dev/null | md5sum | cut -c1-12)
BIN=$OUTDIR/bench-$SUM
if [[ ! -x $BIN ]]; then
  (cd "$ROOT" && go build -trimpath -o "$BIN" ./examples/bench)
fi
exec "$BIN" "$@"
