package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/assistant"
)

// TestAskSameWhateverHistory: `ask` answers the same from an index built
// up by incremental builds — a runbook missing and a law longer at first,
// then the runbook added back and the law restored — as from a fresh build
// of the same files: the same search results, evidence, decision and
// answer for every question.
func TestAskSameWhateverHistory(t *testing.T) {
	offlineEnv(t)
	laws, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "datasets", "law-html-ja", "text", "*.txt"))
	if len(laws) < 2 {
		t.Skip("law texts not available (../shared/datasets/law-html-ja/text)")
	}
	demo, err := filepath.Abs("../../examples/data")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	// Every file has one modification time, which results show.
	stamp := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	write := func(name string, b []byte) {
		t.Helper()
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(name, stamp, stamp); err != nil {
			t.Fatal(err)
		}
	}
	fill := func(dir string) {
		t.Helper()
		if err := os.CopyFS(filepath.Join(dir, "data"), os.DirFS(demo)); err != nil {
			t.Fatal(err)
		}
		for i, l := range laws[:2] {
			b, err := os.ReadFile(l)
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Join(dir, "data", "laws", string(rune('a'+i))+".txt")
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			write(name, b)
		}
		err := filepath.WalkDir(filepath.Join(dir, "data"), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			return os.Chtimes(p, stamp, stamp)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	fresh, history := filepath.Join(root, "fresh"), filepath.Join(root, "history")
	fill(fresh)
	fill(history)
	t.Chdir(fresh)
	mustRun(t, "index")

	t.Chdir(history)
	runbook := filepath.Join("data", "runbooks", "log_retention.md")
	law := filepath.Join("data", "laws", "a.txt")
	book, err := os.ReadFile(runbook)
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(law)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(runbook); err != nil {
		t.Fatal(err)
	}
	write(law, append(append([]byte{}, text...), "\n第九十九条　この法律に違反した者は、罰則として過料に処する。\n"...))
	mustRun(t, "index")
	for _, step := range []struct {
		file string
		data []byte
	}{{runbook, book}, {law, text}} {
		write(step.file, step.data)
		var sum struct{ Refit bool }
		out := mustRun(t, "index", "--json")
		if err := json.Unmarshal([]byte(out), &sum); err != nil || !sum.Refit {
			t.Fatalf("%s put back: the embedder was not fitted again (%v):\n%s", step.file, err, out)
		}
	}

	// What an answer is made of, without its timing.
	type answer struct {
		Answer   string
		Evidence any
		Results  any
		Decision assistant.Decision
		Unknowns []string
	}
	ask := func(dir, q string) answer {
		t.Helper()
		t.Chdir(dir)
		var r assistant.Reply
		out := mustRun(t, "ask", "--json", q)
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return answer{r.Answer, r.Evidence, r.SearchResults, r.Decision, r.Unknowns}
	}
	for _, q := range []string{
		"ログの保存期間は何年ですか？",
		"アカウントロックアウトの解除手順は？",
		"VPNに接続できないときはどうすればよいですか？",
		"この法律に違反した者の罰則は？",
		"社員食堂の今週のランチメニューは何円ですか？",
	} {
		if got, want := ask(history, q), ask(fresh, q); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\nincremental %+v\nfresh       %+v", q, got, want)
		}
	}
}
