package answer

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitSentences(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{
			name: "japanese",
			text: "梅雨は雨季の一種である。5月から7月に来る！本当か？",
			want: []string{"梅雨は雨季の一種である。", "5月から7月に来る！", "本当か？"},
		},
		{
			name: "a quotation does not end the sentence around it",
			text: "「保管せよ。」と定める。次の文。",
			want: []string{"「保管せよ。」と定める。", "次の文。"},
		},
		{
			name: "english with abbreviation and decimal",
			text: "Logs are kept for 1.5 years, e.g. audit logs. Then they are deleted. Why? Policy.",
			want: []string{"Logs are kept for 1.5 years, e.g. audit logs.", "Then they are deleted.", "Why?", "Policy."},
		},
		{
			name: "markdown headings, bullets, table header and rule",
			text: "# インシデント対応\n## 初動対応\n- 端末を隔離する\n* 証跡を保全する。\n1. 報告する\n> 注意: 削除禁止\n| 項目 | 担当 |\n|---|:---:|\n| 報告 | SOC |\n・連絡先を確認",
			want: []string{"端末を隔離する", "証跡を保全する。", "報告する", "注意: 削除禁止", "| 報告 | SOC |", "連絡先を確認"},
		},
		{
			name: "punctuation-only fragments dropped",
			text: "。。\n---\n  \n本文。",
			want: []string{"本文。"},
		},
		{name: "empty", text: "", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := splitSentences(tt.text); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("splitSentences(%q)\n got %q\nwant %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("監査ログ", 60) // 240 runes
	tests := []struct {
		name, in, want string
	}{
		{"short kept", "監査ログは1年間保管する。", "監査ログは1年間保管する。"},
		{"whitespace collapsed", "a\n\n b\tc", "a b c"},
		{"exactly 200", strings.Repeat("あ", 200), strings.Repeat("あ", 200)},
		{"cut rune-safe", long, string([]rune(long)[:197]) + "..."},
		{"emoji", strings.Repeat("🔒", 201), strings.Repeat("🔒", 197) + "..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := excerpt(tt.in, MaxExcerptRunes)
			if got != tt.want {
				t.Errorf("excerpt = %q, want %q", got, tt.want)
			}
			if n := utf8.RuneCountInString(got); n > MaxExcerptRunes || !utf8.ValidString(got) {
				t.Errorf("excerpt has %d runes (valid %v)", n, utf8.ValidString(got))
			}
		})
	}
}

func TestUnknownsLine(t *testing.T) {
	tok := bigrams{}
	tests := []struct {
		name     string
		query    string
		evidence string
		want     []string
	}{
		{"all covered", "ログの保管期間は？", "ログの保管期間は1年。", nil},
		{"bigrams merge into a phrase", "ログの保管期間と暗号化方式は？", "ログの保管期間は1年。", []string{"根拠文書に記載がない点: 暗号化方式"}},
		{"inner bigram of covered words not reported", "保管期間", "保管する期間", nil},
		{"two gaps", "VPNの設定方法と申請窓口", "申請はVPN担当へ。", []string{"根拠文書に記載がない点: 設定方法, 窓口"}},
		{"question words are not content", "どこで何をいつ？", "", nil},
		{"a value noun answered by a value", "ログの保管期間と接続の上限は？", "ログは1年間保管する。接続は最長12時間。", nil},
		{"a value noun with no value", "ログの保管期間は？", "ログは保管する。", []string{"根拠文書に記載がない点: 期間"}},
		{"one character is no phrase", "公衆無線LANの注意点", "公衆無線LANの注意。", nil},
		{"piece found verbatim in the answer", "監査ログは何年保管する？", "監査ログは1年間保管する。", nil},
		{"english", "How long are audit logs retained and encrypted?", "Audit logs are retained for one year.", []string{"Not stated in the evidence: encrypted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := unknownsLine(tt.query, tok.Terms(tt.query), termSet(tok.Terms(tt.evidence)), tt.evidence)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("unknownsLine(%q) = %q, want %q", tt.query, got, tt.want)
			}
		})
	}
}

func TestSpansLocatesAnalyserTerms(t *testing.T) {
	keepAll := func(string) int { return spanKeep }
	tests := []struct {
		name  string
		text  string
		terms []string
		class func(string) int
		want  []string
	}{
		{"stems widen to words", "How long is the retention policy?", []string{"retent", "polici"}, keepAll, []string{"retention", "policy"}},
		{"n-gram marker ignored", "暗号化方式", []string{"\u2063暗号", "\u2063号化", "\u2063化方", "\u2063方式"}, keepAll, []string{"暗号化方式"}},
		{"original case kept", "ＶＰＮの設定", []string{"vpn"}, keepAll, []string{"VPN"}},
		{"blocked runes win", "保管期間", []string{"保管", "管期", "期間"}, func(t string) int {
			if t == "管期" {
				return spanKeep
			}
			return spanBlock
		}, nil},
		{"unlocatable kept term reported", "abc", []string{"zzz", "\u2063"}, keepAll, []string{"zzz"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := spans(tt.text, tt.terms, tt.class); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("spans = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestHeadless(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"は、職員個人のアカウントだけでなく、すべての情報が重要となる。", true},
		{"を、ひとつの業務として実施する。", true},
		{"、その他の機器を含む。", true},
		{"また、政府職員のアカウントの管理では、確からしさを担保する。", false}, // a conjunction opens sentences
		{"はじめに", false},
		{"では、次の手順で行う。", false}, // two hiragana before the comma: a conjunction
		{"アカウントは無効化した状態で作成する。", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := headless(tt.in); got != tt.want {
			t.Errorf("headless(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
