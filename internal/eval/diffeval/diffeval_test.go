package diffeval

import (
	"context"
	"encoding/json"
	"errors"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/golden"
	"github.com/shirube/shirube/internal/guard"
	"github.com/shirube/shirube/internal/llm"
)

// scripted answers each question with its scripted replies in turn,
// cycling; a question without a script fails.
type scripted struct {
	mu      sync.Mutex
	scripts map[string][]assistant.Reply
	calls   map[string]int
}

func (s *scripted) Ask(_ context.Context, q string, _ []llm.Message) (assistant.Reply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	sc := s.scripts[q]
	if len(sc) == 0 {
		return assistant.Reply{}, errors.New("index not found")
	}
	r := sc[s.calls[q]%len(sc)]
	s.calls[q]++
	return r, nil
}

func ans(text string) assistant.Reply { return assistant.Reply{Answer: text, Generator: "llm:test"} }

var refusal = assistant.Reply{Answer: guard.InsufficientEvidenceResponse, Flags: answer.Flags{InsufficientEvidence: true}, Generator: "guard"}

const testCases = `{
  "version": "0.1",
  "corpus": "../shared/datasets/law-html-ja",
  "cases": [
    {"id": "c1", "question": "製造物責任法第三条は？", "expected_keywords": ["第三条", "賠償"]},
    {"id": "c2", "question": "国会の地位は？", "expected_keywords": ["国権の最高機関"]},
    {"id": "c3", "question": "審査基準は？", "expected_keywords": ["審査基準"]}
  ]
}`

func fixedNow() time.Time { return time.Date(2025, 3, 4, 9, 0, 0, 0, time.UTC) }

