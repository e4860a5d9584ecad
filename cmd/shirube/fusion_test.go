package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// The BM25 weight: chosen per query unless set by flag or environment, and
// reported by search --json, status and the audit log.
func TestBM25WeightDefaultAndOverrides(t *testing.T) {
	fixture := indexedFixture(t)
	const q = "バックアップからの復旧手順"
	search := func(t *testing.T, args ...string) searchJSON {
		t.Helper()
		out := mustRun(t, append([]string{"search", "--json", q}, args...)...)
		var r searchJSON
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("search --json: %v\n%s", err, out)
		}
		if len(r.Results) == 0 || r.Query != q {
			t.Fatalf("search --json: %+v", r)
		}
		return r
	}
	tests := []struct {
		name     string
		env      string // SHIRUBE_BM25_WEIGHT
		args     []string
		auto     bool
		weight   float64
		status   string
		auditLog bool
	}{
		// Every word of the question is in the best BM25 passage of the
		// demo corpus: the default searches with BM25 alone.
		{"default", "", nil, true, 1, "auto per query", true},
		{"flag", "", []string{"--bm25-weight", "0.6"}, false, 0.6, "", false},
		{"environment", "0.7", nil, false, 0.7, "0.7 (set)", true},
		{"flag beats environment", "0.7", []string{"--bm25-weight", "0.3"}, false, 0.3, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := workspace(t, fixture)
			t.Setenv("SHIRUBE_BM25_WEIGHT", tt.env)
			r := search(t, tt.args...)
			if r.AutoWeight != tt.auto || r.BM25Weight != tt.weight {
				t.Errorf("search --json: bm25_weight %v auto %v, want %v auto %v", r.BM25Weight, r.AutoWeight, tt.weight, tt.auto)
			}
			if tt.status != "" {
				var st map[string]any
				if err := json.Unmarshal([]byte(mustRun(t, "status", "--json")), &st); err != nil {
					t.Fatal(err)
				}
				if s, _ := st["bm25_weight"].(string); !strings.Contains(s, tt.status) {
					t.Errorf("status bm25_weight %q, want %q in it", s, tt.status)
				}
			}
			if tt.auditLog {
				mustRun(t, append([]string{"ask", q + "は？"}, tt.args...)...)
				lines := auditLines(t, filepath.Join(ws, "logs"))
				if len(lines) != 1 {
					t.Fatalf("%d audit lines", len(lines))
				}
				if sc := lines[0].SearchConfig; sc.BM25Weight != tt.weight || sc.VectorWeight != round2(1-tt.weight) {
					t.Errorf("audit search_config %+v, want bm25_weight %v", sc, tt.weight)
				}
			}
		})
	}
}

func round2(x float64) float64 { return float64(int(x*100+0.5)) / 100 }
