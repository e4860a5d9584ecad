package analysis

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ikawaha/kagome-dict/dict"
	"github.com/ikawaha/kagome/v2/tokenizer"

	"github.com/shirube/shirube/internal/mapped"
)

// sharedDatasets is /work/shared/datasets seen from this package directory.
const sharedDatasets = "../../../shared/datasets"

// realTexts returns Japanese and English texts from the shared datasets:
// JSQuAD paragraphs and questions, SciFact abstracts (max of each) and the
// law texts of law-html-ja; the test is skipped without them.
func realTexts(t *testing.T, max int) []string {
	t.Helper()
	var texts []string
	for _, f := range []string{"jsquad-valid/corpus.jsonl", "jsquad-valid/queries.jsonl", "scifact/corpus.jsonl"} {
		fh, err := os.Open(filepath.Join(sharedDatasets, f))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		n := 0
		for sc.Scan() && n < max {
			var rec struct{ Title, Text string }
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Text != "" {
				texts = append(texts, rec.Title+"\n"+rec.Text)
				n++
			}
		}
		fh.Close()
	}
	// Law texts (legal vocabulary, old-style kanji, numbering), in pieces.
	laws, _ := filepath.Glob(filepath.Join(sharedDatasets, "law-html-ja", "text", "*"))
	for _, f := range laws {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for piece := range strings.SplitSeq(string(b), "\n\n") {
			if piece != "" {
				texts = append(texts, piece)
			}
		}
	}
	if len(texts) == 0 {
		t.Skip("no datasets in", sharedDatasets)
	}
	return texts
}

// tokenView is everything the analyser reads of a token.
type tokenView struct {
	Surface          string
	Class            tokenizer.TokenClass
	ID               int
	POS0, POS1, Base string
	HasBase          bool
}

func tokensOf(a *Analyzer, text string) []tokenView {
	var out []tokenView
	for _, t := range a.tok.Analyze(Normalize(text), tokenizer.Search) {
		p0, p1, b, ok := a.features(t)
		out = append(out, tokenView{t.Surface, t.Class, t.ID, p0, p1, b, ok})
	}
	return out
}

// TestFlatDictMatchesEmbedded: the memory-mapped flat dictionary gives the
// same tokens, features and terms as ipa.Dict() on real texts.
func TestFlatDictMatchesEmbedded(t *testing.T) {
	texts := realTexts(t, 300)
	path := filepath.Join(t.TempDir(), "ipa.dict")
	first, err := newAnalyzer(DefaultOptions(), path)
	if err != nil {
		t.Fatal(err)
	}
	if first.feat != nil || first.DictionaryNote() != nil {
		t.Fatalf("first load: want the embedded dictionary and no note, got feat=%v note=%v", first.feat != nil, first.DictionaryNote())
	}
	mapped, err := newAnalyzer(DefaultOptions(), path)
	if err != nil {
		t.Fatal(err)
	}
	if mapped.feat == nil {
		t.Fatalf("second load did not use the flat file: %v", mapped.DictionaryNote())
	}
	ref, err := newAnalyzer(DefaultOptions(), "")
	if err != nil {
		t.Fatal(err)
	}
	if ref.feat != nil {
		t.Fatal("path \"\" must mean the embedded dictionary")
	}
	texts = append(texts, "行きました 美しかった 食べられない ｶﾀｶﾅ ＣＰＵ ⼈事 〆切 ヶ月 ゔぁ 𠮷野家 ﾟ", "")
	tokens := 0
	for _, text := range texts {
		want, got := tokensOf(ref, text), tokensOf(mapped, text)
		if !slices.Equal(got, want) {
			t.Fatalf("tokens differ on %.60q:\n got %v\nwant %v", text, got, want)
		}
		tokens += len(got)
		if w, g := ref.Terms(text), mapped.Terms(text); !slices.Equal(g, w) {
			t.Fatalf("terms differ on %.60q:\n got %q\nwant %q", text, g, w)
		}
	}
	if tokens < 10000 {
		t.Fatalf("only %d tokens compared", tokens)
	}
	t.Logf("%d texts, %d tokens identical", len(texts), tokens)
}

