package main

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/auditlog"
	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/llmtest"
)

// auditLines reads every entry of the audit logs under dir.
func auditLines(t *testing.T, dir string) []auditlog.Entry {
	t.Helper()
	es, err := auditlog.ReadAll(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// fakeOpenAIReply answers like OpenAI: the first request gets a 429 with
// Retry-After; the facet planner of the default (balanced) profile gets a
// one-facet direct plan; later ones an answer citing [1] and a bogus [9];
// the claim re-check (a JSON-mode request) finds its one claim
// unsupported.
func fakeOpenAIReply(r llmtest.Request) llmtest.Reply {
	if r.Calls == 1 {
		return llmtest.Reply{Status: http.StatusTooManyRequests, RetryAfter: "0", ErrorMessage: "rate limited"}
	}
	if strings.Contains(r.System, "You decompose a question") {
		return llmtest.Reply{Text: `{"route":"direct","facets":[{"type":"intent","text":"` + r.User + `"}]}`, Model: "gpt-4o-mini", PromptTokens: 300, CompletionTokens: 30}
	}
	if rf, _ := r.Body["response_format"].(map[string]any); rf["type"] == "json_object" {
		return llmtest.Reply{Text: `{"claims":[{"n":1,"supported":false,"evidence":[]}]}`, Model: "gpt-4o-mini", PromptTokens: 400, CompletionTokens: 20}
	}
	return llmtest.Reply{
		Text:         "復元前にハッシュ値を照合する [1]。外部の復旧業者に連絡する [9]。\n\n不明点:\n- 復旧にかかる正確な時間",
		Model:        "gpt-4o-mini",
		PromptTokens: 1200, CompletionTokens: 80,
	}
}

func TestAskOfflineAndAudit(t *testing.T) {
	fixture := indexedFixture(t)
	ws := workspace(t, fixture)
	out := mustRun(t, "ask", "--json", "バックアップからの復旧手順は？")
	var rep assistant.Reply
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("ask --json: %v\n%s", err, out)
	}
	if rep.Generator != "extractive" || len(rep.Evidence) == 0 || !strings.Contains(rep.Answer, "[1]") {
		t.Fatalf("offline answer: %+v", rep)
	}
	if !strings.HasPrefix(rep.Evidence[0].File, "database/runbooks/backup_restore/page_001.md") {
		t.Errorf("evidence %+v", rep.Evidence[0])
	}
	_, status, err := run(t, "", "ask", "バックアップからの復旧手順は？")
	if err != nil || !strings.Contains(status, "(answered by extractive in ") || !strings.Contains(status, "claims supported by the evidence)") {
		t.Errorf("status line %q, %v: want the generator and the claim check", status, err)
	}
	text := mustRun(t, "ask", "ログファイルを削除する方法は？")
	for _, want := range []string{"## Answer\n⚠️ 承認・確認が必要", "## Evidence\n[1] database/", "## Unknowns"} {
		if !strings.Contains(text, want) {
			t.Errorf("rendered answer lacks %q:\n%s", want, text)
		}
	}
	lines := auditLines(t, filepath.Join(ws, "logs"))
	if len(lines) != 3 {
		t.Fatalf("%d audit lines, want 3", len(lines))
	}
	if !lines[2].Flags.DangerousOperation {
		t.Errorf("danger flag not logged: %+v", lines[2].Flags)
	}
}

func TestAskLLMThroughFakeOpenAI(t *testing.T) {
	fixture := indexedFixture(t)
	ws := workspace(t, fixture)
	fake := llmtest.OpenAI(t, fakeOpenAIReply)
	t.Setenv("OPENAI_API_KEY", "sk-test-0123456789")
	t.Setenv("OPENAI_API_BASE", fake.BaseURL())

	out := mustRun(t, "ask", "--json", "バックアップからの復旧手順は？")
	var rep assistant.Reply
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("ask --json: %v\n%s", err, out)
	}
	if n := fake.Calls(); n != 4 {
		t.Errorf("%d requests, want 4 (a 429 honoured, the balanced profile's facet planner, the answer, the claim re-check)", n)
	}
	if !strings.HasPrefix(rep.Generator, "llm") {
		t.Errorf("generator %q", rep.Generator)
	}
	if rep.Trace == nil || rep.Trace.Profile != "balanced" || rep.Trace.Planner != "llm" {
		t.Errorf("trace %+v, want the default balanced profile planned by the model", rep.Trace)
	}
	// The planner's, the answer's and the re-check's tokens.
	if rep.TokenUsage.PromptTokens != 1900 || rep.TokenUsage.CompletionTokens != 130 || rep.TokenUsage.TotalTokens != 2030 {
		t.Errorf("usage %+v", rep.TokenUsage)
	}
	// gpt-4o-mini: $0.15 / 1M prompt, $0.60 / 1M completion.
	if want := (1900*0.15 + 130*0.60) / 1e6; math.Abs(rep.CostUSD-want) > 1e-9 {
		t.Errorf("cost %v, want %v", rep.CostUSD, want)
	}
	if len(rep.RemovedCitations) != 1 || rep.RemovedCitations[0] != 9 || strings.Contains(rep.Answer, "[9]") {
		t.Errorf("citation [9] points at no evidence and must be removed: %v %q", rep.RemovedCitations, rep.Answer)
	}
	if len(rep.Unknowns) == 0 || !strings.Contains(strings.Join(rep.Unknowns, " "), "復旧にかかる正確な時間") {
		t.Errorf("unknowns %v", rep.Unknowns)
	}
	// Verification: the restore step is in the cited runbook; the sentence
	// that lost its bogus citation is in no evidence and moves to Unknowns.
	if v := rep.Verification; v == nil || len(v.Claims) != 2 || !v.Claims[0].Supported || v.Claims[1].Supported || v.Claims[1].CheckedBy != "llm" || v.Method != "lexical+llm" || v.SupportedRate != 0.5 {
		t.Errorf("verification %+v", rep.Verification)
	}
	if strings.Contains(rep.Answer, "外部の復旧業者") || !strings.Contains(strings.Join(rep.Unknowns, " "), "根拠文書で確認できない記述のため回答から除外: 外部の復旧業者に連絡する") {
		t.Errorf("unverified claim not moved: answer %q, unknowns %q", rep.Answer, rep.Unknowns)
	}
	// The evidence is fenced as data in the prompt.
	reqs := fake.Requests()
	if last := reqs[2]; !strings.Contains(last.User, "<evidence n=\"1\"") || last.Model != "gpt-4o-mini" {
		t.Errorf("request lacks fenced evidence or model: model %q, user message %.300s", last.Model, last.User)
	}
	// --verify lexical: the planner and the answer, no re-check call.
	before := fake.Calls()
	out = mustRun(t, "ask", "--json", "--verify", "lexical", "バックアップからの復旧手順は？")
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if fake.Calls() != before+2 || rep.Verification == nil || rep.Verification.Method != "lexical" {
		t.Errorf("--verify lexical made %d calls, verification %+v", fake.Calls()-before, rep.Verification)
	}
	// Insufficient evidence: the planner plans the search, but no answer
	// or re-check call is made.
	before = fake.Calls()
	out = mustRun(t, "ask", "--json", "社員食堂の今週のランチメニューを教えて")
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var planned, answered int
	for _, r := range fake.Requests()[before:] {
		if strings.Contains(r.System, "You decompose a question") {
			planned++
		} else {
			answered++
		}
	}
	if !rep.Flags.InsufficientEvidence || planned != 1 || answered != 0 {
		t.Errorf("refusal made %d planner and %d other LLM calls, want 1 and 0; flags %+v", planned, answered, rep.Flags)
	}
	lines := auditLines(t, filepath.Join(ws, "logs"))
	if len(lines) != 3 {
		t.Fatalf("%d audit lines, want 3", len(lines))
	}
	if tu := lines[0].TokenUsage; tu.PromptTokens != 1900 || tu.TotalTokens != 2030 || lines[0].CostUSD <= 0 {
		t.Errorf("audit line usage %+v cost %v", tu, lines[0].CostUSD)
	}
	// No secret reaches the log.
	raw, _ := os.ReadFile(filepath.Join(ws, "logs", filepath.Base(mustGlob(t, filepath.Join(ws, "logs", "*.jsonl")))))
	if strings.Contains(string(raw), "sk-test") {
		t.Error("API key written to the audit log")
	}
}

