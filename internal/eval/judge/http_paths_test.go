package judge

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/llmtest"
)

// The tests in this file drive the hedging consensus, resume-after-kill and
// malformed-reply paths through the real llm clients (and so the official
// SDKs) against fake Anthropic and OpenAI servers, complementing the
// fake-Completer tests in run_test.go.

// chatMsg is one non-system message of a request body.
type chatMsg struct{ role, text string }

// httpCall is one request the fake server received.
type httpCall struct {
	path      string
	question  string // "" for the connectivity check
	maxTokens float64
	temp      float64
	hasTemp   bool
	msgs      []chatMsg
}

// callOf reads a request the fake server received.
func callOf(r llmtest.Request) httpCall {
	c := httpCall{path: r.Path}
	if v, ok := r.Body["max_tokens"].(float64); ok {
		c.maxTokens = v
	} else {
		c.maxTokens, _ = r.Body["max_completion_tokens"].(float64)
	}
	c.temp, c.hasTemp = r.Body["temperature"].(float64)
	for _, m := range r.Messages {
		if m.Role == "system" || m.Role == "developer" {
			continue
		}
		c.msgs = append(c.msgs, chatMsg{role: m.Role, text: m.Text})
	}
	if len(c.msgs) > 0 && c.msgs[0].role == "user" {
		c.question = questionOf(llm.Request{Messages: []llm.Message{{Content: c.msgs[0].text}}})
	}
	return c
}

// eval reports whether the call is an evaluation (not the check call).
func (c httpCall) eval() bool { return c.maxTokens == EvalMaxTokens }

// scriptServer is a fake server of one provider that answers evaluation
// requests via respond, which gets the call, how many evaluation requests
// for the same question came before it, and the question's position in the
// order the server first saw the questions. The check call is always
// answered "OK".
type scriptServer struct {
	*llmtest.Server
	respond func(c httpCall, n, pos int) llmtest.Reply

	mu   sync.Mutex
	from int // requests before this one are forgotten
	seen map[string]int
	pos  map[string]int
}

func newScriptServer(t *testing.T, p provider, respond func(c httpCall, n, pos int) llmtest.Reply) *scriptServer {
	s := &scriptServer{respond: respond, seen: map[string]int{}, pos: map[string]int{}}
	s.Server = p.start(t, s.reply)
	return s
}

func (s *scriptServer) reply(r llmtest.Request) llmtest.Reply {
	c := callOf(r)
	if !c.eval() {
		return textReply("OK")
	}
	s.mu.Lock()
	n := s.seen[c.question]
	s.seen[c.question]++
	pos, ok := s.pos[c.question]
	if !ok {
		pos = len(s.pos)
		s.pos[c.question] = pos
	}
	s.mu.Unlock()
	return s.respond(c, n, pos)
}

// evalCalls returns the evaluation requests received since the last reset.
func (s *scriptServer) evalCalls() []httpCall {
	reqs := s.Requests()
	s.mu.Lock()
	from := s.from
	s.mu.Unlock()
	var out []httpCall
	for _, r := range reqs[from:] {
		if c := callOf(r); c.eval() {
			out = append(out, c)
		}
	}
	return out
}

// reset forgets the requests received so far.
func (s *scriptServer) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.from = s.Calls()
	s.seen = map[string]int{}
	s.pos = map[string]int{}
}

// noClientSleep returns a client SleepFunc that fails the test: none of
// these scenarios has a transient error worth a client-side retry.
func noClientSleep(t *testing.T) llm.SleepFunc {
	return func(ctx context.Context, d time.Duration) error {
		t.Errorf("unexpected client retry sleep of %v", d)
		return ctx.Err()
	}
}

func verdictJSON(p, r, a int, reasoning string) string {
	return fmt.Sprintf(`{"precision": %d, "recall": %d, "accuracy": %d, "reasoning": %q}`, p, r, a, reasoning)
}

