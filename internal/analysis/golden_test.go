package analysis_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
)

var updateTermsGolden = flag.Bool("update-terms", false, "rewrite testdata/terms.golden from the current Terms")

// termsGoldenFile holds one line per text: "<set> <index> <hash of Terms>".
const termsGoldenFile = "testdata/terms.golden"

// goldenTexts are the texts whose Terms are pinned: every JSQuAD question,
// 400 JSQuAD paragraphs, every SciFact query and 200 SciFact abstracts,
// plus hand-made texts that need normalising. Sets whose dataset is missing
// are skipped.
func goldenTexts(t *testing.T) map[string][]string {
	t.Helper()
	sets := map[string][]string{
		"hand": {
			"", " ", "ＡＢＣ　ｶﾀｶﾅ ⼈間", "Ｓｅｃｕｒｉｔｙ インシデント対応 ⼈",
			"don't stop the cell's growth", "1945年にCPUの性能が5倍", "①②③ ㍻ ｱｲｳｴｵ",
			"東京都の関西国際空港から、走った。美しい花が咲いている。",
			"e\u0301cole café ＣＡＦÉ", "\xff\xfe壊れた\xc3バイト", "ヴァイオリンとﾊﾞｲｵﾘﾝ",
			"研究者たちは2024年に新しい手法を開発した。", "ABC-123_x.y ｚ",
		},
	}
	for _, name := range []string{"jsquad-valid", "scifact"} {
		dir := filepath.Join(datasets, name)
		if _, err := os.Stat(dir); err != nil {
			t.Logf("dataset %s not available: skipped", name)
			continue
		}
		ds := loadBEIR(t, name)
		ids := make([]string, 0, len(ds.queries))
		for id := range ds.queries {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		qs := make([]string, len(ids))
		for i, id := range ids {
			qs[i] = ds.queries[id]
		}
		sets[name+"/queries"] = qs
		n := 400
		if name == "scifact" {
			n = 200
		}
		// Every k-th document, to spread over the corpus.
		var docs []string
		for i := 0; i < len(ds.docs) && len(docs) < n; i += max(1, len(ds.docs)/n) {
			docs = append(docs, ds.docs[i])
		}
		sets[name+"/docs"] = docs
	}
	return sets
}

func termsHash(ts []string) string {
	h := sha256.New()
	for _, s := range ts {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// TestTermsGolden pins the output of Terms (default options and words only)
// on real text: any speed-up of the analyser must leave every term, its
// order and its count unchanged. Regenerate with -update-terms only when a
// change of the terms is intended.
func TestTermsGolden(t *testing.T) {
	sets := goldenTexts(t)
	opts := []struct {
		name string
		opt  analysis.Options
	}{
		{"default", analysis.DefaultOptions()},
		{"words", analysis.Options{}},
		{"tri-keep-nostem", analysis.Options{CharNGram: 3, KeepStopwords: true, NoStem: true}},
	}
	got := map[string]string{}
	var keys []string
	for _, o := range opts {
		a, err := analysis.New(o.opt)
		if err != nil {
			t.Fatal(err)
		}
		for set, texts := range sets {
			for i, s := range texts {
				k := fmt.Sprintf("%s %s %d", o.name, set, i)
				got[k] = termsHash(a.Terms(s))
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	if *updateTermsGolden {
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "%s %s\n", k, got[k])
		}
		if err := os.WriteFile(termsGoldenFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(termsGoldenFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	checked, bad := 0, 0
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		k, want := line[:i], line[i+1:]
		h, ok := got[k]
		if !ok {
			continue // dataset not available here
		}
		checked++
		if h != want {
			bad++
			if bad <= 10 {
				t.Errorf("%s: Terms changed (hash %s, golden %s)", k, h, want)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if bad > 0 {
		t.Errorf("%d of %d texts changed their terms", bad, checked)
	}
	if checked < len(got) {
		t.Errorf("%d texts have no golden line (run with -update-terms if the sets changed on purpose)", len(got)-checked)
	}
	t.Logf("%d texts checked", checked)
}
