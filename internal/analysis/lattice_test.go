package analysis

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/ikawaha/kagome-dict/dict"
	"github.com/ikawaha/kagome/v2/tokenizer"
)

// latticeTokens is the best path of the analyser's lattice as
// "class/id/surface" strings.
func latticeTokens(d *dict.Dict, la *lattice, text string) []string {
	var out []string
	for _, i := range la.bestPath(d, text) {
		n := la.nodes[i]
		out = append(out, fmt.Sprintf("%d/%d/%s", n.class, n.id, text[n.lo:n.hi]))
	}
	return out
}

// kagomeTokens is the same for kagome's tokenizer in search mode.
func kagomeTokens(tok *tokenizer.Tokenizer, text string) []string {
	var out []string
	for _, t := range tok.Analyze(text, tokenizer.Search) {
		out = append(out, fmt.Sprintf("%d/%d/%s", t.Class, t.ID, t.Surface))
	}
	return out
}

// TestLatticeMatchesKagome: the analyser's lattice finds the same tokens
// (class, morph id, surface, order) as kagome's tokenizer in search mode,
// on whole real texts (not only Japanese runs: every character class and
// the unknown-word paths are reached), on each sentence-sized piece, and on
// edge cases; one lattice is reused throughout, as the pool does.
func TestLatticeMatchesKagome(t *testing.T) {
	a, err := New(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if a.dict == nil {
		t.Skip("flat dictionary not in use:", a.DictionaryNote())
	}
	texts := []string{"", "a", "ー", "々々", "\x00東京", "東京\x00", "ｱｲｳ", "🙂絵文字🙂", "\uFFFD日本",
		strings.Repeat("あ", 1500), strings.Repeat("漢", 40), "関西国際空港で買った最新型のスマートフォン"}
	for _, s := range realTexts(t, 300) {
		n := Normalize(s)
		texts = append(texts, n)
		texts = append(texts, strings.FieldsFunc(n, func(r rune) bool { return r == '。' || r == '\n' })...)
	}
	la := new(lattice)
	bad := 0
	for _, s := range texts {
		want, got := kagomeTokens(a.tok, s), latticeTokens(a.dict, la, s)
		if !slices.Equal(got, want) {
			bad++
			if bad <= 5 {
				t.Errorf("%.60q:\n got %v\nwant %v", s, got, want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d texts differ", bad, len(texts))
	}
}

// TestLatticeTinyDict runs the comparison on a hand-made dictionary, where
// unknown words, duplicates and grouping are frequent.
func TestLatticeTinyDict(t *testing.T) {
	d := tinyDict(t)
	tok := mustTokenizer(t, d)
	la := new(lattice)
	for _, text := range []string{"花", "咲く花", "行くあ花ぃ", "漢字", "", "abc花123", "花花花花花花花花花"} {
		if want, got := kagomeTokens(tok, text), latticeTokens(d, la, text); !slices.Equal(got, want) {
			t.Errorf("%q: got %v, want %v", text, got, want)
		}
	}
}

// TestIsJapaneseFastPath: isJapanese agrees with its definition on every
// code point.
func TestIsJapaneseFastPath(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := r >= 0x3000 && (r == 'ー' || r == '々' || r == '〆' || r == 'ヶ' ||
			unicode.In(r, unicode.Hiragana, unicode.Katakana, unicode.Han) && r != '・')
		if got := isJapanese(r); got != want {
			t.Fatalf("isJapanese(%U) = %v, want %v", r, got, want)
		}
	}
}
