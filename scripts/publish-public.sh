#!/usr/bin/env bash
# Copies the public part of a compiled dist (index.json and every <stamp>/public) into a folder for a static host
# or CDN; the private part (notices, diff bases) stays behind. Usage: scripts/publish-public.sh DIST OUT
set -euo pipefail
dist="${1:?usage: publish-public.sh DIST OUT}"
out="${2:?usage: publish-public.sh DIST OUT}"
mkdir -p "$out"
for stamp_dir in "$dist"/*/; do
  stamp="$(basename "$stamp_dir")"
  [[ -d "$stamp_dir/public" ]] || continue
  mkdir -p "$out/$stamp"
  cp -R "$stamp_dir/public" "$out/$stamp/"
done
# index.json last: a host never points at a stamp whose files are not there yet.
cp "$dist/index.json" "$out/index.json.tmp" && mv "$out/index.json.tmp" "$out/index.json"
# Its signature (register compile --sign / register sign) right after: it names the sha256 of the index.json it
# signs, so a reader that catches the two files from different moments sees it and reads them again.
if [[ -f "$dist/index.json.sig" ]]; then
  cp "$dist/index.json.sig" "$out/index.json.sig.tmp" && mv "$out/index.json.sig.tmp" "$out/index.json.sig"
fi
