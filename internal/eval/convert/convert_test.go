package convert

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/golden"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		shape Shape
		items []Item
	}{
		{
			name:  "array",
			in:    `[{"question":"冷蔵庫の温度は？","answer":"3℃です"},{"Question":"Q2?","Answer":null},{"other":1}]`,
			shape: ShapeArray,
			items: []Item{{Question: "冷蔵庫の温度は？", Answer: "3℃です"}, {Question: "Q2?", Answer: ""}},
		},
		{
			name:  "nested",
			in:    "\uFEFF" + `{"model":"x","results":[{"query":"What?","response":"That.","sources":["a.md"]},{"query":"n","response":42}]}`,
			shape: ShapeNested,
			items: []Item{{Question: "What?", Answer: "That."}, {Question: "n", Answer: "42"}},
		},
		{
			name:  "nested other key",
			in:    `{"meta":{"v":1},"rows":[{"prompt":"p","output":{"text":"t"}}]}`,
			shape: ShapeNested,
			items: []Item{{Question: "p", Answer: `{"text":"t"}`}},
		},
		{
			name:  "flat ids in file order",
			in:    `{"Q2":"two","q_01":"one","Question 3":true,"How do I?":"text key"}`,
			shape: ShapeFlat,
			items: []Item{{ID: "2", Answer: "two"}, {ID: "1", Answer: "one"}, {ID: "3", Answer: "true"}, {Question: "How do I?", Answer: "text key"}},
		},
		{
			name:  "single object",
			in:    `{"question":"q","answer":"a"}`,
			shape: ShapeArray,
			items: []Item{{Question: "q", Answer: "a"}},
		},
		{name: "empty array", in: `[]`, shape: ShapeArray},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, shape, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if shape != tt.shape {
				t.Errorf("shape = %v, want %v", shape, tt.shape)
			}
			if !reflect.DeepEqual(items, tt.items) {
				t.Errorf("items = %+v, want %+v", items, tt.items)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{``, `{`, `"text"`, `42`, `[1,2]`, `{"Q1":{"a":1}}`, `[] []`} {
		if _, shape, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) = %v, nil error; want an error", in, shape)
		}
	}
}

