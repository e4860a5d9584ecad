package metrics

import (
	"context"
	"fmt"
	"strings"
)

// Judgement is an ItemJudge's verdict on one answer.
type Judgement struct {
	Present []bool   // one entry per checklist item, in order
	Extra   []string // key points of the answer that match no item
	Reason  string   // optional short explanation
}

// ItemJudge decides which checklist items an answer contains and which of
// the answer's key points are not in the checklist.
type ItemJudge interface {
	Judge(ctx context.Context, items []string, answer string) (Judgement, error)
}

// ChecklistInput is what checklist verification looks at for one row.
type ChecklistInput struct {
	Items          []string // parsed with ParseChecklist
	Answer         string   // the RAG answer
	ReferenceEmpty bool     // the row has no reference: the right answer is a refusal
	Refused        bool     // the agent declined to answer (see IsRefusal)
}

// Checklist is the checklist verification of one row (seed 000).
//
// Precision and Recall are undefined (empty cell) when their denominator is
// zero; Specificity = TN/(TN+FP) likewise; F1 is 2TP/(2TP+FP+FN);
// Accuracy = (TP+TN)/(TP+TN+FP+FN).
type Checklist struct {
	TP, FP, FN, TN int
	Recall         Ratio
	Precision      Ratio
	F1             Ratio
	Accuracy       Ratio
	Specificity    Ratio
	Reason         string // one line saying how the counts came about
}

// EvaluateChecklist applies the seed 000 rules:
//
//   - reference empty and the agent refuses: TN = 1, everything else 0;
//   - reference empty but the agent answers: FP = 1, TN = 0;
//   - reference present but the agent refuses: TP = 0, FN = number of items
//     (at least 1);
//   - otherwise the judge decides: TP = items present, FN = items missing,
//     FP = extra key points in the answer, TN = 0.
//
// The judge is only called in the last case.
func EvaluateChecklist(ctx context.Context, judge ItemJudge, in ChecklistInput) (Checklist, error) {
	var c Checklist
	switch {
	case in.ReferenceEmpty && in.Refused:
		c.TN = 1
		c.Reason = "no reference and the agent correctly refused (TN)"
	case in.ReferenceEmpty:
		c.FP = 1
		c.Reason = "no reference but the agent answered (FP)"
	case in.Refused:
		c.FN = max(1, len(in.Items))
		c.Reason = fmt.Sprintf("the agent refused although a reference exists: %d item(s) missed", c.FN)
	case len(in.Items) == 0:
		// Nothing to check; an answer with no checklist is neither right nor wrong.
		c.Reason = "empty checklist"
	default:
		j, err := judge.Judge(ctx, in.Items, in.Answer)
		if err != nil {
			return Checklist{}, fmt.Errorf("judge checklist: %w", err)
		}
		if len(j.Present) != len(in.Items) {
			return Checklist{}, fmt.Errorf("judge checklist: got %d verdicts for %d items", len(j.Present), len(in.Items))
		}
		var missing []string
		for i, ok := range j.Present {
			if ok {
				c.TP++
			} else {
				c.FN++
				missing = append(missing, in.Items[i])
			}
		}
		c.FP = len(j.Extra)
		c.Reason = fmt.Sprintf("%d/%d checklist items found", c.TP, len(in.Items))
		if len(missing) > 0 {
			c.Reason += "; missing: " + strings.Join(missing, " / ")
		}
		if c.FP > 0 {
			c.Reason += fmt.Sprintf("; %d extra point(s)", c.FP)
		}
		if j.Reason != "" {
			c.Reason += "; " + j.Reason
		}
	}
	c.Recall = Of(c.TP, c.TP+c.FN)
	c.Precision = Of(c.TP, c.TP+c.FP)
	c.F1 = f1(c.TP, c.FP, c.FN)
	c.Accuracy = Of(c.TP+c.TN, c.TP+c.TN+c.FP+c.FN)
	c.Specificity = Of(c.TN, c.TN+c.FP)
	return c, nil
}
