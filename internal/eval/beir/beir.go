// Package beir loads retrieval benchmarks laid out the BEIR way:
//
//	dir/corpus.jsonl      {"_id": "d0", "title": "...", "text": "..."} per line
//	dir/queries.jsonl     {"_id": "q0", "text": "...", "answers": [...]} per line
//	dir/qrels/test.tsv    query-id <TAB> corpus-id <TAB> score, with a header
//
// The "answers" array is not part of BEIR proper; JSQuAD-derived sets carry
// it for extractive-answer checks, and it is kept when present. Files are
// read as JSON lines, one object per line, streaming, so large corpora do not
// need to fit in memory twice.
package beir

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/shirube/shirube/internal/eval/ir"
)

// Doc is one corpus passage.
type Doc struct {
	ID    string
	Title string
	Text  string
}

// Query is one benchmark question. Answers holds gold answer strings when
// the dataset provides them (JSQuAD), else nil.
type Query struct {
	ID      string
	Text    string
	Answers []string
}

// Dataset is a loaded benchmark. Corpus and Queries keep file order.
type Dataset struct {
	// Dir is the directory the dataset was loaded from.
	Dir     string
	Corpus  []Doc
	Queries []Query
	// Qrels holds the judgements of the loaded split.
	Qrels ir.Qrels
}

// Load reads the dataset in dir with its "test" split, the split BEIR
// reports.
func Load(dir string) (*Dataset, error) {
	return LoadSplit(context.Background(), dir, "test")
}

// LoadSplit reads the dataset in dir with the judgements of
// dir/qrels/<split>.tsv. It fails when a file is missing or malformed, or
// when a document or query id repeats; errors name the file and line.
func LoadSplit(ctx context.Context, dir, split string) (*Dataset, error) {
	d := &Dataset{Dir: dir}
	docSeen := map[string]bool{}
	err := readFile(ctx, filepath.Join(dir, "corpus.jsonl"), func(line int, raw []byte) error {
		var v struct {
			ID    flexID `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		if v.ID == "" {
			return errors.New(`missing "_id"`)
		}
		if docSeen[string(v.ID)] {
			return fmt.Errorf("document id %q appears twice", v.ID)
		}
		docSeen[string(v.ID)] = true
		d.Corpus = append(d.Corpus, Doc{ID: string(v.ID), Title: v.Title, Text: v.Text})
		return nil
	})
	if err != nil {
		return nil, err
	}
	querySeen := map[string]bool{}
	err = readFile(ctx, filepath.Join(dir, "queries.jsonl"), func(line int, raw []byte) error {
		var v struct {
			ID      flexID   `json:"_id"`
			Text    string   `json:"text"`
			Answers []string `json:"answers"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		if v.ID == "" {
			return errors.New(`missing "_id"`)
		}
		if querySeen[string(v.ID)] {
			return fmt.Errorf("query id %q appears twice", v.ID)
		}
		querySeen[string(v.ID)] = true
		d.Queries = append(d.Queries, Query{ID: string(v.ID), Text: v.Text, Answers: v.Answers})
		return nil
	})
	if err != nil {
		return nil, err
	}
	qrelsPath := filepath.Join(dir, "qrels", split+".tsv")
	d.Qrels, err = ir.OpenQrels(qrelsPath)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	return d, nil
}

// EvalQueries returns the queries that the qrels judge with at least one
// relevant document, in file order. These are the queries a benchmark run
// should answer; ir.Evaluate skips the others anyway.
func (d *Dataset) EvalQueries() []Query {
	var out []Query
	for _, q := range d.Queries {
		for _, grade := range d.Qrels[q.ID] {
			if grade > 0 {
				out = append(out, q)
				break
			}
		}
	}
	return out
}

// flexID accepts an id written as a JSON string or a JSON number (some BEIR
// exports write numeric ids unquoted) and keeps its text.
type flexID string

func (f *flexID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexID(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("_id must be a string or a number, got %s", b)
	}
	*f = flexID(n.String())
	return nil
}

func readFile(ctx context.Context, path string, fn func(line int, raw []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open %s: %w (is this a BEIR dataset directory with corpus.jsonl, queries.jsonl and qrels/?)", path, err)
	}
	defer f.Close()
	if err := ReadJSONL(ctx, f, fn); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ReadJSONL calls fn with every non-blank line of r and its 1-based line
// number. A UTF-8 byte-order mark at the start and "\r\n" line ends are
// tolerated. An error from fn stops the read and is returned as
// "line N: ...". Lines may be arbitrarily long. ctx is checked every 1,024
// lines.
func ReadJSONL(ctx context.Context, r io.Reader, fn func(line int, raw []byte) error) error {
	br := bufio.NewReaderSize(r, 64*1024)
	for n := 1; ; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		raw, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if n == 1 {
			raw = bytes.TrimPrefix(raw, []byte("\uFEFF"))
		}
		if line := bytes.TrimSpace(raw); len(line) > 0 {
			if ferr := fn(n, line); ferr != nil {
				return fmt.Errorf("line %d: %w", n, ferr)
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
}
