package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/index"
)

// TestPrintSummaryOneLinePerSkip: a file name with line breaks stays on
// its own line of the skip report instead of forging extra lines.
func TestPrintSummaryOneLinePerSkip(t *testing.T) {
	var b bytes.Buffer
	printSummary(&b, index.Summary{Skipped: []document.Skip{
		{Path: "evil\n  secret.md: indexed fine\r", Reason: "empty file (0 bytes)\nsecond line"},
		{Path: "ok.md", Reason: "empty file (0 bytes)"},
	}})
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []string{
		`  "evil\n  secret.md: indexed fine\r": empty file (0 bytes) second line`,
		"  ok.md: empty file (0 bytes)",
	}
	if len(lines) != 5 || lines[3] != want[0] || lines[4] != want[1] {
		t.Errorf("report:\n%s\nwant the two skip lines %q", b.String(), want)
	}
}

// TestIndexChunkSizeRange: chunk sizes far from seed 002's 500 (400–600)
// are refused with a message naming the range and the flag, instead of
// being accepted silently.
func TestIndexChunkSizeRange(t *testing.T) {
	offlineEnv(t)
	t.Chdir(t.TempDir())
	os.MkdirAll("data", 0o755)
	os.WriteFile("data/a.md", []byte("# 見出し\n\n本文です。\n"), 0o644)
	for _, size := range []string{"5000", "100"} {
		_, _, err := run(t, "", "index", "--chunk-size", size)
		if err == nil || !strings.Contains(err.Error(), "chunk size "+size+" is outside 200–2000") || !strings.Contains(err.Error(), "--chunk-size") {
			t.Errorf("index --chunk-size %s: err %v; want the range and the flag named", size, err)
		}
	}
	if _, _, err := run(t, "", "index", "--chunk-size", "500", "--chunk-overlap", "300"); err == nil || !strings.Contains(err.Error(), "chunk overlap 300") {
		t.Errorf("index --chunk-overlap 300 with size 500: err %v; want it refused", err)
	}
	mustRun(t, "index", "--chunk-size", "600")
}
