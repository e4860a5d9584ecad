package diffeval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/eval/dataset"
	"github.com/shirube/shirube/internal/guard"
	"github.com/shirube/shirube/internal/llm"
)

// Asker answers one question; each configuration under test is one.
type Asker interface {
	Ask(ctx context.Context, query string, history []llm.Message) (assistant.Reply, error)
}

// Verdicts of seed 004 §5.
const (
	Pass    = "PASS"
	Fail    = "FAIL"
	Skipped = "SKIPPED"
)

// Defaults.
const (
	DefaultRuns     = 5
	DefaultOutDir   = "eval"
	DefaultNameA    = "A"
	DefaultNameB    = "B"
	StableThreshold = 0.8 // least share of runs agreeing for a case to be stable
)

// JudgeKeywords names the judge of every diff-eval verdict: the
// deterministic substring match of expected keywords and must-not-contain
// phrases (seed 004 §6). No model judges a diff-eval run.
const JudgeKeywords = "keywords"

// Options configure Run.
type Options struct {
	Cases        string           // case file; required
	A, B         Asker            // the two configurations; required
	NameA, NameB string           // their names in the report; default "A", "B"
	Runs         int              // runs per case and configuration; default DefaultRuns
	OutDir       string           // where the report goes; default DefaultOutDir
	Now          func() time.Time // clock for the file names; default time.Now
	Progress     io.Writer        // one line per case; nil is silent
	// SizesA and SizesB, when set, are what each configuration occupies
	// on disk (MeasureSizes), recorded in the report.
	SizesA, SizesB *Sizes
}

// RunOutcome is one run of one case on one configuration.
type RunOutcome struct {
	Answered   bool   `json:"answered"`
	SkipReason string `json:"skip_reason,omitempty"`
	// Generator is what produced the answer, as the assistant reports it
	// ("extractive", "llm:<model>", "guard"); "" when the Asker failed.
	Generator      string   `json:"generator,omitempty"`
	Answer         string   `json:"answer"`
	Keywords       []bool   `json:"keywords"` // presence of each expected keyword
	Hit            bool     `json:"hit"`      // all keywords present
	Hallucinations []string `json:"hallucinations,omitempty"`
}

// Outcome is one case on one configuration over all runs.
type Outcome struct {
	Verdict        string       `json:"verdict"`
	Reason         string       `json:"reason,omitempty"` // why FAIL or SKIPPED
	Answered       int          `json:"answered"`         // runs with a detected answer
	Hits           int          `json:"hits"`             // answered runs with every keyword
	EvidenceHit    bool         `json:"evidence_hit"`
	KeywordRecall  float64      `json:"keyword_recall"` // mean share of keywords found, over answered runs
	Hallucination  bool         `json:"hallucination"`
	Hallucinations []string     `json:"hallucinations,omitempty"` // phrases seen in any run
	Stability      float64      `json:"stability"`
	Stable         bool         `json:"stable"`
	Runs           []RunOutcome `json:"runs"`
}

// Evaluate scores the replies of one case on one configuration (one
// reply per run; a nil error slot means the Asker succeeded). See the
// package documentation for the rules.
func Evaluate(c Case, replies []assistant.Reply, errs []error) Outcome {
	var o Outcome
	vectors := map[string]int{}
	recall := 0.0
	seenPhrase := map[string]bool{}
	for i, r := range replies {
		var err error
		if i < len(errs) {
			err = errs[i]
		}
		ro := runOutcome(c, r, err)
		o.Runs = append(o.Runs, ro)
		vectors[vectorKey(ro)]++
		if !ro.Answered {
			continue
		}
		o.Answered++
		found := 0
		for _, k := range ro.Keywords {
			if k {
				found++
			}
		}
		recall += float64(found) / float64(len(ro.Keywords))
		if ro.Hit {
			o.Hits++
		}
		for _, p := range ro.Hallucinations {
			if !seenPhrase[p] {
				seenPhrase[p] = true
				o.Hallucinations = append(o.Hallucinations, p)
			}
		}
	}
	if n := len(replies); n > 0 {
		most := 0
		for _, k := range vectors {
			most = max(most, k)
		}
		o.Stability = round4(float64(most) / float64(n))
	}
	o.Stable = o.Stability >= StableThreshold
	if o.Answered == 0 {
		o.Verdict = Skipped
		o.Reason = "no run gave a detectable answer"
		if len(o.Runs) > 0 && o.Runs[0].SkipReason != "" {
			o.Reason += " (" + o.Runs[0].SkipReason + ")"
		}
		return o
	}
	o.KeywordRecall = round4(recall / float64(o.Answered))
	o.EvidenceHit = 2*o.Hits > o.Answered
	o.Hallucination = len(o.Hallucinations) > 0
	var why []string
	if !o.EvidenceHit {
		why = append(why, fmt.Sprintf("all keywords in %d of %d answers", o.Hits, o.Answered))
	}
	if o.Hallucination {
		why = append(why, "hallucination phrase "+strings.Join(quoteAll(o.Hallucinations), ", "))
	}
	if !o.Stable {
		why = append(why, fmt.Sprintf("unstable (%.0f%% of runs agree)", 100*o.Stability))
	}
	o.Verdict = Pass
	if len(why) > 0 {
		o.Verdict = Fail
		o.Reason = strings.Join(why, "; ")
	}
	return o
}

