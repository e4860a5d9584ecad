package evalset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/eval"
	"github.com/shirube/shirube/internal/eval/dataset"
	"github.com/shirube/shirube/internal/eval/judge"
	"github.com/shirube/shirube/internal/llm"
)

// JudgeScores are the LLM judge's six-axis rubric scores of one answer
// (see judge.Rubric).
type JudgeScores = judge.RubricScores

// Asker answers one question, given the conversation so far (oldest
// first). The assistant satisfies it.
type Asker interface {
	Ask(ctx context.Context, query string, history []llm.Message) (assistant.Reply, error)
}

// Pass line of seed 002 §7.3: "10問中7問以上が平均70点以上".
const (
	PassScore   = 70.0 // a case passes with a score of at least this
	PassRatePct = 70   // the run passes when at least this percentage of cases pass
)

// Judge names recorded in Result.Judge and CaseResult.ScoredBy.
const (
	JudgeDeterministic = "deterministic"
	// JudgeFallback scored a case whose LLM judge call failed: the
	// deterministic checks only. Such a case is an error and never passes.
	JudgeFallback = "deterministic-fallback"
	// JudgeNone: the case was not scored (the assistant failed).
	JudgeNone = "none"
)

// errModelNotUsed starts CaseResult.Error of a case the extractive fallback
// answered because the requested model failed.
const errModelNotUsed = "the requested model was not used"

// Verdicts of a run.
const (
	VerdictPass = "PASS"
	VerdictFail = "FAIL"
	// VerdictError: the LLM judge failed on at least one case, or the
	// requested answer model was not used for one, so the run did not check
	// what it was asked to check, whatever the pass rate.
	VerdictError = "ERROR"
)

// Defaults of Options.
const (
	DefaultDataset = "eval/eval_dataset.json"
	DefaultOutDir  = "eval"
)

// Options configure Run.
type Options struct {
	Dataset  string           // path of eval_dataset.json; default DefaultDataset
	Asker    Asker            // the system under test; required
	Judge    eval.Completer   // LLM judge; nil scores offline with the deterministic checks
	OutDir   string           // where the results file goes; default DefaultOutDir
	Now      func() time.Time // clock for the file name and run_at; default time.Now
	Progress io.Writer        // one line per case and per skipped case; nil is silent
}

// Result is a finished run, as written to the results file.
type Result struct {
	Dataset          string             `json:"dataset"`
	DatasetVersion   string             `json:"dataset_version"`
	RunAt            string             `json:"run_at"`
	Judge            string             `json:"judge"` // JudgeDeterministic or the judge model
	PassScore        float64            `json:"pass_score"`
	PassRateRequired float64            `json:"pass_rate_required"` // 0.7
	Cases            []CaseResult       `json:"cases"`
	SkippedCases     []string           `json:"skipped_cases,omitempty"` // dataset problems, one line each
	CategoryAverages map[string]float64 `json:"category_averages"`
	OverallAverage   float64            `json:"overall_average"`
	Total            int                `json:"total"`
	PassCount        int                `json:"pass_count"`
	PassRate         float64            `json:"pass_rate"` // PassCount / Total
	// Judged counts the cases the LLM judge scored; JudgeFailed those whose
	// judge call failed (errors: they never pass); Fallback those scored by
	// the deterministic checks alone (every case of an offline run, the
	// judge-failed cases of an LLM run).
	Judged      int `json:"judged"`
	JudgeFailed int `json:"judge_failed"`
	Fallback    int `json:"fallback"`
	// ModelNotUsed counts the cases whose requested model was not used
	// (the extractive fallback answered); any makes the run an ERROR.
	ModelNotUsed int    `json:"model_not_used,omitempty"`
	Passed       bool   `json:"passed"`
	Verdict      string `json:"verdict"` // VerdictPass, VerdictFail or VerdictError
	Path         string `json:"-"`       // the results file written
}

// CaseResult is the outcome of one case.
type CaseResult struct {
	ID                 string       `json:"id"`
	Category           string       `json:"category"`
	Query              string       `json:"query"`
	RewrittenQuery     string       `json:"rewritten_query,omitempty"`
	Answer             string       `json:"answer"`
	Cited              []string     `json:"cited"`
	Flags              answer.Flags `json:"flags"`
	Checks             []Check      `json:"checks"`
	DeterministicScore float64      `json:"deterministic_score"`
	Judge              *JudgeScores `json:"judge,omitempty"`
	JudgeError         string       `json:"judge_error,omitempty"`
	// ScoredBy names what produced Score: the judge model, JudgeDeterministic
	// (offline run), JudgeFallback (the judge failed) or JudgeNone.
	ScoredBy string `json:"scored_by"`
	// Generator is what wrote the answer, as the assistant reports it
	// ("extractive", "llm:<model>", "guard"). A case whose requested model
	// was not used (the LLM failed and the extractive fallback answered)
	// is an error: Error says so and it scores 0.
	Generator string  `json:"generator"`
	Score     float64 `json:"score"`
	Passed    bool    `json:"passed"`
	Error     string  `json:"error,omitempty"` // the Asker failed; the case scores 0
}

