package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/auditlog"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/retrieve"
)

// demoData is the bundled demo corpus.
const demoData = "../../examples/data"

// fixtureIndex is the demo corpus indexed once for the whole test binary
// (building takes seconds; every test reads it, none writes it).
var fixtureIndex string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "shirube-web-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtureIndex = filepath.Join(dir, "index")
	if err := buildIndex(context.Background(), demoData, filepath.Join(dir, "database"), fixtureIndex, nil); err != nil {
		fmt.Fprintln(os.Stderr, "build demo index:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fixtureDatabase is the page database of the fixture index.
func fixtureDatabase() string { return filepath.Join(filepath.Dir(fixtureIndex), "database") }

// buildIndex indexes dataDir as `shirube index` does with default options.
func buildIndex(ctx context.Context, dataDir, dbDir, indexDir string, progress func(string, int, int)) error {
	_, err := index.Build(ctx, index.BuildOptions{
		DataDir: dataDir, DatabaseDir: dbDir, Dir: indexDir,
		Chunk:    chunk.Options{Size: 500, Overlap: 50},
		Analyzer: analysis.DefaultOptions(),
		Embedder: "local",
		Progress: progress,
	})
	return err
}

// openSearcher loads an index into a searcher.
func openSearcher(t testing.TB, dir string) *retrieve.Searcher {
	t.Helper()
	ix, err := index.Open(context.Background(), dir, index.OpenOptions{})
	if err != nil {
		t.Fatalf("open index %s: %v", dir, err)
	}
	return retrieve.New(ix)
}

// extractive adapts the offline generator to the assistant.
type extractive struct{ e *answer.Extractive }

func (g extractive) Generate(ctx context.Context, q string, rs []retrieve.Result, _ []llm.Message) (answer.Answer, error) {
	return g.e.Generate(ctx, q, rs)
}

// streaming is the extractive generator delivering its text a few runes at
// a time, as a streaming LLM would.
type streaming struct{ extractive }

func (g streaming) GenerateStream(ctx context.Context, q string, rs []retrieve.Result, h []llm.Message, on func(string)) (answer.Answer, error) {
	a, err := g.Generate(ctx, q, rs, h)
	if err != nil {
		return a, err
	}
	for rest := a.Text; rest != ""; {
		n := 0
		i := 0
		for i < len(rest) && n < 6 {
			_, size := utf8.DecodeRuneInString(rest[i:])
			i += size
			n++
		}
		on(rest[:i])
		rest = rest[i:]
	}
	return a, nil
}

// fixture is a test server over the demo index.
type fixture struct {
	srv  *Server
	ts   *httptest.Server
	asst *assistant.Assistant
	logs string
}

// fixtureOptions adjust a fixture before the server is created.
type fixtureOptions struct {
	gen       assistant.Generator // default: extractive
	retriever assistant.Retriever // default: one hybrid search
	noIndex   bool                // start without a searcher
	configure func(*Options)
	// prepare adjusts the server before it accepts connections (test
	// clocks).
	prepare func(*Server)
}

func newFixture(t testing.TB, fo fixtureOptions) *fixture {
	t.Helper()
	var s *retrieve.Searcher
	a, err := analysis.New(analysis.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !fo.noIndex {
		s = openSearcher(t, fixtureIndex)
	}
	gen := fo.gen
	lookahead := 0
	if gen == nil {
		gen = extractive{answer.NewExtractive(a, answer.ExtractiveOptions{})}
		lookahead = 3 // as shirube serve sets it for the extractive generator
	}
	logs := t.TempDir()
	asst := assistant.New(s, gen, auditlog.Open(logs, auditlog.Options{}), assistant.Options{
		Search:             retrieve.Options{K: 4, BM25Weight: 0.6, Fusion: retrieve.FusionMinMax, AutoWeight: true},
		ProcedureLookahead: lookahead,
		Retrieve:           fo.retriever,
	})
	opt := Options{Assistant: asst, Tokenizer: a, DataDir: demoData, DatabaseDir: fixtureDatabase(), StateDir: logs}
	if fo.configure != nil {
		fo.configure(&opt)
	}
	srv, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	if fo.prepare != nil {
		fo.prepare(srv)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	return &fixture{srv: srv, ts: ts, asst: asst, logs: logs}
}

// do sends a request to the fixture and returns the response with its body
// read.
func (f *fixture) do(t testing.TB, method, path, body string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, f.ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := f.ts.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// askJSON posts a question and decodes the JSON reply.
func (f *fixture) askJSON(t testing.TB, body string) AskResponse {
	t.Helper()
	resp, b := f.do(t, "POST", "/api/ask", body, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/ask %s: %d %s", body, resp.StatusCode, b)
	}
	var out AskResponse
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decode reply: %v\n%s", err, b)
	}
	return out
}

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	name string
	data string
}

// readSSE parses an event stream until EOF.
func readSSE(t testing.TB, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" || cur.name != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event:"):
			cur.name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			cur.data += strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read event stream: %v", err)
	}
	return out
}

// jq quotes s as a JSON string.
func jq(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
