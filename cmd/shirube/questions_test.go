package main

import (
	"os"
	"path/filepath"
	"regexp"
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
	// Every single-page question was checked against its page, and the
	// share that passed is reported.
	if !regexp.MustCompile(`(?m)^page check: \d+ of \d+ single-page questions pass \(\d+%\)`).MatchString(out) {
		t.Errorf("questions output does not report the page check:\n%s", out)
	}
	// A cloze question's ground truth is the blanked phrase, not the
	// sentence the question already quotes.
	gt := col(t, h, "Ground Truth")
	for _, r := range rows {
		_, quoted, cloze := strings.Cut(r[0], "に入る語句は何ですか？「")
		if cloze && len([]rune(r[gt])) >= len([]rune(quoted))-3 {
			t.Errorf("cloze question %q has the whole sentence %q as its ground truth", r[0], r[gt])
		}
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
