// Package judge holds every judge of an answer, the model-as-judge ones
// and their offline stand-ins, with what they share: one model call
// (eval.Completer), JSON replies at temperature 0 (the consensus runs
// excepted), and one retry when a reply cannot be read (the model is shown
// its reply and asked for the object alone). The verdict and the rubric
// read the first usable JSON object of a reply, ignoring text and ```json
// fences around it; the checklist judge accepts only its documented object
// (one fence tolerated), so a malformed verdict never becomes a metric.
//
//   - Binary verdicts (Verdict): precision (nothing fabricated), recall (the
//     major components of the ground truth are there) and accuracy (on
//     topic, meaning preserved), each 0 or 1. The LLM judge asks a model;
//     when its reasoning hedges (Hedging) the question is judged 3 more
//     times at temperature 0.3 and decided by majority (Majority). Lexical
//     scores offline by word overlap.
//   - The six-axis rubric (Rubric): grounding, accuracy, completeness,
//     safety, citation and conciseness, 0–100 each, for the assistant's
//     test set (package evalset).
//   - The checklist judge (ChecklistLLM): which checklist items an answer
//     states and which of its key points no item covers, for the batch
//     evaluation's checklist metrics (package metrics, whose OfflineJudge
//     is the deterministic stand-in built on the same text features as its
//     metrics).
//
// Run is the judge command over three CSV files (origin: seed 001, stage
// 2). It reads questions.csv, ground_truth.csv and rag_answers.csv (column
// names matched loosely, see csvx.MatchColumn), evaluates the questions
// present in all three in a random order (the seed is printed so a run can
// be repeated), and writes Evaluation_Runs/precision_scores_YYYYMMDD_HHMMSS.csv
// with "#SUMMARY:" rows on top (see SummaryLines), plus a debug log
// rag_eval.log that each run overwrites. The LLM judge asks one independent
// request per question, sequentially, with a fixed delay between calls;
// unreadable replies are repaired (see ParseVerdict) or retried once, then
// reported as an error row.
//
// Progress is kept in a checkpoint journal in os.TempDir() after every
// question; a later run over the same files offers to resume and never
// judges a question twice (a question whose verdict was unreadable is asked
// again). A run in which no question got a verdict fails with ErrNoVerdict
// and keeps its checkpoint. Before judging, Run shows what it found and an
// estimated cost and asks "Proceed? [Y/n]"; Options.Yes answers yes to
// every prompt.
package judge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shirube/shirube/internal/csvx"
	"github.com/shirube/shirube/internal/eval"
	"github.com/shirube/shirube/internal/eval/checkpoint"
	"github.com/shirube/shirube/internal/llm"
)

// Judges.
const (
	JudgeLLM     = "llm"     // a model through Options.Completer
	JudgeLexical = "lexical" // offline, see Lexical
)

// Defaults and fixed parameters from the seed.
const (
	DefaultQuestionsCSV   = "questions.csv"
	DefaultGroundTruthCSV = "ground_truth.csv"
	DefaultAnswersCSV     = "rag_answers.csv"
	DefaultOutputDir      = "Evaluation_Runs"
	DefaultLogFile        = "rag_eval.log"
	OutputPrefix          = "precision_scores_"

	DefaultDelay         = 500 * time.Millisecond // between model calls
	CheckMaxTokens       = 100                    // the initial connectivity call
	EvalMaxTokens        = 2000                   // each evaluation call
	ConsensusRuns        = 3                      // extra runs when the judge hedges
	ConsensusTemperature = 0.3
)

// ErrInputEnded means a confirmation prompt got no answer because the input
// ended (a script, a closed pipe); front ends name their yes option.
var ErrInputEnded = errors.New("the input ended")

// ErrDeclined means the user declined at a prompt.
var ErrDeclined = errors.New("evaluation cancelled at the prompt; nothing was judged")

// ErrNoVerdict is returned by Run when the judge gave no usable verdict
// for any question (every reply unreadable): nothing was scored, so the run
// failed. The results file with the error rows is still written and the
// checkpoint is kept, so the next run resumes and asks those questions
// again.
var ErrNoVerdict = errors.New("the judge gave no verdict for any question")

