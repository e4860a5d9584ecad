package main

// The evaluation toolbox: optimize, questions, convert, judge, eval and
// diff-eval. The batch mode of ask is in batch.go.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/eval/batch"
	"github.com/shirube/shirube/internal/eval/convert"
	"github.com/shirube/shirube/internal/eval/diffeval"
	"github.com/shirube/shirube/internal/eval/evalset"
	"github.com/shirube/shirube/internal/eval/judge"
	"github.com/shirube/shirube/internal/eval/metrics"
	"github.com/shirube/shirube/internal/eval/optimize"
	"github.com/shirube/shirube/internal/eval/questions"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/llm"
)

// ---- adapters over the assistant ----

// batchAsker answers batch and optimisation questions with the assistant.
type batchAsker struct{ a *assistant.Assistant }

func (b batchAsker) Ask(ctx context.Context, q string) (batch.AskResult, error) {
	rep, err := b.a.Ask(ctx, assistant.Request{Query: q, SessionID: newSessionID("batch")})
	if err != nil {
		return batch.AskResult{}, err
	}
	return batch.AskResult{Answer: rep.Answer, Retrieved: rep.Retrieved(), Refused: rep.Refused()}, nil
}

// historyAsker answers eval and diff-eval cases, with their conversation.
type historyAsker struct {
	a      *assistant.Assistant
	prefix string
}

func (h historyAsker) Ask(ctx context.Context, q string, history []llm.Message) (assistant.Reply, error) {
	return h.a.Ask(ctx, assistant.Request{Query: q, History: history, SessionID: newSessionID(h.prefix)})
}

// optionalChatModel returns the chat model for judging and proposing: the
// assistant's when it answers with an LLM, else one built from the keys
// that are set, else nil (offline).
func optionalChatModel(cfg config.Config, model chatModel, warn func(string)) (chatModel, string) {
	if model != nil {
		return model, cfg.LLMModel
	}
	if cfg.LLMProvider() == "" {
		return nil, ""
	}
	m, _, err := newChatModel(cfg)
	if err != nil {
		warn(fmt.Sprintf("LLM not usable, judging offline: %v", err))
		return nil, ""
	}
	return m, cfg.LLMModel
}

// checklistJudge is the batch checklist matcher: the LLM when one is
// configured, else the offline judge.
func checklistJudge(m chatModel, model string) metrics.ItemJudge {
	if m == nil {
		return metrics.OfflineJudge{}
	}
	return metrics.LLMJudge{LLM: m, Model: model}
}

// wordTokenizer gives the offline proposer dictionary words (no n-grams,
// no stemming), which make readable folder names.
type wordTokenizer struct{ a *analysis.Analyzer }

func (w wordTokenizer) Terms(text string) []string { return w.a.Terms(text) }

// folderProposer is the LLM proposer when a model is configured, else the
// offline one.
func folderProposer(m chatModel, model string, warn func(string)) optimize.Proposer {
	if m != nil {
		return optimize.LLMProposer{LLM: m, Model: model}
	}
	an, err := analysis.New(analysis.Options{NoStem: true})
	if err != nil {
		warn(fmt.Sprintf("morphological analyser unavailable, using script runs for folder names: %v", err))
		return optimize.OfflineProposer{Tokenizer: optimize.TermTokenizer{}}
	}
	return optimize.OfflineProposer{Tokenizer: wordTokenizer{an}}
}

// layout is where the page database lives: page identities such as
// database/<folder>/<stem>/page_NNN.md are relative to root, and scope is
// the database folder's base name. cfg carries the settings the index was
// built with, for re-indexing.
type layout struct {
	root, scope string
	cfg         config.Config
}

// pageLayout takes the database and data folders from the index metadata
// unless --database / --data were given.
func pageLayout(cmd *cobra.Command, cfg config.Config) layout {
	changed := func(name string) bool {
		fl := cmd.Flags().Lookup(name)
		return fl != nil && fl.Changed
	}
	if m, err := index.ReadMeta(cfg.IndexDir); err == nil {
		if m.DatabaseDir != "" && !changed("database") {
			cfg.DatabaseDir = m.DatabaseDir
		}
		if m.DataDir != "" && !changed("data") {
			cfg.DataDir = m.DataDir
		}
		if m.ChunkSize > 0 && !changed("chunk-size") {
			cfg.ChunkSize, cfg.ChunkOverlap = m.ChunkSize, m.ChunkOverlap
		}
		if m.Embedder.Kind != "" {
			cfg.Embedder = config.Embedder(m.Embedder.Kind)
		}
	}
	db := filepath.Clean(cfg.DatabaseDir)
	if abs, err := filepath.Abs(db); err == nil {
		db = abs
	}
	return layout{root: filepath.Dir(db), scope: filepath.Base(db), cfg: cfg}
}

// reindexer rebuilds the index after a copy or rollback of the RL loop and
// swaps the fresh searcher into the assistant.
type reindexer struct {
	cfg  config.Config
	a    *assistant.Assistant
	errw io.Writer
}

