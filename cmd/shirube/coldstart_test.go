package main

import (
	"os"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
)

// TestSearchDamagedDictionaryCache: `index` leaves the flat dictionary in
// the user cache; when that file is damaged, `search` still answers, says
// in one warning what happened, and the rewritten cache is used silently
// the next time.
func TestSearchDamagedDictionaryCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	indexedFixture(t)
	path, err := analysis.FlatDictPath()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("index did not leave the flat dictionary: %v", err)
	}
	if err := os.WriteFile(path, b[:len(b)/3], 0o600); err != nil {
		t.Fatal(err)
	}
	const q = "アカウントロックアウトの解除手順"
	out, errOut, err := run(t, "", "search", q)
	if err != nil || !strings.Contains(out, "1. ") {
		t.Fatalf("search with a damaged cache: %v\n%s%s", err, out, errOut)
	}
	if !strings.Contains(errOut, "warning: dictionary cache") || !strings.Contains(errOut, "damaged or truncated") || !strings.Contains(errOut, "rewrote the cache") {
		t.Fatalf("stderr %q: want one warning naming the damaged cache", errOut)
	}
	again, errOut, err := run(t, "", "search", q)
	if err != nil || errOut != "" || again != out {
		t.Fatalf("after the rewrite: err %v, stderr %q, same results %v", err, errOut, again == out)
	}
}
