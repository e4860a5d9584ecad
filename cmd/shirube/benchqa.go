package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/bench"
	"github.com/shirube/shirube/internal/csvx"
)

// newBenchQACmd is `shirube bench qa`: answer quality on real documents.
func newBenchQACmd(g *globals, jsonOut *bool) *cobra.Command {
	var qfile, dataDir, indexDir, profiles, out string
	cmd := &cobra.Command{
		Use:   "qa --questions FILE (--data DIR | --index DIR)",
		Short: "Answer quality on a document-QA set: key facts, refusals, gold evidence, length, latency per profile",
		Long: `qa runs every question of a JSONL question set (the qa-ja-docs layout: id,
kind, question, source, page, article, gold_span, key_facts, alt_spans,
optionally qtype)
through exactly the path ask uses — guardrails, retrieval (plain or the
agentic profile), generation, claim verification — once per profile, and
reports per profile:

  key fact contained (any / all)     answerable questions whose answer holds a key fact
  unanswerable refused               questions without key facts that were refused
  answerable refused                 answerable questions that were refused
  gold cited, hit@1, hit@5           gold page or article among the cited evidence,
                                     the first and the first five retrieved chunks
  mean / p95 answer length           characters, answers given (refusals excluded)
  latency p50 / p95                  end to end, per question

then the refusals by the gate's reason, and key fact any / refused per
source format (kind) and per question type (qtype, when the set gives
one).

A question's source is the answering document's path relative to the data
folder (ops/guide.md), or a bare file name (guide.md), which matches a
document of that stem in any folder. Answers and facts are compared after
NFKC with white space removed. With --data the folder is indexed first
(into --index when given, else a temporary folder); with --index an
existing index is used. No audit log is written. --out writes one CSV row
per question and profile, with the gate's decision (answer, refuse,
clarify), its evidence score and the reason it refused.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			qs, err := bench.LoadQA(qfile)
			if err != nil {
				return err
			}
			cfg := g.cfg
			errw := cmd.ErrOrStderr()
			switch {
			case dataDir != "":
				if indexDir == "" {
					tmp, err := os.MkdirTemp("", "shirube-bench-qa-")
					if err != nil {
						return err
					}
					defer os.RemoveAll(tmp)
					indexDir = tmp
				}
				cfg.DataDir = dataDir
				cfg.IndexDir = filepath.Join(indexDir, "index")
				cfg.DatabaseDir = filepath.Join(indexDir, "database")
				sum, err := runIndex(ctx, cfg, true, errw) // always re-read: the point is to measure the current code
				if err != nil {
					return err
				}
				fmt.Fprintf(errw, "indexed %d documents, %d pages, %d chunks\n", sum.Documents, sum.Pages, sum.Chunks)
			case indexDir != "":
				cfg.IndexDir = indexDir
			default:
				return fmt.Errorf("bench qa needs --data DIR (documents to index) or --index DIR (an existing index)")
			}
			s, err := openSearcher(ctx, cfg)
			if err != nil {
				return err
			}
			warn := func(s string) { fmt.Fprintln(errw, "warning:", s) }
			var reps []bench.QAReport
			var all []bench.QARecord
			for _, p := range strings.Split(profiles, ",") {
				p = strings.TrimSpace(p)
				pc := cfg // "default": the configured profile (balanced unless set)
				if p == "" {
					p = "default"
				}
				if p != "default" {
					pc.Profile = p
				}
				if err := pc.Validate(); err != nil {
					return fmt.Errorf("--profiles %q: %w", p, err)
				}
				a, _, err := assembleWith(pc, s, s.Index().Analyzer(), warn, nil, io.Discard)
				if err != nil {
					return err
				}
				rep, recs, err := bench.QA(ctx, a, p, qs)
				if err != nil {
					return err
				}
				reps = append(reps, rep)
				all = append(all, recs...)
			}
			if out != "" {
				if err := writeQARecords(out, all); err != nil {
					return err
				}
				fmt.Fprintf(errw, "wrote %d rows to %s\n", len(all), out)
			}
			if *jsonOut {
				return printReport(cmd.OutOrStdout(), reps, true)
			}
			printQA(cmd.OutOrStdout(), reps)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&qfile, "questions", "", "question set (JSONL, qa-ja-docs layout)")
	f.StringVar(&dataDir, "data", "", "documents to index before asking")
	f.StringVar(&indexDir, "index", "", "existing index (or, with --data, where to build it)")
	f.StringVar(&profiles, "profiles", "default,plain,fast,balanced,deep", "profiles to run: default (the configured --profile, balanced unless set), plain (one hybrid search), fast, balanced, deep")
	f.StringVar(&out, "out", "", "write per-question results to this CSV")
	for _, name := range []string{"generator", "reader", "reader-model", "provider", "model", "evidence-threshold", "k", "bm25-weight", "fusion"} {
		settingFlag(f, name)
	}
	cmd.MarkFlagRequired("questions")
	return cmd
}

// printQA prints one row per profile.
func printQA(w io.Writer, reps []bench.QAReport) {
	fmt.Fprintf(w, "%-9s %-12s %5s %9s %9s %9s %9s %7s %6s %6s %6s %6s %8s %8s\n",
		"profile", "generator", "n", "fact_any", "fact_all", "unans_ref", "ans_ref", "cited", "hit@1", "hit@5", "len", "len95", "p50_ms", "p95_ms")
	for _, r := range reps {
		fmt.Fprintf(w, "%-9s %-12s %5d %9.3f %9.3f %9.3f %9.3f %7.3f %6.3f %6.3f %6.0f %6d %8.1f %8.1f\n",
			r.Profile, r.Generator, r.Questions, r.FactAny, r.FactAll, r.UnanswerableRefused, r.AnswerableRefused,
			r.CitedHit, r.Hit1, r.Hit5, r.MeanAnswerRunes, r.P95AnswerRunes, r.LatencyP50Ms, r.LatencyP95Ms)
		if r.Errors > 0 {
			fmt.Fprintf(w, "%-9s %d questions failed (see --out)\n", "", r.Errors)
		}
	}
	fmt.Fprintln(w, "\nrefusals by the gate's reason")
	for _, r := range reps {
		reasons := slices.Sorted(maps.Keys(r.RefusedBy))
		parts := make([]string, len(reasons))
		for i, k := range reasons {
			parts[i] = fmt.Sprintf("%s %d", k, r.RefusedBy[k])
		}
		fmt.Fprintf(w, "%-9s %s\n", r.Profile, cmp.Or(strings.Join(parts, ", "), "none"))
	}
	printQAGroups(w, "format", reps, func(r bench.QAReport) []bench.QAGroup { return r.ByFormat })
	printQAGroups(w, "qtype", reps, func(r bench.QAReport) []bench.QAGroup { return r.ByType })
}

// printQAGroups prints one breakdown (by format, by question type): a row
// per group, with the key-fact share of its answerable questions and the
// refused share of all its questions under each profile. Nothing when no
// report has groups of that kind.
func printQAGroups(w io.Writer, by string, reps []bench.QAReport, groups func(bench.QAReport) []bench.QAGroup) {
	if len(reps) == 0 || len(groups(reps[0])) == 0 {
		return
	}
	fmt.Fprintf(w, "\nby %s: key fact any (answerable) / refused (all)\n%-14s %4s %4s", by, by, "n", "ans")
	for _, r := range reps {
		fmt.Fprintf(w, " %15s", r.Profile)
	}
	fmt.Fprintln(w)
	for i, g := range groups(reps[0]) {
		fmt.Fprintf(w, "%-14s %4d %4d", g.Name, g.Questions, g.Answerable)
		for _, r := range reps {
			g := groups(r)[i]
			fact := "    -"
			if g.Answerable > 0 {
				fact = fmt.Sprintf("%.3f", g.FactAny)
			}
			fmt.Fprintf(w, " %7s / %5.3f", fact, g.Refused)
		}
		fmt.Fprintln(w)
	}
}

// writeQARecords writes the per-question CSV (bench.QAColumns).
func writeQARecords(path string, recs []bench.QARecord) error {
	rows := bench.QATable(recs)
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("results CSV: %w", err)
	}
	w := csvx.NewWriter(f)
	for _, row := range rows {
		if err := w.Write(row); err != nil {
			f.Close()
			return fmt.Errorf("results CSV %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("results CSV %s: %w", path, err)
	}
	return f.Close()
}
