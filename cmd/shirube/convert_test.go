package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestConvert(t *testing.T) {
	offlineEnv(t)
	t.Chdir(t.TempDir())
	judgeFiles(t)
	h, rows := readCSV(t, "rag_answers.csv")
	if !slices.Equal(h, []string{"Question Number", "Question", "RAG Answer", "Match Confidence", "Match Score"}) {
		t.Fatalf("header %v", h)
	}
	if len(rows) != 2 || rows[0][0] != "1" || rows[1][0] != "2" || rows[1][2] != "15分以内にチケットを起票します。" {
		t.Errorf("rows %q", rows)
	}
	_, _, err := run(t, "", "convert", "missing_dir")
	var ec exitCode
	if !errors.As(err, &ec) || !strings.HasPrefix(ec.msg, "Error: missing_dir not found") {
		t.Errorf("missing input: %v", err)
	}
}
