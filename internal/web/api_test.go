package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/guard"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/retrieve"
)

const (
	qMalware = "マルウェアに感染した端末はどう隔離しますか？"
	qDelete  = "ログファイルを削除する方法は？"
	// qIsolate is a procedure question whose answer is the isolation steps.
	qIsolate = "感染端末をネットワークから隔離する手順は？"
)

func TestAskJSON(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	tests := []struct {
		name         string
		body         string
		wantKind     string
		wantDanger   bool
		wantCites    int // -1: at least one
		wantContains string
	}{
		{"answer with citations", `{"question":` + jq(qMalware) + `}`, "answer", false, -1, "隔離"},
		{"danger banner", `{"question":` + jq(qDelete) + `}`, "answer", true, -1, ""},
		{"k=1 gives one citation", `{"question":` + jq(qDelete) + `,"k":1}`, "answer", true, 1, ""},
		{"insufficient evidence", `{"question":"量子コンピュータの冷却装置の保守手順を教えてください"}`, "insufficient", false, 0, "該当する手順が見つかりませんでした"},
		{"ambiguous", `{"question":"どう？"}`, "ambiguous", false, 0, "質問が曖昧な可能性があります"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := f.askJSON(t, tt.body)
			if !strings.Contains(rep.HTML, `class="answer answer-`+tt.wantKind+`"`) {
				t.Errorf("html is not a %s answer:\n%s", tt.wantKind, rep.HTML)
			}
			if got := strings.Contains(rep.HTML, `<div class="banner">`); got != tt.wantDanger {
				t.Errorf("banner shown = %v, want %v (flags %+v)", got, tt.wantDanger, rep.Flags)
			}
			if rep.Flags.DangerousOperation != tt.wantDanger {
				t.Errorf("flags.dangerous_operation = %v, want %v", rep.Flags.DangerousOperation, tt.wantDanger)
			}
			n := strings.Count(rep.HTML, `<details class="citation" `)
			if n != len(rep.Citations) {
				t.Errorf("html shows %d citations, JSON has %d", n, len(rep.Citations))
			}
			switch {
			case tt.wantCites < 0 && n == 0:
				t.Errorf("no citations in %s", rep.HTML)
			case tt.wantCites >= 0 && n != tt.wantCites:
				t.Errorf("%d citations, want %d", n, tt.wantCites)
			}
			for _, c := range rep.Citations {
				// The sources list and the chips carry the chunk id.
				if c.ChunkID == "" || !strings.Contains(rep.HTML, fmt.Sprintf(`<details class="citation" data-n="%d" data-chunk="%s"`, c.N, c.ChunkID)) ||
					!strings.Contains(rep.HTML, fmt.Sprintf(`class="cite" data-n="%d" data-chunk="%s"`, c.N, c.ChunkID)) {
					t.Errorf("citation %d (chunk %q) without its data-chunk in the sources list or a chip:\n%s", c.N, c.ChunkID, rep.HTML)
				}
				if !strings.Contains(rep.HTML, "<summary>"+template.HTMLEscapeString(c.Summary())+"</summary>") {
					t.Errorf("citation summary %q missing", c.Summary())
				}
				if !strings.HasPrefix(c.Summary(), "引用元: "+c.Label) || !strings.Contains(c.Summary(), "(スコア: ") {
					t.Errorf("summary %q not in seed 002 §4.5 form", c.Summary())
				}
				if c.ChunkID == "" || c.Title == "" || c.Label != fmt.Sprintf("%s p.%d", c.Title, c.Page) || strings.Contains(c.Label, "database/") ||
					c.SourceURL == "" || c.FileURL == "" {
					t.Errorf("citation not openable by title and page: %+v", c)
				}
				if r := []rune(c.Excerpt); len(r) > answer.MaxExcerptRunes {
					t.Errorf("excerpt of %d runes", len(r))
				}
				if c.Page < 1 {
					t.Errorf("citation without page: %+v", c)
				}
			}
			if tt.wantContains != "" && !strings.Contains(rep.Answer, tt.wantContains) {
				t.Errorf("answer %q does not contain %q", rep.Answer, tt.wantContains)
			}
			if rep.SessionID == "" {
				t.Error("no session_id in reply")
			}
		})
	}
}

