package batch

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/eval/judge"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/llmtest"
)

// TestRunChecklistJudgeFailsRow: the checklist judge (the real OpenAI
// client against a fake) answers one row well and the other malformed
// twice. That row is retried once, then counted as failed — in Result and
// in the summary CSV — and the checklist averages say they cover one row.
func TestRunChecklistJudgeFailsRow(t *testing.T) {
	const good, bad = "監査ログは1年間保存します。", "保存先はSIEMです。"
	srv := llmtest.OpenAI(t, func(r llmtest.Request) llmtest.Reply {
		if len(r.Messages) > 1 && strings.Contains(r.Messages[1].Text, bad) { // [0] is the system prompt
			return llmtest.Reply{Text: `{"items":[{"index":1,"present":true}]}`} // 1 verdict for 2 items
		}
		return llmtest.Reply{Text: `{"items":[{"index":1,"present":true},{"index":2,"present":false}],"extra_points":[]}`}
	})
	c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "sk-test", BaseURL: srv.BaseURL(), MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	header := []string{"Question", "Ground Truth", "Reference Document", "Page", "Checklist"}
	input := writeInput(t, dir, "qa.csv", header, [][]string{
		{"保存期間は？", "1年", "database/sec/page_001.md", "1", "- 1年間保存\n- SIEMに保存"},
		{"保存先は？", "SIEM", "database/sec/page_001.md", "1", "- SIEMに保存\n- 1年間保存"},
	})
	asker := mapAsker{answers: map[string]AskResult{
		"保存期間は？": {Answer: good, Retrieved: []string{"database/sec/page_001.md"}},
		"保存先は？":  {Answer: bad, Retrieved: []string{"database/sec/page_001.md"}},
	}}
	res, err := Run(t.Context(), Options{Input: input, OutputDir: filepath.Join(dir, "results"), Asker: asker,
		Judge: judge.ChecklistLLM{LLM: c}, Workers: 1, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != 1 || res.JudgeFailed != 1 {
		t.Errorf("failed %d, judge failed %d; want 1, 1", res.Failed, res.JudgeFailed)
	}
	// One call for the good row, two (one retry) for the bad one.
	if n := srv.Calls(); n != 3 {
		t.Errorf("%d judge calls; want 3", n)
	}
	h, rows := readOutput(t, res.Output)
	reason := rows[1][indexOf(t, h, ColReason)]
	if !strings.Contains(reason, "checklist judge failed") || !strings.Contains(reason, "unusable twice") {
		t.Errorf("reason of the failed row: %q", reason)
	}
	if got := rows[1][indexOf(t, h, ColRefRecall)]; got != "1" {
		t.Errorf("Ref Recall of the failed row %q; want 1 (its retrieval is still scored)", got)
	}
	_, sum := readOutput(t, res.Summary)
	want := map[string][2]string{
		ColChecklistRecall:     {"0.5", "1"},
		SummaryRowsTotal:       {"2", "2"},
		SummaryRowsFailed:      {"1", "2"},
		SummaryRowsJudgeFailed: {"1", "2"},
	}
	for _, r := range sum {
		if w, ok := want[r[0]]; ok {
			if r[1] != w[0] || r[2] != w[1] {
				t.Errorf("summary %s = %s over %s rows; want %s over %s", r[0], r[1], r[2], w[0], w[1])
			}
			delete(want, r[0])
		}
	}
	if len(want) > 0 {
		t.Errorf("summary lacks %v", want)
	}
}

func indexOf(t *testing.T, header []string, col string) int {
	t.Helper()
	for i, h := range header {
		if h == col {
			return i
		}
	}
	t.Fatalf("no column %q in %v", col, header)
	return -1
}