func TestQuestionID(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"Q1", "1", true}, {"q_01", "1", true}, {"Question 3", "3", true}, {"007", "7", true},
		{"#4", "4", true}, {"Q-12", "12", true}, {"question_num 5", "5", true},
		{"What is Q1?", "", false}, {"", "", false}, {"Q", "", false}, {"99999999999999999999", "", false},
	}
	for _, tt := range tests {
		got, ok := QuestionID(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("QuestionID(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	// questions.csv with a fuzzy header.
	writeFile(t, filepath.Join(dir, "questions.csv"), "question_num,QUESTION\n"+
		"1,冷蔵庫の温度設定はどうすればよいですか？\n"+
		"2,What is the capital of France?\n"+
		"3,How do I reset my password?\n"+
		"4,製氷機の掃除方法を教えてください\n"+
		"5,Which café opens first?\n")
	in := filepath.Join(dir, "RAG_JSON_Files")
	writeFile(t, filepath.Join(in, "a.json"), `[
		{"question": "冷蔵庫の温度設定はどうすればよいですか？", "answer": "- 設定ボタンを押します\n- 温度を選びます"},
		{"question": "what is the capital of  FRANCE", "answer": "Paris"},
		{"question": "Where can I download the invoice?", "answer": "Nowhere"}
	]`)
	writeFile(t, filepath.Join(in, "b.json"), `{"results": [{"query": "How do I reset my password", "response": "=Use the reset link", "sources": []}]}`)
	writeFile(t, filepath.Join(in, "c.json"), `{"Q5": "The one on Main St.", "Q9": "orphan"}`)
	writeFile(t, filepath.Join(in, "broken.json"), `{not json`)
	writeFile(t, filepath.Join(in, "notes.txt"), `ignored`)
	out := filepath.Join(dir, "rag_answers.csv")
	var log bytes.Buffer
	rep, err := Run(context.Background(), Options{Input: in, QuestionsCSV: filepath.Join(dir, "questions.csv"), Output: out, Log: &log})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	if len(rep.Files) != 4 || rep.Items != 6 || len(rep.Matches) != 4 {
		t.Errorf("files %d items %d matches %d; want 4, 6, 4", len(rep.Files), rep.Items, len(rep.Matches))
	}
	wantCounts := map[string]int{Perfect: 1, Good: 2, ByID: 1}
	if !reflect.DeepEqual(rep.Counts, wantCounts) {
		t.Errorf("counts = %v, want %v", rep.Counts, wantCounts)
	}
	if len(rep.Unmatched) != 2 {
		t.Errorf("unmatched = %q, want 2 lines", rep.Unmatched)
	}
	logText := log.String()
	for _, want := range []string{
		`Warning: no match for question "Where can I download the invoice?" in a.json`,
		`Warning: no match for question Q9 in c.json: ` + filepath.Join(dir, "questions.csv") + ` has no Question Number 9; skipped`,
		`Warning: skipped ` + filepath.Join(in, "broken.json") + `: not valid JSON`,
	} {
		if !strings.Contains(logText, want) {
			t.Errorf("log lacks %q:\n%s", want, logText)
		}
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "rag_answers.golden.csv"), got)
}

func TestRunLatin1(t *testing.T) {
	dir := t.TempDir()
	q := filepath.Join(dir, "questions.csv")
	writeFile(t, q, "Question Number,Question\n1,Which caf\xe9 opens first?\n")
	in := filepath.Join(dir, "one.json")
	writeFile(t, in, `[{"question":"Which café opens first?","answer":"Café Rouge"}]`)
	var log bytes.Buffer
	rep, err := Run(context.Background(), Options{Input: in, QuestionsCSV: q, Output: filepath.Join(dir, "out.csv"), Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Matches) != 1 || rep.Matches[0].Confidence != Perfect || rep.Matches[0].Question != "Which café opens first?" {
		t.Errorf("matches = %+v", rep.Matches)
	}
	if !strings.Contains(log.String(), "Warning: "+q+": not valid UTF-8; read as latin-1") {
		t.Errorf("no latin-1 warning in log:\n%s", log.String())
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	q := filepath.Join(dir, "questions.csv")
	in := filepath.Join(dir, "RAG_JSON_Files")
	tests := []struct {
		name  string
		setup func()
		want  string
	}{
		{"no questions file", func() {}, "questions.csv not found. Create this file with columns: Question Number, Question"},
		{"bad columns", func() { writeFile(t, q, "id,text\n1,x\n") }, "needs the columns Question Number and Question (found: id, text)"},
		{"no input", func() { writeFile(t, q, "Question Number,Question\n1,x\n") }, "RAG_JSON_Files not found. Put your RAG system's *.json answer files"},
		{"empty folder", func() { os.MkdirAll(in, 0o755) }, "no .json files in"},
		{"nothing matched", func() { writeFile(t, filepath.Join(in, "a.json"), `[{"question":"zzzz","answer":"a"}]`) }, "no answer in"},
	}
	for _, tt := range tests {
		tt.setup()
		_, err := Run(context.Background(), Options{Input: in, QuestionsCSV: q, Output: filepath.Join(dir, "out.csv")})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`[{"question":"q","answer":"a"}]`,
		`{"results":[{"query":"q","response":"r","sources":[]}]}`,
		`{"Q1":"a","Q2":null}`, `{"Q1":"a","Q1":"b"}`, `[]`, `{}`, `null`, `[[]]`, `{"a":[{"x":1}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		items, shape, err := Parse(data)
		if err != nil {
			if shape == ShapeFlat && items != nil {
				t.Fatalf("items returned with error")
			}
			return
		}
		if shape == ShapeUnknown {
			t.Fatalf("no error but unknown shape")
		}
		for _, it := range items {
			if shape != ShapeFlat && it.ID != "" {
				t.Fatalf("id %q outside the flat shape", it.ID)
			}
		}
	})
}