func TestAskWritesAuditLogWithSession(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	rep := f.askJSON(t, `{"question":`+jq(qMalware)+`,"session_id":"audit-test-1"}`)
	if rep.SessionID != "audit-test-1" {
		t.Fatalf("session_id = %q", rep.SessionID)
	}
	files, _ := filepath.Glob(filepath.Join(f.logs, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("audit log files: %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var line struct {
		SessionID string `json:"session_id"`
		Query     string `json:"query"`
	}
	if err := json.Unmarshal(b, &line); err != nil {
		t.Fatalf("audit line: %v\n%s", err, b)
	}
	if line.SessionID != "audit-test-1" || line.Query != qMalware {
		t.Errorf("audit line = %+v", line)
	}
}

func TestAskBrowserSessionKeepsFiveExchanges(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	// First request issues the cookie.
	resp, _ := f.do(t, "GET", "/", "", nil)
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly {
		t.Fatalf("no HttpOnly session cookie: %v", resp.Cookies())
	}
	hdr := map[string]string{"Cookie": cookie.Name + "=" + cookie.Value}
	questions := []string{
		"アカウントがロックされた場合の対処法を教えてください",
		"バックアップからの復元手順を教えてください",
		qMalware,
		"ログの保管期間はどれくらいですか？",
		"VPN に接続できない場合の確認事項は？",
		"インシデントの重大度はどのように判定しますか？",
	}
	for _, q := range questions {
		resp, b := f.do(t, "POST", "/api/ask", `{"question":`+jq(q)+`}`, hdr)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", q, resp.StatusCode, b)
		}
		var rep AskResponse
		_ = json.Unmarshal(b, &rep)
		if rep.SessionID != cookie.Value {
			t.Fatalf("reply session %q, cookie %q", rep.SessionID, cookie.Value)
		}
	}
	_, page := f.do(t, "GET", "/", "", hdr)
	if n := strings.Count(string(page), `<li class="exchange"`); n != 5 {
		t.Errorf("page shows %d exchanges, want the last 5", n)
	}
	if strings.Contains(string(page), questions[0]) || !strings.Contains(string(page), questions[5]) {
		t.Error("page does not show the last five questions")
	}
	if got := len(f.srv.sessions.get(cookie.Value).conv.History()); got != 10 {
		t.Errorf("conversation keeps %d messages, want 10 (5 exchanges)", got)
	}
}

func TestAskSSE(t *testing.T) {
	a, _ := analysis.New(analysis.DefaultOptions())
	f := newFixture(t, fixtureOptions{gen: streaming{extractive{answer.NewExtractive(a, answer.ExtractiveOptions{})}}})
	resp, b := f.do(t, "POST", "/api/ask", `{"question":`+jq(qDelete)+`,"k":4,"bm25_weight":0.6}`, map[string]string{"Accept": "text/event-stream"})
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := readSSE(t, strings.NewReader(string(b)))
	var deltas strings.Builder
	nDelta := 0
	for i, e := range events {
		switch e.name {
		case "danger":
			// Decided from the question: the first event, before any text.
			var d struct {
				Banner    string
				Dangerous bool
				Kind      string
			}
			if err := json.Unmarshal([]byte(e.data), &d); err != nil {
				t.Fatal(err)
			}
			if i != 0 || d.Banner != guard.Banner || !d.Dangerous || d.Kind != string(guard.OpDelete) {
				t.Errorf("danger event %d: %s, want the first event with the banner and kind delete", i, e.data)
			}
		case "meta":
			// Names the answer (request id) after the banner, before its text.
			var m streamMeta
			if err := json.Unmarshal([]byte(e.data), &m); err != nil || m.RequestID == "" || i != 1 {
				t.Errorf("meta event %d: %s (%v), want the second event with a request id", i, e.data, err)
			}
		case "delta":
			var d struct{ Text string }
			if err := json.Unmarshal([]byte(e.data), &d); err != nil {
				t.Fatal(err)
			}
			deltas.WriteString(d.Text)
			nDelta++
		case "done":
			if i != len(events)-1 {
				t.Errorf("done is event %d of %d", i+1, len(events))
			}
			var rep AskResponse
			if err := json.Unmarshal([]byte(e.data), &rep); err != nil {
				t.Fatal(err)
			}
			body, banner := splitBanner(rep.Answer)
			if !banner || !rep.Flags.DangerousOperation {
				t.Errorf("dangerous question not flagged: %+v", rep.Flags)
			}
			if body != deltas.String() {
				t.Errorf("streamed text %q != answer %q", deltas.String(), body)
			}
			if !strings.Contains(rep.HTML, `class="banner"`) || len(rep.Citations) == 0 {
				t.Errorf("done event lacks banner or citations: %s", rep.HTML)
			}
		default:
			t.Errorf("unexpected event %q: %s", e.name, e.data)
		}
	}
	if nDelta < 3 {
		t.Errorf("%d delta events; the answer was not streamed", nDelta)
	}
	if len(events) == 0 || events[0].name != "danger" {
		t.Errorf("the stream does not open with the danger event")
	}
}

func TestAskLimits(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	long := strings.Repeat("あ", DefaultMaxQuestionRunes+1)
	tests := []struct {
		name, body, ctype string
		status            int
		code              string
	}{
		{"body over 64 KiB", `{"question":"` + strings.Repeat("x", 70<<10) + `"}`, "application/json", 413, "body_too_large"},
		{"question over 2000 runes", `{"question":"` + long + `"}`, "application/json", 400, "question_too_long"},
		{"empty question", `{"question":"  "}`, "application/json", 400, "empty_question"},
		{"control characters only", `{"question":"\u0000\u0001\u001b\u007f"}`, "application/json", 400, "empty_question"},
		{"zero-width and BOM only", `{"question":"\u200b\ufeff\ufffd"}`, "application/json", 400, "empty_question"},
		{"k too large", `{"question":"VPN 接続の手順","k":21}`, "application/json", 400, "invalid_k"},
		{"negative k", `{"question":"VPN 接続の手順","k":-1}`, "application/json", 400, "invalid_k"},
		{"weight over 1", `{"question":"VPN 接続の手順","bm25_weight":1.5}`, "application/json", 400, "invalid_bm25_weight"},
		{"not JSON", `question=x`, "application/json", 400, "invalid_json"},
		{"form content type", `{"question":"VPN"}`, "application/x-www-form-urlencoded", 415, "unsupported_media_type"},
		{"bad session id", `{"question":"VPN 接続の手順","session_id":"../../etc"}`, "application/json", 400, "invalid_session_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := f.do(t, "POST", "/api/ask", tt.body, map[string]string{"Content-Type": tt.ctype})
			var e apiError
			_ = json.Unmarshal(b, &e)
			if resp.StatusCode != tt.status || e.Code != tt.code || e.Error == "" {
				t.Errorf("got %d %+v, want %d %s", resp.StatusCode, e, tt.status, tt.code)
			}
		})
	}
}

