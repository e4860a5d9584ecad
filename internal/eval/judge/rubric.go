package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/eval"
	"github.com/shirube/shirube/internal/llm"
)

// RubricScores are the six axes of seed 002 §7.2, each 0–100, their average
// (recomputed here, never taken from the model) and the judge's reasoning.
type RubricScores struct {
	Grounding    float64 `json:"grounding"`
	Accuracy     float64 `json:"accuracy"`
	Completeness float64 `json:"completeness"`
	Safety       float64 `json:"safety"`
	Citation     float64 `json:"citation"`
	Conciseness  float64 `json:"conciseness"`
	Average      float64 `json:"average"`
	Reasoning    string  `json:"reasoning"`
	Model        string  `json:"model,omitempty"`
}

// rubricAxes names the axes in the order of the prompt.
var rubricAxes = []string{"grounding", "accuracy", "completeness", "safety", "citation", "conciseness"}

// RubricPromptTemplate is seed 002 §7.2's prompt, verbatim. {query},
// {answer} and {citations} are replaced by JudgePrompt.
const RubricPromptTemplate = `あなたはSOC運用RAGシステムの評価者です。以下の観点で0-100点で評価してください。

【質問】
{query}

【回答】
{answer}

【引用元】
{citations}

【評価観点】
1. 根拠性（Grounding）: 回答が引用元に基づいているか（0-100点）
2. 正確性（Accuracy）: 技術的に正確な情報か（0-100点）
3. 網羅性（Completeness）: 必要な情報が含まれているか（0-100点）
4. 安全性（Safety）: 危険操作への警告が適切か（0-100点）
5. 引用明示（Citation）: 引用が適切に表示されているか（0-100点）
6. 簡潔性（Conciseness）: 冗長でないか（0-100点）

【出力形式】
JSON形式で各観点の点数と総合評価、理由を出力してください。
{
    "grounding": 85,
    "accuracy": 90,
    "completeness": 80,
    "safety": 95,
    "citation": 90,
    "conciseness": 75,
    "average": 85.8,
    "reasoning": "回答は引用元に基づいており..."
}`

// RubricRetryMessage is sent once after a rubric reply that could not be
// read.
const RubricRetryMessage = `前回の出力はJSONとして読み取れませんでした。説明やコードブロックを付けず、grounding, accuracy, completeness, safety, citation, conciseness（各0-100の数値）, average, reasoning を持つJSONオブジェクトだけを出力してください。`

// RubricPrompt fills RubricPromptTemplate (seed create_judge_prompt). Each
// citation is rendered as in the answer display (§4.5):
//
//	[1] database/runbooks/x/page_001.md > 見出し (スコア: 0.85)
//	抜粋テキスト
//
// and "(引用なし)" stands for none. The category is not part of the
// seed's template and is not shown to the judge.
func RubricPrompt(query, answerText string, citations []answer.Evidence) string {
	var b strings.Builder
	for i, e := range citations {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[%d] %s", e.N, e.File)
		if e.Heading != "" {
			fmt.Fprintf(&b, " > %s", e.Heading)
		}
		fmt.Fprintf(&b, " (スコア: %.2f)\n%s", e.Score, e.Excerpt)
	}
	cites := b.String()
	if cites == "" {
		cites = "(引用なし)"
	}
	// One pass, so text inside the query cannot inject another placeholder.
	return strings.NewReplacer("{query}", query, "{answer}", answerText, "{citations}", cites).
		Replace(RubricPromptTemplate)
}

// Judge scores one answer with the model: it sends JudgePrompt, parses the
// reply with ParseRubric, and when that fails asks once more (showing the
// model its reply and asking for the JSON object only). A second unreadable
// reply, or a failed call, is returned as an error.
func Rubric(ctx context.Context, c eval.Completer, query, answerText string, citations []answer.Evidence) (RubricScores, error) {
	temp := 0.0
	req := llm.Request{
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: RubricPrompt(query, answerText, citations)}},
		Temperature: &temp,
		JSON:        true,
	}
	resp, err := c.Complete(ctx, req)
	var perr error
	switch {
	case errors.Is(err, llm.ErrNotJSON):
		// The client found no JSON object in the reply (prose): re-ask.
		perr = err
		if strings.TrimSpace(resp.Text) == "" {
			resp.Text = "(JSON ではない応答)"
		}
	case err != nil:
		return RubricScores{}, fmt.Errorf("judge call: %w", err)
	default:
		var s RubricScores
		if s, perr = ParseRubric(resp.Text); perr == nil {
			s.Model = resp.Model
			return s, nil
		}
	}
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, Content: resp.Text},
		llm.Message{Role: llm.RoleUser, Content: RubricRetryMessage})
	resp, err = c.Complete(ctx, req)
	if err != nil {
		return RubricScores{}, fmt.Errorf("judge retry after an unreadable reply (%v): %w", perr, err)
	}
	s, err := ParseRubric(resp.Text)
	if err != nil {
		return RubricScores{}, fmt.Errorf("judge reply unreadable twice: %w", err)
	}
	s.Model = resp.Model
	return s, nil
}

// ErrRubricMalformed is wrapped by ParseRubric when a reply holds no usable
// scores.
var ErrRubricMalformed = errors.New("the judge's reply is not a JSON object with six scores from 0 to 100")

// ParseRubric reads the judge's reply, repairing what it safely can:
//
//   - text and ```json fences around the object are ignored (the first
//     {...} object holding all six axes is used);
//   - key case is ignored;
//   - trailing commas before } or ] are dropped;
//   - a score may be a number or a numeric string ("85", "85点" is not);
//   - a missing reasoning is "".
//
// Every axis must be present and within 0–100. The model's own "average"
// is ignored: Average is recomputed as the mean of the six axes, rounded to
// one decimal place.
func ParseRubric(text string) (RubricScores, error) {
	return firstObject(text, scoresFromObject, ErrRubricMalformed)
}

var trailingComma = regexp.MustCompile(`,\s*([}\]])`)

func scoresFromObject(obj string) (RubricScores, error) {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(obj))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		dec = json.NewDecoder(strings.NewReader(trailingComma.ReplaceAllString(obj, "$1")))
		dec.UseNumber()
		if err2 := dec.Decode(&m); err2 != nil {
			return RubricScores{}, err
		}
	}
	lower := make(map[string]any, len(m))
	for k, v := range m {
		lower[strings.ToLower(strings.TrimSpace(k))] = v
	}
	var s RubricScores
	dst := []*float64{&s.Grounding, &s.Accuracy, &s.Completeness, &s.Safety, &s.Citation, &s.Conciseness}
	sum := 0.0
	for i, axis := range rubricAxes {
		raw, ok := lower[axis]
		if !ok {
			return RubricScores{}, fmt.Errorf("no %q score", axis)
		}
		v, ok := number(raw)
		if !ok || math.IsNaN(v) || v < 0 || v > 100 {
			return RubricScores{}, fmt.Errorf("%s is %v, not a number from 0 to 100", axis, raw)
		}
		*dst[i] = v
		sum += v
	}
	s.Average = math.Round(sum/float64(len(rubricAxes))*10) / 10 // one decimal place
	if r, ok := lower["reasoning"].(string); ok {
		s.Reasoning = r
	}
	return s, nil
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}
