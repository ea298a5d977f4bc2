#!/usr/bin/env bash
# The whole test suite, on a fresh machine: builds everything (release), and
# the tests install ptxas/nvdisasm themselves (tools/setup-ptx-tools.sh) into
# ~/.cache/ptx-opt-tools. Uses ../shared/corpus when it exists.
# Ends with one summary line: "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
cargo test --release --workspace --locked 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
passed=$(grep -Eo '^test result: [a-zA-Z]+\. [0-9]+ passed' "$log" | awk '{s+=$4} END {print s+0}')
failed=$(grep -Eo '[0-9]+ failed;' "$log" | awk '{s+=$1} END {print s+0}')
echo
echo "$passed passed, $failed failed"
exit "$status"