func TestSearch(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	tests := []struct {
		name   string
		query  string
		status int
		n      int
		auto   bool // no bm25_weight: chosen for the query
	}{
		{"k=2", "?q=" + urlq("アカウントロック 解除") + "&k=2", 200, 2, true},
		{"default k", "?q=" + urlq("アカウントロック 解除"), 200, 4, true},
		{"bm25 only", "?q=" + urlq("アカウントロック 解除") + "&k=3&bm25_weight=1", 200, 3, false},
		{"weight given", "?q=" + urlq("アカウントロック 解除") + "&bm25_weight=0.5", 200, 4, false},
		{"missing q", "", 400, 0, false},
		{"NULs only", "?q=%00%00%00", 400, 0, false},
		{"invalid bytes only", "?q=%FF%FE%C0", 400, 0, false},
		{"control characters only", "?q=%01%1B%7F%09", 400, 0, false},
		{"k not a number", "?q=x&k=abc", 400, 0, false},
		{"k out of range", "?q=x&k=99", 400, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := f.do(t, "GET", "/api/search"+tt.query, "", nil)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			if tt.status != 200 {
				return
			}
			var out SearchResponse
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatal(err)
			}
			if len(out.Results) != tt.n {
				t.Fatalf("%d results, want %d", len(out.Results), tt.n)
			}
			if given := mustParseQuery(t, tt.query).Get("bm25_weight"); out.AutoWeight != tt.auto ||
				given != "" && fmt.Sprint(out.BM25Weight) != given || given == "" && out.BM25Weight != 1 && out.BM25Weight != retrieve.GateHybridWeight {
				t.Errorf("bm25_weight %v auto %v, want auto %v (given %q)", out.BM25Weight, out.AutoWeight, tt.auto, given)
			}
			if !strings.Contains(out.Results[0].File, "account_lockout") {
				t.Errorf("top result %s, want the account lockout runbook", out.Results[0].File)
			}
		})
	}
}

func urlq(s string) string { return url.QueryEscape(s) }

