package bench

import (
	"bufio"
	"fmt"
	"io"

	"github.com/shirube/shirube/internal/guard"
)

// DangerQuestion is one labelled question of a danger-flag set (one JSON
// object per line, eval/danger_questions.jsonl): the question, whether the
// answer must carry the 承認・確認が必要 banner, the kind of operation or
// look-alike and a note. Answer, when given, is an answer text the
// decision is refined with (guard.AssessAnswer): the operation it quotes.
// Part names the part of the set ("tuned" when empty, "heldout" for
// questions written after the detector and never tuned on).
type DangerQuestion struct {
	ID        string `json:"id"`
	Question  string `json:"question"`
	Answer    string `json:"answer,omitempty"`
	Dangerous bool   `json:"dangerous"`
	Kind      string `json:"kind"`
	Note      string `json:"note"`
	Part      string `json:"part,omitempty"`
}

// LoadDanger reads a danger-flag JSONL file. A line that does not parse is
// an error naming the line.
func LoadDanger(file string) ([]DangerQuestion, error) {
	qs, err := loadJSONL(file, "id, question, dangerous", func(q *DangerQuestion) *string { return &q.ID }, func(q *DangerQuestion) string { return q.Question })
	for i := range qs {
		if qs[i].Part == "" {
			qs[i].Part = "tuned"
		}
	}
	return qs, err
}

// DangerCase is the decision on one question.
type DangerCase struct {
	DangerQuestion
	Got      guard.Danger `json:"got"`      // the decision (question, refined by Answer when given)
	Seed     bool         `json:"seed"`     // seed 002's keyword match on question and answer
	Question guard.Danger `json:"question"` // the question-side decision alone
}

// DangerScore is precision, recall and F1 of one detector on one part.
type DangerScore struct {
	N         int     `json:"n"`
	TP        int     `json:"tp"`
	FP        int     `json:"fp"`
	FN        int     `json:"fn"`
	TN        int     `json:"tn"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// add counts one decision.
func (s *DangerScore) add(got, want bool) {
	s.N++
	switch {
	case got && want:
		s.TP++
	case got:
		s.FP++
	case want:
		s.FN++
	default:
		s.TN++
	}
}

// finish computes the ratios. With no positive decision precision is 1
// when nothing was missed (nothing flagged wrongly) — the usual convention
// would be 0/0.
func (s *DangerScore) finish() {
	if s.TP+s.FP > 0 {
		s.Precision = float64(s.TP) / float64(s.TP+s.FP)
	}
	if s.TP+s.FN > 0 {
		s.Recall = float64(s.TP) / float64(s.TP+s.FN)
	}
	if s.Precision+s.Recall > 0 {
		s.F1 = 2 * s.Precision * s.Recall / (s.Precision + s.Recall)
	}
}

// DangerReport is the result of Danger: per part, the detector's score
// and seed 002's keyword match for comparison, and every case.
type DangerReport struct {
	Parts []DangerPart `json:"parts"`
	Cases []DangerCase `json:"cases"`
}

// DangerPart is the score of one part of the set.
type DangerPart struct {
	Part     string      `json:"part"`
	Detector DangerScore `json:"detector"`
	Seed     DangerScore `json:"seed_keywords"`
}

// Danger decides every question with guard.AssessQuestion, refined with
// guard.AssessAnswer when the case gives an answer, and scores the
// decisions against the labels per part, next to seed 002's keyword match
// (guard.DetectDangerous) on the same text.
func Danger(qs []DangerQuestion) DangerReport {
	var rep DangerReport
	parts := map[string]int{}
	for _, q := range qs {
		c := DangerCase{DangerQuestion: q}
		c.Question = guard.AssessQuestion(q.Question)
		c.Got = guard.AssessAnswer(c.Question, q.Question, q.Answer)
		c.Seed = guard.DetectDangerous(q.Question, q.Answer)
		rep.Cases = append(rep.Cases, c)
		i, ok := parts[q.Part]
		if !ok {
			i = len(rep.Parts)
			parts[q.Part] = i
			rep.Parts = append(rep.Parts, DangerPart{Part: q.Part})
		}
		rep.Parts[i].Detector.add(c.Got.Dangerous, q.Dangerous)
		rep.Parts[i].Seed.add(c.Seed, q.Dangerous)
	}
	for i := range rep.Parts {
		rep.Parts[i].Detector.finish()
		rep.Parts[i].Seed.finish()
	}
	return rep
}

// WriteText prints the report: per part the detector's and the seed
// keywords' precision, recall and F1, then the confusion list — every
// question the detector got wrong, with what it found.
func (r DangerReport) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%-8s %-14s %4s %4s %4s %4s %4s %9s %7s %6s\n", "part", "detector", "n", "tp", "fp", "fn", "tn", "precision", "recall", "f1")
	for _, p := range r.Parts {
		for _, row := range []struct {
			name string
			s    DangerScore
		}{{"request", p.Detector}, {"seed-keyword", p.Seed}} {
			s := row.s
			fmt.Fprintf(bw, "%-8s %-14s %4d %4d %4d %4d %4d %9.3f %7.3f %6.3f\n", p.Part, row.name, s.N, s.TP, s.FP, s.FN, s.TN, s.Precision, s.Recall, s.F1)
		}
	}
	fmt.Fprintln(bw, "\nconfusion (request detector):")
	wrong := 0
	for _, c := range r.Cases {
		if c.Got.Dangerous == c.Dangerous {
			continue
		}
		wrong++
		what := "false positive"
		if c.Dangerous {
			what = "false negative"
		}
		fmt.Fprintf(bw, "  %s [%s] %s %q", c.ID, c.Part, what, c.DangerQuestion.Question)
		if c.Got.Kind != "" {
			fmt.Fprintf(bw, " — %s %q", c.Got.Kind, c.Got.Operation)
			if c.Got.Mitigation != "" {
				fmt.Fprintf(bw, " mitigated by %q", c.Got.Mitigation)
			}
		}
		fmt.Fprintln(bw)
	}
	if wrong == 0 {
		fmt.Fprintln(bw, "  none")
	}
	return bw.Flush()
}
