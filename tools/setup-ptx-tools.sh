#!/usr/bin/env bash
# setup-ptx-tools.sh - install the NVIDIA tools ptx-opt's test suite uses to judge PTX (no GPU, no CUDA toolkit):
# ptxas and nvdisasm, taken from NVIDIA's PyPI wheels.
#
# Usage:
#   tools/setup-ptx-tools.sh [--with-ptxas13] [--quiet]
#   eval "$(tools/setup-ptx-tools.sh --with-ptxas13 --quiet)"   # exports PTX_TOOLS_DIR, PTXAS, NVDISASM (, PTXAS13)
#
# Installs, idempotently, into $PTX_TOOLS_DIR (default: ~/.cache/ptx-opt-tools):
#   bin/ptxas     CUDA 12.9 ptxas    (wheel nvidia-cuda-nvcc-cu12==12.9.86): sm_50 .. sm_121, PTX ISA <= 8.8
#   bin/nvdisasm  CUDA 13.x nvdisasm (wheel nvidia-cuda-nvdisasm):           disassembles sm_75 and newer only
#   bin/ptxas13   with --with-ptxas13: CUDA 13.x ptxas (wheel nvidia-cuda-nvcc 13.x): PTX ISA 9.x, sm_75+ only
#
# Environment:
#   PTX_TOOLS_DIR            install dir (default ~/.cache/ptx-opt-tools)
#   PTX_WHEEL_CACHE          optional directory of wheels: searched first, and downloaded wheels are kept there.
#                            Without it, downloaded wheels are deleted once the tools are extracted.
#   PTX_TOOLS_CU13_VERSION   version of the CUDA 13 wheels (default below)
#   PTX_TOOLS_LOCK_TIMEOUT   seconds to wait for a concurrent installer (default 1800)
#
# Safe to run concurrently (tests run in parallel): installs happen under an exclusive lock on
# $PTX_TOOLS_DIR/.install.lock, every file is staged in $PTX_TOOLS_DIR and moved into place with an atomic
# rename, and a tool that is already installed (and reports the expected release) is never touched again.
# Needs python3 with pip (to download and unpack wheels) and access to PyPI, only when something is missing.
# On success prints `export NAME='value'` lines on stdout (progress goes to stderr) and exits 0; if any tool
# cannot be installed or does not run, prints the reason on stderr and exits non-zero.
set -euo pipefail

NVCC12_VER="12.9.86"
CU13_VER="${PTX_TOOLS_CU13_VERSION:-13.5.37}"
ME="setup-ptx-tools"
WITH_PTXAS13=0; QUIET=0
for a in "$@"; do
  case "$a" in
    --with-ptxas13) WITH_PTXAS13=1 ;;
    --quiet|-q) QUIET=1 ;;
    -h|--help) sed -n '2,26p' "$0" | sed -E 's/^# ?//'; exit 0 ;;
    *) echo "$ME: unknown option: $a (see --help)" >&2; exit 2 ;;
  esac
done

log() { [ "$QUIET" = 1 ] || echo "[$ME] $*" >&2; }
warn() { echo "[$ME] WARNING: $*" >&2; }
# die exits with status 3 so that the ERR trap (for unexpected failures) does not repeat the message when a
# die in a command substitution makes the enclosing command fail
die() { echo "[$ME] ERROR: $*" >&2; exit 3; }
trap 'rc=$?; [ $rc = 3 ] || echo "[$ME] ERROR: command failed (exit $rc) at line $LINENO: $BASH_COMMAND" >&2; exit $rc' ERR
shopt -s inherit_errexit 2>/dev/null || true

if [ -n "${PTX_TOOLS_DIR:-}" ]; then DIR="$PTX_TOOLS_DIR"
elif [ -n "${HOME:-}" ]; then DIR="$HOME/.cache/ptx-opt-tools"
else die "neither PTX_TOOLS_DIR nor HOME is set"; fi
case "$DIR" in *"'"*) die "PTX_TOOLS_DIR must not contain a single quote: $DIR" ;; esac
case "$DIR" in /*) ;; *) DIR="$(pwd)/$DIR" ;; esac

# tool_ok PATH RELEASE_PREFIX: PATH is executable, runs, and reports "release RELEASE_PREFIX..."
tool_ok() {
  [ -x "$1" ] || return 1
  local v
  v="$("$1" --version 2>/dev/null)" || return 1
  case "$v" in *"release $2"*) return 0 ;; *) return 1 ;; esac
}
release_of() { "$1" --version 2>/dev/null | sed -nE 's/.*release ([0-9.]+),.*/\1/p' | head -1; }

