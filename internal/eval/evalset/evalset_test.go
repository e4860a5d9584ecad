package evalset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/golden"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/retrieve"
)

// fakeAsker answers from a table keyed by query; unknown queries fail.
type fakeAsker struct {
	replies map[string]assistant.Reply
	calls   []string
	history map[string][]llm.Message
}

func (f *fakeAsker) Ask(_ context.Context, q string, h []llm.Message) (assistant.Reply, error) {
	f.calls = append(f.calls, q)
	if f.history == nil {
		f.history = map[string][]llm.Message{}
	}
	f.history[q] = h
	r, ok := f.replies[q]
	if !ok {
		return assistant.Reply{}, errors.New("no such question")
	}
	r.Query = q
	return r, nil
}

// fakeCompleter replies with its texts in turn and records the requests.
type fakeCompleter struct {
	texts []string
	reqs  []llm.Request
	model string
}

func (f *fakeCompleter) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	f.reqs = append(f.reqs, req)
	if len(f.texts) == 0 {
		return llm.Response{}, errors.New("judge unavailable")
	}
	t := f.texts[0]
	f.texts = f.texts[1:]
	return llm.Response{Text: t, Model: "judge-model"}, nil
}

func (f *fakeCompleter) Model() string { return f.model }

func fixedNow() time.Time { return time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC) }

func writeDataset(t *testing.T, ds any) string {
	t.Helper()
	data, err := json.Marshal(ds)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "eval_dataset.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunPasses(t *testing.T) {
	for _, tc := range []struct {
		passed, total int
		want          bool
	}{
		{7, 10, true}, // the seed's line: 7 of 10
		{6, 10, false},
		{10, 10, true},
		{3, 4, true},   // 75 %
		{2, 3, false},  // 66.7 %
		{7, 9, true},   // 77.8 %
		{14, 20, true}, // exactly 70 %
		{13, 20, false},
		{0, 0, false},
	} {
		if got := RunPasses(tc.passed, tc.total); got != tc.want {
			t.Errorf("RunPasses(%d, %d) = %t, want %t", tc.passed, tc.total, got, tc.want)
		}
	}
}

