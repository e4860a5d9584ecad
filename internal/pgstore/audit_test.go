package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/auditlog"
	"github.com/shirube/shirube/internal/pgstore"
	"github.com/shirube/shirube/internal/pgtest"
)

// TestAuditLogOutage: while PostgreSQL is down, answers are still logged
// (Log returns no error) and their entries wait in the spool; when it is
// back they reach the table, in order, none lost and none twice — also
// when the spool is replayed after its rows were committed (a kill between
// the insert and the emptying), and when the process that spooled them
// stopped before PostgreSQL came back (the next one writes them).
func TestAuditLogOutage(t *testing.T) {
	c := pgtest.StartCluster(t)
	ctx := context.Background()
	db, err := pgstore.Connect(ctx, c.DSN("postgres"), pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	spool := filepath.Join(t.TempDir(), "logs", "audit_log.spool.jsonl")
	var mu sync.Mutex
	var warnings []string
	opt := pgstore.AuditOptions{Spool: spool, Retry: 20 * time.Millisecond, Timeout: 5 * time.Second, Warn: func(s string) {
		mu.Lock()
		warnings = append(warnings, s)
		mu.Unlock()
	}}
	l := pgstore.NewAuditLog(db, opt)
	defer l.Close()
	n := 0
	logOne := func(l *pgstore.AuditLog) {
		t.Helper()
		if err := l.Log(ctx, auditlog.Entry{SessionID: "s", Query: fmt.Sprintf("q%d", n), Answer: "a"}); err != nil {
			t.Fatalf("log q%d: %v", n, err)
		}
		n++
	}
	logOne(l) // q0 straight to the table
	checkTable(t, db, 1)

	if err := c.Halt(ctx); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		logOne(l) // q1..q5: spooled, no error for the answer
	}
	if got := spoolLines(t, spool); got != 5 {
		t.Fatalf("spool holds %d entries during the outage, want 5", got)
	}
	saved, err := os.ReadFile(spool)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	waitTable(t, db, 6) // the retry goroutine writes them
	logOne(l)           // q6: straight to the table again
	checkTable(t, db, 7)
	if got := spoolLines(t, spool); got != 0 {
		t.Errorf("spool holds %d entries after the outage", got)
	}
	mu.Lock()
	joined := strings.Join(warnings, "\n")
	mu.Unlock()
	if !strings.Contains(joined, "kept in "+spool) || !strings.Contains(joined, "the 5 spooled entries are in the audit_log table") {
		t.Errorf("warnings do not tell of the outage and its end:\n%s", joined)
	}

	// A replay of rows already committed stores nothing twice.
	if err := os.WriteFile(spool, saved, 0o600); err != nil {
		t.Fatal(err)
	}
	l2 := pgstore.NewAuditLog(db, opt)
	if _, err := l2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	checkTable(t, db, 7)

	// Spooled by a process that stopped during the outage, written by the
	// next one.
	if err := c.Halt(ctx); err != nil {
		t.Fatal(err)
	}
	logOne(l2) // q7
	l2.Close()
	if err := c.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	l3 := pgstore.NewAuditLog(db, opt)
	defer l3.Close()
	waitTable(t, db, 8)
	if got := spoolLines(t, spool); got != 0 {
		t.Errorf("spool holds %d entries after the restart", got)
	}
}

// TestAuditLogSkipsTornSpoolLine: a spool line cut off by a kill is
// skipped, and the entry appended after it is kept.
func TestAuditLogSkipsTornSpoolLine(t *testing.T) {
	db := connect(t, pgstore.Options{})
	ctx := context.Background()
	spool := filepath.Join(t.TempDir(), "spool.jsonl")
	if err := os.WriteFile(spool, []byte(`{"key":"k1","at":"2026-01-02T03:04:05Z","entry":{"session_id":"s","query":"q`), 0o600); err != nil {
		t.Fatal(err)
	}
	l := pgstore.NewAuditLog(db, pgstore.AuditOptions{Spool: spool, Retry: time.Hour})
	defer l.Close()
	if err := l.Log(ctx, auditlog.Entry{Query: "after"}); err != nil { // goes to the spool: it is not empty
		t.Fatal(err)
	}
	if _, err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := db.AuditEntries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Query != "after" {
		t.Errorf("table holds %+v, want the entry after the torn line", got)
	}
}

// checkTable fails unless the table holds exactly q0..q(n-1), in order.
func checkTable(t *testing.T, db *pgstore.DB, n int) {
	t.Helper()
	got, err := db.AuditEntries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var qs []string
	for _, e := range got {
		qs = append(qs, e.Query)
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("q%d", i))
	}
	if strings.Join(qs, ",") != strings.Join(want, ",") {
		t.Fatalf("audit_log holds %v, want %v", qs, want)
	}
}

// waitTable waits (up to a minute: PostgreSQL restarts on a busy machine)
// for the table to hold n rows, then checks them.
func waitTable(t *testing.T, db *pgstore.DB, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		got, err := db.AuditEntries(context.Background())
		if err == nil && len(got) >= n {
			break
		}
	}
	checkTable(t, db, n)
}

func spoolLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}
