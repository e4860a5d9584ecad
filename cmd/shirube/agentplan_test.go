package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/llmtest"
)

// TestAskDeepLLMPlanner: with an LLM configured, `--profile deep` asks the
// model for the facets (typed intent / target / artifact / time) through
// the real SDK, searches them, and reports them in the trace of
// `ask --json` and the audit log; a planner call that fails falls back to
// the offline planner and the question is still answered.
func TestAskDeepLLMPlanner(t *testing.T) {
	fixture := indexedFixture(t)
	q := "復旧のやり方と、ログをいつまで残すかを教えて"
	cases := []struct {
		name    string
		planner llmtest.Reply
		want    string // planner named in the trace
	}{
		{"planner answers", llmtest.Reply{Text: `{"route":"multi_hop","facets":[{"type":"intent","text":"バックアップからの復旧手順"},{"type":"time","text":"ログの保管期間"}]}`}, "llm"},
		{"planner fails", llmtest.Reply{Status: 503, RetryAfter: "0"}, "offline"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspace(t, fixture)
			fake := llmtest.OpenAI(t, func(r llmtest.Request) llmtest.Reply {
				switch {
				case strings.Contains(r.System, "You decompose a question"):
					return tc.planner
				case r.Body["response_format"] != nil:
					return llmtest.Reply{Text: `{"claims":[{"n":1,"supported":true,"evidence":[1]}]}`}
				}
				return llmtest.Reply{Text: "ハッシュ値を照合してから復元します [1]。"}
			})
			t.Setenv("OPENAI_API_KEY", "sk-test-0123456789")
			t.Setenv("OPENAI_API_BASE", fake.BaseURL())
			out := mustRun(t, "ask", "--json", "--profile", "deep", q)
			var rep assistant.Reply
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("ask --json: %v\n%s", err, out)
			}
			planned := 0
			for _, r := range fake.Requests() {
				if strings.Contains(r.System, "You decompose a question") {
					planned++
					if r.User != q {
						t.Errorf("planner asked %q", r.User)
					}
				}
			}
			if planned == 0 {
				t.Fatalf("no planner call among %d requests", fake.Calls())
			}
			// Every successful call's tokens count (the fake reports 100
			// prompt tokens a call); the failing planner's do not.
			paid := fake.Calls()
			if tc.want == "offline" {
				paid -= planned
			}
			if rep.TokenUsage.PromptTokens != 100*paid {
				t.Errorf("prompt tokens %d, want %d (%d paid calls)", rep.TokenUsage.PromptTokens, 100*paid, paid)
			}
			tr := rep.Trace
			if tr == nil || tr.Profile != "deep" || tr.Planner != tc.want || len(tr.Rounds) == 0 || tr.Searches == 0 || tr.SearchBudget == 0 || tr.StopReason == "" {
				t.Fatalf("trace %+v", tr)
			}
			if !strings.HasPrefix(rep.Generator, "llm") || rep.Answer == "" {
				t.Errorf("answer %q by %q", rep.Answer, rep.Generator)
			}
			if tc.want == "llm" {
				var facets []string
				for _, f := range tr.Facets {
					facets = append(facets, f.Type+":"+f.Text)
				}
				if !slices.Equal(facets, []string{"intent:バックアップからの復旧手順", "time:ログの保管期間"}) || tr.Route != "multi_hop" {
					t.Errorf("facets %v, route %s", facets, tr.Route)
				}
				if !slices.Contains(tr.Rounds[0].Searches, "ログの保管期間") {
					t.Errorf("the planner's facet was not searched: %+v", tr.Rounds)
				}
			} else if tr.PlannerError == "" {
				t.Errorf("fallback without the planner's error: %+v", tr)
			}
			lines := auditLines(t, filepath.Join(ws, "logs"))
			if len(lines) != 1 {
				t.Fatalf("%d audit lines", len(lines))
			}
			var logged assistant.Trace
			if err := json.Unmarshal(lines[0].Trace, &logged); err != nil || logged.Planner != tc.want || logged.StopReason != tr.StopReason {
				t.Errorf("audit trace %s: %v", lines[0].Trace, err)
			}
		})
	}
}

