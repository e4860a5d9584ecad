#!/usr/bin/env bash
# Installs the Debian packages shirube's tests and demo need, only when they
# are missing: poppler-utils + poppler-data (PDF text, Japanese included),
# chromium + fonts-noto-cjk (browser tests of the web UI).
# Usage: scripts/install-deps.sh [pdf|all]   (default: all)
set -euo pipefail
want="${1:-all}"
missing=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in poppler-utils poppler-data; do have_pkg "$p" || missing+=("$p"); done
if [ "$want" = all ]; then
  for p in chromium fonts-noto-cjk; do have_pkg "$p" || missing+=("$p"); done
fi
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "warning: missing packages ${missing[*]} — install them with: sudo apt-get install -y ${missing[*]}" >&2
  exit 0
fi
echo "installing ${missing[*]} ..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
