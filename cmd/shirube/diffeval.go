package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/eval/diffeval"
	"github.com/shirube/shirube/internal/index"
)

// DefaultDiffCases is the seed 004 case set of the repository.
const DefaultDiffCases = "eval/law_html_ja_cases.json"

// corpusDataDir resolves a case file's corpus: as written (relative to the
// working folder), else relative to the case file; its html/ subfolder
// when there is one (the law set keeps text twins beside the HTML).
func corpusDataDir(casesPath, corpus string) (string, bool) {
	if corpus == "" {
		return "", false
	}
	cands := []string{corpus}
	if !filepath.IsAbs(corpus) {
		cands = append(cands, filepath.Join(filepath.Dir(casesPath), corpus))
	}
	for _, c := range cands {
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			if fi, err := os.Stat(filepath.Join(c, "html")); err == nil && fi.IsDir() {
				return filepath.Join(c, "html"), true
			}
			return c, true
		}
	}
	return "", false
}

// buildVariant builds an index of dataDir with one HTML mode into dir.
func buildVariant(ctx context.Context, cfg config.Config, dataDir, dir, htmlMode string, errw io.Writer) (config.Config, error) {
	cfg.DataDir = dataDir
	cfg.DatabaseDir = filepath.Join(dir, "database")
	cfg.IndexDir = filepath.Join(dir, "index")
	opt, err := buildOptions(cfg, func(s string) { fmt.Fprintln(errw, "warning:", s) })
	if err != nil {
		return cfg, err
	}
	opt.HTMLMode = htmlMode
	sum, err := index.Build(ctx, opt)
	if err != nil {
		return cfg, fmt.Errorf("index %s with HTML mode %s: %w", dataDir, htmlMode, err)
	}
	fmt.Fprintf(errw, "built %s index: %d documents, %d pages, %d chunks in %.1fs\n", htmlMode, sum.Documents, sum.Pages, sum.Chunks, sum.Seconds)
	return cfg, nil
}