// readResults parses a results file and returns its header and the rows
// by question text.
func readResults(t *testing.T, path string) (map[string]int, map[string][]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimPrefix(string(b), "\uFEFF"), "\n") {
		if !strings.HasPrefix(l, "#SUMMARY:") {
			lines = append(lines, l)
		}
	}
	recs, err := csv.NewReader(strings.NewReader(strings.Join(lines, "\n"))).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("results %s: %v\n%s", path, err, b)
	}
	cols := map[string]int{}
	for i, h := range recs[0] {
		cols[h] = i
	}
	rows := map[string][]string{}
	for _, r := range recs[1:] {
		rows[r[cols["Question"]]] = r
	}
	return cols, rows
}

// TestHTTPHedgingConsensus: a hedging first verdict triggers exactly three
// extra requests at temperature 0.3 whose majority decides the row.
func TestHTTPHedgingConsensus(t *testing.T) {
	for _, p := range providers() {
		for _, hedge := range []string{"borderline", "判断が難しい"} {
			t.Run(p.name+"/"+hedge, func(t *testing.T) {
				// Q2's first verdict P0 R1 A0 hedges; the extra verdicts
				// P 1,1,0  R 0,0,1  A 1,0,1 → P1 R0 A1, every metric flipped.
				extra := []string{verdictJSON(1, 0, 1, "Fine."), verdictJSON(1, 0, 0, "Wrong date."), verdictJSON(0, 1, 1, "Acceptable.")}
				s := newScriptServer(t, p, func(c httpCall, n, pos int) llmtest.Reply {
					if c.question != "Q2?" {
						return textReply(verdictJSON(1, 1, 1, "Clearly correct."))
					}
					if n == 0 {
						return textReply(verdictJSON(0, 1, 0, "The answer is "+hedge+"; the date may be wrong."))
					}
					if n > len(extra) {
						t.Errorf("Q2 asked %d times", n+1)
						return textReply(verdictJSON(0, 0, 0, "too many"))
					}
					return textReply(extra[n-1])
				})
				dir := setup(t, 3)
				mkdirs(t, dir)
				var out bytes.Buffer
				res, err := Run(context.Background(), baseOptions(dir, p.client(t, s.BaseURL(), noClientSleep(t)), &out, &sleeps{}))
				if err != nil {
					t.Fatalf("Run: %v\n%s", err, out.String())
				}
				perQ := map[string][]httpCall{}
				for _, c := range s.evalCalls() {
					if c.path != p.path {
						t.Errorf("request path = %s, want %s", c.path, p.path)
					}
					perQ[c.question] = append(perQ[c.question], c)
				}
				if len(perQ["Q1?"]) != 1 || len(perQ["Q3?"]) != 1 {
					t.Errorf("Q1 asked %d times, Q3 %d times; want 1 each", len(perQ["Q1?"]), len(perQ["Q3?"]))
				}
				q2 := perQ["Q2?"]
				if len(q2) != 1+ConsensusRuns {
					t.Fatalf("Q2 asked %d times, want 1 + 3", len(q2))
				}
				for i, c := range q2 {
					want := 0.0
					if i > 0 {
						want = ConsensusTemperature
					}
					if !c.hasTemp || c.temp != want {
						t.Errorf("Q2 request %d temperature = %v (present %v), want %v", i, c.temp, c.hasTemp, want)
					}
					if len(c.msgs) != 1 {
						t.Errorf("Q2 request %d has %d messages, want 1 (independent run)", i, len(c.msgs))
					}
				}
				for _, q := range []string{"Q1?", "Q3?"} {
					for _, c := range perQ[q] {
						if !c.hasTemp || c.temp != 0 {
							t.Errorf("%s temperature = %v, want 0", q, c.temp)
						}
					}
				}
				wantConsensus := "3-vote (hedge: " + hedge + "): P 2/3, R 1/3, A 2/3"
				row := res.Rows[1]
				if row.Precision != 1 || row.Recall != 0 || row.Accuracy != 1 || row.Consensus != wantConsensus || row.Error != "" {
					t.Errorf("Q2 row = %+v, want P1 R0 A1 with consensus %q", row, wantConsensus)
				}
				if res.Rows[0].Consensus != "" || res.Rows[2].Consensus != "" {
					t.Errorf("non-hedging rows marked: %q, %q", res.Rows[0].Consensus, res.Rows[2].Consensus)
				}
				if res.Summary != (Summary{Total: 3, Scored: 3, Precision: 3, Recall: 2, Accuracy: 3, Consensus: 1}) {
					t.Errorf("summary = %+v", res.Summary)
				}
				cols, rows := readResults(t, res.Output)
				r2 := rows["Q2?"]
				if r2 == nil {
					t.Fatalf("no Q2 row in %s", res.Output)
				}
				if got := []string{r2[cols["Precision"]], r2[cols["Recall"]], r2[cols["Accuracy"]], r2[cols["Consensus"]]}; !reflect.DeepEqual(got, []string{"1", "0", "1", wantConsensus}) {
					t.Errorf("Q2 output row = %q", r2)
				}
				if r1 := rows["Q1?"]; r1 == nil || r1[cols["Consensus"]] != "" {
					t.Errorf("Q1 output row = %q", r1)
				}
				if b, _ := os.ReadFile(res.Output); !strings.Contains(string(b), "#SUMMARY: Consensus Evaluations: 1\n") {
					t.Errorf("output lacks the consensus count:\n%s", b)
				}
			})
		}
	}
}

