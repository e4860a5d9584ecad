package main

import (
	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/bench"
)

// newBenchDangerCmd is `shirube bench danger`: precision and recall of the
// danger flag on a labelled question set.
func newBenchDangerCmd(jsonOut *bool) *cobra.Command {
	var qfile string
	cmd := &cobra.Command{
		Use:   "danger --questions FILE",
		Short: "Precision and recall of the danger flag (承認・確認が必要) on labelled questions",
		Long: `danger decides every question of a labelled JSONL set (id, question,
dangerous, kind, note; optional answer and part) as ask does before any text
streams — guard.AssessQuestion — refined with the answer when the case gives
one (guard.AssessAnswer), and prints per part (tuned, heldout) precision,
recall and F1 next to seed 002's keyword match on the same text, then every
question the detector got wrong. No index and no model are needed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			qs, err := bench.LoadDanger(qfile)
			if err != nil {
				return err
			}
			rep := bench.Danger(qs)
			if *jsonOut {
				return printReport(cmd.OutOrStdout(), rep, true)
			}
			return rep.WriteText(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&qfile, "questions", "eval/danger_questions.jsonl", "labelled questions (JSONL)")
	return cmd
}
