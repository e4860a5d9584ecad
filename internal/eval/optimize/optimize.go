// Package optimize is the folder-structure optimisation of seed 000: for
// every question whose reference pages were missed (Ref Recall < 1), it asks
// a Proposer for a more telling folder inside the database scope, copies
// the missed pages there, and records the copies as aliases in the
// Optimized Reference Document column ("original|copy").
//
// Pages are only ever copied, never moved or overwritten, and every file
// and folder created is written to a manifest so Undo can restore the tree.
// With EnableRL each copy is tested by re-indexing and asking the question
// again; a copy that does not make the question find its pages is deleted
// before the next proposal.
package optimize

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/shirube/shirube/internal/csvx"
	"github.com/shirube/shirube/internal/eval/batch"
	"github.com/shirube/shirube/internal/eval/metrics"
)

// Defaults of Options.
const (
	DefaultWorkers     = 5
	DefaultMaxAttempts = 5 // seed 000: up to 5 attempts per question
	DefaultTreeDepth   = 3
	treeLimit          = 300 // folders shown to the proposer
)

// Reindexer brings the search index up to date with the database folder.
// It is called after every copy and rollback of the RL loop; calls are
// serialised by Run.
type Reindexer interface {
	Reindex(ctx context.Context) error
}

// Options configure Run.
type Options struct {
	Input       string           // results CSV of a batch run
	Root        string           // folder page identities are relative to; "" means "."
	Scope       string           // database folder, relative to Root; "" means "database"
	OutputDir   string           // where the new CSV and the manifest go; "" means Input's folder
	InPlace     bool             // rewrite Input instead of writing <stem>_optimized_<ts>.csv
	Workers     int              // questions analysed in parallel; 0 means DefaultWorkers
	Proposer    Proposer         // nil means OfflineProposer with TermTokenizer
	TreeDepth   int              // levels of the scope shown to the proposer; 0 means DefaultTreeDepth
	EnableRL    bool             // test each copy and roll back ineffective ones
	MaxAttempts int              // RL attempts per question; 0 means DefaultMaxAttempts
	Asker       batch.Asker      // required with EnableRL
	Reindexer   Reindexer        // required with EnableRL
	Log         io.Writer        // one line per attempt and per skipped row; nil for none
	Now         func() time.Time // clock for file names; nil means time.Now
}

// Attempt is one proposal tried for a question.
type Attempt struct {
	Folder string        // as proposed
	Reason string        // the proposer's reason
	Copies []string      // files created (identities)
	Recall metrics.Ratio // Ref Recall after re-asking (RL only)
	Kept   bool          // the copies stayed
	Err    string        // why the attempt failed, if it did
}

// RowReport is what happened to one candidate row.
type RowReport struct {
	Row      int // 1-based data row
	Question string
	Status   string // "optimized", "skipped: <reason>" or "not improved"
	Aliases  string // the new Optimized Reference Document cell
	Attempts []Attempt
}

// Result describes a finished run.
type Result struct {
	Output   string      // the CSV written
	Manifest string      // manifest of created files; "" when nothing was created
	Rows     []RowReport // candidate rows (Ref Recall < 1), in input order
}

