package beir

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const datasets = "../../../../shared/datasets"

func loadShared(t *testing.T, name string) *Dataset {
	t.Helper()
	dir := filepath.Join(datasets, name)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("dataset not available at %s: %v", dir, err)
	}
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestLoadJSQuAD(t *testing.T) {
	d := loadShared(t, "jsquad-valid")
	if len(d.Corpus) != 1145 || len(d.Queries) != 4442 {
		t.Fatalf("corpus/queries = %d/%d, want 1145/4442", len(d.Corpus), len(d.Queries))
	}
	if got := d.Corpus[0]; got.ID != "d0" || got.Title != "梅雨" || !strings.HasPrefix(got.Text, "梅雨（つゆ、ばいう）は") {
		t.Errorf("first doc = %+v", got)
	}
	want := Query{ID: "a10336p0q0", Text: "日本で梅雨がないのは北海道とどこか。", Answers: []string{"小笠原諸島", "小笠原諸島を除く日本", "小笠原諸島"}}
	if !reflect.DeepEqual(d.Queries[0], want) {
		t.Errorf("first query = %+v, want %+v", d.Queries[0], want)
	}
	if got := d.Qrels["a10336p0q0"]; !reflect.DeepEqual(got, map[string]int{"d0": 1}) {
		t.Errorf("qrels[a10336p0q0] = %v", got)
	}
	if n := len(d.EvalQueries()); n != 4442 {
		t.Errorf("EvalQueries = %d, want 4442", n)
	}
}

func TestLoadSciFact(t *testing.T) {
	d := loadShared(t, "scifact")
	if len(d.Corpus) != 5183 {
		t.Errorf("corpus = %d, want 5183", len(d.Corpus))
	}
	eq := d.EvalQueries()
	if len(eq) != 300 {
		t.Errorf("EvalQueries = %d, want 300", len(eq))
	}
	if len(eq) > 0 && eq[0].ID != "1" {
		t.Errorf("first eval query = %q, want \"1\" (file order)", eq[0].ID)
	}
	if eq[0].Answers != nil {
		t.Errorf("scifact has no answers, got %v", eq[0].Answers)
	}
	pairs := 0
	for _, docs := range d.Qrels {
		pairs += len(docs)
	}
	if pairs != 339 {
		t.Errorf("qrels pairs = %d, want 339", pairs)
	}
}

func writeDataset(t *testing.T, corpus, queries, qrels string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "qrels"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"corpus.jsonl": corpus, "queries.jsonl": queries, "qrels/test.tsv": qrels}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadSmall(t *testing.T) {
	const qrels = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t0\n"
	tests := []struct {
		name            string
		corpus, queries string
		wantErr         string
		wantDocs        []Doc
		wantEval        []string
	}{
		{
			name:     "bom, crlf, numeric id, blank line",
			corpus:   "\uFEFF{\"_id\": \"d1\", \"title\": \"T\", \"text\": \"x\"}\r\n\n{\"_id\": 2, \"text\": \"y\"}\n",
			queries:  "{\"_id\":\"q1\",\"text\":\"a?\"}\n{\"_id\":\"q2\",\"text\":\"b?\"}\n{\"_id\":\"q3\",\"text\":\"c?\"}",
			wantDocs: []Doc{{"d1", "T", "x"}, {"2", "", "y"}},
			wantEval: []string{"q1"}, // q2 judged non-relevant only, q3 unjudged
		},
		{
			name:    "bad json reports line",
			corpus:  "{\"_id\":\"d1\",\"text\":\"x\"}\n{\"_id\":\"d2\",\"text\":\n",
			queries: "",
			wantErr: "corpus.jsonl: line 2:",
		},
		{
			name:    "duplicate doc id",
			corpus:  "{\"_id\":\"d1\"}\n{\"_id\":\"d1\"}\n",
			wantErr: "line 2: document id \"d1\" appears twice",
		},
		{
			name:    "missing id",
			corpus:  "{\"text\":\"x\"}\n",
			wantErr: "line 1: missing \"_id\"",
		},
		{
			name:    "object id rejected",
			corpus:  "{\"_id\":{\"a\":1}}\n",
			wantErr: "_id must be a string or a number",
		},
		{
			name:    "bad query line",
			corpus:  "{\"_id\":\"d1\"}\n",
			queries: "{\"_id\":\"q1\"}\n[1,2]\n",
			wantErr: "queries.jsonl: line 2:",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Load(writeDataset(t, tt.corpus, tt.queries, qrels))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(d.Corpus, tt.wantDocs) {
				t.Errorf("corpus = %+v, want %+v", d.Corpus, tt.wantDocs)
			}
			var ids []string
			for _, q := range d.EvalQueries() {
				ids = append(ids, q.ID)
			}
			if !reflect.DeepEqual(ids, tt.wantEval) {
				t.Errorf("EvalQueries = %v, want %v", ids, tt.wantEval)
			}
		})
	}
}

func TestLoadMissingFiles(t *testing.T) {
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "BEIR dataset directory") {
		t.Errorf("err = %v, want a hint about the BEIR layout", err)
	}
	dir := writeDataset(t, "", "", "")
	os.Remove(filepath.Join(dir, "qrels", "test.tsv"))
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "test.tsv") {
		t.Errorf("err = %v, want naming qrels/test.tsv", err)
	}
}

func TestReadJSONLCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	in := strings.Repeat("{}\n", 2000)
	err := ReadJSONL(ctx, strings.NewReader(in), func(int, []byte) error { return nil })
	if err == nil {
		t.Error("want context error")
	}
}

func FuzzReadJSONL(f *testing.F) {
	f.Add("\uFEFF{\"_id\":\"a\"}\r\n\n{}\n")
	f.Add("x")
	f.Add("\n\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		prev := 0
		err := ReadJSONL(context.Background(), strings.NewReader(in), func(n int, raw []byte) error {
			if n <= prev {
				t.Fatalf("line numbers not increasing: %d after %d", n, prev)
			}
			prev = n
			if len(raw) == 0 || strings.ContainsAny(string(raw[len(raw)-1:]), " \t\r\n") {
				t.Fatalf("line %d not trimmed: %q", n, raw)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(in, "\n") + 1; prev > lines {
			t.Fatalf("line %d reported for %d-line input", prev, lines)
		}
	})
}
