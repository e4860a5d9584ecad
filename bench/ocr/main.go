// Command ocr measures shirube's OCR: the character error rate (CER) of
// image-only PDFs against the text layer of the originals, per document
// and overall, the CER of image fixtures against their known text, and
// the speed in pages per second.
//
// Usage:
//
//	go run ./bench/ocr -originals ../shared/datasets/pdf-ja -images /tmp/ocr-imgpdf \
//	    [-fixture internal/document/testdata/ocr/vertical.png=TEXTFILE] [-workers 2] [-cache DIR]
//
// The image-only PDFs come from bench/ocr/make-image-pdfs.sh (same file
// names). Each page is rendered with pdftoppm at 300 dpi (8-bit grey,
// handed to Tesseract as TIFF: document.OCRPageImage) and read by
// internal/ocr exactly as `shirube index` does (-batch pages of a
// document per tesseract run, reading order and clean-up from the word
// boxes); the reference is `pdftotext -raw` of the original page. Pages
// whose text layer is empty are left out. The figures, each over the
// reference's characters:
//
//   - CER: NFKC, white space removed, Levenshtein distance of the whole
//     page (the metric). "CER, Tesseract's order" is the same for
//     the text in Tesseract's own block order (the first OCR benchmark's
//     text), for comparison.
//   - CER w/o leaders: runs of three or more dot leaders or rules
//     (. ・ … ‥ · ー - _ ― ─) removed from both sides first; a table of
//     contents and a form's fill-in lines are full of them, and they are
//     no text.
//   - line-move CER w/o leaders: as CER w/o leaders, but whole lines of
//     the reference may stand anywhere in the reading at no cost
//     (ocr.AlignLines): a text layer's order is the order the page was
//     drawn in, which is arbitrary for a chart's labels, a caption or a
//     page header; every misread, missing or extra character still counts.
//   - order-free CER: characters as a multiset, max(reference characters
//     OCR lacks, OCR characters the reference lacks): no order at all.
//   - body-text CER: the line-move CER w/o leaders of the reading without
//     the words whose centre lies inside a raster image of the original
//     page (the <image> boxes of pdftohtml -xml: photos, scanned forms,
//     charts drawn as pictures, whose text the text layer does not have).
//     Computed from the page alone — where its pictures are — never from
//     where the reading differs from the reference; the reference is kept
//     whole (text it has inside a picture counts as missing), vector
//     drawings are not pictures, and the OCR characters left out are
//     reported beside it. It measures the text a reader reads as running
//     text and tables: not leaders, not text in pictures, not the order of
//     page furniture (headers, captions).
//
// A second table splits the CER's edits by cause: leaders and rules, reading
// order, text the text layer lacks (text in pictures, or noise), text OCR
// lacks, and misread characters (of which punctuation and symbols).
// -pages FILE writes every page's figures; -dump DIR each page's two
// texts; -tsv DIR takes saved Tesseract TSV (DIR/X-pN.tsv) instead of
// running it, to try layout changes. With -cache, results are cached there
// (a second run is free; use a fresh folder to time OCR).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/ocr"
)

type page struct {
	images   bool  // the original page holds a raster image, whose text its text layer lacks
	pictures []box // where the original page draws its raster images, in pixels of the page image
	words    []ocr.Word
	doc      string
	n        int
	ref, got string
	tess     string // Tesseract's own order (the first OCR benchmark's text)
	conf     float64
	vertical bool
	err      error
}

// set records a reading of p.
func (p *page) set(r ocr.Result, err error) {
	p.got, p.conf, p.vertical, p.err = r.Text, r.Confidence, r.Vertical, err
	p.words = r.Words
	p.tess = ocr.TesseractOrder(r.Words)
}

