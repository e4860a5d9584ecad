package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/bench/sysinfo"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/eval/stats"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/retrieve"
)

// ScaleOptions configure ScaleCorpus.
type ScaleOptions struct {
	Corpus     string // folder with index.tsv and text/
	Points     []int  // chunk targets, 0 = the whole corpus (ParsePoints)
	MaxQueries int    // queries timed per leg and point
	Seed       uint64 // query drawing
	// QueryChunks picks the files queries are drawn from: the shortest
	// prefix holding that many chunks (0 or more than the smallest point
	// holds: the smallest point's files), so runs with other points draw
	// the same queries.
	QueryChunks int
	K           int    // results per search (default config.DefaultK)
	Warmup      int    // untimed searches before timing
	LoadRuns    int    // fresh load processes per point (median reported)
	Work        string // folder for data copies and indexes; "" = temporary, removed
	// Exe and ChildArgs start a child: Exe ChildArgs… build|load|query
	// flags… (shirube re-executes itself as `shirube bench scale-child`).
	Exe       string
	ChildArgs []string
	Log       io.Writer // progress lines; nil discards
}

// ScaleCurve is the result of `shirube bench scale --corpus`.
type ScaleCurve struct {
	Corpus      string         `json:"corpus"`
	CorpusFiles int            `json:"corpus_files"`
	Queries     int            `json:"queries"`
	QuerySeed   uint64         `json:"query_seed"`
	QueryFiles  int            `json:"query_files"` // queries drawn from the first QueryFiles files
	QueryKinds  map[string]int `json:"query_kinds"`
	K           int            `json:"k"`
	Warmup      int            `json:"warmup"`
	LoadRuns    int            `json:"load_runs"`
	Points      []ScalePoint   `json:"points"`
	Notes       []string       `json:"notes,omitempty"`
	Machine     Machine        `json:"machine"`
}

// Latency is a p50/p95 pair in milliseconds.
type Latency struct {
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
}

// ScalePoint is one point of the curve.
type ScalePoint struct {
	CurvePoint
	Chunks int `json:"chunks"` // indexed, as the build reports
	// Build: one child process running index.Build (extraction, page
	// database, chunking, analysis, BM25, local embedder fit and embed,
	// write); wall time of the whole process and its peak RSS.
	BuildSeconds      float64 `json:"build_seconds"`
	BuildChunksPerSec float64 `json:"build_chunks_per_s"`
	BuildPeakRSSMiB   float64 `json:"build_peak_rss_mib"`
	IndexMiB          float64 `json:"index_mib"`
	DatabaseMiB       float64 `json:"page_database_mib"`
	// Load: fresh processes that only open the index (index.Open) and
	// exit; median over LoadRuns of the whole process's wall time, of
	// index.Open's own time, and of its peak RSS.
	LoadSeconds     float64 `json:"load_process_seconds"`
	LoadOpenSeconds float64 `json:"load_open_seconds"`
	LoadRSSMiB      float64 `json:"load_peak_rss_mib"`
	// Queries: one more fresh process; each query is timed as the whole
	// hybrid search, the BM25 leg alone and the vector leg alone, the
	// order rotating per query (timeLegs).
	Queries     int     `json:"queries"`
	Hybrid      Latency `json:"hybrid"`
	BM25        Latency `json:"bm25_leg"`
	Vector      Latency `json:"vector_leg"`
	QueryRSSMiB float64 `json:"query_peak_rss_mib"`
	LoadAvg     string  `json:"load_average"` // at the end of the point
}

