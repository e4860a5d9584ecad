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
//
// The shipped files are searched in place, so loading them costs nothing:
// synonyms.tsv holds its words already normalised, and synonyms.index.tsv
// lists every word that expands, sorted, with the byte offsets of the lines
// of its groups in synonyms.tsv. A lookup binary-searches the index and
// reads those lines. scripts/synonyms writes both files (Dictionary.Write).
package synonym

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/analysis"
)

var (
	//go:embed synonyms.tsv
	shippedGroups []byte
	//go:embed synonyms.index.tsv
	shippedIndex []byte
)

// NoTrigger marks a word of a group that does not expand to the others.
const NoTrigger = "!"

// statsPrefix starts the index file's line that gives the number of groups
// and the length of the longest word.
const statsPrefix = "# groups\t"

// Dictionary maps a word to its synonyms. It is immutable once built and
// safe for concurrent use.
type Dictionary struct {
	// groups is the group lines (synonyms.tsv without its comments): the
	// group's number, then its normalised words, each once, tab-separated,
	// a word that never expands marked with NoTrigger.
	groups []byte
	// index is the lines "word, tab, comma-separated offsets in groups of
	// the lines of the groups it expands to", sorted by word (byte order).
	index   []byte
	ngroups int
	longest int // the longest word, in runes
}

// Default returns the shipped dictionary, searched in place (no parsing).
func Default() (*Dictionary, error) {
	d, err := load(shippedGroups, shippedIndex)
	if err != nil {
		return nil, fmt.Errorf("the shipped synonym dictionary: %w (regenerate it with scripts/synonyms)", err)
	}
	return d, nil
}

// load is the dictionary over files Write wrote: it skips the comment
// lines and reads the index's statistics line, which ends its comments,
// nothing more.
func load(groups, index []byte) (*Dictionary, error) {
	d := &Dictionary{groups: skipComments(groups)}
	stats := false
	for rest := index; len(rest) > 0 && rest[0] == '#'; {
		line, next, _ := bytes.Cut(rest, []byte("\n"))
		if s, ok := bytes.CutPrefix(line, []byte(statsPrefix)); ok {
			n, longest, ok := strings.Cut(string(s), "\tlongest\t")
			var err1, err2 error
			d.ngroups, err1 = strconv.Atoi(n)
			d.longest, err2 = strconv.Atoi(longest)
			if !ok || err1 != nil || err2 != nil {
				return nil, fmt.Errorf("index statistics line %q is malformed", line)
			}
			stats = true
			d.index = next
			break // the index follows (a word may begin with "#")
		}
		rest = next
	}
	if !stats {
		return nil, fmt.Errorf("the index has no statistics line (%q…)", statsPrefix)
	}
	return d, nil
}

// skipComments returns b from its first line that is not a comment.
func skipComments(b []byte) []byte {
	for len(b) > 0 && b[0] == '#' {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil
		}
		b = b[i+1:]
	}
	return b
}

// Parse reads a dictionary in the synonyms.tsv format: one group a line,
// its number first, then its words; "#" starts a comment line. Words are
// normalised as the analyser normalises text (NFKC, lower case), so a
// lookup meets them however the question wrote them. A word may not begin
// with "!" once normalised (！ログ), which would read as the mark.
func Parse(r io.Reader) (*Dictionary, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read synonym dictionary: %w", err)
	}
	d := &Dictionary{}
	expand := map[string][]int{} // trigger word → offsets of its groups
	var groups bytes.Buffer
	groups.Grow(len(b))
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
		at := groups.Len()
		var words []string
		triggers := map[string]bool{}
		for _, f := range fields[1:] {
			trigger := !strings.HasPrefix(f, NoTrigger)
			w := normalize(strings.TrimPrefix(f, NoTrigger))
			switch {
			case w == "":
				return nil, fmt.Errorf("synonym dictionary line %d: an empty word", line)
			case strings.HasPrefix(w, NoTrigger):
				return nil, fmt.Errorf("synonym dictionary line %d: the word %q begins with %q, the mark of a word that never expands", line, f, NoTrigger)
			case strings.ContainsAny(w, "\t\n"):
				return nil, fmt.Errorf("synonym dictionary line %d: the word %q holds a tab or a line break once normalised", line, f)
			}
			if _, ok := triggers[w]; !ok {
				words = append(words, w)
			}
			triggers[w] = triggers[w] || trigger
			d.longest = max(d.longest, utf8.RuneCountInString(w))
		}
		groups.WriteString(fields[0])
		for _, w := range words {
			groups.WriteByte('\t')
			if triggers[w] {
				expand[w] = append(expand[w], at)
			} else {
				groups.WriteString(NoTrigger)
			}
			groups.WriteString(w)
		}
		groups.WriteByte('\n')
		d.ngroups++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read synonym dictionary: %w", err)
	}
	d.groups = groups.Bytes()
	words := make([]string, 0, len(expand))
	for w := range expand {
		words = append(words, w)
	}
	slices.Sort(words)
	var index bytes.Buffer
	for _, w := range words {
		index.WriteString(w)
		for i, at := range expand[w] {
			if i == 0 {
				index.WriteByte('\t')
			} else {
				index.WriteByte(',')
			}
			index.WriteString(strconv.Itoa(at))
		}
		index.WriteByte('\n')
	}
	d.index = index.Bytes()
	return d, nil
}

