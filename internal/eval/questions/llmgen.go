package questions

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/shirube/shirube/internal/llm"
)

// minCoverage is the share of a ground truth's character bigrams that must
// occur in the page text; below it the model made the answer up.
const minCoverage = 0.5

// maxCallFailures stops a run whose first requests all fail (bad key,
// unreachable server) instead of failing once per page.
const maxCallFailures = 5

// pageSystem is the system prompt for questions about one page.
const pageSystem = `You write test questions for a retrieval-augmented question answering system, from one page of a document.
Return JSON of exactly this shape:
{"questions": [{"question": "…", "ground_truth": "…", "checklist": ["key point", "…"]}]}
Rules:
- write %d question(s) a reader of this document would really ask, each answerable from this page alone;
- ground_truth answers the question using only what the page says (quote or closely paraphrase it); never add outside knowledge;
- checklist lists 1 to 5 short key points (numbers, names, conditions, steps) a correct answer must contain, each taken from ground_truth;
- write question, ground_truth and checklist in %s;
- if the page has nothing worth asking (a cover, a table of contents, a blank page), return {"questions": []}.`

// groupSystem is the system prompt for a question that needs several pages.
const groupSystem = `You write test questions for a retrieval-augmented question answering system. Each question must need information from at least two of the given pages of one document.
Return JSON of exactly this shape:
{"questions": [{"question": "…", "ground_truth": "…", "checklist": ["key point", "…"], "pages": [3, 7]}]}
Rules:
- write 1 question whose complete answer combines facts from at least two of the pages;
- ground_truth answers it using only what the pages say; never add outside knowledge;
- checklist lists 2 to 6 short key points a correct answer must contain, at least one from each page used;
- pages lists the page numbers the answer uses;
- write question, ground_truth and checklist in %s;
- if the pages share nothing worth asking about, return {"questions": []}.`

// llmQuestion is one question of the model's answer.
type llmQuestion struct {
	Question    string   `json:"question"`
	GroundTruth string   `json:"ground_truth"`
	Checklist   []string `json:"checklist"`
	Pages       []int    `json:"pages"`
}

// llmJob is one request: a single page, or a group of pages.
type llmJob struct {
	kind  string // KindPage or KindMulti
	pages []int  // indexes into doc.doc.Pages, in page order
}

// llmOutcome is what one job produced.
type llmOutcome struct {
	rows    []Row
	skips   []string
	callErr error // the request itself failed
}

