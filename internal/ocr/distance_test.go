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

func TestAlignLines(t *testing.T) {
	lines := func(s ...string) [][]rune {
		var out [][]rune
		for _, l := range s {
			out = append(out, []rune(l))
		}
		return out
	}
	tests := []struct {
		name     string
		ref, got [][]rune
		want     LineAlignment
	}{
		{"same", lines("証明書の期限", "ログ保管"), lines("証明書の期限", "ログ保管"),
			LineAlignment{Lines: 2, Matched: 2}},
		{"lines moved cost nothing", lines("証明書の期限", "ログ保管"), lines("ログ保管", "証明書の期限"),
			LineAlignment{Lines: 2, Matched: 2}},
		{"table read by columns", lines("項目値", "氏名山田", "年齢42"), lines("項目", "氏名", "年齢", "値", "山田", "42"),
			// only whole reference lines move: the cells of one line read apart are edits
			LineAlignment{Edits: 10, Extra: 5, Within: 5, Lines: 3, Matched: 3}},
		{"misread", lines("証明書の期限"), lines("証明書の其限"),
			LineAlignment{Edits: 1, Within: 1, Lines: 1, Matched: 1}},
		{"punctuation", lines("期限。確認"), lines("期限、確認"),
			LineAlignment{Edits: 1, Within: 1, WithinPunct: 1, Lines: 1, Matched: 1}},
		{"figure text is extra", lines("本文です"), lines("本文です", "図1売上"),
			LineAlignment{Edits: 4, Extra: 4, Lines: 1, Matched: 1}},
		{"missed line", lines("本文です", "目次"), lines("本文です"),
			LineAlignment{Edits: 2, Missing: 2, Lines: 2, Matched: 1}},
		{"a span is used once", lines("あい", "あい"), lines("あい"),
			LineAlignment{Edits: 2, Missing: 2, Lines: 2, Matched: 1}},
		{"match across the reading's line break", lines("証明書の期限"), lines("証明書", "の期限"),
			LineAlignment{Lines: 1, Matched: 1}},
		{"empty", nil, lines("abc"), LineAlignment{Edits: 3, Extra: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AlignLines(tt.ref, tt.got); got != tt.want {
				t.Errorf("AlignLines = %+v, want %+v", got, tt.want)
			}
		})
	}
}