func mustParseQuery(t *testing.T, q string) url.Values {
	t.Helper()
	v, err := url.ParseQuery(strings.TrimPrefix(q, "?"))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// gatedRebuild is a RebuildFunc that waits for release, so a test can look
// at the server while a rebuild runs.
type gatedRebuild struct {
	t       *testing.T
	started chan string
	release chan struct{}
	mu      sync.Mutex
	calls   int
}

func (g *gatedRebuild) run(ctx context.Context, dir string, progress func(string, int, int)) (*retrieve.Searcher, error) {
	g.mu.Lock()
	g.calls++
	g.mu.Unlock()
	progress("extract", 1, 3)
	g.started <- dir
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	out := filepath.Join(g.t.TempDir(), "index")
	if err := buildIndex(ctx, dir, filepath.Join(g.t.TempDir(), "db"), out, progress); err != nil {
		return nil, err
	}
	ix := openSearcher(g.t, out)
	return ix, nil
}

func TestRebuild(t *testing.T) {
	g := &gatedRebuild{t: t, started: make(chan string, 2), release: make(chan struct{})}
	f := newFixture(t, fixtureOptions{configure: func(o *Options) { o.Rebuild = g.run; o.DataDir = demoData }})
	before := f.asst.Searcher()

	resp, b := f.do(t, "POST", "/api/index/rebuild", `{"data_folder_path":`+jq(demoData)+`}`, nil)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("first rebuild: %d %s", resp.StatusCode, b)
	}
	if dir := <-g.started; dir != demoData {
		t.Errorf("rebuild of %q, want %q", dir, demoData)
	}
	st := f.status(t)
	if !st.Rebuild.Running || st.Rebuild.Phase != "extract" || st.Rebuild.Done != 1 || st.Rebuild.Total != 3 {
		t.Errorf("status while running: %+v", st.Rebuild)
	}
	if !st.Index.Ready || st.Index.Chunks == 0 {
		t.Errorf("old index not reported while rebuilding: %+v", st.Index)
	}

	// A second click does not start a second rebuild.
	resp, b = f.do(t, "POST", "/api/index/rebuild", "", nil)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(b), "rebuild_running") {
		t.Errorf("second rebuild: %d %s", resp.StatusCode, b)
	}
	// Questions are answered from the old index meanwhile.
	if rep := f.askJSON(t, `{"question":`+jq(qMalware)+`}`); len(rep.Citations) == 0 {
		t.Error("no answer during rebuild")
	}

	close(g.release)
	deadline := time.Now().Add(2 * time.Minute)
	for st = f.status(t); st.Rebuild.Running; st = f.status(t) {
		if time.Now().After(deadline) {
			t.Fatal("rebuild did not finish")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st.Rebuild.Phase != "done" || st.Rebuild.Error != "" || st.Rebuild.Runs != 1 || st.Rebuild.FinishedAt.IsZero() {
		t.Errorf("status after rebuild: %+v", st.Rebuild)
	}
	if f.asst.Searcher() == before {
		t.Error("searcher not swapped after rebuild")
	}
	if g.calls != 1 {
		t.Errorf("Rebuild called %d times, want 1", g.calls)
	}
	_, m := f.do(t, "GET", "/metrics", "", nil)
	if !strings.Contains(string(m), `shirube_index_rebuilds_total{result="ok"} 1`) {
		t.Error("rebuild not counted in metrics")
	}
}

func TestRebuildFailureIsReported(t *testing.T) {
	f := newFixture(t, fixtureOptions{configure: func(o *Options) {
		o.DataDir = "./nowhere"
		o.Rebuild = func(ctx context.Context, dir string, p func(string, int, int)) (*retrieve.Searcher, error) {
			return nil, errors.New("data folder ./nowhere does not exist")
		}
	}})
	before := f.asst.Searcher()
	if resp, b := f.do(t, "POST", "/api/index/rebuild", `{"data_folder_path":"./nowhere"}`, nil); resp.StatusCode != 202 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	st := f.status(t)
	for ; st.Rebuild.Running; st = f.status(t) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(st.Rebuild.Error, "does not exist") || st.Rebuild.Phase != "failed" {
		t.Errorf("failure not reported: %+v", st.Rebuild)
	}
	if f.asst.Searcher() != before {
		t.Error("searcher replaced after a failed rebuild")
	}
}

func (f *fixture) status(t testing.TB) StatusResponse {
	t.Helper()
	resp, b := f.do(t, "GET", "/api/status", "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status: %d %s", resp.StatusCode, b)
	}
	var st StatusResponse
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestNoIndex(t *testing.T) {
	f := newFixture(t, fixtureOptions{noIndex: true})
	st := f.status(t)
	if st.Index.Ready || st.Index.Message != NoIndexMessage {
		t.Errorf("status without index: %+v", st.Index)
	}
	_, page := f.do(t, "GET", "/", "", nil)
	if !strings.Contains(string(page), NoIndexMessage) {
		t.Error("page does not say the index is missing")
	}
	for _, hdr := range []map[string]string{nil, {"Accept": "text/event-stream"}} {
		resp, b := f.do(t, "POST", "/api/ask", `{"question":`+jq(qMalware)+`}`, hdr)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), NoIndexMessage) {
			t.Errorf("ask without index (%v): %d %s", hdr, resp.StatusCode, b)
		}
	}
	if resp, _ := f.do(t, "GET", "/api/search?q=x", "", nil); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("search without index: %d", resp.StatusCode)
	}
}

