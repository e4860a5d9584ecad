package agent

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/llm"
)

// Routes (seed 003 "Route Selection").
const (
	RouteDirect   = "direct"    // 単一事実・単一対象: minimal search
	RouteMultiHop = "multi_hop" // 複数条件/比較: facet queries, iterative search
	RouteGlobal   = "global"    // 組織横断サマリ・方針: wider search
)

// Profile is one execution profile of seed 003 with its budgets and
// corrective thresholds.
type Profile struct {
	Name            string
	MaxRounds       int     // seed recall counts as round 1
	FirstK          int     // size of each search ("search first")
	MaxEvidence     int     // most evidence chunks kept (max_note_fetch)
	MaxCalls        int     // most searches (max_cli_calls)
	MinTop5         float64 // min_top5_relevance
	MinMustHave     int     // min_must_have_evidence_hits (capped at the number of facets)
	CandidateBudget int     // candidate queries per round
}

// DefaultProfile is the seed's recommended default.
const DefaultProfile = "balanced"

// Profiles are the three profiles of seed 003.
var Profiles = map[string]Profile{
	"fast":     {Name: "fast", MaxRounds: 1, FirstK: 8, MaxEvidence: 4, MaxCalls: 8, MinTop5: 0.60, MinMustHave: 1, CandidateBudget: 2},
	"balanced": {Name: "balanced", MaxRounds: 2, FirstK: 16, MaxEvidence: 8, MaxCalls: 16, MinTop5: 0.75, MinMustHave: 2, CandidateBudget: 4},
	"deep":     {Name: "deep", MaxRounds: 3, FirstK: 24, MaxEvidence: 16, MaxCalls: 28, MinTop5: 0.85, MinMustHave: 2, CandidateBudget: 7},
}

// ProfileNamed returns the profile called name ("" means DefaultProfile).
func ProfileNamed(name string) (Profile, error) {
	if name == "" {
		name = DefaultProfile
	}
	p, ok := Profiles[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return Profile{}, fmt.Errorf("profile %q: use fast, balanced or deep", name)
	}
	return p, nil
}

// Tokenizer turns text into analysed terms (the index's analyser).
type Tokenizer interface {
	Terms(text string) []string
}

// Facet is one part of a question that needs its own evidence.
type Facet struct {
	Text     string   `json:"text"`
	MustHave []string `json:"must_have"` // content terms the evidence must contain
	// Type is the facet's kind in seed 003's candidate generation —
	// intent, target, artifact or time — when the LLM planner named it
	// ("" from the offline planner).
	Type string `json:"type,omitempty"`
}

// Facet types of seed 003's facet-driven candidates.
var FacetTypes = []string{"intent", "target", "artifact", "time"}

// Plan is the outcome of facet planning.
type Plan struct {
	Route   string   `json:"route"`
	Facets  []Facet  `json:"facets"`
	Queries []string `json:"queries"` // seed-recall candidates: original first, then facets
	// Usage and CostUSD are what the LLM planner's call cost (zero
	// offline), counted even when its reply was unusable.
	Usage   llm.Usage `json:"-"`
	CostUSD float64   `json:"-"`
}

// comparisonWords make a question multi_hop.
var comparisonWords = []string{"違い", "比較", "vs", "対比", "差分", "異なる", "相違"}

// globalWords make a question global.
var globalWords = []string{"全体", "一覧", "方針", "まとめ", "全社", "横断", "総括"}

// markerWords are stripped from facets: they say how to answer, not what.
var markerWords = []string{"それぞれ", "各々", "おのおの"}

// trailing request phrases removed from the end of a facet's text.
var trailers = []string{
	"とは何ですか", "とはなんですか", "とは",
	"を教えてください", "を教えて下さい", "について教えてください", "について教えて", "を教えて",
	"教えてください", "教えて", "を知りたい", "は何ですか", "はなんですか", "とは何か", "ですか",
	"は?", "は", "を", "について",
}

// routeWords are analysed terms of how to answer (route and marker
// words), never must-have terms; analysis.IsRequestWord covers how a
// question is asked (方法, 手順, 教える…).
var routeWords = map[string]bool{
	"それぞれ": true, "違い": true, "比較": true, "vs": true, "全体": true, "一覧": true, "まとめ": true,
	"まとめる": true, "知りたい": true, "たい": true, "です": true, "ます": true,
	// The kind of answer asked for (「公衆無線LANの注意点」): a passage
	// that states the caution answers whether or not it says 注意点.
	"注意": true, "留意": true, "点": true, "注意点": true, "留意点": true, "注意事項": true, "留意事項": true,
}

// isRequest reports whether term is a request or route word.
func isRequest(term string) bool { return routeWords[term] || analysis.IsRequestWord(term) }