func main() {
	originals := flag.String("originals", "../shared/datasets/pdf-ja", "folder of the original PDFs (text layer = reference)")
	images := flag.String("images", "", "folder of the image-only PDFs, same names")
	workers := flag.Int("workers", 2, "pages read at once")
	cache := flag.String("cache", "", "OCR cache folder (empty: none)")
	threads := flag.Int("threads", 1, "OMP_THREAD_LIMIT per tesseract")
	pagesOut := flag.String("pages", "", "write per-page CER lines (TSV) to this file")
	dumpDir := flag.String("dump", "", "write each page's reference and reading to DIR/X-pN.{ref,got}.txt")
	batch := flag.Int("batch", 8, "pages of one document read by one tesseract run (1: a run per page, as before)")
	tsvDir := flag.String("tsv", "", "read Tesseract's TSV for page N of X.pdf from DIR/X-pN.tsv instead of running it (to try layout changes on saved readings)")
	var fixtures []string
	flag.Func("fixture", "IMAGE=TEXTFILE: an image and its exact text (repeatable)", func(s string) error {
		fixtures = append(fixtures, s)
		return nil
	})
	flag.Parse()
	ctx := context.Background()
	eng := ocr.New(ocr.Options{CacheDir: *cache, Threads: *threads})
	if err := eng.Check(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}

	type job struct {
		p   *page
		img func() ([]byte, error)
	}
	var jobs []job
	var pages []*page
	if *images != "" {
		pdfs, _ := filepath.Glob(filepath.Join(*originals, "*.pdf"))
		sort.Strings(pdfs)
		for _, orig := range pdfs {
			name := filepath.Base(orig)
			img := filepath.Join(*images, name)
			refs, err := textLayer(ctx, orig)
			withImages := imagePages(ctx, orig)
			pictures := pictureBoxes(ctx, orig)
			if err != nil {
				fmt.Fprintln(os.Stderr, name, err)
				continue
			}
			for i, ref := range refs {
				if strings.TrimSpace(ref) == "" {
					continue
				}
				p := &page{doc: name, n: i + 1, ref: ref, images: withImages[i+1], pictures: pictures[i+1]}
				pages = append(pages, p)
				n := i + 1
				jobs = append(jobs, job{p, func() ([]byte, error) { return document.OCRPageImage(ctx, img, n) }})
			}
		}
	}
	for _, f := range fixtures {
		img, txt, ok := strings.Cut(f, "=")
		if !ok {
			fmt.Fprintln(os.Stderr, "-fixture wants IMAGE=TEXTFILE")
			os.Exit(2)
		}
		ref, err := os.ReadFile(txt)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		p := &page{doc: filepath.Base(img), n: 1, ref: string(ref)}
		pages = append(pages, p)
		jobs = append(jobs, job{p, func() ([]byte, error) { return os.ReadFile(img) }})
	}

	start := time.Now()
	self0, children0 := cpuTimes()
	// Pages go to the workers in groups of -batch pages of one document,
	// each group read by one tesseract run as shirube index does.
	var groups [][]job
	for _, j := range jobs {
		n := len(groups)
		if n > 0 && len(groups[n-1]) < *batch && groups[n-1][0].p.doc == j.p.doc {
			groups[n-1] = append(groups[n-1], j)
			continue
		}
		groups = append(groups, []job{j})
	}
	ch := make(chan []job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range ch {
				var imgs [][]byte
				var read []*page
				for _, j := range g {
					if *tsvDir != "" && strings.HasSuffix(j.p.doc, ".pdf") {
						r, err := savedTSV(*tsvDir, j.p.doc, j.p.n)
						j.p.set(r, err)
						continue
					}
					img, err := j.img()
					if err != nil {
						j.p.err = err
						continue
					}
					imgs = append(imgs, img)
					read = append(read, j.p)
				}
				if len(imgs) == 1 {
					r, err := eng.Recognize(ctx, imgs[0], 0)
					read[0].set(r, err)
				} else if len(imgs) > 1 {
					rs, errs := eng.RecognizeBatch(ctx, imgs)
					for k, p := range read {
						p.set(rs[k], errs[k])
					}
				}
				mu.Lock()
				done += len(g)
				fmt.Fprintf(os.Stderr, "\r%d/%d pages", done, len(jobs))
				mu.Unlock()
			}
		}()
	}
	for _, g := range groups {
		ch <- g
	}
	close(ch)
	wg.Wait()
	took := time.Since(start)
	self1, children1 := cpuTimes()
	fmt.Fprintln(os.Stderr)

	type agg struct {
		dist, dist2, distT, bag, ref, ref2, pages, failed, vertical int
		body, bodyLeft                                              int // body-text CER edits; OCR characters left out as text in pictures
		al                                                          ocr.LineAlignment
		cers                                                        []float64
	}
	add := func(x *agg, p *page) {
		ref, got := norm(p.ref), norm(p.got)
		d := ocr.EditDistance(got, ref)
		x.dist += d
		x.distT += ocr.EditDistance(norm(p.tess), ref)
		x.bag += bagDistance(got, ref)
		x.cers = append(x.cers, float64(d)/float64(max(len(ref), 1)))
		x.ref += len(ref)
		ref2, got2 := noLeaders(ref), noLeaders(got)
		x.dist2 += ocr.EditDistance(got2, ref2)
		x.ref2 += len(ref2)
		al := ocr.AlignLines(normLines(p.ref, true), normLines(p.got, true))
		x.al.Edits += al.Edits
		x.al.Missing += al.Missing
		x.al.Extra += al.Extra
		x.al.Within += al.Within
		x.al.WithinPunct += al.WithinPunct
		body, left := bodyText(p)
		x.body += ocr.AlignLines(normLines(p.ref, true), normLines(body, true)).Edits
		x.bodyLeft += left
		x.pages++
		if p.err != nil {
			x.failed++
		}
		if p.vertical {
			x.vertical++
		}
	}
	var perPage strings.Builder
	perPage.WriteString("document\tpage\tref_chars\tcer\ttesseract_order_cer\tline_move_cer\torder_free_cer\tmissing\textra\twithin\twithin_punct\tconfidence\tbody_cer\n")
	byDoc := map[string]*agg{}
	var order []string
	total := &agg{}
	text := &agg{}
	for _, p := range pages {
		a := byDoc[p.doc]
		if a == nil {
			a = &agg{}
			byDoc[p.doc] = a
			order = append(order, p.doc)
		}
		one := &agg{}
		for _, x := range []*agg{a, total, one} {
			add(x, p)
		}
		if !p.images && strings.HasSuffix(p.doc, ".pdf") {
			add(text, p)
		}
		r := float64(max(one.ref, 1))
		fmt.Fprintf(&perPage, "%s\t%d\t%d\t%.4f\t%.4f\t%.4f\t%.4f\t%d\t%d\t%d\t%d\t%.1f\t%.4f\n", p.doc, p.n, one.ref,
			float64(one.dist)/r, float64(one.distT)/r, float64(one.al.Edits)/float64(max(one.ref2, 1)), float64(one.bag)/r,
			one.al.Missing, one.al.Extra, one.al.Within, one.al.WithinPunct, p.conf, float64(one.body)/float64(max(one.ref2, 1)))
		if p.err != nil {
			fmt.Fprintf(os.Stderr, "%s p.%d: %v\n", p.doc, p.n, p.err)
		}
		if *dumpDir != "" {
			base := filepath.Join(*dumpDir, fmt.Sprintf("%s-p%d", strings.TrimSuffix(p.doc, filepath.Ext(p.doc)), p.n))
			os.WriteFile(base+".ref.txt", []byte(p.ref), 0o644)
			os.WriteFile(base+".got.txt", []byte(p.got), 0o644)
		}
	}
	if *pagesOut != "" {
		if err := os.WriteFile(*pagesOut, []byte(perPage.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	pct := func(n, d int) string { return fmt.Sprintf("%.2f %%", 100*float64(n)/float64(max(d, 1))) }
	fmt.Println("| document | pages | read as vertical | failed | reference chars | CER, Tesseract's order | CER | CER w/o leaders | line-move CER w/o leaders | order-free CER | median page CER | body-text CER | OCR chars in pictures |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	row := func(name string, a *agg) {
		sort.Float64s(a.cers)
		fmt.Printf("| %s | %d | %d | %d | %d | %s | %s | %s | %s | %s | %.2f %% | %s | %d |\n", name, a.pages, a.vertical, a.failed, a.ref,
			pct(a.distT, a.ref), pct(a.dist, a.ref), pct(a.dist2, a.ref2), pct(a.al.Edits, a.ref2), pct(a.bag, a.ref), 100*a.cers[len(a.cers)/2],
			pct(a.body, a.ref2), a.bodyLeft)
	}
	for _, d := range order {
		row(d, byDoc[d])
	}
	row("**all**", total)
	if text.pages > 0 {
		row("PDF pages without raster images", text)
	}
	fmt.Println("\nWhere the edits of the CER come from, in % of the reference characters: leaders and rules (CER − CER w/o leaders), reading order")
	fmt.Println("(CER w/o leaders − line-move edits w/o leaders), then the line-move alignment's extra, missing and misread characters:")
	fmt.Println("\n| document | CER | leaders, rules | reading order | text the text layer lacks (extra) | text OCR lacks (missing) | misread in matched lines | of which punctuation, symbols |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	brk := func(name string, a *agg) {
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", name, pct(a.dist, a.ref), pct(a.dist-a.dist2, a.ref), pct(a.dist2-a.al.Edits, a.ref),
			pct(a.al.Extra, a.ref), pct(a.al.Missing, a.ref), pct(a.al.Within, a.ref), pct(a.al.WithinPunct, a.ref))
	}
	for _, d := range order {
		brk(d, byDoc[d])
	}
	brk("**all**", total)
	if text.pages > 0 {
		brk("PDF pages without raster images", text)
	}
	runs := eng.Runs()
	cpu := eng.CPUTime().Seconds()
	rcpu := (children1 - children0).Seconds() - cpu
	scpu := (self1 - self0).Seconds()
	per := func(x float64) float64 { return x / float64(max(len(jobs), 1)) }
	fmt.Printf("\n%d pages in %.1f s with %d workers (OMP_THREAD_LIMIT=%d, -batch %d): %.3f pages/s; %d tesseract runs, %.1f CPU s (%.2f CPU s per page read); page images (pdftoppm) %.1f CPU s (%.2f per page); this process %.1f CPU s (%.2f per page)\n",
		len(jobs), took.Seconds(), *workers, *threads, *batch, float64(len(jobs))/took.Seconds(), runs, cpu, per(cpu), rcpu, per(rcpu), scpu, per(scpu))
}

// leaders matches a run of dot leaders.
var leaders = regexp.MustCompile(`[.・･…‥·ー\-_―─]{3,}`)

// noLeaders is s (normalised) without runs of dot leaders; after NFKC and
// with white space gone, so that spaced leaders (". . . .") are runs too.
func noLeaders(s []rune) []rune {
	return []rune(leaders.ReplaceAllString(string(s), ""))
}

// normLines is s line by line, each normalised (norm) and, with
// dropLeaders, without runs of leaders (noLeaders); empty lines are left
// out.
func normLines(s string, dropLeaders bool) [][]rune {
	var out [][]rune
	for _, l := range strings.Split(s, "\n") {
		n := norm(l)
		if dropLeaders {
			n = noLeaders(n)
		}
		if len(n) > 0 {
			out = append(out, n)
		}
	}
	return out
}

// savedTSV reads Tesseract's saved TSV for page n of doc (-tsv).
func savedTSV(dir, doc string, n int) (ocr.Result, error) {
	f, err := os.Open(filepath.Join(dir, fmt.Sprintf("%s-p%d.tsv", strings.TrimSuffix(doc, ".pdf"), n)))
	if err != nil {
		return ocr.Result{}, err
	}
	defer f.Close()
	return ocr.ParseTSV(f)
}

// norm is NFKC with white space removed, as runes.
func norm(s string) []rune {
	return []rune(strings.Join(strings.Fields(analysis.Normalize(s)), ""))
}

// bagDistance is the fewest edits from a to b when order does not count:
// the larger of the characters b has that a lacks and those a has that b
// lacks (as multisets).
func bagDistance(a, b []rune) int {
	count := map[rune]int{}
	for _, r := range b {
		count[r]++
	}
	for _, r := range a {
		count[r]--
	}
	var missing, extra int
	for _, c := range count {
		if c > 0 {
			missing += c
		} else {
			extra -= c
		}
	}
	return max(missing, extra)
}

// box is a rectangle in pixels of a 300-dpi page image.
type box struct{ x0, y0, x1, y1 float64 }

// pictureBoxes returns where each page of pdf draws a raster image, from
// pdftohtml -xml (its <image> elements, in points at -zoom 1), in pixels
// at 300 dpi. Vector drawings are not pictures here.
func pictureBoxes(ctx context.Context, pdf string) map[int][]box {
	out := map[int][]box{}
	dir, err := os.MkdirTemp("", "ocrbench-")
	if err != nil {
		return out
	}
	defer os.RemoveAll(dir)
	if err := exec.CommandContext(ctx, "pdftohtml", "-xml", "-zoom", "1", "-q", pdf, filepath.Join(dir, "p")).Run(); err != nil {
		return out
	}
	data, err := os.ReadFile(filepath.Join(dir, "p.xml"))
	if err != nil {
		return out
	}
	return parsePictureBoxes(string(data))
}

var (
	xmlPage  = regexp.MustCompile(`<page number="(\d+)"`)
	xmlImage = regexp.MustCompile(`<image top="([-0-9.]+)" left="([-0-9.]+)" width="([0-9.]+)" height="([0-9.]+)"`)
)

// parsePictureBoxes reads pdftohtml -xml -zoom 1 output (pictureBoxes).
func parsePictureBoxes(xml string) map[int][]box {
	out := map[int][]box{}
	page := 0
	const px = 300.0 / 72
	for _, line := range strings.Split(xml, "\n") {
		if m := xmlPage.FindStringSubmatch(line); m != nil {
			page, _ = strconv.Atoi(m[1])
			continue
		}
		if m := xmlImage.FindStringSubmatch(line); m != nil && page > 0 {
			var v [4]float64
			for i := range v {
				v[i], _ = strconv.ParseFloat(m[i+1], 64)
			}
			out[page] = append(out[page], box{x0: v[1] * px, y0: v[0] * px, x1: (v[1] + v[2]) * px, y1: (v[0] + v[3]) * px})
		}
	}
	return out
}

// bodyText is the page's reading without the words whose centre lies in
// one of the original page's raster images (text in a picture, which the
// text layer does not have), in the same reading order as the whole
// reading, and how many characters were left out. A vertical reading is
// kept whole (none of the pictures is on a vertical page).
func bodyText(p *page) (string, int) {
	if len(p.pictures) == 0 || p.vertical {
		return p.got, 0
	}
	var keep []ocr.Word
	left := 0
	for _, w := range p.words {
		cx, cy := float64(w.X0+w.X1)/2, float64(w.Y0+w.Y1)/2
		in := false
		for _, b := range p.pictures {
			if cx >= b.x0 && cx <= b.x1 && cy >= b.y0 && cy <= b.y1 {
				in = true
				break
			}
		}
		if in {
			left += len([]rune(w.Text))
			continue
		}
		keep = append(keep, w)
	}
	return ocr.ReadingOrder(keep), left
}

// imagePages lists the pages of pdf that hold a raster image (pdfimages
// -list): text in a figure is on the page image but not in the text layer.
func imagePages(ctx context.Context, pdf string) map[int]bool {
	out, _ := exec.CommandContext(ctx, "pdfimages", "-list", pdf).Output()
	pages := map[int]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[2] == "image" {
			if n, err := strconv.Atoi(f[0]); err == nil {
				pages[n] = true
			}
		}
	}
	return pages
}

// textLayer is pdftotext -raw of every page.
func textLayer(ctx context.Context, pdf string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "pdftotext", "-raw", "-enc", "UTF-8", pdf, "-").Output()
	if err != nil {
		return nil, err
	}
	pages := strings.Split(string(out), "\f")
	if len(pages) > 0 && pages[len(pages)-1] == "" {
		pages = pages[:len(pages)-1]
	}
	return pages, nil
}

// cpuTimes is the CPU time (user + system) this process and its finished
// children have used.
func cpuTimes() (self, children time.Duration) {
	var s, c syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &s)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &c)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(s.Utime) + tv(s.Stime), tv(c.Utime) + tv(c.Stime)
}
