// Package convert is the first step of judging a RAG system by its answer
// files (origin: seed 001, stage 1): it turns the JSON files a RAG system produced into rag_answers.csv, the answer
// sheet that package judge scores.
//
// Each JSON file may have any of three shapes (see Shape). Answers are tied
// to questions.csv by the text of their question, not by ids: both texts are
// normalised (NFKC, lower case, white space collapsed) and compared with
// Python's difflib ratio (see Ratio); the best question at or above
// Threshold (0.85) wins. The flat shape carries no question text, so there a
// key such as "Q3" is matched to Question Number 3 instead. Answers that
// match nothing are reported with a warning and skipped.
package convert

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/shirube/shirube/internal/csvx"
)

// Defaults used when an Options field is empty.
const (
	DefaultInput        = "RAG_JSON_Files"
	DefaultQuestionsCSV = "questions.csv"
	DefaultOutput       = "rag_answers.csv"
)

// Columns returns the header of the output file.
func Columns() []string {
	return []string{"Question Number", "Question", "RAG Answer", "Match Confidence", "Match Score"}
}

// Options configures Run.
type Options struct {
	Input        string    // a folder of *.json files or one .json file; default DefaultInput
	QuestionsCSV string    // questions with columns Question Number, Question; default DefaultQuestionsCSV
	Output       string    // CSV to write (replaced if present); default DefaultOutput
	Log          io.Writer // progress and warnings, one line each; nil discards
}

// Match is one answer tied to a question.
type Match struct {
	Number     string  // Question Number as written in questions.csv
	Question   string  // question text from questions.csv
	Answer     string  // the RAG answer
	Score      float64 // similarity (1 for id matches)
	Confidence string  // Perfect, Good, Low or ByID
	Source     string  // JSON file the answer came from
	JSONText   string  // question text (or key) as written in the JSON
}

// Report summarises a conversion.
type Report struct {
	Output    string         // path written
	Files     []string       // JSON files read, in order
	Items     int            // answers found in the files
	Matches   []Match        // rows written, in questions.csv order
	Unmatched []string       // one warning per answer that matched no question
	Counts    map[string]int // matches per confidence label
	Warnings  []string       // every warning printed, including Unmatched
}

type question struct {
	number, id, text, norm string
}

// Run converts the JSON answers in opts.Input to opts.Output. Problems with
// single answers (no match, duplicates, unreadable files) are warnings; a
// missing input, a missing or malformed questions.csv, or no matched answer at
// all are errors.
func Run(ctx context.Context, opts Options) (Report, error) {
	if opts.Input == "" {
		opts.Input = DefaultInput
	}
	if opts.QuestionsCSV == "" {
		opts.QuestionsCSV = DefaultQuestionsCSV
	}
	if opts.Output == "" {
		opts.Output = DefaultOutput
	}
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	rep := Report{Output: opts.Output, Counts: map[string]int{}}
	warn := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		rep.Warnings = append(rep.Warnings, msg)
		fmt.Fprintln(logw, "Warning: "+msg)
	}

	questions, err := readQuestions(opts.QuestionsCSV, warn)
	if err != nil {
		return rep, err
	}
	files, err := jsonFiles(opts.Input)
	if err != nil {
		return rep, err
	}
	rep.Files = files
	fmt.Fprintf(logw, "Found %d JSON file(s) in %s and %d question(s) in %s\n", len(files), opts.Input, len(questions), opts.QuestionsCSV)

	best := map[string]Match{} // by question number
	for _, path := range files {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			warn("skipped %s: %v", path, err)
			continue
		}
		items, shape, err := Parse(data)
		if err != nil {
			warn("skipped %s: %v", path, err)
			continue
		}
		fmt.Fprintf(logw, "%s: %s, %d answer(s)\n", path, shape, len(items))
		rep.Items += len(items)
		for _, it := range items {
			m, ok := matchItem(it, questions)
			if !ok {
				msg := fmt.Sprintf("no match for question %q in %s (best similarity %.2f < %.2f); skipped", clip(it.Question, 120), filepath.Base(path), m.Score, Threshold)
				if it.ID != "" {
					msg = fmt.Sprintf("no match for question Q%s in %s: %s has no Question Number %s; skipped", it.ID, filepath.Base(path), opts.QuestionsCSV, it.ID)
				}
				rep.Unmatched = append(rep.Unmatched, msg)
				warn("%s", msg)
				continue
			}
			m.Source = path
			if prev, dup := best[m.Number]; dup {
				keep := prev
				if m.Score > prev.Score {
					keep = m
				}
				warn("two answers match question %s (%s and %s); kept the one from %s (score %.2f)",
					m.Number, filepath.Base(prev.Source), filepath.Base(m.Source), filepath.Base(keep.Source), keep.Score)
				best[m.Number] = keep
				continue
			}
			best[m.Number] = m
		}
	}
	for _, q := range questions {
		if m, ok := best[q.number]; ok {
			rep.Matches = append(rep.Matches, m)
			rep.Counts[m.Confidence]++
		}
	}
	if len(rep.Matches) == 0 {
		return rep, fmt.Errorf("no answer in %s matched a question in %s; check that the JSON files answer the questions in %s", opts.Input, opts.QuestionsCSV, opts.QuestionsCSV)
	}
	if err := writeCSV(opts.Output, rep.Matches); err != nil {
		return rep, err
	}
	fmt.Fprintf(logw, "Wrote %d answer(s) to %s (PERFECT %d, GOOD %d, LOW %d, ID %d, unmatched %d)\n",
		len(rep.Matches), opts.Output, rep.Counts[Perfect], rep.Counts[Good], rep.Counts[Low], rep.Counts[ByID], len(rep.Unmatched))
	return rep, nil
}

