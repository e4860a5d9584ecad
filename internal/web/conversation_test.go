package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/eval/evalset"
	"github.com/shirube/shirube/internal/feedback"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/retrieve"
)

// browser is a client with its own cookie jar: one user.
type user struct {
	t  *testing.T
	f  *fixture
	c  *http.Client
	hd map[string]string
}

func newUser(t *testing.T, f *fixture) *user {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := *f.ts.Client()
	c.Jar = jar
	return &user{t: t, f: f, c: &c}
}

// call sends a JSON request and decodes the reply into out (when not nil);
// it returns the status.
func (b *user) call(method, path, body string, out any) int {
	b.t.Helper()
	req, err := http.NewRequest(method, b.f.ts.URL+path, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range b.hd {
		req.Header.Set(k, v)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			b.t.Fatalf("%s %s: %v\n%s", method, path, err, data)
		}
	}
	return resp.StatusCode
}

func (b *user) ask(body string) AskResponse {
	b.t.Helper()
	var rep AskResponse
	if st := b.call("POST", "/api/ask", body, &rep); st != http.StatusOK {
		b.t.Fatalf("ask %s: %d", body, st)
	}
	return rep
}

// TestConversations: two conversations of one user stay apart (a
// follow-up is rewritten from its own conversation), are listed, searched,
// renamed, regenerated into versions and deleted; another user sees none
// of them; they survive a restart of the server.
func TestConversations(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	alice := newUser(t, f)

	var a, b Conversation
	if st := alice.call("POST", "/api/conversations", `{}`, &a); st != http.StatusCreated || a.Title != defaultTitle {
		t.Fatalf("create: %d %+v", st, a)
	}
	if st := alice.call("POST", "/api/conversations", `{"title":"マルウェア"}`, &b); st != http.StatusCreated || b.Title != "マルウェア" {
		t.Fatalf("create titled: %d %+v", st, b)
	}
	// Tab A asks about the VPN, tab B about malware, then A follows up.
	r1 := alice.ask(`{"question":"VPNの接続手順を教えてください","conversation_id":"` + a.ID + `"}`)
	alice.ask(`{"question":` + jq(qMalware) + `,"conversation_id":"` + b.ID + `"}`)
	r3 := alice.ask(`{"question":"その手順の詳細を教えて","conversation_id":"` + a.ID + `"}`)
	if r1.ConversationID != a.ID || r1.ExchangeID == "" || r1.Version == nil || *r1.Version != 0 || r1.Status != StatusComplete {
		t.Errorf("first answer not placed: %+v", r1)
	}
	if !strings.Contains(r3.RewrittenQuery, "VPN") || strings.Contains(r3.RewrittenQuery, "マルウェア") {
		t.Errorf("follow-up in A rewritten as %q: want A's topic (VPN), not B's", r3.RewrittenQuery)
	}

	var list struct {
		Conversations []ConversationSummary `json:"conversations"`
	}
	alice.call("GET", "/api/conversations", "", &list)
	if len(list.Conversations) != 2 || list.Conversations[0].ID != a.ID || list.Conversations[0].Title != "VPNの接続手順を教えてください" || list.Conversations[0].Exchanges != 2 {
		t.Errorf("list %+v: want A first (updated last), titled by its first question, 2 exchanges", list.Conversations)
	}
	alice.call("GET", "/api/conversations?q="+urlQuery("ﾏﾙｳｪｱ"), "", &list)
	if len(list.Conversations) != 1 || list.Conversations[0].ID != b.ID {
		t.Errorf("search: %+v", list.Conversations)
	}

	// Regenerate A's first exchange: a second version, current.
	r4 := alice.ask(`{"question":"VPNの接続手順を教えてください","conversation_id":"` + a.ID + `","replace_exchange_id":"` + r1.ExchangeID + `"}`)
	if r4.ExchangeID != r1.ExchangeID || r4.Version == nil || *r4.Version != 1 {
		t.Errorf("regenerate: %+v", r4)
	}
	var got Conversation
	alice.call("GET", "/api/conversations/"+a.ID, "", &got)
	if len(got.Exchanges) != 2 || len(got.Exchanges[0].Versions) != 2 || got.Exchanges[0].Current != 1 {
		t.Fatalf("after regenerate: %+v", got)
	}
	var raw map[string]any
	alice.call("GET", "/api/conversations/"+a.ID, "", &raw)
	x0 := raw["exchanges"].([]any)[0].(map[string]any)
	if x0["question"] != "VPNの接続手順を教えてください" || x0["status"] != StatusComplete || x0["version"] != 1.0 || x0["html"] == "" || x0["request_id"] != r4.RequestID {
		t.Errorf("exchange JSON lacks its current version's fields: %v", x0)
	}
	if x2 := raw["exchanges"].([]any)[1].(map[string]any); x2["rewritten_query"] != r3.RewrittenQuery {
		t.Errorf("rewritten query not stored: %v", x2["rewritten_query"])
	}
	var x Exchange
	if st := alice.call("POST", "/api/conversations/"+a.ID+"/exchanges/"+r1.ExchangeID+"/version", `{"version":0}`, &x); st != 200 || x.Current != 0 {
		t.Errorf("choose version: %d %+v", st, x)
	}
	if st := alice.call("POST", "/api/conversations/"+a.ID+"/exchanges/"+r1.ExchangeID+"/version", `{"version":5}`, nil); st != http.StatusBadRequest {
		t.Errorf("version out of range: %d", st)
	}

	var sum ConversationSummary
	if st := alice.call("PATCH", "/api/conversations/"+a.ID, `{"title":"VPN の相談"}`, &sum); st != 200 || sum.Title != "VPN の相談" {
		t.Errorf("rename: %d %+v", st, sum)
	}
	if st := alice.call("PATCH", "/api/conversations/"+a.ID, `{"title":"  "}`, nil); st != http.StatusBadRequest {
		t.Errorf("empty title: %d", st)
	}

	// Another browser is another user.
	bob := newUser(t, f)
	bob.call("GET", "/api/conversations", "", &list)
	if len(list.Conversations) != 0 {
		t.Errorf("bob sees %d conversations", len(list.Conversations))
	}
	for _, tt := range []struct{ method, path, body string }{
		{"GET", "/api/conversations/" + a.ID, ""},
		{"DELETE", "/api/conversations/" + a.ID, ""},
		{"POST", "/api/ask", `{"question":"VPN","conversation_id":"` + a.ID + `"}`},
		{"GET", "/api/conversations/../../etc", ""},
		{"GET", "/api/conversations/c_zz", ""},
	} {
		if st := bob.call(tt.method, tt.path, tt.body, nil); st != http.StatusNotFound {
			t.Errorf("bob %s %s: %d, want 404", tt.method, tt.path, st)
		}
	}

	// A restart: a new server over the same folder still has them.
	srv2, err := New(Options{Assistant: f.asst, Tokenizer: f.srv.opt.Tokenizer, StateDir: f.logs, DataDir: demoData, DatabaseDir: fixtureDatabase()})
	if err != nil {
		t.Fatal(err)
	}
	ts2 := httptest.NewServer(srv2)
	defer ts2.Close()
	defer srv2.Close()
	alice.f = &fixture{srv: srv2, ts: ts2, asst: f.asst, logs: f.logs}
	jarURL, _ := http.NewRequest("GET", f.ts.URL, nil)
	for _, c := range alice.c.Jar.Cookies(jarURL.URL) {
		r2, _ := http.NewRequest("GET", ts2.URL, nil)
		alice.c.Jar.SetCookies(r2.URL, []*http.Cookie{c})
	}
	got = Conversation{}
	if st := alice.call("GET", "/api/conversations/"+a.ID, "", &got); st != 200 || len(got.Exchanges) != 2 || got.Title != "VPN の相談" {
		t.Errorf("after restart: %d %+v", st, got)
	}
	if st := alice.call("DELETE", "/api/conversations/"+a.ID, "", nil); st != http.StatusNoContent {
		t.Errorf("delete: %d", st)
	}
	if st := alice.call("GET", "/api/conversations/"+a.ID, "", nil); st != http.StatusNotFound {
		t.Errorf("deleted conversation: %d", st)
	}
}