func TestAskLLMNeedsKey(t *testing.T) {
	fixture := indexedFixture(t)
	workspace(t, fixture)
	_, _, err := run(t, "", "ask", "--generator", "llm", "バックアップからの復旧手順は？")
	if err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("missing key error: %v", err)
	}
}

func mustGlob(t *testing.T, pattern string) string {
	t.Helper()
	m, _ := filepath.Glob(pattern)
	if len(m) == 0 {
		t.Fatalf("no file matches %s", pattern)
	}
	return m[0]
}

func TestAskAgentProfiles(t *testing.T) {
	fixture := indexedFixture(t)
	ws := workspace(t, fixture)
	q := "バックアップからの復旧手順と、ログの保管期間をそれぞれ教えて"
	for _, profile := range []string{"fast", "balanced", "deep"} {
		out := mustRun(t, "ask", "--json", "--profile", profile, q)
		var rep assistant.Reply
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: %v", profile, err)
		}
		if len(rep.SearchResults) == 0 || len(rep.Evidence) == 0 {
			t.Fatalf("%s: no evidence: %+v", profile, rep)
		}
		if profile == "fast" {
			continue
		}
		// The plain search's hits lead; the facets' evidence is added
		// after them (internal/agent), so coverage is read from the trace.
		if rep.Trace == nil || len(rep.Trace.Facets) != 2 {
			t.Fatalf("%s: trace %+v", profile, rep.Trace)
		}
		for _, f := range rep.Trace.Facets {
			if !f.Covered {
				t.Errorf("%s: facet %q should be covered", profile, f.Text)
			}
		}
	}
	if n := len(auditLines(t, filepath.Join(ws, "logs"))); n != 3 {
		t.Errorf("%d audit lines, want 3", n)
	}
	if _, _, err := run(t, "", "ask", "--profile", "turbo", q); err == nil || !strings.Contains(err.Error(), "fast, balanced or deep") {
		t.Errorf("bad profile: %v", err)
	}
}

