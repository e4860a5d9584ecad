package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/eval/evalset"
)

func newEvalCmd(g *globals) *cobra.Command {
	var outDir, judgeMode string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "eval [eval/eval_dataset.json]",
		Short: "Run the assistant's test set (eval_dataset.json): PASS when at least 70% of cases score 70 or more",
		Long: `eval asks every case of the dataset (default eval/eval_dataset.json) with
the configured assistant, checks citations, keywords, forbidden phrases and
guard flags deterministically, and — when an LLM is configured — adds the
six-axis LLM judge. Results go to eval/evaluation_results_YYYY-MM-DD.json.
A case with a forbidden phrase, a wrong flag or a missing banner fails
whatever its score. The exit status is 1 when the verdict is FAIL and 3
(ExitJudgeFailed) when the LLM judge failed on any case: such a case was not
judged, counts as failed, and "scored_by" in the results says so. With a
judge, missing expected keywords lower the judge's score by their share.
Every case records its "generator"; a case the extractive fallback answered
because the requested model failed is not scored, and the run exits 3.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			errw := cmd.ErrOrStderr()
			warn := func(s string) { fmt.Fprintln(errw, "warning:", s) }
			ds := evalset.DefaultDataset
			if len(args) == 1 {
				ds = args[0]
			}
			a, model, err := newAssistant(ctx, g.cfg, warn)
			if err != nil {
				return err
			}
			opt := evalset.Options{Dataset: ds, Asker: historyAsker{a, "eval"}, OutDir: outDir, Progress: cmd.OutOrStdout()}
			if jsonOut {
				opt.Progress = errw
			}
			switch judgeMode {
			case "auto":
				if m, _ := optionalChatModel(g.cfg, model, warn); m != nil {
					opt.Judge = m
				}
			case "llm":
				m, _, err := newChatModel(g.cfg)
				if err != nil {
					return err
				}
				opt.Judge = m
			case "offline":
			default:
				return fmt.Errorf("--judge %q: use auto, llm or offline", judgeMode)
			}
			res, err := evalset.Run(ctx, opt)
			if err != nil {
				return err
			}
			if jsonOut {
				if err := printReport(cmd.OutOrStdout(), res, true); err != nil {
					return err
				}
			}
			if res.JudgeFailed > 0 {
				return exitCode{code: ExitJudgeFailed, msg: judgeFailedMessage(res)}
			}
			if res.ModelNotUsed > 0 {
				return exitCode{code: ExitJudgeFailed, msg: fmt.Sprintf("ERROR: the requested model was not used for %d of %d cases (the LLM failed; the extractive fallback answered), so they were not scored — check the key, the model and OPENAI_API_BASE / ANTHROPIC_BASE_URL; details in %s", res.ModelNotUsed, res.Total, res.Path)}
			}
			if !res.Passed {
				return exitCode{code: 1, msg: fmt.Sprintf("FAIL: %d of %d cases passed (%.0f%%, %d%% needed) — details in %s", res.PassCount, res.Total, 100*res.PassRate, evalset.PassRatePct, res.Path)}
			}
			return nil
		},
	}
	addAnswerFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&outDir, "out-dir", evalset.DefaultOutDir, "folder for evaluation_results_*.json")
	f.StringVar(&judgeMode, "judge", "auto", "auto (LLM judge when a key is set), llm or offline (deterministic checks only)")
	f.BoolVar(&jsonOut, "json", false, "print the results as JSON")
	return cmd
}

// ExitJudgeFailed is the exit status of eval when the LLM judge failed on
// at least one case: the run is an error, not a FAIL of the assistant.
const ExitJudgeFailed = 3

// judgeFailedMessage says how many cases the judge could not score, why
// (the first error) and what to do.
func judgeFailedMessage(res evalset.Result) string {
	first := ""
	for _, c := range res.Cases {
		if c.JudgeError != "" {
			first = c.JudgeError
			break
		}
	}
	return fmt.Sprintf("ERROR: the LLM judge (%s) failed on %d of %d cases (%d judged); those cases count as failed and were scored by the deterministic checks only (scored_by %q) — details in %s\nfirst judge error: %s\nFix the judge's key, model or endpoint and run again, or run offline with --judge offline.",
		res.Judge, res.JudgeFailed, res.Total, res.Judged, evalset.JudgeFallback, res.Path, first)
}