// Options configures Run. The zero value of every field but Completer (and
// In, when prompts are answered) means the seed's default.
type Options struct {
	// Dir is the working directory: relative paths below, the debug log and
	// the prompt override are looked up there. "" is the process's working
	// directory.
	Dir            string
	QuestionsCSV   string // columns Question Number, Question
	GroundTruthCSV string // columns Question Number, Ground Truth
	AnswersCSV     string // columns Question Number, RAG Answer
	OutputDir      string // where precision_scores_*.csv goes
	LogFile        string // debug log, overwritten each run

	// PromptFile names a prompt override that must exist. When "", the
	// file evaluation_prompt.txt is used if it is in Dir or, failing that,
	// in ExeDir; else DefaultPrompt. See the Placeholder constants.
	PromptFile string
	// ExeDir is the folder of the executable; "" asks os.Executable.
	ExeDir string

	Judge     string         // JudgeLLM (default) or JudgeLexical
	Completer eval.Completer // required for JudgeLLM; its Model(), if any, names the model when Model is ""
	Model     string         // sent as llm.Request.Model; "" is the client's default

	// Seed fixes the random evaluation order; 0 picks a random seed. The
	// seed in use is printed and written to the results.
	Seed uint64
	// Yes answers yes to the resume and proceed prompts.
	Yes bool
	In  io.Reader // answers to prompts; nil is an empty input
	Out io.Writer // progress, warnings and prompts; nil discards

	// Delay is the pause between model calls; 0 is DefaultDelay and a
	// negative value means none.
	Delay time.Duration
	// Sleep waits for d unless ctx ends first; nil is a real sleep.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock for the output file name; nil is time.Now.
	Now func() time.Time
	// CheckpointDir holds checkpoints; "" is os.TempDir().
	CheckpointDir string
	// Cost prices token usage for the estimate; nil is llm.Cost.
	Cost func(model string, u llm.Usage) float64
}

// Result describes a finished (or interrupted) run.
type Result struct {
	Output   string // results CSV; "" when the run did not finish
	LogFile  string
	Judge    string // which judge ran, as written to the summary
	Prompt   Prompt
	Seed     uint64
	Rows     []Row // in questions.csv order
	Summary  Summary
	Resumed  bool
	Calls    int     // model calls made by this run
	CostUSD  float64 // reported by the Completer for this run
	Warnings []string
}

// runner carries the state of one Run.
type runner struct {
	o       Options
	log     *slog.Logger
	in      *bufio.Reader
	out     io.Writer
	prompt  Prompt
	calls   int
	cost    float64
	model   string // model that answered, for the summary
	res     *Result
	cpWarns int
}

func (o *Options) normalize() error {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&o.QuestionsCSV, DefaultQuestionsCSV)
	def(&o.GroundTruthCSV, DefaultGroundTruthCSV)
	def(&o.AnswersCSV, DefaultAnswersCSV)
	def(&o.OutputDir, DefaultOutputDir)
	def(&o.LogFile, DefaultLogFile)
	def(&o.Judge, JudgeLLM)
	o.Judge = strings.ToLower(strings.TrimSpace(o.Judge))
	switch o.Judge {
	case JudgeLLM:
		if o.Completer == nil {
			return errors.New("the llm judge needs a model client: set an API key (ANTHROPIC_API_KEY or OPENAI_API_KEY), or use the offline lexical judge")
		}
	case JudgeLexical:
	default:
		return fmt.Errorf("unknown judge %q: use %q or %q", o.Judge, JudgeLLM, JudgeLexical)
	}
	if o.In == nil {
		o.In = strings.NewReader("")
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Delay == 0 {
		o.Delay = DefaultDelay
	}
	if o.Sleep == nil {
		o.Sleep = llm.Sleep
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	def(&o.CheckpointDir, os.TempDir())
	if o.Cost == nil {
		o.Cost = llm.Cost
	}
	if o.ExeDir == "" {
		if exe, err := os.Executable(); err == nil {
			o.ExeDir = filepath.Dir(exe)
		}
	}
	return nil
}

// path resolves p against Options.Dir.
func (o *Options) path(p string) string {
	if filepath.IsAbs(p) || o.Dir == "" {
		return p
	}
	return filepath.Join(o.Dir, p)
}

// Run evaluates the answers. See the package documentation for the steps.
// Missing or malformed input files, a declined prompt (ErrDeclined), a
// failed model request and cancellation of ctx end the run with an error;
// after the first question, the checkpoint is kept so the next run can
// resume.
func Run(ctx context.Context, opts Options) (Result, error) {
	res := Result{}
	if err := opts.normalize(); err != nil {
		return res, err
	}
	o := opts
	res.LogFile = o.path(o.LogFile)
	logFile, err := os.Create(res.LogFile)
	if err != nil {
		return res, fmt.Errorf("create debug log %s: %w. Run from a folder you can write to", res.LogFile, err)
	}
	defer logFile.Close()
	r := &runner{
		o:   o,
		log: slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelDebug})),
		in:  bufio.NewReader(o.In),
		out: o.Out,
		res: &res,
	}
	r.log.Info("run started", "judge", o.Judge, "model", o.Model, "dir", o.Dir)
	err = r.run(ctx)
	if err != nil {
		r.log.Error("run ended", "err", err)
	} else {
		r.log.Info("run finished", "output", res.Output, "calls", res.Calls, "cost_usd", res.CostUSD)
	}
	return res, err
}

