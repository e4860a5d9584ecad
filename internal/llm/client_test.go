package llm

import (
	"context"
	"errors"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/golden"
)

// client is what both providers offer.
type client interface {
	Complete(context.Context, Request) (Response, error)
	Stream(context.Context, Request, func(string)) (Response, error)
}

// provider builds a client and its wire fixtures, so that retry and error
// tests run against both SDKs.
type provider struct {
	name    string
	model   string // what the fake answers as
	ok      func(text string) http.HandlerFunc
	err     func(status int, header ...string) http.HandlerFunc
	newFunc func(t *testing.T, url string, cfg testCfg) client
}

type testCfg struct {
	timeout    time.Duration
	maxRetries int
	sleep      SleepFunc
}

var providers = []provider{
	{
		name:  "openai",
		model: "gpt-4o-mini-2024-07-18",
		ok: func(text string) http.HandlerFunc {
			return jsonReply(200, openAICompletion("gpt-4o-mini-2024-07-18", text, 100, 20))
		},
		err: func(status int, header ...string) http.HandlerFunc {
			return jsonReply(status, `{"error":{"message":"fake failure","type":"server_error","param":null,"code":null}}`, header...)
		},
		newFunc: func(t *testing.T, url string, cfg testCfg) client {
			c, err := NewOpenAI(OpenAIConfig{APIKey: "sk-test", BaseURL: url + "/v1", Timeout: cfg.timeout, MaxRetries: cfg.maxRetries, Sleep: cfg.sleep})
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
	},
	{
		name:  "anthropic",
		model: "claude-sonnet-5-5",
		ok: func(text string) http.HandlerFunc {
			return jsonReply(200, anthropicMessage("claude-sonnet-5-5", text, 100, 20))
		},
		err: func(status int, header ...string) http.HandlerFunc {
			return anthropicError(status, "api_error", "fake failure", header...)
		},
		newFunc: func(t *testing.T, url string, cfg testCfg) client {
			c, err := NewAnthropic(AnthropicConfig{APIKey: "sk-ant-test", BaseURL: url, Timeout: cfg.timeout, MaxRetries: cfg.maxRetries, Sleep: cfg.sleep})
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
	},
}

func userReq(q string) Request {
	return Request{Messages: []Message{{Role: RoleUser, Content: q}}}
}

func TestOpenAIComplete(t *testing.T) {
	tests := []struct {
		name      string
		cfg       OpenAIConfig
		req       Request
		answer    string
		wantModel string  // model sent
		wantMax   float64 // max_tokens sent
		wantTemp  any     // temperature sent (nil = absent)
		wantSys   string  // system message sent ("" = none)
		wantJSON  bool
		wantText  string
		wantCost  float64
	}{
		{
			name: "system, history and temperature",
			req: Request{
				System: "あなたはSOC運用アシスタントです。",
				Messages: []Message{
					{Role: RoleUser, Content: "ログインできない"},
					{Role: RoleAssistant, Content: "どのシステムですか？"},
					{Role: RoleUser, Content: "Active Directoryです"},
				},
				MaxTokens:   512,
				Temperature: ptr(0.2),
			},
			answer:    "パスワードをリセットしてください。",
			wantModel: "gpt-4o-mini", wantMax: 512, wantTemp: 0.2,
			wantSys:  "あなたはSOC運用アシスタントです。",
			wantText: "パスワードをリセットしてください。",
			// 1000 prompt × $0.15/1M + 500 completion × $0.60/1M
			wantCost: 0.00045,
		},
		{
			name:      "defaults: config model, 2000 tokens, no temperature",
			cfg:       OpenAIConfig{Model: "gpt-4.1"},
			req:       userReq("hi"),
			answer:    "hello",
			wantModel: "gpt-4.1", wantMax: 2000,
			wantText: "hello",
			wantCost: (1000*2.0 + 500*8.0) / 1e6,
		},
		{
			name:      "JSON mode sets response_format and mentions JSON",
			req:       Request{Model: "llama3.1", System: "Judge the answer.", Messages: []Message{{Role: RoleUser, Content: "score it"}}, JSON: true},
			answer:    "```json\n{\"score\": 80}\n```",
			wantModel: "llama3.1", wantMax: 2000,
			wantSys:  "Judge the answer.\n\n" + jsonInstruction,
			wantJSON: true,
			wantText: `{"score": 80}`,
			wantCost: 0, // local model: not in the price table
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				// answer with the model that was asked for, as OpenAI does (dated)
				model := "gpt-4o-mini-2024-07-18"
				if tt.wantModel != "gpt-4o-mini" {
					model = tt.wantModel
				}
				jsonReply(200, openAICompletion(model, tt.answer, 1000, 500))(w, r)
			})
			cfg := tt.cfg
			cfg.APIKey, cfg.BaseURL = "sk-test", srv.URL+"/v1"
			c, err := NewOpenAI(cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Complete(context.Background(), tt.req)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if got.Text != tt.wantText {
				t.Errorf("Text = %q, want %q", got.Text, tt.wantText)
			}
			if want := (Usage{1000, 500, 1500}); got.Usage != want {
				t.Errorf("Usage = %+v, want %+v", got.Usage, want)
			}
			if math.Abs(got.CostUSD-tt.wantCost) > 1e-12 {
				t.Errorf("CostUSD = %v, want %v", got.CostUSD, tt.wantCost)
			}

			if srv.paths[0] != "/v1/chat/completions" {
				t.Errorf("path = %q", srv.paths[0])
			}
			if auth := srv.headers[0].Get("Authorization"); auth != "Bearer sk-test" {
				t.Errorf("Authorization = %q", auth)
			}
			b := srv.body(0)
			if b["model"] != tt.wantModel || b["max_tokens"] != tt.wantMax || b["temperature"] != tt.wantTemp {
				t.Errorf("model, max_tokens, temperature = %v, %v, %v; want %v, %v, %v", b["model"], b["max_tokens"], b["temperature"], tt.wantModel, tt.wantMax, tt.wantTemp)
			}
			if _, ok := b["stream"]; ok {
				t.Errorf("non-streaming request sent stream=%v", b["stream"])
			}
			msgs, _ := b["messages"].([]any)
			i := 0
			if tt.wantSys != "" {
				if get(msgs, 0, "role") != "system" || get(msgs, 0, "content") != tt.wantSys {
					t.Errorf("first message = %v, want system %q", msgs[0], tt.wantSys)
				}
				i = 1
			}
			if len(msgs)-i != len(tt.req.Messages) {
				t.Fatalf("sent %d messages, want %d system + %d", len(msgs), i, len(tt.req.Messages))
			}
			for j, m := range tt.req.Messages {
				if get(msgs, i+j, "role") != m.Role || get(msgs, i+j, "content") != m.Content {
					t.Errorf("message %d = %v, want %+v", j, msgs[i+j], m)
				}
			}
			if rf := get(b, "response_format", "type"); (rf == "json_object") != tt.wantJSON {
				t.Errorf("response_format = %v, want json_object=%v", b["response_format"], tt.wantJSON)
			}
		})
	}
}

