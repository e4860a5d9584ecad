// Package logwriter hands log lines to a slow destination (stderr, a file,
// a pipe) without making the caller wait for it.
//
// The server logs one line per request. slog's handlers write each line
// to their writer under a mutex; when the writer is a file or a pipe, every
// request then makes a write(2) with that mutex held, and a writer
// descheduled in the middle (two busy cores) makes every other request
// finishing meanwhile wait behind it — the only contended lock of a loaded
// server, and a source of its latency tail. A Writer instead appends the
// line to a buffer in memory and returns; one goroutine writes what has
// gathered, many lines in one write.
package logwriter

import (
	"io"
	"sync"
	"time"
)

// DefaultMaxBuffered is how many bytes may wait when New is given 0.
const DefaultMaxBuffered = 4 << 20

// Writer is an io.Writer that buffers in memory and writes to its
// destination on a goroutine of its own. Lines keep their order. When more
// than its bound is waiting (the destination is slower than the logging),
// Write waits for the destination instead of growing further. It is safe
// for concurrent use; Close writes what is left.
type Writer struct {
	dst io.Writer
	max int

	out     sync.Mutex // held while writing to dst; taken before mu
	mu      sync.Mutex // buf, closed
	buf     []byte
	wake    chan struct{}
	closing chan struct{} // closed by Close: no more gathering
	done    chan struct{}
	shut    bool
}

// New starts a Writer in front of dst that lets at most maxBuffered bytes
// wait (DefaultMaxBuffered when <= 0).
func New(dst io.Writer, maxBuffered int) *Writer {
	if maxBuffered <= 0 {
		maxBuffered = DefaultMaxBuffered
	}
	w := &Writer{dst: dst, max: maxBuffered, wake: make(chan struct{}, 1), closing: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

// Write queues p (copied) for the destination. An error of the destination
// is not returned: a log line that cannot be written must not fail the
// work it describes.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	if !w.shut && len(w.buf)+len(p) <= w.max {
		w.buf = append(w.buf, p...)
		w.mu.Unlock()
		select {
		case w.wake <- struct{}{}:
		default:
		}
		return len(p), nil
	}
	w.mu.Unlock()
	// Full or closed: write through, after what is waiting.
	w.out.Lock()
	defer w.out.Unlock()
	w.mu.Lock()
	b := append(w.buf, p...)
	w.buf = nil
	w.mu.Unlock()
	_, _ = w.dst.Write(b)
	return len(p), nil
}

// gather is how long the goroutine lets lines gather after a write before
// it writes again: at most about 1/gather writes a second however many
// lines come, and as few wake-ups.
const gather = 10 * time.Millisecond

// run writes what has gathered each time a Write wakes it, at most once
// per gather, until Close.
func (w *Writer) run() {
	defer close(w.done)
	var spare []byte
	t := time.NewTimer(gather)
	defer t.Stop()
	for range w.wake {
		spare = w.flush(spare)
		w.mu.Lock()
		shut := w.shut
		w.mu.Unlock()
		if shut {
			return
		}
		t.Reset(gather)
		select {
		case <-t.C:
		case <-w.closing:
		}
	}
}

// flush writes the waiting bytes, handing the buffer back for reuse.
func (w *Writer) flush(spare []byte) []byte {
	w.out.Lock()
	defer w.out.Unlock()
	w.mu.Lock()
	b := w.buf
	w.buf = spare[:0]
	w.mu.Unlock()
	if len(b) > 0 {
		_, _ = w.dst.Write(b)
	}
	if cap(b) > w.max {
		return nil // do not keep an outsized buffer
	}
	return b
}

// Close writes what is waiting and stops the goroutine; later Writes go
// straight to the destination.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.shut {
		w.mu.Unlock()
		return nil
	}
	w.shut = true
	w.mu.Unlock()
	close(w.closing)
	select {
	case w.wake <- struct{}{}:
	default:
	}
	<-w.done
	w.flush(nil)
	return nil
}
