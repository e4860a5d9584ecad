// Package analysis turns text into index terms for lexical (BM25) search.
//
// The pipeline is the same for documents and queries, so that both sides
// meet in the same term space:
//
//  1. [Normalize]: Unicode NFKC (folds full-width ASCII, half-width katakana
//     and the Kangxi-radical code points such as U+2F08 that PDF extraction
//     produces), then lowercase.
//  2. The normalized text is cut into script runs. Runs of Japanese script
//     (Han, Hiragana, Katakana, the prolonged sound mark ー) go to the kagome
//     morphological analyzer with the IPA dictionary in search mode, which
//     additionally splits long compounds (関西国際空港 → 関西 国際 空港).
//     Particles (助詞), auxiliary verbs (助動詞), symbols (記号), fillers and
//     other function words are dropped; nouns, verbs and adjectives are kept,
//     verbs and adjectives in their dictionary (base) form.
//  3. Every other run of letters and digits is a Latin-style word: it is
//     lowercased, dropped if it is an English stopword (Lucene's classic
//     33-word list), and otherwise stemmed with the Snowball English stemmer
//     when it is pure ASCII.
//  4. Optionally ([Options.CharNGram]), character n-grams are added as extra
//     terms for every maximal run of letters and digits that contains
//     Japanese script ("1945年にCPUの" is one run), so numbers and Latin
//     words glued to Japanese text also meet partial matches ("5年", "uの").
//     Pure Latin text gets no n-grams. N-grams live in their own term space
//     (they carry the [NGramPrefix]), so a bigram never inflates the frequency
//     of an identical two-character word.
//
// # Choice of defaults
//
// The defaults were chosen by measuring BM25 (k1 1.2, b 0.75) nDCG@10 with
// TestRetrievalQuality in eval_test.go (go test -run RetrievalQuality -v):
//
//	JSQuAD valid, 4,442 queries            nDCG@10  zero-hit
//	  words only (CharNGram 0)              0.9413    0.02 %
//	  words + bigrams of Japanese runs only 0.9459    0
//	  words + bigrams of mixed runs (default) 0.9497  0
//	  words + trigrams                      0.9430    0
//	  bigrams only (no morphology)          0.9401    0
//	SciFact test, 300 queries
//	  default (no n-grams apply)            0.6889    0
//	  without stemming                      0.6645    0
//
// Adding adverbs, prefixes and adnominals, indexing surface forms instead of
// base forms, or sharing one term space between bigrams and words each moved
// JSQuAD by less than ±0.001.
package analysis

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/ikawaha/kagome-dict/dict"
	"github.com/ikawaha/kagome/v2/tokenizer"
	"github.com/kljensen/snowball/english"
	"golang.org/x/text/unicode/norm"
)

// NGramPrefix starts every character n-gram term, keeping n-grams apart from
// word terms. The analyzer never produces it otherwise: word terms consist of
// letters and digits only.
const NGramPrefix = "\u2063" // INVISIBLE SEPARATOR

// DefaultCharNGram is the n-gram length used by [DefaultOptions].
const DefaultCharNGram = 2

// Options configures an [Analyzer]. The zero value means words only.
type Options struct {
	// CharNGram, when ≥ 1, adds the character n-grams of length CharNGram of
	// every Japanese run as extra terms (runs shorter than that add the run
	// itself). 0 disables n-grams. Values above 4 are rejected.
	CharNGram int

	// KeepStopwords keeps English stopwords (useful for diagnostics).
	KeepStopwords bool

	// NoStem disables Snowball stemming of Latin words.
	NoStem bool
}

// DefaultOptions returns the options chosen by measurement: words plus
// character bigrams of Japanese runs.
func DefaultOptions() Options { return Options{CharNGram: DefaultCharNGram} }