func TestHealthzAndMetrics(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	resp, b := f.do(t, "GET", "/healthz", "", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"ok"`) {
		t.Fatalf("healthz: %d %s", resp.StatusCode, b)
	}
	f.askJSON(t, `{"question":`+jq(qDelete)+`}`)
	f.askJSON(t, `{"question":"量子コンピュータの冷却装置の保守手順を教えてください"}`)
	f.askJSON(t, `{"question":"どう？"}`)
	_, m := f.do(t, "GET", "/metrics", "", nil)
	for _, want := range []string{
		`shirube_http_requests_total{code="200",route="ask"} 3`,
		`shirube_http_requests_total{code="200",route="healthz"} 1`,
		`shirube_http_request_duration_seconds_count{route="ask"} 3`,
		`shirube_answers_total{generator="extractive"} 1`,
		`shirube_answers_total{generator="guard"} 2`,
		`shirube_refusals_total{kind="insufficient_evidence"} 1`,
		`shirube_refusals_total{kind="ambiguous_query"} 1`,
		`shirube_dangerous_operation_total 1`,
		`shirube_llm_tokens_total{type="prompt"} 0`,
		`shirube_llm_cost_usd_total 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(m), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestSecurityHeaders(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, path := range []string{"/", "/api/status", "/static/app.js", "/healthz", "/nope"} {
		resp, _ := f.do(t, "GET", path, "", nil)
		h := resp.Header
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin"} {
			if h.Get(k) != v {
				t.Errorf("%s: %s = %q, want %q", path, k, h.Get(k), v)
			}
		}
	}
	// The page has no inline script or inline event handler.
	_, page := f.do(t, "GET", "/", "", nil)
	for _, bad := range []string{"<script>", "onclick=", "onload=", "javascript:"} {
		if strings.Contains(string(page), bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	// Without a token only loopback host names are served (DNS rebinding).
	req, _ := http.NewRequest("GET", f.ts.URL+"/api/status", nil)
	req.Host = "attacker.example:8080"
	if resp, err := f.ts.Client().Do(req); err != nil || resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("foreign Host header: %v %v", resp.Status, err)
	} else {
		resp.Body.Close()
	}
	// Cross-site POSTs are refused.
	resp, _ := f.do(t, "POST", "/api/index/rebuild", `{}`, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site POST: %d, want 403", resp.StatusCode)
	}
}

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:8080", "", true},
		{"localhost:8080", "", true},
		{"[::1]:8080", "", true},
		{"0.0.0.0:8080", "", false},
		{":8080", "", false},
		{"192.168.1.10:8080", "", false},
		{"0.0.0.0:8080", "s3cret-token", true},
		{"no-port", "", false},
	}
	for _, tt := range tests {
		err := CheckAddr(tt.addr, tt.token)
		if (err == nil) != tt.ok {
			t.Errorf("CheckAddr(%q, %q) = %v, want ok=%v", tt.addr, tt.token, err, tt.ok)
		}
		if err != nil && tt.addr != "no-port" && !strings.Contains(err.Error(), "SHIRUBE_TOKEN") {
			t.Errorf("error does not say how to fix it: %v", err)
		}
	}
	if _, err := New(Options{Assistant: newFixture(t, fixtureOptions{}).asst, Addr: "0.0.0.0:8080"}); err == nil {
		t.Error("New accepted a non-loopback address without a token")
	}
}