// TestHTTPResumeAfterKill stops a run while the third question is being
// judged — by cancelling the context or by a fatal 401 — then resumes it:
// the second run asks the server only about the remaining questions.
func TestHTTPResumeAfterKill(t *testing.T) {
	for _, p := range providers() {
		for _, kill := range []string{"cancel", "401"} {
			t.Run(p.name+"/"+kill, func(t *testing.T) {
				dir := setup(t, 5)
				mkdirs(t, dir)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var mu sync.Mutex
				killing := true
				evals := 0
				verdicts := map[string]int{} // 200 verdict replies per question, both runs
				s := newScriptServer(t, p, func(c httpCall, n, pos int) llmtest.Reply {
					mu.Lock()
					defer mu.Unlock()
					evals++
					if killing && evals == 3 {
						if kill == "cancel" {
							// Killed while this question is judged: the
							// context ends before any answer arrives.
							cancel()
							return llmtest.Reply{Status: http.StatusInternalServerError, ErrorMessage: "gone"}
						}
						return llmtest.Reply{Status: http.StatusUnauthorized, ErrorMessage: "invalid x-api-key"}
					}
					verdicts[c.question]++
					reasoning := "first run"
					if !killing {
						reasoning = "second run"
					}
					return textReply(verdictJSON(1, 1, 1, reasoning))
				})
				var out bytes.Buffer
				_, err := Run(ctx, baseOptions(dir, p.client(t, s.BaseURL(), noClientSleep(t)), &out, &sleeps{}))
				switch kill {
				case "cancel":
					if !errors.Is(err, context.Canceled) {
						t.Fatalf("first run err = %v, want context.Canceled", err)
					}
				case "401":
					var le *llm.Error
					if !errors.As(err, &le) || le.StatusCode != http.StatusUnauthorized {
						t.Fatalf("first run err = %v, want *llm.Error with status 401", err)
					}
				}
				if err != nil && !strings.Contains(err.Error(), "Progress is saved") {
					t.Errorf("first run err = %v, want a note that progress is saved", err)
				}
				cps, _ := filepath.Glob(filepath.Join(dir, "tmp", "shirube-judge-*.json"))
				if len(cps) != 1 {
					t.Fatalf("checkpoints after the kill: %v", cps)
				}
				first := s.evalCalls()
				if len(first) != 3 {
					t.Fatalf("first run made %d evaluation requests, want 3 (stop at the kill)", len(first))
				}
				done := map[string]bool{first[0].question: true, first[1].question: true}
				killed := first[2].question

				// Second run: same files, same server, answers Y to resume.
				mu.Lock()
				killing = false
				mu.Unlock()
				s.reset()
				out.Reset()
				o := baseOptions(dir, p.client(t, s.BaseURL(), noClientSleep(t)), &out, &sleeps{})
				o.Yes = false
				o.Seed = 42 // ignored: a resumed run keeps its order
				o.In = strings.NewReader("Y\n\n")
				res, err := Run(context.Background(), o)
				if err != nil {
					t.Fatalf("resumed run: %v\n%s", err, out.String())
				}
				if !res.Resumed || res.Seed != 1 {
					t.Errorf("resumed = %v, seed = %d; want true, 1", res.Resumed, res.Seed)
				}
				text := out.String()
				for _, w := range []string{"2 of 5 questions evaluated", "Resume previous run? [Y/n]", "2 already done, 3 left"} {
					if !strings.Contains(text, w) {
						t.Errorf("output lacks %q:\n%s", w, text)
					}
				}
				second := s.evalCalls()
				if len(second) != 3 {
					t.Fatalf("resumed run made %d evaluation requests, want 3", len(second))
				}
				asked := map[string]int{}
				for _, c := range append(first, second...) {
					asked[c.question]++
				}
				for i := 1; i <= 5; i++ {
					q := fmt.Sprintf("Q%d?", i)
					want := 1
					if q == killed {
						want = 2 // the request that was killed, then the resumed one
					}
					if asked[q] != want {
						t.Errorf("%s: %d evaluation requests across both runs, want %d", q, asked[q], want)
					}
					if verdicts[q] != 1 {
						t.Errorf("%s judged %d times across both runs, want 1", q, verdicts[q])
					}
				}
				for _, c := range second {
					if done[c.question] {
						t.Errorf("resumed run asked again about %s", c.question)
					}
				}
				firstRun, secondRun := 0, 0
				for _, r := range res.Rows {
					switch {
					case r.Reasoning == "first run" && done[r.Question]:
						firstRun++
					case r.Reasoning == "second run" && !done[r.Question]:
						secondRun++
					default:
						t.Errorf("row %+v", r)
					}
				}
				if firstRun != 2 || secondRun != 3 || res.Summary.Scored != 5 {
					t.Errorf("rows from the first run %d, second %d, scored %d; want 2, 3, 5", firstRun, secondRun, res.Summary.Scored)
				}
				if cps, _ := filepath.Glob(filepath.Join(dir, "tmp", "shirube-judge-*")); len(cps) != 0 {
					t.Errorf("checkpoint left after success: %v", cps)
				}
			})
		}
	}
}

