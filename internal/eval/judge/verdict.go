package judge

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/csvx"
)

// Verdict is the judge's decision on one question: three binary metrics
// (0 or 1) and the reasoning behind them.
type Verdict struct {
	Precision int    `json:"precision"` // 1: no fabricated or false content
	Recall    int    `json:"recall"`    // 1: captures the major components of the ground truth
	Accuracy  int    `json:"accuracy"`  // 1: on topic, meaning preserved
	Reasoning string `json:"reasoning"`
}

// ErrMalformed is wrapped by ParseVerdict when a reply holds no usable
// verdict.
var ErrMalformed = errors.New("the judge's reply is not a JSON object with precision, recall and accuracy of 0 or 1")

// ParseVerdict reads the judge's reply, repairing what it safely can: text
// or ```json fences around the object are ignored (the first {...} object
// that holds all three metrics is used), key case does not matter, and each
// metric may be 0/1, "0"/"1", true/false or "true"/"false" (also
// "yes"/"no"). A missing reasoning is "". Anything else wraps ErrMalformed.
func ParseVerdict(text string) (Verdict, error) {
	return firstObject(text, verdictFromObject, ErrMalformed)
}

// firstObject reads the first {...} object of a judge's reply that read
// accepts, ignoring the text and fences around it. When none is usable the
// error wraps malformed and says what was wrong with the first object.
func firstObject[T any](text string, read func(obj string) (T, error), malformed error) (T, error) {
	var firstErr error
	for _, obj := range jsonObjects(text) {
		v, err := read(obj)
		if err == nil {
			return v, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = errors.New("no {...} object found")
	}
	var zero T
	return zero, fmt.Errorf("%w: %v", malformed, firstErr)
}

func verdictFromObject(obj string) (Verdict, error) {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(obj))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return Verdict{}, err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	get := func(name string) (any, bool) {
		i := csvx.MatchColumn(keys, name)
		if i < 0 {
			return nil, false
		}
		return m[keys[i]], true
	}
	var v Verdict
	for _, f := range []struct {
		name string
		dst  *int
	}{{"precision", &v.Precision}, {"recall", &v.Recall}, {"accuracy", &v.Accuracy}} {
		raw, ok := get(f.name)
		if !ok {
			return Verdict{}, fmt.Errorf("no %q field", f.name)
		}
		b, ok := binary(raw)
		if !ok {
			return Verdict{}, fmt.Errorf("%s is %v, not 0 or 1", f.name, raw)
		}
		*f.dst = b
	}
	if r, ok := get("reasoning"); ok {
		switch t := r.(type) {
		case string:
			v.Reasoning = t
		case nil:
		default:
			b, _ := json.Marshal(t)
			v.Reasoning = string(b)
		}
	}
	return v, nil
}

// binary turns a JSON metric value into 0 or 1.
func binary(v any) (int, bool) {
	switch t := v.(type) {
	case bool:
		if t {
			return 1, true
		}
		return 0, true
	case json.Number:
		f, err := strconv.ParseFloat(t.String(), 64)
		if err == nil && (f == 0 || f == 1) {
			return int(f), true
		}
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "1", "1.0", "true", "yes":
			return 1, true
		case "0", "0.0", "false", "no":
			return 0, true
		}
	}
	return 0, false
}

// jsonObjects returns every top-level {...} span of text in order, found by
// matching braces outside JSON strings. Unbalanced braces end the scan.
func jsonObjects(text string) []string {
	var out []string
	depth, start := 0, -1
	inString, escaped := false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			if depth > 0 {
				inString = true
			}
		case '{':
			if depth == 0 {
				start = i
			}
			depth++
		case '}':
			if depth > 0 {
				depth--
				if depth == 0 {
					out = append(out, text[start:i+1])
				}
			}
		}
	}
	return out
}

// HedgePhrases are the words that make a verdict "low confidence" and
// trigger the 3-vote consensus. They are matched case-insensitively
// anywhere in the reasoning. The English ones are the seed's minimal set
// plus near synonyms; the Japanese ones are their usual equivalents:
// 微妙 (borderline), どちらとも言え (could go either way), 判断が難しい /
// 判断に迷 (hard to judge), 曖昧 / あいまい (ambiguous, unclear), 部分的
// (partially), 一概に (cannot say flatly), 議論の余地 (debatable),
// 不明確 (unclear).
func HedgePhrases() []string {
	return []string{
		"borderline", "arguably", "unclear", "could go either way", "debatable",
		"partially", "ambiguous", "hard to say", "difficult to determine",
		"微妙", "どちらとも言え", "どちらとも言い", "判断が難しい", "判断に迷", "曖昧", "あいまい",
		"部分的", "一概に", "議論の余地", "不明確",
	}
}

// Hedging returns the first hedge phrase found in reasoning.
func Hedging(reasoning string) (phrase string, ok bool) {
	low := strings.ToLower(reasoning)
	for _, p := range HedgePhrases() {
		if strings.Contains(low, p) {
			return p, true
		}
	}
	return "", false
}

// Majority combines votes metric by metric: a metric is 1 when more than
// half of the votes say 1. On a tie (possible only with an even number of
// votes) the tiebreak verdict decides. The reasoning is the tiebreak's.
func Majority(votes []Verdict, tiebreak Verdict) Verdict {
	out := Verdict{Reasoning: tiebreak.Reasoning}
	pick := func(get func(Verdict) int) int {
		ones := 0
		for _, v := range votes {
			ones += get(v)
		}
		switch {
		case 2*ones > len(votes):
			return 1
		case 2*ones < len(votes):
			return 0
		}
		return get(tiebreak)
	}
	out.Precision = pick(func(v Verdict) int { return v.Precision })
	out.Recall = pick(func(v Verdict) int { return v.Recall })
	out.Accuracy = pick(func(v Verdict) int { return v.Accuracy })
	return out
}

// maxReasoningRunes bounds the stored reasoning.
const maxReasoningRunes = 300

// Condense keeps the first one or two sentences of reasoning (the seed
// stores a 1-2 sentence summary, not the full text), with white space
// collapsed and at most 300 characters. Sentences end at 。！？!? or at a
// '.' followed by a space or the end.
func Condense(reasoning string) string {
	s := strings.Join(strings.Fields(reasoning), " ")
	sentences, end := 0, len(s)
	for i, r := range s {
		size := utf8.RuneLen(r)
		stop := false
		switch r {
		case '。', '！', '？', '!', '?':
			stop = true
		case '.':
			stop = i+size == len(s) || s[i+size] == ' '
		}
		if stop {
			sentences++
			if sentences == 2 {
				end = i + size
				break
			}
		}
	}
	s = strings.TrimSpace(s[:end])
	if utf8.RuneCountInString(s) > maxReasoningRunes {
		s = string([]rune(s)[:maxReasoningRunes-1]) + "…"
	}
	return s
}