// TestScopeFlag: --scope limits search and ask to a folder or a document;
// without it the default ask runs the balanced profile (a trace naming
// it) and --profile plain is one hybrid search (no trace), both finding
// the runbook.
func TestScopeFlag(t *testing.T) {
	fixture := indexedFixture(t)
	workspace(t, fixture)
	q := "バックアップからの復旧手順は？"
	var sr struct {
		Results []struct {
			File string `json:"file"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "search", "--json", "--k", "8", "--scope", "runbooks/log_retention.md", q)), &sr); err != nil {
		t.Fatal(err)
	}
	if len(sr.Results) == 0 {
		t.Fatal("no results in scope")
	}
	for _, r := range sr.Results {
		if !strings.Contains(r.File, "log_retention") {
			t.Errorf("search --scope: %s", r.File)
		}
	}
	for _, args := range [][]string{{"ask", "--json", "--scope", "runbooks/log_retention.md", q}, {"ask", "--json", "--profile", "balanced", "--scope", "runbooks/log_retention.md", q}} {
		var rep assistant.Reply
		if err := json.Unmarshal([]byte(mustRun(t, args...)), &rep); err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.SearchResults {
			if !strings.Contains(r.File, "log_retention") {
				t.Errorf("%v: %s", args, r.File)
			}
		}
	}
	for _, c := range []struct {
		args    []string
		profile string // "" = no trace
	}{
		{[]string{"ask", "--json", q}, "balanced"},
		{[]string{"ask", "--json", "--profile", "plain", q}, ""},
	} {
		var rep assistant.Reply
		if err := json.Unmarshal([]byte(mustRun(t, c.args...)), &rep); err != nil {
			t.Fatal(err)
		}
		switch {
		case c.profile == "" && rep.Trace != nil:
			t.Errorf("%v: trace %+v, want none (one hybrid search)", c.args, rep.Trace)
		case c.profile != "" && (rep.Trace == nil || rep.Trace.Profile != c.profile):
			t.Errorf("%v: trace %+v, want profile %s", c.args, rep.Trace, c.profile)
		}
		if len(rep.SearchResults) == 0 || !strings.Contains(rep.SearchResults[0].File, "backup_restore") {
			t.Errorf("%v: results %+v", c.args, rep.SearchResults)
		}
	}
}

// TestAgentRecencyOfIdenticalDocuments: two documents with the same text,
// one last changed in 2020 and one in 2024. With an agent profile the
// newer ranks first (seed 003's updatedAt signal), though the older one's
// name sorts first.
func TestAgentRecencyOfIdenticalDocuments(t *testing.T) {
	offlineEnv(t)
	t.Chdir(t.TempDir())
	const text = "# VPN接続の規程\n\nVPNの接続は多要素認証を必須とする。接続記録は一年間保管する。\n"
	os.MkdirAll("data", 0o755)
	for name, year := range map[string]int{"a_vpn_rule.md": 2020, "b_vpn_rule.md": 2024} {
		p := filepath.Join("data", name)
		os.WriteFile(p, []byte(text), 0o644)
		when := time.Date(year, 4, 1, 0, 0, 0, 0, time.UTC)
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}
	mustRun(t, "index")
	out := mustRun(t, "ask", "--profile", "balanced", "--json", "VPNの接続に必要な認証は？")
	var rep struct {
		Evidence []struct {
			File string `json:"file"`
		} `json:"evidence"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("ask --json: %v\n%s", err, out)
	}
	if len(rep.Evidence) == 0 || !strings.Contains(rep.Evidence[0].File, "b_vpn_rule") {
		t.Errorf("evidence %+v; want the 2024 document first", rep.Evidence)
	}
}
