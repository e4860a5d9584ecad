package main

import (
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// embedDims is the length of the benchmark vectors.
const embedDims = 256

// hashEmbed is a deterministic stand-in for a neural embedding: the feature-
// hashed counts of the text's character bigrams and trigrams (after
// lower-casing and collapsing runs of non-letters to one space), each n-gram
// adding ±1 to one of dims buckets chosen by its FNV-1a hash (the sign from
// the hash's top bit halves collision bias), then L2-normalised. An empty
// text gives the zero vector's stand-in: a unit vector on bucket 0, because
// vector stores reject zero vectors.
//
// Its retrieval quality is modest; its purpose is that every vector engine
// searches the very same vectors, so only search speed differs.
func hashEmbed(text string, dims int) []float32 {
	v := make([]float32, dims)
	runes := normalise(text)
	h := fnv.New64a()
	for n := 2; n <= 3; n++ {
		for i := 0; i+n <= len(runes); i++ {
			h.Reset()
			h.Write([]byte(string(runes[i : i+n])))
			x := h.Sum64()
			sign := float32(1)
			if x>>63 == 1 {
				sign = -1
			}
			v[x%uint64(dims)] += sign
		}
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		v[0] = 1
		return v
	}
	inv := float32(1 / math.Sqrt(norm))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// normalise lower-cases text and maps every run of characters that are
// neither letters nor digits to a single space.
func normalise(text string) []rune {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(text) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			space = false
		} else if !space {
			b.WriteRune(' ')
			space = true
		}
	}
	return []rune(strings.TrimSpace(b.String()))
}

// detectLang returns "ja" when at least a tenth of the letters in the sample
// are kana or Han, else "en".
func detectLang(sample string) string {
	letters, cjk := 0, 0
	for _, r := range sample {
		if !unicode.IsLetter(r) {
			continue
		}
		letters++
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) {
			cjk++
		}
	}
	if letters > 0 && cjk*10 >= letters {
		return "ja"
	}
	return "en"
}