// TestBatchLLMRefusalIsTN: through openai-go against a fake server, the
// model declines a question the documents do not answer although the
// retrieval found VPN pages. Claim verification keeps the refusal, so the
// row without a reference scores TN, not FP with an empty answer.
func TestBatchLLMRefusalIsTN(t *testing.T) {
	workspace(t, indexedFixture(t))
	const refusal = "提供された資料には、公衆無線LANでVPNを接続するときの月額料金についての記載がありません。"
	fake := llmtest.OpenAI(t, func(r llmtest.Request) llmtest.Reply {
		if rf, _ := r.Body["response_format"].(map[string]any); rf["type"] == "json_object" {
			// A re-check of the refusal would call it unsupported.
			return llmtest.Reply{Text: `{"claims":[{"n":1,"supported":false,"evidence":[]}]}`, Model: "gpt-4o-mini"}
		}
		return llmtest.Reply{Text: refusal, Model: "gpt-4o-mini"}
	})
	t.Setenv("OPENAI_API_KEY", "sk-test-0123456789")
	t.Setenv("OPENAI_API_BASE", fake.BaseURL())
	os.WriteFile("in.csv", []byte("Question,Ground Truth,Reference Document,Page,Checklist\n公衆無線LANでVPNを接続するときの月額料金は？,,,,\n"), 0o644)
	out := mustRun(t, "ask", "in.csv", "--no-optimize", "--logs", "logs")
	h, rows := readCSV(t, field(t, out, "results"))
	r := rows[0]
	if got := r[col(t, h, "RAG Answer")]; got != refusal {
		t.Errorf("RAG Answer %q; want the refusal kept", got)
	}
	if tn, fp := r[col(t, h, "Checklist TN")], r[col(t, h, "Checklist FP")]; tn != "1" || fp != "0" {
		t.Errorf("Checklist TN %s, FP %s; want 1, 0 (reason: %s)", tn, fp, r[col(t, h, "Evaluation Reason")])
	}
}

// TestAuditLogEvidenceScore: the audit line of a refused question records
// the evidence score the gate compared with the threshold, below it, and
// each result's own evidence score; the relative "score" alone (1 for the
// best hit of every search) made a refusal look fully supported.
func TestAuditLogEvidenceScore(t *testing.T) {
	fixture := indexedFixture(t)
	ws := workspace(t, fixture)
	mustRun(t, "ask", "量子コンピュータの冷却装置の保守手順を教えてください")
	mustRun(t, "ask", "アカウントロックアウトのしきい値は何回ですか？")
	lines := auditLines(t, filepath.Join(ws, "logs"))
	if len(lines) != 2 {
		t.Fatalf("%d audit lines, want 2", len(lines))
	}
	refused, answered := lines[0], lines[1]
	if !refused.Flags.InsufficientEvidence || len(refused.SearchResults) == 0 {
		t.Fatalf("the first question was not refused after a search: %+v", refused)
	}
	if refused.EvidenceThreshold != config.DefaultEvidenceThreshold || refused.EvidenceScore >= refused.EvidenceThreshold {
		t.Errorf("refused line: evidence_score %v, threshold %v; want a score below the default threshold %v",
			refused.EvidenceScore, refused.EvidenceThreshold, config.DefaultEvidenceThreshold)
	}
	if answered.Flags.InsufficientEvidence || answered.EvidenceScore < answered.EvidenceThreshold || answered.SearchResults[0].EvidenceScore == 0 {
		t.Errorf("answered line: evidence_score %v (threshold %v), first result's %v",
			answered.EvidenceScore, answered.EvidenceThreshold, answered.SearchResults[0].EvidenceScore)
	}
}
