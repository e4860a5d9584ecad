package ocr

import "testing"

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "証明書", 3},
		{"証明書", "", 3},
		{"証明書の期限", "証明書の期限", 0},
		{"証明書の期限", "証明書の其限", 1},
		{"kitten", "sitting", 3},
		{"ログ保管", "ログの保管", 1},
	}
	for _, tt := range tests {
		if got := EditDistance([]rune(tt.a), []rune(tt.b)); got != tt.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