func urlQuery(s string) string { return url.QueryEscape(s) }

// waitABit yields while a handler finishes in the background (polling,
// not a timed assertion).
func waitABit() { time.Sleep(5 * time.Millisecond) }

// TestConversationHistoryIsTheLastFive: the model gets the last five
// exchanges before the one being answered, current versions only, failed
// answers left out.
func TestConversationHistoryIsTheLastFive(t *testing.T) {
	var c Conversation
	for i := range 7 {
		st := StatusComplete
		if i == 5 {
			st = StatusError
		}
		c.Exchanges = append(c.Exchanges, Exchange{ID: fmt.Sprintf("x_%016d", i), Current: 1, Versions: []Version{
			{Question: "old", Answer: "old"}, {Question: fmt.Sprintf("q%d", i), Answer: fmt.Sprintf("a%d", i), Status: st}}})
	}
	got := c.history(7, 5)
	var qs []string
	for _, m := range got {
		if m.Role == llm.RoleUser {
			qs = append(qs, m.Content)
		}
	}
	if strings.Join(qs, ",") != "q2,q3,q4,q6" {
		t.Errorf("history questions %v, want q2,q3,q4,q6 (the last five, q5 failed)", qs)
	}
	if h := c.history(1, 5); len(h) != 2 || h[0].Content != "q0" || h[1].Content != "a0" {
		t.Errorf("history before exchange 1: %v", h)
	}
}

