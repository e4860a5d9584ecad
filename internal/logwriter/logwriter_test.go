package logwriter_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/shirube/shirube/internal/logwriter"
)

// gate is a destination that holds every write until released, counting
// the writes.
type gate struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
	hold   chan struct{}
}

func (g *gate) Write(p []byte) (int, error) {
	<-g.hold
	g.mu.Lock()
	defer g.mu.Unlock()
	g.writes++
	return g.buf.Write(p)
}

// TestWriterDoesNotWaitForTheDestination: while the destination is stuck,
// lines are still taken (up to the bound); once it moves, every line
// arrives, whole, each writer's in its order, in fewer writes than lines.
func TestWriterDoesNotWaitForTheDestination(t *testing.T) {
	g := &gate{hold: make(chan struct{})}
	w := logwriter.New(g, 1<<20)
	// The destination is stuck: these return anyway.
	for i := range 100 {
		fmt.Fprintf(w, "early %d\n", i)
	}
	close(g.hold) // the destination moves again
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				fmt.Fprintf(w, "c%d %d\n", c, i)
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkLines(t, g.buf.String(), 8, 500, 100)
	if g.writes >= 100+8*500 {
		t.Errorf("%d writes for %d lines: not batched", g.writes, 100+8*500)
	}
}

// TestWriterBoundWritesThrough: past its bound a Writer writes through,
// keeping the order, and after Close every Write goes straight through.
func TestWriterBoundWritesThrough(t *testing.T) {
	var buf syncBuffer
	w := logwriter.New(&buf, 64) // a few lines at most wait
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				fmt.Fprintf(w, "c%d %d\n", c, i)
			}
		}()
	}
	wg.Wait()
	w.Close()
	fmt.Fprintf(w, "after close\n")
	out := buf.String()
	if !strings.HasSuffix(out, "after close\n") {
		t.Errorf("a write after Close is missing or out of order")
	}
	checkLines(t, strings.TrimSuffix(out, "after close\n"), 4, 300, 0)
}

// checkLines checks that out holds early 0..early-1 first, then every
// "c<c> <i>" line once, each writer's in increasing order.
func checkLines(t *testing.T, out string, writers, each, early int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != writers*each+early {
		t.Fatalf("%d lines, want %d", len(lines), writers*each+early)
	}
	for i := range early {
		if lines[i] != fmt.Sprintf("early %d", i) {
			t.Fatalf("line %d is %q, want early %d", i, lines[i], i)
		}
	}
	next := make([]int, writers)
	for _, l := range lines[early:] {
		var c, i int
		if _, err := fmt.Sscanf(l, "c%d %d", &c, &i); err != nil || c < 0 || c >= writers {
			t.Fatalf("torn or foreign line %q", l)
		}
		if i != next[c] {
			t.Fatalf("writer %d: line %d after %d", c, i, next[c]-1)
		}
		next[c]++
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
