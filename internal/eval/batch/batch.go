// Package batch is batch evaluation's answering and scoring step (origin:
// seed 000's `python rag_agent.py input.csv`; package pipeline runs the
// whole of `shirube batch`): it answers every question of a CSV with
// parallel workers and, when the CSV carries ground truth, evaluates each
// answer with the checklist and reference metrics of package metrics.
//
// It writes results/<input stem>_results_YYYYMMDD_HHMMSS.csv and, for an
// evaluation run, a *_summary.csv next to it. Both are utf-8-sig and never
// overwrite an earlier file. Finished rows are appended to a checkpoint so an
// interrupted run can be resumed without asking them again.
package batch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shirube/shirube/internal/csvx"
	"github.com/shirube/shirube/internal/eval/checkpoint"
	"github.com/shirube/shirube/internal/eval/metrics"
)

// DefaultWorkers is the number of parallel workers of seed 000.
const DefaultWorkers = 5

// AskResult is the agent's answer to one question.
type AskResult struct {
	Answer    string
	Retrieved []string // page identities such as database/a/page_001.md, in rank order
	Refused   bool     // the agent declined (insufficient evidence)
	// Generator is what wrote the answer ("extractive", "llm:<model>",
	// "guard"). ModelNotUsed, when set, says why the requested model was
	// not used (the extractive fallback answered): the row is then a
	// failed row, not scored as the model's answer.
	Generator    string
	ModelNotUsed string
}

// JudgeName names an ItemJudge in the results: its Name method if it has
// one, else "offline" for metrics.OfflineJudge.
func JudgeName(j metrics.ItemJudge) string {
	if n, ok := j.(interface{ Name() string }); ok {
		return n.Name()
	}
	if _, ok := j.(metrics.OfflineJudge); ok {
		return "offline"
	}
	return fmt.Sprintf("%T", j)
}

// Asker answers one question. It must be safe for concurrent use.
type Asker interface {
	Ask(ctx context.Context, question string) (AskResult, error)
}

// Options configure Run.
type Options struct {
	Input     string            // input CSV path
	OutputDir string            // where results go; "" means "results"
	Workers   int               // parallel questions; 0 means DefaultWorkers
	Asker     Asker             // required
	AllPages  func() []string   // every page identity of the database, for Ref TN; nil means none known
	Judge     metrics.ItemJudge // checklist matcher; nil means metrics.OfflineJudge
	Progress  io.Writer         // progress bar on a terminal, plain lines otherwise; nil for none
	Log       io.Writer         // one-line warnings (skipped rows, encoding); nil for none
	Resume    bool              // continue from the checkpoint of an interrupted run
	Now       func() time.Time  // clock for file names; nil means time.Now
}

// Result describes a finished run.
type Result struct {
	Output    string // results CSV
	Summary   string // summary CSV; "" for a Question-only run
	Evaluated bool   // the input had ground-truth columns
	Rows      int    // data rows in the input
	Resumed   int    // rows taken from the checkpoint instead of asked
	Failed    int    // rows that failed: the question could not be answered, or the checklist judge failed
	// JudgeFailed counts the failed rows whose answer came back but whose
	// checklist judge failed (after its one retry): they have reference
	// metrics but no checklist metrics, and the checklist averages of the
	// summary do not cover them.
	JudgeFailed int
	Skipped     int // rows without a question
}

// row is the outcome of one input row: output cells by column name, and
// the unrounded metric values behind them for the summary.
type row struct {
	cells       map[string]string
	values      map[string]metrics.Ratio
	failed      bool
	judgeFailed bool // the answer came back, the checklist judge failed
}

// put stores a metric as a cell and as a value.
func (r *row) put(col string, v metrics.Ratio) {
	r.cells[col] = v.Cell()
	r.values[col] = v
}

// count stores a count metric.
func (r *row) count(col string, n int) {
	r.cells[col] = strconv.Itoa(n)
	r.values[col] = metrics.Defined(float64(n))
}

