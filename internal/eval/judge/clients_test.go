package judge

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/eval"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/llmtest"
)

// provider describes one API: its fake server and its client.
type provider struct {
	name string
	path string // request path the client must use
	// start runs a fake server of the API answering with reply.
	start func(t testing.TB, reply func(llmtest.Request) llmtest.Reply) *llmtest.Server
	// client builds the llm client against base with an injected sleep.
	client func(t *testing.T, base string, sleep llm.SleepFunc) eval.Completer
}

func providers() []provider {
	return []provider{
		{
			name:  "anthropic",
			path:  "/v1/messages",
			start: llmtest.Anthropic,
			client: func(t *testing.T, base string, sleep llm.SleepFunc) eval.Completer {
				c, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "test-key", BaseURL: base, Model: "claude-sonnet-4-5", Sleep: sleep})
				if err != nil {
					t.Fatal(err)
				}
				return c
			},
		},
		{
			name:  "openai",
			path:  "/v1/chat/completions",
			start: llmtest.OpenAI,
			client: func(t *testing.T, base string, sleep llm.SleepFunc) eval.Completer {
				c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "test-key", BaseURL: base, Model: "gpt-4o-mini", Sleep: sleep})
				if err != nil {
					t.Fatal(err)
				}
				return c
			},
		},
	}
}

// textReply is a successful reply with text and the usage the fakes
// report (1000 prompt and 100 completion tokens).
func textReply(text string) llmtest.Reply {
	return llmtest.Reply{Text: text, PromptTokens: 1000, CompletionTokens: 100}
}

// apiReply answers like the provider's API: the first request gets a 429
// with Retry-After: 7, the connectivity check gets "OK", question Q2 hedges
// on its first judgement, and everything else gets a verdict.
func apiReply() func(llmtest.Request) llmtest.Reply {
	var mu sync.Mutex
	seen := map[string]int{}
	return func(r llmtest.Request) llmtest.Reply {
		q := callOf(r).question
		mu.Lock()
		k := seen[q]
		seen[q]++
		mu.Unlock()
		if r.Calls == 1 {
			return llmtest.Reply{Status: http.StatusTooManyRequests, RetryAfter: "7", ErrorMessage: "slow down"}
		}
		switch {
		case q == "":
			return textReply("OK")
		case q == "Q2?" && k == 0:
			return textReply(`{"precision": 1, "recall": 0, "accuracy": 1, "reasoning": "This could go either way."}`)
		case q == "Q2?":
			return textReply(fmt.Sprintf(`{"precision": 1, "recall": %d, "accuracy": 1, "reasoning": "Consensus run."}`, k%2)) // k = 1, 2, 3 → recall 1, 0, 1
		}
		return textReply("```json\n" + `{"precision": 1, "recall": 1, "accuracy": 1, "reasoning": "Matches."}` + "\n```")
	}
}

// TestRunThroughClients drives the judge through the real llm clients
// against fake Anthropic and OpenAI servers.
func TestRunThroughClients(t *testing.T) {
	for _, p := range providers() {
		t.Run(p.name, func(t *testing.T) {
			srv := p.start(t, apiReply())
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
			res, err := Run(context.Background(), baseOptions(dir, p.client(t, srv.BaseURL(), clientSleep), &out, judgeSleeps))
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, out.String())
			}
			// The 429 was retried after exactly its Retry-After.
			if len(clientSleeps) != 1 || clientSleeps[0] != 7*time.Second {
				t.Errorf("client sleeps = %v, want [7s] (Retry-After honoured)", clientSleeps)
			}
			// Requests: 429 + check + Q1 + Q3 + Q2 ×(1+3) = 8.
			reqs := srv.Requests()
			if len(reqs) != 8 {
				t.Fatalf("server got %d requests, want 8", len(reqs))
			}
			for i, r := range reqs {
				if r.Path != p.path {
					t.Errorf("request %d path = %s, want %s", i, r.Path, p.path)
				}
			}
			if got := callOf(reqs[1]).maxTokens; got != CheckMaxTokens {
				t.Errorf("check call max tokens = %v, want 100", got)
			}
			var temps []float64
			for _, r := range reqs[2:] {
				c := callOf(r)
				if c.maxTokens != EvalMaxTokens {
					t.Errorf("evaluation max tokens = %v, want 2000", c.maxTokens)
				}
				temps = append(temps, c.temp)
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