func (r *reindexer) Reindex(ctx context.Context) error {
	if _, err := runIndex(ctx, r.cfg, false, io.Discard); err != nil {
		return err
	}
	s, err := openSearcher(ctx, r.cfg)
	if err != nil {
		return err
	}
	r.a.Swap(s)
	return nil
}

// printOptimize reports an optimisation run.
func printOptimize(w io.Writer, res optimize.Result) {
	optimized := 0
	for _, r := range res.Rows {
		if r.Status == "optimized" {
			optimized++
		}
	}
	fmt.Fprintf(w, "folder optimisation: %d of %d missed question(s) optimised\n", optimized, len(res.Rows))
	for _, r := range res.Rows {
		line := fmt.Sprintf("  row %d: %s", r.Row, r.Status)
		if r.Aliases != "" && r.Status == "optimized" {
			line += " → " + strings.ReplaceAll(r.Aliases, "\n", "; ")
		}
		fmt.Fprintln(w, line)
	}
	if res.Output != "" {
		fmt.Fprintf(w, "optimized CSV: %s\n", res.Output)
	}
	if res.Backup != "" {
		fmt.Fprintf(w, "backup: %s\n", res.Backup)
	}
	if res.Manifest != "" {
		fmt.Fprintf(w, "manifest: %s (undo with: shirube optimize --undo %s)\n", res.Manifest, res.Manifest)
	}
}

// refreshIndex brings the index up to date after optimize created or
// --undo deleted page copies, so search and the Opt Ref metrics of the next
// batch see the database as it is. Without an index there is nothing to
// refresh.
func refreshIndex(ctx context.Context, cfg config.Config, w io.Writer) error {
	m, err := index.ReadMeta(cfg.IndexDir)
	if err != nil {
		return nil
	}
	var cat *document.CategorizeOptions
	if m.Categorized {
		cat = &document.CategorizeOptions{}
	}
	sum, err := runIndexWith(ctx, cfg, false, cat, io.Discard)
	if err != nil {
		return fmt.Errorf("the page database changed but the index could not be refreshed: %w; run: shirube index", err)
	}
	fmt.Fprintf(w, "index refreshed: %d documents, %d pages\n", sum.Documents, sum.Pages)
	return nil
}

// ---- optimize ----