// Run answers (and evaluates) every row of opts.Input.
//
// A row whose Asker call fails keeps its error in Evaluation Reason and the
// run continues. If ctx is cancelled, Run stops asking, keeps the rows
// finished so far in the checkpoint and returns an error that says to rerun
// with Resume. The checkpoint is removed once every row has succeeded.
func Run(ctx context.Context, opts Options) (Result, error) {
	if opts.Asker == nil {
		return Result{}, errors.New("batch: no Asker configured")
	}
	if opts.OutputDir == "" {
		opts.OutputDir = "results"
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.Judge == nil {
		opts.Judge = metrics.OfflineJudge{}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	logf := func(format string, a ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", a...)
		}
	}

	header, rows, warn, err := csvx.ReadFile(opts.Input)
	if err != nil {
		return Result{}, fmt.Errorf("read input: %w", err)
	}
	if warn != "" {
		logf("%s: %s", opts.Input, warn)
	}
	in, err := newLayout(header)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", opts.Input, err)
	}
	res := Result{Rows: len(rows), Evaluated: in.evaluate}

	var allPages []string
	if in.evaluate && opts.AllPages != nil {
		allPages = opts.AllPages()
	}

	stem := strings.TrimSuffix(filepath.Base(opts.Input), filepath.Ext(opts.Input))
	if err := os.MkdirAll(opts.OutputDir, 0o755); err != nil {
		return Result{}, fmt.Errorf("create output folder: %w", err)
	}
	cp := checkpointPath(opts.OutputDir, stem)
	out := make([]*row, len(rows))
	if opts.Resume {
		done, skipped, err := loadCheckpoint(cp, rows, in.question)
		if err != nil {
			return Result{}, err
		}
		if skipped > 0 {
			logf("checkpoint %s: %d unusable line(s) ignored; those rows are asked again", cp, skipped)
		}
		for i, l := range done {
			out[i] = &row{cells: l.Cells, values: l.Values}
			res.Resumed++
		}
	} else if _, err := os.Stat(cp); err == nil {
		logf("replacing checkpoint %s of an earlier interrupted run (use resume to continue it instead)", cp)
		if err := os.Remove(cp); err != nil {
			return Result{}, fmt.Errorf("remove old checkpoint: %w", err)
		}
	}
	ck, err := checkpoint.Open(cp)
	if err != nil {
		return Result{}, err
	}

	prog := newProgress(opts.Progress, len(rows), res.Resumed)
	ev := evaluator{judge: opts.Judge, allPages: allPages, layout: in}
	var todo []int
	for i := range rows {
		if out[i] == nil {
			todo = append(todo, i)
		}
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(opts.Workers, max(1, len(todo))) {
		wg.Go(func() {
			for i := range jobs {
				r, ok := ev.do(ctx, opts.Asker, rows[i])
				if !ok { // interrupted: leave the row for a resumed run
					continue
				}
				out[i] = r
				status := "ok"
				if r.failed {
					status = r.cells[ColReason]
				} else if err := ck.Append(checkpointLine{Row: i, Question: rows[i][in.question], Cells: r.cells, Values: r.values}); err != nil {
					logf("row %d: %v", i+1, err)
				}
				prog.step(i, status)
			}
		})
	}
feed:
	for _, i := range todo {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	prog.finish()
	if cerr := ck.Close(); cerr != nil {
		logf("%v", cerr)
	}

	finished := 0
	for _, r := range out {
		if r != nil {
			finished++
		}
	}
	if finished < len(rows) {
		return res, fmt.Errorf("batch interrupted after %d of %d rows (%v); finished rows are kept in %s — run again with resume to continue", finished, len(rows), context.Cause(ctx), cp)
	}

	for _, r := range out {
		switch {
		case r.failed:
			res.Failed++
			if r.judgeFailed {
				res.JudgeFailed++
			}
		case r.cells[skipMark] != "":
			res.Skipped++
		}
	}
	cols, src := in.outputColumns()
	path, err := csvx.WriteNew(opts.OutputDir, stem+"_results_", opts.Now(), nil, cols, records(cols, src, out, rows))
	res.Output = path
	if err != nil {
		return res, err
	}
	if in.evaluate {
		res.Summary = strings.TrimSuffix(path, ".csv") + "_summary.csv"
		if err := writeSummary(res.Summary, metricColumns(in.optimized >= 0), out, res); err != nil {
			return res, err
		}
	}
	if res.Failed == 0 {
		if err := checkpoint.Remove(cp); err != nil {
			logf("remove checkpoint: %v", err)
		}
	} else {
		logf("%d row(s) failed; run again with resume to retry only those (checkpoint %s)", res.Failed, cp)
	}
	return res, nil
}

// skipMark is an internal cell key marking a row without a question.
const skipMark = "\x00skipped"

// layout maps the input header to the columns Run reads and writes.
type layout struct {
	header    []string
	question  int
	reference int
	checklist int
	optimized int
	evaluate  bool
	// extras are input columns that are not produced by Run, kept at the end.
	extras []int
	// known maps an output column to its input index, for pass-through cells.
	known map[string]int
}

func newLayout(header []string) (layout, error) {
	l := layout{header: header, known: map[string]int{}}
	l.question = csvx.MatchColumn(header, ColQuestion)
	if l.question < 0 {
		return l, fmt.Errorf("no %q column (found %s); add a header row with a Question column", ColQuestion, strings.Join(header, ", "))
	}
	l.reference = csvx.MatchColumn(header, ColReference)
	l.checklist = csvx.MatchColumn(header, ColChecklist)
	l.optimized = csvx.MatchColumn(header, ColOptimized)
	gt := csvx.MatchColumn(header, ColGroundTruth)
	l.evaluate = l.reference >= 0 || l.checklist >= 0 || gt >= 0
	owned := map[string]bool{}
	for _, c := range append(append(append(inputColumns(), evalColumns()...), optColumns()...), answerColumns()...) {
		owned[csvx.NormalizeColumn(c)] = true
		if i := csvx.MatchColumn(header, c); i >= 0 {
			l.known[c] = i
		}
	}
	for i, h := range header {
		if !owned[csvx.NormalizeColumn(h)] {
			l.extras = append(l.extras, i)
		}
	}
	return l, nil
}

// outputColumns returns the output header and, per column, the input
// column its cell is copied from when the row has no computed value (-1:
// none). Only the ground-truth columns and extras are copied; computed
// columns of an earlier run found in the input are never carried over.
func (l layout) outputColumns() (cols []string, src []int) {
	if l.evaluate {
		cols = append(inputColumns(), evalColumns()...)
		if l.optimized >= 0 {
			cols = append(cols, optColumns()...)
		}
	} else {
		cols = answerColumns()
	}
	for _, c := range cols {
		i := -1
		switch c {
		case ColQuestion, ColGroundTruth, ColReference, ColPage, ColChecklist, ColOptimized:
			if k, ok := l.known[c]; ok {
				i = k
			}
		}
		src = append(src, i)
	}
	for _, i := range l.extras {
		cols = append(cols, l.header[i])
		src = append(src, i)
	}
	return cols, src
}

func cell(rec []string, i int) string {
	if i < 0 || i >= len(rec) {
		return ""
	}
	return rec[i]
}

// evaluator turns one input row into output cells.
type evaluator struct {
	judge    metrics.ItemJudge
	allPages []string
	layout   layout
}

// do asks and evaluates one row. ok is false when ctx was cancelled before
// the row finished; such a row is not recorded anywhere.
func (e evaluator) do(ctx context.Context, asker Asker, rec []string) (r *row, ok bool) {
	l := e.layout
	r = &row{cells: map[string]string{}, values: map[string]metrics.Ratio{}}
	q := strings.TrimSpace(cell(rec, l.question))
	if q == "" {
		r.cells[ColReason] = "skipped: empty Question cell"
		r.cells[skipMark] = "1"
		return r, true
	}
	if ctx.Err() != nil {
		return nil, false
	}
	ans, err := asker.Ask(ctx, q)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false
		}
		r.cells[ColReason] = "error: " + oneLine(err.Error())
		r.failed = true
		return r, true
	}
	r.cells[ColAnswer] = ans.Answer
	r.cells[ColGenerator] = ans.Generator
	if ans.ModelNotUsed != "" {
		r.cells[ColReason] = "error: the requested model was not used (" + oneLine(ans.ModelNotUsed) + "); the extractive fallback answered, so the row was not scored"
		r.failed = true
		return r, true
	}
	retrieved := make([]string, len(ans.Retrieved))
	for i, p := range ans.Retrieved {
		retrieved[i] = metrics.NormalizePath(p)
	}
	r.cells[ColRetrieved] = strings.Join(retrieved, "\n")
	if !l.evaluate {
		return r, true
	}

	r.cells[ColJudge] = JudgeName(e.judge)
	var reasons []string
	refCell := cell(rec, l.reference)
	refused := ans.Refused || metrics.IsRefusal(ans.Answer)
	c, err := metrics.EvaluateChecklist(ctx, e.judge, metrics.ChecklistInput{
		Items:          metrics.ParseChecklist(cell(rec, l.checklist)),
		Answer:         ans.Answer,
		ReferenceEmpty: strings.TrimSpace(refCell) == "",
		Refused:        refused,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, false
		}
		// A row the judge could not score is a failed row, not a row
		// without checklist metrics: it is counted, and a resumed run
		// asks it again.
		reasons = append(reasons, "error: checklist judge failed: "+oneLine(err.Error()))
		r.failed, r.judgeFailed = true, true
	} else {
		r.put(ColChecklistRecall, c.Recall)
		r.put(ColChecklistPrecision, c.Precision)
		r.put(ColChecklistF1, c.F1)
		r.put(ColChecklistAccuracy, c.Accuracy)
		r.put(ColChecklistSpecificity, c.Specificity)
		r.count(ColChecklistTP, c.TP)
		r.count(ColChecklistFP, c.FP)
		r.count(ColChecklistFN, c.FN)
		r.count(ColChecklistTN, c.TN)
		reasons = append(reasons, "checklist: "+oneLine(c.Reason))
	}

	groups := metrics.ParseReference(refCell)
	ref := metrics.EvaluateReference(groups, retrieved, e.allPages)
	r.setRef("", ref)
	if len(groups) > 0 {
		reasons = append(reasons, fmt.Sprintf("reference: %d/%d relevant page(s) retrieved", ref.TP, len(groups)))
	} else {
		reasons = append(reasons, "reference: none given")
	}
	if l.optimized >= 0 {
		og := metrics.ParseReference(cell(rec, l.optimized))
		if len(og) == 0 { // not optimised: the original reference still applies
			og = groups
		}
		r.setRef(optPrefix, metrics.EvaluateReference(og, retrieved, e.allPages))
	}
	r.cells[ColReason] = strings.Join(reasons, "; ")
	return r, true
}