// ScaleCorpus measures the curve: for each point it indexes the first
// files of the corpus in a child process, then loads and queries the
// index in fresh processes.
func ScaleCorpus(ctx context.Context, opt ScaleOptions) (ScaleCurve, error) {
	logf := func(format string, a ...any) {
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, "bench scale: "+format+"\n", a...)
		}
	}
	if opt.K <= 0 {
		opt.K = config.DefaultK
	}
	opt.LoadRuns = max(1, opt.LoadRuns)
	if opt.Exe == "" {
		return ScaleCurve{}, errors.New("bench scale: no executable to re-run as the child")
	}
	files, notes, err := ReadCorpus(opt.Corpus)
	if err != nil {
		return ScaleCurve{}, err
	}
	curve := ScaleCurve{Corpus: opt.Corpus, CorpusFiles: len(files), QuerySeed: opt.Seed, K: opt.K, Warmup: opt.Warmup, LoadRuns: opt.LoadRuns, Notes: notes}
	logf("counting chunks of %d files (extract + chunk, no analysis)…", len(files))
	t0 := time.Now()
	counts, err := CountChunks(ctx, files, scaleChunkOptions(), runtime.GOMAXPROCS(0))
	if err != nil {
		return curve, err
	}
	logf("counted in %.1f s", time.Since(t0).Seconds())
	sel := SelectPoints(counts, opt.Points)

	work := opt.Work
	if work == "" {
		if work, err = os.MkdirTemp("", "shirube-scale-"); err != nil {
			return curve, err
		}
		defer os.RemoveAll(work)
	}
	data := filepath.Join(work, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return curve, err
	}

	// The same queries at every point: drawn from a prefix no longer than
	// the smallest point, so every index holds their source.
	pool := sel[0].Files
	if opt.QueryChunks > 0 {
		pool = min(pool, SelectPoints(counts, []int{opt.QueryChunks})[0].Files)
	}
	curve.QueryFiles = pool
	var srcs []QuerySource
	for _, f := range files[:pool] {
		b, err := os.ReadFile(f.Path)
		if err != nil {
			continue
		}
		srcs = append(srcs, QuerySource{Name: f.Name, Title: f.Title, Text: string(b)})
	}
	qs := DrawQueries(srcs, opt.MaxQueries, opt.Seed)
	if len(qs) == 0 {
		return curve, fmt.Errorf("bench scale: no queries could be drawn from the first %d files", pool)
	}
	curve.Queries = len(qs)
	curve.QueryKinds = map[string]int{}
	for _, q := range qs {
		curve.QueryKinds[q.Kind]++
	}
	qfile := filepath.Join(work, "queries.json")
	if err := writeJSONFile(qfile, qs); err != nil {
		return curve, err
	}

	placed := 0
	for i, p := range sel {
		if err := placeFiles(files[placed:p.Files], data); err != nil {
			return curve, err
		}
		placed = p.Files
		dir := filepath.Join(work, fmt.Sprintf("point-%d", i))
		logf("point %d/%d: %d files, %d chunks counted — building…", i+1, len(sel), p.Files, p.Chunks)
		pt, err := measurePoint(ctx, opt, p, data, dir, qfile, logf)
		if opt.Work == "" {
			os.RemoveAll(dir)
		}
		if err != nil {
			// Keep the points measured: a larger point that runs out of
			// memory must not lose the smaller ones. Later points are
			// larger still, so the run stops here.
			if len(curve.Points) == 0 || ctx.Err() != nil {
				return curve, err
			}
			note := fmt.Sprintf("point %d (%d files, %d chunks) not measured: %v", i+1, p.Files, p.Chunks, err)
			logf("%s", note)
			curve.Notes = append(curve.Notes, note)
			break
		}
		curve.Points = append(curve.Points, pt)
	}
	curve.Machine = ThisMachine()
	return curve, nil
}

func scaleChunkOptions() chunk.Options {
	return chunk.Options{Size: config.DefaultChunkSize, Overlap: config.DefaultChunkOverlap}
}

