package analysis

import "testing"

func TestSearchQuery(t *testing.T) {
	tests := []struct{ in, want string }{
		{"個人情報保護法でいう「個人情報」に、亡くなった方の情報は含まれますか？定義を教えてください。", "個人情報保護法でいう「個人情報」に、亡くなった方の情報は含まれますか？定義"},
		{"CMSのカテゴリの製品は何ですか？登録件数も教えてください", "CMSのカテゴリの製品は何ですか？登録件数も"},
		{"VPNの接続手順について知りたいです。", "VPNの接続手順"},
		{"ログの保存期間を教えて", "ログの保存期間"},
		{"教えてください", "教えてください"}, // nothing else to search for
		{"教えてくれる人は誰ですか", "教えてくれる人は誰ですか"},
		{"累計で何件になりましたか？", "累計で何件になりましたか？"},
	}
	for _, tt := range tests {
		if got := SearchQuery(tt.in); got != tt.want {
			t.Errorf("SearchQuery(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
