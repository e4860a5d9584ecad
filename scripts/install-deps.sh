#!/usr/bin/env bash
# Installs the Debian packages shirube's tests and demo need, only when they
# are missing: poppler-utils + poppler-data (PDF text, Japanese included),
# tesseract-ocr + tesseract-ocr-jpn + tesseract-ocr-jpn-vert (OCR of scanned
# pages and image files; `all` and `ocr` only),
# chromium + fonts-noto-cjk (browser tests of the web UI), and the pgvector
# extension for the PostgreSQL store's tests (built from
# ../shared/third_party/pgvector-0.8.6.tar.gz when vector.control is missing).
# Usage: scripts/install-deps.sh [pdf|ocr|pgvector|all]   (default: all)
set -euo pipefail
want="${1:-all}"

# install_pgvector builds pgvector against PostgreSQL 15 when the extension
# is not installed yet (Debian bookworm does not package it): about 30 s.
install_pgvector() {
  local pgc=/usr/lib/postgresql/15/bin/pg_config
  [ -x "$pgc" ] || { echo "warning: PostgreSQL 15 not found; the PostgreSQL store's tests will skip (or fail with CI=true)" >&2; return 0; }
  [ -f "$("$pgc" --sharedir)/extension/vector.control" ] && return 0
  local src
  src="$(cd "$(dirname "$0")/.." && pwd)/../shared/third_party/pgvector-0.8.6.tar.gz"
  if [ ! -f "$src" ]; then
    echo "warning: $src not found; the PostgreSQL store runs without pgvector (exact vector scan)" >&2
    return 0
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "warning: pgvector is missing — as root run: apt-get install -y postgresql-server-dev-15 && make -C <pgvector source> && make -C <pgvector source> install" >&2
    return 0
  fi
  echo "building pgvector 0.8.6 ..." >&2
  export DEBIAN_FRONTEND=noninteractive
  dpkg-query -W -f='${Status}' postgresql-server-dev-15 2>/dev/null | grep -q "install ok installed" || {
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends postgresql-server-dev-15 >/dev/null
  }
  local tmp
  tmp="$(mktemp -d)"
  tar -xzf "$src" -C "$tmp"
  (cd "$tmp"/pgvector-0.8.6 && make -s PG_CONFIG="$pgc" >/dev/null && make -s PG_CONFIG="$pgc" install >/dev/null)
  rm -rf "$tmp"
}
if [ "$want" = pgvector ]; then
  install_pgvector
  exit 0
fi
if [ "$want" = all ]; then
  install_pgvector
fi
missing=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in poppler-utils poppler-data; do have_pkg "$p" || missing+=("$p"); done
if [ "$want" = all ]; then
  for p in chromium fonts-noto-cjk; do have_pkg "$p" || missing+=("$p"); done
fi
if [ "$want" = all ] || [ "$want" = ocr ]; then
  for p in tesseract-ocr tesseract-ocr-jpn tesseract-ocr-jpn-vert; do have_pkg "$p" || missing+=("$p"); done
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
