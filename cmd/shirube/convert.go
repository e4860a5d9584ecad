package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/eval/convert"
)

func newConvertCmd(g *globals) *cobra.Command {
	var qcsv, output string
	cmd := &cobra.Command{
		Use:   "convert [RAG_JSON_Files/ | answers.json]",
		Short: "Turn a RAG system's JSON answers into rag_answers.csv, the input of judge",
		Long: `convert reads every *.json file of a folder (default RAG_JSON_Files) — an
array of {question, answer} objects, an object holding such an array, or a
flat {"Q1": "answer"} map — and ties each answer to questions.csv by the
text of its question (difflib ratio ≥ 0.85 after normalisation; flat keys
like Q3 by number). The result is rag_answers.csv with Question Number,
Question, RAG Answer, Match Confidence and Match Score. Works offline.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := convert.DefaultInput
			if len(args) == 1 {
				in = args[0]
			}
			rep, err := convert.Run(cmd.Context(), convert.Options{Input: in, QuestionsCSV: qcsv, Output: output, Log: cmd.OutOrStdout()})
			if err != nil {
				return userError(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d of %d answers matched a question; wrote %s\nnext: shirube judge --answers %s\n", len(rep.Matches), rep.Items, rep.Output, rep.Output)
			return nil
		},
	}
	cmd.Flags().StringVar(&qcsv, "questions", convert.DefaultQuestionsCSV, "questions CSV (Question Number, Question)")
	cmd.Flags().StringVarP(&output, "output", "o", convert.DefaultOutput, "CSV to write (replaced if present)")
	return cmd
}
