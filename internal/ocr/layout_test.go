package ocr

import (
	"slices"
	"testing"
)

// tableWords is a three-row table as Tesseract's --psm 3 reads it: each
// column a block of its own, so its own order is column by column.
func tableWords() []Word {
	return []Word{
		{Text: "成分名", X0: 100, Y0: 100, X1: 250, Y1: 140, Block: 1, Par: 1, Line: 1},
		{Text: "塩化ナトリウム", X0: 100, Y0: 160, X1: 380, Y1: 200, Block: 1, Par: 1, Line: 2},
		{Text: "ホウ砂", X0: 100, Y0: 220, X1: 220, Y1: 260, Block: 1, Par: 1, Line: 3},
		{Text: "配合量", X0: 600, Y0: 100, X1: 750, Y1: 140, Block: 2, Par: 1, Line: 1},
		{Text: "5.0", X0: 600, Y0: 162, X1: 660, Y1: 198, Block: 2, Par: 1, Line: 2},
		{Text: "0.76g", X0: 600, Y0: 222, X1: 700, Y1: 262, Block: 2, Par: 1, Line: 3},
	}
}

func TestReadingOrder(t *testing.T) {
	tests := []struct {
		name  string
		words []Word
		want  string
	}{
		{"table row by row", tableWords(), "成分名\n配合量\n塩化ナトリウム\n5.0\nホウ砂\n0.76g"},
		{"words of a line left to right, Latin words spaced", []Word{
			{Text: "E-205", X0: 120, Y0: 10, X1: 200, Y1: 40, Line: 1},
			{Text: "VPN", X0: 10, Y0: 10, X1: 100, Y1: 40, Line: 1},
			{Text: "は", X0: 205, Y0: 10, X1: 235, Y1: 40, Line: 1},
		}, "VPN E-205は"},
		{"a caption Tesseract reads last comes first; a gap makes a paragraph", []Word{
			{Text: "本文の一行目", X0: 10, Y0: 200, X1: 300, Y1: 240, Block: 1, Line: 1},
			{Text: "本文の二行目", X0: 10, Y0: 250, X1: 300, Y1: 290, Block: 1, Line: 2},
			{Text: "表題", X0: 10, Y0: 10, X1: 100, Y1: 50, Block: 2, Line: 1},
		}, "表題\n\n本文の一行目\n本文の二行目"},
		{"a wrapped cell's lines stay together", []Word{
			{Text: "エチニルエスト", X0: 100, Y0: 100, X1: 380, Y1: 140, Block: 1, Line: 1},
			{Text: "ラジオール", X0: 100, Y0: 145, X1: 300, Y1: 185, Block: 1, Line: 2},
			{Text: "50000単位", X0: 600, Y0: 122, X1: 760, Y1: 162, Block: 2, Line: 1},
		}, "エチニルエスト\nラジオール\n50000単位"},
		{"rules and hyphens", []Word{
			{Text: "|", X0: 5, Y0: 10, X1: 8, Y1: 40},
			{Text: "表1一2", X0: 10, Y0: 10, X1: 100, Y1: 40},
			{Text: "|", X0: 120, Y0: 10, X1: 123, Y1: 40},
			{Text: "E", X0: 130, Y0: 10, X1: 150, Y1: 40},
			{Text: "ー", X0: 150, Y0: 20, X1: 170, Y1: 25},
			{Text: "310", X0: 170, Y0: 10, X1: 230, Y1: 40},
			{Text: "の一部", X0: 230, Y0: 10, X1: 300, Y1: 40},
			{Text: "2ーエチルヘキシル", X0: 300, Y0: 10, X1: 500, Y1: 40},
		}, "表1-2 E-310の一部2-エチルヘキシル"},
		{"nothing", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ReadingOrder(tt.words); got != tt.want {
				t.Errorf("ReadingOrder = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPhrases(t *testing.T) {
	got := Phrases([]Word{
		{Text: "セキ", X0: 0, Y0: 5, X1: 60, Y1: 35, Line: 1},
		{Text: "ュリ", X0: 61, Y0: 8, X1: 120, Y1: 35, Line: 1},
		{Text: "一", X0: 122, Y0: 18, X1: 150, Y1: 22, Line: 1},
		{Text: "VPN", X0: 400, Y0: 5, X1: 480, Y1: 35, Line: 1},
		{Text: "E-310", X0: 482, Y0: 5, X1: 560, Y1: 35, Line: 1},
		{Text: "次", X0: 0, Y0: 50, X1: 30, Y1: 80, Line: 2},
	})
	want := []Word{
		{Text: "セキュリ一", X0: 0, Y0: 5, X1: 150, Y1: 35, Line: 1},
		{Text: "VPN E-310", X0: 400, Y0: 5, X1: 560, Y1: 35, Line: 1},
		{Text: "次", X0: 0, Y0: 50, X1: 30, Y1: 80, Line: 2},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Phrases =\n%+v\nwant\n%+v", got, want)
	}
}
