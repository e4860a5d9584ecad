package web

import (
	"flag"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
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

// TestFirstPaint logs, for each fresh browser, the chat page's first
// contentful paint and what came before it, beside a bare Japanese page
// served the same way (the browser's own floor on this machine), then the
// median and range of each. Figures, not assertions: the machine's load
// moves them.
func TestFirstPaint(t *testing.T) {
	skipWithoutBrowser(t)
	if *firstPaintRuns <= 0 {
		t.Skip("first paint is measured only with -firstpaint N")
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