// matchItem finds the question of it. When it fails, the returned Match
// carries the best score seen.
func matchItem(it Item, questions []question) (Match, bool) {
	m := Match{Answer: it.Answer, JSONText: it.Question}
	if it.ID != "" {
		m.JSONText = "Q" + it.ID
		for _, q := range questions {
			if q.id == it.ID {
				m.Number, m.Question, m.Score, m.Confidence = q.number, q.text, 1, ByID
				return m, true
			}
		}
		return m, false
	}
	n := normalizeQuestion(it.Question)
	bestIdx := -1
	for i, q := range questions {
		var s float64
		if q.norm == n {
			s = 1
		} else {
			s = Ratio(n, q.norm)
		}
		if s > m.Score || bestIdx < 0 {
			m.Score, bestIdx = s, i
		}
		if s == 1 {
			break
		}
	}
	if bestIdx < 0 || m.Score < Threshold {
		return m, false
	}
	q := questions[bestIdx]
	m.Number, m.Question, m.Confidence = q.number, q.text, Confidence(m.Score)
	return m, true
}

// readQuestions loads questions.csv.
func readQuestions(path string, warn func(string, ...any)) ([]question, error) {
	header, rows, w, err := csvx.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s not found. Create this file with columns: Question Number, Question", path)
	}
	if err != nil {
		return nil, err
	}
	if w != "" {
		warn("%s: %s", path, w)
	}
	numCol := csvx.MatchColumn(header, "Question Number", "Question ID", "QID", "ID", "Number")
	textCol := csvx.MatchColumn(header, "Question", "Query", "Question Text")
	if numCol < 0 || textCol < 0 {
		return nil, fmt.Errorf("%s needs the columns Question Number and Question (found: %s). Rename the header row to match", path, strings.Join(header, ", "))
	}
	var qs []question
	seen := map[string]bool{}
	for i, r := range rows {
		num := strings.TrimSpace(r[numCol])
		if num == "" {
			warn("%s row %d has no Question Number; skipped", path, i+2)
			continue
		}
		if seen[num] {
			warn("%s: Question Number %s appears more than once; the first is used", path, num)
			continue
		}
		seen[num] = true
		id, ok := QuestionID(num)
		if !ok {
			id = num
		}
		qs = append(qs, question{number: num, id: id, text: r[textCol], norm: normalizeQuestion(r[textCol])})
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("%s has no questions. Add one row per question with columns: Question Number, Question", path)
	}
	return qs, nil
}

// jsonFiles lists the *.json files of a folder (sorted) or returns the one
// file given.
func jsonFiles(input string) ([]string, error) {
	st, err := os.Stat(input)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s not found. Put your RAG system's *.json answer files in a folder named %s, or pass the folder or a .json file as input", input, DefaultInput)
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{input}, nil
	}
	entries, err := os.ReadDir(input)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", input, err)
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && strings.EqualFold(filepath.Ext(e.Name()), ".json") {
			files = append(files, filepath.Join(input, e.Name()))
		}
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("no .json files in %s. Put your RAG system's JSON output there", input)
	}
	return files, nil
}

// writeCSV writes the matches atomically (csvx.WriteFile): a failed write
// leaves an earlier file at path as it was.
func writeCSV(path string, matches []Match) error {
	recs := make([][]string, len(matches))
	for i, m := range matches {
		recs[i] = []string{m.Number, m.Question, m.Answer, m.Confidence, strconv.FormatFloat(m.Score, 'f', 4, 64)}
	}
	return csvx.WriteFile(path, Columns(), recs)
}

// clip shortens s to at most n runes for warnings.
func clip(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n]) + "…"
}
