package diffeval

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Chart size in pixels.
const (
	ChartWidth  = 1000
	ChartHeight = 560
)

// Chart colours.
var (
	colBackground = color.RGBA{255, 255, 255, 255}
	colText       = color.RGBA{33, 33, 33, 255}
	colGrid       = color.RGBA{224, 224, 224, 255}
	colAxis       = color.RGBA{97, 97, 97, 255}
	colA          = color.RGBA{66, 133, 244, 255} // blue
	colB          = color.RGBA{244, 140, 36, 255} // orange
)

// Chart draws the report's metrics as a grouped bar chart: one group per
// metric, a bar for A and one for B on a 0–100 % scale, the value above
// each bar and B − A under the metric's name. The font is the built-in
// 7×13 bitmap font drawn at double size, so labels are ASCII: metric names
// are English, and non-ASCII characters of configuration names show as "?".
func Chart(rep Report) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, ChartWidth, ChartHeight))
	draw.Draw(img, img.Bounds(), &image.Uniform{colBackground}, image.Point{}, draw.Src)

	const (
		left, right  = 90, 30
		top, bottom  = 110, 140
		plotW, plotH = ChartWidth - left - right, ChartHeight - top - bottom
	)
	title := fmt.Sprintf("diff-eval v0.1: A=%s vs B=%s (%d runs)", ascii(rep.NameA), ascii(rep.NameB), rep.Runs)
	drawText(img, left, 38, title, colText, 2)

	// Legend.
	lx := left
	for _, l := range []struct {
		name string
		c    color.Color
	}{{"A: " + ascii(rep.NameA), colA}, {"B: " + ascii(rep.NameB), colB}} {
		fillRect(img, lx, 58, 24, 24, l.c)
		drawText(img, lx+32, 78, l.name, colText, 2)
		lx += 32 + textWidth(l.name, 2) + 40
	}

	// Grid and y labels every 20 %.
	y0 := top + plotH
	for p := 0; p <= 100; p += 20 {
		y := y0 - p*plotH/100
		c := colGrid
		if p == 0 {
			c = colAxis
		}
		fillRect(img, left, y, plotW, 1, c)
		lab := fmt.Sprintf("%d%%", p)
		drawText(img, left-10-textWidth(lab, 2), y+10, lab, colText, 2)
	}
	fillRect(img, left, top, 1, plotH+1, colAxis)

	n := len(rep.Metrics)
	if n == 0 {
		drawText(img, left+20, top+plotH/2, "no metrics", colText, 2)
		return img
	}
	groupW := plotW / n
	barW := groupW * 3 / 10
	for i, m := range rep.Metrics {
		gx := left + i*groupW
		cx := gx + groupW/2
		for j, v := range []float64{m.A, m.B} {
			c := colA
			x := cx - barW - 2
			if j == 1 {
				c, x = colB, cx+2
			}
			v = math.Max(0, math.Min(1, v))
			h := int(math.Round(v * plotH))
			fillRect(img, x, y0-h, barW, h, c)
			lab := fmt.Sprintf("%.0f%%", 100*v)
			drawText(img, x+(barW-textWidth(lab, 1))/2, y0-h-5, lab, colText, 1)
		}
		y := y0 + 30
		for _, line := range chartLabel(m.Key) {
			drawText(img, cx-textWidth(line, 2)/2, y, line, colText, 2)
			y += 26
		}
		diff := "B-A " + strings.ReplaceAll(pts(m.Diff), "±", "+")
		drawText(img, cx-textWidth(diff, 1)/2, y0+92, diff, colAxis, 1)
		if !m.HigherIsBetter {
			drawText(img, cx-textWidth("(lower=better)", 1)/2, y0+108, "(lower=better)", colAxis, 1)
		}
	}
	return img
}

// chartLabel is the English axis label of a metric key, in lines short
// enough for a bar group.
func chartLabel(key string) []string {
	for _, d := range metricDefs {
		if d.key == key {
			return strings.Split(d.short, "\n")
		}
	}
	return []string{ascii(key)}
}

// ascii replaces every non-ASCII or control character with '?', since the
// bitmap font has only ASCII glyphs.
func ascii(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, s)
}

var face = basicfont.Face7x13

// textWidth is the width in pixels of s drawn at scale.
func textWidth(s string, scale int) int {
	return font.MeasureString(face, s).Ceil() * scale
}

// drawText draws s with its baseline at (x, y), enlarged scale times with
// nearest-neighbour sampling so the bitmap font stays crisp.
func drawText(dst *image.RGBA, x, y int, s string, c color.Color, scale int) {
	w := font.MeasureString(face, s).Ceil()
	asc, desc := face.Ascent, face.Descent
	if w <= 0 {
		return
	}
	mask := image.NewAlpha(image.Rect(0, 0, w, asc+desc))
	d := font.Drawer{Dst: mask, Src: image.Opaque, Face: face, Dot: fixed.P(0, asc)}
	d.DrawString(s)
	src := image.NewUniform(c)
	for my := 0; my < asc+desc; my++ {
		for mx := 0; mx < w; mx++ {
			if mask.AlphaAt(mx, my).A == 0 {
				continue
			}
			r := image.Rect(x+mx*scale, y-asc*scale+my*scale, x+(mx+1)*scale, y-asc*scale+(my+1)*scale)
			draw.Draw(dst, r.Intersect(dst.Bounds()), src, image.Point{}, draw.Over)
		}
	}
}

func fillRect(dst *image.RGBA, x, y, w, h int, c color.Color) {
	if w <= 0 || h <= 0 {
		return
	}
	draw.Draw(dst, image.Rect(x, y, x+w, y+h).Intersect(dst.Bounds()), image.NewUniform(c), image.Point{}, draw.Src)
}
