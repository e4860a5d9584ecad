#!/usr/bin/env bash
# Makes image-only copies of PDFs: every page rendered at 300 dpi (8-bit
# grey) with pdftoppm and wrapped again as a PDF with img2pdf, so the copy
# has no text layer at all. Needs poppler-utils and img2pdf.
# Usage: bench/ocr/make-image-pdfs.sh OUTDIR [PDF...]
#        (default PDFs: ../shared/datasets/pdf-ja/*.pdf)
set -euo pipefail
out="${1:?usage: $0 OUTDIR [PDF...]}"
shift
here="$(cd "$(dirname "$0")/../.." && pwd)"
if [ $# -eq 0 ]; then
  set -- "$here"/../shared/datasets/pdf-ja/*.pdf
fi
mkdir -p "$out"
for pdf in "$@"; do
  stem="$(basename "$pdf" .pdf)"
  tmp="$(mktemp -d)"
  pdftoppm -r 300 -gray -png "$pdf" "$tmp/p"
  img2pdf --output "$out/$stem.pdf" $(ls "$tmp"/p*.png | sort -V)
  rm -rf "$tmp"
  echo "$out/$stem.pdf: $(pdfinfo "$out/$stem.pdf" | awk '/^Pages/ {print $2}') pages" >&2
done