// Run optimises the folder structure for every failed row of opts.Input.
// A row that cannot be optimised (no question, page missing on disk,
// unusable proposal) is skipped with a one-line reason and the run
// continues; it is an error only when the input or the scope cannot be
// read or the output cannot be written.
func Run(ctx context.Context, opts Options) (Result, error) {
	var res Result
	if opts.Root == "" {
		opts.Root = "."
	}
	if opts.Scope == "" {
		opts.Scope = "database"
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.Proposer == nil {
		opts.Proposer = OfflineProposer{Tokenizer: TermTokenizer{}}
	}
	if opts.TreeDepth <= 0 {
		opts.TreeDepth = DefaultTreeDepth
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.EnableRL && (opts.Asker == nil || opts.Reindexer == nil) {
		return res, errors.New("optimize: the RL loop needs an Asker and a Reindexer")
	}
	lg := &logger{w: opts.Log}

	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return res, fmt.Errorf("optimize: root: %w", err)
	}
	scope := metrics.NormalizePath(opts.Scope)
	if !filepath.IsLocal(filepath.FromSlash(scope)) {
		return res, fmt.Errorf("optimize: scope %q must be a folder inside %s", opts.Scope, root)
	}
	scopeDir := filepath.Join(root, filepath.FromSlash(scope))
	if fi, err := os.Stat(scopeDir); err != nil || !fi.IsDir() {
		return res, fmt.Errorf("optimize: database folder %s not found; set the scope to the folder holding the pages", scopeDir)
	}

	header, rows, warn, err := csvx.ReadFile(opts.Input)
	if err != nil {
		return res, fmt.Errorf("optimize: read input: %w", err)
	}
	if warn != "" {
		lg.printf("%s: %s", opts.Input, warn)
	}
	col := func(name string) int { return csvx.MatchColumn(header, name) }
	cq, cref, cret, crec := col(batch.ColQuestion), col(batch.ColReference), col(batch.ColRetrieved), col(batch.ColRefRecall)
	for name, i := range map[string]int{batch.ColQuestion: cq, batch.ColReference: cref, batch.ColRetrieved: cret, batch.ColRefRecall: crec} {
		if i < 0 {
			return res, fmt.Errorf("optimize: %s has no %q column; run the batch evaluation first and optimise its results CSV", opts.Input, name)
		}
	}
	copt := col(batch.ColOptimized)
	if copt < 0 {
		header = append(header, batch.ColOptimized)
		copt = len(header) - 1
		for i := range rows {
			rows[i] = append(rows[i], "")
		}
	}

	outDir := opts.OutputDir
	if outDir == "" {
		outDir = filepath.Dir(opts.Input)
	}
	// Candidates: Ref Recall defined and below 1.
	var cand []int
	for i, r := range rows {
		rec, err := metrics.ParseRatio(cell(r, crec))
		if err != nil {
			lg.printf("row %d: skipped: Ref Recall %q is not a number", i+1, cell(r, crec))
			continue
		}
		if rec.Valid && rec.Value < 1 {
			cand = append(cand, i)
		}
	}

	var mf *manifestFile
	if len(cand) > 0 {
		f, p, err := csvx.CreateTimestamped(outDir, "optimize_manifest_", ".json", opts.Now())
		if err != nil {
			return res, fmt.Errorf("optimize: %w", err)
		}
		f.Close()
		mf = &manifestFile{path: p, m: Manifest{Version: 1, Created: opts.Now().UTC(), Root: root}}
		if err := mf.update(func(*Manifest) {}); err != nil {
			return res, err
		}
	}

	w := worker{opts: opts, root: root, scope: scope, scopeDir: scopeDir, mf: mf, log: lg}
	reports := make([]RowReport, len(cand))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(opts.Workers, max(1, len(cand))) {
		wg.Go(func() {
			for k := range jobs {
				i := cand[k]
				r := rows[i]
				rep := w.row(ctx, i+1, cell(r, cq), cell(r, cref), cell(r, cret))
				reports[k] = rep
			}
		})
	}
feed:
	for k := range cand {
		select {
		case jobs <- k:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()

	for k, i := range cand {
		rep := reports[k]
		if rep.Row == 0 { // never started: interrupted
			continue
		}
		res.Rows = append(res.Rows, rep)
		if rep.Aliases != "" {
			rows[i][copt] = rep.Aliases
		}
	}
	// Rows without a new alias keep what they had, or the original reference.
	for _, r := range rows {
		if strings.TrimSpace(r[copt]) == "" {
			r[copt] = cell(r, cref)
		}
	}

	if mf != nil {
		mf.mu.Lock()
		empty := len(mf.m.Files) == 0 && len(mf.m.Dirs) == 0
		mf.mu.Unlock()
		if empty {
			os.Remove(mf.path)
		} else {
			res.Manifest = mf.path
		}
	}
	out, err := writeOutput(opts, outDir, header, rows)
	res.Output = out
	if err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("optimize interrupted (%v): finished rows were written to %s", context.Cause(ctx), out)
	}
	return res, nil
}

func cell(r []string, i int) string {
	if i < 0 || i >= len(r) {
		return ""
	}
	return r[i]
}

// logger writes whole lines from many goroutines.
type logger struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *logger) printf(format string, a ...any) {
	if l.w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format+"\n", a...)
}

