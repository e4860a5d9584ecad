package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		{Name: "peer", IndexMs: 200, NDCG10: 0.5, Query: stats.Summary{P50: 4, P95: 10}},
		{Name: "mine", IndexMs: 50, NDCG10: 0.6, Query: stats.Summary{P50: 1, P95: 5}},
		{Name: "broken", Error: "boom"},
	}
	got := ratios(engines, reports)
	if len(got) != 1 {
		t.Fatalf("ratios = %+v, want one row", got)
	}
	r := got[0]
	if r.Index != 0.25 || r.P50 != 0.25 || r.P95 != 0.5 || math.Abs(r.NDCGDelta-0.1) > 1e-12 {
		t.Errorf("ratio = %+v", r)
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
	if res.Docs != 4 || res.Queries != 2 || res.Lang != "en" || len(res.Engines) != 2 {
		t.Fatalf("result header = %+v", res)
	}
	for _, e := range res.Engines {
		if e.Error != "" {
			t.Errorf("%s: %s", e.Name, e.Error)
		}
		if e.Query.N != 2 {
			t.Errorf("%s: %d timed queries, want 2", e.Name, e.Query.N)
		}
	}
	if bm := res.Engines[0]; bm.Name != "bleve-bm25" || bm.NDCG10 != 1 || bm.MRR10 != 1 {
		t.Errorf("bleve on a trivially separable set: %+v", bm)
	}
	if err := run(context.Background(), []string{"--dir", dir, "--engines", "nope"}, &out, &errs); err == nil {
		t.Error("unknown engine accepted")
	}
	if err := run(context.Background(), []string{}, &out, &errs); err == nil || !strings.Contains(err.Error(), "--dir is required") {
		t.Errorf("missing --dir: %v", err)
	}
}
