package web

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	cdpio "github.com/chromedp/cdproto/io"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
)

// firstPaintRuns makes TestFirstPaint open the chat page in that many
// fresh browsers (each a new process with an empty profile) and log what
// each measured:
//
//	go test ./internal/web -run TestFirstPaint -firstpaint 8 -v
var firstPaintRuns = flag.Int("firstpaint", 0, "open the page in this many fresh browsers and log first paint (TestFirstPaint)")

// firstPaintURLs adds running servers to TestFirstPaint, measured in the
// same rounds (the same machine load) as the test's own page, e.g. two
// builds side by side:
//
//	-firstpaint-urls old=http://127.0.0.1:18081/,new=http://127.0.0.1:18082/
var firstPaintURLs = flag.String("firstpaint-urls", "", "name=url,… of further pages for TestFirstPaint")

// firstPaintTrace makes TestFirstPaint record, instead of the timed runs,
// one Chromium trace of a cold load of each page (a fresh browser, the
// Tracing domain over chromedp) into the folder — <page>.json, for
// Perfetto or chrome://tracing — and log what came before the first
// contentful paint in each (font look-ups, script, layout, raster):
//
//	go test ./internal/web -run TestFirstPaint -firstpaint-trace /tmp/fp -v
var firstPaintTrace = flag.String("firstpaint-trace", "", "folder: record a Chromium trace of one cold load of each page (TestFirstPaint)")