// stalling streams a few words and then waits for its request to end, as
// a model stream does when the user presses 停止.
type stalling struct {
	extractive
	started chan struct{}
}

func (g stalling) GenerateStream(ctx context.Context, q string, rs []retrieve.Result, h []llm.Message, on func(string)) (answer.Answer, error) {
	on("途中までの回答")
	close(g.started)
	<-ctx.Done()
	return answer.Answer{}, ctx.Err()
}

// TestStoppedAnswerIsKept: closing the stream mid-answer stores the
// exchange as stopped with the text streamed so far — and the danger
// banner decided before it —, so a reload shows it.
func TestStoppedAnswerIsKept(t *testing.T) {
	g := stalling{started: make(chan struct{})}
	f := newFixture(t, fixtureOptions{gen: g})
	alice := newUser(t, f)
	var c Conversation
	alice.call("POST", "/api/conversations", `{}`, &c)

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", f.ts.URL+"/api/ask", strings.NewReader(`{"question":`+jq(qDelete)+`,"conversation_id":"`+c.ID+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := alice.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The meta event names the exchange before its text.
	var m streamMeta
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "data: ") && strings.Contains(line, "exchange_id") {
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if m.ConversationID != c.ID || m.ExchangeID == "" || m.RequestID == "" {
		t.Fatalf("meta event %+v", m)
	}
	<-g.started
	cancel()
	resp.Body.Close()

	// The handler stores the exchange once it has seen the client leave.
	for range 2000 {
		var got Conversation
		alice.call("GET", "/api/conversations/"+c.ID, "", &got)
		if len(got.Exchanges) == 1 {
			v := got.Exchanges[0].Versions[0]
			if got.Exchanges[0].ID != m.ExchangeID || v.RequestID != m.RequestID {
				t.Errorf("stored exchange %s (request %s), the stream named %+v", got.Exchanges[0].ID, v.RequestID, m)
			}
			if v.Status != StatusStopped || v.Answer != "途中までの回答" || !strings.Contains(v.HTML, "途中までの回答") || !strings.Contains(v.HTML, "answer-stopped") ||
				!v.Flags.DangerousOperation || !strings.Contains(v.HTML, `<div class="banner"><span class="ico-warn"`) || strings.Contains(v.HTML, "role=\"alert\"") {
				t.Errorf("stopped exchange stored as %+v", v)
			}
			return
		}
		waitABit()
	}
	t.Fatal("the stopped exchange was never stored")
}

// TestFeedback: a 👎 with a comment is stored with the answer's audit data
// (who, when, question, answer, evidence), kept on the exchange, counted
// in /metrics, and exported as a case the evaluation reads; a 👍 by
// request id works for answers outside a conversation.
func TestFeedback(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	alice := newUser(t, f)
	rep := alice.ask(`{"question":` + jq(qMalware) + `,"conversation_id":"new"}`)
	if rep.ConversationID == "" || !strings.HasPrefix(rep.ConversationID, "c_") {
		t.Fatalf("conversation_id new: %+v", rep.ConversationID)
	}
	if st := alice.call("POST", "/api/feedback", `{"exchange_id":"`+rep.ExchangeID+`","rating":"down","comment":"手順が古い"}`, nil); st != http.StatusNoContent {
		t.Fatalf("feedback: %d", st)
	}
	plain := alice.ask(`{"question":` + jq(qDelete) + `}`)
	if st := alice.call("POST", "/api/feedback", `{"request_id":"`+plain.RequestID+`","rating":"up"}`, nil); st != http.StatusNoContent {
		t.Fatalf("feedback by request id: %d", st)
	}
	for _, tt := range []struct {
		body string
		want int
	}{
		{`{"exchange_id":"` + rep.ExchangeID + `","rating":"meh"}`, 400},
		{`{"exchange_id":"` + rep.ExchangeID + `","rating":"up","comment":"` + strings.Repeat("長", 1001) + `"}`, 400},
		{`{"exchange_id":"x_0000000000000000","rating":"up"}`, 404},
		{`{"request_id":"r_nothing","rating":"up"}`, 404},
		{`{"rating":"up"}`, 400},
	} {
		if st := alice.call("POST", "/api/feedback", tt.body, nil); st != tt.want {
			t.Errorf("feedback %s: %d, want %d", tt.body, st, tt.want)
		}
	}
	if st := newUser(t, f).call("POST", "/api/feedback", `{"exchange_id":"`+rep.ExchangeID+`","rating":"up"}`, nil); st != http.StatusNotFound {
		t.Errorf("another user rating alice's answer: %d", st)
	}

	var c Conversation
	alice.call("GET", "/api/conversations/"+rep.ConversationID, "", &c)
	if fb := c.Exchanges[0].Feedback; fb == nil || fb.Rating != "down" || fb.Comment != "手順が古い" {
		t.Errorf("feedback on the exchange: %+v", fb)
	}

	recs, skipped, err := feedback.Read(filepath.Join(f.logs, feedback.FileName))
	if err != nil || skipped != 0 || len(recs) != 2 {
		t.Fatalf("feedback log: %d records, %d skipped, %v", len(recs), skipped, err)
	}
	down := recs[0]
	if down.Rating != "down" || down.Query != qMalware || down.Answer != rep.Answer || down.SessionID == "" || down.Comment != "手順が古い" ||
		len(down.Evidence) == 0 || down.Evidence[0].ChunkID == "" || down.Evidence[0].File == "" || down.AnsweredAt.IsZero() || down.RequestID != rep.RequestID {
		t.Errorf("down record lacks the audit data: %+v", down)
	}
	if recs[1].Rating != "up" || recs[1].Query != qDelete {
		t.Errorf("up record: %+v", recs[1])
	}

	resp, body := f.do(t, "GET", "/metrics", "", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `shirube_feedback_total{rating="down"} 1`) || !strings.Contains(string(body), `shirube_feedback_total{rating="up"} 1`) {
		t.Errorf("metrics do not count feedback:\n%s", grepLines(string(body), "feedback"))
	}

	// The 👎 as an evaluation case.
	b, err := json.Marshal(feedback.Dataset(recs, f.srv.now()))
	if err != nil {
		t.Fatal(err)
	}
	ds, problems, err := evalset.Parse(b)
	if err != nil || len(problems) != 0 || len(ds.Cases) != 1 {
		t.Fatalf("exported dataset: %d cases, problems %v, %v\n%s", len(ds.Cases), problems, err, b)
	}
	if c := ds.Cases[0]; c.Query != qMalware || len(c.ShouldNotContain) != 1 || !strings.Contains(rep.Answer, c.ShouldNotContain[0]) {
		t.Errorf("case %+v", c)
	}
}

// TestDangerBeforeFirstToken reads the raw bytes of the ask stream: the
// danger event comes before any answer text.
func TestDangerBeforeFirstToken(t *testing.T) {
	a, err := analysis.New(analysis.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fixtureOptions{gen: streaming{extractive{answer.NewExtractive(a, answer.ExtractiveOptions{})}}})
	resp, body := f.do(t, "POST", "/api/ask", `{"question":`+jq(qDelete)+`}`, map[string]string{"Accept": "text/event-stream"})
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	raw := string(body)
	danger, meta, delta, done := strings.Index(raw, "event: danger\n"), strings.Index(raw, "event: meta\n"), strings.Index(raw, "event: delta\n"), strings.Index(raw, "event: done\n")
	if danger < 0 || meta < 0 || delta < 0 || done < 0 || danger > meta || meta > delta || delta > done {
		t.Fatalf("stream order: danger at %d, meta at %d, first delta at %d, done at %d:\n%.600s", danger, meta, delta, done, raw)
	}
	if strings.Count(raw, "event: danger\n") != 1 {
		t.Errorf("danger sent %d times", strings.Count(raw, "event: danger\n"))
	}
	if !strings.HasPrefix(raw, "event: danger\n") {
		t.Errorf("the stream does not open with the danger event:\n%.300s", raw)
	}
}

// TestConversationFilesHoldNoCookie: conversations are stored under a
// hash of the user's session; the cookie value is written nowhere.
func TestConversationFilesHoldNoCookie(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	alice := newUser(t, f)
	rep := alice.ask(`{"question":` + jq(qMalware) + `,"conversation_id":"new"}`)
	files, _ := filepath.Glob(filepath.Join(f.logs, "conversations", "*", rep.ConversationID+".json"))
	if len(files) != 1 {
		t.Fatalf("conversation files %v", files)
	}
	u, _ := http.NewRequest("GET", f.ts.URL, nil)
	for _, c := range alice.c.Jar.Cookies(u.URL) {
		b, _ := os.ReadFile(files[0])
		if strings.Contains(string(b), c.Value) || strings.Contains(files[0], c.Value) {
			t.Errorf("cookie %s stored on disk", c.Name)
		}
	}
}
