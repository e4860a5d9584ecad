package main

import (
	"bytes"
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
