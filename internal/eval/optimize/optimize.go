// Package optimize is the folder-structure optimisation that follows a
// batch evaluation (origin: seed 000): for
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
	"io/fs"
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

// ErrRowMismatch means the input CSV to update and the results CSV do not
// have the same rows: optimise the results CSV on its own, or pass the input
// it was made from.
var ErrRowMismatch = errors.New("optimise the results CSV on its own or pass the input it was made from")

// ErrUndoDatabase means an undo could not reach the page database the
// optimisation wrote to: undo with that database folder.
var ErrUndoDatabase = errors.New("undo with the database folder the optimisation used")

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
	Input     string // results CSV of a batch run
	Root      string // folder page identities are relative to; "" means "."
	Scope     string // database folder, relative to Root; "" means "database"
	OutputDir string // where the manifest (and a Separate CSV) go; "" means Input's folder
	// Target is the CSV whose Optimized Reference Document column receives
	// the aliases (seed 000: "Updates the input CSV"); "" means Input. It
	// must have Input's data rows in the same order — the batch input of
	// the results CSV Input. It is rewritten in place after a backup copy
	// <stem>_backup_<ts>.csv is written next to it.
	Target string
	// Separate leaves Target untouched and writes
	// <stem>_optimized_<ts>.csv into OutputDir instead.
	Separate bool
	// DataDir is the source folder the database mirrors (data/manuals/x.pdf
	// → <scope>/manuals/x/). Each source's page folder is another
	// document's: a copy is never put there or below it. "" skips the
	// check.
	DataDir     string
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
	Output   string      // the CSV written: Target, or the Separate file
	Backup   string      // the copy of Target made before it was rewritten; "" with Separate
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

	w := worker{opts: opts, root: root, scope: scope, scopeDir: scopeDir, mf: mf, log: lg, docs: documentFolders(opts.DataDir, scopeDir)}
	// Phase 1, in parallel: plan every row and ask for its first proposal
	// against one snapshot of the tree, taken before anything is copied.
	// Phase 2, one row at a time in input order: copy (and, with the RL
	// loop, re-ask, roll back and propose again). Nothing a row sees then
	// depends on how many workers ran phase 1, so the same input gives the
	// same folders at any --workers.
	plans := make([]*plan, len(cand))
	var snap treeSnapshot
	if len(cand) > 0 {
		snap.tree, snap.folders, snap.err = ListTree(scopeDir, opts.TreeDepth, treeLimit)
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(opts.Workers, max(1, len(cand))) {
		wg.Go(func() {
			for k := range jobs {
				i := cand[k]
				r := rows[i]
				pl := w.prepare(i+1, cell(r, cq), cell(r, cref), cell(r, cret))
				if pl.rep.Status == "" {
					w.proposeFirst(ctx, pl, snap)
				}
				plans[k] = pl
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
	reports := make([]RowReport, len(cand))
	for k, pl := range plans {
		if pl == nil || ctx.Err() != nil {
			continue // never started: interrupted
		}
		reports[k] = w.apply(ctx, pl, cell(rows[cand[k]], copt))
	}

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
	target := opts.Target
	if target == "" || sameFile(target, opts.Input) {
		target = opts.Input
	} else if header, rows, err = targetRows(target, len(rows), cand, res.Rows); err != nil {
		return res, err
	}
	out, backup, err := writeOutput(opts, target, outDir, header, rows)
	res.Output, res.Backup = out, backup
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
	docs     []string // page folders of source documents, relative to the scope (see Options.DataDir)
}

// documentFolders lists, relative to scopeDir, the page folder of every
// source file under dataDir that exists in the database: the file's path
// without its extension. nil when dataDir is "" or unreadable.
func documentFolders(dataDir, scopeDir string) []string {
	if dataDir == "" {
		return nil
	}
	var out []string
	filepath.WalkDir(dataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dataDir, p)
		if err != nil {
			return nil
		}
		rel = strings.TrimSuffix(rel, filepath.Ext(rel))
		if fi, err := os.Stat(filepath.Join(scopeDir, rel)); err == nil && fi.IsDir() {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

// documentOf returns the source document whose page folder dir is or lies
// in, if any.
func (w *worker) documentOf(dir string) (string, bool) {
	for _, d := range w.docs {
		if dir == d || strings.HasPrefix(dir, d+"/") {
			return d, true
		}
	}
	return "", false
}

// identicalCopy returns a file in the scope folder dir whose bytes equal
// the page src, if there is one: a second byte-identical copy in one
// folder adds nothing to retrieval.
func (w *worker) identicalCopy(dir, src string) (string, bool) {
	want, err := fileSHA256(filepath.Join(w.root, filepath.FromSlash(src)))
	if err != nil {
		return "", false
	}
	entries, err := os.ReadDir(filepath.Join(w.scopeDir, filepath.FromSlash(dir)))
	if err != nil {
		return "", false
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if got, err := fileSHA256(filepath.Join(w.scopeDir, filepath.FromSlash(dir), e.Name())); err == nil && got == want {
			return path.Join(w.scope, dir, e.Name()), true
		}
	}
	return "", false
}

// treeSnapshot is the scope's tree as every row's first proposal sees it.
type treeSnapshot struct {
	tree    string
	folders []string
	err     error
}

// plan is one candidate row, prepared for copying.
type plan struct {
	rep      RowReport // Status set when the row is skipped
	question string
	groups   [][]string // the Reference Document cell
	missed   []int      // indices into groups of the pages not retrieved
	sources  []string   // for each missed group, an alias that exists as a file
	avoid    []string   // folders (relative to the scope) already holding a missed page
	first    Proposal   // the first proposal, made on the snapshot
	firstErr error
}

// prepare reads one failed row; it changes nothing on disk.
func (w *worker) prepare(n int, question, refCell, retCell string) *plan {
	pl := &plan{rep: RowReport{Row: n, Question: question}}
	skip := func(format string, a ...any) *plan {
		pl.rep.Status = "skipped: " + fmt.Sprintf(format, a...)
		w.log.printf("row %d: %s", n, pl.rep.Status)
		return pl
	}
	pl.question = strings.TrimSpace(question)
	if pl.question == "" {
		return skip("empty Question cell")
	}
	pl.groups = metrics.ParseReference(refCell)
	retrieved := map[string]bool{}
	for p := range strings.SplitSeq(retCell, "\n") {
		retrieved[metrics.NormalizePath(p)] = true
	}
	// The missed groups and, for each, an alias that exists as a regular file.
	for gi, g := range pl.groups {
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
		pl.missed = append(pl.missed, gi)
		pl.sources = append(pl.sources, src)
	}
	if len(pl.missed) == 0 {
		return skip("no missed page (Ref Recall < 1 but every reference was retrieved)")
	}
	for _, s := range pl.sources {
		if rel, ok := strings.CutPrefix(path.Dir(s), w.scope+"/"); ok {
			pl.avoid = append(pl.avoid, rel)
		}
	}
	// Other documents' page folders are never a destination.
	for _, d := range w.docs {
		if !contains(pl.avoid, d) {
			pl.avoid = append(pl.avoid, d)
		}
	}
	return pl
}

// proposeFirst asks for the row's first folder, on the snapshot.
func (w *worker) proposeFirst(ctx context.Context, pl *plan, snap treeSnapshot) {
	if snap.err != nil {
		pl.firstErr = snap.err
		return
	}
	pl.first, pl.firstErr = w.opts.Proposer.Propose(ctx, Request{
		Question: pl.question, Missed: pl.sources, Tree: snap.tree, Folders: snap.folders, Avoid: pl.avoid,
	})
}

// apply copies the row's pages to its proposed folder; with the RL loop it
// re-asks, rolls back a copy that did not help and proposes again. The
// new Optimized Reference Document cell merges the aliases of prevOpt
// (the row's cell before this run) with the new copies.
func (w *worker) apply(ctx context.Context, pl *plan, prevOpt string) RowReport {
	rep := pl.rep
	n := rep.Row
	if rep.Status != "" {
		return rep
	}
	skip := func(format string, a ...any) RowReport {
		rep.Status = "skipped: " + fmt.Sprintf(format, a...)
		w.log.printf("row %d: %s", n, rep.Status)
		return rep
	}
	question, groups, missed, sources, avoid := pl.question, pl.groups, pl.missed, pl.sources, pl.avoid
	attempts := 1
	if w.opts.EnableRL {
		attempts = w.opts.MaxAttempts
	}
	var tried []string
	repeats := 0 // proposals of a folder already tried, in a row
	for k := 1; k <= attempts; k++ {
		if err := ctx.Err(); err != nil {
			return skip("interrupted")
		}
		prop, err := pl.first, pl.firstErr
		if k > 1 {
			var tree string
			var folders []string
			if tree, folders, err = ListTree(w.scopeDir, w.opts.TreeDepth, treeLimit); err == nil {
				prop, err = w.opts.Proposer.Propose(ctx, Request{
					Question: question, Missed: sources, Tree: tree, Folders: folders, Tried: tried, Avoid: avoid,
				})
			}
		}
		if err != nil {
			return skip("%s", oneLine(err.Error()))
		}
		dir, err := SafeFolder(w.scopeDir, prop.Folder)
		if k > 1 && (contains(tried, prop.Folder) || err == nil && contains(tried, dir)) {
			// A failed folder proposed again is banned: it costs no
			// attempt (no copy, no re-ask, no re-index), and a proposer
			// that keeps repeating itself ends the row.
			repeats++
			w.log.printf("row %d: folder %q was already tried; asking for another", n, prop.Folder)
			if repeats >= maxRepeats {
				rep.Status = "not improved"
				w.log.printf("row %d: the proposer repeated folders that already failed %d times; stopped after %d attempt(s)", n, repeats, len(rep.Attempts))
				w.reindexAfterRollback(ctx, n)
				return rep
			}
			k--
			continue
		}
		repeats = 0
		at := Attempt{Folder: prop.Folder, Reason: prop.Reason}
		tried = append(tried, prop.Folder)
		if err == nil {
			if d, ok := w.documentOf(dir); ok {
				err = fmt.Errorf("folder %q is the page folder of the document %s; a copy would be mistaken for one of its pages", prop.Folder, d)
			} else if contains(avoid, dir) {
				err = fmt.Errorf("folder %q already holds the missed page", prop.Folder)
			}
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
			if f, ok := w.identicalCopy(dir, src); ok {
				// No second byte-identical copy in one folder: the one
				// there becomes the alias.
				made = append(made, copied{file: ManifestFile{Path: f, Source: src}, reused: true})
				at.Copies = append(at.Copies, f)
				continue
			}
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
			rep.Aliases = metrics.FormatReference(MergeAliases(newGroups, metrics.ParseReference(prevOpt)))
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
	w.reindexAfterRollback(ctx, n)
	rep.Status = "not improved"
	w.log.printf("row %d: no proposal made the question find its pages in %d attempt(s)", n, attempts)
	return rep
}

// maxRepeats is how many proposals in a row of folders already tried end a
// row's RL loop.
const maxRepeats = 3

// reindexAfterRollback drops the rolled-back copies from the index (RL
// loop only).
func (w *worker) reindexAfterRollback(ctx context.Context, n int) {
	if !w.opts.EnableRL {
		return
	}
	w.reindex.Lock()
	defer w.reindex.Unlock()
	if err := w.opts.Reindexer.Reindex(ctx); err != nil {
		w.log.printf("row %d: re-index after rollback: %v", n, err)
	}
}

// MergeAliases adds to each group of groups the aliases of the groups of
// prev that share an alias with it, keeping order and dropping repeats, so
// a second optimisation adds its copy after the first one's instead of
// replacing it ("orig|copy1", then "orig|copy2" → "orig|copy1|copy2"). Groups
// of prev that match none are kept at the end.
func MergeAliases(groups, prev [][]string) [][]string {
	out := make([][]string, len(groups))
	used := make([]bool, len(prev))
	for i, g := range groups {
		seen := map[string]bool{}
		add := func(a string) {
			if a != "" && !seen[a] {
				seen[a] = true
				out[i] = append(out[i], a)
			}
		}
		for j, pg := range prev {
			if used[j] || !overlaps(g, pg) {
				continue
			}
			used[j] = true
			for _, a := range pg {
				add(a)
			}
		}
		for _, a := range g {
			add(a)
		}
	}
	for j, pg := range prev {
		if !used[j] {
			out = append(out, pg)
		}
	}
	return out
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		if contains(b, x) {
			return true
		}
	}
	return false
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

// sameFile reports whether a and b name the same file.
func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// targetRows reads the CSV to update when it is not the results CSV, and
// puts the new aliases of reps into its Optimized Reference Document
// column (added when missing). Rows without a new alias keep their cell,
// or get their Reference Document. It must have n data rows, as the
// results CSV has.
func targetRows(target string, n int, cand []int, reps []RowReport) ([]string, [][]string, error) {
	header, rows, _, err := csvx.ReadFile(target)
	if err != nil {
		return nil, nil, fmt.Errorf("optimize: read %s: %w", target, err)
	}
	if len(rows) != n {
		return nil, nil, fmt.Errorf("optimize: %s has %d data rows but the results CSV has %d: %w", target, len(rows), n, ErrRowMismatch)
	}
	copt := csvx.MatchColumn(header, batch.ColOptimized)
	if copt < 0 {
		header = append(header, batch.ColOptimized)
		copt = len(header) - 1
	}
	for i := range rows {
		for len(rows[i]) < len(header) {
			rows[i] = append(rows[i], "")
		}
	}
	byRow := map[int]string{}
	for _, r := range reps {
		if r.Aliases != "" {
			byRow[r.Row-1] = r.Aliases
		}
	}
	cref := csvx.MatchColumn(header, batch.ColReference)
	for i, r := range rows {
		if a, ok := byRow[i]; ok {
			r[copt] = metrics.FormatReference(MergeAliases(metrics.ParseReference(a), metrics.ParseReference(r[copt])))
		} else if strings.TrimSpace(r[copt]) == "" {
			r[copt] = cell(r, cref)
		}
	}
	return header, rows, nil
}

// writeOutput writes the updated CSV: by default over target (through a
// temporary file and a rename, so a failure leaves it intact) after
// copying it to <stem>_backup_YYYYMMDD_HHMMSS.csv beside it; with
// Separate as <stem>_optimized_YYYYMMDD_HHMMSS.csv in outDir.
func writeOutput(opts Options, target, outDir string, header []string, rows [][]string) (written, backup string, err error) {
	stem := strings.TrimSuffix(filepath.Base(target), filepath.Ext(target))
	if opts.Separate {
		p, err := csvx.WriteNew(outDir, stem+"_optimized_", opts.Now(), nil, header, rows)
		if err != nil {
			return p, "", fmt.Errorf("optimize: %w", err)
		}
		return p, "", nil
	}
	if backup, err = backupFile(target, stem, opts.Now()); err != nil {
		return "", "", err
	}
	if err := csvx.WriteFile(target, header, rows); err != nil {
		return target, backup, fmt.Errorf("optimize: %w", err)
	}
	return target, backup, nil
}

// backupFile copies target to <stem>_backup_<ts>.csv in its folder.
func backupFile(target, stem string, now time.Time) (string, error) {
	data, err := os.ReadFile(target)
	if err != nil {
		return "", fmt.Errorf("optimize: back up %s: %w", target, err)
	}
	f, p, err := csvx.CreateTimestamped(filepath.Dir(target), stem+"_backup_", ".csv", now)
	if err != nil {
		return "", fmt.Errorf("optimize: back up %s: %w", target, err)
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", fmt.Errorf("optimize: back up %s: %w", target, werr)
	}
	return p, nil
}
