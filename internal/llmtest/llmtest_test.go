package llmtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/llmtest"
)

// clients returns shirube's real clients (openai-go, anthropic-sdk-go)
// pointed at a fake of each provider, with waits recorded instead of slept.
func clients(t *testing.T, reply func(llmtest.Request) llmtest.Reply, waits *[]time.Duration) map[string]interface {
	Complete(context.Context, llm.Request) (llm.Response, error)
	Stream(context.Context, llm.Request, func(string)) (llm.Response, error)
} {
	t.Helper()
	sleep := func(ctx context.Context, d time.Duration) error { *waits = append(*waits, d); return ctx.Err() }
	o, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "sk-test", BaseURL: llmtest.OpenAI(t, reply).BaseURL(), Model: "gpt-4o-mini", Sleep: sleep, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	a, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k", BaseURL: llmtest.Anthropic(t, reply).BaseURL(), Model: "haiku", Sleep: sleep, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]interface {
		Complete(context.Context, llm.Request) (llm.Response, error)
		Stream(context.Context, llm.Request, func(string)) (llm.Response, error)
	}{"openai": o, "anthropic": a}
}

func TestCompleteAndStream(t *testing.T) {
	var got []llmtest.Request
	var waits []time.Duration
	reply := func(r llmtest.Request) llmtest.Reply {
		got = append(got, r)
		return llmtest.Reply{Text: "監査ログは1年間保管する [1]。", PromptTokens: 1200, CompletionTokens: 80, Chunks: 4}
	}
	for name, c := range clients(t, reply, &waits) {
		got = nil
		req := llm.Request{System: "根拠だけで答える", Messages: []llm.Message{{Role: llm.RoleUser, Content: "保管期間は？"}}}
		resp, err := c.Complete(context.Background(), req)
		if err != nil {
			t.Fatalf("%s complete: %v", name, err)
		}
		if resp.Text != "監査ログは1年間保管する [1]。" || resp.Usage.PromptTokens != 1200 || resp.Usage.CompletionTokens != 80 {
			t.Errorf("%s complete: %+v", name, resp)
		}
		var deltas []string
		resp, err = c.Stream(context.Background(), req, func(d string) { deltas = append(deltas, d) })
		if err != nil {
			t.Fatalf("%s stream: %v", name, err)
		}
		if strings.Join(deltas, "") != "監査ログは1年間保管する [1]。" || len(deltas) < 2 || resp.Usage.CompletionTokens != 80 {
			t.Errorf("%s stream: %d deltas %q, %+v", name, len(deltas), deltas, resp)
		}
		if len(got) != 2 || got[0].System != "根拠だけで答える" || got[0].User != "保管期間は？" || got[0].Stream || !got[1].Stream || got[1].Calls != 2 || got[0].Model == "" {
			t.Errorf("%s requests %+v", name, got)
		}
	}
}

func TestErrors(t *testing.T) {
	var waits []time.Duration
	reply := func(r llmtest.Request) llmtest.Reply {
		switch r.User {
		case "rate":
			if r.Calls%2 == 1 { // each provider's server counts its own calls
				return llmtest.Reply{Status: 429, RetryAfter: "2"}
			}
			return llmtest.Reply{Text: "ok"}
		case "down":
			return llmtest.Reply{Status: 500}
		case "garbled":
			return llmtest.Reply{Raw: `{"choices": [`}
		}
		return llmtest.Reply{Text: "slow", Delay: 5 * time.Second}
	}
	ask := func(q string) llm.Request {
		return llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: q}}}
	}
	for name, c := range clients(t, reply, &waits) {
		waits = nil
		if resp, err := c.Complete(context.Background(), ask("rate")); err != nil || resp.Text != "ok" || len(waits) != 1 || waits[0] != 2*time.Second {
			t.Errorf("%s 429 then ok: %+v, %v, waits %v", name, resp, err, waits)
		}
		if _, err := c.Complete(context.Background(), ask("down")); err == nil || !strings.Contains(err.Error(), "500") {
			t.Errorf("%s 500: %v", name, err)
		}
		if _, err := c.Complete(context.Background(), ask("garbled")); err == nil {
			t.Errorf("%s malformed body: no error", name)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		_, err := c.Complete(ctx, ask("slow"))
		cancel()
		if err == nil || !(errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "deadline")) {
			t.Errorf("%s slow reply: %v", name, err)
		}
	}
}