// Run evaluates every usable case of the dataset in order, writes the
// results file (see WriteResults) and returns the result. Dataset problems
// skip single cases (listed in SkippedCases and on Progress); a failing
// Asker fails its case with score 0; a failing judge makes the case an
// error: it keeps its deterministic score for information (ScoredBy
// JudgeFallback), the reason goes to JudgeError, it does not pass, and the
// run's verdict is VerdictError. Run returns an
// error only when the dataset cannot be read, no case is usable, the
// context ends, or the results cannot be written.
func Run(ctx context.Context, opt Options) (Result, error) {
	if opt.Asker == nil {
		return Result{}, errors.New("evaluation: no assistant to ask (Options.Asker is nil)")
	}
	if opt.Dataset == "" {
		opt.Dataset = DefaultDataset
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
	ds, problems, err := Load(opt.Dataset)
	if err != nil {
		return Result{}, err
	}
	res := Result{
		Dataset:          opt.Dataset,
		DatasetVersion:   ds.Version,
		RunAt:            opt.Now().Format(time.RFC3339),
		Judge:            judgeName(opt.Judge),
		PassScore:        PassScore,
		PassRateRequired: PassRatePct / 100.0,
	}
	for _, p := range problems {
		res.SkippedCases = append(res.SkippedCases, p.Error())
		fmt.Fprintf(progress, "skip: %v\n", p)
	}
	if len(ds.Cases) == 0 {
		return Result{}, fmt.Errorf("eval dataset %s has no usable test case: fix the problems listed above", opt.Dataset)
	}
	for i, c := range ds.Cases {
		if err := ctx.Err(); err != nil {
			return Result{}, fmt.Errorf("evaluation stopped after %d of %d cases: %w", i, len(ds.Cases), err)
		}
		cr := evaluate(ctx, opt, c)
		if err := ctx.Err(); err != nil {
			return Result{}, fmt.Errorf("evaluation stopped after %d of %d cases: %w", i, len(ds.Cases), err)
		}
		res.Cases = append(res.Cases, cr)
		fmt.Fprintf(progress, "[%d/%d] %s %-21s %5.1f %s%s\n", i+1, len(ds.Cases), c.ID, c.Category,
			cr.Score, passWord(cr.Passed), errNote(cr))
	}
	summarise(&res)
	if res.Path, err = WriteResults(opt.OutDir, opt.Now(), res); err != nil {
		return res, err
	}
	fmt.Fprintf(progress, "%d of %d cases passed (%.0f%%), average %.1f: %s — results in %s\n",
		res.PassCount, res.Total, 100*res.PassRate, res.OverallAverage, res.Verdict, res.Path)
	if opt.Judge != nil {
		fmt.Fprintf(progress, "judge %s: %d judged, %d failed, %d scored by the deterministic fallback\n",
			res.Judge, res.Judged, res.JudgeFailed, res.Fallback)
	}
	return res, nil
}

// evaluate asks, checks and judges one case.
func evaluate(ctx context.Context, opt Options, c Case) CaseResult {
	cr := CaseResult{ID: c.ID, Category: c.Category, Query: c.Query, Cited: []string{}, ScoredBy: JudgeNone}
	reply, err := opt.Asker.Ask(ctx, c.Query, c.History())
	if err != nil {
		cr.Error = dataset.OneLine(err.Error())
		cr.Checks = []Check{}
		return cr
	}
	cr.RewrittenQuery = reply.RewrittenQuery
	cr.Answer = reply.Answer
	cr.Generator = reply.Generator
	if reply.LLMUnavailable {
		cr.Error = errModelNotUsed + " (" + dataset.OneLine(reply.LLMError) + "); the extractive fallback answered, so the case was not scored"
		cr.Checks = []Check{}
		return cr
	}
	if cited := reply.Cited(); cited != nil {
		cr.Cited = cited
	}
	cr.Flags = reply.Flags
	cr.Checks = Checks(c, reply)
	cr.DeterministicScore = DeterministicScore(cr.Checks)
	cr.ScoredBy = JudgeDeterministic
	if opt.Judge != nil {
		s, err := judge.Rubric(ctx, opt.Judge, c.Query, reply.Answer, reply.Evidence)
		if err != nil {
			cr.JudgeError = dataset.OneLine(err.Error())
			cr.ScoredBy = JudgeFallback
		} else {
			cr.Judge = &s
			cr.ScoredBy = s.Model
			if cr.ScoredBy == "" {
				cr.ScoredBy = judgeName(opt.Judge)
			}
		}
	}
	cr.Score = Score(cr.Checks, cr.Judge)
	cr.Passed = cr.JudgeError == "" && CasePasses(cr.Checks, cr.Score)
	return cr
}

// summarise fills the per-category and overall figures and the verdict.
func summarise(res *Result) {
	sums := map[string]float64{}
	counts := map[string]int{}
	total := 0.0
	res.Total, res.PassCount = len(res.Cases), 0
	res.Judged, res.JudgeFailed, res.Fallback, res.ModelNotUsed = 0, 0, 0, 0
	for _, c := range res.Cases {
		if strings.HasPrefix(c.Error, errModelNotUsed) {
			res.ModelNotUsed++
		}
		switch {
		case c.JudgeError != "":
			res.JudgeFailed++
			res.Fallback++
		case c.Judge != nil:
			res.Judged++
		case c.ScoredBy == JudgeDeterministic:
			res.Fallback++
		}
		sums[c.Category] += c.Score
		counts[c.Category]++
		total += c.Score
		if c.Passed {
			res.PassCount++
		}
	}
	res.CategoryAverages = map[string]float64{}
	for cat, n := range counts {
		res.CategoryAverages[cat] = round1(sums[cat] / float64(n))
	}
	if res.Total > 0 {
		res.OverallAverage = round1(total / float64(res.Total))
		res.PassRate = float64(res.PassCount) / float64(res.Total)
	}
	res.Passed = RunPasses(res.PassCount, res.Total) && res.JudgeFailed == 0 && res.ModelNotUsed == 0
	switch {
	case res.JudgeFailed > 0, res.ModelNotUsed > 0:
		res.Verdict = VerdictError
	case res.Passed:
		res.Verdict = VerdictPass
	default:
		res.Verdict = VerdictFail
	}
}

// RunPasses applies the run's pass line: at least PassRatePct percent of
// total cases passed (7 of 10 passes, 6 of 10 fails). It is computed in
// integers, so 7/10 is not lost to rounding. No cases never pass.
func RunPasses(passed, total int) bool {
	return total > 0 && passed*100 >= PassRatePct*total
}

// ResultsFileName is the results file of a run on day now, seed 002 §7.3:
// evaluation_results_YYYY-MM-DD.json, or …_N.json (N = 2, 3, …) for the
// N-th run of that day.
func ResultsFileName(now time.Time, n int) string {
	day := now.Format(time.DateOnly)
	if n <= 1 {
		return "evaluation_results_" + day + ".json"
	}
	return fmt.Sprintf("evaluation_results_%s_%d.json", day, n)
}

// WriteResults writes res as indented JSON into dir (created if needed)
// under the first ResultsFileName that does not exist yet, and returns its
// path. It never overwrites a file: the name is claimed with O_EXCL.
func WriteResults(dir string, now time.Time, res Result) (string, error) {
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode evaluation results: %w", err)
	}
	data = append(data, '\n')
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create results folder: %w", err)
	}
	for n := 1; n < 10000; n++ {
		p := filepath.Join(dir, ResultsFileName(now, n))
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("create results file: %w", err)
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return "", fmt.Errorf("write results file %s: %w", p, err)
		}
		if err := f.Close(); err != nil {
			return "", fmt.Errorf("write results file %s: %w", p, err)
		}
		return p, nil
	}
	return "", fmt.Errorf("results folder %s already holds 9999 results files for %s: move old ones away", dir, now.Format(time.DateOnly))
}

// judgeName is the judge recorded in the results.
func judgeName(c eval.Completer) string {
	if c == nil {
		return JudgeDeterministic
	}
	if m, ok := c.(interface{ Model() string }); ok && m.Model() != "" {
		return m.Model()
	}
	return "llm"
}

func passWord(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func errNote(c CaseResult) string {
	switch {
	case c.Error != "":
		return " (error: " + c.Error + ")"
	case c.JudgeError != "":
		return " (judge failed, counted as an error; deterministic score shown: " + c.JudgeError + ")"
	}
	if hc, failed := HardFailure(c.Checks); failed {
		return " (" + hc.Name + ": " + hc.Detail + ")"
	}
	return ""
}
