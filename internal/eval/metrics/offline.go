package metrics

import (
	"context"
	"strings"

	answerpkg "github.com/shirube/shirube/internal/answer"
)

// Thresholds of the offline judge, tuned on Japanese paraphrases (see
// TestOfflineJudgeParaphrases).
const (
	// PresenceThreshold is the share of an item's content features that
	// must occur in the answer for the item to count as present. 0.6 accepts
	// 「影響範囲を確認する」 in 「まず影響範囲の確認を行います」 (4/4) and
	// 「関係者へエスカレーションする」 in 「上長にエスカレーションします」
	// (7/9), and rejects 「ログを保全する」 against 「ログを削除する」 (1/2).
	PresenceThreshold = 0.6
	// SentenceThreshold is the share of a sentence's own content features
	// that must belong to some checklist item for the sentence not to be
	// an extra key point.
	SentenceThreshold = 0.5
	// minKeyPointFeatures: sentences with fewer content features
	// (「以上です。」) are not key points.
	minKeyPointFeatures = 2
)

// OfflineJudge is a deterministic, dictionary-free ItemJudge.
//
// Text is NFKC-normalised and lower-cased, then cut into script runs.
// An item's features are the character bigrams of its kanji and katakana
// runs plus its words in other scripts (hiragana — particles and verb
// endings — is ignored, so 確認する matches 確認を行います). An item with
// fewer than two such features uses bigrams of all its characters instead.
// The item is present when at least PresenceThreshold of its features occur
// in the answer.
//
// Extra key points (FP) are the answer's sentences — split at 。！？!? and
// line breaks and at ". ", list markers removed — that match no item: no item reaches
// PresenceThreshold within the sentence and less than SentenceThreshold of
// the sentence's features occur in any item. Sentences with fewer than two
// content features, citation lines (出典/参照/根拠/source, or containing
// ".md") and refusal sentences are not key points.
type OfflineJudge struct{}

// Judge implements ItemJudge.
func (OfflineJudge) Judge(_ context.Context, items []string, answer string) (Judgement, error) {
	ans := newText(answer)
	feats := make([][]feature, len(items))
	union := map[feature]bool{}
	j := Judgement{Present: make([]bool, len(items))}
	for i, it := range items {
		feats[i] = itemFeatures(it)
		for _, f := range feats[i] {
			union[f] = true
		}
		j.Present[i] = coverage(feats[i], ans) >= PresenceThreshold
	}
	for _, s := range sentences(answer) {
		sf := contentFeatures(normalize(s))
		if len(sf) < minKeyPointFeatures || answerpkg.IsRefusal(s) {
			continue
		}
		st := newText(s)
		matched := false
		for _, f := range feats {
			if coverage(f, st) >= PresenceThreshold {
				matched = true
				break
			}
		}
		if !matched {
			in := 0
			for _, f := range sf {
				if union[f] {
					in++
				}
			}
			matched = float64(in)/float64(len(sf)) >= SentenceThreshold
		}
		if !matched {
			j.Extra = append(j.Extra, s)
		}
	}
	return j, nil
}

// ItemCoverage returns the share of item's content features found in text,
// the score OfflineJudge compares with PresenceThreshold.
func ItemCoverage(item, text string) float64 {
	return coverage(itemFeatures(item), newText(text))
}

func itemFeatures(item string) []feature {
	n := normalize(item)
	fs := contentFeatures(n)
	if len(fs) < 2 {
		fs = allBigrams(n)
	}
	return fs
}

// text is normalised text prepared for feature look-ups.
type text struct {
	s     string          // normalised
	words map[string]bool // other-script words
}

func newText(s string) text {
	t := text{s: normalize(s), words: map[string]bool{}}
	for _, r := range runs(t.s) {
		if r.script == scriptWord {
			t.words[r.text] = true
		}
	}
	return t
}

func (t text) has(f feature) bool {
	if f.word {
		return t.words[f.text]
	}
	return strings.Contains(t.s, f.text)
}

func coverage(fs []feature, t text) float64 {
	if len(fs) == 0 {
		return 0
	}
	n := 0
	for _, f := range fs {
		if t.has(f) {
			n++
		}
	}
	return float64(n) / float64(len(fs))
}

// sentences splits an answer into candidate key points.
func sentences(answer string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		s := stripMarker(trimSpace(b.String()))
		b.Reset()
		if s == "" || isCitation(s) {
			return
		}
		out = append(out, s)
	}
	answer = strings.ReplaceAll(answer, ". ", ".\n") // English sentence ends
	for _, r := range answer {
		switch r {
		case '\n', '\r':
			flush()
		case '。', '！', '？', '!', '?', '．':
			b.WriteRune(r)
			flush()
		default:
			b.WriteRune(r)
		}
	}
	flush()
	return out
}

func isCitation(s string) bool {
	l := strings.ToLower(s)
	for _, p := range []string{"出典", "参照", "根拠", "source", "[出典", "(出典", "（出典"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return strings.Contains(l, ".md")
}
