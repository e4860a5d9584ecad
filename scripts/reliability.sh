#!/usr/bin/env bash
# reliability.sh — the reliability suite of issue 24, run by `make reliability`.
#
# Cases (each bounded in time; servers listen on 127.0.0.1 only):
#   crash      kill -9 during `shirube index` after a source was deleted, at
#              8 moments; the next run (and --rebuild) must give a healthy
#              index with exactly the sources, the deleted one's pages gone
#   switch     the Go kill-at-every-step and disk-full tests of internal/index
#   pg-audit-outage  PostgreSQL stopped and restarted while the audit log
#              writes to it: no entry lost, none twice (Go test)
#   hostile    a 2,000-page PDF sharing one no-op stream: with pdftotext and
#              with the built-in reader, skipped within --file-timeout, no
#              reader process left
#   live       `serve`, then a source removed and `shirube index` in another
#              process: the first question after it is answered from the
#              new generation (no poll window) and cites no removed page
#   load       20 clients on /api/search for 15 s: 0 errors (503 with
#              Retry-After is the admission bound working, not an error)
#
# Prints one line per case and a summary; exits 1 when a case fails.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$WORK"' EXIT
export GOFLAGS=-buildvcs=false
unset OPENAI_API_KEY ANTHROPIC_API_KEY SHIRUBE_STORE SHIRUBE_GENERATOR
BIN=$WORK/shirube PROBE=$WORK/probe TIMEOUT=$(command -v timeout)
(cd "$ROOT" && go build -o "$BIN" ./cmd/shirube && go build -o "$PROBE" ./scripts/reliability/probe) || exit 1

cases=0 passes=0
report() { # name ok detail
	cases=$((cases + 1))
	if [ "$2" = ok ]; then passes=$((passes + 1)); echo "PASS  $1  $3"; else echo "FAIL  $1  $3"; fi
}

# workspace DIR: a copy of the demo corpus as ./data.
workspace() { rm -rf "$1"; mkdir -p "$1"; cp -r "$ROOT/examples/data" "$1/data"; }
sh_() { (cd "$1" && shift && timeout 300 "$BIN" --env-file "" "$@"); }
docs() { sh_ "$1" status --json 2>/dev/null | sed -n 's/.*"documents": \([0-9]*\).*/\1/p'; }
health() { sh_ "$1" status --json 2>/dev/null | grep -c '"health": "ok"'; }

# --- crash -------------------------------------------------------------
victims=(runbooks/backup_restore runbooks/account_lockout runbooks/log_retention policies/severity_matrix)
exts=(md md md html)
crash_ok=0
for i in 1 2 3 4 5 6 7 8; do
	ws=$WORK/crash$i
	workspace "$ws"
	sh_ "$ws" index >/dev/null 2>&1
	v=${victims[$((i % 4))]} e=${exts[$((i % 4))]}
	rm "$ws/data/$v.$e"
	touch "$ws/data/runbooks/incident_response.md"
	(cd "$ws" && exec "$BIN" --env-file "" index --rebuild >/dev/null 2>&1) &
	pid=$!
	sleep "0.$((i * 11))"
	kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	good=1
	for args in "index" "index --rebuild"; do
		sh_ "$ws" $args >/dev/null 2>&1 || good=0
		[ "$(health "$ws")" = 1 ] || good=0
		[ "$(docs "$ws")" = 6 ] || good=0
		[ ! -e "$ws/database/$v" ] || good=0
	done
	[ $good = 1 ] && crash_ok=$((crash_ok + 1))
done
[ $crash_ok = 8 ] && r=ok || r=fail
report crash $r "$crash_ok/8 kills at 0.11–0.88 s left a healthy index of 6 sources, deleted pages gone"

# --- switch (Go tests) -------------------------------------------------
if (cd "$ROOT" && go test -count=1 -run 'TestSwitchKilledAtEveryStep|TestBuildDiskFullKeepsPrevious|TestSkippedDocumentNotResurrected' ./internal/index/ >"$WORK/switch.log" 2>&1); then
	report switch ok "kill after every file system step of the switch, disk full mid-build: as a clean build"
