package reader

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/retrieve"
)

func TestShippedModelLoads(t *testing.T) {
	m, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Check(answer.SentenceFeatureNames(), answer.AnswerFeatureNames()); err != nil {
		t.Fatal(err)
	}
	if m.Version != ModelVersion || !strings.Contains(m.Provenance, "CC BY-SA 3.0") {
		t.Errorf("version %d, provenance %q", m.Version, m.Provenance)
	}
	if m.Report == nil || m.Report.SentenceAccuracy <= m.Report.RuleAccuracy || m.Report.AnswerableAUC < 0.8 {
		t.Errorf("shipped model's validation report does not beat the rules: %+v", m.Report)
	}
	if m.Threshold <= 0 || m.Threshold >= 1 {
		t.Errorf("threshold %v", m.Threshold)
	}
}

func TestCheckRefusesOtherColumns(t *testing.T) {
	m, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	names := answer.SentenceFeatureNames()
	if err := m.Check(names[:len(names)-1], answer.AnswerFeatureNames()); err == nil || !strings.Contains(err.Error(), "shirube train") {
		t.Errorf("a model for other columns was accepted: %v", err)
	}
}

// TestFitSentenceFindsTheSignal trains the conditional logit on groups
// whose answer is the candidate with the largest first feature; the
// second feature is noise.
func TestFitSentenceFindsTheSignal(t *testing.T) {
	var groups []Group
	for g := range 200 {
		var x [][]float64
		pos, best := 0, -1.0
		for k := range 5 {
			a := math.Mod(float64(g*7+k*13), 11) / 11
			x = append(x, []float64{a, math.Mod(float64(g*3+k*5), 7)})
			if a > best {
				pos, best = k, a
			}
		}
		groups = append(groups, Group{X: x, Pos: pos})
	}
	l := FitSentence([]string{"signal", "noise"}, groups, -1, FitOptions{})
	if acc := Accuracy(&l, groups); acc < 0.95 {
		t.Errorf("accuracy %.2f, want ≥ 0.95", acc)
	}
	if l.W[0] <= math.Abs(l.W[1]) {
		t.Errorf("weights %v: the signal should dominate", l.W)
	}
}

func TestFitBinaryIsCalibrated(t *testing.T) {
	var ex []Example
	for i := range 2000 {
		x := float64(i%100) / 100
		// P(y) = x: every tenth example at x is positive in proportion.
		y := float64((i*37)%100)/100 < x
		ex = append(ex, Example{X: []float64{x}, Y: y})
	}
	l := FitBinary([]string{"x"}, ex, FitOptions{})
	p := make([]float64, len(ex))
	y := make([]bool, len(ex))
	for i, e := range ex {
		p[i], y[i] = Sigmoid(l.Score(e.X)), e.Y
	}
	if auc := AUC(p, y); auc < 0.8 {
		t.Errorf("AUC %.3f", auc)
	}
	if _, ece := Calibration(p, y); ece > 0.08 {
		t.Errorf("ECE %.3f", ece)
	}
}

func TestAUC(t *testing.T) {
	tests := []struct {
		p    []float64
		y    []bool
		want float64
	}{
		{[]float64{0.1, 0.2, 0.8, 0.9}, []bool{false, false, true, true}, 1},
		{[]float64{0.9, 0.8, 0.2, 0.1}, []bool{false, false, true, true}, 0},
		{[]float64{0.5, 0.5}, []bool{false, true}, 0.5},
		{[]float64{0.1, 0.4, 0.35, 0.8}, []bool{false, false, true, true}, 0.75},
	}
	for _, tt := range tests {
		if got := AUC(tt.p, tt.y); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("AUC(%v, %v) = %v, want %v", tt.p, tt.y, got, tt.want)
		}
	}
}

func TestSplitAnswerSentence(t *testing.T) {
	ctx := "架空市立図書館は1985年に開館した。\n蔵書数はおよそ32万冊である。開館時間は午前9時から午後8時までである。"
	tests := []struct {
		text  string
		start int
		sent  string
	}{
		{"1985年", 8, "架空市立図書館は1985年に開館した。"},
		{"午前9時", strings.Index(ctx, "午前9時"), "開館時間は午前9時から午後8時までである。"},
	}
	for _, tt := range tests {
		start := len([]rune(ctx[:tt.start]))
		if tt.start == 8 {
			start = 8
		}
		sent, without, ok := splitAnswerSentence(ctx, AnswerSpan{Text: tt.text, Start: start})
		if !ok || sent != tt.sent {
			t.Errorf("%s: sentence %q, want %q", tt.text, sent, tt.sent)
		}
		if strings.Contains(without, tt.text) || !strings.Contains(without, "蔵書数") && tt.text != "蔵書数" {
			t.Errorf("%s: context without the sentence: %q", tt.text, without)
		}
	}
}

