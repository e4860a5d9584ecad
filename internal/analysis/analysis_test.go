package analysis_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/analysis"
)

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Ｓｅｃｕｒｉｔｙ", "security"},   // full-width Latin
		{"ｶﾀｶﾅ", "カタカナ"},           // half-width katakana
		{"\u2F08\u4E8B", "人事"},     // Kangxi radical ⼈ (U+2F08) from PDF text
		{"\u2F45\u91DD", "方針"},     // ⽅ (U+2F45)
		{"９０％", "90%"},             // full-width digits and symbols
		{"ABC def", "abc def"},     // lowercase
		{"ガ", "ガ"},                 // combining dakuten composes
		{"①", "1"},                 // compatibility digits
		{"bad\xffbyte", "badbyte"}, // invalid UTF-8 dropped
		{"", ""},
	}
	for _, tt := range tests {
		if got := analysis.Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTermsWords(t *testing.T) {
	a, err := analysis.New(analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   string
		want []string
	}{
		// Particles, auxiliary verbs and symbols dropped; verbs in base form;
		// する kept as a verb.
		{"インシデント対応の初動を確認してください。", []string{"インシデント", "対応", "初動", "確認", "する"}},
		// Search mode splits the compound.
		{"関西国際空港に行きました", []string{"関西", "国際", "空港", "行く"}},
		// Adjectives kept in base form; dependent verb いる dropped.
		{"美しい花が咲いている", []string{"美しい", "花", "咲く"}},
		// Fillers and adnominals dropped.
		{"えーと、あのサーバーを再起動する", []string{"サーバー", "起動", "する"}},
		// Full-width folded; numbers kept.
		{"ＣＰＵ使用率が９０％を超えた", []string{"cpu", "使用", "率", "90", "超える"}},
		// Kangxi radicals from PDFs normalized before analysis.
		{"⼈事部の⽅針", []string{"人事", "部", "方針"}},
		// English: lowercase, stopwords dropped, Snowball stems, possessive.
		{"The cells were running quickly; the cell's growth", []string{"cell", "were", "run", "quick", "cell", "growth"}},
		{"2024年3月にCVE-2024-1234が公開された", []string{"2024", "年", "3", "月", "cve", "2024", "1234", "公開", "する"}},
		{"", nil},
		{"。、！？ ... ---", nil},
	}
	for _, tt := range tests {
		got := a.Terms(tt.in)
		if len(got) == 0 && len(tt.want) == 0 {
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Terms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTermsNGrams(t *testing.T) {
	a, err := analysis.New(analysis.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	p := analysis.NGramPrefix
	tests := []struct {
		in   string
		want []string
	}{
		// Bigrams span the Latin and digit characters glued to Japanese.
		{"CPUの使用率", []string{"cpu", "使用", "率", p + "cp", p + "pu", p + "uの", p + "の使", p + "使用", p + "用率"}},
		// A run shorter than n is kept whole.
		{"1年 花", []string{"1", "年", "花", p + "1年", p + "花"}},
		// Pure Latin text gets no n-grams.
		{"security incident", []string{"secur", "incid"}},
	}
	for _, tt := range tests {
		if got := a.Terms(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Terms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, n := range []int{-1, 5} {
		if _, err := analysis.New(analysis.Options{CharNGram: n}); err == nil {
			t.Errorf("New(CharNGram: %d) succeeded, want error", n)
		}
	}
}

// TestTermsConcurrent runs one Analyzer from several goroutines; run with
// -race to check it is safe for concurrent use.
func TestTermsConcurrent(t *testing.T) {
	a, err := analysis.New(analysis.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("インシデント発生時はCSIRTへ連絡し、ログを保全する。", 10)
	want := a.Terms(text)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				if got := a.Terms(text); !slices.Equal(got, want) {
					t.Error("concurrent Terms differs")
					return
				}
			}
		})
	}
	wg.Wait()
}

func FuzzTerms(f *testing.F) {
	for _, s := range []string{
		"インシデント対応の初動を確認してください。", "The cell's growth", "⼈事部",
		"ｶﾀｶﾅ\xff\xfe", "don't'", "'s", "ー々〆ヶ", "a\u0301", "\u3099\u309a", "1年CPUの",
	} {
		f.Add(s, 2)
	}
	analyzers := map[int]*analysis.Analyzer{}
	for n := range 5 {
		a, err := analysis.New(analysis.Options{CharNGram: n})
		if err != nil {
			f.Fatal(err)
		}
		analyzers[n] = a
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		a := analyzers[((n%5)+5)%5]
		for _, term := range a.Terms(s) {
			if term == "" || term == analysis.NGramPrefix {
				t.Fatalf("empty term from %q", s)
			}
			if !utf8.ValidString(term) {
				t.Fatalf("invalid UTF-8 term %q from %q", term, s)
			}
		}
		if !utf8.ValidString(analysis.Normalize(s)) {
			t.Fatalf("Normalize(%q) is not valid UTF-8", s)
		}
	})
}

func TestHeadingTerm(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"2.8 供給ソフトウェア", "供給ソフトウェア"},
		{"重大インシデントとは何か？", "重大インシデント"},
		{"用語の定義", "用語"},
		{"第3章 多要素認証とは", "多要素認証"},
		{"インシデント対応プロセスの契機となるものは何か？", "インシデント対応プロセスの契機となるものは何か"},
	} {
		if got := analysis.HeadingTerm(tt.in); got != tt.want {
			t.Errorf("HeadingTerm(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestVersionTerms: a dotted number is also one term, its first two parts,
// so 「3.12系」 finds the row 「3.12.x」 and not every row holding 3 and 12.
func TestVersionTerms(t *testing.T) {
	a, err := analysis.New(analysis.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"Helm 3.12系を使う", []string{analysis.NGramPrefix + "3.12"}},
		{"| Helm バージョン | Kubernetes バージョン |\n| 3.12.x | 1.27.x - 1.24.x |", []string{analysis.NGramPrefix + "3.12", analysis.NGramPrefix + "1.27", analysis.NGramPrefix + "1.24"}},
		{"The p value was 0.05 in version 3.12", nil}, // English text: none (SciFact's decimals)
		{"上限は 0.5 g", []string{analysis.NGramPrefix + "0.5"}},
		{"第3条", nil},
	} {
		var got []string
		for _, term := range a.Terms(tt.text) {
			if strings.Contains(term, ".") {
				got = append(got, term)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q: dotted terms %q, want %q", tt.text, got, tt.want)
		}
	}
}
