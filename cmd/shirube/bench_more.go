package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/bench"
	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/csvx"
)

// addMoreBench adds the scale, answers and refusal benchmarks.
func addMoreBench(cmd *cobra.Command, g *globals, jsonOut *bool) {
	var dir, keep string
	var n, maxQ, k int
	var threshold float64
	scale := &cobra.Command{
		Use:   "scale --dir DIR --chunks N",
		Short: "Replicate a corpus to N chunks: build, save, load time, memory, hybrid query p50/p95",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := bench.Scale(cmd.Context(), dir, n, maxQ, keep)
			if err != nil {
				return err
			}
			return printReport(cmd.OutOrStdout(), rep, *jsonOut)
		},
	}
	scale.Flags().StringVar(&dir, "dir", "", "BEIR dataset folder")
	scale.Flags().IntVar(&n, "chunks", 100000, "number of chunks to index")
	scale.Flags().IntVar(&maxQ, "max-queries", 1000, "queries to time")
	scale.Flags().StringVar(&keep, "out", "", "keep the index in this folder (default: a temporary one)")
	scale.MarkFlagRequired("dir")

	answers := &cobra.Command{
		Use:   "answers --dir DIR",
		Short: "Share of questions whose extractive answer contains a gold answer (JSQuAD)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := bench.Answers(cmd.Context(), dir, k, maxQ)
			if err != nil {
				return err
			}
			return printReport(cmd.OutOrStdout(), rep, *jsonOut)
		},
	}
	answers.Flags().StringVar(&dir, "dir", "", "BEIR dataset folder whose queries have answers")
	answers.Flags().IntVar(&k, "k", config.DefaultK, "results given to the answer generator")
	answers.Flags().IntVar(&maxQ, "max-queries", 0, "evaluate only the first N questions (0 = all)")
	answers.MarkFlagRequired("dir")

	refusal := &cobra.Command{
		Use:   "refusal --dir DIR",
		Short: "Refusal rate with the question's paragraph (or whole article) held out, answer rate with it, threshold sweep",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := bench.Refusal(cmd.Context(), dir, k, threshold, maxQ)
			if err != nil {
				return err
			}
			if *jsonOut {
				return printReport(cmd.OutOrStdout(), rep, true)
			}
			printRefusal(cmd.OutOrStdout(), rep)
			return nil
		},
	}
	refusal.Flags().StringVar(&dir, "dir", "", "BEIR dataset folder")
	refusal.Flags().IntVar(&k, "k", config.DefaultK, "results considered")
	refusal.Flags().Float64Var(&threshold, "threshold", config.DefaultEvidenceThreshold, "evidence threshold to report")
	refusal.Flags().IntVar(&maxQ, "max-queries", 0, "evaluate only the first N questions (0 = all)")
	refusal.MarkFlagRequired("dir")

	var qfile, indexDir, profiles, recordsDir string
	agentCmd := &cobra.Command{
		Use:   "agent --questions FILE",
		Short: "Agentic retrieval KPIs: the same questions through the fast, balanced and deep profiles (calls, latency, relevance, coverage)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			qs, err := bench.LoadQuestions(qfile)
			if err != nil {
				return err
			}
			if w := bench.ProtocolWarning(len(qs)); w != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			cfg := g.cfg
			cfg.IndexDir = indexDir
			s, err := openSearcher(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			var gen bench.Answerer
			if cfg.EffectiveGenerator() == "llm" {
				m, name, err := newChatModel(cfg)
				if err != nil {
					return err
				}
				gen = llmAnswerer(cfg, m, name, s.Index().Analyzer())
			}
			reps, err := bench.Agent(cmd.Context(), s, qs, strings.Split(profiles, ","), searchOptions(cfg), gen)
			if err != nil {
				return err
			}
			recPath, err := writeAgentRecords(recordsDir, reps)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "per-question records: %s\n", recPath)
			if *jsonOut {
				return printReport(cmd.OutOrStdout(), reps, true)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%-9s %9s %9s %10s %13s %13s %14s %15s %10s %10s %13s %10s %10s  routes\n", "profile", "questions", "avg_calls", "avg_rounds", "p95_e2e", "p95_retrieval", "top5_relevance", "top10_relevance", "supported", "citation", "facet_cover", "unknowns", "corrective")
			for _, r := range reps {
				fmt.Fprintf(w, "%-9s %9d %9.2f %10.2f %10.2f ms %10.2f ms %14.3f %15.3f %10.3f %10.3f %13.3f %10.3f %10.3f  %v\n",
					r.Profile, r.Questions, r.AvgCalls, r.AvgRounds, r.P95LatencyMs, r.P95RetrievalMs, r.Top5Relevance, r.Top10Relevance, r.SupportedRate, r.CitationPrecision, r.FacetCoverage, r.UnknownsRate, r.CorrectiveRate, r.Routes)
			}
			for _, r := range reps {
				if r.Adoption != nil {
					verdict := "do not adopt"
					if r.Adoption.Adopt {
						verdict = "adopt"
					}
					fmt.Fprintf(w, "adoption of %s: %s (%s)\n", r.Profile, verdict, r.Adoption.Reason)
				}
			}
			return nil
		},
	}
	agentCmd.Flags().StringVar(&qfile, "questions", "eval/eval_dataset.json", "question set: an eval dataset (.json) or a CSV with a Question column")
	agentCmd.Flags().StringVar(&indexDir, "index", config.DefaultIndexDir, "index directory")
	agentCmd.Flags().StringVar(&profiles, "profiles", "fast,balanced,deep", "profiles to compare")
	agentCmd.Flags().StringVar(&recordsDir, "records", "results", "folder for agent_records_YYYYMMDD_HHMMSS.jsonl, one line per question and profile")
	agentCmd.Flags().String("generator", "", "answers to check: extractive or llm (default: llm when an API key is set, else extractive)")
	agentCmd.Flags().String("provider", "", "openai or anthropic (default: whichever key is set)")
	agentCmd.Flags().String("model", "", "model id or alias")

	cmd.AddCommand(scale, answers, refusal, agentCmd, newBenchQACmd(g, jsonOut))
}

