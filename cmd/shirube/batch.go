package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/eval/batch"
	"github.com/shirube/shirube/internal/eval/optimize"
	"github.com/shirube/shirube/internal/eval/pipeline"
)

// batchLong is the help of `shirube batch` (and of `ask input.csv`).
const batchLong = `batch answers every question of a CSV with parallel workers (--workers)
and writes results/<input>_results_YYYYMMDD_HHMMSS.csv. When the CSV also
has Ground Truth, Reference Document or Checklist columns, every answer is
scored with the checklist and reference metrics and a *_summary.csv of the
averages is written beside the results. An interrupted run continues where
it stopped with --resume.

After an evaluation, the folder optimisation runs: for the questions whose
reference pages were not retrieved it ADDS COPIES of those pages to the page
database, in better-named folders, records them in the input CSV's
Optimized Reference Document column (after a backup) and refreshes the
index. Use --no-optimize to leave the page database and the input CSV as
they are; shirube optimize --undo MANIFEST removes the copies of a run.

"shirube ask input.csv" is the same command.`

func newBatchCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "batch input.csv",
		Short: "Answer and evaluate every question of a CSV; may add page copies to the database unless --no-optimize",
		Long:  batchLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBatchAsk(cmd, g, args[0])
		},
	}
	addAnswerFlags(cmd)
	addBatchFlags(cmd)
	return cmd
}

// addBatchFlags adds the flags of `shirube batch input.csv` (and of
// `shirube ask input.csv`).
func addBatchFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Int("workers", 5, "parallel workers for a CSV batch")
	f.Bool("enable-rl", false, "batch: folder optimisation loop with up to 5 attempts per question and rollback")
	f.Bool("resume", false, "batch: continue an interrupted run from its checkpoint")
	f.Bool("no-optimize", false, "batch: do not add page copies to the page database (skip the folder optimisation that follows an evaluation)")
	f.String("results", "results", "batch: folder for the results and summary CSVs")
}

// runBatchAsk wires the batch pipeline (package pipeline): the assistant
// answers, the checklist judge and the folder proposer are the LLM when
// one is configured, and the index is refreshed after copies were made.
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
	lay := pageLayout(cmd, g.cfg)
	_, err = pipeline.Run(ctx, pipeline.Options{
		Batch: batch.Options{
			Input:     path,
			OutputDir: outDir,
			Workers:   workers,
			Asker:     batchAsker{a},
			AllPages:  func() []string { return a.Searcher().Index().Pages() },
			Judge:     checklistJudge(judgeLLM, judgeModel),
			Progress:  errw,
			Log:       errw,
			Resume:    resume,
		},
		NoOptimize: noOpt,
		EnableRL:   enableRL,
		Optimize: func() optimize.Options {
			o := optimize.Options{
				Root:     lay.root,
				Scope:    lay.scope,
				DataDir:  lay.cfg.DataDir,
				Proposer: folderProposer(judgeLLM, judgeModel, warn),
				Log:      errw,
			}
			if enableRL {
				o.Asker = batchAsker{a}
				o.Reindexer = &reindexer{cfg: lay.cfg, a: a, errw: errw}
			}
			return o
		},
		Refresh: func(ctx context.Context) error { return refreshIndex(ctx, lay.cfg, out) },
		Out:     out,
		Warn:    warn,
	})
	return err
}