// refusalPrefixes are the first lines of the guard templates that replace
// an answer.
var refusalPrefixes = []string{
	firstLine(guard.InsufficientEvidenceResponse),
	firstLine(guard.AmbiguousQueryResponse),
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

// runOutcome scores one reply.
func runOutcome(c Case, r assistant.Reply, err error) RunOutcome {
	ro := RunOutcome{Answer: r.Answer, Keywords: make([]bool, len(c.ExpectedKeywords)), Generator: r.Generator}
	text := strings.TrimSpace(r.Answer)
	switch {
	case err != nil:
		ro.SkipReason = "error: " + dataset.OneLine(err.Error())
		ro.Answer, ro.Generator = "", ""
		return ro
	case r.LLMUnavailable:
		ro.SkipReason = "the requested model was not used (" + dataset.OneLine(r.LLMError) + "); the extractive fallback answered"
		return ro
	case text == "":
		ro.SkipReason = "empty answer"
		return ro
	case r.Refused():
		ro.SkipReason = "the assistant refused (insufficient evidence or ambiguous question)"
		return ro
	}
	for _, p := range refusalPrefixes {
		if p != "" && strings.HasPrefix(text, p) {
			ro.SkipReason = "refusal template: " + p
			return ro
		}
	}
	ro.Answered = true
	ro.Hit = true
	for i, k := range c.ExpectedKeywords {
		ro.Keywords[i] = strings.Contains(r.Answer, k)
		ro.Hit = ro.Hit && ro.Keywords[i]
	}
	for _, p := range c.MustNotContain {
		if strings.Contains(r.Answer, p) {
			ro.Hallucinations = append(ro.Hallucinations, p)
		}
	}
	return ro
}

// vectorKey identifies a run's keyword-presence vector; runs without an
// answer share the key "-".
func vectorKey(ro RunOutcome) string {
	if !ro.Answered {
		return "-"
	}
	var b strings.Builder
	for _, k := range ro.Keywords {
		if k {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	}
	return b.String()
}

// Summary is one configuration's rates over the cases. Every rate but
// SkipRate is over the evaluated (not skipped) cases; SkipRate is over all.
// Rates are 0 when nothing was evaluated.
type Summary struct {
	Name              string  `json:"name"`
	Cases             int     `json:"cases"`
	Evaluated         int     `json:"evaluated"`
	Pass              int     `json:"pass"`
	Fail              int     `json:"fail"`
	Skipped           int     `json:"skipped"`
	EvidenceHitRate   float64 `json:"evidence_hit_rate"`
	KeywordRecall     float64 `json:"keyword_recall"`
	HallucinationRate float64 `json:"hallucination_rate"`
	StabilityRate     float64 `json:"stability_rate"` // share of cases that are stable
	PassRate          float64 `json:"pass_rate"`
	SkipRate          float64 `json:"skip_rate"`
	// Generators counts the runs by the generator that answered them
	// (RunOutcome.Generator; failed runs are not counted). Judge is the
	// judge of every verdict, JudgeKeywords.
	Generators map[string]int `json:"generators"`
	Judge      string         `json:"judge"`
}

// GeneratorsLine renders Generators as "llm:gpt-4o-mini ×4, extractive ×1",
// most used first, or "none" when no run produced an answer.
func (s Summary) GeneratorsLine() string {
	names := make([]string, 0, len(s.Generators))
	for g := range s.Generators {
		names = append(names, g)
	}
	sort.Slice(names, func(i, j int) bool {
		if s.Generators[names[i]] != s.Generators[names[j]] {
			return s.Generators[names[i]] > s.Generators[names[j]]
		}
		return names[i] < names[j]
	})
	if len(names) == 0 {
		return "none"
	}
	for i, g := range names {
		names[i] = fmt.Sprintf("%s ×%d", g, s.Generators[g])
	}
	return strings.Join(names, ", ")
}

// Summarise computes a configuration's rates from its outcomes.
func Summarise(name string, outs []Outcome) Summary {
	s := Summary{Name: name, Cases: len(outs), Generators: map[string]int{}, Judge: JudgeKeywords}
	var hits, halluc, stable int
	recall := 0.0
	for _, o := range outs {
		for _, r := range o.Runs {
			if r.Generator != "" {
				s.Generators[r.Generator]++
			}
		}
		switch o.Verdict {
		case Skipped:
			s.Skipped++
			continue
		case Pass:
			s.Pass++
		default:
			s.Fail++
		}
		s.Evaluated++
		recall += o.KeywordRecall
		if o.EvidenceHit {
			hits++
		}
		if o.Hallucination {
			halluc++
		}
		if o.Stable {
			stable++
		}
	}
	rate := func(n, d int) float64 {
		if d == 0 {
			return 0
		}
		return round4(float64(n) / float64(d))
	}
	s.EvidenceHitRate = rate(hits, s.Evaluated)
	s.HallucinationRate = rate(halluc, s.Evaluated)
	s.StabilityRate = rate(stable, s.Evaluated)
	s.PassRate = rate(s.Pass, s.Evaluated)
	s.SkipRate = rate(s.Skipped, s.Cases)
	if s.Evaluated > 0 {
		s.KeywordRecall = round4(recall / float64(s.Evaluated))
	}
	return s
}

// Metric is one row of the comparison.
type Metric struct {
	Key            string  `json:"key"`
	Label          string  `json:"label"` // Japanese name from the seed
	A              float64 `json:"a"`
	B              float64 `json:"b"`
	Diff           float64 `json:"diff"` // B − A
	HigherIsBetter bool    `json:"higher_is_better"`
	Better         string  `json:"better"` // "A", "B" or "=" (equal)
}

// metricDefs lists the compared metrics in report order.
var metricDefs = []struct {
	key, label, short string // short: English chart label, lines split by \n
	higher            bool
	get               func(Summary) float64
}{
	{"evidence_hit_rate", "根拠出現率 (Evidence Hit Rate)", "Evidence\nhit", true, func(s Summary) float64 { return s.EvidenceHitRate }},
	{"keyword_recall", "キーワード出現割合 (Keyword Recall)", "Keyword\nrecall", true, func(s Summary) float64 { return s.KeywordRecall }},
	{"hallucination_rate", "無根拠回答率 (Hallucination Rate)", "Halluci-\nnation", false, func(s Summary) float64 { return s.HallucinationRate }},
	{"stability_rate", "回答再現性 (Answer Stability)", "Stability", true, func(s Summary) float64 { return s.StabilityRate }},
	{"pass_rate", "PASS 率", "Pass", true, func(s Summary) float64 { return s.PassRate }},
	{"skip_rate", "SKIPPED 率", "Skipped", false, func(s Summary) float64 { return s.SkipRate }},
}

// Compare lists every metric of a and b with the difference B − A.
func Compare(a, b Summary) []Metric {
	out := make([]Metric, 0, len(metricDefs))
	for _, d := range metricDefs {
		m := Metric{Key: d.key, Label: d.label, A: d.get(a), B: d.get(b), HigherIsBetter: d.higher}
		m.Diff = round4(m.B - m.A)
		switch {
		case m.Diff == 0:
			m.Better = "="
		case (m.Diff > 0) == d.higher:
			m.Better = "B"
		default:
			m.Better = "A"
		}
		out = append(out, m)
	}
	return out
}

// CaseResult is one case on both configurations.
type CaseResult struct {
	ID               string   `json:"id"`
	Question         string   `json:"question"`
	Source           string   `json:"source,omitempty"`
	ExpectedKeywords []string `json:"expected_keywords"`
	MustNotContain   []string `json:"must_not_contain"`
	A                Outcome  `json:"a"`
	B                Outcome  `json:"b"`
}

// Report is the result of a run, as written to the JSON file.
type Report struct {
	CasesFile       string       `json:"cases_file"`
	Corpus          string       `json:"corpus,omitempty"`
	RunAt           string       `json:"run_at"`
	Runs            int          `json:"runs"`
	StableThreshold float64      `json:"stable_threshold"`
	NameA           string       `json:"name_a"`
	NameB           string       `json:"name_b"`
	A               Summary      `json:"summary_a"`
	B               Summary      `json:"summary_b"`
	Metrics         []Metric     `json:"metrics"`
	Cases           []CaseResult `json:"cases"`
	SkippedCases    []string     `json:"skipped_cases,omitempty"` // case-file problems
	SizesA          *Sizes       `json:"sizes_a,omitempty"`
	SizesB          *Sizes       `json:"sizes_b,omitempty"`
	JSONPath        string       `json:"-"`
	MarkdownPath    string       `json:"-"`
	ChartPath       string       `json:"-"`
}

// Run asks every case Runs times on A and on B, scores the answers and
// writes the report as JSON, Markdown and a PNG bar chart into OutDir
// (see WriteReport). Case-file problems skip single cases; a failing Asker
// makes that run undetectable (see the package documentation). Run fails
// when the case file cannot be read or has no usable case, an Asker is
// missing, the context ends, or the report cannot be written.
func Run(ctx context.Context, opt Options) (Report, error) {
	if opt.A == nil || opt.B == nil {
		return Report{}, errors.New("diff-eval needs two configurations to compare (Options.A and Options.B)")
	}
	if opt.Runs <= 0 {
		opt.Runs = DefaultRuns
	}
	if opt.NameA == "" {
		opt.NameA = DefaultNameA
	}
	if opt.NameB == "" {
		opt.NameB = DefaultNameB
	}
	if opt.OutDir == "" {
		opt.OutDir = DefaultOutDir
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	progress := opt.Progress
	if progress == nil {
		progress = io.Discard
	}
	cf, problems, err := LoadCases(opt.Cases)
	if err != nil {
		return Report{}, err
	}
	rep := Report{
		CasesFile: opt.Cases, Corpus: cf.Corpus, RunAt: opt.Now().Format(time.RFC3339),
		Runs: opt.Runs, StableThreshold: StableThreshold, NameA: opt.NameA, NameB: opt.NameB,
		SizesA: opt.SizesA, SizesB: opt.SizesB,
	}
	for _, p := range problems {
		rep.SkippedCases = append(rep.SkippedCases, p.Error())
		fmt.Fprintf(progress, "skip: %v\n", p)
	}
	if len(cf.Cases) == 0 {
		return Report{}, fmt.Errorf("diff-eval cases %s: no usable case", opt.Cases)
	}
	var outsA, outsB []Outcome
	for i, c := range cf.Cases {
		a, err := askRuns(ctx, opt.A, c, opt.Runs)
		if err != nil {
			return Report{}, err
		}
		b, err := askRuns(ctx, opt.B, c, opt.Runs)
		if err != nil {
			return Report{}, err
		}
		rep.Cases = append(rep.Cases, CaseResult{ID: c.ID, Question: c.Question, Source: c.Source,
			ExpectedKeywords: c.ExpectedKeywords, MustNotContain: c.MustNotContain, A: a, B: b})
		outsA, outsB = append(outsA, a), append(outsB, b)
		fmt.Fprintf(progress, "[%d/%d] %s  %s: %s  %s: %s\n", i+1, len(cf.Cases), c.ID, opt.NameA, a.Verdict, opt.NameB, b.Verdict)
	}
	rep.A = Summarise(opt.NameA, outsA)
	rep.B = Summarise(opt.NameB, outsB)
	rep.Metrics = Compare(rep.A, rep.B)
	if err := WriteReport(opt.OutDir, opt.Now(), &rep); err != nil {
		return rep, err
	}
	fmt.Fprintf(progress, "report: %s, %s, %s\n", rep.JSONPath, rep.MarkdownPath, rep.ChartPath)
	return rep, nil
}

// Unevaluated reports whether a configuration's summary has no PASS and no
// FAIL: every case was SKIPPED, so the run compared nothing (typically the
// LLM was down and every answer failed). why is the skip reason of its
// first case.
func (r Report) Unevaluated() (name, why string, ok bool) {
	for _, side := range []struct {
		s   Summary
		get func(CaseResult) Outcome
	}{{r.A, func(c CaseResult) Outcome { return c.A }}, {r.B, func(c CaseResult) Outcome { return c.B }}} {
		if side.s.Cases > 0 && side.s.Skipped == side.s.Cases {
			if len(r.Cases) > 0 {
				why = side.get(r.Cases[0]).Reason
			}
			return side.s.Name, why, true
		}
	}
	return "", "", false
}

// askRuns asks one case n times on one configuration and evaluates it.
func askRuns(ctx context.Context, a Asker, c Case, n int) (Outcome, error) {
	replies := make([]assistant.Reply, n)
	errs := make([]error, n)
	for i := range n {
		if err := ctx.Err(); err != nil {
			return Outcome{}, fmt.Errorf("diff-eval stopped at case %s: %w", c.ID, err)
		}
		replies[i], errs[i] = a.Ask(ctx, c.Question, nil)
		if err := ctx.Err(); err != nil {
			return Outcome{}, fmt.Errorf("diff-eval stopped at case %s: %w", c.ID, err)
		}
	}
	return Evaluate(c, replies, errs), nil
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }
