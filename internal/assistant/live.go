package assistant

import (
	"context"
	"slices"
	"strings"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/retrieve"
)

// RemovedSourcesNote is added to Unknowns when an answer already streamed
// cited pages that an index update removed while it was being written;
// their citations are dropped.
const RemovedSourcesNote = "回答中に索引が更新され、引用していた資料の一部が削除されたため、その出典を外しました"

// SetFreshen installs f, which brings the assistant to the live index
// generation (swapping it in with Swap when it changed): Live calls it
// before each question, so a question asked after a build switched
// generations is never answered from the one before — the watcher's poll
// is no longer a window. Call it before serving; nil removes it.
func (a *Assistant) SetFreshen(f func(ctx context.Context)) {
	if f == nil {
		a.freshen.Store(nil)
		return
	}
	a.freshen.Store(&f)
}

// Live returns the searcher a new question or search should use: the
// current one, after the freshen function (SetFreshen) has run.
func (a *Assistant) Live(ctx context.Context) *retrieve.Searcher {
	if f := a.freshen.Load(); f != nil {
		(*f)(ctx)
	}
	return a.searcher.Load()
}

// recheck makes sure an answer made from generation used does not cite
// pages the live generation no longer has: a build deletes the pages of
// removed sources right after its switch, so a question that was being
// answered across the switch could otherwise cite files that are gone.
// Such an answer is made again from the live generation (once); when its
// text has already been streamed to the client, the citations of the
// removed pages are dropped instead and Unknowns says so.
//
// asked is the search settings the question came with; sopt is set to
// those the answer was made with.
func (a *Assistant) recheck(ctx context.Context, used *retrieve.Searcher, req Request, asked retrieve.Options, sopt *retrieve.Options, rep *Reply, streamed bool) error {
	cur := a.Live(ctx)
	if used == nil || cur == nil || cur == used {
		return nil
	}
	gone := removedPages(rep, cur)
	if len(gone) == 0 {
		return nil
	}
	if !streamed {
		again := newReply(rep.Query)
		req.OnDanger = nil // told once already
		*sopt = asked
		err := a.answer(ctx, cur, req, sopt, &again)
		again.TokenUsage = addUsage(again.TokenUsage, rep.TokenUsage)
		again.CostUSD += rep.CostUSD
		*rep = again
		return err
	}
	rep.Evidence = slices.DeleteFunc(rep.Evidence, func(e answer.Evidence) bool { return gone[pageOf(e.File)] })
	rep.SearchResults = slices.DeleteFunc(rep.SearchResults, func(r retrieve.Result) bool { return gone[pageOf(r.File)] })
	rep.Unknowns = append(rep.Unknowns, RemovedSourcesNote)
	return nil
}

// removedPages returns the pages rep cites or found that cur does not have.
func removedPages(rep *Reply, cur *retrieve.Searcher) map[string]bool {
	pages := cur.Index().Pages() // sorted
	gone := map[string]bool{}
	check := func(file string) {
		p := pageOf(file)
		if _, ok := slices.BinarySearch(pages, p); !ok {
			gone[p] = true
		}
	}
	for _, e := range rep.Evidence {
		check(e.File)
	}
	for _, r := range rep.SearchResults {
		check(r.File)
	}
	return gone
}

// pageOf is the page identity of a cited file (without a #fragment).
func pageOf(file string) string {
	p, _, _ := strings.Cut(file, "#")
	return p
}
