package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/eval/optimize"
)

func newOptimizeCmd(g *globals) *cobra.Command {
	var separate, enableRL bool
	var undo, outDir string
	var workers, attempts int
	cmd := &cobra.Command{
		Use:   "optimize results.csv | optimize --undo MANIFEST",
		Short: "Copy the pages a batch evaluation missed into better-named folders of the page database; --undo removes the copies",
		Long: `optimize reads the results CSV of a batch evaluation (shirube ask input.csv)
and, for every question whose reference pages were not retrieved
(Ref Recall < 1), proposes a more telling folder inside the page database and
copies the missed pages there. The copies are recorded as aliases
("original|copy", merged with the aliases already there) in the Optimized
Reference Document column of the input CSV, after a backup copy
<stem>_backup_<time>.csv is written next to it (--separate writes
<stem>_optimized_<time>.csv instead), so the next batch run scores both.
The index is refreshed afterwards, and again after --undo.

Pages are only copied, never moved; every file and folder created is listed
in optimize_manifest_*.json, and --undo MANIFEST deletes them again (files
changed since are kept and reported). Undo only touches the page database
(--database, default: the index's) whatever the manifest says.

The proposer is the LLM when an API key is set, else an offline rule that
prefers an existing folder whose path shares the question's key terms.
--enable-rl re-indexes after each copy, asks the question again and deletes
copies that did not help (up to --attempts per question).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if undo != "" {
				return cobra.NoArgs(cmd, args)
			}
			if len(args) != 1 {
				return errors.New("give the results CSV of a batch run (shirube optimize results/input_results_….csv), or --undo MANIFEST")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			warn := func(s string) { fmt.Fprintln(errw, "warning:", s) }
			lay := pageLayout(cmd, g.cfg)
			if undo != "" {
				// Undo touches only the page database it is run against,
				// whatever root the manifest names.
				rep, err := optimize.Undo(ctx, undo, filepath.Join(lay.root, lay.scope))
				if err != nil {
					return err
				}
				if len(rep.Removed) > 0 {
					// The index still holds the deleted copies until it is rebuilt.
					if err := refreshIndex(ctx, pageLayout(cmd, g.cfg).cfg, out); err != nil {
						return err
					}
				}
				fmt.Fprintf(out, "removed %d file(s) and folder(s) created by the optimisation\n", len(rep.Removed))
				for _, p := range rep.Removed {
					fmt.Fprintln(out, "  removed", p)
				}
				for _, p := range rep.Problems {
					fmt.Fprintln(out, "  kept:", p)
				}
				if len(rep.Problems) > 0 {
					return exitCode{code: 1, msg: fmt.Sprintf("undo left %d item(s) in place; see the list above", len(rep.Problems))}
				}
				return nil
			}
			opt := optimize.Options{
				Input:       args[0],
				Root:        lay.root,
				Scope:       lay.scope,
				DataDir:     lay.cfg.DataDir,
				OutputDir:   outDir,
				Separate:    separate,
				Workers:     workers,
				EnableRL:    enableRL,
				MaxAttempts: attempts,
				Log:         errw,
			}
			var model chatModel
			if enableRL {
				a, m, err := newAssistant(ctx, g.cfg, warn)
				if err != nil {
					return fmt.Errorf("--enable-rl asks the questions again and needs the index: %w", err)
				}
				model = m
				opt.Asker = batchAsker{a}
				opt.Reindexer = &reindexer{cfg: lay.cfg, a: a, errw: errw}
			}
			m, name := optionalChatModel(g.cfg, model, warn)
			opt.Proposer = folderProposer(m, name, warn)
			res, err := optimize.Run(ctx, opt)
			if err != nil {
				return err
			}
			optimize.Report(out, res)
			if res.Manifest != "" {
				return refreshIndex(ctx, lay.cfg, out)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&separate, "separate", false, "leave the input CSV as it is and write <stem>_optimized_<time>.csv instead")
	f.Bool("in-place", true, "update the input CSV (the default; kept for old scripts)")
	f.MarkHidden("in-place")
	f.BoolVar(&enableRL, "enable-rl", false, "re-index and re-ask after each copy; delete copies that did not help")
	f.StringVar(&undo, "undo", "", "delete what the run of this optimize_manifest_*.json created")
	f.StringVar(&outDir, "output-dir", "", "folder for the new CSV and the manifest (default: the input's folder)")
	f.IntVar(&workers, "workers", optimize.DefaultWorkers, "questions analysed in parallel")
	f.IntVar(&attempts, "attempts", optimize.DefaultMaxAttempts, "RL attempts per question")
	settingFlag(f, "database", "page database (default: the one the index was built from)")
	settingFlag(f, "data", "source folder, for re-indexing with --enable-rl (default: the index's)")
	addAnswerFlags(cmd)
	return cmd
}
