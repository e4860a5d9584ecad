package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/llm"
)

// provider describes how a fake server speaks one API.
type provider struct {
	name string
	path string // request path the client must use
	// reply renders the model's text as a successful response body.
	reply func(text string) string
	// rateLimited renders a 429 body.
	rateLimited string
	// user extracts the last user message of a request body.
	user func(body map[string]any) string
	// client builds the llm client against base with an injected sleep.
	client func(t *testing.T, base string, sleep llm.SleepFunc) Completer
}

func providers() []provider {
	return []provider{
		{
			name: "anthropic",
			path: "/v1/messages",
			reply: func(text string) string {
				b, _ := json.Marshal(map[string]any{
					"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
					"content":     []map[string]any{{"type": "text", "text": text}},
					"stop_reason": "end_turn", "stop_sequence": nil,
					"usage": map[string]any{"input_tokens": 1000, "output_tokens": 100},
				})
				return string(b)
			},
			rateLimited: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`,
			user: func(body map[string]any) string {
				msgs, _ := body["messages"].([]any)
				if len(msgs) == 0 {
					return ""
				}
				m, _ := msgs[0].(map[string]any)
				switch c := m["content"].(type) {
				case string:
					return c
				case []any:
					if len(c) > 0 {
						part, _ := c[0].(map[string]any)
						s, _ := part["text"].(string)
						return s
					}
				}
				return ""
			},
			client: func(t *testing.T, base string, sleep llm.SleepFunc) Completer {
				c, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "test-key", BaseURL: base + "/", Model: "claude-sonnet-4-5", Sleep: sleep})
				if err != nil {
					t.Fatal(err)
				}
				return c
			},
		},
		{
			name: "openai",
			path: "/v1/chat/completions",
			reply: func(text string) string {
				b, _ := json.Marshal(map[string]any{
					"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
					"choices": []map[string]any{{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}},
					"usage":   map[string]any{"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100},
				})
				return string(b)
			},
			rateLimited: `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`,
			user: func(body map[string]any) string {
				msgs, _ := body["messages"].([]any)
				for _, m := range msgs {
					mm, _ := m.(map[string]any)
					if mm["role"] == "user" {
						s, _ := mm["content"].(string)
						return s
					}
				}
				return ""
			},
			client: func(t *testing.T, base string, sleep llm.SleepFunc) Completer {
				c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "test-key", BaseURL: base + "/v1", Model: "gpt-4o-mini", Sleep: sleep})
				if err != nil {
					t.Fatal(err)
				}
				return c
			},
		},
	}
}

// apiServer answers like the provider's API: the first request gets a 429
// with Retry-After: 7, the connectivity check gets "OK", question Q2 hedges
// on its first judgement, and everything else gets a verdict.
type apiServer struct {
	mu     sync.Mutex
	bodies []map[string]any
	paths  []string
	seen   map[string]int
}

func (s *apiServer) handler(p provider) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, body)
		s.paths = append(s.paths, r.URL.Path)
		user := p.user(body)
		q := questionOf(llm.Request{Messages: []llm.Message{{Content: user}}})
		k := s.seen[q]
		s.seen[q]++
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n == 0 {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, p.rateLimited)
			return
		}
		var text string
		switch {
		case q == "":
			text = "OK"
		case q == "Q2?" && k == 0:
			text = `{"precision": 1, "recall": 0, "accuracy": 1, "reasoning": "This could go either way."}`
		case q == "Q2?":
			text = fmt.Sprintf(`{"precision": 1, "recall": %d, "accuracy": 1, "reasoning": "Consensus run."}`, k%2) // k = 1, 2, 3 → recall 1, 0, 1
		default:
			text = "```json\n" + `{"precision": 1, "recall": 1, "accuracy": 1, "reasoning": "Matches."}` + "\n```"
		}
		io.WriteString(w, p.reply(text))
	}
}

// TestRunThroughClients drives the judge through the real llm clients
// against fake Anthropic and OpenAI servers.
func TestRunThroughClients(t *testing.T) {
	for _, p := range providers() {
		t.Run(p.name, func(t *testing.T) {
			s := &apiServer{seen: map[string]int{}}
			srv := httptest.NewServer(s.handler(p))
			defer srv.Close()
			var mu sync.Mutex
			var clientSleeps []time.Duration
			clientSleep := func(ctx context.Context, d time.Duration) error {
				mu.Lock()
				defer mu.Unlock()
				clientSleeps = append(clientSleeps, d)
				return ctx.Err()
			}
			dir := setup(t, 3)
			mkdirs(t, dir)
			var out bytes.Buffer
			judgeSleeps := &sleeps{}
			res, err := Run(context.Background(), baseOptions(dir, p.client(t, srv.URL, clientSleep), &out, judgeSleeps))
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, out.String())
			}
			// The 429 was retried after exactly its Retry-After.
			if len(clientSleeps) != 1 || clientSleeps[0] != 7*time.Second {
				t.Errorf("client sleeps = %v, want [7s] (Retry-After honoured)", clientSleeps)
			}
			// Requests: 429 + check + Q1 + Q3 + Q2 ×(1+3) = 8.
			if len(s.bodies) != 8 {
				t.Fatalf("server got %d requests, want 8", len(s.bodies))
			}
			for i, path := range s.paths {
				if path != p.path {
					t.Errorf("request %d path = %s, want %s", i, path, p.path)
				}
			}
			maxTokens := func(b map[string]any) float64 {
				if v, ok := b["max_tokens"].(float64); ok {
					return v
				}
				v, _ := b["max_completion_tokens"].(float64)
				return v
			}
			if got := maxTokens(s.bodies[1]); got != CheckMaxTokens {
				t.Errorf("check call max tokens = %v, want 100", got)
			}
			var temps []float64
			for _, b := range s.bodies[2:] {
				if got := maxTokens(b); got != EvalMaxTokens {
					t.Errorf("evaluation max tokens = %v, want 2000", got)
				}
				tv, _ := b["temperature"].(float64)
				temps = append(temps, tv)
			}
			zeros, pointThrees := 0, 0
			for _, tv := range temps {
				switch tv {
				case 0:
					zeros++
				case ConsensusTemperature:
					pointThrees++
				}
			}
			if zeros != 3 || pointThrees != 3 {
				t.Errorf("temperatures = %v, want three 0 and three 0.3", temps)
			}
			// The judge's own pacing: 0.5 s before every call but the first
			// (check, Q×3, consensus ×3 = 7 calls → 6 pauses).
			if len(judgeSleeps.d) != 6 {
				t.Errorf("judge sleeps = %v, want 6 × 500ms", judgeSleeps.d)
			}
			q2 := res.Rows[1]
			if q2.Consensus != "3-vote (hedge: could go either way): P 3/3, R 2/3, A 3/3" || q2.Recall != 1 {
				t.Errorf("Q2 row = %+v", q2)
			}
			if res.Summary != (Summary{Total: 3, Scored: 3, Precision: 3, Recall: 3, Accuracy: 3, Consensus: 1}) {
				t.Errorf("summary = %+v", res.Summary)
			}
			if res.CostUSD <= 0 {
				t.Errorf("cost = %v, want > 0 from the price table", res.CostUSD)
			}
			if !strings.Contains(res.Judge, "llm (model ") {
				t.Errorf("judge = %q", res.Judge)
			}
		})
	}
}
