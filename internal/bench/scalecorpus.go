package bench

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/document"
)

// CorpusFile is one file of a scale corpus, in the order of its index.tsv.
type CorpusFile struct {
	Name  string // file name under text/, e.g. "<hash>.txt"
	Path  string // path on disk
	Title string // the law's name without its promulgation date
}

// ReadCorpus lists a corpus laid out as law-corpus-ja is: index.tsv (hash,
// name, category, tab-separated) and text/<hash>.txt. Files appear in the
// order of index.tsv; a hash listed twice is kept once, and a listed file
// that is missing is left out with a note.
func ReadCorpus(dir string) ([]CorpusFile, []string, error) {
	f, err := os.Open(filepath.Join(dir, "index.tsv"))
	if err != nil {
		return nil, nil, fmt.Errorf("scale corpus: %w — the corpus must be a folder with index.tsv and text/<hash>.txt (law-corpus-ja unpacked)", err)
	}
	defer f.Close()
	var files []CorpusFile
	var notes []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for line := 1; sc.Scan(); line++ {
		cols := strings.Split(sc.Text(), "\t")
		hash := strings.TrimSpace(cols[0])
		if hash == "" || seen[hash] {
			continue
		}
		seen[hash] = true
		cf := CorpusFile{Name: hash + ".txt", Path: filepath.Join(dir, "text", hash+".txt")}
		if len(cols) > 1 {
			cf.Title = lawTitle(cols[1])
		}
		if _, err := os.Stat(cf.Path); err != nil {
			notes = append(notes, fmt.Sprintf("index.tsv line %d: %s missing, left out", line, cf.Name))
			continue
		}
		files = append(files, cf)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("scale corpus: read index.tsv: %w", err)
	}
	if len(files) == 0 {
		return nil, notes, fmt.Errorf("scale corpus: %s lists no file present under text/", filepath.Join(dir, "index.tsv"))
	}
	return files, notes, nil
}

// lawTitle drops the trailing promulgation parenthesis of a law's name:
// "宇宙基本法（平成二十年五月二十八日法律第四十三号）" → "宇宙基本法".
func lawTitle(name string) string {
	name = strings.TrimSpace(name)
	if strings.HasSuffix(name, "）") {
		if i := strings.LastIndex(name, "（"); i > 0 {
			return name[:i]
		}
	}
	return name
}

// CountChunks extracts and chunks every file as `shirube index` does (legal
// structure, chunk options copt) without analysing or writing anything,
// and returns the number of chunks of each. A file that cannot be read
// counts 0 chunks (Build skips it too).
func CountChunks(ctx context.Context, files []CorpusFile, copt chunk.Options, workers int) ([]int, error) {
	counts := make([]int, len(files))
	ex := document.NewExtractor(document.Options{})
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				counts[i] = countFile(ctx, ex, files[i], copt)
			}
		}()
	}
feed:
	for i := range files {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return counts, ctx.Err()
}

func countFile(ctx context.Context, ex *document.Extractor, f CorpusFile, copt chunk.Options) int {
	info, err := os.Stat(f.Path)
	if err != nil {
		return 0
	}
	doc, err := ex.Extract(ctx, document.File{Path: f.Path, Rel: f.Name, Stem: strings.TrimSuffix(f.Name, ".txt"), Kind: document.Text, Size: info.Size(), ModTime: info.ModTime()})
	if err != nil {
		return 0
	}
	n := 0
	for _, p := range doc.Pages {
		pieces, err := chunk.Split(p.Text, copt)
		if err != nil {
			return 0
		}
		n += len(pieces)
	}
	return n
}

// ParsePoints reads a comma-separated list of chunk counts for the curve:
// "10000,50000,100000,all" ("10k" = 10000; "all" = the whole corpus, 0).
// The result is sorted, without duplicates.
func ParsePoints(spec string) ([]int, error) {
	var out []int
	for _, item := range strings.Split(spec, ",") {
		item = strings.ToLower(strings.TrimSpace(item))
		if item == "" {
			continue
		}
		if item == "all" {
			out = append(out, 0)
			continue
		}
		mult := 1
		if s, ok := strings.CutSuffix(item, "k"); ok {
			item, mult = s, 1000
		}
		n, err := strconv.Atoi(strings.ReplaceAll(item, "_", ""))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("scale points: %q is not a positive chunk count or \"all\" (e.g. 10000,50000,100000,all)", item)
		}
		out = append(out, n*mult)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no scale points: give chunk counts, e.g. 10000,50000,100000,all")
	}
	// "all" (0) goes last.
	slices.SortFunc(out, func(a, b int) int {
		switch {
		case a == b:
			return 0
		case a == 0:
			return 1
		case b == 0:
			return -1
		}
		return a - b
	})
	return slices.Compact(out), nil
}

