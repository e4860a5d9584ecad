#!/bin/sh
# make-pdf.sh — render examples/src/vpn_manual.html to
# examples/data/manuals/vpn_manual.pdf with headless Debian chromium
# (apt-get install chromium fonts-noto-cjk). Works offline.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
in="$here/vpn_manual.html"
out="$here/../data/manuals/vpn_manual.pdf"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
mkdir -p "$(dirname "$out")"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --no-pdf-header-footer \
  --print-to-pdf="$out" "file://$in"
pdfinfo "$out" 2>/dev/null | grep '^Pages:' || true