// printRefusal prints a refusal report as one table per holdout protocol.
func printRefusal(w io.Writer, rep bench.RefusalReport) {
	fmt.Fprintf(w, "dataset %s: %d questions, top %d, threshold %.2f\n", rep.Dataset, rep.Questions, rep.K, rep.Threshold)
	for _, p := range rep.Protocols {
		verdict := "misses"
		if p.Meets {
			verdict = "meets"
		}
		fmt.Fprintf(w, "\nholdout %s (%.1f documents hidden per question): at %.2f answered %.1f %%, refused %.1f %% — %s the ≥ 95 %% / ≥ 80 %% target\n",
			p.Holdout, p.Hidden, p.At.Threshold, 100*p.At.AnsweredPresent, 100*p.At.RefusedAbsent, verdict)
		fmt.Fprintf(w, "%9s %9s %9s %22s\n", "threshold", "answered", "refused", "refused_or_correct")
		for _, s := range p.Sweep {
			fmt.Fprintf(w, "%9.3f %8.1f%% %8.1f%% %21.1f%%\n", s.Threshold, 100*s.AnsweredPresent, 100*s.RefusedAbsent, 100*s.SafeAbsent)
		}
		fmt.Fprintf(w, "best balance: %.3f (answered %.1f %%, refused %.1f %%)\n", p.Best.Threshold, 100*p.Best.AnsweredPresent, 100*p.Best.RefusedAbsent)
	}
}

// writeAgentRecords writes every per-question record of the reports, one
// JSON object a line, to a new timestamped file in dir.
func writeAgentRecords(dir string, reps []bench.AgentReport) (string, error) {
	f, path, err := csvx.CreateTimestamped(dir, "agent_records_", ".jsonl", time.Now())
	if err != nil {
		return "", err
	}
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	for _, r := range reps {
		for _, rec := range r.Records {
			if err := enc.Encode(rec); err != nil {
				f.Close()
				return "", fmt.Errorf("write %s: %w", path, err)
			}
		}
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}
