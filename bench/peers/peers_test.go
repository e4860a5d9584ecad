package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/eval/beir"
	"github.com/shirube/shirube/internal/eval/stats"
)

func TestHashEmbed(t *testing.T) {
	tests := []string{"梅雨は雨季の一種", "Cells divide.", "", "!!!", "a"}
	for _, text := range tests {
		v := hashEmbed(text, embedDims)
		if len(v) != embedDims {
			t.Fatalf("%q: len %d", text, len(v))
		}
		var norm float64
		for _, x := range v {
			norm += float64(x) * float64(x)
		}
		if math.Abs(norm-1) > 1e-5 {
			t.Errorf("%q: squared norm %v, want 1", text, norm)
		}
		w := hashEmbed(text, embedDims)
		for i := range v {
			if v[i] != w[i] {
				t.Fatalf("%q: not deterministic at %d", text, i)
			}
		}
	}
	// Same text modulo case and punctuation embeds identically.
	a, b := hashEmbed("Hello, World", 64), hashEmbed("hello world!", 64)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("normalisation differs at %d", i)
		}
	}
}

func TestDetectLang(t *testing.T) {
	tests := []struct{ in, want string }{
		{"梅雨（つゆ、ばいう）は、北海道と小笠原諸島を除く日本", "ja"},
		{"Microstructural development of human newborn cerebral white matter", "en"},
		{"", "en"},
		{"IL-6 と TNF-α の関係", "ja"},
	}
	for _, tt := range tests {
		if got := detectLang(tt.in); got != tt.want {
			t.Errorf("detectLang(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRatios(t *testing.T) {
	engines := []Engine{{Name: "peer"}, {Name: "mine", Baseline: "peer"}, {Name: "broken", Baseline: "peer"}}
	reports := []Report{
		{Name: "peer", IndexMs: Spread{200, 180, 220}, NDCG10: 0.5, Runs: []stats.Summary{{P50: 4, P95: 10}, {P50: 8, P95: 10}, {P50: 4, P95: 20}}},
		{Name: "mine", IndexMs: Spread{50, 45, 55}, NDCG10: 0.6, Runs: []stats.Summary{{P50: 1, P95: 5}, {P50: 1, P95: 1}, {P50: 2, P95: 2}}},
		{Name: "broken", Error: "boom"},
	}
	got := ratios(engines, reports)
	if len(got) != 1 {
		t.Fatalf("ratios = %+v, want one row", got)
	}
	r := got[0]
	// Per run p50 ratios 0.25, 0.125, 0.5; p95 0.5, 0.1, 0.1.
	if r.P50 != (Spread{0.25, 0.125, 0.5}) || r.P95 != (Spread{0.1, 0.1, 0.5}) {
		t.Errorf("latency ratios %+v / %+v", r.P50, r.P95)
	}
	if r.Index.Median != 0.25 || r.Index.Min != 45.0/220 || r.Index.Max != 55.0/180 || math.Abs(r.NDCGDelta-0.1) > 1e-12 {
		t.Errorf("ratio = %+v", r)
	}
}

func TestSpreadOf(t *testing.T) {
	for _, tt := range []struct {
		in   []float64
		want Spread
	}{
		{nil, Spread{}},
		{[]float64{3}, Spread{3, 3, 3}},
		{[]float64{5, 1, 3}, Spread{3, 1, 5}},
		{[]float64{4, 1, 2, 10}, Spread{3, 1, 10}},
	} {
		if got := spreadOf(tt.in); got != tt.want {
			t.Errorf("spreadOf(%v) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

// TestMeasureInterleaves checks the order of work: setup once, every
// engine built once per run, and the queries answered query by query with
// the engines interleaved in a rotating order.
func TestMeasureInterleaves(t *testing.T) {
	var calls []string
	fake := func(name string) Engine {
		return Engine{Name: name, Kind: "lexical",
			Setup: func(context.Context) error { calls = append(calls, "setup "+name); return nil },
			Build: func(ctx context.Context, in *Input) (Searcher, func() error, error) {
				calls = append(calls, "build "+name)
				return func(ctx context.Context, i int) ([]Hit, error) {
					calls = append(calls, fmt.Sprintf("%s q%d", name, i))
					return []Hit{{ID: "d1", Score: 1}}, nil
				}, nil, nil
			}}
	}
	in := &Input{Data: &beir.Dataset{Qrels: map[string]map[string]int{"q0": {"d1": 1}}}, Queries: []beir.Query{{ID: "q0"}, {ID: "q1"}, {ID: "q2"}}}
	reps, err := measureAll(context.Background(), []Engine{fake("a"), fake("b")}, in, 3, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	var timed []string
	setups, builds := 0, 0
	for _, c := range calls {
		switch {
		case strings.HasPrefix(c, "setup"):
			setups++
		case strings.HasPrefix(c, "build"):
			builds++
		}
	}
	if setups != 2 || builds != 6 {
		t.Errorf("%d setups, %d builds; want 2 (once per engine), 6 (per engine and run)", setups, builds)
	}
	// The timed part of run 1: after the two builds and 2×3 warm-up queries.
	start := 0
	for i, c := range calls {
		if c == "build b" {
			start = i + 1 + 3 // b's warm-up follows its build
			break
		}
	}
	timed = calls[start : start+6]
	want := []string{"a q0", "b q0", "b q1", "a q1", "a q2", "b q2"}
	if strings.Join(timed, ",") != strings.Join(want, ",") {
		t.Errorf("run 1 timed order %v, want %v (interleaved, rotating)", timed, want)
	}
	for _, r := range reps {
		if r.Error != "" || len(r.Runs) != 3 || r.Runs[0].N != 3 || r.SetupMs <= 0 {
			t.Errorf("report %+v", r)
		}
		if r.NDCG10 != 1 {
			t.Errorf("%s: nDCG@10 %v, want 1", r.Name, r.NDCG10)
		}
	}
}

func TestSelectEngines(t *testing.T) {
	all := []Engine{{Name: "a"}, {Name: "b"}}
	if got, _ := selectEngines(all, ""); len(got) != 2 {
		t.Errorf("empty list kept %d engines", len(got))
	}
	if got, _ := selectEngines(all, " b "); len(got) != 1 || got[0].Name != "b" {
		t.Errorf("got %+v", got)
	}
	if _, err := selectEngines(all, "c"); err == nil || !strings.Contains(err.Error(), "have a, b") {
		t.Errorf("err = %v", err)
	}
}

// TestRunTiny runs both peers end to end on a four-document dataset where
// each query's words occur in exactly one document, so BM25 must rank it
// first.
func TestRunTiny(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "qrels"), 0o755)
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("corpus.jsonl", `{"_id":"d1","title":"Apples","text":"apples are red fruit"}
{"_id":"d2","title":"Ocean","text":"whales swim in the ocean"}
{"_id":"d3","title":"Rocks","text":"granite is an igneous rock"}
{"_id":"d4","title":"Stars","text":"stars burn hydrogen"}
`)
	write("queries.jsonl", `{"_id":"q1","text":"red apples"}
{"_id":"q2","text":"whales ocean"}
`)
	write("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
	var out, errs bytes.Buffer
	if err := run(context.Background(), []string{"--dir", dir, "--k", "3"}, &out, &errs); err != nil {
		t.Fatalf("run: %v\n%s", err, errs.String())
	}
	var res Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("decode %s: %v", out.String(), err)
	}
	if res.Docs != 4 || res.Queries != 2 || res.Lang != "en" || len(res.Engines) != 4 || res.Runs != 3 {
		t.Fatalf("result header = %+v", res)
	}
	for _, e := range res.Engines {
		if e.Error != "" {
			t.Errorf("%s: %s", e.Name, e.Error)
		}
		if len(e.Runs) != 3 || e.Runs[0].N != 2 {
			t.Errorf("%s: runs %+v, want 3 of 2 timed queries", e.Name, e.Runs)
		}
		if (e.Name == "shirube-bm25") != (e.SetupMs > 0) {
			t.Errorf("%s: setup %v ms; only shirube-bm25 has a one-off setup", e.Name, e.SetupMs)
		}
	}
	if bm := res.Engines[0]; bm.Name != "bleve-bm25" || bm.NDCG10 != 1 || bm.MRR10 != 1 {
		t.Errorf("bleve on a trivially separable set: %+v", bm)
	}
	if len(res.Ratios) != 2 || res.Machine.CPUs <= 0 || !strings.Contains(res.MachineLine, "(lscpu)") {
		t.Errorf("ratios %+v, machine %q", res.Ratios, res.MachineLine)
	}
	if err := run(context.Background(), []string{"--dir", dir, "--engines", "nope"}, &out, &errs); err == nil {
		t.Error("unknown engine accepted")
	}
	if err := run(context.Background(), []string{}, &out, &errs); err == nil || !strings.Contains(err.Error(), "--dir is required") {
		t.Errorf("missing --dir: %v", err)
	}
}