func TestOpenAIStream(t *testing.T) {
	deltas := []string{"まず", "影響範囲を", "確認し", "ます。"}
	srv := newFakeServer(t, sseReply(openAIStreamEvents("gpt-4o-mini-2024-07-18", deltas, 1250, 320)...))
	c, err := NewOpenAI(OpenAIConfig{APIKey: "sk-test", BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	resp, err := c.Stream(context.Background(), Request{System: "sys", Messages: []Message{{Role: RoleUser, Content: "q"}}}, func(d string) { got = append(got, d) })
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if !slices.Equal(got, deltas) {
		t.Errorf("deltas = %q, want %q", got, deltas)
	}
	if want := strings.Join(deltas, ""); resp.Text != want {
		t.Errorf("Text = %q, want %q", resp.Text, want)
	}
	if want := (Usage{1250, 320, 1570}); resp.Usage != want {
		t.Errorf("Usage = %+v, want %+v", resp.Usage, want)
	}
	if resp.Model != "gpt-4o-mini-2024-07-18" {
		t.Errorf("Model = %q", resp.Model)
	}
	if want := (1250*0.15 + 320*0.60) / 1e6; math.Abs(resp.CostUSD-want) > 1e-12 {
		t.Errorf("CostUSD = %v, want %v", resp.CostUSD, want)
	}
	b := srv.body(0)
	if b["stream"] != true || get(b, "stream_options", "include_usage") != true {
		t.Errorf("stream, stream_options = %v, %v; want true, include_usage:true", b["stream"], b["stream_options"])
	}
}

func TestAnthropicComplete(t *testing.T) {
	tests := []struct {
		name     string
		cfg      AnthropicConfig
		req      Request
		answer   string
		wantBody map[string]any // top-level fields that must match
		wantSys  any            // system text (nil = absent)
		wantText string
		wantErr  string
	}{
		{
			name: "alias, system, history, temperature",
			cfg:  AnthropicConfig{Model: "haiku"},
			req: Request{
				System:      "You are a strict evaluator.",
				Messages:    []Message{{Role: RoleUser, Content: "a"}, {Role: RoleAssistant, Content: "b"}, {Role: RoleUser, Content: "c"}},
				MaxTokens:   100,
				Temperature: ptr(0.3),
			},
			answer:   "Precision: 1",
			wantBody: map[string]any{"model": "claude-haiku-5-5", "max_tokens": 100.0, "temperature": 0.3},
			wantSys:  "You are a strict evaluator.",
			wantText: "Precision: 1",
		},
		{
			name:     "defaults: sonnet, 2000 tokens, no system, no temperature",
			req:      userReq("hello"),
			answer:   "hi",
			wantBody: map[string]any{"model": "claude-sonnet-5-5", "max_tokens": 2000.0, "temperature": nil, "system": nil},
			wantText: "hi",
		},
		{
			name:     "request model overrides, full id kept",
			req:      Request{Model: "claude-opus-4-8", Messages: []Message{{Role: RoleUser, Content: "q"}}},
			answer:   "a",
			wantBody: map[string]any{"model": "claude-opus-4-8"},
			wantText: "a",
		},
		{
			name:     "JSON by instruction and parsing",
			req:      Request{System: "Score it.", Messages: []Message{{Role: RoleUser, Content: "q"}}, JSON: true},
			answer:   "Here is the result:\n```json\n{\"precision\": 1, \"recall\": 0}\n```",
			wantSys:  "Score it.\n\n" + jsonInstruction,
			wantText: `{"precision": 1, "recall": 0}`,
		},
		{
			name:    "JSON asked, prose answered",
			req:     Request{Messages: []Message{{Role: RoleUser, Content: "q"}}, JSON: true},
			answer:  "I cannot score this.",
			wantSys: jsonInstruction,
			wantErr: "did not return a JSON object",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, jsonReply(200, anthropicMessage("claude-sonnet-5-5", tt.answer, 1000, 500)))
			cfg := tt.cfg
			cfg.APIKey, cfg.BaseURL = "sk-ant-test", srv.URL
			c, err := NewAnthropic(cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Complete(context.Background(), tt.req)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
			} else {
				if err != nil {
					t.Fatalf("Complete: %v", err)
				}
				if got.Text != tt.wantText {
					t.Errorf("Text = %q, want %q", got.Text, tt.wantText)
				}
				if want := (Usage{1000, 500, 1500}); got.Usage != want {
					t.Errorf("Usage = %+v, want %+v", got.Usage, want)
				}
				if want := (1000*3.0 + 500*15.0) / 1e6; math.Abs(got.CostUSD-want) > 1e-12 {
					t.Errorf("CostUSD = %v, want %v", got.CostUSD, want)
				}
			}

			if srv.paths[0] != "/v1/messages" {
				t.Errorf("path = %q", srv.paths[0])
			}
			if k := srv.headers[0].Get("X-Api-Key"); k != "sk-ant-test" {
				t.Errorf("x-api-key = %q", k)
			}
			if v := srv.headers[0].Get("Anthropic-Version"); v == "" {
				t.Error("anthropic-version header missing")
			}
			b := srv.body(0)
			for k, want := range tt.wantBody {
				if b[k] != want {
					t.Errorf("body[%s] = %v, want %v", k, b[k], want)
				}
			}
			if sys := get(b, "system", 0, "text"); sys != tt.wantSys {
				t.Errorf("system = %v, want %v", b["system"], tt.wantSys)
			}
			msgs, _ := b["messages"].([]any)
			if len(msgs) != len(tt.req.Messages) {
				t.Fatalf("sent %d messages, want %d", len(msgs), len(tt.req.Messages))
			}
			for i, m := range tt.req.Messages {
				if get(msgs, i, "role") != m.Role || get(msgs, i, "content", 0, "text") != m.Content {
					t.Errorf("message %d = %v, want %+v", i, msgs[i], m)
				}
			}
		})
	}
}

