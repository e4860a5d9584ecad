package main

import (
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/pgtest"
)

// TestStatusStoreHealthy: `shirube status --store` of a healthy store
// reports it healthy and exits 0 (it used to check the unused index
// directory and call every store damaged).
func TestStatusStoreHealthy(t *testing.T) {
	fixture := indexedFixture(t)
	workspace(t, fixture)
	dsn := pgtest.NewDatabase(t)
	mustRun(t, "index", "--store", dsn)
	out, errOut, err := run(t, "", "status", "--store", dsn, "--index", t.TempDir())
	if err != nil || !strings.Contains(out, "health:     ok") {
		t.Fatalf("status --store: %v\n%s%s", err, out, errOut)
	}
}