// CurvePoint is one point of the curve: the first Files files of the
// corpus, which hold Chunks chunks (as counted by CountChunks) for a
// requested Target (0 = the whole corpus).
type CurvePoint struct {
	Target int `json:"target_chunks"`
	Files  int `json:"files"`
	Chunks int `json:"counted_chunks"`
}

// SelectPoints picks, for every target, the shortest prefix of the corpus
// holding at least that many chunks (the whole corpus when it holds
// fewer). Targets that land on the same prefix are merged.
func SelectPoints(counts []int, targets []int) []CurvePoint {
	var out []CurvePoint
	for _, t := range targets {
		n, sum := 0, 0
		for n < len(counts) && (t == 0 || sum < t) {
			sum += counts[n]
			n++
		}
		if len(out) > 0 && out[len(out)-1].Files == n {
			continue
		}
		out = append(out, CurvePoint{Target: t, Files: n, Chunks: sum})
	}
	return out
}

// ScaleQuery is one query of the scale benchmark and where it was drawn.
type ScaleQuery struct {
	Text string `json:"text"`
	Kind string `json:"kind"` // "caption" or "sentence"
	File string `json:"file"`
}

// QuerySource is a document queries are drawn from.
type QuerySource struct {
	Name, Title, Text string
}

// DrawQueries draws up to n queries from the documents, deterministically
// for a seed, half from each kind:
//
//   - caption: an article caption line such as （目的） with the law's
//     name, "宇宙基本法の目的について" — how a user names an article;
//   - sentence: two to four consecutive clauses of a sentence of the
//     law, the 、 between them replaced by a space and the 。 dropped, at
//     most 60 characters — a query that reuses the law's words.
//
// No query occurs verbatim in the text it was drawn from, so none is a
// copy of an indexed chunk; documents are taken in the given order and
// candidates shuffled with the seed.
func DrawQueries(docs []QuerySource, n int, seed uint64) []ScaleQuery {
	var captions, sentences []ScaleQuery
	for _, d := range docs {
		for _, line := range strings.Split(d.Text, "\n") {
			line = strings.Trim(line, " 　\t\r")
			if c, ok := captionOf(line); ok && d.Title != "" {
				q := d.Title + "の" + c + "について"
				if !strings.Contains(d.Text, q) {
					captions = append(captions, ScaleQuery{Text: q, Kind: "caption", File: d.Name})
				}
				continue
			}
			for _, s := range strings.Split(line, "。") {
				if q, ok := clauseQuery(s); ok && !strings.Contains(d.Text, q) {
					sentences = append(sentences, ScaleQuery{Text: q, Kind: "sentence", File: d.Name})
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	r.Shuffle(len(captions), func(i, j int) { captions[i], captions[j] = captions[j], captions[i] })
	r.Shuffle(len(sentences), func(i, j int) { sentences[i], sentences[j] = sentences[j], sentences[i] })
	// Alternate the kinds while both last, then fill from the other.
	out := make([]ScaleQuery, 0, n)
	for i := 0; len(out) < n && (i < len(captions) || i < len(sentences)); i++ {
		if i < len(captions) {
			out = append(out, captions[i])
		}
		if i < len(sentences) && len(out) < n {
			out = append(out, sentences[i])
		}
	}
	return out
}

// captionOf returns the inside of an article caption line "（目的）".
func captionOf(line string) (string, bool) {
	inner, ok := strings.CutPrefix(line, "（")
	if !ok {
		return "", false
	}
	inner, ok = strings.CutSuffix(inner, "）")
	if !ok || strings.ContainsAny(inner, "（）") {
		return "", false
	}
	if n := utf8.RuneCountInString(inner); n < 2 || n > 30 {
		return "", false
	}
	return inner, true
}

// clauseQuery makes a sentence query: the sentence's first two to four
// clauses (split at 、) joined by spaces, within 12–60 characters; false
// when the sentence has a single clause.
func clauseQuery(sentence string) (string, bool) {
	clauses := strings.Split(strings.TrimSpace(sentence), "、")
	if len(clauses) < 2 {
		return "", false
	}
	var parts []string
	size := 0
	for _, c := range clauses {
		c = strings.TrimSpace(c)
		n := utf8.RuneCountInString(c)
		if c == "" || size+n > 60 || len(parts) == 4 {
			break
		}
		parts = append(parts, c)
		size += n
	}
	if len(parts) < 2 || size < 12 {
		return "", false
	}
	return strings.Join(parts, " "), true
}
