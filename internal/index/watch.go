package index

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultWatchPoll is how often Watch reads CURRENT when the caller does
// not say.
const DefaultWatchPoll = 2 * time.Second

// Watch follows the live generation of the index in dir until ctx ends, so
// that a long-running reader (the web server) answers from the generation
// the last build installed — whoever ran it: `shirube index` in another
// process, another replica's build, or the server's own rebuild.
//
// Every poll (DefaultWatchPoll when 0) it reads CURRENT, a file of a dozen
// bytes, so watching costs one small read per poll and nothing else. When
// the generation CURRENT names is not serving() — the generation the
// caller answers from, 0 when it has none — Watch calls switched with it,
// on Watch's goroutine. switched opens the generation (Open) and swaps it
// in; an error from it (a generation removed by a newer build while it
// was being opened, a damaged file) is reported to warn once and tried
// again at the next poll, so the caller keeps answering from what it has
// until a generation loads.
//
// Because the comparison is with what the caller serves, a swap the
// caller made itself (after its own rebuild) is not repeated, and a swap
// that lost a race with a newer build is corrected at the next poll.
func Watch(ctx context.Context, dir string, poll time.Duration, serving func() int, switched func(ctx context.Context, gen int) error, warn func(string)) {
	if poll <= 0 {
		poll = DefaultWatchPoll
	}
	if warn == nil {
		warn = func(string) {}
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	var reported string // the last failure told to warn, not repeated
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		_, gen, err := readCurrent(dir)
		if errors.Is(err, ErrNotFound) {
			continue // no index yet: nothing to follow
		}
		if err == nil && gen == serving() {
			reported = ""
			continue
		}
		if err == nil {
			if err = switched(ctx, gen); err == nil {
				reported = ""
				continue
			}
			err = fmt.Errorf("generation %d: %w", gen, err)
		}
		if ctx.Err() != nil {
			return
		}
		if msg := err.Error(); msg != reported {
			warn("index: still answering from the generation loaded before; the new one does not load (" + msg + ") — it is tried again every few seconds; run `shirube index` if it persists")
			reported = msg
		}
	}
}

// CurrentFile is the name of the file in an index directory that names
// the live generation; a build replaces it (rename) to switch.
const CurrentFile = currentFile

// Current returns the number of the live generation of the index in dir
// (what CURRENT names): one read of a file of a dozen bytes, cheap enough
// to make before every question. It wraps ErrNotFound when there is no
// index yet.
func Current(dir string) (int, error) {
	_, gen, err := readCurrent(dir)
	return gen, err
}