func (r *runner) warn(msg string) {
	r.res.Warnings = append(r.res.Warnings, msg)
	fmt.Fprintln(r.out, "Warning: "+msg)
	r.log.Warn(msg)
}

func (r *runner) run(ctx context.Context) error {
	o := r.o
	files := [3]inputFile{
		{path: o.QuestionsCSV, full: o.path(o.QuestionsCSV), columns: "Question Number, Question", valueCol: "Question", aliases: []string{"Query", "Question Text"}},
		{path: o.GroundTruthCSV, full: o.path(o.GroundTruthCSV), columns: "Question Number, Ground Truth", valueCol: "Ground Truth", aliases: []string{"GT", "Expected Answer", "Reference Answer", "Answer"}},
		{path: o.AnswersCSV, full: o.path(o.AnswersCSV), columns: "Question Number, RAG Answer", valueCol: "RAG Answer", aliases: []string{"Answer", "Response", "RAG Response"}},
	}
	var tabs [3]table
	for i, f := range files {
		t, err := loadTable(f, r.warn)
		if err != nil {
			return err
		}
		tabs[i] = t
	}
	qs, excluded := intersect(files, tabs)
	for _, w := range excluded {
		r.warn(w)
	}
	if len(qs) == 0 {
		return fmt.Errorf("no question number appears in all three of %s, %s and %s. Use the same Question Number for a question in every file", o.QuestionsCSV, o.GroundTruthCSV, o.AnswersCSV)
	}
	byKey := make(map[string]Question, len(qs))
	for _, q := range qs {
		byKey[q.Key] = q
	}

	if err := r.loadPrompt(); err != nil {
		return err
	}
	r.res.Prompt = r.prompt

	absPaths := make([]string, 0, 6)
	for i, f := range files {
		abs, _ := filepath.Abs(f.full)
		absPaths = append(absPaths, abs, fmt.Sprintf("%x", tabs[i].digest))
	}
	key := checkpointKey(append(absPaths, o.Judge, o.Model, r.prompt.Text)...)
	cpPath := checkpointPath(o.CheckpointDir, key)
	cp, err := loadCheckpoint(cpPath, key)
	if err != nil {
		r.warn(err.Error())
	}
	if cp != nil && !sameKeys(cp.Order, qs) {
		r.warn("the checkpoint " + cpPath + " does not match the questions; starting a new run")
		cp = nil
	}
	if cp != nil {
		fmt.Fprintf(r.out, "Found a checkpoint of an unfinished run: %d of %d questions evaluated.\n", len(cp.Done), len(cp.Order))
		yes, err := r.ask(ctx, "Resume previous run? [Y/n]")
		if err != nil {
			return err
		}
		if yes {
			r.res.Resumed = true
			r.log.Info("resuming", "checkpoint", cpPath, "done", len(cp.Done))
		} else {
			cp = nil
			os.Remove(cpPath)
			r.log.Info("checkpoint discarded", "checkpoint", cpPath)
		}
	}
	if cp == nil {
		seed := o.Seed
		for seed == 0 {
			seed = rand.Uint64()
		}
		order := make([]string, len(qs))
		for i, q := range qs {
			order[i] = q.Key
		}
		rng := rand.New(rand.NewPCG(seed, seed))
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		cp = &progress{Version: checkpointVersion, Key: key, Seed: seed, Order: order, Done: map[string]Row{}}
	}
	r.res.Seed = cp.Seed
	r.res.Judge = r.describeJudge()

	// Pre-run summary.
	remaining := make([]Question, 0, len(cp.Order))
	for _, k := range cp.Order {
		if _, done := cp.Done[k]; !done {
			remaining = append(remaining, byKey[k])
		}
	}
	fmt.Fprintln(r.out, "Files found:")
	fmt.Fprintf(r.out, "  %s: %d questions\n", o.QuestionsCSV, len(tabs[0].keys))
	fmt.Fprintf(r.out, "  %s: %d ground truth answers\n", o.GroundTruthCSV, len(tabs[1].keys))
	fmt.Fprintf(r.out, "  %s: %d RAG answers\n", o.AnswersCSV, len(tabs[2].keys))
	fmt.Fprintf(r.out, "Questions to evaluate: %d (present in all three files)", len(qs))
	if done := len(qs) - len(remaining); done > 0 {
		fmt.Fprintf(r.out, ", %d already done, %d left", done, len(remaining))
	}
	fmt.Fprintln(r.out)
	fmt.Fprintf(r.out, "Judge: %s\n", r.res.Judge)
	if o.Judge == JudgeLLM {
		fmt.Fprintf(r.out, "Prompt: %s\n", r.prompt.Source)
	}
	fmt.Fprintf(r.out, "Random seed: %d (use this seed to repeat the order)\n", cp.Seed)
	fmt.Fprintln(r.out, r.estimate(remaining))
	yes, err := r.ask(ctx, "Proceed? [Y/n]")
	if err != nil {
		return err
	}
	if !yes {
		return ErrDeclined
	}

	if o.Judge == JudgeLLM {
		if err := r.check(ctx); err != nil {
			return err
		}
	}
	if err := cp.save(cpPath, r.res.Resumed); err != nil {
		r.warn(err.Error() + "; continuing without a checkpoint")
	}
	defer cp.close()

	for i, k := range cp.Order {
		if _, done := cp.Done[k]; done {
			continue
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("evaluation interrupted: %w. Progress is saved; run again to resume", err)
		}
		q := byKey[k]
		fmt.Fprintf(r.out, "Evaluating question %d/%d...\n", i+1, len(cp.Order))
		r.log.Debug("evaluating", "position", i+1, "question", q.Number)
		row, err := r.evaluate(ctx, q)
		if err != nil {
			r.res.Calls, r.res.CostUSD = r.calls, r.cost
			return fmt.Errorf("evaluation stopped at question %s: %w. Progress is saved; fix the problem and run again to resume", q.Number, err)
		}
		if err := cp.done(k, row); err != nil && r.cpWarns == 0 {
			r.cpWarns++
			r.warn(err.Error() + "; continuing without a checkpoint")
		}
	}
	r.res.Calls, r.res.CostUSD = r.calls, r.cost
	r.res.Judge = r.describeJudge()

	for _, q := range qs {
		r.res.Rows = append(r.res.Rows, cp.Done[q.Key])
	}
	r.res.Summary = Summarize(r.res.Rows)
	path, err := csvx.WriteNew(o.path(o.OutputDir), OutputPrefix, o.Now(), SummaryLines(r.res.Summary, r.res.Judge, cp.Seed), Columns(), records(r.res.Rows))
	if err != nil {
		return fmt.Errorf("%w. The checkpoint is kept; fix the problem and run again to resume", err)
	}
	r.res.Output = path
	cp.close()
	if r.res.Summary.Total > 0 && r.res.Summary.Scored == 0 {
		first := ""
		for _, row := range r.res.Rows {
			if row.Error != "" {
				first = row.Error
				break
			}
		}
		return fmt.Errorf("%w: all %d failed (first: %s). Nothing was scored; the error rows are in %s. The checkpoint %s is kept: check the model (--model, --provider) and the prompt, then run again to resume", ErrNoVerdict, r.res.Summary.Total, first, path, cpPath)
	}
	if err := checkpoint.Remove(cpPath); err != nil {
		r.warn("could not remove the checkpoint " + cpPath + ": " + err.Error())
	}
	for _, l := range SummaryLines(r.res.Summary, r.res.Judge, cp.Seed) {
		fmt.Fprintln(r.out, strings.TrimPrefix(l, "#SUMMARY: "))
	}
	if o.Judge == JudgeLLM {
		fmt.Fprintf(r.out, "Model calls: %d, cost: $%.4f\n", r.calls, r.cost)
	}
	fmt.Fprintf(r.out, "Results written to %s\n", path)
	return nil
}

