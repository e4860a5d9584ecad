package llm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/llmtest"
)

// newFor returns a client of the given provider against srv, with the
// whole-call limit call and instant retry waits.
func newFor(t *testing.T, provider string, srv *llmtest.Server, call time.Duration) Client {
	t.Helper()
	noSleep := func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	var c Client
	var err error
	if provider == llmtest.ProviderOpenAI {
		c, err = NewOpenAI(OpenAIConfig{APIKey: "sk-test", BaseURL: srv.BaseURL(), CallTimeout: call, Sleep: noSleep})
	} else {
		c, err = NewAnthropic(AnthropicConfig{APIKey: "sk-ant-test", BaseURL: srv.BaseURL(), CallTimeout: call, Sleep: noSleep})
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fakeFor(t *testing.T, provider string, reply func(llmtest.Request) llmtest.Reply) *llmtest.Server {
	if provider == llmtest.ProviderOpenAI {
		return llmtest.OpenAI(t, reply)
	}
	return llmtest.Anthropic(t, reply)
}

// TestCallTimeout: the whole-call limit (--llm-timeout) ends a model that
// trickles its answer — streamed or not — and one that never answers,
// with an error naming the setting. Per-attempt timeouts alone never end
// a trickling stream (each chunk restarts them).
func TestCallTimeout(t *testing.T) {
	long := strings.Repeat("回答の一部です。", 40)
	cases := []struct {
		name   string
		reply  llmtest.Reply
		stream bool
	}{
		{"trickling stream", llmtest.Reply{Text: long, Chunks: 40, ChunkDelay: 150 * time.Millisecond}, true},
		{"trickling body", llmtest.Reply{Text: long, Chunks: 40, ChunkDelay: 150 * time.Millisecond}, false},
		{"never answers", llmtest.Reply{Text: "x", Delay: time.Hour}, false},
		{"never answers, stream", llmtest.Reply{Text: "x", Delay: time.Hour}, true},
	}
	for _, provider := range []string{llmtest.ProviderOpenAI, llmtest.ProviderAnthropic} {
		for _, tc := range cases {
			t.Run(provider+"/"+tc.name, func(t *testing.T) {
				srv := fakeFor(t, provider, func(llmtest.Request) llmtest.Reply { return tc.reply })
				c := newFor(t, provider, srv, 300*time.Millisecond)
				var err error
				var resp Response
				if tc.stream {
					resp, err = c.Stream(context.Background(), userReq("q"), nil)
				} else {
					resp, err = c.Complete(context.Background(), userReq("q"))
				}
				var e *Error
				if !errors.As(err, &e) || !e.Timeout {
					t.Fatalf("err = %v (%#v), want a whole-call timeout", err, e)
				}
				if msg := err.Error(); !strings.Contains(msg, "LLM timeout of 300ms") || !strings.Contains(msg, "--llm-timeout or SHIRUBE_LLM_TIMEOUT") {
					t.Errorf("message %q does not name the limit and the setting", msg)
				}
				if resp.Text != "" && !resp.Incomplete {
					t.Errorf("partial text %q not marked incomplete", resp.Text)
				}
				if k := Kind(err); k != KindTimeout && !(resp.Incomplete && k == KindIncomplete) {
					t.Errorf("Kind = %q", k)
				}
			})
		}
	}
}

// TestStreamCutOff: a stream that stops mid-answer — without its final
// chunk, or with the connection dropped — is not a normal answer: the
// partial text comes back marked Incomplete with an error wrapping
// ErrIncomplete, and it is not retried (the caller already showed it).
func TestStreamCutOff(t *testing.T) {
	for _, provider := range []string{llmtest.ProviderOpenAI, llmtest.ProviderAnthropic} {
		for _, drop := range []bool{false, true} {
			name := provider + "/clean end"
			if drop {
				name = provider + "/dropped"
			}
			t.Run(name, func(t *testing.T) {
				srv := fakeFor(t, provider, func(llmtest.Request) llmtest.Reply {
					return llmtest.Reply{Text: "次の手順で行います [1]。 1. 端末を隔離する。", Chunks: 4, CutAfter: 2, Drop: drop}
				})
				c := newFor(t, provider, srv, 0)
				var got strings.Builder
				resp, err := c.Stream(context.Background(), userReq("q"), func(d string) { got.WriteString(d) })
				if !errors.Is(err, ErrIncomplete) || Kind(err) != KindIncomplete {
					t.Fatalf("err = %v, want ErrIncomplete", err)
				}
				if !resp.Incomplete || resp.Text == "" || resp.Text != got.String() {
					t.Errorf("resp = %+v, delivered %q; want the partial text marked incomplete", resp, got.String())
				}
				if n := srv.Calls(); n != 1 {
					t.Errorf("%d requests, want 1 (no retry after text was shown)", n)
				}
			})
		}
	}
}

// TestKindAndReason: failures are classified without internals.
func TestKindAndReason(t *testing.T) {
	srv := llmtest.OpenAI(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Status: 503} })
	c := newFor(t, llmtest.ProviderOpenAI, srv, 0)
	_, err := c.Complete(context.Background(), userReq("q"))
	if Kind(err) != KindServerError || Reason(err) != "server_error: HTTP 503 after 4 attempts" {
		t.Errorf("Kind = %q, Reason = %q", Kind(err), Reason(err))
	}
	if strings.Contains(Reason(err), "127.0.0.1") {
		t.Errorf("Reason shows the endpoint: %q", Reason(err))
	}
	if Kind(nil) != "" || Kind(context.Canceled) != KindCancelled {
		t.Errorf("Kind(nil) = %q, Kind(Canceled) = %q", Kind(nil), Kind(context.Canceled))
	}
}

// TestAttemptMayUseTheWholeCall: with only the whole-call limit set, one
// slow attempt may use all of it — a model that needs longer than the
// 60 s default is not cut off by a fixed per-attempt limit.
func TestAttemptMayUseTheWholeCall(t *testing.T) {
	p := newRetryPolicy(0, 0, 0, 5*time.Minute, nil)
	if p.timeout != 5*time.Minute {
		t.Errorf("per-attempt timeout %v, want the call's 5m", p.timeout)
	}
	if p := newRetryPolicy(0, 0, 0, 0, nil); p.timeout != DefaultTimeout || p.call != DefaultCallTimeout {
		t.Errorf("defaults %v / %v", p.timeout, p.call)
	}
}
