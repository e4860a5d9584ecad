package synonym

import (
	"slices"
	"strings"
	"testing"
)

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

func FuzzParse(f *testing.F) {
	f.Add("000001\tログイン\tログオン\n000002\t記録\t!ログ\n")
	f.Add("#\n\n1\ta\t!b\r\n")
	f.Fuzz(func(t *testing.T, text string) {
		d, err := Parse(strings.NewReader(text))
		if err != nil {
			return
		}
		for _, line := range strings.Split(text, "\n") {
			for _, w := range strings.Split(line, "\t") {
				for _, s := range d.Synonyms(strings.TrimPrefix(w, NoTrigger)) {
					if s == "" {
						t.Fatalf("an empty synonym of %q", w)
					}
				}
			}
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
