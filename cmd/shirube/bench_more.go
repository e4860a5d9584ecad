package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/bench"
	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/csvx"
)

// addMoreBench adds the scale, answers and refusal benchmarks.
func addMoreBench(cmd *cobra.Command, g *globals, jsonOut *bool) {
	var dir string
	var maxQ, k int
	var threshold float64
	scale := newScaleCmd(jsonOut)

	answers := &cobra.Command{
		Use:   "answers --dir DIR",
		Short: "Share of questions whose extractive answer contains a gold answer (JSQuAD)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rd, err := gateReader(g.cfg)
			if err != nil {
				return err
			}
			rep, err := bench.Answers(cmd.Context(), dir, k, maxQ, rd)
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
	for _, name := range []string{"reader", "reader-model"} {
		settingFlag(answers.Flags(), name)
	}

	refusal := &cobra.Command{
		Use:   "refusal --dir DIR",
		Short: "Refusal rate with the question's paragraph (or whole article) held out, answer rate with it, threshold sweep",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rd, err := gateReader(g.cfg)
			if err != nil {
				return err
			}
			rep, err := bench.Refusal(cmd.Context(), dir, k, threshold, maxQ, rd)
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
	for _, name := range []string{"reader", "reader-model"} {
		settingFlag(refusal.Flags(), name)
	}

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
			fmt.Fprintf(w, "%-9s %9s %9s %10s %13s %13s %14s %15s %10s %10s %13s %10s %10s %10s  routes\n", "profile", "questions", "avg_calls", "avg_rounds", "p95_e2e", "p95_retrieval", "top5_relevance", "top10_relevance", "supported", "citation", "facet_cover", "unknowns", "corrective", "resolution")
			for _, r := range reps {
				fmt.Fprintf(w, "%-9s %9d %9.2f %10.2f %10.2f ms %10.2f ms %14.3f %15.3f %10.3f %10.3f %13.3f %10.3f %10.3f %10.3f  %v\n",
					r.Profile, r.Questions, r.AvgCalls, r.AvgRounds, r.P95LatencyMs, r.P95RetrievalMs, r.Top5Relevance, r.Top10Relevance, r.SupportedRate, r.CitationPrecision, r.FacetCoverage, r.UnknownsRate, r.CorrectiveRate, r.ResolutionRate, r.Routes)
			}
			fmt.Fprintln(w, "resolution = ambiguity_resolution_rate: the share of corrective runs that ended with every must-have facet covered")
			for _, r := range reps {
				if r.Adoption != nil {
					verdict := "do not adopt"
					switch {
					case !r.Adoption.Decided:
						verdict = "undecided"
					case r.Adoption.Adopt:
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

	cmd.AddCommand(scale, newScaleChildCmd(), newReplicateCmd(), answers, refusal, agentCmd, newBenchQACmd(g, jsonOut), newBenchDangerCmd(jsonOut))
}

// printRefusal prints a refusal report as one table per holdout protocol.
func printRefusal(w io.Writer, rep bench.RefusalReport) {
	gate := "near-miss checks"
	if rep.Reader {
		gate += " and the reader's answerability"
	}
	fmt.Fprintf(w, "dataset %s: %d questions, top %d, threshold %.2f; gate: evidence score, %s\n", rep.Dataset, rep.Questions, rep.K, rep.Threshold, gate)
	for _, p := range rep.Protocols {
		verdict := "misses"
		if p.Meets {
			verdict = "meets"
		}
		fmt.Fprintf(w, "\nholdout %s (%.1f documents hidden per question): at %.2f answered %.1f %%, refused %.1f %% — %s the ≥ 95 %% / ≥ 80 %% target\n",
			p.Holdout, p.Hidden, p.At.Threshold, 100*p.At.AnsweredPresent, 100*p.At.RefusedAbsent, verdict)
		fmt.Fprintf(w, "  by the evidence score alone: answered %.1f %%, refused %.1f %%; the sweep below applies the whole gate\n",
			100*p.ScoreOnly.AnsweredPresent, 100*p.ScoreOnly.RefusedAbsent)
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

// newScaleCmd is `bench scale`: the scale curve on a real corpus.
func newScaleCmd(jsonOut *bool) *cobra.Command {
	var corpus, points, work, pngPath, from string
	var maxQ, k, warm, loadRuns, qChunks int
	var seed uint64
	cmd := &cobra.Command{
		Use:   "scale --corpus DIR",
		Short: "Scale curve on a real corpus: build speed and peak RSS, index size, load and query latency at several sizes",
		Long: `scale indexes the first files of a corpus laid out as law-corpus-ja
(index.tsv + text/<hash>.txt, in index.tsv order) for each point of
--points, given in chunks ("all" = the whole corpus). It first extracts and
chunks every file (no analysis) to count its chunks, then picks for each
point the shortest prefix holding at least that many.

For each point, three kinds of fresh child process (this binary re-run as
"bench scale-child") do the work, so nothing carries over between them:
  build  index.Build of the prefix with the default settings and the local
         embedder (extraction, page database, chunking, analysis, BM25,
         embedder fit and embedding, write). Reported: the child's wall
         time, chunks/s over it, its peak RSS (rusage), the index and page
         database sizes on disk.
  load   index.Open and exit, --load-runs times: median wall time of the
         whole process, of index.Open, and of the peak RSS.
  query  index.Open, --warmup untimed queries, then every query timed
         three ways, rotating which goes first: the whole default hybrid
         search (per-query weight, k = --k, evidence scores), the BM25 leg
         alone (analysis + postings, max(10·k, 100) candidates) and the
         vector leg alone (analysis + query embedding + scan, as many
         candidates): p50/p95 of each, and the process's peak RSS.

Queries are drawn once with --seed from the first files holding
--query-chunks chunks (at most the smallest point's files), so every point,
and every run with the same flags, answers the same ones: half "<law>の<caption>について" from
article captions such as （目的）, half two to four clauses of a sentence
joined by spaces; none occurs verbatim in its law's text. --max-queries
caps how many are drawn and timed (each is timed the three ways).
The run's indexes live under --work (default: a temporary folder, removed).

--from a.json,b.json measures nothing: it joins curves printed by earlier
runs with --json (for example the whole-corpus point run on its own) into
one table and plot.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if from != "" {
				curve, err := readCurves(strings.Split(from, ","))
				if err != nil {
					return err
				}
				return showCurve(cmd, curve, pngPath, *jsonOut)
			}
			if corpus == "" {
				return fmt.Errorf("--corpus is required: the unpacked law corpus (index.tsv + text/), e.g. --corpus /tmp/shirube-law-corpus-ja")
			}
			pts, err := bench.ParsePoints(points)
			if err != nil {
				return fmt.Errorf("--points: %w", err)
			}
			if maxQ <= 0 {
				return fmt.Errorf("--max-queries must be positive, got %d", maxQ)
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("bench scale needs its own executable to run the children: %w", err)
			}
			curve, err := bench.ScaleCorpus(cmd.Context(), bench.ScaleOptions{
				Corpus: corpus, Points: pts, MaxQueries: maxQ, Seed: seed, QueryChunks: qChunks, K: k, Warmup: warm, LoadRuns: loadRuns,
				Work: work, Exe: exe, ChildArgs: []string{"bench", "scale-child"}, Log: cmd.ErrOrStderr(),
			})
			if err != nil {
				return err
			}
			return showCurve(cmd, curve, pngPath, *jsonOut)
		},
	}
	f := cmd.Flags()
	f.StringVar(&corpus, "corpus", "", "corpus folder: index.tsv and text/<hash>.txt (law-corpus-ja unpacked); required unless --from")
	f.StringVar(&points, "points", "10000,50000,100000,all", "curve points in chunks, comma-separated (\"all\" = whole corpus)")
	f.IntVar(&maxQ, "max-queries", 1000, "queries drawn and timed per point (each as hybrid search, BM25 leg and vector leg)")
	f.Uint64Var(&seed, "seed", 1, "seed of the query drawing")
	f.IntVar(&qChunks, "query-chunks", 10000, "draw queries from the first files holding this many chunks (capped at the smallest point)")
	f.IntVar(&k, "k", config.DefaultK, "results per search")
	f.IntVar(&warm, "warmup", 20, "untimed queries before timing (each timed way once)")
	f.IntVar(&loadRuns, "load-runs", 3, "fresh load processes per point (the median is reported)")
	f.StringVar(&work, "work", "", "keep data copies and indexes in this folder (default: a temporary one, removed)")
	f.StringVar(&pngPath, "png", "", "also draw the curve to this PNG file (e.g. docs/scale.png)")
	f.StringVar(&from, "from", "", "join curves saved with --json (comma-separated files) instead of measuring")
	return cmd
}

// showCurve prints a curve as a table or JSON and draws its plot.
func showCurve(cmd *cobra.Command, curve bench.ScaleCurve, pngPath string, asJSON bool) error {
	if pngPath != "" {
		if err := writePNG(pngPath, curve); err != nil {
			return err
		}
		fmt.Fprintln(cmd.ErrOrStderr(), "plot:", pngPath)
	}
	if asJSON {
		return printReport(cmd.OutOrStdout(), curve, true)
	}
	bench.WriteCurveTable(cmd.OutOrStdout(), curve)
	return nil
}

// readCurves reads curves saved by `bench scale --json` and joins them.
func readCurves(paths []string) (bench.ScaleCurve, error) {
	var cs []bench.ScaleCurve
	for _, p := range paths {
		b, err := os.ReadFile(strings.TrimSpace(p))
		if err != nil {
			return bench.ScaleCurve{}, fmt.Errorf("--from: %w", err)
		}
		var c bench.ScaleCurve
		if err := json.Unmarshal(b, &c); err != nil {
			return bench.ScaleCurve{}, fmt.Errorf("--from %s: not a curve saved by bench scale --json: %w", p, err)
		}
		cs = append(cs, c)
	}
	return bench.MergeCurves(cs)
}

// newScaleChildCmd is the hidden child step of `bench scale`.
func newScaleChildCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "scale-child build|load|query [flags]",
		Short:              "One step of `bench scale` in a fresh process (internal)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return bench.ScaleChild(cmd.Context(), args, cmd.OutOrStdout())
		},
	}
}

// writePNG draws the curve to path.
func writePNG(path string, curve bench.ScaleCurve) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := bench.WriteCurvePNG(f, curve); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}

// newReplicateCmd is `bench replicate`: a fixed replicated index for
// whole-process timings (the old `bench scale --dir … --chunks N --out DIR`).
func newReplicateCmd() *cobra.Command {
	var dir, out string
	var n int
	cmd := &cobra.Command{
		Use:   "replicate --dir DIR --chunks N --out DIR",
		Short: "Write an index of a BEIR corpus repeated to N chunks (for cold-start timings; measures nothing)",
		Long: `replicate indexes the documents of a BEIR-layout corpus, one chunk each
(title + text, as bench beir does), repeated up to --chunks with renamed
copies, and saves the index to --out. It times nothing: it makes fixed
indexes for whole-process timings (scripts/coldstart.sh). Copies never grow
the vocabulary; for a scale curve use bench scale --corpus.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			got, err := bench.Replicate(cmd.Context(), dir, n, out)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote an index of %d chunks to %s\n", got, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "BEIR dataset folder")
	cmd.Flags().IntVar(&n, "chunks", 0, "chunks to write (0 = one per document)")
	cmd.Flags().StringVar(&out, "out", "", "index folder to write")
	cmd.MarkFlagRequired("dir")
	cmd.MarkFlagRequired("out")
	return cmd
}

// gateReader is the reader whose answerability joins the refusal gate of
// `bench answers` and `bench refusal`, as it does in `ask`: nil with
// `--reader rules`.
func gateReader(cfg config.Config) (answer.Reader, error) {
	m, err := newReader(cfg)
	if err != nil || m == nil {
		return nil, err
	}
	return m, nil
}
