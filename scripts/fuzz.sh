#!/usr/bin/env bash
# Runs every fuzz target of the module briefly. The targets are discovered
# with `go test -list '^Fuzz'`, so a new Fuzz function is picked up without
# editing this script.
# Usage: scripts/fuzz.sh [fuzztime per target, default 10s] [packages, default ./...]
set -euo pipefail
fuzztime="${1:-10s}"
shift || true
pkgs=("${@:-./...}")
go="${GO:-go}"

# `go test -list` prints a package's matching names, then "ok <package> …".
targets=()
names=()
while read -r first second _; do
  case "$first" in
    Fuzz*) names+=("$first") ;;
    ok)
      for n in "${names[@]}"; do targets+=("$second $n"); done
      names=() ;;
    *) names=() ;;
  esac
done < <("$go" test -list '^Fuzz' "${pkgs[@]}")

echo "fuzzing ${#targets[@]} targets for $fuzztime each" >&2
failed=0
for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  echo "== $pkg $name" >&2
  "$go" test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" || failed=1
done
exit "$failed"
