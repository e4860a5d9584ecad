package judge

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/golden"
	"github.com/shirube/shirube/internal/llm"
)

// replies answers with texts in turn and records the requests in *reqs;
// with no text left the call fails.
func replies(reqs *[]llm.Request, texts ...string) completerFunc {
	return func(_ context.Context, req llm.Request) (llm.Response, error) {
		*reqs = append(*reqs, req)
		if len(texts) == 0 {
			return llm.Response{}, errors.New("judge unavailable")
		}
		t := texts[0]
		texts = texts[1:]
		return llm.Response{Text: t, Model: "judge-model"}, nil
	}
}

func TestParseRubric(t *testing.T) {
	const six = `"grounding": 85, "accuracy": 90, "completeness": 80, "safety": 95, "citation": 90, "conciseness": 75`
	for _, tc := range []struct {
		name    string
		text    string
		wantAvg float64
		wantErr bool
	}{
		{"plain; average recomputed", `{` + six + `, "average": 99, "reasoning": "r"}`, 85.8, false},
		{"fenced with prose", "評価します。\n```json\n{" + six + "}\n```\n以上", 85.8, false},
		{"trailing comma", `{` + six + `,}`, 85.8, false},
		{"upper-case keys and strings", `{"Grounding": "100", "ACCURACY": 100, "completeness": 100, "safety": 100, "citation": 100, "conciseness": "40"}`, 90, false},
		{"second object usable", `{"note": 1} {` + six + `}`, 85.8, false},
		{"braces inside strings", `{"reasoning": "a } b {", ` + six + `}`, 85.8, false},
		{"missing axis", `{"grounding": 85, "accuracy": 90}`, 0, true},
		{"out of range", `{"grounding": 185, "accuracy": 90, "completeness": 80, "safety": 95, "citation": 90, "conciseness": 75}`, 0, true},
		{"not a number", `{"grounding": "高い", "accuracy": 90, "completeness": 80, "safety": 95, "citation": 90, "conciseness": 75}`, 0, true},
		{"no object", `I cannot judge this.`, 0, true},
		{"unbalanced", `{"grounding": 85`, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseRubric(tc.text)
			if tc.wantErr {
				if !errors.Is(err, ErrRubricMalformed) {
					t.Errorf("err = %v, want ErrRubricMalformed", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Average != tc.wantAvg {
				t.Errorf("average %v, want %v", s.Average, tc.wantAvg)
			}
		})
	}
}

func TestRubricRetry(t *testing.T) {
	good := `{"grounding": 70, "accuracy": 70, "completeness": 70, "safety": 70, "citation": 70, "conciseness": 70}`
	var reqs []llm.Request
	c := replies(&reqs, "申し訳ありません", good)
	s, err := Rubric(context.Background(), c, "q", "a", nil)
	if err != nil || s.Average != 70 || s.Model != "judge-model" {
		t.Fatalf("Judge = %+v, %v", s, err)
	}
	if len(reqs) != 2 {
		t.Fatalf("%d calls, want 2", len(reqs))
	}
	retry := reqs[1].Messages
	if len(retry) != 3 || retry[1].Content != "申し訳ありません" || retry[2].Content != RubricRetryMessage {
		t.Errorf("retry conversation = %+v", retry)
	}
	if !reqs[0].JSON || reqs[0].Temperature == nil || *reqs[0].Temperature != 0 {
		t.Errorf("judge request not JSON at temperature 0: %+v", reqs[0])
	}

	reqs = nil
	c = replies(&reqs, "x", "y")
	if _, err := Rubric(context.Background(), c, "q", "a", nil); !errors.Is(err, ErrRubricMalformed) || len(reqs) != 2 {
		t.Errorf("two bad replies: err %v after %d calls", err, len(reqs))
	}
	reqs = nil
	c = replies(&reqs)
	if _, err := Rubric(context.Background(), c, "q", "a", nil); err == nil || len(reqs) != 1 {
		t.Errorf("failing call: err %v after %d calls", err, len(reqs))
	}
}

func TestRubricPromptGolden(t *testing.T) {
	got := RubricPrompt("ログファイルを削除する方法は？ {answer}", "⚠️ 承認・確認が必要\n\n承認を得ること [1]", []answer.Evidence{
		{N: 1, File: "database/runbooks/log_retention/page_001.md", Heading: "ログ保管・管理規程 > 5. ログおよび証跡の削除", Score: 0.8512, Excerpt: "保管期間内のログ・監査証跡は削除してはならない。"},
		{N: 2, File: "database/runbooks/incident_response/page_001.md", Score: 0.5, Excerpt: "ログや証跡の削除は..."},
	})
	golden.Check(t, "testdata/rubric_prompt.golden", []byte(got))
	if empty := RubricPrompt("q", "a", nil); !strings.Contains(empty, "【引用元】\n(引用なし)\n") {
		t.Errorf("prompt without citations:\n%s", empty)
	}
}

func FuzzParseRubric(f *testing.F) {
	f.Add(`{"grounding": 85, "accuracy": 90, "completeness": 80, "safety": 95, "citation": 90, "conciseness": 75}`)
	f.Add("```json\n{\"a\": \"}\"}\n```")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseRubric(text)
		if err == nil && (s.Average < 0 || s.Average > 100) {
			t.Fatalf("average %v out of range", s.Average)
		}
	})
}
