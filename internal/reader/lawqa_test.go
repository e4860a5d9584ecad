package reader

import (
	"path/filepath"
	"strings"
	"testing"
)

// The fixture testdata/laws is a law written for these tests in e-Gov's
// text layout (captions, article numbers and item numbers on lines of
// their own, cited law numbers broken onto the next lines, supplementary
// provisions), a development-set law (消防法) and a law without
// definitions.

func TestParseLaw(t *testing.T) {
	ds, err := LawQuestions(LawOptions{Dir: filepath.Join("testdata", "laws"), Exclude: ExcludeDevLaws})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Data) != 1 || ds.Data[0].Title != "架空図書館法" {
		t.Fatalf("laws %+v: want only 架空図書館法 (消防法 is a development set's, the rules define nothing)", ds.Data)
	}
	law := ds.Data[0]
	var defs *Paragraph
	for i, p := range law.Paragraphs {
		if strings.HasPrefix(p.Context, "（定義）\n第二条\n") {
			defs = &law.Paragraphs[i]
		}
	}
	if defs == nil {
		t.Fatalf("no 第二条 paragraph among %+v", law.Paragraphs)
	}
	for _, want := range []string{
		"\n一　図書館　図書、記録その他",
		"\n二　分館　図書館の事務の一部を分掌する施設であつて、架空市立図書館条例（令和九年架空市条例第一号）第三条に規定するものをいう。",
		"\n２　この法律において「司書」とは、",
	} {
		if !strings.Contains(defs.Context, want) {
			t.Errorf("第二条 lacks %q:\n%s", want, defs.Context)
		}
	}
	terms := map[string]string{}
	for _, qa := range defs.QAs {
		a := qa.Answers[0]
		if got := string([]rune(defs.Context)[a.Start:][:len([]rune(a.Text))]); got != a.Text {
			t.Errorf("%s: answer_start points at %q, not %q", qa.Question, got, a.Text)
		}
		sent, _, ok := splitAnswerSentence(defs.Context, a)
		if !ok || !strings.HasSuffix(sent, "をいう。") {
			t.Errorf("%s: answer sentence %q", qa.Question, sent)
		}
		terms[qa.Question] = a.Text
	}
	if len(terms) != 3 {
		t.Errorf("questions %v: want one for each of 図書館, 分館, 司書", terms)
	}
	for q, a := range terms {
		switch {
		case strings.Contains(q, "司書"):
			if a != "図書館の専門的職務に従事する職員" {
				t.Errorf("%s → %q", q, a)
			}
		case strings.Contains(q, "分館"), strings.Contains(q, "図書館"):
		default:
			t.Errorf("question %q asks no defined term", q)
		}
	}
	for _, p := range law.Paragraphs {
		if strings.Contains(p.Context, "旧館") || strings.Contains(p.Context, "施行期日") {
			t.Errorf("supplementary provisions read as an article:\n%s", p.Context)
		}
	}
	if len(law.Paragraphs) != 3 {
		t.Errorf("%d paragraphs, want 第二条 and the other two articles", len(law.Paragraphs))
	}
}

func TestLawQuestionsErrors(t *testing.T) {
	if _, err := LawQuestions(LawOptions{Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "unpack") {
		t.Errorf("a folder without index.tsv: %v", err)
	}
	if _, err := LawQuestions(LawOptions{Dir: filepath.Join("testdata", "laws"), Exclude: func(string) bool { return true }}); err == nil {
		t.Error("every law excluded: no error")
	}
}

func TestExcludeDevLaws(t *testing.T) {
	for name, want := range map[string]bool{
		"消防法（昭和二十三年七月二十四日法律第百八十六号）":       true,
		"消防法施行規則（昭和三十六年四月一日自治省令第六号）":      true,
		"労働安全衛生法施行令（昭和四十七年八月十九日政令第三百十八号）": true,
		"行政機関の保有する個人情報の保護に関する法律（平成十五年…）":  true,
		"刑法（明治四十年四月二十四日法律第四十五号）":          false,
		"火炎びんの使用等の処罰に関する法律（昭和四十七年法律第十七号）": false,
	} {
		if ExcludeDevLaws(name) != want {
			t.Errorf("ExcludeDevLaws(%q) = %v", name, !want)
		}
	}
}

// TestTrainWithLaws trains on the fixture with the law questions: they
// are trained on whatever the limit, and measured apart.
func TestTrainWithLaws(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model")
	}
	m, err := Train(t.Context(), TrainOptions{
		Data: filepath.Join("testdata", "tiny_squad.json"), Epochs: 100, Limit: 12,
		Validate: func(title string) bool { return title == "白雲山" },
		Laws:     &LawOptions{Dir: filepath.Join("testdata", "laws"), Exclude: ExcludeDevLaws},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := m.Report
	if r.LawTrainQuestions != 3 || r.LawValQuestions != 0 || !strings.Contains(m.Provenance, "law-corpus-ja") {
		t.Fatalf("report %+v, provenance %q", r, m.Provenance)
	}
}