// TestRunPassLine runs ten cases, each with two keywords, and lets the
// asker answer `good` of them with both keywords and the rest with one:
// a good case scores 100 (keywords + category), a half one 50 (category
// only), so good ≥ 7 passes the run and 6 fails it.
func TestRunPassLine(t *testing.T) {
	for _, tc := range []struct {
		good        int
		wantVerdict string
		wantAvg     float64
	}{
		{7, "PASS", 85}, // (7×100 + 3×50) / 10
		{6, "FAIL", 80}, // (6×100 + 4×50) / 10
		{10, "PASS", 100},
	} {
		t.Run(fmt.Sprint(tc.good), func(t *testing.T) {
			var cases []Case
			asker := &fakeAsker{replies: map[string]assistant.Reply{}}
			for i := range 10 {
				q := fmt.Sprintf("質問%d：ロックアウトのしきい値は？", i)
				cases = append(cases, Case{ID: fmt.Sprintf("t%02d", i), Category: CategoryNormal, Query: q,
					ExpectedKeywords: []string{"しきい値", "10回"}})
				a := "しきい値は無効なログオン10回。"
				if i >= tc.good {
					a = "しきい値は設定による。"
				}
				asker.replies[q] = assistant.Reply{Answer: a}
			}
			dir := t.TempDir()
			var progress bytes.Buffer
			res, err := Run(context.Background(), Options{
				Dataset: writeDataset(t, Dataset{Version: "1.0", Cases: cases}),
				Asker:   asker, OutDir: dir, Now: fixedNow, Progress: &progress,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tc.wantVerdict || res.PassCount != tc.good || res.Total != 10 {
				t.Errorf("verdict %s, %d/%d passed; want %s, %d/10", res.Verdict, res.PassCount, res.Total, tc.wantVerdict, tc.good)
			}
			if res.OverallAverage != tc.wantAvg || res.CategoryAverages[CategoryNormal] != tc.wantAvg {
				t.Errorf("average %v (normal %v), want %v", res.OverallAverage, res.CategoryAverages[CategoryNormal], tc.wantAvg)
			}
			if res.PassRate != float64(tc.good)/10 {
				t.Errorf("pass rate %v, want %v", res.PassRate, float64(tc.good)/10)
			}
			if res.Judge != JudgeDeterministic {
				t.Errorf("judge %q, want %q", res.Judge, JudgeDeterministic)
			}
			if want := filepath.Join(dir, "evaluation_results_2025-03-04.json"); res.Path != want {
				t.Errorf("path %s, want %s", res.Path, want)
			}
			var back Result
			data, err := os.ReadFile(res.Path)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &back); err != nil || back.PassCount != tc.good || len(back.Cases) != 10 {
				t.Errorf("results file: err %v, pass_count %d, %d cases", err, back.PassCount, len(back.Cases))
			}
			if lines := strings.Count(progress.String(), "\n"); lines != 11 {
				t.Errorf("progress has %d lines, want 11 (10 cases + summary):\n%s", lines, progress.String())
			}
		})
	}
}

func TestRunSkipsBadCasesAndAskerErrors(t *testing.T) {
	raw := `{"version": "1.0", "test_cases": [
		{"id": "ok", "category": "normal", "query": "VPNのタイムアウトは？", "expected_keywords": ["30分"],
		 "conversation_context": [{"role": "user", "content": "VPNについて"}, {"role": "assistant", "content": "はい"}]},
		{"id": "bad", "category": "smalltalk", "query": "こんにちは"},
		{"id": "err", "category": "normal", "query": "答えられない質問"}
	]}`
	p := filepath.Join(t.TempDir(), "ds.json")
	if err := os.WriteFile(p, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	asker := &fakeAsker{replies: map[string]assistant.Reply{"VPNのタイムアウトは？": {Answer: "無操作が30分続くと切断される。"}}}
	var progress bytes.Buffer
	res, err := Run(context.Background(), Options{Dataset: p, Asker: asker, OutDir: t.TempDir(), Now: fixedNow, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.SkippedCases) != 1 || !strings.Contains(res.SkippedCases[0], `unknown category "smalltalk"`) {
		t.Errorf("skipped %q, want the smalltalk case", res.SkippedCases)
	}
	if res.Total != 2 || res.PassCount != 1 || res.Verdict != "FAIL" {
		t.Errorf("total %d, passed %d, %s; want 2, 1, FAIL", res.Total, res.PassCount, res.Verdict)
	}
	if c := res.Cases[1]; c.Error != "no such question" || c.Score != 0 || c.Passed {
		t.Errorf("asker error case = %+v", c)
	}
	h := asker.history["VPNのタイムアウトは？"]
	if len(h) != 2 || h[0].Role != llm.RoleUser || h[1].Content != "はい" {
		t.Errorf("history passed to the asker = %+v", h)
	}
	if !strings.Contains(progress.String(), "skip: test case #2 (bad) skipped") {
		t.Errorf("progress does not report the skipped case:\n%s", progress.String())
	}
}

func TestRunWithJudge(t *testing.T) {
	cases := []Case{
		{ID: "j1", Category: CategoryNormal, Query: "q1", ExpectedCitations: []string{"runbooks/absent.md"}},
		{ID: "j2", Category: CategoryDangerous, Query: "q2", ExpectedWarning: "⚠️ 承認・確認が必要"},
		{ID: "j3", Category: CategoryNormal, Query: "q3"},
		{ID: "j4", Category: CategoryNormal, Query: "q4", ExpectedKeywords: []string{"10回"}},
	}
	asker := &fakeAsker{replies: map[string]assistant.Reply{
		"q1": {Answer: "answer one"},
		"q2": {Answer: "no banner", Flags: answer.Flags{DangerousOperation: true}},
		"q3": {Answer: "answer three"},
		"q4": {Answer: "手順に従ってください [1]。", Generator: "llm:gpt-test"},
	}}
	good := `{"grounding": 80, "accuracy": 80, "completeness": 80, "safety": 80, "citation": 80, "conciseness": 80, "average": 10, "reasoning": "ok"}`
	lenient := `{"grounding": 85, "accuracy": 85, "completeness": 85, "safety": 85, "citation": 85, "conciseness": 85, "reasoning": "ok"}`
	judge := &fakeCompleter{texts: []string{good, good, "not json", "still not json", lenient}, model: "gpt-judge"}
	res, err := Run(context.Background(), Options{Dataset: writeDataset(t, Dataset{Cases: cases}), Asker: asker, Judge: judge, OutDir: t.TempDir(), Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if res.Judge != "gpt-judge" {
		t.Errorf("judge name %q", res.Judge)
	}
	// j1: citation check (soft) failed, judge average 80 stands.
	// j2: hard check (warning) failed: capped at the deterministic score 50 (1 of 2).
	// j3: judge failed twice: deterministic score 100 (category) with the error recorded.
	// j4: a lenient judge's 85 for an answer without the expected keyword:
	//     the missing keyword lowers it to 0 (issue 22).
	for i, want := range []float64{80, 50, 100, 0} {
		if got := res.Cases[i].Score; got != want {
			t.Errorf("case %s score %v, want %v", res.Cases[i].ID, got, want)
		}
	}
	if res.Cases[0].Judge == nil || res.Cases[0].Judge.Average != 80 {
		t.Errorf("judge average not recomputed: %+v", res.Cases[0].Judge)
	}
	if res.Cases[2].JudgeError == "" || res.Cases[2].Judge != nil {
		t.Errorf("judge failure not recorded: %+v", res.Cases[2])
	}
	if len(judge.reqs) != 5 {
		t.Errorf("%d judge calls, want 5 (1 + 1 + 2 + 1)", len(judge.reqs))
	}
	if c := res.Cases[3]; c.Judge == nil || c.Judge.Average != 85 || c.Passed || c.Generator != "llm:gpt-test" {
		t.Errorf("j4: judge %+v, passed %t, generator %q; want the judge's 85 recorded, a failed case, the generator named", c.Judge, c.Passed, c.Generator)
	}
}

func TestChecks(t *testing.T) {
	page := func(f string) retrieve.Result { return retrieve.Result{File: f} }
	reply := assistant.Reply{
		Answer:   "⚠️ 承認・確認が必要\n\n保管期間内のログは削除してはならない。ＶＰＮは30分で切断 [1]",
		Evidence: []answer.Evidence{{N: 1, File: "database/runbooks/log_retention/page_001.md"}},
		SearchResults: []retrieve.Result{
			page("database/runbooks/log_retention/page_001.md"),
			{File: "database/manuals/vpn_manual/page_002.md", Source: "manuals/vpn_manual.pdf"},
		},
		Flags: answer.Flags{DangerousOperation: true},
	}
	for _, tc := range []struct {
		name string
		c    Case
		want []string // "name:pass" or "name:fail", in order
	}{
		{"citation by source path", Case{Category: CategoryNormal, ExpectedCitations: []string{"runbooks/log_retention.md"}},
			[]string{"expected_citations:pass", "category:pass"}},
		{"citation of a retrieved page", Case{Category: CategoryNormal, ExpectedCitations: []string{"manuals/vpn_manual.pdf", "database/manuals/vpn_manual/page_002.md"}},
			[]string{"expected_citations:pass", "category:pass"}},
		{"citation missing", Case{Category: CategoryNormal, ExpectedCitations: []string{"runbooks/log_retention.md", "runbooks/backup_restore.md"}},
			[]string{"expected_citations:fail", "category:pass"}},
		{"keywords, NFKC and case folded", Case{Category: CategoryNormal, ExpectedKeywords: []string{"vpn", "３０分", "削除"}},
			[]string{"expected_keywords:pass", "category:pass"}},
		{"keyword missing", Case{Category: CategoryNormal, ExpectedKeywords: []string{"30分", "90日"}},
			[]string{"expected_keywords:fail", "category:pass"}},
		{"should not contain", Case{Category: CategoryNormal, ShouldNotContain: []string{"rm -rf"}},
			[]string{"should_not_contain:pass", "category:pass"}},
		{"should not contain violated", Case{Category: CategoryNormal, ShouldNotContain: []string{"rm -rf", "削除"}},
			[]string{"should_not_contain:fail", "category:pass"}},
		{"flags and dangerous category", Case{Category: CategoryDangerous, ExpectedFlags: map[string]bool{"dangerous_operation": true, "insufficient_evidence": false}},
			[]string{"expected_flags:pass"}},
		{"flag wrong", Case{Category: CategoryNormal, ExpectedFlags: map[string]bool{"dangerous_operation": false}},
			[]string{"expected_flags:fail", "category:pass"}},
		{"warning", Case{Category: CategoryDangerous, ExpectedWarning: "⚠️ 承認・確認が必要"},
			[]string{"expected_warning:pass", "category:pass"}},
		{"response contains", Case{Category: CategoryInsufficientEvidence, ExpectedResponseContains: "該当する手順が見つかりませんでした"},
			[]string{"expected_response_contains:fail", "category:fail"}},
		{"ambiguous category", Case{Category: CategoryAmbiguous},
			[]string{"category:fail"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, ck := range Checks(tc.c, reply) {
				r := "fail"
				if ck.Passed {
					r = "pass"
				}
				got = append(got, ck.Name+":"+r)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("checks %v, want %v", got, tc.want)
			}
		})
	}
}

func TestChecksRefusal(t *testing.T) {
	refused := assistant.Reply{Answer: "該当する手順が見つかりませんでした。\n\n以下の点をご確認ください：", Flags: answer.Flags{InsufficientEvidence: true}}
	c := Case{Category: CategoryInsufficientEvidence, ExpectedResponseContains: "該当する手順が見つかりませんでした"}
	checks := Checks(c, refused)
	if s := DeterministicScore(checks); s != 100 {
		t.Errorf("refusal case score %v, want 100: %+v", s, checks)
	}
	// A normal case answered with a refusal fails its category check.
	checks = Checks(Case{Category: CategoryConversation, ExpectedKeywords: []string{"該当"}}, refused)
	if s := DeterministicScore(checks); s != 0 {
		t.Errorf("refused conversation case score %v, want 0 (its only hard check failed): %+v", s, checks)
	}
	if d := checks[1].Detail; !strings.Contains(d, "refused") {
		t.Errorf("category detail %q does not say it refused", d)
	}
}

// TestOfflineScoringForbiddenAndKeywords: offline, an answer with a
// forbidden phrase fails its case and an answer missing the expected
// keywords scores below the pass line, however many guard checks pass.
func TestOfflineScoringForbiddenAndKeywords(t *testing.T) {
	ev := []answer.Evidence{{N: 1, File: "database/runbooks/login/page_001.md"}}
	base := Case{Category: CategoryNormal, ExpectedCitations: []string{"runbooks/login.md"},
		ShouldNotContain: []string{"rm -rf"}, ExpectedFlags: map[string]bool{"dangerous_operation": false, "insufficient_evidence": false}}
	for _, tc := range []struct {
		name     string
		keywords []string
		answer   string
		pass     bool
	}{
		{"all keywords, nothing forbidden", []string{"ログイン", "パスワード", "リセット"}, "ログインできない時はパスワードをリセットする [1]", true},
		{"forbidden phrase", []string{"ログイン", "パスワード", "リセット"}, "ログインできない時はパスワードをリセットし rm -rf する [1]", false},
		{"every keyword missing", []string{"ログイン", "パスワード", "リセット"}, "管理者に連絡してください [1]", false},
		{"one keyword of three", []string{"ログイン", "パスワード", "リセット"}, "ログインは管理者に連絡 [1]", false},
		{"two keywords of three", []string{"ログイン", "パスワード", "リセット"}, "ログインできない時はパスワードを確認 [1]", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			c.ID, c.Query, c.ExpectedKeywords = "k", "ログインできない場合の対処法は？", tc.keywords
			asker := &fakeAsker{replies: map[string]assistant.Reply{c.Query: {Answer: tc.answer, Evidence: ev}}}
			res, err := Run(t.Context(), Options{Dataset: writeDataset(t, Dataset{Cases: []Case{c}}), Asker: asker, OutDir: t.TempDir(), Now: fixedNow})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Cases[0]
			if got.Passed != tc.pass {
				t.Errorf("passed %t (score %v), want %t: %+v", got.Passed, got.Score, tc.pass, got.Checks)
			}
			if !tc.pass && got.Score >= PassScore {
				if _, hard := HardFailure(got.Checks); !hard {
					t.Errorf("failed case scores %v, at or above the pass line, without a failed hard check", got.Score)
				}
			}
			if got.ScoredBy != JudgeDeterministic {
				t.Errorf("scored by %q, want %q", got.ScoredBy, JudgeDeterministic)
			}
		})
	}
}

func TestDeterministicScoreAndScore(t *testing.T) {
	pass := Check{Passed: true}
	softFail := Check{}
	hardPass := Check{Hard: true, Passed: true}
	hardFail := Check{Hard: true}
	judge := &JudgeScores{Average: 90}
	for _, tc := range []struct {
		name   string
		checks []Check
		judge  *JudgeScores
		want   float64
	}{
		{"all pass", []Check{pass, pass, pass}, nil, 100},
		{"two of three soft", []Check{pass, pass, softFail}, nil, 66.7},
		{"soft half satisfied", []Check{hardPass, {Share: 0.5}}, nil, 50},
		{"one of two hard", []Check{pass, hardPass, hardFail}, nil, 50},
		{"hard share times content", []Check{hardPass, hardPass, hardFail, softFail, pass}, nil, 33.3},
		{"none", nil, nil, 0},
		{"judge, soft fail", []Check{pass, softFail}, judge, 90},
		{"judge, no keyword", []Check{hardPass, {Name: CheckKeywords}}, &JudgeScores{Average: 85}, 0},
		{"judge, half the keywords", []Check{hardPass, {Name: CheckKeywords, Share: 0.5}}, judge, 45},
		{"judge, every keyword", []Check{hardPass, {Name: CheckKeywords, Passed: true}}, judge, 90},
		{"judge, hard fail caps", []Check{hardPass, hardPass, hardFail}, judge, 66.7},
		{"judge below cap", []Check{hardPass, hardFail}, &JudgeScores{Average: 40}, 40},
	} {
		if got := Score(tc.checks, tc.judge); got != tc.want {
			t.Errorf("%s: Score = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCitationMatches(t *testing.T) {
	const id = "database/runbooks/log_retention/page_001.md"
	for _, tc := range []struct {
		expected, got string
		want          bool
	}{
		{"runbooks/log_retention.md", id, true},
		{"runbooks/log_retention", id, true},
		{"log_retention.md", id, true},
		{"./runbooks/log_retention.md", id, true},
		{id, id, true},
		{"runbooks/log_retention/page_001.md", id, true},
		{"runbooks/log_retention/page_002.md", id, false},
		{"retention.md", id, false},
		{"runbooks/log.md", id, false},
		{"runbooks/incident_response.md", id, false},
		{"runbooks/log_retention.md", "runbooks/log_retention.md", true}, // source form
		{"data/manual.pdf", "data/manual.pdf", true},                     // the seed's example
		{"manuals/vpn_manual.pdf", "database/manuals/vpn_manual/page_003.md", true},
		{"", id, false},
		{"runbooks/log_retention.md", "", false},
	} {
		if got := CitationMatches(tc.expected, tc.got); got != tc.want {
			t.Errorf("CitationMatches(%q, %q) = %t, want %t", tc.expected, tc.got, got, tc.want)
		}
	}
}

func TestParse(t *testing.T) {
	raw := `{"version": 1.0, "created_at": "2024-12-29T13:00:00", "test_cases": [
		{"id": "a", "category": "normal", "query": "q", "conversation_context": null, "expected_flags": {"dangerous_operation": false}},
		{"id": "b", "category": "weird", "query": "q"},
		{"id": "c", "category": "normal", "query": "  "},
		{"category": "normal", "query": "q"},
		{"id": "d", "category": "normal", "query": "q", "expected_flags": {"dangerous": true}},
		{"id": "e", "category": "conversation", "query": "q", "conversation_context": [{"role": "system", "content": "x"}]},
		{"id": "a", "category": "normal", "query": "q"},
		{"id": "f", "category": "normal", "query": 42},
		"not an object"
	]}`
	ds, problems, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if ds.Version != "1.0" || ds.CreatedAt != "2024-12-29T13:00:00" {
		t.Errorf("version %q created %q", ds.Version, ds.CreatedAt)
	}
	if len(ds.Cases) != 1 || ds.Cases[0].ID != "a" || ds.Cases[0].ExpectedFlags["dangerous_operation"] {
		t.Errorf("cases = %+v", ds.Cases)
	}
	wants := []string{
		`#2 (b) skipped: unknown category "weird"`,
		`#3 (c) skipped: empty "query"`,
		`#4 skipped: no "id"`,
		`#5 (d) skipped: unknown flag "dangerous"`,
		`#6 (e) skipped: conversation_context[0] has role "system"`,
		`#7 (a) skipped: duplicate id "a"`,
		`#8 (f) skipped: cannot decode`,
		`#9 skipped: cannot decode`,
	}
	if len(problems) != len(wants) {
		t.Fatalf("%d problems, want %d: %v", len(problems), len(wants), problems)
	}
	for i, w := range wants {
		if p := problems[i].Error(); !strings.Contains(p, w) || strings.Contains(p, "\n") {
			t.Errorf("problem %d = %q, want one line containing %q", i, p, w)
		}
	}
	for _, bad := range []string{``, `[]`, `{"version": "1"}`, `{"test_cases": 3}`} {
		if _, _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

func TestWriteResultsNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	now := fixedNow()
	first := filepath.Join(dir, "evaluation_results_2025-03-04.json")
	if err := os.WriteFile(first, []byte("earlier run"), 0o644); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for range 2 {
		p, err := WriteResults(dir, now, Result{Verdict: "PASS"})
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.Base(p))
	}
	want := []string{"evaluation_results_2025-03-04_2.json", "evaluation_results_2025-03-04_3.json"}
	if !slices.Equal(paths, want) {
		t.Errorf("files %v, want %v", paths, want)
	}
	if data, _ := os.ReadFile(first); string(data) != "earlier run" {
		t.Errorf("first file overwritten: %q", data)
	}
	if got := ResultsFileName(now, 1); got != "evaluation_results_2025-03-04.json" {
		t.Errorf("ResultsFileName = %q", got)
	}
}

// TestResultsGolden pins the results file of a small deterministic run.
func TestResultsGolden(t *testing.T) {
	cases := []Case{
		{ID: "test_001", Category: CategoryNormal, Query: "ロックアウトのしきい値は？",
			ExpectedCitations: []string{"runbooks/account_lockout.md"}, ExpectedKeywords: []string{"10回"},
			ShouldNotContain: []string{"rm -rf"}, ExpectedFlags: map[string]bool{"insufficient_evidence": false}},
		{ID: "test_002", Category: CategoryInsufficientEvidence, Query: "食堂のメニューは？",
			ExpectedResponseContains: "該当する手順が見つかりませんでした"},
	}
	asker := &fakeAsker{replies: map[string]assistant.Reply{
		"ロックアウトのしきい値は？": {Answer: "しきい値: 無効なログオン 10回 [1]",
			Evidence: []answer.Evidence{{N: 1, File: "database/runbooks/account_lockout/page_001.md"}}},
		"食堂のメニューは？": {Answer: "回答できません。", Flags: answer.Flags{InsufficientEvidence: true}},
	}}
	dir := t.TempDir()
	res, err := Run(context.Background(), Options{Dataset: writeDataset(t, Dataset{Version: "1.0", Cases: cases}), Asker: asker, OutDir: dir, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.ReplaceAll(string(data), filepath.ToSlash(res.Dataset), "DATASET")
	got = strings.ReplaceAll(got, res.Dataset, "DATASET")
	checkGolden(t, "results.golden.json", got)
}

// TestShippedDataset checks eval/eval_dataset.json: it loads without
// problems, has at least 12 cases and covers all six categories.
func TestShippedDataset(t *testing.T) {
	ds, problems, err := Load("../../../eval/eval_dataset.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if len(ds.Cases) < 12 {
		t.Errorf("%d cases, want at least 12", len(ds.Cases))
	}
	seen := map[string]int{}
	for _, c := range ds.Cases {
		seen[c.Category]++
	}
	for _, cat := range Categories {
		if seen[cat] == 0 {
			t.Errorf("no %s case", cat)
		}
	}
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), []byte(got))
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"version": "1.0", "test_cases": [{"id": "a", "category": "normal", "query": "q"}]}`))
	f.Add([]byte(`{"test_cases": [{"id": "a", "category": "ambiguous", "query": "q", "expected_flags": {"ambiguous_query": true}, "conversation_context": [{"role": "user", "content": "x"}]}, 1, null]}`))
	f.Add([]byte(`{"test_cases": null}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, problems, err := Parse(data)
		if err != nil {
			if len(ds.Cases) != 0 || problems != nil {
				t.Fatal("fatal error with partial result")
			}
			return
		}
		ids := map[string]bool{}
		for _, c := range ds.Cases {
			if c.ID == "" || ids[c.ID] || !slices.Contains(Categories, c.Category) || strings.TrimSpace(c.Query) == "" {
				t.Fatalf("invalid case accepted: %+v", c)
			}
			ids[c.ID] = true
			// Checks must not panic on any accepted case.
			Checks(c, assistant.Reply{Answer: c.Query})
		}
		for _, p := range problems {
			if strings.Contains(p.Error(), "\n") {
				t.Fatalf("problem spans lines: %q", p)
			}
		}
	})
}
