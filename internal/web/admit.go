package web

import (
	"context"
	"net/http"
	"runtime"
	"time"
)

// DefaultQueueWait is how long a search or answer waits for a free slot
// (Options.QueueWait) before it is turned away with 503.
const DefaultQueueWait = time.Second

// admission bounds the searches and answers running at once. A search
// keeps a core busy from start to end (analysis, BM25, the vector scan,
// evidence scores); with no bound, twenty clients on two cores each get a
// tenth of a core and every request slows every other: throughput stays
// the same but p99 grows tenfold. With about one request per core running
// and the rest waiting their turn, each runs at full speed; a request that
// cannot start within the queue wait is better told at once to come back
// (503 with Retry-After) than left to time out.
//
// It is a counting semaphore: a buffered channel holding one token per
// running request.
type admission struct {
	slots chan struct{}
	wait  time.Duration
}

func newAdmission(n int, wait time.Duration) *admission {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	if wait <= 0 {
		wait = DefaultQueueWait
	}
	return &admission{slots: make(chan struct{}, n), wait: wait}
}

// acquire waits up to the queue wait (or until ctx ends) for a slot; the
// caller must call release when ok.
func (a *admission) acquire(ctx context.Context) (release func(), ok bool) {
	select {
	case a.slots <- struct{}{}: // free slot: no timer needed
		return a.release, true
	default:
	}
	t := time.NewTimer(a.wait)
	defer t.Stop()
	select {
	case a.slots <- struct{}{}:
		return a.release, true
	case <-t.C:
		return nil, false
	case <-ctx.Done():
		return nil, false
	}
}

func (a *admission) release() { <-a.slots }

// admit runs h once a slot is free; when none frees within the queue wait
// the client gets 503 with Retry-After, in the route's error shape.
func (s *Server) admit(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		release, ok := s.admission.acquire(r.Context())
		if !ok {
			if r.Context().Err() != nil {
				return // the client left while waiting
			}
			w.Header().Set("Retry-After", retryAfter(s.admission.wait))
			writeError(w, http.StatusServiceUnavailable, "busy", "混み合っています — 少し待ってからもう一度お試しください")
			return
		}
		defer release()
		h(w, r)
	}
}