func TestAnthropicStream(t *testing.T) {
	deltas := []string{"Hello", ", ", "world", "!"}
	srv := newFakeServer(t, sseReply(anthropicStreamEvents("claude-sonnet-5-5", deltas, 25, 15)...))
	c, err := NewAnthropic(AnthropicConfig{APIKey: "k", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	resp, err := c.Stream(context.Background(), userReq("q"), func(d string) { got = append(got, d) })
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if !slices.Equal(got, deltas) {
		t.Errorf("deltas = %q, want %q", got, deltas)
	}
	if resp.Text != "Hello, world!" || resp.Model != "claude-sonnet-5-5" {
		t.Errorf("Text, Model = %q, %q", resp.Text, resp.Model)
	}
	if want := (Usage{25, 15, 40}); resp.Usage != want {
		t.Errorf("Usage = %+v, want %+v", resp.Usage, want)
	}
	if want := (25*3.0 + 15*15.0) / 1e6; math.Abs(resp.CostUSD-want) > 1e-12 {
		t.Errorf("CostUSD = %v, want %v", resp.CostUSD, want)
	}
	if b := srv.body(0); b["stream"] != true {
		t.Errorf("stream = %v, want true", b["stream"])
	}
}

// TestRetries runs the retry rules against both SDKs. Sleeping is
// recorded, not done.
func TestRetries(t *testing.T) {
	type script func(p provider) []http.HandlerFunc
	tests := []struct {
		name       string
		script     script
		wantReqs   int
		wantSleeps []time.Duration // exact waits; nil = check backoff bounds
		wantErr    []string        // substrings of the error; nil = success
		wantStatus int
	}{
		{
			name: "429 with Retry-After seconds, then success",
			script: func(p provider) []http.HandlerFunc {
				return []http.HandlerFunc{p.err(429, "Retry-After", "1"), p.ok("ok")}
			},
			wantReqs: 2, wantSleeps: []time.Duration{time.Second},
		},
		{
			name: "429 with retry-after-ms, preferred over Retry-After",
			script: func(p provider) []http.HandlerFunc {
				return []http.HandlerFunc{p.err(429, "retry-after-ms", "250", "Retry-After", "9"), p.ok("ok")}
			},
			wantReqs: 2, wantSleeps: []time.Duration{250 * time.Millisecond},
		},
		{
			name: "503 then 529 then success, exponential backoff",
			script: func(p provider) []http.HandlerFunc {
				return []http.HandlerFunc{p.err(503), p.err(529), p.ok("ok")}
			},
			wantReqs: 3,
		},
		{
			name:       "500 every time: 1 + 3 attempts, then error",
			script:     func(p provider) []http.HandlerFunc { return []http.HandlerFunc{p.err(500)} },
			wantReqs:   4,
			wantErr:    []string{"after 4 attempts", "HTTP 500", "fake failure", "wait a minute and try again"},
			wantStatus: 500,
		},
		{
			name:       "401 fails at once",
			script:     func(p provider) []http.HandlerFunc { return []http.HandlerFunc{p.err(401), p.ok("never")} },
			wantReqs:   1,
			wantErr:    []string{"HTTP 401", "_API_KEY was rejected — check the key"},
			wantStatus: 401,
		},
		{
			name:       "400 fails at once",
			script:     func(p provider) []http.HandlerFunc { return []http.HandlerFunc{p.err(400), p.ok("never")} },
			wantReqs:   1,
			wantErr:    []string{"HTTP 400", "rejected as invalid"},
			wantStatus: 400,
		},
		{
			name: "malformed JSON body fails at once",
			script: func(p provider) []http.HandlerFunc {
				return []http.HandlerFunc{jsonReply(200, `{"id": "x", "choices": nope}`), p.ok("never")}
			},
			wantReqs: 1,
			wantErr:  []string{"could not be read"},
		},
		{
			name:     "empty answer is an error",
			script:   func(p provider) []http.HandlerFunc { return []http.HandlerFunc{p.ok("")} },
			wantReqs: 1,
			wantErr:  []string{"empty answer"},
		},
	}
	for _, p := range providers {
		for _, tt := range tests {
			t.Run(p.name+"/"+tt.name, func(t *testing.T) {
				srv := newFakeServer(t, tt.script(p)...)
				var sl sleeps
				c := p.newFunc(t, srv.URL, testCfg{sleep: sl.sleep})
				resp, err := c.Complete(context.Background(), userReq("q"))
				if n := srv.requests(); n != tt.wantReqs {
					t.Errorf("server saw %d requests, want %d", n, tt.wantReqs)
				}
				if tt.wantErr == nil {
					if err != nil || resp.Text != "ok" {
						t.Fatalf("Complete = %q, %v; want ok", resp.Text, err)
					}
				} else {
					if err == nil || !contains(err.Error(), tt.wantErr...) {
						t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
					}
					var e *Error
					if errors.As(err, &e) && e.StatusCode != tt.wantStatus {
						t.Errorf("StatusCode = %d, want %d", e.StatusCode, tt.wantStatus)
					}
				}
				got := sl.got()
				if tt.wantSleeps != nil {
					if !slices.Equal(got, tt.wantSleeps) {
						t.Errorf("slept %v, want %v", got, tt.wantSleeps)
					}
					return
				}
				if len(got) != tt.wantReqs-1 && !(tt.wantErr != nil && len(got) == 0) {
					t.Errorf("slept %d times, want %d", len(got), tt.wantReqs-1)
				}
				for n, d := range got {
					hi := DefaultBaseDelay << n
					if d < hi/2 || d > hi {
						t.Errorf("backoff %d = %v, want within [%v, %v]", n, d, hi/2, hi)
					}
				}
			})
		}
	}
}

// TestTimeoutRetried: a server slower than the per-attempt timeout is
// retried, then reported.
func TestTimeoutRetried(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			srv := newFakeServer(t, hang(nil))
			var sl sleeps
			c := p.newFunc(t, srv.URL, testCfg{timeout: 20 * time.Millisecond, maxRetries: 2, sleep: sl.sleep})
			_, err := c.Complete(context.Background(), userReq("q"))
			if err == nil || !contains(err.Error(), "after 3 attempts", "per-attempt timeout of 20ms", "--llm-timeout or SHIRUBE_LLM_TIMEOUT") {
				t.Fatalf("err = %v", err)
			}
			var e *Error
			if !errors.As(err, &e) || !e.Transient || e.Attempts != 3 {
				t.Errorf("Error = %+v, want transient after 3 attempts", e)
			}
			if n := srv.requests(); n != 3 {
				t.Errorf("server saw %d requests, want 3", n)
			}
		})
	}
}