// llmRows makes the questions of one document with the LLM.
func (g *generator) llmRows(ctx context.Context, d *doc) ([]Row, error) {
	var jobs []llmJob
	for i, p := range d.doc.Pages {
		if len([]rune(strings.TrimSpace(p.Text))) >= g.opt.MinPageRunes {
			jobs = append(jobs, llmJob{kind: KindPage, pages: []int{i}})
		}
	}
	if len(jobs) == 0 {
		g.skip(fmt.Sprintf("%s: skipped: no page has enough text to ask about", d.file.Rel))
		return nil, nil
	}
	pages, df := analyse(d, g.opt.MinPageRunes)
	for _, gr := range multiGroups(pages, df, g.opt.MinMulti, g.opt.MaxMulti) {
		j := llmJob{kind: KindMulti}
		for _, p := range gr.pages {
			j.pages = append(j.pages, p.index)
		}
		jobs = append(jobs, j)
	}

	outs := make([]llmOutcome, len(jobs))
	var mu sync.Mutex
	ok, failed := 0, 0
	var firstErr error
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(g.opt.Workers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out := g.runJob(ctx, d, jobs[i])
				outs[i] = out
				mu.Lock()
				if out.callErr != nil {
					failed++
					if firstErr == nil {
						firstErr = out.callErr
					}
					if ok == 0 && failed >= maxCallFailures {
						cancel()
					}
				} else {
					ok++
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range jobs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if ok == 0 && failed >= maxCallFailures {
		return nil, fmt.Errorf("generating questions for %s: %w (%d in a row; first: %v) — check OPENAI_API_KEY / OPENAI_API_BASE and the model name, or run without an LLM", d.file.Rel, errAllFailed, failed, oneLine(firstErr.Error()))
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("generating questions for %s: %w", d.file.Rel, err)
	}
	var rows []Row
	for _, o := range outs {
		for _, s := range o.skips {
			g.skip(s)
		}
		rows = append(rows, o.rows...)
	}
	return rows, nil
}

// runJob sends one request and checks the answer.
func (g *generator) runJob(ctx context.Context, d *doc, j llmJob) llmOutcome {
	lang := "English"
	if d.japanese {
		lang = "Japanese"
	}
	var user strings.Builder
	fmt.Fprintf(&user, "Document: %s (%s)\n", d.file.Rel, d.title)
	var system, what string
	var pageText strings.Builder
	per := max(g.opt.PerPage, 1)
	if j.kind == KindPage {
		system = fmt.Sprintf(pageSystem, per, lang)
	} else {
		system = fmt.Sprintf(groupSystem, lang)
	}
	var nums []string
	for _, i := range j.pages {
		p := d.doc.Pages[i]
		n := pageNumber(p, i)
		nums = append(nums, fmt.Sprint(n))
		text := truncateRunes(p.Text, g.opt.MaxPromptRunes/len(j.pages))
		fmt.Fprintf(&user, "\n[page %d]\n%s\n", n, text)
		pageText.WriteString(p.Text)
		pageText.WriteByte('\n')
	}
	what = fmt.Sprintf("%s page %s", d.file.Rel, strings.Join(nums, ","))
	if j.kind == KindMulti {
		what = fmt.Sprintf("%s pages %s", d.file.Rel, strings.Join(nums, ","))
	}
	temp := 0.2
	resp, err := g.opt.LLM.Complete(ctx, llm.Request{
		Model:       g.opt.Model,
		System:      system,
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: user.String()}},
		Temperature: &temp,
		JSON:        true,
	})
	if err != nil {
		if ctx.Err() != nil {
			return llmOutcome{}
		}
		out := llmOutcome{skips: []string{fmt.Sprintf("%s: skipped: %s", what, oneLine(err.Error()))}}
		// A request that failed (*llm.Error: bad key, server down) counts
		// towards stopping the run; an answer that is not JSON only skips
		// this page.
		if _, isCall := errors.AsType[*llm.Error](err); isCall {
			out.callErr = err
		}
		return out
	}
	qs, err := parseQuestions(resp.Text)
	if err != nil {
		return llmOutcome{skips: []string{fmt.Sprintf("%s: skipped: %v", what, err)}}
	}
	if len(qs) == 0 {
		return llmOutcome{skips: []string{fmt.Sprintf("%s: skipped: the model found nothing to ask", what)}}
	}
	gen := "llm:" + cmp.Or(resp.Model, g.opt.Model, "default")
	var out llmOutcome
	for k, q := range qs {
		if j.kind == KindPage && k >= per {
			break
		}
		q.Question, q.GroundTruth = strings.TrimSpace(q.Question), strings.TrimSpace(q.GroundTruth)
		if q.Question == "" || q.GroundTruth == "" {
			out.skips = append(out.skips, fmt.Sprintf("%s: question %d skipped: empty question or ground_truth", what, k+1))
			continue
		}
		if c := bigramCoverage(q.GroundTruth, pageText.String()); c < minCoverage {
			out.skips = append(out.skips, fmt.Sprintf("%s: question %d skipped: ground_truth is not taken from the page text (%.0f%% overlap)", what, k+1, c*100))
			continue
		}
		row := Row{Question: q.Question, GroundTruth: q.GroundTruth, Generator: gen, Kind: j.kind, Source: d.file.Rel}
		for _, it := range q.Checklist {
			if it = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(it), "-・*")); it != "" {
				row.Checklist = append(row.Checklist, oneLine(it))
			}
		}
		if len(row.Checklist) == 0 {
			row.Checklist = checklist(keyPhrases(q.GroundTruth), nil, 3)
		}
		if len(row.Checklist) == 0 {
			out.skips = append(out.skips, fmt.Sprintf("%s: question %d skipped: no checklist", what, k+1))
			continue
		}
		use := j.pages
		if j.kind == KindMulti {
			var chosen []int
			for _, i := range j.pages {
				if slices.Contains(q.Pages, pageNumber(d.doc.Pages[i], i)) {
					chosen = append(chosen, i)
				}
			}
			if len(chosen) >= 2 {
				use = chosen
			}
		}
		for _, i := range use {
			row.References = append(row.References, d.ids[i])
			row.Pages = append(row.Pages, pageNumber(d.doc.Pages[i], i))
		}
		out.rows = append(out.rows, row)
	}
	return out
}

// parseQuestions decodes the model's {"questions": [...]} answer.
func parseQuestions(text string) ([]llmQuestion, error) {
	var out struct {
		Questions *[]llmQuestion `json:"questions"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &out); err != nil {
		return nil, fmt.Errorf("malformed JSON from the model (%s)", oneLine(err.Error()))
	}
	if out.Questions == nil {
		return nil, fmt.Errorf(`malformed JSON from the model: no "questions" list`)
	}
	return *out.Questions, nil
}

// truncateRunes cuts s to at most n runes.
func truncateRunes(s string, n int) string {
	r := []rune(s)
	if n <= 0 || len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