func newOptimizeCmd(g *globals) *cobra.Command {
	var separate, enableRL bool
	var undo, outDir string
	var workers, attempts int
	cmd := &cobra.Command{
		Use:   "optimize results.csv | optimize --undo MANIFEST",
		Short: "Copy missed pages into better-named folders (seed 000 folder optimisation); --undo restores",
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
			printOptimize(out, res)
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

// ---- questions ----

func newQuestionsCmd(g *globals) *cobra.Command {
	var output, resultsDir string
	var seed int64
	var offline bool
	var perPage, workers int
	var negative float64
	cmd := &cobra.Command{
		Use:   "questions",
		Short: "Generate the anticipated-question CSV (Question, Ground Truth, Reference Document, Page, Checklist)",
		Long: `questions reads every document of the data folder and writes a test set for
the batch evaluation: questions answered on one page, questions that need
several pages of a document, and about 10 % questions the documents cannot
answer (empty Reference Document, refusal as Ground Truth).

With an API key an LLM writes the questions from each page; without one (or
with --offline) a deterministic generator turns salient sentences into
questions whose ground truth is the sentence itself. The same --seed gives
the same file. Reference Document uses the page identities of the index
(database/<folder>/<document>/page_NNN.md), so run it with the same --data
and --database as shirube index (the defaults are the folders the index at
--index was built from).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			warn := func(s string) { fmt.Fprintln(errw, "warning:", s) }
			lay := pageLayout(cmd, g.cfg) // the index's folders unless --data/--database
			opt := questions.Options{
				DataDir:       lay.cfg.DataDir,
				DatabaseDir:   lay.cfg.DatabaseDir,
				Output:        output,
				ResultsDir:    resultsDir,
				Seed:          seed,
				PerPage:       perPage,
				Workers:       workers,
				NegativeRatio: negative,
				Warn:          warn,
			}
			if !offline && g.cfg.LLMProvider() != "" {
				m, name, err := newChatModel(g.cfg)
				if err != nil {
					return err
				}
				opt.LLM, opt.Model = m, name
			}
			res, err := questions.Generate(cmd.Context(), opt)
			if err != nil {
				return err
			}
			kinds := map[string]int{}
			for _, r := range res.Rows {
				kinds[r.Kind]++
			}
			gen := questions.GeneratorOffline
			if opt.LLM != nil {
				gen = "llm:" + opt.Model
			}
			fmt.Fprintf(out, "%d questions from %d documents (%d single-page, %d multi-page, %d not in the documents; generator %s)\n",
				len(res.Rows), res.Documents, kinds[questions.KindPage], kinds[questions.KindMulti], kinds[questions.KindNegative], gen)
			if len(res.Skipped) > 0 {
				fmt.Fprintf(out, "skipped %d file(s), page(s) or group(s); see the warnings above\n", len(res.Skipped))
			}
			fmt.Fprintf(out, "questions: %s\nnext: shirube ask %s\n", res.Path, res.Path)
			return nil
		},
	}
	f := cmd.Flags()
	settingFlag(f, "data", "folder of source documents")
	settingFlag(f, "database", "page database the identities refer to")
	f.StringVarP(&output, "output", "o", "", "CSV to write (default: results/questions_YYYYMMDD_HHMMSS.csv)")
	f.StringVar(&resultsDir, "results", "results", "folder for the default output name")
	f.Int64Var(&seed, "seed", 0, "seed for template and page choices (same seed, same output)")
	f.BoolVar(&offline, "offline", false, "use the offline generator even when an API key is set")
	f.IntVar(&perPage, "per-page", 0, "questions per page (default 1; 3 for one-page documents)")
	f.IntVar(&workers, "workers", 0, "parallel LLM requests (default 4)")
	f.Float64Var(&negative, "negative-ratio", 0, "share of questions the documents cannot answer (default 0.1; negative disables)")
	settingFlag(f, "index", "index whose data and database folders are the defaults")
	settingFlag(f, "provider")
	settingFlag(f, "model", "model id or alias")
	return cmd
}

// ---- convert ----

func newConvertCmd(g *globals) *cobra.Command {
	var qcsv, output string
	cmd := &cobra.Command{
		Use:   "convert [RAG_JSON_Files/ | answers.json]",
		Short: "Turn a RAG system's JSON answers into rag_answers.csv for judge (seed 001 stage 1)",
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

// ---- judge ----

func newJudgeCmd(g *globals) *cobra.Command {
	var o judge.Options
	var delay time.Duration
	var seed uint64
	cmd := &cobra.Command{
		Use:   "judge",
		Short: "Score RAG answers against ground truth: precision, recall, accuracy (seed 001 stage 2)",
		Long: `judge reads questions.csv, ground_truth.csv and rag_answers.csv (joined by
Question Number), shows what it found with an estimated cost, asks
"Proceed? [Y/n]" (--yes skips it), and scores each answer with three binary
metrics. Results go to Evaluation_Runs/precision_scores_YYYYMMDD_HHMMSS.csv
with #SUMMARY rows on top; rag_eval.log is the debug log. An interrupted run
resumes from its checkpoint.

The default judge is Claude Sonnet through ANTHROPIC_API_KEY; with
--provider openai (or only OPENAI_API_KEY set) an OpenAI-compatible server
judges. --judge lexical scores offline by word overlap, without any LLM.
An evaluation_prompt.txt in the working folder replaces the built-in prompt.`,
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

// ---- eval ----

func newEvalCmd(g *globals) *cobra.Command {
	var outDir, judgeMode string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "eval [eval/eval_dataset.json]",
		Short: "Run the eval dataset (seed 002 §7): PASS when at least 70% of cases score 70 or more",
		Long: `eval asks every case of the dataset (default eval/eval_dataset.json) with
the configured assistant, checks citations, keywords, forbidden phrases and
guard flags deterministically, and — when an LLM is configured — adds the
six-axis LLM judge. Results go to eval/evaluation_results_YYYY-MM-DD.json.
A case with a forbidden phrase, a wrong flag or a missing banner fails
whatever its score. The exit status is 1 when the verdict is FAIL and 3
(ExitJudgeFailed) when the LLM judge failed on any case: such a case was not
judged, counts as failed, and "scored_by" in the results says so.`,
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

// ---- diff-eval ----

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
		Short: "Compare two configurations on a case set (seed 004: HTML as text vs Markdown)",
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
			rep, err := diffeval.Run(ctx, diffeval.Options{
				Cases: cases, A: historyAsker{a, "diffeval"}, B: historyAsker{b, "diffeval"},
				NameA: nameA, NameB: nameB, Runs: runs, OutDir: outDir, Progress: errw,
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%-20s %10s %10s %8s  %s\n", "metric", trunc(nameA, 10), trunc(nameB, 10), "B-A", "better")
			for _, m := range rep.Metrics {
				fmt.Fprintf(out, "%-20s %10.4f %10.4f %+8.4f  %-6s %s\n", m.Key, m.A, m.B, m.Diff, m.Better, m.Label)
			}
			fmt.Fprintf(out, "%s: PASS %d, FAIL %d, SKIPPED %d of %d\n", nameA, rep.A.Pass, rep.A.Fail, rep.A.Skipped, rep.A.Cases)
			fmt.Fprintf(out, "%s: PASS %d, FAIL %d, SKIPPED %d of %d\n", nameB, rep.B.Pass, rep.B.Fail, rep.B.Skipped, rep.B.Cases)
			fmt.Fprintf(out, "report: %s (also .md and .png)\n", rep.JSONPath)
			if name, why, none := rep.Unevaluated(); none {
				return exitCode{code: 1, msg: fmt.Sprintf("Error: every case of %s was SKIPPED (%s), so nothing was compared. Check that the index holds the case file's documents (--data / --a / --b) and, if the answers failed, that the LLM is reachable (key, OPENAI_API_BASE / ANTHROPIC_BASE_URL).", name, why)}
			}
			return nil
		},
	}
	addAnswerFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&cases, "cases", DefaultDiffCases, "case file (seed 004 schema)")
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
