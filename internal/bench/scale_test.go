package bench

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/index"
)

// lawCorpus has the law-corpus-ja layout (index.tsv + text/) with six laws.
const lawCorpus = "../../../shared/datasets/law-html-ja"

func needLaws(t *testing.T) []CorpusFile {
	t.Helper()
	files, notes, err := ReadCorpus(lawCorpus)
	if err != nil {
		t.Skipf("dataset not present: %v", err)
	}
	if len(files) != 6 || len(notes) != 0 {
		t.Fatalf("law-html-ja: %d files, notes %v; want 6, none", len(files), notes)
	}
	return files
}

func TestParsePoints(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  bool
	}{
		{"10000,50000,100000,all", []int{10000, 50000, 100000, 0}, false},
		{"all, 10k ,50k", []int{10000, 50000, 0}, false},
		{"100000,10000,10000", []int{10000, 100000}, false},
		{"1_000", []int{1000}, false},
		{"", nil, true},
		{"ten", nil, true},
		{"-5", nil, true},
		{"0", nil, true},
	}
	for _, tt := range tests {
		got, err := ParsePoints(tt.in)
		if (err != nil) != tt.err || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParsePoints(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestSelectPoints(t *testing.T) {
	counts := []int{400, 0, 700, 300, 5000, 100}
	tests := []struct {
		name    string
		targets []int
		want    []CurvePoint
	}{
		{"prefixes reaching each target", []int{1000, 1400}, []CurvePoint{{1000, 3, 1100}, {1400, 4, 1400}}},
		{"exact sum stops there", []int{400}, []CurvePoint{{400, 1, 400}}},
		{"all is the whole corpus", []int{1, 0}, []CurvePoint{{1, 1, 400}, {0, 6, 6500}}},
		{"targets on the same prefix merge", []int{2000, 6000, 0}, []CurvePoint{{2000, 5, 6400}, {0, 6, 6500}}},
		{"a target beyond the corpus takes it all", []int{1 << 30}, []CurvePoint{{1 << 30, 6, 6500}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SelectPoints(counts, tt.targets); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReadCorpus(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "text"), 0o755)
	for _, h := range []string{"aa", "bb"} {
		os.WriteFile(filepath.Join(dir, "text", h+".txt"), []byte("第一条\n本文。\n"), 0o644)
	}
	tsv := "bb\t乙法（平成元年法律第一号）\t民事\naa\t甲法\nbb\t乙法（重複）\t民事\ncc\t欠けた法\t民事\n\n"
	os.WriteFile(filepath.Join(dir, "index.tsv"), []byte(tsv), 0o644)
	files, notes, err := ReadCorpus(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names, titles []string
	for _, f := range files {
		names, titles = append(names, f.Name), append(titles, f.Title)
	}
	if !reflect.DeepEqual(names, []string{"bb.txt", "aa.txt"}) || !reflect.DeepEqual(titles, []string{"乙法", "甲法"}) {
		t.Errorf("files %v titles %v: want index.tsv order, duplicates dropped, dates cut", names, titles)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "cc.txt missing") {
		t.Errorf("notes %v", notes)
	}
	if _, _, err := ReadCorpus(t.TempDir()); err == nil || !strings.Contains(err.Error(), "index.tsv") {
		t.Errorf("folder without index.tsv: %v", err)
	}
}

// TestCountChunksMatchesBuild: the counts the curve points are chosen by
// are the chunks index.Build makes of the same files.
func TestCountChunksMatchesBuild(t *testing.T) {
	files := needLaws(t)[:3]
	counts, err := CountChunks(context.Background(), files, scaleChunkOptions(), 2)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, n := range counts {
		if n == 0 {
			t.Errorf("%s: no chunks counted", files[i].Name)
		}
		total += n
	}
	work := t.TempDir()
	data := filepath.Join(work, "data")
	os.MkdirAll(data, 0o755)
	if err := placeFiles(files, data); err != nil {
		t.Fatal(err)
	}
	sum, err := index.Build(context.Background(), index.BuildOptions{DataDir: data, DatabaseDir: filepath.Join(work, "db"), Dir: filepath.Join(work, "ix"),
		Rebuild: true, Chunk: scaleChunkOptions(), Analyzer: analysis.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Chunks != total || sum.Documents != 3 {
		t.Errorf("build made %d chunks of %d documents, counted %d", sum.Chunks, sum.Documents, total)
	}
}

func lawSources(t *testing.T) []QuerySource {
	var srcs []QuerySource
	for _, f := range needLaws(t) {
		b, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, QuerySource{Name: f.Name, Title: f.Title, Text: string(b)})
	}
	return srcs
}

func TestDrawQueries(t *testing.T) {
	srcs := lawSources(t)
	qs := DrawQueries(srcs, 200, 7)
	if len(qs) != 200 {
		t.Fatalf("%d queries, want 200", len(qs))
	}
	if again := DrawQueries(srcs, 200, 7); !reflect.DeepEqual(qs, again) {
		t.Error("the same seed drew different queries")
	}
	if other := DrawQueries(srcs, 200, 8); reflect.DeepEqual(qs, other) {
		t.Error("another seed drew the same queries")
	}
	// Every chunk the index would hold of these laws.
	var chunkTexts []string
	ex := document.NewExtractor(document.Options{})
	for _, f := range needLaws(t) {
		info, _ := os.Stat(f.Path)
		doc, err := ex.Extract(context.Background(), document.File{Path: f.Path, Rel: f.Name, Kind: document.Text, Size: info.Size(), ModTime: info.ModTime()})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range doc.Pages {
			cs, err := chunk.Page("p", f.Name, p.Number, "", p.Text, scaleChunkOptions())
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				chunkTexts = append(chunkTexts, c.Text)
			}
		}
	}
	kinds := map[string]int{}
	for _, q := range qs {
		kinds[q.Kind]++
		if strings.TrimSpace(q.Text) == "" {
			t.Fatalf("empty query %+v", q)
		}
		for _, c := range chunkTexts {
			if strings.Contains(c, q.Text) || q.Text == c {
				t.Fatalf("query %q occurs verbatim in an indexed chunk", q.Text)
			}
		}
	}
	if kinds["caption"] != 100 || kinds["sentence"] != 100 {
		t.Errorf("kinds %v, want 100 of each", kinds)
	}
	if !strings.HasSuffix(qs[0].Text, "について") || !strings.Contains(qs[0].Text, "の") {
		t.Errorf("first query %q should be a caption query", qs[0].Text)
	}
}

func TestDrawQueriesSmall(t *testing.T) {
	doc := QuerySource{Name: "a.txt", Title: "宇宙基本法", Text: "宇宙基本法\n\n（目的）\n第一条\n　この法律は、宇宙の開発及び利用に関し、基本理念を定める。\n（定義）\n第二条\n　短い文。\n"}
	got := DrawQueries([]QuerySource{doc}, 10, 1)
	want := map[string]bool{"宇宙基本法の目的について": true, "宇宙基本法の定義について": true, "この法律は 宇宙の開発及び利用に関し 基本理念を定める": true}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for _, q := range got {
		if !want[q.Text] {
			t.Errorf("unexpected query %q", q.Text)
		}
	}
	if got := DrawQueries([]QuerySource{doc}, 1, 1); len(got) != 1 {
		t.Errorf("n = 1 gave %d queries", len(got))
	}
}

func TestWriteCurvePNG(t *testing.T) {
	c := ScaleCurve{Queries: 10, K: 4, Points: []ScalePoint{
		{Chunks: 10000, BuildChunksPerSec: 900, BuildPeakRSSMiB: 700, Hybrid: Latency{1, 2}, BM25: Latency{0.5, 1}, Vector: Latency{0.8, 1.5}, LoadSeconds: 0.7},
		{Chunks: 100000, BuildChunksPerSec: 1100, BuildPeakRSSMiB: 3500, Hybrid: Latency{5, 9}, BM25: Latency{1, 2}, Vector: Latency{4, 7}, LoadSeconds: 1.4},
	}}
	var buf bytes.Buffer
	if err := WriteCurvePNG(&buf, c); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != PlotWidth || b.Dy() != PlotHeight {
		t.Errorf("size %v, want %d×%d", b, PlotWidth, PlotHeight)
	}
	// The hybrid p95 line is drawn in its colour somewhere.
	found := false
	for y := 0; y < PlotHeight && !found; y++ {
		for x := 0; x < PlotWidth/2; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 == uint32(colBlue.R) && g>>8 == uint32(colBlue.G) && b>>8 == uint32(colBlue.B) {
				found = true
				break
			}
		}
	}
	if !found {
		t.Error("no hybrid line in the latency panel")
	}
	if err := WriteCurvePNG(&bytes.Buffer{}, ScaleCurve{}); err != nil {
		t.Errorf("empty curve: %v", err)
	}
}

func TestTickLabel(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 50000: "50k", 250000: "250k", 1.5e6: "1.5M", 12: "12", 0.5: "0.5", 0.25: "0.25", 2500: "2500"} {
		if got := tickLabel(v); got != want {
			t.Errorf("tickLabel(%v) = %q, want %q", v, got, want)
		}
	}
	for max, want := range map[float64]float64{0: 1, 9: 2, 12.6: 5, 280000: 100000, 0.7: 0.2} {
		if got := niceStep(max); got < want*0.999 || got > want*1.001 {
			t.Errorf("niceStep(%v) = %v, want %v", max, got, want)
		}
	}
}

// TestMain lets the test binary act as the scale benchmark's child
// process, as `shirube bench scale-child` does.
func TestMain(m *testing.M) {
	if os.Getenv("SHIRUBE_TEST_SCALE_CHILD") == "1" {
		if err := ScaleChild(context.Background(), os.Args[1:], os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestScaleCorpus runs the whole curve on the six laws: two points, each
// built, loaded and queried in child processes.
func TestScaleCorpus(t *testing.T) {
	needLaws(t)
	t.Setenv("SHIRUBE_TEST_SCALE_CHILD", "1")
	var log bytes.Buffer
	work := t.TempDir()
	c, err := ScaleCorpus(context.Background(), ScaleOptions{Corpus: lawCorpus, Points: []int{100, 0}, MaxQueries: 12, Seed: 3, QueryChunks: 10000, Warmup: 2, LoadRuns: 1,
		Work: work, Exe: os.Args[0], Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	// 10,000 query chunks are more than the first point's single law holds:
	// queries come from that law only.
	if len(c.Points) != 2 || c.Queries != 12 || c.QueryKinds["caption"] != 6 || c.CorpusFiles != 6 || c.QueryFiles != 1 {
		t.Fatalf("curve %+v", c)
	}
	small, all := c.Points[0], c.Points[1]
	if small.Files != 1 || all.Files != 6 || all.Target != 0 {
		t.Errorf("points %+v / %+v", small.CurvePoint, all.CurvePoint)
	}
	for _, p := range c.Points {
		if p.Chunks != p.CurvePoint.Chunks {
			t.Errorf("%d files: built %d chunks, counted %d", p.Files, p.Chunks, p.CurvePoint.Chunks)
		}
		if p.BuildPeakRSSMiB < 20 || p.LoadRSSMiB < 20 || p.QueryRSSMiB < 20 {
			t.Errorf("%d files: peak RSS build %v, load %v, query %v MiB — rusage not read?", p.Files, p.BuildPeakRSSMiB, p.LoadRSSMiB, p.QueryRSSMiB)
		}
		if p.IndexMiB <= 0 || p.Queries != 12 || p.Hybrid.P95 <= 0 || p.BM25.P95 <= 0 || p.Vector.P95 <= 0 || p.LoadSeconds <= 0 {
			t.Errorf("point %+v", p)
		}
	}
	if all.Chunks <= small.Chunks || all.IndexMiB <= small.IndexMiB {
		t.Errorf("the whole corpus (%d chunks, %v MiB) is not larger than one law (%d, %v)", all.Chunks, all.IndexMiB, small.Chunks, small.IndexMiB)
	}
	var table bytes.Buffer
	WriteCurveTable(&table, c)
	if !strings.Contains(table.String(), "| 6 | ") || !strings.Contains(table.String(), "(lscpu)") {
		t.Errorf("table:\n%s", table.String())
	}
}

func TestMergeCurves(t *testing.T) {
	base := ScaleCurve{Corpus: "c", QuerySeed: 1, QueryFiles: 274, Queries: 1000, K: 4}
	a, b := base, base
	a.Points = []ScalePoint{{CurvePoint: CurvePoint{Files: 274}}, {CurvePoint: CurvePoint{Files: 1788}}}
	b.Points = []ScalePoint{{CurvePoint: CurvePoint{Files: 7981}}}
	b.Machine.LoadAvg = "0.5 0.5 0.5"
	got, err := MergeCurves([]ScaleCurve{b, a})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Points) != 3 || got.Points[0].Files != 274 || got.Points[2].Files != 7981 || got.Machine.LoadAvg != "" {
		t.Errorf("merged %+v", got)
	}
	other := base
	other.QuerySeed = 2
	if _, err := MergeCurves([]ScaleCurve{a, other}); err == nil || !strings.Contains(err.Error(), "same seed") {
		t.Errorf("curves with other queries merged: %v", err)
	}
	if _, err := MergeCurves(nil); err == nil {
		t.Error("no curves merged")
	}
}

// TestScaleCorpusKeepsPoints: a point whose child fails (here: the build
// child is a program that does not exist past the first point) leaves the
// points already measured in the report, with a note.
func TestScaleCorpusKeepsPoints(t *testing.T) {
	needLaws(t)
	t.Setenv("SHIRUBE_TEST_SCALE_CHILD", "1")
	// The second point's data folder is made unreadable for the build by
	// a file where the index folder must go.
	work := t.TempDir()
	os.MkdirAll(filepath.Join(work, "point-1"), 0o755)
	os.WriteFile(filepath.Join(work, "point-1", "index"), []byte("in the way"), 0o644)
	c, err := ScaleCorpus(context.Background(), ScaleOptions{Corpus: lawCorpus, Points: []int{100, 0}, MaxQueries: 4, Seed: 3, Warmup: 1, LoadRuns: 1,
		Work: work, Exe: os.Args[0]})
	if err != nil {
		t.Fatalf("the first point was measured, yet: %v", err)
	}
	if len(c.Points) != 1 || c.Points[0].Files != 1 {
		t.Fatalf("points %+v", c.Points)
	}
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "point 2 (6 files") || !strings.Contains(c.Notes[0], "not measured") {
		t.Errorf("notes %v", c.Notes)
	}
}