// Write writes the dictionary as the shipped files are: its group lines to
// groups and its index, after a line of statistics, to index. The caller
// may write comment lines ("#") before either.
func (d *Dictionary) Write(groups, index io.Writer) error {
	if _, err := groups.Write(d.groups); err != nil {
		return fmt.Errorf("write synonym groups: %w", err)
	}
	if _, err := fmt.Fprintf(index, "%s%d\tlongest\t%d\n", statsPrefix, d.ngroups, d.longest); err != nil {
		return fmt.Errorf("write synonym index: %w", err)
	}
	if _, err := index.Write(d.index); err != nil {
		return fmt.Errorf("write synonym index: %w", err)
	}
	return nil
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
func (d *Dictionary) Groups() int { return d.ngroups }

// Longest reports the length in runes of the dictionary's longest word: a
// caller looking words up in a text need not try longer spans.
func (d *Dictionary) Longest() int { return d.longest }

// Synonyms returns the other words of every group that word expands to,
// normalised, each once, in the dictionary's order; nil when word is not a
// trigger word of any group.
func (d *Dictionary) Synonyms(word string) []string {
	self := analysis.Normalize(word)
	offsets := d.lookup(self)
	var out []string
	for len(offsets) > 0 {
		var off []byte
		off, offsets, _ = bytes.Cut(offsets, []byte(","))
		at, ok := offset(off)
		if !ok || at >= len(d.groups) {
			continue // not written by Write: nothing to read
		}
		line := d.groups[at:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		_, line, _ = bytes.Cut(line, []byte("\t")) // the group's number
		for len(line) > 0 {
			var w []byte
			w, line, _ = bytes.Cut(line, []byte("\t"))
			w = bytes.TrimPrefix(w, []byte(NoTrigger))
			if len(w) == 0 || string(w) == self || slices.ContainsFunc(out, func(s string) bool { return s == string(w) }) {
				continue
			}
			out = append(out, string(w))
		}
	}
	return out
}

// lookup binary-searches the index for word's line and returns its
// offsets; nil when word expands to nothing. Each step takes the line
// around the middle byte of the range left.
func (d *Dictionary) lookup(word string) []byte {
	key := []byte(word)
	b := d.index
	lo, hi := 0, len(b) // lo is the start of a line, hi the end of one
	for lo < hi {
		mid := lo + (hi-lo)/2
		start := lo + bytes.LastIndexByte(b[lo:mid], '\n') + 1
		end := hi
		if i := bytes.IndexByte(b[start:hi], '\n'); i >= 0 {
			end = start + i
		}
		w, offsets, _ := bytes.Cut(b[start:end], []byte("\t"))
		switch c := bytes.Compare(w, key); {
		case c == 0:
			return offsets
		case c < 0:
			lo = end + 1
		default:
			hi = start
		}
	}
	return nil
}

// offset reads a decimal offset of the index; false when it is none.
func offset(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' || n > (1<<31)/10 {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, len(b) > 0
}