// placeFiles puts the files into the data folder: a hard link where the
// file system allows, else a copy (symbolic links out of the data folder
// are not followed by the walk).
func placeFiles(files []CorpusFile, data string) error {
	for _, f := range files {
		dst := filepath.Join(data, f.Name)
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		if os.Link(f.Path, dst) == nil {
			continue
		}
		b, err := os.ReadFile(f.Path)
		if err != nil {
			return fmt.Errorf("bench scale: read %s: %w", f.Path, err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return fmt.Errorf("bench scale: copy into %s: %w", data, err)
		}
	}
	return nil
}

func measurePoint(ctx context.Context, opt ScaleOptions, p CurvePoint, data, dir, qfile string, logf func(string, ...any)) (ScalePoint, error) {
	pt := ScalePoint{CurvePoint: p}
	ixDir, dbDir := filepath.Join(dir, "index"), filepath.Join(dir, "database")
	var built buildResult
	res, err := runChild(ctx, opt, &built, "build", "--data", data, "--database", dbDir, "--index", ixDir)
	if err != nil {
		return pt, err
	}
	pt.Chunks = built.Chunks
	pt.BuildSeconds = round(res.wall.Seconds())
	pt.BuildChunksPerSec = round(float64(built.Chunks) / res.wall.Seconds())
	pt.BuildPeakRSSMiB = mib(res.peakRSS)
	pt.IndexMiB = round(float64(dirSize(ixDir)) / (1 << 20))
	pt.DatabaseMiB = round(float64(dirSize(dbDir)) / (1 << 20))
	logf("  built %d chunks in %.1f s, peak RSS %.0f MiB, index %.0f MiB", pt.Chunks, pt.BuildSeconds, pt.BuildPeakRSSMiB, pt.IndexMiB)

	var walls, opens, rss []float64
	for range opt.LoadRuns {
		var lr loadResult
		res, err := runChild(ctx, opt, &lr, "load", "--index", ixDir)
		if err != nil {
			return pt, err
		}
		walls = append(walls, res.wall.Seconds())
		opens = append(opens, lr.OpenSeconds)
		rss = append(rss, float64(res.peakRSS))
	}
	pt.LoadSeconds, pt.LoadOpenSeconds, pt.LoadRSSMiB = round(median(walls)), round(median(opens)), mib(int64(median(rss)))
	logf("  load: %.2f s (open %.2f s), peak RSS %.0f MiB", pt.LoadSeconds, pt.LoadOpenSeconds, pt.LoadRSSMiB)

	var qr queryResult
	res, err = runChild(ctx, opt, &qr, "query", "--index", ixDir, "--queries", qfile,
		"--k", fmt.Sprint(opt.K), "--warmup", fmt.Sprint(opt.Warmup))
	if err != nil {
		return pt, err
	}
	pt.Queries, pt.Hybrid, pt.BM25, pt.Vector = qr.Queries, qr.Hybrid, qr.BM25, qr.Vector
	pt.QueryRSSMiB = mib(res.peakRSS)
	pt.LoadAvg = ThisMachine().LoadAvg
	logf("  queries: hybrid p50 %.2f / p95 %.2f ms (BM25 p95 %.2f, vector p95 %.2f), load %s", pt.Hybrid.P50, pt.Hybrid.P95, pt.BM25.P95, pt.Vector.P95, pt.LoadAvg)
	return pt, nil
}

type childRun struct {
	wall    time.Duration
	peakRSS int64
}

// runChild runs one child step and decodes its JSON result into out.
func runChild(ctx context.Context, opt ScaleOptions, out any, step string, args ...string) (childRun, error) {
	argv := append(slices.Clone(opt.ChildArgs), step)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, opt.Exe, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	run := childRun{wall: time.Since(start), peakRSS: sysinfo.PeakRSS(cmd.ProcessState)}
	if err != nil {
		return run, fmt.Errorf("bench scale: child %s: %w\n%s", step, err, tail(stderr.String(), 2000))
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return run, fmt.Errorf("bench scale: child %s printed no result: %w\n%s", step, err, tail(stdout.String()+stderr.String(), 2000))
	}
	return run, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func writeJSONFile(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func mib(b int64) float64 { return round(float64(b) / (1 << 20)) }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// The child steps' results, printed as JSON on stdout.
type buildResult struct {
	Chunks    int     `json:"chunks"`
	Documents int     `json:"documents"`
	Skipped   int     `json:"skipped"`
	Seconds   float64 `json:"seconds"`
}

type loadResult struct {
	Chunks      int     `json:"chunks"`
	OpenSeconds float64 `json:"open_seconds"`
}

type queryResult struct {
	Queries int     `json:"queries"`
	Hybrid  Latency `json:"hybrid"`
	BM25    Latency `json:"bm25_leg"`
	Vector  Latency `json:"vector_leg"`
}

// ScaleChild runs one step of `bench scale` in this process and prints
// its result as JSON: "build" (index.Build of --data with the default
// settings and the local embedder, --rebuild), "load" (index.Open only)
// or "query" (open, then time every query of --queries as the hybrid
// search and as each leg alone: timeLegs). The parent reads the process's wall time and
// peak RSS.
func ScaleChild(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("scale-child: want build, load or query")
	}
	fs := flag.NewFlagSet("scale-child "+args[0], flag.ContinueOnError)
	data := fs.String("data", "", "")
	db := fs.String("database", "", "")
	ixDir := fs.String("index", "", "")
	qfile := fs.String("queries", "", "")
	k := fs.Int("k", config.DefaultK, "")
	warm := fs.Int("warmup", 0, "")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	var res any
	switch args[0] {
	case "build":
		sum, err := index.Build(ctx, index.BuildOptions{DataDir: *data, DatabaseDir: *db, Dir: *ixDir, Rebuild: true,
			Chunk: scaleChunkOptions(), Analyzer: analysis.DefaultOptions(), Embedder: "local"})
		if err != nil {
			return err
		}
		res = buildResult{Chunks: sum.Chunks, Documents: sum.Documents, Skipped: len(sum.Skipped), Seconds: round(sum.Seconds)}
	case "load":
		t0 := time.Now()
		ix, err := index.Open(ctx, *ixDir, index.OpenOptions{})
		if err != nil {
			return err
		}
		res = loadResult{Chunks: ix.Len(), OpenSeconds: round(time.Since(t0).Seconds())}
	case "query":
		b, err := os.ReadFile(*qfile)
		if err != nil {
			return err
		}
		var qs []ScaleQuery
		if err := json.Unmarshal(b, &qs); err != nil {
			return fmt.Errorf("%s: %w", *qfile, err)
		}
		ix, err := index.Open(ctx, *ixDir, index.OpenOptions{})
		if err != nil {
			return err
		}
		r, err := timeLegs(ctx, ix, qs, *k, *warm)
		if err != nil {
			return err
		}
		res = r
	default:
		return fmt.Errorf("scale-child: unknown step %q (build, load or query)", args[0])
	}
	enc := json.NewEncoder(stdout)
	return enc.Encode(res)
}

// timeLegs runs warm untimed queries, then times every query three ways,
// rotating which goes first so none always meets a cold cache:
//
//   - hybrid: the whole default search, as `shirube search` runs it
//     (per-query weight, k results, evidence scores);
//   - BM25 leg alone: analysis and index.LexicalHits of the search's
//     candidates (max(10·k, 100));
//   - vector leg alone: analysis, query embedding and index.DenseHits of
//     as many candidates.
func timeLegs(ctx context.Context, ix *index.Index, qs []ScaleQuery, k, warm int) (queryResult, error) {
	s := retrieve.New(ix)
	cands := max(10*k, 100)
	run := [3]func(q string) error{
		func(q string) error {
			_, _, err := s.Search(ctx, q, retrieve.Options{K: k, BM25Weight: config.DefaultBM25Weight, AutoWeight: true})
			if errors.Is(err, retrieve.ErrEmptyQuery) {
				return nil
			}
			return err
		},
		func(q string) error {
			_, _, err := ix.LexicalHits(ctx, ix.Terms(q), cands)
			return err
		},
		func(q string) error {
			v, err := ix.EmbedQuery(ctx, q, nil)
			if err != nil {
				return err
			}
			_, err = ix.DenseHits(ctx, v, cands)
			return err
		},
	}
	names := [3]string{"hybrid", "BM25 leg", "vector leg"}
	for i := range min(warm, len(qs)) {
		for _, f := range run {
			if err := f(qs[i].Text); err != nil {
				return queryResult{}, err
			}
		}
	}
	var lat [3]stats.Latencies
	for i, q := range qs {
		if err := ctx.Err(); err != nil {
			return queryResult{}, err
		}
		for j := range run {
			m := (i + j) % len(run)
			t := time.Now()
			if err := run[m](q.Text); err != nil {
				return queryResult{}, fmt.Errorf("query %q (%s): %w", q.Text, names[m], err)
			}
			lat[m].Add(time.Since(t))
		}
	}
	leg := func(l *stats.Latencies) Latency {
		s := l.Summary()
		return Latency{P50: ms(s.P50), P95: ms(s.P95)}
	}
	return queryResult{Queries: len(qs), Hybrid: leg(&lat[0]), BM25: leg(&lat[1]), Vector: leg(&lat[2])}, nil
}

// WriteCurveTable prints the curve as a Markdown table (the form
// docs/BENCHMARKS.md uses), then the machine line and the notes.
func WriteCurveTable(w io.Writer, c ScaleCurve) {
	fmt.Fprintf(w, "corpus %s (%d files); %d queries (%s) drawn from the first %d files, seed %d, k = %d, %d warm-up, load median of %d fresh processes\n\n",
		c.Corpus, c.CorpusFiles, c.Queries, kindsLine(c.QueryKinds), c.QueryFiles, c.QuerySeed, c.K, c.Warmup, c.LoadRuns)
	fmt.Fprintln(w, "| files | chunks | build s | build chunks/s | build peak RSS MiB | index MiB | page db MiB | load s (open s) | load RSS MiB | hybrid p50 / p95 ms | BM25 leg p50 / p95 ms | vector leg p50 / p95 ms | query RSS MiB | load avg |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, p := range c.Points {
		fmt.Fprintf(w, "| %d | %d | %.1f | %.0f | %.0f | %.0f | %.0f | %.2f (%.2f) | %.0f | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.0f | %s |\n",
			p.Files, p.Chunks, p.BuildSeconds, p.BuildChunksPerSec, p.BuildPeakRSSMiB, p.IndexMiB, p.DatabaseMiB,
			p.LoadSeconds, p.LoadOpenSeconds, p.LoadRSSMiB, p.Hybrid.P50, p.Hybrid.P95, p.BM25.P50, p.BM25.P95,
			p.Vector.P50, p.Vector.P95, p.QueryRSSMiB, p.LoadAvg)
	}
	fmt.Fprintf(w, "\nmachine: %s; %s %s/%s; %s\n", c.Machine.Line(), c.Machine.GoVersion, c.Machine.GOOS, c.Machine.GOARCH, c.Machine.RecordedAt)
	for _, n := range c.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

func kindsLine(kinds map[string]int) string {
	var parts []string
	for _, k := range []string{"caption", "sentence"} {
		if kinds[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
		}
	}
	return strings.Join(parts, ", ")
}

// MergeCurves joins curves measured in separate runs (say the whole-corpus
// point on its own) into one, points ordered by size. The runs must have
// timed the same queries: same corpus, seed, query files, count and k.
// The machine is the last run's; each point keeps its own load average.
func MergeCurves(cs []ScaleCurve) (ScaleCurve, error) {
	if len(cs) == 0 {
		return ScaleCurve{}, errors.New("no curves to merge")
	}
	out := cs[0]
	out.Points = nil
	for i, c := range cs {
		if c.Corpus != out.Corpus || c.QuerySeed != out.QuerySeed || c.QueryFiles != out.QueryFiles || c.Queries != out.Queries || c.K != out.K {
			return out, fmt.Errorf("curve %d timed other queries (corpus %s, seed %d, %d queries from %d files, k %d) than curve 1 (%s, %d, %d from %d, k %d) — run it with the same seed, query chunks, query count and k",
				i+1, c.Corpus, c.QuerySeed, c.Queries, c.QueryFiles, c.K, out.Corpus, out.QuerySeed, out.Queries, out.QueryFiles, out.K)
		}
		out.Points = append(out.Points, c.Points...)
		out.Machine = c.Machine
	}
	slices.SortStableFunc(out.Points, func(a, b ScalePoint) int { return a.Files - b.Files })
	return out, nil
}

// Replicate writes an index of a BEIR corpus's documents (one chunk each,
// as `bench beir` indexes them) repeated up to n chunks into dir, the
// copies renamed. It measures nothing: it makes fixed indexes for
// whole-process timings such as scripts/coldstart.sh (the copies never grow
// the vocabulary, so use `bench scale --corpus` for a scale curve).
func Replicate(ctx context.Context, dataset string, n int, dir string) (int, error) {
	ds, err := loadDataset(dataset)
	if err != nil {
		return 0, err
	}
	base := DocChunks(ds)
	if len(base) == 0 {
		return 0, fmt.Errorf("%s has no documents", dataset)
	}
	if n <= 0 {
		n = len(base)
	}
	ix, err := index.FromChunks(ctx, replicate(base, n), index.MemoryOptions{Analyzer: analysis.DefaultOptions()})
	if err != nil {
		return 0, err
	}
	if err := ix.Save(ctx, dir); err != nil {
		return 0, fmt.Errorf("save index to %s: %w", dir, err)
	}
	return ix.Len(), nil
}
