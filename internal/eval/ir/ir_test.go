package ir

import (
	"bytes"
	"compress/gzip"
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// Hand-computed values. log2(2)=1, log2(3)=1.5849625007, log2(4)=2,
// log2(5)=2.3219280949.
func TestNDCG(t *testing.T) {
	binary := map[string]int{"a": 1, "b": 1, "x": 0}
	graded := map[string]int{"a": 2, "b": 1}
	tests := []struct {
		name    string
		ranking []string
		judged  map[string]int
		k       int
		gain    Gain
		want    float64
	}{
		{"perfect", []string{"a", "b", "c"}, binary, 10, GainLinear, 1},
		// DCG = 1/log2(3) + 1/log2(4) = 0.6309297536 + 0.5 ; IDCG = 1 + 0.6309297536
		{"relevant at 2 and 3", []string{"c", "a", "b"}, binary, 10, GainLinear, (1/math.Log2(3) + 0.5) / (1 + 1/math.Log2(3))},
		// cutoff 2 keeps only "a" at rank 2: DCG = 0.6309…, IDCG@2 = 1.6309…
		{"cutoff drops rank 3", []string{"c", "a", "b"}, binary, 2, GainLinear, (1 / math.Log2(3)) / (1 + 1/math.Log2(3))},
		// IDCG@1 = 1, DCG@1 = 0
		{"k=1 miss", []string{"c", "a"}, binary, 1, GainLinear, 0},
		// grade-0 judged doc earns nothing
		{"judged non-relevant", []string{"x"}, binary, 10, GainLinear, 0},
		// linear: DCG = 1 + 2/log2(3) ; IDCG = 2 + 1/log2(3)
		{"graded linear inverted", []string{"b", "a"}, graded, 10, GainLinear, (1 + 2/math.Log2(3)) / (2 + 1/math.Log2(3))},
		// exponential: gains 3 and 1 → DCG = 1 + 3/log2(3) ; IDCG = 3 + 1/log2(3)
		{"graded exponential inverted", []string{"b", "a"}, graded, 10, GainExponential, (1 + 3/math.Log2(3)) / (3 + 1/math.Log2(3))},
		{"empty ranking", nil, binary, 10, GainLinear, 0},
		{"no relevant judged", []string{"a"}, map[string]int{"a": 0}, 10, GainLinear, 0},
		{"k zero", []string{"a"}, binary, 0, GainLinear, 0},
		{"k negative", []string{"a"}, binary, -3, GainLinear, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NDCG(tt.ranking, tt.judged, tt.k, tt.gain); !near(got, tt.want) {
				t.Errorf("NDCG = %.12f, want %.12f", got, tt.want)
			}
		})
	}
}

func TestReciprocalRankAndRecall(t *testing.T) {
	judged := map[string]int{"a": 1, "b": 2, "c": 1, "n": 0, "m": -1}
	tests := []struct {
		name       string
		ranking    []string
		k          int
		rr, recall float64
	}{
		{"first relevant at 1", []string{"a", "x"}, 10, 1, 1.0 / 3},
		{"first relevant at 3", []string{"x", "n", "b", "c"}, 10, 1.0 / 3, 2.0 / 3},
		{"beyond cutoff", []string{"x", "y", "a"}, 2, 0, 0},
		{"all three in top 3", []string{"c", "b", "a", "x"}, 3, 1, 1},
		{"non-positive grades are not relevant", []string{"n", "m", "a"}, 10, 1.0 / 3, 1.0 / 3},
		{"empty", nil, 10, 0, 0},
		{"k negative", []string{"a"}, -1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ReciprocalRank(tt.ranking, judged, tt.k); !near(got, tt.rr) {
				t.Errorf("ReciprocalRank = %v, want %v", got, tt.rr)
			}
			if got := Recall(tt.ranking, judged, tt.k); !near(got, tt.recall) {
				t.Errorf("Recall = %v, want %v", got, tt.recall)
			}
		})
	}
	if got := Recall([]string{"a"}, map[string]int{"a": 0}, 10); got != 0 {
		t.Errorf("Recall with no relevant docs = %v, want 0", got)
	}
}

func TestRankingOrder(t *testing.T) {
	run := Run{"q": {"d3": 1.0, "d1": 2.0, "d2": 1.0, "d0": 0.5, "d10": 1.0}}
	want := []string{"d1", "d10", "d2", "d3", "d0"} // ties: id ascending (byte order)
	if got := run.Ranking("q"); !reflect.DeepEqual(got, want) {
		t.Errorf("Ranking = %v, want %v", got, want)
	}
	if got := run.Ranking("absent"); got != nil {
		t.Errorf("Ranking(absent) = %v, want nil", got)
	}
}