// TestTrainEndToEnd runs the whole training on a small SQuAD-layout file
// written for this test: the model is written, loads, and its report
// measured the held-out article.
func TestTrainEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model")
	}
	m, err := Train(context.Background(), TrainOptions{
		Data: filepath.Join("testdata", "tiny_squad.json"), Epochs: 100,
		Validate: func(title string) bool { return title == "白雲山" },
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.Report.ValQuestions == 0 || m.Report.TrainQuestions < 10 {
		t.Fatalf("report %+v", m.Report)
	}
	path := filepath.Join(t.TempDir(), "model.json")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := back.Check(answer.SentenceFeatureNames(), answer.AnswerFeatureNames()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(back.Provenance, "JaQuAD") {
		t.Errorf("provenance %q", back.Provenance)
	}
}

// BenchmarkDefault measures what loading the shipped model adds to a cold
// `ask` (decoding the embedded JSON).
func BenchmarkDefault(b *testing.B) {
	for b.Loop() {
		if _, err := Default(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRescoredAnswerFeatures checks that training's rescoring of a rules
// reading gives exactly the answerability features the extractive reader
// computes when it reads the same evidence with the model.
func TestRescoredAnswerFeatures(t *testing.T) {
	ctx := context.Background()
	ds, err := LoadSQuAD(filepath.Join("testdata", "tiny_squad.json"))
	if err != nil {
		t.Fatal(err)
	}
	var chunks []chunk.Chunk
	var questions []string
	for ai, a := range ds.Data {
		for pi, p := range a.Paragraphs {
			file := fmt.Sprintf("a%d/p%d.md", ai, pi)
			chunks = append(chunks, chunk.Chunk{ID: file + "_0", File: file, Source: file, Page: 1, Heading: a.Title, Text: "# " + a.Title + "\n" + p.Context})
			for _, qa := range p.QAs {
				questions = append(questions, qa.Question)
			}
		}
	}
	ix, err := index.FromChunks(ctx, chunks, index.MemoryOptions{Analyzer: analysis.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	rules := answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})
	learned := answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{Reader: m})
	s := retrieve.New(ix)
	for _, q := range questions {
		res, _, err := s.Search(ctx, q, retrieve.Options{K: 4, BM25Weight: 0.6, AutoWeight: true})
		if err != nil {
			t.Fatal(err)
		}
		got := newReadout(rules.Read(q, res), res).answerFeatures(m)
		want := learned.Read(q, res).AnswerFeatures
		if !slices.Equal(got, want) {
			t.Errorf("%s: rescored %v, read with the model %v", q, got, want)
		}
	}
	if len(questions) < 10 {
		t.Fatalf("%d questions in the fixture", len(questions))
	}
}

func TestShippedRerankerLoads(t *testing.T) {
	r, err := DefaultReranker()
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != RerankVersion || !strings.Contains(r.Provenance, "CC BY-SA 3.0") {
		t.Errorf("version %d, provenance %q", r.Version, r.Provenance)
	}
	if rep := r.Report; rep == nil || rep.RerankNDCG10 <= rep.SearchNDCG10 || rep.ValQuestions < 1000 {
		t.Errorf("shipped re-ranker's validation report does not beat the search's order: %+v", rep)
	}
}

// TestTrainRerankEndToEnd trains the re-ranker on the small fixture: the
// model is written, loads, checks against the code's columns and its
// report measured the held-out article.
func TestTrainRerankEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model")
	}
	r, err := TrainRerank(context.Background(), TrainOptions{
		Data: filepath.Join("testdata", "tiny_squad.json"), Epochs: 100,
		Validate: func(title string) bool { return title == "白雲山" },
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Report.ValQuestions == 0 || r.Report.TrainQuestions < 10 || r.Report.Found <= 0 {
		t.Fatalf("report %+v", r.Report)
	}
	path := filepath.Join(t.TempDir(), "rerank.json")
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadReranker(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := back.Check(retrieve.RerankFeatureNames()); err != nil {
		t.Fatal(err)
	}
	if err := back.Check(retrieve.RerankFeatureNames()[1:]); err == nil || !strings.Contains(err.Error(), "shirube train") {
		t.Errorf("a re-ranker for other columns was accepted: %v", err)
	}
}
