package web

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The load test is opt-in; it is a measurement, not a pass/fail on speed:
//
//	go test ./internal/web -run TestLoad -load -load.clients 50 -load.duration 30s -v
//
// It fails only when a request fails.
var (
	loadRun      = flag.Bool("load", false, "run TestLoad (concurrent clients asking over loopback)")
	loadClients  = flag.Int("load.clients", 50, "TestLoad: concurrent clients")
	loadDuration = flag.Duration("load.duration", 30*time.Second, "TestLoad: how long to ask")
	loadTargets  = flag.String("load.targets", "", "TestLoad: comma-separated base URLs of running servers (e.g. two `shirube serve --store` replicas) to ask instead of an in-process one; clients are spread over them")
)

// loadQuestions are answerable from the demo corpus with the extractive
// generator.
var loadQuestions = []string{
	qMalware,
	qDelete,
	"アカウントがロックされた場合の対処法を教えてください",
	"バックアップからの復元手順を教えてください",
	"ログの保管期間はどれくらいですか？",
	"VPN に接続できない場合の確認事項は？",
	"インシデントの重大度はどのように判定しますか？",
}

func TestLoad(t *testing.T) {
	if !*loadRun {
		t.Skip("load test is opt-in: go test ./internal/web -run TestLoad -load -v")
	}
	var bases []string
	if *loadTargets != "" {
		bases = strings.Split(*loadTargets, ",")
	} else {
		bases = []string{newFixture(t, fixtureOptions{}).ts.URL}
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *loadClients * 2, MaxConnsPerHost: 0}}
	bodies := make([]string, len(loadQuestions))
	for i, q := range loadQuestions {
		bodies[i] = `{"question":` + jq(q) + `}`
	}

	ctx, cancel := context.WithTimeout(context.Background(), *loadDuration)
	defer cancel()
	var (
		mu        sync.Mutex
		latencies []time.Duration
		errCount  atomic.Int64
		firstErr  atomic.Value
		wg        sync.WaitGroup
	)
	start := time.Now()
	for c := range *loadClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i := c; ctx.Err() == nil; i++ {
				t0 := time.Now()
				err := askOnce(client, bases[c%len(bases)], bodies[i%len(bodies)])
				if ctx.Err() != nil && err != nil {
					break // the run ended mid-request
				}
				if err != nil {
					errCount.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(latencies)
	pct := func(p float64) time.Duration {
		if len(latencies) == 0 {
			return 0
		}
		return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))]
	}
	t.Logf("%d clients on %d servers, %s: %d answers, %d errors, %.1f answers/s, p50 %s, p95 %s, p99 %s, max %s",
		*loadClients, len(bases), elapsed.Round(time.Millisecond), len(latencies), errCount.Load(),
		float64(len(latencies))/elapsed.Seconds(), pct(.50).Round(time.Microsecond), pct(.95).Round(time.Microsecond),
		pct(.99).Round(time.Microsecond), pct(1).Round(time.Microsecond))
	if n := errCount.Load(); n > 0 {
		t.Errorf("%d requests failed; first: %v", n, firstErr.Load())
	}
}

// askOnce posts one question and checks that an answer came back.
func askOnce(c *http.Client, base, body string) error {
	resp, err := c.Post(base+"/api/ask", "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"answer"`) {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, b)
	}
	return nil
}

// BenchmarkServeAsk measures POST /api/ask over loopback with parallel
// clients (extractive answers from the demo index, audit log on).
func BenchmarkServeAsk(b *testing.B) {
	f := newFixture(b, fixtureOptions{})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			if err := askOnce(client, f.ts.URL, `{"question":`+jq(loadQuestions[int(i)%len(loadQuestions)])+`}`); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
