package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/eval/questions"
)

func newQuestionsCmd(g *globals) *cobra.Command {
	var output, resultsDir string
	var seed int64
	var offline bool
	var perPage, workers int
	var negative float64
	cmd := &cobra.Command{
		Use:   "questions",
		Short: "Generate the anticipated-question CSV (Question, Ground Truth, Reference Document, Page, Checklist)",
		Long: `questions reads every document of the data folder and writes a test set for
the batch evaluation: questions answered on one page, questions that need
several pages of a document, and about 10 % questions the documents cannot
answer (empty Reference Document, refusal as Ground Truth).

With an API key an LLM writes the questions from each page; without one (or
with --offline) a deterministic generator turns salient sentences into
questions whose ground truth is the sentence itself. The same --seed gives
the same file. Reference Document uses the page identities of the index
(database/<folder>/<document>/page_NNN.md), so run it with the same --data
and --database as shirube index (the defaults are the folders the index at
--index was built from).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			warn := func(s string) { fmt.Fprintln(errw, "warning:", s) }
			lay := pageLayout(cmd, g.cfg) // the index's folders unless --data/--database
			opt := questions.Options{
				DataDir:       lay.cfg.DataDir,
				DatabaseDir:   lay.cfg.DatabaseDir,
				Output:        output,
				ResultsDir:    resultsDir,
				Seed:          seed,
				PerPage:       perPage,
				Workers:       workers,
				NegativeRatio: negative,
				Warn:          warn,
			}
			if !offline && g.cfg.LLMProvider() != "" {
				m, name, err := newChatModel(g.cfg)
				if err != nil {
					return err
				}
				opt.LLM, opt.Model = m, name
			}
			res, err := questions.Generate(cmd.Context(), opt)
			if err != nil {
				return err
			}
			kinds := map[string]int{}
			for _, r := range res.Rows {
				kinds[r.Kind]++
			}
			gen := questions.GeneratorOffline
			if opt.LLM != nil {
				gen = "llm:" + opt.Model
			}
			fmt.Fprintf(out, "%d questions from %d documents (%d single-page, %d multi-page, %d not in the documents; generator %s)\n",
				len(res.Rows), res.Documents, kinds[questions.KindPage], kinds[questions.KindMulti], kinds[questions.KindNegative], gen)
			if res.Checked > 0 {
				pass := res.Checked - len(res.Rejected)
				fmt.Fprintf(out, "page check: %d of %d single-page questions pass (%.0f%%): answer on the page, no fragment; %d left out\n",
					pass, res.Checked, 100*float64(pass)/float64(res.Checked), len(res.Rejected))
				for _, r := range res.Rejected {
					fmt.Fprintf(errw, "left out: %s — %s\n", r.Row.Question, r.Why)
				}
			}
			if len(res.Skipped) > 0 {
				fmt.Fprintf(out, "skipped %d file(s), page(s) or group(s); see the warnings above\n", len(res.Skipped))
			}
			fmt.Fprintf(out, "questions: %s\nnext: shirube ask %s\n", res.Path, res.Path)
			return nil
		},
	}
	f := cmd.Flags()
	settingFlag(f, "data", "folder of source documents")
	settingFlag(f, "database", "page database the identities refer to")
	f.StringVarP(&output, "output", "o", "", "CSV to write (default: results/questions_YYYYMMDD_HHMMSS.csv)")
	f.StringVar(&resultsDir, "results", "results", "folder for the default output name")
	f.Int64Var(&seed, "seed", 0, "seed for template and page choices (same seed, same output)")
	f.BoolVar(&offline, "offline", false, "use the offline generator even when an API key is set")
	f.IntVar(&perPage, "per-page", 0, "questions per page (default 1; 3 for one-page documents)")
	f.IntVar(&workers, "workers", 0, "parallel LLM requests (default 4)")
	f.Float64Var(&negative, "negative-ratio", 0, "share of questions the documents cannot answer (default 0.1; negative disables)")
	settingFlag(f, "index", "index whose data and database folders are the defaults")
	settingFlag(f, "provider")
	settingFlag(f, "model", "model id or alias")
	return cmd
}
