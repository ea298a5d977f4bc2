#!/usr/bin/env bash
# Seeds every fuzz target's corpus (fuzz/corpus/TARGET/) with the real PTX
# files of tests/corpus/ and ../shared/corpus/ (when it exists). The `parse`,
# `roundtrip` and `optimize` targets read PTX text as PTX; the generator-driven
# targets read the same bytes as a choice stream. Files are named by content
# hash, so running the script twice adds nothing.
#
#   fuzz/seed-corpus.sh [TARGET...]      (default: every target in fuzz/Cargo.toml)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' "$here/Cargo.toml" | grep -v '^ptx-fuzz$')
fi
sources=("$root/tests/corpus")
[ -d "$root/../shared/corpus" ] && sources+=("$root/../shared/corpus")
for t in "${targets[@]}"; do
  dir="$here/corpus/$t"
  mkdir -p "$dir"
  before=$(find "$dir" -type f | wc -l)
  find "${sources[@]}" -type f -name '*.ptx' -print0 | while IFS= read -r -d '' f; do
    h=$(sha1sum "$f" | cut -c1-40)
    [ -e "$dir/$h" ] || cp "$f" "$dir/$h"
  done
  after=$(find "$dir" -type f | wc -l)
  echo "$t: $((after - before)) seeds added, $after in fuzz/corpus/$t"
done
