// Command probe is the helper of scripts/reliability.sh: it writes a
// hostile PDF, asks a running server a question, and measures a server
// under load. It only ever talks to 127.0.0.1 (or localhost) and every loop
// is bounded in requests and time.
//
//	probe hostile-pdf OUT                    a small PDF that takes readers minutes or hours
//	probe ask URL QUESTION                   POST /api/ask; prints the cited files, one a line
//	probe gen URL                            GET /api/status; prints the generation served
//	probe load URL PATH CLIENTS DURATION     concurrent GETs; prints one JSON line of figures
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: probe hostile-pdf|ask|gen|load …")
	}
	if len(args) > 1 && args[0] != "hostile-pdf" {
		if err := loopbackOnly(args[1]); err != nil {
			return err
		}
	}
	switch {
	case args[0] == "hostile-pdf" && len(args) == 2:
		return os.WriteFile(args[1], hostilePDF(2000), 0o644)
	case args[0] == "ask" && len(args) == 3:
		return ask(args[1], args[2])
	case args[0] == "gen" && len(args) == 2:
		return gen(args[1])
	case args[0] == "load" && len(args) == 5:
		clients, err := strconv.Atoi(args[3])
		if err != nil || clients < 1 || clients > 200 {
			return fmt.Errorf("clients %q: 1–200", args[3])
		}
		d, err := time.ParseDuration(args[4])
		if err != nil || d <= 0 || d > 2*time.Minute {
			return fmt.Errorf("duration %q: up to 2m", args[4])
		}
		return load(args[1], args[2], clients, d)
	}
	return fmt.Errorf("bad arguments %q", args)
}

// loopbackOnly refuses any server but this machine's.
func loopbackOnly(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" {
		return fmt.Errorf("%s: the probe only talks to 127.0.0.1", raw)
	}
	return nil
}

// hostilePDF: pages that all share one 1 MB stream of no-op drawing
// commands (issue 24: a 283 KB file kept pdftotext busy for hours).
func hostilePDF(pages int) []byte {
	ops := strings.Repeat("q Q ", 250_000)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>", "",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(ops), ops),
	}
	var kids []string
	for i := range pages {
		kids = append(kids, fmt.Sprintf("%d 0 R", i+5))
		objs = append(objs, "<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>")
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids))
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

var client = &http.Client{Timeout: 30 * time.Second}

func ask(base, q string) error {
	body, _ := json.Marshal(map[string]string{"question": q})
	req, _ := http.NewRequest("POST", base+"/api/ask", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var out struct {
		Evidence []struct {
			File string `json:"file"`
		} `json:"evidence"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		return fmt.Errorf("ask: %d %v", resp.StatusCode, err)
	}
	for _, e := range out.Evidence {
		fmt.Println(e.File)
	}
	return nil
}

func gen(base string) error {
	resp, err := client.Get(base + "/api/status")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var st struct {
		Index struct {
			Generation int `json:"generation"`
		} `json:"index"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return err
	}
	fmt.Println(st.Index.Generation)
	return nil
}

// load runs clients loops of GET base+path for d and prints the figures:
// requests, per second, 200s, 503s, errors, and the latency of the 200s.
func load(base, path string, clients int, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var mu sync.Mutex
	var lat []time.Duration
	var ok, busy, errs int
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
				t := time.Now()
				resp, err := c.Do(req)
				took := time.Since(t)
				if err != nil {
					if ctx.Err() == nil {
						mu.Lock()
						errs++
						mu.Unlock()
					}
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				switch resp.StatusCode {
				case 200:
					ok++
					lat = append(lat, took)
				case 503:
					busy++
					if ra, _ := strconv.Atoi(resp.Header.Get("Retry-After")); ra > 0 {
						mu.Unlock()
						time.Sleep(100 * time.Millisecond) // a polite client backs off a little
						continue
					}
				default:
					errs++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	out, _ := json.Marshal(map[string]any{
		"clients": clients, "seconds": round(secs), "ok": ok, "busy_503": busy, "errors": errs,
		"req_per_s": round(float64(ok) / secs), "p50_ms": pct(0.50), "p95_ms": pct(0.95), "p99_ms": pct(0.99), "max_ms": pct(1),
	})
	fmt.Println(string(out))
	return nil
}

func round(f float64) float64 { return float64(int(f*10+0.5)) / 10 }