func (r *row) setRef(prefix string, ref metrics.Reference) {
	r.put(prefix+ColRefRecall, ref.Recall)
	r.put(prefix+ColRefPrecision, ref.Precision)
	r.put(prefix+ColRefSpecificity, ref.Specificity)
	r.put(prefix+ColRefF1, ref.F1)
	r.put(prefix+ColRefAccuracy, ref.Accuracy)
	r.count(prefix+ColRefTP, ref.TP)
	r.count(prefix+ColRefTN, ref.TN)
	r.count(prefix+ColRefFP, ref.FP)
	r.count(prefix+ColRefFN, ref.FN)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// records are the rows of the results file: per output column the
// computed cell, else the input cell it is copied from (src).
func records(cols []string, src []int, out []*row, rows [][]string) [][]string {
	recs := make([][]string, len(out))
	for i, r := range out {
		rec := make([]string, len(cols))
		for j, c := range cols {
			v, ok := r.cells[c] // computed cells win over copied ones
			if !ok && src[j] >= 0 {
				v = cell(rows[i], src[j])
			}
			rec[j] = v
		}
		recs[i] = rec
	}
	return recs
}

// Count lines of the summary, after the metric lines: Value is the number
// of rows, Rows the rows of the input.
const (
	SummaryRowsTotal       = "Rows Total"
	SummaryRowsFailed      = "Rows Failed"
	SummaryRowsJudgeFailed = "Rows Checklist Judge Failed"
	SummaryRowsSkipped     = "Rows Skipped"
)

// writeSummary writes one "Metric,Value,Rows" line per metric column: the
// mean of the unrounded values over the rows where the metric is defined,
// and how many rows that was (failed and skipped rows define no checklist
// metric; a row whose checklist judge failed still has its reference
// metrics). Count lines follow (SummaryRowsTotal …), so a reader sees what
// the averages leave out.
func writeSummary(path string, cols []string, out []*row, res Result) error {
	s := metrics.NewSummary()
	for _, c := range cols {
		for _, r := range out {
			s.Add(c, r.values[c])
		}
	}
	var recs [][]string
	for _, r := range s.Rows() {
		recs = append(recs, []string{r.Metric, r.Mean.Cell(), strconv.Itoa(r.Rows)})
	}
	total := strconv.Itoa(len(out))
	for _, c := range []struct {
		name string
		n    int
	}{{SummaryRowsTotal, len(out)}, {SummaryRowsFailed, res.Failed}, {SummaryRowsJudgeFailed, res.JudgeFailed}, {SummaryRowsSkipped, res.Skipped}} {
		recs = append(recs, []string{c.name, strconv.Itoa(c.n), total})
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("create summary: %w", err)
	}
	werr := csvx.Write(f, nil, []string{"Metric", "Value", "Rows"}, recs)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("write summary %s: %w", path, werr)
	}
	return nil
}