func TestEvaluate(t *testing.T) {
	q := Qrels{
		"q1": {"a": 1},         // found at rank 2
		"q2": {"b": 1, "c": 1}, // missing from the run → zeros
		"q3": {"z": 0},         // no relevant doc → skipped
		"q4": {"d": 1},         // found at rank 1
	}
	run := Run{
		"q1":    {"x": 3, "a": 2},
		"q3":    {"z": 1},
		"q4":    {"d": 5},
		"extra": {"a": 1}, // not judged → ignored
	}
	res := Evaluate(q, run, 1, 0, -5, 10)
	if res.Queries != 3 || res.Missing != 1 || res.Skipped != 1 {
		t.Fatalf("queries/missing/skipped = %d/%d/%d, want 3/1/1", res.Queries, res.Missing, res.Skipped)
	}
	// q1: nDCG@10 = 1/log2(3); q2: 0; q4: 1.
	if want := (1/math.Log2(3) + 0 + 1) / 3; !near(res.NDCG10, want) {
		t.Errorf("NDCG10 = %v, want %v", res.NDCG10, want)
	}
	if want := (0.5 + 0 + 1) / 3; !near(res.MRR10, want) {
		t.Errorf("MRR10 = %v, want %v", res.MRR10, want)
	}
	if want := (1 + 0 + 1) / 3.0; !near(res.Recall10, want) || !near(res.Recall100, want) {
		t.Errorf("Recall10/100 = %v/%v, want %v", res.Recall10, res.Recall100, want)
	}
	// cutoff 1: only q4 hits.
	if got := res.At[1]; !near(got.NDCG, 1.0/3) || !near(got.MRR, 1.0/3) || !near(got.Recall, 1.0/3) {
		t.Errorf("At[1] = %+v, want all 1/3", got)
	}
	if len(res.At) != 3 {
		t.Errorf("cutoffs = %v, want 1, 10, 100", res.At)
	}
	ids := []string{}
	for _, pq := range res.PerQuery {
		ids = append(ids, pq.ID)
	}
	if !reflect.DeepEqual(ids, []string{"q1", "q2", "q4"}) {
		t.Errorf("per-query ids = %v", ids)
	}
	if res.PerQuery[1].InRun || !res.PerQuery[0].InRun {
		t.Errorf("InRun flags wrong: %+v", res.PerQuery)
	}

	empty := Evaluate(Qrels{}, run)
	if empty.Queries != 0 || empty.NDCG10 != 0 || math.IsNaN(empty.MRR10) {
		t.Errorf("empty qrels: %+v", empty)
	}
}