// TestFlatDictDamaged: a truncated, damaged or foreign file is refused with
// a clear note, the embedded dictionary is used (same terms), and the file
// is rewritten so the next load maps it again.
func TestFlatDictDamaged(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.dict")
	if _, err := newAnalyzer(Options{}, good); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	const text = "関西国際空港に行きました。美しい花が咲いている"
	want := []string{"関西", "国際", "空港", "行く", "美しい", "花", "咲く"}
	tests := []struct {
		name, note string
		data       []byte
	}{
		{"truncated", "damaged or truncated", b[:len(b)/2]},
		{"bit flipped", "damaged or truncated", flip(b, len(b)/3)},
		{"empty", "too short", nil},
		{"header only", "too short", b[:40]},
		{"wrong magic", "wrong magic", append([]byte("NOTADICT"), b[8:]...)},
		{"newer format", "format 2", withU32(b, 8, 2)},
		{"other dictionary version", "is for \"ipa v0.0.0\"", withSource(b, "ipa v0.0.0")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".dict")
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			a, err := newAnalyzer(Options{}, path)
			if err != nil {
				t.Fatal(err)
			}
			note := a.DictionaryNote()
			if a.feat != nil || note == nil || !strings.Contains(note.Error(), tt.note) || !strings.Contains(note.Error(), "rewrote the cache") {
				t.Fatalf("want fallback with a note containing %q, got feat=%v note=%v", tt.note, a.feat != nil, note)
			}
			if got := a.Terms(text); !slices.Equal(got, want) {
				t.Fatalf("fallback terms %q, want %q", got, want)
			}
			again, err := newAnalyzer(Options{}, path)
			if err != nil {
				t.Fatal(err)
			}
			if again.feat == nil || again.DictionaryNote() != nil {
				t.Fatalf("rewritten file not used: %v", again.DictionaryNote())
			}
			if got := again.Terms(text); !slices.Equal(got, want) {
				t.Fatalf("mapped terms %q, want %q", got, want)
			}
		})
	}
}

// TestFlatDictUnwritable: a cache that cannot be written is reported and
// the analyser still works from the embedded dictionary.
func TestFlatDictUnwritable(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := newAnalyzer(Options{}, filepath.Join(blocker, "sub", "ipa.dict"))
	if err != nil {
		t.Fatal(err)
	}
	if a.feat != nil || a.DictionaryNote() == nil || !strings.Contains(a.DictionaryNote().Error(), "each run loads the embedded dictionary") {
		t.Fatalf("want a note that the cache is not written, got %v", a.DictionaryNote())
	}
	if got := a.Terms("花が咲いた"); !slices.Equal(got, []string{"花", "咲く"}) {
		t.Fatalf("terms %q", got)
	}
}

func flip(b []byte, i int) []byte {
	c := slices.Clone(b)
	c[i] ^= 0x40
	return c
}

func withU32(b []byte, at int, v uint32) []byte {
	c := slices.Clone(b)
	c[at], c[at+1], c[at+2], c[at+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	return fixCRC(c)
}

func withSource(b []byte, src string) []byte {
	c := slices.Clone(b)
	var s [sourceLen]byte
	copy(s[:], src)
	copy(c[16:], s[:])
	return fixCRC(c)
}

// fixCRC rewrites the trailing checksum so that the structure behind it is
// what gets checked.
func fixCRC(b []byte) []byte {
	if len(b) < 4 {
		return b
	}
	c := mapped.Aligned(b)
	sum := crcOf(c[:len(c)-4])
	c[len(c)-4], c[len(c)-3], c[len(c)-2], c[len(c)-1] = byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24)
	return c
}

