package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/eval/judge"
)

func newJudgeCmd(g *globals) *cobra.Command {
	var o judge.Options
	var delay time.Duration
	var seed uint64
	cmd := &cobra.Command{
		Use:   "judge",
		Short: "Score RAG answers against ground truth: binary precision, recall and accuracy (LLM or lexical judge)",
		Long: `judge reads questions.csv, ground_truth.csv and rag_answers.csv (joined by
Question Number), shows what it found with an estimated cost, asks
"Proceed? [Y/n]" (--yes skips it), and scores each answer with three binary
metrics. Results go to Evaluation_Runs/precision_scores_YYYYMMDD_HHMMSS.csv
with #SUMMARY rows on top; rag_eval.log is the debug log. An interrupted run
resumes from its checkpoint.

The default judge is Claude Sonnet through ANTHROPIC_API_KEY; with
--provider openai (or only OPENAI_API_KEY set) an OpenAI-compatible server
judges. --judge lexical scores offline by word overlap, without any LLM.
An evaluation_prompt.txt in the working folder replaces the built-in prompt.
When no question got a verdict (every judge reply unreadable), judge exits 3
and keeps the checkpoint; the next run resumes and asks them again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Out, o.In = cmd.OutOrStdout(), cmd.InOrStdin()
			o.Seed = seed
			o.Delay = delay
			if delay <= 0 {
				o.Delay = -1 // no pause
			}
			if strings.ToLower(o.Judge) != judge.JudgeLexical {
				m, name, err := newJudgeModel(g.cfg)
				if errors.Is(err, errNoJudgeKey) {
					return userError(err)
				}
				if err != nil {
					return userError(fmt.Errorf("%w\nTo score offline without an LLM, run: shirube judge --judge lexical", err))
				}
				o.Completer = m
				o.Model = name
			}
			if _, err := judge.Run(cmd.Context(), o); err != nil {
				if errors.Is(err, judge.ErrDeclined) {
					return exitCode{code: 1, msg: err.Error()}
				}
				if errors.Is(err, judge.ErrNoVerdict) {
					return exitCode{code: ExitJudgeFailed, msg: err.Error()}
				}
				return userError(err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.QuestionsCSV, "questions", judge.DefaultQuestionsCSV, "questions CSV (Question Number, Question)")
	f.StringVar(&o.GroundTruthCSV, "ground-truth", judge.DefaultGroundTruthCSV, "ground truth CSV (Question Number, Ground Truth)")
	f.StringVar(&o.AnswersCSV, "answers", judge.DefaultAnswersCSV, "RAG answers CSV (Question Number, RAG Answer), e.g. from shirube convert")
	f.StringVar(&o.OutputDir, "output-dir", judge.DefaultOutputDir, "folder for precision_scores_*.csv")
	f.StringVar(&o.LogFile, "log", judge.DefaultLogFile, "debug log, overwritten each run")
	f.StringVar(&o.PromptFile, "prompt", "", "prompt file (default: evaluation_prompt.txt if present, else built-in)")
	f.StringVar(&o.Judge, "judge", judge.JudgeLLM, "llm or lexical (offline word overlap)")
	f.BoolVarP(&o.Yes, "yes", "y", false, "answer yes to the resume and proceed prompts")
	f.Uint64Var(&seed, "seed", 0, "seed of the random evaluation order (0 = random; the seed used is printed)")
	f.DurationVar(&delay, "delay", judge.DefaultDelay, "pause between model calls (0 = none)")
	settingFlag(f, "provider", "anthropic (default when ANTHROPIC_API_KEY is set) or openai")
	settingFlag(f, "model", "sonnet (default), haiku, opus or a model id; for openai e.g. gpt-4o-mini")
	return cmd
}
