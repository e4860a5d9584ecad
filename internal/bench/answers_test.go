package bench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/shirube/shirube/internal/auditlog"
)

// writeBEIR writes a tiny BEIR dataset and returns its folder.
func writeBEIR(t *testing.T, corpus, queries, qrels string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "qrels"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"corpus.jsonl": corpus, "queries.jsonl": queries, "qrels/test.tsv": qrels} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRefusalProtocols(t *testing.T) {
	// Two articles: 東京タワー has two paragraphs, 富士山 one. The question
	// about the tower's height is answerable only from t1; with t1 held out
	// its sibling t2 still shares the subject words, with the whole article
	// held out nothing does.
	corpus := `{"_id":"t1","title":"東京タワー","text":"東京タワーの高さは333メートルで、1958年に完成した電波塔である。"}
{"_id":"t2","title":"東京タワー","text":"東京タワーは港区芝公園にあり、展望台から東京の夜景を一望できる電波塔として知られる。"}
{"_id":"f1","title":"富士山","text":"富士山は標高3776メートルの日本最高峰で、静岡県と山梨県にまたがる活火山である。"}
`
	queries := `{"_id":"q1","text":"東京タワーの高さは何メートルか","answers":["333メートル"]}
{"_id":"q2","text":"富士山の標高は何メートルか","answers":["3776メートル"]}
`
	qrels := "query-id\tcorpus-id\tscore\nq1\tt1\t1\nq2\tf1\t1\n"
	dir := writeBEIR(t, corpus, queries, qrels)
	rep, err := Refusal(context.Background(), dir, 4, 0.5, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Questions != 2 || len(rep.Protocols) != 2 {
		t.Fatalf("report %+v", rep)
	}
	para, art := rep.Protocols[0], rep.Protocols[1]
	if para.Holdout != HoldoutParagraph || art.Holdout != HoldoutArticle {
		t.Fatalf("protocols %q, %q", para.Holdout, art.Holdout)
	}
	// q1 hides t1 (paragraph) or t1+t2 (article); q2 hides f1 either way.
	if para.Hidden != 1 || art.Hidden != 1.5 {
		t.Errorf("hidden per question: paragraph %v, article %v; want 1 and 1.5", para.Hidden, art.Hidden)
	}
	if para.At.AnsweredPresent != 1 || art.At.AnsweredPresent != 1 {
		t.Errorf("with their paragraphs both questions must be answered: %+v %+v", para.At, art.At)
	}
	if art.At.RefusedAbsent != 1 || !art.Meets {
		t.Errorf("with the article held out both questions must be refused: %+v", art)
	}
	if para.At.RefusedAbsent > art.At.RefusedAbsent {
		t.Errorf("hiding more cannot refuse less: paragraph %v > article %v", para.At.RefusedAbsent, art.At.RefusedAbsent)
	}
	if len(para.Sweep) == 0 || para.Sweep[0].Threshold != 0.2 {
		t.Errorf("sweep %+v", para.Sweep)
	}
	// The whole gate only adds refusals to the score's.
	for _, p := range rep.Protocols {
		if p.At.AnsweredPresent > p.ScoreOnly.AnsweredPresent || p.At.RefusedAbsent < p.ScoreOnly.RefusedAbsent {
			t.Errorf("%s: whole gate %+v answers more or refuses less than the score alone %+v", p.Holdout, p.At, p.ScoreOnly)
		}
	}
}

// TestRefusalJSQuAD runs the calibration on the first JSQuAD questions: the
// default threshold answers nearly every question with its paragraph and
// refuses when the article is held out.
func TestRefusalJSQuAD(t *testing.T) {
	if _, err := os.Stat(jsquad); err != nil {
		t.Skip("dataset not present")
	}
	if testing.Short() {
		t.Skip("indexes the JSQuAD corpus")
	}
	rep, err := Refusal(context.Background(), jsquad, 4, 0.5, 300, nil)
	if err != nil {
		t.Fatal(err)
	}
	para, art := rep.Protocols[0], rep.Protocols[1]
	if para.At.AnsweredPresent < 0.95 {
		t.Errorf("answered with paragraph %.3f < 0.95", para.At.AnsweredPresent)
	}
	if art.At.RefusedAbsent < 0.80 || !art.Meets {
		t.Errorf("article held out: refused %.3f < 0.80", art.At.RefusedAbsent)
	}
	if art.Hidden <= para.Hidden {
		t.Errorf("article holdout hides %.1f documents, paragraph %.1f", art.Hidden, para.Hidden)
	}
	// The paragraph protocol is the hard one: siblings share the subject.
	if para.At.RefusedAbsent >= art.At.RefusedAbsent {
		t.Errorf("paragraph refusal %.3f ≥ article %.3f", para.At.RefusedAbsent, art.At.RefusedAbsent)
	}
}

func TestLegs(t *testing.T) {
	corpus := `{"_id":"a","title":"猫","text":"猫は夜行性の動物で、暗い場所でもよく見える目を持つ。"}
{"_id":"b","title":"犬","text":"犬は嗅覚が非常に優れており、警察犬として活躍する。"}
{"_id":"c","title":"鳥","text":"渡り鳥は季節によって長い距離を移動する。"}
`
	queries := `{"_id":"q1","text":"猫の目は暗い場所で見えるか"}
{"_id":"q2","text":"警察犬として働く動物の嗅覚"}
`
	qrels := "query-id\tcorpus-id\tscore\nq1\ta\t1\nq2\tb\t1\n"
	ds, ix, _, err := LoadIndexed(context.Background(), writeBEIR(t, corpus, queries, qrels))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Legs(context.Background(), ds, ix, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Queries != 2 || rep.Both+rep.BM25Only+rep.VectorOnly+rep.Neither != 2 {
		t.Fatalf("report %+v", rep)
	}
	if rep.BM25NDCG != 1 || rep.Both+rep.BM25Only != 2 {
		t.Errorf("BM25 must rank both answers first: %+v", rep)
	}
	if rep.OracleNDCG < rep.BM25NDCG || rep.OracleNDCG < rep.VectorNDCG || rep.VectorGain != round(rep.OracleNDCG-rep.BM25NDCG) {
		t.Errorf("oracle %v must bound both legs (%v, %v) with gain %v", rep.OracleNDCG, rep.BM25NDCG, rep.VectorNDCG, rep.VectorGain)
	}
}

func TestLoggedQueriesAndZeroHits(t *testing.T) {
	dir := t.TempDir()
	l := auditlog.Open(dir, auditlog.Options{})
	for _, e := range []auditlog.Entry{
		{Query: "猫の目は暗い場所で見えるか"},
		{Query: "その理由は？", RewrittenQuery: "猫 目 暗い 理由"}, // the search ran the rewritten form
		{Query: "猫の目は暗い場所で見えるか"},                       // counted once
		{Query: "xyzzy plugh"},
	} {
		if err := l.Log(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	qs, skipped, err := LoggedQueries(context.Background(), dir)
	if err != nil || skipped != 0 || !slices.Equal(qs, []string{"猫の目は暗い場所で見えるか", "猫 目 暗い 理由", "xyzzy plugh"}) {
		t.Fatalf("LoggedQueries = %q, %d, %v", qs, skipped, err)
	}
	corpus := `{"_id":"a","title":"猫","text":"猫は夜行性の動物で、暗い場所でもよく見える目を持つ。"}
`
	_, ix, _, err := LoadIndexed(context.Background(), writeBEIR(t, corpus, `{"_id":"q","text":"猫"}`+"\n", "query-id\tcorpus-id\tscore\nq\ta\t1\n"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ZeroHits(context.Background(), ix, qs)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Queries != 3 || rep.ZeroHit != 1 || rep.ZeroHitRate != 0.3333 || !slices.Equal(rep.Examples, []string{"xyzzy plugh"}) {
		t.Errorf("ZeroHits = %+v", rep)
	}
}
