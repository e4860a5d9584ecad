package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/shirube/shirube/internal/eval"
	"github.com/shirube/shirube/internal/eval/metrics"
	"github.com/shirube/shirube/internal/llm"
)

// ChecklistLLM is the checklist judge of the batch evaluation
// (metrics.ItemJudge) that asks a model. The model must answer with
// one JSON object:
//
//	{"items": [{"index": 1, "present": true}, ...],
//	 "extra_points": ["key point of the answer not in the checklist", ...],
//	 "reason": "one short sentence"}
//
// with exactly one entry per item (indices 1..n, each once). Anything else
// is an error, so a malformed verdict never becomes a metric.
type ChecklistLLM struct {
	LLM   eval.Completer
	Model string // "" means the client's default
}

// Name names the judge in results: "llm:<model>", or "llm" when the
// client's default model is used.
func (j ChecklistLLM) Name() string {
	if j.Model != "" {
		return "llm:" + j.Model
	}
	if m, ok := j.LLM.(interface{ Model() string }); ok && m.Model() != "" {
		return "llm:" + m.Model()
	}
	return "llm"
}

const checklistSystem = `You grade a RAG answer against a checklist of key points.
For each numbered checklist item decide whether the answer states it (paraphrases count; partial or contradicting statements do not).
Then list the key points of the answer that are NOT covered by any checklist item (ignore greetings, citations and filler).
Reply with a single JSON object and nothing else:
{"items":[{"index":1,"present":true}],"extra_points":["..."],"reason":"..."}`

// checklistRetry asks once more after a reply that was not the documented
// object.
const checklistRetry = `Your reply could not be used: %s.
Reply again with only the JSON object {"items":[{"index":1,"present":true}],"extra_points":["..."],"reason":"..."}, with exactly one entry per checklist item (indices 1..%d, each once).`

// Judge implements metrics.ItemJudge. A reply that is not the documented object
// (prose, invalid JSON, a wrong number of verdicts) is answered once with
// what was wrong and the request for the object alone; a second unusable
// reply, or a failed call, is an error, so the row is counted as failed.
func (j ChecklistLLM) Judge(ctx context.Context, items []string, answer string) (metrics.Judgement, error) {
	var b strings.Builder
	b.WriteString("Checklist:\n")
	for i, it := range items {
		fmt.Fprintf(&b, "%d. %s\n", i+1, it)
	}
	b.WriteString("\nAnswer:\n")
	b.WriteString(answer)
	zero := 0.0
	req := llm.Request{
		Model:       j.Model,
		System:      checklistSystem,
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: b.String()}},
		Temperature: &zero,
		JSON:        true,
	}
	var perr error
	for attempt := 0; attempt < 2; attempt++ {
		resp, err := j.LLM.Complete(ctx, req)
		switch {
		case errors.Is(err, llm.ErrNotJSON):
			perr = err
		case err != nil:
			return metrics.Judgement{}, fmt.Errorf("checklist judge: %w", err)
		default:
			jd, err := ParseChecklist(resp.Text, len(items))
			if err == nil {
				return jd, nil
			}
			perr = err
		}
		if attempt == 0 {
			shown := resp.Text
			if strings.TrimSpace(shown) == "" {
				shown = "(no JSON object)"
			}
			req.Messages = append(req.Messages,
				llm.Message{Role: llm.RoleAssistant, Content: shown},
				llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf(checklistRetry, oneLine(perr.Error()), len(items))})
		}
	}
	return metrics.Judgement{}, fmt.Errorf("checklist judge reply unusable twice: %w", perr)
}

// ParseChecklist reads the judge's JSON for n items. A single surrounding
// ```json fence is tolerated; anything else that is not exactly the
// documented object is an error.
func ParseChecklist(raw string, n int) (metrics.Judgement, error) {
	var v struct {
		Items []struct {
			Index   int   `json:"index"`
			Present *bool `json:"present"`
		} `json:"items"`
		Extra  []string `json:"extra_points"`
		Reason string   `json:"reason"`
	}
	if err := json.Unmarshal([]byte(unfence(raw)), &v); err != nil {
		return metrics.Judgement{}, fmt.Errorf("checklist judge returned invalid JSON: %w", err)
	}
	if len(v.Items) != n {
		return metrics.Judgement{}, fmt.Errorf("checklist judge returned %d verdicts for %d items", len(v.Items), n)
	}
	j := metrics.Judgement{Present: make([]bool, n), Reason: oneLine(v.Reason)}
	seen := make([]bool, n)
	for _, it := range v.Items {
		if it.Index < 1 || it.Index > n || seen[it.Index-1] {
			return metrics.Judgement{}, fmt.Errorf("checklist judge returned bad or repeated item index %d (want 1..%d once each)", it.Index, n)
		}
		if it.Present == nil {
			return metrics.Judgement{}, fmt.Errorf("checklist judge left \"present\" out for item %d", it.Index)
		}
		seen[it.Index-1] = true
		j.Present[it.Index-1] = *it.Present
	}
	for _, e := range v.Extra {
		if e = strings.TrimSpace(e); e != "" {
			j.Extra = append(j.Extra, e)
		}
	}
	return j, nil
}

// unfence removes one ```json ... ``` fence around s, if present.
func unfence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	s = s[3 : len(s)-3]
	if i := strings.IndexByte(s, '\n'); i >= 0 && !strings.Contains(s[:i], "{") {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// oneLine collapses white space so a text fits on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
