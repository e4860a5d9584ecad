package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/csvx"
	"github.com/shirube/shirube/internal/eval/batch"
	"github.com/shirube/shirube/internal/eval/optimize"
)

// addBatchFlags adds the flags of `shirube ask input.csv`.
func addBatchFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Int("workers", 5, "parallel workers for a CSV batch")
	f.Bool("enable-rl", false, "batch: folder optimisation loop with up to 5 attempts per question and rollback")
	f.Bool("resume", false, "batch: continue an interrupted run from its checkpoint")
	f.Bool("no-optimize", false, "batch: skip the folder-structure optimisation that follows an evaluation")
	f.String("results", "results", "batch: folder for the results and summary CSVs")
}

// runBatchAsk answers (and evaluates) every row of a CSV, as seed 000's
// `python rag_agent.py input.csv`, then optimises the folder structure for
// the questions whose reference pages were missed.
func runBatchAsk(cmd *cobra.Command, g *globals, path string) error {
	ctx := cmd.Context()
	f := cmd.Flags()
	workers, _ := f.GetInt("workers")
	enableRL, _ := f.GetBool("enable-rl")
	resume, _ := f.GetBool("resume")
	noOpt, _ := f.GetBool("no-optimize")
	outDir, _ := f.GetString("results")
	out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
	warn := func(s string) { fmt.Fprintln(errw, "warning:", s) }

	a, model, err := newAssistant(ctx, g.cfg, warn)
	if err != nil {
		return err
	}
	judgeLLM, judgeModel := optionalChatModel(g.cfg, model, warn)
	res, err := batch.Run(ctx, batch.Options{
		Input:     path,
		OutputDir: outDir,
		Workers:   workers,
		Asker:     batchAsker{a},
		AllPages:  func() []string { return a.Searcher().Index().Pages() },
		Judge:     checklistJudge(judgeLLM, judgeModel),
		Progress:  errw,
		Log:       errw,
		Resume:    resume,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "answered %d rows (%d resumed, %d failed, %d without a question)\n", res.Rows, res.Resumed, res.Failed, res.Skipped)
	if res.JudgeFailed > 0 {
		fmt.Fprintf(out, "%d of the failed rows: the checklist judge failed twice (their checklist metrics are missing; the summary's averages cover the other rows)\n", res.JudgeFailed)
	}
	fmt.Fprintf(out, "results: %s\n", res.Output)
	if !res.Evaluated {
		if enableRL {
			warn("--enable-rl needs ground truth (Reference Document column); nothing to optimise")
		}
		return nil
	}
	fmt.Fprintf(out, "summary: %s\n", res.Summary)
	printSummaryCSV(out, res.Summary)
	if noOpt {
		return nil
	}
	if v, ok := summaryValue(res.Summary, batch.ColRefRecall); ok && (v == "" || v == "1") {
		fmt.Fprintln(out, "folder optimisation: every question found its reference pages; nothing to optimise")
		return nil
	}

	// Seed 000: folder-structure optimisation runs automatically after a
	// batch with ground truth.
	lay := pageLayout(cmd, g.cfg)
	oopt := optimize.Options{
		Input:    res.Output,
		Target:   path, // seed 000: the input CSV's column is updated
		Root:     lay.root,
		Scope:    lay.scope,
		Workers:  workers,
		Proposer: folderProposer(judgeLLM, judgeModel, warn),
		EnableRL: enableRL,
		Log:      errw,
	}
	if enableRL {
		oopt.Asker = batchAsker{a}
		oopt.Reindexer = &reindexer{cfg: lay.cfg, a: a, errw: errw}
	}
	ores, err := optimize.Run(ctx, oopt)
	if err != nil {
		return fmt.Errorf("folder optimisation: %w (the results above are complete; rerun with --no-optimize to skip it)", err)
	}
	printOptimize(out, ores)
	if ores.Manifest != "" {
		return refreshIndex(ctx, lay.cfg, out)
	}
	return nil
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

// printSummaryCSV prints the headline averages of a summary CSV.
func printSummaryCSV(w io.Writer, path string) {
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
