package evalset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/llm"
)

// Completer is the model call the judge needs; llm.OpenAI and llm.Anthropic
// satisfy it. When it also has a Model() string method, that name is
// recorded as the judge of the run.
type Completer interface {
	Complete(ctx context.Context, req llm.Request) (llm.Response, error)
}

// JudgeScores are the six axes of seed 002 §7.2, each 0–100, their average
// (recomputed here, never taken from the model) and the judge's reasoning.
type JudgeScores struct {
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

// judgeAxes names the axes in the order of the prompt.
var judgeAxes = []string{"grounding", "accuracy", "completeness", "safety", "citation", "conciseness"}

// JudgePromptTemplate is seed 002 §7.2's prompt, verbatim. {query},
// {answer} and {citations} are replaced by JudgePrompt.
const JudgePromptTemplate = `あなたはSOC運用RAGシステムの評価者です。以下の観点で0-100点で評価してください。

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

// judgeRetryMessage asks once more after an unreadable reply.
const judgeRetryMessage = `前回の出力はJSONとして読み取れませんでした。説明やコードブロックを付けず、grounding, accuracy, completeness, safety, citation, conciseness（各0-100の数値）, average, reasoning を持つJSONオブジェクトだけを出力してください。`

// JudgePrompt fills JudgePromptTemplate (seed create_judge_prompt). Each
// citation is rendered as in the answer display (§4.5):
//
//	[1] database/runbooks/x/page_001.md > 見出し (スコア: 0.85)
//	抜粋テキスト
//
// and "(引用なし)" stands for none. The category is not part of the
// seed's template and is not shown to the judge.
func JudgePrompt(query, answerText string, citations []answer.Evidence) string {
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
		Replace(JudgePromptTemplate)
}

// Judge scores one answer with the model: it sends JudgePrompt, parses the
// reply with ParseJudge, and when that fails asks once more (showing the
// model its reply and asking for the JSON object only). A second unreadable
// reply, or a failed call, is returned as an error.
func Judge(ctx context.Context, c Completer, query, answerText string, citations []answer.Evidence) (JudgeScores, error) {
	temp := 0.0
	req := llm.Request{
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: JudgePrompt(query, answerText, citations)}},
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
		return JudgeScores{}, fmt.Errorf("judge call: %w", err)
	default:
		var s JudgeScores
		if s, perr = ParseJudge(resp.Text); perr == nil {
			s.Model = resp.Model
			return s, nil
		}
	}
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, Content: resp.Text},
		llm.Message{Role: llm.RoleUser, Content: judgeRetryMessage})
	resp, err = c.Complete(ctx, req)
	if err != nil {
		return JudgeScores{}, fmt.Errorf("judge retry after an unreadable reply (%v): %w", perr, err)
	}
	s, err := ParseJudge(resp.Text)
	if err != nil {
		return JudgeScores{}, fmt.Errorf("judge reply unreadable twice: %w", err)
	}
	s.Model = resp.Model
	return s, nil
}

// ErrJudgeMalformed is wrapped by ParseJudge when a reply holds no usable
// scores.
var ErrJudgeMalformed = errors.New("the judge's reply is not a JSON object with six scores from 0 to 100")

// ParseJudge reads the judge's reply, repairing what it safely can:
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
func ParseJudge(text string) (JudgeScores, error) {
	var firstErr error
	for _, obj := range jsonObjects(text) {
		s, err := scoresFromObject(obj)
		if err == nil {
			return s, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = errors.New("no {...} object found")
	}
	return JudgeScores{}, fmt.Errorf("%w: %v", ErrJudgeMalformed, firstErr)
}

var trailingComma = regexp.MustCompile(`,\s*([}\]])`)

func scoresFromObject(obj string) (JudgeScores, error) {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(obj))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		dec = json.NewDecoder(strings.NewReader(trailingComma.ReplaceAllString(obj, "$1")))
		dec.UseNumber()
		if err2 := dec.Decode(&m); err2 != nil {
			return JudgeScores{}, err
		}
	}
	lower := make(map[string]any, len(m))
	for k, v := range m {
		lower[strings.ToLower(strings.TrimSpace(k))] = v
	}
	var s JudgeScores
	dst := []*float64{&s.Grounding, &s.Accuracy, &s.Completeness, &s.Safety, &s.Citation, &s.Conciseness}
	sum := 0.0
	for i, axis := range judgeAxes {
		raw, ok := lower[axis]
		if !ok {
			return JudgeScores{}, fmt.Errorf("no %q score", axis)
		}
		v, ok := number(raw)
		if !ok || math.IsNaN(v) || v < 0 || v > 100 {
			return JudgeScores{}, fmt.Errorf("%s is %v, not a number from 0 to 100", axis, raw)
		}
		*dst[i] = v
		sum += v
	}
	s.Average = round1(sum / float64(len(judgeAxes)))
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

// jsonObjects returns the balanced {...} spans of text that lie outside
// JSON strings, outermost first, in order.
func jsonObjects(text string) []string {
	var out []string
	b := []byte(text)
	for start := bytes.IndexByte(b, '{'); start >= 0; {
		end := matchBrace(b, start)
		if end < 0 {
			break
		}
		out = append(out, string(b[start:end+1]))
		next := bytes.IndexByte(b[end+1:], '{')
		if next < 0 {
			break
		}
		start = end + 1 + next
	}
	return out
}

// matchBrace returns the index of the } closing the { at b[start], or -1.
func matchBrace(b []byte, start int) int {
	depth, inStr, esc := 0, false, false
	for i := start; i < len(b); i++ {
		c := b[i]
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
		case inStr:
		case c == '"':
			inStr = true
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}
