package analysis

import (
	"slices"
	"testing"
)

func TestCharBigrams(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"ログの保管", []string{"ログ", "グの", "の保", "保管"}},
		{"ab ab、c1", []string{"ab", "c1"}},
		{"。", nil},
	}
	for _, tt := range tests {
		if got := CharBigrams(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("CharBigrams(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
