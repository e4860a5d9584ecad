package judge

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseVerdict(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Verdict
	}{
		{"plain", `{"precision": 1, "recall": 0, "accuracy": 1, "reasoning": "Misses the date."}`, Verdict{1, 0, 1, "Misses the date."}},
		{"fenced with prose", "Here is my evaluation:\n```json\n{\"precision\": \"1\", \"recall\": true, \"accuracy\": false, \"reasoning\": \"ok {braces} inside\"}\n```", Verdict{1, 1, 0, "ok {braces} inside"}},
		{"keys any case, floats", `{"Precision": 1.0, "RECALL": 0.0, "Accuracy": "yes"}`, Verdict{1, 0, 1, ""}},
		{"first usable object", `{"note": "thinking"} then {"precision":0,"recall":0,"accuracy":0,"reasoning":"wrong"}`, Verdict{0, 0, 0, "wrong"}},
		{"escaped quote in string", `{"precision":1,"recall":1,"accuracy":1,"reasoning":"he said \"}\" twice"}`, Verdict{1, 1, 1, `he said "}" twice`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseVerdict(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseVerdictMalformed(t *testing.T) {
	for _, in := range []string{
		"", "I think it is correct.", `{"precision": 2, "recall": 1, "accuracy": 1}`,
		`{"precision": 1, "recall": 1}`, `{"precision": 1, "recall": 1, "accuracy": "maybe"}`, `{"precision": 1,`, `}{`,
	} {
		_, err := ParseVerdict(in)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseVerdict(%q) err = %v, want ErrMalformed", in, err)
		}
	}
}

func TestHedging(t *testing.T) {
	tests := []struct {
		in     string
		phrase string
	}{
		{"The answer is correct.", ""},
		{"This is Borderline: the date is missing.", "borderline"},
		{"It could go either way.", "could go either way"},
		{"The answer is partially right.", "partially"},
		{"回答は部分的に正しい。", "部分的"},
		{"判断が難しいが、概ね正しい。", "判断が難しい"},
		{"表現が微妙に異なる。", "微妙"},
		{"どちらとも言えない。", "どちらとも言え"},
		{"内容が曖昧である。", "曖昧"},
		{"完全に一致している。", ""},
	}
	for _, tt := range tests {
		got, ok := Hedging(tt.in)
		if got != tt.phrase || ok != (tt.phrase != "") {
			t.Errorf("Hedging(%q) = %q, %v; want %q", tt.in, got, ok, tt.phrase)
		}
	}
}

func TestMajority(t *testing.T) {
	orig := Verdict{1, 0, 1, "orig"}
	tests := []struct {
		name  string
		votes []Verdict
		want  Verdict
	}{
		{"3 votes", []Verdict{{1, 0, 0, "a"}, {0, 1, 0, "b"}, {1, 1, 0, "c"}}, Verdict{1, 1, 0, "orig"}},
		{"unanimous zero", []Verdict{{0, 0, 0, ""}, {0, 0, 0, ""}, {0, 0, 0, ""}}, Verdict{0, 0, 0, "orig"}},
		{"tie uses original", []Verdict{{1, 1, 1, ""}, {0, 0, 0, ""}}, Verdict{1, 0, 1, "orig"}},
		{"no votes keeps original", nil, Verdict{1, 0, 1, "orig"}},
		{"one vote", []Verdict{{0, 1, 0, ""}}, Verdict{0, 1, 0, "orig"}},
	}
	for _, tt := range tests {
		if got := Majority(tt.votes, orig); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestCondense(t *testing.T) {
	long := strings.Repeat("あ", 400)
	tests := []struct{ in, want string }{
		{"One. Two. Three.", "One. Two."},
		{"Value is 3.5 million. Good answer!  Extra  text.", "Value is 3.5 million. Good answer!"},
		{"正しい。日付も一致。余分な説明。", "正しい。日付も一致。"},
		{"  no   full stop ", "no full stop"},
		{long, strings.Repeat("あ", 299) + "…"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Condense(tt.in); got != tt.want {
			t.Errorf("Condense(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSummaryLines(t *testing.T) {
	// The seed's example: 50 questions, 43/38/41 ones.
	var rows []Row
	for i := range 50 {
		r := Row{}
		if i < 43 {
			r.Precision = 1
		}
		if i < 38 {
			r.Recall = 1
		}
		if i < 41 {
			r.Accuracy = 1
		}
		if i == 0 || i == 49 {
			r.Consensus = "3-vote"
		}
		rows = append(rows, r)
	}
	s := Summarize(rows)
	if want := (Summary{Total: 50, Scored: 50, Precision: 43, Recall: 38, Accuracy: 41, Consensus: 2}); s != want {
		t.Fatalf("Summarize = %+v, want %+v", s, want)
	}
	got := SummaryLines(s, "llm (model m)", 42)
	want := []string{
		"#SUMMARY: Total Questions: 50",
		"#SUMMARY: Precision: 43/50 (86%)",
		"#SUMMARY: Recall: 38/50 (76%)",
		"#SUMMARY: Accuracy: 41/50 (82%)",
		"#SUMMARY: Consensus Evaluations: 2",
		"#SUMMARY: Judge: llm (model m)",
		"#SUMMARY: Random Seed: 42",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// 9 rows, one an error: scores are out of 8; 1/8 = 12.5% rounds half to
	// even like Python's "{:.0f}" → 12%, 3/8 = 37.5% → 38%, 8/8 → 100%.
	rows = []Row{{Error: "unreadable"}}
	for i := range 8 {
		r := Row{Verdict: Verdict{Recall: 1}}
		if i == 0 {
			r.Precision = 1
		}
		if i < 3 {
			r.Accuracy = 1
		}
		rows = append(rows, r)
	}
	got = SummaryLines(Summarize(rows), "lexical", 7)
	want = []string{
		"#SUMMARY: Total Questions: 9",
		"#SUMMARY: Precision: 1/8 (12%)",
		"#SUMMARY: Recall: 8/8 (100%)",
		"#SUMMARY: Accuracy: 3/8 (38%)",
		"#SUMMARY: Errors: 1 (not judged; left out of the scores above)",
		"#SUMMARY: Consensus Evaluations: 0",
		"#SUMMARY: Judge: lexical",
		"#SUMMARY: Random Seed: 7",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := SummaryLines(Summary{}, "x", 1)[1]; got != "#SUMMARY: Precision: 0/0 (0%)" {
		t.Errorf("empty summary line = %q", got)
	}
}

func TestLexical(t *testing.T) {
	tests := []struct {
		name   string
		gt, an string
		want   Verdict
	}{
		{
			// gt terms {capital, france, paris}; answer terms {paris, capital, france, beautiful, city}:
			// recall 3/3; sentences "Paris is the capital of France." (3/3 supported) and
			// "It is a beautiful city." (0/2) → 1/2 supported ≥ 0.5.
			"english", "The capital of France is Paris.", "Paris is the capital of France. It is a beautiful city.",
			Verdict{1, 1, 1, "lexical: 3/3 ground-truth terms found in the answer (100%); 1/2 answer sentences supported by the ground truth (50%)."},
		},
		{
			// Every term but the number overlaps; the number does not match,
			// so recall is 0 and the sentence stating 5 is not supported.
			"number differs", "ログの保管期間は1年間です。", "ログの保管期間は5年間です [1]。",
			Verdict{0, 0, 0, "lexical: 10/10 ground-truth terms found in the answer (100%); 0/1 answer sentences supported by the ground truth (0%). Ground-truth number(s) missing from the answer: 1."},
		},
		{
			// The citation marker [1] is not the number 1.
			"citation is not a number", "ログの保管期間は1年間です。", "ログの保管期間は1年間です [2]。",
			Verdict{1, 1, 1, "lexical: 10/10 ground-truth terms found in the answer (100%); 1/1 answer sentences supported by the ground truth (100%)."},
		},
		{
			// gt 東京都 → {東京, 京都}; answer 大阪府です → {大阪, 阪府} (です dropped):
			// recall 0/2, sentence 0/2 supported.
			"japanese wrong", "東京都", "大阪府です。",
			Verdict{0, 0, 0, "lexical: 0/2 ground-truth terms found in the answer (0%); 0/1 answer sentences supported by the ground truth (0%)."},
		},
		{
			// gt 首都は東京 → {首都, 東京} (は splits nothing: 都は is not all hiragana → kept: {首都, 都は, は東, 東京});
			// answer 日本の首都は東京です → {日本, 本の, の首, 首都, 都は, は東, 東京, 京で} (です dropped).
			"japanese right", "首都は東京", "日本の首都は東京です。",
			Verdict{1, 1, 1, "lexical: 4/4 ground-truth terms found in the answer (100%); 1/1 answer sentences supported by the ground truth (100%)."},
		},
		{"both no info", "I don't know.", "情報が見つかりませんでした。", Verdict{1, 1, 1, "lexical: both the answer and the ground truth say no information is available."}},
		{"answer no info", "Paris", "I do not know.", Verdict{1, 0, 0, "lexical: the answer says no information is available but the ground truth has an answer."}},
		{"gt no info", "No information is available.", "It is 42.", Verdict{0, 1, 0, "lexical: the ground truth says no information is available but the answer gives some."}},
		{"empty answer", "Paris", "", Verdict{1, 0, 0, "lexical: 0/1 ground-truth terms found in the answer (0%); 0/0 answer sentences supported by the ground truth (-)."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Lexical(tt.gt, tt.an); got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0}, {"abcd", 1}, {"abcde", 2}, {"東京", 2}, {"東京 is", 2 + 1},
	}
	for _, tt := range tests {
		if got := EstimateTokens(tt.in); got != tt.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func FuzzParseVerdict(f *testing.F) {
	for _, s := range []string{`{"precision":1,"recall":0,"accuracy":1,"reasoning":"x"}`, "```json\n{}```", `{"a":"}"}`, `{{{`, `"\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVerdict(s)
		if err != nil {
			return
		}
		for _, m := range []int{v.Precision, v.Recall, v.Accuracy} {
			if m != 0 && m != 1 {
				t.Fatalf("metric %d not binary", m)
			}
		}
		_, _ = Hedging(v.Reasoning)
		_ = Condense(v.Reasoning)
	})
}

func FuzzLexical(f *testing.F) {
	f.Add("東京都は日本の首都です。", "首都は東京です")
	f.Add("I don't know", "")
	f.Fuzz(func(t *testing.T, gt, an string) {
		v := Lexical(gt, an)
		if v.Accuracy == 1 && (v.Precision == 0 || v.Recall == 0) {
			t.Fatalf("accuracy without precision and recall: %+v", v)
		}
	})
}
