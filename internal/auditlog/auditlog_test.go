package auditlog

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/golden"
)

// seedEntry is the example of seed 002 §6.1.
func seedEntry() Entry {
	return Entry{
		Timestamp: time.Date(2024, 12, 29, 13, 14, 15, 123456000, time.Local),
		SessionID: "streamlit_session_xxx",
		Query:     "ログインできない場合の対処法は？",
		SearchResults: []SearchResult{{
			ChunkID: "data/manual.pdf_5", Score: 0.85, BM25Score: 0.72, VectorScore: 0.98,
			File: "data/manual.pdf", Heading: "## ログイン問題のトラブルシューティング",
			Excerpt: "ログインできない場合、まず...", EvidenceScore: 0.62,
		}},
		EvidenceScore: 0.62, EvidenceThreshold: 0.5,
		Answer:            "ログインできない場合は、以下の手順を確認してください...",
		ProcessingTimeSec: 2.34,
		TokenUsage:        TokenUsage{PromptTokens: 1250, CompletionTokens: 320, TotalTokens: 1570},
		CostUSD:           0.0023,
		SearchConfig:      SearchConfig{K: 4, BM25Weight: 0.6, VectorWeight: 0.4},
	}
}

func TestSchemaGolden(t *testing.T) {
	followUp := seedEntry()
	followUp.Query = "その手順の詳細を教えて"
	followUp.RewrittenQuery = "ログインできない場合の対処手順の詳細"
	followUp.Generator = "gpt-4o-mini"
	followUp.SearchResults = nil
	followUp.EvidenceScore, followUp.EvidenceThreshold = 0, 0
	followUp.Flags = Flags{InsufficientEvidence: true, DangerousOperation: true, AmbiguousQuery: true}
	followUp.Answer = "<details> & \"quotes\"\nline 2"

	var b strings.Builder
	for _, e := range []Entry{seedEntry(), followUp} {
		line, err := encodeLine(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
	}
	got := b.String()
	golden.Check(t, filepath.Join("testdata", "schema.golden.jsonl"), []byte(got))

	// The seed's field order, independent of the golden file, then the
	// question's evidence score and threshold.
	wantKeys := []string{"timestamp", "session_id", "query", "search_results", "answer", "processing_time_sec", "token_usage", "cost_usd", "search_config", "flags", "evidence_score", "evidence_threshold"}
	if keys := topKeys(t, strings.SplitN(got, "\n", 2)[0]); strings.Join(keys, ",") != strings.Join(wantKeys, ",") {
		t.Errorf("keys = %v, want %v", keys, wantKeys)
	}
	if !strings.HasPrefix(got, `{"timestamp":"2024-12-29T13:14:15.123456",`) {
		t.Errorf("timestamp not in seed format: %.60s", got)
	}
}

// topKeys returns the top-level keys of a JSON object in order.
func topKeys(t *testing.T, line string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestRoundTrip(t *testing.T) {
	e := seedEntry()
	e.RewrittenQuery, e.Generator = "r", "g"
	line, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back Entry
	if err := json.Unmarshal(line, &back); err != nil {
		t.Fatal(err)
	}
	if !back.Timestamp.Equal(e.Timestamp) || back.Query != e.Query || back.SearchResults[0] != e.SearchResults[0] ||
		back.TokenUsage != e.TokenUsage || back.SearchConfig != e.SearchConfig || back.RewrittenQuery != "r" || back.Generator != "g" {
		t.Errorf("round trip changed the entry:\n%+v\n%+v", e, back)
	}
	if err := json.Unmarshal([]byte(`{"timestamp":"yesterday"}`), &back); err == nil {
		t.Error("bad timestamp accepted")
	}
}

func TestConcurrentWriters(t *testing.T) {
	const goroutines, lines = 64, 50
	dir := t.TempDir()
	l := Open(dir, Options{Warn: func(msg string) { t.Errorf("warning: %s", msg) }})
	day := time.Date(2024, 12, 29, 9, 0, 0, 0, time.Local)
	long := strings.Repeat("長い回答。", 400) // 6 KB lines, over PIPE_BUF, make interleaving visible
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range lines {
				e := seedEntry()
				e.Timestamp = day.Add(time.Duration(g*lines+i) * time.Millisecond)
				e.SessionID = fmt.Sprintf("s%d", g)
				e.Query = fmt.Sprintf("q%d-%d", g, i)
				if i%5 == 0 {
					e.Answer = long
				}
				if err := l.Log(context.Background(), e); err != nil {
					t.Error(err)
				}
				runtime.Gosched()
			}
		})
	}
	wg.Wait()

	f, err := os.Open(filepath.Join(dir, "query_2024-12-29.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d is not valid JSON: %v", len(seen)+1, err)
		}
		seen[e.Query] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != goroutines*lines {
		t.Errorf("%d distinct lines, want %d", len(seen), goroutines*lines)
	}
}

func TestDailyFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "logs") // created on demand
	l := Open(dir, Options{})
	days := []time.Time{
		time.Date(2024, 12, 31, 23, 59, 59, 999999000, time.Local),
		time.Date(2025, 1, 1, 0, 0, 0, 0, time.Local),
		time.Date(2024, 12, 31, 8, 0, 0, 0, time.Local),
	}
	for _, ts := range days {
		e := seedEntry()
		e.Timestamp = ts
		if err := l.Log(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]int{"query_2024-12-31.jsonl": 2, "query_2025-01-01.jsonl": 1} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(string(data), "\n"); got != want {
			t.Errorf("%s has %d lines, want %d", name, got, want)
		}
	}
	if l.Path(days[1]) != filepath.Join(dir, "query_2025-01-01.jsonl") {
		t.Errorf("Path = %s", l.Path(days[1]))
	}
}

func TestZeroTimestampUsesNow(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2025, 3, 4, 5, 6, 7, 8000, time.Local)
	l := Open(dir, Options{Now: func() time.Time { return now }})
	e := seedEntry()
	e.Timestamp = time.Time{}
	if err := l.Log(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "query_2025-03-04.jsonl"))
	if err != nil || !strings.HasPrefix(string(data), `{"timestamp":"2025-03-04T05:06:07.000008",`) {
		t.Errorf("got %q, %v", data, err)
	}
}

func TestWriteFailureWarns(t *testing.T) {
	// A regular file where the directory should be: unwritable for any user.
	blocker := filepath.Join(t.TempDir(), "logs")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		dir  string
		ctx  func() context.Context
	}{
		{"directory is a file", blocker, context.Background},
		{"parent is a file", filepath.Join(blocker, "sub"), context.Background},
		{"cancelled", t.TempDir(), func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var warnings []string
			l := Open(tt.dir, Options{Warn: func(m string) { warnings = append(warnings, m) }})
			err := l.Log(tt.ctx(), seedEntry())
			if err == nil {
				t.Fatal("Log succeeded, want an error")
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], "audit log") || !strings.Contains(warnings[0], "not affected") {
				t.Errorf("warnings = %q", warnings)
			}
		})
	}
	// Without Warn, the error is still returned and nothing panics.
	if err := Open(blocker, Options{}).Log(context.Background(), seedEntry()); err == nil {
		t.Error("want an error")
	}
}

func TestOpenDefaultDir(t *testing.T) {
	if d := Open("", Options{}).Dir(); d != DefaultDir {
		t.Errorf("Dir = %q, want %q", d, DefaultDir)
	}
}

