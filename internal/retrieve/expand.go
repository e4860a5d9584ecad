package retrieve

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/index"
)

// Synonyms gives the synonyms of a word: internal/synonym's dictionary
// (Sudachi's synonym groups) in the shipped program.
type Synonyms interface {
	// Synonyms returns the other words of the groups word expands to.
	Synonyms(word string) []string
	// Longest is the length in runes of the longest word it knows.
	Longest() int
}

// ExpansionWeight is the weight of the BM25 score of a question's synonym
// terms against its own terms' (1): a passage that holds the question's
// own words still ranks first, and one that names the same thing only in
// other words (ログオン for ログイン) is found when nothing else holds it.
// Chosen on the development sets and checked on JSQuAD (docs/BENCHMARKS.md,
// "Synonym expansion").
const ExpansionWeight = 0.3

// maxExpansionSpan bounds the number of consecutive query words joined to
// look a compound up (対処 + 法 → 対処法).
const maxExpansionSpan = 3

// WithSynonyms returns a searcher over the same index whose BM25 leg also
// searches the synonyms of the question's words at ExpansionWeight (nil:
// none).
func (s *Searcher) WithSynonyms(d Synonyms) *Searcher {
	c := *s
	c.syn = d
	return &c
}

// Expansion returns the terms the synonyms of query's words add to its own
// terms (qterms, as the index analysed query): each word of the question,
// and each run of up to three consecutive words that the question writes
// together, is looked up; every synonym found is analysed as the index
// analyses text and its word terms (not its character n-grams) that the
// question does not already hold are returned, each once, in order.
func (s *Searcher) Expansion(query string, qterms []string) []string {
	if s.syn == nil {
		return nil
	}
	norm := analysis.Normalize(query)
	have := make(map[string]bool, len(qterms))
	var words []string
	for _, t := range qterms {
		have[t] = true
		if !strings.HasPrefix(t, analysis.NGramPrefix) {
			words = append(words, t)
		}
	}
	var out []string
	for i := range words {
		w := ""
		for n := 1; n <= maxExpansionSpan && i+n <= len(words); n++ {
			w += words[i+n-1]
			if utf8.RuneCountInString(w) > s.syn.Longest() {
				break
			}
			if !strings.Contains(norm, w) {
				// A verb's base form (できる for でき) or words the
				// question does not write side by side.
				continue
			}
			for _, syn := range s.syn.Synonyms(w) {
				for _, t := range s.ix.Terms(syn) {
					if strings.HasPrefix(t, analysis.NGramPrefix) || have[t] {
						continue
					}
					have[t] = true
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// expandLexical adds to the BM25 hits of the question's own terms those of
// its synonym terms at ExpansionWeight: a chunk's score is its own terms'
// BM25 plus the weight times its synonym terms' BM25. Hits are best first,
// equal scores by chunk; up to n are kept.
func (s *Searcher) expandLexical(ctx context.Context, lex []index.Hit, exp []string, n int) ([]index.Hit, error) {
	if len(exp) == 0 {
		return lex, nil
	}
	more, _, err := s.ix.LexicalHits(ctx, exp, n)
	if err != nil {
		return nil, fmt.Errorf("BM25 search of synonyms: %w", err)
	}
	if len(more) == 0 {
		return lex, nil
	}
	at := make(map[int]int, len(lex)+len(more))
	out := make([]index.Hit, 0, len(lex)+len(more))
	for _, h := range lex {
		at[h.Chunk] = len(out)
		out = append(out, h)
	}
	for _, h := range more {
		if i, ok := at[h.Chunk]; ok {
			out[i].Score += ExpansionWeight * h.Score
			continue
		}
		h.Score *= ExpansionWeight
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b index.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Chunk, b.Chunk)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out, nil
}

// Mentions returns, for each document that names one of words or one of
// their synonyms, its chunk that names them most: best first by the BM25
// of those words alone (word terms, not character n-grams, so ログ is no
// match for ログイン; synonyms at ExpansionWeight), up to n documents.
// Scores are relative to the best (1). It is how a question that names a
// single thing learns where the index speaks of it. opt's Scope and
// Exclude apply.
func (s *Searcher) Mentions(ctx context.Context, words []string, n int, opt Options) ([]Result, error) {
	var terms []string
	for _, w := range words {
		for _, t := range s.ix.Terms(w) {
			if !strings.HasPrefix(t, analysis.NGramPrefix) {
				terms = append(terms, t)
			}
		}
	}
	if len(terms) == 0 || n <= 0 {
		return nil, nil
	}
	cand := max(10*n, 100)
	lex, _, err := s.ix.LexicalHits(ctx, terms, cand)
	if err != nil {
		return nil, fmt.Errorf("BM25 search: %w", err)
	}
	if lex, err = s.expandLexical(ctx, lex, s.Expansion(strings.Join(words, " "), terms), cand); err != nil {
		return nil, err
	}
	if lex, err = s.filter(ctx, exclude(lex, opt.Exclude), opt); err != nil {
		return nil, err
	}
	if len(lex) == 0 {
		return nil, nil
	}
	chs, err := s.hitChunks(ctx, lex)
	if err != nil {
		return nil, err
	}
	var out []Result
	seen := map[string]bool{}
	for i, ch := range chs {
		doc := ch.Source
		if doc == "" {
			doc = ch.File
		}
		if seen[doc] {
			continue
		}
		seen[doc] = true
		out = append(out, Result{
			ChunkID: ch.ID, File: ch.File, Source: ch.Source, Page: ch.Page, Heading: ch.Heading,
			Text: ch.Text, UpdatedAt: ch.UpdatedAt, Score: round4(lex[i].Score / lex[0].Score),
			BM25Score: round4(lex[i].Score / lex[0].Score),
		})
		if len(out) == n {
			break
		}
	}
	return out, nil
}