// TestTimeoutThenSuccess: one slow attempt, then a good one.
func TestTimeoutThenSuccess(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			srv := newFakeServer(t, hang(nil), p.ok("ok"))
			var sl sleeps
			// Generous, so the good second attempt is never cut short on a
			// loaded machine; the first attempt hangs for this long.
			c := p.newFunc(t, srv.URL, testCfg{timeout: time.Second, sleep: sl.sleep})
			resp, err := c.Complete(context.Background(), userReq("q"))
			if err != nil || resp.Text != "ok" || srv.requests() != 2 {
				t.Fatalf("Complete = %q, %v after %d requests; want ok after 2", resp.Text, err, srv.requests())
			}
		})
	}
}

// TestCancel: cancelling the context stops a call in flight and one
// waiting to retry, without further attempts.
func TestCancel(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name+"/in flight", func(t *testing.T) {
			arrived := make(chan struct{}, 1)
			srv := newFakeServer(t, hang(arrived))
			c := p.newFunc(t, srv.URL, testCfg{})
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-arrived; cancel() }()
			_, err := c.Complete(ctx, userReq("q"))
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if n := srv.requests(); n != 1 {
				t.Errorf("server saw %d requests, want 1", n)
			}
		})
		t.Run(p.name+"/waiting to retry", func(t *testing.T) {
			// A real sleep of 60 s is asked for; cancellation must cut it short.
			srv := newFakeServer(t, p.err(429, "Retry-After", "60"))
			arrived := make(chan struct{})
			c := p.newFunc(t, srv.URL, testCfg{sleep: func(ctx context.Context, d time.Duration) error {
				close(arrived)
				return Sleep(ctx, d)
			}})
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-arrived; cancel() }()
			_, err := c.Complete(ctx, userReq("q"))
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "waiting to retry") {
				t.Fatalf("err = %v, want cancelled while waiting to retry", err)
			}
			if n := srv.requests(); n != 1 {
				t.Errorf("server saw %d requests, want 1", n)
			}
		})
	}
}

