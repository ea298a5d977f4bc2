#!/usr/bin/env bash
# The whole test suite, on a fresh machine: builds everything (profile `ci`:
# optimized, with debug assertions and overflow checks), and
# the tests install ptxas/nvdisasm and NVRTC themselves (tools/setup-ptx-tools.sh,
# tools/setup-nvrtc.sh) into
# ~/.cache/ptx-opt-tools, and graphviz and z3 are installed with apt-get when missing.
# Uses ../shared/corpus when it exists.
# Ends with one summary line: "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."
# graphviz's `dot` checks the CFG output; install it when missing and possible.
if ! command -v dot >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "[test.sh] installing graphviz (for the cfg-dot test)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q graphviz >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q graphviz >/dev/null 2>&1; } \
    || echo "[test.sh] could not install graphviz; the cfg-dot test will fail" >&2
fi
# z3 proves the rewrite rules for all inputs (ptx-opt/src/rules/smt/);
# install it when missing and possible (the proofs are skipped without it).
if ! command -v z3 >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "[test.sh] installing z3 (for the SMT proofs of the rules)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q z3 >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q z3 >/dev/null 2>&1; } \
    || echo "[test.sh] could not install z3; the SMT proofs will be skipped" >&2
fi
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
cargo test --profile ci --workspace --locked --no-fail-fast 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
passed=$(grep -Eo '^test result: [a-zA-Z]+\. [0-9]+ passed' "$log" | awk '{s+=$4} END {print s+0}')
failed=$(grep -Eo '[0-9]+ failed;' "$log" | awk '{s+=$1} END {print s+0}')
echo
echo "$passed passed, $failed failed"
exit "$status"
