package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/feedback"
)

// newFeedbackCmd is `shirube feedback`: the ratings given on the chat page.
func newFeedbackCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "feedback",
		Short: "Work with the 👍/👎 ratings given on the chat page",
	}
	var out string
	export := &cobra.Command{
		Use:   "export --out eval.json",
		Short: "Write the answers rated 👎 as cases of the evaluation dataset (shirube eval reads it)",
		Long: `export reads <logs>/feedback.jsonl, written by shirube serve when people
rate answers, and writes the answers rated 👎 (the last rating of each answer
counts) as test cases in the format of eval/eval_dataset.json. A refusal rated
👎 expects an answer (expected_flags); any other answer rated 👎 must not come
back (should_not_contain holds its first sentence). The comment, the rejected
answer and the cited pages go along in "feedback": add expected_keywords and
expected_citations from the documents, then run: shirube eval eval.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("name the file to write with --out, e.g. --out eval/feedback_cases.json")
			}
			n, skipped, err := feedback.Export(g.cfg.LogsDir, out, time.Now())
			if err != nil {
				return err
			}
			if skipped > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %d unreadable line(s) of %s skipped\n", skipped, feedback.FileName)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d case(s) from 👎 ratings to %s — run: shirube eval %s\n", n, out, out)
			return nil
		},
	}
	export.Flags().StringVar(&out, "out", "", "the dataset file to write (JSON, replaced if it exists)")
	settingFlag(export.Flags(), "logs")
	cmd.AddCommand(export)
	return cmd
}