# The tool table: NAME  RELEASE_PREFIX  WHEEL  VERSION  FALLBACK_SPEC  MEMBER (regex of the file in the wheel)
tools_wanted() {
  echo "ptxas 12.9 nvidia-cuda-nvcc-cu12 $NVCC12_VER >=12.9,<12.10 ^nvidia/cuda_nvcc/bin/ptxas\$"
  echo "nvdisasm 13. nvidia-cuda-nvdisasm $CU13_VER >=13,<14 ^nvidia/[^/]+/bin/nvdisasm\$"
  if [ "$WITH_PTXAS13" = 1 ]; then
    echo "ptxas13 13. nvidia-cuda-nvcc $CU13_VER >=13,<14 ^nvidia/[^/]+/bin/ptxas\$"
  fi
}
missing_tools() {
  local name rel rest
  while read -r name rel rest; do
    tool_ok "$DIR/bin/$name" "$rel" || echo "$name"
  done < <(tools_wanted)
}

# ---------------------------------------------------------------- install (only when something is missing)
need="$(missing_tools)"
if [ -n "$need" ]; then
  mkdir -p "$DIR/bin" || die "cannot create $DIR/bin"

  # exclusive lock: flock if available, else a lock directory holding the owner's pid
  LOCK_TIMEOUT="${PTX_TOOLS_LOCK_TIMEOUT:-1800}"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$DIR/.install.lock" || die "cannot open lock file $DIR/.install.lock"
    if ! flock -n 9; then
      log "another installer is running; waiting for the lock (up to ${LOCK_TIMEOUT}s)"
      flock -w "$LOCK_TIMEOUT" 9 || die "timed out after ${LOCK_TIMEOUT}s waiting for $DIR/.install.lock"
    fi
  else
    lockdir="$DIR/.install.lock.d"; waited=0
    until mkdir "$lockdir" 2>/dev/null; do
      owner="$(cat "$lockdir/pid" 2>/dev/null || true)"
      if [ -n "$owner" ] && ! kill -0 "$owner" 2>/dev/null; then rm -rf "$lockdir"; continue; fi
      [ "$waited" -lt "$LOCK_TIMEOUT" ] || die "timed out after ${LOCK_TIMEOUT}s waiting for $lockdir"
      sleep 1; waited=$((waited + 1))
    done
    echo $$ >"$lockdir/pid"
    LOCKDIR_HELD="$lockdir"
  fi

  STAGE="$(mktemp -d "$DIR/.stage.XXXXXX")" || die "cannot create a staging dir in $DIR"
  cleanup() { rm -rf "$STAGE"; [ -n "${LOCKDIR_HELD:-}" ] && rm -rf "$LOCKDIR_HELD"; return 0; }
  trap cleanup EXIT

  PY="$(command -v python3 || command -v python || true)"
  [ -n "$PY" ] || die "python3 is required to install the NVIDIA wheels (apt-get install python3 python3-pip)"
  if "$PY" -m pip --version >/dev/null 2>&1; then PIP=("$PY" -m pip)
  elif command -v pip3 >/dev/null 2>&1; then PIP=(pip3)
  else die "pip is required to download the NVIDIA wheels (apt-get install python3-pip)"; fi

  WHEEL_CACHE="${PTX_WHEEL_CACHE:-}"
  if [ -n "$WHEEL_CACHE" ]; then mkdir -p "$WHEEL_CACHE" 2>/dev/null || true; fi

  # find_wheel PKG VERSION: print a valid cached wheel for PKG==VERSION, if any
  find_wheel() {
    local norm="${1//-/_}" w
    [ -n "$WHEEL_CACHE" ] || return 1
    for w in "$WHEEL_CACHE"/"$norm-$2-"*.whl; do
      [ -f "$w" ] && "$PY" -c 'import sys, zipfile; sys.exit(not zipfile.is_zipfile(sys.argv[1]))' "$w" \
        && { echo "$w"; return 0; }
    done
    return 1
  }
  # fetch_wheel PKG VERSION FALLBACK_SPEC: print the path of the wheel (cached or freshly downloaded)
  fetch_wheel() {
    local pkg="$1" ver="$2" fallback="$3" norm="${1//-/_}" w dl
    if w="$(find_wheel "$pkg" "$ver")"; then log "using cached wheel $w"; echo "$w"; return 0; fi
    dl="$(mktemp -d "$STAGE/dl.XXXXXX")"
    log "downloading $pkg==$ver from PyPI"
    if ! "${PIP[@]}" download --no-deps --only-binary=:all: --disable-pip-version-check -q -d "$dl" "$pkg==$ver" >&2; then
      warn "$pkg==$ver could not be downloaded; trying $pkg$fallback (SASS statistics may differ from the pinned version)"
      "${PIP[@]}" download --no-deps --only-binary=:all: --disable-pip-version-check -q -d "$dl" "$pkg$fallback" >&2 \
        || die "cannot download $pkg==$ver nor $pkg$fallback with pip (is PyPI reachable? is this x86_64/aarch64 Linux?)"
    fi
    w="$(ls "$dl"/"$norm"-*.whl 2>/dev/null | head -1 || true)"
    [ -n "$w" ] || die "pip download of $pkg left no wheel in $dl"
    if [ -n "$WHEEL_CACHE" ] && [ -w "$WHEEL_CACHE" ]; then
      # keep it for next time: copy into the cache under a temporary name, then rename (atomic)
      local base; base="$(basename "$w")"
      if cp "$w" "$WHEEL_CACHE/.$base.$$.part" 2>/dev/null && mv -f "$WHEEL_CACHE/.$base.$$.part" "$WHEEL_CACHE/$base"; then
        log "saved $base in $WHEEL_CACHE"
      else rm -f "$WHEEL_CACHE/.$base.$$.part"; fi
    fi
    echo "$w"
  }
  # extract WHEEL MEMBER_REGEX DEST: copy the single wheel member matching MEMBER_REGEX to the file DEST
  extract() {
    "$PY" - "$1" "$2" "$3" <<'EOF'
import os, re, shutil, sys, zipfile
whl, rx, dest = sys.argv[1], re.compile(sys.argv[2]), sys.argv[3]
with zipfile.ZipFile(whl) as z:
    names = [m for m in z.namelist() if rx.search(m) and not m.endswith('/')]
    if len(names) != 1:
        sys.exit('%s: expected exactly one member matching %s, found %r' % (whl, rx.pattern, names))
    with z.open(names[0]) as src, open(dest, 'wb') as dst:  # zipfile checks the CRC on read
        shutil.copyfileobj(src, dst)
os.chmod(dest, 0o755)
EOF
  }

  # re-check under the lock: a concurrent installer may have done the work meanwhile
  while read -r name rel pkg ver fallback member; do
    if tool_ok "$DIR/bin/$name" "$rel"; then continue; fi
    if [ -e "$DIR/bin/$name" ]; then
      log "$DIR/bin/$name does not run or is not release $rel; replacing it"
    fi
    w="$(fetch_wheel "$pkg" "$ver" "$fallback")"
    extract "$w" "$member" "$STAGE/$name" || die "cannot extract $member from $w"
    tool_ok "$STAGE/$name" "$rel" \
      || die "$name from $(basename "$w") does not run or is not release $rel: $("$STAGE/$name" --version 2>&1 | tail -1)"
    mv -f "$STAGE/$name" "$DIR/bin/$name"   # atomic: same file system
    log "installed $DIR/bin/$name (release $(release_of "$DIR/bin/$name"))"
    case "$w" in "$STAGE"/*) rm -f "$w" ;; esac   # an uncached download is not needed any more
  done < <(tools_wanted)
fi

# ---------------------------------------------------------------- final check and exports
while read -r name rel rest; do
  tool_ok "$DIR/bin/$name" "$rel" || die "$DIR/bin/$name is missing or is not a working release-$rel tool"
  log "$name: release $(release_of "$DIR/bin/$name")"
done < <(tools_wanted)

echo "export PTX_TOOLS_DIR='$DIR'"
echo "export PTXAS='$DIR/bin/ptxas'"
echo "export NVDISASM='$DIR/bin/nvdisasm'"
if [ "$WITH_PTXAS13" = 1 ] || tool_ok "$DIR/bin/ptxas13" "13."; then
  echo "export PTXAS13='$DIR/bin/ptxas13'"
fi
exit 0