else
	report switch fail "$(tail -3 "$WORK/switch.log" | tr '\n' ' ')"
fi

# --- PostgreSQL audit outage (Go test, a cluster of its own) -------------
if (cd "$ROOT" && go test -count=1 -run 'TestAuditLogOutage|TestAuditLogSkipsTornSpoolLine' ./internal/pgstore/ >"$WORK/pgaudit.log" 2>&1) && ! grep -q -- "--- SKIP" "$WORK/pgaudit.log"; then
	report pg-audit-outage ok "PostgreSQL stopped and restarted under the audit log: entries spooled, then all in the table, in order, none twice"
else
	report pg-audit-outage fail "$(tail -3 "$WORK/pgaudit.log" | tr '\n' ' ')"
fi

# --- hostile PDF -------------------------------------------------------
for reader in pdftotext builtin; do
	ws=$WORK/hostile-$reader
	workspace "$ws"
	"$PROBE" hostile-pdf "$ws/data/hostile.pdf"
	path=$PATH
	[ $reader = builtin ] && path=/nonexistent
	start=$(date +%s)
	out=$(cd "$ws" && PATH=$path "$TIMEOUT" 120 "$BIN" --env-file "" index --file-timeout 5s 2>&1)
	rc=$? took=$(($(date +%s) - start))
	left=$(pgrep -f "$ws/data/hostile.pdf" | wc -l)
	if [ $rc = 0 ] && [ $took -le 60 ] && [ "$left" = 0 ] && echo "$out" | grep -q "hostile.pdf: .*time limit"; then
		report "hostile-$reader" ok "skipped after the 5 s limit, index done in ${took}s, no reader left"
	else
		report "hostile-$reader" fail "rc=$rc took=${took}s readers_left=$left: $(echo "$out" | tail -2 | tr '\n' ' ')"
	fi
done

# --- live index while serving -----------------------------------------
port=$((18000 + $$ % 1000))
url=http://127.0.0.1:$port
ws=$WORK/live
workspace "$ws"
sh_ "$ws" index >/dev/null 2>&1
(cd "$ws" && exec "$BIN" --env-file "" serve --addr 127.0.0.1:$port 2>"$WORK/serve.log") &
srv=$!
for _ in $(seq 50); do "$PROBE" gen "$url" >/dev/null 2>&1 && break; sleep 0.2; done
before=$("$PROBE" ask "$url" "バックアップからの復旧手順は？" 2>&1 | head -1)
rm "$ws/data/runbooks/backup_restore.md"
sh_ "$ws" index >/dev/null 2>&1
# The very first question after the build: no poll in between.
after=$("$PROBE" ask "$url" "バックアップからの復旧手順は？" 2>&1)
swapped=$("$PROBE" gen "$url" 2>/dev/null)
missing=0
for f in $after; do [ -e "$ws/${f%%#*}" ] || missing=$((missing + 1)); done
if [[ $before == database/runbooks/backup_restore/* ]] && [ "$swapped" = 2 ] && ! echo "$after" | grep -q backup_restore && [ $missing = 0 ]; then
	report live ok "the first question after \`shirube index\` was answered from generation 2; removed source not cited, every cited page exists"
else
	report live fail "before=$before generation=${swapped:-?} after=$(echo $after) missing=$missing"
fi

# --- load --------------------------------------------------------------
q=$(printf '%s' "アカウントロック 解除" | od -An -tx1 | tr -d ' \n' | sed 's/../%&/g')
search=$("$PROBE" load "$url" "/api/search?q=$q" 20 15s)
errs=$(echo "$search" | sed -n 's/.*"errors":\([0-9]*\).*/\1/p')
[ "$errs" = 0 ] && r=ok || r=fail
report load-search $r "$search"
kill "$srv"; wait "$srv" 2>/dev/null

echo "reliability: $passes/$cases cases passed ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores)"
[ $passes = $cases ]
