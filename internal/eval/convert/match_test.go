package convert

import (
	"math"
	"strings"
	"testing"
)

// The want values were computed with CPython 3's
// difflib.SequenceMatcher(None, a, b).ratio() (autojunk on, the default);
// wantNoJunk with autojunk=False, to show the heuristic is really exercised.
func TestRatioMatchesPython(t *testing.T) {
	longEN := strings.TrimSpace(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 6))
	longEN2 := strings.Replace(longEN, "lazy", "sleepy", 2)
	longJA := strings.Repeat("東京都は日本の首都であり、人口は約千四百万人です。", 9)
	longJA2 := strings.Replace(longJA, "首都", "中心", 3)
	tests := []struct {
		name       string
		a, b       string
		want       float64
		wantNoJunk float64
	}{
		{"ja identical", "冷蔵庫の温度設定はどうすればよいですか？", "冷蔵庫の温度設定はどうすればよいですか？", 1.0, 1.0},
		{"ja near", "冷蔵庫の温度設定はどうすればよいですか？", "冷蔵庫の温度設定はどうすればいいですか", 0.9230769230769231, 0.9230769230769231},
		{"ja different", "製氷機の掃除方法を教えてください", "冷凍室の霜取りの手順は？", 0.07142857142857142, 0.07142857142857142},
		{"en punctuation", "What is the capital of France?", "What is the capital of France", 0.9830508474576272, 0.9830508474576272},
		{"en case", "What is the capital of France?", "what is the capital of france?", 0.9333333333333333, 0.9333333333333333},
		{"en different", "How do I reset my password?", "Where can I download the invoice?", 0.23333333333333334, 0.23333333333333334},
		{"both empty", "", "", 1.0, 1.0},
		{"one empty", "abc", "", 0.0, 0.0},
		{"long en autojunk", longEN, longEN2, 0.12915129151291513, 0.8191881918819188},
		{"long ja autojunk", longJA, longJA2, 0.03111111111111111, 0.7733333333333333},
		{"long runs", strings.Repeat("a", 150) + strings.Repeat("b", 60), strings.Repeat("a", 100) + strings.Repeat("b", 110), 0.47619047619047616, 0.7619047619047619},
		{"long alternating", "x" + strings.Repeat("ab", 120), strings.Repeat("ab", 120) + "y", 0.0, 0.995850622406639},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Ratio(tt.a, tt.b); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Ratio = %.17g, want %.17g (python autojunk=False gives %.17g)", got, tt.want, tt.wantNoJunk)
			}
		})
	}
}

func TestConfidence(t *testing.T) {
	tests := []struct {
		score float64
		want  string
	}{
		{1, Perfect}, {0.99, Perfect}, {0.9899, Good}, {0.95, Good}, {0.9499, Low}, {0.85, Low}, {0.8499, Failed}, {0, Failed},
	}
	for _, tt := range tests {
		if got := Confidence(tt.score); got != tt.want {
			t.Errorf("Confidence(%v) = %s, want %s", tt.score, got, tt.want)
		}
	}
}