func newDiffEvalCmd(g *globals) *cobra.Command {
	var cases, dirA, dirB, nameA, nameB, outDir, work string
	var runs int
	cmd := &cobra.Command{
		Use:   "diff-eval",
		Short: "Compare two configurations on a case set (by default: HTML ingested as text vs as Markdown)",
		Long: `diff-eval asks every case of --cases --runs times on configuration A and on
configuration B and compares evidence hit rate, keyword recall,
hallucination rate, answer stability, PASS and SKIPPED rates. The report is
written to eval/ as JSON, Markdown and a PNG bar chart.

By default it indexes the same data folder twice into a temporary folder:
A with HTML extracted as plain text, B with HTML converted to Markdown. The
data folder is --data, else the case file's "corpus" (its html/ subfolder
when present); a data folder holding both HTML and text copies of the same
documents is warned about. With --a and --b it compares two existing index
folders. The exit status is 1 when every case of a configuration was
SKIPPED (no detectable answer: refusals, or failed answers): nothing was
compared.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			warn := func(s string) { fmt.Fprintln(errw, "warning:", s) }
			if (dirA == "") != (dirB == "") {
				return errors.New("give both --a and --b index folders, or neither to build the HTML text/Markdown pair")
			}
			cfgA, cfgB := g.cfg, g.cfg
			if dirA != "" {
				cfgA.IndexDir, cfgB.IndexDir = dirA, dirB
				if nameA == "" {
					nameA = dirA
				}
				if nameB == "" {
					nameB = dirB
				}
			} else {
				data := ""
				if fl := cmd.Flags().Lookup("data"); fl != nil && fl.Changed {
					data = g.cfg.DataDir
				} else {
					cf, _, err := diffeval.LoadCases(cases)
					if err != nil {
						return err
					}
					d, ok := corpusDataDir(cases, cf.Corpus)
					if !ok {
						return fmt.Errorf("no data folder: %s names corpus %q, which was not found; pass --data DIR (the folder to index twice) or --a/--b index folders", cases, cf.Corpus)
					}
					data = d
				}
				if tw, err := diffeval.FindTwins(data); err != nil {
					warn(err.Error())
				} else if w := tw.Warning(data); w != "" {
					warn(w)
				}
				base := work
				if base == "" {
					tmp, err := os.MkdirTemp("", "shirube-diff-eval-")
					if err != nil {
						return err
					}
					defer os.RemoveAll(tmp)
					base = tmp
				}
				fmt.Fprintf(errw, "indexing %s twice (HTML as text, HTML as Markdown)...\n", data)
				var err error
				if cfgA, err = buildVariant(ctx, g.cfg, data, filepath.Join(base, "text"), "text", errw); err != nil {
					return err
				}
				if cfgB, err = buildVariant(ctx, g.cfg, data, filepath.Join(base, "markdown"), "markdown", errw); err != nil {
					return err
				}
				if nameA == "" {
					nameA = "html-text"
				}
				if nameB == "" {
					nameB = "markdown"
				}
			}
			a, _, err := newAssistant(ctx, cfgA, warn)
			if err != nil {
				return fmt.Errorf("configuration A (%s): %w", cfgA.IndexDir, err)
			}
			b, _, err := newAssistant(ctx, cfgB, warn)
			if err != nil {
				return fmt.Errorf("configuration B (%s): %w", cfgB.IndexDir, err)
			}
			sizeA, err := measureSizes(cfgA)
			if err != nil {
				return err
			}
			sizeB, err := measureSizes(cfgB)
			if err != nil {
				return err
			}
			rep, err := diffeval.Run(ctx, diffeval.Options{
				Cases: cases, A: historyAsker{a, "diffeval"}, B: historyAsker{b, "diffeval"},
				NameA: nameA, NameB: nameB, Runs: runs, OutDir: outDir, Progress: errw,
				SizesA: &sizeA, SizesB: &sizeB,
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%-20s %10s %10s %8s  %s\n", "metric", trunc(nameA, 10), trunc(nameB, 10), "B-A", "better")
			for _, m := range rep.Metrics {
				fmt.Fprintf(out, "%-20s %10.4f %10.4f %+8.4f  %-6s %s\n", m.Key, m.A, m.B, m.Diff, m.Better, m.Label)
			}
			for _, sum := range []diffeval.Summary{rep.A, rep.B} {
				fmt.Fprintf(out, "%s: PASS %d, FAIL %d, SKIPPED %d of %d (generator: %s; judge: %s)\n",
					sum.Name, sum.Pass, sum.Fail, sum.Skipped, sum.Cases, sum.GeneratorsLine(), sum.Judge)
			}
			fmt.Fprintf(out, "%s size: %s\n%s size: %s\n", nameA, sizeA.Line(), nameB, sizeB.Line())
			fmt.Fprintf(out, "report: %s (also .md and .png)\n", rep.JSONPath)
			if name, why, none := rep.Unevaluated(); none {
				return userError(fmt.Errorf("every case of %s was SKIPPED (%s), so nothing was compared. Check that the index holds the case file's documents (--data / --a / --b) and, if the answers failed, that the LLM is reachable (key, OPENAI_API_BASE / ANTHROPIC_BASE_URL)", name, why))
			}
			return nil
		},
	}
	addAnswerFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&cases, "cases", DefaultDiffCases, "case file: {\"cases\": [{\"id\", \"question\", \"expected_keywords\"}]} (see docs/EVALUATION.md)")
	f.String("data", "", "folder to index twice (default: the case file's corpus)")
	f.StringVar(&dirA, "a", "", "index folder of configuration A (with --b; skips building)")
	f.StringVar(&dirB, "b", "", "index folder of configuration B")
	f.StringVar(&nameA, "name-a", "", "name of A in the report (default html-text, or the --a folder)")
	f.StringVar(&nameB, "name-b", "", "name of B in the report (default markdown, or the --b folder)")
	f.IntVar(&runs, "runs", diffeval.DefaultRuns, "runs per case and configuration")
	f.StringVar(&outDir, "out-dir", diffeval.DefaultOutDir, "folder for the report")
	f.StringVar(&work, "work", "", "keep the two built indexes in this folder (default: a temporary folder, removed)")
	settingFlag(f, "chunk-size", "chunk size of the built indexes")
	settingFlag(f, "chunk-overlap", "chunk overlap of the built indexes")
	settingFlag(f, "embedder", "embedder of the built indexes: local or openai")
	return cmd
}

func trunc(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// measureSizes measures what the index of cfg occupies: its source and
// page database folders as the index metadata records them (else as cfg
// names them), and every index generation.
func measureSizes(cfg config.Config) (diffeval.Sizes, error) {
	data, db := cfg.DataDir, cfg.DatabaseDir
	if m, err := index.ReadMeta(cfg.IndexDir); err == nil {
		if m.DataDir != "" {
			data = m.DataDir
		}
		if m.DatabaseDir != "" {
			db = m.DatabaseDir
		}
	}
	return diffeval.MeasureSizes(data, db, cfg.IndexDir)
}
