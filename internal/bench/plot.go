package bench

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Plot size of WriteCurvePNG, in pixels.
const (
	PlotWidth  = 1200
	PlotHeight = 860
)

// series is one line of a panel.
type series struct {
	name string
	col  color.RGBA
	ys   []float64
}

// panel is one chart: lines over the same x values (chunks).
type panel struct {
	title string
	unit  string
	lines []series
	notes []string // one per x value, written above the x axis
}

var (
	colBlue   = color.RGBA{31, 119, 180, 255}
	colOrange = color.RGBA{255, 127, 14, 255}
	colGreen  = color.RGBA{44, 160, 44, 255}
	colRed    = color.RGBA{214, 39, 40, 255}
	colGrey   = color.RGBA{200, 200, 200, 255}
	colText   = color.RGBA{30, 30, 30, 255}
)

// WriteCurvePNG draws the curve as four charts over the number of chunks —
// query latency, peak memory, build throughput, load time — and writes a
// PlotWidth × PlotHeight PNG. Drawn with the standard library and
// x/image's fixed 7×13 font, so no plotting dependency is needed.
func WriteCurvePNG(w io.Writer, c ScaleCurve) error {
	xs := make([]float64, len(c.Points))
	pick := func(f func(p ScalePoint) float64) []float64 {
		ys := make([]float64, len(c.Points))
		for i, p := range c.Points {
			ys[i] = f(p)
		}
		return ys
	}
	for i, p := range c.Points {
		xs[i] = float64(p.Chunks)
	}
	panels := []panel{
		{"query latency (one process, warm)", "ms", []series{
			{"hybrid p95", colBlue, pick(func(p ScalePoint) float64 { return p.Hybrid.P95 })},
			{"hybrid p50", colGreen, pick(func(p ScalePoint) float64 { return p.Hybrid.P50 })},
			{"vector leg p95", colOrange, pick(func(p ScalePoint) float64 { return p.Vector.P95 })},
			{"BM25 leg p95", colRed, pick(func(p ScalePoint) float64 { return p.BM25.P95 })},
		}, loads(c.Points)},
		{"peak RSS", "MiB", []series{
			{"build", colRed, pick(func(p ScalePoint) float64 { return p.BuildPeakRSSMiB })},
			{"query process", colBlue, pick(func(p ScalePoint) float64 { return p.QueryRSSMiB })},
			{"load only", colGreen, pick(func(p ScalePoint) float64 { return p.LoadRSSMiB })},
		}, nil},
		{"build throughput (whole child process)", "chunks/s", []series{
			{"build", colBlue, pick(func(p ScalePoint) float64 { return p.BuildChunksPerSec })},
		}, nil},
		{"load in a fresh process", "s", []series{
			{"process wall", colBlue, pick(func(p ScalePoint) float64 { return p.LoadSeconds })},
			{"index.Open", colOrange, pick(func(p ScalePoint) float64 { return p.LoadOpenSeconds })},
		}, nil},
	}
	img := image.NewRGBA(image.Rect(0, 0, PlotWidth, PlotHeight))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	title := fmt.Sprintf("shirube bench scale - %s, %d queries, k = %d", c.Machine.Line(), c.Queries, c.K)
	label(img, 12, 20, title, colText)
	const top, gap = 34, 10
	pw, ph := (PlotWidth-3*gap)/2, (PlotHeight-top-2*gap)/2
	for i, p := range panels {
		x0 := gap + (i%2)*(pw+gap)
		y0 := top + (i/2)*(ph+gap)
		drawPanel(img, image.Rect(x0, y0, x0+pw, y0+ph), p, xs)
	}
	return png.Encode(w, img)
}

// loads labels each point with the 1-minute load average measured at its
// end, since latencies on a shared machine depend on it.
func loads(ps []ScalePoint) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		if f := strings.Fields(p.LoadAvg); len(f) > 0 {
			out[i] = "load " + f[0]
		}
	}
	return out
}

