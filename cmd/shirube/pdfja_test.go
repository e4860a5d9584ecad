package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/eval/batch"
)

// pdfJaDir is the shared Japanese PDF dataset (read-only).
const pdfJaDir = "../../../shared/datasets/pdf-ja"

// pdfJaFiles are the two smaller PDFs of the dataset (15 and 11 pages).
var pdfJaFiles = []string{"qa_futankeigen.pdf", "JVNiPedia2024q2.pdf"}

// TestBatchPDFJa runs the whole offline evaluation on real Japanese PDFs:
// index → questions --offline → ask q.csv --workers 5.
func TestBatchPDFJa(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext not installed (apt-get install poppler-utils poppler-data)")
	}
	src, err := filepath.Abs(pdfJaDir)
	if err != nil {
		t.Fatal(err)
	}
	offlineEnv(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data", "pdfja"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range pdfJaFiles {
		b, err := os.ReadFile(filepath.Join(src, name))
		if os.IsNotExist(err) {
			t.Skipf("dataset file %s missing", filepath.Join(src, name))
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "data", "pdfja", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)

	if out := mustRun(t, "index"); !strings.Contains(out, "indexed 2 documents") {
		t.Fatalf("index output:\n%s", out)
	}

	qout := mustRun(t, "questions", "--offline", "--seed", "7", "-o", "q.csv")
	if !strings.Contains(qout, "generator offline") {
		t.Errorf("questions output: %s", qout)
	}
	qh, qrows := readCSV(t, "q.csv")
	if len(qrows) < 10 {
		t.Fatalf("%d questions for 26 pages, want at least 10", len(qrows))
	}
	qcol, qref := col(t, qh, batch.ColQuestion), col(t, qh, batch.ColReference)
	for _, r := range qrows {
		for _, id := range strings.Split(r[qref], "\n") {
			if id == "" {
				continue
			}
			if !strings.HasPrefix(id, "database/pdfja/") {
				t.Errorf("reference %q is not a page of the PDFs", id)
			} else if _, err := os.Stat(filepath.FromSlash(id)); err != nil {
				t.Errorf("reference %s: %v", id, err)
			}
		}
	}

	out := mustRun(t, "ask", "q.csv", "--workers", "5", "--logs", "logs")

	results := field(t, out, "results")
	header, rows := readCSV(t, results)
	seedCols := []string{batch.ColQuestion, batch.ColGroundTruth, batch.ColReference, batch.ColPage, batch.ColChecklist,
		batch.ColAnswer, batch.ColRetrieved, batch.ColChecklistRecall, batch.ColChecklistPrecision,
		batch.ColChecklistTP, batch.ColChecklistFP, batch.ColChecklistFN,
		batch.ColRefRecall, batch.ColRefPrecision, batch.ColRefSpecificity,
		batch.ColRefTP, batch.ColRefTN, batch.ColRefFP, batch.ColRefFN, batch.ColReason}
	if len(header) < len(seedCols) || !slices.Equal(header[:len(seedCols)], seedCols) {
		t.Errorf("results header = %v\nwant it to start with the seed columns %v", header, seedCols)
	}
	if len(rows) != len(qrows) {
		t.Fatalf("results have %d rows, want one per question (%d)", len(rows), len(qrows))
	}
	question, ref, recall, reason, answer := col(t, header, batch.ColQuestion), col(t, header, batch.ColReference),
		col(t, header, batch.ColRefRecall), col(t, header, batch.ColReason), col(t, header, batch.ColAnswer)
	numeric := 0
	for i, r := range rows {
		if r[question] != qrows[i][qcol] {
			t.Errorf("row %d question %q, want %q (input order)", i+1, r[question], qrows[i][qcol])
		}
		if strings.HasPrefix(r[reason], "error:") {
			t.Errorf("row %d failed: %s", i+1, r[reason])
		}
		if r[answer] == "" {
			t.Errorf("row %d has no answer", i+1)
		}
		if strings.TrimSpace(r[ref]) == "" {
			continue // no reference: recall is undefined
		}
		v, err := strconv.ParseFloat(r[recall], 64)
		if err != nil || v < 0 || v > 1 {
			t.Errorf("row %d Ref Recall %q is not a number in [0, 1]", i+1, r[recall])
			continue
		}
		numeric++
	}
	if numeric == 0 {
		t.Error("no row has a Ref Recall value")
	}

	sh, srows := readCSV(t, field(t, out, "summary"))
	if !slices.Equal(sh, []string{"Metric", "Value", "Rows"}) {
		t.Errorf("summary header = %v", sh)
	}
	var summaryRecall string
	for _, r := range srows {
		if r[0] == batch.ColRefRecall {
			summaryRecall = r[1]
		}
	}
	if v, err := strconv.ParseFloat(summaryRecall, 64); err != nil || v <= 0 {
		t.Errorf("summary Ref Recall = %q, want a positive number (questions are written from the pages)", summaryRecall)
	}
	t.Logf("%d questions, summary Ref Recall %s", len(rows), summaryRecall)

	if n := len(auditLines(t, "logs")); n != len(qrows) {
		t.Errorf("audit log has %d lines, want one per question (%d)", n, len(qrows))
	}
}
