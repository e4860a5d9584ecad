package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/llmtest"
)

const jsquadDir = "../../../shared/datasets/jsquad-valid"

// TestBenchCommands runs the quality benchmarks on the first JSQuAD
// questions through the CLI and checks what they print.
func TestBenchCommands(t *testing.T) {
	if _, err := os.Stat(jsquadDir); err != nil {
		t.Skip("dataset not present")
	}
	if testing.Short() {
		t.Skip("indexes the JSQuAD corpus three times")
	}
	offlineEnv(t)

	out := mustRun(t, "bench", "refusal", "--dir", jsquadDir, "--max-queries", "100")
	for _, want := range []string{"100 questions, top 4, threshold 0.40", "holdout paragraph (1.0 documents hidden per question)", "holdout article", "best balance:", "refused_or_correct"} {
		if !strings.Contains(out, want) {
			t.Errorf("bench refusal output lacks %q:\n%s", want, out)
		}
	}

	var legs struct {
		Queries    int     `json:"queries"`
		Both       int     `json:"top1_both"`
		BM25Only   int     `json:"top1_bm25_only"`
		VectorOnly int     `json:"top1_vector_only"`
		Neither    int     `json:"top1_neither"`
		BM25       float64 `json:"bm25_ndcg@10"`
		Oracle     float64 `json:"oracle_ndcg@10"`
	}
	out = mustRun(t, "bench", "beir", "--dir", jsquadDir, "--legs", "--max-queries", "100", "--json")
	if err := json.Unmarshal([]byte(out), &legs); err != nil {
		t.Fatalf("bench beir --legs --json: %v\n%s", err, out)
	}
	if legs.Queries != 100 || legs.Both+legs.BM25Only+legs.VectorOnly+legs.Neither != 100 || legs.Oracle < legs.BM25 || legs.BM25 < 0.8 {
		t.Errorf("legs report %+v", legs)
	}

	var ans struct {
		Questions int     `json:"questions"`
		Rate      float64 `json:"containment_rate"`
		Supported float64 `json:"answer_supported_rate"`
		Precision float64 `json:"citation_precision"`
	}
	out = mustRun(t, "bench", "answers", "--dir", jsquadDir, "--max-queries", "100", "--json")
	if err := json.Unmarshal([]byte(out), &ans); err != nil {
		t.Fatalf("bench answers --json: %v\n%s", err, out)
	}
	if ans.Questions != 100 || ans.Rate < 0.8 || ans.Supported != 1 || ans.Precision != 1 {
		t.Errorf("answers report %+v; want 100 questions, containment ≥ 0.8, every extractive claim supported by its citation", ans)
	}
}

// inventingAnswer is one statement from the demo runbooks and one the
// corpus never makes, both citing [1]; the fake OpenAI server of
// TestBenchAgentLLM answers every chat completion with it, with usage.
var inventingAnswer = llmtest.Reply{
	Text:         "根拠文書に沿って対応します [1]。\n- 作業の前に量子暗号装置の冷却ポンプを交換し、保守業者の署名を受け取る [1]。",
	Model:        "gpt-4o-mini",
	PromptTokens: 900, CompletionTokens: 40,
}

