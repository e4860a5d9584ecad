package reader

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/retrieve"
)

var updateShapes = flag.Bool("update", false, "rewrite testdata/shapes.golden from the current Render")

// libraryInput is a paragraph written for these tests (not JaQuAD).
func libraryInput() ShapeInput {
	return ShapeInput{
		Title: "架空市の図書館",
		Sentences: []string{
			"架空市立図書館は1985年に開館した。",
			"蔵書数はおよそ32万冊である。",
			"開館時間は午前9時から午後8時までで、毎週月曜日が休館日となっている。",
		},
		Gold:        1,
		Distractors: []string{"分館は市内に3つある。", "2010年に電子書籍の貸出を始めた。", "館長は市の職員が務める。"},
		Questions:   []string{"", "架空市立図書館の蔵書は何冊か?", "架空市立図書館の休館日は何曜日か?"},
	}
}

// TestRenderGolden pins the text of every shape of one paragraph.
func TestRenderGolden(t *testing.T) {
	var b strings.Builder
	for s := ShapeProse; s < shapeCount; s++ {
		sh := Render(s, libraryInput(), shapeRand("golden", 0))
		fmt.Fprintf(&b, "== %s (gold line %q)\n%s\n", s, sh.GoldLine, sh.Text)
	}
	path := filepath.Join("testdata", "shapes.golden")
	if *updateShapes {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestRenderGolden -update)", err)
	}
	if b.String() != string(want) {
		t.Errorf("Render changed; run go test ./internal/reader -run TestRenderGolden -update and review the diff\n%s", b.String())
	}
}