// TestStreamRetryBeforeFirstDelta: a stream refused with 429 is retried;
// one that breaks after delivering text is not (the caller already showed
// it), and the partial text is returned.
func TestStreamRetry(t *testing.T) {
	streams := map[string]struct {
		good, broken []string
		err429       http.HandlerFunc
	}{
		"openai": {
			good:   openAIStreamEvents("gpt-4o-mini", []string{"a", "b"}, 1, 2),
			broken: openAIStreamEvents("gpt-4o-mini", []string{"a"}, 1, 2)[:2],
			err429: openAIError(429, "rate_limit", "slow down"),
		},
		"anthropic": {
			good:   anthropicStreamEvents("claude-sonnet-5-5", []string{"a", "b"}, 1, 2),
			broken: anthropicStreamEvents("claude-sonnet-5-5", []string{"a"}, 1, 2)[:4],
			err429: anthropicError(429, "rate_limit_error", "slow down", "Retry-After", "0"),
		},
	}
	for _, p := range providers {
		s := streams[p.name]
		t.Run(p.name+"/429 then stream", func(t *testing.T) {
			srv := newFakeServer(t, s.err429, sseReply(s.good...))
			var sl sleeps
			c := p.newFunc(t, srv.URL, testCfg{sleep: sl.sleep})
			var got []string
			resp, err := c.Stream(context.Background(), userReq("q"), func(d string) { got = append(got, d) })
			if err != nil || resp.Text != "ab" || !slices.Equal(got, []string{"a", "b"}) {
				t.Fatalf("Stream = %q (deltas %q), %v", resp.Text, got, err)
			}
			if srv.requests() != 2 || resp.Usage.CompletionTokens != 2 {
				t.Errorf("requests = %d, usage = %+v", srv.requests(), resp.Usage)
			}
		})
		t.Run(p.name+"/broken after delta", func(t *testing.T) {
			srv := newFakeServer(t, brokenSSE(s.broken...), sseReply(s.good...))
			var sl sleeps
			c := p.newFunc(t, srv.URL, testCfg{sleep: sl.sleep})
			var got []string
			resp, err := c.Stream(context.Background(), userReq("q"), func(d string) { got = append(got, d) })
			if err == nil {
				t.Fatalf("Stream = %q, want an error", resp.Text)
			}
			if srv.requests() != 1 || resp.Text != "a" || !slices.Equal(got, []string{"a"}) {
				t.Errorf("requests = %d, text %q, deltas %q; want 1, a, [a]", srv.requests(), resp.Text, got)
			}
		})
	}
}