// PlanQuestion decomposes question into facets offline, selects the route
// and lists up to budget seed-recall queries (the original question first,
// then one per facet). tok extracts the must-have terms.
func PlanQuestion(question string, tok Tokenizer, budget int) Plan {
	q := strings.TrimSpace(question)
	norm := analysis.Normalize(q)
	var facets []Facet
	seen := map[string]bool{}
	for _, part := range analysis.Parts(q) {
		text := cleanFacet(part)
		terms := mustHave(tok, text)
		if len(terms) == 0 {
			continue
		}
		key := strings.Join(terms, "\x00")
		if seen[key] {
			continue
		}
		seen[key] = true
		facets = append(facets, Facet{Text: text, MustHave: terms})
	}
	if len(facets) == 0 {
		if terms := mustHave(tok, cleanFacet(q)); len(terms) > 0 {
			facets = []Facet{{Text: cleanFacet(q), MustHave: terms}}
		}
	}
	p := Plan{Route: RouteDirect, Facets: facets}
	switch {
	case containsAny(norm, comparisonWords):
		p.Route = RouteMultiHop
	case containsAny(norm, globalWords):
		p.Route = RouteGlobal
	case len(facets) > 1:
		p.Route = RouteMultiHop
	}
	if budget < 1 {
		budget = 1
	}
	p.Queries = []string{q}
	var variants []string
	if len(facets) > 1 {
		for _, f := range facets {
			variants = append(variants, f.Text)
		}
	}
	// A question that mixes Japanese and English (two Latin words or more;
	// one acronym such as VPN is just part of a Japanese question) also gets
	// an English fallback of its Latin words alone (「EDR の alert triage
	// 手順」→「EDR alert triage」), for documents written in English.
	if latin := latinWords(q); len(latin) >= 2 && analysis.HasJapanese(q) {
		variants = append(variants, strings.Join(latin, " "))
	}
	// Seed 003: Japanese variants before English ones.
	slices.SortStableFunc(variants, func(a, b string) int {
		return cmp.Compare(japaneseRank(a), japaneseRank(b))
	})
	for _, v := range variants {
		if len(p.Queries) >= budget {
			break
		}
		p.Queries = appendNew(p.Queries, v)
	}
	return p
}

// japaneseRank orders query variants: 0 for one with Japanese text, 1 for
// an English-only one.
func japaneseRank(s string) int {
	if analysis.HasJapanese(s) {
		return 0
	}
	return 1
}

// latinWords returns the words of s written in Latin letters (with their
// digits, hyphens and dots: "Windows", "4740", "rm -rf" gives "rm", "rf"),
// NFKC-normalised with their case kept, in order, without repeats.
func latinWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(norm.NFKC.String(s), func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '.' || r == '_'))
	}) {
		w = strings.Trim(w, "-._")
		if w != "" && strings.ContainsFunc(w, unicode.IsLetter) && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func appendNew(qs []string, q string) []string {
	q = strings.TrimSpace(q)
	if q == "" {
		return qs
	}
	for _, x := range qs {
		if x == q {
			return qs
		}
	}
	return append(qs, q)
}

// closeBrackets end a quotation or a parenthesis: a facet keeps them.
const closeBrackets = "）)」』】］]"

func isHiragana(r rune) bool { return unicode.Is(unicode.Hiragana, r) }

// cleanFacet strips markers (「それぞれ」) and trailing request phrases.
func cleanFacet(s string) string {
	for _, m := range markerWords {
		s = strings.ReplaceAll(s, m, "")
	}
	s = strings.TrimSpace(s)
	for changed := true; changed; {
		changed = false
		s = strings.TrimRightFunc(s, func(r rune) bool {
			return unicode.IsSpace(r) || unicode.IsPunct(r) && !strings.ContainsRune(closeBrackets, r)
		})
		for _, t := range trailers {
			if strings.HasSuffix(s, t) && utf8.RuneCountInString(s) > utf8.RuneCountInString(t)+1 {
				s = strings.TrimSuffix(s, t)
				changed = true
			}
		}
	}
	return s
}

// mustHave returns the distinct content terms of text: word terms when the
// analyser produced any (character n-grams otherwise), without request and
// route words.
func mustHave(tok Tokenizer, text string) []string {
	if tok == nil || strings.TrimSpace(text) == "" {
		return nil
	}
	all := tok.Terms(text)
	hasWords := false
	for _, t := range all {
		if !strings.HasPrefix(t, analysis.NGramPrefix) {
			hasWords = true
			break
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, t := range all {
		if hasWords == strings.HasPrefix(t, analysis.NGramPrefix) {
			continue
		}
		t = strings.TrimPrefix(t, analysis.NGramPrefix)
		if t == "" || seen[t] || isRequest(t) {
			continue
		}
		if rs := []rune(t); len(rs) == 1 && (isHiragana(rs[0]) || rs[0] < 0x80) {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}
