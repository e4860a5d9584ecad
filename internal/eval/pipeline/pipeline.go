// Package pipeline is batch evaluation end to end, as `shirube batch
// input.csv` runs it (origin: seed 000's `python rag_agent.py input.csv`):
//
//  1. answer every question of the CSV with parallel workers and, when the
//     CSV carries ground truth, evaluate each answer with the checklist and
//     reference metrics (package batch);
//  2. print the counts and the headline averages of the summary;
//  3. unless optimisation is switched off, or every question already found
//     its reference pages, copy the missed pages into better-named folders
//     of the page database and record the copies in the input CSV
//     (package optimize);
//  4. when copies were made, refresh the index so that search and the next
//     run's Opt Ref metrics see them.
//
// The caller supplies what needs the rest of the program — the assistant
// that answers, the judge and proposer, the index refresh — through
// Options; this package decides what runs when and reports it.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/shirube/shirube/internal/csvx"
	"github.com/shirube/shirube/internal/eval/batch"
	"github.com/shirube/shirube/internal/eval/optimize"
)

// ErrSkipOptimize wraps a failed optimisation step: the evaluation before it
// is complete, and a rerun without the step skips it (front ends name their
// switch for that).
var ErrSkipOptimize = errors.New("rerun without optimisation")

// Options configure Run.
type Options struct {
	// Batch answers and evaluates the input CSV (Batch.Input).
	Batch batch.Options
	// NoOptimize skips the folder optimisation that follows an evaluation.
	NoOptimize bool
	// EnableRL asks the optimisation to re-index and re-ask after each copy
	// and delete the copies that did not help.
	EnableRL bool
	// Optimize returns the optimisation's settings (page database,
	// proposer, and with EnableRL the asker and re-indexer). It is called
	// only when an optimisation runs; Run sets Input (the results CSV),
	// Target (the input CSV, whose Optimized Reference Document column is
	// updated), Workers and EnableRL.
	Optimize func() optimize.Options
	// Refresh brings the index up to date after the optimisation created
	// page copies; nil skips it.
	Refresh func(ctx context.Context) error
	Out     io.Writer    // the report; nil discards
	Warn    func(string) // one-line warnings; nil drops them
}

// Result is what a pipeline run did.
type Result struct {
	Batch batch.Result
	// Optimized is set when the folder optimisation ran; Optimize is its
	// result.
	Optimized bool
	Optimize  optimize.Result
}

// Run answers and evaluates the input CSV, then optimises the folder
// structure for the questions whose reference pages were missed. An
// optimisation failure is returned after the batch results are complete
// and written.
func Run(ctx context.Context, o Options) (Result, error) {
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	warn := o.Warn
	if warn == nil {
		warn = func(string) {}
	}
	var r Result
	res, err := batch.Run(ctx, o.Batch)
	r.Batch = res
	if err != nil {
		return r, err
	}
	fmt.Fprintf(out, "answered %d rows (%d resumed, %d failed, %d without a question)\n", res.Rows, res.Resumed, res.Failed, res.Skipped)
	if res.JudgeFailed > 0 {
		fmt.Fprintf(out, "%d of the failed rows: the checklist judge failed twice (their checklist metrics are missing; the summary's averages cover the other rows)\n", res.JudgeFailed)
	}
	fmt.Fprintf(out, "results: %s\n", res.Output)
	if !res.Evaluated {
		if o.EnableRL {
			warn("--enable-rl needs ground truth (Reference Document column); nothing to optimise")
		}
		return r, nil
	}
	fmt.Fprintf(out, "summary: %s\n", res.Summary)
	PrintSummary(out, res.Summary)
	if o.NoOptimize || o.Optimize == nil {
		return r, nil
	}
	if v, ok := summaryValue(res.Summary, batch.ColRefRecall); ok && (v == "" || v == "1") {
		fmt.Fprintln(out, "folder optimisation: every question found its reference pages; nothing to optimise")
		return r, nil
	}

	oopt := o.Optimize()
	oopt.Input = res.Output
	oopt.Target = o.Batch.Input
	oopt.Workers = o.Batch.Workers
	oopt.EnableRL = o.EnableRL
	ores, err := optimize.Run(ctx, oopt)
	if err != nil {
		return r, fmt.Errorf("folder optimisation: %w (the results above are complete; %w to skip it)", err, ErrSkipOptimize)
	}
	r.Optimized, r.Optimize = true, ores
	optimize.Report(out, ores)
	if ores.Manifest != "" && o.Refresh != nil {
		return r, o.Refresh(ctx)
	}
	return r, nil
}

// summaryHighlights are the summary rows printed after a batch.
var summaryHighlights = []string{
	batch.ColChecklistRecall, batch.ColChecklistPrecision, batch.ColChecklistF1,
	batch.ColRefRecall, batch.ColRefPrecision, batch.ColRefSpecificity, batch.ColRefF1,
	"Opt " + batch.ColRefRecall,
}

// summaryValue returns the Value cell of one metric of a summary CSV.
func summaryValue(path, metric string) (string, bool) {
	_, rows, _, err := csvx.ReadFile(path)
	if err != nil {
		return "", false
	}
	for _, r := range rows {
		if len(r) >= 2 && r[0] == metric {
			return r[1], true
		}
	}
	return "", false
}

// PrintSummary prints the headline averages of a summary CSV, each with
// the number of rows it covers.
func PrintSummary(w io.Writer, path string) {
	header, rows, _, err := csvx.ReadFile(path)
	if err != nil || len(header) < 2 {
		return
	}
	want := map[string]bool{}
	for _, m := range summaryHighlights {
		want[m] = true
	}
	for _, r := range rows {
		if len(r) >= 2 && want[r[0]] {
			v := r[1]
			if v == "" {
				v = "(undefined)"
			}
			extra := ""
			if len(r) >= 3 && len(header) >= 3 {
				extra = fmt.Sprintf("  (%s %s)", strings.ToLower(header[2]), r[2])
			}
			fmt.Fprintf(w, "  %-22s %s%s\n", r[0], v, extra)
		}
	}
}