// TestErrorMessages pins the user-facing messages.
func TestErrorMessages(t *testing.T) {
	var b strings.Builder
	for _, p := range providers {
		for _, tc := range []struct {
			name   string
			status int
		}{{"401", 401}, {"403", 403}, {"404", 404}, {"500x4", 500}} {
			srv := newFakeServer(t, p.err(tc.status))
			var sl sleeps
			c := p.newFunc(t, srv.URL, testCfg{sleep: sl.sleep})
			_, err := c.Complete(context.Background(), Request{Model: "m", Messages: []Message{{Role: RoleUser, Content: "q"}}})
			b.WriteString(p.name + " " + tc.name + ": " + err.Error() + "\n")
		}
	}
	for _, tc := range []struct {
		name string
		fn   func() error
	}{
		{"openai no key", func() error { _, err := NewOpenAI(OpenAIConfig{}); return err }},
		{"openai bad base", func() error { _, err := NewOpenAI(OpenAIConfig{BaseURL: "localhost:11434"}); return err }},
		{"anthropic no key", func() error { _, err := NewAnthropic(AnthropicConfig{}); return err }},
		{"no messages", func() error {
			c, _ := NewOpenAI(OpenAIConfig{APIKey: "k"})
			_, err := c.Complete(context.Background(), Request{})
			return err
		}},
		{"bad role", func() error {
			c, _ := NewAnthropic(AnthropicConfig{APIKey: "k"})
			_, err := c.Complete(context.Background(), Request{Messages: []Message{{Role: "system", Content: "x"}}})
			return err
		}},
	} {
		b.WriteString(tc.name + ": " + tc.fn().Error() + "\n")
	}
	checkGolden(t, "errors.golden", b.String())
}

func TestLocalServerWithoutKey(t *testing.T) {
	srv := newFakeServer(t, jsonReply(200, openAICompletion("llama3.1:8b", "こんにちは", 5, 3)))
	c, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "llama3.1:8b"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(context.Background(), userReq("hi"))
	if err != nil || resp.Text != "こんにちは" || resp.CostUSD != 0 {
		t.Fatalf("Complete = %+v, %v", resp, err)
	}
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), []byte(got))
}