// TestFirstPaint logs, for each fresh browser, the chat page's first
// contentful paint and what came before it, beside a bare Japanese page
// served the same way (the browser's own floor on this machine), then the
// median and range of each. Figures, not assertions: the machine's load
// moves them.
func TestFirstPaint(t *testing.T) {
	skipWithoutBrowser(t)
	if *firstPaintRuns <= 0 && *firstPaintTrace == "" {
		t.Skip("first paint is measured only with -firstpaint N or -firstpaint-trace DIR")
	}
	f := newFixture(t, fixtureOptions{})
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><html lang="ja"><head><meta charset="utf-8"><title>しるべ</title></head><body><h1>しるべ 手順書アシスタント</h1><p>手順書について質問できます</p></body></html>`))
	}))
	t.Cleanup(bare.Close)
	const measure = `(() => { const nav = performance.getEntriesByType('navigation')[0];
		const fcp = performance.getEntriesByName('first-contentful-paint')[0];
		const res = performance.getEntriesByType('resource').filter(r => !r.name.includes('/api/'));
		const blocking = res.filter(r => r.renderBlockingStatus === 'blocking');
		return {FCP: fcp.startTime, Response: nav.responseEnd, Bytes: nav.transferSize + res.reduce((n, r) => n + r.transferSize, 0), Requests: 1 + res.length,
			Blocking: blocking.map(r => r.name.replace(location.origin, '')),
			Blocked: Math.max(0, ...blocking.map(r => r.responseEnd - nav.responseEnd))}; })()`
	type figures struct {
		FCP, Response   float64
		Bytes, Requests int
		Blocking        []string
		Blocked         float64
	}
	type target struct{ name, url string }
	targets := []target{{"chat page", f.ts.URL + "/"}, {"bare page", bare.URL + "/"}}
	for _, nu := range strings.Split(*firstPaintURLs, ",") {
		if name, url, ok := strings.Cut(nu, "="); ok {
			targets = append(targets, target{name, url})
		}
	}
	if *firstPaintTrace != "" {
		for _, tg := range targets {
			out := filepath.Join(*firstPaintTrace, strings.ReplaceAll(tg.name, " ", "_")+".json")
			sum := traceFirstPaint(t, tg.url, out)
			t.Logf("%s (%s): %s", tg.name, out, sum)
		}
		return
	}
	fcps, blocked := map[string][]float64{}, map[string][]float64{}
	for i := range *firstPaintRuns {
		// Each round starts with another page, so that none is always
		// measured right after the same one.
		round := append(slices.Clone(targets[i%len(targets):]), targets[:i%len(targets)]...)
		for _, target := range round {
			p := newBrowser(t, target.url, 1440, 900)
			p.until("painted", `document.readyState === 'complete' && performance.getEntriesByName('first-contentful-paint').length > 0`)
			var fig figures
			p.eval(measure, &fig)
			t.Logf("run %d %s: first contentful paint %.0f ms (HTML in at %.0f ms), %d B in %d requests, render-blocking %q (waited for %.0f ms after the HTML)",
				i+1, target.name, fig.FCP, fig.Response, fig.Bytes, fig.Requests, fig.Blocking, fig.Blocked)
			blocked[target.name] = append(blocked[target.name], fig.Blocked)
			fcps[target.name] = append(fcps[target.name], fig.FCP)
			p.close()
		}
	}
	for _, tg := range targets {
		name := tg.name
		v := fcps[name]
		slices.Sort(v)
		b := blocked[name]
		slices.Sort(b)
		t.Logf("%s: first contentful paint median %.0f ms, range %.0f–%.0f ms over %d fresh browsers; render-blocking wait after the HTML median %.0f ms",
			name, v[len(v)/2], v[0], v[len(v)-1], len(v), b[len(b)/2])
	}
}

// traceFirstPaint opens url in a fresh browser with Chromium's tracing on,
// writes the trace to out and summarises what the page's renderer did
// before its first contentful paint.
func traceFirstPaint(t *testing.T, url, out string) string {
	t.Helper()
	p := newBrowser(t, "about:blank", 1440, 900)
	defer p.close()
	p.do("start tracing", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, tracing.Start, tracing.StartParams{
			TransferMode: tracing.StartTransferModeReturnAsStream,
			TraceConfig: &tracing.TraceConfig{IncludedCategories: []string{
				"devtools.timeline", "disabled-by-default-devtools.timeline", "blink", "cc", "loading", "fonts",
				"toplevel", "v8", "benchmark", "viz", "navigation", "renderer", "blink.user_timing",
			}}})
		return err
	}))
	p.do("open "+url, chromedp.Navigate(url))
	p.until("painted", `document.readyState === 'complete' && performance.getEntriesByName('first-contentful-paint').length > 0`)
	var trace bytes.Buffer
	p.do("stop tracing", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		done := cdp.Events(ctx, tg, tracing.TracingComplete) // subscribed before End
		if _, err := cdp.Call(ctx, tg, tracing.End, cdp.Empty{}); err != nil {
			return err
		}
		var stream cdpio.StreamHandle
		for ev, err := range done {
			if err != nil {
				return err
			}
			stream = ev.Stream
			break
		}
		for {
			r, err := cdp.Call(ctx, tg, cdpio.Read, cdpio.ReadParams{Handle: stream})
			if err != nil {
				return err
			}
			trace.Write(r.Data)
			if r.EOF {
				break
			}
		}
		_, err := cdp.Call(ctx, tg, cdpio.Close, cdpio.CloseParams{Handle: stream})
		return err
	}))
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, trace.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Name, Ph string
			Pid      int
			Ts, Dur  float64
			Tdur     float64
			Args     struct {
				FamilyName string `json:"family_name"`
			}
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(trace.Bytes(), &doc); err != nil {
		t.Fatalf("read the trace: %v", err)
	}
	// The renderer of the page is the process that marked its first
	// contentful paint; what counts is what it did from the navigation's
	// start (marked by the renderer it started in) to that mark.
	var pid int
	var start, fcp float64
	for _, e := range doc.TraceEvents {
		if e.Name == "firstContentfulPaint" {
			pid, fcp = e.Pid, e.Ts
		}
	}
	for _, e := range doc.TraceEvents {
		if e.Name == "navigationStart" && e.Ts <= fcp && e.Ts > start {
			start = e.Ts
		}
	}
	if pid == 0 || start == 0 {
		return "no first contentful paint in the trace"
	}
	type tally struct {
		n         int
		wall, cpu float64
	}
	sums := map[string]*tally{}
	var families []string
	for _, e := range doc.TraceEvents {
		if e.Pid != pid || e.Ph != "X" || e.Ts < start || e.Ts > fcp {
			continue
		}
		if sums[e.Name] == nil {
			sums[e.Name] = &tally{}
		}
		s := sums[e.Name]
		s.n++
		s.wall += e.Dur / 1000
		s.cpu += e.Tdur / 1000
		if e.Name == "FontDataManager::onMatchFamilyStyle" {
			families = append(families, e.Args.FamilyName)
		}
	}
	get := func(name string) tally {
		if s := sums[name]; s != nil {
			return *s
		}
		return tally{}
	}
	font, strikes, fallback := get("FontCache::GetFontPlatformData"), get("WebSandboxSupportLinux::GetWebFontRenderStyleForStrike"), get("FontCache::FallbackFontForCharacter")
	script, layout, raster := get("EvaluateScript"), get("Layout"), get("RasterTask")
	return fmt.Sprintf("first contentful paint %.0f ms; font look-ups %d (%.0f ms waiting): %d strikes, %d fallback searches, families %q; "+
		"script %.0f ms (%.0f ms CPU); layout %.0f ms (%.0f ms CPU); %d raster tasks %.0f ms (%.0f ms CPU)",
		(fcp-start)/1000, font.n, font.wall, strikes.n, fallback.n, families, script.wall, script.cpu, layout.wall, layout.cpu, raster.n, raster.wall, raster.cpu)
}
