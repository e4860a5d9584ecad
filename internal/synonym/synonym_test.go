package synonym

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
)

// reference is the dictionary as it was parsed before it was searched in
// place: maps built from the group lines. The tests hold Dictionary to
// its answers.
type reference struct {
	words   []string           // normalised words, by index
	groups  [][]int32          // group → its words' indexes
	expand  map[string][]int32 // normalised trigger word → its groups
	longest int                // the longest word, in runes
}

func parseReference(r io.Reader) (*reference, error) {
	d := &reference{expand: map[string][]int32{}}
	at := map[string]int32{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		text := strings.TrimRight(sc.Text(), "\r")
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, "\t")
		if len(fields) < 3 {
			return nil, fmt.Errorf("a group needs its number and at least two words")
		}
		g := int32(len(d.groups))
		var members []int32
		for _, f := range fields[1:] {
			trigger := !strings.HasPrefix(f, NoTrigger)
			w := analysis.Normalize(strings.TrimPrefix(f, NoTrigger))
			if w == "" {
				return nil, fmt.Errorf("an empty word")
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
	return d, sc.Err()
}

func (d *reference) Synonyms(word string) []string {
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

// sameAnswers reports the first difference between d and ref: in the
// number of groups, the longest word, or the synonyms of any of words.
func sameAnswers(d *Dictionary, ref *reference, words []string) error {
	if d.Groups() != len(ref.groups) || d.Longest() != ref.longest {
		return fmt.Errorf("groups, longest = %d, %d; the reference parse gives %d, %d", d.Groups(), d.Longest(), len(ref.groups), ref.longest)
	}
	for _, w := range words {
		if got, want := d.Synonyms(w), ref.Synonyms(w); !slices.Equal(got, want) {
			return fmt.Errorf("Synonyms(%q) = %q; the reference parse gives %q", w, got, want)
		}
	}
	return nil
}

// The shipped files, searched in place, answer as the reference parse of
// synonyms.tsv does for every word it holds (and words it does not), and
// they are what scripts/synonyms writes from synonyms.tsv.
func TestDefaultMatchesReferenceParse(t *testing.T) {
	d, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := parseReference(bytes.NewReader(shippedGroups))
	if err != nil {
		t.Fatal(err)
	}
	words := []string{"", "対処", "ｻｰﾊﾞ", "ＬＯＧＩＮ", "!ログ", "ログ\t", "\xff"}
	for _, w := range ref.words {
		words = append(words, w, strings.ToUpper(w), w+"x", w[:len(w)-1])
	}
	if len(ref.expand) < 30000 {
		t.Fatalf("the reference parse holds %d trigger words; the shipped dictionary has over 30,000", len(ref.expand))
	}
	if err := sameAnswers(d, ref, words); err != nil {
		t.Fatal(err)
	}

	p, err := Parse(bytes.NewReader(shippedGroups))
	if err != nil {
		t.Fatal(err)
	}
	var groups, index bytes.Buffer
	if err := p.Write(&groups, &index); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(groups.Bytes(), skipComments(shippedGroups)) || !bytes.HasSuffix(shippedIndex, index.Bytes()) {
		t.Fatal("synonyms.tsv or synonyms.index.tsv is not what scripts/synonyms writes from synonyms.tsv: regenerate them (README.md)")
	}
}

func TestParse(t *testing.T) {
	const dict = "# a comment\n" +
		"000001\tログイン\tサインイン\tログオン\n" +
		"000002\t記録\t!ログ\n" +
		"000003\tサーバー\tサーバ\tＳＥＲＶＥＲ機\n" +
		"000004\t対数\t!ログ\n"
	d, err := Parse(strings.NewReader(dict))
	if err != nil {
		t.Fatal(err)
	}
	if d.Groups() != 4 {
		t.Fatalf("groups = %d, want 4", d.Groups())
	}
	for _, tc := range []struct {
		word string
		want []string
	}{
		{"ログイン", []string{"サインイン", "ログオン"}},
		{"ログオン", []string{"ログイン", "サインイン"}},
		{"ｻｰﾊﾞ", []string{"サーバー", "server機"}}, // half-width katakana: NFKC
		{"記録", []string{"ログ"}},                // a no-trigger word is reached…
		{"ログ", nil},                           // …but never expands (also 対数)
		{"対処", nil},
	} {
		if got := d.Synonyms(tc.word); !slices.Equal(got, tc.want) {
			t.Errorf("Synonyms(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
	if d.Longest() != 7 { // server機
		t.Errorf("Longest = %d, want 7", d.Longest())
	}
}

func TestParseRefusesMalformedLines(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"one word", "000001\tログイン\n", "line 1: a group needs its number and at least two words"},
		{"no words", "000001\n", "line 1"},
		{"empty word", "# c\n000001\tログイン\t\n", "line 2: an empty word"},
		{"empty marked word", "000001\tログイン\t!\n", "an empty word"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// The shipped dictionary bridges the loanwords of one concept and leaves
// ambiguous words alone.
func TestDefault(t *testing.T) {
	d, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if d.Groups() < 10000 {
		t.Fatalf("the shipped dictionary has %d groups; Sudachi's has over 13,000 with Japanese words", d.Groups())
	}
	for _, tc := range []struct {
		word    string
		has     []string
		hasNone bool
	}{
		{word: "ログイン", has: []string{"ログオン", "サインイン"}},
		{word: "インターフェース", has: []string{"インタフェース"}},
		{word: "ログ", hasNone: true}, // 記録 or 対数: Sudachi never expands it
	} {
		got := d.Synonyms(tc.word)
		if tc.hasNone && got != nil {
			t.Errorf("Synonyms(%q) = %q, want none", tc.word, got)
		}
		for _, w := range tc.has {
			if !slices.Contains(got, w) {
				t.Errorf("Synonyms(%q) = %q, want it to hold %q", tc.word, got, w)
			}
		}
	}
}

// Parse answers as the reference parse does, and so do the files it
// writes, loaded as the shipped ones are.
func FuzzParse(f *testing.F) {
	f.Add("000001\tログイン\tログオン\n000002\t記録\t!ログ\n")
	f.Add("#\n\n1\ta\t!b\r\n")
	f.Add("1\tＡ\ta\t!a\n2\t!a\tb\tＡ\n3\tb\ta\n")
	f.Fuzz(func(t *testing.T, text string) {
		d, err := Parse(strings.NewReader(text))
		if err != nil {
			return
		}
		ref, err := parseReference(strings.NewReader(text))
		if err != nil {
			t.Fatalf("Parse accepts what the reference parse refuses: %v", err)
		}
		var words []string
		for _, line := range strings.Split(text, "\n") {
			for _, w := range strings.Split(line, "\t") {
				words = append(words, w, strings.TrimPrefix(w, NoTrigger))
			}
		}
		if err := sameAnswers(d, ref, words); err != nil {
			t.Fatal(err)
		}
		var groups, index bytes.Buffer
		if err := d.Write(&groups, &index); err != nil {
			t.Fatal(err)
		}
		loaded, err := load(groups.Bytes(), index.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if err := sameAnswers(loaded, ref, words); err != nil {
			t.Fatalf("written and loaded: %v", err)
		}
	})
}

// BenchmarkDefault is the cost of loading the shipped dictionary, paid
// once per opened searcher.
func BenchmarkDefault(b *testing.B) {
	for b.Loop() {
		if _, err := Default(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSynonyms is the cost of one lookup in the shipped dictionary:
// a word with synonyms, a marked (never expanding) word and a word not in
// it, in turn.
func BenchmarkSynonyms(b *testing.B) {
	d, err := Default()
	if err != nil {
		b.Fatal(err)
	}
	words := []string{"ログイン", "ログ", "対処"}
	i := 0
	for b.Loop() {
		d.Synonyms(words[i%len(words)])
		i++
	}
}
