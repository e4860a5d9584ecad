package analysis

import "testing"

func TestPresent(t *testing.T) {
	tests := []struct {
		text, term string
		want       bool
	}{
		{"アカウントロックアウトの解除", "ロック", true}, // inside a compound
		{"端末の利用を止めて報告する", "止める", true},  // conjugated verb, by its stem
		{"新しく発行する", "新しい", true},        // conjugated adjective
		{"サーバを再起動する", "サーバー", true},     // long-vowel mark dropped
		{"端末を隔離する", "停止", false},
		{"見る", "見る", true},
		{"みる", "見る", false}, // a two-rune term keeps its last rune
	}
	for _, tt := range tests {
		if got := Present(Normalize(tt.text), tt.term); got != tt.want {
			t.Errorf("Present(%q, %q) = %v; want %v", tt.text, tt.term, got, tt.want)
		}
	}
}

func TestHasJapanese(t *testing.T) {
	for s, want := range map[string]bool{"ログの保管期間は？": true, "VPN の設定": true, "カタカナ": true, "How long are logs kept?": false, "": false, "123 ABC": false} {
		if got := HasJapanese(s); got != want {
			t.Errorf("HasJapanese(%q) = %v; want %v", s, got, want)
		}
	}
}