// sameKeys reports whether order holds exactly the keys of qs.
func sameKeys(order []string, qs []Question) bool {
	if len(order) != len(qs) {
		return false
	}
	set := make(map[string]bool, len(order))
	for _, k := range order {
		set[k] = true
	}
	for _, q := range qs {
		if !set[q.Key] {
			return false
		}
	}
	return len(set) == len(qs)
}

// describeJudge names the judge for the summary.
func (r *runner) describeJudge() string {
	if r.o.Judge == JudgeLexical {
		return "lexical (offline word overlap, no LLM)"
	}
	if m := r.modelName(); m != "" {
		return "llm (model " + m + ")"
	}
	return "llm"
}

// modelName is the model that answered, else the one asked for, else the
// Completer's default.
func (r *runner) modelName() string {
	switch {
	case r.model != "":
		return r.model
	case r.o.Model != "":
		return r.o.Model
	}
	if m, ok := r.o.Completer.(interface{ Model() string }); ok {
		return m.Model()
	}
	return ""
}

// loadPrompt picks the prompt: Options.PromptFile, evaluation_prompt.txt in
// Dir, then next to the executable, then DefaultPrompt.
func (r *runner) loadPrompt() error {
	r.prompt = Prompt{Text: DefaultPrompt, Source: "built-in"}
	if r.o.Judge != JudgeLLM {
		return nil
	}
	if r.o.PromptFile != "" {
		text, ok, err := readPromptFile(r.o.path(r.o.PromptFile))
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("prompt file %s not found. Create it, or leave the prompt option empty to use the built-in prompt", r.o.PromptFile)
		}
		return r.usePrompt(text, r.o.PromptFile)
	}
	for _, dir := range []string{r.o.Dir, r.o.ExeDir} {
		if dir == "" && r.o.Dir != "" {
			continue
		}
		p := filepath.Join(dir, PromptFile)
		text, ok, err := readPromptFile(p)
		if err != nil {
			return err
		}
		if ok {
			return r.usePrompt(text, p)
		}
	}
	return nil
}

