package batch

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress reports finished rows: a progress bar when w is a terminal,
// otherwise one plain line per row ("[3/10] row 7: ok") that reads well in
// logs and CI.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	bar   *progressbar.ProgressBar
	total int
	done  int
}

func newProgress(w io.Writer, total, done int) *progress {
	p := &progress{w: w, total: total, done: done}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("questions"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
		)
		_ = p.bar.Set(done)
	} else if w != nil && done > 0 {
		fmt.Fprintf(w, "resuming: %d of %d rows already done\n", done, total)
	}
	return p
}

// step records that input row i (0-based) finished with status.
func (p *progress) step(i int, status string) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if p.bar != nil {
		_ = p.bar.Add(1)
		return
	}
	fmt.Fprintf(p.w, "[%d/%d] row %d: %s\n", p.done, p.total, i+1, status)
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