// TestHTTPMalformedReplies: replies the client cannot turn into JSON
// (prose) and JSON with broken fields are repaired or retried once; a
// question still unreadable after the retry becomes an error row and the
// run goes on with the next question.
func TestHTTPMalformedReplies(t *testing.T) {
	const prose = "I would rate this answer highly; it covers everything."
	// Scripts by the position in which the server first sees a question.
	scripts := [][]string{
		{prose, prose}, // unreadable twice → error row (first question, so the run must go on)
		{prose, verdictJSON(1, 1, 1, "Good after the retry.")},                                                                         // retried once
		{`{"precision": "high", "recall": 1, "accuracy": 1, "reasoning": "x"}`, `{"precision": 1, "recall": "maybe"}`},                 // broken fields twice → error row
		{"Sure! Here it is:\n```json\n" + `{"Precision": "1", "recall": true, "accuracy": "no", "reasoning": "Off topic."}` + "\n```"}, // repaired, no retry
		{`{"precision": 2, "recall": 1, "accuracy": 1, "reasoning": "y"}`, verdictJSON(0, 1, 1, "Fixed.")},                             // broken field, then good
		{`Verdict: {"precision": 1, "recall": 0, "accuracy": 1, "reasoning": "Two objects."} on the scale {0,1}`},                      // not JSON to the client, repaired by the judge
	}
	wantRows := []struct {
		verdict Verdict
		err     bool
	}{
		{err: true},
		{verdict: Verdict{1, 1, 1, "Good after the retry."}},
		{err: true},
		{verdict: Verdict{1, 1, 0, "Off topic."}},
		{verdict: Verdict{0, 1, 1, "Fixed."}},
		{verdict: Verdict{1, 0, 1, "Two objects."}},
	}
	for _, p := range providers() {
		t.Run(p.name, func(t *testing.T) {
			s := newScriptServer(t, p, func(c httpCall, n, pos int) llmtest.Reply {
				if n >= len(scripts[pos]) {
					t.Errorf("question at position %d asked %d times, want at most %d", pos, n+1, len(scripts[pos]))
					return textReply(verdictJSON(0, 0, 0, "too many"))
				}
				if n > 0 {
					// The retry repeats the question, shows the model its
					// unreadable reply and asks again.
					if len(c.msgs) != 3 || c.msgs[0].role != "user" ||
						c.msgs[1] != (chatMsg{"assistant", scripts[pos][n-1]}) || c.msgs[2] != (chatMsg{"user", retryMessage}) {
						t.Errorf("retry request for position %d: messages = %q", pos, c.msgs)
					}
				} else if len(c.msgs) != 1 {
					t.Errorf("first request for position %d has %d messages", pos, len(c.msgs))
				}
				return textReply(scripts[pos][n])
			})
			dir := setup(t, len(scripts))
			mkdirs(t, dir)
			var out bytes.Buffer
			res, err := Run(context.Background(), baseOptions(dir, p.client(t, s.BaseURL(), noClientSleep(t)), &out, &sleeps{}))
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, out.String())
			}
			// The order of requests: each question's attempts, then the next.
			var order []string // questions by position
			var got []string
			first := map[string]bool{}
			for _, c := range s.evalCalls() {
				if !first[c.question] {
					first[c.question] = true
					order = append(order, c.question)
				}
				got = append(got, c.question)
			}
			if len(order) != len(scripts) {
				t.Fatalf("questions asked in order %v, want %d distinct runs", order, len(scripts))
			}
			var want []string
			for i, sc := range scripts {
				for range sc {
					want = append(want, order[i])
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("evaluation requests = %v, want %v", got, want)
			}
			byQ := map[string]Row{}
			for _, r := range res.Rows {
				byQ[r.Question] = r
			}
			cols, rows := readResults(t, res.Output)
			for i, w := range wantRows {
				q := order[i]
				r := byQ[q]
				line := rows[q]
				if line == nil {
					t.Errorf("no output row for %s", q)
					continue
				}
				if w.err {
					if !strings.Contains(r.Error, "judge reply unreadable after one retry") {
						t.Errorf("position %d (%s) row error = %q", i, q, r.Error)
					}
					if line[cols["Error"]] != r.Error || line[cols["Precision"]] != "" || line[cols["Recall"]] != "" || line[cols["Accuracy"]] != "" {
						t.Errorf("position %d (%s) output row = %q, want blank metrics and the error", i, q, line)
					}
					if !strings.Contains(out.String(), "Warning: question "+r.Number+": judge reply unreadable") {
						t.Errorf("no warning for question %s:\n%s", r.Number, out.String())
					}
					continue
				}
				if r.Error != "" || r.Verdict != w.verdict {
					t.Errorf("position %d (%s) row = %+v, want %+v", i, q, r, w.verdict)
				}
				if line[cols["Error"]] != "" || line[cols["Precision"]] != fmt.Sprint(w.verdict.Precision) {
					t.Errorf("position %d (%s) output row = %q", i, q, line)
				}
			}
			if res.Summary != (Summary{Total: 6, Scored: 4, Errors: 2, Precision: 3, Recall: 3, Accuracy: 3}) {
				t.Errorf("summary = %+v", res.Summary)
			}
			if cps, _ := filepath.Glob(filepath.Join(dir, "tmp", "shirube-judge-*")); len(cps) != 0 {
				t.Errorf("checkpoint left after success: %v", cps)
			}
		})
	}
}
