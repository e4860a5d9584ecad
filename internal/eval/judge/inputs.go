package judge

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/shirube/shirube/internal/csvx"
	"github.com/shirube/shirube/internal/eval/convert"
)

// Question is one question present in all three input files.
type Question struct {
	Key         string // canonical question number ("Q01" and "1" both give "1")
	Number      string // Question Number as written in questions.csv
	Question    string
	GroundTruth string
	Answer      string // the RAG answer; may be empty
}

// inputFile describes one of the three CSVs.
type inputFile struct {
	path     string // as given (shown to the user)
	full     string // resolved against Options.Dir
	columns  string // for the "not found" message
	valueCol string // canonical name of the value column
	aliases  []string
}

// table is one loaded CSV: question key → value, in file order.
type table struct {
	keys   []string
	number map[string]string // key → number as written
	value  map[string]string
	digest [32]byte // sha256 of the file's bytes
}

// numberAliases are other names accepted for the Question Number column.
func numberAliases() []string {
	return []string{"Question ID", "QID", "ID", "Number", "No"}
}

// loadTable reads one input file. Warnings (encoding, duplicates, rows
// without a number) go to warn.
func loadTable(f inputFile, warn func(string)) (table, error) {
	data, err := os.ReadFile(f.full)
	if errors.Is(err, fs.ErrNotExist) {
		return table{}, fmt.Errorf("%s not found. Create this file with columns: %s", f.path, f.columns)
	}
	if err != nil {
		return table{}, fmt.Errorf("read %s: %w", f.path, err)
	}
	header, rows, w, err := csvx.ReadAll(strings.NewReader(string(data)))
	if err != nil {
		return table{}, fmt.Errorf("%s: %w. Check that it is a CSV file with columns: %s", f.path, err, f.columns)
	}
	if w != "" {
		warn(fmt.Sprintf("%s: %s", f.path, w))
	}
	numCol := csvx.MatchColumn(header, "Question Number", numberAliases()...)
	valCol := csvx.MatchColumn(header, f.valueCol, f.aliases...)
	if numCol < 0 || valCol < 0 || numCol == valCol {
		return table{}, fmt.Errorf("%s needs the columns %s (found: %s). Rename the header row to match", f.path, f.columns, strings.Join(header, ", "))
	}
	t := table{number: map[string]string{}, value: map[string]string{}, digest: sha256.Sum256(data)}
	for i, r := range rows {
		num := strings.TrimSpace(r[numCol])
		if num == "" {
			if strings.TrimSpace(strings.Join(r, "")) != "" {
				warn(fmt.Sprintf("%s row %d has no Question Number; skipped", f.path, i+2))
			}
			continue
		}
		key, ok := convert.QuestionID(num)
		if !ok {
			key = num
		}
		if _, dup := t.value[key]; dup {
			warn(fmt.Sprintf("%s: Question Number %s appears more than once; the first row is used", f.path, num))
			continue
		}
		t.keys = append(t.keys, key)
		t.number[key] = num
		t.value[key] = r[valCol]
	}
	return t, nil
}

// intersect returns the questions present in all three tables, in
// questions.csv order, and one warning per excluded question naming the
// files it is missing from.
func intersect(files [3]inputFile, tabs [3]table) ([]Question, []string) {
	var qs []Question
	var warns []string
	seen := map[string]bool{}
	for _, t := range tabs {
		for _, k := range t.keys {
			if seen[k] {
				continue
			}
			seen[k] = true
			var missing []string
			for i, u := range tabs {
				if _, ok := u.value[k]; !ok {
					missing = append(missing, files[i].path)
				}
			}
			if len(missing) > 0 {
				num := t.number[k]
				warns = append(warns, fmt.Sprintf("question %s excluded: missing from %s", num, strings.Join(missing, " and ")))
				continue
			}
			qs = append(qs, Question{
				Key:         k,
				Number:      tabs[0].number[k],
				Question:    tabs[0].value[k],
				GroundTruth: tabs[1].value[k],
				Answer:      tabs[2].value[k],
			})
		}
	}
	return qs, warns
}

// readPromptFile reads an optional prompt file; ok is false when it does
// not exist.
func readPromptFile(path string) (text string, ok bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", path, err)
	}
	return strings.TrimPrefix(string(b), csvx.BOM), true, nil
}
