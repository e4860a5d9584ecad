package main

import (
	"testing"

	"github.com/shirube/shirube/internal/ocr"
)

func TestParsePictureBoxes(t *testing.T) {
	xml := `<page number="3" position="absolute" top="0" left="0" height="841" width="595">
<text top="40" left="62" width="100" height="12" font="0">title</text>
<image top="473" left="62" width="470" height="190" src="p-3_1.png"/>
</page>
<page number="4" position="absolute" top="0" left="0" height="841" width="595">
</page>`
	got := parsePictureBoxes(xml)
	if len(got) != 1 || len(got[3]) != 1 {
		t.Fatalf("got %v, want one picture on page 3", got)
	}
	b := got[3][0]
	px := 300.0 / 72
	if b.x0 != 62*px || b.y0 != 473*px || b.x1 != 532*px || b.y1 != 663*px {
		t.Errorf("box %+v", b)
	}
}

// TestBodyText: words whose centre is inside a picture are left out of
// the body text and counted; the rest keep their reading order.
func TestBodyText(t *testing.T) {
	w := func(text string, x0, y0, line int) ocr.Word {
		return ocr.Word{Text: text, X0: x0, Y0: y0, X1: x0 + 30*len([]rune(text)), Y1: y0 + 30, Block: 1, Par: 1, Line: line, Conf: 90}
	}
	words := []ocr.Word{w("本文です", 100, 100, 1), w("図の文字", 500, 500, 2), w("続きです", 100, 900, 3)}
	tests := []struct {
		name     string
		pictures []box
		vertical bool
		want     string
		left     int
	}{
		{"no picture", nil, false, "本文です\n\n図の文字\n\n続きです", 0},
		{"a picture around the middle word", []box{{400, 400, 800, 600}}, false, "本文です\n\n続きです", 4},
		{"a picture elsewhere", []box{{1000, 1000, 1200, 1200}}, false, "本文です\n\n図の文字\n\n続きです", 0},
		{"vertical page kept whole", []box{{400, 400, 800, 600}}, true, "whole", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &page{words: words, pictures: tc.pictures, vertical: tc.vertical, got: ocr.ReadingOrder(words)}
			if tc.vertical {
				p.got = "whole"
			}
			got, left := bodyText(p)
			if got != tc.want || left != tc.left {
				t.Errorf("bodyText = %q, %d; want %q, %d", got, left, tc.want, tc.left)
			}
		})
	}
}