func (r *runner) usePrompt(text, path string) error {
	if strings.TrimSpace(text) == "" {
		r.warn(path + " is empty; using the built-in prompt")
		return nil
	}
	r.prompt = Prompt{Text: text, Source: path + " (custom)"}
	r.log.Info("custom prompt", "file", path, "template", r.prompt.isTemplate())
	return nil
}

// ask prints question and reads a yes/no answer; an empty line is yes.
func (r *runner) ask(ctx context.Context, question string) (bool, error) {
	if r.o.Yes {
		fmt.Fprintln(r.out, question+" y (--yes)")
		return true, nil
	}
	for range 3 {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		fmt.Fprint(r.out, question+" ")
		line, err := r.in.ReadString('\n')
		if err != nil && line == "" {
			if errors.Is(err, io.EOF) {
				return false, fmt.Errorf("no answer to %q: %w. Answer the prompt, or use the yes option to skip prompts", question, ErrInputEnded)
			}
			return false, fmt.Errorf("read answer: %w", err)
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "", "y", "yes", "はい":
			return true, nil
		case "n", "no", "いいえ":
			return false, nil
		}
		fmt.Fprintln(r.out, "Please answer y or n.")
	}
	return false, fmt.Errorf("no valid answer to %q. Answer y or n", question)
}