// worker holds what every row needs.
type worker struct {
	opts     Options
	root     string // absolute
	scope    string // slash path relative to root
	scopeDir string // absolute
	mf       *manifestFile
	log      *logger
	reindex  sync.Mutex
}

// row optimises one failed row.
func (w *worker) row(ctx context.Context, n int, question, refCell, retCell string) RowReport {
	rep := RowReport{Row: n, Question: question}
	skip := func(format string, a ...any) RowReport {
		rep.Status = "skipped: " + fmt.Sprintf(format, a...)
		w.log.printf("row %d: %s", n, rep.Status)
		return rep
	}
	question = strings.TrimSpace(question)
	if question == "" {
		return skip("empty Question cell")
	}
	groups := metrics.ParseReference(refCell)
	retrieved := map[string]bool{}
	for p := range strings.SplitSeq(retCell, "\n") {
		retrieved[metrics.NormalizePath(p)] = true
	}
	// The missed groups and, for each, an alias that exists as a regular file.
	var missed []int
	var sources []string
	for gi, g := range groups {
		hit := false
		for _, a := range g {
			hit = hit || retrieved[a]
		}
		if hit {
			continue
		}
		src := ""
		for _, a := range g {
			if !filepath.IsLocal(filepath.FromSlash(a)) {
				continue
			}
			if fi, err := os.Stat(filepath.Join(w.root, filepath.FromSlash(a))); err == nil && fi.Mode().IsRegular() {
				src = a
				break
			}
		}
		if src == "" {
			return skip("missed page %s not found under %s", strings.Join(g, "|"), w.root)
		}
		missed = append(missed, gi)
		sources = append(sources, src)
	}
	if len(missed) == 0 {
		return skip("no missed page (Ref Recall < 1 but every reference was retrieved)")
	}
	var avoid []string
	for _, s := range sources {
		if rel, ok := strings.CutPrefix(path.Dir(s), w.scope+"/"); ok {
			avoid = append(avoid, rel)
		}
	}

	attempts := 1
	if w.opts.EnableRL {
		attempts = w.opts.MaxAttempts
	}
	var tried []string
	for k := 1; k <= attempts; k++ {
		if err := ctx.Err(); err != nil {
			return skip("interrupted")
		}
		tree, folders, err := ListTree(w.scopeDir, w.opts.TreeDepth, treeLimit)
		if err != nil {
			return skip("%v", err)
		}
		prop, err := w.opts.Proposer.Propose(ctx, Request{
			Question: question, Missed: sources, Tree: tree, Folders: folders, Tried: tried, Avoid: avoid,
		})
		if err != nil {
			return skip("%s", oneLine(err.Error()))
		}
		at := Attempt{Folder: prop.Folder, Reason: prop.Reason}
		tried = append(tried, prop.Folder)
		dir, err := SafeFolder(w.scopeDir, prop.Folder)
		if err == nil && contains(avoid, dir) {
			err = fmt.Errorf("folder %q already holds the missed page", prop.Folder)
		}
		if err != nil {
			at.Err = "rejected: " + err.Error()
			rep.Attempts = append(rep.Attempts, at)
			if !w.opts.EnableRL {
				return skip("%s", at.Err)
			}
			w.log.printf("row %d attempt %d/%d: %s", n, k, attempts, at.Err)
			continue
		}
		if dir != prop.Folder {
			tried = append(tried, dir)
		}
		var made []copied
		var cerr error
		for _, src := range sources {
			c, err := copyPage(ctx, w.root, src, w.scope+"/"+dir, w.mf)
			if err != nil {
				cerr = err
				break
			}
			made = append(made, c)
			at.Copies = append(at.Copies, c.file.Path)
		}
		newGroups := withAliases(groups, missed, made)
		if cerr == nil && w.opts.EnableRL {
			at.Recall, cerr = w.check(ctx, question, newGroups)
		}
		if cerr == nil && (!w.opts.EnableRL || at.Recall.Valid && at.Recall.Value >= 1) {
			at.Kept = true
			rep.Attempts = append(rep.Attempts, at)
			rep.Status = "optimized"
			rep.Aliases = metrics.FormatReference(newGroups)
			w.log.printf("row %d attempt %d/%d: copied to %s/%s (%s)%s", n, k, attempts, w.scope, dir, prop.Reason, recallNote(at.Recall))
			return rep
		}
		// Roll back: the copy did not help (or failed half-way).
		for _, c := range made {
			if err := c.remove(w.root, w.mf); err != nil {
				w.log.printf("row %d: %v", n, err)
			}
		}
		if cerr != nil {
			at.Err = oneLine(cerr.Error())
		}
		rep.Attempts = append(rep.Attempts, at)
		if !w.opts.EnableRL {
			return skip("%s", at.Err)
		}
		w.log.printf("row %d attempt %d/%d: %s/%s%s; rolled back%s", n, k, attempts, w.scope, dir, recallNote(at.Recall), errNote(at.Err))
	}
	if w.opts.EnableRL {
		// Drop the rolled-back copies from the index too.
		w.reindex.Lock()
		if err := w.opts.Reindexer.Reindex(ctx); err != nil {
			w.log.printf("row %d: re-index after rollback: %v", n, err)
		}
		w.reindex.Unlock()
	}
	rep.Status = "not improved"
	w.log.printf("row %d: no proposal made the question find its pages in %d attempt(s)", n, attempts)
	return rep
}