// Analyzer converts text to terms. It holds one kagome tokenizer, built once,
// and is safe for concurrent use.
type Analyzer struct {
	opt Options
	tok *tokenizer.Tokenizer
	// feat reads the features of known morphs when the dictionary is the
	// flat one (flatdict.go); nil means kagome's own tables.
	feat *flatFeatures
	// dictNote says why the flat dictionary was not used, if worth telling.
	dictNote error
	// With the flat dictionary, Japanese runs go through the analyser's own
	// lattice (lattice.go) over dict, reused from lats; unkBase holds the
	// base form of each unknown-word morph ("" when it has none).
	dict    *dict.Dict
	lats    sync.Pool // *lattice
	unkBase []string
}

// New builds an Analyzer over the IPA dictionary. The dictionary comes from
// its flat form in the user's cache directory ([FlatDictPath]), memory-
// mapped in a few milliseconds; when that file is missing or unusable the
// embedded dictionary is decoded (~0.5 s) and the file written for the next
// process. Terms are the same either way.
func New(opt Options) (*Analyzer, error) {
	path, err := FlatDictPath()
	if err != nil || !littleEndian() {
		// No cache directory, or a machine whose byte order the flat
		// tables do not have: the embedded dictionary every time.
		path = ""
	}
	return newAnalyzer(opt, path)
}

// newAnalyzer builds an Analyzer whose flat dictionary is at path ("" for
// the embedded dictionary only).
func newAnalyzer(opt Options, path string) (*Analyzer, error) {
	if opt.CharNGram < 0 || opt.CharNGram > 4 {
		return nil, fmt.Errorf("analysis: CharNGram %d out of range 0..4", opt.CharNGram)
	}
	d, feat, note := loadDictionary(path)
	t, err := tokenizer.New(d, tokenizer.OmitBosEos())
	if err != nil {
		return nil, fmt.Errorf("analysis: kagome tokenizer: %w", err)
	}
	a := &Analyzer{opt: opt, tok: t, feat: feat, dictNote: note}
	if feat != nil {
		a.dict = d
		a.unkBase = unknownBaseForms(d)
		a.lats.New = func() any { return new(lattice) }
	}
	return a, nil
}

// unknownBaseForms returns the base form of every unknown-word morph of d
// as kagome's Token.BaseForm reports it ("" for none).
func unknownBaseForms(d *dict.Dict) []string {
	bases := make([]string, len(d.UnkDict.Morphs))
	i, ok := d.UnkDict.ContentsMeta[dict.BaseFormIndex]
	if !ok || i < 0 {
		return bases
	}
	for id := range bases {
		if id < len(d.UnkDict.Contents) && int(i) < len(d.UnkDict.Contents[id]) {
			bases[id] = d.UnkDict.Contents[id][i]
		}
	}
	return bases
}

// DictionaryNote says why the fast (memory-mapped) dictionary was not used
// and what was done instead — the cache file was damaged and rewritten, or
// could not be written — or nil when there is nothing to tell. Terms are
// correct either way; only the start-up time differs.
func (a *Analyzer) DictionaryNote() error { return a.dictNote }

// Options reports the options the Analyzer was built with.
func (a *Analyzer) Options() Options { return a.opt }

// Normalize applies NFKC and lowercases. Invalid UTF-8 bytes are removed.
//
//	Normalize("Ｓｅｃｕｒｉｔｙ ｶﾀｶﾅ ⼈") == "security カタカナ 人"
func Normalize(s string) string {
	s = strings.ToValidUTF8(s, "")
	return strings.ToLower(norm.NFKC.String(s))
}

// Terms returns the index terms of text: the word terms in order of
// appearance, then the n-gram terms. Terms are non-empty valid UTF-8; the
// same term may appear several times (its count is the term frequency).
func (a *Analyzer) Terms(text string) []string {
	s := Normalize(text)
	terms := make([]string, 0, len(s)/4+1)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case isJapanese(r):
			j := i + size
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if !isJapanese(r2) {
					break
				}
				j += sz
			}
			terms = a.japanese(terms, s[i:j])
			i = j
		case isWordRune(r):
			j := i + size
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if isWordRune(r2) && !isJapanese(r2) {
					j += sz
					continue
				}
				// An apostrophe between letters stays inside the word
				// ("don't", "cell's"); it is resolved in latin.
				if (r2 == '\'' || r2 == '’') && j+sz < len(s) {
					r3, _ := utf8.DecodeRuneInString(s[j+sz:])
					if unicode.IsLetter(r3) && !isJapanese(r3) {
						j += sz
						continue
					}
				}
				break
			}
			terms = a.latin(terms, s[i:j])
			i = j
		default:
			i += size
		}
	}
	if n := a.opt.CharNGram; n > 0 {
		terms = appendNGrams(terms, s, n)
		if HasJapanese(s) {
			terms = appendVersions(terms, s)
		}
	}
	return terms
}

