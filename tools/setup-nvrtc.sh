#!/usr/bin/env bash
# setup-nvrtc.sh - install NVIDIA's NVRTC library (CUDA C++ -> PTX, no GPU needed) for the test suite's
# NVRTC oracle (tests/oracle/), from the PyPI wheel nvidia-cuda-nvrtc-cu12.
#
# Usage:
#   tools/setup-nvrtc.sh [--quiet]
#   eval "$(tools/setup-nvrtc.sh --quiet)"     # exports NVRTC_LIB (the directory holding libnvrtc.so.12)
#
# Installs, idempotently, into $PTX_TOOLS_DIR/nvrtc (default ~/.cache/ptx-opt-tools/nvrtc) under an exclusive
# lock, staged and moved into place with an atomic rename. PTX_WHEEL_CACHE, when set, is searched first for the
# wheel and keeps a downloaded one. Needs python3 with pip and access to PyPI, only when it is missing.
# On success prints `export NVRTC_LIB='...'` on stdout and exits 0; otherwise prints the reason and exits non-zero.
set -euo pipefail

VER="12.9.86"
PKG="nvidia-cuda-nvrtc-cu12"
ME="setup-nvrtc"
QUIET=0
for a in "$@"; do
  case "$a" in
    --quiet|-q) QUIET=1 ;;
    -h|--help) sed -n '2,12p' "$0" | sed -E 's/^# ?//'; exit 0 ;;
    *) echo "$ME: unknown option: $a (see --help)" >&2; exit 2 ;;
  esac
done
log() { [ "$QUIET" = 1 ] || echo "[$ME] $*" >&2; }
die() { echo "[$ME] ERROR: $*" >&2; exit 3; }

if [ -n "${PTX_TOOLS_DIR:-}" ]; then BASE="$PTX_TOOLS_DIR"
elif [ -n "${HOME:-}" ]; then BASE="$HOME/.cache/ptx-opt-tools"
else die "neither PTX_TOOLS_DIR nor HOME is set"; fi
case "$BASE" in /*) ;; *) BASE="$(pwd)/$BASE" ;; esac
case "$BASE" in *"'"*) die "PTX_TOOLS_DIR must not contain a single quote: $BASE" ;; esac
LIB="$BASE/nvrtc/lib"
PY="$(command -v python3 || true)"
[ -n "$PY" ] || die "python3 is required"

# works DIR: the library in DIR loads and reports version 12.9
works() {
  "$PY" - "$1" <<'EOF' >/dev/null 2>&1
import ctypes, os, sys
lib = ctypes.CDLL(os.path.join(sys.argv[1], "libnvrtc.so.12"))
ma, mi = ctypes.c_int(), ctypes.c_int()
sys.exit(lib.nvrtcVersion(ctypes.byref(ma), ctypes.byref(mi)) != 0 or (ma.value, mi.value) != (12, 9))
EOF
}

if ! works "$LIB"; then
  mkdir -p "$BASE" || die "cannot create $BASE"
  exec 9>"$BASE/.nvrtc.lock" || die "cannot open $BASE/.nvrtc.lock"
  command -v flock >/dev/null 2>&1 && { flock -w "${PTX_TOOLS_LOCK_TIMEOUT:-1800}" 9 || die "timed out waiting for $BASE/.nvrtc.lock"; }
  if ! works "$LIB"; then
    STAGE="$(mktemp -d "$BASE/.nvrtc-stage.XXXXXX")"
    trap 'rm -rf "$STAGE"' EXIT
    whl=""
    if [ -n "${PTX_WHEEL_CACHE:-}" ]; then
      whl="$(ls "$PTX_WHEEL_CACHE"/nvidia_cuda_nvrtc_cu12-"$VER"-*.whl 2>/dev/null | head -1 || true)"
    fi
    if [ -z "$whl" ]; then
      log "downloading $PKG==$VER from PyPI"
      "$PY" -m pip download --no-deps --only-binary=:all: --disable-pip-version-check -q -d "$STAGE/dl" "$PKG==$VER" >&2 \
        || die "cannot download $PKG==$VER with pip (is PyPI reachable? is this x86_64 Linux?)"
      whl="$(ls "$STAGE"/dl/*.whl | head -1)"
      if [ -n "${PTX_WHEEL_CACHE:-}" ] && mkdir -p "$PTX_WHEEL_CACHE" 2>/dev/null; then
        cp "$whl" "$PTX_WHEEL_CACHE/.$(basename "$whl").$$" && mv -f "$PTX_WHEEL_CACHE/.$(basename "$whl").$$" "$PTX_WHEEL_CACHE/$(basename "$whl")" || true
      fi
    fi
    mkdir -p "$STAGE/nvrtc/lib"
    "$PY" - "$whl" "$STAGE/nvrtc/lib" <<'EOF' || die "cannot extract the NVRTC libraries from $whl"
import os, shutil, sys, zipfile
whl, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z:
    members = [m for m in z.namelist() if m.startswith("nvidia/cuda_nvrtc/lib/") and not m.endswith("/")]
    if not any(m.endswith("/libnvrtc.so.12") for m in members):
        sys.exit("no libnvrtc.so.12 in " + whl)
    for m in members:
        with z.open(m) as src, open(os.path.join(dest, os.path.basename(m)), "wb") as dst:
            shutil.copyfileobj(src, dst)
EOF
    works "$STAGE/nvrtc/lib" || die "the NVRTC library from $(basename "$whl") does not load or is not version 12.9"
    rm -rf "$BASE/nvrtc.old"
    [ -e "$BASE/nvrtc" ] && mv "$BASE/nvrtc" "$BASE/nvrtc.old"
    mv "$STAGE/nvrtc" "$BASE/nvrtc"
    rm -rf "$BASE/nvrtc.old"
    log "installed NVRTC $VER in $LIB"
  fi
fi
works "$LIB" || die "$LIB does not hold a working NVRTC 12.9"
echo "export NVRTC_LIB='$LIB'"