func TestTokenAuth(t *testing.T) {
	const token = "tok-0123456789abcdef"
	f := newFixture(t, fixtureOptions{configure: func(o *Options) { o.Addr = "0.0.0.0:8080"; o.Token = token }})
	noRedirect := *f.ts.Client()
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	tests := []struct {
		name, method, path, auth string
		status                   int
	}{
		{"status without token", "GET", "/api/status", "", 401},
		{"status wrong token", "GET", "/api/status", "Bearer nope", 401},
		{"status with token", "GET", "/api/status", "Bearer " + token, 200},
		{"metrics without token", "GET", "/metrics", "", 401},
		{"models without token", "GET", "/v1/models", "", 401},
		{"healthz is public", "GET", "/healthz", "", 200},
		{"static is public", "GET", "/static/style.css", "", 200},
		{"page redirects to login", "GET", "/", "", 303},
		{"login page", "GET", "/login", "", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, f.ts.URL+tt.path, nil)
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("%d, want %d", resp.StatusCode, tt.status)
			}
		})
	}

	login := func(tok string) *http.Response {
		resp, err := noRedirect.PostForm(f.ts.URL+"/login", map[string][]string{"token": {tok}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := login("wrong"); resp.StatusCode != 401 {
		t.Errorf("wrong login: %d", resp.StatusCode)
	}
	resp := login(token)
	var c *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == loginCookie {
			c = ck
		}
	}
	if resp.StatusCode != 303 || c == nil {
		t.Fatalf("login: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	if strings.Contains(c.Value, token) || !c.HttpOnly {
		t.Error("login cookie holds the token or is readable by script")
	}
	req, _ := http.NewRequest("GET", f.ts.URL+"/", nil)
	req.AddCookie(c)
	r2, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1<<20)
	n, _ := r2.Body.Read(b)
	r2.Body.Close()
	if r2.StatusCode != 200 || strings.Contains(string(b[:n]), token) {
		t.Errorf("page after login: %d (token in page: %v)", r2.StatusCode, strings.Contains(string(b[:n]), token))
	}
}

// blockingGen waits until its context ends and reports that it did.
type blockingGen struct {
	started   chan struct{}
	cancelled chan error
}

func (g blockingGen) Generate(ctx context.Context, q string, rs []retrieve.Result, h []llm.Message) (answer.Answer, error) {
	select { // never block the handler on a signal nobody reads
	case g.started <- struct{}{}:
	default:
	}
	<-ctx.Done()
	select {
	case g.cancelled <- ctx.Err():
	default:
	}
	return answer.Answer{}, ctx.Err()
}

func TestCancelledRequestCancelsAsk(t *testing.T) {
	for _, accept := range []string{"application/json", "text/event-stream"} {
		t.Run(accept, func(t *testing.T) {
			// A fresh generator and server per case: no signal of one
			// case can be read by the next.
			g := blockingGen{started: make(chan struct{}, 1), cancelled: make(chan error, 1)}
			f := newFixture(t, fixtureOptions{gen: g})
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "POST", f.ts.URL+"/api/ask", strings.NewReader(`{"question":`+jq(qMalware)+`}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", accept)
			done := make(chan struct{})
			var got string
			go func() {
				defer close(done)
				if resp, err := f.ts.Client().Do(req); err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					got = fmt.Sprintf("%d %s", resp.StatusCode, b)
				}
			}()
			select {
			case <-g.started: // the request reached the generator
			case <-done:
				t.Fatalf("the request ended before it reached the generator: %s", got)
			case <-time.After(30 * time.Second):
				t.Fatal("the request never reached the generator")
			}
			cancel()
			select {
			case err := <-g.cancelled:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("generator saw %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("generator was not cancelled")
			}
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the client call did not return after its context was cancelled")
			}
		})
	}
}

func TestAskTimeout(t *testing.T) {
	g := blockingGen{started: make(chan struct{}, 1), cancelled: make(chan error, 1)}
	f := newFixture(t, fixtureOptions{gen: g, configure: func(o *Options) { o.AskTimeout = 50 * time.Millisecond }})
	resp, b := f.do(t, "POST", "/api/ask", `{"question":`+jq(qMalware)+`}`, nil)
	if resp.StatusCode != http.StatusGatewayTimeout || !strings.Contains(string(b), `"timeout"`) {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
	<-g.cancelled
}
