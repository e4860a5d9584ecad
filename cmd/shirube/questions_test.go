package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func testQuestions(t *testing.T, ws string) {
	out := mustRun(t, "questions", "--seed", "3", "-o", "q.csv")
	if !strings.Contains(out, "generator offline") {
		t.Errorf("questions output: %s", out)
	}
	h, rows := readCSV(t, "q.csv")
	if !slices.Equal(h, []string{"Question", "Ground Truth", "Reference Document", "Page", "Checklist", "Generator"}) {
		t.Fatalf("questions header = %v", h)
	}
	if len(rows) < 5 {
		t.Fatalf("%d questions, want several for 7 documents", len(rows))
	}
	ref := col(t, h, "Reference Document")
	negatives := 0
	for _, r := range rows {
		if r[ref] == "" {
			negatives++
			continue
		}
		for _, id := range strings.Split(r[ref], "\n") {
			if _, err := os.Stat(filepath.Join(ws, filepath.FromSlash(id))); err != nil {
				t.Errorf("reference %s is not a page of the database: %v", id, err)
			}
		}
	}
	if negatives == 0 {
		t.Error("no question the documents cannot answer")
	}
}
