#!/usr/bin/env bash
# One-shot end-to-end check of the VS Code extension, as a CI step would run it:
# installs the harness (install.sh), builds kodyls and the .vsix from this
# checkout, and runs run.mjs RUNS times (default 1).
#
#   bash editors/vscode/e2e/ci.sh [RUNS] [ARTIFACTS_DIR]
#
# Exits non-zero on the first failed run; artifacts (screenshots, logs) of run
# N are in ARTIFACTS_DIR/run-N (default: a temporary directory, printed).
set -euo pipefail
RUNS="${1:-1}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
ART="${2:-$(mktemp -d -t kodyls-e2e-artifacts-XXXXXX)}"
BUILD="$(mktemp -d -t kodyls-e2e-build-XXXXXX)"
trap 'rm -rf "$BUILD"' EXIT

t0=$(date +%s)
bash "$HERE/install.sh"
t1=$(date +%s)

(cd "$ROOT" && go build -o "$BUILD/kodyls" ./cmd/kodyls)
(cd "$ROOT" && go build -o "$BUILD/fakellm" ./agents/llmtest/fakellm)
(cd "$ROOT/editors/vscode" && npm ci --loglevel=error >/dev/null && npm run --silent package -- --out "$BUILD/kodyls.vsix" >/dev/null)
t2=$(date +%s)

for i in $(seq 1 "$RUNS"); do
  echo "ci.sh: run $i/$RUNS"
  node "$HERE/run.mjs" --vsix "$BUILD/kodyls.vsix" --kodyls "$BUILD/kodyls" --fakellm "$BUILD/fakellm" --artifacts "$ART/run-$i"
done
t3=$(date +%s)
echo "ci.sh: install $((t1 - t0))s, build $((t2 - t1))s, $RUNS run(s) $((t3 - t2))s; artifacts in $ART"
