package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/llmtest"
)

// TestAskModelFailures: with the model failing after its retries, or
// never answering within --llm-timeout / SHIRUBE_LLM_TIMEOUT, `ask`
// answers extractively with a Japanese notice, shows no internals, exits
// 0 and logs the failure.
func TestAskModelFailures(t *testing.T) {
	fixture := indexedFixture(t)
	cases := []struct {
		name  string
		reply llmtest.Reply
		args  []string
		env   string
		ja    string
		cause string
	}{
		{"server error", llmtest.Reply{Status: 503, RetryAfter: "0"}, nil, "", "モデルのサーバーでエラー", "server_error: HTTP 503 after 4 attempts"},
		{"never answers, flag", llmtest.Reply{Delay: time.Hour}, []string{"--llm-timeout", "300ms"}, "", "制限時間内に応答がありませんでした", "timeout"},
		{"trickles, env", llmtest.Reply{Text: strings.Repeat("手順です。", 30), Chunks: 30, ChunkDelay: 100 * time.Millisecond}, nil, "300ms", "制限時間内に応答がありませんでした", "timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspace(t, fixture)
			fake := llmtest.OpenAI(t, func(llmtest.Request) llmtest.Reply { return tc.reply })
			t.Setenv("OPENAI_API_KEY", "sk-test-0123456789")
			t.Setenv("OPENAI_API_BASE", fake.BaseURL())
			if tc.env != "" {
				t.Setenv("SHIRUBE_LLM_TIMEOUT", tc.env)
			}
			out, errOut, err := run(t, "", append(append([]string{"ask"}, tc.args...), "バックアップからの復旧手順は？")...)
			if err != nil {
				t.Fatalf("ask failed: %v\n%s", err, errOut)
			}
			if !strings.Contains(out, "## Answer\n⚠️ AIモデルを利用できなかったため（"+tc.ja) || !strings.Contains(out, "[1]") {
				t.Errorf("answer:\n%s", out)
			}
			if strings.Contains(out, fake.URL) || strings.Contains(out, "request for model") {
				t.Errorf("stdout shows internals:\n%s", out)
			}
			lines := auditLines(t, filepath.Join(ws, "logs"))
			if len(lines) != 1 || !lines[0].LLMUnavailable || lines[0].LLMError != tc.cause {
				t.Errorf("audit: %+v", lines)
			}
		})
	}
}

