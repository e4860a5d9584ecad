package questions

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/csvx"
	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/golden"
)

const (
	examplesData = "../../../examples/data"
	pdfDataset   = "../../../../shared/datasets/pdf-ja"
)

// corpusPages returns page identity → page text for every page of dataDir,
// computed independently of the generator.
func corpusPages(t *testing.T, dataDir string) map[string]string {
	t.Helper()
	ctx := context.Background()
	files, _, err := document.Walk(ctx, dataDir, document.WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ex := document.NewExtractor(document.Options{})
	out := map[string]string{}
	for _, f := range files {
		d, err := ex.Extract(ctx, f)
		if err != nil {
			continue
		}
		for _, p := range d.Pages {
			out[document.PageFile("./database", f, p.Number)] = p.Text
		}
	}
	return out
}

// readRows reads a question CSV back.
func readRows(t *testing.T, path string) ([]string, [][]string) {
	t.Helper()
	header, rows, warn, err := csvx.ReadFile(path)
	if err != nil || warn != "" {
		t.Fatalf("reading %s: %v %s", path, err, warn)
	}
	return header, rows
}

// checkRows asserts the invariants every question CSV must satisfy.
func checkRows(t *testing.T, header []string, rows [][]string, pages map[string]string) (neg, multi int) {
	t.Helper()
	if !reflect.DeepEqual(header, Columns()) {
		t.Fatalf("header = %q, want %q", header, Columns())
	}
	for i, r := range rows {
		q, gt, ref, pg, items, gen := r[0], r[1], r[2], r[3], r[4], r[5]
		if q == "" || gt == "" || gen == "" {
			t.Errorf("row %d: empty question, ground truth or generator: %q", i, r)
		}
		if ref == "" {
			neg++
			if gt != RefusalText || pg != "" {
				t.Errorf("row %d: negative row has ground truth %q, page %q", i, gt, pg)
			}
			continue
		}
		refs := strings.Split(ref, "\n")
		nums := strings.Split(pg, ",")
		if len(refs) != len(nums) {
			t.Errorf("row %d: %d references but pages %q", i, len(refs), pg)
			continue
		}
		if len(refs) > 1 {
			multi++
		}
		for k, id := range refs {
			if _, ok := pages[id]; !ok {
				t.Errorf("row %d: reference %q is not a page of the corpus", i, id)
			}
			n, ok := document.PageNumber(id)
			if want, err := strconv.Atoi(nums[k]); !ok || err != nil || n != want {
				t.Errorf("row %d: reference %q does not match page %q", i, id, nums[k])
			}
		}
		if items == "" {
			t.Errorf("row %d: empty checklist", i)
		}
		for _, it := range strings.Split(items, "\n") {
			if !strings.HasPrefix(it, "- ") || len(it) < 3 {
				t.Errorf("row %d: checklist line %q is not a '- ' bullet", i, it)
			}
		}
	}
	return neg, multi
}

func TestGenerateOfflineExamples(t *testing.T) {
	if _, err := os.Stat(examplesData); err != nil {
		t.Skipf("examples missing: %v", err)
	}
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "q.csv")
	res, err := Generate(ctx, Options{DataDir: examplesData, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != out {
		t.Errorf("Path = %q, want %q", res.Path, out)
	}
	header, rows := readRows(t, out)
	neg, multi := checkRows(t, header, rows, corpusPages(t, examplesData))
	if len(rows) != len(res.Rows) {
		t.Errorf("CSV has %d rows, Result %d", len(rows), len(res.Rows))
	}
	share := float64(neg) / float64(len(rows))
	if share < 0.05 || share > 0.2 {
		t.Errorf("negatives are %d of %d rows (%.0f%%), want about 10%%", neg, len(rows), share*100)
	}
	if multi < 3 {
		t.Errorf("%d multi-page questions, want at least 3 (vpn_manual.pdf has 4 pages)", multi)
	}
	for _, r := range rows {
		if r[5] != GeneratorOffline {
			t.Fatalf("Generator = %q, want %q", r[5], GeneratorOffline)
		}
	}

	// Deterministic: same seed, same rows; and a golden copy of the CSV.
	again, err := Generate(ctx, Options{DataDir: examplesData, NoWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Rows, res.Rows) {
		t.Error("two runs with the same seed differ")
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "examples.golden.csv"), got)
}

func TestGenerateSeedChangesChoices(t *testing.T) {
	if _, err := os.Stat(examplesData); err != nil {
		t.Skipf("examples missing: %v", err)
	}
	ctx := context.Background()
	a, err := Generate(ctx, Options{DataDir: examplesData, NoWrite: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(ctx, Options{DataDir: examplesData, NoWrite: true, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(a.Rows, b.Rows) {
		t.Error("seeds 1 and 2 gave identical questions; the seed has no effect")
	}
}

func TestGenerateTimestampedNeverOverwrites(t *testing.T) {
	data := t.TempDir()
	writeFile(t, filepath.Join(data, "guide.md"), "# 出張ガイド\n\n## 申請\n\n出張の申請は出発の5営業日前までにワークフローで提出する。\n\n宿泊費の上限は1泊12000円とし、領収書を経理部へ提出する。\n")
	results := filepath.Join(t.TempDir(), "results")
	now := func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }
	var paths []string
	for range 2 {
		res, err := Generate(context.Background(), Options{DataDir: data, ResultsDir: results, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, res.Path)
	}
	want := []string{
		filepath.Join(results, "questions_20250102_030405.csv"),
		filepath.Join(results, "questions_20250102_030405_2.csv"),
	}
	if !reflect.DeepEqual(paths, want) {
		t.Fatalf("paths = %q, want %q", paths, want)
	}
	raw, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte(csvx.BOM)) {
		t.Error("output is not utf-8-sig (no BOM)")
	}
	recs, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(raw, []byte(csvx.BOM)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 3 {
		t.Fatalf("want at least two questions and a negative, got %q", recs)
	}
}

func TestGeneratePDFDataset(t *testing.T) {
	if _, err := os.Stat(pdfDataset); err != nil {
		t.Skipf("dataset missing: %v", err)
	}
	// One PDF keeps the test quick; the 15-page FAQ has text on every page.
	data := t.TempDir()
	src, err := os.ReadFile(filepath.Join(pdfDataset, "qa_futankeigen.pdf"))
	if err != nil {
		t.Skip(err)
	}
	writeFile(t, filepath.Join(data, "invoice", "qa_futankeigen.pdf"), string(src))
	res, err := Generate(context.Background(), Options{DataDir: data, NoWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	pages := corpusPages(t, data)
	var buf bytes.Buffer
	if err := write(&buf, res.Rows); err != nil {
		t.Fatal(err)
	}
	header, rows, _, err := csvx.ReadAll(&buf)
	if err != nil {
		t.Fatal(err)
	}
	neg, multi := checkRows(t, header, rows, pages)
	if neg == 0 || multi < 3 || len(rows)-neg < 10 {
		t.Errorf("got %d rows, %d negative, %d multi-page; want ≥10 positives, ≥3 multi-page and some negatives", len(rows), neg, multi)
	}
	seen := map[int]bool{}
	for _, r := range res.Rows {
		for k, id := range r.References {
			if !strings.HasPrefix(id, "database/invoice/qa_futankeigen/page_") {
				t.Errorf("reference %q is not a page identity of the PDF", id)
			}
			seen[r.Pages[k]] = true
		}
		if r.Kind == KindPage {
			// The ground truth is a sentence of the page it cites.
			if c := bigramCoverage(r.GroundTruth, pages[r.References[0]]); c < 0.95 {
				t.Errorf("ground truth %q is not from %s (coverage %.2f)", r.GroundTruth, r.References[0], c)
			}
		}
	}
	if len(seen) < 5 {
		t.Errorf("questions cite only pages %v of 15", seen)
	}
}

func TestGenerateErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Generate(ctx, Options{DataDir: filepath.Join(t.TempDir(), "missing"), NoWrite: true}); err == nil {
		t.Error("missing data folder: no error")
	}
	data := t.TempDir()
	writeFile(t, filepath.Join(data, "tiny.md"), "短い。\n")
	writeFile(t, filepath.Join(data, "bad.md"), "\xff\xfe not utf-8")
	var warns []string
	_, err := Generate(ctx, Options{DataDir: data, NoWrite: true, Warn: func(s string) { warns = append(warns, s) }})
	if err == nil || !strings.Contains(err.Error(), "no questions") {
		t.Errorf("err = %v, want a 'no questions' error", err)
	}
	if len(warns) != 2 {
		t.Errorf("warnings = %q, want one for each file", warns)
	}
	for _, w := range warns {
		if strings.Contains(w, "\n") {
			t.Errorf("warning %q is not one line", w)
		}
	}
}

func TestNegativesAvoidCorpusTopics(t *testing.T) {
	// A corpus about every Japanese topic but one leaves only that one.
	var text strings.Builder
	topics := negativeTopicsJA()
	for _, tp := range topics[1:] {
		text.WriteString(strings.Join(tp.keys, "・") + "について。\n")
	}
	d := &doc{doc: document.Document{Pages: []document.Page{{Number: 1, Text: text.String()}}}, japanese: true}
	rows := negativeRows([]*doc{d}, 90, Options{NegativeRatio: 0.1})
	if len(rows) != 1 || rows[0].Question != topics[0].question {
		t.Fatalf("rows = %+v, want only %q", rows, topics[0].question)
	}
	if rows[0].GroundTruth != RefusalText || len(rows[0].References) != 0 {
		t.Errorf("negative row = %+v", rows[0])
	}
}

func TestMentionsAny(t *testing.T) {
	corpus := analysis.Normalize("The category list\nＳｔａｒｇａｚｉｎｇ is fun\n南極の話")
	tests := []struct {
		keys []string
		want bool
	}{
		{[]string{"cat"}, false}, // only inside "category"
		{[]string{"category"}, true},
		{[]string{"stargazing"}, true}, // full-width in the source
		{[]string{"火星", "南極"}, true},
		{[]string{"火星"}, false},
	}
	for _, tt := range tests {
		if got := mentionsAny(corpus, tt.keys); got != tt.want {
			t.Errorf("mentionsAny(%q) = %v, want %v", tt.keys, got, tt.want)
		}
	}
}

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGenerateCategorizedIdentities(t *testing.T) {
	if _, err := os.Stat(filepath.Join(examplesData, "manuals", "vpn_manual.pdf")); err != nil {
		t.Skipf("examples missing: %v", err)
	}
	res, err := Generate(context.Background(), Options{DataDir: examplesData, NoWrite: true, Categorize: &document.CategorizeOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range res.Rows {
		for _, id := range r.References {
			if strings.HasPrefix(id, "database/manuals/vpn_manual/") {
				n++
				// database/manuals/vpn_manual/<category>/page_NNN.md
				if parts := strings.Split(id, "/"); len(parts) != 5 || parts[3] == "" {
					t.Errorf("reference %q has no category folder", id)
				}
			}
		}
	}
	if n == 0 {
		t.Error("no reference to vpn_manual.pdf")
	}
}