// TestReaderSeesTheShapes reads every shape with the extractive reader:
// the gold line is one candidate (the label training uses), carrying the
// structure the shape stands for, and the shape's caption or question
// lines are candidates of their own that do not answer.
func TestReaderSeesTheShapes(t *testing.T) {
	tok, err := analysis.New(analysis.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	rules := answer.NewExtractive(tok, answer.ExtractiveOptions{})
	names := answer.SentenceFeatureNames()
	col := func(n string) int { return slices.Index(names, n) }
	tests := []struct {
		shape      Shape
		item, row  float64
		goldPrefix string
	}{
		{ShapeProse, 0, 0, "蔵書数は"},
		{ShapeBullets, 1, 0, "- 蔵書数は"},
		{ShapeNumbered, 1, 0, ". 蔵書数は"},
		{ShapeTable, 0, 1, "| 蔵書数 | "},
		{ShapeLabels, 0, 0, "**蔵書数：** およそ"},
		{ShapeFAQ, 0, 0, "A. 蔵書数は"},
	}
	for _, tt := range tests {
		t.Run(tt.shape.String(), func(t *testing.T) {
			in := libraryInput()
			styles := map[bool]bool{}
			for seed := range 8 {
				sh := Render(tt.shape, in, shapeRand("reader", seed))
				if !strings.Contains(sh.GoldLine, tt.goldPrefix) || !strings.Contains(sh.Text, sh.GoldLine) {
					t.Fatalf("gold line %q (want it to hold %q) in\n%s", sh.GoldLine, tt.goldPrefix, sh.Text)
				}
				rd := rules.Read("架空市立図書館の蔵書の数は?", []retrieve.Result{{Source: "a.md", Heading: in.Title, Text: sh.Text}})
				g, _ := labelGroup(rd, 0, "32万冊", sh.GoldLine)
				if g == nil {
					t.Fatalf("no labelled candidate in\n%s", sh.Text)
				}
				gold := rd.Candidates[g.Pos]
				if !strings.Contains(sh.GoldLine, gold.Text) {
					t.Errorf("labelled %q, not the gold line %q", gold.Text, sh.GoldLine)
				}
				if gold.Features[col("item")] != tt.item || gold.Features[col("row")] != tt.row {
					t.Errorf("%q: item %v row %v, want %v %v", gold.Text, gold.Features[col("item")], gold.Features[col("row")], tt.item, tt.row)
				}
				if tt.shape == ShapeTable {
					// A PDF's table keeps its header row as a line: a
					// candidate that does not answer.
					pdf := !strings.Contains(sh.Text, "|---|")
					styles[pdf] = true
					header := slices.IndexFunc(rd.Candidates, func(c answer.ReadCandidate) bool { return strings.HasPrefix(c.Text, "| 項目 | 内容") })
					if pdf != (header >= 0) || pdf != strings.Contains(gold.Text, "内容: およそ") {
						t.Errorf("PDF style %v: header candidate %d, gold %q", pdf, header, gold.Text)
					}
				}
				if tt.shape == ShapeFAQ {
					if !strings.Contains(sh.Text, "Q. 架空市立図書館の蔵書は何冊か?") {
						t.Errorf("no FAQ question for the gold sentence:\n%s", sh.Text)
					}
					if strings.Contains(sh.Text, "1985年") {
						t.Errorf("a sentence without a question became an FAQ pair:\n%s", sh.Text)
					}
				}
			}
			if tt.shape == ShapeTable && len(styles) != 2 {
				t.Errorf("one table style only in 8 renderings: %v", styles)
			}
		})
	}
}

func TestRenderDistractorsAndNearMiss(t *testing.T) {
	in := libraryInput()
	seen := map[int]bool{}
	for seed := range 40 {
		sh := Render(ShapeBullets, in, shapeRand("d", seed))
		n := 0
		for _, d := range in.Distractors {
			if strings.Contains(sh.Text, d) {
				n++
			}
		}
		seen[n] = true
		for _, s := range in.Sentences {
			if !strings.Contains(sh.Text, "- "+s) {
				t.Fatalf("sentence %q lost:\n%s", s, sh.Text)
			}
		}
	}
	for n := range 4 {
		if !seen[n] {
			t.Errorf("never %d distractors mixed in (saw %v)", n, seen)
		}
	}
	in.Sentences = slices.Delete(in.Sentences, 1, 2)
	in.Questions = slices.Delete(in.Questions, 1, 2)
	in.Gold = -1
	for s := ShapeBullets; s < shapeCount; s++ {
		sh := Render(s, in, shapeRand("n", 0))
		if sh.GoldLine != "" || strings.Contains(sh.Text, "32万冊") {
			t.Errorf("%s near miss holds the answer: %q\n%s", s, sh.GoldLine, sh.Text)
		}
	}
}

func TestLabelOf(t *testing.T) {
	tests := []struct{ in, label, rest string }{
		{"蔵書数はおよそ32万冊である。", "蔵書数", "およそ32万冊である。"},
		{"開館時間は午前9時から。", "開館時間", "午前9時から。"},
		{"本は多い。", "", "本は多い。"},               // one-character topic
		{"「青空川」は県を流れる。", "", "「青空川」は県を流れる。"}, // a bracket before the topic ends
		{"1985年に開館した。", "", "1985年に開館した。"},   // no topic
		{"は始まる。", "", "は始まる。"},               // empty topic
		{"それは。", "", "それは。"},                 // nothing stated after the topic
		{"とても長い名前の付いた架空の市立中央図書館分室は閉じた。", "", "とても長い名前の付いた架空の市立中央図書館分室は閉じた。"}, // over 16 characters
	}
	for _, tt := range tests {
		label, rest := labelOf(tt.in)
		if label != tt.label || rest != tt.rest {
			t.Errorf("labelOf(%q) = %q, %q; want %q, %q", tt.in, label, rest, tt.label, tt.rest)
		}
	}
}

func TestPickShape(t *testing.T) {
	in := libraryInput()
	count := map[Shape]int{}
	for seed := range 600 {
		if s := PickShape(shapeRand("p", seed), 0, in); s != ShapeProse {
			t.Fatalf("share 0 gave %s", s)
		}
		count[PickShape(shapeRand("p", seed), 0.5, in)]++
		if a, b := PickShape(shapeRand("q", seed), 0.5, in), PickShape(shapeRand("q", seed), 0.5, in); a != b {
			t.Fatalf("the same key gave %s and %s", a, b)
		}
	}
	if count[ShapeProse] < 240 || count[ShapeProse] > 360 {
		t.Errorf("share 0.5: %d of 600 prose", count[ShapeProse])
	}
	for s := ShapeBullets; s < shapeCount; s++ {
		if count[s] < 30 {
			t.Errorf("share 0.5: %s only %d times", s, count[s])
		}
	}
	// Without a question for the gold sentence there is no FAQ pair.
	in.Questions[in.Gold] = ""
	for seed := range 200 {
		if s := PickShape(shapeRand("f", seed), 1, in); s == ShapeFAQ || s == ShapeProse {
			t.Fatalf("gold without a question, share 1: %s", s)
		}
	}
}

// TestShaperEvidence shapes the fixture's search results the way training
// does: every passage of the corpus is rendered, the answering line holds
// the answer, the near miss drops it, and an FAQ never asks the question
// being trained on.
func TestShaperEvidence(t *testing.T) {
	ctx := context.Background()
	ds, err := LoadSQuAD(filepath.Join("testdata", "tiny_squad.json"))
	if err != nil {
		t.Fatal(err)
	}
	tc, err := newCorpus(ctx, ds, 0, len(ds.Data))
	if err != nil {
		t.Fatal(err)
	}
	sp := newShaper(ds, tc, 1)
	s := retrieve.New(tc.ix)
	shaped := 0
	for _, q := range tc.qs {
		ctxText := ds.Data[q.art].Paragraphs[q.para].Context
		sent, without, ok := splitAnswerSentence(ctxText, q.qa.Answers[0])
		if !ok {
			t.Fatalf("%s: no answer sentence", q.qa.ID)
		}
		res, _, err := s.Search(ctx, q.qa.Question, retrieve.Options{K: 4, BM25Weight: 0.6, AutoWeight: true})
		if err != nil {
			t.Fatal(err)
		}
		own := slices.IndexFunc(res, func(r retrieve.Result) bool { return r.ChunkID == tc.chunks[q.chunk].ID })
		if own < 0 {
			continue
		}
		out, gold := sp.evidence(q, res, own, sent, without, false)
		if len(out) != len(res) || res[own].Text == out[own].Text && gold != sent {
			t.Fatalf("%s: evidence %d → %d passages", q.qa.ID, len(res), len(out))
		}
		if !strings.Contains(gold, q.qa.Answers[0].Text) || !strings.Contains(out[own].Text, gold) {
			t.Errorf("%s: gold line %q not in\n%s", q.qa.ID, gold, out[own].Text)
		}
		if out[own].Text != res[own].Text {
			shaped++
		}
		if strings.Contains(out[own].Text, "Q. "+q.qa.Question) {
			t.Errorf("%s: the FAQ asks the trained question itself:\n%s", q.qa.ID, out[own].Text)
		}
		near, _ := sp.evidence(q, res, own, sent, without, true)
		if strings.Contains(near[own].Text, sent) {
			t.Errorf("%s: the near miss keeps the answer sentence:\n%s", q.qa.ID, near[own].Text)
		}
		again, _ := sp.evidence(q, res, own, sent, without, false)
		if !slices.Equal(again, out) {
			t.Errorf("%s: shaping is not deterministic", q.qa.ID)
		}
	}
	if shaped < len(tc.qs)/2 {
		t.Errorf("only %d of %d questions' paragraphs shaped at share 1", shaped, len(tc.qs))
	}
}

// TestTrainWithShapes trains on the fixture with every passage shaped: the
// report measures the validation article's shaped evidence too.
func TestTrainWithShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model")
	}
	var logs []string
	m, err := Train(context.Background(), TrainOptions{
		Data: filepath.Join("testdata", "tiny_squad.json"), Epochs: 100, Shapes: 1,
		Validate: func(title string) bool { return title == "白雲山" || title == "海辺鉄道" },
		Log:      func(s string) { logs = append(logs, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	r := m.Report
	if r.Shapes != 1 || r.TrainQuestions < 10 || r.ShapedRuleAccuracy <= 0 || r.ShapedAccuracy <= 0 {
		t.Fatalf("report %+v\n%s", r, strings.Join(logs, "\n"))
	}
	t.Log(strings.Join(logs, "\n"))
}