func TestReadQrels(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Qrels
		wantErr string
	}{
		{"trec", "q1 0 d1 1\nq1 0 d2 0\n\nq2 0 d9 2", Qrels{"q1": {"d1": 1, "d2": 0}, "q2": {"d9": 2}}, ""},
		{"beir with header", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n", Qrels{"q1": {"d1": 1}, "q2": {"d2": 1}}, ""},
		{"bom and crlf", "\uFEFFq1 0 d1 1\r\nq1 0 d2 -1\r\n", Qrels{"q1": {"d1": 1, "d2": -1}}, ""},
		{"later grade wins", "q1 0 d1 1\nq1 0 d1 3\n", Qrels{"q1": {"d1": 3}}, ""},
		{"empty", "", Qrels{}, ""},
		{"bad grade after header", "q1 0 d1 1\nq1 0 d2 x\n", nil, "line 2: relevance grade \"x\""},
		{"wrong field count", "q1 d1\n", nil, "line 1: want 4 fields"},
		{"float grade", "q1 0 d1 0.5\n", nil, "line 1: relevance grade \"0.5\" is not an integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadQrels(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestReadRun(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Run
		wantErr string
	}{
		{"basic", "q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 -1e3 bm25\nq2 Q0 d1 9 0 bm25\n",
			Run{"q1": {"d1": 2.5, "d2": -1000}, "q2": {"d1": 0}}, ""},
		{"tabs and blank lines", "\n q1\tQ0\td1\t1\t7\tx \n\n", Run{"q1": {"d1": 7}}, ""},
		{"duplicate doc", "q1 Q0 d1 1 2 t\nq1 Q0 d1 2 1 t\n", nil, "line 2: document \"d1\" listed twice"},
		{"nan score", "q1 Q0 d1 1 NaN t\n", nil, "line 1: score \"NaN\""},
		{"bad score", "q1 Q0 d1 1 high t\n", nil, "line 1: score \"high\""},
		{"five fields", "q1 Q0 d1 1 2\n", nil, "want 6 fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadRun(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestReadLongLine(t *testing.T) {
	_, err := ReadRun(strings.NewReader(strings.Repeat("x", maxLine+10)))
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("err = %v, want a too-long-line error", err)
	}
}

func TestOpenRunGzipAndPlain(t *testing.T) {
	dir := t.TempDir()
	text := "q1 Q0 d1 1 3 t\nq1 Q0 d2 2 1 t\n"
	plain := filepath.Join(dir, "run.trec")
	if err := os.WriteFile(plain, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(text))
	zw.Close()
	gz := filepath.Join(dir, "run.trec.gz")
	if err := os.WriteFile(gz, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want := Run{"q1": {"d1": 3, "d2": 1}}
	for _, p := range []string{plain, gz} {
		got, err := OpenRun(p)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %v, want %v", p, got, want)
		}
	}
	if _, err := OpenRun(filepath.Join(dir, "absent.trec")); err == nil || !strings.Contains(err.Error(), "check the path") {
		t.Errorf("missing file err = %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.gz"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRun(filepath.Join(dir, "bad.gz")); err == nil || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("bad gzip err = %v", err)
	}
}

func TestRunFromRankingsAndWriteRun(t *testing.T) {
	rankings := map[string][]string{"q2": {"b", "a", "b", "c"}, "q1": {"z"}}
	run := RunFromRankings(rankings)
	if got := run.Ranking("q2"); !reflect.DeepEqual(got, []string{"b", "a", "c"}) {
		t.Errorf("Ranking(q2) = %v", got)
	}
	var buf bytes.Buffer
	if err := WriteRun(context.Background(), &buf, run, "my tag"); err != nil {
		t.Fatal(err)
	}
	want := "q1 Q0 z 1 1 run\nq2 Q0 b 1 4 run\nq2 Q0 a 2 3 run\nq2 Q0 c 3 1 run\n"
	if buf.String() != want {
		t.Errorf("WriteRun:\n%s\nwant:\n%s", buf.String(), want)
	}
	back, err := ReadRun(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, run) {
		t.Errorf("round trip = %v, want %v", back, run)
	}
}

func FuzzReadQrels(f *testing.F) {
	f.Add("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
	f.Add("q1 0 d1 1\nq1 0 d2 0\n")
	f.Add("\uFEFFq 0 d -3\r\n\n")
	f.Add("q1 d1\n")
	f.Fuzz(func(t *testing.T, in string) {
		q, err := ReadQrels(strings.NewReader(in))
		if err != nil {
			return
		}
		// Every parsed judgement must evaluate without panicking and give
		// metrics in [0, 1].
		run := Run{}
		for qid, docs := range q {
			run[qid] = map[string]float64{}
			for d := range docs {
				run[qid][d] = 1
			}
		}
		res := Evaluate(q, run, 1, 5)
		for k, s := range res.At {
			for _, v := range []float64{s.NDCG, s.MRR, s.Recall} {
				if math.IsNaN(v) || v < 0 || v > 1+1e-9 {
					t.Fatalf("metric at %d out of range: %+v", k, s)
				}
			}
		}
	})
}

func FuzzReadRun(f *testing.F) {
	f.Add("q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 -1e3 bm25\n")
	f.Add("q Q0 d 1 NaN t\n")
	f.Add("q Q0 d 1 +Inf t\nq Q0 e 1 -Inf t\n")
	f.Add("\n\n q\tQ0\td\t1\t0\tx")
	f.Fuzz(func(t *testing.T, in string) {
		run, err := ReadRun(strings.NewReader(in))
		if err != nil {
			return
		}
		// A parsed run survives a write/read round trip unchanged.
		var buf bytes.Buffer
		if err := WriteRun(context.Background(), &buf, run, "t"); err != nil {
			t.Fatal(err)
		}
		back, err := ReadRun(&buf)
		if err != nil {
			t.Fatalf("re-reading written run: %v\n%s", err, buf.String())
		}
		if !reflect.DeepEqual(back, run) {
			t.Fatalf("round trip changed the run:\n got %v\nwant %v", back, run)
		}
	})
}