func TestExcerpt(t *testing.T) {
	tests := []struct {
		text  string
		limit int
		want  string
	}{
		{"短い", 200, "短い"},
		{"", 10, ""},
		{"インシデント発生時は", 5, "インシデン..."},
		{"abcdef", 6, "abcdef"},
		{"abcdef", 3, "abc..."},
		{"a  b\n\nc\td", 100, "a b c d"},
		{"word word", 5, "word..."}, // no space before the dots
		{"🙂🙂🙂", 2, "🙂🙂..."},
		{strings.Repeat("あ", 250), 0, strings.Repeat("あ", 200) + "..."},
		{strings.Repeat("あ", 200), -1, strings.Repeat("あ", 200)},
	}
	for _, tt := range tests {
		if got := Excerpt(tt.text, tt.limit); got != tt.want {
			t.Errorf("Excerpt(%q, %d) = %q, want %q", tt.text, tt.limit, got, tt.want)
		}
	}
}

// TestSeveralProcesses runs this test binary as 4 writer processes
// appending to the same file at once.
func TestSeveralProcesses(t *testing.T) {
	if os.Getenv("AUDITLOG_WRITER_DIR") != "" {
		t.Skip("writer process")
	}
	const procs, lines = 4, 200
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, procs)
	for p := range procs {
		wg.Go(func() {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestWriterProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), "AUDITLOG_WRITER_DIR="+dir, fmt.Sprintf("AUDITLOG_WRITER_ID=%d", p), fmt.Sprintf("AUDITLOG_WRITER_LINES=%d", lines))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[p] = fmt.Errorf("writer %d: %v\n%s", p, err, out)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "query_2024-12-29.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var e Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %d is not valid JSON: %v", i+1, err)
		}
		seen[e.Query] = true
	}
	if len(seen) != procs*lines {
		t.Errorf("%d distinct lines, want %d", len(seen), procs*lines)
	}
}

// TestWriterProcess is the body of one TestSeveralProcesses writer.
func TestWriterProcess(t *testing.T) {
	dir := os.Getenv("AUDITLOG_WRITER_DIR")
	if dir == "" {
		t.Skip("only run by TestSeveralProcesses")
	}
	id := os.Getenv("AUDITLOG_WRITER_ID")
	n, _ := strconv.Atoi(os.Getenv("AUDITLOG_WRITER_LINES"))
	l := Open(dir, Options{})
	long := strings.Repeat("長い回答。", 400)
	for i := range n {
		e := seedEntry()
		e.Query = fmt.Sprintf("p%s-%d", id, i)
		if i%3 == 0 {
			e.Answer = long
		}
		if err := l.Log(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	day := func(d int) time.Time { return time.Date(2026, 11, d, 9, 0, 0, 0, time.Local) }
	l := Open(dir, Options{})
	for i, q := range []string{"二日目の質問", "一日目の質問", "一日目の二問目"} {
		ts := day(2)
		if i > 0 {
			ts = day(1)
		}
		if err := l.Log(context.Background(), Entry{Timestamp: ts, Query: q}); err != nil {
			t.Fatal(err)
		}
	}
	// A torn line is skipped, not fatal.
	f, err := os.OpenFile(l.Path(day(1)), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"timestamp":"2026-11-01T09:00`)
	f.Close()
	var got []string
	skipped, err := Read(context.Background(), dir, func(e Entry) error { got = append(got, e.Query); return nil })
	if err != nil || skipped != 1 {
		t.Fatalf("Read: skipped %d, %v", skipped, err)
	}
	if want := []string{"一日目の質問", "一日目の二問目", "二日目の質問"}; !slices.Equal(got, want) {
		t.Errorf("queries %q; want %q (oldest day first)", got, want)
	}
	if es, err := ReadAll(context.Background(), dir); len(es) != 3 || err == nil || !strings.Contains(err.Error(), "1 lines are not entries") {
		t.Errorf("ReadAll with a torn line: %d entries, %v", len(es), err)
	}
	if n, err := Read(context.Background(), filepath.Join(dir, "missing"), func(Entry) error { return nil }); n != 0 || err != nil {
		t.Errorf("missing dir: %d, %v", n, err)
	}
}