// TestBenchAgentLLM drives `shirube bench agent --generator llm` through
// openai-go against a fake server: the invented statement is caught by the
// verification step and lowers answer_supported_rate and citation_precision.
func TestBenchAgentLLM(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	workspace(t, indexedFixture(t))
	fake := llmtest.OpenAI(t, func(r llmtest.Request) llmtest.Reply {
		if rf, _ := r.Body["response_format"].(map[string]any); rf["type"] == "json_object" {
			// The claim re-check agrees: nothing is stated in the evidence.
			return llmtest.Reply{Text: `{"claims":[{"n":1,"supported":false},{"n":2,"supported":false}]}`}
		}
		return inventingAnswer
	})
	t.Setenv("OPENAI_API_KEY", "sk-test-0123456789")
	t.Setenv("OPENAI_API_BASE", fake.BaseURL())
	out, stderr, err := run(t, "", "bench", "agent", "--generator", "llm", "--profiles", "fast,balanced", "--questions", filepath.Join(repo, "eval", "eval_dataset.json"), "--json", "--records", "recs")
	if err != nil {
		t.Fatalf("bench agent: %v\n%s", err, stderr)
	}
	type record struct {
		Profile     string  `json:"profile"`
		Question    string  `json:"question"`
		RetrievalMs float64 `json:"retrieval_ms"`
		EndToEndMs  float64 `json:"end_to_end_ms"`
		Generator   string  `json:"generator"`
	}
	var reps []struct {
		Profile      string  `json:"profile"`
		Questions    int     `json:"questions"`
		Generator    string  `json:"generator"`
		Supported    float64 `json:"answer_supported_rate"`
		Precision    float64 `json:"citation_precision"`
		P95          float64 `json:"p95_latency_ms"`
		P95Retrieval float64 `json:"p95_retrieval_ms"`
		Adoption     *struct {
			Adopt  bool   `json:"adopt"`
			Reason string `json:"reason"`
		} `json:"adoption"`
		Records []record `json:"records"`
	}
	if err := json.Unmarshal([]byte(out), &reps); err != nil {
		t.Fatalf("bench agent --json: %v\n%s", err, out)
	}
	// Seed 003's protocol: fewer than 20 questions is warned about.
	if !strings.Contains(stderr, "experiment protocol asks for at least 20") {
		t.Errorf("no warning about the small question set:\n%s", stderr)
	}
	for _, r := range reps {
		if len(r.Records) != r.Questions {
			t.Errorf("%s: %d records for %d questions", r.Profile, len(r.Records), r.Questions)
		}
		// End to end includes retrieval, so it is never shorter.
		if r.P95 < r.P95Retrieval {
			t.Errorf("%s: p95 end to end %v < p95 retrieval %v", r.Profile, r.P95, r.P95Retrieval)
		}
		for _, rec := range r.Records {
			if rec.Profile != r.Profile || rec.Question == "" || rec.EndToEndMs < rec.RetrievalMs || rec.Generator != "llm:gpt-4o-mini" {
				t.Errorf("record %+v", rec)
			}
		}
		// The adoption verdict is given for balanced only; its answers are
		// unsupported, so it is not adopted.
		switch {
		case r.Profile == "balanced" && (r.Adoption == nil || r.Adoption.Adopt || !strings.Contains(r.Adoption.Reason, "answer_supported_rate 0.000 < 0.90")):
			t.Errorf("balanced adoption %+v; want do not adopt, with the reason", r.Adoption)
		case r.Profile != "balanced" && r.Adoption != nil:
			t.Errorf("%s has an adoption verdict", r.Profile)
		}
	}
	files, _ := filepath.Glob(filepath.Join("recs", "agent_records_*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("records files %v; want one", files)
	}
	data, _ := os.ReadFile(files[0])
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(reps) == 0 || len(lines) != 2*reps[0].Questions {
		t.Errorf("%d record lines; want one per question and profile", len(lines))
	}
	var first record
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Profile != "fast" {
		t.Errorf("first record %q: %v", lines[0], err)
	}
	// An answer and a claim re-check per question and profile.
	if len(reps) != 2 || fake.Calls() != 4*reps[0].Questions {
		t.Fatalf("%d reports, %d LLM requests: %s", len(reps), fake.Calls(), out)
	}
	for _, r := range reps {
		// Neither statement of the fake answer is in the runbooks.
		if r.Generator != "llm:gpt-4o-mini" || r.Supported != 0 || r.Precision != 0 {
			t.Errorf("%s: generator %q, answer_supported_rate %v, citation_precision %v; want llm, 0, 0", r.Profile, r.Generator, r.Supported, r.Precision)
		}
	}
}

// TestStatusZeroHit checks `shirube status`: the index summary, and the
// share of the audit log's questions its BM25 leg cannot match.
func TestStatusZeroHit(t *testing.T) {
	workspace(t, indexedFixture(t))
	var st struct {
		Documents int `json:"documents"`
		Chunks    int `json:"chunks"`
		Logged    *struct {
			Queries  int      `json:"queries"`
			ZeroHit  int      `json:"zero_hit"`
			Rate     float64  `json:"zero_hit_rate"`
			Examples []string `json:"zero_hit_examples"`
		} `json:"logged_queries"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Documents != 7 || st.Chunks == 0 || st.Logged != nil {
		t.Fatalf("fresh index status %+v: 7 documents, chunks, no logged questions", st)
	}
	mustRun(t, "ask", "バックアップからの復旧手順は？")
	mustRun(t, "ask", "バックアップからの復旧手順は？") // counted once
	mustRun(t, "ask", "zyxwv qwpfg")
	if err := json.Unmarshal([]byte(mustRun(t, "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Logged == nil || st.Logged.Queries != 2 || st.Logged.ZeroHit != 1 || st.Logged.Rate != 0.5 || len(st.Logged.Examples) != 1 || st.Logged.Examples[0] != "zyxwv qwpfg" {
		t.Errorf("logged queries %+v; want 2 distinct, 1 zero-hit (zyxwv qwpfg)", st.Logged)
	}
	if out := mustRun(t, "status"); !strings.Contains(out, "queries:    2 distinct in ./logs; BM25 matches nothing for 1 (50.0 %)") {
		t.Errorf("status text:\n%s", out)
	}
}

// TestBenchBEIROpenAIEmbedder runs `bench beir --embedder openai` against a
// fake embeddings endpoint: the vector leg is the remote model's, every
// text is embedded once (a second run reads the cache), and the sweep and
// the leg comparison both run on that index.
func TestBenchBEIROpenAIEmbedder(t *testing.T) {
	offlineEnv(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data", "qrels"), 0o755)
	files := map[string]string{
		"corpus.jsonl": `{"_id":"a","title":"猫","text":"猫は夜行性の動物で、暗い場所でもよく見える目を持つ。"}
{"_id":"b","title":"犬","text":"犬は嗅覚が非常に優れており、警察犬として活躍する。"}
{"_id":"c","title":"鳥","text":"渡り鳥は季節によって長い距離を移動する。"}
`,
		"queries.jsonl":  `{"_id":"q1","text":"暗いところで目が利く動物"}` + "\n" + `{"_id":"q2","text":"においをかぎ分ける能力"}` + "\n",
		"qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\ta\t1\nq2\tb\t1\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, "data", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A "semantic" fake: each text is mapped onto three concepts, so the
	// vector leg finds what the words alone do not (におい ~ 嗅覚).
	concepts := [][]string{{"猫", "夜行", "暗", "目"}, {"犬", "嗅覚", "におい", "かぎ"}, {"鳥", "渡り", "移動"}}
	fake := llmtest.Embeddings(t, func(s string) []float64 {
		v := make([]float64, len(concepts))
		for i, words := range concepts {
			for _, w := range words {
				if strings.Contains(s, w) {
					v[i]++
				}
			}
		}
		return v
	})
	t.Setenv("OPENAI_API_KEY", "sk-test-0123456789")
	t.Setenv("OPENAI_API_BASE", fake.BaseURL())
	cache := filepath.Join(dir, "cache")
	args := []string{"bench", "beir", "--dir", filepath.Join(dir, "data"), "--embedder", "openai", "--index", cache, "--json"}
	var reps []struct {
		Mode string  `json:"mode"`
		NDCG float64 `json:"ndcg@10"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, append(args, "--sweep", "vector,minmax:0.6")...)), &reps); err != nil {
		t.Fatal(err)
	}
	if len(reps) != 2 || reps[0].Mode != "vector" || reps[0].NDCG != 1 || reps[1].NDCG != 1 {
		t.Errorf("sweep with the remote embedder: %+v (the fake's concepts answer both queries)", reps)
	}
	embedded := 0
	for _, b := range fake.Batches() {
		embedded += len(b)
	}
	if embedded != 5 { // 3 documents, 2 queries
		t.Errorf("%d texts embedded, want 5", embedded)
	}
	// Again, comparing the legs: documents come from the cache.
	var legs struct {
		Vector float64 `json:"vector_ndcg@10"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, append(args, "--legs")...)), &legs); err != nil {
		t.Fatal(err)
	}
	embedded = 0
	for _, b := range fake.Batches() {
		embedded += len(b)
	}
	if legs.Vector != 1 || embedded != 5 {
		t.Errorf("second run: vector nDCG %v, %d texts embedded in all (want 5: documents and queries cached)", legs.Vector, embedded)
	}
	if _, err := os.Stat(filepath.Join(cache, "embed-cache.bin")); err != nil {
		t.Errorf("embedding cache: %v", err)
	}
}

// TestBenchScaleFlags: each bench command owns its --max-queries (scale's
// default 1000 used to be overwritten by a later command's 0 through a
// shared variable, so every query was timed), and the help says what runs.
func TestBenchScaleFlags(t *testing.T) {
	root := newRoot()
	for _, tt := range []struct {
		cmd, flag, want string
	}{
		{"scale", "max-queries", "1000"},
		{"scale", "points", "10000,50000,100000,all"},
		{"scale", "load-runs", "3"},
		{"answers", "max-queries", "0"},
		{"refusal", "max-queries", "0"},
	} {
		c, _, err := root.Find([]string{"bench", tt.cmd})
		if err != nil || c.Name() != tt.cmd {
			t.Fatalf("bench %s: %v", tt.cmd, err)
		}
		f := c.Flags().Lookup(tt.flag)
		if f == nil {
			t.Fatalf("bench %s has no --%s", tt.cmd, tt.flag)
		}
		if f.DefValue != tt.want || f.Value.String() != tt.want {
			t.Errorf("bench %s --%s: default %q, value %q; want %q", tt.cmd, tt.flag, f.DefValue, f.Value.String(), tt.want)
		}
	}
	out := mustRun(t, "bench", "scale", "--help")
	for _, want := range []string{"--corpus", "scale-child", "fresh child process", "peak RSS", "verbatim", "--max-queries"} {
		if !strings.Contains(out, want) {
			t.Errorf("bench scale --help lacks %q", want)
		}
	}
	if _, _, err := run(t, "", "bench", "scale", "--corpus", t.TempDir(), "--points", "lots"); err == nil || !strings.Contains(err.Error(), "--points") {
		t.Errorf("bad --points: %v", err)
	}
	if _, _, err := run(t, "", "bench", "scale", "--corpus", t.TempDir()); err == nil || !strings.Contains(err.Error(), "index.tsv") {
		t.Errorf("folder without index.tsv: %v", err)
	}
}

// TestBenchReplicate writes a replicated JSQuAD index that `search` opens.
func TestBenchReplicate(t *testing.T) {
	if _, err := os.Stat(jsquadDir); err != nil {
		t.Skip("dataset not present")
	}
	offlineEnv(t)
	dir := filepath.Join(t.TempDir(), "ix")
	out := mustRun(t, "bench", "replicate", "--dir", jsquadDir, "--chunks", "1500", "--out", dir)
	if !strings.Contains(out, "1500 chunks") {
		t.Fatalf("replicate printed %q", out)
	}
	got := mustRun(t, "search", "--index", dir, "--json", "梅雨")
	if !strings.Contains(got, "#1") && !strings.Contains(got, "#0") {
		t.Errorf("search on the replicated index found no copies:\n%s", got)
	}
}

// TestBenchAgentOfflineTable: offline, the text table of `bench agent`
// carries ambiguity_resolution_rate (seed 003's KPI list), and the adoption
// verdict is "undecided", not "adopt": extractive answers quote their
// evidence, so supported and citation precision are 1 by construction.
func TestBenchAgentOfflineTable(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	workspace(t, indexedFixture(t))
	out := mustRun(t, "bench", "agent", "--profiles", "fast,balanced", "--questions", filepath.Join(repo, "eval", "eval_dataset.json"), "--records", "recs")
	header, _, _ := strings.Cut(out, "\n")
	if !strings.Contains(header, "resolution") || !strings.Contains(out, "ambiguity_resolution_rate") {
		t.Errorf("the text table lacks ambiguity_resolution_rate:\n%s", out)
	}
	if !strings.Contains(out, "adoption of balanced: undecided (undecided: the extractive generator quotes its evidence") {
		t.Errorf("offline adoption verdict is not undecided:\n%s", out)
	}
}