// tinyDict is a hand-made dictionary of a few words, small enough to seed
// the fuzzer.
func tinyDict(t testing.TB) *dict.Dict {
	keys := []string{"花", "咲く", "行く"}
	slices.Sort(keys)
	idx, err := dict.BuildIndexTable(keys)
	if err != nil {
		t.Fatal(err)
	}
	cat := make(dict.CharCategory, 0x3100)
	for r := 0x3041; r < 0x3097; r++ {
		cat[r] = 1
	}
	return &dict.Dict{
		Morphs:       dict.Morphs{{LeftID: 1, RightID: 1, Weight: 100}, {LeftID: 1, RightID: 0, Weight: 200}, {LeftID: 0, RightID: 1, Weight: 50}},
		POSTable:     dict.POSTable{NameList: []string{"", "名詞", "動詞", "一般", "自立"}, POSs: []dict.POS{{1, 3}, {2, 4}, {2, 4}}},
		ContentsMeta: dict.ContentsMeta{dict.BaseFormIndex: 2},
		Contents:     dict.Contents{{keys[0]}, {keys[1]}, {keys[2]}},
		Connection:   dict.ConnectionTable{Row: 2, Col: 2, Vec: []int16{0, 10, -10, 5}},
		Index:        idx,
		CharClass:    []string{"DEFAULT", "HIRAGANA"},
		CharCategory: cat,
		InvokeList:   []bool{true, false},
		GroupList:    []bool{true, true},
		UnkDict: dict.UnkDict{
			Morphs:       dict.Morphs{{LeftID: 0, RightID: 0, Weight: 3000}, {LeftID: 1, RightID: 1, Weight: 3000}},
			Index:        map[int32]int32{0: 0, 1: 1},
			IndexDup:     map[int32]int32{0: 0},
			ContentsMeta: dict.ContentsMeta{dict.POSHierarchy: 1},
			Contents:     dict.Contents{{"名詞", "一般"}, {"名詞", "一般"}},
		},
	}
}

// TestFlatDictTiny round-trips a hand-made dictionary through the flat
// format and tokenizes with both.
func TestFlatDictTiny(t *testing.T) {
	d := tinyDict(t)
	b, err := encodeFlat(d, "tiny")
	if err != nil {
		t.Fatal(err)
	}
	got, feat, err := decodeFlat(&mapped.File{Data: mapped.Aligned(b)}, "tiny")
	if err != nil {
		t.Fatal(err)
	}
	ref := &Analyzer{tok: mustTokenizer(t, d)}
	flat := &Analyzer{tok: mustTokenizer(t, got), feat: feat}
	for _, text := range []string{"花", "咲く花", "行くあ花ぃ", "漢字"} {
		if w, g := tokensOf(ref, text), tokensOf(flat, text); !slices.Equal(g, w) {
			t.Errorf("%q: got %v, want %v", text, g, w)
		}
	}
	if _, _, err := decodeFlat(&mapped.File{Data: mapped.Aligned(b)}, "other"); err == nil || !strings.Contains(err.Error(), `is for "tiny"`) {
		t.Errorf("foreign source accepted: %v", err)
	}
}

func mustTokenizer(t testing.TB, d *dict.Dict) *tokenizer.Tokenizer {
	tok, err := tokenizer.New(d, tokenizer.OmitBosEos())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// FuzzDecodeFlat feeds the flat dictionary parser arbitrary files (with a
// correct checksum, so the structure checks behind it are reached): it must
// refuse or accept, never panic, and an accepted dictionary must be
// consistent enough to look up every morph's features.
func FuzzDecodeFlat(f *testing.F) {
	b, err := encodeFlat(tinyDict(f), "tiny")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add([]byte(flatMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, feat, err := decodeFlat(&mapped.File{Data: fixCRC(data)}, "tiny")
		if err != nil {
			return
		}
		for i := range d.Morphs {
			feat.at(i)
			_ = d.Connection.At(int(d.Morphs[i].RightID), int(d.Morphs[i].LeftID))
		}
	})
}