// TestAskAuditFailureExit: an answer whose audit line cannot be written is
// printed, and `ask` exits non-zero saying so.
func TestAskAuditFailureExit(t *testing.T) {
	ws := workspace(t, indexedFixture(t))
	if err := os.WriteFile(filepath.Join(ws, "logs"), []byte("a file where the log folder should be"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "", "ask", "バックアップからの復旧手順は？")
	var ec exitCode
	if !errors.As(err, &ec) || ec.code != exitAuditFailed || !strings.Contains(ec.msg, "監査ログに書き込めませんでした") {
		t.Fatalf("err = %v, want exit %d", err, exitAuditFailed)
	}
	if !strings.Contains(out, "## Answer") {
		t.Errorf("answer not printed:\n%s", out)
	}
}

// TestAskQuestionLimit: the command line has the API's limit and message.
func TestAskQuestionLimit(t *testing.T) {
	ws := workspace(t, indexedFixture(t))
	_, _, err := run(t, "", "ask", strings.Repeat("長", 2001))
	if err == nil || !strings.Contains(err.Error(), "質問が長すぎます（2001 文字）— 2000 文字以内にしてください") {
		t.Fatalf("err = %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(ws, "logs", "*.jsonl")); len(m) != 0 {
		t.Errorf("a refused question was logged: %v", m)
	}
}

// TestOpenAIEmbedderNeedsKey: an index built with the openai embedder is
// not searched BM25-only when the key is missing: the command fails and
// names the variable.
func TestOpenAIEmbedderNeedsKey(t *testing.T) {
	fixture := indexedFixture(t)
	workspace(t, fixture)
	emb := llmtest.Embeddings(t, func(s string) []float64 { return []float64{float64(len(s)%7) + 1, 1, 0.5} })
	t.Setenv("OPENAI_API_KEY", "sk-test-0123456789")
	t.Setenv("OPENAI_API_BASE", emb.BaseURL())
	mustRun(t, "index", "--rebuild", "--embedder", "openai")
	mustRun(t, "search", "バックアップ")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_API_BASE", "")
	for _, cmd := range [][]string{{"search", "バックアップ"}, {"ask", "バックアップからの復旧手順は？"}} {
		_, _, err := run(t, "", cmd...)
		if err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") || !strings.Contains(err.Error(), "openai embedder") {
			t.Errorf("%s without a key: %v", cmd[0], err)
		}
	}
}

// TestStatusReportsDamage: a generation file that no longer matches its
// checksum makes `status` say the index is damaged and how to rebuild,
// and exit non-zero — as search refuses it.
func TestStatusReportsDamage(t *testing.T) {
	ws := workspace(t, indexedFixture(t))
	if out := mustRun(t, "status"); !strings.Contains(out, "health:     ok") {
		t.Fatalf("healthy index:\n%s", out)
	}
	m, _ := filepath.Glob(filepath.Join(ws, ".shirube", "gen-*", "chunks.bin"))
	if len(m) != 1 {
		t.Fatalf("chunks file: %v", m)
	}
	f, err := os.OpenFile(m[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("garbage")
	f.Close()
	if _, _, err := run(t, "", "search", "バックアップ"); err == nil {
		t.Fatal("search accepted the damaged index")
	}
	out, _, err := run(t, "", "status")
	if err == nil || !strings.Contains(out, "health:     damaged") || !strings.Contains(out, "shirube index --rebuild") {
		t.Errorf("status: %v\n%s", err, out)
	}
}

// TestConfigMasksURLCredentials: `shirube config` shows no password from
// OPENAI_API_BASE and at most the last 4 characters of a key.
func TestConfigMasksURLCredentials(t *testing.T) {
	offlineEnv(t)
	t.Chdir(t.TempDir())
	t.Setenv("OPENAI_API_BASE", "https://alice:pa55word-xyz@proxy.example/v1")
	t.Setenv("OPENAI_API_KEY", "sk-proj-0123456789abcdef")
	out := mustRun(t, "config")
	for _, leak := range []string{"pa55word", "alice", "sk-proj", "0123456789"} {
		if strings.Contains(out, leak) {
			t.Errorf("config shows %q:\n%s", leak, out)
		}
	}
	if !strings.Contains(out, "OPENAI_API_KEY=****cdef") || !strings.Contains(out, "OPENAI_API_BASE=https://****:****@proxy.example/v1") {
		t.Errorf("config:\n%s", out)
	}
}

// TestChatCountsEveryCall: in `chat` every question costs the default
// (balanced) profile's facet planner call and the answer, and a follow-up
// a rewrite call as well; the audit line counts each (seed 002 §6.1
// token_usage, cost_usd).
func TestChatCountsEveryCall(t *testing.T) {
	ws := workspace(t, indexedFixture(t))
	fake := llmtest.OpenAI(t, func(r llmtest.Request) llmtest.Reply {
		switch {
		case strings.Contains(r.System, "stand-alone search query"):
			return llmtest.Reply{Text: "バックアップからの復旧手順の詳細", PromptTokens: 10, CompletionTokens: 5}
		case strings.Contains(r.System, "You decompose a question"):
			return llmtest.Reply{Text: `{"route":"direct","facets":[{"type":"intent","text":"バックアップからの復旧手順"}]}`, PromptTokens: 50, CompletionTokens: 10}
		}
		return llmtest.Reply{Text: "復旧ポイントを選定する [1]。", PromptTokens: 100, CompletionTokens: 20}
	})
	t.Setenv("OPENAI_API_KEY", "sk-test-0123456789")
	t.Setenv("OPENAI_API_BASE", fake.BaseURL())
	if _, errOut, err := run(t, "バックアップからの復旧手順は？\nその手順の詳細を教えて\n", "chat", "--verify", "lexical"); err != nil {
		t.Fatalf("chat: %v\n%s", err, errOut)
	}
	lines := auditLines(t, filepath.Join(ws, "logs"))
	if len(lines) != 2 || fake.Calls() != 5 {
		t.Fatalf("%d audit lines, %d model calls; want 2 and 5 (planner and answer, then rewrite, planner and answer)", len(lines), fake.Calls())
	}
	if got := lines[0].TokenUsage; got.PromptTokens != 150 || got.CompletionTokens != 30 || got.TotalTokens != 180 {
		t.Errorf("first question logged %+v, want the planner's 60 tokens and the answer's 120", got)
	}
	if got := lines[1].TokenUsage; got.PromptTokens != 160 || got.CompletionTokens != 35 || got.TotalTokens != 195 {
		t.Errorf("follow-up logged %+v, want the rewrite's 15 tokens, the planner's 60 and the answer's 120", got)
	}
	if lines[1].CostUSD <= lines[0].CostUSD {
		t.Errorf("follow-up cost %g not above the first question's %g", lines[1].CostUSD, lines[0].CostUSD)
	}
}

// TestChatModelHonoursLLMTimeout: every command takes its model from
// newChatModel — answers, verification re-checks, follow-up rewrites, the
// planner, the judge, question generation — so the configured whole-call
// limit reaches each of them, for both providers.
func TestChatModelHonoursLLMTimeout(t *testing.T) {
	offlineEnv(t)
	never := func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Delay: time.Hour} }
	oa, an := llmtest.OpenAI(t, never), llmtest.Anthropic(t, never)
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			cfg := config.Default()
			cfg.Provider, cfg.LLMTimeout = config.Provider(provider), 300*time.Millisecond
			cfg.OpenAIKey, cfg.OpenAIBase = "sk-test-0123456789", oa.BaseURL()
			cfg.AnthropicKey, cfg.AnthropicBase = "sk-ant-test-0123456789", an.BaseURL()
			m, _, err := newChatModel(cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}})
			var le *llm.Error
			if !errors.As(err, &le) || !le.Timeout || !strings.Contains(err.Error(), "300ms") {
				t.Errorf("err = %v, want the 300ms whole-call timeout", err)
			}
		})
	}
}