// versionRe finds a dotted number: a version (3.12.x, 1.27), a section
// number (2.8) or a decimal.
var versionRe = regexp.MustCompile(`\b[0-9]+\.[0-9]+`)

// appendVersions appends, for each dotted number of s, its first two parts
// as one term with the n-gram prefix: the word terms split 「3.12.x」 into 3,
// 12 and x, which every table of numbers holds, so 「Helm 3.12系」 found no
// row of 3.12.x. Like the n-grams, they are an index's extra terms, not
// words of the text. Terms adds them to Japanese text only: in English
// scientific abstracts, full of decimals, they cost SciFact nDCG@10
// 0.0044 (docs/BENCHMARKS.md, "Ninth session").
func appendVersions(terms []string, s string) []string {
	for _, m := range versionRe.FindAllString(s, -1) {
		terms = append(terms, NGramPrefix+m)
	}
	return terms
}

// maxPooledNodes bounds the lattices kept for reuse (40 bytes a node: about
// 2.6 MB, a run of some ten thousand characters).
const maxPooledNodes = 1 << 16

// japanese appends the word terms of one run of Japanese script.
func (a *Analyzer) japanese(terms []string, run string) []string {
	if a.dict == nil {
		return a.japaneseKagome(terms, run)
	}
	la := a.lats.Get().(*lattice)
	defer func() {
		// A lattice grown by a very long run is left to the collector
		// rather than kept for the short texts that follow.
		if cap(la.nodes) <= maxPooledNodes {
			a.lats.Put(la)
		}
	}()
	for _, i := range la.bestPath(a.dict, run) {
		n := &la.nodes[i]
		if n.lo == n.hi {
			continue
		}
		term := run[n.lo:n.hi]
		var base string
		if n.class == classKnown {
			pos0, pos1, b, ok := a.feat.at(int(n.id))
			if !keepToken(tokenizer.KNOWN, pos0, pos1) {
				continue
			}
			if ok {
				base = b
			}
		} else {
			base = a.unkBase[n.id] // unknown words are always kept
		}
		if base != "" && base != "*" {
			term = base
		}
		terms = append(terms, term)
	}
	return terms
}

// japaneseKagome is japanese through kagome's own tokenizer, used with the
// embedded dictionary.
func (a *Analyzer) japaneseKagome(terms []string, run string) []string {
	for _, t := range a.tok.Analyze(run, tokenizer.Search) {
		if t.Surface == "" {
			continue
		}
		pos0, pos1, base, ok := a.features(t)
		if !keepToken(t.Class, pos0, pos1) {
			continue
		}
		term := t.Surface
		if ok && base != "" && base != "*" {
			term = base
		}
		terms = append(terms, term)
	}
	return terms
}

// features returns the first two part-of-speech levels and the base form
// (ok false when the token has none) of a token.
func (a *Analyzer) features(t tokenizer.Token) (pos0, pos1, base string, ok bool) {
	if a.feat != nil && t.Class == tokenizer.KNOWN {
		return a.feat.at(t.ID)
	}
	pos0, _ = t.FeatureAt(0)
	pos1, _ = t.FeatureAt(1)
	base, ok = t.BaseForm()
	return pos0, pos1, base, ok
}

