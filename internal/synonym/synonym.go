// Package synonym is a Japanese synonym dictionary for query expansion:
// the groups of Sudachi's synonym dictionary (SudachiDict synonyms,
// Apache 2.0; see README.md for provenance), each a set of words that name
// one concept — orthographic variants (サーバー/サーバ), loanwords and their
// Japanese equivalents (ログイン/ログオン/サインイン), abbreviations.
//
// The file synonyms.tsv holds one group a line: the group's number, then
// its words separated by tabs. A word marked with a leading "!" is reached
// from the others but never expands itself (Sudachi's 展開制御フラグ 1: an
// ambiguous word such as ログ, which is also 対数); words Sudachi marks as
// never to be expanded (flag 2) and words without Japanese script are not
// in the file.
package synonym

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"strings"

	"github.com/shirube/shirube/internal/analysis"
)

//go:embed synonyms.tsv
var shipped []byte

// NoTrigger marks a word of a group that does not expand to the others.
const NoTrigger = "!"

// Dictionary maps a word to its synonyms. It is immutable once built and
// safe for concurrent use.
type Dictionary struct {
	words   []string           // normalised words, by index
	groups  [][]int32          // group → its words' indexes
	expand  map[string][]int32 // normalised trigger word → its groups
	longest int                // the longest word, in runes
}

// Default returns the shipped dictionary (parsed anew each call).
func Default() (*Dictionary, error) { return Parse(bytes.NewReader(shipped)) }

// Parse reads a dictionary in the synonyms.tsv format: one group a line,
// its number first, then its words; "#" starts a comment line. Words are
// normalised as the analyser normalises text (NFKC, lower case), so a
// lookup meets them however the question wrote them.
func Parse(r io.Reader) (*Dictionary, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read synonym dictionary: %w", err)
	}
	// Sized for the lines' words, so the maps never grow while filled.
	n := bytes.Count(b, []byte("\t"))
	d := &Dictionary{expand: make(map[string][]int32, n), words: make([]string, 0, n)}
	at := make(map[string]int32, n)
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, "\t")
		if len(fields) < 3 {
			return nil, fmt.Errorf("synonym dictionary line %d: a group needs its number and at least two words", line)
		}
		g := int32(len(d.groups))
		var members []int32
		for _, f := range fields[1:] {
			trigger := !strings.HasPrefix(f, NoTrigger)
			w := normalize(strings.TrimPrefix(f, NoTrigger))
			if w == "" {
				return nil, fmt.Errorf("synonym dictionary line %d: an empty word", line)
			}
			id, ok := at[w]
			if !ok {
				id = int32(len(d.words))
				at[w] = id
				d.words = append(d.words, w)
				d.longest = max(d.longest, len([]rune(w)))
			}
			members = append(members, id)
			if trigger {
				d.expand[w] = append(d.expand[w], g)
			}
		}
		d.groups = append(d.groups, members)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read synonym dictionary: %w", err)
	}
	return d, nil
}

// normalize is analysis.Normalize, skipped for words of kana and kanji
// alone, which it leaves as they are (most of the dictionary).
func normalize(w string) string {
	for _, r := range w {
		if !(r >= 'ぁ' && r <= 'ゖ' || r >= 'ァ' && r <= 'ヺ' || r == 'ー' || r >= '一' && r <= '鿿') {
			return analysis.Normalize(w)
		}
	}
	return w
}

// Groups reports the number of groups.
func (d *Dictionary) Groups() int { return len(d.groups) }

// Longest reports the length in runes of the dictionary's longest word: a
// caller looking words up in a text need not try longer spans.
func (d *Dictionary) Longest() int { return d.longest }

// Synonyms returns the other words of every group that word expands to,
// normalised, each once, in the dictionary's order; nil when word is not a
// trigger word of any group.
func (d *Dictionary) Synonyms(word string) []string {
	self := analysis.Normalize(word)
	gs := d.expand[self]
	if len(gs) == 0 {
		return nil
	}
	var out []string
	seen := map[int32]bool{}
	for _, g := range gs {
		for _, id := range d.groups[g] {
			if seen[id] || d.words[id] == self {
				continue
			}
			seen[id] = true
			out = append(out, d.words[id])
		}
	}
	return out
}