// drawPanel draws axes, ticks, grid, lines with markers and a legend into r.
func drawPanel(img *image.RGBA, r image.Rectangle, p panel, xs []float64) {
	const left, right, top, bottom = 64, 14, 24, 34
	plot := image.Rect(r.Min.X+left, r.Min.Y+top, r.Max.X-right, r.Max.Y-bottom)
	label(img, r.Min.X+left, r.Min.Y+15, p.title+" ("+p.unit+")", colText)
	xmax, ymax := 0.0, 0.0
	for _, x := range xs {
		xmax = math.Max(xmax, x)
	}
	for _, s := range p.lines {
		for _, y := range s.ys {
			ymax = math.Max(ymax, y)
		}
	}
	xstep, ystep := niceStep(xmax), niceStep(ymax)
	xtop, ytop := xstep*math.Ceil(xmax/xstep), ystep*math.Ceil(ymax/ystep)
	if xmax == 0 {
		xtop = xstep
	}
	if ymax == 0 {
		ytop = ystep
	}
	px := func(x float64) int { return plot.Min.X + int(math.Round(x/xtop*float64(plot.Dx()))) }
	py := func(y float64) int { return plot.Max.Y - int(math.Round(y/ytop*float64(plot.Dy()))) }
	for v := 0.0; v <= ytop+ystep/2; v += ystep {
		y := py(v)
		hline(img, plot.Min.X, plot.Max.X, y, colGrey)
		s := tickLabel(v)
		label(img, plot.Min.X-6-7*len(s), y+4, s, colText)
	}
	for v := 0.0; v <= xtop+xstep/2; v += xstep {
		x := px(v)
		vline(img, x, plot.Min.Y, plot.Max.Y, colGrey)
		s := tickLabel(v)
		label(img, x-7*len(s)/2, plot.Max.Y+16, s, colText)
	}
	label(img, plot.Max.X-42, plot.Max.Y+30, "chunks", colText)
	for i, n := range p.notes {
		if i < len(xs) && n != "" {
			label(img, px(xs[i])-7*len(n)/2, plot.Max.Y-6, n, colText)
		}
	}
	hline(img, plot.Min.X, plot.Max.X, plot.Max.Y, colText)
	vline(img, plot.Min.X, plot.Min.Y, plot.Max.Y, colText)
	for li, s := range p.lines {
		for i := range xs {
			x, y := px(xs[i]), py(s.ys[i])
			fill(img, image.Rect(x-3, y-3, x+4, y+4), s.col)
			if i > 0 {
				line(img, px(xs[i-1]), py(s.ys[i-1]), x, y, s.col)
			}
		}
		ly := plot.Min.Y + 8 + 16*li
		fill(img, image.Rect(plot.Min.X+10, ly-4, plot.Min.X+26, ly), s.col)
		label(img, plot.Min.X+32, ly+3, s.name, colText)
	}
}

// niceStep is a 1-2-5 tick spacing giving about five ticks up to max.
func niceStep(max float64) float64 {
	if max <= 0 {
		return 1
	}
	raw := max / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// tickLabel writes a tick value compactly: 250k, 1.5M, 12, 0.5.
func tickLabel(v float64) string {
	switch {
	case v >= 1e6:
		return trimZero(fmt.Sprintf("%.1f", v/1e6)) + "M"
	case v >= 1e4:
		return trimZero(fmt.Sprintf("%.1f", v/1e3)) + "k"
	case v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case v >= 0.1:
		return trimZero(fmt.Sprintf("%.2f", v))
	}
	return trimZero(fmt.Sprintf("%.3f", v))
}

// trimZero drops trailing zeros after a decimal point: "1.50" → "1.5".
func trimZero(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func label(img *image.RGBA, x, y int, s string, c color.RGBA) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	draw.Draw(img, r.Intersect(img.Bounds()), image.NewUniform(c), image.Point{}, draw.Src)
}

func hline(img *image.RGBA, x0, x1, y int, c color.RGBA) {
	for x := x0; x <= x1; x++ {
		img.SetRGBA(x, y, c)
	}
}

func vline(img *image.RGBA, x, y0, y1 int, c color.RGBA) {
	for y := y0; y <= y1; y++ {
		img.SetRGBA(x, y, c)
	}
}

// line draws a 2-pixel-wide segment (Bresenham).
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	err := dx + dy
	for {
		img.SetRGBA(x0, y0, c)
		img.SetRGBA(x0+1, y0, c)
		img.SetRGBA(x0, y0+1, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * err
		if e2 >= dy {
			err += dy
			x0 += sx
		}
		if e2 <= dx {
			err += dx
			y0 += sy
		}
	}
}

func abs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}

func sign(a int) int {
	switch {
	case a > 0:
		return 1
	case a < 0:
		return -1
	}
	return 0
}
