#!/bin/sh
# An interestingness test for `ptx-opt reduce`: succeeds when optimizing
# FILE changes what a kernel computes on the reference interpreter.
#
#   differs.sh FILE
#
# Environment:
#   KERNEL    the kernel to run (required)
#   RUN_ARGS  the launch and arguments of `ptx-opt run` (required), e.g.
#             "--grid 1 --block 32 --arg buf:f32:32=random:1 --arg buf:f32:1=zeros --arg u32:32"
#   OPT       the optimizer, run as `$OPT FILE -o OUT` (default: `ptx-opt -O2`)
#   PTX_OPT   the ptx-opt binary that runs kernels (default: `ptx-opt`)
#
# Not interesting (exit 1) when the input itself does not run (the reducer
# must keep a kernel that runs), or when both runs print the same JSON.
set -u
f=$1
ptx_opt=${PTX_OPT:-ptx-opt}
opt=${OPT:-$ptx_opt -O2}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086 # OPT and RUN_ARGS are word lists
$ptx_opt run "$f" --kernel "$KERNEL" $RUN_ARGS > "$tmp/before.json" 2>/dev/null || exit 1
$opt "$f" -o "$tmp/opt.ptx" 2>/dev/null || exit 0   # an optimizer that fails is interesting too
$ptx_opt run "$tmp/opt.ptx" --kernel "$KERNEL" $RUN_ARGS > "$tmp/after.json" 2>/dev/null || exit 0
! cmp -s "$tmp/before.json" "$tmp/after.json"