// keepToken reports whether a kagome token carries content. The top-level
// part of speech decides; within nouns and verbs the dependent (非自立) and
// suffix (接尾) classes are function-like and dropped, as are pronouns.
func keepToken(class tokenizer.TokenClass, pos, sub string) bool {
	if class == tokenizer.UNKNOWN {
		return true
	}
	switch pos {
	case "名詞":
		switch sub {
		case "非自立", "代名詞", "特殊":
			return false
		}
		return true
	case "動詞", "形容詞":
		return sub != "非自立" && sub != "接尾"
	default:
		// 助詞, 助動詞, 記号, フィラー, 副詞, 接頭詞, 連体詞, 接続詞, 感動詞,
		// その他. Keeping adverbs, prefixes and adnominals too was measured:
		// no gain on JSQuAD.
		return false
	}
}

// appendNGrams appends the character n-grams of every maximal run of
// letters and digits in s that contains Japanese script. A qualifying run
// shorter than n runes is appended whole. Each n-gram starts with
// NGramPrefix. The n-grams of a run share one backing string.
func appendNGrams(terms []string, s string, n int) []string {
	var offs [128]int
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isJapanese(r) && !isWordRune(r) {
			i += size
			continue
		}
		idx, jp := offs[:0], false
		j := i
		for j < len(s) {
			r2, sz := utf8.DecodeRuneInString(s[j:])
			if !isJapanese(r2) && !isWordRune(r2) {
				break
			}
			jp = jp || isJapanese(r2)
			idx = append(idx, j)
			j += sz
		}
		idx = append(idx, j)
		if jp {
			terms = appendRunNGrams(terms, s, idx, n)
		}
		i = j
	}
	return terms
}

// appendRunNGrams appends the n-grams of the run whose rune start offsets
// in s are idx (with the end offset last).
func appendRunNGrams(terms []string, s string, idx []int, n int) []string {
	runes := len(idx) - 1
	if runes < n {
		return append(terms, NGramPrefix+s[idx[0]:idx[runes]])
	}
	grams := runes - n + 1
	size := 0
	for k := range grams {
		size += len(NGramPrefix) + idx[k+n] - idx[k]
	}
	var b strings.Builder
	b.Grow(size)
	for k := range grams {
		b.WriteString(NGramPrefix)
		b.WriteString(s[idx[k]:idx[k+n]])
	}
	all, pos := b.String(), 0
	for k := range grams {
		end := pos + len(NGramPrefix) + idx[k+n] - idx[k]
		terms = append(terms, all[pos:end])
		pos = end
	}
	return terms
}

// latin appends the term of one Latin-style word, if any.
func (a *Analyzer) latin(terms []string, w string) []string {
	if strings.ContainsAny(w, "'’") {
		w = strings.TrimSuffix(w, "'s")
		w = strings.TrimSuffix(w, "’s")
		w = strings.NewReplacer("'", "", "’", "").Replace(w)
	}
	if w == "" {
		return terms
	}
	if !a.opt.KeepStopwords && isStopword(w) {
		return terms
	}
	if !a.opt.NoStem && isASCIILetters(w) {
		w = english.Stem(w, true)
		if w == "" {
			return terms
		}
	}
	return append(terms, w)
}

// isJapanese reports whether r belongs to a Japanese script run.
func isJapanese(r rune) bool {
	switch {
	case r < 0x3000:
		return false
	case r == 'ー' || r == '々' || r == '〆' || r == 'ヶ':
		return true
	// Fast paths for the blocks of almost all Japanese text, wholly in the
	// scripts below (TestIsJapaneseFastPath checks every code point).
	case r >= 'ぁ' && r <= 'ゖ', r >= 'ァ' && r <= 'ヺ', r >= 0x4E00 && r <= 0x9FFC:
		return true
	}
	return unicode.In(r, unicode.Hiragana, unicode.Katakana, unicode.Han) && r != '・'
}

// isWordRune reports whether r can be part of a word.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

func isASCIILetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// isStopword is Lucene's classic English stop set
// (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET), the one Anserini's BM25 uses.
func isStopword(w string) bool {
	switch w {
	case "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if",
		"in", "into", "is", "it", "no", "not", "of", "on", "or", "such", "that",
		"the", "their", "then", "there", "these", "they", "this", "to", "was",
		"will", "with":
		return true
	}
	return false
}