// check re-indexes, asks the question again and returns Ref Recall against
// the alias groups.
func (w *worker) check(ctx context.Context, question string, groups [][]string) (metrics.Ratio, error) {
	w.reindex.Lock()
	err := w.opts.Reindexer.Reindex(ctx)
	w.reindex.Unlock()
	if err != nil {
		return metrics.Ratio{}, fmt.Errorf("re-index: %w", err)
	}
	ans, err := w.opts.Asker.Ask(ctx, question)
	if err != nil {
		return metrics.Ratio{}, fmt.Errorf("ask again: %w", err)
	}
	return metrics.EvaluateReference(groups, ans.Retrieved, nil).Recall, nil
}

// withAliases appends each copy to the alias group of the page it copies.
func withAliases(groups [][]string, missed []int, made []copied) [][]string {
	out := make([][]string, len(groups))
	for i, g := range groups {
		out[i] = append([]string(nil), g...)
	}
	for k, c := range made {
		out[missed[k]] = append(out[missed[k]], c.file.Path)
	}
	return out
}

func recallNote(r metrics.Ratio) string {
	if !r.Valid {
		return ""
	}
	return "; Ref Recall " + r.Cell()
}

func errNote(e string) string {
	if e == "" {
		return ""
	}
	return " (" + e + ")"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// writeOutput writes the updated CSV: in place (through a temporary file
// and a rename, so a failure leaves the input intact) or as
// <stem>_optimized_YYYYMMDD_HHMMSS.csv.
func writeOutput(opts Options, outDir string, header []string, rows [][]string) (string, error) {
	var f *os.File
	var p string
	var err error
	if opts.InPlace {
		f, err = os.CreateTemp(filepath.Dir(opts.Input), ".optimize-*.csv")
		if err == nil {
			if fi, serr := os.Stat(opts.Input); serr == nil {
				err = f.Chmod(fi.Mode().Perm())
			}
		}
	} else {
		stem := strings.TrimSuffix(filepath.Base(opts.Input), filepath.Ext(opts.Input))
		f, p, err = csvx.CreateTimestamped(outDir, stem+"_optimized_", ".csv", opts.Now())
	}
	if err != nil {
		return "", fmt.Errorf("optimize: create output: %w", err)
	}
	cw := csvx.NewWriter(f)
	werr := cw.Write(header)
	for _, r := range rows {
		if werr == nil {
			werr = cw.Write(r)
		}
	}
	if werr == nil {
		werr = cw.Flush()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if opts.InPlace {
		if werr == nil {
			werr = os.Rename(f.Name(), opts.Input)
		}
		if werr != nil {
			os.Remove(f.Name())
		}
		p = opts.Input
	}
	if werr != nil {
		return p, fmt.Errorf("optimize: write %s: %w", p, werr)
	}
	return p, nil
}