// runFixture runs the three test cases on a deterministic A and an
// unstable B; see TestRunMetrics for the hand computation.
func runFixture(t *testing.T) Report {
	t.Helper()
	dir := t.TempDir()
	cases := filepath.Join(dir, "cases.json")
	if err := os.WriteFile(cases, []byte(testCases), 0o644); err != nil {
		t.Fatal(err)
	}
	a := &scripted{scripts: map[string][]assistant.Reply{
		"製造物責任法第三条は？": {ans("第三条により損害を賠償する責めに任ずる。")},
		"国会の地位は？":     {ans("一般的に、国会は国権の最高機関である。")},
		"審査基準は？":      {refusal},
	}}
	hit1, part1 := ans("第三条：賠償の責め"), ans("第三条を参照")
	hit2, miss2 := ans("国権の最高機関"), ans("国会は立法機関")
	b := &scripted{scripts: map[string][]assistant.Reply{
		"製造物責任法第三条は？": {hit1, hit1, part1, hit1, hit1},
		"国会の地位は？":     {hit2, ans("  "), miss2, hit2, miss2},
		"審査基準は？":      {ans("行政庁は、審査基準を定めるものとする。")},
	}}
	rep, err := Run(context.Background(), Options{Cases: cases, A: a, B: b, NameA: "html-text", NameB: "markdown",
		OutDir: filepath.Join(dir, "out"), Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestRunMetrics checks the rates against a hand computation.
//
// A (deterministic, 5 identical runs each):
//
//	c1 hit, no phrase, stable           → PASS
//	c2 hit, 「一般的に」                  → FAIL (hallucination)
//	c3 refusal                          → SKIPPED
//	evaluated 2: hit 2/2, recall 1, hallucination 1/2, stable 2/2, pass 1/2, skip 1/3
//
// B (unstable):
//
//	c1 runs 11,11,10,11,11: hits 4/5, recall (4+0.5)/5 = 0.9, stability 4/5 → PASS
//	c2 runs 1,-,0,1,0: answered 4, hits 2/4 (no majority), recall 0.5,
//	   stability 2/5 = 0.4 → FAIL
//	c3 all hit → PASS
//	evaluated 3: hit 2/3, recall (0.9+0.5+1)/3 = 0.8, hallucination 0,
//	stable 2/3, pass 2/3, skip 0
func TestRunMetrics(t *testing.T) {
	rep := runFixture(t)
	wantA := Summary{Name: "html-text", Cases: 3, Evaluated: 2, Pass: 1, Fail: 1, Skipped: 1,
		EvidenceHitRate: 1, KeywordRecall: 1, HallucinationRate: 0.5, StabilityRate: 1, PassRate: 0.5, SkipRate: 0.3333,
		Generators: map[string]int{"llm:test": 10, "guard": 5}, Judge: JudgeKeywords}
	wantB := Summary{Name: "markdown", Cases: 3, Evaluated: 3, Pass: 2, Fail: 1,
		EvidenceHitRate: 0.6667, KeywordRecall: 0.8, HallucinationRate: 0, StabilityRate: 0.6667, PassRate: 0.6667, SkipRate: 0,
		Generators: map[string]int{"llm:test": 15}, Judge: JudgeKeywords}
	if !reflect.DeepEqual(rep.A, wantA) {
		t.Errorf("A = %+v\nwant %+v", rep.A, wantA)
	}
	if !reflect.DeepEqual(rep.B, wantB) {
		t.Errorf("B = %+v\nwant %+v", rep.B, wantB)
	}
	var got []string
	for _, m := range rep.Metrics {
		got = append(got, m.Key+" "+formatFloat(m.Diff)+" "+m.Better)
	}
	want := []string{
		"evidence_hit_rate -0.3333 A",
		"keyword_recall -0.2 A",
		"hallucination_rate -0.5 B",
		"stability_rate -0.3333 A",
		"pass_rate 0.1667 B",
		"skip_rate -0.3333 B",
	}
	if !slices.Equal(got, want) {
		t.Errorf("metrics\n%v\nwant\n%v", got, want)
	}
	verdicts := func(pick func(CaseResult) Outcome) []string {
		var v []string
		for _, c := range rep.Cases {
			v = append(v, pick(c).Verdict)
		}
		return v
	}
	if v := verdicts(func(c CaseResult) Outcome { return c.A }); !slices.Equal(v, []string{Pass, Fail, Skipped}) {
		t.Errorf("A verdicts %v", v)
	}
	if v := verdicts(func(c CaseResult) Outcome { return c.B }); !slices.Equal(v, []string{Pass, Fail, Pass}) {
		t.Errorf("B verdicts %v", v)
	}
	c2 := rep.Cases[1].B
	if c2.Stability != 0.4 || c2.Hits != 2 || c2.Answered != 4 || c2.EvidenceHit || c2.Stable {
		t.Errorf("B c2 = stability %v, hits %d/%d, hit %t, stable %t", c2.Stability, c2.Hits, c2.Answered, c2.EvidenceHit, c2.Stable)
	}
	if !slices.Equal(rep.Cases[1].A.Hallucinations, []string{"一般的に"}) {
		t.Errorf("A c2 hallucinations %v", rep.Cases[1].A.Hallucinations)
	}
	if rep.Runs != DefaultRuns || len(rep.Cases[0].A.Runs) != DefaultRuns {
		t.Errorf("runs %d / %d, want %d", rep.Runs, len(rep.Cases[0].A.Runs), DefaultRuns)
	}

	// The JSON file round-trips to the same summaries.
	data, err := os.ReadFile(rep.JSONPath)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(back.A, wantA) || !reflect.DeepEqual(back.B, wantB) {
		t.Errorf("JSON file: err %v\nA %+v\nB %+v", err, back.A, back.B)
	}
	if filepath.Base(rep.JSONPath) != "diff_eval_2025-03-04.json" {
		t.Errorf("json path %s", rep.JSONPath)
	}
}

func formatFloat(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

func TestEvaluate(t *testing.T) {
	c := Case{ID: "x", ExpectedKeywords: []string{"甲", "乙"}, MustNotContain: DefaultMustNotContain}
	boom := errors.New("connection refused")
	for _, tc := range []struct {
		name        string
		replies     []assistant.Reply
		errs        []error
		verdict     string
		hit, stable bool
		stability   float64
		reason      string
	}{
		{"one run, hit", []assistant.Reply{ans("甲と乙")}, nil, Pass, true, true, 1, ""},
		{"one of two runs hits", []assistant.Reply{ans("甲のみ"), ans("甲と乙")}, nil, Fail, false, false, 0.5, "all keywords in 1 of 2 answers; unstable (50% of runs agree)"},
		{"majority of answered runs", []assistant.Reply{ans("甲乙"), ans("甲乙"), ans("甲"), ans("")}, nil, Fail, true, false, 0.5, "unstable (50% of runs agree)"},
		{"4 of 5 agree is stable", []assistant.Reply{ans("甲乙"), ans("甲乙"), ans("甲乙"), ans("甲乙"), ans("乙")}, nil, Pass, true, true, 0.8, ""},
		{"3 of 5 agree is not", []assistant.Reply{ans("甲乙"), ans("甲乙"), ans("甲乙"), ans("甲"), ans("乙")}, nil, Fail, true, false, 0.6, "unstable (60% of runs agree)"},
		{"hallucination phrase", []assistant.Reply{ans("甲乙。参考までに丙")}, nil, Fail, true, true, 1, `hallucination phrase "参考までに"`},
		{"wave-dash phrase", []assistant.Reply{ans("甲乙と言われています")}, nil, Fail, true, true, 1, `hallucination phrase "と言われています"`},
		{"refusal flag", []assistant.Reply{refusal}, nil, Skipped, false, true, 1, "no run gave a detectable answer (the assistant refused (insufficient evidence or ambiguous question))"},
		{"refusal template without flag", []assistant.Reply{ans(guard.AmbiguousQueryResponse)}, nil, Skipped, false, true, 1, ""},
		{"empty answers", []assistant.Reply{ans(""), ans(" \n")}, nil, Skipped, false, true, 1, "no run gave a detectable answer (empty answer)"},
		{"errors", []assistant.Reply{{}, {}}, []error{boom, boom}, Skipped, false, true, 1, "no run gave a detectable answer (error: connection refused)"},
		{"error in one run", []assistant.Reply{{}, ans("甲乙"), ans("甲乙")}, []error{boom}, Fail, true, false, 0.6667, "unstable (67% of runs agree)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Evaluate(c, tc.replies, tc.errs)
			if o.Verdict != tc.verdict || o.EvidenceHit != tc.hit || o.Stable != tc.stable || o.Stability != tc.stability {
				t.Errorf("verdict %s hit %t stable %t stability %v; want %s %t %t %v",
					o.Verdict, o.EvidenceHit, o.Stable, o.Stability, tc.verdict, tc.hit, tc.stable, tc.stability)
			}
			if tc.reason != "" && o.Reason != tc.reason {
				t.Errorf("reason %q, want %q", o.Reason, tc.reason)
			}
		})
	}
}

// TestPlainMatch pins the v0.1 rule: no normalisation, so a full-width
// digit or another letter case does not match.
func TestPlainMatch(t *testing.T) {
	for _, tc := range []struct {
		keyword, answer string
		hit             bool
	}{
		{"第3条", "第3条に定める", true},
		{"第3条", "第３条に定める", false},
		{"ABC", "abc", false},
		{"しなければならない", "しなければ ならない", false},
	} {
		o := Evaluate(Case{ExpectedKeywords: []string{tc.keyword}}, []assistant.Reply{ans(tc.answer)}, nil)
		if o.EvidenceHit != tc.hit {
			t.Errorf("keyword %q in %q: hit %t, want %t", tc.keyword, tc.answer, o.EvidenceHit, tc.hit)
		}
	}
}

func TestMarkdownGolden(t *testing.T) {
	rep := runFixture(t)
	rep.CasesFile = "eval/cases.json"
	got := Markdown(rep)
	golden.Check(t, filepath.Join("testdata", "report.golden.md"), []byte(got))
	written, err := os.ReadFile(rep.MarkdownPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(written), "| 根拠出現率 (Evidence Hit Rate) ↑ | 100.0% | 66.7% | -33.3 pt | A |") {
		t.Errorf("written Markdown lacks the evidence row:\n%s", written)
	}
}

// TestChart decodes the written PNG and checks its size and the first
// group of bars by hand: plot 880×310 px from (90,110), 6 groups of 146 px,
// bars 43 px wide; A's evidence hit (100 %) fills x 118–160 from y 110 to
// 420, B's (66.67 %, 207 px) fills x 165–207 from y 213.
func TestChart(t *testing.T) {
	rep := runFixture(t)
	f, err := os.Open(rep.ChartPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != ChartWidth || b.Dy() != ChartHeight {
		t.Fatalf("chart is %v, want %dx%d", b, ChartWidth, ChartHeight)
	}
	same := func(x, y int, want color.RGBA) bool {
		r, g, b, _ := img.At(x, y).RGBA()
		return uint8(r>>8) == want.R && uint8(g>>8) == want.G && uint8(b>>8) == want.B
	}
	for _, p := range []struct {
		x, y int
		want color.RGBA
		ok   bool
	}{
		{140, 120, colA, true},  // top of A's full bar
		{140, 415, colA, true},  // bottom of it
		{185, 300, colB, true},  // inside B's bar
		{185, 216, colB, true},  // just below its top
		{185, 209, colB, false}, // above it
		{5, 5, colBackground, true},
	} {
		if same(p.x, p.y, p.want) != p.ok {
			t.Errorf("pixel (%d,%d) = %v, want colour %v: %t", p.x, p.y, img.At(p.x, p.y), p.want, p.ok)
		}
	}
	// Text was drawn: the title row holds dark pixels.
	dark := 0
	for x := 90; x < 600; x++ {
		for y := 10; y < 45; y++ {
			if same(x, y, colText) {
				dark++
			}
		}
	}
	if dark < 100 {
		t.Errorf("title row has %d text pixels; labels missing", dark)
	}
}

func TestWriteReportNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "diff_eval_2025-03-04.png"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := Report{NameA: "A", NameB: "B", Metrics: Compare(Summary{}, Summary{})}
	if err := WriteReport(dir, fixedNow(), &rep); err != nil {
		t.Fatal(err)
	}
	if filepath.Base(rep.JSONPath) != "diff_eval_2025-03-04_2.json" || filepath.Base(rep.ChartPath) != "diff_eval_2025-03-04_2.png" {
		t.Errorf("paths %s %s", rep.JSONPath, rep.ChartPath)
	}
	if old, _ := os.ReadFile(filepath.Join(dir, "diff_eval_2025-03-04.png")); string(old) != "old" {
		t.Error("existing chart overwritten")
	}
}

func TestParseCases(t *testing.T) {
	raw := `{"version": 0.1, "must_not_contain": ["推測ですが"], "cases": [
		{"id": "a", "question": "q", "expected_keywords": ["k", ""]},
		{"id": "b", "question": "q", "expected_keywords": ["k"], "must_not_contain": []},
		{"id": "c", "question": "q", "expected_keywords": []},
		{"id": "d", "question": " ", "expected_keywords": ["k"]},
		{"question": "q", "expected_keywords": ["k"]},
		{"id": "a", "question": "q", "expected_keywords": ["k"]},
		{"id": "e", "question": "q", "expected_keywords": "k"},
		7
	]}`
	cf, problems, err := ParseCases([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if cf.Version != "0.1" || len(cf.Cases) != 2 {
		t.Fatalf("version %q, %d cases", cf.Version, len(cf.Cases))
	}
	if a := cf.Cases[0]; !slices.Equal(a.ExpectedKeywords, []string{"k"}) || !slices.Equal(a.MustNotContain, []string{"推測ですが"}) {
		t.Errorf("case a = %+v", a)
	}
	if b := cf.Cases[1]; b.MustNotContain == nil || len(b.MustNotContain) != 0 {
		t.Errorf("explicit empty must_not_contain lost: %#v", b.MustNotContain)
	}
	wants := []string{`#3 (c) skipped: no "expected_keywords"`, `#4 (d) skipped: empty "question"`, `#5 skipped: no "id"`,
		`#6 (a) skipped: duplicate id`, `#7 (e) skipped: cannot decode`, `#8 skipped: cannot decode`}
	if len(problems) != len(wants) {
		t.Fatalf("problems %v", problems)
	}
	for i, w := range wants {
		if !strings.Contains(problems[i].Error(), w) {
			t.Errorf("problem %d = %q, want %q", i, problems[i], w)
		}
	}
	cf, _, err = ParseCases([]byte(`{"cases": [{"id": "x", "question": "q", "expected_keywords": ["k"]}]}`))
	if err != nil || !slices.Equal(cf.Cases[0].MustNotContain, DefaultMustNotContain) {
		t.Errorf("default phrases not applied: %v %v", cf.Cases, err)
	}
	for _, bad := range []string{"", "[]", `{"cases": {}}`, `{"version": "0.1"}`} {
		if _, _, err := ParseCases([]byte(bad)); err == nil {
			t.Errorf("ParseCases(%q) succeeded", bad)
		}
	}
}

// TestShippedCases checks eval/law_html_ja_cases.json: it loads cleanly,
// has at least 12 cases, and every expected keyword occurs verbatim in the
// UTF-8 text twin of the law it asks about.
func TestShippedCases(t *testing.T) {
	cf, problems, err := LoadCases("../../../eval/law_html_ja_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if len(cf.Cases) < 12 {
		t.Errorf("%d cases, want at least 12", len(cf.Cases))
	}
	if cf.Corpus != "../shared/datasets/law-html-ja" {
		t.Errorf("corpus %q", cf.Corpus)
	}
	root := "../../../../shared/datasets/law-html-ja"
	index, err := os.ReadFile(filepath.Join(root, "index.tsv"))
	if err != nil {
		t.Skipf("law-html-ja dataset not available: %v", err)
	}
	texts := map[string]string{} // law name (before its parenthesis) → text
	for _, line := range strings.Split(strings.TrimSpace(string(index)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 2 {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, "text", f[0]+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		name, _, _ := strings.Cut(f[1], "（")
		texts[name] = string(data)
	}
	for _, c := range cf.Cases {
		law, _, _ := strings.Cut(c.Source, " ")
		text, ok := texts[law]
		if !ok {
			t.Errorf("%s: source %q names no law of the dataset", c.ID, c.Source)
			continue
		}
		for _, k := range c.ExpectedKeywords {
			if !strings.Contains(text, k) {
				t.Errorf("%s: keyword %q not in %s", c.ID, k, law)
			}
		}
	}
}

func FuzzParseCases(f *testing.F) {
	f.Add([]byte(testCases))
	f.Add([]byte(`{"cases": [{"id": "a", "question": "q", "expected_keywords": ["k"], "must_not_contain": null}, null, "x"]}`))
	f.Add([]byte(`{"cases": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cf, problems, err := ParseCases(data)
		if err != nil {
			return
		}
		ids := map[string]bool{}
		for _, c := range cf.Cases {
			if c.ID == "" || ids[c.ID] || strings.TrimSpace(c.Question) == "" || len(c.ExpectedKeywords) == 0 || c.MustNotContain == nil {
				t.Fatalf("invalid case accepted: %+v", c)
			}
			ids[c.ID] = true
			o := Evaluate(c, []assistant.Reply{ans(c.Question)}, nil)
			if o.Verdict != Pass && o.Verdict != Fail && o.Verdict != Skipped {
				t.Fatalf("verdict %q", o.Verdict)
			}
		}
		for _, p := range problems {
			if strings.Contains(p.Error(), "\n") {
				t.Fatalf("problem spans lines: %q", p)
			}
		}
	})
}

// TestModelNotUsedIsSkipped: a reply the extractive fallback wrote because
// the model failed is not scored as the model's answer, even when it
// contains every keyword: the run is SKIPPED and says why.
func TestModelNotUsedIsSkipped(t *testing.T) {
	c := Case{ID: "c1", Question: "q", ExpectedKeywords: []string{"賠償"}}
	fallback := assistant.Reply{Answer: "損害を賠償する [1]。", Generator: "extractive",
		LLMUnavailable: true, LLMError: "server error (HTTP 500) after 3 attempts"}
	o := Evaluate(c, []assistant.Reply{fallback, fallback}, nil)
	if o.Verdict != Skipped || o.Answered != 0 || !strings.Contains(o.Reason, "requested model was not used") ||
		!strings.Contains(o.Reason, "HTTP 500") {
		t.Errorf("fallback answers: verdict %s, answered %d, reason %q; want SKIPPED naming the unused model", o.Verdict, o.Answered, o.Reason)
	}
	if s := Summarise("A", []Outcome{o}); s.Generators["extractive"] != 2 || s.GeneratorsLine() != "extractive ×2" {
		t.Errorf("generators %v (%s)", s.Generators, s.GeneratorsLine())
	}
}
